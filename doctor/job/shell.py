"""Just enough POSIX shell to read job scripts: words, commands, expansion.

Words keep their quotes (`raw`) so that expansion knows what single quotes
protect. Expansion is symbolic: a variable whose value is only known on the
compute node (`$SLURM_JOB_ID`, `$(hostname)`) stays in the text as written
and is recorded as a per-job / per-node / ... part of the value. Anything the
doctor cannot know (an unset variable, `$(some_command)`) is reported as
unresolved, never guessed.
"""
from __future__ import annotations

import posixpath
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


@dataclass(frozen=True)
class HereDoc:
    """The body of a here-document, as split_commands hands it out."""
    command: int      # the index, in split_commands' result, of the command it feeds
    delimiter: str    # unquoted
    quoted: bool      # `<<'EOF'`, `<<"EOF"`, `<<\EOF`: the body is not expanded
    body: str         # its lines (leading tabs removed for `<<-`), each ending in \n
    line: int         # the line of its first body line


def split_commands(text: str, first_line: int = 1, comments: Optional[list] = None,
                   heredocs: Optional[list] = None) -> list:
    """[(line, [raw words])] for each simple command, in order.

    Backslash-newline joins lines; `;`, `&&`, `||`, `|`, `&` and newlines
    separate commands; `#` at the start of a word starts a comment; the body of
    a here-document (`<<EOF` ... `EOF`) is data, not commands; `<<<` is a
    here-string. Reserved words before a command (`then`, `do`, `!` ... KEYWORDS)
    are dropped: `then export X=1` is the command `export X=1`. CRLF reads as LF.

    Linear in the text: one regex (_TOKEN) takes whole words, blanks, operators
    and comments; Python only steps in for nested substitutions, unclosed quotes,
    here-documents and line continuations. A line's number is counted from the
    text's offsets, once per command. `comments`: a list that gets (offset, text) of
    each comment, offsets into the text with CRLF read as LF (doctor/suppress.py).
    `heredocs`: a list that gets a HereDoc for each here-document's body.
    """
    text = text.replace("\r\n", "\n")
    pending: list = []  # (delimiter, strip tabs, quoted, command) to skip at the next newline
    out: list = []
    words: list = []
    parts: list = []     # the pieces of the word being read
    cmd_pos = line_pos = 0
    line = first_line
    pos, n = 0, len(text)
    while pos < n:
        for m in _TOKEN.finditer(text, pos):
            kind = m.lastgroup
            if kind == "w":
                if not words and not parts:
                    cmd_pos = m.start()
                word = m.group("w")
                if m.end("w") == m.end():    # no blank after it: the word may go on
                    parts.append(word)
                elif parts:
                    parts.append(word)
                    _add_word(words, "".join(parts))
                    parts = []
                elif words or word not in KEYWORDS:
                    words.append(word)
            elif kind is None:                # blanks
                if parts:
                    _add_word(words, "".join(parts))
                    parts = []
            elif kind == "c":
                if parts:                     # `"$x"#y`: a # inside a word
                    parts.append("#")
                    pos = m.start() + 1
                    break
                if comments is not None:
                    comments.append((m.start(), m.group("c")))
            elif kind == "o" and parts and m.group()[0] == "&" and parts[-1][-1] in "<>":
                parts.append("&")             # `>&` with a line continuation between
                pos = m.start() + 1
                break
            elif kind == "o" and m.group() == "(" and parts and \
                    _ARRAY_START.fullmatch("".join(parts)):
                pos = _array_end(text, m.start())   # `ARGS=(a "b c")`: one word
                parts.append(text[m.start():pos])
                break
            elif kind == "o" or kind == "n":
                if parts:
                    _add_word(words, "".join(parts))
                    parts = []
                if words:
                    line += text.count("\n", line_pos, cmd_pos)
                    line_pos = cmd_pos
                    out.append((line, words))
                    words = []
                if kind == "n" and pending:
                    pos = _skip_heredocs(text, m.end(), pending, heredocs, first_line)
                    pending = []
                    break
            else:                             # what the regex leaves to Python
                i = m.start()
                if i >= n:
                    pos = n
                    break
                if text.startswith("\\\n", i):
                    pos = i + 2
                    break
                if not words and not parts:
                    cmd_pos = i
                if text.startswith("<<<", i):
                    pos = i + 3
                elif text.startswith("<<", i):
                    # (the command it feeds is the one being read: out's next)
                    pending += [(*h, len(out)) for h in _heredoc(text, i + 2)]
                    pos = i + 2
                else:
                    pos = _scan_unit(text, i)
                parts.append(text[i:pos])
                break
        else:
            break
    if parts:
        _add_word(words, "".join(parts))
    if words:
        line += text.count("\n", line_pos, cmd_pos)
        out.append((line, words))
    return out


# Reserved words that start a command and run the rest in this shell: `if ! rsync ...;`,
# `then export X=1`, `do srun python train.py`. split_commands drops them.
KEYWORDS = frozenset(("!", "if", "then", "else", "elif", "do", "while", "until", "{"))


_ARRAY_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


def _array_end(text: str, i: int) -> int:
    """Where the `( ... )` of an array assignment that opens at i ends (after its `)`)."""
    n, depth, j = len(text), 0, i
    while j < n:
        c = text[j]
        if c in "'\"`\\" or text.startswith(("$(", "${"), j):
            j = _scan_unit(text, j)
            continue
        if c == "#" and text[j - 1] in " \t\n":   # a comment inside the list
            k = text.find("\n", j)
            j = n if k < 0 else k
            continue
        depth += {"(": 1, ")": -1}.get(c, 0)
        j += 1
        if depth == 0:
            return j
    return n


def array_items(raw: str) -> Optional[tuple]:
    """(name, appends, [raw words]) of an array assignment word `NAME=(a "b c")` or
    `NAME+=(...)`; None for any other word."""
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)(\+?)=\((.*)\)$", raw, re.S)
    if not m:
        return None
    return m.group(1), bool(m.group(2)), [w for _, ws in split_commands(m.group(3))
                                          for w in ws]


def _add_word(words: list, word: str) -> None:
    if words or word not in KEYWORDS:
        words.append(word)


# One token of split_commands. w: a word made of ordinary characters, escaped ones,
# closed quotes without substitutions, `$x`, `${x}`, `$(cmd)` and `$((x+1))` without
# quotes or deeper nesting, a `<` that opens no here-document, the `&` of `2>&1`, `>&2`,
# `&>file`, and a `#` inside a word; with the blanks after it. Then blanks, a newline,
# a comment, an operator, and (empty) whatever else Python must read itself.
_TOKEN = re.compile(r"""
    (?P<w>(?:
        [^ \t\n\\'"`$;|&()<\#]+
      | \\[^\n]
      | '[^']*'
      | "(?:[^"\\$`]|\\[\s\S]|\$(?![({])|\$\{[^{}]*\}|\$\((?:[^()'"]|\([^()'"]*\))*\))*"
      | \$(?![({])
      | \$\{[^{}]*\}
      | \$\((?:[^()'"]|\([^()'"]*\))*\)
      | <(?!<)
      | (?<=[<>])& | &(?=>)
      | (?<=[^ \t\n;|&()])\#
    )+)[ \t]*
  | [ \t]+
  | (?P<n>\n)
  | (?P<c>\#[^\n]*)
  | (?P<o>&&|\|\||;;|[;|&()])
  | (?P<x>)
""", re.X)
_DELIM_RUN = re.compile(r"""[^ \t\n;|&()<>\\'"`$]*""")
_DQ_RUN = re.compile(r'[^"\\$`]*')
_PAREN_RUN = re.compile(r"""[^'"()]*""")
_BRACE_RUN = re.compile(r"[^{}]*")


def _run_end(run: re.Pattern, text: str, i: int) -> int:
    """Where a run (a pattern that also matches nothing) starting at i ends."""
    m = run.match(text, i)
    return m.end() if m else i


def _skip_heredocs(text: str, i: int, pending: list, out: Optional[list],
                   first_line: int) -> int:
    """Where the commands go on after the bodies of the pending here-documents; each
    body, as a HereDoc, to `out` when it is a list."""
    n = len(text)
    for delim, strip_tabs, quoted, command in pending:
        start, lines = i, []
        while i < n:
            j = text.find("\n", i)
            j = n if j < 0 else j
            body_line = text[i:j]
            i = j + 1
            if strip_tabs:
                body_line = body_line.lstrip("\t")
            if body_line == delim:
                break
            lines.append(body_line + "\n")
        if out is not None:
            out.append(HereDoc(command, delim, quoted, "".join(lines),
                               first_line + text.count("\n", 0, start)))
    return min(i, n)


def _heredoc(text: str, k: int) -> list:
    """[(delimiter, strip tabs, quoted)] of the here-document whose `<<` ends at k, if it
    has one."""
    n = len(text)
    strip_tabs = text.startswith("-", k)
    k += strip_tabs
    while k < n and text[k] in " \t":
        k += 1
    e = k
    while e < n and text[e] not in " \t\n;|&()<>":
        j = _run_end(_DELIM_RUN, text, e)
        e = j if j > e else _scan_unit(text, e)
    return [(unquote(text[k:e]), strip_tabs, bool(_SPECIAL.search(text[k:e])))] if e > k \
        else []


def _scan_unit(text: str, i: int) -> int:
    """End of the quoted string / substitution / escaped char / char at i.

    Nested `"…$(…"…")…"` is followed with a stack, not recursion, so no depth of
    nesting can exhaust Python's stack."""
    n = len(text)
    c = text[i]
    if c == "'" or c == "`":
        j = text.find(c, i + 1)
        return n if j < 0 else j + 1
    if c == "\\":
        return min(i + 2, n)
    if c != '"' and not text.startswith(("$(", "${"), i):
        return i + 1
    stack: list = []  # the open constructs, innermost last: ['"', 0] or [opening, depth]
    j = i
    while True:
        if text[j] == '"':
            stack.append(['"', 0])
            j += 1
        else:  # $( or ${
            stack.append([text[j + 1], 1])
            j += 2
        while stack:
            top = stack[-1]
            if top[0] == '"':
                j = _run_end(_DQ_RUN, text, j)
                if j >= n:
                    return n
                ch = text[j]
                if ch == '"':
                    stack.pop()
                    j += 1
                elif ch == "\\":
                    j += 2
                elif ch == "`":
                    k = text.find("`", j + 1)
                    if k < 0:
                        return n
                    j = k + 1
                elif text.startswith(("$(", "${"), j):
                    break  # open it
                else:
                    j += 1
            else:
                j = _run_end(_PAREN_RUN if top[0] == "(" else _BRACE_RUN, text, j)
                if j >= n:
                    return n
                ch = text[j]
                if ch == "'":
                    k = text.find("'", j + 1)
                    if k < 0:
                        return n
                    j = k + 1
                elif ch == '"':
                    break  # open it
                else:
                    top[1] += 1 if ch == top[0] else -1
                    j += 1
                    if top[1] == 0:
                        stack.pop()
        else:
            return j


MAX_BRACE_WORDS = 1024   # `{a,b}{c,d}...` grows fast: the words past this are not made


def brace_expand(raw: str, limit: int = MAX_BRACE_WORDS) -> list:
    """bash's brace expansion of one raw word, the first expansion it does:
    `--exclude={'.git','data'}` is `--exclude='.git'` and `--exclude='data'`, `x{1..3}`
    is x1 x2 x3, `a{b,c{d,e}}` is ab acd ace. Braces in quotes, `${...}` and a brace with
    no comma or sequence are kept as written. The words keep their quotes."""
    if "{" not in raw:
        return [raw]
    pos = _unquoted(raw)
    for k, i in enumerate(pos):
        if raw[i] != "{" or (i and raw[i - 1] == "$"):
            continue
        depth, commas, end = 0, [], None
        for j in pos[k:]:
            c = raw[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    end = j
                    break
            elif c == "," and depth == 1:
                commas.append(j)
        if end is None:
            continue
        cuts = [i, *commas, end]
        alts = [raw[a + 1:b] for a, b in zip(cuts, cuts[1:])] if commas else \
            _sequence(raw[i + 1:end])
        if alts is None:
            continue
        out: list = []
        for alt in alts:
            out += brace_expand(raw[:i] + alt + raw[end + 1:], limit - len(out))
            if len(out) >= limit:
                break
        return out[:limit]
    return [raw]


def _unquoted(raw: str) -> list:
    """The indices of the characters of raw outside quotes, escapes and `$(…)`/`${…}`."""
    out, i, n = [], 0, len(raw)
    while i < n:
        if raw[i] in "'\"`\\" or raw.startswith(("$(", "${"), i):
            i = _scan_unit(raw, i)
            continue
        out.append(i)
        i += 1
    return out


def _sequence(body: str) -> Optional[list]:
    """The words of a sequence expression `1..5`, `0..10..2`, `a..e`; None otherwise."""
    m = re.fullmatch(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?", body)
    if m:
        a, b = int(m.group(1)), int(m.group(2))
        step = abs(int(m.group(3) or 1)) or 1
        nums = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(x) for x in nums[:MAX_BRACE_WORDS]]
    m = re.fullmatch(r"([A-Za-z])\.\.([A-Za-z])", body)
    if m:
        a, b = ord(m.group(1)), ord(m.group(2))
        return [chr(x) for x in (range(a, b + 1) if a <= b else range(a, b - 1, -1))]
    return None


Lookup = Callable[[str], Optional[str]]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def unquote(raw: str) -> str:
    """The literal word with quotes removed and nothing expanded."""
    if not _SPECIAL.search(raw):
        return raw
    return expand(raw, lambda name: None, keep_unknown=True).text


_SPECIAL = re.compile(r"""[\\'"`$]""")
_PLAIN = re.compile(r"""[^\\'"`$]+""")         # what expands to itself, unquoted
_PLAIN_QUOTED = re.compile(r"[^\\`$]+")        # ... and inside double quotes
MAX_NESTING = 64   # `${A:-${B:-…}}` deeper than this is left unresolved, as written


def expand(raw: str, lookup: Lookup, keep_unknown: bool = True,
           in_job: bool = False) -> Expanded:
    """Expand one word. `lookup(name)` gives a known value or None.

    Runtime variables (RUNTIME_VARS) stay symbolic unless `in_job`, and mark
    their part; unknown variables stay as `$NAME` and are reported unresolved.
    """
    res = Expanded("")
    if _SPECIAL.search(raw):
        out: list = []
        _expand_into(raw, lookup, res, out, quoted=False, in_job=in_job, depth=0)
        res.text = "".join(out)
    else:
        res.text = raw
    if "%" in res.text:
        for pat, kind in PATTERN_KINDS.items():
            if pat in res.text:
                res.parts.add(kind)
    return res


def expand_here_document(body: str, lookup: Lookup, in_job: bool = False) -> Expanded:
    """The body of a here-document with an unquoted delimiter (`<<EOF`) as the shell
    feeds it: variables, `$(...)` and backslashes before `$`, `` ` ``, `\\` and a newline
    are expanded, as in double quotes; quotes are plain characters, and so is the `\\`
    of `\\"` (unlike in double quotes). Unknown variables stay as written (expand)."""
    res = Expanded("")
    out: list = []
    # `\"` keeps its backslash here: hidden from _expand_into, which would drop it
    hidden = _BACKSLASHED.sub(lambda m: "\0" if m.group(1) == '"' else m.group(0), body)
    _expand_into(hidden, lookup, res, out, quoted=True, in_job=in_job, depth=0)
    res.text = "".join(out).replace("\0", '\\"')
    return res


_BACKSLASHED = re.compile(r"\\([\s\S])")


def _expand_into(raw: str, lookup: Lookup, res: Expanded, out: list, quoted: bool,
                 in_job: bool, depth: int) -> None:
    if depth > MAX_NESTING:
        out.append(raw)
        res.unresolved.append(raw)
        return
    plain = _PLAIN_QUOTED if quoted else _PLAIN
    i, n = 0, len(raw)
    while i < n:
        m = plain.match(raw, i)
        if m is not None:
            out.append(m.group())
            i = m.end()
            continue
        c = raw[i]
        if c == "'" and not quoted:
            j = raw.find("'", i + 1)
            j = n if j < 0 else j
            out.append(raw[i + 1:j])
            i = j + 1
        elif c == '"' and not quoted:
            j = _scan_unit(raw, i)
            inner = raw[i + 1:j - 1] if raw[j - 1:j] == '"' and j - 1 > i else raw[i + 1:j]
            _expand_into(inner, lookup, res, out, True, in_job, depth + 1)
            i = j
        elif c == "\\":
            nxt = raw[i + 1:i + 2]
            if nxt == "\n":
                pass   # a line continuation, in double quotes too: bash removes both
            elif quoted and nxt not in '$`"\\':
                out.append("\\" + nxt)
            else:
                out.append(nxt)
            i += 2
        elif raw.startswith("$(", i) or c == "`":
            j = _scan_unit(raw, i)
            body = raw[i + 2:j - 1] if c == "$" else raw[i + 1:j - 1]
            _command_subst(body.strip(), raw[i:j], lookup, res, out)
            i = j
        elif raw.startswith("${", i):
            j = _scan_unit(raw, i)
            _param(raw[i + 2:j - 1], raw[i:j], lookup, res, out, in_job, depth)
            i = j
        elif c == "$" and i + 1 < n and (m := _NAME.match(raw, i + 1)):
            _var(m.group(0), raw[i:m.end()], lookup, res, out, in_job)
            i = m.end()
        elif raw.startswith("$0", i) and lookup("0") is not None:
            out.append(lookup("0") or "")   # the script's path as bash was given it
            i += 2
        else:
            out.append(c)
            i += 1


def _var(name: str, written: str, lookup: Lookup, res: Expanded, out: list,
         in_job: bool) -> None:
    kind = RUNTIME_VARS.get(name) or USER_VARS.get(name)
    if kind:
        res.parts.add(kind)
    value = lookup(name)
    if name in RUNTIME_VARS and not in_job:
        value = None  # on the login node these name the login node, not the job
    if value is not None:
        out.append(value)
    else:
        out.append(written)
        if name not in RUNTIME_VARS:
            res.unresolved.append(written)


_PARAM = re.compile(r"([A-Za-z_][A-Za-z0-9_]*|0)(?:\[0\])?(?:(:?[-=+?]|%%?|##?)(.*))?$", re.S)


def _param(body: str, written: str, lookup: Lookup, res: Expanded, out: list, in_job: bool,
           depth: int) -> None:
    m = _PARAM.match(body)
    if not m:
        out.append(written)
        res.unresolved.append(written)
        return
    name, op, word = m.group(1), m.group(2), m.group(3) or ""
    word = re.sub(r'(?<!\\)"', "", word)   # ${A:-"x"} is x: bash removes those quotes
    if not op:
        _var(name, written, lookup, res, out, in_job)
        return
    if op[0] in "%#":   # ${BASH_SOURCE%/*}: the value less its shortest/longest suffix/prefix
        value = None if (name in RUNTIME_VARS and not in_job) else lookup(name)
        if value is None or "$" in word or "`" in word:
            out.append(written)
            res.unresolved.append(written)
        else:
            out.append(_strip_pattern(value, op, word))
        return
    kind = RUNTIME_VARS.get(name) or USER_VARS.get(name)
    value = None if (name in RUNTIME_VARS and not in_job) else lookup(name)
    if kind:
        res.parts.add(kind)
    use_word = value is None or (op.startswith(":") and value == "")
    if op.endswith(("-", "=")):
        if use_word and name in RUNTIME_VARS and not in_job:
            out.append(written)  # set in the job: the default will not be used
        elif use_word:
            _expand_into(word, lookup, res, out, True, in_job, depth + 1)
        else:
            out.append(value or "")
    elif op.endswith("+"):
        if not use_word:
            _expand_into(word, lookup, res, out, True, in_job, depth + 1)
    else:  # ${A:?msg}
        if use_word:
            out.append(written)
            res.unresolved.append(written)
        else:
            out.append(value or "")


def _strip_pattern(value: str, op: str, pattern: str) -> str:
    """bash's ${X%pat}, ${X%%pat}, ${X#pat}, ${X##pat} (glob patterns, as fnmatch)."""
    import fnmatch

    pattern = unquote(pattern)
    cuts = range(len(value) + 1)
    if op[0] == "%":   # a suffix: the shortest first, or the longest
        for k in (reversed(cuts) if op == "%" else cuts):
            if fnmatch.fnmatchcase(value[k:], pattern):
                return value[:k]
    else:
        for k in (cuts if op == "#" else reversed(cuts)):
            if fnmatch.fnmatchcase(value[:k], pattern):
                return value[k:]
    return value


def _path_subst(cmd: str, lookup: Lookup) -> Optional[str]:
    """What `$(dirname X)`, `$(cd X && pwd)`, `$(cd X; pwd -P)`, `$(realpath X)` and
    `$(readlink -f X)` print, where X expands to a known path (the script's own
    directory: `$(dirname "${BASH_SOURCE[0]}")`); None otherwise."""
    cmds = [[w for w in ws if w != "--"] for _, ws in split_commands(cmd)]
    if len(cmds) == 2 and cmds[1][:1] == ["pwd"] and len(cmds[1]) <= 2 and \
            cmds[0][:1] == ["cd"] and len(cmds[0]) >= 2:
        if any(not _REDIRECT_WORD.match(w) for w in cmds[0][2:]) or not re.search(
                r"(&&|;)\s*pwd(\s+-[PL])?\s*$", cmd):
            return None
        kind, word = "cd", cmds[0][1]
    elif len(cmds) == 1 and len(cmds[0]) == 2 and cmds[0][0] in ("dirname", "realpath"):
        kind, word = cmds[0]
    elif len(cmds) == 1 and len(cmds[0]) == 3 and cmds[0][:2] in (["readlink", "-f"],
                                                                   ["readlink", "-e"]):
        kind, word = "cd", cmds[0][2]
    else:
        return None
    got = expand(word, lookup)
    if not got.resolved or "$" in got.text or not got.text:
        return None
    path = got.text
    if kind == "dirname":
        return posixpath.dirname(path.rstrip("/") or "/") or "."
    # (a relative one stays relative: to the step's directory, which the model knows
    # better than the login shell's PWD)
    return posixpath.normpath(path)


_REDIRECT_WORD = re.compile(r"^(\d*|&)>>?(/dev/null)?$|^/dev/null$|^2>&1$")


def _command_subst(cmd: str, written: str, lookup: Lookup, res: Expanded, out: list) -> None:
    if "/" in cmd or "$" in cmd or "dirname" in cmd:
        path = _path_subst(cmd, lookup)
        if path is not None:
            out.append(path)
            return
    kind = COMMAND_KINDS.get(" ".join(cmd.split()))
    if kind:
        res.parts.add(kind)
        if kind == "user" and lookup("USER") is not None:
            out.append(lookup("USER") or "")
            return
        out.append(written)
        return
    out.append(written)
    res.unresolved.append(written)


# ---- command prefixes ------------------------------------------------------
@dataclass(frozen=True)
class Prefix:
    """How a program that runs another command reads its own words first.

    `values`: its options whose value may be the next word (`-s KILL`, `--signal KILL`;
    `-sKILL` and `--signal=KILL` are one word anyway); other options are flags.
    `operands`: words before the command that are not options (timeout's DURATION).
    `no_command`: options with which it runs no command (`command -v rsync`).
    `assigns`: it takes `NAME=value` words before the command (env, sudo)."""
    values: frozenset = frozenset()
    operands: int = 0
    no_command: frozenset = frozenset()
    assigns: bool = False


def _opts(text: str) -> frozenset:
    return frozenset(text.split())


# From each tool's --help or man page (coreutils 9.1, util-linux 2.38, Slurm 22.05's
# `srun --help`, sudo 1.9, sshpass 1.09, numactl 2.0, GNU time 1.9).
PREFIXES = {
    "builtin": Prefix(),
    "command": Prefix(no_command=_opts("-v -V")),
    "exec": Prefix(_opts("-a")),
    "nohup": Prefix(),
    "setsid": Prefix(),
    "unbuffer": Prefix(),
    "time": Prefix(_opts("-f --format -o --output")),
    "nice": Prefix(_opts("-n --adjustment")),
    "timeout": Prefix(_opts("-k --kill-after -s --signal"), operands=1),
    "stdbuf": Prefix(_opts("-i --input -o --output -e --error")),
    "ionice": Prefix(_opts("-c --class -n --classdata -p --pid -P --pgid -u --uid"),
                     no_command=_opts("-p --pid -P --pgid -u --uid")),
    "taskset": Prefix(operands=1, no_command=_opts("-p --pid")),
    "chrt": Prefix(_opts("-T --sched-runtime -P --sched-period -D --sched-deadline"),
                   operands=1, no_command=_opts("-p --pid -m --max")),
    "numactl": Prefix(_opts(
        "-i --interleave -w --weighted-interleave -m --membind -p --preferred -P "
        "--preferred-many -N --cpunodebind --cpubind -C --physcpubind -o --offset -L --length "
        "-M --shmmode -S --shm -f --file -I --shmid"), no_command=_opts("-s --show -H --hardware")),
    "env": Prefix(_opts("-u --unset -C --chdir -S --split-string"), assigns=True,
                  no_command=_opts("-S --split-string")),
    "sshpass": Prefix(_opts("-p -f -d -P")),
    "sudo": Prefix(_opts(
        "-C --close-from -D --chdir -g --group -p --prompt -R --chroot -r --role -t --type "
        "-T --command-timeout -U --other-user -u --user"), assigns=True,
        no_command=_opts("-e --edit -l --list -v --validate -K --remove-timestamp -V --version "
                         "-h --help")),
    "xargs": Prefix(_opts("-a --arg-file -d --delimiter -E -I -L -n --max-args -P --max-procs "
                          "-s --max-chars --process-slot-var")),
    "srun": Prefix(_opts(
        "-A --account --acctg-freq --bb --bbf --bcast --bcast-exclude -b --begin -c "
        "--cpus-per-task --comment --container --cpu-freq -d --dependency --deadline "
        "--delay-boot -D --chdir --export -e --error --epilog --gres --gres-flags -i --input "
        "--jobid -J --job-name -L --licenses -M --clusters -m --distribution --mail-type "
        "--mail-user --mcs-label --mpi -n --ntasks --ntasks-per-node -N --nodes -o --output "
        "--het-group -p --partition --power --priority --prolog --profile -q --qos -r "
        "--relative -S --core-spec --signal --slurmd-debug --switches --task-epilog "
        "--task-prolog --thread-spec -T --threads -t --time --time-min -W --wait --wckey "
        "--cluster-constraint -C --constraint --mem --mincpus --reservation --tmp -w "
        "--nodelist -x --exclude --mem-per-cpu --sockets-per-node --cores-per-socket "
        "--threads-per-core -B --extra-node-info --ntasks-per-core --ntasks-per-socket "
        "--cpus-per-gpu -G --gpus --gpu-bind --gpu-freq --gpus-per-node --gpus-per-socket "
        "--gpus-per-task --mem-per-gpu --cpu-bind --hint --network --accel-bind --uid --gid "
        "--container-image --container-mounts --container-workdir --container-name "
        "--container-env --container-save --environment --uenv --view"),
        no_command=_opts("--help --usage -V --version")),
}
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def prefix_words(name: str, args: list) -> Optional[int]:
    """How many of `args` (the unquoted words after a prefix program `name`) are its own
    options and operands; the command it runs comes next. None when it runs none."""
    spec = PREFIXES[posixpath.basename(name)]
    i = 0
    while i < len(args) and args[i].startswith("-") and args[i] != "-":
        word = args[i]
        i += 1
        if word == "--":
            break
        if word.startswith("--"):
            key = word.split("=", 1)[0]
            if key in spec.no_command:
                return None
            if "=" not in word and key in spec.values:
                i += 1
            continue
        for k, ch in enumerate(word[1:], 1):    # -abc: flags until one takes a value
            if "-" + ch in spec.no_command:
                return None
            if "-" + ch in spec.values:
                i += k == len(word) - 1          # -s KILL, not -sKILL
                break
    while spec.assigns and i < len(args) and (_ASSIGNMENT.match(args[i]) or args[i] == "-"):
        i += 1
    i += spec.operands
    return i if i < len(args) else None


@dataclass(frozen=True)
class Effective:
    """The command a simple command runs, past assignments and prefix programs."""
    start: int            # its index in the words
    prefixes: tuple       # the prefix programs before it, outermost first: ("srun", "nice")

    @property
    def in_this_shell(self) -> bool:
        """A builtin here acts on this shell (`command ulimit -n 4096`); behind
        `srun`, `env` or `timeout` it would be a program, or fail."""
        return all(p in ("builtin", "command") for p in self.prefixes)


def effective_command(argv: list) -> Optional[Effective]:
    """Where the real command of a simple command starts, given its unquoted words:
    `A=1 srun -N1 timeout -s KILL 10m nice -n 5 rsync -a x y` runs rsync (index 9).
    Assignments and redirections (`>log`, `2> log`) before a command word are skipped.
    None when it runs no command (`A=1` alone, `command -v rsync`, `env -S '...'`)."""
    i = _command_word(argv, 0)
    prefixes: list = []
    while i < len(argv) and posixpath.basename(argv[i]) in PREFIXES:
        n = prefix_words(argv[i], argv[i + 1:])
        if n is None:
            return None
        prefixes.append(posixpath.basename(argv[i]))
        i = _command_word(argv, i + 1 + n)
    return Effective(i, tuple(prefixes)) if i < len(argv) else None


_REDIRECTION = re.compile(r"(\d*|&)(>>?|<<?-?|<<<|>&|<&|>\|)(.*)", re.S)


def _command_word(argv: list, i: int) -> int:
    """The first word from i that is not an assignment or a redirection."""
    while i < len(argv):
        m = _REDIRECTION.fullmatch(argv[i])
        if m:
            i += 1 if m.group(3) else 2    # `> log` is two words
        elif _ASSIGNMENT.match(argv[i]):
            i += 1
        else:
            break
    return i


def command_argv(argv: list, builtin: bool = False) -> list:
    """The words from the command that `argv` really runs (see effective_command); []
    when none. `builtin=True` for cd, ulimit, source ...: [] unless it acts on this
    shell (`srun ulimit -n 4096` changes nothing here)."""
    eff = effective_command(argv)
    if eff is None or (builtin and not eff.in_this_shell):
        return []
    return argv[eff.start:]
