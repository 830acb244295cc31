"""shm-too-small judges a job by this machine's /dev/shm only where this machine may be
the job's node: the cluster rule fd-limit-too-low follows (doctor/job/cluster.py
other_cluster, issue 26: another cluster's facts never raise an error)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import result_of, run_json

CHECK = "shm-too-small"
# No /dev/shm is this big: the machine's real /dev/shm is "too small", on any machine.
BIG_GIB = 10 ** 6


def make_repo(tmp: Path, tie: str) -> Path:
    (tmp / "configs").mkdir(parents=True)
    (tmp / "configs" / "train.yaml").write_text("data:\n  batch_size: 16\n  num_workers: 2\n")
    (tmp / "doctor.yaml").write_text(f"options: {{{CHECK}: {{min_gib: {BIG_GIB}}}}}\n")
    (tmp / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n#SBATCH --time=1:00:00\n"
        + (tie + "\n" if tie else "") + "srun python train.py\n")
    return tmp


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm on this machine")
@pytest.mark.parametrize("tie,severity", [
    ("", "error"),                                   # tied to no cluster: submitted from here
    ("#SBATCH --partition=standard-g", "warning"),   # LUMI's partition: another cluster
    ("#SBATCH --clusters=lumi", "warning"),
])
def test_dev_shm_of_this_machine_judges_only_its_own_clusters_jobs(tmp_path, tie, severity):
    """A LUMI job (its partition, or --clusters, names a cluster that nothing shows this
    machine is on: no Slurm answers, or the test Slurm, cluster 'local', has neither) is
    not refused for this machine's /dev/shm: a warning that says why. A job tied to no
    cluster runs on the nodes of the cluster it is submitted to from here: an error."""
    repo = make_repo(tmp_path, tie)
    code, doc = run_json("--only", CHECK, "--repo", str(repo), "--sbatch", "job.sbatch",
                         cwd=repo)
    res = result_of(doc, CHECK)
    assert res["status"] == "fail", res
    small = [f for f in res["findings"] if f["data"].get("needed_bytes") == BIG_GIB * 1024 ** 3]
    assert len(small) == 1, res["findings"]
    (f,) = small
    assert f["message"].startswith("/dev/shm is only ")
    assert f.get("severity", res["severity"]) == severity, f
    assert code == (1 if severity == "error" else 0)
    if severity == "warning":
        assert f"job.sbatch:5 ({tie})" in f["message"], f["message"]
        assert "that cluster's is not known here" in f["message"]
        assert f["data"]["other_cluster"]
    else:
        assert "other_cluster" not in f["data"] and "this machine" not in f["message"]


@pytest.mark.skipif(not os.path.isdir("/dev/shm"), reason="no /dev/shm on this machine")
def test_each_job_is_sized_by_its_own_ranks_and_the_loaders_its_code_runs(tmp_path):
    """Two jobs of one repo (LUMI-AI-example's quickstart and its 8-rank DDP script): the
    1-rank job's entry has the workers, the 8-rank job's entry has none. The estimate is
    each job's ranks per node × the DataLoaders of the code its step runs, never one job's
    ranks times another job's loaders (it said "8 rank(s) x 176 in-flight batches" for a
    job of one process). batch_mib is made huge so that the estimate always fails here."""
    head = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=1:00:00\n"
    files = {
        "doctor.yaml": f"options: {{{CHECK}: {{batch_mib: {BIG_GIB * 1024}}}}}\n",
        "one.sbatch": head + "#SBATCH --ntasks-per-node=1\npython one.py\n",
        "eight.sbatch": head + "#SBATCH --ntasks-per-node=8\nsrun python eight.py\n",
        "one.py": "from torch.utils.data import DataLoader\n"
                  "loader = DataLoader(range(10), batch_size=2, num_workers=8)\n",
        "eight.py": "from torch.utils.data import DataLoader\n"
                    "loader = DataLoader(range(10), batch_size=2, num_workers=0)\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, doc = run_json("--only", CHECK, "--repo", str(tmp_path), "--sbatch", "one.sbatch",
                         "--sbatch", "eight.sbatch", cwd=tmp_path)
    res = result_of(doc, CHECK)
    (f,) = [f for f in res["findings"] if "workers_bytes" in f["data"]]
    assert (f["data"]["ranks_per_node"], f["data"]["script"]) == (1, "one.sbatch"), f["data"]
    assert f["data"]["workers_bytes"] == 1 * 16 * BIG_GIB * 1024 * 1024 ** 2, f["data"]
    assert "for one.sbatch: 1 rank(s) x 16 in-flight batches" in f["message"], f["message"]
    assert f["location"] == {"path": "one.py", "line": 2}, f
