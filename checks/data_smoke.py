"""The data smoke: the job's own DataLoader, iterated with real workers under the job's limits."""
from __future__ import annotations

import re
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.context import Job
from doctor.model import Pass

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_RANKS = 2     # when no job script says how many ranks a node runs
MAX_RANKS = 16        # each rank is a process with its workers on this one node
MARGIN_S = 20.0       # the runner's deadline: the smoke's own, plus stopping and collecting
MIB = 2 ** 20


def data_timeout(job: Job) -> float:
    return float(job.settings.smoke.get("data_timeout_s") or DEFAULT_TIMEOUT_S) + MARGIN_S


def _script(job: Job):
    return job.scripts[0] if job.scripts else None


def _ranks(job: Job) -> tuple:
    s = job.settings.smoke
    if s.get("data_ranks"):
        return int(s["data_ranks"]), "smoke.data_ranks"
    rpn = job.ranks_per_node(_script(job))
    if rpn.source == "default" or not rpn.value:
        return DEFAULT_RANKS, "default (no job script says how many ranks a node runs)"
    if rpn.value > MAX_RANKS:
        return MAX_RANKS, f"{rpn.value} per node ({rpn.source}), capped at {MAX_RANKS} here"
    return int(rpn.value), str(rpn.source)


def _nofile(job: Job) -> tuple:
    """The job's soft open-file limit: this node's, after the script's `ulimit -n` lines."""
    from doctor.job.ulimits import apply_ulimits, ulimit_commands

    nofile = (job.fact("limits") or {}).get("nofile")
    if not nofile:
        return None, "this node's (not readable)"
    soft, hard = nofile
    script = _script(job)
    cmds = ulimit_commands(script) if script is not None else []
    if not cmds:
        return soft, "this node's soft limit"
    soft, _, failed = apply_ulimits(soft, hard, cmds)
    last = cmds[-1]
    return soft, (f"`{last.text}` at {script.rel}:{last.line}"
                  + (" (it fails: above the hard limit)" if last in failed else ""))


def _shm(job: Job) -> tuple:
    mib = job.settings.smoke.get("data_shm_mib")
    if mib:
        return int(mib) * MIB, "smoke.data_shm_mib"
    shm = job.fact("shm")
    if shm and shm.get("total_bytes"):
        return int(shm["total_bytes"]), "this node's /dev/shm"
    return None, "no /dev/shm here"


def _script_env(job: Job) -> dict:
    """What the job script exports to its ranks (a worker count in MU_TRAIN_WORKERS, say):
    the values the doctor could resolve; the rest is this environment's, as for the job."""
    script = _script(job)
    if script is None:
        return {}
    return {k: v.value for k, v in job.job_env(script).items()
            if v.source != "login" and v.resolved}


# Slurm's job id in a path: its length on the node is the id's, not the variable name's
JOB_ID_RE = re.compile(r"\$\{?SLURM_(?:ARRAY_)?JOB_?ID\}?")
JOB_ID_DIGITS = 8


def _tmpdir(job: Job) -> tuple:
    """(the TMPDIR the job script exports, script:line, how it was read): its length decides
    whether the workers' socket paths fit (doctor/smoke/data.py SOCKET_TMP_MAX). None where
    the script sets none (the node's, as short as the smoke's own) or it is not known."""
    script = _script(job)
    v = job.job_env(script).get("TMPDIR") if script is not None else None
    if v is None or v.source == "login":
        return None, "", "not set by the job script: the node's (the smoke's own, short)"
    value = JOB_ID_RE.sub("9" * JOB_ID_DIGITS, v.value)
    note = f"{v.where()}" + (f" ($SLURM_JOB_ID counted as {JOB_ID_DIGITS} digits)"
                             if value != v.value else "")
    if not v.resolved or "$" in value or "`" in value:
        return None, v.where(), (f"unknown: {v.where()} sets TMPDIR={v.value}, which the "
                                 "doctor cannot resolve; the ranks ran with a short one")
    return value, v.where(), note


def plan_for(job: Job) -> tuple:
    from doctor.smoke.data import DataPlan

    s = job.settings.smoke
    ranks, ranks_from = _ranks(job)
    nofile, nofile_from = _nofile(job)
    shm, shm_from = _shm(job)
    tmpdir, tmpdir_at, tmpdir_from = _tmpdir(job)
    plan = DataPlan(repo=job.repo, spec=str(job.data), ranks=ranks,
                    batches=s.get("data_batches") or None,
                    timeout_s=float(s.get("data_timeout_s") or DEFAULT_TIMEOUT_S),
                    nofile=nofile, shm_bytes=shm, env=_script_env(job),
                    private_shm=s.get("data_private_shm", True) is not False,
                    tmpdir=tmpdir, tmpdir_at=tmpdir_at)
    return plan, {"ranks_from": ranks_from, "fd_limit_from": nofile_from, "shm_from": shm_from,
                  "tmpdir_from": tmpdir_from}


@check("data-smoke", title="The job's DataLoader fails with its workers under the job's limits",
       severity="error", tags=("smoke", "dataloader"), needs=("torch", "smoke"),
       timeout=data_timeout)
def data_smoke(job: Job) -> Iterator[Finding]:
    """The job's own DataLoader, run with real workers on this node under the job's limits,
    fails: the finding says how, on which rank and worker, and at which line of your code.

    The doctor imports the factory given by `--data MOD:FACTORY` (or `smoke.data` in the
    settings) in child processes — it returns the job's `DataLoader`, or `(dataset,
    kwargs)` with the DataLoader arguments taken from the job's config — and iterates
    N batches on each of R ranks: R is the ranks per node the job script starts (Slurm
    tasks per node × torchrun processes per task; default 2, at most 16;
    `smoke.data_ranks` sets it), N is one round of every worker's prefetch after a
    training step's pause at the first batch, which lets the prefetch fill (num_workers ×
    prefetch_factor + 1, 4 at least, 128 at most; `smoke.data_batches` sets it): the
    most batches, descriptors and /dev/shm are in flight in that steady state, not in the
    first few batches. The loader runs as the job runs it: its own `num_workers`,
    `prefetch_factor`, start method and sharing strategy, the variables the job script
    exports (a worker count read from the environment), a process group per rank (a
    `DistributedSampler` works). torch is imported once and the ranks are forked from
    that process, so a busy node pays one import, not R.

    The job's limits apply: the open-file limit (RLIMIT_NOFILE) is this node's after the
    job script's `ulimit -n` lines; /dev/shm is a private tmpfs of the compute node's
    size (`smoke.data_shm_mib`, else this node's), mounted in a user and mount namespace
    of the smoke's own, shared by its ranks as on the node, and gone when they end.
    Where namespaces are not allowed (or `smoke.data_private_shm: false`), the ranks use
    this node's /dev/shm and the doctor measures the peak their processes hold against
    the node's size, and says so. The ranks' TMPDIR has the length of the one the job
    script exports (a private directory of the smoke's, padded, `$SLURM_JOB_ID` counted
    as 8 digits; the node's, short, where the script sets none or the doctor cannot
    resolve it: the facts say which): the workers pass batches through Unix sockets
    under TMPDIR, whose paths have at most 107 bytes.

    Each failure names the rank, the worker, the signal and your file:line:
    `loader-exception` (the `DataLoader(...)` call raised, e.g. `prefetch_factor` with
    `num_workers=0`), `worker-exception` (at the `__getitem__` line the worker raised at),
    `fd-exhaustion` ("Too many open files", or a loader that hung with its descriptors
    nearly all used; 80% of the limit in use is a warning of its own: near the limit the
    outcome varies from run to run), `shm-exhaustion` ("No space left on device" in
    /dev/shm, a bus error), `worker-killed` (SIGSEGV, SIGABRT, SIGKILL, from the workers'
    exit codes, with the worker's stack), `hang` (not done by `smoke.data_timeout_s`,
    default 60 s: the stuck worker's stack), `cuda-in-worker` (`.cuda()` in a worker, CUDA
    tensors coming out of the workers), `socket-path-too-long` (the job's TMPDIR, with
    its line and length, is past the 75 bytes a worker's socket path leaves for it:
    "AF_UNIX path too long" in the workers, every batch lost, the loader hangs; a shorter
    TMPDIR fixes it, `set_sharing_strategy("file_system")` does not: torch_shm_manager's
    socket is under TMPDIR too, and past 73 bytes the workers raise "torch_shm_manager at
    …: Invalid argument", named as this kind too). The report's facts (`data_smoke`) give the
    first-batch latency, the time per batch, the workers' start cost, the peak open files
    and /dev/shm use per rank. It runs beside ddp-smoke; `--static` and `--no-smoke` never
    run it (it runs your code). No factory given: skip.

    ## Why it matters
    The DataLoader's failures appear only with real workers, real ranks and the compute
    node's limits, after the queue wait: 8 workers × 8 ranks run out of file descriptors,
    a shared-memory cache or big batches fill /dev/shm (bus error), a worker segfaults in
    native code and the rank reports only "worker exited unexpectedly", a worker hangs
    and every other rank waits in its next collective until the NCCL timeout.

    ## How to fix
    The finding's fix says it for its kind: raise `ulimit -n` in the job script or use
    fewer workers; fit /dev/shm (fewer workers or prefetch, the cache on local disk, a
    larger --shm-size); a TMPDIR of 75 bytes or less (`export TMPDIR=/tmp`, or
    `/tmp/$SLURM_JOB_ID`); keep CUDA out of the workers (move the batch to the GPU in the
    training loop); fix the line shown for an exception, a crash or a hang.
    """
    if not job.data:
        raise Skip("no DataLoader factory: pass --data MOD:FACTORY or set smoke.data")
    if not job.fact("torch_installed"):
        raise Skip("torch is not installed in this environment (the data smoke runs it in "
                   "child processes with this Python)")
    # imported here: every run loads this module, and only a run with a factory needs it
    from doctor.smoke.data import classify, data_facts, run_data_smoke

    plan, sources = plan_for(job)
    job.say(f"data-smoke: {plan.ranks} rank(s), {plan.spec}")
    run = run_data_smoke(plan, on_launcher=lambda launcher: job.add_cleanup(launcher.cleanup))
    facts = data_facts(run)
    facts.update(sources)
    job.record_fact("data_smoke", facts)
    failed = run.node_event("exception")
    if failed:   # the node could not import torch: nothing about the loader is known
        raise Skip(f"the data smoke could not start: {failed.get('type')}: "
                   f"{failed.get('message')}")
    found = classify(run)
    setup = [f for f in found if f.kind == "setup"]
    if setup and len(setup) == len(found):
        raise Skip(setup[0].message)
    for f in found:
        if f.kind == "setup":
            continue
        where = _location(job, f.frame)
        if where is None and f.kind == "socket-path-too-long" and plan.tmpdir_at:
            path, _, line = plan.tmpdir_at.rpartition(":")
            where = Location(path, int(line))
        ranks = f" (ranks {', '.join(map(str, f.ranks))})" if len(f.ranks) > 1 else ""
        yield Finding(f"{f.message}{ranks} [{f.kind}; data: {plan.spec}]", location=where,
                      fix=f.fix, data=f.data(),
                      severity=Severity.WARNING if f.warning else None)
    if not found:
        r = facts["ranks"][0] if facts["ranks"] else {}
        shm = facts.get("shm_bytes")
        raise Pass(f"{plan.ranks} rank(s) × {facts.get('num_workers')} worker(s) loaded "
                   f"{r.get('batches')} batches each (first batch {r.get('first_batch_s')}s) "
                   f"under an open-file limit of {facts.get('fd_limit')}"
                   + (f" and a /dev/shm of {shm / MIB:.0f} MiB"
                      + ("" if facts.get("shm_private") else " (this node's, measured)")
                      if shm else ""))


def _location(job: Job, frame) -> Optional[Location]:
    return Location(job.rel(frame.file), frame.line) if frame is not None else None
