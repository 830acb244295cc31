"""torch.compile turned on where it will fail or hang."""
from __future__ import annotations

import os
import re
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.code import CodeValue, CompileCall, code_settings, step_argv
from doctor.job.cluster import jobs_elsewhere
from doctor.job.context import Job
from doctor.model import FixOption, run
from doctor.job.sources import judges_all

COMPILE_KEYS = ("compile", "torch_compile", "use_compile", "compile_model")
MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
SAFE_CONTEXTS = ("spawn", "forkserver")
# An evaluation loader's first batch comes after training steps were compiled.
_EVAL = re.compile(r"val|eval|test|predict", re.I)


def compile_setting(m) -> Optional[tuple]:
    """(key, mode) when this mapping turns compile on; mode None for plain `true`."""
    for key in COMPILE_KEYS:
        if key not in m:
            continue
        v = m[key]
        if v is True:
            return key, None
        if isinstance(v, str) and v in MODES:
            return key, v
        if isinstance(v, dict) and v.get("enabled", v.get("enable", True)) is True:
            mode = v.get("mode")
            return key, mode if isinstance(mode, str) else None
    return None


def _python_version(job: Job) -> tuple:
    nums = re.findall(r"\d+", str(job.fact("python") or ""))[:2]
    return tuple(int(n) for n in nums)


@check("torch-compile-risk", title="torch.compile is enabled where it will fail or hang",
       severity="error", tags=("compile", "triton", "dataloader"), needs=("configs", "repo"),
       timeout=15)
def torch_compile_risk(job: Job, *, min_autotune_memory_gb: int = 32) -> Iterator[Finding]:
    """A config turns torch.compile on where it fails: no triton, aarch64, small RAM, fork.

    Finds `compile: true`, a compile mode string, or `compile: {mode: ...}`
    in the configs, and `torch.compile(...)` calls (or `@torch.compile`) in
    the repo's code, read without importing it; a call under an `if` may not
    run, so its findings are at most warnings that name the condition. A
    condition the doctor can decide from the job's configs, command line or
    environment (`if mode not in ("none", "false")` with `compile: "none"`,
    `if args.compile` without `--compile`) leaves out a call that never runs.
    Statically: fork-started DataLoader workers (num_workers > 0 with no
    `multiprocessing_context: spawn|forkserver`) in the same config, or in a
    DataLoader(...) call in the code for a compile call (in the job's code; when no
    job step ties the code, a loader of the compile's own file only); a training loader with
    `persistent_workers: true` forks once, at its first batch, before the first
    compiled step runs, and is not reported (an evaluation loader's first batch
    comes after compiling, so it is). On a live node, from
    facts: no triton installed (read from package metadata, no import) while
    the job targets a GPU, the same on aarch64, and `max-autotune` on a node
    with little memory. The triton rule needs the torch here to be a GPU build:
    a CPU torch (a login node's), or none, is not the GPU job's, whose wheel
    brings its own triton (noted in the report's facts). When the job trains
    inside a container (`singularity|apptainer
    exec`, `srun --container-image`, `srun --environment`) that the doctor is not running
    in (a Docker container is never a Slurm job's), or with another interpreter (a
    conda env's bin/python), this node's triton says nothing about the job's, so the
    triton rule is left out (noted in the report's facts): run the doctor inside the
    container, or with that interpreter, to check it. A job for another cluster (its
    `--partition` or `--clusters` is not this machine's cluster's) runs on that
    cluster's nodes: this node's triton, CPU and memory do not judge it; it is
    judged as in a static run, and the report's facts say why.

    ## Why it matters
    Without triton, inductor raises `TritonMissing: Cannot find a working
    triton installation` at the first compiled step — after data loading and
    model setup, on every rank. Triton's PyPI wheels were x86-only for a long
    time, so aarch64 nodes (GH200) often have none. `max-autotune` compiles
    many kernel variants in parallel subprocesses and can exhaust a small
    node's memory. LLVM's thread pools are not fork-safe: forking DataLoader
    workers after triton has compiled kills them with `LLVM ERROR:
    pthread_join failed: Invalid argument` (SIGABRT).

    ## How to fix
    Install the triton that matches the torch build (`pip install triton`,
    `pytorch-triton-rocm` for ROCm) or turn compile off; on aarch64 use a
    torch ≥ 2.7 CUDA wheel that ships triton, or eager mode. Use
    `mode: reduce-overhead` or `default` on small nodes. Start DataLoader
    workers with `multiprocessing_context: spawn` (or `forkserver`).
    """
    found = [(cfg, kp, m, *s) for cfg in job.configs for kp, m in cfg.mappings()
             if (s := compile_setting(m))]
    script = job.scripts[0] if job.scripts else None
    code = code_settings(job, job.job_env(script).plain(), step_argv(job, script))
    if not found and not code.compiles:
        raise Skip("no config or torch.compile call in the code turns torch.compile on")
    # a compile and a loader fork in one process only when one job runs both: read as the
    # whole repo (no job step ties the code), only a loader of the compile's own file
    every = not judges_all(job)
    places = [_config_place(job, *f) for f in found] + \
        [_code_place(job, c, tuple(x for x in code.loaders if every or x.file == c.file))
         for c in code.compiles]
    # this node's triton, CPU and memory are not those of a job for another cluster's
    # nodes (issue 26): only the job's own config and code are judged then, as in a
    # static run, and the report's facts say why
    away = None if job.static else jobs_elsewhere(job)
    if away:
        job.record_fact("torch_compile_unchecked", f"triton and node memory not judged: the "
                        f"nodes are another cluster's: {away}")
    live = not job.static and not away
    for what, loc, mode, base, fork, unseen in places:
        yield from fork
        if not live:
            continue
        triton = job.fact("triton") or {}
        machine = (job.fact("node") or {}).get("machine")
        gpu = _gpu_target(job)
        elsewhere = _runs_in_other_container(job) or \
            (_cpu_torch_here(job) if not triton.get("installed") and (gpu or machine ==
                                                                        "aarch64") else None)
        if elsewhere:
            job.record_fact("torch_compile_unchecked", f"triton not judged: {elsewhere}")
        elif not triton.get("installed") and (gpu or machine == "aarch64"):
            arm = machine == "aarch64"
            yield Finding(
                f"{what} but no triton is installed"
                + (" (aarch64: triton's wheels were x86-only for a long time)" if arm else
                   f" for the {gpu} target") + ": inductor raises TritonMissing at the first "
                "compiled step" + (f" — not shown end to end: {unseen}" if unseen else ""),
                location=loc, fix="Install the triton matching this torch build, or turn "
                "compile off for this node.",
                commands=("pip install triton",) if not arm else (),
                options=(FixOption((run("in the job's Python environment",
                                        "pip install triton"),)),) if not arm else (),
                data=dict(base, rule="triton-missing", machine=machine, target=gpu,
                          **({"unseen": [unseen]} if unseen else {})),
                severity=Severity.WARNING if unseen else None)
        mem = (job.fact("node") or {}).get("memory_bytes")
        if mode and mode.startswith("max-autotune") and mem and \
                mem < min_autotune_memory_gb * 2**30:
            yield Finding(
                f"{what} on a node with {mem / 2**30:.0f} GiB of memory (< "
                f"{min_autotune_memory_gb} GiB): autotuning compiles many kernels in "
                "parallel and can run the node out of memory",
                location=loc, fix="Use mode: default or reduce-overhead on this node.",
                data=dict(base, rule="max-autotune-memory", memory_bytes=mem),
                severity=Severity.WARNING)


def _config_place(job: Job, cfg, _kp, m, key: str, mode: Optional[str]) -> tuple:
    """(what, location, mode, data, fork findings, unseen link) for a config's compile."""
    loc = cfg.location(m, key)
    what = f"{loc.path}:{loc.line} {key}: {mode or 'true'}"
    base = {"config": cfg.rel, "key": key, "mode": mode}
    return (what, loc, mode, base,
            list(_fork_workers(job, cfg, what, base)), "")


def _code_place(job: Job, call: CompileCall, loaders: tuple) -> tuple:
    """The same for a torch.compile call in the code. Under an `if`, compile may be off:
    the doctor cannot see the condition, so its findings are warnings naming it."""
    mode = call.mode.value if call.mode is not None and call.mode.complete and \
        isinstance(call.mode.value, str) else None
    what = f"{call.file}:{call.line} {call.text}"
    base = {"code": call.file, "line": call.line, "mode": mode,
            "backend": _const(call.backend), "fullgraph": _const(call.fullgraph)}
    unseen = (f"{call.text} is called under a condition at {call.file}:{call.line}"
              if call.conditional else "")
    return (what, Location(call.file, call.line), mode, base,
            list(_fork_workers_in_code(job, loaders, what, base)), unseen)


def _const(v: Optional[CodeValue]) -> Optional[object]:
    return v.value if v is not None and v.complete else None


def _runs_in_other_container(job: Job) -> Optional[str]:
    """Why this node's triton says nothing about the job's: it trains in a container."""
    from doctor.job.launch import container_command

    for step in job.all_steps():
        python = step.program[0] if step.program else ""
        if "/" in python and step.container is None:   # a conda env's bin/python, ...
            return (f"the job trains with {python} ({step.where}), another environment than "
                    "this machine's; run the doctor with it to check its triton")
    found = container_command(job.scripts)
    if found is None:
        return None
    script, cmd = found
    here = (job.fact("container") or {}).get("runtime")
    job_kind = "apptainer" if any(os.path.basename(w) in ("singularity", "apptainer")
                                  for w in cmd.argv) else "enroot"
    if here and (here in ("apptainer", "singularity")) == (job_kind == "apptainer") \
            and here not in ("docker", "podman"):
        return None  # the doctor already runs inside the job's kind of container
    return (f"the job trains inside a container ({script.rel}:{cmd.line}); run the doctor "
            "in it to check its triton")


def _cpu_torch_here(job: Job) -> Optional[str]:
    """Why this node's missing triton says nothing about the job's: the torch here is no
    GPU build (or there is none), so the GPU job runs another torch, whose wheel brings
    its own triton (a login node's CPU torch, a laptop)."""
    build = job.fact("torch_build") or {}
    if build.get("cuda") or build.get("hip"):
        return None
    have = f"torch {build['version']} here is a CPU build" if build.get("version") else \
        "no torch is importable here"
    return (f"{have}: the job's GPU torch is another one, with its own triton; run the "
            "doctor with the job's environment to check it")


def _gpu_target(job: Job) -> Optional[str]:
    if job.has_fact("torch_build"):
        build = job.fact("torch_build") or {}
        if build.get("hip"):
            return "ROCm"
        if build.get("cuda") and build.get("available"):
            return "CUDA"
    for s in job.scripts:
        if s.gpus_per_node():
            return "GPU"
    return None


def _fork_workers_in_code(job: Job, loaders: tuple, what: str, base: dict) -> Iterator[Finding]:
    """DataLoader calls in the code that fork workers, next to a compile in the code."""
    py = _python_version(job) if not job.static else ()
    for call in loaders:
        w, ctx = call.get("num_workers"), call.get("multiprocessing_context")
        workers = w.value if w is not None and w.complete else None
        if not isinstance(workers, int) or isinstance(workers, bool) or workers <= 0:
            continue
        context = ctx.value if ctx is not None and ctx.complete else None
        if (ctx is not None and not ctx.complete) or context in SAFE_CONTEXTS or \
                (context is None and py >= (3, 14)):
            continue
        line = (ctx or w).line
        yield Finding(
            f"{what} with {workers} DataLoader workers started by fork at {call.file}:{line}: "
            "forking after triton compiled kills workers with `LLVM ERROR: pthread_join "
            "failed`",
            location=Location(call.file, line),
            fix="Start the workers with spawn: pass multiprocessing_context='spawn' to "
                "DataLoader(...).",
            data=dict(base, rule="fork-workers", num_workers=workers, context=context),
            severity=Severity.WARNING)


def _fork_workers(job: Job, cfg, what: str, base: dict) -> Iterator[Finding]:
    py = _python_version(job) if not job.static else ()
    for _kp, m in cfg.mappings():
        workers = m.get("num_workers")
        if not isinstance(workers, int) or isinstance(workers, bool) or workers <= 0:
            continue
        ctx = m.get("multiprocessing_context")
        if ctx in SAFE_CONTEXTS or (ctx is None and py >= (3, 14)):
            continue   # Python 3.14 made forkserver the default on Linux
        if m.get("persistent_workers") is True and not _EVAL.search(
                " ".join(map(str, _kp))):
            continue   # the training loader forks once, at its first batch: before compiling
        line = cfg.location(m, "multiprocessing_context" if ctx else "num_workers").line
        yield Finding(
            f"{what} with {workers} DataLoader workers started by fork at {cfg.rel}:{line}: "
            "forking after triton compiled kills workers with `LLVM ERROR: pthread_join "
            "failed`",
            location=cfg.location(m, "multiprocessing_context" if ctx else "num_workers"),
            fix="Start the workers with spawn: add `multiprocessing_context: spawn` next to "
                "num_workers (DataLoader(..., multiprocessing_context='spawn')).",
            data=dict(base, rule="fork-workers", num_workers=workers, context=ctx),
            severity=Severity.WARNING)
