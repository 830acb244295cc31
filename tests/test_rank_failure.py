"""rank-failure-hangs-job (issue 29): a multi-task srun step of process-group ranks without
--kill-on-bad-exit.

The findings come from the real CLI on real git repos: warnings with `--static` (the
cluster's KillOnBadExit is not known), an error live on the local Slurm (`scontrol show
config`: KillOnBadExit=0) for a job tied to it by its partition. The oracle is the local
two-node Slurm with real torch (gloo): rank 1 of a 2-task step fails before it joins the
process group; without -K rank 0 waits in init_process_group until its (test-set, 20 s)
timeout; with the fix the report gives (`srun --kill-on-bad-exit=1`), the step ends at once.
"""
from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import git_repo, result_of, run_json

CHECK = "rank-failure-hangs-job"
HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n"
PG = "import torch.distributed as dist\n\ndist.init_process_group('gloo')\n"

# name -> (script after HEAD, (line, severity) with --static, or None)
CASES = {
    "plain": ("srun python train.py\n", (4, "warning")),
    "ntasks": ("#SBATCH --ntasks=4\nsrun -N 2 python train.py\n", (5, "warning")),
    "env_off": ("export SLURM_KILL_BAD_EXIT=0\nsrun python train.py\n", (5, "warning")),
    "k0": ("srun -K0 python train.py\n", (4, "error")),
    "deepspeed_init": ("srun python ds.py\n", (4, "warning")),
    "lightning_cli": ("srun python cli.py fit\n", (4, "warning")),
    "hydra_trainer": ("srun python hydra_train.py trainer=ddp\n", (4, "warning")),
    # the entry under a directory variable: the repo's train.py, a guess (a warning at most)
    "guessed": ("srun -K0 python ${CODE_DIR}/train.py\n", (4, "warning")),
    # not this case
    "k": ("srun -K python train.py\n", None),
    "k_long": ("srun --kill-on-bad-exit=1 python train.py\n", None),
    "env_on": ("export SLURM_KILL_BAD_EXIT=1\nsrun python train.py\n", None),
    "one_task": ("srun -n 1 python train.py\n", None),
    "torchrun": ("srun --ntasks-per-node=1 torchrun --nproc_per_node 2 train.py\n", None),
    "no_group": ("srun python plain.py\n", None),
}
CODE = {
    "train.py": PG,
    "plain.py": "print('no process group')\n",
    "ds.py": "import deepspeed\n\ndeepspeed.init_distributed()\n",
    "cli.py": "from lightning.pytorch.cli import LightningCLI\n\nLightningCLI()\n",
    "hydra_train.py": "import hydra\n\n\n@hydra.main(config_path='configs', config_name='train')\n"
                      "def main(cfg):\n    hydra.utils.instantiate(cfg.trainer)\n\n\nmain()\n",
    "configs/train.yaml": "defaults:\n  - trainer: default\n  - _self_\n",
    "configs/trainer/default.yaml": "_target_: lightning.pytorch.trainer.Trainer\ndevices: 1\n",
    "configs/trainer/ddp.yaml": "defaults:\n  - default\nstrategy: ddp\ndevices: 2\n",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    files = dict(CODE)
    files.update({f"{name}.sbatch": HEAD + body for name, (body, _) in CASES.items()})
    return git_repo(tmp_path_factory.mktemp("rankfail"), files)


def _findings(repo: Path, *args: str, **kw) -> tuple:
    code, doc = run_json("--repo", str(repo), "--only", CHECK, *args, **kw)
    res = result_of(doc, CHECK)
    return code, res, {f["location"]["path"]: f for f in res["findings"]}


def test_static_each_form_is_found_at_its_srun_line(repo):
    code, res, found = _findings(repo, "--static")
    got = {p[:-len(".sbatch")]: (f["location"]["line"], f["severity"]) for p, f in found.items()}
    assert got == {n: exp for n, (_, exp) in CASES.items() if exp is not None}
    assert code == 1     # -K0 turns it off: an error even without the cluster's setting
    plain = found["plain.sbatch"]
    msg = plain["message"]
    assert "the srun step at plain.sbatch:4 runs 2 tasks (1 node(s) × 2 per node)" in msg
    assert "process group started at train.py:3 (init_process_group)" in msg
    assert "KillOnBadExit is not known (--static does not ask Slurm" in msg
    assert "the others wait in init_process_group until its timeout" in msg
    first, second = plain["fix_options"]
    assert first["steps"][0]["lines"] == ["srun --kill-on-bad-exit=1 python train.py"]
    assert second["steps"][0]["lines"] == ["export SLURM_KILL_BAD_EXIT=1"]
    assert "Lightning's Trainer, lightning.pytorch.trainer.Trainer" in \
        found["hydra_trainer.sbatch"]["message"]
    assert "cli.py:3 (Lightning's LightningCLI)" in found["lightning_cli.sbatch"]["message"]
    assert "the entry is ${CODE_DIR}/train.py (read as this checkout's train.py), if that " \
        "directory is this checkout" in found["guessed.sbatch"]["message"]


def test_a_repo_without_such_a_step_skips(tmp_path):
    repo = git_repo(tmp_path / "r", {"job.sbatch": HEAD + "srun -n1 python train.py\n",
                                     "train.py": PG})
    code, res, _ = _findings(repo, "--static")
    assert (code, res["status"]) == (0, "skip"), res


# ---- live: this machine's Slurm, and the oracle --------------------------------------------
TRAIN = """import datetime
import os
import sys
import time

import torch
import torch.distributed as dist

rank, world = int(os.environ["SLURM_PROCID"]), int(os.environ["SLURM_NTASKS"])
start = time.time()
if rank == 1 and os.environ.get("FAIL_AT") == "before":
    sys.exit("rank 1: data shard missing on this node")
try:
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{os.environ['PORT']}",
                            rank=rank, world_size=world, timeout=datetime.timedelta(seconds=20))
    if rank == 1:
        sys.exit("rank 1: failed after joining")
    dist.all_reduce(torch.ones(1))
finally:
    print(f"rank {rank} left after {time.time() - start:.0f} s", flush=True)
"""


def _job(repo: Path, name: str, srun: str, fail_at: str) -> Path:
    script = repo / f"{name}.sbatch"
    script.write_text("#!/bin/bash\n#SBATCH --partition=debug\n#SBATCH --nodes=1\n"
                      "#SBATCH --ntasks-per-node=2\n#SBATCH --time=2\n"
                      f"#SBATCH -o {repo}/{name}-%j.out\n"
                      f"export FAIL_AT={fail_at}\n"
                      "export PORT=$((20000 + SLURM_JOB_ID % 20000))\n"
                      "start=$(date +%s)\n"
                      f"{srun}\n"
                      "echo \"step ended after $(( $(date +%s) - start )) s\"\n")
    return script


def _seconds(repo: Path, name: str, job_id: str) -> int:
    text = (repo / f"{name}-{job_id}.out").read_text()
    m = re.search(r"step ended after (\d+) s", text)
    assert m, text
    return int(m.group(1))


@pytest.mark.slurm
def test_live_error_and_the_oracle_a_failed_rank_hangs_the_step_without_k(slurm_cluster,
                                                                            tmp_path):
    from test_slurm_injob import JOB_ENV, wait_done

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text(TRAIN)
    _job(repo, "hang", "srun python3 train.py", "before")
    _job(repo, "after_init", "srun python3 train.py", "after")
    git_repo(repo, {})
    # live, the job's partition is this cluster's and scontrol says KillOnBadExit=0: an error
    code, res, found = _findings(repo, "--no-smoke", env=JOB_ENV)
    hang = found["hang.sbatch"]
    assert (hang["severity"], hang["location"]["line"]) == ("error", 10), hang
    assert "KillOnBadExit=0 on this cluster (scontrol show config)" in hang["message"]
    assert hang["data"]["cluster_kill_on_bad_exit"] == "0"
    # the report's own fix, applied to a copy of the script
    fixed_line = hang["fix_options"][0]["steps"][0]["lines"][0]
    assert fixed_line == "srun --kill-on-bad-exit=1 python3 train.py"
    _job(repo, "fixed", fixed_line, "before")
    ids = {}
    try:
        for name in ("hang", "fixed", "after_init"):
            proc = subprocess.run(["sbatch", "--parsable", f"{name}.sbatch"], cwd=repo,
                                  env=JOB_ENV, capture_output=True, text=True, timeout=60)
            ids[name] = proc.stdout.strip().split(";")[0]
            assert ids[name].isdigit(), (proc.stdout, proc.stderr)
            time.sleep(1)    # distinct job ids, distinct ports
        for job_id in ids.values():
            wait_done(job_id, 150)
    finally:
        subprocess.run(["scancel", *ids.values()], capture_output=True)
    # rank 1 fails before joining: rank 0 waits out the 20 s process-group timeout ...
    hang_s = _seconds(repo, "hang", ids["hang"])
    text = (repo / f"hang-{ids['hang']}.out").read_text()
    assert hang_s >= 19 and "1/2 clients joined" in text, text
    # ... and with --kill-on-bad-exit=1 Slurm ends the step as soon as rank 1 exits
    fixed_s = _seconds(repo, "fixed", ids["fixed"])
    assert fixed_s < 12, (repo / f"fixed-{ids['fixed']}.out").read_text()
    # (gloo: a rank that fails after joining closes its connections; the other fails at once)
    assert _seconds(repo, "after_init", ids["after_init"]) < 12
