"""GitHub Actions annotations: one workflow command per finding.

`::error file=PATH,line=N,title=TITLE::MESSAGE` (`::warning` for a warning, `::notice`
for info), errors first: GitHub shows 10 annotations of each level per step and 50 per
job (actions/toolkit docs/problem-matchers.md), on the run's summary and on the pull
request's diff, so the errors must come before the warnings. A check that could not
complete is an `::error` without a file. Then one plain summary line.

Escaping is the runner's own (actions/runner ActionCommand.cs): in the message `%`, CR
and LF become %25, %0D, %0A; in a property also `:` and `,` (%3A, %2C), which would
otherwise end the property. Text from the user's files is printable() first, so a file
name or value can start no line, and so no command, of its own.

The file is the absolute path (repo + the finding's path): the runner makes a path
inside the workspace relative to it, so an annotation lands on the right file even when
--repo is a folder of the checkout.
"""
from __future__ import annotations

import os

from doctor.report import counts_phrase, docs_url, printable
from doctor.report.fixtext import fix_lines

LEVELS = {"error": "error", "warning": "warning", "info": "notice"}
ORDER = {"error": 0, "warning": 1, "notice": 2}


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, title: str, path: str = "",
            line: "int | None" = None) -> str:
    """One workflow command, every part escaped."""
    props = ([f"file={_prop(path)}"] if path else []) + \
        ([f"line={int(line)}"] if path and line else []) + [f"title={_prop(title)}"]
    return f"::{level} {','.join(props)}::{_data(message)}"


def _path(path: str, repo: str) -> str:
    return path if os.path.isabs(path) or not repo else os.path.join(repo, path)


def render(report) -> str:
    doc = report.doc()
    repo = doc["inputs"].get("repo") or ""
    out: list = []
    for r in doc["results"]:
        url = docs_url(r["id"])
        if r["status"] == "error":
            out.append(("error", command("error", printable(r["reason"] or "error"),
                                         f"doctor {r['id']}: the check could not complete")))
        if r["status"] != "fail":
            continue
        for f in r["findings"]:
            level = LEVELS.get(f.get("severity") or r["severity"], "warning")
            # printable() each piece: the lines between them are the doctor's own
            text = "\n".join(printable(line) for line in
                             [f["message"], *fix_lines(f), *([f"Docs: {url}"] if url else [])])
            loc = f.get("location") or {}
            out.append((level, command(level, text, printable(f"doctor {r['id']}: {r['title']}"),
                                       printable(_path(loc["path"], repo)) if loc else "",
                                       loc.get("line"))))
    out.sort(key=lambda item: ORDER[item[0]])   # stable: each level keeps the report's order
    summary = f"doctor: {counts_phrase(doc)} (exit {doc['summary']['exit_code']})"
    return "\n".join([line for _, line in out] + [summary]) + "\n"
