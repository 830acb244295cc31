"""Core dumps written into the repo by a crashing job."""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Iterator, Optional

from doctor import fs
from doctor import Finding, Location, Skip, check
from doctor.job.context import Job
from doctor.job.launch import workdir
from doctor.job.shell import command_argv
from doctor.scanners import gitignore


def script_core_limit(script) -> Optional[tuple]:
    """(value, line) of the last `ulimit -c N` / `ulimit -Sc unlimited` in the script."""
    found = None
    for cmd in script.commands:
        argv = command_argv(cmd.argv, builtin=True)   # `then ulimit ...` too
        if not argv or argv[0] != "ulimit":
            continue
        for i, w in enumerate(argv[1:-1], 1):
            if re.fullmatch(r"-[SH]*c[SH]*", w):
                found = (argv[i + 1], cmd.line)
    return found


def _unlimited(value: str) -> bool:
    return value == "unlimited" or (value.isdigit() and int(value) >= 1 << 30)


def core_name(pattern: str, uses_pid: Optional[bool]) -> str:
    """The file name a crash of `python` (pid 12345) would get."""
    name = re.sub(r"%[a-zA-Z%]", lambda m: {"%p": "12345", "%e": "python", "%%": "%"}
                  .get(m.group(0), "x"), pattern.rsplit("/", 1)[-1])
    if uses_pid and "%p" not in pattern:
        name += ".12345"
    return name


@check("core-dump-unlimited", title="Unlimited core dumps land in the repo", severity="warning",
       tags=("limits", "git"), needs=("sbatch", "node", "git"), timeout=20)
def core_dump_unlimited(job: Job) -> Iterator[Finding]:
    """Core dumps are unlimited while the job runs in the repo and cores go to the cwd.

    Fires when the core-file limit is unlimited — the login shell's RLIMIT_CORE
    (Slurm propagates the submitting shell's limits by default) or a
    `ulimit -c unlimited` in the job script — while the job's working
    directory (`--chdir`, the script's `cd`, else the submission directory,
    taken as the repo root) is inside the repo, kernel.core_pattern writes a
    plain file relative to that directory (not a `|pipe` to a handler, not an
    absolute directory) and git does not ignore the file name.

    ## Why it matters
    A segfault in a DataLoader worker or NCCL then writes a `core` file as big
    as the process's memory (GBs) into the working tree; `git add -A` commits
    it and GitHub rejects every push from then on ("File core is 1102.61 MB;
    this exceeds GitHub's file size limit"), and the history rewrite to get
    rid of it is painful.

    ## How to fix
    Turn core dumps off in the job script (`ulimit -c 0`), or keep them out
    of git: add the core file names to .gitignore (`core` with `!core/`, or
    `core.[0-9]*`; not `core.*`, which hides `core.py`), or run the job from
    a directory outside the repo (`#SBATCH --chdir=/scratch/...`).

    `doctor fix` appends those .gitignore lines (a safe edit); it leaves
    `ulimit -c` alone, since the script may want its cores.
    """
    cp = job.fact("core_pattern") or {}
    pattern = cp.get("pattern")
    if not pattern:
        raise Skip("kernel.core_pattern is unreadable here")
    if pattern.startswith("|"):
        raise Skip(f"core dumps go to a handler ({pattern.split()[0][1:]}), not to files")
    soft, hard = ((job.fact("limits") or {}).get("core") or [0, 0])[:2]
    for script in job.scripts or [None]:
        limit, line = ("unlimited" if soft is None else str(soft)), None
        where = "the login shell's limit (Slurm propagates it to the job)"
        if script is not None:
            set_ = script_core_limit(script)
            if set_:
                limit, line = set_
                where = f"`ulimit -c {limit}` at {script.rel}:{line}"
        if not _unlimited(limit):
            continue
        cwd, cwd_from = workdir(job, script, [script] if script else [])
        target = cwd / pattern if not pattern.startswith("/") else None
        if target is None:
            target = Path(pattern)
        try:
            rel_dir = Path(fs.realpath(target.parent)).relative_to(job.repo)
        except ValueError:
            continue   # cores go outside the repo
        name = str(rel_dir / core_name(pattern, cp.get("uses_pid")))
        name = name[2:] if name.startswith("./") else name
        ignored = job.git("check-ignore", "-q", "--no-index", name).returncode == 0
        if ignored:
            continue
        choices = gitignore.pattern_lines(pattern, cp.get("uses_pid"), str(rel_dir))
        lines = gitignore.safe_lines(job, choices) or []
        edit = gitignore.ignore_edit(job, name, lines, "ignore core dumps in .gitignore") \
            if lines else None
        yield Finding(
            f"core dumps are unlimited ({where}) and core_pattern {pattern!r} writes "
            f"{name} into the repo (working directory from {cwd_from}); git does not "
            "ignore it",
            location=Location(script.rel, line) if script and line else
            (Location(script.rel) if script else None),
            fix="Disable core dumps in the job script, or ignore core files in git.",
            commands=("ulimit -c 0", *(f"echo {shlex.quote(ln)} >> .gitignore" for ln in lines)),
            edits=(edit,) if edit else (),
            data={"limit": limit, "hard": hard, "core_pattern": pattern, "core_file": name,
                  "workdir": job.rel(cwd)})
