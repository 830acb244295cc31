"""Scan cache paths for torch.save files: a bounded pool of daemon threads and a deadline.

The walk never opens anything but regular files (FIFOs, sockets and devices are only
stat'ed), follows directory symlinks once (a loop is seen by its device and inode),
and reads each file's pickle only (doctor/torchsave.py). Threads are daemons, so a
read stuck on a dead network filesystem can neither hang the scan (it stops at its
deadline and says how far it got) nor the doctor's exit.

Every file is read; the per-file cost is what makes a cache of a million samples
possible (docs/scaling.md, "Caches"): the walk takes a regular file's type and inode
from its directory entry (no stat), a file is opened once and read from each end at
most (a sample's whole archive in one read), and a pickle byte-identical to one
already unpickled in this scan shares its answer, its own archive's records still
checked. While files come fast the work is CPU-bound and worker processes take the
chunks on the other CPUs; while they come slowly, more threads overlap the waits.
"""
from __future__ import annotations

import collections
import dataclasses
import io
import json
import os
import queue
import stat
import struct
import subprocess
import sys
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from doctor.proc import NO_CWD_IMPORTS, environ
from doctor.scanners.torchsave import (NotRegularFile, PickleRefused,
                                       TorchSaveInfo, _checked,
                                       _pickle_problem, _Recorder, _ScanUnpickler,
                                       inspect_file, sniff, unsafe_globals)

_DONE = object()
CHUNK = 8          # paths per hand-off while files are slow: more workers overlap them
FAST_CHUNK = 256   # paths per hand-off once files are fast: fewer thread hand-offs
READ_BYTES = 64 * 1024   # read from each end of a file: a sample's archive, whole
MEMO_ENTRIES = 256       # pickles remembered per scan (each at most READ_BYTES)
_CLEAN = object()        # a torch.save file with nothing to report
PIPELINE = 2             # chunks at a worker process ahead of its replies
# O_NONBLOCK: a path swapped for a FIFO since the walk saw a regular file still opens
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass
class ScanResult:
    flagged: list = field(default_factory=list)       # TorchSaveInfo: devices, unsafe, problem
    unreadable: list = field(default_factory=list)    # (path, reason)
    special: list = field(default_factory=list)       # FIFOs, sockets, devices: not opened
    files_seen: int = 0        # regular files found by the walk
    files_scanned: int = 0     # of which inspected
    torch_files: int = 0       # of which torch.save files
    processes: int = 0         # worker processes started (files were fast: CPU-bound)
    complete: bool = True      # False: the deadline stopped the walk or the scan
    walk_complete: bool = True
    duration_s: float = 0.0


def _walk(roots: Iterable[str], out: "queue.Queue", res: ScanResult, chunk_size: list,
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

    def flush() -> bool:
        chunk = batch[:]
        batch.clear()
        with lock:
            res.files_seen += len(chunk)
        return put(chunk)

    def visit_file(path: str, key: tuple, regular: bool) -> bool:
        if not regular:
            with lock:
                res.special.append(path)
            return True
        if key in seen_files:
            return True
        seen_files.add(key)
        batch.append(path)
        return flush() if len(batch) >= chunk_size[0] else True

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
                # A regular file's type and inode come from its directory entry: no stat.
                if entry.is_file(follow_symlinks=False):
                    ok = visit_file(entry.path, (st.st_dev, entry.inode()), True)
                else:
                    st2 = entry.stat(follow_symlinks=True)
                    ok = visit_dir(entry.path, st2) if stat.S_ISDIR(st2.st_mode) else \
                        visit_file(entry.path, (st2.st_dev, st2.st_ino),
                                   stat.S_ISREG(st2.st_mode))
            except OSError as exc:
                if not entry.is_symlink():   # a dangling symlink is not worth a finding
                    with lock:
                        res.unreadable.append((entry.path, exc.strerror or str(exc)))
                continue
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
            ok = visit_dir(root, st) if stat.S_ISDIR(st.st_mode) else \
                visit_file(root, (st.st_dev, st.st_ino), stat.S_ISREG(st.st_mode))
            if not ok:
                with lock:
                    res.walk_complete = False
                return
        if batch:
            flush()
    finally:
        done.put(_DONE)      # wakes the collector: the count of files is final
        put(_DONE)


def _zip_parts(head: bytes, tail: bytes, size: int, cap: int) -> Optional[tuple]:
    """(record name, data.pkl, central directory) of an archive as torch writes it, from
    the first and last READ_BYTES of the file: the conditions of torchsave's fast path
    (data.pkl stored first, no comment, no zip64, its CRC right). None: anything else,
    or a pickle that is not within `head`; inspect_file decides those."""
    if size < 22 + 30 or len(head) < 30:
        return None
    method, name_len, extra_len = struct.unpack_from("<8xH16xHH", head)
    name = head[30:30 + name_len]
    if method != 0 or not name.endswith(b"/data.pkl") or name.count(b"/") != 1:
        return None
    eocd = tail[-22:]
    if not eocd.startswith(b"PK\x05\x06") or eocd[20:22] != b"\0\0":
        return None
    cd_size, cd_offset = struct.unpack_from("<II", eocd, 12)
    tail_at = size - len(tail)
    if cd_offset < tail_at or cd_offset + cd_size > size - 22:
        return None
    cd = tail[cd_offset - tail_at: cd_offset - tail_at + cd_size]
    entry_at = cd.find(name)
    if not cd.startswith(b"PK\x01\x02") or entry_at < 46 \
            or cd[entry_at - 46: entry_at - 42] != b"PK\x01\x02":
        return None
    crc, comp_size, file_size = struct.unpack_from("<III", cd, entry_at - 46 + 16)
    local_offset = struct.unpack_from("<I", cd, entry_at - 46 + 42)[0]
    if local_offset != 0 or comp_size != file_size or file_size > cap:
        return None
    start = 30 + name_len + extra_len
    data = head[start:start + file_size]
    if len(data) != file_size or zlib.crc32(data) != crc:
        return None
    return name, data, cd


def _unpickle(data: bytes) -> tuple:
    """What torchsave learns from one data.pkl, but the tensors' shapes (not needed
    here): (TorchSaveInfo without a path, whether it has anything to report, the record
    names of its storages)."""
    info, rec = TorchSaveInfo("", "zip"), _Recorder()
    try:
        _ScanUnpickler(io.BytesIO(_checked(data)), rec).load()
    except PickleRefused as exc:
        info.problem = str(exc)
    except Exception as exc:   # any malformed pickle: reported, never fatal
        info.problem = _pickle_problem(exc)
    info.locations = dict(rec.locations)
    info.unsafe_globals = unsafe_globals(rec.globals)
    return info, _reportable(info), tuple(f"data/{k}".encode() for k in rec.storages)


def inspect_path(path: str, max_pickle_bytes: int, memo: dict) -> Any:
    """inspect_file's answer for one file (None: not a torch.save file), or _CLEAN for a
    torch.save file with nothing to report. A file is opened once and read at most
    twice; a pickle byte-identical to one in `memo` is not unpickled again, and only
    the tensor records this file's archive names are checked (the rest of the answer is
    the pickle's). Anything but a plain archive goes to inspect_file."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):   # swapped for a FIFO or device since the walk
            raise NotRegularFile(path)
        head = os.pread(fd, READ_BYTES, 0)
        kind = sniff(head)
        if kind != "zip":
            parts = None
        elif st.st_size <= len(head):
            parts = _zip_parts(head, head, len(head), max_pickle_bytes)
        else:
            tail = os.pread(fd, READ_BYTES, max(0, st.st_size - READ_BYTES))
            parts = _zip_parts(head, tail, st.st_size, max_pickle_bytes)
    finally:
        os.close(fd)
    if kind is None:
        return None
    if parts is None:
        info = inspect_file(path, max_pickle_bytes=max_pickle_bytes)
        return info if info is None or _reportable(info) else _CLEAN
    name, data, cd = parts
    known = memo.get(data)
    if known is None:
        known = _unpickle(data)
        if len(memo) >= MEMO_ENTRIES:
            memo.clear()
        memo[data] = known
    template, reportable, records = known
    prefix = name[:-8]   # "<prefix>/" of "<prefix>/data.pkl"
    missing = [r for r in records if prefix + r not in cd]
    if not missing and not reportable:
        return _CLEAN
    info = dataclasses.replace(template, path=path, locations=dict(template.locations),
                               unsafe_globals=list(template.unsafe_globals))
    if missing:
        info.problem = (f"corrupt: {len(missing)} tensor record(s) missing (e.g. "
                        f"{(prefix + missing[0]).decode('utf-8', 'replace')})")
    return info


def _reportable(info: TorchSaveInfo) -> bool:
    return bool(info.devices or info.unsafe_globals or info.problem)


def _inspect(path: str, max_pickle_bytes: int, memo: dict) -> tuple:
    try:
        return ("ok", path, inspect_path(path, max_pickle_bytes, memo))
    except NotRegularFile:
        return ("special", path, None)
    except OSError as exc:
        return ("unreadable", path, exc.strerror or str(exc))
    except Exception as exc:   # a bug or an exotic file: reported, never fatal
        return ("ok", path, TorchSaveInfo(path, "unknown", problem=(
            f"could not be inspected: {type(exc).__name__}: {exc}")))


def _work(inq: "queue.Queue", outq: "queue.Queue", stop: threading.Event,
          max_pickle_bytes: int, memo: dict) -> None:
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
            out.append(_inspect(path, max_pickle_bytes, memo))
        outq.put(out)


# ---- worker processes: more cores when the files are fast ------------------------------
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_NOT_TORCH = ("ok", "", None)
_CLEAN_ITEM = ("ok", "", _CLEAN)


def serve(max_pickle_bytes: int) -> None:
    """A worker process: frames of NUL-separated paths on stdin (a 4-byte length first),
    one JSON line per frame on stdout: [clean torch files, other files, [kind, path,
    value] for the rest]."""
    memo: dict = {}
    inp, out = sys.stdin.buffer, sys.stdout
    while True:
        head = inp.read(4)
        if len(head) < 4:
            return
        paths = inp.read(struct.unpack(">I", head)[0]).split(b"\0")
        clean = other = 0
        rest = []
        for raw in paths:
            kind, path, value = _inspect(os.fsdecode(raw), max_pickle_bytes, memo)
            if value is _CLEAN:
                clean += 1
            elif kind == "ok" and value is None:
                other += 1
            else:
                if isinstance(value, TorchSaveInfo):
                    value = [value.format, value.locations, value.unsafe_globals,
                             value.problem]
                rest.append([kind, path, value])
        out.write(json.dumps([clean, other, rest]) + "\n")
        out.flush()


def _decode(reply: list) -> list:
    clean, other, rest = reply
    out = [_CLEAN_ITEM] * clean + [_NOT_TORCH] * other
    for kind, path, value in rest:
        if isinstance(value, list):
            value = TorchSaveInfo(path, value[0], locations=value[1],
                                  unsafe_globals=value[2], problem=value[3])
        out.append((kind, path, value))
    return out


def _work_in_process(inq: "queue.Queue", outq: "queue.Queue", stop: threading.Event,
                     max_pickle_bytes: int, memo: dict, children: list,
                     lock: threading.Lock) -> None:
    """A worker thread that hands its chunks to a child process (serve): another core.
    When the child cannot start or dies, the thread does the work itself."""
    env = dict(environ(), PYTHONPATH=os.pathsep.join(
        p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p))
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", NO_CWD_IMPORTS + "from doctor.scanners.cachescan import "
             f"serve; serve({int(max_pickle_bytes)})"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    except OSError:
        return _work(inq, outq, stop, max_pickle_bytes, memo)
    with lock:
        late = stop.is_set()   # the scan ended while the child started: not in its list
        if not late:
            children.append(child)
    if late:
        child.kill()
        child.wait()
        return
    assert child.stdin is not None and child.stdout is not None
    sent: collections.deque = collections.deque()   # chunks at the child, oldest first
    last = False
    while not stop.is_set():
        # Two chunks at the child: it starts the next while this thread waits for the GIL.
        while len(sent) < PIPELINE and not last:
            try:
                chunk = inq.get(timeout=0.1) if not sent else inq.get_nowait()
            except queue.Empty:
                break
            if chunk is _DONE:
                inq.put(_DONE)
                last = True
                break
            payload = b"\0".join(os.fsencode(p) for p in chunk)
            try:
                child.stdin.write(struct.pack(">I", len(payload)) + payload)
                child.stdin.flush()
            except OSError:
                pass   # the child died: its reply is missing below
            sent.append(chunk)
        if not sent:
            if last:
                break
            continue
        try:
            out = _decode(json.loads(child.stdout.readline()))
        except (OSError, ValueError, TypeError):   # the child died: go on in this thread
            if stop.is_set():
                return
            for chunk in sent:
                outq.put([_inspect(p, max_pickle_bytes, memo) for p in chunk])
            return _work(inq, outq, stop, max_pickle_bytes, memo)
        sent.popleft()
        outq.put(out)
    try:
        child.stdin.close()
    except OSError:
        pass


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
    chunk_size = [CHUNK]   # set by the loop below: FAST_CHUNK while files are fast
    memo: dict = {}        # data.pkl -> what it says, shared by the workers
    walker = threading.Thread(target=_walk, args=(list(roots), work, res, chunk_size, stop,
                                                  lock, done),
                              name="cachescan-walk", daemon=True)
    walker.start()
    # One worker to start with. Every GROW_S: while fewer than SLOW_FILES_PER_S are done
    # and the walk has files waiting, the time goes into I/O latency (Lustre, NFS), and
    # a worker thread is added (threads overlap the waits). While files are faster, the
    # work is CPU-bound (local disk, /dev/shm), where more threads only contend for the
    # GIL: a worker process (serve) is added instead, up to one per CPU this process may
    # use, while the walk is still ahead of the workers (a cache too small to be worth a
    # process is done before the first one would start).
    pool: list = []
    children: list = []
    feeders: list = []   # the threads that talk to them
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
        else (os.cpu_count() or 1)
    procs = 0

    def grow(target: Any = _work, *extra: Any) -> None:
        t = threading.Thread(target=target,
                             args=(work, done, stop, max_pickle_bytes, memo, *extra),
                             name=f"cachescan-{len(pool)}", daemon=True)
        pool.append(t)
        t.start()
        if target is _work_in_process:
            feeders.append(t)

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
                if not work.empty():
                    if slow and len(pool) - procs < max(1, workers):
                        grow()
                    elif not slow and procs < min(max(1, workers), cpus):
                        procs += 1
                        grow(_work_in_process, children, lock)
                chunk_size[0] = CHUNK if slow else FAST_CHUNK
                next_grow, scanned_at_grow = now + GROW_S, scanned
            try:
                batch = done.get(timeout=max(0.0, min(GROW_S, end - now)))
            except queue.Empty:
                batch = []
            if batch is _DONE:
                walk_done, batch = True, []
            with lock:
                for kind, path, value in batch:
                    if kind == "special":
                        res.special.append(path)
                        res.files_seen -= 1     # swapped for a FIFO after the walk saw it
                        continue
                    res.files_scanned += 1
                    if kind == "unreadable":
                        res.unreadable.append((path, value))
                    elif value is _CLEAN:
                        res.torch_files += 1
                    elif value is not None:
                        res.torch_files += 1
                        res.flagged.append(value)
            if progress and time.monotonic() >= next_tick:
                next_tick += 0.5
                progress(res.files_scanned, res.files_seen, walk_done)
    finally:
        stop.set()
        with lock:
            for child in children:   # never left behind: done, or stopped by the deadline
                child.kill()
                try:
                    child.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    pass
        for t in feeders:   # each ends at its child's EOF (or kills a child it just started)
            t.join(timeout=1)
    res.processes = procs
    if not walk_done:      # stopped by the deadline: the count of files is a lower bound
        res.walk_complete = False
    if not res.walk_complete:
        res.complete = False
    res.flagged.sort(key=lambda i: i.path)
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
