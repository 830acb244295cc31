"""sqlite-on-shared-fs through the real CLI (`doctor run --static`), with the site
profile as the only filesystem evidence (a static run never reads this machine's mounts):
seed 003's `export MLFLOW_TRACKING_URI="sqlite:///mlruns.db"` in a multi-rank job on a
site-shared path fails at the export line; the fix commands the finding prints, pasted
into the script, make it pass; a rank-0 guard lowers it to a warning; without a site
profile the static run says it cannot tell the filesystem (warning, precision rule).
"""
from __future__ import annotations

from pathlib import Path

from conftest import result_of, run_json

CHECK = "sqlite-on-shared-fs"
UNGUARDED = "import mlflow\n\nmlflow.start_run()\nmlflow.log_metric('loss', 1.0)\n"
GUARDED = ("import os\nimport mlflow\n\nif int(os.environ.get('RANK', '0')) == 0:\n"
           "    mlflow.start_run()\n    mlflow.log_metric('loss', 1.0)\n")
HEAD = ("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4\n\n"
        "cd /scratch/project_462000640/ammar/xec\n")
SEED003 = 'export MLFLOW_TRACKING_URI="sqlite:///mlruns.db"\n'
STEP = "srun python train.py\n"


def make_repo(root: Path, exports: str, code: str = UNGUARDED, site: bool = True) -> Path:
    root.mkdir()
    (root / "train.py").write_text(code)
    (root / "job.sbatch").write_text(HEAD + exports + STEP)
    if site:
        (root / "doctor.yaml").write_text(
            "site:\n  shared_paths: [/scratch, /users]\n  local_paths: [/tmp]\n")
    return root


def run(repo: Path) -> tuple:
    code, doc = run_json("--static", "--only", CHECK, "--repo", str(repo),
                         "--sbatch", str(repo / "job.sbatch"), env={"PATH": "/usr/bin:/bin"})
    return code, result_of(doc, CHECK)


def test_seed003_export_fails_and_the_printed_fix_passes(tmp_path):
    repo = make_repo(tmp_path / "r", SEED003)
    code, res = run(repo)
    assert code == 1 and res["status"] == "fail" and res["severity"] == "error"
    (f,) = res["findings"]
    assert f["location"] == {"path": "job.sbatch", "line": 6}
    assert f["data"]["path"] == "/scratch/project_462000640/ammar/xec/mlruns.db"
    assert f["data"]["filesystem"]["source"] == "site"
    assert "8 tasks" in f["message"] and "train.py:3" in f["message"]
    assert f["commands"][0] == \
        'export MLFLOW_TRACKING_URI="sqlite:///${TMPDIR:-/tmp}/mlruns-$SLURM_JOB_ID.db"'
    # paste the fix: the export before the step, the copy after it
    export, _, copy = f["commands"]
    (repo / "job.sbatch").write_text(HEAD + export + "\n" + STEP + copy + "\n")
    code, res = run(repo)
    assert (code, res["status"]) == (0, "pass"), res


def test_rank_zero_guard_is_a_single_writer_warning(tmp_path):
    code, res = run(make_repo(tmp_path / "r", SEED003, GUARDED))
    assert code == 0 and res["severity"] == "warning"
    (f,) = res["findings"]
    assert f["data"]["writers"]["several"] is False
    assert "no per-job part" in f["message"]


def test_job_array_without_per_job_part_fails_with_one_task(tmp_path):
    repo = make_repo(tmp_path / "r", SEED003, GUARDED)
    text = (repo / "job.sbatch").read_text().replace(
        "--ntasks-per-node=4", "--ntasks-per-node=1\n#SBATCH --array=0-9")
    (repo / "job.sbatch").write_text(text)
    code, res = run(repo)
    assert code == 1 and res["findings"][0]["data"]["array"] == "0-9"
    # $SLURM_JOB_ID differs between the array's tasks: a per-job file is one writer
    (repo / "job.sbatch").write_text(text.replace(
        "sqlite:///mlruns.db", "sqlite:///mlruns-$SLURM_JOB_ID.db"))
    code, res = run(repo)
    assert code == 0 and res["severity"] == "warning"
    assert res["findings"][0]["data"]["per_job"] is True


def test_static_run_without_site_profile_says_the_filesystem_is_unknown(tmp_path):
    code, res = run(make_repo(tmp_path / "r", SEED003, site=False))
    assert code == 0 and res["status"] == "fail" and res["severity"] == "warning"
    (f,) = res["findings"]
    assert f["data"]["filesystem"] == {"fstype": None, "shared": None, "mount": None,
                                       "source": "none"}
    assert "cannot tell" in f["message"] and "static run" in f["message"]


def test_node_local_site_path_passes_and_no_sqlite_skips(tmp_path):
    code, res = run(make_repo(tmp_path / "a", 'export MLFLOW_TRACKING_URI='
                              '"sqlite:////tmp/ammar-mlruns.db"\n'))
    assert (code, res["status"]) == (0, "pass")
    code, res = run(make_repo(tmp_path / "b", "export MLFLOW_TRACKING_URI=http://mlflow:5000\n"))
    assert res["status"] == "skip" and "no SQLite database" in res["reason"]
