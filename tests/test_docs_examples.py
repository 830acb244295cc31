"""docs/writing-checks.md's check pack, as a reader would use it: its code blocks are
taken from the page, the pack is installed with pip and run through the doctor's CLI."""
from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, git_repo, run_doctor

PAGE = ROOT / "docs" / "writing-checks.md"
CHECK_ID = "job-time-limit-missing"


def blocks(text: str) -> list:
    """(info string, body) of every fenced code block, in order."""
    return re.findall(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)


@pytest.fixture(scope="module")
def page() -> dict:
    """The page's blocks by language; the test knows every block the page has, so a new
    example cannot go untested."""
    found = blocks(PAGE.read_text())
    by_lang: dict = {}
    for lang, body in found:
        by_lang.setdefault(lang, []).append(body)
    assert sorted(by_lang) == ["python", "sh", "toml", "yaml"], sorted(by_lang)
    assert all(len(v) == 1 for v in by_lang.values()), {k: len(v) for k, v in by_lang.items()}
    return {lang: v[0] for lang, v in by_lang.items()}


@pytest.fixture(scope="module")
def installed(page, tmp_path_factory) -> dict:
    """The pack from the page, pip-installed into a private directory: the env to run
    the doctor with."""
    src = tmp_path_factory.mktemp("pack")
    module = re.search(r'^(\w+) = "(\w+)"$', page["toml"], re.M)
    assert module, "the pyproject snippet names no module under its entry point"
    (src / f"{module[2]}.py").write_text(page["python"])
    (src / "pyproject.toml").write_text(page["toml"])
    site = tmp_path_factory.mktemp("site")
    pip = page["sh"].splitlines()[0].split("#")[0].split()
    assert pip == ["pip", "install", "."], pip
    proc = subprocess.run([sys.executable, "-m", *pip[:2], "--quiet", "--no-deps",
                           "--no-build-isolation", "--no-index", "--target", str(site),
                           str(src)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {"PYTHONPATH": str(site)}


def make_repo(root, *, time_line: str = "", settings: str = ""):
    files = {"slurm/train.sbatch": f"#!/bin/bash\n#SBATCH --nodes=1\n{time_line}"
                                   "srun python train.py\n",
             "train.py": "print('train')\n"}
    if settings:
        files["doctor.yaml"] = settings
    return git_repo(root, files)


def test_the_pages_commands_run_the_pages_check(page, installed, tmp_path):
    repo = make_repo(tmp_path / "repo")
    commands = [shlex.split(line.split("#")[0]) for line in page["sh"].splitlines()[1:]]
    assert [c[:2] for c in commands] == [["doctor", "list"], ["doctor", "explain"],
                                         ["doctor", "run"]], commands
    listed, explained, ran = (run_doctor(*c[1:], cwd=repo, env=installed) for c in commands)
    assert listed.returncode == 0 and CHECK_ID in listed.stdout, listed.stderr
    assert explained.returncode == 0, explained.stderr
    assert "Why it matters" in explained.stdout and "#SBATCH --time" in explained.stdout
    assert ran.returncode == 1, (ran.stdout, ran.stderr)
    assert "slurm/train.sbatch" in ran.stdout and "sets no --time" in ran.stdout, ran.stdout
    # the line to add is shown as a line for the job script, not as a `$ command`
    assert "#SBATCH --time=04:00:00" in ran.stdout and "$ #SBATCH" not in ran.stdout


def report(repo, env: dict) -> tuple:
    proc = run_doctor("run", "--static", "--format", "json", "--only", CHECK_ID,
                      cwd=repo, env=env)
    assert proc.stdout, proc.stderr
    doc = json.loads(proc.stdout)
    return proc.returncode, next(r for r in doc["results"] if r["id"] == CHECK_ID)


def test_the_finding_names_the_job_script_and_a_time_limit_passes(installed, tmp_path):
    code, result = report(make_repo(tmp_path / "bad"), installed)
    assert (code, result["status"], result["severity"]) == (1, "fail", "error")
    [finding] = result["findings"]
    assert finding["location"] == {"path": "slurm/train.sbatch", "line": 1}
    assert finding["fix_options"] == [{"title": None, "steps": [
        {"kind": "add", "lines": ["#SBATCH --time=04:00:00"], "file": "slurm/train.sbatch",
         "line": None, "where": "after the #SBATCH lines"}]}]

    code, result = report(make_repo(tmp_path / "good", time_line="#SBATCH -t 04:00:00\n"),
                          installed)
    assert (code, result["status"]) == (0, "pass"), result


def test_the_pages_settings_turn_the_finding_into_a_warning(page, installed, tmp_path):
    code, result = report(make_repo(tmp_path / "repo", settings=page["yaml"]), installed)
    assert (code, result["status"], result["severity"]) == (0, "fail", "warning"), result


# ---- docs/ci.md ------------------------------------------------------------------------

CI_PAGE = ROOT / "docs" / "ci.md"
PROJECT_URL = "https://github.com/slurm-torch-doctor/doctor"


def test_ci_pages_yaml_blocks_parse():
    import yaml

    found = [body for lang, body in blocks(CI_PAGE.read_text()) if lang == "yaml"]
    assert len(found) >= 4
    for body in found:
        if body.lstrip().startswith("- "):   # a fragment of the workflow's steps
            body = "steps:\n" + body
        yaml.safe_load(body)
    workflow = yaml.safe_load(found[0])
    # the GitHub workflow runs on what the doctor reads: Python too
    assert "**/*.py" in workflow[True]["pull_request"]["paths"]   # YAML 1.1: `on` is True


def test_ci_pages_pre_commit_rev_is_what_autoupdate_writes(tmp_path):
    """The page's pre-commit config and its `pre-commit autoupdate` command, pointed at
    this repository: the rev becomes a real one (a tag, or the default branch's SHA)."""
    text = CI_PAGE.read_text()
    config = next(body for lang, body in blocks(text) if lang == "yaml" and "repos:" in body)
    command = next(line for lang, body in blocks(text) if lang == "sh"
                   for line in body.splitlines() if "autoupdate" in line)
    assert PROJECT_URL in config and PROJECT_URL in command
    git_repo(tmp_path, {".pre-commit-config.yaml": config.replace(PROJECT_URL, str(ROOT))})
    argv = shlex.split(command.replace(PROJECT_URL, str(ROOT)))
    assert argv[:2] == ["pre-commit", "autoupdate"], argv
    exe = Path(sys.executable).with_name("pre-commit")
    proc = subprocess.run([str(exe) if exe.exists() else "pre-commit", *argv[1:]],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "home")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rev = re.search(r"^\s*rev: (\S+)", (tmp_path / ".pre-commit-config.yaml").read_text(),
                    re.M)[1]
    tags = subprocess.run(["git", "-C", str(ROOT), "tag"], capture_output=True,
                          text=True).stdout.split()
    # a tag, or a commit of this repository's history (others may commit meanwhile, so
    # not necessarily today's HEAD)
    is_commit = re.fullmatch(r"[0-9a-f]{40}", rev) and subprocess.run(
        ["git", "-C", str(ROOT), "merge-base", "--is-ancestor", rev, "HEAD"]).returncode == 0
    assert is_commit or rev in tags, (rev, tags)
    # and the page itself shows no tag that does not exist: a full SHA, as autoupdate
    # writes while there is no release tag, or a tag of this repository
    page_rev = re.search(r"^\s*rev: (\S+)", config, re.M)[1]
    assert re.fullmatch(r"[0-9a-f]{40}", page_rev) or page_rev in tags, page_rev


def test_ci_pages_one_run_writes_every_output(tmp_path):
    import shutil
    import xml.etree.ElementTree as ET

    command = re.search(r"^```sh\n(doctor run --static --format github.*?)^```",
                        CI_PAGE.read_text(), re.M | re.S)[1]
    argv = shlex.split(command.replace("\\\n", " "))
    repo = tmp_path / "demo"
    shutil.copytree(ROOT / "fixtures" / "demo", repo)
    git_repo(repo, {})
    proc = run_doctor(*argv[1:], cwd=repo)
    assert proc.returncode == 1, proc.stderr
    assert "::error file=" in proc.stdout and "::warning file=" in proc.stdout
    sarif = json.loads((repo / "doctor.sarif").read_text())
    assert sarif["runs"][0]["results"]
    assert ET.parse(repo / "doctor.xml").getroot().iter("testcase")
    doc = json.loads((repo / "doctor.json").read_text())
    assert doc["summary"]["exit_code"] == 1
    assert "dataloader-option-conflict" in (repo / "doctor.md").read_text()


# ---- docs/security.md ------------------------------------------------------------------

def test_python_m_doctor_imports_the_working_directorys_modules_and_doctor_does_not(tmp_path):
    """security.md: `python -m doctor` in a repo imports the repo's `json.py` (Python's
    rule for -m); the console script and `python -P -m doctor` do not."""
    marker = tmp_path / "ran"
    (tmp_path / "json.py").write_text(f"open({str(marker)!r}, 'w').close()\n"
                                      "raise SystemExit(9)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}

    def ran(*argv: str) -> bool:
        marker.unlink(missing_ok=True)
        subprocess.run([*argv, "list"], cwd=tmp_path, env=env, capture_output=True,
                       timeout=60)
        return marker.exists()

    assert ran(sys.executable, "-m", "doctor")
    console = Path(sys.executable).with_name("doctor")
    if console.exists():
        assert not ran(str(console))
    if sys.version_info >= (3, 11):
        assert not ran(sys.executable, "-P", "-m", "doctor")


# ---- docs/quickstart.md ----------------------------------------------------------------

def test_quickstarts_settings_are_valid_settings(tmp_path):
    """Every key of the quickstart's doctor.yaml is one the doctor takes (a typo is exit 2)."""
    settings = next(body for lang, body in blocks((ROOT / "docs" / "quickstart.md").read_text())
                    if lang == "yaml")
    repo = git_repo(tmp_path / "repo", {"doctor.yaml": settings, "train.py": "print(1)\n"})
    proc = run_doctor("run", "--static", "-q", cwd=repo)
    assert proc.returncode in (0, 1), proc.stderr
