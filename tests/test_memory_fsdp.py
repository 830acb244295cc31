"""gpu-memory-estimate with FSDP2 (`parallel: fsdp`): the fake-process-group count against
two real gloo ranks by the allocator's own count, the wrapping it assumes, and the real
CLI's verdict (a warning, never an error: the job's own fully_shard calls are not read)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, result_of, run_doctor, validate_report

torch = pytest.importorskip("torch")

sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "benchmarks" / "gpu")]
FIXTURES = ROOT / "fixtures" / "gpu-memory-estimate"
ID = "gpu-memory-estimate"


def test_fsdp_estimate_is_each_real_ranks_peak():
    """The oracle: the same 3 steps of FSDP2 on two real gloo ranks, each rank's peak by the
    allocator's count on every thread. (The profiler's running sum is no oracle here: it
    misses the frees gloo's worker thread makes, a race, so it reads 0-10% high at random.)
    The transformer's layers are sharded one by one, as fsdp_wrap assumes, and gloo's
    reduce-scatter clones each layer's gradients."""
    from memory_estimate import ddp_runs

    code = ("import sys, json; sys.path[:0] = sys.argv[1:]; "
            "from memory_estimate import estimate; "
            "print(json.dumps(estimate('transformer', 'fp32', 'sgd', fsdp=True)))")
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "benchmarks"),
                          str(ROOT / "benchmarks" / "gpu"), str(ROOT)],
                         capture_output=True, text=True, timeout=180, check=True).stdout
    est = json.loads(out.strip().splitlines()[-1])["peak_bytes"]
    ranks = ddp_runs("transformer", "fp32", "sgd", "fsdp")
    assert [r["counted"] for r in ranks] == ["allocator", "allocator"]
    for r in ranks:
        assert abs(est - r["peak_bytes"]) <= 0.02 * r["peak_bytes"], (est, ranks)


def test_fsdp_wrap_shards_the_repeated_blocks_then_the_root():
    from models import MLP, Transformer
    from torch import nn

    from doctor.memory.fake import fsdp_wrap

    with torch.device("meta"):
        tf, mlp = Transformer(), MLP()
        # blocks of mixture-of-experts layers: each block holds a stack of experts
        moe = nn.Sequential(nn.Embedding(8, 4), nn.ModuleList(
            nn.Sequential(nn.Linear(4, 4), nn.ModuleList(nn.Linear(4, 4) for _ in range(4)))
            for _ in range(3)))
    assert fsdp_wrap(tf) == [*tf.layers, tf]        # each layer, then the root
    assert fsdp_wrap(mlp) == [mlp]                  # mixed layers: the root only
    assert fsdp_wrap(moe) == [*moe[1], moe]         # the outermost stack's blocks only


def run(repo: Path, *args: str):
    proc = run_doctor("run", "--repo", str(repo), "--only", ID, "--json",
                      str(repo.parent / "r.json"), *args, timeout=180)
    doc = validate_report(json.loads((repo.parent / "r.json").read_text()))
    return proc, result_of(doc, ID), doc["facts"].get("gpu_memory_estimate")


def test_fsdp_is_estimated_over_the_jobs_ranks_and_never_an_error(tmp_path):
    repo = tmp_path / "lm"
    shutil.copytree(FIXTURES / "pass_batch_fits_h100", repo,
                    ignore=shutil.ignore_patterns("case.yaml"))
    (repo / "doctor.yaml").write_text('smoke: {model: "lm.model:build"}\n'
                                      f"options: {{{ID}: {{parallel: fsdp}}}}\n")
    proc, res, facts = run(repo, "--gpu-memory", "1TB")
    assert proc.returncode == 0 and res["status"] == "pass", proc.stdout + proc.stderr
    assert facts["verdict"] == "fits" and facts["world_size"] == 4   # 1 node x 4 tasks
    assert "sharded over 4 ranks, assuming fully_shard (FSDP2) on each block" in res["reason"]
    assert "not read" in facts["fsdp_wrap"]
    parts = facts["breakdown_bytes"]
    assert "ddp_buckets" not in parts
    # each rank holds a quarter of the fp32 parameters' bytes (its shards), and at the peak
    # the all-gathered blocks in use (the root: the embeddings and the tied head): not all
    whole, root = facts["parameters"] * 4, 32000 * 512 * 4   # root: the tied embedding
    assert whole / 4 + root <= parts["parameters"] < whole, (parts, whole)
    # more than the GPU: the wrapping is assumed, so a warning (exit 0), not an error
    proc, res, facts = run(repo, "--gpu-memory", "1GB")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (f,) = res["findings"]
    assert f["severity"] == "warning" and facts["verdict"] == "does not fit"
    assert "assuming fully_shard (FSDP2)" in f["message"] and "with FSDP" not in (f["fix"] or "")
