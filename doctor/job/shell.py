"""Just enough POSIX shell to read job scripts: words, commands, expansion.

Words keep their quotes (`raw`) so that expansion knows what single quotes
protect. Expansion is symbolic: a variable whose value is only known on the
compute node (`$SLURM_JOB_ID`, `$(hostname)`) stays in the text as written
and is recorded as a per-job / per-node / ... part of the value. Anything the
doctor cannot know (an unset variable, `$(some_command)`) is reported as
unresolved, never guessed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Optional

# What a variable or command substitution says about the value it is in.
RUNTIME_VARS = {
    "SLURM_JOB_ID": "job", "SLURM_JOBID": "job", "SLURM_ARRAY_JOB_ID": "job",
    "SLURM_ARRAY_TASK_ID": "job",
    "SLURMD_NODENAME": "node", "SLURM_NODEID": "node", "SLURM_TOPOLOGY_ADDR": "node",
    "HOSTNAME": "node",
    "SLURM_PROCID": "rank", "SLURM_LOCALID": "rank", "LOCAL_RANK": "rank", "RANK": "rank",
}
USER_VARS = {"USER": "user", "LOGNAME": "user", "HOME": "user"}
COMMAND_KINDS = {"hostname": "node", "hostname -s": "node", "hostname -f": "node",
                 "uname -n": "node", "whoami": "user", "id -un": "user", "id -u": "user",
                 "mktemp -d": "tmp", "mktemp": "tmp"}
PATTERN_KINDS = {"%j": "job", "%A": "job", "%a": "job", "%N": "node", "%n": "node",
                 "%t": "rank", "%u": "user"}


@dataclass
class Expanded:
    text: str
    parts: set = field(default_factory=set)        # job, node, rank, user, tmp
    unresolved: list = field(default_factory=list)  # what could not be known

    @property
    def resolved(self) -> bool:
        return not self.unresolved


def split_commands(text: str, first_line: int = 1) -> list:
    """[(line, [raw words])] for each simple command, in order.

    Backslash-newline joins lines; `;`, `&&`, `||`, `|`, `&` and newlines
    separate commands; `#` at the start of a word starts a comment; the body of
    a here-document (`<<EOF` ... `EOF`) is data, not commands. CRLF reads as LF.
    """
    text = text.replace("\r\n", "\n")
    heredocs: list = []  # (delimiter, strip leading tabs) still to skip at the next newline
    out: list = []
    words: list = []
    word = ""
    in_word = False
    line = first_line
    cmd_line = first_line
    i, n = 0, len(text)

    def end_word() -> None:
        nonlocal word, in_word
        if in_word:
            words.append(word)
        word, in_word = "", False

    def end_command() -> None:
        nonlocal words
        end_word()
        if words:
            out.append((cmd_line, words))
        words = []

    while i < n:
        c = text[i]
        if not words and not in_word and c not in " \t\n":
            cmd_line = line
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":
            i += 2
            line += 1
            continue
        if c == "\n":
            end_command()
            line += 1
            i += 1
            for delim, strip_tabs in heredocs:
                while i < n:
                    j = text.find("\n", i)
                    j = n if j < 0 else j
                    body_line = text[i:j]
                    line += 1
                    i = j + 1
                    if (body_line.lstrip("\t") if strip_tabs else body_line) == delim:
                        break
            heredocs = []
            continue
        if text.startswith("<<", i) and not text.startswith("<<<", i):
            k = i + 2
            strip_tabs = text.startswith("-", k)
            k += strip_tabs
            while k < n and text[k] in " \t":
                k += 1
            e = k
            while e < n and text[e] not in " \t\n;|&()<>":
                e = _scan_unit(text, e)
            if e > k:
                heredocs.append((unquote(text[k:e]), strip_tabs))
        if c in " \t":
            end_word()
            i += 1
            continue
        if c == "#" and not in_word:
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in ";|&()" and not (c == "&" and word.endswith((">", "<"))):
            end_command()
            i += 2 if text[i:i + 2] in ("&&", "||", ";;") else 1
            continue
        j = _scan_unit(text, i)
        unit = text[i:j]
        line += unit.count("\n")
        word += unit
        in_word = True
        i = j
    end_command()
    return out


def _scan_unit(text: str, i: int) -> int:
    """End of the quoted string / substitution / escaped char / char at i."""
    c = text[i]
    n = len(text)
    if c == "'":
        j = text.find("'", i + 1)
        return n if j < 0 else j + 1
    if c == '"':
        j = i + 1
        while j < n and text[j] != '"':
            if text[j] == "\\":
                j += 2
            elif text.startswith("$(", j) or text.startswith("${", j) or text[j] == "`":
                j = _scan_unit(text, j)
            else:
                j += 1
        return min(j + 1, n)
    if c == "\\":
        return min(i + 2, n)
    if c == "`":
        j = text.find("`", i + 1)
        return n if j < 0 else j + 1
    if text.startswith("$(", i) or text.startswith("${", i):
        opening, closing = text[i + 1], ")" if text[i + 1] == "(" else "}"
        depth, j = 0, i + 1
        while j < n:
            ch = text[j]
            if ch in "'\"" and closing == ")":
                j = _scan_unit(text, j)
                continue
            if ch == opening:
                depth += 1
            elif ch == closing:
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return n
    return i + 1


Lookup = Callable[[str], Optional[str]]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def unquote(raw: str) -> str:
    """The literal word with quotes removed and nothing expanded."""
    return expand(raw, lambda name: None, keep_unknown=True).text


def expand(raw: str, lookup: Lookup, keep_unknown: bool = True,
           in_job: bool = False) -> Expanded:
    """Expand one word. `lookup(name)` gives a known value or None.

    Runtime variables (RUNTIME_VARS) stay symbolic unless `in_job`, and mark
    their part; unknown variables stay as `$NAME` and are reported unresolved.
    """
    res = Expanded("")
    _expand_into(raw, lookup, res, quoted=False, in_job=in_job)
    for pat, kind in PATTERN_KINDS.items():
        if pat in res.text:
            res.parts.add(kind)
    return res


def _expand_into(raw: str, lookup: Lookup, res: Expanded, quoted: bool, in_job: bool) -> None:
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "'" and not quoted:
            j = raw.find("'", i + 1)
            j = n if j < 0 else j
            res.text += raw[i + 1:j]
            i = j + 1
        elif c == '"' and not quoted:
            j = _scan_unit(raw, i)
            inner = raw[i + 1:j - 1] if raw[j - 1:j] == '"' and j - 1 > i else raw[i + 1:j]
            _expand_into(inner, lookup, res, quoted=True, in_job=in_job)
            i = j
        elif c == "\\":
            nxt = raw[i + 1:i + 2]
            if quoted and nxt not in '$`"\\':
                res.text += "\\" + nxt
            else:
                res.text += nxt
            i += 2
        elif raw.startswith("$(", i) or c == "`":
            j = _scan_unit(raw, i)
            body = raw[i + 2:j - 1] if c == "$" else raw[i + 1:j - 1]
            _command_subst(body.strip(), raw[i:j], lookup, res, in_job)
            i = j
        elif raw.startswith("${", i):
            j = _scan_unit(raw, i)
            _param(raw[i + 2:j - 1], raw[i:j], lookup, res, in_job)
            i = j
        elif c == "$" and i + 1 < n and (m := _NAME.match(raw, i + 1)):
            _var(m.group(0), raw[i:m.end()], lookup, res, in_job)
            i = m.end()
        else:
            res.text += c
            i += 1


def _var(name: str, written: str, lookup: Lookup, res: Expanded, in_job: bool) -> None:
    kind = RUNTIME_VARS.get(name) or USER_VARS.get(name)
    if kind:
        res.parts.add(kind)
    value = lookup(name)
    if name in RUNTIME_VARS and not in_job:
        value = None  # on the login node these name the login node, not the job
    if value is not None:
        res.text += value
    else:
        res.text += written
        if name not in RUNTIME_VARS:
            res.unresolved.append(written)


def _param(body: str, written: str, lookup: Lookup, res: Expanded, in_job: bool) -> None:
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=+?])(.*))?$", body, re.S)
    if not m:
        res.text += written
        res.unresolved.append(written)
        return
    name, op, word = m.group(1), m.group(2), m.group(3) or ""
    word = re.sub(r'(?<!\\)"', "", word)   # ${A:-"x"} is x: bash removes those quotes
    if not op:
        _var(name, written, lookup, res, in_job)
        return
    kind = RUNTIME_VARS.get(name) or USER_VARS.get(name)
    value = None if (name in RUNTIME_VARS and not in_job) else lookup(name)
    if kind:
        res.parts.add(kind)
    use_word = value is None or (op.startswith(":") and value == "")
    if op.endswith(("-", "=")):
        if use_word and name in RUNTIME_VARS and not in_job:
            res.text += written  # set in the job: the default will not be used
        elif use_word:
            _expand_into(word, lookup, res, quoted=True, in_job=in_job)
        else:
            res.text += value or ""
    elif op.endswith("+"):
        if not use_word:
            _expand_into(word, lookup, res, quoted=True, in_job=in_job)
    else:  # ${A:?msg}
        if use_word:
            res.text += written
            res.unresolved.append(written)
        else:
            res.text += value or ""


def _command_subst(cmd: str, written: str, lookup: Lookup, res: Expanded, in_job: bool) -> None:
    kind = COMMAND_KINDS.get(" ".join(cmd.split()))
    if kind:
        res.parts.add(kind)
        if kind == "user" and lookup("USER") is not None:
            res.text += lookup("USER") or ""
            return
        res.text += written
        return
    res.text += written
    res.unresolved.append(written)
