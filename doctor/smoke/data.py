"""The data smoke: run the job's DataLoader on this node under the job's limits, and say what
broke (doctor/smoke/data_node.py is the program that runs it).

Runs in the doctor's process and never imports torch. One node process (the ranks are its
forks) runs under the smoke's reaper (doctor/smoke/reaper.py) in a session of its own, through
the DDP smoke's Launcher: the same deadline, stack request, stop and cleanup (the reaper kills
every process the node started; the temp dir goes; the private /dev/shm is a mount in the
node's own namespace, gone with its last process).

`classify` reads what the node and its ranks wrote and names, per failure, the rank, the
worker, the signal and the user's file:line: the DataLoader(...) call that raised, the
`__getitem__` line a worker raised at, fd exhaustion, /dev/shm exhaustion, a worker killed
by a signal, a hang (with the stack), CUDA in a worker. Pure: no processes, no torch.
"""
from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from doctor import proc as doctor_proc
from doctor.smoke import data_node as N
from doctor.smoke import protocol as P
from doctor.smoke.classify import Frame, is_user_frame, parse_dump, signal_name
from doctor.smoke import zygote
from doctor.smoke.launcher import (Launcher, _read, _read_events, rank_path, smoke_environ,
                                    start_reaped)

FD_NEAR = 0.8     # of RLIMIT_NOFILE in use: near the limit the outcome varies from run to run
SHM_NEAR = 0.8    # of the node's /dev/shm
FD_TEXT = ("too many open files", "emfile", "received 0 items of ancdata")
SHM_TEXT = ("unable to allocate shared memory", "insufficient shared memory", "bus error",
            "sigbus")
ENOSPC = "no space left on device"
CUDA_TEXT = ("torch not compiled with cuda", "cannot re-initialize cuda in forked subprocess",
             "found no nvidia driver", "cuda driver initialization failed",
             "cuda error: initialization error", "no cuda gpus are available",
             "cuda call failed lazily", "hip error: initialization error")
# The ranks' TMPDIR holds the sockets multiprocessing binds to pass a worker's descriptors
# (resource_sharer's listener-XXXXXXXX under pymp-XXXXXXXX/): a Unix socket's path has at most
# 107 bytes, and past it every batch is lost and the loader hangs. A temp dir too deep for
# that gives the ranks a short one of their own in /tmp instead (removed with the run dir).
MAX_TMP_PATH = 107 - len("/pymp-xxxxxxxx/listener-xxxxxxxx") - 8
SHORT_TMP = "/tmp"
# The longest TMPDIR whose sockets fit (measured with torch 2.13's default file_descriptor
# strategy: 75 bytes pass, 76 lose every batch). The job's own TMPDIR is reproduced at its
# length, so a job past this fails here as it would on the node.
SOCKET_TMP_MAX = 107 - len("/pymp-xxxxxxxx/listener-xxxxxxxx")
SOCKET_TEXT = ("af_unix path too long",)
# The file_system strategy's torch_shm_manager binds its socket under TMPDIR as well, and
# fails sooner (measured: 73 bytes pass, 74 raise "torch_shm_manager at …: Invalid argument")
SHM_MANAGER_TMP_MAX = 73
SHM_MANAGER_TEXT = "torch_shm_manager at"
WORKER_RE = re.compile(r"in DataLoader worker process (\d+)")
TB_FRAME_RE = re.compile(r'^\s*File "(?P<file>.*)", line (?P<line>\d+), in (?P<func>.*)$')


@dataclass
class DataPlan:
    repo: Path
    spec: str                       # MOD:FACTORY
    ranks: int = 2
    batches: Optional[int] = None   # None: enough to fill every worker's prefetch twice
    timeout_s: float = 60.0
    nofile: Optional[int] = None    # the job's soft RLIMIT_NOFILE; None: this node's
    shm_bytes: Optional[int] = None  # the compute node's /dev/shm; None: this node's, as is
    env: dict = field(default_factory=dict)   # what the job's script exports to its ranks
    private_shm: bool = True         # False: this node's /dev/shm, measured
    tmpdir: Optional[str] = None     # the TMPDIR the job script exports (its length matters)
    tmpdir_at: str = ""              # where: script:line
    python: str = sys.executable
    world_size: int = 1              # Launcher's: one node process


@dataclass
class RankData:
    rank: int
    returncode: Optional[int]
    events: list
    output: str
    fault_dump: str
    usr1_dump: str
    workers: dict                   # worker id -> {"fault": text, "usr1": text}

    def event(self, name: str) -> Optional[dict]:
        found = [e for e in self.events if e.get("event") == name]
        return found[-1] if found else None

    def all(self, name: str) -> list:
        return [e for e in self.events if e.get("event") == name]


@dataclass
class DataRun:
    plan: DataPlan
    node: list                      # the node's events
    ranks: list
    node_output: str
    duration_s: float
    deadline_hit: bool

    def node_event(self, name: str) -> Optional[dict]:
        found = [e for e in self.node if e.get("event") == name]
        return found[-1] if found else None


class DataLauncher(Launcher):
    """The DDP smoke's Launcher with one process, the node, in place of the ranks (its
    wait, stop and cleanup read only the plan's timeout_s)."""

    def __init__(self, plan: DataPlan):
        super().__init__(plan, port=1)   # type: ignore[arg-type]
        self.data_plan = plan
        self.tmp: Optional[Path] = None
        self.short_tmp: Optional[Path] = None   # made outside the run dir: removed on its own

    def start(self) -> None:
        with self._lock:
            if self._closed or doctor_proc.stopping():
                raise RuntimeError("the data smoke was cancelled")
            plan = self.data_plan
            env = smoke_environ()
            env.update(plan.env)
            env.update({
                "PYTHONPATH": os.pathsep.join(rank_path(plan.repo, env)),
                "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1",
                P.ENV_PARENT: str(os.getpid()),
                N.ENV_SPEC: plan.spec, N.ENV_RANKS: str(plan.ranks),
                N.ENV_BATCHES: str(plan.batches or ""),
                N.ENV_NOFILE: "" if plan.nofile is None else str(plan.nofile),
                N.ENV_SHM: "" if not plan.shm_bytes else str(plan.shm_bytes),
                N.ENV_NO_NAMESPACE: "" if plan.private_shm else
                "smoke.data_private_shm is false in the settings"})
            env.setdefault("OMP_NUM_THREADS", "1")
            # the zygote (its torch import) before the run dir: see zygote.warm
            zygote.warm(plan.python, str(plan.repo), dict(env, TMPDIR=tempfile.gettempdir()),
                        time.time() + plan.timeout_s)
            self.dir = Path(tempfile.mkdtemp(prefix="doctor-data-smoke-"))
            self.tmp = self.dir / "tmp"
            self.tmp.mkdir()
            if len(str(self.tmp)) > MAX_TMP_PATH:   # see MAX_TMP_PATH
                self.tmp = self.short_tmp = Path(tempfile.mkdtemp(prefix="doctor-dds-",
                                                                  dir=SHORT_TMP))
            if plan.tmpdir and len(plan.tmpdir) > len(str(self.tmp)):
                self.tmp = pad_dir(self.tmp, len(plan.tmpdir))
            self.started_at = time.time()
            env.update({"TMPDIR": str(self.tmp), P.ENV_DIR: str(self.dir),
                        P.ENV_DEADLINE: repr(self.started_at + plan.timeout_s)})
            with open(self.dir / "node.out", "wb") as out:
                self.procs.append(start_reaped(
                    plan.python, "doctor.smoke.data_node", cwd=str(plan.repo), env=env,
                    out=out, exit_file=str(P.exit_file(self.dir, 0)),
                    deadline=self.started_at + plan.timeout_s))

    def cleanup(self) -> None:
        super().cleanup()
        if self.short_tmp is not None:
            shutil.rmtree(self.short_tmp, ignore_errors=True)
        self.tmp = self.short_tmp = None

    def collect_data(self) -> tuple:
        if any(getattr(proc, "lost", False) for proc in self.procs):
            raise RuntimeError(zygote.LOST_TEXT)
        d = self.dir
        if d is None:
            raise RuntimeError("the data smoke was cancelled")
        node = _read_events(N.node_events(d))
        exits = {e["rank"]: e.get("returncode") for e in node if e.get("event") == "rank_exit"}
        ranks = []
        for rank in range(self.data_plan.ranks):
            workers: dict = {}
            for path in sorted(d.glob(f"rank{rank}.w*.*")):
                wid, kind = path.name.split(".")[1][1:], path.name.split(".")[2]
                if wid.isdigit():
                    workers.setdefault(int(wid), {})[kind] = _read(path)
            ranks.append(RankData(rank, exits.get(rank), _read_events(P.events_file(d, rank)),
                                  _read(d / f"rank{rank}.out", limit=20000),
                                  _read(P.fault_file(d, rank)), _read(P.usr1_file(d, rank)),
                                  workers))
        return node, ranks, _read(d / "node.out", limit=6000)


def pad_dir(base: Path, length: int) -> Path:
    """A directory under `base` whose path is `length` bytes long: the ranks' TMPDIR at the
    job's length, so its sockets' paths are as long as on the node (removed with `base`)."""
    path = str(base)
    while len(path) < length:
        path += "/" + "p" * min(200, max(1, length - len(path) - 1))
    Path(path).mkdir(parents=True, exist_ok=True)
    return Path(path)


def run_data_smoke(plan: DataPlan,
                   on_launcher: Callable[[Launcher], None] = lambda _: None) -> DataRun:
    t0 = time.time()
    launcher = DataLauncher(plan)
    on_launcher(launcher)
    try:
        launcher.start()
        launcher.wait()
        node, ranks, out = launcher.collect_data()
    finally:
        launcher.cleanup()
    return DataRun(plan, node, ranks, out, time.time() - t0, launcher.deadline_hit)


# ---- classification ----------------------------------------------------------------------
@dataclass
class DataFailure:
    kind: str
    rank: int
    message: str
    fix: str
    worker: Optional[int] = None
    signal: Optional[str] = None
    frame: Optional[Frame] = None
    stack: Optional[str] = None
    warning: bool = False           # a measurement near a limit, not a failure seen
    extra: dict = field(default_factory=dict)
    ranks: list = field(default_factory=list)

    def data(self) -> dict:
        d = {"kind": self.kind, "rank": self.rank, "ranks": self.ranks or [self.rank],
             "worker": self.worker, "signal": self.signal, "stack": self.stack}
        if self.frame is not None:
            d.update(file=self.frame.file, line=self.frame.line)
        d.update(self.extra)
        return d


FIXES = {
    "loader-exception": "Fix the DataLoader(...) call at the line shown: torch rejects its "
                        "arguments before any batch is loaded (prefetch_factor and "
                        "persistent_workers need num_workers > 0: pass them only when there "
                        "are workers).",
    "worker-exception": "Fix the dataset at the line shown: a worker raised it while loading "
                        "a sample (run with num_workers=0 to debug it in the main process).",
    "exception": "Fix the line shown: the rank raised it while loading batches.",
    "fd-exhaustion": "Raise the open-file limit in the job script (`ulimit -n 65536` before "
                     "srun, when the hard limit allows it), or use fewer workers or a smaller "
                     "prefetch_factor, or torch.multiprocessing.set_sharing_strategy("
                     "'file_system').",
    "shm-exhaustion": "Make the batches and caches in /dev/shm fit the node's /dev/shm for all "
                      "ranks on it: fewer workers or a smaller prefetch_factor, a cache on "
                      "node-local disk instead of /dev/shm, or a larger /dev/shm (a container's "
                      "--shm-size, --ipc=host).",
    "worker-killed": "A signal killed a DataLoader worker: SIGSEGV/SIGABRT is native code in "
                     "the dataset (see the stack); SIGKILL is usually the kernel's OOM "
                     "killer (use fewer workers, or less memory per worker).",
    "rank-crash": "The rank itself died from a signal while loading batches: see the stack.",
    "hang": "A DataLoader worker or the rank never produced the batch: see the stack (a lock "
            "held while the workers forked, a queue or a pipe nobody fills, I/O that "
            "never returns). Set DataLoader(timeout=...) so a stuck worker fails loudly.",
    "cuda-in-worker": "Keep CUDA out of DataLoader workers: return CPU tensors from "
                      "__getitem__ and move the batch to the GPU in the training loop "
                      "(pin_memory=True, .to(device, non_blocking=True)); keep shared caches "
                      "on the CPU (.share_memory_() works with CPU tensors only).",
    "socket-path-too-long": "Shorten TMPDIR to {limit} bytes or less in the job script "
                            "(`export TMPDIR=/tmp`, or a short per-job dir such as "
                            "`export TMPDIR=/tmp/$SLURM_JOB_ID`): the workers pass each "
                            "batch through a Unix socket under TMPDIR, whose path has at most "
                            "107 bytes. (set_sharing_strategy('file_system') does not help: "
                            "torch_shm_manager's socket is under TMPDIR too, and fails past "
                            f"{SHM_MANAGER_TMP_MAX} bytes.)",
    "no-batches": "Give the loader at least one batch per rank (the dataset, the sampler's "
                  "share of it, drop_last).",
}


def _frames_from_text(text: str) -> list:
    """A Python traceback's frames (as `File "…", line N, in f` lines), most recent first."""
    out = []
    for line in text.splitlines():
        m = TB_FRAME_RE.match(line)
        if m:
            out.append(Frame(m.group("file"), int(m.group("line")), m.group("func")))
    return list(reversed(out))


def _exc_frames(exc: dict) -> list:
    return [Frame(f[0], int(f[1]), f[2]) for f in reversed(exc.get("frames") or [])]


def _user(frames: list, repo: Path) -> Optional[Frame]:
    return next((f for f in frames if is_user_frame(f.file, repo)), None)


def _has(text: str, needles: tuple) -> bool:
    low = text.lower()
    return any(n in low for n in needles)


def _shm_text(text: str) -> bool:
    low = text.lower()
    return _has(low, SHM_TEXT) or (ENOSPC in low and ("shm" in low or "shared memory" in low
                                                      or "/torch_" in low))


def _stack(frames: list, repo: Path) -> str:
    return "\n".join(("> " if is_user_frame(f.file, repo) else "  ") + f.text(repo)
                     for f in frames[:25])


def classify(run: DataRun) -> list:
    """The failures, the same failure on several ranks once (naming them all)."""
    repo = Path(run.plan.repo).resolve()
    found = [f for r in run.ranks for f in _classify_rank(r, run, repo)]
    if not any(f.kind == "shm-exhaustion" for f in found):   # else the ranks said it
        found += _shm_measured(run)
    merged: dict = {}
    for f in found:
        key = (f.kind, f.frame.file if f.frame else None, f.frame.line if f.frame else None)
        if key in merged:
            merged[key].ranks.append(f.rank)
        else:
            f.ranks = [f.rank]
            merged[key] = f
    return list(merged.values())


def _fd_limit(r: RankData) -> Optional[int]:
    start = r.event("start") or {}
    return start.get("fd_limit")


def _fd_peak(r: RankData) -> int:
    return max([e.get("peak", 0) for e in r.all("fds")] + [0])


def _workers_of(r: RankData, exc: Optional[dict]) -> list:
    return list((exc or {}).get("workers") or (r.event("hang") or {}).get("workers") or [])


def _classify_rank(r: RankData, run: DataRun, repo: Path) -> list:
    exc, hang = r.event("exception"), r.event("hang")
    limit, peak = _fd_limit(r), _fd_peak(r)
    near_fds = bool(limit and peak >= FD_NEAR * limit)
    fds = f"{peak} of {limit} open files in use" if limit else ""
    text = ((exc or {}).get("message", "") + "\n" + (exc or {}).get("text", "") + "\n"
            + r.output)
    out: list = []
    if exc is not None:
        phase = exc.get("phase")
        msg = exc.get("message", "")
        m = WORKER_RE.search(msg)
        worker = int(m.group(1)) if m else None
        frames = _frames_from_text(msg) if m else _exc_frames(exc)
        frame = _user(frames, repo)
        head = f"{exc.get('type')}: {msg.splitlines()[0] if msg else ''}".strip()
        if m and msg.count("\n"):
            head = msg.strip().splitlines()[-1]   # the worker's own exception, last line
        dead = [(w, pid, code) for w, pid, code in _workers_of(r, exc) if code and code < 0]
        if phase == "init":
            return [DataFailure("setup", r.rank, f"rank {r.rank}: the smoke's process group "
                                f"could not start: {head}", "", extra={"setup": True})]
        if _has(text, CUDA_TEXT):
            return [DataFailure(
                "cuda-in-worker" if m or phase == "iterate" else "exception", r.rank,
                f"rank {r.rank}{_w(worker)}: CUDA used in a DataLoader worker ({head}); on a "
                "GPU node a forked worker fails with 'Cannot re-initialize CUDA in forked "
                "subprocess'", FIXES["cuda-in-worker"], worker=worker, frame=frame,
                stack=_stack(frames, repo))]
        if dead and not (_has(text, FD_TEXT) or _shm_text(text)):
            w, pid, code = dead[0]
            sig = signal_name(code)
            wframes = parse_dump(r.workers.get(w, {}).get("fault", ""), None)
            kind = "shm-exhaustion" if sig == "SIGBUS" else "worker-killed"
            why = {"SIGKILL": " (the kernel's OOM killer sends it when the node's or the "
                              "job's memory runs out)",
                   "SIGBUS": " (a bus error: the worker's /dev/shm segment could not be "
                             "backed: /dev/shm is full)"}.get(sig or "", "")
            return [DataFailure(kind, r.rank, f"rank {r.rank}, worker {w}: "
                                f"killed by {sig}{why} while loading batch {exc.get('batch')}",
                                FIXES[kind], worker=w, signal=sig, frame=_user(wframes, repo),
                                stack=_stack(wframes, repo) or None,
                                extra={"exit_code": code, "pid": pid})]
        if _has(text, SOCKET_TEXT):
            return [_socket_failure(r, run, f"raised {head}")]
        if SHM_MANAGER_TEXT in text and "invalid argument" in text.lower() and \
                run.plan.tmpdir and len(run.plan.tmpdir) > SHM_MANAGER_TMP_MAX:
            return [_socket_failure(r, run, "raised 'torch_shm_manager …: Invalid argument'",
                                    SHM_MANAGER_TMP_MAX, "the file_system strategy's "
                                    "torch_shm_manager socket")]
        if _has(text, FD_TEXT):
            return [DataFailure("fd-exhaustion", r.rank, f"rank {r.rank}{_w(worker)}: out of "
                                f"file descriptors ({head})" + (f"; {fds}" if fds else ""),
                                FIXES["fd-exhaustion"], worker=worker, frame=frame,
                                extra={"fd_peak": peak, "fd_limit": limit})]
        if _shm_text(text):
            return [DataFailure("shm-exhaustion", r.rank, f"rank {r.rank}{_w(worker)}: "
                                f"/dev/shm is full ({head}) with {run.plan.ranks} rank(s) on "
                                f"{_shm_words(run)}", FIXES["shm-exhaustion"], worker=worker,
                                frame=frame, stack=_stack(frames, repo))]
        if phase == "loader":   # the factory gave (dataset, kwargs): the doctor's call
            given = (r.event("kwargs") or {}).get("kwargs") or {}
            args = ", ".join(f"{k}={v}" for k, v in given.items())
            return [DataFailure("loader-exception", r.rank, f"rank {r.rank}: DataLoader(dataset, "
                                f"{args}) with the arguments {run.plan.spec} returned raised "
                                f"{head}", "Fix these arguments where the job's config sets "
                                "them: torch rejects them before any batch is loaded "
                                "(prefetch_factor and persistent_workers need num_workers > 0).",
                                stack=_stack(frames, repo),
                                extra={"kwargs": given})]
        if phase == "factory":
            at = "the DataLoader(...) call" if any(f.func == "__init__" and "dataloader" in
                                                   f.file for f in frames) else "the factory"
            return [DataFailure("loader-exception", r.rank, f"rank {r.rank}: {at} raised "
                                f"{head}", FIXES["loader-exception"], frame=frame,
                                stack=_stack(frames, repo))]
        kind = "worker-exception" if m else "exception"
        return [DataFailure(kind, r.rank, f"rank {r.rank}{_w(worker)}: {head} while loading "
                            f"batch {exc.get('batch')}", FIXES[kind], worker=worker,
                            frame=frame, stack=_stack(frames, repo))]
    if hang is not None:
        where = f"batch {hang.get('batch')}" if hang.get("phase") == "iterate" else \
            f"the {hang.get('phase')} phase"
        if _has(r.output, SOCKET_TEXT):
            return [_socket_failure(r, run, f"hung at {where}")]
        if _has(r.output, FD_TEXT) or near_fds:
            return [DataFailure("fd-exhaustion", r.rank, f"rank {r.rank}: the loader hung at "
                                f"{where} with {fds} (a worker that runs out of descriptors "
                                "loses the batch and the loader waits for it forever)",
                                FIXES["fd-exhaustion"], extra={"fd_peak": peak,
                                                               "fd_limit": limit})]
        if _shm_text(r.output):
            return [DataFailure("shm-exhaustion", r.rank, f"rank {r.rank}: the loader hung at "
                                f"{where} after /dev/shm ran out on {_shm_words(run)}",
                                FIXES["shm-exhaustion"])]
        for w in sorted(r.workers):
            wframes = parse_dump(r.workers[w].get("usr1", ""), None)
            frame = _user(wframes, repo)
            if frame is not None:
                return [DataFailure("hang", r.rank, f"rank {r.rank}, worker {w}: stuck at "
                                    f"{where} for {run.plan.timeout_s:g}s",
                                    FIXES["hang"], worker=w, frame=frame,
                                    stack=_stack(wframes, repo))]
        start = r.event("start") or {}
        frames = parse_dump(r.usr1_dump, start.get("main_thread"))
        return [DataFailure("hang", r.rank, f"rank {r.rank}: stuck at {where} for "
                            f"{run.plan.timeout_s:g}s", FIXES["hang"], frame=_user(frames, repo),
                            stack=_stack(frames, repo) or None)]
    if r.returncode is not None and r.returncode < 0:
        frames = parse_dump(r.fault_dump, (r.event("start") or {}).get("main_thread"))
        sig = signal_name(r.returncode)
        kind = "shm-exhaustion" if sig == "SIGBUS" else "rank-crash"
        return [DataFailure(kind, r.rank, f"rank {r.rank}: killed by {sig}", FIXES[kind],
                            signal=sig, frame=_user(frames, repo),
                            stack=_stack(frames, repo) or None)]
    if r.returncode is None and not r.event("done"):
        return [DataFailure("hang", r.rank, f"rank {r.rank}: did not finish in "
                            f"{run.plan.timeout_s:g}s", FIXES["hang"])]
    cuda = sum(e.get("cuda_tensors") or 0 for e in r.all("batch"))
    if cuda:
        out.append(DataFailure("cuda-in-worker", r.rank, f"rank {r.rank}: the loader's batches "
                               f"hold {cuda} CUDA tensor(s) made in its workers (a CUDA cache "
                               "shared with workers)", FIXES["cuda-in-worker"]))
    if not r.all("batch") and r.event("exhausted"):
        out.append(DataFailure("no-batches", r.rank, f"rank {r.rank}: the loader gave no "
                               "batch", FIXES["no-batches"], warning=True))
    if near_fds:
        out.append(DataFailure("fd-exhaustion", r.rank, f"rank {r.rank}: {fds} "
                               f"({peak / (limit or 1):.0%}"
                               f", {FD_NEAR:.0%} or more): near the limit the loader fails "
                               "in some runs and not in others", FIXES["fd-exhaustion"],
                               warning=True, extra={"fd_peak": peak, "fd_limit": limit}))
    return out


def _socket_failure(r: RankData, run: DataRun, what: str, limit: int = SOCKET_TMP_MAX,
                    via: str = "") -> DataFailure:
    """The workers' sockets under TMPDIR had paths past 107 bytes (OSError: AF_UNIX path too
    long in their feeder threads: every batch is lost; or the file_system strategy's
    torch_shm_manager could not bind its socket)."""
    tmp = run.plan.tmpdir
    said = (f"the job's TMPDIR {tmp} ({len(tmp)} bytes" + (f", {run.plan.tmpdir_at}" if
            run.plan.tmpdir_at else "") + ")") if tmp else "TMPDIR"
    how = (f"{said} is longer than the {limit} bytes {via} leaves for it (a Unix socket's "
           "path has 107 bytes at most)" if via else
           f"'AF_UNIX path too long' in its workers: {said} is longer than the {limit} bytes "
           "a worker's socket path leaves for it (TMPDIR/pymp-xxxxxxxx/listener-xxxxxxxx, 107 "
           "bytes at most), so every batch is lost and the loader waits forever")
    return DataFailure("socket-path-too-long", r.rank, f"rank {r.rank}: the loader {what}: "
                       + how, FIXES["socket-path-too-long"].format(limit=limit),
                       extra={"tmpdir": tmp, "tmpdir_length": len(tmp) if tmp else None,
                              "tmpdir_max": limit})


def _w(worker: Optional[int]) -> str:
    return f", worker {worker}" if worker is not None else ""


def _shm_words(run: DataRun) -> str:
    shm = run.node_event("shm") or {}
    size = run.plan.shm_bytes
    if not size:
        return "this node's /dev/shm"
    how = "a private /dev/shm" if shm.get("private") else "/dev/shm"
    return f"{how} of {size / 2**20:.0f} MiB"


def _shm_measured(run: DataRun) -> list:
    """Without a private /dev/shm: the peak the ranks held, against the node's size."""
    shm = run.node_event("shm") or {}
    size = run.plan.shm_bytes
    peak = max([e.get("bytes", 0) for e in run.node if e.get("event") == "shm_peak"] + [0])
    if not size or not peak or peak < SHM_NEAR * size:
        return []
    why = shm.get("reason")
    over = peak > size
    measured = (f"{run.plan.ranks} rank(s) held {peak / 2**20:.0f} MiB of /dev/shm at their "
                f"peak, {peak / size:.0%} of the node's {size / 2**20:.0f} MiB")
    if shm.get("private"):
        if over:
            return []   # cannot be: the tmpfs stops it (and the ranks' failure says so)
        return [DataFailure("shm-exhaustion", 0, measured + ": near the limit, the loader "
                            "fails with larger batches or one more rank",
                            FIXES["shm-exhaustion"], warning=True)]
    return [DataFailure("shm-exhaustion", 0, measured + f" (measured on this node's /dev/shm: "
                        f"no private /dev/shm of the node's size here: {why})",
                        FIXES["shm-exhaustion"], warning=not over)]


def data_facts(run: DataRun) -> dict:
    """Timings and limits for the report's facts."""
    ranks = []
    loader: dict = {}
    for r in run.ranks:
        loader = loader or (r.event("loader") or {})
        batches = [e["seconds"] for e in r.all("batch")]
        it = r.event("iter") or {}
        starts = [e["t"] for e in r.all("worker_start")]
        ranks.append({
            "rank": r.rank, "exit_code": r.returncode, "batches": len(batches),
            "first_batch_s": _r(batches[0] + it.get("seconds", 0)) if batches else None,
            "per_batch_s": _r(sum(batches[1:]) / len(batches[1:])) if len(batches) > 1 else None,
            "worker_start_s": _r(max(starts) - it["t"] + it.get("seconds", 0))
            if starts and it else None,
            "fd_peak": _fd_peak(r) or None, "fd_limit": _fd_limit(r)})
    first = next((e.get("shapes") for r in run.ranks for e in r.all("batch") if e.get("shapes")),
                 None)
    shm = run.node_event("shm") or {}
    nofile = run.node_event("nofile") or {}
    imp = run.node_event("import") or {}
    peak = max([e.get("bytes", 0) for e in run.node if e.get("event") == "shm_peak"] + [0])
    return {"factory": run.plan.spec, "ranks_per_node": run.plan.ranks,
            "batches": loader.get("batches") or run.plan.batches,
            "timeout_s": run.plan.timeout_s,
            "num_workers": loader.get("num_workers"),
            "prefetch_factor": loader.get("prefetch_factor"),
            "start_method": loader.get("start_method"),
            "sharing_strategy": loader.get("sharing_strategy"),
            "batch_shapes": first,
            "tmpdir": run.plan.tmpdir, "tmpdir_length": len(run.plan.tmpdir)
            if run.plan.tmpdir else None,
            "fd_limit": nofile.get("soft"), "shm_bytes": run.plan.shm_bytes,
            "shm_private": shm.get("private"), "shm_note": shm.get("reason"),
            "shm_peak_bytes": peak or None, "import_s": _r(imp.get("seconds")),
            "duration_s": _r(run.duration_s), "deadline_hit": run.deadline_hit,
            "ranks": ranks}


def _r(x: Optional[float]) -> Optional[float]:
    return None if x is None else round(float(x), 4)

