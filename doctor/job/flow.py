"""The one reading of code paths that the code checks share (from the AST, never run).

Which calls return, raise or exit; which repo function a call runs (one level, through
the module's imports, `self.method()` and `self.attr.method()`); how a block ends on
every path; what a handler swallows; whether an exception is the same on every rank.
collective-on-error-path and exit-masks-errors keep only their rules on top of it.
"""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from doctor.job.sources import dotted, nodes, raw_texts, source_path, tree_of, walk

UNKNOWN = "unknown"      # an exit status the doctor does not follow

# Library calls that never return: they raise (pytest's outcomes are exceptions) or end
# the process. The value: "raise", or "exit" for those that end the process.
NEVER_RETURNS = {"pytest.skip": "raise", "pytest.fail": "raise", "pytest.exit": "raise",
                 "pytest.xfail": "raise", "unittest.SkipTest": "raise",
                 "sys.exit": "exit", "os._exit": "exit", "os.abort": "exit",
                 "exit": "exit", "quit": "exit"}
NORETURN_TYPES = ("NoReturn", "Never")


# ---- exit calls ----------------------------------------------------------------------
def statements(tree: ast.AST) -> list:
    """Every statement, nested ones too, without walking expressions (cheap: imports and
    assignments are statements). A module's list is made once (four readers ask for it)."""
    found = getattr(tree, "_doctor_statements", None)
    if found is not None:
        return found
    found = []
    todo = list(getattr(tree, "body", []))
    while todo:
        st = todo.pop()
        found.append(st)
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            for child in getattr(st, name, None) or ():
                todo += getattr(child, "body", []) if not isinstance(child, ast.stmt) \
                    else [child]
    if isinstance(tree, ast.Module):
        tree._doctor_statements = found  # type: ignore[attr-defined]  # not a field: walk skips it
    return found


def import_aliases(tree: ast.Module) -> dict:
    """Local names for os, sys and their exit functions (`from os import _exit as die`)."""
    out = {"exit": "exit", "quit": "quit"}
    for node in statements(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name in ("os", "sys"):
                    out[a.asname or a.name] = a.name
        elif isinstance(node, ast.ImportFrom) and node.module in ("os", "sys") and not node.level:
            for a in node.names:
                if a.name in ("_exit", "exit"):
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name in ("exit", "quit"):
            out.pop(node.name, None)   # the module defines its own exit()
    return out


def exit_name(func: ast.AST, aliases: dict) -> Optional[str]:
    """"os._exit", "sys.exit", "exit" or "quit" when the call is one of them."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        mod = aliases.get(func.value.id)
        full = f"{mod}.{func.attr}" if mod in ("os", "sys") else ""
        return full if full in ("os._exit", "sys.exit") else None
    if isinstance(func, ast.Name):
        name = aliases.get(func.id)
        return name if name in ("os._exit", "sys.exit", "exit", "quit") else None
    return None


def exit_code(node: ast.AST, consts: dict) -> object:
    """The status the exit leaves: an int 0-255 as the shell sees it (`exit(-1)` is
    255), 1 for a message (sys.exit("msg") prints it), or UNKNOWN."""
    call = node.exc if isinstance(node, ast.Raise) else node
    if not isinstance(call, ast.Call):
        return 0                                   # bare `raise SystemExit`
    args = list(call.args) + [k.value for k in call.keywords]
    if not args:
        return 0
    arg = consts.get(args[0].id, args[0]) if isinstance(args[0], ast.Name) else args[0]
    if isinstance(arg, ast.UnaryOp) and isinstance(arg.op, (ast.USub, ast.UAdd)) and \
            isinstance(arg.operand, ast.Constant) and type(arg.operand.value) is int:
        n = arg.operand.value
        return (-n if isinstance(arg.op, ast.USub) else n) & 0xFF
    if isinstance(arg, ast.Constant):
        v = arg.value
        return 0 if v is None or v is False else int(v) & 0xFF \
            if isinstance(v, (int, bool)) else 1
    return 1 if _is_text(arg) else UNKNOWN


def _is_text(node: ast.AST) -> bool:
    """A message: sys.exit("...") prints it and exits 1."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _is_text(node.left) or (isinstance(node.left, ast.Constant) and
                                       isinstance(node.left.value, str))
    if isinstance(node, ast.Call):
        f = node.func
        return (isinstance(f, ast.Name) and f.id in ("str", "repr")) or (
            isinstance(f, ast.Attribute) and f.attr == "format" and
            isinstance(f.value, ast.Constant) and isinstance(f.value.value, str))
    return False


def module_constants(tree: ast.Module) -> dict:
    """Names the module assigns once, at its top level, to a constant (EXIT_OK = 0)."""
    seen: dict = {}
    for n in statements(tree):
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target]
                  if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else []):
            if isinstance(t, ast.Name):
                seen.setdefault(t.id, []).append(n)
    return {name: nodes[0].value for name, nodes in seen.items() if len(nodes) == 1 and
            nodes[0] in tree.body and isinstance(nodes[0].value, (ast.Constant, ast.UnaryOp))}


# ---- handlers -----------------------------------------------------------------------
def handler_types(handler: ast.ExceptHandler) -> list:
    """The names a handler catches (`AssertionError`, `errors.ConfigError`); [] for a
    bare `except:`."""
    t = handler.type
    items = t.elts if isinstance(t, ast.Tuple) else [t] if t is not None else []
    return [dotted(i) or "?" for i in items]


def finally_line(lines: list, first: ast.stmt) -> int:
    """The line of a `finally:` keyword (the AST has no node for it): the nearest line
    above its first statement that says `finally:`. `lines`: the module's text."""
    for n in range(first.lineno - 1, 0, -1):
        if n <= len(lines) and re.match(r"\s*finally\s*:", lines[n - 1]):
            return n
    return first.lineno


# ---- modules and calls --------------------------------------------------------------
def module_names(rel: str) -> list:
    """Dotted names a file is imported by: `pkg/mod.py` → pkg.mod (and without src.)."""
    stem = rel[:-3] if rel.endswith(".py") else rel
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    names = [".".join(parts)] if parts else []
    if len(parts) > 1 and parts[0] == "src":
        names.append(".".join(parts[1:]))
    return names


class Module:
    """One source file: its imports (local name → dotted target), functions, classes."""

    def __init__(self, rel: str, tree: ast.Module, dotted_name: str):
        self.rel, self.tree, self.name = rel, tree, dotted_name
        self.imports: dict = {}
        self.functions = {n.name: n for n in tree.body
                          if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        for node in statements(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.imports[a.asname or a.name.split(".")[0]] = \
                        a.name if a.asname else a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(node)
                for a in node.names:
                    self.imports[a.asname or a.name] = f"{base}.{a.name}" if base else a.name

    @property
    def aliases(self) -> dict:
        """Local names of os, sys and their exits (made on first use)."""
        if "_aliases" not in self.__dict__:
            self._aliases = import_aliases(self.tree)
        return self._aliases

    @property
    def consts(self) -> dict:
        if "_consts" not in self.__dict__:
            self._consts = module_constants(self.tree)
        return self._consts

    def _absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = self.name.split(".")
        is_pkg = self.rel.endswith("__init__.py")
        base = parts[:len(parts) - node.level + (1 if is_pkg else 0)]
        return ".".join(base + ([node.module] if node.module else []))

    def qualified(self, func: ast.AST) -> str:
        """A call's name through the module's imports: `skip` of `from pytest import
        skip` is pytest.skip, `dist.barrier` of `import torch.distributed as dist`
        torch.distributed.barrier."""
        name = dotted(func)
        head, dot, rest = name.partition(".")
        if head in self.imports and not (head in self.functions or head in self.classes):
            return self.imports[head] + dot + rest
        return name


@dataclass(frozen=True)
class Target:
    """The repo function a call runs."""
    mod: Module
    fn: ast.AST
    cls: Optional[ast.ClassDef]


@dataclass(frozen=True)
class End:
    """How a call or block ends on every path: it raises, or ends the process."""
    kind: str                 # raise | exit | mixed (some paths raise, some exit)
    code: object              # exit: the status (int or UNKNOWN); else None
    text: str                 # the statement that ends it: `os._exit(0)`
    rel: str
    line: int
    via: tuple = ()           # (("helper()", rel, line),) when it ends in a repo function


class Flow:
    """The repo's modules, each parsed on first use, and what their calls do."""

    def __init__(self, job, kind: type = None):  # type: ignore[assignment]
        self.job, self.kind = job, kind or Module   # a check's Module subclass
        self.by_name: dict = job.memo("flow.by_name", lambda: _by_name(job))
        self._mods: dict = {}
        self._ends: dict = {}
        self._envs: dict = {}
        self._pools: dict = {}

    def module(self, path) -> Optional[Module]:
        """The Module of a repo source (None when it is none or does not parse)."""
        key = os.path.normpath(path)
        if key not in self._mods:
            src = source_path(self.job, Path(path))
            tree = tree_of(self.job, src) if src is not None else None
            self._mods[key] = None if src is None or not isinstance(tree, ast.Module) \
                else self.job.memo(("flow.module", _kind(self.kind), os.path.normpath(src)),
                                   lambda: _make(self.job, src, tree, self.kind))
        return self._mods[key]

    def named(self, dotted_name: str, hops: int = 1) -> Optional[Module]:
        """The repo module of that name, also through one re-export of a package
        (`from megatron.core import mpu`, where its __init__ says `mpu = parallel_state`)."""
        path = self.by_name.get(dotted_name)
        if path is not None:
            return self.module(path)
        parent, _, last = dotted_name.rpartition(".")
        pkg = self.named(parent, 0) if parent and hops > 0 else None
        target = _reexport(pkg, last) if pkg is not None else None
        return self.named(target, hops - 1) if target else None

    # -- which repo function a call runs --------------------------------------------
    def function(self, target: Optional[str], hops: int = 1) -> Optional[Target]:
        """`pkg.mod.f` → the def of f when pkg.mod is a repo module defining it (or
        imports it from one: a package's re-export, one hop)."""
        owner, _, attr = (target or "").rpartition(".")
        mod = self.named(owner) if owner else None
        if mod is not None and attr in mod.functions:
            return Target(mod, mod.functions[attr], None)
        again = _reexport(mod, attr) if mod is not None and hops > 0 else None
        return self.function(again, hops - 1) if again else None

    def klass(self, mod: Module, name: str) -> Optional[tuple]:
        if name in mod.classes:
            return mod, mod.classes[name]
        owner, _, attr = mod.imports.get(name, "").rpartition(".")
        other = self.named(owner) if owner else None
        return (other, other.classes[attr]) if other and attr in other.classes else None

    def resolve(self, mod: Module, call: ast.Call,
                cls: Optional[ast.ClassDef]) -> Optional[Target]:
        """The repo function a call runs, when the code shows it."""
        f = call.func
        if isinstance(f, ast.Name):
            if f.id in mod.functions:
                return Target(mod, mod.functions[f.id], None)
            return self.function(mod.imports.get(f.id))
        if not isinstance(f, ast.Attribute):
            return None
        if cls is not None and dotted(f.value) in ("self", "cls", cls.name):
            return _method(mod, cls, f.attr)
        if cls is not None and isinstance(f.value, ast.Attribute) and \
                dotted(f.value.value) == "self":
            kind = _attr_class(cls, f.value.attr)
            found = self.klass(mod, kind) if kind else None
            return _method(found[0], found[1], f.attr) if found else None
        head, _, attr = dotted(f).rpartition(".")
        first, _, more = head.partition(".")
        if first in mod.classes and not more:
            return _method(mod, mod.classes[first], attr)
        if first in mod.imports:
            return self.function(".".join(p for p in (mod.imports[first], more, attr) if p))
        return None

    # -- calls that never return ----------------------------------------------------
    def call_end(self, mod: Module, cls: Optional[ast.ClassDef], call: ast.Call,
                 depth: int = 1) -> Optional[End]:
        """How a call ends when it never returns: a library call that raises or exits
        (pytest.skip, sys.exit, os._exit), a `-> NoReturn` function, or (`depth` levels
        of repo calls) a repo function whose every path raises or exits."""
        exit_ = exit_name(call.func, mod.aliases)
        if exit_:
            return End("exit", exit_code(call, mod.consts), ast.unparse(call), mod.rel,
                       call.lineno)
        kind = NEVER_RETURNS.get(mod.qualified(call.func))
        if kind is not None:
            return End(kind, UNKNOWN if kind == "exit" else None, ast.unparse(call),
                       mod.rel, call.lineno)
        target = self.resolve(mod, call, cls)
        if target is None:
            return None
        end = self.function_end(target, depth)
        if end is None:
            return None
        via = ((f"{dotted(call.func) or ast.unparse(call.func)}()", mod.rel, call.lineno),)
        return End(end.kind, end.code, end.text, end.rel, end.line, via + end.via)

    def function_end(self, t: Target, depth: int = 1) -> Optional[End]:
        """How a repo function ends when it never returns (see call_end)."""
        fn = t.fn
        ret = getattr(fn, "returns", None)
        if ret is not None and (dotted(ret) or "").rsplit(".", 1)[-1] in NORETURN_TYPES:
            return End("raise", None, f"{getattr(fn, 'name', '?')}() -> NoReturn", t.mod.rel,
                       getattr(fn, "lineno", 0))
        if depth <= 0 or any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in walk(fn)):
            return None     # a generator returns at once; deeper calls are not followed
        key = (id(fn), depth)
        if key not in self._ends:
            self._ends[key] = None   # a recursive call ends like the function: not known
            self._ends[key] = self.block_end(t.mod, t.cls, getattr(fn, "body", []),
                                             depth - 1)
        return self._ends[key]

    def block_end(self, mod: Module, cls: Optional[ast.ClassDef], stmts: list,
                  depth: int = 0) -> Optional[End]:
        """How a block ends when every path through it raises or exits; None when some
        path falls through, returns, breaks or continues."""
        for st in stmts:
            end = self._stmt_end(mod, cls, st, depth)
            if end is not None:
                return end
            if isinstance(st, (ast.Return, ast.Break, ast.Continue)):
                return None
        return None

    def _stmt_end(self, mod: Module, cls: Optional[ast.ClassDef], st: ast.stmt,
                  depth: int) -> Optional[End]:
        if isinstance(st, ast.Raise):
            exc = st.exc.func if isinstance(st.exc, ast.Call) else st.exc
            if exc is not None and dotted(exc) == "SystemExit":
                return End("exit", exit_code(st, mod.consts), ast.unparse(st), mod.rel,
                           st.lineno)
            return End("raise", None, ast.unparse(st), mod.rel, st.lineno)
        if isinstance(st, ast.Assert) and isinstance(st.test, ast.Constant) and \
                not st.test.value:
            return End("raise", None, ast.unparse(st), mod.rel, st.lineno)
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
            return self.call_end(mod, cls, st.value, depth)
        if isinstance(st, ast.If):
            a = self.block_end(mod, cls, st.body, depth)
            b = self.block_end(mod, cls, st.orelse, depth) if a is not None else None
            return _both(a, b)
        if isinstance(st, (ast.With, ast.AsyncWith)):
            return self.block_end(mod, cls, st.body, depth)
        if isinstance(st, ast.Try) or type(st).__name__ == "TryStar":
            final = self.block_end(mod, cls, getattr(st, "finalbody", []), depth)
            if final is not None:
                return final
            body = self.block_end(mod, cls, getattr(st, "body", []), depth)
            for h in getattr(st, "handlers", []):
                body = _both(body, self.block_end(mod, cls, h.body, depth)) \
                    if body is not None else None
            return body
        return None


def _both(a: Optional[End], b: Optional[End]) -> Optional[End]:
    """Two paths that both end: the same kind (and status) or `mixed`."""
    if a is None or b is None:
        return None
    if (a.kind, a.code) == (b.kind, b.code):
        return a
    if a.kind == b.kind == "exit":
        return End("exit", UNKNOWN, a.text, a.rel, a.line, a.via)
    return End("mixed", None, a.text, a.rel, a.line, a.via)


def _kind(kind: type) -> str:
    """A Module class's full name: a check's subclass may be called Module too."""
    return f"{kind.__module__}.{kind.__qualname__}"


def _reexport(pkg: Module, name: str) -> Optional[str]:
    """The dotted name a module's `name` stands for: its import, or a top-level
    `name = other` of an imported or sibling name."""
    if name in pkg.imports:
        return pkg.imports[name]
    for st in pkg.tree.body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Name) and any(
                isinstance(t, ast.Name) and t.id == name for t in st.targets):
            return pkg.imports.get(st.value.id, f"{pkg.name}.{st.value.id}")
    return None


def _by_name(job) -> dict:
    """dotted module name → path of the repo sources (read by name only, none parsed)."""
    top, out = str(job.repo).rstrip("/") + "/", {}  # type: tuple[str, dict]
    for p, _ in raw_texts(job):
        rel = p[len(top):] if p.startswith(top) else job.rel(p)
        for n in module_names(rel) or [rel]:
            out.setdefault(n, p)
    return out


def _make(job, path: Path, tree: ast.Module, kind: type = Module) -> Module:
    rel = job.rel(path)
    return kind(rel, tree, (module_names(rel) or [rel])[0])


def _method(mod: Module, cls: ast.ClassDef, name: str) -> Optional[Target]:
    for node in cls.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return Target(mod, node, cls)
    return None


def _attr_class(cls: ast.ClassDef, attr: str) -> Optional[str]:
    """K when the class assigns `self.attr = K(...)` (one class, however often)."""
    table = getattr(cls, "_doctor_attr_kinds", None)
    if table is None:   # every `self.x = K(...)` of the class in one walk, not one per call
        table = {}
        for n in walk(cls):
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call):
                for t in n.targets:
                    if isinstance(t, ast.Attribute) and dotted(t.value) == "self":
                        table.setdefault(t.attr, set()).add(dotted(n.value.func))
        cls._doctor_attr_kinds = table  # type: ignore[attr-defined]  # not a field
    kinds = set(table.get(attr, ()))
    kind = kinds.pop() if len(kinds) == 1 else ""
    return kind if kind and "." not in kind else None


# ---- exceptions that are the same on every rank ----------------------------------------
# Calls that compute from their arguments alone (no I/O, no rank, no clock).
PURE = frozenset({"len", "isinstance", "issubclass", "hasattr", "getattr", "str", "int",
                  "float", "bool", "tuple", "list", "dict", "set", "frozenset", "type",
                  "min", "max", "sorted", "repr", "format", "any", "all", "range", "abs",
                  "functools.partial", "partial", "callable", "id",
                  "json.loads", "ast.literal_eval"})
CONFIG_ROOTS = frozenset({"args", "config", "cfg", "conf", "opt", "opts", "hparams",
                          "settings", "self.config", "self.args", "self.cfg",
                          "self.hparams"})
# Exceptions the program's own logic raises (an assertion, a missing key or attribute):
# the same on every rank when what raised them is. Others (OSError, RuntimeError,
# Exception, a bare except) also come from the environment: a file, a device, the network.
LOGIC_ERRORS = frozenset({"AssertionError", "KeyError", "AttributeError", "IndexError",
                          "LookupError", "TypeError", "ValueError", "NotImplementedError",
                          "StopIteration"})


def logic_only(handler: ast.ExceptHandler) -> bool:
    names = handler_types(handler)
    return bool(names) and all(n.rsplit(".", 1)[-1] in LOGIC_ERRORS for n in names)


class Uniform:
    """Whether code computes only from state that every rank holds alike, so that
    whatever it raises, it raises on every rank or on none.

    Rank-uniform inputs: constants; the module's globals that no assignment sets from a
    rank (a parallel group set by the initialisation every rank runs: whether it is
    None is the same everywhere); configuration (`args.x`, `config.x`, `self.config.x`);
    a function's parameters when the call passes such values; locals computed from
    these. Calls: the pure builtins (len, isinstance, getattr, ...) and, one level deep,
    repo functions that compute the same way (also when the call picks one of a literal
    dict or list of them: `for name, getter in {...}.items(): getter()`). Anything else
    is not known to be uniform: a rank, a file read, a tensor's value, a library call.
    """

    def __init__(self, flow: Flow, mod: Module, cls: Optional[ast.ClassDef], fn: ast.AST):
        self.flow, self.mod, self.cls, self.fn = flow, mod, cls, fn
        self._envs = flow._envs     # (function, depth) → its uniform locals, per run

    def block(self, stmts: list) -> bool:
        """Every expression the statements evaluate is rank-uniform."""
        env = self._env(self.fn, set())   # the function's own parameters: not known
        return all(self._stmt(st, env, depth=1) for st in stmts)

    def _stmt(self, st: ast.AST, env: set, depth: int, mod: Optional[Module] = None,
              cls: Optional[ast.ClassDef] = None, fn: Optional[ast.AST] = None) -> bool:
        mod, cls, fn = mod or self.mod, cls or self.cls, fn or self.fn
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                           ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal)):
            return True
        skip: set = set()    # a call's name is judged as a call; self.config.x as config
        for node in walk(st):
            if isinstance(node, ast.Call):
                if not self._call(node, env, depth, mod, cls, fn):
                    return False
                skip |= {id(x) for x in walk(node.func)}
            elif isinstance(node, ast.Attribute) and _config(dotted(node)):
                skip |= {id(x) for x in walk(node)}
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and \
                    id(node) not in skip and not self._name(node.id, env, mod):
                return False
        return True

    def _name(self, name: str, env: set, mod: Module) -> bool:
        from doctor.job.ranks import _RANK
        if _RANK.match(name):
            return False
        return name in env or name in CONFIG_ROOTS or name in ("None", "True", "False") or \
            name in _uniform_globals(mod) or name in PURE or name in mod.functions or \
            name in mod.classes or name in mod.imports

    def _call(self, call: ast.Call, env: set, depth: int, mod: Module,
              cls: Optional[ast.ClassDef], fn: ast.AST) -> bool:
        name = mod.qualified(call.func)
        if name in PURE or name.rsplit(".", 1)[-1] in ("get", "items", "keys", "values",
                                                       "format") and \
                dotted(call.func).split(".")[0] in CONFIG_ROOTS | env:
            return True
        targets = self._targets(call, mod, cls, fn)
        if not targets or depth <= 0:
            return False
        for t in targets:
            params = {a.arg for a in t.fn.args.args + t.fn.args.kwonlyargs}  # type: ignore
            inner = self._env(t.fn, params, t.mod, t.cls, depth - 1)
            if not all(self._stmt(st, inner, depth - 1, t.mod, t.cls, t.fn)
                       for st in getattr(t.fn, "body", [])):
                return False
        return True

    def _targets(self, call: ast.Call, mod: Module, cls: Optional[ast.ClassDef],
                 fn: ast.AST) -> list:
        """The repo functions a call may run: the one it names, or each of a literal
        dict/list of functions that a loop takes it from."""
        t = self.flow.resolve(mod, call, cls)
        if t is not None:
            return [t]
        if not isinstance(call.func, ast.Name):
            return []
        key = (id(fn), call.func.id)
        if key not in self.flow._pools:
            self.flow._pools[key] = _literal_pool(fn, call.func.id)
        pool = self.flow._pools[key]
        out = []
        for f in pool or []:
            if isinstance(f, ast.Call) and mod.qualified(f.func) in ("functools.partial",
                                                                     "partial") and f.args:
                f = f.args[0]
            t = self.flow.resolve(mod, ast.Call(func=f, args=[], keywords=[]), cls)
            if t is None:
                return []
            out.append(t)
        return out

    def _env(self, fn: ast.AST, params: set, mod: Optional[Module] = None,
             cls: Optional[ast.ClassDef] = None, depth: int = 1) -> set:
        """The function's parameters (`params`: their arguments are judged at the call)
        and the locals whose every assignment is rank-uniform (a fixed point)."""
        key = (id(fn), depth, frozenset(params))
        if key not in self._envs:
            self._envs[key] = set(params)     # while computing: a recursive call sees this
            self._envs[key] = self._compute_env(fn, params, mod or self.mod,
                                                cls or self.cls, depth)
        return self._envs[key]

    def _compute_env(self, fn: ast.AST, params: set, mod: Module,
                     cls: Optional[ast.ClassDef], depth: int) -> set:
        assigns = [n for n in walk(fn) if isinstance(n, (ast.Assign, ast.AnnAssign,
                                                             ast.AugAssign, ast.For))]

        def targets(n: ast.AST) -> set:
            ts = n.targets if isinstance(n, ast.Assign) else [n.target]  # type: ignore
            return {x.id for t in ts for x in walk(t) if isinstance(x, ast.Name)}
        env = set(params).union(*[targets(n) for n in assigns])
        changed = True
        while changed:
            changed = False
            for n in assigns:
                value = n.iter if isinstance(n, ast.For) else n.value  # type: ignore
                names = targets(n) & env
                if names and (value is None or
                              not self._stmt(value, env, depth, mod, cls, fn)):
                    env -= names
                    changed = True
        return env


def _config(name: str) -> bool:
    """`args.lr`, `self.config.x`: a configuration value, the same on every rank (not
    `args.local_rank`: torch.distributed.launch passes each rank its own)."""
    from doctor.job.ranks import _RANK
    return any(name == r or name.startswith(r + ".") for r in CONFIG_ROOTS) and \
        not _RANK.match(name.rsplit(".", 1)[-1])


def _literal_pool(fn: ast.AST, name: str) -> Optional[list]:
    """The values `name` takes when a loop of `fn` reads it from a literal: `for name in
    [f, g]`, `for key, name in D.items()` or `D.values()` with `D = {...}` in `fn`."""
    if not name:
        return None
    literals = {t.id: n.value for n in walk(fn) if isinstance(n, ast.Assign)
                for t in n.targets if isinstance(t, ast.Name)
                and isinstance(n.value, (ast.Dict, ast.List, ast.Tuple))}
    for loop in walk(fn):
        if not isinstance(loop, ast.For):
            continue
        it, tgt = loop.iter, loop.target
        if isinstance(it, ast.Name):
            it = literals.get(it.id, it)
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) and \
                isinstance(it.func.value, ast.Name) and it.func.attr in ("items", "values"):
            d = literals.get(it.func.value.id)
            if not isinstance(d, ast.Dict):
                continue
            if it.func.attr == "values" and isinstance(tgt, ast.Name) and tgt.id == name:
                return list(d.values)
            if it.func.attr == "items" and isinstance(tgt, ast.Tuple) and \
                    len(tgt.elts) == 2 and isinstance(tgt.elts[1], ast.Name) and \
                    tgt.elts[1].id == name:
                return list(d.values)
        elif isinstance(it, (ast.List, ast.Tuple)) and isinstance(tgt, ast.Name) and \
                tgt.id == name:
            return list(it.elts)
    return None


def _uniform_globals(mod: Module) -> set:
    """The module's globals (top level, or a function's `global` statement) that every
    assignment sets to a plainly uniform value: constants, literals, configuration,
    pure builtins of these and of other such globals (a fixed point). A library call's
    result (`DataLoader(ds, sampler=DistributedSampler(ds))`), a loop's target or a
    rank is per-rank data."""
    cached = getattr(mod, "_uniform_globals", None)
    if cached is not None:
        return cached
    declared = {n for st in nodes(mod.tree) if isinstance(st, ast.Global) for n in st.names}
    good = {t.id for st in mod.tree.body if isinstance(st, (ast.Assign, ast.AnnAssign))
            for t in (st.targets if isinstance(st, ast.Assign) else [st.target])
            if isinstance(t, ast.Name)} | declared
    sets = []        # (the names a statement binds, the value it binds them to or None)
    for st in nodes(mod.tree):
        if isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            ts = st.targets if isinstance(st, ast.Assign) else [st.target]
            sets.append(({x.id for t in ts for x in walk(t) if isinstance(x, ast.Name)},
                         st.value if isinstance(st, ast.AugAssign) or st.value else None))
        elif isinstance(st, (ast.For, ast.AsyncFor)):   # each rank's own items, as a rule
            sets.append(({x.id for x in walk(st.target) if isinstance(x, ast.Name)}, None))
    sets = [(names & good, value) for names, value in sets if names & good]
    changed = True
    while changed:
        changed = False
        for names, value in sets:
            if names & good and (value is None or not _plain_uniform(value, good, mod)):
                good -= names
                changed = True
    mod._uniform_globals = good  # type: ignore[attr-defined]
    return good


def _plain_uniform(expr: ast.AST, good: set, mod: Module) -> bool:
    """Every rank computes the same value: built from constants, literals, `good`
    globals, configuration, imported names and pure builtin calls, no rank."""
    from doctor.job.ranks import _RANK, _rank_expr
    skip: set = set()
    for node in walk(expr):
        if id(node) in skip:
            continue
        if isinstance(node, ast.expr) and _rank_expr(node):
            return False
        if isinstance(node, ast.Call):
            if mod.qualified(node.func) not in PURE:
                return False
            skip |= {id(x) for x in walk(node.func)}
        elif isinstance(node, ast.Attribute) and _config(dotted(node)):
            skip |= {id(x) for x in walk(node)}
        elif isinstance(node, ast.Name) and (_RANK.match(node.id) or not (
                node.id in good or node.id in CONFIG_ROOTS or node.id in PURE or
                node.id in ("None", "True", "False") or node.id in mod.imports)):
            return False
    return True
