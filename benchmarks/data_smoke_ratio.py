"""issue 30's speed acceptance: `doctor run` on the demo with the data smoke vs a minimal
2-rank DDP launch (goal: <= 1.2x).

The baseline: `python -m torch.distributed.run --nproc_per_node=2 min_ddp.py`, gloo, a Linear,
2 steps: what a user would type to try DDP by hand. The contenders, alternately (N rounds,
after one warm-up of each): `doctor run --repo fixtures/demo --format json` without --data,
with a failing --data (prefetch_factor with num_workers=0: torch raises in the DataLoader
call), and with a passing loader of 8 workers (the demo's sbatch runs 8 ranks per node: 64
worker processes, the author's worst case). The loaders are written to a temp dir put on
PYTHONPATH, so the demo stays as it is. Prints every time, the medians and the ratios.
    python benchmarks/data_smoke_ratio.py [--rounds 5] [--only pass] [--code DIR ...]
`--code DIR` (repeatable) runs the doctor from that tree too (`git archive HEAD~1 | tar -x
-C /tmp/before`, say), in the same alternating rounds: before and after side by side.
Prints the median and the minimum of each, and the load average before and after. Where a
Slurm client is installed but its controller does not answer (`tests/slurm/cluster.sh start`
here), every doctor run waits out the site probe's scontrol timeouts (about 6 s): the script
says so before the rounds, since that, not the smokes, would then set the ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rounds import alternate, medians

ROOT = Path(__file__).resolve().parent.parent

MIN_DDP = '''
import torch, torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP
dist.init_process_group("gloo")
model = DDP(torch.nn.Linear(32, 8))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(2):
    opt.zero_grad()
    model(torch.randn(16, 32)).pow(2).mean().backward()
    opt.step()
dist.destroy_process_group()
'''

LOADERS = '''
import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Samples(Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, i):
        return {"x": torch.randn(16, 32), "y": torch.tensor(i % 10)}


def passing():
    ds = Samples()
    return DataLoader(ds, batch_size=8, num_workers=8, sampler=DistributedSampler(ds))


def failing():   # prefetch_factor needs workers: torch raises in DataLoader(...)
    return DataLoader(Samples(), batch_size=8, num_workers=0, prefetch_factor=2)
'''


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--only", choices=["pass", "fail", "none"], action="append",
                    help="contenders besides the baseline (default: all three)")
    ap.add_argument("--code", action="append", type=Path,
                    help="a doctor tree to run (default: this one); repeat to compare")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dsr-"))
    (tmp / "min_ddp.py").write_text(MIN_DDP)
    (tmp / "dsr_loaders.py").write_text(LOADERS)
    trees = [c.resolve() for c in args.code or [ROOT]]
    doctor = [sys.executable, "-m", "doctor", "run", "--repo", str(ROOT / "fixtures/demo"),
              "--format", "json"]
    seen: dict = {}
    cpu: dict = {}   # name -> CPU seconds (user+sys of the whole process tree) per run

    def run(name: str, argv: list, cwd: Path) -> None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp), str(cwd)]),
                   OMP_NUM_THREADS="1")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True,
                           timeout=300)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.setdefault(name, []).append(after.ru_utime + after.ru_stime
                                        - before.ru_utime - before.ru_stime)
        if name != "ddp":
            rep = json.loads(p.stdout)
            seen[name] = [(r["id"], r["status"]) for r in rep["results"]
                          if r["id"] in ("data-smoke", "ddp-smoke")]
            slow = sorted(rep["results"], key=lambda r: -(r.get("duration_s") or 0))[:3]
            print("   slowest: " + ", ".join(f"{r['id']} {r.get('duration_s') or 0:.1f} s "
                                            f"({r['status']})" for r in slow), flush=True)
        elif p.returncode:
            raise SystemExit(f"the baseline failed: {p.stderr[-2000:]}")

    contenders = {"ddp": lambda: run("ddp", [sys.executable, "-m", "torch.distributed.run",
                                             "--nproc_per_node=2", "min_ddp.py"], tmp)}
    which = args.only or ["none", "fail", "pass"]
    spec = {"none": [], "fail": ["--data", "dsr_loaders:failing"],
            "pass": ["--data", "dsr_loaders:passing"]}
    for i, tree in enumerate(trees):
        for w in which:
            name = f"doctor-{w}" + (f"@{i}" if len(trees) > 1 else "")
            contenders[name] = (lambda n=name, w=w, t=tree: run(n, doctor + spec[w], t))
    for i, tree in enumerate(trees):
        print(f"@{i}: {tree}")
    if shutil.which("scontrol"):
        try:
            subprocess.run(["scontrol", "show", "config"], capture_output=True, timeout=2,
                           check=True)
        except (subprocess.SubprocessError, OSError):
            print("WARNING: scontrol does not answer in 2 s: each doctor run waits out its "
                  "timeouts (start the controller: tests/slurm/cluster.sh start)")
    load0 = os.getloadavg()
    times, _ = alternate(contenders, args.rounds, warmup=1, show=True)
    med = medians(times)
    print(f"load average before {load0[0]:.2f}, after {os.getloadavg()[0]:.2f}")
    for name in contenders:
        low = min(times[name])
        print(f"{name}: median {med[name]:.2f} s, min {low:.2f} s" + (
            "" if name == "ddp" else f", {med[name] / med['ddp']:.2f}x the 2-rank DDP launch"
            f" (min/min {low / min(times['ddp']):.2f}x)   {seen[name]}"))
        c, base = cpu[name][1:], cpu["ddp"][1:]   # without the warm-up
        ratio = statistics.median(c) / statistics.median(base)
        print(f"    CPU (user+sys, process tree): median {statistics.median(c):.2f} s, min "
              f"{min(c):.2f} s" + ("" if name == "ddp" else f", {ratio:.2f}x the launch's"))
    subprocess.run(["rm", "-rf", str(tmp)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
