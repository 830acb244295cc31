"""`doctor diff OLD NEW` (issue 15, item 4): two real reports of real runs, compared
through the real CLI; a job log's report block read like a JSON report."""
from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest

from conftest import ROOT, run_doctor, run_main, validate_report
from doctor.logblock import as_json_block

OLD_SECRET, NEW_SECRET = "hf_oldSecretValue4d9a8e7f6c5b", "hf_newSecretValue1a2b3c4d5e6f"
ADDED_SECRET = "sk_addedSecretValue9z8y7x6w5v"


def job_script(debug: str, secret: str, extra: str = "") -> str:
    return ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n"
            f"export NCCL_DEBUG={debug}\nexport HF_TOKEN={secret}\n{extra}"
            "srun python train.py\n")


def report(repo, out, env=None) -> dict:
    proc = run_doctor("run", "--repo", str(repo), "--no-smoke", "--only", "nccl-env-deprecated",
                      "--json", str(out), env=env)
    assert proc.returncode in (0, 1), proc.stderr
    return validate_report(json.loads(out.read_text()))


@pytest.fixture(scope="module")
def two_reports(tmp_path_factory):
    """Made once for the module. OLD: NCCL_DEBUG=INFO, nothing fails. NEW:
    NCCL_DEBUG=WARN, the deprecated NCCL_ASYNC_ERROR_HANDLING set (nccl-env-deprecated
    fails, a warning), the secret HF_TOKEN changed and a secret API_TOKEN added."""
    tmp_path = tmp_path_factory.mktemp("two-reports")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text("print('train')\n")
    script = repo / "job.sbatch"
    script.write_text(job_script("INFO", OLD_SECRET))
    old = report(repo, tmp_path / "old.json")
    script.write_text(job_script("WARN", NEW_SECRET, "export NCCL_ASYNC_ERROR_HANDLING=1\n"
                                 f"export API_TOKEN={ADDED_SECRET}\n"))
    new = report(repo, tmp_path / "new.json")
    assert old["summary"]["status"] == "pass" and new["summary"]["status"] == "warn"
    return tmp_path / "old.json", tmp_path / "new.json"


def diff(*args: str) -> subprocess.CompletedProcess:
    return run_doctor("diff", *map(str, args))


def test_a_new_failure_names_the_check_finding_and_variable_and_exits_1(two_reports):
    old, new = two_reports
    proc = diff(old, new, "--fail-on", "warning")
    assert proc.returncode == 1, proc.stderr
    out = proc.stdout
    assert "started failing: nccl-env-deprecated (warning)" in out
    assert "+ nccl-env-deprecated: job.sbatch:6: NCCL_ASYNC_ERROR_HANDLING is deprecated" in out
    assert "environment  script_env job.sbatch NCCL_DEBUG: INFO -> WARN" in out
    assert "environment  script_env job.sbatch NCCL_ASYNC_ERROR_HANDLING: (absent) -> 1" in out
    assert out.rstrip().endswith("1 check newly fails at or above warning: "
                                 "nccl-env-deprecated (exit 1)")
    # below the default --fail-on error, the same change is listed but does not fail
    proc = diff(old, new)
    assert proc.returncode == 0 and "started failing: nccl-env-deprecated" in proc.stdout
    assert "no check newly fails at or above error (exit 0)" in proc.stdout


def test_the_swapped_order_is_started_passing_and_exit_0(two_reports):
    old, new = two_reports
    proc = diff(new, old, "--fail-on", "warning")
    assert proc.returncode == 0, proc.stderr
    assert "started passing: nccl-env-deprecated" in proc.stdout
    assert "- nccl-env-deprecated: job.sbatch:6: NCCL_ASYNC_ERROR_HANDLING" in proc.stdout
    assert "script_env job.sbatch NCCL_DEBUG: WARN -> INFO" in proc.stdout


def test_the_json_shape(two_reports):
    old, new = two_reports
    proc = diff(old, new, "--format", "json", "--fail-on", "warning")
    assert proc.returncode == 1
    d = json.loads(proc.stdout)
    assert set(d) == {"diff_version", "old", "new", "fail_on", "checks", "findings", "facts",
                      "newly_failing", "exit_code"}
    assert d["diff_version"] == 1 and d["exit_code"] == 1 and d["fail_on"] == "warning"
    assert d["newly_failing"] == ["nccl-env-deprecated"]
    assert d["old"]["report"] == str(old) and d["old"]["status"] == "pass"
    assert d["checks"] == [{"id": "nccl-env-deprecated", "change": "started-failing",
                            "old": {"status": "pass", "severity": "warning"},
                            "new": {"status": "fail", "severity": "warning"},
                            "newly_fails": True}]
    [f] = d["findings"]["new"]
    assert f["check"] == "nccl-env-deprecated" and f["location"]["path"] == "job.sbatch"
    assert d["findings"]["gone"] == []
    change = next(c for c in d["facts"] if c["path"][-1] == "NCCL_DEBUG")
    assert change == {"rank": 1, "area": "environment", "node": None,
                      "path": ["script_env", "job.sbatch", "NCCL_DEBUG"],
                      "change": "changed", "old": "INFO", "new": "WARN"}
    ranks = [c["rank"] for c in d["facts"]]
    assert ranks == sorted(ranks)


def test_secrets_stay_masked_in_every_format(two_reports):
    old, new = two_reports
    for fmt in ("table", "json", "markdown"):
        out = diff(old, new, "--format", fmt).stdout
        for secret in (OLD_SECRET, NEW_SECRET, ADDED_SECRET):
            assert secret not in out, (fmt, secret)
    out = diff(old, new).stdout
    # an added secret shows masked; a changed one is *** in both reports, so no change
    assert "script_env job.sbatch API_TOKEN: (absent) -> ***" in out
    assert "HF_TOKEN" not in out


def test_a_secret_value_left_in_an_old_report_is_masked_by_diff(two_reports, tmp_path):
    """A report from elsewhere (an older doctor, a hand edit) holding a secret in clear."""
    old, new = two_reports
    doc = json.loads(old.read_text())
    doc["facts"]["script_env"]["job.sbatch"]["HF_TOKEN"] = OLD_SECRET
    leaky = tmp_path / "leaky.json"
    leaky.write_text(json.dumps(doc))
    for fmt in ("table", "json", "markdown"):
        assert OLD_SECRET not in diff(leaky, new, "--format", fmt).stdout


def test_a_package_version_change_is_shown(tmp_path):
    """A real dist-info on PYTHONPATH: version 1.0, then 2.0."""
    repo = tmp_path / "repo"
    repo.mkdir()
    docs = []
    for version in ("1.0", "2.0"):
        info = tmp_path / f"site{version}" / f"fakepkg-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: FakePkg\n"
                                       f"Version: {version}\n")
        docs.append(report(repo, tmp_path / f"{version}.json",
                           env={"PYTHONPATH": str(info.parent)}))
    assert "fakepkg==1.0" in docs[0]["facts"]["packages"]
    proc = diff(tmp_path / "1.0.json", tmp_path / "2.0.json")
    assert proc.returncode == 0, proc.stderr
    assert "packages     packages fakepkg: 1.0 -> 2.0" in proc.stdout
    assert "env PYTHONPATH:" in proc.stdout


def test_static_runs_carry_no_package_fact(tmp_path):
    """--static stays what it was (the CI gate): no packages, no environment facts."""
    proc = run_doctor("run", "--repo", str(tmp_path), "--static", "--format", "json")
    facts = json.loads(proc.stdout)["facts"]
    assert not {"packages", "env", "script_env"} & set(facts)


def test_ranked_versions_then_environment_then_packages_then_the_rest(two_reports, tmp_path):
    old, _ = two_reports
    doc = json.loads(old.read_text())
    doc["facts"].update({"limits": {"nofile": [1024, 4096]}, "torch_installed": "2.4.0"})
    before = tmp_path / "before.json"
    before.write_text(json.dumps(doc))
    doc["facts"]["limits"]["nofile"] = [65536, 65536]
    doc["facts"]["torch_installed"] = "2.5.1"
    doc["facts"]["packages"] = [p.replace("click==", "click==0.") for p in
                                doc["facts"]["packages"]]
    doc["facts"]["env"]["NCCL_SOCKET_IFNAME"] = "hsn0"
    doc["facts"]["a_fact_added_later"] = {"answer": 42}  # compared with no code change
    after = tmp_path / "after.json"
    after.write_text(json.dumps(doc))
    lines = diff(before, after).stdout.splitlines()
    at = [next(i for i, line in enumerate(lines) if want in line) for want in (
        "versions     torch_installed: 2.4.0 -> 2.5.1",
        "environment  env NCCL_SOCKET_IFNAME: (absent) -> hsn0",
        "packages     packages click: ",
        "other        a_fact_added_later answer: (absent) -> 42",
        "other        limits nofile: [1024, 4096] -> [65536, 65536]")]
    assert at[:3] == sorted(at[:3]) and at[2] < min(at[3:]), lines


def test_job_logs_are_read_by_their_last_report_block(two_reports, tmp_path):
    old, new = two_reports
    log_old, log_new = tmp_path / "old.log", tmp_path / "new.log"
    log_old.write_text("# doctor: job 1 ...\n" + as_json_block(old.read_text())
                       + "epoch 1 loss 0.3\n")
    # two blocks (a requeued job): the last wins; a block cut short is ignored
    log_new.write_text(as_json_block(old.read_text()) + "step 1\n"
                       + as_json_block(new.read_text()) + "step 2\n"
                       + as_json_block(old.read_text()).rsplit("\n", 3)[0] + "\ncrash\n")
    proc = diff(log_old, log_new, "--fail-on", "warning")
    assert proc.returncode == 1, proc.stderr
    assert "started failing: nccl-env-deprecated" in proc.stdout


def test_two_same_reports_change_nothing(two_reports):
    old, _ = two_reports
    proc = diff(old, old)
    assert (proc.returncode, proc.stdout.splitlines()[-1]) == (0, "nothing changed (exit 0)")


@pytest.mark.parametrize("make,says", [
    (lambda p: None, "cannot read {p}: No such file or directory"),
    (lambda p: p.write_text("epoch 1\nepoch 2\n"), "{p} holds no doctor report"),
    (lambda p: p.write_text('{"a": 1}'), "{p} is not a doctor report"),
    (lambda p: p.write_text('{"schema_version": 1, "results": '), "{p} is not valid JSON"),
    (lambda p: p.write_text('{"schema_version": 2, "results": []}'),
     "{p} is a report of schema_version 2"),
    (lambda p: p.write_text('{"schema_version": 1, "results": [{"id": 3}], "summary": {}}'),
     "{p} is not a valid doctor report"),
    (lambda p: p.write_text("# ---- doctor report (json) ----\n# {\n"),
     "{p} holds no doctor report"),
    (lambda p: p.mkdir(), "cannot read {p}: Is a directory"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, two_reports, tmp_path, make, says):
    old, _ = two_reports
    bad = tmp_path / "bad.json"
    make(bad)
    for args in ((str(old), str(bad)), (str(bad), str(old))):
        proc = run_main(capsys, "diff", *args)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.startswith("doctor: error: " + says.format(p=bad))
        assert proc.stderr.count("\n") == 1, proc.stderr


# ---- gathered reports on the local two-node Slurm -----------------------------------

@pytest.mark.slurm
def test_gathered_runs_name_the_node_of_each_change(slurm_cluster, tmp_path):
    """Issue 15's proof: a variable changed on n2, a package version faked on n1."""
    repo = tmp_path / "repo"
    repo.mkdir()
    for version in ("1.0", "2.0"):
        info = tmp_path / f"site{version}" / f"fakepkg-{version}.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: fakepkg\n"
                                       f"Version: {version}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM", "DOCTOR_"))}

    def gathered(out: str, n2_debug: str, n1_site: str) -> None:
        doctor = " ".join(shlex.quote(a) for a in [
            sys.executable, "-m", "doctor", "run", "--repo", str(repo), "--no-smoke",
            "--only", "nccl-env-deprecated,node-skew", "--gather", "--format", "json",
            "--json", str(tmp_path / out)])
        script = (f'export NCCL_DEBUG=INFO; if [ "$SLURMD_NODENAME" = n2 ]; then '
                  f'export NCCL_DEBUG={n2_debug}; else export PYTHONPATH={n1_site}; fi; '
                  f'exec {doctor}')
        proc = subprocess.run(["srun", "-N2", "-n2", "--ntasks-per-node=1", f"--chdir={ROOT}",
                               "bash", "-c", script], env=env, capture_output=True,
                              text=True, timeout=150)
        assert proc.returncode == 0, proc.stderr
        doc = validate_report(json.loads((tmp_path / out).read_text()))
        assert [n["slurm_node"] for n in doc["nodes"]] == ["n1", "n2"]

    gathered("a.json", "INFO", str(tmp_path / "site1.0"))
    gathered("b.json", "WARN", str(tmp_path / "site2.0"))
    proc = diff(tmp_path / "a.json", tmp_path / "b.json")
    assert proc.returncode == 0, proc.stderr
    assert "environment  n2: env NCCL_DEBUG: INFO -> WARN" in proc.stdout
    assert "packages     n1: packages fakepkg: 1.0 -> 2.0" in proc.stdout
    assert "n1: env NCCL_DEBUG" not in proc.stdout and "n2: packages" not in proc.stdout
    d = json.loads(diff(tmp_path / "a.json", tmp_path / "b.json", "--format", "json").stdout)
    assert {(c["node"], c["path"][-1]) for c in d["facts"] if c["area"] != "other"} == \
        {("n1", "PYTHONPATH"), ("n2", "NCCL_DEBUG"), ("n1", "fakepkg")}
