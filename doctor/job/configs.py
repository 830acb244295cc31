"""Training configs: YAML loaded with the line of every mapping and key."""
from __future__ import annotations

import copy
import os
import re
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Iterator, Mapping, Optional

import yaml

from doctor.errors import InputError, wide_encoding
from doctor.fs import read_input
from doctor.model import Location

# Training configs are kilobytes; a bigger YAML is data, and PyYAML needs seconds
# and hundreds of MB per MB of it.
MAX_CONFIG_BYTES = 2 * 1024 * 1024
# Aliases may share a node many times over; past this many nodes once expanded
# (a "billion laughs" document), every check walking the config would hang.
MAX_EXPANDED_NODES = 1_000_000


class LineDict(dict):
    """A YAML mapping that remembers where it and each of its keys stand.

    `origins` names the (path, line) that set a key from outside this
    mapping's own file: a command-line override, or the file a Hydra
    composition took the key from. It is empty for a file as loaded.
    """

    line: int = 0
    key_lines: dict
    origins: Mapping[Any, tuple] = MappingProxyType({})

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)

    def origin_of(self, key: Any) -> Optional[tuple]:
        """(path, line) of what set `key` from outside this mapping's file, if anything."""
        return self.origins.get(key)


def copy_tree(value: Any, _memo: Optional[dict] = None) -> Any:
    """A deep copy of a loaded YAML tree (LineDicts, dicts, lists, scalars), as
    copy.deepcopy makes it (a node shared by YAML aliases stays shared), 4.5× faster
    on the monorepo's configs: a Hydra composition copies every step's config tree. A LineDict's
    `line`, `key_lines` and `origins` are shared, not copied: they are only ever
    replaced, never changed in place, once the file is loaded."""
    t = type(value)
    if t is str or t is int or t is float or t is bool or value is None:
        return value
    memo = {} if _memo is None else _memo
    hit = memo.get(id(value))
    if hit is not None:
        return hit
    if t is LineDict or t is dict:
        mapping = memo[id(value)] = t()
        if t is LineDict:
            mapping.__dict__.update(value.__dict__)
        for k, v in value.items():
            mapping[k] = copy_tree(v, memo)
        return mapping
    if t is list:
        items: list = []
        memo[id(value)] = items
        items += [copy_tree(v, memo) for v in value]
        return items
    return copy.deepcopy(value, memo)   # a date, a set, bytes: rare, and left to copy


def _construct_timestamp(loader: Any, node: yaml.ScalarNode) -> Any:
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_timestamp(loader, node)
    except ValueError as exc:  # 2027-02-30: PyYAML raises a bare ValueError
        raise yaml.constructor.ConstructorError(
            None, None, f"{node.value!r} is not a valid date ({exc})", node.start_mark) from None


def _construct_int(loader: Any, node: yaml.ScalarNode) -> Any:
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
    except ValueError:  # past Python's 4,300 digits (int_max_str_digits): a bare ValueError
        raise yaml.constructor.ConstructorError(
            None, None, f"an integer of {len(node.value):,} characters is too long to read",
            node.start_mark) from None


def _construct_mapping(loader: Any, node: yaml.MappingNode) -> LineDict:
    explicit = {id(k) for k, _ in node.value}  # keys written here, not merged in by <<
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    written: set = set()
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):  # as yaml.safe_load and OmegaConf do
            raise yaml.constructor.ConstructorError(
                None, None, "a mapping or list used as a key (the job's YAML loader refuses "
                "it: found unhashable key)", key_node.start_mark)
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if id(key_node) in explicit:
            if key in written:  # PyYAML keeps the last silently; OmegaConf refuses the file
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first on line {out.key_lines[key]})",
                    key_node.start_mark)
            written.add(key)
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = line
    return out


class _PyLoader(yaml.SafeLoader):
    pass


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml where installed: 3-4 × faster than the pure-Python parser."""


for _cls in (_PyLoader, _Loader):
    _cls.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    _cls.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp)
    _cls.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _check_expansion(node: yaml.Node, path: Path) -> None:
    """Refuse documents whose aliases expand past MAX_EXPANDED_NODES (iteratively:
    the size of each distinct node is computed once)."""
    size: dict = {}
    sizing: set = set()  # nodes whose contents are being sized: met again, one holds itself
    stack = [(node, False)]
    while stack:
        n, done = stack.pop()
        if id(n) in size:
            continue
        kids = ([c for pair in n.value for c in pair] if isinstance(n, yaml.MappingNode)
                else list(n.value) if isinstance(n, yaml.SequenceNode) else [])
        if not done and id(n) in sizing:
            raise InputError(f"{path}: invalid YAML: an alias inside the node it names "
                             "(the document contains itself)")
        if done:
            sizing.discard(id(n))
            size[id(n)] = 1 + sum(size.get(id(c), 0) for c in kids)
            if size[id(n)] > MAX_EXPANDED_NODES:
                raise InputError(f"{path}: its aliases expand to more than "
                                 f"{MAX_EXPANDED_NODES:,} nodes (a YAML bomb?)")
        else:
            sizing.add(id(n))
            stack.append((n, True))
            stack += [(c, False) for c in kids if id(c) not in size]


def load_yaml_text(path: Path, kind: str = "YAML file") -> Any:
    """Parse one YAML file; every way it can be bad is an InputError of one line."""
    raw = read_input(path, kind, MAX_CONFIG_BYTES)
    encoding = wide_encoding(raw) or "utf-8-sig"
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text, not YAML") from None
    try:
        try:
            docs = _load_all(text, path, _Loader)
        except yaml.YAMLError:
            docs = _load_all(text, path, _PyLoader)  # its messages say more (tabs, chars)
    except RecursionError:
        raise InputError(f"{path}: invalid YAML: nested too deeply") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if "\t" in problem or "'\\t'" in problem:
            problem = "tab character used for indentation (YAML allows only spaces)"
        raise InputError(f"{where}: invalid YAML: {problem}") from None
    docs = [d for d in docs if d is not None]
    if not docs:
        return None
    return docs[0] if len(docs) == 1 else docs


def _load_all(text: str, path: Path, loader_cls: type) -> list:
    loader = loader_cls(text)
    try:
        docs = []
        anchors = "&" in text   # no anchor, no alias: nothing can expand
        while loader.check_node():
            node = loader.get_node()
            if anchors:
                _check_expansion(node, path)
            docs.append(loader.construct_document(node))
        return docs
    finally:
        loader.dispose()


@dataclass
class ConfigFile:
    path: Path          # absolute
    rel: str            # relative to the repo when inside it
    data: Any

    def mappings(self) -> Iterator[tuple]:
        """Every mapping in the document, at any depth: (key path, LineDict), in document
        order. Listed once per file (a dozen checks ask, of a thousand configs)."""
        found = self.__dict__.get("_mappings")
        if found is None:
            found = self.__dict__["_mappings"] = _mappings_of(self.data)
        return iter(found)

    def line_of(self, mapping: Any, key: Any = None) -> Optional[int]:
        if isinstance(mapping, LineDict):
            return mapping.line_of(key) if key is not None else mapping.line
        return None

    def location(self, mapping: Any, key: Any = None) -> Location:
        """Where a key was written: its override on the command line, the file a Hydra
        composition took it from, else this file at its line."""
        origin = mapping.origin_of(key) if isinstance(mapping, LineDict) and key is not None \
            else None
        if origin is None:
            return Location(self.rel, self.line_of(mapping, key) or None)
        path, line = origin
        # `src/pkg/../../configs/x.yaml` (a Hydra config_path) is shown, and located by
        # SARIF viewers, as configs/x.yaml
        path = os.path.normpath(path) if ".." in str(path).split(os.sep) else path
        root = str(self.path)[:-len(self.rel)] if str(self.path).endswith(self.rel) else ""
        if root and str(path).startswith(root):
            path = str(path)[len(root):]
        return Location(str(path), line or None)


def _mappings_of(data: Any) -> list:
    """[(key path, mapping)] of every mapping in `data`, depth first in document order."""
    out: list = []
    stack: list = [((), data)] if isinstance(data, (dict, list)) else []
    while stack:
        path, node = stack.pop()
        if isinstance(node, dict):
            out.append((path, node))
            kids = [(path + (k,), v) for k, v in node.items() if isinstance(v, (dict, list))]
        else:   # a list
            kids = [(path + (i,), v) for i, v in enumerate(node) if isinstance(v, (dict, list))]
        kids.reverse()
        stack += kids
    return out


@dataclass(frozen=True)
class Unknown:
    """A value the doctor cannot know; `reason` says which link is missing (an override
    written with a variable it cannot resolve, ...)."""

    reason: str


_UNRESOLVED = re.compile(r"\$\{|\$[A-Za-z_]|^\?\?\?$|^MISSING$")


def is_unresolved(value: Any) -> bool:
    """A value that is filled in later: OmegaConf/Hydra `${...}`, `$VAR`, `???`, or an
    override the doctor cannot read (Unknown)."""
    return isinstance(value, Unknown) or \
        isinstance(value, str) and bool(_UNRESOLVED.search(value.strip()))


def keypath(path: tuple) -> str:
    """`data.train[0].num_workers` style, for messages."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out
