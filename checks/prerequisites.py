"""A file the job reads before it starts is missing (prerequisite-missing)."""
from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Iterator, Optional

from doctor import Finding, Severity, Skip, check
from doctor.job.configs import Unknown, keypath
from doctor.job.context import Job
from doctor.model import FixOption, run
from doctor.job.loads import Cand, CodeLoads, _dotted
from doctor.job.made import producer, script_writes
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
_INTERP = re.compile(r"\$\{([^{}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass
class Ctx:
    """Where a step runs: its working directory and the environment a rank gets."""
    script: str
    cwd: Optional[Path]
    env: Any


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
    step's working directory, unless the code joins the value under another directory
    (`join(save_dir, cfg.test_filename)`, `d / cfg.name`); what cannot be resolved is
    skipped with a note (report
    `facts.prerequisites`), never guessed. A path is judged only when its top directory
    exists here (an absolute path's first component, such as a mounted /scratch; for a
    relative one, its first directory under the working directory), and never in a
    node-local directory (`site.local_paths`, default /tmp, /var/tmp, /dev/shm). A file
    the job makes is not a prerequisite: one the job script makes (`cp`, `>`, `mkdir -p`
    …), the code writes itself or creates as a directory (`os.makedirs`,
    `Path.mkdir(parents=True)`), an earlier step of the script writes into, the job this
    one waits for (`--dependency`) makes, or a run writes under a git-ignored output or
    checkpoint directory (doctor/job/made.py): it is skipped, with its producer named
    in `facts.prerequisites`; nor one the code reads only after checking that it exists
    with nothing computed instead.

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
    code = CodeLoads(job)
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


def _judge(job: Job, code: CodeLoads, cand: Cand, ctxs: dict, judged: list,
           notes: list) -> Iterator[Finding]:
    """The candidate in each step's context: a finding when it is missing in all."""
    def skip(why: str) -> None:
        notes.append({"path": cand.written, "at": str(cand.loc), "why": why})

    if cand.fallback and cand.fallback.startswith("optional"):
        return skip(cand.fallback)
    missing: list = []
    joined = _joined_elsewhere(code, cand)
    for ctx in ctxs.values():
        path, top, why = _resolve(cand, ctx)
        why = why or joined or _unjudgeable(job, ctx, path, top)
        made = _made_by_job(job, code, cand, ctx, path) if not why else ""
        if why or made:
            return skip(why or f"made by the job: {made}")
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


def _made_by_job(job: Job, code: CodeLoads, cand: Cand, ctx: Ctx, path: Path) -> str:
    """Who makes the file before the step reads it ("" when no one the doctor sees): the
    code that reads it also writes it (made on the first run: a resume or cache file);
    the code creates the directory (`os.makedirs`, `Path.mkdir`); the job script makes it
    or runs the repo's producer of it; an earlier step, the job this one waits for, or
    a run into a git-ignored output directory (doctor/job/made.py)."""
    name = os.path.basename(cand.written.rstrip("/"))
    producers = code.writers.get(name, [])
    if cand.module and any(p[0] == cand.module for p in producers):
        return f"the module that reads it ({cand.module}) also writes it"
    made = _code_makes_dir(code, cand)
    if made:
        return made
    script = next((s for s in job.scripts if s.rel == ctx.script), None)
    step = job.step(script)
    made = script_writes(step, cand.written, dirs=True) or ""
    if made:
        return made
    for s in step.scripts:
        for rel, _line in producers:
            if os.path.basename(rel) in s.text:
                return f"{s.rel} runs its producer {rel}"
    return producer(job, script, step, cand.written, path) or ""


MKDIRS = {"os.makedirs", "makedirs", "os.mkdir"}
JOINS = {"os.path.join", "path.join", "join", "posixpath.join", "Path", "pathlib.Path",
         "PurePath"}


def _config_key(cand: Cand) -> Optional[str]:
    """The last name of a config candidate's key (`TEST.test_filename` → test_filename)."""
    m = re.match(r"config key (\S+) in ", cand.source)
    names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", m.group(1)) if m else []
    return names[-1] if names else None


def _mentions(node: ast.AST, key: str) -> bool:
    return bool(re.search(rf"(?<![A-Za-z0-9_]){re.escape(key)}(?![A-Za-z0-9_])",
                          ast.unparse(node)))


def _joined_elsewhere(code: CodeLoads, cand: Cand) -> str:
    """Why a relative config value is not judged against the working directory: the code
    joins it under another directory (`join(save_dir, args.test_filename)`, `Path(d,
    cfg.name)`, `d / cfg.name`, `d.joinpath(cfg.name)`), which the doctor does not
    resolve; "" when no code does."""
    key = _config_key(cand)
    if key is None or os.path.isabs(cand.written) or cand.written.startswith(("$", "~")):
        return ""
    for call, _fn, rel in code.calls:
        f = _dotted(call.func)
        tail = call.args[1:] if f in JOINS else call.args if isinstance(
            call.func, ast.Attribute) and call.func.attr == "joinpath" else []
        if any(_mentions(a, key) for a in tail):
            return (f"the code joins it under another directory ({rel}:{call.lineno}: "
                    f"`{ast.unparse(call)[:70]}`): not relative to the working directory")
    for rel, tree in code.trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and \
                    _mentions(node.right, key) and not isinstance(node.left, ast.Constant):
                return (f"the code joins it under another directory ({rel}:{node.lineno}: "
                        f"`{ast.unparse(node)[:70]}`): not relative to the working directory")
    return ""


def _code_makes_dir(code: CodeLoads, cand: Cand) -> str:
    """Where the code creates the candidate directory (`os.makedirs(cfg.features_dir)`,
    `out = Path(cfg["features_dir"]); out.mkdir(parents=True)`): the call names the
    config key of the candidate, or the same constant path; "" when none does."""
    key = _config_key(cand)
    # `cfg["eval"]["stats_file"]` is not data.stats_file: the key right under another
    # section of this config; a flattened reading (`args.model_dir` for TRAIN.model_dir,
    # yacs) names no section and still counts
    m = re.match(r"config key (\S+) in ", cand.source)
    names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", m.group(1)) if m else []
    parent = names[-2] if len(names) > 1 else None
    sections = _sections(cand.root)
    named = rf"(?:([A-Za-z_][A-Za-z0-9_]*)['\"\]\[.]*)?(?<![A-Za-z0-9_]){re.escape(key)}" \
        r"(?![A-Za-z0-9_])" if key else ""
    for call, fn, rel in code.calls:
        if _dotted(call.func) in MKDIRS:
            arg: Optional[ast.AST] = call.args[0] if call.args else None
        elif isinstance(call.func, ast.Attribute) and call.func.attr == "mkdir":
            arg = call.func.value
        else:
            continue
        if arg is None:
            continue
        exprs = [arg]
        if isinstance(arg, ast.Name):   # one assignment back, in the function or module
            bound = (fn.assigns if fn is not None else code.mod_assigns.get(rel, {}))
            if bound.get(arg.id) is not None:
                exprs.append(bound[arg.id])
        for e in exprs:
            if any(isinstance(n, ast.Call) and _dotted(n.func).endswith("dirname") or
                   isinstance(n, ast.Attribute) and n.attr == "parent" for n in ast.walk(e)):
                continue   # makes the directory above it, not the path itself
            text = ast.unparse(e)
            consts = [n.value for n in ast.walk(e) if isinstance(n, ast.Constant)
                      and isinstance(n.value, str)]
            if (key and any(h.group(1) not in sections or h.group(1) == parent
                            for h in re.finditer(named, text))) \
                    or os.path.normpath(cand.written) in {os.path.normpath(c) for c in consts if c}:
                return f"the code creates it ({rel}:{call.lineno}: `{text[:60]}`)"
    return ""


def _sections(root: Any) -> set:
    """The names of a config's sections (keys whose value is a mapping), at any depth."""
    out: set = set()
    todo = [root]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, dict):
                    out.add(str(k))
                    todo.append(v)
        elif isinstance(node, list):
            todo += node
    return out


def _finding(job: Job, code: CodeLoads, cand: Cand, ctx: Ctx, path: Path) -> Finding:
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
    options: tuple = ()
    if producer:
        verb = "writes" if writers else "mentions"
        fix = f"Run {producer[0]} before the job (it {verb} {name} at {producer[0]}:" \
              f"{producer[1]}) and make sure the file lands at {path}"
        if producer[0].endswith(".py"):
            cwd = ctx.cwd or job.repo
            commands = (f"cd {cwd} && python {os.path.relpath(job.repo / producer[0], cwd)}",)
            options = (FixOption((run("before you submit the job", *commands),)),)
    if cand.fallback:
        fix += "; make the read raise when the file is missing instead of computing it " \
               "inside the distributed job"
    fix += "."
    return Finding(msg, location=cand.loc, fix=fix, commands=commands, options=options, data={
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
