"""What a path that is not there most likely meant, and the edit that writes it in
(entry-not-found and config-not-found name the same guess)."""
from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Optional

from doctor import edits
from doctor.job.context import Job
from doctor.model import Edit


def in_repo(job: Job, p: Path) -> bool:
    """The path lies inside the repo (job.rel leaves one outside it as it is)."""
    return job.rel(p) != str(p) and not job.rel(p).startswith("..")


def nearest_file(job: Job, entry: str, path: Path) -> Optional[str]:
    """The repo file the entry most likely means: one with its name, the one sharing
    the most trailing path parts with it and nearest to where it was looked for; else
    a file of a close name and the same suffix in the directory it names (stage1.py for
    stage_1.py, 350M.yml for 350m.yml). (config-not-found names it too.)"""
    name = os.path.basename(entry)
    want = job.rel(path).split("/")
    hits = [r for r in job.every_rel_set() if r.rsplit("/", 1)[-1] == name]
    if hits:
        def score(rel: str) -> tuple:
            parts = rel.split("/")
            same = 0
            while same < min(len(parts), len(want)) and parts[-1 - same] == want[-1 - same]:
                same += 1
            common = len(os.path.commonprefix([parts[:-1], want[:-1]]))
            return (-same, len(parts) + len(want) - 2 * common, rel)
        return min(hits, key=score)
    folder = job.rel(path.parent)
    prefix = "" if folder in (".", "") else folder + "/"
    suffix = os.path.splitext(name)[1]
    near = [r for r in job.every_rel_set() if r.endswith(suffix) and r.startswith(prefix)
            and "/" not in r[len(prefix):]]
    # the stems, case aside: `y.yaml` is not `x.yaml`, `350m.yml` is `350M.yml`
    stems = {os.path.splitext(r[len(prefix):])[0].lower(): r for r in sorted(near)}
    stem = os.path.splitext(name)[0].lower()
    close = difflib.get_close_matches(stem, list(stems), n=1, cutoff=0.8)
    return stems[close[0]] if close else None


def word_edit(job: Job, rel: str, line: int, old: str, new: str,
              title: str) -> Optional[Edit]:
    """The command at rel:line (and its `\\` continuation lines) with the path `old`
    written as `new`, where the command holds `old` once as a plain word (else nothing:
    the user edits it). Unsafe: the file it names is the doctor's guess.
    (config-not-found uses it too.)"""
    lines = edits.read_lines(job, rel)
    if lines is None or not 1 <= line <= len(lines):
        return None
    word = re.compile(r"(?<![\w./$-])" + re.escape(old) + r"(?![\w./-])")
    for n in range(line, min(len(lines), line + 40) + 1):
        text = lines[n - 1]
        hits = word.findall(text)
        if len(hits) == 1:
            return edits.replace_line(job, rel, n, word.sub(new, text.rstrip("\r\n")),
                                      title, unsafe=True)
        if hits or not text.rstrip("\r\n").endswith("\\"):
            return None
    return None
