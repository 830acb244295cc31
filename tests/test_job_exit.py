"""job-exit-masks-failure (issue 29): a batch script that hides its training step's failure
from Slurm. The findings come from the real CLI on a small git repo; the oracle is the real
shell (bash runs each script with a training step that fails: exit 0 where the doctor says
the failure is hidden, non-zero where it is silent) and the real local two-node Slurm
(`scontrol show job`: COMPLETED for a hidden failure, FAILED for the fixed script)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT, result_of, run_doctor, validate_report
from harness import bash_as_slurm

CHECK = "job-exit-masks-failure"
HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n"
# The training step: the entry exits 3 (a failed run). `srun` is the real one under
# Slurm; under plain bash (the shell oracle) a function stands in for it.
FAILS = "import sys\nsys.exit(3)\n"

# name → (script body after the header, (line, severity) of the finding or None)
CASES = {
    "echo_after": ("srun python3 train.py\necho done\n", (5, "error")),
    "tee": ("set -e\nsrun python3 train.py 2>&1 | tee train.log\n", (5, "error")),
    "or_true": ("srun python3 train.py || true\n", (4, "error")),
    "exit_0": ("srun python3 train.py\ncp train.log out.log 2>/dev/null\nexit 0\n",
               (6, "error")),
    "bare_wait": ("srun python3 train.py &\nwait\necho done\n", (5, "error")),
    "loop_then_echo": ("for seed in 1 2; do\n  srun python3 train.py --seed $seed\ndone\n"
                       "echo finished\n", (7, "error")),
    "and_or_true": ("srun python3 train.py && echo trained || true\n", (4, "error")),
    "set_e_and_list": ("set -e\nsrun python3 train.py && echo trained\necho done\n",
                       (6, "error")),
    "cp_last": ("srun python3 train.py\ncp train.log out.log\n", (5, "warning")),
    # correct forms: the step's status reaches Slurm
    "last": ("module list\nsrun python3 train.py\n", None),
    "set_e": ("set -eo pipefail\nsrun python3 train.py 2>&1 | tee train.log\necho done\n", None),
    "shebang_e": None,   # written below: `#!/bin/bash -e` as the first line
    "rc_kept": ("srun python3 train.py\nrc=$?\nif [ $rc -ne 0 ]; then exit $rc; fi\n"
                "echo done\n", None),
    "exit_status": ("srun python3 train.py\nexit $?\n", None),
    "or_exit": ("srun python3 train.py || exit 1\necho done\n", None),
    "if_not": ("if ! srun python3 train.py; then\n  echo failed\n  exit 1\nfi\necho done\n",
               None),
    "wait_pid": ("srun python3 train.py &\npid=$!\nwait $pid\n", None),
    "exec": ("exec python3 train.py\necho never runs\n", None),
    "status_tested": ("srun python3 train.py\nif [ $? -ne 0 ]; then exit 1; fi\necho done\n",
                      None),
    "trap_err": ("trap 'exit 1' ERR\nsrun python3 train.py\necho done\n", None),
    "branches": ("if [ -n \"$DEBUG\" ]; then\n  srun python3 train.py --debug\nelse\n"
                 "  srun python3 train.py\nfi\n", None),
    "and_last": ("srun python3 train.py && echo trained\n", None),
    "pipestatus": ("srun python3 train.py | tee train.log\nexit ${PIPESTATUS[0]}\n", None),
    # the step's own shell (`srun … bash -c 'CODE'`): the step's status is CODE's last
    # command's (LUMI-AI-example's run_ramfs.sh copies files back after the training)
    "bash_c_echo": ("srun bash -c 'python3 train.py; echo done'\n", (4, "error")),
    "bash_c_lines": ("srun bash -c '\n  python3 train.py\n  cp train.log out.log\n'\n",
                     (6, "warning")),
    "bash_c_last": ("srun bash -c 'echo start; python3 train.py'\n", None),
    "bash_ec": ("srun bash -ec 'python3 train.py; echo done'\n", None),
    "bash_c_and": ("srun bash -c 'python3 train.py && echo trained'\n", None),
    # long options are flags too, as bash -l is (the review's drift: --login passed)
    "bash_login_c": ("srun bash --login -c 'python3 train.py; echo done'\n", (4, "error")),
    "bash_noprofile_ec": ("srun bash --noprofile -ec 'python3 train.py; echo done'\n", None),
}


def _script(name: str) -> str:
    if name == "shebang_e":
        return "#!/bin/bash -e\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\nsrun python3 train.py\n" \
               "echo done\n"
    body, _ = CASES[name]
    return HEAD + body


def _expected(name: str):
    return None if CASES[name] is None else CASES[name][1]


def git(repo: Path, *args: str) -> None:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("jobexit")
    (root / "train.py").write_text(FAILS)
    for name in CASES:
        (root / f"{name}.sbatch").write_text(_script(name))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "import")
    return root


def _findings(repo: Path, *extra: str) -> tuple:
    proc = run_doctor("run", "--static", "--repo", str(repo), "--select", CHECK,
                      "--format", "json", *extra)
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = validate_report(json.loads(proc.stdout))
    res = result_of(doc, CHECK)
    return proc, res, {f["location"]["path"]: f for f in res["findings"]}


def test_each_form_is_found_at_its_line_and_correct_scripts_are_silent(repo):
    proc, res, found = _findings(repo)
    assert res["status"] == "fail"
    got = {path[:-len(".sbatch")]: (f["location"]["line"], f["severity"])
           for path, f in found.items()}
    want = {name: _expected(name) for name in CASES if _expected(name) is not None}
    assert got == want
    assert proc.returncode == 1     # errors among them
    echo = found["echo_after.sbatch"]
    assert "echo_after.sbatch:4" in echo["message"] and "`echo done`" in echo["message"]
    assert "COMPLETED" in echo["message"] and "afternotok" in echo["message"]
    assert "set -eo pipefail" in echo["fix"]
    tee = found["tee.sbatch"]
    assert "`tee`" in tee["message"] and "even under `set -e`" in tee["message"]
    assert "set -o pipefail" in tee["fix"]


def test_bash_agrees_each_flagged_script_exits_0_and_each_silent_one_fails(repo, tmp_path):
    # The oracle for the shell's side: with a training step that exits 3, every script
    # the doctor flags exits 0 (except the warning's cp, which fails here: its status is
    # the job's), every script it leaves alone exits non-zero.
    for name in CASES:
        work = tmp_path / name
        work.mkdir()
        (work / "train.py").write_text(FAILS)
        script = work / "job.sbatch"
        script.write_text(_script(name))
        code = bash_as_slurm(script)
        want = _expected(name)
        if want is None:
            assert code != 0, name
        elif want[1] == "error":
            assert code == 0, name


def test_doctor_fix_inserts_set_e_before_the_step_and_the_job_then_fails(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text(FAILS)
    (repo / "job.sbatch").write_text(HEAD + "module list 2>/dev/null || true\n"
                                     "srun python3 train.py 2>&1 | tee train.log\necho done\n")
    (repo / "keep.sbatch").write_text(HEAD + "srun python3 train.py --seed 1 || true\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "import")
    assert bash_as_slurm(repo / "job.sbatch") == 0 and bash_as_slurm(repo / "keep.sbatch") == 0
    safe = run_doctor("fix", "--repo", str(repo), "--select", CHECK, "--write")
    assert (repo / "job.sbatch").read_text().count("pipefail") == 0, safe.stdout  # unsafe only
    proc = run_doctor("fix", "--repo", str(repo), "--select", CHECK, "--unsafe", "--write")
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = (repo / "job.sbatch").read_text().splitlines()
    assert lines[4:6] == ["set -eo pipefail", "srun python3 train.py 2>&1 | tee train.log"], \
        lines
    assert bash_as_slurm(repo / "job.sbatch") == 3  # the step's own status, as Slurm sees it
    assert (repo / "keep.sbatch").read_text().splitlines()[3] == "srun python3 train.py --seed 1"
    assert bash_as_slurm(repo / "keep.sbatch") == 3
    _, res, _ = _findings(repo)
    assert res["status"] == "pass"


def test_a_script_without_sbatch_lines_or_a_training_step_is_not_judged(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text(FAILS)
    # no #SBATCH: run by bash on a login node, srun makes the job and its state is the step's
    (repo / "run.sh").write_text("#!/bin/bash\nsrun python3 train.py\necho done\n")
    (repo / "copy.sbatch").write_text(HEAD + "cp a b\necho done\n")   # no training step
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "import")
    _, res, _ = _findings(repo, "--sbatch", str(repo / "run.sh"))
    assert res["status"] == "pass", res
    _, res, _ = _findings(repo, "--sbatch", str(repo / "copy.sbatch"))
    assert res["status"] == "skip", res


def test_the_demo_job_is_silent():
    # fixtures/demo's script ends with its training srun: its status is the job's
    _, res, _ = _findings(ROOT / "fixtures" / "demo")
    assert res["status"] == "pass", res


# ---- the oracle: the real local two-node Slurm --------------------------------------------
# Two forms hidden, two kept; the local nodes run two one-CPU jobs at a time and each round
# waits for the scheduler, so the other forms are left to the bash oracle above (the job's
# state is the batch script's exit status, which these four show).
SLURM_CASES = ["echo_after", "tee", "set_e", "rc_kept", "bash_c_echo", "bash_ec"]


@pytest.mark.slurm
def test_slurm_records_completed_for_each_flagged_script_and_failed_once_fixed(
        slurm_cluster, tmp_path):
    from test_slurm_injob import JOB_ENV, wait_done

    ids = {}
    for name in SLURM_CASES:
        work = tmp_path / name
        work.mkdir()
        (work / "train.py").write_text(FAILS)
        script = work / "job.sbatch"
        script.write_text(_script(name).replace(
            "#SBATCH --ntasks=1\n", f"#SBATCH --ntasks=1\n#SBATCH -o {work}/slurm-%j.out\n"
            "#SBATCH --time=2\n", 1))
        proc = subprocess.run(["sbatch", "--parsable", str(script)], cwd=work, env=JOB_ENV,
                              capture_output=True, text=True, timeout=60)
        ids[name] = proc.stdout.strip().split(";")[0]
        assert ids[name].isdigit(), (proc.stdout, proc.stderr)
    states = {name: wait_done(job_id) for name, job_id in ids.items()}
    want = {name: "COMPLETED" if _expected(name) else "FAILED" for name in SLURM_CASES}
    assert states == want


def test_the_steps_own_shell_is_named_and_its_fix_is_in_that_shell(repo):
    """`srun bash -c 'python3 train.py; echo done'`: the finding says the step's own
    shell ends with echo, and the fix is in that shell (a `set -e` before srun cannot
    reach it): no edit of the batch script is offered."""
    _, _, found = _findings(repo)
    f = found["bash_c_echo.sbatch"]
    assert "the step at bash_c_echo.sbatch:4 runs its own shell (`bash -c '…'`)" in f["message"], \
        f["message"]
    assert "`echo done`" in f["message"] and f["data"]["form"] == "step-shell", f
    assert "bash -ec" in f["fix"] and not f.get("edits") and not f.get("fix_options"), f
