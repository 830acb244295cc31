"""Basic node facts: host, CPUs, memory, resource limits, torch's version."""
from __future__ import annotations

import os
import platform
import socket
import sys
from typing import Optional

from doctor.probes import probe


@probe("python")
def python_version(job) -> str:
    return platform.python_version()


@probe("node")
def node(job) -> dict:
    import psutil   # here, not at import: a static run reads no probe (9 ms)

    return {
        "hostname": socket.gethostname(),
        "machine": platform.machine(),
        "cpus": psutil.cpu_count() or 1,
        "cpus_allowed": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memory_bytes": psutil.virtual_memory().total,
        "executable": sys.executable,
    }


def _limit(name: str) -> Optional[list]:
    import psutil

    res = getattr(psutil, name, None)
    if res is None:
        return None
    soft, hard = psutil.Process().rlimit(res)
    inf = psutil.RLIM_INFINITY
    return [None if soft == inf else soft, None if hard == inf else hard]


@probe("limits")
def limits(job) -> dict:
    """[soft, hard] per limit; None means unlimited."""
    return {"nofile": _limit("RLIMIT_NOFILE"), "core": _limit("RLIMIT_CORE")}


@probe("torch_installed")
def torch_installed(job) -> Optional[str]:
    """The installed torch's version, read from its metadata: no `import torch`."""
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None
