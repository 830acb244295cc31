"""Issue 26: wandb-online-in-container on pyxis and CSCS Container Engine steps. Where the
site (a profile chosen in the settings, or the settings themselves) says compute nodes
reach the internet, no warning; where nothing says so, the warning stays. Real CLI."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import result_of, run_json

CHECK = "wandb-online-in-container"
STEPS = {
    "pyxis": "srun --container-image=nvcr.io#nvidia/pytorch:24.01-py3 python train.py\n",
    "cscs-ce": "srun --environment=./edf.toml python train.py\n",
    "apptainer": "srun apptainer exec images/pytorch.sif python train.py\n",
}


def repo_with(tmp_path: Path, step: str, settings: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\n" + step)
    (repo / "train.py").write_text("import wandb\nwandb.init(project='p')\n")
    if settings:
        (repo / "doctor.yaml").write_text(settings)
    return repo


@pytest.mark.parametrize("kind", sorted(STEPS))
@pytest.mark.parametrize("settings,verdict", [
    ("", "warning"),                                   # nothing says: keep the warning
    ("site: clariden\n", "skip"),                      # the profile: NAT to the internet
    ("site: {compute_network: true}\n", "skip"),       # the settings say so
    ("site: {compute_network: false}\n", "error"),
])
def test_compute_network_decides_for_every_container(tmp_path, kind, settings, verdict):
    repo = repo_with(tmp_path, STEPS[kind], settings)
    code, doc = run_json("--repo", str(repo), "--static", "--only", CHECK)
    res = result_of(doc, CHECK)
    if verdict == "skip":
        assert res["status"] == "skip" and "compute_network: true" in res["reason"], res
    else:
        assert res["severity"] == verdict, res
        assert res["findings"][0]["location"] == {"path": "job.sbatch", "line": 3}


def test_no_container_says_which_kinds_it_looked_for(tmp_path):
    repo = repo_with(tmp_path, "srun python train.py\n", "")
    _, doc = run_json("--repo", str(repo), "--static", "--only", CHECK)
    assert result_of(doc, CHECK)["reason"] == (
        "the job does not run in a container (singularity/apptainer exec, srun "
        "--container-image or --environment)")
