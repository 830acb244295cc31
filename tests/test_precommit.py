"""The pre-commit hook for real: `pre-commit try-repo` builds a venv, pip-installs this
repo at its current commit and runs the hook on a scratch repo."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow

GIT_ENV = dict(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")


@pytest.fixture(scope="module")
def precommit(tmp_path_factory):
    exe = shutil.which("pre-commit")
    if exe is None:
        pytest.skip("pre-commit not installed (pip install pre-commit)")
    home = tmp_path_factory.mktemp("pre-commit-home")  # never the user's ~/.cache
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()

    def run(repo, files=None):
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SLURM_JOB_ID")}
        env.update(GIT_ENV, PRE_COMMIT_HOME=str(home))
        which = ["--files", *files] if files else ["--all-files"]
        return subprocess.run([exe, "try-repo", str(ROOT), "doctor", "--ref", head,
                               *which, "--color", "never", "--verbose"], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=600)

    return run


def scratch_repo(path, files: dict):
    path.mkdir()
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=path, check=True)
    subprocess.run(["git", "add", "."], cwd=path, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=path, check=True,
                   env=dict(os.environ, **GIT_ENV))
    return path


def test_hook_passes_a_healthy_repo_and_fails_a_broken_one(precommit, tmp_path):
    good = scratch_repo(tmp_path / "good", {
        "configs/train.yaml": "data:\n  num_workers: 4\n  batch_size: 8\n",
        "job.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\nsrun python train.py\n"})
    proc = precommit(good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "doctor (static pre-flight checks)" in proc.stdout and "Passed" in proc.stdout

    # a settings typo is a usage error (exit 2): the hook fails with the one-line reason
    bad = scratch_repo(tmp_path / "bad", {
        "configs/train.yaml": "data:\n  num_workers: 4\n",
        "doctor.yaml": "selcet: [all]\n"})
    proc = precommit(bad)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Failed" in proc.stdout and "exit code: 2" in proc.stdout
    assert "selcet" in proc.stdout


def test_hook_fails_on_a_failing_static_check(precommit, tmp_path):
    # a DataLoader option torch 2.x rejects (prefetch_factor without workers)
    bad = scratch_repo(tmp_path / "loader", {
        "configs/train.yaml": "data:\n  num_workers: 0\n  prefetch_factor: 2\n",
        "doctor.yaml": "torch_version: '2.5.1'\n"})
    proc = precommit(bad)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "exit code: 1" in proc.stdout
    assert "dataloader-option-conflict" in proc.stdout and "configs/train.yaml" in proc.stdout


def test_hook_checks_the_files_it_is_given(precommit, tmp_path):
    """pass_filenames: the hook judges the staged files and what ties them to a job, not
    a broken config elsewhere in the repo (test_hook_fails_on_a_failing_static_check
    shows such a config failing --all-files; tests/test_scope.py the file arguments)."""
    repo = scratch_repo(tmp_path / "files", {
        "configs/good.yaml": "data:\n  num_workers: 4\n",
        "configs/broken.yaml": "data:\n  num_workers: 0\n  prefetch_factor: 2\n",
        "doctor.yaml": "torch_version: '2.5.1'\n"})
    proc = precommit(repo, ["configs/good.yaml"])   # (a hook run costs ~10 s: one here)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "1 file argument: 1 changed file" in proc.stdout
