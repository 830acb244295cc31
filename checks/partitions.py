"""The job's partition, time, nodes and GPUs against the partition's limits."""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.context import Job
from doctor.proc import run_cmd

SCONTROL_TIMEOUT_S = 3.0
NOT_UP = ("DOWN", "DRAIN", "INACTIVE")
_FIELD = re.compile(r"(?:^|\s)([A-Za-z][\w/:.]*)=")


def slurm_minutes(value: str) -> Optional[float]:
    """A Slurm time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS) in minutes; None for
    UNLIMITED/INFINITE. A value sbatch would refuse raises ValueError."""
    v = value.strip()
    if v.upper() in ("UNLIMITED", "INFINITE"):
        return None
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", v)
    if not m:
        raise ValueError(value)
    days, a, b, c = m.groups()
    if days is not None:   # D-HH[:MM[:SS]]
        return int(days) * 1440 + int(a) * 60 + int(b or 0) + int(c or 0) / 60
    if c is not None:      # HH:MM:SS
        return int(a) * 60 + int(b) + int(c) / 60
    if b is not None:      # MM:SS
        return int(a) + int(b) / 60
    return float(a)        # MM


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


def live_partitions(job: Job) -> Optional[tuple]:
    """(partitions in the profile's field names, default partition) from scontrol, or
    None when Slurm does not answer within 3 s."""
    def ask() -> Optional[tuple]:
        res = run_cmd(["scontrol", "show", "partition", "-o"], timeout=SCONTROL_TIMEOUT_S)
        if res.returncode != 0:
            return None
        nodes = run_cmd(["scontrol", "show", "node", "-o"], timeout=SCONTROL_TIMEOUT_S)
        gpus: dict = {}
        for line in nodes.stdout.splitlines() if nodes.returncode == 0 else ():
            f = _fields(line)
            for part in f.get("Partitions", "").split(","):
                gpus[part] = max(gpus.get(part, 0), _gpus(f.get("Gres", "")))
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
            if nodes.returncode == 0:
                p["GpusPerNode"] = gpus.get(name, 0)
            parts[name] = {k: v for k, v in p.items() if v is not None}
        return parts, default

    return None if job.static else job.memo("slurm-partitions-live", ask)


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
    """The partition, `--time`, `--nodes` and GPUs per node exceed the partition's limits.

    The limits come from the live `scontrol show partition -o` and `scontrol show node -o`
    (GRES) when Slurm answers within 3 seconds, else from the site profile's `partitions`
    (docs/site-profiles.md); live Slurm wins, and the report's `facts.partitions` lists
    where the two disagree. With `--static` only the profile is read. Without
    `--partition` the live default partition is checked.

    ## Why it matters
    Slurm often accepts such a job and leaves it pending for ever: with
    `EnforcePartLimits=NO` an over-`MaxTime` job waits with reason `PartitionTimeLimit`, a
    job on a down partition with `PartitionDown`. More nodes than the partition allows or
    an unknown partition is refused at submission, after the queue wait of a retry. A job
    asking for one GPU on a whole-node (`OverSubscribe=EXCLUSIVE`) partition is given, and
    billed for, the whole node, and may wait longer for it (seed 002: one GPU on LUMI's
    `standard-g`).

    ## How to fix
    Ask for at most the partition's `MaxTime`, `MaxNodes` and GPUs per node, choose
    another partition (`sinfo -s` lists them), or use the shared partition the finding
    names for a partial node.
    """
    profile = job.site.get("partitions") or {}
    live = live_partitions(job)
    if live is None and not profile:
        raise Skip("no partition limits: " + ("--static does not ask Slurm" if job.static
                   else "scontrol did not answer within 3 s")
                   + ", and the site profile has no `partitions`")
    parts, default = live if live is not None else (profile, None)
    source = "scontrol" if live is not None else "site profile"
    fact: dict = {"source": source}
    if live is not None and profile:
        fact["disagree"] = _disagreements(parts, profile)
    job.record_fact("partitions", fact)
    checked = 0
    for script in job.scripts:
        d = script.get("partition")
        names = [n for n in d.value.split(",") if n] if d else ([default] if default else [])
        if not names:
            continue
        where = script.where(d) if d else "no --partition: the default partition"
        loc = Location(script.rel, d.line or None if d else None)
        checked += 1
        for name in names:   # of several partitions, Slurm takes one that can run it
            for f in _one(script, name, parts, source, where, loc):
                yield f if len(names) == 1 else replace(f, severity=Severity.WARNING)
    if not checked:
        raise Skip("no job script names a partition" + (
            "" if live is not None else ", and the site profile names no default"))


def _one(script, name: str, parts: dict, source: str, where: str,
         loc: Location) -> Iterator[Finding]:
    p = parts.get(name)
    part = f"partition {name} ({where})"
    data = {"partition": name, "source": source}
    if p is None:
        known = ", ".join(sorted(parts))
        yield Finding(
            f"{part} is not a partition of this cluster: sbatch refuses the job"
            if source == "scontrol" else
            f"{part} is not in the site profile (it lists {known})",
            location=loc, fix=f"Use one of: {known}.", commands=("sinfo -s",),
            data=dict(data, rule="unknown", known=sorted(parts)),
            severity=None if source == "scontrol" else Severity.WARNING)
        return
    state = (p.get("State") or "UP").upper()
    if state in NOT_UP:
        yield Finding(f"{part} is {state}: the job would pend with reason PartitionDown"
                      if state != "INACTIVE" else f"{part} is INACTIVE: it accepts no jobs",
                      location=loc, fix="Choose a partition that is UP (`sinfo -s`).",
                      commands=("sinfo -s",), data=dict(data, rule="state", state=state))
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
                          fix=f"Ask for at most {p[key]} nodes, or use a larger partition.",
                          data=dict(data, rule="nodes", nodes=nodes, limit_field=key,
                                    limit=p[key]))
            break
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
                      fix=f"Ask for at most {per_node} GPUs per node.",
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
