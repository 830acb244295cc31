"""Whether the smoke's model factory (`--model MOD:FACTORY`, settings `smoke.model`) exists,
decided before any rank starts, without running a line of the repository.

A typo'd module or factory is bad input (exit 2 at once), not a ddp-smoke failure after
the ranks have started torch. The module is found as the ranks' Python would find it
(doctor/smoke/launcher.py rank_path, looked up by doctor/job/pylookup.py in an isolated
child that walks package directories instead of importing them: importlib.util.find_spec
would run every parent package's __init__.py), and the factory among the names the
module's source binds at its top level, read with ast. Whatever the doctor cannot be
sure of is let through for the smoke to judge: a module that is no Python source (an
extension, a namespace package), a source it cannot parse, a star import, a module
`__getattr__`, `globals()`/`exec`/`setattr` that bind names at run time, a submodule of a
package.
"""
from __future__ import annotations

import ast
import json
import os
import sys
from pathlib import Path
from typing import Optional

from doctor import fs, pyast
from doctor.errors import InputError
from doctor.names import did_you_mean

LOOKUP_TIMEOUT_S = 20.0
MAX_SOURCE = 16 * 1024 * 1024


def check_factory(job, spec: Optional[str] = None, flag: str = "--model",
                  key: str = "smoke.model") -> None:
    """InputError when `spec` (job.model by default; job.data for the data smoke's
    `--data`) names a module the smoke's ranks cannot find, or a factory its module
    does not define."""
    spec = spec or job.model
    cli = job.settings.smoke.get(key.split(".")[1]) != spec   # else the settings named it
    where = flag if cli else f"{job.settings.path}: {key}"
    module, _, attr = spec.partition(":")
    found = _find(job.repo, module)
    if found is None:   # the lookup itself failed: the smoke will say
        return
    missing = found.get("missing")
    if missing and "." in missing and not found.get("locations"):
        return   # below a module that is no package (os.path): an attribute, perhaps
    if missing:
        dirs = found.get("locations") or _repo_dirs(job.repo)
        raise InputError(f"{where} {spec}: no module named {missing!r} on the smoke's "
                         f"path (the repo, its src/, PYTHONPATH, installed packages)"
                         + did_you_mean(missing.rpartition(".")[2], _modules(dirs)))
    origin = found.get("origin")
    if not origin or not str(origin).endswith(".py"):
        return
    names = top_level_names(Path(origin))
    first = attr.split(".")[0]
    if names is None or first in names:
        return
    if os.path.basename(origin) == "__init__.py" and first in _modules([os.path.dirname(origin)]):
        return   # a submodule: an attribute of the package once something imports it
    raise InputError(f"{where} {spec}: {module} ({job.rel(origin)}) defines no {first!r} at "
                     "its top level" + did_you_mean(first, names))


def _find(repo: Path, module: str) -> Optional[dict]:
    from doctor.job.pylookup import Python, lookup
    from doctor.smoke.launcher import rank_path

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(rank_path(repo, env))
    res = lookup(Python([sys.executable]), repo, [module], env, os.environ, repo,
                 timeout=LOOKUP_TIMEOUT_S)
    if res.returncode != 0 or not res.stdout.strip():
        return None
    try:
        found = json.loads(res.stdout.strip().splitlines()[-1])["found"][module]
    except (ValueError, KeyError, TypeError):
        return None
    return None if found.get("error") else found


def _repo_dirs(repo: Path) -> list:
    return [str(repo / "src"), str(repo)]


def _modules(dirs: list) -> set:
    """The module names directly in `dirs`: x.py and package directories."""
    out = set()
    for d in dirs:
        for p in fs.entries(d):
            if p.suffix == ".py":
                out.add(p.stem)
            elif p.name.isidentifier() and fs.is_dir(p):
                out.add(p.name)
    return out


# Calls that bind module names at run time: the names are then unknown to a reader.
_DYNAMIC = {"globals", "exec", "setattr", "vars"}


def top_level_names(path: Path) -> Optional[set]:
    """The names `path`'s module binds at its top level (defs, classes, assignments,
    imports, also inside if/try/with/for at that level, and names a function declares
    `global`); None when unsure: unreadable, unparsable, a star import, a module
    __getattr__, or a call that binds names at run time."""
    raw = fs.read_bytes(path, limit=MAX_SOURCE)
    if raw is None:
        return None
    try:
        tree = pyast.parse(raw)
    except (SyntaxError, ValueError):
        return None
    names: set = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            names.update(node.names)
        elif isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return None
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in _DYNAMIC:
            return None
        elif isinstance(node, ast.Attribute) and node.attr == "modules" \
                and isinstance(node.value, ast.Name) and node.value.id == "sys":
            return None   # sys.modules[__name__] = …: the module may be replaced
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            names.add(node.name)   # a capture pattern binds it (over-accepting is safe)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    if not _bind(tree.body, names):
        return None
    return names


def _bind(body: list, names: set) -> bool:
    """Add what the statements bind to `names`; False when a module __getattr__ makes
    any name possible."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == "__getattr__":
                return False
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                names.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For,
                               ast.AsyncFor, ast.With, ast.AsyncWith)):
            targets = (node.targets if isinstance(node, ast.Assign)
                       else [i.optional_vars for i in node.items if i.optional_vars]
                       if isinstance(node, (ast.With, ast.AsyncWith)) else [node.target])
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        inner = [*getattr(node, "body", []), *getattr(node, "orelse", []),
                 *getattr(node, "finalbody", [])]
        for part in [*getattr(node, "handlers", []), *getattr(node, "cases", [])]:
            inner += part.body   # except and case clauses
            if isinstance(part, ast.ExceptHandler) and part.name:
                names.add(part.name)
        if not _bind(inner, names):
            return False
    for node in body:   # `x := ...` at the top level binds x too
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.update(n.target.id for n in ast.walk(node)
                         if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name))
    return True
