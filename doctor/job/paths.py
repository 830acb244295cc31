"""Where a path the job writes points, and which per-job / per-node parts it has.

Shared by the checks that ask whether a file is shared by the nodes or jobs that
write it (miopen-cache-shared, sqlite-on-shared-fs). The filesystem itself comes
from doctor/probes/mounts.py (site profile, mount table, statfs).
"""
from __future__ import annotations

import os
import re
from typing import Any, Optional

from doctor.probes.mounts import filesystem_of, literal_dir

# a shell variable or command that differs between jobs (sbatch's %j does not: it stays
# literal outside #SBATCH --output/--error)
JOB_VAR = re.compile(r"\$\{?SLURM_(ARRAY_)?JOB_?ID|\$\{?SLURM_ARRAY_TASK_ID|\$\(\s*mktemp")


def value_parts(job: Any, env: Any, v: Any) -> tuple:
    """(parts, batch_node) of an EnvValue: its per-job/node/rank/user/tmp parts as the
    program sees them. sbatch's filename patterns (%j, %N) stay literal; a per-node part
    the batch step expands ($SLURMD_NODENAME, $(hostname) outside srun) is expanded once,
    on the first node, so it is dropped and `batch_node` says so."""
    value = v.value
    parts = set(v.parts) | concrete_parts(value, env, job)
    if "%N" in value or "%n" in value:
        parts.discard("node")
    if ("%j" in value or "%A" in value) and not JOB_VAR.search(value):
        parts.discard("job")
    batch_node = v.source == "sbatch" and not job.in_job and "node" in parts and not v.in_step
    if batch_node:
        parts.discard("node")
    return parts, batch_node


def concrete_parts(value: str, env: Any, job: Any) -> set:
    """In a job the values are concrete: recognise the job id, node name, user in them."""
    parts = set()
    for name, kind in (("SLURM_JOB_ID", "job"), ("SLURMD_NODENAME", "node"),
                       ("USER", "user")):
        known = env.text(name)
        if known and len(known) >= 2 and re.search(rf"(?<![A-Za-z0-9]){re.escape(known)}"
                                                   rf"(?![A-Za-z0-9])", value):
            if kind != "node" or job.in_job:
                parts.add(kind)
    return parts


def known_dir(job: Any, value: str, env: Any, cwd: Optional[str] = None) -> Optional[str]:
    """The part of a path value known before the job runs: `$(mktemp …)` → $TMPDIR; an
    absolute or `~` path → its literal prefix; a relative path → under `cwd` (the step's
    working directory; None: the submit directory, taken as the repo). None when it
    starts with a variable the doctor cannot resolve."""
    if "$(mktemp" in value or "`mktemp" in value:
        return env.text("TMPDIR") or "/tmp"
    base = literal_dir(value, env.text("HOME"))
    if base is None and not value.startswith(("~", "$")):
        base = literal_dir(os.path.join(cwd if cwd and os.path.isabs(cwd) else str(job.repo),
                                        value))
    return base


def filesystem(job: Any, path: str, script: Any = None) -> dict:
    """filesystem_of(path); a static run judges by the site profile or a recorded mount
    table only, never by this machine's mounts (`source: none` when neither says); nor
    does a run for `script`'s job when that job is for another cluster (issue 26: this
    machine's mounts are not that cluster's)."""
    from doctor.job.cluster import other_cluster

    here = not job.static and (script is None or other_cluster(job, script) is None)
    return filesystem_of(job, path, here=here)
