"""Whose Python and whose framework a job runs (issue 26, the unseen repos' first run).

container-deps-missing looked up the job's third-party imports in this machine's Python
for jobs written for another cluster (RibonanzaNet2's `#SBATCH --partition defq` with
`/lustre/.../envs/torch/bin/accelerate launch run.py`: "`import accelerate` fails in
this machine's Python"; SDACD's `python -m torch.distributed.launch train.py` on
partition gpu) and for a pyxis step (slt: `srun --container-image=….sqsh python -m
signjoey`). This machine's Python judges a job only where this machine may be the job's
node: this cluster is the job's (doctor/job/cluster.py, the rule slurm-partition-limits
uses) and the job's `python` is this interpreter. hip-alloc-conf warned TensorFlow jobs
in a ROCm container (machineLearning's tensorflow/*/src/job.sh) about a variable only
PyTorch reads.

Each case is a small git repo in the form of the unseen repo's own scripts
(tests/data/unseen/<name>/), checked with the real CLI. The local two-node Slurm
(tests/slurm/cluster.sh: ClusterName=local, partition debug) is this machine's cluster.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conftest import git_repo, result_of, run_json

DEPS = "container-deps-missing"
HIP = "hip-alloc-conf"
# the job's `python3` is the doctor's own interpreter on this PATH
THIS_PATH = f"{Path(sys.executable).parent}:/usr/bin:/bin"
# SDACD's train.py: a third-party import this Python lacks, and torch
TRAIN = "import os\nimport torch\nimport tensorboardX_fake_pkg\n"



def run(repo: Path, check: str, *scripts: str, mode: str = "--no-smoke",
        path: str = THIS_PATH) -> tuple:
    args = [mode, "--only", check, "--repo", str(repo)]
    for s in scripts:
        args += ["--sbatch", str(repo / s)]
    code, doc = run_json(*args, env={"PATH": path, "SLURM_SUBMIT_DIR": str(repo)})
    return code, result_of(doc, check)


def sdacd(tmp_path: Path, partition: str, settings: str = "") -> Path:
    """SDACD's train.sh: `python -m torch.distributed.launch ... train.py`."""
    files = {"train.py": TRAIN,
             "train.sh": f"#!/bin/bash\n#SBATCH -J work\n{partition}#SBATCH --gres=gpu:2\n\n"
                         "python -m torch.distributed.launch --master_port 59510 "
                         "--nproc_per_node=2 train.py --config $1\n"}
    if settings:
        files["doctor.yaml"] = settings
    return git_repo(tmp_path / "repo", files)


# ---- container-deps-missing: this machine's Python judges only its own cluster's jobs ----
@pytest.mark.slurm
def test_another_clusters_job_is_not_judged_by_this_machines_python(slurm_cluster, tmp_path):
    """SDACD (partition gpu): the job runs on its own cluster with that cluster's Python."""
    repo = sdacd(tmp_path, "#SBATCH -p gpu\n")
    code, res = run(repo, DEPS)
    assert (code, res["status"]) == (0, "skip"), res
    assert res["reason"] == (
        "train.sh: the job's Python is the one on its cluster's nodes, not this machine's: "
        "partition gpu: not a partition of cluster 'local' (live Slurm); the job was "
        "written for another cluster, so its limits are not judged here"), res


@pytest.mark.slurm
@pytest.mark.parametrize("how", ["partition", "settings"])
def test_this_clusters_job_in_this_python_is_still_an_error(slurm_cluster, tmp_path, how):
    """The true positive stays: the job's partition is this cluster's (or doctor.yaml says
    `site: {cluster: local}`), its `python` is this interpreter, and that lacks a
    package the entry imports."""
    repo = sdacd(tmp_path, "#SBATCH -p debug\n" if how == "partition" else "",
                 "site:\n  cluster: local\n" if how == "settings" else "")
    code, res = run(repo, DEPS)
    assert code == 1 and res["status"] == "fail", res
    (f,) = res["findings"]
    assert f["severity"] == "error" and f["location"] == {"path": "train.py", "line": 3}
    assert f["data"]["module"] == "tensorboardX_fake_pkg"
    assert f"this machine's Python ({sys.executable})" in f["message"]


@pytest.mark.slurm
def test_a_job_that_names_no_cluster_is_not_judged_by_this_machines_python(
        slurm_cluster, tmp_path):
    """No --partition and no stated cluster: nothing says this machine runs the job."""
    repo = sdacd(tmp_path, "")
    code, res = run(repo, DEPS)
    assert (code, res["status"]) == (0, "skip"), res
    assert res["reason"].startswith("train.sh: the job's Python is the one on its cluster's "
                                    "nodes, not this machine's: train.sh names no "
                                    "--partition, and nothing says it is for cluster "
                                    "'local'"), res


@pytest.mark.slurm
def test_a_launcher_from_another_python_is_not_this_python(slurm_cluster, tmp_path):
    """RibonanzaNet2's job.sh, on this cluster's partition: `/lustre/.../envs/torch/bin/
    accelerate launch run.py` runs the env's Python, which is not on this node (the
    doctor took `python3`, this interpreter, and said `import accelerate` fails)."""
    acc = "/lustre/fs0/scratch/shujun/miniconda3/envs/torch/bin/accelerate"
    repo = git_repo(tmp_path / "repo", {
        "run.py": "import accelerate\nimport torch\nfrom Network import RibonanzaNet\n",
        "Network.py": "import einops_fake_pkg\n",
        "job.sh": "#!/bin/bash\n#SBATCH --nodes 1\n#SBATCH --gpus-per-node=8\n"
                  f"#SBATCH --partition debug\n\n{acc} launch --config_file FSDP.yaml run.py"})
    code, res = run(repo, DEPS)
    assert (code, res["status"]) == (0, "skip"), res
    assert res["reason"].startswith(f"job.sh: the job's `{acc}` (not found on this node) is "
                                    "not this machine's Python"), res


@pytest.mark.slurm
def test_a_launcher_on_path_runs_the_python_of_its_shebang(slurm_cluster, tmp_path):
    """`torchrun train.py` on this cluster: the torchrun on the job's PATH is a console
    script whose `#!` line names this interpreter: a true positive."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "torchrun").write_text(f"#!{sys.executable}\nraise SystemExit('never run')\n")
    (bin_ / "torchrun").chmod(0o755)
    repo = git_repo(tmp_path / "repo", {
        "train.py": TRAIN,
        "job.sh": "#!/bin/bash\n#SBATCH -p debug\nsrun torchrun --nproc_per_node=2 "
                  "train.py\n"})
    code, res = run(repo, DEPS, path=f"{bin_}:/usr/bin:/bin")
    assert code == 1 and [f["data"]["module"] for f in res["findings"]] == \
        ["tensorboardX_fake_pkg"], res
    (bin_ / "torchrun").write_text("#!/opt/other/bin/python3\n")   # another Python's
    code, res = run(repo, DEPS, path=f"{bin_}:/usr/bin:/bin")
    assert res["status"] == "skip" and "job.sh: the job's `torchrun` (not found on this " \
        "node) is not this machine's Python" in res["reason"], res


@pytest.mark.parametrize("flag,what", [
    ("--container-image=/netscratch/enroot/hufe_slt_0.2_dlcc_pytorch_20.10.sqsh",
     "the pyxis image /netscratch/enroot/hufe_slt_0.2_dlcc_pytorch_20.10.sqsh "
     "(srun --container-image"),
    ("--container-name=pytorch", "the pyxis container pytorch (srun --container-name"),
    ("--environment=ngc-pytorch", "the Container Engine environment ngc-pytorch "
     "(srun --environment")])
def test_a_pyxis_or_container_engine_step_is_the_images_python(tmp_path, flag, what):
    """slt's run.sh (on this cluster's partition here, so that only the container
    decides): the step's Python is the image's, started by Slurm's plugin."""
    repo = git_repo(tmp_path / "repo", {
        "signjoey/__init__.py": "",
        "signjoey/__main__.py": "from signjoey.training import train\n",
        "signjoey/training.py": "import torch\nimport portalocker_fake_pkg\n",
        "run.sh": f"#!/bin/bash\n#SBATCH --partition=debug\nsrun \\\n{flag} \\\n"
                  "--container-mounts=/netscratch/software:/netscratch/software:ro,"
                  "/home/hufe/slt:/workspace \\\n--gpus=1 \\\n--mem=64G \\\n"
                  "python -m signjoey train configs/phoenix.yaml\n"})
    code, res = run(repo, DEPS, "run.sh")
    assert (code, res["status"]) == (0, "skip"), res
    assert res["reason"] == (
        f"run.sh: the job's Python is the one in {what} at run.sh:3), which the doctor "
        "cannot look into here (no `enroot` is on this node's PATH)"), res


@pytest.mark.slurm
def test_one_script_the_doctor_cannot_judge_skips_only_itself(slurm_cluster, tmp_path):
    """A repo of two job scripts: one runs an entry outside the repo, the other is this
    cluster's job missing a package. The first used to skip the whole check."""
    repo = git_repo(tmp_path / "repo", {
        "train.py": TRAIN,
        "a_external.sh": "#!/bin/bash\n#SBATCH -p debug\nsrun python /cluster/work/x.py\n",
        "b_train.sh": "#!/bin/bash\n#SBATCH -p debug\nsrun python3 train.py\n"})
    code, res = run(repo, DEPS, "a_external.sh", "b_train.sh")
    assert code == 1 and [f["data"]["module"] for f in res["findings"]] == \
        ["tensorboardX_fake_pkg"], res


# ---- hip-alloc-conf: PYTORCH_HIP_ALLOC_CONF is PyTorch's ----------------------------
LUMI = ("#!/bin/bash\n#SBATCH --partition=small-g\n#SBATCH --gpus-per-node=1\n"
        "module load singularity-userfilesystems singularity-CPEbits\n"
        "CONTAINER=/appl/local/containers/sif-images/{image}\n")
TF_IMAGE = "lumi-tensorflow-rocm-6.2.0-python-3.10-tensorflow-2.16.1-horovod-0.28.1.sif"
TORCH_IMAGE = "lumi-pytorch-rocm-6.2.4-python-3.12-pytorch-v2.6.0.sif"


@pytest.mark.parametrize("mode", ["--static", "--no-smoke"])
def test_a_tensorflow_job_in_a_rocm_container_reads_no_pytorch_variable(tmp_path, mode):
    """machineLearning's tensorflow/distributedTraining/src/job.sh."""
    repo = git_repo(tmp_path / "repo", {
        "src/benchmark.py": "import os\nimport tensorflow as tf\nfrom model import net\n",
        "src/model.py": "from tensorflow import keras\n\ndef net():\n    return keras\n",
        "src/job.sh": LUMI.format(image=TF_IMAGE) +
        'srun singularity exec --bind $HOST_SCRATCH:/mnt $CONTAINER \\\nbash -c "\n'
        "  source /opt/miniconda3/bin/activate tensorflow; \\\n"
        '  python benchmark.py --log_dir /mnt/logs\n"\n'})
    code, res = run(repo, HIP, mode=mode)
    assert (code, res["status"]) == (0, "skip"), res
    assert res["reason"].startswith("src/job.sh:") and res["reason"].endswith(
        " runs src/benchmark.py and 1 repo module it imports, which import no PyTorch "
        "(tensorflow instead): PYTORCH_HIP_ALLOC_CONF is read by PyTorch only"), res


@pytest.mark.parametrize("entry,files", [
    # the perfetto job: the entry imports torch
    ("python ./single_gpu_train.py", {"single_gpu_train.py": "import torch\n"}),
    # torch only through a repo module the entry imports
    ("python ./single_gpu_train.py", {"single_gpu_train.py": "from model import Net\n",
                                      "model.py": "def Net():\n    import torch.nn\n"}),
    # a torch launcher runs it
    ("torchrun --standalone --nproc_per_node=1 ./ddp_train.py",
     {"ddp_train.py": "print('hi')\n"}),
    # an entry the doctor cannot read: judged as before
    ("python /cluster/work/users/me/MyEx/resnet18_api.py", {"README": "x\n"}),
])
def test_a_pytorch_job_or_one_whose_entry_is_unknown_is_still_warned(tmp_path, entry, files):
    repo = git_repo(tmp_path / "repo", dict(files, **{
        "job.sh": LUMI.format(image=TORCH_IMAGE) + f"srun singularity exec $CONTAINER {entry}\n"}))
    code, res = run(repo, HIP, mode="--static")
    assert res["status"] == "fail", res
    (f,) = res["findings"]
    assert f["severity"] == "warning" and f["location"]["path"] == "job.sh"
    assert "without expandable_segments:True" in f["message"]


def test_the_unseen_repo_scripts_themselves(tmp_path):
    """The trimmed machineLearning excerpt as committed: the two PyTorch jobs are warned,
    the two TensorFlow jobs are not."""
    import shutil

    src = Path(__file__).parent / "data" / "unseen" / "machineLearning"
    repo = tmp_path / "repo"
    shutil.copytree(src, repo)
    git_repo(repo, {})
    code, res = run(repo, HIP, mode="--static")
    assert sorted(f["location"]["path"] for f in res["findings"]) == \
        ["profiling/perfetto/job.sh", "profiling/perfetto/script.sh"], res
    # the TensorFlow jobs' steps were read, and judged to run no PyTorch
    assert {"tensorflow/distributedTraining/src/job.sh:42",
            "tensorflow/imageClassification/src/job.sh:21"} <= set(res["steps"]), res
