"""Lines for the repo's .gitignore that keep core dumps out of git without hiding code.

`doctor fix` appends them (doctor/edits.append_lines); nothing here writes. A choice of
lines is taken only when `git ls-files --ignored` shows that it hides no tracked file
but the cores it is for: `core` alone would hide a `bin/core` script, and is always
paired with `!core/`, which keeps packages named `core` (`src/pkg/core/`) visible.
"""
from __future__ import annotations

import re
from typing import Any, Optional, Sequence

from doctor import edits
from doctor.model import Edit, Skip
from doctor.scanners.git import repo_for

GITIGNORE = ".gitignore"


def escape(path: str) -> Optional[str]:
    """`path` as a .gitignore pattern that matches only itself, anchored at the .gitignore's
    directory; None for a name a .gitignore line cannot hold (a line break)."""
    if "\n" in path or "\r" in path:
        return None
    out = re.sub(r"([\\*?\[])", r"\\\1", path)
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return "/" + out


def core_lines(path: str) -> list:
    """Choices of lines (most general first) that ignore the core dump at `path`
    (relative to the repo): its kind of name anywhere, else the file itself."""
    name = path.rpartition("/")[2]
    exact = escape(path)
    choices = [[exact]] if exact else []
    if name == "core":
        return [["core", "!core/"]] + choices
    if re.fullmatch(r"core\.\d+", name):
        return [["core.[0-9]*"]] + choices
    if re.fullmatch(r"vgcore\.\d+", name):
        return [["vgcore.[0-9]*"]] + choices
    return choices


def hides(job: Any, lines: Sequence[str], allowed: Sequence[str] = ()) -> Optional[list]:
    """Tracked files (repo-relative) other than `allowed` that these lines, in the repo's
    top .gitignore, would ignore; None when git cannot tell."""
    try:
        prefix = repo_for(job).prefix
    except Skip:
        return None
    args = []
    for line in lines:
        neg, body = ("!", line[1:]) if line.startswith("!") else ("", line)
        if "/" in body.rstrip("/"):  # anchored: `-x` anchors at the top level
            body = "/" + prefix + body.lstrip("/")
        args += ["-x", neg + body]
    res = job.git("ls-files", "-z", "--cached", "--ignored", *args)
    if res.returncode != 0:
        return None
    return [p for p in res.stdout.split("\0") if p and p not in allowed]


def safe_lines(job: Any, choices: Sequence[Sequence[str]],
               allowed: Sequence[str] = ()) -> Optional[list]:
    """The first choice of lines that hides no tracked file but `allowed`; None if none."""
    return next((list(c) for c in choices if hides(job, c, allowed) == []), None)


def ignore_edit(job: Any, path: str, lines: Sequence[str], title: str) -> Optional[Edit]:
    """The edit appending `lines` to the .gitignore at the repo root (created when
    missing). None when git already ignores `path`, or when the lines are all there
    already (something else then keeps them from working)."""
    res = job.git("check-ignore", "-q", "--no-index", "--", path)
    if res.returncode != 1:  # 0: ignored already; 128: git cannot tell
        return None
    present = {ln.rstrip("\r\n") for ln in (edits.read_lines(job, GITIGNORE) or [])}
    missing = [ln for ln in lines if ln not in present]
    if not missing:
        return None
    return edits.append_lines(job, GITIGNORE, missing, title)


NUMERIC = set("pPiIugstdc")  # core_pattern(5) specifiers that expand to a number


def pattern_lines(pattern: str, uses_pid: Optional[bool], workdir: str) -> list:
    """Choices of lines (most general first) that ignore the cores the kernel's
    core_pattern writes into `workdir` (relative to the repo, "." for its root). A `%e`
    (executable) or `%h` (host) expands to anything, so a glob with nothing but those is
    not offered: `core.*` would hide `core.py`."""
    glob, numeric = [], False
    parts = re.split(r"(%.)", pattern.rsplit("/", 1)[-1])
    for i, part in enumerate(parts):
        if i % 2 == 0:
            glob.append(re.sub(r"([\\*?\[])", r"\\\1", part))
        elif part == "%%":
            glob.append("%")
        elif part[1] in NUMERIC:
            glob.append("[0-9]*")
            numeric = True
        else:
            glob.append("*")
    if uses_pid and "%p" not in pattern:
        glob.append(".[0-9]*")
        numeric = True
    name = "".join(glob)
    literal = not re.search(r"(?<!\\)[*?\[]", name)
    if not name or name.startswith(("#", "!")) or not (literal or numeric):
        return []
    where = "" if workdir in ("", ".") else workdir.strip("/") + "/"
    anchored = "/" + re.sub(r"([\\*?\[])", r"\\\1", where) + name
    if literal:
        return [[name, f"!{name}/"], [anchored, f"!{anchored}/"]]
    return [[name], [anchored]]
