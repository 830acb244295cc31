"""DataLoader options in the training configs that torch rejects."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.code import (CodeValue, LoaderCall, code_settings, config_value_path,
                             repo_loaders, step_argv)
from doctor.job import yamledit
from doctor.job.configs import ConfigFile, LineDict, is_unresolved, keypath
from doctor.job.context import Job
from doctor.job.launch import scripts_or_none
from doctor.job.stepconfigs import plain_hydra, step_configs
from doctor.job.loaders import PG_SECTIONS, LoaderSpec, _is_number, loader_specs
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


LOADER_OPTIONS = ("num_workers", "timeout", "prefetch_factor", "persistent_workers",
                  "multiprocessing_context")


@dataclass
class CodeSpec:
    """A DataLoader call in the code, shaped like a config's LoaderSpec for `conflicts`:
    `mapping` holds the values the call receives (a CodeValue where it is unknown);
    `links` the links of each key's path that the doctor could not see."""
    call: LoaderCall
    mapping: dict
    values: dict
    links: dict
    notes: list = field(default_factory=list)

    @property
    def rel(self) -> str:
        return self.call.file

    @property
    def where(self) -> str:
        return f"DataLoader at {self.call.file}:{self.call.line}"

    def line(self, key: str) -> Optional[int]:
        return self.values[key].line if key in self.values else self.call.line

    def location(self, key: str) -> Location:
        return Location(self.call.file, self.line(key))


def code_spec(call: LoaderCall) -> CodeSpec:
    """The options this call passes. A value guarded by the worker count takes the branch
    the known worker count picks; the key is left out when that branch does not pass it."""
    values = {k: v for k in LOADER_OPTIONS if (v := call.get(k)) is not None}
    workers = values.get("num_workers")
    count = 0 if workers is None else workers.value if workers.known and \
        workers.kind != "guarded" and _is_number(workers.value) else None
    mapping: dict = {}
    links: dict = {}
    for key, v in list(values.items()):
        if v.kind == "guarded":
            if count is None:
                v = CodeValue("unknown", file=v.file, line=v.line, text=v.text,
                              why="guarded by the worker count, which the doctor cannot read")
            else:
                branch = v.workers if count > 0 else v.zero
                links[key] = [f"{key}={v.text} is guarded by the worker count"]
                if branch is None:
                    del values[key]
                    continue
                v = values[key] = branch
        mapping[key] = v.value if v.known else v
        if not v.complete:
            links.setdefault(key, []).append(v.link())
    if call.partial:
        links["partial"] = [f"DataLoader is made through functools.partial at {call.file}:"
                            f"{call.line}; where it is called may pass other values"]
    return CodeSpec(call, mapping, values, links)


def _rel(spec: Any) -> str:
    return spec.config.rel if isinstance(spec, LoaderSpec) else spec.rel


def _value(spec: Any, key: str, kind: str) -> tuple:
    """(known, value). kind: int, number, bool, context. Unknowable values → (False, note)."""
    if key not in spec.mapping:
        defaults = {"num_workers": 0, "timeout": 0, "prefetch_factor": None,
                    "persistent_workers": False, "multiprocessing_context": None}
        return True, defaults[key]
    v = spec.mapping[key]
    line = spec.line(key)
    if isinstance(v, CodeValue):
        spec.notes.append(f"{_rel(spec)}:{line}: {key}: {v.text}: {v.why}; not checked")
        return False, None
    if is_unresolved(v):
        spec.notes.append(f"{_rel(spec)}:{line}: {key}: {v!r} is filled in at run time; "
                          "not checked")
        return False, None
    ok = {"int": lambda x: isinstance(x, int) and not isinstance(x, bool),
          "prefetch": lambda x: x is None or (isinstance(x, int) and not isinstance(x, bool)),
          "number": _is_number,
          "bool": lambda x: x is None or isinstance(x, (bool, int)),
          "context": lambda x: not isinstance(x, (dict, list))}[kind](v)
    if not ok:
        spec.notes.append(f"{_rel(spec)}:{line}: {key}: {v!r} is not a plain "
                          f"{'integer' if kind in ('int', 'prefetch') else kind}; not checked")
        return False, None
    return True, v


def conflicts(spec: Any, version: Optional[tuple]) -> list:
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


def _suggested_timeout(pg_secs: float) -> int:
    """A DataLoader timeout well below the process-group timeout: a fifth of it."""
    return max(1, int(pg_secs // 5))


def _pg_conflict(spec: Any, pgs: list) -> Optional[Conflict]:
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
    suggest = _suggested_timeout(secs)
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
       severity="error", tags=("dataloader", "config"), needs=("configs", "repo"),
       timeout=10)
def dataloader_option_conflict(job: Job) -> Iterator[Finding]:
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

    `DataLoader(...)` calls in the repo's code (also `functools.partial(DataLoader,
    ...)`), read without importing it, are specs too, reported at the call.
    A keyword value is followed through constants, names assigned once,
    literal `**` dicts (with their `d['k'] = v`; `**self.kwargs` set once in
    `__init__`), `os.environ.get("X", "8")` (X from the job script's
    environment, else its default), `cfg.get('k', d)`, `self.x` set once in
    `__init__`, `cfg["a"]["b"]` / `cfg.a.b` read from the job's configs,
    argparse options (`args.num_workers`: the job's command line, else the
    option's default), `multiprocessing.get_context("spawn")`, one level of a
    module's own helper function (`num_workers=get_workers()`), and
    `x if num_workers > 0 else None` (guarded: the branch the worker count
    picks). A key set only under `if num_workers > 0:` is not passed without
    workers, so a config's `prefetch_factor` next to no `num_workers` is kept
    out (seed 000's fixed datamodule). Precision rule: a finding is an `error`
    only when the whole path from the written value to the DataLoader is
    shown; a value that is an env variable's default, a config key's default,
    a config key the code reads (is that parameter the job's config?), an
    argparse default under a command line the doctor cannot see whole,
    guarded, or reached through a partial makes it a `warning` that names that
    link (`data.unseen`). The timeout rule also compares with the code's
    `init_process_group(timeout=...)`.

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

    `doctor fix` edits the key's own line in a YAML config: it removes
    `prefetch_factor`, sets `persistent_workers`, `multiprocessing_context` or
    a timeout without workers to its default (safe), and lowers a timeout to
    a fifth of the process-group timeout (unsafe: `--unsafe`). A value from
    the command line, a Hydra-composed file, a merged template or the code
    gets no edit.
    """
    specs = list(loader_specs(job.configs))
    runs = _code_runs(job)
    calls = {(c.file, c.line) for _, _, code in runs for c in code.loaders}
    if not job.configs and not calls:
        raise Skip("no training configs (pass --config or set `configs:` in settings) and no "
                   "DataLoader(...) call in the code")
    if not specs and not calls:
        raise Skip(f"no DataLoader options in {len(job.configs)} config(s) and no "
                   "DataLoader(...) call in the code")
    raw_version = job.torch_version
    version = parse_version(raw_version)
    code_pgs = _code_pg_candidates(runs[0][2].pg_inits) if runs else []
    pg_by_config: dict = {}  # a config's process-group timeouts, read once for its specs
    loaders: Optional[list] = None
    notes: list = []
    for spec in specs:
        found = conflicts(spec, version)
        if spec.config.rel not in pg_by_config:
            pg_by_config[spec.config.rel] = pg_timeouts(spec.config)
        pg = _pg_conflict(spec, pg_by_config[spec.config.rel])
        pg_links: list = []
        if pg is None:   # then the code's init_process_group, whose run the doctor cannot tie
            pg = _pg_conflict(spec, code_pgs)
            pg_links = [f"the job runs the init_process_group ({pg.keys[1]}, line "
                        f"{pg.extra['pg_line']}) with this config"] if pg else []
        if pg:
            found.append(pg)
        notes += spec.notes
        for c in found:
            if loaders is None:   # the repo's calls, all of them even in a scoped run
                loaders = _repo_loaders(job, runs)
            links = pg_links if c.rule == "timeout-not-below-pg-timeout" else []
            through = config_value_path(spec.mapping, c.keys[0], loaders)
            if through is None:   # every DataLoader call of the repo keeps the value out
                notes.append(f"{spec.config.rel}:{spec.line(c.keys[0])}: {c.message} — but "
                             f"the code's DataLoader calls never pass {c.keys[0]} unchanged "
                             f"({_calls(loaders)})")
                continue
            yield _finding(spec, c, raw_version, version, {"config": spec.config.rel},
                           spec.config.rel, links + through,
                           () if links + through else _config_edits(job, spec, c))
    seen: set = set()
    noted = set(notes)
    judged: set = set()   # scripts with the same environment share one CodeSettings
    for script, env, code in runs:
        if id(code) in judged:
            continue   # each of its calls was judged, and reported, under an earlier script
        judged.add(id(code))
        pgs = _code_pg_candidates(code.pg_inits)
        for call in code.loaders:
            cspec = code_spec(call)
            for c, links in _code_conflicts(cspec, version, code.pg_inits, pgs):
                if (call.file, call.line, c.rule) in seen:
                    continue   # the same call judged under another script's environment
                seen.add((call.file, call.line, c.rule))
                extra = {"code": {"file": call.file, "line": call.line},
                         "from": _origins(cspec, c.keys, env)}
                if script is not None:
                    extra["script"] = script.rel
                yield _finding(cspec, c, raw_version, version, extra, call.file, links)
            for n in cspec.notes:
                if n not in noted:
                    noted.add(n)
                    notes.append(n)
    if notes:
        job.record_fact("dataloader_unchecked", notes)


def _finding(spec: Any, c: Conflict, raw_version: Optional[str], version: Optional[tuple],
             extra: dict, rel: str, links: list, edits: tuple = ()) -> Finding:
    """One conflict as a finding; a warning naming the links when the path is not whole."""
    data = {**extra, "keys": c.keys, "torch_version": raw_version, "rule": c.rule,
            "keypath": spec.where, "values": {k: spec.mapping[k] for k in c.keys
                                              if k in spec.mapping},
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
    message = f"{spec.where}: {c.message} — {effect}"
    severity = None
    if links:
        data["unseen"] = links
        message += " — not shown end to end: " + "; ".join(links)
        severity = Severity.WARNING
    return Finding(message, location=_where(spec, c.keys),
                   fix=c.fix[0].upper() + c.fix[1:] + ".", data=data, severity=severity,
                   edits=edits)


# the rules whose fix is to leave the key out (DataLoader's default then applies), and
# those whose key gets DataLoader's default written out, which keeps it for code reading it
DELETE_RULES = ("prefetch-without-workers", "prefetch-null", "prefetch-zero", "option-too-new")
DEFAULTS = {"persistent-without-workers": (False, "false"),
            "context-without-workers": (None, "null"), "timeout-without-workers": (0, "0")}


def _config_edits(job: Job, spec: LoaderSpec, c: Conflict) -> tuple:
    """The edit of the config line that raises: the key removed or set to its default, or
    the timeout lowered (unsafe: a slow batch may now time out).
    Only a key written in this file at its own line (not a command-line override, not a
    Hydra-composed file, not a merged template); see doctor/job/yamledit.py."""
    key = c.keys[0]
    m = spec.mapping
    rel = spec.config.rel
    if not isinstance(m, LineDict) or key not in m or not _written_here(job, spec.config, m, key) \
            or not rel.endswith((".yaml", ".yml")):
        return ()
    edit = None
    if c.rule in DELETE_RULES:
        edit = yamledit.delete_key(job, rel, m.line_of(key), spec.path, key,
                                   f"remove {key} from {spec.where}")
    elif c.rule in DEFAULTS:
        value, text = DEFAULTS[c.rule]
        edit = yamledit.set_value(job, rel, m.line_of(key), spec.path, key, value, text,
                                  f"set {spec.where}.{key} to {text}, its default")
    elif c.rule == "timeout-not-below-pg-timeout":
        secs = _suggested_timeout(c.extra["pg_timeout_s"])
        edit = yamledit.set_value(job, rel, m.line_of(key), spec.path, key, secs, str(secs),
                                  f"lower {spec.where}.timeout to {secs} s", unsafe=True)
    return (edit,) if edit else ()


def _written_here(job: Job, config: ConfigFile, m: LineDict, key: str) -> bool:
    """True when `key`'s value is the one written in `config`'s own file at its own line, so
    editing that line changes what the job reads. A config a job script names with
    `--config` is read merged (every key remembers the file it came from): that is still
    this file when the merge read this file alone. A command-line override, a key another
    file of the merge set, or a Hydra composition of several files: False (removing the
    key could let another file's value through)."""
    origin = m.origin_of(key)
    if origin is None:
        return True
    path, line = origin
    written = os.path.normpath(str(path))
    return line == m.line_of(key) and _files_behind(job, config) == [config.path] and (
        written == config.rel or written == str(config.path)
        or config.rel.endswith("/" + written))


def _files_behind(job: Job, config: ConfigFile) -> list:
    """The files a step's merged or composed config stands for ([its own path] for a
    config read as written)."""
    for sc in [step_configs(job, s) for s in job.scripts] + [plain_hydra(job)]:
        for cfg, paths in zip(sc.configs, sc.replaces):
            if cfg is config:
                return [Path(p) for p in paths]
    return [config.path]


def _where(spec: Any, keys: list) -> Location:
    """The offending key's place, unless another conflicting key was set on the command
    line: then the override, which is what turned a valid config into a conflict."""
    places = [spec.location(k) for k in keys]
    return next((p for p in places if not p.path.endswith((".yaml", ".yml", ".json"))
                 and p.path != getattr(spec, "rel", None)), places[0])


# ---- DataLoader calls in the code -----------------------------------------------------
def _calls(loaders: list) -> str:
    return ", ".join(f"{c.file}:{c.line}" for c in loaders[:3]) + \
        (f" and {len(loaders) - 3} more" if len(loaders) > 3 else "")


def _repo_loaders(job: Job, runs: list) -> list:
    """Every DataLoader call of the repo, which decides whether a config's value reaches
    one: a scoped run reads the whole repo's code for it (only when a config conflicts)."""
    return list(repo_loaders(job, runs[0][1].plain())) if runs else []


def _code_runs(job: Job) -> list:
    """[(script, its env, the code's settings under it)]: env values differ per script."""
    out = []
    for script in scripts_or_none(job):
        env = job.job_env(script)
        out.append((script, env, code_settings(job, env.plain(), step_argv(job, script))))
    return out


def _code_conflicts(spec: CodeSpec, version: Optional[tuple], pg_inits: tuple,
                    candidates: list) -> list:
    """[(Conflict, the links the doctor could not see)] for one call; `candidates`:
    _code_pg_candidates(pg_inits), made once for all the calls."""
    out = []
    for c in conflicts(spec, version):
        links = [x for k in c.keys for x in spec.links.get(k, [])]
        out.append((c, links + spec.links.get("partial", [])))
    pg = _pg_conflict(spec, candidates)
    if pg:
        explicit = [p for p in pg_inits if p.timeout is not None]
        chosen = next(p for p in explicit if p.seconds == pg.extra["pg_timeout_s"] and
                      p.line == pg.extra["pg_line"])
        links = list(spec.links.get("timeout", []))
        if chosen.timeout is not None and not chosen.timeout.complete:
            links.append(chosen.timeout.link())
        if chosen.file != spec.call.file:
            links.append(f"the job runs the init_process_group at {chosen.file}:{chosen.line} "
                         f"with {spec.call.file}")
        out.append((pg, links))
    return out


def _code_pg_candidates(pgs: tuple) -> list:
    """The code's explicit init_process_group timeouts as `_pg_conflict` candidates."""
    return [(p.seconds, "timeout", f"init_process_group timeout in {p.file}", p.line, 0)
            for p in pgs if p.timeout is not None and p.seconds]


def _origins(spec: CodeSpec, keys: list, env: Any) -> dict:
    """Where each value came from, for the finding's data: constant, env (and where the
    job sets it), env-default, config key."""
    out = {}
    for k in keys:
        v = spec.values.get(k)
        if v is None:
            continue
        o = {"kind": v.kind, "text": v.text, "line": v.line}
        if v.source:
            o["source"] = v.source
        if v.kind == "env" and v.source in env:
            o["set_at"] = env[v.source].where()
        out[k] = o
    return out
