"""slurm-output-dir-missing: a job whose --output/--error directory does not exist.

Static cases run the real CLI on real git repos. The oracle is the local two-node Slurm
(tests/slurm/cluster.sh): the job the check reports ends FAILED before its script runs
(Reason=JobLaunchFailure) and writes no log; after the fix the check prints (`mkdir -p`
in the submit directory) the same job COMPLETES and writes its log there.
"""
from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import git_repo, result_of, run_doctor, run_json
from test_slurm_injob import JOB_ENV, wait_done

CHECK = "slurm-output-dir-missing"
HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n"


def check_result(repo: Path, *args: str) -> tuple:
    code, doc = run_json("--static", "--repo", str(repo), "--only", CHECK, *args)
    return code, result_of(doc, CHECK)


def findings(result: dict) -> list:
    return [(f["location"]["path"], f["location"]["line"], f.get("severity", result["severity"]),
             f["message"]) for f in result["findings"]]


def test_missing_log_directory_is_an_error_and_mkdir_in_the_job_is_too_late(tmp_path):
    repo = git_repo(tmp_path / "repo", {"slurm/train.sbatch": HEAD +
                    "#SBATCH --output=logs/%x-%j.out\n#SBATCH --error=logs/%x-%j.err\n"
                    "mkdir -p logs\nsrun python train.py\n", "train.py": "print(1)\n"})
    code, result = check_result(repo)
    assert code == 1 and result["status"] == "fail", result
    [(path, line, severity, message)] = findings(result)
    assert (path, line, severity) == ("slurm/train.sbatch", 4, "error")
    assert "slurm/train.sbatch:5 (#SBATCH --error=logs/%x-%j.err)" in message
    assert "neither under the repo root nor under slurm/" in message, message
    assert "the `mkdir` at slurm/train.sbatch:6 runs too late" in message, message
    assert "JobLaunchFailure" in message
    steps = [s for o in result["findings"][0]["fix_options"] for s in o["steps"]]
    assert (steps[0]["kind"], steps[0]["lines"]) == ("run", ["mkdir -p logs"]), steps
    assert "before sbatch, in the submit directory" in steps[0]["where"]
    assert result["findings"][0].get("edits") in (None, [])   # no doctor fix edit


@pytest.mark.parametrize("files", [
    # the directory is kept in the repo, as correct repos do it
    {"job.sbatch": HEAD + "#SBATCH --output=logs/%j.out\necho hi\n", "logs/.gitkeep": ""},
    # no --output: slurm-%j.out in the submit directory
    {"job.sbatch": HEAD + "echo hi\n"},
    # a file name with patterns only, in the submit directory
    {"job.sbatch": HEAD + "#SBATCH --output=%x-%j.out\n#SBATCH -e ./%x-%j.err\necho hi\n"},
    # %x is the job name: runs/exp1/ exists
    {"job.sbatch": HEAD + "#SBATCH -J exp1\n#SBATCH -o runs/%x/out-%j.log\necho hi\n",
     "runs/exp1/.gitkeep": ""},
    # %x without a job name is the script's file name
    {"job.sbatch": HEAD + "#SBATCH -o runs/%x/out-%j.log\necho hi\n",
     "runs/job.sbatch/.gitkeep": ""},
    # the script submits itself after making logs/ (LUMI's Megatron template)
    {"job.sbatch": HEAD + "#SBATCH --output logs/%j.out\n"
     "if [ -z $SLURM_JOB_ID ]; then\n  mkdir -p logs\n  sbatch \"$0\" \"$@\"\n  exit\nfi\n"
     "echo hi\n"},
    # a submit script makes the directory, then submits the job
    {"slurm/job.sbatch": HEAD + "#SBATCH --output=out/%j.log\necho hi\n",
     "submit.sh": "#!/bin/bash\nmkdir -p out\nsbatch slurm/job.sbatch\n"},
    # --chdir: relative to it
    {"job.sbatch": HEAD + "#SBATCH -D sub\n#SBATCH --output=logs/%j.out\necho hi\n",
     "sub/logs/.gitkeep": ""},
    # submitted from the script's own directory, where logs/ is
    {"slurm/job.sbatch": HEAD + "#SBATCH --output=logs/%j.out\necho hi\n",
     "slurm/logs/.gitkeep": ""},
    # an absolute path on another cluster's filesystem: not judged here
    {"job.sbatch": HEAD + "#SBATCH --output=/doctor-no-such-fs/logs/%j.out\necho hi\n"},
], ids=["gitkeep", "no-output", "submit-dir", "job-name", "script-name", "self-submit",
        "submit-script", "chdir", "script-dir", "other-cluster"])
def test_correct_repos_pass(tmp_path, files):
    code, result = check_result(git_repo(tmp_path / "repo", files))
    assert (code, result["status"]) == (0, "pass"), findings(result)


def test_job_name_and_chdir_are_followed_to_the_missing_directory(tmp_path):
    repo = git_repo(tmp_path / "repo", {
        "a.sbatch": HEAD + "#SBATCH -J exp2\n#SBATCH -o runs/%x/out-%j.log\necho hi\n",
        "b.sbatch": HEAD + "#SBATCH --chdir=sub\n#SBATCH --output=logs/%j.out\necho hi\n",
        "runs/exp1/.gitkeep": "", "logs/.gitkeep": ""})
    code, result = check_result(repo)
    got = {(p, ln, s) for p, ln, s, _ in findings(result)}
    assert code == 1 and got == {("a.sbatch", 5, "error"), ("b.sbatch", 5, "error")}, got
    messages = " ".join(m for *_, m in findings(result))
    assert "runs/exp2/ does not exist" in messages, messages
    assert "logs/ does not exist under sub/ (the repo root, --chdir at b.sbatch:4)" in messages


def test_job_dependent_directory_and_unexpanded_variable_are_warnings(tmp_path):
    repo = git_repo(tmp_path / "repo", {
        "a.sbatch": HEAD + "#SBATCH --output=runs/%x/%j/stdout\necho hi\n",
        "b.sbatch": HEAD + "#SBATCH --output=$HOME/logs/%j.out\necho hi\n"})
    code, result = check_result(repo)
    got = {(p, ln, s): m for p, ln, s, m in findings(result)}
    assert set(got) == {("a.sbatch", 4, "warning"), ("b.sbatch", 4, "warning")}, got
    assert code == 0   # warnings do not fail the run
    assert "the job id" in got[("a.sbatch", 4, "warning")]
    assert "does not expand variables in #SBATCH lines" in got[("b.sbatch", 4, "warning")]


def test_doctor_sbatch_judges_the_directory_it_runs_in_and_its_options(tmp_path):
    """`doctor sbatch` knows the submit directory (its own) and the options it passes on:
    logs/ at the repo root does not help a job submitted from sub/. Both runs refuse
    before sbatch is called, so no job is submitted."""
    repo = git_repo(tmp_path / "repo", {"job.sbatch": HEAD + "#SBATCH --output=logs/%j.out\n"
                                        "echo hi\n", "logs/.gitkeep": "", "sub/.gitkeep": ""})
    proc = run_doctor("sbatch", "--repo", str(repo), "--only", CHECK, "../job.sbatch",
                      cwd=repo / "sub")
    said = " ".join(proc.stderr.split())
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    assert "logs/ does not exist under sub/ (where `doctor sbatch` runs)" in said, said
    proc = run_doctor("sbatch", "--repo", str(repo), "--only", CHECK, "job.sbatch",
                      "-e", "errs/%j.err", cwd=repo)
    said = " ".join(proc.stderr.split())
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    assert "the sbatch command line: --error=errs/%j.err: errs/ does not exist" in said, said


def _state(job_id: str) -> str:
    out = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True,
                         text=True).stdout
    return " ".join(re.findall(r"(?:JobState|Reason)=\S+", out))


@pytest.mark.slurm
def test_oracle_slurm_fails_the_job_and_the_fix_makes_it_complete(slurm_cluster, tmp_path):
    repo = git_repo(tmp_path / "repo", {"job.sbatch": HEAD + "#SBATCH --output=nope/%j.out\n"
                                        "mkdir -p nope\necho hello from the job\n"})
    # doctor sbatch, in the submit directory: refused, nothing submitted
    proc = run_doctor("sbatch", "--repo", str(repo), "--only", CHECK, "job.sbatch",
                      cwd=repo, env=JOB_ENV)
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    said = " ".join(proc.stderr.split())   # (the report wraps to the terminal)
    assert "nope/ does not exist under the repo root (where `doctor sbatch` runs)" in said, said
    # what the check says happens: Slurm fails the job before the script runs, no log
    sub = subprocess.run(["sbatch", "--parsable", "job.sbatch"], cwd=repo, env=JOB_ENV,
                         capture_output=True, text=True, timeout=60)
    job_id = sub.stdout.strip().split(";")[0]
    assert job_id.isdigit(), sub.stderr
    assert wait_done(job_id, 60) == "FAILED"
    assert "Reason=JobLaunchFailure" in _state(job_id), _state(job_id)
    assert not (repo / "nope").exists()   # the mkdir in the script never ran
    # the fix the report gives, run where it says (the submit directory)
    _, doc = run_json("--static", "--repo", str(repo), "--only", CHECK)
    [step] = result_of(doc, CHECK)["findings"][0]["fix_options"][0]["steps"]
    for command in step["lines"]:
        subprocess.run(shlex.split(command), cwd=repo, check=True)
    proc = run_doctor("sbatch", "--repo", str(repo), "--only", CHECK, "job.sbatch",
                      cwd=repo, env=JOB_ENV)
    assert proc.returncode == 0, proc.stderr
    job_id = proc.stdout.strip()
    assert wait_done(job_id, 60) == "COMPLETED", _state(job_id)
    assert "hello from the job" in (repo / "nope" / f"{job_id}.out").read_text()


def test_a_project_directory_between_the_root_and_the_script_may_be_the_submit_directory(
        tmp_path):
    """`--output=./run-scripts/bench/%j.out` in proj/run-scripts/bench/job.sh: the log
    directory exists from proj/, the directory such a repo submits from (LUMI-AI-example's
    file-formats/), so it is not known to be missing. results/, in none of the directories
    between the root and the script, stays an error naming each."""
    repo = git_repo(tmp_path / "repo", {
        "proj/run-scripts/bench/job.sh": HEAD + "#SBATCH --output=./run-scripts/bench/%j.out\n"
                                                "echo hi\n",
        "proj/run-scripts/bench/bad.sh": HEAD + "#SBATCH --output=results/%j.out\necho hi\n"})
    code, result = check_result(repo)
    [(path, line, severity, message)] = findings(result)
    assert (code, path, line, severity) == (1, "proj/run-scripts/bench/bad.sh", 4, "error")
    assert "nor under proj/ (a directory above the job script)" in message, message
    assert "nor under proj/run-scripts/ (a directory above the job script)" in message
