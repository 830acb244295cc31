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
