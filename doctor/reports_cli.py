"""`doctor show` and `doctor diff`: saved reports, read from a JSON report file or
from the last report block of a job log (docs/diff.md)."""
from __future__ import annotations

import errno
import json
import os
import stat
import sys
from typing import Any, Callable, Optional

import click

from doctor.errors import InputError
from doctor.model import Severity
from doctor.report import FORMATS, printable
from doctor.logblock import BLOCK_BEGIN, BLOCK_END

STATUSES = {"pass", "fail", "skip", "error"}
# What show and diff read, at most (exit 2 beyond): a report is kilobytes to tens of MiB
# (10,000 gathered nodes: ~50 MiB of JSON); a job log holding one may be larger, and is
# read line by line. Only regular files are opened: a FIFO would block, /dev/zero never
# ends.
MAX_REPORT_BYTES = 256 * 1024 * 1024     # a JSON report, or the JSON of a log's block
MAX_LOG_BYTES = 1024 * 1024 * 1024
MAX_LOG_LINE = 16 * 1024 * 1024          # a longer line is no block's (read in pieces)
# A report nests about ten levels deep. The renderers, the diff and the masking recurse
# once a level (and json.loads gives out near 1,000): deeper is not a report.
MAX_NESTING = 100


def _last_block(fh, name: str) -> str:
    """The JSON text of the last complete report block in a job log (read line by line:
    a log may be large; everything outside the blocks is ignored)."""
    found: Optional[str] = None
    block: Optional[list] = None
    size = 0
    while True:
        raw = fh.readline(MAX_LOG_LINE)
        if not raw:
            break
        if len(raw) == MAX_LOG_LINE and not raw.endswith("\n"):
            block = None   # longer than any line of a block: skip the rest of it
            while len(raw) == MAX_LOG_LINE and not raw.endswith("\n"):
                raw = fh.readline(MAX_LOG_LINE)
            continue
        line = raw.rstrip("\r\n")
        if line == BLOCK_BEGIN:
            block, size = [], 0
        elif block is not None and line == BLOCK_END:
            found, block = "\n".join(block), None
        elif block is not None:
            if not line.startswith("#"):  # something else wrote into it: not a whole block
                block = None
            else:
                block.append(line[2:] if line.startswith("# ") else line[1:])
                size += len(line)
                if size > MAX_REPORT_BYTES:
                    raise InputError(f"{name}: its report block is larger than "
                                     f"{MAX_REPORT_BYTES >> 20} MiB, too large for a report")
    if found is None:
        raise InputError(f"{name} holds no doctor report: neither a JSON report nor a job log "
                         f"with a `{BLOCK_BEGIN}` block (`doctor sbatch --force` writes one)")
    return found


def load_report(path: str) -> dict:
    """The report document in a JSON report file, or in a job log's last report block."""
    name = printable(path)
    doc = _parsed(*_text(path, name), name)
    if _deeper_than(doc, MAX_NESTING):
        raise InputError(f"{name} is not a doctor report: its JSON nests more than "
                         f"{MAX_NESTING} levels deep")
    _check_report(doc, name)
    from doctor.secrets import redact

    # masked as it was written, but a report from elsewhere (an older doctor, a hand
    # edit, a job log) may hold a secret in clear: show and diff read it only masked
    return redact(doc, ())


def _text(path: str, name: str) -> "tuple[str, bool, Optional[str]]":
    """(the report's JSON text, whether it came from a log's block, the file's path to
    read again as a log when the JSON is no report) of a regular file."""
    try:
        with _open_regular(path, name) as fh:
            head = fh.read(4096).lstrip()
            fh.seek(0)
            size = os.fstat(fh.fileno()).st_size
            too_large = InputError(f"{name}: {size:,} bytes is too large for a report (at "
                                   f"most {MAX_REPORT_BYTES >> 20} MiB) or a job log (at "
                                   f"most {MAX_LOG_BYTES >> 30} GiB)")
            if not head.startswith(("{", "[")) or size > MAX_REPORT_BYTES:
                if size > MAX_LOG_BYTES:
                    raise too_large
                try:
                    return _last_block(fh, name), True, None
                except InputError:
                    if size > MAX_REPORT_BYTES:   # a JSON file, or a JSON-lines log
                        raise too_large from None
                    raise
            # a JSON report, or a log whose first lines are JSON (a JSON-lines logger)
            return fh.read(MAX_REPORT_BYTES + 1), False, path
    except OSError as exc:
        raise InputError(f"cannot read {name}: {exc.strerror or exc}") from None


def _parsed(text: str, from_log: bool, again: Optional[str], name: str) -> object:
    try:
        return json.loads(text)
    except RecursionError:   # json's own limit: no report nests that deep
        raise InputError(f"{name} is not a doctor report: its JSON is nested too "
                         "deeply") from None
    except ValueError as exc:
        where = "the last report block of " if from_log else ""
        error = InputError(f"{where}{name} is not valid JSON: {exc}")
    if again is not None:   # not JSON as a whole: a log that began with JSON lines?
        try:
            with _open_regular(again, name) as fh:
                return _parsed(_last_block(fh, name), True, None, name)
        except (InputError, OSError):
            pass
    raise error


def _open_regular(path: str, name: str) -> Any:
    """A text file object of `path` when it is a regular file; InputError (OSError for a
    directory) otherwise. The open does not block (O_NONBLOCK): a FIFO is refused after
    it, never waited on."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        raise InputError(f"{name} is not a regular file (a FIFO, device or socket), "
                         "not a report")
    return open(fd, encoding="utf-8", errors="replace")


def _deeper_than(doc: object, most: int) -> bool:
    """Whether lists and objects in `doc` nest more than `most` levels (in a loop: the
    point is not to recurse that deep)."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        kids = node.values() if isinstance(node, dict) else node if isinstance(node, list) \
            else ()
        for kid in kids:
            if isinstance(kid, (dict, list)):
                if depth >= most:
                    return True
                stack.append((kid, depth + 1))
    return False


def _check_report(doc: object, name: str) -> None:
    """Enough of docs/report-schema.json that show and diff can rely on."""
    if not isinstance(doc, dict) or "schema_version" not in doc or "results" not in doc:
        raise InputError(f"{name} is not a doctor report (no schema_version and results)")
    if doc["schema_version"] != 1:
        raise InputError(f"{name} is a report of schema_version {doc['schema_version']!r}; "
                         "this doctor reads schema_version 1")
    ok = (isinstance(doc["results"], list) and isinstance(doc.get("summary"), dict)
          and isinstance(doc.get("facts", {}), dict)
          and all(isinstance(r, dict) and isinstance(r.get("id"), str)
                  and str(r.get("status")) in STATUSES
                  and isinstance(r.get("findings", []), list)
                  for r in doc["results"]))
    if not ok:
        raise InputError(f"{name} is not a valid doctor report (see docs/report-schema.json)")


def read_as_report(use: Callable[[], Any], name: str) -> Any:
    """use() of a document that passed _check_report, which checks only what every
    reader needs: one that lacks what a format or the diff reads (a finding without its
    message, a line that is a string: a hand edit, another tool's file) is one line and
    exit 2, not an internal error. (A report the doctor wrote always renders:
    tests/test_fuzz.py holds every schema-valid document to exit 0.)"""
    try:
        return use()
    except (KeyError, IndexError, TypeError, AttributeError, ValueError,
            RecursionError) as exc:
        raise InputError(f"{name} is not a valid doctor report ({type(exc).__name__}: "
                         f"{exc}; see docs/report-schema.json)") from None


class SavedReport:
    """A report read back from its document: what the output formats need (`doc()`).
    Its status and exit code are the ones it was written with."""

    def __init__(self, doc: dict):
        self._doc = doc

    def doc(self) -> dict:
        return self._doc  # masked by load_report


def view_options(fn):
    """-q/-v/--color of the human report (doctor/report/table_format.py)."""
    for opt in reversed([
            click.option("-q", "--quiet", is_flag=True,
                         help="Print only the summary line of the report."),
            click.option("-v", "--verbose", is_flag=True, help="Also list every check with "
                         "its status and why it skipped, and each suppressed finding."),
            click.option("--color", type=click.Choice(["auto", "always", "never"]),
                         default="auto", show_default=True, help="Colour the report: auto "
                         "on a terminal, unless NO_COLOR is set.")]):
        fn = opt(fn)
    return fn


def verbosity_of(quiet: bool, verbose: bool) -> int:
    if quiet and verbose:
        raise InputError("-q/--quiet and -v/--verbose exclude each other")
    return -1 if quiet else 1 if verbose else 0


@click.command("show")
@click.argument("report_file", metavar="REPORT")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table",
              show_default=True, help="The output format.")
@click.option("--output", multiple=True, metavar="[FORMAT:]FILE", help="FORMAT:FILE writes "
              "that format to FILE (junit:doctor.xml); repeat it for several. A plain FILE "
              "takes --format's output instead of stdout.")
@view_options
def show_cmd(report_file: str, fmt: str, output: tuple = (), quiet: bool = False,
             verbose: bool = False, color: str = "auto") -> None:
    """Render a saved report: a JSON report (`doctor run --json`) or a job log holding one
    (`doctor sbatch --force`). Exit 0, or 2 when REPORT is not one."""
    from doctor.outputs import check_outputs, plan_outputs, write_outputs
    from doctor.report import render
    from doctor.report.table_format import render as table, terminal_width, use_color

    verbosity = verbosity_of(quiet, verbose)
    files = plan_outputs(output, fmt)
    saved = SavedReport(load_report(report_file))
    check_outputs([(o.label, o.path) for o in files], [report_file])  # never over REPORT

    def text_of(f: str, stream: Any) -> str:   # stream: stdout, or None for a file
        paint = use_color(color, stream) if stream else color == "always"
        width = terminal_width(stream) if stream else None
        return read_as_report(
            lambda: table(saved, color=paint, verbosity=verbosity, width=width)
            if f == "table" else render(f, saved), printable(report_file))
    write_outputs(files, fmt, text_of)


@click.command("diff")
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]),
              default="table", show_default=True, help="The output format.")
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error",
              show_default=True, help="Lowest severity of a new failure that makes the exit "
              "code 1.")
def diff_cmd(old: str, new: str, fmt: str, fail_on: str) -> None:
    """What changed from report OLD to report NEW (each a JSON report or a job log holding
    one): checks, findings, facts, nodes. Exit 0: no check newly fails at or above
    --fail-on; 1: one does; 2: bad input."""
    from doctor.outputs import write_stdout
    from doctor.diffing import diff, render

    docs = load_report(old), load_report(new)
    d = read_as_report(lambda: diff(*docs, fail_on=Severity.parse(fail_on), names=(old, new)),
                       f"{printable(old)} or {printable(new)}")
    write_stdout(read_as_report(lambda: render(fmt, d), f"{printable(old)} or "
                                f"{printable(new)}"))
    sys.exit(d["exit_code"])
