"""How the launchers of a job step read their options: srun, mpirun, singularity /
apptainer, torchrun (`python -m torch.distributed.run`), accelerate and deepspeed,
`env` and wrappers such as `time` or `numactl`. Each reader consumes the launcher's
option words, records the counts it sets (nodes, tasks, processes per task, CPUs, GPUs
as `Count`s with where they came from) and applies its environment channel
(`--export`, `-x`, `--env`, `--env-file`, `--cleanenv`, the *ENV_ prefixes) to the
EnvState of the command. doctor/job/steps.py walks the scripts and calls them."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Optional

from doctor import fs
from doctor.job.env import EnvState
from doctor.job.sbatch import SbatchScript
from doctor.job.shell import PREFIXES, expand, split_commands


ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


PYTHON = re.compile(r"^python[0-9.]*$")


SRUN_VALUE = PREFIXES["srun"].values   # srun options that take a value


CLEANENV_KEEP = ("HOME", "LANG", "TERM", "USER")   # what --cleanenv keeps (plus *ENV_*)


@dataclass(frozen=True)
class Count:
    """A number the job asks for, and where it came from ("default" when unwritten)."""
    value: Optional[int]
    source: str

    def __bool__(self) -> bool:
        return self.value is not None


def word_of(raw: str, state: EnvState) -> str:
    res = expand(raw, state.lookup, in_job=state.in_job)
    return res.text


def read_env_command(words: list, state: EnvState, script: SbatchScript, line: int) -> int:
    """`env [-i] [-u NAME] [VAR=v]... cmd`: the words consumed before cmd."""
    n = 0
    while n < len(words):
        w = word_of(words[n], state)
        if w in ("-i", "--ignore-environment", "-"):
            state.values.clear()
        elif w in ("-u", "--unset") and n + 1 < len(words):
            state.values.pop(word_of(words[n + 1], state), None)
            n += 1
        elif ASSIGN.match(words[n]):
            m = ASSIGN.match(words[n])
            assert m is not None
            state.assign(m.group(1), m.group(2), script, line, "inline", exported=True)
        else:
            break
        n += 1
    return n


def read_srun(words: list, state: EnvState, script: SbatchScript, line: int, counts: dict) -> int:
    """Read srun's options into counts and the step's environment; words consumed."""
    i = 0
    exported = False
    counts["srun"] = Count(1, f"{script.rel}:{line}")
    where = f"{script.rel}:{line}"
    while i < len(words):
        w = word_of(words[i], state)
        if not w.startswith("-") or w == "--":
            i += w == "--"
            break
        key, eq, value = w.partition("=")
        if not eq:   # which options take a value: doctor.job.shell.PREFIXES
            if not key.startswith("--") and len(key) > 2:
                key, value = key[:2], key[2:]
            elif key in SRUN_VALUE and i + 1 < len(words):
                value = word_of(words[i + 1], state)
                i += 1
        i += 1
        long = {"-N": "--nodes", "-n": "--ntasks", "-c": "--cpus-per-task",
                "-G": "--gpus"}.get(key, key)
        num = re.match(r"\d+", value or "")
        if long == "--nodes" and num:
            counts["nodes"] = Count(int(num.group()), f"{where} (srun --nodes)")
        elif long == "--ntasks" and num:
            counts["ntasks"] = Count(int(num.group()), f"{where} (srun --ntasks)")
            counts.pop("tasks_per_node", None)
        elif long == "--ntasks-per-node" and num:
            counts["tasks_per_node"] = Count(int(num.group()), f"{where} (srun --ntasks-per-node)")
        elif long == "--cpus-per-task" and num:
            counts["cpus_per_task"] = Count(int(num.group()), f"{where} (srun --cpus-per-task)")
        elif long in ("--gpus-per-node", "--gres") and value:
            n = gpu_count(value)
            if n is not None:
                counts["gpus_per_node"] = Count(n, f"{where} (srun {long})")
        elif long == "--export" and value is not None:
            srun_export(value, state, script, line)
            exported = True
        elif long == "--container-env" and value:
            pass  # pyxis: the named variables keep the host's value inside (already there)
    default = state.get("SLURM_EXPORT_ENV")
    if not exported and default:
        srun_export(default, state, script, line)   # srun's input variable for --export
    return i


def gpu_count(value: str) -> Optional[int]:
    for item in value.split(","):
        parts = item.split(":")
        if parts[0] in ("gpu", "") or parts[0].isdigit() or len(parts) == 1:
            nums = re.findall(r"\d+", item)
            return int(nums[-1]) if nums else 1
    return None


def srun_export(value: str, state: EnvState, script: SbatchScript, line: int,
                 channel: str = "srun-export") -> None:
    """srun --export=ALL|NONE|[ALL,]A,B=c: NONE and a bare list keep only SLURM_* and the
    listed variables (man srun)."""
    items = [x for x in value.split(",") if x]
    if not items:
        return
    keep_all = items[0].upper() == "ALL"
    if not keep_all:
        names = {x.split("=", 1)[0] for x in items if x.upper() != "NONE"}
        for k in list(state.values):
            if not (k.startswith("SLURM_") or k in names):
                del state.values[k]
    for item in items:
        m = ASSIGN.match(item)
        if m:
            state.assign(m.group(1), m.group(2), script, line, channel, exported=True)


def read_mpirun(words: list, state: EnvState, script: SbatchScript, line: int, counts: dict) -> int:
    i = 0
    while i < len(words):
        w = word_of(words[i], state)
        if not w.startswith("-"):
            break
        value = word_of(words[i + 1], state) if i + 1 < len(words) else ""
        if w in ("-np", "-n", "--np", "-c") and value.isdigit():
            counts["ntasks"] = Count(int(value), f"{script.rel}:{line} (mpirun {w})")
            i += 2
            continue
        if w in ("-npernode", "--npernode", "-ppn", "--ppn") and value.isdigit():
            counts["tasks_per_node"] = Count(int(value), f"{script.rel}:{line} (mpirun {w})")
            i += 2
            continue
        if w == "-x":
            m = ASSIGN.match(value)
            if m:
                state.assign(m.group(1), m.group(2), script, line, "srun-export", exported=True)
            i += 2
            continue
        if w in ("--map-by", "-hostfile", "--hostfile", "-H", "--host", "--bind-to", "-genv",
                 "-env", "--mca", "-mca", "-wdir", "--wdir"):
            if w in ("-genv", "-env") and i + 2 < len(words):
                state.assign(value, words[i + 2], script, line, "srun-export", exported=True)
                i += 3
                continue
            i += 3 if w in ("--mca", "-mca") else 2
            continue
        i += 1
    return i


CONTAINER_VALUE = {"--bind", "-B", "--env", "--env-file", "--home", "-H", "--pwd", "-W",
                   "--workdir", "--overlay", "-o", "--mount", "--security", "--app",
                   "--network", "--dns", "--hostname", "--scratch", "-S", "--fusemount",
                   "--apply-cgroups", "--nvccli", "--drop-caps", "--add-caps"}


ENV_PREFIXES = ("SINGULARITYENV_", "APPTAINERENV_")


def read_container(words: list, state: EnvState, script: SbatchScript, line: int,
               find: Callable[[str], Optional[Path]], rel: Callable[[Path], str]) -> tuple:
    """singularity/apptainer exec|run [options] IMAGE: (words consumed, the env inside).

    Apptainer's order (docs, "Environment and Metadata"): the host environment unless
    --cleanenv, then APPTAINERENV_/SINGULARITYENV_ prefixed variables, then --env-file,
    then --env, each overriding the one before."""
    env_items: list = []
    env_files: list = []
    cleanenv = False
    i = 0
    while i < len(words):
        w = word_of(words[i], state)
        if not w.startswith("-"):
            break
        key, eq, value = w.partition("=")
        if key in ("--cleanenv", "-e", "--containall", "-C"):
            cleanenv = True
        if key in CONTAINER_VALUE and not eq and i + 1 < len(words):
            value = word_of(words[i + 1], state)
            i += 1
        if key == "--env":
            env_items += [x for x in re.split(r",(?=[A-Za-z_][A-Za-z0-9_]*=)", value) if x]
        elif key == "--env-file":
            env_files.append(value)
        i += 1
    image = i  # the image word
    inside = EnvState({} if cleanenv else dict(state.values), state.in_job, state.secrets,
                      state.notes, state.in_step)
    inside.shell = state.shell
    inside.opaque = list(state.opaque)
    if cleanenv:
        for k in CLEANENV_KEEP:
            if k in state.values:
                inside.values[k] = state.values[k]
    for p in ENV_PREFIXES:   # APPTAINERENV_X wins over SINGULARITYENV_X (Apptainer)
        for k, v in state.values.items():
            if k.startswith(p) and v.exported:
                inside.put(replace(v, name=k[len(p):], channel="container-prefix"))
    for f in env_files:
        _env_file(f, inside, script, line, find, rel)
    for item in env_items:
        m = ASSIGN.match(item)
        if m:
            inside.assign(m.group(1), m.group(2), script, line, "container-env", exported=True)
    return image + 1, inside


def _env_file(name: str, inside: EnvState, script: SbatchScript, line: int,
              find: Callable[[str], Optional[Path]], rel: Callable[[Path], str]) -> None:
    path = find(name)
    if path is None:
        inside.notes.append(f"{script.rel}:{line}: --env-file {name} not found in the repo; "
                            "its variables are not known")
        inside.opaque.append(f"--env-file {name} ({script.rel}:{line}), which the doctor "
                             "cannot read")
        return
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return
    fs.note_read(path)  # an input: no report goes over it
    where = rel(path)
    for fline, words in split_commands(text):
        for w in words:
            m = ASSIGN.match(w[7:] if w.startswith("export ") else w)
            if m:
                inside.assign(m.group(1), m.group(2), None, fline, "container-env-file",
                              exported=True, rel=where)


TORCHRUN_VALUE = {"--nproc_per_node", "--nproc-per-node", "--nnodes", "--node_rank",
                  "--node-rank", "--master_addr", "--master-addr", "--master_port",
                  "--master-port", "--rdzv_backend", "--rdzv-backend", "--rdzv_endpoint",
                  "--rdzv-endpoint", "--rdzv_id", "--rdzv-id", "--rdzv_conf", "--rdzv-conf",
                  "--max_restarts", "--max-restarts", "--monitor_interval",
                  "--monitor-interval", "--start_method", "--start-method", "--role",
                  "--log_dir", "--log-dir", "-r", "--redirects", "-t", "--tee",
                  "--local_addr", "--local-addr", "--logs_specs", "--logs-specs",
                  "--num_processes", "--num_machines", "--machine_rank", "--main_process_ip",
                  "--main_process_port", "--mixed_precision", "--config_file", "--num_gpus",
                  "--num_nodes", "--hostfile", "--include", "--exclude",
                  "--gpu_ids", "--dynamo_backend", "--deepspeed_config_file", "--launcher"}


PYTHON_VALUE = ("-X", "-W", "-Q")   # python's own options that take the next word


def _python_options(words: list, state: EnvState) -> int:
    """The index of the first word after python's own options (`python -u -B -m x`)."""
    i = 1
    while i < len(words):
        w = word_of(words[i], state)
        if w in ("-m", "-c", "-", "--") or not w.startswith("-"):
            break
        i += 2 if w in PYTHON_VALUE else 1
    return i


def _module_at(words: list, state: EnvState) -> Optional[str]:
    """The module of `python [options] -m MODULE`, else None."""
    i = _python_options(words, state)
    if i + 1 < len(words) and word_of(words[i], state) == "-m":
        return word_of(words[i + 1], state)
    return None


def read_launcher(words: list, state: EnvState) -> Optional[tuple]:
    """(kind, words consumed, counts) for torchrun / torch.distributed.run / accelerate /
    deepspeed; the program comes after."""
    first = os.path.basename(word_of(words[0], state))
    i = 1
    kind = None
    if first == "torchrun":
        kind = "torchrun"
    elif PYTHON.match(first) and _module_at(words, state) in ("torch.distributed.run",
                                                               "torch.distributed.launch"):
        kind, i = "torchrun", _python_options(words, state) + 2   # `python -u -m torch...`
    elif first == "accelerate" and len(words) > 1 and word_of(words[1], state) == "launch":
        kind, i = "accelerate", 2
    elif first == "deepspeed":
        kind = "deepspeed"
    if kind is None:
        return None
    found: dict = {}
    where = " ".join(word_of(w, state) for w in words[:i])
    nodes_opt = None
    while i < len(words):
        w = word_of(words[i], state)
        if not w.startswith("-"):
            break
        if w in ("-m", "--module", "--no_python", "--no-python"):
            break  # the program's own form: `-m pkg.train` is read by _step
        key, eq, value = w.partition("=")
        if not eq and key in TORCHRUN_VALUE and i + 1 < len(words):
            value = word_of(words[i + 1], state)
            i += 1
        i += 1
        if key in ("--nproc_per_node", "--nproc-per-node", "--num_gpus"):
            found["procs_per_task"] = Count(int(value) if value.isdigit() else None,
                                            f"{where} {key}={value}")
        elif key in ("--num_processes",):
            found["_total"] = int(value) if value.isdigit() else None
        elif key in ("--num_machines", "--nnodes", "--num_nodes"):
            nodes_opt = value
        if key == "--":
            break
    if "_total" in found:
        total = found.pop("_total")
        machines = int(nodes_opt) if nodes_opt and nodes_opt.isdigit() else 1
        found["procs_per_task"] = Count(total // machines if total else None,
                                        f"{where} --num_processes ÷ --num_machines")
    if kind == "deepspeed" and "procs_per_task" not in found:
        found["procs_per_task"] = Count(None, f"{where} (all GPUs of the node)")
    if kind == "torchrun" and "procs_per_task" not in found:
        found["procs_per_task"] = Count(1, f"{where} (default --nproc-per-node=1)")
    return kind, i, found
