"""Repository hygiene: core dumps and oversized files in the index, work tree and history."""
from __future__ import annotations

import os
import shlex
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, check
from doctor.job.context import Job
from doctor.model import FixOption, run
from doctor.scanners import gitignore
from doctor.scanners.git import (
    CANDIDATE_SIZE,
    MAX_HEADER_READS,
    Blob,
    GitRepo,
    core_name_hint,
    human,
    is_core_dump,
    is_elf_core,
    repo_for,
)
from doctor.scanners.gitignore import core_lines

MB = 1000 * 1000
MIB = 1024 * 1024
REWRITE_WARNING = ("`git filter-repo` rewrites history: every commit after it gets a new id, "
                   "so coordinate with everyone who has a clone and force-push all branches.")


def _ignore_line(path: str) -> list:
    """.gitignore lines that keep this file out without hiding code (`src/core/`, `core.py`)."""
    return next(iter(core_lines(path)), [])


def _commands(repo: GitRepo, blob: Blob, ignore: list) -> tuple:
    q = shlex.quote
    cmds = []
    if blob.where == "index":
        cmds.append(f"git rm --cached -- {q(blob.path)}")
    if ignore:
        cmds += [f"echo {q(line)} >> .gitignore" for line in ignore]
        cmds.append("git add .gitignore")
    if blob.where == "index":
        cmds.append(f"git commit -m {q('Stop tracking ' + blob.path)}")
    if blob.where == "history" or blob.commit:
        cmds.append(f"git filter-repo --invert-paths --path {q(repo.prefix + blob.path)}")
    return tuple(cmds)


def _fix(blob: Blob) -> str:
    if blob.where == "untracked":
        return ("Delete it (or move it out of the repository) and ignore it so that it is "
                "never added.")
    if blob.where == "history":
        return ("It is no longer tracked, but every clone and push still carries it: ignore it, "
                "then remove it from history from the repository's top level. " + REWRITE_WARNING)
    text = "Remove it from the index, ignore it, and commit."
    if blob.commit:
        text += (" It also stays in history until you rewrite it, from the repository's top "
                 "level: " + REWRITE_WARNING)
    return text


def _history_blobs(repo: GitRepo, entries: list) -> list:
    """Blobs under the directory, one per (path, oid), of history() entries (named first:
    a large blob's path costs a second walk, which only the blobs that matter get)."""
    out = {}
    for top_path, oid, size in repo.names(entries):
        rel = repo.rel(top_path)
        if rel is not None:
            out[(rel, oid)] = Blob(rel, oid, size, "history")
    return list(out.values())


def _with_commits(repo: GitRepo, blobs: list) -> list:
    added = repo.added_in(repo.prefix + b.path for b in blobs)
    return [Blob(b.path, b.oid, b.size, b.where,
                 added.get(repo.prefix + b.path, {}).get(b.oid or "")) for b in blobs]


def _worth_reading(path: str, size: int) -> bool:
    """A core-like name, or large: worth reading 20 bytes of."""
    return size >= CANDIDATE_SIZE or core_name_hint(path)


def _core_candidates(blobs: list) -> list:
    """Blobs worth 20 bytes, names first, then by size."""
    cands = [b for b in blobs if _worth_reading(b.path, b.size)]
    cands.sort(key=lambda b: (not core_name_hint(b.path), -b.size))
    return cands[:MAX_HEADER_READS]


@check("git-tracked-core-file", title="Core dump files are tracked by git",
       severity="error", tags=("git", "repo"), needs=("repo", "git"), timeout=120)
def tracked_core_files(job: Job) -> Iterator[Finding]:
    """A core dump is committed, staged, about to be added, or buried in history.

    Core dumps are found by content: an ELF header whose e_type is ET_CORE
    (32/64-bit, either byte order). Names such as `core`, `core.<pid>` or
    `vgcore.<pid>` only decide which files are worth reading; `core.py`,
    `src/core/` or an executable named `core` are never reported.

    ## Why it matters
    A crashed training run drops a core file of the process's whole memory
    (often gigabytes) into the working directory. Committed, it makes every
    clone huge, and GitHub rejects any push that carries a file over 100 MB,
    so one `git add .` after a crash blocks the whole team's pushes until the
    file is removed from history, not just from the latest commit.

    ## How to fix
    Stop tracking it and ignore core files (the `!core/` line keeps packages
    named `core` visible):

        git rm --cached -- core.12345
        echo 'core.[0-9]*' >> .gitignore
        git add .gitignore
        git commit -m 'Stop tracking core.12345'

    If it was ever committed, rewrite history from the repository's top level
    (this changes every later commit id; coordinate and force-push):

        git filter-repo --invert-paths --path core.12345

    Prevent new ones with `ulimit -c 0` in the job script.

    `doctor fix` appends the ignore lines to .gitignore (a safe edit; lines
    that would hide a tracked file give way to the core's own path). It never
    touches the index: `git rm --cached` stays for you to run.
    """
    repo = repo_for(job)
    index = repo.index()
    found: list = []
    cands = _core_candidates(index)
    in_index = {(b.path, b.oid) for b in index}
    # the history's core-like names and large blobs, whose paths only a core needs: the
    # large ones are named after their heads are read (GitRepo.names walks again)
    past = [e for e in repo.history() if (e[0], e[1]) not in in_index]
    if len(past) > MAX_HEADER_READS:
        # more than git is asked to read where git's own files cannot be (an alternate
        # store: `clone --shared`): the large ones' names first, so that a core-named
        # one is among the heads read, whatever its size
        past = [e for e in repo.names(past) if (e[0], e[1]) not in in_index]
    past.sort(key=lambda e: (not (e[0] is not None and core_name_hint(e[0])), -e[2]))
    # every blob's head from git's own files, or one git where they are small (blob_heads)
    heads = repo.blob_heads([b.oid or "" for b in cands] + [e[1] for e in past],
                            {**{e[1]: e[2] for e in past}, **{b.oid: b.size for b in cands}},
                            most=len(cands) + MAX_HEADER_READS)
    found += [b for b in cands if is_elf_core(heads.get(b.oid or "", b""))]
    for b in _core_candidates(repo.untracked()):
        if is_core_dump(str(job.repo / b.path)):
            found.append(b)
    found += _core_candidates([b for b in _history_blobs(
        repo, [e for e in past if is_elf_core(heads.get(e[1], b""))])
        if (b.path, b.oid) not in in_index])
    found = _with_commits(repo, [b for b in found if b.where != "untracked"]) + \
        [b for b in found if b.where == "untracked"]
    cores = [b.path for b in found]
    for b in found:
        yield _core_finding(job, repo, b, cores)


def _core_finding(job: Job, repo: GitRepo, b: Blob, cores: list) -> Finding:
    where = {"index": "is tracked by git (in the index)",
             "untracked": "is untracked and not ignored: the next `git add .` commits it",
             "history": "is in the repository's history"}[b.where]
    msg = f"{b.path} is an ELF core dump ({human(b.size)}) and {where}"
    if b.commit:
        msg += f"; added in commit {b.commit[:12]}"
    data = {"path": b.path, "size": b.size, "where": b.where}
    if b.where == "history":
        data["commit"] = b.commit
    # the first choice of lines that hides no tracked file but the cores found
    choices = core_lines(b.path)
    lines = gitignore.safe_lines(job, choices, cores)
    cmds = _commands(repo, b, ignore=lines or _ignore_line(b.path))
    if b.where == "untracked":
        cmds = (f"rm -- {shlex.quote(b.path)}",) + cmds
    edit = gitignore.ignore_edit(job, b.path, lines, "ignore core dumps in .gitignore") \
        if lines else None
    return Finding(msg, location=Location(b.path), fix=_fix(b), commands=cmds, data=data,
                   options=(FixOption((run("in the repo", *cmds),)),) if cmds else (),
                   edits=(edit,) if edit else ())


@check("git-large-file", title="Files over GitHub's size limits are tracked by git",
       severity="error", tags=("git", "repo"), needs=("repo", "git"), timeout=120)
def large_files(job: Job, *, warn_bytes: int = 50 * MB, error_bytes: int = 100 * MIB
                ) -> Iterator[Finding]:
    """A tracked file or a blob in history is over 50 MB (warning) or 100 MB (error).

    Git LFS-tracked files (attribute `filter=lfs`) are left out: git stores
    only a small pointer for them.

    ## Why it matters
    Git warns above 50 MB and GitHub refuses any push that contains a file
    over 100 MB, even when a later commit deleted it: the blob is still in
    the history being pushed. Checkpoints, datasets and core dumps committed
    by accident block every push and make every clone slow.

    ## How to fix
    Untrack the file, ignore it, and commit:

        git rm --cached -- checkpoints/model.pt
        echo '/checkpoints/model.pt' >> .gitignore
        git add .gitignore
        git commit -m 'Stop tracking checkpoints/model.pt'

    If it was ever committed, remove it from history from the repository's
    top level (rewrites every later commit id; coordinate and force-push):

        git filter-repo --invert-paths --path checkpoints/model.pt

    Keep large artifacts outside git, or track them with Git LFS
    (`git lfs track '*.pt'`).
    """
    repo = repo_for(job)
    # A tracked file counts at its size in git or, when modified, in the work tree
    # (about to be committed) -- except under LFS, where git only stores a pointer.
    changed = _changed(repo)
    sized = [(b, max(b.size, _worktree_size(job, b.path))
              if changed is None or b.path in changed else b.size) for b in repo.index()]
    lfs = repo.lfs_paths(repo.prefix + b.path for b, size in sized if size > warn_bytes)
    index = [b if size == b.size or repo.prefix + b.path in lfs
             else Blob(b.path, b.oid, size, "index") for b, size in sized]
    in_index = {(b.path, b.oid) for b in index}
    blobs = [b for b in index if b.size > warn_bytes]
    blobs += [b for b in _history_blobs(repo, [e for e in repo.history(min(
        warn_bytes + 1, CANDIDATE_SIZE)) if e[2] > warn_bytes]) if (b.path, b.oid) not in in_index]
    for b in _with_commits(repo, blobs):
        yield _large_finding(repo, b, error_bytes)


def _changed(repo: GitRepo) -> Optional[set]:
    """The tracked paths whose work-tree file may differ from the index (git compares
    their stat data, in C; a file it cannot vouch for is listed): only those can be
    larger than their blob. None: git could not say, so every file is looked at."""
    limit = repo.limit()   # a scoped run: only its changed paths can matter
    if limit is None:
        return set()
    res = repo.git("diff-files", "--name-only", "-z", "--relative", *limit)
    return set(res.stdout.split("\0")) if res.returncode == 0 else None


def _worktree_size(job: Job, path: str) -> int:
    try:
        st = os.lstat(os.path.join(job.repo, path))
    except OSError:
        return 0
    return st.st_size if (st.st_mode & 0o170000) == 0o100000 else 0


def _large_finding(repo: GitRepo, b: Blob, error_bytes: int) -> Finding:
    severe = b.size > error_bytes
    where = "is tracked by git" if b.where == "index" else "is in the repository's history"
    limit = ("over GitHub's 100 MB limit: pushes are rejected" if severe
             else "over git's 50 MB warning size")
    msg = f"{b.path} ({human(b.size)}) {where}, {limit}"
    if b.commit:
        msg += f"; added in commit {b.commit[:12]}"
    data: dict = {"path": b.path, "size": b.size, "where": b.where}
    if b.where == "history":
        data["commit"] = b.commit
    return Finding(msg, location=Location(b.path), fix=_fix(b),
                   commands=_commands(repo, b, ignore=_ignore_line(b.path)), data=data,
                   options=(FixOption((run("in the repo", *_commands(
                       repo, b, ignore=_ignore_line(b.path))),)),),
                   severity=Severity.ERROR if severe else Severity.WARNING)
