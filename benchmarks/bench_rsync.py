"""The rsync filter emulation vs `rsync -r -n` over the same generated ~100k-file tree.

Runs both alternately (N rounds), checks that they list the same names, and prints
the median times and the ratio emulation / rsync (goal: <= 1.0).
    python benchmarks/bench_rsync.py [--files 100000] [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from doctor.scanners.rsync import parse_command, transfer_list  # noqa: E402
from rounds import alternate, medians  # noqa: E402

ARGS = ["--exclude=.git", "--exclude=__pycache__", "--exclude=data", "--exclude=*.pyc",
        "--exclude=/outputs", "-f", "- build/**/tmp", "--include=*/", "--exclude=*.log"]


def make_tree(root: Path, files: int) -> None:
    names = ["src", "pkg", "data", "model", "utils", "tests", "build", "tmp", "outputs", "io"]
    n = 0
    for a in range(50):
        for b in range(20):
            d = root / names[a % 10] / f"{names[b % 10]}{a}" / f"m{b}"
            d.mkdir(parents=True, exist_ok=True)
            for c in range(files // 1000):
                ext = (".py", ".pyc", ".log", ".txt")[c % 4]
                (d / f"f{c}{ext}").touch()
                n += 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=5)
    opts = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-rsync-"))
    try:
        make_tree(tmp / "tree", opts.files)
        (tmp / "dst").mkdir()
        src = str(tmp / "tree") + "/"
        total = sum(len(f) for _, _, f in os.walk(tmp / "tree"))

        def rsync() -> list:
            return subprocess.run(["rsync", "-r", "-l", "-n", "--out-format=%n", *ARGS, src,
                                   str(tmp / "dst") + "/"], capture_output=True, text=True,
                                  check=True, env={"LC_ALL": "C", "PATH": os.environ["PATH"]}
                                  ).stdout.splitlines()

        def emulation() -> list:
            return transfer_list(src, parse_command(["rsync", *ARGS, src, "dst/"],
                                                    lambda p: b"").rules)

        times, last = alternate({"rsync -r -n": rsync, "emulation": emulation}, opts.rounds)
        real = sorted(n for n in last["rsync -r -n"] if n and n != "./")
        assert sorted(last["emulation"]) == real, "emulation and rsync disagree"
        print(f"tree: {total} files, {len(real)} names sent; {opts.rounds} alternating rounds")
        med = medians(times)
        print(f"ratio emulation/rsync: {med['emulation'] / med['rsync -r -n']:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
