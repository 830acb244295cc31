"""Files the job makes: who writes a path before the step that reads it.

A path the job itself makes is not missing before it starts. The producers the doctor
can show, each named with where it is (`producer` returns the first it finds):
 - a command of the job's scripts that writes it: `cp`/`mv`/`ln`/`tee`/`touch`/
   `install`/`rsync`/`wget`/`curl`/`tar`, a redirect `>`, or `mkdir -p` of it;
 - an earlier step of the same script that names it, or a directory above it, on its
   command line (`python pretrain.py --save checkpoints/run1` before a step that reads
   `checkpoints/run1/config.yaml`);
 - the job this one waits for (`#SBATCH --dependency=afterok:…`): its outputs are
   read here, and the doctor cannot see that job;
 - a Python file of the repo that names its directory and writes files (a config
   generator: `output_dir = "grid_search_configs"` … `open(os.path.join(output_dir,
   f"config_{i}.yaml"), "w")`), run by hand before the job;
 - a directory above it that git ignores and whose name says it holds outputs
   (`checkpoints/`, `outputs/`, `runs/` …): made by a run, not by the repo. A git-ignored
   `data/` or `cache/` is not one: those hold inputs the job needs before it starts.
The code's own `os.makedirs`/`Path.mkdir` of a directory is found by the caller, which
reads the code (checks/prerequisites.py).
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Optional

from doctor import fs

# Directory names that hold what a run writes (checkpoints, logs), never its inputs.
OUTPUT_DIRS = {"out", "outs", "output", "outputs", "save", "saved", "saves", "log", "logs",
               "result", "results", "run", "runs", "exp", "exps", "experiment", "experiments",
               "checkpoint", "checkpoints", "ckpt", "ckpts", "wandb", "tensorboard", "tb",
               "lightning_logs", "mlruns"}
WRITERS = r"cp|mv|ln|tee|touch|install|rsync|wget|curl|tar|mkdir"


def producer(job: Any, script: Any, step: Any, written: str, path: Path) -> Optional[str]:
    """Who makes `path` (`written` in the job) before `step` of `script` runs, named so
    that "… makes it" follows; None when the doctor sees no producer."""
    return (script_writes(step, written) or _earlier_step(job, script, step, path)
            or _dependency(script) or _repo_writer(job, path) or _ignored_output_dir(job, path))


def script_writes(step: Any, written: str) -> Optional[str]:
    name = re.escape(os.path.basename(written.rstrip("/")))
    if not name:
        return None
    for s in step.scripts:
        for m in re.finditer(rf"(>>?|\b({WRITERS})\b[^\n]*)\s*\S*{name}\b", s.text):
            line = s.text.count("\n", 0, m.start()) + 1
            return f"the command at {s.rel}:{line} (`{m.group(0).strip()[:60]}`)"
    return None


def _earlier_step(job: Any, script: Any, step: Any, path: Path) -> Optional[str]:
    """An earlier step of the script that names the path or a directory above it."""
    if script is None:
        return None
    for other in job.steps(script):
        if other is step or not other.is_training:
            continue
        if other.line >= step.line and other.script is step.script:
            break
        base = Path(other.cwd) if other.cwd and os.path.isabs(other.cwd) else job.repo
        for arg in other.args:
            value = str(arg).split("=", 1)[-1]
            if not value or "$" in value or value.startswith("-"):
                continue
            made = Path(os.path.normpath(base / value))
            if made == path or (made != base and made in path.parents):
                return f"the earlier step {other.where} (`{other.entry}`, writing {value})"
    return None


def _dependency(script: Any) -> Optional[str]:
    d = script.get("dependency") if script is not None else None
    if d is None or not d.value:
        return None
    return (f"the job it waits for (--dependency={d.value} at {script.rel}:{d.line}; the "
            "doctor cannot see that job)")


_WRITES = re.compile(rb"""open\([^)]*['"][wax]b?\+?['"]|\.write_text\(|\.write_bytes\(|"""
                     rb"""makedirs\(|\.mkdir\(|\.dump\(|\.save\(|\.to_csv\(""")


def _repo_writer(job: Any, path: Path) -> Optional[str]:
    """A repo Python file (not a test) that names the path's directory as a string and
    writes files: the script that generates what the job reads."""
    try:
        rel_dir = path.parent.relative_to(job.repo).as_posix()
    except ValueError:
        return None
    if rel_dir in ("", "."):
        return None
    quoted = [f"{q}{rel_dir}{end}".encode() for q in "'\"" for end in (q, "/")]
    for p in job.repo_files({".py"}, whole=True):
        rel = job.rel(p)
        if re.search(r"(^|/)(tests?|testing)/|(^|/)test_[^/]*\.py$", rel):
            continue
        raw = fs.read_bytes(p, job.unreadable)
        if raw is None or not any(q in raw for q in quoted) or not _WRITES.search(raw):
            continue
        at = min(raw.find(q) for q in quoted if q in raw)
        line = raw.count(b"\n", 0, at) + 1
        return f"{rel}, run before the job (it names {rel_dir} at {rel}:{line} and writes files)"
    return None


def _ignored_output_dir(job: Any, path: Path) -> Optional[str]:
    """The git-ignored output directory above path (inside the repo), or None."""
    try:
        rel = path.relative_to(job.repo)
    except ValueError:
        return None
    parts = rel.parts[:-1]
    for i, part in enumerate(parts):
        if part.lower() not in OUTPUT_DIRS:
            continue
        d = "/".join(parts[:i + 1])
        if job.git("check-ignore", "-q", "--no-index", "--", d + "/").returncode == 0:
            return f"a run (it is under {d}/, an output directory git ignores)"
    return None
