"""The fixture harness: fixtures/<check-id>/<case>/ → a Job → one check's result.

A case directory is a small repo. Its name says the expected status: `pass*`,
`fail*` or `skip*`. Optional files:
- case.yaml: `args` (configs, sbatch, caches, model, torch_version, static),
  `env` (the login environment; default: empty, so cases never depend on this
  machine), `facts` (recorded probe results replacing live probes), and
  `expect.findings` (partial findings that must all be present).
- setup.sh: run with bash in a temporary copy of the case before the check
  (build a git repo, write a core file, torch.save a cache, make a FIFO ...);
  $PYTHON is the interpreter running the tests.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from doctor.job.context import Job
from doctor.runner import run_checks
from doctor.registry import get

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
PREFIXES = ("pass", "fail", "skip")


def fixture_cases() -> list:
    """[(check_id, case_dir)] for every case of every registered check's fixture dir."""
    out = []
    for check_dir in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        for case in sorted(p for p in check_dir.iterdir() if p.is_dir()):
            if case.name.startswith(PREFIXES):
                out.append((check_dir.name, case))
    return out


def load_case(case: Path) -> dict:
    spec_file = case / "case.yaml"
    return (yaml.safe_load(spec_file.read_text()) or {}) if spec_file.exists() else {}


def materialize(case: Path, tmp: Path) -> Path:
    """Copy the case to tmp and run its setup.sh there."""
    dest = tmp / case.name
    shutil.copytree(case, dest, symlinks=True,
                    ignore=shutil.ignore_patterns("case.yaml", "setup.sh", "__pycache__"))
    setup = case / "setup.sh"
    if setup.exists():
        env = dict(os.environ, PYTHON=sys.executable, GIT_AUTHOR_NAME="t",
                   GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
                   GIT_COMMITTER_EMAIL="t@example.com")
        subprocess.run(["bash", "-euo", "pipefail", str(setup)], cwd=dest, env=env,
                       check=True, capture_output=True, text=True, timeout=300)
    return dest


def job_for_case(case: Path, tmp: Path) -> Job:
    return job_in(case, materialize(case, tmp))


def job_in(case: Path, root: Path, scope: Any = None) -> Job:
    """A fresh Job for a case already materialized at root (again after `doctor fix`);
    `scope`: a scoped run's (doctor/job/scope.py)."""
    spec = load_case(case)
    args: dict = dict(spec.get("args") or {})

    def paths(key: str) -> list:
        return [str(root / p) if not os.path.isabs(p) else p for p in args.get(key, [])]

    return Job(root, configs=paths("configs"), sbatch=paths("sbatch"), caches=paths("caches"),
               model=args.get("model"), torch_version=args.get("torch_version"),
               env={str(k): str(v) for k, v in (spec.get("env") or {}).items()},
               facts=spec.get("facts"), static=bool(args.get("static")), scope=scope)


def run_case(check_id: str, case: Path, tmp: Path) -> dict:
    """The check's result (as in the JSON report) for one fixture case."""
    spec = get(check_id)
    assert spec is not None, f"fixtures/{check_id}: no such check"
    report = run_checks(job_for_case(case, tmp), [spec])
    doc = report.doc()
    return next(r for r in doc["results"] if r["id"] == check_id), doc


def subset(expected: Any, actual: Any) -> bool:
    """expected ⊆ actual, recursively (dict keys; list items each matched somewhere)."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and subset(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        return isinstance(actual, list) and all(
            any(subset(e, a) for a in actual) for e in expected)
    return expected == actual


def read_terminal(master: int, deadline: float = float("inf")) -> bytes:
    """Everything a child wrote to its pty (`master` is our side) until it closed its side
    (EIO or EOF) or `deadline` (time.monotonic()) passed."""
    import time

    data = b""
    while time.monotonic() < deadline:
        try:
            chunk = os.read(master, 65536)
        except OSError:   # EIO: the child closed its side
            break
        if not chunk:
            break
        data += chunk
    return data


def bash_as_slurm(path: Path) -> int:
    """Run the job script as Slurm does (executed: its shebang's flags count), `srun` an
    exported bash function that runs its arguments; its exit status."""
    stub = path.parent / "srun-stub.sh"
    stub.write_text('srun() { "$@"; }\nexport -f srun\n')
    path.chmod(0o755)
    proc = subprocess.run(["bash", "-c", f'source {stub}; "./{path.name}"'],
                          cwd=path.parent, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PATH=f"{Path(sys.executable).parent}:"
                                   f"{os.environ.get('PATH', '')}"))
    return proc.returncode
