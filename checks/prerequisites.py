"""A file the job reads before it starts is missing (prerequisite-missing)."""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.configs import Unknown, keypath
from doctor.job.context import Job
from doctor.job.sources import python_trees
from doctor.job.stepconfigs import step_configs
from doctor.probes.mounts import with_deadline

SUFFIXES = (".pkl", ".pt", ".pth", ".npz", ".zarr", ".h5")
KEY_ENDS = ("_path", "_file", "_dir", "_root")
# Key words of paths the job writes (made when it runs, not needed before it starts).
OUTPUT_WORDS = {"out", "output", "outputs", "save", "saved", "log", "logs", "logging",
                "result", "results", "wandb", "tensorboard", "tb", "tmp", "temp", "work",
                "run", "runs", "exp", "experiment", "dump", "export", "default", "dirpath",
                "checkpoint", "checkpoints", "ckpt", "ckpts", "cache", "plot", "plots", "fig",
                "figures", "report", "profile", "trace", "pred", "predictions", "write"}
# An output word makes a file key an output only for these (a cache *file* is an input).
FILE_OUTPUT_WORDS = OUTPUT_WORDS - {"cache", "checkpoint", "ckpt"}
# A bare file name (no directory) counts only with one of these: `gpt2`, `c4` or
# `model.LitModel` are hub ids, presets and classes.
FILE_EXTS = set(SUFFIXES) | {".txt", ".json", ".jsonl", ".yaml", ".yml", ".csv", ".tsv", ".npy",
                             ".bin", ".safetensors", ".ckpt", ".parquet", ".arrow", ".model",
                             ".tar", ".gz", ".zip", ".nc", ".hdf5", ".pickle", ".idx", ".lmdb",
                             ".db", ".onnx", ".vocab", ".tfrecord", ".feather", ".mat"}
LOCAL_DEFAULT = ("/tmp", "/var/tmp", "/dev/shm")
SPECIAL = {"last", "best", "hpc", "none", "null", "registry", "auto"}  # Lightning's ckpt_path
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
_INTERP = re.compile(r"\$\{([^{}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class Ctx:
    """Where a step runs: its working directory and the environment a rank gets."""
    script: str
    cwd: Optional[Path]
    env: Any


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


# ---- the check -----------------------------------------------------------
@check("prerequisite-missing", title="A file the job reads before it starts is missing",
       severity="warning", tags=("data", "python", "config"),
       needs=("repo", "configs", "sbatch"), timeout=60)
def prerequisite_missing(job: Job) -> Iterator[Finding]:
    """A path the job needs before it starts does not exist on this node.

    The paths: config values (overrides applied) under keys ending in `_path`, `_file`,
    `_dir` or `_root`, absolute paths, and `.pkl`/`.pt`/`.pth`/`.npz`/`.zarr`/`.h5`
    values; and string constants of the job's code (the entry module, what it imports
    and the classes its configs name) that reach `torch.load`, `np.load` or
    `open(..., "rb")` (so `pickle.load`), directly or through up to two calls of the
    repo's functions (a constant in one module passed to a constructor whose helper
    opens it). Keys that name outputs (`output_dir`, `save_path`, `log_file`, a cache
    directory) are left out. `$VAR`, `${VAR}` and `${oc.env:VAR}` are resolved through
    the step's environment, `${a.b}` through the config, relative paths against the
    step's working directory; what cannot be resolved is skipped with a note (report
    `facts.prerequisites`), never guessed. A path is judged only when its top directory
    exists here (an absolute path's first component, such as a mounted /scratch; for a
    relative one, its first directory under the working directory), and never in a
    node-local directory (`site.local_paths`, default /tmp, /var/tmp, /dev/shm). A file
    the job script makes, the code writes itself, or reads only after checking that it
    exists with nothing computed instead, is not a prerequisite.

    It is an error when the code around the read falls back to computing the file's
    content instead (`if os.path.exists(p): load else: compute`, `try: load except
    FileNotFoundError: compute`, or a loader that returns False when the file is
    missing and a caller that then computes): seed 000's silent fallback to the rank-0
    path that deadlocked 400 GPUs. Otherwise it is a warning. Whether a file exists is
    a fact of this node, so under `--static` (the CI gate) the check runs but skips,
    saying so: no part of it is worth keeping without the filesystem.

    ## Why it matters
    A missing dataset, checkpoint or precomputed cache fails every rank after the
    queue wait, or worse, does not fail: the code quietly computes the cache at
    startup, on every rank or on rank 0 while the others wait in a collective, and
    the job hangs until the NCCL watchdog or the time limit kills it.

    ## How to fix
    Create the file before submitting, with the repo's producer script when it has
    one (the finding names it), or point the config at the file's real location.
    Make the code fail fast when a prerequisite is missing: raise instead of
    falling back to computing it inside the distributed job.
    """
    if job.static:
        raise Skip("--static: whether a file exists is a fact of this node, not of the repo")
    ctxs = _contexts(job)
    code = _Code(job)
    cands = [(c, ctxs) for c in code.candidates()] + list(_config_candidates(job, ctxs))
    if not cands:
        raise Skip("the job names no path it reads before it starts (no path config key, "
                   "no constant path reaching torch.load / np.load / open(..., 'rb'))")
    notes: list = []
    judged: list = []
    for cand, where in cands:
        yield from _judge(job, code, cand, where, judged, notes)
    job.record_fact("prerequisites", {"judged": judged[:50], "skipped": notes[:50]})
    if not judged:
        raise Skip("no path could be judged on this node: " + "; ".join(
            f"{n['path']} ({n['why']})" for n in notes[:5]))


def _contexts(job: Job) -> dict:
    """script rel (None: no job script) → Ctx of its training step."""
    out = {}
    for script in (job.scripts or [None]):
        step = job.step(script)
        cwd: Optional[Path] = job.repo
        if step.cwd:
            cwd = None if "$" in step.cwd else Path(step.cwd) if os.path.isabs(step.cwd) \
                else job.repo / step.cwd
        out[script.rel if script else None] = Ctx(script.rel if script else "", cwd, step.env)
    return out


def _judge(job: Job, code: "_Code", cand: Cand, ctxs: dict, judged: list,
           notes: list) -> Iterator[Finding]:
    """The candidate in each step's context: a finding when it is missing in all."""
    def skip(why: str) -> None:
        notes.append({"path": cand.written, "at": str(cand.loc), "why": why})

    if cand.fallback and cand.fallback.startswith("optional"):
        return skip(cand.fallback)
    missing: list = []
    for ctx in ctxs.values():
        path, top, why = _resolve(cand, ctx)
        why = why or _unjudgeable(job, ctx, path, top) or _made_by_job(job, code, cand, ctx)
        if why:
            return skip(why)
        ok, exists = with_deadline(partial(os.path.exists, path))
        if not ok:
            return skip(str(exists))
        judged.append(str(path))
        if exists:
            return
        missing.append((ctx, path))
    if missing:
        yield _finding(job, code, cand, *missing[0])


def _resolve(cand: Cand, ctx: Ctx) -> tuple:
    """(absolute path, its top directory, "") or (None, None, why it cannot be resolved).
    The top directory: an absolute path's first component; a relative path's first
    directory under the working directory (the working directory for a bare file name)."""
    text, why = cand.written, ""
    for _ in range(6):
        if "$" not in text:
            break
        if not cand.expand:
            return None, None, "holds `$`, which the code does not expand"
        text, why = _interpolate(text, cand.root, ctx)
        if why:
            return None, None, why
    if text.startswith("~"):
        home = ctx.env.get("HOME")
        if not cand.expand or home is None or not home.resolved:
            return None, None, "`~` with no HOME the doctor can see"
        text = home.value.rstrip("/") + text[1:]
    if os.path.isabs(text):
        path = Path(os.path.normpath(text))
        return path, Path("/", *path.parts[1:2]), ""
    if ctx.cwd is None:
        return None, None, f"relative, and the working directory of {ctx.script} is unknown"
    parts = Path(os.path.normpath(text)).parts
    if not parts or parts[0] == "..":
        return None, None, "relative to a directory above the working directory"
    return ctx.cwd / Path(*parts), ctx.cwd / parts[0] if len(parts) > 1 else ctx.cwd, ""


def _interpolate(text: str, root: Any, ctx: Ctx) -> tuple:
    """One round of ${oc.env:VAR[,d]}, ${a.b} (config), ${VAR} and $VAR."""
    why: list = []

    def var(name: str, default: Optional[str]) -> str:
        v = ctx.env.get(name)
        if v is not None and v.resolved:
            return str(v.value)
        if v is None and default is not None:
            return default
        state = "not set" if v is None else "set to a value the doctor cannot read"
        why.append(f"${name} is {state} in the environment of {ctx.script or 'the login'}")
        return ""

    def repl(m: re.Match) -> str:
        body, name = m.group(1), m.group(2)
        if name:
            return var(name, None)
        if body.startswith(("oc.env:", "env:")):
            name, _, default = body.split(":", 1)[1].partition(",")
            return var(name.strip(), default.strip().strip("'\"") if _ else None)
        got = _config_get(root, body) if root is not None else None
        if isinstance(got, (str, int, float)) and not isinstance(got, bool):
            return str(got)
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", body):
            return var(body, None)
        why.append(f"${{{body}}} is not a key of this config the doctor can read" if
                   re.fullmatch(r"[\w.]+", body) else f"${{{body}}} is resolved only when "
                   "the job runs")
        return ""

    out = _INTERP.sub(repl, text)
    return out, "; ".join(why)


def _config_get(root: Any, dotted: str) -> Any:
    node = root
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _unjudgeable(job: Job, ctx: Ctx, path: Path, top: Path) -> str:
    """Why this node cannot tell whether the path is there ("" when it can)."""
    local = [str(p) for p in (job.site.get("local_paths") or LOCAL_DEFAULT)]
    written_abs = top == Path("/", *path.parts[1:2])   # not relative to the working dir
    if written_abs and any(str(path) == p or str(path).startswith(p.rstrip("/") + "/")
                           for p in local):
        return "node-local: a compute node's copy is not this node's"
    ok, exists = with_deadline(partial(os.path.isdir, top))
    if not ok or not exists:
        return f"its top directory {top} does not exist on this node"
    return ""


def _made_by_job(job: Job, code: "_Code", cand: Cand, ctx: Ctx) -> str:
    """The job script makes the file, or runs the repo's producer of it; the code that
    reads it also writes it (made on the first run: a resume or cache file)."""
    name = os.path.basename(cand.written.rstrip("/"))
    producers = code.writers.get(name, [])
    if cand.module and any(p[0] == cand.module for p in producers):
        return f"the module that reads it ({cand.module}) also writes it"
    step = job.step(next((s for s in job.scripts if s.rel == ctx.script), None))
    for s in step.scripts:
        if re.search(rf"(>>?|\b(cp|mv|ln|tee|touch|install|rsync|wget|curl|tar)\b[^\n]*)"
                     rf"\s*\S*{re.escape(name)}\b", s.text):
            return f"{s.rel} makes it"
        for rel, _line in producers:
            if os.path.basename(rel) in s.text:
                return f"{s.rel} runs its producer {rel}"
    return ""


def _finding(job: Job, code: "_Code", cand: Cand, ctx: Ctx, path: Path) -> Finding:
    name = os.path.basename(cand.written.rstrip("/"))
    writers = code.writers.get(name, [])
    producer = writers[0] if writers else code.mention(job, name, cand.module)
    shown = cand.written if str(path) == cand.written else f"{cand.written} (→ {path})"
    how = f"read at {cand.load}" if cand.load else cand.source
    if cand.fallback and cand.complete:
        msg = (f"{shown} does not exist, and the code that reads it ({cand.load}) silently "
               f"computes it instead ({cand.fallback}): the job takes that path at startup, on "
               "every rank, or on rank 0 while the others wait in a collective (seed 000's "
               "deadlock)")
    else:
        link = "" if cand.complete else " (if that value reaches the job unchanged: it " \
            "comes from a default the job's environment may replace)"
        msg = f"{shown} does not exist on this node; the job needs it before it starts " \
              f"({how}){link}"
    fix = f"Create {path} before submitting"
    commands: tuple = ()
    if producer:
        verb = "writes" if writers else "mentions"
        fix = f"Run {producer[0]} before the job (it {verb} {name} at {producer[0]}:" \
              f"{producer[1]}) and make sure the file lands at {path}"
        if producer[0].endswith(".py"):
            cwd = ctx.cwd or job.repo
            commands = (f"cd {cwd} && python {os.path.relpath(job.repo / producer[0], cwd)}",)
    if cand.fallback:
        fix += "; make the read raise when the file is missing instead of computing it " \
               "inside the distributed job"
    fix += "."
    return Finding(msg, location=cand.loc, fix=fix, commands=commands, data={
        "path": cand.written, "resolved": str(path), "source": cand.source,
        "load": cand.load, "fallback": cand.fallback, "chain": cand.chain,
        "producer": f"{producer[0]}:{producer[1]}" if producer else None,
        "script": ctx.script or None},
        severity=Severity.ERROR if cand.fallback and cand.complete else None)


# ---- config values -------------------------------------------------------------
def _config_candidates(job: Job, ctxs: dict) -> Iterator[tuple]:
    """(Cand, the contexts of the steps that read it) for every path-like config value."""
    owner: dict = {}
    for script in job.scripts:
        for cfg in step_configs(job, script).configs:
            owner.setdefault(id(cfg), {})[script.rel] = ctxs[script.rel]
    for cfg in job.configs:
        for kp, mapping in cfg.mappings():
            if kp[:1] == ("hydra",):
                continue   # Hydra's own run/sweep directories: outputs
            for key, value in mapping.items():
                for v in (value if isinstance(value, list) else [value]):
                    if isinstance(v, Unknown) or not isinstance(v, str) or \
                            not _path_like(str(key), v.strip()):
                        continue
                    yield Cand(v.strip(), cfg.location(mapping, key),
                               f"config key {keypath(kp + (key,))} in {cfg.rel}",
                               root=cfg.data), owner.get(id(cfg), ctxs)


def _path_like(key: str, v: str) -> bool:
    """A value the job reads as an input path (not an output, a hub id or a preset)."""
    if len(v) < 2 or any(c.isspace() for c in v) or "://" in v or v.startswith("-") or \
            v.lower() in SPECIAL:
        return False
    k = key.lower()
    if k in ("class_path", "_target_", "target"):
        return False   # a dotted class name, not a file
    words = set(re.split(r"[_\W]+", k))
    if not (k.endswith(KEY_ENDS) or v.rstrip("/").endswith(SUFFIXES) or v.startswith("/")):
        return False
    if words & (OUTPUT_WORDS if k.endswith(("_dir", "_root")) else FILE_OUTPUT_WORDS):
        return False
    bare = "/" not in v and not v.startswith(("$", "~")) and \
        os.path.splitext(v)[1].lower() not in FILE_EXTS
    return not bare   # `gpt2`, `c4`, `model.LitModel`: a hub id, a preset, a class


# ---- the code --------------------------------------------------------------------
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


class _Code:
    """The repo's functions, calls, reads and writes of files (its AST; never imported)."""

    def __init__(self, job: Job):
        self.job = job
        self.trees = {job.rel(p): t for p, t in python_trees(job)}
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
        for p in job.repo_files({".py", ".sh", ".bash", ".sbatch", ".slurm"}):
            rel = job.rel(p)
            if rel == reader or re.search(r"(^|/)tests?/", rel):
                continue
            try:
                lines = p.read_text(errors="replace").splitlines()
            except OSError:
                continue
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


def _after(code: _Code, st: ast.If) -> list:
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
