"""gpu-memory-estimate: the peak memory of a training step per rank, on fake tensors,
against the target GPU's memory."""
from __future__ import annotations

from typing import Iterator, Optional

from doctor import Finding, Location, Skip, check
from doctor.job.context import Job
from doctor.memory.batch import said as said_batch   # (no torch at import)
from doctor.memory.child import OPTIMIZERS, PRECISIONS
from doctor.model import Pass, Severity

DEFAULT_TIMEOUT_S = 120.0
PARALLEL = ("ddp", "ddp-bucket-view", "none", "fsdp")
# FSDP2 is counted on a fake process group of the job's ranks (doctor/memory/fake.py
# fsdp_shard): equal to each rank's peak of real 2-rank gloo runs by the allocator's own
# count (benchmarks/memory_estimate.py --fsdp --runs N). The job's fully_shard calls are not
# read: the count assumes fsdp_wrap's wrapping, so "does not fit" is a warning, not an error.
FSDP_ASSUMED = ("assuming fully_shard (FSDP2) on each block of the model's repeated stack "
                "(its layers), then on the root, with reshard_after_forward (torchtitan's "
                "wrapping; the job's own fully_shard calls are not read)")


def _validate(name: str, value: object) -> Optional[str]:
    """Why an option's value is refused (exit 2 with the settings), or None."""
    fixed = {"precision": PRECISIONS, "parallel": PARALLEL}
    if name in fixed and value not in fixed[name]:
        return f"{value!r} is not one of {', '.join(fixed[name])}"
    if name == "optimizer":
        mod, _, attr = str(value).partition(":")
        if value not in OPTIMIZERS and not (mod and attr):
            return (f"{value!r} is neither {', '.join(OPTIMIZERS)} nor a MOD:FACTORY "
                    "called with the parameters")
    if name == "gpu_memory" and value:
        from doctor.memory.judge import parse_size

        if not parse_size(str(value)):
            return f"{value!r} is not a size, such as 80GB"
    return None


def _expandable_segments(job: Job) -> bool:
    """Whether the job's ranks run with expandable segments (PYTORCH_CUDA_ALLOC_CONF or
    PYTORCH_HIP_ALLOC_CONF): segments then grow in place and the replay's 2/20 MiB
    segments do not apply."""
    for script in list(job.scripts) or [None]:
        env = job.job_env(script)
        for var in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
            if "expandable_segments:true" in (env.text(var) or "").replace(" ", "").lower():
                return True
    return False


def _cannot_fix(out: dict, parallel: str) -> str:
    """The fix of a "cannot estimate", by what stopped it."""
    kind = out.get("kind")
    fed = (out.get("batch") or {}).get("fed")
    if kind == "data":
        return ("fix the DataLoader factory (the data-smoke check says why), or give the batch's "
                "shape in options.gpu-memory-estimate.input_shape")
    if kind == "batch-structure" or (kind == "exception" and fed and out["batch"]["source"]
                                     .startswith(("--data", "smoke.data"))):
        return ("let the model's forward take the batch as the DataLoader yields it (a dict's "
                "keys as its parameter names; (inputs, targets) with one input), or give a float "
                "input's shape in options.gpu-memory-estimate.input_shape")
    if parallel == "fsdp":
        return ("estimate the job without sharding (parallel: ddp) for an upper bound of the "
                "model states, or waive gpu-memory-estimate")
    return ("make the step's shapes independent of tensor values, give custom ops a fake kernel "
            "(torch.library.register_fake), and take the device from the caller instead of "
            "hard-coding cuda; or set options.gpu-memory-estimate to skip it")


def _timeout(job: Job) -> float:
    opts = job.settings.options.get("gpu-memory-estimate", {})
    return float(opts.get("timeout_s") or DEFAULT_TIMEOUT_S) + 15.0


@check("gpu-memory-estimate", title="A training step does not fit in the GPU's memory",
       severity="error", tags=("smoke", "memory", "gpu"), needs=("torch", "smoke"),
       timeout=_timeout, validate=_validate)
def gpu_memory_estimate(job: Job, *, gpu_memory: str = "", optimizer: str = "adamw",
                        precision: str = "fp32", parallel: str = "ddp",
                        input_shape: Optional[list] = None,
                        timeout_s: float = DEFAULT_TIMEOUT_S) -> Iterator[Finding]:
    """The peak GPU memory of one rank's training step is above the GPU's memory.

    The doctor builds the model from `--model MOD:FACTORY` / `smoke.model` on the meta
    device, gives it fake CPU tensors (torch's FakeTensorMode: shapes and sizes, no data)
    and runs two training steps (zero_grad, forward, loss, backward, optimizer step) in a
    child process, counting every storage as it is made and freed. The peak (the second
    step holds the optimizer state) is reported with its breakdown: parameters,
    gradients, optimizer state, activations, temporaries, buffers, the batch, DDP's
    gradient buckets.

    The batch, the first of these found: `options.gpu-memory-estimate.input_shape` (the
    check's own option: an explicit "estimate at this shape", say to try the batch a
    finding proposed); else the job's DataLoader, from the data smoke's factory (`--data
    MOD:FACTORY` / `smoke.data`); else the model factory's `(module, batch)`; else
    `smoke.input_shape` (the DDP smoke's small stand-in); else a guess from the model's
    first layer. The finding and the `batch` fact say which, with each tensor's shape and
    dtype ("batch from --data data:loader: 32 × 3 × 224 × 224 float32, 32 int64"). The
    DataLoader's batch is its first, read in the estimate's own process with
    `num_workers=0` (the same batch, no worker started: the data smoke runs the workers),
    as rank 0 of the job's ranks on a fake process group (a `DistributedSampler` gets its
    answer); it is then made again as fake tensors of the same shapes and dtypes. How the
    step gives it to the model is read from the model's `forward` signature: a dict by
    name (`model(**batch)`) when `forward` takes its keys, else whole to a `forward` of one
    argument; a tuple whole (`model(*batch)`) when `forward` takes that many, or its
    optional parameters are named as targets (`targets`, `labels`, `y`: nanoGPT's
    `forward(idx, targets=None)`); `(inputs, targets)` as `model(inputs)` when `forward`
    takes exactly one. Any other structure (a second item that could be a mask, a dict
    whose keys `forward` does not name) is "cannot estimate", with the reason, never a
    guess; so is a loader that fails (the data smoke says why).

    Options (`options: {gpu-memory-estimate: {...}}`): `gpu_memory` (or `--gpu-memory
    80GB`), `optimizer` (adamw (default), adam, sgd, sgd-momentum, or MOD:FACTORY called
    with the parameters), `precision` (fp32, bf16-autocast, fp16-autocast, bf16 weights),
    `parallel` (ddp (default: one more gradient-sized bucket), ddp-bucket-view
    (`gradient_as_bucket_view=True`), none, fsdp (FSDP2 over the job's ranks, with an
    assumed wrapping: see below)), `input_shape`, `timeout_s`. The count is made for CUDA:
    512-byte blocks, the optimizer's `foreach` path, 1.5 inputs of workspace in a
    convolution's backward.

    The target GPU's memory comes from `--gpu-memory`, else the site profile's
    `gpu_memory` of the job's `--partition` (LUMI-G: 64 GiB per MI250X GCD), else the
    type in `--gpus=h100:4` / `--gres=gpu:a100:2` (h100, h200, a100, mi250x, mi300x,
    gh200, v100, l40s).

    What runs out is what PyTorch's caching allocator can reserve from the GPU, not what
    the tensors use: it takes memory in segments (2 MiB for requests up to 1 MiB, 20 MiB
    for requests under 10 MiB, the request rounded up to 2 MiB above that) and keeps freed
    blocks cached for reuse, so `max_memory_reserved` is above `max_memory_allocated`
    (by 1-74% in the steps recorded on an H200). The estimate replays the step's
    allocations and frees through a model of that allocator (its best-fit, split and merge
    rules; the cuBLAS workspaces it holds and DDP's buckets first) and judges the reserved
    peak it gives (the `reserved_peak_bytes` fact). On the H200 the replay equalled
    `max_memory_reserved` to the byte for an MLP (fp32, autocast, bf16 weights) and a
    model with tied weights (fp32, autocast), was within 6% for that model and a CNN in
    bf16 weights, and 16-31% short for transformers and for the CNN in fp32 and autocast,
    whose CUDA kernels (fused attention, cuDNN) allocate buffers of
    their own that the CPU's kernels do not. A margin covers what the replay cannot see:
    the CUDA/HIP context and kernels (783 MiB, recorded on an H200), NCCL's buffers (512
    MiB with more than one rank, assumed) and 10% of the reserved peak for those kernels'
    own buffers (assumed, not fitted: the recorded shortfall says it can be more). When no
    allocation was recorded the allocated peak is judged instead, with the cuBLAS
    workspaces (66 MiB) and 10% for fragmentation in the margin, and the
    `reserved_source` fact says so, as it does when the job sets
    `expandable_segments:True` (segments then grow in place). The tensors' own peak
    above the GPU: error. A reserved peak above the GPU, or above the GPU less the
    margin: warning (past what it reserves, the allocator frees its cached blocks and
    retries before it runs out, which the replay does not follow). A GPU type that names
    two sizes (a100: 40 or 80 GB) is an error only above the larger. No GPU memory
    known: a skip that gives the peak.

    The estimate cannot run, and says why (a warning, never "fits"), when an op's output
    shape or a Python branch depends on tensor values (`nonzero`, `.item()`, boolean
    masks), when a custom op has no fake kernel, or when the code puts tensors on a GPU
    itself (`device="cuda"`, `.cuda()`). `torch.compile` runs eagerly under fake tensors:
    the estimate is the eager step's. On the CPU, against the profiler's allocator events
    of the same steps, the count is within 0.3% on an MLP, a CNN, a transformer with and
    without activation checkpointing and a model with buffers and tied weights, in fp32,
    bf16 autocast and bf16 weights, with AdamW and SGD (benchmarks/memory_estimate.py).
    With DDP, against two real gloo ranks of the same steps, each rank's peak by the
    allocator's own count agreed within 0.1% in all 30 (5 models × 3 cases × 2 ranks), the
    same in each of 3 runs (`--ddp --runs 3`).

    FSDP2 (`parallel: fsdp`) is counted on a fake process group of the job's ranks
    (`--ntasks-per-node` × `--nodes`): parameters, gradients and optimizer state by their
    local shards, each block's all-gathered parameters while they are alive, and what
    FSDP2 holds across blocks (the backward prefetch, the previous reduce-scatter's
    input). Against two real gloo ranks of the same steps, each rank's peak by the
    allocator's own count was within 0.1% of the estimate in all 30 rank-peaks (5 models ×
    3 cases × 2 ranks), the same in each of 3 runs (`benchmarks/memory_estimate.py --fsdp
    --runs 3`; the profiler's running sum reads up to 9% higher at random, because gloo's
    worker thread frees a collective's buffers where the profiler does not look). The job's
    own `fully_shard` calls are not read: the count assumes each block of the model's
    repeated stack (the elements of a ModuleList or Sequential of one class: its layers),
    outermost first, then the root, as torchtitan does, and says so. A coarser wrapping
    (the root only) holds more, a finer one less, so with FSDP2 "does not fit" is a
    warning, never an error. NCCL's streams on a real GPU are not measured here.

    ## Why it matters
    An out-of-memory error comes after the queue wait, usually in the first step or the
    first optimizer step, and it is per rank: a model of about 90 GB in fp32, or a batch
    too big for a 64 GB MI250X GCD or an 80 GB H100, costs a whole allocation to find.
    Parameter counts (`accelerate estimate-memory`) and model-state estimators miss the
    activations and the temporaries, which are most of the peak for a large batch.

    ## How to fix
    The finding names the largest batch that would fit, from the estimate's own
    breakdown (the activations, and the reserved peak's cached blocks with them, grow
    with the batch; the model states do not). Other
    remedies: activation checkpointing (`torch.utils.checkpoint`), bf16 autocast, sharded
    training (FSDP) when the parameters, gradients and optimizer state alone are most of
    the GPU, and `PYTORCH_HIP_ALLOC_CONF=expandable_segments:True` on ROCm
    (`PYTORCH_CUDA_ALLOC_CONF` on CUDA) against fragmentation near the limit.
    """
    from doctor.memory import judge

    if not job.fact("torch_installed"):
        raise Skip("torch is not installed in this environment (the estimate runs it in a "
                   "child process with this Python)")
    if not job.smoke:   # (the runner keeps it out of such runs: its factory is user code)
        raise Skip("--static/--no-smoke: the estimate runs the model factory, user code")
    if not job.model:
        raise Skip("no model factory: pass --model MOD:FACTORY or set smoke.model (the "
                   "estimate needs the job's model)")
    target = judge.target_memory(job, gpu_memory)
    data = str(job.data) if job.data else None
    named = "smoke.data" if data and job.settings.smoke.get("data") == data else "--data"
    job.say(f"gpu-memory-estimate: {job.model}, {precision}, {optimizer}, {parallel}")
    # the job's ranks in all (NCCL's buffers are part of the margin when there is more than
    # one; FSDP2 shards over them)
    ranks = ((job.ranks_per_node().value or 1) * (job.nodes() or 1)) if parallel != "none" else 1
    spec = judge.spec_for(job, {"input_shape": input_shape, "data": data,
                                "data_label": f"{named} {data}" if data else None,
                                "smoke_input_shape": job.settings.smoke.get("input_shape"),
                                "optimizer": optimizer,
                                "precision": precision, "parallel": parallel,
                                "world_size": ranks})
    out: dict = judge.run_child(job, spec, float(timeout_s))
    facts: dict = {"model": job.model, "precision": precision, "optimizer": optimizer,
                   "parallel": parallel, "target": "cuda"}
    if parallel == "fsdp":
        facts.update(world_size=ranks, fsdp_wrap=FSDP_ASSUMED)
    if out.get("batch"):   # where the batch came from, its tensors, how the step took it
        facts["batch"] = out["batch"]
    if not out.get("ok"):
        facts.update(verdict="cannot estimate", reason=out.get("reason"),
                     kind=out.get("kind"))
        job.record_fact("gpu_memory_estimate", facts)
        frame = out.get("frame")
        where = f" at {frame[0]}:{frame[1]}" if frame else ""
        yield Finding(f"cannot estimate the peak GPU memory of {job.model}{where}: "
                      f"{out.get('reason')}", severity=Severity.WARNING,
                      location=Location(frame[0], frame[1]) if frame else None,
                      fix=_cannot_fix(out, parallel),
                      data={"kind": out.get("kind")})
        return
    peak = int(out["peak_bytes"])
    parts = out.get("breakdown_bytes") or {}
    # what runs out is what the caching allocator can reserve: the replay's reserved peak
    # when the child recorded the step's allocations, else the allocated peak (flat margin)
    reserved = out.get("reserved_peak_bytes")
    expandable = _expandable_segments(job)
    modelled = isinstance(reserved, int) and reserved > 0 and not expandable
    need = reserved if isinstance(reserved, int) and modelled else peak
    extra = judge.margin(need, ranks, modelled)
    facts.update(peak_bytes=peak, reserved_peak_bytes=need if modelled else None,
                 reserved_source=judge.REPLAY_SOURCE if modelled else
                 judge.EXPANDABLE_SOURCE if expandable else judge.FLAT_SOURCE,
                 breakdown_bytes=parts, margin_bytes=extra,
                 margin_source=judge.margin_source(modelled), parameters=out.get("parameters"),
                 batch_size=out.get("batch_size"), seconds_s=out.get("seconds_s"))
    said = (f"{job.model}: peak {judge.human(peak)} per rank in a training step"
            + (f", {judge.human(need)} reserved by the caching allocator" if modelled else "")
            + f" ({precision}, {optimizer}, {parallel}; {judge.describe(parts)}; "
            f"{said_batch(out.get('batch'))})")
    if parallel == "fsdp":
        said += f"; sharded over {ranks} ranks, {FSDP_ASSUMED}"
    if target is None:
        facts.update(verdict="no target GPU memory", gpu_memory_bytes=None)
        job.record_fact("gpu_memory_estimate", facts)
        raise Skip(f"{said}; no target GPU memory known: pass --gpu-memory SIZE, set "
                   "gpu_memory for the partition in the site profile, or request a typed "
                   "GPU (--gpus=h100:4)")
    facts.update(gpu_memory_bytes=target.low, gpu_memory_source=target.source)
    location = Location(*target.location) if target.location else None
    room = judge.room(target.low, ranks, modelled)
    if need <= room:
        facts["verdict"] = "fits"
        job.record_fact("gpu_memory_estimate", facts)
        raise Pass(f"{said}; fits in {judge.human(target.low)} ({target.source}) with the "
                   f"margin of {judge.human(extra)}")
    best = judge.fits_batch(out, room, need)
    remedies = []
    if best and out.get("batch_size") and best < out["batch_size"]:
        remedies.append(f"a batch of {best} per rank (now {out['batch_size']})")
    if parts.get("activations", 0) > 0.2 * peak:
        remedies.append("activation checkpointing (torch.utils.checkpoint)")
    if precision == "fp32":
        remedies.append("bf16 autocast")
    states = sum(parts.get(k, 0) for k in ("parameters", "gradients", "optimizer_state"))
    if states > 0.3 * target.low and parallel != "fsdp":
        remedies.append("sharding the model states with FSDP")
    alloc = "PYTORCH_HIP_ALLOC_CONF" if target.rocm else "PYTORCH_CUDA_ALLOC_CONF"
    # an error only where the tensors alone are more than the GPU: past what it reserves,
    # the caching allocator frees its cached blocks and retries before it runs out, which
    # the replay does not follow (it only grows), so a reserved peak above is a warning
    over = peak > target.high
    if over:
        facts["verdict"] = "does not fit"
        msg = (f"{said}: more than the {judge.human(target.high)} of the GPU "
               f"({target.source})")
    elif need > target.high:
        facts["verdict"] = "within the margin"   # the allocator's, not the tensors' memory
        remedies.append(f"{alloc}=expandable_segments:True against fragmentation")
        msg = (f"{said}: the caching allocator's replay reserves more than the "
               f"{judge.human(target.high)} of the GPU ({target.source}), while the "
               f"tensors' own peak is below it: it frees its cache and retries before it "
               f"runs out, so the step may fit, fragmented and slower")
    else:
        facts["verdict"] = "within the margin"
        remedies.append(f"{alloc}=expandable_segments:True against fragmentation")
        msg = (f"{said}: within {judge.human(target.low - need)} of the GPU's "
               f"{judge.human(target.low)} ({target.source}), less than the margin of "
               f"{judge.human(extra)} ({facts['margin_source']})")
    job.record_fact("gpu_memory_estimate", facts)
    # FSDP2: the wrapping is assumed, not read from the job, so never an error
    yield Finding(msg, location=location,
                  severity=None if over and parallel != "fsdp" else Severity.WARNING,
                  fix="what would fit: " + "; or ".join(remedies) if remedies else None,
                  data={k: facts[k] for k in ("peak_bytes", "reserved_peak_bytes",
                                              "breakdown_bytes", "margin_bytes",
                                              "gpu_memory_bytes", "verdict")})
