"""Finding modules in the job's Python without importing anything.

`lookup` runs `PYTHON -I -S -c LOOKUP_CHILD ENTRY_DIR JSON_NAMES JSON_ENV PREFIX`, with
PYTHON this machine's interpreter, a container's, or the interpreter of an env the job
activates (`env_python`); it prints one JSON line:
`{"sys_path": [...], "found": {name: {"origin", "missing", "locations"}}}`.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Mapping, NamedTuple, Optional, Sequence

from doctor import Skip, fs
from doctor.proc import CmdResult, run_cmd
from doctor.job.launch import resolvable
from doctor.pychild import child_env

# Runs in a child, isolated (`-I -S`: no site, no user site, no PYTHON* variables,
# nothing from the working directory on sys.path), so that nothing of the repo runs:
# not a `json.py` shadowing the stdlib, not a `sitecustomize.py` on the job's PYTHONPATH,
# not a package's `__init__.py`. The job's variables come as data (JSON_ENV), never as
# the child's environment: an exported LD_PRELOAD would load a library into it. It
# rebuilds the path the job's Python would have (sys.path[0], PYTHONPATH, the stdlib,
# the site directories with the path lines of their .pth files and setuptools'
# editable-install MAPPING, read as data), then finds each module with PathFinder on
# explicit paths: a dotted name walks the package directories itself instead of
# importing the parents as importlib.util.find_spec would. PREFIX: a venv whose
# pyvenv.cfg and site-packages are data; the child is its base interpreter (`home`),
# which knows its own stdlib, version and system site directories (Debian's
# dist-packages, RHEL's lib64), or, where that base is no Python outside the repo,
# the doctor's own, which reads the base's directories as data too.
LOOKUP_CHILD = r"""
import ast, importlib.machinery as m, json, os, site, sys
entry, names, env = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
data_prefix = sys.argv[4]
edits = json.loads(sys.argv[5]) if len(sys.argv) > 5 else []   # the entry's sys.path edits
os.environ.clear()
os.environ.update(env)   # as data: site's user directory reads HOME and PYTHONUSERBASE
path = [d for d, first in edits if first]
path += [] if env.get("PYTHONSAFEPATH") else [entry]
path += [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
editable = {}

def add_site(d):
    if not os.path.isdir(d) or d in path:
        return
    path.append(d)
    for pth in sorted(n for n in os.listdir(d) if n.endswith(".pth")):
        try:
            lines = open(os.path.join(d, pth), encoding="utf-8").read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for line in lines:
            if line.startswith(("import ", "import\t")):   # code: read setuptools' data only
                mod = line.split()[1].rstrip(";")
                try:
                    tree = ast.parse(open(os.path.join(d, mod + ".py")).read())
                except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
                    continue
                for node in tree.body:
                    targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
                    if getattr(targets[0], "id", None) == "MAPPING" and node.value is not None:
                        try:
                            editable.update(ast.literal_eval(node.value))
                        except ValueError:
                            pass
            elif line.strip() and not line.startswith("#"):
                p = os.path.join(d, line.rstrip())
                if os.path.isdir(p) and p not in path:
                    path.append(p)

def venv_cfg(prefix):
    try:
        lines = open(os.path.join(prefix, "pyvenv.cfg"), encoding="utf-8").read().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return {k.strip().lower(): v.strip() for k, _, v in (x.partition("=") for x in lines)}

def x_y(text):
    parts = text.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 and all(p.isdigit() for p in parts[:2]) else None

ours = "%d.%d" % sys.version_info[:2]
if data_prefix:   # read as data: the env's own Python is not run
    prefix = data_prefix
else:
    # under -S, Python < 3.12 leaves sys.prefix at the base: find the venv as site.venv() does
    prefix = sys.prefix
    if prefix == sys.base_prefix:
        exe_dir = os.path.dirname(os.path.abspath(sys.executable))
        for d in (exe_dir, os.path.dirname(exe_dir)):
            if os.path.isfile(os.path.join(d, "pyvenv.cfg")):
                prefix = os.path.dirname(exe_dir)
                break
cfg = venv_cfg(prefix) if data_prefix or prefix != sys.base_prefix else None
venv = cfg is not None
home = (cfg or {}).get("home") or ""
# this interpreter is the env's own or its base: its own stdlib, version and site dirs
ours_base = os.path.realpath(home) == os.path.dirname(os.path.realpath(sys.executable)) \
    if venv else not data_prefix
version, base, stdlib = ours, sys.base_prefix, sys.path
if not ours_base:   # the doctor's Python reads an env it does not run: its version and dirs
    base = os.path.dirname(home) if home else prefix
    stated = x_y((cfg or {}).get("version") or (cfg or {}).get("version_info") or "")
    try:
        found = [x_y(d[6:]) for d in os.listdir(os.path.join(prefix, "lib"))
                 if d.startswith("python") and x_y(d[6:])]
    except OSError:
        found = []
    found.sort(key=lambda v: tuple(int(p) for p in v.split(".")))
    version = stated or (ours if ours in found or not found else found[-1])
    std = os.path.join(base, "lib", "python" + version)
    stdlib = [d for d in (std, os.path.join(std, "lib-dynload")) if os.path.isdir(d)] or stdlib
path += stdlib
system_site = cfg is None or cfg.get("include-system-site-packages", "").lower() == "true"

def layout(p, distro=False):   # where a venv (and a foreign base) keeps its site-packages
    out = [os.path.join(p, lib, "python" + version, "site-packages")
           for lib in dict.fromkeys([sys.platlibdir, "lib", "lib64"])]
    if distro:   # Debian/Ubuntu's own Python: dist-packages, /usr/local's first
        out = [os.path.join(p, "local", "lib", "python" + version, "dist-packages"),
               os.path.join(p, "lib", "python3", "dist-packages"),
               os.path.join(p, "lib", "python" + version, "dist-packages")] + out
    return out

if not env.get("PYTHONNOUSERSITE") and system_site:
    add_site(site.getusersitepackages() if version == ours else
             os.path.join(site.getuserbase(), "lib", "python" + version, "site-packages"))
for d in layout(prefix) if venv or not ours_base else site.getsitepackages([prefix]):
    add_site(d)
if venv and system_site:
    for d in site.getsitepackages([base]) if ours_base else layout(base, True):
        add_site(d)
path += [d for d, first in edits if not first and d not in path]

def top_spec(name):
    for finder in (m.BuiltinImporter, m.FrozenImporter):
        spec = finder.find_spec(name)
        if spec is not None:
            return spec
    spec = m.PathFinder.find_spec(name, path)
    d = editable.get(name) if spec is None else None
    if d and os.path.isfile(os.path.join(d, "__init__.py")):
        spec = m.ModuleSpec(name, None, origin=os.path.join(d, "__init__.py"), is_package=True)
        spec.submodule_search_locations = [d]
    elif d and os.path.isfile(d + ".py"):
        spec = m.ModuleSpec(name, None, origin=d + ".py")
    return spec

def find(name):
    parts = name.split(".")
    spec = top_spec(parts[0])
    res = {"origin": None, "missing": parts[0] if spec is None else None,
           "locations": list(spec.submodule_search_locations or []) if spec else []}
    if spec is not None:
        res["origin"] = spec.origin
        for i in range(1, len(parts)):
            full = ".".join(parts[:i + 1])
            locs = list(spec.submodule_search_locations or [])
            sub = m.PathFinder.find_spec(full, locs) if locs else None
            if sub is None:
                res.update(missing=full, locations=locs, origin=None)
                break
            spec = sub
            res["origin"] = spec.origin
    return res

out = {"sys_path": path, "found": {}}
for name in names:
    try:   # a name or path entry the finders refuse is unknown, not missing
        out["found"][name] = find(name)
    except Exception as exc:
        out["found"][name] = {"origin": None, "missing": None, "locations": [],
                              "error": "%s: %s" % (type(exc).__name__, exc)}
print(json.dumps(out))
"""



# The job's variables the child reads (as data): its path and its user site.
READ_VARS = ("PYTHONPATH", "PYTHONSAFEPATH", "PYTHONNOUSERSITE", "PYTHONUSERBASE", "HOME")


class Python(NamedTuple):
    """The interpreter a lookup runs, and the env (`prefix`) it reads as data, if any."""
    argv: list
    prefix: Optional[Path] = None


def env_python(env_dir: Path, repo: Path) -> Python:
    """How to look modules up in the venv or conda env at `env_dir` without running a
    file of the repository. A venv's own bin/python is never run (a link that reads the
    venv's pyvenv.cfg, or a script): its base interpreter (`home`, resolved) is, given
    the venv as data, when that is a Python outside the repo. A conda env's bin/python is
    its own binary: run when the env lies outside the repo. Else this interpreter reads
    the env as data."""
    text = fs.read_text(env_dir / "pyvenv.cfg", None, 1 << 16)
    if text is None:
        exe = fs.realpath(env_dir / "bin" / "python")
        return Python([exe]) if _runnable(exe, repo) else Python([sys.executable], env_dir)
    cfg = {k.strip().lower(): v.strip() for k, _, v in
           (line.partition("=") for line in text.splitlines())}
    home, version = cfg.get("home", ""), cfg.get("version") or cfg.get("version_info") or ""
    xy = ".".join(version.split(".")[:2])
    named = [cfg.get("executable", "")] + [os.path.join(home, n) for n in
                                           (f"python{xy}", "python3", "python") if home]
    for exe in (fs.realpath(p) for p in named if os.path.isabs(p)):
        if _runnable(exe, repo) and not fs.inside(fs.realpath(home), fs.realpath(repo)):
            return Python([exe], env_dir)
    return Python([sys.executable], env_dir)


def _runnable(exe: str, repo: Path) -> bool:
    """A resolved Python binary as safe to run `-I -S` as the system's: named python*,
    outside the repo, a regular executable that only root or this user can change."""
    st = fs.stat(exe)
    return (st is not None and re.fullmatch(r"python[0-9.]*", os.path.basename(exe)) is not None
            and not fs.inside(exe, fs.realpath(repo)) and os.path.isfile(exe)
            and os.access(exe, os.X_OK) and st.st_uid in (0, os.getuid())
            and not st.st_mode & 0o022)


def lookup(python: Python, entry: Path, names: list, job_env: Mapping[str, str],
           login_env: Mapping[str, str], cwd: Optional[Path], timeout: float,
           edits: Sequence = ()) -> CmdResult:
    """Look `names` up as the job's Python would find them (LOOKUP_CHILD), with `python`,
    from `cwd`; `job_env`: the job's variables, handed over as data; the child runs in
    the doctor's own environment (child_env). `edits`: (directory, first) of the entry's
    own sys.path.insert(0, …) (first) and append (last) (closure.sys_path_edits)."""
    data = {k: job_env[k] for k in READ_VARS if k in job_env}
    return run_cmd([*python.argv, "-I", "-S", "-c", LOOKUP_CHILD, str(entry), json.dumps(names),
                    json.dumps(data), str(python.prefix or ""),
                    json.dumps([[str(d), bool(first)] for d, first in edits])],
                   timeout=timeout, env=child_env(login_env),
                   cwd=str(cwd) if cwd is not None else None)


def activated_env(scripts: list, cwd: Path) -> Optional[Path]:
    """The last venv (`source X/bin/activate`) or conda env (`conda activate /path`)
    the scripts activate (a relative one from `cwd`); Skip when one is named by
    something the doctor cannot read."""
    env_dir: Optional[Path] = None
    for s in scripts:
        for cmd in s.commands:
            argv = list(cmd.argv)
            if argv[:1] and argv[0] in ("source", ".") and len(argv) > 1 \
                    and argv[1].endswith("bin/activate"):
                target = argv[1][:-len("bin/activate")].rstrip("/") or "."
            elif argv[:1] and argv[0] in ("conda", "mamba", "micromamba") \
                    and "activate" in argv[1:2] and len(argv) > 2:
                target = argv[-1]
                if "/" not in target:
                    raise Skip(f"the conda env `{target}` ({s.rel}:{cmd.line}) is named, not "
                               "a path the doctor can find")
            else:
                continue
            if not resolvable(target):
                raise Skip(f"the environment activated at {s.rel}:{cmd.line} ({target}) is "
                           "named by a variable the doctor cannot resolve")
            env_dir = Path(target) if os.path.isabs(target) else cwd / target
    return env_dir
