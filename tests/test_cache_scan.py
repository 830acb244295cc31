"""The cache scan as a user sees it: findings, grouping, deadline, CLI; and shm-too-small."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import doctor.scanners.cachescan as cachescan
from conftest import result_of, run_doctor, run_json
from doctor.job.context import Job
from doctor.probes.shm import stale_segments
from doctor.registry import get
from doctor.runner import run_checks
from doctor.settings import Settings
from harness import FIXTURES, materialize, run_case

CUDA = "cuda-tensor-in-shared-cache"
SHM = "shm-too-small"


def _torch_available() -> bool:
    return subprocess.run([sys.executable, "-c", "import torch"],
                          capture_output=True).returncode == 0


needs_torch = pytest.mark.skipif(not _torch_available(), reason="torch is not installed")

MAKE_CACHE = r'''
import sys, torch
torch.serialization.register_package(1, lambda obj: "cuda:0", lambda obj, loc: obj)
out, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    torch.save({"x": [torch.ones(4)]}, f"{out}/{i:04d}.pt")
'''


@pytest.fixture(scope="module")
def cuda_cache(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cache")
    subprocess.run([sys.executable, "-c", MAKE_CACHE, str(out), "30"], check=True,
                   timeout=120)
    return out


@needs_torch
def test_malicious_payload_never_runs_but_is_live(tmp_path):
    case = FIXTURES / CUDA / "fail-malicious-reduce"
    result, _ = run_case(CUDA, case, tmp_path)
    root = tmp_path / case.name
    assert result["status"] == "fail"
    assert result["findings"][0]["data"]["unsafe_globals"] == ["posix.system"]
    assert not (root / "PWNED").exists(), "the doctor executed the pickle"
    # The payload is real: torch.load(weights_only=False) runs it.
    subprocess.run([sys.executable, "-c", "import sys, torch; torch.load(sys.argv[1], "
                    "weights_only=False)", str(root / "cache" / "model.ckpt")],
                   check=True, timeout=120)
    assert (root / "PWNED").exists()


@needs_torch
def test_cli_json_report_and_exit_code(cuda_cache):
    code, doc = run_json("--only", CUDA, "--cache", str(cuda_cache / "0003.pt"),
                         "--repo", str(cuda_cache))
    assert code == 1
    res = result_of(doc, CUDA)
    assert res["status"] == "fail" and res["severity"] == "error"
    (f,) = res["findings"]
    assert f["data"]["path"] == str(cuda_cache / "0003.pt")
    assert f["data"]["devices"] == ["cuda:0"] and f["data"]["unsafe_globals"] == []
    assert f["location"]["path"] == "0003.pt"
    assert "map_location=\"cpu\"" in f["commands"][0]
    assert doc["facts"]["cache_scan"]["torch_files"] == 1


@needs_torch
def test_large_cache_is_one_grouped_row_in_the_table(cuda_cache):
    proc = run_doctor("run", "--only", CUDA, "--cache", str(cuda_cache),
                      "--repo", str(cuda_cache))
    assert proc.returncode == 1, proc.stderr
    assert f"30 torch.save files under {cuda_cache}/ hold CUDA tensors (cuda:0: 30 files)" \
        in proc.stdout.replace("\n", " ").replace("  ", " ") or "30 torch.save files" in \
        proc.stdout
    assert proc.stdout.count("hold CUDA tensors") == 1
    assert "find " in proc.stdout and "-exec python -c" in proc.stdout
    assert proc.stderr == ""        # no progress when stderr is not a terminal


@needs_torch
def test_grouped_json_keeps_every_path(cuda_cache):
    code, doc = run_json("--only", CUDA, "--cache", str(cuda_cache), "--repo",
                         str(cuda_cache))
    (f,) = result_of(doc, CUDA)["findings"]
    assert f["data"]["count"] == 30 and len(f["data"]["files"]) == 30
    assert f["data"]["path"] == str(cuda_cache)


def _job(tmp_path: Path, caches: list, options: dict | None = None, facts=None,
         configs: list = ()) -> Job:
    settings = Settings(options=options or {})
    return Job(tmp_path, caches=caches, settings=settings, env={}, facts=facts,
               configs=configs)


def test_slow_filesystem_gives_a_partial_result_not_a_hang(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    for i in range(200):
        (cache / f"{i:04d}.bin").write_bytes(b"x")
    hang = threading.Event()
    real = cachescan.inspect_path

    def slow_fs(path, *args):  # a dead NFS server: one read in ten never returns
        if path.endswith("7.bin"):
            hang.wait()
        time.sleep(0.01)
        return real(path, *args)

    monkeypatch.setattr(cachescan, "inspect_path", slow_fs)
    job = _job(tmp_path, [str(cache)], {CUDA: {"timeout_s": 1.0, "workers": 2}})
    t0 = time.monotonic()
    report = run_checks(job, [get(CUDA)])
    elapsed = time.monotonic() - t0
    hang.set()
    (res,) = [r for r in report.doc()["results"] if r["id"] == CUDA]
    assert elapsed < 5, elapsed
    assert res["status"] == "fail" and res["severity"] == "warning"
    (f,) = res["findings"]
    assert re.match(r"scanned \d+ of (at least )?\d+ files before the 1 s budget",
                    f["message"]), f["message"]
    assert 0 < f["data"]["files_scanned"] < 200


def test_the_pool_grows_only_when_files_are_slow(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    for i in range(60):
        (cache / f"{i:04d}.bin").write_bytes(b"x")
    real = cachescan.inspect_path
    threads: set = set()

    def slow_fs(path, *args):  # 20 ms of network latency per file
        threads.add(threading.current_thread().name)
        time.sleep(0.02)
        return real(path, *args)

    monkeypatch.setattr(cachescan, "inspect_path", slow_fs)
    res = cachescan.scan([str(cache)], deadline_s=30, workers=4)
    assert res.complete and res.files_scanned == 60
    assert len(threads) >= 2, threads  # I/O-bound: more workers overlap the latency


def test_check_timeout_follows_its_budget_option(tmp_path):
    job = _job(tmp_path, [], {CUDA: {"timeout_s": 300}})
    assert get(CUDA).timeout_for(job) > 300


def test_fifo_symlink_loop_and_dangling_link_are_skipped(tmp_path):
    d = tmp_path / "c"
    (d / "sub").mkdir(parents=True)
    os.mkfifo(d / "pipe")
    os.symlink("..", d / "sub" / "loop")
    os.symlink("nowhere", d / "dangling")
    (d / "x.pt").write_text("not torch")
    res = cachescan.scan([str(d)], deadline_s=10)
    assert res.complete and res.files_seen == 1 and res.files_scanned == 1
    assert res.special == [str(d / "pipe")] and res.unreadable == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_a_warning(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    secret = d / "locked.pt"
    secret.write_bytes(b"PK\x03\x04")
    secret.chmod(0)
    report = run_checks(_job(tmp_path, [str(d)]), [get(CUDA)])
    (res,) = report.doc()["results"]
    assert res["severity"] == "warning"
    assert res["findings"][0]["location"]["path"] == "c/locked.pt"


@pytest.mark.skipif(not os.path.exists("/proc/self/mem"), reason="needs Linux /proc")
def test_file_that_fails_to_read_is_a_warning_not_fatal(tmp_path):
    d = tmp_path / "c"
    d.mkdir()
    os.symlink("/proc/self/mem", d / "eio.pt")   # a regular file whose read() fails (EIO)
    (res,) = run_checks(_job(tmp_path, [str(d)]), [get(CUDA)]).doc()["results"]
    assert res["status"] == "fail" and res["severity"] == "warning", res
    (f,) = res["findings"]
    assert f["message"].startswith("cannot be read") and f["data"]["error"]


def test_no_cache_paths_is_a_skip_with_the_reason(tmp_path):
    report = run_checks(_job(tmp_path, []), [get(CUDA)])
    (res,) = report.doc()["results"]
    assert res["status"] == "skip" and "no cache paths" in res["reason"]


def test_config_keys_that_name_caches(tmp_path):
    from doctor.checks.cache import cache_paths, is_cache_key

    for key in ("cache_dir", "latent_cache_dir", "CACHE_ROOT", "val_cache_path", "cache_file"):
        assert is_cache_key(key)
    for key in ("cache", "use_cache", "cache_size", "cached", "dir"):
        assert not is_cache_key(key)
    cfg = tmp_path / "train.yaml"
    cfg.write_text("data:\n  cache_dir: /dev/shm/ups\n  val:\n    lat_cache_dir: [a, b]\n"
                   "  other_cache_path: ${oc.env:X}\n")
    paths = cache_paths(_job(tmp_path, [], configs=[str(cfg)]))
    assert [str(c.path) for c in paths] == ["/dev/shm/ups", str(tmp_path / "a"),
                                            str(tmp_path / "b")]
    assert paths[0].location.line == 2 and paths[1].location.line == 4


# ---- shm-too-small ----------------------------------------------------------------------
def test_live_shm_probe_on_this_machine(tmp_path):
    shm = _job(tmp_path, []).fact("shm")
    if not os.path.isdir("/dev/shm"):
        assert shm is None
        return
    st = os.statvfs("/dev/shm")
    assert shm["total_bytes"] == st.f_blocks * st.f_frsize > 0
    assert 0 <= shm["free_bytes"] <= shm["total_bytes"]
    assert all(s["name"].startswith("torch_") for s in shm["stale"])


def test_stale_segments_dead_owner_and_age(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    old = time.time() - 3 * 24 * 3600
    for name in (f"torch_{dead.pid}_1804289383_0", f"torch_{os.getpid()}_1_0",
                 "torch_unknown_old", "torch_unknown_new", "not_torch"):
        (tmp_path / name).write_bytes(b"x" * 100)
    for name in (f"torch_{dead.pid}_1804289383_0", f"torch_{os.getpid()}_1_0",
                 "torch_unknown_old", "not_torch"):
        os.utime(tmp_path / name, (old, old))
    stale = stale_segments(str(tmp_path))
    assert [(s["name"], s["rule"]) for s in stale] == [
        (f"torch_{dead.pid}_1804289383_0", "owner-dead"), ("torch_unknown_old", "age")]
    assert all(s["size"] > 0 for s in stale)


def test_shm_cache_counts_against_free_space(tmp_path):
    shm_root = tmp_path / "shm"
    (shm_root / "ups_cache").mkdir(parents=True)
    (shm_root / "ups_cache" / "a.pt").write_bytes(os.urandom(3 * 1024 * 1024))
    cfg = tmp_path / "train.yaml"
    cfg.write_text(f"data:\n  cache_dir: {shm_root}/ups_cache\n  num_workers: 4\n")
    gib = 1024 ** 3
    facts = {"shm": {"path": str(shm_root), "total_bytes": 2 * gib,
                     "free_bytes": 100 * 1024 * 1024, "stale": []}}
    job = _job(tmp_path, [], {SHM: {"batch_mib": 32}}, facts=facts, configs=[str(cfg)])
    (res,) = run_checks(job, [get(SHM)]).doc()["results"]
    assert res["status"] == "fail", res
    (f,) = res["findings"]
    assert f["data"]["cache_bytes"] >= 3 * 1024 * 1024
    assert f["data"]["workers_bytes"] == 4 * 2 * 32 * 1024 * 1024
    assert f["location"] == {"path": "train.yaml", "line": 3}
    # The same job on a node with room passes.
    facts["shm"]["free_bytes"] = gib
    (res,) = run_checks(_job(tmp_path, [], {SHM: {"batch_mib": 32}}, facts=facts,
                             configs=[str(cfg)]), [get(SHM)]).doc()["results"]
    assert res["status"] == "pass", res


def test_shm_fixture_setup_leaves_dev_shm_alone(tmp_path):
    before = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    for case in sorted((FIXTURES / SHM).iterdir()):
        materialize(case, tmp_path / case.name)
    after = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    assert after <= before


def test_report_is_json_serialisable(tmp_path):
    job = _job(tmp_path, [str(tmp_path)])
    doc = run_checks(job, [get(CUDA), get(SHM)]).doc()
    json.dumps(doc)


# ---- caches of many files: one read per file, one unpickle per distinct pickle ----------
SAMPLES = r'''
import argparse, sys, torch
out = sys.argv[1]
torch.save({"x": torch.ones(8), "y": torch.tensor(3)}, f"{out}/cpu_0000.pt")
torch.save({"x": torch.ones(8), "cfg": argparse.Namespace(a=1)}, f"{out}/uns_0000.pt")
torch.save({"x": torch.ones(8)}, f"{out}/leg_0000.pt", _use_new_zipfile_serialization=False)
torch.serialization.register_package(1, lambda obj: "cuda:0", lambda obj, loc: obj)
torch.save({"x": torch.ones(8), "y": torch.tensor(3)}, f"{out}/gpu_0000.pt")
'''


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> dict:
    """One real torch.save file per kind: cpu, gpu (cuda:0), uns (an unsafe global), leg
    (the legacy format)."""
    out = tmp_path_factory.mktemp("samples")
    subprocess.run([sys.executable, "-c", SAMPLES, str(out)], check=True, timeout=120)
    return {p.name[:3]: p.read_bytes() for p in out.iterdir()}


def _copy(samples: dict, kind: str, directory: Path, i: int) -> Path:
    """Sample `kind` as torch writes it to directory/<kind>_<i>.pt: the archive's record
    prefix is the file's name, so each copy's records are named after it."""
    path = directory / f"{kind}_{i:04d}.pt"
    path.write_bytes(samples[kind].replace(f"{kind}_0000/".encode(),
                                           f"{kind}_{i:04d}/".encode()))
    return path


def _missing_record(samples: dict, directory: Path, i: int) -> Path:
    """A cpu sample whose pickle is the uniform one but whose archive lacks data/1."""
    path = _copy(samples, "cpu", directory, i)
    path.write_bytes(path.read_bytes().replace(b"/data/1", b"/data/9"))
    return path


def _uniform_cache(samples: dict, root: Path, dirs: int, per_dir: int) -> dict:
    """dirs x per_dir uniform cpu samples, plus one odd file of each kind among them."""
    for d in range(dirs):
        (root / f"d{d}").mkdir(parents=True)
        for i in range(per_dir):
            _copy(samples, "cpu", root / f"d{d}", d * per_dir + i)
    odd = {"gpu": _copy(samples, "gpu", root / "d0", 7),
           "uns": _copy(samples, "uns", root / f"d{dirs - 1}", 8),
           "missing": _missing_record(samples, root / f"d{dirs // 2}", dirs * per_dir)}
    return {k: str(v) for k, v in odd.items()}


def _answer(info) -> tuple:
    return None if info is None else (info.format, info.locations, info.unsafe_globals,
                                      info.problem)


@needs_torch
def test_inspect_path_answers_as_inspect_file_and_unpickles_once(samples, tmp_path,
                                                                   monkeypatch):
    from doctor.scanners.torchsave import inspect_file
    files = [_copy(samples, kind, tmp_path, 1) for kind in ("cpu", "gpu", "uns", "leg")]
    files.append(_missing_record(samples, tmp_path, 2))
    (tmp_path / "cut.pt").write_bytes(samples["cpu"][: len(samples["cpu"]) // 2])
    (tmp_path / "other.bin").write_bytes(b"not a torch file")
    (tmp_path / "empty.pt").write_bytes(b"")
    files += [tmp_path / "cut.pt", tmp_path / "other.bin", tmp_path / "empty.pt"]
    calls = []
    real = cachescan._unpickle
    monkeypatch.setattr(cachescan, "_unpickle", lambda data: calls.append(1) or real(data))
    memo: dict = {}
    for path in files:
        want = inspect_file(path)
        for _ in range(2):   # the second answer comes from the memo
            got = cachescan.inspect_path(str(path), 64 * 1024 * 1024, memo)
            if got is cachescan._CLEAN:
                assert want is not None and not cachescan._reportable(want), path
            else:
                assert _answer(got) == _answer(want), path
    assert "tensor record(s) missing" in inspect_file(files[4]).problem
    # cpu and the missing-record copy share one pickle; gpu and uns have their own
    assert len(calls) == 3, len(calls)


@needs_torch
def test_odd_files_among_many_uniform_ones_are_found(samples, tmp_path):
    cache = tmp_path / "cache"
    odd = _uniform_cache(samples, cache, dirs=4, per_dir=150)
    code, doc = run_json("--only", CUDA, "--cache", str(cache), "--repo", str(tmp_path))
    assert code == 1
    res = result_of(doc, CUDA)
    found = {f["data"]["path"]: f for f in res["findings"]}
    assert set(found) == set(odd.values()), sorted(found)
    assert found[odd["gpu"]]["data"]["devices"] == ["cuda:0"]
    assert found[odd["gpu"]]["severity"] == "error"
    assert found[odd["uns"]]["data"]["unsafe_globals"] == ["argparse.Namespace"]
    assert "1 tensor record(s) missing" in found[odd["missing"]]["message"]
    fact = doc["facts"]["cache_scan"]
    assert fact["files_scanned"] == fact["torch_files"] == 603 and fact["complete"]
    assert "processes" in fact


@needs_torch
def test_worker_processes_share_the_scan_and_are_reaped(samples, tmp_path, monkeypatch):
    import psutil
    cache = tmp_path / "cache"
    odd = _uniform_cache(samples, cache, dirs=4, per_dir=250)
    # Files count as fast from the first tick, and this process's own worker is slow
    # (2 ms a file): the worker processes, started at once, take chunks from it.
    monkeypatch.setattr(cachescan, "GROW_S", 0.001)
    monkeypatch.setattr(cachescan, "SLOW_FILES_PER_S", 0)
    real = cachescan._inspect
    here = []

    def slow_here(*args):
        here.append(1)
        time.sleep(0.002)
        return real(*args)

    monkeypatch.setattr(cachescan, "_inspect", slow_here)
    res = cachescan.scan([str(cache)], deadline_s=60, workers=2)
    assert res.complete and res.files_scanned == res.torch_files == 1003
    assert res.processes >= 1 and len(here) < 1003, (res.processes, len(here))
    assert {i.path for i in res.flagged} == set(odd.values())
    assert [i.devices for i in res.flagged if i.path == odd["gpu"]] == [["cuda:0"]]
    assert psutil.Process().children() == []
    # stopped by its deadline while the processes work: they are killed and reaped too
    res = cachescan.scan([str(cache)], deadline_s=0.03, workers=2)   # < a Python start
    assert not res.complete and res.files_scanned < 1003 and res.processes >= 1
    assert psutil.Process().children() == []
    # a worker process that dies (here: at once) leaves its chunks to its thread
    monkeypatch.setattr(cachescan, "_inspect", real)
    monkeypatch.setattr(sys, "executable", shutil.which("false"))
    res = cachescan.scan([str(cache)], deadline_s=60, workers=2)
    assert res.complete and res.files_scanned == 1003 and res.processes >= 1
    assert {i.path for i in res.flagged} == set(odd.values())
    assert psutil.Process().children() == []
