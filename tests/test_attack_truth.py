"""Issue 27, misleading output: what the doctor could not judge is said, never passed.

Each case is written as someone would meet it, and run through the real CLI:
- a resume checkpoint whose pickle calls posix.system (built from pickle opcodes here,
  never loaded): a finding, and the marker file the call would create never appears;
- a repository owned by another user, which git refuses ("dubious ownership"): the git
  checks end as errors with git's message (exit 3), not as "not a git work tree";
- a latin-1 terminal and a finding with characters it cannot show: `?`, not exit 3;
- a closed stdout (`>&-`) with --json: the file is written, the exit is the verdict;
- a directory given as a job script or a config: exit 2, saying it is a directory.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, clean_env, result_of, run_doctor, validate_report

CHECK = "resume-checkpoint-mismatch"


# ---- an unsafe pickle in the resume checkpoint ------------------------------------------
def _pickle_calling(module: str, name: str, arg: str) -> bytes:
    """Protocol-2 opcodes of `module.name(arg)`: GLOBAL, BINUNICODE, TUPLE1, REDUCE, STOP.
    Written by hand so that no unpickler ever has to run it to build the test."""
    raw = arg.encode()
    return (b"\x80\x02" + b"c" + f"{module}\n{name}\n".encode()
            + b"X" + len(raw).to_bytes(4, "little") + raw + b"\x85R.")


def _checkpoint(path: Path, pickle_bytes: bytes) -> None:
    """A torch.save zip archive as torch writes it: `<name>/data.pkl` stored first."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{path.stem}/data.pkl", pickle_bytes)
        z.writestr(f"{path.stem}/version", "3\n")


def _resume_repo(tmp_path: Path, pickle_bytes: bytes) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.yaml").write_text("resume_from: ckpt/last.pt\n")
    (repo / "train.py").write_text("def main(cfg):\n    return cfg.resume_from\n")
    (repo / "model.py").write_text("from torch import nn\n\n\ndef build():\n"
                                   "    return nn.Linear(2, 3)\n")
    (repo / "ckpt").mkdir()
    _checkpoint(repo / "ckpt" / "last.pt", pickle_bytes)
    return repo


@pytest.mark.parametrize("model", [True, False], ids=["with-model", "no-model"])
def test_a_checkpoint_that_calls_posix_system_is_an_error_and_never_runs(tmp_path, model):
    marker = tmp_path / "PWNED"
    repo = _resume_repo(tmp_path, _pickle_calling("posix", "system", f"touch {marker}"))
    proc = run_doctor("run", "--format", "json", "--config", "train.yaml", "--only", CHECK,
                      *(["--model", "model:build"] if model else []), cwd=repo)
    assert not marker.exists(), "the doctor executed the checkpoint's pickle"
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    res = result_of(validate_report(json.loads(proc.stdout)), CHECK)
    assert res["status"] == "fail", res
    finding, = res["findings"]
    assert finding["severity"] == "error", finding
    assert "posix.system" in finding["message"] and "weights_only" in finding["message"]
    assert finding["data"]["runs_code"] == ["posix.system"], finding["data"]


@pytest.mark.parametrize("mode", ["--no-smoke", "--static"])
def test_no_smoke_and_static_report_a_checkpoint_that_calls_posix_system(tmp_path, mode):
    """The modes that run no repo code still read the checkpoint (reading runs nothing):
    the error is reported, the pickle never runs, and neither does the model factory
    (its module would plant a second marker on import)."""
    marker, built = tmp_path / "PWNED", tmp_path / "MODEL-BUILT"
    repo = _resume_repo(tmp_path, _pickle_calling("posix", "system", f"touch {marker}"))
    (repo / "model.py").write_text(f"open({str(built)!r}, 'w').close()\n\n\n"
                                   "def build():\n    return None\n")
    proc = run_doctor("run", mode, "--format", "json", "--config", "train.yaml",
                      "--only", CHECK, "--model", "model:build", cwd=repo)
    assert not marker.exists(), "the doctor executed the checkpoint's pickle"
    assert not built.exists(), f"{mode} ran the repo's model factory"
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    res = result_of(validate_report(json.loads(proc.stdout)), CHECK)
    finding, = res["findings"]
    assert res["status"] == "fail" and finding["severity"] == "error", res
    assert finding["data"]["runs_code"] == ["posix.system"], finding["data"]


def test_a_checkpoint_with_other_unsafe_globals_is_a_warning(tmp_path):
    """A global that only weights_only=True refuses (hyperparameters in a Namespace):
    the resume fails unless the job loads it with weights_only=False, which the doctor
    cannot see: a warning that names it, reported, not skipped."""
    repo = _resume_repo(tmp_path, _pickle_calling("argparse", "Namespace", "lr"))
    proc = run_doctor("run", "--format", "json", "--config", "train.yaml", "--only", CHECK,
                      cwd=repo)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    res = result_of(validate_report(json.loads(proc.stdout)), CHECK)
    finding, = res["findings"]
    assert res["status"] == "fail" and finding["severity"] == "warning", res
    assert "argparse.Namespace" in finding["message"], finding
    assert "weights_only=False" in finding["message"], finding
    assert finding["data"]["runs_code"] == [], finding["data"]


# ---- a repository git refuses to read -----------------------------------------------------
GIT_CHECKS = ("git-large-file", "git-tracked-core-file", "gitignore-hides-source")


def _repo_of_another_user(tmp_path: Path) -> tuple:
    """(repo, env): a committed repo owned by `nobody` (as root), or, where the tests
    cannot chown, git's own switch for the same refusal."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH -N 1\nsrun python train.py\n")
    (repo / "train.py").write_text("print(1)\n")
    for cmd in (["init", "-q"], ["add", "-A"],
                ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        subprocess.run(["git", *cmd], cwd=repo, check=True, capture_output=True)
    if os.geteuid() == 0:
        shutil.chown(repo, "nobody")
        for root, dirs, files in os.walk(repo):
            for name in dirs + files:
                shutil.chown(os.path.join(root, name), "nobody")
        return repo, {}
    return repo, {"GIT_TEST_ASSUME_DIFFERENT_OWNER": "1"}


def test_a_repo_git_refuses_is_an_error_with_gits_message(tmp_path):
    repo, env = _repo_of_another_user(tmp_path)
    said = subprocess.run(["git", "-C", str(repo), "status"], capture_output=True, text=True,
                          env=clean_env(env))
    assert "dubious ownership" in said.stderr, said.stderr   # git itself refuses it
    for cwd, args in ((repo, ()), (tmp_path, ("--repo", str(repo)))):
        proc = run_doctor("run", "--static", "--format", "json", *args, cwd=cwd, env=env)
        assert proc.returncode == 3, (proc.returncode, proc.stderr[-2000:])
        doc = validate_report(json.loads(proc.stdout))
        for check_id in GIT_CHECKS:
            res = result_of(doc, check_id)
            assert res["status"] == "error", res
            assert "detected dubious ownership" in res["reason"], res
            # with git's own remedy, not cut before it
            assert f"git config --global --add safe.directory {repo}" in res["reason"], res


def test_changed_since_in_a_repo_git_refuses_says_why(tmp_path):
    repo, env = _repo_of_another_user(tmp_path)
    proc = run_doctor("run", "--static", "--changed-since", "HEAD", cwd=repo, env=env)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert proc.stderr.startswith("doctor: error: --changed-since: ") \
        and proc.stderr.count("\n") == 1, proc.stderr
    assert "dubious ownership" in proc.stderr, proc.stderr


def test_a_plain_directory_is_still_not_a_work_tree(tmp_path):
    """The other side: outside any repository the git checks still skip."""
    (tmp_path / "job.sbatch").write_text("#!/bin/bash\n#SBATCH -N 1\nsrun python t.py\n")
    proc = run_doctor("run", "--static", "--format", "json", "--only", ",".join(GIT_CHECKS),
                      cwd=tmp_path, env={"GIT_CEILING_DIRECTORIES": str(tmp_path.parent)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    for r in json.loads(proc.stdout)["results"]:
        assert r["status"] == "skip" and "not inside a git work tree" in r["reason"], r


# ---- the terminal ---------------------------------------------------------------------------
def _failing_repo(tmp_path: Path, name: str) -> Path:
    """A repo whose job script (named `name`) has CRLF line breaks: an error finding that
    names the file."""
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    (repo / name).write_bytes(b"#!/bin/bash\r\n#SBATCH -N 1\r\nsrun python train.py\r\n")
    (repo / "train.py").write_text("print(1)\n")
    return repo


def _doctor_bytes(*args: str, cwd: Path, env: dict, close_stdout: bool = False
                  ) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "doctor", *args]
    if close_stdout:   # started as `doctor ... >&-`
        argv = ["sh", "-c", 'exec "$@" >&-', "sh", *argv]
    return subprocess.run(argv, cwd=cwd, env=clean_env({"PYTHONPATH": str(ROOT), **env}),
                          capture_output=not close_stdout,
                          stderr=subprocess.PIPE if close_stdout else None, timeout=120)


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
def test_a_terminal_that_cannot_show_a_name_gets_question_marks(tmp_path, encoding):
    repo = _failing_repo(tmp_path, "train→é日本.sbatch")
    proc = _doctor_bytes("run", "--static", "--only", "script-dos-line-breaks", cwd=repo,
                         env={"PYTHONIOENCODING": encoding})
    err = proc.stderr.decode(encoding, "replace")
    assert proc.returncode == 1, (proc.returncode, err[-2000:])
    assert "Traceback" not in err and "internal error" not in err, err
    out = proc.stdout.decode(encoding)   # what the terminal shows: its own encoding
    shown = "train?é??.sbatch"   # é is in both; the arrow and 日本 are not
    assert shown in out.replace("\n", ""), out


def test_a_closed_stdout_still_writes_the_json_and_exits_with_the_verdict(tmp_path):
    repo = _failing_repo(tmp_path, "job.sbatch")
    out = tmp_path / "out.json"
    proc = _doctor_bytes("run", "--static", "--json", str(out), cwd=repo, env={},
                         close_stdout=True)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    assert b"internal error" not in proc.stderr, proc.stderr
    doc = validate_report(json.loads(out.read_text()))
    assert result_of(doc, "script-dos-line-breaks")["status"] == "fail"
    assert doc["summary"]["exit_code"] == 1


# ---- a directory where a file belongs ---------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ("sbatch", "{dir}"), ("sbatch", "{dir}", "--time=1"), ("run", "--static", "--sbatch", "{dir}"),
    ("run", "--static", "--config", "{dir}"), ("fix", "--sbatch", "{dir}"),
])
def test_a_directory_as_job_script_or_config_is_exit_2_saying_so(tmp_path, argv):
    repo = _failing_repo(tmp_path, "job.sbatch")
    (repo / "slurm").mkdir()
    (repo / "slurm" / "job.sbatch").write_text("#!/bin/bash\n")  # a directory's content
    proc = run_doctor(*(a.format(dir="slurm") for a in argv), cwd=repo)
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-500:], proc.stderr[-2000:])
    assert proc.stderr.startswith("doctor: error: ") and proc.stderr.count("\n") == 1, \
        proc.stderr
    assert "slurm is a directory, not a" in proc.stderr, proc.stderr


def test_a_fifo_as_job_script_is_exit_2_and_never_blocks(tmp_path):
    """`doctor sbatch FIFO` said "job script not found" of a file that is there."""
    repo = _failing_repo(tmp_path, "job.sbatch")
    os.mkfifo(repo / "job.fifo")
    proc = run_doctor("sbatch", "job.fifo", cwd=repo, timeout=60)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert proc.stderr == "doctor: error: job.fifo: not a regular file, not a sbatch script\n"
