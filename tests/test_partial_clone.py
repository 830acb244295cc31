"""A partial clone (`git clone --filter=blob:none`) lacks its history's blobs by design.
git 2.39 marks it with `remote.origin.promisor = true` (older gits with
extensions.partialClone), and a `rev-list --objects` that meets a missing blob tries to
fetch it from the remote. The doctor never fetches (GIT_NO_LAZY_FETCH, no protocol
allowed), so the walk failed and both git checks ended "could not complete" (exit 3) on a
correct repo. The walk now passes over the promisor's blobs: the checks complete, judge
what the clone holds (HEAD's files), and fetch nothing."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import run_doctor
from test_git_history_fast import CORE_HEAD, commit, git


def _objects(repo: Path) -> str:
    return git(repo, "count-objects", "-v")


def _partial_clone(tmp_path: Path) -> Path:
    """A remote whose history held a 1.5 MiB file (since deleted) and whose HEAD tracks
    a core dump; its blob:none clone has HEAD's blobs only."""
    src = tmp_path / "src"
    src.mkdir()
    git(src, "init", "-q")
    (src / "big.bin").write_bytes(os.urandom(3 << 19))
    (src / "train.py").write_text("print('hi')\n")
    commit(src, "one")
    (src / "big.bin").unlink()
    (src / "core.1234").write_bytes(CORE_HEAD + b"x" * 64)
    commit(src, "two")
    git(src, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", "--filter=blob:none", f"file://{src}", str(clone)],
                   check=True, capture_output=True)
    return clone


@pytest.mark.parametrize("promisor", ["as cloned", "bare"])
def test_a_partial_clone_is_scanned_without_a_fetch(tmp_path, promisor):
    clone = _partial_clone(tmp_path)
    if promisor == "bare":   # `promisor` with no value: true to git
        config = clone / ".git" / "config"
        config.write_text(config.read_text().replace("promisor = true", "promisor"))
        assert git(clone, "config", "--bool", "remote.origin.promisor") == "true"
    before = _objects(clone)
    proc = run_doctor("run", "--repo", str(clone), "--static", "--only",
                      "git-tracked-core-file,git-large-file", "--format", "json")
    doc = json.loads(proc.stdout)
    status = {r["id"]: r["status"] for r in doc["results"]}
    assert status == {"git-tracked-core-file": "fail", "git-large-file": "pass"}, doc
    core = next(r for r in doc["results"] if r["id"] == "git-tracked-core-file")
    assert [f["location"]["path"] for f in core["findings"]] == ["core.1234"]
    assert proc.returncode == 1, proc.stderr
    assert _objects(clone) == before   # nothing fetched
