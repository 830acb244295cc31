"""The job's step runs a Python file that does not exist."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, fs
from doctor.job.context import Job
from doctor.job.launch import srun_container
from doctor.job.made import producer, script_writes
from doctor.job.steps import SPOOL_DIR
from doctor.job.submitdirs import dirs_above
from doctor.job.nearest import in_repo, nearest_file, word_edit
from doctor.model import FixOption, edit_steps

CHECK_ID = "entry-not-found"


@check(CHECK_ID, title="The job runs a Python file that does not exist",
       severity="error", tags=("sbatch", "python"), needs=("sbatch",), timeout=30)
def entry_not_found(job: Job) -> Iterator[Finding]:
    """A step of a job script runs `python FILE.py` (under srun, torchrun, a wrapper
    script whose launcher runs `python3 "$@"`, ...) and FILE.py is not where Python
    will look for it: relative to the step's working directory. Or it runs `python -m
    pkg.mod`, pkg is a package of the repo (in that directory, or under src/), and
    pkg has no mod.

    The doctor reads every step of each job script as the other checks do
    (doctor/job/steps.py: `cd`, `srun --chdir`, wrappers, inner scripts) and looks
    the entry up the way the job's Python does, with the same resolver the import
    and config checks use: relative to the step's working directory; where the job
    does not `cd`, to the submit directory, which the doctor takes to be the repo
    root or the job script's own directory (scripts are submitted from either). The
    entry is reported only when it is in none of them (a script found only under src/
    is not found: python does not look there for a path). It is not judged (nothing is
    said) where a link is unknown: a path under a variable the doctor cannot read, a
    `cd` to such a directory, an absolute path outside the repo (the cluster's
    checkout), a working directory or an entry directory that is not in this checkout
    (a `git clone`, a download or another checkout makes it), or a step whose file may
    be the container image's: pyxis (`--container-image`, it starts in the image's
    directory), or `apptainer exec|run` with `--pwd`, `--contain(all)` or `--no-mount`
    (without them Apptainer binds the host's working directory and starts there, so a
    relative entry is the repo's file, and judged). A file the job writes before the
    step (`cp`, `wget -O`, a `cat > x.py <<EOF` here-document) is not reported; one
    another producer may make (an earlier step, the job this one waits for, a repo
    script that writes there, a command that names it) is a warning naming it.

    The batch script's own directory (`python "$(dirname "$0")/x.py"`, `${BASH_SOURCE%/*}`,
    `SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`) is slurmd's spool
    directory: sbatch copies the script there and runs the copy, and nothing else is
    there. That entry is a warning (the script might also be run with `bash`, where `$0`
    is its own path); the fix is `${SLURM_SUBMIT_DIR}/<path>`. In a script run by its
    path (`srun bash scripts/x.sh`), `$0` is that path, and the entry is judged from it.

    ## Why it matters
    `python: can't open file '…/train.py': [Errno 2] No such file or directory`,
    on every rank, after the whole queue wait. A script renamed or moved in a
    refactor, a job script copied from another directory, or a stage of a pipeline
    run under an old name are the usual causes.

    ## How to fix
    Point the step at the file's real path, relative to the directory the job runs
    in (the message names the repo file with that name, when there is one), or add
    the missing file. `doctor fix --unsafe` rewrites the entry on the step's line
    to the file the message names.
    """
    if not job.scripts:
        raise Skip("no job script: nothing runs a Python file")
    if not job.repo_files({".py"}, whole=True):
        # a repo of job scripts only: the code they run lives in another checkout
        raise Skip("the repo holds no Python file: the job's code is in another checkout")
    judged = 0
    for script in job.scripts:
        seen: set = set()
        for step in job.steps(script):
            if step.entry is None:
                continue
            key = (step.script.rel, step.line, step.entry, step.cwd)
            if key in seen:
                continue
            seen.add(key)
            judged += 1
            finding = (_judge_module if step.entry_is_module else _judge)(job, script, step)
            if finding is not None:
                yield finding
    if not judged:
        raise Skip("no job script runs a Python file")


def _judge(job: Job, script, step) -> Optional[Finding]:
    entry = step.entry
    if entry.startswith(SPOOL_DIR + "/") and entry.endswith(".py"):
        return _from_spool(job, step, entry[len(SPOOL_DIR) + 1:])
    if not entry.endswith(".py") or re.search(r"[$`*?\[{}<>%~]", entry):
        return None   # unresolved (`$DIR/x.py`, `~`, a `{{ template }}`), or not a script
    if step.cwd_unknown:
        return None   # under a `cd` the doctor cannot read
    found = job.entry_file(step)
    bases = _bases(job, step)
    if found is not None and (bases is None or any(
            Path(os.path.normpath(b / entry)) == Path(os.path.normpath(found))
            for b, _ in bases)):
        return None   # found where the job runs (the shared resolver also looks in src/,
        # where python does not look for a script path: that one is judged below)
    if srun_container(step, script) is not None or not _cwd_bound(step):
        return None   # the image's own file, or a bind the doctor does not follow
    if bases is None:
        return None   # the working directory is outside the repo, or not in this checkout
    # (the file Python opens, the directory it runs in, how the doctor knows that)
    inside = [(Path(os.path.normpath(b / entry)), b, how) for b, how in bases
              if in_repo(job, Path(os.path.normpath(b / entry)))]
    if not inside:
        return None   # outside the repo from every directory it may run in
    if not any(fs.is_dir(p.parent, job.unreadable) for p, _, _ in inside):
        return None   # its directory is made by the job or lies in another checkout
    if script_writes(step, entry):
        return None   # `cp`, `wget -O`, `cat > x.py <<EOF` before the step
    path, base, how = inside[0]
    made = producer(job, script, step, entry, path) or _named_before(job, script, step, entry)
    guess = nearest_file(job, entry, path)
    suggest = os.path.relpath(job.repo / guess, base) if guess else None
    looked = ", ".join(f"{job.rel(p)} ({h})" for p, _, h in inside)
    msg = f"{step.where} runs {entry}, which does not exist (looked for {looked})"
    if made:
        msg += f"; {made} may make it before this step"
    if guess:
        msg += f"; the repo has {guess}"
    fix = (f"Run `{suggest}` (the repo's file of that name, relative to "
           f"{how.replace('from ', '')}), or add the missing file." if suggest else
           "Point the step at the script's real path (relative to the directory the job "
           "runs in), or add the missing file.")
    if made:
        fix = "Check that the producer writes it at this path before the step runs."
    edit = word_edit(job, step.script.rel, step.line, entry, suggest,
                     f"run {suggest} instead of {entry}") if suggest and not made else None
    return Finding(
        msg, location=Location(step.script.rel, step.line), fix=fix,
        options=(FixOption(edit_steps((edit,))),) if edit else (),
        edits=(edit,) if edit else (),
        data={"entry": entry, "script": step.script.rel,
              "workdirs": [job.rel(b) for _, b, _ in inside],
              "looked": [job.rel(p) for p, _, _ in inside], "suggestion": guess,
              "producer": made or None},
        severity=Severity.WARNING if made else None)


def _from_spool(job: Job, step, name: str) -> Finding:
    """`python $(dirname "$0")/x.py` in a batch script: sbatch runs a copy of the script
    from slurmd's spool directory, which holds nothing else. A warning: the script might
    also be run by `bash`, where $0 is its own path."""
    batch = step.batch or step.script
    here = batch.path.parent / name
    near = job.rel(here) if fs.is_file(here, job.unreadable) else None
    fix_path = "${SLURM_SUBMIT_DIR}/" + (near if near else name)
    msg = (f"{step.where} runs {name} from the batch script's own directory (`$0`, "
           f"`BASH_SOURCE`), which under sbatch is {SPOOL_DIR}/{name}: Slurm "
           f"runs a copy of {batch.rel} from slurmd's spool directory (SlurmdSpoolDir), so "
           "`$0`/`${BASH_SOURCE[0]}` name that copy, not the repo's script, and nothing "
           f"else is there; python fails with No such file or directory"
           + (f" (the repo's file is {near})" if near else ""))
    return Finding(
        msg, location=Location(step.script.rel, step.line),
        fix=f"Run `{fix_path}` (sbatch's submit directory, the repo root when the job is "
            "submitted from there), or a path relative to the job's working directory.",
        data={"entry": f"{SPOOL_DIR}/{name}", "script": step.script.rel, "suggestion": near,
              "spool": True},
        severity=Severity.WARNING)


# Apptainer/Singularity options after which the program does not start in the host's
# working directory, bound from the host (their default): it starts elsewhere, or in
# a directory the image holds.
_OWN_CWD = {"--pwd", "-C", "--containall", "-c", "--contain", "--no-mount"}


def _cwd_bound(step) -> bool:
    """Whether the step, if in a container, runs in the host's working directory as it
    is: `apptainer exec|run IMAGE python x.py` binds $PWD and starts there (Apptainer's
    default), so a relative entry is the repo's file. A pyxis step starts in the image's
    own directory (the caller rules it out)."""
    box = step.container
    return box is None or not any(w.split("=", 1)[0] in _OWN_CWD for w in box.argv)


def _judge_module(job: Job, script, step) -> Optional[Finding]:
    """`python -m pkg.sub.mod` where pkg is a package of the repo (a directory with
    `__init__.py` in the directory the job runs in, or under src/) and a part of the
    dotted name is not in it: "No module named pkg.sub.mod". A top-level name the repo
    does not have (torch.distributed.run, an installed tool) is not judged, nor a
    package whose `__init__.py` extends its `__path__` (it may find the part elsewhere)."""
    entry = step.entry
    parts = entry.split(".")
    if not all(p.isidentifier() for p in parts) or step.cwd_unknown \
            or job.entry_file(step) is not None:
        return None
    if srun_container(step, script) is not None or not _cwd_bound(step):
        return None
    bases = _bases(job, step)
    if bases is None:
        return None
    roots = [(b, how) for b, how in bases] + [(job.repo / "src", "src/, where an editable "
                                               "install puts the repo's packages")]
    root = next(((b, how) for b, how in roots
                 if fs.is_file(b / parts[0] / "__init__.py", job.unreadable)), None)
    if root is None:
        return None   # not a package of the repo: an installed module
    path = root[0] / parts[0]
    for k, part in enumerate(parts[1:], 1):
        init = fs.read_text(path / "__init__.py", job.unreadable) or ""
        if "__path__" in init or "extend_path" in init:
            return None   # the package finds its parts elsewhere too
        if fs.is_dir(path / part, job.unreadable):
            path = path / part
            continue
        if fs.is_file(path / f"{part}.py", job.unreadable):
            return None   # a module with parts below it: another check's question
        missing = ".".join(parts[:k + 1])
        guess = nearest_file(job, f"{parts[-1]}.py", path / f"{parts[-1]}.py")
        module = _module_of(job, root[0], guess) if guess else None
        edit = word_edit(job, step.script.rel, step.line, entry, module,
                         f"run -m {module} instead of {entry}") if module else None
        return Finding(
            f"{step.where} runs `python -m {entry}`, and there is no module {missing}: "
            f"{job.rel(path)}/ has no {part}.py and no {part}/ (the package from "
            f"{root[1].replace('from ', '')})"
            + (f"; the repo has {guess}" if guess else ""),
            location=Location(step.script.rel, step.line),
            fix=(f"Run `python -m {module}`, or add the missing module." if module else
                 f"Point the step at the module's real name, or add {job.rel(path)}/"
                 f"{part}.py."),
            options=(FixOption(edit_steps((edit,))),) if edit else (),
            edits=(edit,) if edit else (),
            data={"entry": entry, "module": missing, "script": step.script.rel,
                  "workdirs": [job.rel(root[0])], "looked": [job.rel(path / part)],
                  "suggestion": guess, "producer": None},
            # under src/, python finds the package through an install, which may be an
            # older copy that still has the module: the install is the unknown link
            severity=Severity.WARNING if root[0] == job.repo / "src" and not any(
                b == root[0] for b, _ in bases) else None)
    return None


def _module_of(job: Job, root: Path, rel: str) -> Optional[str]:
    """The dotted name of repo file `rel` from the package root `root`, if it is under it."""
    path = job.repo / rel
    try:
        inner = path.relative_to(root).with_suffix("")
    except ValueError:
        return None
    return ".".join(inner.parts) if all(p.isidentifier() for p in inner.parts) else None


def _bases(job: Job, step) -> Optional[list]:
    """[(directory, how it was found)] where the step may run: its `cd`/`--chdir`, else
    the submit directory (the repo root, or the job script's own directory); None when
    that directory is outside the repo or not in this checkout."""
    cwd = step.cwd
    if cwd:
        if os.path.isabs(cwd):
            d = [(Path(cwd), "its working directory")]
        else:   # a relative `cd` moves from the submit directory
            d = [(job.repo / cwd, "the submit directory's " + cwd)]
            if step.script.path.parent != job.repo:
                d.append((step.script.path.parent / cwd, "the job script's directory's " + cwd))
            d += [(a / cwd, f"{job.rel(a)}/{cwd} (a directory above the job script)")
                  for a in dirs_above(job.repo, step.script.path.parent)]
        d = [(Path(os.path.normpath(p)), how) for p, how in d]
        d = [(p, how) for p, how in d if in_repo(job, p) and fs.is_dir(p, job.unreadable)]
        return d or None
    out = [(job.repo, "from the repo root")]
    if step.script.path.parent != job.repo:
        out.append((step.script.path.parent, "from the job script's directory"))
    out += [(d, f"from {job.rel(d)}/, a directory above the job script")
            for d in dirs_above(job.repo, step.script.path.parent)]
    return out


def _named_before(job: Job, script, step, entry: str) -> Optional[str]:
    """An earlier command of the job's scripts that names the file (`wget URL/x.py`,
    `git checkout … x.py`, `python gen.py --out x.py`): it may make it. A line that
    runs the same entry (the other branch of an `if`) makes nothing."""
    name = os.path.basename(entry)
    word = re.compile(r"(?<![\w.-])" + re.escape(name) + r"(?![\w.-])")
    runs = {(s.script.rel, s.line) for s in job.steps(script) if s.entry == entry}
    for s in step.scripts or (step.script,):
        for n, text in enumerate(s.text.splitlines(), 1):
            if s is step.script and n >= step.line:
                break
            if (s.rel, n) in runs:
                continue
            code = text.split("#", 1)[0] if not text.lstrip().startswith("#SBATCH") else ""
            if word.search(code) and not re.match(r"\s*(echo|printf)\b", code):
                return f"the command at {s.rel}:{n} (`{code.strip()[:60]}`)"
    return None
