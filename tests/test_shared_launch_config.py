"""shared-launch-config (issue 29): a job script that writes a launcher's config or hostfile
at a fixed path that its concurrent jobs also write and read. The findings come from the
real CLI; the oracle is the real shell: two copies of the fixture's job run at once (with
`srun` and `accelerate` as shell functions that wait a second, then print the config the
launcher would read), and the first launches with the second job's node count; the
fixed form (a per-job file passed with --config_file) reads its own."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, git_repo, result_of, run_doctor, validate_report

CHECK = "shared-launch-config"
FIXTURES = ROOT / "fixtures" / CHECK
HEAD = "#!/bin/bash\n#SBATCH --nodes=2\n"
# name → (job script body after HEAD, (line, shared) of the finding or None)
CASES = {
    "home_accelerate": ("accelerate config default --config_file ~/acc.yaml\n"
                        "srun accelerate launch --config_file ~/acc.yaml train.py\n", (3, "home")),
    "home_var": ("CFG=$HOME/configs/ds.json\necho \"{\\\"nodes\\\": $SLURM_NNODES}\" > \"$CFG\"\n"
                 "deepspeed train.py --deepspeed_config=$CFG\n", (4, "home")),
    "absolute_tee": ("scontrol show hostnames | tee /proj/run/hostfile\n"
                     "mpirun -machinefile /proj/run/hostfile python train.py\n",
                     (3, "absolute")),
    # keyed by the job, node-local, read by no launcher, relative with one job: silent
    "job_id": ("H=/proj/run/hosts.$SLURM_JOB_ID\nscontrol show hostnames > $H\n"
               "deepspeed --hostfile $H train.py\n", None),
    "array_task": ("H=/proj/run/hosts.${SLURM_ARRAY_TASK_ID}\nscontrol show hostnames > $H\n"
                   "deepspeed --hostfile $H train.py\n", None),
    "pid": ("scontrol show hostnames > /proj/hosts.$$\n"
            "deepspeed --hostfile /proj/hosts.$$ train.py\n", None),
    "mktemp_dir": ("D=$(mktemp -d)\nscontrol show hostnames > $D/hostfile\n"
                   "deepspeed --hostfile $D/hostfile train.py\n", None),
    "node_local": ("scontrol show hostnames > /tmp/hostfile\n"
                   "deepspeed --hostfile /tmp/hostfile train.py\n", None),
    "only_shown": ("scontrol show hostnames > /proj/hostfile\ncat /proj/hostfile\n"
                   "srun python train.py\n", None),
    "relative_alone": ("scontrol show hostnames > hostfile\n"
                       "deepspeed --hostfile hostfile train.py\n", None),
    # the same text whichever job writes it: sharing it does no harm
    "constant_heredoc": ("cat > /proj/ds.json <<'EOF'\n{\"stage\": $ZERO}\nEOF\n"
                         "deepspeed train.py --deepspeed_config /proj/ds.json\n", None),
    "constant_echo": ("echo 'num_machines: 1' > ~/acc.yaml\n"
                      "accelerate launch --config_file ~/acc.yaml train.py\n", None),
    "read_before_write": ("deepspeed --hostfile /proj/hostfile train.py\n"
                          "scontrol show hostnames > /proj/hostfile\n", None),
}


def commit(repo: Path) -> Path:
    """What is in `repo`, committed in a new git repo there."""
    return git_repo(repo, {})


def _run(repo: Path, *extra: str) -> tuple:
    proc = run_doctor("run", "--static", "--repo", str(repo), "--select", CHECK,
                      "--format", "json", *extra)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, result_of(validate_report(json.loads(proc.stdout)), CHECK)


def _fixture(name: str, dest: Path) -> Path:
    shutil.copytree(FIXTURES / name, dest, ignore=shutil.ignore_patterns("case.yaml"))
    return commit(dest)


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("sharedcfg")
    (root / "train.py").write_text("print(1)\n")
    for name, (body, _) in CASES.items():
        (root / f"{name}.sbatch").write_text(HEAD + body)
    return _run(commit(root))


def test_each_form_is_found_at_its_line_and_per_job_files_are_silent(cases):
    proc, res = cases
    got = {f["location"]["path"][:-len(".sbatch")]: (f["location"]["line"], f["data"]["shared"])
           for f in res["findings"]}
    assert got == {n: e for n, (_, e) in CASES.items() if e is not None}
    assert {f["severity"] for f in res["findings"]} == {"warning"}
    assert proc.returncode == 0     # warnings only
    f = next(f for f in res["findings"] if f["location"]["path"] == "home_var.sbatch")
    assert "home_var.sbatch:4 writes $HOME/configs/ds.json" in f["message"]
    assert "`deepspeed … --deepspeed_config=$CFG` at home_var.sbatch:5" in f["message"]


def test_the_issue_case_a_submit_loop_and_the_users_default_accelerate_config(tmp_path):
    repo = _fixture("fail_accelerate_default_submit_loop", tmp_path / "repo")
    proc, res = _run(repo, "--sbatch", str(repo / "job.sbatch"))
    (f,) = res["findings"]
    assert f["location"] == {"path": "job.sbatch", "line": 7}
    assert "~/.cache/huggingface/accelerate/default_config.yaml" in f["message"]
    assert "`accelerate launch` at job.sbatch:16 (it reads the default config)" in f["message"]
    assert "the loop at submit.sh:3 that submits it (submit.sh:4)" in f["message"]
    assert "--config_file" in f["fix"]
    # without the loop, a $HOME path is still shared by all of the user's jobs
    (repo / "submit.sh").unlink()
    _, res = _run(repo, "--sbatch", str(repo / "job.sbatch"))
    (f,) = res["findings"]
    assert f["data"]["concurrent"] is None and "two of them running at once" in f["message"]


def test_a_relative_file_is_judged_only_when_jobs_of_the_script_run_together(tmp_path):
    repo = _fixture("fail_relative_ds_config_array", tmp_path / "array")
    _, res = _run(repo, "--sbatch", str(repo / "job.sbatch"))
    (f,) = res["findings"]
    assert "the job array job.sbatch:2 (#SBATCH --array=1-8)" in f["message"]
    # the same script submitted twice by a script of the repo
    alone = _fixture("pass_relative_single_job", tmp_path / "alone")
    _, res = _run(alone, "--sbatch", str(alone / "job.sbatch"))
    assert res["status"] == "pass"
    (alone / "sweep.sh").write_text("sbatch job.sbatch\nsbatch --nodes=2 job.sbatch\n")
    commit(alone)
    _, res = _run(alone, "--sbatch", str(alone / "job.sbatch"))
    assert "sweep.sh:1 and sweep.sh:2, which submit it twice" in res["findings"][0]["message"]


def test_doctor_fix_unsafe_keys_the_hostfile_by_the_job_id(tmp_path):
    repo = _fixture("fail_hostfile_fixed_path", tmp_path / "repo")
    _, res = _run(repo, "--sbatch", str(repo / "job.sbatch"))
    (f,) = res["findings"]
    assert f["location"] == {"path": "job.sbatch", "line": 18}
    assert f["fix_options"][0]["steps"][0] == {
        "kind": "change", "lines": ['HOSTFILE="$WORKDIR/hostfile.${SLURM_JOB_ID}"'],
        "file": "job.sbatch", "line": 11, "where": None}
    safe = run_doctor("fix", "--repo", str(repo), "--sbatch", str(repo / "job.sbatch"),
                      "--select", CHECK, "--write")
    assert "HOSTFILE=$WORKDIR/hostfile\n" in (repo / "job.sbatch").read_text(), safe.stdout
    proc = run_doctor("fix", "--repo", str(repo), "--sbatch", str(repo / "job.sbatch"),
                      "--select", CHECK, "--unsafe", "--write")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert (repo / "job.sbatch").read_text().splitlines()[10] == \
        'HOSTFILE="$WORKDIR/hostfile.${SLURM_JOB_ID}"'
    _, res = _run(repo, "--sbatch", str(repo / "job.sbatch"))
    assert res["status"] == "pass", res["findings"]


STUBS = """
srun() { sleep 1.5; "$@"; }
accelerate() {
  f=$HOME/.cache/huggingface/accelerate/default_config.yaml
  if [ "$2" = --config_file ]; then f=$3; fi
  grep '^num_machines' "$f"
}
scontrol() { echo n1; }
export -f srun accelerate scontrol
"""


def _two_jobs_at_once(script: Path, home: Path) -> tuple:
    """The job run twice, 0.5 s apart, as jobs 101 (2 nodes) and 102 (4 nodes); what each
    one's launcher read."""
    (home / ".cache").mkdir(parents=True, exist_ok=True)
    stub = script.parent / "stubs.sh"
    stub.write_text(STUBS)
    procs = []
    for job_id, nodes in (("101", "2"), ("102", "4")):
        env = dict(os.environ, HOME=str(home), SLURM_JOB_ID=job_id, SLURM_NNODES=nodes,
                   SLURM_JOB_NODELIST="n1", SLURM_NODEID="0")
        procs.append(subprocess.Popen(["bash", "-c", f"source {stub}; bash {script}"],
                                      cwd=script.parent, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
        time.sleep(0.5)
    return tuple(p.communicate(timeout=60)[0].strip() for p in procs)


def test_bash_oracle_two_jobs_at_once_read_each_others_config(tmp_path):
    shared = tmp_path / "shared"
    shutil.copytree(FIXTURES / "fail_accelerate_default_submit_loop", shared)
    first, second = _two_jobs_at_once(shared / "job.sbatch", tmp_path / "home1")
    assert first == "num_machines: 4"      # the 2-node job launches with the other's count
    assert second == "num_machines: 4"
    fixed = tmp_path / "fixed"
    shutil.copytree(FIXTURES / "pass_mktemp_config", fixed)
    first, second = _two_jobs_at_once(fixed / "job.sbatch", tmp_path / "home2")
    assert (first, second) == ("num_machines: 2", "num_machines: 4")
