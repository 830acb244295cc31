"""Shared memory: /dev/shm's size and the torch segments that dead processes left in it."""
from __future__ import annotations

import os
import re
import stat
import time
from typing import Optional

from doctor.probes import probe

SHM_PATH = "/dev/shm"
# torch names its file_system-strategy segments "/torch_{pid}_{random}_{counter}"
# (the format string in libtorch_cpu.so of torch 2.13: `strings libtorch_cpu.so | grep
# '^/torch_'`); the first number is the creating process.
TORCH_SEGMENT = re.compile(r"^torch_(\d+)_\d+_\d+$")
STALE_AGE_S = 24 * 3600
MAX_ENTRIES = 100_000


def pid_alive(pid: int) -> Optional[bool]:
    """True/False when the kernel says so; None when it cannot tell."""
    if pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True     # exists, owned by someone else
    except OSError:
        return None
    return True


def stale_segments(path: str = SHM_PATH, now: Optional[float] = None) -> list:
    """torch_* files in `path` whose creator is dead (rule "owner-dead"), or, when the
    name carries no pid, that were untouched for a day (rule "age").

    A pid from another pid namespace (a container) looks dead from here, so a segment
    is also kept when it was modified in the last minute.
    """
    now = time.time() if now is None else now
    out: list = []
    try:
        entries = os.scandir(path)
    except OSError:
        return out
    with entries:
        for i, entry in enumerate(entries):
            if i >= MAX_ENTRIES:
                break
            if not entry.name.startswith("torch_"):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            age = now - st.st_mtime
            m = TORCH_SEGMENT.match(entry.name)
            if m:
                if pid_alive(int(m.group(1))) is not False or age < 60:
                    continue
                rule = "owner-dead"
            elif age >= STALE_AGE_S:
                rule = "age"
            else:
                continue
            out.append({"name": entry.name, "size": st.st_blocks * 512 or st.st_size,
                        "rule": rule})
    return sorted(out, key=lambda s: s["name"])


@probe("shm")
def shm(job) -> Optional[dict]:
    """{path, total_bytes, free_bytes, stale: [{name, size, rule}]}; None without /dev/shm."""
    try:
        st = os.statvfs(SHM_PATH)
    except OSError:
        return None
    return {"path": SHM_PATH, "total_bytes": st.f_blocks * st.f_frsize,
            "free_bytes": st.f_bavail * st.f_frsize, "stale": stale_segments(SHM_PATH)}
