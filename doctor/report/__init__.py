"""Output formats: each is a module here with `render(report) -> str`.

Formats read only `report.doc()` (the JSON document, secrets masked) and the
registry's metadata; nothing in a check knows about formats.
"""
from __future__ import annotations

import importlib
import re
from typing import Any

FORMATS = ("table", "json", "junit", "sarif", "markdown")


def render(fmt: str, report) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    module = importlib.import_module(f"doctor.report.{fmt}_format")
    return module.render(report)


# C0 and C1 controls, DEL, and the bidi marks, embeddings, overrides and isolates (and the
# line/paragraph separators): a terminal or viewer acts on them instead of showing them.
_UNSEEN = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                     "\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: str) -> str:
    """text with every control character shown as its escape (ESC as `\\x1b`, U+202E
    as `\\u202e`): text from the user's files cannot move the cursor, recolour or
    retitle a terminal, reorder what a viewer shows, or start a line of the report."""
    return _UNSEEN.sub(_escape, text)


def _escape(m: re.Match) -> str:
    c = m.group()
    return _NAMED.get(c) or (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def printable_doc(obj: Any) -> Any:
    """The report document with printable() applied to every text in it (keys too):
    what the human formats lay out, adding their own line breaks and colours."""
    if isinstance(obj, dict):
        return {printable_doc(k): printable_doc(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [printable_doc(v) for v in obj]
    return printable(obj) if isinstance(obj, str) else obj


def summary_counts(doc: dict) -> dict:
    """summary.counts with `warning` (pass, fail, warning, skip, error): what every format
    prints, so they all say the same numbers. A report written before `warning` was
    counted apart (its `fail` counted warnings too), read back by `show`, is counted
    again from its results."""
    from doctor.model import count_results

    counts = doc["summary"]["counts"]
    return dict(counts) if "warning" in counts else count_results(doc["results"])


def where(finding: dict, quote: str = "") -> str:
    """`path:line: ` of a finding for the text formats ("" when it has no location)."""
    loc = finding.get("location")
    if not loc:
        return ""
    place = f"{loc['path']}:{loc['line']}" if loc.get("line") else loc["path"]
    return f"{quote}{place}{quote} " if quote else f"{place}: "
