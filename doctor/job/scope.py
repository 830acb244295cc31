"""What a scoped run looks at: `--changed-since REV` and file arguments (CI, pre-commit).

A full run reads every job script, config and Python source of the repo. A scoped run
starts from the files that changed and adds what ties them to a job, by name:

- the job scripts and configs that name a changed config or script (its file name, or
  its stem as a word: `--config-name exp_5`, `- data: data_72`, `source env.sh`), and
  those that name them in turn: a changed Hydra default reaches the experiment configs
  that list it, and the job scripts that run those;
- the job scripts that run a changed module (`-m pkg.train`, `pkg/train.py`).

What a step names is read by path, as in a full run: a changed script's configs, their
Hydra defaults, its entry module, the scripts it sources. The Python sources that the
code checks scan are the changed ones, the entry modules of the job scripts in scope,
and the repo modules those import (doctor/job/sources.py). The git checks look at the
changed paths, and with --changed-since at the blobs of the commits since the merge base.

Only scans are scoped. A lookup by name (the one file a relative `--config` means, a
sourced script, git's tracked names) and a judgement about the whole repo (does any
DataLoader call keep a config's value out, is a variable read anywhere, which Hydra
option is selected, does the repo have one job script) ask the whole repo, only when
there is something to judge: a scoped run never reports what a full run would not.

A change to the settings (doctor.yaml, the root pyproject.toml, the --settings file),
or to any .gitignore, makes the run a full one: every check may read them.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterable, Optional

from doctor import fs
from doctor.errors import InputError
from doctor.scanners.git import LS_FILES_OTHERS, GitError, run_git, start_early

# a change to one of these makes the run full (the settings, the package's layout, what
# hides files from git: any .gitignore), as does one to the settings file the run reads
FULL_RUN_NAMES = ("doctor.yaml", "pyproject.toml", ".gitignore")
LINK_DEPTH = 3              # default -> experiment config -> job script
MAX_LINKER_BYTES = 1 << 20  # a job script or config bigger than this is data
CONFIG_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Scope:
    """`changed`: repo-relative paths of the changed files that exist. `base`: the merge
    base of --changed-since (its commits' blobs are what the git checks scan), None
    for file arguments. `full`: why the run is a full one after all (None: scoped)."""
    changed: frozenset
    label: str
    base: Optional[str] = None
    full: Optional[str] = None

    def settings_changed(self, rel: str) -> "Scope":
        """This scope, full when `rel` (the settings file the run reads) changed."""
        if self.full is None and rel in self.changed:
            return replace(self, full=f"{rel} changed")
        return self

    def to_dict(self) -> dict:
        out: dict = {"given": self.label, "changed": len(self.changed)}
        if self.full:
            out["full_run"] = self.full
        return out


def _git(repo: Path, *args: str) -> str:
    try:
        res = run_git(str(repo), *args, timeout=60)
    except GitError as exc:   # a filter git cannot be told to leave alone (git.filters_off)
        raise InputError(f"--changed-since: {exc}") from None
    if res.returncode != 0:
        said = (res.stderr.strip().splitlines() or ["git failed"])[-1]
        raise InputError(f"git {args[0]}: {said.removeprefix('fatal: ')}")
    return res.stdout


def _diff(base: str) -> tuple:
    return ("diff", "--name-only", "-z", "--no-renames", "--relative", base, "--")


def merge_base(repo: Path, rev: str) -> str:
    """The merge base of REV and HEAD; an InputError when REV or the repo is not one."""
    if rev.startswith("-"):
        raise InputError(f"--changed-since: {rev!r} is not a revision")
    res = run_git(str(repo), "rev-parse", "--is-inside-work-tree", timeout=10)
    if res.returncode != 0 and "not a git repository" not in res.stderr:   # git refuses it
        said = (res.stderr.strip().splitlines() or ["timed out"])[0]   # (dubious ownership)
        raise InputError(f"--changed-since: git rev-parse: {said.removeprefix('fatal: ')}")
    if res.returncode != 0 or res.stdout.strip() != "true":
        raise InputError(f"--changed-since: {repo} is not inside a git work tree")
    res = run_git(str(repo), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}",
                  timeout=10)
    if res.returncode != 0:
        raise InputError(f"--changed-since: {rev!r} is not a commit in {repo}")
    return _git(repo, "merge-base", res.stdout.strip(), "HEAD").strip()


def begin_changed_since(repo: Path, rev: str) -> tuple:
    """(merge base, drop): the two work-tree walks changed_since asks for, begun now so
    that git walks while the doctor imports (git.start_early); `drop` kills and reaps
    them if the run ends without asking."""
    base = merge_base(repo, rev)
    try:
        drops = [start_early(str(repo), *_diff(base)), start_early(str(repo), *LS_FILES_OTHERS)]
    except GitError as exc:   # (as in _git)
        raise InputError(f"--changed-since: {exc}") from None
    return base, lambda: [drop() for drop in drops]


def changed_since(repo: Path, rev: str, base: Optional[str] = None) -> Scope:
    """The files changed since the merge base of REV and HEAD (`base`, when
    begin_changed_since found it and began the walks): its commits, the index and the
    work tree (tracked files), plus untracked files that are not ignored. git compares
    the work tree with no filter driver, submodule or diff driver (git.git_argv)."""
    drop = None
    if base is None:   # both walk the work tree (a stat per file, a readdir per directory)
        base, drop = begin_changed_since(repo, rev)
    try:
        names = _git(repo, *_diff(base)).split("\0") + _git(repo, *LS_FILES_OTHERS).split("\0")
    finally:
        if drop is not None:
            drop()   # (what a refused diff left running)
    return _scope(repo, (n for n in names if n), f"--changed-since {rev}", base)


def from_files(repo: Path, files: Iterable[Path]) -> Scope:
    """The files named on the command line (a pre-commit hook passes the staged ones)."""
    rels = []
    top = fs.realpath(str(repo))
    for f in files:
        p = Path(os.path.expanduser(str(f)))
        p = p if p.is_absolute() else fs.cwd() / p
        # the directory resolved, not the file: a link in the repo is named by its place
        real = os.path.join(fs.realpath(str(p.parent)), p.name)
        if not fs.inside(real, top):   # (the repo itself: a directory, refused below)
            raise InputError(f"{f}: not inside the repository {repo}")
        if os.path.isdir(real):
            raise InputError(f"{f}: a directory; name files (or use --changed-since)")
        if not os.path.lexists(p):
            raise InputError(f"{f}: no such file")
        rels.append(real[len(top.rstrip("/")) + 1:])
    return _scope(repo, rels, f"{len(rels)} file argument{'s' * (len(rels) != 1)}", None)


def _scope(repo: Path, rels: Iterable[str], label: str, base: Optional[str]) -> Scope:
    changed = frozenset(r for r in rels if os.path.isfile(os.path.join(repo, r)))
    full = next((f"{r} changed" for r in sorted(changed)
                 if r in FULL_RUN_NAMES or r.endswith("/.gitignore")), None)
    return Scope(changed, label, base, full)


# ---- the closure ------------------------------------------------------------
def scoped_rels(job: Any, every: list, may_link: Any) -> list:
    """The repo files a scoped run looks at: the changed ones, and the job scripts and
    configs that name them (LINK_DEPTH rounds). `every`: all the repo's files, as
    job.every_rel_set() holds them; `may_link(rel)`: a name a job script may have."""
    listed = job.every_rel_set()
    scope = {r for r in job.scope.changed if r in listed or os.path.isfile(job.repo / r)}
    linkers: dict = {r: None for r in every if not r.endswith(".py")   # most of a repo
                     and (r.endswith(CONFIG_SUFFIXES) or may_link(r)) and r not in scope}
    frontier = set(scope)
    for _ in range(LINK_DEPTH):
        words = sorted({w for r in frontier for w in _names_of(r)})
        if not words or not linkers:
            break
        needles = [w.encode() for w in words]
        names = re.compile(rb"(?<![\w.])(?:" + b"|".join(re.escape(w) for w in needles)
                           + rb")(?![\w])")
        frontier = set()
        for r in list(linkers):
            text = linkers[r]
            if text is None:
                text = linkers[r] = fs.read_bytes(job.repo / r, job.unreadable,
                                                  MAX_LINKER_BYTES) or b""
            # `in` first (memchr speed): the regex's lookbehind defeats its own prefix scan
            if any(w in text for w in needles) and names.search(text):
                frontier.add(r)
                del linkers[r]
        scope |= frontier
    return [r for r in every if r in scope] + sorted(scope - listed)


def _names_of(rel: str) -> list:
    """The words by which a job script or config names this file."""
    stem, _, suffix = rel.rpartition("/")[2].rpartition(".")
    if not stem:
        stem, suffix = suffix, ""
    if suffix == "py":   # `-m pkg.train`, `pkg/train.py`: the module, not a bare `train`
        mod = rel[:-3].removeprefix("src/").removesuffix("/__main__").removesuffix(
            "/__init__")
        return [mod.replace("/", "."), rel.removeprefix("src/")]
    return [rel.rpartition("/")[2], stem] if len(stem) > 1 else [rel.rpartition("/")[2]]
