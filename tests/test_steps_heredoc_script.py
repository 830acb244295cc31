"""A script the job writes with a here-document (`cat > run.sh <<EOF … EOF`) and then runs
on the ranks (`srun bash run.sh`, `srun ./run.sh`) is read as that script: its body,
expanded when cat runs unless the delimiter is quoted, at its lines in the job script.
Through the real CLI: entry-not-found judges the step in the body."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import result_of, run_doctor, validate_report
from test_job_exit import git

HEAD = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --time=2\n"
BODY = "LR=0.1\ncat > run.sh << EOF\n#!/bin/bash\nexport RANK=\\$SLURM_PROCID\n" \
       "python3 -u train.py --lr $LR\nEOF\nchmod +x run.sh\n"


def _findings(tmp_path: Path, files: dict) -> dict:
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "import")
    proc = run_doctor("run", "--static", "--repo", str(tmp_path), "--select",
                      "entry-not-found", "--format", "json")
    assert "Traceback" not in proc.stderr, proc.stderr
    res = result_of(validate_report(json.loads(proc.stdout)), "entry-not-found")
    return res


def test_the_ranks_run_the_body_of_the_script_the_job_wrote(tmp_path):
    # train.py is missing: the step in the here-document (job.sbatch:9) is judged
    res = _findings(tmp_path, {"job.sbatch": HEAD + BODY + "srun ./run.sh\n",
                               "model.py": "x = 1\n"})
    assert res["status"] == "fail", res
    (f,) = res["findings"]
    assert (f["location"]["path"], f["location"]["line"]) == ("job.sbatch", 9), f
    assert "train.py" in f["message"] and f["severity"] == "error", f


def test_a_written_script_whose_entry_exists_passes(tmp_path):
    res = _findings(tmp_path, {"job.sbatch": HEAD + BODY + "srun bash run.sh\n",
                               "train.py": "print(1)\n"})
    assert res["status"] == "pass", res


# `sbatch <<EOF` submits the here-document as a batch script of its own: its #SBATCH
# --requeue and --time are that job's (checkpoint-on-local-tmp judges the risk by them)
SUBMIT = "#!/bin/bash\nsbatch <<EOF\n#!/bin/bash\n{directive}\n" \
         "srun python3 train.py --save /tmp/ck\nEOF\n"


def test_an_sbatch_here_documents_own_requeue_and_time_reach_the_checks(tmp_path):
    files = {f"{name}.sh": SUBMIT.format(directive=d) for name, d in (
        ("requeue", "#SBATCH --requeue"), ("days", "#SBATCH --time=3-00:00:00"),
        ("short", "#SBATCH --time=01:00:00"))}
    files["train.py"] = "import torch\n"
    for rel, text in files.items():
        (tmp_path / rel).write_text(text)
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "import")
    args = ["run", "--static", "--repo", str(tmp_path), "--select", "checkpoint-on-local-tmp",
            "--format", "json"]
    for name in ("requeue", "days", "short"):
        args += ["--sbatch", str(tmp_path / f"{name}.sh")]
    proc = run_doctor(*args)
    assert "Traceback" not in proc.stderr, proc.stderr
    res = result_of(validate_report(json.loads(proc.stdout)), "checkpoint-on-local-tmp")
    got = {(f["location"]["path"], f["location"]["line"], f["severity"]): f["message"]
           for f in res["findings"]}
    assert set(got) == {("requeue.sh", 5, "error"), ("days.sh", 5, "error")}, got
    assert "requeue.sh:4" in got[("requeue.sh", 5, "error")]
    assert "days.sh:4" in got[("days.sh", 5, "error")]
