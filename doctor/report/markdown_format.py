"""Markdown: the failures first, the rest folded away.

Fit for a PR comment and for $GITHUB_STEP_SUMMARY (GitHub-flavoured Markdown). A
heading with the run's status and counts; then each check that failed at error
severity, each that could not complete, each that warned, with its findings, fixes and
docs link; then, folded in a <details>, a table of the checks that passed or were
skipped. A passing row shows no problem title ("A 2-rank DDP run of the model fails"):
only the check, and what it judged or why it skipped.
"""
from __future__ import annotations

import re
from doctor.report import counts_phrase, docs_url, printable, printable_doc, summary_counts, where
from doctor.report.fixtext import INDENT, fix_lines
from doctor.model import unreadable_note

ICONS = {"pass": "✅", "fail": "❌", "warn": "⚠️", "error": "💥", "skip": "⏭️"}
MAX_FINDINGS = 20


def _cell(text: object) -> str:
    """One table cell: no newlines, no pipes breaking the table."""
    return " ".join(str(text or "").split()).replace("|", "\\|")


def _shown(r: dict) -> str:
    return "warn" if r["status"] == "fail" and r["severity"] != "error" else r["status"]


def render(report) -> str:
    raw = report.doc()
    doc = printable_doc(raw)
    s = doc["summary"]
    out = [f"## {ICONS.get(s['status'], '')} doctor: {s['status']}".replace("  ", " "), "",
           f"{counts_phrase(doc)} in {doc['duration_s']:.2f}s — exit code {s['exit_code']}"
           + (f" — job {doc['host']['slurm_job_id']}" if doc["host"].get("slurm_job_id")
              else ""), ""]
    out += [unreadable_note(doc), ""] if unreadable_note(doc) else []
    # errors, then the checks that could not complete, then warnings; each in report order
    rank = {"fail": 0, "error": 1, "warn": 2}
    failed = sorted((i for i, r in enumerate(doc["results"]) if _shown(r) in rank),
                    key=lambda i: rank[_shown(doc["results"][i])])
    for i in failed:
        r = doc["results"][i]
        out += [f"### {ICONS[_shown(r)]} `{r['id']}` — {r['title']}", ""]
        if r["status"] == "error":
            out += [f"The check could not complete: {r['reason']}", ""]
        else:
            pairs = list(zip(r["findings"], raw["results"][i]["findings"]))
            for f, f_raw in pairs[:MAX_FINDINGS]:
                out.append(f"- {where(f, '`')}{f['message']}")
                out += _fix(f_raw)
            if len(r["findings"]) > MAX_FINDINGS:
                out.append(f"- … and {len(r['findings']) - MAX_FINDINGS} more "
                           "(the JSON report lists them all)")
            if out[-1]:   # a code block ends with its blank line already
                out.append("")
        url = docs_url(r["id"])
        out += [f"Why it matters: [{r['id']}]({url}), or `doctor explain {r['id']}`."
                if url else f"`doctor explain {r['id']}` says why it matters.", ""]
    rest = [r for r in doc["results"] if _shown(r) in ("pass", "skip")]
    if rest:
        c = summary_counts(doc)
        label = ", ".join(f"{c[k]} {word}" for k, word in (("pass", "passed"), ("skip", "skipped"))
                          if c[k])
        out += ["<details>", f"<summary>{label}</summary>", "",
                "| | check | |", "|---|---|---|"]
        for r in rest:
            # a passing row: what the check judged, never its problem title
            what = r["reason"] or ("judged " + ", ".join(r["steps"]) if r.get("steps") else "")
            out.append(f"| {ICONS[r['status']]} {r['status']} | `{r['id']}` | {_cell(what)} |")
        out += ["", "</details>", ""]
    return "\n".join(out).rstrip() + "\n"


def _fix(finding: dict) -> list:
    """A finding's fix (fixtext.fix_lines, from the raw finding: its own line breaks are
    the layout), under the finding's bullet: prose as sub-items, the lines for a file and
    the commands in code blocks (commands bare, in an `sh` block, to copy)."""
    out: list = []
    lines = fix_lines(finding)
    first = True
    i = 0
    while i < len(lines):
        if not _is_code(lines[i]):
            text = printable(lines[i])
            out.append(f"  - **Fix:** {text}" if first else f"  - {text}")
            first = False
            i += 1
            continue
        j = i
        while j < len(lines) and _is_code(lines[j]):
            j += 1
        block = [ln[len(INDENT):] if ln.startswith(INDENT) else ln for ln in lines[i:j]]
        commands = all(ln.startswith("$ ") for ln in block)
        body = [printable(ln[2:] if commands else ln) for ln in block]
        fence = _fence(body)
        out += ["", f"  {fence}{'sh' if commands else ''}", *[f"  {b}" for b in body],
                f"  {fence}", ""]
        i = j
    return out


def _is_code(line: str) -> bool:
    return line.startswith(("$ ", INDENT))


def _fence(lines: list) -> str:
    """A code fence longer than any run of backticks in the block (CommonMark), so a
    command holding ``` cannot close it early and turn the rest into Markdown."""
    longest = max((len(m) for line in lines for m in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)
