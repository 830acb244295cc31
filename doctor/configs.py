"""Training configs: YAML loaded with the line of every mapping and key."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

import yaml

from doctor.errors import InputError, read_input

MAX_CONFIG_BYTES = 20 * 1024 * 1024


class LineDict(dict):
    """A YAML mapping that remembers where it and each of its keys stand."""

    line: int = 0
    key_lines: dict

    def line_of(self, key: Any) -> int:
        return self.key_lines.get(key, self.line)


class _Loader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            key = str(key)
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml_text(path: Path, kind: str = "YAML file") -> Any:
    """Parse one YAML file; every way it can be bad is an InputError of one line."""
    raw = read_input(path, kind, MAX_CONFIG_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text, not YAML") from None
    try:
        docs = list(yaml.load_all(text, Loader=_Loader))
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


@dataclass
class ConfigFile:
    path: Path          # absolute
    rel: str            # relative to the repo when inside it
    data: Any

    def mappings(self) -> Iterator[tuple]:
        """Every mapping in the document, at any depth: (key path, LineDict)."""
        yield from _walk(self.data, ())

    def line_of(self, mapping: Any, key: Any = None) -> Optional[int]:
        if isinstance(mapping, LineDict):
            return mapping.line_of(key) if key is not None else mapping.line
        return None


def _walk(node: Any, path: tuple) -> Iterator[tuple]:
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from _walk(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, path + (i,))


_UNRESOLVED = re.compile(r"\$\{|\$[A-Za-z_]|^\?\?\?$|^MISSING$")


def is_unresolved(value: Any) -> bool:
    """A value that is filled in later: OmegaConf/Hydra `${...}`, `$VAR`, `???`."""
    return isinstance(value, str) and bool(_UNRESOLVED.search(value.strip()))


def keypath(path: tuple) -> str:
    """`data.train[0].num_workers` style, for messages."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out
