"""The files the doctor writes (--output, --json): whole or not at all, never over an input.

A regular file (or a new one) is written to a temp file beside it, synced, then renamed
over it: a reader sees the old report or the new one, never a part, and a failure
(a full disk) leaves the old one as it was and no temp file. A stream is written
directly: /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are file descriptors
the doctor was given (`3>>job.log`, `>(cat > out)`), written as they are open (append
mode appends); a character device (/dev/null, a terminal) or a FIFO with a reader is
opened without blocking. Anything else (a directory, a FIFO with no reader, a block
device, a socket) is refused.

Where the report goes is resolved one name at a time, as the kernel would: a symlink
the user made (~/latest.json -> /data/r.json) is followed, but one that lies inside the
repo being checked, is committed there (git's index holds it as a link; outside a git
work tree, any link of the repo) and leads out of it is refused. A repo can commit
`reports/doctor.json` as a link to any file of the user's, and the report would
replace that file; the user's own untracked `logs -> /scratch/$USER/logs` is followed.
A `..` after a name that does not exist is refused, as the kernel refuses it.
"""
from __future__ import annotations

import errno
import fcntl
import os
import re
import select
import socket
import stat
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterable, Mapping, NamedTuple, Optional

import click

from doctor import fs
from doctor.errors import InputError
from doctor.secrets import scrub

# a file descriptor named as a path (as written; a symlink to one is found by _target)
_NAMED_FD = re.compile(r"/dev/(?:(stdin)|(stdout)|(stderr)|fd/(\d+))\Z"
                       r"|/proc/(?:self|thread-self|(\d+)(?:/task/\d+)?)/fd/(\d+)\Z")
_FD_DIR = re.compile(r"/proc/(\d+)(?:/task/\d+)?/fd\Z")  # /dev/fd and /proc/self/fd lead here
MAX_LINKS = 40  # as the kernel's ELOOP
_given: Optional[dict] = None  # fd -> (st_dev, st_ino) when the command began; None: unknown


def begin_command() -> None:
    """At a command's start (the CLI group): note the file descriptors the doctor was
    given, so that `/dev/fd/N` never names one it opened itself (a spooled git's file),
    and begin the record of the files the command reads (doctor/fs.py)."""
    global _given
    given = {}
    try:
        for name in os.listdir("/proc/self/fd"):
            try:
                st = os.fstat(int(name))
            except (OSError, ValueError):  # the listing's own fd, closed by now
                continue
            given[int(name)] = (st.st_dev, st.st_ino)
        _given = given
    except OSError:   # no /proc: any fd open at write time is taken as given
        _given = None
    fs.record_reads()


def end_command() -> None:
    fs.end_reads()


class Target(NamedTuple):
    fd: Optional[int]  # a file descriptor of this process: the report is written to it
    real: str          # else the real path, up to the first name that does not exist


def _committed_link(top: str, here: str) -> bool:
    """Whether git's index holds `here` (a path in the repo `top`) as a symlink (mode
    120000): a link the repo commits, not one the user made (an untracked, ignored
    `logs -> /scratch/$USER/logs`). Outside a git work tree, or when git cannot answer,
    every link counts: nothing tells a committed link from the user's there."""
    from doctor.scanners.git import run_git  # (git only when such a link is met)
    rel = os.path.relpath(here, top)
    res = run_git(top, "ls-files", "-s", "-z", "--", f":(literal){rel}", timeout=10)
    if res.returncode != 0:
        return True
    return any(e.startswith("120000 ") and e.partition("\t")[2] == rel
               for e in res.stdout.split("\0"))


def _label(option: str, path: str) -> str:
    """The option and its file as given: `--json r.json`, `--output junit:r.xml`."""
    if not option:
        return path
    return f"{option}{path}" if option.endswith(":") else f"{option} {path}"


def _target(option: str, path: str, repo: Optional[Path] = None) -> Target:
    """Where a report named `path` goes: resolved one name at a time (the kernel's way:
    `a/../b` goes through what `a` is), so that each symlink on the way is seen.
    InputError for a symlink inside `repo` that leads out of it, and for a file
    descriptor of another process."""
    named = _NAMED_FD.match(os.path.normpath(os.path.abspath(path)))
    if named:
        std, out, err, fd, pid, pfd = named.groups()
        if pid is not None and int(pid) != os.getpid():
            raise InputError(f"{_label(option, path)}: a file descriptor of "
                             "another process")
        return Target(0 if std else 1 if out else 2 if err else int(fd or pfd), path)
    top = fs.realpath(repo) if repo is not None else None
    start = path if os.path.isabs(path) else f"{fs.cwd()}/{path}"
    todo = start.split("/")[::-1]  # the names left, the next one last
    done, hops = "/", 0
    while todo:
        name = todo.pop()
        if name in ("", "."):
            continue
        if name == "..":
            done = os.path.dirname(done)
            continue
        in_fd_dir = _FD_DIR.match(done)
        if (in_fd_dir or done == "/dev/fd") and name.isdigit() and not todo:
            if in_fd_dir and int(in_fd_dir[1]) != os.getpid():
                raise InputError(f"{_label(option, path)}: a file descriptor "
                                 "of another process")
            return Target(int(name), path)
        here = os.path.join(done, name)
        try:
            st = os.lstat(here)
        except (OSError, ValueError) as exc:  # not there (to be created), or for the write to say
            if ".." in todo:  # as the kernel: `..` goes back from what is there, nothing here
                why = exc.strerror if isinstance(exc, OSError) else "not a valid path"
                raise InputError(f"cannot write {_label(option, path)}: {here}: {why}") \
                    from None
            return Target(None, os.path.normpath(os.path.join(here, *todo[::-1])))
        if not stat.S_ISLNK(st.st_mode):
            done = here
            continue
        hops += 1
        if hops > MAX_LINKS:
            raise InputError(f"{_label(option, path)}: too many levels of "
                             "symbolic links")
        if top is not None and fs.inside(here, top) and \
                not fs.inside(fs.realpath(here), top) and _committed_link(top, here):
            raise InputError(
                f"{_label(option, path)}: {os.path.relpath(here, top)} is a symlink in the "
                f"repository to {fs.realpath(here)}, outside it; no report is written "
                "through it: name another path")
        try:
            link = os.readlink(here)
        except OSError as exc:
            raise InputError(f"cannot write {_label(option, path)}: {exc.strerror}") from None
        if link.startswith("/"):
            done = "/"
        todo.extend(link.split("/")[::-1])
    return Target(None, done)


def _git_reads(real: str, repo: Optional[Path]) -> str:
    """The path, when `real` is an ignore file that git reads (a .gitignore of the repo,
    or its .git/info/exclude): an input of every run whose git checks list files, read
    by git, not by the doctor, so no record holds it. Else ""."""
    if repo is None:
        return ""
    top = fs.realpath(repo)
    if not fs.inside(real, top):
        return ""
    if os.path.basename(real) == ".gitignore" or real.endswith("/.git/info/exclude"):
        return real
    return ""


def _fd_stat(option: str, path: str, fd: int) -> os.stat_result:
    """The open file behind a named fd; InputError unless the doctor was given it (at
    the command's start) open for writing."""
    try:
        st = os.fstat(fd)
        mode = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE
    except OSError:
        raise InputError(f"{_label(option, path)}: file descriptor {fd} is "
                         "not open") from None
    if fd > 2 and _given is not None and _given.get(fd) != (st.st_dev, st.st_ino):
        raise InputError(f"{_label(option, path)}: file descriptor {fd} is "
                         "not open")  # not one the caller gave: the doctor's own
    if mode == os.O_RDONLY:
        raise InputError(f"{_label(option, path)}: file descriptor {fd} is "
                         "open read-only")
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{_label(option, path)} is a directory: name a file")
    return st


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


def check_outputs(outputs: Iterable[tuple], inputs: Iterable,
                  repo: Optional[Path] = None) -> None:
    """Refuse (InputError) an output that is one of the run's inputs (`inputs`, and each
    file the command read so far: doctor/fs.py's record), the same file as another
    output, a path through a symlink of `repo` that leads out of it, or a kind of file
    a report cannot go to. `outputs`: (option, path). Called before the run, with the
    inputs known then, and again before anything is written, with all of them."""
    seen_in: dict = {}
    for p in inputs:
        try:
            found = os.stat(p)
        except (OSError, ValueError):
            continue
        seen_in.setdefault((found.st_dev, found.st_ino), str(p))
    seen_out: dict = {}
    for option, path in outputs:
        where = _target(option, path, repo)
        st = _fd_stat(option, path, where.fd) if where.fd is not None else _stat(where.real)
        if st is not None and stat.S_ISREG(st.st_mode) and where.fd not in (1, 2):
            named = seen_in.get((st.st_dev, st.st_ino)) or fs.read_by_run(st) or \
                _git_reads(where.real, repo)
            if named:
                raise InputError(f"{_label(option, path)} would overwrite an input of this run "
                                 f"({named}): name another file")
        if where.fd is not None:
            continue  # a stream: two reports to one fd follow each other
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise InputError(f"{_label(option, path)} is a directory: name a file")
        if st is not None and not stat.S_ISREG(st.st_mode) and \
                not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            raise InputError(f"{_label(option, path)} is not a regular file, a FIFO or a character "
                             "device: name a file")
        if not _is_file(st):
            continue  # `--output /dev/null --json /dev/null` writes twice to the same sink
        keys = [where.real] + ([(st.st_dev, st.st_ino)] if st else [])
        same = next((seen_out[k] for k in keys if k in seen_out), None)
        if same:
            raise InputError(f"{_label(option, path)} is the same file as {same}: each report "
                             "needs its own file")
        seen_out.update({k: _label(option, path) for k in keys})


def write_output(path: str, text: str, repo: Optional[Path] = None) -> None:
    """Write a report file as this module's docstring says; InputError when it cannot.
    `repo`: no symlink of it that leads out is followed (checked again here, as the
    path is resolved for the write)."""
    data = scrub(text).encode("utf-8")  # the output boundary: no secret leaves (secrets.py)
    where = _target("", path, repo)
    if where.fd is not None:
        _fd_stat("", path, where.fd)
        for stream in (sys.stdout, sys.stderr):  # what the doctor printed comes first
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        return _write_all(where.fd, data, path)
    st = _stat(where.real)  # a symlink stays; the file it names gets the report
    if not _is_file(st):
        return _write_stream(where.real, data, path)
    replace_file(path, where.real, data, st)


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


def _write_stream(real: str, data: bytes, path: str) -> None:
    """A character device or a FIFO: opened without blocking, never truncated."""
    try:
        fd = os.open(real, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
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
            try:
                view = view[os.write(fd, view):]
            except BlockingIOError:  # a given fd in non-blocking mode: wait for room
                select.select([], [fd], [])
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
        click.echo(text, nl=False, color=True)  # keep --color always's colours on a pipe
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
    except OSError as exc:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise InputError(f"cannot write to stdout: {exc.strerror}") from None


class Output(NamedTuple):
    """One --output: `FORMAT:FILE`, or a plain FILE that takes --format's output in
    stdout's place (as before there were several)."""
    label: str   # the option, for messages with the path: "--output", "--output junit:"
    fmt: str
    path: str    # %j and %N expanded
    plain: bool


def plan_outputs(values: Iterable[str], fmt: str) -> list:
    """The --output values as Outputs; InputError for one that names no file, or for two
    plain files (each but one needs its FORMAT:). A value is `FORMAT:FILE` only when what
    comes before its first colon is a format's name (`junit:r.xml`); anything else is a
    path as it stands (`C:/r.xml`, `logs/a:b.json`; `./json:x` is a file named json:x)."""
    from doctor.report import FORMATS

    out: list = []
    for value in values:
        head, colon, rest = value.partition(":")
        if colon and head in FORMATS:
            if not rest:
                raise InputError(f"--output {value} names no file: --output {head}:FILE")
            out.append(Output(f"--output {head}:", head, expand_output_pattern(rest), False))
        else:
            refuse_empty(("--output", value))
            out.append(Output("--output", fmt, expand_output_pattern(value), True))
    plain = [_label(o.label, o.path) for o in out if o.plain]
    if len(plain) > 1:
        raise InputError(f"{' and '.join(plain)}: only one --output takes --format's output; "
                         "name the format of each other file (--output junit:FILE)")
    return out


def write_outputs(files: list, fmt: str, text_of: Callable, repo: Optional[Path] = None) -> None:
    """Write each Output of plan_outputs (checked already by check_outputs), then --format's
    output to stdout unless a plain --output took its place. `text_of(format, stream)`
    renders a format for stdout's stream, or for a file (None). Every text is rendered
    before the first is written: one that cannot be (a saved report a format cannot read)
    leaves no file half the run's."""
    texts = [(o.path, text_of(o.fmt, None)) for o in files]
    if not any(o.plain for o in files):
        texts.append(("", text_of(fmt, sys.stdout)))
    for path, text in texts:
        if path:
            write_output(path, text, repo)
        else:
            write_stdout(text)
