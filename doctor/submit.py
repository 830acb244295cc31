"""`doctor sbatch`: submit a job script with the real `sbatch`, after the checks.

A forced submission (checks failed) is held, the report is written as `#`
comment lines at the top of the job's output file (Slurm's StdOut path, with
--open-mode=append so the job's own output follows it), then released.
"""
from __future__ import annotations

import re
import shutil
from typing import Optional

from doctor.errors import InputError
from doctor.proc import run_cmd

SBATCH_TIMEOUT_S = 60


def _last_line(text: str) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[-1] if lines else "no output"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise InputError(f"`{name}` not found on PATH: run `doctor sbatch` on a Slurm login node")
    return path


def sbatch(script: str, sbatch_args: list, script_args: list, hold: bool = False) -> str:
    """Run the real sbatch; the job id. A refusal by sbatch is an input error (exit 2)."""
    argv = [_tool("sbatch"), "--parsable", *(["--hold", "--open-mode=append"] if hold else []),
            *sbatch_args, script, *script_args]
    res = run_cmd(argv, timeout=SBATCH_TIMEOUT_S)
    if res.returncode != 0:
        why = "timed out" if res.timed_out else _last_line(res.stderr or res.stdout)
        raise InputError(f"sbatch refused the job: {why}")
    job_id = _last_line(res.stdout).split(";")[0].strip()
    if not job_id.isdigit() and not re.match(r"^\d+(_\d+)?$", job_id):
        raise InputError(f"sbatch printed no job id: {res.stdout.strip()!r}")
    return job_id


def job_stdout(job_id: str) -> Optional[str]:
    """The job's output file as Slurm resolved it (patterns expanded), or None."""
    res = run_cmd([_tool("scontrol"), "show", "job", "-o", job_id], timeout=SBATCH_TIMEOUT_S)
    m = re.search(r"(?:^|\s)StdOut=(\S+)", res.stdout or "")
    return m.group(1) if res.returncode == 0 and m else None


def release(job_id: str) -> None:
    res = run_cmd([_tool("scontrol"), "release", job_id], timeout=SBATCH_TIMEOUT_S)
    if res.returncode != 0:
        raise InputError(f"job {job_id} is held and `scontrol release {job_id}` failed: "
                         f"{_last_line(res.stderr)}")


def as_comment(text: str) -> str:
    return "".join(f"# {line}".rstrip() + "\n" for line in text.splitlines())


def submit_forced(script: str, sbatch_args: list, script_args: list,
                  report_text: str) -> tuple:
    """(job id, log path or None): held, report written into its log, released."""
    job_id = sbatch(script, sbatch_args, script_args, hold=True)
    log = None
    try:
        path = job_stdout(job_id)
        if path:
            header = (f"doctor: job {job_id} was submitted with `doctor sbatch --force` although "
                      "the pre-flight checks did not pass:\n\n" + report_text)
            try:
                with open(path, "w") as fh:
                    fh.write(as_comment(header) + "\n")
                log = path
            except OSError:
                log = None
    finally:
        release(job_id)
    return job_id, log
