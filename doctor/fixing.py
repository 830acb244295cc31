"""`doctor fix`: apply the edits that findings carry (docs/fix.md).

A finding's edits go in together or not at all. An edit applies only where the
file still reads what the check read (`Edit.old`); one that overlaps an edit
already taken waits for the next `doctor fix`. Files are replaced whole, each
once (doctor/outputs.replace_file), and only after the file is read again and
found unchanged. Nothing else is touched: not the git index, not other lines.

Only regular files whose real path is inside the repo are edited: a repo can commit
`job.sbatch` or `.gitignore` as a symlink to anyone's file, and a fix that followed it
would rewrite that file. A symlink to another file of the repo is followed, and the
edit (and the preview) names the file it points to, by its own repo path: that is the
file `git apply` patches. An edit of a file outside the repo, or inside its git directory
(a committed `.gitignore -> .git/config`), is skipped with its reason.
"""
from __future__ import annotations

import difflib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from doctor import fs
from doctor.edits import absolute, decode, encode, split_lines
from doctor.errors import InputError
from doctor.model import Edit, Status
from doctor.outputs import replace_file


@dataclass
class FilePlan:
    path: str  # as the edits name it: repo-relative, or absolute
    target: str  # the real path written: inside the repo
    before: Optional[bytes]  # None: the file does not exist yet
    lines: list
    top: str  # the repo's real path
    taken: list = field(default_factory=list)  # (order, Edit)

    @property
    def rel(self) -> str:
        """The file's own path in the repo (a symlink's target's): what the preview names."""
        return os.path.relpath(self.target, self.top)

    def after(self) -> bytes:
        out, pos = [], 0  # pos: lines of `before` already copied
        for _, e in sorted(self.taken, key=lambda t: (t[1].start_line,
                                                      t[1].end_line >= t[1].start_line, t[0])):
            out.extend(self.lines[pos:e.start_line - 1])
            out.append(e.new)
            pos = max(pos, e.end_line)
        out.extend(self.lines[pos:])
        return encode("".join(out))

    def overlaps(self, edit: Edit) -> bool:
        for _, e in self.taken:
            if edit.end_line >= edit.start_line and e.end_line >= e.start_line:
                if edit.start_line <= e.end_line and e.start_line <= edit.end_line:
                    return True
            elif edit.end_line >= edit.start_line:  # e inserts before e.start_line
                if edit.start_line < e.start_line <= edit.end_line:
                    return True
            elif e.end_line >= e.start_line:  # edit inserts
                if e.start_line < edit.start_line <= e.end_line:
                    return True
        return False


@dataclass
class Plan:
    files: dict = field(default_factory=dict)  # path -> FilePlan
    fixed: list = field(default_factory=list)  # (check id, finding) whose edits are taken
    skipped: list = field(default_factory=list)  # (check id, finding, why)
    unsafe_left: int = 0  # findings whose edits need --unsafe
    git_dirs: Optional[list] = None  # the real paths of the repo's git dirs, once asked

    def changed(self) -> list:
        """The files the taken edits change, each once (two names may lead to one file)."""
        out = {id(f): f for f in self.files.values()
               if f.taken and f.after() != (f.before or b"")}
        return list(out.values())


def plan(repo: Path, results: list, unsafe: bool = False, log: object = None) -> Plan:
    """Which edits of the failing results' findings apply to the files as they are now."""
    p = Plan()
    order = 0
    for r in results:
        if r.status is not Status.FAIL:
            continue
        for f in r.findings:
            if not f.edits:
                continue
            if not unsafe and any(e.applicability != "safe" for e in f.edits):
                p.unsafe_left += 1
                continue
            why = _why_not(p, repo, f.edits, log)
            if why:
                p.skipped.append((r.id, f, why))
                continue
            for e in f.edits:
                fp = p.files[e.path]
                if not any(t.start_line == e.start_line and t.end_line == e.end_line
                           and t.new == e.new for _, t in fp.taken):  # one edit, two findings
                    order += 1
                    fp.taken.append((order, e))
            p.fixed.append((r.id, f))
    return p


def _why_not(p: Plan, repo: Path, edits: tuple, log: object) -> str:
    for e in edits:
        fp = p.files.get(e.path) or _load(p, repo, e.path, log)
        if isinstance(fp, str):
            return fp
        if e.start_line == 1 and e.end_line == 0 and fp.before is None:
            continue  # a new file
        if fp.before is None:
            return f"{e.path} does not exist"
        if "".join(fp.lines[e.start_line - 1:e.end_line]) != e.old or \
                e.end_line > len(fp.lines) or e.start_line > len(fp.lines) + 1:
            return f"{e.path}:{e.start_line} no longer reads as the check read it"
        if any(t.start_line == e.start_line and t.end_line == e.end_line and t.new == e.new
               for _, t in fp.taken):
            continue
        if fp.overlaps(e):
            return f"{e.path}:{e.start_line} overlaps another fix (run `doctor fix` again)"
    return ""


def _git_dirs(repo: Path) -> list:
    """The real paths of the repo's git directory and common directory (a worktree's,
    a --separate-git-dir's may lie in the work tree under another name than .git)."""
    from doctor.scanners.git import run_git
    res = run_git(str(repo), "rev-parse", "--path-format=absolute", "--git-dir",
                  "--git-common-dir", timeout=10)
    return [fs.realpath(d) for d in res.stdout.splitlines() if d] \
        if res.returncode == 0 else []


def _load(p: Plan, repo: Path, path: str, log: object) -> "FilePlan | str":
    """The file an edit names, read now; else why it is not edited."""
    top = fs.realpath(repo)
    target = absolute(repo, path)
    real = fs.realpath(target)
    named = os.path.normpath(target)
    if fs.inside(named, os.path.normpath(repo)):
        named = os.path.relpath(named, repo)
    if not fs.inside(real, top):  # a symlink (of the file or a directory above) leaves the repo
        return (f"{named} leads outside the repository (to {real}): `doctor fix` edits "
                "only files inside it")
    if p.git_dirs is None:
        p.git_dirs = _git_dirs(repo)
    if ".git" in os.path.relpath(real, top).split(os.sep) or \
            any(fs.inside(real, d) for d in p.git_dirs):
        # a committed `.gitignore -> .git/config`: the edit would break the repo's git
        return (f"{named} leads into the repository's git directory (to {real}): "
                "`doctor fix` edits only work-tree files")
    same = next((f for f in p.files.values() if f.target == real), None)
    if same is not None:  # a symlink in the repo and the file it names: one file
        p.files[path] = same
        return same
    st = fs.stat(real)
    if st is None:
        if os.path.lexists(target) and not os.path.lexists(real):
            return f"{path} cannot be read"  # a dangling symlink: not a new file to create
        fp = FilePlan(path, real, None, [], top)
    elif not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file"
    else:
        data = fs.read_bytes(real, log)  # type: ignore[arg-type]
        if data is None:
            return f"{path} cannot be read"
        fp = FilePlan(path, real, data, split_lines(decode(data)), top)
    p.files[path] = fp
    return fp


def unified_diff(fp: FilePlan) -> str:
    """The file's change as a unified diff (`git apply` and `patch -p1` take it)."""
    old = fp.lines
    new = split_lines(decode(fp.after()))
    src = "/dev/null" if fp.before is None else f"a/{fp.rel}"
    out = []
    for line in difflib.unified_diff(old, new, src, f"b/{fp.rel}", n=3):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def write(fp: FilePlan) -> None:
    """Replace the file with the fixed text, unless it changed since it was read."""
    def unchanged() -> bool:
        if fs.realpath(fp.target) != fp.target:  # a directory above became a link
            return False
        now = fs.read_bytes(fp.target) if os.path.lexists(fp.target) else None
        return now == fp.before

    if not unchanged():
        raise InputError(f"{fp.path} changed since it was read; nothing written to it "
                         "(run `doctor fix` again)")
    replace_file(fp.path, fp.target, fp.after(), fs.stat(fp.target), unchanged)
