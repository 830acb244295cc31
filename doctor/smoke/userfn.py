"""Calling the user's model factory and model, the same way in every child that does
(the DDP smoke's ranks, doctor/smoke/worker.py; the memory estimate, doctor/memory/child.py).
No torch import at module level: the callers time their own."""
from __future__ import annotations


def load_factory(spec: str):
    import importlib

    mod_name, _, attr = spec.partition(":")
    if not mod_name or not attr:
        raise ValueError(f"--model must be MODULE:FACTORY, not {spec!r}")
    obj = importlib.import_module(mod_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def guess_input(torch, module, gen):
    """A batch for a factory that returned only a module and no input_shape is set."""
    for m in module.modules():
        if isinstance(m, torch.nn.Linear):
            return torch.randn(8, m.in_features, generator=gen)
        if isinstance(m, torch.nn.Conv2d):
            return torch.randn(2, m.in_channels, 32, 32, generator=gen)
        if isinstance(m, torch.nn.Conv1d):
            return torch.randn(2, m.in_channels, 64, generator=gen)
        if isinstance(m, torch.nn.Embedding):
            return torch.randint(0, m.num_embeddings, (4, 16), generator=gen)
    raise ValueError("cannot guess the model's input: set smoke.input_shape in doctor.yaml "
                     "or let the factory return (module, batch)")


def to_device(obj, device):
    if hasattr(obj, "to"):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: to_device(v, device) for k, v in obj.items()}
    return obj


def call(model, batch):
    if isinstance(batch, dict):
        return model(**batch)
    if isinstance(batch, (list, tuple)):
        return model(*batch)
    return model(batch)


def loss_of(torch, out):
    """A scalar that depends on every output tensor."""
    if isinstance(out, torch.Tensor):
        return out.float().pow(2).mean() if out.dim() else out.float()
    if hasattr(out, "loss") and isinstance(out.loss, torch.Tensor):
        return out.loss
    values = out.values() if isinstance(out, dict) else out if isinstance(out, (list, tuple)) \
        else []
    terms = [loss_of(torch, v) for v in values
             if isinstance(v, (torch.Tensor, list, tuple, dict))]
    if not terms:
        raise TypeError(f"the model returned {type(out).__name__}: no tensor to build a loss from")
    return sum(terms)
