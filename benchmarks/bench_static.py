"""`doctor run --static` on fixtures/demo vs a bare `python -c "import torch"`.

The CI gate must cost less than importing torch (goal: ratio <= 0.5). Runs
alternate between the two commands so that machine noise hits both alike;
the medians are compared.

    python benchmarks/bench_static.py [--runs N] [--repo DIR]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def wall(argv: list, env: dict) -> tuple:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    return time.perf_counter() - t0, proc.returncode, proc.stderr


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--repo", type=Path, default=ROOT / "fixtures" / "demo")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "SLURM_JOB_ID"}
    doctor = [sys.executable, "-m", "doctor", "run", "--static", "--repo", str(args.repo),
              "--format", "json"]
    torch = [sys.executable, "-c", "import torch"]
    for argv in (doctor, torch):  # warm the page cache, and fail loudly on a broken setup
        _, rc, err = wall(argv, env)
        if rc not in (0, 1):
            print(f"{' '.join(argv)} exited {rc}: {err.strip()[-300:]}", file=sys.stderr)
            return 2
    times: dict = {"doctor": [], "torch": []}
    for _ in range(args.runs):
        times["doctor"].append(wall(doctor, env)[0])
        times["torch"].append(wall(torch, env)[0])
    d, t = statistics.median(times["doctor"]), statistics.median(times["torch"])
    print(f"doctor run --static ({args.repo.name}): median {d:.3f}s "
          f"(min {min(times['doctor']):.3f}s) over {args.runs} runs")
    print(f"python -c 'import torch':        median {t:.3f}s "
          f"(min {min(times['torch']):.3f}s) over {args.runs} runs")
    ratio = d / t
    print(f"ratio doctor/torch: {ratio:.2f} (goal <= 0.50: {'met' if ratio <= 0.5 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
