"""`doctor run --static` on a generated 90,000-file monorepo vs reading its inputs (the floor).

The floor is what any CI gate on the repo must do: `git ls-files`, every config loaded
with yaml.CSafeLoader and every job script read, in one Python process. The monorepo
comes from gen_monorepo.py (generated into a temporary directory, /dev/shm when it has
room, unless --repo names one already made). Runs alternate between the two commands so
that machine noise hits both alike; the medians are compared (goal: ratio <= 2). A
doctor run that exits other than 0 or 1, or with a check in `error`, stops the benchmark.

Then `--changed-since HEAD~1` after a commit that changes one experiment config, twice:
one whose data config is sound (goal: 0.3 s) and one whose data config sets
prefetch_factor with num_workers 0, where the doctor must read the whole repo's
DataLoader calls before it may report the config. Its floor: `git diff --name-only`
plus loading the changed config with yaml.CSafeLoader. The commit is undone afterwards.

    python benchmarks/bench_monorepo.py [--runs N] [--repo DIR] [--py N] [--no-full]
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
from typing import Optional

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


SCOPED_FLOOR = """
import subprocess, sys, yaml
repo = sys.argv[1]
names = subprocess.run(["git", "-C", repo, "diff", "--name-only", "-z", "HEAD~1"],
                       capture_output=True, check=True).stdout.decode().split("\\0")
for f in names:
    if f.endswith((".yaml", ".yml")):
        with open(f"{repo}/{f}", "rb") as fh:
            yaml.load(fh, Loader=yaml.CSafeLoader)
"""


def pick_experiments(repo: Path) -> dict:
    """{"sound": exp config, "conflicting": exp config}, each one a job script runs: by
    the num_workers of the data config its defaults list names."""
    out: dict = {}
    run = {w for script in (repo / "jobs").glob("*.sbatch")
           for w in script.read_text().split() if w.startswith("exp_")}
    for exp in sorted((repo / "configs").glob("exp_*.yaml"), key=lambda p: int(p.stem[4:])):
        if exp.stem not in run:
            continue
        data = next((line.split(":", 1)[1].strip() for line in exp.read_text().splitlines()
                     if line.strip().startswith("- data:")), None)
        if data is None:
            continue
        text = (repo / "configs" / "data" / f"{data}.yaml").read_text()
        kind = "conflicting" if "num_workers: 0\n" in text else "sound"
        out.setdefault(kind, exp)
        if len(out) == 2:
            return out
    return out


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.com",
                            GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.com"))


def findings(report: dict) -> set:
    return {(r["id"], f["location"]["path"], f["location"].get("line"))
            for r in report["results"] for f in r.get("findings") or [] if f.get("location")}


def bench_changed(repo: Path, runs: int, env: dict, full: Optional[dict]) -> None:
    for kind, exp in pick_experiments(repo).items():
        original = exp.read_text()
        exp.write_text(original + "# changed by bench_monorepo.py\n")
        git(repo, "commit", "-qam", f"bench: change {exp.name}")
        try:
            doctor = [sys.executable, "-m", "doctor", "run", "--static", "--repo", str(repo),
                      "--format", "json", "--changed-since", "HEAD~1"]
            floor = [sys.executable, "-c", SCOPED_FLOOR, str(repo)]
            times, last = alternate(
                {"doctor --changed-since": lambda d=doctor: run_doctor(d, env),  # type: ignore
                 "floor": lambda f=floor: run_floor(f, env)}, runs, warmup=1)
            report = last["doctor --changed-since"]
            failing = sorted(r["id"] for r in report["results"] if r["status"] == "fail")
            print(f"\n{exp.relative_to(repo)} changed ({kind} data config): "
                  f"{report['facts']['scope']}, failing: {failing or 'none'}")
            if full is not None:   # a scoped run never reports what the full run does not
                extra = findings(report) - findings(full)
                print(f"findings: {len(findings(report))}, all in the full run's: "
                      f"{'yes' if not extra else sorted(extra)[:5]}")
            med = medians(times)
            goal = med["doctor --changed-since"] <= 0.3
            print(f"doctor --changed-since: {med['doctor --changed-since']:.2f} s (goal <= 0.3 s: "
                  f"{'met' if goal else 'MISSED'}); ratio to its floor "
                  f"{med['doctor --changed-since'] / med['floor']:.2f}")
        finally:
            git(repo, "reset", "-q", "--hard", "HEAD~1")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repo", type=Path, help="a monorepo gen_monorepo.py made already")
    ap.add_argument("--py", type=int, default=90_000, help="Python files to generate")
    ap.add_argument("--slowest", type=int, default=8, help="checks to list by duration")
    ap.add_argument("--no-full", action="store_true", help="only the --changed-since runs")
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
        full = None if args.no_full else bench_full(repo, args.runs, args.slowest, env)
        bench_changed(repo, args.runs, env, full)
    return 0


def bench_full(repo: Path, runs: int, slowest: int, env: dict) -> dict:
    doctor = [sys.executable, "-m", "doctor", "run", "--static", "--repo", str(repo),
              "--format", "json"]
    floor = [sys.executable, "-c", FLOOR, str(repo)]
    # the warm-up round warms the page cache
    times, last = alternate({"doctor run --static": lambda: run_doctor(doctor, env),
                             "floor": lambda: run_floor(floor, env)}, runs, warmup=1)
    print(f"{runs} alternating runs on {repo}")
    med = medians(times)
    report = last["doctor run --static"]
    slow = sorted(report["results"], key=lambda r: -r["duration_s"])[:slowest]
    print("slowest checks (last run): " + ", ".join(
        f"{r['id']} {r['duration_s']:.2f} s" for r in slow))
    ratio = med["doctor run --static"] / med["floor"]
    print(f"ratio doctor/floor: {ratio:.2f} (goal <= 2: {'met' if ratio <= 2 else 'MISSED'})")
    return report


if __name__ == "__main__":
    sys.exit(main())
