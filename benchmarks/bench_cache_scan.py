"""The cache scan vs torch.load(map_location="cpu") over the same torch.save files.

    python benchmarks/bench_cache_scan.py [--files 200] [--mib 16] [--rounds 3]

Writes --files torch.save files of about --mib MiB each (zip format, tensors tagged
"cuda:0" the way a GPU-built cache is) into a temporary directory, then alternates, for
--rounds rounds: the doctor's scan (doctor.scanners.cachescan.scan, in a child process that never
imports torch) and torch.load(map_location="cpu") of every file (in a torch child). Each
child times only its own work and reports its peak RSS. Memory flatness: the doctor's
scan is repeated over the same number of 1 MiB files, and its peak RSS compared.
The page cache is warm for both sides (the files were just written), so the ratio
compares the work each side does, not the disk. The directory is removed at the end.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MAKE = r'''
import sys, torch
out, n, mib = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
torch.serialization.register_package(1, lambda obj: "cuda:0", lambda obj, loc: obj)
per = int(mib * 1024 * 1024 / 4 / 4)          # four float32 tensors per sample
for i in range(n):
    sample = {"fields": [torch.randn(per) for _ in range(3)], "grid": {"x": torch.randn(per)}}
    torch.save(sample, f"{out}/sample_{i:05d}.pt")
'''

DOCTOR = r'''
import json, resource, sys, time
from doctor.scanners.cachescan import scan
t0 = time.perf_counter()
res = scan([sys.argv[1]], deadline_s=600, workers=4)
dt = time.perf_counter() - t0
assert res.complete and res.torch_files == len(res.flagged) == int(sys.argv[2]), res
assert all(i.devices == ["cuda:0"] for i in res.flagged)
print(json.dumps({"s": dt, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  "torch_imported": "torch" in sys.modules}))
'''

TORCH = r'''
import json, os, resource, sys, time
import torch
files = sorted(os.path.join(sys.argv[1], f) for f in os.listdir(sys.argv[1]))
t0 = time.perf_counter()
for f in files:
    obj = torch.load(f, map_location="cpu")
    del obj
dt = time.perf_counter() - t0
print(json.dumps({"s": dt, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''

BASELINE = r'''
import json, resource, sys
import doctor.scanners.cachescan
print(json.dumps({"rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
'''


def child(code: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"child failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def drop_page_cache() -> bool:
    try:
        subprocess.run(["sync"], check=False)
        with open("/proc/sys/vm/drop_caches", "w") as fh:
            fh.write("3\n")
        return True
    except OSError:
        return False


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--mib", type=float, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", help="where to write the files (default: a temporary directory)")
    ap.add_argument("--cold", action="store_true",
                    help="drop the page cache before every timed run (root only), as for a "
                    "cache on Lustre/NFS that this node has not read yet; the default measures "
                    "warm pages, as for a cache in /dev/shm")
    a = ap.parse_args()
    if a.cold and not drop_page_cache():
        raise SystemExit("--cold needs root: cannot write /proc/sys/vm/drop_caches")
    base = Path(tempfile.mkdtemp(prefix="bench-cache-", dir=a.dir))
    try:
        big, small = base / "big", base / "small"
        big.mkdir()
        small.mkdir()
        print(f"writing {a.files} files of ~{a.mib:g} MiB and {a.files} of ~1 MiB in {base} …",
              flush=True)
        subprocess.run([sys.executable, "-c", MAKE, str(big), str(a.files), str(a.mib)],
                       check=True)
        subprocess.run([sys.executable, "-c", MAKE, str(small), str(a.files), "1"],
                       check=True)
        total = sum(p.stat().st_size for p in big.iterdir())
        print(f"{a.files} files, {total / 2**30:.2f} GiB in all")
        doctor_s, torch_s, doctor_rss, torch_rss = [], [], [], []
        print("page cache:", "dropped before every run (cold)" if a.cold else "warm")
        for r in range(a.rounds):
            if a.cold:
                drop_page_cache()
            d = child(DOCTOR, str(big), str(a.files))
            if a.cold:
                drop_page_cache()
            t = child(TORCH, str(big))
            assert not d["torch_imported"], "the doctor's scan imported torch"
            doctor_s.append(d["s"])
            torch_s.append(t["s"])
            doctor_rss.append(d["rss_kib"])
            torch_rss.append(t["rss_kib"])
            print(f"round {r + 1}: doctor scan {d['s'] * 1000:8.1f} ms   "
                  f"torch.load {t['s'] * 1000:8.1f} ms   ratio {t['s'] / d['s']:6.1f}x")
        small_rss = child(DOCTOR, str(small), str(a.files))["rss_kib"]
        base_rss = child(BASELINE)["rss_kib"]
        ds, ts = statistics.median(doctor_s), statistics.median(torch_s)
        print(f"\nmedian: doctor scan {ds * 1000:.1f} ms ({ds / a.files * 1e6:.0f} µs/file), "
              f"torch.load {ts * 1000:.1f} ms ({ts / a.files * 1e3:.1f} ms/file)")
        print(f"ratio torch.load / doctor scan: {ts / ds:.1f}x (goal ≥ 50x)")
        print(f"peak RSS: doctor scan {max(doctor_rss) / 1024:.1f} MiB over {a.mib:g} MiB files, "
              f"{small_rss / 1024:.1f} MiB over 1 MiB files (interpreter + doctor imports alone: "
              f"{base_rss / 1024:.1f} MiB); torch.load {max(torch_rss) / 1024:.1f} MiB")
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
