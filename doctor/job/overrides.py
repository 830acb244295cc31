"""The configs a launched step reads, with its command-line overrides applied.

Answers: which overrides and config files the argv of an entry program names
(Hydra's `a.b=c`, `+a.b=c`, `++a.b=c`, `~a.b`, `group=option`, `-cn`/`-cp`/`-cd`;
LightningCLI/jsonargparse's `--a.b=c`, `--a.b c`, `--config X`, positional YAML),
what a config holds once they are applied, and what Hydra composes from a
primary config's defaults list. Values are typed the way each tool types them.
A value that hangs on something not known here (an unresolved `$VAR`, a Hydra
sweep or function) is an `Unknown` that carries the reason, never a guess.

Does not answer: which tool the program really uses (a word is read by its
form), the defaults that code declares (structured configs, LightningCLI
signatures, so a jsonargparse `--a.b 4` is typed as YAML, not by the option's
type), Hydra's own `hydra:` node and search path plugins, or what the
configs' own `${...}` interpolations resolve to (they stay strings).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union

import yaml

from doctor import fs
from doctor.job.configs import LineDict, Unknown, copy_tree

Resolver = Callable[[str], Optional[str]]
Origin = Tuple[str, int]


@dataclass(frozen=True)
class Override:
    """One override as written on the command line."""

    raw: str                        # the words as written: "+model.x=1", "--trainer.devices 4"
    key: str                        # "model.x", or a Hydra group such as "experiment", "db/sub"
    value: Any                      # typed like the tool types it; Unknown when not known
    action: str = "set"             # set, add (+), force (++), delete (~)
    tool: str = "hydra"             # hydra, or cli (jsonargparse / LightningCLI)
    package: Optional[str] = None   # Hydra's `group@package`
    has_value: bool = True          # False for a bare `~key`


@dataclass(frozen=True)
class ConfigArg:
    """A config file named by `--config X`, `-c X` or a positional `*.yaml`."""

    path: Union[str, Unknown]
    raw: str


@dataclass
class ParsedArgs:
    """What an entry program's argv says about its configs, in argv order."""

    items: List[Union[Override, ConfigArg]] = field(default_factory=list)
    config_name: Optional[str] = None     # Hydra -cn / --config-name
    config_path: Optional[str] = None     # Hydra -cp / --config-path (relative to the script)
    config_dir: Optional[str] = None      # Hydra -cd / --config-dir (relative to the cwd)
    flags: List[str] = field(default_factory=list)        # options that name no config value
    positionals: List[str] = field(default_factory=list)  # e.g. LightningCLI's `fit`

    @property
    def overrides(self) -> List[Override]:
        return [i for i in self.items if isinstance(i, Override)]

    @property
    def configs(self) -> List[ConfigArg]:
        return [i for i in self.items if isinstance(i, ConfigArg)]


# --- reading argv --------------------------------------------------------------------------

_HYDRA_NAMES = {"-cn": "config_name", "--config-name": "config_name",
                "-cp": "config_path", "--config-path": "config_path",
                "-cd": "config_dir", "--config-dir": "config_dir"}
# Hydra options that take a value but name no config (`-c` is `--cfg` when followed by these).
_HYDRA_VALUED = {"--cfg", "-p", "--package", "--experimental-rerun"}
_CFG_KINDS = {"job", "hydra", "all"}
# Options that take no value: the word after them is read on its own.
_NO_VALUE = {"-m", "--multirun", "-r", "--run", "--resolve", "-h", "--help", "--hydra-help",
             "--version", "-sc", "--shell-completion", "-i", "--info", "--print_config",
             "--print-config"}
_HYDRA_WORD = re.compile(
    r"(?P<op>~|\+\+|\+)?(?P<key>[A-Za-z0-9_$][\w$-]*(?:[./][\w$-]+)*)"
    r"(?:@(?P<pkg>[\w$.-]*))?(?:(?P<eq>=)[ \t]*(?P<value>.*))?", re.S)
_NEGATIVE = re.compile(r"-\.?\d")


def parse_overrides(argv: List[str], resolve: Optional[Resolver] = None) -> ParsedArgs:
    """Read the argv that follows the entry program (`train.py`, `-m pkg`).

    `resolve(name)` gives a shell variable's value ("" when set empty, None when
    not known); without it every `$VAR` is Unknown.
    """
    out = ParsedArgs()
    i = 0
    while i < len(argv):
        word = argv[i]
        nxt = argv[i + 1] if i + 1 < len(argv) else None
        name, eq, val = word.partition("=")
        takes_next = not eq and nxt is not None and not _is_option(nxt) and name not in _NO_VALUE
        value = val if eq else (nxt if takes_next else None)
        step = 1 if eq or not takes_next else 2
        raw = word if step == 1 else f"{word} {nxt}"
        if name in _HYDRA_NAMES and value is not None:
            setattr(out, _HYDRA_NAMES[name], value)
        elif name in ("--config", "-c") and value is not None and value not in _CFG_KINDS:
            out.items.append(ConfigArg(_expand(value, resolve), raw))
        elif name in _HYDRA_VALUED or name == "-c":
            out.flags.append(raw)
        elif word.startswith("--") and len(name) > 2 and value is not None:
            out.items.append(Override(raw, name[2:], _cli_value(value, resolve), tool="cli"))
        elif _is_option(word):
            out.flags.append(word)
            step = 1
        elif _HYDRA_WORD.fullmatch(word) and ("=" in word or word.startswith("~")):
            out.items.append(_hydra_override(word, resolve))
            step = 1
        elif word.endswith((".yaml", ".yml")):
            out.items.append(ConfigArg(_expand(word, resolve), word))
            step = 1
        else:
            out.positionals.append(word)
            step = 1
        i += step
    return out


def _is_option(word: str) -> bool:
    return word.startswith("-") and word != "-" and not _NEGATIVE.match(word)


def _hydra_override(word: str, resolve: Optional[Resolver]) -> Override:
    m = _HYDRA_WORD.fullmatch(word)
    assert m is not None
    action = {"~": "delete", "+": "add", "++": "force", None: "set"}[m["op"]]
    text = m["value"] if m["eq"] else None
    value: Any = None
    if text is not None:
        expanded = _expand(text, resolve)
        value = expanded if isinstance(expanded, Unknown) else hydra_value(expanded)
    return Override(word, m["key"], value, action, "hydra", m["pkg"], m["eq"] is not None)


# --- shell variables -------------------------------------------------------------------------

# `${NAME}` with a shell name is bash's; `${a.b}`, `${oc.env:X}` are left to Hydra.
_SHELL_VAR = re.compile(
    r"\$(?:\{(?P<braced>[A-Za-z_]\w*)(?P<op>:?-[^}]*)?\}|(?P<name>[A-Za-z_]\w*)|(?P<odd>[(0-9@*#?!$]))")


def _expand(text: str, resolve: Optional[Resolver]) -> Union[str, Unknown]:
    """`text` with its shell variables substituted, or Unknown naming the first one missing."""
    missing: List[str] = []

    def one(m: re.Match) -> str:
        if m["odd"]:
            missing.append(f"`{m.group(0)}` is only known when the script runs")
            return ""
        name = m["braced"] or m["name"]
        value = resolve(name) if resolve else None
        op = m["op"] or ""
        if op and (value is not None and (value or not op.startswith(":"))):
            return value
        if op and value is not None:
            return op.lstrip(":")[1:]  # set-but-empty with `:-`: the default is used
        if value is None:
            missing.append(f"${name} is not known here")
            return ""
        return value

    out = _SHELL_VAR.sub(one, text)
    return Unknown(missing[0]) if missing else out


# --- Hydra's value grammar (hydra/grammar/OverrideLexer.g4) -----------------------------------

_UINT = r"(?:0|[1-9](?:_?\d)*)"
_POINT = rf"(?:{_UINT}\.|{_UINT}?\.\d(?:_?\d)*)"
_INT = re.compile(rf"[+-]?{_UINT}")
_FLOAT = re.compile(rf"[+-]?(?:(?:{_UINT}|{_POINT})[eE][+-]?\d(?:_?\d)*|{_POINT}|(?i:inf|nan))")
_ESCAPES = "\\()[]{}:=, \t"


class _NotHydra(Exception):
    """The value is outside what this reader follows; the message says why."""


def hydra_value(text: str) -> Any:
    """A Hydra override's value as Hydra types it: int, float, bool, None, str, list, dict;
    Unknown for a sweep (`a,b`), a function (`range(3)`) or text Hydra would refuse."""
    reader = _HydraReader(text)
    try:
        value = reader.element()
        if reader.peek() == ",":
            raise _NotHydra("a sweep (`a,b`) runs several jobs; compose takes none of them")
        if reader.i < len(text):
            raise _NotHydra(f"Hydra cannot parse {text!r}")
    except _NotHydra as exc:
        return Unknown(str(exc))
    return value


class _HydraReader:
    """A recursive-descent reader of one override value."""

    def __init__(self, text: str) -> None:
        self.text, self.i = text, 0

    def peek(self) -> str:
        while self.i < len(self.text) and self.text[self.i] in " \t":
            self.i += 1
        return self.text[self.i] if self.i < len(self.text) else ""

    def element(self) -> Any:
        c = self.peek()
        if not c:
            return self._primitive(stop="")
        if c == "[":
            return self._container("]", self._list_item)
        if c == "{":
            return dict(self._container("}", self._dict_item))
        if c in ("'", '"'):
            return self._quoted(c)
        return self._primitive(stop=",]})([{=")

    def _container(self, close: str, item: Callable[[], Any]) -> list:
        self.i += 1
        items: list = []
        if self.peek() == close:
            self.i += 1
            return items
        while True:
            items.append(item())
            c = self.peek()
            self.i += 1
            if c == close:
                return items
            if c != ",":
                raise _NotHydra(f"Hydra cannot parse {self.text!r}")

    def _list_item(self) -> Any:
        return self.element()

    def _dict_item(self) -> tuple:
        key = self._primitive(stop=":,]})([{=", typed=False)
        if self.peek() != ":" or not key:
            raise _NotHydra(f"Hydra cannot parse {self.text!r}")
        self.i += 1
        return key, self.element()

    def _quoted(self, quote: str) -> str:
        end = self.i + 1
        while True:
            end = self.text.find(quote, end)
            if end < 0:
                raise _NotHydra(f"unterminated quote in {self.text!r}")
            slashes = len(self.text[:end]) - len(self.text[:end].rstrip("\\"))
            if slashes % 2 == 0:
                break
            end += 1
        body = self.text[self.i + 1:end]
        self.i = end + 1
        # `\` before a quote escapes it and halves the backslashes before it; others stay.
        body = re.sub(r"(\\+)(?=" + quote + "|$)", lambda m: "\\" * (len(m[1]) // 2), body)
        return body

    def _primitive(self, stop: str, typed: bool = True) -> Any:
        start, text, parts = self.i, self.text, []
        plain = True  # one token with no escapes: the only kind Hydra types
        while self.i < len(text) and text[self.i] not in stop:
            c = text[self.i]
            if text.startswith("${", self.i):
                end = text.find("}", self.i)
                if end < 0:
                    raise _NotHydra(f"Hydra cannot parse {text!r}")
                parts.append(text[self.i:end + 1])
                self.i = end + 1
            elif c == "\\" and self.i + 1 < len(text) and text[self.i + 1] in _ESCAPES:
                parts.append(text[self.i + 1])
                plain = False
                self.i += 2
            elif c in "'\"":
                raise _NotHydra(f"a quote inside {text!r}: Hydra cannot parse it")
            else:
                parts.append(c)
                self.i += 1
        if self.i < len(text) and text[self.i] == "(":
            raise _NotHydra(f"a Hydra function in {text!r}")
        if self.i == start:
            if typed and self.i >= len(text):
                return ""  # `key=`: the empty string
            raise _NotHydra(f"Hydra cannot parse {text!r}")
        value = "".join(parts).strip(" \t")
        return _typed(value) if typed and plain else value


def _typed(token: str) -> Any:
    if _INT.fullmatch(token):
        return int(token)
    if _FLOAT.fullmatch(token):
        return float(token)
    low = token.lower()
    if low in ("true", "false"):
        return low == "true"
    return None if low == "null" else token


# --- jsonargparse's values --------------------------------------------------------------------

class _CliLoader(yaml.SafeLoader):
    """jsonargparse's YAML: no timestamps, and `1e3` is a float (_loaders_dumpers.py)."""


_CliLoader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag not in ("tag:yaml.org,2002:timestamp",
                                                   "tag:yaml.org,2002:float")]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_CliLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
        |\.[0-9_]+(?:[eE][-+][0-9]+)?
        |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
        |[-+]?\.(?:inf|Inf|INF)
        |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."))


def _cli_value(text: str, resolve: Optional[Resolver]) -> Any:
    expanded = _expand(text, resolve)
    if isinstance(expanded, Unknown):
        return expanded
    try:
        value = yaml.load(expanded, Loader=_CliLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError:
        return expanded
    # jsonargparse keeps `a:` and `{a, b}` as the text: YAML would make them null-valued dicts.
    if isinstance(value, dict) and value and all(v is None for v in value.values()):
        return expanded
    return expanded if value is None and expanded.strip() == "" else value


# --- applying overrides ----------------------------------------------------------------------

_ABSENT = object()


def apply_overrides(data: Any, overrides: List[Override], origin: Optional[Origin] = None,
                    notes: Optional[List[str]] = None) -> Any:
    """A copy of `data` with `overrides` applied in order; `data` is never changed.

    Hydra's overrides follow Hydra's rules: `a.b=c` only changes a key that
    exists, `+` adds one that does not, `++` does either, `~` deletes. An
    override the tool would refuse (so the job would stop) is left out and
    described in `notes`. jsonargparse's `--a.b=c` sets the key, creating
    its parents. Every key set remembers `origin` in its mapping's `origins`.
    """
    out = copy_tree(data) if data is not None else _new_dict()
    for o in overrides:
        problem = _apply_one(out, o, origin) if isinstance(out, dict) else "the config is a list"
        if problem and notes is not None:
            notes.append(f"`{o.raw}`: {problem}")
    return out


def apply_cli(parsed: ParsedArgs, data: Any, load: Callable[[str], Any],
              origin: Optional[Origin] = None, notes: Optional[List[str]] = None) -> Any:
    """What jsonargparse / LightningCLI reads: starting from `data` (the parser's defaults,
    or an empty mapping), each `--config` file merged and each `--a.b=c` set, in argv order,
    so a later one wins. `load(path)` reads one config file (a LineDict tree)."""
    out = copy_tree(data) if data is not None else _new_dict()
    for item in parsed.items:
        if isinstance(item, Override):
            if item.tool == "cli":
                out = apply_overrides(out, [item], origin, notes)
            continue
        if isinstance(item.path, Unknown):
            if notes is not None:
                notes.append(f"`{item.raw}`: {item.path.reason}; that config is not read")
            continue
        loaded = load(item.path)
        if isinstance(loaded, dict):
            _merge(out, loaded, _file_origin(item.path))
    return out


def _file_origin(path: str) -> Callable[[Any, Any], Origin]:
    """Where a key merged from the file `path` stands: that file, at the key's line."""
    def where(m: Any, k: Any) -> Origin:
        return (path, m.line_of(k) if isinstance(m, LineDict) else 0)
    return where


def _apply_one(root: dict, o: Override, origin: Optional[Origin]) -> Optional[str]:
    *parents, last = o.key.split(".")
    hydra = o.tool == "hydra"
    create = not hydra or o.action in ("add", "force")
    parent = _descend(root, parents, create)
    if parent is None:
        return f"{'.'.join(parents)} is not a mapping in the config, so nothing was set"
    current = _get(parent, last)
    if o.action == "delete":
        if current is _ABSENT or current is None:
            return f"Hydra refuses: there is no {o.key} to delete"
        if o.has_value and not isinstance(o.value, Unknown) and o.value != current:
            return f"Hydra refuses: {o.key} is {current!r}, not {o.value!r}"
        _delete(parent, last)
        return "deleted, but only if its value equals the unknown one" \
            if isinstance(o.value, Unknown) else None
    if hydra and o.action == "set" and current is _ABSENT:
        return f"Hydra refuses: {o.key} is not in the config (`+{o.raw}` would add it)"
    if hydra and o.action == "set" and isinstance(o.value, dict) and isinstance(current, dict) \
            and _new_keys(current, o.value):
        return f"Hydra refuses: {o.key} has no {_new_keys(current, o.value)[0]} (use `+`)"
    if hydra and o.action == "add" and current not in (_ABSENT, None) \
            and not isinstance(o.value, (dict, list)):
        return f"Hydra refuses: {o.key} is already set (`+{o.raw}` would override it)"
    return _set(parent, last, o.value, origin, strict=hydra)


def _new_keys(have: dict, value: dict) -> List[str]:
    """Keys of `value` that `have` lacks: Hydra's struct mode refuses them without `+`."""
    out = []
    for k, v in value.items():
        if k not in have:
            out.append(str(k))
        elif isinstance(v, dict) and isinstance(have[k], dict):
            out += [f"{k}.{sub}" for sub in _new_keys(have[k], v)]
    return out


def _descend(node: Any, parts: List[str], create: bool) -> Any:
    for part in parts:
        child = _get(node, part)
        if (child is _ABSENT or child is None) and create and isinstance(node, dict):
            child = _new_dict()
            node[_key(node, part)] = child
        if not isinstance(child, (dict, list)):
            return None
        node = child
    return node


def _key(node: dict, part: str) -> Any:
    """The key `part` names: YAML may have read `1:` as the int 1."""
    if part not in node and part.lstrip("-").isdigit() and int(part) in node:
        return int(part)
    return part


def _get(node: Any, part: str) -> Any:
    if isinstance(node, dict):
        return node.get(_key(node, part), _ABSENT)
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    return _ABSENT


def _delete(node: Any, part: str) -> None:
    if isinstance(node, list):
        del node[int(part)]
        return
    key = _key(node, part)
    del node[key]
    if isinstance(node, LineDict) and key in node.origins:
        node.origins = {k: v for k, v in node.origins.items() if k != key}


def _set(parent: Any, part: str, value: Any, origin: Optional[Origin],
         strict: bool) -> Optional[str]:
    current = _get(parent, part)

    def where(m: Any, k: Any) -> Optional[Origin]:
        return origin

    if isinstance(value, dict) and isinstance(current, dict):
        _merge(current, value, where)  # OmegaConf.update(merge=True) merges mappings
        return None
    if strict and isinstance(current, (dict, list)) and isinstance(value, (dict, list)) \
            and isinstance(value, dict) != isinstance(current, dict):
        return f"Hydra refuses to merge a {type(value).__name__} into a {type(current).__name__}"
    if isinstance(parent, list):
        if not part.isdigit() or int(part) >= len(parent):
            return f"index {part} is past the end of the list"
        parent[int(part)] = _tree(value, where)
        return None
    key = _key(parent, part)
    parent[key] = _tree(value, where)
    _mark(parent, key, origin)
    return None


def _merge(dst: dict, src: dict, where: Callable[[Any, Any], Optional[Origin]],
           keep_missing: bool = False) -> None:
    """Merge `src` into `dst` as OmegaConf does: mappings merge key by key, all else replaces.
    With `keep_missing`, a `???` does not replace a value (OmegaConf's merge of a MISSING)."""
    for key, value in src.items():
        here = dst.get(key, _ABSENT)
        if isinstance(value, dict) and isinstance(here, dict):
            _merge(here, value, where, keep_missing)
            continue
        if keep_missing and value == "???" and here is not _ABSENT:
            continue
        dst[key] = _tree(value, where)
        _mark(dst, key, where(src, key))
        if isinstance(dst, LineDict) and isinstance(src, LineDict) and key in src.key_lines:
            dst.key_lines = {**dst.key_lines, key: src.key_lines[key]}   # in the file it came from


def _tree(value: Any, where: Callable[[Any, Any], Optional[Origin]]) -> Any:
    """A copy of `value` in which every key of every mapping remembers `where` it came from."""
    if isinstance(value, dict):
        out = _new_dict(value)
        _merge(out, value, where)
        return out
    return copy_tree(value)


def _new_dict(like: Any = None) -> LineDict:
    """An empty LineDict, at the line of `like` and knowing its key lines when it has them."""
    out = LineDict()
    out.line = getattr(like, "line", 0)
    out.key_lines = dict(getattr(like, "key_lines", {}))
    return out


def _mark(node: Any, key: Any, origin: Optional[Origin]) -> None:
    if isinstance(node, LineDict) and origin is not None:
        node.origins = {**node.origins, key: origin}


# --- which files a step names ----------------------------------------------------------------

def named_configs(parsed: ParsedArgs, cwd: Path, repo: Optional[Path] = None,
                  script: Optional[Path] = None) -> List[Tuple[Path, bool]]:
    """(path, exists) of each config file the argv names.

    `--config X` and positional YAML are relative to `cwd`; Hydra's
    `--config-path` to the script's directory (`script`, else `cwd`) and
    `--config-dir` to `cwd`. A `--config-name` without either is looked up in
    the repo, since its directory is set in code (`@hydra.main(config_path=)`);
    when not found there it is left out rather than called missing.
    """
    out = []
    for c in parsed.configs:
        if isinstance(c.path, str):
            p = Path(c.path) if os.path.isabs(c.path) else cwd / c.path
            out.append((p, fs.is_file(p)))
    if parsed.config_name:
        name = parsed.config_name if parsed.config_name.endswith((".yaml", ".yml")) \
            else f"{parsed.config_name}.yaml"
        dirs = []
        if parsed.config_path:
            dirs.append((Path(script).parent if script else cwd) / parsed.config_path)
        if parsed.config_dir:
            dirs.append(cwd / parsed.config_dir)
        found = next((d / name for d in dirs if fs.is_file(d / name)), None)
        if found is None and not parsed.config_path and repo is not None:
            found = _find_in(repo, name)
        if found is not None:
            out.append((found, True))
        elif dirs:
            out.append((dirs[0] / name, False))
    return out


def _find_in(repo: Path, name: str) -> Optional[Path]:
    # fs.walk: no environment, installed package or cache holds the job's config
    for top, _dirs, files in fs.walk(repo):
        if name in files and os.path.isfile(os.path.join(top, name)):
            return Path(top) / name
    return None
