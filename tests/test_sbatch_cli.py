"""Issue 16, causes 1 and 7, for `doctor sbatch`: what is checked is what runs, the job
log is appended to, and a submission that may have happened is never called refused.

The `slurm` tests submit to the real local two-node Slurm (tests/slurm/cluster.sh).
The unknown-outcome tests put a fake `sbatch` first on PATH: real Slurm cannot be made
to hang, print a notice after the id, or die after submitting on demand.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import run_main, validate_report
from doctor.cli import main


def queued(name: str) -> str:
    return subprocess.run(["squeue", "-h", "-n", name, "-o", "%i"], capture_output=True,
                          text=True, timeout=30).stdout.strip()


@pytest.fixture
def job(tmp_path):
    """A repo whose job script and config agree on one node, named after the test."""
    repo = tmp_path / "repo"
    (repo / "configs").mkdir(parents=True)
    (repo / "configs" / "train.yaml").write_text("trainer:\n  num_nodes: 1\n  devices: 2\n")
    name = f"doctor-sbatch-cli-{os.getpid()}-{tmp_path.name}"
    script = repo / "train.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --job-name={name}\n"
                      f"#SBATCH --ntasks-per-node=2\n#SBATCH --gpus-per-node=2\n"
                      f"#SBATCH -o {repo}/slurm-%j.out\n"
                      "srun python train.py --config configs/train.yaml\n")
    return repo, script, name


@pytest.fixture
def doctor_sbatch(monkeypatch, capsys):
    """`doctor sbatch --repo REPO --only slurm-gpu-mismatch ARGS` through doctor.cli.main
    in this process, with `env` added to the environment → CompletedProcess."""
    for name in [n for n in os.environ if n.startswith(("SLURM", "SBATCH_"))]:
        monkeypatch.delenv(name)

    def run(repo: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        monkeypatch.chdir(repo)
        proc = run_main(capsys, "sbatch", "--repo", str(repo), "--only", "slurm-gpu-mismatch",
                        *args)
        return subprocess.CompletedProcess(args, proc.returncode, proc.stdout, proc.stderr)
    return run


@pytest.mark.slurm
@pytest.mark.parametrize("extra,env,source", [
    (["-N", "2"], {}, "the sbatch command line: --nodes=2"),
    ([], {"SBATCH_GPUS_PER_NODE": "1"}, "SBATCH_GPUS_PER_NODE=1 in sbatch's environment"),
])
def test_sbatch_options_are_checked_as_the_job_will_run(slurm_cluster, doctor_sbatch, job, extra,
                                                       env, source):
    """The script alone passes; an option on the command line or an SBATCH_* variable
    makes the job bad. It used to be checked as written and submitted."""
    repo, script, name = job
    proc = doctor_sbatch(repo, "--json", str(repo / "doctor.json"), str(script), *extra,
                         env=env)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == "" and "not submitted" in proc.stderr
    doc = validate_report(json.loads((repo / "doctor.json").read_text()))
    findings = [f for r in doc["results"] for f in r["findings"]]
    assert any(source in f["message"] for f in findings), findings
    assert queued(name) == ""


def test_the_script_alone_passes(job):
    """The baseline of the test above (no Slurm needed: nothing is submitted)."""
    repo, script, _ = job
    with pytest.raises(SystemExit) as exit_:
        main(["run", "--repo", str(repo), "--only", "slurm-gpu-mismatch", "--sbatch",
              str(script), "--config", str(repo / "configs" / "train.yaml")])
    assert exit_.value.code == 0


@pytest.mark.slurm
def test_test_only_is_sbatchs_estimate_not_an_unknown_outcome(slurm_cluster, doctor_sbatch,
                                                              tmp_path):
    """`--test-only` makes sbatch print "Job N to start at ..." and submit nothing: exit 0
    with sbatch's line on stderr and no job id; it used to be exit 4, "may be queued"."""
    name = f"doctor-test-only-{os.getpid()}-{tmp_path.name}"
    script = tmp_path / "job.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --job-name={name}\n"
                      f"#SBATCH -o {tmp_path}/slurm-%j.out\nsrun true\n")
    proc = doctor_sbatch(tmp_path, str(script), "--test-only")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert "to start at" in proc.stderr and "unknown" not in proc.stderr
    assert queued(name) == ""


@pytest.mark.slurm
def test_json_over_the_job_script_is_refused_before_submitting(slurm_cluster, doctor_sbatch, job):
    repo, script, name = job
    before = script.read_bytes()
    proc = doctor_sbatch(repo, "--json", str(script), str(script))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"doctor: error: --json {script} would overwrite an input of this run ({script}): "
        "name another file"]
    assert proc.stdout == "" and script.read_bytes() == before
    assert queued(name) == ""


@pytest.mark.slurm
def test_force_appends_the_report_to_a_log_kept_with_open_mode_append(slurm_cluster,
                                                                      doctor_sbatch, job):
    """--force used to open the job's log with mode `w`, wiping the earlier runs' output
    that `--open-mode=append` keeps."""
    from test_slurm_injob import wait_done

    repo, _, name = job
    log = repo / "train.log"
    log.write_text("output of the earlier run\n")
    script = repo / "append.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --job-name={name}\n"
                      f"#SBATCH -o {log}\n#SBATCH --open-mode=append\n"
                      "echo output of this run\n"
                      "if [ -n \"$NEVER\" ]; then python train.py --config configs/train.yaml; "
                      "fi\n")
    proc = doctor_sbatch(repo, "--force", str(script), "--nodes=2")  # num_nodes: 1 fails
    assert proc.returncode == 0, proc.stderr
    job_id = proc.stdout.strip()
    assert job_id.isdigit(), proc.stdout
    assert wait_done(job_id) == "COMPLETED"
    text = log.read_text()
    assert text.startswith("output of the earlier run\n# doctor: job "), text
    assert text.index("slurm-gpu-mismatch") < text.index("output of this run")
    assert f"the report is appended to {log}" in proc.stderr


FAKES = {
    "notice": 'echo 4242; echo "sbatch: notice: the partition is busy"',
    "id-then-error": 'echo 4243; echo "sbatch: error: slurm_persist_conn_open failed" >&2; '
                     'exit 1',
    "killed": "echo 4244; kill -KILL $$",
    "lost-answer": 'echo "sbatch: error: Batch job submission failed: Socket timed out on '
                   'send/recv operation" >&2; exit 1',
    "silent": "exit 0",
    "hangs": "exec sleep 120",
}


def fake_sbatch(tmp_path: Path, behaviour: str) -> dict:
    """PATH with a fake `sbatch` first that records its pid, then behaves as named."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(f"#!/bin/bash\necho $$ > {tmp_path}/sbatch.pid\n"
                                    f"{FAKES[behaviour]}\n")
    (bin_dir / "sbatch").chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


@pytest.mark.parametrize("behaviour,job_id,why", [
    ("id-then-error", "4243", "sbatch printed job id 4243 but exited with 1"),
    ("killed", "4244", "sbatch was killed by SIGKILL"),
    ("lost-answer", None, "Socket timed out"),
    ("silent", None, "sbatch exited 0 but printed no job id"),
    ("hangs", None, "sbatch did not finish within 1 s and was stopped"),
])
def test_a_submission_that_may_have_happened_is_not_called_refused(doctor_sbatch, tmp_path,
                                                                   behaviour, job_id, why):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\ntrue\n")
    timeout = ["--sbatch-timeout", "1"] if behaviour == "hangs" else []
    proc = doctor_sbatch(repo, *timeout, "--json", str(tmp_path / "r-%j.json"),
                         str(repo / "job.sbatch"), env=fake_sbatch(tmp_path, behaviour))
    assert proc.returncode == 4, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("doctor: error: the submission's outcome is unknown: ") and why in last
    assert "check `squeue --me` before submitting again" in last
    assert "refused" not in proc.stderr and "no job id:" not in proc.stderr
    assert proc.stdout == (f"{job_id}\n" if job_id else "")
    assert (tmp_path / f"r-{job_id or 'nojob'}.json").exists()
    pid = int((tmp_path / "sbatch.pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or \
        Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


def test_a_notice_after_the_job_id_is_a_submission(doctor_sbatch, tmp_path):
    """sbatch exited 0 and printed the id, then a notice: submitted, and the notice is
    passed on. It used to be "sbatch printed no job id" (exit 2), inviting a resubmit."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\ntrue\n")
    proc = doctor_sbatch(repo, str(repo / "job.sbatch"), env=fake_sbatch(tmp_path, "notice"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "4242\n"
    assert "sbatch: notice: the partition is busy" in proc.stderr.splitlines()


def fake_tools(tmp_path: Path, **scripts: str) -> dict:
    """PATH with fake Slurm commands first: name → the body of its shell script."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir(parents=True)
    for name, body in scripts.items():
        (bin_dir / name).write_text(f"#!/bin/bash\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_a_forced_job_that_cannot_be_released_is_queued_not_refused(doctor_sbatch, job,
                                                                    tmp_path):
    """`scontrol release` failing after the held submission used to be exit 2 ("bad
    input, or sbatch refused the job: not submitted") with no job id: the job sat held."""
    repo, script, _ = job
    env = fake_tools(tmp_path, sbatch="echo 4245",
                     scontrol='[ "$1" = release ] && { echo "scontrol: error: Invalid job '
                              'id specified" >&2; exit 1; }; echo "JobId=4245"')
    proc = doctor_sbatch(repo, "--force", str(script), "--nodes=2", env=env)
    assert proc.returncode == 4, proc.stderr
    assert proc.stdout == "4245\n"
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("doctor: error: the submission's outcome is unknown: job 4245 was "
                           "submitted held and `scontrol release 4245` failed"), last
    assert "`scontrol release` it once found" in last


def test_what_sbatch_prints_is_escaped(doctor_sbatch, tmp_path):
    """sbatch's own words (a site's job_submit plugin message, a wrapper's output) went to
    the terminal raw: an escape sequence in them could clear it or retitle it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\ntrue\n")
    for body, code in (("echo 4246; printf 'sbatch: note \\033]0;T\\007\\n' >&2", 0),
                       ("printf 'job 9\\033[2J\\n'", 4)):
        env = fake_tools(tmp_path / str(code), sbatch=body)
        proc = doctor_sbatch(repo, str(repo / "job.sbatch"), env=env)
        assert proc.returncode == code, proc.stderr
        assert "\x1b" not in proc.stderr and "\\x1b" in proc.stderr, proc.stderr


@pytest.mark.slurm
def test_force_appends_to_a_log_whose_path_has_spaces(slurm_cluster, doctor_sbatch, job):
    """`scontrol show job -o` does not quote StdOut=/a b/x.out: the report used to be
    appended to `/a`, a file of the user's that the job never writes."""
    from test_slurm_injob import wait_done

    repo, _, name = job
    (repo / "my logs").mkdir()
    bystander = repo / "my"
    bystander.write_text("the user's own file\n")
    log = repo / "my logs" / "train.out"
    script = repo / "spaces.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --job-name={name}\n"
                      f"#SBATCH -o \"{log}\"\necho output of this run\n"
                      "if [ -n \"$NEVER\" ]; then python train.py --config configs/train.yaml; "
                      "fi\n")
    proc = doctor_sbatch(repo, "--force", str(script), "--nodes=2")  # num_nodes: 1 fails
    assert proc.returncode == 0, proc.stderr
    assert wait_done(proc.stdout.strip()) == "COMPLETED"
    assert bystander.read_text() == "the user's own file\n"
    text = log.read_text()
    assert text.startswith("# doctor: job ") and "output of this run" in text, text
    assert f"the report is appended to {log}" in proc.stderr
