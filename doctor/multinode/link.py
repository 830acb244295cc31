"""The transport: this task's side of the TCPStore on task 0's node."""
from __future__ import annotations

import datetime as dt
import json
import os
import socket
import threading
import time
import zlib
from typing import Any, Optional

from doctor.multinode.plan import BEAT_S, GatherPlan


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


