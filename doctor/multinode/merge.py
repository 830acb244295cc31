"""The gathered run: every node's checks, the node facts they compare, and the
merged report (worst status per check, findings folded across nodes)."""
from __future__ import annotations

import json
import re
import socket
import sys
import time
from functools import lru_cache
from typing import Any, Callable, Iterable, Optional

from doctor.errors import InputError
from doctor.model import (Finding, FixOption, Location, Report, Result, Severity, Status,
                          Suppressed)
from doctor.registry import CROSS_NODE, NODE_FACTS
from doctor.multinode.plan import CROSS_NODE_TAG, GatherPlan
from doctor.multinode.link import Link, collect, pack, unpack
from doctor.multinode.hostlist import compress_hostlist

def _driver_version() -> Optional[str]:
    for path, pat in (("/proc/driver/nvidia/version", r"Kernel Module\s+(\S+)"),
                      ("/sys/module/amdgpu/version", r"(\S+)")):
        try:
            with open(path) as fh:
                m = re.search(pat, fh.read())
            if m:
                return m.group(1)
        except OSError:
            continue
    return None


def node_facts(job: Any) -> dict:
    """What node-skew compares, from the node's probes (memoized: free if a check used them)."""
    build = _safe(lambda: job.fact("torch_build")) or {}
    smi = _safe(lambda: job.fact("smi")) or {}
    names = [d.get("name") for d in build.get("devices") or []] or \
        [g.get("name") for g in smi.get("gpus") or []]
    facts = {
        "python": _safe(lambda: job.fact("python")),
        "torch_version": build.get("version") or _safe(lambda: job.fact("torch_installed")),
        "torch_cuda": build.get("cuda"),
        "torch_hip": build.get("hip"),
        "driver": _driver_version(),
        "gpu_count": max(build.get("device_count") or 0, len(smi.get("gpus") or [])),
        "gpu_models": sorted({n for n in names if n}),
    }
    for name, fn in NODE_FACTS.items():
        facts[name] = _safe(lambda fn=fn: fn(job))
    return facts


def fake_facts(env: dict) -> dict:
    """The test-only DOCTOR_FAKE_FACTS override (a JSON object), or {}."""
    raw = env.get("DOCTOR_FAKE_FACTS")
    if not raw:
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise InputError(f"DOCTOR_FAKE_FACTS is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise InputError("DOCTOR_FAKE_FACTS must be a JSON object")
    return value


def _safe(fn: Callable) -> Any:
    try:
        return fn()
    except Exception:
        return None


def run_gathered(job: Any, plan: GatherPlan, *, only: Iterable[str] = (),
                 skip: Iterable[str] = (), static: bool = False, no_smoke: bool = False,
                 fail_on: Severity = Severity.ERROR, on_done: Any = None) -> tuple:
    """(report, writes): rank 0 gets the merged report; other ranks their own, writes=False
    unless rank 0 could not be reached (then they print their own report as a fallback)."""
    from doctor.runner import chosen_checks, run_checks

    t0 = time.monotonic()
    if plan.rank == 0:  # read before task 0 raises its open-file limit for the store
        _safe(lambda: job.fact("limits"))
    link = Link(plan)
    fake = fake_facts(job.login_env)
    chosen = chosen_checks(job, only=only, skip=skip, static=static, no_smoke=no_smoke)
    local_specs = [s for s in chosen if CROSS_NODE_TAG not in s.tags]
    report = run_checks(job, local_specs, fail_on=fail_on, on_done=on_done)
    facts = {**node_facts(job), **fake}
    report.extra["node"] = {"slurm_node": plan.node, "hostname": socket.gethostname(),
                            "rank": plan.rank, "duration_s": round(time.monotonic() - t0, 3),
                            "facts": facts, "fake_facts": sorted(fake)}
    doc = report.doc()
    local_done = time.monotonic()
    hold = float(job.login_env.get("DOCTOR_GATHER_TEST_HOLD_S") or 0)
    if hold:  # test-only: a node that is still busy (to be killed mid-run by the tests)
        time.sleep(hold)
    if plan.rank != 0:
        try:
            if not link.ready():
                raise RuntimeError(link.error or "no connection")
            link.send(pack(doc))
            return report, False
        except Exception as exc:
            print(f"doctor: gather: {link.error or exc}; reporting this node only",
                  file=sys.stderr)
            report.extra.pop("node", None)
            return report, True
        finally:
            link.close()
    try:
        if link.ready():  # the join deadline runs from when task 0 could accept joins
            if link.fd_warning:
                print(f"doctor: gather: {link.fd_warning}", file=sys.stderr)
            docs, missing = collect(link, link.opened_at, local_done)
        else:
            docs = {}
            missing = {r: f"not gathered: rank 0 {link.error}" for r in range(1, plan.world)}
    finally:
        link.close()
    docs[0] = unpack(pack(doc))   # the same form as the other nodes' documents
    cross = [s for s in chosen if CROSS_NODE_TAG in s.tags]
    return merge(job, plan, report, docs, missing, cross, t0), True


STATUS_ORDER = {Status.SKIP: 0, Status.PASS: 1, Status.ERROR: 2, Status.FAIL: 3}


def node_entries(plan: GatherPlan, docs: dict, missing: dict) -> list:
    """The report's `nodes`, in rank order; what cross-node checks read."""
    out = []
    for r in range(plan.world):
        if r in docs:
            n = docs[r].get("node") or {}
            out.append({"slurm_node": n.get("slurm_node") or plan.nodes[r],
                        "hostname": n.get("hostname"), "rank": r,
                        "status": docs[r]["summary"]["status"],
                        "duration_s": n.get("duration_s", docs[r]["duration_s"]),
                        "reason": None, "facts": n.get("facts") or {},
                        "fake_facts": n.get("fake_facts") or []})
        else:
            out.append({"slurm_node": plan.nodes[r], "hostname": None, "rank": r,
                        "status": "missing", "duration_s": None,
                        "reason": missing.get(r, "no report"), "facts": {},
                        "fake_facts": []})
    return out


def merge(job: Any, plan: GatherPlan, local: Report, docs: dict, missing: dict,
          cross_specs: list, t0: float) -> Report:
    """One report: per check the worst status over the nodes, findings tagged with data.node."""
    from doctor.registry import all_checks
    from doctor.runner import run_checks

    nodes = node_entries(plan, docs, missing)
    results = merge_results({n["rank"]: n["slurm_node"] for n in nodes}, docs)
    job.record_fact("gathered_nodes", nodes)
    if cross_specs:
        results += run_checks(job, cross_specs, fail_on=local.fail_on).results
    for res in results:
        hook = CROSS_NODE.get(res.id)
        if hook is not None and res.status is not Status.ERROR:
            extra = list(hook(nodes) or [])
            if extra:
                res.findings += extra
                res.status = Status.FAIL
                res.severity = max([res.severity] + [f.severity or res.severity
                                                     for f in extra])
    order = {s.id: i for i, s in enumerate(all_checks())}
    seen: set = set()
    unique = []
    for res in results:
        if res.id not in seen:
            seen.add(res.id)
            unique.append(res)
    unique.sort(key=lambda r: order.get(r.id, len(order)))
    public_nodes = [{k: n[k] for k in ("slurm_node", "hostname", "rank", "status",
                                       "duration_s", "reason")}
                    | ({"fake_facts": n["fake_facts"]} if n["fake_facts"] else {})
                    for n in nodes]
    facts = dict(local.facts)
    facts["nodes"] = {n["slurm_node"]: n["facts"] for n in nodes if n["status"] != "missing"}
    return Report(started_at=local.started_at, duration_s=time.monotonic() - t0,
                  host=local.host, inputs=local.inputs, results=unique, facts=facts,
                  fail_on=local.fail_on, version=local.version,
                  extra={"nodes": public_nodes}, secrets=local.secrets)


def merge_results(name_of: dict, docs: dict) -> list:
    """{rank: node name}, {rank: unpacked document} → one Result per check. A result text
    that many nodes share (link.pack) is parsed and folded once, with all their names."""
    parsed: dict = {}      # result text → its doc
    per_check: dict = {}   # check id → {result text: [node names]}
    longest: dict = {}     # check id → the longest duration on any node
    for r in sorted(docs):
        node = name_of[r]
        for text, took in zip(docs[r]["results"], docs[r]["durations"]):
            res = parsed.get(text)
            if res is None:
                res = parsed[text] = json.loads(text)
            rid = res["id"]
            per_check.setdefault(rid, {}).setdefault(text, []).append(node)
            if took is not None and took > longest.get(rid, -1.0):
                longest[rid] = took
    return [merge_result(rid, [(nodes, parsed[text]) for text, nodes in groups.items()],
                         longest.get(rid, 0.0))
            for rid, groups in per_check.items()]


@lru_cache(maxsize=32)
def _label(names: tuple) -> str:
    return compress_hostlist(names)


def merge_result(check_id: str, groups: list, duration: float) -> Result:
    """[(node names, result doc)] → one Result: worst status, identical findings folded."""
    statuses = [Status(r["status"]) for _, r in groups]
    status = max(statuses, key=lambda s: STATUS_ORDER[s])
    severity = max(Severity.parse(r["severity"]) for _, r in groups)
    findings = [_finding(f, label) for f, label in _folded(groups, "findings")]
    # what an inline comment, per-file-ignores or a baseline accepted on the nodes
    suppressed = [Suppressed(_finding(f, label), f["suppressed_by"], f["reason"])
                  for f, label in _folded(groups, "suppressed")]
    reasons: dict = {}
    for nodes, r in groups:
        if r.get("reason"):
            reasons.setdefault(r["reason"], []).extend(nodes)
    reason = "; ".join(f"{_label(tuple(ns))}: {why}" for why, ns in reasons.items()) or None
    if status in (Status.SKIP, Status.ERROR) and reason is None:
        reason = "no reason given"
    title = groups[0][1]["title"]
    return Result(check_id, title, severity, status, findings if status is Status.FAIL else [],
                  reason, duration, suppressed=suppressed)


def _folded(groups: list, key: str) -> list:
    """[(finding document, its nodes as a host list)] of the results' `key` list: the
    findings that are the same on several nodes are one."""
    folded: dict = {}
    for nodes, r in groups:
        for f in r.get(key) or []:
            text = json.dumps(f, sort_keys=True, default=str)
            folded.setdefault(text, (f, []))[1].extend(nodes)
    return [(f, _label(tuple(where))) for f, where in folded.values()]


def _finding(f: dict, label: str) -> Finding:
    """A node's finding in the merged report: its nodes before its message and in
    data.node."""
    loc = f.get("location")
    return Finding(f"{label}: {f['message']}",
                   location=Location(loc["path"], loc.get("line")) if loc else None,
                   fix=f.get("fix"), commands=tuple(f.get("commands") or ()),
                   data={**(f.get("data") or {}), "node": label},
                   options=tuple(FixOption.from_dict(o) for o in f.get("fix_options") or ()))
