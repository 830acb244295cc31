"""A git submodule the job imports or runs from that a fresh clone (or this checkout) lacks."""
from __future__ import annotations

import ast
import os
import posixpath
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, check, fs
from doctor.job.closure import job_files, sys_path_edits
from doctor.job.context import Job
from doctor.job.sources import trees_mentioning
from doctor.model import FixOption, run
from doctor.scanners.git import checked, repo_for

CHECK = "submodule-missing"


@dataclass(frozen=True)
class Gitlink:
    path: str            # relative to the repo root the doctor runs on
    commit: str
    declared: bool       # .gitmodules has a submodule.*.path for it
    populated: bool      # this checkout has files in its directory


@dataclass(frozen=True)
class Link:
    what: str            # "`from a.b import c` at x.py:3", "the step at job.sh:5 runs …"
    location: Location
    proven: bool         # an import or entry that needs the submodule's files


@check(CHECK, title="A submodule the job imports or runs is missing from a fresh clone or "
       "from this checkout", severity="error", tags=("git", "imports"),
       needs=("git", "sbatch"), timeout=60)
def submodule_missing(job: Job) -> Iterator[Finding]:
    """The job imports or runs code from a git submodule that will be an empty directory.

    The index's gitlinks (`git ls-files -s`, mode 160000) are compared with the
    submodules `.gitmodules` declares (`git config -f .gitmodules`). A gitlink with no
    `.gitmodules` entry has no URL: every fresh clone gets an empty directory, and
    `git submodule update --init` cannot fill it ("No url found for submodule path"). A
    declared submodule that is not initialised in this checkout (an empty directory)
    is empty for a job that runs from it. Either is reported only when the job uses the
    submodule: a step runs a file under it or works in it (`cd sub`, `python
    sub/train.py`), or the Python code the steps run imports a module under it (as a
    module of the repo root, src/, the importing file's directory or package, an
    entry's sys.path edits, or the step's PYTHONPATH). An error when the directory is
    empty here, or when no `.gitmodules` entry exists (this checkout may have the
    files, but a clone made for the job has none, and nothing can fetch them). A job
    that only puts the submodule on PYTHONPATH or sys.path, with no import the doctor
    can tie to it, is a warning; so is an import whose top-level name is the submodule's
    directory itself (`import apex` with an empty `apex/`): Python takes an empty
    directory as a namespace package only when no installed package has the name. An
    import in a file of the repo that the doctor does not see the steps run (reached
    through a dynamic import, or a sys.path edit it cannot read; absolute imports of a
    file's own package resolve from above its top package) is a warning too.

    ## Why it matters
    Python imports a module from an empty directory as an empty namespace package, or
    not at all: the job fails at its first import (`ModuleNotFoundError: No module named
    'sub.module'`) after its queue wait, on every rank. With no `.gitmodules` entry the
    failure follows the repo to every new clone and to CI, and the usual fix (`git
    submodule update --init --recursive`) fails too.

    ## How to fix
    For a gitlink without an entry, declare it with its URL: `git submodule add URL
    PATH` (or write the `[submodule "PATH"]` section of `.gitmodules` by hand and
    commit it), then `git submodule update --init PATH`; or, if the code is yours,
    remove the gitlink (`git rm --cached PATH`) and commit the files themselves. For a
    declared submodule that is not initialised, run `git submodule update --init
    --recursive` in the checkout the job runs from, and clone with
    `--recurse-submodules`.
    """
    repo = repo_for(job)
    links = _gitlinks(job, repo)
    missing = [g for g in links if not (g.declared and g.populated)]
    if not missing:
        return
    uses = _uses(job, missing)
    for g in missing:
        found = uses.get(g.path)
        if found:
            yield _finding(job, g, found)


# ---- the index and .gitmodules ------------------------------------------------------
def _gitlinks(job: Job, repo) -> list:
    res = checked(repo.git("ls-files", "-z", "-s"), "ls-files")
    commits: dict = {}
    for rec in res.stdout.split("\0"):
        meta, _, path = rec.partition("\t")
        fields = meta.split(" ")
        if len(fields) == 3 and fields[0] == "160000":
            commits[path] = fields[1]
    if not commits:
        return []
    top = repo.git("rev-parse", "--show-toplevel", timeout=10).stdout.strip()
    declared: set = set()
    modules = os.path.join(top, ".gitmodules") if top else ""
    if modules and fs.is_file(Path(modules), job.unreadable):
        # `git config -f` reads the file as data (no includes, nothing runs)
        out = repo.git("config", "-f", modules, "--get-regexp", r"^submodule\..*\.path$",
                       timeout=10)
        for line in out.stdout.splitlines():
            _, _, path = line.partition(" ")
            rel = repo.rel(path.strip().strip("/"))
            if rel is not None:
                declared.add(rel)
    out = []
    for path, commit in sorted(commits.items()):
        d = job.repo / path
        populated = fs.is_dir(d, job.unreadable) and any(
            True for _ in fs.entries(d, job.unreadable))
        out.append(Gitlink(path, commit, path in declared, populated))
    return out


# ---- what the job takes from it -----------------------------------------------------
def _under(rel: str, sub: str) -> bool:
    return rel == sub or rel.startswith(sub + "/")


def _uses(job: Job, links: list) -> dict:
    """gitlink path → [Link] of the job's steps and code that need it."""
    out: dict = {}
    subs = [g.path for g in links]

    def add(sub: str, link: Link) -> None:
        out.setdefault(sub, []).append(link)

    roots: set = {"", "src"}
    for script in job.scripts:
        for step in job.steps(script):
            where = f"{step.script.rel}:{step.line}"
            loc = Location(step.script.rel, step.line)
            cwd = _rel(job, step.cwd) if step.cwd else ""
            if cwd is not None and cwd:
                roots.add(cwd)
                for sub in subs:
                    if _under(cwd, sub):
                        add(sub, Link(f"the step at {where} runs in {cwd}/", loc, True))
            if step.entry:
                entry = step.entry.replace(".", "/") if step.entry_is_module else step.entry
                rel = _rel(job, posixpath.join(cwd or "", entry)) if cwd is not None else None
                for sub in subs:
                    if rel is not None and _under(rel, sub):
                        what = f"`-m {step.entry}`" if step.entry_is_module else step.entry
                        add(sub, Link(f"the step at {where} runs {what}", loc, True))
            pp = step.env.get("PYTHONPATH") if step.env is not None else None
            for part in (pp.value or "").split(os.pathsep) if pp is not None else ():
                rel = _rel(job, part) if part and "$" not in part else None
                if rel is None:
                    continue
                roots.add(rel)
                for sub in subs:
                    if _under(rel, sub):
                        add(sub, Link(f"the step at {where} puts {rel} on PYTHONPATH (no "
                                      "import the doctor can tie to it)", loc, False))
            path = job.entry_file(step)
            if path is not None and job.rel(path) != str(path):
                for d, _ in sys_path_edits(job, path, job.repo / (cwd or "")):
                    rel = _rel(job, str(d))
                    if rel is None:
                        continue
                    roots.add(rel)
                    for sub in subs:
                        if _under(rel, sub):
                            add(sub, Link(f"{job.rel(path)} puts {rel} on sys.path (no "
                                          "import the doctor can tie to it)",
                                          Location(job.rel(path)), False))
    # every Python file of the repo: one the job's steps are shown to run (its closure)
    # proves the link; another may be run in a way the doctor cannot follow (a dynamic
    # import, a sys.path edit through a variable): a warning
    files = job_files(job)
    shown = {job.rel(p) for p in files} if files is not None else set()
    known = job.every_rel_set()
    # an import that reaches a file under the submodule spells its directory's name
    needles = sorted({posixpath.basename(sub).encode() for sub in subs})
    for path, tree in trees_mentioning(job, *needles, whole=True):
        if tree is None:
            continue
        rel = job.rel(path)
        here = posixpath.dirname(rel)
        bases = sorted(roots | {here, _package_root(here, known)})
        in_job = rel in shown
        for node in ast.walk(tree):
            for module, line, stmt, relative in _imports(node, rel):
                for base in [""] if relative else bases:
                    target = posixpath.normpath(posixpath.join(base, module.replace(".", "/")))
                    for sub in subs:
                        # a root inside the submodule says nothing: which modules it
                        # holds is unknown (`import torch` with it on PYTHONPATH)
                        if not _under(target, sub) or _under(base, sub):
                            continue
                        # an empty directory that is itself the top-level name is a
                        # namespace package that an installed package of the name wins
                        # over: proven only inside a package of the repo (ltr.external.X)
                        top = posixpath.normpath(posixpath.join(
                            base, module.split(".")[0])) == sub
                        note = " (unless a package of that name is installed: an empty " \
                            "directory does not hide it)" if top else "" if in_job else \
                            " (a file the doctor does not see the job's steps run)"
                        add(sub, Link(f"`{stmt}` at {rel}:{line}{note}", Location(rel, line),
                                      in_job and not top))
    return {k: list({(lk.what): lk for lk in v}.values()) for k, v in out.items()}


def _package_root(here: str, known: set) -> str:
    """The directory above the file's top package (`a/pkg/sub` with pkg/__init__.py and
    sub/__init__.py → `a`): where its absolute imports of its own package resolve from."""
    d = here
    while d and f"{d}/__init__.py" in known:
        d = posixpath.dirname(d)
    return d


def _imports(node: ast.AST, rel: str) -> list:
    """(dotted module, line, the statement, relative) of an import node: each module it
    may load (`from a import b` may load a.b); a relative import resolved against the
    file's package, from the repo root."""
    if isinstance(node, ast.Import):
        return [(a.name, node.lineno, f"import {a.name}", False) for a in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    names = ", ".join(a.name for a in node.names)
    shown = f"from {'.' * node.level}{node.module or ''} import {names}"
    mods = [node.module or ""] + [f"{node.module}.{a.name}" if node.module else a.name
                                  for a in node.names if a.name != "*"]
    if not node.level:
        return [(m, node.lineno, shown, False) for m in mods if m]
    pkg = posixpath.dirname(rel).split("/") if posixpath.dirname(rel) else []
    base = "/".join(pkg[:len(pkg) - node.level + 1])
    return [(posixpath.join(base, m.replace(".", "/")).replace("/", "."), node.lineno, shown,
             True) for m in mods if m]


def _rel(job: Job, path: str) -> Optional[str]:
    """A path as the repo root sees it (None: outside the repo, or a variable)."""
    if "$" in path or "`" in path:
        return None
    p = Path(path) if os.path.isabs(path) else job.repo / path
    rel = job.rel(Path(os.path.normpath(p)))
    if rel.startswith("/") or rel.startswith(".."):
        return None
    return "" if rel == "." else rel


# ---- the finding --------------------------------------------------------------------
def _finding(job: Job, g: Gitlink, links: list) -> Finding:
    proven = [lk for lk in links if lk.proven]
    shown = (proven or links)[:3]
    used = "; ".join(lk.what for lk in shown) + (
        f" (and {len(proven or links) - 3} more)" if len(proven or links) > 3 else "")
    q = shlex.quote(g.path)
    if not g.declared:
        state = (f"{g.path} is a gitlink (commit {g.commit[:12]}) with no entry in "
                 ".gitmodules: a fresh clone has an empty directory there, and `git "
                 "submodule update --init` cannot fill it (no URL)")
        if not g.populated:
            state += "; it is empty in this checkout too"
        fix = (f"Declare it with its URL (`git submodule add URL {g.path}`, or a "
               f"`[submodule \"{g.path}\"]` section in .gitmodules) and commit, or commit "
               f"its files instead of the gitlink (`git rm --cached {g.path}`).")
        options: tuple = (
            FixOption((run("in the repo", f"git rm --cached {q}",
                           f"git submodule add URL {q}",
                           f"git commit -m {shlex.quote('Declare submodule ' + g.path)}"),),
                      "declare the submodule with its URL"),)
    else:
        state = (f"the submodule {g.path} is declared in .gitmodules but not initialised "
                 "in this checkout (its directory is empty)")
        fix = (f"Initialise it where the job runs: `git submodule update --init --recursive "
               f"{g.path}` (and clone with `--recurse-submodules`).")
        options = (FixOption((run("in the repo", "git submodule update --init --recursive "
                                  + q),), "initialise the submodule"),)
    severity = Severity.ERROR if proven and (not g.declared or not g.populated) \
        else Severity.WARNING
    need = "needs its files" if proven else "may need its files"
    first = shown[0].location
    return Finding(
        f"{state}, and the job {need}: {used}; the step fails with ModuleNotFoundError "
        "(or a missing file) after its queue wait",
        location=first, fix=fix, options=options,
        data={"submodule": g.path, "commit": g.commit, "in_gitmodules": g.declared,
              "populated_here": g.populated, "used_by": [lk.what for lk in links]},
        severity=severity)
