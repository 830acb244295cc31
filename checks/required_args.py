"""A training step's command line leaves out an argument its entry's parser requires."""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, fs
from doctor.job.context import Job
from doctor.job.launch import console_scripts
from doctor.job.sbatch import SbatchScript
from doctor.job.shell import RUNTIME_VARS
from doctor.job.overrides import parse_overrides
from doctor.job.closure import step_files
from doctor.job.pyread import imports_named
from doctor.job.sources import dotted, nodes, tree_of
from doctor.job.stepconfigs import _hydra_target, step_configs
from doctor.model import FixOption, change

if TYPE_CHECKING:
    from doctor.scanners.cliparse import Missing

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
    returned, also those of a repo module it imports, `from utils import get_parser`)
    and the `parse_args()`/`parse_known_args()` that reads the command line.
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

    A click entry (`@click.command()` function the module runs, `main()`) is judged the
    same way: an option with `required=True`, an argument (unless `nargs=-1` or
    `required=False`); no claim for groups, `default=`, `envvar=`, `prompt=`, a required
    flag (click versions differ), shared option decorators, a word that is no option of
    the command (click stops on it first).

    A Hydra entry (`@hydra.main`, or `-cn`/`-cp` on the command line) is judged on the
    config Hydra composes for the step: its defaults list, group choices and the step's
    overrides (`key=v`, `+key=v`, `group=option`). A value left `???` (OmegaConf's
    MISSING) is an error where the step's code (the entry and the repo modules it
    imports) reads that key (`cfg.model.lr`, `cfg["model"]["lr"]`), and a warning where
    the doctor sees no read. A defaults-list group left `???` (`- model: ???`) that no
    override chooses is an error: Hydra's compose stops before the code runs (a warning
    where a config the doctor cannot read, a ConfigStore schema, might choose it). No
    claim on `???` values where the composition is not followed to its end (a defaults
    entry it cannot find, a ConfigStore schema) or Hydra's own flags (`--cfg`,
    `--help`, `-m`) are given.

    ## Why it matters
    argparse stops the program at its first line with `error: the following arguments
    are required: --config` (exit 2) on every rank, click with `Error: Missing option
    '--config'` (exit 2); OmegaConf raises
    `MissingMandatoryValue` at the first read of a `???` key. The job fails after its
    whole queue wait, having done nothing.

    ## How to fix
    Pass the argument on the step's command line in the job script (the message names
    the line and the flag), or, if the entry can run without it, give it a default and
    drop `required=True` in the entry's parser. For Hydra, set the key on the command
    line (`model.lr=3e-4`) or give it a value in the config.
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
    hydra = _hydra_findings(job, script, step, entry)
    if hydra is not None:
        yield None
        yield from hydra
        return
    tree = tree_of(job, entry)
    if not isinstance(tree, ast.Module) or _via_console_script(job, step):
        return   # (a console script calls one function: `if __name__ == "__main__":` never runs)
    # imported here, not at the top: only an entry with a module to read pays for it
    from doctor.scanners.cliparse import ParseCall, judge, judge_click, read_click

    calls, file_unknown, rels = job.memo(("cliparse", str(entry)),
                                         lambda: _read(job, tree, entry))
    calls = [c for c in calls if not c.conditional and not c.why]
    clicks = job.memo(("cliparse-click", str(entry)), lambda: read_click(tree))
    if not (calls or clicks) or file_unknown:
        return
    yield None   # a parser judged
    words, unknown = [], []
    for w in map(_runtime_word, step.args):
        if "$" in w or "`" in w:
            if _POSITIONAL_PARAMS.match(w):
                return   # the script's own arguments: whatever the submit line passes
            unknown.append(w)
        else:
            words.append(w)
    rel = job.rel(entry)
    seen: set = set()
    for call in [*calls, *(ParseCall(p, line, "click", False) for p, line in clicks)]:
        missing, why = (judge_click if call.method == "click" else judge)(
            call.parser, words, unknown)
        # a function that builds the parser, called twice, is one parser to the user
        key = tuple(ln for m in missing for ln in m.lines)
        if why or not missing or key in seen:
            continue
        seen.add(key)
        yield _finding(job, step, rel, call, missing, unknown, rels)


def _read(job: Job, tree: ast.Module, entry: Path) -> tuple:
    """(parse calls, reasons for no claim, id(module) -> its rel) of an entry."""
    from doctor.scanners.cliparse import read_parsers

    rels = {id(tree): job.rel(entry)}
    calls, unknown = read_parsers(tree, _resolver(job, rels))
    return calls, unknown, rels


def _resolver(job: Job, rels: dict) -> Callable:
    """resolve(module, name) for cliparse: the repo function a module imports by `from X
    import name` (the one module-level `def` of that name among the files X may be);
    `rels` (id(module) -> rel) learns each module it reads."""
    known = job.every_rel_set()

    imports: dict = {}    # id(module) -> {name: (level, module, name as defined)}
    done: dict = {}       # (id(module), name) -> the answer

    def resolve(module: ast.Module, name: str) -> Optional[tuple]:
        key = (id(module), name)
        if key not in done:
            done[key] = _resolve(module, name)
        return done[key]

    def _resolve(module: ast.Module, name: str) -> Optional[tuple]:
        rel = rels.get(id(module))
        if rel is None:
            return None
        if id(module) not in imports:
            imports[id(module)] = {(a.asname or a.name): (st.level, st.module or "", a.name)
                                   for st in nodes(module) if isinstance(st, ast.ImportFrom)
                                   for a in st.names}
        named = imports[id(module)].get(name)
        if named is None:
            return None
        level, source, orig = named
        found = []
        for cand in imports_named([(level, source, (orig,))], rel, known):
            tree = tree_of(job, job.repo / cand)
            if isinstance(tree, ast.Module):
                found += [(cand, tree, n) for n in tree.body if isinstance(
                    n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == orig]
        if len(found) != 1:
            return None
        cand, tree, fdef = found[0]
        rels[id(tree)] = cand
        return tree, fdef
    return resolve


def _runtime_word(word: str) -> str:
    """The word with the variables Slurm sets at run time (`$SLURM_PROCID`, `${SLURM_JOB_ID}`:
    a number or a host name, one word that is no option) read as a placeholder."""
    return _RUNTIME.sub("0", word) if "$" in word else word


_RUNTIME = re.compile(r"\$(?:\{(%s)\}|(%s)\b)" % (("|".join(RUNTIME_VARS),) * 2))


def _via_console_script(job: Job, step) -> bool:
    """Whether the step runs its entry module as one of the repo's console scripts (the
    job model reads `train-cli …` as `python -m pkg.cli …`)."""
    if not step.entry_is_module or step.entry not in console_scripts(job).values():
        return False
    lines = step.script.text.splitlines()
    n, text = step.line, ""
    while 0 < n <= len(lines):          # the command's line and its `\` continuations
        text += " " + lines[n - 1].rstrip().rstrip("\\")
        if not lines[n - 1].rstrip().endswith("\\"):
            break
        n += 1
    return not re.search(rf"-m\s+{re.escape(step.entry)}\b", text)


def _finding(job: Job, step, rel: str, call, missing: list, unknown: list,
             rels: dict) -> Finding:
    first: Missing = missing[0]

    def at(module: object, line: int) -> str:   # a line of the entry or of a module it imports
        return f"{rels.get(id(module), rel)}:{line}"

    said = ", ".join(" or ".join(m.names) if m.kind == "group" else m.names[0]
                     for m in missing)
    where = ", ".join(at(m.module, ln) for m in missing for ln in m.lines)
    kinds = {"option": "required=True", "positional": "positional",
             "group": "a required mutually exclusive group", "command": "required subcommand"}
    decl = "; ".join(f"{' | '.join(m.names)}: {kinds[m.kind]} at {at(m.module, m.lines[0])}"
                     for m in missing)
    sub = f" (its `{first.parser.name}` subcommand)" if first.parser.name else ""
    stops = (f"its click command, run at {rel}:{call.line}, stops every rank at start with "
             f"\"Error: Missing option/argument\" (exit 2)" if call.method == "click" else
             f"its {call.method}() at {at(call.module, call.line)} stops every rank at start with "
             f"\"error: the following arguments are required\" (exit 2)")
    message = (f"The step at {step.where} runs {rel}{sub} without {said} ({decl}): "
               f"{stops}, after the queue wait.")
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
    options = _append_to_step(step, hint, "pass the argument in the job script")
    return Finding(message, Location(step.script.rel, step.line), fix=fix,
                   data={"entry": rel, "missing": [list(m.names) for m in missing],
                         "declared": [at(m.module, ln) for m in missing for ln in m.lines],
                         "parse": at(call.module, call.line), "step": step.where,
                         "unresolved": unknown[:5]},
                   severity=severity, options=options)


def _append_to_step(step, words: str, title: str) -> tuple:
    """The fix option that writes `words` at the end of the step's command, where an
    argument can go there (see _last_line); else none."""
    last = _last_line(step.script, step.line)
    if last is None:
        return ()
    return (FixOption((change(step.script.rel, last[0], f"{last[1]} {words}"),), title=title),)


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


# ---- Hydra: a `???` (MISSING) value the job's overrides never set ------------------------

MISSING = "???"


def _hydra_findings(job: Job, script: SbatchScript, step, entry) -> Optional[list]:
    """The findings for a step whose entry composes a Hydra config (None: not Hydra).
    Hydra composes a config with `???` left in it; OmegaConf raises MissingMandatoryValue
    where the code reads that key: an error where the job's code reads the key as an
    attribute or item, a warning where the doctor sees no such read."""
    parsed = parse_overrides(list(step.args))
    cwd = Path(step.cwd) if step.cwd and Path(step.cwd).is_absolute() else job.repo
    if _hydra_target(job, parsed, entry, cwd) is None:
        return None
    if parsed.flags:
        return []    # --cfg, --help, -m…: Hydra prints or sweeps; no claim
    sc = step_configs(job, script)
    refused = [m.group(1) for n in sc.notes if (m := _REFUSED.search(n))]
    # Hydra builds the defaults list before it applies `key=value` overrides: what the
    # composer notes about those does not change that a group is left unchosen
    after = [n for n in sc.notes if _OVERRIDE_NOTE.search(n)]
    rest = [n for n in sc.notes if not _REFUSED.search(n) and n not in after]
    if not sc.configs or sc.missing or rest and not refused or after and not refused:
        return []    # not composed, or something in it not followed: no claim
    unknown = [w for w in parsed.positionals if "$" in w or "`" in w] + \
        [o.raw for o in parsed.overrides if "$" in o.key]
    if any(_POSITIONAL_PARAMS.match(w) for w in unknown):
        return []    # the script's own arguments may set anything
    if refused:
        # a config the composer could not read (a ConfigStore schema) might choose the
        # group itself: then a warning that names it
        unread = [_unread(job, n) for n in rest]
        return [_group_finding(job, step, sc, g, unknown, unread)
                for g in dict.fromkeys(refused)]
    cfg = sc.configs[0]
    out = []
    for path, mapping in cfg.mappings():
        for key, value in mapping.items():
            if value != MISSING or not isinstance(key, str):
                continue
            dotted_key = ".".join(str(p) for p in (*path, key))
            origin = mapping.origin_of(key)
            where = f"{job.rel(origin[0])}:{origin[1]}" if origin else \
                f"{cfg.rel}:{cfg.line_of(mapping, key) or 1}"
            read = _reads(job, step, [str(p) for p in (*path, key)])
            out.append(_hydra_finding(step, cfg.rel, dotted_key, where, read, unknown))
    return out


# the composer's note for a defaults entry `- group: ???` no override chose (doctor/job/hydra.py)
_REFUSED = re.compile(r"Hydra refuses to run: no option chosen for (\S+)$")
_OVERRIDE_NOTE = re.compile(r"^\S+:\d+: `[^`]+`: ")


def _unread(job: Job, note: str) -> str:
    """What a composer's note says it did not read: the file, relative to the repo."""
    m = re.search(r"(/\S+?\.ya?ml) does not exist", note)
    return f"{job.rel(m.group(1))} is no file" if m else note.split(": ", 1)[-1]


def _group_finding(job: Job, step, sc, group: str, unknown: list, unread: list) -> Finding:
    """Hydra's compose stops (`You must specify 'group', e.g, group=<OPTION>`) before
    the task function runs: an error whatever the code reads."""
    where = ""
    pattern = re.compile(rf"^\s*-\s*(override\s+)?/?{re.escape(group)}\s*:\s*['\"]?\?\?\?")
    for cfg in sc.configs:
        for path in [cfg.path] + [p for p, _, _ in sc.needed]:
            text = fs.read_text(path, job.unreadable) if path else None
            for i, line in enumerate((text or "").splitlines(), 1):
                if pattern.match(line):
                    where = f"{job.rel(path)}:{i}"
                    break
            if where:
                break
    said = f" ({where})" if where else ""
    message = (f"The step at {step.where} composes {sc.configs[0].rel}, whose defaults list "
               f"leaves `{group}: ???`{said}, and no override chooses it: Hydra stops before "
               f"the code runs with \"You must specify '{group}', e.g, {group}=<OPTION>\", "
               f"after the queue wait.")
    if unknown:
        message += (f" Unless {', '.join(unknown[:3])}, which the doctor cannot resolve, "
                    f"chooses it.")
    if unread:
        message += (f" Unless a config the doctor did not read chooses it ({unread[0]}; "
                    f"a ConfigStore schema?).")
    fix = f"Choose one on the step's command line at {step.where} ({group}=<OPTION>)" + (
        f", or name a default at {where}." if where else ".")
    options = _append_to_step(step, f"{group}=<OPTION>", "choose it in the job script")
    return Finding(message, Location(step.script.rel, step.line), fix=fix,
                   data={"config": sc.configs[0].rel, "missing": [[group]],
                         "declared": [where] if where else [], "read": None,
                         "step": step.where, "unresolved": unknown[:5]},
                   severity=Severity.WARNING if unknown or unread else None, options=options)


def _reads(job: Job, step, parts: list) -> Optional[str]:
    """'rel:line' of the step's code (its entry and the repo modules it imports) that
    reads the key: its last two parts as an attribute chain, `x.model.lr`, or as items,
    `x["model"]["lr"]` (the last part alone for a top-level key); else None."""
    tail = parts[-2:]
    for path in step_files(job, step):
        tree = tree_of(job, path)
        if tree is None:
            continue
        for n in nodes(tree):
            if isinstance(n, ast.Attribute) and n.attr == tail[-1] and \
                    isinstance(getattr(n, "ctx", None), ast.Load):
                chain = dotted(n).split(".")
                if len(tail) == 1 and len(chain) >= 2 or chain[-len(tail):] == tail and \
                        len(chain) > len(tail):
                    return f"{job.rel(path)}:{n.lineno}"
            if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant) and \
                    n.slice.value == tail[-1] and isinstance(n.ctx, ast.Load) and (
                        len(tail) == 1 or isinstance(n.value, ast.Subscript)
                        and isinstance(n.value.slice, ast.Constant)
                        and n.value.slice.value == tail[0]):
                return f"{job.rel(path)}:{n.lineno}"
    return None


def _hydra_finding(step, rel: str, key: str, where: str, read: Optional[str],
                   unknown: list) -> Finding:
    message = (f"The step at {step.where} composes {rel} with `{key}: ???` ({where}) and no "
               f"override sets it: ")
    if read:
        message += (f"{read} reads it, and OmegaConf raises MissingMandatoryValue there "
                    f"(\"Missing mandatory value: {key}\"), after the queue wait.")
    else:
        message += ("OmegaConf raises MissingMandatoryValue where the code reads it (the "
                    "doctor found no read of it in the job's code).")
    severity = None if read and not unknown else Severity.WARNING
    if unknown:
        message += (f" Unless {', '.join(unknown[:3])}, which the doctor cannot resolve, "
                    f"sets it.")
    fix = (f"Set it on the step's command line at {step.where} ({key}=VALUE), or give it a "
           f"value at {where}.")
    options = _append_to_step(step, f"{key}=VALUE", "set it in the job script")
    return Finding(message, Location(step.script.rel, step.line), fix=fix,
                   data={"config": rel, "missing": [[key]], "declared": [where],
                         "read": read, "step": step.where, "unresolved": unknown[:5]},
                   severity=severity, options=options)
