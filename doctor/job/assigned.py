"""A job script's own shell variables, line by line, for the checks that read its commands.

The step model (doctor/job/steps.py) expands the training step's words; the checks that
judge the script's other commands (a `cp` after the step, a `cat > FILE <<EOF` before it)
need the same variables at that command's line. `Values` replays the script's plain
assignments (`A=x`, `export A=x`, `declare/local/readonly A=x`) in order, each value
expanded with the ones before it (doctor/job/shell.py expand); a value the doctor cannot
know (`$(cmd)`, a loop variable) stays as written, with its parts (job, tmp, user ...).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from doctor.job.shell import Expanded, expand

_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)
_DECLARE = {"export", "declare", "local", "readonly", "typeset"}


@dataclass(frozen=True)
class Assigned:
    name: str
    line: int
    raw: str          # the value as written (quotes kept)
    value: str        # expanded with the assignments before it
    parts: frozenset  # job, tmp, node, user ... (doctor/job/shell.py)


class Values:
    """The script's assignments; `at(line)` gives the table a command on that line sees."""

    def __init__(self, script: Any) -> None:
        self.assigned: list = []
        table: dict = {}
        for cmd in script.commands:
            words = list(cmd.words)
            if words and words[0] in _DECLARE:
                words = [w for w in words[1:] if not w.startswith("-")]
            elif not words or not _ASSIGN.match(words[0]) or \
                    any(not _ASSIGN.match(w) for w in words):
                continue   # `A=1 cmd`: an inline assignment, for that command only
            for w in words:
                m = _ASSIGN.match(w)
                if m is None:
                    continue
                res = expand(m.group(2), table.get)
                parts = frozenset(res.parts)
                table[m.group(1)] = res.text
                self.assigned.append(Assigned(m.group(1), cmd.line, m.group(2), res.text,
                                              parts))

    def at(self, line: int) -> dict:
        """name → Assigned, the last assignment of each name before `line`."""
        out: dict = {}
        for a in self.assigned:
            if a.line < line:
                out[a.name] = a
        return out

    def expand(self, raw: str, line: int) -> Expanded:
        """A word of the command on `line`, expanded with the script's values there; the
        parts of each value it uses (a `$(mktemp -d)` held in a variable) are kept."""
        known = self.at(line)
        res = expand(raw, lambda n: known[n].value if n in known else None)
        for name in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", raw):
            if name in known:
                res.parts |= set(known[name].parts)
        return res

    def source_of(self, raw: str, line: int) -> Optional[Assigned]:
        """The assignment a word that is one variable (`$HOSTFILE`, `"${CFG}"`) reads."""
        m = re.fullmatch(r'"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?', raw)
        return self.at(line).get(m.group(1)) if m else None
