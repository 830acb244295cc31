"""Record the real peak memory of a few training steps, per model × dtype × optimizer.

The facts issue 30's gpu-memory-estimate is validated against (tests/data/gpu/memory_*.json):
for every model in models.py, in fp32, bf16 under autocast (weights and optimizer state
fp32, the usual AMP form) and bf16 weights (`model.to(torch.bfloat16)`, everything bf16),
with AdamW (torch's defaults: foreach on CUDA, a per-parameter loop on CPU) and SGD
(momentum 0.9), it runs STEPS real steps (zero_grad(set_to_none=True), forward, loss,
backward, step) and records

- on every device, the peak of the live bytes counted from the profiler's allocator events
  (torch.profiler with profile_memory=True, started before the model is built, so every
  tensor of the case is counted: the measurement issue 30 names for the CPU); the first step
  (which creates the optimizer state) and the steady steps (2..STEPS) separately;
- on CUDA also torch.cuda.max_memory_allocated() and max_memory_reserved(), reset between the
  cases and between the first and the steady steps; the CUDA context's size (the GPU's used
  memory outside the caching allocator, at several stages); and the allocator's rounding
  (one tensor of n bytes: what memory_allocated and memory_reserved grow by).

    python3 benchmarks/gpu/record_memory.py --device cpu --output tests/data/gpu/memory_cpu.json
    python3 benchmarks/gpu/record_memory.py --device cuda --output $OUT/memory_cuda.json

All sizes are bytes (keys ending in _bytes); times are seconds (_s).
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import torch
from torch.profiler import ProfilerActivity, profile, record_function

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import MODELS  # noqa: E402

SCHEMA = "doctor-memory-facts/1"
STEPS = 3
DTYPES = {
    "fp32": "float32 weights, activations and optimizer state",
    "bf16_autocast": "torch.autocast(device_type, dtype=torch.bfloat16); weights, grads and "
                     "optimizer state stay float32",
    "bf16_weights": "model.to(torch.bfloat16): weights, grads, activations and optimizer "
                    "state bfloat16, no autocast",
}
OPTIMIZERS = {
    "adamw": ("torch.optim.AdamW(params, lr=1e-3), torch's defaults (foreach=None: the "
              "multi-tensor path on CUDA, the per-parameter loop on CPU)"),
    "sgd": "torch.optim.SGD(params, lr=1e-2, momentum=0.9)",
}
ROUNDING_SIZES = [1, 512, 513, 1 << 20, (1 << 20) + 1, (2 << 20) + 1, (10 << 20) + 1,
                  (20 << 20) + 1]
MiB = 1 << 20


def storage_bytes(tensors) -> int:
    """Bytes of the distinct storages (tied weights and views counted once)."""
    seen, total = set(), 0
    for t in tensors:
        if t is None:
            continue
        s = t.untyped_storage()
        if s.data_ptr() not in seen:
            seen.add(s.data_ptr())
            total += s.nbytes()
    return total


def make_optimizer(name: str, params) -> torch.optim.Optimizer:
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-3)
    return torch.optim.SGD(params, lr=1e-2, momentum=0.9)


def live_peaks(prof, device: torch.device, windows: dict) -> dict:
    """The running sum of the allocator events of `device`, in time order, from the
    profiler's start: its peak within each window (name: (start_ns, end_ns)) and its
    value at each window's end."""
    from torch._C._profiler import _EventType

    allocs: list = []
    stack = list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        node = stack.pop()
        if node.typed[0] == _EventType.Allocation:
            e = node.typed[1]
            if e.device.type == device.type:
                allocs.append((node.start_time_ns, e.alloc_size))
        stack.extend(node.children)
    allocs.sort()
    out = {name: {"peak_bytes": 0, "end_bytes": 0} for name in windows}
    live = 0
    for t, size in allocs:
        live += size
        for name, (start, end) in windows.items():
            if start <= t <= end:
                out[name]["peak_bytes"] = max(out[name]["peak_bytes"], live)
    for name, (_, end) in windows.items():
        out[name]["end_bytes"] = sum(s for t, s in allocs if t <= end)
    out["events"] = len(allocs)
    return out


def windows_of(prof) -> dict:
    """The (start, end) ns of the record_function ranges this script opened."""
    found = {}
    stack = list(prof.profiler.kineto_results.experimental_event_tree())
    while stack:
        node = stack.pop()
        if node.name.startswith("case:"):
            found[node.name[5:]] = (node.start_time_ns, node.end_time_ns)
        stack.extend(node.children)
    return found


def run_case(device: torch.device, model_name: str, dtype: str, opt_name: str) -> dict:
    build, batch, loss_fn, shapes = MODELS[model_name]
    cuda = device.type == "cuda"
    gc.collect()
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    start_alloc = torch.cuda.memory_allocated() if cuda else None
    torch.manual_seed(0)
    rec: dict = {"device": device.type, "model": model_name, "dtype": dtype,
                 "optimizer": opt_name, "batch": shapes, "steps": STEPS}
    stats: dict = {}
    t0 = time.perf_counter()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        with record_function("case:setup"):
            with torch.device(device):
                model = build()
            if dtype == "bf16_weights":
                model = model.to(torch.bfloat16)
            model.train()
            x, y = batch(device)
            if dtype == "bf16_weights" and x.is_floating_point():
                x = x.to(torch.bfloat16)
            opt = make_optimizer(opt_name, model.parameters())
        if cuda:
            torch.cuda.synchronize()
            stats["baseline_allocated_bytes"] = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
        for step in range(1, STEPS + 1):
            with record_function(f"case:step{step}"):
                opt.zero_grad(set_to_none=True)
                with torch.autocast(device.type, dtype=torch.bfloat16,
                                    enabled=dtype == "bf16_autocast"):
                    loss = loss_fn(model, x, y)
                loss.backward()
                opt.step()
                if cuda:
                    torch.cuda.synchronize()
            if cuda and step == 1:
                stats["first_step"] = {
                    "max_allocated_bytes": torch.cuda.max_memory_allocated(),
                    "max_reserved_bytes": torch.cuda.max_memory_reserved()}
                torch.cuda.reset_peak_memory_stats()
        if cuda:
            stats["steady"] = {"max_allocated_bytes": torch.cuda.max_memory_allocated(),
                               "max_reserved_bytes": torch.cuda.max_memory_reserved()}
            stats["end_allocated_bytes"] = torch.cuda.memory_allocated()
            stats["end_reserved_bytes"] = torch.cuda.memory_reserved()
    rec["seconds_s"] = round(time.perf_counter() - t0, 3)
    rec["loss_last"] = float(loss.detach().float())
    params = list(model.parameters())
    rec["params"] = sum(p.numel() for p in params)
    rec["param_bytes"] = storage_bytes(params)
    rec["grad_bytes"] = storage_bytes(p.grad for p in params)
    rec["buffer_bytes"] = storage_bytes(model.buffers())
    rec["optimizer_state_bytes"] = storage_bytes(
        v for st in opt.state.values() for v in st.values() if torch.is_tensor(v))
    rec["input_bytes"] = storage_bytes([x, y])
    win = windows_of(prof)
    counted = live_peaks(prof, device, {
        "setup": win["setup"], "first_step": win["step1"],
        "steady": (win["step2"][0], win[f"step{STEPS}"][1])})
    rec["profiler"] = {
        "baseline_bytes": counted["setup"]["end_bytes"],
        "first_step_peak_bytes": counted["first_step"]["peak_bytes"],
        "steady_peak_bytes": counted["steady"]["peak_bytes"],
        "peak_bytes": max(counted["first_step"]["peak_bytes"],
                          counted["steady"]["peak_bytes"]),
        "allocator_events": counted["events"]}
    if cuda:
        stats["start_allocated_bytes"] = start_alloc
        stats["peak_allocated_bytes"] = max(stats["first_step"]["max_allocated_bytes"],
                                            stats["steady"]["max_allocated_bytes"])
        stats["peak_reserved_bytes"] = max(stats["first_step"]["max_reserved_bytes"],
                                           stats["steady"]["max_reserved_bytes"])
        rec["cuda"] = stats
    del model, opt, x, y, loss, params, prof
    return rec


def nvidia_smi() -> Optional[dict]:
    """The GPU's used/total memory (MiB) as nvidia-smi reports it, or None."""
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.used,memory.total",
             "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0 or not out.stdout.strip():
        return None
    name, driver, used, total = [s.strip() for s in out.stdout.splitlines()[0].split(",")]
    return {"name": name, "driver": driver, "used_mib": int(used), "total_mib": int(total)}


def used_outside_allocator(stage: str) -> dict:
    """The GPU's used memory (cudaMemGetInfo) minus what the caching allocator holds: the
    context, loaded kernels and library handles."""
    free, total = torch.cuda.mem_get_info()
    reserved = torch.cuda.memory_reserved()
    smi = nvidia_smi()
    return {"stage": stage, "device_used_bytes": total - free, "reserved_bytes": reserved,
            "outside_allocator_bytes": total - free - reserved,
            "nvidia_smi_used_mib": smi["used_mib"] if smi else None}


def cuda_context(before: Optional[dict]) -> list:
    """The memory used outside the caching allocator: after init, after the first
    allocation, after a cuBLAS matmul and a cuDNN convolution (their handles and
    workspaces load lazily)."""
    stages = [{"stage": "before_init", "nvidia_smi_used_mib": before["used_mib"]
               if before else None}]
    torch.cuda.init()
    torch.cuda.synchronize()
    stages.append(used_outside_allocator("after_init"))
    t = torch.ones(1, device="cuda")
    torch.cuda.synchronize()
    stages.append(used_outside_allocator("after_first_tensor"))
    a = torch.randn(1024, 1024, device="cuda")
    (a @ a).sum().item()
    stages.append(used_outside_allocator("after_matmul_fp32"))
    (a.bfloat16() @ a.bfloat16()).sum().item()
    stages.append(used_outside_allocator("after_matmul_bf16"))
    c = torch.nn.functional.conv2d(torch.randn(8, 3, 32, 32, device="cuda"),
                                   torch.randn(16, 3, 3, 3, device="cuda"))
    c.sum().item()
    stages.append(used_outside_allocator("after_conv"))
    del t, a, c
    torch.cuda.empty_cache()
    stages.append(used_outside_allocator("after_empty_cache"))
    return stages


def rounding() -> list:
    """One uint8 tensor of n bytes on an empty cache: what allocated/reserved grow by."""
    rows = []
    for n in ROUNDING_SIZES:
        torch.cuda.empty_cache()
        a0, r0 = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
        t = torch.empty(n, dtype=torch.uint8, device="cuda")
        rows.append({"request_bytes": n,
                     "allocated_delta_bytes": torch.cuda.memory_allocated() - a0,
                     "reserved_delta_bytes": torch.cuda.memory_reserved() - r0})
        del t
    torch.cuda.empty_cache()
    return rows


def host_facts(device: torch.device) -> dict:
    facts = {"recorded_utc": datetime.datetime.now(datetime.timezone.utc).strftime(
                 "%Y-%m-%dT%H:%M:%SZ"),
             "torch": torch.__version__, "python": platform.python_version(),
             "machine": platform.machine(), "cpu_count": os.cpu_count(),
             "torch_threads": torch.get_num_threads(), "device": device.type}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(0)
        smi = nvidia_smi()
        facts.update({
            "gpu": props.name, "gpu_total_memory_bytes": props.total_memory,
            "capability": f"{props.major}.{props.minor}",
            "multiprocessors": props.multi_processor_count,
            "driver": smi["driver"] if smi else None, "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
            "nccl": ".".join(map(str, torch.cuda.nccl.version())),
            "cuda_module_loading": os.environ.get("CUDA_MODULE_LOADING"),
            "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF")})
    return facts


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", choices=["cpu", "cuda"], required=True)
    ap.add_argument("--output", required=True)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--threads", type=int, default=0,
                    help="torch.set_num_threads (0: torch's default)")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    before = nvidia_smi() if device.type == "cuda" else None
    doc: dict = {"schema": SCHEMA, "units": "bytes (keys *_bytes), seconds (*_s)",
                 "command": " ".join([Path(sys.executable).name] + sys.argv),
                 "dtypes": DTYPES, "optimizers": OPTIMIZERS,
                 "measured": ("profiler: peak of the running sum of the profiler's allocator "
                              "events (profile_memory=True) of this device from before the "
                              "model is built; cuda: torch.cuda.max_memory_allocated/"
                              "max_memory_reserved, reset before the case and after step 1")}
    if device.type == "cuda":
        doc["cuda_context"] = cuda_context(before)
        doc["allocator_rounding"] = rounding()
    doc["host"] = host_facts(device)
    cases = []
    for name in args.models.split(","):
        for dtype in DTYPES:
            for opt in OPTIMIZERS:
                rec = run_case(device, name, dtype, opt)
                cases.append(rec)
                peak = rec.get("cuda", {}).get("peak_allocated_bytes")
                print(f"{name:17} {dtype:14} {opt:6} params {rec['params']:>9} "
                      f"profiler peak {rec['profiler']['peak_bytes'] / MiB:8.1f} MiB"
                      + (f"  cuda alloc {peak / MiB:8.1f} MiB reserved "
                         f"{rec['cuda']['peak_reserved_bytes'] / MiB:8.1f} MiB"
                         if peak is not None else "") + f"  {rec['seconds_s']:.2f} s",
                      flush=True)
    doc["cases"] = cases
    if device.type == "cuda":
        doc["cuda_context"].append(used_outside_allocator("after_all_cases"))
    Path(args.output).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
