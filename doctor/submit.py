"""`doctor sbatch`: submit a job script with the real `sbatch`, after the checks.

A forced submission (checks failed) is held, the report is appended as one block of `#`
comment lines (the findings and the summary, then the JSON report on one line between
two marker lines) to the job's output file (Slurm's StdOut path, with --open-mode=append
so the job's own output follows it), then released.

When sbatch may have submitted the job without saying so plainly (it printed a job
id and failed, it hung and was stopped, it was killed, or it lost the controller's
answer), the outcome is `OutcomeUnknown`, never a refusal: a refusal invites a
second submission of a job that may already be queued.
"""
from __future__ import annotations

import re
import signal
from typing import Optional

from doctor.errors import InputError
from doctor.logblock import as_json_block
from doctor.outputs import append_output
from doctor.proc import run_cmd, tool_path

SBATCH_TIMEOUT_S = 60.0
# `--parsable` prints `id` or `id;cluster`; without it (a site wrapper) `Submitted batch job id`
_JOB_ID = re.compile(r"^(?:Submitted batch job )?(\d+(?:_\d+)?)(?:;\S+)?$")
# errors after which the controller may have queued the job: its answer was lost
_MAYBE_QUEUED = re.compile(r"timed out|time out|timeout|connection reset|broken pipe", re.I)


class OutcomeUnknown(Exception):
    """sbatch may have submitted the job. `job_id`: the id it printed, if any."""

    def __init__(self, why: str, job_id: Optional[str] = None):
        super().__init__(why)
        self.job_id = job_id


def _last_line(text: str) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[-1] if lines else "no output"


def _tool(name: str) -> str:
    path = tool_path(name)
    if path is None:
        raise InputError(f"`{name}` not found on PATH: run `doctor sbatch` on a Slurm login node")
    return path


def sbatch(script: str, sbatch_args: list, script_args: list, hold: bool = False,
           timeout: float = SBATCH_TIMEOUT_S) -> tuple:
    """Run the real sbatch: (job id, what else it printed); (None, ...) for `--test-only`,
    which submits nothing. InputError when sbatch refused the job (exit 2); OutcomeUnknown
    when it may have submitted it."""
    argv = [_tool("sbatch"), "--parsable", *(["--hold", "--open-mode=append"] if hold else []),
            *sbatch_args, script, *script_args]
    try:
        res = run_cmd(argv, timeout=timeout)
    except KeyboardInterrupt:
        raise OutcomeUnknown("interrupted while sbatch was submitting the job") from None
    lines = [x.strip() for x in (res.stdout or "").splitlines() if x.strip()]
    ids = [m.group(1) for m in map(_JOB_ID.match, lines) if m]
    job_id = ids[0] if ids else None
    said = "\n".join([x for x in lines if not _JOB_ID.match(x)]
                     + [x for x in (res.stderr or "").splitlines() if x.strip()])
    if res.returncode is None and not res.timed_out:  # it never started
        raise InputError(f"sbatch did not start: {_last_line(res.stderr)}")
    if res.timed_out:
        raise OutcomeUnknown(f"sbatch did not finish within {timeout:g} s and was stopped",
                             job_id)
    if res.returncode == 0 and job_id:
        return job_id, said  # a notice after the id changes nothing
    if res.returncode == 0 and "--test-only" in sbatch_args:
        return None, said  # "Job N to start at ...": sbatch's estimate, nothing submitted
    if res.returncode == 0:
        raise OutcomeUnknown(f"sbatch exited 0 but printed no job id ({_last_line(said)})")
    if res.returncode is not None and res.returncode < 0:
        raise OutcomeUnknown(f"sbatch was killed by {_signal_name(-res.returncode)}", job_id)
    if job_id:
        raise OutcomeUnknown(f"sbatch printed job id {job_id} but exited with "
                             f"{res.returncode}: {_last_line(said)}", job_id)
    if _MAYBE_QUEUED.search(said):
        raise OutcomeUnknown(f"sbatch failed without an answer from the controller: "
                             f"{_last_line(said)}")
    raise InputError(f"sbatch refused the job: {_last_line(said)}")


def _signal_name(num: int) -> str:
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def job_stdout(job_id: str) -> Optional[str]:
    """The job's output file as Slurm resolved it (patterns expanded), or None."""
    res = run_cmd([_tool("scontrol"), "show", "job", "-o", job_id], timeout=SBATCH_TIMEOUT_S)
    # `scontrol -o` does not quote a value: a path with spaces runs up to the next Key=
    m = re.search(r"(?:^|\s)StdOut=(\S.*?)(?=\s+[A-Z][A-Za-z]*=|\s*$)", res.stdout or "")
    return m.group(1) if res.returncode == 0 and m else None


def release(job_id: str) -> None:
    """OutcomeUnknown when it fails: the job is queued (held), never a refusal."""
    res = run_cmd([_tool("scontrol"), "release", job_id], timeout=SBATCH_TIMEOUT_S)
    if res.returncode != 0:
        raise OutcomeUnknown(f"job {job_id} was submitted held and `scontrol release {job_id}` "
                             f"failed: {_last_line(res.stderr)}", job_id)


def as_comment(text: str) -> str:
    return "".join(f"# {line}".rstrip() + "\n" for line in text.splitlines())


def submit_forced(script: str, sbatch_args: list, script_args: list, report_text: str,
                  timeout: float = SBATCH_TIMEOUT_S, *, json_text: str = "") -> tuple:
    """(job id, what sbatch said, log path or None): submitted held, the report appended
    to its log (never truncating it: a log kept with --open-mode=append stays), released.
    The report is one block of `#` lines: a header, `report_text` (the findings and the
    summary, table_format's compact form), then the JSON report on one line between its
    markers (as_json_block), which `doctor show LOG` renders in full."""
    job_id, said = sbatch(script, sbatch_args, script_args, hold=True, timeout=timeout)
    log = None
    try:
        path = job_stdout(job_id)
        if path:
            header = (f"doctor: job {job_id} was submitted with `doctor sbatch --force` although "
                      f"the pre-flight checks did not pass (`doctor show {path}` shows every "
                      "check and the fixes):\n" + report_text)
            try:
                append_output(path, as_comment(header)
                              + (as_json_block(json_text) if json_text else "") + "\n")
                log = path
            except InputError:
                log = None
    finally:
        release(job_id)
    return job_id, said, log
