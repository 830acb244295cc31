"""The torch probe (doctor/probes/gpu.py) answered by a fork of the smokes' zygote: one
import of torch for the probe and the smokes instead of two, never in --static/--no-smoke,
and never reporting a torch other than the one the isolated probe would import."""
from __future__ import annotations

import os
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import pytest

from doctor.job.context import Job
from doctor.smoke import zygote

pytest.importorskip("torch")


def _job(repo: Path) -> Job:
    job = Job(repo, env={"PATH": os.environ["PATH"]})
    job.smokes_run = True   # as the runner sets it when the run's chosen checks smoke
    return job


def _probe_children() -> list:
    z = zygote._current
    return [c for c in (z.children if z is not None else [])
            if c.args[:1] == ["doctor.smoke.torch_probe"]]


def test_the_torch_probe_is_a_fork_of_the_smokes_zygote(tmp_path):
    job = _job(tmp_path)
    assert job.smoke   # a run that smokes: the zygote is started for the ranks anyway
    build = job.fact("torch_build")
    assert build["version"] == metadata.version("torch") and build["error"] is None
    assert build["available"] is False and "file" not in build
    (child,) = _probe_children()
    assert child.returncode == 0
    child_zygote = zygote._current
    # the DDP smoke's ranks are served by the same zygote: no second import of torch
    from doctor.checks.smoke import plan_for
    from doctor.smoke.launcher import Launcher

    env = Launcher(plan_for(job)).env_for(0, time.time() + 60, Path(tempfile.gettempdir()))
    z = zygote.zygote_for(sys.executable, str(tmp_path), env, time.time() + 60)
    assert z is not None and z is child_zygote
    with zygote._lock:
        z.pending -= 1


def test_no_smoke_asks_no_zygote(tmp_path):
    job = _job(tmp_path)
    job.smoke = False   # --no-smoke, --static: the zygote imports with the repo on its path
    build = job.fact("torch_build")
    assert build["version"] == metadata.version("torch")
    assert zygote._current is None


def test_a_repos_own_torch_imported_by_the_zygote_is_never_reported(tmp_path):
    """The ranks import the repo's torch/ (as the job would from its directory); the probe
    reports the installed torch, as it does in isolation."""
    pkg = tmp_path / "torch"
    for sub in ("", "distributed", "nn"):
        (pkg / sub).mkdir(exist_ok=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text(
        "__version__ = '0.0.1'\nclass version:\n    cuda = None\n    hip = None\n"
        "class cuda:\n    is_available = staticmethod(lambda: False)\n")
    build = _job(tmp_path).fact("torch_build")
    (child,) = _probe_children()   # the fork ran, and imported the repo's torch ...
    assert build["version"] == metadata.version("torch")   # ... which is not reported
    assert build["error"] is None


def test_a_hung_torch_import_costs_the_probe_one_deadline_not_two(tmp_path, monkeypatch):
    """A torch whose import hangs (a dead NFS) for the zygote and the isolated child alike:
    the zygote gives up at the probe's deadline, and the isolated child gets what is left
    of it, not a deadline of its own."""
    from doctor.probes import gpu

    shadow = tmp_path / "pylibs" / "torch"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("import time\ntime.sleep(600)\n")
    monkeypatch.setattr(gpu, "TORCH_TIMEOUT_S", 4.0)
    monkeypatch.syspath_prepend(str(tmp_path / "pylibs"))   # the isolated child's path
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "pylibs"))   # the zygote's (the ranks')
    (tmp_path / "repo").mkdir()
    start = time.monotonic()
    build = _job(tmp_path / "repo").fact("torch_build")
    assert build["version"] is None and "timed out after 4s" in build["error"]
    assert time.monotonic() - start < 7.0


def test_a_run_without_a_smoke_starts_no_zygote_and_runs_no_repo_code(tmp_path):
    """`doctor run --only gpu-not-visible` (no --static, no smoke chosen) needs the torch
    probe; a zygote would import torch with the repo first on its path, running a repo
    module that shadows one torch imports (the review's typing_extensions.py): the probe
    must take its isolated child. The same repo's full smoke run may run it (the smoke
    imports as the job does)."""
    import subprocess

    from conftest import clean_env, git_repo

    marker = tmp_path / "ran"
    repo = git_repo(tmp_path / "repo", {
        "typing_extensions.py": f"open({str(marker)!r}, 'a').write('ran\\n')\n"
                                "raise ImportError('not the real typing_extensions')\n",
        "train.py": "import torch\n",
        "job.sh": "#!/bin/bash\n#SBATCH --nodes=1\nsrun python train.py\n"})
    proc = subprocess.run([sys.executable, "-m", "doctor", "run", "--repo", str(repo),
                           "--only", "gpu-not-visible", "--format", "json"], cwd=repo,
                          env=clean_env(), capture_output=True, text=True, timeout=180)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert not marker.exists(), "the repo's typing_extensions.py ran outside a smoke"
