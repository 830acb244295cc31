"""Where and how a job script runs its program, beyond the steps model: the working
directory, the container command (pyxis and CSCS flags included), the repo's console
scripts."""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional

from doctor import fs
from doctor.job.shell import command_argv, effective_command


def scripts_or_none(job) -> list:
    """The job scripts, or [None] (the login environment) when there are none."""
    return list(job.scripts) or [None]


def resolvable(path: str) -> bool:
    return bool(path) and "$" not in path and "`" not in path


def workdir(job, script, scripts: list) -> tuple:
    """(directory, how it was found): --chdir, the first `cd`, else the repo root."""
    if script is not None:
        d = script.get("chdir")
        if d and resolvable(d.value):
            return _abs(job, d.value), f"{script.rel}:{d.line} (--chdir)"
    for s in scripts:
        for cmd in s.commands:
            argv = command_argv(cmd.argv, builtin=True)
            if argv[:1] == ["cd"] and len(argv) > 1 and resolvable(argv[1]):
                p = _abs(job, argv[1])
                if fs.is_dir(p, job.unreadable):
                    return p, f"{s.rel}:{cmd.line} (cd)"
    return job.repo, "the repo root (sbatch's default: the submission directory)"


def _abs(job, p: str) -> Path:
    path = Path(os.path.expanduser(p))
    return path if path.is_absolute() else job.repo / path


CONTAINER_TOOLS = ("singularity", "apptainer")


# pyxis/enroot (an image, or the container an earlier step of the job named); CSCS
SRUN_CONTAINER_FLAGS = ("--container-image", "--container-name", "--environment")


def srun_container(step, script) -> Optional[tuple]:
    """(flag, value) of the pyxis or CSCS Container Engine option that runs a step in a
    container, on its srun line or as the job script's #SBATCH option; None if none."""
    for launcher in step.chain:
        argv = list(launcher.argv) if launcher.kind == "srun" else []
        for i, w in enumerate(argv):
            flag, eq, value = w.partition("=")
            if flag in SRUN_CONTAINER_FLAGS:
                return flag, value if eq or i + 1 == len(argv) else argv[i + 1]
    for flag in SRUN_CONTAINER_FLAGS:
        d = script.get(flag[2:]) if script is not None else None
        if d is not None:
            return flag, d.value
    return None


def container_command(scripts: list) -> Optional[tuple]:
    """(script, command) of the first line that runs in a container: `singularity|apptainer
    exec|run|shell`, or `srun --container-image=…` (pyxis) / `srun --environment=…` (CSCS)."""
    for s in scripts:
        for cmd in s.commands:
            argv = cmd.argv
            for i, w in enumerate(argv[:-1]):
                if w.rsplit("/", 1)[-1] in CONTAINER_TOOLS and \
                        argv[i + 1] in ("exec", "run", "shell", "instance"):
                    return s, cmd
            eff = effective_command(argv)
            if eff and "srun" in eff.prefixes and any(
                    a.split("=", 1)[0] in SRUN_CONTAINER_FLAGS for a in argv[1:]):
                return s, cmd
    return None


def console_scripts(job) -> dict:
    """name → module of the repo's own console scripts ([project.scripts] in
    pyproject.toml, console_scripts in setup.cfg / setup.py): commands that run Python."""
    return job.memo("console_scripts", lambda: _console_scripts(job.repo))


_ENTRY = re.compile(r"""["']?([A-Za-z0-9_.-]+)\s*=\s*([A-Za-z_][\w.]*)\s*:\s*[\w.]+["']?""")


def _console_scripts(repo: Path) -> dict:
    out: dict = {}
    pyproject = repo / "pyproject.toml"
    if fs.is_file(pyproject):
        try:
            import tomllib
        except ImportError:  # Python < 3.11: tomli is a dependency there
            import tomli as tomllib  # type: ignore[no-redef]
        try:
            raw = fs.read_bytes(pyproject) or b""  # an input: no report goes over it
            scripts = tomllib.loads(raw.decode()).get("project", {}).get("scripts", {})
            if isinstance(scripts, dict):
                out.update({k: str(v).split(":")[0] for k, v in scripts.items()})
        except (ValueError, OSError, UnicodeDecodeError):
            pass
    for name in ("setup.py", "setup.cfg"):
        p = repo / name
        text = fs.read_text(p) or ""  # an input: no report goes over it
        m = re.search(r"console_scripts[\"'\]\s:=]*([\s\S]{0,2000})", text)
        if m:
            out.update({k: v for k, v in _ENTRY.findall(m.group(1))})
    return out
