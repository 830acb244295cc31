"""The target GPU's memory, the margin, and the verdict of the memory estimate (no torch).

The estimate itself runs in a child (doctor/memory/child.py). Here: which GPU the job runs
on and how much memory it has (`--gpu-memory` / the check's `gpu_memory` option, the site
profile's `gpu_memory` for the job's partition, or the GPU type of `#SBATCH --gpus=h100:4`
style requests), what the estimate cannot see (the margin), and what would fit.
"""
from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional


GiB = 1 << 30
MiB = 1 << 20

# Memory a GPU type offers, in bytes as torch reports it (total_memory), by the names sites
# give them in Slurm's GRES. Several sizes: the type names more than one model (the smaller
# judges a warning, the larger an error, so that neither is a false error).
GPU_TYPES = {
    # recorded: tests/data/gpu/memory_cuda_h200.json host.gpu_total_memory_bytes
    "h200": (150109880320,),
    # NVIDIA H100 80 GB (SXM and PCIe): nvidia-smi's 81559 MiB
    "h100": (81559 * MiB,),
    # NVIDIA A100 40 GB (40960 MiB) or 80 GB (81920 MiB): GRES "a100" names either
    "a100": (40960 * MiB, 81920 * MiB),
    # AMD MI250X: 64 GiB of HBM2e per GCD (the GPU a rank sees), LUMI's docs
    "mi250x": (64 * GiB,),
    "mi250": (64 * GiB,),
    # AMD MI300X: 192 GB HBM3
    "mi300x": (192 * GiB,),
    # NVIDIA GH200: 96 GB HBM3 (the 144 GB part exists too)
    "gh200": (96 * GiB, 144 * GiB),
    # NVIDIA V100: 16 or 32 GB
    "v100": (16 * GiB, 32 * GiB),
    # NVIDIA L40S: 48 GB
    "l40s": (48 * GiB,),
}

# What the fake-tensor count does not see, per rank. Sources: the H200 recording
# (tests/data/gpu/memory_cuda_h200.json, one device call): 783 MiB used outside the
# caching allocator after 30 training cases (the context and lazily loaded kernels), and
# 65-66 MiB the allocator keeps for cuBLAS workspaces; NCCL's buffers with more than one
# rank are assumed, not measured here.
CONTEXT_ONLY_BYTES = 783 * MiB
WORKSPACE_BYTES = 66 * MiB
CONTEXT_BYTES = CONTEXT_ONLY_BYTES + WORKSPACE_BYTES
NCCL_BYTES = 512 * MiB
# A share of what the step needs from the allocator, for what the model of it cannot see.
# With the replay (the reserved peak of doctor/memory/allocator.py): the buffers CUDA
# kernels allocate inside themselves, which the CPU's fake run does not make (cuDNN's
# convolution workspaces, the fused attention kernels'); they split cached blocks, and the
# replay was 16-31% short of the H200's max_memory_reserved for the transformers and for
# the CNN in fp32 and autocast (within 6% in the other 16 cases). Without the replay: the
# allocator's fragmentation over the allocated peak. Assumed, not fitted: a share that
# covered every recorded miss (42% of the replay) would warn on most jobs that fill a GPU.
FRAGMENTATION = 0.10
REPLAY_SOURCE = ("the step's allocations and frees replayed through a model of PyTorch's "
                 "CUDA caching allocator (2 MiB/20 MiB segments, best fit, split, merge; "
                 "doctor/memory/allocator.py), with the 66 MiB of cuBLAS workspaces it holds")
EXPANDABLE_SOURCE = ("not modelled: the job sets expandable_segments:True, whose segments "
                     "grow in place; the allocated peak, with a flat 10% for fragmentation")
FLAT_SOURCE = ("not modelled (the estimate recorded no allocations): the allocated peak, "
               "with a flat 10% for the allocator's fragmentation")


def margin_source(modelled: bool) -> str:
    if modelled:
        return ("CUDA context and kernels 783 MiB (recorded on an H200, "
                "tests/data/gpu/memory_cuda_h200.json; the cuBLAS workspaces are in the "
                "reserved peak), NCCL buffers 512 MiB with more than one rank and 10% of the "
                "reserved peak for the buffers CUDA kernels allocate inside themselves, which "
                "the replay does not see (assumed: not yet fitted on a real GPU; the H200's "
                "reserved was up to 31% above the replay for transformers and convolutions)")
    return ("CUDA context and kernels 783 MiB + cuBLAS workspaces 66 MiB (recorded on an "
            "H200, tests/data/gpu/memory_cuda_h200.json), NCCL buffers 512 MiB with more "
            "than one rank and 10% of the peak for the allocator's fragmentation (assumed: "
            "not yet fitted on a real GPU)")


SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B?|[KMGT])?\s*$", re.I)


def parse_size(text: str) -> Optional[int]:
    """Bytes of "80GB", "80 GiB", "64G", "81559MiB"; GB and G are read as GiB (what GPU
    memory is sold as is close to that, and the smaller reading would call more jobs
    short); None when it is no size."""
    m = SIZE.match(str(text))
    if not m:
        return None
    unit = (m[2] or "G").upper()[0]
    return int(float(m[1]) * {"K": 1 << 10, "M": MiB, "G": GiB, "T": 1 << 40}[unit])


def human(n: float) -> str:
    return f"{n / GiB:.1f} GiB" if abs(n) >= GiB else f"{n / MiB:.0f} MiB"


@dataclass
class Target:
    low: int                 # the memory a rank's GPU has (the smallest the source allows)
    high: int                # the largest (equal unless the GPU type is ambiguous)
    source: str              # where it came from, for the message
    rocm: bool = False       # an AMD GPU: expandable_segments is the allocator's remedy
    location: Optional[tuple] = None   # (file, line) of the directive that named it


def gpu_type(value: str) -> Optional[str]:
    """The GPU type in a --gpus/--gres/--gpus-per-node value: `h100:4`, `gpu:a100:2`."""
    for item in value.split(","):
        for part in item.split(":"):
            name = part.strip().lower()
            if name and name != "gpu" and not name.isdigit() and name in GPU_TYPES:
                return name
    return None


def target_memory(job, given: str) -> Optional[Target]:
    """The target GPU's memory: the option/--gpu-memory, else the site profile's
    `gpu_memory` of the job's partition, else the GPU type the job script requests."""
    if given:
        size = parse_size(given)
        if size:
            return Target(size, size, f"--gpu-memory/gpu_memory {given}")
    parts = (job.site or {}).get("partitions") or {}
    for script in job.scripts:
        d = script.get("partition")
        if d is not None:
            for name in d.value.split(","):
                mem = (parts.get(name) or {}).get("gpu_memory")
                if mem and parse_size(mem):
                    size = parse_size(mem) or 0
                    profile = (job.site or {}).get("profile") or "the site"
                    return Target(size, size, f"partition {name}'s gpu_memory {mem} "
                                  f"(site profile {profile})", rocm="lumi" in str(profile),
                                  location=(script.rel, d.line))
        for key in ("gpus", "gres", "gpus-per-node", "gpus-per-task"):
            d = script.get(key)
            kind = gpu_type(d.value) if d is not None else None
            if kind:
                sizes = GPU_TYPES[kind]
                return Target(min(sizes), max(sizes), f"--{key}={d.value} ({kind}: "
                              + " or ".join(human(s) for s in sizes) + ")",
                              rocm=kind.startswith("mi"), location=(script.rel, d.line))
    return None


def _fixed(ranks: int, modelled: bool) -> int:
    """The margin's part that does not grow with the step: the context (and the cuBLAS
    workspaces unless the replay holds them) and NCCL's buffers."""
    return ((CONTEXT_ONLY_BYTES if modelled else CONTEXT_BYTES)
            + (NCCL_BYTES if ranks > 1 else 0))


def margin(need: int, ranks: int, modelled: bool = False) -> int:
    """The margin over `need`: the reserved peak of the replay when `modelled`, else the
    allocated peak."""
    return int(_fixed(ranks, modelled) + FRAGMENTATION * need)


def room(gpu: int, ranks: int, modelled: bool = False) -> int:
    """The largest need that fits with its margin: need + margin(need) <= gpu."""
    return int((gpu - _fixed(ranks, modelled)) / (1 + FRAGMENTATION))


def run_child(job, spec: dict, timeout: float) -> dict:
    """The child's JSON answer, or {ok: False, kind, reason} when it gave none."""
    from doctor import proc
    from doctor.smoke import zygote
    from doctor.smoke.launcher import rank_path, smoke_environ

    env = smoke_environ()
    env.update(PYTHONPATH=os.pathsep.join(rank_path(job.repo, env)),
               PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1",
               CUDA_VISIBLE_DEVICES="")   # fake CPU tensors: no GPU context wanted
    # the zygote (its torch import) before the temp dir: see zygote.warm
    zygote.warm(sys.executable, str(job.repo), dict(env, TMPDIR=tempfile.gettempdir()),
                time.time() + timeout)
    tmp = tempfile.mkdtemp(prefix="doctor-memory-")
    try:
        env["TMPDIR"] = tmp
        # through the warm torch process the smokes share (doctor/smoke/zygote.py), else
        # as a process of its own
        res = zygote.run_module(sys.executable, "doctor.memory.child", [json.dumps(spec)],
                                cwd=str(job.repo), env=env, timeout=timeout, tmp=tmp) \
            or proc.run_cmd([sys.executable, "-m", "doctor.memory.child", json.dumps(spec)],
                            timeout=timeout, env=env, cwd=str(job.repo), spool=True)
    finally:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    if res.timed_out:
        return {"ok": False, "kind": "timeout",
                "reason": f"the estimate did not finish in {timeout:.0f} s"}
    for line in reversed(res.stdout.strip().splitlines()):
        try:
            out = json.loads(line)
        except ValueError:
            continue
        if isinstance(out, dict) and "ok" in out:
            return out
    code = res.returncode
    how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit {code}"
    tail = (res.stderr or "").strip().splitlines()[-1:] or [""]
    return {"ok": False, "kind": "crash",
            "reason": f"the estimate's process ended without an answer ({how}) {tail[0]}"[:400]}


def fits_batch(out: dict, room: int, need: Optional[int] = None) -> Optional[int]:
    """The largest batch whose need (`need`: the reserved peak; else the allocated peak)
    fits in `room` bytes: the parameters, gradients, optimizer state and buffers stay, the
    rest grows with the batch (the reserved peak's cached blocks with it)."""
    b = out.get("batch_size")
    parts = out.get("breakdown_bytes") or {}
    fixed = sum(parts.get(k, 0) for k in ("parameters", "gradients", "optimizer_state",
                                          "buffers", "ddp_buckets"))
    per = ((need or out["peak_bytes"]) - fixed) / b if b else 0
    if not b or per <= 0 or room <= fixed:
        return None
    return int((room - fixed) // per) or None


def describe(parts: dict) -> str:
    names = {"parameters": "parameters", "gradients": "gradients",
             "optimizer_state": "optimizer state", "activations": "activations",
             "temporaries": "temporaries", "buffers": "buffers", "batch": "batch",
             "ddp_buckets": "DDP buckets"}
    return ", ".join(f"{names.get(k, k)} {human(v)}" for k, v in parts.items() if v)


def spec_for(job, opts: dict) -> dict:
    return {"model": job.model, "repo": str(Path(job.repo)), "target": "cuda", **opts}
