"""The history scan without inflating every large blob or sizing every object (issue 26).

git-tracked-core-file and git-large-file walk the history once with rev-list's blob
filter (large blobs unnamed, core-like names kept), read blob heads from git's own pack
and loose files (doctor/scanners/gitpack.py), and name a large blob only when it
matters. Real git repos of each shape: loose, packed with offset deltas, packed with
ref deltas, SHA-256, shallow; the findings as a user sees them through the CLI, and the
pack reader's bytes against `git cat-file` for every blob.
"""
from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import logged_git, run_doctor
from doctor.scanners.gitpack import Store

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}
CORE_HEAD = b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x04\x00\x3e\x00"   # ET_CORE, x86-64
MIB = 1 << 20


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          env=ENV).stdout.decode().strip()


def commit(repo: Path, msg: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", msg)


def history_repo(root: Path, *, init: tuple = ()) -> Path:
    """A history with a large core dump under a plain name (`dump.bin`, 1.5 MiB, two
    versions: the second a delta of the first once packed), a small one named `core.7`,
    a 60 MB file, all deleted from HEAD, and a large text file still tracked."""
    root.mkdir()
    git(root, "init", "-q", *init)
    body = bytes(range(256)) * (6 * 1024)   # 1.5 MiB
    (root / "dump.bin").write_bytes(CORE_HEAD + body)
    (root / "core.7").write_bytes(CORE_HEAD + b"tiny")
    (root / "weights.pt").write_bytes(os.urandom(1024) * (60 * 1000))   # 61 MB, compresses
    (root / "uv.lock").write_text("x = 1\n" * (300 * 1024))            # 1.8 MB of text
    commit(root, "crash")
    (root / "dump.bin").write_bytes(CORE_HEAD + body[:-10] + b"0123456789")
    commit(root, "again")
    for name in ("dump.bin", "core.7", "weights.pt"):
        (root / name).unlink()
    (root / "train.py").write_text("print('hi')\n")
    commit(root, "clean up")
    return root


def findings(repo: Path) -> dict:
    proc = run_doctor("run", "--repo", str(repo), "--static", "--only",
                      "git-tracked-core-file,git-large-file", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    out = {}
    for r in json.loads(proc.stdout)["results"]:
        assert r["status"] in ("pass", "fail"), r
        out[r["id"]] = sorted((f["data"]["path"], f["data"]["where"], f["data"]["size"])
                              for f in r["findings"])
    return out


EXPECTED = {
    "git-tracked-core-file": [("core.7", "history", 24), ("dump.bin", "history", 20 + 1536 * 1024),
                              ("dump.bin", "history", 20 + 1536 * 1024)],
    "git-large-file": [("weights.pt", "history", 61_440_000)],
}


@pytest.mark.parametrize("shape", ["loose", "packed", "ref-deltas", "sha256"])
def test_every_history_finding_in_every_store_shape(tmp_path, shape):
    repo = history_repo(tmp_path / "r", init=("--object-format=sha256",)
                        if shape == "sha256" else ())
    if shape in ("packed", "sha256"):
        git(repo, "gc", "-q", "--aggressive")
    elif shape == "ref-deltas":
        git(repo, "-c", "repack.useDeltaBaseOffset=false", "gc", "-q", "--aggressive")
    if shape != "loose":
        assert not list((repo / ".git" / "objects").glob("??/*")), "all packed"
    assert findings(repo) == EXPECTED


def test_shallow_clone_finds_what_its_history_holds(tmp_path):
    src = history_repo(tmp_path / "src")
    got = {}
    for depth in (1, 2):   # the cleaned-up commit alone; and the one before it too
        shallow = tmp_path / f"shallow{depth}"
        git(tmp_path, "clone", "-q", "--depth", str(depth), f"file://{src}", str(shallow))
        got[depth] = findings(shallow)
    assert got[1] == {"git-tracked-core-file": [], "git-large-file": []}
    # the second dump.bin only: the first is behind the shallow boundary
    assert got[2] == {"git-tracked-core-file": [("core.7", "history", 24),
                                                ("dump.bin", "history", 20 + 1536 * 1024)],
                      "git-large-file": EXPECTED["git-large-file"]}


def test_no_finding_costs_one_walk_and_no_blob_inflated(tmp_path):
    """A repo with large blobs that are no core and no large file: one rev-list (no
    naming walk) and no `cat-file --batch` (the heads come from the pack)."""
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    for i in range(3):
        (repo / "uv.lock").write_text(f"v = {i}\n" + "x = 1\n" * (300 * 1024))
        commit(repo, str(i))
    git(repo, "gc", "-q")
    env, log = logged_git(tmp_path)
    proc = run_doctor("run", "--repo", str(repo), "--static", "--only",
                      "git-tracked-core-file,git-large-file", "--format", "json",
                      env=env)
    assert [r["status"] for r in json.loads(proc.stdout)["results"]] == ["pass", "pass"]
    calls = log.read_text().splitlines()
    assert len([c for c in calls if " rev-list " in c]) == 1, calls
    assert not [c for c in calls if c.endswith(" cat-file --batch")], calls


@pytest.mark.parametrize("shape", ["loose", "packed", "ref-deltas", "sha256"])
def test_pack_reader_reads_what_git_reads(tmp_path, shape):
    repo = history_repo(tmp_path / "r", init=("--object-format=sha256",)
                        if shape == "sha256" else ())
    for i in range(5):   # small deltas too, some inserting, some copying from far in
        (repo / "log.txt").write_text("".join(f"line {j}\n" for j in range(i * 900, 9000)))
        commit(repo, f"log {i}")
    if shape in ("packed", "sha256"):
        git(repo, "gc", "-q", "--aggressive")
    elif shape == "ref-deltas":
        git(repo, "-c", "repack.useDeltaBaseOffset=false", "gc", "-q", "--aggressive")
    listed = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objecttype) "
                 "%(objectname)").splitlines()
    oids = [line.split()[1] for line in listed if line.startswith("blob ")]
    objects = repo / ".git" / "objects"
    for n in (20, 5000):
        heads = Store(str(objects)).heads(oids, n)
        assert set(heads) == set(oids)
        for oid in oids:
            whole = subprocess.run(["git", "cat-file", "blob", oid], cwd=repo, check=True,
                                   capture_output=True).stdout
            assert heads[oid] == whole[:n], oid
    # what it cannot find is left to git: an object of another store, a missing one
    assert Store(str(objects)).heads(["0" * len(oids[0])], 20) == {}


def test_untracked_core_found_from_the_job_models_one_listing(tmp_path):
    """The untracked files come from the listing the job model made (one `ls-files
    --others` per run, not one more for the git check), and an untracked core is found."""
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "train.py").write_text("print('hi')\n")
    git(repo, "init", "-q")
    commit(repo, "one")
    (repo / "core.4242").write_bytes(CORE_HEAD + bytes(100))
    env, log = logged_git(tmp_path)
    proc = run_doctor("run", "--repo", str(repo), "--static", "--format", "json",
                      env=env)
    (res,) = [r for r in json.loads(proc.stdout)["results"] if r["id"] == "git-tracked-core-file"]
    assert [(f["data"]["path"], f["data"]["where"]) for f in res["findings"]] == \
        [("core.4242", "untracked")], res
    others = [c for c in log.read_text().splitlines()
              if " ls-files -z --others --exclude-standard " in f" {c} "]
    assert len(others) == 1, others


def test_a_git_without_rev_list_filter_finds_the_same(tmp_path):
    """git before 2.16 has no `rev-list --filter` (it dies: "unrecognized argument"):
    the history is then walked and sized whole, as before, with the same findings."""
    repo = history_repo(tmp_path / "r")
    git(repo, "gc", "-q", "--aggressive")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    real = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    (bin_dir / "git").write_text(
        '#!/bin/sh\nfor a in "$@"; do case "$a" in --filter=*)\n'
        '  echo "fatal: unrecognized argument: $a" >&2; exit 128;; esac; done\n'
        f'exec {real} "$@"\n')
    (bin_dir / "git").chmod(0o755)
    proc = run_doctor("run", "--repo", str(repo), "--static", "--only",
                      "git-tracked-core-file,git-large-file", "--format", "json",
                      env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    got = {r["id"]: sorted((f["data"]["path"], f["data"]["where"], f["data"]["size"])
                           for f in r["findings"]) for r in json.loads(proc.stdout)["results"]}
    assert got == EXPECTED, proc.stdout[-2000:]


def test_pack_reader_never_blocks_on_a_fifo(tmp_path):
    """A FIFO where a pack index or a loose object should be (a hostile .git) is not
    opened for a blocking read: the reader leaves those objects to git, at once."""
    objects = tmp_path / "objects"
    (objects / "pack").mkdir(parents=True)
    os.mkfifo(objects / "pack" / "pack-1.idx")
    (objects / "pack" / "pack-1.pack").write_bytes(b"PACK")
    (objects / "cd").mkdir()
    os.mkfifo(objects / "cd" / ("cd" * 19))
    got: list = []
    # in a thread, so that a blocking open fails the test instead of hanging it
    reader = threading.Thread(target=lambda: got.append(
        Store(str(objects)).heads(["ab" * 20, "cd" * 20], 20)), daemon=True)
    reader.start()
    reader.join(timeout=10)
    assert got == [{}]
    (objects / "pack" / "pack-1.idx").unlink()   # the loose FIFO alone
    assert Store(str(objects)).heads(["cd" * 20], 20) == {}


def test_a_repo_of_many_packs_leaves_the_heads_to_git(tmp_path):
    """Each mapped pack index holds a descriptor while the heads are read: past
    MAX_PACKS packs the reader reads none (git does), and the core in history is found."""
    from doctor.scanners.gitpack import MAX_PACKS

    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    git(repo, "config", "gc.auto", "0")
    (repo / "core").write_bytes(CORE_HEAD + bytes(MIB))   # a large core: its head is read
    commit(repo, "crash")
    (repo / "core").unlink()
    commit(repo, "gone")
    git(repo, "repack", "-q")
    for i in range(MAX_PACKS):
        (repo / "n.txt").write_text(str(i))
        commit(repo, str(i))
        git(repo, "repack", "-q")
    objects = repo / ".git" / "objects"
    assert len(list((objects / "pack").glob("*.idx"))) > MAX_PACKS
    core_oid = git(repo, "rev-parse", "HEAD~" + str(MAX_PACKS + 1) + ":core")
    assert Store(str(objects)).heads([core_oid], 20) == {}
    out = findings(repo)
    assert [p for p, *_ in out["git-tracked-core-file"]] == ["core"], out


def test_a_core_among_more_large_blobs_than_git_reads_is_found(tmp_path):
    """In a `clone --shared` (an alternate object store) every head is git's to read, and
    git reads at most MAX_HEADER_READS: the history's large blobs have no path until
    named, so a core-named one smaller than 401 others was left out (review)."""
    from doctor.scanners.git import MAX_HEADER_READS

    src = tmp_path / "src"
    git(tmp_path, "init", "-q", str(src))
    stream = bytearray()
    for i in range(MAX_HEADER_READS + 2):   # the last one the core, the smallest
        body = CORE_HEAD + bytes(MIB + 4096) if i == MAX_HEADER_READS + 1 \
            else b"big %d\n" % i + bytes(MIB + 8192)
        stream += b"blob\nmark :%d\ndata %d\n" % (i + 1, len(body)) + body + b"\n"
    files = b"".join(b"M 100644 :%d f%03d.bin\n" % (i + 1, i)
                     for i in range(MAX_HEADER_READS + 1))
    stream += (b"commit refs/heads/main\ncommitter t <t@e> 0 +0000\ndata 1\nx\n" + files
               + b"M 100644 :%d core.99\n\n" % (MAX_HEADER_READS + 2))
    stream += (b"commit refs/heads/main\ncommitter t <t@e> 1 +0000\ndata 1\ny\ndeleteall\n"
               b"M 100644 inline r.txt\ndata 3\nhi\n\n")
    subprocess.run(["git", "-C", str(src), "fast-import", "--quiet"], input=bytes(stream),
                   check=True, env=ENV)
    git(src, "symbolic-ref", "HEAD", "refs/heads/main")
    shared = tmp_path / "shared"
    git(tmp_path, "clone", "-q", "--shared", str(src), str(shared))
    out = findings(shared)
    assert [p for p, *_ in out["git-tracked-core-file"]] == ["core.99"], out
