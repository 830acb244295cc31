"""The caching allocator's settings on ROCm jobs."""
from __future__ import annotations

import re
import shlex
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.context import Job
from doctor.job.env import env_location, followed_env
from doctor.job.launch import scripts_or_none
from doctor.job.platform import platform_of

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
    """
    reasons = []
    for script in scripts_or_none(job):
        env, _ = followed_env(job, script)
        platform = platform_of(job, script)
        if not platform.is_rocm:
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
                data=dict(data, kind="conflict"),
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
                data=dict(data, kind="missing"))
        elif tv and tv < ROCM_SINCE:
            yield Finding(
                f"{win.name} asks for expandable_segments, but torch {job.torch_version} "
                "predates expandable segments on ROCm (2.3): the option does nothing",
                location=env_location(win), fix="Use a torch >= 2.3 ROCm build.",
                data=dict(data, kind="no-op", torch_version=job.torch_version))
    if not reasons:
        raise Skip("not a ROCm job (no HIP torch build, /dev/kfd, ROCm container or "
                   "ROCm-only variables in the job's steps; or NVIDIA signs outweigh them)")
