"""Deploy scripts: rsync exclude patterns that drop more than their author meant."""
from __future__ import annotations

import ast
import os
import posixpath
import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator, Optional

from doctor import edits, fs, pyast
from doctor import Finding, Location, Severity, Skip, check
from doctor.job.context import Job
from doctor.model import Edit
from doctor.job.shell import brace_expand, effective_command, expand, split_commands, unquote
from doctor.model import FixOption, edit_steps, run
from doctor.scanners.git import repo_for
from doctor.scanners.rsync import (Command, Exclusions, Rule, Unsupported, parse_command, topmost)

SCRIPT_SUFFIXES = {".sh", ".sbatch", ".slurm"}
PY_SOURCE = (".py", ".pyi", ".pyx", ".pxd")
# `*.o`, `*~`: a suffix glob is meant for every depth; its anchored form is never the intent.
SUFFIX_GLOB = re.compile(r"^\*[^/*?\[\\]*$")
_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


@dataclass
class Invocation:
    script: str          # repo-relative script path
    line: int            # where the rsync command starts
    words: list          # raw words of the rsync command (rsync first)
    argv: list           # expanded words
    unresolved: set      # indices of words that could not be expanded
    cwd: Optional[Path]  # None: unknown (a `cd` the doctor could not follow)


def _script_texts(job: Job) -> list:
    """[(rel, text)] of the job scripts and the repo's shell scripts and Makefiles."""
    out, seen = [], set()
    for s in job.scripts:
        seen.add(fs.realpath(s.path))
        if "rsync" in s.text:   # (as for the repo's scripts below: no rsync, nothing to read)
            out.append((s.rel, s.text))
    for p in job.repo_files(suffixes=SCRIPT_SUFFIXES, names={"Makefile", "makefile",
                                                             "GNUmakefile"}):
        key = fs.realpath(p)
        if key in seen:
            continue
        seen.add(key)
        raw = fs.read_bytes(p, job.unreadable)
        if raw is None:
            continue
        if b"\0" in raw[:8192] or b"rsync" not in raw:
            continue
        text = raw.decode("utf-8", "replace")
        if Path(p).suffix not in SCRIPT_SUFFIXES:
            text = _recipes(text)
        out.append((job.rel(p), text))
    return out


def _recipes(makefile: str) -> str:
    """A Makefile's recipe lines as shell (other lines blank, so line numbers stay)."""
    lines = []
    for line in makefile.split("\n"):
        if line.startswith("\t"):
            lines.append(re.sub(r"^[@+\-]+", "", line[1:]).replace("$$", "$"))
        else:
            lines.append("")
    return "\n".join(lines)


def _invocations(job: Job, rel: str, text: str, notes: list) -> Iterator[Invocation]:
    variables: dict = {}
    cwd: Optional[Path] = job.repo

    def lookup(name: str) -> Optional[str]:
        if name in variables:
            return variables[name]
        return job.login_env.get(name)

    for line, words in split_commands(text):
        if all(_ASSIGN.match(w) for w in words):
            for w in words:
                name, value = _ASSIGN.match(w).groups()  # type: ignore[union-attr]
                e = expand(value, lookup)
                variables[name] = e.text if e.resolved else None  # type: ignore[assignment]
            continue
        eff = effective_command([unquote(w) for w in words])
        if eff is None:
            continue
        start = eff.start
        argv0 = unquote(words[start]) if eff.in_this_shell else ""
        if argv0 in ("export", "readonly", "declare", "local"):
            for w in words[start + 1:]:
                m = _ASSIGN.match(w)
                if m:
                    e = expand(m.group(2), lookup)
                    variables[m.group(1)] = e.text if e.resolved else None  # type: ignore
            continue
        if argv0 in ("cd", "pushd") and cwd is not None:
            target = expand(words[start + 1], lookup) if len(words) > start + 1 else None
            if target is None or not target.resolved:
                notes.append(f"{rel}:{line}: `cd` to a directory the doctor cannot resolve; "
                             "later relative rsync sources are not checked")
                cwd = None
            else:
                cwd = (cwd / os.path.expanduser(target.text)).resolve()
            continue
        if posixpath.basename(unquote(words[start])) != "rsync":
            continue
        # bash brace-expands first: --exclude={'.git','data'} is two --exclude words
        cmd_words = [b for w in words[start:] for b in brace_expand(w)]
        argv, unresolved = [], set()
        for i, w in enumerate(cmd_words):
            e = expand(w, lookup)
            argv.append(e.text)
            if not e.resolved or e.parts:
                unresolved.add(i)
        yield Invocation(rel, line, cmd_words, argv, unresolved, cwd)


def _python_invocations(job: Job, notes: list) -> Iterator[Invocation]:
    """The rsync commands the repo's Python runs, read like the shell lines they stand
    for: an argv list (`subprocess.run(["rsync", "-a", "--exclude", "data", src, dst])`,
    any call whose first argument is a list or tuple that starts with "rsync"), and a
    command string a shell runs (`os.system("rsync ...")`, `shell=True`). An element
    that is not a string constant is unresolved: noted, never guessed. It runs from the
    repo root, as the job scripts are taken to."""
    for p in job.repo_files(suffixes={".py"}):
        raw = fs.read_bytes(p, job.unreadable)
        if raw is None or b"rsync" not in raw:
            continue
        try:
            tree = pyast.parse(raw)
        except (SyntaxError, ValueError):
            continue
        rel = job.rel(p)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            arg = node.args[0]
            if isinstance(arg, (ast.List, ast.Tuple)) and arg.elts and \
                    posixpath.basename(_const(arg.elts[0]) or "") == "rsync":
                if any(isinstance(e, ast.Starred) for e in arg.elts):
                    notes.append(f"{rel}:{node.lineno}: rsync argv with a `*list`; not checked")
                    continue
                argv = [_const(e) for e in arg.elts]
                unresolved = {i for i, v in enumerate(argv) if v is None}
                words = [shlex.quote(v) if v is not None else ast.unparse(e)
                         for v, e in zip(argv, arg.elts)]
                yield Invocation(rel, node.lineno, words,
                                 [v if v is not None else w for v, w in zip(argv, words)],
                                 unresolved, job.repo)
            elif _const(arg) and "rsync" in str(_const(arg)) and _runs_shell(node):
                for inv in _invocations(job, rel, str(_const(arg)), notes):
                    yield replace(inv, line=node.lineno + inv.line - 1)


def _const(node: ast.AST) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None


def _runs_shell(call: ast.Call) -> bool:
    """os.system / os.popen, or a call with shell=True: its string is a shell line."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else \
        call.func.id if isinstance(call.func, ast.Name) else ""
    return name in ("system", "popen") or any(
        k.arg == "shell" and isinstance(k.value, ast.Constant) and k.value.value is True
        for k in call.keywords)


def _anchored(rule: Rule, source: str) -> str:
    if source.endswith("/") or posixpath.basename(source) in (".", ".."):
        return "/" + rule.pattern
    return "/" + posixpath.basename(source.rstrip("/")) + "/" + rule.pattern


@check("rsync-exclude-unanchored", title="An unanchored rsync exclude drops nested source files",
       severity="error", tags=("rsync", "deploy", "repo"), needs=("repo", "sbatch"), timeout=60)
def rsync_exclude_unanchored(job: Job) -> Iterator[Finding]:
    """An rsync exclude without a leading `/` also drops same-named paths deeper in the tree.

    Finds every rsync command in the job scripts and the repo's `*.sh`,
    `*.sbatch`, `*.slurm` files and Makefile recipes (brace-expanded as bash does:
    `--exclude={'.git','data'}` is two excludes), and the argv lists and shell strings
    of the repo's Python (`subprocess.run(["rsync", "--exclude", "data", ...])`, read
    like the shell line they stand for), emulates rsync's filter
    rules (proven against the real rsync) on the local source directory, and
    lists the git-tracked files that an unanchored exclude (`--exclude data`,
    `-f '- data'`, a line of an `--exclude-from` file) drops but its anchored
    form (`/data`) would keep. Variables and command substitutions the doctor
    cannot resolve are skipped with a note, never guessed. Suffix globs such
    as `*.o` or `*~` are meant for every depth and are not reported.

    ## Why it matters
    rsync matches a pattern without a leading `/` against every path
    component at any depth: `--exclude 'data'` meant for the top-level
    `data/` also drops `src/mypkg/data/`, the package's data module. Nothing
    warns; the job dies on the cluster with
    `ModuleNotFoundError: No module named 'mypkg.data'`, and `ls` on the
    login node looks fine.

    ## How to fix
    Anchor the pattern to the top of the transfer with a leading `/`
    (for a source without a trailing slash, include its name: `/code/data`):

        rsync -avz --exclude '/data' ./ cluster:/scratch/project/code/

    Check what would be sent with `rsync -avn ...` before deploying.
    `doctor fix` anchors the pattern where it is written (the word in the script,
    quoting kept, or the line of the `--exclude-from` file in the repo).
    """
    notes: list = []
    invocations = [inv for rel, text in _script_texts(job)
                   for inv in _invocations(job, rel, text, notes)]
    invocations += _python_invocations(job, notes)
    if not invocations:
        raise Skip("no rsync command in the job scripts, the repo's shell scripts or its "
                   "Python")
    tracked = _tracked(job)
    analysed = 0
    for inv in invocations:
        try:
            cmd = parse_command(inv.argv, _reader(inv))
        except (Unsupported, OSError) as exc:
            notes.append(f"{inv.script}:{inv.line}: rsync command not checked: {exc}")
            continue
        for rule in list(cmd.rules.rules):
            if cmd.rule_words.get(id(rule)) in inv.unresolved:
                notes.append(f"{inv.script}:{inv.line}: rule {inv.words[cmd.rule_words[id(rule)]]}"
                             " has an unresolved variable; left out")
                cmd.rules.rules.remove(rule)
        found: list = []
        for idx, source in cmd.sources:
            src = _local_source(job, inv, idx, source, notes)
            if src is None:
                continue
            analysed += 1
            found += _findings(job, inv, cmd, source, src, tracked)
        yield from _with_edits(job, inv, cmd, found)
    if notes:
        job.record_fact("rsync_exclude_notes", notes)
    if not analysed:
        raise Skip("no rsync command with a local source directory could be checked"
                   + (": " + "; ".join(notes[:3]) if notes else ""))


def _reader(inv: Invocation):
    def read(path: str) -> bytes:
        if "$" in path or "`" in path:
            raise Unsupported(f"filter file {path} cannot be resolved (a variable or command "
                              "substitution); its rules are not checked")
        if inv.cwd is None and not os.path.isabs(path):
            raise Unsupported(f"cannot locate {path}: unknown working directory")
        full = Path(inv.cwd or "/") / os.path.expanduser(path)
        data = full.read_bytes()
        fs.note_read(full)  # an input: no report goes over it
        return data
    return read


def _local_source(job: Job, inv: Invocation, idx: int, source: str, notes: list) -> Optional[Path]:
    where = f"{inv.script}:{inv.line}"
    if idx in inv.unresolved:
        notes.append(f"{where}: source {inv.words[idx]} cannot be resolved; not checked")
        return None
    if source.startswith("rsync://") or re.match(r"^[^/]*:", source):
        return None  # a remote source: nothing local to emulate
    if inv.cwd is None and not os.path.isabs(source):
        notes.append(f"{where}: source {source} is relative to an unknown directory")
        return None
    path = Path(fs.realpath(Path(inv.cwd or "/") / os.path.expanduser(source)))
    if not fs.is_dir(path):
        return None
    try:
        path.relative_to(job.repo)
    except ValueError:
        notes.append(f"{where}: source {source} is outside the repository; not checked")
        return None
    return path


def _tracked(job: Job) -> set:
    try:  # the run's GitRepo: its index is the one the git-* checks read
        return repo_for(job).tracked_paths()
    except Skip:
        return {job.rel(p) for p in job.repo_files(whole=True)}


def _findings(job: Job, inv: Invocation, cmd: Command, source: str, src: Path,
              tracked: set) -> Iterator[tuple]:
    """(rule, its anchored form, the finding) for each exclude that drops tracked files."""
    trailing = source.endswith("/") or posixpath.basename(source) in (".", "..")
    walk_src = str(src) + ("/" if trailing else "")
    # names in the transfer → repo-relative paths
    base_rel = job.rel(src) if trailing else job.rel(src.parent)
    base_rel = "" if base_rel == "." else base_rel + "/"
    candidates = [r for r in cmd.rules.rules if r.action == "-" and not r.anchored
                  and not r.negate and r.origin != "-C" and not SUFFIX_GLOB.match(r.pattern)]
    if not candidates:
        return
    # one walk of the tree for every candidate rule, keeping what each excluded
    walk = Exclusions(walk_src, cmd.rules, follow_links=cmd.follow_links, only=candidates)
    for rule in candidates:
        fixed = Rule("-", _anchored(rule, source), origin=rule.origin)
        dropped = set(walk.sent_if_replaced(rule, fixed))
        lost = sorted(base_rel + n for n in dropped if not n.endswith("/")
                      and base_rel + n in tracked)
        if not lost:
            continue
        python = [p for p in lost if p.endswith(PY_SOURCE)]
        top = topmost(dropped)
        holding = [d for d in top if any(base_rel + d == p or (d.endswith("/") and
                                         p.startswith(base_rel + d)) for p in lost)]
        yield rule, fixed, _finding(inv, cmd, rule, fixed, source, top, holding, lost, python)


def _finding(inv: Invocation, cmd: Command, rule: Rule, fixed: Rule, source: str,
             dropped: list, holding: list, lost: list, python: list) -> Finding:
    """`dropped`: every topmost dropped path (data); `holding`: those with tracked files."""
    shown = ", ".join(holding[:5]) + (f" and {len(holding) - 5} more" if len(holding) > 5 else "")
    n = len(python or lost)
    kind = f"{n} {'Python source' if python else 'tracked'} file{'s' if n > 1 else ''}"
    msg = (f"rsync exclude '{rule.pattern}' is unanchored: it also drops nested "
           f"{shown} ({kind}, e.g. {(python or lost)[0]}); the anchored '{fixed.pattern}' "
           "keeps them")
    in_file = cmd.rule_files.get(id(rule))
    idx = cmd.rule_words[id(rule)]
    if in_file:
        fix = (f"In {in_file[0]}, line {in_file[1]}: change `{rule.pattern}` to "
               f"`{fixed.pattern}` (a leading / anchors it to the top of the transfer).")
        script = f"{in_file[1]}s|^{_sed(rule.pattern)}$|{_sed(fixed.pattern)}|"
        commands: tuple = (f"sed -i {shlex.quote(script)} {shlex.quote(in_file[0])}",)
        options: tuple = (FixOption((run("in the repo", *commands),)),)
        location = Location(inv.script, inv.line)
    else:
        words = list(inv.words)
        word = inv.argv[idx]
        head, sep, tail = word.rpartition(rule.pattern)
        words[idx] = shlex.quote(head + fixed.pattern + tail if sep else word)
        fix = (f"Anchor the pattern with a leading / so that only the top-level "
               f"{rule.pattern} is excluded.")
        commands = (" ".join(words),)
        options = ()
        location = Location(inv.script, inv.line)
    return Finding(msg, location=location, fix=fix, commands=commands, options=options,
                   data={"pattern": rule.pattern, "command_line": inv.line, "source": source,
                         "dropped": dropped},
                   severity=Severity.ERROR if python else Severity.WARNING)


def _sed(text: str) -> str:
    return re.sub(r"([][\\.*^$|&])", r"\\\1", text)


# ---- the edit: anchor the pattern where it is written (`doctor fix`) ----------
_SAFE_PREFIX = re.compile(r"[\w./+@%,:=-]+")


def _with_edits(job: Job, inv: Invocation, cmd: Command, found: list) -> Iterator[Finding]:
    """The findings, each with the edit that anchors its pattern: one edit per line of
    the script (all the command's offending words on that line), or the line of the
    --exclude-from file. A rule whose sources want different anchored forms (two
    sources without a trailing slash) gets none: one pattern cannot say both."""
    if inv.script.endswith(PY_SOURCE):   # an argv list: no shell line or word to edit
        yield from (replace(f, commands=()) for _, _, f in found)
        return
    forms: dict = {}
    for rule, fixed, _ in found:
        forms.setdefault(id(rule), set()).add(fixed.pattern)
    anchor = {k: v.pop() for k, v in forms.items() if len(v) == 1}
    words: dict = {}   # id(rule) -> (line, start, end, new word)
    for rule, _, _ in found:
        if id(rule) in anchor and id(rule) not in words and id(rule) not in cmd.rule_files:
            spot = _word_spot(job, inv, cmd.rule_words[id(rule)], rule, anchor[id(rule)])
            if spot:
                words[id(rule)] = spot
    by_line: dict = {}
    for line, start, end, new in set(words.values()):
        by_line.setdefault(line, []).append((start, end, new))
    line_edits = {}
    lines = (edits.read_lines(job, inv.script) or []) if by_line else []
    for line, spots in by_line.items():
        body = lines[line - 1].rstrip("\r\n")
        for start, end, new in sorted(spots, reverse=True):
            body = body[:start] + new + body[end:]
        line_edits[line] = edits.replace_line(job, inv.script, line, body,
                                              "anchor the rsync exclude pattern")
    for rule, _, finding in found:
        if id(rule) not in anchor:
            yield finding
            continue
        edit = (_file_edit(job, inv, cmd.rule_files[id(rule)], rule, anchor[id(rule)])
                if id(rule) in cmd.rule_files else
                line_edits.get(words[id(rule)][0]) if id(rule) in words else None)
        yield replace(finding, edits=(edit,), options=(FixOption(edit_steps((edit,))),)) \
            if edit else finding


def _word_spot(job: Job, inv: Invocation, idx: int, rule: Rule, anchored: str) -> Optional[tuple]:
    """(line, start, end, anchored word) of the command's word `idx` in the script,
    quoting kept; None unless the word is found exactly once in the command's lines."""
    prefix = anchored[:len(anchored) - len(rule.pattern)]
    if not edits.owned(job, inv.script) or not anchored.endswith(rule.pattern) or \
            not _SAFE_PREFIX.fullmatch(prefix):
        return None
    lines = edits.read_lines(job, inv.script) or []
    raw, value = inv.words[idx], inv.argv[idx]
    hits = []
    n = inv.line
    while 1 <= n <= len(lines):
        text = lines[n - 1].rstrip("\r\n")
        for m in re.finditer(r"(?<!\S)" + re.escape(raw), text):
            word = edits.shell_word(text, m.start())
            if word and word[0] == m.end() and word[1] == value:
                hits.append((n, text, m.start(), word))
        if not text.endswith("\\"):
            break
        n += 1
    if len(hits) != 1 or not value.endswith(rule.pattern):
        return None
    line, text, start, (end, _, at) = hits[0]
    k = len(value) - len(rule.pattern)
    new_text = text[:at[k]] + prefix + text[at[k]:]
    check = edits.shell_word(new_text, start)
    if not check or check[1] != value[:k] + prefix + value[k:]:
        return None
    return line, start, end, new_text[start:check[0]]


def _file_edit(job: Job, inv: Invocation, where: tuple, rule: Rule,
               anchored: str) -> Optional[Edit]:
    """The --exclude-from file's line, anchored; only a file inside the repo whose line
    breaks rsync and the doctor count alike (no lone \\r)."""
    name, lineno = where
    if inv.cwd is None and not os.path.isabs(name) or "$" in name:
        return None
    rel = job.rel(Path(inv.cwd or "/") / os.path.expanduser(name))
    lines = edits.read_lines(job, rel) if edits.owned(job, rel) and \
        not os.path.isabs(rel) else None
    if not lines or lineno > len(lines) or \
            any("\r" in re.sub(r"\r?\n$", "", line) for line in lines[:lineno]):
        return None
    body = lines[lineno - 1].rstrip("\r\n")
    head = body[:len(body) - len(rule.pattern)]
    if not body.endswith(rule.pattern) or head not in ("", "- "):
        return None
    return edits.replace_line(job, rel, lineno, head + anchored,
                              "anchor the rsync exclude pattern")
