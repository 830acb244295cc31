"""The README's "Try it", as a newcomer runs it (issue 28): a fresh clone of this commit,
README command 1 exactly as README.md spells it (the test fails when the README drifts),
then the test command's setup in the same clone, reusing command 1's venv.

It installs torch into a fresh venv (about a minute and a half here), so it runs in CI
(CI=true) and locally only when asked: DOCTOR_NEWCOMER=1."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, clean_env, validate_report


def try_it(root: Path = ROOT) -> list:
    """The bash blocks of README.md's "## Try it" section, as written."""
    text = (root / "README.md").read_text()
    section = re.search(r"^## Try it\n(.*?)(?=^## )", text, re.M | re.S)
    assert section, "README.md has no '## Try it' section"
    return re.findall(r"^```bash\n(.*?)^```", section.group(1), re.M | re.S)


def test_try_it_is_a_venv_command_and_the_test_command_ci_runs():
    """Command 1 makes a venv (a distro Python refuses pip: PEP 668) and pins torch (an
    unpinned torch pulls GBs of CUDA); command 2 is what .ci/run runs."""
    blocks = try_it()
    assert len(blocks) == 2, blocks
    assert blocks[0].startswith("python3 -m venv ") and "torch==2.13.0" in blocks[0]
    assert "python3 -m pip" not in blocks[0] and "--break-system-packages" not in blocks[0]
    assert blocks[1] == "bash tests/run.sh\n"
    assert re.search(r"^exec bash tests/run\.sh -q$", (ROOT / ".ci" / "run").read_text(), re.M)


def newcomer_env() -> dict:
    """A shell with no venv active: this suite's own venv (tests/run.sh puts it first on
    PATH) is left out, so `python3` is the machine's."""
    env = clean_env()
    for name in ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH"):
        env.pop(name, None)
    if sys.prefix != sys.base_prefix:
        own = os.path.dirname(sys.executable)
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                      if p and os.path.realpath(p) != os.path.realpath(own))
    return env


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("CI") != "true" and os.environ.get("DOCTOR_NEWCOMER") != "1",
                    reason="installs torch into a fresh venv: CI runs it; DOCTOR_NEWCOMER=1 here")
def test_a_newcomer_runs_the_readme_in_a_fresh_clone(tmp_path):
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True,
                   capture_output=True)
    subprocess.run(["git", "checkout", "-q", head], cwd=clone, check=True,
                   capture_output=True)
    env = newcomer_env()
    command1, command2 = try_it(clone)   # the commit's README, as the newcomer reads it

    proc = subprocess.run(["bash", "-c", command1], cwd=clone, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 1, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    # the findings it printed are the demo's: every error finding of the same run as JSON,
    # by its file:line, and the flagship DataLoader conflict among them
    doctor = clone / ".venv" / "bin" / "doctor"
    assert doctor.exists(), f"README command 1 made no {doctor}: {proc.stderr[-2000:]}"
    as_json = subprocess.run([str(doctor), "run", "--repo", "fixtures/demo", "--format", "json"],
                             cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    doc = validate_report(json.loads(as_json.stdout))
    assert as_json.returncode == 1 and doc["summary"]["exit_code"] == 1, as_json.stderr[-2000:]
    errors = [f"{f['location']['path']}:{f['location']['line']}" for r in doc["results"]
              if r["status"] == "fail" for f in r["findings"]
              if f.get("severity", r["severity"]) == "error" and f.get("location")]
    assert "configs/train.yaml:14" in errors, errors
    missing = [e for e in errors if e not in proc.stdout]
    assert not missing, (missing, proc.stdout[-3000:])

    # the test command's setup reuses command 1's venv; only two of its quick tests run
    # (never this module: no recursion into the suite)
    cfg = clone / ".venv" / "pyvenv.cfg"
    made = cfg.stat().st_mtime_ns
    proc = subprocess.run(["bash", "-c", command2.strip() + " -q -p no:cacheprovider "
                           "tests/test_install.py -k 'pyproject or guard'"],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.stdout[-3000:], proc.stderr[-3000:])
    assert re.search(r"^2 passed", proc.stdout, re.M), proc.stdout[-2000:]
    assert cfg.stat().st_mtime_ns == made, "tests/run.sh made a new venv"
