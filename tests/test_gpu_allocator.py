"""doctor/memory/allocator.py, the model of PyTorch's CUDA caching allocator, against the
facts recorded on an H200 (tests/data/gpu/memory_cuda_h200.json, see its README): the
rounding of single requests, and max_memory_reserved of the 30 recorded training steps
when the fake counter's allocations and frees are replayed through it."""
from __future__ import annotations

import functools
import json
import sys

import pytest

from conftest import ROOT

torch = pytest.importorskip("torch")

sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "benchmarks" / "gpu")]
RECORD = json.loads((ROOT / "tests/data/gpu/memory_cuda_h200.json").read_text())
MiB = 1 << 20
WORKSPACE = 32 * MiB   # one cuBLAS workspace (the record's `held`: 32 MiB, then 2 x 32 + 1-2)

# Where the replay misses by more than 10%, always below the recorded reserved peak. The
# counter's allocations there are not the GPU's: the CUDA kernels differ from the CPU
# ones the fake run takes (README: "attention and convolution take other kernels on each
# device"; the transformer's count is 4-5% off in fp32, the CNN's 10-20%), so the order
# and sizes of the blocks that fragment the segments differ. cuDNN's convolution
# workspaces (the CNN in fp32 and autocast) and the attention kernels' buffers are not
# in the events at all. Not a tolerance: these cases are the model's known gap.
MISSES = {(m, d, o) for m in ("transformer", "transformer_ckpt")
          for d in ("fp32", "bf16_autocast", "bf16_weights") for o in ("adamw", "sgd")}
MISSES |= {("cnn", d, o) for d in ("fp32", "bf16_autocast") for o in ("adamw", "sgd")}


def held(start_allocated: int) -> list:
    """What the allocator holds beside the step, as allocations made first: the two cuBLAS
    workspaces (32 MiB each, own segments; the first case creates the second inside its
    step, README) and the rest of what it held before the case in 1 MiB pieces (small
    pool)."""
    rest = max(0, start_allocated - 2 * WORKSPACE)
    return [WORKSPACE] * 2 + [MiB] * (rest // MiB)


@pytest.mark.parametrize("fact", RECORD["allocator_rounding"],
                         ids=lambda f: str(f["request_bytes"]))
def test_one_request_allocates_and_reserves_as_recorded(fact):
    from doctor.memory import allocator

    al = allocator.replay([("a", 1, fact["request_bytes"])])
    assert (al.allocated, al.reserved) == (fact["allocated_delta_bytes"],
                                           fact["reserved_delta_bytes"])


def test_freed_blocks_are_reused_split_and_merged():
    from doctor.memory import allocator

    # two 6 MiB blocks share one 20 MiB segment; freed and merged, 12 MiB fits there again
    al = allocator.replay([("a", 1, 6 * MiB), ("a", 2, 6 * MiB), ("f", 1), ("f", 2),
                           ("a", 3, 12 * MiB), ("a", 4, 600 << 10), ("a", 5, 600 << 10),
                           ("a", 6, 600 << 10), ("f", 4), ("r", 5, 0)])
    assert al.peak_reserved == 20 * MiB + 2 * MiB     # one large, one small segment
    assert al.allocated == 12 * MiB + (600 << 10)


def test_replayed_reserved_peak_matches_the_h200_record():
    """Every recorded case: within 10% of max_memory_reserved, or (MISSES, named and
    explained above) below it."""
    import doctor.memory.fake as fake
    from doctor.memory import allocator
    from memory_estimate import estimate

    real_run_steps = fake.run_steps
    fake.run_steps = functools.partial(real_run_steps, record=True)
    try:
        rows = []
        for case in RECORD["cases"]:
            key = (case["model"], case["dtype"], case["optimizer"])
            events = estimate(*key, target="cuda")["events"]
            predicted = allocator.reserved_peak(events, held(case["cuda"]["start_allocated_bytes"]))
            rows.append((key, predicted, case["cuda"]["peak_reserved_bytes"]))
    finally:
        fake.run_steps = real_run_steps
    table = "\n".join(f"{k} {p / MiB:.0f} MiB vs {r / MiB:.0f} MiB ({100 * (p - r) / r:+.1f}%)"
                      for k, p, r in rows)
    within = [k for k, p, r in rows if abs(p - r) <= 0.10 * r]
    assert set(within) == {k for k, _, _ in rows} - MISSES, table
    assert all(p < r for k, p, r in rows if k in MISSES), table
