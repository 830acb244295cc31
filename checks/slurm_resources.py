"""The job script's Slurm resources against the training config's devices and workers."""
from __future__ import annotations

import re
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check

DEVICE_KEYS = ("devices", "gpus")


def _count(value) -> Optional[int]:
    """Lightning's devices: an int, a list of ids, "0,1", "2"; None for auto/-1."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value > 0 else None
    if isinstance(value, (list, tuple)):
        return len(value) or None
    if isinstance(value, str):
        v = value.strip()
        if v.isdigit():
            return int(v) or None
        if "," in v and all(p.strip().isdigit() for p in v.split(",") if p.strip()):
            return len([p for p in v.split(",") if p.strip()])
    return None


def trainer_specs(cfg) -> list:
    """(keypath, mapping, devices, num_nodes) for mappings that say devices or num_nodes."""
    out = []
    for keypath, m in cfg.mappings():
        dev_key = next((k for k in DEVICE_KEYS if k in m), None)
        if dev_key is None and "num_nodes" not in m:
            continue
        devices = _count(m.get(dev_key)) if dev_key else None
        nodes = m.get("num_nodes") if isinstance(m.get("num_nodes"), int) else None
        if devices is None and nodes is None:
            continue
        out.append((keypath, m, dev_key, devices, nodes))
    return out


def workers_specs(cfg) -> list:
    return [(kp, m) for kp, m in cfg.mappings()
            if isinstance(m.get("num_workers"), int) and not isinstance(m["num_workers"], bool)]


def pairs(job) -> list:
    """(script, config): a script with the configs it names, or every config when there
    is a single script that names none. Hydra config groups (`configs/trainer/ddp.yaml`)
    are alternatives: only the option the script's overrides (`trainer=ddp`) or else a
    defaults list selects is used."""
    defaults = _hydra_defaults(job.configs)
    out = []
    for s in job.scripts:
        overrides = _hydra_overrides(s)
        chosen = dict(defaults, **overrides)
        selected = [c for c in job.configs if _selected(c, chosen)]
        named = [c for c in job.configs if c.rel in s.text or c.path.name in s.text]
        if any(_group_of(c) in overrides for c in job.configs):
            out += [(s, c) for c in selected]
        elif named:
            out += [(s, c) for c in named]
        elif len(job.scripts) == 1:
            out += [(s, c) for c in selected]
    return out


_OVERRIDE = re.compile(r"^\+{0,2}([A-Za-z_][\w/.-]*?)(?:@[\w.]+)?=([\w.-]+)$")


def _group_of(cfg) -> str:
    return cfg.path.parent.name


def _option(value: str) -> str:
    return re.sub(r"\.ya?ml$", "", value)


def _hydra_overrides(script) -> dict:
    """{group: option} from command words such as `trainer=ddp` or `+launcher=slurm`."""
    out = {}
    for cmd in script.commands:
        for word in cmd.argv[1:]:
            m = _OVERRIDE.match(word)
            if m:
                out[m.group(1).rsplit("/", 1)[-1]] = _option(m.group(2))
    return out


def _hydra_defaults(configs) -> dict:
    """{group: option or None} from the configs' Hydra defaults lists (`- trainer: gpu`)."""
    out: dict = {}
    for cfg in configs:
        entries = cfg.data.get("defaults") if isinstance(cfg.data, dict) else None
        for entry in entries if isinstance(entries, list) else ():
            if not (isinstance(entry, dict) and len(entry) == 1):
                continue
            (key, value), = entry.items()
            group = re.sub(r"^(override|optional)\s+", "", str(key)).split("@")[0]
            group = group.strip().rstrip("/").rsplit("/", 1)[-1]
            if group and (value is None or isinstance(value, str)):
                out.setdefault(group, _option(value) if value else None)
    return out


def _selected(cfg, chosen: dict) -> bool:
    """False for a Hydra group option that the defaults or overrides do not select."""
    group = _group_of(cfg)
    return group not in chosen or chosen[group] == _option(cfg.path.name)


@check("slurm-gpu-mismatch", title="Slurm resources do not match the config's devices, "
       "nodes or workers", severity="error", tags=("slurm", "gpu", "config"),
       needs=("configs", "sbatch"), timeout=10)
def slurm_gpu_mismatch(job) -> Iterator[Finding]:
    """The job script asks Slurm for other GPUs, nodes, tasks or CPUs than the config uses.

    Compares each job script with the configs it names (or all configs when
    there is one script), following Lightning's own SLURM validation:
    `num_nodes` must equal `--nodes`; `devices` must equal `--ntasks-per-node`
    when that is set; `devices × num_nodes` must not exceed the GPUs
    requested (`--gpus-per-node`, `--gres=gpu:N`, `--gpus`); and a
    DataLoader's `num_workers` should fit in `--cpus-per-task`.

    ## Why it matters
    Lightning raises `You set devices=4 in Lightning, but the number of tasks
    per node configured in SLURM --ntasks-per-node=1 does not match` (or the
    same for num_nodes) only once the job has started; fewer GPUs than devices
    fails at device setup; more GPUs than devices leaves paid-for GPUs idle;
    more workers than CPUs makes the workers fight over the cores Slurm bound
    to the task.

    ## How to fix
    Make the script and the config say the same thing: one task per GPU
    (`#SBATCH --ntasks-per-node=<devices>`, `#SBATCH --gpus-per-node=<devices>`,
    `#SBATCH --nodes=<num_nodes>`), and `--cpus-per-task` ≥ num_workers + 1.
    """
    todo = pairs(job)
    if not todo:
        raise Skip("no job script with a training config to compare (pass --sbatch and "
                   "--config)")
    compared = False
    for script, cfg in todo:
        nodes = script.nodes or 1
        gpn = script.gpus_per_node()
        tpn = script.ntasks_per_node
        for _keypath, m, dev_key, devices, cfg_nodes in trainer_specs(cfg):
            compared = True
            line = m.line_of(dev_key) if dev_key else m.line_of("num_nodes")
            loc = Location(cfg.rel, line)
            base = {"config": cfg.rel, "script": script.rel, "devices": devices,
                    "num_nodes": cfg_nodes, "nodes": nodes, "ntasks_per_node": tpn,
                    "gpus_per_node": gpn[0] if gpn else None}
            if cfg_nodes is not None and cfg_nodes != nodes:
                d = script.get("nodes")
                yield Finding(
                    f"num_nodes={cfg_nodes} in {cfg.rel}, but "
                    f"{script.rel} asks for --nodes={nodes}",
                    location=Location(cfg.rel, m.line_of("num_nodes")),
                    fix=f"Set num_nodes: {nodes} in the config, or `#SBATCH --nodes={cfg_nodes}`"
                        + (f" ({script.rel}:{d.line})" if d else "") + ".",
                    data=dict(base, rule="num_nodes"))
            if devices is None:
                continue
            if tpn is not None and tpn != devices:
                d = script.get("ntasks-per-node")
                yield Finding(
                    f"{dev_key}={devices} in {cfg.rel}, but {script.rel}:{d.line} "
                    f"--ntasks-per-node={tpn}: Lightning needs one task per device",
                    location=loc, commands=(f"#SBATCH --ntasks-per-node={devices}",),
                    fix=f"Set `#SBATCH --ntasks-per-node={devices}` or {dev_key}: {tpn}.",
                    data=dict(base, rule="ntasks_per_node"))
            if gpn is None:
                yield Finding(
                    f"{dev_key}={devices} in {cfg.rel}, but {script.rel} requests no "
                    "GPUs (--gpus-per-node, --gres=gpu:N or --gpus)",
                    location=loc, commands=(f"#SBATCH --gpus-per-node={devices}",),
                    fix=f"Request the GPUs: `#SBATCH --gpus-per-node={devices}`.",
                    data=dict(base, rule="gpus"))
            elif gpn[0] < devices:
                yield Finding(
                    f"{dev_key}={devices} per node × {cfg_nodes or nodes} node(s) in {cfg.rel}, "
                    f"but {script.rel}:{gpn[1].line} gives {gpn[0]} GPU(s) per node",
                    location=loc, commands=(f"#SBATCH --gpus-per-node={devices}",),
                    fix=f"Request `#SBATCH --gpus-per-node={devices}` or set "
                        f"{dev_key}: {gpn[0]}.", data=dict(base, rule="gpus"))
            elif gpn[0] > devices:
                yield Finding(
                    f"{script.rel}:{gpn[1].line} requests {gpn[0]} GPU(s) per node but "
                    f"{cfg.rel}:{line} uses {dev_key}={devices}: {gpn[0] - devices} GPU(s) "
                    "per node stay idle", location=loc,
                    commands=(f"#SBATCH --gpus-per-node={devices}",),
                    fix=f"Request only `--gpus-per-node={devices}`, or set {dev_key}: {gpn[0]}.",
                    data=dict(base, rule="gpus"), severity=Severity.WARNING)
        cpt = script.cpus_per_task
        for _keypath, m in workers_specs(cfg):
            compared = True
            workers = m["num_workers"]
            if cpt is not None and workers + 1 > cpt:
                d = script.get("cpus-per-task")
                yield Finding(
                    f"num_workers={workers} in {cfg.rel} needs "
                    f"{workers + 1} CPUs per rank, but {script.rel}:{d.line} gives "
                    f"--cpus-per-task={cpt}",
                    location=Location(cfg.rel, m.line_of("num_workers")),
                    commands=(f"#SBATCH --cpus-per-task={workers + 1}",),
                    fix=f"Raise `--cpus-per-task` to {workers + 1} or lower num_workers to "
                        f"{max(cpt - 1, 0)}.",
                    data={"config": cfg.rel, "script": script.rel, "num_workers": workers,
                          "cpus_per_task": cpt, "rule": "cpus_per_task"},
                    severity=Severity.WARNING)
    if not compared:
        raise Skip("the configs set no devices, num_nodes or num_workers")
