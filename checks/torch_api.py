"""Calls into torch with keywords, names or device types the target torch does not have."""
from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field, replace
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, edits
from doctor.job.pyread import children, trees_naming
from doctor.job.sources import dotted, nodes, raw_texts
from doctor.job.context import Job
from doctor.job.versions import parse_version
from doctor.proc import run_cmd
from doctor.pychild import child_env, python_argv

# ---- the shipped table -----------------------------------------------------------------
# Read from the Python sources of the PyPI wheels 1.12.1, 1.13.1, 2.0.1, 2.1.2, 2.2.2,
# 2.3.1, 2.4.1, 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0, 2.11.0, 2.12.1, 2.14.1 and the
# installed 2.13 (tests/test_torch_api_mismatch.py checks it against inspect.signature).
# Ranges are inclusive (major, minor) pairs; outside them the doctor knows nothing.
_DL = ("dataset", "batch_size", "shuffle", "sampler", "batch_sampler", "num_workers",
       "collate_fn", "pin_memory", "drop_last", "timeout", "worker_init_fn",
       "multiprocessing_context", "generator", "prefetch_factor", "persistent_workers",
       "pin_memory_device")
_PG = ("backend", "init_method", "timeout", "world_size", "rank", "store", "group_name",
       "pg_options")
_FS = ("module", "mesh", "reshard_after_forward")
_LOAD = ("f", "map_location", "pickle_module")
# function → [(first, last, accepted keywords, takes **kwargs)]
SIGNATURES: dict = {
    "fully_shard": [
        ((2, 3), (2, 3), _FS + ("mp_policy",), False),
        ((2, 4), (2, 5), _FS + ("mp_policy", "offload_policy"), False),
        ((2, 6), (2, 6), _FS + ("shard_placement_fn", "mp_policy", "offload_policy"), False),
        ((2, 7), (2, 11), _FS + ("shard_placement_fn", "mp_policy", "offload_policy",
                                 "ignored_params"), False),
        ((2, 12), (2, 14), _FS + ("shard_placement_fn", "mp_policy", "offload_policy",
                                  "ignored_params", "dp_mesh_dims"), False)],
    "autocast": [((1, 12), (2, 14), ("device_type", "dtype", "enabled", "cache_enabled"),
                  False)],
    "DataLoader": [((1, 12), (2, 5), _DL, False), ((2, 6), (2, 14), _DL + ("in_order",), False)],
    "init_process_group": [
        ((1, 12), (2, 2), _PG, False), ((2, 3), (2, 9), _PG + ("device_id",), False),
        ((2, 10), (2, 13), _PG + ("device_id", "_ranks"), False),
        ((2, 14), (2, 14), _PG + ("device_id", "_ranks", "enable_reconfigure"), False)],
    # **pickle_load_args go to pickle's Unpickler, which rejects torch's own keywords.
    "load": [((1, 12), (1, 12), _LOAD, True), ((1, 13), (2, 0), _LOAD + ("weights_only",), True),
             ((2, 1), (2, 14), _LOAD + ("weights_only", "mmap"), True)],
}
LOAD_OWN = ("weights_only", "mmap")
# autocast device types: until 2.0 an if/elif list (anything else raises RuntimeError);
# from 2.1 a renamable privateuse1 backend, from 2.4 torch._C._is_autocast_available:
# there only the values listed as rejected are known to raise.
DEVICE_TYPES = [((1, 12), (1, 13), ("cuda", "cpu", "xpu"), None),
                ((2, 0), (2, 0), ("cuda", "cpu", "xpu", "hpu"), None),
                ((2, 1), (2, 14), None, ("hip",))]
# Public names and the first release that has them (ImportError / AttributeError before).
NAMES = {"torch.distributed._composable.fsdp.fully_shard": (2, 3),
         "torch.distributed._composable.fsdp": (2, 3),
         "torch.distributed.fsdp.fully_shard": (2, 6)}
QUALNAMES = {
    "torch.distributed.fsdp.fully_shard": "fully_shard",
    "torch.distributed._composable.fsdp.fully_shard": "fully_shard",
    "torch.autocast": "autocast", "torch.amp.autocast": "autocast",
    "torch.amp.autocast_mode.autocast": "autocast",
    "torch.utils.data.DataLoader": "DataLoader",
    "torch.utils.data.dataloader.DataLoader": "DataLoader",
    "torch.load": "load", "torch.serialization.load": "load",
    "torch.distributed.init_process_group": "init_process_group",
    "torch.distributed.distributed_c10d.init_process_group": "init_process_group",
}
CANONICAL = {"fully_shard": "torch.distributed.fsdp.fully_shard", "autocast": "torch.autocast",
             "DataLoader": "torch.utils.data.DataLoader", "load": "torch.load",
             "init_process_group": "torch.distributed.init_process_group"}
FSDP1_ONLY = ("auto_wrap_policy", "sharding_strategy", "cpu_offload", "mixed_precision",
              "device_id", "sync_module_states", "use_orig_params", "param_init_fn",
              "forward_prefetch", "backward_prefetch", "limit_all_gathers", "ignored_modules",
              "process_group")
TABLE_SPAN = "1.12–2.14"
INSTALLED_TIMEOUT_S = 60.0


def _in(rng: tuple, v: tuple) -> bool:
    return rng[0] <= v <= rng[1]


def table_api(release: tuple) -> Optional[dict]:
    """The API the shipped table knows for a (major, minor) release; None outside it."""
    funcs = {k: {"keywords": list(kw), "var_keyword": var}
             for k, rows in SIGNATURES.items() for first, last, kw, var in rows
             if _in((first, last), release)}
    if not funcs:
        return None
    dev = next(({"valid": v, "rejected": r} for a, b, v, r in DEVICE_TYPES
                if _in((a, b), release)), None)
    return {"functions": funcs, "device_types": dev,
            "names": {n: release >= since for n, since in NAMES.items()}}


# ---- the installed torch, read in a child process ---------------------------------------
CHILD = r"""
import importlib, inspect, json, sys, warnings
warnings.simplefilter("ignore")
want = json.loads(sys.argv[1])
out = {"functions": {}, "names": {}, "device_types": {}}
import torch
out["version"] = torch.__version__
def find(qual):
    mod, _, attr = qual.rpartition(".")
    try:
        return getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError):
        try:
            return importlib.import_module(qual)
        except ImportError:
            return None
for key, qual in want["functions"].items():
    f = find(qual)
    if f is None:
        continue
    ps = inspect.signature(f).parameters.values()
    out["functions"][key] = {
        "keywords": [p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)],
        "var_keyword": any(p.kind == p.VAR_KEYWORD for p in ps)}
for qual in want["names"]:
    out["names"][qual] = find(qual) is not None
for dev in want["device_types"]:
    try:
        torch.autocast(dev)
        out["device_types"][dev] = None
    except Exception as exc:
        out["device_types"][dev] = "%s: %s" % (type(exc).__name__, str(exc)[:200])
print("\n@@API@@" + json.dumps(out))
"""


def installed_api(job: Job, device_types: list) -> dict:
    """The installed torch's API for the covered functions (inspect.signature), its names,
    and which of `device_types` torch.autocast rejects; in an isolated child process
    (doctor/pychild.py) with a deadline. {"error": why} when torch cannot be imported
    in time."""
    want = {"functions": CANONICAL, "names": list(NAMES), "device_types": device_types}
    res = run_cmd(python_argv(CHILD, job.repo) + [json.dumps(want)],
                  timeout=INSTALLED_TIMEOUT_S, env=child_env(job.login_env), cwd="/")
    marker = "@@API@@"
    if marker in res.stdout:
        return json.loads(res.stdout.rsplit(marker, 1)[1])
    why = (f"timed out after {INSTALLED_TIMEOUT_S:g}s" if res.timed_out
           else f"exit code {res.returncode}: {res.stderr.strip()[-300:]}")
    return {"error": why}


# ---- the repo's calls ---------------------------------------------------------------------
@dataclass
class Use:
    """A call of a covered function, or an import/attribute of a covered torch name."""
    key: str                  # covered function, or "name"
    qual: str
    file: str
    line: int
    text: str
    keywords: dict = field(default_factory=dict)   # keyword → line
    device: Optional[tuple] = None                 # (literal device_type, line)
    has_pickle_module: bool = False
    device_from: str = ""     # how the device type was followed: `AMP_DEVICE = "hip"`
    device_when: str = ""     # the condition that picks it, when one branch of an if does


_SAFE_HANDLERS = {"ImportError", "ModuleNotFoundError", "TypeError", "AttributeError",
                  "RuntimeError", "ValueError", "Exception", "BaseException"}


def _dotted(node: ast.AST) -> Optional[str]:
    return dotted(node) or None


_BINDERS = frozenset({ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef,
                      ast.ClassDef, ast.arg})


def _bindings(tree: ast.AST, steps: Optional[list] = None) -> dict:
    """name → torch qualified name it is imported as; None when the module binds the name
    to anything else too (the doctor does not guess which one a call sees). `steps`
    collects the module's imports and calls on the way (the nodes _may_use reads)."""
    torch_names: dict = {}
    other: set = set()
    keep = steps.append if steps is not None else lambda _node: None
    for node in nodes(tree):
        kind = type(node)   # (ast.parse makes no subclass of a node type)
        if kind is ast.Name:   # the most common node first: one test for most
            if type(node.ctx) is ast.Store:
                other.add(node.id)   # type: ignore[attr-defined]
            continue
        if kind is ast.Call:
            keep(node)
            continue
        if kind not in _BINDERS:
            continue
        if kind in (ast.Import, ast.ImportFrom):
            keep(node)
        if isinstance(node, ast.Import):
            for a in node.names:
                name = a.asname or a.name.split(".")[0]
                qual = a.name if a.asname else name
                (torch_names.setdefault(name, set()).add(qual) if qual.split(".")[0] == "torch"
                 else other.add(name))
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                name = a.asname or a.name
                if node.level == 0 and (node.module or "").split(".")[0] == "torch":
                    torch_names.setdefault(name, set()).add(f"{node.module}.{a.name}")
                else:
                    other.add(name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            other.add(node.name)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
    out: dict = {}
    for name, quals in torch_names.items():
        keys = {QUALNAMES.get(q, q) for q in quals}
        out[name] = sorted(quals)[0] if name not in other and len(keys) == 1 else None
    return out


def _guarded_part(node: ast.AST) -> list:
    """The statements a wrong call in them cannot break: a try's body whose handler catches
    what the call raises, both branches of an if on the torch version or an attribute."""
    if isinstance(node, ast.Try):
        for h in node.handlers:
            types = h.type.elts if isinstance(h.type, ast.Tuple) else [h.type]
            names = {_dotted(t) for t in types if t is not None} if h.type else {"Exception"}
            if names & _SAFE_HANDLERS:
                return node.body
    if isinstance(node, ast.If):
        test = ast.unparse(node.test).lower()
        if any(w in test for w in ("version", "hasattr", "getattr", "torch_2", "is_torch")):
            return node.body + node.orelse
    return []


# The last part of every covered name. A use names it in the module's text: the call
# writes it (`torch.load(`, `amp.autocast(`), or the import that bound the called name
# does (`from torch import load as tl`), so a module without one holds no use (an
# identifier set of the job's code instead of a parse and walks of every module that names torch).
USE_WORDS = tuple(sorted({q.rsplit(".", 1)[-1].encode() for q in [*QUALNAMES, *NAMES]}))


_USE_WORDS = frozenset(USE_WORDS)


def _may_hold_use(words: set) -> bool:
    """Whether a module with these identifiers can hold a use: it resolves only torch
    imports (`torch` is a word of the import), and only the covered names (USE_WORDS).
    tests/test_speed_parse.py proves it keeps every use."""
    return b"torch" in words and not _USE_WORDS.isdisjoint(words)


def repo_uses(job: Job) -> list:
    """Every unguarded use of a covered torch function or name in the repo's Python."""
    uses: list = []
    for path, tree in job.memo("torch_api_trees", lambda: trees_naming(
            job, raw_texts(job), _may_hold_use)):
        steps: list = []
        binds = _bindings(tree, steps)
        if any(_may_use(n, binds) for n in steps):   # else the walk finds nothing
            _walk(tree, False, binds, job.rel(path), uses, _module_constants(tree))
    return uses


def _may_use(node: ast.AST, binds: dict) -> bool:
    """_use records a use of this node when it is not guarded (the same tests)."""
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and bool(node.module) and \
            any(f"{node.module}.{a.name}" in NAMES for a in node.names)
    if isinstance(node, ast.Import):
        return any(a.name in NAMES for a in node.names)
    return isinstance(node, ast.Call) and \
        QUALNAMES.get(_resolve(node.func, binds) or "") is not None


def _module_constants(tree: ast.AST) -> dict:
    """name → (value expr, line) for names the module binds exactly once, at its top
    level, to a string or a conditional expression of strings (`AMP_DEVICE = "hip"`)."""
    stores: dict = {}
    for n in nodes(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stores[n.name] = stores.get(n.name, 0) + 1
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                name = (a.asname or a.name).split(".")[0]
                stores[name] = stores.get(name, 0) + 1
        elif isinstance(n, ast.arg):
            stores[n.arg] = stores.get(n.arg, 0) + 1
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            for name in n.names:
                stores[name] = stores.get(name, 0) + 2   # rebound elsewhere
    out = {}
    for st in getattr(tree, "body", []):
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
                isinstance(st.targets[0], ast.Name) and stores.get(st.targets[0].id) == 1:
            out[st.targets[0].id] = (st.value, st.lineno)
    return out


def _device(dev: Optional[ast.AST], consts: dict) -> list:
    """[(device type, line, how it was followed, the condition that picks it)] for a
    literal, a module constant, or a conditional expression of them; [] otherwise."""
    how = ""
    if isinstance(dev, ast.Name) and dev.id in consts:
        expr, line = consts[dev.id]
        how = f"{dev.id} = {ast.unparse(expr)[:80]} (line {line})"
        dev = expr
    if isinstance(dev, ast.Constant) and isinstance(dev.value, str):
        return [(dev.value, dev.lineno, how, "")]
    if isinstance(dev, ast.IfExp):
        test = ast.unparse(dev.test)[:80]
        return [(v, line, how, f"{test} is {truth}")
                for branch, truth in ((dev.body, "true"), (dev.orelse, "false"))
                for v, line, _h, _w in _device(branch, {})]
    return []


_USE_KINDS = (ast.ImportFrom, ast.Import, ast.Call)   # what _use reads


def _walk(node: ast.AST, guarded: bool, binds: dict, rel: str, uses: list,
          consts: Optional[dict] = None) -> None:
    """_use of every node under `node` that no guard covers, in the order of a recursive
    walk (each node, then the nodes under it), with a stack instead of recursion."""
    consts = consts or {}
    todo: list = []

    def below(node: ast.AST, guarded: bool) -> None:
        safe = {id(n) for n in _guarded_part(node)} if isinstance(node, (ast.Try, ast.If)) \
            else ()
        todo.extend(reversed([(c, guarded or id(c) in safe) for c in children(node)]))

    below(node, guarded)
    while todo:
        child, g = todo.pop()
        if not g and isinstance(child, _USE_KINDS):
            _use(child, binds, rel, uses, consts)
        below(child, g)


def _resolve(expr: ast.AST, binds: dict) -> Optional[str]:
    dotted = _dotted(expr)
    if not dotted:
        return None
    head, _, rest = dotted.partition(".")
    base = binds.get(head)
    return (f"{base}.{rest}" if rest else base) if base else None


def _use(node: ast.AST, binds: dict, rel: str, uses: list, consts: dict) -> None:
    text = lambda n: ast.unparse(n)[:120]  # noqa: E731
    if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        for a in node.names:
            qual = f"{node.module}.{a.name}"
            if qual in NAMES:
                uses.append(Use("name", qual, rel, node.lineno, text(node)))
    elif isinstance(node, ast.Import):
        uses += [Use("name", a.name, rel, node.lineno, text(node)) for a in node.names
                 if a.name in NAMES]
    elif isinstance(node, ast.Call):
        resolved = _resolve(node.func, binds)
        key = QUALNAMES.get(resolved or "")
        if resolved is None or key is None:
            return
        qual = resolved
        u = Use(key, qual, rel, node.lineno, text(node),
                keywords={k.arg: k.value.lineno for k in node.keywords if k.arg},
                has_pickle_module=any(k.arg == "pickle_module" for k in node.keywords)
                or len(node.args) >= 3)
        dev = node.args[0] if node.args else next(
            (k.value for k in node.keywords if k.arg == "device_type"), None)
        devices = _device(dev, consts) if key == "autocast" else []
        if devices:
            u.device = devices[0][:2]
            u.device_from, u.device_when = devices[0][2:]
        uses.append(u)
        for d in devices[1:]:   # the other branch of a conditional device type
            uses.append(replace(u, keywords={}, device=d[:2], device_from=d[2],
                                device_when=d[3]))
        if isinstance(node.func, ast.Attribute) and qual in NAMES:
            uses.append(Use("name", qual, rel, node.lineno, text(node)))


# ---- the check --------------------------------------------------------------------------
@check("torch-api-mismatch",
       title="Calls into torch with keywords, names or device types the target torch lacks",
       severity="error", tags=("torch", "api", "fsdp", "amp", "dataloader"), needs=("repo",),
       timeout=90)
def torch_api_mismatch(job: Job) -> Iterator[Finding]:
    """The code calls torch with a keyword, name or autocast device type its torch rejects.

    Reads the repo's Python (never imports it) for calls of FSDP2's `fully_shard`,
    `torch.autocast` / `torch.amp.autocast`, `DataLoader`, `torch.load` and
    `init_process_group`, and for imports of `fully_shard`, resolved only through the
    imports the doctor can see (`from torch.distributed.fsdp import fully_shard`,
    `import torch.distributed._composable.fsdp as F`, `torch.autocast`, ...). An
    autocast device type is read as a literal, a module constant bound once
    (`AMP_DEVICE = "hip"`), or a conditional expression of them
    (`"hip" if torch.version.hip else "cuda"`: a warning naming the condition). A name
    bound to something else too, a `**kwargs` spread, a call under
    `try/except TypeError` or under `if <torch version test>` is left alone. The
    target torch is `--torch-version` (or the `torch_version` setting), else the
    installed one. When the target is the installed torch and the run may import it
    (not `--static`), the signatures come from it, read with `inspect.signature` in
    a child process; otherwise from a table shipped with the doctor (torch 1.12–2.14,
    read from the released wheels' sources). Each finding says which torch and which
    source.

    ## Why it matters
    The call raises at run time, after the queue wait, the data loading and the
    model build, on every rank: `TypeError: fully_shard() got an unexpected keyword
    argument 'auto_wrap_policy'` (FSDP2 has no wrap policies: that is FSDP1's
    `FullyShardedDataParallel`), `RuntimeError: User specified an unsupported autocast
    device_type 'hip'` (ROCm builds of torch use `"cuda"`), a `DataLoader(in_order=...)`
    on torch < 2.6, `init_process_group(device_id=...)` on torch < 2.3,
    `torch.load(weights_only=...)` on torch < 1.13, or
    `from torch.distributed.fsdp import fully_shard` on torch < 2.6 (ImportError).

    ## How to fix
    For FSDP2, call `fully_shard` on each block and then on the root module
    instead of passing a wrap policy. Use `torch.autocast("cuda", ...)` on ROCm.
    Otherwise drop the keyword, or run a torch that has it: the finding names the
    first release that does. `doctor fix --unsafe` changes an autocast `"hip"`
    to `"cuda"` on its line; the other findings need a person.
    """
    uses = repo_uses(job)
    if not uses:
        raise Skip("the code calls none of the covered torch APIs (fully_shard, autocast, "
                   "DataLoader, torch.load, init_process_group) in a form the doctor resolves")
    version = job.torch_version
    release = parse_version(version)
    if release is None:
        raise Skip("the target torch version is unknown: no torch is installed here; pass "
                   "--torch-version (or set torch_version)")
    api = _api_for(job, release, uses)
    if api is None:
        raise Skip(f"torch {version} is outside the doctor's table ({TABLE_SPAN}) and is not "
                   "the installed torch it could read; run the doctor where that torch is "
                   "installed")
    for u in uses:
        yield from _judge(job, u, api, str(version))


def _api_for(job: Job, release: tuple, uses: list) -> Optional[dict]:
    installed = job.fact("torch_installed")   # package metadata: no import
    if not job.static and installed and parse_version(installed) == release:
        api = installed_api(job, sorted({u.device[0] for u in uses if u.device}))
        if "error" not in api:
            return dict(api, source="installed",
                        where=f"signature read from the installed torch {api['version']} "
                              "with inspect.signature")
        job.record_fact("torch_api_installed_unread", api["error"])
    table = table_api(release)
    if table is None:
        return None
    return dict(table, source="table",
                where="signature from the doctor's table for torch %d.%d" % release)


def _since(key: str, keyword: str) -> Optional[str]:
    rows = [first for first, _last, kw, _v in SIGNATURES[key] if keyword in kw]
    return "%d.%d" % min(rows) if rows else None


def _device_rejected(api: dict, dev: str) -> Optional[str]:
    """Why torch.autocast(dev) raises on the target torch; None when it does not or unknown."""
    if api["source"] == "installed":
        return api["device_types"].get(dev)
    table = api.get("device_types")
    if table is None:
        return None
    if table["valid"] is not None and dev not in table["valid"]:
        return "RuntimeError: User specified autocast device_type must be 'cuda' or 'cpu'"
    if table["rejected"] and dev in table["rejected"]:
        return f"RuntimeError: User specified an unsupported autocast device_type '{dev}'"
    return None


def _judge(job: Job, u: Use, api: dict, version: str) -> Iterator[Finding]:
    base = {"torch_version": version, "signature_from": api["source"], "call": u.qual}
    where = api["where"]
    if u.key == "name":
        if api["names"].get(u.qual) is False:
            since = "%d.%d" % NAMES[u.qual]
            yield Finding(
                f"{u.file}:{u.line} {u.text}: torch {version} has no {u.qual} (it appeared in "
                f"torch {since}): ImportError/AttributeError when this line runs ({where})",
                location=Location(u.file, u.line),
                fix=f"Run torch ≥ {since}, or import it from where torch {version} has it "
                    "(FSDP2: torch.distributed._composable.fsdp on 2.3–2.5).",
                data=dict(base, rule="name", name=u.qual, since=since))
        return
    sig = api["functions"].get(u.key)
    for kw, line in u.keywords.items() if sig else ():
        if kw in sig["keywords"] or (sig["var_keyword"] and not (
                u.key == "load" and kw in LOAD_OWN and not u.has_pickle_module)):
            continue
        yield _keyword_finding(u, kw, line, sig, version, where, base)
    if u.device and (why := _device_rejected(api, u.device[0])):
        dev, line = u.device
        how = (f" — {dev!r} through {u.device_from}" if u.device_from else "")
        when = (f" — when {u.device_when}, which the doctor cannot decide before the job "
                "runs" if u.device_when else "")
        yield Finding(
            f"{u.file}:{u.line} {u.text}: torch {version} rejects autocast device_type "
            f"{dev!r} ({why})" + (": ROCm builds of torch use 'cuda'" if dev == "hip" else "")
            + f" ({where}){how}{when}",
            location=Location(u.file, line),
            severity=Severity.WARNING if u.device_when else None,
            fix='Use torch.autocast("cuda", ...): on ROCm the HIP device is torch\'s "cuda".'
                if dev == "hip" else "Use a device type this torch supports (cuda, cpu, ...).",
            data=dict(base, rule="device-type", function=CANONICAL["autocast"],
                      device_type=dev, error=why,
                      **({"through": u.device_from} if u.device_from else {}),
                      **({"unseen": [f"when {u.device_when}"]} if u.device_when else {})),
            edits=_hip_to_cuda(job, u.file, line) if dev == "hip" else ())


def _hip_to_cuda(job: Job, path: str, line: int) -> tuple:
    """autocast's "hip" becomes "cuda" (ROCm's device type in torch), where the line holds
    the literal once; unsafe, as every code edit."""
    lines = edits.read_lines(job, path) or []
    text = lines[line - 1].rstrip("\r\n") if 0 < line <= len(lines) else ""
    new, n = re.subn(r"""(["'])hip\1""", r"\1cuda\1", text)
    if n != 1:
        return ()
    edit = edits.replace_line(job, path, line, new, 'autocast device type "hip" to "cuda"',
                              unsafe=True)
    return (edit,) if edit else ()


def _keyword_finding(u: Use, kw: str, line: int, sig: dict, version: str, where: str,
                     base: dict) -> Finding:
    since = _since(u.key, kw)
    fsdp1 = u.key == "fully_shard" and kw in FSDP1_ONLY
    err = ("TypeError from pickle's Unpickler, which receives torch.load's unknown keywords"
           if u.key == "load" else "TypeError: unexpected keyword argument")
    msg = (f"{u.file}:{line} {u.text}: torch {version}'s {u.qual} has no keyword "
           f"{kw!r} ({err})")
    if fsdp1:
        msg += f"; {kw} belongs to FSDP1's FullyShardedDataParallel, FSDP2 takes no wrap policy"
    elif since:
        msg += f"; it appeared in torch {since}"
    if fsdp1:
        fix = ("FSDP2 wraps bottom-up: call fully_shard(block, ...) on each block, then "
               "fully_shard(model, ...) on the root; pass mesh / mp_policy / offload_policy "
               "instead of FSDP1's options.")
    elif since:
        fix = f"Remove {kw}= or run torch ≥ {since}."
    else:
        fix = f"Remove {kw}=; torch {version} accepts: {', '.join(sig['keywords'])}."
    return Finding(msg + f" ({where})", location=Location(u.file, line), fix=fix,
                   data=dict(base, rule="keyword", function=CANONICAL[u.key], keyword=kw,
                             since=since, accepted=list(sig["keywords"])))
