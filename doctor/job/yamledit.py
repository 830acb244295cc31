"""Line-level edits of one key in a YAML config, for `doctor fix`.

Line-level, not a round-trip YAML library: the edit touches the key's own line and
nothing else, so comments, quoting, anchors and layout stay as written (and no new
dependency). Every edit is proven before it is offered: the file with the edit applied
is loaded again, and it must equal the file as loaded with only that key removed (or
set). A key written in a merged template (`<<: *loader`), a value over several lines,
a list item's first key, or a file that does not load: no edit.
"""
from __future__ import annotations

import copy
import re
from typing import Any, Optional

import yaml

from doctor import edits
from doctor.model import Edit

_MISSING = object()
_SCALAR = r"""(?:"[^"\n]*"|'[^'\n]*'|[^\s,{}\[\]#'"][^,{}\[\]#\n]*?)"""


# libyaml where installed: the file is loaded twice per edit, and the pure-Python loader
# took 5 s a load of a 0.6 MB config (the check timed out and its finding was lost).
# Both loads use the same loader, and no line numbers are needed here.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_LOADER)  # noqa: S506 - a SafeLoader
    except (yaml.YAMLError, ValueError, RecursionError):
        return _MISSING


def _as_loaded(job: Any, rel: str, lines: list) -> Any:
    """The file as the run loaded it for every check (a config is not loaded again),
    else as `lines` load; the edited lines are loaded here, and must come out equal."""
    for config in getattr(job, "config_files", ()):
        if config.rel == rel:
            return config.data
    return _load("".join(lines))


def _at(data: Any, path: tuple) -> Any:
    for p in path:
        try:
            data = data[p]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return data


def _key(key: str) -> str:
    k = re.escape(key)
    return rf"""(?:{k}|"{k}"|'{k}')"""


def _proven(job: Any, rel: str, lines: list, line: int, new: str, path: tuple, key: str,
            value: Any, title: str, unsafe: bool) -> Optional[Edit]:
    """The edit of `line` to `new` when the file then loads as before with only
    path.key removed (value _MISSING) or set to `value`."""
    before = _as_loaded(job, rel, lines)
    want = copy.deepcopy(before)
    target = _at(want, path)
    if not isinstance(target, dict) or key not in target:
        return None
    if value is _MISSING:
        del target[key]
    else:
        target[key] = value
    after = _load("".join(lines[:line - 1]) + new + "".join(lines[line:]))
    if after is _MISSING or after != want:
        return None
    if new:
        return edits.replace_line(job, rel, line, new.rstrip("\r\n"), title, unsafe)
    return edits.delete_lines(job, rel, line, line, title, unsafe)


def delete_key(job: Any, rel: str, line: int, path: tuple, key: str, title: str,
               unsafe: bool = False) -> Optional[Edit]:
    """Remove `key` (written at `line`) from the mapping at `path`: the whole line in block
    style, the `key: value` item in a one-line flow mapping (`{a: 0, key: 2}`)."""
    lines = edits.read_lines(job, rel)
    if lines is None or not 1 <= line <= len(lines):
        return None
    text = lines[line - 1]
    k = _key(key)
    if re.match(rf"\s*{k}\s*:", text):
        return _proven(job, rel, lines, line, "", path, key, _MISSING, title, unsafe)
    for pattern, keep in ((rf",\s*{k}\s*:\s*{_SCALAR}\s*(?=[,}}])", ""),
                          (rf"(\{{\s*){k}\s*:\s*{_SCALAR}\s*,\s*", r"\1")):
        new, n = re.subn(pattern, keep, text, count=2)
        if n == 1:
            return _proven(job, rel, lines, line, new, path, key, _MISSING, title, unsafe)
    return None


def set_value(job: Any, rel: str, line: int, path: tuple, key: str, value: Any, text: str,
              title: str, unsafe: bool = False) -> Optional[Edit]:
    """`key: old` at `line` becomes `key: text` (the scalar only; a comment after it and
    the rest of the line stay), when that loads as `value`."""
    lines = edits.read_lines(job, rel)
    if lines is None or not 1 <= line <= len(lines):
        return None
    new, n = re.subn(rf"((?:^\s*(?:-\s+)?|[{{,]\s*){_key(key)}\s*:\s*){_SCALAR}(?=\s*(?:[,}}#]|$))",
                     lambda m: m.group(1) + text, lines[line - 1].rstrip("\r\n"), count=2)
    if n != 1:
        return None
    brk = lines[line - 1][len(lines[line - 1].rstrip("\r\n")):]
    return _proven(job, rel, lines, line, new + brk, path, key, value, title, unsafe)
