"""NCCL/c10d settings that torch renamed, ignores, or that cannot take effect."""
from __future__ import annotations

import ast
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, check
from doctor.job.env import followed_env
from doctor.job.sources import python_trees
from doctor.job.launch import scripts_or_none
from doctor.job.versions import _version

# PR #114077 (torch 2.2): old names still read, with a deprecation warning.
RENAMED = {
    "NCCL_BLOCKING_WAIT": "TORCH_NCCL_BLOCKING_WAIT",
    "NCCL_ASYNC_ERROR_HANDLING": "TORCH_NCCL_ASYNC_ERROR_HANDLING",
    "NCCL_DESYNC_DEBUG": "TORCH_NCCL_DESYNC_DEBUG",
    "NCCL_ENABLE_TIMING": "TORCH_NCCL_ENABLE_TIMING",
    "ENABLE_NCCL_HEALTH_CHECK": "TORCH_ENABLE_NCCL_HEALTH_CHECK",
    "NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK": "TORCH_NCCL_USE_TENSOR_REGISTER_ALLOCATOR_HOOK",
}
# Read by no torch source (2.13 Python sources and libtorch_cpu strings); people
# set them believing they raise the collective timeout.
IGNORED = ("NCCL_TIMEOUT", "TORCH_DISTRIBUTED_DEFAULT_TIMEOUT", "GLOO_TIMEOUT")
PG_TIMEOUT_GLOBALS = ("_DEFAULT_PG_TIMEOUT", "default_pg_timeout", "default_pg_nccl_timeout")
DEFAULT_PG_TIMEOUT_S = {"nccl": 600.0, "other": 1800.0}
TIMEOUT_FIX = ("Pass the timeout to init_process_group itself: "
               "`dist.init_process_group(backend, timeout=datetime.timedelta(minutes=30))`.")


@check("nccl-env-deprecated", title="NCCL settings that torch renamed, ignores, or never applies",
       severity="warning", tags=("distributed", "nccl", "env"), needs=("repo", "sbatch"),
       timeout=30)
def nccl_env_deprecated(job) -> Iterator[Finding]:
    """Renamed NCCL_* variables, ignored timeout variables and ineffective timeout patches.

    Looks at the job's effective environment (login environment + the job
    script's exports + the scripts it runs) and at the repo's Python code for:
    the old names of the variables torch 2.2 renamed to TORCH_NCCL_*;
    variables no torch reads (NCCL_TIMEOUT, TORCH_DISTRIBUTED_DEFAULT_TIMEOUT,
    GLOO_TIMEOUT) unless the repo's own code reads them; assignments to
    `distributed_c10d._DEFAULT_PG_TIMEOUT`; and a DataLoader `timeout=` in the
    code that is not below the process-group timeout.

    ## Why it matters
    The old names still work for now but print a deprecation warning on every
    rank and will stop working. The ignored variables are worse: the job
    believes it raised the collective timeout and still dies at the default
    10 minutes (`Watchdog caught collective operation timeout ... Timeout(ms)=600000`).
    `_DEFAULT_PG_TIMEOUT` is copied into `default_pg_timeout` when torch is
    imported, so assigning it later changes nothing (measured on torch 2.13).
    A DataLoader timeout equal to the PG timeout lets a stuck worker stall
    every rank until the watchdog kills the job instead of raising a clear
    DataLoader error first.

    ## How to fix
    Export the TORCH_NCCL_* name instead of the old one; drop the ignored
    variables and pass `timeout=datetime.timedelta(minutes=N)` to
    `init_process_group`; keep the DataLoader timeout well below the PG timeout.
    """
    tv = _version(job.torch_version)
    renames = not tv or tv >= (2, 2)
    code = _scan_code(job)
    seen: set = set()
    for script in scripts_or_none(job):
        env, _ = followed_env(job, script)
        for name, v in sorted(env.items()):
            loc = Location(v.path, v.line) if v.path else None
            key = (name, v.where())
            if key in seen:
                continue
            seen.add(key)
            if renames and name in RENAMED:
                yield _renamed(name, v.value, v.where(), loc)
            elif name in IGNORED and name not in code["reads"]:
                yield _ignored(name, v.value, v.where(), loc)
    for name, rel, line in code["sets"]:
        loc = Location(rel, line)
        if renames and name in RENAMED:
            yield _renamed(name, None, f"{rel}:{line}", loc)
        elif name in IGNORED and name not in code["reads"]:
            yield _ignored(name, None, f"{rel}:{line}", loc)
    for attr, rel, line in code["patches"]:
        yield Finding(
            f"{rel}:{line} assigns {attr}, which torch copied at import time: the "
            "process-group timeout stays at its default (10 min NCCL, 30 min others)",
            location=Location(rel, line), fix=TIMEOUT_FIX, severity=Severity.ERROR,
            data={"variable": attr, "kind": "pg-timeout-patch"})
    yield from _dataloader_vs_pg(job, code)


def _renamed(name: str, value: Optional[str], where: str, loc) -> Finding:
    new = RENAMED[name]
    shown = value if value is not None else "1"
    return Finding(f"{name} is deprecated since torch 2.2 (set at {where}); use {new}",
                   location=loc, fix=f"Rename the variable to {new}.",
                   commands=(f"export {new}={shown}",),
                   data={"variable": name, "replacement": new, "kind": "renamed"})


def _ignored(name: str, value: Optional[str], where: str, loc) -> Finding:
    return Finding(f"{name} (set at {where}) is read by no torch code: the collective "
                   "timeout stays at its default (10 min for NCCL)",
                   location=loc, fix=f"Remove {name}. {TIMEOUT_FIX}",
                   commands=(f"unset {name}",),
                   data={"variable": name, "value": value, "kind": "ignored"})


# ---- the repo's code --------------------------------------------------------
def _scan_code(job) -> dict:
    """Env names set/read in code, PG-timeout patches, DataLoader and PG timeouts."""
    out: dict = {"sets": [], "reads": set(), "patches": [], "dl": [], "pg": []}
    for path, tree in python_trees(job):
        rel = job.rel(path)
        env = _ModuleEnv(tree, job)
        for node in ast.walk(tree):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Attribute) and t.attr in PG_TIMEOUT_GLOBALS:
                        out["patches"].append((t.attr, rel, node.lineno))
                    name = _environ_key(t)
                    if name:
                        out["sets"].append((name, rel, node.lineno))
            elif isinstance(node, ast.Call):
                fn = _call_name(node)
                first = _const_str(node.args[0]) if node.args else None
                if fn in ("setdefault", "putenv") and first and _is_environ(node.func):
                    out["sets"].append((first, rel, node.lineno))
                elif fn in ("get", "getenv") and first:
                    out["reads"].add(first)
                elif fn == "setattr" and len(node.args) > 1 and \
                        _const_str(node.args[1]) in PG_TIMEOUT_GLOBALS:
                    out["patches"].append((_const_str(node.args[1]), rel, node.lineno))
                kw = {k.arg: k.value for k in node.keywords if k.arg}
                if fn == "DataLoader" and "timeout" in kw:
                    val = env.seconds(kw["timeout"])
                    if val is not None:
                        out["dl"].append((val, rel, node.lineno))
                elif fn == "init_process_group":
                    backend = _const_str(kw.get("backend") or (node.args[0] if node.args
                                                              else None)) or "nccl"
                    val = env.timedelta(kw["timeout"]) if "timeout" in kw else \
                        DEFAULT_PG_TIMEOUT_S["nccl" if backend == "nccl" else "other"]
                    if val is not None:
                        out["pg"].append((val, rel, node.lineno, "timeout" in kw))
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                name = _environ_key(node)
                if name:
                    out["reads"].add(name)
    return out


def _dataloader_vs_pg(job, code: dict) -> Iterator[Finding]:
    if not code["dl"] or not code["pg"]:
        return
    pg_s, pg_rel, pg_line, explicit = min(code["pg"])
    for dl_s, rel, line in code["dl"]:
        if dl_s > 0 and dl_s >= pg_s:
            how = f"set at {pg_rel}:{pg_line}" if explicit else \
                f"the default for init_process_group at {pg_rel}:{pg_line}"
            yield Finding(
                f"DataLoader timeout {dl_s:g} s at {rel}:{line} is not below the "
                f"process-group timeout {pg_s:g} s ({how}): a stuck worker hangs every "
                "rank until the NCCL watchdog kills the job",
                location=Location(rel, line),
                fix=f"Lower the DataLoader timeout below {pg_s:g} s (e.g. {int(pg_s // 5)}), "
                    "or raise the process-group timeout passed to init_process_group.",
                severity=Severity.ERROR,
                data={"dataloader_timeout_s": dl_s, "pg_timeout_s": pg_s,
                      "kind": "dataloader-timeout"})


def _call_name(node: ast.Call) -> Optional[str]:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _is_environ(func: ast.AST) -> bool:
    if not isinstance(func, ast.Attribute):
        return False
    v = func.value
    return func.attr == "putenv" or (isinstance(v, ast.Attribute) and v.attr == "environ") or \
        (isinstance(v, ast.Name) and v.id == "environ")


def _environ_key(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Subscript):
        v = node.value
        if (isinstance(v, ast.Attribute) and v.attr == "environ") or \
                (isinstance(v, ast.Name) and v.id == "environ"):
            return _const_str(node.slice)
    return None


def _const_str(node: Optional[ast.AST]) -> Optional[str]:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


class _ModuleEnv:
    """Evaluates the few timeout expressions people write: literals, int(os.environ.get(
    "X", "600")) (the job env's X when it sets one), names assigned once, timedelta(...)."""

    def __init__(self, tree: ast.AST, job):
        self.assigned: dict = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ast.Name):
                name = node.targets[0].id
                self.assigned[name] = None if name in self.assigned else node.value
        self.env = job.job_env(job.scripts[0] if job.scripts else None).plain()

    def seconds(self, node: Optional[ast.AST], depth: int = 0) -> Optional[float]:
        if depth > 5 or node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str)) \
                and not isinstance(node.value, bool):
            try:
                return float(node.value)
            except ValueError:
                return None
        if isinstance(node, ast.Name):
            return self.seconds(self.assigned.get(node.id), depth + 1)
        if isinstance(node, ast.Call):
            fn = _call_name(node)
            if fn in ("int", "float") and len(node.args) == 1:
                return self.seconds(node.args[0], depth + 1)
            if fn in ("get", "getenv") and len(node.args) == 2:
                name = _const_str(node.args[0])
                if name and name in self.env:
                    try:
                        return float(self.env[name])
                    except ValueError:
                        return None
                return self.seconds(node.args[1], depth + 1)
            if fn == "timedelta":
                return self.timedelta(node, depth + 1)
        return None

    def timedelta(self, node: Optional[ast.AST], depth: int = 0) -> Optional[float]:
        if isinstance(node, ast.Name):
            return self.timedelta(self.assigned.get(node.id), depth + 1)
        if not isinstance(node, ast.Call) or _call_name(node) != "timedelta" or depth > 5:
            return None
        scale = {"days": 86400, "seconds": 1, "minutes": 60, "hours": 3600,
                 "milliseconds": 0.001}
        total = 0.0
        for i, arg in enumerate(node.args[:2]):
            v = self.seconds(arg, depth + 1)
            if v is None:
                return None
            total += v * (86400, 1)[i]
        for k in node.keywords:
            v = self.seconds(k.value, depth + 1)
            if v is None or k.arg not in scale:
                return None
            total += v * scale[k.arg]
        return total
