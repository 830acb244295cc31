"""Markdown: a summary table plus the details of every failing check.

Fit for a PR comment and for $GITHUB_STEP_SUMMARY (GitHub-flavoured Markdown).
"""
from __future__ import annotations

import re
from doctor.report import printable_doc, where
from doctor.model import unreadable_note

ICONS = {"pass": "✅", "fail": "❌", "warn": "⚠️", "error": "💥", "skip": "⏭️"}
MAX_FINDINGS = 20


def _cell(text: object) -> str:
    """One table cell: no newlines, no pipes breaking the table."""
    return " ".join(str(text or "").split()).replace("|", "\\|")


def _shown(r: dict) -> str:
    return "warn" if r["status"] == "fail" and r["severity"] != "error" else r["status"]


def render(report) -> str:
    doc = printable_doc(report.doc())
    s = doc["summary"]
    counts = ", ".join(f"{n} {k}" for k, n in s["counts"].items() if n) or "no checks ran"
    out = [f"## {ICONS.get(s['status'], '')} doctor: {s['status']}".replace("  ", " "), "",
           f"{counts} in {doc['duration_s']:.2f}s — exit code {s['exit_code']}"
           + (f" — job {doc['host']['slurm_job_id']}" if doc["host"].get("slurm_job_id")
              else ""), ""]
    out += [unreadable_note(doc), ""] if unreadable_note(doc) else []
    if doc["results"]:
        out += ["| | check | severity | result |", "|---|---|---|---|"]
        for r in doc["results"]:
            shown = _shown(r)
            if r["status"] == "fail":
                n = len(r["findings"])
                first = r["findings"][0]["message"] if n else r["title"]
                what = first + (f" (+{n - 1} more)" if n > 1 else "")
            else:
                what = r["reason"] or r["title"]
            out.append(f"| {ICONS[shown]} {shown} | `{r['id']}` | {r['severity']} | "
                       f"{_cell(what)} |")
        out.append("")
    for r in doc["results"]:
        if r["status"] not in ("fail", "error"):
            continue
        out += [f"### {ICONS[_shown(r)]} `{r['id']}` — {r['title']}", ""]
        if r["status"] == "error":
            out += [f"The check could not complete: {r['reason']}", ""]
            continue
        for f in r["findings"][:MAX_FINDINGS]:
            out.append(f"- {where(f, '`')}{f['message']}")
            if f.get("fix"):
                out.append(f"  - **Fix:** {f['fix']}")
            if f.get("commands"):
                fence = _fence(f["commands"])
                out += ["", f"  {fence}sh", *[f"  {c}" for c in f["commands"]], f"  {fence}", ""]
        if len(r["findings"]) > MAX_FINDINGS:
            out.append(f"- … and {len(r['findings']) - MAX_FINDINGS} more "
                       "(the JSON report lists them all)")
        out += ["", f"`doctor explain {r['id']}` says why it matters.", ""]
    return "\n".join(out).rstrip() + "\n"


def _fence(lines: list) -> str:
    """A code fence longer than any run of backticks in the block (CommonMark), so a
    command holding ``` cannot close it early and turn the rest into Markdown."""
    longest = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)
