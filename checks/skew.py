"""Cross-node checks: they judge the facts gathered from every node of the step.

They run once, on task 0, after `doctor run --gather` merged the nodes'
reports (doctor/multinode/); they read `job.fact("gathered_nodes")`, the
report's `nodes` with each node's facts. Outside a gathered run they skip.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterator

from doctor import Finding, Skip, check
from doctor.job.context import Job
from doctor.model import FixOption, run
from doctor.multinode.hostlist import compress_hostlist

GATHER_HINT = ("only in a gathered multi-node run: `srun --ntasks-per-node=1 doctor run "
               "--gather` inside the allocation")

# fact key → what a user calls it
SKEWED_FACTS = (
    ("python", "Python version"),
    ("torch_version", "torch version"),
    ("torch_cuda", "torch's CUDA runtime"),
    ("torch_hip", "torch's HIP runtime"),
    ("driver", "GPU driver version"),
    ("gpu_count", "number of visible GPUs"),
    ("gpu_models", "GPU model"),
)


def gathered_nodes(job: Job) -> list:
    try:
        nodes = job.fact("gathered_nodes")
    except KeyError:
        nodes = None
    if not nodes:
        raise Skip(GATHER_HINT)
    return nodes


def _show(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "none"
    return "none" if value is None else str(value)


@check("node-skew", title="The nodes of the job differ in software or GPUs",
       severity="error", tags=("multi-node", "cross-node"), needs=("node",))
def node_skew(job: Job) -> Iterator[Finding]:
    """One node runs a different Python, torch, GPU runtime, driver or GPU count than the rest.

    ## Why it matters
    DDP assumes every rank runs the same code on the same kind of device. A node
    with another torch build or CUDA/HIP runtime pickles, compiles and
    communicates differently: collectives hang or fail with errors that name
    no node, a node that sees 7 GPUs instead of 8 makes `LOCAL_RANK` 7 crash
    after the whole job has started, and a different driver changes numerics.
    Hours later, the job log says only "NCCL timeout".

    ## How to fix
    Run every node from one environment: the same container image, or one venv
    on a shared filesystem activated the same way on all nodes (no `pip
    install` in the job script). Until the odd node is repaired, keep the job
    off it: `sbatch --exclude=NODE`, and tell the admins (`scontrol update
    nodename=NODE state=drain reason="doctor: node-skew"` if you may).
    """
    nodes = [n for n in gathered_nodes(job) if n.get("status") != "missing"]
    if len(nodes) < 2:
        raise Skip("fewer than two nodes reported")
    for key, label in SKEWED_FACTS:
        groups: dict = {}
        for n in nodes:
            value = (n.get("facts") or {}).get(key)
            if value is None:
                continue  # a node that could not tell is not evidence of skew
            groups.setdefault(repr(value), (value, []))[1].append(n["slurm_node"])
        if len(groups) < 2:
            continue
        counts = Counter({k: len(v[1]) for k, v in groups.items()})
        first = next(n["slurm_node"] for n in nodes)
        # the majority is the reference; a tie goes to the group holding task 0's node
        ref = max(groups, key=lambda k: (counts[k], first in groups[k][1]))
        ref_value, ref_nodes = groups[ref]
        values = {compress_hostlist(ns): v for v, ns in groups.values()}
        for k, (value, odd) in groups.items():
            if k == ref:
                continue
            where = compress_hostlist(odd)
            yield Finding(
                f"{label} differs on {where}: {_show(value)} "
                f"(the other {len(ref_nodes)} node(s), {compress_hostlist(ref_nodes)}: "
                f"{_show(ref_value)})",
                fix=f"Run {where} from the same environment as the other nodes, or keep "
                    f"the job off it with `sbatch --exclude={where}`.",
                commands=(f"sbatch --exclude={where} ...",
                          f'scontrol update nodename={where} state=drain '
                          f'reason="doctor: node-skew {key}"'),
                options=(FixOption((run("on the login node: submit without the node",
                                        f"sbatch --exclude={where} ..."),)),
                         FixOption((run("as a Slurm administrator: drain it",
                                        f'scontrol update nodename={where} state=drain '
                                        f'reason="doctor: node-skew {key}"'),))),
                data={"fact": key, "node": where, "value": value, "expected": ref_value,
                      "values": values})


@check("node-missing", title="A node of the job did not report to the doctor",
       severity="error", tags=("multi-node", "cross-node"), needs=("node",))
def node_missing(job: Job) -> Iterator[Finding]:
    """A node of the step never joined the gathering, or stopped answering mid-run.

    ## Why it matters
    The doctor on that node was killed, hung past its deadline, or never
    started: the node is down, out of memory, cannot reach the first node of
    the job over the network, or is so slow that the training step would time
    out there too. A report without it would look clean while that node would
    stall the job's first collective.

    ## How to fix
    Look at the node: `scontrol show node NODE` (state, reason), the job step's
    stderr for that task, and `sacct -j JOB --format=JobID,NodeList,State,ExitCode`.
    Check that nodes reach the first node of the job on the gather port (no
    firewall between compute nodes). Keep the job off a bad node with
    `sbatch --exclude=NODE`; raise `--gather-timeout` if the node was only slow.
    """
    for n in gathered_nodes(job):
        if n.get("status") != "missing":
            continue
        node = n["slurm_node"]
        yield Finding(f"{node} (task {n['rank']}) did not report: {n.get('reason')}",
                      fix=f"Check {node} (`scontrol show node {node}`) and keep the job off "
                          f"it until it is fixed.",
                      commands=(f"scontrol show node {node}", f"sbatch --exclude={node} ..."),
                      options=(FixOption((run("on the login node", f"scontrol show node {node}",
                                              f"sbatch --exclude={node} ..."),)),),
                      data={"node": node, "rank": n["rank"], "reason": n.get("reason")})







