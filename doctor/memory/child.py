"""`python -m doctor.memory.child SPEC_JSON`: the memory estimate of the user's model, in a
child process of its own (the model factory is user code, and a fake CUDA tensor on a
CPU-only torch aborts the process). It prints one JSON line: the estimate, or why there is
none (`cannot`: the reason, the kind, the user's file:line).

SPEC: model (MOD:FACTORY), input_shape (the check's own option), data (the `--data`
MOD:FACTORY of the data smoke), data_label (how the user named it), smoke_input_shape,
optimizer (adamw, adam, sgd, sgd-momentum or
MOD:FACTORY taking the parameters), precision (fp32, bf16-autocast, fp16-autocast, bf16),
parallel (none, ddp, ddp-bucket-view, fsdp: FSDP2 as doctor.memory.fake.fsdp_wrap
assumes it, over world_size ranks), target (cuda, cpu), repo.
"""
from __future__ import annotations

import json
import os
import sys
import time
import traceback

T0 = time.time()

OPTIMIZERS = ("adamw", "adam", "sgd", "sgd-momentum")
PRECISIONS = ("fp32", "bf16-autocast", "fp16-autocast", "bf16")


def make_optimizer(torch, name: str, target: str):
    """The optimizer factory. Built-in names take torch's defaults for the target device:
    on CUDA `foreach` (the multi-tensor path, with a list of temporaries as large as the
    parameters), on CPU the per-parameter loop. A factory's own choice is kept; left at
    None it is resolved the same way."""
    from doctor.smoke.userfn import load_factory

    foreach = target == "cuda"
    if name == "adamw":
        return lambda ps: torch.optim.AdamW(ps, lr=1e-3, foreach=foreach)
    if name == "adam":
        return lambda ps: torch.optim.Adam(ps, lr=1e-3, foreach=foreach)
    if name in ("sgd", "sgd-momentum"):
        m = 0.9 if name == "sgd-momentum" else 0.0
        return lambda ps: torch.optim.SGD(ps, lr=1e-2, momentum=m, foreach=foreach)
    factory = load_factory(name)

    def made(ps):
        opt = factory(ps)
        for group in getattr(opt, "param_groups", []):
            if "foreach" in group and group["foreach"] is None:
                group["foreach"] = foreach
        return opt
    return made


def reserved(res: dict, ddp: bool) -> None:
    """What the CUDA caching allocator would reserve: the step's allocations and frees
    (`events`, taken out of `res`) replayed through doctor/memory/allocator.py, after the
    cuBLAS workspaces it holds and DDP's gradient buckets. `reserved_peak_bytes` is None when
    there are no events (the judge then uses its flat margin)."""
    from doctor.memory import allocator

    events = res.pop("events", None)
    held = list(allocator.WORKSPACES)
    if ddp:   # made with the reducer, before the first step, and never freed
        held += allocator.ddp_buckets(int(res.get("trainable_bytes") or 0))
    res["reserved_peak_bytes"] = allocator.reserved_peak(events, held) if events else None


def user_frame(tb: traceback.TracebackException, repo: str):
    """The innermost frame in the repository (the user's line), else None."""
    for f in reversed(tb.stack):
        path = os.path.realpath(f.filename)
        if path.startswith(repo.rstrip("/") + "/"):
            return [os.path.relpath(path, repo), f.lineno, f.line or ""]
    return None


def classify(exc: BaseException) -> tuple:
    """(kind, reason) of an exception that stopped the estimate."""
    from torch._subclasses import fake_tensor as ft

    from doctor.memory.batch import CannotFeed

    name = type(exc).__name__
    text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else name
    if isinstance(exc, CannotFeed):
        return "batch-structure", f"the DataLoader's batch cannot be fed to the model: {exc}"
    if getattr(exc, "doctor_kind", None) == "data":   # raised by the --data factory
        return "data", (f"the first batch of the --data DataLoader could not be read "
                        f"({name}: {text}); the data-smoke check runs it and says why")
    data_dep = tuple(getattr(ft, n) for n in ("DataDependentOutputException",
                                              "DynamicOutputShapeException") if hasattr(ft, n))
    if isinstance(exc, data_dep) or "data-dependent" in str(exc).lower() \
            or name == "GuardOnDataDependentSymNode":
        return "data-dependent", ("an op's output shape or a Python branch depends on tensor "
                                  f"values, which fake tensors do not have ({text})")
    if isinstance(exc, getattr(ft, "UnsupportedOperatorException", ())):
        return "no-fake-kernel", f"an op has no fake (meta) kernel: {text}"
    if "cuda" in str(exc).lower() or "hip" in str(exc).lower():
        return "device", ("the code puts tensors on a GPU itself (a hard-coded device or "
                          f".cuda()); the estimate runs on fake CPU tensors: {text}")
    return "exception", f"{name}: {text}"


def main() -> int:
    spec = json.loads(sys.argv[1])
    repo = os.path.realpath(spec.get("repo") or os.getcwd())
    out: dict = {}
    try:
        import torch
        from torch.utils._pytree import tree_map

        from doctor.memory.batch import choose, first_batch, shapes_of
        from doctor.memory.fake import fsdp_shard, run_steps
        from doctor.smoke.userfn import load_factory, loss_of

        out["import_s"] = round(time.time() - T0, 3)
        torch.set_num_threads(1)
        target = spec.get("target", "cuda")
        precision = spec.get("precision", "fp32")
        real = None   # the job's DataLoader batch, unless the check's option overrides it
        if spec.get("data") and not spec.get("input_shape"):
            try:
                real = first_batch(torch, spec["data"], int(spec.get("world_size") or 1))
            except BaseException as exc:
                exc.doctor_kind = "data"   # type: ignore[attr-defined]
                raise
        feed: dict = {}

        def build():
            made = load_factory(spec["model"])()
            module, batch = made if isinstance(made, tuple) else (made, None)
            if not isinstance(module, torch.nn.Module):
                raise TypeError(f"the factory {spec['model']} returned "
                                f"{type(module).__name__}, not a torch.nn.Module "
                                "(or (module, batch))")
            if precision == "bf16":
                module = module.to(torch.bfloat16)
            # a batch that takes precedence (batch.choose): the factory's is not made
            return module, None if spec.get("input_shape") or real is not None else batch

        def make_batch(module, batch):
            gen = torch.Generator().manual_seed(0)
            batch, source, how, feed["call"] = choose(torch, spec, module, batch, real, gen)
            if precision == "bf16":
                batch = tree_map(lambda t: t.to(torch.bfloat16)
                                 if isinstance(t, torch.Tensor) and t.is_floating_point()
                                 else t, batch)
            out["batch"] = {"source": source, "fed": how, "tensors": shapes_of(torch, batch)}
            return batch

        amp = {"bf16-autocast": torch.bfloat16, "fp16-autocast": torch.float16}.get(precision)
        res = run_steps(build, lambda m, b: loss_of(torch, feed["call"](m, b)),
                        make_optimizer(torch, spec.get("optimizer") or "adamw", target),
                        autocast=amp, round_to=512 if target == "cuda" else 0,
                        make_batch=make_batch, ddp=spec.get("parallel") == "ddp",
                        shard=fsdp_shard(int(spec.get("world_size") or 2))
                        if spec.get("parallel") == "fsdp" else None,
                        record=target == "cuda")
        reserved(res, spec.get("parallel") == "ddp")
        if "cuda" in res["devices"] or "hip" in res["devices"]:
            raise RuntimeError("a tensor was made on cuda")
        out.update(res)
        out["ok"] = True
    except BaseException as exc:   # everything becomes "cannot estimate", with the reason
        tb = traceback.TracebackException.from_exception(exc)
        try:
            kind, reason = classify(exc)
        except Exception:   # torch itself failed to import
            kind, reason = "exception", f"{type(exc).__name__}: {exc}"[:400]
        if out.get("batch") and kind in ("exception", "device"):   # how the step was fed
            reason += f" (batch from {out['batch']['source']}, fed as {out['batch']['fed']})"
        out.update(ok=False, kind=kind, reason=reason, frame=user_frame(tb, repo),
                   text="".join(tb.format())[-4000:])
    out["seconds_s"] = round(time.time() - T0, 3)
    sys.stdout.write(json.dumps(out, default=str) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    code = main()
    os._exit(code)   # no interpreter teardown: nothing of the user's to flush
