"""Hydra composition: the primary config's defaults list, group choices and overrides,
composed the way Hydra 1.3 does (proven against it in tests/test_overrides.py)."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional, Tuple, Union

from doctor import fs
from doctor.errors import InputError
from doctor.job.configs import LineDict, load_yaml_text
from doctor.job.overrides import Override, Unknown, _file_origin, _merge, _new_dict, apply_overrides

Origin = Tuple[str, int]


# ---- composition -----------------------------------------------------------------------

@dataclass
class Composition:
    """What Hydra composes: the data (the `hydra:` node dropped; every key's `origins` names
    the file and line it came from), the files merged in order, and what was not followed."""

    data: Any
    files: List[Path] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    named_by: dict = field(default_factory=dict)   # file -> (path, line) that chose it
    # (file, (path, line) of the entry, group) of each non-optional defaults entry whose
    # file is not under the config directory: Hydra stops with "Could not find …"
    missing: List[tuple] = field(default_factory=list)
    # `hydra.searchpath` (in a config or an override) adds directories the doctor does not read
    searchpath: bool = False


@dataclass
class _Default:
    """One entry of a defaults list (hydra/core/default_element.py, simplified)."""

    group: Optional[str] = None     # "db", "/model"; None for a config path such as "base"
    name: Any = None                # the option, options, or the config path
    package: Optional[str] = None   # `@pkg`, relative to the parent's package
    optional: bool = False
    override: bool = False
    is_self: bool = False
    parent_group: str = ""
    parent_package: str = ""
    where: Optional[Origin] = None  # the defaults entry or override that names it

    def _path(self) -> str:
        return f"{self.group}/_" if self.group is not None else str(self.name)

    def group_path(self) -> str:
        rel = self._path()
        if not rel.startswith("/") and self.parent_group:
            rel = f"{self.parent_group}/{rel}"
        return os.path.dirname(rel.lstrip("/"))

    def config_path(self) -> str:
        leaf = self.name if self.group is not None else os.path.basename(str(self.name))
        return f"{self.group_path()}/{leaf}".lstrip("/")

    def final_package(self, header: Optional[str] = None) -> str:
        pkg = self.package if self.package is not None else header
        if pkg is None:
            pkg = os.path.dirname(self._path().lstrip("/")).replace("/", ".")
        full = pkg if not self.parent_package else (
            self.parent_package if not pkg else f"{self.parent_package}.{pkg}")
        cut = full.rfind("_global_")
        return full if cut < 0 else full[cut + len("_global_") + 1:]

    def override_key(self) -> str:
        group = self.group_path()
        final = self.final_package()
        return group if final == group.replace("/", ".") else f"{group}@{final or '_global_'}"


def compose(config_dir: Union[str, Path], config_name: str, overrides: List[Override],
            origin: Optional[Origin] = None, loaded: Optional[dict] = None,
            realpath: Callable[[Any], str] = fs.realpath) -> Composition:
    """What `hydra.compose(config_name, overrides)` returns for configs in `config_dir`.

    Follows the defaults lists (`- group: option`, `- group/option`, `_self_`,
    `- override group: option`, `optional`, null, option lists, `@package` and
    `# @package` headers) and `group=option`, `+group=option`, `~group`, then
    the value overrides. A missing option, an interpolated choice or an
    override Hydra would refuse is described in `notes`, not guessed.

    `loaded`: real path → the file's YAML as load_yaml_text returned it, shared by the
    compositions of one run (read, never changed: the result is built of copies);
    `realpath` the run's (fs.RealPaths), which resolves each directory once.
    """
    return _Composer(Path(config_dir), origin, loaded, realpath).run(config_name, overrides)


class _Composer:
    def __init__(self, root: Path, origin: Optional[Origin],
                 loaded: Optional[dict] = None,
                 realpath: Callable[[Any], str] = fs.realpath) -> None:
        self.root, self.origin, self.realpath = root, origin, realpath
        self.loaded = {} if loaded is None else loaded
        self.result = Composition(_new_dict())
        self.choices: dict = {}       # override key -> option, from the command line first
        self.from_cli: set = set()
        self.used: set = set()
        self.appends: List[_Default] = []
        self.deletions: dict = {}     # override key -> option or None
        self.deleted: set = set()
        self.known: dict = {}         # override key -> the option first taken
        self.chosen_at: dict = {}     # override key -> where its choice was written

    def run(self, config_name: str, overrides: List[Override]) -> Composition:
        values = self._read_overrides(overrides)
        primary = _Default(name=re.sub(r"\.ya?ml$", "", config_name), package="",
                           where=self.origin)
        for path, package, data in self._expand(primary, is_root=True):
            self._merge_file(path, package, data)
        for key in set(self.choices) - self.used:
            how = f" (`+{key}={self.choices[key]}` appends it)" if key in self.from_cli else ""
            self.note(f"Hydra refuses to override {key}: not in the defaults list{how}")
        for key in set(self.deletions) - self.deleted:
            self.note(f"Hydra refuses to delete {key}: not in the defaults list")
        data = self.result.data
        hydra_node = data.pop("hydra", None)
        self.result.searchpath = self.result.searchpath or isinstance(hydra_node, dict) and \
            bool(hydra_node.get("searchpath"))
        self.result.data = apply_overrides(data, values, self.origin, self.result.notes)
        return self.result

    def note(self, text: str) -> None:
        self.result.notes.append(text)

    def _read_overrides(self, overrides: List[Override]) -> List[Override]:
        """Record the group choices; return the value overrides."""
        values = []
        for o in overrides:
            if o.key == "hydra" or o.key.startswith(("hydra.", "hydra/")):
                # Hydra's own settings, not the job's config; but `hydra.searchpath=[…]`
                # (or a `hydra={searchpath: …}` node) adds config directories
                self.result.searchpath |= o.key.startswith("hydra.searchpath") or (
                    isinstance(o.value, dict) and "searchpath" in o.value)
                continue
            if o.tool != "hydra":
                self.note(f"`{o.raw}` is not a Hydra override: Hydra refuses it")
                continue
            if isinstance(o.value, dict) or not fs.is_dir(self.root / o.key):
                values.append(o)
                continue
            key = o.key if o.package is None else f"{o.key}@{o.package or '_global_'}"
            if isinstance(o.value, Unknown):
                self.note(f"`{o.raw}`: {o.value.reason}; the group {o.key} is composed without it")
            elif o.action == "delete":
                self.deletions[key] = o.value if o.has_value else None
            elif o.action == "force" or not isinstance(o.value, (str, list)):
                self.note(f"`{o.raw}`: Hydra refuses this group override")
            elif o.action == "add":
                self.appends.append(_Default(group=o.key, name=o.value, package=o.package,
                                             where=self.origin))
            else:
                self.choices[key] = o.value
                self.from_cli.add(key)
                self.chosen_at[key] = self.origin
        return values

    def _expand(self, node: _Default, is_root: bool = False) -> Iterator[tuple]:
        """(path, package, data) of every config this entry brings, in merge order."""
        if node.group is not None and (self._is_deleted(node) or not self._known(node)):
            return
        if node.name is None:
            return
        if node.name == "???":
            self.note(f"Hydra refuses to run: no option chosen for {node.override_key()}")
            return
        if isinstance(node.name, str) and "${" in node.name:
            self.note(f"the choice {node.name} for {node.group} is an interpolation; not followed")
            return
        rel = node.config_path()   # `- data: mnist.yaml`: Hydra drops the extension
        path = self.root / (rel if rel.endswith((".yaml", ".yml")) else f"{rel}.yaml")
        loaded = self._load(path, node.optional)
        if loaded is None:
            if not node.optional and not is_root and not fs.is_file(path):
                self.result.missing.append((path, node.where, node.group_path()))
            return
        header, data = loaded
        self.result.named_by.setdefault(path, node.where)
        package = node.final_package(header)
        defaults = self._defaults_of(data, path)
        if (defaults or is_root and self.appends) and not any(d.is_self for d in defaults):
            defaults.append(_Default(is_self=True))  # Hydra 1.1+: the config after its defaults
        if is_root:
            defaults += self.appends
        for d in defaults:
            d.parent_group, d.parent_package = node.group_path(), package
            if d.override:
                self.choices.setdefault(d.override_key(), d.name)
                self.chosen_at.setdefault(d.override_key(), d.where)
        if not defaults:
            yield path, package, data
            return
        children: list = []
        # Later entries first, as Hydra does, so that their `override` entries reach earlier ones.
        for d in reversed(defaults):
            if d.is_self:
                children.append([(path, package, data)])
            elif not d.override:
                children.append(list(self._expand_entry(d)))
        for child in reversed(children):
            yield from child

    def _expand_entry(self, d: _Default) -> Iterator[tuple]:
        if d.group is not None and d.override_key() in self.choices:
            d.name = self.choices[d.override_key()]
            d.where = self.chosen_at.get(d.override_key()) or d.where
            self.used.add(d.override_key())
        if not isinstance(d.name, list):
            yield from self._expand(d)
            return
        for option in d.name:  # `- group: [a, b]`: each option, in order
            yield from self._expand(_Default(
                name=f"{d.group}/{option}", package=d.package, optional=d.optional,
                parent_group=d.parent_group, parent_package=d.parent_package, where=d.where))

    def _known(self, node: _Default) -> bool:
        """False, with a note, when the group was already chosen (Hydra refuses)."""
        key = node.override_key()
        if key in self.known:
            self.note(f"Hydra refuses: {key} is chosen twice ({self.known[key]}, {node.name})")
            return False
        self.known[key] = node.name
        return True

    def _is_deleted(self, node: _Default) -> bool:
        key = node.override_key()
        if key in self.deletions and self.deletions[key] in (None, node.name):
            self.deleted.add(key)
            return True
        return False

    def _load(self, path: Path, optional: bool) -> Optional[tuple]:
        if not fs.is_file(path):
            if not optional:
                self.note(f"Hydra refuses to run: {path} does not exist")
            return None
        try:
            key = self.realpath(path)
            data = self.loaded[key] if key in self.loaded else \
                self.loaded.setdefault(key, load_yaml_text(path, "Hydra config"))
            header = _package_header(fs.read_text(path) or "")  # an input, as fs records
        except InputError as exc:
            self.note(str(exc))
            return None
        if data is None:
            data = _new_dict()
        if not isinstance(data, dict):
            self.note(f"{path} is not a mapping; Hydra refuses it")
            return None
        return header, data

    def _defaults_of(self, data: dict, path: Path) -> List[_Default]:
        entries = data.get("defaults") or []
        out = []
        for entry in entries if isinstance(entries, list) else []:
            d = _read_default(entry)
            if d is None:
                self.note(f"{path}: defaults entry {entry!r} not understood")
            else:   # a `- group: option` entry has its line; a bare `- name` the list's
                d.where = (str(path), getattr(entry, "line", 0) or _line_of(data, "defaults"))
                out.append(d)
        return out

    def _merge_file(self, path: Path, package: str, data: dict) -> None:
        self.result.files.append(path)
        content = _new_dict(data)
        content.update((k, v) for k, v in data.items() if k != "defaults")
        for part in reversed(package.split(".") if package else []):
            wrapper = _new_dict()
            wrapper.line = content.line
            wrapper.key_lines = {part: content.line}
            wrapper[part] = content
            content = wrapper
        _merge(self.result.data, content, _file_origin(str(path)), keep_missing=True)


def _line_of(data: dict, key: str) -> int:
    return data.line_of(key) if isinstance(data, LineDict) else 0


def _read_default(entry: Any) -> Optional[_Default]:
    if entry == "_self_":
        return _Default(is_self=True)
    if isinstance(entry, str):
        name, _, pkg = entry.partition("@")
        return _Default(name=name, package=pkg if "@" in entry else None)
    if not (isinstance(entry, dict) and len(entry) == 1):
        return None
    (key, value), = entry.items()
    words = str(key).split()
    if not words or not (value is None or isinstance(value, (str, list))):
        return None
    group, at, pkg = words[-1].partition("@")
    return _Default(group=group, name=value, package=pkg if at else None,
                    optional="optional" in words[:-1], override="override" in words[:-1])


def _package_header(text: str) -> Optional[str]:
    """The `# @package X` of a config, made absolute as Hydra 1.2+ does."""
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            break
        m = re.match(r"#\s*@package\s+(\S*)", line)
        if m:
            pkg = m.group(1)
            return pkg if pkg == "_global_" or pkg.startswith("_global_.") else \
                f"_global_.{pkg}" if pkg else "_global_"
    return None




# ---- ${oc.env:VAR,default} ---------------------------------------------------------------
_OC_ENV = re.compile(r"\$\{(?:oc\.env|env):\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:,([^}]*))?\}")


def resolve_oc_env(text: str, lookup: Callable[[str], Optional[str]]) -> Optional[str]:
    """The string OmegaConf makes of `text`'s `${oc.env:VAR}` / `${oc.env:VAR,default}`
    (and the legacy `${env:...}`), with VAR read through `lookup` (None: not set in the
    job's environment). None when a variable is unset with no default, or when any other
    interpolation is left (it is resolved only when the job runs)."""
    missing = False

    def repl(m: re.Match) -> str:
        nonlocal missing
        value = lookup(m.group(1))
        if value is not None:
            return value
        if m.group(2) is None:
            missing = True
            return ""
        default = m.group(2).strip()
        return default[1:-1] if len(default) > 1 and default[0] == default[-1] and \
            default[0] in "'\"" else default

    out = _OC_ENV.sub(repl, text)
    return None if missing or "${" in out else out
