"""Is this a ROCm job? Shared by the ROCm-only checks (DESIGN.md §6)."""
from __future__ import annotations

from typing import Optional


def is_rocm_job(job, script: Optional[object] = None) -> Optional[str]:
    """Why this job is a ROCm job (a HIP torch build, /dev/kfd, MIOPEN_* set), or None."""
    env = job.job_env(script)
    miopen = sorted(k for k in env if k.startswith("MIOPEN_"))
    if miopen:
        return f"{miopen[0]} is set"
    if job.static:
        return None  # the CI gate reads no live node facts
    build = job.fact("torch_build") or {}
    if build.get("hip"):
        return f"torch is a HIP build ({build.get('version')})"
    if (job.fact("devices") or {}).get("kfd"):
        return "/dev/kfd is present"
    return None
