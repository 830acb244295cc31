"""Job scripts with Windows (CRLF) line breaks."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, Optional

from doctor import Finding, Location, Skip, check
from doctor.job.context import Job


def first_crlf_line(path: Path) -> Optional[int]:
    """The 1-based line of the first CRLF line break, or None."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    at = raw.find(b"\r\n")
    return None if at < 0 else raw.count(b"\n", 0, at) + 1


SHELL_SUFFIXES = {".sh", ".bash", ".sbatch", ".slurm"}


@check("script-dos-line-breaks", title="A job or shell script has Windows (CRLF) line breaks",
       severity="error", tags=("slurm", "scripts"), needs=("sbatch", "repo"))
def script_dos_line_breaks(job: Job) -> Iterator[Finding]:
    """A job script, or a shell script of the repo, has CRLF line breaks.

    Reads the job scripts, the shell scripts they run (`bash x.sh`,
    `source x.sh`, also inside a container command) and the repo's other
    shell scripts (`*.sh`, `*.bash`, `*.sbatch`, `*.slurm`: deploy scripts).

    ## Why it matters
    sbatch refuses a job script with CRLF line breaks ("Batch script
    contains DOS line breaks (\\r\\n) instead of expected UNIX line breaks")
    — they come from a Windows checkout or an editor's setting. Worse, a
    shell script the job runs is executed with every line ending in a
    carriage return: `export X=1` sets X to "1\\r", paths get a stray "\\r"
    and "No such file or directory" appears in the middle of the job
    (measured on Slurm 22.05 and bash 5.2). Other scripts fail with
    `$'\\r': command not found`.

    ## How to fix
    Convert the file to UNIX line breaks (`sed -i 's/\\r$//' FILE` or
    `dos2unix FILE`), and keep git from converting it back on Windows
    checkouts with `*.sh text eol=lf` (and `*.sbatch`, `*.slurm`) in
    .gitattributes.
    """
    ran_by: dict = {}
    for script in job.scripts:
        ran_by.setdefault(script.path, None)
        for step in job.steps(script):   # the scripts its steps run (doctor/job/steps.py)
            for inner in step.scripts:
                ran_by.setdefault(inner.path, script.rel)
    for path in job.repo_files(SHELL_SUFFIXES):
        ran_by.setdefault(path, None)
    if not ran_by:
        raise Skip("no job script or shell script in the repo")
    jobs = {s.path for s in job.scripts}
    for path, runner in ran_by.items():
        line = first_crlf_line(Path(path))
        if line is None:
            continue
        rel = job.rel(path)
        if path in jobs:
            what = "sbatch refuses it: \"Batch script contains DOS line breaks\""
        elif runner:
            what = (f"run by {runner}: bash keeps the \\r, so every value and path it sets "
                    "ends in a carriage return")
        else:
            what = "bash fails on it ($'\\r': command not found) or keeps a \\r in every value"
        yield Finding(
            f"{rel} has Windows (CRLF) line breaks from line {line} on; {what}",
            location=Location(rel, line),
            fix="Convert it to UNIX line breaks, and pin them in .gitattributes so a "
                "Windows checkout does not bring the CRLFs back.",
            commands=(f"sed -i 's/\\r$//' {rel}",
                      "printf '*.sh text eol=lf\\n*.sbatch text eol=lf\\n"
                      "*.slurm text eol=lf\\n' >> .gitattributes"),
            data={"path": rel, "line": line, "run_by": runner})
