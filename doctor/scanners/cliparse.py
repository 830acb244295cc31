"""The command-line parsers an entry module builds (argparse, click), read from its source
without running it, and what they do with a job's arguments: which required argument the
command line leaves out.

The reading follows the module as Python runs it: the module's statements, the body of
`if __name__ == "__main__":`, and the module-level functions they call (with the parser
passed in or returned), in order. A parser call inside another `if`, a loop, a `try`'s
handler or a function no such path reaches is *conditional*: its arguments are known
(their flags count as given-able) but none is claimed to be required. What the reading
cannot follow makes the parser `unknown` (a reason), and no claim is made about it.

The judgment is deliberately one-sided: an argument is *missing* only when no word of
the command line could be it under argparse's matching (exact flag, `--flag=v`, a glued
`-fVALUE`, a unique prefix unless `allow_abbrev=False`, a cluster of short flags), and a
positional only when fewer words could be positionals than the parser needs. Anything
else (a word the doctor cannot read, `@file` arguments, `-h`) is no claim. Proven against
the real argparse on generated parsers (tests/test_required_args.py).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from doctor.job.pyread import dotted, nodes

OPTIONAL, ZERO_OR_MORE, ONE_OR_MORE, REMAINDER, PARSER = "?", "*", "+", "...", "A..."
_NARGS_NAMES = {"OPTIONAL": OPTIONAL, "ZERO_OR_MORE": ZERO_OR_MORE, "ONE_OR_MORE": ONE_OR_MORE,
                "REMAINDER": REMAINDER, "PARSER": PARSER, "SUPPRESS": "==SUPPRESS=="}
_TAKES_NONE = {"store_true", "store_false", "store_const", "append_const", "count", "help",
               "version", "boolean_optional"}
_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")
_MAX_DEPTH = 6


@dataclass
class Arg:
    """One add_argument (or click option/argument)."""
    flags: tuple                 # option strings; () for a positional
    dest: str
    where: int                   # line
    required: Optional[bool]     # None: not a literal
    nargs: Any = None            # None, int, '?', '*', '+', '...', 'A...', or 'unknown'
    action: str = "store"        # argparse's name, 'boolean_optional', or 'custom'
    conditional: bool = False    # added on a path that may not run
    group: Optional[int] = None  # mutually exclusive group id
    has_default: bool = False
    module: Any = field(default=None, compare=False, repr=False)   # the ast.Module it is in

    @property
    def positional(self) -> bool:
        return not self.flags

    def min_words(self) -> Optional[int]:
        """The fewest words this positional takes (None: unknown)."""
        n = self.nargs
        if n is None:
            return 1
        if isinstance(n, int):
            return n
        if n == ONE_OR_MORE or n == PARSER:
            return 1
        if n in (OPTIONAL, ZERO_OR_MORE, REMAINDER):
            return 0
        return None

    def name(self) -> str:
        """argparse's name for it in 'the following arguments are required: …'."""
        return "/".join(self.flags) if self.flags else self.dest


@dataclass
class Parser:
    line: int
    kind: str = "argparse"          # argparse | click
    args: list = field(default_factory=list)
    groups: dict = field(default_factory=dict)   # mutex id -> (required: Optional[bool], line)
    abbrev: Optional[bool] = True
    add_help: Optional[bool] = True
    fromfile: Optional[str] = None               # fromfile_prefix_chars ('?': not a literal)
    unknown: list = field(default_factory=list)  # why no claim can be made
    # where code the reading does not follow may add arguments (an imported helper that
    # takes the parser): known required arguments stay required, but a word no known
    # argument matches may be one of its (an action that exits, say)
    extended: list = field(default_factory=list)
    subparsers: Optional["Subparsers"] = None
    name: str = ""                               # a subparser's command name
    module: Any = field(default=None, compare=False, repr=False)   # the ast.Module


@dataclass
class Subparsers:
    line: int
    dest: Optional[str]
    required: Optional[bool]
    conditional: bool
    commands: dict = field(default_factory=dict)   # name or alias -> Parser
    unknown: bool = False                          # a command the reading cannot name


@dataclass
class ParseCall:
    parser: Parser
    line: int
    method: str
    conditional: bool
    why: str = ""           # non-empty: the call's arguments are not the command line
    module: Any = field(default=None, compare=False, repr=False)   # the ast.Module


# ---- reading --------------------------------------------------------------------------

@dataclass
class _Ref:
    """What a local name holds while the module is read."""
    parser: Optional[Parser] = None
    group: Optional[int] = None     # a mutually exclusive group of `parser`
    subs: Optional[Subparsers] = None


def _functions(tree: ast.Module) -> dict:
    return {n.name: n for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


class _Reader:
    def __init__(self, tree: ast.Module, resolve: Any = None) -> None:
        self.tree = tree
        # resolve(module tree, name) -> (module tree, FunctionDef) of a function the module
        # imports from the repo (`from utils import get_parser`), or None
        self.resolve = resolve
        self.module = tree          # the module whose function is being read
        self.parsers: list = []
        self.calls: list = []
        self.active: list = []      # functions being read (no recursion)
        self.budget = _BUDGET       # statements read, helpers' bodies once per call
        self.globals: dict = {}     # the module's names (a function reads them too)
        self.file_unknown = _file_unknowns(tree)
        self.modules: dict = {}     # id(module tree) -> (functions, argparse's names)
        self.read_modules: set = {id(tree)}

    def _module_names(self, module: ast.Module) -> tuple:
        """(module-level functions, (argparse's aliases, ArgumentParser's names)) of a
        module: argparse's ArgumentParser only (configargparse's and jsonargparse's read
        config files and the environment too)."""
        key = id(module)
        if key not in self.modules:
            aliases, ctors = {"argparse"}, set()
            for n in nodes(module):
                if isinstance(n, ast.Import):
                    aliases |= {a.asname for a in n.names if a.name == "argparse" and a.asname}
                elif isinstance(n, ast.ImportFrom) and n.module == "argparse":
                    ctors |= {a.asname or a.name for a in n.names if a.name == "ArgumentParser"}
            self.modules[key] = (_functions(module), (aliases, ctors))
        return self.modules[key]

    def read(self) -> None:
        self._body(self.tree.body, self.globals, False, 0)

    # statements
    def _body(self, stmts: list, env: dict, cond: bool, depth: int) -> Any:
        """Reads statements in order; returns what a `return` gives (a _Ref) or None."""
        for st in stmts:
            self.budget -= 1
            if self.budget < 0:    # helpers called from many places, many levels deep
                raise _TooMuch()
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(st, ast.Return):
                value = self._expr(st.value, env, cond, depth) if st.value else None
                return value
            if isinstance(st, ast.If):
                main = _is_main_guard(st.test)
                self._expr(st.test, env, cond, depth)
                r = self._body(st.body, env, cond or not main, depth)
                self._body(st.orelse, env, True, depth)
                if main and r is not None:
                    return r
                continue
            if isinstance(st, (ast.With, ast.AsyncWith)):
                for item in st.items:
                    self._expr(item.context_expr, env, cond, depth)
                r = self._body(st.body, env, cond, depth)
                if r is not None:
                    return r
                continue
            if isinstance(st, ast.Try) or type(st).__name__ == "TryStar":
                # a handler that catches SystemExit catches argparse's exit too
                catches = any(_catches_exit(h.type) for h in st.handlers)  # type: ignore[attr-defined]
                r = self._body(st.body, env, cond or catches, depth)  # type: ignore[attr-defined]
                for h in st.handlers:    # type: ignore[attr-defined]
                    self._body(h.body, env, True, depth)
                self._body(st.orelse, env, True, depth)     # type: ignore[attr-defined]
                self._body(st.finalbody, env, cond, depth)  # type: ignore[attr-defined]
                if r is not None:
                    return r
                continue
            if isinstance(st, (ast.For, ast.AsyncFor, ast.While)):
                self._body(st.body, env, True, depth)
                self._body(st.orelse, env, True, depth)
                continue
            if isinstance(st, ast.Assign):
                value = self._expr(st.value, env, cond, depth)
                if value is None and len(st.targets) == 1 and isinstance(st.value, ast.Call) \
                        and isinstance(st.targets[0], ast.Name) and any(
                            isinstance(a, ast.Name) and a.id == st.targets[0].id
                            for a in st.value.args):
                    # `parser = deepspeed.add_config_arguments(parser)`: a helper the
                    # reading does not follow adds its arguments and gives the parser back
                    # (it is `extended`: see judge)
                    value = self._expr(ast.Name(st.targets[0].id, ast.Load()), env, cond, depth)
                for t in st.targets:
                    self._bind(t, value, env)
                continue
            if isinstance(st, (ast.AnnAssign, ast.AugAssign)):
                value = self._expr(st.value, env, cond, depth) if st.value else None
                self._bind(st.target, value if isinstance(st, ast.AnnAssign) else None, env)
                continue
            for child in ast.iter_child_nodes(st):
                if isinstance(child, ast.expr):
                    self._expr(child, env, cond, depth)
        return None

    def _bind(self, target: ast.expr, value: Any, env: dict) -> None:
        if isinstance(target, ast.Name):
            # (None, not absent: a local that is no parser hides the module's name)
            env[target.id] = value if isinstance(value, _Ref) else None
        elif isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                self._bind(t, None, env)

    # expressions
    def _expr(self, node: Optional[ast.expr], env: dict, cond: bool, depth: int) -> Any:
        if node is None:
            return None
        if isinstance(node, ast.Name):
            if node.id in env:
                return env[node.id]
            # (a module the reading did not run: its names are not known)
            return self.globals.get(node.id) if self.module is self.tree else None
        if isinstance(node, ast.Call):
            return self._call(node, env, cond, depth)
        if isinstance(node, ast.Attribute):
            return self._expr(node.value, env, cond, depth) and None
        if isinstance(node, (ast.Lambda,)):
            return None
        if isinstance(node, ast.NamedExpr):
            v = self._expr(node.value, env, cond, depth)
            self._bind(node.target, v, env)
            return v
        if isinstance(node, (ast.IfExp, ast.BoolOp, ast.ListComp, ast.SetComp, ast.DictComp,
                             ast.GeneratorExp)):   # parts that may not run
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self._expr(child, env, True, depth)
            return None
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self._expr(child, env, cond, depth)
        return None

    def _call(self, call: ast.Call, env: dict, cond: bool, depth: int) -> Any:
        func = call.func
        name = dotted(func)
        functions, (aliases, ctors) = self._module_names(self.module)
        if name in ctors or name.endswith(".ArgumentParser") and \
                name.rsplit(".", 1)[0] in aliases:
            return _Ref(self._new_parser(call))
        if isinstance(func, ast.Attribute):
            owner = self._expr(func.value, env, cond, depth)
            if isinstance(owner, _Ref):
                out = self._method(owner, func.attr, call, env, cond, depth)
                for a in (*call.args, *(k.value for k in call.keywords)):
                    self._expr(a, env, cond, depth)
                return out
        refs = [v for a in (*call.args, *(k.value for k in call.keywords))
                if isinstance(v := self._expr(a, env, cond, depth), _Ref)]
        module = self.module
        fdef = functions.get(name) if isinstance(func, ast.Name) else None
        if fdef is None and isinstance(func, ast.Name) and self.resolve is not None:
            found = self.resolve(module, name)
            if found is not None:
                module, fdef = found
                if id(module) not in self.read_modules:   # (once per module)
                    self.read_modules.add(id(module))
                    self.file_unknown += _file_unknowns(module)
        if fdef is not None and fdef.name not in self.active and depth < _MAX_DEPTH:
            inner: dict = {}
            params = [a.arg for a in (*fdef.args.posonlyargs, *fdef.args.args)]
            for p, a in zip(params, call.args):
                v = self._expr(a, env, cond, depth) if isinstance(a, ast.Name) else None
                if isinstance(v, _Ref):
                    inner[p] = v
            for k in call.keywords:
                v = self._expr(k.value, env, cond, depth) if isinstance(k.value, ast.Name) \
                    else None
                if k.arg and isinstance(v, _Ref):
                    inner[k.arg] = v
            self.active.append(fdef.name)
            outer, self.module = self.module, module
            try:
                return self._body(fdef.body, inner, cond, depth + 1)
            finally:
                self.active.pop()
                self.module = outer
        for r in refs:   # a parser handed to code the reading does not follow
            if r.parser is not None and not cond:
                r.parser.extended.append(f"passed to {name or 'a call'}() at line {call.lineno}")
        return None

    def _new_parser(self, call: ast.Call) -> Parser:
        p = Parser(call.lineno, module=self.module)
        kw = {k.arg: k.value for k in call.keywords}
        if None in kw:
            p.unknown.append(f"ArgumentParser(**…) at line {call.lineno}")
        if "allow_abbrev" in kw:
            p.abbrev = _literal_bool(kw["allow_abbrev"])
        if "add_help" in kw:
            p.add_help = _literal_bool(kw["add_help"])
        if "prefix_chars" in kw and _const(kw["prefix_chars"]) != "-":
            p.unknown.append(f"prefix_chars at line {call.lineno}")
        if "fromfile_prefix_chars" in kw:
            v = _const(kw["fromfile_prefix_chars"])
            p.fromfile = v if isinstance(v, str) or v is None else "?"
            if not isinstance(v, str) and v is not None:
                p.fromfile = "?"
        if "parents" in kw:
            p.unknown.append(f"parents= at line {call.lineno}")
        if "conflict_handler" in kw:
            p.unknown.append(f"conflict_handler at line {call.lineno}")
        if "exit_on_error" in kw:
            p.unknown.append(f"exit_on_error at line {call.lineno}")
        if len(call.args) > 2:   # prog, usage, description…: only the keyword forms above
            p.unknown.append(f"ArgumentParser's positional arguments at line {call.lineno}")
        self.parsers.append(p)
        return p

    def _method(self, owner: _Ref, attr: str, call: ast.Call, env: dict, cond: bool,
                depth: int) -> Any:
        kw = {k.arg: k.value for k in call.keywords}
        if owner.subs is not None:
            subs = owner.subs
            if attr == "add_parser":
                names = [_const(call.args[0])] if call.args else [_const(kw.get("name"))]
                aliases = kw.get("aliases")
                if isinstance(aliases, (ast.List, ast.Tuple)):
                    names += [_const(e) for e in aliases.elts]
                elif aliases is not None:
                    subs.unknown = True
                child = self._new_parser(call)
                child.kind = "subparser"
                if cond or any(not isinstance(n, str) for n in names):
                    subs.unknown = True
                for n in names:
                    if isinstance(n, str):
                        subs.commands[n] = child
                        child.name = child.name or n
                return _Ref(child)
            return None
        parser = owner.parser
        if parser is None:
            return None
        if attr == "add_argument":
            self._add_argument(parser, owner.group, call, kw, cond)
            return None
        if attr == "add_argument_group":
            return _Ref(parser, owner.group)
        if attr == "add_mutually_exclusive_group":
            gid = len(parser.groups)
            req = _literal_bool(kw["required"]) if "required" in kw else False
            if None in kw or len(call.args) > 0:
                req = None
            parser.groups[gid] = (req if not cond else None, call.lineno)
            return _Ref(parser, gid)
        if attr == "add_subparsers":
            if parser.subparsers is not None:
                parser.unknown.append(f"a second add_subparsers at line {call.lineno}")
            req = _literal_bool(kw["required"]) if "required" in kw else False
            parser.subparsers = Subparsers(call.lineno, _const(kw.get("dest")), req, cond)
            return _Ref(subs=parser.subparsers)
        if attr in ("parse_args", "parse_known_args", "parse_intermixed_args",
                    "parse_known_intermixed_args"):
            why = ""
            given = call.args[0] if call.args else kw.get("args")
            if given is not None and not _is_argv_tail(given) and not (
                    isinstance(given, ast.Constant) and given.value is None):
                why = f"parses {dotted(given) or 'a value'}, not the command line"
            if None in kw:
                why = "parse_args(**…)"
            self.calls.append(ParseCall(parser, call.lineno, attr, cond, why, self.module))
            return None
        if attr in ("set_defaults", "print_help", "print_usage", "format_help",
                    "get_default", "error", "exit", "add_argument_group", "format_usage"):
            return None
        if not cond:
            parser.unknown.append(f".{attr}() at line {call.lineno}")
        return None

    def _add_argument(self, parser: Parser, group: Optional[int], call: ast.Call, kw: dict,
                      cond: bool) -> None:
        before = len(parser.args)
        self._add_argument_to(parser, group, call, kw, cond)
        for a in parser.args[before:]:
            a.module = self.module

    def _add_argument_to(self, parser: Parser, group: Optional[int], call: ast.Call, kw: dict,
                         cond: bool) -> None:
        names = [_const(a) for a in call.args]
        unknown = None in kw or any(isinstance(a, ast.Starred) for a in call.args) or \
            not names or any(not isinstance(n, str) for n in names)
        if unknown:
            # flags or keywords the reading cannot see: whatever it is, it is no known
            # required argument; a positional among them would change the word count
            parser.args.append(Arg((), "?", call.lineno, None, "unknown", "unknown",
                                   True, group))
            return
        flags = tuple(n for n in names if n.startswith("-"))
        if flags and len(flags) != len(names) or len(names) > 1 and not flags:
            parser.args.append(Arg((), "?", call.lineno, None, "unknown", "unknown", True, group))
            return
        action = "store"
        if "action" in kw:
            a = _const(kw["action"])
            if isinstance(a, str):
                action = a
            elif dotted(kw["action"]).endswith("BooleanOptionalAction"):
                action = "boolean_optional"
            else:
                action = "custom"
        nargs: Any = None
        if "nargs" in kw:
            v = kw["nargs"]
            c = _const(v)
            if isinstance(c, (int, str)) and not isinstance(c, bool):
                nargs = c
            else:
                nargs = _NARGS_NAMES.get(dotted(v).split(".")[-1], "unknown")
        if action in _TAKES_NONE:
            nargs = 0
        if flags:
            required = _literal_bool(kw["required"]) if "required" in kw else False
            longs = [f for f in flags if f.startswith("--")]
            dest = _const(kw.get("dest")) or (longs or flags)[0].lstrip("-").replace("-", "_")
        else:
            dest = names[0]
            required = nargs not in (OPTIONAL, ZERO_OR_MORE) or (
                nargs == ZERO_OR_MORE and "default" not in kw)
            if nargs == "unknown":
                required = None
        if action == "boolean_optional":
            flags += tuple("--no-" + f[2:] for f in flags if f.startswith("--"))
        parser.args.append(Arg(flags, str(dest), call.lineno, required, nargs, action, cond,
                               group, "default" in kw))


def _file_unknowns(tree: ast.Module) -> list:
    """What in the module may change the command line argparse reads or its required
    arguments: sys.argv written or read other than as parse_args(sys.argv[1:]),
    an argument's `.required` set afterwards."""
    out = []
    for n in nodes(tree):
        if isinstance(n, ast.Attribute) and n.attr == "argv" and dotted(n) == "sys.argv":
            out.append(n)
        elif isinstance(n, ast.Attribute) and n.attr in (
                "required", "_actions", "error", "exit", "parse_args", "parse_known_args") and \
                isinstance(getattr(n, "ctx", None), ast.Store):
            return [f"`.{n.attr}` is set at line {n.lineno}"]
        elif isinstance(n, ast.Attribute) and n.attr in ("_actions", "_option_string_actions"):
            return [f"the parser's `{n.attr}` is used at line {n.lineno}"]
    if out:
        tails = {id(s.value) for s in nodes(tree) if isinstance(s, ast.Subscript)
                 and _is_argv_tail(s)}
        rest = [n for n in out if id(n) not in tails]
        if rest:
            return [f"sys.argv is used at line {rest[0].lineno}"]
    return []


def _catches_exit(t: Optional[ast.expr]) -> bool:
    """Whether an `except` clause catches SystemExit (bare, BaseException, SystemExit, a
    tuple naming one, or a name the reading cannot see through)."""
    if t is None:
        return True
    if isinstance(t, ast.Tuple):
        return any(_catches_exit(e) for e in t.elts)
    name = dotted(t).split(".")[-1]
    return name in ("SystemExit", "BaseException") or not name.endswith(("Error", "Exception",
                                                                          "Interrupt"))


def _is_argv_tail(node: ast.expr) -> bool:
    """`sys.argv[1:]`."""
    return isinstance(node, ast.Subscript) and dotted(node.value) == "sys.argv" and \
        isinstance(node.slice, ast.Slice) and node.slice.upper is None and \
        node.slice.step is None and _const(node.slice.lower) == 1


def _is_main_guard(test: ast.expr) -> bool:
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
            isinstance(test.ops[0], ast.Eq):
        sides = {dotted(test.left), _const(test.comparators[0]),
                 dotted(test.comparators[0]), _const(test.left)}
        return "__name__" in sides and "__main__" in sides
    return False


def _const(node: Any) -> Any:
    return node.value if isinstance(node, ast.Constant) else None


def _literal_bool(node: ast.expr) -> Optional[bool]:
    v = _const(node)
    return v if isinstance(v, bool) else None


class _TooMuch(Exception):
    pass


_BUDGET = 50_000


def read_parsers(tree: ast.Module, resolve: Any = None) -> tuple:
    """(parse calls, file-wide reasons for no claim) of an entry module; `resolve` finds
    the functions it imports from the repo (_Reader)."""
    r = _Reader(tree, resolve)
    try:
        r.read()
    except _TooMuch:
        return [], [f"more than {_BUDGET:,} statements to read"]
    except RecursionError:   # an expression nested deeper than Python's recursion limit
        return [], ["an expression nested too deep to read"]
    return r.calls, r.file_unknown


# ---- judging a command line -----------------------------------------------------------

@dataclass
class Missing:
    """A required argument no word of the command line gives."""
    parser: Parser
    names: tuple        # what argparse names in its message
    lines: tuple        # the add_argument lines
    kind: str           # option | positional | group | command
    maybe: str = ""     # a word that might give it (an unresolved variable): a warning
    module: Any = field(default=None, compare=False, repr=False)   # where `lines` are


def judge(parser: Parser, words: list, unknown_words: list) -> tuple:
    """([Missing], why no claim or '') for a parser given the words the entry receives.
    `unknown_words` are words the doctor cannot read (an unresolved variable)."""
    if parser.unknown:
        return [], parser.unknown[0]
    if parser.fromfile == "?" or parser.fromfile and any(
            w[:1] in parser.fromfile for w in words if w):
        return [], "arguments read from an @file"
    head, tail = _split_dashdash(words)
    if parser.add_help is not False and any(_is_help(w) for w in head):
        return [], "-h/--help exits first"
    for a in parser.args:
        if a.action in ("version", "custom", "help") and any(_gives(a, w, parser)
                                                               for w in head):
            return [], f"{a.name()} (line {a.where}) is an action that may exit or set others"
    vague = parser.extended or [f"line {a.where}" for a in parser.args if a.action == "unknown"]
    if vague:
        stray = [w for w in head if _looks_option(w)
                 and not any(_gives(a, w, parser) for a in parser.args)]
        if stray:
            return [], (f"{stray[0]} may be an argument added where the doctor cannot "
                        f"read ({vague[0]})")
    if parser.abbrev is not False:
        flags = [f for a in parser.args for f in a.flags]
        for w in head:
            h = w.split("=", 1)[0]
            if h.startswith("--") and h not in flags and \
                    sum(f.startswith(h) for f in flags) > 1:
                return [], f"{w} is an ambiguous abbreviation (argparse stops on that first)"
    maybe = unknown_words[0] if unknown_words else ""
    out: list = []
    for a in parser.args:
        if a.flags and a.required and not a.conditional and not _launcher_given(a) and \
                not any(_gives(a, w, parser) for w in head):
            out.append(Missing(parser, (a.name(),), (a.where,), "option", maybe, a.module))
    for gid, (req, line) in parser.groups.items():
        members = [a for a in parser.args if a.group == gid]
        if not req or not members or any(not a.flags or a.action == "unknown" for a in members):
            continue
        if not any(_gives(a, w, parser) for a in members for w in head):
            out.append(Missing(parser, tuple(a.name() for a in members), (line,), "group",
                               maybe, parser.module))
    subs = parser.subparsers
    pos = [a for a in parser.args if not a.flags]
    if any(a.action == "unknown" or a.min_words() is None for a in pos):
        return out, ""    # (options only: an unknown positional may take any word)
    if subs is not None and (subs.unknown or subs.conditional or subs.required is None
                             or unknown_words):
        return [], f"the subcommands at line {subs.line} are not read"
    supply = _supply(parser, head) + len(tail)
    claims = [] if unknown_words else _positionals(parser, pos, supply, maybe)
    if subs is None or claims or supply == 0:
        return out + claims, ""
    # argparse runs the subcommand's parser while it reads the words, before it checks
    # its own required arguments: the subcommand's errors come first
    if pos:
        return [], "positionals before a subcommand"
    cmd = _command_word(parser, head, tail)
    if cmd is None:
        return [], "which word is the subcommand is not known"
    child = subs.commands.get(cmd[0])
    if child is None:
        return [], f"{cmd[0]} is no subcommand (argparse: invalid choice)"
    found, why = judge(child, cmd[1], [])
    if why or found:
        return found, why
    if any(_looks_option(w) and _resolve(child, w) is None
           for w in _split_dashdash(cmd[1])[0]):
        return [], f"the {cmd[0]} subcommand may stop on a word first"
    return out, ""


def _positionals(parser: Parser, pos: list, supply: int, maybe: str) -> list:
    """The positionals (and the required subcommand) that `supply` words cannot reach:
    argparse fills them in order."""
    subs = parser.subparsers
    need = sum(a.min_words() or 0 for a in pos if not a.conditional)
    cmd_need = 1 if subs is not None and subs.required else 0
    out: list = []
    if supply >= need + cmd_need:
        return out
    left = supply
    for a in pos:
        m = a.min_words() or 0
        if a.conditional:
            continue
        if left >= m:
            left -= m
        else:
            out.append(Missing(parser, (a.name(),), (a.where,), "positional", maybe, a.module))
            left = 0
    if cmd_need and left < 1 and subs is not None:
        names = subs.dest or "{" + ",".join(subs.commands) + "}"
        out.append(Missing(parser, (names,), (subs.line,), "command", maybe, parser.module))
    return out


def _launcher_given(a: Arg) -> bool:
    """`--local_rank`/`--local-rank`: torch.distributed.launch and the deepspeed launcher
    add it to the command line themselves."""
    return any("local_rank" in f or "local-rank" in f for f in a.flags)


def _split_dashdash(words: list) -> tuple:
    if "--" in words:
        i = words.index("--")
        return words[:i], words[i + 1:]
    return words, []


def _is_help(w: str) -> bool:
    if w == "-h" or w.startswith("-h") and not w.startswith("--") and len(w) > 2:
        return True
    head = w.split("=", 1)[0]
    return head.startswith("--h") and "--help".startswith(head)


def _looks_option(w: str) -> bool:
    """Whether argparse may take the word for an option (a word with a space that names
    no option is a positional to it, like `-` and a negative number)."""
    return w.startswith("-") and w != "-" and not _NEGATIVE.match(w) and (
        " " not in w or w.split("=", 1)[0].split(" ", 1)[0] == w.split("=", 1)[0])


def _flags(parser: Parser) -> dict:
    return {f: a for a in parser.args for f in a.flags}


def _resolve(parser: Parser, w: str) -> Optional[Arg]:
    """The known argument argparse surely takes the option word for: the flag itself,
    `--flag=v`, or the one long flag it is a prefix of (allow_abbrev); else None."""
    flags = _flags(parser)
    if w in flags:
        return flags[w]
    head = w.split("=", 1)[0]
    if "=" in w and head in flags:
        return flags[head]
    if not w.startswith("--") and w[:2] in flags and \
            not any(len(f) > 2 and not f.startswith("--") for f in flags):
        a = flags[w[:2]]   # -fVALUE: the value glued to a short flag that takes one
        return a if a.nargs is None and a.action in ("store", "append") else None
    if w.startswith("--") and parser.abbrev is True:
        hits = {id(a): a for f, a in flags.items() if f.startswith(head)}
        if len(hits) == 1 and not any(a.action == "unknown" for a in parser.args):
            return next(iter(hits.values()))
    return None


def _gives(a: Arg, w: str, parser: Parser) -> bool:
    """Whether the word `w` could be the option `a` under argparse's matching (a superset:
    a word this says no to is surely not `a`)."""
    if not w.startswith("-") or w == "-":
        return False
    flags = _flags(parser)
    head = w.split("=", 1)[0]
    if w in flags or head in flags:           # an exact flag is that option, no other
        return flags.get(w, flags.get(head)) is a
    for f in a.flags:
        if w.startswith("--"):
            if f.startswith(head) and parser.abbrev is not False:
                return True                   # a prefix (allow_abbrev)
        elif len(f) == 2 and not f.startswith("--") and f[1] in w[1:] or f.startswith(head):
            return True                       # -fVALUE, a cluster -vf, -long prefix
    return False


def _values(a: Arg, w: str) -> Optional[int]:
    """How many following words option `a` named by word `w` takes: None for all the
    words up to the next option (nargs + and *, greedy as argparse is)."""
    if "=" in w or not w.startswith("--") and w not in a.flags or a.nargs == 0 or \
            a.action not in ("store", "append", "extend"):
        return 0    # `--f=v`, a glued `-fv`, a flag that takes no value
    if a.nargs is None:
        return 1
    if isinstance(a.nargs, int):
        return a.nargs
    if a.nargs in (ONE_OR_MORE, ZERO_OR_MORE):
        return None
    return -1   # '?' (0 or 1), REMAINDER, unknown: not known


def _supply(parser: Parser, head: list) -> int:
    """The most words before `--` that could fill positionals: those that do not look
    like options, less the values a surely named option takes."""
    n = 0
    i = 0
    while i < len(head):
        w = head[i]
        i += 1
        if not _looks_option(w):
            n += 1
            continue
        a = _resolve(parser, w)
        if a is None or a.conditional:
            continue
        take = _values(a, w)
        while take != 0 and take != -1 and i < len(head) and not _looks_option(head[i]):
            i += 1
            take = None if take is None else take - 1
    return n


def _command_word(parser: Parser, head: list, tail: list) -> Optional[tuple]:
    """(the subcommand word, the words after it) when every word before it is an option
    whose values the reading knows exactly; else None."""
    i = 0
    while i < len(head):
        w = head[i]
        i += 1
        if not _looks_option(w):
            return w, head[i:] + (["--"] + tail if tail else [])
        a = _resolve(parser, w)
        if a is None or a.conditional:
            return None
        take = _values(a, w)
        if take == -1:
            return None
        while take != 0 and i < len(head) and not _looks_option(head[i]):
            i += 1
            take = None if take is None else take - 1
    return None


# ---- click ----------------------------------------------------------------------------

def read_click(tree: ast.Module) -> list:
    try:
        return _read_click(tree)
    except RecursionError:
        return []


def _read_click(tree: ast.Module) -> list:
    """[(Parser, line of the call that runs it)] for each `@click.command` function the
    module runs where Python runs it (`main()` at module level or under `if __name__ ==
    "__main__":`, with no arguments). Groups, shared option decorators, `cls=`, envvar,
    prompts and context settings other than help_option_names make the parser unknown."""
    clicks = {"click"}
    direct: dict = {}
    for n in nodes(tree):
        if isinstance(n, ast.Import):
            clicks |= {a.asname for a in n.names if a.name == "click" and a.asname}
        elif isinstance(n, ast.ImportFrom) and n.module == "click":
            direct.update({a.asname or a.name: a.name for a in n.names})

    def name_of(node: ast.expr) -> str:
        d = dotted(node.func if isinstance(node, ast.Call) else node)
        head, _, attr = d.rpartition(".")
        if head in clicks:
            return attr
        return direct.get(d, "") if not head else ""

    commands: dict = {}
    for fdef in tree.body:
        if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        kinds = [name_of(d) for d in fdef.decorator_list]
        if "command" not in kinds and "group" not in kinds:
            continue
        commands[fdef.name] = _click_parser(fdef, kinds)
    out: list = []
    for st in _run_statements(tree.body):
        call = st.value if isinstance(st, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and \
                call.func.id in commands:
            p = commands[call.func.id]
            if call.args or any(k.arg not in ("obj", "prog_name") for k in call.keywords):
                p.unknown.append(f"{call.func.id}(…) at line {call.lineno} passes arguments")
            out.append((p, call.lineno))
    return out


def _run_statements(body: list) -> list:
    """The module's statements that always run as the entry: its top level and the body
    of `if __name__ == "__main__":`."""
    out: list = []
    for st in body:
        if isinstance(st, ast.If) and _is_main_guard(st.test):
            out += st.body
        else:
            out.append(st)
    return out


def _click_parser(fdef: Any, kinds: list) -> Parser:
    p = Parser(fdef.lineno, kind="click", abbrev=False)
    if "group" in kinds:
        p.unknown.append(f"a click group at line {fdef.lineno}")
    params = []
    for d, kind in zip(fdef.decorator_list, kinds):
        if kind in ("command", "group"):
            kw = {k.arg: k.value for k in d.keywords} if isinstance(d, ast.Call) else {}
            if "cls" in kw or None in kw:
                p.unknown.append(f"click.command(cls=/**…) at line {d.lineno}")
            ctx = kw.get("context_settings")
            if ctx is not None:
                names = _help_names(ctx)
                if names is None:
                    p.unknown.append(f"context_settings at line {d.lineno}")
                else:
                    p.args.append(Arg(tuple(names), "help", d.lineno, False, 0, "help"))
            continue
        if kind in ("pass_context", "pass_obj"):
            continue
        if kind in ("version_option", "help_option"):
            # an eager option that prints and exits: its flags are known
            flags = tuple(c for a in getattr(d, "args", []) if isinstance(c := _const(a), str)
                          and c.startswith("-")) or ("--version" if kind == "version_option"
                                                     else "--help",)
            p.args.append(Arg(flags, kind, d.lineno, False, 0, "version"))
            continue
        if kind not in ("option", "argument") or not isinstance(d, ast.Call):
            p.unknown.append(f"decorator at line {d.lineno}")
            continue
        params.append(_click_param(p, d, kind))
    # decorators apply bottom-up; click lists them top-down, as written
    p.args += params
    if not any(a.dest == "help" for a in p.args):
        p.args.append(Arg(("--help",), "help", fdef.lineno, False, 0, "help"))
    return p


def _help_names(ctx: ast.expr) -> Optional[list]:
    """help_option_names of a literal context_settings={...}/dict(...) with no other key."""
    if isinstance(ctx, ast.Dict):
        items = dict(zip([_const(k) for k in ctx.keys], ctx.values))
    elif isinstance(ctx, ast.Call) and dotted(ctx.func) == "dict" and not ctx.args:
        items = {k.arg: k.value for k in ctx.keywords}
    else:
        return None
    if set(items) != {"help_option_names"} or not isinstance(
            items["help_option_names"], (ast.List, ast.Tuple)):
        return None
    names = [_const(e) for e in items["help_option_names"].elts]
    return names if all(isinstance(n, str) for n in names) else None


def _click_param(p: Parser, d: ast.Call, kind: str) -> Arg:
    kw = {k.arg: k.value for k in d.keywords}
    decls = [_const(a) for a in d.args]
    if None in kw or any(not isinstance(x, str) for x in decls) or not decls:
        return Arg((), "?", d.lineno, None, "unknown", "unknown", True)
    try:
        nargs = ast.literal_eval(kw["nargs"]) if "nargs" in kw else 1   # (-1: a UnaryOp)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        nargs = "unknown"
    if not isinstance(nargs, int) or isinstance(nargs, bool):
        nargs = "unknown"
    if isinstance(kw.get("type"), (ast.Tuple, ast.List)) or \
            dotted(kw.get("type", ast.Constant(None))).endswith("Tuple"):
        nargs = "unknown"    # a tuple type sets nargs
    # a value that may come from elsewhere than the command line (click checks for a
    # missing value after the default, the environment and a prompt): no claim
    elsewhere = any(k in kw for k in ("envvar", "prompt", "cls", "default", "is_eager",
                                      "expose_value", "show_envvar"))
    if kind == "argument":
        req = _literal_bool(kw["required"]) if "required" in kw else nargs != -1
        dest = decls[0]
        return Arg((), dest.upper(), d.lineno, None if elsewhere else req,
                   (ONE_OR_MORE if req else ZERO_OR_MORE) if nargs == -1 else nargs)
    flags = tuple(x.split("/")[0] for x in decls if x.startswith("-"))
    flags += tuple(x.split("/")[1] for x in decls if x.startswith("-") and "/" in x)
    flag = any(k in kw for k in ("is_flag", "count", "flag_value")) or any("/" in x for x in decls)
    req = _literal_bool(kw["required"]) if "required" in kw else False
    if flag and req:
        req = None    # a required flag: click versions disagree whether its default counts
    return Arg(flags, flags[0] if flags else "?", d.lineno, None if elsewhere else req,
               0 if flag else nargs, "store_true" if flag else "store")


def judge_click(parser: Parser, words: list, unknown_words: list) -> tuple:
    """([Missing], why no claim or '') for a click command given the entry's words."""
    if parser.unknown:
        return [], parser.unknown[0]
    if any(a.action == "unknown" for a in parser.args):
        return [], "a click parameter the doctor cannot read"
    head, tail = _split_dashdash(words)
    flags = _flags(parser)
    supply = len(tail)
    given: set = set()
    i = 0
    while i < len(head):
        w = head[i]
        i += 1
        if not (w.startswith("-") and len(w) > 1):
            supply += 1
            continue
        name = w.split("=", 1)[0] if w.startswith("--") else w
        a = flags.get(name)
        if a is None and not w.startswith("--") and w[:2] in flags:
            a = flags[w[:2]]
            if a.nargs == 0:   # a cluster of short flags: each must be one
                if not all(f"-{c}" in flags and flags[f"-{c}"].nargs == 0 for c in w[1:]):
                    return [], f"{w}: click may stop on it first"
                given |= {id(flags[f"-{c}"]) for c in w[1:]}
                continue
            given.add(id(a))    # -xVALUE
            continue
        if a is None:
            return [], f"{w} is no option of the command (click stops on it first)"
        if a.action in ("help", "version"):
            return [], f"{w} prints and exits"
        given.add(id(a))
        if "=" not in w and isinstance(a.nargs, int):
            i += a.nargs      # click takes the next words as the value, whatever they are
        elif "=" not in w:
            return [], f"{w}: how many words it takes is not known"
    maybe = unknown_words[0] if unknown_words else ""
    out = [Missing(parser, (a.name(),), (a.where,), "option", maybe, a.module)
           for a in parser.args if a.flags and a.required and id(a) not in given]
    if not unknown_words:
        pos = [a for a in parser.args if not a.flags]
        if any(a.required is None or a.min_words() is None for a in pos):
            return out, ""
        need = sum(a.min_words() or 0 for a in pos if a.required)
        if supply < need:
            left = supply
            for a in pos:
                m = a.min_words() or 0
                if not a.required:
                    continue
                if left >= m:
                    left -= m
                else:
                    out.append(Missing(parser, (a.dest,), (a.where,), "positional", maybe,
                                       a.module))
                    left = 0
    return out, ""
