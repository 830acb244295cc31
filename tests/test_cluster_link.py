"""Issue 26, deliverable 3: live Slurm facts judge a job only where the job is for this
cluster. The real local two-node Slurm (ClusterName=local, partition debug) is the
oracle: `sbatch --test-only` refuses this cluster's impossible jobs, and refuses another
cluster's jobs for a partition it does not have, which says nothing about their limits
on their own cluster. Every run is the real CLI: `doctor run --no-smoke`."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import result_of, run_doctor, run_json

CHECK = "slurm-partition-limits"


def job(tmp_path: Path, *directives: str, settings: str = "") -> Path:
    repo = tmp_path / "repo"
    repo.mkdir(parents=True, exist_ok=True)
    lines = ["#!/bin/bash", *(f"#SBATCH {d}" for d in directives), "hostname", ""]
    (repo / "job.sbatch").write_text("\n".join(lines))
    if settings:
        (repo / "doctor.yaml").write_text(settings)
    return repo


def sbatch_test_only(repo: Path) -> str:
    res = subprocess.run(["sbatch", "--test-only", "job.sbatch"], cwd=repo,
                         capture_output=True, text=True, timeout=30)
    return res.stderr


def no_smoke(repo: Path) -> tuple:
    """The whole `doctor run --no-smoke`: (exit code, this check's result, facts)."""
    code, doc = run_json("--repo", str(repo), "--no-smoke")
    return code, result_of(doc, CHECK), doc["facts"], doc


def errors(doc: dict) -> list:
    return [(r["id"], f["message"]) for r in doc["results"]
            for f in r.get("findings", ()) if f["severity"] == "error"]


@pytest.mark.slurm
def test_another_clusters_job_is_not_judged(slurm_cluster, tmp_path):
    """The issue's login-node case: develbooster, 16 nodes, 4 GPUs per node. This cluster
    lacks the partition (sbatch says so), so the job was written for another cluster:
    the check skips naming this cluster, and nothing in the run is an error."""
    repo = job(tmp_path, "--partition=develbooster", "--nodes=16", "--gres=gpu:4",
               "--time=02:00:00")
    # this cluster refuses it (its nodes have no GPU GRES, nor a develbooster partition)
    assert "Invalid generic resource (gres) specification" in sbatch_test_only(repo)
    assert "invalid partition specified: develbooster" in sbatch_test_only(
        job(tmp_path / "nogpu", "--partition=develbooster", "--nodes=16"))
    code, res, facts, doc = no_smoke(repo)
    assert res["status"] == "skip", res
    assert res["reason"] == (
        "partition develbooster: not a partition of cluster 'local' (live Slurm); the job "
        "was written for another cluster, so its limits are not judged here")
    assert facts["partitions"]["not_judged"] == [{"script": "job.sbatch",
                                                  "reason": res["reason"]}]
    assert code == 0 and errors(doc) == [], errors(doc)


@pytest.mark.slurm
def test_this_clusters_partition_with_impossible_nodes_is_an_error(slurm_cluster, tmp_path):
    """debug is this cluster's partition: its 2 nodes judge --nodes=16, as sbatch does."""
    repo = job(tmp_path, "--partition=debug", "--nodes=16", "--time=5")
    assert "Requested node configuration is not available" in sbatch_test_only(repo)
    code, res, facts, _ = no_smoke(repo)
    assert code == 1 and res["status"] == "fail" and res["severity"] == "error"
    f = res["findings"][0]
    assert f["data"] == {"partition": "debug", "source": "scontrol", "rule": "nodes",
                         "nodes": 16, "limit_field": "TotalNodes", "limit": 2}
    assert f["location"] == {"path": "job.sbatch", "line": 3}
    assert facts["partitions"] == {"source": "scontrol"}


@pytest.mark.slurm
def test_no_partition_is_judged_only_for_this_cluster(slurm_cluster, tmp_path):
    """No --partition: this cluster's default partition applies only where the job is
    this cluster's. Unsaid, it skips; `--clusters=local` or `site: {cluster: local}`
    say it, and the default partition's 2 nodes judge --nodes=16."""
    repo = job(tmp_path, "--nodes=16", "--time=5")
    assert "Requested node configuration is not available" in sbatch_test_only(repo)
    code, res, _, doc = no_smoke(repo)
    assert code == 0 and res["status"] == "skip" and errors(doc) == []
    assert "job.sbatch names no --partition, and nothing says it is for cluster 'local'" \
        in res["reason"] and "site: {cluster: NAME}" in res["reason"]
    for how in ({"directives": ("--clusters=local",)}, {"settings": "site:\n  cluster: local\n"}):
        repo = job(tmp_path / str(len(how)) / next(iter(how)), "--nodes=16", "--time=5",
                   *how.get("directives", ()), settings=how.get("settings", ""))
        code, res, _, _ = no_smoke(repo)
        assert code == 1 and res["findings"][0]["data"]["limit_field"] == "TotalNodes", how
        assert "no --partition: the default partition" in res["findings"][0]["message"]


@pytest.mark.slurm
def test_clusters_option_naming_another_cluster_wins_over_a_shared_name(slurm_cluster,
                                                                        tmp_path):
    """`-M juwels`: a partition named debug on juwels is not this cluster's debug."""
    repo = job(tmp_path, "-M juwels", "--partition=debug", "--nodes=16")
    code, res, _, doc = no_smoke(repo)
    assert code == 0 and res["status"] == "skip" and errors(doc) == []
    assert res["reason"] == ("job.sbatch:2 (#SBATCH --clusters=juwels) sends the job to another "
                             "cluster than cluster 'local', so that cluster's live Slurm "
                             "does not judge it")


@pytest.mark.slurm
def test_settings_naming_another_cluster_judge_by_its_profile(slurm_cluster, tmp_path):
    """`site: lumi`: the jobs are for LUMI (ClusterName lumi), so this cluster's live
    facts never judge them, even where a partition name is shared (debug); LUMI's
    profile does (debug: MaxNodes 4)."""
    repo = job(tmp_path, "--partition=debug", "--nodes=16", "--time=5", settings="site: lumi\n")
    code, res, facts, _ = no_smoke(repo)
    assert code == 1 and facts["partitions"]["source"] == "site profile"
    assert res["findings"][0]["data"] == {"partition": "debug", "source": "site profile",
                                          "rule": "nodes", "nodes": 16,
                                          "limit_field": "MaxNodes", "limit": 4}
    # the same settings, a partition LUMI's profile lacks: the settings say it is LUMI's
    # job, the profile may be incomplete, so a warning (as before this issue)
    repo = job(tmp_path / "b", "--partition=develbooster", settings="site: lumi\n")
    code, res, _, _ = no_smoke(repo)
    assert res["severity"] == "warning" and res["findings"][0]["data"]["rule"] == "unknown"


@pytest.mark.slurm
def test_one_job_judged_and_one_not(slurm_cluster, tmp_path):
    """Two scripts: this cluster's is judged, the other's absence is a fact."""
    repo = job(tmp_path, "--partition=debug", "--nodes=16")
    (repo / "other.sbatch").write_text("#!/bin/bash\n#SBATCH --partition=booster\n"
                                       "#SBATCH --nodes=64\nhostname\n")
    code, res, facts, _ = no_smoke(repo)
    assert code == 1 and [f["location"]["path"] for f in res["findings"]] == ["job.sbatch"]
    assert [n["script"] for n in facts["partitions"]["not_judged"]] == ["other.sbatch"]


@pytest.mark.slurm
def test_doctor_sbatch_submits_here_so_this_cluster_judges(slurm_cluster, tmp_path):
    """`doctor sbatch` hands the job to this machine's sbatch: this cluster is the job's,
    so its default partition judges a job without --partition (`doctor run` skips it),
    and the doctor refuses what sbatch would refuse, before submitting."""
    repo = job(tmp_path, "--nodes=16", "--time=5")
    assert "Requested node configuration is not available" in sbatch_test_only(repo)
    proc = run_doctor("sbatch", "--repo", str(repo), "--only", CHECK,
                      str(repo / "job.sbatch"))
    if proc.stdout.strip().isdigit():   # a bug submitted it: do not leave it queued
        subprocess.run(["scancel", proc.stdout.strip()], capture_output=True, timeout=30)
    assert proc.returncode == 1, proc.stderr
    assert "not submitted: a check failed" in proc.stderr and "TotalNodes" in proc.stderr
