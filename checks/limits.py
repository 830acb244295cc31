"""Resource limits the DataLoader workers run into."""
from __future__ import annotations

import ast
import re
from typing import Any, Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, edits
from doctor.job.closure import step_files
from doctor.job.cluster import other_cluster
from doctor.job.code import config_value_path, repo_loaders
from doctor.job.configs import is_unresolved
from doctor.job.context import Job
from doctor.model import FixOption, add, change, remove, run
from doctor.job.hydra import resolve_oc_env
from doctor.job.loaders import CodeLoader, LoaderSpec, code_workers, loader_specs
from doctor.job.sources import dotted, trees_mentioning
from doctor.job.sbatch import SbatchScript
from doctor.job.ulimits import apply_ulimits, le as _le, ulimit_commands


def _oc_env_int(job: Job, value: Any) -> Any:
    """The integer `${oc.env:VAR,default}` makes with every VAR set in the first job
    script's environment; else the value unchanged (a default is not guessed: the job's
    environment may set the variable where the doctor does not see it)."""
    script = job.scripts[0] if job.scripts else None
    env = job.job_env(script)
    unset: list = []

    def look(name: str) -> Optional[str]:
        v = env.get(name)
        if v is None or not v.resolved:
            unset.append(name)
            return None
        return str(v.value)

    text = resolve_oc_env(str(value), look)
    if text is None or unset or not text.strip().lstrip("-").isdigit():
        return value
    return int(text)


def _code_best(job: Job, files: Optional[set] = None) -> tuple:
    """(slots, workers, prefetch, CodeLoader), its unshown links, the unknown places: the
    code's DataLoader with the most in-flight batches (in `files` only, when given)."""
    found, unknown = code_workers(job)
    if files is not None:
        found = [c for c in found if c[3].call.file in files]
    if not found:
        return None, [], unknown
    top = max(found, key=lambda c: c[0])
    return top[:4], top[4], unknown


def _code_shares_by_file(job: Job) -> bool:
    """The code calls set_sharing_strategy("file_system"): no descriptors are passed."""
    for _path, tree in trees_mentioning(job, b"set_sharing_strategy"):
        for n in ast.walk(tree):
            if isinstance(n, ast.Call) and dotted(n.func).endswith("set_sharing_strategy") \
                    and n.args and isinstance(n.args[0], ast.Constant) \
                    and n.args[0].value == "file_system":
                return True
    return False


def _code_loaders(job: Job) -> list:
    """The DataLoader calls of the whole repo's code (under the first job script's env):
    whether a config's num_workers reaches one is a question about all of them."""
    env = job.job_env(job.scripts[0] if job.scripts else None).plain()
    return list(repo_loaders(job, env))


def _ulimit_edit(job: Job, script: SbatchScript, line: Optional[int], value: int) -> tuple:
    """`ulimit -n value` in the job script (unsafe: the job gets another limit): in place of
    the `ulimit` command at `line` (the rest of the line kept), else after the #SBATCH
    header. None when that line holds no single plain `ulimit` command."""
    title = f"set the open-file limit to {value} (ulimit -n {value})"
    if line is None:
        edit = edits.insert_after_header(job, script.rel, [f"ulimit -n {value}"], title,
                                         unsafe=True)
        return (edit,) if edit else ()
    lines = edits.read_lines(job, script.rel) or []
    text = lines[line - 1].rstrip("\r\n") if 0 < line <= len(lines) else ""
    found = list(re.finditer(r"\bulimit((?:\s+-[A-Za-z]+)*\s+)[\w]+(?=\s*(?:$|[;&|#)]))", text))
    if len(found) != 1 or text.count("ulimit") != 1:
        return ()
    m = found[0]
    edit = edits.replace_line(job, script.rel, line,
                              text[:m.start()] + f"ulimit -n {value}" + text[m.end():], title,
                              unsafe=True)
    return (edit,) if edit else ()


def _fmt(v: Optional[int]) -> str:
    return "unlimited" if v is None else str(v)


@check("fd-limit-too-low", title="The open-file limit is too low for the DataLoader workers",
       severity="error", tags=("dataloader", "limits"), needs=("node", "configs", "sbatch"),
       timeout=10)
def fd_limit_too_low(job: Job, *, base_fds: int = 256, fds_per_batch: int = 64,
                     fds_per_worker: int = 0) -> Iterator[Finding]:
    """The open-file limit (RLIMIT_NOFILE) runs out under the file_descriptor sharing strategy.

    The estimate, per training rank (RLIMIT_NOFILE is per process, and the
    rank's main process is the one that fills up):

        needed = base_fds + num_workers x prefetch_factor x fds_per_batch

    Under torch's default `file_descriptor` sharing strategy on Linux, a worker
    hands every tensor of a batch to the main process as a shared-memory file
    descriptor, which the main process keeps open while the tensor is alive.
    Up to num_workers x prefetch_factor batches are in flight, each holding
    `fds_per_batch` tensors (option, default 64); `base_fds` (default 256)
    covers the rank's own files, sockets, CUDA/NCCL handles. With the common
    soft limit of 1024: 8 workers x prefetch 2 need 1280 (fails, as in the
    "too many open files" reports), 4 workers need 768 (fits). The DataLoader
    spec with the largest num_workers x prefetch_factor over all configs is
    used (prefetch_factor unset → 2). When no config sizes the workers, each job
    script is judged by the largest DataLoader of the code its own step runs (its
    import closure; every loader of the repo where that code is not known), never by
    another job's. The `fds_per_worker` option, when > 0, replaces prefetch_factor
    x fds_per_batch per worker.

    The limits are the probed [soft, hard] of this process (on the login node,
    Slurm propagates the submitting shell's limits to the job by default),
    then every `ulimit -n N` / `-Sn` / `-Hn` line of the job script applied in
    order as bash does for a non-root user (`ulimit -n N` sets both limits; a
    value above the hard limit fails and changes nothing). Ranks per node
    (Slurm tasks per node × torchrun/accelerate processes per task, from the job's
    launched step) are reported for context.

    Those are this machine's limits. They are the job's when the job is tied to no
    cluster (Slurm hands the submitting shell's limits to the job) or when this
    machine is on the job's cluster (the doctor runs inside a Slurm job, or this
    cluster has the job's partition, or the settings say it is the job's). A job whose
    `--partition`, `--clusters` or `site.cluster` names a cluster that nothing shows
    this machine is on runs under that cluster's limits, which are not known here: the
    finding is then at most a warning that says so, and writes no `ulimit` line.

    When the training code passes num_workers to `DataLoader` through an expression
    the doctor cannot follow (`cfg.data.workers`), the config's value may not be what
    the workers are: the finding is then at most a warning that names that call.

    A config's `num_workers: ${oc.env:NUM_WORKERS,8}` takes the value the job script
    exports (a variable it does not set is not guessed: skip, saying where).

    When no config gives a DataLoader with workers, the code's `DataLoader(...)`
    calls do (doctor/job/code.py): `num_workers=int(os.environ.get("X", "8"))` with
    X exported by the job script, an argparse option and the job's command line,
    `self.x = cfg[...]` set in `__init__`, a literal `**` dict. A value whose
    whole path is not shown (a variable's default the job may replace, a config
    key the code reads) makes the finding at most a warning that names it.

    A config key `sharing_strategy: file_system`, or
    `torch.multiprocessing.set_sharing_strategy("file_system")` in the code, means
    descriptors are not passed, so the check passes. No DataLoader with workers →
    skip.

    ## Why it matters
    When the main process runs out of descriptors, the DataLoader dies with
    "received 0 items of ancdata" or "Too many open files" — typically after
    the job has queued and run for a while, and in one rank only, so the other
    ranks then hang in their next collective until the NCCL timeout.

    ## How to fix
    When the hard limit allows it, raise the soft limit in the job script,
    after the #SBATCH lines and before `srun` (the finding gives the line).
    When even the hard limit is too low: fewer workers or a smaller
    prefetch_factor (the finding gives the largest num_workers that fits), or
    `torch.multiprocessing.set_sharing_strategy("file_system")` in the
    training script, or ask the cluster admins for a higher hard limit.

    `doctor fix --unsafe` writes the `ulimit -n` line into the job script
    (in place of a `ulimit -n` that fails, else after the #SBATCH lines).
    """
    for cfg in job.configs:
        for _, mapping in cfg.mappings():
            if mapping.get("sharing_strategy") == "file_system":
                return  # tensors go through named files, not descriptors: pass
    if _code_shares_by_file(job):
        return
    best = None  # (per-worker-batches, workers, prefetch, spec)
    unknown = []
    for spec in loader_specs(job.configs):
        workers = spec.mapping.get("num_workers", 0)
        prefetch = spec.mapping.get("prefetch_factor")
        if is_unresolved(workers):   # ${oc.env:NUM_WORKERS,8}: the job script's export
            workers = _oc_env_int(job, workers)
        if is_unresolved(workers):
            unknown.append(f"{spec.config.rel}:{spec.line('num_workers')} ({workers})")
            continue
        if not isinstance(workers, int) or isinstance(workers, bool) \
                or workers <= 0:
            continue
        if not isinstance(prefetch, int) or isinstance(prefetch, bool) or prefetch <= 0:
            prefetch = 2  # DataLoader's default with workers (an unresolved value: assume it)
        if best is None or workers * prefetch > best[0]:
            best = (workers * prefetch, workers, prefetch, spec)
    unseen: list = []
    if best is None:
        best, unseen, unknown_code = _code_best(job)
        unknown += unknown_code
    elif isinstance(best[3], LoaderSpec):
        # precision rule: when the code passes num_workers to DataLoader through an
        # expression the doctor cannot follow, the config's value may not be what the
        # workers are
        unseen = config_value_path(best[3].mapping, "num_workers", _code_loaders(job)) or []
    if best is None:
        raise Skip("no DataLoader in the configs or the code uses worker processes "
                   "(num_workers > 0), so no descriptors are passed between processes"
                   + (f"; num_workers is filled in at run time at {', '.join(unknown)}, "
                      "not guessed"
                      if unknown else ""))
    nofile = (job.fact("limits") or {}).get("nofile")
    if not nofile:
        raise Skip("the open-file limit of this node is not known")
    soft0, hard0 = nofile
    code_sized = isinstance(best[3], CodeLoader)
    repo_best, repo_unseen = best, unseen
    for script in job.scripts or [None]:
        best, unseen = repo_best, repo_unseen
        if code_sized and script is not None:
            # the code's loaders: each job by the largest its own step's code runs
            files = {job.rel(p) for p in step_files(job, job.step(script))}
            if files:
                own, unseen, _ = _code_best(job, files)
                if own is None:
                    continue   # this job's code starts no worker process
                best = own
        _, workers, prefetch, spec = best
        per_worker = fds_per_worker if fds_per_worker > 0 else prefetch * fds_per_batch
        needed = base_fds + workers * per_worker
        cfg_loc = spec.location("num_workers")
        base = {"num_workers": workers, "prefetch_factor": prefetch,
                "fds_per_worker": per_worker, "base_fds": base_fds,
                "config": spec.config.rel if spec.config else None,
                "keypath": spec.where, "probed": [soft0, hard0]}
        if isinstance(spec, CodeLoader):
            base["code"] = {"file": spec.call.file, "line": spec.call.line}
        cmds = ulimit_commands(script) if script else []
        soft, hard, failed = apply_ulimits(soft0, hard0, cmds)
        rpn = job.ranks_per_node(script)
        ranks, ranks_from = rpn.value or 1, rpn.source
        data = {"soft": soft, "hard": hard, "needed": needed, **base,
                "ranks_per_node": ranks, "ranks_from": ranks_from,
                "per_node": needed * ranks,
                "script": script.rel if script else None}
        per = (f"{per_worker} fds/worker" if fds_per_worker else
               f"prefetch {prefetch} x {fds_per_batch} fds/batch")
        est = (f"{workers} workers x {per} + {base_fds} = {needed} per rank, "
               f"{ranks} rank(s) per node ({ranks_from})")
        if failed:
            data["failed_ulimit"] = [{"line": u.line, "text": u.text} for u in failed]
        other = other_cluster(job, script)
        # this machine's limits, not the job's cluster's: said in the message, and no
        # `ulimit` value from them is written into that cluster's script
        here = f" — this machine's limits: {other}" if other else ""
        if other:
            data["other_cluster"] = other
        if _le(needed, soft) and not failed:
            continue
        if _le(needed, soft):
            u = failed[0]
            yield Finding(
                f"`{u.text}` (line {u.line}) asks for more than the hard limit "
                f"({_fmt(hard)}): bash refuses it for a non-root user (a `set -e` script "
                f"stops there); the soft limit {_fmt(soft)} is enough for {needed}{here}",
                location=Location(script.rel, u.line),
                fix=(f"Replace line {u.line} with `ulimit -n {hard}`." if hard is not None
                     else f"Remove line {u.line}."),
                commands=(f"ulimit -n {hard}",) if hard is not None else (),
                options=(FixOption((change(script.rel, u.line, f"ulimit -n {hard}")
                                    if hard is not None else
                                    remove(script.rel, u.line, u.text),)),),
                data=data, severity=Severity.WARNING,
                edits=_ulimit_edit(job, script, u.line, hard)
                if hard is not None and not other else ())
            continue
        if _le(needed, hard0):
            # the job's own hard limit allows it: one line in the script fixes it
            target = hard0 if hard0 is not None else needed
            lowering = [u for u in cmds if u.hard and u not in failed]
            why = ""
            if failed:
                why = (f"; `{failed[0].text}` (line {failed[0].line}) is above the hard "
                       "limit, so bash refuses it")
            elif lowering and not _le(needed, hard):
                why = f"; `{lowering[-1].text}` (line {lowering[-1].line}) lowers the hard limit"
            if script is not None:
                at = failed[0].line if failed else (cmds[-1].line if cmds else None)
                last = max((d.line for d in script.directives), default=0)
                where = (f"replace line {at} of {script.rel} with" if at else
                         f"add after the #SBATCH lines of {script.rel} (after line {last}), "
                         "before the training command:")
                loc = Location(script.rel, at or last or None)
                fixes = () if other else _ulimit_edit(job, script, at, target)
                step = change(script.rel, at, f"ulimit -n {target}") if at else \
                    add(script.rel, f"ulimit -n {target}",
                        where=f"after line {last}, before the training command")
            else:
                where, loc = "run in the shell that launches the training:", cfg_loc
                fixes = ()
                step = run("in the shell that launches the training", f"ulimit -n {target}")
            yield Finding(
                f"soft open-file limit {_fmt(soft)} < {needed} needed: {est}; the hard "
                f"limit {_fmt(hard0)} allows raising it{why}{here}",
                location=loc, fix=f"Raise the soft limit: {where} `ulimit -n {target}`.",
                commands=(f"ulimit -n {target}",), data=data, severity=Severity.WARNING,
                edits=fixes, options=(FixOption((step,)),))
            continue
        fit = max(0, (hard0 - base_fds) // per_worker)
        data["max_workers"] = fit
        if unseen:
            data["unseen"] = unseen
        yield Finding(
            ("this machine's" if other else "even the")
            + f" hard open-file limit {_fmt(hard0)} is below the {needed} needed: {est}"
            + ((" — not shown end to end: " if isinstance(spec, CodeLoader) else
                " — if num_workers reaches DataLoader unchanged: ") + "; ".join(unseen)
               if unseen else "")
            + (f" — {other}; that cluster's limit is not known here" if other else ""),
            severity=Severity.WARNING if unseen or other else None,
            location=cfg_loc,
            # no workers at all is the least: never "0 or fewer"
            fix=(f"Lower num_workers (line {spec.line('num_workers')}) to {fit} or fewer"
                 if fit > 0 else f"Set num_workers (line {spec.line('num_workers')}) to 0 "
                 "(the main process loads the data)"
                 + (f" (or prefetch_factor, line {spec.line('prefetch_factor')})"
                    if "prefetch_factor" in spec.mapping else "")
                 + ", or call torch.multiprocessing.set_sharing_strategy(\"file_system\") in "
                 "the training script, or ask the cluster admins for a hard limit of at least "
                 f"{needed}."),
            data=data)
