"""signal-without-handler (issue 29): `#SBATCH --signal` that nothing handles.

The findings come from the real CLI on real git repos. The oracle is the local two-node
Slurm (tests/slurm/cluster.sh): a real `--signal=B:USR1@55` kills the batch shell that has
no trap (FAILED, exit code 0:10, the line after the step never runs) and runs the trap of
the script that waits for a background step; `scancel --signal=USR1 --batch` (the same
delivery: the batch shell only) shows a trap before a foreground srun running only when the
step ends.
"""
from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import git_repo, result_of, run_json

CHECK = "signal-without-handler"
HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n"
TRAP = "trap 'echo requeue; scontrol requeue $SLURM_JOB_ID' USR1\n"

# name -> (script after HEAD, (line, severity) of the finding, or None)
CASES = {
    "no_trap": ("#SBATCH --signal=B:USR1@60\nsrun python train.py\n", (4, "error")),
    "term_no_trap": ("#SBATCH --signal=B:SIGTERM@300\nsrun python train.py\n", (4, "error")),
    "number": ("#SBATCH --signal=B:10@90\nsrun python train.py &\nwait $!\n", (4, "error")),
    "trap_other_signal": ("#SBATCH --signal=B:USR1@60\ntrap 'exit 0' TERM\n"
                          "srun python train.py &\nwait\n", (4, "error")),
    "trap_after_step": ("#SBATCH --signal=B:USR1@60\nsrun python train.py\n" + TRAP,
                        (6, "error")),
    "trap_foreground": ("#SBATCH --signal=B:USR1@60\n" + TRAP + "srun python train.py\n"
                        "echo done\n", (6, "error")),
    "trap_reset": ("#SBATCH --signal=B:USR1@60\n" + TRAP + "trap - USR1\n"
                   "srun python train.py &\nwait\n", (6, "error")),
    "trap_before_wait": ("#SBATCH --signal=B:USR1@60\nsrun python train.py &\n" + TRAP
                         + "wait\n", None),
    "trap_loop": ("#SBATCH --signal=B:USR1@60\n" + TRAP + "for s in 1 2; do\n"
                  "  srun python train.py --seed $s\ndone\n", (7, "warning")),
    "unread_source": ("#SBATCH --signal=B:USR1@60\n. $ATA_DIR/etc/ATA_setup.sh\n"
                      "requeue_job func_trap USR1\nsrun python train.py &\nwait\n",
                      (4, "warning")),
    # correct forms
    "background": ("#SBATCH --signal=B:USR1@60\n" + TRAP + "srun python train.py &\n"
                   "wait $!\n", None),
    "background_pid": ("#SBATCH --signal=B:USR1@60\n" + TRAP
                       + "srun python train.py --lr 1 & pid=$!\nwait $pid\n", None),
    "ignored": ("#SBATCH --signal=B:USR1@60\ntrap '' USR1\nsrun python train.py\n", None),
    "exec": ("#SBATCH --signal=B:USR1@60\nexec srun python train.py\n", None),
    "sourced_trap": ("#SBATCH --signal=B:USR1@60\nsource lib/requeue.sh\n"
                     "srun python train.py &\nwait\n", None),
    "venv": ("#SBATCH --signal=B:USR1@60\nsource $HOME/venv/bin/activate\n" + TRAP
             + "srun python train.py &\nwait\n", None),
    "not_terminating": ("#SBATCH --signal=B:URG@60\nsrun python train.py\n", None),
    # without B: the steps get the signal
    "steps_no_handler": ("#SBATCH --signal=USR1@90\nsrun python train.py\n", (4, "warning")),
    "steps_handler": ("#SBATCH --signal=USR1@90\nsrun python handled.py\n", None),
    "steps_lightning": ("#SBATCH --signal=SIGUSR1@90\nsrun python lit.py\n", None),
    "steps_blinker": ("#SBATCH --signal=USR2@90\nsrun python blinker_only.py\n", (4, "warning")),
    "steps_lightning_hup": ("#SBATCH --signal=USR1@90\nsrun python lit_hup.py\n",
                            (4, "warning")),
    "batch_step": ("#SBATCH --signal=USR1@90\npython handled.py\n", (4, "warning")),
}

CODE = {
    "train.py": "import time\ntime.sleep(1)\n",
    "handled.py": "import signal as sg\nimport sys\n\n\ndef save(signum, frame):\n"
                  "    sys.exit(0)\n\n\nsg.signal(sg.SIGUSR1, save)\n",
    # a `signal` of another library (blinker) is no handler
    "blinker_only.py": "from blinker import signal\n\nstarted = signal('started')\n",
    "lit.py": "import lightning as L\n\ntrainer = L.Trainer(devices=1)\n",
    "lit_hup.py": "import signal\nimport lightning as L\n"
                  "from lightning.pytorch.plugins.environments import SLURMEnvironment\n\n"
                  "trainer = L.Trainer(plugins=[SLURMEnvironment("
                  "requeue_signal=signal.SIGHUP)])\n",
    "lib/requeue.sh": "trap 'scontrol requeue $SLURM_JOB_ID' USR1\n",
}


def _findings(repo: Path) -> tuple:
    code, doc = run_json("--static", "--repo", str(repo), "--only", CHECK)
    res = result_of(doc, CHECK)
    return code, res, {f["location"]["path"]: f for f in res["findings"]}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    files = dict(CODE)
    files.update({f"{name}.sbatch": HEAD + body for name, (body, _) in CASES.items()})
    return git_repo(tmp_path_factory.mktemp("signals"), files)


def test_each_form_is_found_at_its_line_and_correct_scripts_are_silent(repo):
    code, res, found = _findings(repo)
    got = {path[:-len(".sbatch")]: (f["location"]["line"], f["severity"])
           for path, f in found.items()}
    want = {name: exp for name, (_, exp) in CASES.items() if exp is not None}
    assert got == want
    assert code == 1 and res["status"] == "fail"
    no_trap = found["no_trap.sbatch"]["message"]
    assert "no_trap.sbatch:4 (#SBATCH --signal=B:USR1@60) sends SIGUSR1 60 s before" in no_trap
    assert "FAILED (exit code 0:10), with no checkpoint and no requeue" in no_trap
    assert "0:15" in found["term_no_trap.sbatch"]["message"]
    fg = found["trap_foreground.sbatch"]
    assert "its trap at trap_foreground.sbatch:5 is in place" in fg["message"]
    assert "bash runs a trap only when the foreground command returns" in fg["message"]
    [option] = fg["fix_options"]
    assert option["steps"][0]["lines"] == ["srun python train.py &", "wait $!"]
    assert "is installed only after the training step" in found["trap_after_step.sbatch"][
        "message"]
    unread = found["unread_source.sbatch"]["message"]
    assert "`$ATA_DIR/etc/ATA_setup.sh` sourced at unread_source.sbatch:5" in unread
    steps = found["steps_no_handler.sbatch"]["message"]
    assert "train.py and the 0 repo module(s) it imports" in steps
    assert "the training never gets the signal" in found["batch_step.sbatch"]["message"]


def test_a_repo_without_signal_requests_skips(tmp_path):
    repo = git_repo(tmp_path / "r", {"job.sbatch": HEAD + "srun python train.py\n",
                                     "train.py": "print(1)\n"})
    code, res, _ = _findings(repo)
    assert (code, res["status"]) == (0, "skip"), res


# ---- the oracle: the real local two-node Slurm --------------------------------------------
def _state(job_id: str) -> dict:
    out = subprocess.run(["scontrol", "show", "job", "-o", job_id], capture_output=True,
                         text=True).stdout
    return dict(re.findall(r"(JobState|ExitCode)=(\S+)", out))


def _submit(script: Path, env: dict) -> str:
    proc = subprocess.run(["sbatch", "--parsable", str(script)], cwd=script.parent, env=env,
                          capture_output=True, text=True, timeout=60)
    job_id = proc.stdout.strip().split(";")[0]
    assert job_id.isdigit(), (proc.stdout, proc.stderr)
    return job_id


def _running(job_id: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _state(job_id).get("JobState") == "RUNNING":
            return
        time.sleep(0.3)
    raise AssertionError(f"job {job_id} did not start")


@pytest.mark.slurm
def test_oracle_slurm_signal_kills_a_shell_without_trap_and_defers_a_foreground_trap(
        slurm_cluster, tmp_path):
    from test_slurm_injob import JOB_ENV, wait_done

    mark = "echo \"trap $(date +%s)\" >> marks"
    jobs = {
        # a real --signal: sent 55 s before the 1-minute limit, i.e. within Slurm's check
        # interval after the start; the step would run past the limit
        "no_trap": "#SBATCH --signal=B:USR1@55\nsrun sleep 90\necho after-step >> marks\n",
        "background": f"#SBATCH --signal=B:USR1@55\ntrap '{mark}; exit 0' USR1\n"
                      "srun sleep 90 &\nwait $!\necho after-step >> marks\n",
        # scancel --signal=USR1 --batch below: the same delivery as B:, at a known time
        "foreground": f"trap '{mark}' USR1\nsrun sleep 12\necho \"step-end $(date +%s)\" "
                      ">> marks\n",
    }
    ids, dirs = {}, {}
    for name, body in jobs.items():
        work = tmp_path / name
        work.mkdir()
        script = work / "job.sbatch"
        script.write_text("#!/bin/bash\n#SBATCH --ntasks=1\n#SBATCH --time=1\n"
                          f"#SBATCH -o {work}/slurm-%j.out\n" + body)
        dirs[name] = work
        ids[name] = _submit(script, JOB_ENV)
    try:
        # the doctor's verdicts on the same scripts
        repo = git_repo(tmp_path / "repo", {f"{n}.sbatch": (dirs[n] / "job.sbatch").read_text()
                                            .replace("srun sleep", "srun python train.py")
                                            for n in jobs} | {"train.py": "print(1)\n"})
        _, res, found = _findings(repo)
        assert found["no_trap.sbatch"]["severity"] == "error"
        assert "background.sbatch" not in found
        # (foreground.sbatch asks for no --signal: scancel stands in for it)
        _running(ids["foreground"])
        time.sleep(2)
        sent = time.time()
        subprocess.run(["scancel", "--signal=USR1", "--batch", ids["foreground"]], check=True)
        states = {name: wait_done(job_id, 150) for name, job_id in ids.items()}
    finally:
        subprocess.run(["scancel", *ids.values()], capture_output=True)
    marks = {n: (d / "marks").read_text() if (d / "marks").exists() else "" for n, d in
             dirs.items()}
    # no trap: the signal ends the batch shell (exit code 0:10 = killed by SIGUSR1) before
    # the time limit, and the line after the step never runs
    assert states["no_trap"] == "FAILED", _state(ids["no_trap"])
    assert _state(ids["no_trap"])["ExitCode"] == "0:10"
    assert marks["no_trap"] == ""
    # background + wait: the trap runs at the signal, before the limit, and exits 0
    assert states["background"] == "COMPLETED" and marks["background"].startswith("trap "), \
        (marks, _state(ids["background"]))
    # foreground: the trap runs only when the 12 s step has ended (then the next line)
    assert marks["foreground"].splitlines()[0].startswith("trap "), marks
    trap_at = int(re.search(r"trap (\d+)", marks["foreground"]).group(1))
    assert trap_at - sent >= 8, (marks["foreground"], sent)
    assert "step-end" in marks["foreground"]
