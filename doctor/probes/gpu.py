"""GPU facts: the torch build (from a child process), device nodes, container, smi tools.

The doctor's own process never imports torch and never initialises CUDA/HIP:
`torch_build` runs `python -c` in a child with a deadline (run_cmd kills its
process group on timeout), isolated (doctor/pychild.py): it sees the GPUs the job
script selects, and nothing else of what the script exports. A torch that the job's
PYTHONPATH would put before the installed one is read, never imported
(`shadowed_by`): the probe reports the installed torch.
"""
from __future__ import annotations

import ast
import glob
import json
import os
import sys
import time
from pathlib import Path
from typing import Optional

from doctor import fs, pyast
from doctor.probes import probe
from doctor.proc import run_cmd, tool_path
from doctor.pychild import child_env, python_argv

TORCH_TIMEOUT_S = 90.0  # importing torch from a network filesystem can take a while
SMI_TIMEOUT_S = 15.0
MARK = "@@doctor-torch-build@@"

# Runs in the child. Prints one marked JSON line; torch may print warnings around it.
TORCH_PROBE = r"""
import json, sys
out = {"version": None, "cuda": None, "hip": None, "available": False,
       "device_count": 0, "devices": [], "error": None}
try:
    import torch
    out["version"] = torch.__version__
    out["file"] = torch.__file__
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


def _exports(job, whole: bool = True) -> dict:
    """The first job script's own resolved exports (inside a job: none, the login
    environment is the job's); `whole=False`: partly resolved ones too."""
    script = job.scripts[0] if getattr(job, "scripts", None) else None
    if script is None or job.in_job:
        return {}
    return {name: v for name, v in job.job_env(script).items()
            if v.source == "sbatch" and (v.resolved or not whole) and not v.parts}


def probe_env(job) -> dict:
    """The torch child's environment: the doctor's own, with the GPUs the job selects."""
    return child_env(job.login_env, {k: v.value for k, v in _exports(job).items()})


@probe("torch_build")
def torch_build(job) -> dict:
    """{version, cuda, hip, available, device_count, devices: [{name, memory_bytes}], error},
    and `shadowed_by` when the job's PYTHONPATH puts another torch first."""
    deadline = time.time() + TORCH_TIMEOUT_S   # one for both ways: a hung import hangs both
    build = _through_zygote(job, deadline)
    if build is None:
        res = run_cmd(python_argv(TORCH_PROBE, job.repo), env=probe_env(job), cwd="/",
                      timeout=max(1.0, deadline - time.time()))
        build = _answer(res.stdout)
    if build is None:
        why = (f"timed out after {TORCH_TIMEOUT_S:g}s" if res.timed_out
               else f"exit code {res.returncode}: {res.stderr.strip()[-300:]}")
        build = {"version": None, "cuda": None, "hip": None, "available": False,
                 "device_count": 0, "devices": [], "error": f"torch probe failed ({why})"}
    build.pop("file", None)
    shadow = shadowing_torch(job)
    return dict(build, shadowed_by=shadow) if shadow else build


def _answer(stdout: str) -> Optional[dict]:
    return next((json.loads(line[len(MARK):]) for line in reversed(stdout.splitlines())
                 if line.startswith(MARK)), None)


def _through_zygote(job, deadline: float) -> Optional[dict]:
    """The probe's answer from a fork of the smokes' torch process (doctor/smoke/zygote.py),
    when this run's chosen checks start a smoke (the zygote imports torch with the repo on
    its path, as the ranks do: never in --static or --no-smoke, nor in a run of other
    checks, `--only gpu-not-visible`, where that import would be the repo's code run).
    Used only when the torch it imported is the file the isolated child would import (a
    repo's own torch/ is read, never reported), and when the job's GPU selection leaves
    the zygote's import-time environment as it is; None: run the isolated child as before.
    Saves one import of torch (1.1-1.7 s of CPU)."""
    if not getattr(job, "smoke", False) or not getattr(job, "smokes_run", False):
        return None   # no smoke in this run: its torch process would run the repo's code
    import importlib.machinery
    import shutil
    import tempfile

    from doctor.pychild import GPU_SELECTION, own_path
    from doctor.smoke import zygote
    from doctor.smoke.launcher import smoke_env

    spec = importlib.machinery.PathFinder.find_spec("torch", own_path(job.repo))
    if spec is None or not spec.origin:
        return None
    base = smoke_env(job.repo)   # the ranks' zygote key: one zygote for the probe and smokes
    env = dict(base, **{k: v for k, v in probe_env(job).items() if GPU_SELECTION.fullmatch(k)})
    if zygote.import_env(env) != zygote.import_env(base):
        return None   # a selection torch's import reads: it would need a zygote of its own
    # the zygote (its torch import) before the temp dir: see zygote.warm
    zygote.warm(sys.executable, str(job.repo), dict(env, TMPDIR=tempfile.gettempdir()),
                deadline)
    tmp = tempfile.mkdtemp(prefix="doctor-torch-probe-")
    try:
        env["TMPDIR"] = tmp
        res = zygote.run_module(sys.executable, "doctor.smoke.torch_probe", [],
                                cwd=str(job.repo), env=env, tmp=tmp,
                                timeout=max(1.0, deadline - time.time()))
    except RuntimeError:   # the zygote died: ask the isolated child
        res = None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    build = _answer(res.stdout) if res is not None else None
    if build is None or not build.get("file") or \
            os.path.realpath(build["file"]) != os.path.realpath(spec.origin):
        return None
    return build


def shadowing_torch(job) -> Optional[dict]:
    """The torch package that the job script's exported PYTHONPATH puts before the
    installed one: {path, version (read from its version.py or __init__.py, None when
    neither states one), set_at}. Read, never imported; None when there is none."""
    pp = _exports(job, whole=False).get("PYTHONPATH")   # `/opt/sw/torch:$PYTHONPATH` too
    if pp is None:
        return None
    for entry in pp.value.split(os.pathsep):
        if not os.path.isabs(entry) or "$" in entry:
            continue
        pkg = Path(entry) / "torch"
        init = pkg / "__init__.py"
        if not fs.is_file(init) and not fs.is_file(Path(entry) / "torch.py"):
            continue
        version = _stated_version(pkg / "version.py") or _stated_version(init) \
            or _stated_version(Path(entry) / "torch.py")
        return {"path": job.rel(entry), "version": version, "set_at": pp.where()}
    return None


def _stated_version(path: Path) -> Optional[str]:
    """The string literal a module assigns to `__version__` at its top level."""
    text = fs.read_text(path, None, 1 << 20) if fs.is_file(path) else None
    try:
        tree = pyast.parse(text or "")
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AnnAssign) else []
        value = getattr(node, "value", None)
        if any(getattr(t, "id", None) == "__version__" for t in targets) \
                and isinstance(value, ast.Constant) and isinstance(value.value, str):
            return value.value
    return None


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
    if tool_path("nvidia-smi"):
        res = run_cmd(["nvidia-smi", "--query-gpu=index,name,memory.total",
                       "--format=csv,noheader,nounits"], timeout=SMI_TIMEOUT_S)
        return {"tool": "nvidia-smi", "gpus": parse_nvidia_smi(res.stdout),
                "error": None if res.returncode == 0 else
                (res.stderr or res.stdout).strip()[-300:] or "timed out"}
    if tool_path("rocm-smi"):
        res = run_cmd(["rocm-smi", "--showproductname", "--json"], timeout=SMI_TIMEOUT_S)
        return {"tool": "rocm-smi", "gpus": parse_rocm_smi(res.stdout),
                "error": None if res.returncode == 0 else
                (res.stderr or res.stdout).strip()[-300:] or "timed out"}
    return {"tool": None, "gpus": [], "error": None}
