"""Core dumps by content, and the git scans as a user sees them through the CLI."""
from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import time
from pathlib import Path

import pytest

from conftest import run_doctor
from doctor.scanners.git import GitRepo, is_core_dump, is_elf_core

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@e", "PATH": os.environ["PATH"]}


def header(cls: int, data: int, e_type: int) -> bytes:
    order = "<" if data == 1 else ">"
    return b"\x7fELF" + bytes([cls, data, 1]) + bytes(9) + struct.pack(order + "HH", e_type, 62)


@pytest.mark.parametrize("cls", [1, 2])
@pytest.mark.parametrize("data", [1, 2])
def test_core_header_both_classes_and_byte_orders(cls, data):
    assert is_elf_core(header(cls, data, 4))
    assert not is_elf_core(header(cls, data, 2)) and not is_elf_core(header(cls, data, 3))


def test_not_cores():
    swapped = header(2, 2, 4)[:16] + b"\x04\x00"   # ET_CORE bytes in the wrong byte order
    for head in (b"", b"\x7fELF", b"core dump\n" * 3, swapped, header(3, 1, 4)):
        assert not is_elf_core(head)
    assert not is_core_dump(shutil.which("true") or "/bin/true")   # an executable: ET_DYN/EXEC


def real_core(where: Path) -> Path:
    """A core dump of a real crashed process (core_pattern may pipe it away: then skip)."""
    subprocess.run(["bash", "-c", "ulimit -c unlimited; sleep 10 & kill -SEGV $!; wait"],
                   cwd=where, capture_output=True, timeout=30)
    cores = sorted(where.glob("core*"))
    if not cores and shutil.which("gcore"):
        sleeper = subprocess.Popen(["sleep", "30"])
        try:
            subprocess.run(["gcore", "-o", str(where / "core"), str(sleeper.pid)],
                           capture_output=True, timeout=60)
        finally:
            sleeper.kill()
            sleeper.wait()
        cores = sorted(where.glob("core*"))
    if not cores:
        pytest.skip("this machine writes no core files (core_pattern pipes them away)")
    return cores[0]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=ENV).stdout.strip()


def test_real_crash_core_in_subdirectory_repo(tmp_path):
    """A kernel-written core in a project inside a monorepo; --repo is the project."""
    proj = tmp_path / "proj"
    (proj / "src" / "core").mkdir(parents=True)
    (proj / "src" / "core" / "__init__.py").write_text("")
    core = real_core(proj)
    assert is_core_dump(str(core))
    (tmp_path / "other").mkdir()
    shutil.copy(core, tmp_path / "other" / "core")          # outside --repo: not reported
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "crash")
    added = git(tmp_path, "rev-parse", "HEAD")
    git(tmp_path, "rm", "-q", "--cached", f"proj/{core.name}")
    git(tmp_path, "commit", "-q", "-m", "untrack")
    index = (tmp_path / ".git" / "index").stat().st_mtime_ns
    proc = run_doctor("run", "--repo", str(proj), "--static", "--only", "git-tracked-core-file",
                      "--format", "json", env={"GIT_OPTIONAL_LOCKS": "1"})
    assert proc.returncode == 1, proc.stderr
    res = json.loads(proc.stdout)["results"][0]
    by_where = {f["data"]["where"]: f for f in res["findings"]}
    assert set(by_where) == {"history", "untracked"}
    hist = by_where["history"]
    assert hist["data"] == {"path": core.name, "size": core.stat().st_size, "where": "history",
                            "commit": added}
    assert f"git filter-repo --invert-paths --path proj/{core.name}" in hist["commands"]
    assert by_where["untracked"]["location"]["path"] == core.name
    assert (tmp_path / ".git" / "index").stat().st_mtime_ns == index


def test_blob_head_reads_only_the_header(tmp_path):
    (tmp_path / "big").write_bytes(header(2, 1, 4) + bytes(64 << 20))
    git(tmp_path, "init", "-q")
    oid = git(tmp_path, "hash-object", "-w", "big")
    start = time.monotonic()
    head = GitRepo(str(tmp_path)).blob_head(oid)
    assert is_elf_core(head) and len(head) == 20
    assert time.monotonic() - start < 5


def test_no_git_means_skip(tmp_path):
    (tmp_path / "core").write_bytes(header(2, 1, 4))
    proc = run_doctor("run", "--repo", str(tmp_path), "--static", "--only",
                      "git-tracked-core-file,git-large-file", "--format", "json",
                      env={"PATH": "/nonexistent"})
    res = json.loads(proc.stdout)["results"]
    assert [r["status"] for r in res] == ["skip", "skip"], proc.stderr
    assert all("git is not installed" in r["reason"] for r in res)
    assert proc.returncode == 0
