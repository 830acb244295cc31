"""Scan cache paths for torch.save files: a bounded pool of daemon threads and a deadline.

The walk never opens anything but regular files (FIFOs, sockets and devices are only
stat'ed), follows directory symlinks once (a loop is seen by its device and inode),
and reads each file's pickle only (doctor/torchsave.py). Threads are daemons, so a
read stuck on a dead network filesystem can neither hang the scan (it stops at its
deadline and says how far it got) nor the doctor's exit.
"""
from __future__ import annotations

import os
import queue
import stat
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from doctor.scanners.torchsave import NotRegularFile, TorchSaveInfo, inspect_file

_DONE = object()
CHUNK = 8   # paths handed to a worker at a time: fewer thread hand-offs per file


@dataclass
class ScanResult:
    torch_files: list = field(default_factory=list)   # TorchSaveInfo
    unreadable: list = field(default_factory=list)    # (path, reason)
    special: list = field(default_factory=list)       # FIFOs, sockets, devices: not opened
    files_seen: int = 0        # regular files found by the walk
    files_scanned: int = 0     # of which inspected
    complete: bool = True      # False: the deadline stopped the walk or the scan
    walk_complete: bool = True
    duration_s: float = 0.0


def _walk(roots: Iterable[str], out: "queue.Queue", res: ScanResult,
          stop: threading.Event, lock: threading.Lock, done: "queue.Queue") -> None:
    seen_dirs: set = set()
    seen_files: set = set()
    batch: list = []

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                out.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def visit_file(path: str, st: os.stat_result) -> bool:
        if not stat.S_ISREG(st.st_mode):
            with lock:
                res.special.append(path)
            return True
        if (st.st_dev, st.st_ino) in seen_files:
            return True
        seen_files.add((st.st_dev, st.st_ino))
        with lock:
            res.files_seen += 1
        batch.append(path)
        if len(batch) >= CHUNK:
            chunk = batch[:]
            batch.clear()
            return put(chunk)
        return True

    def visit_dir(path: str, st: os.stat_result) -> bool:
        if (st.st_dev, st.st_ino) in seen_dirs:
            return True      # a symlink loop, or the same tree twice
        seen_dirs.add((st.st_dev, st.st_ino))
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            with lock:
                res.unreadable.append((path, exc.strerror or str(exc)))
            return True
        for entry in entries:
            if stop.is_set():
                return False
            try:
                st2 = entry.stat(follow_symlinks=True)
            except OSError as exc:
                if not entry.is_symlink():   # a dangling symlink is not worth a finding
                    with lock:
                        res.unreadable.append((entry.path, exc.strerror or str(exc)))
                continue
            ok = visit_dir(entry.path, st2) if stat.S_ISDIR(st2.st_mode) \
                else visit_file(entry.path, st2)
            if not ok:
                return False
        return True

    try:
        for root in roots:
            try:
                st = os.stat(root)
            except OSError as exc:
                with lock:
                    res.unreadable.append((root, exc.strerror or str(exc)))
                continue
            ok = visit_dir(root, st) if stat.S_ISDIR(st.st_mode) else visit_file(root, st)
            if not ok:
                with lock:
                    res.walk_complete = False
                return
        if batch:
            put(batch[:])
    finally:
        done.put(_DONE)      # wakes the collector: the count of files is final
        put(_DONE)


def _inspect(path: str, max_pickle_bytes: int) -> tuple:
    try:
        return ("ok", path, inspect_file(path, max_pickle_bytes=max_pickle_bytes))
    except NotRegularFile:
        return ("special", path, None)
    except OSError as exc:
        return ("unreadable", path, exc.strerror or str(exc))
    except Exception as exc:   # a bug or an exotic file: reported, never fatal
        return ("ok", path, TorchSaveInfo(path, "unknown", problem=(
            f"could not be inspected: {type(exc).__name__}: {exc}")))


def _work(inq: "queue.Queue", outq: "queue.Queue", stop: threading.Event,
          max_pickle_bytes: int) -> None:
    while not stop.is_set():
        try:
            chunk = inq.get(timeout=0.1)
        except queue.Empty:
            continue
        if chunk is _DONE:
            inq.put(_DONE)       # let the other workers see it too
            return
        out = []
        for path in chunk:
            if stop.is_set():
                break
            out.append(_inspect(path, max_pickle_bytes))
        outq.put(out)


GROW_S = 0.05
SLOW_FILES_PER_S = 1000


def scan(roots: Iterable[str], *, deadline_s: float = 60.0, workers: int = 4,
         max_pickle_bytes: int = 64 * 1024 * 1024,
         progress: Optional[Callable[[int, int, bool], None]] = None) -> ScanResult:
    """Find and inspect the torch.save files under `roots`, stopping at the deadline.

    `progress(scanned, seen, walk_done)` is called about twice a second.
    """
    t0 = time.monotonic()
    end = t0 + deadline_s
    res = ScanResult()
    lock = threading.Lock()
    stop = threading.Event()
    work: queue.Queue = queue.Queue(maxsize=max(4, 2 * workers))
    done: queue.Queue = queue.Queue()
    walker = threading.Thread(target=_walk, args=(list(roots), work, res, stop, lock, done),
                              name="cachescan-walk", daemon=True)
    walker.start()
    # One worker to start with: on local or in-memory files (/dev/shm) the work is
    # CPU-bound, and more Python threads only contend for the GIL (measured: 200 files,
    # 1 worker 7 ms, 4 workers 17 ms). A worker is added every GROW_S while the walk has
    # files waiting and fewer than SLOW_FILES_PER_S are done: then the time goes into
    # I/O latency (Lustre, NFS), where threads do overlap.
    pool: list = []

    def grow() -> None:
        t = threading.Thread(target=_work, args=(work, done, stop, max_pickle_bytes),
                             name=f"cachescan-{len(pool)}", daemon=True)
        pool.append(t)
        t.start()

    grow()
    next_tick = t0 + 0.5
    next_grow, scanned_at_grow = t0 + GROW_S, 0
    walk_done = False
    try:
        while True:
            now = time.monotonic()
            with lock:
                finished = walk_done and res.files_scanned >= res.files_seen
                scanned = res.files_scanned
            if finished:
                break
            if now >= end:
                res.complete = False
                break
            if now >= next_grow:
                slow = (scanned - scanned_at_grow) < SLOW_FILES_PER_S * GROW_S
                if slow and len(pool) < max(1, workers) and not work.empty():
                    grow()
                next_grow, scanned_at_grow = now + GROW_S, scanned
            try:
                batch = done.get(timeout=max(0.0, min(GROW_S, end - now)))
            except queue.Empty:
                batch = []
            if batch is _DONE:
                walk_done, batch = True, []
            for kind, path, value in batch:
                with lock:
                    if kind == "special":
                        res.special.append(path)
                        res.files_seen -= 1     # swapped for a FIFO after the walk saw it
                    else:
                        res.files_scanned += 1
                        if kind == "unreadable":
                            res.unreadable.append((path, value))
                        elif value is not None:
                            res.torch_files.append(value)
            if progress and time.monotonic() >= next_tick:
                next_tick += 0.5
                progress(res.files_scanned, res.files_seen, walk_done)
    finally:
        stop.set()
    if not walk_done:      # stopped by the deadline: the count of files is a lower bound
        res.walk_complete = False
    if not res.walk_complete:
        res.complete = False
    res.torch_files.sort(key=lambda i: i.path)
    res.unreadable.sort()
    res.special.sort()
    res.duration_s = time.monotonic() - t0
    return res


class TtyProgress:
    """A progress line on stderr, only on a terminal and only after the first second."""

    def __init__(self, label: str = "scanning caches"):
        self.label = label
        self.t0 = time.monotonic()
        self.shown = False

    def __call__(self, scanned: int, seen: int, walk_done: bool) -> None:
        if time.monotonic() - self.t0 < 1.0:
            return
        total = f"{seen}" if walk_done else f"{seen}+"
        sys.stderr.write(f"\r\033[K  {self.label}: {scanned}/{total} files")
        sys.stderr.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def tty_progress(label: str = "scanning caches") -> Optional[TtyProgress]:
    return TtyProgress(label) if sys.stderr.isatty() else None
