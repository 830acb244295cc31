"""The rsync filter emulation vs `rsync -r -n` over the same generated ~100k-file tree.

Runs both alternately (N rounds), checks that they list the same names, and prints
the median times and the ratio emulation / rsync (goal: <= 1.0).

`--cli`: the whole doctor process as a user runs it instead of the emulation alone:
the tree is a git repo with a scripts/deploy.sh holding the rsync command, and
`doctor run --static --only rsync-exclude-unanchored` is timed against `rsync -r -n`
with the same filters (goal: <= 1.0).
    python benchmarks/bench_rsync.py [--files 100000] [--rounds 5] [--cli]
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
    ap.add_argument("--cli", action="store_true", help="time the whole doctor process")
    opts = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-rsync-"))
    try:
        make_tree(tmp / "tree", opts.files)
        if opts.cli:
            bench_cli(tmp, opts.rounds)
            return
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


def bench_cli(tmp: Path, rounds: int) -> None:
    tree = tmp / "tree"
    (tree / "scripts").mkdir()
    (tree / "src" / "pkg" / "data").mkdir(parents=True)   # what --exclude=data drops too
    (tree / "src" / "pkg" / "data" / "__init__.py").write_text("")
    words = " ".join(f"'{a}'" for a in ARGS)
    (tree / "scripts" / "deploy.sh").write_text(
        f"#!/bin/bash\nrsync -a {words} ./ cluster:/scratch/proj/\n")
    env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
               GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com")
    env.pop("SLURM_JOB_ID", None)
    for argv in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "t"]):
        subprocess.run(argv, cwd=tree, env=env, check=True)
    (tmp / "dst").mkdir()
    doctor = [sys.executable, "-m", "doctor", "run", "--static", "--only",
              "rsync-exclude-unanchored", "--repo", str(tree), "--format", "json"]

    def run_doctor() -> str:
        proc = subprocess.run(doctor, env=env, capture_output=True, text=True)
        if proc.returncode != 1:   # the unanchored --exclude=data is a finding
            sys.exit(f"doctor exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
        return proc.stdout

    def rsync() -> None:
        subprocess.run(["rsync", "-r", "-l", "-n", "--out-format=%n", *ARGS, f"{tree}/",
                        f"{tmp}/dst/"], capture_output=True, check=True,
                       env={"LC_ALL": "C", "PATH": os.environ["PATH"]})

    times, _ = alternate({"doctor run --only rsync-exclude-unanchored": run_doctor,
                          "rsync -r -n": rsync}, rounds, warmup=1)
    files = sum(len(f) for _, _, f in os.walk(tree))
    print(f"tree: {files} files in a git repo; {rounds} alternating rounds")
    med = medians(times)
    ratio = med["doctor run --only rsync-exclude-unanchored"] / med["rsync -r -n"]
    print(f"ratio doctor/rsync: {ratio:.2f} (goal <= 1.0: {'met' if ratio <= 1 else 'MISSED'})")


if __name__ == "__main__":
    main()
