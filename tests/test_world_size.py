"""world-size-mismatch (issue 29): the real CLI on job scripts as users write them.

A launcher that waits for more nodes than the job starts it on hangs in its rendezvous
(the batch step without srun runs once, on the first node): proven on the local two-node
Slurm with real torchrun (RendezvousTimeoutError without srun; COMPLETED once `doctor fix
--unsafe` puts srun before it). The parallelism rules follow the frameworks' own
arithmetic (Megatron's `world_size % (TP × PP × CP)`, nanotron's `dp × tp × pp ==
world_size`), quoted in the check's page and the fixtures' SOURCE.md.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git_repo, run_doctor, validate_report

CHECK = "world-size-mismatch"
HEAD = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=4\n#SBATCH --time=00:10:00\n"
RDZV = "--rdzv-backend=c10d --rdzv-endpoint=$head:29500"
FIRST = "head=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)\n"


def _result(repo: Path, *extra: str) -> dict:
    proc = run_doctor("run", "--repo", str(repo), "--static", "--only", CHECK,
                      "--format", "json", *extra)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), proc.stderr
    doc = validate_report(json.loads(proc.stdout))
    return next(r for r in doc["results"] if r["id"] == CHECK)


def _by_file(result: dict) -> dict:
    return {f["location"]["path"]: f for f in result["findings"]}


def test_a_launcher_in_the_batch_step_of_a_two_node_job_is_an_error_with_each_link(tmp_path):
    repo = git_repo(tmp_path / "r", {
        "train.py": "import torch\n",
        "job.sbatch": HEAD + FIRST + f"torchrun --nnodes=2 --nproc_per_node=4 {RDZV} train.py\n",
        "legacy.sbatch": "#!/bin/bash\n#SBATCH -N 8\n"
                         "python -m torch.distributed.launch --nnodes 8 --nproc_per_node 8 "
                         "--master_addr $MASTER --master_port 29500 train.py\n"})
    res = _result(repo)
    assert res["status"] == "fail", res
    found = _by_file(res)
    job = found["job.sbatch"]
    assert (job["severity"], job["location"]["line"]) == ("error", 6)
    # each link: the launcher's line and option, the allocation's #SBATCH line, the batch step
    assert "torchrun at job.sbatch:6 waits for 2 nodes (--nnodes 2)" in job["message"]
    assert "job.sbatch:2 (#SBATCH --nodes=2)" in job["message"]
    assert "batch step" in job["message"] and "hangs" in job["message"]
    assert job["data"]["rule"] == "batch_step"
    assert job["edits"][0]["new"].startswith("srun --ntasks-per-node=1 torchrun --nnodes=2")
    legacy = found["legacy.sbatch"]
    assert legacy["severity"] == "error" and legacy["location"]["line"] == 3
    assert "python -m torch.distributed.launch at legacy.sbatch:3 waits for 8 nodes" in \
        legacy["message"]
    assert "the other 7 node(s) never join" in legacy["message"]

    # the unsafe edit puts srun before the launcher; then the check is silent
    proc = run_doctor("fix", "--repo", str(repo), "--static", "--only", CHECK, "--unsafe",
                      "--write")
    assert proc.returncode in (0, 1), proc.stderr
    assert (repo / "job.sbatch").read_text().splitlines()[5] == \
        f"srun --ntasks-per-node=1 torchrun --nnodes=2 --nproc_per_node=4 {RDZV} train.py"
    # a fixed --master_addr static rendezvous needs a node rank per node: no edit there
    assert (repo / "legacy.sbatch").read_text().splitlines()[2].startswith("python -m")
    assert "job.sbatch" not in _by_file(_result(repo))


def test_launches_that_reach_their_nodes_are_silent(tmp_path):
    repo = git_repo(tmp_path / "r", {
        "train.py": "import torch\n",
        # one launcher per node under srun, the count from Slurm
        "srun.sbatch": HEAD + FIRST + "srun --ntasks-per-node=1 torchrun --nnodes=$SLURM_NNODES "
                       f"--nproc_per_node=4 {RDZV} train.py\n",
        # elastic: the minimum is one node, the job starts with it
        "elastic.sbatch": HEAD + f"torchrun --nnodes=1:2 --nproc_per_node=4 {RDZV} train.py\n",
        # one node's worth, on purpose
        "one.sbatch": HEAD + "torchrun --standalone --nnodes=1 --nproc_per_node=4 train.py\n",
        # the script starts both nodes' launchers itself (deepseek-slurm's main.sh)
        "both.sbatch": "#!/bin/bash\n#SBATCH -N 1\n"
                       "torchrun --nnodes 2 --node-rank 0 --nproc-per-node 2 train.py &\n"
                       "torchrun --nnodes 2 --node-rank 1 --nproc-per-node 2 train.py &\n"
                       "wait\n",
        # an unknown count on a one-node job
        "unknown.sbatch": "#!/bin/bash\n#SBATCH -N 1\n"
                          "torchrun --nnodes=$NNODES --nproc_per_node=4 train.py\n",
        # accelerate under srun, its machines from Slurm
        "acc.sbatch": HEAD + "srun accelerate launch --num_machines $SLURM_NNODES "
                      "--num_processes 8 --main_process_ip $head train.py\n"})
    res = _result(repo)
    assert res["status"] == "pass", res["findings"]


def test_links_the_doctor_cannot_show_make_warnings_that_name_them(tmp_path):
    repo = git_repo(tmp_path / "r", {
        "train.py": "import torch\n",
        "var.sbatch": HEAD + "torchrun --nnodes=$NNODES --nproc_per_node=4 train.py\n",
        "ssh.sbatch": HEAD + "ssh $OTHER 'torchrun --nnodes 2 --node-rank 1 train.py' &\n"
                      "torchrun --nnodes 2 --node-rank 0 --master_addr $(hostname) train.py\n",
        "loop.sbatch": HEAD + "for n in $(scontrol show hostnames); do\n"
                       "  srun -N1 -w $n torchrun --nnodes 2 --nproc_per_node 4 "
                       f"{RDZV} train.py &\ndone\nwait\n",
        # not sent to the background: the loop alone says the script may launch it again
        "while.sbatch": HEAD + "while read n; do\n"
                        "  srun -N1 -w $n torchrun --nnodes 2 --nproc_per_node 4 "
                        f"{RDZV} train.py\ndone < nodes.txt\n"})
    found = _by_file(_result(repo))
    assert {p: f["severity"] for p, f in found.items()} == {
        "var.sbatch": "warning", "ssh.sbatch": "warning", "loop.sbatch": "warning",
        "while.sbatch": "warning"}
    assert "--nnodes $NNODES, which the doctor cannot resolve" in found["var.sbatch"]["message"]
    assert "unless ssh at ssh.sbatch:5 starts them" in found["ssh.sbatch"]["message"]
    assert "srun starts it on 1" in found["loop.sbatch"]["message"]


def test_srun_starting_the_launcher_on_fewer_nodes_than_it_waits_for(tmp_path):
    repo = git_repo(tmp_path / "r", {
        "train.py": "import torch\n",
        "more.sbatch": HEAD + f"srun torchrun --nnodes 4 --nproc_per_node 4 {RDZV} train.py\n",
        "fewer.sbatch": HEAD + f"srun torchrun --nnodes 1 --nproc_per_node 4 {RDZV} train.py\n"})
    found = _by_file(_result(repo))
    more, fewer = found["more.sbatch"], found["fewer.sbatch"]
    assert (more["severity"], more["location"]["line"]) == ("error", 5)
    assert "waits for 4 nodes (--nnodes 4) but srun starts it on 2 node(s) " \
           "(more.sbatch:2 (#SBATCH --nodes=2))" in more["message"]
    assert fewer["severity"] == "warning" and "forms a group of 1" in fewer["message"]


def test_accelerate_config_num_machines_in_the_batch_step_points_at_the_config(tmp_path):
    repo = git_repo(tmp_path / "r", {
        "train.py": "import torch\n",
        "configs/multi.yaml": "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\n"
                              "num_machines: 2\nnum_processes: 8\nmachine_rank: 0\n",
        "job.sbatch": HEAD + "accelerate launch --config_file configs/multi.yaml train.py\n",
        # accelerate's default config: not known here
        "default.sbatch": HEAD + "accelerate launch train.py\n"})
    found = _by_file(_result(repo))
    assert set(found) == {"configs/multi.yaml"}, found
    f = found["configs/multi.yaml"]
    assert (f["severity"], f["location"]["line"]) == ("error", 3)
    assert "accelerate launch at job.sbatch:5 waits for 2 nodes (num_machines: 2 in " \
           "configs/multi.yaml)" in f["message"]


MEGATRON = ("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
            "#SBATCH --gpus-per-node=8\n{pre}"
            "srun torchrun --nnodes=$SLURM_NNODES --nproc_per_node=8 {rdzv} pretrain_gpt.py \\\n"
            "    --tensor-model-parallel-size {tp} \\\n"
            "    --pipeline-model-parallel-size {pp} --num-layers 24\n")


def test_megatron_parallel_sizes_must_divide_the_world_size(tmp_path):
    def script(tp, pp, pre=""):
        return MEGATRON.format(pre=pre, rdzv=RDZV, tp=tp, pp=pp)

    repo = git_repo(tmp_path / "r", {
        "pretrain_gpt.py": "import torch\n",
        "bad.sbatch": script(4, 3),
        "good.sbatch": script(2, 4),
        "var.sbatch": script("$TP", 2),   # unresolved: silent
        "branch.sbatch": MEGATRON.replace("srun", "if [ -n \"$X\" ]; then\nsrun").format(
            pre="", rdzv=RDZV, tp=4, pp=3) + "fi\n",
        # 6 tasks over 4 nodes: the world is 6 (not 4 × ⌈6 ÷ 4⌉ = 8, which TP 4 divides)
        "ntasks.sbatch": "#!/bin/bash\n#SBATCH --nodes=4\n#SBATCH --ntasks=6\n"
                         "srun python pretrain_gpt.py --tensor-model-parallel-size 4\n",
        # under plain srun Megatron reads the WORLD_SIZE the job exports
        "ws.sbatch": "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=8\n"
                     "export WORLD_SIZE=12\n"
                     "srun python pretrain_gpt.py --tensor-model-parallel-size 8\n"})
    found = _by_file(_result(repo))
    assert set(found) == {"bad.sbatch", "branch.sbatch", "ntasks.sbatch", "ws.sbatch"}, found
    assert "world size 12 (WORLD_SIZE=12 at ws.sbatch:4)" in found["ws.sbatch"]["message"]
    assert "does not divide its world size 6 (ntasks.sbatch:3 (#SBATCH --ntasks=6))" in \
        found["ntasks.sbatch"]["message"]
    bad = found["bad.sbatch"]
    assert (bad["severity"], bad["location"]["line"]) == ("error", 5)
    assert "TP 4 (bad.sbatch:6) × PP 3 (bad.sbatch:7) = 12, which does not divide its world " \
           "size 16 (--nnodes 2 × 8 per node" in bad["message"]
    assert "not divisible by total_model_size" in bad["message"]
    branch = found["branch.sbatch"]
    assert branch["severity"] == "warning"
    assert "the step is in the branch at branch.sbatch:5" in branch["message"]


def test_nanotron_parallelism_must_equal_the_ranks_srun_starts(tmp_path):
    repo = git_repo(tmp_path / "r", {
        "run_train.py": "import torch\n",
        "config.yaml": "general:\n  project: x\nparallelism:\n  dp: 2\n  tp: 2\n  pp: 1\n",
        "job.sbatch": "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n"
                      "srun python run_train.py --config-file config.yaml\n"})
    found = _by_file(_result(repo))
    f = found["config.yaml"]
    assert (f["severity"], f["location"]["line"]) == ("error", 3)
    assert "dp 2 × tp 2 × pp 1 = 4 ranks, but job.sbatch:4 starts 8 (2 node(s) " \
           "(job.sbatch:2 (#SBATCH --nodes=2)) × 4 task(s) per node" in f["message"]
    assert "Set `dp: 4` in config.yaml" in f["fix"]


# ---- the oracle: real torchrun on the local two-node Slurm ------------------------------
PROBE = """import datetime
import torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
print("world", dist.get_world_size(), "rank", dist.get_rank(), flush=True)
dist.barrier()
dist.destroy_process_group()
"""


@pytest.mark.slurm
def test_slurm_the_flagged_launcher_never_forms_its_group_and_the_fixed_one_does(
        slurm_cluster, tmp_path):
    from test_slurm_injob import JOB_ENV, wait_done

    port = random.randint(20000, 40000)
    # both local nodes run on this host: the rendezvous is on it; join_timeout bounds the
    # wait (torchrun's default is 600 s) so the hung job ends in ~20 s, not its time limit
    job = (f"#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --time=2\n#SBATCH -o {tmp_path}/r/%j.out\n"
           f"{Path(sys.executable).name} -m torch.distributed.run --nnodes=2 --nproc_per_node=1 "
           f"--rdzv-backend=c10d --rdzv-endpoint=$(hostname):{port} "
           "--rdzv-conf=join_timeout=20 --max-restarts=0 probe.py\n")
    repo = git_repo(tmp_path / "r", {"probe.py": PROBE, "job.sbatch": job})
    res = _result(repo)
    assert [(f["severity"], f["location"]["line"]) for f in res["findings"]] == [("error", 5)]

    env = dict(JOB_ENV, PATH=f"{Path(sys.executable).parent}:{JOB_ENV.get('PATH', '')}")

    def submit() -> tuple:
        proc = subprocess.run(["sbatch", "--parsable", "job.sbatch"], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=60)
        job_id = proc.stdout.strip().split(";")[0]
        assert job_id.isdigit(), (proc.stdout, proc.stderr)
        state = wait_done(job_id, timeout=240)   # (other jobs may hold the nodes)
        return state, (repo / f"{job_id}.out").read_text(errors="replace")

    state, log = submit()
    assert state != "COMPLETED" and "RendezvousTimeoutError" in log, (state, log[-2000:])
    assert "world 2" not in log

    proc = run_doctor("fix", "--repo", str(repo), "--static", "--only", CHECK, "--unsafe",
                      "--write")
    assert proc.returncode in (0, 1), proc.stderr
    assert (repo / "job.sbatch").read_text().splitlines()[4].startswith(
        "srun --ntasks-per-node=1 ")
    assert _result(repo)["status"] == "pass"
    state, log = submit()
    assert state == "COMPLETED", (state, log[-2000:])
    assert log.count("world 2 rank") == 2


def test_no_job_script_or_no_launcher_skips(tmp_path):
    repo = git_repo(tmp_path / "r", {"train.py": "print(1)\n",
                                     "job.sbatch": "#!/bin/bash\n#SBATCH -N 1\nsrun python "
                                                   "train.py\n"})
    res = _result(repo)
    assert res["status"] == "skip" and "no torchrun/accelerate/deepspeed launcher" in res["reason"]


def test_deepspeed_in_the_batch_step_needs_a_hostfile_of_the_jobs_nodes(tmp_path):
    repo = git_repo(tmp_path / "r", {
        "train.py": "import torch\n",
        "hostfile": "node-a slots=8\nnode-b slots=8\nnode-c slots=8\n",
        "none.sbatch": HEAD + "deepspeed --num_nodes 2 --num_gpus 4 train.py --deepspeed\n",
        "static.sbatch": HEAD + "deepspeed --hostfile hostfile train.py\n",
        # the job writes its own nodes to the hostfile it passes: silent, even though a
        # stale copy is committed
        "made_hosts": "old-node slots=4\n",
        "made.sbatch": HEAD + "scontrol show hostnames $SLURM_JOB_NODELIST | sed 's/$/ slots=4/'"
                       " > made_hosts\ndeepspeed --hostfile made_hosts --num_nodes $SLURM_NNODES "
                       "train.py\n",
        "one.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\ndeepspeed train.py\n",
        "srun.sbatch": HEAD + "srun deepspeed --num_gpus 4 train.py\n"})
    found = _by_file(_result(repo))
    assert {p: f["severity"] for p, f in found.items()} == {
        "none.sbatch": "warning", "static.sbatch": "warning"}, found
    assert "Num nodes is >1 but no extra nodes available via hostfile" in \
        found["none.sbatch"]["message"]
    assert "starts ranks on 3 host(s) of hostfile (node-a, node-b, node-c) but the job has 2 " \
           "node(s) (static.sbatch:2 (#SBATCH --nodes=2))" in found["static.sbatch"]["message"]


def test_a_job_script_that_another_runs_under_srun_is_not_a_batch_step(tmp_path):
    # inner.sh keeps #SBATCH lines of its own, but outer.sbatch runs it once per node
    inner = HEAD + f"torchrun --nnodes=2 --nproc_per_node=4 {RDZV} train.py\n"
    repo = git_repo(tmp_path / "r", {
        "train.py": "import torch\n", "inner.sh": inner,
        "outer.sbatch": HEAD + "srun --ntasks-per-node=1 bash inner.sh\n"})
    assert _result(repo)["status"] == "pass"
    alone = git_repo(tmp_path / "alone", {"train.py": "import torch\n", "inner.sh": inner})
    assert [f["location"]["line"] for f in _result(alone)["findings"]] == [5]


def test_accelerate_config_processes_against_the_gpus_per_node(tmp_path):
    cfg = "distributed_type: MULTI_GPU\nnum_machines: 1\nnum_processes: {n}\n"
    repo = git_repo(tmp_path / "r", {
        "train.py": "import torch\n",
        "eight.yaml": cfg.format(n=8), "four.yaml": cfg.format(n=4),
        "one.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=4\n"
                      "accelerate launch --config_file eight.yaml train.py\n",
        "ok.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=4\n"
                     "accelerate launch --config_file four.yaml train.py\n",
        # the command line's --num_processes wins over the config: slurm-gpu-mismatch's
        "cli.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=4\n"
                      "accelerate launch --config_file eight.yaml --num_processes 4 train.py\n"})
    res = _result(repo)
    assert [f["location"]["path"] for f in res["findings"]] == ["eight.yaml"], res
    f = res["findings"][0]
    assert (f["severity"], f["location"]["line"]) == ("warning", 3)
    assert "starts 8 process(es) per node, but the job requests 4 GPU(s) per node " \
           "(one.sbatch:3 (#SBATCH --gpus-per-node=4))" in f["message"]
