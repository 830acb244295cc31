"""Issue 26, deliverable 7: from a subdirectory, the project root is the nearest
directory holding doctor.yaml or a pyproject.toml with [tool.doctor] (as ruff finds its
configuration), within the git work tree; else the git root; else the current directory.
`--repo` wins over all of them.

Below the git root the project is the subtree: git lists its files (`git -C root
ls-files`) with the whole work tree's ignore rules, and findings are relative to it.

The repo: proj/ holds a job whose entry has a collective in an `except:` handler, which
proj's settings make a warning (the decision its owner took), and other/ beside it holds
a job with the same fault and no settings. From the git root's view (no settings) the
fault in proj's job is an error, and `doctor sbatch` refuses the job.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import run_doctor, run_json

BAD = ("import torch.distributed as dist\n\n\n"
       "def main(batches):\n"
       "    for batch in batches:\n"
       "        try:\n"
       "            batch.run()\n"
       "        except Exception:\n"
       "            dist.barrier()\n\n\n"
       "if __name__ == '__main__':\n"
       "    main([])\n")
JOB = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n"
       "#SBATCH --time=00:10:00\nsrun python src/train.py\n")
YAML = "severity:\n  collective-on-error-path: warning\n"
TOML = '[tool.doctor]\nseverity = {collective-on-error-path = "warning"}\n'
# names the doctor (so it is parsed) but has no [tool.doctor]: another tool's file
OTHER_TOML = '[project]\nname = "doctor-demo"\n\n[tool.ruff]\nline-length = 99\n'


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                            GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"))


def make(top: Path, settings: dict, use_git: bool = True) -> Path:
    """top/{proj,other}: two jobs with one fault; `settings`: path under top → text."""
    for d in ("proj", "other"):
        (top / d / "slurm").mkdir(parents=True)
        (top / d / "src").mkdir()
        (top / d / "slurm" / "train.sbatch").write_text(JOB)
        (top / d / "src" / "train.py").write_text(BAD)
    # ignored by the git root's .gitignore: not the project's, from proj/ too
    (top / ".gitignore").write_text("scratch/\n")
    (top / "proj" / "scratch").mkdir()
    (top / "proj" / "scratch" / "job.sbatch").write_text(JOB.replace("src/", "../src/"))
    for rel, text in settings.items():
        (top / rel).write_text(text)
    if use_git:
        git(top, "init", "-q")
        git(top, "add", ".")
        git(top, "commit", "-q", "-m", "two jobs")
    return top / "proj"


def collective(doc: dict) -> list:
    r = next(r for r in doc["results"] if r["id"] == "collective-on-error-path")
    return sorted((f["location"]["path"], f["location"]["line"], f["severity"])
                  for f in r["findings"])


@pytest.mark.parametrize("settings,where", [
    ({"proj/doctor.yaml": YAML}, "doctor.yaml"),
    ({"proj/pyproject.toml": TOML}, "pyproject.toml[tool.doctor]"),
    # the nearest wins: proj's own over the git root's
    ({"proj/doctor.yaml": YAML, "doctor.yaml": "severity:\n  x: error\n"}, "doctor.yaml"),
])
def test_nearest_settings_make_the_project_root(tmp_path, settings, where):
    proj = make(tmp_path / "top", settings)
    code, doc = run_json("--static", cwd=proj / "src")
    assert doc["inputs"]["repo"] == str(proj)
    assert doc["inputs"]["settings"] == str(proj / where)
    assert doc["inputs"]["sbatch"] == ["slurm/train.sbatch"]   # not scratch/: ignored
    # relative to the project root, as its settings judge it; nothing of other/
    assert collective(doc) == [("src/train.py", 9, "warning")]
    assert code == 0


@pytest.mark.parametrize("settings", [
    {},                                         # no settings anywhere: the git root
    {"proj/pyproject.toml": OTHER_TOML},        # a pyproject.toml without [tool.doctor]
    {"../doctor.yaml": YAML},                   # settings above the git root: not its
])
def test_otherwise_the_git_root(tmp_path, settings):
    proj = make(tmp_path / "top", settings)
    code, doc = run_json("--static", cwd=proj / "src")
    assert doc["inputs"]["repo"] == str(tmp_path / "top")
    assert doc["inputs"]["settings"] is None
    # the whole work tree, relative to its root (how severe: the code checks decide,
    # by whether a job's step reaches the file)
    assert [p for p, _, _ in collective(doc)] == ["other/src/train.py", "proj/src/train.py"]


def test_repo_argument_wins(tmp_path):
    proj = make(tmp_path / "top", {"proj/doctor.yaml": YAML})
    code, doc = run_json("--static", "--repo", str(tmp_path / "top"), cwd=proj)
    assert doc["inputs"]["repo"] == str(tmp_path / "top")
    assert "other/src/train.py" in {p for p, _, _ in collective(doc)}
    code, doc = run_json("--static", "--repo", "../other", cwd=proj)
    assert doc["inputs"]["repo"] == str(tmp_path / "top" / "other")
    assert collective(doc) == [("src/train.py", 9, "error")]


def test_outside_git_only_the_current_directory(tmp_path):
    """Outside git no parent is searched: a doctor.yaml in a parent (/tmp is anyone's)
    would choose the settings and the smoke's model. The current directory's count."""
    proj = make(tmp_path / "top", {"proj/doctor.yaml": YAML}, use_git=False)
    code, doc = run_json("--static", cwd=proj)
    assert doc["inputs"]["repo"] == str(proj)
    assert collective(doc) == [("src/train.py", 9, "warning")]
    code, doc = run_json("--static", cwd=proj / "slurm")
    assert doc["inputs"]["repo"] == str(proj / "slurm")


def test_sbatch_from_a_subdirectory_judges_its_project(tmp_path):
    """`cd proj && doctor sbatch slurm/train.sbatch`: proj's settings judge proj's job,
    which is submitted; judged from the git root (no settings) it was refused."""
    proj = make(tmp_path / "top", {"proj/doctor.yaml": YAML})
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    calls = tmp_path / "sbatch.calls"
    (bin_dir / "sbatch").write_text(f"#!/bin/sh\necho \"$@\" >> {calls}\necho 4245\n")
    (bin_dir / "sbatch").chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    only = ("--only", "collective-on-error-path,exit-masks-errors,script-dos-line-breaks")
    proc = run_doctor("sbatch", *only, "--json", str(tmp_path / "r.json"),
                      "slurm/train.sbatch", cwd=proj, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "4245"
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["inputs"]["repo"] == str(proj)
    assert collective(doc) == [("src/train.py", 9, "warning")]
    assert calls.read_text().count("\n") == 1
