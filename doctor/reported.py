"""The severities a check's findings can have, read from its code (`doctor list`).

A check registers one severity, and a finding may set its own: the precision rule makes a
finding whose path to the failure has an unknown link a `warning` in an `error` check
(DESIGN.md §2). `doctor list` must not say `error` for a check that also reports
warnings, so it shows what the check's own code gives its findings: the registered
severity, and each severity the check function, or a function of its module it refers to
(transitively), sets on a finding (`Severity.WARNING`, `severity="warning"`). Helpers in
other modules are not read: a severity set only there is not shown.
"""
from __future__ import annotations

import ast
import sys
from typing import Any

from doctor import fs, pyast
from doctor.model import Severity


def severities(spec: Any) -> list:
    """The severities `spec`'s findings can have, highest first."""
    found = {spec.severity}
    mod = sys.modules.get(spec.func.__module__)
    raw = fs.read_bytes(getattr(mod, "__file__", None) or "", limit=8 * 1024 * 1024)
    try:
        tree = pyast.parse(raw) if raw is not None else None
    except (SyntaxError, ValueError):
        tree = None
    if tree is not None:
        funcs = {n.name: n for n in tree.body
                 if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        todo, seen = [spec.func.__name__], set()
        while todo:
            name = todo.pop()
            if name in seen or name not in funcs:
                continue
            seen.add(name)
            for n in ast.walk(funcs[name]):
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) \
                        and n.value.id == "Severity" and n.attr in Severity.__members__:
                    found.add(Severity[n.attr])
                elif isinstance(n, ast.keyword) and n.arg == "severity" \
                        and isinstance(n.value, ast.Constant) \
                        and str(n.value.value).upper() in Severity.__members__:
                    found.add(Severity[str(n.value.value).upper()])
                elif isinstance(n, ast.Name) and n is not funcs[name]:
                    todo.append(n.id)   # a call, or a function handed on as a callback
    return sorted(found, reverse=True)


def shown_severity(spec: Any) -> str:
    """`error`, `warning`, or `error/warning` for a check that reports both (`doctor
    list`, the check pages)."""
    return "/".join(str(s) for s in severities(spec))
