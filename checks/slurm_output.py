"""Slurm's --output/--error file in a directory that does not exist when the job starts."""
from __future__ import annotations

import os
import posixpath
import re
from pathlib import Path
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, fs
from doctor.job.cluster import not_this_machines
from doctor.job.context import Job
from doctor.job.sbatch import SbatchScript
from doctor.job.shell import command_argv, split_commands, unquote
from doctor.job.submitdirs import dirs_above
from doctor.model import FixOption, change, run

# Slurm's filename patterns (man sbatch, "filename pattern"): %% and %N-padded letters.
_PATTERN = re.compile(r"%(\d*)([A-Za-z%])")
# The patterns whose value is known before the job is submitted (%x, %u) are expanded;
# the others (job id, array index, node, task, step) name a directory only the job knows.
_UNKNOWN = {"A": "the array's master job id", "a": "the array index", "J": "the job id",
            "j": "the job id", "N": "the node name", "n": "the node index",
            "s": "the step id", "t": "the task id", "b": "the array index modulo 10",
            "u": "the user name (USER is unset here)"}
# Shell files that may create a directory before they submit (the job script itself when
# it submits itself: `mkdir -p logs; sbatch "$0"`).
_SHELL_SUFFIXES = {".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".job"}


@check("slurm-output-dir-missing", title="Slurm's --output/--error directory does not "
       "exist when the job starts", severity="error", tags=("slurm", "logs"),
       needs=("sbatch",), timeout=20)
def slurm_output_dir_missing(job: Job) -> Iterator[Finding]:
    """The directory of the job's `--output`/`--error` (`-o`/`-e`) file is missing.

    Slurm opens the job's stdout and stderr files before the batch script runs, in a
    directory it does not create. A relative path is relative to the job's working
    directory: `--chdir`/`-D` if given, else the directory sbatch runs in. `doctor sbatch`
    knows it (the directory it runs in); `doctor run` takes the repo root and the job
    script's own directory (where scripts are usually submitted from) and reports an
    error only when the directory is missing from both. Slurm's filename patterns are
    expanded where their value is known before submission (`%x`: `--job-name`/`-J`, else
    the script's file name; `%u`: the user; `%%`); a directory named by the job id, node,
    task or array index (`runs/%j/`) is a warning, since no one can make it beforehand.
    Slurm does not expand `$VAR` or `~` in `#SBATCH` lines (the local Slurm 22.05 opened
    `<submit dir>/$HOME/x.out` for `--output=$HOME/x.out`): such a path is a warning.
    The filesystem is judged as it is, in this checkout: a `logs/` the user made by hand
    counts, although a fresh clone lacks it. A `mkdir -p DIR` in a shell script of the
    repo followed by the `sbatch` that submits this job (a script that submits itself
    with `sbatch "$0"`) creates it in time. An absolute path outside the repo (`/scratch/…`)
    is judged only when this machine is on the job's cluster.

    ## Why it matters
    Slurm cannot open the log file, so the batch script never starts: the job ends
    FAILED at once (`Reason=JobLaunchFailure`, exit code 0:53 on Slurm 22.05) after its
    queue wait, and there is no log to say why: the error is only in slurmd's log on
    the node. A `mkdir -p logs` inside the job script is too late: it would run after
    Slurm opened the file.

    ## How to fix
    Create the directory before submitting, in the directory you submit from
    (`mkdir -p logs`), or keep it in the repo (`logs/.gitkeep`, committed), or let
    the job script create it and submit itself (`if [ -z "$SLURM_JOB_ID" ]; then
    mkdir -p logs; sbatch "$0" "$@"; exit; fi`), or write the log to the submit
    directory (`#SBATCH --output=%x-%j.out`). `doctor fix` makes no edit: creating a
    directory is not an edit of a file.
    """
    if not job.scripts:
        raise Skip("no job script")
    for script in job.scripts:
        yield from _script_findings(job, script)


def _script_findings(job: Job, script: SbatchScript) -> Iterator[Finding]:
    seen: dict = {}   # directory as written → [directives]
    for key in ("output", "error"):
        d = script.get(key)
        if d is None or not d.value:
            continue
        directory = posixpath.dirname(d.value)
        if directory in ("", "."):   # the working directory itself
            continue
        seen.setdefault(directory, []).append(d)
    for directory, directives in seen.items():
        finding = _judge(job, script, directory, directives)
        if finding is not None:
            yield finding


def _expand(job: Job, script: SbatchScript, directory: str) -> tuple:
    """(the directory with %x/%u/%% expanded, [what the unknown patterns stand for])."""
    unknown: list = []
    if "\\" in directory:   # a backslash turns pattern expansion off (man sbatch)
        return directory.replace("\\", ""), unknown

    def one(m: re.Match) -> str:
        letter = m.group(2)
        if letter == "%":
            return "%"
        if letter == "x":
            name = script.get("job-name")
            return name.value if name and name.value else script.path.name
        if letter == "u" and job.login_env.get("USER"):
            return job.login_env["USER"]
        unknown.append(_UNKNOWN.get(letter, f"%{letter}"))
        return m.group(0)
    return _PATTERN.sub(one, directory), unknown


def _bases(job: Job, script: SbatchScript) -> Optional[list]:
    """[(the job's working directory, how it is known)], None when a --chdir cannot be
    read. A relative --chdir is the submit directory's."""
    if job.submitting:
        submits = [(Path(fs.cwd()), "where `doctor sbatch` runs")]
    else:
        submits = [(job.repo, "the repo root")]
        if script.path.parent != job.repo:
            submits.append((script.path.parent, "the job script's directory"))
        submits += [(d, "a directory above the job script")
                    for d in dirs_above(job.repo, script.path.parent)]
    chdir = script.get("chdir")
    if chdir is None or not chdir.value:
        return submits
    if "$" in chdir.value or chdir.value.startswith("~"):
        return None   # Slurm takes it literally; the directory it means is not the doctor's
    where = f"--chdir at {script.rel}:{chdir.line}" if chdir.line else "--chdir"
    if os.path.isabs(chdir.value):
        return [(Path(chdir.value), where)]
    return [(base / chdir.value, f"{how}, {where}") for base, how in submits]


def _inside(job: Job, path: Path) -> bool:
    try:
        Path(os.path.normpath(path)).relative_to(job.repo)
        return True
    except ValueError:
        return False


def _judge(job: Job, script: SbatchScript, written: str, directives: list) -> Optional[Finding]:
    expanded, unknown = _expand(job, script, written)
    from_line = [d for d in directives if not d.origin]   # #SBATCH lines: taken literally
    literal = ("$" in expanded or "`" in expanded or expanded.startswith("~")) and from_line
    if ("$" in expanded or "`" in expanded or expanded.startswith("~")) and not from_line:
        return None   # (the shell expanded it on the command line; an env value is odd)
    bases = _bases(job, script)
    if bases is None:
        return None
    if unknown:   # only the part before the first unknown pattern can be judged
        prefix = expanded.split("%", 1)[0].rstrip("/")
    else:
        prefix = expanded
    off_cluster = None
    missing, unknowable = [], []
    for base, how in bases:
        target = Path(os.path.normpath(base / expanded))
        judged = Path(os.path.normpath(base / prefix)) if prefix else Path(base)
        if not _inside(job, judged) and not job.submitting:
            off_cluster = off_cluster or not_this_machines(job, script) or ""
            if off_cluster:   # another cluster's path: this machine cannot say
                unknowable.append((base, how))
                continue
        if not unknown and fs.is_dir(target, job.unreadable):
            return None   # it exists where the job may be submitted from
        missing.append((base, how, target))
    if not missing:
        return None
    if not unknown and _made_before_submit(job, script, _wanted(script, expanded)):
        return None   # (a directory named by the job id cannot be made beforehand)
    d0 = directives[0]
    lines = ", ".join(script.where(d) for d in directives)
    too_late = None if unknown else _made_in_job(script, posixpath.normpath(expanded))
    late = (f"; the `mkdir` at {script.rel}:{too_late} runs too late, after Slurm opened the "
            "file" if too_late else "")
    looked = _looked(job, missing)
    if literal:
        why = (f"Slurm does not expand {'`~`' if expanded.startswith('~') else 'variables'} "
               f"in #SBATCH lines: it opens the directory {expanded}/ literally, which "
               f"{looked} (unless a template tool fills the line in before submission)")
        severity: Optional[Severity] = Severity.WARNING
    elif unknown:
        why = (f"the directory {written}/ is named by {', '.join(sorted(set(unknown)))}, "
               "known only once the job runs, so nothing can create it before Slurm opens "
               "the log")
        severity = Severity.WARNING
    else:
        why = f"{expanded}/ {looked}"
        severity = None if not unknowable else Severity.WARNING
    unsure = ""
    if unknowable:
        unsure = (" (unless the job is submitted from "
                  + " or ".join(how for _, how in unknowable)
                  + f", where the path leaves the repo: {off_cluster})")
    target_rel = _show(job, missing[0][2])
    submit_dir = _show(job, missing[0][0]) if missing[0][0] != job.repo else "the repo root"
    return Finding(
        f"{lines}: {why}{unsure}, and Slurm does not create directories: the job fails "
        f"before its script starts (JobLaunchFailure), with no log to say why{late}",
        location=Location(script.rel, d0.line or None),
        fix=f"Create {target_rel}/ before submitting (it must exist when Slurm starts the "
            "job), keep it in the repo with a committed .gitkeep, or write the log to the "
            "submit directory.",
        options=(() if unknown or literal else (FixOption(
            (run(f"before sbatch, in the submit directory ({submit_dir})",
                 f"mkdir -p {expanded}"),), "create the directory"),)) + (
            FixOption(tuple(change(script.rel, d.line or None, f"#SBATCH --{d.key}="
                                   f"{_flat(d.value, bool(literal))}") for d in directives),
                      "write the log where it can be opened"),),
        data={"option": f"--{d0.key}", "path": d0.value, "directory": written,
              "expanded": expanded, "unknown_patterns": sorted(set(unknown)) or None,
              "looked_in": [job.rel(t) for _, _, t in missing],
              "literal_variable": bool(literal)},
        severity=severity)


def _looked(job: Job, missing: list) -> str:
    """`does not exist in the repo root nor in slurm/ (the job script's directory)`: where
    the doctor looked, each a directory sbatch may be run from."""
    places = []
    for base, how, _ in missing:
        rel = job.rel(base)
        name = "the repo root" if base == job.repo else f"{rel}/" if rel != str(base) \
            else f"{base}/"
        places.append(name if how == name else f"{name} ({how})")
    if len(places) == 1:
        return f"does not exist under {places[0]}"
    return f"exists neither under {' nor under '.join(places)}, where sbatch is run from"


def _flat(value: str, literal: bool) -> str:
    """The log path in the submit directory: its directories folded into the file name
    (`runs/%x/%j/stdout` → `runs-%x-%j-stdout`), so that each job keeps its own file."""
    if literal:
        return posixpath.basename(value)
    return re.sub(r"^(\.\.?/)+", "", value).replace("/", "-")


def _show(job: Job, path: Path) -> str:
    return job.rel(path)


def _wanted(script: SbatchScript, expanded: str) -> str:
    """The directory as the submit directory sees it (through a relative --chdir)."""
    chdir = script.get("chdir")
    if chdir is not None and chdir.value and not os.path.isabs(expanded):
        expanded = posixpath.join(chdir.value, expanded)
    return posixpath.normpath(expanded)


def _mkdirs(text: str) -> list:
    """[(line, [directories made, normalised as written], line of a later sbatch or None,
    argv of that sbatch)] for each `mkdir` of a shell text."""
    out: list = []
    made: list = []
    for line, words in split_commands(text):
        argv = command_argv([unquote(w) for w in words])
        if not argv:
            continue
        name = posixpath.basename(argv[0])
        if name == "mkdir":
            made.append((line, [posixpath.normpath(a) for a in argv[1:]
                                if not a.startswith("-") and "$" not in a]))
        elif name == "sbatch":
            out += [(m_line, dirs, line, argv) for m_line, dirs in made]
    return out + [(m_line, dirs, None, None) for m_line, dirs in made]


def _covers(made: list, target: str) -> bool:
    """`mkdir -p logs/a` makes logs/ too (without -p it fails unless logs/ exists: the
    doctor does not tell them apart)."""
    return any(d == target or d.startswith(target.rstrip("/") + "/") for d in made)


def _submits(argv: list, script: SbatchScript, own: bool) -> bool:
    """Whether `sbatch ...` submits this job script ("$0" when it is the script itself)."""
    for a in argv[1:]:
        if own and a in ("$0", "${0}"):
            return True
        if not a.startswith("-") and posixpath.basename(a) == script.path.name:
            return True
    return False


def _shell_files(job: Job, script: SbatchScript) -> list:
    files = [script.path] + [s.path for s in job.scripts if s is not script]
    return files + [p for p in job.repo_files(_SHELL_SUFFIXES) if p not in files]


def _made_before_submit(job: Job, script: SbatchScript, target: str) -> Optional[str]:
    """file:line of a `mkdir` of the directory followed by the `sbatch` that submits this
    job, in a shell file of the repo (both relative to where that file runs), else None."""
    for path in _shell_files(job, script):
        raw = fs.read_bytes(path, job.unreadable, 1 << 20)
        if raw is None or b"mkdir" not in raw or b"sbatch" not in raw:
            continue
        for m_line, dirs, s_line, argv in _mkdirs(raw.decode("utf-8", "replace")):
            if s_line is not None and _covers(dirs, target) and \
                    _submits(argv, script, path == script.path):
                return f"{job.rel(path)}:{m_line}"
    return None


def _made_in_job(script: SbatchScript, target: str) -> Optional[int]:
    """The line of a `mkdir` in the job script itself that makes the directory: too late."""
    for m_line, dirs, s_line, _ in _mkdirs(script.text):
        if s_line is None and _covers(dirs, target):
            return m_line
    return None
