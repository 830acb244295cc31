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
    """name → partition: t (MaxTime 10 min, MaxNodes 1), x (exclusive), d (down),
    m (MaxMemPerNode 1000 MB), c (MaxMemPerCPU 300 MB), a (AllowAccounts proj1),
    n (DenyAccounts proj2). The local nodes have 2 CPUs and RealMemory 2000 MB."""
    prefix = f"dtest_{uuid.uuid4().hex[:8]}"
    specs = {"t": ["MaxTime=10", "MaxNodes=1"], "x": ["OverSubscribe=EXCLUSIVE"],
             "d": ["State=DOWN"], "m": ["MaxMemPerNode=1000"], "c": ["MaxMemPerCPU=300"],
             "a": ["AllowAccounts=proj1"], "n": ["DenyAccounts=proj2"]}
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


def sbatch_refusal(repo: Path) -> str:
    """A real submission's stderr; a job it queued after all is cancelled."""
    res = subprocess.run(["sbatch", "--parsable", "job.sbatch"], cwd=repo,
                         capture_output=True, text=True, timeout=30)
    if res.stdout.strip():
        subprocess.run(["scancel", res.stdout.strip().split(";")[0]], capture_output=True,
                       timeout=30)
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
    """No --partition: the default partition (debug, 2 nodes) is the one checked, once
    the settings say the job is for this cluster (without that it may be another
    cluster's job: tests/test_cluster_link.py)."""
    repo = job(tmp_path, "--nodes=3", "--time=5")
    (repo / "doctor.yaml").write_text("site:\n  cluster: local\n")
    assert "Requested node configuration is not available" in sbatch_test_only(repo)
    code, res, _ = doctor(repo)
    assert code == 1
    f = res["findings"][0]
    assert f["data"]["partition"] == "debug" and f["data"]["limit_field"] == "TotalNodes"
    assert "partition debug (no --partition: the default partition)" in f["message"]


@pytest.mark.slurm
def test_unknown_partition_refused_by_test_only(parts, tmp_path):
    """An error where the settings say the job is for this cluster; a job whose partition
    this cluster lacks is otherwise another cluster's (tests/test_cluster_link.py)."""
    repo = job(tmp_path, f"--partition={parts['t']}_nosuch", "--time=5")
    (repo / "doctor.yaml").write_text("site:\n  cluster: local\n")
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


@pytest.mark.slurm
@pytest.mark.parametrize("mem", ["--mem=3000", "--mem=2G", "--mem=1t", "--mem-per-cpu=2001",
                                 "--mem-per-cpu=1500\n#SBATCH --cpus-per-task=2"])
def test_mem_above_real_memory_refused(parts, tmp_path, mem):
    """More than the nodes' RealMemory (2000 MB): sbatch --test-only says "Requested node
    configuration is not available", a real sbatch "Memory specification can not be
    satisfied"."""
    repo = job(tmp_path, "--partition=debug", "--time=5", mem)
    assert "Requested node configuration is not available" in sbatch_test_only(repo)
    code, res, _ = doctor(repo)
    assert code == 1 and res["severity"] == "error", res
    f = res["findings"][0]
    assert f["data"]["rule"] == "memory" and f["data"]["limit_field"] == "RealMemory"
    assert f["location"] == {"path": "job.sbatch", "line": 4}


@pytest.mark.slurm
def test_real_submission_names_memory(parts, tmp_path):
    repo = job(tmp_path, "--partition=debug", "--time=5", "--mem=3000")
    assert "Memory specification can not be satisfied" in sbatch_refusal(repo)


@pytest.mark.slurm
@pytest.mark.parametrize("mem", ["--mem=2000", "--mem=0", "--mem=1953M", "--mem=2000000K",
                                 "--mem-per-cpu=1000\n#SBATCH --cpus-per-task=2"])
def test_mem_within_real_memory_passes(parts, tmp_path, mem):
    repo = job(tmp_path, "--partition=debug", "--time=5", mem)
    assert "to start at" in sbatch_test_only(repo)
    code, res, _ = doctor(repo)
    assert code == 0 and res["status"] == "pass", res


@pytest.mark.slurm
@pytest.mark.parametrize("mem", ["--mem=1500", "--mem=0"])
def test_mem_above_max_mem_per_node_pends(parts, tmp_path, mem):
    """--mem=0 is the whole node (2000 MB): above MaxMemPerNode 1000, it pends too."""
    repo = job(tmp_path, f"--partition={parts['m']}", "--time=5", mem)
    assert pending_reason(repo, "MaxMemPerLimit") == "MaxMemPerLimit"
    code, res, _ = doctor(repo)
    assert code == 1
    f = res["findings"][0]
    assert f["data"]["limit_field"] == "MaxMemPerNode" and f["data"]["limit"] == 1000
    assert "MaxMemPerLimit" in f["message"]


@pytest.mark.slurm
def test_mem_within_max_mem_per_node_passes(parts, tmp_path):
    repo = job(tmp_path, f"--partition={parts['m']}", "--time=5", "--mem=1000")
    code, res, _ = doctor(repo)
    assert code == 0 and res["status"] == "pass", res


@pytest.mark.slurm
def test_max_mem_per_cpu_needs_more_cpus_than_nodes_have(parts, tmp_path):
    """MaxMemPerCPU 300: --mem=900 needs 3 CPUs of a 2-CPU node. --test-only accepts it;
    a real sbatch refuses it. --mem-per-cpu=400 is given 2 CPUs and fits."""
    repo = job(tmp_path, f"--partition={parts['c']}", "--time=5", "--mem=900")
    assert "CPU count per node can not be satisfied" in sbatch_refusal(repo)
    code, res, _ = doctor(repo)
    assert code == 1
    assert res["findings"][0]["data"]["cpus_needed"] == 3
    ok = job(tmp_path / "ok", f"--partition={parts['c']}", "--time=5", "--mem-per-cpu=400")
    assert "to start at" in sbatch_test_only(ok)
    assert doctor(ok)[1]["status"] == "pass"


@pytest.mark.slurm
def test_account_not_allowed_pends(parts, tmp_path):
    """The local Slurm has no accounting database, so it holds every job on an
    AllowAccounts partition ("Job's account not known, ..."); the doctor names only the
    accounts not listed."""
    repo = job(tmp_path, f"--partition={parts['a']}", "--time=5", "--account=other")
    want = f"Job's account not known, so it can't use this partition ({parts['a']} allows proj1)"
    assert pending_reason(repo, want) == want
    code, res, _ = doctor(repo)
    assert code == 1
    assert res["findings"][0]["data"] == {"partition": parts["a"], "source": "scontrol",
                                          "rule": "account", "account": "other",
                                          "limit_field": "AllowAccounts"}
    for ok in ("--account=proj1", "--account=PROJ1", "--time=5"):
        assert doctor(job(tmp_path / ok, f"--partition={parts['a']}", ok))[1]["status"] == "pass"


@pytest.mark.slurm
def test_denied_account_fails(parts, tmp_path):
    """DenyAccounts: the local Slurm (no accounting) does not enforce it, so this is the
    doctor's reading of the scontrol field alone."""
    repo = job(tmp_path, f"--partition={parts['n']}", "--time=5", "--account=proj2")
    code, res, _ = doctor(repo)
    assert code == 1 and res["findings"][0]["data"]["limit_field"] == "DenyAccounts"
    ok = job(tmp_path / "ok", f"--partition={parts['n']}", "--time=5", "--account=proj1")
    assert doctor(ok)[1]["status"] == "pass"


@pytest.mark.parametrize("mem, verdict", [
    ("--mem=256000", "pass"), ("--mem=250G", "pass"), ("--mem=251G", "fail"),
    ("--mem=0", "fail"), ("--mem=257000", "fail"), ("--mem=1T", "fail"),
    ("--mem-per-gpu=60G\n#SBATCH --gpus-per-node=4", "pass"),
    ("--mem-per-gpu=70G\n#SBATCH --gpus-per-node=4", "fail"), ("--mem=12x", "pass")])
def test_memory_against_profile(tmp_path, mem, verdict):
    """MaxMemPerNode and RealMemory from the site profile (MB), through --static; --mem=0
    is the whole node (512000 MB), above MaxMemPerNode as on the local Slurm."""
    repo = job(tmp_path, "--partition=p", "--time=5", mem)
    (repo / "doctor.yaml").write_text(
        "site:\n  partitions:\n    p: {MaxMemPerNode: 256000, RealMemory: 512000, "
        "GpusPerNode: 8}\n")
    code, res, _ = doctor(repo, "--static")
    assert res["status"] == verdict, (mem, res)
