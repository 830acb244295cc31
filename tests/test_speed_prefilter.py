"""The speed work of issue 26 changes no finding.

collective-on-error-path reads only the modules its text pre-filter keeps
(doctor/checks/collectives.py _candidates): each test here runs the check twice, with the
pre-filter and with every module of the job a candidate, and asserts the same findings,
on forms where a caller's text does not name the function whose collective it reaches
(an import `as`, a package's `g = f`, an imported class's method, an identifier spelled
with other Unicode letters); and that a module naming none of it is never parsed.
git-tracked-core-file reads blob heads in one git (blob_heads): the same bytes as one
git per blob (blob_head).
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import doctor.checks.collectives as collectives
from doctor.job.context import Job
from doctor.registry import get
from doctor.runner import run_checks
from doctor.scanners.git import BATCH_HEAD_BYTES, GitRepo, is_elf_core
from conftest import logged_git, run_doctor
from harness import FIXTURES

CHECK = "collective-on-error-path"

IMPL = """\
import torch.distributed as dist


def sync_all():
    dist.barrier()


class Syncer:
    def flush(self):
        dist.all_reduce(1)
"""
CALLERS = {
    # the package re-exports sync_all under other names (flow._reexport)
    "pkg/__init__.py": "from .impl import sync_all as sync_alias\nfrom .impl import sync_all\n"
                       "barrier_all = sync_all\n",
    "pkg/impl.py": IMPL,
    # names sync_alias only: reached through the package's import `as`
    "caller_alias.py": "import pkg\n\n\ndef train():\n    try:\n        work()\n"
                       "    except Exception:\n        pkg.sync_alias()\n",
    # names barrier_all only: reached through the package's `barrier_all = sync_all`
    "caller_assign.py": "from pkg import barrier_all\n\n\ndef train():\n    try:\n"
                        "        work()\n    except Exception:\n        barrier_all()\n",
    # self.s.flush() with self.s = Syncer(): names Syncer and flush
    "caller_method.py": "from pkg.impl import Syncer\n\n\nclass Trainer:\n"
                        "    def __init__(self):\n        self.s = Syncer()\n\n"
                        "    def step(self):\n        try:\n            work()\n"
                        "        except Exception:\n            self.s.flush()\n",
    # ｓync_all is the name sync_all (PEP 3131 NFKC): its bytes spell no `sync_all`
    "caller_nfkc.py": "from pkg.impl import \uff53ync_all\n\n\ndef train():\n    try:\n"
                      "        work()\n    except Exception:\n        \uff53ync_all()\n",
    # names nothing of it: never parsed
    "unrelated.py": "def helper():\n    return sorted([3, 1, 2])\n",
}


def _write(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _every_module(job: Job) -> list:
    """No pre-filter: every module of the job's code a candidate."""
    return [(Path(p), t) for p, text in collectives.raw_texts(job)
            if (t := collectives.parsed(job, p, text)) is not None]


def _findings(repo: Path) -> tuple:
    job = Job(repo, env={}, static=True)
    (res,) = run_checks(job, [get(CHECK)]).doc()["results"]
    found = sorted(json.dumps(f, sort_keys=True) for f in res["findings"])
    return res["status"], found, job


def _both(repo: Path, monkeypatch) -> tuple:
    pre = _findings(repo)
    with monkeypatch.context() as m:
        m.setattr(collectives, "_candidates", _every_module)
        every = _findings(repo)
    return pre, every


def test_callers_that_do_not_name_the_function_are_kept(tmp_path, monkeypatch):
    repo = _write(tmp_path, CALLERS)
    (status, found, job), (status_all, found_all, _) = _both(repo, monkeypatch)
    assert (status, found) == (status_all, found_all)
    # each caller's handler reaches the collective through its own form of the name
    callers = {json.loads(f)["data"]["context"]["path"] for f in found}
    assert callers == {"caller_alias.py", "caller_assign.py", "caller_method.py",
                       "caller_nfkc.py"}, found
    # and the module that names none of it was never parsed
    parsed = set(job.memo("python_tree_cache", dict))
    assert os.path.normpath(repo / "unrelated.py") not in parsed
    assert os.path.normpath(repo / "caller_alias.py") in parsed


@pytest.mark.parametrize("case", sorted(p.name for p in (FIXTURES / CHECK).iterdir()
                                        if (p / "repo").is_dir() or p.is_dir()))
def test_fixtures_same_findings_with_and_without_the_prefilter(case, tmp_path, monkeypatch):
    src = FIXTURES / CHECK / case
    repo = src / "repo" if (src / "repo").is_dir() else src
    (status, found, _), (status_all, found_all, _) = _both(repo, monkeypatch)
    assert (status, found) == (status_all, found_all)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_blob_heads_in_one_git_are_blob_head(tmp_path):
    """Small blobs from one `cat-file --batch`, a large one from its own git, a missing
    one as b"": byte for byte what one git per blob reads."""
    core = bytes.fromhex("7f454c46020101000000000000000000") + b"\x04\x00" + bytes(600)
    (tmp_path / "core.1").write_bytes(core)
    (tmp_path / "big").write_bytes(core + bytes(BATCH_HEAD_BYTES))
    (tmp_path / "text").write_bytes(b"x" * 5)
    (tmp_path / "empty").write_bytes(b"")
    _git(tmp_path, "init", "-q")
    oids = [_git(tmp_path, "hash-object", "-w", n) for n in ("core.1", "big", "text", "empty")]
    missing = "0123456789abcdef0123456789abcdef01234567"
    repo = GitRepo(str(tmp_path))
    sizes = {o: (tmp_path / n).stat().st_size
             for o, n in zip(oids, ("core.1", "big", "text", "empty"))}
    heads = repo.blob_heads(oids + [missing], sizes)
    assert heads == {o: repo.blob_head(o) for o in oids + [missing]}
    assert is_elf_core(heads[oids[0]]) and is_elf_core(heads[oids[1]])
    assert heads[oids[2]] == b"x" * 5 and heads[oids[3]] == b"" and heads[missing] == b""


def test_a_history_git_cannot_read_is_walked_once(tmp_path):
    """A missing blob (a partial snapshot, a broken clone) fails the history scan: both
    git checks report the same error, from one walk of the history, not one per check."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "a.txt").write_text("one\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "a.txt")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "a")
    oid = _git(repo, "rev-parse", "HEAD:a.txt")
    (repo / ".git" / "objects" / oid[:2] / oid[2:]).unlink()
    # git as the doctor finds it (PATH's absolute directories), logging each command
    env, log = logged_git(tmp_path)
    proc = run_doctor("run", "--repo", str(repo), "--static", "--only",
                      "git-large-file,git-tracked-core-file", "--format", "json",
                      env=env)
    results = json.loads(proc.stdout)["results"]
    assert [r["status"] for r in results] == ["error", "error"], results
    assert results[0]["reason"] == results[1]["reason"], results
    walks = [line for line in log.read_text().splitlines() if " rev-list " in f" {line} "]
    # at most one: the index names the missing blob too, and its error comes first (the
    # index is sized by its own cat-file since the history walk names only candidates)
    assert len(walks) <= 1, walks


WANDB = {
    # imports wandb under Lightning's logger name only: kept, its import is the first
    "a_logger.py": "from pytorch_lightning.loggers import WandbLogger\n\nlog = WandbLogger()\n",
    # ｗandb is the name wandb (PEP 3131 NFKC): its bytes spell no `wandb`
    "b_nfkc.py": "import \uff57andb\n\n\uff57andb.init(mode='offline')\n",
    # mentions wandb in longer names only (WANDB_MODE, wandb_project): never parsed
    "c_config.py": "def opts(args, env):\n    return args.wandb_project or env['WANDB_MODE']\n",
}


def test_wandb_reads_every_module_that_can_import_it(tmp_path, monkeypatch):
    """wandb_usage with its identifier pre-filter finds what it finds with every module
    of the job read, and never parses a module that only mentions wandb."""
    from doctor.checks import wandb as wandb_check
    repo = _write(tmp_path, WANDB)
    job = Job(repo, env={}, static=True)
    found = wandb_check.wandb_usage(job)
    parsed = set(job.memo("python_tree_cache", dict))
    with monkeypatch.context() as m:
        m.setattr(wandb_check, "_may_use_wandb", lambda words: True)
        every = wandb_check.wandb_usage(Job(repo, env={}, static=True))
    assert found == every == (("a_logger.py", 1), True)
    assert os.path.normpath(repo / "c_config.py") not in parsed
