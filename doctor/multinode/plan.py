"""The gather plan: this task's rank, the step's nodes, task 0's address and port."""
from __future__ import annotations

import re
import socket
from dataclasses import dataclass

from doctor.errors import InputError
from doctor.multinode.hostlist import expand_hostlist

CROSS_NODE_TAG = "cross-node"
DEFAULT_TIMEOUT_S = 30.0
BEAT_S = 1.0
PORT_BASE, PORT_SPAN = 20000, 10000   # below Linux's ephemeral range (32768+)
KEY = "doctor"


@dataclass
class GatherPlan:
    rank: int
    world: int
    nodes: list            # node names in rank order (one task per node)
    node: str              # this task's node
    job_id: str
    step_id: str
    addr: str
    port: int
    timeout: float = DEFAULT_TIMEOUT_S

    @property
    def prefix(self) -> str:
        return f"{KEY}/{self.job_id}.{self.step_id}"


def wants_gather(env: dict) -> bool:
    """Automatic gathering: an srun step with more than one task, one per node."""
    tasks = env.get("SLURM_STEP_NUM_TASKS", "")
    nodes = env.get("SLURM_STEP_NUM_NODES", "")
    return tasks.isdigit() and int(tasks) > 1 and tasks == nodes and "SLURM_PROCID" in env


def gather_port(job_id: str, step_id: str) -> int:
    """Same on every node of the step; differs between steps and (mostly) between jobs."""
    job = int(re.sub(r"\D", "", job_id) or 0)
    step = int(re.sub(r"\D", "", step_id) or 0)
    return PORT_BASE + (job * 31 + step) % PORT_SPAN


def plan_from_env(env: dict, timeout: float = DEFAULT_TIMEOUT_S) -> GatherPlan:
    """The rendezvous from the Slurm step environment; InputError when it is not one."""
    if not 1 <= timeout <= 3600:  # click's FloatRange lets nan through
        raise InputError(f"--gather-timeout: {timeout!r} is not a number of seconds from 1 "
                         "to 3600")
    missing = [k for k in ("SLURM_JOB_ID", "SLURM_PROCID") if k not in env]
    nodelist = env.get("SLURM_STEP_NODELIST") or env.get("SLURM_JOB_NODELIST")
    if missing or not nodelist:
        raise InputError("--gather needs a Slurm job step (run it with `srun "
                         "--ntasks-per-node=1 doctor run --gather`); missing "
                         + ", ".join(missing + ([] if nodelist else ["SLURM_JOB_NODELIST"])))
    nodes = expand_hostlist(nodelist)
    world = int(env.get("SLURM_STEP_NUM_TASKS") or env.get("SLURM_NTASKS") or len(nodes))
    if world != len(nodes):
        raise InputError(f"--gather needs one task per node: {world} tasks on {len(nodes)} "
                         f"nodes ({nodelist}); use `srun --ntasks-per-node=1`")
    rank = int(env["SLURM_PROCID"])
    step = env.get("SLURM_STEP_ID") or env.get("SLURM_STEPID") or "0"
    port = int(env.get("DOCTOR_GATHER_PORT") or gather_port(env["SLURM_JOB_ID"], step))
    node = env.get("SLURMD_NODENAME") or nodes[rank]
    return GatherPlan(rank=rank, world=world, nodes=nodes, node=node,
                      job_id=env["SLURM_JOB_ID"], step_id=step,
                      addr=env.get("DOCTOR_GATHER_ADDR") or resolve_node(nodes[0]),
                      port=port, timeout=timeout)


def resolve_node(name: str) -> str:
    """A Slurm node name → an address: DNS first, else the controller's NodeAddr."""
    try:
        socket.getaddrinfo(name, None)
        return name
    except OSError:
        pass
    from doctor.proc import run_cmd

    res = run_cmd(["scontrol", "show", "node", name, "-o"], timeout=10)
    m = re.search(r"\bNodeAddr=(\S+)", res.stdout or "")
    return m.group(1) if m else name


