"""How a finding's fix reads to a human: one helper every text format uses.

`fix_lines(finding)` takes the finding as the JSON report has it (a dict) and returns
the lines to show, unindented; the format indents them and escapes what it must.
"""
from __future__ import annotations


def fix_lines(finding: dict) -> list:
    """The fix's prose, then its commands, each `$ command`."""
    lines = list((finding.get("fix") or "").splitlines())
    lines += [f"$ {c}" for c in finding.get("commands") or []]
    return lines
