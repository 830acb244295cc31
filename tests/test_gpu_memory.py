"""gpu-memory-estimate: the fake-tensor count against the real CPU peak (the profiler's
allocator events of the same steps), and the real CLI's verdict against the target GPU."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from conftest import ROOT, one_line_exit_2, result_of, run_doctor, validate_report

torch = pytest.importorskip("torch")

sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "benchmarks" / "gpu")]
FIXTURES = ROOT / "fixtures" / "gpu-memory-estimate"
GiB = 1 << 30
ID = "gpu-memory-estimate"


@pytest.mark.parametrize("model,dtype,opt", [
    ("mlp", "fp32", "adamw"),               # the optimizer step's peak (AdamW's temporaries)
    ("cnn", "bf16_autocast", "sgd"),        # convolution's backward workspace
    ("buffers_tied", "bf16_weights", "adamw"),   # buffers, one tied parameter, bf16 state
    ("transformer_ckpt", "fp32", "sgd"),    # checkpointed layers recomputed in backward
])
def test_cpu_estimate_within_2_percent_of_the_real_peak(model, dtype, opt):
    """The oracle: the same steps run for real on CPU under torch's profiler."""
    from memory_estimate import estimate
    from record_memory import run_case

    torch.set_num_threads(1)
    real = run_case(torch.device("cpu"), model, dtype, opt)["profiler"]["peak_bytes"]
    est = estimate(model, dtype, opt)
    assert abs(est["peak_bytes"] - real) <= 0.02 * real, (est["peak_bytes"], real)
    parts = est["breakdown_bytes"]
    assert sum(parts.values()) == est["peak_bytes"]
    assert parts["parameters"] > 0 and parts["activations"] + parts["temporaries"] > 0


def copy(case: str, tmp_path: Path) -> Path:
    repo = tmp_path / case
    shutil.copytree(FIXTURES / case, repo, ignore=shutil.ignore_patterns("case.yaml"))
    return repo


def run(repo: Path, *args: str):
    proc = run_doctor("run", "--repo", str(repo), "--only", ID, "--json",
                      str(repo.parent / "r.json"), *args, timeout=180)
    doc = validate_report(json.loads((repo.parent / "r.json").read_text()))
    return proc, result_of(doc, ID), doc["facts"].get("gpu_memory_estimate")



H200 = json.loads((ROOT / "tests" / "data" / "gpu" / "memory_cuda_h200.json").read_text())
MiB = 1 << 20

# Where the allocator replay's reserved peak misses the H200's max_memory_reserved by more
# than 10%: always short, by whole segments. The transformers (16-31% short) by 2 or 3
# segments of 64 MiB, the size of their logits and of the loss's tensors: in the real step
# those freed blocks were split by smaller requests and could not be reused, where the
# replay reuses them. The CNN in fp32 and autocast (16-21%) by one or two 20 MiB segments
# (the large pool's segment for requests of 1-10 MiB). Both are where the CUDA kernels are
# not the CPU's the fake run takes: cuDNN's convolutions and the fused attention kernels
# allocate buffers inside themselves (the README: the GPU's allocated count differs there,
# -4% for the transformer in fp32, 10-20% for the CNN), so the order and sizes of the
# requests that split the cached blocks differ. Ruled out with the recorded figures: the
# 64 MiB tensors themselves (buffers_tied has the same logits and loss, and the replay is
# exact there), the steps counted (a third step reserves nothing more in the replay), the
# size and number of attention backward workspaces (up to 3 x the query's size in fp32
# at the attention's backward: no change), the fake tensors' out-of-place adds where CUDA
# adds in place (linear's bias, autograd's gradient accumulation: +20 MiB at most). Not a
# tolerance: these cases are the replay's known gap, which the check's margin states.
RESERVED_MISSES = {(m, d, o) for m in ("transformer", "transformer_ckpt")
                   for d in ("fp32", "bf16_autocast", "bf16_weights") for o in ("adamw", "sgd")}
RESERVED_MISSES |= {("cnn", d, o) for d in ("fp32", "bf16_autocast") for o in ("adamw", "sgd")}
# The replay equals max_memory_reserved to the byte (the rest is within 6%)
EXACT = {("mlp", d, o) for d in ("fp32", "bf16_autocast", "bf16_weights") for o in ("adamw", "sgd")}
EXACT |= {("buffers_tied", d, o) for d in ("fp32", "bf16_autocast") for o in ("adamw", "sgd")}


@pytest.mark.parametrize("case", H200["cases"], ids=lambda c: "-".join(
    (c["model"], c["dtype"], c["optimizer"])))
def test_cuda_estimate_against_the_recorded_h200_peaks(case):
    """Issue 30's GPU acceptance, from the recorded facts (CI has no GPU).

    Allocated: the CUDA estimate (512-byte blocks, foreach, no CPU workspace) plus what the
    allocator held before the case (the cuBLAS workspaces) against the H200's
    max_memory_allocated over the same steps: within 4.2% in all 30 cases.

    Reserved: the step's allocations and frees replayed through the model of the caching
    allocator (doctor/memory/allocator.py, what the check judges) against
    max_memory_reserved: within 10% in 14 of 30, to the byte in the 10 of EXACT (the MLP's
    bf16_weights only since its estimate builds the model in float32 and then converts it,
    as the recording does: benchmarks/memory_estimate.py to_dtype; it was 9.6% short and
    3.2% over), 16-31% short in the 16 of RESERVED_MISSES, for the reasons given there."""
    from doctor.memory import allocator, judge
    from memory_estimate import estimate, recorded_held

    assert judge.WORKSPACE_BYTES == sum(allocator.WORKSPACES)
    key = (case["model"], case["dtype"], case["optimizer"])
    held = recorded_held(case["cuda"]["start_allocated_bytes"])
    est = estimate(*key, target="cuda", record=True)
    real = case["cuda"]["peak_allocated_bytes"]
    assert abs(est["peak_bytes"] + sum(held) - real) <= 0.10 * real, (est["peak_bytes"], real)
    modelled = allocator.reserved_peak(est["events"], held)
    reserved = case["cuda"]["peak_reserved_bytes"]
    said = f"replay {modelled / MiB:.0f} MiB, recorded {reserved / MiB:.0f} MiB"
    if key in RESERVED_MISSES:   # the known gap: short by more than 10%, never above
        assert modelled < 0.9 * reserved, said
    elif key in EXACT:
        assert modelled == reserved, said
    else:
        assert abs(modelled - reserved) <= 0.10 * reserved, said


def test_batch_too_big_for_h100_is_an_error_that_names_the_batch_that_fits(tmp_path):
    repo = copy("fail_batch_too_big_for_h100", tmp_path)
    proc, res, facts = run(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert res["status"] == "fail" and res["severity"] == "error"
    (f,) = res["findings"]
    assert f["location"] == {"path": "slurm/train.sbatch", "line": 5}
    assert "more than the 79.6 GiB of the GPU (--gpus=h100:4" in f["message"]
    # 99 was the batch whose ALLOCATED peak fit with a flat 10% margin; what runs out is
    # what the caching allocator reserves (the replay: 107 GiB reserved at 128 for 91 GiB
    # allocated), and with that the batch that fits is 84 (test_the_batch_it_names_fits)
    assert "a batch of 84 per rank (now 128)" in f["fix"]
    assert "activation checkpointing" in f["fix"] and "bf16 autocast" in f["fix"]
    assert facts["verdict"] == "does not fit" and facts["batch_size"] == 128
    assert facts["peak_bytes"] > facts["gpu_memory_bytes"] == 81559 << 20
    assert facts["breakdown_bytes"]["ddp_buckets"] == facts["breakdown_bytes"]["parameters"]
    assert facts["reserved_peak_bytes"] > facts["peak_bytes"]
    assert "reserved by the caching allocator" in f["message"]
    assert "caching allocator" in facts["reserved_source"]
    assert "not yet fitted on a real GPU" in facts["margin_source"]
    assert not list(tmp_path.rglob("__pycache__"))   # read-only: nothing written in the repo


def test_the_batch_it_names_fits(tmp_path):
    repo = copy("fail_batch_too_big_for_h100", tmp_path)
    model = repo / "lm" / "model.py"
    model.write_text(model.read_text().replace('"BATCH", "128"', '"BATCH", "84"'))
    proc, res, facts = run(repo)
    assert proc.returncode == 0 and res["status"] == "pass", res
    assert facts["reserved_peak_bytes"] + facts["margin_bytes"] <= facts["gpu_memory_bytes"]


def test_gpu_memory_flag_and_the_margin(tmp_path):
    repo = copy("pass_batch_fits_h100", tmp_path)
    proc, res, facts = run(repo, "--gpu-memory", "1TB")
    assert proc.returncode == 0 and res["status"] == "pass"
    assert facts["gpu_memory_source"] == "--gpu-memory/gpu_memory 1TB"
    # the verdict judges what the caching allocator reserves (the replay), not the
    # allocated peak: above the reserved peak, below it and its margin, a warning with the
    # allocator's remedy
    need = facts["reserved_peak_bytes"]
    assert need >= facts["peak_bytes"]
    between = f"{(need + 0.5 * GiB) / GiB:.2f}GiB"
    proc, res, facts = run(repo, "--gpu-memory", between)
    assert proc.returncode == 0, proc.stdout
    (f,) = res["findings"]
    assert f["severity"] == "warning" and "less than the margin" in f["message"]
    assert "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in f["fix"]
    assert facts["verdict"] == "within the margin"
    proc, res, facts = run(repo, "--gpu-memory", "2GB")
    assert proc.returncode == 1 and facts["verdict"] == "does not fit"


def test_a_reserved_peak_above_the_gpu_with_the_tensors_below_it_is_a_warning(tmp_path):
    """Past what it reserves, the caching allocator frees its cached blocks and retries
    before it runs out; the replay only grows. So a GPU between the allocated peak and the
    replay's reserved peak is a warning that says so, never a "does not fit" error (the
    review's growing-torch.cat model was refused at 16 GiB with 10.4 GiB allocated)."""
    repo = copy("pass_batch_fits_h100", tmp_path)
    proc, res, facts = run(repo, "--gpu-memory", "1TB")
    peak, need = facts["peak_bytes"], facts["reserved_peak_bytes"]
    assert need - peak > 2 * MiB, facts
    proc, res, facts = run(repo, "--gpu-memory", f"{(peak + need) // 2 // MiB}MiB")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (f,) = res["findings"]
    assert f["severity"] == "warning" and facts["verdict"] == "within the margin", f
    assert "frees its cache and retries" in f["message"], f["message"]


def test_a_job_with_expandable_segments_is_judged_by_its_allocated_peak(tmp_path):
    """expandable_segments:True grows segments in place: the 2/20 MiB replay does not
    apply, and the fact says why it is not modelled."""
    repo = copy("pass_batch_fits_h100", tmp_path)
    job = repo / "slurm" / "train.sbatch"
    job.write_text(job.read_text().replace(
        "srun python", "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\nsrun python"))
    proc, res, facts = run(repo, "--gpu-memory", "1TB")
    assert facts["reserved_peak_bytes"] is None, facts
    assert "expandable_segments" in facts["reserved_source"], facts


def test_bad_gpu_memory_is_exit_2(tmp_path):
    repo = copy("pass_batch_fits_h100", tmp_path)
    one_line_exit_2(run_doctor("run", "--repo", str(repo), "--only", ID,
                               "--gpu-memory", "lots"), "--gpu-memory", "'lots'")


@pytest.mark.parametrize("option,value,needle", [
    ("precision", "fp8", "'fp8' is not one of fp32, bf16-autocast"),
    ("parallel", "zero3", "'zero3' is not one of ddp, ddp-bucket-view, none"),
    ("optimizer", "lion", "'lion' is neither adamw"),
    ("gpu_memory", "lots", "'lots' is not a size"),
])
def test_bad_option_value_is_exit_2_before_anything_runs(tmp_path, option, value, needle):
    repo = copy("pass_batch_fits_h100", tmp_path)
    marker = tmp_path / "ran"
    model = repo / "lm" / "model.py"
    model.write_text(f"open({str(marker)!r}, 'w').close()\n" + model.read_text())
    (repo / "doctor.yaml").write_text(f'smoke: {{model: "lm.model:build"}}\n'
                                      f"options: {{{ID}: {{{option}: {value}}}}}\n")
    one_line_exit_2(run_doctor("run", "--repo", str(repo), "--only", ID),
                    f"options.{ID}.{option}: {needle}")
    assert not marker.exists()


# parallel: fsdp (FSDP2): tests/test_memory_fsdp.py


def test_lumi_partition_gpu_memory_and_rocm_remedy(tmp_path):
    repo = copy("pass_batch_fits_h100", tmp_path)
    script = repo / "slurm" / "train.sbatch"
    script.write_text(script.read_text().replace("#SBATCH --gpus=h100:4",
                                                 "#SBATCH --partition=small-g\n#SBATCH --gpus=4"))
    (repo / "doctor.yaml").write_text('site: lumi\nsmoke: {model: "lm.model:build"}\n'
                                      "options: {gpu-memory-estimate: {precision: bf16}}\n")
    model = repo / "lm" / "model.py"
    model.write_text(model.read_text().replace('"BATCH", "8"', '"BATCH", "80"'))
    proc, res, facts = run(repo)
    assert facts["gpu_memory_bytes"] == 64 * GiB and facts["precision"] == "bf16"
    assert "partition small-g's gpu_memory 64GiB (site profile lumi)" in facts["gpu_memory_source"]
    if res["findings"]:   # a 64 GiB GCD: the fix names HIP's allocator setting near the limit
        assert res["findings"][0]["location"] == {"path": "slurm/train.sbatch", "line": 5}


def test_hard_coded_cuda_cannot_be_estimated_at_its_line(tmp_path):
    repo = copy("pass_batch_fits_h100", tmp_path)
    (repo / "lm" / "model.py").write_text(
        "import torch\n\n\ndef build():\n    net = torch.nn.Linear(8, 8)\n"
        "    return net, torch.randn(4, 8, device='cuda')\n")
    proc, res, facts = run(repo)
    assert proc.returncode == 0   # a warning: never "fits", never an error
    (f,) = res["findings"]
    assert f["severity"] == "warning" and f["location"] == {"path": "lm/model.py", "line": 6}
    assert "cannot estimate" in f["message"] and "puts tensors on a GPU itself" in f["message"]
    assert facts["verdict"] == "cannot estimate"


def test_static_and_no_smoke_never_run_the_factory(tmp_path):
    repo = copy("pass_batch_fits_h100", tmp_path)
    marker = tmp_path / "ran"
    model = repo / "lm" / "model.py"
    model.write_text(f"open({str(marker)!r}, 'w').close()\n" + model.read_text())
    for flag in ("--static", "--no-smoke"):   # asked for alone: it cannot run there
        proc = run_doctor("run", "--repo", str(repo), "--only", ID, flag)
        one_line_exit_2(proc, "gpu-memory-estimate")
        assert not marker.exists()
