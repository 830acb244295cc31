"""Subprocesses with a deadline, and the signals that end a run.

Every child the doctor starts is killed with its process group when it overruns
(a dead NFS mount or a wedged driver must never hang the doctor). SIGINT, SIGTERM
(scancel, a time limit, a CI timeout) and SIGHUP all stop a run the same way: once,
with a cleanup that no later signal can cut short, and exit 128 + the signal.
"""
from __future__ import annotations

import atexit
import locale
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Iterator, Optional

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

# First line of a `python -c` child that runs the doctor's own code (the cache scan's
# workers): `-c` puts the current directory first on sys.path, so a repo's json.py would
# run when the doctor is started from the repo root. The children that import torch or
# look modules up are isolated further (doctor/pychild.py).
NO_CWD_IMPORTS = "import sys; del sys.path[0]\n"


# Variables the doctor set in its own process, for itself only (set_for_self) → the
# user's value (None: unset). A child gets the user's value back (environ).
_for_self: dict = {}


def environ() -> dict:
    """The environment a child gets: a copy of the doctor's own, as the user set it.

    Every child is given one explicitly, never inherited (env=None). Python 3.11.6+ and
    3.12 release the interpreter lock around vfork, so an inheriting child's execve reads
    the C `environ` array while another thread may change it (`os.environ[k] = v` calls
    setenv, which moves the array): execve then fails with EFAULT, "Bad address" (2,570
    of 3,000 starts of /bin/true beside a thread setting variables, on 3.11.7; 0 with an
    explicit env, whose array belongs to the starting thread). tests/test_proc_env.py."""
    env = dict(os.environ)
    for name, value in _for_self.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def set_for_self(name: str, value: str) -> None:
    """Set a variable that only the doctor's own process should read (a library reads it
    at import). In the main thread, before the threads that import that library: setenv
    beside a thread that reads the C environment is a race (environ says why). Children
    still get the user's value."""
    _for_self.setdefault(name, os.environ.get(name))
    os.environ[name] = value


def tool_path(name: str, env: Optional[dict] = None) -> Optional[str]:
    """Where the program `name` is: itself when it names a path, else the first on the
    PATH of `env` (the doctor's own by default), searched in its absolute directories
    only (absolute_path)."""
    if os.sep in name:
        return name
    return shutil.which(name, path=absolute_path((env or os.environ).get("PATH", os.defpath)))


def absolute_path(path: str) -> str:
    """`path` (a PATH value) without its empty and relative entries: those mean the
    working directory (`PATH=:$PATH` comes from an unset variable), which may be the
    repository, and its own `./git` would run in place of git."""
    return os.pathsep.join(d for d in path.split(os.pathsep) if os.path.isabs(d))


@dataclass
class CmdResult:
    returncode: Optional[int]   # None: not found or timed out
    stdout: str
    stderr: str
    timed_out: bool = False
    missing: bool = False


class Interrupted(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP arrived: raised once, in the main thread."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_received: Optional[int] = None  # the signal that stops the run
_raised = False                  # Interrupted was raised: every later signal is ignored
_shields = 0                     # the main thread is inside shielded()
_running: set = set()            # run_cmd's children, killed at once when a signal comes
_spooled: dict = {}              # a spooled child -> its stdout's file, until collected
_fed: dict = {}                  # a child -> the input its stdin pipe gets at collect


def _on_signal(signum: int, frame: object) -> None:
    global _received
    if _received is None:
        _received = signum
        for proc in list(_running):
            if proc.returncode is None:
                _kill_group(proc)
    _raise_once()


def _raise_once() -> None:
    global _raised
    if _received is not None and not _raised and not _shields:
        _raised = True
        raise Interrupted(_received)


@contextmanager
def shielded() -> Iterator[None]:
    """A cleanup no signal can cut short: in the main thread, Interrupted waits until
    the block has ended. Elsewhere signals never interrupt anyway."""
    global _shields
    main = threading.current_thread() is threading.main_thread()
    _shields += int(main)
    try:
        yield
    finally:
        _shields -= int(main)
    if main:
        _raise_once()


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """While inside: SIGINT, SIGTERM and SIGHUP raise Interrupted in the main thread,
    once; later ones are ignored until the process exits (a second Ctrl-C must not cut
    the cleanup short). A signal ignored when the doctor started (nohup, a background
    job) stays ignored. Outside the main thread this does nothing."""
    global _received, _raised
    _received, _raised = None, False
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig, handler in before.items():
        if handler != signal.SIG_IGN:
            signal.signal(sig, _on_signal)
    try:
        yield
    finally:
        if _received is None:  # after a signal the process is on its way out: stay deaf
            for sig, handler in before.items():
                signal.signal(sig, handler if handler is not None else signal.SIG_DFL)


def stopping() -> bool:
    """A signal has stopped this run: start nothing new."""
    return _received is not None


def interrupted_exit_code() -> int:
    """128 + the signal that stopped the run (130 for a Ctrl-C outside stop_on_signals)."""
    return 128 + (_received or signal.SIGINT)


def run_cmd(argv: list, timeout: float = 10.0, env: Optional[dict] = None,
            cwd: Optional[str] = None, input: Optional[str] = None,
            spool: bool = False) -> CmdResult:
    """Run a command in its own process group; kill the whole group on timeout.
    `spool`: its output goes through an unlinked file (see start), for a child that
    prints megabytes while the checks' threads hold the interpreter lock."""
    proc = start(argv, env=env, cwd=cwd, input=input, spool=spool)
    if isinstance(proc, CmdResult):
        return proc
    return collect(proc, timeout)


def start(argv: list, env: Optional[dict] = None, cwd: Optional[str] = None,
          input: Optional[str] = None, spool: bool = False) -> "subprocess.Popen | CmdResult":
    """The first half of run_cmd: the child started (a CmdResult when it could not be).
    Until `collect`, a signal kills it, and so does the doctor's exit (_reap).

    `input` is the child's stdin, read from an unlinked temporary file. `spool`: its
    output goes to one too instead of a pipe, so that a child begun long before it is
    collected (git's 3 MB file list) runs to its end instead of waiting on a full 64 KiB
    pipe. (Its stderr stays a pipe: collect wakes on its end.) Through pipes, a child's
    megabytes cost a wake-up of the collecting thread per 512 bytes in and 32 KiB out,
    each waiting for the interpreter lock while the checks' threads hold it: `git
    cat-file` sizing 90,000 blobs took 4.0 s beside one busy thread, 0.6 s alone."""
    if stopping():
        return CmdResult(None, "", "interrupted")
    program = tool_path(argv[0], env)   # every child by its absolute path (tool_path says why)
    if program is None:
        return CmdResult(None, "", f"{argv[0]}: not found", missing=True)
    spooled = _temporary() if spool else None
    fed = _temporary() if input is not None else None
    if fed is not None:
        try:
            fed.write(_encoded(input or ""))
            fed.seek(0)
        except OSError:   # TMPDIR filled up: through the pipe after all
            _close(fed)
            fed = None
    try:
        proc = subprocess.Popen([program, *argv[1:]], stdout=spooled or subprocess.PIPE,
                                stderr=subprocess.PIPE,
                                stdin=fed or (subprocess.DEVNULL if input is None
                                              else subprocess.PIPE),
                                env=environ() if env is None else env, cwd=cwd, text=True,
                                errors="replace", start_new_session=True)
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        _close(spooled)
        return CmdResult(None, "", f"{argv[0]}: not found", missing=True)
    except (OSError, ValueError) as exc:   # E2BIG, ENOMEM, EAGAIN, a NUL in an argument:
        _close(spooled)                      # this command failed, not the doctor
        return CmdResult(None, "", f"{argv[0]}: cannot start: "
                                   f"{getattr(exc, 'strerror', None) or exc}")
    finally:
        _close(fed)   # the child has its own descriptor of it
    _running.add(proc)
    if spooled is not None:
        _spooled[proc] = spooled
    if input is not None and fed is None:   # no temporary file: through the pipe
        _fed[proc] = input
    if stopping():  # the signal came while it started
        _kill_group(proc)
    return proc


def collect(proc: subprocess.Popen, timeout: float) -> CmdResult:
    """The second half of run_cmd: its output, or the group killed after `timeout` s."""
    spooled = _spooled.pop(proc, None)
    input = _fed.pop(proc, None)
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
        return CmdResult(proc.returncode, _text(spooled) if spooled is not None else out, err)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        return CmdResult(None, _text(spooled) if spooled is not None else out or "", err or "",
                         timed_out=True)
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        _running.discard(proc)
        _close(spooled)


def _temporary() -> Optional[IO[bytes]]:
    """An unlinked temporary file; None when TMPDIR has no room or no right (a pipe then,
    as for any other child)."""
    try:
        return tempfile.TemporaryFile()
    except OSError:
        return None


def _encoded(text: str) -> bytes:
    """`text` as a text-mode pipe would have written it."""
    return text.encode(locale.getpreferredencoding(False), "replace")


def _text(f: IO[bytes]) -> str:
    """What a text-mode pipe would have given: decoded as Popen does, newlines too."""
    f.seek(0)
    data = f.read().decode(locale.getpreferredencoding(False), "replace")
    return data.replace("\r\n", "\n").replace("\r", "\n")


def _close(spooled: Optional[IO[bytes]]) -> None:
    if spooled is not None:
        spooled.close()


def stop(proc: subprocess.Popen) -> None:
    """A child `start`ed that nobody will `collect`: killed with its group and reaped."""
    _kill_group(proc)
    proc.wait()
    _running.discard(proc)
    _close(_spooled.pop(proc, None))
    _fed.pop(proc, None)


@atexit.register
def _reap() -> None:
    """A child still running when the doctor exits (a timed-out check's) is killed:
    nothing is left behind."""
    for proc in list(_running):
        stop(proc)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
