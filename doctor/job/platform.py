"""Which platform the job runs on, ROCm or CUDA: one answer, from the evidence.

Every check that behaves differently on ROCm asks `platform_of(job, script)`, so
two checks can no longer disagree about the same job. The evidence, strongest
first:
- the torch the job runs: `--torch-version` / settings (`+rocm6.2`, `+cu121`), else
  on a live node the installed build (HIP or CUDA);
- the node's devices on a live node: /dev/kfd (AMD) or /dev/nvidia* (NVIDIA);
- the job's step: the container image's own name (a `.sif` file's name, a
  `docker://`/registry reference, pyxis' `--container-image`, CSCS' `--environment`)
  or a loaded module naming ROCm or CUDA or known to be one stack's (`rocm`,
  `cudatoolkit`, LUMI's `singularity-AI-bindings`, ...), the `--rocm` / `--nv`
  container flags, the variables only one stack reads (ROCR_VISIBLE_DEVICES,
  HIP_VISIBLE_DEVICES, PYTORCH_HIP_ALLOC_CONF vs nvidia-smi, CUDA_HOME), and last
  MIOPEN_* variables.
Only these structured facts count, never a word elsewhere on the line: a bind path
`-B /scratch/x/cuda-bench` says nothing about the image.
MIOPEN_* variables alone are weak: scripts copied from a LUMI job into an NVIDIA
cluster's keep them. Alone they make the platform "maybe ROCm" (checks that run on
it say at most a warning); against any NVIDIA sign they count for nothing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from doctor.job.shell import command_argv

ROCM_VARS = ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "PYTORCH_HIP_ALLOC_CONF",
             "HSA_OVERRIDE_GFX_VERSION", "ROCM_PATH")
NVIDIA_VARS = ("CUDA_HOME", "CUDA_PATH", "NVIDIA_VISIBLE_DEVICES")
_ROCM_TEXT = re.compile(r"rocm|\bhip\b|mi250|mi300|amdgpu|lumi_rocm", re.I)
_NVIDIA_TEXT = re.compile(r"\bcuda\b|nvidia|nvcr\.io|\bngc\b|\+cu\d|cuda\d|cudnn", re.I)


@dataclass(frozen=True)
class Platform:
    name: Optional[str]          # "rocm", "cuda", or None when nothing says
    evidence: tuple              # why, strongest first ("torch 2.5.1+rocm6.2 is a ROCm build")
    against: tuple = ()          # signs of the other platform that were outweighed
    maybe: Optional[str] = None  # only weak signs (MIOPEN_* alone) point there

    @property
    def may_be_rocm(self) -> bool:
        """ROCm, or only MIOPEN_* variables say so (nothing contradicts them)."""
        return self.name == "rocm" or self.maybe == "rocm"

    @property
    def is_rocm(self) -> bool:
        return self.name == "rocm"

    @property
    def why(self) -> str:
        return self.evidence[0] if self.evidence else "no sign of either platform"

    def to_dict(self) -> dict:
        return {"platform": self.name, "maybe": self.maybe, "evidence": list(self.evidence),
                "against": list(self.against)}


def platform_of(job: Any, script: Any = None) -> Platform:
    """The platform of the script's training step (None: the login environment)."""
    return job.memo(("platform", script.rel if script else None),
                    lambda: _decide(job, script))


def container_binds_gpus(step: Any) -> bool:
    """`singularity exec --rocm` / `apptainer run --nv`: the step binds the node's GPUs
    into its container, so it means to use them (a CPU job runs the image without)."""
    return any(launcher.kind == "container" and
               any(w in ("--rocm", "--nv", "--nvccli") for w in launcher.argv)
               for launcher in step.chain)


SRUN_GPU_OPTIONS = ("--gpus", "-G", "--gpus-per-node", "--gpus-per-task", "--gres")


def srun_asks_gpus(step: Any) -> bool:
    """Whether an srun of the step asks for GPUs: --gpus/-G, --gpus-per-node,
    --gpus-per-task `[type:]count` or --gres=gpu[:type][:count], a count above 0 (one the
    doctor cannot read counts as a request, as Slurm's `gpu:TYPE` is one GPU)."""
    for launcher in step.chain:
        if launcher.kind != "srun":
            continue
        words = list(launcher.argv[1:])   # srun's own options (the program is not in it)
        for i, w in enumerate(words):
            key, eq, value = w.partition("=")
            if key.startswith("-G") and len(key) > 2:
                key, value = "-G", key[2:]
            elif key in SRUN_GPU_OPTIONS and not eq:
                value = words[i + 1] if i + 1 < len(words) else ""
            if key not in SRUN_GPU_OPTIONS or not value:
                continue
            if key == "--gres":
                items = [g.partition(":")[2] for g in value.split(",")
                         if g.split(":")[0] == "gpu"]
                if not items:
                    continue
                value = items[0]
            last = value.rsplit(":", 1)[-1].strip()
            if not last.isdigit() or int(last) > 0:
                return True
    return False


def _decide(job: Any, script: Any) -> Platform:
    build = _from_torch(job)
    if build is not None:
        return build
    rocm, cuda, weak_rocm, weak_cuda = _step_signs(job, script)
    if not job.static:
        devices = _fact(job, "devices") or {}
        if devices.get("kfd"):
            rocm.insert(0, "/dev/kfd is present")
        if devices.get("nvidia"):
            cuda.insert(0, "/dev/nvidia* devices are present")
    if rocm and not cuda:
        return Platform("rocm", tuple(rocm + weak_rocm), tuple(weak_cuda))
    if cuda and not rocm:
        return Platform("cuda", tuple(cuda + weak_cuda), tuple(weak_rocm))
    if rocm and cuda:
        return Platform(None, (), tuple(rocm + cuda))
    if weak_rocm and not weak_cuda:   # MIOPEN_* alone: a ROCm job, or a copied block
        return Platform(None, tuple(weak_rocm), maybe="rocm")
    return Platform(None, (), tuple(weak_rocm + weak_cuda))


def _from_torch(job: Any) -> Optional[Platform]:
    """The torch build decides when it is known: the one given (--torch-version,
    settings), else on a live node the installed build (a CUDA build on a login node
    is not the job's when the job runs in a container)."""
    version = job.torch_version_given
    if version and "rocm" in version:
        return Platform("rocm", (f"torch {version} is a ROCm build",))
    if version and re.search(r"\+cu\d", version):
        return Platform("cuda", (f"torch {version} is a CUDA build",))
    if version or job.static:
        return None
    build = _fact(job, "torch_build") or {}
    if build.get("hip"):
        return Platform("rocm", (f"torch is a HIP build ({build.get('version')})",))
    if build.get("cuda") and not _runs_in_container(job):
        return Platform("cuda", (f"torch is a CUDA build ({build.get('version')})",))
    return None


def _runs_in_container(job: Any) -> bool:
    return any(s.container is not None for s in job.all_steps())


def _fact(job: Any, name: str) -> Any:
    try:
        return job.fact(name)
    except KeyError:   # a live probe this build lacks
        return None


# Partitions whose nodes are known to be AMD: LUMI-G (MI250X), the only ROCm system
# among the public ones the seeds come from; its projects are project_46xxxxxxx.
ROCM_PARTITIONS = {"standard-g", "small-g", "dev-g", "ju-standard-g", "ju-strategic-g"}
_LUMI_ACCOUNT = re.compile(r"^project_46\d{7}$")


def _site_signs(script: Any) -> list:
    if script is None:
        return []
    part, acct = script.get("partition"), script.get("account")
    if part is not None and part.value in ROCM_PARTITIONS and acct is not None \
            and _LUMI_ACCOUNT.match(acct.value):
        return [f"{script.rel}:{part.line} asks for LUMI's GPU partition {part.value} "
                "(AMD MI250X nodes)"]
    return []


def _step_signs(job: Any, script: Any) -> tuple:
    """(ROCm, NVIDIA, weak ROCm, weak NVIDIA signs) in the step's environment, container
    and scripts. Weak: MIOPEN_* (copied blocks keep them) and the *-smi tools (often
    probed behind `if command -v`)."""
    step = job.step(script)
    env = step.env
    rocm = _site_signs(script)
    rocm += [f"{n} is set ({env[n].where()})" for n in ROCM_VARS if n in env
             and env[n].channel != "login"]
    cuda = [f"{n} is set ({env[n].where()})" for n in NVIDIA_VARS if n in env
            and env[n].channel != "login"]
    for launcher, image, flags in _images(step):
        where = f"{launcher.path}:{launcher.line}"
        if "--rocm" in flags or (image and _ROCM_TEXT.search(image)):
            rocm.insert(0, f"the container is a ROCm one ({where}: "
                           f"{'--rocm' if '--rocm' in flags else image})")
        if {"--nv", "--nvccli"} & set(flags) or (image and _NVIDIA_TEXT.search(image)):
            cuda.insert(0, f"the container is an NVIDIA one ({where}: "
                           f"{'--nv' if '--nv' in flags else image})")
    weak_rocm: list = []
    weak_cuda: list = []
    for s in step.scripts:
        for cmd in s.commands:
            argv = command_argv(cmd.argv) or [""]   # `srun nvidia-smi` runs nvidia-smi
            if argv[0] in ("module", "ml"):
                for name in loaded_modules(argv):
                    stack = module_stack(name)
                    if stack:
                        (rocm if stack == "rocm" else cuda).append(
                            f"{s.rel}:{cmd.line} loads {name}")
            elif argv[0] == "nvidia-smi":   # often behind `if command -v`: weak
                weak_cuda.append(f"{s.rel}:{cmd.line} runs nvidia-smi")
            elif argv[0] in ("rocm-smi", "amd-smi"):
                weak_rocm.append(f"{s.rel}:{cmd.line} runs {argv[0]}")
    miopen = sorted(k for k in env if k.startswith("MIOPEN_") and env[k].channel != "login")
    miopen += sorted(k for k in env if k.startswith("MIOPEN_") and env[k].channel == "login")
    weak_rocm += [f"{k} is set ({env[k].where()})" for k in miopen[:1]]
    return rocm, cuda, weak_rocm, weak_cuda


# Modules that belong to one GPU stack whatever their name says: the stacks' own
# toolkits and compilers, the Cray PE accelerator targets, and LUMI's bindings for its
# ROCm AI containers (https://github.com/Lumi-supercomputer/LUMI-EasyBuild-contrib/blob/
# main/easybuild/easyconfigs/s/singularity-AI-bindings/USER.md: "good performance for
# network communications through RCCL").
_ROCM_MODULES = re.compile(r"rocm|amd|amd-mixed|prgenv-amd|craype-accel-amd-.*|aws-ofi-rccl|"
                           r"rccl|singularity-ai-bindings", re.I)
_CUDA_MODULES = re.compile(r"cuda|cudatoolkit|cudnn|nccl|nvhpc.*|prgenv-nvidia|"
                           r"craype-accel-nvidia.*", re.I)
_MODULE_LOADS = ("load", "add", "try-load", "try-add", "swap", "switch")


def loaded_modules(argv: list) -> list:
    """The modules `module load A B/1.2` (add, try-load, swap) or `ml A` loads."""
    if argv[0] == "ml":
        args = argv[1:]
        if args and args[0] in _MODULE_LOADS:
            args = args[1:]
        elif args and args[0] in ("unload", "purge", "use", "unuse", "list", "avail",
                                  "spider", "show", "help", "save", "restore"):
            return []
        return [a for a in args if not a.startswith("-")]
    args = [a for a in argv[1:] if not a.startswith("-")]
    if not args or args[0] not in _MODULE_LOADS:
        return []
    names = args[1:]
    return names[1:] if args[0] in ("swap", "switch") and len(names) > 1 else names


def module_stack(name: str) -> Optional[str]:
    """"rocm" or "cuda" for a module that is one stack's, by its name: a known module
    (before the version), or ROCm/CUDA in the name itself (`PyTorch/2.1-CUDA-12.1`)."""
    base = name.split("/")[0]
    if _ROCM_MODULES.fullmatch(base):
        return "rocm"
    if _CUDA_MODULES.fullmatch(base):
        return "cuda"
    if _ROCM_TEXT.search(name):
        return "rocm"
    if _NVIDIA_TEXT.search(name):
        return "cuda"
    return None


_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.I)


def image_name(word: str) -> str:
    """What names an image: a registry reference as written (`docker://nvcr.io/...`,
    `nvcr.io#nvidia/pytorch:24.01`), a file by its own name (`lumi-rocm.sif`), never the
    directories it sits in."""
    if _SCHEME.match(word) or "#" in word or not word.startswith(("/", ".", "$", "~")) \
            and not word.endswith((".sif", ".simg", ".sqsh", ".img", ".toml")):
        return _SCHEME.sub("", word)
    return word.rstrip("/").rsplit("/", 1)[-1]


def _images(step: Any) -> list:
    """(launcher, image name or None, flags) of the step's containers: singularity/
    apptainer (the word after the options) and srun's pyxis `--container-image` or CSCS
    `--environment`."""
    out = []
    if step.container is not None:
        argv = list(step.container.argv)
        opts = argv[2:-1]
        out.append((step.container, image_name(argv[-1]) if len(argv) > 2 else None,
                    [o.split("=", 1)[0] for o in opts if o.startswith("--")]))
    for launcher in step.chain:
        if launcher.kind != "srun":
            continue
        argv = list(launcher.argv)
        for i, w in enumerate(argv):
            key, eq, value = w.partition("=")
            if key in ("--container-image", "--environment"):
                value = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
                if value:
                    out.append((launcher, image_name(value), []))
    return out
