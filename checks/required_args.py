"""A training step's command line leaves out an argument its entry's parser requires."""
from __future__ import annotations

import ast
import re
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.context import Job
from doctor.job.sbatch import SbatchScript
from doctor.job.sources import tree_of
from doctor.model import FixOption, change
from doctor.scanners.cliparse import Missing, judge, read_parsers

# Words that stand for the script's own arguments: they come from the submit line
# (`sbatch job.sh --config x`), which the doctor does not see: no claim, no warning.
_POSITIONAL_PARAMS = re.compile(r"^\$(\{)?([@*#]|\d+)(?(1)\})$|^\$\{?[@*]")


@check("required-args-missing", title="The training step omits an argument its entry "
       "requires", severity="error", tags=("launch", "argparse"), needs=("sbatch",),
       timeout=20)
def required_args_missing(job: Job) -> Iterator[Finding]:
    """The job's training step runs a Python entry without an argument the entry's
    command-line parser requires: an argparse option with `required=True`, a positional
    argument (any `nargs` but `?` and `*`), one of a required mutually exclusive group,
    or a required subcommand.

    The entry's parser is read from its source, never run: the `ArgumentParser` the
    module builds where Python runs it (the module's statements, `if __name__ ==
    "__main__":`, the module-level functions they call with the parser passed in or
    returned) and the `parse_args()`/`parse_known_args()` that reads the command line.
    The step's arguments are the words the job script passes the entry (through
    `srun`, `torchrun`, `accelerate launch`, a container, variables the scripts set).
    An option counts as given when any word could be it as argparse matches words:
    the flag, `--flag=value`, a glued `-fVALUE`, a cluster of short flags, a unique
    prefix (unless `allow_abbrev=False`); a positional is missing only when fewer
    words could be positionals than the parser needs. A default does not help: argparse
    ignores `default=` (`os.environ.get(...)` too) of a `required=True` option.

    No claim is made where the doctor cannot tell: an argument added inside an `if` or
    a loop, flags or keywords it cannot read (`**kwargs`), a parser handed to code it
    does not read when the command line has a word only that code may know, `parents=`,
    `prefix_chars`, `@file` arguments, `sys.argv` used or rewritten, `parse_args(list)`,
    `-h`/`--version` on the command line, a parse call on a path that may not run, the
    script's own arguments (`"$@"`, `$1`). A variable the doctor cannot resolve where
    the argument could stand makes the finding a warning that names it.

    ## Why it matters
    argparse stops the program at its first line with `error: the following arguments
    are required: --config` (exit 2) on every rank: the job fails after its whole
    queue wait, having done nothing.

    ## How to fix
    Pass the argument on the step's command line in the job script (the message names
    the line and the flag), or, if the entry can run without it, give it a default and
    drop `required=True` in the entry's parser.
    """
    if not job.scripts:
        raise Skip("no job script")
    judged = False
    for script in job.scripts:
        for finding in _script_findings(job, script):
            judged = True
            if finding is not None:
                yield finding
    if not judged:
        raise Skip("no job step runs a Python entry whose command-line parser the doctor "
                   "can read")


def _script_findings(job: Job, script: SbatchScript) -> Iterator[Optional[Finding]]:
    step = job.step(script)
    if not step.is_training:
        return
    entry = job.entry_file(step)
    if entry is None:
        return
    tree = tree_of(job, entry)
    if not isinstance(tree, ast.Module):
        return
    calls, file_unknown = job.memo(("cliparse", str(entry)), lambda: read_parsers(tree))
    calls = [c for c in calls if not c.conditional and not c.why]
    if not calls or file_unknown:
        return
    yield None   # a parser judged
    words, unknown = [], []
    for w in step.args:
        if "$" in w or "`" in w:
            if _POSITIONAL_PARAMS.match(w):
                return   # the script's own arguments: whatever the submit line passes
            unknown.append(w)
        else:
            words.append(w)
    rel = job.rel(entry)
    seen: set = set()
    for call in calls:
        missing, why = judge(call.parser, words, unknown)
        # a function that builds the parser, called twice, is one parser to the user
        key = tuple(ln for m in missing for ln in m.lines)
        if why or not missing or key in seen:
            continue
        seen.add(key)
        yield _finding(job, step, rel, call, missing, unknown)


def _finding(job: Job, step, rel: str, call, missing: list, unknown: list) -> Finding:
    first: Missing = missing[0]
    said = ", ".join(" or ".join(m.names) if m.kind == "group" else m.names[0]
                     for m in missing)
    where = ", ".join(f"{rel}:{ln}" for m in missing for ln in m.lines)
    kinds = {"option": "required=True", "positional": "positional",
             "group": "a required mutually exclusive group", "command": "required subcommand"}
    decl = "; ".join(f"{' | '.join(m.names)}: {kinds[m.kind]} at {rel}:{m.lines[0]}"
                     for m in missing)
    sub = f" (its `{first.parser.name}` subcommand)" if first.parser.name else ""
    message = (f"The step at {step.where} runs {rel}{sub} without {said} ({decl}): "
               f"its {call.method}() at {rel}:{call.line} stops every rank at start with "
               f"\"error: the following arguments are required\" (exit 2), after the "
               f"queue wait.")
    severity = None
    if unknown:
        severity = Severity.WARNING
        message += (f" Unless {', '.join(unknown[:3])}, which the doctor cannot resolve, "
                    f"holds {'it' if len(missing) == 1 else 'them'}.")
    hint = " ".join(f"{m.names[0]} VALUE" if m.names[0].startswith("-") else f"<{m.names[0]}>"
                    for m in missing)
    fix = (f"Pass {hint} on the step's command line at {step.where}; or, if {rel} can run "
           f"without {'it' if len(missing) == 1 else 'them'}, give a default and drop "
           f"required=True (a positional: nargs='?') at {where}.")
    options: tuple = ()
    last = _last_line(step.script, step.line)
    if last is not None:
        options = (FixOption((change(step.script.rel, last[0], f"{last[1]} {hint}"),),
                             title="pass the argument in the job script"),)
    return Finding(message, Location(step.script.rel, step.line), fix=fix,
                   data={"entry": rel, "missing": [list(m.names) for m in missing],
                         "declared": [f"{rel}:{ln}" for m in missing for ln in m.lines],
                         "parse": f"{rel}:{call.line}", "step": step.where,
                         "unresolved": unknown[:5]},
                   severity=severity, options=options)


def _last_line(script: SbatchScript, line: int) -> Optional[tuple]:
    """(number, text) of the last line of the command starting at `line` (its `\\`
    continuations), when an argument can go at its end (no pipe, list, redirection,
    comment or here-document there); else None."""
    lines = script.text.splitlines()
    n = line
    while 0 < n <= len(lines) and lines[n - 1].rstrip().endswith("\\"):
        n += 1
    if not 0 < n <= len(lines):
        return None
    text = lines[n - 1].rstrip()
    if re.search(r"[|;&<>#`]|\$\(", text) or text.endswith("\\"):
        return None
    return n, text
