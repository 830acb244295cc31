"""First-run precision on public repos the doctor had never seen (issue 26).

Each tests/data/unseen/<name>/ is a trimmed excerpt of a public repository with Slurm job
scripts (SOURCE.md names it, its commit and licence). What a careful reader expects of each
was written by hand in tests/data/unseen/expect.json BEFORE the doctor first ran on the repo
(EXPECTATIONS.md says why; FIRSTRUN.md holds the first run's figures). Each repo is copied,
committed with real git and checked with the real CLI (`--repo`), in `--static` and in
`--no-smoke` (on this machine, whose Slurm is not the cluster those jobs were written for):
no crash, a schema-valid report, and the failing findings are exactly the expected ones:

- a finding (error or warning) that matches no `must` or `allowed` entry is false;
- a `must` entry that no finding matches is a miss.

An entry matches a finding when the check id, the path (unless the entry's is null), the
severity (`any` takes both) and the mode agree. A case the doctor still gets wrong is marked
xfail(strict=True) naming the false finding: the expectation is never weakened to pass.
"""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import ROOT, run_doctor, validate_report

UNSEEN = ROOT / "tests" / "data" / "unseen"
EXPECT: dict = json.loads((UNSEEN / "expect.json").read_text())["repos"]
MODES = ("static", "no-smoke")

# (name, mode) -> what the doctor still gets wrong there (measured on the code of this
# commit; strict: a fix makes the test XPASS, and then this entry goes).
KNOWN_WRONG: dict = {}


def test_every_unseen_repo_has_expectations():
    repos = {p.name for p in UNSEEN.iterdir() if p.is_dir()}
    assert repos == set(EXPECT), repos ^ set(EXPECT)
    for name in repos:
        assert (UNSEEN / name / "SOURCE.md").is_file(), f"{name}: say where it comes from"
        for script in EXPECT[name]["sbatch"]:
            assert (UNSEEN / name / script).is_file(), (name, script)


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> dict:
    """Each excerpt copied and committed, as users have it."""
    base = tmp_path_factory.mktemp("unseen")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "PATH": "/usr/local/bin:/usr/bin:/bin"}
    out = {}
    for name in EXPECT:
        dest = base / name
        shutil.copytree(UNSEEN / name, dest)
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                    ["git", "commit", "-qm", "import"]):
            subprocess.run(cmd, cwd=dest, env=env, check=True, capture_output=True)
        out[name] = dest
    return out


def _matches(entry: dict, check: str, path: str | None, severity: str, mode: str) -> bool:
    return (entry["check"] == check
            and (entry.get("path") is None or entry["path"] == path)
            and entry.get("severity", "any") in ("any", severity)
            and entry.get("modes", "both") in ("both", mode))


def judge(doc: dict, want: dict, mode: str) -> dict:
    """The report against the hand-written expectations: false findings and misses."""
    found = []
    for result in doc["results"]:
        for f in result["findings"] if result["status"] == "fail" else ():
            severity = f.get("severity", result["severity"])
            if severity == "info":
                continue
            loc = f.get("location") or {}
            found.append((result["id"], loc.get("path"), loc.get("line"), severity,
                          f["message"].splitlines()[0][:200]))
    known = want["must"] + want["allowed"]
    false = [f for f in found if not any(_matches(e, f[0], f[1], f[3], mode) for e in known)]
    misses = [e for e in want["must"] if e.get("modes", "both") in ("both", mode)
              and not any(_matches(e, f[0], f[1], f[3], mode) for f in found)]
    return {"false": false, "misses": misses}


def _cases() -> list:
    out = []
    for name in sorted(EXPECT):
        for mode in MODES:
            wrong = KNOWN_WRONG.get((name, mode))
            marks = [pytest.mark.xfail(strict=True, reason=wrong)] if wrong else []
            out.append(pytest.param(name, mode, marks=marks, id=f"{name}-{mode}"))
    return out


@pytest.mark.parametrize("name,mode", _cases())
def test_unseen_first_run_precision(name, mode, repos):
    want = EXPECT[name]
    repo = repos[name]
    args = ["run", f"--{mode}", "--repo", str(repo), "--format", "json"]
    for script in want["sbatch"]:
        args += ["--sbatch", str(repo / script)]
    proc = run_doctor(*args, timeout=180)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in (0, 1), f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    doc = validate_report(json.loads(proc.stdout))
    crashed = [(r["id"], r["reason"]) for r in doc["results"] if r["status"] == "error"]
    assert not crashed, crashed
    verdict = judge(doc, want, mode)
    assert verdict == {"false": [], "misses": []}, verdict
    has_error = any(f.get("severity", r["severity"]) == "error"
                    for r in doc["results"] if r["status"] == "fail" for f in r["findings"])
    assert proc.returncode == (1 if has_error else 0)
