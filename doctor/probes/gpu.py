"""GPU facts: the torch build (from a child process), device nodes, container, smi tools.

The doctor's own process never imports torch and never initialises CUDA/HIP:
`torch_build` runs `python -c` in a child with a deadline (run_cmd kills its
process group on timeout), with the job's environment, so that the visibility
variables and PYTHONPATH the job sets are the ones torch sees.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import sys
from typing import Optional

from doctor.probes import probe
from doctor.proc import NO_CWD_IMPORTS, run_cmd

TORCH_TIMEOUT_S = 90.0  # importing torch from a network filesystem can take a while
SMI_TIMEOUT_S = 15.0
MARK = "@@doctor-torch-build@@"

# Runs in the child. Prints one marked JSON line; torch may print warnings around it.
TORCH_PROBE = NO_CWD_IMPORTS + r"""
import json, sys
out = {"version": None, "cuda": None, "hip": None, "available": False,
       "device_count": 0, "devices": [], "error": None}
try:
    import torch
    out["version"] = torch.__version__
    out["cuda"] = getattr(torch.version, "cuda", None)
    out["hip"] = getattr(torch.version, "hip", None)
    out["available"] = bool(torch.cuda.is_available())
    if out["available"]:
        out["device_count"] = torch.cuda.device_count()
        for i in range(out["device_count"]):
            p = torch.cuda.get_device_properties(i)
            out["devices"].append({"name": p.name, "memory_bytes": int(p.total_memory)})
except BaseException as exc:
    out["error"] = "%s: %s" % (type(exc).__name__, exc)
print("MARK" + json.dumps(out), flush=True)
""".replace("MARK", MARK)


def probe_env(job) -> dict:
    """The environment the job's Python would see: login env + the script's resolved exports."""
    env = dict(job.login_env)
    script = job.scripts[0] if getattr(job, "scripts", None) else None
    if script is not None and not job.in_job:
        for name, v in job.job_env(script).items():
            if v.source == "sbatch" and v.resolved and not v.parts:
                env[name] = v.value
    env.setdefault("PATH", os.environ.get("PATH", "/usr/bin:/bin"))
    return env


@probe("torch_build")
def torch_build(job) -> dict:
    """{version, cuda, hip, available, device_count, devices: [{name, memory_bytes}], error}."""
    res = run_cmd([sys.executable, "-c", TORCH_PROBE], timeout=TORCH_TIMEOUT_S,
                  env=probe_env(job))
    for line in reversed(res.stdout.splitlines()):
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    why = (f"timed out after {TORCH_TIMEOUT_S:g}s" if res.timed_out
           else f"exit code {res.returncode}: {res.stderr.strip()[-300:]}")
    return {"version": None, "cuda": None, "hip": None, "available": False,
            "device_count": 0, "devices": [], "error": f"torch probe failed ({why})"}


def _access_problem(path: str) -> Optional[str]:
    if os.access(path, os.R_OK | os.W_OK):
        return None
    try:
        st = os.stat(path)
        return f"{path}: no read/write access (mode {st.st_mode & 0o777:o}, gid {st.st_gid})"
    except OSError as exc:
        return f"{path}: {exc.strerror}"


@probe("devices")
def devices(job) -> dict:
    """GPU device nodes: {nvidia: [...], kfd: bool, render: [...], problems: [...]}."""
    nvidia = sorted(p for p in glob.glob("/dev/nvidia[0-9]*") if p[11:].isdigit())
    render = sorted(glob.glob("/dev/dri/renderD*"))
    kfd = os.path.exists("/dev/kfd")
    problems = [p for p in (_access_problem(d) for d in
                            nvidia + render + (["/dev/kfd"] if kfd else [])) if p]
    return {"nvidia": nvidia, "kfd": kfd, "render": render, "problems": problems}


LIB_DIRS = ("/opt/rocm/lib", "/opt/rocm/lib64", "/usr/lib64", "/usr/lib",
            "/usr/lib/x86_64-linux-gnu", "/usr/local/lib")


def _find_lib(stem: str, env: dict) -> Optional[str]:
    dirs = [d for d in env.get("LD_LIBRARY_PATH", "").split(":") if d] + list(LIB_DIRS)
    for d in dirs:
        hits = sorted(glob.glob(os.path.join(d, stem + ".so*")))
        if hits:
            return hits[0]
    return None


@probe("container")
def container(job) -> dict:
    """{runtime: apptainer|singularity|docker|podman|None, image, bindpath, containlibs, libs}."""
    env = job.login_env
    runtime = None
    if env.get("APPTAINER_CONTAINER") or env.get("APPTAINER_NAME"):
        runtime = "apptainer"
    elif env.get("SINGULARITY_CONTAINER") or env.get("SINGULARITY_NAME") \
            or os.path.isdir("/.singularity.d"):
        runtime = "singularity"
    elif os.path.exists("/run/.containerenv"):
        runtime = "podman"
    elif os.path.exists("/.dockerenv"):
        runtime = "docker"
    return {
        "runtime": runtime,
        "image": env.get("APPTAINER_CONTAINER") or env.get("SINGULARITY_CONTAINER"),
        "bindpath": env.get("APPTAINER_BINDPATH") or env.get("SINGULARITY_BINDPATH") or "",
        "containlibs": env.get("SINGULARITY_CONTAINLIBS") or env.get("APPTAINER_CONTAINLIBS")
        or "",
        "libs": {"librocm_smi64": _find_lib("librocm_smi64", env),
                 "libcxi": _find_lib("libcxi", env)},
    }


def parse_nvidia_smi(text: str) -> list:
    """`nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader,nounits`."""
    gpus = []
    for line in text.splitlines():
        cols = [c.strip() for c in line.split(",")]
        if len(cols) >= 3 and cols[0].isdigit():
            mem = int(cols[2]) * 2**20 if cols[2].isdigit() else None
            gpus.append({"index": int(cols[0]), "name": cols[1], "memory_bytes": mem})
    return gpus


def parse_rocm_smi(text: str) -> list:
    """`rocm-smi --showproductname --json`: {"card0": {"Card Series": ...}, ...}.

    ROCm 4/5 spell it "Card series", ROCm 6 "Card Series", newer rocm-smi "Device Name".
    """
    try:
        doc = json.loads(text[text.index("{"):])
    except ValueError:
        return []
    gpus = []
    for key in sorted((k for k in doc if k.startswith("card")), key=lambda k: int(k[4:] or 0)):
        card = doc[key] or {}
        name = (card.get("Card Series") or card.get("Card series") or card.get("Device Name")
                or card.get("Card Model") or card.get("Card model"))
        gpus.append({"index": int(key[4:] or 0), "name": name,
                     "gfx": card.get("GFX Version")})
    return gpus


@probe("smi")
def smi(job) -> dict:
    """{tool: nvidia-smi|rocm-smi|None, gpus: [...], error}: the driver's own view."""
    if shutil.which("nvidia-smi"):
        res = run_cmd(["nvidia-smi", "--query-gpu=index,name,memory.total",
                       "--format=csv,noheader,nounits"], timeout=SMI_TIMEOUT_S)
        return {"tool": "nvidia-smi", "gpus": parse_nvidia_smi(res.stdout),
                "error": None if res.returncode == 0 else
                (res.stderr or res.stdout).strip()[-300:] or "timed out"}
    if shutil.which("rocm-smi"):
        res = run_cmd(["rocm-smi", "--showproductname", "--json"], timeout=SMI_TIMEOUT_S)
        return {"tool": "rocm-smi", "gpus": parse_rocm_smi(res.stdout),
                "error": None if res.returncode == 0 else
                (res.stderr or res.stdout).strip()[-300:] or "timed out"}
    return {"tool": None, "gpus": [], "error": None}
