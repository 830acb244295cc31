"""No fact of this node judges a job written for another cluster (issue 26, item 3).

The job is pbelevich/fair_seq_fsdp_slurm's (tests/data/unseen/fair_seq_fsdp_slurm, copied
unchanged): `#SBATCH --partition=train`, a partition the local two-node Slurm
(tests/slurm/cluster.sh: `debug` only) lacks, so the job runs on another cluster's nodes,
under their kernel.core_pattern and a shell's limits there. The real CLI runs in
`--no-smoke` with the live local Slurm answering, from a shell whose core limit is
unlimited, on this machine whose core_pattern is a plain file.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, clean_env, git_repo, result_of, validate_report

FAIRSEQ = ROOT / "tests" / "data" / "unseen" / "fair_seq_fsdp_slurm"
CHECK = "core-dump-unlimited"


def _core_pattern_is_a_file() -> bool:
    try:
        pattern = Path("/proc/sys/kernel/core_pattern").read_text().strip()
    except OSError:
        return False
    return bool(pattern) and not pattern.startswith(("|", "/"))


pytestmark = [pytest.mark.slurm, pytest.mark.skipif(
    not _core_pattern_is_a_file(), reason="this node's core_pattern writes no file into the "
    "working directory: nothing here would judge the job even without the gate")]


def _repo(tmp_path: Path, *, partition: str = "train", ulimit: bool = True) -> Path:
    sbatch = (FAIRSEQ / "fairseq_fsdp_sbatch.sh").read_text()
    wrapper = (FAIRSEQ / "fairseq_fsdp.sh").read_text()
    assert "#SBATCH --partition=train\n" in sbatch and "ulimit -S -c unlimited\n" in wrapper
    sbatch = sbatch.replace("--partition=train", f"--partition={partition}")
    if not ulimit:
        wrapper = wrapper.replace("ulimit -S -c unlimited\n", "")
    return git_repo(tmp_path / "repo", {"fairseq_fsdp_sbatch.sh": sbatch,
                                        "fairseq_fsdp.sh": wrapper})


def _run(repo: Path) -> dict:
    """`doctor run --no-smoke` from a login shell whose core limit is unlimited (Slurm
    hands the submitting shell's limits to the job)."""
    argv = [sys.executable, "-m", "doctor", "run", "--no-smoke", "--format", "json",
            "--repo", str(repo), "--only", CHECK, "--sbatch", "fairseq_fsdp_sbatch.sh"]
    proc = subprocess.run(["bash", "-c", 'ulimit -S -c unlimited && exec "$@"', "bash", *argv],
                          cwd=repo, env=clean_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout, proc.stderr[-2000:]
    return result_of(validate_report(json.loads(proc.stdout)), CHECK)


def test_the_jobs_own_ulimit_is_judged_against_the_kernel_default_not_this_node(
        slurm_cluster, tmp_path):
    result = _run(_repo(tmp_path))
    assert result["status"] == "fail", result
    [f] = result["findings"]
    assert f.get("severity", result["severity"]) == "warning"
    assert f["location"] == {"path": "fairseq_fsdp.sh", "line": 10}, f
    assert "`ulimit -c unlimited` at fairseq_fsdp.sh:10" in f["message"], f["message"]
    # the link this machine cannot see is named: that cluster's core_pattern
    assert "that cluster's kernel.core_pattern is not known here" in f["message"], f["message"]
    assert "partition train" in f["message"], f["message"]
    assert f["data"]["core_pattern"] == "core" and f["data"]["other_cluster"]


def test_this_shells_core_limit_does_not_judge_another_clusters_job(slurm_cluster, tmp_path):
    result = _run(_repo(tmp_path, ulimit=False))
    assert result["status"] == "skip", result
    reason = result["reason"]
    assert "fairseq_fsdp_sbatch.sh: the login shell's core limit and core_pattern of this " \
        "machine are not the job's" in reason, reason
    assert "partition train" in reason, reason


def test_a_job_for_this_cluster_is_still_judged_by_this_shells_limit(slurm_cluster, tmp_path):
    result = _run(_repo(tmp_path, partition=slurm_cluster["partition"], ulimit=False))
    assert result["status"] == "fail", result
    [f] = result["findings"]
    assert "the login shell's limit (Slurm propagates it to the job)" in f["message"]
    assert "not known here" not in f["message"] and "other_cluster" not in f["data"], f

