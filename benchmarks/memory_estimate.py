"""gpu-memory-estimate against real peaks: the table issue 30's acceptance asks for.

For every model of benchmarks/gpu/models.py (MLP, CNN, transformer with and without
activation checkpointing, buffers and tied weights) × fp32 / bf16 autocast / bf16 weights ×
AdamW / SGD (momentum 0.9), it compares the doctor's estimate (doctor/memory/fake.py: fake
tensors, the same loss, the same optimizer, the CPU's defaults) with the real CPU peak of
the same steps, from the profiler's allocator events (benchmarks/gpu/record_memory.py
run_case, measured now on this machine; `--recorded FILE` reads a recording instead).

    python3 benchmarks/memory_estimate.py                 # the CPU table (about 2 min)
    python3 benchmarks/memory_estimate.py --cuda tests/data/gpu/memory_cuda_h200.json
    python3 benchmarks/memory_estimate.py --ddp --runs 3  # 2-rank gloo DDP vs the estimate
    python3 benchmarks/memory_estimate.py --fsdp --runs 3 # 2-rank gloo FSDP2 vs the estimate
    python3 benchmarks/memory_estimate.py --speed         # a 110M-parameter model's wall time

`--cuda FILE`: the CUDA estimate (512-byte blocks, foreach, the convolution workspace)
plus what the allocator held before the case (its cuBLAS workspaces) against a GPU
recording's max_memory_allocated, and the step's allocations and frees replayed through
doctor/memory/allocator.py against its max_memory_reserved (what gpu-memory-estimate
judges). bf16_weights is built in float32 and then converted, as the recording does it
(to_dtype). `--ddp`: two real gloo ranks of
DistributedDataParallel against the estimate with DDP's buckets; `--fsdp`: of FSDP2
(fully_shard on the modules doctor.memory.fake.fsdp_wrap names) against the estimate on a
fake process group. Each rank's real peak there is the allocator's own live total on every
thread (c10's CPU memory reporter, with FLAGS_caffe2_report_cpu_memory_usage set), read from
the profiler's allocation events; the profiler's running sum of those events is shown beside
it and is no oracle with gloo: gloo frees a collective's buffers (the reduce-scatter's input
clone) on its worker thread whenever that thread drops the work last, a race, and the
profiler never sees those frees (FSDP2: 0-9% too high at random). `--runs N` repeats each
real run N times and gives the min and max. Exit 1 when a CPU, DDP or FSDP row is off by
more than --tolerance (2%).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(HERE / "gpu"), str(ROOT)]
MiB = 1 << 20


def estimate(model: str, dtype: str, opt: str, *, target: str = "cpu",
             ddp: bool = False, fsdp: bool = False, world: int = 2,
             record: bool = False) -> dict:
    import torch

    from doctor.memory.fake import fsdp_shard, run_steps
    from models import MODELS

    build, batch, loss, _ = MODELS[model]
    foreach = target == "cuda"

    def built():
        return build(), None

    def make_batch(m, _b):
        if dtype == "bf16_weights":   # after the fp32 parameters, as the recording does
            to_dtype(m, torch.bfloat16)
        x, y = batch(torch.device("cpu"))
        if dtype == "bf16_weights" and x.is_floating_point():
            x = x.to(torch.bfloat16)
        return x, y

    def optimizer(ps):
        if opt == "adamw":
            return torch.optim.AdamW(ps, lr=1e-3, foreach=foreach or None)
        return torch.optim.SGD(ps, lr=1e-2, momentum=0.9, foreach=foreach or None)

    return run_steps(built, lambda m, xy: loss(m, *xy), optimizer, make_batch=make_batch,
                     autocast=torch.bfloat16 if dtype == "bf16_autocast" else None,
                     round_to=512 if target == "cuda" else 0, ddp=ddp,
                     shard=fsdp_shard(world) if fsdp else None, record=record)


def to_dtype(module, dtype) -> None:
    """`module.to(dtype)` as Module._apply does it on a device, under the fake counter: the
    recording builds each model in float32 on the GPU and then converts it, so the float32
    parameters are allocated, and each is freed as its copy is made (children first, then a
    module's own tensors; a tied parameter is converted once), leaving their blocks cached
    (estimate(), bf16_weights). Fake parameters cannot be swapped in place
    (torch.utils.swap_tensors refuses their weakrefs), hence this copy of _apply's order."""
    import weakref

    import torch

    done: dict = {}   # id(old) -> (weakref(old), its copy): a tie keeps old alive
    for mod in _apply_order(module):
        for table in (mod._parameters, mod._buffers):
            for name in list(table):
                t = table[name]
                if t is None or not t.is_floating_point() or t.dtype == dtype:
                    continue
                ref, new = done.get(id(t), (None, None))
                if ref is None or ref() is not t:
                    copy = t.detach().to(dtype)
                    new = (torch.nn.Parameter(copy, t.requires_grad)
                           if isinstance(t, torch.nn.Parameter) else copy)
                    done[id(t)] = (weakref.ref(t), new)
                table[name] = new
                t = copy = None   # the old storage dies here unless tied


def _apply_order(module) -> list:
    return [m for child in module.children() for m in _apply_order(child)] + [module]


def cases(models: list) -> list:
    from record_memory import DTYPES, OPTIMIZERS

    return [(m, d, o) for m in models for d in DTYPES for o in OPTIMIZERS]


def row(name: str, est: int, real: int, extra: str = "") -> tuple:
    err = 100.0 * (est - real) / real
    print(f"{name:44} {est / MiB:9.1f} {real / MiB:9.1f} {err:+7.2f}%  {extra}", flush=True)
    return err


def cpu_table(models: list, recorded: str, tolerance: float) -> bool:
    import torch

    from record_memory import run_case

    torch.set_num_threads(1)
    rec = {}
    if recorded:
        rec = {(c["model"], c["dtype"], c["optimizer"]): c["profiler"]["peak_bytes"]
               for c in json.loads(Path(recorded).read_text())["cases"]}
    source = f"recorded in {recorded}" if recorded else "measured now"
    print(f"CPU: estimate vs the profiler's allocator peak ({source}), torch {torch.__version__}")
    print(f"{'case':44} {'est MiB':>9} {'real MiB':>9} {'error':>8}  estimate s")
    ok = True
    for m, d, o in cases(models):
        real = (rec.get((m, d, o))
                or run_case(torch.device("cpu"), m, d, o)["profiler"]["peak_bytes"])
        e = estimate(m, d, o)
        err = row(f"{m} {d} {o}", e["peak_bytes"], real, f"{e['seconds_s']:.2f}")
        ok = ok and abs(err) <= tolerance
    return ok


def recorded_held(start_allocated: int) -> list:
    """What the allocator held beside a recorded case's step, as allocations made first
    (allocator.replay's `held`): the two 32 MiB cuBLAS workspaces (the first case creates
    the second inside its step, README) and the rest of `start_allocated_bytes` in 1 MiB
    pieces (cuBLASLt's workspaces, small pool)."""
    from doctor.memory.allocator import WORKSPACES

    rest = max(0, start_allocated - WORKSPACES[0] - WORKSPACES[1])
    return list(WORKSPACES[:2]) + [MiB] * (rest // MiB)


def cuda_rows(doc: dict, models: list) -> list:
    """Per recorded case: (case, estimated allocated peak + the held workspaces, recorded
    max_memory_allocated, the replay's reserved peak, recorded max_memory_reserved)."""
    from doctor.memory.allocator import reserved_peak

    rows = []
    for c in doc["cases"]:
        if c["model"] not in models:
            continue
        held = recorded_held(c["cuda"]["start_allocated_bytes"])
        e = estimate(c["model"], c["dtype"], c["optimizer"], target="cuda", record=True)
        rows.append(((c["model"], c["dtype"], c["optimizer"]),
                     e["peak_bytes"] + sum(held), c["cuda"]["peak_allocated_bytes"],
                     reserved_peak(e["events"], held), c["cuda"]["peak_reserved_bytes"]))
    return rows


def cuda_table(models: list, recorded: str) -> None:
    doc = json.loads(Path(recorded).read_text())
    host = doc["host"]
    print(f"CUDA: the estimate (target cuda) plus what the allocator held before the case vs "
          f"{host.get('gpu')} max_memory_allocated; the allocator replay "
          f"(doctor/memory/allocator.py) vs max_memory_reserved; torch {host.get('torch')}")
    print(f"{'case':40} {'alloc est':>9} {'real':>7} {'error':>7}  {'reserved model':>14} "
          f"{'real':>6} {'error':>7}")
    for key, ea, ra, em, rr in cuda_rows(doc, models):
        print(f"{' '.join(key):40} {ea / MiB:9.1f} {ra / MiB:7.1f} {100 * (ea - ra) / ra:+6.1f}%  "
              f"{em / MiB:14.0f} {rr / MiB:6.0f} {100 * (em - rr) / rr:+6.1f}%"
              + ("" if abs(em - rr) <= 0.1 * rr else "  (reserved off by more than 10%)"),
              flush=True)


DDP_RANK = r"""
import ctypes, json, os, sys
import torch, torch.distributed as dist
sys.path[:0] = [sys.argv[1]]
from record_memory import windows_of, make_optimizer
from models import MODELS
from torch._C._profiler import _EventType
from torch.profiler import ProfilerActivity, profile, record_function
torch.set_num_threads(1)
model_name, dtype, opt_name, mode = sys.argv[2:6]
dist.init_process_group("gloo")
build, batch, loss_fn, _ = MODELS[model_name]
cpu = torch.device("cpu")
# The allocator's own count, on every thread: c10's CPU memory reporter keeps the live
# total only for threads the profiler runs on, unless this flag is set. gloo frees the
# buffers of an async collective (the reduce-scatter's input clone, an allreduce's copy) on
# its worker thread when that thread drops the work last, which is a race: the profiler
# never sees that free, and its running sum keeps the buffer for the rest of the run.
try:
    lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libc10.so"))
    ctypes.c_bool.in_dll(lib, "FLAGS_caffe2_report_cpu_memory_usage").value = True
    counted = "allocator"
except (OSError, ValueError):
    counted = "profiler"
with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
    with record_function("case:setup"):
        model = build()
        if dtype == "bf16_weights":
            model = model.to(torch.bfloat16)
        if mode == "fsdp":   # as the estimate does it (doctor.memory.fake.fsdp_shard)
            from doctor.memory.fake import fsdp_wrap
            from torch.distributed.device_mesh import init_device_mesh
            from torch.distributed.fsdp import fully_shard
            mesh = init_device_mesh("cpu", (dist.get_world_size(),))
            for m in fsdp_wrap(model):
                fully_shard(m, mesh=mesh)
            ddp = model
        else:
            ddp = torch.nn.parallel.DistributedDataParallel(model)
        x, y = batch(cpu)
        if dtype == "bf16_weights" and x.is_floating_point():
            x = x.to(torch.bfloat16)
        opt = make_optimizer(opt_name, model.parameters())
    for step in (1, 2, 3):
        with record_function(f"case:step{step}"):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == "bf16_autocast"):
                loss = loss_fn(ddp, x, y)
            loss.backward()
            opt.step()
win = windows_of(prof)
start, end = win["setup"][0], win["step3"][1]
events = []
stack = list(prof.profiler.kineto_results.experimental_event_tree())
while stack:
    node = stack.pop()
    if node.typed[0] == _EventType.Allocation and node.typed[1].device.type == "cpu":
        events.append((node.start_time_ns, node.typed[1].alloc_size,
                       node.typed[1].total_allocated))
    stack.extend(node.children)
events.sort()
running = profiler_peak = allocator_peak = 0
for t, size, total in events:
    running += size
    if start <= t <= end:
        profiler_peak = max(profiler_peak, running)
        allocator_peak = max(allocator_peak, total)
print(json.dumps({"rank": dist.get_rank(), "counted": counted,
                  "peak_bytes": allocator_peak if counted == "allocator" else profiler_peak,
                  "profiler_peak_bytes": profiler_peak}))
dist.destroy_process_group()
"""


def ddp_runs(model: str, dtype: str, opt: str, mode: str = "ddp", world: int = 2) -> list:
    """Each rank's peaks of 3 DDP (or FSDP2) steps on `world` gloo ranks: `peak_bytes`, the
    allocator's live total on every thread (the truth), and `profiler_peak_bytes`, the
    running sum of the profiler's allocation events (misses gloo's worker-thread frees)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "rank.py"
        script.write_text(DDP_RANK)
        procs = []
        for rank in range(world):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                       RANK=str(rank), WORLD_SIZE=str(world), OMP_NUM_THREADS="1",
                       PYTHONPATH=os.pathsep.join(filter(None, [
                           str(ROOT), os.environ.get("PYTHONPATH", "")])))
            procs.append(subprocess.Popen(
                [sys.executable, str(script), str(HERE / "gpu"), model, dtype, opt, mode], env=env,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
        out = [p.communicate(timeout=600)[0] for p in procs]
    return [json.loads([ln for ln in o.splitlines() if ln.startswith("{")][-1]) for o in out]


def ddp_real(model: str, dtype: str, opt: str, mode: str = "ddp") -> list:
    """Each rank's real peak (the allocator's count) of 3 DDP (or FSDP2) steps on 2 gloo
    ranks."""
    return [r["peak_bytes"] for r in ddp_runs(model, dtype, opt, mode)]


PAIRS = (("fp32", "adamw"), ("fp32", "sgd"), ("bf16_autocast", "adamw"))


def ddp_table(models: list, tolerance: float, mode: str = "ddp", runs: int = 1,
              world: int = 2, pairs: tuple = PAIRS) -> bool:
    """Every rank's real peak in each of `runs` runs against the estimate: min and max over
    the runs of the allocator's count (the truth) and the max of the profiler's running sum
    (what the earlier tables used: it keeps what gloo's worker threads freed)."""
    print(f"{mode.upper()}, {world} gloo ranks x {runs} run(s): estimate "
          f"({'buckets added' if mode == 'ddp' else 'fake process group'}) vs each rank's "
          "peak by the allocator's count over the runs (min..max), and the profiler "
          "running sum's max")
    print(f"{'case':44} {'est MiB':>9} {'real min':>9} {'real max':>9} {'error':>8}  "
          f"{'rank':>4} {'prof. max':>9}")
    ok = True
    for m in models:
        for d, o in pairs:
            est = estimate(m, d, o, ddp=mode == "ddp", fsdp=mode == "fsdp",
                           world=world)["peak_bytes"]
            per_run = [ddp_runs(m, d, o, mode, world) for _ in range(runs)]
            for rank in range(world):
                real = [r[rank]["peak_bytes"] for r in per_run]
                prof = max(r[rank]["profiler_peak_bytes"] for r in per_run)
                # the error against the real peak farthest from the estimate
                worst = max(real, key=lambda v: abs(est - v))
                err = 100.0 * (est - worst) / worst
                counted = {r[rank]["counted"] for r in per_run}
                print(f"{m + ' ' + d + ' ' + o:44} {est / MiB:9.2f} {min(real) / MiB:9.2f} "
                      f"{max(real) / MiB:9.2f} {err:+7.2f}%  {rank:>4} {prof / MiB:9.2f}"
                      f"{'' if counted == {'allocator'} else '  (profiler count)'}",
                      flush=True)
                ok = ok and abs(err) <= tolerance
    return ok


SPEED_MODEL = '''
import torch
from torch import nn


class GPT(nn.Module):
    """GPT-2 small's shape: 12 layers, d 768, 12 heads, a tied 32k vocabulary: 110M."""

    def __init__(self, vocab=32000, d=768, layers=12, seq=1024):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(nn.TransformerEncoderLayer(
            d, 12, 4 * d, dropout=0.0, batch_first=True, norm_first=True)
            for _ in range(layers))
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, x):
        h = self.tok(x) + self.pos(torch.arange(x.shape[1]))
        for b in self.blocks:
            h = b(h)
        return self.head(self.norm(h))


def build():
    return GPT(), torch.randint(0, 32000, (8, 1024))
'''


def speed(runs: int) -> None:
    """The child's wall time (python start, import torch, the estimate) for 110M params."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "gpt110m.py").write_text(SPEED_MODEL)
        spec = json.dumps({"model": "gpt110m:build", "repo": tmp, "parallel": "ddp"})
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([tmp, str(ROOT)]),
                   PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1")
        for _ in range(runs):
            t = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "doctor.memory.child", spec], env=env,
                                 cwd=tmp, capture_output=True, text=True, check=True).stdout
            wall = time.perf_counter() - t
            res = json.loads(out.strip().splitlines()[-1])
            print(f"110M-parameter GPT, batch 8 x 1024, AdamW, fp32, DDP: parameters "
                  f"{res['parameters']:,}, peak {res['peak_bytes'] / (1 << 30):.2f} GiB "
                  f"allocated, {(res.get('reserved_peak_bytes') or 0) / (1 << 30):.2f} GiB "
                  f"reserved; "
                  f"wall {wall:.2f} s (import {res['import_s']:.2f} s, child total "
                  f"{res['seconds_s']:.2f} s)", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="mlp,cnn,transformer,transformer_ckpt,buffers_tied")
    ap.add_argument("--recorded", default="", help="read the CPU peaks from this recording")
    ap.add_argument("--cuda", default="", help="compare with this GPU recording instead")
    ap.add_argument("--ddp", action="store_true", help="2-rank gloo DDP runs")
    ap.add_argument("--fsdp", action="store_true", help="2-rank gloo FSDP2 runs (each block "
                    "of a repeated stack, then the root: doctor.memory.fake.fsdp_wrap)")
    ap.add_argument("--runs", type=int, default=1, help="real runs per case (--ddp, --fsdp)")
    ap.add_argument("--world", type=int, default=2, help="gloo ranks (--ddp, --fsdp)")
    ap.add_argument("--cases", default="fp32:adamw,fp32:sgd,bf16_autocast:adamw",
                    help="DTYPE:OPTIMIZER pairs (--ddp, --fsdp)")
    ap.add_argument("--speed", type=int, default=0, metavar="RUNS",
                    help="time the 110M-parameter estimate RUNS times")
    ap.add_argument("--tolerance", type=float, default=2.0, help="percent")
    args = ap.parse_args(argv)
    models = args.models.split(",")
    if args.speed:
        speed(args.speed)
        return 0
    if args.cuda:
        cuda_table(models, args.cuda)
        return 0
    if args.ddp or args.fsdp:
        pairs = [tuple(c.split(":")) for c in args.cases.split(",")]
        return 0 if ddp_table(models, args.tolerance, "fsdp" if args.fsdp else "ddp",
                              args.runs, args.world, pairs) else 1
    return 0 if cpu_table(models, args.recorded, args.tolerance) else 1


if __name__ == "__main__":
    sys.exit(main())
