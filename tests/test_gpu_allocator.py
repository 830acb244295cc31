"""doctor/memory/allocator.py, the model of PyTorch's CUDA caching allocator: the rounding
of single requests against the facts recorded on an H200 (tests/data/gpu/memory_cuda_h200.json,
see its README), its split and merge, what the memory child holds before the step, and the
judge's margin over its reserved peak. The 30 recorded training steps' max_memory_reserved:
tests/test_gpu_memory.py::test_cuda_estimate_against_the_recorded_h200_peaks."""
from __future__ import annotations

import json

import pytest

from conftest import ROOT

torch = pytest.importorskip("torch")

RECORD = json.loads((ROOT / "tests/data/gpu/memory_cuda_h200.json").read_text())
MiB = 1 << 20
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


def test_ddp_buckets_and_the_workspaces_are_held_before_the_step():
    """The child's reserved peak: DDP's buckets (1 MiB, then 25 MiB each) and the cuBLAS
    workspaces are allocated first; no events (nothing recorded) gives None, and the check
    then judges the allocated peak with its flat margin."""
    from doctor.memory import allocator
    from doctor.memory.child import reserved

    assert allocator.ddp_buckets(60 * MiB) == [MiB, 25 * MiB, 25 * MiB, 9 * MiB]
    assert allocator.ddp_buckets(0) == []
    res = {"events": [("a", 1, 6 * MiB)], "trainable_bytes": 30 * MiB}
    reserved(res, ddp=True)
    # segments: the workspaces 2 x 32 MiB and 2 MiB (the two 1 MiB fill one small
    # segment); the buckets 2 MiB (1 MiB: a small segment of its own), 26 MiB (25 MiB,
    # rounded to 2 MiB) and 20 MiB (4 MiB, which the step's 6 MiB then shares)
    assert "events" not in res
    assert res["reserved_peak_bytes"] == (64 + 2 + 2 + 26 + 20) * MiB
    res = {"events": [], "trainable_bytes": 30 * MiB}
    reserved(res, ddp=True)
    assert res["reserved_peak_bytes"] is None


def test_the_margin_over_the_reserved_peak_leaves_out_the_workspaces_it_holds():
    from doctor.memory import judge

    gib = 1 << 30
    assert judge.margin(10 * gib, 1) == judge.CONTEXT_BYTES + gib   # flat: as before
    assert judge.margin(10 * gib, 2, modelled=True) == \
        judge.CONTEXT_ONLY_BYTES + judge.NCCL_BYTES + gib
    for modelled in (False, True):
        room = judge.room(80 * gib, 4, modelled)
        assert room + judge.margin(room, 4, modelled) <= 80 * gib
        assert room + 1 + judge.margin(room + 1, 4, modelled) > 80 * gib - 2
