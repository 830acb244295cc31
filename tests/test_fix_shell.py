"""`doctor fix` on the shell-side checks (issue 15): rsync-exclude-unanchored,
nccl-env-deprecated, hip-alloc-conf, wandb-online-in-container, miopen-cache-shared and
slurm-gpu-mismatch. Each test runs `doctor fix --write` through the CLI on a copy of a
fixture (or a small repo) and asserts the exact lines written; the rsync ones then run
the real rsync on the fixed command and find the nested paths sent.
"""
from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, run_main
from harness import materialize

ROCM_TORCH = "2.5.1+rocm6.2.4"
needs_rsync = pytest.mark.skipif(shutil.which("rsync") is None, reason="no rsync here")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    """The CLI reads this process's environment as the login environment."""
    for name in list(os.environ):
        if name.startswith(("NCCL_", "TORCH_NCCL_", "PYTORCH_", "WANDB_", "MIOPEN_", "SLURM_")):
            monkeypatch.delenv(name)


def fix(capsys, repo: Path, *args: str):
    return run_main(capsys, "fix", "--repo", str(repo), *args)


def case(tmp_path: Path, check: str, name: str) -> Path:
    return materialize(FIXTURES / check / name, tmp_path)


def lines(path: Path) -> list:
    return path.read_bytes().decode().splitlines(keepends=True)


def sent(cmd: list, cwd: Path, dest: Path) -> set:
    """The files the real rsync copies to dest (relative paths)."""
    subprocess.run(cmd + [str(dest) + "/"], cwd=cwd, check=True, capture_output=True,
                   timeout=60)
    return {str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_file()}


# ---- rsync-exclude-unanchored ------------------------------------------------
@needs_rsync
def test_rsync_word_anchored_in_place_and_rsync_keeps_the_nested_package(tmp_path, capsys):
    root = case(tmp_path, "rsync-exclude-unanchored", "fail-seed-deploy")
    res = fix(capsys, root, "--write", "--only", "rsync-exclude-unanchored")
    assert res.returncode == 0, res.stderr
    assert lines(root / "scripts/deploy.sh")[3] == \
        "rsync -avz --exclude '.git' --exclude '__pycache__' --exclude '/data' \\\n"
    script = (root / "scripts/deploy.sh").read_text().replace(
        "lumi2:/scratch/project_465002500/vcloud/code/", str(tmp_path / "out") + "/")
    subprocess.run(["bash", "-c", script], cwd=root, check=True, capture_output=True,
                   timeout=60)
    got = {str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*")}
    assert "src/vcloud/data/loader.py" in got and "data" not in got
    assert fix(capsys, root, "--only", "rsync-exclude-unanchored").returncode == 0


@needs_rsync
def test_rsync_every_offending_word_of_a_line_crlf_and_mode_kept(tmp_path, capsys):
    """Four spellings on one CRLF line (--exclude "x", --exclude=x, --filter='- x',
    -f'- x'): each word gets its /, its quotes kept, the line its CRLF, the file its mode."""
    repo = tmp_path / "repo"
    for d in ("data", "logs", "cache", "tmp"):
        (repo / "src/pkg" / d).mkdir(parents=True)
        (repo / "src/pkg" / d / "__init__.py").write_text("")
        (repo / d).mkdir()
        (repo / d / "top.bin").write_text("x")
    script = repo / "deploy.sh"
    script.write_bytes(b"#!/bin/bash\r\n"
                       b"rsync -a --exclude \"data\" --exclude=logs --filter='- cache' "
                       b"-f'- tmp' \\\r\n  ./ host:/code/\r\n")
    os.chmod(script, 0o750)
    res = fix(capsys, repo, "--write", "--only", "rsync-exclude-unanchored")
    assert res.returncode == 0, res.stderr
    fixed = lines(script)[1]
    assert fixed == ("rsync -a --exclude \"/data\" --exclude=/logs --filter='- /cache' "
                     "-f'- /tmp' \\\r\n")
    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert lines(script)[2] == "  ./ host:/code/\r\n"
    got = sent(shlex.split(fixed.rstrip("\\\r\n")) + ["./"], repo, tmp_path / "out")
    assert {f"src/pkg/{d}/__init__.py" for d in ("data", "logs", "cache", "tmp")} <= got
    assert not any(p.endswith("top.bin") for p in got)


@needs_rsync
def test_rsync_exclude_from_file_line_anchored(tmp_path, capsys):
    root = case(tmp_path, "rsync-exclude-unanchored", "fail-exclude-from-warning")
    res = fix(capsys, root, "--write", "--only", "rsync-exclude-unanchored",
              "--sbatch", str(root / "slurm/deploy.sbatch"))
    assert res.returncode == 0, res.stderr
    assert lines(root / "slurm/rsync-excludes.txt") == [
        "# build outputs and run logs\n", "; editor files\n", "*.pyc\n", "/logs\n",
        "+ keep.txt\n"]
    got = sent(["rsync", "-a", "--exclude-from=slurm/rsync-excludes.txt", "./"], root,
               tmp_path / "out")
    assert "src/app/logs/README.md" in got and "logs/run.log" not in got


def test_rsync_makefile_source_without_slash_names_the_source(tmp_path, capsys):
    root = case(tmp_path, "rsync-exclude-unanchored", "fail-makefile")
    res = fix(capsys, root, "--write", "--only", "rsync-exclude-unanchored")
    assert res.returncode == 0, res.stderr
    assert lines(root / "Makefile")[3] == "\t@rsync -a --exclude=/src/data --exclude=\"*.pyc\" \\\n"
    if shutil.which("rsync"):
        got = sent(["rsync", "-a", "--exclude=/src/data", "--exclude=*.pyc", "src"], root,
                   tmp_path / "out")
        assert "src/pkg/data/__init__.py" in got and "src/data/raw.csv" not in got


# ---- nccl-env-deprecated ---------------------------------------------------------
def test_nccl_rename_in_the_job_script_keeps_crlf(tmp_path, capsys):
    root = case(tmp_path, "nccl-env-deprecated", "fail_renamed_in_sbatch")
    job = root / "slurm/train.sbatch"
    job.write_bytes(job.read_bytes().replace(b"\n", b"\r\n"))
    res = fix(capsys, root, "--write", "--only", "nccl-env-deprecated", "--sbatch",
              str(job), "--torch-version", "2.5.1")
    assert res.returncode == 0, res.stderr
    assert lines(job)[5] == "export TORCH_NCCL_ASYNC_ERROR_HANDLING=1\r\n"
    assert lines(job)[4] == "export NCCL_DEBUG=WARN\r\n"


def test_nccl_rename_in_code_and_unsafe_timeout(tmp_path, capsys):
    root = case(tmp_path, "nccl-env-deprecated", "fail_pg_timeout_patch")
    args = ("--only", "nccl-env-deprecated", "--sbatch", str(root / "slurm/train.sbatch"),
            "--torch-version", "2.5.1")
    fix(capsys, root, "--write", *args)
    assert lines(root / "train.py")[7] == \
        'os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1")\n'
    assert "timeout=" not in lines(root / "train.py")[12]
    res = fix(capsys, root, "--write", "--unsafe", *args)
    assert res.returncode == 0, res.stderr
    assert lines(root / "train.py")[12] == (
        '    dist.init_process_group(backend="nccl", init_method="env://", '
        "timeout=torch.distributed.distributed_c10d._DEFAULT_PG_TIMEOUT)\n")


def test_nccl_no_rename_where_the_old_name_is_read_again(tmp_path, capsys):
    root = case(tmp_path, "nccl-env-deprecated", "fail_renamed_in_sbatch")
    job = root / "slurm/train.sbatch"
    job.write_text(job.read_text().replace(
        "srun", 'echo "async=$NCCL_ASYNC_ERROR_HANDLING"\nsrun'))
    before = job.read_bytes()
    res = fix(capsys, root, "--only", "nccl-env-deprecated", "--sbatch", str(job),
              "--torch-version", "2.5.1")
    assert (res.returncode, res.stdout) == (0, "") and "nothing to fix" in res.stderr
    assert job.read_bytes() == before


# ---- hip-alloc-conf --------------------------------------------------------------
def hip(capsys, root: Path, *extra: str):
    return fix(capsys, root, "--write", "--only", "hip-alloc-conf", "--sbatch",
               str(root / "slurm/train.sbatch"), "--torch-version", ROCM_TORCH, "--static", *extra)


def test_hip_option_added_to_the_winning_variable_and_the_ignored_one_removed(tmp_path, capsys):
    root = case(tmp_path, "hip-alloc-conf", "fail_cuda_var_shadows_hip")
    assert hip(capsys, root).returncode == 0
    assert lines(root / "slurm/train.sbatch")[4:] == [
        "export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512,expandable_segments:True\n",
        'srun singularity exec "$SIF" python3 train.py\n']


def test_hip_export_after_the_header(tmp_path, capsys):
    root = case(tmp_path, "hip-alloc-conf", "fail_no_expandable")
    assert hip(capsys, root).returncode == 0
    got = lines(root / "slurm/train.sbatch")
    assert got[2:4] == ["#SBATCH --gpus=1\n",
                        "export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True\n"]


@pytest.mark.parametrize("old, new", [
    ('"garbage_collection_threshold:0.6"',
     '"garbage_collection_threshold:0.6,expandable_segments:True"'),
    ("'expandable_segments:False,max_split_size_mb:128'",
     "'expandable_segments:True,max_split_size_mb:128'"),
    ("max_split_size_mb:128,'expandable_segments:False'",
     "max_split_size_mb:128,'expandable_segments:True'"),
])
def test_hip_value_edited_inside_its_quotes(tmp_path, capsys, old, new):
    root = case(tmp_path, "hip-alloc-conf", "fail_no_expandable")
    job = root / "slurm/train.sbatch"
    job.write_text(job.read_text().replace(
        "export MIOPEN", f"export PYTORCH_HIP_ALLOC_CONF={old}  # ours\nexport MIOPEN"))
    assert hip(capsys, root).returncode == 0
    assert lines(job)[4] == f"export PYTORCH_HIP_ALLOC_CONF={new}  # ours\n"


# ---- wandb-online-in-container -----------------------------------------------------
def wandb(capsys, root: Path, job: str):
    return fix(capsys, root, "--write", "--only", "wandb-online-in-container", "--sbatch",
               str(root / job),
               "--static")


def test_wandb_offline_export_after_the_header(tmp_path, capsys):
    root = case(tmp_path, "wandb-online-in-container", "fail_lumi_container")
    assert wandb(capsys, root, "slurm/train.sbatch").returncode == 0
    assert lines(root / "slurm/train.sbatch")[2:4] == ["#SBATCH --gpus=1\n",
                                                       "export WANDB_MODE=offline\n"]


def test_wandb_online_set_by_the_job_becomes_offline_in_place(tmp_path, capsys):
    root = case(tmp_path, "wandb-online-in-container", "fail_lumi_container")
    job = root / "slurm/train.sbatch"
    job.write_text(job.read_text().replace("srun", "export WANDB_MODE='online'\nsrun"))
    assert wandb(capsys, root, "slurm/train.sbatch").returncode == 0
    assert lines(job)[5:7] == ["export WANDB_MODE=offline\n", "srun singularity exec \\\n"]
    assert len(lines(job)) == 11


def test_wandb_no_edit_through_cleanenv(tmp_path, capsys):
    """An export in the job script does not reach an --cleanenv container: no edit."""
    root = case(tmp_path, "wandb-online-in-container", "fail_lumi_container")
    job = root / "slurm/train.sbatch"
    job.write_text(job.read_text().replace("singularity exec", "singularity exec --cleanenv"))
    before = job.read_bytes()
    res = wandb(capsys, root, "slurm/train.sbatch")
    assert "no automatic fix for wandb-online-in-container" in res.stderr
    assert job.read_bytes() == before


# ---- miopen-cache-shared ---------------------------------------------------------
def miopen_repo(tmp_path: Path, body: bytes) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "doctor.yaml").write_text("site:\n  shared_paths: [/scratch]\n  local_paths: [/tmp]\n")
    (repo / "job.sbatch").write_bytes(b"#!/bin/bash\n#SBATCH --nodes=4\n"
                                      b"#SBATCH --gpus-per-node=8\n" + body
                                      + b"srun python train.py\n")
    return repo


def miopen(capsys, repo: Path):
    return fix(capsys, repo, "--write", "--only", "miopen-cache-shared", "--sbatch",
               str(repo / "job.sbatch"), "--torch-version", ROCM_TORCH)


BLOCK = ['export MIOPEN_USER_DB_PATH="/tmp/$USER-miopen-$SLURM_JOB_ID"',
         'export MIOPEN_CUSTOM_CACHE_DIR="$MIOPEN_USER_DB_PATH"',
         'srun --nodes=$SLURM_NNODES --ntasks=$SLURM_NNODES mkdir -p "$MIOPEN_USER_DB_PATH"']


def test_miopen_block_replaces_the_shared_export(tmp_path, capsys):
    repo = miopen_repo(tmp_path, b"\n# cache\nexport MIOPEN_USER_DB_PATH=/scratch/p/miopen\r\n"
                                 b"export MIOPEN_CUSTOM_CACHE_DIR=$MIOPEN_USER_DB_PATH\n")
    res = miopen(capsys, repo)
    assert res.returncode == 0, res.stderr
    assert lines(repo / "job.sbatch")[3:] == ["\n", "# cache\n"] + \
        [b + "\r\n" for b in BLOCK] + ["srun python train.py\n"]


def test_miopen_default_on_shared_home_gets_the_block_after_the_header(tmp_path, capsys,
                                                                       monkeypatch):
    monkeypatch.setenv("HOME", "/scratch/home/me")
    repo = miopen_repo(tmp_path, b"\n")
    res = miopen(capsys, repo)
    assert res.returncode == 0, res.stderr
    assert lines(repo / "job.sbatch")[3:] == [b + "\n" for b in BLOCK] + \
        ["\n", "srun python train.py\n"]


# ---- slurm-gpu-mismatch ----------------------------------------------------------
def test_slurm_directive_edit_needs_unsafe(tmp_path, capsys):
    root = case(tmp_path, "slurm-gpu-mismatch", "fail_too_few_gpus")
    job = root / "slurm/train.sbatch"
    before = job.read_bytes()
    res = fix(capsys, root, "--only", "slurm-gpu-mismatch", "--sbatch", str(job))
    assert res.stdout == "" and "--unsafe" in res.stderr and job.read_bytes() == before
    res = fix(capsys, root, "--write", "--unsafe", "--only", "slurm-gpu-mismatch",
              "--sbatch", str(job))
    assert res.returncode == 0, res.stderr
    assert lines(job)[3] == "#SBATCH --gres=gpu:4\n"
    assert lines(job)[:3] + lines(job)[4:] == before.decode().splitlines(keepends=True)[:3] + \
        before.decode().splitlines(keepends=True)[4:]
