"""Can the job import the repo's own packages?"""
from __future__ import annotations

import ast
import json
import os
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, edits
from doctor import fs
from doctor.job.context import Job
from doctor.model import FixOption, run, script_fix
from doctor.job.env import followed_env
from doctor.job.closure import (is_test, step_files, sys_path_edit_lines, sys_path_edits,
                                 sys_path_unread, top_level_import_lines)
from doctor.job.launch import resolvable, scripts_or_none, srun_container, workdir
from doctor.job.pylookup import Python, activated_env, env_python, lookup
from doctor.job.shell import command_argv
from doctor.job.sources import tree_of, trees_mentioning


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
        for name, d in packages_in(job, root).items():
            out.setdefault(name, d)
    return out


NOT_PACKAGES = ("tests", "test", "docs", "checks_tests")


def packages_in(job: Job, root: Path, namespace: bool = False) -> dict:
    """Package name → directory, of the packages directly under `root`; `namespace`:
    with the directories without `__init__.py` that hold Python files, which Python
    imports as namespace packages from a directory on sys.path (src/mtr/ with
    src/mtr/datasets/__init__.py, reached from src/train.py)."""
    out: dict = {}
    if fs.is_dir(root, job.unreadable):
        for d in fs.entries(root, job.unreadable):
            if not d.name.isidentifier() or d.name in NOT_PACKAGES:
                continue
            if fs.is_file(d / "__init__.py", job.unreadable) or namespace and \
                    fs.is_dir(d, job.unreadable) and _holds_python(job, d):
                out.setdefault(d.name, d)
    return out


def _holds_python(job: Job, d: Path) -> bool:
    """A .py file in `d`, or a package (a directory with __init__.py) right under it."""
    return any(e.name.endswith(".py") or fs.is_file(e / "__init__.py", job.unreadable)
               for e in fs.entries(d, job.unreadable))


def package_dirs(job: Job) -> dict:
    """Top-level package name → its directories anywhere in the repo (a directory with
    `__init__.py` whose parent has none; tests and docs left out): where a step's
    imports may point when its path does not reach them (`code/models/` that
    `sys.path.insert(0, './code')` reaches only from the right directory)."""
    def find() -> dict:
        inits = {rel.rpartition("/")[0] for rel in job.every_rel()
                 if rel.rpartition("/")[2] == "__init__.py"}
        out: dict = {}
        for d in sorted(inits):
            parent, _, name = d.rpartition("/")
            if d and parent not in inits and name.isidentifier() and \
                    name not in NOT_PACKAGES and not is_test(d + "/x.py"):
                out.setdefault(name, []).append(job.repo / d)
        return out
    return job.memo("package_dirs", find)


def step_packages(job: Job, entry: Path, edits: list, packages: dict) -> dict:
    """Package name → directory, of the packages on a step's path as Python builds it:
    the entry's `sys.path.insert(0, …)` directories, the entry's own directory (the
    working directory for -m), then the repo's root/src packages, then its appended
    directories; the first of a name wins, as in Python."""
    out: dict = {}
    for d in [d for d, first in edits if first] + [entry]:
        for name, p in packages_in(job, d, namespace=True).items():
            out.setdefault(name, p)
    for name, p in packages.items():
        out.setdefault(name, p)
    for d in [d for d, first in edits if not first]:
        for name, p in packages_in(job, d, namespace=True).items():
            out.setdefault(name, p)
    return out


def imported_modules(job: Job, tops: set) -> dict:
    """Dotted module name → (file, line) of its first absolute import in the repo."""
    # an absolute import of a package names it: only the files that mention one
    return _first_imports(job, trees_mentioning(job, *(t.encode() for t in sorted(tops))),
                          tops)


def _first_imports(job: Job, trees, tops: set) -> dict:
    """Dotted module name → (file, line) of its first absolute import in `trees`
    ([(path, AST or None)]), of a module whose top-level package is one of `tops`."""
    found: dict = {}
    for path, tree in trees:
        for node in ast.walk(tree) if tree is not None else ():
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

    For each job script's training step the doctor takes the modules of the
    repo's packages (directories with `__init__.py` under `src/` or the root,
    or `[tool.setuptools] package-dir`; in the entry's own directory and the
    directories its `sys.path` edits add, namespace packages too) that the
    step's entry and the repo files it imports, transitively, import: an entry
    that imports only the standard library has nothing to report. When a
    `sys.path` edit of the entry adds a directory that does not exist
    (`sys.path.insert(0, './code')` run from another working directory), a
    package the repo has elsewhere (`code/models/`) that nothing on the step's
    path reaches is a warning naming that edit (an installed package of that
    name would do); so is one reached only through a `sys.path` edit the
    doctor cannot read (`sys.path.append(args.root)`), which is named.
    (Without a job script: every package, and every module the repo's code
    imports from them.) It looks each one
    up in a child process given, as data, the job's effective environment (login
    environment + the script's exports, including scripts it runs inside a
    container) and the path the job's Python builds: the launched script's own
    directory first (the working directory for `python -m`, Apptainer's `--pwd` in a
    container), PYTHONPATH, the `sys.path.append/insert/extend(...)` and
    `site.addsitedir(...)` the entry makes before the import (one below a
    top-level import of the entry does not help it) (`os.getcwd()`,
    `os.path.dirname(__file__)` and its `..` joins,
    `Path(__file__).parent`/`.parents[N]`, literal strings relative to the working
    directory, a module-level name assigned one of those), the stdlib, and the site
    directories with their `.pth` path lines and editable installs: those of the
    venv or conda env the job activates (or whose `bin/python` it runs) when it is
    on this machine, else this machine's. The child is isolated (`python -I -S`;
    none of the job's variables in its environment, not its LD_PRELOAD) and only
    looks files up (`PathFinder`): nothing of the repo runs, not even a
    `sitecustomize.py` on PYTHONPATH or a package's `__init__.py`. A pyxis or
    Container Engine step (`srun --container-image`, `--environment`) has the
    image's own working directory and entrypoint: it is skipped, said, not guessed.

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
    # one finding per cause: scripts that fail alike (the same import, the same fix and
    # no edit of their own) are named together, not reported once per script
    merged: dict = {}
    for where, f in _per_script(job):
        key = repr((f.location, f.severity, f.fix, f.commands, f.options,
                    f.message.replace(f"fails for {where}", "fails for \0", 1)))
        if f.edits or key not in merged:
            merged[(key, len(merged)) if f.edits else key] = (f, [where])
        else:
            merged[key][1].append(where)
    for f, wheres in merged.values():
        if len(wheres) > 1:
            f = replace(f, message=f.message.replace(
                f"fails for {wheres[0]}", "fails for " + ", ".join(wheres[:-1]) + " and "
                + wheres[-1], 1), data=dict(f.data, scripts=wheres))
        yield f


def _per_script(job: Job) -> Iterator[tuple]:
    """(the job script it is for, or 'the login environment'; the finding)."""
    root_packages = repo_packages(job)
    if not root_packages and not package_dirs(job):
        raise Skip("the repo has no Python packages (no directory with __init__.py)")
    skipped: list = []
    looked = False
    for script in scripts_or_none(job):
        step = job.step(script)
        env, inners = followed_env(job, script)
        scripts = ([script] if script else []) + inners
        cwd, cwd_from = workdir(job, script, scripts)
        elsewhere: dict = {}   # packages of the repo that the step's path does not reach
        unread: list = []
        if script is None:   # the login environment: every package, every import
            if not root_packages:
                skipped.append("the repo has no Python packages under src/ or the root, "
                               "and no job script names an entry")
                continue
            entry, edits, packages, late = cwd, [], root_packages, {}
            imports = imported_modules(job, set(packages))
            names = sorted(set(packages) | set(imports))
        else:
            own = _own_container(step, script)
            if own is not None:
                skipped.append(own)
                continue
            pwd, box = _container_pwd(step), step.container
            if pwd is not None and box is not None:   # Apptainer --pwd: it starts there
                if not (resolvable(pwd) and os.path.isabs(pwd) and fs.is_dir(Path(pwd))):
                    skipped.append(f"{script.rel}: the container's working directory "
                                   f"(--pwd {pwd}) is not a directory of this machine")
                    continue
                cwd, cwd_from = Path(pwd), f"{box.path}:{box.line} (--pwd)"
            path = job.entry_file(step)
            if path is None:
                skipped.append(f"{script.rel}: " + (
                    "no step runs a Python program" if step.entry is None else
                    f"the entry {step.entry} is not a file of the repo the doctor can read"))
                continue
            # sys.path[0]: the script's own directory; for -m, the working directory
            entry = cwd if step.entry_is_module else Path(path).parent
            edits = sys_path_edits(job, Path(path), cwd)
            unread = [f"the sys.path edit at {u} puts it on the path"
                      for u in sys_path_unread(job, Path(path))]
            packages = step_packages(job, entry, edits, root_packages)
            # an edit whose directory does not exist, or that the doctor cannot read,
            # meant to reach the repo's code (`sys.path.insert(0, './code')` run from
            # another directory): the repo's packages it may have meant are looked up
            # too, and a miss is a warning
            gone = [d for d, _ in edits if not fs.is_dir(d)]
            elsewhere = {n: ds[0] for n, ds in package_dirs(job).items()
                         if n not in packages} if gone or unread else {}
            # only what the entry and its imports import counts (closure.step_files)
            imports = _closure_imports(job, step_files(job, step),
                                       set(packages) | set(elsewhere))
            # `import a.b` imports a first: its package is looked up too (an installed
            # copy of it shadows the repo's)
            names = sorted(set(imports) | {n.split(".")[0] for n in imports})
            # a name the entry imports at its top level, above a sys.path edit, is
            # looked up without that edit: Python runs the import first
            late = _late_edits(job, Path(path), cwd, names)
        if not names:
            looked = True
            continue
        python, env_dir = _job_python(job, step, scripts, cwd)
        # PYTHONPATH is read at interpreter start: the entry module's os.environ is too late
        job_env = {k: v.value for k, v in env.items() if v.channel != "entry-module"}
        out: dict = {"found": {}}
        for group in sorted({late.get(n, ()) for n in names}):
            res = lookup(python, entry, [n for n in names if late.get(n, ()) == group],
                         job_env, job.login_env, cwd if fs.is_dir(cwd) else None,
                         timeout=30, edits=[e for e in edits if e not in group])
            if res.returncode != 0:
                raise RuntimeError(f"module lookup child failed: {res.stderr.strip()[-400:]}")
            out["found"].update(json.loads(res.stdout.strip().splitlines()[-1])["found"])
        looked = True
        pp = env.get("PYTHONPATH")
        if pp is not None and pp.channel == "entry-module":
            pp = None
        unresolved = list(pp.unresolved) if pp is not None else []
        unresolved += _unknown_links(job, script, scripts, env_dir) + unread
        where = script.rel if script else "the login environment"
        for name in names:
            r = out["found"].get(name) or {"missing": None, "origin": None}
            data = {"module": name, "missing": r["missing"], "found": r["origin"],
                    "workdir": job.rel(cwd), "entry": job.rel(entry),
                    "pythonpath": pp.value if pp is not None else None}
            loc = _location(name, packages, imports, pp)
            if r["missing"]:
                if r["missing"] != name and r["missing"] in (set(names) - {name}):
                    continue  # reported for the shorter name itself
                editable = script if _from_submit_dir(script, scripts) else None
                top = name.split(".")[0]
                if top in elsewhere:
                    yield where, _unreached(job, _missing(job, editable, name, r,
                                                   {**elsewhere, **packages}, pp, unresolved,
                                                   cwd_from, where, loc, data),
                                     elsewhere[top], edits)
                    continue
                f = _missing(job, editable, name, r, packages, pp, unresolved, cwd_from,
                             where, loc, data)
                after = late.get(name, ())
                yield where, replace(f, message=f.message + "; the entry's sys.path edit" + (
                    "s" if len(after) > 1 else "") + " adding " + ", ".join(
                    job.rel(d) for d, _ in after) + " run" + ("" if len(after) > 1 else "s")
                    + " after this import (Python runs the import first)") if after else f
            elif name in packages and r["origin"] and \
                    fs.is_file(packages[name] / "__init__.py", job.unreadable):
                origin = Path(fs.realpath(r["origin"]))
                if not fs.inside(str(origin), fs.realpath(packages[name])):
                    yield where, Finding(
                        f"{name} resolves to {origin.parent}, not the repo's "
                        f"{job.rel(packages[name])}/ (an installed copy shadows the repo's "
                        f"code for {where})", location=loc,
                        fix="Install the repo in editable mode in the job's environment, or "
                            "put the repo's package root first on PYTHONPATH.",
                        commands=("pip install -e .",), data=data, severity=Severity.WARNING,
                        options=(FixOption((run("in the job's Python environment, in the "
                                                "repo", "pip install -e ."),)),))
    if not looked and skipped:
        raise Skip("; ".join(skipped))


def _late_edits(job: Job, entry: Path, cwd: Path, names: list) -> dict:
    """Name → the entry's sys.path edits ((directory, first)) that run only after the
    first top-level import of it (or of a module under it) in the entry: they do not
    help that import, which fails before them. A directory that an edit above that
    import also adds is on the path in time, whatever is repeated below."""
    lines = top_level_import_lines(job, entry)
    timed = sys_path_edit_lines(job, entry, cwd)
    out: dict = {}
    for name in names:
        at = [ln for n, lns in lines.items() if n == name or n.startswith(name + ".")
              for ln in lns]
        if not at:
            continue   # imported in a function, under a try/if, or by another file
        early = {d for d, _, ln in timed if ln < min(at)}
        after = tuple(dict.fromkeys((d, first) for d, first, ln in timed
                                    if ln > min(at) and d not in early))
        if after:
            out[name] = after
    return out


def _unreached(job: Job, f: Finding, pkg: Path, edits: list) -> Finding:
    """A missing package that the repo has, but where nothing on the step's path (as the
    doctor reads it) reaches: a warning, since a package of that name installed in the
    job's Python would do (the doctor cannot tell a vendored copy from a third-party
    one), with the sys.path edits whose directory does not exist."""
    gone = [job.rel(d) for d, _ in edits if not fs.is_dir(d)]
    note = f"; the repo has {pkg.name} at {job.rel(pkg)}/, which no directory on the " \
        "job's path reaches" + (f" (the entry's sys.path edit adds {', '.join(gone)}, which "
                                "does not exist: a directory relative to the working "
                                "directory?)" if gone else "")
    return replace(f, message=f.message + note, severity=Severity.WARNING)


def _closure_imports(job: Job, files: list, tops: set) -> dict:
    """Dotted module name → (file, line) of its first absolute import, in the files the
    step runs, of a module whose top-level package is one of `tops` (the repo's)."""
    return _first_imports(job, ((path, tree_of(job, path)) for path in files), tops)


def _own_container(step, script) -> Optional[str]:
    """Why a pyxis/enroot (`srun --container-image`, `--container-name`) or Container
    Engine (`--environment`) step is not judged: its image has its own working directory
    and entrypoint, which the doctor cannot read. None for any other step."""
    own = srun_container(step, script)   # the one reader of those options (launch.py)
    if own is None:
        return None
    return (f"{step.where}: the step runs in a container image (srun {own[0]}), whose "
            "working directory, entrypoint and Python the doctor cannot read")


def _container_pwd(step) -> Optional[str]:
    """An Apptainer/Singularity step's `--pwd DIR`, where its program starts (`-W`/
    `--workdir` is its scratch directory, not this); None when it has none."""
    if step.container is None:
        return None
    argv = list(step.container.argv)
    for i, w in enumerate(argv):
        if w == "--pwd" and i + 1 < len(argv):
            return argv[i + 1]
        if w.startswith("--pwd="):
            return w.split("=", 1)[1]
    return None


def _job_python(job: Job, step, scripts: list, cwd: Path) -> tuple:
    """(Python, env directory or None): the venv or conda env the job activates
    (`source X/bin/activate`, `conda activate /path`), or whose `X/bin/python` the step
    runs, when it is on this machine: its own site directories and editable installs
    are where the job finds the repo; else this machine's Python."""
    try:
        env_dir = activated_env(scripts, cwd) if scripts else None
    except Skip:
        env_dir = None
    prog = step.program[0] if step.program else ""
    if env_dir is None and "/" in prog and resolvable(prog) and \
            os.path.basename(prog).startswith("python"):
        exe = Path(prog) if os.path.isabs(prog) else cwd / prog
        if exe.parent.name == "bin" and (fs.is_file(exe.parent.parent / "pyvenv.cfg") or
                                         fs.is_dir(exe.parent.parent / "conda-meta")):
            env_dir = exe.parent.parent
    if env_dir is not None and fs.is_dir(env_dir, job.unreadable):
        return env_python(env_dir, job.repo), env_dir
    return Python([sys.executable]), None


def _unknown_links(job: Job, script, scripts: list, env_dir: Optional[Path] = None) -> list:
    """Links between the job and its imports that the doctor cannot see: the step runs
    in a container (whose Python may have the package installed), a `cd` to a directory
    it cannot resolve, an environment activated by `conda`/`module`/`source`."""
    step = job.step(script)
    out = [f"{o} sets PYTHONPATH" for o in step.env.opaque] if "PYTHONPATH" not in step.env \
        else []
    python = step.program[0] if step.program else ""
    if python and (python.startswith(("/", "$", "~")) or "/" in python) and \
            step.container is None and env_dir is None:
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
            if env_dir is None and (argv[0] in ("conda", "mamba", "micromamba")
                                    and "activate" in argv or argv[0] in ("source", ".")
                                    and len(argv) > 1 and argv[1].endswith("/activate")):
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
        # two ways: the job script's PYTHONPATH, or an editable install
        options: tuple = (script_fix(fixes, export, file=editable.rel if editable else None)
                          + (FixOption((run("in the job's Python environment, in the repo",
                                            "pip install -e ."),)),))
    else:
        locs = ", ".join(r["locations"]) or "?"
        msg = (f"`import {name}` fails for {where}: {missing} is missing from {locs} "
               "(a directory dropped by rsync or never copied?)")
        fix = (f"Copy the missing {missing.replace('.', '/')}/ to the cluster; if rsync "
               "dropped it, anchor the exclude pattern (`--exclude '/data'`, not "
               "`--exclude 'data'`).")
        commands = ()
        options = ()
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
                   edits=fixes, options=options)


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
