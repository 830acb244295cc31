"""Fix texts a user can follow (issue 28): a line for a job script or config is shown as a
line for that file, a shell command as `$ command` with where it runs, alternatives as
numbered options; no impossible number; `doctor fix` edits the demo's DataLoader
conflict; the built-in model's smoke pass says it proved nothing about the user's model.
Each test drives the real CLI in a child process on a private copy of the demo."""
from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from conftest import FIXTURES, git_repo, result_of, run_doctor, run_json


def demo(tmp_path: Path) -> Path:
    repo = tmp_path / "demo"
    shutil.copytree(FIXTURES / "demo", repo)
    return git_repo(repo, {})


def test_doctor_fix_removes_the_demos_prefetch_factor(tmp_path):
    repo = demo(tmp_path)
    cfg = repo / "configs" / "train.yaml"
    before = cfg.read_text()
    proc = run_doctor("fix", "--repo", str(repo), "--write", "--only",
                      "dataloader-option-conflict")
    assert "no automatic fix for dataloader-option-conflict" not in proc.stderr, proc.stderr
    # only the prefetch_factor line goes; comments and every other line stay
    assert cfg.read_text() == before.replace(
        "    prefetch_factor: 2  # only valid with worker processes\n", "")
    assert "prefetch_factor" not in yaml.safe_load(cfg.read_text())["data"]["train"]
    _, doc = run_json("--repo", str(repo), "--static", "--only", "dataloader-option-conflict")
    rules = [f["data"]["rule"] for f in result_of(doc, "dataloader-option-conflict")["findings"]]
    assert "prefetch-without-workers" not in rules and rules, rules  # the timeout stays (unsafe)


def test_every_check_in_fix_md_table_fixes_the_demo_or_the_table_says_why(tmp_path):
    """docs/fix.md's last column: after `doctor fix --write --unsafe` the demo fails only
    where the page says no edit can fix it (exit-masks-errors, NCCL_TIMEOUT)."""
    repo = demo(tmp_path)
    # not --static: miopen-cache-shared, core-dump-unlimited and package-not-importable
    # judge the job against this node's facts
    run_doctor("fix", "--repo", str(repo), "--write", "--unsafe")
    _, doc = run_json("--repo", str(repo), "--no-smoke")
    left = {(r["id"], f["data"].get("variable")) for r in doc["results"]
            if r["status"] == "fail" and r["id"] != "fd-limit-too-low"   # this machine's
            for f in r["findings"]}
    # slurm-output-dir-missing: the demo's logs/ must be made before sbatch (no file edit)
    assert left == {("exit-masks-errors", None), ("nccl-env-deprecated", "NCCL_TIMEOUT"),
                    ("slurm-output-dir-missing", None)}, left
    page = (FIXTURES.parent / "docs" / "fix.md").read_text()
    assert "`NCCL_TIMEOUT`, which torch never reads, gets no edit" in page
    assert "The demo's other failing checks have no edit: exit-masks-errors" in page
    assert "and slurm-output-dir-missing (the log directory must be made before" in page


def _fix_block(out: str, needle: str) -> list:
    """The lines of the finding whose first line holds `needle`, up to the next blank line."""
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if needle in ln)
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return [ln.strip() for ln in lines[start:end]]


def test_job_script_lines_commands_and_alternatives_read_as_what_they_are(tmp_path):
    repo = demo(tmp_path)
    proc = run_doctor("run", "--repo", str(repo), "--static", "--only",
                      "slurm-gpu-mismatch,wandb-online-in-container", env={"COLUMNS": "200"})
    out = proc.stdout
    assert "#SBATCH --ntasks-per-node=4" in out, out
    for ln in out.splitlines():   # a line for the job script is never a command to run
        if "#SBATCH" in ln or "export WANDB_MODE" in ln:
            assert not ln.strip().startswith("$"), ln
    # alternatives: each its own numbered option, with its file and line
    block = _fix_block(out, "Lightning needs one")
    joined = "\n".join(block)
    assert "Option 1: change slurm/train.sbatch:4 to:\n#SBATCH --ntasks-per-node=4" in joined, \
        joined
    assert "Option 2: change configs/train.yaml:3 to:\ndevices: 8" in joined, joined
    # the login-node command is a command, apart from the job script's line
    block = _fix_block(out, "hangs the")
    assert block[block.index("export WANDB_MODE=offline") - 1].startswith(
        "Add to slurm/train.sbatch"), block
    i = block.index("$ wandb sync wandb/offline-run-*")
    assert block[i - 1] == "Run on the login node, after the job:", block


def test_no_at_most_zero_gpus(tmp_path):
    """Of two partitions, one without GPUs: a warning whose fix is not 'at most 0 GPUs'."""
    repo = git_repo(tmp_path / "r", {
        "job.sbatch": "#!/bin/bash\n#SBATCH --partition=cpu,gpu\n#SBATCH --nodes=1\n"
                      "#SBATCH --time=5\n#SBATCH --gpus-per-node=4\nsrun python train.py\n",
        "train.py": "print('hi')\n",
        "doctor.yaml": "site:\n  partitions:\n    cpu: {GpusPerNode: 0}\n"
                       "    gpu: {GpusPerNode: 8}\n"})
    _, doc = run_json("--repo", str(repo), "--static", "--sbatch", str(repo / "job.sbatch"),
                      "--only", "slurm-partition-limits")
    [f] = result_of(doc, "slurm-partition-limits")["findings"]
    assert f["severity"] == "warning" and f["data"]["rule"] == "gpus", f
    assert "at most 0" not in f["fix"] and "cpu has no GPUs" in f["fix"], f["fix"]


def test_built_in_model_smoke_pass_says_it_proved_nothing_about_yours(tmp_path):
    repo = git_repo(tmp_path / "r", {"README.md": "x\n"})
    code, doc = run_json("--repo", str(repo), "--only", "ddp-smoke", timeout=300)
    r = result_of(doc, "ddp-smoke")
    assert r["status"] == "pass", r
    assert "proves nothing about your model" in r["reason"], r
    # the default output (no -v) says it too, not only the JSON
    proc = run_doctor("run", "--repo", str(repo), "--only", "ddp-smoke", timeout=300,
                      env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    assert "note[ddp-smoke] passed: the built-in toy model" in proc.stdout, proc.stdout
    assert "proves nothing about your model" in " ".join(proc.stdout.split()), proc.stdout
