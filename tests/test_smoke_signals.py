"""A signal during the ddp-smoke ends everything the smoke started (issue 16, cause 5).

SIGINT, SIGTERM (scancel, a time limit, a CI timeout), SIGHUP and a double Ctrl-C
arrive while both ranks sit in a model factory that has started a helper in a
session of its own (`setsid`, as Ray and dataset servers do) and written a temp
file. Once the doctor has exited: exit 128 + the signal, one line on stderr, no
process carrying this test's marker, nothing in the doctor's private TMPDIR. And
when the doctor is SIGKILLed, nothing is left shortly after.

DOCTOR_SIGNAL_RUNS (default 1) repeats each signal; the issue's acceptance is 20.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from conftest import ROOT

RUNS = int(os.environ.get("DOCTOR_SIGNAL_RUNS", "1"))

FACTORY = '''
import os, subprocess, sys, time
from pathlib import Path

def build():
    """Start a helper in its own session, fill TMPDIR a little, say so, then never return."""
    subprocess.Popen(["setsid", sys.executable, "-c", "import time; time.sleep(600)"],
                     env={"DOCTOR_TEST_MARKER": os.environ["DOCTOR_TEST_MARKER"],
                          "PATH": os.environ["PATH"]},
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    Path(os.environ["TMPDIR"], "chatty.bin").write_bytes(bytes(1 << 20))
    Path(os.environ["DOCTOR_TEST_STARTED"], os.environ["RANK"]).touch()
    time.sleep(600)
'''

SIGNALS = {
    "SIGINT": [signal.SIGINT],
    "SIGTERM": [signal.SIGTERM],
    "SIGHUP": [signal.SIGHUP],
    "double Ctrl-C": [signal.SIGINT, signal.SIGINT],  # the second 5 to 20 ms after the first
}


def marked_pids(marker: str) -> list:
    """Live processes whose environment holds DOCTOR_TEST_MARKER=marker."""
    want = f"DOCTOR_TEST_MARKER={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if want in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
            except OSError:
                pass  # gone, or not ours to read
    return found


def default_signals() -> None:
    """A test run from a background shell or under nohup must still deliver the signals."""
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def start_smoke(tmp_path: Path) -> tuple:
    """The doctor running the smoke, once both ranks are in the factory: (the doctor's
    Popen, this run's marker, the doctor's TMPDIR)."""
    repo, tmp, started = tmp_path / "repo", tmp_path / "tmp", tmp_path / "started"
    for d in (tmp, started):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
    marker = uuid.uuid4().hex
    env = {k: v for k, v in os.environ.items() if k != "SLURM_JOB_ID"}
    env.update(TMPDIR=str(tmp), DOCTOR_TEST_MARKER=marker, DOCTOR_TEST_STARTED=str(started))
    proc = subprocess.Popen([sys.executable, "-m", "doctor", "run", "--repo", str(repo),
                             "--only", "ddp-smoke", "--model", "helperfactory:build"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=default_signals)
    end = time.monotonic() + 120
    while len(list(started.iterdir())) < 2:
        if proc.poll() is not None or time.monotonic() > end:
            end_all(proc, marker)
            pytest.fail(f"the ranks never reached the factory: {proc.communicate()[1]}")
        time.sleep(0.01)
    return proc, marker, tmp


def end_all(proc: subprocess.Popen, marker: str) -> None:
    """Whatever a failing run left: the doctor, and the processes with this run's marker."""
    if proc.poll() is None:
        proc.kill()
    proc.communicate()
    for pid in marked_pids(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def smoke_repo(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    if not shutil.which("setsid") or not Path("/proc/self/environ").exists():
        pytest.skip("needs setsid and /proc")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "helperfactory.py").write_text(FACTORY)
    (repo / "doctor.yaml").write_text("smoke: {timeout_s: 120}\n")


@pytest.mark.parametrize("name", SIGNALS)
def test_a_signal_during_the_smoke_ends_everything_it_started(name, tmp_path):
    smoke_repo(tmp_path)
    signals = SIGNALS[name]
    for run in range(RUNS):
        proc, marker, tmp = start_smoke(tmp_path)
        try:
            proc.send_signal(signals[0])
            for sig in signals[1:]:
                time.sleep(0.005 * (1 + run % 4))
                proc.send_signal(sig)
            _, err = proc.communicate(timeout=60)
            procs, files = marked_pids(marker), sorted(tmp.rglob("*"))
        finally:
            end_all(proc, marker)
        where = f"run {run + 1} of {RUNS}"
        assert proc.returncode == 128 + signals[0], f"{where}: exit {proc.returncode}: {err!r}"
        assert [line for line in err.splitlines() if line.strip()] == ["doctor: interrupted"], \
            f"{where}: {err!r}"
        assert procs == [], f"{where}: processes left behind: {procs}"
        assert files == [], f"{where}: temp files left behind: {files}"


def test_a_killed_doctor_leaves_nothing_behind_either(tmp_path):
    """SIGKILL (the OOM killer, scancel after KillWait) cannot be handled: the ranks'
    reapers see the doctor die, end everything and remove the run dir themselves."""
    smoke_repo(tmp_path)
    proc, marker, tmp = start_smoke(tmp_path)
    try:
        proc.kill()
        proc.wait()
        end = time.monotonic() + 15
        while (marked_pids(marker) or any(tmp.iterdir())) and time.monotonic() < end:
            time.sleep(0.05)
        procs, files = marked_pids(marker), sorted(tmp.rglob("*"))
    finally:
        end_all(proc, marker)
    assert procs == [], f"processes left behind: {procs}"
    assert files == [], f"temp files left behind: {files}"
