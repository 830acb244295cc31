"""doctor/scanners/torchsave.py against files written by the real torch.save (in a child process:
this test process, like the doctor, never imports torch)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from doctor.scanners.torchsave import WEIGHTS_ONLY_SAFE_GLOBALS, NotRegularFile, inspect_file, sniff

ROOT = Path(__file__).resolve().parent.parent

MAKE = r'''
import io, os, sys, torch
out = sys.argv[1]
os.chdir(out)
nested = {"a": [torch.ones(3), torch.zeros(2, 2)], "b": {"c": (torch.arange(4),)}}
torch.save(nested, "cpu_zip.pt")
torch.save(nested, "cpu_legacy.pt", _use_new_zipfile_serialization=False)
torch.save(nested, "cpu_p4.pt", pickle_protocol=4)
torch.save(torch.nn.Linear(3, 2).state_dict(), "state_dict.pt")   # OrderedDict, Parameter
buf = io.BytesIO(); torch.save(nested, buf); open("buffer_blob", "wb").write(buf.getvalue())

class Payload:
    def __reduce__(self):
        return (os.system, (f"touch {os.path.abspath('PWNED')}",))
torch.save({"w": torch.ones(1), "p": Payload()}, "evil.pt")
torch.save({"w": torch.ones(1), "p": Payload()}, "evil_legacy.pt",
           _use_new_zipfile_serialization=False)

# Fake devices: the first registered tagger wins; 1-element tensors go to cuda:1.
def tag(obj):
    return "cuda:1" if obj.nbytes() <= 8 else "cuda:0"
torch.serialization.register_package(1, tag, lambda obj, loc: obj)
mixed = {"big": [torch.ones(10) for _ in range(3)], "small": torch.ones(1)}
torch.save(mixed, "cuda_zip.pt")
torch.save(mixed, "cuda_legacy.pt", _use_new_zipfile_serialization=False)
torch.save(mixed, "cuda_p4.pt", pickle_protocol=4)
torch.save(mixed, "cuda_legacy_p4.pt", _use_new_zipfile_serialization=False,
           pickle_protocol=4)
'''

ORACLE = r'''
import json, sys, torch
out = {}
for path in sys.argv[1:]:
    locs = {}
    def record(storage, location):
        locs[location] = locs.get(location, 0) + 1
        return storage
    torch.load(path, map_location=record, weights_only=False)
    entry = {"locations": locs}
    try:
        entry["unsafe"] = sorted(torch.serialization.get_unsafe_globals_in_checkpoint(path))
    except Exception as exc:
        entry["unsafe"] = None
    out[path] = entry
print(json.dumps(out))
'''


def _torch_available() -> bool:
    return subprocess.run([sys.executable, "-c", "import torch"],
                          capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not _torch_available(), reason="torch is not installed")


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("torchsave")
    subprocess.run([sys.executable, "-c", MAKE, str(out)], check=True, timeout=120)
    return out


def test_safe_globals_match_the_installed_torch():
    code = ("import json, torch._weights_only_unpickler as w; "
            "print(json.dumps(sorted(w._get_allowed_globals())))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert set(json.loads(proc.stdout)) == set(WEIGHTS_ONLY_SAFE_GLOBALS)


def test_the_scanner_never_imports_torch(files):
    code = ("import sys, doctor.scanners.torchsave as t, doctor.scanners.cachescan as c, "
            "doctor.checks.cache; "
            f"t.inspect_file({str(files / 'cuda_zip.pt')!r}); "
            f"c.scan([{str(files)!r}]); "
            "print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr


@pytest.mark.parametrize("name,fmt", [("cuda_zip.pt", "zip"), ("cuda_legacy.pt", "legacy"),
                                      ("cuda_p4.pt", "zip"), ("cuda_legacy_p4.pt", "legacy")])
def test_cuda_locations_in_every_format(files, name, fmt):
    info = inspect_file(files / name)
    assert info is not None and info.format == fmt and info.problem is None
    # four storages; the memoised "cuda:0" string is referenced three times
    assert info.locations == {"cuda:0": 3, "cuda:1": 1}
    assert info.devices == ["cuda:0", "cuda:1"]
    assert info.unsafe_globals == []


@pytest.mark.parametrize("name", ["cpu_zip.pt", "cpu_legacy.pt", "cpu_p4.pt", "state_dict.pt",
                                  "buffer_blob"])
def test_cpu_files(files, name):
    info = inspect_file(files / name)
    assert info is not None and info.problem is None, info
    assert info.devices == [] and set(info.locations) == {"cpu"}
    assert info.unsafe_globals == []


def test_locations_and_unsafe_globals_agree_with_torch(files):
    names = ["cpu_zip.pt", "cpu_legacy.pt", "state_dict.pt", "buffer_blob", "cuda_zip.pt",
             "cuda_legacy.pt", "cuda_p4.pt", "evil.pt"]
    proc = subprocess.run([sys.executable, "-c", ORACLE, *[str(files / n) for n in names]],
                          capture_output=True, text=True, timeout=120, cwd=files / "..")
    assert proc.returncode == 0, proc.stderr
    oracle = json.loads(proc.stdout)
    for name in names:
        info = inspect_file(files / name)
        want = oracle[str(files / name)]
        assert info.locations == want["locations"], name
        if want["unsafe"] is not None:       # torch's helper handles zip protocol-2 only
            assert info.unsafe_globals == want["unsafe"], name
    # loading evil.pt in the oracle ran the payload: clear the evidence for the next test
    (files / "PWNED").unlink()


@pytest.mark.parametrize("name", ["evil.pt", "evil_legacy.pt"])
def test_malicious_reduce_is_reported_and_never_run(files, name):
    marker = files / "PWNED"
    assert not marker.exists()
    info = inspect_file(files / name)
    assert info.unsafe_globals == ["posix.system"]
    assert info.problem is None
    assert not marker.exists(), "the scanner executed the pickle"


def test_every_truncation_is_reported_never_raised(files, tmp_path):
    for name in ("cuda_zip.pt", "cuda_legacy.pt"):
        data = (files / name).read_bytes()
        cut_file = tmp_path / "cut"
        problems = 0
        for n in range(0, len(data), 7):
            cut_file.write_bytes(data[:n])
            info = inspect_file(cut_file)     # must not raise
            if info is not None:
                assert info.problem, f"{name} cut at {n} of {len(data)} not reported"
                problems += 1
        assert problems > len(data) // 7 // 2, name


def test_flipped_bytes_never_raise(files, tmp_path):
    data = bytearray((files / "cuda_zip.pt").read_bytes())
    target = tmp_path / "flipped.pt"
    for i in range(0, 400, 3):           # the pickle and the zip headers
        mutated = bytearray(data)
        mutated[i] ^= 0xFF
        target.write_bytes(bytes(mutated))
        inspect_file(target)


def test_oversized_pickle_is_not_read(files):
    info = inspect_file(files / "cuda_zip.pt", max_pickle_bytes=16)
    assert info is not None and "not scanned" in info.problem
    info = inspect_file(files / "cuda_legacy.pt", max_pickle_bytes=16)
    assert info is not None and "not scanned" in info.problem


def test_non_torch_files_are_ignored(tmp_path):
    import zipfile
    with zipfile.ZipFile(tmp_path / "a.zip", "w") as z:
        z.writestr("x/readme.txt", "hi")
    (tmp_path / "b.pt").write_text("text")
    (tmp_path / "c.pt").write_bytes(b"")
    (tmp_path / "d.pkl").write_bytes(b"\x80\x02}q\x00.")   # a pickle, not torch.save
    for n in ("a.zip", "b.pt", "c.pt", "d.pkl"):
        assert inspect_file(tmp_path / n) is None
    assert sniff(b"PK\x03\x04rest") == "zip" and sniff(b"hello") is None


def test_fifo_is_never_opened(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    box: dict = {}

    def go() -> None:
        try:
            inspect_file(fifo)
        except NotRegularFile:
            box["refused"] = True

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(5)
    assert box.get("refused"), "a FIFO was opened (or blocked)"
