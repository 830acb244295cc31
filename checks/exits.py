"""Exits that hide a failed run: os._exit / exit 0 in `finally:` or `except`, swallowed errors."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

from doctor import fs
from doctor import Finding, Location, Severity, Skip, check
from doctor.job.context import Job
from doctor.job.flow import (UNKNOWN, Flow, exit_code, exit_name, finally_line,
                             import_aliases, module_constants, statements)
from doctor.job.sources import source_path, tree_of, trees_mentioning

CHECK_ID = "exit-masks-errors"
ALLOW = re.compile(r"#\s*doctor:\s*allow\s+" + CHECK_ID + r"\b\s*(.*)")
# Handlers catching only these are not error paths: an exit there hides no failure.
NOT_ERRORS = {"KeyboardInterrupt", "SystemExit", "GeneratorExit"}
SWALLOWERS = {None, "BaseException", "Exception"}
TRAINING_NAME = re.compile(r"train|fit|main|launch|spawn|^run", re.I)
LOST_OS_EXIT = ("atexit handlers", "buffered stdout/stderr (the log's tail)",
                "DataLoader worker cleanup")
# A cheap text test before the AST walk: an exit call, or a handler that only passes.
MAYBE = re.compile(r"\b(_exit|exit|quit|SystemExit)\b|\bexcept\b[^\n]*:\s*\n\s*[\w.]+\(|"
                   r"\bexcept\b[^\n]*:\s*(#[^\n]*)?(\n\s*)?(pass\b|\.\.\.|[rbuf]*[\"'])")
MAIN_BLOCK = "__main__"     # Hit.func of code in the `if __name__ == "__main__":` block


@dataclass
class Module:
    path: Path
    rel: str
    tree: ast.Module
    lines: list
    launched_by: list = field(default_factory=list)   # "slurm/x.sbatch:12", or a note
    importers: list = field(default_factory=list)     # the entry modules importing it


@dataclass(frozen=True)
class Hit:
    """An exit call, or a swallowing handler, with where it sits."""
    form: str                  # finally | handler | normal | swallowed
    node: ast.AST              # the exit call/raise, or the except handler
    frame: Optional[ast.AST]   # the Try (finally) or ExceptHandler around it
    conds: tuple               # `if`/loop tests between that frame and the call
    func: Optional[str]        # the top-level function/class it sits in; None: module level
    end: object = None         # flow.End when the call is a repo helper that always exits

    @property
    def lines(self) -> range:
        first = getattr(self.node, "lineno", 0)
        return range(first, (getattr(self.node, "end_lineno", None) or first) + 1)

    @property
    def line(self) -> int:
        return self.lines[0]


# ---- which modules --------------------------------------------------------------------
def is_main_block(st: ast.stmt) -> bool:
    if not isinstance(st, ast.If) or not isinstance(st.test, ast.Compare):
        return False
    parts = [st.test.left, *st.test.comparators]
    return any(isinstance(p, ast.Name) and p.id == "__name__" for p in parts) and \
        any(isinstance(p, ast.Constant) and p.value == "__main__" for p in parts)


def launched_modules(job: Job) -> list:
    """The entry module of each launched training step (no job script: every module with
    a `__main__` block), then the repo modules each one imports (one level)."""
    def module(path: Path) -> Optional[Module]:
        src = source_path(job, path)   # a repo source (git's view), parsed once per run
        tree = tree_of(job, src) if src is not None else None
        if src is None or not isinstance(tree, ast.Module):
            return None
        text = (fs.read_text(src) or "").splitlines()  # an input: no report goes over it
        return Module(src, job.rel(src), tree, text)

    entries: dict = {}
    runs = []
    for script in job.scripts:
        step = job.step(script)
        path = job.entry_file(step)
        mod = module(path) if path is not None else None
        if mod is not None:
            entries.setdefault(mod.rel, mod).launched_by.append(step.where)
        runs.append(f"{step.where} runs {step.entry or 'no Python program'}")
    if job.scripts and not entries:
        raise Skip("no job script's training step runs a Python module of the repo "
                   f"({'; '.join(runs[:3])}{'; …' if len(runs) > 3 else ''})")
    if not job.job_script_count:   # the repo has none (not: the scope holds none)
        for path, tree in trees_mentioning(job, b"__main__"):
            if any(is_main_block(st) for st in tree.body):
                mod = module(path)
                assert mod is not None
                mod.launched_by.append('its `if __name__ == "__main__":` block (no job script)')
                entries[mod.rel] = mod
    if not entries:
        raise Skip('no job script, and no module has an `if __name__ == "__main__":` block')
    imported: dict = {}
    for entry in list(entries.values()):
        for path, _, _ in imported_paths(job, entry):
            rel = job.rel(path)
            if rel not in entries and rel not in imported:
                found = module(path)
                if found is None:
                    continue
                imported[rel] = found
            if rel in imported and entry not in imported[rel].importers:
                imported[rel].importers.append(entry)
    return list(entries.values()) + list(imported.values())


def imported_paths(job: Job, mod: Module) -> list:
    """[(repo file, local name, name in it or None for the module)] that the module
    imports: absolute against its directory, the repo and src/; relative against its
    package; `from pkg import sub` also finds pkg/sub.py."""
    return job.memo((CHECK_ID, "imports", mod.rel), lambda: _imported(job, mod))


def _imported(job: Job, mod: Module) -> list:
    roots = [mod.path.parent, job.repo, job.repo / "src"]
    out: list = []
    for node in statements(mod.tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                out += [(p, a.asname or a.name, None) for p in _find(roots, parts)]
        elif isinstance(node, ast.ImportFrom):
            parts = node.module.split(".") if node.module else []
            bases = roots if not node.level else [mod.path.parents[node.level - 1]] \
                if node.level <= len(mod.path.parents) else []
            for a in node.names:
                local = a.asname or a.name
                sub = _find(bases, parts + [a.name]) if a.name != "*" else []
                out += [(p, local, None) for p in sub] or \
                    [(p, local, a.name) for p in _find(bases, parts) if parts or node.level]
    return out


def _find(bases: list, parts: list) -> list:
    """The first base holding the module `parts` (file or package)."""
    for base in bases:
        stem = base.joinpath(*parts)
        for p in (stem.with_suffix(".py"), stem / "__init__.py"):
            if fs.is_file(p):
                return [p]
    return []


# ---- what each module does --------------------------------------------------------------
class _Walk(ast.NodeVisitor):
    """Collects exit calls and swallowing handlers with their enclosing frames."""

    def __init__(self, aliases: dict, helper_exit=lambda call: None):
        self.aliases = aliases     # local name → "os._exit" / "sys.exit" / "os" / "sys"
        self.helper_exit = helper_exit   # call → flow.End of a repo helper that exits
        self.frames: list = []     # ("finally", Try) | ("except", handler) | ("cond", test)
        self.func: Optional[str] = None
        self.hits: list = []

    def _visit_all(self, stmts: list) -> None:
        for st in stmts:
            self.visit(st)

    def visit_Try(self, node: ast.Try) -> None:
        self._visit_all(node.body)
        self._visit_all(node.orelse)
        for h in node.handlers:
            if h.type is not None:
                self.visit(h.type)
            if _swallows(h):
                self.hits.append(Hit("swallowed", h, node, (), self.func))
            self.frames.append(("except", h))
            self._visit_all(h.body)
            self.frames.pop()
        self.frames.append(("finally", node))
        self._visit_all(node.finalbody)
        self.frames.pop()

    def visit_TryStar(self, node: ast.AST) -> None:
        self.visit_Try(node)  # type: ignore[arg-type]  # same fields as Try

    def _conditional(self, node: ast.AST, test: ast.AST, parts: list) -> None:
        self.visit(test)
        self.frames.append(("cond", test))
        for stmts in parts:
            self._visit_all(stmts)
        self.frames.pop()

    def visit_If(self, node: ast.If) -> None:
        if self.func is None and is_main_block(node):
            self.func = MAIN_BLOCK     # the program itself, not a condition
            self._visit_all(node.body)
            self.func = None
            self._visit_all(node.orelse)
        else:
            self._conditional(node, node.test, [node.body, node.orelse])

    def visit_While(self, node: ast.While) -> None:
        self._conditional(node, node.test, [node.body, node.orelse])

    def visit_For(self, node: ast.For) -> None:
        self._conditional(node, node.iter, [node.body, node.orelse])

    def visit_AsyncFor(self, node: ast.AsyncFor) -> None:
        self._conditional(node, node.iter, [node.body, node.orelse])

    def visit_Match(self, node: ast.AST) -> None:
        self._conditional(node, node.subject, [c.body for c in node.cases])  # type: ignore

    def _scope(self, node: ast.AST, name: str) -> None:
        # A nested def or lambda runs when called, not inside the enclosing handler.
        saved, self.frames = self.frames, []
        outer = self.func
        self.func = outer or name
        self.generic_visit(node)
        self.frames, self.func = saved, outer

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._scope(node, node.name)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self._scope(node, node.name)

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._scope(node, self.func or "<lambda>")

    def visit_Call(self, node: ast.Call) -> None:
        if exit_name(node.func, self.aliases):
            self._hit(node)
        elif self.frames and (end := self.helper_exit(node)) is not None:
            self._hit(node, end)     # a handler that calls a helper whose every path exits
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if isinstance(exc, ast.Name) and exc.id == "SystemExit":
            self._hit(node)
        self.generic_visit(node)

    def _hit(self, node: ast.AST, end: object = None) -> None:
        conds: list = []
        for kind, frame in reversed(self.frames):
            if kind == "cond":
                conds.append(frame)
            elif kind == "finally" or not _only_non_errors(frame):
                self.hits.append(Hit(kind if kind == "finally" else "handler", node, frame,
                                     tuple(reversed(conds)), self.func, end))
                return
        if end is None:
            self.hits.append(Hit("normal", node, None, tuple(reversed(conds)), self.func))


def _type_names(handler: ast.ExceptHandler) -> set:
    t = handler.type
    items = t.elts if isinstance(t, ast.Tuple) else [t] if t is not None else [None]
    return {None if i is None else i.attr if isinstance(i, ast.Attribute) else
            i.id if isinstance(i, ast.Name) else "?" for i in items}


def _only_non_errors(handler: ast.AST) -> bool:
    assert isinstance(handler, ast.ExceptHandler)
    return _type_names(handler) <= NOT_ERRORS


def _swallows(h: ast.ExceptHandler) -> bool:
    """`except:` / `except (Base)Exception:` whose body does nothing at all."""
    quiet = all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and
                isinstance(s.value, ast.Constant)) for s in h.body)
    return quiet and bool(_type_names(h) & SWALLOWERS)


# ---- which code runs ----------------------------------------------------------------------
def _defs(tree: ast.Module) -> dict:
    return {n.name: n for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def _refs(nodes: list) -> set:
    """Names and dotted names (`a.b.c` and its prefixes) the code loads."""
    out: set = set()
    for top in nodes:
        for n in ast.walk(top):
            if isinstance(n, ast.Name):
                out.add(n.id)
            elif isinstance(n, ast.Attribute):
                chain, cur = [n.attr], n.value
                while isinstance(cur, ast.Attribute):
                    chain.append(cur.attr)
                    cur = cur.value
                if isinstance(cur, ast.Name):
                    parts = [cur.id, *reversed(chain)]
                    out |= {".".join(parts[:i]) for i in range(2, len(parts) + 1)}
    return out


def _top_level(tree: ast.Module) -> list:
    return [st for st in tree.body if not isinstance(
        st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def reached(tree: ast.Module, roots: set) -> tuple:
    """(top-level functions/classes the roots reach through the module's own names,
    every name that reached code loads)."""
    defs, seen, names = _defs(tree), set(), set(roots)
    todo = [n for n in roots if n in defs]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        refs = _refs([defs[name]])
        names |= refs
        todo += [r for r in refs if r in defs and r not in seen]
    return seen, names


def module_reach(job: Job, mod: Module) -> set:
    """The module's functions/classes that run when the entry runs, as far as names show."""
    def compute() -> set:
        roots = _refs(_top_level(mod.tree))     # what runs at import
        for entry in mod.importers:             # and what each importing entry uses of it
            _, used = reached(entry.tree, _refs(_top_level(entry.tree)) |
                              module_reach(job, entry))
            for path, local, name in imported_paths(job, entry):
                if fs.realpath(path) != fs.realpath(mod.path):
                    continue
                if name is not None and local in used:
                    roots.add(name)
                elif name is None:
                    roots |= {u[len(local) + 1:].split(".")[0] for u in used
                              if u.startswith(local + ".")}
        return reached(mod.tree, roots)[0]
    return job.memo((CHECK_ID, "reach", mod.rel), compute)


def main_functions(mod: Module) -> set:
    """Functions the entry's top level (or its __main__ block) calls by name."""
    defs = _defs(mod.tree)
    return {r for r in _refs(_top_level(mod.tree)) if r in defs}


def around_training(hit: Hit, mod: Module) -> bool:
    """A swallowing handler of the entry's top level or main function whose `try:`
    calls a train/fit/main/run/launch/spawn-like function."""
    if mod.importers or hit.func not in {None, MAIN_BLOCK} | main_functions(mod):
        return False
    assert isinstance(hit.frame, ast.Try)
    for st in hit.frame.body:
        for n in ast.walk(st):
            f = n.func if isinstance(n, ast.Call) else None
            name = f.id if isinstance(f, ast.Name) else f.attr \
                if isinstance(f, ast.Attribute) and getattr(f.value, "id", "") != "subprocess" \
                else ""
            if TRAINING_NAME.search(name):
                return True
    return False


# ---- findings ------------------------------------------------------------------------------
def _text(node: ast.AST) -> str:
    if isinstance(node, ast.Raise):
        return f"raise {ast.unparse(node.exc) if node.exc else 'SystemExit'}"
    return ast.unparse(node)


def _frame_line(hit: Hit, mod: Module) -> int:
    """The `except ...:` line, or the `finally:` line (the AST keeps no line for it)."""
    if hit.form == "swallowed":
        return hit.line
    if isinstance(hit.frame, ast.ExceptHandler):
        return hit.frame.lineno
    assert isinstance(hit.frame, ast.Try)
    return finally_line(mod.lines, hit.frame.finalbody[0])


def allowed(hit: Hit, mod: Module) -> Optional[str]:
    """The reason of a `# doctor: allow exit-masks-errors <reason>` on the exit call's
    lines or on its handler's line; None when there is none."""
    lines = list(hit.lines)
    if hit.frame is not None:
        lines.append(_frame_line(hit, mod))
    for n in lines:
        m = ALLOW.search(mod.lines[n - 1]) if 0 < n <= len(mod.lines) else None
        if m:
            return m.group(1).strip() or "(no reason given)"
    return None


def judge(hit: Hit, mod: Module, reach: set, consts: dict) -> Optional[tuple]:
    """(severity, message, what is lost, exit code) for one hit; None when it is fine."""
    where = {None: "the module's top level", MAIN_BLOCK: "the `__main__` block"}.get(
        hit.func, f"{hit.func}()")
    links = [f"when `{ast.unparse(c)}` holds" for c in hit.conds]
    if hit.func not in (None, MAIN_BLOCK) and hit.func not in reach:
        if hit.form == "normal":
            return None
        links.append(f"if `{hit.func}` runs (the doctor did not see the entry call it)")
    if hit.form == "swallowed":
        h, t = hit.node, hit.frame
        assert isinstance(h, ast.ExceptHandler) and isinstance(t, ast.Try)
        msg = (f"`except{' ' + ast.unparse(h.type) if h.type else ''}: pass` in {where} "
               f"swallows every exception of the `try:` at line {t.lineno}: a failed run "
               "falls through to the normal end and exits 0, with no traceback")
        return Severity.ERROR, msg, ["the exit code", "the traceback"], 0
    call, code = _text(hit.node), exit_code(hit.node, consts)
    os_exit = call.split("(")[0].endswith("_exit")
    end = hit.end
    if end is not None:      # through a repo helper: its exit decides
        code = end.code  # type: ignore[attr-defined]
        os_exit = end.text.split("(")[0].endswith("_exit")  # type: ignore[attr-defined]
        call = f"{call} (which runs `{end.text}` at {end.rel}:{end.line})"  # type: ignore
    if hit.form == "normal":
        if not os_exit:
            return None
        msg = f"`{call}` on the normal path of {where} ends the program without Python's " \
              "shutdown, even when the run succeeded"
        return Severity.WARNING, _with_links(msg, links), list(LOST_OS_EXIT), _code(code)
    if code not in (0, UNKNOWN) and not os_exit:
        return None    # sys.exit(1) keeps the failure, and Python's shutdown runs
    finally_ = hit.form == "finally"
    in_what = f"the `finally:` (line {_frame_line(hit, mod)})" if finally_ \
        else f"the `except` handler at line {_frame_line(hit, mod)}"
    lost = ["the exit code"] if code == 0 else \
        ["the exit code, if the status is 0"] if code == UNKNOWN else []
    lost += (["the traceback"] if finally_ else []) + (list(LOST_OS_EXIT) if os_exit else [])
    if code == 0:
        what = ("an exception raised in the `try:` is dropped before its traceback is "
                "printed and the step exits 0" if finally_ else
                "the failure it caught becomes exit code 0")
        msg = f"`{call}` in {in_what} of {where}: {what}, so Slurm records a failed run " \
              "as COMPLETED (and `afterok` dependencies go ahead)"
    elif code == UNKNOWN:
        links.append(f"if `{_arg_text(hit.node)}` is 0 after a failure (the doctor does "
                     "not follow its value)")
        msg = f"`{call}` in {in_what} of {where} may hide a failure"
    else:
        msg = f"`{call}` in {in_what} of {where} keeps a non-zero exit code but ends the " \
              "program without Python's shutdown"
    sev = Severity.ERROR if code == 0 and not links else Severity.WARNING
    return sev, _with_links(msg, links), lost, _code(code)


def _arg_text(node: ast.AST) -> str:
    call = node.exc if isinstance(node, ast.Raise) else node
    args = list(call.args) + [k.value for k in call.keywords] \
        if isinstance(call, ast.Call) else []
    return ast.unparse(args[0]) if args else ""


def _code(code: object) -> Optional[int]:
    return code if isinstance(code, int) else None


def _with_links(msg: str, links: list) -> str:
    return msg + (f" — {'; '.join(links)}" if links else "")


FIX = ("Let a failure reach the exit code: remove the forced exit (or make it only on the "
       "success path) and re-raise after cleanup (`except ...: cleanup(); raise`). If the "
       "process hangs at exit, find what hangs (faulthandler.dump_traceback_later, py-spy "
       "dump) instead of os._exit; if you must force it, flush and keep the status: "
       "`sys.stdout.flush(); sys.stderr.flush(); os._exit(1 if failed else 0)`.")


FIX_SWALLOWED = ("Let the exception propagate: remove the `except ...: pass`, or log it and "
                 "`raise` (the traceback and exit code 1 then reach the job log and Slurm).")


def hits_of(job: Job, mod: Module) -> list:
    if not MAYBE.search("\n".join(mod.lines)):
        return []      # most modules: no exit call and no `except ...: pass`, no walk
    flow = job.memo((CHECK_ID, "flow"), lambda: Flow(job))
    fmod = flow.module(mod.path)

    def helper_exit(call: ast.Call) -> object:
        target = flow.resolve(fmod, call, None) if fmod is not None else None
        end = flow.function_end(target) if target is not None else None
        return end if end is not None and end.kind == "exit" else None
    walk = _Walk(import_aliases(mod.tree), helper_exit)
    walk.visit(mod.tree)
    forks = {name for name, d in _defs(mod.tree).items() if _calls(d, "fork")}
    out = []
    for h in walk.hits:
        if h.form == "swallowed" and not around_training(h, mod):
            continue
        if h.func in forks:
            continue    # a forked child must leave with os._exit: it is not the program
        if h.form == "finally" and _only_flushes(h.frame):
            h = Hit("normal", h.node, None, h.conds, h.func)   # nothing there can fail
        out.append(h)
    return out


def _calls(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and (getattr(n.func, "attr", None) == name or
                                            getattr(n.func, "id", None) == name)
               for n in ast.walk(node))


def _only_flushes(frame: Optional[ast.AST]) -> bool:
    """`try: sys.stdout.flush() ... finally: os._exit(0)`: the exit ends the normal path."""
    assert isinstance(frame, ast.Try)
    return all(isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and
               getattr(st.value.func, "attr", None) == "flush" for st in frame.body)


@check(CHECK_ID, title="An exit call or a swallowed exception hides a failed run",
       severity="error", tags=("python", "exit", "logging"), needs=("repo",), timeout=60)
def exit_masks_errors(job: Job) -> Iterator[Finding]:
    """The training entry turns a failure into exit code 0 (`os._exit(0)` in `finally:`).

    Reads the entry module of each launched training step (the module its
    `python`/`torchrun`/`-m` runs; with no job script, every module with an
    `if __name__ == "__main__":` block) and the repo modules it imports, one
    level, from their AST (never importing them). Errors: `os._exit(0)`,
    `sys.exit(0)`, `exit(0)`, `quit(0)` or `raise SystemExit` in a `finally:`
    or in an `except` handler (other than KeyboardInterrupt/SystemExit), and
    `except:` / `except BaseException:` / `except Exception:` with only `pass`
    around the training call of the entry's top level or main function.
    A handler that calls a repo function whose every path exits (one level:
    `def die(): os._exit(0)`) counts as that exit. `exit(-1)` is status 255, a
    failure. Warnings: `os._exit(...)` on the normal path; a non-zero or unknown
    `os._exit` status in a handler; an exit under an `if` (named); one in a
    function the doctor did not see the entry call. A comment
    `# doctor: allow exit-masks-errors <reason>` on the exit's line or its
    handler's line silences it (listed in the report's facts).

    ## Why it matters
    `os._exit(0)` in a `finally:` ends the process before Python prints the
    exception: the step exits 0, Slurm records COMPLETED, `afterok` jobs go
    ahead and nobody looks at the log (one team lost days this way). os._exit
    also skips atexit handlers (wandb/logger finish, checkpoint flushers),
    the flush of buffered stdout/stderr (under Slurm stdout is a file, so the
    log's last lines vanish) and DataLoader worker cleanup.

    ## How to fix
    Remove the forced exit, or keep it on the success path only, and re-raise
    after cleanup (`except Exception: cleanup(); raise`). A process that hangs
    at exit has a cause (a non-daemon thread, an undestroyed process group):
    `dist.destroy_process_group()` and `faulthandler.dump_traceback_later(60)`
    find it. If you must force the exit, flush first and keep the status:
    `sys.stdout.flush(); sys.stderr.flush(); os._exit(1 if failed else 0)`.
    """
    notes = []
    for mod in launched_modules(job):
        hits = hits_of(job, mod)
        reach = module_reach(job, mod) if hits else set()
        consts = module_constants(mod.tree) if hits else {}
        for hit in hits:
            verdict = judge(hit, mod, reach, consts)
            if verdict is None:
                continue
            line = hit.line   # the exit call, or the swallowing `except` line
            reason = allowed(hit, mod)
            if reason is not None:
                notes.append({"location": f"{mod.rel}:{line}", "reason": reason})
                continue
            sev, msg, lost, code = verdict
            yield Finding(
                f"{msg}. Lost: {', '.join(lost)}", location=Location(mod.rel, line),
                fix=FIX_SWALLOWED if hit.form == "swallowed" else FIX,
                data={"form": hit.form, "call": _text(hit.node) if hit.form != "swallowed"
                      else None, "exit_code": code, "function": hit.func,
                      "handler_line": _frame_line(hit, mod) if hit.frame else None,
                      "entries": [e.rel for e in mod.importers] or [mod.rel],
                      "launched_by": [w for e in mod.importers or [mod] for w in e.launched_by],
                      "lost": lost},
                severity=sev)
    if notes:
        job.record_fact("exit_masks_errors_allowed", notes)
