"""Read-only scans of a git repository: index, untracked files, history blobs.

Core dumps are recognised by content (ELF header, e_type == ET_CORE), never by
name; names only decide which blobs are worth reading 20 bytes of. Every git
call has a timeout, takes no optional locks, and changes nothing.
"""
from __future__ import annotations

import os
import re
import select
import signal
import stat
import subprocess
import tempfile
import threading
import time
from typing import Any, Callable, Iterable, NamedTuple, Optional

from doctor import fs
from doctor.model import Skip
from doctor.scanners import gitpack
from doctor.proc import CmdResult, absolute_path, collect, run_cmd, start, stop, tool_path

ET_CORE = 4
CORE_NAME = re.compile(r"^(core(\..+)?|vgcore\.\d+)$")
# history()'s scan of `rev-list --objects` output: a path whose last component may be
# CORE_NAME's, and the `~oid` lines of the blobs its filter left out. Both start with a
# literal, which re finds fast: 15 ms for Megatron-LM's 132k lines, where a regex per
# line, or a loop over the lines, took 80-110 ms.
_CORE_END = re.compile(rb"core(?:\.[^\n/]+)?$", re.M)
_OMITTED_LINE = re.compile(rb"\n~([0-9a-f]{40,64})(?=\n|$)")
# what a rev-list says of an option it lacks (--filter: git 2.16): usage, or, before
# git 2.2x, "unrecognized argument"
_NO_FILTER = re.compile(r"usage: git rev-list|unrecognized argument: --filter")
HEADER_BYTES = 20
CANDIDATE_SIZE = 1 << 20   # blobs this large get their header read even without a core name
MAX_HEADER_READS = 400
BATCH_HEAD_BYTES = 4 << 20   # blob_heads: blobs up to this size are read whole in one git
# Variables that make git read another repository, index or object store than the one
# `-C repo` names (`git rev-parse --local-env-vars`; a git hook sets GIT_DIR and
# GIT_INDEX_FILE): the doctor scans the repository it reports on.
REPO_ENV = ("GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
            "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE",
            "GIT_NO_REPLACE_OBJECTS", "GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_SHALLOW_FILE",
            "GIT_COMMON_DIR")
ENV = {k: v for k, v in os.environ.items() if k not in REPO_ENV}
ENV.update(GIT_OPTIONAL_LOCKS="0", LC_ALL="C", GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat")
# The doctor never fetches, but git does on its own in a partial clone: `cat-file` or
# `rev-list` missing an object asks the promisor remote for it, through the
# transport the repository's config picks (core.sshCommand, remote.*.uploadpack,
# credential.helper: commands of the repository). No lazy fetch (git >= 2.44), and no
# transport allowed at all (older gits check it before they run anything): the object
# is missing, and git says so.
ENV.update(GIT_NO_LAZY_FETCH="1", GIT_ALLOW_PROTOCOL="none")
# Nor does git run a program from the working directory (proc.absolute_path).
ENV["PATH"] = absolute_path(ENV.get("PATH", os.defpath))
# A repository's own .git/config and hooks can make git run commands, and git's docs put
# them outside its security boundary (gitsecurityboundary(7): "Git repository
# configuration and hooks are not covered by this guarantee"). The doctor runs git in
# repositories it has not vetted, so every call overrides, from the command line (the
# strongest scope, git-config(1) "protected configuration"), each setting that makes the
# read-only commands below run something. Tried on git 2.39 with every setting pointing
# at a script: core.fsmonitor runs for ls-files and check-attr (true would start a
# daemon), log.showSignature runs gpg.program for git log on a signed commit, and no hook
# may ever run; no pager either (--no-pager, GIT_PAGER). safe.directory is left to git:
# a repository owned by someone else is refused, with git's message.
SAFE_CONFIG = ("core.fsmonitor=false", "core.hooksPath=/dev/null", "log.showSignature=false",
               "credential.helper=", "protocol.allow=never")
# The commands that compare work-tree files with the index or a commit (--changed-since's
# diff, git-large-file's diff-files). Where a file's stat data cannot vouch for it (a
# same-size change, a racily clean entry) git hashes it, and hashing runs the clean or
# process filter that .gitattributes names: tried on 2.39, `git diff --name-only HEAD`
# ran the repo's filter.*.clean, and, through the `git status` it runs in a submodule, the
# submodule's own. So these run with every filter driver the configuration defines
# switched off (filters_off), no submodule looked into, and no external diff or textconv
# (they print no patch; these say so anyway). Without its filter a file is hashed as it
# lies: a filtered file (git-lfs) may be listed as changed when it is not, never missed.
COMPARES_WORKTREE = ("diff", "diff-files")
NO_DRIVERS = ("--no-ext-diff", "--no-textconv", "--ignore-submodules=all")


def git_argv(repo: str, *args: str) -> list:
    """The command line of `git args` in `repo`: the only way the doctor runs git.
    GitError when it would compare work-tree files and a filter cannot be switched off."""
    argv = [tool_path("git", ENV) or "git", "--no-pager", "-C", repo]
    for setting in SAFE_CONFIG:
        argv += ["-c", setting]
    if args and args[0] in COMPARES_WORKTREE:
        return argv + filters_off(repo) + [args[0], *NO_DRIVERS, *args[1:]]
    return argv + list(args)


def filters_off(repo: str) -> list:
    """`-c` settings that switch off every filter driver git's configuration defines for
    `repo` (all its scopes and includes, as `git config --get-regexp` reads them): a
    driver whose clean, smudge and process commands are empty runs nothing, and
    .gitattributes can only name a driver the configuration defines."""
    res = run_cmd(git_argv(repo, "config", "-z", "--get-regexp", r"^filter\."), timeout=10,
                  env=ENV)
    if res.returncode not in (0, 1):   # 1: no filter.* setting at all
        checked(res, "config")
    names = set()
    for entry in res.stdout.split("\0"):
        key = entry.partition("\n")[0]   # `filter.NAME.clean\nvalue`; NAME may hold dots
        rest = key[len("filter."):]
        if "." in rest:   # NAME may be empty too: git takes `[filter ""]` and `filter=`
            names.add(rest.rpartition(".")[0])
    argv: list = []
    for name in sorted(names):
        if "=" in name:   # git's -c splits at the first "=": the setting would miss it
            raise GitError(f"git cannot be told to switch off the filter driver {name!r} "
                           "(its name holds '='), so the doctor does not let git compare "
                           "work-tree files")
        for setting in ("clean=", "smudge=", "process=", "required=false"):
            argv += ["-c", f"filter.{name}.{setting}"]
    return argv


def run_git(repo: str, *args: str, timeout: float, input: Optional[str] = None) -> CmdResult:
    """git in `repo` (see SAFE_CONFIG) with a deadline; the one start_early began, when
    it was asked for with the same arguments. Not run when it would block (_blocked)."""
    key = _early_key(repo, ())
    early = _early.pop(_early_key(repo, args), None) if _early and input is None else None
    why = _blocked(key, args, timeout)
    if why is not None:
        if early is not None:
            stop(early)
        return CmdResult(None, "", why)
    res = collect(early, timeout) if early is not None else \
        run_cmd(git_argv(repo, *args), timeout=timeout, env=ENV, input=input, spool=True)
    if res.timed_out and key is not None and timeout > _hung.get(key[0], (0.0, ""))[0]:
        _hung[key[0]] = (timeout, f"not run: an earlier git in {repo} did not finish in "
                         f"{timeout:g}s (the doctor waits for git once a run)")
    return res


# git opens the ignore files it reads (.gitignore in each directory it walks,
# .git/info/exclude and core.excludesFile) with a plain open(): a FIFO there blocks it
# until a writer comes, which is never. The gits that read them are not run when the
# repo's own are not regular files; a hang the doctor cannot see coming (a FIFO deeper
# down, a hung mount) costs one git's timeout, after which no git of the run that would
# wait as long or less waits on that repo again. One that may wait longer still runs:
# the first to time out may be the 20 s walk of the untracked files, which has a
# fallback of its own, on a file system where that walk takes 25 s and the git checks'
# own gits (60 s or more) finish. (start_early, at each CLI run's start, clears both.)
_hung: dict = {}       # real repo path -> (the longest timeout that ran out, why)
_excludes: dict = {}   # real repo path -> why its core.excludesFile would block git
_READS_IGNORES = ("check-ignore", "status")


def _blocked(key: Optional[tuple], args: tuple, timeout: float = 0.0) -> Optional[str]:
    if key is None:
        return None
    hung = _hung.get(key[0])
    if hung is not None and timeout <= hung[0]:
        return hung[1]
    if args and (args[0] in _READS_IGNORES or "--exclude-standard" in args):
        return _special_ignore_file(key[0])
    return None


def _special_ignore_file(repo: str) -> Optional[str]:
    """Why git would block on an ignore file of `repo` (its .gitignore and those of the
    directories above it, up to the work tree's top, .git/info/exclude and the
    core.excludesFile it reads), or None."""
    d = repo
    while True:
        found = [os.path.join(d, ".gitignore")]
        top = os.path.lexists(os.path.join(d, ".git"))
        if top:
            found.append(os.path.join(d, ".git", "info", "exclude"))
        for path in found:
            try:   # an in-tree .gitignore that is a link git does not follow: lstat it
                st = os.stat(path, follow_symlinks=path.endswith("exclude"))
            except OSError:
                continue
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                return _not_regular(path)
        parent = os.path.dirname(d)
        if top or parent == d:
            break
        d = parent
    if repo not in _excludes:
        _excludes[repo] = _special_excludes_file(repo)
    return _excludes[repo]


def _special_excludes_file(repo: str) -> Optional[str]:
    """Why git would block on the core.excludesFile of `repo` (its default, when unset:
    $XDG_CONFIG_HOME/git/ignore, or ~/.config/git/ignore), or None."""
    res = run_cmd(git_argv(repo, "config", "--path", "--get", "core.excludesFile"),
                  timeout=10, env=ENV)
    path = os.path.join(repo, res.stdout.rstrip("\n")) if res.returncode == 0 else ""
    if not path:
        base = ENV.get("XDG_CONFIG_HOME") or os.path.join(ENV.get("HOME", ""), ".config")
        path = os.path.join(base, "git", "ignore")
    try:
        st = os.stat(path)
    except OSError:
        return None
    return None if stat.S_ISREG(st.st_mode) else _not_regular(path)


def _not_regular(path: str) -> str:
    return (f"not run: {path} is not a regular file (a FIFO or device), and git would wait "
            "on it forever")


# The job model's file list (doctor/job/context.py) is git's two lists: the index's names
# (also what GitRepo.tracked_paths answers) and, in a full run, the untracked files that
# are not ignored (a scoped run's are among its changed ones). Two gits, begun at once:
# the first is a read of the index, the second a walk of the work tree.
LS_FILES_TRACKED = ("ls-files", "-z", "--cached")
# The untracked files: with fs.NOT_THE_REPO's directories as command-line ignore patterns,
# so git does not even walk an un-ignored .venv/ or node_modules/ (torch's 14k files: 0.1 s
# of a 0.6 s run); fs.not_the_repo still filters the list (an environment by its marker).
LS_FILES_OTHERS = ("ls-files", "-z", "--others", "--exclude-standard",
                   *(f"--exclude={name}/" for name in sorted(fs.NOT_THE_REPO)))
_early: dict = {}   # (real repo path, args) -> the git begun by start_early


def listed_names(out: str) -> list:
    """The names of `git ls-files -z` output (each ends in NUL)."""
    names = out.split("\0")
    names.pop()   # what follows the last NUL: "" (all of an empty output)
    return names


def start_early(repo: str, *args: str) -> Callable[[], None]:
    """Begin `git args` in `repo` now, for run_git to collect when it is asked for: git
    walks a 100k-file work tree (0.1 s) on another CPU while the doctor imports its
    checks, its output spooled to an unlinked file so that it is not held up by a full
    pipe until then (doctor/proc.py). Returns what the caller calls when its run is
    over: it kills and reaps the git if nobody asked for it (a run that stopped early,
    or never needed the list)."""
    key = _early_key(repo, args)
    if key is not None:
        _hung.pop(key[0], None)   # a new run: it waits for git once again
        _excludes.pop(key[0], None)
    if key is None or key in _early or _blocked(key, args):
        return lambda: None   # (another run in this process begun it; or it would block)
    proc = start(git_argv(repo, *args), env=ENV, spool=True)
    if not isinstance(proc, subprocess.Popen):
        return lambda: None

    def drop() -> None:
        if _early.get(key) is proc:
            del _early[key]
            stop(proc)
    _early[key] = proc
    return drop


def _early_key(repo: str, args: tuple) -> Optional[tuple]:
    try:   # (a relative path in a deleted working directory has none)
        return os.path.realpath(repo), args
    except OSError:
        return None


class GitError(RuntimeError):
    """git could not read the repository (a corrupt object store or index): never read as
    "nothing found"; the check that asked ends as an error with git's own message."""


def _git_said(stderr: str) -> str:
    # three lines: a refusal's remedy is git's third ("detected dubious ownership …;
    # To add an exception for this directory, call:; git config --global --add …")
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return "; ".join(lines[:3])[:400] or "no message"


def checked(res: CmdResult, what: str) -> CmdResult:
    """`res` when git succeeded; GitError with git's message otherwise."""
    if res.returncode != 0:
        why = "timed out" if res.timed_out else f"failed: {_git_said(res.stderr)}"
        raise GitError(f"git {what} {why}")
    return res


def is_elf_core(head: bytes) -> bool:
    """ELF magic, then e_type (uint16 at offset 16, EI_DATA byte order) == ET_CORE."""
    if len(head) < 18 or head[:4] != b"\x7fELF" or head[4] not in (1, 2):
        return False
    if head[5] not in (1, 2):  # EI_DATA: 1 little-endian, 2 big-endian
        return False
    return int.from_bytes(head[16:18], "little" if head[5] == 1 else "big") == ET_CORE


def is_core_dump(path: str) -> bool:
    """A regular file whose first bytes are an ELF core header (reads 20 bytes)."""
    try:
        st = os.stat(path, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode):
            return False
        with open(path, "rb") as fh:
            return is_elf_core(fh.read(HEADER_BYTES))
    except OSError:
        return False


def core_name_hint(path: str) -> bool:
    return bool(CORE_NAME.match(path.rpartition("/")[2]))


class Blob(NamedTuple):   # a tuple: a 100k-file index makes 100k of them
    path: str              # relative to the scanned directory (job.repo)
    oid: Optional[str]     # None for untracked files
    size: int
    where: str             # index, untracked, history
    commit: Optional[str] = None


class GitRepo:
    """One scanned directory inside a git work tree; results are memoized."""

    def __init__(self, root: str, timeout: float = 60.0, scope: Any = None,
                 tracked: Optional[Callable[[], Optional[list]]] = None,
                 untracked: Optional[Callable[[], Optional[list]]] = None):
        """`scope` (doctor/job/scope.py): only its changed paths, and only the history
        since its merge base (none for file arguments). `tracked`: the index's names as
        the job model already listed them (`git ls-files --cached` in `root`), or None
        where it could not; `untracked`: the same of `git ls-files --others
        --exclude-standard` (LS_FILES_OTHERS) in a full run."""
        self.scope = scope
        self._tracked = tracked
        self._untracked_listed = untracked
        if tool_path("git", ENV) is None:
            raise Skip("git is not installed")
        self.root = root
        self.timeout = timeout
        res = self.git("rev-parse", "--is-inside-work-tree", "--show-prefix", "--git-path",
                       "objects", timeout=10)
        if res.returncode != 0 and "not a git repository" not in res.stderr:
            # a work tree git refuses to read (dubious ownership, a broken .git): the
            # checks end as errors with git's message, never as "not a repository"
            checked(res, "rev-parse")
        if res.returncode != 0 or not res.stdout.startswith("true"):
            raise Skip(f"{root} is not inside a git work tree")
        said = res.stdout.splitlines()
        self.prefix = said[1] if len(said) > 1 else ""
        # the object directory (relative to root), which blob_heads reads (gitpack)
        # (a git before 2.5 echoes the --git-path it does not know: no such directory)
        self.objects = os.path.join(root, said[2]) if len(said) == 3 and \
            os.path.isdir(os.path.join(root, said[2])) else None
        self._memo: dict = {}
        self._lock = threading.Lock()

    def git(self, *args: str, timeout: Optional[float] = None, input: Optional[str] = None):
        return run_git(self.root, *args, timeout=timeout or self.timeout, input=input)

    def _once(self, key: str, fn: Callable[[], Any]) -> Any:
        with self._lock:
            if key not in self._memo:
                try:
                    self._memo[key] = fn()
                except GitError as exc:
                    # the same git fails the same way (a missing blob in the history): the
                    # checks that ask again get its error, not a second walk of every object
                    self._memo[key] = exc
            got = self._memo[key]
        if isinstance(got, GitError):
            raise got
        return got

    def rel(self, toplevel_path: str) -> Optional[str]:
        """A toplevel-relative path → relative to the scanned directory (None: outside)."""
        if toplevel_path.startswith(self.prefix):
            return toplevel_path[len(self.prefix):]
        return None

    # ---- index and work tree ---------------------------------------------------
    def index(self) -> list:
        """[Blob] for every index entry under the directory (all stages), sized by one
        `cat-file --batch-check` (a corrupt object the history meets is reported where
        the history is asked for, after the index's own errors)."""
        return self._once("index", self._index)

    def in_scope(self, path: str) -> bool:
        """A path relative to the scanned directory that the run looks at."""
        return self.scope is None or path in self.scope.changed

    def limit(self) -> Optional[list]:
        """The pathspec of a scoped run's changed paths ([]: every path; None: none)."""
        if self.scope is None or len(self.scope.changed) > 1000:
            return []
        if not self.scope.changed:
            return None
        return ["--", *(":(literal)" + p for p in sorted(self.scope.changed))]

    def _index(self) -> list:
        limit = self.limit()
        if limit is None:
            return []
        res = checked(self.git("ls-files", "-z", "-s", *limit), "ls-files")
        entries = []
        for rec in res.stdout.split("\0"):
            if not rec:
                continue
            meta, _, path = rec.partition("\t")
            if not self.in_scope(path):
                continue
            mode, oid, _stage = meta.split(" ")
            if mode == "160000":   # a submodule's commit, not a blob
                continue
            entries.append((path, oid))
        sizes = self.sizes([oid for _, oid in entries])
        return [Blob(p, oid, sizes.get(oid, 0), "index") for p, oid in entries]

    def tracked_paths(self) -> set:
        """The index's paths (gitlinks too), in a scoped run too (whether a file is
        tracked is a lookup, not a scan): the names alone, without the blob sizes that
        index() asks git for, unless a git check has read the whole index already."""
        def names() -> set:   # under self._lock (_once)
            index = self._memo.get("index")
            if isinstance(index, list) and self.scope is None:
                return {b.path for b in index}
            listed = self._tracked() if self._tracked is not None else None
            if listed is not None:
                return set(listed)
            return set(listed_names(checked(self.git(*LS_FILES_TRACKED), "ls-files").stdout))
        return self._once("tracked", names)

    def untracked(self) -> list:
        """[Blob] for untracked, not ignored regular files (about to be committed), but
        none of an environment, installed packages or a cache (fs.not_the_repo): an
        un-ignored .venv/ of 14k files is not read (stat'ed, its .so headers sniffed)."""
        return self._once("untracked", self._untracked)

    def _untracked(self) -> list:
        limit = self.limit()
        if limit is None:
            return []
        listed = self._untracked_listed() if self._untracked_listed is not None and \
            self.scope is None else None   # the job model's list: the same git's answer
        if listed is None:
            listed = listed_names(checked(self.git(*LS_FILES_OTHERS, *limit),
                                          "ls-files --others").stdout)
        out = []
        names = fs.not_the_repo([p for p in listed if p], self.root)
        for path in (p for p in names if self.in_scope(p)):
            try:
                st = os.stat(os.path.join(self.root, path), follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                out.append(Blob(path, None, st.st_size, "untracked"))
        return out

    def sizes(self, oids: Iterable[str]) -> dict:
        oids = list(dict.fromkeys(oids))
        if not oids:
            return {}
        res = checked(self.git("cat-file", "--batch-check=%(objectname) %(objectsize)",
                               input="\n".join(oids) + "\n"), "cat-file --batch-check")
        out = {}
        missing = []
        for line in res.stdout.splitlines():
            parts = line.split(" ")
            if len(parts) == 2 and parts[1].isdigit():
                out[parts[0]] = int(parts[1])
            elif len(parts) == 2 and parts[1] == "missing":
                missing.append(parts[0])
        self._unreadable(missing, "the index")
        return out

    def _unreadable(self, oids: list, named_by: str) -> None:
        """GitError when objects that the index or history names cannot be read (a missing
        or corrupt object file), unless this is a partial clone, which lacks some by design."""
        if not oids or self.partial_clone():
            return
        raise GitError(
            f"the repository is corrupt: git cannot read {len(oids)} object(s) that "
            f"{named_by} names (e.g. {oids[0]}: missing or corrupt); a clone, push or rsync "
            "of it fails or copies broken files. `git fsck` lists them; restore them from "
            "another clone")

    def lfs_paths(self, paths: Iterable[str]) -> set:
        """The paths whose `filter` attribute is lfs (Git LFS tracks them)."""
        paths = list(paths)
        if not paths:
            return set()
        res = self.git("check-attr", "-z", "--stdin", "filter", input="\0".join(paths) + "\0")
        fields = res.stdout.split("\0")
        return {fields[i] for i in range(0, len(fields) - 2, 3) if fields[i + 2] == "lfs"}

    # ---- history ---------------------------------------------------------------
    def history(self, large: int = CANDIDATE_SIZE) -> list:
        """[(toplevel path or None, oid, size)] for the blobs reachable from any ref that
        are worth a look: a core-like name (CORE_NAME), or CANDIDATE_SIZE or larger.

        One walk that names no large blob: `git rev-list --objects --all
        --filter=blob:limit=<large> --filter-print-omitted` prints every object with the
        path it was first met at, but the blobs of `large` bytes or more only as `~oid`
        (git knows their size from the pack without inflating them); one `cat-file --batch-check`
        then sizes the large and core-named ones (a tree named `core` is not a blob).
        The large ones' paths come from names(), a second walk that only a finding
        needs. (Megatron-LM: 0.45 s of git instead of 0.7, and 132k lines fewer.)
        """
        return self._once("history" if large == CANDIDATE_SIZE else f"history {large}",
                          lambda: self._history(large))

    def _walk_args(self) -> Optional[list]:
        """rev-list's revisions and pathspec (None: a scoped run with no base)."""
        # rev-list names each object once, by the first path it meets: limit the walk to
        # the scanned directory so that a blob shared with a path outside it is not lost.
        limit = ["--", "."] if self.prefix else []
        # a partial clone lacks the blobs its filter left on the remote, by design: a walk
        # that meets one would fetch it (no fetch is allowed: it fails instead), so it
        # passes over them (git >= 2.17, which partial clones need anyway)
        opts = ["--missing=allow-promisor"] if self.partial_clone() else []
        if self.scope is None:
            return [*opts, "--all", *limit]
        if self.scope.base is None:   # a scoped run: the commits since the merge base
            return None
        return [*opts, f"{self.scope.base}..HEAD", *limit]

    def partial_clone(self) -> bool:
        """A partial clone (`git clone --filter=…`): a promisor remote, which git 2.39
        writes as `remote.<name>.promisor = true` and older gits as
        extensions.partialClone. (Not under _once's lock: the walks ask while they hold
        it.)"""
        if "partial clone" not in self._memo:
            said = self.git("config", "--get-regexp",
                            r"^(extensions\.partialclone|remote\..*\.promisor)$",
                            timeout=10).stdout.split("\n")
            # (a bare `promisor` line, no `= value`, is true to git: get-regexp prints
            # the key alone)
            self._memo["partial clone"] = any(
                bool(value.strip()) if key.startswith("extensions.") else
                key.endswith(".promisor") and (not sep or value.strip().lower() in (
                    "true", "yes", "on", "1"))
                for key, sep, value in (line.partition(" ") for line in said if line))
        return self._memo["partial clone"]

    def _history(self, large: int) -> list:
        args = self._walk_args()
        if args is None:
            return []
        try:
            out = _walk(git_argv(self.root, "rev-list", "--objects",
                                 f"--filter=blob:limit={max(1, large)}",
                                 "--filter-print-omitted", *args), self.timeout)
        except GitError as exc:
            if not _NO_FILTER.search(str(exc)):
                raise
            # a git before 2.16 has no --filter: every object named and sized, as before
            return [(path, oid, size) for path, oid, size in self._sized(self._names_only())
                    if size >= large or core_name_hint(path)]
        paths: dict = {}
        for m in _CORE_END.finditer(out):
            start = m.start()
            if out[start - 2:start] == b"vg":
                start -= 2
            if out[start - 1:start] not in (b"/", b" "):   # `score.py`, `encore`
                continue
            line = out[out.rfind(b"\n", 0, start) + 1:m.end()]
            oid, _, path = line.partition(b" ")
            name = path.decode("utf-8", "surrogateescape")
            if name and core_name_hint(name):
                paths[oid.decode("ascii", "replace")] = name
        for m in _OMITTED_LINE.finditer(b"\n" + out):
            paths.setdefault(m.group(1).decode("ascii"), None)
        return self._sized(paths)

    def _sized(self, paths: dict) -> list:
        """[(path, oid, size)] of the blobs among `paths` (oid -> path or None), in its
        order; GitError when one is missing (not in a partial clone)."""
        if not paths:
            return []
        res = checked(self.git("cat-file", "--batch-check=%(objecttype) %(objectname) "
                               "%(objectsize)", input="".join(o + "\n" for o in paths)),
                      "cat-file --batch-check")
        blobs = []
        missing = []
        for said in res.stdout.splitlines():
            parts = said.split(" ")
            if len(parts) == 2 and parts[1] == "missing":
                missing.append(parts[0])
            elif len(parts) == 3 and parts[0] == "blob" and parts[2].isdigit():
                blobs.append((paths.get(parts[1]), parts[1], int(parts[2])))
        self._unreadable(missing, "the history")
        return blobs

    def names(self, entries: list) -> list:
        """history() entries with their paths: those without one (the large blobs) get
        the path the unfiltered walk names them by, as history() would have before it
        left them unnamed, and then all come in that walk's order; a blob that walk
        names by no path (a ref to a bare blob) is left out."""
        if all(path is not None for path, _, _ in entries):
            return entries
        found = self._once("history names", self._names)
        named = [(path if path is not None else found.get(oid, (0, None))[1], oid, size)
                 for path, oid, size in entries]
        named = [e for e in named if e[0]]
        named.sort(key=lambda e: found.get(e[1], (len(found), None))[0])
        return named

    def _names(self) -> dict:
        """oid -> (its place in the walk, the path it is first met at)."""
        return {oid: (i, path) for i, (oid, path) in enumerate(self._names_only().items())}

    def _names_only(self) -> dict:
        """oid -> the path the unfiltered walk first meets it at, in the walk's order.
        Walked once: its callers run under _once's lock (which they hold already)."""
        if "history walk" in self._memo:
            return self._memo["history walk"]
        args = self._walk_args()
        found: dict = {}
        if args is not None:
            out = _walk(git_argv(self.root, "rev-list", "--objects", *args), self.timeout)
            for line in out.split(b"\n"):
                oid, _, path = line.partition(b" ")
                if path:
                    found[oid.decode("ascii", "replace")] = \
                        path.decode("utf-8", "surrogateescape")
        self._memo["history walk"] = found
        return found

    def added_in(self, paths: Iterable[str]) -> dict:
        """toplevel path → (oid → the oldest commit that added that blob at that path)."""
        paths = sorted(set(paths))
        if not paths:
            return {}
        res = checked(self.git("log", "--all", "--format=commit %H", "--raw", "--no-abbrev",
                               "--no-renames", "-z", "--diff-filter=AM", "--",
                               *[":(top,literal)" + p for p in paths]), "log")
        out: dict = {}
        commit = None
        fields = res.stdout.split("\0")
        i = 0
        while i < len(fields):
            f = fields[i].lstrip("\n")
            if f.startswith("commit "):
                commit = f[7:].split("\n")[0]
                f = f[7 + 40:].lstrip("\n")
            if f.startswith(":") and i + 1 < len(fields):
                meta = f[1:].split(" ")
                out.setdefault(fields[i + 1], {})[meta[3]] = commit   # newest first: keep oldest
                i += 2
                continue
            i += 1
        return out

    def blob_head(self, oid: str, n: int = HEADER_BYTES) -> bytes:
        """The first n bytes of a blob, without reading the rest of it."""
        return _read_head(git_argv(self.root, "cat-file", "blob", oid), n, 10.0)

    def blob_heads(self, oids: Iterable[str], sizes: dict, n: int = HEADER_BYTES,
                   most: Optional[int] = None) -> dict:
        """oid -> the first n bytes of each blob (b"" where git has none). They come from
        git's own files (doctor/scanners/gitpack.py: Megatron-LM's 421 history blobs of
        1-4 MiB, 0.55 s of CPU through `cat-file --batch`, read in 10 ms). What that
        leaves to git, the first `most` of it (all when None): a git process costs ~6 ms
        of CPU, as much as inflating 6 MB, so the blobs up to BATCH_HEAD_BYTES (`sizes`:
        oid -> size) come from one `cat-file --batch`, whole, the larger ones from a
        process each that is stopped after n bytes (blob_head)."""
        oids = list(dict.fromkeys(o for o in oids if o))
        out = self._store_heads(oids, n)
        rest = [o for o in oids if o not in out][:most]
        small = [o for o in rest if sizes.get(o, BATCH_HEAD_BYTES + 1) <= BATCH_HEAD_BYTES]
        out.update(_batch_heads(git_argv(self.root, "cat-file", "--batch"), small, n,
                                10.0 + len(small) * BATCH_HEAD_BYTES / 50e6) if small else {})
        for o in rest:
            if o not in out:
                out[o] = self.blob_head(o, n)
        return out

    def _store_heads(self, oids: list, n: int) -> dict:
        """The heads that doctor/scanners/gitpack.py reads from the object directory
        (`git rev-parse --git-path objects`); it leaves out what it cannot read."""
        if not oids or self.objects is None:
            return {}
        return gitpack.Store(self.objects).heads(oids, n)


def repo_for(job: Any) -> GitRepo:
    """The job's GitRepo, shared by the checks of one run (raises Skip when not a repo)."""
    return job.memo("git_repo", lambda: GitRepo(str(job.repo), scope=job.scope,
                                                tracked=job.tracked_rels,
                                                untracked=job.untracked_rels))


def _walk(argv: list, timeout: float) -> bytes:
    """The output of a `git rev-list` (argv), as bytes, within the deadline (killed at
    it); GitError with git's message when it fails."""
    output = tempfile.TemporaryFile()   # unlinked already: nothing is left behind
    # its output to that file, not a pipe (proc.start says why); its stderr stays a pipe,
    # so that communicate wakes when it ends
    proc = subprocess.Popen(argv, stdout=output, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env=ENV, start_new_session=True)
    try:
        said = proc.communicate(timeout=timeout)[1]
        if proc.returncode != 0:
            raise GitError("git rev-list --objects --all failed: "
                           + _git_said(said.decode("utf-8", "replace")))
        output.seek(0)
        return output.read()
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"history scan took longer than {timeout:.0f}s") from None
    finally:
        output.close()
        if proc.poll() is None:
            _kill(proc)


def _batch_heads(argv: list, oids: list, n: int, timeout: float) -> dict:
    """oid → the first n bytes of each blob that `git cat-file --batch` (argv) prints
    within the deadline (its output is read as it comes, never held whole); a blob it
    does not print is left out."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=ENV, start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None
    timer = threading.Timer(timeout, lambda: _kill(proc))   # a stuck git: EOF below
    timer.daemon = True
    timer.start()
    out: dict = {}
    try:
        # one line per blob, at most MAX_HEADER_READS of them: less than a pipe holds
        proc.stdin.write("".join(o + "\n" for o in oids).encode())
        proc.stdin.close()
        for oid in oids:
            head = proc.stdout.readline().split()   # `<oid> blob <size>` or `<oid> missing`
            if len(head) != 3 or not head[2].isdigit():
                if not head:
                    break        # killed at the deadline, or git ended
                continue
            size = int(head[2])
            data = proc.stdout.read(min(n, size))
            left = size - len(data) + 1          # the rest, and the newline after it
            while left > 0:
                chunk = proc.stdout.read(min(left, 1 << 20))
                if not chunk:
                    break
                left -= len(chunk)
            if left > 0:
                break
            out[oid] = data
        return out
    except (OSError, ValueError):
        return out
    finally:
        timer.cancel()
        proc.stdout.close()
        if proc.poll() is None:
            _kill(proc)
        else:
            proc.wait()


def _read_head(argv: list, n: int, timeout: float) -> bytes:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, env=ENV, start_new_session=True)
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    data = b""
    deadline = time.monotonic() + timeout
    try:
        while len(data) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                break
            chunk = os.read(fd, n - len(data))
            if not chunk:
                break
            data += chunk
        return data
    finally:
        proc.stdout.close()
        if proc.poll() is None:
            _kill(proc)


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def human(size: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1000 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000.0  # type: ignore[assignment]
    return f"{size} B"
