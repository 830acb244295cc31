"""The parent of one smoke rank: `python -I -S reaper.py EXIT_FILE PROGRAM ARGS...`.

The launcher starts one per rank. It is a child subreaper (Linux, PR_SET_CHILD_SUBREAPER):
whatever the rank starts, even in a session of its own (`setsid`: Ray, dataset
servers), becomes its child when its own parent dies, so none of it can slip away.
It passes SIGUSR1 (the stack dump) on to the rank. When the rank exits, when the
launcher sends SIGTERM, SIGINT or SIGHUP, or when the doctor dies (PR_SET_PDEATHSIG),
it kills the rank and everything the rank started, reaps them all, writes
`{"pid": ..., "returncode": ...}` to EXIT_FILE in the run dir (returncode as
subprocess has it: negative for a signal, null when the rank could not be reaped)
and exits 0. When the doctor is gone (SIGKILL, the OOM killer), nobody else will
remove the run dir: it does.

Standard library only, and run isolated (-I -S): nothing on the user's PYTHONPATH
can shadow a module here.
"""
from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import sys
import time
from typing import Callable, Optional

ENV_PARENT = "DOCTOR_SMOKE_PARENT"   # doctor.smoke.protocol.ENV_PARENT (not importable here)
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
END_WAIT_S = 10.0  # a process stuck in the kernel (D state) cannot be killed: give up then
SIGNALS = {signal.SIGCHLD, signal.SIGUSR1, signal.SIGTERM, signal.SIGINT, signal.SIGHUP}


def prctl(option: int, arg: int) -> None:
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)


def live_descendants(root: int) -> list:
    """The pids of root's descendants that are not yet dead, from /proc."""
    children: dict = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # gone meanwhile
        state, ppid = stat[stat.rfind(b")") + 2:].split()[:2]
        children.setdefault(int(ppid), []).append((int(name), state))
    out, todo = [], [root]
    while todo:
        for pid, state in children.get(todo.pop(), ()):
            todo.append(pid)
            if state not in (b"Z", b"X"):
                out.append(pid)
    return out


def reap(rank: int, status: Optional[int]) -> tuple:
    """Reap every child that has exited: (the rank's wait status once reaped, whether any
    child is left)."""
    while True:
        try:
            pid, st = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return status, False
        if not pid:
            return status, True
        if pid == rank:
            status = st


def end_all(rank: int, status: Optional[int]) -> Optional[int]:
    """SIGKILL the rank and every descendant, and reap them, until no child is left.

    A killed process's children come back to this subreaper, so no child at all
    means nothing the rank started is still running."""
    deadline = time.monotonic() + END_WAIT_S
    while time.monotonic() < deadline:
        status, left = reap(rank, status)
        if not left:
            break
        pids = live_descendants(os.getpid())
        if status is None:
            pids.append(rank)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.005)
    return status


def orphaned(exit_file: str) -> int:
    """The doctor is gone: remove the run dir. Every reaper does this, so the last one
    does it after every rank has ended."""
    shutil.rmtree(os.path.dirname(os.path.abspath(exit_file)), ignore_errors=True)
    return 1


def main(argv: list) -> int:
    exit_file, program = argv[0], argv[1:]

    def spawn(env: dict) -> int:
        # the rank gets subprocess's defaults: no signal blocked, SIGPIPE and SIGXFSZ default
        return os.posix_spawnp(program[0], program, env, setsigmask=(),
                               setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))

    return supervise(exit_file, spawn, dict(os.environ),
                     int(os.environ.get(ENV_PARENT) or os.getppid()), program[0])


def supervise(exit_file: str, spawn: Callable[[dict], int], env: dict, doctor: int,
              what: str) -> int:
    """Start the rank with `spawn(env)` (its pid), then watch it as the module docstring says.
    `doctor` is the parent whose death ends the rank (the doctor, or the zygote that forked
    this reaper: doctor/smoke/zygote.py)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)  # taken one at a time, below
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != doctor:  # the doctor died before PR_SET_PDEATHSIG took hold
        return orphaned(exit_file)
    env = dict(env, **{ENV_PARENT: str(os.getpid())})
    try:
        rank = spawn(env)
    except OSError as exc:
        print(f"doctor: cannot start {what}: {exc}", file=sys.stderr)
        return 127
    status = None
    while status is None:
        sig = signal.sigwaitinfo(SIGNALS).si_signo
        if sig == signal.SIGUSR1:
            try:
                os.kill(rank, signal.SIGUSR1)
            except OSError:
                pass
        elif sig == signal.SIGCHLD:
            status, _ = reap(rank, status)
        else:
            break  # the launcher (or the doctor's death) says stop
    status = end_all(rank, status)
    code = os.waitstatus_to_exitcode(status) if status is not None else None
    if os.getppid() != doctor:
        return orphaned(exit_file)
    with open(exit_file, "w") as fh:
        json.dump({"pid": rank, "returncode": code}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
