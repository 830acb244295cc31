"""Checkpoints and outputs written to node-local storage by a job that outlives its node."""
from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.sbatch import slurm_minutes
from doctor.job.assigned import Values
from doctor.job.closure import step_files
from doctor.job.context import Job
from doctor.job.sbatch import SbatchScript
from doctor.job.sources import tree_of
from doctor.job.stepconfigs import step_configs

CHECK = "checkpoint-on-local-tmp"
# Node-local unless the site profile says otherwise (site.local_paths).
LOCAL_DEFAULT = ("/tmp", "/var/tmp", "/dev/shm")
# Variables that name node-local storage: True where that is what the variable is for
# (Alliance's $SLURM_TMPDIR), False where a site may point it elsewhere.
LOCAL_VARS = {"SLURM_TMPDIR": True, "TMPDIR": False, "LOCAL_SCRATCH": False,
              "LOCAL_SCRATCH_DIR": False, "TMP": False, "TEMP": False, "TEMPDIR": False}
# Option and key names (lower case, `-` read as `_`) that name where the job writes its
# checkpoints or outputs, or resumes from.
OUT_NAMES = {"save", "load", "output", "output_dir", "output_path", "outdir", "out_dir",
             "output_folder", "save_dir", "save_path", "save_folder", "save_to",
             "checkpoint", "checkpoint_dir", "checkpoint_path", "checkpoints_dir",
             "checkpoint_folder", "ckpt", "ckpt_dir", "ckpt_path", "checkpointing_dir",
             "default_root_dir", "dirpath", "resume", "resume_from", "resume_dir",
             "resume_from_checkpoint", "resume_path", "snapshot_dir", "work_dir",
             "exp_dir", "experiment_dir", "run_dir", "results_dir", "result_dir",
             "model_save_path", "model_save_dir"}
# Python keywords that name a checkpoint or output directory (ModelCheckpoint(dirpath=),
# Trainer(default_root_dir=), TrainingArguments(output_dir=) ...).
CODE_KEYWORDS = {"dirpath", "default_root_dir", "output_dir", "save_dir", "checkpoint_dir",
                 "ckpt_dir", "save_path", "checkpoint_path", "save_folder"}
# Names of a path the job reads to resume or start from: one the job script copies to
# node-local storage before the step (staging a checkpoint for speed) is made anew by
# every run, requeued or not.
READ_NAMES = {"load", "resume", "resume_from", "resume_dir", "resume_from_checkpoint",
              "resume_path", "ckpt_path", "pretrained", "init_from"}
# Commands that copy a directory back to shared storage after the step.
COPIES = {"cp", "rsync", "mv", "tar", "scp", "rclone"}
BIND_FLAGS = {"-B", "--bind", "-v", "--volume", "--container-mounts", "--mount"}
DAY_MINUTES = 24 * 60


@dataclass(frozen=True)
class Risk:
    why: list         # "job.sbatch:3 (#SBATCH --requeue)", "2 nodes, job.sbatch:2 (…)"


@dataclass(frozen=True)
class Output:
    written: str      # the path as the job names it (expanded where the doctor could)
    how: str          # "`--output_dir` of the step at job.sbatch:9"
    location: Location
    root: str         # the node-local root it is under: /tmp, $SLURM_TMPDIR ...
    proven: bool      # the root is node-local for sure (a literal path, $SLURM_TMPDIR)
    step_line: int    # the line of the step that writes it (for the copy-back search)
    step_rel: str = ""   # the script that holds that step


@check(CHECK, title="Checkpoints or outputs written to node-local storage by a job that "
       "requeues, runs for days or spans nodes", severity="error",
       tags=("slurm", "checkpoint"), needs=("sbatch", "configs"), timeout=30)
def checkpoint_on_local_tmp(job: Job) -> Iterator[Finding]:
    """The job saves its checkpoints or outputs under node-local storage it cannot keep.

    A job is at risk when it is requeued (`#SBATCH --requeue`: a preempted or failed
    node puts it back in the queue, and it restarts on other nodes), runs for more
    than a day (`--time` over 24 h: long jobs are the ones that get preempted, and
    nothing of /tmp survives the job), or spans several nodes (`--nodes` > 1, or the
    node count of a step or of an `sbatch <<EOF` batch script: rank 0's /tmp is not the
    other nodes'); an `sbatch <<EOF` body's own `#SBATCH --requeue` and `--time` count
    as the submitted script's. Its output, checkpoint and resume paths are read where the job sets
    them: the training step's options and `key=value` overrides (`--save`, `--load`,
    `--output_dir`, `--checkpoint_dir`, `--save_dir`, `trainer.default_root_dir=`,
    `hydra.run.dir=` ...), the keys of the configs the step reads, and the code the
    step runs (`ModelCheckpoint(dirpath=…)`, `Trainer(default_root_dir=…)`,
    `TrainingArguments(output_dir=…)`, `torch.save(…, PATH)`, an argparse default the
    step does not override), each with the script's variables expanded. A path is
    node-local when it is under the site profile's `local_paths` (default /tmp,
    /var/tmp, /dev/shm) or `$SLURM_TMPDIR`: an error; under `$TMPDIR` or
    `$LOCAL_SCRATCH`, whose value the job script does not set: a warning (node-local
    on most clusters, but the doctor cannot see it). A `./tmp` of the working directory
    is no node-local path. A container bind onto the path (`-B /scratch/x:/tmp`) takes it
    off node-local storage. A checkpoint the step only reads (`--load`, `--resume_from`)
    that the job script copies onto the node before the step (`cp`, `rsync`, `tar -C`)
    is staged anew by every run, requeued or not: not a finding. A job script that
    copies the directory back after the step (`cp -r`, `rsync`, `mv` from it) keeps
    the last result of a job that ends normally, so that is a warning: a requeued or
    preempted job never reaches the copy.

    ## Why it matters
    Node-local storage is wiped when the job ends (or is another node's after a
    requeue): the job that resumes finds no checkpoint and starts from step 0, days of
    training are lost when the time limit or a preemption ends the job, and with
    several nodes a sharded checkpoint is spread over disks no single node can read.
    Nothing fails at the time: the loss shows only when the job restarts.

    ## How to fix
    Write checkpoints to shared storage (the project's scratch or work directory),
    e.g. `--output_dir /scratch/$USER/runs/$SLURM_JOB_ID`, or keep node-local storage
    for temporary files only. If writing locally is needed for speed, copy each
    checkpoint to shared storage as it is written (not only at the end of the job),
    and resume from the shared copy.
    """
    if not job.scripts:
        raise Skip("no job script")
    for script in job.scripts:
        risk = _risk(job, script)
        if risk is None:
            continue
        seen: set = set()
        for out in _outputs(job, script):
            if out.written in seen:
                continue
            seen.add(out.written)
            yield _finding(job, script, risk, out)


# ---- the job's risk -----------------------------------------------------------------
def _risk(job: Job, script: SbatchScript) -> Optional[Risk]:
    why: list = []
    # the submitted script's #SBATCH lines, and those of each `sbatch <<EOF` body it
    # submits (a job of its own: Step.job_script)
    jobs = [script]
    for s in job.steps(script):
        if s.job_script is not None and all(s.job_script is not j for j in jobs):
            jobs.append(s.job_script)
    for src in jobs:
        d = src.get("requeue", "no-requeue")
        if d is not None and d.key == "requeue":
            why.append(src.where(d))
        t = src.get("time")
        if t is not None and t.value:
            try:
                minutes = slurm_minutes(t.value)
            except ValueError:
                minutes = 0.0
            if minutes is None or minutes > DAY_MINUTES:
                why.append(f"a time limit over a day, {src.where(t)}")
    nodes = job.nodes(script)
    n = script.get("nodes")
    if nodes and nodes > 1:
        why.append(f"{nodes} nodes, {script.where(n)}" if n is not None else f"{nodes} nodes")
    else:   # a count the steps know (srun -N, an `sbatch <<EOF` batch script's own lines)
        counts = [s.nodes for s in job.steps(script) if (s.nodes.value or 0) > 1]
        if counts:
            why.append(f"{counts[0].value} nodes ({counts[0].source})")
    return Risk(why) if why else None


# ---- where the job writes -----------------------------------------------------------
def _norm(name: str) -> str:
    return name.lstrip("-").lower().replace("-", "_")


def is_output_name(name: str) -> bool:
    """An option or key that names where the job writes checkpoints/outputs or resumes."""
    full = _norm(name)
    if full.endswith(("hydra.run.dir", "hydra.sweep.dir")):
        return True   # Hydra's output directory (the run's checkpoints go under it)
    n = full.rsplit(".", 1)[-1]
    return n in OUT_NAMES or n.endswith(("_output_dir", "_save_dir", "_checkpoint_dir",
                                         "_ckpt_dir", "_checkpoint_path"))


def local_root(job: Job, value: str) -> Optional[tuple]:
    """(the node-local root, proven) a path value is under; None when it is not (or the
    doctor cannot tell: an unknown variable, a relative path)."""
    v = value.strip().strip("'\"")
    m = re.match(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::?[-=][^}]*)?\}?(/|$)", v)
    if m:
        name = m.group(1)
        return (f"${name}", LOCAL_VARS[name]) if name in LOCAL_VARS else None
    if not v.startswith("/"):
        return None
    path = posixpath.normpath(v)
    for root in (job.site.get("local_paths") or LOCAL_DEFAULT):
        root = str(root).rstrip("/") or "/"
        if root != "/" and (path == root or path.startswith(root + "/")):
            return root, True
    return None


def _bound(step, path: str) -> Optional[str]:
    """The host directory a container bind puts at `path` (None: no bind covers it)."""
    launcher = getattr(step, "container", None)
    if launcher is None:
        return None
    argv = list(launcher.argv)
    for i, word in enumerate(argv):
        key, eq, value = word.partition("=")
        if key not in BIND_FLAGS:
            continue
        if not eq:
            value = argv[i + 1] if i + 1 < len(argv) else ""
        for spec in value.split(","):
            src, _, rest = spec.strip().partition(":")
            dst = (rest.partition(":")[0] or src).rstrip("/")
            if dst and (path == dst or path.startswith(dst + "/")):
                return src
    return None


def _judged(job: Job, step, value: str) -> Optional[tuple]:
    root = local_root(job, value)
    if root is None:
        return None
    src = _bound(step, posixpath.normpath(value)) if value.startswith("/") else None
    if src is not None and local_root(job, src) is None:
        return None   # the container's /tmp is a bind of shared storage
    return root


def _outputs(job: Job, script: SbatchScript) -> Iterator[Output]:
    training = job.step(script)   # first: a path several steps name is shown at it
    for step in [training] + [s for s in job.steps(script) if s is not training]:
        if step.entry is None:
            continue
        where = f"{step.script.rel}:{step.line}"
        passed: set = set()
        args = list(step.args)
        for i, word in enumerate(args):
            name, eq, value = word.partition("=")
            if word.startswith("-") and not eq:
                nxt = args[i + 1] if i + 1 < len(args) else None
                if nxt is None or nxt.startswith("-"):
                    continue
                value = nxt
            elif not eq:
                continue
            if not is_output_name(name):
                continue
            passed.add(_norm(name))
            root = _judged(job, step, value)
            if root is None:
                continue
            out = Output(value, f"`{word if eq else f'{word} {value}'}` of the step at "
                         f"{where}", Location(step.script.rel, step.line), root[0], root[1],
                         step.line, step.script.rel)
            if _norm(name) in READ_NAMES and _copies(job, script, out, before=True):
                continue   # staged onto the node by the job itself, every run
            yield out
        yield from _config_outputs(job, script, step)
        yield from _code_outputs(job, step, passed)


def _config_outputs(job: Job, script: SbatchScript, step) -> Iterator[Output]:
    for cfg in step_configs(job, script).configs:
        for path, mapping in cfg.mappings():
            for key, value in mapping.items():
                if not isinstance(value, str) or not is_output_name(str(key)):
                    continue
                root = _judged(job, step, value)
                if root is None:
                    continue
                loc = cfg.location(mapping, key)
                dotted = ".".join(str(p) for p in (*path, key))
                at = f"{loc.path}:{loc.line}" if loc.line else loc.path
                yield Output(value, f"`{dotted}: {value}` at {at} (read by the step at "
                             f"{step.script.rel}:{step.line})", loc, root[0], root[1],
                             step.line, step.script.rel)


def _code_outputs(job: Job, step, passed: set) -> Iterator[Output]:
    for path in step_files(job, step):
        tree = tree_of(job, path)
        if tree is None:
            continue
        rel = job.rel(path)
        consts = _module_consts(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            found: list = []   # (value, what)
            for kw in node.keywords:
                if kw.arg in CODE_KEYWORDS:
                    found.append((_head(kw.value, consts), f"`{fname}({kw.arg}=…)`"))
            if fname == "save" and isinstance(func, ast.Attribute) and \
                    getattr(func.value, "id", "") == "torch" and len(node.args) > 1:
                found.append((_head(node.args[1], consts), "`torch.save(…, PATH)`"))
            if fname == "add_argument" and node.args:
                flags = [a.value for a in node.args if isinstance(a, ast.Constant)
                         and isinstance(a.value, str)]
                default = next((k.value for k in node.keywords if k.arg == "default"), None)
                if flags and default is not None and any(is_output_name(f) for f in flags) \
                        and not {_norm(f) for f in flags} & passed \
                        and all(f.startswith("-") for f in flags):
                    found.append((_head(default, consts),
                                  f"the default of `{flags[-1]}` (the step does not pass it)"))
            for value, what in found:
                if value is None:
                    continue
                root = _judged(job, step, value)
                if root is not None:
                    yield Output(value, f"{what} at {rel}:{node.lineno} (run by the step at "
                                 f"{step.script.rel}:{step.line})",
                                 Location(rel, node.lineno), root[0], root[1], step.line,
                                 step.script.rel)


def _module_consts(tree: ast.AST) -> dict:
    """Module-level names assigned once to a path expression: name → (head, complete)."""
    seen: dict = {}
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            seen.setdefault(node.targets[0].id, []).append(node.value)
    out: dict = {}
    for name, values in seen.items():
        if len(values) == 1:
            known = _known(values[0], out)
            if known is not None:
                out[name] = known
    return out


def _head(node: ast.AST, consts: dict) -> Optional[str]:
    known = _known(node, consts)
    return known[0] if known is not None else None


def _known(node: ast.AST, consts: dict) -> Optional[tuple]:
    """(the known beginning of a path expression, whether that is all of it): a literal,
    an f-string up to its first unknown part, `"/tmp/" + x`, os.path.join("/tmp", …),
    Path("/tmp") / …, a module constant."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value, True
    if isinstance(node, ast.Name):
        return consts.get(node.id)
    if isinstance(node, ast.JoinedStr):
        text = ""
        for part in node.values:
            piece = _known(part.value if isinstance(part, ast.FormattedValue) else part,
                           consts)
            if piece is None:
                return (text, False) if text else None
            text += piece[0]
            if not piece[1]:
                return text, False
        return text, True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Div)):
        left = _known(node.left, consts)
        if left is None:
            return None
        sep = "/" if isinstance(node.op, ast.Div) else ""
        if not left[1]:
            return left
        right = _known(node.right, consts)
        return (left[0] + sep + right[0], right[1]) if right else (left[0] + sep, False)
    if isinstance(node, ast.Call) and node.args:
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        if name in ("join", "Path", "PurePath", "PosixPath", "str", "expanduser",
                    "abspath", "realpath"):
            first = _known(node.args[0], consts)
            if first is None:
                return None
            if len(node.args) == 1 or not first[1]:
                return first
            return first[0].rstrip("/") + "/", False
    return None


# ---- the finding --------------------------------------------------------------------
def _copies(job: Job, script: SbatchScript, out: Output, before: bool) -> Optional[str]:
    """file:line of a `cp`/`rsync`/`mv`/`tar` of the job script that copies the output
    (or a directory above it, or a path under it) back after the step, or, `before`,
    onto it before the step (its destination, or `tar -C`)."""
    if out.step_rel and out.step_rel != script.rel:
        return None   # the step is in a sourced script: its lines are not this one's
    target = out.written if out.written.startswith("$") else posixpath.normpath(out.written)
    values = Values(script)
    for cmd in script.commands:
        if not cmd.argv or (cmd.line >= out.step_line if before else cmd.line <= out.step_line):
            continue
        if posixpath.basename(cmd.argv[0]) not in COPIES:
            continue
        words = [w for w in cmd.words[1:] if not w.startswith("-")]
        if before:
            chdir = [cmd.words[i + 1] for i, w in enumerate(cmd.words[:-1]) if w == "-C"]
            paths = chdir or words[-1:]
        else:
            paths = words[:-1] if len(words) > 1 else words
        for raw in paths:
            p = values.expand(raw, cmd.line).text.strip("'\"").rstrip("/")
            p = posixpath.normpath(p) if p.startswith("/") else p
            if p and (target == p or target.startswith(p + "/")
                      or p.startswith(target.rstrip("/") + "/")):
                return f"{script.rel}:{cmd.line}"
    return None


def _finding(job: Job, script: SbatchScript, risk: Risk, out: Output) -> Finding:
    copied = _copies(job, script, out, before=False)
    if out.root.startswith("$"):
        where = (f"{out.root}, node-local storage" if out.proven else
                 f"{out.root} (node-local on most clusters; the job script does not set it, "
                 "so the doctor cannot see its value)")
    else:
        source = "the site profile's local_paths" if job.site.get("local_paths") \
            else "node-local on compute nodes"
        where = f"{out.root} ({source})"
    severity = Severity.ERROR if out.proven and not copied else Severity.WARNING
    msg = (f"{out.how} writes {out.written} under {where}, in a job that outlives its "
           f"node's storage ({'; '.join(risk.why)}): the files are lost when the job ends "
           "or moves to other nodes, so a restart finds no checkpoint")
    if copied:
        msg += (f"; the copy at {copied} saves them only when the job reaches its end "
                "(not after a preemption, a requeue or the time limit)")
    shared = "/scratch/$USER/runs/$SLURM_JOB_ID"
    return Finding(
        msg, location=out.location,
        fix=f"Write it to shared storage instead (e.g. {shared} on the project's scratch "
            "or work filesystem), or copy every checkpoint there as it is written and "
            "resume from that copy.",
        data={"path": out.written, "local_root": out.root, "proven": out.proven,
              "risk": risk.why, "copied_back": copied},
        severity=severity)
