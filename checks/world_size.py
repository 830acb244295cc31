"""The job's world size against the nodes its launcher waits for and the parallelism it
configures (Megatron's TP × PP × CP, nanotron's dp × tp × pp, accelerate's config)."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, edits
from doctor.errors import InputError
from doctor.job.configs import LineDict, load_yaml_text
from doctor.job.context import Job
from doctor.job.launchers import Count
from doctor.job.stepconfigs import step_configs
from doctor.model import FixOption, change

# torchrun / python -m torch.distributed.run|launch, and accelerate launch: a launcher that
# waits in its rendezvous until the nodes it is told of have joined
NODE_OPTIONS = {"torchrun": ("--nnodes",), "accelerate": ("--num_machines", "--num-machines")}
RANK_OPTIONS = ("--node_rank", "--node-rank", "--machine_rank", "--machine-rank")
# The step's own batch-step mark (doctor/job/steps.py _step): Slurm runs the batch script
# once, on the job's first node
BATCH_STEP = "(the batch step: once, on the first node)"
# Commands that start a program on other hosts themselves: the other nodes may be started
# by them, which the model of the steps does not follow
REMOTE = re.compile(r"^\s*(?:[\w.-]+=\S*\s+)*(ssh|pdsh|clush|pssh|parallel-ssh|mpirun|mpiexec)"
                    r"\b", re.M)
# Megatron-LM's flags (megatron/training/arguments.py) and their defaults
MEGATRON = {"tp": ("--tensor-model-parallel-size",), "pp": ("--pipeline-model-parallel-size",),
            "cp": ("--context-parallel-size",), "ep": ("--expert-model-parallel-size",),
            "etp": ("--expert-tensor-parallel-size",)}
# flags that change Megatron's model size in a way this check does not model
MEGATRON_UNMODELLED = ("--tensor-parallel-num-weight-shards",)
MAX_EDITS = 50   # srun edits per run (each reads its file)
CONFIG_FLAGS = ("--config-file", "--config_file", "--config", "--cfg", "-c", "--yaml")


@dataclass(frozen=True)
class World:
    """The ranks the step starts, with how it was counted; `value` None: unknown (`why`)."""
    value: Optional[int]
    source: str
    why: str = ""


@check("world-size-mismatch", title="The job's world size does not match its launcher's "
       "nodes or its parallelism", severity="error", tags=("slurm", "launcher", "config"),
       needs=("sbatch",), timeout=20)
def world_size_mismatch(job: Job) -> Iterator[Finding]:
    """The launcher waits for more nodes than the job starts it on, or the parallelism
    the job configures does not fit the ranks it starts.

    The ranks a step starts are read from the model of the job's steps that
    slurm-gpu-mismatch uses (under srun: `--ntasks`, else nodes × tasks per node, or
    the `WORLD_SIZE` the job exports as a number; under torchrun / `python -m
    torch.distributed.run` or `.launch`: `--nnodes` × `--nproc_per_node`; accelerate's
    `--num_processes`, CLI or `--config_file`). Then:

    - **Launcher nodes.** A torchrun or accelerate launch with `--nnodes N`
      (`--num_machines N`, or `num_machines:` in its `--config_file`) waits in its
      rendezvous until N nodes have joined. In the batch step (no `srun` before it) Slurm
      runs it once, on the job's first node: with N > 1 the others never join and the
      job hangs until its time limit. Under `srun`, N greater than the nodes srun starts
      it on hangs the same way; N smaller leaves nodes out (a warning). An elastic
      `--nnodes=1:4` whose minimum the job reaches, a script that starts the other
      nodes' launches itself (one launch per node, or ssh/pdsh/mpirun: then a warning),
      a job script that another job script runs under srun (`srun bash inner.sh`), and
      a count the doctor cannot resolve (`$NNODES`) are not errors.
    - **DeepSpeed.** The deepspeed launcher in the batch step of a multi-node job starts
      the ranks on its hostfile's hosts itself (pdsh): with no `--hostfile` (DeepSpeed
      then reads /job/hostfile) it runs on the first node only, or with `--num_nodes N>1`
      stops ('Num nodes is >1 but no extra nodes available via hostfile',
      deepspeed/launcher/runner.py); a hostfile committed in the checkout that gives
      another number of hosts (after `--num_nodes`) than the job's nodes names hosts Slurm
      does not choose. Warnings (the cluster may hold /job/hostfile); a hostfile the job
      script writes (`… > hostfile`) is its own nodes.
    - **accelerate's config.** `num_processes ÷ num_machines` in the `--config_file`
      against the GPUs the job requests per node (more: ranks share a GPU or fail at
      `torch.cuda.set_device`; fewer: GPUs idle), a warning; the same count on the
      command line is slurm-gpu-mismatch's.
    - **Megatron-LM.** `--tensor-model-parallel-size × --pipeline-model-parallel-size ×
      --context-parallel-size` must divide the world size, and so must
      `--expert-tensor-parallel-size × --expert-model-parallel-size ×
      --pipeline-model-parallel-size`: Megatron asserts it at start
      (`world size (12) is not divisible by total_model_size (...)`,
      megatron/training/arguments.py; `world_size (12) is not divisible by ...`,
      megatron/core/parallel_state.py).
    - **nanotron.** A config the step reads with `parallelism: {dp, tp, pp}` (and
      `expert_parallel_size`, `context_parallel_size`) must multiply to the world size
      exactly: nanotron's ParallelContext raises `The number of process requires to run
      all replicas (8) must be equal to the world size (16)`.

    Every link is shown in the message (the `#SBATCH`/srun line of each count, the
    launcher's line, the flag or config key); a value the doctor cannot know (a
    variable it cannot resolve, a count computed in code or by `$(expr …)`, a
    launcher's default config file) makes the rule silent, and a link it cannot show (a
    step inside an `if`/`case` branch, a count that falls back to a default where Slurm
    sets the variable in the job, `${SLURM_NNODES:-1}`) makes the finding a warning that
    names it. Lightning's `num_nodes` and
    `devices` against `--nodes` and `--ntasks-per-node` are slurm-gpu-mismatch's rules.

    ## Why it matters
    A launcher waiting for nodes that never come holds the whole allocation idle until
    the time limit (torchrun's rendezvous times out only after its `join_timeout`,
    600 s by default, per attempt, and a `--max-restarts` run retries). A parallelism that
    does not fit the world size fails every rank at start, after the queue wait.

    ## How to fix
    Start the launcher once per node with srun, and let it take its node count from
    Slurm: `srun --ntasks-per-node=1 torchrun --nnodes=$SLURM_NNODES
    --nproc_per_node=<GPUs per node> --rdzv-backend=c10d
    --rdzv-endpoint=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1):29500 …`.
    For the parallelism, request nodes × GPUs per node that TP × PP × CP divides (or that
    dp × tp × pp equals), or change the sizes. `doctor fix --unsafe` puts
    `srun --ntasks-per-node=1` before a batch-step torchrun whose rendezvous is dynamic
    (`--rdzv-backend=c10d` or etcd, which assigns the node ranks) at an address the other
    nodes reach (not localhost; the batch shell expands `$(hostname)` once, on the first
    node); it is unsafe because the job's other steps and options may assume one
    launcher. A static rendezvous (`--master_addr`, torch.distributed.launch's default)
    needs a `--node_rank=$SLURM_NODEID` per node as well: no edit there.
    """
    if not job.scripts:
        raise Skip("no job script")
    seen_launcher = seen_parallel = False
    for script in job.scripts:
        steps = job.steps(script)
        judged = job.step(script)
        for step in steps:
            ds = step.launcher("deepspeed")
            if ds is not None:
                seen_launcher = True
                yield from _deepspeed_rule(job, script, step, ds)
            launcher = _launcher(step)
            if launcher is None:
                continue
            seen_launcher = True
            yield from _nodes_rule(job, script, step, steps, launcher)
            if launcher.kind == "accelerate":
                yield from _accelerate_gpus(job, script, step, launcher)
        if judged.is_training and _has_parallelism(job, script, judged):
            seen_parallel = True
            yield from _parallel_rules(job, script, judged)
    if not seen_launcher and not seen_parallel:
        raise Skip("no torchrun/accelerate/deepspeed launcher and no parallelism (Megatron flags, "
                   "nanotron parallelism) in the job's steps")


# ---- the launcher's nodes ----------------------------------------------------------
def _launcher(step: Any) -> Any:
    return next((x for x in step.chain if x.kind in NODE_OPTIONS), None)


def _option(argv: tuple, names: tuple) -> Optional[str]:
    """The value of the last of `names` in a launcher's or a program's words (`--x=v` or
    `--x v`; None: not given)."""
    value = None
    for i, w in enumerate(argv):
        key, eq, v = w.partition("=")
        if key in names:
            value = v if eq else (argv[i + 1] if i + 1 < len(argv) else None)
    return value


def _min_nodes(raw: Optional[str]) -> Optional[tuple]:
    """(minimum, maximum) of a `--nnodes` value: `2`, or torchrun's elastic `1:4`."""
    if raw is None:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*(?::\s*(\d+)\s*)?", raw)
    if not m:
        return None
    lo = int(m.group(1))
    return lo, int(m.group(2)) if m.group(2) else lo


def _accelerate_config(job: Job, step: Any, launcher: Any) -> tuple:
    """(path rel, data) of `accelerate launch --config_file X` when the file is in the
    checkout; (None, None) otherwise (accelerate's default config: not known here)."""
    name = _option(launcher.argv, ("--config_file", "--config-file"))
    if not name or "$" in name:
        return None, None
    path = _find(job, step, name)
    if path is None:
        return None, None
    try:
        data = load_yaml_text(path, "accelerate config")
    except (InputError, OSError, ValueError):
        return None, None
    return job.rel(path), data if isinstance(data, dict) else None


def _find(job: Job, step: Any, name: str) -> Optional[Path]:
    """A file the step names, relative to its working directory (else the repo root,
    else the script's directory, as the doctor takes the submit directory)."""
    p = Path(name)
    bases = [Path(step.cwd)] if step.cwd and Path(step.cwd).is_absolute() else []
    bases += [job.repo, step.script.path.parent]
    for base in bases:
        q = p if p.is_absolute() else base / p
        try:
            if q.is_file() and job.rel(q) != str(q):
                return q
        except OSError:
            continue
    return None


def _launcher_nodes(job: Job, step: Any, launcher: Any) -> Optional[tuple]:
    """(raw value, (min, max), where it is written: Location, how it reads) of the nodes
    a launcher waits for; None where it sets none (torchrun's default: 1)."""
    raw = _option(launcher.argv, NODE_OPTIONS[launcher.kind])
    where = Location(launcher.path, launcher.line)
    if raw is not None:
        return raw, _min_nodes(raw), where, f"{NODE_OPTIONS[launcher.kind][0]} {raw}"
    if launcher.kind == "accelerate":
        rel, data = _accelerate_config(job, step, launcher)
        value = data.get("num_machines") if data else None
        if isinstance(value, int) and not isinstance(value, bool):
            line = data.line_of("num_machines") if isinstance(data, LineDict) else None
            return str(value), (value, value), Location(rel, line or None), \
                f"num_machines: {value} in {rel}"
    return None


def _nodes_rule(job: Job, script: Any, step: Any, steps: list, launcher: Any) -> Iterator[Finding]:
    got = _launcher_nodes(job, step, launcher)
    if got is None:
        return
    raw, span, where, how = got
    lwhere = f"{launcher.path}:{launcher.line}"
    name = _name(launcher)
    in_batch = BATCH_STEP in step.nodes.source
    batch = step.batch
    alloc = batch.get("nodes") if batch is not None else None
    alloc_n = batch.number("nodes") if batch is not None else None
    alloc_src = batch.where(alloc) if alloc is not None else None
    data = {"script": script.rel, "launcher": launcher.kind, "launcher_line": lwhere,
            "nnodes": raw}
    if span is None:
        # `--nnodes $NNODES`: the count is not known; in the batch step of a multi-node
        # allocation it is likely more than one (say so, naming the unknown link)
        if in_batch and alloc_n and alloc_n > 1:
            yield Finding(
                f"{name} at {lwhere} runs in the batch step (no srun before it: once, on "
                f"the first node) of a {alloc_n}-node job ({alloc_src}), with {how}, which "
                "the doctor cannot resolve: if it is more than 1, the other nodes never "
                "join and the job hangs until its time limit",
                location=where, fix=_FIX, severity=Severity.WARNING,
                data=dict(data, rule="batch_step", unknown=raw))
        return
    lo, hi = span
    if in_batch:
        if lo <= 1 or script.rel in _run_under_srun(job):
            return
        # the script may start the other nodes' launchers itself: one launch per node
        # (`torchrun --nnodes 2 --node-rank 0 … &` and `--node-rank 1 … &`), or remote
        # commands (ssh, pdsh, mpirun) the model of the steps does not follow
        if _launches(job, script, steps)[(launcher.kind, "batch", raw)] >= lo:
            return
        remote = _remote(job, step)
        alloc_txt = (f"; the job has {alloc_n} node(s) ({alloc_src})" if alloc_n else "")
        msg = (f"{name} at {lwhere} waits for {lo} nodes ({how}) but runs in the batch step "
               f"(no srun before it), which Slurm runs once, on the job's first node"
               f"{alloc_txt}: the other {lo - 1} node(s) never join and the job hangs in the "
               "rendezvous until its time limit")
        if remote:
            yield Finding(msg + f"; unless {remote} starts them", location=where, fix=_FIX,
                          severity=Severity.WARNING,
                          data=dict(data, rule="batch_step", unknown=remote))
            return
        edit = _srun_edit(job, launcher)
        yield Finding(msg, location=where, fix=_FIX, data=dict(data, rule="batch_step",
                                                                 nodes=alloc_n),
                      edits=(edit,) if edit else (),
                      options=(FixOption((change(edit.path, edit.start_line,
                                                 edit.new.rstrip("\r\n")),),
                                         "start it once per node with srun"),) if edit else ())
        return
    srun = step.launcher("srun")
    started = step.nodes
    if srun is None or started.value is None or started.source == "default":
        return
    twins = _launches(job, script, steps)[(launcher.kind, "srun", raw)] > 1
    if lo > started.value:
        if twins or _in_loop_or_background(job, step):
            # per-node launches (`srun -N1 -w $node torchrun … &` in a loop): the model
            # reads a loop once, so the nodes of the other launches are not counted
            yield Finding(
                f"{name} at {lwhere} waits for {lo} nodes ({how}) but srun starts it on "
                f"{started.value} ({started.source}); unless the script's other launches "
                "supply the rest, the job hangs in the rendezvous", location=where, fix=_FIX,
                severity=Severity.WARNING,
                data=dict(data, rule="srun_nodes", nodes=started.value,
                          unknown="other launches of the script"))
            return
        yield Finding(
            f"{name} at {lwhere} waits for {lo} nodes ({how}) but srun starts it on "
            f"{started.value} node(s) ({started.source}): the rendezvous never completes "
            "and the job hangs until its time limit", location=where,
            fix=f"Let the launcher take the node count from Slurm: `--nnodes=$SLURM_NNODES`, "
                f"or request {lo} nodes (`#SBATCH --nodes={lo}`).",
            commands=("--nnodes=$SLURM_NNODES",) if launcher.kind == "torchrun" else (),
            data=dict(data, rule="srun_nodes", nodes=started.value))
    elif hi < started.value and not twins and not _in_loop_or_background(job, step):
        yield Finding(
            f"srun starts {name} on {started.value} nodes ({started.source}) but it forms a "
            f"group of {hi} ({how}, {lwhere}): the launchers of the other "
            f"{started.value - hi} node(s) are left out of the rendezvous (they wait, "
            "idle, or fail)", location=where, severity=Severity.WARNING,
            fix="Let the launcher take the node count from Slurm: `--nnodes=$SLURM_NNODES`.",
            data=dict(data, rule="srun_nodes", nodes=started.value))


_FIX = ("Start the launcher once per node with srun, its node count from Slurm and its "
        "rendezvous on the first node: `srun --ntasks-per-node=1 torchrun "
        "--nnodes=$SLURM_NNODES --nproc_per_node=<GPUs per node> --rdzv-backend=c10d "
        "--rdzv-endpoint=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1):29500 …` "
        "(accelerate: `srun --ntasks-per-node=1 accelerate launch --num_machines=$SLURM_NNODES "
        "--machine_rank=$SLURM_NODEID --main_process_ip=<first node> …`).")


def _run_under_srun(job: Job) -> set:
    """The job scripts that another job script runs under srun/mpirun (`srun bash
    inner.sh`): their own #SBATCH lines do not make their launcher a batch step."""
    def compute() -> set:
        out: set = set()
        for s in job.scripts:
            for st in job.steps(s):
                if st.launcher("srun") or st.launcher("mpirun"):
                    out |= {x.rel for x in st.scripts[1:] if x is not None and x.rel != s.rel}
        return out
    return job.memo("world_size_run_under_srun", compute)


def _name(launcher: Any) -> str:
    """The launcher as written: `torchrun`, `python -m torch.distributed.launch`, ..."""
    words = list(launcher.argv)
    if launcher.kind == "accelerate":
        return "accelerate launch"
    if words and re.match(r"python[0-9.]*$", words[0].rsplit("/", 1)[-1]) and "-m" in words:
        i = words.index("-m")
        return f"python -m {words[i + 1]}" if i + 1 < len(words) else "torchrun"
    return "torchrun"


def _launches(job: Job, script: Any, steps: list) -> Counter:
    """{(kind, "batch"|"srun"|"", --nnodes as written): launches} of a script's steps,
    counted once per script (a script of many launches stays linear)."""
    def count() -> Counter:
        out: Counter = Counter()
        for st in steps:
            x = _launcher(st)
            if x is not None:
                mode = "batch" if BATCH_STEP in st.nodes.source else \
                    "srun" if st.launcher("srun") is not None else ""
                out[(x.kind, mode, _option(x.argv, NODE_OPTIONS[x.kind]))] += 1
        return out
    return job.memo(("world_size_launches", script.rel), count)


def _shape(job: Job, script: Any) -> tuple:
    """Per line of a script (1-based; index 0 unused), read once: the loop depth before
    it (`do` … `done`), the line of the innermost `if`/`case` open before it (0: none),
    and the lines. Keyed by the text too: a here-document is a script of the same name."""
    def read() -> tuple:
        depth = 0
        opened: list = []
        loops, branches = [0], [0]
        lines = script.text.splitlines()
        for i, text in enumerate(lines, 1):
            loops.append(depth)
            branches.append(opened[-1] if opened else 0)
            code = text.split("#", 1)[0]
            depth += len(re.findall(r"(?:^|[;\s])do(?:\s|$)", code))
            depth -= len(re.findall(r"(?:^|[;\s])done\b", code))
            for word in re.findall(r"(?:^|(?<=[;\s]))(if|case|fi|esac)(?=[\s;]|$)", code):
                if word in ("if", "case"):
                    opened.append(i)
                elif opened:
                    opened.pop()
        return loops, branches, lines
    return job.memo(("world_size_shape", script.rel, hash(script.text)), read)


def _remote(job: Job, step: Any) -> str:
    """`ssh at job.sh:12` where a script of the step runs a command on other hosts."""
    for s in step.scripts:
        if s is None:
            continue
        found = job.memo(("world_size_remote", s.rel, hash(s.text)),
                         _searcher(s.text))
        if found:
            return f"{found.group(1)} at {s.rel}:{s.text.count(chr(10), 0, found.start()) + 1}"
    return ""


def _searcher(text: str) -> Any:
    return lambda: REMOTE.search(text)


def _in_loop_or_background(job: Job, step: Any) -> bool:
    """The step's line is inside a for/while loop, or the command is sent to the
    background (`&`): the script may start it several times."""
    loops, _, lines = _shape(job, step.script)
    if 0 < step.line < len(loops) and loops[step.line] > 0:
        return True
    # the command's last line: the first from its line on that does not end in a backslash
    for text in lines[max(step.line - 1, 0):max(step.line - 1, 0) + 200]:
        if not text.rstrip().endswith("\\"):
            return bool(re.search(r"(?<![&>|])&\s*(#.*)?$", text.rstrip()))
    return False


def _branch(job: Job, step: Any) -> str:
    """`job.sh:12` where the step's line is inside an `if`/`case` that opens there (the
    model reads both branches; the job may take the other one), else ""."""
    _, branches, _ = _shape(job, step.script)
    line = branches[step.line] if 0 < step.line < len(branches) else 0
    return f"{step.script.rel}:{line}" if line else ""


def _written_at(step: Any, flag: str) -> str:
    """`job.sh:56`: the first line of the step's scripts that writes `flag` (not a comment)."""
    pattern = re.compile(r"(?:^|\s|[\"'(])" + re.escape(flag) + r"(?:[=\s\"']|$)")
    for s in step.scripts:
        if s is None:
            continue
        for i, text in enumerate(s.text.splitlines(), 1):
            if pattern.search(text) and not text.lstrip().startswith("#"):
                return f"{s.rel}:{i}"
    return step.where


def _slurm_fallback(job: Job, step: Any) -> str:
    """`${SLURM_NNODES:-"1"} at job.sh:11` where a script of the step counts nodes or
    GPUs with a fallback for a variable that Slurm sets in the job, and the doctor does not
    know the job's value (no #SBATCH line gives it, not inside a job): under `sbatch -N 4`
    the count is the job's, not the fallback."""
    batch = step.batch
    if job.in_job or (batch is not None and batch.get("nodes") is not None):
        return ""
    for s in step.scripts:
        if s is None:
            continue
        m = re.search(r"\$\{(SLURM_\w+):?-[^}]*\}", s.text)
        if m:
            return f"{m.group(0)} at {s.rel}:{s.text.count(chr(10), 0, m.start()) + 1}"
    return ""


def _srun_edit(job: Job, launcher: Any) -> Any:
    """`srun --ntasks-per-node=1 ` before a batch-step launcher, where that is enough:
    the line begins with the launcher's own word, no fixed node rank, and a dynamic
    rendezvous (c10d, etcd) the other nodes can reach (not localhost / 127.0.0.1). The
    batch shell expands `$(hostname)` or `$head_node_ip` once, on the first node."""
    argv = launcher.argv
    if any(_option(argv, (o,)) is not None for o in RANK_OPTIONS) or \
            not edits.owned(job, launcher.path):
        return None
    # a dynamic rendezvous assigns the node ranks; the static one (torchrun's default with
    # --master_addr, torch.distributed.launch's) needs --node_rank per node: no edit there
    backend = _option(argv, ("--rdzv_backend", "--rdzv-backend"))
    endpoint = _option(argv, ("--rdzv_endpoint", "--rdzv-endpoint"))
    if launcher.kind == "accelerate" or backend not in ("c10d", "etcd", "etcd-v2") or \
            not endpoint or \
            re.match(r"(localhost|127\.[\d.]+|0\.0\.0\.0|\[?::1\]?)(:|$)", endpoint):
        return None
    # each edit reads the file: a script of thousands of such launches gets the first few
    made = job.memo("world_size_edits", lambda: [0])
    if made[0] >= MAX_EDITS:
        return None
    made[0] += 1
    lines = edits.read_lines(job, launcher.path) or []
    if not 1 <= launcher.line <= len(lines):
        return None
    body = lines[launcher.line - 1].rstrip("\r\n")
    m = re.match(r"(\s*)((?:torchrun|python[0-9.]*)\b)", body)
    if not m:
        return None
    new = body[:m.end(1)] + "srun --ntasks-per-node=1 " + body[m.end(1):]
    return edits.replace_line(job, launcher.path, launcher.line, new,
                              "start the launcher once per node with srun", unsafe=True)


def _accelerate_gpus(job: Job, script: Any, step: Any, launcher: Any) -> Iterator[Finding]:
    """accelerate's config file's num_processes ÷ num_machines processes per node against
    the GPUs the job requests per node (slurm-gpu-mismatch judges the same count when it
    is on the command line). More processes than GPUs: ranks share a GPU, or fail at
    `torch.cuda.set_device` where Slurm hides the other GPUs; fewer: GPUs stay idle."""
    argv = launcher.argv
    if _option(argv, ("--num_processes", "--num-processes")) is not None:
        return
    rel, data = _accelerate_config(job, step, launcher)
    total = data.get("num_processes") if data else None
    if not isinstance(total, int) or isinstance(total, bool) or total < 1:
        return
    raw = _option(argv, ("--num_machines", "--num-machines"))
    machines = data.get("num_machines", 1) if raw is None else (int(raw) if raw.isdigit()
                                                                  else None)
    gpus = step.gpus_per_node
    if not isinstance(machines, int) or machines < 1 or gpus.value is None or \
            str(data.get("distributed_type", "")).upper() in ("NO", "XLA", "TPU"):
        return
    per = total // machines
    line = data.line_of("num_processes") if isinstance(data, LineDict) else None
    loc = Location(rel, line or None)
    if per == gpus.value:
        return
    more = per > gpus.value
    yield Finding(
        f"num_processes: {total} in {rel} over {machines} machine(s) starts {per} process(es) "
        f"per node, but the job requests {gpus.value} GPU(s) per node ({gpus.source}): "
        + ("ranks share a GPU, or fail at torch.cuda.set_device where Slurm hides the "
           "node's other GPUs" if more else f"{gpus.value - per} GPU(s) per node stay idle"),
        location=loc, severity=Severity.WARNING,
        fix=f"Set `num_processes: {gpus.value * machines}` in {rel}, or request "
            f"`--gpus-per-node={per}`.",
        data={"script": script.rel, "config": rel, "num_processes": total,
              "num_machines": machines, "gpus_per_node": gpus.value,
              "rule": "accelerate_gpus"})


def _deepspeed_rule(job: Job, script: Any, step: Any, launcher: Any) -> Iterator[Finding]:
    """The deepspeed launcher in the batch step of a multi-node job starts the ranks on
    the hosts of its hostfile itself (pdsh/ssh): without one (`--hostfile`, else
    /job/hostfile) it runs on the first node only, and with `--num_nodes N>1` it stops
    ('Num nodes is >1 but no extra nodes available via hostfile', deepspeed/launcher/
    runner.py). Warnings: the cluster may hold /job/hostfile, and a hostfile in the
    checkout names hosts Slurm does not choose."""
    batch = step.batch
    if step.launcher("srun") or step.launcher("mpirun") or batch is None or \
            not batch.directives:
        return
    alloc, n = batch.get("nodes"), batch.number("nodes")
    argv = launcher.argv
    if alloc is None or not n or n < 2 or \
            _option(argv, ("--launcher",)) not in (None, "pdsh") or \
            any(w in ("--no_ssh", "--no-ssh") for w in argv):
        return
    lwhere = f"{launcher.path}:{launcher.line}"
    raw = _option(argv, ("--num_nodes", "--num-nodes"))
    hostfile = _option(argv, ("--hostfile", "-H"))
    data = {"script": script.rel, "launcher": "deepspeed", "launcher_line": lwhere,
            "nodes": n, "num_nodes": raw, "hostfile": hostfile, "rule": "deepspeed"}
    where = Location(launcher.path, launcher.line)
    fix = ("Write the job's hosts to a hostfile before the launch (`scontrol show hostnames "
           "$SLURM_JOB_NODELIST | sed 's/$/ slots=<GPUs per node>/' > hostfile`) and pass "
           "`--hostfile hostfile --num_nodes $SLURM_NNODES`, or start one launcher per node "
           "with srun (torchrun).")
    if hostfile is None:
        if any(s is not None and "/job/hostfile" in s.text for s in step.scripts):
            return   # the job writes DeepSpeed's default hostfile
        what = (f"with --num_nodes {raw} it stops at once ('Num nodes is >1 but no extra "
                "nodes available via hostfile')" if raw and raw.isdigit() and int(raw) > 1
                else "it runs on the first node only, the others stay idle")
        yield Finding(
            f"deepspeed at {lwhere} runs in the batch step of a {n}-node job "
            f"({batch.where(alloc)}) with no --hostfile: DeepSpeed then reads /job/hostfile, "
            f"and where there is none {what}", location=where, fix=fix,
            severity=Severity.WARNING, data=dict(data, unknown="/job/hostfile on the cluster"))
        return
    written = re.compile(r"(>>?|\btee(\s+-a)?)\s*[\"']?" + re.escape(hostfile) + r"\b")
    if any(s is not None and written.search(s.text) for s in step.scripts):
        return   # the job writes it (`scontrol show hostnames … > hostfile`): its own nodes
    path = _find(job, step, hostfile) if "$" not in hostfile else None
    if path is None:
        return   # not in the checkout: written elsewhere, not known here
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return
    hosts = [ln.split()[0] for ln in text.splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    used = min(len(hosts), int(raw)) if raw and raw.isdigit() and int(raw) > 0 else len(hosts)
    if used != n:
        yield Finding(
            f"deepspeed at {lwhere} starts ranks on {used} host(s) of {job.rel(path)} "
            f"({', '.join(hosts[:3])}{', …' if len(hosts) > 3 else ''}) but the job has {n} "
            f"node(s) ({batch.where(alloc)}): a fixed hostfile names hosts Slurm does not "
            "choose", location=where, fix=fix, severity=Severity.WARNING,
            data=dict(data, hosts=len(hosts), used=used))


# ---- the world size and the parallelism ----------------------------------------------
def world_of(job: Job, step: Any) -> World:
    """The ranks the step starts: the launcher's nodes × processes per node (torchrun,
    accelerate), else srun's (or mpirun's) nodes × tasks per node. Unknown (value None,
    `why`) where a count is not written as a number the doctor can read."""
    launcher = _launcher(step)
    if launcher is not None and launcher.kind == "accelerate":
        total = _option(launcher.argv, ("--num_processes", "--num-processes"))
        where = f"{launcher.path}:{launcher.line}"
        if total is None:
            rel, data = _accelerate_config(job, step, launcher)
            value = data.get("num_processes") if data else None
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                line = data.line_of("num_processes") if isinstance(data, LineDict) else None
                return World(value, f"num_processes: {value} in {rel}:{line}")
            return World(None, "", "accelerate's num_processes (its default config)")
        if total.isdigit():
            return World(int(total), f"--num_processes={total} at {where}")
        return World(None, "", f"--num_processes={total} at {where}")
    if launcher is not None:   # torchrun
        where = f"{launcher.path}:{launcher.line}"
        got = _launcher_nodes(job, step, launcher)
        per = step.procs_per_task
        raw_per = _option(launcher.argv, ("--nproc_per_node", "--nproc-per-node"))
        if per.value is None and raw_per in ("gpu", "auto", "cuda") and step.gpus_per_node.value:
            per = Count(step.gpus_per_node.value, f"{step.gpus_per_node.source} "
                        f"(--nproc_per_node={raw_per})")
        if per.value is None:
            return World(None, "", f"the processes per node ({per.source})")
        if got is None:
            if step.nodes.value and step.nodes.value > 1 and BATCH_STEP not in step.nodes.source:
                return World(None, "", "torchrun's --nnodes (unset, on several nodes)")
            return World(per.value, f"{per.value} process(es) per node ({per.source}) on one "
                         f"node (torchrun's default --nnodes=1, {where})")
        raw, span, _w, how = got
        if span is None or span[0] != span[1]:
            return World(None, "", f"{how} at {where}")
        return World(span[0] * per.value, f"{how} × {per.value} per node ({per.source})")
    if not (step.launcher("srun") or step.launcher("mpirun")):
        return World(None, "", "the processes the program starts itself")
    # a program under srun reads the world size the job exports (`export WORLD_SIZE=16`;
    # torchrun sets its own): a number written there is what the ranks see
    ws = step.env.get("WORLD_SIZE") if isinstance(step.env, dict) else None
    if ws is not None and not getattr(ws, "unresolved", ()) and str(ws.value).isdigit():
        return World(int(ws.value), f"WORLD_SIZE={ws.value} at {ws.where()}")
    nodes, tasks = step.nodes, step.tasks_per_node
    if nodes.value is None:
        return World(None, "", f"the job's nodes ({nodes.source})")
    if tasks.value is None:
        return World(None, "", f"the tasks per node ({tasks.source})")
    if "÷ nodes" in tasks.source:
        # `--ntasks=N` spread over the nodes: the world is N, not nodes × ⌈N ÷ nodes⌉
        m = re.search(r"--ntasks[= ](\d+)", tasks.source)
        if not m:
            return World(None, "", f"the tasks ({tasks.source})")
        return World(int(m.group(1)), tasks.source.replace(" ÷ nodes", ""))
    return World(nodes.value * tasks.value,
                 f"{nodes.value} node(s) ({nodes.source}) × {tasks.value} task(s) per node "
                 f"({tasks.source})")


def _megatron(step: Any) -> Optional[dict]:
    """{tp, pp, cp, ep, etp: (value, raw)} from the step's Megatron flags; None where it
    gives none, or a value is not a number."""
    got: dict = {}
    for key, names in MEGATRON.items():
        raw = _option(tuple(step.args), names)
        if raw is None:
            continue
        if not raw.isdigit() or int(raw) < 1:
            return {"unknown": f"{names[0]} {raw}"}
        got[key] = int(raw)
    return got or None


def _has_parallelism(job: Job, script: Any, step: Any) -> bool:
    return _megatron(step) is not None or bool(_nanotron_configs(job, script, step))


def _parallel_rules(job: Job, script: Any, step: Any) -> Iterator[Finding]:
    world = world_of(job, step)
    if world.value is None:
        return
    # links the doctor cannot show: the step in an if/case branch, a node count that falls
    # back to a default where Slurm sets it in the job
    unknown = []
    branch = _branch(job, step)
    if branch:
        unknown.append(f"the step is in the branch at {branch}, which the job may not take")
    fallback = _slurm_fallback(job, step)
    if fallback:
        unknown.append(f"the count uses {fallback}: under sbatch the job's own value")
    found = []
    mega = _megatron(step)
    if mega and "unknown" not in mega and not any(
            _option(tuple(step.args), (f,)) is not None for f in MEGATRON_UNMODELLED):
        found += list(_megatron_rule(step, mega, world))
    for rel, line, sizes in _nanotron_configs(job, script, step):
        product = 1
        for v in sizes.values():
            product *= v
        if product != world.value:
            written = " × ".join(f"{k} {v}" for k, v in sizes.items())
            dp = world.value * sizes.get("dp", 1) // product \
                if world.value * sizes.get("dp", 1) % product == 0 else None
            found.append(Finding(
                f"{rel}:{line} sets parallelism {written} = {product} ranks, but "
                f"{step.where} starts {world.value} ({world.source}): nanotron's "
                f"ParallelContext raises 'The number of process requires to run all "
                f"replicas ({product}) must be equal to the world size ({world.value})' on "
                "every rank", location=Location(rel, line),
                fix=(f"Set `dp: {dp}` in {rel}" if dp else
                     f"Make dp × tp × pp equal {world.value} in {rel}") +
                    f", or start {product} ranks.",
                data={"script": script.rel, "config": rel, "world_size": world.value,
                      "parallelism": sizes, "rule": "nanotron"}))
    for f in found:
        if unknown:
            f = Finding(f.message + "; " + "; ".join(unknown), location=f.location, fix=f.fix,
                        data=dict(f.data, unknown=unknown), severity=Severity.WARNING)
        yield f


def _megatron_rule(step: Any, mega: dict, world: World) -> Iterator[Finding]:
    tp, pp, cp = mega.get("tp", 1), mega.get("pp", 1), mega.get("cp", 1)
    ep, etp = mega.get("ep", 1), mega.get("etp", tp)
    at = {k: _written_at(step, MEGATRON[k][0]) for k in mega}
    model = tp * pp * cp
    data = {"script": step.script.rel, "world_size": world.value, "rule": "megatron",
            "tensor_model_parallel_size": tp, "pipeline_model_parallel_size": pp,
            "context_parallel_size": cp, "written_at": at}

    def size(key: str, label: str, value: int) -> str:
        # unwritten: Megatron's default (1; the expert TP defaults to the TP)
        return f"{label} {value}" + (f" ({at[key]})" if key in at else
                                     " (= TP)" if key == "etp" else " (default)")

    if world.value % model:
        sizes = size("tp", "TP", tp) + " × " + size("pp", "PP", pp) + \
            (" × " + size("cp", "CP", cp) if cp != 1 or "cp" in mega else "")
        yield Finding(
            f"{step.where} runs Megatron with {sizes} = {model}, which does not divide its "
            f"world size {world.value} ({world.source}): Megatron stops every rank at start "
            f"('world size ({world.value}) is not divisible by total_model_size')",
            location=Location(step.script.rel, step.line),
            fix=f"Start a multiple of {model} ranks (nodes × GPUs per node), or choose "
                f"parallel sizes whose product divides {world.value}.",
            data=data)
        return
    expert = etp * ep * pp
    if "ep" in mega and world.value % expert:
        sizes = size("etp", "expert TP", etp) + " × " + size("ep", "EP", ep) + " × " + \
            size("pp", "PP", pp)
        yield Finding(
            f"{step.where} runs Megatron with {sizes} = {expert}, which does not divide its "
            f"world size {world.value} ({world.source}): Megatron raises 'world_size "
            f"({world.value}) is not divisible by expert_tensor_model_pipeline_parallel "
            f"size ({expert})' at start",
            location=Location(step.script.rel, step.line),
            fix=f"Start a multiple of {expert} ranks, or choose an --expert-model-parallel-size "
                f"that makes {etp} × EP × {pp} divide {world.value}.",
            data=dict(data, rule="megatron_expert", expert_model_parallel_size=ep,
                      expert_tensor_parallel_size=etp))


NANOTRON_KEYS = {"dp": "dp", "tp": "tp", "pp": "pp", "expert_parallel_size": "ep",
                 "context_parallel_size": "cp"}


def _nanotron_configs(job: Job, script: Any, step: Any) -> list:
    """(rel, line, {dp, tp, pp, …}) of each config the step provably reads (its command
    line names it, or Hydra composes it) with nanotron's `parallelism:` mapping."""
    out = []
    files: list = []
    for cfg in step_configs(job, script).configs:
        files.append((cfg.rel, cfg.data))
    raw = _option(tuple(step.args), CONFIG_FLAGS)
    if raw and "$" not in raw and raw.endswith((".yaml", ".yml")):
        path = _find(job, step, raw)
        if path is not None and job.rel(path) not in {r for r, _ in files}:
            try:
                files.append((job.rel(path), load_yaml_text(path, "config")))
            except (InputError, OSError, ValueError):
                pass
    for rel, data in files:
        par = data.get("parallelism") if isinstance(data, dict) else None
        if not isinstance(par, dict) or not all(k in par for k in ("dp", "tp", "pp")):
            continue
        sizes = {k: par[k] for k in NANOTRON_KEYS if k in par}
        if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                   for v in sizes.values()):
            continue
        # the `parallelism:` key's own line
        line = data.line_of("parallelism") if isinstance(data, LineDict) else \
            par.line if isinstance(par, LineDict) else None
        out.append((rel, line or None, {NANOTRON_KEYS[k]: v for k, v in sizes.items()}))
    return out
