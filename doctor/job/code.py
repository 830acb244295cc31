"""Settings the training code passes, read from its AST (the repo is never imported).

DataLoader(...) calls with their keyword values, init_process_group timeouts and
patches of torch's default timeout, torch.compile calls, and the os.environ
assignments an entry module makes before it imports torch. A value is followed
only as far as the doctor can show it: a constant, an environment variable
(resolved through the environment the caller passes in, else its default), a
config key's default, a config key path read from the job's configs
(`cfg["a"]["b"]`, `cfg.a.b`), an argparse option (through the job step's
arguments the caller passes in), `self.x` set once in the class's `__init__`,
a literal dict spread, a name assigned once, one level of a module's own helper
function, `get_context("spawn")`, or an expression guarded by the worker count.
Anything else is `unknown`, with its source text and the reason.
"""
from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

from doctor.job.configs import is_unresolved
from doctor.job.pyread import trees_naming
from doctor.job.sources import (dotted, judges_all, nodes, raw_texts, text_of, tree_of,
                                 walk)

# DataLoader's positional parameters after `dataset` (torch 2.x), for calls that use them.
POSITIONAL = ("batch_size", "shuffle", "sampler", "batch_sampler", "num_workers",
              "collate_fn", "pin_memory", "drop_last", "timeout", "worker_init_fn",
              "multiprocessing_context", "generator")
LOADER_PREFIXES = ("torch.utils.data", "utils.data", "data", "torch.utils.data.dataloader",
                   "dataloader")


def _is_torch(module: str) -> bool:
    return module == "torch" or module.startswith("torch.")


# Libraries whose `DataLoader` subclasses torch's and hands its keywords to torch's
# __init__ (monai.data.DataLoader, torch_geometric.loader.DataLoader): torch's rules hold
# for their keywords. Their positional parameters differ from torch's (MONAI's second one
# is num_workers), so a positional argument after the dataset is left unread.
SUBCLASS_LOADER_MODULES = ("monai.data", "monai.data.dataloader", "torch_geometric.loader",
                           "torch_geometric.data")
# A module reads none of this unless its text names one of these (the byte pre-filter).
PG_TIMEOUT_GLOBALS = ("_DEFAULT_PG_TIMEOUT", "default_pg_timeout", "default_pg_nccl_timeout")


def _can_report(words: set) -> bool:
    """A module whose scan can report something names one of these identifiers: a
    DataLoader (called by that name, or passed to partial), init_process_group, os.environ
    or getenv/putenv, torch and compile (`torch.compile`), or a timeout global (set as an
    attribute, or by setattr with its name in a string: the words of strings count)."""
    return not _SCAN_WORDS.isdisjoint(words) or (b"compile" in words and b"torch" in words)


_SCAN_WORDS = frozenset({b"DataLoader", b"init_process_group", b"environ", b"getenv",
                         b"putenv", *(g.encode() for g in PG_TIMEOUT_GLOBALS)})


def _loaders_only(words: set) -> bool:
    return b"DataLoader" in words
DEFAULT_PG_TIMEOUT_S = {"nccl": 600.0, "other": 1800.0}  # torch 2.x defaults
# Importing any of these imports torch: an env var set after them is set after torch.
TORCH_IMPORTERS = ("torch", "lightning", "pytorch_lightning", "transformers", "accelerate",
                   "deepspeed", "torchvision", "torchaudio", "timm")
_SECONDS = {"weeks": 604800, "days": 86400, "hours": 3600, "minutes": 60, "seconds": 1,
            "milliseconds": 0.001, "microseconds": 1e-6}
_CONVERT = {"int": int, "float": float, "str": str, "bool": bool}
_ENV_FUNCS = ("setdefault", "putenv")
# A config read into a name by one of these is a root of config key paths.
_CONFIG_LOADERS = ("safe_load", "load", "full_load", "unsafe_load", "loads", "create",
                   "to_container")
# A parameter is read as the parsed command line only when its name says so (`args`).
_ARGS_WORDS = ("arg", "opt", "flag", "param", "cfg", "conf", "hp")
# `<name>.a.b` is read as a config key path only when the name says it is a config.
_CONFIG_WORDS = ("cfg", "conf", "config", "hparams", "hp", "settings")


@dataclass(frozen=True)
class CodeValue:
    """One value as the code writes it, and how far the doctor could follow it.

    kind: constant | env (set in the given environment) | env-default (X unset there:
    its default) | config (a `cfg.get('k', d)` default) | config-file (the value of that
    key path in the job's configs: `why` says which link is assumed) | argv (an argparse
    option as the job's command line gives it, or its default when the command line,
    wholly known, does not pass it) | arg (an argparse option the doctor cannot tie to
    the job's command line: `why` says why) | guarded (by the worker count:
    `zero` when num_workers is 0, `workers` otherwise; None = the key is not passed) |
    unknown (`why` says what the doctor cannot follow)."""
    kind: str
    value: Any = None
    file: str = ""
    line: int = 0
    text: str = ""
    source: str = ""          # the env variable or config key it comes from
    why: str = ""
    zero: Optional["CodeValue"] = None
    workers: Optional["CodeValue"] = None

    @property
    def known(self) -> bool:
        return self.kind != "unknown"

    @property
    def complete(self) -> bool:
        """The whole path from the written value to the call is shown."""
        return self.kind in ("constant", "env", "argv")

    def link(self) -> str:
        """The link the doctor could not see, for warnings."""
        if self.kind == "config-file":
            return f"{self.text} is {self.value!r} from {self.source}{self.why}"
        if self.kind == "arg":
            return f"{self.text} is {self.value!r}: {self.why}"
        if self.kind == "env-default":
            return (f"{self.text} is {self.value!r} from the default of {self.source} "
                    f"(not set in the job's environment that the doctor sees)")
        if self.kind == "config":
            return (f"{self.text} is the default {self.value!r} of config key "
                    f"{self.source!r}; a config may replace it")
        if self.kind == "guarded":
            return f"{self.text} is guarded by the worker count"
        if self.kind == "unknown":
            return f"{self.text}: {self.why}"
        return ""


@dataclass(frozen=True)
class LoaderCall:
    """A DataLoader(...) call (or functools.partial(DataLoader, ...))."""
    file: str
    line: int
    text: str
    kwargs: Mapping[str, CodeValue]
    opaque: Optional[str] = None   # a **spread or *args the doctor cannot read
    partial: bool = False

    def get(self, key: str) -> Optional[CodeValue]:
        """The key's value; None when not passed (DataLoader's default applies)."""
        if key in self.kwargs:
            return self.kwargs[key]
        if self.opaque:
            return CodeValue("unknown", file=self.file, line=self.line, text=key,
                             why=f"may come through {self.opaque}")
        return None


@dataclass(frozen=True)
class PgInit:
    """An init_process_group(...) call; timeout None when not passed."""
    file: str
    line: int
    text: str
    backend: Optional[str]
    timeout: Optional[CodeValue]   # value in seconds

    @property
    def seconds(self) -> Optional[float]:
        """The timeout the process group gets: the passed one, else torch's default."""
        if self.timeout is None:
            return DEFAULT_PG_TIMEOUT_S["nccl" if self.backend in (None, "nccl") else "other"]
        return float(self.timeout.value) if self.timeout.known else None


@dataclass(frozen=True)
class PgPatch:
    """An assignment to torch's default process-group timeout."""
    file: str
    line: int
    text: str
    attr: str


@dataclass(frozen=True)
class CompileCall:
    """torch.compile(...) (or @torch.compile); conditional when under an if."""
    file: str
    line: int
    text: str
    mode: Optional[CodeValue]
    backend: Optional[CodeValue]
    fullgraph: Optional[CodeValue]
    conditional: bool = False


@dataclass(frozen=True)
class EnvAssign:
    """An os.environ assignment in an entry module (how: set | setdefault | putenv)."""
    name: str
    value: Optional[str]
    file: str
    line: int
    text: str
    before_torch_import: bool
    how: str = "set"


@dataclass(frozen=True)
class ArgOption:
    """One parser.add_argument(...) of the repo: its default (a literal; `unreadable` when
    it is an expression), the type it converts a command-line value with, its flags."""
    flags: tuple
    default: Any
    type: Optional[str]
    where: str
    unreadable: bool = False
    action: Optional[str] = None
    abbrev: Optional[bool] = True   # the parser's allow_abbrev (None: not a literal)
    const: Any = None
    nargs: bool = False             # nargs= given: the value is no single word


@dataclass(frozen=True)
class Inputs:
    """Where the code's values may come from besides the environment: the job's configs
    (key path → [(value, 'rel:line')]), the repo's argparse options (dest → [ArgOption]),
    and the training step's arguments (None: no job step is known)."""
    configs: Mapping = field(default_factory=dict)
    options: Mapping = field(default_factory=dict)
    argv: Optional[tuple] = None


@dataclass(frozen=True)
class CodeSettings:
    loaders: tuple = ()
    pg_inits: tuple = ()
    pg_patches: tuple = ()
    compiles: tuple = ()
    env_sets: tuple = ()           # (name, file, line) anywhere in the code
    env_reads: frozenset = frozenset()


def code_settings(job: Any, env: Mapping[str, str],
                  argv: Optional[tuple] = None) -> CodeSettings:
    """Everything above for the repo's code (in a scoped run, the code in scope), env
    values resolved through `env`, argparse options through the job step's `argv`
    (None: no step known)."""
    key = ("code_settings", tuple(sorted(env.items())), argv)
    return job.memo(key, lambda: _scan_repo(job, dict(env), _can_report, False, argv))


def step_argv(job: Any, script: Any) -> Optional[tuple]:
    """The arguments the script's training step passes its Python entry; None when the
    script runs no Python entry the doctor can see."""
    if script is None:
        return None
    step = job.step(script)
    return tuple(step.args) if step.entry is not None else None


def _inputs(job: Any, argv: Optional[tuple]) -> Inputs:
    return Inputs(job.memo("code_config_index", lambda: _config_index(job)),
                  job.memo("code_arg_options", lambda: _arg_options(job)), argv)


def _config_index(job: Any) -> dict:
    """key path → [(scalar value, 'rel:line')] over the job's configs."""
    out: dict = {}
    for cfg in getattr(job, "configs", None) or []:
        for path, mapping in cfg.mappings():
            if not all(isinstance(p, str) for p in path):
                continue
            for k, v in mapping.items():
                if isinstance(v, (dict, list)) or not isinstance(k, str):
                    continue
                line = cfg.line_of(mapping, k)
                out.setdefault(path + (k,), []).append(
                    (v, f"{cfg.rel}:{line}" if line else cfg.rel))
    return out


def _arg_options(job: Any) -> dict:
    """dest → [ArgOption] for every add_argument(...) in the job's code."""
    out: dict = {}
    for path, tree in job.memo("code_parser_trees", lambda: trees_naming(
            job, raw_texts(job), lambda w: b"add_argument" in w)):
        rel = job.rel(path)
        abbrev = _allow_abbrev(tree)
        for n in nodes(tree):
            if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and n.func.attr == "add_argument"):
                continue
            flags = tuple(f for a in n.args if (f := _const_str(a)) and f.startswith("-"))
            if not flags or len(flags) != len(n.args):
                continue
            kw = {k.arg: k.value for k in n.keywords if k.arg}
            longs = [f for f in flags if f.startswith("--")]
            dest = _const_str(kw.get("dest")) or (longs or flags)[0].lstrip("-").replace("-", "_")
            action = _const_str(kw.get("action"))
            if "action" in kw and dotted(kw["action"]).endswith("BooleanOptionalAction"):
                action = "boolean_optional"   # --x sets True, --no-x False
            unreadable = False
            if "default" in kw:
                try:
                    default = ast.literal_eval(kw["default"])
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    default, unreadable = None, True
            else:
                default = {"store_true": False, "store_false": True}.get(action or "")
            typ = dotted(kw["type"]) if "type" in kw else None
            try:
                const = ast.literal_eval(kw["const"]) if "const" in kw else None
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                const, action = None, "unreadable const"
            if action == "boolean_optional":
                flags += tuple("--no-" + f[2:] for f in flags if f.startswith("--"))
            out.setdefault(dest, []).append(ArgOption(
                flags, default, typ, f"{rel}:{n.lineno}", unreadable, action, abbrev, const,
                "nargs" in kw))
    return out


def _allow_abbrev(tree: ast.AST) -> Optional[bool]:
    """The allow_abbrev of the parsers a module builds: False where one sets it False, None
    where one sets it to an expression; True (argparse's default) otherwise."""
    seen: Optional[bool] = True
    for n in nodes(tree):
        if isinstance(n, ast.Call) and dotted(n.func).endswith("ArgumentParser"):
            for k in n.keywords:
                if k.arg == "allow_abbrev":
                    v = k.value.value if isinstance(k.value, ast.Constant) else None
                    if v is False:
                        return False
                    if v is not True:
                        seen = None
    return seen


def repo_code(job: Any, env: Mapping[str, str]) -> CodeSettings:
    """code_settings of the whole repo, in a scoped run too: for a judgement about all of
    the code (is this variable read anywhere, does every init_process_group pass a
    timeout), asked only when there is something to judge."""
    if judges_all(job):   # what the checks judge is all of the code already
        return code_settings(job, env)
    key = ("repo_code", tuple(sorted(env.items())))
    return job.memo(key, lambda: _scan_repo(job, dict(env), _can_report, True))


def repo_loaders(job: Any, env: Mapping[str, str]) -> tuple:
    """The DataLoader calls of the whole repo, in a scoped run too (whether a config's
    value can reach one is a question about all of them): only the modules that name
    DataLoader are read, since a call is recognised by that name."""
    if judges_all(job):
        return code_settings(job, env).loaders
    key = ("repo_loaders", tuple(sorted(env.items())))
    return job.memo(key, lambda: _scan_repo(job, dict(env), _loaders_only, True).loaders)


def _scan_repo(job: Any, env: dict, mentions: Any, whole: bool,
               argv: Optional[tuple] = None) -> CodeSettings:
    """`mentions(words)`: whether a module with these identifiers can hold what is read."""
    parts: dict = {k: [] for k in ("loaders", "pg_inits", "pg_patches", "compiles", "env_sets")}
    reads: set = set()
    scans = job.memo("code_scans", dict)
    trees = job.memo(("code_trees", mentions, whole),
                     lambda: trees_naming(job, raw_texts(job, whole), mentions, whole))
    for path, tree in trees:
        # a module's reading depends only on the variables it names: scripts whose
        # environments differ elsewhere share it
        text = text_of(job, path, whole)
        used = tuple((k, v) for k, v in sorted(env.items())
                     if text is None or k.encode() in text)
        key = (str(path), used, argv)
        found = scans.get(key)
        if found is None:
            # the walk (scopes, bindings, calls) reads neither the environment nor the
            # step's arguments: made once per module, evaluated once per (env, argv)
            walked = job.memo(("code_walk", str(path)),
                              lambda t=tree, p=path: _Module(t, job.rel(p)).walked())
            found = scans.setdefault(key, walked.evaluate(env, _inputs(job, argv)))
        for k in parts:
            parts[k] += found[k]
        reads |= found["env_reads"]
    return CodeSettings(**{k: tuple(v) for k, v in parts.items()}, env_reads=frozenset(reads))


# ---- scopes ------------------------------------------------------------------
@dataclass
class _Scope:
    parent: Optional["_Scope"]
    name: str = "<module>"
    assigned: dict = field(default_factory=dict)   # name → expr, None when not one plain value
    params: set = field(default_factory=set)
    dict_sets: dict = field(default_factory=dict)  # name → [(key, expr, conds, line)]
    dict_opaque: set = field(default_factory=set)
    cls: Optional[str] = None        # a method's class, whose `self.x = ...` it may bind
    self_name: Optional[str] = None  # a method's first parameter

    def method(self) -> Optional["_Scope"]:
        """The nearest enclosing method's scope (a nested function sees its `self`)."""
        s: Optional[_Scope] = self
        while s is not None and s.cls is None:
            s = s.parent
        return s

    def bind(self, name: str, value: Optional[ast.expr]) -> None:
        self.assigned[name] = None if name in self.assigned else value

    def lookup(self, name: str) -> tuple:
        """(scope, expr or None) where the name is bound; (None, None) when nowhere."""
        s: Optional[_Scope] = self
        while s is not None:
            if name in s.assigned or name in s.params:
                return s, s.assigned.get(name)
            s = s.parent
        return None, None


def _const_str(node: Optional[ast.AST]) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _is_environ(node: ast.AST) -> bool:
    return dotted(node) in ("os.environ", "environ")


def environ_key(node: ast.AST) -> Optional[str]:
    """X for `os.environ["X"]`."""
    return _const_str(node.slice) if isinstance(node, ast.Subscript) and \
        _is_environ(node.value) else None


def _env_call(node: ast.Call) -> Optional[str]:
    """get | getenv | setdefault | putenv when this call reads or writes os.environ."""
    f = node.func
    name = dotted(f)
    if name in ("os.getenv", "getenv", "os.putenv", "putenv"):
        return name.rsplit(".", 1)[-1]
    if isinstance(f, ast.Attribute) and _is_environ(f.value) and f.attr in ("get", "setdefault"):
        return f.attr
    return None


class _Module:
    """One module's walk: scopes first, then every call evaluated in its scope."""

    def __init__(self, tree: ast.Module, rel: str, env: Optional[dict] = None,
                 inputs: Optional["Inputs"] = None):
        self.tree, self.rel, self.env = tree, rel, env or {}
        self.inputs = inputs or Inputs()
        self.attrs: dict = {}          # (class, attr) → [(expr or None, scope, line)]
        self.functions: dict = {}      # module-level def name → [(FunctionDef, its scope)]
        self.calls: list = []          # (call, scope, conds)
        self.out: dict = {k: [] for k in ("loaders", "pg_inits", "pg_patches", "compiles",
                                          "env_sets")}
        self.out["env_reads"] = set()
        self.torch_names = {"DataLoader"} if self._imports_dataloader(_is_torch) else set()
        # `DataLoader` imported from a library that subclasses torch's (and not from torch)
        self.subclass_names = {"DataLoader"} if not self.torch_names and \
            self._imports_dataloader(lambda m: m in SUBCLASS_LOADER_MODULES) else set()

    def _imports_dataloader(self, module_ok) -> bool:
        return any(isinstance(n, ast.ImportFrom) and module_ok(n.module or "")
                   and any(a.name == "DataLoader" for a in n.names)
                   for n in nodes(self.tree))

    def scan(self) -> dict:
        return self.walked().evaluate(self.env, self.inputs)

    def walked(self) -> "_Module":
        """The module after its walk: scopes, bindings and calls, which no environment
        or argument changes."""
        self._loose: dict = {}
        # in an expression only a walrus binds (loops and withs are statements)
        self._walrus = any(type(n) is ast.NamedExpr for n in nodes(self.tree))
        self._walk(self.tree.body, _Scope(None), ())
        del self._loose, self._walrus
        return self

    def evaluate(self, env: dict, inputs: "Inputs") -> dict:
        """What the walked module's calls set under `env` and the step's `inputs`: the
        walk's own findings, then each call evaluated in its scope (a copy: the walk is
        shared by every environment)."""
        run = copy.copy(self)
        run.env, run.inputs = env, inputs
        run.out = {k: (set(v) if isinstance(v, set) else list(v)) for k, v in self.out.items()}
        for call, scope, conds in self.calls:
            run._call(call, scope, conds)
        return run.out

    # -- the walk: bindings, dict mutations, calls with the ifs around them
    def _walk(self, stmts: list, scope: _Scope, conds: tuple,
              cls: Optional[str] = None) -> None:
        for st in stmts:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope.bind(st.name, None)
                for d in st.decorator_list:
                    self._decorator(d, conds)
                    self._exprs(d, scope, conds)
                child = _Scope(scope, st.name)
                a = st.args
                child.params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
                child.params |= {x.arg for x in (a.vararg, a.kwarg) if x}
                positional = a.posonlyargs + a.args
                if cls is not None and positional and not any(
                        dotted(d) in ("staticmethod", "classmethod") for d in st.decorator_list):
                    child.cls, child.self_name = cls, positional[0].arg
                if scope.parent is None and cls is None:
                    self.functions.setdefault(st.name, []).append((st, child))
                self._walk(st.body, child, ())
            elif isinstance(st, ast.ClassDef):
                self._walk(st.body, scope, conds, cls=st.name)
            elif isinstance(st, ast.If):
                self._exprs(st.test, scope, conds)
                self._walk(st.body, scope, conds + ((st.test, True),))
                self._walk(st.orelse, scope, conds + ((st.test, False),))
            else:
                self._simple(st, scope, conds)

    def _simple(self, st: ast.stmt, scope: _Scope, conds: tuple) -> None:
        loop = isinstance(st, (ast.For, ast.AsyncFor, ast.While))
        inner = conds + ((None, True),) if loop else conds   # a loop body may not run
        for _field, value in ast.iter_fields(st):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self._walk(value, scope, inner)
            elif isinstance(value, list):
                for v in value:
                    if isinstance(v, ast.ExceptHandler):
                        if v.name:
                            scope.bind(v.name, None)
                        self._walk(v.body, scope, conds + ((None, True),))
                    elif isinstance(v, ast.AST):
                        self._exprs(v, scope, conds)
            elif isinstance(value, ast.AST):
                self._exprs(value, scope, conds)
        self._bindings(st, scope, conds)

    def _bindings(self, st: ast.stmt, scope: _Scope, conds: tuple) -> None:
        if isinstance(st, ast.Assign):
            for t in st.targets:
                self._target(t, st.value if len(st.targets) == 1 else None, scope, conds, st)
        elif isinstance(st, ast.AnnAssign) and st.value is not None:
            self._target(st.target, st.value, scope, conds, st)
        elif isinstance(st, ast.AugAssign):
            self._target(st.target, None, scope, conds, st)
        elif isinstance(st, (ast.Import, ast.ImportFrom)):
            for a in st.names:
                scope.bind((a.asname or a.name).split(".")[0], None)
        elif isinstance(st, ast.Delete):
            for t in st.targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    scope.dict_opaque.add(t.value.id)
        for name in self._loose_names(st):   # loop, with and walrus targets anywhere in
            scope.bind(name, None)            # st: not one plain value

    def _loose_names(self, node: ast.AST) -> list:
        """The names of every loop, with and walrus target in `node`'s subtree (nested
        functions' too). A statement's inner statements were walked before it, so each
        subtree is read once (binding to None twice is binding it once) instead of once
        per enclosing statement."""
        memo = self._loose
        got = memo.get(id(node))
        if got is not None:
            return got
        out: list = []
        for t in _loose_targets(node):
            out += [n.id for n in walk(t) if isinstance(n, ast.Name)]
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                out += self._loose_names(child)
                continue
            if not self._walrus:
                continue
            # an expression holds no statement: walked without recursion (a chain of
            # 5,000 `+` is 5,000 levels deep)
            for n in walk(child):
                for t in _loose_targets(n):
                    out += [x.id for x in walk(t) if isinstance(x, ast.Name)]
        if isinstance(node, ast.stmt):
            memo[id(node)] = out
        return out

    def _target(self, t: ast.expr, value: Optional[ast.expr], scope: _Scope, conds: tuple,
                st: ast.stmt) -> None:
        if isinstance(t, ast.Name):
            scope.bind(t.id, value)
        elif isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                self._target(e, None, scope, conds, st)
        elif isinstance(t, ast.Subscript):
            name = environ_key(t)
            if name:
                self.out["env_sets"].append((name, self.rel, st.lineno))
            elif isinstance(t.value, ast.Attribute):
                self._self_changed(t.value, scope, st.lineno)
            elif isinstance(t.value, ast.Name):
                key = _const_str(t.slice)
                if key is None or value is None:
                    scope.dict_opaque.add(t.value.id)
                else:
                    scope.dict_sets.setdefault(t.value.id, []).append(
                        (key, value, conds, st.lineno))
        elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and \
                (m := scope.method()) is not None and t.value.id == m.self_name:
            # self.x = ...: read where the class's methods use self.x (one binding only)
            self.attrs.setdefault((m.cls, t.attr), []).append((value, scope, st.lineno))
        elif isinstance(t, ast.Attribute) and t.attr in PG_TIMEOUT_GLOBALS:
            self.out["pg_patches"].append(PgPatch(self.rel, st.lineno, ast.unparse(st), t.attr))

    def _exprs(self, node: ast.AST, scope: _Scope, conds: tuple) -> None:
        in_ifexp: set = set()
        for n in walk(node):
            if isinstance(n, ast.IfExp):
                in_ifexp |= {id(c) for b in (n.body, n.orelse) for c in walk(b)}
            if isinstance(n, ast.Call):
                self.calls.append((n, scope, conds + (((None, True),) if id(n) in in_ifexp
                                                      else ())))
                f = n.func
                if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                        f.attr in ("update", "pop", "setdefault", "clear", "popitem"):
                    scope.dict_opaque.add(f.value.id)
                elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and \
                        f.attr in ("update", "pop", "setdefault", "clear", "popitem"):
                    self._self_changed(f.value, scope, n.lineno)
            elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load):
                name = environ_key(n)
                if name:
                    self.out["env_reads"].add(name)

    def _self_changed(self, node: ast.Attribute, scope: _Scope, line: int) -> None:
        """`self.x[k] = v` or `self.x.update(...)`: self.x is no longer one plain value."""
        m = scope.method()
        if isinstance(node.value, ast.Name) and m is not None and node.value.id == m.self_name:
            self.attrs.setdefault((m.cls, node.attr), []).append((None, scope, line))

    def _decorator(self, d: ast.expr, conds: tuple) -> None:
        if dotted(d) == "torch.compile":   # bare @torch.compile: compile, default options
            self.out["compiles"].append(CompileCall(self.rel, d.lineno, "@torch.compile",
                                                    None, None, None, bool(conds)))

    # -- the calls
    def _call(self, call: ast.Call, scope: _Scope, conds: tuple) -> None:
        fn = dotted(call.func)
        last = fn.rsplit(".", 1)[-1]
        kind = _env_call(call)
        first = _const_str(call.args[0]) if call.args else None
        if kind in _ENV_FUNCS and first:
            self.out["env_sets"].append((first, self.rel, call.lineno))
        elif kind in ("get", "getenv") and first:
            self.out["env_reads"].add(first)
        elif last == "setattr" and len(call.args) > 1 and \
                _const_str(call.args[1]) in PG_TIMEOUT_GLOBALS:
            self.out["pg_patches"].append(PgPatch(self.rel, call.lineno, ast.unparse(call),
                                                  str(_const_str(call.args[1]))))
        if self._is_loader(call.func):
            self._loader(call, self._positional(call.func, call.args[1:]), scope,
                         partial=False)
        elif last == "partial" and call.args and self._is_loader(call.args[0]):
            self._loader(call, self._positional(call.args[0], call.args[2:]), scope,
                         partial=True)
        elif last == "init_process_group":
            self._pg_init(call, scope)
        elif fn == "torch.compile":
            ev = _Eval(self, scope, None)
            decided = [ev.decide(test) if test is not None else None for test, _ in conds]
            if any(d is not None and d != truth for d, (_, truth) in zip(decided, conds)):
                return   # under `if mode not in ("none", ...)` with compile: "none"
            kw = {k.arg: ev.value(k.value) for k in call.keywords if k.arg}
            # a condition decided true through a link the doctor assumes (a config key
            # the code reads) still leaves the call conditional: its findings warn
            self.out["compiles"].append(CompileCall(
                self.rel, call.lineno, ast.unparse(call), kw.get("mode"), kw.get("backend"),
                kw.get("fullgraph"), any(d is None for d in decided) or ev.unsure))

    def _is_loader(self, func: ast.AST) -> bool:
        name = dotted(func)
        if name in self.torch_names or self._is_subclass_loader(func):
            return True
        prefix, _, last = name.rpartition(".")
        return last == "DataLoader" and prefix in LOADER_PREFIXES

    def _is_subclass_loader(self, func: ast.AST) -> bool:
        name = dotted(func)
        prefix, _, last = name.rpartition(".")
        return name in self.subclass_names or (
            last == "DataLoader" and prefix in SUBCLASS_LOADER_MODULES)

    def _positional(self, func: ast.AST, args: list) -> list:
        """The positional arguments after the dataset, as torch's parameters: a
        subclass's own order differs, so they become one opaque `*` argument."""
        if args and self._is_subclass_loader(func):
            return [ast.Starred(value=args[0], ctx=ast.Load())]
        return args

    def _loader(self, call: ast.Call, positional: list, scope: _Scope, partial: bool) -> None:
        kwargs: dict = {}
        opaque: Optional[str] = None
        workers = next((k.value for k in call.keywords if k.arg == "num_workers"),
                       positional[4] if len(positional) > 4 else None)
        ev = _Eval(self, scope, workers)
        for i, arg in enumerate(positional):
            if isinstance(arg, ast.Starred) or i >= len(POSITIONAL):
                opaque = opaque or ast.unparse(arg)
                continue
            kwargs[POSITIONAL[i]] = ev.value(arg)
        for k in call.keywords:
            if k.arg:
                kwargs[k.arg] = ev.value(k.value)
                continue
            spread = ev.spread(k.value, call.lineno)
            if spread is None:
                opaque = f"**{ast.unparse(k.value)}"
            else:
                kwargs.update(spread)
        self.out["loaders"].append(LoaderCall(self.rel, call.lineno, ast.unparse(call),
                                              kwargs, opaque, partial))

    def _pg_init(self, call: ast.Call, scope: _Scope) -> None:
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        backend_node = kw.get("backend") or (call.args[0] if call.args else None)
        timeout_node = kw.get("timeout") or (call.args[2] if len(call.args) > 2 else None)
        ev = _Eval(self, scope, None)
        timeout = ev.seconds(timeout_node) if timeout_node is not None else None
        backend = _const_str(backend_node) if backend_node is not None else None
        self.out["pg_inits"].append(PgInit(self.rel, call.lineno, ast.unparse(call),
                                           backend, timeout))


def _loose_targets(node: ast.AST) -> list:
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [i.optional_vars for i in node.items if i.optional_vars is not None]
    if isinstance(node, ast.NamedExpr):
        return [node.target]
    return []


# ---- evaluation ----------------------------------------------------------------
class _Eval:
    """Follows one expression as far as the doctor can show it."""

    def __init__(self, module: _Module, scope: _Scope, workers: Optional[ast.expr]):
        self.m, self.scope = module, scope
        self.workers = ast.dump(workers) if workers is not None else None
        self.unsure = False   # decide() used a value whose whole path is not shown

    def _cv(self, node: ast.AST, kind: str, **kw: Any) -> CodeValue:
        return CodeValue(kind, file=self.m.rel, line=getattr(node, "lineno", 0),
                         text=ast.unparse(node), **kw)

    def unknown(self, node: ast.AST, why: str) -> CodeValue:
        return self._cv(node, "unknown", why=why)

    def value(self, node: ast.expr, depth: int = 0) -> CodeValue:
        if depth > 8:
            return self.unknown(node, "too deep to follow")
        if isinstance(node, ast.Constant):
            return self._cv(node, "constant", value=node.value)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and \
                isinstance(node.operand, ast.Constant) and \
                isinstance(node.operand.value, (int, float)):
            return self._cv(node, "constant", value=-node.operand.value)
        if isinstance(node, ast.Name):
            return self._name(node, depth)
        if isinstance(node, ast.Subscript) and environ_key(node):
            return self._env(node, str(environ_key(node)), None, required=True)
        if isinstance(node, ast.Call):
            return self._callvalue(node, depth)
        if isinstance(node, ast.IfExp):
            return self._ifexp(node, depth)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, depth)
        if isinstance(node, ast.Subscript) and (got := self._config(node, None, depth)):
            return got
        return self.unknown(node, "an expression the doctor does not evaluate")

    # -- self.x, args.x and config key paths
    def _self_attr(self, node: ast.Attribute) -> Optional[tuple]:
        """(expr, its scope) of `self.x` bound once in the class's __init__; a CodeValue
        (unknown, saying why) when it is bound otherwise; None when node is no self.x."""
        base = node.value
        m = self.scope.method()
        if not (isinstance(base, ast.Name) and m is not None and base.id == m.self_name
                and self.scope.lookup(base.id)[0] is m):
            return None
        text = ast.unparse(node)
        found = self.m.attrs.get((m.cls, node.attr), [])
        if not found:
            return None, self.unknown(node, f"{text} is not set in class {m.cls} (a base "
                                            "class or a caller may set it)")
        if len(found) > 1:
            return None, self.unknown(node, f"{text} is set at lines "
                                            f"{', '.join(str(f[2]) for f in found)}; the "
                                            "doctor does not follow which one runs last")
        expr, where, line = found[0]
        method = where.method()
        if expr is None:
            return None, self.unknown(node, f"{text} (line {line}) is not one plain value")
        if method is None or method.name != "__init__":
            return None, self.unknown(node, f"{text} is set in "
                                            f"{method.name if method else '?'}() at line "
                                            f"{line}, which the doctor does not order "
                                            "before this call")
        return expr, where

    def _attribute(self, node: ast.Attribute, depth: int) -> CodeValue:
        bound = self._self_attr(node)
        if bound is not None:
            expr, where = bound
            if expr is None:
                return where
            inner = _Eval(self.m, where, None)
            inner.workers = self.workers
            got = inner.value(expr, depth + 1)
            return _retext(got, f"{ast.unparse(node)} = {got.text}", node.lineno)
        found = self._arg(node) or self._config(node, None, depth)
        return found or self.unknown(node, _attribute_why(node))

    def _arg(self, node: ast.Attribute) -> Optional[CodeValue]:
        """args.x where args is what parse_args() returned (or a parameter: then only as
        a warning that names the link), and the repo defines the option --x."""
        if not isinstance(node.value, ast.Name):
            return None
        name = node.value.id
        scope, expr = self.scope.lookup(name)
        if scope is None:
            return None
        call = expr.value if isinstance(expr, ast.Subscript) else expr
        parsed = isinstance(call, ast.Call) and \
            dotted(call.func).rsplit(".", 1)[-1] in ("parse_args", "parse_known_args") \
            and not call.args
        if not parsed and not (name in scope.params and
                               any(w in name.lower() for w in _ARGS_WORDS)):
            return None
        opts = self.m.inputs.options.get(node.attr)
        if not opts:
            return None
        if len({(o.flags, repr(o.default), o.type, o.action) for o in opts}) > 1:
            return self.unknown(node, f"option {opts[0].flags[0]} is defined "
                                      f"{len(opts)} times ({', '.join(o.where for o in opts)})"
                                      " with different defaults")
        o = opts[0]
        link = "" if parsed else f"; if `{name}` is the parsed command line"
        argv = self.m.inputs.argv
        given, unresolved = _flag_value(argv or (), node.attr, self.m.inputs.options)
        if given is not None:
            try:
                value = _CONVERT[o.type](given) if o.type in _CONVERT and \
                    isinstance(given, str) else given
            except (TypeError, ValueError):
                return self.unknown(node, f"{o.flags[0]} {given!r} does not convert with "
                                          f"{o.type}()")
            src = f"{o.flags[0]} on the job's command line"
            return self._cv(node, "argv" if parsed else "arg", value=value, source=src,
                            why=f"{o.flags[0]} {given} on the job's command line" + link)
        if o.unreadable:
            return self.unknown(node, f"the default of {o.flags[0]} ({o.where}) is an "
                                      "expression the doctor does not evaluate")
        src = f"the default of {o.flags[0]} ({o.where})"
        if argv is None:
            why = f"{src}; the job's command line, which the doctor does not see, may set it"
        elif unresolved:
            why = f"{src}; the job's command line passes {unresolved}, which may set it"
        else:
            return self._cv(node, "argv" if parsed else "arg", value=o.default, source=src,
                            why=f"{src}, not passed on the job's command line" + link)
        return self._cv(node, "arg", value=o.default, source=src, why=why + link)

    def _cfg_path(self, node: ast.expr, depth: int) -> Optional[tuple]:
        """(root name, key path) for `cfg["a"]["b"]`, `cfg.a.b` (cfg named like a config)
        or `self.x["b"]` where self.x = cfg["a"], rooted in a parameter or in a name bound
        to a loaded file (yaml/json/OmegaConf load); None otherwise."""
        if depth > 8:
            return None
        if isinstance(node, ast.Subscript) and (key := _const_str(node.slice)) is not None:
            inner = self._cfg_path(node.value, depth + 1)
            return (inner[0], inner[1] + (key,)) if inner else None
        if isinstance(node, ast.Attribute):
            bound = self._self_attr(node)
            if bound is not None:
                expr, where = bound
                if expr is None:
                    return None
                return _Eval(self.m, where, None)._cfg_path(expr, depth + 1)
            inner = self._cfg_path(node.value, depth + 1)
            if inner and (inner[1] or any(w in inner[0].lower() for w in _CONFIG_WORDS)):
                return inner[0], inner[1] + (node.attr,)
            return None
        if isinstance(node, ast.Name):
            scope, expr = self.scope.lookup(node.id)
            if scope is None:
                return None
            if node.id in scope.params:
                return node.id, ()
            if isinstance(expr, ast.Call) and dotted(expr.func).rsplit(".", 1)[-1] in \
                    _CONFIG_LOADERS:
                return node.id, ()
            if expr is not None and isinstance(expr, (ast.Subscript, ast.Attribute)):
                return _Eval(self.m, scope, None)._cfg_path(expr, depth + 1)
        return None

    def _config(self, node: ast.expr, default: Optional[ast.expr],
                depth: int) -> Optional[CodeValue]:
        """The value a config key path has in the job's configs; None when node is no
        key path. A path that none of them holds is unknown (or the default given)."""
        path = self._cfg_path(node, depth)
        if path is None or not path[1]:
            return None
        root, keys = path
        dotted_keys = ".".join(keys)
        found = self.m.inputs.configs.get(keys, [])
        values = {repr(v) for v, _ in found}
        if not found:
            if default is None:
                return self.unknown(node, f"config key {dotted_keys} is in none of the job's "
                                          "configs the doctor reads")
            return None
        if len(values) > 1:
            return self.unknown(node, f"config key {dotted_keys} differs between the job's "
                                      f"configs ({', '.join(w for _, w in found[:3])})")
        value, where = found[0]
        if is_unresolved(value):
            return self.unknown(node, f"config key {dotted_keys} ({where}) is {value!r}, "
                                      "filled in at run time")
        return self._cv(node, "config-file", value=value, source=f"{where} ({dotted_keys})",
                        why=f", if `{root}` holds that config")

    def _name(self, node: ast.Name, depth: int) -> CodeValue:
        scope, expr = self.scope.lookup(node.id)
        if scope is None:
            return self.unknown(node, "a name the doctor cannot find")
        if node.id in scope.params:
            return self.unknown(node, f"a parameter of {scope.name}()")
        if expr is None:
            return self.unknown(node, "assigned more than once, or not a plain value")
        inner = _Eval(self.m, scope, None)
        inner.workers = self.workers
        got = inner.value(expr, depth + 1)
        return _retext(got, f"{node.id} = {got.text}", node.lineno)

    def _callvalue(self, node: ast.Call, depth: int) -> CodeValue:
        fn = dotted(node.func)
        env = _env_call(node)
        if env in ("get", "getenv") and node.args and _const_str(node.args[0]):
            default = node.args[1] if len(node.args) > 1 else None
            return self._env(node, str(_const_str(node.args[0])), default)
        if fn in _CONVERT and len(node.args) == 1 and not node.keywords:
            return _convert(self.value(node.args[0], depth + 1), fn, node)
        if fn in ("timedelta", "datetime.timedelta"):
            return self.seconds(node, depth)
        if fn.rsplit(".", 1)[-1] == "get_context" and len(node.args) == 1 and \
                not node.keywords and _const_str(node.args[0]) is not None:
            # multiprocessing.get_context("spawn"): DataLoader takes the context object
            # as it takes the name
            return self._cv(node, "constant", value=_const_str(node.args[0]))
        key, default = _config_get(node)
        if key is not None and isinstance(node.func, ast.Attribute) and (
                got := self._config(ast.Subscript(node.func.value, ast.Constant(key)),
                                    default if default is not None else ast.Constant(None),
                                    depth)) is not None:
            return _retext(got, ast.unparse(node), node.lineno)
        if key is not None:
            got = self.value(default, depth + 1) if default is not None else \
                self._cv(node, "constant", value=None)
            if not got.complete:
                return self.unknown(node, f"config key {key!r} with a default the doctor "
                                          "cannot read")
            return self._cv(node, "config", value=got.value, source=key)
        helper = self._helper(node, depth)
        if helper is not None:
            return helper
        return self.unknown(node, f"the result of {fn or 'a call'}(), which the doctor "
                                  "does not follow")

    def _helper(self, node: ast.Call, depth: int) -> Optional[CodeValue]:
        """One level of a repo helper: `get_workers()` defined once at this module's top
        level with one `return <expr>`, followed in the helper's own scope (a value that
        depends on its parameters stays unknown, naming the parameter)."""
        if not isinstance(node.func, ast.Name) or depth > 4:
            return None
        scope, _ = self.scope.lookup(node.func.id)
        found = self.m.functions.get(node.func.id, [])
        if scope is None or scope.parent is not None or len(found) != 1:
            return None
        fdef, inner_scope = found[0]
        returns = [n for n in _own_nodes(fdef) if isinstance(n, ast.Return)]
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(fdef)):
            return None
        if len(returns) != 1 or returns[0].value is None:
            return self.unknown(node, f"{node.func.id}() (line {fdef.lineno}) has "
                                      f"{len(returns)} returns; the doctor follows one")
        got = _Eval(self.m, inner_scope, None).value(returns[0].value, depth + 1)
        return _retext(got, f"{ast.unparse(node)} returns {got.text}", node.lineno)

    def _env(self, node: ast.AST, name: str, default: Optional[ast.expr],
             required: bool = False) -> CodeValue:
        if name in self.m.env:
            return self._cv(node, "env", value=self.m.env[name], source=name)
        if required:
            return self.unknown(node, f"{name} is not set in the job's environment that the "
                                      "doctor sees")
        got = self.value(default) if default is not None else None
        if got is not None and not got.complete:
            return self.unknown(node, f"the default of {name} cannot be read")
        return self._cv(node, "env-default", value=got.value if got else None, source=name)

    def _ifexp(self, node: ast.IfExp, depth: int) -> CodeValue:
        sign = self._guard(node.test)
        if not sign:
            return self.unknown(node, "a condition the doctor cannot decide")
        pos, neg = (node.body, node.orelse) if sign > 0 else (node.orelse, node.body)
        return self._cv(node, "guarded", workers=_pick(self.value(pos, depth + 1), True),
                        zero=_pick(self.value(neg, depth + 1), False))

    def decide(self, test: ast.expr) -> Optional[bool]:
        """The truth of a condition whose values the doctor follows (`mode not in
        ("none", "false")`, `cfg.compile`, `not x`, and/or of them); None: undecided."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.decide(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):
            parts = [self.decide(v) for v in test.values]
            stop = isinstance(test.op, ast.Or)   # the value that decides the whole
            if stop in parts:
                return stop
            return None if None in parts else not stop
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            left = self.value(test.left)
            if not left.known or left.kind == "guarded":
                return None
            self.unsure |= not left.complete
            op, right = test.ops[0], test.comparators[0]
            if isinstance(op, (ast.In, ast.NotIn)) and isinstance(right, (ast.Tuple,
                                                                           ast.List, ast.Set)):
                consts = [e.value for e in right.elts if isinstance(e, ast.Constant)]
                if len(consts) != len(right.elts):
                    return None
                inside = any(left.value == c and type(left.value) is type(c) for c in consts)
                return inside if isinstance(op, ast.In) else not inside
            if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)) and \
                    isinstance(right, ast.Constant):
                same = left.value == right.value and type(left.value) is type(right.value)
                return same if isinstance(op, (ast.Eq, ast.Is)) else not same
            return None
        if isinstance(test, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            got = self.value(test)
            if got.known and got.kind != "guarded" and \
                    isinstance(got.value, (bool, int, float, str, type(None))):
                self.unsure |= not got.complete
                return bool(got.value)
        return None

    def _is_workers(self, node: ast.AST) -> bool:
        name = dotted(node).rsplit(".", 1)[-1].lower()
        return "worker" in name or (self.workers is not None and ast.dump(node) == self.workers)

    def _guard(self, test: Optional[ast.expr]) -> int:
        """+1: true exactly when there are workers; -1: exactly when there are none; 0."""
        if test is None:
            return 0
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return -self._guard(test.operand)
        if self._is_workers(test):
            return 1
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return 0
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(left, ast.Constant):   # 0 < w  →  w > 0
            left, right = right, left
            op = {ast.Lt: ast.Gt(), ast.Gt: ast.Lt(), ast.LtE: ast.GtE(),
                  ast.GtE: ast.LtE()}.get(type(op), op)
        if not (self._is_workers(left) and isinstance(right, ast.Constant)):
            return 0
        table: dict = {(ast.Gt, 0): 1, (ast.NotEq, 0): 1, (ast.GtE, 1): 1, (ast.Eq, 0): -1,
                       (ast.LtE, 0): -1, (ast.Lt, 1): -1}
        return table.get((type(op), right.value), 0)

    def seconds(self, node: ast.expr, depth: int = 0) -> CodeValue:
        """A timedelta(...) (or a name for one) in seconds; plain numbers are seconds."""
        if isinstance(node, ast.Name):
            scope, expr = self.scope.lookup(node.id)
            if scope is not None and expr is not None and node.id not in scope.params:
                return _retext(_Eval(self.m, scope, None).seconds(expr, depth + 1),
                               f"{node.id} = {ast.unparse(expr)}", node.lineno)
        if not (isinstance(node, ast.Call) and dotted(node.func).endswith("timedelta")):
            return _as_number(self.value(node, depth + 1))
        parts = [(self.value(a, depth + 1), s) for a, s in zip(node.args, (86400, 1, 1e-6))]
        parts += [(self.value(k.value, depth + 1), _SECONDS.get(k.arg or "", 0))
                  for k in node.keywords]
        bad = next((v for v, s in parts if not v.known or not s or not _number(v.value)), None)
        if bad is not None:
            return self.unknown(node, f"{bad.text} is not a number the doctor can read")
        kind = "constant" if all(v.kind == "constant" for v, _ in parts) else \
            next(v.kind for v, _ in parts if v.kind != "constant")
        source = next((v.source for v, _ in parts if v.source), "")
        total = sum(float(v.value) * s for v, s in parts)
        return self._cv(node, kind, value=total, source=source)

    def spread(self, node: ast.expr, line: int) -> Optional[dict]:
        """The keys of a **spread the doctor can read: a dict literal, dict(a=1), or a name
        assigned one in this scope (with its later `d['k'] = v`). None: cannot read it."""
        if isinstance(node, ast.Name):
            scope, expr = self.scope.lookup(node.id)
            if scope is None or expr is None or node.id in scope.params or \
                    node.id in scope.dict_opaque:
                return None
            there = _Eval(self.m, scope, None)
            there.workers = self.workers
            base = there.spread(expr, line)
            return None if base is None else there._dict_sets(scope, node.id, base, line)
        if isinstance(node, ast.Attribute):
            bound = self._self_attr(node)   # **self.loader_kwargs set once in __init__
            if bound is None or bound[0] is None:
                return None
            there = _Eval(self.m, bound[1], None)
            there.workers = self.workers
            return there.spread(bound[0], line)
        if isinstance(node, ast.Dict):
            if any(k is None or _const_str(k) is None for k in node.keys):
                return None
            return {str(_const_str(k)): self.value(v) for k, v in zip(node.keys, node.values)}
        if isinstance(node, ast.Call) and dotted(node.func) == "dict" and not node.args and \
                all(k.arg for k in node.keywords):
            return {str(k.arg): self.value(k.value) for k in node.keywords}
        return None

    def _dict_sets(self, scope: _Scope, name: str, base: dict, line: int) -> dict:
        out = dict(base)
        for key, expr, conds, at in scope.dict_sets.get(name, []):
            if at > line:
                continue
            new = self.value(expr)
            if not conds:
                out[key] = new
            elif len(conds) == 1 and self._guard(conds[0][0]):
                on_workers = (self._guard(conds[0][0]) > 0) == conds[0][1]
                old = out.get(key)
                out[key] = self._cv(
                    expr, "guarded",
                    workers=_pick(new if on_workers else old, True),
                    zero=_pick(old if on_workers else new, False))
            else:
                out[key] = self.unknown(expr, f"set at line {at} under a condition the doctor "
                                              "cannot decide")
        return out


def _own_nodes(fdef: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function's body, not of the functions or classes nested in it."""
    stack = list(ast.iter_child_nodes(fdef))
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                              ast.Lambda)):
            stack.extend(ast.iter_child_nodes(n))


_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")


def _flag_value(argv: tuple, dest: str, options: Mapping) -> tuple:
    """(the value argparse gives `dest` from the command line, or None; the word that may
    set it and the doctor cannot read, '' when none), read as argparse reads it: the last
    occurrence wins, `--opt=v`, a unique prefix of a long option (allow_abbrev), `-jN`,
    BooleanOptionalAction's `--no-x`; nothing after `--` is an option. `options` is every
    add_argument of the repo (dest → [ArgOption]), the set a prefix must be unique in."""
    table = {f: (d, o) for d, opts in options.items() for o in opts for f in o.flags}
    value: Any = None
    unknown = ""
    i = 0
    while i < len(argv):
        a = str(argv[i])
        i += 1
        if a == "--":
            break
        if "$" in a:   # an unresolved word where an option may stand: it may set dest
            unknown = a
            continue
        if not a.startswith("-") or a == "-" or _NEGATIVE.match(a):
            continue
        name, eq, attached = a.partition("=")
        hit = table.get(a) if a in table else table.get(name) if eq else None
        if hit is None and not a.startswith("--") and a[:2] in table and not eq:
            hit, name, eq, attached = table[a[:2]], a[:2], "=", a[2:]   # -j4
        if hit is None and a.startswith("--"):
            # two flags of one option are ambiguous too (python 3.11's argparse)
            cands = {f: (d, o, f) for f, (d, o) in table.items() if f.startswith(name)}
            if len(cands) > 1 and any(d == dest for d, _, _ in cands.values()):
                value, unknown = None, a    # ambiguous: argparse stops the job
                continue
            if len(cands) == 1:
                d, o, name = next(iter(cands.values()))
                if o.abbrev is None and d == dest:
                    value, unknown = None, a
                    continue
                hit = (d, o) if o.abbrev else None
        if hit is None:
            continue
        d, o = hit
        takes = o.action in (None, "store", "append", "extend") or o.nargs
        word = attached if eq else None
        if takes and not eq and i < len(argv) and not (
                str(argv[i]).startswith("-") and not _NEGATIVE.match(str(argv[i]))):
            word = str(argv[i])
            i += 1
        if d != dest:
            continue
        if o.action == "boolean_optional":
            value, unknown = not name.startswith("--no-"), ""
        elif o.action in ("store_true", "store_false"):
            value, unknown = o.action == "store_true", ""
        elif o.action == "store_const":
            value, unknown = o.const, ""
        elif o.action in (None, "store") and not o.nargs and word is not None:
            value, unknown = (None, word) if "$" in word else (word, "")
        else:   # a list, a count, a custom action, a missing value: not one known word
            value, unknown = None, a
    return (None, unknown) if unknown else (value, "")


def _pick(v: Optional[CodeValue], workers: bool) -> Optional[CodeValue]:
    """A guarded value's branch for workers / no workers; other values are the same in
    both (None: the key is not passed)."""
    if v is None or v.kind != "guarded":
        return v
    return v.workers if workers else v.zero


def _config_get(node: ast.Call) -> tuple:
    """(key, default expr) for cfg.get('k', d) / getattr(cfg, 'k', d); (None, None)."""
    f = node.func
    if isinstance(f, ast.Attribute) and f.attr == "get" and node.args and \
            not _is_environ(f.value) and _const_str(node.args[0]) and len(node.args) <= 2:
        return _const_str(node.args[0]), (node.args[1] if len(node.args) > 1 else None)
    if dotted(f) == "getattr" and len(node.args) == 3 and _const_str(node.args[1]):
        return _const_str(node.args[1]), node.args[2]
    return None, None


def _attribute_why(node: ast.Attribute) -> str:
    words = dotted(node).lower()
    if any(w in words for w in ("cfg", "conf", "args", "hparams", "opt", "params", "setting")):
        return "a config attribute the doctor cannot follow"
    return "an attribute the doctor cannot follow"


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _as_number(v: CodeValue) -> CodeValue:
    if not v.known or v.kind == "guarded":
        return v
    try:
        return _replace(v, value=float(v.value))
    except (TypeError, ValueError):
        return _replace(v, kind="unknown", why=f"{v.value!r} is not a number")


def _convert(v: CodeValue, fn: str, node: ast.AST) -> CodeValue:
    """int(...)/float(...)/str(...)/bool(...) applied to a followed value."""
    text = ast.unparse(node)
    if not v.known or v.kind == "guarded":
        return _replace(v, kind="unknown", text=text,
                        why=v.why or "a guarded value passed through a conversion")
    try:
        return _replace(v, value=_CONVERT[fn](v.value), text=text)
    except (TypeError, ValueError):
        return _replace(v, kind="unknown", text=text,
                        why=f"{fn}({v.value!r}) raises at run time")


def _replace(v: CodeValue, **changes: Any) -> CodeValue:
    from dataclasses import replace
    return replace(v, **changes)


def _retext(v: CodeValue, text: str, line: int) -> CodeValue:
    return _replace(v, text=text, line=line)


# ---- the entry module's environment ----------------------------------------------
def entry_env(job: Any, path: Any) -> dict:
    """name → EnvAssign for os.environ assignments at the top of an entry module (and in
    its `if __name__ == "__main__":` before the first call), in order, last one wins."""
    rel = job.rel(path)
    tree = tree_of(job, Path(path))
    if not isinstance(tree, ast.Module):
        return {}
    return job.memo(("entry_env", rel), lambda: _entry_env(tree, rel))


def _entry_env(tree: ast.Module, rel: str) -> dict:
    out: dict = {}
    torch = False
    local_funcs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef,
                                                                ast.AsyncFunctionDef))}
    for st in tree.body:
        if _is_main_block(st):
            assert isinstance(st, ast.If)
            for inner in st.body:
                if _calls_other_than_env(inner):
                    break
                _record_env(inner, rel, not torch, out)
            break
        if _imports_torch(st):
            torch = True
        elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and \
                dotted(st.value.func) in local_funcs:
            break   # main() at the top level: training runs here
        _record_env(st, rel, not torch, out)
    return out


def _imports_torch(st: ast.stmt) -> bool:
    names = [a.name for a in st.names] if isinstance(st, ast.Import) else \
        [st.module or ""] if isinstance(st, ast.ImportFrom) and not st.level else []
    return any(n.split(".")[0] in TORCH_IMPORTERS for n in names)


def _is_main_block(st: ast.stmt) -> bool:
    if not isinstance(st, ast.If) or not isinstance(st.test, ast.Compare):
        return False
    parts = [st.test.left, *st.test.comparators]
    return any(dotted(p) == "__name__" for p in parts) and \
        any(_const_str(p) == "__main__" for p in parts)


def _calls_other_than_env(st: ast.stmt) -> bool:
    return any(isinstance(n, ast.Call) and not _env_call(n) and dotted(n.func) not in _CONVERT
               for n in ast.walk(st))


def _record_env(st: ast.stmt, rel: str, before: bool, out: dict) -> None:
    for name, value, how in _env_writes(st):
        if how == "setdefault" and name in out:
            continue   # setdefault keeps the value already set above
        out[name] = EnvAssign(name, value, rel, st.lineno, ast.unparse(st), before, how)


def _env_writes(st: ast.stmt) -> Iterator[tuple]:
    """(name, value or None, how) for the env writes of one top-level statement."""
    if isinstance(st, ast.Assign):
        for t in st.targets:
            name = environ_key(t)
            if name:
                yield name, _env_text(st.value), "set"
    elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
        call = st.value
        how = _env_call(call)
        if how in _ENV_FUNCS and len(call.args) == 2 and _const_str(call.args[0]):
            yield str(_const_str(call.args[0])), _env_text(call.args[1]), how


def _env_text(node: ast.expr) -> Optional[str]:
    """The string a write stores: "1", str(1), a number; None when not a constant."""
    if isinstance(node, ast.Call) and dotted(node.func) == "str" and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float)) and \
            not isinstance(node.value, bool):
        return str(node.value)
    return None


# ---- how a config value reaches DataLoader -------------------------------------
def config_value_path(mapping: Any, key: str, loaders: list) -> Optional[list]:
    """How a config mapping's value reaches DataLoader through the repo's code (`loaders`,
    its DataLoader calls): [] when the whole path is shown (no
    DataLoader call in the repo's code: the config is handed to a framework or to
    `_target_: ...DataLoader` as is), the links the doctor cannot see when some call
    passes `key` through an expression it cannot follow, or None when every call keeps
    the config's value out (a constant, or guarded by the worker count, or not passed:
    OLMo's `prefetch_factor=None if workers == 0 else cfg.prefetch_factor`)."""
    target = str(mapping.get("_target_", mapping.get("class_path", "")))
    if not loaders or target.endswith("DataLoader"):
        return []
    unseen = []
    for call in loaders:
        v = call.get(key)
        workers = call.get("num_workers")
        if v is None or v.kind in ("constant", "env", "env-default", "argv") or (
                # guarded by the worker count: a constant, or not passed at all, without
                # workers (the seed's fixed datamodule sets prefetch_factor only then)
                v.kind == "guarded" and (v.zero is None or v.zero.kind == "constant")
                and key != "num_workers"):
            continue
        if v.kind == "config-file" and (workers is None or workers.known):
            continue   # the call is judged with its own num_workers, where it is made
        unseen.append(f"{call.file}:{call.line} passes {key}={v.text or '(through **kwargs)'}"
                      ", which the doctor does not follow to this config")
    return unseen or None
