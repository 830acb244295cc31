"""Issue 26: GPU advice follows what the job asks for, and the platform comes from
structured facts. Through the real CLI:
- the platform is read from the container image's own name, its flags and the modules
  loaded, never from a word in a bind path (`-B /scratch/.../cuda-bench` made a LUMI job
  a CUDA one);
- `CUDA_VISIBLE_DEVICES=""` in a job that requests no GPU hides nothing it wants;
- slurm-gpu-mismatch proposes `--gpus-per-node=N` only from a GPU count: not from ranks
  counted from the CPUs (`--nproc_per_node=$SLURM_CPUS_PER_TASK` gave `=75`), not on a
  partition without GPUs, not from a Lightning `accelerator: cpu` config."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import result_of, run_json

HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=01:00:00\n"


def repo_with(tmp_path: Path, script: str, files: dict | None = None) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    (repo / "job.sbatch").write_text(script)
    (repo / "train.py").write_text("import torch\n")
    for name, text in (files or {}).items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    return repo


def run(repo: Path, check: str, *extra: str) -> tuple:
    code, doc = run_json("--repo", str(repo), "--only", check, *extra)
    return code, result_of(doc, check), doc


# -- the platform -----------------------------------------------------------------------

LUMI = ("#SBATCH --partition=small-g\n#SBATCH --account=project_465000123\n"
        "#SBATCH --gpus-per-node=8\n")
BIND = "-B /scratch/project_465000123/cuda-bench:/workdir"


@pytest.mark.parametrize("head,body,platform", [
    # the case: a LUMI job (its GPU partition and project), a bind path with
    # "cuda" in it: ROCm (the bind path made it "cuda" against "rocm": no platform)
    (LUMI, f"srun singularity exec {BIND} images/pytorch.sif python train.py", "rocm"),
    (LUMI, f"srun singularity exec {BIND} /appl/local/containers/sif-images/"
           "lumi-pytorch-rocm-6.2.4.sif python train.py", "rocm"),
    # LUMI's bindings module, an image named for neither stack, no LUMI partition
    ("", "module use /appl/local/containers/ai-modules\nmodule load singularity-AI-bindings\n"
         f"srun singularity exec {BIND} /scratch/project_465000123/cuda-bench/pytorch.sif "
         "python train.py", "rocm"),
    ("", "module load singularity-AI-bindings/24.03\n"
         f"srun singularity exec {BIND} images/pytorch.sif python train.py", "rocm"),
    # nothing but the bind path: no platform (it was "cuda")
    ("", f"srun singularity exec {BIND} images/pytorch.sif python train.py", None),
    # structured NVIDIA signs still count: the flag, a registry image, a toolkit module
    ("", f"srun singularity exec --nv {BIND} images/pytorch.sif python train.py", "cuda"),
    ("", "srun --container-image=nvcr.io#nvidia/pytorch:24.01-py3 python train.py", "cuda"),
    ("", "module load cudatoolkit/12.2\nsrun python train.py", "cuda"),
    ("", "module load PyTorch/2.1.2-foss-2023a-CUDA-12.1.1\nsrun python train.py", "cuda"),
    # a directory named rocm above a CUDA image is not a ROCm sign either
    ("", "srun singularity exec -B /project/rocm-tests:/t /images/ngc-pytorch-24.01.sif "
         "python train.py", "cuda"),
])
def test_platform_from_structured_facts(tmp_path, head, body, platform):
    repo = repo_with(tmp_path, HEAD + head + body + "\n")
    _, _, doc = run(repo, "hip-alloc-conf", "--static")
    got = doc["facts"]["job"]["job.sbatch"]["platform"]
    assert got["platform"] == platform, got
    assert not any("cuda-bench" in e or "rocm-tests" in e
                   for e in got["evidence"] + got["against"]), got


# -- an empty visibility variable -------------------------------------------------------

def test_empty_cuda_visible_devices_in_a_cpu_job_is_fine(tmp_path):
    """A preprocessing job that requests no GPU and hides the GPUs: what it means."""
    repo = repo_with(tmp_path, HEAD + "#SBATCH --cpus-per-task=32\n"
                     'export CUDA_VISIBLE_DEVICES=""\nsrun python train.py\n')
    code, res, _ = run(repo, "gpu-not-visible", "--no-smoke")
    assert code == 0 and res["findings"] == [], res


def test_empty_cuda_visible_devices_in_a_gpu_job_is_an_error(tmp_path):
    repo = repo_with(tmp_path, HEAD + "#SBATCH --gpus-per-node=4\n"
                     'export CUDA_VISIBLE_DEVICES=""\nsrun python train.py\n')
    code, res, _ = run(repo, "gpu-not-visible", "--no-smoke")
    assert code == 1 and res["severity"] == "error"
    assert res["findings"][0]["location"] == {"path": "job.sbatch", "line": 5}


def test_empty_visibility_on_a_gpu_partition_without_a_request_is_a_warning(tmp_path):
    """The settings say the job is LUMI's; small-g's nodes have 8 GPUs (the profile)."""
    repo = repo_with(tmp_path, HEAD + "#SBATCH --partition=small-g\n"
                     "export ROCR_VISIBLE_DEVICES=\nsrun python train.py\n",
                     {"doctor.yaml": "site: lumi\n"})
    code, res, _ = run(repo, "gpu-not-visible", "--no-smoke")
    assert code == 0 and res["severity"] == "warning", res
    assert "the job requests no GPU, but the nodes of its partition small-g have GPUs" \
        in res["findings"][0]["message"]
    (repo / "job.sbatch").write_text(HEAD + "#SBATCH --partition=small\n"
                                     "export ROCR_VISIBLE_DEVICES=\nsrun python train.py\n")
    code, res, _ = run(repo, "gpu-not-visible", "--no-smoke")
    assert code == 0 and res["findings"] == [], res


# -- slurm-gpu-mismatch's proposals ------------------------------------------------------

def mismatch(repo: Path, *extra: str) -> list:
    _, res, _ = run(repo, "slurm-gpu-mismatch", "--static", *extra)
    return res["findings"]


@pytest.mark.parametrize("count,setup", [
    ("$SLURM_CPUS_PER_TASK", ""),                 # the issue's `--gpus-per-node=75`
    ("${NWORKERS}", "NWORKERS=$SLURM_CPUS_PER_TASK\n"),
])
def test_ranks_counted_from_cpus_get_no_gpu_advice(tmp_path, count, setup):
    repo = repo_with(tmp_path, HEAD + "#SBATCH --cpus-per-task=75\n" + setup
                     + f"srun torchrun --nproc_per_node={count} train.py\n")
    assert mismatch(repo) == []


def test_a_literal_rank_count_without_gpus_is_still_a_warning(tmp_path):
    """The babylm case: 4 ranks per node, no GPU requested: one per rank is proposed."""
    repo = repo_with(tmp_path, HEAD + "srun torchrun --nproc_per_node=4 train.py\n")
    (f,) = mismatch(repo)
    assert f["severity"] == "warning" and f["commands"] == ["#SBATCH --gpus-per-node=4"]
    # a count that does not say what it counts: the warning, but no number proposed
    repo = repo_with(tmp_path / "b", HEAD + "export N=${N:-4}\n"
                     "srun torchrun --nproc_per_node=$N train.py\n")
    found = mismatch(repo)
    assert found and all(not f["commands"] for f in found), found


def test_cpu_partition_gets_no_gpu_advice(tmp_path):
    """LUMI's small partition has no GPUs (the profile, chosen in the settings)."""
    repo = repo_with(tmp_path, HEAD + "#SBATCH --partition=small\n"
                     "srun torchrun --nproc_per_node=16 train.py\n",
                     {"doctor.yaml": "site: lumi\n"})
    assert mismatch(repo) == []


def test_lightning_cpu_accelerator_is_not_a_gpu_count(tmp_path):
    repo = repo_with(tmp_path, HEAD + "#SBATCH --ntasks-per-node=75\n"
                     "srun python train.py --config conf/prep.yaml\n",
                     {"conf/prep.yaml": "trainer:\n  accelerator: cpu\n  devices: 75\n"})
    assert mismatch(repo) == []
    repo = repo_with(tmp_path / "gpu", HEAD + "#SBATCH --ntasks-per-node=4\n"
                     "srun python train.py --config conf/gpu.yaml\n",
                     {"conf/gpu.yaml": "trainer:\n  accelerator: gpu\n  devices: 4\n"})
    (f,) = mismatch(repo)
    assert f["commands"] == ["#SBATCH --gpus-per-node=4"] and f["severity"] == "error"


@pytest.mark.parametrize("gres,findings", [("gpu:4", []), ("gpu:2", ["gpus"])])
def test_a_submitter_scripts_sbatch_options_are_the_request(tmp_path, gres, findings):
    """A script that runs `sbatch --gres=gpu:4 ... --wrap=...` has no #SBATCH lines: the
    sbatch command's options are the job's request (it said 'requests no GPUs')."""
    repo = repo_with(tmp_path, "#!/bin/bash\nsbatch --job-name=training \\\n"
                     f"  --gres={gres} \\\n  --cpus-per-task=15 \\\n"
                     '  --wrap="python3 -m src.train --config config/c.yaml"\n',
                     {"config/c.yaml": "TRAIN:\n  gpus: 4\n  epochs: 3\n"})
    found = mismatch(repo, "--sbatch", str(repo / "job.sbatch"))
    assert [f["data"]["rule"] for f in found] == findings, found
    if findings:
        assert "the job gives 2 GPU(s) per node (job.sbatch:2 " in found[0]["message"]


@pytest.mark.parametrize("code,rules", [
    ("import torch\nmodel = torch.nn.DataParallel(torch.nn.Linear(2, 2))\n", []),
    ("import lightning as L\ntrainer = L.Trainer()\n", ["ntasks_per_node"]),
])
def test_one_process_per_device_is_lightnings_rule_only(tmp_path, code, rules):
    """`gpus: [0,1,2,3]` of a DataParallel script is one process on four GPUs (an unseen
    repo's correct job got 'Lightning needs one process per device'); for Lightning code
    the rule stands."""
    repo = repo_with(tmp_path, HEAD + "#SBATCH --ntasks-per-node=1\n#SBATCH --gpus-per-node=4\n"
                     "srun python train.py --config config/c.yaml\n",
                     {"config/c.yaml": "DISTRIBUTED:\n  gpus: [0,1,2,3]\n"})
    (repo / "train.py").write_text(code)
    assert [f["data"]["rule"] for f in mismatch(repo)] == rules


# -- the ROCm allocator on a CPU job ------------------------------------------------------

ROCM_IMAGE = "/appl/local/containers/sif-images/lumi-pytorch-rocm-6.2.1-python-3.12.sif"


@pytest.mark.parametrize("head,status", [
    # LUMI-AI-example's file-format conversions: a CPU partition, no GPU asked for, the
    # ROCm PyTorch image used only for Python: no GPU, so no caching allocator to tune
    ("#SBATCH --partition=small\n#SBATCH --cpus-per-task=16\n", "skip"),
    ("#SBATCH --partition=standard\n#SBATCH --cpus-per-task=128\n", "skip"),
    # the same step with GPUs asked for, in any of Slurm's ways: judged
    ("#SBATCH --partition=small-g\n#SBATCH --gpus-per-node=1\n", "fail"),
    ("#SBATCH --partition=small-g\n#SBATCH --gres=gpu:2\n", "fail"),
    ("#SBATCH --partition=small-g\n#SBATCH --ntasks=2\n#SBATCH --gpus-per-task=1\n", "fail"),
])
def test_hip_alloc_conf_judges_only_jobs_that_ask_for_gpus(tmp_path, head, status):
    repo = repo_with(tmp_path, HEAD + head + f"srun singularity exec {ROCM_IMAGE} "
                     "python train.py\n")
    code, result, _ = run(repo, "hip-alloc-conf", "--static")
    assert result["status"] == status, result
    if status == "skip":
        assert "asks for no GPU" in result["reason"], result["reason"]
    else:
        assert "expandable_segments:True" in result["findings"][0]["message"], result


# review 37 (r1): a LUMI-style step that asks for its GPUs on srun, on a partition whose
# GPUs nothing here knows (no profile, --static), with ROCm's variables set: the job asks
# for GPUs, so the allocator is judged (a job that asks for none there is still taken
# for a CPU job, LUMI-AI-example's convert.sh in tests/data/unseen)
R1 = ("#SBATCH --partition=standard-g\n#SBATCH --ntasks-per-node=8\n"
      "export ROCR_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\nexport MIOPEN_USER_DB_PATH=/tmp/miopen\n")


@pytest.mark.parametrize("step", [
    "srun --gpus-per-node=8 python train.py",
    "srun --gpus 8 python train.py",
    "srun -G8 python train.py",
    "srun --ntasks=8 --gpus-per-task=1 python train.py",
    "srun --gres=gpu:mi250:8 python train.py",
], ids=["gpus-per-node", "gpus", "G", "gpus-per-task", "gres"])
def test_hip_alloc_conf_judges_a_step_that_asks_on_srun(tmp_path, step):
    repo = repo_with(tmp_path, HEAD + R1 + step + "\n")
    code, result, _ = run(repo, "hip-alloc-conf", "--static")
    assert result["status"] == "fail", result
    assert "expandable_segments:True" in result["findings"][0]["message"], result


def test_a_container_that_binds_the_gpus_asks_for_them(tmp_path):
    """`singularity exec --rocm` binds the node's GPUs into the container: the job means
    to use them, on a partition nothing here describes (the hostile-text tests' ROCm job);
    the same image run without --rocm (LUMI-AI-example's CPU convert.sh) asks for none."""
    with_rocm = repo_with(tmp_path / "rocm", HEAD + "#SBATCH -N 1\n"
                          "export PYTORCH_HIP_ALLOC_CONF=garbage_collection_threshold:0.8\n"
                          f"srun singularity exec --rocm {ROCM_IMAGE} python train.py\n")
    code, result, _ = run(with_rocm, "hip-alloc-conf", "--static")
    assert result["status"] == "fail", result
    without = repo_with(tmp_path / "plain", HEAD + "#SBATCH -N 1\n"
                        f"srun singularity exec {ROCM_IMAGE} python train.py\n")
    code, result, _ = run(without, "hip-alloc-conf", "--static")
    assert result["status"] == "skip" and "asks for no GPU" in result["reason"], result


@pytest.mark.parametrize("srun,status", [
    ("srun --gres=gpu:2", "fail"),           # the step's request counts on any partition
    ("srun --gpus-per-node=0", "skip"),      # a count of 0 asks for none
    ("srun --gres=nvme:1", "skip"),          # another resource is no GPU
])
def test_srun_gpu_options_on_a_cpu_partition(tmp_path, srun, status):
    repo = repo_with(tmp_path, HEAD + "#SBATCH --partition=small\n#SBATCH --cpus-per-task=16\n"
                     f"{srun} singularity exec {ROCM_IMAGE} python train.py\n")
    code, result, _ = run(repo, "hip-alloc-conf", "--static")
    assert result["status"] == status, result
