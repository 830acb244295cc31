"""Building the edits a check attaches to a finding (`doctor fix`, docs/fix.md).

Every builder reads the file as it is now and returns an `Edit` (doctor/model.py)
whose `old` is the text it replaces, or None when the file cannot be read or the
line is not there. Edits are whole lines: a replaced line keeps its own line break
(CRLF stays CRLF), an inserted line takes its neighbour's. Bytes that are not valid
UTF-8 survive (surrogateescape), so an edit never re-encodes a file.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional, Sequence

from doctor import fs
from doctor.model import Edit, FixOption, add, edit_steps, run

HEADER_DIRECTIVE = re.compile(r"#(SBATCH|PBS|BSUB)\b")


def decode(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def split_lines(text: str) -> list:
    """Lines with their line breaks; only \\n ends a line (as for bash)."""
    return [p for p in re.split(r"(?<=\n)", text) if p]


def absolute(repo: Any, path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else Path(repo) / p


def read_lines(job: Any, path: str) -> Optional[list]:
    """The file's lines now, or None when it cannot be read."""
    data = fs.read_bytes(absolute(job.repo, path), getattr(job, "unreadable", None))
    return None if data is None else split_lines(decode(data))


def line_break(lines: Sequence[str], index: int = 0) -> str:
    """The line break of line `index` (0-based), else of the file's first line, else \\n."""
    for line in (lines[index] if 0 <= index < len(lines) else "", *lines[:1]):
        if line.endswith("\r\n"):
            return "\r\n"
        if line.endswith("\n"):
            return "\n"
    return "\n"


def replace_line(job: Any, path: str, line: int, text: str, title: str,
                 unsafe: bool = False) -> Optional[Edit]:
    """Line `line` becomes `text` (given without a line break; the line keeps its own)."""
    lines = read_lines(job, path)
    if lines is None or not 1 <= line <= len(lines):
        return None
    old = lines[line - 1]
    body = old.rstrip("\r\n")
    new = text + old[len(body):]
    if new == old:
        return None
    return Edit(path, line, line, old, new, title, _applicability(unsafe))


def delete_lines(job: Any, path: str, start: int, end: int, title: str,
                 unsafe: bool = False) -> Optional[Edit]:
    lines = read_lines(job, path)
    if lines is None or not 1 <= start <= end <= len(lines):
        return None
    return Edit(path, start, end, "".join(lines[start - 1:end]), "", title,
                _applicability(unsafe))


def unset_fix(job: Any, loc: Any, name: str) -> tuple:
    """The fix (FixOption) that unsets variable `name`, set at `loc`: that line removed
    where it is just `[export] NAME=value`, else `unset NAME` after it; set in the
    login environment (no line): `unset NAME` in the shell that submits the job."""
    if loc is None or not loc.line:
        return (FixOption((run("in the shell you submit the job from", f"unset {name}"),)),)
    lines = read_lines(job, loc.path) or []
    text = lines[loc.line - 1] if loc.line <= len(lines) else ""
    if re.fullmatch(r"\s*(export\s+)?{}=\S*\s*".format(re.escape(name)), text):
        gone = delete_lines(job, loc.path, loc.line, loc.line, f"remove {name}")
        return (FixOption(edit_steps((gone,))),) if gone else ()
    return (FixOption((add(loc.path, f"unset {name}", where=f"after line {loc.line}"),)),)


def insert_lines(job: Any, path: str, before: int, texts: Sequence[str], title: str,
                 unsafe: bool = False) -> Optional[Edit]:
    """New lines (without line breaks) before line `before`; len(lines) + 1 is the end."""
    lines = read_lines(job, path)
    if lines is None or not 1 <= before <= len(lines) + 1:
        return None
    brk = line_break(lines, before - 1 if before <= len(lines) else before - 2)
    new = "".join(t + brk for t in texts)
    if before == len(lines) + 1 and lines and not lines[-1].endswith("\n"):
        # the last line has no break: it gets one, and the edit replaces it
        return Edit(path, before - 1, before - 1, lines[-1], lines[-1] + brk + new, title,
                    _applicability(unsafe))
    return Edit(path, before, before - 1, "", new, title, _applicability(unsafe))


def append_lines(job: Any, path: str, texts: Sequence[str], title: str,
                 unsafe: bool = False) -> Optional[Edit]:
    """Lines at the end of the file; a file that does not exist is created with them."""
    target = absolute(job.repo, path)
    if not fs.stat(target, follow=False) and not target.is_symlink():
        return Edit(path, 1, 0, "", "".join(t + "\n" for t in texts), title,
                    _applicability(unsafe))
    lines = read_lines(job, path)
    if lines is None:
        return None
    return insert_lines(job, path, len(lines) + 1, texts, title, unsafe)


def header_end(lines: Sequence[str]) -> int:
    """The line after which a job script's new lines go: the last #SBATCH (or #PBS,
    #BSUB) line of the leading comment block, as sbatch reads it; else the shebang;
    else 0 (the top)."""
    last = 1 if lines and lines[0].startswith("#!") else 0
    for i, line in enumerate(lines, 1):
        s = line.strip()
        if s and not s.startswith("#"):
            break
        if HEADER_DIRECTIVE.match(s):
            last = i
    return last


def insert_after_header(job: Any, path: str, texts: Sequence[str], title: str,
                        unsafe: bool = False) -> Optional[Edit]:
    """Lines after the job script's #SBATCH header: they run before any command."""
    lines = read_lines(job, path)
    if lines is None:
        return None
    return insert_lines(job, path, header_end(lines) + 1, texts, title, unsafe)


def replace_whole(job: Any, path: str, new_text: str, title: str,
                  unsafe: bool = False) -> Optional[Edit]:
    """Every line of the file: for changes that touch every line (CRLF to LF)."""
    lines = read_lines(job, path)
    if lines is None:
        return None
    old = "".join(lines)
    if old == new_text:
        return None
    return Edit(path, 1, len(lines), old, new_text, title, _applicability(unsafe))


def _applicability(unsafe: bool) -> str:
    return "unsafe" if unsafe else "safe"


def owned(job: Any, path: Optional[str]) -> bool:
    """Whether `doctor fix` may edit this file: the user's own, inside the repo (not an
    installed package), or a job script named by --sbatch. Not /etc, not a module file."""
    if not path:
        return False
    if Path(path).is_absolute():
        real = fs.realpath(Path(path))
        return any(fs.realpath(Path(s.path)) == real for s in getattr(job, "scripts", ()))
    return not {"site-packages", "dist-packages"} & set(Path(path).parts)


def shell_word(text: str, start: int) -> Optional[tuple]:
    """The literal shell word at text[start:]: (end, value, at), `value` without its
    quotes and `at[k]` the index in `text` of value[k] (at[-1] is `end`). None when the
    word holds what is not plain text ($, `, $'...', an unclosed quote)."""
    value, at, i, n = [], [], start, len(text)
    while i < n and text[i] not in " \t\r\n;&|<>()":
        c = text[i]
        if c in "$`":
            return None
        if c == "\\":
            if i + 1 >= n or text[i + 1] == "\n":
                return None
            value.append(text[i + 1])
            at.append(i + 1)
            i += 2
        elif c == "'":
            close = text.find("'", i + 1)
            if close < 0:
                return None
            value.extend(text[i + 1:close])
            at.extend(range(i + 1, close))
            i = close + 1
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                if text[i] in "$`":
                    return None
                if text[i] == "\\" and i + 1 < n and text[i + 1] in '"\\$`':
                    i += 1
                value.append(text[i])
                at.append(i)
                i += 1
            if i >= n:
                return None
            i += 1
        else:
            value.append(c)
            at.append(i)
            i += 1
    return i, "".join(value), at + [i]


def exports_reach_step(job: Any, script: Any) -> bool:
    """Whether a variable exported in the job script (after the #SBATCH lines) reaches
    its training step: not when sbatch or srun passes --export=NONE or a bare list, nor
    through a container started with --cleanenv / --containall."""
    if script is None:
        return False
    d = script.get("export")
    exports = [d.value] if d is not None else []
    for s in [script, *getattr(job.step(script), "scripts", ())]:
        for cmd in getattr(s, "commands", ()):
            argv = cmd.argv
            for i, w in enumerate(argv):
                if w.startswith("--export="):
                    exports.append(w.partition("=")[2])
                elif w == "--export" and i + 1 < len(argv):
                    exports.append(argv[i + 1])
                elif w.rsplit("/", 1)[-1] in ("singularity", "apptainer") and \
                        argv[i + 1:i + 2] in (["exec"], ["run"], ["shell"]):
                    # any option-looking word after `exec` counts: no edit rather than a wrong one
                    opts = [a for a in argv[i + 2:] if a.startswith("-")]
                    if {"--cleanenv", "-e", "--containall", "-C"} & set(opts):
                        return False
    return all(e.split(",")[0].strip().upper() == "ALL" for e in exports)
