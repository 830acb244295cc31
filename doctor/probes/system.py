"""Kernel and package facts: where core dumps go, whether triton is installed.

Read from /proc and from package metadata only: nothing is imported or run.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from doctor.probes import probe

# Triton ships under several distribution names (upstream, PyTorch's pinned
# build, and the ROCm build).
TRITON_DISTS = ("triton", "pytorch-triton", "pytorch-triton-rocm", "triton-rocm")


def _read(path: str) -> Optional[str]:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return None


@probe("core_pattern")
def core_pattern(job) -> dict:
    """kernel.core_pattern and core_uses_pid (None when /proc cannot tell)."""
    pid = _read("/proc/sys/kernel/core_uses_pid")
    return {"pattern": _read("/proc/sys/kernel/core_pattern"),
            "uses_pid": pid == "1" if pid is not None else None}


@probe("triton")
def triton(job) -> dict:
    """{installed, version, dist} of the first triton distribution found."""
    from importlib import metadata   # here, not at import: 10 ms a static run does not need

    for dist in TRITON_DISTS:
        try:
            return {"installed": True, "version": metadata.version(dist), "dist": dist}
        except metadata.PackageNotFoundError:
            continue
    return {"installed": False, "version": None, "dist": None}
