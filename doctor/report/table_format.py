"""The human report, as ruff prints one: the findings (errors first, then warnings), each
with its file:line, message and fix, then one summary line with separate counts.

`verbosity` -1 (`-q`): the summary line only; 1 (`-v`): also every check with its status
and why it skipped, and the suppressed findings with their reasons. Every line fits
`width` columns: prose is wrapped, a command is continued with ` \\` between words (so a
copied command still runs as written), and error findings are never cut short; only the
warnings of one check past MAX_WARNINGS_PER_CHECK are counted instead of shown.
"""
from __future__ import annotations

import os
import re
import shutil
import textwrap
from typing import Optional

from doctor.model import unreadable_note
from doctor.report import printable_doc, summary_counts, where
from doctor.report.fixtext import fix_lines

MAX_WARNINGS_PER_CHECK = 10
FALLBACK_WIDTH = 100   # no terminal and no COLUMNS (a pipe, a CI log)
MIN_WIDTH = 40
_ANSI = re.compile(r"\033\[[0-9;]*m")
COLORS = {"error": "1;31", "warning": "1;33", "info": "1;36", "crash": "1;35",
          "pass": "32", "skip": "2", "fix": "36", "id": "1"}


def terminal_width(stream=None) -> int:
    """COLUMNS, else the width of `stream` (stdout) when it is a terminal, else
    FALLBACK_WIDTH."""
    try:
        cols = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        cols = 0
    if cols <= 0 and stream is not None:
        try:
            cols = os.get_terminal_size(stream.fileno()).columns if stream.isatty() else 0
        except (OSError, ValueError, AttributeError):
            cols = 0
    if cols <= 0 and stream is None:
        cols = shutil.get_terminal_size((0, 0)).columns
    return max(cols or FALLBACK_WIDTH, MIN_WIDTH)


def use_color(choice: str, stream) -> bool:
    """--color: always, never, or auto (a terminal, and NO_COLOR unset)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty and not os.environ.get("NO_COLOR")


def _paint(text: str, kind: str, color: bool) -> str:
    return f"\033[{COLORS[kind]}m{text}\033[0m" if color and kind in COLORS else text


def render(report, color: bool = False, verbosity: int = 0,
           width: Optional[int] = None) -> str:
    doc = printable_doc(report.doc())  # then the report's own line breaks and colours
    width = max(width or terminal_width(), MIN_WIDTH)
    out: list = []
    if verbosity >= 0:
        for block in _findings(doc, width, color, every=verbosity > 0):
            out += block + [""]
    if verbosity > 0:
        out += _checks(doc, width, color) + [""]
        suppressed = _suppressed(doc, width, color)
        out += suppressed + ([""] if suppressed else [])
    if verbosity == 0:   # a pass that says what it does not prove (ddp-smoke's built-in
        # model); -v shows it on the check's row
        for r in doc["results"]:
            if r["status"] == "pass" and r.get("reason"):
                out += _prose(f"note[{r['id']}] passed: {r['reason']}", width, "", "    ") + [""]
    note = unreadable_note(doc)
    if verbosity >= 0 and note:
        out += _prose(note, width, "", "  ")
    summary = summary_line(doc, color)
    out += _prose(summary, width, "", "  ", plain=_plain(summary, color))
    return "\n".join(out) + "\n"


def render_compact(report) -> str:
    """For a job's log (`doctor sbatch --force`): each finding on one line, errors first,
    without its fix, then the summary line (`doctor show LOG` renders the rest)."""
    doc = printable_doc(report.doc())
    lines = [line for block in _findings(doc, 1 << 30, False, every=False, fixes=False)
             for line in block]
    note = unreadable_note(doc)
    return "\n".join(lines + ([note] if note else []) + [summary_line(doc)]) + "\n"


def summary_line(doc: dict, color: bool = False) -> str:
    """`7 errors, 5 warnings, 9 passed, 12 skipped in 3.2s (exit 1)`: counts of checks
    (summary.counts), warnings apart from errors; those that could not complete and the
    findings suppressed only when there are some."""
    c = summary_counts(doc)
    if not doc["results"]:
        head = "no checks ran"
    else:
        parts = [_paint(_n(c["fail"], "error"), "error", color and c["fail"] > 0),
                 _paint(_n(c["warning"], "warning"), "warning", color and c["warning"] > 0),
                 f"{c['pass']} passed"]
        parts += [f"{c['skip']} skipped"] if c["skip"] else []
        parts += [_paint(f"{c['error']} could not complete", "crash", color)] \
            if c["error"] else []
        hidden = sum(len(r.get("suppressed") or []) for r in doc["results"])
        parts += [f"{hidden} suppressed"] if hidden else []
        head = ", ".join(parts)
    return f"{head} in {doc['duration_s']:.2f}s (exit {doc['summary']['exit_code']})"


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _severity(finding: dict, result: dict) -> str:
    return finding.get("severity") or result["severity"]


def _findings(doc: dict, width: int, color: bool, every: bool, fixes: bool = True) -> list:
    """One block of lines per finding: errors, then the checks that could not complete,
    then warnings (and info), each group in check order."""
    rank = {"error": 0, "warning": 2}
    entries = []   # (rank, check index, block)
    for i, r in enumerate(doc["results"]):
        if r["status"] == "error":
            head = f"{_paint('error', 'crash', color)}[{_paint(r['id'], 'id', color)}] " \
                f"could not complete: {r['reason'] or 'no reason given'}"
            entries.append((1, i, _prose(head, width, "", "    ", plain=_plain(head, color))))
            continue
        if r["status"] != "fail":
            continue
        by_rank: dict = {}
        for f in r["findings"]:
            by_rank.setdefault(rank.get(_severity(f, r), 3), []).append(f)
        for k, group in by_rank.items():
            shown = group if every or k == 0 else group[:MAX_WARNINGS_PER_CHECK]
            previous = None
            for f in shown:
                lines = fix_lines(f) if fixes else []
                same = bool(lines) and lines == previous
                entries.append((k, i, _finding(f, r, lines, same, width, color)))
                previous = lines
            if len(group) > len(shown):
                more = len(group) - len(shown)
                entries.append((k, i, _prose(
                    f"… and {more} more {_severity(group[0], r)}s of {r['id']} (`-v` or the "
                    "JSON report lists them all)", width, "", "    ")))
    return [block for _k, _i, block in sorted(entries, key=lambda e: (e[0], e[1]))]


def _finding(f: dict, r: dict, fixes: list, same: bool, width: int, color: bool) -> list:
    severity = _severity(f, r)
    kind = severity if severity in COLORS else "info"
    plain = f"{where(f)}{severity}[{r['id']}] {f['message']}"
    head = f"{where(f)}{_paint(severity, kind, color)}[{_paint(r['id'], 'id', color)}] " \
        f"{f['message']}"
    lines = _prose(head, width, "", "    ", plain=plain if color else None)
    if same:
        return lines + [f"  {_paint('fix:', 'fix', color)} the same as above"]
    for n, line in enumerate(fixes):
        label = f"  {_paint('fix:', 'fix', color)} " if n == 0 else "       "
        lines += _fix_line(line, label, width)
    return lines


def _fix_line(line: str, label: str, width: int) -> list:
    """One line of fix_lines under the `fix:` label. Prose wraps; a command (`$ ...`) or a
    line for a file (indented under its "Add to f:") wraps only when it must, as a shell
    continuation between words, so that what is copied runs as shown."""
    body = line.lstrip(" ")
    lead = label + " " * (len(line) - len(body))   # the label, then the line's own indent
    cols = len(_strip(lead))
    if cols + len(body) <= width:
        return [lead + body]
    verbatim = body.startswith("$ ") or (len(line) > len(body) and not body.endswith(":"))
    if verbatim and not body.startswith("#"):   # a `#SBATCH` line cannot be continued
        return _shell_wrap(body, lead, " " * (cols + 4), width)
    return _prose(lead + body, width, "", " " * (cols + 2), plain=_strip(lead) + body)


def _strip(text: str) -> str:
    return _ANSI.sub("", text)


def _plain(text: str, color: bool) -> Optional[str]:
    return _strip(text) if color else None


def _prose(text: str, width: int, first: str, rest: str,
           plain: Optional[str] = None) -> list:
    """text wrapped to width (its first line after `first`, the others after `rest`).
    `plain`: the same text without colour codes, which is what is measured; the colours
    are only ever on the line's first words, which are never broken."""
    lines = []
    for n, para in enumerate((plain if plain is not None else text).split("\n")):
        wrapped = textwrap.wrap(para, width, initial_indent=first if n == 0 else rest,
                                subsequent_indent=rest, break_on_hyphens=False) or [""]
        lines += wrapped
    if plain is not None and lines:   # put the colours back on the first line
        lead = plain.split("\n")[0]
        colored_lead = text.split("\n")[0]
        head = lines[0][len(first):]
        if lead.startswith(head):
            lines[0] = first + _recolor(colored_lead, len(head))
    return lines


def _recolor(colored: str, n: int) -> str:
    """The first n visible characters of a coloured text, with its colour codes."""
    out, seen, i = "", 0, 0
    while i < len(colored) and seen < n:
        if colored.startswith("\033[", i):
            j = colored.index("m", i) + 1
            out, i = out + colored[i:j], j
            continue
        out, seen, i = out + colored[i], seen + 1, i + 1
    while colored.startswith("\033[", i):   # a reset right after the last character
        j = colored.index("m", i) + 1
        out, i = out + colored[i:j], j
    return out


def _shell_wrap(command: str, first: str, rest: str, width: int) -> list:
    """A long shell command over several lines that the shell reads as one: broken at
    spaces outside quotes with ` \\` at the end of each line, a `--option` kept with its
    value where they fit. A word longer than a whole line starts a line of its own and is
    split with a backslash-newline (a single-quoted part closed and reopened); its next
    part starts in column 0, since an indent there would become part of the word."""
    lines, line, fresh = [], first, True   # fresh: nothing on the line after its indent

    def room(text: str) -> bool:   # text fits on the line, with room for " \\"
        return len(_strip(line)) + (0 if fresh else 1) + len(text) + 2 <= width

    for unit in _units(_shell_words(command)):
        text = " ".join(unit)
        if not room(text) and not fresh and len(_strip(rest)) + len(text) + 2 <= width:
            lines.append(line + " \\")
            line, fresh = rest, True
        if room(text):
            line, fresh = line + ("" if fresh else " ") + text, False
            continue
        for word in unit:   # a unit wider than a line: word by word
            if not room(word) and not fresh:
                lines.append(line + " \\")
                line, fresh = rest, True
            if room(word):
                line, fresh = line + ("" if fresh else " ") + word, False
                continue
            text, prefix = word, line
            while len(_strip(prefix)) + len(text) + 1 > width:
                at, close, reopen = _cut(text, width - len(_strip(prefix)) - 1)
                lines.append(prefix + text[:at] + close + "\\")
                text, prefix = reopen + text[at:], ""
            line, fresh = prefix + text, False
    lines.append(line)
    return lines


def _units(words: list) -> list:
    """The words in the groups a line break should not split: `--option value`."""
    units: list = []
    for word in words:
        prev = units[-1] if units else None
        if prev and len(prev) == 1 and prev[0].startswith("--") and "=" not in prev[0] \
                and not word.startswith("-"):
            prev.append(word)
        else:
            units.append([word])
    return units


def _cut(word: str, room: int) -> tuple:
    """(where to cut `word` within `room` columns, what closes its first part, what opens
    the next) so that `head\\<newline>tail` is the same word to the shell: never inside a
    backslash escape, and a single-quoted part is closed before the cut and reopened."""
    quote, i, best = "", 0, (1, "", "")
    while i < len(word):
        c = word[i]
        if c == "\\" and quote != "'":
            i += 2
        else:
            if c in "'\"" and (not quote or quote == c):
                quote = "" if quote else c
            i += 1
        close = "'" if quote == "'" else ""
        if i + len(close) > room:
            break
        best = (i, close, close)
    return best


def _shell_words(command: str) -> list:
    """The command split at spaces outside quotes (each word as written)."""
    words, cur, quote, i = [], "", "", 0
    while i < len(command):
        c = command[i]
        if quote != "'" and c == "\\" and i + 1 < len(command):
            cur, i = cur + command[i:i + 2], i + 2
            continue
        if c in "'\"" and (not quote or quote == c):
            quote = "" if quote else c
        if c == " " and not quote:
            if cur:
                words.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    if cur:
        words.append(cur)
    return words


def _checks(doc: dict, width: int, color: bool) -> list:
    """-v: every check, one row each (status, check, severity, what it found or why it
    skipped), the last column wrapped to the width."""
    rows = []
    for r in doc["results"]:
        status = r["status"]
        if status == "fail":
            label, kind = ("FAIL", "error") if r["severity"] == "error" else ("WARN", "warning")
            n = len(r["findings"])
            hidden = len(r.get("suppressed") or [])
            note = f"{n} finding{'s' * (n != 1)} (above)" + \
                (f", {hidden} suppressed (below)" if hidden else "")
        else:
            label, kind = {"pass": ("pass", "pass"), "skip": ("skip", "skip"),
                           "error": ("ERROR", "crash")}[status]
            note = r["reason"] or ""
            if status == "error":
                note = f"could not complete: {note}"
            hidden = len(r.get("suppressed") or [])
            if hidden:
                note += f"{'; ' if note else ''}{hidden} suppressed (below)"
            # which job steps a skip judged, and a pass that found no step to judge
            judged = r.get("steps") or []
            if judged and (status == "skip" or any("(no step" in j for j in judged)):
                note += f" [judged: {', '.join(judged)}]"
        rows.append((label, kind, r["id"], r["severity"], note.strip()))
    if not rows:
        return []
    w_id = max(len(r[2]) for r in rows)
    lead = 5 + 2 + w_id + 2 + 7 + 2
    room = width - lead
    out = []
    for label, kind, cid, sev, note in rows:
        row = f"{_paint(label.ljust(5), kind, color)}  {cid.ljust(w_id)}  {sev.ljust(7)}"
        if room >= 20:
            wrapped = textwrap.wrap(note, room, break_on_hyphens=False) or [""]
            out.append((row + "  " + wrapped[0]).rstrip())
            out += [" " * lead + w for w in wrapped[1:]]
        else:   # too narrow for a column: the note on the lines below its row
            out.append(row.rstrip())
            out += _prose(note, width, "    ", "    ") if note else []
    return out


def _suppressed(doc: dict, width: int, color: bool) -> list:
    """-v: each suppressed finding, with what suppressed it and why."""
    out = []
    for r in doc["results"]:
        for f in r.get("suppressed") or []:
            by = f.get("suppressed_by") or "suppressed"
            reason = f.get("reason") or "no reason given"
            text = f"{where(f)}{_paint('suppressed', 'skip', color)}[{r['id']}] " \
                f"{f.get('message') or ''} ({by}: {reason})"
            out += _prose(text, width, "", "    ", plain=_plain(text, color))
    return out
