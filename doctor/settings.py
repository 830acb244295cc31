"""Settings: doctor.yaml, or [tool.doctor] in pyproject.toml (DESIGN.md §5)."""
from __future__ import annotations

import datetime as dt
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional


from doctor.errors import InputError
from doctor.job.versions import TORCH_VERSION_ALLOWED, is_torch_version
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
    "site": {"profile": str, "shared_paths": list, "local_paths": list, "compute_network": bool,
             "gpus_per_node": int, "name": str, "symlinked_paths": list, "default_binds": list,
             "fabric_binds": list, "gpu_libraries": list, "partitions": dict,
             "cluster": str, "modules": dict},
    "smoke": {"model": str, "input_shape": list, "timeout_s": (int, float),
              "world_size": int, "backend": str,
              # the data smoke (checks/data_smoke.py)
              "data": str, "data_batches": int, "data_ranks": int,
              "data_timeout_s": (int, float), "data_shm_mib": int,
              "data_private_shm": bool},
    "waivers": list,
    # glob → the check ids or tags accepted in the files it matches (doctor/suppress.py)
    "per-file-ignores": dict,
}

MAX_SECONDS = 86400  # a day: a longer deadline is a mistake (and inf overflows the timers)
MAX_SMOKE_RANKS = 64  # the smoke's ranks are processes on this one node



SITES_DIR = Path(__file__).resolve().parent / "sites"   # the built-in profiles (doctor/sites)
NO_PROFILE = "none"  # `site: none`: no profile and no detection
# scontrol's own names for a partition's limits, plus the GPUs and RealMemory (MB) of
# each of its nodes
PARTITION_FIELDS = {"MaxTime": str, "MaxNodes": int, "TotalNodes": int, "State": str,
                    "OverSubscribe": str, "GpusPerNode": int, "MaxMemPerNode": int,
                    "RealMemory": int,
                    # not scontrol's: the memory of one GPU a rank sees ("64GB"; an MI250X
                    # GCD), for gpu-memory-estimate
                    "gpu_memory": str}


def known_profiles() -> list:
    """The built-in site profiles' names."""
    return sorted(p.stem for p in SITES_DIR.glob("*.yaml"))


def check_partitions(parts: Any, where: str) -> None:
    """Each partition maps scontrol's field names to values of their type."""
    if not isinstance(parts, dict):
        raise InputError(f"{where}: partitions must be a mapping of partition names")
    for part, fields in parts.items():
        if not isinstance(fields, dict):
            raise InputError(f"{where}: partitions.{part} must be a mapping")
        for key, value in fields.items():
            want = PARTITION_FIELDS.get(key)
            if want is None:
                raise InputError(f"{where}: partitions.{part}: unknown field {key!r} "
                                 f"(known: {', '.join(PARTITION_FIELDS)})")
            if not isinstance(value, want) or isinstance(value, bool) or (
                    isinstance(value, int) and value < 0):
                kind = "a whole number, 0 or more" if want is int else "a string"
                raise InputError(f"{where}: partitions.{part}.{key}: {value!r} is not {kind}")

def check_modules(mods: Any, where: str) -> None:
    """`modules`: module name → the variables loading it sets (name → text)."""
    if not isinstance(mods, dict):
        raise InputError(f"{where}: modules must be a mapping of module names")
    for name, env in mods.items():
        if not isinstance(env, dict):
            raise InputError(f"{where}: modules.{name} must be a mapping of variables")
        for var, value in env.items():
            if not (isinstance(var, str) and re.fullmatch(r"[A-Za-z_]\w*", var)):
                raise InputError(f"{where}: modules.{name}: {var!r} is not a variable name")
            if not isinstance(value, str):
                raise InputError(f"{where}: modules.{name}.{var}: {value!r} is not a string")


def _text(v: Any) -> bool:
    return isinstance(v, str) and v.strip() != ""


def is_factory(v: Any) -> bool:
    return re.fullmatch(r"[^\W\d]\w*(\.[^\W\d]\w*)*:[^\W\d]\w*(\.[^\W\d]\w*)*", v) is not None


def _backend(v: Any) -> bool:
    from doctor.smoke.protocol import choose_backend  # what the smoke's ranks will accept

    try:
        return _text(v) and bool(choose_backend(v, 0, 2))
    except ValueError:
        return False


MAX_INPUT_ELEMENTS = 2 ** 26  # 256 MiB of float32 per rank: the smoke is one small batch


def _shape(v: Any) -> bool:
    if not (v and all(isinstance(d, int) and not isinstance(d, bool) and d >= 1 for d in v)):
        return False
    return math.prod(v) <= MAX_INPUT_ELEMENTS


# What a value may be beyond its type: (test, what is allowed). ITEMS test each
# item of a list setting, VALUES the whole value. A null value is an unset one.
ITEMS: dict = {
    "select": (_text, "a check id or tag"),
    "ignore": (_text, "a check id or tag"),
    "configs": (_text, "a glob such as configs/*.yaml"),
    "caches": (_text, "a path"),
    "site.shared_paths": (lambda v: _text(v) and os.path.isabs(v), "an absolute path"),
    "site.local_paths": (lambda v: _text(v) and os.path.isabs(v), "an absolute path"),
    "site.symlinked_paths": (lambda v: _text(v) and os.path.isabs(v), "an absolute path"),
    "site.fabric_binds": (lambda v: _text(v) and os.path.isabs(v), "an absolute path"),
    "site.gpu_libraries": (lambda v: _text(v) and os.path.isabs(v), "an absolute path"),
    "site.default_binds": (lambda v: _text(v) and (os.path.isabs(v) or v == "$HOME"),
                           "an absolute path or $HOME"),
}
VALUES: dict = {
    "torch_version": (is_torch_version, TORCH_VERSION_ALLOWED),
    "site.gpus_per_node": (lambda v: v >= 0, "a number of GPUs, 0 or more"),
    "site.name": (_text, "a name"),
    # the Slurm ClusterName the jobs are for: live facts of that cluster judge every job
    # (checks/partitions.py), another cluster's never
    "site.cluster": (_text, "a Slurm ClusterName, such as lumi"),
    "site.profile": (lambda v: v == NO_PROFILE or v in known_profiles(),
                     f"a known site profile ({', '.join(known_profiles())}, or {NO_PROFILE})"),
    "smoke.model": (is_factory, "MODULE:FACTORY, such as mypkg.models:build"),
    "smoke.input_shape": (_shape, "a list of sizes of 1 or more, at most 2**26 elements in "
                                  "all, such as [2, 3, 64, 64]"),
    "smoke.timeout_s": (lambda v: 1 <= v <= MAX_SECONDS,
                        f"a number of seconds from 1 to {MAX_SECONDS}"),
    "smoke.world_size": (lambda v: 2 <= v <= MAX_SMOKE_RANKS,
                         f"a number of ranks from 2 to {MAX_SMOKE_RANKS}"),
    "smoke.backend": (_backend, "auto, gloo or nccl (RCCL on ROCm is nccl)"),
    "smoke.data": (is_factory, "MODULE:FACTORY, such as mypkg.data:train_loader"),
    "smoke.data_batches": (lambda v: 1 <= v <= 1000, "a number of batches from 1 to 1000"),
    "smoke.data_ranks": (lambda v: 1 <= v <= MAX_SMOKE_RANKS,
                         f"a number of ranks from 1 to {MAX_SMOKE_RANKS}"),
    "smoke.data_timeout_s": (lambda v: 5 <= v <= MAX_SECONDS,
                             f"a number of seconds from 5 to {MAX_SECONDS}"),
    "smoke.data_shm_mib": (lambda v: v >= 1, "the compute node's /dev/shm in MiB, 1 or more"),
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
    per_file_ignores: dict = field(default_factory=dict)   # glob → [check id or tag]


def load_settings(repo: Path, explicit: Optional[Path] = None) -> Settings:
    """The repo's settings. Relative paths in them are taken from the repo, as the
    `configs:` globs and the paths in training configs are, wherever the file is."""
    s = _load(repo, explicit)
    s.caches = [str(repo / os.path.expanduser(c)) for c in s.caches]
    return s


def holds_settings(d: Path) -> bool:
    """Whether the directory `d` holds the doctor's settings: a doctor.yaml, or a
    pyproject.toml with a [tool.doctor] table (one without it is another tool's, as ruff
    takes only a pyproject.toml with [tool.ruff]). A pyproject.toml that names the doctor
    is parsed, and invalid TOML there is exit 2, as it would be when read as settings."""
    if os.path.lexists(d / "doctor.yaml"):
        return True
    from doctor import fs

    pyproject = d / "pyproject.toml"
    raw = fs.read_bytes(pyproject, limit=4 * 1024 * 1024)
    return raw is not None and b"doctor" in raw and _tool_doctor(pyproject, None) is not None


def project_root(start: Path, top: Optional[Path]) -> Optional[Path]:
    """The nearest directory from `start` up that holds_settings, as ruff finds its
    configuration, up to `top`, the git work tree's root (a settings file above it is
    another project's). Outside git only `start` itself: a doctor.yaml in a parent such
    as /tmp, which anyone may write, would choose the settings (and the smoke's model,
    which a full run imports). None when no directory does."""
    if top is None:
        return start if holds_settings(start) else None
    d = start
    while True:
        if holds_settings(d):
            return d
        if d == top or d.parent == d:
            return None
        d = d.parent


def _load(repo: Path, explicit: Optional[Path]) -> Settings:
    if explicit is not None:
        if not os.path.lexists(explicit):  # any other way it is unreadable: _from_file says
            raise InputError(f"settings file not found: {explicit}")
        return _from_file(explicit)
    if os.path.lexists(repo / "doctor.yaml"):  # present but unreadable: exit 2, not ignored
        return _from_file(repo / "doctor.yaml")
    pyproject = repo / "pyproject.toml"
    if os.path.isfile(pyproject):
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
    from doctor.fs import read_input

    raw = read_input(path, "settings file")
    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: not valid TOML: {exc}") from None


def parse_settings(data: Any, where: str) -> Settings:
    if not isinstance(data, dict):
        raise InputError(f"{where}: settings must be a mapping, not {type(data).__name__}")
    if isinstance(data.get("site"), str):  # `site: lumi` is `site: {profile: lumi}`
        data = {**data, "site": {"profile": data["site"]}}
    _validate(data, SCHEMA, where, prefix="")
    _check_values(data, where)
    if isinstance(data.get("site"), dict) and data["site"].get("partitions") is not None:
        check_partitions(data["site"]["partitions"], f"{where}: site")
    if isinstance(data.get("site"), dict) and data["site"].get("modules") is not None:
        check_modules(data["site"]["modules"], f"{where}: site")
    s = Settings(path=where)
    for key in ("select", "ignore", "configs", "caches"):
        if data.get(key) is not None:
            setattr(s, key, list(data[key]))
    for key in ("severity", "options", "site", "smoke"):
        if key in data:
            setattr(s, key, {k: v for k, v in (data[key] or {}).items()
                             if v is not None or key not in ("site", "smoke")})
    s.torch_version = data.get("torch_version")
    for check_id, sev in s.severity.items():
        try:
            s.severity[check_id] = Severity.parse(sev)
        except ValueError as exc:
            raise InputError(f"{where}: severity.{check_id}: {exc}") from None
    for check_id, opts in s.options.items():
        if not isinstance(opts, dict):
            raise InputError(f"{where}: options.{check_id} must be a mapping")
    s.waivers = [_waiver(w, i, where) for i, w in enumerate(data.get("waivers") or [])]
    s.per_file_ignores = _per_file_ignores(data.get("per-file-ignores") or {}, where)
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
            quote = " (put it in quotes)" if expected is str and isinstance(value, float) else ""
            got = "mapping" if isinstance(value, dict) else "list" if isinstance(value, list) \
                else type(value).__name__  # not the loader's LineDict
            raise InputError(f"{where}: {name} must be a {want}, not {got}{quote}")


def _check_values(data: dict, where: str) -> None:
    """Every setting by range and form: one line naming it, its value and what is allowed."""
    for name, value in _flat(data):
        if value is None:
            continue
        items, whole = ITEMS.get(name), VALUES.get(name)
        if items is not None:
            for i, item in enumerate(value):
                if not items[0](item):
                    raise InputError(f"{where}: {name}[{i}]: {item!r} is not {items[1]}")
        if whole is not None and not whole[0](value):
            raise InputError(f"{where}: {name}: {value!r} is not {whole[1]}")


def _flat(data: dict, prefix: str = "") -> list:
    out: list = []
    for key, value in data.items():
        if key in ("severity", "options") and not prefix:
            continue  # keyed by check id: checked against the registry (doctor.runner)
        if isinstance(value, dict):
            out += _flat(value, f"{prefix}{key}.")
        else:
            out.append((f"{prefix}{key}", value))
    return out


def check_option(check_id: str, name: str, value: Any, default: Any, where: Any) -> None:
    """A check option's value by range (its type is checked by doctor.runner): a number
    is finite and 0 or more, whole when the default is an int, and an option in
    seconds (`*_s`) is above 0 and at most a day. Null is refused where the check
    would get it instead of its default."""
    key = f"options.{check_id}.{name}"
    if value is None:
        if default is not None:
            raise InputError(f"{where}: {key}: null is not a value (leave the option out "
                             f"for its default, {default!r})")
        return
    if isinstance(default, bool) or not isinstance(default, (int, float)):
        return
    if name.endswith("_s"):
        ok = 0 < value <= MAX_SECONDS
        allowed = f"a number of seconds above 0, at most {MAX_SECONDS}"
    elif isinstance(default, int):
        ok, allowed = isinstance(value, int) and value >= 0, "a whole number, 0 or more"
    else:
        ok, allowed = math.isfinite(value) and value >= 0, "a number, 0 or more"
    if not ok:
        raise InputError(f"{where}: {key}: {value!r} is not {allowed}")


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
    for key, allowed in (("check", "a check id"), ("reason", "a reason (some text)")):
        if not _text(w[key]):
            raise InputError(f"{where}: waivers[{i}].{key}: {w[key]!r} is not {allowed}")
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


def _per_file_ignores(data: dict, where: str) -> dict:
    """`per-file-ignores: {GLOB: [ID, ...]}`, as ruff's: a glob relative to the repo root
    and a list of check ids or tags (checked against the registry by doctor.runner)."""
    out = {}
    for glob, items in data.items():
        if not _text(glob) or os.path.isabs(glob) or ".." in glob.split("/"):
            raise InputError(f"{where}: per-file-ignores: {glob!r} is not a glob relative "
                             "to the repo root, such as tests/** or scripts/*.sh")
        if not isinstance(items, list) or not items or not all(_text(i) for i in items):
            raise InputError(f"{where}: per-file-ignores: {glob}: {items!r} is not a list of "
                             "check ids or tags")
        out[glob] = [i.strip() for i in items]
    return out
