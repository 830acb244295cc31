"""The live GPU probes on this machine as it is (a CPU-only, login-like node), and the
smi parsers on the tools' real output formats."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest

from conftest import result_of, run_json
from doctor.job.context import Job
from doctor.probes import gpu

SBATCH_2N = ("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=8\n\n{body}\n"
             "srun python train.py\n")


def test_torch_build_in_a_child_never_in_the_doctor(tmp_path):
    """The parent process gathers torch facts without importing torch."""
    code = ("import sys, json; from doctor.job.context import Job; j = Job(sys.argv[1], env=dict("
            "__import__('os').environ)); b = j.fact('torch_build'); "
            "print(json.dumps([b, 'torch' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True,
                         text=True, timeout=120, check=True, cwd=Path(__file__).parent.parent)
    build, imported = json.loads(out.stdout.splitlines()[-1])
    assert imported is False
    try:
        installed = metadata.version("torch")
    except metadata.PackageNotFoundError:
        assert build["version"] is None and build["error"]
        return
    assert build["version"] == installed
    assert build["error"] is None
    # this machine has no GPU: whatever the build, torch sees none
    assert build["available"] is False and build["device_count"] == 0 and build["devices"] == []


def test_torch_probe_reads_a_torch_on_the_jobs_pythonpath_and_never_imports_it(tmp_path):
    """A torch that the job script's PYTHONPATH puts first is the job's business: the
    probe imports the installed torch in an isolated child, and reports the other one
    as read from its files (its import would run whatever it holds)."""
    shadow = tmp_path / "pylibs" / "torch"
    shadow.mkdir(parents=True)
    marker = tmp_path / "imported"
    (shadow / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n__version__ = '2.5.1+rocm6.2.4'\n"
        "class version:\n    cuda = None\n    hip = '6.2.41134'\n")
    (tmp_path / "job.sbatch").write_text(SBATCH_2N.format(
        body=f'export PYTHONPATH="{tmp_path / "pylibs"}:${{PYTHONPATH:-}}"'))
    job = Job(tmp_path, sbatch=[tmp_path / "job.sbatch"], env={"PATH": os.environ["PATH"]})
    build = job.fact("torch_build")
    assert not marker.exists()
    assert build["version"] == metadata.version("torch") and build["hip"] is None
    assert build["shadowed_by"] == {"path": "pylibs", "version": "2.5.1+rocm6.2.4",
                                    "set_at": "job.sbatch:5"}


def test_torch_probe_deadline_kills_a_hung_import(tmp_path, monkeypatch):
    """A torch import that hangs (a wedged driver, a dead NFS) is killed at the deadline."""
    shadow = tmp_path / "pylibs" / "torch"   # on the doctor's own path: the child's too
    shadow.mkdir(parents=True)
    pidfile = tmp_path / "pid"
    (shadow / "__init__.py").write_text(
        f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)\n")
    monkeypatch.setattr(gpu, "TORCH_TIMEOUT_S", 2.0)
    monkeypatch.syspath_prepend(str(tmp_path / "pylibs"))
    (tmp_path / "repo").mkdir()
    job = Job(tmp_path / "repo", env={"PATH": os.environ["PATH"]})
    start = time.monotonic()
    build = job.fact("torch_build")
    assert time.monotonic() - start < 10
    assert build["version"] is None and "timed out" in build["error"]
    pid = int(pidfile.read_text())
    time.sleep(0.1)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # no orphan left behind


def test_devices_container_smi_on_this_machine(tmp_path):
    job = Job(tmp_path, env=dict(os.environ))
    dev = job.fact("devices")
    assert dev["kfd"] == os.path.exists("/dev/kfd")
    assert dev["nvidia"] == sorted(p for p in map(str, Path("/dev").glob("nvidia[0-9]*")))
    assert set(dev) == {"nvidia", "kfd", "render", "problems"}
    ctr = job.fact("container")
    if os.path.isdir("/.singularity.d"):
        assert ctr["runtime"] in ("singularity", "apptainer")
    elif os.path.exists("/.dockerenv") and not os.path.exists("/run/.containerenv"):
        assert ctr["runtime"] == "docker"
    smi = job.fact("smi")
    if not any(os.access(os.path.join(d, t), os.X_OK) for d in os.environ["PATH"].split(":")
               for t in ("nvidia-smi", "rocm-smi")):
        assert smi == {"tool": None, "gpus": [], "error": None}


def test_parse_nvidia_smi_csv():
    out = ("0, NVIDIA A100-SXM4-80GB, 81920\n1, NVIDIA A100-SXM4-80GB, 81920\n"
           "2, NVIDIA A100-SXM4-80GB, 81920\n3, NVIDIA A100-SXM4-80GB, 81920\n")
    gpus = gpu.parse_nvidia_smi(out)
    assert len(gpus) == 4 and gpus[3] == {"index": 3, "name": "NVIDIA A100-SXM4-80GB",
                                          "memory_bytes": 81920 * 2**20}
    assert gpu.parse_nvidia_smi("No devices were found\n") == []


def test_parse_rocm_smi_json():
    # rocm-smi --showproductname --json on an MI250X node (ROCm 6: "Card Series")
    card = {"Card Series": "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2", "Card Model": "0x7408",
            "Card Vendor": "Advanced Micro Devices, Inc. [AMD/ATI]", "Card SKU": "D65201",
            "Subsystem ID": "0x0b0c", "Device Rev": "0x00", "Node ID": "7", "GUID": "58294",
            "GFX Version": "gfx9010"}
    text = "\n" + json.dumps({f"card{i}": card for i in range(8)}, indent=4)
    gpus = gpu.parse_rocm_smi(text)
    assert [g["index"] for g in gpus] == list(range(8))
    assert gpus[0]["name"] == "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2"
    old = json.dumps({"card0": {"Card series": "Arcturus GL-XL [AMD Instinct MI100]",
                                "Card model": "0x0c34"}})
    assert gpu.parse_rocm_smi(old)[0]["name"] == "Arcturus GL-XL [AMD Instinct MI100]"
    assert gpu.parse_rocm_smi("ERROR: No AMD GPUs found") == []


def test_cli_gpu_check_skips_on_this_login_like_node(tmp_path):
    """No GPU, no allocation: the honest answer is a skip that says how to probe a node."""
    (tmp_path / "job.sbatch").write_text(SBATCH_2N.format(body=""))
    code, doc = run_json("--repo", str(tmp_path), "--only", "gpu-not-visible")
    res = result_of(doc, "gpu-not-visible")
    assert code == 0 and res["status"] == "skip"
    assert "srun -N1 --gpus-per-node=8 doctor run --only gpu-not-visible" in res["reason"]
    assert doc["facts"]["torch_build"]["available"] is False


def test_cli_gpu_check_fails_on_a_script_contradiction_even_here(tmp_path):
    (tmp_path / "job.sbatch").write_text(SBATCH_2N.format(
        body="export ROCR_VISIBLE_DEVICES=$SLURM_LOCALID\nexport HIP_VISIBLE_DEVICES=0,1"))
    code, doc = run_json("--repo", str(tmp_path), "--only", "gpu-not-visible")
    res = result_of(doc, "gpu-not-visible")
    assert code == 1 and res["status"] == "fail"
    assert res["findings"][0]["location"] == {"path": "job.sbatch", "line": 6}


def test_cli_miopen_live_mounts_and_site_profile(tmp_path):
    """Live mount table + the site profile, through the real CLI."""
    (tmp_path / "job.sbatch").write_text(SBATCH_2N.format(
        body="export MIOPEN_USER_DB_PATH=/dev/shm/$USER-miopen-$SLURM_JOB_ID\n"
             "export MIOPEN_CUSTOM_CACHE_DIR=/srv/shared/miopen"))
    code, doc = run_json("--repo", str(tmp_path), "--only", "miopen-cache-shared",
                         env={"USER": "ammar"})
    res = result_of(doc, "miopen-cache-shared")
    assert code == 0 and res["status"] == "pass"  # /dev/shm tmpfs, / ext4: both node-local here
    (tmp_path / "doctor.yaml").write_text("site:\n  shared_paths: [/srv/shared]\n")
    # only the MIOPEN_* variables say it is a ROCm job (a block copied into an NVIDIA job
    # keeps them): at most a warning
    code, doc = run_json("--repo", str(tmp_path), "--only", "miopen-cache-shared",
                         env={"USER": "ammar"})
    res = result_of(doc, "miopen-cache-shared")
    assert code == 0 and res["status"] == "fail" and res["severity"] == "warning"
    assert "only the MIOPEN_* variables say so" in res["findings"][0]["message"]
    # with the torch the job runs, a ROCm build: the whole path is shown, an error
    code, doc = run_json("--repo", str(tmp_path), "--only", "miopen-cache-shared",
                         "--torch-version", "2.5.1+rocm6.2.4", env={"USER": "ammar"})
    res = result_of(doc, "miopen-cache-shared")
    assert code == 1 and res["status"] == "fail"
    (f,) = res["findings"]
    assert f["location"] == {"path": "job.sbatch", "line": 6}
    assert f["data"] == {"variable": "MIOPEN_CUSTOM_CACHE_DIR", "value": "/srv/shared/miopen",
                         "nodes": 2, "filesystem": {"fstype": None, "shared": True,
                                                     "mount": "/srv/shared", "source": "site"}}
    assert 'export MIOPEN_CUSTOM_CACHE_DIR="$MIOPEN_USER_DB_PATH"' in f["commands"]


def test_cli_miopen_skips_a_cuda_or_cpu_job(tmp_path):
    (tmp_path / "job.sbatch").write_text(SBATCH_2N.format(body=""))
    code, doc = run_json("--repo", str(tmp_path), "--only", "miopen-cache-shared")
    res = result_of(doc, "miopen-cache-shared")
    assert code == 0 and res["status"] == "skip" and "not a ROCm job" in res["reason"]
