"""Start the smoke's ranks, watch them, stop them, collect what they left behind.

Runs in the doctor's own process, so it never imports torch: each rank is a
plain subprocess (`python -m doctor.smoke.worker`) with the torch.distributed
environment and the repo and src/ importable, started by its own reaper
(doctor/smoke/reaper.py) in a session of its own: ending the reaper ends the rank
and everything it started, even what left the session. Everything the ranks
write goes to one temp dir that `cleanup()` removes; `cleanup()` is safe to
call from another thread (the runner calls it on SIGINT, SIGTERM and SIGHUP) and
more than once.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from doctor import proc as doctor_proc
from doctor.smoke import protocol as P
from doctor.smoke import zygote

POLL_S = 0.02
# After the first rank fails, how long the others get to notice and exit on
# their own (a gloo peer sees "Connection closed by peer" within milliseconds).
GRACE_S = 2.0
DUMP_WAIT_S = 1.0   # how long a SIGUSR1 stack dump may take
PORT_ATTEMPTS = 3
END_WAIT_S = 15.0   # for a reaper to end its rank's processes (its own limit is 10 s)
REAPER = str(Path(__file__).resolve().with_name("reaper.py"))
DOCTOR_ROOT = str(Path(__file__).resolve().parent.parent.parent)


def smoke_environ() -> dict:
    """The doctor's environment as every smoke child starts from it (the ranks, the data
    smoke's node, the memory estimate, the torch probe through the zygote): without
    torchelastic's TORCHELASTIC_* variables, which a doctor started by torchrun inherits
    and which would make the child's torch take it for one of that run's workers."""
    return {k: v for k, v in doctor_proc.environ().items()
            if not k.startswith("TORCHELASTIC_")}


def smoke_env(repo: Path) -> dict:
    """smoke_environ() with what every smoke child shares: the repo importable, no bytecode
    written in it, one OpenMP thread unless the user chose (as torchrun does: the
    processes share the cores). The zygote's key is read from these (the probe in
    doctor/probes/gpu.py builds its env here so that it shares the ranks' zygote)."""
    env = smoke_environ()
    env["PYTHONPATH"] = os.pathsep.join(rank_path(repo, env))
    env["PYTHONDONTWRITEBYTECODE"] = "1"   # read-only: no __pycache__ in the user's repo
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def rank_path(repo: Path, env: dict) -> list:
    """The ranks' PYTHONPATH: the repo's src/ layout and the repo (so that `--model
    pkg.mod:build` imports the repo's pkg, as the job would from its directory), the
    caller's PYTHONPATH, then the doctor itself (the worker). doctor/smoke/factory.py
    finds the model's module on the same path."""
    paths = [str(repo / "src")] if (repo / "src").is_dir() else []
    paths += [str(repo)]
    paths += [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    return paths + [DOCTOR_ROOT]


@dataclass
class SmokePlan:
    repo: Path
    model: Optional[str] = None
    input_shape: Optional[list] = None
    timeout_s: float = 180.0
    world_size: int = 2
    backend: str = "auto"
    python: str = sys.executable

    @property
    def pg_timeout_s(self) -> float:
        """The process group's own timeout: well before the deadline, so that a rank
        waiting for a stuck peer gives up first and the stuck one can be asked where it is."""
        return max(3.0, round(self.timeout_s * 0.6, 1))


@dataclass
class RankOutcome:
    rank: int
    pid: int
    returncode: Optional[int]
    ended_at: Optional[float]           # when the launcher saw it exit (epoch)
    stopped: Optional[str] = None       # "peer-failed" or "deadline" when the doctor killed it
    events: list = field(default_factory=list)
    fault_dump: str = ""                # faulthandler on a fatal signal
    usr1_dump: str = ""                 # asked for by the launcher before stopping it
    later_dump: str = ""                # dump_traceback_later, shortly before the deadline
    output: str = ""                    # the tail of stdout+stderr

    def event(self, name: str) -> Optional[dict]:
        found = [e for e in self.events if e.get("event") == name]
        return found[-1] if found else None

    def phases(self) -> dict:
        return {e["phase"]: e["seconds"] for e in self.events if e.get("event") == "phase"}


@dataclass
class SmokeRun:
    plan: SmokePlan
    ranks: list
    port: int
    started_at: float
    duration_s: float
    deadline_hit: bool
    attempts: int = 1


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _read(path: Path, limit: int = 200_000) -> str:
    try:
        with open(path, "r", errors="replace") as fh:
            data = fh.read()
    except OSError:
        return ""
    return data[-limit:]


def _read_events(path: Path) -> list:
    out = []
    for line in _read(path, limit=10_000_000).splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass  # a line cut short by a kill
    return out


def start_reaped(python: str, module: str, *, cwd: str, env: dict, out: Any, exit_file: str,
                 deadline: float, fork: bool = True) -> Any:
    """`python -m module` under its reaper, in a session of its own, output to `out`: forked
    by the zygote that imported torch once for all the smokes (doctor/smoke/zygote.py), else
    (or when not `fork`) started as a process of its own. A Popen or a zygote.Child (the
    same interface)."""
    z = zygote.zygote_for(python, cwd, env, deadline) if fork else None
    child = z.spawn(module, [], cwd=cwd, env=env, out=out.fileno(), err=out.fileno(),
                    exit_file=exit_file) if z is not None else None
    return child or subprocess.Popen(
        [sys.executable, "-I", "-S", REAPER, exit_file, python, "-m", module], cwd=cwd,
        env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
        start_new_session=True)


class Launcher:
    """One smoke run: start() → wait() → collect(), cleanup() always."""

    def __init__(self, plan: SmokePlan, port: Optional[int] = None):
        self.plan = plan
        self.port = port or free_port()
        self.dir: Optional[Path] = None
        self.procs: list = []               # the ranks' reapers
        self.exits: dict = {}               # rank -> (pid, returncode), once ended
        self.stopped: dict = {}
        self.ended: dict = {}
        self.deadline_hit = False
        self.started_at = 0.0
        self._lock = threading.Lock()
        self._closed = False

    # ---- start ---------------------------------------------------------
    def env_for(self, rank: int, deadline: float, run_dir: Optional[Path] = None) -> dict:
        run_dir = run_dir or self.dir
        assert run_dir is not None, "start() makes the run directory first"
        env = smoke_env(self.plan.repo)
        env.update({
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(self.port),
            "RANK": str(rank), "LOCAL_RANK": str(rank),
            "WORLD_SIZE": str(self.plan.world_size),
            "LOCAL_WORLD_SIZE": str(self.plan.world_size),
            "PYTHONUNBUFFERED": "1",
            # torch (DDP imports inductor) makes $TMPDIR/torchinductor_$USER: keep
            # whatever the ranks put in temp inside the dir that cleanup() removes
            "TMPDIR": str(run_dir / "tmp"),
            P.ENV_DIR: str(run_dir), P.ENV_MODEL: self.plan.model or "",
            P.ENV_SHAPE: json.dumps(self.plan.input_shape) if self.plan.input_shape else "",
            P.ENV_BACKEND: self.plan.backend or "auto",
            P.ENV_DEADLINE: repr(deadline), P.ENV_PG_TIMEOUT: str(self.plan.pg_timeout_s),
            P.ENV_PARENT: str(os.getpid()),
        })
        # INFO names the parameters that got no gradient in DDP's unused-parameter error.
        env.setdefault("TORCH_DISTRIBUTED_DEBUG", "INFO")
        return env

    def start(self) -> None:
        with self._lock:
            if self._closed or doctor_proc.stopping():
                raise RuntimeError("the smoke was cancelled")
            deadline = time.time() + self.plan.timeout_s
            # Forked ranks share the zygote's hash seed, where the job's each have their
            # own: a model whose parameter order follows a set's iteration order fails real
            # DDP, so only rank 0 is forked unless the seed is fixed anyway
            fixed = zygote.fixed_hash_seed(self.env_for(0, deadline,
                                                        Path(tempfile.gettempdir())))
            forked = [rank == 0 or fixed for rank in range(self.plan.world_size)]
            if all(forked):
                # the zygote (its torch import) before the run dir: see zygote.warm
                zygote.warm(self.plan.python, str(self.plan.repo),
                            self.env_for(0, deadline, Path(tempfile.gettempdir())), deadline)
            self.dir = Path(tempfile.mkdtemp(prefix="doctor-smoke-"))
            (self.dir / "tmp").mkdir()
            self.started_at = time.time()
            deadline = self.started_at + self.plan.timeout_s
            # Otherwise the ranks started on their own go first: their torch import runs
            # beside the zygote's, not after it (on 2 cores, 1-2 s of the smoke's wall).
            # The run dir then exists during one torch import, as it does anyway while
            # those ranks import
            started: dict = {}
            try:
                for rank in sorted(range(self.plan.world_size), key=lambda r: forked[r]):
                    env = self.env_for(rank, deadline)
                    with open(P.output_file(self.dir, rank), "wb") as out:
                        started[rank] = start_reaped(
                            self.plan.python, "doctor.smoke.worker", cwd=str(self.plan.repo),
                            env=env, out=out, exit_file=str(P.exit_file(self.dir, rank)),
                            deadline=deadline, fork=forked[rank])
            finally:
                self.procs = [started[rank] for rank in sorted(started)]

    # ---- watch ---------------------------------------------------------
    def wait(self) -> None:
        """Until every rank has exited, a rank failed and the others had their grace,
        or the deadline: then stop whoever is left."""
        deadline = self.started_at + self.plan.timeout_s
        first_failure: Optional[float] = None
        while True:
            now = time.time()
            alive = []
            for rank in range(len(self.procs)):
                done = self.exit_of(rank)
                if done is None:
                    alive.append(rank)
                elif rank not in self.ended:
                    self.ended[rank] = now
                    if done[1] != 0 and first_failure is None:
                        first_failure = now
            if not alive or self._closed:
                return
            if first_failure is not None and now >= first_failure + GRACE_S:
                self.stop(alive, "peer-failed")
                return
            if now >= deadline:
                self.deadline_hit = True
                self.stop(alive, "deadline")
                return
            time.sleep(POLL_S)

    def exit_of(self, rank: int) -> Optional[tuple]:
        """(pid, returncode) of the rank once its reaper has ended it, else None."""
        if rank in self.exits:
            return self.exits[rank]
        proc = self.procs[rank]
        if proc.poll() is None:
            return None
        try:
            done = json.loads(_read(P.exit_file(self.dir, rank)) if self.dir else "")
            self.exits[rank] = (int(done["pid"]), done["returncode"])
        except (ValueError, KeyError, TypeError):  # the reaper itself was killed
            self.exits[rank] = (proc.pid, proc.returncode)
        return self.exits[rank]

    def stop(self, ranks: list, reason: str) -> None:
        """Ask each rank for its stacks (SIGUSR1 → faulthandler), then end it."""
        asked = []
        for rank in ranks:
            proc = self.procs[rank]
            if proc.poll() is None:
                # send_signal, not os.kill(proc.pid): a zygote.Child's reaper is reaped by
                # the zygote, whose pid may then be another process's; its pidfd is exact
                proc.send_signal(signal.SIGUSR1)
                asked.append(rank)
        end = time.time() + DUMP_WAIT_S
        pending = set(asked)
        while pending and time.time() < end:
            for rank in list(pending):
                try:
                    if self.dir is None or P.usr1_file(self.dir, rank).stat().st_size > 0:
                        pending.discard(rank)
                except OSError:  # not armed yet: nothing will come
                    pending.discard(rank)
            time.sleep(POLL_S)
        time.sleep(0.05)  # let the dump finish writing its last frames
        for rank in ranks:
            if self.procs[rank].poll() is None:  # it may have given up on its own meanwhile
                self.stopped.setdefault(rank, reason)
            self._end(self.procs[rank])
            self.ended.setdefault(rank, time.time())

    @staticmethod
    def _end(proc: subprocess.Popen) -> None:
        """Tell the reaper to kill its rank and all the rank started; wait until it has."""
        if proc.poll() is not None:
            return  # it has: a reaper exits only once everything it watched has ended
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=END_WAIT_S)
            return
        except subprocess.TimeoutExpired:
            pass
        try:  # a reaper that does not answer: its process group, at least
            if proc.poll() is None:   # (once it has ended, its pid may be another's)
                os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass

    # ---- collect and clean up -----------------------------------------
    def collect(self) -> list:
        if any(getattr(proc, "lost", False) for proc in self.procs):
            raise RuntimeError(zygote.LOST_TEXT)
        out = []
        for rank in range(len(self.procs)):
            if self.dir is None:
                raise RuntimeError("the smoke was cancelled")
            pid, returncode = self.exit_of(rank) or (self.procs[rank].pid, None)
            out.append(RankOutcome(
                rank=rank, pid=pid, returncode=returncode,
                ended_at=self.ended.get(rank), stopped=self.stopped.get(rank),
                events=_read_events(P.events_file(self.dir, rank)),
                fault_dump=_read(P.fault_file(self.dir, rank)),
                usr1_dump=_read(P.usr1_file(self.dir, rank)),
                later_dump=_read(P.later_file(self.dir, rank)),
                output=_read(P.output_file(self.dir, rank), limit=6000)))
        return out

    def cleanup(self) -> None:
        """End every rank and all it started, remove the temp dir. Idempotent; no signal
        cuts it short."""
        with doctor_proc.shielded(), self._lock:
            self._closed = True
            for proc in self.procs:
                proc.send_signal(signal.SIGTERM)  # all of them at once, then wait for each
            for rank, proc in enumerate(self.procs):
                self._end(proc)
                self.exit_of(rank)
            if self.dir is not None:
                shutil.rmtree(self.dir, ignore_errors=True)
                self.dir = None


def port_in_use(outcome: RankOutcome) -> bool:
    exc = outcome.event("exception")
    return bool(exc and exc.get("phase") == "init"
                and "address already in use" in exc.get("message", "").lower())


def run_smoke(plan: SmokePlan, on_launcher: Callable[[Launcher], None] = lambda _: None,
              ports: Optional[Iterator[int]] = None) -> SmokeRun:
    """Run the smoke to the end; retry with another port if rank 0 could not bind its own.

    `on_launcher` gets each Launcher before it starts (the check registers its
    cleanup with the Job, so that Ctrl-C also stops the ranks).
    """
    t0 = time.time()
    for attempt in range(1, PORT_ATTEMPTS + 1):
        launcher = Launcher(plan, port=next(ports, None) if ports is not None else None)
        on_launcher(launcher)
        try:
            launcher.start()
            launcher.wait()
            ranks = launcher.collect()
        finally:
            launcher.cleanup()
        if attempt < PORT_ATTEMPTS and any(port_in_use(r) for r in ranks):
            continue
        return SmokeRun(plan=plan, ranks=ranks, port=launcher.port, started_at=t0,
                        duration_s=time.time() - t0, deadline_hit=launcher.deadline_hit,
                        attempts=attempt)
    raise AssertionError("unreachable")
