"""Third-party packages the job imports that its Python (container, venv) lacks."""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor import fs
from doctor.job.context import Job
from doctor.model import FixOption, add, run
from doctor.job.cluster import not_this_machines
from doctor.job.launch import resolvable, scripts_or_none, srun_container, workdir
from doctor.job.launchers import CONTAINER_VALUE
from doctor.job.pylookup import Python, activated_env, env_python, lookup
from doctor.proc import tool_path
from doctor.job.sources import python_sources, tree_of

# import name → pip name, where they differ
PIP_NAMES = {"cv2": "opencv-python", "PIL": "pillow", "yaml": "pyyaml",
             "sklearn": "scikit-learn", "skimage": "scikit-image"}
GUARDS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}


@check("container-deps-missing", title="A third-party package the job imports is missing "
       "from the job's Python", severity="error", tags=("python", "imports", "containers"),
       needs=("repo", "sbatch", "node"), timeout=60)
def container_deps_missing(job: Job) -> Iterator[Finding]:
    """A package the job's code imports is not installed where the job runs.

    The doctor follows the entry script (or `-m` module) through the repo's own
    imports and collects the module-level imports of every file it reaches that
    are not the repo's own, not in `sys.stdlib_module_names` and not inside a
    `try` that catches `ImportError`. Each top-level name is looked up, never
    imported, in the job's Python: `singularity|apptainer exec [binds] IMAGE
    python -I -S` for a container step when the runtime is on this node's PATH
    (without the step's `--env`, `--env-file`, `--fusemount`, or a bind that
    puts a repo file elsewhere in the image); else in the venv
    (`source X/bin/activate`) or conda env (`conda activate /path`) the job
    script activates: a venv by its base interpreter (pyvenv.cfg's `home`), a
    conda env outside the repo by its own, each when that is a Python outside the
    repo that only root or you can change, and otherwise read as data by this
    machine's Python (a venv's own `bin/python` is never run: it may be a file of
    the repo); else this machine's Python, only where this machine may be the job's
    node: the doctor runs inside a Slurm job, or this cluster is the job's (its
    partition or `--clusters`, `site: {cluster: NAME}`, `doctor sbatch`: the rule
    slurm-partition-limits uses), and the job's `python` is this very interpreter
    (the step's `python*` word, or the `#!` line of its `torchrun`, `accelerate` or
    `deepspeed`, as the job's PATH finds them). The job's variables
    (PYTHONPATH, the user site) reach the lookup as data, not as its environment.
    A container step with no runtime here or whose image is a file of the repo, a
    pyxis (`srun --container-image`, `--container-name`) or Container Engine
    (`--environment`) step, an env named by a variable, a job for another cluster,
    or another Python, is skipped and the reason said; each job script is judged
    on its own. Function-level imports are not read.

    ## Why it matters
    Containers such as LUMI's CSC PyTorch image lack packages a laptop has
    (seed 002: `tifffile`): the job waits in the queue, starts, and dies with
    `ModuleNotFoundError` on every rank.

    ## How to fix
    For a container, install into a directory on a shared filesystem and put it
    on the job's PYTHONPATH: `singularity exec IMAGE pip install --target=DIR PKG`
    and `export PYTHONPATH=DIR:$PYTHONPATH` in the script that runs python. For
    a venv, `<venv>/bin/pip install PKG`.
    """
    skipped: dict = {}   # reason -> the job scripts skipped for it
    judged = 0
    for script in scripts_or_none(job):
        try:   # each job script on its own: one the doctor cannot judge skips only itself
            found = list(_judge(job, script))
        except Skip as skip:
            skipped.setdefault(skip.reason, []).append(script.rel if script else None)
            continue
        judged += 1
        yield from found
    if not judged:
        raise Skip("; ".join(f"{', '.join(filter(None, rels))}: {why}" if any(rels) else why
                             for why, rels in skipped.items()))


def _judge(job: Job, script) -> Iterator[Finding]:
    """The findings of one job script's training step; Skip when its Python is not one
    the doctor can look into from here."""
    step = job.step(script)
    scripts = list(step.scripts) or ([script] if script else [])
    own = srun_container(step, script)
    if own is not None:
        raise Skip(_own_container(step, own))
    cwd, _ = workdir(job, script, scripts)
    entry = _entry_file(job, step, cwd)
    if entry is None:
        raise Skip("the job's entry script is not a file of the repo the doctor can read")
    roots = _roots(job, entry, cwd, step)
    imports = _third_party(job, entry, roots)
    for name in set(imports) & _repo_module_names(job):
        del imports[name]   # a repo module reached through a sys.path change
    if not imports:
        return
    kind, where, what = _job_python(job, step, script, scripts, cwd)
    job_env = {k: v.value for k, v in step.env.items() if v.channel != "entry-module"}
    names = sorted(imports)
    # an env the job activates: its own bin/python is never run (env_python)
    python = env_python(what, job.repo) if kind == "env" else Python(what)
    res = lookup(python, entry.parent, names, job_env, job.login_env,
                 cwd if fs.is_dir(cwd) else None, timeout=45)
    if res.returncode != 0 or not res.stdout.strip():
        raise RuntimeError(f"module lookup in {where} failed: {res.stderr.strip()[-400:]}")
    found = json.loads(res.stdout.strip().splitlines()[-1])["found"]
    pp = step.env.get("PYTHONPATH")
    unresolved = list(pp.unresolved) if pp is not None else []
    for name in names:
        if not found[name]["missing"]:
            continue
        (path, line), *others = imports[name]
        pip = PIP_NAMES.get(name, name)
        msg = (f"`import {name}` fails in {where}: no module {name} there "
               f"(PYTHONPATH={pp.value if pp is not None else '(unset)'})")
        if kind == "container":
            fix = (f"Install {pip} into a shared directory with the container's pip and "
                   "add it to PYTHONPATH in the script that runs python (seed 002).")
            commands: tuple = (f"{' '.join(what[:-1])} pip install --target=DIR {pip}",
                               "export PYTHONPATH=DIR:$PYTHONPATH")
        else:
            pip_cmd = f"{what}/bin/pip" if kind == "env" else "pip"
            fix = f"Install {pip} into {where}."
            commands = (f"{pip_cmd} install {pip}",)
        if name not in PIP_NAMES:
            fix += f" (`{name}` is the import name; its pip name may differ.)"
        severity = None
        if unresolved:
            msg += f"; unless PYTHONPATH's unresolved parts ({', '.join(unresolved)}) add it"
            severity = Severity.WARNING
        # the container's pip runs on a login node; the export goes in the job's script
        options = (FixOption((run("with the container's Python (DIR: a shared directory)",
                                  commands[0]),
                              add(None, commands[1], where="before the container step"))),) \
            if kind == "container" else (FixOption((run(f"for {where}", *commands),)),)
        yield Finding(msg, location=Location(path, line), fix=fix, commands=commands,
                      options=options,
                      data={"module": name, "pip": pip, "python": where,
                            "also_imported_at": [f"{p}:{n}" for p, n in others]},
                      severity=severity)


def _entry_file(job: Job, step, cwd: Path) -> Optional[Path]:
    if step.entry is None:
        return None
    if step.entry_is_module:
        for root in (cwd, job.repo, job.repo / "src"):
            base = root.joinpath(*step.entry.split("."))
            for p in (base.with_suffix(".py"), base / "__main__.py"):
                if fs.is_file(p, job.unreadable):
                    return p
        return None
    p = Path(step.entry) if os.path.isabs(step.entry) else cwd / step.entry
    return p if fs.is_file(p, job.unreadable) and p.suffix == ".py" else None


def _roots(job: Job, entry: Path, cwd: Path, step) -> list:
    """Where the repo's own modules live: the entry's directory, cwd, the repo, src/,
    and PYTHONPATH entries inside the repo."""
    roots = [entry.parent, cwd, job.repo, job.repo / "src"]
    pp = step.env.get("PYTHONPATH")
    for part in (pp.value.split(os.pathsep) if pp is not None else []):
        if part and os.path.isabs(part) and fs.is_dir(Path(part), job.unreadable):
            roots.append(Path(part))
    return [r for r in dict.fromkeys(roots) if fs.is_dir(r, job.unreadable)]


def _own(name: str, roots: list, job: Job) -> Optional[Path]:
    """The repo file of a dotted module name, or None when it is not the repo's."""
    for root in roots:
        base = root.joinpath(*name.split("."))
        for p in (base.with_suffix(".py"), base / "__init__.py"):
            if fs.is_file(p, job.unreadable):
                return p
        if fs.is_dir(base, job.unreadable):   # a namespace package of the repo
            return base
    return None


def _third_party(job: Job, entry: Path, roots: list) -> dict:
    """Top-level name → [(file, line), ...] of unguarded module-level imports in the
    files the entry reaches through the repo's own imports."""
    out: dict = {}
    seen: set = set()
    todo = [entry]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        tree = tree_of(job, path)
        if not isinstance(tree, ast.Module):
            continue
        for node, guarded in _module_imports(tree.body, False):
            for name in _names(node, path, roots):
                own = _own(name, roots, job)
                top = name.split(".")[0]
                if own is not None or (top and _own(top, roots, job) is not None):
                    if own is not None and own.suffix == ".py":
                        todo.append(own)
                    init = own / "__init__.py" if own is not None and own.is_dir() else None
                    if init is not None and fs.is_file(init, job.unreadable):
                        todo.append(init)
                    continue
                if guarded or not top or top in sys.stdlib_module_names \
                        or top == "__future__":
                    continue
                out.setdefault(top, []).append((job.rel(path), node.lineno))
    return out


def _repo_module_names(job: Job) -> set:
    """The name of every .py file of the repo and of every directory holding one."""
    out: set = set()
    for p in python_sources(job):
        out.add(p.stem)
        out.update(part for part in p.relative_to(job.repo).parts[:-1])
    return out


def _names(node: ast.AST, path: Path, roots: list) -> list:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    assert isinstance(node, ast.ImportFrom)
    if node.level == 0:
        base = node.module or ""
        return [base] + [f"{base}.{a.name}" for a in node.names if a.name != "*"]
    # relative: resolve against the file's directory, relative to the first root above it
    pkg = path.parent
    for _ in range(node.level - 1):
        pkg = pkg.parent
    for root in roots:
        try:
            rel = pkg.relative_to(root)
        except ValueError:
            continue
        base = ".".join([*rel.parts, *([node.module] if node.module else [])])
        return ([base] if base else []) + [f"{base}.{a.name}".lstrip(".") for a in node.names
                                           if a.name != "*"]
    return []


def _module_imports(body: list, guarded: bool) -> Iterator[tuple]:
    """(import node, guarded) run when the module is imported: not inside functions,
    nor under `if TYPE_CHECKING:`."""
    for st in body:
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            yield st, guarded
        elif isinstance(st, ast.Try) or type(st).__name__ == "TryStar":
            catches = any(h.type is None or _catches(h.type) for h in st.handlers)
            yield from _module_imports(st.body, guarded or catches)
            for h in st.handlers:
                yield from _module_imports(h.body, guarded)
            yield from _module_imports(st.orelse + st.finalbody, guarded)
        elif isinstance(st, ast.If):
            if "TYPE_CHECKING" not in ast.unparse(st.test):
                yield from _module_imports(st.body, guarded)
            yield from _module_imports(st.orelse, guarded)
        elif isinstance(st, (ast.With, ast.ClassDef)):
            yield from _module_imports(st.body, guarded)


def _catches(t: ast.expr) -> bool:
    items = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(getattr(i, "id", getattr(i, "attr", None)) in GUARDS for i in items)


def _own_container(step, own: tuple) -> str:
    """Why a pyxis/enroot or CSCS Container Engine step is not looked up: the image's
    Python is started by Slurm's plugin on the compute node, not by a runtime here."""
    flag, value = own
    what = {"--container-image": "the pyxis image", "--container-name": "the pyxis "
            "container", "--environment": "the Container Engine environment"}[flag]
    here = ("no `enroot` is on this node's PATH" if tool_path("enroot") is None else
            "the doctor does not start enroot containers")
    return (f"the job's Python is the one in {what} {value or '(unnamed)'} (srun {flag} "
            f"at {step.where}), which the doctor cannot look into here ({here})")


def _job_python(job: Job, step, script, scripts: list, cwd: Path) -> tuple:
    """(kind, description, what): a container (what: the argv of its python), an env
    the job activates (its directory), or this machine's Python (its argv)."""
    prog = step.program[0] if step.program else "python"
    prog = prog if os.path.basename(prog).startswith("python") else "python3"
    if step.container is not None:
        argv = list(step.container.argv)
        tool = os.path.basename(argv[0])
        where = f"the container of {step.container.path}:{step.container.line}"
        if tool_path(tool) is None:   # where proc.start would find it
            raise Skip(f"the job runs python in a container ({where}) and no `{tool}` "
                       "runtime is on this node's PATH to look inside it")
        i = 2
        while i < len(argv) and argv[i].startswith("-"):
            i += 2 if argv[i] in CONTAINER_VALUE and "=" not in argv[i] else 1
        if i >= len(argv) or not resolvable(argv[i]):
            raise Skip(f"the image of {where} is named by a variable the doctor cannot "
                       "resolve")
        if "://" not in argv[i] and _in_repo(job, cwd, argv[i]):
            raise Skip(f"the image of {where} ({argv[i]}) is a file of the repository, and "
                       "the doctor runs nothing of the repository")
        return ("container", where,
                [tool, "exec", *_runtime_options(job, argv[2:i], cwd), argv[i], prog])
    env_dir = activated_env(scripts, cwd)
    if env_dir is not None:
        if not fs.is_dir(env_dir, job.unreadable):
            raise Skip(f"the environment the job activates ({env_dir}) is not on this node")
        return "env", f"the environment {env_dir}", env_dir
    hidden = list(step.env.opaque) + [n for n in step.env.notes if "module" in n or "conda" in n]
    if hidden:
        raise Skip(f"the job's Python may come from {hidden[0]}; the doctor cannot see which "
                   "interpreter that gives the job")
    # this machine's Python stands for the job's only where this machine may be the
    # job's node: a login node reading a job written for another cluster judged it by
    # its own packages (`import accelerate` fails in this machine's Python)
    why = not_this_machines(job, script)
    if why is not None:
        raise Skip(f"the job's Python is the one on its cluster's nodes, not this "
                   f"machine's: {why}")
    word, found = _interpreter(job, step)
    if found is None or fs.realpath(found) != fs.realpath(sys.executable):
        raise Skip(f"the job's `{word}` ({found or 'not found on this node'}) is not this "
                   f"machine's Python ({sys.executable}); the doctor looks up modules only "
                   "in the job's own interpreter")
    return "this", f"this machine's Python ({sys.executable})", [sys.executable]


PY_LAUNCHERS = ("torchrun", "accelerate", "deepspeed")   # console scripts of a Python


def _interpreter(job: Job, step) -> tuple:
    """(word, file): the word that starts the job's Python and the file it is on this
    machine (None: not here). The innermost `python*` word of the step; else a
    launcher's (`/envs/torch/bin/accelerate launch`, `torchrun`) own interpreter, from
    its `#!` line; else `python3`."""
    pp = step.env.get("PATH")
    search = pp.value if pp is not None else None
    for launcher in reversed(step.chain):
        if launcher.kind == "container":
            break
        word = launcher.argv[0] if launcher.argv else ""
        if os.path.basename(word).startswith("python"):
            return word, _which(job, word, search)
        if launcher.kind in PY_LAUNCHERS:
            exe = _which(job, word, search)
            return word, _shebang_python(job, exe, search) if exe else None
    return "python3", _which(job, "python3", search)


def _which(job: Job, word: str, search: Optional[str]) -> Optional[str]:
    if os.path.isabs(word):
        return word if fs.is_file(Path(word), job.unreadable) else None
    return None if "/" in word else shutil.which(word, path=search)


def _shebang_python(job: Job, exe: str, search: Optional[str]) -> Optional[str]:
    """The Python a console script's `#!` line names (`#!/usr/bin/env python3` on the
    job's PATH); None when it names none."""
    head = fs.read_bytes(Path(exe), job.unreadable, limit=512) or b""
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
    if words and os.path.basename(words[0]) == "env":
        words = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
    if not words or not os.path.basename(words[0]).startswith("python"):
        return None
    return _which(job, words[0], search)


# Options of the job's container step that the lookup leaves out: they would hand the
# child variables (`--env LD_PRELOAD=...`, --env-file) or run a program (--fusemount).
# The job's variables reach the lookup as data (doctor/job/pylookup.py).
DROPPED_OPTIONS = {"--env", "--env-file", "--fusemount"}
PATH_OPTIONS = {"--overlay", "-o", "--home", "-H", "--mount", "--apply-cgroups"}


def _runtime_options(job: Job, opts: list, cwd: Path) -> list:
    """The container step's options for the lookup: not DROPPED_OPTIONS, and none that
    puts a file of the repository in the container elsewhere than at its own path (a
    library bound over the image's, an overlay): the image's Python runs as it is."""
    out: list = []
    i = 0
    while i < len(opts):
        word = opts[i]
        value: Optional[str] = None
        if word[:2] in CONTAINER_VALUE and word[2:3] not in ("", "="):
            key, value = word[:2], word[2:]   # attached, as the runtimes take it: `-B/a:/b`
        elif "=" in word:
            key, _, value = word.partition("=")
        elif word in CONTAINER_VALUE:
            key, value = word, opts[i + 1] if i + 1 < len(opts) else ""
            i += 1
        else:
            key = word
        i += 1
        given = [key] if value is None else [key, value]
        if key in DROPPED_OPTIONS:
            continue
        if key in ("-B", "--bind"):
            kept = [b for b in (value or "").split(",") if b and not _moves_repo_file(job, b, cwd)]
            out += [key, ",".join(kept)] if kept else []
        elif key not in PATH_OPTIONS or not any(_in_repo(job, cwd, piece) for piece
                                                in re.split(r"[:,=]", value or "") if piece):
            out += given
    return out


def _moves_repo_file(job: Job, bind: str, cwd: Path) -> bool:
    """A bind `src[:dst[:opts]]` whose source is in the repo and its destination not that
    same path."""
    src, _, rest = bind.partition(":")
    dst = rest.partition(":")[0] or src
    full = src if os.path.isabs(src) else str(cwd / src)
    return _in_repo(job, cwd, src) and os.path.normpath(dst) != os.path.normpath(full)


def _in_repo(job: Job, cwd: Path, path: str) -> bool:
    """`path` (relative: to the job's cwd), once its links are resolved, is in the repo:
    the runtime binds and opens the resolved file."""
    return fs.inside(fs.realpath(cwd / path), str(job.repo))
