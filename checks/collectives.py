"""torch.distributed collectives that only some ranks execute (read from the AST, never run)."""
from __future__ import annotations

import ast
import bisect
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, fs
from doctor.job.context import Job
from doctor.job import flow
from doctor.job.flow import Flow, Target, Uniform, logic_only, module_names
from doctor.job.ranks import (constant_on_every_rank, membership, rank_conditional,
                              same_on_every_rank, value_on_rank)
from doctor.job.pyread import identifier_sets, spelled
from doctor.job.sources import (_tree as parsed, dotted, nodes, raw_texts, source_path, tree_of,
                                 walk)

COLLECTIVES = frozenset({"barrier", "all_reduce", "broadcast", "scatter", "gather",
                         "monitored_barrier", "broadcast_object_list"})
PREFIXES = ("all_gather", "reduce")   # all_gather*, reduce* (reduce_scatter, ...)
COLLECTIVES_B = frozenset(n.encode() for n in COLLECTIVES)   # is_collective, on bytes
PREFIXES_B = tuple(p.encode() for p in PREFIXES)
DIST = "torch.distributed"
RANK_ZERO_DECORATORS = ("rank_zero_only",)
JUMPS = (ast.Return, ast.Continue, ast.Break, ast.Raise)
FIX = ("Call every collective on every rank, in the same order, or only on the success "
       "path (after the work that can fail, guarded by a flag set at its end). On an error, "
       "do not synchronise: log, call dist.destroy_process_group() (or abort the communicator) "
       "and re-raise, so the job fails at once; set TORCH_NCCL_ASYNC_ERROR_HANDLING=1 "
       "and an explicit `timeout=` in init_process_group so a "
       "stuck collective ends the job instead of holding the allocation.")


def is_collective(name: str) -> bool:
    return name in COLLECTIVES or name.startswith(PREFIXES)


@dataclass(frozen=True)
class Hit:
    """A collective reached from a statement: directly, or through one repo function."""
    name: str                 # as written: dist.barrier
    rel: str
    line: int
    via: tuple = ()           # (("sync()", "train.py", 41),) for a helper call
    guards: tuple = ()        # (kind, test, polarity) of the ifs on the way
    group: Optional[str] = None   # the `group=` it runs on; None: every rank's

    @property
    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]


class Module(flow.Module):
    """One source file (flow.Module) with its torch.distributed names."""

    def __init__(self, rel: str, tree: ast.Module, dotted_name: str):
        super().__init__(rel, tree, dotted_name)
        self.dist_aliases = {DIST}
        self.direct: dict = {}     # imported collective name → its torch name
        # imports are statements: read without a walk of every expression (a module that
        # a call resolves into needs no more; calls() walks on first use)
        for node in flow.statements(tree):
            if isinstance(node, ast.Import):
                self.dist_aliases |= {a.asname for a in node.names
                                      if a.name == DIST and a.asname}
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(node)
                for a in node.names:
                    local = a.asname or a.name
                    if base == "torch" and a.name == "distributed":
                        self.dist_aliases.add(local)
                    elif base == DIST and is_collective(a.name):
                        self.direct[local] = f"{DIST}.{a.name}"

    def calls(self) -> list:
        """Every call of the module, at any depth (one walk, made on first use)."""
        found = self.__dict__.get("_all_calls")
        if found is None:
            found = self.__dict__["_all_calls"] = [n for n in nodes(self.tree)
                                                   if isinstance(n, ast.Call)]
        return found

    def collective_defs(self) -> tuple:
        """({function}, {(class, method)}): the module's top-level functions and its
        top-level classes' methods whose code, decorators and defaults included, calls a
        collective (a call lies in a def when its line does: no other statement can
        share a line with a def's). These alone are what a call in another module can
        run and reach a collective through (Flow.resolve: a module function, or a
        method of an imported class), so they are what its text must name."""
        lines = sorted(c.lineno for c in self.calls() if self.collective(c))

        def calls(fn: ast.AST) -> bool:
            start = min([fn.lineno] + [d.lineno for d in fn.decorator_list])  # type: ignore[attr-defined]
            i = bisect.bisect_left(lines, start)
            return i < len(lines) and lines[i] <= (fn.end_lineno or fn.lineno)  # type: ignore[attr-defined]
        funcs, methods = set(), set()
        for node in self.tree.body if lines else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and calls(node):
                funcs.add(node.name)
            elif isinstance(node, ast.ClassDef):
                methods |= {(node.name, m.name) for m in node.body
                            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                            and calls(m)}
        return funcs, methods

    def collective(self, call: ast.Call) -> Optional[str]:
        """The collective this call makes, as written, or None."""
        name = dotted(call.func)
        if name in self.direct:
            return name
        owner, _, attr = name.rpartition(".")
        return name if owner in self.dist_aliases and is_collective(attr) else None


@dataclass(frozen=True)
class Place:
    """A collective that only some ranks reach, and why."""
    form: str                 # rank-branch | finally | except | after-swallow
    hit: Hit
    ctx: str                  # `finally:`, `if rank == 0:`, ...
    rel: str
    line: int
    why: str                  # the sentence that says which ranks run it
    unknown: tuple = ()       # links the doctor could not show: the finding is a warning

    def path(self) -> str:
        steps = [f"{self.ctx} at {self.rel}:{self.line}"]
        steps += [f"{text} at {rel}:{line}" for text, rel, line in self.hit.via]
        return " → ".join(steps + [f"{self.hit.name}() at {self.hit.rel}:{self.hit.line}"])


GROUP_AT = {"barrier": 0, "monitored_barrier": 0, "all_reduce": 2, "broadcast": 2,
            "all_gather": 2, "all_gather_into_tensor": 2, "all_gather_object": 2,
            "broadcast_object_list": 2, "reduce": 3, "reduce_scatter": 3,
            "reduce_scatter_tensor": 3, "gather": 3, "scatter": 3}


def group_of(call: ast.Call, name: str) -> Optional[str]:
    """The `group=` a collective runs on, as written; None for the default group (every
    rank)."""
    g = next((k.value for k in call.keywords if k.arg == "group"), None)
    at = GROUP_AT.get(name.rsplit(".", 1)[-1])
    if g is None and at is not None and len(call.args) > at:
        g = call.args[at]
    if g is None or (isinstance(g, ast.Constant) and g.value is None) or \
            dotted(g).endswith("group.WORLD"):
        return None
    return ast.unparse(g)


def _guard(test: ast.AST, polarity: bool) -> tuple:
    """(kind, test, polarity) of the branch an `if` takes: `not x` is x, negated."""
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, polarity = test.operand, not polarity
    m = membership(test)
    kind = "member" if m and polarity else "rank" if rank_conditional(test) else "other"
    return (kind, ast.unparse(test), polarity)


def _contradicts(outer: tuple, inner: tuple) -> bool:
    """The callee's `if self.x:` under the caller's `else` of `if self.x:` (a method of
    the same object; or a configuration value, `args.x`): never both true, so the
    callee's branch is not reached. A plain name may be another variable there."""
    def same(text: str) -> bool:
        return text.startswith("self.") or flow._config(text)
    return any(k == "other" and j == "other" and t == u and same(t) and p != q
               for k, t, p in outer for j, u, q in inner)


class Repo:
    """The repo's candidate modules, read through the shared code-path analysis."""

    def __init__(self, job: Job):
        self.flow = Flow(job, Module)
        self.modules: list = []
        self.sources: dict = {}
        for path, _tree in _candidates(job):
            mod = self.flow.module(path)
            if isinstance(mod, Module):
                self.modules.append(mod)
                self.sources[mod.rel] = Path(path)
        self._memo: dict = {}

    def resolve(self, mod: Module, call: ast.Call, cls: Optional[ast.ClassDef]) -> Optional[Target]:
        t = self.flow.resolve(mod, call, cls)
        return t if t is not None and isinstance(t.mod, Module) else None

    # -- the collectives a block reaches ---------------------------------------
    def hits(self, mod: Module, cls: Optional[ast.ClassDef], stmts: list, depth: int = 0,
             guards: tuple = (), ctx: tuple = ()) -> list:
        """Collectives the statements call, directly or (depth 0) in a repo function they
        call; `guards`: (kind, test, polarity) of the ifs on the way (kind: rank |
        member | other). A branch that is true, or false, on every rank is no guard;
        a statement that never returns ends the block. `ctx`: the guards around the
        statements, used only to drop a callee's branch that they contradict."""
        out: list = []
        for st in stmts:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(st, ast.If):
                out += self._calls(mod, cls, st.test, depth, guards, ctx)
                every = constant_on_every_rank(st.test)
                if every is not None:        # `rank >= 0`: one branch, on every rank
                    out += self.hits(mod, cls, st.body if every else st.orelse, depth, guards,
                                     ctx)
                    continue
                for branch, pol in ((st.body, True), (st.orelse, False)):
                    g = guards if same_on_every_rank(st.test) and \
                        membership(st.test) is None else guards + (_guard(st.test, pol),)
                    out += self.hits(mod, cls, branch, depth, g, ctx)
                continue
            for _name, value in ast.iter_fields(st):
                for v in value if isinstance(value, list) else [value]:
                    if isinstance(v, ast.stmt):
                        out += self.hits(mod, cls, [v], depth, guards, ctx)
                    elif isinstance(v, ast.ExceptHandler):
                        out += self.hits(mod, cls, v.body, depth, guards, ctx)
                    elif isinstance(v, ast.AST):
                        out += self._calls(mod, cls, v, depth, guards, ctx)
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and \
                    self.flow.call_end(mod, cls, st.value) is not None:
                break      # pytest.skip(), sys.exit(), a helper that always raises
        return out

    def _calls(self, mod: Module, cls: Optional[ast.ClassDef], expr: ast.AST, depth: int,
               guards: tuple, ctx: tuple = ()) -> list:
        out = []
        for node in walk(expr):
            if not isinstance(node, ast.Call):
                continue
            name = mod.collective(node)
            if name:
                out.append(Hit(name, mod.rel, node.lineno, (), guards, group_of(node, name)))
            elif depth == 0 and (target := self.resolve(mod, node, cls)):
                via = ((f"{dotted(node.func)}()", mod.rel, node.lineno),)
                out += [Hit(h.name, h.rel, h.line, via, guards + h.guards, h.group)
                        for h in self.function_hits(target)
                        if not _contradicts(ctx + guards, h.guards)]
        return out

    def function_hits(self, t: Target) -> list:
        key = id(t.fn)
        if key not in self._memo:
            assert isinstance(t.mod, Module)
            self._memo[key] = self.hits(t.mod, t.cls, getattr(t.fn, "body", []), depth=1)
        return self._memo[key]

    def finally_line(self, rel: str, first_stmt: ast.stmt) -> int:
        text = fs.read_text(self.sources[rel])  # an input: no report goes over it
        return flow.finally_line((text or "").splitlines(), first_stmt)


def _candidates(job: Job) -> list:
    """[(path, AST)] of the modules where a place can be, in the repo's order: a text
    pre-filter on each module's identifiers (identifier_sets), so that the rest of the job's code
    is neither parsed nor scanned here. Sound (tests/test_speed_prefilter.py):

    A place is a Hit (Repo.hits) that some ranks skip, and a Hit is a collective that
    the module calls itself (Module.collective), or one that a repo function it calls
    makes in its own body (function_hits, one level, through Flow.resolve). So:

    - A module that calls a collective names the identifier `distributed` (in
      `torch.distributed.x`, or in the import that made the local name: `import
      torch.distributed as dist`, `from torch import distributed`, `from
      torch.distributed import x as y`) and the collective's own name (the attribute,
      or the imported name): is_collective of one of its identifiers. Of those modules,
      the ones whose parsed calls make a collective are kept.
    - A call in another module runs such a function F only as Flow.resolve finds it:
      a module-level function, named as F or as a name that an import `as` or a
      top-level `g = F` of the module it is imported from binds to F (one re-export), or
      a method m of a top-level class K (`self.attr.m()` where `self.attr = K(...)` and
      K is imported by its name; `self.m()` and `K.m()` stay in K's own module, kept
      already). So the caller names F or its alias, or both K and m: those are kept.
      An alias is read from every module that names F, until no new one appears.
    - The entry modules are kept too: their imports order the findings.

    Identifiers are read as Python reads them (pyread.spelled: NFKC, PEP 3131); a text that
    cannot be read so is kept whole."""
    texts = raw_texts(job)
    words = identifier_sets(job, texts)
    funcs: set = set()
    methods: set = set()
    keep: set = set()
    for (path, text), w in zip(texts, words):
        if w is None or (b"distributed" in w and any(
                n in COLLECTIVES_B or n.startswith(PREFIXES_B) for n in w)
                and _may_call_collective(text)):
            tree = parsed(job, path, text)
            if not isinstance(tree, ast.Module):
                continue
            mod = _module(job, Path(path), tree)
            f, m = mod.collective_defs()
            funcs |= f
            methods |= m
            if any(mod.collective(c) for c in mod.calls()):
                keep.add(os.path.normpath(path))
    pairs = {(k.encode(), m.encode()) for k, m in methods}
    names: set = set()
    new = {n.encode() for n in funcs}
    first = True
    while new or first:   # a module naming F may bind an alias of it: callers by that too
        names |= new
        known = {n.decode() for n in names}
        bound: set = set()
        for i, (path, text) in enumerate(texts):
            w = words[i]
            if w is None or w & new or (first and any(k in w and m in w for k, m in pairs)):
                tree = parsed(job, path, text)
                if isinstance(tree, ast.Module):
                    keep.add(os.path.normpath(path))
                    bound |= _aliases(tree, known, w)
        new, first = bound - names, False
    for step in job.all_steps():
        entry = job.entry_file(step)
        src = source_path(job, entry) if entry is not None else None
        keep |= {os.path.normpath(src)} if src is not None else set()
    return [(Path(p), t) for p, _ in texts if os.path.normpath(p) in keep
            and (t := tree_of(job, p)) is not None]


# A collective's name called (`all_reduce(`, `dist.barrier (`, across a `\` or, inside
# brackets, a line break or a comment), or imported under another name (`from
# torch.distributed import all_reduce as ar`, whose calls then name only `ar`).
_COLLECTIVE_USE = re.compile(
    rb"(?<![A-Za-z0-9_])(?:" + b"|".join(sorted(COLLECTIVES_B)) + b"|" +
    b"|".join(PREFIXES_B) + rb")[A-Za-z0-9_]*(?:\s|\\|#[^\n]*)*(?:\(|as(?![A-Za-z0-9_]))")


def _may_call_collective(text: bytes) -> bool:
    """Whether the module can call a collective (Module.collective): its name then
    stands before a `(`, or in an import `as` (names spelled as Python reads them; a
    text that cannot be read so is kept)."""
    words = spelled(text)
    return words is None or _COLLECTIVE_USE.search(words) is not None


def _aliases(tree: ast.Module, funcs: set, words: Optional[set]) -> set:
    """Names the module binds to one of `funcs`, as bytes: Flow.function's one re-export
    (flow._reexport), an import `as` at any depth (Module.imports) or a top-level
    assignment `g = f`."""
    out = set()
    for node in flow.statements(tree) if words is None or b"as" in words else ():
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {a.asname.encode() for a in node.names
                    if a.asname and a.name.rsplit(".", 1)[-1] in funcs}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and \
                node.value.id in funcs:
            out |= {t.id.encode() for t in node.targets if isinstance(t, ast.Name)}
    return out


def _module(job: Job, path: Path, tree: ast.Module) -> Module:
    """The Module of one source, made once per run (the candidates' pre-filter and the
    Repo both read it)."""
    def make() -> Module:
        rel = job.rel(path)
        return Module(rel, tree, (module_names(rel) or [rel])[0])
    return job.memo(("flow.module", flow._kind(Module), os.path.normpath(path)), make)


def _raises(stmts: list) -> bool:
    return any(isinstance(n, ast.Raise) for st in stmts for n in walk(st))


def _end_of_data(handler: ast.ExceptHandler) -> bool:
    """`except StopIteration`: the data ran out, on every rank alike."""
    names = [dotted(e) for e in (handler.type.elts if isinstance(handler.type, ast.Tuple)
                                 else [handler.type])] if handler.type else []
    return bool(names) and all(n.endswith(("StopIteration", "StopAsyncIteration"))
                               for n in names)


def _success_only(stmts: list, flags: set) -> list:
    """The statements of a `finally:` that also run on the error path: `if ok:` (ok set
    True at the end of the try) runs only after success."""
    out = []
    for st in stmts:
        if isinstance(st, ast.If):
            t = st.test
            if isinstance(t, ast.Name) and t.id in flags:
                out += _success_only(st.orelse, flags)
                continue
            if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not) and \
                    isinstance(t.operand, ast.Name) and t.operand.id in flags:
                out += _success_only(st.body, flags)
                continue
            st = ast.If(test=t, body=_success_only(st.body, flags),
                        orelse=_success_only(st.orelse, flags), lineno=st.lineno)
        out.append(st)
    return out


def _success_flags(body: list) -> set:
    return {t.id for st in body if isinstance(st, ast.Assign)
            and isinstance(st.value, ast.Constant) and st.value.value is True
            for t in st.targets if isinstance(t, ast.Name)}


class Scan:
    """Walk every function of a module and collect the places of the four forms."""

    def __init__(self, repo: Repo, mod: Module):
        self.repo, self.mod = repo, mod
        self.places: list = []

    def run(self) -> list:
        top = [s for s in self.mod.tree.body
               if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        self.block(top, None, self.mod.tree, [])
        self.functions(self.mod.tree.body, None)
        return self.places

    def functions(self, body: list, cls: Optional[ast.ClassDef]) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                self.functions(node.body, node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.rank_zero_only(node, cls)
                self.block(node.body, cls, node, [])
                self.functions(list(_nested_defs(node.body)), cls)

    def add(self, form: str, hits: list, ctx: str, line: int, why: str,
            skip_rank: bool = True, unknown: tuple = ()) -> None:
        for h in hits:
            if skip_rank and any(kind in ("rank", "member") for kind, *_ in h.guards):
                continue   # a rank-conditional inside: judged as a rank branch
            self.places.append(Place(form, h, ctx, self.mod.rel, line, why, unknown))

    def rank_zero_only(self, fn: ast.AST, cls: Optional[ast.ClassDef]) -> None:
        decos = [dotted(d) for d in getattr(fn, "decorator_list", [])]
        if any(d.rsplit(".", 1)[-1] in RANK_ZERO_DECORATORS for d in decos):
            self.add("rank-branch", self.repo.hits(self.mod, cls, getattr(fn, "body", [])),
                     "@rank_zero_only", getattr(fn, "lineno", 0),
                     "runs only on rank 0 (the function is @rank_zero_only)")

    def block(self, stmts: list, cls: Optional[ast.ClassDef], fn: ast.AST, after: list,
              outer: tuple = ()) -> None:
        """`outer`: the ifs around the statements, (test, polarity) each: made into
        guards (Repo.hits' ctx) only for a rank branch, which alone reads them."""
        for i, st in enumerate(stmts):
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            rest = stmts[i + 1:] + after
            if isinstance(st, ast.If) and rank_conditional(st.test):
                self.rank_branch(st, cls, fn, rest, outer)
            if type(st).__name__ in ("Try", "TryStar"):
                self.try_(st, cls, fn, stmts[i + 1:])
            for name, value in ast.iter_fields(st):
                if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                    g = outer + (((st.test, name == "body"),)
                                 if isinstance(st, ast.If) else ())
                    self.block(value, cls, fn, rest, g)
                elif isinstance(value, list):
                    for h in value:
                        if isinstance(h, ast.ExceptHandler):
                            self.block(h.body, cls, fn, rest, outer)

    def names(self, stmts: list, cls: Optional[ast.ClassDef]) -> set:
        return {h.short for h in self.repo.hits(self.mod, cls, stmts)}

    def rank_branch(self, st: ast.If, cls: Optional[ast.ClassDef], fn: ast.AST,
                    rest: list, outer: tuple = ()) -> None:
        around = tuple(_guard(test, pol) for test, pol in outer)
        found = [self.repo.hits(self.mod, cls, b, ctx=around) for b in (st.body, st.orelse)]
        if not any(found):
            return    # no collective in either branch: nothing to match (the rest is costly)
        test = ast.unparse(st.test)
        inside = {id(n) for n in walk(st)}
        # the cheap tests first: `st not in walk(n)` walks all of n, for each `if`
        others = [n for n in walk(fn) if isinstance(n, ast.If) and id(n) not in inside
                  and rank_conditional(n.test) and ast.unparse(n.test) != test
                  and st not in walk(n)]
        elsewhere = set().union(*[self.names(n.body + n.orelse, cls) for n in others])
        for branch, other, ctx, reached in (
                (st.body, st.orelse, f"if {test}:", found[0]),
                (st.orelse, st.body, f"else: of if {test}:", found[1])):
            matched = self.names(other, cls) | elsewhere
            if branch and isinstance(branch[-1], JUMPS):
                matched |= self.names(rest, cls)   # the others reach it after the if
            hits = [h for h in reached
                    if h.short not in matched]
            members = _members(st.test, fn) if branch is st.body else None
            for h in hits:
                if h.group is not None and h.group == members:
                    continue    # exactly the group's members call it: what it needs
                unknown = (f"it runs on group `{h.group}`, whose members the doctor does "
                           "not know: only a member that skips it makes the others wait",) \
                    if h.group is not None and not _splits(st.test, fn, h.group) else ()
                self.add("rank-branch", [h], ctx, st.lineno,
                         f"runs only on the ranks where `{test}` is "
                         f"{'true' if branch is st.body else 'false'}, and the other ranks "
                         "call no {short} to match it", skip_rank=False, unknown=unknown)

    def try_(self, st: ast.stmt, cls: Optional[ast.ClassDef], fn: ast.AST,
             after: list) -> None:
        body, handlers = getattr(st, "body", []), getattr(st, "handlers", [])
        final = getattr(st, "finalbody", [])
        # what the `try` reaches: read only where a finding may follow (a costly read)
        skipped = self.repo.hits(self.mod, cls, body) if final else None
        if final:
            # Every rank reaches the `finally:`; it is out of step only on a rank that
            # raised before a collective of the `try` that its peers then call.
            line = self.repo.finally_line(self.mod.rel, final[0])
            self.add("finally", self.repo.hits(self.mod, cls,
                                               _success_only(final, _success_flags(body))),
                     "finally:", line, "runs in a `finally:`, also on a rank whose `try` "
                     "raised, while its peers are in another collective or already gone",
                     unknown=() if skipped else (
                         "the `try` calls no collective the doctor sees (one level of repo "
                         "calls), so a rank that raised may still meet its peers here",))
        caught = [h for h in handlers if not _raises(h.body) and not _end_of_data(h)]
        # A handler that never returns (sys.exit, a NoReturn helper) keeps the rank out of
        # what follows the `try`, but the collectives it calls before that still run on
        # the failing rank alone (hits stops at the call that never returns).
        swallow = [h for h in caught
                   if self.repo.flow.block_end(self.mod, cls, h.body, 1) is None]
        if not (swallow and after and self.repo.hits(self.mod, cls, after) or any(
                self.repo.hits(self.mod, cls, h.body) for h in caught)):
            return
        if Uniform(self.repo.flow, self.mod, cls, fn).block(body):
            return   # what the `try` computes is the same on every rank: so is its failure
        if skipped is None:
            skipped = self.repo.hits(self.mod, cls, body)
        unknown = tuple(
            f"`except {ast.unparse(h.type)}` catches an error of the program's own logic, "
            "raised on every rank alike when what the `try` reads is the same on every rank "
            "(the doctor cannot tell here)" for h in caught[:1] if logic_only(h)
            and not _reads_batch(body, st, fn, self.mod))
        for h in caught:
            self.add("except", self.repo.hits(self.mod, cls, h.body), "except:", h.lineno,
                     "runs in an `except` handler that does not re-raise: only the rank "
                     "that failed synchronises, while its peers are elsewhere",
                     unknown=unknown)
        if not after or not swallow:
            return
        h = swallow[0]
        if h.body and isinstance(h.body[-1], (ast.Continue, ast.Break, ast.Return)):
            word = type(h.body[-1]).__name__.lower()
            self.add("after-swallow", self.repo.hits(self.mod, cls, after), "swallowed in except:",
                     h.lineno, f"is skipped by a rank whose exception the handler swallows "
                     f"(`{word}`), while its peers wait in it", unknown=unknown)
            return
        if skipped:
            s = skipped[0]
            self.add("after-swallow", self.repo.hits(self.mod, cls, after), "swallowed in except:",
                     h.lineno, f"runs after an exception the handler swallows: a rank that "
                     f"failed skipped {s.name}() at {s.rel}:{s.line} in the `try`, so its "
                     "collectives no longer line up with its peers'", unknown=unknown)


def _members(test: ast.AST, fn: ast.AST) -> Optional[str]:
    """The group whose members exactly pass the test: G of `get_rank() in
    get_process_group_ranks(G)` or `get_rank(G) >= 0`, or the group built from the
    list of `rank in ranks` (`g = new_group(ranks)` in the same function)."""
    m = membership(test)
    if m is None:
        return None
    kind, text = m
    if kind == "group":
        return text
    for n in walk(fn):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and \
                dotted(n.value.func).endswith("new_group") and len(n.targets) == 1:
            arg = n.value.args[0] if n.value.args else next(
                (k.value for k in n.value.keywords if k.arg == "ranks"), None)
            if arg is not None and ast.unparse(arg) == text:
                return ast.unparse(n.targets[0])
    return None


def _reads_batch(body: list, st: ast.stmt, fn: ast.AST, mod: Module) -> bool:
    """The `try` reads a batch of a loop around it that iterates a data loader (a
    `*Loader(...)`, or anything given a `sampler=`; also through a name bound to one,
    `enumerate()`, `tqdm()`, `iter()`): each rank's own data, so a logic error
    (a missing key) may be one rank's alone."""
    read = {n.id for b in body for n in walk(b) if isinstance(n, ast.Name)}
    bound: dict = {}
    for n in {id(n): n for n in [*mod.tree.body, *walk(fn)]}.values():  # fn: a module too
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and \
                isinstance(n.targets[0], ast.Name):
            bound.setdefault(n.targets[0].id, []).append(n.value)

    def loader(e: ast.AST, hops: int = 2) -> bool:
        if isinstance(e, ast.Name) and hops and len(bound.get(e.id, [])) == 1:
            return loader(bound[e.id][0], hops - 1)
        if not isinstance(e, ast.Call):
            return False
        name = dotted(e.func).rsplit(".", 1)[-1]
        if name in ("enumerate", "tqdm", "iter") and e.args:
            return loader(e.args[0], hops)
        return name.endswith("Loader") or any(k.arg == "sampler" for k in e.keywords)
    return any(isinstance(loop, (ast.For, ast.AsyncFor)) and
               loop.lineno < st.lineno <= (loop.end_lineno or 0) and
               read & {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
               and loader(loop.iter) for loop in walk(fn))


def _splits(test: ast.AST, fn: ast.AST, group: str) -> bool:
    """The test is true on some members of the group and false on others: the group is
    built in the function from a literal list (`g = new_group([0, 1])`, or from `ranks`
    bound to one), and the test's value on each member is known (`rank in ranks and
    rank == 1`)."""
    literals: dict = {}
    for n in walk(fn):
        if isinstance(n, ast.Assign) and len(n.targets) == 1:
            literals.setdefault(ast.unparse(n.targets[0]), []).append(n.value)
    built = [v for v in literals.get(group, []) if isinstance(v, ast.Call) and
             dotted(v.func).endswith("new_group")]
    arg = (built[0].args[0] if built[0].args else next(
        (k.value for k in built[0].keywords if k.arg == "ranks"), None)) \
        if len(built) == 1 else None
    if isinstance(arg, ast.Name) and len(literals.get(arg.id, [])) == 1:
        arg = literals[arg.id][0]
    members = value_on_rank(arg, 0) if isinstance(arg, (ast.List, ast.Tuple)) else None
    if not isinstance(members, list):
        return False
    seen = {value_on_rank(test, r) for r in members}
    return seen == {True, False}


def _nested_defs(stmts: list) -> Iterator[ast.stmt]:
    """The defs and classes in a function's body, not those inside them."""
    for st in stmts:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield st
            continue
        for _name, value in ast.iter_fields(st):
            if isinstance(value, list):
                kids = [v for v in value if isinstance(v, ast.stmt)]
                kids += [s for h in value if isinstance(h, ast.ExceptHandler) for s in h.body]
                yield from _nested_defs(kids)


def _entry_order(job: Job, repo: Repo) -> dict:
    """rel → 0 for the steps' entry modules, 1 for the repo modules they import."""
    order: dict = {}
    for step in job.all_steps():
        path = job.entry_file(step)
        if path is None:
            continue
        rel = job.rel(path)
        order[rel] = 0
        mod = next((m for m in repo.modules if m.rel == rel), None)
        for target in (mod.imports.values() if mod else ()):
            for name in (target, target.rpartition(".")[0]):
                if name in repo.flow.by_name:
                    order.setdefault(job.rel(repo.flow.by_name[name]), 1)
    return order


def _finding(p: Place) -> Finding:
    h = p.hit
    why = p.why.replace("{short}", h.short)
    unseen = [text for kind, text, _ in h.guards if kind == "other"]
    msg = f"{h.name}() at {h.rel}:{h.line} {why}: every rank waits until the process-group " \
          f"timeout (10 min for NCCL) instead of the job failing [{p.path()}]"
    if unseen:
        msg += (" — not shown end to end: it runs only when "
                + " and ".join(f"`{u}`" for u in unseen) + ", which the doctor does not follow")
    if p.unknown:
        msg += " — not shown end to end: " + "; ".join(p.unknown)
        unseen += list(p.unknown)
    return Finding(msg, location=Location(h.rel, h.line), fix=FIX,
                   data={"form": p.form, "collective": h.name, "path": p.path(),
                         "context": {"path": p.rel, "line": p.line, "text": p.ctx},
                         "via": [f"{t} at {r}:{n}" for t, r, n in h.via],
                         **({"unseen": unseen} if unseen else {})},
                   severity=Severity.WARNING if unseen else None)


@check("collective-on-error-path", title="A torch.distributed collective that only some "
       "ranks execute", severity="error", tags=("distributed", "hang", "code"),
       needs=("repo",), timeout=30)
def collective_on_error_path(job: Job) -> Iterator[Finding]:
    """A collective that only some ranks reach: the others wait in theirs until the timeout.

    Reads every Python file of the repo (never imports it): the training steps' entry
    modules and the repo modules they import come first in the report, but a collective
    anywhere in the repo's code counts. The collectives are `barrier`, `all_reduce`,
    `broadcast`, `all_gather*`, `reduce*`, `scatter`, `gather`, `monitored_barrier` and
    `broadcast_object_list`, called as `dist.x`, `torch.distributed.x` or an imported
    name. Four forms are found:

    - inside a rank-conditional branch (`if rank == 0:`, `if dist.get_rank() == 0:`,
      `if is_main_process():`, `@rank_zero_only`) when no other branch in the function
      calls the same collective for the other ranks (the `if local_rank not in [-1, 0]:
      barrier()` … `if local_rank == 0: barrier()` pattern matches);
    - in a `finally:` (not under a flag set at the end of the `try`, the success path);
    - in an `except` handler that does not re-raise;
    - after a swallowed exception: skipped by a handler that `continue`s, `break`s or
      `return`s, or reached by a rank that skipped a collective of its `try`.

    Calls into the repo's own functions are followed one level deep (a helper called
    from `finally:` counts): the finding points at the collective call and `data.path`
    gives the chain, e.g. `finally: at train.py:40 → sync() at train.py:41 →
    dist.barrier() at utils.py:12`. A collective under a condition the doctor does not
    follow (other than `dist.is_initialized()`, `world_size > 1` and the like) is a
    warning naming that condition.

    What is not a finding (each proven on a real 2-rank gloo run,
    tests/test_collective_semantics.py):

    - a collective on `group=G` under a test that exactly G's members pass
      (`get_rank() in get_process_group_ranks(G)`, `get_rank(G) >= 0`, `rank in
      ranks` with `G = new_group(ranks)`, also `and` a test that is the same on every
      rank): the group's members are who must call it; a group whose members the
      doctor cannot match to the test is a warning, and a test that passes some of a
      literal group's members only (`rank in ranks and rank == 1`) an error;
    - a test with the same value on every rank (`rank >= 0`, `rank < world_size`,
      `get_world_size() > 0`; not arithmetic on the rank: `rank - 1 >= 0` is false on
      rank 0): no branch at all;
    - a handler that never returns: it raises or exits (`raise`, `sys.exit`,
      `os._exit`, `pytest.skip`/`fail`/`exit`, a `-> NoReturn` function, a repo
      function whose every path raises or exits), so nothing is swallowed; a
      collective the handler calls before that still runs on the failing rank alone;
    - an exception that is the same on every rank: the `try` reads only state every
      rank holds alike (constants, the module's globals that every assignment sets to
      a constant, a literal or configuration through pure builtins (not a library
      call's result such as a `DataLoader`, nor a loop's target),
      configuration such as `args.x`/`self.config.x`, and locals computed from these,
      through pure builtins and one level of repo functions, also one taken from a
      literal dict or list of them). Deterministic code on identical state raises on
      every rank or on none. A rank, a file read, a tensor's value or a library call
      can differ between ranks: where the handler catches only logic errors
      (AssertionError, KeyError, ...) that is a warning, otherwise an error, and an
      error too where the `try` reads a batch of a data loader the loop iterates;
    - a callee's branch that its caller's guard rules out (the callee's `if self.x:`
      reached only from the caller's `else` of `if self.x:`);
    - a `finally:` whose `try` reaches no collective: every rank meets there (a
      warning, since a deeper call may hold one).

    ## Why it matters
    Every rank must run the same collectives in the same order. When one rank fails
    in data loading and its error handler calls `dist.barrier()`, or rank 0 alone
    builds and broadcasts a cache, the other ranks sit in a different collective: the
    job does not fail, it hangs until the NCCL watchdog fires (10 minutes by default,
    longer where the timeout was raised), on every rank, holding the whole allocation,
    and the log shows an ALLREDUCE timeout on the healthy ranks, far from the cause.

    ## How to fix
    Call collectives on every rank, or only on the success path: set a flag at the end
    of the `try` and synchronise under it. On an error, do not synchronise: log, call
    `dist.destroy_process_group()` (or abort the communicator) and re-raise, so the job
    ends at once. Build rank-0 state before training and share it with a collective
    that every rank calls (or precompute it to a file every rank reads). Set
    `TORCH_NCCL_ASYNC_ERROR_HANDLING=1` and an explicit `timeout=` in
    `init_process_group`, so that a collective that is stuck anyway ends the job.
    """
    repo = Repo(job)
    if not raw_texts(job):
        raise Skip("the repo has no Python sources that parse")
    if not any(m.collective(c) for m in repo.modules for c in m.calls()):
        raise Skip(f"no torch.distributed collective in the repo's Python "
                   f"({len(raw_texts(job))} file(s) read)")
    order = _entry_order(job, repo)
    places = [p for m in repo.modules for p in Scan(repo, m).run()]
    seen: set = set()
    for p in sorted(places, key=lambda p: (order.get(p.rel, 2), p.rel, p.line, p.hit.line)):
        key = (p.form, p.hit.rel, p.hit.line, p.hit.via)
        if key not in seen:
            seen.add(key)
            yield _finding(p)
