"""data-smoke under the job's TMPDIR: the ranks run with a TMPDIR as long as the one the job
script exports (a workers' socket path is TMPDIR/pymp-xxxxxxxx/listener-xxxxxxxx, 107 bytes
at most), so a deep per-job TMPDIR loses every batch here as on the node. Real CLI, real torch
workers; each run proves nothing is left behind (test_data_smoke.Sandbox).

Run alone: python -m pytest -q tests/test_data_smoke_tmpdir.py
"""
from __future__ import annotations

from conftest import result_of
from test_data_smoke import Sandbox

DEEP = "/scratch/project_462000123/runs/$SLURM_JOB_ID/node-local/tmp/mu-train/loader-work"


def test_a_deep_tmpdir_is_named_with_its_line_length_and_fix(tmp_path):
    box = Sandbox("fail_deep_tmpdir", tmp_path)
    code, doc, text = box.run()
    result = result_of(doc, "data-smoke")
    assert (code, result["status"]) == (1, "fail"), result
    (f,) = result["findings"]
    assert f["data"]["kind"] == "socket-path-too-long" and f["data"]["ranks"] == [0, 1]
    assert "train.sbatch:6: error[data-smoke]" in text, text
    assert "(76 bytes, train.sbatch:6) is longer than the 75 bytes" in text, text
    assert "export TMPDIR=/tmp" in f["fix"]
    facts = doc["facts"]["data_smoke"]
    assert (facts["tmpdir_length"], facts["tmpdir_from"]) == (
        76, "train.sbatch:6 ($SLURM_JOB_ID counted as 8 digits)")
    box.assert_clean()


def test_one_byte_shorter_passes(tmp_path):
    """The boundary, with the real loader: 75 bytes fit (no false finding)."""
    box = Sandbox("pass_tmpdir_at_limit", tmp_path)
    code, doc, _ = box.run()
    result = result_of(doc, "data-smoke")
    assert (code, result["status"]) == (0, "pass"), result
    assert doc["facts"]["data_smoke"]["tmpdir_length"] == 75
    box.assert_clean()


def test_the_fix_it_names_makes_the_loader_pass(tmp_path):
    """`export TMPDIR=/tmp/$SLURM_JOB_ID` (a short per-job dir) in place of the deep one."""
    box = Sandbox("fail_deep_tmpdir", tmp_path)
    script = box.repo / "train.sbatch"
    script.write_text(script.read_text().replace(DEEP, "/tmp/$SLURM_JOB_ID"))
    code, doc, _ = box.run()
    assert (code, result_of(doc, "data-smoke")["status"]) == (0, "pass")
    assert doc["facts"]["data_smoke"]["tmpdir_length"] == len("/tmp/99999999")
    box.assert_clean()


def test_an_unresolved_tmpdir_is_said_and_the_short_one_kept(tmp_path):
    box = Sandbox("fail_deep_tmpdir", tmp_path)
    script = box.repo / "train.sbatch"
    script.write_text(script.read_text().replace(DEEP, "$(site_tmp)/loader"))
    code, doc, _ = box.run()
    assert (code, result_of(doc, "data-smoke")["status"]) == (0, "pass")
    facts = doc["facts"]["data_smoke"]
    assert facts["tmpdir"] is None and facts["tmpdir_from"].startswith(
        "unknown: train.sbatch:6 sets TMPDIR="), facts["tmpdir_from"]
    box.assert_clean()


def test_file_system_sharing_is_no_fix_it_fails_sooner(tmp_path):
    """set_sharing_strategy("file_system") moves the batches off the workers' sockets, but its
    torch_shm_manager binds a socket under TMPDIR too: at 75 bytes (which the default strategy
    passes) it raises "torch_shm_manager at …: Invalid argument" in the worker. Named as
    what it is, with the 73 bytes that strategy leaves, not as the dataset's exception."""
    box = Sandbox("pass_tmpdir_at_limit", tmp_path)
    loaders = box.repo / "src" / "loaders.py"
    loaders.write_text(loaders.read_text().replace(
        "def train_loader():\n",
        "def train_loader():\n    torch.multiprocessing.set_sharing_strategy('file_system')\n"))
    code, doc, text = box.run()
    result = result_of(doc, "data-smoke")
    assert (code, result["status"]) == (1, "fail"), result
    (f,) = result["findings"]
    assert (f["data"]["kind"], f["data"]["tmpdir_length"], f["data"]["tmpdir_max"]) == (
        "socket-path-too-long", 75, 73), f
    assert "train.sbatch:6: error[data-smoke]" in text, text
    assert "Shorten TMPDIR to 73 bytes" in f["fix"]
    box.assert_clean()


def test_lost_batches_end_the_smoke_without_waiting_for_its_deadline(tmp_path):
    """Once a worker says "AF_UNIX path too long" and no batch comes for 3 s, the rank stops
    there: the same finding in seconds, not after data_timeout_s (seen failing: 60 s)."""
    box = Sandbox("fail_deep_tmpdir", tmp_path)
    config = box.repo / "doctor.yaml"
    config.write_text(config.read_text().replace("data_timeout_s: 10", "data_timeout_s: 60"))
    code, doc, _ = box.run()
    result = result_of(doc, "data-smoke")
    assert (code, result["status"]) == (1, "fail"), result
    (f,) = result["findings"]
    assert f["data"]["kind"] == "socket-path-too-long" and f["data"]["ranks"] == [0, 1]
    facts = doc["facts"]["data_smoke"]
    assert facts["timeout_s"] == 60 and not facts["deadline_hit"]
    assert facts["duration_s"] < 30, facts["duration_s"]
    box.assert_clean()
