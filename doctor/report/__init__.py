"""Output formats: each is a module here with `render(report) -> str`.

Formats read only `report.doc()` (the JSON document, secrets masked) and the
registry's metadata; nothing in a check knows about formats.
"""
from __future__ import annotations

import importlib
import re
from typing import Any, Optional

FORMATS = ("table", "json", "junit", "sarif", "markdown", "github")

# The project's repository (docs/ci.md's pre-commit `repo:`) and its docs: the one place
# the formats' links come from (SARIF's informationUri and helpUri, the docs link of
# every finding). `main`, not a version tag: a page keeps its name across releases.
REPO_URL = "https://github.com/slurm-torch-doctor/doctor"
DOCS_URL = f"{REPO_URL}/blob/main/docs"
# results the runner makes itself, documented on a page of their own
_OWN_PAGES = {"waiver-expired": "quickstart.md#settings"}


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


def counts_phrase(doc: dict) -> str:
    """`2 errors, 3 warnings, 25 passed, 2 skipped`: the counts of checks as the table's
    summary line says them (warnings apart from errors; the skipped, those that could not
    complete and the findings suppressed only when there are some)."""
    if not doc["results"]:
        return "no checks ran"
    c = summary_counts(doc)
    hidden = sum(len(r.get("suppressed") or []) for r in doc["results"])
    parts = [_n(c["fail"], "error"), _n(c["warning"], "warning"), f"{c['pass']} passed"]
    parts += [f"{c['skip']} skipped"] if c["skip"] else []
    parts += [f"{c['error']} could not complete"] if c["error"] else []
    parts += [f"{hidden} suppressed"] if hidden else []
    return ", ".join(parts)


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def docs_url(check_id: str) -> Optional[str]:
    """The page of a built-in check (docs/checks/<id>.md, written by `doctor docs`), or
    None for a check of a third-party pack, which has no page here (`doctor explain
    <id>` still shows its docstring)."""
    from doctor.registry import BUILTIN, get

    if check_id in _OWN_PAGES:
        return f"{DOCS_URL}/{_OWN_PAGES[check_id]}"
    spec = get(check_id)
    # the built-in checks live in the doctor's own namespace (a pack's module may be
    # named anything, `checks.x` too)
    if spec is None or not spec.module.startswith(BUILTIN + "."):
        return None
    return f"{DOCS_URL}/checks/{check_id}.md"


def where(finding: dict, quote: str = "") -> str:
    """`path:line: ` of a finding for the text formats ("" when it has no location)."""
    loc = finding.get("location")
    if not loc:
        return ""
    place = f"{loc['path']}:{loc['line']}" if loc.get("line") else loc["path"]
    return f"{quote}{place}{quote} " if quote else f"{place}: "
