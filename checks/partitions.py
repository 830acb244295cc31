"""The job's partition, time, nodes, GPUs, memory and account against the partition's
limits."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.cluster import Facts, cluster_label, fact_sources, judge
from doctor.job.context import Job
from doctor.job.sbatch import slurm_minutes
from doctor.model import FixOption, run

NOT_UP = ("DOWN", "DRAIN", "INACTIVE")



def slurm_mb(value: str) -> Optional[int]:
    """A Slurm memory size (`4000`, `2G`, `1900MB`, `512k`; M is the default unit) in
    megabytes, rounded up; None for a value sbatch refuses (`Invalid --mem specification`)."""
    m = re.fullmatch(r"(\d+)([KMGT]?)B?", value.strip(), re.IGNORECASE)
    if not m:
        return None
    n, unit = int(m[1]), m[2].upper() or "M"
    return -(-n // 1024) if unit == "K" else n * {"M": 1, "G": 1024, "T": 1024 ** 2}[unit]


def _disagreements(live: dict, profile: dict) -> list:
    out = []
    for name in sorted(set(live) & set(profile)):
        for key, want in profile[name].items():
            have = live[name].get(key)
            if have is not None and str(have).upper() != str(want).upper():
                out.append({"partition": name, "field": key, "scontrol": have, "profile": want})
    return out


def _shared_instead(parts: dict, gpus: int, minutes: Optional[float],
                    nodes: int) -> Optional[str]:
    """A partition of the same source that shares nodes and fits the request."""
    fits = []
    for name, p in parts.items():
        if (p.get("OverSubscribe") or "").upper() in ("EXCLUSIVE", "") or \
                (p.get("State") or "UP").upper() in NOT_UP or p.get("GpusPerNode", 0) < gpus:
            continue
        limit = slurm_minutes(p["MaxTime"]) if p.get("MaxTime") else float("inf")
        limit = float("inf") if limit is None else limit
        if (minutes is not None and minutes > limit) or nodes > (p.get("MaxNodes") or nodes):
            continue
        fits.append((-limit, name))
    return min(fits)[1] if fits else None


@check("slurm-partition-limits", title="The job asks for more than its partition allows",
       severity="error", tags=("slurm", "sbatch", "partition"), needs=("sbatch", "settings"),
       timeout=15)
def slurm_partition_limits(job: Job) -> Iterator[Finding]:
    """The partition, `--time`, `--nodes`, GPUs per node, `--mem*` or `--account` exceed
    the partition's limits.

    The limits come from the live `scontrol show partition -o` and `scontrol show node -o`
    (GRES, RealMemory, CPUTot) when Slurm answers within 3 seconds, else from the site
    profile's `partitions` (docs/site-profiles.md); live Slurm wins, and the report's
    `facts.partitions` lists where the two disagree. With `--static` only the profile is
    read. `--mem`,
    `--mem-per-cpu` (× CPUs per node) and `--mem-per-gpu` (× GPUs per node) are checked
    against the nodes' `RealMemory` and `MaxMemPerNode` (both also from a profile, in MB;
    `--mem=0` is the whole node) and, live only, `MaxMemPerCPU`; `--account` against the
    live `AllowAccounts`/`DenyAccounts` (a job without `--account` is not checked: its
    default account is in the accounting database).

    A cluster's limits judge a job only when the job is for that cluster: its
    `--clusters` (`-M`) names it, `doctor sbatch` submits it to this cluster, the
    settings say so (`site: {cluster: NAME}` with
    Slurm's ClusterName, or a profile chosen in the settings whose `detect.cluster_names`
    hold it; a profile chosen in the settings, or `site.partitions`, is the jobs' cluster),
    or the cluster has the job's partition. A job whose partitions this cluster lacks was
    written for another cluster (a login-node run on someone else's repo): it is not
    judged, and the skip (or `facts.partitions.not_judged`) says which cluster's facts are
    missing. Without `--partition` the default partition is checked only where the job's
    cluster is known that way.

    ## Why it matters
    Slurm often accepts such a job and leaves it pending for ever: with
    `EnforcePartLimits=NO` an over-`MaxTime` job waits with reason `PartitionTimeLimit`, a
    job on a down partition with `PartitionDown`. More nodes than the partition allows or
    an unknown partition is refused at submission, after the queue wait of a retry. A job
    asking for one GPU on a whole-node (`OverSubscribe=EXCLUSIVE`) partition is given, and
    billed for, the whole node, and may wait longer for it (seed 002: one GPU on LUMI's
    `standard-g`). More memory than a node has is refused at submission; above
    `MaxMemPerNode` the job pends with reason `MaxMemPerLimit`; an account the partition
    does not allow never starts there.

    ## How to fix
    Ask for at most the partition's `MaxTime`, `MaxNodes`, GPUs and memory per node, use
    an account it allows, choose another partition (`sinfo -s` lists them), or use the
    shared partition the finding names for a partial node. To have a job without
    `--partition` judged, say which cluster it is for: `site: {cluster: NAME}`.
    """
    sources = fact_sources(job)
    if not sources:
        raise Skip("no partition limits: " + ("--static does not ask Slurm" if job.static
                   else "scontrol did not answer within 3 s")
                   + ", and the site profile has no `partitions`")
    fact: dict = {"source": sources[0].source}
    live = next((f for f in sources if f.source == "scontrol"), None)
    prof = next((f for f in sources if f.source == "site profile"), None)
    if live is not None and prof is not None:
        fact["disagree"] = _disagreements(live.parts, prof.parts)
    checked = 0
    not_judged = []
    for script in job.scripts:
        f, why = judge(script, sources)
        if f is None:
            not_judged.append({"script": script.rel, "reason": "; ".join(why)})
            continue
        fact["source"] = f.source
        d = script.get("partition")
        names = [n for n in d.value.split(",") if n] if d else \
            ([f.default] if f.default else [])
        if not names:
            not_judged.append({"script": script.rel, "reason": f"{script.rel} names no "
                               f"--partition, and the {f.source} names no default"})
            continue
        where = script.where(d) if d else "no --partition: the default partition"
        loc = Location(script.rel, d.line or None if d else None)
        checked += 1
        for name in names:   # of several partitions, Slurm takes one that can run it
            for x in _one(script, name, f, where, loc):
                yield x if len(names) == 1 else replace(x, severity=Severity.WARNING)
    if not_judged:
        fact["not_judged"] = not_judged
    job.record_fact("partitions", fact)
    if not checked:
        if not job.scripts:
            raise Skip("no job script")
        raise Skip("; ".join(dict.fromkeys(n["reason"] for n in not_judged)))


def _one(script, name: str, f: Facts, where: str, loc: Location) -> Iterator[Finding]:
    parts, source = f.parts, f.source
    p = parts.get(name)
    part = f"partition {name} ({where})"
    data = {"partition": name, "source": source}
    if p is None:
        known = ", ".join(sorted(parts))
        yield Finding(
            f"{part} is not a partition of {cluster_label(f)}: sbatch refuses the job"
            if source == "scontrol" else
            f"{part} is not in the site profile (it lists {known})",
            location=loc, fix=f"Use one of: {known}.",
            options=(FixOption((run("on the login node", "sinfo -s"),)),),
            data=dict(data, rule="unknown", known=sorted(parts)),
            severity=None if source == "scontrol" else Severity.WARNING)
        return
    state = (p.get("State") or "UP").upper()
    if state in NOT_UP:
        yield Finding(f"{part} is {state}: the job would pend with reason PartitionDown"
                      if state != "INACTIVE" else f"{part} is INACTIVE: it accepts no jobs",
                      location=loc, fix="Choose a partition that is UP (`sinfo -s`).",
                      options=(FixOption((run("on the login node", "sinfo -s"),)),),
                      data=dict(data, rule="state", state=state))
    t = script.get("time")
    minutes = None
    if t is not None:
        try:   # a job's UNLIMITED is above any finite MaxTime (PartitionTimeLimit)
            minutes = slurm_minutes(t.value)
            minutes = float("inf") if minutes is None else minutes
        except ValueError:
            minutes = None
        limit = slurm_minutes(p["MaxTime"]) if p.get("MaxTime") else None
        if minutes is not None and limit is not None and minutes > limit:
            yield Finding(f"--time={t.value} ({script.where(t)}) is above {part}'s "
                          f"MaxTime {p['MaxTime']}: the job would pend with reason "
                          "PartitionTimeLimit", location=Location(script.rel, t.line or None),
                          fix=f"Ask for at most --time={p['MaxTime']}, or use a partition "
                              "with a longer MaxTime.",
                          data=dict(data, rule="time", time=t.value, max_time=p["MaxTime"]))
    nd = script.get("nodes")
    nodes = script.nodes or 1
    for key in ("MaxNodes", "TotalNodes"):
        if nd is not None and p.get(key) is not None and nodes > p[key]:
            yield Finding(f"--nodes={nd.value} ({script.where(nd)}) is more than {part}'s "
                          f"{key} {p[key]}", location=Location(script.rel, nd.line or None),
                          fix=f"Ask for at most {p[key]} nodes, or use a larger partition."
                          if p[key] > 0 else f"{name} gives jobs no nodes: use another "
                          "partition (`sinfo -s` lists them).",
                          data=dict(data, rule="nodes", nodes=nodes, limit_field=key,
                                    limit=p[key]))
            break
    yield from _memory(script, part, p, data)
    yield from _account(script, part, p, data)
    gpn = script.gpus_per_node()
    per_node = p.get("GpusPerNode")
    if gpn is None or per_node is None:
        return
    gpus, gd = gpn
    spread = gd.key == "gpus" and nd is None   # --gpus without --nodes: Slurm may spread
    if gpus > per_node and not spread:
        yield Finding(f"{gpus} GPUs per node ({script.where(gd)}) is more than the nodes "
                      f"of {part} have ({per_node})",
                      location=Location(script.rel, gd.line or None),
                      # a partition without GPUs: "at most 0" is no advice for a GPU job
                      fix=f"Ask for at most {per_node} GPUs per node, or use a partition "
                          "with more GPUs per node." if per_node > 0 else
                          f"{name} has no GPUs: use a partition with GPUs (`sinfo -o "
                          "'%P %G'` lists each partition's GPUs), or drop the GPU request "
                          "if the job runs on CPUs.",
                      data=dict(data, rule="gpus", gpus_per_node=gpus, available=per_node))
    elif 0 < gpus < per_node and (p.get("OverSubscribe") or "").upper() == "EXCLUSIVE":
        shared = _shared_instead(parts, gpus, minutes, nodes)
        yield Finding(f"{gpus} GPU(s) per node ({script.where(gd)}) on {part}, "
                      f"which gives jobs whole nodes of {per_node} GPUs: the job holds (and "
                      "is billed for) the whole node" + (
                          f"; partition {shared} shares nodes" if shared else ""),
                      location=Location(script.rel, gd.line or None),
                      fix=f"Use --partition={shared} for a partial node." if shared else
                          f"Ask for {per_node} GPUs per node, or a partition that shares nodes.",
                      data=dict(data, rule="partial-node", gpus_per_node=gpus,
                                node_gpus=per_node, shared=shared),
                      severity=Severity.WARNING)


def _memory(script, part: str, p: dict, data: dict) -> Iterator[Finding]:
    """--mem, --mem-per-cpu or --mem-per-gpu that no node of the partition can give."""
    d = script.get("mem", "mem-per-cpu", "mem-per-gpu")
    mb = slurm_mb(d.value) if d else None
    if d is None or mb is None:
        return
    cpus = (script.cpus_per_task or 1) * (script.ntasks_per_node or 1)
    gpn = script.gpus_per_node()
    per_node = mb * {"mem": 1, "mem-per-cpu": cpus,
                     "mem-per-gpu": gpn[0] if gpn else 1}[d.key]
    real, max_node, max_cpu = p.get("RealMemory"), p.get("MaxMemPerNode"), p.get("MaxMemPerCPU")
    ask = f"--{d.key}={d.value} ({script.where(d)})" + (
        f", {per_node} MB per node," if per_node != mb else "")
    loc = Location(script.rel, d.line or None)
    data = dict(data, rule="memory", option=d.key, mb_per_node=per_node)
    if mb == 0:   # --mem=0: all the memory of the node; MaxMemPerNode still applies
        per_node = (real or 0) if d.key == "mem" else 0
    if real and per_node > real:
        yield Finding(f"{ask} is more than the nodes of {part} have (RealMemory {real} MB): "
                      "sbatch refuses it (Memory specification can not be satisfied)",
                      location=loc, fix=f"Ask for at most --mem={real}M per node, or use a "
                                        "partition with larger nodes.",
                      data=dict(data, limit_field="RealMemory", limit=real))
    elif max_node and per_node and per_node > max_node:
        yield Finding(f"{ask} is above {part}'s MaxMemPerNode {max_node} MB: the job would "
                      "pend with reason MaxMemPerLimit",
                      location=loc, fix=f"Ask for at most --mem={max_node}M.",
                      data=dict(data, limit_field="MaxMemPerNode", limit=max_node))
    elif max_cpu and p.get("CPUTot") and d.key != "mem-per-gpu" and mb:
        # Slurm gives the job more CPUs to stay within MaxMemPerCPU
        need = -(-mb // max_cpu) * (cpus if d.key == "mem-per-cpu" else 1)
        if need > p["CPUTot"]:
            yield Finding(f"{ask} needs {need} CPUs per node under {part}'s MaxMemPerCPU "
                          f"{max_cpu} MB, and its nodes have {p['CPUTot']}: sbatch refuses it "
                          "(CPU count per node can not be satisfied)",
                          location=loc, fix=f"Ask for at most {max_cpu * p['CPUTot']} MB per "
                                            "node, or use a partition without MaxMemPerCPU.",
                          data=dict(data, limit_field="MaxMemPerCPU", limit=max_cpu,
                                    cpus_needed=need, cpus=p["CPUTot"]))


def _account(script, part: str, p: dict, data: dict) -> Iterator[Finding]:
    """--account that the partition's AllowAccounts or DenyAccounts shuts out."""
    d = script.get("account")
    if d is None or not d.value:   # the default account is the accounting database's
        return
    allow, deny = p.get("AllowAccounts"), p.get("DenyAccounts")
    acct = d.value.lower()   # Slurm's account names are lower case
    if allow:   # Slurm ignores DenyAccounts when AllowAccounts is set
        bad = acct not in [a.lower() for a in allow]
        why = f"not in {part}'s AllowAccounts ({','.join(allow)})"
    else:
        bad = bool(deny) and acct in [a.lower() for a in deny or ()]
        why = f"in {part}'s DenyAccounts ({','.join(deny or ())})"
    if bad:
        yield Finding(f"--account={d.value} ({script.where(d)}) is {why}: Slurm never starts "
                      "the job there", location=Location(script.rel, d.line or None),
                      fix="Use an account the partition allows (`sacctmgr show assoc "
                          "user=$USER`), or another partition.",
                      options=(FixOption((run("on the login node", "sacctmgr show assoc "
                                              "user=$USER format=account,partition"),)),),
                      data=dict(data, rule="account", account=d.value,
                                limit_field="AllowAccounts" if allow else "DenyAccounts"))
