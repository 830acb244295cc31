"""Weights & Biases trying to reach the internet from a compute node's container."""
from __future__ import annotations

import ast
import re
from typing import Iterator

from doctor import Finding, Location, Severity, Skip, check, edits
from doctor.job.context import Job
from doctor.model import FixOption, add, run
from doctor.job.env import followed_env
from doctor.job.launch import CONTAINER_TOOLS, container_command, scripts_or_none
from doctor.job.pyread import trees_naming
from doctor.job.sources import nodes, raw_texts

QUIET_MODES = ("offline", "disabled", "dryrun")


def _may_use_wandb(words: set) -> bool:
    """What wandb_usage reads needs an identifier `wandb` (`import wandb`, `from
    wandb.x import y`, `wandb.init()`) or one ending in `WandbLogger` (the imported
    name, or a module's last part): the other modules that mention wandb only in
    longer names (`args.wandb_project`, `WANDB_MODE`) are not parsed
    (tests/test_speed_prefilter.py)."""
    return b"wandb" in words or any(w.endswith(b"WandbLogger") for w in words)


def wandb_usage(job: Job) -> tuple:
    """((file, line) of the first wandb import or None, whether every init is quiet)."""
    first = None
    quiet_inits, inits = 0, 0
    for path, tree in trees_naming(job, raw_texts(job), _may_use_wandb):
        for node in nodes(tree):   # ast.walk's order, listed once per tree
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                mods = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            if first is None and any(m.split(".")[0] == "wandb" or m.endswith("WandbLogger")
                                     for m in mods):
                first = (job.rel(path), getattr(node, "lineno", 1))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr == "init" and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id == "wandb":
                inits += 1
                mode = next((k.value for k in node.keywords if k.arg == "mode"), None)
                if isinstance(mode, ast.Constant) and mode.value in QUIET_MODES:
                    quiet_inits += 1
    return first, inits > 0 and quiet_inits == inits


@check("wandb-online-in-container", title="wandb runs online inside a container on a "
       "site without outbound network", severity="error", tags=("wandb", "container", "network"),
       needs=("repo", "sbatch", "settings"), timeout=20)
def wandb_online_in_container(job: Job) -> Iterator[Finding]:
    """The job runs in a container, imports wandb, and WANDB_MODE is not offline.

    Static: the job script (or a script it runs) calls `singularity`/`apptainer
    exec`, or starts a step with `srun --container-image` (pyxis) or `srun
    --environment` (CSCS Container Engine), or, on a live node, the doctor itself runs in
    such a container; the
    repo's code imports wandb (or Lightning's WandbLogger); and neither the
    job's effective environment (WANDB_MODE, WANDB_DISABLED) nor every
    `wandb.init(mode=...)` call turns it off. The site profile says whether
    compute nodes reach the internet: `site: {compute_network: false}` makes
    this an error, an unset value a warning, and `true` (the settings, or a profile
    such as `clariden`) skips the check, for every kind of container.

    ## Why it matters
    `wandb.init()` on a compute node without outbound network does not fail
    fast: it retries and hangs the rank at start-up (seen on LUMI inside the
    CSC PyTorch containers), while the other ranks wait in their first
    collective until the job's time runs out.

    ## How to fix
    Log offline and sync from the login node afterwards:
    `export WANDB_MODE=offline` in the job script (or the script run inside
    the container), then `wandb sync <run dir>/wandb/offline-run-*`. Use
    `WANDB_MODE=disabled` to turn it off entirely.
    `doctor fix` adds the export after the `#SBATCH` lines (or sets offline where the
    job sets WANDB_MODE).
    """
    network = job.site.get("compute_network")
    if network is True:
        raise Skip("the site profile says compute nodes have outbound network "
                   "(site.compute_network: true)")
    imported, quiet_code = wandb_usage(job)
    if imported is None:
        raise Skip("the repo's code does not import wandb")
    if quiet_code:
        raise Skip("every wandb.init() call in the repo sets an offline/disabled mode")
    live = None
    if not job.static and job.has_fact("container"):
        runtime = (job.fact("container") or {}).get("runtime")
        live = runtime if runtime in CONTAINER_TOOLS else None
    found_container = False
    for script in scripts_or_none(job):
        env, inners = followed_env(job, script)
        scripts = ([script] if script else []) + inners
        hit = container_command(scripts)
        if hit is None and live is None:
            continue
        found_container = True
        mode = (env.text("WANDB_MODE") or "").strip().lower()
        disabled = (env.text("WANDB_DISABLED") or "").strip().lower() in ("true", "1", "yes")
        if mode in QUIET_MODES or disabled:
            continue
        where = f"{hit[0].rel}:{hit[1].line}" if hit else f"this {live} container"
        why = ("compute nodes have no outbound network (site.compute_network: false)"
               if network is False else "compute nodes often have no outbound network "
               "(set site.compute_network in doctor.yaml to say)")
        mode_text = f"WANDB_MODE={mode}" if mode else "WANDB_MODE unset"
        if not mode and env.opaque:   # precision rule: it may be set where the doctor can't read
            mode_text += f" (unless {' or '.join(env.opaque)} sets it)"
        yield Finding(
            f"the job runs in a container ({where}) and imports wandb "
            f"({imported[0]}:{imported[1]}) with {mode_text}: {why}, so wandb.init() "
            "hangs the rank at start-up",
            location=Location(hit[0].rel, hit[1].line) if hit else Location(*imported),
            fix="Log offline in the job script and sync from the login node afterwards.",
            options=(FixOption((
                add(script.rel if script else None, "export WANDB_MODE=offline",
                    where="after the #SBATCH lines"),
                run("on the login node, after the job", "wandb sync wandb/offline-run-*"))),),
            data={"container": where, "wandb_import": f"{imported[0]}:{imported[1]}",
                  "wandb_mode": mode or None, "compute_network": network},
            edits=_offline(job, script, env.get("WANDB_MODE")),
            severity=None if network is False and not (env.opaque and not mode)
            else Severity.WARNING)
    if not found_container:
        raise Skip("the job does not run in a container (singularity/apptainer exec, srun "
                   "--container-image or --environment)")


def _offline(job: Job, script, v) -> tuple:
    """`export WANDB_MODE=offline`: the value replaced where the job sets WANDB_MODE (a
    line that is just `[export] WANDB_MODE=...`), else a new line after the job script's
    #SBATCH lines, where the export reaches the step. None where a file the user does
    not own sets it (a sourced site file would set it again after the new line)."""
    if v is not None and v.path:
        if not v.line or not edits.owned(job, v.path):
            return ()
        lines = edits.read_lines(job, v.path) or []
        body = lines[v.line - 1].rstrip("\r\n") if v.line <= len(lines) else ""
        m = re.fullmatch(r"(\s*(?:export\s+)?WANDB_MODE=)(\S*)(\s*(?:#.*)?)", body)
        word = edits.shell_word(body, m.end(1)) if m else None
        if m is None or word is None or word[0] != m.end(2) or word[1] != v.value:
            return ()
        edit = edits.replace_line(job, v.path, v.line, m.group(1) + "offline" + m.group(3),
                                  "WANDB_MODE=offline")
        return (edit,) if edit else ()
    if not edits.owned(job, script.rel if script else None) or \
            not edits.exports_reach_step(job, script):
        return ()
    edit = edits.insert_after_header(job, script.rel, ["export WANDB_MODE=offline"],
                                     "export WANDB_MODE=offline")
    return (edit,) if edit else ()
