"""What the job's Python code loads before training, read from its AST (never imported):
string constants that reach torch.load / pickle.load / np.load / open(..., "rb"), followed
through names and up to two call levels, what the code writes (producers), and whether the
code around a load falls back to computing the file's content (seed 000's rank-0 path)."""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from doctor import fs
from doctor.model import Location
from doctor.job.context import Job
from doctor.job.sources import python_trees

LOADS = {"torch.load": 0, "np.load": 0, "numpy.load": 0}
WRITES = {"torch.save": 1, "np.save": 0, "numpy.save": 0, "np.savez": 0, "numpy.savez": 0,
          "np.savez_compressed": 0, "numpy.savez_compressed": 0}
EXISTS_FUNCS = {"exists", "isfile", "isdir", "lexists"}
EXISTS_METHODS = {"exists", "is_file", "is_dir"}
MISSING_EXC = {"FileNotFoundError", "OSError", "IOError", "EnvironmentError", "Exception",
               "BaseException"}
QUIET = {"print", "warn", "warning", "info", "debug", "error", "exception", "log", "critical",
         "write", "flush", "format", "str", "repr", "len", "isinstance", "time", "perf_counter"}
WRAPPERS = {"Path", "PurePath", "PosixPath", "str", "fspath", "expanduser", "expandvars",
            "abspath", "realpath", "normpath"}
MAX_HOPS = 2   # constant → parameter → parameter → load (seed 000: a constructor, a helper)


@dataclass
class Cand:
    """A path the job needs, as written, and how the doctor knows it is read."""
    written: str
    loc: Location
    source: str                      # "config key a.b" or "code"
    complete: bool = True            # the whole path from the value to the read is shown
    load: Optional[str] = None       # file:line of the read
    fallback: Optional[str] = None   # file:line: what the code computes when it is missing
    chain: list = field(default_factory=list)
    module: Optional[str] = None     # the module that reads it
    root: Any = None                 # the config document, for ${a.b}
    expand: bool = True              # $VAR / ~ are expanded (configs; expandvars in code)


@dataclass
class Val:
    text: str
    complete: bool = True
    expand: bool = False


# ---- reading the code --------------------------------------------------------------------
def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    return ""


def _last(node: ast.AST) -> str:
    return _dotted(node).rsplit(".", 1)[-1]


def _str(node: Optional[ast.AST]) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


@dataclass
class Fn:
    node: Any
    rel: str
    cls: Optional[str]
    params: list
    defaults: dict
    assigns: dict


@dataclass
class Param:
    fn: Fn
    name: str


def _assigns(nodes: Iterator[ast.AST]) -> dict:
    """name → its one plain assigned value; None when bound more than once or otherwise."""
    out: dict = {}
    for n in nodes:
        pairs: list = []
        if isinstance(n, ast.Assign):
            pairs = [(t, n.value if len(n.targets) == 1 else None) for t in n.targets]
        elif isinstance(n, ast.AnnAssign) and n.value is not None:
            pairs = [(n.target, n.value)]
        elif isinstance(n, (ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
            pairs = [(n.target, None)]
        elif isinstance(n, ast.withitem) and n.optional_vars is not None:
            pairs = [(n.optional_vars, None)]
        for t, v in pairs:
            if isinstance(t, ast.Name):
                out[t.id] = None if t.id in out else v
            else:
                for x in ast.walk(t):
                    if isinstance(x, ast.Name):
                        out[x.id] = None
    return out


def _module_level(tree: ast.Module) -> Iterator[ast.AST]:
    stack: list = list(tree.body)
    while stack:
        st = stack.pop()
        yield st
        if isinstance(st, (ast.If, ast.Try, ast.With)):
            for f in ("body", "orelse", "finalbody", "items"):
                stack += getattr(st, f, [])
            for h in getattr(st, "handlers", []):
                stack += h.body


class CodeLoads:
    """The repo's functions, calls, reads and writes of files (its AST; never imported)."""

    def __init__(self, job: Job):
        self.job = job
        # every module: a file's producer is often a script no job step runs, and
        # _job_modules says which modules the job reaches
        self.trees = {job.rel(p): t for p, t in python_trees(job, whole=True)}
        self.mods = _module_names(self.trees)
        self.fns: list = []
        self.calls: list = []       # (call, enclosing Fn or None, rel)
        self.parents: dict = {}     # id(node) → parent
        self.mod_assigns = {rel: _assigns(_module_level(t)) for rel, t in self.trees.items()}
        self.imports = {rel: self._imports(rel, t) for rel, t in self.trees.items()}
        for rel, tree in self.trees.items():
            self._index(rel, tree, None, None)
        self.names: dict = {}
        for f in self.fns:
            self.names.setdefault(f.cls if f.node.name == "__init__" else f.node.name,
                                  []).append(f)
        self.writers = self._writers()
        self.job_mods = self._job_modules()

    # -- indexing
    def _index(self, rel: str, node: ast.AST, fn: Optional[Fn], cls: Optional[str]) -> None:
        for child in ast.iter_child_nodes(node):
            self.parents[id(child)] = node
            if isinstance(child, ast.ClassDef):
                self._index(rel, child, fn, child.name)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = child.args
                pos = [x.arg for x in a.posonlyargs + a.args]
                defaults = dict(zip(pos[len(pos) - len(a.defaults):], a.defaults))
                defaults.update({k.arg: d for k, d in zip(a.kwonlyargs, a.kw_defaults) if d})
                new = Fn(child, rel, cls, pos + [x.arg for x in a.kwonlyargs], defaults,
                         _assigns(ast.walk(child)))
                self.fns.append(new)
                self._index(rel, child, new, None)
            else:
                if isinstance(child, ast.Call):
                    self.calls.append((child, fn, rel))
                self._index(rel, child, fn, cls)

    def _imports(self, rel: str, tree: ast.Module) -> dict:
        """local name → (module rel, name there) for `from m import x [as y]` of the repo."""
        out: dict = {}
        pkg = _package(rel)
        for n in ast.walk(tree):
            if isinstance(n, ast.ImportFrom):
                base = ".".join(pkg.split(".")[:len(pkg.split(".")) - n.level + 1]) \
                    if n.level else ""
                mod = ".".join(x for x in (base, n.module or "") if x)
                for a in n.names:
                    if mod in self.mods:
                        out[a.asname or a.name] = (self.mods[mod], a.name)
        return out

    def _job_modules(self) -> set:
        """The entry modules of the job's steps, the classes its configs name, and the repo
        modules they import (all of the repo but its tests when no entry is known)."""
        steps = [st for s in (self.job.scripts or [None]) for st in self.job.steps(s)]
        todo = {self.job.rel(p) for st in steps if (p := self.job.entry_file(st)) is not None}
        for cfg in self.job.configs:
            for _kp, m in cfg.mappings():
                for key in ("_target_", "class_path"):
                    target = str(m.get(key, ""))
                    while "." in target and target not in self.mods:
                        target = target.rsplit(".", 1)[0]
                    if target in self.mods:
                        todo.add(self.mods[target])
        if not todo:
            return {r for r in self.trees if not re.search(r"(^|/)(tests?|test_[^/]*\.py)", r)}
        seen: set = set()
        while todo:
            rel = todo.pop()
            if rel in seen or rel not in self.trees:
                continue
            seen.add(rel)
            todo |= {m for m, _ in self.imports[rel].values()}
            for n in ast.walk(self.trees[rel]):
                names = [a.name for a in n.names] if isinstance(n, ast.Import) else \
                    [f"{n.module}.{a.name}" for a in n.names] + [n.module] \
                    if isinstance(n, ast.ImportFrom) and n.module and not n.level else []
                todo |= {self.mods[x] for x in names if x in self.mods}
        return seen

    # -- values
    def eval(self, fn: Optional[Fn], rel: str, node: Optional[ast.AST], depth: int = 0) -> Any:
        """Val (a path string and where it is written), Param, or why (str)."""
        if node is None or depth > 8:
            return "a value the doctor does not follow"
        if _str(node) is not None:
            return Val(str(_str(node)), expand=False), Location(rel, getattr(node, "lineno", None))
        if isinstance(node, ast.JoinedStr):
            parts = [self.eval(fn, rel, v.value if isinstance(v, ast.FormattedValue) else v,
                               depth + 1) for v in node.values]
            return self._join(parts, "", node)
        if isinstance(node, ast.Name):
            if fn is not None and node.id in fn.params and node.id not in fn.assigns:
                return Param(fn, node.id)
            if fn is not None and node.id in fn.assigns:
                return self.eval(fn, rel, fn.assigns[node.id], depth + 1)
            if node.id in self.mod_assigns[rel]:
                return self.eval(None, rel, self.mod_assigns[rel][node.id], depth + 1)
            if node.id in self.imports[rel]:
                mrel, name = self.imports[rel][node.id]
                return self.eval(None, mrel, ast.Name(name, lineno=node.lineno), depth + 1)
            return f"{node.id}: a name the doctor cannot find"
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
            parts = [self.eval(fn, rel, x, depth + 1) for x in (node.left, node.right)]
            return self._join(parts, "/" if isinstance(node.op, ast.Div) else "", node)
        if isinstance(node, ast.Call):
            return self._call_value(fn, rel, node, depth)
        return f"{ast.unparse(node)}: not a value the doctor follows"

    def _call_value(self, fn: Optional[Fn], rel: str, node: ast.Call, depth: int) -> Any:
        name, f = _last(node.func), _dotted(node.func)
        if f in ("os.getenv", "getenv", "os.environ.get", "environ.get") and node.args and \
                _str(node.args[0]):
            default = self.eval(fn, rel, node.args[1], depth + 1) if len(node.args) > 1 \
                else None
            if isinstance(default, tuple):
                v, at = default
                return Val(f"${{oc.env:{_str(node.args[0])},{v.text}}}", False, True), at
            return Val(f"${{{_str(node.args[0])}}}", True, True), Location(rel, node.lineno)
        if isinstance(node.func, ast.Attribute) and name in ("expanduser", "resolve",
                                                             "absolute") and not node.args:
            return self.eval(fn, rel, node.func.value, depth + 1)
        if name in WRAPPERS or f in ("os.path.join", "osp.join", "path.join"):
            if node.keywords or not node.args or any(isinstance(a, ast.Starred)
                                                      for a in node.args):
                return f"{ast.unparse(node)}: not a value the doctor follows"
            got = self._join([self.eval(fn, rel, a, depth + 1) for a in node.args], "/", node)
            if isinstance(got, tuple) and name in ("expanduser", "expandvars"):
                got[0].expand = True
            return got
        return f"{ast.unparse(node)}: the result of a call the doctor does not follow"

    def _join(self, parts: list, sep: str, node: ast.AST) -> Any:
        bad = next((p for p in parts if not isinstance(p, tuple)), None)
        if bad is not None:
            return bad if isinstance(bad, str) else \
                f"{ast.unparse(node)}: built from a parameter"
        text = parts[0][0].text
        for p in parts[1:]:
            t = p[0].text
            text = t if sep and t.startswith("/") else \
                (text.rstrip("/") + sep + t if sep else text + t)
        return Val(text, all(p[0].complete for p in parts),
                   any(p[0].expand for p in parts)), parts[0][1]

    # -- calls between the repo's functions
    def callers(self, f: Fn) -> Iterator[tuple]:
        """(call, enclosing Fn, rel, positional offset) for the calls that reach f."""
        init = f.node.name == "__init__"
        name = f.cls if init else f.node.name
        unique = len(self.names.get(name, [])) == 1
        offset = 1 if f.cls else 0
        for call, fn, rel in self.calls:
            if rel not in self.job_mods or _last(call.func) != name:
                continue
            if init or not f.cls:
                ok = unique or (isinstance(call.func, ast.Name) and (
                    rel == f.rel or self.imports[rel].get(name, ("",))[0] == f.rel))
            else:
                ok = unique or (fn is not None and fn.cls == f.cls and fn.rel == f.rel and
                                _dotted(call.func).split(".")[0] in ("self", "cls"))
            if ok and isinstance(call.func, (ast.Name, ast.Attribute)):
                yield call, fn, rel, offset

    def arg_for(self, call: ast.Call, f: Fn, name: str, offset: int) -> Optional[tuple]:
        """(expr, Fn, rel) that gives the parameter its value at this call."""
        kw = next((k.value for k in call.keywords if k.arg == name), None)
        if kw is not None:
            return kw, None, ""
        i = f.params.index(name) - offset
        if i < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[:i + 1]):
            return call.args[i], None, ""
        if any(k.arg is None for k in call.keywords) or name not in f.defaults:
            return None
        return f.defaults[name], None, f.rel   # not passed: the default, in f's module

    # -- reads, and what the code does when the file is missing
    def loads(self) -> Iterator[tuple]:
        """(call, Fn, rel, the path expression) for every read of a file by path."""
        for call, fn, rel in self.calls:
            if rel not in self.job_mods:
                continue
            f = _dotted(call.func)
            if f in LOADS:
                arg = call.args[0] if call.args else next(
                    (k.value for k in call.keywords if k.arg in ("f", "file")), None)
            elif _last(call.func) == "open" and _mode(call, isinstance(call.func, ast.Attribute)
                                                      and f != "io.open") == "read":
                arg = call.func.value if isinstance(call.func, ast.Attribute) and \
                    f not in ("io.open", "builtins.open") else (call.args or [None])[0]
            else:
                continue
            if arg is not None:
                yield call, fn, rel, arg

    def candidates(self) -> Iterator[Cand]:
        seen: set = set()
        for call, fn, rel, arg in self.loads():
            load = f"{rel}:{call.lineno}"
            state = self.around(fn, rel, call, arg, soft_callee=False)
            for cand in self._follow(fn, rel, arg, [f"{load} {_short(call)}"], state, 0):
                cand.load, cand.module = load, rel
                key = (cand.written, str(cand.loc), load)
                if key not in seen:
                    seen.add(key)
                    yield cand

    def _follow(self, fn: Optional[Fn], rel: str, expr: ast.AST, chain: list, state: tuple,
                hops: int) -> Iterator[Cand]:
        got = self.eval(fn, rel, expr)
        if isinstance(got, tuple):
            v, at = got
            yield Cand(v.text, at, "code", complete=v.complete,
                       fallback=state[1] if state[0] in ("fallback", "optional") else None,
                       chain=list(reversed(chain)), expand=v.expand)
        elif isinstance(got, Param) and hops < MAX_HOPS:
            for call, cfn, crel, offset in self.callers(got.fn):
                arg = self.arg_for(call, got.fn, got.name, offset)
                if arg is None:
                    continue
                expr2, efn, erel = arg
                nxt = state if state[0] in ("fallback", "optional") else \
                    self.around(cfn, crel, call, expr2, soft_callee=state[0] == "soft")
                link = chain + [f"{crel}:{call.lineno} {_short(call)}"]
                if erel:   # the callee's default value
                    yield from self._follow(None, erel, expr2, link, nxt, hops + 1)
                else:
                    yield from self._follow(cfn, crel, expr2, link, nxt, hops + 1)

    def around(self, fn: Optional[Fn], rel: str, call: ast.Call, path: ast.AST,
               soft_callee: bool) -> tuple:
        """What the code around a read does when the file is missing: ("fallback", where)
        computes instead; ("soft", where) returns a false value to its caller;
        ("optional", where) checks first and does without; ("plain", "") raises."""
        node: ast.AST = call
        while id(node) in self.parents and node is not (fn.node if fn else None):
            parent = self.parents[id(node)]
            branch: Optional[list] = None
            at = getattr(parent, "lineno", 0)
            if isinstance(parent, ast.Try) and node in parent.body:
                for h in parent.handlers:
                    if _catches_missing(h):
                        branch, at = h.body, h.lineno
            elif isinstance(parent, ast.If) and node is parent.test and soft_callee:
                negated = isinstance(parent.test, ast.UnaryOp)
                branch = parent.body if negated else parent.orelse or _after(self, parent)
            elif isinstance(parent, ast.If) and _exists_test(parent.test, path) is not None:
                positive = _exists_test(parent.test, path)
                if node in (parent.body if positive else parent.orelse):
                    branch = parent.orelse if positive else parent.body
                    if not branch:
                        return "optional", f"optional: read only when it exists " \
                                           f"(check at {rel}:{parent.lineno})"
            elif isinstance(parent, ast.Return) and soft_callee:
                return "soft", f"{rel}:{parent.lineno}"
            for prev in _before(parent, node):
                if isinstance(prev, ast.If) and _exists_test(prev.test, path) is False:
                    branch, at = prev.body, prev.lineno
            if branch is not None:
                kind, what = _branch(branch)
                if kind == "compute":
                    return "fallback", f"{rel}:{getattr(what, 'lineno', at)} {_short(what)}"
                if kind in ("soft", "optional"):
                    return kind, f"optional: the code does without it when it is missing " \
                                 f"({rel}:{at})" if kind == "optional" else f"{rel}:{at}"
                return "plain", ""
            node = parent
        return "plain", ""

    # -- who writes a file name
    def _writers(self) -> dict:
        out: dict = {}
        for call, fn, rel in self.calls:
            f = _dotted(call.func)
            if f in WRITES and len(call.args) > WRITES[f]:
                arg: Optional[ast.AST] = call.args[WRITES[f]]
            elif _last(call.func) == "open" and _mode(call, isinstance(
                    call.func, ast.Attribute) and f != "io.open") == "write":
                arg = call.func.value if isinstance(call.func, ast.Attribute) and \
                    f != "io.open" else (call.args or [None])[0]
            else:
                continue
            got = self.eval(fn, rel, arg)
            texts = [got[0].text] if isinstance(got, tuple) else \
                [str(_str(n)) for n in ast.walk(arg) if _str(n)] if arg is not None else []
            for t in texts:
                name = os.path.basename(t.rstrip("/"))
                if "." in name:
                    out.setdefault(name, []).append((rel, call.lineno))
        return out

    def mention(self, job: Job, name: str, reader: Optional[str]) -> Optional[tuple]:
        """(script, line) of a repo script other than the reader that names the file."""
        for p in job.repo_files({".py", ".sh", ".bash", ".sbatch", ".slurm"}, whole=True):
            rel = job.rel(p)
            if rel == reader or re.search(r"(^|/)tests?/", rel):
                continue
            text = fs.read_text(p)  # an input: no report goes over it
            if text is None:
                continue
            lines = text.splitlines()
            line = next((i for i, t in enumerate(lines, 1) if name in t), None)
            if line is not None:
                return rel, line
        return None


def _mode(call: ast.Call, method: bool) -> str:
    """read | write | "" for open(path, mode) (Path.open(mode) when `method`)."""
    args = call.args if method else call.args[1:]
    mode = _str(args[0]) if args else next((_str(k.value) for k in call.keywords
                                            if k.arg == "mode"), None)
    if mode is None:
        return ""
    if any(c in mode for c in "wax"):
        return "write"
    return "read" if "b" in mode else ""


def _catches_missing(h: ast.ExceptHandler) -> bool:
    if h.type is None:
        return True
    types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
    return any(_last(t) in MISSING_EXC for t in types)


def _unwrap(node: ast.AST) -> str:
    while isinstance(node, ast.Call) and _last(node.func) in WRAPPERS and len(node.args) == 1:
        node = node.args[0]
    return ast.unparse(node)


def _exists_test(test: ast.AST, path: ast.AST) -> Optional[bool]:
    """True: `exists(path)` (or `x and exists(path)`); False: `not exists(path)`."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _exists_test(test.operand, path)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return True if any(_exists_test(v, path) for v in test.values) else None
    if not isinstance(test, ast.Call):
        return None
    f = test.func
    if _last(f) in EXISTS_FUNCS and len(test.args) == 1:
        arg: ast.AST = test.args[0]
    elif isinstance(f, ast.Attribute) and f.attr in EXISTS_METHODS and not test.args:
        arg = f.value
    else:
        return None
    return True if _unwrap(arg) == _unwrap(path) else None


def _before(parent: ast.AST, node: ast.AST) -> list:
    """The statements before `node` in the block of `parent` that holds it."""
    for f in ("body", "orelse", "finalbody"):
        block = getattr(parent, f, None)
        if isinstance(block, list) and node in block:
            return block[:block.index(node)]
    return []


def _after(code: CodeLoads, st: ast.If) -> list:
    """The statements after an `if` whose body returns: the path taken when it is false."""
    if not st.body or not isinstance(st.body[-1], ast.Return):
        return []
    parent = code.parents.get(id(st))
    for f in ("body", "orelse", "finalbody"):
        block = getattr(parent, f, None)
        if isinstance(block, list) and st in block:
            return block[block.index(st) + 1:]
    return []


def _branch(stmts: list) -> tuple:
    """What a branch taken when the file is missing does: raise | compute (the call) |
    soft (returns a false value) | optional (goes on without it)."""
    calls = [n for s in stmts for n in ast.walk(s) if isinstance(n, ast.Call)]
    if any(isinstance(n, ast.Raise) for s in stmts for n in ast.walk(s)) or \
            any(_last(c.func) in ("exit", "_exit", "abort") for c in calls):
        return "raise", None
    work = next((c for c in calls if _last(c.func) not in QUIET and
                 not _last(c.func).startswith(("log", "warn"))), None)
    if work is not None:
        return "compute", work
    returns = [n for s in stmts for n in ast.walk(s) if isinstance(n, ast.Return)]
    if returns and all(r.value is None or (isinstance(r.value, ast.Constant) and
                                           not r.value.value) for r in returns):
        return "soft", None
    return "optional", None


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 80 else text[:77] + "..."


def _package(rel: str) -> str:
    parts = rel[:-3].split("/")
    return ".".join(parts[:-1]) if parts[-1] != "__init__" else ".".join(parts[:-1])


def _module_names(trees: dict) -> dict:
    """dotted module name → rel, from the repo root and from src/."""
    out: dict = {}
    for rel in trees:
        for root in ("", "src/"):
            if rel.startswith(root) and rel.endswith(".py"):
                name = rel[len(root):-3].replace("/", ".")
                name = name[:-len(".__init__")] if name.endswith(".__init__") else name
                out.setdefault(name, rel)
    return out
