"""`bash -lc "…"` (and `bash -l -c`, `bash --login -c`, `sh -c`, `sh -ec`, `bash -eo
pipefail -c`) runs its code as `bash -c` does: one-letter options go together, and the
step model must find the training step inside. The oracle is the real bash: each form runs
a train.py that records the argv it got. Then container-binds-missing on such a step: an
unbound entry that names no repo file and lies under none of the job's directories
(`/opt/app/train.py`: the image itself may hold it) is a warning; one that is the job's
own file (the working directory's train.py under `--contain`) stays an error."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import git_repo, result_of, run_json
from doctor.job.context import Job
from doctor.job.steps import training_step

HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n"
RECORD = "import json, sys\nopen('ran.json', 'w').write(json.dumps(sys.argv[1:]))\n"
FORMS = {
    "lc": "bash -lc 'python3 train.py --lr 1'",
    "l_c": "bash -l -c 'python3 train.py --lr 1'",
    "login_c": "bash --login -c 'python3 train.py --lr 1'",
    "sh_c": "sh -c 'python3 train.py --lr 1'",
    "sh_ec": "sh -ec 'cd . && python3 train.py --lr 1'",
    "eo_pipefail": "bash -eo pipefail -c 'python3 train.py --lr 1 | cat'",
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("bashlc")
    files = {f"{name}.sbatch": HEAD + f"srun {form}\n" for name, form in FORMS.items()}
    files["train.py"] = RECORD
    return git_repo(root, files)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_bash_runs_the_code_and_the_model_finds_the_step(repo, tmp_path, name):
    work = tmp_path / "w"
    work.mkdir()
    (work / "train.py").write_text(RECORD)
    (work / "job.sbatch").write_text(HEAD + f"srun {FORMS[name]}\n")
    # srun: an exported function that runs its arguments; a login shell (-l) reads the
    # system profile, which may reset PATH: python3 is found there all the same
    proc = subprocess.run(["bash", "-c", 'srun() { "$@"; }; export -f srun; bash job.sbatch'],
                          cwd=work, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, HOME=str(tmp_path)))
    assert proc.returncode == 0, proc.stderr
    assert json.loads((work / "ran.json").read_text()) == ["--lr", "1"]
    job = Job(repo, sbatch=[str(repo / f"{name}.sbatch")])
    step = training_step(job.steps(job.scripts[0]))
    assert (step.entry, step.args) == ("train.py", ("--lr", "1")), step
    assert [x.kind for x in step.chain][:1] == ["srun"]


def _binds(root: Path, body: str) -> dict:
    git_repo(root, {"job.sbatch": HEAD + body, "train.py": RECORD})
    code, doc = run_json("--static", "--only", "container-binds-missing", "--repo", str(root),
                         "--sbatch", str(root / "job.sbatch"),
                         env={"PATH": "/usr/bin:/bin", "HOME": "/users/someone"})
    return result_of(doc, "container-binds-missing")


def test_an_image_path_is_a_warning_and_the_jobs_own_file_an_error(tmp_path):
    # /opt/app/train2.py: not in the repo, under no directory of the job: the image's
    res = _binds(tmp_path / "a", "srun apptainer exec img.sif bash -lc "
                 "'python /opt/app/train2.py --lr 1'\n")
    assert res["status"] == "fail", res
    (f,) = res["findings"]
    assert f["severity"] == "warning" and f["data"]["path"] == "/opt/app/train2.py"
    assert "image itself may hold it" in f["message"]
    assert f["location"] == {"path": "job.sbatch", "line": 4}
    # the job's own train.py (the working directory's, `--contain` leaves it unbound)
    res = _binds(tmp_path / "b", "cd /work/lab/code\nsrun apptainer exec --contain img.sif "
                 "bash -lc 'python train.py --lr 1'\n")
    (f,) = res["findings"]
    assert f["severity"] == "error" and f["data"]["path"] == "/work/lab/code/train.py", f
    # an image path whose name matches a repo file: an image built from the repo
    # (`COPY . /opt/app`) holds it too, so still a warning
    res = _binds(tmp_path / "c", "srun apptainer exec --contain img.sif bash -l -c "
                 "'python /opt/app/train.py'\n")
    (f,) = res["findings"]
    assert f["severity"] == "warning" and f["data"]["path"] == "/opt/app/train.py", f
