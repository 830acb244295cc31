"""The 2-rank DDP smoke: init, ≥ 2 training steps, parameters compared across ranks."""
from __future__ import annotations

from typing import Iterator

from doctor import Finding, Location, Skip, check
from doctor.job.context import Job
from doctor.model import Pass
from doctor.smoke.classify import classify, smoke_facts
from doctor.smoke.launcher import SmokePlan, run_smoke

DEFAULT_TIMEOUT_S = 180.0
MARGIN_S = 30.0  # the runner's deadline: the smoke's own, plus stopping and collecting


def smoke_timeout(job: Job) -> float:
    return float(job.settings.smoke.get("timeout_s") or DEFAULT_TIMEOUT_S) + MARGIN_S


def plan_for(job: Job) -> SmokePlan:
    s = job.settings.smoke
    return SmokePlan(repo=job.repo, model=job.model, input_shape=s.get("input_shape"),
                     timeout_s=float(s.get("timeout_s") or DEFAULT_TIMEOUT_S),
                     world_size=int(s.get("world_size") or 2),
                     backend=str(s.get("backend") or "auto"))


@check("ddp-smoke", title="A 2-rank DDP run of the model fails", severity="error",
       tags=("smoke", "distributed"), needs=("torch", "smoke"), timeout=smoke_timeout)
def ddp_smoke(job: Job) -> Iterator[Finding]:
    """Two ranks of real DistributedDataParallel could not train the model in sync.

    The doctor starts `smoke.world_size` (default 2) rank processes on this node
    — gloo on CPU, nccl (RCCL on ROCm) with one GPU per rank when there are
    enough GPUs — builds the model from `--model MOD:FACTORY` / `smoke.model`
    (a factory returning an `nn.Module` or `(module, batch)`; default a small
    built-in model), wraps it in DDP and runs two steps of forward, backward and
    optimizer step, then compares every parameter across ranks. Each failing
    rank is one finding: `crash` (the signal), `exception` (the traceback),
    `hang` (where it was stuck, from faulthandler), `desync` (parameters
    differ), `timeout` (it gave up waiting for a peer); `root_cause` says which
    failure caused the others. Settings: `smoke: {model, input_shape,
    timeout_s (default 180), world_size, backend (auto, gloo, nccl)}`. A
    forced `backend: nccl` with fewer GPUs than ranks cannot run here: a skip
    that says so (it proves nothing about the job either way). A pass on the
    built-in model says so: it shows that torch, the backend and the node work,
    and nothing about your model.

    ## Why it matters
    Distributed failures surface late and far from their cause: a rank-0-only
    lazy cache built in the first forward deadlocks every multi-GPU job while
    single-GPU runs work; a native library that segfaults only under DDP kills
    rank 0 and leaves the others to time out after 10–30 minutes of NCCL or gloo
    watchdog; an unused parameter only fails on the *second* step. Each costs a
    queue wait and an allocation to discover. Two ranks on one node find them
    in seconds, and say which rank failed first.

    ## How to fix
    Follow the finding marked as root cause (`root_cause: true`); the others
    are its consequences. Crash: run the factory under `python -X faulthandler`
    and gdb. Exception: the traceback is in the finding. Hang: make every rank
    run the same collectives — build lazy state on every rank or before DDP.
    Unused parameters: use them, freeze them, or pass
    `find_unused_parameters=True`. Desync: remove rank-dependent parameter
    updates outside the optimizer. A slow but healthy first step: raise
    `smoke.timeout_s`.
    """
    if not job.fact("torch_installed"):
        raise Skip("torch is not installed in this environment (the smoke runs it in "
                   "child processes with this Python)")
    plan = plan_for(job)
    backend = "" if plan.backend == "auto" else f", {plan.backend}"
    job.say(f"ddp-smoke: {plan.world_size} ranks{backend}, {job.model or 'the built-in model'}")
    run = run_smoke(plan, on_launcher=lambda launcher: job.add_cleanup(launcher.cleanup))
    job.record_fact("smoke", smoke_facts(run))
    setup = {str(e.get("message")) for r in run.ranks
             if (e := r.event("exception")) and e.get("type") == "SmokeSetupError"}
    if setup and len(setup) == 1 and all(r.event("exception") for r in run.ranks):
        raise Skip(setup.pop())   # the smoke could not run here: it proved nothing either way
    model = job.model or "the built-in model"
    found = False
    for f in classify(run):
        found = True
        location = None
        if f.frame is not None and job.rel(f.frame.file) != f.frame.file:
            location = Location(job.rel(f.frame.file), f.frame.line)
        yield Finding(f"{f.message} [model: {model}]", location=location, fix=f.fix,
                      data=f.data())
    if not found and not job.model:   # a bare PASS would read as "your model trains in DDP"
        raise Pass(f"the built-in toy model trained on {len(run.ranks)} ranks: torch, the "
                   "backend and this node work, but this proves nothing about your model "
                   "(pass --model MOD:FACTORY or set smoke.model)")
