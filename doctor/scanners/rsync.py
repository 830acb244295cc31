"""A pure emulation of rsync's filter rules (exclude.c `add_rule`/`rule_matches`).

What it answers: which names does `rsync -r SRC DST` send, given the rules?
Names are relative to the transfer root (`src/` sends `a/b`, `src` sends
`src/a/b`), directories end in `/`, exactly as `--out-format=%n` prints them.
It is proven against the real rsync in tests/test_rsync_oracle.py.

Not emulated (the caller is told through `Unsupported`): per-directory merge
files (`-F`, `: FILE`), `--files-from`, `--relative`, the `/` and `x` modifiers.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Iterable, Iterator, Optional

from doctor import fs

# rsync's default_cvsignore (exclude.c), in order; added after the user's rules by -C.
CVS_DEFAULTS = ("RCS SCCS CVS CVS.adm RCSLOG cvslog.* tags TAGS .make.state .nse_depinfo "
                "*~ #* .#* ,* _$* *$ *.old *.bak *.BAK *.orig *.rej .del-* *.a *.olb *.o "
                "*.obj *.so *.exe *.Z *.elc *.ln core .svn/ .git/ .hg/ .bzr/").split()

_LONG_RULES = {"exclude": "-", "include": "+", "merge": ".", "dir-merge": ":", "hide": "H",
               "show": "S", "protect": "P", "risk": "R", "clear": "!"}
_CLASSES = {"alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
            "digit": "0-9", "graph": "\\x21-\\x7e", "lower": "a-z", "print": "\\x20-\\x7e",
            "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"), "space": " \\t\\n\\r\\f\\v",
            "upper": "A-Z", "xdigit": "0-9A-Fa-f"}


class Unsupported(ValueError):
    """A rule or option the emulation does not model: the caller must not guess."""


@dataclass(frozen=True)
class Rule:
    """One include (`+`) or exclude (`-`) rule, as rsync stores it."""

    action: str            # "+" or "-"
    pattern: str           # as written, with its leading/trailing slash
    negate: bool = False   # the `!` modifier
    perishable: bool = False
    origin: str = ""       # where it came from, for messages: "--exclude=data"

    @property
    def anchored(self) -> bool:
        return self.pattern.startswith("/")

    def __str__(self) -> str:
        return f"{self.action} {self.pattern}"


def _glob_regex(pat: str) -> str:
    """rsync wildmatch → Python regex: `*` and `?` stop at `/`, `**` does not."""
    out, i, n = [], 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "\\":
            if i + 1 < n:
                out.append(re.escape(pat[i + 1]))
                i += 2
            else:
                out.append("(?!)")  # a trailing backslash compares against NUL: never matches
                i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "*":
            j = i
            while j < n and pat[j] == "*":
                j += 1
            out.append(".*" if j - i >= 2 else "[^/]*")
            i = j
        elif c == "[":
            cls, i = _char_class(pat, i)
            out.append(cls)
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _char_class(pat: str, i: int) -> tuple:
    """A `[...]` class starting at i → (regex, index after it); never matches `/`."""
    j, n = i + 1, len(pat)
    negated = j < n and pat[j] in "!^"
    if negated:
        j += 1
    items: list = []
    first = True
    while j < n and (pat[j] != "]" or first):
        first = False
        c = pat[j]
        if c == "\\" and j + 1 < n:
            items.append(re.escape(pat[j + 1]))
            j += 2
            continue
        if c == "[" and pat.startswith("[:", j):
            end = pat.find(":]", j + 2)
            name = pat[j + 2:end] if end > 0 else ""
            if end > 0 and name in _CLASSES:
                items.append(_CLASSES[name])
                j = end + 2
                continue
            if end > 0:  # unknown class name: matches nothing
                j = end + 2
                continue
        if j + 2 < n and pat[j + 1] == "-" and pat[j + 2] != "]":
            lo, hi = c, pat[j + 2]
            if hi == "\\" and j + 3 < n:
                hi = pat[j + 3]
                j += 1
            if lo <= hi:
                items.append(f"{re.escape(lo)}-{re.escape(hi)}")
            j += 3
            continue
        items.append(re.escape(c))
        j += 1
    if j >= n:  # unterminated class: wildmatch aborts, nothing matches
        return "(?!)", n
    body = "".join(items)
    if negated:
        return f"[^/{body}]", j + 1
    return (f"(?:(?!/)[{body}])" if body else "(?!)"), j + 1


Matcher = Callable[[str, bool], bool]


def _without_dir_slash(pattern: str) -> str:
    """The pattern without the trailing `/` that makes it match directories only."""
    return pattern[:-1] if len(pattern) > 1 and pattern.endswith("/") else pattern


def _name_only(rule: Rule) -> bool:
    """Does the rule match the last name component alone (no `/` but a trailing one, no
    `**`)? Then its answer for a path depends on (name, is_dir) only."""
    pat = _without_dir_slash(rule.pattern)
    return "/" not in pat and "**" not in pat


def compile_rule(rule: Rule) -> Matcher:
    """A function (path, is_dir) → does the rule match, following rule_matches()."""
    pat = _without_dir_slash(rule.pattern)
    dir_only = pat != rule.pattern
    slash_cnt = pat.count("/")
    wild = any(c in pat for c in "*[?")
    wild2 = wild and "**" in pat
    wild2_prefix = wild2 and pat.startswith("**")
    wild3_suffix = wild2 and pat.endswith("***")
    anchored = pat.startswith("/")
    body = pat[1:] if anchored else pat
    hit, miss = (not rule.negate), rule.negate
    name_only = _name_only(rule)

    if wild:
        rx = _glob_regex(body)
        if not anchored and slash_cnt and not wild2:
            tail = slash_cnt + 1
            regex = re.compile(rx, re.S)
        elif not anchored and not wild2_prefix and wild2:
            tail = -1
            regex = re.compile(f"(?:.*/)?(?:{rx})", re.S)
        else:
            tail = 0
            regex = re.compile(rx, re.S)
        full = regex.fullmatch

        def match_wild(path: str, is_dir: bool) -> bool:
            if not path:
                return False
            if dir_only and not is_dir:
                return miss
            s = path.rpartition("/")[2] if name_only else path
            if wild2_prefix and not anchored:
                s = "/" + s
            if is_dir and wild3_suffix:
                s += "/"
            if tail > 0:
                parts = s.split("/")
                if len(parts) < tail:
                    return miss
                s = "/".join(parts[-tail:])
            return hit if full(s) else miss
        return match_wild

    if name_only:
        def match_name(path: str, is_dir: bool) -> bool:
            if not path:
                return False
            if dir_only and not is_dir:
                return miss
            return hit if path.rpartition("/")[2] == body else miss
        return match_name

    suffix = "/" + body

    def match_literal(path: str, is_dir: bool) -> bool:
        if not path:
            return False
        if dir_only and not is_dir:
            return miss
        if anchored:
            return hit if path == body else miss
        return hit if (path == body or path.endswith(suffix)) else miss
    return match_literal


# ---- parsing rules as rsync reads them ----------------------------------------

def parse_rule(text: str, *, default: Optional[str] = None, old_prefixes: bool = False,
               origin: str = "") -> Optional[Rule]:
    """One rule as rsync's parse_rule_tok reads it.

    `default` is the type of --exclude/--include/--*-from ('-' or '+'); None
    means a --filter rule `RULE[,MODS] PATTERN`. Returns None for the
    list-clearing `!`, and a no-op for rules that do not affect the sender.
    """
    if default is not None:
        if text == "!":
            return None
        action = default
        if old_prefixes and text[:2] in ("- ", "+ "):
            action, text = text[0], text[2:]
        return Rule(action, text, origin=origin)
    m = re.match(r"([a-z-]{2,})(?:,([^ _]*))?(?:[ _](.*))?$", text, re.S)
    if m and m.group(1) in _LONG_RULES:
        kind, mods, pattern = _LONG_RULES[m.group(1)], m.group(2) or "", m.group(3)
    else:
        m = re.match(r"(.),?([^ _]*)(?:[ _](.*))?$", text, re.S)
        if not m or m.group(1) not in "+-.:HSPR!":
            raise Unsupported(f"unknown filter rule {text!r}")
        kind, mods, pattern = m.group(1), m.group(2), m.group(3)
    if kind == "!":
        return None
    if kind in ".:":
        raise Unsupported(f"merge rule {text!r} is not emulated")
    if not pattern:
        raise Unsupported(f"filter rule without a pattern: {text!r}")
    if kind in "PR" or ("r" in mods and "s" not in mods):
        return _NOOP   # receiver-only: the sender sends the file anyway
    if set(mods) - {"!", "p", "s", "r"}:
        raise Unsupported(f"filter modifier in {text!r} is not emulated")
    action = {"H": "-", "S": "+"}.get(kind, kind)
    return Rule(action, pattern, negate="!" in mods, perishable="p" in mods, origin=origin)


_NOOP = Rule("+", "", origin="receiver-only")


def rule_file_lines(data: bytes) -> Iterator[tuple]:
    """(line number, text) of a rule file: lines end at \\n or \\r; blank lines and
    `#`/`;` comments are skipped."""
    lineno = 1
    for m in re.finditer(rb"([^\r\n]*)(\r\n|\r|\n|$)", data):
        text = m.group(1).decode("utf-8", "surrogateescape")
        if text and text[0] not in "#;":
            yield lineno, text
        if not m.group(2):
            break
        lineno += 1


class RuleList:
    """An ordered rule list with rsync's `!` (clear) semantics."""

    def __init__(self, rules: Iterable[Rule] = ()):
        self.rules: list = [r for r in rules if r is not _NOOP]
        self.cvs: list = []          # -C: default cvs excludes, after everything else
        self.cvs_per_dir = False     # -C: also read each directory's .cvsignore

    def add(self, rule: Optional[Rule]) -> None:
        if rule is None:
            self.rules.clear()
        elif rule is not _NOOP:
            self.rules.append(rule)

    def add_cvs(self, extra: Iterable[str] = ()) -> None:
        self.cvs_per_dir = True
        words = list(CVS_DEFAULTS) + [w for w in extra]
        self.cvs = []
        for w in words:
            if w == "!":
                self.cvs.clear()
            else:
                self.cvs.append(Rule("-", w, perishable=True, origin="-C"))

    def replaced(self, old: Rule, new: Rule) -> "RuleList":
        out = RuleList([new if r is old else r for r in self.rules])
        out.cvs, out.cvs_per_dir = self.cvs, self.cvs_per_dir
        return out


def _first_match(matchers: list, path: str, is_dir: bool) -> Optional[bool]:
    for include, m in matchers:
        if m(path, is_dir):
            return include
    return None


def transfer_list(source: str, rules: "RuleList | Iterable[Rule]", *,
                  follow_links: bool = False) -> list:
    """The names `rsync -r -l -n --out-format=%n [rules] SOURCE DST/` prints, minus `./`.

    `source` ending in `/` sends the directory's contents; without it, the
    directory itself (its basename is the first name component).
    """
    rl = rules if isinstance(rules, RuleList) else RuleList(rules)
    out: list = []
    _transfer(source, rl, follow_links, out, None)
    return out


def _transfer(source: str, rl: "RuleList", follow_links: bool, out: Optional[list],
              record: Optional[dict]) -> None:
    """Append the transfer list to `out` (None: no list wanted), noting exclusions in
    `record`."""
    judge = _Judge(rl)
    matchers, cvs = judge.matchers, judge.cvs
    trailing = source.endswith("/")
    top = source.rstrip("/") or "/"
    if trailing:
        prefix = ""
    else:
        name = os.path.basename(top)
        is_dir = os.path.isdir(top) if follow_links or not os.path.islink(top) else False
        if _excluded(matchers, cvs, [], name, is_dir):
            _record(record, matchers, name, is_dir, top, [])
            return
        if out is not None:
            out.append(name + "/" if is_dir else name)
        if not is_dir:
            return
        prefix = name + "/"
    _walk(top, prefix, judge, rl.cvs_per_dir, follow_links, out, record)


def _matchers(rl: "RuleList") -> tuple:
    """([(include?, match)] of the rules, [(False, match)] of the --cvs-exclude ones)."""
    return ([(r.action == "+", compile_rule(r)) for r in rl.rules],
            [(False, compile_rule(r)) for r in rl.cvs])


def _record(record: Optional[dict], matchers: list, path: str, is_dir: bool, fs_path: str,
            local: list) -> None:
    """Note an excluded entry under the rule that matched it first (none: local or cvs),
    where that rule is one `record` keeps."""
    if record is None:
        return
    for k, (_, m) in enumerate(matchers):
        if m(path, is_dir):
            if k in record:
                record[k].append((path, is_dir, fs_path, local))
            return


class Exclusions:
    """For each rule of the list, the entries one walk found it excluded as the first
    rule to match: what replacing that rule can change (sent_if_replaced). One walk
    serves every candidate rule instead of a walk per rule; it lists nothing else, and
    keeps only what the rules in `only` (default: all) excluded."""

    def __init__(self, source: str, rules: "RuleList", follow_links: bool = False,
                 only: Optional[Iterable[Rule]] = None):
        self.rules = rules
        self.follow = follow_links
        keep = None if only is None else {id(r) for r in only}
        # index into rules.rules -> [(path, is_dir, fs_path, local)]
        self.by_rule: dict = {k: [] for k, r in enumerate(rules.rules)
                              if keep is None or id(r) in keep}
        _transfer(source, rules, follow_links, None, self.by_rule)

    def sent_if_replaced(self, old: Rule, new: Rule) -> list:
        """The names the transfer would add if `new` stood in place of `old`, where `new`
        matches no path that `old` does not (its anchored form)."""
        i = next(k for k, r in enumerate(self.rules.rules) if r is old)
        if i not in self.by_rule:
            raise ValueError(f"the walk kept no exclusions for {old.pattern!r} (see `only`)")
        rl = self.rules.replaced(old, new)
        judge = _Judge(rl)
        matchers, cvs = judge.matchers, judge.cvs
        out: list = []
        for path, is_dir, fs_path, local in self.by_rule[i]:
            if _excluded(matchers, cvs, local, path, is_dir):
                continue
            if is_dir:
                out.append(path + "/")
                _walk(fs_path, path + "/", judge, rl.cvs_per_dir, self.follow, out)
            else:
                out.append(path)
        return out


def _excluded(matchers: list, cvs: list, local: list, path: str, is_dir: bool) -> bool:
    verdict = _first_match(matchers, path, is_dir)
    if verdict is None and local:
        verdict = _first_match(local, path, is_dir)
    if verdict is None and cvs:
        verdict = _first_match(cvs, path, is_dir)
    return verdict is False


SENT, BY_LOCAL_OR_CVS = -2, -1


class _Judge:
    """_excluded for the walk, with the rule that decided, at a fraction of the cost.

    A rule that matches the last name alone (`data`, `*.pyc`, `__pycache__/`) answers
    the same for every path with that name. A rule that reads the whole path
    (`/outputs`, `build/**/tmp`) can only match a path whose name its last segment
    matches (`outputs`, `tmp`; see _name_gate). So for each distinct (name, is_dir)
    the judge finds once the first name rule to match and the path rules before it
    that the name lets through; where there are none, the name alone decides, and
    the walk looks the decision up (`final`). Same verdicts as _excluded, proven
    against rsync by tests/test_rsync_oracle.py."""

    def __init__(self, rl: "RuleList"):
        self.matchers, self.cvs = _matchers(rl)
        self.include = [inc for inc, _ in self.matchers]
        rules = list(zip(rl.rules, self.matchers))
        self._by_name = [(k, m) for k, (r, (_, m)) in enumerate(rules) if _name_only(r)]
        self._by_path = [(k, m, _name_gate(r)) for k, (r, (_, m)) in enumerate(rules)
                         if not _name_only(r)]
        self._cvs_by_name = all(_name_only(r) for r in rl.cvs)
        self._none = len(self.matchers)   # "no rule of the list matched"
        self._names: dict = {}   # (name, is_dir) -> (first name rule, path rules, cvs verdict)
        # (is_dir) -> {name: decision}, in a directory without .cvsignore
        self.final: tuple = ({}, {})

    def decide(self, path: str, name: str, is_dir: bool, local: list) -> int:
        """The index of the rule that decides for `path`, else BY_LOCAL_OR_CVS when a
        per-directory or cvs rule excludes it, else SENT."""
        key = (name, is_dir)
        hit = self._names.get(key)
        n = self._none
        if hit is None:
            first = next((k for k, m in self._by_name if m(name, is_dir)), n)
            paths = tuple((k, m) for k, m, gate in self._by_path
                          if k < first and (gate is None or gate(name, is_dir)))
            cvs = _first_match(self.cvs, name, is_dir) if self._cvs_by_name else None
            hit = self._names[key] = (first, paths, cvs)
            if not paths and (first < n or self._cvs_by_name):
                self.final[is_dir][name] = first if first < n else (
                    BY_LOCAL_OR_CVS if cvs is False else SENT)
        first, paths, cvs_verdict = hit
        for k, m in paths:
            if m(path, is_dir):
                return k
        if first < n:
            return first
        if local:
            verdict = _first_match(local, path, is_dir)
            if verdict is not None:
                return SENT if verdict else BY_LOCAL_OR_CVS
        if not self.cvs:
            return SENT
        if not self._cvs_by_name:
            cvs_verdict = _first_match(self.cvs, path, is_dir)
        return BY_LOCAL_OR_CVS if cvs_verdict is False else SENT


def _name_gate(rule: Rule) -> Optional[Matcher]:
    """For a rule that reads the whole path: what the path's last name must match for
    the rule to match it (the pattern's last segment: `*` and `?` stop at `/`), or None
    where that cannot be had safely (a negated rule, `**` in the last segment, an
    escape or a character class, which splitting at `/` could cut)."""
    pat = _without_dir_slash(rule.pattern)
    seg = pat.rpartition("/")[2]
    if rule.negate or "\\" in pat or "[" in pat or not seg or "**" in seg:
        return None
    return compile_rule(Rule("-", seg))


def _walk(dirpath: str, prefix: str, judge: _Judge, per_dir: bool, follow: bool,
          out: Optional[list], record: Optional[dict] = None) -> None:
    """Walk `dirpath` as rsync would send it: append the names sent to `out` (None: no
    list wanted, as Exclusions needs only what each rule excluded) and note in `record`
    each excluded entry under its rule. Most entries are decided by their name alone
    (judge.final), so the path is built only where it is needed."""
    try:
        with os.scandir(dirpath) as it:
            entries = list(it)   # closed before going deeper: no fd per level held
    except OSError:
        return
    local: list = []
    if per_dir:
        raw = fs.read_bytes(os.path.join(dirpath, ".cvsignore"))  # an input: no report over it
        for w in (raw or b"").decode("utf-8", "surrogateescape").split():
            if w == "!":
                local.clear()
            else:
                local.append((False, compile_rule(Rule("-", w, perishable=True))))
    decide, include = judge.decide, judge.include
    final_file, final_dir = judge.final if not local else ({}, {})
    for e in entries:
        name = e.name
        try:
            is_dir = e.is_dir(follow_symlinks=follow)
        except OSError:
            is_dir = False
        k = (final_dir if is_dir else final_file).get(name)
        if k is None:
            k = decide(prefix + name, name, is_dir, local)
        if k != SENT and (k < 0 or not include[k]):
            if record is not None and k in record:
                record[k].append((prefix + name, is_dir, e.path, local))
            continue
        if is_dir:
            path = prefix + name + "/"
            if out is not None:
                out.append(path)
            _walk(e.path, path, judge, per_dir, follow, out, record)
        elif out is not None:
            out.append(prefix + name)


def topmost(paths: Iterable[str]) -> list:
    """The paths not under another path of the set (directories end in `/`)."""
    dirs = {p for p in paths if p.endswith("/")}
    out = []
    for p in sorted(paths):
        parts = p.rstrip("/").split("/")
        if not any("/".join(parts[:k]) + "/" in dirs for k in range(1, len(parts))):
            out.append(p)
    return out


# ---- an rsync command line ------------------------------------------------------

# Long options that take an argument (rsync 3.2/3.5 options.c); the rest are flags.
_LONG_WITH_ARG = set("""exclude include exclude-from include-from filter files-from rsh
rsync-path temp-dir compare-dest copy-dest link-dest partial-dir backup-dir suffix chmod chown
usermap groupmap timeout contimeout bwlimit max-size min-size max-delete block-size log-file
log-file-format out-format password-file port sockopts protocol iconv checksum-choice cc
compress-choice zc compress-level zl skip-compress info debug modify-window remote-option
read-batch write-batch only-write-batch address outbuf stop-after stop-at copy-as
checksum-seed max-alloc time-limit early-input""".split())
_SHORT_WITH_ARG = set("efTBM@")


@dataclass
class Command:
    """What an rsync argv means for the filter emulation."""

    rules: RuleList
    sources: list               # [(word index, source text)]
    dest: Optional[str]
    rule_words: dict            # id(rule) → index of the argv word that holds it
    follow_links: bool = False
    rule_files: dict = None     # type: ignore[assignment]  # id(rule) → (file, line)
    notes: list = None          # type: ignore[assignment]


def parse_command(argv: list, read_file: Callable[[str], bytes],
                  cvsignore: Iterable[str] = ()) -> Command:
    """Parse `rsync ARGS...` (argv[0] is rsync). Raises Unsupported for what is
    not emulated; `read_file(path)` reads --exclude-from/--include-from files."""
    rules = RuleList()
    positional: list = []
    rule_words: dict = {}
    cmd = Command(rules, [], None, rule_words, notes=[], rule_files={})
    cvs = False
    i = 1
    only_positional = False

    def add(rule: Optional[Rule], idx: int) -> None:
        rules.add(rule)
        if rule is not None:
            rule_words[id(rule)] = idx

    while i < len(argv):
        w = argv[i]
        idx = i
        i += 1
        if only_positional or not w.startswith("-") or w == "-":
            positional.append((idx, w))
            continue
        if w == "--":
            only_positional = True
            continue
        if w.startswith("--"):
            name, eq, val = w[2:].partition("=")
            if name in _LONG_WITH_ARG and not eq:
                if i >= len(argv):
                    raise Unsupported(f"{w} without its argument")
                val, idx = argv[i], i
                i += 1
            _long_option(name, val, idx, add, read_file, cmd)
            if name == "cvs-exclude":
                cvs = True
            continue
        j = 1
        while j < len(w):   # a bundle of short flags, e.g. -avzC or -f'- x'
            c = w[j]
            j += 1
            if c in _SHORT_WITH_ARG:
                val = w[j:]
                if not val:
                    if i >= len(argv):
                        raise Unsupported(f"-{c} without its argument")
                    val, idx = argv[i], i
                    i += 1
                if c == "f":
                    add(parse_rule(val, origin=f"-f {val}"), idx)
                break
            if c == "C":
                cvs = True
            elif c == "F":
                raise Unsupported("-F (per-directory .rsync-filter files) is not emulated")
            elif c == "R":
                raise Unsupported("--relative (-R) is not emulated")
            elif c == "L":
                cmd.follow_links = True
            elif c == "r" or c == "a":
                pass
    if cvs:
        rules.add_cvs(cvsignore)
    if len(positional) >= 2:
        cmd.sources, cmd.dest = positional[:-1], positional[-1][1]
    else:
        cmd.sources = positional  # rsync with one argument lists it
    return cmd


def _long_option(name: str, val: str, idx: int, add: Callable, read_file: Callable,
                 cmd: Command) -> None:
    if name in ("exclude", "include"):
        add(parse_rule(val, default="-" if name == "exclude" else "+", old_prefixes=True,
                       origin=f"--{name}={val}"), idx)
    elif name == "filter":
        add(parse_rule(val, origin=f"--filter={val}"), idx)
    elif name in ("exclude-from", "include-from"):
        if val == "-":
            raise Unsupported(f"--{name}=- reads rules from stdin")
        data = read_file(val)
        for lineno, line in rule_file_lines(data):
            rule = parse_rule(line, default="-" if name == "exclude-from" else "+",
                              old_prefixes=True, origin=f"{val}:{lineno}: {line}")
            add(rule, idx)
            if rule is not None:
                cmd.rule_files[id(rule)] = (val, lineno)
    elif name == "files-from":
        raise Unsupported("--files-from is not emulated")
    elif name == "relative":
        raise Unsupported("--relative (-R) is not emulated")
    elif name in ("copy-links",):
        cmd.follow_links = True
    elif name in ("cvs-exclude",):
        pass
