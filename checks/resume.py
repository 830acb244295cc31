"""A resume checkpoint that no longer fits the model: missing, unexpected, reshaped keys."""
from __future__ import annotations

import ast
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from doctor import fs
from doctor import Finding, Location, Severity, Skip, check
from doctor.job.configs import is_unresolved, keypath
from doctor.job.context import Job
from doctor.job.overrides import parse_overrides
from doctor.job.sources import python_trees
from doctor.job.stepconfigs import step_configs
from doctor.job.versions import parse_version
from doctor.proc import run_cmd
from doctor.scanners.torchsave import NotRegularFile, TorchSaveInfo, inspect_file

CHECK = "resume-checkpoint-mismatch"
EXACT_KEYS = ("ckpt_path", "resume_from_checkpoint")
CKPT_PARENTS = ("checkpoint", "checkpoints", "ckpt", "checkpointing")
SAVE_WORDS = ("save", "out", "dir", "export", "log", "every", "interval", "best_k", "top_k")
CKPT_SUFFIXES = (".pt", ".pth", ".ckpt", ".bin", ".tar", ".pkl")
LIGHTNING_WORDS = {"last", "best", "hpc", "registry"}   # ckpt_path values that are no path
# Where a dict checkpoint keeps the model's state_dict, most specific first.
STATE_KEYS = ("state_dict", "model_state_dict", "model", "model_state", "net", "network",
              "module", "state")
DEFAULT_TIMEOUT_S = 120.0
SHOWN = 5
MAX_KEYS = 200
MARK = "DOCTOR-STATE-DICT "

# Run in a child process with the repo importable: the user's model never enters the doctor.
CHILD = r'''
import importlib, json, sys
mod, _, attr = sys.argv[1].partition(":")
obj = importlib.import_module(mod)
for part in attr.split("."):
    obj = getattr(obj, part)
made = obj()
module = made[0] if isinstance(made, (tuple, list)) else made
import torch
out = {}
for key, value in module.state_dict().items():
    if not isinstance(value, torch.Tensor):
        out[key] = "other"
    elif torch.nn.parameter.is_lazy(value):
        out[key] = None
    else:
        out[key] = list(value.shape)
print("''' + MARK + r'''" + json.dumps(out))
'''


@dataclass(frozen=True)
class ResumeRef:
    written: str                 # the path as the job names it
    path: Path                   # resolved against the step's working directory
    origin: str                  # where it is named, for messages
    location: Optional[Location]
    read_by: Optional[str]       # what reads it (None: the doctor did not see that link)


def _timeout(job: Job) -> float:
    return float(job.settings.smoke.get("timeout_s") or DEFAULT_TIMEOUT_S) + 30.0


@check(CHECK, title="The checkpoint the job resumes from does not fit the model",
       severity="error", tags=("checkpoint",), needs=("configs", "sbatch"),
       timeout=_timeout)
def resume_checkpoint_mismatch(job: Job) -> Iterator[Finding]:
    """The job resumes from a checkpoint whose parameters no longer match the model.

    The checkpoint comes from a config key (`ckpt_path`, `resume_from_checkpoint`,
    `resume*`, or a checkpoint file under `checkpoint:`), with the step's
    command-line overrides applied (LightningCLI `--ckpt_path`, Hydra
    `checkpoint.resume_from=`), from the step's own arguments, or, for a
    `#SBATCH --requeue` job, from the constant auto-resume path its entry module
    loads. Relative paths resolve against the step's working directory. The
    file's keys and shapes are read by the doctor's own torch.save reader (the
    pickle is never executed); the model's come from `--model` / `smoke.model`,
    built in a child process with a deadline. Missing, unexpected and reshaped
    parameters are listed as `model.load_state_dict(..., strict=True)` reports
    them. A Lightning checkpoint's `state_dict`, and a `{"model": ...,
    "optimizer": ...}` dict, are found by their key; a common leading prefix
    (the LightningModule's attribute, such as `model.`) is stripped when that is
    how the names match, and the finding says so. When the repo loads state
    dicts with `strict=False`, missing and unexpected keys are warnings.

    The model is built only when the run may execute repo code: `--no-smoke`
    and `--static` compare nothing, but still read the checkpoint.

    A checkpoint whose pickle names globals outside torch's `weights_only` set
    is a finding of its own, in every mode, whether or not a model is given.
    How the job loads it decides what happens: the `weights_only=` of the
    `torch.load` that reads it, else torch's default for the job's torch
    (`True` from 2.6). When it loads with `weights_only=True`, or the doctor
    cannot tell, a global that runs a command or code (`os.system`,
    `subprocess.*`, `builtins.eval`, ...) is an error: the load is refused, so
    the resume fails, or it makes that call; other globals are a warning, as
    only `weights_only=True` refuses them. When the job loads it with
    `weights_only=False` the resume does not fail: a global that runs code is a
    warning that says the load runs it, and others are no finding.

    ## Why it matters
    A resume that does not fit fails only after the queue wait, at the first
    `load_state_dict`, and with `--requeue` every requeue repeats the failure:
    the renamed layer or the added task head costs one allocation per retry.
    A pickle that names other globals is refused by `torch.load(weights_only=True)`
    (the default since torch 2.6), and with `weights_only=False` loading it calls them.

    ## How to fix
    Point the resume path at a checkpoint of the current model, or start fresh
    (move the auto-resume file away). If the change was intended, convert the
    checkpoint (rename keys, drop or re-initialise the changed layers) or load
    the matching part explicitly with `strict=False` and check what it returns.
    Never load a checkpoint that calls `os.system` or the like: remove it and
    resume from one you trust.
    """
    refs = resume_refs(job)
    if not refs:
        raise Skip("no resume checkpoint: no config key or argument names one (ckpt_path, "
                   "resume_from_checkpoint, resume*, checkpoint.*) and no --requeue job "
                   "loads a constant auto-resume path")
    existing = [r for r in refs if fs.is_file(r.path, job.unreadable)]
    if not existing:
        raise Skip("the resume checkpoint does not exist here (a fresh start): "
                   + ", ".join(f"{job.rel(r.path)} ({r.origin})" for r in refs[:5]))
    infos = [(r, read_info(r.path)) for r in existing]
    # what torch.load refuses or runs is a finding whether or not the keys can be compared
    unsafe = [f for r, info in infos if info is not None and info.unsafe_globals
              and (f := unsafe_pickle(job, r, info)) is not None]
    try:
        states = comparable(job, infos)
    except Skip:
        if not unsafe:
            raise
        states = []
    model = model_state(job) if states else {}
    lenient = lenient_loads(job) if states else []
    for ref, (where, ckpt) in states:
        finding = judge(job, ref, where, ckpt, model, lenient)
        if finding is not None:
            yield finding
    yield from unsafe


def comparable(job: Job, infos: list) -> list:
    """(ref, state) of each checkpoint whose keys can be compared with the model; Skip
    when none can."""
    if not job.smoke:
        raise Skip("--no-smoke / --static: the model is not built, as that runs the repo's "
                   "code (the checkpoint's pickle was read, never executed)")
    if not job.model:
        raise Skip("no model factory to compare with: give --model MOD:FACTORY or settings "
                   "smoke.model")
    if not job.fact("torch_installed"):
        raise Skip("torch is not installed in this environment (the model is built in a "
                   "child process with this Python)")
    states = [(r, state) for r, info in infos if (state := state_of(info)) is not None]
    if not states:
        raise Skip("the resume checkpoint holds no tensors the doctor can read: "
                   + ", ".join(job.rel(r.path) for r, _ in infos))
    return states


# ---- where the checkpoint is named ------------------------------------------------------
def _is_resume_key(path: tuple, key: Any, value: Any) -> bool:
    k = str(key).lower()
    if not isinstance(value, str) or not value.strip() or is_unresolved(value):
        return False
    if value.strip() in LIGHTNING_WORDS:
        return False
    if k in EXACT_KEYS or k.startswith("resume"):
        return "/" in value or value.strip().endswith(CKPT_SUFFIXES) or "." in value
    parents = {str(p).lower() for p in path}
    return bool(parents & set(CKPT_PARENTS)) and not any(w in k for w in SAVE_WORDS) \
        and value.strip().endswith(CKPT_SUFFIXES)


def _base(job: Job, cwd: Optional[str]) -> Path:
    if not cwd:
        return job.repo
    return Path(cwd) if os.path.isabs(cwd) else job.repo / cwd


def _resolve(base: Path, written: str) -> Path:
    p = Path(os.path.expanduser(written.strip()))
    return p if p.is_absolute() else base / p


def resume_refs(job: Job) -> list:
    """Every checkpoint the job names to resume from, in config, argument, requeue order."""
    out: list = []
    cwd_of: dict = {}
    for script in job.scripts:
        step = job.step(script)
        for cfg in step_configs(job, script).configs:
            cwd_of.setdefault(str(cfg.path), _base(job, step.cwd))
    for cfg in job.configs:
        base = cwd_of.get(str(cfg.path), job.repo)
        for path, mapping in cfg.mappings():
            for key, value in mapping.items():
                if _is_resume_key(path, key, value):
                    loc = cfg.location(mapping, key)   # an override: where it was written
                    at = f"{loc.path}:{loc.line}" if loc.line else loc.path
                    out.append(ResumeRef(value, _resolve(base, value),
                                         f"{at} ({keypath(path + (key,))})", loc,
                                         _reader(job, str(key))))
    for script in job.scripts:
        step = job.step(script)
        for o in parse_overrides(list(step.args)).overrides:
            *parents, last = o.key.split(".")
            if _is_resume_key(tuple(parents), last, o.value):
                out.append(ResumeRef(o.value, _resolve(_base(job, step.cwd), o.value),
                                     f"{step.where} (`{o.raw}`)",
                                     Location(step.script.rel, step.line), _reader(job, last)))
        if script.get("requeue"):
            out += _requeue_refs(job, script, step)
    unique: dict = {}
    for r in out:   # the first place that names a file wins
        unique.setdefault(str(r.path), r)
    return list(unique.values())


def _reader(job: Job, key: str) -> Optional[str]:
    """What reads this key: Lightning for its own keys, else code that names it."""
    names = job.memo((CHECK, "names"), lambda: _code_names(job))
    if key in EXACT_KEYS and names.get("lightning"):
        return f"Lightning (imported at {names['lightning']})"
    return f"the code (`{key}` at {names[key]})" if key in names else None


def _code_names(job: Job) -> dict:
    """name → first file:line for identifiers, attributes, keywords and option strings."""
    out: dict = {}
    for path, tree in python_trees(job):
        for node in ast.walk(tree):
            words: list = []
            if isinstance(node, ast.Attribute):
                words = [node.attr]
            elif isinstance(node, ast.keyword) and node.arg:
                words = [node.arg]
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and len(node.value) < 80:
                words = [node.value.lstrip("-"), node.value.rsplit(".", 1)[-1]]
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] + [getattr(node, "module", "") or ""]
                if any(m.split(".")[0] in ("lightning", "pytorch_lightning") for m in mods):
                    words = ["lightning"]
            for w in words:
                out.setdefault(w, f"{job.rel(path)}:{getattr(node, 'lineno', 0)}")
    return out


def _requeue_refs(job: Job, script: Any, step: Any) -> list:
    """The constant checkpoint paths the entry module (or a repo module it imports) loads:
    the file a requeued job resumes from (seed 002: `latest.pt`)."""
    entry = job.entry_file(step)
    if entry is None:
        return []
    trees = dict(python_trees(job))
    out = []
    for path in [entry] + _imported(job, entry, trees):
        tree = trees.get(path)
        for written, line in _constant_loads(tree) if tree is not None else ():
            d = script.get("requeue")
            out.append(ResumeRef(written, _resolve(_base(job, step.cwd), written),
                                 f"{job.rel(path)}:{line} (auto-resume of the --requeue job, "
                                 f"{script.rel}:{d.line})", Location(job.rel(path), line),
                                 f"{job.rel(path)}:{line}"))
    return out


def _imported(job: Job, entry: Path, trees: dict) -> list:
    by_module: dict = {}
    for p in trees:
        rel = job.rel(p)[:-3].replace("/", ".")
        for name in (rel, rel[4:] if rel.startswith("src.") else rel,
                     ".".join(p.relative_to(entry.parent).with_suffix("").parts)
                     if entry.parent in p.parents else rel):
            by_module.setdefault(name.removesuffix(".__init__"), p)
    out = []
    for node in ast.walk(trees.get(entry) or ast.Module(body=[], type_ignores=[])):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] + [f"{node.module}.{a.name}" for a in node.names] \
            if isinstance(node, ast.ImportFrom) and not node.level else []
        out += [by_module[n] for n in names if n in by_module and by_module[n] != entry]
    return list(dict.fromkeys(out))


def _constant_loads(tree: ast.AST) -> list:
    """(path, line) for `*.load(PATH)` / `load_*(PATH)` calls whose PATH is a constant
    checkpoint path: a literal, a name assigned once, os.path.join / Path / `/` of those."""
    assigned: dict = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            assigned.setdefault(node.targets[0].id, []).append(node.value)
    consts: dict = {}
    for _ in range(3):   # names built from names
        for name, values in assigned.items():
            v = _const(values[0], consts) if len(values) == 1 else None
            if v is not None:
                consts[name] = v
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and _is_load(node.func):
            v = _const(node.args[0], consts)
            if v is not None and v.endswith(CKPT_SUFFIXES):
                out.append((v, node.lineno))
    return out


def _is_load(func: ast.AST) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "load" or name.startswith("load_checkpoint") or name == "load_state"


def _const(node: ast.AST, consts: dict) -> Optional[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
        a, b = _const(node.left, consts), _const(node.right, consts)
        if a is None or b is None:
            return None
        return os.path.join(a, b) if isinstance(node.op, ast.Div) else a + b
    if isinstance(node, ast.JoinedStr):
        parts = [_const(v.value if isinstance(v, ast.FormattedValue) else v, consts)
                 for v in node.values]
        return "".join(parts) if all(p is not None for p in parts) else None  # type: ignore
    if isinstance(node, ast.Call) and not node.keywords:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        args = [_const(a, consts) for a in node.args]
        if None in args or not args:
            return None
        if name == "join":
            return os.path.join(*args)  # type: ignore[arg-type]
        if name in ("Path", "PurePath", "str") and len(args) == 1:
            return args[0]
    return None


# ---- what the checkpoint and the model hold ---------------------------------------------
def read_info(path: Path) -> Optional[TorchSaveInfo]:
    """What the doctor's own reader (the pickle is never executed) learns of the file;
    None when it is not a readable torch.save file."""
    try:
        fs.note_read(path)  # an input: no report goes over the checkpoint
        return inspect_file(path)
    except (OSError, NotRegularFile):
        return None


def state_of(info: Optional[TorchSaveInfo]) -> Optional[tuple]:
    """(where in the file, {key: shape}) of the checkpoint's state_dict; None when the
    file holds no state_dict the doctor can read."""
    if info is None or not info.tensors:
        return None
    groups: dict = {}
    for kp, shape in info.tensors.items():
        if kp and isinstance(kp[-1], str):
            groups.setdefault(kp[:-1], {})[kp[-1]] = shape
    if () in groups:
        return "the top level", groups[()]
    for name in STATE_KEYS:
        if (name,) in groups:
            return f'checkpoint["{name}"]', groups[(name,)]
    if len(groups) == 1:
        (kp, keys), = groups.items()
        return "checkpoint" + "".join(f"[{k!r}]" for k in kp), keys
    return None


def model_state(job: Job) -> dict:
    """{key: shape} of the factory's model.state_dict(), from a child process."""
    env = dict(os.environ)
    paths = ([str(job.repo / "src")] if (job.repo / "src").is_dir() else []) + [str(job.repo)]
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    env["PYTHONDONTWRITEBYTECODE"] = "1"   # read-only: no __pycache__ in the user's repo
    res = run_cmd([sys.executable, "-c", CHILD, str(job.model)], timeout=_timeout(job) - 30,
                  env=env, cwd=str(job.repo))
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith(MARK)]
    if res.timed_out:
        raise RuntimeError(f"building the model {job.model} took longer than "
                           f"{_timeout(job) - 30:.0f}s (smoke.timeout_s)")
    if res.returncode != 0 or not lines:
        tail = (res.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the model factory {job.model} failed: {tail}")
    return json.loads(lines[-1][len(MARK):])


def lenient_loads(job: Job) -> list:
    """file:line of `load_state_dict(..., strict=<not True>)` and `strict_loading = False`:
    where missing and unexpected keys would pass."""
    out = []
    for path, tree in python_trees(job):
        for node in ast.walk(tree):
            strict = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "load_state_dict":
                strict = next((k.value for k in node.keywords if k.arg == "strict"),
                              node.args[1] if len(node.args) > 1 else None)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(getattr(t, "attr", getattr(t, "id", "")) == "strict_loading"
                       for t in targets):
                    strict = node.value
            if strict is not None and not (isinstance(strict, ast.Constant)
                                           and strict.value is True):
                out.append(f"{job.rel(path)}:{getattr(node, 'lineno', 0)}")
    return out


# ---- the comparison ---------------------------------------------------------------------
def _prefixes(keys: list, partial: bool) -> list:
    """Leading dotted prefixes (1-3 parts) shared by every key, or by any key if partial."""
    found: dict = {}
    for k in keys:
        parts = k.split(".")
        for n in range(1, min(4, len(parts))):
            p = ".".join(parts[:n]) + "."
            found[p] = found.get(p, 0) + 1
    return [p for p, n in found.items() if partial or n == len(keys)]


def align(ckpt: dict, model: dict, partial: bool) -> tuple:
    """(checkpoint prefix stripped, model prefix stripped, {model-name: shape}) that match
    the most names; no stripping unless it matches more."""
    best = ("", "", dict(ckpt))
    score = len(set(ckpt) & set(model))
    for p in [""] + _prefixes(list(ckpt), partial):
        for q in [""] + _prefixes(list(model), False):
            mapped = {q + k[len(p):]: s for k, s in ckpt.items() if k.startswith(p)}
            n = len(set(mapped) & set(model))
            if n > score:
                best, score = (p, q, mapped), n
    return best


def _reshaped(ckpt_shape: Any, model_shape: Any) -> bool:
    if ckpt_shape is None or model_shape is None or model_shape == "other":
        return False
    # torch's _load_from_state_dict: a 1-dim tensor loads into a 0-dim parameter
    if len(model_shape) == 0 and len(ckpt_shape) == 1:
        return False
    return tuple(ckpt_shape) != tuple(model_shape)


def compare(ckpt: dict, model: dict) -> tuple:
    """(missing, unexpected, reshaped) as load_state_dict(strict=True) reports them."""
    model = {k: v for k, v in model.items() if not k.endswith("_extra_state")}
    ckpt = {k: v for k, v in ckpt.items() if not k.endswith("_extra_state")}
    # BatchNorm fills in a missing num_batches_tracked when the checkpoint has no version-2
    # metadata for that module: always so when none of the module's keys were saved
    saved = {k.rsplit(".", 1)[0] for k in ckpt if "." in k}
    missing = [k for k in model if k not in ckpt and not (
        k.endswith("num_batches_tracked") and k.rsplit(".", 1)[0] not in saved)]
    unexpected = [k for k in ckpt if k not in model]
    reshaped = [{"key": k, "checkpoint": list(ckpt[k]), "model": list(model[k])}
                for k in model if k in ckpt and _reshaped(ckpt[k], model[k])]
    return missing, unexpected, reshaped


def _names(keys: list) -> str:
    more = f", … {len(keys) - SHOWN} more" if len(keys) > SHOWN else ""
    return ", ".join(keys[:SHOWN]) + more


def judge(job: Job, ref: ResumeRef, where: str, ckpt: dict, model: dict,
          lenient: list) -> Optional[Finding]:
    p, q, mapped = align(ckpt, model, partial=where == 'checkpoint["state_dict"]')
    missing, unexpected, reshaped = compare(mapped, model)
    if not (missing or unexpected or reshaped):
        return None
    parts = [f"{len(missing)} missing ({_names(missing)})" if missing else "",
             f"{len(unexpected)} unexpected ({_names(unexpected)})" if unexpected else "",
             f"{len(reshaped)} reshaped (" + _names([
                 f"{r['key']}: checkpoint {tuple(r['checkpoint'])} vs model {tuple(r['model'])}"
                 for r in reshaped]) + ")" if reshaped else ""]
    strip = f"; prefix `{p}` stripped from the checkpoint's keys" if p else ""
    strip += f"; prefix `{q}` added for the model's keys" if q else ""
    msg = (f"{ref.written} ({ref.origin}, read from {where}{strip}) does not fit the model "
           f"built by {job.model}: " + ", ".join(x for x in parts if x))
    severity, why = Severity.ERROR, ""
    if not set(mapped) & set(model):
        severity, why = Severity.WARNING, (" — no parameter name in common: the factory may "
                                           "build another module than the one saved")
    elif ref.read_by is None:
        severity, why = Severity.WARNING, (" — if the job loads this path: the doctor found "
                                           "no code that reads that key")
    elif not reshaped and lenient:
        severity, why = Severity.WARNING, (" — if it is loaded strictly: the repo loads with "
                                           f"strict=False at {', '.join(lenient[:3])}")
    return Finding(
        msg + why, location=ref.location, severity=severity,
        fix=("Resume from a checkpoint of the current model, or start fresh (move the file "
             "away); if the change was intended, convert the checkpoint or load the "
             "matching part with strict=False and check what it returns."),
        data={"checkpoint": ref.written, "path": job.rel(ref.path), "named_at": ref.origin,
              "read_by": ref.read_by, "state_dict": where, "prefix_stripped": p,
              "prefix_added": q, "missing": missing[:MAX_KEYS],
              "unexpected": unexpected[:MAX_KEYS], "reshaped": reshaped[:MAX_KEYS],
              "counts": {"missing": len(missing), "unexpected": len(unexpected),
                         "reshaped": len(reshaped)}, "model": job.model})


# ---- a pickle that torch.load refuses or that runs code ---------------------------------
# Globals that run a command or code when a pickle calls them (module prefixes, or exact
# names; `os.exec*` and `os.spawn*` by prefix). A global that only builds an object (an
# argparse.Namespace, an os.stat_result) or only looks one up (builtins.getattr, which a
# pickled bound method calls) runs nothing by itself: torch.load(weights_only=True) refuses
# it, and weights_only=False loads it.
RUNS_CODE_MODULES = frozenset(("subprocess", "_posixsubprocess", "runpy", "ctypes", "_ctypes",
                               "timeit", "pty"))
_OS = ("os", "posix", "nt")
RUNS_CODE = frozenset(
    [f"{m}.{n}" for m in _OS for n in ("system", "popen", "startfile", "posix_spawn",
                                       "posix_spawnp")]
    + [f"builtins.{n}" for n in ("eval", "exec", "compile", "__import__", "breakpoint")]
    + [f"{m}.{n}" for m in ("pickle", "_pickle") for n in ("loads", "load")]
    + ["importlib.import_module", "code.interact", "pdb.run", "pdb.runeval", "pdb.runcall",
       "marshal.loads"])


def runs_code(name: str) -> bool:
    """A global (as torchsave.global_name gives it) that runs a command or code when called."""
    module, _, func = name.rpartition(".")
    return (name in RUNS_CODE or module.split(".", 1)[0] in RUNS_CODE_MODULES
            or (module in _OS and func.startswith(("exec", "spawn"))))


def _torch_loads(job: Job, ref: ResumeRef) -> list:
    """The `torch.load(...)` calls (file:line, call) that read this checkpoint: the call at
    the read site of a --requeue auto-resume; for a key the code reads, every torch.load
    in the repo's code; none when the doctor did not see the code load it."""
    if ref.read_by is None or ref.read_by.startswith("Lightning"):
        return []
    at = None if ref.read_by.startswith("the code") else ref.read_by
    out = []
    for path, tree in python_trees(job):
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "load" and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id == "torch":
                where = f"{job.rel(path)}:{node.lineno}"
                if at is None or where == at:
                    out.append((where, node))
    return out


def weights_only(job: Job, ref: ResumeRef) -> tuple:
    """(True/False: how the job's torch.load of this file treats globals, or None when
    the doctor cannot tell; what says so)."""
    release = parse_version(job.torch_version_given) if job.static else job.torch_release
    values = set()
    wheres = []
    for where, call in _torch_loads(job, ref):
        kw = next((k.value for k in call.keywords if k.arg == "weights_only"), None)
        if kw is None:   # torch's default: True from 2.6
            values.add(None if release is None else tuple(release[:2]) >= (2, 6))
            wheres.append(f"{where}, torch {'.'.join(map(str, release[:2]))}'s default"
                          if release else where)
        else:
            values.add(kw.value if isinstance(kw, ast.Constant)
                       and isinstance(kw.value, bool) else None)
            wheres.append(where)
    if len(values) != 1 or None in values:
        return None, ""
    return values.pop(), ", ".join(wheres[:3])


def unsafe_pickle(job: Job, ref: ResumeRef, info: TorchSaveInfo) -> Optional[Finding]:
    """The checkpoint's pickle names globals outside torch.load's weights_only set. With
    weights_only=True (or unknown) an error when one of them runs code (the resume fails
    or runs it), else a warning; with weights_only=False a warning when one runs code (the
    load runs it, the resume goes on), else nothing."""
    globs = info.unsafe_globals
    code = [g for g in globs if runs_code(g)]
    wo, where = weights_only(job, ref)
    if wo is False and not code:
        return None
    shown = ", ".join((code or globs)[:SHOWN]) + (" …" if len(code or globs) > SHOWN else "")
    head = (f"{ref.written} ({ref.origin}) is a torch.save file whose pickle "
            f"{'calls' if code else 'names'} {shown}")
    refused = ("torch.load(weights_only=True), the default since torch 2.6, refuses it"
               if wo is None else f"the job loads it with weights_only=True ({where}), "
               "which refuses it")
    severity = Severity.ERROR if code else Severity.WARNING
    if code and wo is False:
        severity = Severity.WARNING
        msg = (f"{head}: the job loads it with weights_only=False ({where}), so loading it "
               "makes those calls, whoever wrote the file; the doctor did not execute it")
    elif code:
        msg = (f"{head}: {refused}, so the resume fails, and with weights_only=False loading "
               "it makes those calls; the doctor did not execute it")
    elif wo:
        msg = (f"{head}, outside torch's weights_only set: {refused}, so the resume fails; "
               "with weights_only=False it would load; it was not executed")
    else:
        msg = (f"{head}, outside torch's weights_only set: {refused}, so the resume fails "
               "unless the job loads it with weights_only=False (the doctor did not see how "
               "it loads it); it was not executed")
    if code:
        fix = ("Do not load this file: unpickling it makes those calls. Find out who wrote "
               "it, remove it, and resume from a checkpoint you trust (or start fresh).")
    else:
        fix = ("Save checkpoints as tensors and plain containers (a state_dict), or allow the "
               "globals you trust with torch.serialization.add_safe_globals; load with "
               "weights_only=False only a file whose writer you trust.")
    return Finding(msg, location=ref.location, fix=fix, severity=severity,
                   data={"checkpoint": ref.written, "path": job.rel(ref.path),
                         "named_at": ref.origin, "read_by": ref.read_by,
                         "unsafe_globals": globs[:MAX_KEYS], "runs_code": code[:MAX_KEYS],
                         "weights_only": wo, "format": info.format})
