"""collective-on-error-path against its oracle, the real 2-rank gloo smoke.

A model factory whose training code has one of the check's forms is run twice
through the real CLI: `--static --only collective-on-error-path` (reads the
code) and `--only ddp-smoke` (real torch.distributed, two ranks, a short
smoke.timeout_s). The smoke must hang, its stack dump must show the hung rank
waiting in the collective at the file:line the static finding names, and the
smoke must call that rank the root cause with the collective fix. The same
code with the collective on every rank passes both.
"""
from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from conftest import result_of, run_json
from test_smoke import marked_processes

SMOKE_TIMEOUT_S = 10

# Seed 000's lazy cache: in the first forward, rank 0 alone builds the cache and a
# helper of the scanner broadcasts it; rank 1 goes on to DDP's gradient all-reduce.
RANK_BRANCH = '''\
import torch.distributed as dist
from torch import nn


class CachedWindScanning:
    def __init__(self):
        self.cached_orders = None

    def initialize_cache(self):
        self.cached_orders = [list(range(16)) for _ in range(4)]
        dist.broadcast_object_list([self.cached_orders], src=0)


class WindEmbed(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 4)
        self.wind_scanner = CachedWindScanning()

    def forward(self, x):
        if self.wind_scanner.cached_orders is None:
            if {cond}:
                self.wind_scanner.initialize_cache()
        return self.proj(x)


def build():
    return WindEmbed()
'''

# Seed 004's failure: one rank cannot load its data; the handler synchronises and goes on.
EXCEPT_HANDLER = '''\
import os

import torch.distributed as dist
from torch import nn


def load_aux(x):
    if os.environ.get("RANK") == "1":
        raise OSError("aux table missing on this node")
    return 0.0


def report_failure(err):
    print(f"no aux features: {{err}}", flush=True)
    dist.barrier()


class AuxNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 4)

    def forward(self, x):
        try:
            aux = load_aux(x)
        except OSError as e:
            {handler}
            aux = 0.0
        return self.lin(x) + aux


def build():
    return AuxNet()
'''

CASES = {
    "rank_branch": (RANK_BRANCH.format(cond="dist.get_rank() == 0"),
                    RANK_BRANCH.format(cond="True"), "rank-branch", "broadcast_object_list",
                    0, "initialize_cache"),
    "except_handler": (EXCEPT_HANDLER.format(handler="report_failure(e)"),
                       EXCEPT_HANDLER.format(handler="print(e)"), "except", "barrier",
                       1, "report_failure"),
}


def repo_with(tmp_path: Path, source: str) -> tuple:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "model.py").write_text(source)
    # the job that trains the model: a file no step reaches is at most a warning
    (repo / "train.py").write_text("from model import build\n\nbuild()\n")
    (repo / "train.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\n"
                                       "srun python train.py\n")
    (repo / "doctor.yaml").write_text(
        f'smoke: {{model: "model:build", input_shape: [4, 8], timeout_s: {SMOKE_TIMEOUT_S}}}\n')
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return repo, {"TMPDIR": str(tmp), "DOCTOR_TEST_MARKER": uuid.uuid4().hex}, tmp


def run_both(repo: Path, env: dict, tmp: Path) -> tuple:
    _, static = run_json("--repo", str(repo), "--static", "--only", "collective-on-error-path",
                         env=env)
    _, smoke = run_json("--repo", str(repo), "--only", "ddp-smoke", env=env, timeout=120)
    assert marked_processes(env["DOCTOR_TEST_MARKER"]) == []
    assert list(tmp.iterdir()) == [], "the smoke left temp files behind"
    return result_of(static, "collective-on-error-path"), result_of(smoke, "ddp-smoke"), smoke


@pytest.mark.parametrize("case", sorted(CASES))
def test_static_finding_names_the_line_the_smoke_hangs_on(case, tmp_path):
    broken, _fixed, form, collective, hung_rank, helper = CASES[case]
    repo, env, tmp = repo_with(tmp_path, broken)
    static, smoke, doc = run_both(repo, env, tmp)

    # the static reading: one error at the collective, with the chain that reaches it
    [finding] = static["findings"]
    assert (static["status"], finding["severity"]) == ("fail", "error")
    assert finding["data"]["form"] == form
    assert finding["data"]["collective"] == f"dist.{collective}"
    assert f"{helper}()" in finding["data"]["path"]
    where = (finding["location"]["path"], finding["location"]["line"])

    # the oracle: the real smoke hangs, the hung rank in that call (stopped at the deadline,
    # or first giving up on gloo's own timeout, 0.6 × smoke.timeout_s: both happen)
    assert smoke["status"] == "fail"
    assert doc["facts"]["smoke"]["duration_s"] >= 0.6 * SMOKE_TIMEOUT_S
    cause = next(f for f in smoke["findings"] if f["data"]["rank"] == hung_rank)
    stack = cause["data"]["stack"].splitlines()
    user = next(line for line in stack if line.startswith("> "))
    assert user.startswith(f"> {where[0]}:{where[1]} in {helper}"), stack
    assert any(f"in {collective}" in line and "torch/distributed/" in line
               for line in stack[:stack.index(user)]), stack
    assert (cause["location"]["path"], cause["location"]["line"]) == where

    # ... and calls that rank the root cause, with the collective fix, not network advice
    assert cause["data"]["kind"] in ("hang", "timeout") and cause["data"]["root_cause"] is True
    assert cause["data"]["collective"] == collective
    assert (f"waiting in {collective}() called by {helper}" in cause["message"]
            or f"gave up waiting in {collective}() " in cause["message"]), cause["message"]
    assert "destroy_process_group" in cause["fix"] and "MASTER_ADDR" not in cause["fix"]
    others = [f for f in smoke["findings"] if f["data"]["rank"] != hung_rank]
    assert others and all(f["data"]["root_cause"] is False for f in others)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_code_with_the_collective_on_every_rank_passes_both(case, tmp_path):
    _broken, fixed, *_ = CASES[case]
    repo, env, tmp = repo_with(tmp_path, fixed)
    static, smoke, doc = run_both(repo, env, tmp)
    assert static["status"] in ("pass", "skip") and static["findings"] == []
    assert (smoke["status"], smoke["findings"]) == ("pass", [])
    assert [r["steps"] for r in doc["facts"]["smoke"]["ranks"]] == [2, 2]


def _outcome(rank: int, frames: str, repo: Path, **kw):
    from doctor.smoke.launcher import RankOutcome

    started = [{"event": "start", "main_thread": 1},
               *({"event": "phase", "phase": p, "seconds": 0.1}
                 for p in ("import", "init", "model", "ddp"))]
    return RankOutcome(rank, 100 + rank, events=started, **kw) if not frames else \
        RankOutcome(rank, 100 + rank, events=started, usr1_dump=(
            "Thread 0x0000000000000001 (most recent call first):\n" + frames.format(repo=repo)),
            **kw)


def test_a_collective_that_gave_up_is_the_root_cause_not_network_trouble(tmp_path):
    """Recorded outcome (gloo's own timeout, which the smoke reaches only with the peer
    gone): the rank that raised in the barrier its handler called is the cause, and the
    fix is about collectives, not MASTER_ADDR."""
    from doctor.smoke.classify import classify
    from doctor.smoke.launcher import SmokePlan, SmokeRun

    (tmp_path / "model.py").write_text("x\n" * 30)
    tp = "/usr/lib/python3/site-packages/torch"
    exc = {"event": "exception", "phase": "step 1", "type": "RuntimeError",
           "message": "[gloo/transport/tcp/pair.cc:534] Connection closed by peer",
           "frames": [["/x/doctor/smoke/worker.py", 205, "main", ""],
                      [str(tmp_path / "model.py"), 23, "forward", ""],
                      [str(tmp_path / "model.py"), 14, "report_failure", ""],
                      [f"{tp}/distributed/c10d_logger.py", 83, "wrapper", ""],
                      [f"{tp}/distributed/distributed_c10d.py", 5356, "barrier", ""]]}
    waiting = _outcome(1, "", tmp_path, returncode=1, ended_at=5.0)
    waiting.events.append(exc)
    done = _outcome(0, "", tmp_path, returncode=0, ended_at=4.0)
    done.events.append({"event": "done"})
    [f] = classify(SmokeRun(SmokePlan(repo=tmp_path), [done, waiting], 1, 0.0, 6.0, False))
    assert (f.rank, f.kind, f.root_cause, f.extra["collective"]) == (1, "timeout", True, "barrier")
    assert f.frame is not None and (f.frame.line, f.frame.func) == (14, "report_failure")
    assert "gave up waiting in barrier()" in f.message
    assert "destroy_process_group" in f.fix and "MASTER_ADDR" not in f.fix


def test_ranks_all_waiting_in_the_same_call_are_not_out_of_step(tmp_path):
    """Every rank in the same barrier of the user's: nothing diverged in the code, so the
    classification stays as before (the earliest to give up, network advice)."""
    from doctor.smoke.classify import classify
    from doctor.smoke.launcher import SmokePlan, SmokeRun

    (tmp_path / "m.py").write_text("x\n" * 10)
    frames = ('  File "/t/site-packages/torch/distributed/distributed_c10d.py", line 9 in barrier\n'
              '  File "{repo}/m.py", line 5 in sync\n')
    ranks = [_outcome(r, frames, tmp_path, returncode=-9, ended_at=9.0 + r,
                      stopped="deadline") for r in (0, 1)]
    failures = classify(SmokeRun(SmokePlan(repo=tmp_path), ranks, 1, 0.0, 10.0, True))
    assert [f.kind for f in failures] == ["hang", "hang"]
    assert all("collective" not in f.extra for f in failures)
    assert all("MASTER_ADDR" not in f.fix for f in failures)
