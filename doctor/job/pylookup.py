"""Finding modules in the job's Python without importing anything.

`LOOKUP_CHILD` runs as `PYTHON -I -S -c LOOKUP_CHILD ENTRY_DIR JSON_NAMES`, with PYTHON
this machine's interpreter, a venv's, or a container's; it prints one JSON line:
`{"sys_path": [...], "found": {name: {"origin", "missing", "locations"}}}`.
"""
from __future__ import annotations

# Runs in a child with the job's environment, isolated (`-I -S`: no site, no user site,
# no PYTHON* variables, nothing from the working directory on sys.path), so that nothing
# of the repo runs: not a `json.py` shadowing the stdlib, not a `sitecustomize.py` on the
# job's PYTHONPATH, not a package's `__init__.py`. It rebuilds the path the job's Python
# would have (sys.path[0], PYTHONPATH, the stdlib, the site directories with the path
# lines of their .pth files and setuptools' editable-install MAPPING, read as data), then
# finds each module with PathFinder on explicit paths: a dotted name walks the package
# directories itself instead of importing the parents as importlib.util.find_spec would.
LOOKUP_CHILD = r"""
import ast, importlib.machinery as m, json, os, site, sys
entry, names = sys.argv[1], json.loads(sys.argv[2])
env = os.environ
path = [] if env.get("PYTHONSAFEPATH") else [entry]
path += [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
path += sys.path
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

# under -S, Python < 3.12 leaves sys.prefix at the base: find the venv as site.venv() does
prefix = sys.prefix
if prefix == sys.base_prefix:
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    for d in (exe_dir, os.path.dirname(exe_dir)):
        if os.path.isfile(os.path.join(d, "pyvenv.cfg")):
            prefix = os.path.dirname(exe_dir)
            break
venv = prefix != sys.base_prefix
system_site = True
if venv:
    try:
        cfg = open(os.path.join(prefix, "pyvenv.cfg")).read().lower().replace(" ", "")
        system_site = "include-system-site-packages=true" in cfg
    except OSError:
        pass
if not env.get("PYTHONNOUSERSITE") and system_site:
    add_site(site.getusersitepackages())
for d in site.getsitepackages([prefix] + ([sys.base_prefix] if venv and system_site else [])):
    add_site(d)

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

out = {"sys_path": path, "found": {}}
for name in names:
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
    out["found"][name] = res
print(json.dumps(out))
"""

