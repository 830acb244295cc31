"""The job script's Slurm resources against the training config's devices and workers."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from typing import Any, Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, edits
from doctor.model import FixOption, FixStep, add, change
from doctor.job.cluster import partition_gpus
from doctor.job.context import Job
from doctor.job.loaders import loader_specs
from doctor.job.shell import unquote
from doctor.job.sources import trees_mentioning
from doctor.job.stepconfigs import step_configs

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
    """(keypath, mapping) of the config's DataLoader specs with a plain num_workers."""
    return [(s.path, s.mapping) for s in loader_specs([cfg])
            if isinstance(s.mapping.get("num_workers"), int)
            and not isinstance(s.mapping["num_workers"], bool)]


@dataclass(frozen=True)
class Pair:
    """A job script's training step and a config it is compared with. `certain`: the
    step reads that config (named on its command line, composed by Hydra); otherwise it
    is the only candidate, and what it says is at most a warning."""
    script: Any
    step: Any
    config: Any
    certain: bool
    lightning: bool = True   # the repo's code imports Lightning


def pairs(job: Job) -> list:
    """Each script's training step with the configs it reads (doctor/job/stepconfigs.py),
    else the configs it names in its text, else — a single script — every config that is
    not an unselected Hydra group option."""
    defaults: Optional[dict] = None
    out = []
    for s in job.scripts:
        step = job.step(s)
        read = step_configs(job, s).configs
        if read:
            out += [Pair(s, step, c, True) for c in read]
            continue
        overrides = _hydra_overrides(s)
        if defaults is None:   # every config's defaults list, in a scoped run too
            defaults = _hydra_defaults(job.whole_config_files)
        chosen = dict(defaults, **overrides)
        selected = [c for c in job.configs if _selected(c, chosen)]
        named = [c for c in job.configs if c.rel in s.text or c.path.name in s.text]
        if any(_group_of(c) in overrides for c in job.configs):
            out += [Pair(s, step, c, False) for c in selected]
        elif named:
            out += [Pair(s, step, c, True) for c in named]
        elif job.job_script_count == 1:   # the repo's only one, not the scope's
            out += [Pair(s, step, c, False) for c in selected]
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
        for raw in cmd.words[1:]:
            if "=" not in raw:  # most words: no need to unquote them (a 1M-line script)
                continue
            m = _OVERRIDE.match(unquote(raw))
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
def slurm_gpu_mismatch(job: Job) -> Iterator[Finding]:
    """The job script asks Slurm for other GPUs, nodes, tasks or CPUs than the config uses.

    Compares each job script's training step (its nodes, tasks per node,
    torchrun/accelerate processes, CPUs and GPUs, from `#SBATCH` and the srun and
    launcher options) with the configs it reads, command-line overrides applied
    (`trainer.devices=8`, `--trainer.devices 4`), following Lightning's own SLURM
    validation: `num_nodes` must equal `--nodes`; `devices` must equal
    `--ntasks-per-node` when that is set (`--nproc_per_node` under torchrun), where the
    code imports Lightning or the mapping is a Lightning Trainer's (`trainer:`, or
    `accelerator`/`strategy` beside the devices);
    `devices × num_nodes` must not exceed the GPUs requested (`--gpus-per-node`,
    `--gres=gpu:N`, `--gpus`); a DataLoader's `num_workers` should fit in the
    CPUs of one rank (`--cpus-per-task` ÷ processes per task). A launcher that
    starts several ranks per node with no GPU requested, or more ranks than GPUs,
    is a warning. No GPU advice for CPU work: ranks counted from the CPUs
    (`--nproc_per_node=$SLURM_CPUS_PER_TASK`, `$(nproc)`), a partition whose nodes have no
    GPUs (site profile, or live Slurm of the job's cluster), or `accelerator: cpu`; and a
    `--gpus-per-node=N` is proposed only from a rank count written as a number or a GPU
    variable, that the partition's nodes can give. When the script names no config and
    the one config is compared as the only candidate, findings are warnings (the link is
    not shown).

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
    `doctor fix --unsafe` changes the `#SBATCH` line to what the config says; it is
    unsafe because the config may be the side that is wrong.
    """
    lightning = uses_lightning(job)
    todo = [replace(p, lightning=lightning) for p in pairs(job)]
    found = [v for s in job.scripts for v in launcher_rules(job, job.step(s))]
    for pair in todo:
        found += config_rules(pair, partition_gpus(job, pair.script))
    if not todo and not found:
        raise Skip("no job script with a training config to compare (pass --sbatch and "
                   "--config), and no launcher that starts several ranks per node")
    if not found and not any(trainer_specs(p.config) or workers_specs(p.config)
                             for p in todo):
        raise Skip("the configs set no devices, num_nodes or num_workers")
    for v in found:
        yield Finding(v.message, location=v.location, fix=v.fix, commands=v.commands,
                      data=v.data, severity=v.severity, edits=_directive_edit(job, v),
                      options=tuple(FixOption((o,)) for o in v.options))


# rule -> the step's count that the #SBATCH side of the fix changes
_SIDE = {"num_nodes": "nodes", "ntasks_per_node": "tasks_per_node", "gpus": "gpus_per_node",
         "cpus_per_task": "cpus_per_task"}
_SHORT = {"nodes": "N", "cpus-per-task": "c"}


def _directive_edit(job: Job, v: "Mismatch") -> tuple:
    """The #SBATCH line that gives the step's count, set to what the config says: an
    unsafe edit (the config may be the side that is wrong, and the job's allocation
    changes). Only where that one #SBATCH line, in a plain `--key=N` (or `-N N`,
    `--gres=gpu[:type]:N`), is where the count comes from."""
    attr = _SIDE.get(v.data.get("rule", ""))
    m = next((re.fullmatch(r"#SBATCH --[\w-]+=(\d+)", c) for c in v.commands), None)
    new = v.data.get("num_nodes") if attr == "nodes" else int(m.group(1)) if m else None
    script = next((s for s in job.scripts if s.rel == v.data.get("script")), None)
    if attr is None or not isinstance(new, int) or script is None or \
            not edits.owned(job, script.rel):
        return ()
    count = getattr(job.step(script), attr)
    d = next((d for d in script.directives if not d.origin and d.line
              and script.where(d) == count.source), None)
    if d is None or count.value is None:
        return ()
    if d.key == "gres":
        g = re.fullmatch(r"(gpu(?::[^:,=\s]+)?:){}".format(count.value), d.value)
        value, written = (g.group(1) + str(new), g.group(0)) if g else (None, "")
    else:
        value, written = (str(new), d.value) if d.value == str(count.value) else (None, "")
    lines = edits.read_lines(job, script.rel) or []
    if value is None or d.line > len(lines):
        return ()
    body = lines[d.line - 1].rstrip("\r\n")
    opt = r"(--{}[= ]\s*".format(re.escape(d.key)) + \
        (r"|-{} ?".format(_SHORT[d.key]) if d.key in _SHORT else "") + ")"
    hits = list(re.finditer(opt + re.escape(written) + r"(?=\s|#|$)", body))
    if len(hits) != 1:
        return ()
    h = hits[0]
    edit = edits.replace_line(job, script.rel, d.line, body[:h.end(1)] + value + body[h.end():],
                              f"#SBATCH --{d.key}={value}", unsafe=True)
    return (edit,) if edit else ()


@dataclass(frozen=True)
class Mismatch:
    rule: str
    message: str
    location: Location
    fix: str
    data: dict
    commands: tuple = ()
    severity: Optional[Severity] = None
    options: tuple = ()   # FixStep: each one way to fix it (the #SBATCH line, the config's)


def _sbatch(script: Any, count: Any, text: str) -> FixStep:
    """The #SBATCH line `text` for the job script: in place of the one `count` comes
    from, else added among the #SBATCH lines."""
    d = next((d for d in script.directives if not d.origin and d.line
              and script.where(d) == count.source), None)
    return change(script.rel, d.line, text) if d else \
        add(script.rel, text, where="among the #SBATCH lines")


def _config(cfg: Any, loc: Location, key: Optional[str], value: Any) -> tuple:
    """The config's line `key: value`, where the key is written in the config itself
    (a value from the command line is changed there, in words)."""
    return (change(cfg.rel, loc.line, f"{key}: {value}"),) \
        if key and loc.path == cfg.rel else ()


def launcher_rules(job: Job, step: Any) -> list:
    """torchrun/accelerate start several ranks per node: each needs a GPU, when they are
    GPU ranks. Ranks counted from the CPUs (`--nproc_per_node=$SLURM_CPUS_PER_TASK`) or
    on a partition without GPUs are CPU workers (a preprocessing job): no GPU advice."""
    procs, gpus, ranks = step.procs_per_task, step.gpus_per_node, step.ranks_per_node
    if not step.is_training or procs.source == "default" or not procs.value \
            or procs.value < 2 or "default --nproc" in procs.source:
        return []
    loc = Location(step.script.rel, step.line)
    data = {"script": step.script.rel, "ranks_per_node": ranks.value,
            "gpus_per_node": gpus.value, "rule": "launcher_gpus"}
    if gpus.value is None:
        node_gpus = partition_gpus(job, step.batch or step.script)
        counted = count_origin(step)
        if node_gpus == 0 or counted == "cpu":
            return []
        # the proposal is one GPU per rank: only from a count that is one (written as a
        # number, or from a GPU variable) and that a node can give
        sure = counted in ("literal", "gpu") and ranks.value is not None and \
            (node_gpus is None or ranks.value <= node_gpus)
        return [Mismatch(
            "launcher_gpus", f"{step.where} starts {ranks.value} ranks per node ({procs.source}) "
            "but the job requests no GPU (--gpus-per-node, --gres=gpu:N or --gpus); whether "
            "the node's GPUs are visible anyway is the site's policy", loc,
            f"Request them: `#SBATCH --gpus-per-node={ranks.value}`." if sure else
            "If the ranks use GPUs, request one per rank (`#SBATCH --gpus-per-node=N`).", data,
            (f"#SBATCH --gpus-per-node={ranks.value}",) if sure else (), Severity.WARNING,
            (_sbatch(step.script, gpus, f"#SBATCH --gpus-per-node={ranks.value}"),)
            if sure else ())]
    if ranks.value and gpus.value < ranks.value:
        return [Mismatch(
            "launcher_gpus", f"{step.where} starts {ranks.value} ranks per node "
            f"({ranks.source}) on {gpus.value} GPU(s) per node ({gpus.source}): ranks would "
            "share a GPU (NCCL refuses: 'Duplicate GPU detected')", loc,
            f"Start one rank per GPU (--nproc_per_node={gpus.value}) or request "
            f"{ranks.value} GPUs per node.", data, (), Severity.WARNING)]
    return []


def uses_lightning(job: Job) -> bool:
    """The repo's code imports Lightning (lightning, pytorch_lightning, lightning.pytorch)."""
    for _path, tree in trees_mentioning(job, b"lightning"):
        for node in ast.walk(tree):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            if any(m.split(".")[0] in ("lightning", "pytorch_lightning") for m in mods):
                return True
    return False


_COUNT_OPTIONS = ("--nproc_per_node", "--nproc-per-node", "--num_gpus", "--num_processes",
                  "--num-processes")
_VAR = re.compile(r"\$\{?([A-Za-z_]\w*)|\$\(\s*(\w+)")


def count_origin(step: Any) -> str:
    """Where the launcher's rank count comes from, as written: "literal" (a number),
    "gpu" or "cpu" (a variable or command naming GPUs or CPUs: SLURM_GPUS_ON_NODE,
    $SLURM_CPUS_PER_TASK, $(nproc), followed through the script's assignments), else
    "unknown"."""
    launcher = next((x for x in step.chain if x.kind in ("torchrun", "accelerate", "deepspeed")),
                    None)
    if launcher is None:
        return "unknown"
    scripts = [s for s in step.scripts if s.rel == launcher.path]
    cmd = next((c for s in scripts for c in s.commands if c.line == launcher.line), None)
    raw = None
    words = [unquote(w) for w in cmd.words] if cmd else []
    for i, w in enumerate(words):
        key, eq, value = w.partition("=")
        if key in _COUNT_OPTIONS:
            raw = value if eq else (words[i + 1] if i + 1 < len(words) else None)
    if raw is None:
        return "unknown"
    text = "\n".join(s.text for s in step.scripts)
    seen: set = set()
    todo = [raw]
    while todo and len(seen) < 8:
        word = todo.pop()
        if word.strip().strip("'\"").isdigit():
            return "literal"
        if re.search(r"gpu", word, re.I):
            return "gpu"
        if re.search(r"cpu", word, re.I) or re.search(r"(\$\(|`)\s*nproc\b", word):
            return "cpu"
        for m in _VAR.finditer(word):
            name = m.group(1) or m.group(2)
            if name in seen:
                continue
            seen.add(name)
            todo += re.findall(r"^\s*(?:export\s+)?" + re.escape(name) + r"=(.*)$", text,
                               re.M)
    return "unknown"


def config_rules(pair: Pair, node_gpus: Optional[int] = None) -> list:
    """Lightning's own SLURM validation, and workers against CPUs, for one step/config.
    `node_gpus`: the GPUs of the job's partition's nodes, where known (0: a CPU one)."""
    step, cfg = pair.step, pair.config
    out = []
    for keypath, m, dev_key, devices, cfg_nodes in trainer_specs(cfg):
        out += _trainer(pair, m, dev_key, devices, cfg_nodes, node_gpus,
                        pair.lightning or lightning_mapping(keypath, m))
    cpr = step.cpus_per_rank
    for _keypath, m in workers_specs(cfg):
        workers = m["num_workers"]
        if cpr.value is not None and workers + 1 > cpr.value:
            need = workers + 1
            per_task = need * (step.procs_per_task.value or 1)
            out.append(Mismatch(
                "cpus_per_task", f"num_workers={workers} in {cfg.rel} needs {need} CPUs per "
                f"rank, but the job gives {cpr.value} ({cpr.source})",
                cfg.location(m, "num_workers"),
                f"Raise `--cpus-per-task` to {per_task} or lower num_workers to "
                f"{max(cpr.value - 1, 0)}.",
                {"config": cfg.rel, "script": pair.script.rel, "num_workers": workers,
                 "cpus_per_task": step.cpus_per_task.value, "cpus_per_rank": cpr.value,
                 "rule": "cpus_per_task"},
                (f"#SBATCH --cpus-per-task={per_task}",), Severity.WARNING,
                (_sbatch(pair.script, step.cpus_per_task, f"#SBATCH --cpus-per-task={per_task}"),
                 *_config(cfg, cfg.location(m, "num_workers"), "num_workers",
                          max(cpr.value - 1, 0)))))
    if not pair.certain:   # precision rule: the link script → config is not shown
        why = (f"; {pair.script.rel} names no config, so {cfg.rel} is compared as the only "
               "candidate")
        out = [Mismatch(v.rule, v.message + why, v.location, v.fix,
                        dict(v.data, unseen="the script does not name the config"),
                        v.commands, Severity.WARNING, v.options) for v in out]
    return out


def lightning_mapping(keypath: Any, m: Any) -> bool:
    """A Lightning Trainer's settings: a `trainer` mapping, or one with Lightning's
    `accelerator`/`strategy` beside its devices."""
    last = str(keypath[-1] if isinstance(keypath, (tuple, list)) and keypath
               else keypath).rsplit(".", 1)[-1]
    return last.lower() == "trainer" or any(k in m for k in ("accelerator", "strategy"))


def _trainer(pair: Pair, m: Any, dev_key: Optional[str], devices: Optional[int],
             cfg_nodes: Optional[int], node_gpus: Optional[int] = None,
             lightning: bool = True) -> list:
    step, cfg, script = pair.step, pair.config, pair.script
    nodes = step.nodes.value or 1
    torchrun = step.launcher("torchrun") or step.launcher("accelerate")
    per_node = step.procs_per_task if torchrun else step.tasks_per_node
    gpn = step.gpus_per_node
    key = dev_key or "num_nodes"
    loc = cfg.location(m, key)
    base = {"config": cfg.rel, "script": script.rel, "devices": devices,
            "num_nodes": cfg_nodes, "nodes": nodes,
            "ntasks_per_node": step.tasks_per_node.value
            if step.tasks_per_node.source != "default" else None,
            "gpus_per_node": gpn.value}
    out = []
    if cfg_nodes is not None and cfg_nodes != nodes:
        out.append(Mismatch(
            "num_nodes", f"num_nodes={cfg_nodes} in {cfg.rel}, but {script.rel} asks for "
            f"--nodes={nodes} ({step.nodes.source})", cfg.location(m, "num_nodes"),
            f"Set num_nodes: {nodes} in the config, or `#SBATCH --nodes={cfg_nodes}`.",
            dict(base, rule="num_nodes"), (), None,
            (*_config(cfg, cfg.location(m, "num_nodes"), "num_nodes", nodes),
             _sbatch(script, step.nodes, f"#SBATCH --nodes={cfg_nodes}"))))
    if devices is None:
        return out
    # Lightning's rule (one process per device): only for code that runs Lightning; a
    # `gpus: [0,1,2,3]` of a DataParallel script is one process on four GPUs
    if per_node.source not in ("default", "srun's default: one task per node") and \
            per_node.value is not None and per_node.value != devices and lightning:
        what = "--nproc_per_node" if torchrun else "--ntasks-per-node"
        out.append(Mismatch(
            "ntasks_per_node", f"{dev_key}={devices} in {cfg.rel}, but {what}="
            f"{per_node.value} ({per_node.source}): Lightning needs one process per device",
            loc, f"Set `{what}={devices}` or {dev_key}: {per_node.value}.",
            dict(base, rule="ntasks_per_node", ntasks_per_node=per_node.value),
            (f"#SBATCH --ntasks-per-node={devices}",) if not torchrun else (), None,
            ((_sbatch(script, per_node, f"#SBATCH --ntasks-per-node={devices}"),)
             if not torchrun else ()) + _config(cfg, loc, dev_key, per_node.value)))
    # devices are CPU processes with accelerator: cpu, or on a partition without GPUs:
    # no GPU count to compare (nor to propose)
    if str(m.get("accelerator") or "").lower() == "cpu" or (node_gpus == 0 and gpn.value is None):
        return out
    if gpn.value is None:
        out.append(Mismatch(
            "gpus", f"{dev_key}={devices} in {cfg.rel}, but {script.rel} requests no GPUs "
            "(--gpus-per-node, --gres=gpu:N or --gpus)", loc,
            f"Request the GPUs: `#SBATCH --gpus-per-node={devices}`.", dict(base, rule="gpus"),
            (f"#SBATCH --gpus-per-node={devices}",), None,
            (_sbatch(script, gpn, f"#SBATCH --gpus-per-node={devices}"),)))
    elif gpn.value < devices:
        out.append(Mismatch(
            "gpus", f"{dev_key}={devices} per node × {cfg_nodes or nodes} node(s) in "
            f"{cfg.rel}, but the job gives {gpn.value} GPU(s) per node ({gpn.source})", loc,
            f"Request `#SBATCH --gpus-per-node={devices}` or set {dev_key}: {gpn.value}.",
            dict(base, rule="gpus"), (f"#SBATCH --gpus-per-node={devices}",), None,
            (_sbatch(script, gpn, f"#SBATCH --gpus-per-node={devices}"),
             *(_config(cfg, loc, dev_key, gpn.value) if gpn.value > 0 else ()))))
    elif gpn.value > devices:
        out.append(Mismatch(
            "gpus", f"the job requests {gpn.value} GPU(s) per node ({gpn.source}) but "
            f"{cfg.rel}:{loc.line} uses {dev_key}={devices}: {gpn.value - devices} GPU(s) per "
            "node stay idle", loc,
            f"Request only `--gpus-per-node={devices}`, or set {dev_key}: {gpn.value}.",
            dict(base, rule="gpus"), (f"#SBATCH --gpus-per-node={devices}",),
            Severity.WARNING, (_sbatch(script, gpn, f"#SBATCH --gpus-per-node={devices}"),
                               *_config(cfg, loc, dev_key, gpn.value))))
    return out
