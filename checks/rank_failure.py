"""A multi-task srun step of ranks without --kill-on-bad-exit: one rank's error becomes
every other rank's wait."""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.closure import step_files
from doctor.job.cluster import not_this_machines
from doctor.job.context import Job
from doctor.job.pyread import dotted, nodes
from doctor.job.sbatch import SbatchScript
from doctor.job.sources import trees_mentioning
from doctor.model import FixOption, add, change

CHECK_ID = "rank-failure-hangs-job"
# Launchers that start and watch their own worker processes: a worker's failure ends its
# launcher's group (torchrun's agent stops the other local workers), so the srun task is
# the launcher, not a rank. Not this case.
OWN_GROUPS = ("torchrun", "accelerate", "deepspeed", "mpirun")
_K_ON = re.compile(r"^(-K|-K1|--kill-on-bad-exit|--kill-on-bad-exit=1)$")
_K_OFF = re.compile(r"^(-K0|--kill-on-bad-exit=0)$")


def kill_on_bad_exit(job: Job) -> Optional[str]:
    """This cluster's KillOnBadExit (`scontrol show config`): "0", "1", or None when the
    run is static or Slurm does not answer."""
    value = (job.slurm_config() or {}).get("KillOnBadExit")
    return value if value and value.isdigit() else None


def _srun_k(argv: tuple) -> Optional[bool]:
    """True/False when srun's own options turn --kill-on-bad-exit on/off, else None."""
    said = None
    for a in argv[1:]:
        if _K_ON.match(a):
            said = True
        elif _K_OFF.match(a):
            said = False
    return said


def pg_calls(job: Job, files: list) -> list:
    """["file:line (what)"] where the step's code starts a process group: a call of
    init_process_group or deepspeed.init_distributed, or a Lightning Trainer (which
    calls init_process_group with one rank per srun task under Slurm)."""
    rels = {job.rel(p) for p in files}
    out = []
    for path, tree in trees_mentioning(job, b"init_process_group", b"init_distributed",
                                       b"Trainer", b"LightningCLI"):
        rel = job.rel(path)
        if rel not in rels:
            continue
        lightning = any(
            isinstance(n, (ast.Import, ast.ImportFrom)) and any(
                m.split(".")[0] in ("lightning", "pytorch_lightning") for m in (
                    [a.name for a in n.names] if isinstance(n, ast.Import) else [n.module or ""]))
            for n in nodes(tree))
        for n in nodes(tree):
            if not isinstance(n, ast.Call):
                continue
            last = dotted(n.func).rsplit(".", 1)[-1]
            if last == "init_process_group" or (last == "init_distributed"
                                                and "deepspeed" in dotted(n.func)):
                out.append(f"{rel}:{n.lineno} ({last})")
            elif last in ("Trainer", "LightningCLI") and lightning:
                out.append(f"{rel}:{n.lineno} (Lightning's {last})")
    order = {job.rel(p): i for i, p in enumerate(files)}   # the entry first, then its imports
    return sorted(set(out), key=lambda c: (order.get(c.split(":")[0], len(order)), c))


def config_trainers(job: Job, script: SbatchScript) -> list:
    """["config (Lightning's Trainer)"] where a config the script's training step loads
    (named on its command line or composed by Hydra: doctor/job/stepconfigs.py)
    instantiates a Lightning Trainer (Hydra's `_target_`, LightningCLI's `class_path`):
    the code builds it with `instantiate(cfg.trainer)`, no `Trainer(` call in sight."""
    from doctor.job.closure import _read_targets   # the closure's reading of a config
    from doctor.job.stepconfigs import step_configs

    sc = step_configs(job, script)
    paths = [Path(p) for p, _, _ in sc.needed] + [Path(p) for ps in sc.replaces for p in ps]
    return sorted({f"{rel} (Lightning's Trainer, {t})" for t, rel in _read_targets(job, paths)
                   if t.split(".")[0] in ("lightning", "pytorch_lightning")
                   and t.rsplit(".", 1)[-1] == "Trainer"})


@check(CHECK_ID, title="One rank's error leaves the other ranks waiting (srun without -K)",
       severity="error", tags=("slurm", "distributed"), needs=("sbatch",), timeout=20)
def rank_failure_hangs_job(job: Job) -> Iterator[Finding]:
    """A multi-task `srun` step whose tasks are the ranks of a process group, without
    `--kill-on-bad-exit` (`-K`).

    The step: the training step of each job script, launched by `srun` with more than
    one task (nodes × tasks per node), each task a Python rank (no torchrun,
    accelerate, deepspeed or mpirun between srun and Python: those launchers watch
    their own workers and share a rendezvous; on the local Slurm, a torchrun worker
    failing before `init_process_group` on one of two nodes ended the step in 10 s
    without `-K`), and the step's code (its entry and the repo modules it imports)
    calls `init_process_group`, `deepspeed.init_distributed`, or builds a Lightning
    `Trainer` (a `Trainer(` or `LightningCLI(` call, or a config the step loads that
    instantiates one: Hydra's `_target_`, LightningCLI's `class_path`). Slurm ends such
    a step when one task exits non-zero only with `srun -K` (`--kill-on-bad-exit`, or
    `SLURM_KILL_BAD_EXIT=1` in the environment) or
    `KillOnBadExit=1` in the cluster's slurm.conf. An error when `scontrol show config`
    on this machine says `KillOnBadExit=0` and the job is for this cluster (the rule
    fd-limit-too-low uses: the doctor runs in the job, or the job's `--partition`,
    `--clusters` or the settings tie it here); a warning when the cluster's setting is
    not known (`--static`, another cluster's job). Not reported: `-K`/`-K1`, a single
    task, a step whose code is not in the repo or starts no process group. An entry
    under a directory variable the doctor cannot read (`${MEGATRON_CODE_DIR}/pretrain_gpt.py`)
    is read as the repo's file of that name, where there is one: a warning at most.

    ## Why it matters
    Without `-K`, Slurm lets the other tasks of the step run on when one exits with an
    error. A rank that fails before it joins the process group (a data file missing on
    one node, an import error, out of memory while loading) leaves the others waiting in
    `init_process_group` until its timeout (torch's default: 10 minutes for NCCL, 30 for
    gloo); with NCCL, a rank that dies later leaves the others in their collective until
    the watchdog's timeout. The job holds every node meanwhile, and the log's last lines
    are the timeouts, not the error. Checked on the local two-node Slurm with a 2-task
    gloo step and a 30 s process-group timeout: rank 1 raising before
    `init_process_group` ends the step after 33 s without `-K` (rank 0: `Timed out
    after 31 seconds waiting for clients. 1/2 clients joined.`), after 2 s with `-K`.
    (With gloo, a rank that raises after joining closes its connections, and the others
    fail at once either way.)

    ## How to fix
    `srun --kill-on-bad-exit=1 …` (or `-K`), or `export SLURM_KILL_BAD_EXIT=1` before
    the step; a site can set `KillOnBadExit=1` in slurm.conf. `doctor fix` does not edit
    the line (the srun options may be in a variable); the fix says which line.
    """
    judged = False
    for script in job.scripts:
        step = job.step(script)
        srun = step.launcher("srun")
        if not step.is_training or srun is None:
            continue
        if any(step.launcher(k) is not None for k in OWN_GROUPS):
            continue
        nodes = step.nodes.value or 1
        per = step.tasks_per_node.value
        if per is None or step.procs_per_task.value not in (None, 1):
            continue
        tasks = nodes * per
        if tasks < 2:
            continue
        files, guess = step_files(job, step), None
        if not files:
            files, guess = _guessed_files(job, step)
        calls = (pg_calls(job, files) or config_trainers(job, script)) if files else []
        if not calls:
            continue
        judged = True
        said = _srun_k(srun.argv)
        env = step.env.get("SLURM_KILL_BAD_EXIT")
        if said is True or (said is None and env is not None and str(env.value) == "1"):
            continue
        found = _finding(job, script, step, srun, tasks, calls, said, env, guess)
        if found is not None:
            yield found
    if not judged:
        raise Skip("no job script runs a multi-task srun step whose ranks start a process "
                   "group in the repo's code")


def _guessed_files(job: Job, step) -> tuple:
    """([Path], the entry as written) for a step whose entry is `$DIR/x.py` with DIR a
    variable the doctor cannot read, taken as the repo's x.py where there is one (the
    closure's guess: `${MEGATRON_CODE_DIR}/pretrain_gpt.py`); ([], None) otherwise."""
    from doctor.job.closure import _closure, _guessed   # the closure's own guess

    rel = _guessed(job, step)
    if rel is None:
        return [], None
    files = job.memo(("rank-failure-guessed", rel, step.cwd),
                     lambda: _closure(job, [(job.repo / rel, step)]))
    return files, f"{step.entry} (read as this checkout's {rel})"


def _finding(job: Job, script: SbatchScript, step, srun, tasks: int, calls: list,
             said: Optional[bool], env, guess: Optional[str] = None) -> Optional[Finding]:
    where = f"{srun.path}:{srun.line}"
    count = f"{tasks} tasks ({step.nodes.value or 1} node(s) × {step.tasks_per_node.value} " \
            "per node)"
    off = ("`-K0`/`--kill-on-bad-exit=0`" if said is False else
           f"SLURM_KILL_BAD_EXIT={env.value}" if env is not None and env.value is not None
           else "no `--kill-on-bad-exit` (`-K`)")
    cluster = kill_on_bad_exit(job)
    other = not_this_machines(job, script) if cluster is not None else None
    if said is False:
        sev, how = Severity.ERROR, "the step turns it off itself"
    elif cluster == "1" and other is None:
        return None
    elif cluster == "0" and other is None:
        sev, how = Severity.ERROR, "and KillOnBadExit=0 on this cluster (scontrol show config)"
    else:
        sev = Severity.WARNING
        why = "--static does not ask Slurm" if job.static else \
            "no Slurm answered here" if cluster is None else \
            f"this cluster's is {cluster}, but {other}"
        how = f"and the job's cluster's KillOnBadExit is not known ({why}; Slurm's default is 0)"
    if guess is not None:     # the link from the step to this code is a guess
        sev = Severity.WARNING
        how += f"; the entry is {guess}, if that directory is this checkout"
    first = calls[0] + (f" and {len(calls) - 1} more" if len(calls) > 1 else "")
    msg = (f"the srun step at {where} runs {count}, each a rank of the process group "
           f"started at {first}, with {off}, {how}: when one rank fails before it joins the "
           "group (a file missing on one node, an import error), the others wait in "
           "init_process_group until its timeout, and with NCCL a rank that dies later "
           "leaves the others in their collective until the watchdog's timeout, holding "
           "every node; with -K Slurm ends the step when a task exits with an error")
    line = srun.line
    options: tuple = (FixOption((add(script.rel if srun.path == script.rel else srun.path,
                              "export SLURM_KILL_BAD_EXIT=1", where=f"before line {line}"),),
                         "in the environment of the step"),)
    text = _line_text(job, srun.path, line)
    if text is not None and re.search(r"(^|\s)srun\s", text) and said is None:
        new = re.sub(r"(^|\s)srun\s", lambda m: f"{m.group(1)}srun --kill-on-bad-exit=1 ", text,
                     count=1)
        options = (FixOption((change(srun.path, line, new),), "on the srun line"),) + options
    return Finding(msg, location=Location(srun.path, line), severity=sev,
                   fix="Pass `--kill-on-bad-exit=1` (`-K`) to srun, or export "
                       "SLURM_KILL_BAD_EXIT=1 before the step.",
                   options=options,
                   data={"tasks": tasks, "process_group": calls,
                         "cluster_kill_on_bad_exit": cluster, "step": step.where})


def _line_text(job: Job, rel: str, line: int) -> Optional[str]:
    from doctor import edits

    lines = edits.read_lines(job, rel) or []
    return lines[line - 1].rstrip("\r\n") if 0 < line <= len(lines) else None
