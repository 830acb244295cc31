"""The engine through the real CLI: exit codes, timeouts, crashes, settings, waivers,
secrets, discovery of third-party check packs (entry point group `doctor.checks`)."""
from __future__ import annotations

import datetime as dt
import json
import sys
import time
from pathlib import Path

import pytest

from conftest import PACK, ROOT, make_pack, result_of, run_doctor, run_json

def doctor(pack, *args, **kw):
    env, repo = pack
    return run_doctor(*args, env={**env, **kw.pop("env", {})}, **kw)


def test_exit_0_when_nothing_fails(pack):
    env, repo = pack
    code, doc = run_json("--repo", str(repo), "--only", "test-pass,test-skip", env=env)
    assert code == 0
    assert doc["summary"] == {"status": "pass", "exit_code": 0,
                              "counts": {"pass": 1, "fail": 0, "warning": 0, "skip": 1,
                                         "error": 0}}
    assert result_of(doc, "test-skip")["reason"] == "not applicable here"


def test_exit_1_on_failure_with_location_fix_and_commands(pack):
    env, repo = pack
    code, doc = run_json("--repo", str(repo), "--only", "test-fail,test-pass", env=env)
    assert code == 1
    (finding,) = result_of(doc, "test-fail")["findings"]
    assert finding == {"message": "failed with limit 3",
                       "location": {"path": "configs/x.yaml", "line": 4},
                       "fix": "Do the thing.", "commands": ["echo fix"], "data": {"limit": 3},
                       "severity": "error"}
    table = doctor(pack, "run", "--repo", str(repo), "--only", "test-fail")
    assert table.returncode == 1
    assert "configs/x.yaml:4: error[test-fail] failed with limit 3" in table.stdout
    assert "$ echo fix" in table.stdout and "\033[" not in table.stdout


def test_time_in_shared_work_is_not_charged_to_a_checks_deadline(pack):
    """The deadline is for hangs: a check that waits 2.5 s for an input the job reads once
    for every check (job.memo) passes within its 1 s deadline, while test-hang, whose own
    work hangs, still times out after 1 s."""
    env, repo = pack
    code, doc = run_json("--repo", str(repo), "--only", "test-slow-shared,test-hang", env=env)
    assert result_of(doc, "test-slow-shared")["status"] == "pass"
    assert result_of(doc, "test-hang")["reason"] == "timed out after 1s"
    assert code == 3


def test_hang_and_crash_become_errors_and_the_run_finishes(pack):
    env, repo = pack
    t0 = time.monotonic()
    code, doc = run_json("--repo", str(repo), "--only", "test-hang,test-crash,test-pass",
                         env=env)
    assert time.monotonic() - t0 < 15
    assert code == 3
    assert doc["summary"]["status"] == "error"
    hang, crash = result_of(doc, "test-hang"), result_of(doc, "test-crash")
    assert hang["status"] == "error" and hang["reason"] == "timed out after 1s"
    assert crash["status"] == "error" and crash["reason"].startswith("RuntimeError: boom")
    assert result_of(doc, "test-pass")["status"] == "pass"


def test_failure_outranks_error_and_fail_on_warning(pack):
    env, repo = pack
    code, doc = run_json("--repo", str(repo), "--only", "test-fail,test-crash", env=env)
    assert code == 1 and doc["summary"]["status"] == "fail"
    code, doc = run_json("--repo", str(repo), "--only", "test-warn", env=env)
    assert code == 0 and doc["summary"]["status"] == "warn"
    code, doc = run_json("--repo", str(repo), "--only", "test-warn", "--fail-on", "warning",
                         env=env)
    assert code == 1 and doc["summary"]["status"] == "fail"
    # --fail-on makes the warning fail the run; it is still counted as what it is
    assert doc["summary"]["counts"]["warning"] == 1 and doc["summary"]["counts"]["fail"] == 0
    code, doc = run_json("--repo", str(repo), "--only", "test-fail", "--exit-zero", env=env)
    assert code == 0 and doc["summary"]["exit_code"] == 1


def test_selection_by_id_tag_and_skip(pack):
    env, repo = pack
    _, doc = run_json("--repo", str(repo), "--only", "testfail,test-pass", "--skip", "test-pass",
                      env=env)
    assert [r["id"] for r in doc["results"]] == ["test-fail"]
    _, doc = run_json("--repo", str(repo), "--only", "test-hang,test-pass", "--static", env=env)
    assert [r["id"] for r in doc["results"]] == ["test-pass"]  # test-hang needs a node


def test_settings_severity_options_and_waivers(pack, tmp_path):
    env, repo = pack
    today = dt.date.today()
    (repo / "doctor.yaml").write_text(f"""
select: [test-fail, test-warn, test-pass]
ignore: [test-pass]
severity: {{test-fail: warning}}
options: {{test-fail: {{limit: 7}}}}
waivers:
  - check: test-warn
    reason: "tracked in OPS-1"
    expires: {today + dt.timedelta(days=30)}
  - check: test-fail
    reason: "old"
    expires: {today - dt.timedelta(days=1)}
""")
    code, doc = run_json("--repo", str(repo), env=env)
    ids = [r["id"] for r in doc["results"]]
    assert ids == ["test-fail", "test-warn", "waiver-expired"]
    fail = result_of(doc, "test-fail")
    assert fail["severity"] == "warning" and fail["findings"][0]["data"] == {"limit": 7}
    warn = result_of(doc, "test-warn")
    assert warn["status"] == "skip" and warn["reason"].startswith("waived: tracked in OPS-1")
    expired = result_of(doc, "waiver-expired")
    assert expired["status"] == "fail" and expired["severity"] == "warning"
    assert "expired" in expired["findings"][0]["message"]
    assert code == 0  # only warnings failed
    # a warning is counted as a warning, not as a failure (issue 28)
    assert doc["summary"]["status"] == "warn"
    assert doc["summary"]["counts"] == {"pass": 0, "fail": 0, "warning": 2, "skip": 1,
                                        "error": 0}
    assert doc["inputs"]["settings"].endswith("doctor.yaml")


def test_settings_from_pyproject(pack):
    env, repo = pack
    (repo / "pyproject.toml").write_text('[tool.doctor]\nselect = ["test-fail"]\n'
                                         '[tool.doctor.options.test-fail]\nlimit = 9\n')
    code, doc = run_json("--repo", str(repo), env=env)
    assert [r["id"] for r in doc["results"]] == ["test-fail"]
    assert doc["results"][0]["findings"][0]["data"] == {"limit": 9}


BAD_SETTINGS = [
    ("colour: blue\n", "unknown settings key 'colour'"),
    ("site: {shared: [/x]}\n", "unknown settings key 'site.shared'"),
    ("severity: {no-such-check: warning}\n", "unknown check id 'no-such-check'"),
    ("severity: {test-fail: fatal}\n", "unknown severity 'fatal'"),
    ("options: {test-fail: {limt: 3}}\n", "unknown option 'limt'"),
    ("options: {test-fail: {limit: many}}\n", "options.test-fail.limit must be int"),
    ("waivers: [{check: test-fail, expires: 2030-01-01}]\n", "needs 'reason'"),
    ("waivers: [{check: test-fail, reason: x, expires: someday}]\n", "is not a date"),
    ("select: [nope]\n", "unknown check id or tag 'nope'"),
    ("select: all\n", "select must be a list"),
]


@pytest.mark.parametrize("text,message", BAD_SETTINGS)
def test_bad_settings_exit_2_with_one_line(pack, text, message):
    env, repo = pack
    (repo / "doctor.yaml").write_text(text)
    proc = doctor(pack, "run", "--repo", str(repo))
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


def bad_inputs(repo: Path) -> list:
    (repo / "bad.yaml").write_text("a: [1, 2\n")
    (repo / "tabs.yaml").write_text("a:\n\tb: 1\n")
    (repo / "bin.yaml").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(64))
    (repo / "latin1.yaml").write_bytes(b"a: caf\xe9\n")
    return [
        (["--config", str(repo / "missing.yaml")], "config file not found"),
        (["--config", str(repo / "bad.yaml")], "bad.yaml:2: invalid YAML"),
        (["--config", str(repo / "tabs.yaml")], "tab character"),
        (["--config", str(repo / "bin.yaml")], "binary file, not a config file"),
        (["--config", str(repo / "latin1.yaml")], "not UTF-8"),
        (["--config", str(repo)], "is a directory"),
        (["--sbatch", str(repo / "nope.sbatch")], "sbatch script not found"),
        (["--only", "no-such-check"], "unknown check id or tag 'no-such-check'"),
        (["--settings", str(repo / "nope.yaml")], "settings file not found"),
        (["--format", "xml"], "'xml' is not one of"),
        (["--bogus-flag"], "No such option"),
    ]


def test_bad_input_exit_2_never_a_traceback(pack):
    env, repo = pack
    for args, message in bad_inputs(repo):
        proc = doctor(pack, "run", "--repo", str(repo), *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and not proc.stdout
    for args, message in [(["run", "--repo", str(repo / "nowhere")], "does not exist"),
                          (["explain", "nope"], "unknown check id 'nope'"),
                          (["frobnicate"], "No such command")]:
        proc = doctor(pack, *args)
        assert proc.returncode == 2 and message in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1


def test_secrets_never_appear_in_any_format(pack, tmp_path):
    env, repo = pack
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH -N 1\n"
                                     "export HF_TOKEN=hf_supersecretvalue\n"
                                     "export DB_PASSWORD='pa55word!'\nexport PLAIN=visible\n")
    login = {**env, "WANDB_API_KEY": "wandb-key-123456", "MY_SECRET_THING": "s3cr3t-login"}
    from doctor.report import FORMATS

    for fmt in FORMATS:
        out = tmp_path / f"out.{fmt}"
        proc = doctor(pack, "run", "--repo", str(repo), "--only", "test-secret",
                      "--format", fmt, "--output", str(out), "--json", str(tmp_path / "r.json"),
                      env=login)
        assert proc.returncode == 1, proc.stderr
        for text in (out.read_text(), (tmp_path / "r.json").read_text(), proc.stdout,
                     proc.stderr):
            for secret in ("hf_supersecretvalue", "pa55word!", "wandb-key-123456",
                           "s3cr3t-login"):
                assert secret not in text, (fmt, secret)
        assert "visible" in out.read_text() and "***" in out.read_text()


def test_json_file_with_slurm_patterns(pack, tmp_path):
    env, repo = pack
    proc = doctor(pack, "run", "--repo", str(repo), "--only", "test-pass",
                  "--json", str(tmp_path / "logs" / "doctor-%j-%N.json"),
                  env={"SLURM_JOB_ID": "4242", "SLURMD_NODENAME": "nid001"})
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "logs" / "doctor-4242-nid001.json").read_text())
    assert doc["host"]["slurm_job_id"] == "4242" and doc["host"]["slurm_node"] == "nid001"


def test_broken_check_packs_are_loud(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    site = tmp_path / "dup"
    make_pack(site, "duppack", PACK.read_text())
    make_pack(site, "duppack2", PACK.read_text().replace("def test_pass(", "def other_pass("))
    proc = run_doctor("run", "--repo", str(repo), env={"PYTHONPATH": str(site)})
    assert proc.returncode == 2 and "duplicate check id 'test-pass'" in proc.stderr
    site = tmp_path / "broken"
    make_pack(site, "brokenpack", "import no_such_module_anywhere\n")
    proc = run_doctor("list", env={"PYTHONPATH": str(site)})
    assert proc.returncode == 2
    assert "cannot load check pack brokenpack" in proc.stderr and "Traceback" not in proc.stderr


def test_list_and_explain(pack):
    proc = doctor(pack, "list", "--format", "json")
    assert proc.returncode == 0
    rows = {r["id"]: r for r in json.loads(proc.stdout)}
    assert rows["test-hang"]["static"] is False and rows["test-pass"]["static"] is True
    proc = doctor(pack, "explain", "test-fail")
    assert proc.returncode == 0
    assert "## Why it matters" in proc.stdout and "`limit`" in proc.stdout


def test_static_run_never_imports_torch(tmp_path):
    code = ("import sys, doctor.cli\n"
            "try:\n    doctor.cli.main(['run', '--static', '--repo', sys.argv[1],"
            " '--format', 'json'])\n"
            "except SystemExit:\n    pass\n"
            "bad = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))\n"
            "print('TORCH' if bad else 'CLEAN', file=sys.stderr)\n")
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", code, str(ROOT / "fixtures" / "demo")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.stderr.strip().splitlines()[-1] == "CLEAN", proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["results"], "the static run checked nothing"


def test_recorded_facts_are_facts_and_probes_run_once(tmp_path):
    from doctor.job.context import Job

    job = Job(tmp_path, env={})
    with pytest.raises(KeyError):
        job.fact("no-such-fact")
    job.record_fact("gathered_nodes", [{"slurm_node": "n1"}])
    assert job.fact("gathered_nodes") == [{"slurm_node": "n1"}]
    calls = []
    assert job.memo("k", lambda: calls.append(1) or 42) == 42
    assert job.memo("k", lambda: calls.append(1) or 43) == 42 and calls == [1]
    assert "gathered_nodes" in job.facts_gathered() and "k" not in job.facts_gathered()


def test_inputs_configs_are_those_the_job_reads_when_a_check_read_them(tmp_path):
    """A config a step names outside the usual directories is one the job reads: listed
    when a check read the job's configs; a run whose checks read none (the rsync check
    alone) lists the config files as found and composes nothing for the report."""
    (tmp_path / "jobs").mkdir()
    (tmp_path / "exp").mkdir()
    (tmp_path / "configs").mkdir()
    (tmp_path / "jobs" / "train.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=1\nsrun python train.py --config exp/special.yaml\n")
    (tmp_path / "train.py").write_text(
        "import argparse, yaml\np = argparse.ArgumentParser()\np.add_argument('--config')\n"
        "cfg = yaml.safe_load(open(p.parse_args().config))\n")
    (tmp_path / "exp" / "special.yaml").write_text("data:\n  num_workers: 2\n")
    (tmp_path / "configs" / "base.yaml").write_text("lr: 1\n")
    _, doc = run_json("--static", "--repo", str(tmp_path), "--only",
                      "dataloader-option-conflict")
    assert doc["inputs"]["configs"] == ["configs/base.yaml", "exp/special.yaml"]
    _, doc = run_json("--static", "--repo", str(tmp_path), "--only", "rsync-exclude-unanchored")
    assert doc["inputs"]["configs"] == ["configs/base.yaml"]


def test_a_run_refused_in_process_leaves_no_child_behind(capsys):
    """A full run begins git's file list before it reads its inputs (cli.begin_git); a run
    that stops first (a refused input, exit 2) kills and reaps that git: called in-process
    (doctor.cli.main), the caller is left no child, running or zombie."""
    import psutil

    from doctor.cli import main

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with pytest.raises(SystemExit) as exc:
        main(["run", "--static", "--repo", str(ROOT / "fixtures" / "demo"),
              "--config", str(ROOT / "no-such-config.yaml")])
    assert exc.value.code == 2
    assert "config file not found" in capsys.readouterr().err
    assert [p for p in psutil.Process().children(recursive=True) if p.pid not in before] == []


def test_the_walks_a_scoped_run_begins_are_reaped_when_it_ends_without_them():
    """`--changed-since` begins `git ls-files --cached`, `git diff` and `git ls-files
    --others` before the doctor imports its checks; a run that ends before it asks for
    them leaves no child."""
    import click
    import psutil

    from doctor.cli import begin_git

    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with click.Context(click.Command("run")):
        assert begin_git(ROOT, "HEAD", ())   # the merge base
        began = [p for p in psutil.Process().children(recursive=True) if p.pid not in before]
        assert len(began) == 3   # running, or exited and not yet reaped
    assert [p for p in psutil.Process().children(recursive=True) if p.pid not in before] == []


def test_a_child_begun_early_runs_to_its_end_and_leaves_no_file(tmp_path, monkeypatch):
    """git's file list is begun long before it is read (git.start_early). Its output is
    spooled to an unlinked file, not a 64 KiB pipe: the child finishes on its own time
    however much it writes, collect returns every byte, and nothing is left in TMPDIR."""
    import tempfile

    from doctor.proc import collect, start

    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    script = "import sys; sys.stdout.write('x' * 1_000_000 + '\\r\\n'); sys.stderr.write('said')"
    proc = start([sys.executable, "-c", script], spool=True)
    deadline = time.monotonic() + 10
    while proc.poll() is None and time.monotonic() < deadline:   # nobody reads it
        time.sleep(0.05)
    assert proc.returncode == 0, "the child waited on its output being read"
    res = collect(proc, timeout=10)
    assert (res.returncode, len(res.stdout), res.stdout[-2:], res.stderr) == \
        (0, 1_000_001, "x\n", "said")   # newlines as a text-mode pipe gives them
    assert list(private.iterdir()) == []


def test_a_childs_input_and_output_go_through_files_not_pipes(tmp_path, monkeypatch):
    """`git cat-file` sizing 90,000 blobs took 4.0 s beside one busy thread and 0.6 s
    alone: through pipes, every 512 bytes in and 32 KiB out wakes the collecting thread,
    which then waits for the interpreter lock. Its stdin and spooled stdout are unlinked
    files instead; every byte arrives, encoded and decoded as through a text-mode pipe,
    and TMPDIR is left empty."""
    import tempfile

    from doctor.proc import run_cmd

    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    script = ("import os, stat, sys\n"
              "kinds = [stat.S_ISREG(os.fstat(fd).st_mode) for fd in (0, 1)]\n"
              "data = sys.stdin.buffer.read()\n"
              "sys.stdout.write(f'{kinds} {len(data)} {data[-5:]!r}')")
    res = run_cmd([sys.executable, "-c", script], input="é" * 500_000 + "\n", spool=True,
                  timeout=30)
    assert (res.returncode, res.stdout) == (0, "[True, True] 1000001 b'\\xc3\\xa9\\xc3\\xa9\\n'")
    assert list(private.iterdir()) == []


def test_a_childs_input_still_arrives_when_tmpdir_cannot_hold_it(monkeypatch):
    """No room or no right in TMPDIR: the input goes through a pipe, as it used to."""
    import tempfile

    from doctor.proc import run_cmd

    monkeypatch.setattr(tempfile, "tempdir", "/nonexistent/doctor-test-tmpdir")
    res = run_cmd([sys.executable, "-c", "import sys; print(len(sys.stdin.read()))"],
                  input="x" * 200_000, spool=True, timeout=30)
    assert (res.returncode, res.stdout) == (0, "200000\n")


def test_a_childs_input_still_arrives_when_tmpdir_fills_up_as_it_is_written(monkeypatch):
    """TMPDIR gives a file but no room for the input (ENOSPC on write): the input goes
    through a pipe, and the run goes on."""
    import errno
    import io

    from doctor import proc

    class Full(io.BytesIO):
        def write(self, data):
            raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(proc, "_temporary", Full)
    res = proc.run_cmd([sys.executable, "-c", "import sys; print(len(sys.stdin.read()))"],
                       input="x" * 200_000, timeout=30)
    assert (res.returncode, res.stdout) == (0, "200000\n")


def test_a_child_begun_early_still_runs_when_tmpdir_cannot_hold_its_output(monkeypatch):
    """No room or no right in TMPDIR: the child's output comes through a pipe instead."""
    import tempfile

    from doctor.proc import collect, start

    monkeypatch.setattr(tempfile, "tempdir", "/nonexistent/doctor-test-tmpdir")
    proc = start([sys.executable, "-c", "print('listed')"], spool=True)
    assert collect(proc, timeout=30).stdout == "listed\n"
