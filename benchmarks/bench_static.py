"""`doctor run --static` on fixtures/demo vs a bare `python -c "import torch"`.

The CI gate must cost less than importing torch (goal: ratio <= 0.5). Runs
alternate between the two commands so that machine noise hits both alike;
the medians are compared.

    python benchmarks/bench_static.py [--runs N] [--repo DIR]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from rounds import alternate, medians

ROOT = Path(__file__).resolve().parent.parent


def run(argv: list, env: dict) -> None:
    """One run; a broken setup (an exit other than 0 or 1) stops the benchmark loudly."""
    proc = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    if proc.returncode not in (0, 1):
        print(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()[-300:]}",
              file=sys.stderr)
        sys.exit(2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--repo", type=Path, default=ROOT / "fixtures" / "demo")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "SLURM_JOB_ID"}
    doctor = [sys.executable, "-m", "doctor", "run", "--static", "--repo", str(args.repo),
              "--format", "json"]
    torch = [sys.executable, "-c", "import torch"]
    # the warm-up round warms the page cache
    times, _ = alternate({"doctor run --static": lambda: run(doctor, env),
                          "python -c 'import torch'": lambda: run(torch, env)},
                         args.runs, warmup=1)
    print(f"{args.runs} alternating runs on {args.repo.name}")
    med = medians(times)
    ratio = med["doctor run --static"] / med["python -c 'import torch'"]
    print(f"ratio doctor/torch: {ratio:.2f} (goal <= 0.50: {'met' if ratio <= 0.5 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
