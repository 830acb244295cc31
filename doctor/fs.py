"""The one way the doctor reads the filesystem: nothing here raises OSError.

A path that does not exist is just absent. A path the doctor cannot read (no
permission, a symlink loop, a name too long, an I/O error) is skipped and
noted in the run's `Unreadable`, which the report counts in
`facts.unreadable`: one entry it cannot see is never fatal.
"""
from __future__ import annotations

import errno
import os
import re
import stat as _stat
import threading
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional

from doctor.errors import InputError, wide_encoding

# errnos that mean "not there", not "could not be read"
ABSENT = {errno.ENOENT, errno.ENOTDIR}
MAX_KEPT = 1000      # paths remembered (the count goes on)
MAX_EXAMPLES = 5     # paths the report names


class Unreadable:
    """What a run could not read: path → reason, thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: dict = {}
        self._count = 0

    def note(self, path: Any, exc: OSError) -> None:
        """Record `path` unless `exc` says it simply does not exist."""
        if exc.errno in ABSENT:
            return
        key = os.fspath(path)
        with self._lock:
            if key in self._paths:
                return
            self._count += 1
            if len(self._paths) < MAX_KEPT:
                self._paths[key] = exc.strerror or type(exc).__name__

    def __len__(self) -> int:
        return self._count

    def items(self) -> list:
        """[(path, reason)] sorted by path (the first MAX_KEPT noted)."""
        with self._lock:
            return sorted(self._paths.items())


Log = Optional[Unreadable]

# The files a command read whole: (st_dev, st_ino) -> the path as read. A report must
# never be written over one of them (doctor/outputs.py check_outputs), and the guard
# cannot know them before the checks ran: a sourced env.sh, an --exclude-from file, a
# Python source. None outside a CLI command (a library caller keeps no record).
# Sniffs (a script's first 16 KiB, a core header) are not inputs: a previous report
# that the job model looked at and passed over may be written again.
_reads: Optional[dict] = None


def record_reads() -> None:
    """Begin a new record of the files read (the CLI, at each command's start)."""
    global _reads
    _reads = {}


def end_reads() -> None:
    global _reads
    _reads = None


def note_read(path: Any, st: Optional[os.stat_result] = None) -> None:
    """Record that the run read `path` whole (`st`: its fstat, when the reader has one).
    For the readers that do not go through read_bytes; a dict store under the GIL needs
    no lock."""
    if _reads is None:
        return
    if st is None:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return
    _reads.setdefault((st.st_dev, st.st_ino), os.fspath(path))


def read_by_run(st: os.stat_result) -> Optional[str]:
    """The path under which this command read the file `st` describes, else None."""
    return None if _reads is None else _reads.get((st.st_dev, st.st_ino))


def _note(log: Log, path: Any, exc: OSError) -> None:
    if log is not None:
        log.note(path, exc)


def stat(path: Any, log: Log = None, *, follow: bool = True) -> Optional[os.stat_result]:
    """os.stat, or None when the path is absent or unreadable (noted in `log`)."""
    try:
        return os.stat(path, follow_symlinks=follow)
    except OSError as exc:
        _note(log, path, exc)
    except ValueError:  # an embedded NUL byte: no such path
        pass
    return None


def is_file(path: Any, log: Log = None) -> bool:
    """A regular file (after symlinks) that the doctor can stat."""
    st = stat(path, log)
    return st is not None and _stat.S_ISREG(st.st_mode)


def is_dir(path: Any, log: Log = None) -> bool:
    st = stat(path, log)
    return st is not None and _stat.S_ISDIR(st.st_mode)


def read_bytes(path: Any, log: Log = None, limit: Optional[int] = None) -> Optional[bytes]:
    """The first `limit` bytes (all when None) of a regular file, else None. Opened
    without blocking and checked after the open, so a FIFO or device never hangs it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        _note(log, path, exc)
        return None
    except ValueError:
        return None
    try:
        with open(fd, "rb", closefd=True) as fh:
            st = os.fstat(fd)
            if not _stat.S_ISREG(st.st_mode):
                return None
            if limit is None:
                note_read(path, st)
                return fh.read()
            return fh.read(limit)
    except OSError as exc:  # EIO, or EAGAIN from a /proc file such as kmsg
        _note(log, path, exc)
        return None


def read_text(path: Any, log: Log = None, limit: Optional[int] = None) -> Optional[str]:
    """read_bytes decoded as UTF-8 (undecodable bytes replaced), else None."""
    raw = read_bytes(path, log, limit)
    return None if raw is None else raw.decode("utf-8", "replace")


def entries(path: Any, log: Log = None) -> list:
    """The directory's entries as sorted Paths ([] when it cannot be listed)."""
    try:
        return sorted(Path(path) / name for name in os.listdir(path))
    except OSError as exc:
        _note(log, path, exc)
    except ValueError:
        pass
    return []


# What is not the project, tracked or not, in a git work tree or out of one: installed
# packages, environments and the caches of builds and tools. Ruff's default `exclude`
# (its docs, settings: exclude) is the model: these are its names, without the editor's
# .vscode (settings, not code) and with .nox beside .tox. A copied torch in an
# un-ignored .venv/ is 2,285 Python files the job never runs as its own code.
NOT_THE_REPO = frozenset({
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".ipynb_checkpoints",
    ".mypy_cache", ".nox", ".pants.d", ".pyenv", ".pytest_cache", ".pytype", ".ruff_cache",
    ".svn", ".tox", ".venv", "__pycache__", "__pypackages__", "_build", "buck-out", "build",
    "dist", "node_modules", "site-packages", "venv"})
# A directory holding one of these is an environment, whatever its name (env/, .py311/):
# venv, virtualenv and uv write pyvenv.cfg at its top, conda a conda-meta/ directory.
ENV_MARKERS = ("pyvenv.cfg", "conda-meta")
# one name of a path: an excluded directory, or the marker inside an environment
_EXCLUDED = re.compile("(?:^|/)(?:%s)/" % "|".join(re.escape(n) for n in sorted(NOT_THE_REPO)))
_MARKER = re.compile("(?:^|/)(?:pyvenv\\.cfg$|conda-meta/)")


def not_the_repo(rels: list, top: Any = None) -> list:
    """`rels` (names relative to `top`, as git lists them) without those under a
    NOT_THE_REPO directory or an environment: a directory whose pyvenv.cfg or
    conda-meta/ is among `rels` or, when `top` is given, on disk (git may ignore the
    marker and list the rest). Order kept. One C-level regex test per name; a stat per
    directory only where `top` is given."""
    kept = [r for r in rels if not _EXCLUDED.search(r)]
    envs = {m.string[:m.start() + (1 if m.start() else 0)] for m in
            filter(None, map(_MARKER.search, kept))}
    if top is not None:
        dirs = {r.rpartition("/")[0] for r in kept}
        dirs.discard("")
        envs |= {d + "/" for d in dirs
                 if any(os.path.lexists(os.path.join(top, d, m)) for m in ENV_MARKERS)}
    envs.discard("")   # the project itself holding a pyvenv.cfg is still the project
    if not envs:
        return kept
    under = re.compile("|".join(re.escape(e) for e in sorted(envs)))
    return [r for r in kept if not under.match(r)]


def walk(top: Any, log: Log = None, prune: Iterable[str] = ()) -> Iterator[tuple]:
    """os.walk (top-down, sorted, symlinked directories not followed), skipping the
    directory names in `prune`, NOT_THE_REPO, hidden ones and environments (below
    `top`: the directory's own listing is read, nothing in it); a directory it cannot
    list is noted."""
    pruned = set(prune) | NOT_THE_REPO
    for root, dirs, files in os.walk(top, onerror=lambda e: _note(log, e.filename, e)):
        if root != os.fspath(top) and (ENV_MARKERS[0] in files or ENV_MARKERS[1] in dirs):
            dirs[:] = []
            continue
        dirs[:] = sorted(d for d in dirs if d not in pruned and not d.startswith("."))
        yield root, dirs, sorted(files)


def glob(root: Path, pattern: str, log: Log = None) -> list:
    """Files matching `pattern` as Path.glob matches it (relative to `root`, or
    absolute), sorted; what cannot be listed or stat'ed is noted and left out."""
    base = Path(root)
    if os.path.isabs(pattern):
        base = Path(Path(pattern).anchor)
        pattern = str(Path(*Path(pattern).parts[1:])) if len(Path(pattern).parts) > 1 else ""
    hits: list = []
    try:
        for hit in base.glob(pattern):
            hits.append(hit)
    except OSError as exc:
        _note(log, exc.filename or base, exc)
    except (ValueError, NotImplementedError, RecursionError):  # "" or a bad pattern
        pass
    return sorted(p for p in hits if is_file(p, log))


def glob_regex(pattern: str) -> "re.Pattern":
    """A relative Path.glob pattern as a regex over repo-relative names: `**` spans
    directories, `*`, `?` and `[...]` stay within one name, as Path.glob matches them."""
    out = []
    parts = pattern.strip("/").split("/")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append("(?!)" if last else "(?:[^/]+/)*")   # a last `**`: directories only
            continue
        seg, j = "", 0
        while j < len(part):
            c = part[j]
            k = part.find("]", j + 2) if c == "[" else -1
            if c == "*":
                seg += "[^/]*"
            elif c == "?":
                seg += "[^/]"
            elif k != -1:
                body = part[j + 1:k]
                body = "^" + body[1:] if body.startswith("!") else body
                seg += "[" + body.replace("\\", "\\\\") + "]"
                j = k
            else:
                seg += re.escape(c)
            j += 1
        out.append(seg if last else seg + "/")
    return re.compile("".join(out) + r"\Z")


def inside(real: str, top: str) -> bool:
    """Whether the path `real` is `top` or lies below it (both as given: resolve them
    first where links count)."""
    return real == top or real.startswith(top.rstrip("/") + "/")


def realpath(path: Any) -> str:
    """os.path.realpath that never raises (Path.resolve raises on a symlink loop)."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.abspath(path) if os.path.isabs(path) else os.fspath(path)


class RealPaths:
    """realpath for one run, each path resolved once: its parent's resolution, then one
    lstat of its own (a link is resolved whole), so a 100k-file repo's few thousand
    directories cost a few thousand lstats, however often their files are asked about.
    `.` and `..` follow the resolved parent, as the kernel does. Not for paths that
    change during the run."""

    def __init__(self) -> None:
        self._dirs: dict = {}

    def __call__(self, path: Any) -> str:
        p = os.fspath(path)
        if not os.path.isabs(p):
            return realpath(p)
        return self.dir(p)   # a file's resolution is cached as a directory's would be

    def dir(self, d: str) -> str:
        hit = self._dirs.get(d)
        if hit is not None:
            return hit
        parent, name = os.path.split(d)
        if parent == d:                      # the root
            real = realpath(d)
        elif name in ("", "."):              # "/a/b/" and "/a/b/." are /a/b
            real = self.dir(parent)
        elif name == "..":
            real = os.path.dirname(self.dir(parent))
        elif os.path.islink(d):
            real = realpath(d)
        else:
            real = os.path.join(self.dir(parent), name)
        self._dirs[d] = real
        return real


def cwd() -> Path:
    """The current directory; an InputError (exit 2) when it no longer exists."""
    try:
        return Path.cwd()
    except OSError as exc:
        raise InputError(f"cannot use the current directory: {exc.strerror} (was it "
                         "deleted? cd to an existing directory or pass absolute paths)") from None


def readable_dir(path: Path, kind: str) -> Path:
    """`path` as a directory the doctor can list and enter; else one InputError line."""
    try:
        if not _stat.S_ISDIR(os.stat(path).st_mode):
            raise InputError(f"{kind} is not a directory: {path}")
        with os.scandir(path) as it:
            next(it, None)
        os.stat(os.path.join(path, "."))  # needs search (x) permission too
    except FileNotFoundError:
        raise InputError(f"{kind} does not exist: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read {kind} {path}: {exc.strerror}") from None
    except ValueError:
        raise InputError(f"{kind} is not a valid path: {path!r}") from None
    return path


def read_input(path: Path, kind: str, max_bytes: int = 20 * 1024 * 1024) -> bytes:
    """The bytes of an input file; every way it can be unusable is one InputError line."""
    try:
        st = path.stat()
        if _stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError
        if not _stat.S_ISREG(st.st_mode):  # a FIFO or device would block or never end
            raise InputError(f"{path}: not a regular file, not a {kind}")
        if st.st_size > max_bytes:
            raise InputError(f"{path}: {st.st_size:,} bytes is too large for a {kind} "
                             f"(at most {max_bytes // 1024 // 1024} MiB)")
        with open(path, "rb", opener=_nonblocking) as fh:  # swapped for a FIFO meanwhile
            raw = fh.read(max_bytes + 1)
            note_read(path, os.fstat(fh.fileno()))  # an input: no report goes over it
    except FileNotFoundError:
        raise InputError(f"{kind} not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a {kind}") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    if b"\0" in raw[:8192] and wide_encoding(raw) is None:
        raise InputError(f"{path}: binary file, not a {kind}")
    return raw


def _nonblocking(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NONBLOCK)
