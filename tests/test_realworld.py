"""Real-world inputs: training configs and job scripts adapted from public repositories.

Each tests/data/realworld/<name>/ is a mini repo (SOURCE.md says where it comes from).
It is copied, committed with real git, and checked with the real CLI twice: `--static`
(the CI gate) and `--no-smoke` (static + node checks on this machine). No run may crash
(no `error` result, no exit 2/3, no traceback); every report validates against the
schema; and the findings are the ones a careful reader of the files expects, written
down below per repo: the checks that must fail, each with the exact (path, line) of its
findings, and the checks that must pass.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from doctor.registry import all_checks
from conftest import ROOT, run_doctor, validate_report

REALWORLD = ROOT / "tests" / "data" / "realworld"
# Every static check of the registry: a check added later must also hold on these repos.
STATIC_IDS = {s.id for s in all_checks() if s.static}

# name → {"fail": {check: {(path, line), ...}}, "pass": {...}, "skip": {...}} for --static.
# Every static check not named under "fail" or "skip" must pass.
EXPECT: dict = {
    # Hydra groups: the script selects trainer=ddp (devices 4) and asks for 4 tasks/GPUs;
    # trainer/cpu.yaml, gpu.yaml, default.yaml are unused alternatives (was a false positive).
    "lhtemplate_hydra": {"fail": {}, "skip": {"hip-alloc-conf", "rsync-exclude-unanchored",
                                              "torch-compile-risk",
                                              "wandb-online-in-container"}},
    # LUMI: MIOpen cache per job in node-local /tmp is right; no expandable_segments (warning).
    "particleflow_lumi": {
        "fail": {"hip-alloc-conf": {("scripts/lumi/pytorch-cms-8.sh", None)}},
        "skip": {"dataloader-option-conflict", "rsync-exclude-unanchored",
                 "slurm-gpu-mismatch", "torch-compile-risk", "wandb-online-in-container"}},
    "cotainr_lumi_torchrun": {
        "fail": {"hip-alloc-conf": {("run_multigpu_torchrun.sh", None)}},
        "skip": {"dataloader-option-conflict", "rsync-exclude-unanchored",
                 "slurm-gpu-mismatch", "torch-compile-risk", "wandb-online-in-container"}},
    # 4 nodes × 8 GCDs matching the LightningCLI config, per-node MIOpen cache, wandb offline,
    # expandable segments on: nothing to report (heredoc, array, `if` block parse cleanly).
    "lumi_docs_multinode": {"fail": {}, "skip": {"rsync-exclude-unanchored",
                                                 "torch-compile-risk"}},
    # The old name still warns on every rank even next to the new one (torch reads both).
    "nccl_multinode_torchrun": {
        "fail": {"nccl-env-deprecated": {("slurm/train.sbatch", 19)}},
        "skip": {"hip-alloc-conf", "rsync-exclude-unanchored", "torch-compile-risk",
                 "wandb-online-in-container"}},
    # Renamed variable in the script, NCCL_TIMEOUT (read by nothing) in the sourced file;
    # NCCL_IB_TIMEOUT is a real NCCL setting and must not be reported.
    "juwels_booster_source": {
        "fail": {"nccl-env-deprecated": {("run.sbatch", 12),
                                         ("set_torch_distributed_vars.sh", 6)}},
        "skip": {"dataloader-option-conflict", "hip-alloc-conf", "rsync-exclude-unanchored",
                 "slurm-gpu-mismatch", "torch-compile-risk", "wandb-online-in-container"}},
    # compile with spawn workers, devices/tasks/GPUs/CPUs all agree.
    "cscs_alps_edf": {"fail": {}, "skip": {"hip-alloc-conf", "rsync-exclude-unanchored",
                                           "wandb-online-in-container"}},
    # --exclude='results' in a Makefile recipe also drops the tracked package kernels/results/.
    "makefile_rsync_results": {
        "fail": {"rsync-exclude-unanchored": {("Makefile", 4)}},
        "skip": {"dataloader-option-conflict", "hip-alloc-conf", "slurm-gpu-mismatch",
                 "torch-compile-risk", "wandb-online-in-container",
                 "script-dos-line-breaks"}},  # a Makefile only: no shell script
    # Sources the doctor cannot resolve (an array, $HOME, a Jinja template, a glob, a
    # $(git rev-parse) root) are left out with a reason, never guessed at.
    "rsync_flags_array": {"fail": {}, "skip": {
        "dataloader-option-conflict", "hip-alloc-conf", "rsync-exclude-unanchored",
        "slurm-gpu-mismatch", "torch-compile-risk", "wandb-online-in-container"}},
    "send_to_cluster_getopts": {"fail": {}, "skip": {
        "dataloader-option-conflict", "hip-alloc-conf", "rsync-exclude-unanchored",
        "slurm-gpu-mismatch", "torch-compile-risk", "wandb-online-in-container"}},
    "squad_rsync_glob": {"fail": {}, "skip": {
        "dataloader-option-conflict", "hip-alloc-conf", "rsync-exclude-unanchored",
        "slurm-gpu-mismatch", "torch-compile-risk", "wandb-online-in-container"}},
    "olympic_heredoc_jinja": {"fail": {}, "skip": {
        "dataloader-option-conflict", "hip-alloc-conf", "rsync-exclude-unanchored",
        "slurm-gpu-mismatch", "torch-compile-risk", "wandb-online-in-container"}},
    # val_loader merges prefetch_factor/persistent_workers from the anchor but has 0 workers
    # (true positive, reported where the keys are written); the anchor itself is not a
    # DataLoader (was a false positive); ${oc.env:...} values are not guessed.
    "hydra_oc_env_anchors": {
        "fail": {"dataloader-option-conflict": {("configs/experiment.yaml", 4),
                                                ("configs/experiment.yaml", 5)}},
        "skip": {"hip-alloc-conf", "rsync-exclude-unanchored", "torch-compile-risk",
                 "wandb-online-in-container"}},
}

# Node checks whose verdict on these files does not depend on this machine.
LIVE_EXPECT: dict = {
    # `python3 mlpf/pipeline.py` puts mlpf/ (not the repo) on sys.path and PYTHONPATH is
    # only hep_tfds, so `from mlpf.model.training import ...` fails.
    "particleflow_lumi": {"package-not-importable": "fail", "miopen-cache-shared": "pass"},
    "cotainr_lumi_torchrun": {"miopen-cache-shared": "pass"},
    "lumi_docs_multinode": {"miopen-cache-shared": "pass"},
    # src/ has no __init__.py (the template imports through rootutils): nothing to look up.
    "lhtemplate_hydra": {"package-not-importable": "skip"},
}
# (repo, check) whose live verdict is this machine's: the job runs in a container
# (CSCS --environment) that ships triton, the machine running the test may have none.
MACHINE_DEPENDENT = {("cscs_alps_edf", "torch-compile-risk")}


def test_every_realworld_repo_has_expectations():
    repos = {p.name for p in REALWORLD.iterdir() if p.is_dir()}
    assert repos == set(EXPECT), repos ^ set(EXPECT)
    for name in repos:
        assert (REALWORLD / name / "SOURCE.md").is_file(), f"{name}: say where it comes from"


@pytest.fixture(scope="module")
def repos(tmp_path_factory) -> dict:
    """Each mini repo copied and committed, as users have it."""
    base = tmp_path_factory.mktemp("realworld")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
           "PATH": "/usr/local/bin:/usr/bin:/bin"}
    out = {}
    for name in EXPECT:
        dest = base / name
        shutil.copytree(REALWORLD / name, dest)
        for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                    ["git", "commit", "-qm", "import"]):
            subprocess.run(cmd, cwd=dest, env=env, check=True, capture_output=True)
        out[name] = dest
    return out


def _run(repo: Path, *mode: str) -> dict:
    proc = run_doctor("run", "--repo", str(repo), "--format", "json", *mode, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), f"exit {proc.returncode}: {proc.stderr}"
    doc = validate_report(json.loads(proc.stdout))
    errors = [(r["id"], r["reason"]) for r in doc["results"] if r["status"] == "error"]
    assert not errors, errors
    return doc


def _locations(result: dict) -> set:
    return {(f["location"]["path"], f["location"].get("line")) if f.get("location") else None
            for f in result["findings"]}


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_realworld_static(name, repos):
    doc = _run(repos[name], "--static")
    want = EXPECT[name]
    got = {r["id"]: r for r in doc["results"]}
    assert set(got) == STATIC_IDS
    for check_id, result in got.items():
        if check_id in want["fail"]:
            assert result["status"] == "fail", (check_id, result["reason"])
            assert _locations(result) == want["fail"][check_id], result["findings"]
        elif check_id in want["skip"]:
            assert result["status"] == "skip", (check_id, result["findings"])
        else:
            assert result["status"] == "pass", (check_id, result["reason"],
                                                [f["message"] for f in result["findings"]])
    assert doc["summary"]["exit_code"] == (1 if any(
        got[c]["severity"] == "error" for c in want["fail"]) else 0)


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_realworld_no_smoke(name, repos):
    doc = _run(repos[name], "--no-smoke")
    got = {r["id"]: r for r in doc["results"]}
    assert "ddp-smoke" not in got or got["ddp-smoke"]["status"] == "skip"
    static = EXPECT[name]
    for check_id in STATIC_IDS - {c for n, c in MACHINE_DEPENDENT if n == name}:
        # static verdicts do not change with the mode
        expected = "fail" if check_id in static["fail"] else \
            "skip" if check_id in static["skip"] else "pass"
        assert got[check_id]["status"] == expected, (check_id, got[check_id])
    for check_id, status in LIVE_EXPECT.get(name, {}).items():
        assert got[check_id]["status"] == status, (check_id, got[check_id]["reason"],
                                                   got[check_id]["findings"])
