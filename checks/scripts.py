"""Job scripts that sbatch or bash misread: Windows (CRLF) line breaks, UTF-16 text."""
from __future__ import annotations

from pathlib import Path
from shlex import quote
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, edits, fs
from doctor.errors import wide_encoding
from doctor.job.context import Job
from doctor.model import FixOption, add, run


def first_crlf_line(path: Path) -> Optional[int]:
    """The 1-based line of the first CRLF line break, or None."""
    raw = fs.read_bytes(path)  # an input: no report goes over it
    if raw is None:
        return None
    at = raw.find(b"\r\n")
    return None if at < 0 else raw.count(b"\n", 0, at) + 1


SHELL_SUFFIXES = {".sh", ".bash", ".sbatch", ".slurm"}


def shell_scripts(job: Job) -> dict:
    """path → the job script that runs it (None: a job script, or a repo shell script
    no job runs): the job scripts, the scripts their steps run (`bash x.sh`, `source
    x.sh`, also inside a container command) and the repo's other shell scripts."""
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
    return ran_by


@check("script-dos-line-breaks", title="A job or shell script has Windows (CRLF) line breaks",
       severity="error", tags=("slurm", "scripts"), needs=("sbatch", "repo"))
def script_dos_line_breaks(job: Job) -> Iterator[Finding]:
    """A job script, or a shell script of the repo, has CRLF line breaks.

    Reads the job scripts, the shell scripts they run (`bash x.sh`,
    `source x.sh`, also inside a container command) and the repo's other
    shell scripts (`*.sh`, `*.bash`, `*.sbatch`, `*.slurm`: deploy scripts).
    A script no job script runs is a warning: it does not stop the job.

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
    ran_by = shell_scripts(job)
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
        else:   # a file no job step runs is never an error (a deploy script: warning)
            what = ("bash fails on it ($'\\r': command not found) or keeps a \\r in every "
                    "value; no job script runs it")
        yield Finding(
            f"{rel} has Windows (CRLF) line breaks from line {line} on; {what}",
            location=Location(rel, line),
            fix="Convert it to UNIX line breaks, and pin them in .gitattributes so a "
                "Windows checkout does not bring the CRLFs back.",
            commands=(f"sed -i 's/\\r$//' {rel}",
                      "printf '*.sh text eol=lf\\n*.sbatch text eol=lf\\n"
                      "*.slurm text eol=lf\\n' >> .gitattributes"),
            options=(FixOption((run("in the repo", f"sed -i 's/\\r$//' {rel}"),
                                add(".gitattributes", "*.sh text eol=lf", "*.sbatch text eol=lf",
                                    "*.slurm text eol=lf"))),),
            data={"path": rel, "line": line, "run_by": runner},
            edits=_to_lf(job, rel),
            severity=None if runner or path in jobs else Severity.WARNING)


def _to_lf(job: Job, rel: str) -> tuple:
    """Every CRLF line break becomes LF (the same as the sed above); a lone \r is kept."""
    lines = edits.read_lines(job, rel)
    if lines is None:
        return ()
    lf = "".join(line[:-2] + "\n" if line.endswith("\r\n") else line for line in lines)
    edit = edits.replace_whole(job, rel, lf, "CRLF line breaks to LF")
    return (edit,) if edit else ()


# codec → (what the finding calls it, iconv's name for it)
ENCODINGS = {"utf-8-sig": ("UTF-8 text with a byte-order mark", None),
             "utf-16": ("UTF-16 text (with a byte-order mark)", "UTF-16"),
             "utf-16-le": ("UTF-16LE text", "UTF-16LE"), "utf-16-be": ("UTF-16BE text", "UTF-16BE"),
             "utf-32": ("UTF-32 text (with a byte-order mark)", "UTF-32"),
             "utf-32-le": ("UTF-32LE text", "UTF-32LE"), "utf-32-be": ("UTF-32BE text", "UTF-32BE")}


def script_encoding(path: Path) -> Optional[tuple]:
    """(codec, text) of a script that is not plain UTF-8 (or ASCII); None otherwise."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(1 << 20)
    except OSError:
        return None
    codec = "utf-8-sig" if raw.startswith(b"\xef\xbb\xbf") else wide_encoding(raw)
    return None if codec is None else (codec, raw.decode(codec, "replace"))


@check("script-encoding-unsupported",
       title="A job or shell script is UTF-16/32 text or starts with a byte-order mark",
       severity="error", tags=("slurm", "scripts"), needs=("sbatch", "repo"))
def script_encoding_unsupported(job: Job) -> Iterator[Finding]:
    """A job script, or a shell script of the repo, is not plain UTF-8 (or ASCII).

    Reads the same scripts as script-dos-line-breaks: the job scripts, the
    shell scripts they run and the repo's other shell scripts.

    ## Why it matters
    sbatch and bash read bytes, not text. A script saved as UTF-16 (Windows
    PowerShell's `>` and `Out-File` write it, and some editors' "Unicode")
    has a NUL byte after every ASCII character, and any script with a
    byte-order mark starts with bytes before `#!`. sbatch refuses both
    (Slurm 22.05):

        sbatch: error: This does not look like a batch script.  The first
        sbatch: error: line must start with #! followed by the path to an interpreter.
        sbatch: error: For instance: #!/bin/sh

    bash refuses a UTF-16 script it is asked to run ("cannot execute binary
    file", exit 126), and runs a UTF-8 one with a byte-order mark with its
    first line broken (`\\357\\273\\277#!/bin/bash: command not found`). The
    doctor reads such a script as the text it holds, so its other checks
    still apply to what the job means.

    ## How to fix
    Convert the file to UTF-8 without a byte-order mark, for example
    `iconv -f UTF-16 -t UTF-8 job.sbatch > job.sbatch.utf8 && mv job.sbatch.utf8 job.sbatch`
    (the finding names the file's encoding), and in PowerShell write scripts
    with `Set-Content -Encoding ascii` (or `utf8NoBOM` in PowerShell 7).
    """
    jobs = {s.path for s in job.scripts}
    for path, runner in shell_scripts(job).items():
        found = script_encoding(Path(path))
        if found is None:
            continue
        codec, text = found
        name, iconv = ENCODINGS[codec]
        rel = job.rel(path)
        if path in jobs:
            what = "sbatch refuses it: \"This does not look like a batch script\""
        elif iconv is None:
            what = "bash fails on its first line (the mark is read as part of the command)"
        else:
            what = "bash refuses to run it (\"cannot execute binary file\")"
        if runner:
            what = f"run by {runner}: {what}"
        file, tmp = quote(rel), quote(rel + ".utf8")
        if iconv is None:
            convert = f"sed -i '1s/^\\xEF\\xBB\\xBF//' {file}"
        else:
            crlf = " | sed 's/\\r$//'" if "\r\n" in text else ""   # PowerShell writes both
            convert = f"iconv -f {iconv} -t UTF-8 {file}{crlf} > {tmp} && mv {tmp} {file}"
        yield Finding(
            f"{rel} is {name}; {what}",
            location=Location(rel, 1),
            fix="Convert it to UTF-8 without a byte-order mark.",
            commands=(convert,),
            options=(FixOption((run("in the repo", convert),)),),
            data={"path": rel, "encoding": codec, "run_by": runner},
            # an error where a job runs it: the job script, or a UTF-16 script a step runs
            # (a BOM there only breaks its first line); a file no job runs is never an error
            severity=None if path in jobs or (runner and iconv is not None) else
            Severity.WARNING)
