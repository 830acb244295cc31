"""`doctor run --gather`: one merged report for a multi-node Slurm step.

Every task (one per node) runs its node's checks; the task with SLURM_PROCID 0
merges the reports and writes the only report of the step. The transport is
torch.distributed's TCPStore (c10d's own rendezvous store, the one
`init_process_group` uses) on the first host of the step's node list, at a
port derived from the job and step ids. No gloo collective is used on purpose:
a collective needs every rank, so one dead node would fail it for all, while
the store lets rank 0 merge whatever arrived and name the node that did not.

Torch is imported only here, only when gathering, and in the doctor process
itself (in a background thread that overlaps the checks): the store is a few
C++ threads, nothing that can hang or touch a GPU, and a child process would
add a second rendezvous (parent ↔ child) for no gain.

Per task: connect (rank 0: listen) → `hello/<rank>` with its node name →
`beat/<rank>` counter bumped every second → run the checks → `doc/<rank>`
(the zlib-compressed, already secret-masked JSON report plus the node's
facts) → `done` counter. Rank 0 declares a node missing when it never said
hello within the timeout, when its heartbeat stops for a third of it (killed,
node down), or when it is still running `timeout` seconds after rank 0's own
checks ended (every node runs the same checks with the same deadlines).

Test-only hook: DOCTOR_FAKE_FACTS='{"torch_version": "2.4.0+rocm6.1"}' replaces
this node's gathered facts (see `node_facts`); the node's entry in the report
then lists the faked keys under `fake_facts`, so a faked report is never
mistaken for a real one. DOCTOR_GATHER_TEST_HOLD_S=N makes a task wait N
seconds before it sends its report (the tests kill it meanwhile).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import socket
import threading
import time
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from doctor.errors import InputError
from doctor.model import Finding, Location, Report, Result, Severity, Status

CROSS_NODE_TAG = "cross-node"
DEFAULT_TIMEOUT_S = 30.0
BEAT_S = 1.0
PORT_BASE, PORT_SPAN = 20000, 10000   # below Linux's ephemeral range (32768+)
KEY = "doctor"

# ---------------------------------------------------------------- hostlists


def expand_hostlist(text: str) -> list:
    """Slurm's compressed host list → names: `n[1-2],gpu[01,03-04]-x` → n1, n2, gpu01-x, …"""
    out: list = []
    for item in _split_top(text.strip()):
        names = [""]
        for lit, rng in re.findall(r"([^\[]*)(?:\[([^\]]*)\])?", item):
            names = [n + lit for n in names]
            if rng:
                parts = []
                for piece in rng.split(","):
                    lo, _, hi = piece.partition("-")
                    if not hi:
                        parts.append(lo)
                        continue
                    width = len(lo) if lo.startswith("0") else 0
                    step = 1 if int(hi) >= int(lo) else -1
                    parts += [str(i).zfill(width) for i in range(int(lo), int(hi) + step, step)]
                names = [n + p for n in names for p in parts]
        out += [n for n in names if n]
    return out


def _split_top(text: str) -> list:
    items, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    return [i for i in items + [cur] if i]


def compress_hostlist(names: Iterable[str]) -> str:
    """The inverse, for messages: n1, n2, n3, gpu7 → `gpu7,n[1-3]` (one numeric suffix)."""
    groups: dict = {}
    plain = []
    for name in sorted(set(names), key=_natural):
        m = re.match(r"^(.*?)(\d+)$", name)
        if m:
            groups.setdefault(m.group(1), []).append(m.group(2))
        else:
            plain.append(name)
    out = list(plain)
    for prefix, nums in groups.items():
        runs: list = []
        for n in nums:
            if runs and int(n) == int(runs[-1][1]) + 1 and len(n) == len(runs[-1][1]):
                runs[-1][1] = n
            else:
                runs.append([n, n])
        if len(nums) == 1:
            out.append(prefix + nums[0])
        else:
            out.append(prefix + "[" + ",".join(a if a == b else f"{a}-{b}" for a, b in runs)
                       + "]")
    return ",".join(out)


def _natural(name: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


# ---------------------------------------------------------------- the plan


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
    from doctor.probes import run_cmd

    res = run_cmd(["scontrol", "show", "node", name, "-o"], timeout=10)
    m = re.search(r"\bNodeAddr=(\S+)", res.stdout or "")
    return m.group(1) if m else name


# ---------------------------------------------------------------- node facts

NODE_FACTS: dict = {}       # name → fn(job) -> JSON, computed on every node
CROSS_NODE: dict = {}       # check id → fn(nodes) -> findings merged into that check


def node_fact(name: str) -> Callable:
    """Register a per-node fact that cross-node checks compare (gathered from every node)."""
    def register(fn: Callable) -> Callable:
        NODE_FACTS[name] = fn
        return fn
    return register


def cross_node(check_id: str) -> Callable:
    """Register a cross-node part of an existing node check: fn(nodes) → findings."""
    def register(fn: Callable) -> Callable:
        CROSS_NODE[check_id] = fn
        return fn
    return register


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


# ---------------------------------------------------------------- transport


class Link:
    """This task's side of the TCPStore; opened in a thread while the checks run."""

    def __init__(self, plan: GatherPlan):
        self.plan = plan
        self.store: Any = None
        self.error: Optional[str] = None
        self.opened_at = time.monotonic()
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._open, name="gather-link", daemon=True)
        self._thread.start()

    def _open(self) -> None:
        p = self.plan
        try:
            # c10d logs every connect retry with a C++ stack on stderr; the doctor
            # reports the outcome in one line instead (read at torch's import)
            saved = os.environ.get("TORCH_CPP_LOG_LEVEL")
            os.environ["TORCH_CPP_LOG_LEVEL"] = saved or "FATAL"
            try:
                from torch.distributed import TCPStore
            finally:
                if saved is None:
                    os.environ.pop("TORCH_CPP_LOG_LEVEL", None)

            # a client keeps trying for as long as rank 0 would still accept it
            # (task 0 may itself be slow to listen: importing torch on a loaded node)
            wait = p.timeout if p.rank == 0 else p.timeout + 10
            self.store = TCPStore(p.addr, p.port, None, p.rank == 0,
                                  dt.timedelta(seconds=wait), wait_for_workers=False)
            self.opened_at = time.monotonic()
            self.store.set(f"{p.prefix}/hello/{p.rank}", json.dumps(
                {"node": p.node, "hostname": socket.gethostname(), "pid": os.getpid()}))
        except Exception as exc:
            self.store = None
            self.error = (f"{'cannot listen on' if p.rank == 0 else 'cannot reach rank 0 at'} "
                          f"{p.addr}:{p.port}: {type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''}")
        finally:
            self._ready.set()
        while self.store is not None and not self._stop.wait(BEAT_S):
            try:
                self.store.add(f"{p.prefix}/beat/{p.rank}", 1)
            except Exception:
                return

    def ready(self) -> bool:
        self._ready.wait(self.plan.timeout + 60)  # the store's own timeout ends it sooner
        return self.store is not None

    def send(self, payload: bytes) -> None:
        self._stop.set()
        self.store.set(f"{self.plan.prefix}/doc/{self.plan.rank}", payload)
        self.store.add(f"{self.plan.prefix}/done", 1)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(BEAT_S + 1)


def pack(doc: dict) -> bytes:
    return zlib.compress(json.dumps(doc, separators=(",", ":"), default=str).encode(), 6)


def unpack(payload: Any) -> dict:
    return json.loads(zlib.decompress(bytes(payload)).decode())


def collect(link: Link, started: float, local_done: float) -> tuple:
    """Rank 0: wait for the other ranks → ({rank: doc}, {rank: why missing})."""
    p, store = link.plan, link.store
    pending = set(range(1, p.world))
    docs: dict = {}
    missing: dict = {}
    beats: dict = {}          # rank → (last value, when it last changed, on our clock)
    start = time.monotonic()
    stale = max(3.0, p.timeout / 3)
    next_scan = 0.0
    while pending:
        now = time.monotonic()
        done = store.add(f"{p.prefix}/done", 0)
        if done > len(docs) or now >= next_scan:
            next_scan = now + 0.5
            for r in sorted(pending):
                if store.check([f"{p.prefix}/doc/{r}"]):
                    docs[r] = unpack(store.get(f"{p.prefix}/doc/{r}"))
                    pending.discard(r)
                    continue
                if not store.check([f"{p.prefix}/hello/{r}"]):
                    if now - started > p.timeout:
                        missing[r] = f"did not join within {p.timeout:g}s"
                        pending.discard(r)
                    continue
                value = store.add(f"{p.prefix}/beat/{r}", 0)
                last = beats.get(r)
                if last is None or value != last[0]:
                    beats[r] = (value, now)
                elif now - last[1] > stale:
                    missing[r] = (f"stopped responding (no heartbeat for {now - last[1]:.0f}s, "
                                  "killed or node down)")
                    pending.discard(r)
                    continue
                if now - local_done > p.timeout:
                    missing[r] = f"still running {p.timeout:g}s after rank 0 finished"
                    pending.discard(r)
        if pending:
            time.sleep(0.05 if now - start < 2 else 0.2)
    return docs, missing


# ---------------------------------------------------------------- the run


def run_gathered(job: Any, plan: GatherPlan, *, only: Iterable[str] = (),
                 skip: Iterable[str] = (), static: bool = False, no_smoke: bool = False,
                 fail_on: Severity = Severity.ERROR, on_done: Any = None) -> tuple:
    """(report, writes): rank 0 gets the merged report; other ranks their own, writes=False
    unless rank 0 could not be reached (then they print their own report as a fallback)."""
    from doctor.runner import chosen_checks, run_checks

    t0 = time.monotonic()
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
            import sys

            print(f"doctor: gather: {link.error or exc}; reporting this node only",
                  file=sys.stderr)
            report.extra.pop("node", None)
            return report, True
        finally:
            link.close()
    try:
        if link.ready():  # the join deadline runs from when task 0 could accept joins
            docs, missing = collect(link, link.opened_at, local_done)
        else:
            docs = {}
            missing = {r: f"not gathered: rank 0 {link.error}" for r in range(1, plan.world)}
    finally:
        link.close()
    docs[0] = doc
    cross = [s for s in chosen if CROSS_NODE_TAG in s.tags]
    return merge(job, plan, report, docs, missing, cross, t0), True


# ---------------------------------------------------------------- merging

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
    name_of = {n["rank"]: n["slurm_node"] for n in nodes}
    per_check: dict = {}
    for r in sorted(docs):
        for res in docs[r]["results"]:
            per_check.setdefault(res["id"], []).append((name_of[r], res))
    results = [merge_result(rid, items) for rid, items in per_check.items()]
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


def merge_result(check_id: str, items: list) -> Result:
    """[(node, result doc)] → one Result: worst status, identical findings folded by node."""
    statuses = [Status(r["status"]) for _, r in items]
    status = max(statuses, key=lambda s: STATUS_ORDER[s])
    severity = max(Severity.parse(r["severity"]) for _, r in items)
    folded: dict = {}
    for node, r in items:
        for f in r["findings"]:
            key = json.dumps(f, sort_keys=True, default=str)
            folded.setdefault(key, (f, []))[1].append(node)
    findings = []
    for f, where in folded.values():
        label = compress_hostlist(where)
        loc = f.get("location")
        findings.append(Finding(f"{label}: {f['message']}",
                                location=Location(loc["path"], loc.get("line")) if loc else None,
                                fix=f.get("fix"), commands=tuple(f.get("commands") or ()),
                                data={**(f.get("data") or {}), "node": label}))
    reasons: dict = {}
    for node, r in items:
        if r.get("reason"):
            reasons.setdefault(r["reason"], []).append(node)
    reason = "; ".join(f"{compress_hostlist(ns)}: {why}" for why, ns in reasons.items()) or None
    if status in (Status.SKIP, Status.ERROR) and reason is None:
        reason = "no reason given"
    title = items[0][1]["title"]
    return Result(check_id, title, severity, status, findings if status is Status.FAIL else [],
                  reason, max(r["duration_s"] for _, r in items))
