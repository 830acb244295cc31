"""Output formats: each is a module here with `render(report) -> str`.

Formats read only `report.doc()` (the JSON document, secrets masked) and the
registry's metadata; nothing in a check knows about formats.
"""
from __future__ import annotations

import importlib

FORMATS = ("table", "json", "junit", "sarif", "markdown")


def render(fmt: str, report) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    module = importlib.import_module(f"doctor.report.{fmt}_format")
    return module.render(report)


def where(finding: dict, quote: str = "") -> str:
    """`path:line: ` of a finding for the text formats ("" when it has no location)."""
    loc = finding.get("location")
    if not loc:
        return ""
    place = f"{loc['path']}:{loc['line']}" if loc.get("line") else loc["path"]
    return f"{quote}{place}{quote} " if quote else f"{place}: "
