"""Can torch see the GPUs the job asks for, on NVIDIA CUDA and AMD ROCm nodes?"""
from __future__ import annotations

from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, edits
from doctor.job.cluster import asks_gpus, jobs_elsewhere
from doctor.job.context import Job
from doctor.job.env import env_location

VISIBILITY = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES",
              "GPU_DEVICE_ORDINAL")
CONTAINLIBS = "/usr/lib64/libcxi.so.1,/opt/rocm/lib/librocm_smi64.so.7"


@check("gpu-not-visible", title="torch sees no GPU, or fewer than the job asks for",
       severity="error", tags=("gpu", "rocm", "cuda"), needs=("node", "gpu", "torch", "sbatch"),
       timeout=120)
def gpu_not_visible(job: Job) -> Iterator[Finding]:
    """torch cannot use the GPUs the job was given.

    Compares what the job asks for (`--gpus`, `--gpus-per-node`, `--gres=gpu:N`,
    SLURM_GPUS_ON_NODE / SLURM_JOB_GPUS in a job, or the site's `gpus_per_node`)
    with what torch sees in a child process: the doctor's environment with the
    GPUs the job script selects (inside a job: the job's); a torch that the job's
    PYTHONPATH would import instead is read, not imported.
    Also catches a torch build that does not match the hardware (a CUDA build on
    an AMD node, a HIP build on an NVIDIA node, a CPU build on a GPU node),
    contradictory ROCR_/HIP_/CUDA_VISIBLE_DEVICES (an empty string, HIP longer
    than ROCR, HIP and CUDA both set and different), and, inside
    Singularity/Apptainer, which bindings are missing. On a login node outside
    an allocation it skips and says how to probe the compute nodes; so it does, outside
    a job, for a job for another cluster (its `--partition` or `--clusters` is not this
    machine's cluster's), whose nodes this one's GPUs and torch are not (the visibility
    variables its script sets are still judged).

    An empty visibility variable is an error in a job that asks for GPUs; in one that
    asks for none it hides what the job does not use (a CPU preprocessing job), unless
    the nodes of its partition have GPUs (the site profile, or live Slurm of the job's
    cluster): then a warning.

    ## Why it matters
    A job that sees no GPU fails with "No HIP GPUs available" / "No CUDA GPUs are
    available" after its queue wait, or worse, silently trains on CPU or on one GPU
    while paying for eight. On ROCm, ROCR_VISIBLE_DEVICES filters first and
    HIP/CUDA indices are relative to it; torch raises when HIP_VISIBLE_DEVICES
    lists more devices than ROCR_VISIBLE_DEVICES, and an empty string hides every GPU.

    ## How to fix
    Install the torch build for the node's GPUs (`+rocmX.Y` wheels on AMD, `+cuXYZ`
    on NVIDIA). Set one visibility variable (on ROCm: `ROCR_VISIBLE_DEVICES`),
    never an empty one. In a LUMI Singularity container pass the GPU libraries:

        export SINGULARITY_CONTAINLIBS="/usr/lib64/libcxi.so.1,/opt/rocm/lib/librocm_smi64.so.7"
        srun singularity exec -B /opt/cray/libfabric ... "$SIF" python train.py

    (on NVIDIA: `singularity exec --nv`). To probe a compute node from the login
    node: `srun -N1 --gpus-per-node=1 doctor run --only gpu-not-visible`.
    """
    build = job.fact("torch_build") or {}
    devices = job.fact("devices") or {}
    backend = "hip" if build.get("hip") else "cuda" if build.get("cuda") else "none"
    visible = int(build.get("device_count") or 0) if build.get("available") else 0
    expected, exp_where, exp_loc = expected_gpus(job)
    data = {"expected": expected, "visible": visible, "backend": backend}

    env_findings = list(_visibility_findings(job, backend, data))
    yield from env_findings

    # the job's own variables are judged above; this node's GPUs and torch are not the
    # nodes' of a job for another cluster (issue 26)
    away = None if job.in_job else jobs_elsewhere(job)
    if away:
        if env_findings:
            return
        raise Skip(f"this machine's GPUs and torch are not the job's nodes': {away}; probe a "
                   f"node of that cluster: `srun -N1 --gpus-per-node={expected or 1} doctor "
                   "run --only gpu-not-visible`")
    nvidia, kfd = devices.get("nvidia") or [], bool(devices.get("kfd"))
    hardware = len(nvidia) or (len(devices.get("render") or []) if kfd else 0)
    if not job.in_job and not hardware and not visible:
        if env_findings:
            return
        n = expected or 1
        raise Skip("no GPU on this node and not inside a Slurm allocation (a login node?): "
                   f"probe a compute node with `srun -N1 --gpus-per-node={n} doctor run "
                   "--only gpu-not-visible`, or run `srun doctor run` as the first step of "
                   "the job script")
    if not build.get("version"):
        if expected or hardware:
            # the probe ran in the doctor's environment (docs/security.md), not the job's:
            # a torch that the job's PYTHONPATH brings was read, not imported
            msg = ("torch cannot be imported in the doctor's environment: "
                   f"{build.get('error') or 'unknown error'}")
            other = build.get("shadowed_by")
            if other:
                msg += (f"; the job would import the torch in {other['path']} "
                        f"({other.get('version') or 'version not stated'}, PYTHONPATH set at "
                        f"{other['set_at']}), which the doctor reads but does not run")
            yield Finding(msg, location=exp_loc, severity=Severity.WARNING if other else None,
                          fix="Activate the job's Python environment (module load / venv / "
                              "container) before running the doctor, or run the doctor as a "
                              "step of the job (`srun doctor run`).", data=data)
            return
        raise Skip(f"torch is not importable here ({build.get('error')}) and no GPU is "
                   "expected")

    ver = build.get("version")
    if backend == "cuda" and kfd and not nvidia:
        yield Finding(f"torch {ver} is a CUDA build but this is an AMD node (/dev/kfd, no "
                      "/dev/nvidia*): it will never see these GPUs",
                      fix="Install the ROCm build of torch for this node.",
                      commands=("pip install torch --index-url "
                                "https://download.pytorch.org/whl/rocm6.2",), data=data)
        return
    if backend == "hip" and nvidia and not kfd:
        yield Finding(f"torch {ver} is a HIP (ROCm) build but this is an NVIDIA node "
                      f"({', '.join(nvidia[:2])}{'...' if len(nvidia) > 2 else ''}): it will "
                      "never see these GPUs",
                      fix="Install the CUDA build of torch for this node.",
                      commands=("pip install torch --index-url "
                                "https://download.pytorch.org/whl/cu124",), data=data)
        return
    if backend == "none" and (hardware or expected):
        what = (f"this node has {hardware} GPU device node(s)" if hardware
                else f"the job asks for {expected} GPU(s) per node ({exp_where})")
        yield Finding(f"torch {ver} is a CPU-only build but {what}", location=exp_loc,
                      fix="Install a GPU build of torch (CUDA on NVIDIA, ROCm on AMD).",
                      commands=("python -c 'import torch; print(torch.version.cuda, "
                                "torch.version.hip)'",), data=data)
        return

    want = expected if expected is not None else (hardware or None)
    limit = _visibility_limit(job, backend)
    if want is not None and limit is not None and limit[0] < want:
        want, exp_where = limit[0], f"{exp_where or asked_hw(hardware)}, limited by {limit[1]}"
    if want is None or visible >= want or env_findings:
        return
    data["expected"] = want
    asked = exp_where or asked_hw(hardware)
    msg = f"torch ({backend}) sees {visible} GPU(s) but the job expects {want} ({asked})"
    reasons, commands, fix = _why_not_visible(job, build, devices, backend, visible)
    yield Finding(msg + (": " + "; ".join(reasons) if reasons else ""), location=exp_loc,
                  fix=fix, commands=tuple(commands), data=data)


def asked_hw(hardware: int) -> str:
    return f"{hardware} GPU device node(s) on this node"


def _visibility_limit(job: Job, backend: str) -> Optional[tuple]:
    """In a job, a non-empty visibility list deliberately narrows what torch should see
    (LUMI: ROCR_VISIBLE_DEVICES=$SLURM_LOCALID, one GCD per rank)."""
    if not job.in_job:
        return None
    env = job.login_env
    order = (("CUDA_VISIBLE_DEVICES",) if backend == "cuda" else
             ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"))
    for name in order:
        value = env.get(name, "").strip()
        if value:
            return len(value.split(",")), f"{name}={value}"
    return None


def expected_gpus(job: Job) -> tuple:
    """(GPUs expected on this node, where that comes from, Location or None)."""
    env = job.login_env
    if job.in_job:
        on_node = env.get("SLURM_GPUS_ON_NODE", "")
        if on_node.isdigit():
            return int(on_node), f"SLURM_GPUS_ON_NODE={on_node}", None
        ids = env.get("SLURM_JOB_GPUS") or env.get("SLURM_STEP_GPUS")
        if ids:
            return len([i for i in ids.split(",") if i]), f"SLURM_JOB_GPUS={ids}", None
    best = None
    for script in job.scripts:
        got = script.gpus_per_node()
        if got and (best is None or got[0] > best[0]):
            best = (got[0], script, got[1])
    if best is not None:
        n, script, d = best
        return n, script.where(d), Location(script.rel, d.line or None)
    site = job.site.get("gpus_per_node")
    if isinstance(site, int):
        return site, f"site gpus_per_node: {site}", None
    return None, None, None


def _visibility_findings(job: Job, backend: str, data: dict) -> Iterator[Finding]:
    """Contradictory or empty *_VISIBLE_DEVICES in the job's environment."""
    envs = [(None, job.job_env(None))] if job.in_job else \
        [(s, job.job_env(s)) for s in job.scripts]
    seen: set = set()
    for script, env in envs:
        def own(name: str, env=env) -> bool:  # on a login node: only what the script sets
            v = env.get(name)
            return v is not None and (job.in_job or v.source == "sbatch")

        vals = {n: env[n] for n in VISIBILITY if own(n)}
        asks = _asks_gpus(job, script)
        for name, v in vals.items():
            if v.value.strip() == "" and (name, v.line) not in seen and asks is not False:
                seen.add((name, v.line))
                yield Finding(
                    f"{name} is set to an empty string ({v.where()}): that hides every GPU "
                    "(and a HIP build of torch still counts it as one device)" + (
                        "" if asks else f"; the job requests no GPU, but {asks_why(script)}"),
                    location=env_location(v), fix=f"Unset {name}, or list the devices.",
                    commands=(f"unset {name}",), data=data,
                    options=edits.unset_fix(job, env_location(v), name),
                    severity=None if asks else Severity.WARNING)
        rocr, hip, cuda = (vals.get(n) for n in VISIBILITY[:3])
        if backend != "cuda" and rocr is not None and hip is not None \
                and rocr.value.strip() and hip.value.strip():
            n_rocr, n_hip = len(rocr.value.split(",")), len(hip.value.split(","))
            if n_hip > n_rocr and ("hip>rocr", hip.line) not in seen:
                seen.add(("hip>rocr", hip.line))
                yield Finding(
                    f"HIP_VISIBLE_DEVICES={hip.value} ({hip.where()}) lists {n_hip} devices but "
                    f"ROCR_VISIBLE_DEVICES={rocr.value} ({rocr.where()}) only {n_rocr}: torch "
                    "raises 'HIP_VISIBLE_DEVICES contains more devices than "
                    "ROCR_VISIBLE_DEVICES' (HIP indices are relative to ROCR's list)",
                    location=env_location(hip), fix="Set only ROCR_VISIBLE_DEVICES on ROCm.",
                    commands=("unset HIP_VISIBLE_DEVICES",), data=data,
                    options=edits.unset_fix(job, env_location(hip), "HIP_VISIBLE_DEVICES"))
        if backend != "cuda" and hip is not None and cuda is not None \
                and hip.value.strip() and cuda.value.strip() \
                and hip.value.replace(" ", "") != cuda.value.replace(" ", "") \
                and ("hip!=cuda", cuda.line) not in seen:
            seen.add(("hip!=cuda", cuda.line))
            yield Finding(
                f"HIP_VISIBLE_DEVICES={hip.value} ({hip.where()}) and CUDA_VISIBLE_DEVICES="
                f"{cuda.value} ({cuda.where()}) disagree: on ROCm both select devices and "
                "which one wins depends on the HIP and torch versions",
                location=env_location(cuda), fix="Set one of them (on ROCm: ROCR_VISIBLE_DEVICES).",
                commands=("unset CUDA_VISIBLE_DEVICES",), data=data,
                options=edits.unset_fix(job, env_location(cuda), "CUDA_VISIBLE_DEVICES"))


def _asks_gpus(job: Job, script) -> Optional[bool]:
    """True: the job asks for GPUs (inside a job: Slurm gave it some). False: it asks for
    none and nothing gives its nodes GPUs anyway (a CPU job: hiding GPUs is what it
    means). None: it asks for none, but its partition's nodes have GPUs."""
    if script is None:
        expected, _, _ = expected_gpus(job)
        return bool(expected)
    return asks_gpus(job, script)


def asks_why(script) -> str:
    d = script.get("partition")
    return (f"the nodes of its partition {d.value if d else '(the default one)'} have GPUs, "
            "which the site may give it without a request")


def _why_not_visible(job: Job, build: dict, devices: dict, backend: str, visible: int) -> tuple:
    """(reasons, commands, fix text) for fewer visible GPUs than expected."""
    reasons: list = []
    commands: list = []
    fixes: list = []
    smi = job.fact("smi") or {}
    if smi.get("gpus"):
        reasons.append(f"{smi.get('tool')} sees {len(smi['gpus'])} GPU(s)")
    if build.get("error"):
        reasons.append(f"torch reported {build['error']}")
    if devices.get("problems"):
        reasons += list(devices["problems"])
        fixes.append("Give the user read/write access to the device nodes (the render/video "
                     "group owning /dev/kfd and /dev/dri/renderD*, or /dev/nvidia*).")
        commands.append("ls -l /dev/kfd /dev/dri/renderD* /dev/nvidia* 2>/dev/null; id")
    ctr = job.fact("container") or {}
    if ctr.get("runtime") in ("apptainer", "singularity") and visible == 0:
        libs = ctr.get("libs") or {}
        contain = ctr.get("containlibs") or ""
        if backend == "hip":
            missing = []
            if not devices.get("kfd") or not devices.get("render"):
                missing.append("the device nodes /dev/kfd and /dev/dri/renderD* (do not use "
                               "--contain/--containall, or bind them: -B /dev/kfd,/dev/dri)")
            if not libs.get("librocm_smi64") and "librocm_smi64" not in contain:
                missing.append("librocm_smi64 (needed for GPU detection)")
            if not libs.get("libcxi") and "libcxi" not in contain:
                missing.append("libcxi (the Slingshot interconnect)")
            if "/opt/cray" not in (ctr.get("bindpath") or ""):
                missing.append("the bind -B /opt/cray/libfabric")
            if missing:
                reasons.append(f"inside {ctr['runtime']} the container lacks "
                               + ", ".join(missing))
                fixes.append("Pass the host's GPU libraries and bindings into the container.")
                commands += [f'export SINGULARITY_CONTAINLIBS="{CONTAINLIBS}"',
                             'srun singularity exec -B /opt/cray/libfabric "$SIF" python '
                             'train.py']
        elif not devices.get("nvidia"):
            reasons.append(f"inside {ctr['runtime']} no /dev/nvidia* device is bound")
            fixes.append("Run the container with --nv.")
            commands.append('srun singularity exec --nv "$SIF" python train.py')
    if not fixes:
        shown = [f"{n}={job.login_env[n]}" for n in VISIBILITY if n in job.login_env]
        fixes.append("Check what narrows the visible devices: "
                     + (", ".join(shown) + ", " if shown else "")
                     + "srun's --gpus-per-task / --gpu-bind, and the job's --gpus* request.")
        commands.append("env | grep -E '^(ROCR|HIP|CUDA)_VISIBLE_DEVICES=|^SLURM_.*GPU'")
        commands.append("rocm-smi --showproductname" if backend == "hip" else "nvidia-smi -L")
    return reasons, commands, " ".join(fixes)
