"""The job's code: the Python files its steps run, and what Python puts on their path.

A full run's code checks judge what the job runs, not every .py file of the repo: the
entry of every step of every job script (a script path, `-m module`, a console script
of the repo's own package, as doctor/job/steps.py finds them) and the repo modules it
imports, transitively (`job_files`). A file no step reaches is never an `error`; a run
with no step whose entry is a file of the repo scans the repo, tests left out, and its
findings in code are at most warnings (`cap`, applied where the runner assembles a
check's result).

`sys_path_edits` reads the `sys.path.append/insert(...)` an entry makes before its
imports, as data: the same reading serves the closure and package-not-importable.
"""
from __future__ import annotations

import ast
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

from doctor import fs
from doctor.job.pyread import (dotted, dynamic_packages, imported_files_text, imports_named,
                                package_modules, read_source, tree_of)

TEST_DIRS = frozenset({"tests", "test", "testing", "unit_tests", "functional_tests"})


def is_test(rel: str) -> bool:
    """A pytest file or a file under a tests/ directory: the job only when a step runs
    it (an entry that imports it brings it into the closure)."""
    *dirs, name = rel.split("/")
    return (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
            or any(d in TEST_DIRS for d in dirs))


def entries(job: Any) -> list:
    """[(path, step, guess)]: the repo files the steps of every job script run (each
    step, not only the training one: a preprocessing step's code is the job's too).
    `guess`: the entry is `$DIR/rest/x.py` with DIR a variable the doctor cannot read,
    taken as the repo file `rest/x.py` (or `x.py`) names when there is one: the job's
    code if DIR is this checkout, which nothing shows (`${MEGATRON_CODE_DIR}/
    pretrain_gpt.py`)."""
    def find() -> list:
        out: dict = {}
        for script in job.scripts:
            for step in job.steps(script):
                path = job.entry_file(step)
                if path is not None and job.rel(path) != str(path):
                    out[job.rel(path)] = (Path(path), step, False)
                    continue
                rel = _guessed(job, step)
                if rel is not None:
                    out.setdefault(rel, (job.repo / rel, step, True))
        return list(out.values())
    return job.memo("job_entries", find)


def _guessed(job: Any, step: Any) -> Optional[str]:
    """The repo file `$DIR/a/b.py` may mean: the longest tail after the last part that
    holds a variable, that is a file of the repo (a/b.py, else b.py)."""
    entry = step.entry
    if not entry or step.entry_is_module or not entry.endswith(".py") or "$" not in entry:
        return None
    parts = entry.split("/")
    tail = parts[max(i for i, p in enumerate(parts) if "$" in p or "`" in p) + 1:]
    known = job.every_rel_set()
    return next(("/".join(tail[i:]) for i in range(len(tail))
                 if "/".join(tail[i:]) in known), None)


def job_files(job: Any) -> Optional[list]:
    """[Path] of the Python files the job's steps run: every entry and the repo modules
    it imports, transitively; None when no step has an entry that is a file of the repo
    (the code checks then scan the repo, and warn at most)."""
    def find() -> Optional[list]:
        found = entries(job)
        return _closure(job, [(p, s) for p, s, _ in found]) if found else None
    return job.memo("job_files", find)


def shown_rels(job: Any, dynamic: bool = False, unsure: bool = False) -> frozenset:
    """The files of job_files that an entry the doctor read (not guessed) reaches; with
    `dynamic`, through the modules a dynamic import may name too; with `unsure`, the
    classes of configs not tied to the job too."""
    def find() -> frozenset:
        sure = [(p, s) for p, s, guess in entries(job) if not guess]
        return frozenset(job.rel(p) for p in _closure(job, sure, dynamic, unsure)) \
            if sure else frozenset()
    return job.memo(("shown_rels", dynamic, unsure), find)


def step_files(job: Any, step: Any) -> list:
    """[Path] of the Python files one step runs: its entry and what that imports, in
    the repo; [] when its entry is not a file of the repo."""
    path = job.entry_file(step)
    if path is None or job.rel(path) == str(path):
        return []
    return job.memo(("step_files", job.rel(path), step.entry_is_module, step.cwd),
                    lambda: _closure(job, [(Path(path), step)]))


def _closure(job: Any, found: list, dynamic: bool = True, unsure: bool = True) -> list:
    """The entries of `found` [(path, step)] and the repo files their imports name, as
    modules of the repo root, src/, each entry's sys.path (its directory, or the working
    directory for -m, and its sys.path edits), or relative to the importing file.
    `dynamic`: every module of a package a dynamic import names with a variable
    (`import_module(f"models.{name}")`); `unsure`: the classes the configs instantiate
    when which configs the job loads is unknown (_targets)."""
    known = job.every_rel_set()
    extra: list = []
    for path, step in found:
        extra.append(job.rel(path.parent) if not step.entry_is_module else
                     job.rel(_cwd(job, step)))
        extra += [job.rel(d) for d, _ in sys_path_edits(job, path, _cwd(job, step))]
        pp = step.env.get("PYTHONPATH") if step.env is not None else None
        for part in (pp.value or "").split(os.pathsep) if pp is not None else ():
            if part and "$" not in part:   # the job's PYTHONPATH, where it is in the repo
                extra.append(job.rel(Path(part) if os.path.isabs(part)
                                     else _cwd(job, step) / part))
    roots = tuple(dict.fromkeys(r.rstrip("/") + "/" if r not in ("", ".") else ""
                                for r in extra if not r.startswith("/")))
    todo = [path for path, _ in found]
    # the classes the configs instantiate (`_target_: pkg.models.Net`) run too
    sure, other = _targets(job, found)
    targets = [(0, t.rpartition(".")[0], (t.rpartition(".")[2],))
               for t, _ in sure + (other if unsure else [])]
    todo += [job.repo / r for r in imports_named(targets, "", known, roots)]
    seen: dict = {}
    texts = job.memo("closure_bytes", dict)   # str path → bytes, for raw_texts
    links = job.memo("closure_links", dict)   # (rel, roots) → (imported, dynamic)
    dynamics = job.memo("dynamic_imports", dict)   # rel → (importer, line, package)
    while todo:
        path = todo.pop()
        rel = job.rel(path)
        if rel in seen or rel.startswith("/"):
            continue
        seen[rel] = path
        # the imports read from the bytes: only the files a check asks about are parsed
        text = texts.get(str(path))
        if text is None:
            text = texts.setdefault(str(path), read_source(path, job.unreadable))
        if text is None:
            continue
        hit = links.get((rel, roots))
        if hit is None:
            hit = links[(rel, roots)] = (
                imported_files_text(text, rel, known, roots),
                [(m, line, pkg) for pkg, line in dynamic_packages(text)
                 for m in package_modules(pkg, rel, known, roots)])
        todo += [job.repo / r for r in hit[0] if r not in seen]
        for m, line, pkg in hit[1] if dynamic else ():
            dynamics.setdefault(m, (rel, line, pkg))
            if m not in seen:
                todo.append(job.repo / m)
    return list(seen.values())


_TARGET = re.compile(r"""(?m)(?:^|[\s{,])(?:_target_|class_path)\s*:\s*['"]?([A-Za-z_][\w.]*)""")


def _targets(job: Any, found: list) -> tuple:
    """([(dotted name, config rel)] the job's configs instantiate: Hydra's `_target_`,
    Lightning CLI's `class_path`, in the configs its training steps load (Hydra's
    defaults composed, doctor/job/stepconfigs.py) and the .yaml files a step names on its
    command line (read as text: composing the configs reads the code, whose closure
    this is); those of the repo's other configs, when the job loads none the doctor
    can see (else []): a class there runs only if the job loads that config)."""
    def find() -> tuple:
        loaded = job.configs_loaded() + _named_configs(job, found)
        other = [] if loaded else [cfg.path for cfg in job.config_files]
        return _read_targets(job, loaded), _read_targets(job, other)
    return job.memo(("config_targets", tuple((str(p), s.line, s.script.rel if s.script
                                               else None) for p, s in found)), find)


def _read_targets(job: Any, paths: list) -> list:
    out: list = []
    for p in dict.fromkeys(paths):
        text = fs.read_text(p, job.unreadable, 1 << 20) or ""   # an input: read as data
        out += [(t, job.rel(p)) for t in _TARGET.findall(text) if "." in t]
    return out


def _named_configs(job: Any, found: list) -> list:
    """The .yaml files a step names on its command line."""
    paths: list = []
    for _, step in found:
        bases = [_cwd(job, step), step.script.path.parent, job.repo]
        for arg in step.args:
            value = str(arg).split("=", 1)[-1]
            if value.endswith((".yaml", ".yml")) and "$" not in value:
                paths += [b / value for b in bases if fs.is_file(b / value)][:1]
    return paths


def job_rels(job: Any) -> Optional[frozenset]:
    files = job_files(job)
    return None if files is None else job.memo(
        "job_rels", lambda: frozenset(job.rel(p) for p in files))


def _cwd(job: Any, step: Any) -> Path:
    """The step's working directory; a relative one is the submit directory's (the
    repo root)."""
    return job.repo / step.cwd if step.cwd else job.repo


# ---- sys.path as the entry edits it ------------------------------------------------
def sys_path_edits(job: Any, entry: Path, cwd: Path) -> list:
    """(directory, first) for each directory an entry puts on sys.path when it runs
    (`first`: `insert(0, …)`, ahead of its own directory): `sys.path.append/insert/
    extend` and `site.addsitedir` with `os.getcwd()`, `os.path.dirname(__file__)` and its
    `..` joins, `Path(__file__).parent(.parent)`, `.resolve()`, `os.path.abspath/
    realpath`, a literal string (a relative one from `cwd`, as Python reads it), or a
    module-level name assigned one of those before (`ROOT = Path(__file__).parents[1]`).
    Read as data; an argument in another form is skipped here (an import through it may
    be missed, never invented) and named by sys_path_unread."""
    return list(dict.fromkeys((d, first) for d, first, _ in _read_edits(job, entry, cwd)[0]))


def sys_path_edit_lines(job: Any, entry: Path, cwd: Path) -> list:
    """(directory, first, line) of each edit sys_path_edits reads: an import at the
    entry's top level runs before the edits below it, which do not help it."""
    return _read_edits(job, entry, cwd)[0]


def top_level_import_lines(job: Any, entry: Path) -> dict:
    """Dotted module name → the lines of the entry's top-level `import`/`from … import`
    statements of it (not those in a function, which may run later, nor under a `try`
    or `if`, whose order the doctor does not follow)."""
    tree = tree_of(job, entry)
    out: dict = {}
    for st in tree.body if isinstance(tree, ast.Module) else ():
        names = [a.name for a in st.names] if isinstance(st, ast.Import) else \
            [st.module] if isinstance(st, ast.ImportFrom) and st.level == 0 and st.module \
            else []
        for n in names:
            out.setdefault(n, []).append(st.lineno)
    return out


def sys_path_unread(job: Any, entry: Path) -> list:
    """`file:line (code)` of each sys.path edit of the entry whose directory the doctor
    cannot read (`sys.path.append(args.root)`): a module the job imports through it may
    be found there, so a lookup that misses it is not proof."""
    return _read_edits(job, entry, job.repo)[1]


PATH_EDITS = ("sys.path.append", "sys.path.insert", "sys.path.extend", "site.addsitedir")


def _read_edits(job: Any, entry: Path, cwd: Path) -> tuple:
    tree = tree_of(job, entry)
    if not isinstance(tree, ast.Module):
        return [], []
    out: list = []
    unread: list = []
    names: dict = {}   # module-level name → the path it holds, as assigned so far
    for st in _module_statements(tree.body):
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                isinstance(st.targets[0], ast.Name):
            value = _path_value(st.value, entry, cwd, names)
            if value is None:
                names.pop(st.targets[0].id, None)
            else:
                names[st.targets[0].id] = value
            continue
        call = st.value if isinstance(st, ast.Expr) else None
        if not isinstance(call, ast.Call) or dotted(call.func) not in PATH_EDITS:
            continue
        insert = dotted(call.func) == "sys.path.insert"
        # insert(0, X) puts X before the entry's directory; a later index, append: after
        first = insert and bool(call.args) and isinstance(call.args[0], ast.Constant) \
            and call.args[0].value == 0
        for arg in call.args[1:] if insert else call.args[:1]:
            values = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
            for v in values:
                d = _path_value(v, entry, cwd, names)
                if d is not None:
                    out.append((Path(os.path.normpath(d)), first, st.lineno))
                else:
                    unread.append(f"{job.rel(entry)}:{st.lineno} "
                                  f"(`{ast.unparse(call)[:80]}`)")
    return out, unread


def _module_statements(body: list) -> list:
    """Statements run when the module runs, in order: the top level, and the blocks of
    a top-level `if`/`try`/`with` (not functions: they may never be called)."""
    out: list = []
    for st in body:
        out.append(st)
        if isinstance(st, (ast.If, ast.With)):
            out += _module_statements(st.body + getattr(st, "orelse", []))
        elif isinstance(st, ast.Try):
            out += _module_statements(st.body + st.orelse + st.finalbody)
    return out


def _path_value(node: ast.AST, entry: Path, cwd: Path,
                names: Optional[dict] = None) -> Optional[str]:
    """The path a sys.path argument evaluates to, or None when it is not one of the
    forms read as data; `names`: module-level names already bound to a path."""
    names = names or {}

    def value(n: ast.AST) -> Optional[str]:
        return _path_value(n, entry, cwd, names)

    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if os.path.isabs(node.value) else str(cwd / node.value)
    if isinstance(node, ast.Name):
        return str(entry) if node.id == "__file__" else names.get(node.id)
    if isinstance(node, ast.Call):
        name = dotted(node.func)
        if name in ("os.getcwd", "Path.cwd", "pathlib.Path.cwd") and not node.args:
            return str(cwd)
        if name in ("os.path.abspath", "os.path.realpath", "os.path.normpath", "str",
                    "os.fspath", "Path", "pathlib.Path") \
                and len(node.args) == 1:
            return value(node.args[0])
        if name == "os.path.dirname" and len(node.args) == 1:
            inner = value(node.args[0])
            return os.path.dirname(inner) if inner is not None else None
        if name == "os.path.join" and node.args:
            parts = [value(node.args[0])] + [
                a.value if isinstance(a, ast.Constant) and isinstance(a.value, str)
                else (os.pardir if dotted(a) == "os.path.pardir" else None)
                for a in node.args[1:]]
            return None if None in parts else os.path.join(*parts)   # type: ignore[arg-type]
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("resolve", "absolute") \
                and not node.args:
            return value(node.func.value)
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        inner = value(node.value)
        return os.path.dirname(inner) if inner is not None else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and \
            node.value.attr == "parents" and isinstance(node.slice, ast.Constant) and \
            isinstance(node.slice.value, int) and node.slice.value >= 0:   # p.parents[1]
        inner = value(node.value.value)
        for _ in range(node.slice.value + 1 if inner is not None else 0):
            inner = os.path.dirname(inner)   # type: ignore[type-var]
        return inner
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):   # Path(...) / ".."
        left = value(node.left)
        right = node.right.value if isinstance(node.right, ast.Constant) and \
            isinstance(node.right.value, str) else None
        return os.path.join(left, right) if left is not None and right is not None else None
    return None


def _dynamic_why(job: Any, rel: str) -> str:
    """Why a file reached through a dynamic import is the job's only maybe."""
    dynamics = job.memo("dynamic_imports", dict)
    # (a module the dynamic one imports: the first dynamic import stands for the link)
    importer, line, pkg = dynamics.get(rel) or next(iter(dynamics.values()), ("?", 0, "?"))
    return (f"the job runs this file only if the module name that {importer}:{line} "
            f"imports (`{pkg}.` and a variable) names it, which the doctor cannot see")


# ---- the cap ------------------------------------------------------------------------
def cap(job: Any, findings: list, default: Any) -> list:
    """Findings in a Python file that no step of the job runs: at most warnings, each
    saying why (a run with job scripts judges their code; one without any scans the
    repo, and no job script ties its files in; a file reached only from a guessed entry
    is the job's only if the guess is). `default`: the check's severity."""
    from doctor.model import Severity

    if job.scope is not None or not any(
            f.location is not None and str(f.location.path).endswith(".py") for f in findings):
        return findings
    try:
        tied, shown = job_rels(job), shown_rels(job)
        dyn, cfg = shown_rels(job, dynamic=True), shown_rels(job, dynamic=True, unsure=True)
    except Exception:   # (a step the doctor cannot read is the steps' checks' to report)
        return findings
    out = []
    for f in findings:
        rel = str(f.location.path) if f.location is not None else ""
        why = None
        if not rel.endswith(".py") or rel in shown:
            pass
        elif tied is None:
            why = ("no job script ties this file in: the repo has none whose steps run "
                   "a file of it, so its code was scanned whole")
        elif rel not in tied:
            why = "no step of the job scripts runs or imports this file"
        elif rel in dyn:
            why = _dynamic_why(job, rel)
        elif rel in cfg:
            named = sorted({f"`{t}` in {c}" for t, c in _targets(job, [
                (p, s) for p, s, g in entries(job) if not g])[1]})
            why = (f"the job runs this file only if it loads the config that instantiates "
                   f"it ({', '.join(named[:2])}); which configs it loads, the doctor "
                   f"cannot see")
        else:
            guessed = [f"{s.entry} ({s.where})" for p, s, g in entries(job) if g]
            why = (f"the job runs this file only if the variable in "
                   f"{' or '.join(guessed[:2])} is this checkout, which the doctor cannot see")
        if why is not None:
            f = replace(f, severity=min(f.severity or default, Severity.WARNING),
                        message=f"{f.message} ({why})")
        out.append(f)
    return out
