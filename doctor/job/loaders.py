"""DataLoader specs in the training configs: which mappings are DataLoaders' options."""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

from doctor import fs
from doctor.job.closure import step_files
from doctor.job.code import LoaderCall, code_settings, step_argv
from doctor.job.configs import ConfigFile, LineDict, keypath
from doctor.model import Location

PG_SECTIONS = {"distributed", "dist", "ddp", "fsdp", "deepspeed", "strategy", "trainer",
               "process_group", "torch_distributed"}
# Keys that make a mapping a DataLoader spec on their own.
LOADER_KEYS = ("num_workers", "prefetch_factor", "persistent_workers", "multiprocessing_context")


# Keys that, next to a bare `timeout`, say the mapping is a DataLoader's.
LOADER_HINTS = {"batch_size", "shuffle", "pin_memory", "drop_last", "collate_fn", "sampler",
                "batch_sampler", "worker_init_fn", "in_order", "pin_memory_device"}


@dataclass
class LoaderSpec:
    """One DataLoader's options as written in a config."""
    config: ConfigFile
    path: tuple
    mapping: dict
    notes: list = field(default_factory=list)

    @property
    def where(self) -> str:
        return keypath(self.path) or "(top level)"

    def location(self, key: str) -> Location:
        """Where the key was written (an override on the command line wins)."""
        if key in self.mapping:
            return self.config.location(self.mapping, key)
        return Location(self.config.rel, getattr(self.mapping, "line", None) or None)

    def line(self, key: str) -> Optional[int]:
        m = self.mapping
        return m.line_of(key) if isinstance(m, LineDict) and key in m else \
            getattr(m, "line", None) or None


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_loader_spec(path: tuple, mapping: dict) -> bool:
    if any(k in mapping for k in LOADER_KEYS):
        return True
    if "timeout" not in mapping:
        return False
    target = str(mapping.get("_target_", mapping.get("class_path", "")))
    name = next((str(p) for p in reversed(path) if isinstance(p, str)), "")
    if name.lower() in PG_SECTIONS:
        return False
    return (target.endswith("DataLoader") or "loader" in name.lower()
            or bool(LOADER_HINTS & set(map(str, mapping))))


def loader_specs(configs: list) -> Iterator[LoaderSpec]:
    for cfg in configs:
        templates = merge_template_lines(cfg)
        for path, mapping in cfg.mappings():
            if is_loader_spec(path, mapping) and not (
                    "num_workers" not in mapping and getattr(mapping, "line", 0) in templates):
                yield LoaderSpec(cfg, path, mapping)


def merge_template_lines(cfg: ConfigFile) -> set:
    """Lines of anchored mappings (`loader: &loader`) that are merged elsewhere
    (`<<: *loader`): shared defaults, not DataLoaders; the mappings they are merged
    into are checked with their own num_workers."""
    try:
        st = os.stat(cfg.path)
    except OSError:
        return set()
    fs.note_read(cfg.path, st)  # an input (read below, or before: the cache's)
    # a composed config is its primary file again, once per job script that composes it
    return set(_merge_template_lines(os.fspath(cfg.path), st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=4096)
def _merge_template_lines(path: str, _mtime: int, _size: int) -> frozenset:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return frozenset()
    merged = {name for line in re.findall(r"<<\s*:([^\n]*)", text)
              for name in re.findall(r"\*([\w.-]+)", line)}
    if not merged:
        return frozenset()
    return frozenset(n for n, line in enumerate(text.splitlines(), 1)
                     if any(name in merged for name in re.findall(r"&([\w.-]+)", line)))


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def loader_workers(job: Any, default_prefetch: int) -> list:
    """(config, line, num_workers, prefetch_factor) for every DataLoader spec with
    num_workers > 0: the same specs dataloader-option-conflict reads (loader_specs)."""
    out = []
    for spec in loader_specs(job.configs):
        n = _int(spec.mapping.get("num_workers"))
        if n and n > 0:
            pf = _int(spec.mapping.get("prefetch_factor")) or default_prefetch
            out.append((spec.config.rel, spec.line("num_workers"), n, pf))
    if not out:   # no config sizes the workers: the code's DataLoader calls do
        for _, n, pf, loader, _links in code_workers(job, default_prefetch)[0]:
            out.append((loader.call.file, loader.line("num_workers"), n, pf))
    return out


def loaders_per_job(job: Any, loaders: list) -> list:
    """[(script, ranks per node, loaders)] for each job script's training step (None: the
    login environment). A DataLoader of the code counts for a job whose step's import
    closure holds its file, or for every job whose code is not known; the configs'
    loaders count for every job. Each job is sized by its own ranks and loaders, never
    one job's ranks times another's loaders."""
    out = []
    for script in job.scripts or [None]:
        reached = step_files(job, job.step(script)) if script is not None else []
        files = {job.rel(p) for p in reached}
        mine = [w for w in loaders if not files or not w[0].endswith(".py") or w[0] in files]
        out.append((script, job.ranks_per_node(script).value or 1, mine))
    return out


@dataclass
class CodeLoader:
    """A DataLoader call of the code with workers, shaped like a config's LoaderSpec for
    the checks that size the workers (the job's configs give none)."""
    call: LoaderCall
    values: dict            # key → CodeValue, as passed
    config: Any = None

    @property
    def where(self) -> str:
        return f"DataLoader at {self.call.file}:{self.call.line}"

    @property
    def mapping(self) -> dict:
        return self.values

    def line(self, key: str) -> int:
        v = self.values.get(key)
        return v.line if v is not None else self.call.line

    def location(self, key: str) -> Location:
        return Location(self.call.file, self.line(key))


def code_workers(job: Any, default_prefetch: int = 2) -> tuple:
    """([(workers x prefetch, workers, prefetch, CodeLoader, links)], [unknown places]):
    the code's DataLoader calls with workers, under the first job script's environment
    and command line. links: what the doctor could not show (an env default, a config
    key the code reads, a command line it does not see)."""
    script = job.scripts[0] if job.scripts else None
    code = code_settings(job, job.job_env(script).plain(), step_argv(job, script))
    out, unknown = [], []
    for call in code.loaders:
        w = call.get("num_workers")
        if w is None:
            continue
        if not w.known or w.kind == "guarded" or not _is_int(w.value):
            unknown.append(f"{call.file}:{w.line or call.line} ({w.text})")
            continue
        if w.value <= 0:
            continue
        p = call.get("prefetch_factor")
        prefetch = p.value if p is not None and p.known and p.kind != "guarded" and \
            _is_int(p.value) and p.value > 0 else default_prefetch
        links = [v.link() for v in (w, p) if v is not None and v.known and not v.complete]
        values = {k: v for k in ("num_workers", "prefetch_factor") if (v := call.get(k))}
        out.append((w.value * prefetch, w.value, prefetch, CodeLoader(call, values), links))
    return out, unknown


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)
