"""How a finding's fix reads to a human: one helper every text format uses.

`fix_lines(finding)` takes the finding as the JSON report has it (a dict) and returns
the lines to show, unindented (nested parts indented by two spaces); the format indents
the block and escapes what it must. A line for a file is shown as a line for that
file, never as a shell command: only what `run` steps (and a finding's plain
`commands`) hold is shown as `$ command`.

    Set `--ntasks-per-node=4` or devices: 8.
    Option 1: change slurm/train.sbatch:4 to:
        #SBATCH --ntasks-per-node=4
    Option 2: change configs/train.yaml:3 to:
        devices: 8
"""
from __future__ import annotations

INDENT = "  "


def fix_lines(finding: dict) -> list:
    """The fix's prose, then what to do: each option's steps (several options are
    alternatives, numbered), else the finding's plain commands, each `$ command`."""
    lines = list((finding.get("fix") or "").splitlines())
    options = finding.get("fix_options") or []
    if not options:
        return lines + [f"$ {c}" for c in finding.get("commands") or []]
    if len(options) == 1:
        return lines + [ln for s in options[0]["steps"] for ln in step_lines(s)]
    for n, option in enumerate(options, 1):
        steps = option["steps"]
        label = f"Option {n}" + (f" ({option['title']})" if option.get("title") else "")
        if len(steps) == 1:   # "Option 1: change f:4 to:" and its lines
            head, *body = step_lines(steps[0])
            lines += [f"{label}: {head[0].lower()}{head[1:]}", *(INDENT + b for b in body)]
        else:
            lines.append(f"{label}:")
            lines += [INDENT + ln for s in steps for ln in step_lines(s)]
    return lines


def step_lines(step: dict) -> list:
    """One step: a line that says what to do and where, then its lines, indented."""
    kind, file, line, where = step["kind"], step.get("file"), step.get("line"), step.get("where")
    place = f"{file}:{line}" if file and line else (file or "")
    if kind == "run":
        head = f"Run {where}:" if where else "Run:"
        return [head, *(f"{INDENT}$ {c}" for c in step["lines"])]
    if kind == "add":
        head = f"Add to {place or 'the job script'}" + (f" ({where})" if where else "") + ":"
    elif kind == "change":   # where: several lines ("lines 10-11")
        head = (f"Change {file}, {where}, to:" if file and where else
                f"Change {place} to:" if place else "Change the line to:")
    elif kind == "remove":
        head = f"Remove {place}:" if place else "Remove:"
    else:   # a kind a newer doctor wrote: its lines, as lines
        head = f"{kind.capitalize()} {place}:".replace(" :", ":")
    return [head, *(INDENT + ln for ln in step["lines"])]
