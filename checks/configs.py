"""A config file the job names on its command line does not exist."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.context import Job
from doctor.job.made import script_writes, producer
from doctor.job.stepconfigs import missing_of, step_configs


@check("config-not-found", title="The job names a config file that does not exist",
       severity="error", tags=("config", "sbatch"), needs=("sbatch", "configs"), timeout=30)
def config_not_found(job: Job) -> Iterator[Finding]:
    """A step of the job names a config (`--config X`, `-c X`, a positional `*.yaml`,
    Hydra's `--config-name` with `--config-path`, or `@hydra.main` in its entry module)
    that is in none of the places the program would look for it.

    The doctor reads every step of each job script (each one runs; Hydra's configs are
    read for the training step, doctor/job/steps.py) and looks the file up the way the
    program does: relative to the step's working directory (the submit directory,
    `--chdir` or `cd`), Hydra's `--config-path` relative to the entry script. A file
    that an earlier command of the job writes (the destination of `cp`, `mv`, `install`,
    `rsync`, a `>` or `tee` target, wget -O; never a source, a comment or text later on
    the line) is not reported, nor a `--config` value that is not a file name (a preset
    such as `llama3_debugmodel`). A file the job makes otherwise is a warning that names
    the producer (doctor/job/made.py): an earlier step of the script that writes into
    its directory, the job this one waits to succeed (`--dependency=afterok:<id>`,
    assumed to write it), a repo script outside the job's own code that writes into its
    directory, or a run, when the file is under an output or checkpoint directory that
    git ignores. A path outside the repo, or a relative one when the job `cd`s outside
    the repo, is only judged where its directory is visible (not in the CI gate, not on
    a machine without the cluster's /scratch), and then as a warning.

    ## Why it matters
    The program stops at its first line, `FileNotFoundError` or Hydra's `Cannot find
    primary config`, after the whole queue wait, on every rank. A config renamed in a
    refactor, or a path written relative to another directory, is the usual cause.

    ## How to fix
    Point the script at the config's real path (relative to the directory the job
    runs in, or absolute), or add the missing file to the repo.
    """
    if not job.scripts:
        raise Skip("no job script: nothing names a config")
    named = 0
    for script in job.scripts:
        sc = step_configs(job, script)
        named += len(sc.configs) + len(sc.missing)
        train = job.step(script)
        # every step runs: a config another step names must exist too
        missing = [(train, *m) for m in sc.missing] + [
            (s, *m) for s in job.steps(script) if s is not train and s.is_training
            for m in missing_of(job, s)]
        named += len(missing) - len(sc.missing)
        for step, written, rel, line in missing:
            if not written.endswith(CONFIG_SUFFIXES) or script_writes(step, written):
                continue   # `--config llama3_debugmodel` names a preset, not a file
            outside = os.path.isabs(written) and not written.startswith(str(job.repo)) \
                or _runs_outside(job, step)
            base = written if os.path.isabs(written) else os.path.join(step.cwd or "", written)
            if outside and (job.static or not os.path.isdir(os.path.dirname(base))):
                continue   # its directory is not visible here (the cluster's /scratch)
            path = Path(os.path.normpath(base if os.path.isabs(base) else job.repo / base))
            made = producer(job, script, step, written, path)
            yield Finding(
                f"{rel}:{line} runs {step.entry} with the config {written}, which does not "
                f"exist (looked in {_where(job, step)})" + (
                    f"; {made} makes it before this step, if that goes well"
                    if made else ""),
                location=Location(rel, line),
                fix="Point the script at the config's real path, or add the file." if not made
                else "Check that the producer writes it at this path before the job runs.",
                data={"config": written, "script": script.rel, "entry": step.entry,
                      "producer": made},
                severity=Severity.WARNING if outside or made else None)
    if not named:
        raise Skip("no job script names a config on its command line")


CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".conf")


def _runs_outside(job: Job, step) -> bool:
    """The job `cd`s to a directory outside the repo (a clone on /scratch): a relative
    config is looked up there, which the doctor cannot see from here."""
    cwd = step.cwd
    return bool(cwd) and os.path.isabs(cwd) and not (cwd + "/").startswith(str(job.repo) + "/")


def _where(job: Job, step) -> str:
    cwd = step.cwd if step.cwd and os.path.isabs(step.cwd) else "the submit directory"
    return f"{job.rel(cwd) if cwd != 'the submit directory' else cwd}, the entry's " \
           "directory and the repo"
