"""The files the doctor writes (--output, --json): whole or not at all, never over an input.

A regular file (or a new one) is written to a temp file beside it, synced, then renamed
over it: a reader sees the old report or the new one, never a part, and a failure
(a full disk) leaves the old one as it was and no temp file. A stream is written
directly: /dev/stdout and /dev/stderr are the doctor's own, a character device
(/dev/null, a terminal) or a FIFO with a reader is opened without blocking. Anything
else (a directory, a FIFO with no reader, a block device, a socket) is refused.
"""
from __future__ import annotations

import errno
import os
import socket
import stat
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Mapping, Optional

import click

from doctor.errors import InputError
from doctor.secrets import scrub

STREAMS = {"/dev/stdout": 1, "/dev/fd/1": 1, "/proc/self/fd/1": 1,
           "/dev/stderr": 2, "/dev/fd/2": 2, "/proc/self/fd/2": 2}


def expand_output_pattern(path: str, env: Optional[Mapping[str, str]] = None) -> str:
    """`%j` → job id, `%N` → node name, `%%` → %, as in Slurm's output patterns."""
    env = os.environ if env is None else env
    subs = {"j": env.get("SLURM_JOB_ID", "nojob"),
            "N": env.get("SLURMD_NODENAME") or socket.gethostname().split(".")[0],
            "%": "%"}
    out, i = "", 0
    while i < len(path):
        if path[i] == "%" and i + 1 < len(path) and path[i + 1] in subs:
            out += subs[path[i + 1]]
            i += 2
        else:
            out += path[i]
            i += 1
    return out


def _stat(path: str) -> Optional[os.stat_result]:
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from None


def _is_file(st: Optional[os.stat_result]) -> bool:
    """A path that is written by renaming over it: a regular file, or none yet."""
    return st is None or stat.S_ISREG(st.st_mode)


def refuse_empty(*options: tuple) -> None:
    """InputError for an (option, value) given as "" (`--json "$UNSET"`): no report would be
    written where the caller expects one."""
    for option, value in options:
        if value == "":
            raise InputError(f"{option} {value!r} names no file: name a file")


def check_outputs(outputs: Iterable[tuple], inputs: Iterable) -> None:
    """Refuse (InputError) an output that is one of the run's inputs, the same file as
    another output, or a kind of file a report cannot go to. `outputs`: (option, path)."""
    seen_in: dict = {}
    for p in inputs:
        try:
            found = os.stat(p)
        except OSError:
            continue
        seen_in.setdefault((found.st_dev, found.st_ino), str(p))
    seen_out: dict = {}
    for option, path in outputs:
        if os.path.normpath(os.path.abspath(path)) in STREAMS:
            continue
        st = _stat(path)
        if st is not None and (st.st_dev, st.st_ino) in seen_in:
            raise InputError(f"{option} {path} would overwrite an input of this run "
                             f"({seen_in[(st.st_dev, st.st_ino)]}): name another file")
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise InputError(f"{option} {path} is a directory: name a file")
        if st is not None and not stat.S_ISREG(st.st_mode) and \
                not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            raise InputError(f"{option} {path} is not a regular file, a FIFO or a character "
                             "device: name a file")
        if not _is_file(st):
            continue  # `--output /dev/null --json /dev/null` writes twice to the same sink
        keys = [os.path.realpath(path)] + ([(st.st_dev, st.st_ino)] if st else [])
        same = next((seen_out[k] for k in keys if k in seen_out), None)
        if same:
            raise InputError(f"{option} {path} is the same file as {same}: each report "
                             "needs its own file")
        seen_out.update({k: f"{option} {path}" for k in keys})


def write_output(path: str, text: str) -> None:
    """Write a report file as this module's docstring says; InputError when it cannot."""
    data = scrub(text).encode("utf-8")  # the output boundary: no secret leaves (secrets.py)
    fd = STREAMS.get(os.path.normpath(os.path.abspath(path)))
    if fd is not None:
        (sys.stdout if fd == 1 else sys.stderr).flush()
        return _write_all(fd, data, path)
    target = os.path.realpath(path)  # a symlink stays; the file it names gets the report
    st = _stat(target)
    if not _is_file(st):
        return _write_stream(path, data)
    replace_file(path, target, data, st)


def replace_file(path: str, target: str, data: bytes, st: Optional[os.stat_result],
                 unchanged: Optional[Callable[[], bool]] = None) -> None:
    """Put `data` at `target` (a real path) all at once: written to an unnamed file in
    its directory (O_TMPFILE; else a dot-file), synced, then renamed over it, so a
    reader or a kill at any point sees the old file or the new one. Mode and owner come
    from `st` (the file replaced), else the umask. `unchanged()`, when given, is asked
    right before the rename; False refuses the write. InputError names `path`."""
    parent = Path(target).parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # mkdir met a file where a directory goes
        above = next(a for a in (parent, *parent.parents) if os.path.lexists(a))
        raise InputError(f"cannot write {path}: {above} is not a directory") from None
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from None
    fd, tmp, named = -1, "", False
    try:
        try:
            fd = os.open(parent, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600)
        except (OSError, AttributeError):  # no O_TMPFILE here (the filesystem or the OS)
            fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{Path(target).name}.",
                                       suffix=".tmp")
            named = True
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from None
    try:
        try:
            os.fchmod(fd, stat.S_IMODE(st.st_mode) if st else 0o666 & ~_umask())
            if st is not None and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                os.fchown(fd, st.st_uid, st.st_gid)  # root writing a user's file
        except OSError:
            pass
        _write_all(fd, data, path)
        try:
            os.fsync(fd)
        except OSError as exc:
            raise InputError(f"cannot write {path}: {exc.strerror}") from None
        if not named:  # give the unnamed file a name only now, just before the rename
            tmp = os.path.join(parent, f".{Path(target).name}.{os.getpid()}.{fd}.tmp")
            _link_unnamed(fd, tmp)
        os.close(fd)
        fd = -1
        if unchanged is not None and not unchanged():
            raise InputError(f"{path} changed since it was read; nothing written to it "
                             "(run the command again)")
        os.replace(tmp, target)
        tmp = ""
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from None
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _link_unnamed(fd: int, name: str) -> None:
    """linkat(2) with AT_SYMLINK_FOLLOW through /proc: os.link takes linkat only when
    given a directory fd, and plain link(2) would link the /proc symlink itself."""
    proc = os.open("/proc/self", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.link(f"fd/{fd}", name, src_dir_fd=proc, follow_symlinks=True)
    finally:
        os.close(proc)


def append_output(path: str, text: str) -> None:
    """Add text at the end of a file (a job's log), creating it; never truncates, never
    blocks (a FIFO with no reader is an error). InputError when it cannot."""
    text = scrub(text)  # the output boundary: no secret leaves (secrets.py)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
                     | os.O_NOCTTY | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        why = "a FIFO with no reader" if exc.errno == errno.ENXIO else exc.strerror
        raise InputError(f"cannot write {path}: {why}") from None
    try:
        os.set_blocking(fd, True)
        _write_all(fd, text.encode("utf-8"), path)
    finally:
        os.close(fd)


def _write_stream(path: str, data: bytes) -> None:
    """A character device or a FIFO: opened without blocking, never truncated."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        why = "a FIFO with no reader" if exc.errno == errno.ENXIO else exc.strerror
        raise InputError(f"cannot write {path}: {why}") from None
    try:
        if not (stat.S_ISCHR(os.fstat(fd).st_mode) or stat.S_ISFIFO(os.fstat(fd).st_mode)):
            raise InputError(f"cannot write {path}: not a regular file, a FIFO or a "
                             "character device")
        os.set_blocking(fd, True)  # a reader is there: it gets the whole report
        _write_all(fd, data, path)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes, path: str) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}") from None


def _umask() -> int:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_stdout(text: str) -> None:
    """The report on stdout. A reader that went away (`| head -1`) is not an error;
    a stdout that cannot be written (a full disk) is one line and exit 2."""
    try:
        click.echo(text, nl=False)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
    except OSError as exc:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise InputError(f"cannot write to stdout: {exc.strerror}") from None
