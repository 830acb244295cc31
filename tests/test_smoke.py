"""ddp-smoke end to end: the real CLI, real torch.distributed (gloo), deliberately
broken models. Each run also proves that no rank process, no temp file and no
bound port is left behind.

Run alone: python -m pytest -q tests/test_smoke.py
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import psutil
import pytest
import yaml

from conftest import ROOT, result_of, run_doctor, run_json
from harness import subset

SCENARIOS = ROOT / "tests" / "data" / "smoke_scenarios"
FIXTURES = ROOT / "fixtures" / "ddp-smoke"


def marked_processes(marker: str) -> list:
    """Every live process that inherited this test's marker (ranks, their children)."""
    found = []
    for p in psutil.process_iter(["pid"]):
        try:
            if p.environ().get("DOCTOR_TEST_MARKER") == marker:
                found.append(p)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return found


class Sandbox:
    """A copy of a scenario repo, a private TMPDIR and a process marker."""

    def __init__(self, src: Path, tmp_path: Path):
        self.repo = tmp_path / "repo"
        shutil.copytree(src, self.repo, ignore=shutil.ignore_patterns("case.yaml"))
        self.tmp = tmp_path / "tmp"
        self.tmp.mkdir()
        self.marker = uuid.uuid4().hex
        self.env = {"TMPDIR": str(self.tmp), "DOCTOR_TEST_MARKER": self.marker}
        self.expect = (yaml.safe_load((src / "case.yaml").read_text()) or {}).get("expect", {}) \
            if (src / "case.yaml").exists() else {}

    def run(self, *args: str) -> tuple:
        return run_json("--repo", str(self.repo), "--only", "ddp-smoke", *args,
                        env=self.env, timeout=150)

    def assert_clean(self, port: int | None = None) -> None:
        left = marked_processes(self.marker)
        assert not left, f"processes left behind: {[p.cmdline() for p in left]}"
        leftovers = sorted(str(p.relative_to(self.tmp)) for p in self.tmp.rglob("*"))
        assert leftovers == [], f"temp files left behind: {leftovers}"
        repo_junk = sorted(str(p) for p in self.repo.rglob("__pycache__"))
        assert repo_junk == [], f"the smoke wrote into the repo: {repo_junk}"
        if port:
            # Nobody listens on the rendezvous port any more (SO_REUSEADDR, as the
            # TCPStore itself binds: connections in TIME_WAIT are the kernel's, not ours)
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", port))
                s.listen()


def smoke_result(doc: dict) -> dict:
    return result_of(doc, "ddp-smoke")


def assert_expected(result: dict, expect: dict) -> None:
    for want in expect.get("findings", []):
        assert any(subset(want, f) for f in result["findings"]), (
            f"no finding matches {want}; got {[f['message'] for f in result['findings']]}")


def run_scenario(name: str, tmp_path: Path, *args: str) -> tuple:
    box = Sandbox(SCENARIOS / name if (SCENARIOS / name).exists() else FIXTURES / name, tmp_path)
    code, doc = box.run(*args)
    box.assert_clean(doc["facts"].get("smoke", {}).get("port"))
    result = smoke_result(doc)
    assert_expected(result, box.expect)
    return code, doc, result


# ---- end to end through the CLI ------------------------------------------

def test_healthy_builtin_model_passes_and_reports_timings(tmp_path):
    code, doc, result = run_scenario("builtin_model", tmp_path)
    assert (code, result["status"], result["findings"]) == (0, "pass", [])
    smoke = doc["facts"]["smoke"]
    assert smoke["backend"] == "gloo" and smoke["devices"] == ["cpu", "cpu"]
    assert smoke["world_size"] == 2 and smoke["deadline_hit"] is False
    for r in smoke["ranks"]:
        assert r["exit_code"] == 0 and r["steps"] == 2
        for key in ("import_s", "init_s", "first_step_s", "total_s"):
            assert isinstance(r[key], float) and r[key] >= 0, (key, r)
        assert r["import_s"] < r["total_s"]


def test_nccl_forced_without_a_gpu_per_rank_is_a_skip_saying_so(tmp_path):
    # Recorded on a real H200 (tests/data/gpu): nccl forced for 2 ranks on 1 GPU failed in
    # set_device, reported as "raised importing torch" with "fix the exception; the job
    # would fail the same way" -- the smoke's own set-up, not the job. On this CPU node the
    # same setting has 0 GPUs for 2 ranks.
    box = Sandbox(SCENARIOS / "builtin_model", tmp_path)
    (box.repo / "doctor.yaml").write_text("smoke: {timeout_s: 30, backend: nccl}\n")
    code, doc = box.run()
    box.assert_clean()
    result = smoke_result(doc)
    assert (code, result["status"], result["findings"]) == (0, "skip", [])
    assert "nccl needs one GPU per rank: this node has 0 GPU(s) for 2 ranks" in result["reason"]
    assert "smoke.backend: auto" in result["reason"]
    smoke = doc["facts"]["smoke"]   # what was chosen is reported though set-up failed
    assert smoke["backend"] == "nccl" and smoke["devices"] == ["cuda:0", "cuda:1"]


def test_sigsegv_in_model_factory_is_a_crash_of_rank0(tmp_path):
    code, doc, result = run_scenario("fail_segv_in_factory", tmp_path)
    assert code == 1 and result["status"] == "fail"
    first, *rest = result["findings"]
    assert first["data"]["rank"] == 0 and first["data"]["kind"] == "crash"
    assert first["data"]["signal"] == "SIGSEGV" and first["data"]["exit_code"] == -11
    assert first["data"]["root_cause"] is True
    assert "SIGSEGV" in first["message"] and "building the model" in first["message"]
    # faulthandler's dump at the crash names the user's function, marked as theirs
    assert "> native_model.py:" in first["data"]["stack"]
    assert "load_native_kernels" in first["data"]["stack"].splitlines()[0]
    assert first["fix"]
    # rank 1 was waiting for rank 0 and is reported as its consequence
    assert [f["data"]["rank"] for f in rest] == [1]
    assert rest[0]["data"]["root_cause"] is False
    assert "consequence of rank 0's crash" in rest[0]["message"]


def test_exception_in_one_ranks_forward(tmp_path):
    code, doc, result = run_scenario("forward_exception", tmp_path)
    assert code == 1
    cause = result["findings"][0]
    assert (cause["data"]["rank"], cause["data"]["kind"]) == (1, "exception")
    assert "ValueError" in cause["message"] and "aux head expects 16 features" in cause["message"]
    assert "ValueError: aux head expects 16 features, got 8" in cause["data"]["stack"]
    assert cause["location"] == {"path": "branchy.py", "line": 14}
    peer = result["findings"][1]
    assert peer["data"]["rank"] == 0 and peer["data"]["root_cause"] is False
    assert "consequence of rank 1's exception" in peer["message"]


def test_rank0_stuck_in_lazy_cache_is_a_hang_naming_the_function(tmp_path):
    start = time.monotonic()
    code, doc, result = run_scenario("lazy_cache_hang", tmp_path)
    assert code == 1
    hang = result["findings"][0]
    assert (hang["data"]["rank"], hang["data"]["kind"], hang["data"]["root_cause"]) == \
        (0, "hang", True)
    assert hang["data"]["stuck_in"] == "build_region_masks"
    assert hang["message"].startswith("rank 0: hang — stuck in build_region_masks (windscan.py:")
    assert "← forward (windscan.py:" in hang["message"]
    assert hang["data"]["stack"].splitlines()[0].startswith("> windscan.py:")
    assert "in forward" in hang["data"]["stack"].splitlines()[1]
    other = result["findings"][1]
    assert other["data"]["rank"] == 1 and other["data"]["root_cause"] is False
    # bounded by smoke.timeout_s (15 s in the scenario) plus stopping, not by gloo's 30 min
    assert time.monotonic() - start < 15 + 20


def test_unused_parameter_fails_on_the_second_step(tmp_path):
    code, doc, result = run_scenario("unused_parameter", tmp_path)
    assert code == 1
    # torch 2.13, find_unused_parameters=False: step 1 completes, step 2's forward
    # raises "Expected to have finished reduction in the prior iteration" on every rank
    assert sorted(f["data"]["rank"] for f in result["findings"]) == [0, 1]
    for f in result["findings"]:
        assert f["data"]["kind"] == "exception" and f["data"]["phase"] == "step 2"
        assert f["data"]["root_cause"] is True
        assert f["data"]["unused_parameters"] == ["aux_head.bias", "aux_head.weight"]
        assert "find_unused_parameters=True" in f["fix"]
    assert all(r["steps"] == 1 for r in doc["facts"]["smoke"]["ranks"])


def test_parameters_drifting_on_one_rank_is_a_desync(tmp_path):
    code, doc, result = run_scenario("param_drift", tmp_path)
    assert code == 1
    [f] = result["findings"]
    assert (f["data"]["rank"], f["data"]["kind"], f["data"]["step"]) == (1, "desync", 1)
    assert f["data"]["parameters"] == ["lin.weight"] and "lin.weight" in f["message"]


# ---- pieces that need no ranks -------------------------------------------

@pytest.mark.parametrize("requested,gpus,world,expected", [
    ("auto", 0, 2, ("gloo", "cpu")),
    ("auto", 1, 2, ("gloo", "cpu")),     # one GPU cannot host two nccl ranks
    ("auto", 2, 2, ("nccl", "cuda")),    # one GPU per rank (RCCL on ROCm is "nccl" too)
    ("auto", 8, 2, ("nccl", "cuda")),
    ("auto", 2, 4, ("gloo", "cpu")),
    (None, 4, 2, ("nccl", "cuda")),
    ("gloo", 8, 2, ("gloo", "cpu")),
    ("nccl", 0, 2, ("nccl", "cuda")),
])
def test_backend_is_chosen_by_device_count(requested, gpus, world, expected):
    from doctor.smoke.protocol import choose_backend

    assert choose_backend(requested, gpus, world) == expected


def test_unknown_backend_is_refused():
    from doctor.smoke.protocol import choose_backend

    with pytest.raises(ValueError, match="auto, gloo or nccl"):
        choose_backend("mpi", 0, 2)


def test_smoke_timeout_comes_from_settings():
    from doctor.checks.smoke import smoke_timeout
    from doctor.registry import get

    spec = get("ddp-smoke")
    assert "smoke" in spec.tags and set(spec.needs) >= {"torch", "smoke"}
    assert not spec.static

    class FakeSettings:
        smoke = {"timeout_s": 45}

    class FakeJob:
        settings = FakeSettings()

    assert spec.timeout_for(FakeJob()) == smoke_timeout(FakeJob()) == 75.0


def test_no_smoke_and_static_skip_it(tmp_path):
    # the smoke alone under --no-smoke or --static runs nothing: exit 2 saying why, where
    # it once said PASS (issue 28; tests/test_names.py has the words)
    for flag in ("--no-smoke", "--static"):
        proc = run_doctor("run", "--repo", str(tmp_path), "--only", "ddp-smoke", flag)
        assert proc.returncode == 2 and "ddp-smoke" in proc.stderr, proc.stderr
    code, doc = run_json("--repo", str(tmp_path), "--only", "ddp-smoke,rsync", "--no-smoke")
    assert [r["id"] for r in doc["results"]] == ["rsync-exclude-unanchored"]


PORT_RETRY = r'''
import json, socket, sys
from pathlib import Path
import doctor.checks.smoke
from doctor.smoke.classify import classify, smoke_facts
from doctor.smoke.launcher import SmokePlan, free_port, run_smoke

busy = socket.socket()
busy.bind(("127.0.0.1", 0))
busy.listen()
taken = busy.getsockname()[1]
run = run_smoke(SmokePlan(repo=Path(sys.argv[1]), timeout_s=60),
                ports=iter([taken, free_port()]))
print(json.dumps({"attempts": run.attempts, "port": run.port, "taken": taken,
                  "failures": [f.data() for f in classify(run)],
                  "steps": [r["steps"] for r in smoke_facts(run)["ranks"]],
                  "torch_imported": "torch" in sys.modules}))
'''


def test_port_collision_is_retried_and_the_launcher_never_imports_torch(tmp_path):
    """Rank 0 cannot bind a port someone else listens on: the smoke retries on another."""
    box = Sandbox(SCENARIOS / "builtin_model", tmp_path)
    env = dict(os.environ, **box.env)
    proc = subprocess.run([sys.executable, "-c", PORT_RETRY, str(box.repo)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["attempts"] == 2 and out["port"] != out["taken"]
    assert out["failures"] == [] and out["steps"] == [2, 2]
    assert out["torch_imported"] is False
    box.assert_clean(out["port"])


def test_nccl_watchdog_abort_is_a_timeout_not_the_root_cause(tmp_path):
    """No GPU here: a recorded NCCL outcome. The watchdog SIGABRTs the rank that waited;
    the rank stuck in user code is the cause."""
    from doctor.smoke.classify import classify
    from doctor.smoke.launcher import RankOutcome, SmokePlan, SmokeRun

    (tmp_path / "m.py").write_text("def build_cache():\n    while True:\n        pass\n")
    started = [{"event": "start", "main_thread": 1},
               *({"event": "phase", "phase": p, "seconds": 0.1}
                 for p in ("import", "init", "model", "ddp"))]
    waiter = RankOutcome(0, 101, -6, 10.0, events=started, output=(
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=3, "
        "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600097 milliseconds"))
    stuck = RankOutcome(1, 102, -9, 11.0, stopped="peer-failed", events=started, usr1_dump=(
        "Thread 0x0000000000000001 (most recent call first):\n"
        f'  File "{tmp_path}/m.py", line 3 in build_cache\n'
        '  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 9 in _call\n'))
    plan = SmokePlan(repo=tmp_path, backend="nccl")
    cause, other = classify(SmokeRun(plan, [waiter, stuck], 1, 0.0, 12.0, False))
    assert (cause.rank, cause.kind, cause.root_cause) == (1, "hang", True)
    assert "stuck in build_cache (m.py:3)" in cause.message
    assert cause.stack.splitlines()[0] == "> m.py:3 in build_cache"
    assert (other.rank, other.kind, other.signal, other.root_cause) == \
        (0, "timeout", "SIGABRT", False)
    assert "consequence of rank 1's hang" in other.message


def test_deadline_stops_ranks_that_never_return(tmp_path):
    """Both ranks stuck in the factory: at smoke.timeout_s the doctor dumps their stacks,
    kills them, and reports both as hangs in the user's function."""
    box = Sandbox(SCENARIOS / "lazy_cache_hang", tmp_path)
    settings = tmp_path / "stuck.yaml"
    settings.write_text('smoke: {model: "windscan:build_region_masks", timeout_s: 8}\n')
    start = time.monotonic()
    code, doc = box.run("--settings", str(settings))
    elapsed = time.monotonic() - start
    box.assert_clean(doc["facts"]["smoke"]["port"])
    result = smoke_result(doc)
    assert code == 1 and doc["facts"]["smoke"]["deadline_hit"] is True
    assert sorted(f["data"]["rank"] for f in result["findings"]) == [0, 1]
    for f in result["findings"]:
        assert f["data"]["kind"] == "hang" and f["data"]["root_cause"] is True
        assert f["data"]["stopped_by_doctor"] == "deadline"
        assert f["data"]["stuck_in"] == "build_region_masks"
        assert f["data"]["phase"] == "model" and "while building the model" in f["message"]
    assert elapsed < 8 + 15
