"""One torch import for all the smokes: a warm parent (a "zygote", like multiprocessing's
forkserver with preload) that imports torch once and forks the DDP smoke's rank 0 (all its
ranks when PYTHONHASHSEED is fixed: forked processes share the zygote's hash seed, and a
model built in a set's order must fail as it does in the job), the data smoke's node, the
memory estimate's child and, in a run that smokes, the torch probe's child
(doctor/smoke/torch_probe.py, used only when it imported the torch file the isolated probe
would).

Each of those was a `python -m MODULE` of its own, and each paid torch's import (1.1-1.5 s of
CPU): on 2 cores that alone kept `doctor run` above 1.2x a plain 2-rank DDP launch.

`python -m doctor.smoke.zygote` (started by `zygote_for`, in the doctor's process) imports
torch, torch.distributed and torch.nn and nothing more: no tensor op, so no thread pool and no
CUDA/OpenMP state is forked (it reports its thread count; more than one and it is not used).
Then, per request on its control socket, it forks a reaper (doctor/smoke/reaper.py's
`supervise`, in a session of its own, as the doctor's own reapers are), and the reaper forks
the child once the doctor has its pid (a reply too late for the doctor, which then started
the child as before, runs nothing). The child takes its own environment, cwd, stdout/stderr,
argv and temp dir and runs its module as `__main__` (runpy), as `python -m MODULE` would.
The reaper writes the same exit file; the zygote tells the doctor each reaper's end over the
request's own socket, so the launcher watches a `Child` as it watches a Popen.

The zygote is per interpreter, working directory and environment: a child whose python,
cwd or environment differs (beyond the variables each child sets for itself, PER_CHILD) is
started as before, and so is every child when the zygote cannot start (no torch, a thread at
import, not Linux) or when a repo's sitecustomize/usercustomize or a .pth ran in it (what
they do must happen in each child). If the zygote dies, every reaper it forked ends its
child (their parent's death signal), and the doctor's `Child` reports the loss (`lost`): the
smoke ends with an error, never a hang. The zygote ends when the doctor closes its socket or
dies. `DOCTOR_NO_ZYGOTE=1` starts every child as before (for comparisons).
"""
from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any, Optional

ENV_FD = "DOCTOR_ZYGOTE_FD"        # the zygote's end of its control socket
ENV_OFF = "DOCTOR_NO_ZYGOTE"       # set: no zygote, every child started as before
ENV_TMP = "DOCTOR_ZYGOTE_TMP"      # the zygote's own TMPDIR, which it removes when it ends
ENV_SUM = "DOCTOR_ZYGOTE_ENV"      # env_sum of the environment the doctor gave it
# What the zygote imports. Not torch._dynamo, though the first DDP or optimizer step of each
# child imports it (~800 modules with sympy, as much CPU again as torch itself): preloaded,
# 2 of 6 demo runs hung in the DDP smoke's destroy_process_group while the data smoke ran
# (0 of 6 in the same loop without it). Its import also makes $TMPDIR/torchinductor_$USER and binds
# DynamoCache there: the zygote has a TMPDIR of its own, removed with it, for any torch that
# writes at import.
PRELOAD = ("torch", "torch.distributed", "torch.nn")
# A child's environment reaches the zygote's forked copy as os.environ (putenv), so whatever
# is read after torch's import is the child's own. What torch, its libraries and the
# interpreter read when they start or import (TORCH_CPP_LOG_LEVEL, OMP_NUM_THREADS,
# PYTHONPATH, LD_PRELOAD, ...) must be the zygote's too: a child that differs in those is
# started as before. These families are taken as read at start or import:
IMPORT_TIME = ("TORCH", "PYTORCH", "PYTHON", "OMP_", "KMP_", "GOMP_", "MKL", "OPENBLAS",
               "GOTO", "BLIS", "NUMPY", "NPY_", "DNNL", "ONEDNN", "LD_", "GLIBC", "MALLOC",
               "CUDA", "CUBLAS", "CUDNN", "NVIDIA", "HIP", "ROCM", "HSA_", "AMD_", "KINETO",
               "TRITON", "XLA", "ACCELERATE")
# ...except these, which each child sets or which are read later:
# TORCH_DISTRIBUTED_DEBUG is read at torch.distributed's import, so the child reads its own
# again (set_debug_level_from_env); PYTHONUNBUFFERED the child applies to its std streams;
# CUDA_VISIBLE_DEVICES and the allocator's *_ALLOC_CONF are read when CUDA is first used,
# which the zygote never does; TMPDIR: tempfile's cached dir is reset in the child.
PER_CHILD = {"TORCH_DISTRIBUTED_DEBUG", "PYTHONUNBUFFERED", "CUDA_VISIBLE_DEVICES",
             "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
             "TMPDIR", "TEMP", "TMP", "TORCHINDUCTOR_CACHE_DIR"}
# Beyond these families, the zygote records every variable Python code reads while it
# imports (torch 2.13: FX_PATCH_GETITEM, COMPILE_STROBELIGHT_*, ...): a child must have the
# zygote's value of each of them too (`Zygote.serves`).
# Not given to the zygote: the first child's rank and run (each child has its own).
RUN_VARS = ("DOCTOR_SMOKE_", "DOCTOR_DATA_")
RANK_VARS = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}
READY_TIMEOUT_S = 90.0   # importing torch from a network filesystem can take a while
REPLY_TIMEOUT_S = 10.0   # for the zygote to fork a reaper and name it
GO = b"g"   # the doctor has the reaper's pid: it may start the child
OUT, ERR = "import.out", "import.err"   # in its TMPDIR: what it printed while it imported
IMPORT_OUTPUT_MAX = 1 << 20
LOST = 255               # a Child's returncode when the zygote died before reporting it


def import_env(env: dict) -> dict:
    """The part of `env` the zygote and its children must share."""
    return {k: v for k, v in env.items() if k.startswith(IMPORT_TIME) and k not in PER_CHILD}


def env_sum(env: Any) -> str:
    """A digest of an environment, to tell whether startup code (a sitecustomize, a .pth)
    changed it. Not LC_CTYPE: the interpreter sets it itself under the C locale (PEP 538),
    as it does in every child."""
    import hashlib

    items = sorted((k, v) for k, v in env.items()
                   if not k.startswith("DOCTOR_ZYGOTE_") and k != "LC_CTYPE")
    return hashlib.sha256(json.dumps(items).encode()).hexdigest()


def fixed_hash_seed(env: dict) -> bool:
    """Whether processes with `env` all get the same hash seed (PYTHONHASHSEED an integer),
    so that more than one of them may be forked from the zygote (which then has it too)."""
    return (env.get("PYTHONHASHSEED") or "random").isdigit()


# ---- the doctor's side ----------------------------------------------------------------
class Child:
    """A reaper the zygote forked, with Popen's interface as the launcher uses it (pid,
    returncode, poll, wait, send_signal). `lost`: the zygote died before it said how the
    reaper ended (its returncode is then LOST, once the reaper is gone)."""

    def __init__(self, conn: socket.socket, pid: int, args: Any):
        self.conn, self.pid, self.args = conn, pid, args
        self.returncode: Optional[int] = None
        self.lost = False
        self._buf = b""
        # The smoke's thread waits on it while the main thread's cleanup signals and waits:
        # without it one thread selects on (or closes again) what another closed, EBADF,
        # or a pidfd number already reused for another file
        self._lock = threading.RLock()
        try:
            self._pidfd: Optional[int] = os.pidfd_open(pid)
        except OSError:   # already gone
            self._pidfd = None

    def _pump(self, timeout: float) -> None:
        with self._lock:
            self._pump_locked(timeout)

    def _pump_locked(self, timeout: float) -> None:
        if self.conn.fileno() < 0:
            return
        ready, _, _ = select.select([self.conn], [], [], timeout)
        if not ready:
            return
        try:
            data = self.conn.recv(4096)
        except OSError:
            data = b""
        if not data:
            self.conn.close()
            if self.returncode is None:
                self.lost = True
            return
        self._buf += data
        while b"\n" in self._buf:
            line, self._buf = self._buf.split(b"\n", 1)
            msg = json.loads(line)
            if "returncode" in msg:
                self.returncode = msg["returncode"]
                self._close()

    def _gone(self) -> bool:
        if self._pidfd is None:
            return True
        return bool(select.select([self._pidfd], [], [], 0)[0])

    def _close(self) -> None:
        with self._lock:
            self.conn.close()
            if self._pidfd is not None:
                os.close(self._pidfd)
                self._pidfd = None

    def poll(self) -> Optional[int]:
        with self._lock:
            if self.returncode is None:
                self._pump(0)
                # its reaper ended its child when the zygote died
                if self.lost and self._gone():
                    self.returncode = LOST
                    self._close()
            return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            left = 0.05 if end is None else min(0.05, end - time.monotonic())
            if left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            if self.lost:
                time.sleep(left)
            else:
                self._pump(left)
        return self.returncode   # type: ignore[return-value]

    def send_signal(self, sig: int) -> None:
        with self._lock:
            if self.returncode is None and self._pidfd is not None:
                try:
                    signal.pidfd_send_signal(self._pidfd, sig)
                except ProcessLookupError:
                    pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Zygote:
    def __init__(self, proc: subprocess.Popen, sock: socket.socket, key: tuple, env: dict,
                 tmp: str):
        self.proc, self.sock, self.key, self.env, self.tmp = proc, sock, key, env, tmp
        self.reads: list = []   # the variables its imports read (Python code's reads)
        self.children: list = []
        self.pending = 0   # zygote_for's callers that have not spawned yet
        self._lock = threading.Lock()

    def serves(self, key: tuple, env: dict) -> bool:
        """Whether a child with this key and environment may be forked from it."""
        return self.key == key and all(env.get(name) == self.env.get(name)
                                       for name in self.reads if name not in PER_CHILD)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def busy(self) -> bool:
        # Not poll(): that would read the sockets of children other threads watch. A child
        # whose end nobody has read yet counts as running (the next child starts as before)
        return self.pending > 0 or any(c.returncode is None and not c.lost
                                       for c in self.children)

    def spawn(self, module: str, args: list, *, cwd: str, env: dict, out: int, err: int,
              exit_file: str) -> Optional[Child]:
        """Fork a reaper that runs `python -m module *args` as its child; None when the
        zygote could not (it died): start the child as before."""
        try:
            return self._spawn(module, args, cwd, env, out, err, exit_file)
        finally:
            with _lock:
                self.pending -= 1

    def _spawn(self, module: str, args: list, cwd: str, env: dict, out: int, err: int,
               exit_file: str) -> Optional[Child]:
        req = {"module": module, "args": args, "cwd": cwd, "env": env, "exit_file": exit_file}
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self._lock:
                if not self.alive():
                    return None
                socket.send_fds(self.sock, [b"spawn"], [theirs.fileno(), out, err])
            theirs.close()
            mine.settimeout(REPLY_TIMEOUT_S)
            mine.sendall(json.dumps(req).encode() + b"\n")   # the reaper reads it
            buf = b""
            while b"\n" not in buf:
                data = mine.recv(4096)
                if not data:
                    raise OSError("the zygote closed the request")
                buf += data
            line, rest = buf.split(b"\n", 1)
            mine.sendall(GO)   # only now may the reaper fork the child (see _reaper)
            mine.setblocking(True)
        except OSError:
            mine.close()
            theirs.close()
            return None
        child = Child(mine, int(json.loads(line)["pid"]), [module, *args])
        child._buf = rest
        self.children.append(child)
        return child

    def close(self) -> None:
        """Close its socket (it exits on that) and reap it; kill it if it does not exit."""
        import shutil

        self.sock.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)


_lock = threading.Lock()
_current: Optional[Zygote] = None
_failed: set = set()     # keys whose zygote could not start: not tried again
# A zygote being started (up to READY_TIMEOUT_S), outside _lock: (its key, set when done).
# Callers for that key wait for it; any other caller, close(), and the pending counts do not
_starting: Optional[tuple] = None
_closes = 0              # close() calls: a start that a close() overlapped ends its zygote


def usable() -> bool:
    return (sys.platform.startswith("linux") and hasattr(os, "pidfd_open")
            and hasattr(socket, "send_fds") and hasattr(signal, "pidfd_send_signal"))


def zygote_for(python: str, cwd: str, env: dict, deadline: float) -> Optional[Zygote]:
    """The zygote that can fork a child of `python` in `cwd` with `env`: the running one,
    or one started now (when none runs, or the running one is idle). None: start the child
    as before."""
    global _current
    from doctor import proc as doctor_proc

    if env.get(ENV_OFF) or doctor_proc.environ().get(ENV_OFF) or not usable():
        return None
    global _starting
    key = (python, os.path.realpath(cwd), tuple(sorted(import_env(env).items())))
    entered = _closes
    while True:
        with _lock:
            if _closes != entered:   # the run that asked has ended while this caller waited
                return None
            z = _current
            if z is not None and z.key == key and z.alive():
                if not z.serves(key, env):
                    return None
                z.pending += 1
                return z
            if key in _failed or doctor_proc.stopping():
                return None
            if _starting is not None:
                if _starting[0] != key:
                    return None   # another environment's zygote is starting: as if busy
                done: threading.Event = _starting[1]
            else:
                if z is not None:
                    if z.alive() and z.busy():
                        return None   # another interpreter or environment is using it
                    _stop(z)
                    _current = None
                done = threading.Event()
                _starting, closes = (key, done), entered
                break
        # Another caller is starting the zygote this child wants: wait for it, then look again
        if not done.wait(max(0.0, deadline - time.time())):
            return None
    # Started without the lock (torch's import takes 1-90 s): other callers, close() and
    # the pending counts of spawns that run meanwhile go on
    z = None
    try:
        z = _start(python, cwd, {k: v for k, v in env.items() if k not in PER_CHILD and k not in
                                 RANK_VARS and not k.startswith(RUN_VARS)}, key, deadline)
    finally:
        with _lock:
            _starting = None
            done.set()
            if z is None:   # it failed (or _start raised)
                _failed.add(key)
            elif closes != _closes:   # the run that wanted it has ended meanwhile
                _stop(z)
                z = None
            else:
                z.pending += 1
                _current = z
    return z


def warm(python: str, cwd: str, env: dict, deadline: float) -> None:
    """Start the zygote for these children now, if it will be used (zygote_for). The spawn
    sites call it before they make their run dir: a doctor killed (SIGKILL) during the
    1-90 s of torch's import in the zygote then leaves no temp dir behind."""
    z = zygote_for(python, cwd, env, deadline)
    if z is not None:
        with _lock:
            z.pending -= 1


def _start(python: str, cwd: str, shared: dict, key: tuple,
           deadline: float) -> Optional[Zygote]:
    from doctor import proc as doctor_proc

    import shutil
    import tempfile

    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    tmp = tempfile.mkdtemp(prefix="doctor-zygote-")
    env = dict(shared, **{ENV_FD: str(theirs.fileno()), ENV_TMP: tmp, "TMPDIR": tmp})
    env[ENV_SUM] = env_sum(env)
    try:
        # What its imports print (torch's warnings) goes to files that it replays into every
        # child's stdout and stderr, where `python -m` would have printed it (see _run)
        with open(os.path.join(tmp, OUT), "wb") as out, \
                open(os.path.join(tmp, ERR), "wb") as err:
            proc = subprocess.Popen([python, "-m", "doctor.smoke.zygote"], cwd=cwd, env=env,
                                    stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    pass_fds=[theirs.fileno()], start_new_session=True)
    except OSError:
        mine.close()
        theirs.close()
        shutil.rmtree(tmp, ignore_errors=True)
        return None
    theirs.close()
    doctor_proc._running.add(proc)   # a signal kills it at once; the doctor's exit too
    z = Zygote(proc, mine, key, shared, tmp)
    wait = max(1.0, min(READY_TIMEOUT_S, deadline - time.time()))
    ready: dict = {}
    if select.select([mine], [], [], wait)[0]:
        try:
            ready = json.loads(mine.recv(65536) or b"{}")
        except (OSError, ValueError):
            ready = {}
    # A repo's sitecustomize/usercustomize (or a .pth that changed the environment) ran
    # once, here: its changes and output would be lost for every child, which must each
    # run it as `python -m` does
    if not ready.get("ok") or ready.get("threads") != 1 or ready.get("startup"):
        if not ready:   # still importing (a hung import): closing its socket would not end it
            proc.kill()
        _stop(z)
        return None
    z.reads = list(ready.get("reads") or [])
    return z


def _stop(z: Zygote) -> None:
    from doctor import proc as doctor_proc

    z.close()
    doctor_proc._running.discard(z.proc)


@atexit.register
def close() -> None:
    """End the zygote: at the end of the run that started it (runner.run_checks: a library
    caller's process keeps no torch process between runs), and at the doctor's exit. One
    still starting (a check thread that timed out meanwhile) is ended when its start ends."""
    global _current, _closes
    if not _lock.acquire(timeout=5):
        return
    try:
        _closes += 1
        if _current is not None:
            _stop(_current)
        _current = None
    finally:
        _lock.release()


def run_module(python: str, module: str, args: list, *, cwd: str, env: dict,
               timeout: float, tmp: str) -> Any:
    """`run_cmd([python, "-m", module, *args])` through the zygote, under a reaper: a
    doctor.proc.CmdResult, or None when there is no zygote for it (run it as before).
    Its output and exit file go to `tmp`, which the caller removes."""
    from doctor import proc as doctor_proc

    exit_file = os.path.join(tmp, "exit")
    # the files first: zygote_for counts a spawn as pending until spawn() is called
    with open(os.path.join(tmp, "out"), "wb") as out, \
            open(os.path.join(tmp, "err"), "wb") as err:
        z = zygote_for(python, cwd, env, time.time() + timeout)
        if z is None:
            return None
        child = z.spawn(module, args, cwd=cwd, env=env, out=out.fileno(), err=err.fileno(),
                        exit_file=exit_file)
    if child is None:
        return None
    doctor_proc._running.add(child)   # a signal kills it at once, as run_cmd's children
    timed_out = False
    try:
        try:
            child.wait(timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            child.send_signal(signal.SIGTERM)   # the reaper ends it and all it started
            try:
                child.wait(15)
            except subprocess.TimeoutExpired:
                child.kill()
    finally:
        doctor_proc._running.discard(child)
    if child.lost:
        raise RuntimeError(LOST_TEXT)

    def read(name: str) -> str:
        try:
            with open(os.path.join(tmp, name), errors="replace") as fh:
                return fh.read()
        except OSError:
            return ""
    try:
        code = json.loads(read("exit"))["returncode"]
    except (ValueError, KeyError, TypeError):
        code = None
    return doctor_proc.CmdResult(None if timed_out else code, read("out"), read("err"),
                                 timed_out=timed_out)


LOST_TEXT = ("the doctor's torch process (the zygote that forks the smokes' processes after "
             "importing torch once) died while they ran: their processes were ended and the "
             "result is unknown; run again, or with DOCTOR_NO_ZYGOTE=1")


# ---- the zygote's side ----------------------------------------------------------------
def serve() -> int:
    import shutil

    startup = [] if env_sum(os.environ) == os.environ.get(ENV_SUM) else ["environment"]
    paths = [os.path.realpath(p) for p in
             [os.getcwd(), *os.environ.get("PYTHONPATH", "").split(os.pathsep)] if p]
    for name in ("sitecustomize", "usercustomize"):   # one of the repo's, on its path
        where = os.path.realpath(getattr(sys.modules.get(name), "__file__", None) or "/")
        if any(where.startswith(p + os.sep) for p in paths):
            startup.append(name)
    ctl = socket.socket(fileno=int(os.environ.pop(ENV_FD)))
    tmp = os.environ.pop(ENV_TMP, "")
    os.environ.pop(ENV_SUM, None)
    try:
        return _serve(ctl, startup, tmp)
    finally:
        if tmp and os.getpid() == ZYGOTE_PID:
            shutil.rmtree(tmp, ignore_errors=True)


ZYGOTE_PID = os.getpid()
IMPORT_OUTPUT = (b"", b"")   # what the imports printed on stdout and stderr (_serve)


def _serve(ctl: socket.socket, startup: list, tmp: str = "") -> int:
    global IMPORT_OUTPUT
    import importlib

    ready: dict = {"ok": False, "pid": os.getpid(), "startup": startup}
    reads: set = set()
    environ = type(os.environ)
    getitem = environ.__getitem__

    def recording(self: Any, name: str) -> Any:   # os.environ[...], .get, getenv, `in`
        reads.add(name)
        return getitem(self, name)

    environ.__getitem__ = recording   # type: ignore[method-assign]
    try:
        for name in PRELOAD:
            if name == "torch._dynamo" and os.environ.get("TORCH_CACHING_PRECOMPILE") == "1":
                continue
            importlib.import_module(name)
        ready.update(ok=True, threads=len(os.listdir("/proc/self/task")), reads=sorted(reads))
    except BaseException as exc:
        ready["error"] = f"{type(exc).__name__}: {exc}"[:2000]
    finally:
        environ.__getitem__ = getitem   # type: ignore[method-assign]
    IMPORT_OUTPUT = (_printed(tmp, OUT), _printed(tmp, ERR))
    ctl.send(json.dumps(ready).encode())
    if not ready["ok"] or ready["threads"] != 1:
        return 1
    me = os.getpid()
    conns: dict = {}     # reaper pid -> its request's socket
    pidfds: dict = {}    # pidfd -> reaper pid
    while True:
        readable, _, _ = select.select([ctl, *pidfds], [], [], 1.0)
        for fd in readable:
            if fd in pidfds:
                os.close(fd)
                del pidfds[fd]
        while conns:   # reap every reaper that ended; tell its doctor-side Child
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if not pid:
                break
            conn = conns.pop(pid, None)
            if conn is not None:
                try:
                    conn.sendall(json.dumps(
                        {"returncode": os.waitstatus_to_exitcode(status)}).encode() + b"\n")
                except OSError:
                    pass
                conn.close()
        if ctl not in readable:
            continue
        try:
            msg, fds, _, _ = socket.recv_fds(ctl, 64, 3)
        except OSError:
            break
        if not msg:
            break    # the doctor closed its end, or died: the reapers end with this process
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            continue
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                code = _reaper(fds, me)
            finally:
                os._exit(code)
        os.close(fds[1])
        os.close(fds[2])
        conn = socket.socket(fileno=fds[0])
        try:
            conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        except OSError:
            pass
        conns[pid] = conn
        try:
            pidfds[os.pidfd_open(pid)] = pid
        except OSError:
            pass
    return 0


def _printed(tmp: str, name: str) -> bytes:
    """What this process printed to a std stream (a file in `tmp`) so far."""
    for std in (sys.stdout, sys.stderr):
        try:
            std.flush()
        except Exception:
            pass
    try:
        with open(os.path.join(tmp, name), "rb") as fh:
            return fh.read(IMPORT_OUTPUT_MAX)
    except OSError:
        return b""


def _reaper(fds: list, zygote: int) -> int:
    """In the forked reaper: read the request, take the child's session, stdio and cwd,
    then supervise the child as doctor/smoke/reaper.py does."""
    from doctor.smoke import reaper

    os.setsid()   # as start_new_session: ending the reaper's group ends the child's
    conn_fd, out, err = fds
    # The request, then GO: the doctor sends GO once it has this reaper's pid. One that
    # gave up waiting for it (REPLY_TIMEOUT_S) closed its end and started the child as
    # before: then nothing runs here, or the child would run twice.
    buf = b""
    while b"\n" not in buf or buf.endswith(b"\n"):
        data = os.read(conn_fd, 1 << 20)
        if not data:
            return 127
        buf += data
    line, rest = buf.split(b"\n", 1)
    if not rest.startswith(GO):
        return 127
    req = json.loads(line)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(err, 2)
    # Nothing of the zygote's stays open: its control socket, the other requests' sockets
    # (a child of the doctor's starts with 0, 1 and 2 only: subprocess's close_fds)
    os.closerange(3, _max_fd())
    os.chdir(req["cwd"])

    def fork(env: dict) -> int:
        pid = os.fork()
        if pid == 0:
            os._exit(_run(req, env))
        return pid

    return reaper.supervise(req["exit_file"], fork, req["env"], zygote, req["module"])


def _max_fd() -> int:
    try:
        return max(int(n) for n in os.listdir("/proc/self/fd")) + 1
    except (OSError, ValueError):
        return os.sysconf("SC_OPEN_MAX")


def _run(req: dict, env: dict) -> int:
    """In the forked child: become `python -m MODULE ARGS` with `env`, and run it."""
    import atexit
    import io
    import runpy
    import tempfile

    signal.pthread_sigmask(signal.SIG_SETMASK, set())   # the reaper blocked them
    os.environ.clear()
    os.environ.update(env)
    sys.dont_write_bytecode = bool(env.get("PYTHONDONTWRITEBYTECODE"))
    unbuffered = bool(env.get("PYTHONUNBUFFERED"))
    for fd, name in ((1, "stdout"), (2, "stderr")):   # as the interpreter makes them
        raw = io.FileIO(fd, "wb", closefd=False)
        stream = io.TextIOWrapper(raw if unbuffered else io.BufferedWriter(raw),
                                  encoding=getattr(sys, name).encoding,
                                  # the interpreter's choice for this locale and
                                  # PYTHONIOENCODING (surrogateescape under C.UTF-8)
                                  errors=getattr(sys, name).errors,
                                  line_buffering=fd == 2 or raw.isatty(),
                                  write_through=unbuffered)
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    # What torch's import printed (its warnings): `python -m` would print it here first
    for fd, printed in zip((1, 2), IMPORT_OUTPUT):
        if printed:
            os.write(fd, printed)
    tempfile.tempdir = None   # gettempdir() reads this child's TMPDIR
    import multiprocessing.process as mp

    mp.current_process().authkey = os.urandom(32)   # as a new process's own
    if "numpy.random" in sys.modules:   # seeded at import: each process its own, as before
        sys.modules["numpy.random"].seed()
    dist = sys.modules.get("torch.distributed")
    if dist is not None and hasattr(dist, "set_debug_level_from_env"):
        dist.set_debug_level_from_env()   # TORCH_DISTRIBUTED_DEBUG is read at import
    sys.argv = [sys.argv[0], *req["args"]]
    code: Any = 0
    interrupted = False
    try:
        runpy.run_module(req["module"], run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
    except BaseException as exc:
        sys.excepthook(*sys.exc_info())
        code = 1
        interrupted = isinstance(exc, KeyboardInterrupt)
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    # As the interpreter ends: join the non-daemon threads, then the exit handlers
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    for std in (sys.stdout, sys.stderr):
        try:
            std.flush()
        except Exception:
            pass
    if interrupted:   # an uncaught Ctrl-C ends `python -m` by SIGINT, not exit 1
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return code


if __name__ == "__main__":
    code = serve()
    os._exit(code)   # no interpreter teardown of torch
