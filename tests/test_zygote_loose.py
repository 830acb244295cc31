"""The zygote review's loose ends (doctor/smoke/zygote.py, launcher.py): signals go to the
exact process, a zygote's start blocks no caller that does not want it, and what torch's
import prints reaches every forked child as it would reach `python -m`'s output."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from doctor.smoke import zygote
from doctor.smoke.launcher import Launcher, SmokePlan

pytest.importorskip("torch")
ROOT = str(Path(zygote.__file__).parents[2])


def fake_torch(where: Path, init: str) -> Path:
    """A torch package with the modules the zygote imports; `init` is its __init__."""
    pkg = where / "torch"
    for sub in ("", "distributed", "nn"):
        (pkg / sub).mkdir(parents=True, exist_ok=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text(init)
    return where


def env_with(path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCTOR_", "PYTEST"))}
    env.update(PYTHONPATH=os.pathsep.join([str(path), ROOT]), PYTHONDONTWRITEBYTECODE="1",
               OMP_NUM_THREADS="1")
    return env


class ReapedChild:
    """A zygote.Child as the launcher may see it in a race: it looked alive, then the zygote
    reaped its reaper and the pid went to another process. Its pidfd is the old process's:
    send_signal reaches nothing (Child.send_signal once the pidfd is closed)."""

    def __init__(self, pid: int):
        self.pid, self.returncode, self.signals = pid, None, []

    def poll(self):
        return None

    def send_signal(self, sig):
        self.signals.append(sig)

    def wait(self, timeout=None):
        return 0


def test_stop_signals_the_childs_pidfd_never_a_reused_pid(tmp_path):
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        launcher = Launcher(SmokePlan(repo=tmp_path), port=1)
        launcher.dir = tmp_path
        launcher.procs = [ReapedChild(other.pid)]   # the pid now belongs to `other`
        launcher.stop([0], "deadline")
        assert launcher.procs[0].signals == [signal.SIGUSR1, signal.SIGTERM]
        time.sleep(0.2)
        assert other.poll() is None, "a signal meant for the rank's reaper hit another process"
    finally:
        other.kill()
        other.wait()


def test_a_start_blocks_no_caller_for_another_environment_and_close(tmp_path):
    """A zygote whose torch import takes 3 s: a child of another environment starts as
    before at once (it waited the 3 s for the lock), close() returns at once and the
    zygote it overlapped ends when its start does (it was left running)."""
    pidfile = tmp_path / "pid"
    slow = fake_torch(tmp_path / "slow", f"import os, time\nopen({str(pidfile)!r}, 'w')"
                                         ".write(str(os.getpid()))\ntime.sleep(3)\n")
    got: dict = {}
    t = threading.Thread(target=lambda: got.setdefault("z", zygote.zygote_for(
        sys.executable, str(tmp_path), env_with(slow), time.time() + 60)))
    t.start()
    try:
        for _ in range(100):
            if pidfile.exists():
                break
            time.sleep(0.05)
        start = time.monotonic()
        other = zygote.zygote_for(sys.executable, str(tmp_path), env_with(tmp_path / "none"),
                                  time.time() + 60)
        assert other is None and time.monotonic() - start < 1.0
        start = time.monotonic()
        zygote.close()
        assert time.monotonic() - start < 1.0
    finally:
        t.join(30)
    assert got["z"] is None and zygote._current is None
    with pytest.raises(ProcessLookupError):
        os.kill(int(pidfile.read_text()), 0)


def test_a_caller_waiting_on_a_start_that_close_overlapped_starts_no_zygote(tmp_path):
    """Two callers want the same zygote; the second waits for the first's 2 s start.
    close() ends the run meanwhile: the first's zygote ends when its start does, and the
    waiting caller starts no new one (nobody would close it before the process exits)."""
    pidfile = tmp_path / "pids"
    slow = fake_torch(tmp_path / "slow", f"import os, time\nopen({str(pidfile)!r}, 'a')"
                                         ".write(str(os.getpid()) + '\\n')\ntime.sleep(2)\n")
    got: dict = {}

    def want(name: str) -> None:
        got[name] = zygote.zygote_for(sys.executable, str(tmp_path), env_with(slow),
                                      time.time() + 60)

    first = threading.Thread(target=want, args=("first",))
    first.start()
    for _ in range(100):
        if pidfile.exists():
            break
        time.sleep(0.05)
    second = threading.Thread(target=want, args=("second",))
    second.start()
    time.sleep(0.3)   # the second caller waits on the first's start
    zygote.close()
    first.join(30)
    second.join(30)
    try:
        assert got == {"first": None, "second": None}, got
        assert zygote._current is None
    finally:
        zygote.close()
    for pid in pidfile.read_text().split():
        with pytest.raises(ProcessLookupError):
            os.kill(int(pid), 0)


def test_what_torchs_import_prints_reaches_every_forked_child(tmp_path):
    path = fake_torch(tmp_path / "lib", "import warnings\nprint('torch says hello')\n"
                                        "warnings.warn('NumPy 2 is not supported')\n")
    (path / "zyg_hello.py").write_text("import sys\nimport torch  # noqa\n"
                                       "print('the child ran', file=sys.stderr)\n")
    env = env_with(path)
    direct = subprocess.run([sys.executable, "-m", "zyg_hello"], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert "NumPy 2 is not supported" in direct.stderr   # what `python -m` shows
    for i in range(2):   # each child, not only the first
        run = tmp_path / f"run{i}"
        run.mkdir()
        res = zygote.run_module(sys.executable, "zyg_hello", [], cwd=str(tmp_path), env=env,
                                timeout=60, tmp=str(run))
        assert res is not None, "not forked by the zygote"
        assert res.returncode == 0 and res.stdout == direct.stdout == "torch says hello\n"
        assert res.stderr == direct.stderr
