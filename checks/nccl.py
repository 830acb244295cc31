"""NCCL/c10d settings that torch renamed, ignores, or that cannot take effect."""
from __future__ import annotations

import ast
import re
import shlex
from typing import Callable, Iterator, Optional

from doctor import Finding, Location, Severity, check, edits, pyast
from doctor.job.code import CodeSettings, code_settings, repo_code
from doctor.job.context import Job
from doctor.model import FixOption, add, edit_steps
from doctor.job.env import followed_env
from doctor.job.launch import scripts_or_none

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
TIMEOUT_FIX = ("Pass the timeout to init_process_group itself: "
               "`dist.init_process_group(backend, timeout=datetime.timedelta(minutes=30))`.")


@check("nccl-env-deprecated", title="NCCL settings that torch renamed, ignores, or never applies",
       severity="warning", tags=("distributed", "nccl", "env"), needs=("repo", "sbatch"),
       timeout=30)
def nccl_env_deprecated(job: Job) -> Iterator[Finding]:
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
    `doctor fix` renames an old variable where the job script or the code sets it;
    with `--unsafe` it passes a patched `_DEFAULT_PG_TIMEOUT` to `init_process_group`
    as `timeout=`. It leaves the ignored variables to you: deleting them would only
    hide that the timeout you wanted is not set.
    """
    tv = job.torch_release or ()
    renames = not tv or tv >= (2, 2)
    code = _scan_code(job)
    whole = _whole_code(job)   # whether the code reads a variable: all of it, even scoped
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
                yield _renamed(name, v.value, v.where(), loc, _rename(job, loc, name, False))
            elif name in IGNORED and name not in whole().env_reads:
                yield _ignored(job, name, v.value, v.where(), loc)
    for name, rel, line in code.env_sets:
        loc = Location(rel, line)
        if renames and name in RENAMED:
            yield _renamed(name, None, f"{rel}:{line}", loc, _rename(job, loc, name, True))
        elif name in IGNORED and name not in whole().env_reads:
            yield _ignored(job, name, None, f"{rel}:{line}", loc)
    for patch in _ineffective_patches(code, whole):
        attr, rel, line = patch.attr, patch.file, patch.line
        yield Finding(
            f"{rel}:{line} assigns {attr}, which torch copied at import time: the "
            "process-group timeout stays at its default (10 min NCCL, 30 min others)",
            location=Location(rel, line), fix=TIMEOUT_FIX, severity=Severity.ERROR,
            data={"variable": attr, "kind": "pg-timeout-patch"},
            edits=_pass_timeout(job, code, patch))
    yield from _dataloader_vs_pg(job, code, whole)


def _renamed(name: str, value: Optional[str], where: str, loc, edit_: tuple) -> Finding:
    new = RENAMED[name]
    shown = value if value is not None else "1"
    return Finding(f"{name} is deprecated since torch 2.2 (set at {where}); use {new}",
                   location=loc, fix=f"Rename the variable to {new}.",
                   commands=(f"export {new}={shlex.quote(shown)}",),
                   data={"variable": name, "replacement": new, "kind": "renamed"},
                   edits=edit_, options=(FixOption(edit_steps(edit_) or (
                       add(None, f"export {new}={shlex.quote(shown)}",
                           where=f"in place of {name}"),)),))


def _rename(job: Job, loc: Optional[Location], name: str, python: bool) -> tuple:
    """The edit that renames the variable where it is set: `NAME=` in a shell script,
    the string literal "NAME" in Python. Only when the old name occurs nowhere else in
    the file (no later read or unset would lose it) and the new name nowhere at all."""
    if loc is None or not loc.line or not edits.owned(job, loc.path):
        return ()
    lines = edits.read_lines(job, loc.path)
    if not lines or loc.line > len(lines):
        return ()
    text = "".join(lines)
    new = RENAMED[name]
    word = r"(?<![A-Za-z0-9_]){}(?![A-Za-z0-9_])"
    if len(re.findall(word.format(name), text)) != 1 or re.search(word.format(new), text):
        return ()
    pattern = (r"(?<=([\"']))" + name + r"(?=\1)") if python else \
        (r"(?<![A-Za-z0-9_])" + name + r"(?==)")
    body = lines[loc.line - 1].rstrip("\r\n")
    fixed, count = re.subn(pattern, new, body)
    if count != 1:
        return ()
    edit = edits.replace_line(job, loc.path, loc.line, fixed, f"rename {name} to {new}")
    return (edit,) if edit else ()


def _ignored(job: Job, name: str, value: Optional[str], where: str, loc) -> Finding:
    return Finding(f"{name} (set at {where}) is read by no torch code: the collective "
                   "timeout stays at its default (10 min for NCCL)",
                   location=loc, fix=f"Remove {name}. {TIMEOUT_FIX}",
                   commands=(f"unset {name}",),
                   options=edits.unset_fix(job, loc, name),
                   data={"variable": name, "value": value, "kind": "ignored"})


def _pass_timeout(job: Job, code: CodeSettings, patch) -> tuple:
    """Unsafe: `timeout=<the patched attribute>` into every init_process_group call that
    takes the default, so the value the code patched is the one used. Only where the
    patch is a module-level assignment and every such call is a one-line call later in
    the same file (no **kwargs): then the attribute holds the patched value when the
    call runs."""
    inits = [p for p in code.pg_inits if p.timeout is None]
    if not inits or not edits.owned(job, patch.file) or \
            any(p.file != patch.file or p.line <= patch.line for p in inits):
        return ()
    lines = edits.read_lines(job, patch.file) or []
    source = "".join(lines)
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError):
        return ()
    assign = [st for st in tree.body if isinstance(st, ast.Assign) and st.lineno == patch.line
              and len(st.targets) == 1 and isinstance(st.targets[0], ast.Attribute)]
    target = ast.get_source_segment(source, assign[0].targets[0]) if assign else None
    if not target or "\n" in target:
        return ()
    out = []
    for init in inits:
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == init.line
                 and n.end_lineno == n.lineno and ast.unparse(n.func).endswith(
                     "init_process_group")]
        if len(calls) != 1 or any(k.arg in (None, "timeout") for k in calls[0].keywords) or \
                any(isinstance(a, ast.Starred) for a in calls[0].args):
            return ()
        call = calls[0]
        raw = lines[init.line - 1].rstrip("\r\n").encode("utf-8", "surrogateescape")
        end = (call.end_col_offset or 0) - 1
        if raw[end:end + 1] != b")":
            return ()
        sep = ", " if call.args or call.keywords else ""
        text = (raw[:end] + f"{sep}timeout={target}".encode() + raw[end:]).decode(
            "utf-8", "surrogateescape")
        edit = edits.replace_line(job, patch.file, init.line, text,
                                  f"pass timeout={target} to init_process_group", unsafe=True)
        if edit is None:
            return ()
        out.append(edit)
    return tuple(out)


# ---- the repo's code --------------------------------------------------------
def _scan_code(job: Job) -> CodeSettings:
    """The code's settings, env values read through the first job script's environment."""
    return code_settings(job, job.job_env(job.scripts[0] if job.scripts else None).plain())


def _whole_code(job: Job) -> Callable[[], CodeSettings]:
    """The whole repo's code settings, read on first call (a scoped run reads the rest of
    the repo only when a judgement needs it)."""
    env = job.job_env(job.scripts[0] if job.scripts else None).plain()
    return lambda: repo_code(job, env)


def _ineffective_patches(code: CodeSettings, whole: Callable[[], CodeSettings]) -> list:
    """Patches of the default timeout that matter: some init_process_group of the repo
    (or one the doctor cannot see, e.g. a framework's) takes the default; with `timeout=`
    on every call the default is never used."""
    if not code.pg_patches:
        return []
    inits = whole().pg_inits
    if inits and all(p.timeout is not None for p in inits):
        return []
    return list(code.pg_patches)


def _dataloader_vs_pg(job: Job, code: CodeSettings,
                     whole: Callable[[], CodeSettings]) -> Iterator[Finding]:
    dls = [(float(v.value), c.file, c.line, v.complete) for c in code.loaders
           if (v := c.kwargs.get("timeout")) is not None and v.known and v.kind != "guarded"
           and isinstance(v.value, (int, float)) and not isinstance(v.value, bool)]
    if not dls:
        return
    pgs = [(p.seconds, p.file, p.line, p.timeout is not None) for p in whole().pg_inits
           if p.seconds is not None]
    if not dls or not pgs:
        return
    pg_s, pg_rel, pg_line, explicit = min(pgs)
    for dl_s, rel, line, complete in dls:
        if dl_s > 0 and dl_s >= pg_s:
            how = f"set at {pg_rel}:{pg_line}" if explicit else \
                f"the default for init_process_group at {pg_rel}:{pg_line}"
            # precision rule: an env default, or a DataLoader in another file than the
            # init_process_group (another program?), is a link the doctor cannot show
            unseen = ([] if complete else ["the timeout is an environment default"]) + \
                ([] if rel == pg_rel else [f"{rel} and {pg_rel} run in one program"])
            yield Finding(
                f"DataLoader timeout {dl_s:g} s at {rel}:{line} is not below the "
                f"process-group timeout {pg_s:g} s ({how}): a stuck worker hangs every "
                "rank until the NCCL watchdog kills the job"
                + (f" — if {' and '.join(unseen)}" if unseen else ""),
                location=Location(rel, line),
                fix=f"Lower the DataLoader timeout below {pg_s:g} s (e.g. {int(pg_s // 5)}), "
                    "or raise the process-group timeout passed to init_process_group.",
                severity=Severity.WARNING if unseen else Severity.ERROR,
                data={"dataloader_timeout_s": dl_s, "pg_timeout_s": pg_s,
                      "kind": "dataloader-timeout"})
