"""The Python distributions this interpreter sees, and the job's environment variables:
what `doctor diff` compares between two runs ("numpy 1.26.4 -> 2.0.1", "NCCL_DEBUG").

Both are cheap (about a millisecond): distributions are read from the names of the
`*.dist-info` / `*.egg-info` directories on sys.path (the metadata file only when the
name holds no version), never by importing a package.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Optional

from doctor.probes import probe

# The variables a training step's behaviour depends on (the rest, SLURM_JOB_ID or PWD,
# change with every job and explain nothing).
ENV_PREFIXES = ("NCCL_", "RCCL_", "TORCH", "PYTORCH_", "CUDA_", "CUDNN_", "NVIDIA_", "HIP_",
                "ROCR_", "ROCM_", "HSA_", "MIOPEN_", "AMD_", "OMP_", "MKL_", "KMP_",
                "OPENBLAS_", "FI_", "CXI_", "UCX_", "MPICH_", "GLOO_", "MASTER_", "PYTHON",
                "LD_", "SINGULARITY", "APPTAINER", "CONDA_", "VIRTUAL_ENV", "WANDB_", "HF_",
                "TRANSFORMERS_", "TOKENIZERS_", "TRITON_", "XLA_", "NUMEXPR_", "EBROOT",
                "EBVERSION", "LMOD_FAMILY_", "LOADEDMODULES", "PATH")

_NORMAL = re.compile(r"[-_.]+")


def _normal(name: str) -> str:
    """The PEP 503 name: `PyYAML` and `pyyaml`, `typing_extensions` and `typing-extensions`
    are one."""
    return _NORMAL.sub("-", name).lower()


def _from_metadata(path: str) -> Optional[tuple]:
    """(name, version) from the headers of a distribution's own metadata file (an
    egg-info without a version in its name; a file, or a directory holding PKG-INFO)."""
    meta = path if os.path.isfile(path) else os.path.join(path, "PKG-INFO")
    found: dict = {}
    with open(meta, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.strip():
                break  # the headers end at the first blank line
            key, _, value = line.partition(":")
            found.setdefault(key.strip().lower(), value.strip())
    name, version = found.get("name"), found.get("version")
    return (name, version) if name and version else None


def installed(paths: Optional[list] = None) -> dict:
    """{normalized name: version} of every distribution on sys.path; the first one found
    wins, as it does for `import`."""
    out: dict = {}
    for entry in (sys.path if paths is None else paths):
        try:
            names = sorted(e.name for e in os.scandir(entry or "."))
        except OSError:
            continue
        for name in names:
            stem, dot, kind = name.rpartition(".")
            if kind not in ("dist-info", "egg-info") or not dot:
                continue
            # `name-version.dist-info`, `name-version-py3.11.egg-info` (names use `_`)
            parts = stem.split("-")
            found: Optional[tuple] = (parts[0], parts[1]) if len(parts) >= 2 else None
            if found is None:
                try:
                    found = _from_metadata(os.path.join(entry or ".", name))
                except OSError:  # unreadable metadata: not a package Python can see either
                    found = None
            if found:
                out.setdefault(_normal(found[0]), found[1])
    return dict(sorted(out.items()))


@probe("packages")
def packages(job) -> list:
    """`name==version` of every Python distribution the doctor's interpreter sees (a list,
    not a mapping: the report masks the value of a secret-looking key, and `google-auth`
    is a package)."""
    return [f"{name}=={version}" for name, version in installed().items()]


@probe("env")
def env(job) -> dict:
    """The environment variables of the running process that a training step depends on
    (ENV_PREFIXES); inside a job, the job's. Secret-named values are masked in the report."""
    return {k: v for k, v in sorted(job.login_env.items()) if k.startswith(ENV_PREFIXES)}


@probe("script_env")
def script_env(job) -> dict:
    """{job script: {variable: value}}: what each script's training step sets itself
    (exports, sourced and inner scripts, srun --export, container env), not what it
    inherits from the login environment. Only for the scripts a check read: nothing is
    computed just for the report (a million-line script is read within a check's deadline)."""
    out: dict = {}
    for script in job.scripts:
        steps = job.memoized(("steps", script.rel))
        if not steps:
            continue
        step = next((s for s in steps if s.is_training), steps[-1])
        out[script.rel] = {k: v.value for k, v in sorted(step.env.items())
                           if v.source != "login"}
    return out
