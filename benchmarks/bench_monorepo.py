"""`doctor run --static` on a generated 90,000-file monorepo vs reading its inputs (the floor).

The floor is what any CI gate on the repo must do: `git ls-files`, every config loaded
with yaml.CSafeLoader and every job script read, in one Python process. The monorepo
comes from gen_monorepo.py (generated into a temporary directory, /dev/shm when it has
room, unless --repo names one already made). Runs alternate between the two commands so
that machine noise hits both alike; the medians are compared (goal: ratio <= 2). A
doctor run that exits other than 0 or 1, or with a check in `error`, stops the benchmark.

    python benchmarks/bench_monorepo.py [--runs N] [--repo DIR] [--py N]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from gen_monorepo import generate
from rounds import alternate, medians

ROOT = Path(__file__).resolve().parent.parent
FLOOR = """
import subprocess, sys, yaml
repo = sys.argv[1]
files = subprocess.run(["git", "-C", repo, "ls-files", "-z"], capture_output=True,
                       check=True).stdout.decode().split("\\0")
for f in files:
    if f.endswith((".yaml", ".yml")):
        with open(f"{repo}/{f}", "rb") as fh:
            yaml.load(fh, Loader=yaml.CSafeLoader)
    elif f.endswith(".sbatch"):
        with open(f"{repo}/{f}", "rb") as fh:
            fh.read()
"""


def run_doctor(argv: list, env: dict) -> dict:
    """One doctor run; its JSON report. A broken run stops the benchmark loudly."""
    proc = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True)
    report = json.loads(proc.stdout) if proc.stdout.startswith("{") else {}
    errors = [r["id"] for r in report.get("results", []) if r["status"] == "error"]
    if proc.returncode not in (0, 1) or errors:
        print(f"doctor exited {proc.returncode}, errors in {errors}: "
              f"{proc.stderr.strip()[-300:]}", file=sys.stderr)
        sys.exit(2)
    return report


def run_floor(argv: list, env: dict) -> None:
    subprocess.run(argv, env=env, check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repo", type=Path, help="a monorepo gen_monorepo.py made already")
    ap.add_argument("--py", type=int, default=90_000, help="Python files to generate")
    ap.add_argument("--slowest", type=int, default=8, help="checks to list by duration")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "SLURM_JOB_ID"}
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and shutil.disk_usage(shm).free > 2 << 30 else None
    with tempfile.TemporaryDirectory(prefix="bench-monorepo-", dir=base) as tmp:
        repo = args.repo
        if repo is None:
            repo = Path(tmp) / "repo"
            repo.mkdir()
            print(f"generating {args.py:,} Python files in {repo} ...", flush=True)
            generate(repo, args.py, 1_000, 200, 17)
        doctor = [sys.executable, "-m", "doctor", "run", "--static", "--repo", str(repo),
                  "--format", "json"]
        floor = [sys.executable, "-c", FLOOR, str(repo)]
        # the warm-up round warms the page cache
        times, last = alternate({"doctor run --static": lambda: run_doctor(doctor, env),
                                 "floor": lambda: run_floor(floor, env)},
                                args.runs, warmup=1)
        print(f"{args.runs} alternating runs on {repo}")
        med = medians(times)
    report = last["doctor run --static"]
    slow = sorted(report["results"], key=lambda r: -r["duration_s"])[:args.slowest]
    print("slowest checks (last run): " + ", ".join(
        f"{r['id']} {r['duration_s']:.2f} s" for r in slow))
    ratio = med["doctor run --static"] / med["floor"]
    print(f"ratio doctor/floor: {ratio:.2f} (goal <= 2: {'met' if ratio <= 2 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
