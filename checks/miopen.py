"""MIOpen's user databases and kernel cache: where they live, and who shares them."""
from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, edits
from doctor.job.context import Job
from doctor.job.env import env_location
from doctor.job.paths import filesystem, known_dir, value_parts
from doctor.job.platform import platform_of
from doctor.model import FixOption, add, edit_steps, script_fix
from doctor.multinode.hostlist import compress_hostlist
from doctor.probes.mounts import MIOPEN_NETWORKED, filesystem_of
from doctor.registry import cross_node, node_fact

DIR_VARS = ("MIOPEN_USER_DB_PATH", "MIOPEN_CUSTOM_CACHE_DIR")
DEFAULTS = {"MIOPEN_USER_DB_PATH": "~/.config/miopen",
            "MIOPEN_CUSTOM_CACHE_DIR": "~/.cache/miopen/<version>"}
TRUTHY = {"1", "yes", "true", "on", "enable", "enabled"}


@check("miopen-cache-shared",
       title="MIOpen's cache or user database is shared between nodes or jobs",
       severity="error", tags=("rocm", "miopen", "filesystem"), needs=("node", "sbatch"),
       timeout=30)
def miopen_cache_shared(job: Job) -> Iterator[Finding]:
    """MIOpen's SQLite cache sits on a shared filesystem that several nodes or jobs write to.

    MIOpen keeps tuned kernels and find results in `MIOPEN_USER_DB_PATH`
    (default `~/.config/miopen`) and compiled kernels in `MIOPEN_CUSTOM_CACHE_DIR`
    (default `~/.cache/miopen/<version>`). The job environment is the login
    environment plus the job script's exports; the filesystem comes from the
    site profile, the mount table or statfs (for a job written for another
    cluster, whose `--partition` or `--clusters` this cluster lacks, only from
    the site profile or a recorded mount table: this machine's mounts are not
    that cluster's).

    Fails when a directory is on a shared filesystem (Lustre, GPFS, BeeGFS, NFS,
    ...) with no per-node part and the job spans more than one node. Warns when
    it has no per-job part (concurrent jobs), when it is a bare multi-user `/tmp`,
    when `MIOPEN_DISABLE_CACHE` is on, and when the ignored typo `MIOPEN_USER_DB`
    is set. A per-node part written in the batch script itself (`$SLURMD_NODENAME`,
    `$(hostname)`) does not count: the batch step expands it once, on the first
    node, and srun hands that same path to every node.

    ## Why it matters
    The kernel cache is a SQLite database in WAL mode and the text databases use
    lock files under the node's own /tmp: ranks on different nodes cannot see each
    other's locks. On a shared filesystem this ends in `database disk image is
    malformed`, `locking protocol`, `disk I/O error`, or "No suitable algorithm was
    found to execute the required convolution" (ROCm/MIOpen#1878, #2214). Turning the
    cache off instead makes every run recompile every kernel.

    ## How to fix
    Give every job its own directory on node-local storage, and create it on each
    node before the training step (after the `#SBATCH` lines):

        export MIOPEN_USER_DB_PATH="/tmp/$USER-miopen-$SLURM_JOB_ID"
        export MIOPEN_CUSTOM_CACHE_DIR="$MIOPEN_USER_DB_PATH"
        srun --nodes=$SLURM_NNODES --ntasks=$SLURM_NNODES mkdir -p "$MIOPEN_USER_DB_PATH"

    Remove `MIOPEN_DISABLE_CACHE`, and rename `MIOPEN_USER_DB` to `MIOPEN_USER_DB_PATH`.
    `doctor fix` writes this block in place of the job's own MIOpen exports and drops
    an ignored `MIOPEN_USER_DB`; removing `MIOPEN_DISABLE_CACHE` (or renaming
    `MIOPEN_USER_DB` when nothing else sets the path) needs `--unsafe`.
    """
    scripts = list(job.scripts) or [None]
    rocm = [(s, platform_of(job, s)) for s in scripts if platform_of(job, s).may_be_rocm]
    if not rocm:
        raise Skip("not a ROCm job: torch is not a HIP build, there is no /dev/kfd, no ROCm "
                   "container and no ROCm variable in the job's steps")
    for script, platform in rocm:
        for finding in _check_env(job, script):
            if platform.is_rocm:
                yield finding
            else:   # precision rule: only MIOPEN_* variables say this is a ROCm job
                yield replace(finding, severity=Severity.WARNING,
                              message=finding.message + " (if this is a ROCm job: only the "
                              "MIOPEN_* variables say so, nothing else in the job does)")


def _check_env(job: Job, script) -> Iterator[Finding]:
    env = job.job_env(script)
    nodes = job.nodes(script) or 1
    fix_cmds = _fix_commands(job, nodes)
    fix = ("Use a per-job directory on node-local storage and create it on every node "
           "before the training step" + (f" (insert after line {_last_directive(script)} of "
                                         f"{script.rel})" if script else "") + ".")
    typo = env.get("MIOPEN_USER_DB")
    if typo is not None:
        yield Finding(
            f"MIOPEN_USER_DB={typo.value} ({typo.where()}) is ignored by MIOpen: the "
            "variable is MIOPEN_USER_DB_PATH",
            location=_loc(job, script, typo), severity=Severity.WARNING,
            fix="Rename the variable to MIOPEN_USER_DB_PATH.",
            commands=(f'export MIOPEN_USER_DB_PATH="{typo.value}"', "unset MIOPEN_USER_DB"),
            data=_data("MIOPEN_USER_DB", typo.value, None, nodes),
            edits=_typo(job, typo, "MIOPEN_USER_DB_PATH" in env),
            options=script_fix(_typo(job, typo, "MIOPEN_USER_DB_PATH" in env),
                               f'export MIOPEN_USER_DB_PATH="{typo.value}"',
                               file=script.rel if script else None))
    off = env.get("MIOPEN_DISABLE_CACHE")
    if off is not None and off.value.strip().lower() in TRUTHY:
        yield Finding(
            f"MIOPEN_DISABLE_CACHE={off.value} (set {off.where()}) turns MIOpen's kernel cache "
            "off: every process recompiles every kernel, and a shared-cache problem is "
            "hidden rather than fixed",
            location=_loc(job, script, off), severity=Severity.WARNING,
            fix="Remove MIOPEN_DISABLE_CACHE and give the cache a per-job node-local "
                "directory instead.",
            commands=("unset MIOPEN_DISABLE_CACHE", *fix_cmds),
            options=(FixOption(edit_steps(_own_line(job, off, "")) + (
                add(script.rel if script else None, *fix_cmds,
                    where="after the #SBATCH lines"),)),),
            data=_data("MIOPEN_DISABLE_CACHE", off.value, None, nodes),
            edits=_own_line(job, off, "remove MIOPEN_DISABLE_CACHE (the cache comes back on)",
                            unsafe=True))
    block: Optional[tuple] = None
    for var in DIR_VARS:
        finding = _check_dir(job, script, env, var, nodes, fix, fix_cmds)
        if finding is not None:
            block = _block(job, script, env, fix_cmds) if block is None else block
            finding = replace(finding, edits=block, options=script_fix(
                block, *fix_cmds, file=script.rel if script else None))
        if finding is not None and var not in env and env.opaque:
            # precision rule: MIOpen's default only if nothing the doctor cannot read sets it
            finding = replace(finding, severity=Severity.WARNING, message=finding.message
                              + f" (unless {' or '.join(env.opaque)} sets {var})")
        if finding is not None:
            yield finding


def _check_dir(job: Job, script, env, var: str, nodes: int, fix: str,
               fix_cmds: tuple) -> Optional[Finding]:
    v = env.get(var)
    if job.in_job and var in job.login_env:
        v = job.job_env(None).get(var)  # in a job the real value is already in the environment
    if v is not None:
        value = v.value
        where = f"set at {v.where()}" if v.path else "set in the login environment"
        parts, batch_node = value_parts(job, env, v)
    else:
        value, where, parts, batch_node = DEFAULTS[var], "unset: MIOpen's default", {"user"}, False
    base = known_dir(job, value.replace("<version>", ""), env)
    if base is None:
        return None  # e.g. $SOMEDIR/miopen with $SOMEDIR unknown: nothing to judge
    fs = filesystem(job, base, script)
    if v is None and fs.get("fstype") in MIOPEN_NETWORKED and _miopen_falls_back(job):
        # MIOpen ≥ ROCm 5.7 moves its *defaults* off NFS/Lustre/Ceph to temp_directory_path()
        tmp = env.text("TMPDIR") or "/tmp"
        value, where = tmp, (f"unset: MIOpen's default {DEFAULTS[var]} is on {fs['fstype']}, "
                             f"so MIOpen falls back to {tmp} itself")
        parts = set()
        fs = filesystem(job, tmp, script)
    shared = fs.get("shared")
    per_job = bool(parts & {"job", "tmp"})
    fs_name = fs.get("fstype") or ("a shared filesystem" if shared else "node-local storage")
    fs_text = f"{fs_name} ({fs.get('mount') or fs['path']}, from {fs['source']})"
    loc = _loc(job, script, v)
    data = _data(var, value, fs, nodes)
    if shared and nodes > 1 and "node" not in parts:
        why = (" Its per-node part is expanded once by the batch script, on the first node; "
               "srun passes that same path to every node." if batch_node else "")
        return Finding(
            f"{var}={value} ({where}) is on {fs_text}, shared by the job's {nodes} nodes: "
            f"their ranks write one MIOpen SQLite database and cannot see each other's "
            f"locks.{why}", location=loc, fix=fix, commands=fix_cmds, data=data)
    if shared and not per_job:
        return Finding(
            f"{var}={value} ({where}) is on {fs_text} with no per-job part: concurrent jobs "
            "write the same MIOpen databases", location=loc, fix=fix, commands=fix_cmds,
            data=data, severity=Severity.WARNING)
    if shared is False and _bare_tmp(value, env) and not parts & {"user", "job", "tmp"}:
        return Finding(
            f"{var}={value} ({where}) is a multi-user /tmp with no user or job part: other "
            "users' jobs on the node collide with it (permission errors)", location=loc,
            fix=fix, commands=fix_cmds, data=data, severity=Severity.WARNING)
    return None


def _bare_tmp(value: str, env) -> bool:
    tmpdirs = {"/tmp", "/var/tmp", "/dev/shm", (env.text("TMPDIR") or "/tmp").rstrip("/")}
    return os.path.dirname(value.rstrip("/")) in tmpdirs or value.rstrip("/") in tmpdirs


def _miopen_falls_back(job: Job) -> bool:
    """MIOpen's network-FS fallback exists from ROCm 5.7 (MIOpen PR #2092)."""
    if job.static:
        return True
    hip = (job.fact("torch_build") or {}).get("hip") or ""
    nums = [int(x) for x in re.findall(r"\d+", hip)[:2]]
    return not nums or tuple(nums) >= (5, 7)


def _last_directive(script) -> int:
    return max((d.line for d in script.directives), default=1) if script else 1


def _loc(job: Job, script, v) -> Optional[Location]:
    if v is not None and v.path:
        return env_location(v)
    if script is not None:
        return Location(script.rel, _last_directive(script))
    return None


def _fix_commands(job: Job, nodes: int) -> tuple:
    local = next((p for p in (job.site.get("local_paths") or ())
                  if not str(p).startswith("/dev/shm")), "/tmp")
    mkdir = ('srun --nodes=$SLURM_NNODES --ntasks=$SLURM_NNODES mkdir -p "$MIOPEN_USER_DB_PATH"'
             if nodes > 1 else 'mkdir -p "$MIOPEN_USER_DB_PATH"')
    return (f'export MIOPEN_USER_DB_PATH="{str(local).rstrip("/")}/$USER-miopen-$SLURM_JOB_ID"',
            'export MIOPEN_CUSTOM_CACHE_DIR="$MIOPEN_USER_DB_PATH"', mkdir)


def _own_line(job: Job, v, title: str, unsafe: bool = False) -> tuple:
    """Delete the line that sets `v`, when it is just `[export] NAME=value` in a file
    the user owns."""
    if v is None or not v.path or not v.line or not edits.owned(job, v.path):
        return ()
    lines = edits.read_lines(job, v.path) or []
    if v.line > len(lines) or not re.fullmatch(r"\s*(export\s+)?{}=\S*\s*".format(v.name),
                                               lines[v.line - 1]):
        return ()
    edit = edits.delete_lines(job, v.path, v.line, v.line, title, unsafe=unsafe)
    return (edit,) if edit else ()


def _typo(job: Job, v, path_set: bool) -> tuple:
    """MIOPEN_USER_DB: its line deleted when MIOPEN_USER_DB_PATH is set (MIOpen ignores
    it: nothing changes), else renamed to MIOPEN_USER_DB_PATH (unsafe: MIOpen's
    database moves to that directory)."""
    drop = _own_line(job, v, "remove MIOPEN_USER_DB, which MIOpen ignores")
    if path_set or not drop:
        return drop
    renamed = drop[0].old.rstrip("\r\n").replace("MIOPEN_USER_DB=", "MIOPEN_USER_DB_PATH=", 1)
    edit = edits.replace_line(job, v.path, v.line, renamed,
                              "rename MIOPEN_USER_DB to MIOPEN_USER_DB_PATH", unsafe=True)
    return (edit,) if edit else ()


def _block(job: Job, script, env, fix_cmds: tuple) -> tuple:
    """The edits that give the job the per-job node-local block (`fix_cmds`): in place
    of the job script's own `export MIOPEN_USER_DB_PATH=...` line, else after its last
    #SBATCH line; every other line that sets a MIOpen directory for the step (the job
    script's, an inner script's) deleted, so nothing sets it again after the block. One
    tuple for every finding of the script (`doctor fix` applies it once). None where a
    file the user does not own sets a directory, a line does more than set it, or
    another line of that file sets it too."""
    if script is None or not edits.owned(job, script.rel) or \
            not edits.exports_reach_step(job, script):
        return ()
    lines = edits.read_lines(job, script.rel)
    if not lines:
        return ()
    at = edits.header_end(lines) + 1
    drop = {}   # (path, line) -> var
    for var in DIR_VARS:
        v = env.get(var)
        if v is None or not v.path:
            continue   # MIOpen's default, or the login environment: the block overrides it
        body = (edits.read_lines(job, v.path) or [""] * v.line)[v.line - 1] \
            if edits.owned(job, v.path) and v.line else ""
        if not re.fullmatch(r"\s*(export\s+)?{}=\S*\s*".format(var), body):
            return ()
        drop[(v.path, v.line)] = var
    for path in {p for p, _ in drop} | {script.rel}:
        text = edits.read_lines(job, path) or []
        for n, line in enumerate(text, 1):
            setters = [var for var in DIR_VARS if not line.lstrip().startswith("#")
                       and re.search(r"(?<![\w$]){}=".format(var), line)]
            if setters and (path, n) not in drop and (path != script.rel or n >= at):
                return ()   # another line sets it again: which one wins is not simple
    first = next(((p, n) for (p, n), var in drop.items()
                  if p == script.rel and var == DIR_VARS[0] and n >= at), None)
    out = []
    if first is None:
        out.append(edits.insert_after_header(job, script.rel, list(fix_cmds),
                                             "a per-job node-local MIOpen cache"))
    for (path, n) in sorted(drop):
        if (path, n) == first:
            brk = edits.line_break(lines, n - 1)
            out.append(edits.replace_line(job, path, n, brk.join(fix_cmds),
                                          "a per-job node-local MIOpen cache"))
        else:
            out.append(edits.delete_lines(job, path, n, n, f"remove {drop[(path, n)]}="
                                          " (the per-job block sets it)"))
    return tuple(out) if all(out) else ()


def _data(var: str, value: str, fs: Optional[dict], nodes: int) -> dict:
    return {"variable": var, "value": value, "nodes": nodes,
            "filesystem": None if fs is None else
            {k: fs.get(k) for k in ("fstype", "shared", "mount", "source")}}


# ---- the cross-node half: two nodes resolving the same cache directory ------
MIOPEN_DEFAULTS = (("MIOPEN_USER_DB_PATH", "~/.config/miopen"),
                   ("MIOPEN_CUSTOM_CACHE_DIR", "~/.cache/miopen"))


@node_fact("miopen_cache")
def miopen_cache_dirs(job: Job) -> dict:
    """This node's resolved MIOpen directories and their filesystems (in-job: the real env)."""
    env = job.login_env
    rocm = platform_of(job).is_rocm
    dirs = []
    if rocm:
        home = env.get("HOME") or os.path.expanduser("~")
        for var, default in MIOPEN_DEFAULTS:
            value = env.get(var) or default
            path = os.path.normpath(home + value[1:] if value.startswith("~") else value)
            if not os.path.isabs(path):
                continue
            fs = filesystem_of(job, path)
            dirs.append({"variable": var, "path": path, "fstype": fs.get("fstype"),
                         "shared": fs.get("shared")})
    return {"rocm": bool(rocm), "dirs": dirs}


@cross_node("miopen-cache-shared")
def miopen_cache_collisions(nodes: list) -> Iterator[Finding]:
    """Two or more nodes resolve the same MIOpen directory on a shared filesystem."""
    seen: dict = {}
    for n in nodes:
        info = (n.get("facts") or {}).get("miopen_cache") or {}
        if not info.get("rocm"):
            continue
        for d in info.get("dirs") or []:
            if d.get("shared"):
                seen.setdefault((d["variable"], d["path"]), (d, []))[1].append(n["slurm_node"])
    for (var, path), (d, names) in seen.items():
        if len(names) < 2:
            continue
        where = compress_hostlist(names)
        yield Finding(
            f"{where} all use {var}={path} on the shared filesystem {d.get('fstype') or '?'}: "
            "MIOpen's SQLite databases lock up or corrupt when nodes share them",
            fix="Give each node and job its own directory on node-local storage, created "
                "before use, in the job script before `srun`.",
            commands=(f'export {var}="/tmp/${{USER}}-miopen-${{SLURM_JOB_ID}}"  # node-local',
                      f'srun --ntasks-per-node=1 mkdir -p "${var}"'),
            data={"variable": var, "value": path, "filesystem": d.get("fstype"),
                  "nodes": names, "node": where})
