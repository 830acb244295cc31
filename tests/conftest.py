"""Shared test helpers: the real CLI, report validation against the schema."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SCHEMA = json.loads((ROOT / "docs" / "report-schema.json").read_text())


def git_repo(root: Path, files: dict, *, dedent: bool = False, commit: bool = True) -> Path:
    """`files` (repo path → text; `dedent`: as written in an indented test) in a real git
    repo at `root`: added, and committed unless `commit` is False. Returns `root`."""
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text) if dedent else text)
    steps = [["init", "-q"], ["add", "-A"]]
    if commit:
        steps.append(["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"])
    for argv in steps:
        subprocess.run(["git", *argv], cwd=root, check=True, capture_output=True)
    return root


def validate_report(doc: dict) -> dict:
    """Every report a test produces is validated against docs/report-schema.json."""
    import jsonschema

    jsonschema.validate(doc, SCHEMA)
    return doc


# What the doctor reads of the login environment as the job's: a variable from the
# shell that runs the tests (WANDB_MODE, a PYTHONPATH, an activated venv, NCCL_*) would
# change its findings (65 tests failed with four such variables set), so a test's
# doctor starts without them and gets only those the test gives.
_JOB_ENV_PREFIXES = ("SLURM", "NCCL_", "TORCH", "PYTORCH_", "WANDB_", "MIOPEN_", "HIP_",
                     "ROCR_", "ROCM_", "HSA_", "CUDA_", "XLA_", "UCX_", "TRITON_",
                     "TRANSFORMERS_", "TOKENIZERS_", "HF_", "OMP_", "SINGULARITY",
                     "APPTAINER")
_JOB_ENV_NAMES = {"PYTHONPATH", "VIRTUAL_ENV", "XDG_CACHE_HOME", "MASTER_ADDR",
                  "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK"}


def clean_env(env: dict | None = None) -> dict:
    """os.environ without what the doctor would read as the job's, plus `env`."""
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(_JOB_ENV_PREFIXES) and k not in _JOB_ENV_NAMES}
    clean.update(env or {})
    return clean


def run_doctor(*args: str, cwd: Path | None = None, env: dict | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess:
    """The real CLI in a child process, as a user runs it."""
    full_env = clean_env(env)
    return subprocess.run([sys.executable, "-m", "doctor", *args], cwd=cwd or ROOT,
                          env=full_env, capture_output=True, text=True, timeout=timeout)


def logged_git(tmp_path: Path) -> tuple:
    """(env, log): git as the doctor finds it (PATH's absolute directories), through a
    wrapper that appends each command line to `log` before it runs the real git."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "git.log"
    real = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    (bin_dir / "git").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {real} "$@"\n')
    (bin_dir / "git").chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}, log


def one_line_exit_2(proc: subprocess.CompletedProcess, *needles: str) -> None:
    """Bad input as a user must see it: exit 2 and one `doctor: error:` line naming it."""
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, \
        proc.stderr[-2000:]
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("doctor: error: "), proc.stderr[-2000:]
    for needle in needles:
        assert needle in lines[0], lines[0]


def run_json(*args: str, **kw) -> tuple:
    """(exit code, validated JSON report) from `doctor run --format json ...`."""
    proc = run_doctor("run", "--format", "json", *args, **kw)
    assert proc.stdout, f"no report on stdout; stderr: {proc.stderr}"
    return proc.returncode, validate_report(json.loads(proc.stdout))


def result_of(doc: dict, check_id: str) -> dict:
    return next(r for r in doc["results"] if r["id"] == check_id)


def run_main(capsys, *argv: str) -> subprocess.CompletedProcess:
    """doctor.cli.main(argv) in this process, its stdout and stderr captured: for runs that
    end before any check does (refusals, settings errors), where a child costs ~0.3 s."""
    from doctor.cli import main

    capsys.readouterr()
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess(list(argv), code, out, err)


PACK = ROOT / "tests" / "packs" / "testpack.py"


def make_pack(site: Path, name: str, source: str) -> None:
    """An installed-looking distribution: a module plus a dist-info with an entry point."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{name}.py").write_text(source)
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[doctor.checks]\n{name} = {name}\n")


@pytest.fixture
def pack(tmp_path):
    site = tmp_path / "site"
    make_pack(site, "testpack", PACK.read_text())
    repo = tmp_path / "repo"
    repo.mkdir()
    return {"PYTHONPATH": str(site)}, repo


SLURM_CLUSTER = ROOT / "tests" / "slurm" / "cluster.sh"
_slurm_start_failed: list[str] = []  # one failed start fails every later slurm test at once


@pytest.fixture(scope="session")
def slurm_cluster():
    """The real local two-node Slurm (n1, n2): started once per session by
    tests/slurm/cluster.sh, stopped at the end only if this fixture started it.
    Tests using it carry `@pytest.mark.slurm`; they skip with the reason when
    the machine cannot run Slurm (not root, packages missing), unless
    DOCTOR_REQUIRE_SLURM=1 (CI), which turns the skip into a failure."""
    import shutil

    why = None
    if os.geteuid() != 0:
        why = "the local Slurm needs root"
    elif not (shutil.which("slurmctld") and shutil.which("sbatch") and shutil.which("munged")):
        why = "slurm-wlm/munge not installed (apt-get install slurm-wlm munge)"
    if why:
        if os.environ.get("DOCTOR_REQUIRE_SLURM") == "1":
            pytest.fail(f"DOCTOR_REQUIRE_SLURM=1 but {why}")
        pytest.skip(why)
    if _slurm_start_failed:
        pytest.fail(_slurm_start_failed[0])
    running = subprocess.run([str(SLURM_CLUSTER), "status"], capture_output=True).returncode == 0
    if not running:
        try:
            start = subprocess.run([str(SLURM_CLUSTER), "start"], capture_output=True, text=True,
                                   timeout=180)
            failed = start.returncode != 0 and f"cluster.sh start failed: {start.stderr.strip()}"
        except subprocess.TimeoutExpired:
            failed = "cluster.sh start did not finish in 180 s"
        if failed:
            _slurm_start_failed.append(failed)
            pytest.fail(failed)
    yield {"nodes": ["n1", "n2"], "partition": "debug"}
    if not running:
        subprocess.run([str(SLURM_CLUSTER), "stop"], capture_output=True, timeout=120)


@pytest.fixture(autouse=True)
def _no_zygote_between_tests():
    """A test that drives the smokes in-process (run_smoke, the launcher) may leave the
    doctor's torch process (doctor/smoke/zygote.py) for the next spawn, as one doctor run
    would; between tests it is ended, so a later test's count of pytest's own children
    (test_gather's no_leftovers) sees only its own."""
    yield
    zygote = sys.modules.get("doctor.smoke.zygote")
    if zygote is not None:
        zygote.close()
