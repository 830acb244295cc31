"""The zygote (doctor/smoke/zygote.py): one torch import forks the smokes' processes. What a
child forked from it sees must be what `python -m MODULE` sees, its end (a signal too) must
reach the doctor, a zygote that dies must end everything it forked with a clear error, and a
child it cannot serve must start as before. Real processes, real torch."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from doctor.smoke import zygote
from doctor.smoke.launcher import Launcher, SmokePlan, start_reaped

pytest.importorskip("torch")

PROBE = '''
import json, os, sys, tempfile
out = {"name": __name__, "argv": sys.argv[1:], "cwd": os.getcwd(), "path": sys.path,
       "tmp": tempfile.gettempdir(), "env": {k: os.environ.get(k) for k in
       ("ZYG_MARK", "TMPDIR", "RANK", "DOCTOR_SMOKE_PARENT")},
       "dont_write_bytecode": sys.dont_write_bytecode, "parent": os.getppid()}
open(os.environ["ZYG_OUT"], "w").write(json.dumps(out))
'''
KILL = ("import os, signal, sys, time\nos.kill(os.getpid(), getattr(signal, sys.argv[1]))\n"
        "time.sleep(5)\n")
SLEEP = ("import os, time\nopen(os.environ['ZYG_OUT'], 'w').write(str(os.getpid()))\n"
         "time.sleep(60)\n")


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    d = tmp_path_factory.mktemp("zrepo")
    (d / "zyg_probe.py").write_text(PROBE)
    (d / "zyg_kill.py").write_text(KILL)
    (d / "zyg_sleep.py").write_text(SLEEP)
    yield d
    zygote.close()


def base_env(repo: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCTOR_", "PYTEST"))}
    env.update(PYTHONPATH=os.pathsep.join([str(repo), str(Path(zygote.__file__).parents[2])]),
               PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1")
    return env


def spawn(repo: Path, module: str, env: dict, run: Path, args=()):
    z = zygote.zygote_for(sys.executable, str(repo), env, time.time() + 60)
    assert z is not None, "the zygote did not start"
    with open(run / "out", "wb") as out:
        child = z.spawn(module, list(args), cwd=str(repo), env=env, out=out.fileno(),
                        err=out.fileno(), exit_file=str(run / "exit"))
    assert child is not None
    return z, child


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] not in (b"Z", b"X")


def exit_of(run: Path) -> dict:
    return json.loads((run / "exit").read_text())


def test_a_forked_child_sees_what_python_m_sees(repo, tmp_path):
    """Environment, cwd, TMPDIR (tempfile's cached dir too), sys.path, argv and __name__ are
    the child's own: the same as a real `python -m` of the module with that environment."""
    env = base_env(repo)
    seen = {}
    for how in ("zygote", "python -m"):
        run = tmp_path / how.replace(" ", "")
        tmp = run / "tmp"
        tmp.mkdir(parents=True)
        e = dict(env, ZYG_MARK=how, TMPDIR=str(tmp), RANK="1", ZYG_OUT=str(run / "probe.json"))
        if how == "zygote":
            _, child = spawn(repo, "zyg_probe", e, run, args=["a", "b"])
            assert child.wait(30) == 0
            assert exit_of(run)["returncode"] == 0
        else:
            subprocess.run([sys.executable, "-m", "zyg_probe", "a", "b"], cwd=repo, env=e,
                           check=True, timeout=60)
        seen[how] = json.loads((run / "probe.json").read_text())
    z, p = seen["zygote"], seen["python -m"]
    assert z["env"]["ZYG_MARK"] == "zygote" and z["env"]["RANK"] == "1"
    assert z["tmp"] == z["env"]["TMPDIR"] == str(tmp_path / "zygote" / "tmp")
    assert z["env"]["DOCTOR_SMOKE_PARENT"] == str(z["parent"])   # its reaper
    for key in ("name", "argv", "cwd", "path", "dont_write_bytecode"):
        assert z[key] == p[key], key


@pytest.mark.parametrize("sig", ["SIGSEGV", "SIGTERM"])
def test_a_child_killed_by_a_signal_is_reported_as_such(repo, tmp_path, sig):
    """A native crash, and a signal the reaper itself takes (blocked in the reaper, so it
    must be unblocked in the child it forks)."""
    _, child = spawn(repo, "zyg_kill", base_env(repo), tmp_path, args=[sig])
    assert child.wait(30) == 0                       # the reaper's own exit
    assert exit_of(tmp_path)["returncode"] == -getattr(signal, sig)
    assert not child.lost


def test_the_zygote_dying_ends_its_children_with_a_clear_error(repo, tmp_path):
    """Killed mid-run: its reapers end their children, the doctor's Child says `lost`, the
    launcher raises the error (no hang), and nothing is left running."""
    run = tmp_path / "run"
    run.mkdir()
    env = dict(base_env(repo), ZYG_OUT=str(tmp_path / "pid"))
    z, child = spawn(repo, "zyg_sleep", env, run)
    end = time.time() + 30
    while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text():
        assert time.time() < end
        time.sleep(0.05)
    pid = int((tmp_path / "pid").read_text())
    os.kill(z.proc.pid, signal.SIGKILL)
    assert child.wait(20) == zygote.LOST and child.lost
    end = time.time() + 10
    while alive(pid) or alive(child.pid):
        assert time.time() < end, "the child or its reaper outlived the zygote"
        time.sleep(0.05)
    launcher = Launcher(SmokePlan(repo=repo))
    launcher.procs, launcher.dir = [child], run
    with pytest.raises(RuntimeError, match="zygote"):
        launcher.collect()
    assert not run.exists()      # the reaper removed the run dir, as when the doctor dies
    zygote.close()


def test_a_child_it_cannot_serve_starts_as_before(repo, tmp_path):
    """Another python, or another value of a variable torch reads at import, while the
    zygote serves a child: a process of its own (the reaper, a Popen)."""
    env = dict(base_env(repo), ZYG_OUT=str(tmp_path / "pid"))
    run = tmp_path / "run"
    run.mkdir()
    z, child = spawn(repo, "zyg_sleep", env, run)
    try:
        other = tmp_path / "python"
        other.symlink_to(sys.executable)
        assert zygote.zygote_for(str(other), str(repo), env, time.time() + 60) is None
        assert zygote.zygote_for(sys.executable, str(repo), dict(env, TORCH_CPP_LOG_LEVEL="INFO"),
                                 time.time() + 60) is None
        # a variable outside the families that torch's Python code reads at import
        # (torch 2.13: FX_PATCH_GETITEM, COMPILE_STROBELIGHT_*): recorded, and must match
        read = [n for n in z.reads if not n.startswith(zygote.IMPORT_TIME)
                and n not in zygote.PER_CHILD]
        assert read, z.reads
        assert zygote.zygote_for(sys.executable, str(repo),
                                 dict(env, **{read[0]: (env.get(read[0]) or "") + "x"}),
                                 time.time() + 60) is None
        assert zygote.zygote_for(sys.executable, str(repo), dict(env, SLURM_JOB_ID="7"),
                                 time.time() + 60) is z       # read later: the child's own
        z.pending -= 1
        with open(tmp_path / "out", "wb") as out:
            proc = start_reaped(str(other), "zyg_probe", cwd=str(repo),
                                env=dict(env, ZYG_OUT=str(tmp_path / "p.json")), out=out,
                                exit_file=str(tmp_path / "exit"), deadline=time.time() + 60)
        assert isinstance(proc, subprocess.Popen)
        assert proc.wait(60) == 0 and exit_of(tmp_path)["returncode"] == 0
    finally:
        child.send_signal(signal.SIGTERM)
        child.wait(20)


def test_off_switch(repo):
    env = dict(base_env(repo), DOCTOR_NO_ZYGOTE="1")
    assert zygote.zygote_for(sys.executable, str(repo), env, time.time() + 60) is None


def test_the_zygote_leaves_no_temp_dir(repo, tmp_path):
    """The zygote's own TMPDIR (for what a torch may write at import: torch._dynamo makes
    $TMPDIR/torchinductor_$USER) goes with it, whether the doctor closes it or dies (its
    socket's end)."""
    env = base_env(repo)
    for how in ("closed", "doctor gone"):
        z, child = spawn(repo, "zyg_probe", dict(env, ZYG_OUT=str(tmp_path / "p.json")),
                         tmp_path)
        child.wait(30)
        assert Path(z.tmp).is_dir()
        if how == "closed":
            zygote.close()
        else:   # as when the doctor is killed: its end of the socket closes, nothing else
            z.sock.close()
            z.proc.wait(10)
            zygote._current = None
        assert not Path(z.tmp).exists(), how


SETMODEL = '''
import os, torch
from pathlib import Path

NAMES = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        # parameter order follows the set's iteration order: the hash seed's
        self.layers = torch.nn.ModuleDict({n: torch.nn.Linear(4, 3 + i) for i, n in
                                           enumerate(sorted(NAMES, key=len))})
        self.layers = torch.nn.ModuleDict({n: self.layers[n] for n in NAMES})

    def forward(self, x):
        return sum(layer(x).sum() for layer in self.layers.values())


def build():
    Path(os.path.dirname(__file__), "hash-" + os.environ["RANK"]).write_text(str(hash("x")))
    return M(), torch.randn(2, 4)
'''


def test_ranks_keep_their_own_hash_seed(tmp_path, monkeypatch):
    """A model whose parameter order follows a set's iteration order fails real DDP (each
    process its own hash seed): the smoke must fail it too, so at most one rank is forked
    from the zygote (whose hash seed it would share)."""
    from doctor.smoke.launcher import run_smoke

    (tmp_path / "setmodel.py").write_text(SETMODEL)
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    monkeypatch.delenv(zygote.ENV_OFF, raising=False)
    try:
        run = run_smoke(SmokePlan(repo=tmp_path, model="setmodel:build", timeout_s=60))
    finally:
        zygote.close()
    seeds = {(tmp_path / f"hash-{r}").read_text() for r in range(2)}
    assert len(seeds) == 2, "the ranks shared one hash seed"
    assert any(r.returncode != 0 for r in run.ranks), [r.output for r in run.ranks]


def test_a_late_reply_does_not_run_the_child_twice(repo, tmp_path, monkeypatch):
    """The zygote answers after the doctor gave up on it (and started the child as before):
    the reaper it forked must not run the child as well."""
    env = dict(base_env(repo), ZYG_OUT=str(tmp_path / "p.json"))
    z = zygote.zygote_for(sys.executable, str(repo), env, time.time() + 60)
    assert z is not None
    monkeypatch.setattr(zygote, "REPLY_TIMEOUT_S", 1.0)
    os.kill(z.proc.pid, signal.SIGSTOP)
    try:
        with open(tmp_path / "out", "wb") as out:
            child = z.spawn("zyg_probe", [], cwd=str(repo), env=env, out=out.fileno(),
                            err=out.fileno(), exit_file=str(tmp_path / "exit"))
        assert child is None
    finally:
        os.kill(z.proc.pid, signal.SIGCONT)
    time.sleep(3)   # the reaper, had it gone on, would have run the probe by now
    assert not (tmp_path / "p.json").exists(), "the child ran although the doctor gave up"
    assert z.alive()


def test_a_child_is_watched_from_several_threads(repo, tmp_path):
    """The smoke's thread waits on its ranks while the main thread's cleanup signals and
    waits on them, and busy() looks at every check's children: no EBADF from a socket or
    pidfd another thread closed, and every thread sees the same end."""
    import threading

    env = dict(base_env(repo), ZYG_OUT=str(tmp_path / "pid"))
    errors: list = []
    for _ in range(6):
        (tmp_path / "pid").unlink(missing_ok=True)
        z, child = spawn(repo, "zyg_sleep", env, tmp_path)
        end = time.time() + 30
        while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text():
            assert time.time() < end
            time.sleep(0.05)

        def watch(how: str, child=child, z=z) -> None:
            try:
                if how == "wait":
                    child.wait(30)
                while child.poll() is None:
                    z.busy()
                    child.send_signal(0)
            except Exception as exc:   # noqa: BLE001 - any is the failure
                errors.append(repr(exc))

        threads = [threading.Thread(target=watch, args=(how,))
                   for how in ("wait", "poll", "poll", "poll")]
        for t in threads:
            t.start()
        time.sleep(0.3)
        child.send_signal(signal.SIGTERM)
        for t in threads:
            t.join(30)
        assert child.returncode not in (None, zygote.LOST) and not child.lost, child.returncode
        assert not errors, errors


ENDINGS = {
    # a non-daemon thread still running when the module returns: python -m waits for it
    "thread": ("import os, threading, time\n"
               "def late():\n"
               "    time.sleep(0.5)\n"
               "    open(os.environ['ZYG_OUT'], 'w').write('thread done')\n"
               "threading.Thread(target=late).start()\n"),
    # a file name's undecodable byte printed: surrogateescape under C.UTF-8, not an error
    "surrogate": "import os\nprint(os.fsdecode(b'name-\\xff'))\n",
    # an uncaught Ctrl-C: python -m ends by SIGINT (-2), not exit 1
    "interrupt": "raise KeyboardInterrupt\n",
}


@pytest.mark.parametrize("what", sorted(ENDINGS))
def test_a_child_ends_as_python_m_ends(repo, tmp_path, what):
    (repo / f"zyg_end_{what}.py").write_text(ENDINGS[what])
    env = dict(base_env(repo), LC_ALL="C.UTF-8")
    seen = {}
    for how in ("zygote", "python-m"):
        run = tmp_path / how
        run.mkdir()
        e = dict(env, ZYG_OUT=str(run / "thread"))
        if how == "zygote":
            _, child = spawn(repo, f"zyg_end_{what}", e, run)
            child.wait(30)
            code = exit_of(run)["returncode"]
        else:
            with open(run / "out", "wb") as out:
                code = subprocess.run([sys.executable, "-m", f"zyg_end_{what}"], cwd=repo,
                                      env=e, stdout=out, stderr=out, timeout=60).returncode
        out_text = (run / "out").read_bytes()
        seen[how] = (code, (run / "thread").exists(),
                     out_text.splitlines()[-1:] if code else out_text)
    assert seen["zygote"] == seen["python-m"]


def test_a_failed_run_module_leaves_the_zygote_idle(repo, tmp_path):
    """run_module whose output files cannot be made: the zygote must not stay 'busy' (it
    would never be replaced for another environment)."""
    env = base_env(repo)
    z = zygote.zygote_for(sys.executable, str(repo), env, time.time() + 60)
    assert z is not None
    z.pending -= 1
    with pytest.raises(OSError):
        zygote.run_module(sys.executable, "zyg_probe", [], cwd=str(repo), env=env, timeout=30,
                          tmp=str(tmp_path / "missing"))
    assert z.pending == 0 and not z.busy()


@pytest.mark.parametrize("what", ["environment", "output"])
def test_a_repo_sitecustomize_runs_in_every_child(tmp_path, what):
    """A repo's sitecustomize.py (on the ranks' PYTHONPATH) runs at each interpreter's
    start: forked from one zygote its environment change or output would reach no child,
    so such a repo's children start as before."""
    (tmp_path / "sitecustomize.py").write_text(
        "import os\nos.environ['ZYG_SITE'] = '1'\n" if what == "environment" else
        "print('site ran')\n")
    env = base_env(tmp_path)
    try:
        assert zygote.zygote_for(sys.executable, str(tmp_path), env, time.time() + 60) is None
    finally:
        zygote.close()


def test_the_zygote_starts_before_the_run_dir(tmp_path, monkeypatch):
    """The zygote's torch import takes 1-90 s: a doctor SIGKILLed meanwhile must leave no
    /tmp/doctor-smoke-*, so the run dir is made only once the zygote is up, when every rank
    is forked from it (a fixed hash seed; otherwise a rank started on its own imports torch
    meanwhile, in the run dir: the next test)."""
    import tempfile

    zygote.close()
    monkeypatch.delenv(zygote.ENV_OFF, raising=False)
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    made, mkdtemp = [], tempfile.mkdtemp

    def recording(*args, **kwargs):
        z = zygote._current
        made.append((kwargs.get("prefix"), z is not None and z.alive()))
        return mkdtemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkdtemp", recording)
    launcher = Launcher(SmokePlan(repo=tmp_path, timeout_s=60))
    try:
        launcher.start()
    finally:
        launcher.cleanup()
        zygote.close()
    assert ("doctor-smoke-", True) in made, made
    assert isinstance(launcher.procs[0], zygote.Child)


def test_a_rank_started_on_its_own_imports_torch_beside_the_zygote(tmp_path, monkeypatch):
    """With a random hash seed only rank 0 is forked: rank 1 is started first, so that its
    torch import runs beside the zygote's instead of after it (1-2 s of the smoke's wall on
    2 cores). The run dir exists meanwhile, as it does while rank 1 imports anyway."""
    from doctor.smoke import launcher as launcher_mod

    zygote.close()
    monkeypatch.delenv(zygote.ENV_OFF, raising=False)
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    order, start = [], launcher_mod.start_reaped

    def recording(*args, **kwargs):
        z = zygote._current
        order.append((kwargs["fork"], z is not None and z.alive()))
        return start(*args, **kwargs)

    monkeypatch.setattr(launcher_mod, "start_reaped", recording)
    launcher = Launcher(SmokePlan(repo=tmp_path, timeout_s=60))
    try:
        launcher.start()
        launcher.wait()
        ranks = launcher.collect()
    finally:
        launcher.cleanup()
        zygote.close()
    # rank 1 on its own while no zygote was up yet, then rank 0 forked from it
    assert order == [(False, False), (True, False)], order
    assert isinstance(launcher.procs[0], zygote.Child)
    assert isinstance(launcher.procs[1], subprocess.Popen)
    assert [r.returncode for r in ranks] == [0, 0], [r.output for r in ranks]
