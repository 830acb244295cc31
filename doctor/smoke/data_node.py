"""One node of the data smoke: `python -m doctor.smoke.data_node` (started by doctor/smoke/data.py
under the smoke's reaper).

The node first takes the job's limits: a private /dev/shm of the compute node's size (a user and
mount namespace of its own, a tmpfs mounted on /dev/shm: it vanishes with the last process in it,
so nothing is left mounted) and the job's RLIMIT_NOFILE. Then it imports torch once and forks
the ranks (R per node, as the job starts them), so torch is imported once, not R times on a busy
node. Each rank builds the user's DataLoader from the factory and iterates N batches with the
loader's own workers, prefetch_factor and start method; a watchdog in the rank gives up at the
deadline with the stacks of the rank and of each worker (faulthandler, per process files).

Everything goes as JSON lines to the run dir's events files (the node's, one per rank; the
workers append to their rank's); this program judges nothing. Its top level must stay free of
side effects: a `spawn` worker imports this module as `__mp_main__`.
"""
from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, Optional

ENV_SPEC = "DOCTOR_DATA_SPEC"          # MOD:FACTORY
ENV_RANKS = "DOCTOR_DATA_RANKS"        # ranks on this node
ENV_BATCHES = "DOCTOR_DATA_BATCHES"    # batches per rank
ENV_NOFILE = "DOCTOR_DATA_NOFILE"      # the job's soft RLIMIT_NOFILE, empty: the node's
ENV_SHM = "DOCTOR_DATA_SHM"            # bytes of the compute node's /dev/shm, empty: leave it
ENV_NO_NAMESPACE = "DOCTOR_DATA_NO_NAMESPACE"   # why not (smoke.data_private_shm: false)
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 16384, 1 << 18
SHM = "/dev/shm"
SAMPLE_S = 0.05
DUMP_WAIT_S = 0.5    # for the workers' stack dumps after SIGUSR1
SOCKET_GRACE_S = 3.0  # after "AF_UNIX path too long" with no batch since: the loader hangs
MAX_AUTO_BATCHES = 128
MAX_SHAPES = 16      # of the first batch's tensors, for the report (the memory estimate's batch)
JOINED_KEY = "doctor/joined"   # ranks out of init_process_group (wait_joined)
SETTLE_S = 3.0       # after the first batch: a training step's time for the prefetch to fill


def node_events(run_dir: Any) -> Path:
    return Path(run_dir) / "node.events"


def worker_file(run_dir: Any, rank: int, worker: int, kind: str) -> Path:
    """A worker's faulthandler dump: kind `fault` (fatal signal) or `usr1` (asked for)."""
    return Path(run_dir) / f"rank{rank}.w{worker}.{kind}"


class Events:
    """JSON lines, appended one write each (a worker shares its rank's file: O_APPEND)."""

    def __init__(self, path: Path):
        self.fh = open(path, "a", buffering=1)

    def __call__(self, event: str, **data: Any) -> None:
        data.update(event=event, t=time.time())
        self.fh.write(json.dumps(data, default=str) + "\n")
        self.fh.flush()


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def die_with_parent() -> None:
    """Killed with the reaper, whatever happens to it (PR_SET_PDEATHSIG)."""
    parent = int(os.environ.get("DOCTOR_SMOKE_PARENT", "0") or 0)
    if sys.platform.startswith("linux") and parent:
        _libc().prctl(1, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)


def private_shm(size: int) -> Optional[str]:
    """Mount a tmpfs of `size` bytes on /dev/shm in a mount namespace of this process's own
    (a user namespace too, so no privilege is needed); None when done, else why not."""
    import ctypes

    libc = _libc()
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0:
        try:   # the same ids inside: the ranks see their own files as the job would
            Path("/proc/self/setgroups").write_text("deny")
            Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
            Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")
        except OSError as exc:
            return f"cannot map the user into a user namespace: {exc.strerror}"
    elif libc.unshare(CLONE_NEWNS) != 0:
        return f"namespaces are not allowed here: {os.strerror(ctypes.get_errno())}"
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return f"cannot make the mounts private: {os.strerror(ctypes.get_errno())}"
    opts = f"size={size},mode=1777".encode()
    if libc.mount(b"tmpfs", SHM.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts) != 0:
        return f"cannot mount a tmpfs on {SHM}: {os.strerror(ctypes.get_errno())}"
    return None


def try_private_shm(size: int) -> Optional[str]:
    """private_shm in a forked child first: a namespace half made (a user namespace the
    user could not be mapped into) must not be where the ranks run. None when it works."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        why = private_shm(size)
        os.write(w, (why or "").encode()[:4000])
        os._exit(0 if why is None else 1)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        why = fh.read().decode(errors="replace")
    status = os.waitpid(pid, 0)[1]
    if os.waitstatus_to_exitcode(status) == 0:
        return private_shm(size)
    return why or "the namespace probe failed"


def shm_used_private() -> int:
    st = os.statvfs(SHM)
    return (st.f_blocks - st.f_bfree) * st.f_frsize


def shm_held(pids: list) -> int:
    """Bytes of /dev/shm files these processes hold open (the node's /dev/shm is shared with
    others: only what ours hold counts). torch unlinks its segments at once, so they show
    as `/dev/shm/torch_… (deleted)`; each file is counted once."""
    seen: dict = {}
    for pid in pids:
        base = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(base)
        except OSError:
            continue
        for fd in fds:
            try:
                if not os.readlink(f"{base}/{fd}").startswith(SHM + "/"):
                    continue
                st = os.stat(f"{base}/{fd}")
            except OSError:
                continue
            seen[(st.st_dev, st.st_ino)] = st.st_blocks * 512
    return sum(seen.values())


def descendants(root: int) -> list:
    kids: dict = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            kids.setdefault(int(stat[stat.rfind(b")") + 2:].split()[1]), []).append(int(name))
    out, todo = [], [root]
    while todo:
        for pid in kids.get(todo.pop(), ()):
            out.append(pid)
            todo.append(pid)
    return out


def fd_count(pid: Any = "self") -> Optional[int]:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


# ---- the node --------------------------------------------------------------------
def main() -> int:
    run_dir = os.environ["DOCTOR_SMOKE_DIR"]
    die_with_parent()
    emit = Events(node_events(run_dir))
    emit("start", pid=os.getpid())
    size = int(os.environ.get(ENV_SHM) or 0)
    private = None
    if size:
        no_ns = os.environ.get(ENV_NO_NAMESPACE)
        why = no_ns or try_private_shm(size)
        private = why is None
        emit("shm", private=private, size=size, reason=why)
    nofile = os.environ.get(ENV_NOFILE, "")
    if nofile:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = int(nofile)
        applied = want if hard == resource.RLIM_INFINITY or want <= hard else hard
        resource.setrlimit(resource.RLIMIT_NOFILE, (applied, hard))
        emit("nofile", wanted=want, soft=applied, hard=None if hard < 0 else hard)
    t = time.time()
    try:
        import torch  # noqa: F401  (once, for every rank: the ranks are forked below)
    except BaseException as exc:
        emit("exception", phase="import", type=type(exc).__name__, message=str(exc)[:2000])
        return 1
    emit("import", seconds=time.time() - t)
    ranks = int(os.environ.get(ENV_RANKS) or 1)
    children: dict = {}
    for rank in range(ranks):
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = rank_main(run_dir, rank, ranks)
            finally:
                os._exit(code)
        children[pid] = rank
    # the launcher's SIGUSR1 (its stack request before it stops us) goes on to the ranks
    signal.signal(signal.SIGUSR1, lambda *_: _kill_all(list(children), signal.SIGUSR1))
    peak = 0
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid in children:
            emit("rank_exit", rank=children.pop(pid), pid=pid,
                 returncode=os.waitstatus_to_exitcode(status))
            continue
        if pid:
            continue
        used = shm_used_private() if private else shm_held(descendants(os.getpid()))
        if used > peak:
            peak = used
            emit("shm_peak", bytes=peak)
        time.sleep(SAMPLE_S)
    return 0


def _kill_all(pids: list, sig: int) -> None:
    for pid in pids:
        _kill(pid, sig)


def _kill(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


# ---- one rank ------------------------------------------------------------------------
class WorkerInit:
    """Wraps the loader's worker_init_fn: each worker says when it started and where its
    stacks go (its own faulthandler files), then runs the user's worker_init_fn. Picklable
    (a `spawn` worker gets it by pickle) when the user's function is."""

    def __init__(self, user: Any, run_dir: str, rank: int):
        self.user, self.run_dir, self.rank = user, run_dir, rank

    def __call__(self, worker_id: int) -> None:
        files = [open(worker_file(self.run_dir, self.rank, worker_id, k), "w")
                 for k in ("fault", "usr1")]
        _keep.extend(files)
        # enabled already, as forked from the rank: enable() alone would only change the
        # file and leave torch's own SIGSEGV handler (installed since) in front of it
        faulthandler.disable()
        faulthandler.enable(file=files[0], all_threads=True)
        faulthandler.register(signal.SIGUSR1, file=files[1], all_threads=True, chain=False)
        Events(Path(self.run_dir) / f"rank{self.rank}.events")(
            "worker_start", worker=worker_id, pid=os.getpid())
        if self.user is not None:
            self.user(worker_id)


_keep: list = []  # faulthandler keeps only the fd: its files must stay open


def load_factory(spec: str) -> Any:
    import importlib

    mod_name, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(mod_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def exc_event(exc: BaseException, phase: str, batch: Optional[int] = None,
              workers: Optional[list] = None) -> dict:
    tb = traceback.TracebackException.from_exception(exc)
    return dict(phase=phase, batch=batch, type=type(exc).__name__, message=str(exc)[:6000],
                frames=[[f.filename, f.lineno, f.name, f.line] for f in tb.stack],
                text="".join(tb.format())[-8000:], workers=workers or [])


def worker_states(it: Any) -> list:
    """[worker id, pid, exit code] of the iterator's workers (None while alive)."""
    out = []
    for i, w in enumerate(getattr(it, "_workers", None) or []):
        try:
            out.append([i, w.pid, w.exitcode])
        except Exception:   # a worker object torch has already closed
            out.append([i, None, None])
    return out


def tensors(obj: Any, depth: int = 0) -> list:
    import torch

    if isinstance(obj, torch.Tensor):
        return [obj]
    if depth > 4:
        return []
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in tensors(o, depth + 1)]
    return []


def settle(it: Any, deadline: float) -> None:
    """Wait, as a training step does, until the workers have delivered every batch the
    loader asked for (num_workers x prefetch_factor in flight), at most SETTLE_S."""
    queue = getattr(it, "_data_queue", None)
    end = min(time.time() + SETTLE_S, deadline - 3.0)
    while queue is not None and time.time() < end:
        try:
            if queue.qsize() >= getattr(it, "_tasks_outstanding", 0):
                return
        except (NotImplementedError, OSError):
            return
        time.sleep(SAMPLE_S)


def wait_joined(store: Any, ranks: int, deadline: float) -> None:
    """Return once every rank has left init_process_group. gloo's full-mesh connect returns
    on a rank as soon as its own pairs are up, while its peers may still be connecting to
    each other: a rank that left then (its factory raised at once) closed its sockets under
    them, one peer failed with "Connection closed by peer" and the others waited for that
    peer's address until the smoke's deadline (60 s, and a false `hang` on 5 of 8 ranks in
    1 of ~5 runs of the demo on a busy node)."""
    store.add(JOINED_KEY, 1)
    while store.add(JOINED_KEY, 0) < ranks and time.time() < deadline - 2.0:
        time.sleep(0.005)


class SocketSaid:
    """Whether the rank's output (its workers' too) holds "AF_UNIX path too long": a worker
    could not bind the socket that passes a batch's descriptors (TMPDIR too deep), its
    feeder thread died with the batch, and the loader waits for that batch until the
    deadline. `lost_for(progress)`: the seconds since the text appeared with `progress` (the
    rank's phase and batch) unchanged, so that the smoke ends there instead of waiting out
    its deadline (60 s by default) for the same finding."""

    TEXT = b"af_unix path too long"

    def __init__(self, path: Path):
        self.path, self.offset, self.tail = path, 0, b""
        self.since: Optional[float] = None
        self.progress: Any = None

    def lost_for(self, progress: Any) -> float:
        if self.since is None:
            try:
                with open(self.path, "rb") as fh:
                    fh.seek(self.offset)
                    data = fh.read(1 << 20)
            except OSError:
                return 0.0
            self.offset += len(data)
            seen = (self.tail + data).lower()
            self.tail = seen[-len(self.TEXT):]
            if self.TEXT not in seen:
                return 0.0
            self.since, self.progress = time.time(), progress
        if progress != self.progress:   # a batch came after all: wait again from here
            self.since, self.progress = time.time(), progress
        return time.time() - self.since


def rank_main(run_dir: str, rank: int, ranks: int) -> int:
    out = os.open(Path(run_dir) / f"rank{rank}.out", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    os.dup2(out, 1)   # the rank's and its workers' output, apart from the other ranks'
    os.dup2(out, 2)
    os.close(out)
    signal.signal(signal.SIGUSR1, signal.SIG_DFL)
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(ranks),
                      LOCAL_WORLD_SIZE=str(ranks), NODE_RANK="0", GROUP_RANK="0")
    emit = Events(Path(run_dir) / f"rank{rank}.events")
    dumps = {k: open(Path(run_dir) / f"rank{rank}.{k}", "w") for k in ("fault", "usr1")}
    _keep.extend(dumps.values())
    faulthandler.enable(file=dumps["fault"], all_threads=True)
    faulthandler.register(signal.SIGUSR1, file=dumps["usr1"], all_threads=True, chain=False)
    deadline = float(os.environ.get("DOCTOR_SMOKE_DEADLINE") or 0) or time.time() + 60
    state: dict = {"it": None, "phase": "init", "batch": None, "fd_peak": 0}
    import resource

    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    emit("start", pid=os.getpid(), main_thread=threading.get_ident(), fd_limit=limit)

    said = SocketSaid(Path(run_dir) / f"rank{rank}.out")

    def watch() -> None:
        """Sample the fds of the rank and its workers; at the deadline (a hang), or once a
        worker said its socket path is too long and no batch came since, dump every stack,
        theirs and ours, and leave."""
        while time.time() < deadline - 2.0:
            pids = ["self"] + [w[1] for w in worker_states(state["it"]) if w[1]]
            counts = [c for p in pids if (c := fd_count(p)) is not None]
            if counts and max(counts) > state["fd_peak"]:
                state["fd_peak"] = max(counts)
                emit("fds", peak=state["fd_peak"], limit=limit)
            if said.lost_for((state["phase"], state["batch"])) >= SOCKET_GRACE_S:
                break
            time.sleep(SAMPLE_S)
        workers = worker_states(state["it"])
        emit("hang", phase=state["phase"], batch=state["batch"], workers=workers,
             fd_peak=state["fd_peak"], fd_limit=limit)
        for _, pid, code in workers:
            if pid and code is None:
                _kill(pid, signal.SIGUSR1)
        faulthandler.dump_traceback(file=dumps["usr1"], all_threads=True)
        time.sleep(DUMP_WAIT_S)
        os._exit(3)

    threading.Thread(target=watch, name="doctor-data-watchdog", daemon=True).start()
    import torch
    import torch.distributed as dist

    try:   # a DistributedSampler asks the process group for the ranks, as in the job
        store = dist.FileStore(f"{run_dir}/pg.store", ranks)
        dist.init_process_group("gloo", store=store, rank=rank, world_size=ranks)
    except Exception as exc:
        emit("exception", **exc_event(exc, "init"))
        return 1
    emit("joined")
    wait_joined(store, ranks, deadline)
    spec = os.environ[ENV_SPEC]
    try:
        t = time.time()
        made = load_factory(spec)()
        if isinstance(made, tuple) and len(made) == 2 and isinstance(made[1], dict):
            state["phase"] = "loader"   # (dataset, the job's DataLoader kwargs)
            emit("kwargs", kwargs={str(k): repr(v)[:200] for k, v in made[1].items()})
            made = torch.utils.data.DataLoader(made[0], **made[1])
        if not isinstance(made, torch.utils.data.DataLoader):
            raise TypeError(f"the factory {spec} returned {type(made).__name__}, not a "
                            "DataLoader (or (dataset, DataLoader kwargs))")
        loader = made
        emit("phase", phase="factory", seconds=time.time() - t)
    except BaseException as exc:
        emit("exception", **exc_event(exc, "factory" if state["phase"] == "init" else "loader"))
        return 1
    ctx = loader.multiprocessing_context
    method = ctx.get_start_method() if ctx is not None else \
        torch.multiprocessing.get_start_method(allow_none=True) or "fork"
    # By default, after the pause that lets every worker fill its prefetch (settle), one
    # more round of it: the steady state of a job, where the most batches (and their
    # descriptors, their /dev/shm) are in flight at once, is not reached by the first few.
    batches = int(os.environ.get(ENV_BATCHES) or 0) or min(
        MAX_AUTO_BATCHES, max(4, loader.num_workers * (loader.prefetch_factor or 0) + 1))
    emit("loader", batches=batches, num_workers=loader.num_workers,
         prefetch_factor=loader.prefetch_factor,
         batch_size=loader.batch_size, start_method=method if loader.num_workers else None,
         persistent_workers=loader.persistent_workers, pin_memory=loader.pin_memory,
         sharing_strategy=torch.multiprocessing.get_sharing_strategy())
    if loader.num_workers:
        loader.worker_init_fn = WorkerInit(loader.worker_init_fn, run_dir, rank)
    state["phase"] = "iterate"
    try:
        t = time.time()
        it = iter(loader)
        state["it"] = it
        emit("iter", seconds=time.time() - t)
        for n in range(1, batches + 1):
            state["batch"] = n
            t = time.time()
            try:
                batch = next(it)
            except StopIteration:
                emit("exhausted", batches=n - 1)
                break
            found = tensors(batch)
            cuda = sum(1 for x in found if x.is_cuda)
            shapes = [[list(x.shape), str(x.dtype).replace("torch.", "")]
                      for x in found[:MAX_SHAPES]] if n == 1 else None
            emit("batch", n=n, seconds=time.time() - t, fds=fd_count(), cuda_tensors=cuda,
                 shapes=shapes)
            del batch
            if n == 1:
                settle(it, deadline)
        workers = worker_states(it)
        del it
        state["it"] = None
        emit("done", fd_peak=state["fd_peak"], workers=workers)
    except BaseException as exc:
        emit("exception", **exc_event(exc, "iterate", state["batch"], worker_states(state["it"])))
        return 1
    finally:
        try:
            dist.destroy_process_group()
        except Exception:
            pass
    return 0


if __name__ == "__main__":
    code = main()
    # torch is imported here: the interpreter's teardown of it would cost the run a second
    # or more on a busy node, and every event is already written (each write is flushed)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
