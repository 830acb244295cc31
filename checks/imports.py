"""Can the job import the repo's own packages?"""
from __future__ import annotations

import ast
import json
import os
import re
import sys
from pathlib import Path
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, edits
from doctor import fs
from doctor.job.context import Job
from doctor.job.env import followed_env
from doctor.job.launch import resolvable, scripts_or_none, workdir
from doctor.job.pylookup import Python, lookup
from doctor.job.shell import command_argv
from doctor.job.sources import trees_mentioning


# ---- package-not-importable ---------------------------------------------
def repo_packages(job: Job) -> dict:
    """Top-level package name → its directory, from src/, the root, or package-dir."""
    roots = [job.repo, job.repo / "src"]
    try:
        import tomllib
    except ImportError:  # Python < 3.11: tomli is a dependency there
        import tomli as tomllib  # type: ignore[no-redef]
    pyproject = job.repo / "pyproject.toml"
    if fs.is_file(pyproject, job.unreadable):
        try:
            data = tomllib.loads(pyproject.read_text())
            pkg_dir = data.get("tool", {}).get("setuptools", {}).get("package-dir", {})
            if isinstance(pkg_dir, dict) and isinstance(pkg_dir.get(""), str):
                roots.append(job.repo / pkg_dir[""])
        except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
            pass
    out: dict = {}
    for root in roots:
        if fs.is_dir(root, job.unreadable):
            for d in fs.entries(root, job.unreadable):
                if d.name.isidentifier() and fs.is_file(d / "__init__.py", job.unreadable) \
                        and d.name not in ("tests", "test", "docs", "checks_tests"):
                    out.setdefault(d.name, d)
    return out


def imported_modules(job: Job, tops: set) -> dict:
    """Dotted module name → (file, line) of its first absolute import in the repo."""
    found: dict = {}
    # an absolute import of a package names it: only the files that mention one
    for path, tree in trees_mentioning(job, *(t.encode() for t in sorted(tops))):
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in tops and name not in found:
                    found[name] = (job.rel(path), getattr(node, "lineno", 1))
    return found


@check("package-not-importable", title="The job cannot import the repo's own packages",
       severity="error", tags=("python", "imports"), needs=("repo", "sbatch", "node"),
       timeout=60)
def package_not_importable(job: Job) -> Iterator[Finding]:
    """The repo's packages cannot be found with the job's PYTHONPATH and working directory.

    The doctor finds every package of the repo (directories with `__init__.py`
    under `src/` or the root, or `[tool.setuptools] package-dir`) and every
    module the repo's code imports from them, then looks each one up in a
    child process given, as data, the job's effective environment (login
    environment + the script's exports, including scripts it runs inside a
    container) and the job's `sys.path[0]` (the launched script's directory, or
    the working directory for `python -m`). The child is isolated (`python -I
    -S`; none of the job's variables in its environment, not its LD_PRELOAD)
    and only looks files up (`PathFinder` on the path the job's Python would build:
    PYTHONPATH, the stdlib, the site directories and their `.pth` path lines):
    nothing of the repo runs, not even a `sitecustomize.py` on PYTHONPATH or a
    package's `__init__.py`.

    ## Why it matters
    A `src/` layout is not importable unless `src` is on PYTHONPATH or the
    project is `pip install -e`'d in the job's environment; and an rsync with
    an unanchored `--exclude data` silently drops `src/pkg/data/`. Either way
    the job dies at its first import with `ModuleNotFoundError` — after its
    queue wait, on every rank. A stale non-editable install is worse: the job
    runs, but on old code.

    ## How to fix
    Put the package root on the job's path in the job script (sbatch run
    from the repo root):

        export PYTHONPATH="$SLURM_SUBMIT_DIR/src${PYTHONPATH:+:$PYTHONPATH}"

    or run `pip install -e .` in the job's environment; re-sync a directory
    that is missing (and anchor the rsync exclude: `--exclude '/data'`).
    `doctor fix --unsafe` adds that export after the #SBATCH lines (or after
    the script's own PYTHONPATH line).
    """
    packages = repo_packages(job)
    if not packages:
        raise Skip("the repo has no Python packages (no directory with __init__.py "
                   "under src/ or the root)")
    imports = imported_modules(job, set(packages))
    names = sorted(set(packages) | set(imports))
    for script in scripts_or_none(job):
        env, inners = followed_env(job, script)
        scripts = ([script] if script else []) + inners
        cwd, cwd_from = workdir(job, script, scripts)
        entry = _entry_dir(job.step(script), cwd)
        # PYTHONPATH is read at interpreter start: the entry module's os.environ is too late
        job_env = {k: v.value for k, v in env.items() if v.channel != "entry-module"}
        res = lookup(Python([sys.executable]), entry, names, job_env, job.login_env,
                     cwd if fs.is_dir(cwd) else None, timeout=30)
        if res.returncode != 0:
            raise RuntimeError(f"module lookup child failed: {res.stderr.strip()[-400:]}")
        out = json.loads(res.stdout.strip().splitlines()[-1])
        pp = env.get("PYTHONPATH")
        if pp is not None and pp.channel == "entry-module":
            pp = None
        unresolved = list(pp.unresolved) if pp is not None else []
        unresolved += _unknown_links(job, script, scripts)
        where = script.rel if script else "the login environment"
        for name in names:
            r = out["found"][name]
            data = {"module": name, "missing": r["missing"], "found": r["origin"],
                    "workdir": job.rel(cwd), "entry": job.rel(entry),
                    "pythonpath": pp.value if pp is not None else None}
            loc = _location(name, packages, imports, pp)
            if r["missing"]:
                if r["missing"] != name and r["missing"] in (set(names) - {name}):
                    continue  # reported for the shorter name itself
                editable = script if _from_submit_dir(script, scripts) else None
                yield _missing(job, editable, name, r, packages, pp, unresolved, cwd_from,
                               where, loc, data)
            elif name in packages and r["origin"]:
                origin = Path(fs.realpath(r["origin"]))
                if not fs.inside(str(origin), fs.realpath(packages[name])):
                    yield Finding(
                        f"{name} resolves to {origin.parent}, not the repo's "
                        f"{job.rel(packages[name])}/ (an installed copy shadows the repo's "
                        f"code for {where})", location=loc,
                        fix="Install the repo in editable mode in the job's environment, or "
                            "put the repo's package root first on PYTHONPATH.",
                        commands=("pip install -e .",), data=data, severity=Severity.WARNING)


def _entry_dir(step, cwd: Path) -> Path:
    """sys.path[0] of the launched program: the script's directory, or cwd for -m/-c."""
    if step.entry is None or step.entry_is_module:
        return cwd
    return Path(step.entry).parent if os.path.isabs(step.entry) else (cwd / step.entry).parent


def _unknown_links(job: Job, script, scripts: list) -> list:
    """Links between the job and its imports that the doctor cannot see: the step runs
    in a container (whose Python may have the package installed), a `cd` to a directory
    it cannot resolve, an environment activated by `conda`/`module`/`source`."""
    step = job.step(script)
    out = [f"{o} sets PYTHONPATH" for o in step.env.opaque] if "PYTHONPATH" not in step.env \
        else []
    python = step.program[0] if step.program else ""
    if python and (python.startswith(("/", "$", "~")) or "/" in python) and \
            step.container is None:
        out.append(f"{python} (another environment than this machine's Python, which the "
                   "lookup used) has it installed")
    if step.container is not None:
        out.append(f"the container's Python has it installed (the step runs in "
                   f"{step.container.path}:{step.container.line}'s container; the lookup "
                   "used this machine's Python)")
    for s in scripts:
        for cmd in s.commands:
            argv = command_argv(cmd.argv, builtin=True) or [""]
            if argv[0] == "cd" and len(argv) > 1 and not resolvable(argv[1]):
                out.append(f"the job runs from `cd {argv[1]}` ({s.rel}:{cmd.line}), "
                           "which the doctor cannot resolve")
                break
            if argv[0] in ("conda", "mamba", "micromamba") and "activate" in argv \
                    or argv[0] in ("source", ".") and len(argv) > 1 \
                    and argv[1].endswith("/activate"):
                out.append(f"the environment activated at {s.rel}:{cmd.line} has it installed")
    return out


def _location(name: str, packages: dict, imports: dict, pp) -> Optional[Location]:
    if name in imports:
        return Location(*imports[name])
    if pp is not None and pp.path:
        return Location(pp.path, pp.line)
    return None


def _missing(job: Job, editable, name, r, packages, pp, unresolved, cwd_from, where, loc,
             data) -> Finding:
    """The finding for a module the job cannot import; `editable`: the job script that may
    get the PYTHONPATH export (None: no edit)."""
    missing = r["missing"]
    top = name.split(".")[0]
    pkg_root = packages.get(top)
    fixes: tuple = ()
    if missing == top:
        root = job.rel(pkg_root.parent) if pkg_root else "src"
        msg = (f"`import {name}` fails for {where}: no package {top} on the job's path "
               f"(PYTHONPATH={pp.value if pp is not None else '(unset)'}; working directory "
               f"from {cwd_from})")
        fix = (f"Add the package root {root}/ to PYTHONPATH in the job script, or "
               "`pip install -e .` in the job's environment.")
        export = _pythonpath_export(root, where != "the login environment")
        commands: tuple = (export, "pip install -e .")
        if editable is not None and not os.path.isabs(root):
            fixes = _export_edit(job, editable, pp, export, root)
    else:
        locs = ", ".join(r["locations"]) or "?"
        msg = (f"`import {name}` fails for {where}: {missing} is missing from {locs} "
               "(a directory dropped by rsync or never copied?)")
        fix = (f"Copy the missing {missing.replace('.', '/')}/ to the cluster; if rsync "
               "dropped it, anchor the exclude pattern (`--exclude '/data'`, not "
               "`--exclude 'data'`).")
        commands = ()
    severity = None
    links = [u for u in unresolved if " " in u]
    variables = [u for u in unresolved if " " not in u]
    if variables:
        msg += f"; PYTHONPATH has parts the doctor cannot resolve ({', '.join(variables)})"
    if links:
        msg += f"; unless {' or '.join(links)}"
    if unresolved:   # precision rule: a link the doctor cannot see → at most a warning
        severity = Severity.WARNING
    return Finding(msg, location=loc, fix=fix, commands=commands, data=data, severity=severity,
                   edits=fixes)


SUBMIT_DIR = re.compile(r"\$SLURM_SUBMIT_DIR/?|\$\{SLURM_SUBMIT_DIR(:-\.)?\}/?|\.")


def _from_submit_dir(script, scripts: list) -> bool:
    """The job runs where sbatch was run: no --chdir, and every `cd` goes to
    $SLURM_SUBMIT_DIR (or stays). Then $SLURM_SUBMIT_DIR is the repo the doctor read."""
    if script is None or script.get("chdir"):
        return False
    for s in scripts:
        for cmd in s.commands:
            argv = command_argv(cmd.argv, builtin=True)
            if argv[:1] in (["cd"], ["pushd"]) and not (
                    len(argv) > 1 and SUBMIT_DIR.fullmatch(argv[1])):
                return False
    return True


def _pythonpath_export(root: str, in_script: bool) -> str:
    """The export that puts the repo's package root first on PYTHONPATH, relative to where
    the job is submitted from ($SLURM_SUBMIT_DIR, taken as the repo root), never to this
    machine's path; without a job script, to the shell's working directory."""
    quoted = re.sub(r'([\\"$`])', r"\\\1", root)  # as it reads inside double quotes
    if os.path.isabs(root):
        base = quoted
    else:
        base = ("$SLURM_SUBMIT_DIR" if in_script else "$PWD") + \
            ("" if root in ("", ".") else "/" + quoted)
    return f'export PYTHONPATH="{base}${{PYTHONPATH:+:$PYTHONPATH}}"'


def _export_edit(job: Job, script, pp, export: str, root: str) -> tuple:
    """The export in the job script (unsafe: the job imports other code): after the
    script's own PYTHONPATH line when it sets one there, else after the #SBATCH header."""
    title = (f"put {root}/ first on PYTHONPATH (assumes sbatch runs from the repo root, "
             "$SLURM_SUBMIT_DIR)")
    if pp is not None and pp.path is not None:
        if pp.path != script.rel or not pp.line:
            return ()   # set in another file, or where the doctor cannot place a line
        edit = edits.insert_lines(job, script.rel, pp.line + 1, [export], title, unsafe=True)
    else:
        edit = edits.insert_after_header(job, script.rel, [export], title, unsafe=True)
    return (edit,) if edit else ()
