"""The floor under `doctor run --static --sbatch JOB`: Python's own parse of the files the
doctor parses for that job, against `ruff check --no-cache --select E,F .` on the whole
checkout, in CPU time.

Issue 26 asks `--sbatch` to cost at most 1.0x ruff's CPU on Megatron-LM. The doctor reads
Python as Python does (ast.parse), and its code checks need the parsed trees of the job's
code; no check can cost less than that parse. This script runs the doctor once in-process
on the checkout with ast.parse recorded, then times ast.parse alone over exactly the
sources it parsed (garbage collector paused, as the doctor pauses it; best of --runs),
and ruff alongside, in alternating rounds:

    python benchmarks/parse_floor.py /tmp/bench/Megatron-LM \
        --sbatch examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh

Measured (issue 26, 2-core machine, best of 5): Megatron-LM d98e8a64, 301 sources (8.1
MiB), parse alone 0.656 s of CPU against ruff's whole run 0.646 s (1.02x): at the 1.0x goal
before any check has run, before the doctor's own start (0.08 s) and git's history walk
(0.35 s). torchtitan b5bcd76c: 88 sources, 0.085 s against ruff's 0.126 s (0.67x).
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import gc
import io
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def parsed_sources(checkout: Path, job: str) -> list:
    """The sources the doctor hands to ast.parse in one `run --static --sbatch JOB`."""
    sys.path.insert(0, str(ROOT))
    from doctor.cli import main as doctor_main
    seen: list = []
    real = ast.parse

    def record(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(source)
        return real(source, *args, **kwargs)

    ast.parse = record   # type: ignore[assignment]
    cwd = os.getcwd()
    try:
        os.chdir(checkout)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
            doctor_main(["run", "--static", "--sbatch", job, "--format", "json"])
    finally:
        ast.parse = real   # type: ignore[assignment]
        os.chdir(cwd)
    return seen


def parse_cpu(sources: list) -> float:
    gc.disable()
    try:
        start = time.process_time()
        for src in sources:
            ast.parse(src)
        return time.process_time() - start
    finally:
        gc.enable()


def ruff_cpu(ruff: str, checkout: Path) -> float:
    proc = subprocess.Popen([ruff, "check", "--no-cache", "--select", "E,F", "--exit-zero",
                             "."], cwd=checkout, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _pid, _status, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--sbatch", required=True, help="the job script, relative to the checkout")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    checkout = args.checkout.resolve()
    beside = Path(sys.executable).parent / "ruff"
    ruff = str(beside) if beside.exists() else shutil.which("ruff")
    if ruff is None:
        print("ruff is not on PATH", file=sys.stderr)
        return 2
    sources = parsed_sources(checkout, args.sbatch)
    size = sum(len(s) for s in sources)
    parse_t, ruff_t = [], []
    for _ in range(args.runs):
        parse_t.append(parse_cpu(sources))
        ruff_t.append(ruff_cpu(ruff, checkout))
    print(f"{checkout.name}: the doctor parsed {len(sources)} sources "
          f"({size / 2**20:.1f} MiB) for --sbatch {args.sbatch}")
    print(f"ast.parse alone, CPU best of {args.runs}: {min(parse_t):.3f} s "
          f"(all {', '.join(f'{t:.3f}' for t in parse_t)})")
    print(f"ruff E,F whole checkout, CPU best of {args.runs}: {min(ruff_t):.3f} s "
          f"(all {', '.join(f'{t:.3f}' for t in ruff_t)})")
    print(f"parse alone / ruff: {min(parse_t) / min(ruff_t):.2f}x (the --sbatch goal is 1.0x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
