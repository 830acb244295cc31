"""One rank of the DDP smoke: `python -m doctor.smoke.worker` (started by the launcher).

init_process_group → build the model → DDP → STEPS × (forward, backward,
optimizer step) → a checksum of every parameter after each step. Every phase,
its timing, an exception with its traceback, and the checksums go as JSON lines
to the rank's events file; faulthandler writes the stacks (fatal signal,
shortly before the deadline, and on SIGUSR1 from the launcher) to their own
files. The launcher reads all of it: this program judges nothing.
"""
from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import threading
import time
import traceback

T0 = time.time()

from doctor.smoke import protocol as P  # noqa: E402  (no torch)
from doctor.smoke.userfn import call, guess_input, load_factory, loss_of, to_device  # noqa: E402,E501

RANK = int(os.environ.get("RANK", "0"))
RUN_DIR = os.environ[P.ENV_DIR]
_events = open(P.events_file(RUN_DIR, RANK), "a", buffering=1)
_dumps: list = []  # faulthandler keeps only the fd: the file objects must stay open


def emit(event: str, **data) -> None:
    data.update(event=event, t=time.time())
    _events.write(json.dumps(data, default=str) + "\n")
    _events.flush()


def arm_faulthandler() -> None:
    fault = open(P.fault_file(RUN_DIR, RANK), "w")
    usr1 = open(P.usr1_file(RUN_DIR, RANK), "w")
    later = open(P.later_file(RUN_DIR, RANK), "w")
    _dumps.extend((fault, usr1, later))
    faulthandler.enable(file=fault, all_threads=True)
    faulthandler.register(signal.SIGUSR1, file=usr1, all_threads=True, chain=False)
    deadline = float(os.environ.get(P.ENV_DEADLINE, "0") or 0)
    if deadline:
        # Shortly before the launcher kills us: where every thread is stuck.
        delay = max(0.5, deadline - time.time() - 1.5)
        faulthandler.dump_traceback_later(delay, repeat=False, file=later, exit=False)


def die_with_parent() -> None:
    """If the rank's parent (its reaper) is killed outright (SIGKILL), take the rank with it."""
    parent = int(os.environ.get(P.ENV_PARENT, "0") or 0)
    if not sys.platform.startswith("linux") or not parent:
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def builtin_model(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 8)), None


def checksums(model) -> dict:
    """Per parameter: (sum, sum of squares) in float64 — equal on every rank when in sync."""
    import torch

    out = {}
    with torch.no_grad():
        for name, p in model.named_parameters():
            t = p.detach().double()
            out[name] = [float(t.sum()), float((t * t).sum())]
    return out


def main() -> int:
    die_with_parent()
    arm_faulthandler()
    emit("start", pid=os.getpid(), main_thread=threading.get_ident(), launched=T0)
    phase = "import"
    try:
        t = time.time()
        import datetime

        import torch
        import torch.distributed as dist
        from torch.nn.parallel import DistributedDataParallel as DDP

        emit("phase", phase="import", seconds=time.time() - t, torch=torch.__version__)

        phase = "setup"   # the smoke's own backend and device, before any user code
        world = int(os.environ["WORLD_SIZE"])
        local_rank = int(os.environ.get("LOCAL_RANK", RANK))
        gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
        backend, kind = P.choose_backend(os.environ.get(P.ENV_BACKEND), gpus, world)
        device = torch.device("cuda", local_rank) if kind == "cuda" else torch.device("cpu")
        # said before set_device, so that a failure there still reports what was chosen
        emit("backend", backend=backend, device=str(device), gpus=gpus,
             hip=getattr(torch.version, "hip", None), cuda=getattr(torch.version, "cuda", None))
        if kind == "cuda" and gpus < world:
            raise P.SmokeSetupError(P.too_few_gpus(gpus, world))
        if kind == "cuda":
            torch.cuda.set_device(local_rank)

        phase = "init"
        t = time.time()
        timeout = datetime.timedelta(seconds=float(os.environ.get(P.ENV_PG_TIMEOUT, "60")))
        dist.init_process_group(backend, timeout=timeout)
        emit("phase", phase="init", seconds=time.time() - t)

        phase = "model"
        t = time.time()
        spec = os.environ.get(P.ENV_MODEL) or ""
        made = load_factory(spec)() if spec else builtin_model(torch)
        module, batch = made if isinstance(made, tuple) else (made, None)
        if not isinstance(module, torch.nn.Module):
            raise TypeError(f"the factory {spec} returned {type(module).__name__}, "
                            "not a torch.nn.Module (or (module, batch))")
        emit("phase", phase="model", seconds=time.time() - t)

        phase = "ddp"
        t = time.time()
        module = module.to(device)
        model = DDP(module, device_ids=[local_rank] if kind == "cuda" else None)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        gen = torch.Generator().manual_seed(1234 + RANK)  # different data per rank, like DDP
        shape = json.loads(os.environ.get(P.ENV_SHAPE) or "null")
        if batch is None:
            batch = torch.randn(*shape, generator=gen) if shape else \
                guess_input(torch, module, gen)
        batch = to_device(batch, device)
        emit("phase", phase="ddp", seconds=time.time() - t)

        for step in range(1, int(os.environ.get(P.ENV_STEPS, P.STEPS)) + 1):
            phase = f"step {step}"
            t = time.time()
            opt.zero_grad(set_to_none=True)
            loss = loss_of(torch, call(model, batch))
            loss.backward()
            opt.step()
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            emit("step", step=step, seconds=time.time() - t, loss=float(loss.detach()),
                 checksums=checksums(module))

        phase = "shutdown"
        dist.destroy_process_group()
        emit("done", total=time.time() - T0)
        return 0
    except BaseException as exc:  # report everything, then leave at once (peers notice)
        tb = traceback.TracebackException.from_exception(exc)
        emit("exception", phase=phase, type=type(exc).__name__,
             qualname=f"{type(exc).__module__}.{type(exc).__qualname__}",
             message=str(exc)[:4000],
             frames=[[f.filename, f.lineno, f.name, f.line] for f in tb.stack],
             text="".join(tb.format())[-8000:])
        return 1


if __name__ == "__main__":
    code = main()
    faulthandler.cancel_dump_traceback_later()
    sys.stdout.flush()
    sys.stderr.flush()
    _events.close()
    # os._exit: no interpreter teardown, where a broken process group can hang.
    os._exit(code)
