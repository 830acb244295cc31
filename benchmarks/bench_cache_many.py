"""The cache scan on a cache of many small files vs reading each file's first bytes.

    python benchmarks/bench_cache_many.py [--files 1000000] [--rounds 3] [--dir /dev/shm]

Writes --files torch.save files of 3.9 KiB (a sample dict of two tensors), 1,000 per
directory, into a new directory under --dir (default /dev/shm: the cache lives in
memory, so the pages are warm for every contender). One file is a real torch.save; the
others are its bytes with the archive's record prefix renamed per file, as torch would
have named it (writing 1M files with torch.save takes minutes); every 100,000th file
holds cuda:0 tensors, the odd files the scan must find. Then alternates, for --rounds
rounds after one warm-up round:

- doctor: `doctor run --only cuda-tensor-in-shared-cache --cache DIR --format json`,
  the whole process as a user runs it; the report must name exactly the odd files and
  say every file was scanned;
- floor: `find DIR -type f -exec head -c 64 {} +`: open and read every file's first
  bytes, in C, one process. Any scan that looks inside every file does at least this
  much (the doctor reads the archive's header, its central directory at the end and
  its pickle: the whole of a 4 KiB file);
- find: `find DIR -type f`, the walk alone, for reference.

The directory is removed at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rounds import alternate, medians  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CHECK = "cuda-tensor-in-shared-cache"
PER_DIR = 1000
ODD_EVERY = 100_000

SAMPLE = r'''
import sys, torch
torch.save({"x": torch.randn(540), "y": torch.tensor(3)}, sys.argv[1])
torch.serialization.register_package(1, lambda obj: "cuda:0", lambda obj, loc: obj)
torch.save({"x": torch.randn(540), "y": torch.tensor(3)}, sys.argv[2])
'''


def write_cache(base: Path, n: int) -> list:
    """n files under base/dNNNN/; the paths of the cuda ones."""
    subprocess.run([sys.executable, "-c", SAMPLE, str(base / "s_0000000.pt"),
                    str(base / "s_0000001.pt")], check=True)
    cpu, cuda = (base / "s_0000000.pt").read_bytes(), (base / "s_0000001.pt").read_bytes()
    cuda = cuda.replace(b"s_0000001/", b"s_0000000/")
    os.unlink(base / "s_0000000.pt")
    os.unlink(base / "s_0000001.pt")
    odd = []
    for i in range(n):
        d = base / f"d{i // PER_DIR:04d}"
        if i % PER_DIR == 0:
            d.mkdir()
        name = f"s_{i:07d}"
        src = cuda if i % ODD_EVERY == ODD_EVERY // 2 else cpu
        (d / f"{name}.pt").write_bytes(src.replace(b"s_0000000/", name.encode() + b"/"))
        if src is cuda:
            odd.append(str(d / f"{name}.pt"))
    return odd


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default="/dev/shm", help="where to write the cache")
    a = ap.parse_args()
    st = os.statvfs(a.dir)
    need = a.files * 5 * 1024
    if st.f_bavail * st.f_frsize < need:
        raise SystemExit(f"{a.dir} has less than the {need / 2**30:.1f} GiB this needs")
    base = Path(tempfile.mkdtemp(prefix="bench-cache-many-", dir=a.dir))
    repo = Path(tempfile.mkdtemp(prefix="bench-cache-many-repo-"))
    try:
        print(f"writing {a.files} files of ~4 KiB in {base} …", flush=True)
        odd = write_cache(base, a.files)
        report: dict = {}

        def doctor() -> None:
            proc = subprocess.run(
                [sys.executable, "-m", "doctor", "run", "--only", CHECK, "--cache", str(base),
                 "--repo", str(repo), "--format", "json"],
                cwd=ROOT, capture_output=True, text=True, timeout=600)
            doc = json.loads(proc.stdout)
            (res,) = [r for r in doc["results"] if r["id"] == CHECK]
            found = sorted(p for f in res["findings"]
                           for p in f["data"].get("files", [f["data"]["path"]]))
            fact = doc["facts"]["cache_scan"]
            assert found == sorted(odd), (found, odd)
            assert fact["files_scanned"] == a.files and fact["complete"], fact
            report.update(fact)

        def floor() -> None:
            subprocess.run(f"find {base} -type f -exec head -c 64 {{}} + > /dev/null",
                           shell=True, check=True)

        def walk() -> None:
            subprocess.run(f"find {base} -type f > /dev/null", shell=True, check=True)

        times, _ = alternate({"doctor": doctor, "floor": floor, "find": walk},
                             rounds=a.rounds, warmup=1, show=True)
        # the largest process so far: the doctor's (its worker processes are smaller)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print()
        med = medians(times)
        print(f"\ndoctor: {a.files / med['doctor']:,.0f} files/s end to end, "
              f"{med['doctor'] / med['floor']:.2f}x the floor (goal: <= 10 s for 1M files); "
              f"the scan itself {report['duration_s']:.2f} s with {report['processes']} "
              f"worker process(es) on {len(os.sched_getaffinity(0))} CPUs; peak RSS "
              f"{rss:.0f} MiB")
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(repo, ignore_errors=True)


if __name__ == "__main__":
    main()
