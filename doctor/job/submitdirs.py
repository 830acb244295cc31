"""The directories between the repo root and a job script: where sbatch may also be run from.

A batch script's relative paths (`--output`, the step's `python x.py`, `cd sub`) are read
from the directory sbatch ran in, which the script does not name. The checks try the repo
root and the script's own directory; a repo of several projects is also submitted from a
project directory between the two (`cd file-formats && sbatch run-scripts/bench/run.sh`,
with every path of the script relative to file-formats/). A path that exists from one
of these directories is not known to be missing.
"""
from __future__ import annotations

from pathlib import Path


def dirs_above(repo: Path, script_dir: Path) -> list:
    """The directories strictly between `repo` and `script_dir`, nearest the script first
    (none when the script sits in the repo root or outside the repo)."""
    out = []
    d = script_dir.parent
    while d != repo and repo in d.parents:
        out.append(d)
        d = d.parent
    return out
