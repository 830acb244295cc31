"""The one job model (doctor/job/): ranks, platform, steps — one answer for every check.

The two disagreements the architecture review reproduced are pinned here through the
real CLI: fd-limit-too-low and shm-too-small counted 4 and 1 ranks per node for the
same script, and hip-alloc-conf called a job ROCm that miopen-cache-shared skipped.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import run_doctor
from doctor.job.context import Job
from doctor.job.platform import platform_of


def _repo(tmp_path: Path, files: dict) -> Path:
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    return tmp_path


SBATCH = "#!/bin/bash\n#SBATCH --nodes=2\n{directives}\n{body}\n"


@pytest.mark.parametrize("directives,body,ranks,cpus", [
    # Slurm starts one task per node unless told otherwise, whatever the GPUs
    ("#SBATCH --gpus-per-node=4", "srun python train.py", 1, None),
    ("#SBATCH --ntasks-per-node=4\n#SBATCH --cpus-per-task=8", "srun python train.py", 4, 8),
    # torchrun under one task per node: its processes are the ranks (seed form)
    ("#SBATCH --ntasks-per-node=1\n#SBATCH --cpus-per-task=64",
     "srun torchrun --nproc_per_node=8 --nnodes=2 train.py", 8, 8),
    ("#SBATCH --ntasks-per-node=1", "srun python -m torch.distributed.run --nproc-per-node 4 "
     "-m pkg.train", 4, None),
    ("#SBATCH --ntasks-per-node=1", "srun accelerate launch --num_processes 16 "
     "--num_machines 2 train.py", 8, None),
    # srun's own options override the batch script's ...
    ("#SBATCH --cpus-per-task=4", "srun --ntasks-per-node=2 python train.py", 2, 4),
    # ... but the job's SLURM_NTASKS=16 is srun's -n, and real Slurm then says "can't honor
    # --ntasks-per-node set to 2 ... Ignoring --ntasks-per-node" (tests/test_steps_oracle.py)
    ("#SBATCH --ntasks-per-node=8", "srun --ntasks-per-node=2 python train.py", 8, None),
    # no srun: the batch step runs python once, on the first node
    ("#SBATCH --ntasks-per-node=8", "python train.py", 1, None),
])
def test_ranks_per_node(tmp_path, directives, body, ranks, cpus):
    repo = _repo(tmp_path, {"job.sbatch": SBATCH.format(directives=directives, body=body)})
    job = Job(repo, static=True, env={})
    step = job.step(job.scripts[0])
    assert step.ranks_per_node.value == ranks, step.ranks_per_node
    assert step.cpus_per_rank.value == cpus
    assert job.ranks_per_node(job.scripts[0]) == step.ranks_per_node


def test_step_reads_the_chain_entry_and_overrides(tmp_path):
    repo = _repo(tmp_path, {
        "job.sbatch": SBATCH.format(
            directives="#SBATCH --cpus-per-task=32",
            body='S=slurm/inner.sh\nsrun singularity exec --env A=1 img.sif bash "$S"'),
        "slurm/inner.sh": "export WANDB_MODE=offline\n"
                          "torchrun --nproc_per_node=8 -m pkg.train --data.num_workers=4 "
                          "trainer.devices=8\n"})
    job = Job(repo, static=True, env={"HOME": "/home/u"})
    step = job.step(job.scripts[0])
    assert [x.kind for x in step.chain] == ["srun", "container", "torchrun", "python"]
    assert (step.entry, step.entry_is_module) == ("pkg.train", True)
    assert step.args == ("--data.num_workers=4", "trainer.devices=8")
    assert step.where == "slurm/inner.sh:2"
    assert step.env["A"].channel == "container-env"
    assert (step.env["WANDB_MODE"].path, step.env["WANDB_MODE"].line) == ("slurm/inner.sh", 1)
    assert step.env["SLURM_CPUS_PER_TASK"].value == "32"


def _results(repo: Path, *args: str) -> dict:
    proc = run_doctor("run", "--repo", str(repo), "--format", "json", *args, timeout=120)
    assert proc.returncode in (0, 1, 3), proc.stderr
    return {r["id"]: r for r in json.loads(proc.stdout)["results"]}


def test_fd_limit_and_shm_count_the_same_ranks(tmp_path):
    repo = _repo(tmp_path, {
        "job.sbatch": SBATCH.format(directives="#SBATCH --gpus-per-node=4\n"
                                    "#SBATCH --ntasks-per-node=1",
                                    body="ulimit -n 300\nsrun torchrun --nproc_per_node=4 "
                                         "train.py"),
        "configs/train.yaml": "data:\n  num_workers: 8\n  batch_size: 4\n"})
    got = _results(repo, "--no-smoke", "--only", "fd-limit-too-low,shm-too-small")
    fd = [f["data"]["ranks_per_node"] for f in got["fd-limit-too-low"]["findings"]]
    assert fd == [4], got["fd-limit-too-low"]
    shm = got["shm-too-small"]
    shm_ranks = {f["data"].get("ranks_per_node") for f in shm["findings"]} or \
        {shm.get("data", {}).get("ranks_per_node")}
    assert shm["status"] in ("pass", "fail", "skip")
    if shm["findings"]:
        assert shm_ranks == {4}, shm


def test_rocm_torch_version_is_rocm_for_every_check(tmp_path):
    """--torch-version 2.5.1+rocm6.2: hip-alloc-conf said ROCm, miopen-cache-shared 'not ROCm'."""
    repo = _repo(tmp_path, {"job.sbatch": SBATCH.format(
        directives="#SBATCH --gpus-per-node=8",
        body="export ROCR_VISIBLE_DEVICES=0,1\nsrun python train.py")})
    got = _results(repo, "--no-smoke", "--torch-version", "2.5.1+rocm6.2",
                   "--only", "hip-alloc-conf,miopen-cache-shared")
    assert got["hip-alloc-conf"]["status"] == "fail"
    miopen = got["miopen-cache-shared"]
    assert not (miopen["status"] == "skip" and "not a ROCm job" in (miopen["reason"] or "")), miopen


@pytest.mark.parametrize("body,platform", [
    # a LUMI block copied into an NVIDIA job: the NVIDIA signs win over MIOPEN_*
    ("export MIOPEN_USER_DB_PATH=/tmp/m\nsrun singularity exec --nv ngc.sif python t.py", "cuda"),
    # two weak signs against each other: nothing is decided
    ("export MIOPEN_USER_DB_PATH=/tmp/m\nnvidia-smi\nsrun python t.py", None),
    ("module load rocm/6.2\nnvidia-smi\nsrun python t.py", "rocm"),
    ("export MIOPEN_USER_DB_PATH=/tmp/m\nsrun python t.py", None),  # maybe: a copied block?
    ("srun singularity exec lumi_rocm6.2.sif python t.py", "rocm"),
    ("export ROCR_VISIBLE_DEVICES=0\nsrun python t.py", "rocm"),
    ("srun python t.py", None),
])
def test_platform_from_the_evidence(tmp_path, body, platform):
    repo = _repo(tmp_path, {"job.sbatch": SBATCH.format(directives="", body=body)})
    job = Job(repo, static=True, env={})
    got = platform_of(job, job.scripts[0])
    assert got.name == platform, got
    if platform is None and "MIOPEN" in body and "smi" not in body:
        assert got.maybe == "rocm" and got.may_be_rocm
    if platform == "cuda" and "MIOPEN" in body:
        assert any("MIOPEN" in e for e in got.against), got   # the report says what lost


def test_copied_miopen_block_in_an_nvidia_job_is_not_rocm(tmp_path):
    repo = _repo(tmp_path, {"job.sbatch": SBATCH.format(
        directives="#SBATCH --gpus-per-node=4",
        body="export MIOPEN_USER_DB_PATH=/scratch/miopen\n"
             "srun singularity exec --nv nvcr.io-pytorch.sif python train.py")})
    got = _results(repo, "--static", "--only", "hip-alloc-conf")
    assert got["hip-alloc-conf"]["status"] == "skip", got["hip-alloc-conf"]


@pytest.mark.parametrize("body,pythonpath", [
    # bash sets PWD on cd: $PWD/src after `cd /opt/app` is /opt/app/src ...
    ('cd /opt/app\nexport PYTHONPATH="$PWD/src"', "/opt/app/src"),
    ('cd /opt/app\ncd sub\nexport PYTHONPATH="$PWD/src"', "/opt/app/sub/src"),
    # ... and after a cd the doctor cannot follow, $PWD is unknown: never the directory
    # the doctor itself runs in (it used to be, and container-deps-missing then looked
    # in the wrong place)
    ('cd "$WORKDIR"\nexport PYTHONPATH="$PWD/src"', "$PWD/src"),
])
def test_pwd_follows_cd(tmp_path, body, pythonpath):
    repo = _repo(tmp_path, {"job.sbatch": SBATCH.format(directives="#SBATCH --nodes=1",
                                                        body=body + "\nsrun python train.py")})
    job = Job(repo, static=True, env={"PWD": "/where/the/doctor/runs"})
    value = job.step(job.scripts[0]).env["PYTHONPATH"]
    assert value.value == pythonpath
    assert value.resolved == (not pythonpath.startswith("$"))


def test_a_script_name_with_colons_keeps_its_line(tmp_path):
    """Found by tests/test_fuzz.py: a job script named `:0` made the SLURM_NNODES
    source `:0:2 (#SBATCH --nodes=1)` an internal error."""
    repo = _repo(tmp_path, {":0": SBATCH.format(directives="#SBATCH --ntasks-per-node=4",
                                                body="srun python train.py")})
    job = Job(repo, static=True, env={})
    nnodes = job.step(job.scripts[0]).env["SLURM_NNODES"]
    assert (nnodes.value, nnodes.path, nnodes.line) == ("2", ":0", 2)


def test_rel_resolves_directories_as_realpath_does(tmp_path):
    """Job.rel resolves each directory once, from its parent's resolution and one lstat
    of its own; os.path.realpath is the oracle, links to links and `..` included."""
    repo = tmp_path / "repo"
    (repo / "a" / "b").mkdir(parents=True)
    (repo / "c").symlink_to("a")
    (repo / "a" / "up").symlink_to("..")
    (repo / "a" / "b" / "deep").symlink_to(repo / "a")
    (repo / "e").symlink_to("a/b")
    (tmp_path / "outside").mkdir()
    (repo / "out").symlink_to(tmp_path / "outside")
    job = Job(repo, static=True, env={})
    for d in ["a", "a/b", "c", "c/b", "a/up", "a/up/c/b", "a/b/deep/b", "e", "e/deep",
              "c/up/e", "out", "a/up/out", "a/b/..", "c/b/../..", "e/deep/../b/.",
              "a/up/..", "out/..", "a/./b/../up/c", "e/..", "nothere/../a"]:
        path = os.path.join(repo, d, "f.py")
        real = os.path.realpath(path)
        top = os.path.realpath(repo)
        want = real[len(top) + 1:] if real.startswith(top + "/") else path
        assert job.rel(path) == want, d
