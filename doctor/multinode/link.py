"""The transport: this task's side of the TCPStore on task 0's node.

Keys under the plan's prefix: `hello/<rank>` (who joined), `beat/<rank>` (a
counter bumped every BEAT_S), `doc/<rank>` (the packed report), and two
append-only lists of ranks, `joined` and `sent`. Task 0 reads the lists and
fetches the heartbeats or documents of many ranks with one `multi_get`, so a
scan costs a few requests whatever the node count.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import resource
import socket
import threading
import time
import zlib
from typing import Any, Optional

from doctor.multinode.plan import BEAT_S, GatherPlan
from doctor.proc import set_for_self

OWN_FDS = 256      # task 0's own files, pipes and sockets, besides one socket per node
BATCH = 512        # documents per multi_get (bounds one reply at a few MiB)


def raise_fd_limit(world: int) -> Optional[str]:
    """Task 0's store holds one socket per node: raise the soft RLIMIT_NOFILE for it (up to
    the hard limit) → None, or why some nodes cannot join (the hard limit is too low)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = world + OWN_FDS
    if soft == resource.RLIM_INFINITY or soft >= need:
        return None
    new = need if hard == resource.RLIM_INFINITY else min(need, hard)
    if new > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    if new >= need:
        return None
    return (f"task 0 may open only {hard} files (hard limit, `ulimit -Hn`), fewer than the "
            f"{need} that {world} nodes need (one socket each + {OWN_FDS}); nodes beyond "
            f"about {max(hard - OWN_FDS, 0)} cannot join: raise the hard open-file limit "
            "where srun starts the step (docs/scaling.md)")


class Link:
    """This task's side of the TCPStore; opened in a thread while the checks run."""

    def __init__(self, plan: GatherPlan):
        self.plan = plan
        self.store: Any = None
        self.error: Optional[str] = None
        self.fd_warning: Optional[str] = None
        self.opened_at = time.monotonic()
        self._ready = threading.Event()
        self._stop = threading.Event()
        # c10d logs every connect retry with a C++ stack on stderr; the doctor reports the
        # outcome in one line instead. c10 reads the level at torch's import, which happens
        # in the thread below; the variable is set here, in the main thread, and for the
        # doctor's own process only (proc.set_for_self says why)
        if "TORCH_CPP_LOG_LEVEL" not in os.environ:
            set_for_self("TORCH_CPP_LOG_LEVEL", "FATAL")
        self._thread = threading.Thread(target=self._open, name="gather-link", daemon=True)
        self._thread.start()

    def _open(self) -> None:
        p = self.plan
        try:
            from torch.distributed import TCPStore

            if p.rank == 0:
                self.fd_warning = raise_fd_limit(p.world)
            # a client keeps trying for as long as rank 0 would still accept it
            # (task 0 may itself be slow to listen: importing torch on a loaded node)
            wait = p.timeout if p.rank == 0 else p.timeout + 10
            if p.rank != 0:   # then the store's own timeout only covers the handshake
                wait = await_listener(p.addr, p.port, wait)
            self.store = TCPStore(p.addr, p.port, None, p.rank == 0,
                                  dt.timedelta(seconds=wait), wait_for_workers=False)
            self.opened_at = time.monotonic()
            if p.rank == 0:  # the lists exist from the start: task 0 reads them with get
                self.store.append(f"{p.prefix}/joined", "")
                self.store.append(f"{p.prefix}/sent", "")
            hello(self.store, p)
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
        send(self.store, self.plan, payload)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(BEAT_S + 1)


def await_listener(addr: str, port: int, wait: float) -> float:
    """Wait up to `wait` seconds until something listens on addr:port → the seconds left
    (at least 1); TimeoutError once they are up. A TCPStore client given a timeout T
    retries once after a random delay, so it gives up only after about 2-3 × T (torch
    2.13: 28 s for 12 s); probing with plain connects keeps the deadline the doctor
    says (the store's server takes a connection that closes unused without a word)."""
    deadline = time.monotonic() + wait
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"nothing listened there within {wait:g}s")
        try:
            socket.create_connection((addr, port), timeout=min(left, 2.0)).close()
            return max(1.0, deadline - time.monotonic())
        except OSError:
            time.sleep(min(0.25, max(deadline - time.monotonic(), 0)))


def hello(store: Any, p: GatherPlan) -> None:
    """Join: the first heartbeat, then the rank on `joined` (its beat key exists by then)."""
    store.set(f"{p.prefix}/hello/{p.rank}", json.dumps(
        {"node": p.node, "hostname": socket.gethostname(), "pid": os.getpid()}))
    store.add(f"{p.prefix}/beat/{p.rank}", 1)
    store.append(f"{p.prefix}/joined", f"{p.rank},")


def send(store: Any, p: GatherPlan, payload: bytes) -> None:
    """The report, then the rank on `sent` (its doc key exists by then)."""
    store.set(f"{p.prefix}/doc/{p.rank}", payload)
    store.append(f"{p.prefix}/sent", f"{p.rank},")


def pack(doc: dict) -> bytes:
    """zlib of a node's report: a line of JSON without its results, then one line per
    result, its JSON text without its duration (those go in `durations`). The results
    many nodes share are identical lines, which task 0 neither parses nor folds more
    than once (merge.merge_results)."""
    results = doc.get("results") or []
    head = {**doc, "results": None, "durations": [r.get("duration_s") for r in results]}
    lines = [json.dumps(head, separators=(",", ":"), default=str)]
    lines += [json.dumps({k: v for k, v in r.items() if k != "duration_s"}, sort_keys=True,
                         separators=(",", ":"), default=str) for r in results]
    return zlib.compress("\n".join(lines).encode(), 6)   # JSON text holds no raw newline


def unpack(payload: Any) -> dict:
    """→ the node's report, its `results` a list of JSON texts (see pack)."""
    head, *results = zlib.decompress(bytes(payload)).decode().split("\n")
    doc = json.loads(head)
    doc["results"] = results
    return doc


class _Ranks:
    """An append-only list of ranks in the store ("3,1,2,"), read incrementally."""

    def __init__(self, store: Any, key: str):
        self.store, self.key, self.seen = store, key, 0
        self.ranks: set = set()

    def read(self) -> set:
        raw = self.store.get(self.key)
        if len(raw) > self.seen:
            self.ranks.update(int(r) for r in bytes(raw[self.seen:]).split(b",") if r)
            self.seen = len(raw)
        return self.ranks


def collect(link: Link, started: float, local_done: float) -> tuple:
    """Rank 0: wait for the other ranks → ({rank: doc}, {rank: why missing})."""
    p, store = link.plan, link.store
    pending = set(range(1, p.world))
    docs: dict = {}
    missing: dict = {}
    beats: dict = {}          # rank → (last value, when it last changed, on our clock)
    joined, sent = _Ranks(store, f"{p.prefix}/joined"), _Ranks(store, f"{p.prefix}/sent")
    start = time.monotonic()
    stale = max(3.0, p.timeout / 3)
    late = f"did not join within {p.timeout:g}s" + (f" ({link.fd_warning})"
                                                   if link.fd_warning else "")
    next_scan = 0.0
    while pending:
        now = time.monotonic()
        arrived = sorted(sent.read() & pending)
        for i in range(0, len(arrived), BATCH):
            chunk = arrived[i:i + BATCH]
            payloads = store.multi_get([f"{p.prefix}/doc/{r}" for r in chunk])
            docs.update((r, unpack(b)) for r, b in zip(chunk, payloads))
        pending.difference_update(arrived)
        if pending and now >= next_scan:
            next_scan = now + 0.5
            alive = sorted(joined.read() & pending)
            if now - started > p.timeout:
                for r in pending.difference(alive):
                    missing[r] = late
            values = store.multi_get([f"{p.prefix}/beat/{r}" for r in alive]) if alive else []
            for r, raw in zip(alive, values):
                value = int(bytes(raw))
                last = beats.get(r)
                if last is None or value != last[0]:
                    beats[r] = (value, now)
                elif now - last[1] > stale:
                    missing[r] = (f"stopped responding (no heartbeat for {now - last[1]:.0f}s, "
                                  "killed or node down)")
                    continue
                if now - local_done > p.timeout:
                    missing[r] = f"still running {p.timeout:g}s after rank 0 finished"
            pending.difference_update(missing)
        if pending:
            time.sleep(0.05 if now - start < 2 else 0.2)
    return docs, missing
