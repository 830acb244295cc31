"""Which cluster's Slurm facts may judge a job (issue 26): the live `scontrol` facts of
this machine's cluster, or the partitions of a site profile. A login node often reads
jobs written for another cluster (someone else's repo): that cluster's limits are not
this one's, and judging the job by them gave false errors ("partition develbooster is
not a partition of this cluster", "--nodes=16 ... TotalNodes 2")."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from doctor.job.context import Job
from doctor.job.platform import container_binds_gpus, srun_asks_gpus
from doctor.proc import run_cmd

SCONTROL_TIMEOUT_S = 3.0
_FIELD = re.compile(r"(?:^|\s)([A-Za-z][\w/:.]*)=")


def _fields(line: str) -> dict:
    """`Key=value Key=value ...` of one `scontrol show -o` line (values may hold spaces)."""
    keys = list(_FIELD.finditer(line))
    return {k[1]: line[k.end():keys[i + 1].start()].strip() if i + 1 < len(keys)
            else line[k.end():].strip() for i, k in enumerate(keys)}


def _gpus(gres: str) -> int:
    """GPUs in a node's Gres field: `gpu:4`, `gpu:a100:4(S:0-1),shard:8` → 4."""
    total = 0
    for item in re.sub(r"\([^)]*\)", "", gres).split(","):
        if item.split(":")[0] == "gpu":
            nums = re.findall(r"\d+", item)
            total += int(nums[-1]) if nums else 1
    return total


def _int(value: Optional[str]) -> Optional[int]:
    return int(value) if value and value.isdigit() else None


def _accounts(value: Optional[str]) -> Optional[list]:
    """An AllowAccounts/DenyAccounts list; None for ALL or an empty field."""
    names = [a for a in (value or "").split(",") if a and a != "(null)"]
    return None if not names or names == ["ALL"] else names


def live_partitions(job: Job) -> Optional[tuple]:
    """(partitions in the profile's field names, default partition) from scontrol, or
    None when Slurm does not answer within 3 s."""
    def ask() -> Optional[tuple]:
        res = run_cmd(["scontrol", "show", "partition", "-o"], timeout=SCONTROL_TIMEOUT_S)
        if res.returncode != 0:
            return None
        nodes = run_cmd(["scontrol", "show", "node", "-o"], timeout=SCONTROL_TIMEOUT_S)
        gpus: dict = {}
        mem: dict = {}   # the largest node of each partition: RealMemory, CPUTot
        for line in nodes.stdout.splitlines() if nodes.returncode == 0 else ():
            f = _fields(line)
            for part in f.get("Partitions", "").split(","):
                gpus[part] = max(gpus.get(part, 0), _gpus(f.get("Gres", "")))
                real, cpus = _int(f.get("RealMemory")), _int(f.get("CPUTot"))
                old = mem.get(part, (0, 0))
                mem[part] = (max(old[0], real or 0), max(old[1], cpus or 0))
        parts, default = {}, None
        for line in res.stdout.splitlines():
            f = _fields(line)
            name = f.get("PartitionName")
            if not name:
                continue
            if f.get("Default") == "YES":
                default = name
            p = {"MaxTime": f.get("MaxTime"), "MaxNodes": _int(f.get("MaxNodes")),
                 "TotalNodes": _int(f.get("TotalNodes")), "State": f.get("State"),
                 "OverSubscribe": (f.get("OverSubscribe") or "").split(":")[0] or None}
            p.update(MaxMemPerNode=_int(f.get("MaxMemPerNode")),
                     MaxMemPerCPU=_int(f.get("MaxMemPerCPU")),
                     AllowAccounts=_accounts(f.get("AllowAccounts")),
                     DenyAccounts=_accounts(f.get("DenyAccounts")))
            if nodes.returncode == 0:
                p["GpusPerNode"] = gpus.get(name, 0)
                real, cpus = mem.get(name, (0, 0))
                p.update(RealMemory=real or None, CPUTot=cpus or None)
            parts[name] = {k: v for k, v in p.items() if v is not None}
        return parts, default

    return None if job.static else job.memo("slurm-partitions-live", ask)


@dataclass(frozen=True)
class Facts:
    """One source of partition limits. `names`: the Slurm ClusterNames it is the facts
    of (empty: not known); `declared`: the settings say the jobs are for that cluster."""
    source: str               # "scontrol" or "site profile"
    parts: dict
    default: Optional[str]
    names: frozenset
    declared: bool
    foreign: bool = False     # the settings name another cluster: it never judges


def declared_clusters(job: Job) -> frozenset:
    """The ClusterNames the settings say the jobs are for: `site.cluster`, and the
    `detect.cluster_names` of a profile the settings chose (not one detected here:
    that says where the doctor runs, not where the job goes)."""
    site = job.site
    names = {site["cluster"]} if site.get("cluster") else set()
    if site.get("source") == "settings" and site.get("profile"):
        from doctor import sites

        names |= set((sites.load(site["profile"]).get("detect") or {})
                     .get("cluster_names") or ())
    return frozenset(names)


def this_cluster(job: Job) -> Optional[str]:
    """This machine's ClusterName (`scontrol show config`), None when Slurm is silent."""
    return (job.slurm_config() or {}).get("ClusterName") or None


def fact_sources(job: Job) -> list:
    """The partition limits that may judge a job, live first."""
    out = []
    declared = declared_clusters(job)
    live = live_partitions(job)
    if live is not None:
        here = this_cluster(job)
        names = frozenset({here} if here else ())
        # `doctor sbatch` submits here: this cluster is the job's, whatever the settings say
        here_too = job.submitting
        same = _meet(names, declared)
        out.append(Facts("scontrol", live[0], live[1], names,
                          declared=here_too or same,
                          foreign=not here_too and bool(declared) and bool(names)
                          and not same))
    profile = job.site.get("partitions") or {}
    if profile:
        site = job.site
        # the settings chose the profile or wrote the partitions: the jobs' cluster;
        # a profile detected from this machine is this machine's cluster
        chosen = (site.get("source") == "settings" and site.get("profile") is not None) \
            or "partitions" in (site.get("overrides") or ())
        names = declared if chosen else frozenset(names_of_detected(site))
        out.append(Facts("site profile", profile, None, names, declared=chosen))
    return out


def names_of_detected(site: dict) -> tuple:
    from doctor import sites

    if not site.get("profile"):
        return ()
    return tuple((sites.load(site["profile"]).get("detect") or {}).get("cluster_names") or ())


def _meet(a, b) -> bool:
    """Whether two sets of cluster names share one. Slurm keeps ClusterName in lower case
    (`LOCAL` in slurm.conf is `local` in `scontrol show config`) and matches `--clusters`
    without case, so `site: {cluster: LOCAL}` names this cluster."""
    return bool({n.casefold() for n in a} & {n.casefold() for n in b})


def cluster_label(f: Facts) -> str:
    return f"cluster {', '.join(repr(n) for n in sorted(f.names))}" if f.names else \
        ("this cluster" if f.source == "scontrol" else "the site profile's cluster")


def _link(script, f: Facts) -> tuple:
    """(2, None) when these facts are the job's cluster's by the job's `--clusters` or the
    settings, (1, None) when only the partition's name ties them (another cluster may
    have a partition of that name), else (0, why not, one line). A job whose partitions
    a cluster lacks was written for another cluster: its limits there say nothing."""
    m = script.get("clusters")
    wanted = {n for n in (m.value.split(",") if m else ()) if n}
    where = "live Slurm" if f.source == "scontrol" else "site profile"
    if wanted and f.names:
        return (2, None) if _meet(wanted, f.names) else (0, (
            f"{script.where(m)} sends the job to another cluster than {cluster_label(f)}, so "
            f"that cluster's {where} does not judge it"))
    if f.foreign:
        return 0, (f"the settings say the jobs are for another cluster than {cluster_label(f)} "
                   "(site.cluster, or the chosen profile's cluster names), so its live Slurm "
                   "does not judge them")
    if f.declared:
        return 2, None
    d = script.get("partition")
    names = [n for n in d.value.split(",") if n] if d else []
    if any(n in f.parts for n in names):
        return 1, None
    if names:
        return 0, (f"partition {d.value}: not a partition of {cluster_label(f)} ({where}); the "
                   "job was written for another cluster, so its limits are not judged here")
    return 0, (f"{script.rel} names no --partition, and nothing says it is for "
               f"{cluster_label(f)}: that cluster's default partition is not judged (say which "
               "cluster the job is for: `site: {cluster: NAME}` in doctor.yaml, or "
               "`#SBATCH --clusters=NAME`)")


def judge(script, sources: list) -> tuple:
    """(the facts that judge the script's job or None, why none does): live Slurm wins
    where it is the job's cluster's (by name, or by the job's partition), else the
    profile where it is."""
    reasons = []
    for f in sources:
        strength, reason = _link(script, f)
        if strength:
            return f, []
        reasons.append(reason)
    return None, reasons


def partition_gpus(job: Job, script) -> Optional[int]:
    """GPUs per node of the script's partition (its default one where the job's cluster is
    known), from the facts that judge the job; None where no such fact is known."""
    f, _ = judge(script, fact_sources(job))
    if f is None:
        return None
    d = script.get("partition")
    names = [n for n in d.value.split(",") if n] if d else ([f.default] if f.default else [])
    gpus = [f.parts[n].get("GpusPerNode") for n in names if n in f.parts]
    return max(gpus) if gpus and None not in gpus else None


def not_this_machines(job: Job, script) -> Optional[str]:
    """None when this machine is plausibly the job's node, so that what is installed here
    (its Python, its packages) may stand for what the job finds there: the doctor runs
    inside a Slurm job, or live Slurm answers here and this cluster is the job's by the
    rules that let its limits judge the job (`_link`: the job's `--clusters` or
    partition, the settings, `doctor sbatch`). Otherwise why not, one line: a login
    node reading someone else's repo must not judge that job by its own software."""
    if job.in_job:
        return None
    live = next((f for f in fact_sources(job) if f.source == "scontrol"), None)
    if live is None:
        return ("--static does not ask Slurm" if job.static else
                "no Slurm answers on this machine") + \
            ", so nothing shows that this machine is on the job's cluster"
    if script is None:
        return f"no job script says the job is for {cluster_label(live)}"
    strength, why = _link(script, live)
    return None if strength else why


def other_cluster(job: Job, script) -> Optional[str]:
    """Why this machine's own limits (its open-file limit, its /dev/shm) may not be the
    job's, one line; None when they are.

    Slurm hands the submitting shell's limits to the job (PropagateResourceLimits), and a
    job tied to no cluster, submitted from here, runs on this cluster's nodes; a run with
    no job script starts the training from this shell. A job tied to a cluster (its
    `--partition` or `--clusters`, the settings' `site.cluster` or chosen profile) that
    nothing shows this machine is on (not_this_machines) runs under that cluster's
    limits, which the doctor does not see here (issue 26: another cluster's facts never
    raise an error). fd-limit-too-low and shm-too-small judge by this one rule."""
    if script is None:
        return None
    why = not_this_machines(job, script)
    if why is None:
        return None
    ties = [script.where(d) for d in (script.get("partition"), script.get("clusters")) if d]
    ties += [f"site.cluster {n!r} in the settings" for n in sorted(declared_clusters(job))]
    if not ties:
        return None
    return f"the job is for the cluster of {' and '.join(ties)}, and {why}"


def jobs_elsewhere(job: Job) -> Optional[str]:
    """Why this machine's node facts (its GPUs, Python, mounts, limits) judge none of the
    job's scripts, one line: every one is for another cluster (other_cluster). None when
    one may run here, or when there is no job script (the training starts from here)."""
    whys = [other_cluster(job, s) for s in job.scripts]
    return whys[0] if whys and all(whys) else None


def asks_gpus(job: Any, script: Any) -> Optional[bool]:
    """Whether a job script asks for GPUs. True: `#SBATCH` --gpus*, --gres=gpu or
    --gpus-per-task, or the same on the training step's srun (`srun --gpus-per-node=8`),
    or a container step that binds the GPUs (`singularity exec --rocm`, `--nv`).
    False: it asks for none and its partition's nodes have none, where that is known (a
    CPU job, even one that runs a GPU build's image for Python). None: it asks for none,
    but its partition's nodes have GPUs, which a site may give without a request."""
    got = script.gpus_per_node()
    if got and got[0] > 0:
        return True
    step = job.step(script)
    if srun_asks_gpus(step) or container_binds_gpus(step):
        return True
    return None if (partition_gpus(job, script) or 0) > 0 else False
