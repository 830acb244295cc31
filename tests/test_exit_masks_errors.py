"""exit-masks-errors against its oracle: real `srun` on the local two-node Slurm.

Seed 001's form (os._exit(0) in the `finally:` of main()) runs as a job step on both
nodes while the training raises: srun reports exit 0, Slurm records the job
COMPLETED, and the lines the script printed to stdout (block-buffered, since the
job log is a file) never reach the log, nor does the traceback. The same script
without the forced exit fails with exit 1 and a complete log. The doctor names the
os._exit line of the first and passes the second.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, result_of, run_json

JOB_ENV = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}")
JOB_ENV.pop("SLURM_JOB_ID", None)
JOB_ENV.pop("PYTHONUNBUFFERED", None)   # a job's stdout is block-buffered unless it asks

MASKED = '''\
import os


def main():
    try:
        print("epoch 1 loss 0.42", flush=False)
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
    finally:
        print("cleanup done")
        os._exit(0)


if __name__ == "__main__":
    main()
'''
FIXED = MASKED.replace("        os._exit(0)\n", "")


def make_repo(root: Path, source: str) -> Path:
    root.mkdir()
    (root / "train.py").write_text(source)
    (root / "train.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
        f"#SBATCH -o {root}/slurm-%j.out\n"
        f"cd {root}\n"
        f"srun {sys.executable} train.py\n"
        'rc=$?\necho "srun exit code: $rc"\nexit $rc\n')
    return root


def run_job(repo: Path) -> tuple:
    """(the step's exit code as srun returned it, Slurm's job state, the job log)."""
    proc = subprocess.run(["sbatch", "--wait", "--parsable", str(repo / "train.sbatch")],
                          cwd=repo, env=JOB_ENV, capture_output=True, text=True, timeout=120)
    job_id = proc.stdout.strip().split(";")[0]
    assert job_id.isdigit(), f"sbatch: {proc.stdout!r} {proc.stderr!r}"
    log = (repo / f"slurm-{job_id}.out").read_text()
    step = re.search(r"srun exit code: (\d+)", log)
    assert step, log
    info = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True,
                          text=True).stdout
    state = re.search(r"JobState=(\S+)", info)
    assert state, info
    return int(step.group(1)), state.group(1), log


@pytest.mark.slurm
def test_os_exit_in_finally_masks_the_failure_under_srun(slurm_cluster, tmp_path):
    masked = make_repo(tmp_path / "masked", MASKED)
    fixed = make_repo(tmp_path / "fixed", FIXED)

    code, state, log = run_job(masked)
    assert code == 0, log                      # the script raised, the step exited 0
    assert state == "COMPLETED"               # and Slurm recorded success
    assert "epoch 1 loss 0.42" not in log      # the buffered tail of stdout is gone
    assert "cleanup done" not in log
    assert "RuntimeError" not in log           # and so is the traceback

    code, state, log = run_job(fixed)
    assert code == 1, log                      # the control: the failure reaches srun
    assert state == "FAILED"
    assert log.count("epoch 1 loss 0.42") == 2 and log.count("cleanup done") == 2  # 2 ranks
    assert "RuntimeError: CUDA error" in log

    # the doctor names the os._exit line of the masked job, and passes the fixed one
    rc, doc = run_json("--static", "--repo", str(masked), "--only", "exit-masks-errors")
    res = result_of(doc, "exit-masks-errors")
    assert (rc, res["status"], res["severity"]) == (1, "fail", "error")
    exit_line = MASKED.splitlines().index("        os._exit(0)") + 1
    (finding,) = res["findings"]
    assert finding["location"] == {"path": "train.py", "line": exit_line}
    assert finding["data"]["launched_by"] == ["train.sbatch:6"]   # the srun line
    assert "the exit code" in finding["data"]["lost"]
    rc, doc = run_json("--static", "--repo", str(fixed), "--only", "exit-masks-errors")
    assert (rc, result_of(doc, "exit-masks-errors")["status"]) == (0, "pass")


def test_an_allow_comment_is_honoured_and_reported(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    source = MASKED.replace("os._exit(0)", "os._exit(0)  # doctor: allow exit-masks-errors "
                            "eval harness only, OPS-12")
    (repo / "train.py").write_text(source)
    rc, doc = run_json("--static", "--repo", str(repo), "--only", "exit-masks-errors")
    assert (rc, result_of(doc, "exit-masks-errors")["status"]) == (0, "pass")
    line = source.splitlines().index(next(s for s in source.splitlines() if "allow" in s)) + 1
    assert doc["facts"]["exit_masks_errors_allowed"] == [
        {"location": f"train.py:{line}", "reason": "eval harness only, OPS-12"}]


def test_the_demo_trips_it_in_its_training_entry():
    rc, doc = run_json("--static", "--repo", str(ROOT / "fixtures" / "demo"),
                       "--only", "exit-masks-errors")
    res = result_of(doc, "exit-masks-errors")
    assert (rc, res["status"], res["severity"]) == (1, "fail", "error")
    assert [(f["location"]["path"], f["data"]["form"], f["data"]["call"])
            for f in res["findings"]] == [("src/demo_pkg/train.py", "finally", "os._exit(0)")]
    assert res["findings"][0]["data"]["launched_by"] == ["slurm/train.sbatch:19"]


HELPER_CASES = {
    # a handler that calls a repo helper whose every path exits 0: the failure is masked
    "helper_exits_0": ("import os\n\n\ndef die():\n    os._exit(0)\n\n\ndef main():\n"
                       "    try:\n        raise RuntimeError('x')\n    except RuntimeError:\n"
                       "        die()\n\n\nif __name__ == '__main__':\n    main()\n", "error"),
    # exit(-1) is status 255: the failure reaches Slurm
    "exit_minus_1": ("import sys\n\n\ndef main():\n    try:\n        raise RuntimeError('x')\n"
                     "    except RuntimeError:\n        sys.exit(-1)\n\n\n"
                     "if __name__ == '__main__':\n    main()\n", None),
    # the true case stays: sys.exit() in `except KeyError` of a checkpoint loader exits 0
    "keyerror_exit": ("import sys\n\n\ndef load(d):\n    try:\n        return d['model']\n"
                      "    except KeyError:\n        sys.exit()\n\n\n"
                      "def main():\n    load({})\n\n\n"
                      "if __name__ == '__main__':\n    main()\n", "error"),
}


@pytest.mark.parametrize("case", sorted(HELPER_CASES))
def test_exit_status_through_helpers_and_negative_codes(case, tmp_path):
    source, expected = HELPER_CASES[case]
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text(source)
    (repo / "train.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\n"
                                       "srun python train.py\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    # the real program: its exit status is the oracle
    proc = subprocess.run([sys.executable, str(repo / "train.py")], capture_output=True)
    assert (proc.returncode == 0) == (expected == "error"), proc.returncode
    _, doc = run_json("--static", "--repo", str(repo), "--only", "exit-masks-errors")
    res = result_of(doc, "exit-masks-errors")
    sevs = [f["severity"] for f in res["findings"]]
    assert (("error" in sevs) == (expected == "error")), res["findings"]
    if expected is None:
        assert sevs == [], res["findings"]
