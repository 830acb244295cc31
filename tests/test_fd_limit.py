"""fd-limit-too-low on this machine: the live limits, a child with a lowered
`ulimit -n`, and the job script's ulimit lines checked against real bash."""
from __future__ import annotations

import json
import os
import resource
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from doctor.job.ulimits import apply_ulimits, ulimit_commands
from conftest import ROOT, result_of, run_json, validate_report
from doctor.job.sbatch import parse_sbatch

CHECK = "fd-limit-too-low"
SOFT, HARD = resource.getrlimit(resource.RLIMIT_NOFILE)
NEEDED_8 = 256 + 8 * 2 * 64  # 8 workers, prefetch 2 (the default): 1280


def _probe_value(v: int):
    return None if v == resource.RLIM_INFINITY else v


def make_repo(tmp: Path, workers: int = 8, script: str = "") -> Path:
    (tmp / "configs").mkdir(parents=True, exist_ok=True)
    (tmp / "configs" / "train.yaml").write_text(
        f"data:\n  batch_size: 16\n  num_workers: {workers}\n")
    if script:
        (tmp / "job.sbatch").write_text(
            "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n"
            f"{script}\nsrun python train.py\n")
    return tmp


def run_in_shell(prelude: str, repo: Path, *extra: str) -> tuple:
    """`bash -c '<prelude>; python -m doctor run --only fd-limit-too-low ...'`."""
    cmd = (f"{prelude}; exec {shlex.quote(sys.executable)} -m doctor run --only {CHECK} "
           f"--format json --repo {shlex.quote(str(repo))} " + " ".join(extra))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("SLURM_JOB_ID", None)
    proc = subprocess.run(["bash", "-c", cmd], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.stdout, proc.stderr
    doc = validate_report(json.loads(proc.stdout))
    return proc.returncode, result_of(doc, CHECK), doc


def test_live_probe_reads_this_process_limits(tmp_path):
    code, doc = run_json("--only", CHECK, "--repo", str(make_repo(tmp_path)), cwd=ROOT)
    assert doc["facts"]["limits"]["nofile"] == [_probe_value(SOFT), _probe_value(HARD)]
    res = result_of(doc, CHECK)
    expected = "pass" if SOFT == resource.RLIM_INFINITY or SOFT >= NEEDED_8 else "fail"
    assert res["status"] == expected
    assert code == (1 if expected == "fail" and res["severity"] == "error" else 0)


def test_child_with_low_hard_limit_fails(tmp_path):
    code, res, doc = run_in_shell("ulimit -n 512", make_repo(tmp_path))
    assert doc["facts"]["limits"]["nofile"] == [512, 512]
    assert res["status"] == "fail" and res["severity"] == "error" and code == 1
    f = res["findings"][0]
    assert f["data"]["soft"] == 512 and f["data"]["hard"] == 512
    assert f["data"]["needed"] == NEEDED_8 and f["data"]["max_workers"] == 2
    assert f["location"] == {"path": "configs/train.yaml", "line": 3}
    assert "Lower num_workers (line 3) to 2 or fewer" in f["fix"]


@pytest.mark.skipif(HARD != resource.RLIM_INFINITY and HARD < NEEDED_8,
                    reason="this machine's hard limit is below the need itself")
def test_child_with_low_soft_limit_warns_with_the_line_to_add(tmp_path):
    repo = make_repo(tmp_path, script="#SBATCH --time=1:00:00")
    code, res, _ = run_in_shell("ulimit -Sn 512", repo, "--sbatch", "job.sbatch")
    assert res["status"] == "fail" and res["severity"] == "warning" and code == 0
    f = res["findings"][0]
    hard = _probe_value(HARD)
    assert f["commands"] == [f"ulimit -n {hard if hard is not None else NEEDED_8}"]
    assert f["location"] == {"path": "job.sbatch", "line": 4}  # the last #SBATCH line
    assert "after line 4" in f["fix"]
    assert f["data"]["ranks_per_node"] == 4 and f["data"]["soft"] == 512
    code, _, _ = run_in_shell("ulimit -Sn 512", repo, "--sbatch", "job.sbatch",
                              "--fail-on", "warning")
    assert code == 1
    # the suggested line, run in a shell with that soft limit, makes the check pass
    fixed = make_repo(tmp_path / "fixed", script=f["commands"][0])
    code, res, _ = run_in_shell("ulimit -Sn 512", fixed, "--sbatch", "job.sbatch")
    assert res["status"] == "pass" and code == 0


def test_script_ulimit_above_the_hard_limit(tmp_path):
    repo = make_repo(tmp_path, script="ulimit -n 999999")
    code, res, _ = run_in_shell("ulimit -n 2048", repo, "--sbatch", "job.sbatch")
    assert res["status"] == "fail" and res["severity"] == "warning"
    f = res["findings"][0]
    assert f["location"] == {"path": "job.sbatch", "line": 4}
    assert f["commands"] == ["ulimit -n 2048"]
    assert f["data"]["failed_ulimit"] == [{"line": 4, "text": "ulimit -n 999999"}]


def test_fewer_workers_pass_under_the_common_1024(tmp_path):
    """Seed 004's fix: 4 workers per rank instead of 8 fit under 1024."""
    code, res, _ = run_in_shell("ulimit -n 1024", make_repo(tmp_path, workers=4))
    assert res["status"] == "pass" and code == 0
    code, res, _ = run_in_shell("ulimit -n 1024", make_repo(tmp_path / "8", workers=8))
    assert res["status"] == "fail" and code == 1


def _can_raise_hard() -> bool:
    return subprocess.run(["bash", "-c", "ulimit -Hn 4096 && ulimit -Hn 8192"],
                          capture_output=True).returncode == 0


SCRIPTS = [
    "ulimit -n 2048",
    "ulimit -Sn 4096",
    "ulimit -Sn 8192",                       # above the hard limit: refused
    "ulimit -Hn 2048\nulimit -Sn 4096",      # lowered hard, then soft above it
    "ulimit -n 65536 || true\nulimit -S -n 3000",
    "ulimit -Hn 3000\nulimit -n hard",
    "ulimit -Sn 1000\nulimit -Sn soft",
    "ulimit -Hn 512",                        # hard below the current soft: EINVAL
    "ulimit -n\nulimit -c 0",                # a query and another resource: no change
]


@pytest.mark.parametrize("script", SCRIPTS)
def test_ulimit_emulation_matches_bash(script):
    raising = "ulimit -Hn 8192" in script or "65536" in script
    if raising and _can_raise_hard():
        pytest.skip("this process may raise its hard limit (CAP_SYS_RESOURCE)")
    start = (1024, 4096)
    proc = subprocess.run(
        ["bash", "-c", f"ulimit -Sn {start[0]}; ulimit -Hn {start[1]}\n{script}\n"
                       "echo $(ulimit -Sn) $(ulimit -Hn)"],
        capture_output=True, text=True, timeout=10)
    real = tuple(int(x) for x in proc.stdout.split()[-2:])
    parsed = parse_sbatch(f"#!/bin/bash\n#SBATCH -N 1\n{script}\n", Path("j.sh"), "j.sh")
    soft, hard, failed = apply_ulimits(*start, ulimit_commands(parsed))
    assert (soft, hard) == real
    assert bool(failed) == ("cannot modify limit" in proc.stderr)


@pytest.mark.parametrize("tie,severity", [
    ("", "error"),                                   # tied to no cluster: submitted from here
    ("#SBATCH --partition=standard-g", "warning"),   # LUMI's partition: another cluster
    ("#SBATCH --clusters=lumi", "warning"),
])
def test_hard_limit_of_this_machine_judges_only_its_own_clusters_jobs(tmp_path, tie, severity):
    """Issue 26: another cluster's facts never raise an error. Nothing here shows this
    machine is on the cluster a job's partition or --clusters names (no Slurm answers, or
    the test Slurm other modules start, cluster 'local', has neither), so its hard limit
    512 only warns, saying why; a job tied to no cluster gets the submitting shell's
    limits (Slurm propagates them), so 512 is its limit: an error."""
    repo = make_repo(tmp_path, script="#SBATCH --time=1:00:00" + ("\n" + tie if tie else ""))
    code, res, _ = run_in_shell("ulimit -n 512", repo, "--sbatch", "job.sbatch")
    assert res["status"] == "fail" and res["severity"] == severity, res
    assert code == (1 if severity == "error" else 0)
    (f,) = res["findings"]
    assert f["data"]["hard"] == 512 and f["data"]["max_workers"] == 2
    if severity == "warning":
        assert f["message"].startswith("this machine's hard open-file limit 512")
        assert f"job.sbatch:5 ({tie})" in f["message"], f["message"]
        assert "that cluster's limit is not known here" in f["message"]
        assert "edits" not in f
    else:
        assert "other_cluster" not in f["data"] and "this machine" not in f["message"]


def test_each_job_is_judged_by_the_loaders_its_own_code_runs(tmp_path):
    """Two jobs of one repo, no config: one.py's DataLoader has 8 workers, zero.py's none.
    Under a hard limit of 512 only one.sbatch runs out of descriptors; zero.sbatch's code
    passes no descriptor between processes and is not judged by one.py's loader (every
    job script got the repo's largest loader)."""
    head = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n#SBATCH --time=1:00\n"
    files = {"one.sbatch": head + "srun python one.py\n",
             "zero.sbatch": head + "srun python zero.py\n",
             "one.py": "from torch.utils.data import DataLoader\n"
                       "loader = DataLoader(range(10), batch_size=2, num_workers=8)\n",
             "zero.py": "from torch.utils.data import DataLoader\n"
                        "loader = DataLoader(range(10), batch_size=2, num_workers=0)\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, res, _ = run_in_shell("ulimit -n 512", tmp_path, "--sbatch", "one.sbatch",
                                "--sbatch", "zero.sbatch")
    assert res["status"] == "fail" and code == 1, res
    assert [f["data"]["script"] for f in res["findings"]] == ["one.sbatch"], res["findings"]
    assert res["findings"][0]["location"] == {"path": "one.py", "line": 2}
