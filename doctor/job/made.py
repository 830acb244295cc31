"""Files the job makes: who writes a path before the step that reads it.

A path the job itself makes is not missing before it starts. The producers the doctor
can show, each named with where it is (`producer` returns the first it finds):
 - a command of the job's scripts, before the step, whose own destination it is: the
   last operand of `cp`/`mv`/`ln`/`install`/`rsync` (or that directory and the source's
   name), a `tee`/`touch` operand, `wget -O`/`curl -o`, a redirect `>`, a `tar` member,
   or (a directory only) a `mkdir` operand; never a source, a comment or other text on
   the line;
 - an earlier step of the same script that names it, or a directory above it, on its
   command line (`python pretrain.py --save checkpoints/run1` before a step that reads
   `checkpoints/run1/config.yaml`);
 - the job this one waits to succeed (`#SBATCH --dependency=afterok:<id>`, `after:`,
   `aftercorr:`): assumed to write it, since the doctor cannot see that job
   (`singleton` and `afterany` are no producers);
 - a Python file of the repo, outside the job's own code, with a write call whose path
   names its directory (a config generator: `output_dir = "grid_search_configs"` …
   `open(os.path.join(output_dir, f"config_{i}.yaml"), "w")`), run by hand before the
   job;
 - a directory above it that git ignores and whose name says it holds outputs
   (`checkpoints/`, `outputs/`, `runs/` …): made by a run, not by the repo. A git-ignored
   `data/` or `cache/` is not one: those hold inputs the job needs before it starts.
The code's own `os.makedirs`/`Path.mkdir` of a directory is found by the caller, which
reads the code (checks/prerequisites.py).
"""
from __future__ import annotations

import ast
import os
import re
import shlex
from pathlib import Path
from typing import Any, Iterator, Optional

from doctor import fs, pyast
from doctor.job.closure import job_rels

# Directory names that hold what a run writes (checkpoints, logs), never its inputs.
OUTPUT_DIRS = {"out", "outs", "output", "outputs", "save", "saved", "saves", "log", "logs",
               "result", "results", "run", "runs", "exp", "exps", "experiment", "experiments",
               "checkpoint", "checkpoints", "ckpt", "ckpts", "wandb", "tensorboard", "tb",
               "lightning_logs", "mlruns"}


def producer(job: Any, script: Any, step: Any, written: str, path: Path) -> Optional[str]:
    """Who makes `path` (`written` in the job) before `step` of `script` runs, named so
    that "… makes it" follows; None when the doctor sees no producer."""
    return (script_writes(step, written) or _earlier_step(job, script, step, path)
            or _dependency(script) or _repo_writer(job, path) or _ignored_output_dir(job, path))


def script_writes(step: Any, written: str, dirs: bool = False) -> Optional[str]:
    """The command of the job's scripts, before `step`, whose own destination is
    `written`: the last operand of cp/mv/install/rsync/ln (or that directory and the
    source's name), tee's and touch's operands, wget -O / curl -o, a `>` target, a tar
    member; a mkdir operand only when `dirs` (a directory is made, never a file in it).
    Text later on the line, a source operand and comments are no writers."""
    want = os.path.normpath(written.rstrip("/")) if written.strip("/") else ""
    if not want:
        return None
    for s in step.scripts:
        last = step.line if s is step.script else None
        for line, text in _lines(s.text):
            if last is not None and line >= last:
                break
            for words in _commands(text):
                if any(os.path.normpath(t.rstrip("/") or "/") == want
                       for t in _targets(words, dirs)):
                    return f"the command at {s.rel}:{line} (`{text.strip()[:60]}`)"
    return None


def _lines(text: str) -> Iterator[tuple]:
    """(first line number, logical line): `\\`-continued lines joined."""
    buf, first = "", 0
    for n, raw in enumerate(text.splitlines(), 1):
        if not buf:
            first = n
        if raw.endswith("\\"):
            buf += raw[:-1] + " "
            continue
        yield first, buf + raw
        buf = ""
    if buf:
        yield first, buf


_SEPARATORS = {"&&", "||", ";", "|", "&", "(", ")", "{", "}", ";;", "|&"}


def _commands(text: str) -> list:
    """The simple commands of one shell line as words (comments dropped; redirections
    kept as `>` words); [] when the line does not tokenize."""
    lex = shlex.shlex(text, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    try:
        tokens = list(lex)
    except ValueError:
        return []
    out: list = [[]]
    for t in tokens:
        if t in _SEPARATORS:
            out.append([])
        else:
            out[-1].append(t)
    return [w for w in out if w]


def _targets(words: list, dirs: bool) -> list:
    """The paths one simple command writes, as written."""
    got: list = []
    plain: list = []
    it = iter(range(len(words)))
    for i in it:
        w = words[i]
        if re.fullmatch(r"\d*(>>?|>\||&>>?)", w) and i + 1 < len(words):
            got.append(words[i + 1])
            next(it, None)
        elif w.startswith(">") and len(w) > 1:
            got.append(w.lstrip(">|"))
        else:
            plain.append(w)
    while plain and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", plain[0]):
        plain.pop(0)   # VAR=value before the command
    if plain and plain[0] in ("sudo", "command", "exec", "srun"):
        plain.pop(0)
    if not plain:
        return got
    cmd, args = os.path.basename(plain[0]), plain[1:]
    ops = [a for a in args if not a.startswith("-")]
    if cmd in ("cp", "mv", "install", "rsync", "ln"):
        target = next((a.split("=", 1)[1] for a in args if a.startswith(
            "--target-directory=")), None)
        if target is None and "-t" in args[:-1]:
            target = args[args.index("-t") + 1]
            ops = [a for a in ops if a != target]
        if target is None and len(ops) >= 2:
            target, ops = ops[-1], ops[:-1]
            got.append(target)
        if target is not None:
            got += [os.path.join(target, os.path.basename(a.rstrip("/"))) for a in ops]
    elif cmd in ("tee", "touch"):
        got += ops
    elif cmd in ("wget", "curl"):
        flags = ("-O", "--output-document") if cmd == "wget" else ("-o", "--output")
        for i, a in enumerate(args):
            if a in flags and i + 1 < len(args):
                got.append(args[i + 1])
            elif a.startswith(flags[1] + "="):
                got.append(a.split("=", 1)[1])
    elif cmd == "tar" and args and ("x" in args[0].lstrip("-") or "--extract" in args):
        # members named after the archive: only those are known to be written
        got += ops[2:] if not args[0].startswith("-") else ops[1:]
    elif cmd == "mkdir" and dirs:
        got += ops
    return got


def _earlier_step(job: Any, script: Any, step: Any, path: Path) -> Optional[str]:
    """An earlier step of the script that names the path or a directory above it."""
    if script is None:
        return None
    for other in job.steps(script):
        if other is step or not other.is_training:
            continue
        if other.line >= step.line and other.script is step.script:
            break
        base = Path(other.cwd) if other.cwd and os.path.isabs(other.cwd) else job.repo
        for arg in other.args:
            value = str(arg).split("=", 1)[-1]
            if not value or "$" in value or value.startswith("-"):
                continue
            made = Path(os.path.normpath(base / value))
            if made == path or (made != base and made in path.parents):
                return f"the earlier step {other.where} (`{other.entry}`, writing {value})"
    return None


def _dependency(script: Any) -> Optional[str]:
    """The job this one waits for to succeed (`afterok:`, `after:`, `aftercorr:` and a
    job id), assumed to write the path: `singleton` only serialises same-named jobs, and
    `afterany`/`afternotok` wait for a job that may have failed."""
    d = script.get("dependency") if script is not None else None
    if d is None or not d.value:
        return None
    if not any(re.fullmatch(r"(afterok|after|aftercorr):[\w$.{}+:]+", part.strip())
               for part in re.split(r"[,?]", str(d.value))):
        return None
    return (f"the job it waits for (--dependency={d.value} at {script.rel}:{d.line}; "
            "assumed: the doctor cannot see that job)")


_OPEN_W = re.compile(r"[wax]")


def _repo_writer(job: Any, path: Path) -> Optional[str]:
    """A repo Python file (not a test, not the job's own code: that runs in the job, not
    before it) with a write call whose path argument names the path's directory (a
    string, or a name bound to one): the script that generates what the job reads."""
    try:
        rel_dir = path.parent.relative_to(job.repo).as_posix()
    except ValueError:
        return None
    if rel_dir in ("", "."):
        return None
    own = set(job_rels(job) or ())
    for p in job.repo_files({".py"}, whole=True):
        rel = job.rel(p)
        if rel in own or re.search(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$", rel):
            continue
        raw = fs.read_bytes(p, job.unreadable)
        if raw is None or rel_dir.encode() not in raw:
            continue
        try:
            tree = pyast.parse(raw)
        except (SyntaxError, ValueError):
            continue
        line = _writes_under(tree, rel_dir)
        if line:
            return (f"{rel}, run before the job (it names {rel_dir} at {rel}:{line} and "
                    "writes there)")
    return None


def _writes_under(tree: ast.AST, rel_dir: str) -> int:
    """The line of the string naming `rel_dir` (or a directory under it) in the path of a
    write call (`open(p, "w")`, makedirs, `.mkdir()`, `.write_text`, `.save(obj, p)`,
    `.to_csv(p)`); 0 when no write call names it."""
    bound: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            bound.setdefault(node.targets[0].id, node.value)
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call):
            continue
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) \
            else ""
        arg: Optional[ast.AST] = None
        if name == "open" and call.args:
            mode = call.args[1] if len(call.args) > 1 else next(
                (k.value for k in call.keywords if k.arg == "mode"), None)
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and \
                    _OPEN_W.search(mode.value):
                arg = call.args[0]
        elif name in ("makedirs", "mkdir") and isinstance(f, ast.Attribute) and \
                f.attr == "mkdir" and not call.args:
            arg = f.value
        elif name in ("makedirs", "mkdir") and call.args:
            arg = call.args[0]
        elif name in ("write_text", "write_bytes") and isinstance(f, ast.Attribute):
            arg = f.value
        elif name == "save" and len(call.args) > 1:
            arg = call.args[1]
        elif name == "to_csv" and call.args:
            arg = call.args[0]
        if arg is None:
            continue
        for expr in [arg] + [bound[n.id] for n in ast.walk(arg)
                             if isinstance(n, ast.Name) and n.id in bound]:
            for c in ast.walk(expr):
                if isinstance(c, ast.Constant) and isinstance(c.value, str) and c.value:
                    v = os.path.normpath(c.value)
                    if v == rel_dir or v.startswith(rel_dir + "/"):
                        return c.lineno
    return 0


def _ignored_output_dir(job: Any, path: Path) -> Optional[str]:
    """The git-ignored output directory above path (inside the repo), or None."""
    try:
        rel = path.relative_to(job.repo)
    except ValueError:
        return None
    parts = rel.parts[:-1]
    for i, part in enumerate(parts):
        if part.lower() not in OUTPUT_DIRS:
            continue
        d = "/".join(parts[:i + 1])
        if job.git("check-ignore", "-q", "--no-index", "--", d + "/").returncode == 0:
            return f"a run (it is under {d}/, an output directory git ignores)"
    return None
