"""DataLoader options in the training configs that torch rejects."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Optional

from doctor import Finding, Location, Skip, check
from doctor.job.configs import ConfigFile, is_unresolved, keypath
from doctor.job.loaders import LoaderSpec, PG_SECTIONS, _is_number, loader_specs
from doctor.job.versions import parse_version

START_METHODS = ("fork", "spawn", "forkserver")  # torch.multiprocessing on Linux

# Process-group timeouts: these keys anywhere, or a plain `timeout` in a section below.
PG_KEYS = ("pg_timeout", "dist_timeout", "ddp_timeout", "process_group_timeout",
           "nccl_timeout", "backend_timeout", "distributed_timeout")
_UNIT = re.compile(r"_(ms|s|sec|secs|seconds|m|min|mins|minutes|h|hours)$")
_SCALE = {"ms": 0.001, "s": 1, "sec": 1, "secs": 1, "seconds": 1, "m": 60, "min": 60,
          "mins": 60, "minutes": 60, "h": 3600, "hours": 3600}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|sec|secs|seconds|m|min|mins|minutes|"
                       r"h|hours)?\s*$", re.I)
_CLOCK = re.compile(r"^\s*(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)\s*$")


@dataclass
class Conflict:
    rule: str
    keys: list             # the conflicting keys, the offending one first
    message: str
    fix: str
    raises: str            # what torch does: "ValueError in DataLoader()", ...
    extra: dict = field(default_factory=dict)


def _value(spec: LoaderSpec, key: str, kind: str) -> tuple:
    """(known, value). kind: int, number, bool, context. Unknowable values → (False, note)."""
    if key not in spec.mapping:
        defaults = {"num_workers": 0, "timeout": 0, "prefetch_factor": None,
                    "persistent_workers": False, "multiprocessing_context": None}
        return True, defaults[key]
    v = spec.mapping[key]
    line = spec.line(key)
    if is_unresolved(v):
        spec.notes.append(f"{spec.config.rel}:{line}: {key}: {v!r} is filled in at run time; "
                          "not checked")
        return False, None
    ok = {"int": lambda x: isinstance(x, int) and not isinstance(x, bool),
          "prefetch": lambda x: x is None or (isinstance(x, int) and not isinstance(x, bool)),
          "number": _is_number,
          "bool": lambda x: x is None or isinstance(x, (bool, int)),
          "context": lambda x: not isinstance(x, (dict, list))}[kind](v)
    if not ok:
        spec.notes.append(f"{spec.config.rel}:{line}: {key}: {v!r} is not a plain "
                          f"{'integer' if kind in ('int', 'prefetch') else kind}; not checked")
        return False, None
    return True, v


def conflicts(spec: LoaderSpec, version: Optional[tuple]) -> list:
    """The rules this DataLoader spec breaks under the given torch (major, minor)."""
    v2 = version is None or version >= (2, 0)
    out: list = []
    L = spec.line
    kw, workers = _value(spec, "num_workers", "int")
    kt, timeout = _value(spec, "timeout", "number")
    kp, prefetch = _value(spec, "prefetch_factor", "prefetch")
    kpw, persistent = _value(spec, "persistent_workers", "bool")
    kc, context = _value(spec, "multiprocessing_context", "context")
    zero = kw and workers == 0
    ctor = "ValueError in DataLoader()"

    if version is not None and version < (1, 7):
        for key in ("prefetch_factor", "persistent_workers"):
            if key in spec.mapping:
                out.append(Conflict(
                    "option-too-new", [key],
                    f"{key} does not exist before torch 1.7",
                    f"remove {key} (line {L(key)}) or upgrade torch to >= 1.7",
                    "TypeError in DataLoader()"))
    if kw and workers < 0:
        out.append(Conflict("negative", ["num_workers"], f"num_workers is {workers}",
                            f"set num_workers (line {L('num_workers')}) to 0 (load in the "
                            "main process) or a positive number", ctor))
    if kt and timeout < 0:
        out.append(Conflict("negative", ["timeout"], f"timeout is {timeout}",
                            f"set timeout (line {L('timeout')}) to 0 (no timeout) or a "
                            "positive number of seconds", ctor))

    prefetch_fired = False
    if kp and "prefetch_factor" in spec.mapping and zero:
        if v2 and prefetch is not None or not v2 and prefetch != 2:
            prefetch_fired = True
            out.append(Conflict(
                "prefetch-without-workers", ["prefetch_factor", "num_workers"],
                f"prefetch_factor {prefetch} with num_workers 0"
                + (" (torch >= 2.0 rejects any value but null)" if v2 and prefetch == 2 else ""),
                f"remove prefetch_factor (line {L('prefetch_factor')}) or set num_workers > 0"
                + (f" (line {L('num_workers')})" if "num_workers" in spec.mapping else "")
                + "; leaving prefetch_factor out when num_workers is 0 works on torch 1.x "
                "and 2.x alike", ctor))
    if kp and not prefetch_fired and "prefetch_factor" in spec.mapping:
        if prefetch is None and not v2:
            out.append(Conflict(
                "prefetch-null", ["prefetch_factor"],
                "prefetch_factor null: torch 1.x needs an integer",
                f"remove prefetch_factor (line {L('prefetch_factor')}); torch 1.x then "
                "uses its default of 2", "TypeError in DataLoader()"))
        elif prefetch is not None and prefetch < 0:
            out.append(Conflict(
                "negative", ["prefetch_factor"], f"prefetch_factor is {prefetch}",
                f"set prefetch_factor (line {L('prefetch_factor')}) to a positive number "
                "such as 2, or remove it", ctor if v2 else "AssertionError in DataLoader()"))
        elif prefetch == 0:
            # fails whatever num_workers is: at the first batch with workers on 2.x
            out.append(Conflict(
                "prefetch-zero", ["prefetch_factor"], "prefetch_factor is 0",
                f"set prefetch_factor (line {L('prefetch_factor')}) to a positive number "
                "such as 2, or remove it",
                "AssertionError at the first batch" if v2 else "AssertionError in DataLoader()"))
    if kpw and persistent and zero:
        out.append(Conflict(
            "persistent-without-workers", ["persistent_workers", "num_workers"],
            "persistent_workers true with num_workers 0",
            f"remove persistent_workers (line {L('persistent_workers')}) or set num_workers "
            "> 0", ctor))
    if kc and context is not None and zero:
        out.append(Conflict(
            "context-without-workers", ["multiprocessing_context", "num_workers"],
            f"multiprocessing_context {context!r} with num_workers 0",
            f"remove multiprocessing_context (line {L('multiprocessing_context')}) or set "
            "num_workers > 0", ctor))
    if kc and context is not None and context not in START_METHODS:
        out.append(Conflict(
            "context-unknown", ["multiprocessing_context"],
            f"multiprocessing_context {context!r} is not a start method",
            f"set multiprocessing_context (line {L('multiprocessing_context')}) to one of "
            f"{', '.join(START_METHODS)}, or remove it for the platform default",
            "ValueError in DataLoader()" if isinstance(context, str)
            else "TypeError in DataLoader()"))
    if kt and timeout > 0 and zero:
        out.append(Conflict(
            "timeout-without-workers", ["timeout", "num_workers"],
            f"timeout {timeout} with num_workers 0 (the single-process loader needs timeout 0)",
            f"set timeout (line {L('timeout')}) to 0 or remove it, or set num_workers > 0",
            "AssertionError at the first batch"))
    return out


# ---- process-group timeout --------------------------------------------------
def seconds_of(key: str, value: Any) -> Optional[float]:
    """A timeout in seconds as written: 1800, `30` under a *_minutes key, "30m", "0:30:00",
    {minutes: 30}. None when it cannot be known."""
    m = _UNIT.search(key)
    scale = _SCALE[m.group(1)] if m else 1
    if _is_number(value):
        return float(value) * scale
    if isinstance(value, dict):
        parts = {"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1,
                 "milliseconds": 0.001}
        if value and all(k in parts or k == "_target_" for k in value) and \
                all(_is_number(v) for k, v in value.items() if k != "_target_"):
            return float(sum(parts[k] * v for k, v in value.items() if k != "_target_"))
        return None
    if isinstance(value, str) and not is_unresolved(value):
        d = _DURATION.match(value)
        if d:
            return float(d.group(1)) * (_SCALE[d.group(2).lower()] if d.group(2) else scale)
        c = _CLOCK.match(value)
        if c:
            return int(c.group(1) or 0) * 3600 + int(c.group(2)) * 60 + float(c.group(3))
    return None


def pg_timeouts(cfg: ConfigFile) -> list:
    """[(seconds, key, keypath, line)] for every process-group timeout in the config."""
    out = []
    for path, mapping in cfg.mappings():
        names = [p for p in path if isinstance(p, str) and p not in ("init_args", "kwargs")]
        section = names[-1].lower() if names else ""
        for key, value in mapping.items():
            k = str(key)
            base = _UNIT.sub("", k)
            if base in PG_KEYS or (base == "timeout" and section in PG_SECTIONS):
                secs = seconds_of(k, value)
                if secs is not None and secs > 0:
                    out.append((secs, k, keypath(path + (key,)), cfg.line_of(mapping, key),
                                id(mapping)))
    return out


def _pg_conflict(spec: LoaderSpec, pgs: list) -> Optional[Conflict]:
    if "timeout" not in spec.mapping:
        return None
    timeout = spec.mapping["timeout"]
    known = _is_number(timeout)
    candidates = [p for p in pgs if p[4] != id(spec.mapping)]
    if not known or timeout <= 0 or not candidates:
        return None
    secs, key, where, line, _ = min(candidates)
    if timeout < secs:
        return None
    suggest = max(1, int(secs // 5))
    return Conflict(
        "timeout-not-below-pg-timeout", ["timeout", where],
        f"DataLoader timeout {timeout:g} s is not below the process-group timeout "
        f"{secs:g} s ({where}, line {line})",
        f"lower timeout (line {spec.line('timeout')}) well below {secs:g} s, e.g. "
        f"timeout: {suggest}, so a stuck loader raises on its own rank before the "
        "collective times out on every rank",
        "a hung loader surfaces as an NCCL/gloo collective timeout on all ranks",
        {"pg_timeout_s": secs, "pg_line": line})


@check("dataloader-option-conflict", title="DataLoader options that torch rejects",
       severity="error", tags=("dataloader", "config"), needs=("configs",), timeout=10)
def dataloader_option_conflict(job: Any) -> Iterator[Finding]:
    """A DataLoader option in a config makes torch raise, at construction or the first batch.

    Every mapping of every config that holds `num_workers`, `prefetch_factor`,
    `persistent_workers` or `multiprocessing_context` is a DataLoader spec,
    at any depth (Lightning `data:`, `train.dataloader:`, lists of loaders).
    A mapping with only `timeout` counts when its name contains "loader", its
    `_target_`/`class_path` ends in DataLoader, or it holds other DataLoader
    arguments (batch_size, shuffle, pin_memory, ...). A missing `num_workers`
    means 0, DataLoader's default.

    Rules, keyed on the target torch (`--torch-version`, settings, else the
    installed torch; unknown → the 2.x rules, and `torch_version` is null):
    - `prefetch_factor` with `num_workers: 0`: torch >= 2.0 rejects any
      non-null value; torch 1.7-1.13 rejects any value but 2. On 1.x a null
      `prefetch_factor` is a TypeError. Before 1.7 neither `prefetch_factor`
      nor `persistent_workers` exists.
    - `persistent_workers: true`, or any `multiprocessing_context`, with 0 workers.
    - `multiprocessing_context` that is not fork, spawn or forkserver.
    - `timeout` > 0 with 0 workers (AssertionError at the first batch).
    - negative `num_workers`, `timeout` or `prefetch_factor`; `prefetch_factor: 0`
      (AssertionError at the first batch on 2.x, in the constructor on 1.x).
    - DataLoader `timeout` >= the process-group timeout of the same config.
      A process-group timeout is a key named pg_timeout, dist_timeout,
      ddp_timeout (HF Trainer, seconds), process_group_timeout, nccl_timeout,
      backend_timeout or distributed_timeout anywhere, or a plain `timeout`
      whose nearest section is distributed, dist, ddp, fsdp, deepspeed,
      strategy, trainer, process_group or torch_distributed (Lightning's
      `strategy.init_args.timeout` included). Values are seconds unless the key
      ends in _ms, _min/_minutes or _h/_hours, or the value says so ("30m",
      "0:30:00", {minutes: 30}).

    Values filled in at run time (`${oc.env:...}`, `$VAR`, `???`) or not plain
    numbers are never guessed: the rules that need them are not applied and
    the note is put in each finding's `data.notes` and in the report's facts
    (`dataloader_unchecked`).

    ## Why it matters
    These errors only show once the job has waited in the queue and started
    on the GPUs. The prefetch rule changed in torch 2.0: `prefetch_factor: 2`
    with `num_workers: 0` was accepted by 1.x and raises on 2.x. A DataLoader
    timeout as long as the process-group timeout hides which rank's loader
    hung: the collective times out first on every rank (10 minutes with NCCL).

    ## How to fix
    Each finding names the exact edit. Options that only apply to worker
    processes (`prefetch_factor`, `persistent_workers`, `multiprocessing_context`,
    `timeout`) go only where `num_workers` > 0; leaving `prefetch_factor` out
    when `num_workers` is 0 is portable across torch 1.x and 2.x. Keep the
    DataLoader timeout well below the process-group timeout (e.g. 120 s against
    1800 s).
    """
    if not job.configs:
        raise Skip("no training configs (pass --config or set `configs:` in settings)")
    specs = list(loader_specs(job.configs))
    if not specs:
        raise Skip(f"no DataLoader options in {len(job.configs)} config(s)")
    raw_version = job.torch_version
    version = parse_version(raw_version)
    pg_by_config: dict = {}  # a config's process-group timeouts, read once for its specs
    notes: list = []
    for spec in specs:
        found = conflicts(spec, version)
        if spec.config.rel not in pg_by_config:
            pg_by_config[spec.config.rel] = pg_timeouts(spec.config)
        pg = _pg_conflict(spec, pg_by_config[spec.config.rel])
        if pg:
            found.append(pg)
        notes += spec.notes
        for c in found:
            data = {"config": spec.config.rel, "keys": c.keys, "torch_version": raw_version,
                    "rule": c.rule, "keypath": spec.where,
                    "values": {k: spec.mapping[k] for k in c.keys if k in spec.mapping},
                    "raises": c.raises, **c.extra}
            if version is None:
                data["assumed"] = ("torch version unknown: applied the torch >= 2.0 rules"
                                   if raw_version is None else
                                   f"torch version {raw_version!r} not understood: applied "
                                   "the torch >= 2.0 rules")
            if spec.notes:
                data["notes"] = list(spec.notes)
            torch_txt = f"torch {raw_version}" if raw_version else "torch >= 2.0 (assumed)"
            effect = (c.raises if c.rule == "timeout-not-below-pg-timeout"
                      else f"{torch_txt} raises {c.raises}")
            yield Finding(f"{spec.where}: {c.message} — {effect}",
                          location=Location(spec.config.rel, spec.line(c.keys[0])),
                          fix=c.fix[0].upper() + c.fix[1:] + ".", data=data)
    if notes:
        job.record_fact("dataloader_unchecked", notes)
