"""Python children that run nothing of the repository under check.

The doctor reads the installed torch (version, GPUs, API) and looks modules up in
the job's Python in child processes. What a job script exports must not reach them:
an exported PYTHONPATH would run a repo's `sitecustomize.py` and put a repo's
`torch/` first, LD_PRELOAD or LD_AUDIT would load a repo's library into the child,
and so would CUDA's and ROCm's tool-injection variables; an exported PATH would pick
the programs. So such a child is

- this interpreter, `-I -S`: no PYTHON* variable, no `site` (no sitecustomize, no
  `.pth` code), nothing of the working directory on sys.path;
- given sys.path explicitly (`python_argv`): the doctor's own, less the entries that
  lie in the repository (the interpreter's own directories excepted: a venv that the
  user made in the repo and runs the doctor from is running already);
- in the environment the doctor itself was started with (`child_env`), plus, of the
  job's variables, only those that choose which GPUs a process sees.

No interpreter of the repository is ever run: a venv the job activates is looked
into by its base interpreter, or read as data (doctor/job/pylookup.py, env_python).
"""
from __future__ import annotations

import os
import re
import site
import sys
from pathlib import Path
from typing import Mapping, Optional

from doctor import fs

# The job's variables a torch child may see: which GPUs it is shown, and in which order.
GPU_SELECTION = re.compile(r"[A-Z]+_VISIBLE_DEVICES|CUDA_DEVICE_ORDER|GPU_DEVICE_ORDINAL|"
                           r"HSA_OVERRIDE_GFX_VERSION|PYTORCH_NVML_BASED_CUDA_CHECK")


def child_env(login: Mapping[str, str], job: Optional[Mapping[str, str]] = None) -> dict:
    """The environment of a child: the one the doctor was started with (`login`: the
    user's own, which the doctor runs in already), and of `job`'s values only the GPU
    selection. PYTHON* variables are left out too (-I ignores them; a child of the
    child would not)."""
    env = {k: v for k, v in login.items() if not k.startswith("PYTHON")}
    env.update({k: v for k, v in (job or {}).items() if GPU_SELECTION.fullmatch(k)})
    env.setdefault("PATH", os.environ.get("PATH", "/usr/bin:/bin"))
    return env


def inside(path: str, repo: Path) -> bool:
    """The absolute `path` lies in `repo`, as written or once its links are resolved."""
    p = os.path.normpath(path)
    return any(fs.inside(q, top) for q in (p, fs.realpath(p))
               for top in (os.path.normpath(str(repo)), fs.realpath(str(repo))))


def own_path(repo: Path) -> list:
    """The doctor's sys.path as a child gets it: absolute entries only, not the working
    directory (which `python -m doctor` puts first), and none inside `repo` except the
    interpreter's own directories (its prefixes, its site-packages, the user site)."""
    own = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    own += site.getsitepackages() if hasattr(site, "getsitepackages") else []
    own += [site.getusersitepackages()] if site.ENABLE_USER_SITE else []
    own_dirs = [os.path.normpath(d) for d in own if d]
    try:
        cwd: Optional[str] = os.getcwd()
    except OSError:   # deleted
        cwd = None
    out: list = []
    for p in sys.path:
        if not p or not os.path.isabs(p) or p == cwd or p in out:
            continue
        if inside(p, repo) and not any(fs.inside(os.path.normpath(p), d) for d in own_dirs):
            continue
        out.append(p)
    return out


def python_argv(code: str, repo: Path) -> list:
    """`python -I -S -c CODE` with the doctor's interpreter and own_path as sys.path."""
    return [sys.executable, "-I", "-S", "-c",
            f"import sys; sys.path[:] = {own_path(repo)!r}\n{code}"]
