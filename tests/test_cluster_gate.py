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
from doctor.job.context import Job
from doctor.registry import get
from doctor.runner import run_checks

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


def _repo(tmp_path: Path, *, partition: str = "train", ulimit: bool = True,
          tie: str | None = None, settings: str | None = None) -> Path:
    """`tie` replaces the `#SBATCH --partition=train` line (another `#SBATCH` line, or ""
    for none); `settings` is the doctor.yaml."""
    sbatch = (FAIRSEQ / "fairseq_fsdp_sbatch.sh").read_text()
    wrapper = (FAIRSEQ / "fairseq_fsdp.sh").read_text()
    assert "#SBATCH --partition=train\n" in sbatch and "ulimit -S -c unlimited\n" in wrapper
    sbatch = sbatch.replace("#SBATCH --partition=train\n", f"#SBATCH --partition={partition}\n"
                            if tie is None else tie)
    if not ulimit:
        wrapper = wrapper.replace("ulimit -S -c unlimited\n", "")
    files = {"fairseq_fsdp_sbatch.sh": sbatch, "fairseq_fsdp.sh": wrapper}
    if settings is not None:
        files["doctor.yaml"] = settings
    return git_repo(tmp_path / "repo", files)


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



@pytest.mark.parametrize("tie,settings", [
    ("", "site: {cluster: LOCAL}\n"),
    ("#SBATCH --clusters=LOCAL\n", None),
], ids=["site-cluster", "sbatch-clusters"])
def test_the_clusters_name_in_another_case_is_still_this_cluster(slurm_cluster, tmp_path,
                                                                  tie, settings):
    # slurm.conf says ClusterName=local (tests/slurm); Slurm matches cluster names without
    # case, so a job for `LOCAL` runs here and this shell's limit is the job's
    result = _run(_repo(tmp_path, ulimit=False, tie=tie, settings=settings))
    assert result["status"] == "fail", result
    [f] = result["findings"]
    assert "the login shell's limit (Slurm propagates it to the job)" in f["message"]
    assert "not known here" not in f["message"] and "other_cluster" not in f["data"], f


# ---- recorded facts of a GPU node reading another cluster's job ---------------------
# The fixtures' facts are a GPU node's (fixtures/gpu-not-visible, torch-compile-risk):
# this machine, were it that node, would judge a job tied to it. The same job sent to a
# partition the live Slurm lacks (`train`, fair_seq_fsdp_slurm's) runs on another cluster.

def _fixture_job(tmp_path: Path, case: str, sbatch: str) -> Job:
    from harness import load_case, materialize

    src = ROOT / "fixtures" / case
    root = materialize(src, tmp_path)
    (root / "job.sbatch").write_text(sbatch)
    spec = load_case(src)
    return Job(root, sbatch=[str(root / "job.sbatch")], facts=spec.get("facts"),
               # read from a login shell, not inside a job: the node's facts alone
               env={str(k): str(v) for k, v in (spec.get("env") or {}).items()
                    if not str(k).startswith("SLURM_")})


def _in_process(job: Job, check_id: str) -> dict:
    doc = run_checks(job, [get(check_id)]).doc()
    return dict(result_of(doc, check_id), facts=doc["facts"])


GPU_JOB = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:a100:4\n{part}srun python train.py\n"


@pytest.mark.parametrize("check_id, case, sbatch", [
    ("gpu-not-visible", "gpu-not-visible/fail_a100_fewer_than_gres", GPU_JOB),
    ("torch-compile-risk", "torch-compile-risk/fail_no_triton_cuda", GPU_JOB),
])
def test_a_gpu_nodes_own_facts_do_not_judge_another_clusters_job(
        slurm_cluster, tmp_path, check_id, case, sbatch):
    here = _in_process(_fixture_job(tmp_path / "here", case, sbatch.format(part="")), check_id)
    assert here["status"] == "fail", here   # the node's facts judge a job tied to no cluster
    away = _in_process(_fixture_job(tmp_path / "away", case, sbatch.format(
        part="#SBATCH --partition=train\n")), check_id)
    assert not away["findings"], away
    if check_id == "gpu-not-visible":
        assert away["status"] == "skip", away
        said = away["reason"]
        assert "this machine's GPUs and torch are not the job's nodes'" in said, said
    else:   # judged as in --static (its verdict must not change with the mode), and said
        assert away["status"] == "pass", away
        said = away["facts"]["torch_compile_unchecked"]
        assert "triton and node memory not judged" in said, said
    assert "partition train" in said, said


# ---- this machine's mounts ------------------------------------------------------------
SQLITE = ROOT / "fixtures" / "sqlite-on-shared-fs" / "fail_warn_static_unknown_filesystem"


def _sqlite_result(tmp_path: Path, partition: str, mode: str) -> dict:
    """The fixture's job (a LUMI 2-node job whose 8 ranks open one MLflow SQLite file
    under /scratch/project_462000640, cut from the seed) with its partition set, checked
    by the real CLI; /scratch is not a directory of this machine."""
    sbatch = (SQLITE / "job.sbatch").read_text()
    assert "#SBATCH --partition=standard-g\n" in sbatch
    repo = git_repo(tmp_path / f"{partition}-{mode}", {
        "job.sbatch": sbatch.replace("standard-g", partition),
        "train.py": (SQLITE / "train.py").read_text()})
    proc = subprocess.run([sys.executable, "-m", "doctor", "run", mode, "--format", "json",
                           "--repo", str(repo), "--only", "sqlite-on-shared-fs",
                           "--sbatch", str(repo / "job.sbatch")],
                          cwd=repo, env=clean_env({"HOME": "/users/ammar", "USER": "ammar"}),
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout, proc.stderr[-2000:]
    return result_of(validate_report(json.loads(proc.stdout)), "sqlite-on-shared-fs")


def test_this_machines_mounts_do_not_judge_another_clusters_paths(slurm_cluster, tmp_path):
    static = _sqlite_result(tmp_path, "standard-g", "--static")
    live = _sqlite_result(tmp_path, "standard-g", "--no-smoke")
    # /scratch/... does not exist here: this machine's mount table would put it on its
    # own root filesystem (not shared) and pass it; the job's cluster's is not known
    assert live["status"] == static["status"] == "fail", (live, static)
    [f] = live["findings"]
    assert f.get("severity", live["severity"]) == "warning"
    assert f["data"]["filesystem"]["source"] == "none", f["data"]
    assert "the job is for another cluster: no site profile and no recorded mount table " \
        "names it" in f["message"], f["message"]


def test_this_clusters_job_is_still_judged_by_this_machines_mounts(slurm_cluster, tmp_path):
    live = _sqlite_result(tmp_path, slurm_cluster["partition"], "--no-smoke")
    # the local root filesystem is not a network one: nothing to report
    assert live["status"] == "pass", live


MIOPEN = ROOT / "fixtures" / "miopen-cache-shared" / "fail_bare_multiuser_tmp"


def _miopen_result(tmp_path: Path, partition: str, mode: str) -> dict:
    """The fixture's LUMI job (MIOPEN_USER_DB_PATH=/tmp/miopen, a ROCm partition) with its
    partition set, checked by the real CLI without its recorded mount table."""
    sbatch = (MIOPEN / "job.sbatch").read_text()
    assert "#SBATCH --partition=standard-g\n" in sbatch
    repo = git_repo(tmp_path / f"{partition}-{mode}", {
        "job.sbatch": sbatch.replace("standard-g", partition), "train.py": "import torch\n"})
    proc = subprocess.run([sys.executable, "-m", "doctor", "run", mode, "--format", "json",
                           "--repo", str(repo), "--only", "miopen-cache-shared",
                           "--sbatch", str(repo / "job.sbatch")],
                          cwd=repo, env=clean_env(), capture_output=True, text=True,
                          timeout=120)
    assert proc.stdout, proc.stderr[-2000:]
    return result_of(validate_report(json.loads(proc.stdout)), "miopen-cache-shared")


def test_this_machines_mounts_do_not_judge_another_clusters_miopen_cache(slurm_cluster,
                                                                          tmp_path):
    """/tmp of this machine is node-local, which makes /tmp/miopen a multi-user /tmp here;
    the LUMI job's /tmp is LUMI's, which no site profile or recorded table describes."""
    live = _miopen_result(tmp_path, "standard-g", "--no-smoke")
    assert live["status"] in ("pass", "skip") and live["findings"] == [], live


def test_this_clusters_rocm_job_is_still_judged_by_this_machines_mounts(slurm_cluster,
                                                                         tmp_path):
    live = _miopen_result(tmp_path, slurm_cluster["partition"], "--no-smoke")
    # both variables of the fixture name /tmp/miopen
    assert [f["data"]["variable"] for f in live["findings"]] == [
        "MIOPEN_USER_DB_PATH", "MIOPEN_CUSTOM_CACHE_DIR"], live["findings"]
    assert all("is a multi-user /tmp with no user or job part" in f["message"]
               for f in live["findings"]), live["findings"]
