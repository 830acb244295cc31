"""Issue 16, cause 8: inputs are trusted no more than they should be (and cause 7's
corrupt repository). Each test drives the real CLI on a hostile input and checks what
the user sees, and that nothing of the input ran or blew up the doctor's memory."""
from __future__ import annotations

import io
import json
import os
import pickle
import struct
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

from conftest import ROOT, result_of, validate_report

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
MAGIC = 0x1950A86A20F9469CFC6C

# The CLI in a child whose address space is capped at 1 GiB: an allocation the input
# asks for beyond that is a MemoryError (the old scanner's fate), not a slow machine.
CAPPED = textwrap.dedent("""\
    import resource, subprocess, sys
    cap = 1 << 30
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    proc = subprocess.run([sys.executable, "-m", "doctor", *sys.argv[1:]])
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    sys.stderr.write(f"\\nPEAK_KIB {peak}\\n")
    sys.exit(proc.returncode)
    """)


def _doctor(*args: str, cwd: Path, capped: bool = False) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **GIT_ENV)
    env.pop("SLURM_JOB_ID", None)
    argv = [sys.executable, "-c", CAPPED, *args] if capped else \
        [sys.executable, "-m", "doctor", *args]
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def _json(proc: subprocess.CompletedProcess) -> dict:
    assert proc.stdout, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return validate_report(json.loads(proc.stdout))


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env=dict(os.environ, **GIT_ENV))


# ---- the cache scan: a pickle states sizes the reader must not believe ------------------
def _zip_pt(pkl: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("evil/data.pkl", pkl)
        z.writestr("evil/version", "3\n")
    return buf.getvalue()


def _legacy_pt(obj_pickle: bytes) -> bytes:
    return (pickle.dumps(MAGIC, protocol=2) + pickle.dumps(1001, protocol=2)
            + pickle.dumps({"protocol_version": 1001}, protocol=2) + obj_pickle)


HOSTILE = {
    # one memo index at 2**28: CPython's unpickler grows its memo to 2**29 slots (4 GiB)
    "memo.pt": (_zip_pt(b"\x80\x02}r" + struct.pack("<I", 1 << 28) + b"."), "memo index"),
    # a string "of 2**40 bytes" in a 30-byte pickle
    "length.pt": (_zip_pt(b"\x80\x04\x8d" + struct.pack("<Q", 1 << 40) + b"x."),
                  "BINUNICODE8"),
    # a frame "of 2**50 bytes", in the legacy format (read from the file, not a buffer)
    "frame.pt": (_legacy_pt(b"\x80\x04\x95" + struct.pack("<Q", 1 << 50) + b"N."), "FRAME"),
    # a text memo index of 10**12 (PUT), legacy format
    "put.pt": (_legacy_pt(b"\x80\x02Np1000000000000\n."), "memo index"),
    # 2.5 MB of EMPTY_SET opcodes: each is a 1-byte opcode and a 216-byte set
    "sets.pt": (_zip_pt(b"\x80\x04(" + b"\x8f" * 2_500_000 + b"l."), "MiB of memory"),
}


def test_hostile_pickles_are_findings_and_never_allocated(tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    for name, (data, _) in HOSTILE.items():
        (cache / name).write_bytes(data)
    assert len((cache / "memo.pt").read_bytes()) < 300
    proc = _doctor("run", "--no-smoke", "--only", "cuda-tensor-in-shared-cache",
                   "--cache", str(cache), "--format", "json", cwd=tmp_path, capped=True)
    doc = _json(proc)
    res = result_of(doc, "cuda-tensor-in-shared-cache")
    assert res["status"] == "fail", res      # never "clean"
    problems = {Path(f["data"]["path"]).name: f["data"].get("problem", "")
                for f in res["findings"]}
    for name, (_, needle) in HOSTILE.items():
        assert needle in problems.get(name, ""), (name, problems)
    assert "MemoryError" not in proc.stdout
    peak_kib = int(proc.stderr.rsplit("PEAK_KIB", 1)[1].split()[0])
    assert peak_kib < 300 * 1024, f"the scan took {peak_kib // 1024} MiB"


# ---- package-not-importable: the lookup runs nothing of the repo -------------------------
def test_module_lookup_runs_no_repo_code(tmp_path):
    marker = tmp_path / "RAN"
    plant = f"open({str(marker)!r}, 'a').write(__name__ + ' ')\n"
    repo = tmp_path / "repo"
    (repo / "src" / "mypkg").mkdir(parents=True)
    (repo / "src" / "mypkg" / "__init__.py").write_text(plant)
    (repo / "src" / "mypkg" / "data").mkdir()
    (repo / "src" / "mypkg" / "data" / "__init__.py").write_text(plant)
    for name in ("json.py", "sitecustomize.py", "usercustomize.py", "importlib.py"):
        (repo / name).write_text(plant)            # the job runs from the repo root
        (repo / "src" / name).write_text(plant)    # and puts src/ on PYTHONPATH
    (repo / "train.py").write_text("import mypkg.data\nimport mypkg.nothere\n")
    (repo / "job.sbatch").write_text(textwrap.dedent("""\
        #!/bin/bash
        #SBATCH --nodes=1
        export PYTHONPATH=.:src
        python train.py
        """))
    proc = _doctor("run", "--no-smoke", "--only", "package-not-importable", "--sbatch",
                   str(repo / "job.sbatch"), "--repo", str(repo), "--format", "json",
                   cwd=tmp_path)   # not cwd=repo: `python -m` itself puts cwd on sys.path
    doc = _json(proc)
    assert not marker.exists(), f"the lookup ran repo code: {marker.read_text()}"
    res = result_of(doc, "package-not-importable")
    # still right: mypkg and mypkg.data are found through PYTHONPATH, mypkg.nothere is not
    assert res["status"] == "fail", res
    missing = {f["data"]["module"]: f["data"]["missing"] for f in res["findings"]}
    assert missing == {"mypkg.nothere": "mypkg.nothere"}, res["findings"]


# ---- git: the repository's own config runs nothing ------------------------------------
def test_git_config_commands_of_the_repo_never_run(tmp_path):
    marker = tmp_path / "RAN"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\nexit 0\n")
    hook.chmod(0o755)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "train.py").write_text("print('hi')\n")
    (repo / "core").write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x04\x00" + b"\0" * 64)
    _git(repo, "add", "train.py")
    _git(repo, "commit", "-qm", "one")
    # a signed-looking commit, so that `git log` with log.showSignature calls gpg.program
    raw = subprocess.run(["git", "-C", str(repo), "cat-file", "commit", "HEAD"],
                         capture_output=True, check=True).stdout
    head, _, body = raw.partition(b"\n\n")
    signed = head + b"\ngpgsig -----BEGIN PGP SIGNATURE-----\n -----END PGP SIGNATURE-----\n\n" \
        + body
    oid = subprocess.run(["git", "-C", str(repo), "hash-object", "-t", "commit", "-w",
                          "--stdin"], input=signed, capture_output=True, check=True
                         ).stdout.decode().strip()
    _git(repo, "update-ref", "refs/heads/signed", oid)
    hooks = repo / "hooks"
    hooks.mkdir()
    for name in ("post-index-change", "reference-transaction", "fsmonitor-watchman"):
        (hooks / name).write_bytes(hook.read_bytes())
        (hooks / name).chmod(0o755)
    for key, value in (("core.fsmonitor", str(hook)), ("core.hooksPath", str(hooks)),
                       ("log.showSignature", "true"), ("gpg.program", str(hook))):
        _git(repo, "config", key, value)
    proc = _doctor("run", "--static", "--format", "json", cwd=repo)
    doc = _json(proc)
    assert not marker.exists(), f"git ran the repo's config: {marker.read_text()}"
    # and the git checks did their work: the untracked core dump is found
    core = result_of(doc, "git-tracked-core-file")
    assert core["status"] == "fail" and core["findings"][0]["data"]["path"] == "core", core


# ---- cause 7: a corrupt repository is not a pass ----------------------------------------
def test_corrupt_repository_is_not_a_pass(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "README").write_text("hello\n")
    (repo / "train.py").write_text("print('hi')\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    oid = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD:README"],
                         capture_output=True, text=True, check=True).stdout.strip()
    obj = repo / ".git" / "objects" / oid[:2] / oid[2:]
    obj.chmod(0o644)
    obj.write_bytes(obj.read_bytes()[:2])   # truncated: not even its header can be read
    fsck = subprocess.run(["git", "-C", str(repo), "fsck"], capture_output=True, text=True)
    assert fsck.returncode != 0                      # git agrees: it is corrupt
    proc = _doctor("run", "--static", "--format", "json", cwd=repo)
    doc = _json(proc)
    assert proc.returncode not in (0, 2), proc.returncode
    for check_id in ("git-tracked-core-file", "git-large-file"):
        res = result_of(doc, check_id)
        assert res["status"] == "error", res
        assert "repository is corrupt" in res["reason"] and oid in res["reason"], res
    # a broken index is git's own message, not "nothing tracked"
    (repo / ".git" / "index").write_bytes(b"DIRC\0\0\0\2garbage")
    doc = _json(_doctor("run", "--static", "--format", "json", cwd=repo))
    res = result_of(doc, "git-large-file")
    assert res["status"] == "error" and "git ls-files failed" in res["reason"], res


def test_git_variables_of_the_callers_environment_do_not_swap_the_repository(tmp_path):
    """A git hook runs the doctor with GIT_DIR and GIT_INDEX_FILE set; a user may have
    GIT_WORK_TREE set. They used to make git read another repository than --repo: a
    tracked core dump was "untracked", or the git checks skipped ("not inside a git work
    tree") and the run passed."""
    repo, other = tmp_path / "repo", tmp_path / "other"
    for r in (repo, other):
        r.mkdir()
        _git(r, "init", "-q")
        (r / "train.py").write_text("print('hi')\n")
    (repo / "core").write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x04\x00" + b"\0" * 64)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    _git(other, "add", ".")
    _git(other, "commit", "-qm", "one")
    for name, value in (("GIT_DIR", other / ".git"), ("GIT_WORK_TREE", other),
                        ("GIT_INDEX_FILE", tmp_path / "no-index")):
        env = dict(os.environ, PYTHONPATH=str(ROOT), **{name: str(value)})
        env.pop("SLURM_JOB_ID", None)
        proc = subprocess.run([sys.executable, "-m", "doctor", "run", "--repo", str(repo),
                               "--static", "--only", "git-tracked-core-file", "--format",
                               "json"], env=env, capture_output=True, text=True, timeout=120)
        core = result_of(_json(proc), "git-tracked-core-file")
        assert core["status"] == "fail", (name, core)
        assert "tracked by git" in core["findings"][0]["message"], (name, core)


def test_a_yaml_document_that_contains_itself_is_refused_not_a_hang(tmp_path):
    """`&a [*a]`: the alias-expansion guard walked the node graph forever, its stack
    growing without bound, for doctor.yaml and a training config alike."""
    for name, args, text in (
            ("doctor.yaml", [], "&a [*a]\n"),
            ("c.yaml", ["--config", "c.yaml"], "trainer: &t {devices: 1, sub: {x: [*t]}}\n")):
        repo = tmp_path / name
        repo.mkdir()
        (repo / name).write_text(text)
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        proc = subprocess.run([sys.executable, "-m", "doctor", "run", "--static", *args],
                              cwd=repo, env=env, capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr == (f"doctor: error: {repo / name}: invalid YAML: an alias inside "
                               "the node it names (the document contains itself)\n")
