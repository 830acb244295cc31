"""The Slurm view of the job, from the SLURM_* variables of the environment (in-job only).

Outside an allocation (no SLURM_JOB_ID) the fact is None: the login node's
view of a job comes from its sbatch script, not from here.
"""
from __future__ import annotations

import re
from typing import Optional

from doctor.probes import probe


def _int(value: Optional[str]) -> Optional[int]:
    if value is None:
        return None
    m = re.match(r"^\s*(\d+)", value)
    return int(m.group(1)) if m else None


def gpus_on_node(env: dict) -> Optional[int]:
    """GPUs Slurm gave this node: SLURM_GPUS_ON_NODE, else the count of SLURM_*_GPUS ids."""
    if env.get("SLURM_GPUS_ON_NODE", "").strip().isdigit():
        return int(env["SLURM_GPUS_ON_NODE"])
    for name in ("SLURM_STEP_GPUS", "SLURM_JOB_GPUS"):
        ids = [x for x in env.get(name, "").split(",") if x.strip()]
        if ids:
            return len(ids)
    return None


def slurm_view(env: dict) -> Optional[dict]:
    """nodes, tasks, GPUs allotted, partition, job id, node: None outside a job."""
    if not env.get("SLURM_JOB_ID"):
        return None
    return {
        "job_id": env.get("SLURM_JOB_ID"),
        "job_name": env.get("SLURM_JOB_NAME"),
        "partition": env.get("SLURM_JOB_PARTITION"),
        "node": env.get("SLURMD_NODENAME"),
        "node_list": env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST"),
        "nodes": _int(env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES")),
        "node_id": _int(env.get("SLURM_NODEID")),
        "tasks": _int(env.get("SLURM_NTASKS") or env.get("SLURM_NPROCS")),
        "tasks_per_node": env.get("SLURM_TASKS_PER_NODE"),
        "cpus_on_node": _int(env.get("SLURM_CPUS_ON_NODE")),
        "gpus_on_node": gpus_on_node(env),
        "gpus": env.get("SLURM_GPUS"),
        "gpus_per_node": env.get("SLURM_GPUS_PER_NODE"),
        "step_id": env.get("SLURM_STEP_ID"),
        "proc_id": _int(env.get("SLURM_PROCID")),
        "in_step": "SLURM_STEP_ID" in env,
    }


@probe("slurm")
def slurm(job) -> Optional[dict]:
    return slurm_view(job.login_env)
