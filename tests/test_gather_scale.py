"""`doctor run --gather` at scale, proven on small node counts.

Task 0's store holds one socket per node, so it raises its open-file limit
for them (the nodes would otherwise stop joining at the soft limit, ~1,000 by
default) and says so in one line when even the hard limit is too low. Task 0
scans the pending nodes with one multi-get per scan, not one request per node.
The virtual nodes here are the doctor's own gather client (Link), in threads.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
import threading
import time

from conftest import ROOT, validate_report
from doctor.multinode.link import Link, collect, pack
from doctor.multinode.plan import GatherPlan
from test_gather import finish, free_port, task_env


def node_plan(rank: int, world: int, port: int, timeout: float = 30) -> GatherPlan:
    nodes = [f"node{i + 1}" for i in range(world)]
    return GatherPlan(rank=rank, world=world, nodes=nodes, node=nodes[rank], job_id="4242",
                      step_id="0", addr="127.0.0.1", port=port, timeout=timeout)


def node_doc(rank: int) -> dict:
    """A node's report as it travels: no results of its own here, its node entry."""
    return {"summary": {"status": "pass"}, "duration_s": 0.1, "results": [],
            "node": {"slurm_node": f"node{rank + 1}", "hostname": f"node{rank + 1}",
                     "rank": rank, "duration_s": 0.1, "facts": {}, "fake_facts": []}}


def virtual_nodes(ranks: range, world: int, port: int, go: threading.Event) -> tuple:
    """Each rank joins through its own Link (one connection each) and stays connected, as
    a node does while its checks run, until `go`; then it sends. → (threads, joined ranks)"""
    joined: list = []

    def run(rank: int) -> None:
        link = Link(node_plan(rank, world, port))
        try:
            if link.ready():
                joined.append(rank)
                if go.wait(120):
                    link.send(pack(node_doc(rank)))
        finally:
            link.close()

    threads = [threading.Thread(target=run, args=(r,), daemon=True) for r in ranks]
    for t in threads:
        t.start()
    return threads, joined


def wait_for(condition, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)


def task0(world: int, port: int, nofile: tuple, timeout: str) -> subprocess.Popen:
    """The real CLI as task 0, started with the given (soft, hard) open-file limit."""
    return subprocess.Popen(
        [sys.executable, "-m", "doctor", "run", "--repo", str(ROOT / "fixtures" / "demo"),
         "--no-smoke", "--only", "node-skew,node-missing", "--format", "json",
         "--gather-timeout", timeout],
        env=task_env(0, world, port), cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, nofile))


def test_more_nodes_than_task_0s_soft_open_file_limit_all_join():
    world, port = 48, free_port()       # 47 sockets into a task 0 started with 32 files
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    proc = task0(world, port, (32, hard), "30")
    go = threading.Event()
    threads, joined = virtual_nodes(range(1, world), world, port, go)
    try:   # every node holds its socket at once (checks running everywhere)
        wait_for(lambda: len(joined) == world - 1, 20)
        count = len(joined)
    finally:
        go.set()
        (code, out, err), = finish([proc], timeout=120)
        for t in threads:
            t.join(60)
    assert count == world - 1, f"only {count} of {world - 1} nodes could join in 20s"
    doc = validate_report(json.loads(out))
    assert [n["status"] for n in doc["nodes"]] == ["pass"] * world
    assert doc["facts"]["limits"]["nofile"] == [32, hard]   # the job's limit, read before
    assert code == 0 and "doctor: gather:" not in err, err


def test_a_hard_open_file_limit_below_the_node_count_is_said_in_one_line():
    world = 100                          # needs 100 sockets + task 0's own: more than 64
    proc = task0(world, free_port(), (64, 64), "1")
    (code, out, err), = finish([proc], timeout=120)
    lines = [line for line in err.splitlines() if line.startswith("doctor: gather:")]
    assert len(lines) == 1 and "task 0 may open only 64 files (hard limit" in lines[0], err
    assert "Traceback" not in err
    doc = validate_report(json.loads(out))
    missing = next(r for r in doc["results"] if r["id"] == "node-missing")
    assert code == 1 and missing["status"] == "fail"
    assert all("may open only 64 files" in n["reason"] for n in doc["nodes"][1:])


class Counted:
    """The real store, with the requests made from the thread that collects."""

    def __init__(self, store, thread: int):
        self.store, self.thread, self.requests = store, thread, []

    def __getattr__(self, name):
        method = getattr(self.store, name)

        def call(*args):
            if threading.get_ident() == self.thread:
                self.requests.append((name, args[0] if isinstance(args[0], list) else
                                      [args[0]]))
            return method(*args)
        return call


def test_task_0_scans_pending_nodes_with_one_multi_get_not_one_request_per_node():
    world, port = 12, free_port()
    link = Link(node_plan(0, world, port))
    assert link.ready(), link.error
    go = threading.Event()
    threads, _ = virtual_nodes(range(1, world), world, port, go)
    link.store = Counted(link.store, threading.get_ident())
    threading.Timer(1.5, go.set).start()   # the nodes wait: task 0 scans them a few times
    docs, missing = collect(link, link.opened_at, link.opened_at)
    for t in threads:
        t.join(30)
    link.close()
    assert sorted(docs) == list(range(1, world)) and not missing
    per_node = [(name, keys) for name, keys in link.store.requests
                if name != "multi_get" and keys[0].rsplit("/", 1)[-1].isdigit()]
    assert not per_node, per_node[:5]
    beat_scans = [keys for name, keys in link.store.requests
                  if name == "multi_get" and "/beat/" in keys[0]]
    assert beat_scans and max(map(len, beat_scans)) > 1    # many nodes in one request
