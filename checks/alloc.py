"""The caching allocator's settings on ROCm jobs."""
from __future__ import annotations

import ast
import re
import shlex
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, edits
from doctor.job.closure import step_files
from doctor.job.context import Job
from doctor.job.env import env_location, followed_env
from doctor.job.launch import scripts_or_none
from doctor.job.cluster import asks_gpus
from doctor.job.platform import platform_of
from doctor.job.sources import dotted, tree_of
from doctor.model import script_fix

# The order c10's CUDAAllocatorConfig reads them on a ROCm build: the first one
# set (even to "") wins. PYTORCH_ALLOC_CONF is the newest name; one release
# read it first, current sources read it last (c10/cuda/CUDAAllocatorConfig.h).
ORDER = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
WANT = "expandable_segments:True"
ROCM_SINCE = (2, 3)   # pytorch#121885: expandable segments through HIP's VMM API


def _expandable(value: str) -> Optional[bool]:
    m = re.search(r"expandable_segments\s*:\s*(\w+)", value)
    return None if not m else m.group(1) == "True"


@check("hip-alloc-conf", title="The ROCm caching allocator runs without expandable segments",
       severity="warning", tags=("rocm", "memory", "env"), needs=("sbatch",), timeout=10)
def hip_alloc_conf(job: Job) -> Iterator[Finding]:
    """On ROCm jobs, PYTORCH_HIP_ALLOC_CONF lacks expandable_segments or is shadowed.

    Reads the job's effective environment (login environment + job script +
    the scripts it runs). torch reads PYTORCH_CUDA_ALLOC_CONF first, then (on
    ROCm builds) PYTORCH_HIP_ALLOC_CONF, then PYTORCH_ALLOC_CONF — the first
    one set wins, even when it is set to an empty string.

    Only PyTorch reads these variables: a job whose training step runs an entry of
    the repo that, with the repo modules it imports, imports neither torch nor a
    package built on it (Lightning, transformers, ...), and that no torch launcher
    (torchrun, accelerate, deepspeed) starts, is skipped, saying so (a TensorFlow job
    in a ROCm container). A job whose entry the doctor cannot read is judged. So is a
    job that asks for no GPU only where its partition's nodes may have GPUs: a CPU job
    that runs the ROCm PyTorch image for Python alone has no GPU allocator, and is
    skipped, saying so.

    ## Why it matters
    Without `expandable_segments:True` the allocator fragments on MI250X and
    a job that needs ~55 GB of a 64 GB GCD fails with `OutOfMemoryError` at
    ~40 GB. Two variables with different values means one is silently
    ignored, and which one depends on the torch version. torch builds before
    2.3 do not implement expandable segments on ROCm at all.

    ## How to fix
    Set exactly one variable, with the option, in the job script (or the
    script run inside the container): `export PYTORCH_HIP_ALLOC_CONF=expandable_segments:True`,
    and unset the others. On torch < 2.3 upgrade torch (e.g. a newer LUMI
    container) to get the option.
    `doctor fix` adds the option to the value where the job sets it (or the export
    after the `#SBATCH` lines) and removes the variables torch ignores.
    """
    reasons = []
    not_judged = []
    for script in scripts_or_none(job):
        env, _ = followed_env(job, script)
        platform = platform_of(job, script)
        if not platform.is_rocm:
            continue
        if script is not None and asks_gpus(job, script) is False:
            # a CPU job that runs the ROCm image for Python only: no GPU, no allocator
            not_judged.append(f"{script.rel} asks for no GPU (no --gpus*, --gres=gpu) on a "
                             "partition without GPUs: no GPU caching allocator runs")
            continue
        other = _not_pytorch(job, script)
        if other is not None:   # a TensorFlow job in a ROCm container reads no such variable
            not_judged.append(other)
            continue
        why = platform.why
        reasons.append(why)
        where = script.rel if script else "the login environment"
        set_ = [env[n] for n in ORDER if n in env]
        data = {"variables": {v.name: v.value for v in set_}, "rocm": why}
        if len({v.value for v in set_}) > 1:
            win, lose = set_[0], set_[1:]
            names = [v.name for v in set_]
            keep = "PYTORCH_HIP_ALLOC_CONF" if "PYTORCH_HIP_ALLOC_CONF" in names else win.name
            yield Finding(
                f"{', '.join(f'{v.name}={v.value!r}' for v in set_)} are all set for {where}: "
                f"torch uses {win.name} ({win.where()}) and ignores "
                f"{', '.join(v.name for v in lose)}",
                location=env_location(win), fix="Keep one allocator variable; unset the others.",
                commands=tuple(f"unset {v.name}" for v in set_ if v.name != keep),
                options=script_fix(_drop_losers(job, lose),
                               *(f"unset {v.name}" for v in set_ if v.name != keep)),
                data=dict(data, kind="conflict"), edits=_drop_losers(job, lose),
                # precision rule: an unresolved part may make the values equal after all
                severity=Severity.WARNING if any(v.unresolved for v in set_)
                else Severity.ERROR)
        win = set_[0] if set_ else None
        value = win.value if win else ""
        tv = job.torch_release
        if win is None or _expandable(value) is not True:
            new = f"{value},{WANT}" if value and "expandable_segments" not in value else WANT
            yield Finding(
                f"ROCm job ({why}) without {WANT} in "
                f"{win.name + '=' + repr(value) if win else 'its allocator settings'} "
                f"for {where}: expect OOM well below the GPU's memory from fragmentation",
                location=env_location(win) or (Location(script.rel) if script else None),
                fix="Enable expandable segments in the job script.",
                commands=(f"export PYTORCH_HIP_ALLOC_CONF={shlex.quote(new)}",),
                options=script_fix(_expand(job, script, win),
                               f"export PYTORCH_HIP_ALLOC_CONF={shlex.quote(new)}",
                               file=script.rel if script else None),
                data=dict(data, kind="missing"), edits=_expand(job, script, win))
        elif tv and tv < ROCM_SINCE:
            yield Finding(
                f"{win.name} asks for expandable_segments, but torch {job.torch_version} "
                "predates expandable segments on ROCm (2.3): the option does nothing",
                location=env_location(win), fix="Use a torch >= 2.3 ROCm build.",
                data=dict(data, kind="no-op", torch_version=job.torch_version))
    if not reasons and not_judged:
        raise Skip("; ".join(not_judged))
    if not reasons:
        raise Skip("not a ROCm job (no HIP torch build, /dev/kfd, ROCm container or "
                   "ROCm-only variables in the job's steps; or NVIDIA signs outweigh them)")


# Launchers that run a PyTorch program, and packages that run on PyTorch: a job that
# imports one of them uses torch's caching allocator.
TORCH_LAUNCHERS = ("torchrun", "accelerate", "deepspeed")
ON_TORCH = frozenset({"torch", "torchvision", "torchaudio", "torchtext", "lightning",
                      "pytorch_lightning", "lightning_fabric", "accelerate", "deepspeed",
                      "transformers", "timm", "torch_geometric", "fairseq", "apex"})
OTHER_FRAMEWORKS = ("tensorflow", "keras", "jax", "flax", "paddle", "mxnet")


def _not_pytorch(job: Job, script) -> Optional[str]:
    """Why the script's training step runs no PyTorch (one line), or None when it does or
    may: only PyTorch reads PYTORCH_HIP_ALLOC_CONF. It runs none when its entry is a file
    of the repo and neither the entry nor the repo modules it imports (any import, a
    function's too) import torch or a package built on it, and no torch launcher starts
    it. An entry the doctor cannot read (outside the repo, a variable) may be PyTorch."""
    step = job.step(script)
    if any(launcher.kind in TORCH_LAUNCHERS for launcher in step.chain):
        return None
    files = step_files(job, step)
    if not files:
        return None
    tops: set = set()
    for path in files:
        tree = tree_of(job, path)
        if tree is None:
            return None   # a file the doctor cannot read may import torch
        tops |= _imported_tops(tree)
    if tops & ON_TORCH:
        return None
    others = [f for f in OTHER_FRAMEWORKS if f in tops]
    n = len(files) - 1
    what = f"{job.rel(files[0])}, which imports" if not n else \
        f"{job.rel(files[0])} and {n} repo module{'s' if n > 1 else ''} it imports, which import"
    return (f"{step.where} runs {what} no PyTorch"
            f"{' (' + ', '.join(others) + ' instead)' if others else ''}: "
            "PYTORCH_HIP_ALLOC_CONF is read by PyTorch only")


def _imported_tops(tree: ast.AST) -> set:
    """The top-level names of every absolute import in the tree."""
    out: set = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and dotted(node.func) in (
                "importlib.import_module", "import_module", "__import__") and node.args \
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            out.add(node.args[0].value.split(".")[0])
    return out


# ---- the edits (`doctor fix`) -------------------------------------------------
def _assignment(job: Job, v) -> Optional[tuple]:
    """(lines, start, shell_word) of the value of `[export] NAME=value` on the line where
    `v` is set, in a file the user owns; None when the line has the name more than once,
    the value is not plain text, or it is not what the doctor read."""
    if v is None or not v.line or not edits.owned(job, v.path):
        return None
    lines = edits.read_lines(job, v.path)
    if not lines or v.line > len(lines):
        return None
    body = lines[v.line - 1].rstrip("\r\n")
    hits = list(re.finditer(r"(?<![\w$]){}=".format(v.name), body))
    # a shell assignment, not a comma list (srun --export, apptainer --env split on commas)
    if len(hits) != 1 or v.unresolved or \
            not re.fullmatch(r"\s*(export\s+)?", body[:hits[0].start()]):
        return None
    word = edits.shell_word(body, hits[0].end())
    if word is None or word[1] != v.value:
        return None
    return lines, hits[0].end(), word


def _expand(job: Job, script, win) -> tuple:
    """`expandable_segments:True` into the winning variable's value where it is set (the
    option replaced if present, else appended after a comma, inside the quotes), or a
    new export after the job script's #SBATCH lines when no variable is set."""
    if win is None:
        if not edits.owned(job, script.rel if script else None) or \
                not edits.exports_reach_step(job, script):
            return ()
        line = f"export PYTORCH_HIP_ALLOC_CONF={WANT}"
        edit = edits.insert_after_header(job, script.rel, [line], line)
        return (edit,) if edit else ()
    found = _assignment(job, win)
    if found is None:
        return ()
    lines, start, (end, value, at) = found
    body = lines[win.line - 1].rstrip("\r\n")
    m = re.search(r"expandable_segments\s*:\s*\w+", value)
    if m:
        first, last = at[m.start()], at[m.end() - 1]
        if last - first != m.end() - m.start() - 1:
            return ()  # the option is split by quotes or escapes
        new = body[:first] + WANT + body[last + 1:]
    else:
        pos = at[len(value)] if not value else at[len(value) - 1] + 1
        new = body[:pos] + ("," if value else "") + WANT + body[pos:]
    word = edits.shell_word(new, start)
    want = value[:m.start()] + WANT + value[m.end():] if m else \
        (value + "," if value else "") + WANT
    if word is None or word[1] != want:
        return ()
    edit = edits.replace_line(job, win.path, win.line, new, f"add {WANT} to {win.name}")
    return (edit,) if edit else ()


def _drop_losers(job: Job, lose: list) -> tuple:
    """Delete the lines that set the variables torch ignores (it reads only the first one
    set): nothing the job does changes. Only lines that are just `[export] NAME=value`,
    and never PYTORCH_ALLOC_CONF: one torch release read it first."""
    out = []
    for v in lose:
        found = _assignment(job, v) if v.name != "PYTORCH_ALLOC_CONF" else None
        if found is None:
            return ()
        lines, start, (end, _, _) = found
        if lines[v.line - 1].rstrip("\r\n")[end:].strip():
            return ()
        edit = edits.delete_lines(job, v.path, v.line, v.line,
                                  f"remove {v.name}, which torch ignores")
        if edit is None:
            return ()
        out.append(edit)
    return tuple(out)
