"""`doctor run --gather` as a real two-node Slurm step (tests/slurm/cluster.sh: n1, n2).

The rendezvous is the real one: node names from SLURM_STEP_NODELIST (`n[1-2]`),
the first node's address from `scontrol show node n1` (n1 is not in DNS), the
port from the job and step ids. The skew is injected on n2 only, through the
test-only DOCTOR_FAKE_FACTS hook.
"""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time

import pytest

from conftest import ROOT, validate_report

pytestmark = pytest.mark.slurm

ONLY = "nccl-env-deprecated,node-skew,node-missing"


def srun(tmp_path, n2_prefix: str, *args: str, timeout: float = 150) -> tuple:
    """srun -N2 -n2 over a wrapper that changes only what n2 runs; → (proc, report, seconds)."""
    report = tmp_path / "doctor-%j.json"
    doctor = " ".join(shlex.quote(a) for a in [
        sys.executable, "-m", "doctor", "run", "--repo", str(tmp_path), "--no-smoke",
        "--only", ONLY, "--format", "json", "--json", str(report), *args])
    script = (f'if [ "$SLURMD_NODENAME" = n2 ]; then {n2_prefix or "exec " + doctor}; '
              f'else exec {doctor}; fi').replace("@DOCTOR@", doctor)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "DOCTOR_"))}
    t0 = time.monotonic()
    proc = subprocess.run(["srun", "-N2", "-n2", "--ntasks-per-node=1", f"--chdir={ROOT}",
                           "bash", "-c", script], env=env, capture_output=True, text=True,
                          timeout=timeout)
    took = time.monotonic() - t0
    files = list(tmp_path.glob("doctor-*.json"))
    assert len(files) == 1, (files, proc.stdout, proc.stderr)
    return proc, validate_report(json.loads(files[0].read_text())), took


def test_two_nodes_one_report_and_the_skewed_node_named(slurm_cluster, tmp_path):
    fake = shlex.quote(json.dumps({"torch_version": "2.4.0+rocm6.1"}))
    proc, doc, _ = srun(tmp_path, f"DOCTOR_FAKE_FACTS={fake} exec @DOCTOR@", "--gather")
    assert [(n["slurm_node"], n["status"]) for n in doc["nodes"]] == \
        [("n1", "pass"), ("n2", "pass")]
    assert doc["nodes"][1]["fake_facts"] == ["torch_version"]
    assert doc["host"]["slurm_node"] == "n1" and doc["host"]["slurm_job_id"]
    skew = next(r for r in doc["results"] if r["id"] == "node-skew")
    assert skew["status"] == "fail"
    assert [f["data"]["node"] for f in skew["findings"]] == ["n2"]
    assert "n2" in skew["findings"][0]["message"]
    assert doc["summary"]["exit_code"] == 1 and proc.returncode == 1, proc.stderr
    assert proc.stdout.count('"schema_version"') == 1     # one report on the step's stdout


def test_gathering_is_automatic_for_one_task_per_node(slurm_cluster, tmp_path):
    proc, doc, _ = srun(tmp_path, "")
    assert [n["slurm_node"] for n in doc["nodes"]] == ["n1", "n2"]
    assert all(n["status"] == "pass" for n in doc["nodes"])
    assert proc.returncode == 0, proc.stderr


def test_a_node_killed_mid_run_is_reported_missing_within_the_deadline(slurm_cluster,
                                                                       tmp_path):
    # n2's doctor holds before sending its report; the wrapper kills it with SIGKILL
    kill = ("DOCTOR_GATHER_TEST_HOLD_S=120 @DOCTOR@ & pid=$!; sleep 8; kill -9 $pid; "
            "wait $pid; exit 0")
    proc, doc, took = srun(tmp_path, kill, "--gather", "--gather-timeout", "12")
    n2 = doc["nodes"][1]
    assert (n2["slurm_node"], n2["status"]) == ("n2", "missing")
    missing = next(r for r in doc["results"] if r["id"] == "node-missing")
    assert [f["data"]["node"] for f in missing["findings"]] == ["n2"]
    assert proc.returncode == 1
    assert took < 8 + 12 + 30, took    # kill + deadline + start-up, nowhere near the hold
