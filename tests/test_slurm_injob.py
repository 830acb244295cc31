"""In-job reports and `doctor sbatch` against the real local two-node Slurm (n1, n2).

The jobs inherit this environment (sbatch exports ALL), so PATH and PYTHONPATH
point `python -m doctor` at this checkout on both nodes.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, run_doctor, validate_report

pytestmark = pytest.mark.slurm

JOB_ENV = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
               PYTHONPATH=str(ROOT))
JOB_ENV.pop("SLURM_JOB_ID", None)


def sbatch_wait(script: Path, *args: str) -> str:
    """Submit, wait for the end (sbatch --wait), return the job id."""
    proc = subprocess.run(["sbatch", "--wait", "--parsable", *args, str(script)],
                          cwd=script.parent, env=JOB_ENV, capture_output=True, text=True,
                          timeout=240)
    job_id = proc.stdout.strip().split(";")[0]
    assert job_id.isdigit(), f"sbatch: {proc.stdout!r} {proc.stderr!r}"
    return job_id


def wait_done(job_id: str, timeout: float = 120) -> str:
    """Poll scontrol until the job has ended; its final state."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True,
                             text=True).stdout
        m = re.search(r"JobState=(\S+)", out)
        if m and m.group(1) not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
            return m.group(1)
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} still running after {timeout}s")


def write_job(path: Path, body: str, *directives: str) -> Path:
    path.write_text("#!/bin/bash\n" + "".join(f"#SBATCH {d}\n" for d in directives)
                    + f"#SBATCH -o {path.parent}/slurm-%j.out\n" + body + "\n")
    return path


def test_in_job_report_lands_next_to_the_job_log(slurm_cluster, tmp_path):
    # the recommended first step of a batch script (docs/slurm.md), on two nodes
    repo = tmp_path / "repo"
    repo.mkdir()
    script = write_job(tmp_path / "train.sbatch",
                       f"srun --ntasks-per-node=1 python -m doctor run --no-smoke --repo {repo} "
                       f"--format json --output /dev/null --json {tmp_path}/doctor-%j.json "
                       "|| exit 1\necho training would start here",
                       "--nodes=2", "--ntasks-per-node=1", "--job-name=injob")
    job_id = sbatch_wait(script)
    log = tmp_path / f"slurm-{job_id}.out"
    assert "training would start here" in log.read_text(), log.read_text()
    report = tmp_path / f"doctor-{job_id}.json"
    assert report.exists(), sorted(p.name for p in tmp_path.iterdir())
    doc = validate_report(json.loads(report.read_text()))
    assert doc["host"]["slurm_job_id"] == job_id
    assert doc["host"]["slurm_node"] == "n1"  # the step's first node writes the report
    slurm = doc["facts"]["slurm"]
    assert (slurm["job_id"], slurm["nodes"], slurm["partition"], slurm["job_name"]) == \
        (job_id, 2, "debug", "injob")
    assert slurm["node_list"] == "n[1-2]"


def test_in_job_report_names_the_node_it_ran_on(slurm_cluster, tmp_path):
    script = write_job(tmp_path / "one.sbatch",
                       f"srun python -m doctor run --static --repo {tmp_path} --format json "
                       f"--output /dev/null --json {tmp_path}/doctor-%j-%N.json",
                       "--nodes=1", "--nodelist=n2", "--ntasks=1")
    job_id = sbatch_wait(script)
    report = tmp_path / f"doctor-{job_id}-n2.json"
    assert report.exists(), (sorted(p.name for p in tmp_path.iterdir()),
                             (tmp_path / f"slurm-{job_id}.out").read_text())
    doc = validate_report(json.loads(report.read_text()))
    assert (doc["host"]["slurm_job_id"], doc["host"]["slurm_node"]) == (job_id, "n2")
    assert doc["facts"]["slurm"]["node"] == "n2"
    assert doc["facts"]["slurm"]["nodes"] == 1
    assert doc["facts"]["slurm"]["tasks"] == 1


@pytest.fixture
def warned_script(tmp_path):
    """A job whose script trips a warning-severity static check (renamed NCCL variable)."""
    listing = json.loads(run_doctor("list", "--format", "json").stdout)
    if "nccl-env-deprecated" not in {c["id"] for c in listing}:
        pytest.skip("needs the nccl-env-deprecated check")
    repo = tmp_path / "repo"
    repo.mkdir()
    script = write_job(repo / "job.sbatch", "export NCCL_ASYNC_ERROR_HANDLING=1\n"
                       "echo job output line", "--nodes=1", "--ntasks=1")
    return repo, script


def doctor_sbatch(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return run_doctor("sbatch", "--repo", str(repo), "--only", "nccl-env-deprecated",
                      "--torch-version", "2.5.1", *args, cwd=repo, env=JOB_ENV)


def test_doctor_sbatch_refuses_a_script_that_fails_the_checks(slurm_cluster, warned_script):
    repo, script = warned_script
    before = subprocess.run(["squeue", "-h", "-o", "%i"], capture_output=True, text=True).stdout
    proc = doctor_sbatch(repo, "--fail-on", "warning", "--json", str(repo / "doctor-%j.json"),
                         str(script), "--job-name=refused")
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""  # no job id: nothing was submitted
    assert "not submitted" in proc.stderr and "NCCL_ASYNC_ERROR_HANDLING" in proc.stderr
    assert not list(repo.glob("slurm-*.out"))
    doc = validate_report(json.loads((repo / "doctor-nojob.json").read_text()))
    assert doc["summary"]["status"] == "fail"
    after = subprocess.run(["squeue", "-h", "-n", "refused", "-o", "%i"], capture_output=True,
                           text=True).stdout
    assert after.strip() == "", (before, after)


def test_doctor_sbatch_submits_a_script_that_passes(slurm_cluster, warned_script):
    repo, script = warned_script
    # a warning does not refuse the job under the default --fail-on error
    proc = doctor_sbatch(repo, "--json", str(repo / "doctor-%j.json"), str(script),
                         "--job-name=accepted", "--", "ignored-arg")
    assert proc.returncode == 0, proc.stderr
    job_id = proc.stdout.strip()
    assert job_id.isdigit(), proc.stdout
    assert wait_done(job_id) == "COMPLETED"
    assert "job output line" in (repo / f"slurm-{job_id}.out").read_text()
    doc = validate_report(json.loads((repo / f"doctor-{job_id}.json").read_text()))
    assert doc["summary"]["status"] == "warn"


def test_doctor_sbatch_force_puts_the_report_into_the_job_log(slurm_cluster, warned_script):
    repo, script = warned_script
    proc = doctor_sbatch(repo, "--fail-on", "warning", "--force", str(script))
    assert proc.returncode == 0, proc.stderr
    job_id = proc.stdout.strip()
    assert job_id.isdigit(), proc.stdout
    assert wait_done(job_id) == "COMPLETED"
    log = (repo / f"slurm-{job_id}.out").read_text()
    assert log.startswith(f"# doctor: job {job_id} was submitted with `doctor sbatch --force`")
    assert "warning[nccl-env-deprecated]" in log   # the compact block: one line per finding
    # the job's own output follows the report
    assert log.index("nccl-env-deprecated") < log.index("job output line")


def test_a_job_that_sbatch_rejects_is_bad_input(slurm_cluster, warned_script):
    repo, _ = warned_script
    script = write_job(repo / "clean.sbatch", "true", "--ntasks=1")
    proc = doctor_sbatch(repo, str(script), "--partition=no-such-partition")
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("doctor: error: sbatch refused the job:") and "partition" in last
