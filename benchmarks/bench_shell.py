"""The script checks on a 1,000,000-line job script vs `bash -n` on the same file.

The shell layer must be linear (issue 16): `doctor run --static --only <the checks that
read job scripts>` against bash's own syntax check, which also reads every line once.
Runs alternate between the two commands so that machine noise hits both alike; the
medians are compared (goal: ratio <= 2). The script is generated into a temporary
directory (about 16 MB: assignments, exports, quoting, substitutions, pipelines, a
here-document, srun and python lines); `--one-line` writes a single 15 MB line instead.

    python benchmarks/bench_shell.py [--runs N] [--lines N] [--one-line]
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rounds import alternate, medians

ROOT = Path(__file__).resolve().parent.parent
SCRIPT_CHECKS = ("config-not-found,hip-alloc-conf,nccl-env-deprecated,prerequisite-missing,"
                 "rsync-exclude-unanchored,script-dos-line-breaks,script-encoding-unsupported,"
                 "slurm-gpu-mismatch,wandb-online-in-container")
BODY = ['x=$((x+1))', 'echo "n $x ${N:-1}" >&2', "# a note", 'cd "$HOME/r"',
        "export NCCL_DEBUG=WARN", 'A=${B:-c} f "$A" \'$l\'', "grep -q ok l | t && v",
        "srun -N1 python t.py"]
HEREDOC = ["cat > cfg.yaml <<EOF", "lr: 0.1", "EOF"]


def write_script(path: Path, lines: int, one_line: bool) -> None:
    out = ["#!/bin/bash", "#SBATCH --nodes=1", "#SBATCH --ntasks-per-node=1", "set -e"]
    if one_line:   # instead of the lines: the script must stay under 20 MiB
        out.append("echo " + "ab" * 7_500_000)
        lines = len(out)
    i = 0
    while len(out) < lines:
        out += HEREDOC if i % 1000 == 999 else [BODY[i % len(BODY)]]
        i += 1
    path.write_text("\n".join(out) + "\n")


def run(argv: list, env: dict) -> None:
    """One run; a broken setup (an exit other than 0 or 1) stops the benchmark loudly."""
    proc = subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    if proc.returncode not in (0, 1) or "timed out" in proc.stdout:
        print(f"{' '.join(argv)} exited {proc.returncode}: "
              f"{(proc.stderr or proc.stdout).strip()[-300:]}", file=sys.stderr)
        sys.exit(2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--one-line", action="store_true", help="one 15 MB line instead of --lines")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "SLURM_JOB_ID"}
    with tempfile.TemporaryDirectory(prefix="bench-shell-") as tmp:
        script, repo = Path(tmp) / "big.sbatch", Path(tmp) / "repo"
        repo.mkdir()
        write_script(script, args.lines, args.one_line)
        doctor = [sys.executable, "-m", "doctor", "run", "--static", "--only", SCRIPT_CHECKS,
                  "--sbatch", str(script), "--repo", str(repo)]
        bash = ["bash", "-n", str(script)]
        # the warm-up round warms the page cache
        times, _ = alternate({"doctor (script checks)": lambda: run(doctor, env),
                              "bash -n": lambda: run(bash, env)}, args.runs, warmup=1)
        size = script.stat().st_size / 1e6
        what = "one line" if args.one_line else f"{args.lines:,} lines"
        print(f"{args.runs} alternating runs on {what} ({size:.1f} MB)")
        med = medians(times)
    ratio = med["doctor (script checks)"] / med["bash -n"]
    print(f"ratio doctor/bash -n: {ratio:.2f} (goal <= 2: {'met' if ratio <= 2 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
