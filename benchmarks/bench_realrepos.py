"""The doctor on a real public checkout vs `ruff check --no-cache --select E,F .`, in CPU time.

Generated trees mislead (issue 26: 90k generated files took 5 s, Megatron-LM's 1,344 real
ones 45 s of CPU), so this takes any checkout. Three commands run in alternating rounds in
the checkout, each as a user runs it (the whole CLI process); what is compared is the CPU
time (user + sys) of the child process and everything it started, from os.wait4:

  A  doctor run --static --sbatch JOB     (the job's own code)   goal: A <= 1.0 x ruff
  B  ruff check --no-cache --select E,F . (the whole repo)
  C  doctor run --static                  (every job script)     goal: C <= 3.0 x ruff

After the rounds it prints the exit code and the failing findings (errors first) of A and C.

    python benchmarks/bench_realrepos.py CHECKOUT [--sbatch JOB]... [--runs N] [--code DIR]...

--code runs the doctor of another source tree (a worktree of an older commit, or
`git archive COMMIT | tar -x -C DIR`) instead of this one; given more than once, every
tree runs A and C in the same alternating rounds (machine noise hits each alike), and
each is named by its directory. Each tree's bytecode is compiled first, as an installed
copy has it (a fresh tree under PYTHONDONTWRITEBYTECODE=1 would compile ~200 modules
in every run). Besides the medians, the best of the rounds is printed,
wall and CPU (the least disturbed run on a shared machine). Run it with the Python that
has the doctor's dependencies (`python3 -m pip install -e .`'s): the doctor starts as
`sys.executable`, never through a pyenv shim, which a checkout's own .python-version
(Megatron-LM's 3.12) would redirect.

The checkouts measured when this landed (issue 26), all from the fetch tool's
snapshots:
  NVIDIA/Megatron-LM         d98e8a64ddf34856e74b24714e3bedb2f5a39553
      (job: examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh)
  pytorch/torchtitan         b5bcd76c66d0acb1a08b176d9639425bc55e0b2a
      (job: multinode_trainer.slurm)
  deepspeedai/DeepSpeedExamples 45b4b7156c8794a3452a5a7d03dbd8d797068569
      (no #SBATCH script; job: applications/DeepSpeed-Chat/training/step1_supervised_finetuning/
       training_scripts/opt/multi_node/run_66b.sh)
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from rounds import alternate

ROOT = Path(__file__).resolve().parent.parent


def cpu_run(argv: list[str], cwd: Path, env: dict, ok: tuple[int, ...] = (0, 1, 3)) -> float:
    """Run argv to its end; its CPU seconds (user + sys, children included). A broken
    setup (an exit outside `ok`: 3 is a check that could not complete, still a whole run,
    which the findings listing shows) stops the benchmark loudly."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode not in ok:
            err.seek(0)
            print(f"{' '.join(argv)} exited {proc.returncode}: "
                  f"{err.read().decode(errors='replace').strip()[-400:]}", file=sys.stderr)
            sys.exit(2)
    return usage.ru_utime + usage.ru_stime


def doctor_argv(code: Path) -> list[str]:
    """The doctor's CLI from the source tree `code`, run in the checkout (no PYTHONPATH:
    the doctor reads the login environment as the job's, and a PYTHONPATH there would
    change its findings)."""
    return [sys.executable, "-c",
            f"import sys; sys.path.insert(0, {str(code)!r}); from doctor.cli import main; main()"]


def report(argv: list[str], cwd: Path, env: dict) -> None:
    """One more run of a doctor command, printing its exit code and failing findings."""
    proc = subprocess.run([*argv, "--format", "json"], cwd=cwd, env=env, capture_output=True,
                          text=True)
    print(f"  exit {proc.returncode}")
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        print(f"  no JSON report: {proc.stderr.strip()[-300:]}")
        return
    found: list[tuple[str, str, str | None, str]] = []
    for res in doc["results"]:
        if res["status"] == "error":
            found.append(("crash", res["id"], None, res["reason"]))
        for f in res["findings"] if res["status"] == "fail" else ():
            sev = f.get("severity", res["severity"])
            loc = f.get("location") or {}
            found.append((sev, res["id"], f"{loc.get('path')}:{loc.get('line')}", f["message"]))
    order = {"crash": 0, "error": 1, "warning": 2, "info": 3}
    for sev, cid, where, msg in sorted(found, key=lambda x: order[x[0]]):
        if sev != "info":
            print(f"  {sev:7} {cid} {where} {msg.splitlines()[0][:160]}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", type=Path)
    ap.add_argument("--sbatch", action="append", default=[],
                    help="job script(s) for command A, relative to the checkout "
                         "(default: the first tracked file holding #SBATCH)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--code", type=Path, action="append", default=[],
                    help="doctor source tree to run (default: this one); repeat to compare")
    ap.add_argument("--no-findings", action="store_true", help="skip the findings listing")
    args = ap.parse_args()
    repo = args.checkout.resolve()
    jobs = args.sbatch
    if not jobs:
        hits = subprocess.run(["git", "grep", "-l", "^#SBATCH"], cwd=repo, capture_output=True,
                              text=True).stdout.split()
        if not hits:
            print("no tracked file holds #SBATCH: name a job script with --sbatch",
                  file=sys.stderr)
            return 2
        jobs = hits[:1]
    # ruff beside this Python first: a pyenv shim in front of it would add a bash start-up
    beside = Path(sys.executable).parent / "ruff"
    ruff = str(beside) if beside.exists() else shutil.which("ruff")
    if ruff is None:
        print("ruff is not on PATH", file=sys.stderr)
        return 2
    env = {k: v for k, v in os.environ.items()
           if k != "PYTHONPATH" and not k.startswith("SLURM")}
    codes = [c.resolve() for c in args.code] or [ROOT]
    for code in codes:
        # bytecode, as `pip install` leaves it: without it (a fresh `git archive` tree, or
        # PYTHONDONTWRITEBYTECODE=1 as in this project's sessions) every run compiles the
        # doctor's ~200 modules again, 0.4-0.5 s of CPU that no installed copy pays
        subprocess.run([sys.executable, "-m", "compileall", "-q",
                        *(str(code / d) for d in ("doctor", "checks") if (code / d).is_dir())],
                       check=True, stdout=subprocess.DEVNULL)
    sb = [x for j in jobs for x in ("--sbatch", j)]
    cmd_b = [ruff, "check", "--no-cache", "--select", "E,F", "--exit-zero", "."]
    cmds: dict = {}
    for code in codes:
        tag = f" [{code.name}]" if len(codes) > 1 else ""
        doctor = doctor_argv(code)
        cmds[f"A doctor --sbatch{tag}"] = [*doctor, "run", "--static", "--repo", str(repo), *sb]
        if len(cmds) == 1:
            cmds["B ruff"] = cmd_b
        cmds[f"C doctor whole{tag}"] = [*doctor, "run", "--static", "--repo", str(repo)]
    cpu: dict = {name: [] for name in cmds}

    def timed(name: str, argv: list[str]):
        return lambda: cpu[name].append(cpu_run(argv, repo, env))

    wall, _ = alternate({name: timed(name, argv) for name, argv in cmds.items()},
                        args.runs, warmup=1)
    for name in cpu:  # alternate() also ran the warm-up round: drop its CPU sample
        cpu[name] = cpu[name][1:]
    files = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True,
                           text=True).stdout.splitlines()
    print(f"{repo.name}: {len(files)} tracked files, {sum(f.endswith('.py') for f in files)} "
          f"Python; job: {', '.join(jobs)}; doctor: {', '.join(map(str, codes))} (bytecode "
          f"compiled); "
          f"{args.runs} alternating rounds after 1 warm-up")
    med, best = {}, {}
    width = max(map(len, cpu))
    for name, ts in cpu.items():
        med[name], best[name] = statistics.median(ts), min(ts)
        print(f"{name:{width}} CPU median {med[name]:6.2f} s, best {best[name]:6.2f} "
              f"(all {', '.join(f'{t:.2f}' for t in ts)}); wall median "
              f"{statistics.median(wall[name]):6.2f} s, best {min(wall[name]):6.2f}")
    for name in cpu:
        if name.startswith(("A", "C")):
            goal = 1.0 if name.startswith("A") else 3.0
            r, rb = med[name] / med["B ruff"], best[name] / best["B ruff"]
            print(f"{name:{width}} / ruff, CPU: median {r:5.2f}, best {rb:5.2f} "
                  f"(goal <= {goal}: {'met' if r <= goal else 'MISSED'})")
    cmd_a = cmds[next(n for n in cmds if n.startswith("A"))]
    cmd_c = cmds[next(n for n in cmds if n.startswith("C"))]
    if not args.no_findings:
        print("A:", " ".join(cmd_a[-2 * len(jobs):]))
        report(cmd_a, repo, env)
        print("C: whole repo")
        report(cmd_c, repo, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
