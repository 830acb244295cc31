"""Caches the DataLoader shares through memory: CUDA tensors in them, and /dev/shm's size."""
from __future__ import annotations

import os
import re
import shlex
import stat
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.cluster import jobs_elsewhere
from doctor.job.configs import LineDict, is_unresolved, keypath
from doctor.job.context import Job
from doctor.job.hydra import resolve_oc_env
from doctor.job.loaders import loader_workers, loaders_per_job
from doctor.scanners.cachescan import ScanResult, scan, tty_progress

CUDA_CHECK = "cuda-tensor-in-shared-cache"
SHM_CHECK = "shm-too-small"
CACHE_KEYS = ("cache_dir", "cache_path", "cache_root", "cache_file", "cache_dirs",
              "cache_paths")
CACHE_SUFFIXES = ("_cache_dir", "_cache_path", "_cache_root", "_cache_file")
GIB = 1024 ** 3
MIB = 1024 ** 2
RESAVE = ("python -c 'import sys, torch; [torch.save(torch.load(p, map_location=\"cpu\"), p) "
          "for p in sys.argv[1:]]'")


@dataclass(frozen=True)
class CachePath:
    path: Path
    origin: str                          # where it was named, for messages
    location: Optional[Location] = None  # the config line naming it


def is_cache_key(key: Any) -> bool:
    """The rule for config keys that name a cache (see the check's docstring)."""
    k = str(key).lower()
    return k in CACHE_KEYS or k.endswith(CACHE_SUFFIXES)


def _envs(job: Job) -> list:
    """(script, a lookup of its job environment's resolved values) per job script."""
    out = []
    for script in job.scripts or [None]:
        env = job.job_env(script)
        out.append((script, lambda n, env=env: env[n].value if n in env and env[n].resolved
                    else None))
    return out


def _cli_caches(job: Job) -> Iterator[CachePath]:
    """Cache paths the job's command line names: `--latent-cache-dir DIR` (a flag whose
    name, dashes as underscores, is a cache key by the config rule)."""
    for script in job.scripts:
        step = job.step(script)
        if step.entry is None:
            continue
        env = job.job_env(script)
        args = [str(a) for a in step.args]
        for i, a in enumerate(args):
            flag, eq, value = a.partition("=")
            if not flag.startswith("--") or not is_cache_key(flag[2:].replace("-", "_")):
                continue
            if not eq:
                if i + 1 >= len(args) or args[i + 1].startswith("-"):
                    continue
                value = args[i + 1]
            text = _shell_vars(value, env)
            if text:
                p = Path(os.path.expanduser(text))
                yield CachePath(p if p.is_absolute() else job.repo / p,
                                f"{step.where} ({flag})", Location(script.rel, step.line))


def _shell_vars(text: str, env: Any) -> Optional[str]:
    """$VAR / ${VAR} replaced by the job's resolved values; None when one is not known."""
    missing = False

    def repl(m: "re.Match") -> str:
        nonlocal missing
        name = m.group(1) or m.group(2)
        v = env.get(name)
        if v is None or not v.resolved:
            missing = True
            return ""
        return str(v.value)

    out = re.sub(r"\$\{([A-Za-z_]\w*)\}|\$([A-Za-z_]\w*)", repl, text)
    return None if missing or "$" in out else out


def cache_paths(job: Job) -> list:
    """--cache and settings `caches:` first, then every cache path named in the configs
    (`${oc.env:VAR,default}` through each job script's environment) and on the job's
    command line."""
    out = [CachePath(Path(p), "--cache / settings caches:") for p in job.caches]
    envs: Optional[list] = None
    for cfg in job.configs:
        for path, mapping in cfg.mappings():
            for key, value in mapping.items():
                if not is_cache_key(key):
                    continue
                line = mapping.line_of(key) if isinstance(mapping, LineDict) else None
                where = f"{cfg.rel}:{line} ({keypath(path + (key,))})" if line else cfg.rel
                for v in value if isinstance(value, list) else [value]:
                    if not isinstance(v, str) or not v.strip():
                        continue
                    texts = [v]
                    if is_unresolved(v):
                        envs = envs if envs is not None else _envs(job)
                        texts = [t for _, look in envs
                                 if (t := resolve_oc_env(v, look)) is not None]
                    for t in dict.fromkeys(texts):
                        p = Path(os.path.expanduser(t.strip()))
                        out.append(CachePath(p if p.is_absolute() else job.repo / p, where,
                                             cfg.location(mapping, key)))
    out += list(_cli_caches(job))
    seen: set = set()
    unique = []
    for c in out:
        key = os.path.abspath(c.path)
        if key not in seen:
            seen.add(key)
            unique.append(c)
    return unique


def _existing(job: Job) -> list:
    caches = cache_paths(job)
    if not caches:
        raise Skip("no cache paths: none given with --cache or settings `caches:`, and no "
                   "config key names one (cache_dir, cache_path, cache_root, cache_file, "
                   "*_cache_dir, ...)")
    existing = [c for c in caches if os.path.lexists(c.path)]
    if not existing:
        raise Skip("the cache paths do not exist (yet): "
                   + ", ".join(f"{c.path} ({c.origin})" for c in caches[:5]))
    return existing


def _scan_timeout(job: Job) -> float:
    opts = job.settings.options.get(CUDA_CHECK, {})
    return float(opts.get("timeout_s", 60.0)) + 15.0


def _origin_of(path: str, caches: list) -> CachePath:
    best = caches[0]
    for c in caches:
        root = os.path.abspath(c.path)
        if (path == root or path.startswith(root.rstrip("/") + "/")) and \
                len(root) >= len(os.path.abspath(best.path)):
            best = c
    return best


@check(CUDA_CHECK, title="A torch.save cache holds CUDA tensors (or unsafe pickles)",
       severity="error", tags=("cache", "dataloader"), needs=("cache", "configs"),
       timeout=_scan_timeout)
def cuda_tensor_in_shared_cache(job: Job, *, timeout_s: float = 60.0, max_findings: int = 10,
                                workers: int = 4, max_pickle_mib: int = 64
                                ) -> Iterator[Finding]:
    """A cache of torch.save files holds tensors stored on a GPU; DataLoader workers break.

    Scans every torch.save file in the cache paths: `--cache` (file or directory,
    recursive), settings `caches:`, and the paths named in the configs. A config key
    names a cache when it is `cache_dir`, `cache_path`, `cache_root`, `cache_file`,
    `cache_dirs` or `cache_paths`, or ends in `_cache_dir`, `_cache_path`, `_cache_root`
    or `_cache_file` (any depth, any case; a string or a list of strings; relative paths
    are taken from the repo root; `${oc.env:VAR,default}` is read through each job
    script's environment, other `${...}` values that are only resolved at run time
    are left out), and the job's command line (`--latent-cache-dir DIR`: a flag whose
    name, dashes as underscores, is such a key; `$VAR` through the script's
    environment). Files are recognised by content (a zip with a `<name>/data.pkl`
    record, or the legacy format's magic number), whatever their extension.

    Only each file's pickle is read, never the tensor bytes, and never executed: every
    global it names becomes an inert stub and each storage's location (`cpu`,
    `cuda:0`, ...) is read from its persistent id. Globals outside torch's
    `weights_only` allowlist are reported as `unsafe_globals`. Truncated or corrupt
    files and unreadable paths are warnings of their own; FIFOs, sockets and devices
    are never opened. A scan that reaches `timeout_s` stops and says how far it got.
    Every file is read, none is sampled: a file whose pickle is byte-identical to one
    already read (one writer, one format: the usual cache) shares its answer, and only
    its own archive's records are checked, so an odd file among a million uniform ones
    is found (80,000 to 130,000 files/s from /dev/shm on two CPUs, docs/scaling.md).
    Up to `workers` threads while reads are slow (network filesystems), up to `workers`
    processes (one per CPU) while they are fast.
    When more than `max_findings` files are affected they are grouped per directory
    (the JSON report's `data.files` keeps every path).

    ## Why it matters
    `share_memory_()` is a no-op for CUDA tensors: they can only be shared through
    CUDA IPC, which needs the spawn start method and a producer that keeps every
    tensor alive. A shared-memory cache of CUDA tensors makes the DataLoader workers
    crash or re-initialise CUDA in a forked child ("Cannot re-initialize CUDA in
    forked subprocess"); one team lost days to a 25 GB /dev/shm cache of 2000 such
    files because an `os._exit(0)` hid the crash. ROCm tensors are tagged `cuda` too.
    A pickle that names other globals is refused by `torch.load(weights_only=True)`
    (the default since torch 2.6) and would run code with `weights_only=False`.

    ## How to fix
    Build the cache from CPU tensors (`.cpu()` before `torch.save`), and move each
    batch to the GPU in the training loop (with `pin_memory=True`). To convert an
    existing cache in place:

    ```python
    import sys, torch
    for p in sys.argv[1:]:
        torch.save(torch.load(p, map_location="cpu"), p)
    ```

    Files with `unsafe_globals` need `weights_only=False`: only load them if you trust
    who wrote them, and better rebuild them from tensors and plain containers.
    Truncated files: delete and rebuild them (an interrupted precompute step).
    """
    caches = _existing(job)
    progress = tty_progress()
    res = scan([str(c.path) for c in caches], deadline_s=float(timeout_s),
               workers=max(1, int(workers)), max_pickle_bytes=int(max_pickle_mib) * MIB,
               progress=progress)
    if progress:
        progress.clear()
    job.record_fact("cache_scan", {
        "roots": [str(c.path) for c in caches], "files_seen": res.files_seen,
        "files_scanned": res.files_scanned, "torch_files": res.torch_files,
        "complete": res.complete, "processes": res.processes,
        "duration_s": round(res.duration_s, 3)})
    yield from _cache_findings(job, caches, res, float(timeout_s), int(max_findings))


def _cache_findings(job: Job, caches: list, res: ScanResult, budget: float,
                    limit: int) -> Iterator[Finding]:
    cuda = [i for i in res.flagged if i.devices]
    unsafe = [i for i in res.flagged if not i.devices and i.unsafe_globals and not i.problem]
    broken = [i for i in res.flagged if i.problem]
    yield from _grouped(job, caches, cuda, limit, _cuda_finding, _cuda_group)
    yield from _grouped(job, caches, unsafe, limit, _unsafe_finding, _unsafe_group)
    yield from _grouped(job, caches, broken, limit, _broken_finding, _broken_group)
    for path, reason in res.unreadable[:limit]:
        yield Finding(f"cannot be read ({reason}); it was not scanned",
                      location=Location(job.rel(path)), severity=Severity.WARNING,
                      fix="Check the permissions of the cache, or run the doctor as the "
                          "user who runs the job.",
                      data={"path": str(path), "devices": [], "unsafe_globals": [],
                            "error": reason})
    if len(res.unreadable) > limit:
        rest = res.unreadable[limit:]
        yield Finding(f"… and {len(rest)} more unreadable paths", severity=Severity.WARNING,
                      data={"path": str(rest[0][0]), "devices": [], "unsafe_globals": [],
                            "files": [p for p, _ in rest]})
    if not res.complete:
        seen = f"{res.files_seen}" if res.walk_complete else f"at least {res.files_seen}"
        yield Finding(
            f"scanned {res.files_scanned} of {seen} files before the {budget:g} s budget; "
            "the rest of the cache was not checked",
            severity=Severity.WARNING,
            fix=f"Raise the budget (options: {{{CUDA_CHECK}: {{timeout_s: "
                f"{int(budget * 4)}}}}}) or scan part of the cache with --cache.",
            data={"path": str(caches[0].path), "devices": [], "unsafe_globals": [],
                  "files_scanned": res.files_scanned, "files_seen": res.files_seen,
                  "budget_s": budget})


def _grouped(job: Job, caches: list, infos: list, limit: int, one: Any, group: Any
             ) -> Iterator[Finding]:
    if len(infos) <= limit:
        for info in infos:
            yield one(job, info, _origin_of(info.path, caches))
        return
    by_dir: dict = defaultdict(list)
    for info in infos:
        by_dir[os.path.dirname(info.path)].append(info)
    if len(by_dir) > limit:   # many directories: one group per cache root
        by_dir = defaultdict(list)
        for info in infos:
            by_dir[str(_origin_of(info.path, caches).path)].append(info)
    for directory, members in sorted(by_dir.items()):
        yield group(job, directory, members, _origin_of(directory, caches))


def _union(infos: list, attr: str) -> list:
    return sorted({x for i in infos for x in getattr(i, attr)})


def _counts(infos: list) -> str:
    per: dict = defaultdict(int)
    for i in infos:
        for d in i.devices:
            per[d] += 1
    return ", ".join(f"{d}: {n} files" for d, n in sorted(per.items()))


def _examples(job: Job, infos: list, n: int = 3) -> str:
    names = [os.path.basename(i.path) for i in infos[:n]]
    return ", ".join(names) + (", …" if len(infos) > n else "")


def _from(origin: CachePath) -> str:
    return f" (cache named in {origin.origin})" if origin.location else ""


def _unsafe_note(globs: list) -> str:
    if not globs:
        return ""
    return (f"; its pickle also names {', '.join(globs[:5])}"
            f"{' …' if len(globs) > 5 else ''}, outside torch's weights_only set")


CUDA_FIX = ("Re-save it with CPU tensors (torch.load(..., map_location=\"cpu\") then "
            "torch.save), or call .cpu() before torch.save where the cache is built; move "
            "batches to the GPU in the training loop instead.")


def _cuda_finding(job: Job, info: Any, origin: CachePath) -> Finding:
    return Finding(
        f"torch.save file with {info.storages} tensor storage(s) on "
        f"{', '.join(info.devices)}{_unsafe_note(info.unsafe_globals)}; DataLoader workers "
        f"cannot share them{_from(origin)}",
        location=Location(job.rel(info.path)), fix=CUDA_FIX if not info.problem else BROKEN_FIX,
        commands=(f"{RESAVE} {shlex.quote(info.path)}",) if not info.problem else (),
        data={"path": info.path, "devices": info.devices,
              "unsafe_globals": info.unsafe_globals, "format": info.format,
              "storages": dict(info.locations)})


def _resave_group(directory: str, members: list) -> tuple:
    try:
        with os.scandir(directory) as it:
            regular = sum(1 for e in it if e.is_file(follow_symlinks=False))
    except OSError:
        regular = -1
    direct = [m for m in members if os.path.dirname(m.path) == directory]
    if regular == len(members) == len(direct):
        return (f"find {shlex.quote(directory)} -maxdepth 1 -type f -exec {RESAVE} {{}} +",)
    return (f"{RESAVE} " + " ".join(shlex.quote(m.path) for m in members[:10])
            + (" # … and the rest of data.files" if len(members) > 10 else ""),)


def _cuda_group(job: Job, directory: str, members: list, origin: CachePath) -> Finding:
    return Finding(
        f"{len(members)} torch.save files under {directory}/ hold CUDA tensors "
        f"({_counts(members)}), e.g. {_examples(job, members)}; DataLoader workers "
        f"cannot share them{_from(origin)}",
        location=Location(job.rel(directory)), fix=CUDA_FIX,
        commands=_resave_group(directory, members),
        data={"path": directory, "devices": _union(members, "devices"),
              "unsafe_globals": _union(members, "unsafe_globals"), "count": len(members),
              "files": [m.path for m in members]})


UNSAFE_FIX = ("torch.load(weights_only=True) (the default since torch 2.6) refuses this "
              "file, and weights_only=False runs whatever those globals do. Rebuild it from "
              "tensors and plain containers, or allow the globals you trust with "
              "torch.serialization.add_safe_globals.")


def _unsafe_finding(job: Job, info: Any, origin: CachePath) -> Finding:
    globs = info.unsafe_globals
    return Finding(
        f"torch.save file whose pickle names {', '.join(globs[:5])}"
        f"{' …' if len(globs) > 5 else ''}, outside torch's weights_only set; it was not "
        f"executed{_from(origin)}",
        location=Location(job.rel(info.path)), fix=UNSAFE_FIX, severity=Severity.WARNING,
        data={"path": info.path, "devices": [], "unsafe_globals": globs,
              "format": info.format})


def _unsafe_group(job: Job, directory: str, members: list, origin: CachePath) -> Finding:
    globs = _union(members, "unsafe_globals")
    return Finding(
        f"{len(members)} torch.save files under {directory}/ name globals outside torch's "
        f"weights_only set ({', '.join(globs[:5])}), e.g. {_examples(job, members)}",
        location=Location(job.rel(directory)), fix=UNSAFE_FIX, severity=Severity.WARNING,
        data={"path": directory, "devices": [], "unsafe_globals": globs,
              "count": len(members), "files": [m.path for m in members]})


BROKEN_FIX = ("Delete the file and rebuild it (an interrupted precompute step leaves "
              "truncated files); torch.load fails on it.")


def _broken_finding(job: Job, info: Any, origin: CachePath) -> Finding:
    return Finding(
        f"torch.save file ({info.format} format) is {info.problem}",
        location=Location(job.rel(info.path)), fix=BROKEN_FIX, severity=Severity.WARNING,
        data={"path": info.path, "devices": info.devices,
              "unsafe_globals": info.unsafe_globals, "problem": info.problem})


def _broken_group(job: Job, directory: str, members: list, origin: CachePath) -> Finding:
    return Finding(
        f"{len(members)} torch.save files under {directory}/ are truncated or corrupt, "
        f"e.g. {_examples(job, members)}",
        location=Location(job.rel(directory)), fix=BROKEN_FIX, severity=Severity.WARNING,
        data={"path": directory, "devices": [], "unsafe_globals": [],
              "count": len(members), "files": [m.path for m in members],
              "problems": {m.path: m.problem for m in members}})


# ---- shm-too-small --------------------------------------------------------------------
def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def bytes_used(path: Path, deadline: float) -> Optional[int]:
    """Memory a file or tree takes (allocated blocks, symlinks not followed); None when it
    cannot be measured before the deadline."""
    total = 0
    stack = [str(path)]
    while stack:
        if time.monotonic() > deadline:
            return None
        p = stack.pop()
        try:
            st = os.lstat(p)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):
            try:
                with os.scandir(p) as it:
                    stack.extend(e.path for e in it)
            except OSError:
                continue
        elif stat.S_ISREG(st.st_mode):
            total += st.st_blocks * 512
    return total


def _under(path: Path, root: str) -> bool:
    p = os.path.realpath(path) if os.path.lexists(path) else os.path.abspath(path)
    root = os.path.realpath(root) if os.path.exists(root) else root
    return p == root or p.startswith(root.rstrip("/") + "/")


@check(SHM_CHECK, title="/dev/shm is too small for the shared-memory cache and the workers",
       severity="error", tags=("cache", "dataloader"), needs=("node", "configs"), timeout=30)
def shm_too_small(job: Job, *, min_gib: float = 1.0, batch_mib: int = 64,
                  prefetch_factor: int = 2) -> Iterator[Finding]:
    """/dev/shm cannot hold the shared-memory cache and the DataLoader workers' batches.

    Reads /dev/shm's size and free space (`statvfs`) on the node the doctor runs on, and
    compares it with an estimate of what the job needs there:

        needed = size of the cache paths that lie under /dev/shm
               + ranks per node x sum over DataLoaders of
                 (num_workers x prefetch_factor) x batch_mib

    Each worker keeps `prefetch_factor` batches (default 2) in shared memory until the
    main process takes them; a batch is assumed to take `batch_mib` MiB (default 64, an
    option: set it to your real batch size). When no config gives a DataLoader with
    workers, the code's `DataLoader(...)` calls do (num_workers from an env variable the
    job exports, an argparse option, ...: see dataloader-option-conflict). Each job
    script is sized by itself: the ranks per node of its launched step (Slurm tasks per
    node × torchrun processes; SLURM_NTASKS_PER_NODE in a job) times the DataLoaders of
    the code that step runs (its import closure; every loader where the step's code is
    not known); the job that needs the most is reported. A cache that already sits in
    /dev/shm counts as available space (it is the job's own). The finding is an error
    when the cache alone does not fit, a warning when it is the batches' estimate that
    does not (its size is assumed). Also fails when /dev/shm is below `min_gib` GiB at
    all (Docker's default is 64 MiB), and warns about `torch_<pid>_*` segments whose
    creating process is dead (or, for other `torch_*` names, untouched for a day), with
    their total size and the `rm` command.

    This machine's /dev/shm judges a job only where this machine may be its node: a job
    whose every script is tied by its `--partition`, `--clusters` or `site.cluster` to a
    cluster that nothing shows this machine is on runs on that cluster's nodes, whose
    /dev/shm is not known here, so it gets at most a warning saying so (the rule of
    fd-limit-too-low).

    ## Why it matters
    DataLoader workers hand every batch to the main process through /dev/shm. When it
    fills up the workers die with "Unexpected bus error encountered in worker. This
    might be caused by insufficient shared memory (shm)", or the job is OOM-killed,
    usually hours into the run when a larger batch or the cache crosses the line.
    Segments left by killed jobs (file_system sharing strategy) keep their memory until
    someone deletes them.

    ## How to fix
    Give the container more shared memory (`docker run --shm-size=16g` or `--ipc=host`;
    in Kubernetes an `emptyDir: {medium: Memory}` at /dev/shm); on a bare node ask for
    a node with more memory or move the cache to node-local disk. Lower num_workers or
    prefetch_factor if the batches are what does not fit. Delete stale torch segments
    with the `rm` command shown (they belong to processes that no longer exist).
    """
    shm = job.fact("shm")
    if not shm:
        raise Skip("no /dev/shm on this node")
    root, total, free = shm["path"], int(shm["total_bytes"]), int(shm["free_bytes"])
    # A job every script of which is for another cluster runs on that cluster's nodes:
    # this machine's /dev/shm is not its, so it only warns, saying why (the rule
    # fd-limit-too-low follows, issue 26).
    other = jobs_elsewhere(job)
    here = f" — this machine's /dev/shm: {other}; that cluster's is not known here" \
        if other else ""
    tied = {"other_cluster": other} if other else {}
    if total < min_gib * GIB:
        yield Finding(
            f"{root} is only {human(total)}, below {min_gib:g} GiB: DataLoader workers fail "
            f"with 'bus error … insufficient shared memory (shm)'{here}",
            location=Location(root), severity=Severity.WARNING if other else None,
            fix="Run the container with --shm-size=16g (or --ipc=host), or use a node whose "
                "/dev/shm is a normal tmpfs (half the RAM by default).",
            data={"path": root, "total_bytes": total, "free_bytes": free,
                  "needed_bytes": int(min_gib * GIB), **tied})
    deadline = time.monotonic() + 20
    in_shm = [c for c in cache_paths(job) if _under(c.path, root)]
    cache_bytes, unsized = 0, []
    for c in in_shm:
        size = bytes_used(c.path, deadline) if os.path.lexists(c.path) else None
        if size is None:
            unsized.append(c)
        else:
            cache_bytes += size
    # the job that needs the most: its ranks per node x the loaders of the code it runs
    script, ranks, loaders = max(loaders_per_job(job, loader_workers(job, prefetch_factor)),
                                 key=lambda j: j[1] * sum(n * pf for _, _, n, pf in j[2]))
    slots = sum(n * pf for _, _, n, pf in loaders)
    workers_bytes = ranks * slots * batch_mib * MIB
    needed = cache_bytes + workers_bytes
    available = free + cache_bytes
    if needed and needed > available:
        parts = []
        if cache_bytes:
            parts.append(f"the cache ({human(cache_bytes)} in "
                         f"{', '.join(str(c.path) for c in in_shm)})")
        if workers_bytes:
            parts.append(f"{'for ' + script.rel + ': ' if script else ''}{ranks} rank(s) x "
                         f"{slots} in-flight batches (num_workers x "
                         f"prefetch_factor) x {batch_mib} MiB = {human(workers_bytes)}")
        cfg, line = (loaders[0][0], loaders[0][1]) if loaders else (root, None)
        # precision rule: the batches' size is an assumption (batch_mib), the cache's is not
        shown = cache_bytes > available
        yield Finding(
            f"{root} has {human(free)} free of {human(total)}, but "
            f"{' plus '.join(parts)} need {human(needed)}"
            + ("" if shown else f" (assuming {batch_mib} MiB per batch: set the option "
               "batch_mib to your batches' size)") + here,
            location=Location(cfg, line),
            severity=None if shown and not other else Severity.WARNING,
            fix="Give the job more shared memory (--shm-size / a bigger node), move the cache "
                "to node-local disk, or lower num_workers / prefetch_factor.",
            data={"path": root, "total_bytes": total, "free_bytes": free,
                  "needed_bytes": needed, "cache_bytes": cache_bytes,
                  "workers_bytes": workers_bytes, "ranks_per_node": ranks,
                  "script": script.rel if script else None,
                  "batch_mib": batch_mib,
                  "caches_unsized": [str(c.path) for c in unsized], **tied})
    stale = shm.get("stale") or []
    if stale:
        size = sum(int(s.get("size", 0)) for s in stale)
        names = [s["name"] for s in stale]
        rules = sorted({s.get("rule", "owner-dead") for s in stale})
        why = ("whose process is dead" if rules == ["owner-dead"]
               else "left by dead processes or untouched for a day")
        cmds = tuple("rm -f -- " + " ".join(shlex.quote(f"{root}/{n}") for n in names[i:i + 50])
                     for i in range(0, len(names), 50))
        yield Finding(
            f"{len(stale)} stale torch shared-memory segment(s) in {root} {why} hold "
            f"{human(size)} (e.g. {', '.join(names[:3])})",
            location=Location(root), severity=Severity.WARNING,
            fix="Delete them; they belong to processes that no longer exist (check with "
                "`ls -l` that no job of yours is still running on this node).",
            commands=cmds,
            data={"path": root, "stale": stale, "stale_bytes": size, "rules": rules})
