"""`doctor run --only ddp-smoke` vs a minimal hand-written 2-rank gloo DDP launch.

The baseline is what a user would write to try DDP by hand: a launcher that
starts two copies of itself with the torch.distributed env (MASTER_ADDR/PORT,
RANK, WORLD_SIZE; OMP_NUM_THREADS=1 as torchrun sets it, and as the smoke
does), and ranks that do the smoke's steps on the same built-in model:
init_process_group(gloo), DDP, 2 × (forward, backward, SGD step), a parameter
checksum, destroy_process_group. Both run alternately (N rounds, after one
warm-up of each); prints every wall time, the medians and the ratio
doctor / baseline (goal: <= 1.2). A third contender, "fast-exit", is the same
baseline ending with os._exit(0) as the smoke's ranks do: the interpreter's
teardown of torch costs a normal script about a second.
    python benchmarks/bench_smoke.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rounds import alternate, medians

ROOT = Path(__file__).resolve().parent.parent

BASELINE = r'''
import os, socket, subprocess, sys

if os.environ.get("RANK") is None:            # the launcher: two ranks, no torch here
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    procs = [subprocess.Popen([sys.executable, __file__], env=dict(
        os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r),
        LOCAL_RANK=str(r), WORLD_SIZE="2", OMP_NUM_THREADS="1")) for r in range(2)]
    sys.exit(max(p.wait() for p in procs))

import datetime, torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
torch.manual_seed(0)
model = DDP(torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 8)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 32, generator=torch.Generator().manual_seed(1234 + dist.get_rank()))
for _ in range(2):
    opt.zero_grad(set_to_none=True)
    model(x).float().pow(2).mean().backward()
    opt.step()
    sums = [float(p.detach().double().sum()) for p in model.parameters()]
dist.destroy_process_group()
if os.environ.get("FAST_EXIT"):
    os._exit(0)   # skip the interpreter's teardown of torch, as the smoke's ranks do
'''


def run(name: str, argv: list, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        sys.exit(f"{name} failed (rc {proc.returncode}):\n{proc.stdout[-2000:]}"
                 f"\n{proc.stderr[-2000:]}")
    return proc


def doctor_run(argv: list, env: dict) -> None:
    smoke = json.loads(run("doctor", argv, env, ROOT).stdout)["facts"]["smoke"]
    assert smoke["backend"] == "gloo" and smoke["ranks"][0]["steps"] == 2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "SLURM_JOB_ID"}
    with tempfile.TemporaryDirectory(prefix="bench-smoke-") as tmp:
        repo = Path(tmp)
        # torch's DDP import makes $TMPDIR/torchinductor_$USER: keep it in here
        env = dict(env, TMPDIR=tmp)
        script = repo / "ddp_by_hand.py"
        script.write_text(BASELINE)
        doctor = [sys.executable, "-m", "doctor", "run", "--repo", str(repo),
                  "--only", "ddp-smoke", "--format", "json"]
        hand = [sys.executable, str(script)]
        fast = dict(env, FAST_EXIT="1")
        times, _ = alternate({"doctor": lambda: doctor_run(doctor, env),
                              "baseline": lambda: run("baseline", hand, env, repo),
                              "fast-exit": lambda: run("fast-exit", hand, fast, repo)},
                             args.rounds, warmup=1, show=True)
    med = medians(times)
    for k in ("baseline", "fast-exit"):
        print(f"ratio doctor/{k}: {med['doctor'] / med[k]:.2f} (goal <= 1.2)")


if __name__ == "__main__":
    main()
