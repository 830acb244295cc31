"""Subprocesses with a deadline: every child the doctor starts is killed with its
process group when it overruns (a dead NFS mount or a wedged driver must never hang
the doctor)."""
from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from typing import Optional


@dataclass
class CmdResult:
    returncode: Optional[int]   # None: not found or timed out
    stdout: str
    stderr: str
    timed_out: bool = False
    missing: bool = False


def run_cmd(argv: list, timeout: float = 10.0, env: Optional[dict] = None,
            cwd: Optional[str] = None, input: Optional[str] = None) -> CmdResult:
    """Run a command in its own process group; kill the whole group on timeout."""
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                                env=env, cwd=cwd, text=True, errors="replace",
                                start_new_session=True)
    except (FileNotFoundError, PermissionError, NotADirectoryError):
        return CmdResult(None, "", f"{argv[0]}: not found", missing=True)
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
        return CmdResult(proc.returncode, out, err)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        return CmdResult(None, out or "", err or "", timed_out=True)
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass

