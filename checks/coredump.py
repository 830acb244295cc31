"""Core dumps written into the repo by a crashing job."""
from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Iterator, Optional, Union

from doctor import fs
from doctor import Finding, Location, Skip, check
from doctor.job.cluster import other_cluster
from doctor.job.context import Job
from doctor.job.launch import workdir
from doctor.job.shell import command_argv, split_commands, unquote
from doctor.job.steps import SHELLS
from doctor.model import FixOption, add, change, edit_steps
from doctor.scanners import gitignore


def script_core_limit(script) -> Optional[tuple]:
    """(value, line) of the last `ulimit -c N` / `ulimit -Sc unlimited` in the script,
    also inside the `bash -c '...'` a line runs (`srun bash -c 'ulimit -c unlimited;
    python train.py'` sets the limit of that step's processes)."""
    return _core_limit([(cmd.line, cmd.argv) for cmd in script.commands])


# Linux's kernel.core_pattern unless the node's admin changes it: a file `core` in the
# crashing process's working directory (Documentation/admin-guide/sysctl/kernel.rst)
DEFAULT_PATTERN = "core"


def _core_limit(commands: list, depth: int = 0) -> Optional[tuple]:
    found = None
    for line, words in commands:
        argv = command_argv(words, builtin=True)   # `then ulimit ...` too
        if argv and argv[0] == "ulimit":
            for i, w in enumerate(argv[1:-1], 1):
                if re.fullmatch(r"-[SH]*c[SH]*", w):
                    found = (argv[i + 1], line)
            continue
        inner = _shell_code(command_argv(words))
        if inner is not None and depth < 4:   # the inner shell's own lines, at this line
            found = _core_limit([(line, [unquote(w) for w in ws])
                                 for _, ws in split_commands(inner)], depth + 1) or found
    return found


def _shell_code(argv: list) -> Optional[str]:
    """The code of `bash [-opts] -c CODE` (argv unquoted), else None."""
    if not argv or argv[0].rsplit("/", 1)[-1] not in SHELLS:
        return None
    for i, w in enumerate(argv[1:-1], 1):
        if not w.startswith("-"):
            return None
        if "c" in w[1:] and not w.startswith("--"):
            return argv[i + 1]
    return None


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
    `ulimit -c unlimited` in the job script, in a script its training step runs, or
    in the `bash -c '...'` of its line (`srun bash -c 'ulimit -c unlimited; python
    train.py'`) — while the job's working
    directory (`--chdir`, the script's `cd`, else the submission directory,
    taken as the repo root) is inside the repo, kernel.core_pattern writes a
    plain file relative to that directory (not a `|pipe` to a handler, not an
    absolute directory) and git does not ignore the file name.

    A job for another cluster (its `--partition` or `--clusters` is not this machine's
    cluster's, or the settings name another cluster) runs under that cluster's kernel
    and a shell's limits there: this node's core_pattern and login limit do not judge
    it. Its own `ulimit -c unlimited` still does, against the kernel's default pattern
    (`core` in the working directory), and the message says that cluster's pattern is
    not known here.

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
    skips: list = []
    judged = False
    for script in job.scripts or [None]:
        # A job for another cluster runs on that cluster's nodes, under its kernel and
        # the limits of a shell there (issue 26): this node's core_pattern and login
        # limit are not the job's. Its own `ulimit -c` still is, judged below against
        # the kernel's default pattern, the unknown link named in the message.
        other = other_cluster(job, script)
        got = _here(job) if other is None else (None, None, DEFAULT_PATTERN, None)
        if isinstance(got, str):
            skips.append(got)
            continue
        soft, hard, pattern, uses_pid = got
        limit, line = ("unlimited" if soft is None else str(soft)), None
        where = "the login shell's limit (Slurm propagates it to the job)"
        at = script
        # the training step's scripts, batch first: one it runs (`srun bash inner.sh`)
        # sets the limit of its processes after the batch script's own
        for s in (job.step(script).scripts or (script,)) if script is not None else ():
            set_ = script_core_limit(s)
            if set_:
                (limit, line), at = set_, s
                where = f"`ulimit -c {limit}` at {s.rel}:{line}"
        if other is not None and line is None:
            skips.append(f"{script.rel}: the login shell's core limit and core_pattern of "
                         f"this machine are not the job's: {other}")
            continue
        judged = True
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
        name = str(rel_dir / core_name(pattern, uses_pid))
        name = name[2:] if name.startswith("./") else name
        ignored = job.git("check-ignore", "-q", "--no-index", name).returncode == 0
        if ignored:
            continue
        choices = gitignore.pattern_lines(pattern, uses_pid, str(rel_dir))
        lines = gitignore.safe_lines(job, choices) or []
        edit = gitignore.ignore_edit(job, name, lines, "ignore core dumps in .gitignore") \
            if lines else None
        unseen = (f"; that cluster's kernel.core_pattern is not known here ({other}), and "
                  f"the kernel's default {DEFAULT_PATTERN!r} is assumed") if other else ""
        yield Finding(
            f"core dumps are unlimited ({where}) and core_pattern {pattern!r} writes "
            f"{name} into the repo (working directory from {cwd_from}); git does not "
            f"ignore it{unseen}",
            location=Location(at.rel, line) if at and line else
            (Location(script.rel) if script else None),
            fix="Disable core dumps in the job script, or ignore core files in git.",
            commands=("ulimit -c 0", *(f"echo {shlex.quote(ln)} >> .gitignore" for ln in lines)),
            # two ways: no core files, or core files git ignores
            options=(FixOption((change(at.rel, line, "ulimit -c 0") if at and line else
                                add(script.rel if script else None, "ulimit -c 0",
                                    where="after the #SBATCH lines"),), "no core dumps"),
                     *((FixOption(edit_steps((edit,)) if edit else
                                  (add(".gitignore", *lines),), "git ignores them"),)
                       if lines else ())),
            edits=(edit,) if edit else (),
            data={"limit": limit, "hard": hard, "core_pattern": pattern, "core_file": name,
                  "workdir": job.rel(cwd), **({"other_cluster": other} if other else {})})
    if not judged and skips:
        raise Skip("; ".join(dict.fromkeys(skips)))


def _here(job: Job) -> Union[str, tuple]:
    """(soft, hard core limit, core_pattern, uses_pid) of this machine, or why it does not
    judge (one line)."""
    cp = job.fact("core_pattern") or {}
    pattern = cp.get("pattern")
    if not pattern:
        return "kernel.core_pattern is unreadable here"
    if pattern.startswith("|"):
        return f"core dumps go to a handler ({pattern.split()[0][1:]}), not to files"
    soft, hard = ((job.fact("limits") or {}).get("core") or [0, 0])[:2]
    return soft, hard, pattern, cp.get("uses_pid")
