"""Every environment channel, for every check that reads the job's environment.

A variable reaches a rank through many doors: an export in the batch script, a
sourced file, an inner script that srun runs (also one named by a variable), an
inline `VAR=v cmd` prefix, `srun --export=ALL,VAR=v`, `env VAR=v`, a container's
`--env` / `--env-file` / `SINGULARITYENV_` / `APPTAINERENV_`. And it is stopped by
others: a shell variable that is never exported, an export written after the launch,
`--cleanenv`. The last channel is `os.environ[...] = ...` at the top of the entry module
(which cannot set PYTHONPATH: Python reads it at startup).

Each check below starts from a fixture case whose verdict hangs on one variable;
the test removes that variable from the script and delivers it again through each
channel. The check's verdict must follow the variable: the verdict of
the fixture when the variable reaches the rank, the opposite one when it does not.
(The semantics of each channel are proven against real Slurm and a documented-
semantics container stub in tests/test_steps_oracle.py.)
"""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from harness import FIXTURES, run_case

# check → (fixture case, script, variable, value, status when delivered, when not)
CHECKS = {
    "hip-alloc-conf": ("pass_expandable", "slurm/train.sbatch", "PYTORCH_HIP_ALLOC_CONF",
                       "expandable_segments:True", "pass", "fail"),
    "nccl-env-deprecated": ("fail_renamed_in_sbatch", "slurm/train.sbatch",
                            "NCCL_ASYNC_ERROR_HANDLING", "1", "fail", "pass"),
    "wandb-online-in-container": ("pass_offline_in_sbatch", "slurm/train.sbatch", "WANDB_MODE",
                                  "offline", "pass", "fail"),
    # without the empty variable there is nothing to judge on a login node: skip
    "gpu-not-visible": ("fail_empty_rocr_in_script", "job.sbatch", "ROCR_VISIBLE_DEVICES", "",
                        "fail", "skip"),
    "miopen-cache-shared": ("fail_seed000_disable_cache", "job.sbatch", "MIOPEN_DISABLE_CACHE",
                            "1", "fail", "pass"),
    "package-not-importable": ("pass_src_on_pythonpath", "slurm/train.sbatch", "PYTHONPATH",
                               "src", "pass", "fail"),
}
DELIVER = ("export", "sourced", "inner", "inner_by_variable", "inline", "srun_export", "env",
           "container_env", "container_env_file", "singularityenv", "apptainerenv",
           "entry_module")
BLOCK = ("unexported", "after_launch", "cleanenv")
# Python reads PYTHONPATH once, at startup: setting it in the entry module changes nothing.
BLOCKED_FOR = {("package-not-importable", "entry_module")}


def _launch_index(lines: list) -> int:
    return next(i for i, line in enumerate(lines) if re.search(r"\bpython3?\b", line)
                and not line.lstrip().startswith("#"))


def _with_container(line: str, flag: str = "", tool: str = "singularity") -> str:
    """The launch line running python in a container, with flag added to its exec."""
    m = re.search(r"\b(singularity|apptainer) exec\b", line)
    if m:
        return line[:m.end()] + (f" {flag}" if flag else "") + line[m.end():]
    return re.sub(r"\bpython3?\b", lambda p: f"{tool} exec {flag} img.sif {p.group()}".replace(
        "  ", " "), line, count=1)


def _channel(repo: Path, script: str, var: str, value: str, channel: str) -> None:
    path = repo / script
    text = path.read_text().replace("\\\n", " ")   # one line per command
    lines = [line for line in text.splitlines()
             if not re.match(rf"\s*(export\s+)?{var}=", line)]
    i = _launch_index(lines)
    launch = lines[i]
    assign = f"{var}={value}"
    if channel == "export":
        lines.insert(i, f"export {assign}")
    elif channel == "sourced":
        (repo / "channel_env.sh").write_text(f"export {assign}\n")
        lines.insert(i, "source channel_env.sh")
    elif channel in ("inner", "inner_by_variable"):
        body = re.sub(r"^\s*srun\s+", "", launch)
        (repo / "channel_inner.sh").write_text(f"#!/bin/bash\nexport {assign}\n{body}\n")
        if channel == "inner":
            lines[i] = "srun bash channel_inner.sh"
        else:
            lines[i:i + 1] = ["INNER=channel_inner.sh", 'srun bash "$INNER"']
    elif channel == "inline":
        lines[i] = f"{assign} {launch}"
    elif channel == "srun_export":
        lines[i] = (re.sub(r"^(\s*)srun\b", rf"\1srun --export=ALL,{assign}", launch, count=1)
                    if re.match(r"\s*srun\b", launch) else f"srun --export=ALL,{assign} {launch}")
    elif channel == "env":
        lines[i] = re.sub(r"\bpython3?\b", lambda p: f"env {assign} {p.group()}", launch, count=1)
    elif channel == "container_env":
        lines[i] = _with_container(launch, f"--env {assign}")
    elif channel == "container_env_file":
        (repo / "channel.env").write_text(f"{assign}\n")
        lines[i] = _with_container(launch, "--env-file channel.env")
    elif channel in ("singularityenv", "apptainerenv"):
        tool = "singularity" if channel == "singularityenv" else "apptainer"
        lines.insert(i, f"export {tool.upper()}ENV_{assign}")
        lines[i + 1] = _with_container(launch, tool=tool)
    elif channel == "entry_module":
        m = re.search(r"\bpython3?\s+(?:-u\s+)?(-m\s+)?(\S+)", launch)
        assert m, launch
        entry = repo / (m.group(2).replace(".", "/") + ".py" if m.group(1) else m.group(2))
        entry.parent.mkdir(parents=True, exist_ok=True)
        old = entry.read_text() if entry.exists() else "import torch\n"
        entry.write_text(f"import os\nos.environ[{var!r}] = {value!r}\n{old}")
    elif channel == "unexported":
        lines.insert(i, f"{assign}")
    elif channel == "after_launch":
        lines.insert(i + 1, f"export {assign}")
    elif channel == "cleanenv":
        lines.insert(i, f"export {assign}")
        lines[i + 1] = _with_container(launch, "--cleanenv")
    path.write_text("\n".join(lines) + "\n")


CASES = [(c, ch) for c in CHECKS for ch in DELIVER + BLOCK
         if not (c == "miopen-cache-shared" and ch == "cleanenv")]  # drops the cache dirs too


@pytest.mark.parametrize("check_id,channel", CASES, ids=[f"{c}/{ch}" for c, ch in CASES])
def test_variable_reaches_the_rank(check_id, channel, tmp_path):
    case_name, script, var, value, delivered, absent = CHECKS[check_id]
    case = tmp_path / "fixtures" / case_name
    shutil.copytree(FIXTURES / check_id / case_name, case)
    _channel(case, script, var, value, channel)
    result, _ = run_case(check_id, case, tmp_path / "run")
    want = delivered if channel in DELIVER and (check_id, channel) not in BLOCKED_FOR \
        else absent
    assert result["status"] == want, (
        f"{var} via {channel}: {(case / script).read_text()}\n"
        f"{result['reason'] or [f['message'] for f in result['findings']]}")
