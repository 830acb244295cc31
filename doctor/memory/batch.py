"""The batch of the memory estimate: which one (the precedence), where it came from, and how
one training step gives it to the model.

The job's own batch comes from the data smoke's factory (`--data MOD:FACTORY` /
`smoke.data`): the memory child imports it and reads the first batch itself, with
num_workers=0. The data smoke runs at the same time and records each rank's first batch
too, but only its tensors' shapes, flattened; waiting for it would serialise the two
checks, and a flat list loses the structure (a dict's keys, an (inputs, targets) pair)
the step needs. The batch is then made again as fake tensors of the same shapes, strides
and dtypes. No torch import at module level (the callers time their own; `said` runs in
the doctor's process).
"""
from __future__ import annotations

import os
from typing import Any, Optional


# The names a forward's optional parameter has when a loader's extra item is meant for it:
# the targets (nanoGPT's `forward(idx, targets=None)`, HF's `labels`). Any other optional
# parameter (a mask, a cache) could take the item too, and the step is not guessed then.
TARGET_NAMES = {"y", "target", "targets", "label", "labels", "gt", "ground_truth", "truth"}


class CannotFeed(Exception):
    """The batch's structure does not tell how the model takes it."""


def first_batch(torch, spec: str, world: int) -> Any:
    """The first batch of the job's DataLoader, from the data smoke's own factory (`--data`):
    read here with num_workers=0 (no worker forks: the data smoke proves the workers; the
    batch is the same), as rank 0 of the job's world, with a fake process group so that a
    DistributedSampler or `dist.get_rank()` in the factory gets its answer."""
    import torch.distributed as dist

    from doctor.smoke.userfn import load_factory

    os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE=str(world),
                      LOCAL_WORLD_SIZE=str(world), NODE_RANK="0", GROUP_RANK="0")
    if not dist.is_initialized():
        from torch.testing._internal.distributed.fake_pg import FakeStore

        dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world)
    made = load_factory(spec)()
    if isinstance(made, tuple) and len(made) == 2 and isinstance(made[1], dict):
        kwargs = {k: v for k, v in made[1].items()   # (dataset, the job's DataLoader kwargs)
                  if k not in ("prefetch_factor", "persistent_workers", "worker_init_fn",
                               "multiprocessing_context")}
        made = torch.utils.data.DataLoader(made[0], **dict(kwargs, num_workers=0,
                                                           pin_memory=False))
    if not isinstance(made, torch.utils.data.DataLoader):
        raise TypeError(f"the --data factory {spec} returned {type(made).__name__}, not a "
                        "DataLoader (or (dataset, DataLoader kwargs))")
    made.num_workers = 0    # (not one of the attributes a DataLoader freezes)
    made.pin_memory = False
    try:
        return next(iter(made))
    except StopIteration:
        raise ValueError(f"the DataLoader of --data {spec} yielded no batch") from None


def shapes_of(torch, batch: Any, prefix: str = "") -> list:
    """{name, shape, dtype} of the batch's tensors, in order; name is the key path."""
    if isinstance(batch, torch.Tensor):
        return [{"name": prefix, "shape": list(batch.shape),
                 "dtype": str(batch.dtype).replace("torch.", "")}]
    items = (batch.items() if isinstance(batch, dict) else enumerate(batch)
             if isinstance(batch, (list, tuple)) else ())
    return [row for k, v in items
            for row in shapes_of(torch, v, f"{prefix}.{k}" if prefix else str(k))]


def feeding(module, batch: Any) -> tuple:
    """How one step gives a loader's batch to the model, read from the model's forward
    signature: (description, call(model, batch)). CannotFeed when the structure leaves it
    open: the estimate would run some other step than the job's."""
    import inspect

    try:
        sig = inspect.signature(module.forward)
    except (TypeError, ValueError):
        raise CannotFeed(f"{type(module).__name__}.forward has no readable signature") \
            from None
    ps = list(sig.parameters.values())
    P = inspect.Parameter
    pos = [p for p in ps if p.kind in (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)]
    req = [p for p in pos if p.default is P.empty]
    req_kw = [p.name for p in ps if p.kind == P.KEYWORD_ONLY and p.default is P.empty]
    var_pos = any(p.kind == P.VAR_POSITIONAL for p in ps)
    var_kw = any(p.kind == P.VAR_KEYWORD for p in ps)
    names = {p.name for p in ps if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)}
    where = f"{type(module).__name__}.forward{sig}"
    if isinstance(batch, dict):
        keys = list(batch)
        if all(isinstance(k, str) for k in keys) and (var_kw or set(keys) <= names) \
                and {p.name for p in req} | set(req_kw) <= set(keys):
            return "model(**batch)", lambda m, b: m(**b)
        if len(pos) == 1 and not req_kw and not var_pos:
            return "model(batch)", lambda m, b: m(b)
        raise CannotFeed(f"the batch is a dict with keys {', '.join(map(str, keys))}, and "
                         f"{where} neither takes them all by name nor takes one argument")
    if req_kw:
        raise CannotFeed(f"{where} needs keyword arguments {', '.join(req_kw)} that the "
                         "batch does not name")
    if not isinstance(batch, (list, tuple)):
        if len(req) <= 1 and (pos or var_pos):
            return "model(batch)", lambda m, b: m(b)
        raise CannotFeed(f"the batch is one tensor and {where} needs {len(req)} inputs")
    n = len(batch)
    if var_pos and n >= len(req) or n == len(req):
        return "model(*batch)", lambda m, b: m(*b)
    if len(req) < n <= len(pos) and all(p.name.lower() in TARGET_NAMES
                                        for p in pos[len(req):n]):
        return "model(*batch)", lambda m, b: m(*b)
    if req and len(pos) == len(req) < n and not var_pos:
        k = len(req)   # the model takes k inputs; the rest are the loss's targets
        rest = f"batch[{k}]" if n == k + 1 else f"batch[{k}:]"
        return (f"model(batch[0]); {rest} as the target" if k == 1 else
                f"model(*batch[:{k}]); {rest} as the target",
                lambda m, b: m(*b[:k]))
    raise CannotFeed(f"the batch has {n} items and {where} takes {len(req)} to {len(pos)}: "
                     "which items are inputs (and which a mask or the target) is not known")


def choose(torch, spec: dict, module, made, real, gen) -> tuple:
    """(batch, source, how it is fed, call(model, batch)), the first found winning: the
    check's own `input_shape` option (an explicit "estimate at this shape"), the job's
    DataLoader batch `real` (--data), the model factory's own batch `made`,
    `smoke.input_shape` (the DDP smoke's stand-in), a guess from the model's first layer.
    Only a loader's batch is fed by reading the forward's signature: the others are the
    model's inputs by the smoke's contract (doctor.smoke.userfn.call)."""
    from torch.utils._pytree import tree_flatten, tree_map

    from doctor.smoke.userfn import call, guess_input

    if spec.get("input_shape"):
        made, source = torch.randn(*spec["input_shape"], generator=gen), \
            "options.gpu-memory-estimate.input_shape"
    elif real is not None:
        # a leaf the tree does not open (a dataclass, PyG's Batch) would reach the model
        # as real tensors, uncounted: a low estimate, a wrong "fits" (FSDP's fake mode
        # takes real inputs); so only tensors and plain values in lists, tuples and dicts
        leaves = tree_flatten(real)[0]
        odd = next((x for x in leaves if not isinstance(
            x, (torch.Tensor, int, float, bool, str, type(None)))), None)
        if odd is not None or not any(isinstance(x, torch.Tensor) for x in leaves):
            raise CannotFeed(
                f"the batch holds a {type(odd).__module__}.{type(odd).__qualname__}, "
                "whose tensors the doctor cannot count" if odd is not None else
                "the batch holds no tensor")
        # the same shapes, strides and dtypes as fake tensors (counted, no data)
        made = tree_map(lambda t: torch.empty_strided(t.shape, t.stride(), dtype=t.dtype)
                        if isinstance(t, torch.Tensor) else t, real)
        how, fed = feeding(module, made)
        return made, spec.get("data_label") or f"--data {spec['data']}", how, fed
    elif made is not None:
        source = f"the model factory {spec['model']}"
    elif spec.get("smoke_input_shape"):
        made, source = torch.randn(*spec["smoke_input_shape"], generator=gen), \
            "smoke.input_shape"
    else:
        made, source = guess_input(torch, module, gen), "guessed from the model's first layer"
    how = ("model(**batch)" if isinstance(made, dict) else "model(*batch)"
           if isinstance(made, (list, tuple)) else "model(batch)")
    return made, source, how, call


def said(batch: Optional[dict]) -> str:
    """"batch from --data m:f: 32 × 3 × 224 × 224 float32, 32 int64, fed as model(batch[0]);
    batch[1] as the target": where the estimate's batch came from and what it was."""
    if not batch:
        return "batch unknown"
    rows = batch.get("tensors") or []
    named = any(r["name"] and not r["name"].isdigit() for r in rows)
    text = ", ".join((f"{r['name']} " if named else "")
                     + " × ".join(map(str, r["shape"] or ["scalar"])) + f" {r['dtype']}"
                     for r in rows[:8])
    more = f" and {len(rows) - 8} more tensors" if len(rows) > 8 else ""
    fed = f", fed as {batch['fed']}" if batch.get("fed") != "model(batch)" else ""
    return f"batch from {batch.get('source')}: {text}{more}{fed}"
