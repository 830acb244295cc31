"""How `doctor run --gather` scales: a loopback simulation with real TCPStore traffic.

    python benchmarks/bench_gather.py [--procs 64,128] [--virtual 400,4000]

1. `--procs N`: N real processes (one per simulated node) each open doctor's
   gather link (doctor/multinode/: TCPStore client, hello, heartbeat) and send
   a real report document; task 0 collects with the same code as `doctor run
   --gather`. Timed from the first fork to the merged set of documents.
2. `--virtual N`: N simulated nodes posted by 8 client processes (so that
   4,000 nodes fit on a 2-core machine): the store load and rank 0's collect
   time for that many documents.
3. The merge itself (per-check worst status, finding folding, node-skew over
   every node's facts) for N documents, in rank 0's process.

The checks do not run here (every node runs them in parallel in a real job,
so they cost the same at 2 or 4,000 nodes); what is measured is what grows
with the node count. Figures feed docs/scaling.md.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doctor.multinode.plan import GatherPlan  # noqa: E402
from doctor.multinode.link import Link, collect, pack  # noqa: E402
from doctor.multinode.merge import merge_result, node_entries  # noqa: E402


def real_doc() -> dict:
    """A real node report: `doctor run --no-smoke` on the demo repo, plus node facts."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = ROOT / "fixtures" / "demo" if (ROOT / "fixtures" / "demo").is_dir() else tmp
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
        out = subprocess.run([sys.executable, "-m", "doctor", "run", "--repo", str(repo),
                              "--no-smoke", "--format", "json", "--exit-zero"], env=env,
                             capture_output=True, text=True, cwd=ROOT, timeout=300).stdout
    doc = json.loads(out)
    doc["node"] = {"slurm_node": "nid000001", "hostname": "nid000001", "rank": 0,
                   "duration_s": 3.2, "fake_facts": [],
                   "facts": {"python": "3.11.7", "torch_version": "2.5.1+rocm6.2.4",
                             "torch_cuda": None, "torch_hip": "6.2", "driver": "6.8.5",
                             "gpu_count": 8, "gpu_models": ["AMD Instinct MI250X"],
                             "miopen_cache": {"rocm": True, "dirs": []}}}
    return doc


def plan(rank: int, world: int, port: int) -> GatherPlan:
    nodes = [f"nid{i + 1:06d}" for i in range(world)]
    return GatherPlan(rank=rank, world=world, nodes=nodes, node=nodes[rank], job_id="1",
                      step_id="0", addr="127.0.0.1", port=port, timeout=120)


def task(rank: int, world: int, port: int, payload: bytes, out: "mp.Queue") -> None:
    link = Link(plan(rank, world, port))
    if not link.ready():
        out.put(("error", rank, link.error))
        return
    if rank:
        link.send(payload)
        link.close()
        return
    t = time.monotonic()
    docs, missing = collect(link, link.opened_at, t)
    out.put(("done", len(docs), len(missing), time.monotonic() - t))
    link.close()


def run_procs(world: int, port: int, payload: bytes) -> dict:
    ctx = mp.get_context("fork")
    out: mp.Queue = ctx.Queue()
    t0 = time.monotonic()
    procs = [ctx.Process(target=task, args=(r, world, port, payload, out)) for r in range(world)]
    for p in procs:
        p.start()
    msg = out.get(timeout=600)
    wall = time.monotonic() - t0
    for p in procs:
        p.join(30)
    assert msg[0] == "done" and msg[1] == world - 1 and msg[2] == 0, msg
    return {"wall_s": wall, "collect_s": msg[3]}


def virtual_client(first: int, last: int, world: int, port: int, payload: bytes) -> None:
    """Posts hello + document for ranks first..last-1 over one store connection."""
    from torch.distributed import TCPStore
    import datetime as dt

    p = plan(0, world, port)
    store = TCPStore("127.0.0.1", port, None, False, dt.timedelta(seconds=120))
    for r in range(first, last):
        store.set(f"{p.prefix}/hello/{r}", json.dumps({"node": p.nodes[r]}))
        store.add(f"{p.prefix}/beat/{r}", 1)
    for r in range(first, last):
        store.set(f"{p.prefix}/doc/{r}", payload)
        store.add(f"{p.prefix}/done", 1)


def run_virtual(world: int, port: int, payload: bytes, clients: int = 8) -> dict:
    ctx = mp.get_context("fork")
    link = Link(plan(0, world, port))
    assert link.ready(), link.error
    t0 = time.monotonic()
    step = -(-(world - 1) // clients)
    procs = [ctx.Process(target=virtual_client,
                         args=(1 + i * step, min(world, 1 + (i + 1) * step), world, port, payload))
             for i in range(clients)]
    for p in procs:
        p.start()
    docs, missing = collect(link, link.opened_at, time.monotonic())
    wall = time.monotonic() - t0
    for p in procs:
        p.join(30)
    link.close()
    assert len(docs) == world - 1 and not missing, (len(docs), missing)
    return {"wall_s": wall, "docs": docs}


def time_merge(doc: dict, world: int) -> float:
    """Rank 0's CPU for merging `world` documents (the checks' results and node-skew)."""
    from checks.skew import node_skew

    docs = {}
    for r in range(world):
        d = json.loads(json.dumps(doc))
        d["node"]["slurm_node"] = f"nid{r + 1:06d}"
        if r == world - 1:
            d["node"]["facts"]["gpu_count"] = 7
        docs[r] = d
    p = plan(0, world, 0)
    t = time.monotonic()
    nodes = node_entries(p, docs, {})
    per_check: dict = {}
    for r in sorted(docs):
        for res in docs[r]["results"]:
            per_check.setdefault(res["id"], []).append((nodes[r]["slurm_node"], res))
    merged = [merge_result(rid, items) for rid, items in per_check.items()]

    class Facts:
        def fact(self, name):
            return nodes

    skew = list(node_skew(Facts()))
    elapsed = time.monotonic() - t
    assert merged and skew and skew[0].data["node"] == f"nid{world:06d}"
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", default="64,128")
    ap.add_argument("--virtual", default="400,4000")
    ap.add_argument("--port", type=int, default=29871)
    args = ap.parse_args()
    import torch.distributed  # noqa: F401  (imported once, before forking)

    doc = real_doc()
    raw = len(json.dumps(doc, separators=(",", ":")))
    payload = pack(doc)
    print(f"one node's document: {raw / 1024:.1f} KiB JSON, {len(payload) / 1024:.1f} KiB "
          f"compressed ({len(doc['results'])} results)")
    port = args.port
    for n in [int(x) for x in args.procs.split(",") if x]:
        port += 1
        r = run_procs(n, port, payload)
        print(f"{n:5d} processes on loopback: merged in {r['wall_s']:.2f}s from the first fork "
              f"(task 0 waited {r['collect_s']:.2f}s after its own start-up); "
              f"{n * len(payload) / 1024:.0f} KiB through the store")
    for n in [int(x) for x in args.virtual.split(",") if x]:
        port += 1
        r = run_virtual(n, port, payload)
        print(f"{n:5d} virtual nodes (8 client processes): collected in {r['wall_s']:.2f}s, "
              f"{n * len(payload) / 2**20:.1f} MiB through the store, "
              f"~{n * 6} store requests")
    for n in sorted({50, 400, 4000}):
        print(f"{n:5d} documents merged (+ node-skew) in {time_merge(doc, n):.2f}s of rank 0 CPU")


if __name__ == "__main__":
    main()
