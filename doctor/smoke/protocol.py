"""What the launcher and the rank program agree on: env names, files, backend choice.

Imported by both sides, so it must stay free of torch.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional, Union

PathLike = Union[str, Path]

ENV_DIR = "DOCTOR_SMOKE_DIR"            # the per-run temp dir for the rank files
ENV_MODEL = "DOCTOR_SMOKE_MODEL"        # MOD:FACTORY, empty for the built-in model
ENV_SHAPE = "DOCTOR_SMOKE_INPUT_SHAPE"  # JSON list, empty when not set
ENV_BACKEND = "DOCTOR_SMOKE_BACKEND"    # requested: auto, gloo or nccl
ENV_DEADLINE = "DOCTOR_SMOKE_DEADLINE"  # epoch seconds when the launcher kills the ranks
ENV_PG_TIMEOUT = "DOCTOR_SMOKE_PG_TIMEOUT"  # seconds, the process group's own timeout
ENV_PARENT = "DOCTOR_SMOKE_PARENT"      # the parent's pid (each process dies with its parent)
ENV_STEPS = "DOCTOR_SMOKE_STEPS"

STEPS = 2  # the second step is the one that catches unused parameters


def events_file(run_dir: PathLike, rank: int) -> Path:
    """JSON lines the rank appends as it goes: phases, timings, exception, checksums."""
    return Path(run_dir) / f"rank{rank}.events"


def fault_file(run_dir: PathLike, rank: int) -> Path:
    """faulthandler's dump on a fatal signal (SIGSEGV, SIGABRT, ...)."""
    return Path(run_dir) / f"rank{rank}.fault"


def later_file(run_dir: PathLike, rank: int) -> Path:
    """faulthandler.dump_traceback_later's dump shortly before the deadline."""
    return Path(run_dir) / f"rank{rank}.later"


def usr1_file(run_dir: PathLike, rank: int) -> Path:
    """The dump the launcher asks for with SIGUSR1 before it stops a surviving rank."""
    return Path(run_dir) / f"rank{rank}.usr1"


def output_file(run_dir: PathLike, rank: int) -> Path:
    """The rank's stdout and stderr."""
    return Path(run_dir) / f"rank{rank}.out"


def exit_file(run_dir: PathLike, rank: int) -> Path:
    """The rank's pid and exit code, written by its reaper once everything has ended."""
    return Path(run_dir) / f"rank{rank}.exit"


class SmokeSetupError(RuntimeError):
    """The smoke's own settings cannot run on this node: not a failure of the job's code."""


def too_few_gpus(gpus: int, world_size: int) -> str:
    return (f"smoke.backend: nccl needs one GPU per rank: this node has {gpus} GPU(s) for "
            f"{world_size} ranks; use smoke.backend: auto (gloo on the CPU here) or run the "
            f"smoke on a node with {world_size} GPUs")


def choose_backend(requested: Optional[str], gpus: int, world_size: int) -> tuple:
    """(backend, device kind): nccl with one GPU per rank, else gloo on CPU.

    RCCL on ROCm is also called "nccl" by torch. With fewer GPUs than ranks
    (one GPU, or a CPU node) the smoke runs gloo on the CPU.
    """
    requested = (requested or "auto").lower()
    if requested == "gloo":
        return "gloo", "cpu"
    if requested == "nccl":
        return "nccl", "cuda"
    if requested != "auto":
        raise ValueError(f"smoke.backend must be auto, gloo or nccl, not {requested!r}")
    if world_size >= 2 and gpus >= world_size:
        return "nccl", "cuda"
    return "gloo", "cpu"
