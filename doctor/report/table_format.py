"""The human table: one row per finding, then the fixes, then a summary line."""
from __future__ import annotations

import textwrap

from tabulate import tabulate
from doctor.report import printable_doc, where
from doctor.model import unreadable_note

MAX_ROWS_PER_CHECK = 10
WIDTH = 88
COLORS = {"pass": "32", "fail": "31", "error": "35", "skip": "2", "warn": "33"}


def _paint(text: str, status: str, color: bool) -> str:
    return f"\033[{COLORS[status]}m{text}\033[0m" if color and status in COLORS else text


def render(report, color: bool = False) -> str:
    doc = printable_doc(report.doc())  # then the table's own line breaks and colours
    rows = []
    fixes = []
    for r in doc["results"]:
        status = r["status"]
        shown = "warn" if status == "fail" and r["severity"] != "error" else status
        label = _paint(shown.upper() if shown != "skip" else "skip", shown, color)
        if status == "fail":
            findings = r["findings"]
            for i, f in enumerate(findings[:MAX_ROWS_PER_CHECK]):
                rows.append([label if i == 0 else "", r["id"] if i == 0 else "",
                             r["severity"] if i == 0 else "",
                             textwrap.fill(where(f) + f["message"], WIDTH)])
            if len(findings) > MAX_ROWS_PER_CHECK:
                rows.append(["", "", "", f"… and {len(findings) - MAX_ROWS_PER_CHECK} more "
                             "(the JSON report lists them all)"])
            fixes.append((r["id"], findings))
        else:
            # A title names the problem ("... is too low"); on a pass row the id says it all.
            # which job steps a skip judged, and a pass that found no step to judge in a
            # script ("a.sbatch (no step that runs a Python program)"): never silently
            judged = r.get("steps") or []
            steps = f" [judged: {', '.join(judged)}]" if judged and (
                status == "skip" or any("(no step" in j for j in judged)) else ""
            rows.append([label, r["id"], r["severity"],
                         textwrap.fill((r["reason"] or "") + steps, WIDTH)])
    out = [tabulate(rows, headers=["status", "check", "severity", "message"],
                    tablefmt="simple")] if rows else ["no checks selected"]
    for check_id, findings in fixes:
        lines = []
        for f in findings[:MAX_ROWS_PER_CHECK]:
            if f.get("fix"):
                lines.append(textwrap.indent(f["fix"], "  "))
            lines += [f"    $ {c}" for c in f.get("commands") or []]
        if lines:
            out.append(f"\nHow to fix {check_id}:")
            out.append("\n".join(_dedupe(lines)))
    s = doc["summary"]
    counts = ", ".join(f"{n} {k}" for k, n in s["counts"].items() if n)
    out.append(f"\n{_paint(s['status'].upper(), s['status'], color)}: {counts or 'nothing ran'}"
               f" in {doc['duration_s']:.2f}s (exit {s['exit_code']}). "
               "`doctor explain ID` says why a check matters.")
    out += [unreadable_note(doc)] if unreadable_note(doc) else []
    return "\n".join(out) + "\n"


def _dedupe(lines: list) -> list:
    return list(dict.fromkeys(lines))
