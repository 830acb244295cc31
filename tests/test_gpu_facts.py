"""Facts recorded on real devices (tests/data/gpu/, see README.md there) stay usable in CI.

- memory_*.json (benchmarks/gpu/record_memory.py): the grid of model × dtype × optimizer is
  whole, sizes are whole bytes, the profiler's count holds every tensor of a case (its
  baseline is exactly the parameters, buffers and inputs on the CPU), and the models in
  benchmarks/gpu/models.py are still the ones recorded (a changed layer or batch shape means
  the figures must be recorded again, or issue 30's estimate would be judged against another
  model's peak).
- smoke_*.json (benchmarks/gpu/record_smoke.py): the ranks a real smoke left behind are
  classified again by doctor/smoke/classify.py, and must be judged as the doctor judged them
  when they were recorded.
"""
from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import pytest

from conftest import ROOT

DATA = ROOT / "tests" / "data" / "gpu"
BENCH = ROOT / "benchmarks" / "gpu"
MEMORY = sorted(DATA.glob("memory_*.json"))
SMOKES = sorted(DATA.glob("smoke_*.json"))
RERECORD = "record the facts again (tests/data/gpu/README.md says how)"


def _load(path: Path) -> dict:
    return json.loads(path.read_text())


def _bytes_fields(obj, where=""):
    """Every (key path, value) whose key ends in _bytes."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k.endswith("_bytes"):
                yield f"{where}.{k}", v
            yield from _bytes_fields(v, f"{where}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _bytes_fields(v, f"{where}[{i}]")


def test_facts_are_there():
    assert MEMORY, f"no memory_*.json in {DATA}"
    assert SMOKES, f"no smoke_*.json in {DATA}"


@pytest.mark.parametrize("path", MEMORY, ids=lambda p: p.name)
def test_memory_facts_well_formed(path):
    pytest.importorskip("torch")
    sys.path.insert(0, str(BENCH))
    try:
        from record_memory import DTYPES, OPTIMIZERS, SCHEMA, STEPS
        from models import MODELS
    finally:
        sys.path.remove(str(BENCH))
    doc = _load(path)
    assert doc["schema"] == SCHEMA
    assert doc["units"].startswith("bytes (keys *_bytes)")
    assert doc["host"]["torch"] and doc["host"]["recorded_utc"]
    keys = [(c["model"], c["dtype"], c["optimizer"]) for c in doc["cases"]]
    assert len(keys) == len(set(keys))
    assert set(keys) == set(itertools.product(MODELS, DTYPES, OPTIMIZERS)), RERECORD
    for where, value in _bytes_fields(doc):
        assert isinstance(value, int) and value >= 0, (where, value)
    for c in doc["cases"]:
        case = f"{c['model']}/{c['dtype']}/{c['optimizer']}"
        prof, tensors = c["profiler"], c["param_bytes"] + c["buffer_bytes"] + c["input_bytes"]
        assert c["steps"] == STEPS
        assert c["grad_bytes"] == c["param_bytes"], case       # every parameter trains
        if c["optimizer"] == "sgd":                             # one momentum buffer each
            assert c["optimizer_state_bytes"] == c["param_bytes"], case
        else:                                                   # exp_avg, exp_avg_sq, step
            assert 0 <= c["optimizer_state_bytes"] - 2 * c["param_bytes"] <= 8 * 64, case
        if c["device"] == "cpu":
            # the count starts before the model is built: after the setup, exactly the
            # model's and the batch's tensors are alive
            assert prof["baseline_bytes"] == tensors, case
        else:
            assert prof["baseline_bytes"] >= tensors, case
        assert prof["peak_bytes"] == max(prof["first_step_peak_bytes"],
                                         prof["steady_peak_bytes"]), case
        # the first step holds at least the weights, their gradients and the new state
        assert prof["first_step_peak_bytes"] >= (
            tensors + c["grad_bytes"] + c["optimizer_state_bytes"]), case
        if "cuda" in c:
            # max_memory_allocated is exactly the profiler's count plus what the allocator
            # held before the case (recorded on an H200: 32 MiB after the first matmul,
            # 65-66 MiB once backward had run, kept across empty_cache(): most likely
            # cuBLAS's per-handle workspaces), so the estimator can be checked either way
            cu, held = c["cuda"], c["cuda"]["start_allocated_bytes"]
            assert cu["baseline_allocated_bytes"] == held + prof["baseline_bytes"], case
            assert cu["first_step"]["max_allocated_bytes"] == (
                held + prof["first_step_peak_bytes"]), case
            assert cu["steady"]["max_allocated_bytes"] == held + prof["steady_peak_bytes"], case
            for part in ("first_step", "steady"):
                assert cu[part]["max_reserved_bytes"] >= cu[part]["max_allocated_bytes"], case
    if doc["host"]["device"] == "cuda":
        assert doc["host"]["gpu"] and doc["host"]["driver"] and doc["host"]["cuda"]
        assert {s["stage"] for s in doc["cuda_context"]} >= {"after_init", "after_all_cases"}
        for row in doc["allocator_rounding"]:
            assert row["allocated_delta_bytes"] >= row["request_bytes"], row
            assert row["allocated_delta_bytes"] % 512 == 0, row


@pytest.mark.parametrize("path", MEMORY, ids=lambda p: p.name)
def test_memory_facts_are_of_these_models(path):
    """benchmarks/gpu/models.py still builds the recorded models with the recorded batches."""
    torch = pytest.importorskip("torch")
    sys.path.insert(0, str(BENCH))
    try:
        from models import MODELS
    finally:
        sys.path.remove(str(BENCH))
    doc = _load(path)
    for name, (build, _batch, _loss, shapes) in MODELS.items():
        with torch.device("meta"):
            params = sum(p.numel() for p in build().parameters())
        cases = [c for c in doc["cases"] if c["model"] == name]
        assert {c["params"] for c in cases} == {params}, (name, RERECORD)
        assert all(c["batch"] == shapes for c in cases), (name, RERECORD)


def _remap(obj, old_new: list):
    """The recorded absolute paths (the doctor's checkout, the demo repo) as they are here."""
    if isinstance(obj, str):
        for old, new in old_new:
            obj = obj.replace(old, new)
        return obj
    if isinstance(obj, list):
        return [_remap(v, old_new) for v in obj]
    if isinstance(obj, dict):
        return {k: _remap(v, old_new) for k, v in obj.items()}
    return obj


def _replay(doc: dict, run: dict):
    from doctor.smoke.launcher import RankOutcome, SmokePlan, SmokeRun

    repo = (ROOT / "fixtures" / "demo").resolve()
    old_new = [(doc["repo"], str(repo)), (doc["doctor_root"], str(ROOT))]
    plan = SmokePlan(repo=repo, model=run["plan"]["model"], timeout_s=run["plan"]["timeout_s"],
                     world_size=run["plan"]["world_size"], backend=run["backend_requested"])
    ranks = [RankOutcome(**_remap(r, old_new)) for r in run["ranks"]]
    return SmokeRun(plan=plan, ranks=ranks, port=run["facts"]["port"], started_at=min(
        e["t"] for r in run["ranks"] for e in r["events"] if "t" in e),
        duration_s=run["facts"]["duration_s"], deadline_hit=run["deadline_hit"])


@pytest.mark.parametrize("path", SMOKES, ids=lambda p: p.name)
def test_recorded_smoke_judged_as_recorded(path):
    from doctor.smoke.classify import classify

    doc = _load(path)
    assert doc["gpu"].get("torch"), "the record names torch's view of the GPUs"
    for run in doc["runs"]:
        got = classify(_replay(doc, run))
        want = run["classified"]
        assert [(f.rank, f.kind, f.root_cause) for f in got] == [
            (c["rank"], c["kind"], c["root_cause"]) for c in want], run["backend_requested"]
        for f, c in zip(got, want):
            assert f.message == c["message"], (
                f"{path.name} [{run['backend_requested']}]: the classifier now says\n"
                f"  {f.message}\nwhere the doctor said, on the recording node,\n"
                f"  {c['message']}\nIf the new judgment is the intended one, {RERECORD}.")
            exc = next((e for e in run["ranks"][f.rank]["events"]
                        if e.get("event") == "exception"), None)
            if f.kind == "exception":
                # the user sees the real error: its type and its first line
                assert exc and exc["type"] in f.message
                assert exc["message"].splitlines()[0][:150] in f.message
