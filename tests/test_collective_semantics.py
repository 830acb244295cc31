"""collective-on-error-path's semantics against the real 2-rank gloo run.

Each case is a tiny training program, run twice: through the real CLI
(`--static --only collective-on-error-path`, as the job's entry) and for real on
two gloo ranks with a short process-group timeout. The oracle is the real run:
a case the doctor calls an error must hang (a rank still waiting at the deadline,
or giving up on gloo's timeout); a case it passes must finish. After its step,
each rank waits for its peer in the store, not in a collective: a collective that
only one rank calls then times out (it would otherwise fail at once on the peer's
exit, and gloo pairs a stray all_reduce with a peer's barrier).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import result_of, run_json

GLOO_TIMEOUT_S = 5   # well above a failing rank's exit under load: its peer sees it gone
DEADLINE_S = 20

PROGRAM = '''\
import os
import sys
from datetime import timedelta
from typing import NoReturn

import pytest
import torch
import torch.distributed as dist

_GROUP = None   # a parallel group, set by an initialisation every rank runs
{top}


def get_group():
    assert _GROUP is not None, "the group is not initialised"
    return _GROUP


def fail(msg) -> NoReturn:
    raise SystemExit(f"fatal: {{msg}}")


def warmup(rank):
    if rank == 1:
        raise RuntimeError("warmup failed on this rank")
    dist.all_reduce(torch.zeros(1))


def always_raises(msg):
    raise RuntimeError(msg)


class Trainer:
    def __init__(self):
        self.is_pipe_parallel = False

    def _update(self, t):
        if self.is_pipe_parallel:
            dist.all_reduce(t)

    def step(self, rank, t):
        if self.is_pipe_parallel:
            dist.all_reduce(t)
        elif rank == 0:
            self._update(t)


def step(rank, t):
{body}


def main():
    dist.init_process_group("gloo", timeout=timedelta(seconds={timeout}))
    rank = dist.get_rank()
    step(rank, torch.ones(1))
    # Wait for the peer to be done too, outside any collective: a rank left alone in a
    # collective times out instead of failing on its peer's exit.
    store = dist.distributed_c10d._get_default_store()
    store.set(f"done{{rank}}", "1")
    store.wait([f"done{{1 - rank}}"])
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''

# Module-level code of a case (the third item of its entry): a script's globals.
SHARD = """

class Shard(torch.utils.data.IterableDataset):
    def __iter__(self):   # each rank's own batches: rank 1's lack the key
        yield [{"input_ids": torch.ones(1)}, {"labels": torch.ones(1)}][dist.get_rank()]


loader = torch.utils.data.DataLoader(Shard(), batch_size=None)
"""

# name: (body of step(), the doctor flags it as an error[, module-level code])
CASES = {
    "group_members": ("""\
    ranks = [0]
    g = dist.new_group(ranks)
    if rank in ranks:
        dist.all_reduce(t, group=g)""", False),
    "group_rank_test": ("""\
    g = dist.new_group([0])
    if dist.get_rank(g) >= 0:
        dist.all_reduce(t, group=g)""", False),
    "group_ranks_of": ("""\
    g = dist.new_group([0, 1])
    if dist.get_world_size(g) > 1 and dist.get_rank() in dist.get_process_group_ranks(g):
        dist.all_reduce(t, group=g)""", False),
    "rank_branch": ("""\
    if rank == 0:
        dist.all_reduce(t)""", True),
    "true_on_every_rank": ("""\
    if rank >= 0 and dist.get_world_size() > 0:
        dist.all_reduce(t)""", False),
    "uniform_exception": ("""\
    for _ in range(2):
        try:
            g = get_group()
        except AssertionError:
            continue
        dist.all_reduce(t, group=g)""", False),
    "config_exception": ("""\
    import argparse
    import json
    args = argparse.Namespace(config_json="{not json")   # the same command line everywhere
    try:
        config = json.loads(args.config_json)
    except json.JSONDecodeError:
        return
    dist.all_reduce(t, group=config.get("group"))""", False),
    "data_exception": ("""\
    try:
        with open(__file__ if rank else "/nonexistent/aux.bin") as f:
            f.read()
    except OSError:
        return
    dist.all_reduce(t)""", True),
    "handler_never_returns": ("""\
    try:
        warmup(rank)
    except RuntimeError as e:
        fail(e)
    dist.all_reduce(t)""", False),
    "helper_always_raises": ("""\
    try:
        warmup(rank)
    except RuntimeError as e:
        always_raises(str(e))
    dist.all_reduce(t)""", False),
    "handler_pytest_skip": ("""\
    try:
        warmup(rank)
    except RuntimeError as e:
        pytest.skip(f"no warmup here: {e}")
    dist.all_reduce(t)""", False),
    "callee_guard": ("""\
    Trainer().step(rank, t)""", False),
    "handler_collective_then_exit": ("""\
    try:
        warmup(rank)
    except RuntimeError as e:
        print(e)
        dist.barrier()
        sys.exit(1)
    dist.all_reduce(t)""", True),
    "member_and_rank": ("""\
    g = dist.new_group([0, 1])
    if dist.get_rank() in dist.get_process_group_ranks(g) and dist.get_rank() == 0:
        dist.all_reduce(t, group=g)""", True),
    "members_and_rank": ("""\
    ranks = [0, 1]
    g = dist.new_group(ranks)
    if rank in ranks and rank == 1:
        dist.all_reduce(t, group=g)""", True),
    "rank_arithmetic": ("""\
    if dist.get_rank() - 1 >= 0:
        dist.all_reduce(t)""", True),
    "global_loader": ("""\
    for batch in loader:
        try:
            x = batch["input_ids"]
        except KeyError:
            continue
        dist.all_reduce(x)""", True, SHARD),
    "handler_swallows": ("""\
    try:
        warmup(rank)
    except RuntimeError as e:
        print(e)
    dist.all_reduce(t)""", True),
}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(script: Path) -> bool:
    """True when both ranks end (exit 0 or not) before the deadline and before gloo's
    timeout: no rank was left waiting in a collective."""
    port = _port()
    procs = []
    started = time.monotonic()
    for rank in (0, 1):
        env = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), LOCAL_RANK=str(rank))
        procs.append(subprocess.Popen([sys.executable, str(script)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True))
    hung = False
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(1, DEADLINE_S - (time.monotonic() - started)))
            hung = hung or "timed out" in out.lower() or "timeout" in out.lower()
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            hung = True
    return not hung


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_doctor_agrees_with_the_real_run(case, tmp_path):
    body, flagged, *top = CASES[case]
    repo = tmp_path / "repo"
    repo.mkdir()
    script = repo / "train.py"
    script.write_text(PROGRAM.format(body=body, timeout=GLOO_TIMEOUT_S, top="".join(top)))
    (repo / "train.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\n"
                                       "srun python train.py\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    _, doc = run_json("--repo", str(repo), "--static", "--only",
                      "collective-on-error-path,exit-masks-errors")   # one shared analysis
    res = result_of(doc, "collective-on-error-path")
    assert res["status"] != "error", res.get("reason")
    errors = [f for f in res["findings"] if f["severity"] == "error"]
    assert bool(errors) == flagged, res["findings"]
    assert flagged or res["findings"] == [], res["findings"]   # not even a warning
    # the oracle: what the doctor calls an error really hangs, what it passes ends
    assert run_ranks(script) == (not flagged), case


# A script with no functions: its loader and loop are module globals (review: a global
# bound to a DataLoader counted as the same on every rank).
SCRIPT = f'''\
from datetime import timedelta

import torch
import torch.distributed as dist

dist.init_process_group("gloo", timeout=timedelta(seconds={GLOO_TIMEOUT_S}))
{SHARD}
for batch in loader:
    try:
        x = batch["input_ids"]
    except KeyError:
        continue
    dist.all_reduce(x)
store = dist.distributed_c10d._get_default_store()
store.set(f"done{{dist.get_rank()}}", "1")
store.wait([f"done{{1 - dist.get_rank()}}"])
dist.destroy_process_group()
'''


@pytest.mark.slow
def test_a_top_level_loader_is_each_ranks_own_data(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    script = repo / "train.py"
    script.write_text(SCRIPT)
    (repo / "train.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\n"
                                       "srun python train.py\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    _, doc = run_json("--repo", str(repo), "--static", "--only", "collective-on-error-path")
    res = result_of(doc, "collective-on-error-path")
    errors = [f for f in res["findings"] if f["severity"] == "error"]
    assert [f["location"]["line"] for f in errors] == [
        SCRIPT.splitlines().index("    dist.all_reduce(x)") + 1], res["findings"]
    assert not run_ranks(script)   # the oracle: rank 0 waits in its all_reduce
