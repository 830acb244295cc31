"""slurm-partition-limits against the real local Slurm: each rule beside what Slurm says.

Temporary partitions (`scontrol create`, deleted in the fixture's teardown even when a
test fails; slurm.conf is not touched) give MaxTime, MaxNodes, an exclusive and a down
partition. `sbatch --test-only` is the oracle for over-MaxNodes and unknown partitions;
with EnforcePartLimits=NO Slurm accepts over-MaxTime and down-partition jobs, so there
the oracle is a real submission's pending reason (`squeue -o %r`), cancelled at once.
The GRES and partial-node rules are proven through the profile path in
fixtures/slurm-partition-limits/ (the local nodes have no GPUs).
"""
from __future__ import annotations

import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import result_of, run_doctor, run_json

CHECK = "slurm-partition-limits"


def scontrol(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["scontrol", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture(scope="module")
def parts(slurm_cluster):
    """name → partition: t (MaxTime 10 min, MaxNodes 1), x (exclusive), d (down)."""
    prefix = f"dtest_{uuid.uuid4().hex[:8]}"
    specs = {"t": ["MaxTime=10", "MaxNodes=1"], "x": ["OverSubscribe=EXCLUSIVE"],
             "d": ["State=DOWN"]}
    made = []
    try:
        for key, fields in specs.items():
            name = f"{prefix}_{key}"
            res = scontrol("create", f"PartitionName={name}", "Nodes=ALL", *fields)
            assert res.returncode == 0, res.stderr
            made.append(name)
        yield {key: f"{prefix}_{key}" for key in specs}
    finally:
        for name in made:
            scontrol("delete", f"PartitionName={name}")


def job(tmp_path: Path, *directives: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir(parents=True, exist_ok=True)
    lines = ["#!/bin/bash", *(f"#SBATCH {d}" for d in directives), "hostname", ""]
    (repo / "job.sbatch").write_text("\n".join(lines))
    return repo


def doctor(repo: Path, *extra: str, env: dict | None = None) -> tuple:
    code, doc = run_json("--repo", str(repo), "--only", CHECK, *extra, env=env)
    return code, result_of(doc, CHECK), doc["facts"]


def sbatch_test_only(repo: Path) -> str:
    """`sbatch --test-only`'s verdict (it writes to stderr)."""
    res = subprocess.run(["sbatch", "--test-only", "job.sbatch"], cwd=repo,
                         capture_output=True, text=True, timeout=30)
    return res.stderr


def pending_reason(repo: Path, want: str) -> str:
    """Submit for real, read the pending reason until it is `want` (the scheduler may
    first show a transient one, such as PartitionConfig) or 10 s pass, cancel."""
    res = subprocess.run(["sbatch", "--parsable", "job.sbatch"], cwd=repo,
                         capture_output=True, text=True, timeout=30)
    job_id = res.stdout.strip().split(";")[0]
    assert job_id.isdigit(), res.stderr
    try:
        reason = ""
        for _ in range(40):
            reason = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%r"],
                                    capture_output=True, text=True, timeout=30).stdout.strip()
            if reason == want:
                break
            time.sleep(0.25)
        return reason
    finally:
        subprocess.run(["scancel", job_id], capture_output=True, timeout=30)


@pytest.mark.slurm
def test_over_max_time_pends_partition_time_limit(parts, tmp_path):
    repo = job(tmp_path, f"--partition={parts['t']}", "--time=1:00:00")
    assert pending_reason(repo, "PartitionTimeLimit") == "PartitionTimeLimit"
    code, res, facts = doctor(repo)
    assert code == 1 and res["status"] == "fail" and res["severity"] == "error"
    f = res["findings"][0]
    assert f["data"]["rule"] == "time" and f["data"]["source"] == "scontrol"
    assert f["location"] == {"path": "job.sbatch", "line": 3}
    assert "MaxTime 00:10:00" in f["message"] and "PartitionTimeLimit" in f["message"]
    assert facts["partitions"]["source"] == "scontrol"


@pytest.mark.slurm
def test_unlimited_time_pends_partition_time_limit(parts, tmp_path):
    repo = job(tmp_path, f"--partition={parts['t']}", "--time=UNLIMITED")
    assert pending_reason(repo, "PartitionTimeLimit") == "PartitionTimeLimit"
    code, res, _ = doctor(repo)
    assert code == 1 and res["findings"][0]["data"]["rule"] == "time"


@pytest.mark.slurm
def test_within_max_time_passes(parts, tmp_path):
    for value in ("10", "9:59", "00:10:00", "0-0:10"):
        repo = job(tmp_path, f"--partition={parts['t']}", f"--time={value}")
        code, res, _ = doctor(repo)
        assert res["status"] == "pass", (value, res)


@pytest.mark.slurm
def test_over_max_nodes_refused_by_test_only(parts, tmp_path):
    control = job(tmp_path / "control", "--partition=debug", "--nodes=2", "--time=5")
    assert "to start at" in sbatch_test_only(control)   # 2 nodes exist: MaxNodes refuses
    repo = job(tmp_path, f"--partition={parts['t']}", "--nodes=2", "--time=5")
    assert "Requested node configuration is not available" in sbatch_test_only(repo)
    code, res, _ = doctor(repo)
    assert code == 1
    f = res["findings"][0]
    assert f["data"] == {"partition": parts["t"], "source": "scontrol", "rule": "nodes",
                         "nodes": 2, "limit_field": "MaxNodes", "limit": 1}


@pytest.mark.slurm
def test_default_partition_total_nodes(parts, tmp_path):
    """No --partition: the default partition (debug, 2 nodes) is the one checked."""
    repo = job(tmp_path, "--nodes=3", "--time=5")
    assert "Requested node configuration is not available" in sbatch_test_only(repo)
    code, res, _ = doctor(repo)
    assert code == 1
    f = res["findings"][0]
    assert f["data"]["partition"] == "debug" and f["data"]["limit_field"] == "TotalNodes"
    assert "partition debug (no --partition: the default partition)" in f["message"]


@pytest.mark.slurm
def test_unknown_partition_refused_by_test_only(parts, tmp_path):
    repo = job(tmp_path, f"--partition={parts['t']}_nosuch", "--time=5")
    assert "invalid partition specified" in sbatch_test_only(repo)
    code, res, _ = doctor(repo)
    assert code == 1 and res["findings"][0]["data"]["rule"] == "unknown"


@pytest.mark.slurm
def test_down_partition_pends_partition_down(parts, tmp_path):
    repo = job(tmp_path, f"--partition={parts['d']}", "--time=5")
    assert pending_reason(repo, "PartitionDown") == "PartitionDown"
    code, res, _ = doctor(repo)
    assert code == 1
    assert res["findings"][0]["data"] == {"partition": parts["d"], "source": "scontrol",
                                          "rule": "state", "state": "DOWN"}


@pytest.mark.slurm
def test_exclusive_partition_without_gpus_passes(parts, tmp_path):
    """The local nodes have no GPU GRES: no partial-node warning on the exclusive one."""
    repo = job(tmp_path, f"--partition={parts['x']}", "--time=5")
    assert "to start at" in sbatch_test_only(repo)
    code, res, _ = doctor(repo)
    assert code == 0 and res["status"] == "pass"


@pytest.mark.slurm
def test_live_wins_and_disagreement_is_a_fact(parts, tmp_path):
    repo = job(tmp_path, f"--partition={parts['t']}", "--time=1:00:00")
    (repo / "doctor.yaml").write_text(
        f"site:\n  partitions:\n    {parts['t']}: {{MaxTime: '1-00:00:00', MaxNodes: 1}}\n")
    code, res, facts = doctor(repo)
    assert code == 1 and res["findings"][0]["data"]["source"] == "scontrol"
    assert facts["partitions"]["disagree"] == [
        {"partition": parts["t"], "field": "MaxTime", "scontrol": "00:10:00",
         "profile": "1-00:00:00"}]
    # --static never asks Slurm: the profile's limit, which this job is within
    code, res, facts = doctor(repo, "--static")
    assert res["status"] == "pass" and facts["partitions"] == {"source": "site profile"}


@pytest.mark.slurm
def test_static_without_profile_skips_naming_both(parts, tmp_path):
    repo = job(tmp_path, f"--partition={parts['t']}", "--time=1:00:00")
    code, res, _ = doctor(repo, "--static")
    assert code == 0 and res["status"] == "skip"
    assert "--static does not ask Slurm" in res["reason"]
    assert "site profile has no `partitions`" in res["reason"]


@pytest.mark.slurm
def test_command_line_time_overrides_script(parts, tmp_path):
    """`doctor sbatch SCRIPT --time=...`: the option as sbatch reads it, named as such;
    the check fails, so nothing is submitted."""
    repo = job(tmp_path, f"--partition={parts['t']}", "--time=5")
    proc = run_doctor("sbatch", "--repo", str(repo), "--only", CHECK, "job.sbatch",
                      "--time=2:00:00", cwd=repo)
    if proc.stdout.strip().isdigit():   # a bug submitted it: do not leave it queued
        subprocess.run(["scancel", proc.stdout.strip()], capture_output=True, timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert "the sbatch command line: --time=2:00:00" in proc.stderr


@pytest.mark.parametrize("time_, verdict", [
    ("2880", "pass"), ("2881", "fail"), ("2880:00", "pass"), ("2880:01", "fail"),
    ("48:00:00", "pass"), ("48:00:01", "fail"), ("2-0", "pass"), ("2-1", "fail"),
    ("1-23:59", "pass"), ("2-00:01", "fail"), ("2-00:00:00", "pass"), ("2-00:00:01", "fail"),
    ("UNLIMITED", "fail"), ("infinite", "fail")])
def test_time_formats_against_profile_max_time(tmp_path, time_, verdict):
    """Every form of --time (man sbatch) against a 2-day MaxTime, through the profile
    path (--static: no Slurm needed)."""
    repo = job(tmp_path, "--partition=p", f"--time={time_}")
    (repo / "doctor.yaml").write_text("site:\n  partitions:\n    p: {MaxTime: 2-00:00:00}\n")
    code, res, _ = doctor(repo, "--static")
    assert res["status"] == verdict, (time_, res)


def test_no_scontrol_and_no_profile_skips_naming_both(tmp_path):
    """Not --static, but no Slurm on PATH: the skip names both missing sources."""
    repo = job(tmp_path, "--partition=p", "--time=1:00:00")
    code, res, _ = doctor(repo, env={"PATH": str(tmp_path / "empty-bin")})
    assert code == 0 and res["status"] == "skip"
    assert res["reason"] == ("no partition limits: scontrol did not answer within 3 s, "
                             "and the site profile has no `partitions`")
