"""The result model: what a check returns and what a run reports."""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional


class Severity(enum.IntEnum):
    INFO = 10
    WARNING = 20
    ERROR = 30

    @classmethod
    def parse(cls, value: "str | Severity") -> "Severity":
        if isinstance(value, Severity):
            return value
        try:
            return cls[str(value).upper()]
        except KeyError:
            raise ValueError(f"unknown severity {value!r} (use info, warning or error)") from None

    def __str__(self) -> str:
        return self.name.lower()


class Status(str, enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIP = "skip"
    ERROR = "error"

    def __str__(self) -> str:
        return self.value


class Skip(Exception):
    """Raised by a check whose preconditions do not hold; the reason is reported."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class Pass(Exception):
    """Raised by a check that passed but must say what its pass does not prove (the smoke
    of the built-in model proves nothing about the user's): the reason is reported."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class Location:
    path: str
    line: Optional[int] = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    def to_dict(self) -> dict:
        return {"path": self.path, "line": self.line}


@dataclass(frozen=True)
class Edit:
    """A change to one file that fixes a finding (`doctor fix`): lines `start_line`
    through `end_line` (1-based, inclusive), which read `old`, become `new`. An
    insertion before `start_line` has `end_line = start_line - 1` and `old = ""`; a
    file that does not exist yet (a new .gitignore) is `start_line = 1, end_line = 0`.
    `old` and `new` are whole lines with their line breaks. `safe` edits keep the job's
    meaning apart from the fix; `unsafe` ones change it (a new limit, a new path) and
    need `doctor fix --unsafe`. Build them with doctor/edits.py, which reads the file."""

    path: str
    start_line: int
    end_line: int
    old: str
    new: str
    title: str
    applicability: str = "safe"

    def to_dict(self) -> dict:
        return {"path": self.path, "start_line": self.start_line, "end_line": self.end_line,
                "old": self.old, "new": self.new, "title": self.title,
                "applicability": self.applicability}


@dataclass(frozen=True)
class FixStep:
    """One thing to do for a fix, so a report can say what each line is: `add` lines to
    `file` (a job script's `export`, a `.gitignore` pattern; `where` in it, if it matters),
    `change` `file`:`line` to `lines`, `remove` `file`:`line` (`lines`: as it reads), or
    `run` commands in a shell (`where`: "on the login node", "in the repo", ...)."""

    kind: str
    lines: tuple
    file: Optional[str] = None
    line: Optional[int] = None
    where: Optional[str] = None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "lines": list(self.lines), "file": self.file,
                "line": self.line, "where": self.where}

    @classmethod
    def from_dict(cls, d: dict) -> "FixStep":
        return cls(d["kind"], tuple(d["lines"]), d.get("file"), d.get("line"), d.get("where"))


def add(file: Optional[str], *lines: str, where: Optional[str] = None) -> FixStep:
    return FixStep("add", lines, file, None, where)


def change(file: str, line: Optional[int], *lines: str) -> FixStep:
    return FixStep("change", lines, file, line)


def remove(file: str, line: Optional[int], text: str) -> FixStep:
    return FixStep("remove", (text,), file, line)


def run(where: Optional[str], *commands: str) -> FixStep:
    return FixStep("run", commands, None, None, where)


def edit_steps(edits: tuple) -> tuple:
    """The steps a finding's edits (Edit) make, as a human would do them: the lines added
    (before line N), the lines removed, or the lines they become."""
    out = []
    for e in edits:
        new, old = e.new.splitlines(), e.old.splitlines()
        if not old:
            out.append(add(e.path, *new, where=f"before line {e.start_line}"
                           if e.end_line else None))
        elif not new:
            out += [remove(e.path, e.start_line + i, ln) for i, ln in enumerate(old)]
        else:
            out.append(change(e.path, e.start_line, *new) if len(old) == 1 else
                       FixStep("change", tuple(new), e.path, e.start_line,
                               f"lines {e.start_line}-{e.end_line}"))
    return tuple(out)


def script_fix(edits: tuple, *lines: str, file: Optional[str] = None) -> tuple:
    """The options of a fix whose lines go in a job script: the lines its edits change
    (where the check has them), else `lines` to add to `file` (None: the job script)."""
    steps = edit_steps(edits) or (add(file, *lines, where="after the #SBATCH lines"),)
    return (FixOption(steps),)


@dataclass(frozen=True)
class FixOption:
    """One way to fix a finding: its steps, in order. A finding with several options
    offers alternatives (do one of them)."""

    steps: tuple
    title: Optional[str] = None

    def to_dict(self) -> dict:
        return {"title": self.title, "steps": [s.to_dict() for s in self.steps]}

    @classmethod
    def from_dict(cls, d: dict) -> "FixOption":
        return cls(tuple(FixStep.from_dict(s) for s in d["steps"]), d.get("title"))


@dataclass(frozen=True)
class Finding:
    """One problem. `severity` defaults to the check's; a check may lower or raise it.
    `fix` says how to fix it in words; `options` (FixOption) say what each line of the
    fix is (lines for a file, commands to run, alternatives): a finding with options and
    no `commands` reports every line of them as `commands`, as before options existed."""

    message: str
    location: Optional[Location] = None
    fix: Optional[str] = None
    commands: tuple = ()
    data: dict = field(default_factory=dict)
    severity: Optional[Severity] = None
    edits: tuple = ()  # Edit: what `doctor fix` applies (all of them, or none)
    options: tuple = ()  # FixOption: one, or alternatives

    def to_dict(self) -> dict:
        commands = self.commands or tuple(dict.fromkeys(
            ln for o in self.options for s in o.steps if s.kind != "remove" for ln in s.lines))
        out = {
            "message": self.message,
            "location": self.location.to_dict() if self.location else None,
            "fix": self.fix,
            "commands": list(commands),
            "data": self.data,
        }
        if self.severity is not None:
            out["severity"] = str(self.severity)
        if self.edits:
            out["edits"] = [e.to_dict() for e in self.edits]
        if self.options:   # additive: only a check that says what each line is
            out["fix_options"] = [o.to_dict() for o in self.options]
        return out


@dataclass(frozen=True)
class Suppressed:
    """A finding something accepted (doctor/suppress.py): `by` is inline,
    per-file-ignores or baseline; `reason` says why (the comment's text, the glob, the
    baseline file)."""

    finding: Finding
    by: str
    reason: str

    def to_dict(self) -> dict:
        return {**self.finding.to_dict(), "suppressed_by": self.by, "reason": self.reason}


@dataclass
class Result:
    id: str
    title: str
    severity: Severity
    status: Status
    findings: list = field(default_factory=list)
    reason: Optional[str] = None
    duration_s: float = 0.0
    steps: list = field(default_factory=list)   # the job steps it judged ("a.sbatch:17")
    suppressed: list = field(default_factory=list)  # Suppressed: accepted findings

    def to_dict(self) -> dict:
        out = {
            "id": self.id,
            "title": self.title,
            "severity": str(self.severity),
            "status": str(self.status),
            "duration_s": round(self.duration_s, 3),
            "reason": self.reason,
            "findings": [f.to_dict() for f in self.findings],
        }
        if self.steps:   # additive: only a check that read a job step has it
            out["steps"] = list(self.steps)
        if self.suppressed:   # additive: the findings a comment, a glob or a baseline accepted
            out["suppressed"] = [s.to_dict() for s in self.suppressed]
        return out


@dataclass
class Report:
    started_at: str
    duration_s: float
    host: dict
    inputs: dict
    results: list
    facts: dict
    fail_on: Severity = Severity.ERROR
    version: str = "0.0.0"
    extra: dict = field(default_factory=dict)  # additive top-level keys (e.g. `nodes`)
    secrets: tuple = ()  # values that must never appear in any output

    def doc(self) -> dict:
        """The report document (DESIGN.md §4), secrets masked: what every format renders."""
        from doctor.secrets import redact

        return redact(self.to_dict(), self.secrets)

    def counts(self) -> dict:
        """How many checks passed, failed (at error severity), warned (failed below
        error), were skipped (or waived), or could not complete. `warning` is its own
        count so that no format calls a warning a failure; which of them fail the run is
        --fail-on's (status())."""
        return count_results(self.results)

    def status(self) -> str:
        """pass, warn (failures below --fail-on), fail, or error (could not complete)."""
        failed = [r for r in self.results if r.status is Status.FAIL]
        if any(r.severity >= self.fail_on for r in failed):
            return "fail"
        if any(r.status is Status.ERROR for r in self.results):
            return "error"
        return "warn" if failed else "pass"

    def exit_code(self) -> int:
        return {"pass": 0, "warn": 0, "fail": 1, "error": 3}[self.status()]

    def to_dict(self) -> dict:
        doc = {
            "schema_version": 1,
            "tool": {"name": "doctor", "version": self.version},
            "started_at": self.started_at,
            "duration_s": round(self.duration_s, 3),
            "host": self.host,
            "inputs": self.inputs,
            "summary": {"status": self.status(), "exit_code": self.exit_code(),
                        "counts": self.counts()},
            "results": [r.to_dict() for r in self.results],
            "facts": self.facts,
        }
        doc.update(self.extra)
        return doc


def count_results(results: list) -> dict:
    """summary.counts of results (Result objects or their dicts): pass, fail, warning,
    skip, error. A failed result below error severity is a warning, not a fail."""
    counts = {"pass": 0, "fail": 0, "warning": 0, "skip": 0, "error": 0}
    for r in results:
        status = str(r["status"] if isinstance(r, dict) else r.status)
        severity = Severity.parse(r["severity"] if isinstance(r, dict) else r.severity)
        if status == "fail" and severity < Severity.ERROR:
            status = "warning"
        counts[status] += 1
    return counts


def unreadable_note(doc: dict) -> str:
    """The text formats' line about `facts.unreadable` ("" when everything was read):
    entries the run skipped because it could not read them."""
    seen = (doc.get("facts") or {}).get("unreadable")
    if not seen:
        return ""
    named = ", ".join(f"{_short(e['path'])} ({e['reason']})" for e in seen["examples"])
    more = ", …" if seen["count"] > len(seen["examples"]) else ""
    noun = "entry" if seen["count"] == 1 else "entries"
    return (f"{seen['count']} {noun} could not be read: {named}{more} (skipped; "
            "facts.unreadable in the JSON report)")


def _short(path: str, width: int = 60) -> str:
    return path if len(path) <= width else f"{path[:20]}…{path[-(width - 21):]}"
