"""What the benchmark scripts share: contenders run in alternating rounds, then medians.

Alternating (A, B, A, B, ...) makes machine noise hit every contender alike. A script
imports this from its own directory, so `python benchmarks/bench_x.py` runs as it is.
"""
from __future__ import annotations

import statistics
import time
from typing import Any, Callable


def alternate(contenders: dict[str, Callable[[], Any]], rounds: int, warmup: int = 0,
              show: bool = False) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Run each contender once per round, in order: `warmup` untimed rounds, then `rounds`
    timed ones. ({name: [seconds per timed round]}, {name: what its last run returned});
    `show` prints every run as it ends."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    last: dict[str, Any] = {}
    for i in range(warmup + rounds):
        for name, run in contenders.items():
            t = time.perf_counter()
            last[name] = run()
            dt = time.perf_counter() - t
            if show:
                label = "warm-up" if i < warmup else f"round {i - warmup + 1}"
                print(f"{label:8} {name:9} {dt:6.2f} s", flush=True)
            if i >= warmup:
                times[name].append(dt)
    return times, last


def medians(times: dict[str, list[float]]) -> dict[str, float]:
    """Prints each contender's median, min and every time; returns the medians."""
    width = max(map(len, times))
    out = {}
    for name, ts in times.items():
        out[name] = statistics.median(ts)
        print(f"{name:<{width}}  median {out[name]:.3f} s  (min {min(ts):.3f}; all: "
              f"{', '.join(f'{t:.3f}' for t in ts)})")
    return out
