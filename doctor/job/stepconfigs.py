"""The configs each launched step reads, with its command-line overrides applied.

A step names its configs on its command line (`--config X`, `-c X`, positional
`*.yaml`, Hydra's `-cn/-cp/-cd`) or in its entry module (`@hydra.main(config_path=,
config_name=)`); Hydra composes the defaults list; LightningCLI/jsonargparse merge
`--config` files and `--a.b=c` in argv order. The result replaces the file as the
user wrote it in what the checks read (`job.configs`), so `--data.num_workers=8` or
`trainer.devices=8` on the command line is what the checks judge, reported where
it was written (`LineDict.origin_of`). An override whose value the doctor cannot
know (`$VAR` it cannot resolve) is `Unknown`, never guessed.

A config a step names that does not exist is kept in `missing` (a finding of
config-not-found). What the doctor cannot follow is a note, never a guess.
"""
from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from doctor import fs
from doctor.errors import InputError
from doctor.job.configs import ConfigFile, load_yaml_text
from doctor.job.hydra import compose
from doctor.job.overrides import ParsedArgs, Unknown, apply_cli, parse_overrides
from doctor.job.sources import dotted, tree_of, trees_mentioning

SUBCOMMANDS = ("fit", "validate", "test", "predict")   # LightningCLI's


@dataclass
class StepConfigs:
    """What one training step reads."""
    configs: list = field(default_factory=list)   # ConfigFile, overrides applied
    replaces: list = field(default_factory=list)  # paths of the files they stand for
    missing: list = field(default_factory=list)   # (written path, script rel, line)
    notes: list = field(default_factory=list)
    # (file, (path, line) that names it, exact): every file read; exact is False when the
    # name could mean another file too (a relative --config whose base is a guess)
    needed: list = field(default_factory=list)
    # (file, (path, line) of the defaults entry, group): Hydra configs a defaults list
    # chooses that the config directory lacks (hydra.py Composition.missing); not filled
    # for Hydra's own groups (hydra/…: its package's and plugins' configs) nor where the
    # search path holds more than the doctor reads (`searched_more`)
    missing_defaults: list = field(default_factory=list)


def step_configs(job: Any, script: Any) -> StepConfigs:
    """The configs the script's training step reads (memoized per run)."""
    return job.memo(("step_configs", script.rel if script else None),
                    lambda: _read(job, script))


def effective_configs(job: Any, files: list) -> list:
    """The configs the checks read: each file as written, except those a training step
    reads with its overrides (then that reading: the overridden or composed config),
    plus the configs a step names outside the usual config directories."""
    replaced: set = set()
    read: list = []
    for script in job.scripts:
        sc = step_configs(job, script)
        for cfg, paths in zip(sc.configs, sc.replaces):
            replaced |= {str(p) for p in paths}
            read.append(cfg)
    plain = plain_hydra(job)
    for cfg, paths in zip(plain.configs, plain.replaces):
        if str(cfg.path) not in replaced:
            replaced |= {str(p) for p in paths}
            read.append(cfg)
    return [c for c in files if str(c.path) not in replaced] + read


def plain_hydra(job: Any) -> StepConfigs:
    """The @hydra.main configs that no job script's training step reaches, each composed
    with no overrides (memoized per run)."""
    return job.memo("plain_hydra", lambda: _plain_hydra(job))


def _plain_hydra(job: Any) -> StepConfigs:
    entries: set = set()
    for script in job.scripts:
        entry = job.entry_file(job.step(script))
        if entry is not None:
            entries.add(job.rel(entry))
    out = StepConfigs()
    for path, tree in trees_mentioning(job, b"hydra"):
        main = _hydra_main_of(tree) if job.rel(path) not in entries else None
        if main is not None:
            _compose_plain(job, path.parent / main[0] if main[0] else path.parent, main[1], out,
                           (job.rel(path), main[2]))
    return out


def _read(job: Any, script: Any) -> StepConfigs:
    out = StepConfigs()
    step = job.step(script)
    if not step.is_training:
        return out
    parsed = parse_overrides(list(step.args))
    cwd = Path(step.cwd) if step.cwd and Path(step.cwd).is_absolute() else job.repo
    entry = job.entry_file(step)
    origin = (step.script.rel, step.line)
    hydra = _hydra_target(job, parsed, entry, cwd)
    if hydra is not None:
        _compose(job, hydra, parsed, origin, step, out)
    elif parsed.configs:
        _cli(job, parsed, cwd, entry, origin, step, out)
    return out


def missing_of(job: Any, step: Any) -> list:
    """(written path, script rel, line) of each `--config` file a step other than the
    training one names on its command line and the doctor finds nowhere: every step of
    the script runs, so each one's configs must exist (Hydra targets: the training
    step's, read by `_read`)."""
    if not step.is_training:
        return []
    parsed = parse_overrides(list(step.args))
    cwd = Path(step.cwd) if step.cwd and Path(step.cwd).is_absolute() else job.repo
    entry = job.entry_file(step)
    if _hydra_target(job, parsed, entry, cwd) is not None:
        return []
    return [(a.path, step.script.rel, step.line) for a in parsed.configs
            if not isinstance(a.path, Unknown) and _find(job, a.path, cwd, entry) is None]


def _hydra_target(job: Any, parsed: ParsedArgs, entry: Optional[Path],
                  cwd: Path) -> Optional[tuple]:
    """(config dir, config name, extra dir or None) from -cn/-cp/-cd, else the entry's
    @hydra.main. `-cd DIR` adds DIR to the search path after the code's config_path
    (hydra/_internal/utils.py prepends it before the schema provider only): the primary
    config comes from config_path when it is there, else from DIR."""
    main = _hydra_main(job, entry) if entry is not None else None
    name = parsed.config_name or (main[1] if main else None)
    if not name:
        return None
    base = entry.parent if entry is not None else cwd
    path = parsed.config_path or (main[0] if main else None)
    primary = base / path if path else base
    if not parsed.config_dir:
        return primary, name, None
    extra = cwd / parsed.config_dir
    return (primary if fs.is_file(_primary_file(primary, name), job.unreadable) else extra,
            name, extra)


def _primary_file(config_dir: Path, name: str) -> Path:
    return config_dir / (name if name.endswith((".yaml", ".yml")) else f"{name}.yaml")


def searched_more(job: Any) -> bool:
    """True when Hydra plugins the doctor does not run may add config directories: a
    `hydra_plugins` package in the repo, or an installed one with a SearchPathPlugin
    (launchers and sweepers, the usual installed plugins, add none). Hydra finds its
    plugins by importing every `hydra_plugins` package on sys.path (memoized per run)."""
    return job.memo("hydra_plugins", lambda: _searched_more(job))


def _searched_more(job: Any) -> bool:
    if any("hydra_plugins" in Path(job.rel(f)).parts[:-1]
           for f in job.repo_files({".py"}, whole=True)):
        return True
    for entry in sys.path:
        plugins = Path(entry or ".") / "hydra_plugins"
        try:
            files = list(plugins.rglob("*.py")) if plugins.is_dir() else []
        except OSError:
            continue
        for f in files:
            if b"SearchPathPlugin" in (fs.read_bytes(f) or b""):
                return True
    return False


def _hydra_main(job: Any, entry: Path) -> Optional[tuple]:
    """(config_path, config_name) of the entry's @hydra.main, when both are constants."""
    tree = tree_of(job, entry)
    return _hydra_main_of(tree) if tree is not None else None


def _hydra_main_of(tree: ast.AST) -> Optional[tuple]:
    """(config_path, config_name) of a module-level @hydra.main function, if any."""
    for node in getattr(tree, "body", ()):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and (dotted(dec.func).endswith("hydra.main") or (
                        dotted(dec.func) == "main"   # `from hydra import main`
                        and any(k.arg == "config_name" for k in dec.keywords))):
                    kw = {k.arg: k.value for k in dec.keywords}
                    path, name = kw.get("config_path"), kw.get("config_name")
                    if isinstance(name, ast.Constant) and isinstance(name.value, str):
                        p = path.value if isinstance(path, ast.Constant) else None
                        return (p if isinstance(p, str) else None), name.value, dec.lineno
    return None


def _compose_plain(job: Any, config_dir: Path, name: str, out: StepConfigs,
                   origin: tuple) -> None:
    """Compose an entry's @hydra.main config with no overrides (its defaults)."""
    file = config_dir / (name if name.endswith((".yaml", ".yml")) else f"{name}.yaml")
    if not fs.is_file(file, job.unreadable):
        return
    try:
        comp = compose(config_dir, name, [], origin=origin, loaded=_loaded(job),
                       realpath=job.realpath)
    except (InputError, OSError, RecursionError):
        return
    out.needed += [(p, where, True) for p, where in comp.named_by.items()]
    out.configs.append(ConfigFile(path=Path(job.realpath(file)), rel=job.rel(file), data=comp.data))
    out.replaces.append([Path(job.realpath(p)) for p in comp.files] or [Path(job.realpath(file))])
    out.missing_defaults += _missing_defaults(job, comp)


def _missing_defaults(job: Any, comp: Any, extra: Optional[Path] = None) -> list:
    """The composition's missing defaults that the config directory alone decides: none
    where Hydra searches more (`hydra.searchpath`, `-cd`, a search path plugin), since the
    entry may be found there."""
    if not comp.missing or comp.searchpath or extra is not None or searched_more(job):
        return []
    return [m for m in comp.missing if m[1] and not (m[2] + "/").startswith("hydra/")]


def _compose(job: Any, target: tuple, parsed: ParsedArgs, origin: tuple, step: Any,
             out: StepConfigs) -> None:
    config_dir, name, extra = target
    file = _primary_file(config_dir, name)
    if not fs.is_file(file, job.unreadable):
        out.missing.append((job.rel(file), step.script.rel, step.line))
        return
    overrides = [o for o in parsed.overrides if o.tool == "hydra"]
    try:
        comp = compose(config_dir, name, overrides, origin=origin, loaded=_loaded(job),
                       realpath=job.realpath)
    except (InputError, OSError, RecursionError) as exc:
        out.notes.append(f"{step.where}: Hydra config {job.rel(file)} not composed ({exc})")
        return
    out.configs.append(ConfigFile(path=Path(job.realpath(file)), rel=job.rel(file), data=comp.data))
    out.replaces.append([Path(job.realpath(p)) for p in comp.files] or [Path(job.realpath(file))])
    out.notes += [f"{step.where}: {n}" for n in comp.notes]
    out.needed += [(p, where, True) for p, where in comp.named_by.items()]
    out.missing_defaults += _missing_defaults(job, comp, extra)


def _load_once(job: Any, path: Any) -> Any:
    """A config file's YAML, loaded once per run (most are training configs the job has
    loaded already); apply_cli copies what it merges, so the tree is shared."""
    loaded = _loaded(job)
    key = fs.realpath(path)
    if key not in loaded:
        loaded[key] = load_yaml_text(path, "config file")
    return loaded[key]


def _loaded(job: Any) -> dict:
    """The YAML files the run's Hydra compositions read, each loaded once: the training
    configs as the job loaded them, and any other file on first use."""
    return job.memo("hydra_loaded", lambda: {str(c.path): c.data for c in job.config_files})


def _cli(job: Any, parsed: ParsedArgs, cwd: Path, entry: Optional[Path], origin: tuple,
         step: Any, out: StepConfigs) -> None:
    files = []
    for arg in parsed.configs:
        if isinstance(arg.path, Unknown):
            out.notes.append(f"{step.where}: `{arg.raw}`: {arg.path.reason}; not read")
            continue
        found = _find(job, arg.path, cwd, entry)
        if found is None:
            out.missing.append((arg.path, step.script.rel, step.line))
        else:
            files.append((arg.path, found))
            out.needed.append((found, origin, _only_match(job, arg.path, cwd, entry, step)))
    if not files:
        return
    where = dict(files)

    def load(written: str) -> Any:
        data = _load_once(job, where[written]) if written in where else None
        sub = next((s for s in SUBCOMMANDS if s in parsed.positionals), None)
        if sub and isinstance(data, dict) and isinstance(data.get(sub), dict):
            return data[sub]   # `--config X fit`: the file holds the subcommand's section
        return data

    notes: list = []
    try:
        data = apply_cli(_only_found(parsed, where), None, load, origin=origin, notes=notes)
    except (InputError, OSError, RecursionError) as exc:
        out.notes.append(f"{step.where}: configs not read ({exc})")
        return
    first = files[0][1]
    out.configs.append(ConfigFile(path=Path(job.realpath(first)), rel=job.rel(first), data=data))
    out.replaces.append([Path(job.realpath(p)) for _, p in files])
    out.notes += [f"{step.where}: {n}" for n in notes]


def _only_found(parsed: ParsedArgs, where: dict) -> ParsedArgs:
    items = [i for i in parsed.items if not hasattr(i, "path") or i.path in where]
    return ParsedArgs(items, parsed.config_name, parsed.config_path, parsed.config_dir,
                      parsed.flags, parsed.positionals)


def _only_match(job: Any, written: str, cwd: Path, entry: Optional[Path], step: Any) -> bool:
    """True when `written` names one file whichever directory the step really starts in
    (its cd, the repo, the entry's or the job script's directory)."""
    p = Path(written)
    if p.is_absolute():
        return True
    if step.cwd and Path(step.cwd).is_absolute():
        return fs.is_file(cwd / p, job.unreadable)
    bases = [cwd, job.repo, entry.parent if entry is not None else None,
             step.script.path.parent if step.script else None]
    return len({job.realpath(b / p) for b in bases
                if b is not None and fs.is_file(b / p, job.unreadable)}) == 1


def _find(job: Any, written: str, cwd: Path, entry: Optional[Path]) -> Optional[Path]:
    """The file a `--config` names: relative to the step's working directory, else the
    entry's directory (LightningCLI examples), else the one repo file with that tail."""
    p = Path(written)
    if p.is_absolute():
        return p if fs.is_file(p, job.unreadable) else None
    for base in (cwd, entry.parent if entry is not None else None, job.repo):
        if base is not None and fs.is_file(base / p, job.unreadable):
            return base / p
    tail = written.lstrip("./")
    hits = [f for f in job.repo_files({".yaml", ".yml", ".json"}, whole=True)
            if job.rel(f) == tail or job.rel(f).endswith("/" + tail)]
    return hits[0] if len(hits) == 1 else None
