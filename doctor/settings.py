"""Settings: doctor.yaml, or [tool.doctor] in pyproject.toml (DESIGN.md §5)."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional


from doctor.errors import InputError
from doctor.model import Severity

# Every accepted key. A nested dict lists the accepted sub-keys; unknown keys
# are an input error (exit 2) naming the key, never silently ignored.
SCHEMA: dict = {
    "select": list,
    "ignore": list,
    "severity": dict,
    "options": dict,
    "configs": list,
    "caches": list,
    "torch_version": str,
    "site": {"shared_paths": list, "local_paths": list, "compute_network": bool,
             "gpus_per_node": int, "name": str},
    "smoke": {"model": str, "input_shape": list, "timeout_s": (int, float),
              "world_size": int, "backend": str},
    "waivers": list,
}


@dataclass(frozen=True)
class Waiver:
    check: str
    reason: str
    expires: dt.date

    @property
    def expired(self) -> bool:
        return self.expires < dt.date.today()


@dataclass
class Settings:
    path: Optional[str] = None           # where they came from, for the report
    select: list = field(default_factory=lambda: ["all"])
    ignore: list = field(default_factory=list)
    severity: dict = field(default_factory=dict)
    options: dict = field(default_factory=dict)
    configs: list = field(default_factory=list)
    caches: list = field(default_factory=list)
    torch_version: Optional[str] = None
    site: dict = field(default_factory=dict)
    smoke: dict = field(default_factory=dict)
    waivers: list = field(default_factory=list)


def load_settings(repo: Path, explicit: Optional[Path] = None) -> Settings:
    if explicit is not None:
        if not explicit.exists():
            raise InputError(f"settings file not found: {explicit}")
        return _from_file(explicit)
    if (repo / "doctor.yaml").is_file():
        return _from_file(repo / "doctor.yaml")
    pyproject = repo / "pyproject.toml"
    if pyproject.is_file():
        data = _tool_doctor(pyproject, None)
        if data is not None:
            return parse_settings(data, f"{pyproject}[tool.doctor]")
    return Settings()


def _from_file(path: Path) -> Settings:
    if path.suffix == ".toml":
        data = _tool_doctor(path, {})
        return parse_settings(data, f"{path}[tool.doctor]")
    from doctor.job.configs import load_yaml_text

    data = load_yaml_text(path, "settings file")
    return parse_settings(data if data is not None else {}, str(path))


def _tool_doctor(path: Path, default: Any) -> Any:
    tool = _read_toml(path).get("tool", {})
    if not isinstance(tool, dict):
        raise InputError(f"{path}: [tool] must be a table, not {type(tool).__name__}")
    return tool.get("doctor", default)


def _read_toml(path: Path) -> dict:
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    from doctor.errors import read_input

    raw = read_input(path, "settings file")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None


def parse_settings(data: Any, where: str) -> Settings:
    if not isinstance(data, dict):
        raise InputError(f"{where}: settings must be a mapping, not {type(data).__name__}")
    _validate(data, SCHEMA, where, prefix="")
    s = Settings(path=where)
    for key in ("select", "ignore", "configs", "caches"):
        if key in data:
            setattr(s, key, [str(v) for v in data[key]])
    for key in ("severity", "options", "site", "smoke"):
        if key in data:
            setattr(s, key, dict(data[key] or {}))
    if "torch_version" in data:
        s.torch_version = str(data["torch_version"])
    for check_id, sev in s.severity.items():
        try:
            s.severity[check_id] = Severity.parse(sev)
        except ValueError as exc:
            raise InputError(f"{where}: severity.{check_id}: {exc}") from None
    for check_id, opts in s.options.items():
        if not isinstance(opts, dict):
            raise InputError(f"{where}: options.{check_id} must be a mapping")
    s.waivers = [_waiver(w, i, where) for i, w in enumerate(data.get("waivers") or [])]
    return s


def _validate(data: dict, schema: dict, where: str, prefix: str) -> None:
    for key, value in data.items():
        name = f"{prefix}{key}"
        if key not in schema:
            raise InputError(f"{where}: unknown settings key {name!r} "
                             f"(known: {', '.join(sorted(schema))})")
        expected = schema[key]
        if isinstance(expected, dict):
            if not isinstance(value, dict):
                raise InputError(f"{where}: {name} must be a mapping")
            _validate(value, expected, where, prefix=f"{name}.")
        elif value is not None and (not isinstance(value, expected) or (
                isinstance(value, bool) and expected is not bool)):  # True is an int
            want = expected.__name__ if isinstance(expected, type) else "number"
            raise InputError(f"{where}: {name} must be a {want}, not {type(value).__name__}")


def _waiver(w: Any, i: int, where: str) -> Waiver:
    if not isinstance(w, dict):
        raise InputError(f"{where}: waivers[{i}] must be a mapping")
    unknown = set(w) - {"check", "reason", "expires"}
    if unknown:
        raise InputError(f"{where}: waivers[{i}]: unknown key {sorted(unknown)[0]!r}")
    for key in ("check", "reason", "expires"):
        if not w.get(key):
            raise InputError(f"{where}: waivers[{i}] needs {key!r} (check, reason and "
                             "expires are all required)")
    expires = w["expires"]
    if isinstance(expires, dt.datetime):
        expires = expires.date()
    if not isinstance(expires, dt.date):
        try:  # the text form only: 3.11's fromisoformat also takes 20270131
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(expires)):
                raise ValueError
            expires = dt.date.fromisoformat(str(expires))
        except ValueError:
            raise InputError(f"{where}: waivers[{i}].expires: {expires!r} is not a "
                             "date (YYYY-MM-DD)") from None
    return Waiver(check=str(w["check"]), reason=str(w["reason"]), expires=expires)
