"""A .gitignore pattern hides a file the job's configs or code need from every clone."""
from __future__ import annotations

import ast
import os
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

from doctor import Finding, Location, Severity, check
from doctor import fs
from doctor.job.context import Job
from doctor.model import FixOption, run
from doctor.job.sources import python_trees, trees_mentioning
from doctor.job.stepconfigs import plain_hydra, step_configs
from doctor.scanners.git import GitRepo, checked, repo_for

IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError", "Exception", "BaseException")


@dataclass(frozen=True)
class Need:
    """`file` is needed by what stands at `by` (repo-relative path, line)."""
    file: Path
    by: tuple
    what: str
    exact: bool          # False: the reference may mean another file (says `link`)
    link: str = ""


@dataclass(frozen=True)
class Hidden:
    """An untracked needed file and the .gitignore line that ignores it."""
    path: str            # relative to job.repo
    source: str          # the ignore file, relative to the git top level (or absolute)
    line: int
    pattern: str
    component: str       # the ignored file or leading directory, relative to job.repo


@check("gitignore-hides-source", title="A .gitignore pattern hides a file the job needs",
       severity="error", tags=("git", "repo"), needs=("repo", "git", "configs", "sbatch"),
       timeout=60)
def gitignore_hides_source(job: Job) -> Iterator[Finding]:
    """A file the job needs is ignored by an unanchored `.gitignore` pattern and not tracked.

    The needed files are those the job model resolves: every config a Hydra
    composition reads (the primary config and each `defaults:` entry, as
    doctor/job/hydra.py composes it for the job's steps and for `@hydra.main`
    entries), the `--config` files a job step names, and the repo modules the
    Python code imports (relative imports, and absolute ones that resolve in
    the repo root, `src/` or the importer's directory; imports guarded by
    `try/except ImportError` are left out). `git check-ignore -v --no-index`
    decides which are ignored and by which line; a tracked file (force-added)
    is fine. Only an unanchored pattern (no `/` but a trailing one, or a
    leading `**/`) that matches deeper than its own directory is reported: a
    pattern that names the file where it stands looks deliberate (a local
    secrets file, a generated config).

    It is a warning when the reference could mean another file: a relative
    `--config` that exists under more than one of the directories the step
    may start in, or an import that resolves only if the repo root or the
    importer's directory is on `sys.path`.

    ## Why it matters
    An ignore line such as `data` (meant for the top-level data directory)
    also matches `configs/data/` and `src/pkg/data/`. Locally everything
    works, because the files are on disk; `git status` never shows them, so
    they are never committed, and the fresh clone on the cluster lacks them:
    Hydra stops with `Could not find 'data/mnist'` or Python with
    `ModuleNotFoundError`, after the queue wait.

    ## How to fix
    Anchor the pattern to the directory it was meant for (`/data/` instead of
    `data`), then add and commit the files it hid:

        sed -i '3c\\/data/' .gitignore
        git add -- configs/data/mnist.yaml
        git commit -m 'Track configs/data'

    Or, to keep the pattern, force-add the file (`git add -f`).
    """
    repo = repo_for(job)
    needs: dict = {}
    for need in _config_needs(job) + _import_needs(job):
        rel = job.rel(need.file)
        if not os.path.isabs(rel) and fs.is_file(need.file, job.unreadable):
            needs.setdefault(rel, []).append(need)
    groups: dict = {}   # one finding per ignore line and the directory (or file) it hides
    for h in _hidden(repo, job, sorted(needs)):
        if not _deliberate(repo, h):
            groups.setdefault((h.source, h.line, h.component), []).append(h)
    for hidden in groups.values():
        yield _finding(repo, hidden, needs)


# ---- what the job needs ----------------------------------------------------------------

def _config_needs(job: Job) -> list:
    out = []
    found = [step_configs(job, s) for s in job.scripts] + [plain_hydra(job)]
    for sc in found:
        for file, where, exact in sc.needed:
            if where is None:
                continue
            by = (job.rel(where[0]) if os.path.isabs(where[0]) else where[0], where[1])
            what = ("its Hydra defaults list" if by[0].endswith((".yaml", ".yml"))
                    else "@hydra.main" if by[0].endswith(".py") else "the job step's command line")
            out.append(Need(Path(file), by, what, exact,
                            "" if exact else "if the step starts where the doctor found it"))
    return out


def _import_needs(job: Job) -> list:
    """The repo files that the code's (unguarded) imports resolve to."""
    roots = [job.repo, job.repo / "src"]
    cache: dict = {}

    def resolve(base: Path, parts: list, names: list) -> list:
        key = (base, tuple(parts), tuple(names))
        if key not in cache:    # `import torch` in every file: looked up once per place
            cache[key] = _with_names(base, parts, names)
        return cache[key]

    # a scoped run parses a handful of files: cheaper than the walk of the pre-filter
    names = _ignored_names(job) if job.scope is None else None
    out: list = []
    for path, tree in python_trees(job) if names is None else \
            trees_mentioning(job, *sorted(names)) if names else []:
        rel = job.rel(path)
        guarded = _guarded_lines(tree)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or node.lineno in guarded:
                continue
            by = (rel, node.lineno)
            if isinstance(node, ast.Import):
                for alias in node.names:
                    out += _absolute(job, resolve, roots, path, alias.name, [], by)
            elif node.level:
                out += _relative(resolve, path, node, by)
            elif node.module:
                out += _absolute(job, resolve, roots, path, node.module,
                                 [a.name for a in node.names], by)
    return out


def _ignored_names(job: Job) -> Optional[set]:
    """The byte pre-filter of the imports (None: read them all). Only an ignored file that
    git does not track can be hidden, and an import that runs it names its module, or the
    package directory it stands in, word for word: so only the sources that mention the
    name of an ignored untracked .py file (its stem; the directory's name for an
    __init__.py) or of an ignored untracked directory are parsed."""
    res = job.git("ls-files", "-z", "--others", "--ignored", "--exclude-standard",
                  "--directory")
    if res.returncode != 0:
        return None
    names = set()
    for entry in filter(None, res.stdout.split("\0")):
        path = Path(entry)
        if entry.endswith("/"):
            names.add(path.name)
        elif path.suffix == ".py":
            names.add(path.parent.name if path.name == "__init__.py" else path.stem)
    return {os.fsencode(n) for n in names if n}


def _guarded_lines(tree: ast.AST) -> set:
    """Lines inside `try:` blocks whose handlers catch ImportError (the code copes)."""
    lines: set = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                h.type is None or any(n in IMPORT_ERRORS for n in _names(h.type))
                for h in node.handlers):
            for st in node.body:
                lines.update(range(st.lineno, (st.end_lineno or st.lineno) + 1))
    return lines


def _names(node: ast.AST) -> list:
    elts = node.elts if isinstance(node, ast.Tuple) else [node]
    return [e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute)
            else "" for e in elts]


def _module_files(base: Path, parts: list) -> list:
    """The files that importing `parts` from `base` runs: each package's __init__.py on the
    way, and the module itself. [] when the leaf does not resolve there."""
    files = []
    d = base
    for i, part in enumerate(parts):
        init, mod = d / part / "__init__.py", d / f"{part}.py"
        if fs.is_file(init):
            files.append(init)
            d = d / part
        elif i == len(parts) - 1 and fs.is_file(mod):
            files.append(mod)
        elif fs.is_dir(d / part):    # a namespace package
            d = d / part
        else:
            return []
    return files


def _with_names(base: Path, parts: list, names: list) -> list:
    """`from parts import names`: the module, plus each name that is a submodule."""
    files = _module_files(base, parts)
    if not files and parts:
        return []
    for name in names:
        files += _module_files(base, parts + [name]) if name != "*" else []
    return files


def _absolute(job: Job, resolve: Callable, roots: list, importer: Path, module: str,
              names: list, by: tuple) -> list:
    parts = module.split(".")
    for root in roots:
        files = resolve(root, parts, names)
        if files:
            own = fs.is_file(root / parts[0] / "__init__.py")   # the repo's own package
            link = "" if own else f"if {job.rel(root) if root != job.repo else 'the repo root'}" \
                " is on sys.path when it runs"
            return [Need(f, by, "an import", own, link) for f in files]
    files = resolve(importer.parent, parts, names)
    if not files:
        return []
    link = f"if {job.rel(importer.parent)}/ is on sys.path (it is when {job.rel(importer)} " \
        "runs as a script)"
    return [Need(f, by, "an import", False, link) for f in files]


def _relative(resolve: Callable, importer: Path, node: ast.ImportFrom, by: tuple) -> list:
    base = importer.parent
    for _ in range(node.level - 1):
        base = base.parent
    parts = node.module.split(".") if node.module else []
    files = resolve(base, parts, [a.name for a in node.names])
    return [Need(f, by, "an import", True) for f in files]


# ---- what git ignores ------------------------------------------------------------------

def _check_ignore(repo: GitRepo, paths: list) -> dict:
    """path -> (source, line, pattern) of the line that ignores it (negations left out)."""
    if not paths:
        return {}
    res = repo.git("check-ignore", "-v", "-z", "--no-index", "--stdin",
                   input="\0".join(paths) + "\0")
    if res.returncode not in (0, 1):   # 1: nothing is ignored
        checked(res, "check-ignore")
    f = res.stdout.split("\0")
    return {f[i + 3]: (f[i], int(f[i + 1]), f[i + 2]) for i in range(0, len(f) - 3, 4)
            if f[i + 2] and not f[i + 2].startswith("!") and f[i + 1].isdigit()}


def _hidden(repo: GitRepo, job: Job, paths: list) -> list:
    """The needed files that git ignores and does not track."""
    ignored = _check_ignore(repo, paths)
    if not ignored:
        return []
    tracked: set = set()
    names = sorted(ignored)
    for i in range(0, len(names), 500):   # a command line of bounded length
        res = checked(repo.git("ls-files", "-z", "--", *[":(literal)" + p
                                                         for p in names[i:i + 500]]), "ls-files")
        tracked.update(res.stdout.split("\0"))
    hits = [p for p in sorted(ignored) if p not in tracked]
    dirs = sorted({"/".join(p.split("/")[:i]) + "/" for p in hits
                   for i in range(1, p.count("/") + 1)})
    by_dir = _check_ignore(repo, dirs)
    out = []
    for p in hits:
        source, line, pattern = ignored[p]
        component = next((d.rstrip("/") for d in dirs if p.startswith(d)
                          and by_dir.get(d) == (source, line, pattern)), p)
        out.append(Hidden(p, source, line, pattern, component))
    return out


def _base_dir(source: str) -> str:
    """The directory (relative to the top level) a pattern of `source` is relative to."""
    if os.path.basename(source) == ".gitignore" and not os.path.isabs(source):
        return os.path.dirname(source)
    return ""   # .git/info/exclude, core.excludesFile: the top level


def _unanchored(pattern: str) -> bool:
    core = pattern[3:] if pattern.startswith("**/") else pattern
    return "/" not in core.rstrip("/")


def _deliberate(repo: GitRepo, h: Hidden) -> bool:
    """An anchored pattern, or one that matches right in its own directory: meant."""
    if not _unanchored(h.pattern):
        return True
    parent = os.path.dirname(repo.prefix + h.component)
    return parent == _base_dir(h.source)


def _anchored(h: Hidden) -> str:
    core = h.pattern[3:] if h.pattern.startswith("**/") else h.pattern
    if not core.endswith("/") and h.component != h.path:
        core += "/"   # it hid a directory
    return "/" + core


def _source_for_user(repo: GitRepo, source: str) -> str:
    if os.path.isabs(source):
        return source
    return source[len(repo.prefix):] if source.startswith(repo.prefix) else \
        os.path.join(repo.root, source)


def _finding(repo: GitRepo, hidden: list, needs: dict) -> Finding:
    """One ignore line hiding one directory (or file): the files in it the job needs."""
    files = [(h.path, needs[h.path]) for h in hidden]
    files.sort(key=lambda f: not any(n.exact for n in f[1]))   # a certain one first
    h, = [x for x in hidden if x.path == files[0][0]]
    need = next((n for n in files[0][1] if n.exact), files[0][1][0])
    src = _source_for_user(repo, h.source)
    anchored = _anchored(h)
    what = f"the directory {h.component}/" if h.component != h.path else "it"
    by = f"{need.by[0]}:{need.by[1]}"
    more = f" and {len(files) - 1} more file(s) the job needs there are" if len(files) > 1 \
        else " is"
    msg = (f"`{h.pattern}` ignores {what}, so {h.path}{more} not tracked and a fresh clone "
           f"lacks it; {by} needs it ({need.what})")
    if not need.exact:
        msg += f", {need.link}"
    q = shlex.quote
    paths = " ".join(q(p) for p, _ in files)
    cmds: tuple = ()
    if "\\" not in h.pattern and not os.path.isabs(src):
        edit = f"{h.line}c\\{anchored}"
        cmds = (f"sed -i {q(edit)} {q(src)}",
                f"git add -- {q(src)} {paths}",
                f"git commit -m {q('Track ' + h.component)}")
    exact = any(n.exact for _, ns in files for n in ns)
    return Finding(
        msg, location=Location(src, h.line),
        fix=(f"Anchor the pattern: `{anchored}` instead of `{h.pattern}` on {src}:{h.line} "
             f"(or force-add the files with `git add -f`), then add and commit them."),
        commands=cmds, options=(FixOption((run("in the repo", *cmds),)),) if cmds else (),
        data={"pattern": h.pattern, "ignore_file": src, "ignore_line": h.line,
              "file": h.path, "ignored": h.component, "needed_by": by,
              "needed_as": need.what, "anchored": anchored,
              "files": {p: [f"{n.by[0]}:{n.by[1]}" for n in ns] for p, ns in files}},
        severity=None if exact else Severity.WARNING)
