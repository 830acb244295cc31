"""The launched steps of a job: what each line that starts training really runs.

A job script is read the way bash, Slurm, the container runtime and the launcher
read it, in order: assignments and exports; `source`d files (same shell); inner
scripts that `bash`, `srun` or a container runs (a child shell: exported variables
only), also when a variable names them; inline `VAR=v cmd` prefixes; `env`;
`srun --export` (ALL, NONE, lists); singularity/apptainer `--env`, `--env-file`,
`--cleanenv` and `SINGULARITYENV_`/`APPTAINERENV_`; pyxis/CSCS container flags;
torchrun / `python -m torch.distributed.run`, `accelerate launch`, `deepspeed`,
`mpirun`; and finally python with a module or a script.

Each `Step` records its launcher chain, its ranks (nodes × tasks per node ×
processes per task, each with where it came from), CPUs and GPUs, the effective
environment of a rank (every value with its file:line and channel) and the argv
the program receives. What the doctor cannot follow (a file named by an unknown
variable, `eval`) is a note, never a guess.

Not modelled: `if`/`case` branches are read linearly, loops once; functions are
not expanded; `module load` / `conda activate` may set variables the doctor
cannot see (noted).
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Optional

from doctor import fs
from doctor.errors import InputError
from doctor.job.env import EnvState, EnvValue, JobEnv
from doctor.job.launch import console_scripts
from doctor.job.launchers import (ASSIGN, PYTHON, Count, read_container,
                                  read_env_command, read_launcher, read_mpirun, read_srun,
                                  srun_export, word_of)
from doctor.job.sbatch import Command, SbatchScript, load_sbatch, parse_sbatch
from doctor.sites import module_env
from doctor.job.shell import (PREFIXES, HereDoc, array_items, expand, expand_here_document,
                               prefix_words, split_commands, unquote)

SHELLS = ("bash", "sh", "zsh", "ksh", "dash")
CONTAINER_TOOLS = ("singularity", "apptainer")
MAX_DEPTH = 8
# One job script's walk reads at most this many commands of the scripts it sources and
# runs, for at most this long: depth alone does not bound it (ten scripts that each
# source the next ten times are 10**9 commands at depth 8). What it did not read is
# noted in facts.unreadable. (200,000 commands walk in one to two seconds.)
MAX_WALK_COMMANDS = 200_000
WALK_SECONDS = 20.0
# `module list`, `conda info` ... only print: they set nothing
READ_ONLY_SUBCOMMANDS = {"list", "avail", "show", "display", "help", "spider", "whatis",
                         "info", "keyword", "--version", "-v", "savelist", "describe"}
# Variables Slurm itself sets in every task's environment, from the job's options.
SLURM_FROM = {"SLURM_CPUS_PER_TASK": "cpus_per_task", "SLURM_NNODES": "nodes",
              "SLURM_JOB_NUM_NODES": "nodes", "SLURM_NTASKS_PER_NODE": "tasks_per_node",
              "SLURM_GPUS_ON_NODE": "gpus_per_node", "SLURM_GPUS_PER_NODE": "gpus_per_node"}


@dataclass(frozen=True)
class Launcher:
    kind: str      # srun, mpirun, container, torchrun, accelerate, deepspeed, python
    argv: tuple
    path: str
    line: int
    # the host environment the launcher reads (a container's SINGULARITY_BIND...)
    env: Any = field(default=None, compare=False, repr=False)


@dataclass
class Step:
    """One launched program: the line that starts training and what it receives."""
    batch: Optional[SbatchScript]      # the submitted script
    script: SbatchScript               # the script holding the launching line
    line: int
    chain: tuple                       # Launchers, outermost first
    program: tuple                     # argv from the python (or launcher) word on
    entry: Optional[str] = None        # "pkg.train" (module) or "train.py" (script)
    entry_is_module: bool = False
    args: tuple = ()                   # what the entry receives (overrides, --config)
    env: JobEnv = field(default_factory=JobEnv)
    scripts: tuple = ()                # every script read to get here, batch first
    nodes: Count = Count(None, "default")
    tasks_per_node: Count = Count(1, "default")
    procs_per_task: Count = Count(1, "default")
    cpus_per_task: Count = Count(None, "default")
    gpus_per_node: Count = Count(None, "default")
    container: Optional[Launcher] = None
    cwd: Optional[str] = None
    notes: list = field(default_factory=list)
    # the `cd` whose directory the doctor could not read (`cd $WORK/code` at job.sh:5):
    # `cwd` is then the last directory it knew, not where the step runs
    cwd_unknown: Optional[str] = None
    # the script whose #SBATCH lines are this step's job's (--time, --requeue): the
    # submitted script, or for `sbatch <<EOF` the here-document, a job of its own
    job_script: Optional[SbatchScript] = None

    @property
    def where(self) -> str:
        return f"{self.script.rel}:{self.line}"

    @property
    def ranks_per_node(self) -> Count:
        t, p = self.tasks_per_node, self.procs_per_task
        if t.value is None or p.value is None:
            return Count(None, f"{t.source} × {p.source}")
        if p.source == "default":
            return Count(t.value, t.source)
        if t.source == "default":
            return Count(p.value, p.source)
        return Count(t.value * p.value, f"{t.source} × {p.source}")

    @property
    def cpus_per_rank(self) -> Count:
        c, p = self.cpus_per_task, self.procs_per_task
        if c.value is None or not p.value:
            return c
        return Count(max(1, c.value // p.value), c.source if p.value == 1
                     else f"{c.source} ÷ {p.source}")

    def launcher(self, kind: str) -> Optional[Launcher]:
        return next((x for x in self.chain if x.kind == kind), None)

    @property
    def is_training(self) -> bool:
        return self.entry is not None


class _Budget:
    """What one job script's walk may still read, shared by every _Ctx of the walk: each
    file is read once (a script sourced ten times is parsed once), a script already
    being walked is not entered again (bash would recurse until it fails), and the
    walk stops after MAX_WALK_COMMANDS commands or WALK_SECONDS."""

    def __init__(self, job: Any, batch: Optional[SbatchScript]) -> None:
        self.job, self.batch = job, batch
        self.commands = MAX_WALK_COMMANDS
        self.deadline = time.monotonic() + WALK_SECONDS
        self.loaded: dict = {}    # real path -> SbatchScript, or None: not a script
        self.active: list = []    # the real paths of the scripts being walked, outermost first
        self.heredocs: dict = {}  # a script's text -> (its commands, its here-documents)
        self.written: dict = {}   # a path -> the script a `cat > path <<EOF` wrote there
        self.stopped = False

    def take(self, script: SbatchScript, line: int, state: Any) -> bool:
        """Whether the walk may read the command at script:line (noted when it may not)."""
        if self.stopped:
            return False
        self.commands -= 1
        if self.commands >= 0 and (self.commands % 64 or time.monotonic() < self.deadline):
            return True
        self.stopped = True
        why = (f"after {MAX_WALK_COMMANDS:,} commands" if self.commands < 0
               else f"after {WALK_SECONDS:g} s")
        text = (f"not read from {script.rel}:{line} on: the doctor stopped reading the "
                f"scripts the job script sources or runs {why}")
        state.notes.append(text)
        _note(self.job, self.batch.path if self.batch else script.path, text)
        return False


@dataclass
class _Ctx:
    """What the walk carries down into a command and the scripts it runs."""
    job: Any
    batch: Optional[SbatchScript]
    chain: tuple = ()
    scripts: tuple = ()
    counts: dict = field(default_factory=dict)   # name → Count (srun/torchrun options)
    container: Optional[Launcher] = None
    cwd: Optional[str] = None
    depth: int = 0
    budget: Any = None   # the walk's _Budget (one object for every copy of the _Ctx)
    # the shell's arrays (`ARGS=(train.py --lr 1)`): name -> the elements, expanded
    arrays: dict = field(default_factory=dict)
    wrapped: bool = False   # inside `sbatch --wrap="..."`: a batch script of its own
    # the shells whose variables were expanded into the text being read (an unquoted
    # here-document's, `bash -c "$CMD"`'s): where a directory in it came from (_step)
    outer: tuple = ()
    cwd_unknown: Optional[str] = None   # Step.cwd_unknown
    job_script: Optional[SbatchScript] = None   # Step.job_script, where not ctx.batch


def launched_steps(job: Any, batch: Optional[SbatchScript]) -> list:
    """Every step of a job script that runs a program, in order; for a script that
    launches no Python program (or no script), last a step holding the environment at
    its end."""
    state = EnvState.from_login(job.login_env, job.in_job)
    ctx = _Ctx(job, batch, scripts=(batch,) if batch else (), counts=_batch_counts(batch),
               budget=_Budget(job, batch))
    export = batch.get("export") if batch else None
    if batch is not None and export is not None and export.value and not job.in_job:
        # #SBATCH --export=NONE|A,B|ALL,X=v filters the submitter's environment as srun's
        # --export does. (With NONE or a bare list, Slurm also loads the user's login
        # environment on the node, as --get-user-env does: not visible to the doctor.)
        srun_export(export.value, state, batch, export.line, "sbatch-export")
        # sbatch also sets SLURM_EXPORT_ENV to the value, and srun takes its default
        # --export from it: under NONE the steps lose the batch script's exports too.
        state.put(EnvValue("SLURM_EXPORT_ENV", export.value, "slurm", batch.rel,
                           export.line, channel="slurm"))
    _slurm_env(state, ctx.counts, batch)
    if batch is not None and "SLURM_SUBMIT_DIR" not in state.values:
        # sbatch's working directory, taken as the repo root as everywhere (launch.workdir)
        state.put(EnvValue("SLURM_SUBMIT_DIR", str(job.repo), "slurm", channel="slurm"))
    if batch is not None:
        # sbatch copies the batch script to slurmd's spool directory and runs the copy:
        # there, `$(dirname "$0")` is that directory, not the repo's (a script without
        # #SBATCH lines is taken as run by its path, `bash scripts/x.sh`)
        _own_path(state, SPOOL_SCRIPT if batch.directives else batch.rel)
    steps: list = []
    if batch is not None:
        _walk(batch, state, ctx, steps)
    if not any(s.is_training for s in steps):   # the script's environment at its end
        end = state.env()
        steps.append(Step(batch, batch, 0, (), (), env=end, scripts=ctx.scripts,  # type: ignore[arg-type]
                          **_counts(ctx.counts), notes=list(state.notes)))
    return steps


# Launchers that start the program on more than one process (or, sbatch --wrap, as a
# job of its own with its own resources), each adding a level.
DISTRIBUTED = ("srun", "mpirun", "torchrun", "accelerate", "deepspeed", "sbatch")


def training_step(steps: list) -> Step:
    """The step the checks judge as the job's training, among those that run a Python
    program (a script path, `-m module`, a console script):
    1. the one under the most levels of distributed launchers: `srun`/`mpirun`, then
       `torchrun`, `accelerate launch` or `deepspeed` (`srun … bash -c "$LAUNCHER
       $CMD"` is two), and `sbatch --wrap` (a job of its own); a `python
       tools/preprocess.py` the batch step runs once is none;
    2. then the one with the most ranks (nodes × ranks per node; under a launcher, a
       count the job leaves to the cluster counts as two);
    3. then the one with the most arguments: the training command carries the model's
       configuration, an evaluation or conversion line a few paths;
    4. then the first in the script.
    What the entry imports is not read for this: the model of the steps stays free of
    the code. A script that launches no Python program: its last step (the environment
    at its end), which has no entry."""
    runs = [s for s in steps if s.is_training]
    if not runs:
        return steps[-1]

    def level(s: Step) -> int:
        return sum(x.kind in DISTRIBUTED for x in s.chain)

    def world(s: Step) -> int:
        unknown = 2 if level(s) else 1
        nodes, ranks = s.nodes.value, s.ranks_per_node.value
        return (nodes if nodes is not None else unknown) * \
            (ranks if ranks is not None else unknown)

    # enumerate, not runs.index(s): index compares dataclasses field by field, which made
    # a script of 5,000 launches spend 33 s here
    return max(enumerate(runs),
               key=lambda p: (level(p[1]), world(p[1]), len(p[1].args), -p[0]))[1]


# ---- counts ------------------------------------------------------------
def _batch_counts(batch: Optional[SbatchScript]) -> dict:
    if batch is None:
        return {}
    out: dict = {}
    for key, name in (("nodes", "nodes"), ("ntasks-per-node", "tasks_per_node"),
                      ("cpus-per-task", "cpus_per_task"), ("ntasks", "ntasks")):
        v = batch.number(key)
        d = batch.get(key)
        if v is not None and d is not None:
            out[name] = Count(v, batch.where(d))
    if "ntasks" not in out and "nodes" in out and "tasks_per_node" in out:
        # sbatch exports the job's task count as SLURM_NTASKS, which srun reads as its -n
        out["ntasks"] = Count(out["nodes"].value * out["tasks_per_node"].value,
                              f"{out['nodes'].source} × {out['tasks_per_node'].source}")
    gpus = batch.gpus_per_node()
    if gpus:
        out["gpus_per_node"] = Count(gpus[0], batch.where(gpus[1]))
    return out


def _counts(counts: dict) -> dict:
    """The Step's count fields from the gathered options (srun's override the batch's)."""
    nodes = counts.get("nodes", Count(None, "default"))
    tpn = counts.get("tasks_per_node")
    n = counts.get("ntasks")
    if counts.get("srun") and tpn is not None and n is not None and nodes.value and \
            n.value != nodes.value * tpn.value:
        # srun's task count (-n, else the job's SLURM_NTASKS) wins: "can't honor
        # --ntasks-per-node ... Ignoring --ntasks-per-node"; the tasks fill the nodes.
        tpn = None
    if tpn is None and "ntasks" in counts:
        n = counts["ntasks"]
        tpn = Count(-(-n.value // (nodes.value or 1)), f"{n.source} ÷ nodes")
    if tpn is None and counts.get("srun"):
        tpn = Count(1, "srun's default: one task per node")
    return {"nodes": nodes, "tasks_per_node": tpn or Count(1, "default"),
            "procs_per_task": counts.get("procs_per_task", Count(1, "default")),
            "cpus_per_task": counts.get("cpus_per_task", Count(None, "default")),
            "gpus_per_node": counts.get("gpus_per_node", Count(None, "default"))}


def _slurm_env(state: EnvState, counts: dict, batch: Optional[SbatchScript]) -> None:
    """The SLURM_* variables Slurm derives from the options, where the doctor knows them
    and the login environment does not already hold them (inside a job it does)."""
    resolved = _counts(counts)
    for var, name in SLURM_FROM.items():
        c = resolved.get(name)
        if c is not None and c.value is not None and c.source != "default" \
                and var not in state.values:
            # `job.sbatch:3 (#SBATCH --nodes=1)`; the script's name may hold a colon
            path, _, line = c.source.split(" (", 1)[0].rpartition(":")
            state.put(EnvValue(var, str(c.value), "slurm", path or None,
                               int(line) if line.isdigit() else None, channel="slurm"))


# ---- the walk ----------------------------------------------------------
def _walk(script: SbatchScript, state: EnvState, ctx: _Ctx, steps: list,
          channel: str = "export") -> None:
    """Walk a script file, unless it is being walked twice already: it sources or runs
    itself, directly or through another script (bash recurses until it fails; noted).
    One re-entry is walked: a job script that runs itself under srun behind a guard
    (`if [ -z "$INNER" ]; then export INNER=1; srun bash $0; exit; fi`) has its
    training step there, which bash reaches once."""
    active = ctx.budget.active
    key = fs.realpath(script.path)
    if active.count(key) >= 2:
        note = (f"{script.rel} sources or runs itself (through "
                f"{' -> '.join(ctx.job.rel(p) for p in active[active.index(key):])}); "
                "not read again")
        if note not in state.notes:   # (once, however often it does)
            state.notes.append(note)
        return
    active.append(key)
    try:
        _walk_commands(script, state, ctx, steps, channel)
    finally:
        active.pop()


def _walk_commands(script: SbatchScript, state: EnvState, ctx: _Ctx, steps: list,
                   channel: str = "export") -> None:
    piped: Optional[HereDoc] = None   # `cat <<EOF | sbatch`: the next command's input
    for index, cmd in enumerate(script.commands):
        doc_in, piped = piped, None
        # the job script's own lines are all walked (MAX_SCRIPT_LINES bounds them): the
        # budget is for what it sources and runs, so a step after them is still found
        if ctx.depth and not ctx.budget.take(script, cmd.line, state):
            return
        array = array_items(cmd.words[0]) if len(cmd.words) == 1 else None
        if array is not None:   # `ARGS=(train.py --lr 1)`; `ARGS+=(--bf16)`
            name, appends, items = array
            ctx.arrays[name] = (ctx.arrays.get(name, []) if appends else []) + [
                word_of(w, state) for w in _fields(items, state, ctx.arrays)]
            continue
        if state.apply(cmd, script, channel):
            continue
        argv0 = unquote(cmd.words[0])
        if argv0 in ("source", ".") and len(cmd.words) > 1:
            inner = _script_named(ctx, state, cmd.words[1], script, cmd.line)
            if inner is not None and ctx.depth < MAX_DEPTH:
                sub = replace(ctx, scripts=_plus(ctx.scripts, inner), depth=ctx.depth + 1)
                caller = state.values.get("BASH_SOURCE")
                _own_path(state, expand(cmd.words[1], state.lookup, in_job=state.in_job).text,
                          source_only=True)
                _walk(inner, state, sub, steps, "sourced" if not state.in_step else "inner")
                if caller is not None:   # back in the file that sourced it
                    state.put(caller)
                ctx.scripts = sub.scripts
            elif inner is None and not cmd.argv[1].endswith(("/activate", "/env")):
                # (a virtualenv's activate sets PATH/VIRTUAL_ENV, nothing the checks read)
                state.opaque.append(f"`source {cmd.argv[1]}` ({script.rel}:{cmd.line}), "
                                    "which the doctor cannot read")
            continue
        if argv0 == "eval" and len(cmd.words) > 1 and ctx.depth < MAX_DEPTH:
            # `eval "$LAUNCHER $CMD"`: this shell runs its joined words as commands; read
            # when every variable in them is known (else noted below)
            res = [expand(w, state.lookup, in_job=state.in_job) for w in cmd.words[1:]]
            if all(r.resolved for r in res):
                code = " ".join(r.text for r in res)
                snippet = SbatchScript(path=script.path, rel=script.rel, text=code)
                snippet.commands = _commands_at(code, cmd.line)
                _walk_commands(snippet, state, replace(ctx, depth=ctx.depth + 1), steps,
                               channel)
                continue
        if argv0 in ("module", "ml", "conda", "spack", "eval") and not (
                len(cmd.argv) > 1 and cmd.argv[1] in READ_ONLY_SUBCOMMANDS):
            # a module the site profile knows sets what the profile says (doctor/sites)
            known = module_env(ctx.job.site, cmd.argv) if argv0 in ("module", "ml") else None
            for var, value, _name in known or ():
                state.assign(var, value, script, cmd.line, "module", exported=True)
            if known is not None:
                continue
            state.notes.append(f"{script.rel}:{cmd.line}: `{' '.join(cmd.argv)}` may set "
                               "variables the doctor cannot see")
            continue
        if argv0 in ("cd", "pushd") and len(cmd.words) > 1:
            to = expand(cmd.words[1], state.get, in_job=state.in_job)
            if to.resolved:   # a relative `cd` moves from the last one
                ctx.cwd = os.path.normpath(os.path.join(ctx.cwd, to.text)) if ctx.cwd \
                    else to.text
                if os.path.isabs(to.text):
                    ctx.cwd_unknown = None
            else:
                ctx.cwd_unknown = f"`cd {unquote(cmd.words[1])}` at {script.rel}:{cmd.line}"
            _set_pwd(state, to.text if to.resolved else None, script, cmd.line)
            continue
        doc = _here_document(ctx, script, index, cmd) if any(
            w.startswith("<<") and not w.startswith("<<<") for w in cmd.words) else None
        target = _heredoc_target(cmd.words, state) if doc is not None else None
        if target is not None and doc is not None:
            # `cat > run.sh <<EOF`: the job writes a script (expanded now, as cat gets it)
            # that a later `bash run.sh` / `srun ./run.sh` runs: read it as that script
            body = _here_script(script, doc, state)
            body.written_by_job = True  # type: ignore[attr-defined]  # (see _plus)
            ctx.budget.written[_written_key(ctx, target)] = body
            continue
        if doc is not None and _cat_piped(script, index, cmd):
            piped = doc   # `cat <<EOF | sbatch`, `| bash`: what the next command reads
            continue
        _command(script, cmd.line, list(cmd.words), state, ctx, steps, doc or doc_in)


# Where slurmd runs the batch script from: `$SlurmdSpoolDir/job<id>/slurm_script`
# (SlurmdSpoolDir's default, /var/spool/slurmd; the copy is on the batch node only,
# and holds the script alone: no file beside it). Checks know it by SPOOL_DIR.
SPOOL_DIR = "/var/spool/slurmd/job<SLURM_JOB_ID>"
SPOOL_SCRIPT = SPOOL_DIR + "/slurm_script"


def _own_path(state: EnvState, path: str, source_only: bool = False) -> None:
    """The script's own path as bash gives it to the script: `$0` (not for a sourced
    file) and `${BASH_SOURCE[0]}`, shell variables that no child inherits."""
    for name in ("BASH_SOURCE",) if source_only else ("0", "BASH_SOURCE"):
        state.put(EnvValue(name, path, "shell", exported=False, channel="inner",
                           in_step=state.in_step))


_PIPE_AFTER_HEREDOC = re.compile(r"<<-?\s*(['\"]?)[^\s'\"|]+\1\s*\|(?!\|)")


def _cat_piped(script: SbatchScript, index: int, cmd: Any) -> bool:
    """`cat <<EOF | NEXT` (cat with nothing but the here-document, piped into the next
    command on its line): the here-document is NEXT's standard input."""
    if unquote(cmd.words[0]) != "cat" or not all(
            w.startswith("<<") or k and cmd.words[k - 1] in ("<<", "<<-")
            for k, w in enumerate(cmd.words[1:], 1)):
        return False
    nxt = script.commands[index + 1] if index + 1 < len(script.commands) else None
    lines = script.text.splitlines()
    return nxt is not None and nxt.line == cmd.line and 0 < cmd.line <= len(lines) and \
        _PIPE_AFTER_HEREDOC.search(lines[cmd.line - 1]) is not None


def _heredoc_target(words: tuple, state: EnvState) -> Optional[str]:
    """The file `cat > FILE <<EOF`, `cat <<EOF >FILE` or `tee FILE <<EOF` writes (not
    appends: `>>` adds to a file the doctor cannot see)."""
    argv0 = unquote(words[0])
    rest = [w for w in words[1:] if not w.startswith("<<")]
    if argv0 == "cat":
        for k, w in enumerate(rest):
            if w == ">" and k + 1 < len(rest):
                return word_of(rest[k + 1], state)
            if w.startswith(">") and not w.startswith((">>", ">&")) and len(w) > 1:
                return word_of(w[1:], state)
        return None
    if argv0 == "tee":
        files = [w for w in rest if not w.startswith(("-", ">", "2>", "&>", "1>"))]
        return word_of(files[0], state) if len(files) == 1 and "-a" not in rest else None
    return None


def _written_key(ctx: _Ctx, path: str) -> str:
    return os.path.normpath(os.path.join(ctx.cwd or "", path))


def _written(ctx: _Ctx, path: str) -> Optional[SbatchScript]:
    """The script the job wrote at `path` with a here-document, if it did."""
    written = ctx.budget.written
    return written.get(_written_key(ctx, path)) if written and path else None


def _set_pwd(state: EnvState, target: Optional[str], script: SbatchScript, line: int) -> None:
    """bash sets PWD on `cd`: the new directory where it is known, else PWD is unknown
    (a later `$PWD/src` must not become the doctor's own working directory)."""
    old = state.values.get("PWD")
    if target is not None and not os.path.isabs(target):
        target = os.path.normpath(os.path.join(old.value, target)) \
            if old is not None and os.path.isabs(old.value) else None
    if target is None:
        state.values.pop("PWD", None)
    else:
        state.put(EnvValue("PWD", target, "sbatch", script.rel, line,
                           exported=old.exported if old is not None else True,
                           channel="export", in_step=state.in_step))


def _command(script: SbatchScript, line: int, words: list, state: EnvState, ctx: _Ctx,
             steps: list, doc: Optional[HereDoc] = None) -> None:
    """One simple command: its prefixes, wrappers and launchers, down to the program.
    `doc`: the here-document it reads as its input (`sbatch <<EOF`, `bash <<EOF`)."""
    words = _without_redirects(words)
    local = state.copy()
    local.shell = state
    i = 0
    while i < len(words) and ASSIGN.match(words[i]) and i + 1 < len(words):
        m = ASSIGN.match(words[i])
        assert m is not None
        local.assign(m.group(1), m.group(2), script, line, "inline", exported=True)
        i += 1
    # bash expands the words with the shell's variables, before the inline ones apply
    words = words[:i] + _fields(words[i:], state, ctx.arrays)
    chain = list(ctx.chain)
    counts = dict(ctx.counts)
    container = ctx.container
    after_wrapper = False
    while i < len(words):
        word = word_of(words[i], local)
        base = os.path.basename(word)
        rest = words[i + 1:]
        if base in PREFIXES and base not in ("env", "srun"):   # timeout, nice, numactl ...
            n = prefix_words(base, [word_of(w, local) for w in rest])
            if n is None:
                return
            i += 1 + n
            continue
        if base == "env":
            i += 1 + read_env_command(rest, local, script, line)
            continue
        if base == "srun":
            n = read_srun(rest, local, script, line, counts)
            chain.append(Launcher("srun", tuple(word_of(w, local) for w in words[i:i + 1 + n]),
                                  script.rel, line))
            local = local.child(in_step=True)
            local.shell = state
            i += 1 + n
            continue
        if base == "sbatch" and ctx.depth < MAX_DEPTH:
            code = _wrap_code(rest, local)
            # (sbatch reads its standard input only when no script file is named)
            body = _here_script(script, doc, local) if code is None and doc and read_srun(
                rest, local.copy(), script, line, {}) >= len(rest) else None
            if code is None and body is None:
                return
            # `sbatch --gres=gpu:4 --wrap="module load x; python3 -m src.train ..."`, or
            # `sbatch <<EOF` with a batch script as the here-document: Slurm runs it as
            # the batch script of a new job with this environment (--export=ALL); its
            # #SBATCH lines, then sbatch's options, are that job's counts
            wrapped = dict(counts)
            if body is not None:
                wrapped.update(_batch_counts(body))
            else:
                body = SbatchScript(path=script.path, rel=script.rel, text=code or "")
                body.commands = _commands_at(code or "", line)
            read_srun(rest, local.copy(), script, line, wrapped)
            wrapped.pop("srun", None)
            chain.append(Launcher("sbatch", tuple(word_of(w, local) for w in words[i:]),
                                  script.rel, line))
            inner_state = local.child()
            _own_path(inner_state, SPOOL_SCRIPT)   # a batch script, run from the spool too
            _walk_commands(body, inner_state, replace(
                ctx, chain=tuple(chain), counts=wrapped, container=container,
                depth=ctx.depth + 1, wrapped=True, outer=_plus_shell(ctx, local),
                job_script=body if doc is not None and code is None else None), steps,
                "inner")
            return
        if base in ("mpirun", "mpiexec"):
            n = read_mpirun(rest, local, script, line, counts)
            chain.append(Launcher("mpirun", tuple(words[i:i + 1 + n]), script.rel, line))
            i += 1 + n
            continue
        if base in CONTAINER_TOOLS and rest and word_of(rest[0], local) in ("exec", "run"):
            host = local
            n, local = read_container(rest[1:], local, script, line,
                                  lambda name: _resolve_path(ctx, name), ctx.job.rel)
            container = Launcher("container", tuple(word_of(w, host) for w in words[i:i + 2 + n]),
                                 script.rel, line, host.env())
            chain.append(container)
            i += 2 + n
            continue
        if base in SHELLS:
            _shell(words[i + 1:], local, replace(ctx, chain=tuple(chain), counts=counts,
                                                 container=container), steps, script, line,
                   doc)
            return
        launch = read_launcher(words[i:], local)
        if launch is not None:
            kind, n, found = launch
            counts.update(found)
            chain.append(Launcher(kind, tuple(word_of(w, local) for w in words[i:i + n]),
                                  script.rel, line))
            if n < len(words) - i and not PYTHON.match(os.path.basename(
                    word_of(words[i + n], local))):
                steps.append(_step(script, line, words[i + n:], local, ctx, tuple(chain),
                                   counts, container))
                return
            i += n
            continue
        if PYTHON.match(base) or (word.endswith(".py") and (
                _repo_file(ctx, word) or after_wrapper)):
            # (after a wrapper that runs its arguments, `site_launch.sh run.py ...` whose
            # launcher is `python3 "$@"`, the .py word is the program, in the repo or not)
            steps.append(_step(script, line, words[i:], local, ctx, tuple(chain), counts,
                               container))
            return
        module = console_scripts(ctx.job).get(base)
        if module is not None:   # a console script of the repo's package: python -m module
            steps.append(_step(script, line, ["python", "-m", module] + words[i + 1:], local,
                               ctx, tuple(chain), counts, container))
            return
        wrapper = _wrapper_script(ctx, word) if ctx.depth < MAX_DEPTH else None
        if wrapper is not None:
            # `srun scripts/run_with_environment.sh python train.py`: the wrapper sets its
            # variables, then runs its arguments ("$@")
            sub_state = local.child()
            _own_path(sub_state, word)
            sub = replace(ctx, chain=tuple(chain), counts=counts, container=container,
                          scripts=_plus(ctx.scripts, wrapper), depth=ctx.depth + 1)
            before = len(steps)
            _walk(wrapper, sub_state, sub, steps, "inner")
            ctx.scripts = sub.scripts
            # `python train.py "$@"` in the wrapper: its arguments are the words after it
            given = tuple(word_of(w, local) for w in words[i + 1:])
            for s in steps[before:]:
                if s.script is wrapper and any(a in _ALL_ARGS for a in s.args):
                    s.args = tuple(x for a in s.args
                                   for x in (given if a in _ALL_ARGS else (a,)))
            if not _RUNS_ARGS.search(wrapper.text):
                return
            local = sub_state
            local.shell = state
            i += 1
            after_wrapper = bool(_RUNS_PROGRAM.search(wrapper.text))
            continue
        return


_ARRAY_REF = re.compile(r'^("?)\$\{([A-Za-z_][A-Za-z0-9_]*)\[([@*])\]\}\1$')
_NO_SPLIT = re.compile(r"[\"'`\\]|\$\(")   # quoted words, substitutions: not split here
_BLANKS = re.compile(r"\s")


def _fields(words: list, state: EnvState, arrays: dict) -> list:
    """The words as bash has them after expansion and word splitting: an unquoted
    `$CMD`, `${LAUNCHER}` or `$SRUN_ARGS` whose value holds blanks is several words
    (and none when it is empty); `"${ARGS[@]}"` is one word per element, `${ARGS[@]}`
    the elements split again. A quoted expansion (`"$CMD"`) stays one word, as in bash;
    a variable the doctor does not know stays as written."""
    out: list = []
    for raw in words:
        m = _ARRAY_REF.match(raw)
        if m and m.group(2) in arrays:
            items = arrays[m.group(2)]
            if m.group(1) and m.group(3) == "*":
                out.append(_literal(" ".join(items)))
            else:
                out += [_literal(x) for x in items] if m.group(1) else \
                    [_literal(f) for x in items for f in x.split()]
            continue
        if "$" in raw and not _NO_SPLIT.search(raw):
            text = word_of(raw, state)
            if text != raw and (not text or _BLANKS.search(text)):
                out += [_literal(f) for f in _split(text, _opaque_pieces(raw, state))]
                continue
        out.append(raw)
    return out


def _opaque_pieces(raw: str, state: EnvState) -> list:
    """The pieces of the values the word names that the doctor could not read and that
    hold blanks (`$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)`): each is
    kept one word, as its output (a host name) most likely is."""
    shell = state.shell or state
    out: list = []
    for name in re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", raw):
        v = shell.values.get(name)
        out += [u for u in (v.unresolved if v is not None else ()) if _BLANKS.search(u)]
    return sorted(set(out), key=len, reverse=True)


def _split(text: str, opaque: list) -> list:
    """text split at its blanks, except inside the opaque pieces."""
    keep: dict = {}
    for i, piece in enumerate(opaque):
        if piece in text:
            keep[f"\0{i}\0"] = piece
            text = text.replace(piece, f"\0{i}\0")
    fields = text.split()
    for mark, piece in keep.items():
        fields = [f.replace(mark, piece) for f in fields]
    return fields


def _literal(text: str) -> str:
    """A raw word that expands to text: the quotes and backslashes a value holds are
    data after expansion (bash does not read them again); a `$NAME` the doctor kept
    unresolved stays one, so it is still reported as unresolved."""
    return re.sub(r"([\\'\"`])", r"\\\1", text)


_REDIRECT = re.compile(r"^(\d*|&)(>>?|<<?-?|<<<|>&|<&)(.*)$")


def _wrap_code(words: list, state: EnvState) -> Optional[str]:
    """The command of `sbatch ... --wrap=CMD` (or `--wrap CMD`); None without one."""
    for i, raw in enumerate(words):
        w = word_of(raw, state)
        if w.startswith("--wrap="):
            return w[len("--wrap="):]
        if w == "--wrap" and i + 1 < len(words):
            return word_of(words[i + 1], state)
    return None


def _without_redirects(words: list) -> list:
    """The command's words without its redirections (`2>&1`, `> log`, `<<EOF`)."""
    out: list = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        m = _REDIRECT.match(w)
        if m and not w.startswith(("'", '"')):
            skip = not m.group(3)   # `> file` written as two words
            continue
        out.append(w)
    return out


_RUNS_ARGS = re.compile(r'(^|[\s;])(exec\s+)?"?\$[@*]"?(\s|$)', re.M)
# "$@" as the command (`exec "$@"`) or as python's program (`python3 -u "$@"`): the
# wrapper's first argument is then the program it runs
_RUNS_PROGRAM = re.compile(r'(^|[;&|(]|\b(then|do|exec|srun|time|env))\s*((\S*/)?python'
                           r'[\d.]*(\s+-[A-Za-z]+)*\s+)?"?\$\{?[@*]\}?"?(?=[\s;&|)]|$)', re.M)
_ALL_ARGS = {"$@", "${@}", "$*", "${*}"}


def _wrapper_script(ctx: _Ctx, word: str) -> Optional[SbatchScript]:
    """A repo shell script run as a command (`./run.sh`, `scripts/env.sh python x.py`)."""
    if not word.endswith((".sh", ".bash")) or "$" in word:
        return None
    if _written(ctx, word) is not None:
        return _written(ctx, word)
    path = _resolve_path(ctx, word)
    return None if path is None else _read(ctx, path)


def _shell(words: list, state: EnvState, ctx: _Ctx, steps: list, script: SbatchScript,
           line: int, doc: Optional[HereDoc] = None) -> None:
    """`bash [-opts] FILE args` runs an inner script; `bash -c '...'`, `bash -xc "$CMD"`
    its commands (a variable's value, as the shell expands it); `bash <<EOF`, `bash -s`
    the here-document it reads."""
    i, code, stdin = 0, False, False
    while i < len(words):
        w = word_of(words[i], state)
        if w in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):   # take a value
            i += 2
            continue
        if w in ("--", "-"):
            stdin = w == "-"
            i += 1
            break
        if not w.startswith(("-", "+")):
            break
        # one-letter options go together: `bash -lc CODE`, `sh -ec CODE`, `bash -l -c`
        # (`--login` and the other long options are skipped as flags)
        short = w[0] == "-" and not w.startswith("--")
        code |= short and "c" in w[1:]
        stdin |= short and "s" in w[1:]
        i += 2 if short and w[-1] in "oO" else 1    # `-eo pipefail`: -o takes a value
    if ctx.depth >= MAX_DEPTH:
        return
    sub = replace(ctx, depth=ctx.depth + 1, outer=_plus_shell(ctx, state))
    if code:   # the first word after the options is the code (the rest: $0, $1 ...)
        if i < len(words):
            text = word_of(words[i], state)
            snippet = SbatchScript(path=script.path, rel=script.rel, text=text)
            snippet.commands = _commands_at(text, line)
            _walk_commands(snippet, state.child(), sub, steps, "inner")
        return
    if doc is not None and (stdin or i >= len(words)):
        _walk_commands(_here_script(script, doc, state), state.child(), sub, steps, "inner")
        return
    if i >= len(words):
        return
    inner = _script_named(ctx, state, words[i], script, line)
    if inner is not None:
        sub = replace(ctx, scripts=_plus(ctx.scripts, inner), depth=ctx.depth + 1)
        child = state.child()
        # `bash scripts/x.sh`: $0 is the path as given, relative to the shell's directory
        _own_path(child, expand(words[i], state.lookup, in_job=state.in_job).text
                  if inner is not ctx.batch or not ctx.batch.directives else SPOOL_SCRIPT)
        _walk(inner, child, sub, steps, "inner")


def _plus_shell(ctx: _Ctx, state: EnvState) -> tuple:
    """ctx.outer and the shell that expands the words `state` reads."""
    shell = state.shell or state
    return ctx.outer if any(s is shell for s in ctx.outer) else ctx.outer + (shell,)


def _here_document(ctx: _Ctx, script: SbatchScript, index: int, cmd: Any) -> Optional[HereDoc]:
    """The here-document the index-th command of the script reads (the first, when it
    reads several); its line moved as the command's is (a `bash -c` snippet's commands
    all stand at the line that runs it)."""
    memo = ctx.budget.heredocs
    if script.text not in memo:
        docs: list = []
        memo[script.text] = (split_commands(script.text, heredocs=docs), docs)
    split, docs = memo[script.text]
    doc = next((d for d in docs if d.command == index), None)
    if doc is None or len(split) != len(script.commands):
        return None
    return replace(doc, line=doc.line + cmd.line - split[index][0])


def _here_script(script: SbatchScript, doc: HereDoc, state: EnvState) -> SbatchScript:
    """A here-document as the script that `sbatch` or `bash` reads: expanded by the shell
    that feeds it unless its delimiter is quoted (`<<'EOF'`); its #SBATCH lines and
    commands at their lines in the file. Each body line is expanded alone, so that a
    value holding newlines (TRAINING_CMD="cd x;\n python train.py") keeps the lines
    after it where they are."""
    lines = doc.body.splitlines(keepends=True)
    if not doc.quoted:
        lines = [expand_here_document(t, state.lookup, state.in_job).text for t in lines]
    at: list = []   # the body line each line of the expanded text starts on
    start: Optional[int] = None
    for k, t in enumerate(lines):
        start = doc.line + k if start is None else start   # (after a `\` continuation)
        newlines = t.count("\n")
        if newlines:
            at += [start] + [doc.line + k] * (newlines - 1)
            start = None
    text = "".join(lines)

    def where(n: int) -> int:   # a line of the expanded text → the file's line
        return at[min(n, len(at)) - 1] if at else doc.line

    body = parse_sbatch(text, script.path, script.rel)
    body.directives = [replace(d, line=where(d.line)) for d in body.directives]
    body.commands = [Command(where(c.line), c.words) for c in body.commands]
    return body


def _commands_at(code: str, line: int) -> list:
    from doctor.job.sbatch import Command

    return [Command(line, tuple(ws)) for _, ws in split_commands(code)]


def _script_named(ctx: _Ctx, state: EnvState, raw: str, script: SbatchScript,
                  line: int) -> Optional[SbatchScript]:
    """The repo script a word names (through variables), or None with a note."""
    res = expand(raw, state.lookup, in_job=state.in_job)
    if res.resolved and _written(ctx, res.text) is not None:
        return _written(ctx, res.text)
    path = _resolve_path(ctx, res.text) if res.resolved or "/" in res.text else None
    if path is None:
        path = _by_tail(ctx, _tail(res.text))
    if path is None:
        if not res.resolved:
            state.notes.append(f"{script.rel}:{line}: {raw} names a script the doctor cannot "
                               f"resolve ({', '.join(res.unresolved)}); not followed")
        return None
    return _read(ctx, path)


def _plus(scripts: tuple, script: SbatchScript) -> tuple:
    """`scripts` and `script`, once: a file sourced 10,000 times is one script read
    (and the tuple, copied for each, stays short). A script the job wrote with a
    here-document is text of a script already there (its lines are that file's)."""
    if getattr(script, "written_by_job", False):
        return scripts
    return scripts if script in scripts else scripts + (script,)


def _read(ctx: _Ctx, path: Path) -> Optional[SbatchScript]:
    """The script at `path`, read once per walk; None when it cannot be (not a regular
    file, too large, binary)."""
    key = fs.realpath(path)
    loaded = ctx.budget.loaded
    if key not in loaded:
        try:
            loaded[key] = load_sbatch(path, ctx.job.rel(path))
            note_unread(ctx.job, loaded[key])
        except InputError:
            loaded[key] = None
    return loaded[key]


def note_unread(job: Any, script: SbatchScript) -> None:
    """The lines of a long script the doctor did not read, in the report (facts.unreadable)."""
    if script.unread:
        _note(job, script.path, script.unread)


def _note(job: Any, path: Any, text: str) -> None:
    # facts.unreadable, which every format shows: errno 0, the text is the reason
    job.unreadable.note(path, OSError(0, text))


def _resolve_path(ctx: _Ctx, text: str) -> Optional[Path]:
    if not text or "$" in text:
        return _by_tail(ctx, _tail(text)) if text else None
    p = Path(os.path.expanduser(text))
    cands = [p] if p.is_absolute() else [Path(ctx.cwd) / p] if ctx.cwd and \
        os.path.isabs(ctx.cwd) else []
    cands += [ctx.job.repo / p] if not p.is_absolute() else []
    for c in cands:
        if fs.is_file(c, ctx.job.unreadable):
            return c
    return _by_tail(ctx, text.lstrip("/"))


def _tail(text: str) -> str:
    """What follows the last unresolved variable: `$CODE_DIR/slurm/x.sh` → slurm/x.sh."""
    return re.split(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", text)[-1].lstrip("/")


def _by_tail(ctx: _Ctx, tail: str) -> Optional[Path]:
    """A repo file whose path ends with tail (a container's /workspace/slurm/x.sh)."""
    if not tail or "$" in tail:
        return None
    files = ctx.job.memo("shell_files", lambda: {p: ctx.job.rel(p) for p in ctx.job.repo_files(
        {".sh", ".bash", ".slurm", ".sbatch", ".job", ".env", ""}, whole=True)})
    hits = [p for p, rel in files.items() if rel == tail or tail.endswith("/" + rel)
            or rel.endswith("/" + tail)]
    return hits[0] if len(hits) == 1 or (hits and all(h == hits[0] for h in hits)) else None


def _repo_file(ctx: _Ctx, word: str) -> bool:
    """A repo file the word names: resolved, or (`$REPO/tools/hub-sync.py`, run as a
    program by its shebang) a repo file (in a directory) whose path and what follows
    the variable the doctor does not know end alike."""
    if _resolve_path(ctx, word) is not None:   # (it looks under the repo too)
        return True
    tail = _tail(word) if "$" in word else ""
    if not tail or "$" in tail:
        return False
    # (`$WORK/code/bigscience/tools/hub-sync.py`: the repo's checkout on the cluster)
    return any(r == tail or tail.endswith("/" + r) and "/" in r or r.endswith("/" + tail)
               for r in ctx.job.every_rel_set())


# ---- launchers -----------------------------------------------------------


_PWD_PREFIX = re.compile(r"^(`pwd`|\$\(pwd\)|\$PWD|\$\{PWD\})/+")


def _step(script: SbatchScript, line: int, words: list, state: EnvState, ctx: _Ctx,
          chain: tuple, counts: dict, container: Optional[Launcher]) -> Step:
    argv = [word_of(w, state) for w in words]
    entry: Optional[str] = None
    is_module = False
    args: tuple = ()
    i = 1 if PYTHON.match(os.path.basename(argv[0])) else 0
    while i < len(argv):
        w = argv[i]
        if w == "-m" and i + 1 < len(argv):
            entry, is_module, args = argv[i + 1], True, tuple(words[i + 2:])
            break
        if w == "-c":
            break
        if w in ("-X", "-W", "-Q") and i + 1 < len(argv):
            i += 2
            continue
        if w.startswith("-"):
            i += 1
            continue
        # `` `pwd`/pretrain_gpt.py `` where the directory is unknown: relative to the
        # step's working directory, which is what a relative entry means
        entry, args = _PWD_PREFIX.sub("", w), tuple(words[i + 1:])
        break
    if (ctx.wrapped or ctx.batch is not None and ctx.batch.directives) and \
            not {x.kind for x in chain} & {"srun", "mpirun", "deepspeed"}:
        # Not under srun: Slurm runs the batch script once, on the job's first node, so
        # the program starts once there whatever --nodes/--ntasks-per-node say.
        once = f"{script.rel}:{line} (the batch step: once, on the first node)"
        counts = {k: v for k, v in counts.items() if k != "ntasks"}
        counts.update(nodes=Count(1, once), tasks_per_node=Count(1, once))
    chain = chain + (Launcher("python", tuple(argv), script.rel, line),)
    env = state.env()
    step = Step(ctx.batch, script, line, chain, tuple(argv), entry, is_module,
                tuple(word_of(a, state) for a in args), env, ctx.scripts, **_counts(counts),
                container=container, cwd=_chdir(chain, ctx.cwd), notes=list(state.notes),
                job_script=ctx.job_script or ctx.batch)
    if ctx.cwd_unknown and (step.cwd == ctx.cwd or not os.path.isabs(step.cwd or "")):
        step.cwd_unknown = ctx.cwd_unknown   # (an `srun --chdir=/abs` knows it again)
    if entry is not None and not is_module:
        _unknown_directory(step, state, ctx)
    return step


def _unknown_directory(step: Step, state: EnvState, ctx: _Ctx) -> None:
    """`python ${MEGATRON_PATH}/pretrain_gpt.py` where the script sets MEGATRON_PATH to a
    directory this checkout does not have (`your_own_megatron_path`, the cluster's
    checkout): the entry is `${MEGATRON_PATH}/pretrain_gpt.py`, a directory the doctor
    cannot see, as when the variable is unset; the code checks then take the repo file
    its tail names, as a guess (closure.entries). The variable is found by its value,
    also when it came in through another variable (TRAINING_CMD="python $DIR/x.py")
    or an unquoted here-document; only values a script sets count."""
    entry = step.entry or ""
    if not entry.endswith(".py") or "$" in entry or ctx.job.entry_file(step) is not None:
        return
    best: Optional[EnvValue] = None
    for shell in (state, state.shell, *ctx.outer):
        for v in shell.values.values() if shell is not None else ():
            d = v.value.rstrip("/")
            if v.path is not None and d not in ("", ".", "..") and \
                    entry.startswith(d + "/") and (best is None or len(d) > len(best.value)):
                best = v
    if best is None:
        return
    rest = entry[len(best.value.rstrip("/")) + 1:]
    parts = rest.split("/")
    if not any("/".join(parts[k:]) in ctx.job.every_rel_set() for k in range(len(parts))):
        return
    step.entry = f"${{{best.name}}}/{rest}"
    step.notes.append(f"{step.where}: runs {entry}, in {best.name}={best.value} "
                      f"({best.where()}), which is not a directory of this checkout: read as "
                      f"{step.entry}, a checkout the doctor cannot see")


def _chdir(chain: tuple, cwd: Optional[str]) -> Optional[str]:
    """The step's working directory: the shell's, changed by srun's -D/--chdir (a
    relative one from the shell's)."""
    for launcher in chain:
        if launcher.kind != "srun":
            continue
        argv = launcher.argv
        for i, w in enumerate(argv):
            d = argv[i + 1] if w in ("-D", "--chdir") and i + 1 < len(argv) else \
                w[len("--chdir="):] if w.startswith("--chdir=") else \
                w[2:] if w.startswith("-D") and len(w) > 2 else None
            if d is not None:
                cwd = os.path.normpath(os.path.join(cwd, d)) if cwd and "$" not in d else \
                    None if "$" in d else d
    return cwd
