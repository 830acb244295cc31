"""How `doctor run --gather` scales: a loopback simulation with real TCPStore traffic.

    python benchmarks/bench_gather.py [--procs 64,128] [--virtual 4000,10000]
                                      [--clients 8] [--profile 10000]

1. `--procs N`: N real processes (one per simulated node) each open doctor's
   gather link (doctor/multinode/: TCPStore client, hello, heartbeat) and send
   a real report document; task 0 collects with the same code as `doctor run
   --gather`. Timed from the first fork to the merged set of documents.
2. `--virtual N`: N simulated nodes, each with its own TCPStore connection to
   task 0 (N sockets there, as in a real job), opened by `--clients` processes
   so that 10,000 fit on a 2-core machine. They join (hello + heartbeats every
   second) and then, all at once, send their documents (the real one below,
   with each node's name; the last node has 7 GPUs). Timed: the join, and then
   task 0's collect + merge (per-check worst status, finding folding, node-skew
   over every node's facts) with the functions `doctor run --gather` uses.
3. `--profile N`: cProfile of the merge of N documents.

The checks do not run here (every node runs them in parallel in a real job,
so they cost the same at 2 or 10,000 nodes); what is measured is what grows
with the node count. Each line ends with the machine's load average (other
work on a shared machine slows every figure). Figures feed docs/scaling.md,
which also has the command line used on this machine (c10d reverse-resolves
every peer as it connects, and this machine's resolver drops queries).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from doctor.multinode.plan import BEAT_S, CROSS_NODE_TAG, GatherPlan  # noqa: E402
from doctor.multinode.link import (Link, collect, hello, pack, raise_fd_limit,  # noqa: E402
                                   send, unpack)
from doctor.multinode.merge import merge_results, node_entries  # noqa: E402


def real_doc() -> dict:
    """A real node report: `doctor run --no-smoke` on the demo repo, plus node facts."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = ROOT / "fixtures" / "demo" if (ROOT / "fixtures" / "demo").is_dir() else tmp
        env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
        out = subprocess.run([sys.executable, "-m", "doctor", "run", "--repo", str(repo),
                              "--no-smoke", "--format", "json", "--exit-zero"], env=env,
                             capture_output=True, text=True, cwd=ROOT, timeout=300).stdout
    doc = json.loads(out)
    from doctor.registry import all_checks

    cross = {s.id for s in all_checks() if CROSS_NODE_TAG in s.tags}   # task 0 runs those
    doc["results"] = [r for r in doc["results"] if r["id"] not in cross]
    doc["node"] = {"slurm_node": "nid000001", "hostname": "nid000001", "rank": 0,
                   "duration_s": 3.2, "fake_facts": [],
                   "facts": {"python": "3.11.7", "torch_version": "2.5.1+rocm6.2.4",
                             "torch_cuda": None, "torch_hip": "6.2", "driver": "6.8.5",
                             "gpu_count": 8, "gpu_models": ["AMD Instinct MI250X"],
                             "miopen_cache": {"rocm": True, "dirs": []}}}
    return doc


@lru_cache(maxsize=4)
def names(world: int) -> list:
    return [f"nid{i + 1:06d}" for i in range(world)]


def plan(rank: int, world: int, port: int) -> GatherPlan:
    nodes = names(world)
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


def virtual_client(ranks: list, world: int, port: int, payloads: dict,
                   joined: "mp.synchronize.Barrier", go: "mp.synchronize.Event") -> None:
    """One TCPStore connection per virtual node (task 0 holds one socket per node, as in a
    real job): join them all, beat once a second until `go`, then send every document."""
    import threading
    from torch.distributed import TCPStore

    raise_fd_limit(len(ranks))
    stores = {r: TCPStore("127.0.0.1", port, None, False, dt.timedelta(seconds=300))
              for r in ranks}
    for r, store in stores.items():
        hello(store, plan(r, world, port))
    stop = threading.Event()

    def beat() -> None:
        prefix = plan(0, world, port).prefix
        while not stop.wait(BEAT_S):
            for r, store in stores.items():
                store.add(f"{prefix}/beat/{r}", 1)

    beater = threading.Thread(target=beat, daemon=True)
    beater.start()
    joined.wait()
    go.wait()
    stop.set()
    beater.join()
    for r, store in stores.items():
        send(store, plan(r, world, port), payloads[r])
    joined.wait()   # the sockets stay open until task 0 has collected


def node_doc(doc: dict, rank: int, world: int) -> dict:
    """Node `rank`'s copy of the document; the last node has 7 GPUs (node-skew finds it)."""
    d = json.loads(json.dumps(doc))
    name = f"nid{rank + 1:06d}"
    d["node"].update(slurm_node=name, hostname=name, rank=rank)
    d["node"]["facts"]["gpu_count"] = 7 if rank == world - 1 else 8
    return d


def merge_all(world: int, docs: dict) -> tuple:
    """Task 0's merge (the functions `doctor run --gather` uses) + node-skew."""
    from doctor.checks.skew import node_skew

    nodes = node_entries(plan(0, world, 0), docs, {})
    merged = merge_results({n["rank"]: n["slurm_node"] for n in nodes}, docs)

    class Facts:
        def fact(self, name):
            return nodes

    return merged, list(node_skew(Facts()))


def run_virtual(world: int, port: int, doc: dict, clients: int) -> dict:
    ctx = mp.get_context("fork")
    payloads = {r: pack(node_doc(doc, r, world)) for r in range(world)}
    link = Link(plan(0, world, port))
    assert link.ready(), link.error
    joined, go = ctx.Barrier(clients + 1), ctx.Event()
    ranks = list(range(1, world))
    procs = [ctx.Process(target=virtual_client,
                         args=(ranks[i::clients], world, port, payloads, joined, go))
             for i in range(clients)]
    t0 = time.monotonic()
    for p in procs:
        p.start()
    joined.wait(timeout=600)
    t_join = time.monotonic() - t0
    time.sleep(3 * BEAT_S)   # heartbeat rounds: `world` beats a second into task 0's store
    t1 = time.monotonic()
    go.set()
    docs, missing = collect(link, link.opened_at, t1)
    t_collect = time.monotonic() - t1
    docs[0] = unpack(payloads[0])
    merged, skew = merge_all(world, docs)
    t_total = time.monotonic() - t1
    joined.wait(timeout=60)
    for p in procs:
        p.join(30)
    link.close()
    assert len(docs) == world and not missing, (len(docs), missing)
    assert skew and skew[0].data["node"] == f"nid{world:06d}", skew
    assert merged and all(len(f.data["node"]) < 40 for r in merged for f in r.findings)
    return {"join_s": t_join, "collect_s": t_collect, "total_s": t_total,
            "merge_s": t_total - t_collect, "bytes": sum(map(len, payloads.values()))}


def profile_merge(world: int, doc: dict, top: int) -> None:
    import cProfile
    import pstats

    docs = {r: unpack(pack(node_doc(doc, r, world))) for r in range(world)}
    prof = cProfile.Profile()
    prof.runcall(merge_all, world, docs)
    pstats.Stats(prof).sort_stats("cumulative").print_stats(top)


def load() -> str:
    return "load %.1f" % os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", default="64,128")
    ap.add_argument("--virtual", default="4000,10000")
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="cProfile the merge of N documents (top 25 lines)")
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
              f"{n * len(payload) / 1024:.0f} KiB through the store ({load()})")
    for n in [int(x) for x in args.virtual.split(",") if x]:
        port += 1
        r = run_virtual(n, port, doc, args.clients)
        print(f"{n:5d} virtual nodes, one connection each ({args.clients} client processes): "
              f"joined in {r['join_s']:.2f}s; then collected in {r['collect_s']:.2f}s + merged "
              f"in {r['merge_s']:.2f}s = {r['total_s']:.2f}s, {r['bytes'] / 2**20:.1f} MiB "
              f"through the store ({load()})")
    if args.profile:
        profile_merge(args.profile, doc, 25)


if __name__ == "__main__":
    main()
