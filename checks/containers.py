"""Singularity/Apptainer steps that cannot see the job's files, GPU libraries or fabric."""
from __future__ import annotations

import os
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.context import Job
from doctor.job.launchers import CONTAINER_VALUE
from doctor.job.platform import platform_of
from doctor.model import FixOption, add

BIND_VARS = ("APPTAINER_BIND", "APPTAINER_BINDPATH", "SINGULARITY_BIND", "SINGULARITY_BINDPATH")
CONTAINLIBS_VARS = ("APPTAINER_CONTAINLIBS", "SINGULARITY_CONTAINLIBS")
# apptainer's default binds besides $HOME and the working directory ("Bind Paths and Mounts")
RUNTIME_DEFAULTS = ("/proc", "/sys", "/dev", "/tmp", "/var/tmp")
CONTAINED = ("/tmp", "/var/tmp")   # --contain/--containall gives empty ones instead
DATA_VARS = ("HF_HOME", "HF_DATASETS_CACHE", "TRANSFORMERS_CACHE", "HUGGINGFACE_HUB_CACHE",
             "TORCH_HOME", "TORCH_EXTENSIONS_DIR", "XDG_CACHE_HOME", "TRITON_CACHE_DIR",
             "MIOPEN_USER_DB_PATH", "MIOPEN_CUSTOM_CACHE_DIR", "WANDB_DIR", "DATA_DIR",
             "DATA_ROOT", "DATASET_DIR")
CONFIG_FLAGS = ("--config", "--config-file", "--config_file", "--cfg")


def _under(path: str, root: str) -> bool:
    root = root.rstrip("/") or "/"
    return root == "/" or path == root or path.startswith(root + "/")


def _mount_dir(path: str) -> str:
    """What to bind for a path: its first two components (/scratch/project_X)."""
    parts = [p for p in path.split("/") if p]
    return "/" + "/".join(parts[:2]) if len(parts) > 1 else path


class ContainerStep:
    """One `singularity|apptainer exec|run`: its flags, binds and host environment."""

    def __init__(self, launcher, step) -> None:
        self.launcher, self.step = launcher, step
        self.host = launcher.env if launcher.env is not None else step.env
        argv = list(launcher.argv)
        self.flags: set = set()
        self.binds: list = []       # (src, dst, origin)
        self.no_mount: set = set()
        i = 2
        while i < len(argv) - 1 and argv[i].startswith("-"):
            key, eq, value = argv[i].partition("=")
            if argv[i].startswith("-B") and len(argv[i]) > 2:   # -B/src:dst, joined
                key, eq, value = "-B", "=", argv[i][2:]
            if key in CONTAINER_VALUE and not eq and i + 1 < len(argv) - 1:
                value, i = argv[i + 1], i + 1
            if key in ("-B", "--bind"):
                self._add(value, f"-B at {launcher.path}:{launcher.line}")
            elif key == "--no-mount":
                self.no_mount |= set(value.split(","))
            else:
                self.flags.add({"-c": "--contain", "-C": "--containall",
                                "-e": "--cleanenv"}.get(key, key))
            i += 1
        for var in BIND_VARS:
            v = self.host.get(var)
            if v is not None and v.value:
                self._add(v.value, f"{var} ({v.where()})")

    def _add(self, spec: str, origin: str) -> None:
        for item in spec.split(","):
            src, _, rest = item.strip().partition(":")
            if src:
                self.binds.append((src, rest.partition(":")[0] or src, origin))

    @property
    def contained(self) -> bool:
        return bool(self.flags & {"--contain", "--containall"})

    @property
    def where(self) -> str:
        return f"{self.launcher.path}:{self.launcher.line}"


def _coverage(cs: ContainerStep, path: str, site: dict) -> tuple:
    """(covered, why-not note or '') for an absolute path seen inside the container."""
    for _src, dst, _ in cs.binds:
        if "$" not in dst and _under(path, dst):
            return True, ""
    for d in RUNTIME_DEFAULTS:
        if _under(path, d) and not (cs.contained and d in CONTAINED) and \
                not (d in ("/tmp", "/var/tmp") and "tmp" in cs.no_mount):
            return True, ""
    home = cs.step.env.text("HOME") or cs.host.text("HOME")
    no_home = cs.contained or "--no-home" in cs.flags or "home" in cs.no_mount
    for d in site.get("default_binds") or ():
        if d != "$HOME" and _under(path, d):
            return True, ""
    if not no_home and home and _under(path, home):
        return True, ""
    symlinked = [s for s in site.get("symlinked_paths") or () if _under(path, s)]
    cwd = cs.step.cwd
    if not cs.contained and "cwd" not in cs.no_mount and cwd and _under(path, cwd):
        if not any(_under(cwd, s) for s in site.get("symlinked_paths") or ()):
            return True, ""
    note = ""
    if symlinked:
        note = (f"{symlinked[0]} entries are symlinks on this site, and apptainer does not "
                "bind a working directory whose path holds symlinks: bind the directory")
    elif not cs.contained and cwd is None:
        note = ("unless it lies under the directory the job is submitted from (bound by "
                "default), which the doctor does not know")
    elif not no_home and not home:
        note = "unless it lies under $HOME (bound by default), which the doctor does not know"
    return False, note


def _job_path(job: Job, cs: ContainerStep, path: str, site: dict) -> bool:
    """Whether an unbound code path is one of the job's host files (so the container
    cannot see it: an error), not a path the image itself may hold (`python
    /opt/app/train.py` in an image built with its code: an unknown link). The job's are
    those under its working directory, $HOME, a bind's source or the site profile's file
    systems, in the local checkout itself, or in a directory named after the job's
    account or user. A path elsewhere whose name matches a repo
    file (`/opt/app/train.py`) is not one: an image built from the repo holds the same."""
    home = cs.step.env.text("HOME") or cs.host.text("HOME")
    roots = [cs.step.cwd, home, str(job.repo)] + [src for src, _, _ in cs.binds] + \
        list(site.get("symlinked_paths") or ()) + \
        [d for d in site.get("default_binds") or () if d != "$HOME"]
    if any(r and "$" not in r and r.rstrip("/") and _under(path, r) for r in roots):
        return True
    # a directory named after the job's account or user (/projappl/project_465002500/…,
    # /scratch/$USER/…) is the job's storage on the host, wherever the site mounts it
    batch = cs.step.batch
    account = batch.get("account", "A") if batch is not None else None
    names = {account.value if account is not None else "",
             cs.step.env.text("USER") or cs.host.text("USER") or ""}
    return bool(names - {""} & set(path.split("/")))


def _used_paths(cs: ContainerStep) -> list:
    """(path, what, is_code, EnvValue or None) the program uses, absolute or unresolved."""
    step, env = cs.step, cs.step.env
    out: list = []

    def add(raw: str, what: str, code: bool, v=None) -> None:
        if raw and not raw.startswith(("/", "$")) and step.cwd and "$" not in step.cwd:
            raw = os.path.normpath(os.path.join(step.cwd, raw))
        if raw.startswith(("/", "$")):
            out.append((raw, what, code, v))
    pp = env.get("PYTHONPATH")
    if pp is not None:
        for entry in pp.value.split(":"):
            # `${PYTHONPATH}` appends the value the job inherits: not a path it names
            if entry and entry.strip("${}").split(":-")[0] != "PYTHONPATH":
                add(entry, f"PYTHONPATH entry ({pp.where()})", True, pp)
    if step.entry and not step.entry_is_module:
        add(step.entry, f"the entry script ({step.where})", True)
    args = list(step.args)
    for i, a in enumerate(args):
        key, eq, value = a.partition("=")
        if key in CONFIG_FLAGS:
            value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            add(value, f"{key} file ({step.where})", False)
    for name in DATA_VARS:
        v = env.get(name)
        if v is not None and v.value:
            add(v.value, f"{name} ({v.where()})", False, v)
    return out


def _opaque(cs: ContainerStep) -> list:
    """Sources that may set SINGULARITY_BIND/CONTAINLIBS where the doctor cannot see."""
    notes = [n for n in cs.host.notes if "may set variables" in n]
    return list(cs.host.opaque) + notes


def _is_gpu(job: Job, cs: ContainerStep) -> Optional[str]:
    for flag in ("--rocm", "--nv"):
        if flag in cs.flags:
            return f"{flag} at {cs.where}"
    p = platform_of(job, cs.step.batch)
    if p.name:
        return f"a {'ROCm' if p.name == 'rocm' else 'CUDA'} job: {p.why}"
    return None


@check("container-binds-missing", title="A container step cannot see the job's files, "
       "GPU libraries or fabric", severity="error", tags=("container", "singularity", "site"),
       needs=("repo", "sbatch", "settings"), timeout=20)
def container_binds_missing(job: Job) -> Iterator[Finding]:
    """A `singularity|apptainer exec|run` step lacks a bind the job needs.

    For each container step of the job model the doctor reads `-B/--bind`
    (`src[:dst[:opts]]`, comma lists, repeated), `APPTAINER_BIND(PATH)` /
    `SINGULARITY_BIND(PATH)`, `--contain`, `--containall`, `--no-home`,
    `--no-mount`, `--rocm`, `--nv` and `SINGULARITY_CONTAINLIBS`, and applies
    apptainer's documented defaults
    (https://apptainer.org/docs/user/latest/bind_paths_and_mounts.html: $HOME,
    the working directory "unless its path contains symlinks", /tmp, /var/tmp,
    /proc, /sys, /dev; `--contain` gives empty /tmp and $HOME instead:
    https://man.archlinux.org/man/apptainer-exec.1.en) plus the site profile's
    `default_binds`, `symlinked_paths`, `gpu_libraries` and `fabric_binds`.

    - An absolute PYTHONPATH entry or entry script that nothing binds: error
      (the job cannot start), when it is one of the job's host files: under the
      working directory, $HOME, a bind's source, the site's file systems or a
      directory named after the job's account or user. Elsewhere (`python
      /opt/app/train.py`) the image itself may hold it: warning. A `--config` file
      or a data/cache directory (HF_HOME, TORCH_HOME, ...): warning (it may be
      created inside).
    - On a site naming `gpu_libraries` (LUMI), a GPU step (`--rocm`, `--nv`,
      or a ROCm/CUDA job) that neither binds them nor lists them in
      SINGULARITY_CONTAINLIBS: error (seed 002: no GPU is visible).
    - A multi-node step without the site's `fabric_binds`: warning.

    Precision: a path with a variable the doctor cannot resolve, a working
    directory it cannot know, a `module load` that may set the bind variables (one
    the site profile's `modules` does not describe: LUMI's singularity-AI-bindings sets
    the SINGULARITY_BIND the profile gives),
    or `--rocm`/`--nv` (which bind the libraries the site's *liblist.conf
    names) make a finding a warning.

    ## Why it matters
    Inside the container only the bound host paths exist: an unbound code
    directory is `ModuleNotFoundError` or `No such file` at start-up, after the
    queue wait; without the site's GPU libraries PyTorch sees no GPU ("No HIP
    GPUs available"), and without the fabric libraries multi-node
    communication falls back or fails. On LUMI the project directories under
    /scratch and /project are symlinks into /pfs, so the working directory is
    not bound by default.

    ## How to fix
    Bind each directory the job uses, e.g.
    `singularity exec -B /scratch/project_X -B /projappl/project_X "$SIF" ...`,
    and on LUMI export the GPU libraries and bind the fabric before the step:
    `export SINGULARITY_CONTAINLIBS="/usr/lib64/libcxi.so.1,/opt/rocm/lib/librocm_smi64.so.7"`
    and `-B /opt/cray/libfabric` (or `module load singularity-AI-bindings`).
    """
    site = job.site
    seen: dict = {}
    for script in job.scripts:
        for step in job.steps(script):
            if step.container is not None:
                key = (step.container.path, step.container.line)
                seen.setdefault(key, []).append(step)
    if not seen:
        raise Skip("the job runs no singularity/apptainer exec|run step")
    has_site = bool(site.get("profile")) or any(
        site.get(k) for k in ("symlinked_paths", "default_binds", "gpu_libraries", "fabric_binds"))
    findings: list = []
    for steps in seen.values():
        findings += _findings(job, steps, site)
    if not findings and not has_site:
        raise Skip("no site profile is known (set `site:` in doctor.yaml), and every path "
                   "the container steps use is bound")
    yield from findings


def _findings(job: Job, steps: list, site: dict) -> list:
    out: list = []
    cs0 = ContainerStep(steps[0].container, steps[0])
    loc = Location(cs0.launcher.path, cs0.launcher.line)
    opaque = _opaque(cs0)
    unless = f" (unless {' or '.join(opaque)} binds it)" if opaque else ""
    done: set = set()
    for step in steps:
        cs = ContainerStep(step.container, step)
        for path, what, code, _v in _used_paths(cs):
            if path in done:
                continue
            done.add(path)
            if "$" in path:
                head = path.split("/$")[0] if not path.startswith("$") else ""
                if path.startswith(("$HOME", "${HOME}")) or (head and _coverage(cs, head, site)[0]):
                    continue
                var = path[path.index("$"):].split("/")[0]
                out.append(Finding(
                    f"{what} {path} in the container step at {cs.where}: the doctor cannot "
                    f"resolve {var}, so it cannot tell whether a bind covers it",
                    location=loc, severity=Severity.WARNING,
                    data={"container": cs.where, "path": path, "unresolved": var}))
                continue
            covered, note = _coverage(cs, path, site)
            if covered:
                continue
            if code and not _job_path(job, cs, path, site):
                note = ("it names no file of the repo and lies under none of the job's own "
                        "directories (the working directory, $HOME, a bind's source, the "
                        "site's file systems): the image itself may hold it")
            certain = code and not opaque and "unless" not in note and "image" not in note
            mount = _mount_dir(path)
            tail = f" ({note})" if note else ""
            out.append(Finding(
                f"{what} {path} is not bound into the container at {cs.where}{tail}{unless}: "
                + ("the job cannot start" if code else "the program cannot read it there"),
                location=loc, severity=None if certain else Severity.WARNING,
                fix=f"Bind it: add `-B {mount}` to the container command at {cs.where}.",
                data={"container": cs.where, "path": path, "bind": mount,
                      "binds": [b[0] if b[0] == b[1] else f"{b[0]}:{b[1]}" for b in cs.binds]}))
    libs = list(site.get("gpu_libraries") or ())
    gpu = _is_gpu(job, cs0) if libs else None
    if gpu:
        contain = []
        for var in CONTAINLIBS_VARS:
            v = cs0.host.get(var)
            if v is not None:
                contain += [x.strip() for x in v.value.split(",")]
        missing = [lib for lib in libs
                   if lib not in contain and os.path.basename(lib) not in
                   {os.path.basename(c) for c in contain}
                   and not any(_under(lib, src) for src, _, _ in cs0.binds)]
        if missing:
            liblist = [f for f in ("--rocm", "--nv") if f in cs0.flags]
            why = (f" ({liblist[0]} binds what the site's liblist.conf names, which the doctor "
                   "cannot read)" if liblist else "")
            out.append(Finding(
                f"GPU container step at {cs0.where} ({gpu}) lacks the site's GPU libraries "
                f"{', '.join(missing)}: neither bound nor in SINGULARITY_CONTAINLIBS{why}"
                f"{unless}; PyTorch then sees no GPU (seed 002: \"No HIP GPUs available\")",
                location=loc, severity=Severity.WARNING if (liblist or opaque) else None,
                fix="Export the libraries before the container step.",
                commands=(f'export SINGULARITY_CONTAINLIBS="{",".join(libs)}"',),
                options=(FixOption((add(loc.path if loc else None,
                                        f'export SINGULARITY_CONTAINLIBS="{",".join(libs)}"',
                                        where=f"before line {loc.line}, the container step"
                                        if loc and loc.line else "before the container step"),
                                    )),),
                data={"container": cs0.where, "missing": missing, "gpu": gpu}))
    nodes = max((s.nodes.value or 0) for s in steps)
    fabric = [f for f in site.get("fabric_binds") or ()
              if not any(_under(f, src) for src, _, _ in cs0.binds)]
    if nodes > 1 and fabric:
        out.append(Finding(
            f"multi-node container step at {cs0.where} ({nodes} nodes, "
            f"{steps[0].nodes.source}) does not bind the site's fabric {', '.join(fabric)}"
            f"{unless}: inter-node communication cannot use the network's libraries",
            location=loc, severity=Severity.WARNING,
            fix=f"Bind the fabric libraries: add {' '.join('-B ' + f for f in fabric)} to the "
                "container command.",
            data={"container": cs0.where, "missing": fabric, "nodes": nodes}))
    return out
