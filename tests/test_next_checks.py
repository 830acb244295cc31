"""Beyond the fixtures: the claims the issue-9 checks rest on, against real components
(a real child-process import, real rsync, real torch in a child, this machine's probes)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

from conftest import run_doctor
from doctor.job.context import Job
from doctor.registry import get
from doctor.runner import run_checks

IDS = ("nccl-env-deprecated", "hip-alloc-conf", "wandb-online-in-container",
       "package-not-importable", "torch-compile-risk", "slurm-gpu-mismatch",
       "core-dump-unlimited")


def _result(job: Job, check_id: str) -> dict:
    doc = run_checks(job, [get(check_id)]).doc()
    return next(r for r in doc["results"] if r["id"] == check_id)


def _repo(tmp: Path) -> Path:
    """The seed's layout: src/vcloud/{__init__,data/}, scripts/train.py importing it.
    Every __init__ leaves a marker if it ever runs."""
    repo = tmp / "code"
    for pkg in ("src/vcloud", "src/vcloud/data"):
        (repo / pkg).mkdir(parents=True)
        (repo / pkg / "__init__.py").write_text(
            f"open({str(tmp / 'RAN')!r}, 'a').write({pkg!r})\n")
    (repo / "src/vcloud/data/dataset.py").write_text("X = 1\n")
    (repo / "scripts").mkdir()
    (repo / "scripts/train.py").write_text("from vcloud.data import dataset\n")
    (repo / "slurm").mkdir()
    (repo / "slurm/train.sbatch").write_text(textwrap.dedent(f"""\
        #!/bin/bash
        #SBATCH --gpus=1
        export PYTHONPATH="{repo}/src:${{PYTHONPATH:-}}"
        srun python3 scripts/train.py
        """))
    return repo


def test_rsync_dropped_subpackage_is_found_without_running_package_code(tmp_path):
    repo = _repo(tmp_path)
    ok = _result(Job(repo, sbatch=[repo / "slurm/train.sbatch"], env={}), "package-not-importable")
    assert ok["status"] == "pass", ok
    # The seed's deploy: an unanchored exclude drops src/vcloud/data/ on the cluster copy.
    cluster = tmp_path / "cluster"
    subprocess.run(["rsync", "-a", "--exclude", "data", f"{repo}/", f"{cluster}/"], check=True)
    assert not (cluster / "src/vcloud/data").exists()
    script = cluster / "slurm/train.sbatch"
    script.write_text(script.read_text().replace(str(repo), str(cluster)))
    res = _result(Job(cluster, sbatch=[script], env={}), "package-not-importable")
    assert res["status"] == "fail"
    [f] = res["findings"]
    assert f["location"] == {"path": "scripts/train.py", "line": 1}
    assert f["data"]["missing"] == "vcloud.data"
    assert "anchor" in f["fix"]
    # find_spec/PathFinder located every module and never ran an __init__.
    assert not (tmp_path / "RAN").exists()
    # ...while a real import of the same module, same env, does fail the way the user saw.
    proc = subprocess.run([sys.executable, "scripts/train.py"], cwd=cluster,
                          env={"PYTHONPATH": f"{cluster}/src"}, capture_output=True, text=True)
    assert "No module named 'vcloud.data'" in proc.stderr


def test_installed_copy_shadowing_the_repo_is_a_warning(tmp_path):
    repo = _repo(tmp_path)
    stale = tmp_path / "site" / "vcloud"
    stale.mkdir(parents=True)
    (stale / "__init__.py").write_text("")
    (stale / "data").mkdir()
    (stale / "data" / "__init__.py").write_text("")
    script = repo / "slurm/train.sbatch"
    text = script.read_text()
    script.write_text(text.replace(f'"{repo}/src:', f'"{tmp_path}/site:{repo}/src:'))
    res = _result(Job(repo, sbatch=[script], env={}), "package-not-importable")
    assert res["status"] == "fail" and res["severity"] == "warning"
    assert any(str(stale) in f["message"] and f["commands"] == ["pip install -e ."]
               for f in res["findings"])


def test_default_pg_timeout_patch_has_no_effect_in_real_torch():
    """The claim behind nccl-env-deprecated's pg-timeout-patch finding."""
    pytest.importorskip("torch")
    code = textwrap.dedent("""\
        import datetime, json, warnings
        import torch.distributed.distributed_c10d as c10d
        before = c10d._get_default_timeout("gloo")
        c10d._DEFAULT_PG_TIMEOUT = datetime.timedelta(minutes=1)
        import torch.distributed.constants as constants
        constants._DEFAULT_PG_TIMEOUT = datetime.timedelta(minutes=1)
        after = c10d._get_default_timeout("gloo")
        print(json.dumps([before.total_seconds(), after.total_seconds()]))
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    before, after = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == after == 1800.0


def test_system_probes_live_on_this_machine(tmp_path):
    job = Job(tmp_path, env={})
    cp = job.fact("core_pattern")
    assert cp["pattern"] == Path("/proc/sys/kernel/core_pattern").read_text().strip()
    triton = job.fact("triton")
    try:
        version = metadata.version("triton")
    except metadata.PackageNotFoundError:
        version = None
    if version:
        assert triton == {"installed": True, "version": version, "dist": "triton"}
    else:
        assert triton["installed"] is (triton["dist"] is not None)
    assert "triton" not in sys.modules   # read from metadata, never imported


def test_torch_compile_risk_live_facts_on_this_machine(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs/train.yaml").write_text("model: {compile: true}\n")
    (tmp_path / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --gpus-per-node=4\nsrun python t.py\n")
    # A CPU torch here (a login node's) says nothing about a GPU job's triton: no finding
    # (the unseen repos' 'no triton' errors came from this machine's CPU build).
    job = Job(tmp_path, sbatch=[tmp_path / "job.sbatch"], env={},
              facts={"torch_build": {"version": "2.13.0+cpu", "cuda": None, "hip": None,
                                     "available": False}})
    res = _result(job, "torch-compile-risk")
    assert res["status"] == "pass", res
    # A GPU build here is the job's torch: the live triton fact judges it.
    job = Job(tmp_path, sbatch=[tmp_path / "job.sbatch"], env={},
              facts={"torch_build": {"version": "2.13.0+cu126", "cuda": "12.6", "hip": None,
                                     "available": True}})
    res = _result(job, "torch-compile-risk")
    installed = job.fact("triton")["installed"]
    assert res["status"] == ("pass" if installed else "fail"), res
    if not installed:
        assert res["findings"][0]["data"]["rule"] == "triton-missing"


def test_static_run_never_reads_live_facts(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs/train.yaml").write_text("model: {compile: true}\n")
    job = Job(tmp_path, env={}, static=True, facts={})
    res = _result(job, "torch-compile-risk")
    assert res["status"] == "pass"
    assert "triton" not in job.facts_gathered() and "node" not in job.facts_gathered()


def test_cli_lists_and_explains_the_seven_checks():
    proc = run_doctor("list", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    listed = {c["id"]: c for c in json.loads(proc.stdout)}
    for cid in IDS:
        assert cid in listed
        out = run_doctor("explain", cid)
        assert out.returncode == 0 and "How to fix" in out.stdout, out.stderr
