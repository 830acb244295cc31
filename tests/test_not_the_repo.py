"""Issue 26, deliverable 7: what is not the repo is never read.

An environment (a directory holding pyvenv.cfg or conda-meta/, or named as ruff's default
`exclude` names them: .venv, site-packages, node_modules, .tox, caches), tracked by git
or not, is left out of the file list every check reads; outside a git work tree the same
walk stops, past doctor/job/context.py MAX_SCAN_FILES files, with exit 2 and one line.

Each environment below plants what a check would report were it read: a collective in
an `except:` handler (collective-on-error-path), a job script with CRLF line breaks
(script-dos-line-breaks, read because it holds #SBATCH lines), a core dump
(git-tracked-core-file, which reads the heads of untracked files), and a symlink loop named
like a script, which the report counts in facts.unreadable the moment anything stats it
(the search for job scripts stats every listed .sh): a count of 0 shows that no file of
the environment was even looked at.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import one_line_exit_2, run_json, run_doctor
from doctor.job.context import MAX_SCAN_FILES

JOB = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n"
       "srun python train.py\n")
TRAIN = ("import torch.distributed as dist\n\n\n"
         "def main():\n"
         "    dist.init_process_group('gloo')\n"
         "    dist.barrier()\n\n\n"
         "if __name__ == '__main__':\n"
         "    main()\n")
# collective-on-error-path's seed form: one rank fails, its handler syncs and goes on
BAD = ("import torch.distributed as dist\n\n\n"
       "def step(batch):\n"
       "    try:\n"
       "        batch.run()\n"
       "    except Exception:\n"
       "        dist.barrier()\n")
CRLF_JOB = "#!/bin/bash\r\n#SBATCH --nodes=1\r\nsrun python train.py\r\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                            GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"))


def plant_env(env: Path, marker: str = "pyvenv.cfg", core: bool = True) -> None:
    """An environment at `env` holding what three checks would report, were it read.
    `core`: an untracked core dump too (a committed one is git's content, which the git
    checks judge wherever it lies: it blocks a push from .venv/ as from anywhere)."""
    if marker == "pyvenv.cfg":
        (env / "pyvenv.cfg").parent.mkdir(parents=True, exist_ok=True)
        (env / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    else:   # conda
        (env / "conda-meta").mkdir(parents=True)
        (env / "conda-meta" / "history").write_text("# cmd: conda create\n")
    pkg = env / "lib" / "python3.11" / "site-packages" / "badpkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(BAD)
    (env / "bin").mkdir()
    (env / "bin" / "train.sbatch").write_bytes(CRLF_JOB.encode())
    # ELOOP for whoever stats it: job-script discovery stats every .sh of the list
    (env / "bin" / "loop.sh").symlink_to("loop.sh")
    (env / "helper.py").write_text(BAD)               # beside the marker, not in site-packages
    if core:   # an ELF core header (e_type 4): git-tracked-core-file reads untracked heads
        (env / "bin" / "core.1234").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(9)
                                                + b"\x04\x00" + bytes(46))


def project(repo: Path) -> None:
    (repo / "slurm").mkdir(parents=True, exist_ok=True)
    (repo / "slurm" / "train.sbatch").write_text(JOB)
    (repo / "train.py").write_text(TRAIN)


def assert_env_unread(doc: dict, env: str) -> None:
    """Nothing of `env` in any finding, and nothing of it stat'ed (facts.unreadable)."""
    for r in doc["results"]:
        for f in r["findings"]:
            assert env not in str(f), (r["id"], f)
        assert r["status"] != "error", r
    assert not doc["facts"].get("unreadable"), doc["facts"]["unreadable"]
    assert doc["inputs"]["sbatch"] == ["slurm/train.sbatch"], doc["inputs"]


@pytest.mark.parametrize("env,tracked,marker", [
    (".venv", True, "pyvenv.cfg"),        # ruff's name, committed by mistake
    ("py311", False, "pyvenv.cfg"),       # any name: the pyvenv.cfg says what it is
    ("tools/conda", False, "conda-meta"),  # a conda environment, below the top
])
def test_environment_in_a_git_repo_is_not_read(tmp_path, env, tracked, marker):
    repo = tmp_path / "repo"
    project(repo)
    git(repo, "init", "-q")
    plant_env(repo / env, marker, core=not tracked)
    git(repo, "add", "slurm", "train.py", *([env] if tracked else []))
    git(repo, "commit", "-q", "-m", "job")
    code, doc = run_json("--static", "--repo", str(repo), cwd=repo)
    assert_env_unread(doc, env)
    assert code == 0, [(r["id"], r["findings"]) for r in doc["results"] if r["findings"]]


def test_the_planted_faults_are_found_outside_an_environment(tmp_path):
    """The control: the same files, not in an environment, are read and reported (the
    tests above would pass vacuously if no check looked at them)."""
    repo = tmp_path / "repo"
    project(repo)
    git(repo, "init", "-q")
    plant_env(repo / "lib311")
    (repo / "lib311" / "pyvenv.cfg").unlink()   # no longer an environment
    code, doc = run_json("--static", "--repo", str(repo), cwd=repo)
    assert code == 1
    assert doc["facts"]["unreadable"]["count"] >= 1, doc["facts"].get("unreadable")
    assert "lib311/bin/train.sbatch" in doc["inputs"]["sbatch"]
    cores = next(r for r in doc["results"] if r["id"] == "git-tracked-core-file")
    assert [f["location"]["path"] for f in cores["findings"]] == ["lib311/bin/core.1234"]


def test_not_a_git_work_tree_small_is_walked_without_environments(tmp_path):
    proj = tmp_path / "proj"
    project(proj)
    plant_env(proj / "venv311")
    (proj / "node_modules" / "x").mkdir(parents=True)
    (proj / "node_modules" / "x" / "job.sbatch").write_bytes(CRLF_JOB.encode())
    code, doc = run_json("--static", cwd=proj)
    assert doc["inputs"]["repo"] == str(proj)
    assert_env_unread(doc, "venv311")
    assert_env_unread(doc, "node_modules")
    assert code == 0


def test_not_a_git_work_tree_too_large_stops_with_one_line(tmp_path):
    """A home directory or /tmp: exit 2 and one line, after walking MAX_SCAN_FILES files,
    not all of them (462k took 564 s)."""
    top = tmp_path / "home"
    project(top)
    empty = top / "empty"
    empty.touch()
    for d in range(MAX_SCAN_FILES // 1000 + 1):
        sub = top / f"d{d:03d}"
        sub.mkdir()
        for i in range(1000):   # hard links: names without inodes, 3x faster to make
            os.link(empty, sub / f"f{i}")
    t0 = time.monotonic()
    proc = run_doctor("run", "--static", cwd=top, timeout=60)
    took = time.monotonic() - t0
    one_line_exit_2(proc, f"{top} is not a git work tree", f"over {MAX_SCAN_FILES:,} files",
                    "--repo")
    assert took < 10, took   # ~0.5 s here (Python's start and the walk)
    # named with --repo, the same: the limit is the directory's, not the default's
    proc = run_doctor("run", "--static", "--repo", str(top), cwd=tmp_path, timeout=60)
    one_line_exit_2(proc, "is not a git work tree")
    # and with the job script named, when nothing else would list the files before the
    # checks: still exit 2 at the start, not an error inside a check
    proc = run_doctor("run", "--static", "--sbatch", "slurm/train.sbatch", cwd=top, timeout=60)
    one_line_exit_2(proc, "is not a git work tree")
    shutil.rmtree(top)   # 51k names: not left for pytest's next runs to keep
