"""Suppression (docs/suppress.md): a finding accepted by an inline comment
(`# doctor: ignore[check-id] reason`), by the settings' `per-file-ignores`, or by a
baseline file (`--baseline FILE`) leaves its result's findings for the result's
`suppressed` list, saying what accepted it and why. A result left with no finding passes.

doctor.runner applies it in `_result`, the one place every check's result passes
through, so the status, the counts, the exit code and every format see the same thing.

An inline comment is read only where it is a comment of the file's language: Python
through tokenize, YAML outside every scalar (yaml.scan), a shell script where the
doctor's own shell reader (doctor/job/shell.py) sees a comment, so `echo "# doctor:
ignore[x]"` or a here-document's line suppresses nothing. In any other file, a line
that is only a `#` comment. Files are read as the job's sources are (doctor/job/pyread.py:
inside the repo, a size cap, never a FIFO), once per run.
"""
from __future__ import annotations

import bisect
import io
import json
import os
import re
import threading
import tokenize
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from doctor import fs
from doctor.errors import InputError
from doctor.model import Finding, Location, Result, Severity, Status, Suppressed

INLINE, PER_FILE, BASELINE = "inline", "per-file-ignores", "baseline"
BASELINE_VERSION = 1
MAX_BASELINE_BYTES = 256 * 1024 * 1024   # as `doctor diff` reads a report (reports_cli)
INVALID_ID = "ignore-comment-invalid"
# results about the doctor's own settings and comments, which the runner adds after the
# checks: fixed where they are written, never accepted by a baseline
NOT_BASELINED = {INVALID_ID, "waiver-expired"}

PYTHON = (".py", ".pyi")
YAML = (".yaml", ".yml")
SHELL = (".sh", ".bash", ".ksh", ".zsh", ".sbatch", ".slurm", ".job", ".batch")

# `# doctor: ignore[a, b] reason`, anywhere in a comment (`# noqa # doctor: ignore[x]`);
# `ignore-file` or `ignored` are other words
_DIRECTIVE = re.compile(r"#\s*doctor\s*:\s*ignore(?![\w-])(?:\[(?P<ids>[^\]]*)\])?(?P<rest>.*)",
                        re.S)


@dataclass(frozen=True)
class Comment:
    """An ignore comment: `ids` None for the bare form (no brackets)."""

    line: int
    own_line: bool      # nothing but the comment on its line: it is about the next line
    ids: Optional[tuple]
    reason: str
    text: str           # the directive as written, for messages


def parse_comment(line: int, text: str, own_line: bool) -> Optional[Comment]:
    """The ignore directive in a comment's text (from its `#` on), else None."""
    m = _DIRECTIVE.search(text)
    if m is None:
        return None
    ids = None if m["ids"] is None else tuple(
        i for i in re.split(r"[,\s]+", m["ids"]) if i)
    reason = m["rest"].strip().lstrip("-:—– ").strip()
    shown = m.group(0)[:m.start("rest") - m.start()] if m["ids"] is not None else \
        m.group(0)[:len(m.group(0)) - len(m["rest"])]
    return Comment(line, own_line, ids, reason, shown.strip())


# ---- where the comments of a file are ------------------------------------------------

def _line_starts(text: str) -> list:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _python_comments(data: bytes) -> list:
    """[(line, column, text)] of the comments tokenize sees (up to a tokenize error)."""
    out = []
    try:
        for tok in tokenize.tokenize(io.BytesIO(data).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.start[1], tok.string))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError, ValueError,
            RecursionError):
        pass
    return out


def _yaml_comments(text: str) -> list:
    """[(line, column, text)]: a `#` at a line's start or after a blank, outside every
    scalar the YAML scanner reads (a quoted string, a block scalar's lines). Past a
    scanning error, only a line that is a comment and nothing else."""
    import yaml

    spans = []
    broken_at: Optional[int] = None
    try:
        for tok in yaml.scan(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
            if isinstance(tok, yaml.ScalarToken):
                spans.append(((tok.start_mark.line, tok.start_mark.column),
                              (tok.end_mark.line, tok.end_mark.column)))
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        broken_at = mark.line if mark is not None else 0
    starts = [s for s, _ in spans]
    out = []
    for i, line in enumerate(text.split("\n")):
        if "doctor" not in line:
            continue
        for m in re.finditer(r"(?:^|(?<=[ \t]))#", line):
            col = m.start()
            if broken_at is not None and i >= broken_at:
                if line[:col].strip() == "":
                    out.append((i + 1, col, line[col:]))
                break
            k = bisect.bisect_right(starts, (i, col)) - 1
            if k >= 0 and spans[k][0] <= (i, col) < spans[k][1]:
                continue   # inside a scalar: text, not a comment
            out.append((i + 1, col, line[col:]))
            break
    return out


def _shell_comments(text: str) -> list:
    """[(line, column, text)] of the comments doctor/job/shell.py's reader skips."""
    from doctor.job.shell import split_commands

    text = text.replace("\r\n", "\n")
    found: list = []
    split_commands(text, comments=found)
    starts = _line_starts(text)
    out = []
    for offset, body in found:
        i = bisect.bisect_right(starts, offset) - 1
        out.append((i + 1, offset - starts[i], body))
    return out


def _line_comments(text: str) -> list:
    """Any other file (.gitignore, requirements.txt): only lines that are a comment."""
    return [(i + 1, len(line) - len(line.lstrip()), line.lstrip())
            for i, line in enumerate(text.split("\n")) if line.lstrip().startswith("#")]


def comments_in(rel: str, data: bytes, shell: bool = False) -> dict:
    """{line: Comment} of the ignore comments in a file's bytes, read as its kind
    (`shell`: a file the job runs as a script, whatever its name)."""
    if b"doctor" not in data:
        return {}
    name = os.path.basename(rel)
    if name.endswith(PYTHON):
        found = _python_comments(data)
        text = data.decode("utf-8", "replace")
    else:
        text = data.decode("utf-8", "replace")
        kind = (_yaml_comments if name.endswith(YAML) else
                _shell_comments if shell or name.endswith(SHELL) or "." not in name
                or text.startswith("#!") else _line_comments)
        found = kind(text)
    lines = text.split("\n")
    out = {}
    for line, col, body in found:
        before = lines[line - 1][:col] if line - 1 < len(lines) else ""
        c = parse_comment(line, body, before.strip() == "")
        if c is not None:
            out[line] = c
    return out


# ---- the baseline --------------------------------------------------------------------

class Baseline:
    """The findings a baseline file accepts, as `doctor diff` matches findings
    (doctor.diffing.finding_key): the first N findings of a key in this run are
    accepted when the file holds N of that key; more are new."""

    def __init__(self, name: str, entries: list):
        from doctor.diffing import finding_key

        self.name = name
        self._left = Counter(finding_key(check, f) for check, f in entries)
        self._lock = threading.Lock()

    def take(self, key: tuple) -> bool:
        with self._lock:
            if self._left[key] > 0:
                self._left[key] -= 1
                return True
            return False


def load_baseline(path: str) -> Baseline:
    """A file --write-baseline wrote, or a JSON report (`doctor run --json`): its findings,
    and those it shows suppressed by a baseline. Anything else is one InputError line."""
    from doctor.report import printable
    from doctor.secrets import redact

    name = printable(path)
    raw = fs.read_input(Path(path), "baseline file", MAX_BASELINE_BYTES)
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:   # UnicodeDecodeError is a ValueError
        raise InputError(f"{name}: not a doctor baseline: not valid JSON "
                         f"({str(exc)[:200]})") from None
    try:
        entries = _baseline_entries(redact(doc, ()))   # masked as a report's text is
        return Baseline(name, entries)
    except (KeyError, TypeError, AttributeError, ValueError, RecursionError):
        pass
    raise InputError(f"{name} is not a doctor baseline: write one with `doctor run "
                     "--write-baseline FILE`, or give a JSON report (docs/suppress.md)")


def _baseline_entries(doc: Any) -> list:
    """[(check id, finding dict)] of a baseline document or a report document."""
    out = []
    if isinstance(doc, dict) and doc.get("doctor_baseline") == BASELINE_VERSION:
        for f in doc["findings"]:
            if not isinstance(f.get("check"), str):
                raise TypeError("a finding without its check")
            out.append((f["check"], _entry(f)))
        return out
    if isinstance(doc, dict) and doc.get("schema_version") == 1:
        for r in doc["results"]:
            for f in r.get("findings") or []:
                out.append((r["id"], _entry(f)))
            for f in r.get("suppressed") or []:
                if f.get("suppressed_by") == BASELINE:
                    out.append((r["id"], _entry(f)))
        return out
    raise ValueError("neither a baseline nor a report")


def _entry(f: Any) -> dict:
    """What finding_key reads of a finding, with its types checked."""
    if not isinstance(f, dict) or not isinstance(f.get("message"), str):
        raise TypeError("a finding without its message")
    loc = f.get("location")
    if loc is not None and not (isinstance(loc, dict) and isinstance(loc.get("path"), str)):
        raise TypeError("a location without its path")
    data = f.get("data") or {}
    if not isinstance(data, dict):
        raise TypeError("data is not a mapping")
    return {"message": f["message"], "location": loc, "data": data}


def baseline_text(doc: dict) -> tuple:
    """(text, findings) of the baseline file for a report document (`--write-baseline`):
    every finding it
    reports, and those a baseline accepted (still accepted), sorted so that the file
    changes only where the findings do. Inline and per-file-ignores suppressions stay
    where they are written."""
    found = []
    for r in doc.get("results") or []:
        if r["id"] in NOT_BASELINED:
            continue
        kept = list(r.get("findings") or []) + [
            f for f in r.get("suppressed") or [] if f.get("suppressed_by") == BASELINE]
        for f in kept:
            found.append({"check": r["id"], "message": f["message"],
                          "location": f.get("location"),
                          "severity": f.get("severity") or r.get("severity"),
                          "data": f.get("data") or {}})
    found.sort(key=lambda f: (f["check"], (f["location"] or {}).get("path") or "",
                              (f["location"] or {}).get("line") or 0, f["message"]))
    out = {"doctor_baseline": BASELINE_VERSION, "tool": doc.get("tool"),
           "findings": found}
    return json.dumps(out, indent=2, default=str) + "\n", len(found)


# ---- applying them -------------------------------------------------------------------

@dataclass(frozen=True)
class _Rule:
    glob: str
    match: Any            # compiled regex's match
    basename: bool        # a pattern without `/` matches the file's name anywhere
    items: tuple


def file_rules(per_file: dict) -> list:
    """The settings' per-file-ignores as rules: `**` spans directories, a last `**` is
    every file below, a pattern without `/` is a file name anywhere (as .gitignore and
    ruff read it)."""
    rules = []
    for glob, items in per_file.items():
        pattern = glob.strip()
        if pattern.startswith("./"):
            pattern = pattern[2:]
        if pattern.rstrip("/").endswith("**"):
            pattern = pattern.rstrip("/") + "/*"
        rules.append(_Rule(glob, fs.glob_regex(pattern).match, "/" not in pattern.strip("/"),
                           tuple(items)))
    return rules


class Suppressor:
    """One run's suppressions: the settings' rules, the baseline, the comments read."""

    def __init__(self, job: Any):
        self.job = job
        self.rules = file_rules(getattr(job.settings, "per_file_ignores", {}) or {})
        self.baseline: Optional[Baseline] = getattr(job, "baseline", None)
        self._lock = threading.Lock()
        self._invalid: dict = {}     # (rel, line) → Finding about the comment
        self._secrets: Optional[tuple] = None

    # -- one finding
    def why(self, spec: Any, f: Finding) -> Optional[tuple]:
        """(suppressed_by, reason) when something accepts this finding, else None."""
        from doctor.names import selects

        rel = f.location.path if f.location else None
        if rel is not None and not _repo_rel(rel):
            rel = None
        if rel is not None and f.location and f.location.line:
            for c in self._comments_for(rel, f.location.line, spec):
                if c.ids and any(i != "all" and selects(i, spec) for i in c.ids):
                    return INLINE, c.reason or "no reason given"
        if rel is not None:
            name = os.path.basename(rel)
            for rule in self.rules:
                if (rule.match(rel) or (rule.basename and rule.match(name))) and \
                        any(selects(i, spec) for i in rule.items):
                    return PER_FILE, rule.glob
        if self.baseline is not None and self.baseline.take(self._key(spec.id, f)):
            return BASELINE, self.baseline.name
        return None

    def _key(self, check_id: str, f: Finding) -> tuple:
        """The finding as `doctor diff` keys it, read from its masked dict: the baseline
        holds the report's text, where a secret is ***."""
        from doctor.diffing import finding_key
        from doctor.secrets import redact, secret_values

        if self._secrets is None:
            self._secrets = secret_values(self.job)
        return finding_key(check_id, redact(f.to_dict(), self._secrets))

    # -- the comments
    def _comments_for(self, rel: str, line: int, spec: Any) -> list:
        """The ignore comments that speak for a finding on `line`: one on that line, or a
        comment alone on the line above. Those that name no check are noted."""
        found = self._file(rel)
        out = []
        for c in (found.get(line), found.get(line - 1)):
            if c is None or (c.line == line - 1 and not c.own_line):
                continue
            self._note_invalid(rel, c, spec)
            out.append(c)
        return out

    def _file(self, rel: str) -> dict:
        return self.job.memo(("suppress-comments", rel), lambda: self._read(rel))

    def _read(self, rel: str) -> dict:
        from doctor.job.pyread import read_source

        path = self.job.repo / rel
        real = self.job.realpath(path)
        if not fs.inside(real, str(self.job.repo)):   # a link out of the repo: not read
            return {}
        data = read_source(real, self.job.unreadable)
        if data is None:
            return {}
        scripts = {s.rel for s in getattr(self.job, "scripts", ())}
        return comments_in(rel, data, shell=rel in scripts)

    def _note_invalid(self, rel: str, c: Comment, spec: Any) -> None:
        from doctor.names import did_you_mean, selects, unknown_names, vocabulary
        from doctor.registry import all_checks

        if c.ids:
            others = [i for i in c.ids if i == "all" or not selects(i, spec)]
            if not others:   # it names this check: the registry need not be read
                return
            specs = all_checks()
            bad = [i for i in unknown_names(others, specs) if i != "all"]
            if "all" in c.ids:
                bad.append("all")
            if not bad:
                return
            said = "; ".join(
                "`all` would hide every check's findings: name the checks" if i == "all"
                else f"{i!r} is no check id or tag{did_you_mean(i, vocabulary(specs))}"
                for i in bad)
            msg = f"`{c.text}` suppresses nothing: {said}"
        else:
            bad = []
            msg = f"`{c.text}` names no check, so it suppresses nothing"
        finding = Finding(
            msg, location=Location(rel, c.line),
            fix="Name the check in brackets: `# doctor: ignore[CHECK-ID] why` (`doctor list` "
                "lists the ids; docs/suppress.md).",
            data={"comment": c.text, "unknown": bad})
        with self._lock:
            self._invalid.setdefault((rel, c.line), finding)

    def invalid_result(self) -> list:
        """A warning result for the ignore comments that named no check (bare, unknown
        ids), as an expired waiver is one: [] when there are none."""
        with self._lock:
            found = [self._invalid[k] for k in sorted(self._invalid)]
        if not found:
            return []
        return [Result(INVALID_ID, "An ignore comment names no check", Severity.WARNING,
                       Status.FAIL, found)]


def _repo_rel(rel: str) -> bool:
    """A location the suppressions may read: relative, inside the repo."""
    return not os.path.isabs(rel) and rel != "." and ".." not in Path(rel).parts


def suppressor(job: Any) -> Suppressor:
    return job.memo("suppressor", lambda: Suppressor(job))


def split(job: Any, spec: Any, findings: list) -> tuple:
    """(findings kept, [Suppressed]) of one check's findings."""
    s = suppressor(job)
    kept, gone = [], []
    for f in findings:
        why = s.why(spec, f)
        if why is None:
            kept.append(f)
        else:
            gone.append(Suppressed(f, *why))
    return kept, gone


def invalid_comments(job: Any) -> list:
    """The run's `ignore-comment-invalid` result, or []: only when a run read comments."""
    s = job.memoized("suppressor")
    return s.invalid_result() if s is not None else []


def check_per_file_ignores(settings: Any, specs: list) -> None:
    """Every id in per-file-ignores names a check (exit 2 otherwise), as `ignore:`."""
    from doctor.names import did_you_mean, unknown_names, vocabulary

    for glob, items in (getattr(settings, "per_file_ignores", None) or {}).items():
        for item in unknown_names(items, specs):
            raise InputError(f"{settings.path}: per-file-ignores: {glob}: unknown check id "
                             f"or tag {item!r}{did_you_mean(item, vocabulary(specs))} "
                             "(see `doctor list`)")



# ---- the command line (doctor/cli.py) ------------------------------------------------

def baseline_options(write: bool, output_help: str = "") -> Any:
    """--baseline (and, for `run`, --write-baseline) as click options."""
    import click

    opts = [click.option("--baseline", metavar="FILE", help="Accept the findings this "
                         "file holds (--write-baseline, or a JSON report) and fail only on "
                         "new ones, matched as `doctor diff` matches findings; they show "
                         "as suppressed (-v, JSON).")]
    if write:
        opts.append(click.option("--write-baseline", metavar="FILE", help="Write this "
                                 "run's findings to FILE as a baseline that accepts them "
                                 "(the report shows them accepted). " + output_help))

    def apply(fn: Any) -> Any:
        for opt in reversed(opts):
            fn = opt(fn)
        return fn
    return apply


def use_baseline(job: Any, baseline: Optional[str],
                 write_baseline: Optional[str] = None) -> list:
    """Read --baseline into the job (missing, unreadable or no baseline: exit 2); the
    [(option, path)] of the baseline to write, for outputs.check_outputs."""
    from doctor.outputs import refuse_empty

    refuse_empty(("--baseline", baseline), ("--write-baseline", write_baseline))
    if baseline:
        job.baseline = load_baseline(baseline)
    return [("--write-baseline", write_baseline)] if write_baseline else []


def accept_all(report: Any, path: str) -> tuple:
    """--write-baseline: (the baseline's text, its findings), and the report's findings
    are accepted by it now, as `--baseline` will accept them: the report, its summary
    and the exit code say what the next run with that baseline says."""
    from doctor.report import printable

    text, n = baseline_text(report.doc())
    for r in report.results:
        if r.id in NOT_BASELINED or not r.findings:
            continue
        r.suppressed = [*r.suppressed, *(
            Suppressed(f, BASELINE, f"{printable(path)} (written by this run)")
            for f in r.findings)]
        r.findings = []
        if r.status is Status.FAIL:
            r.status = Status.PASS
    return text, n


def write_baseline(path: str, written: tuple, repo: Path) -> None:
    """Write accept_all's baseline (outputs.write_output: whole or not at all, never over
    an input) and say so on stderr."""
    import click

    from doctor.outputs import write_output
    from doctor.report import printable

    text, n = written
    write_output(path, text, repo)
    click.echo(f"doctor: wrote {n} finding{'s' * (n != 1)} to {printable(path)}; "
               f"`doctor run --baseline {printable(path)}` fails only on new ones", err=True)
