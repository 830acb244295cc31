"""The check registry: the @check decorator and discovery of check modules."""
from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional, Union

from doctor.model import Severity
from doctor.secrets import VOCABULARY

ID_RE = re.compile(r"^[a-z][a-z0-9-]{2,39}$")
# A check with any of these needs probes a live node (or runs user code), so
# `--static` (the CI gate) leaves it out.
LIVE_NEEDS = frozenset({"node", "torch", "gpu", "smoke", "cache"})
KNOWN_NEEDS = LIVE_NEEDS | {"repo", "git", "configs", "sbatch", "settings"}
SECTIONS = ("## Why it matters", "## How to fix")


class RegistryError(Exception):
    """A broken check definition or check module: always loud."""


@dataclass(frozen=True)
class CheckSpec:
    id: str
    title: str
    severity: Severity
    func: Callable
    tags: tuple = ()
    needs: tuple = ()
    timeout: Union[float, Callable[[Any], float]] = 10.0
    module: str = ""
    # (option name, value) -> why the value is refused, or None: options with a fixed set
    # of values are checked with the settings (exit 2), before anything runs
    validate: Optional[Callable[[str, Any], Optional[str]]] = None

    @property
    def static(self) -> bool:
        return not (set(self.needs) & LIVE_NEEDS)

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.func.__doc__ or "")

    @property
    def summary(self) -> str:
        return self.doc.splitlines()[0] if self.doc else self.title

    def section(self, heading: str) -> str:
        """The text under `## heading` in the docstring."""
        m = re.search(rf"^## {re.escape(heading)}\s*$(.*?)(?=^## |\Z)", self.doc, re.M | re.S)
        return m.group(1).strip() if m else ""

    @property
    def options(self) -> dict:
        """Keyword-only parameters and their defaults: the check's settings options."""
        sig = inspect.signature(self.func)
        return {p.name: p.default for p in sig.parameters.values()
                if p.kind is inspect.Parameter.KEYWORD_ONLY}

    def timeout_for(self, job: Any) -> float:
        return float(self.timeout(job) if callable(self.timeout) else self.timeout)


_REGISTRY: dict = {}


def check(id: str, *, title: str, severity: str = "error", tags: tuple = (),
          needs: tuple = (), timeout: Union[float, Callable[[Any], float]] = 10.0,
          validate: Optional[Callable[[str, Any], Optional[str]]] = None) -> Callable:
    """Register a check. The function takes the Job and returns/yields findings."""

    def register(func: Callable) -> Callable:
        if not ID_RE.match(id):
            raise RegistryError(f"check id {id!r} is not kebab-case ({ID_RE.pattern})")
        if id in _REGISTRY and _REGISTRY[id].func.__qualname__ != func.__qualname__:
            raise RegistryError(f"duplicate check id {id!r}: {_REGISTRY[id].module} "
                                f"and {func.__module__}")
        unknown = set(needs) - KNOWN_NEEDS
        if unknown:
            raise RegistryError(f"check {id!r}: unknown needs {sorted(unknown)}")
        doc = inspect.cleandoc(func.__doc__ or "")
        missing = [s for s in SECTIONS if s not in doc]
        if missing:
            raise RegistryError(f"check {id!r}: docstring lacks {', '.join(missing)}")
        _REGISTRY[id] = CheckSpec(id=id, title=title, severity=Severity.parse(severity),
                                  func=func, tags=tuple(tags), needs=tuple(needs),
                                  timeout=timeout, module=func.__module__,
                                  validate=validate)
        VOCABULARY.add(id)
        return func

    return register


_discovered = False

# The built-in checks are importable only under the doctor's own name: a top-level
# `checks` would be any project's `checks/` package on the path, found first, and every
# built-in check gone. The source tree keeps them in the top-level checks/ folder;
# pyproject's package-dir installs that folder as doctor.checks (doctor/__init__.py
# maps it for a run from the source tree).
BUILTIN = "doctor.checks"


def _builtin_path() -> list:
    try:
        return list(importlib.import_module(BUILTIN).__path__)
    except ImportError as exc:
        raise RegistryError(f"cannot import the built-in checks ({BUILTIN}): {exc}: "
                            "a broken install") from exc


def discover() -> dict:
    """Import every module of the built-in `doctor.checks` (the source tree's checks/
    folder) and every `doctor.checks` entry point.

    Import errors, duplicate ids and a run with no built-in check raise RegistryError:
    a check that silently disappears is a check that silently passes.
    """
    global _discovered
    if _discovered:
        return _REGISTRY
    for mod in sorted(pkgutil.walk_packages(_builtin_path(), BUILTIN + "."),
                      key=lambda m: m.name):
        _import_check_module(mod.name)
    if not any(s.module.startswith(BUILTIN + ".") for s in _REGISTRY.values()):
        raise RegistryError(f"no built-in check found in {BUILTIN} "
                            f"({os.pathsep.join(_builtin_path())}): a broken install")
    for ep in _entry_points("doctor.checks"):
        try:
            ep.load()
        except RegistryError:
            raise
        except Exception as exc:
            raise RegistryError(f"cannot load check pack {ep.name} ({ep.value}): "
                                f"{type(exc).__name__}: {exc}") from exc
    _discovered = True
    return _REGISTRY


_CHECK_ID_RE = re.compile(r"""^@check\(\s*(?:"([a-z0-9-]+)"|'([a-z0-9-]+)'|([A-Za-z_]\w*))""", re.M)


def builtin_ids() -> dict:
    """check id → the `doctor.checks.` module that defines it, read from the modules'
    text without importing them: `@check("id", ...)`, or `@check(NAME, ...)` with a
    module-level `NAME = "id"`. tests/test_registry.py holds it equal to what
    discover() registers, so a check it cannot read fails the suite, not a run."""
    out: dict = {}
    for top in _builtin_path():
        for name in sorted(os.listdir(top)):
            if not name.endswith(".py") or name.startswith("_"):
                continue
            try:
                with open(os.path.join(top, name), encoding="utf-8") as fh:
                    text = fh.read()
            except (OSError, UnicodeDecodeError):
                continue
            for m in _CHECK_ID_RE.finditer(text):
                found = m.group(1) or m.group(2)
                if found is None:
                    const = re.search(rf"""^{m.group(3)} = ["']([a-z0-9-]+)["']$""", text, re.M)
                    found = const.group(1) if const else None
                if found is not None:
                    out.setdefault(found, f"{BUILTIN}.{name[:-3]}")
    return out


def checks_named(ids: Iterable[str]) -> Optional[list]:
    """The registry's checks, in all_checks' order, with at least `ids` among them:
    only the check modules that define those are imported (a `--only` run need not
    import 29 modules: ~70 ms). None when one is not a built-in check id (a tag, a
    check pack's id, a typo): then all_checks(). Check packs are not loaded: a full
    run loads them and reports a broken one."""
    if _discovered:
        return all_checks()
    index = builtin_ids()
    modules = set()
    for check_id in ids:
        if check_id not in index:
            return None
        modules.add(index[check_id])
    for name in sorted(modules):
        _import_check_module(name)
    return _in_order(_REGISTRY) if all(i in _REGISTRY for i in ids) else None


def _import_check_module(name: str) -> None:
    try:
        importlib.import_module(name)
    except RegistryError:
        raise
    except Exception as exc:
        raise RegistryError(f"cannot import check module {name}: "
                            f"{type(exc).__name__}: {exc}") from exc


def _entry_points(group: str) -> list:
    from importlib import metadata

    if sys.version_info >= (3, 10):
        return list(metadata.entry_points(group=group))
    return list(metadata.entry_points().get(group, []))


def all_checks() -> list:
    """Registry order: by id, so reports are stable whatever the import order."""
    return _in_order(discover())


def _in_order(registry: dict) -> list:
    return [spec for _, spec in sorted(registry.items())]


def get(check_id: str) -> Optional[CheckSpec]:
    return discover().get(check_id)


def unregister(check_id: str) -> None:
    """For tests that register throw-away checks."""
    _REGISTRY.pop(check_id, None)


# ---- multi-node registrations (doctor run --gather) -------------------------
NODE_FACTS: dict = {}       # name → fn(job) -> JSON, computed on every node
CROSS_NODE: dict = {}       # check id → fn(nodes) -> findings merged into that check


def node_fact(name: str) -> Callable:
    """Register a per-node fact that cross-node checks compare (gathered from every node)."""
    def register(fn: Callable) -> Callable:
        NODE_FACTS[name] = fn
        return fn
    return register


def cross_node(check_id: str) -> Callable:
    """Register a cross-node part of an existing node check: fn(nodes) → findings."""
    def register(fn: Callable) -> Callable:
        CROSS_NODE[check_id] = fn
        return fn
    return register
