"""Probes: gatherers of facts about the node, run lazily and once per run.

A probe is `@probe("name")` on a function of the Job returning JSON-able data.
Checks read facts with `job.fact("name")`; tests and recorded fixtures replace
any fact by name (fixtures/<check>/<case>/case.yaml `facts:`), so checks stay
pure functions of facts. Every subprocess goes through `doctor.proc.run_cmd`, which
has a timeout: a dead NFS mount or a wedged driver must never hang the doctor.
"""
from __future__ import annotations

import importlib
import pkgutil
from typing import Callable

PROBES: dict = {}


def probe(name: str) -> Callable:
    def register(func: Callable) -> Callable:
        if name in PROBES and PROBES[name] is not func:
            raise RuntimeError(f"duplicate probe {name!r}")
        PROBES[name] = func
        return func

    return register


def load_probes() -> dict:
    for mod in pkgutil.iter_modules(__path__, __name__ + "."):
        importlib.import_module(mod.name)
    return PROBES
