"""The repo's Python sources, read once and parsed at most once per run (never imported).

Every reader shares one byte read of each file (`python_texts`) and one parse of each
file (the per-file tree cache). A reader that only cares about some names asks
`trees_mentioning`: a byte search over the texts first, so in a 100k-file monorepo
only the few files that name (say) `wandb` are parsed at all.
"""
from __future__ import annotations

import bisect
import os
from pathlib import Path
from typing import Any, Optional

from doctor.job.pyread import (  # noqa: F401  (re-exported: readers import them from here)
    MAX_SOURCE_BYTES, _tree, _tree_cache, dotted, imported_files, imported_files_text,
    imports_named, nodes, read_source, tree_of, walk)

SAY_READING = 5_000   # sources: from here on a terminal is told what the run waits for


def python_sources(job) -> list:
    """The repo's .py files (git's view), skipping huge generated ones."""
    return [p for p, _ in python_texts(job)]


def python_texts(job) -> list:
    """[(Path, bytes)] of the repo's .py files that read (git's view, none over
    MAX_SOURCE_BYTES), each read once per run; in a scoped run the changed ones, the
    job's entries and their imports (doctor/job/scope.py). Prefer trees_mentioning: a
    Path per file costs 4 µs, 0.4 s in a 90k-file repo."""
    return job.memo("python_texts", lambda: [(Path(p), text) for p, text in raw_texts(job)])


def raw_texts(job, whole: bool = False) -> list:
    """[(str path, bytes)]: python_texts without a Path per file. What the code checks
    judge: in a scoped run the changed files and what ties them to a job; in a full run
    with job scripts, what their steps run (doctor/job/closure.py job_files); with none,
    the repo's sources less its tests. `whole`: every source of the repo, tests too, for
    a judgement about all of the code. Each is read by name (one open, fstat and read:
    no stat first; a file git lists that is gone is skipped)."""
    from doctor.job.closure import is_test, job_files   # (closure reads trees from here)

    def read(paths: list) -> list:
        if len(paths) >= SAY_READING:
            job.say(f"reading {len(paths):,} Python sources")
        got = job.memo("closure_bytes", dict)   # what the closure read already
        return [(p, text) for p in paths
                if (text := got.get(p) or read_source(p, job.unreadable)) is not None]

    def read_all() -> list:
        top = str(job.repo).rstrip("/") + "/"
        return read([top + r for r in job.every_rel() if r.endswith(".py")])

    def read_job() -> list:
        if job.scope is not None:
            return read([str(p) for p in python_paths(
                job, [r for r in job.repo_rels() if r.endswith(".py")])])
        tied = job_files(job)
        if tied is not None:
            return read([str(p) for p in tied])
        top = len(str(job.repo).rstrip("/")) + 1
        return [(p, text) for p, text in raw_texts(job, True) if not is_test(p[top:])]
    return job.memo(("raw_texts", True), read_all) if whole else \
        job.memo(("raw_texts", False), read_job)


def judges_all(job) -> bool:
    """The code the checks judge is the repo's (less its tests): a full run with no job
    step whose entry is a file of the repo. Else a judgement about all of the code
    (`whole`) reads more than the job's files."""
    from doctor.job.closure import job_files

    return job.scope is None and job_files(job) is None


def text_of(job, path: Any, whole: bool = False) -> Optional[bytes]:
    """The bytes python_texts read of `path`, None when it is not one of them."""
    texts = job.memo(("text_by_path", whole), lambda: dict(raw_texts(job, whole)))
    return texts.get(os.fspath(path))


def python_trees(job, whole: bool = False) -> list:
    """[(path, AST)] of the sources raw_texts lists (`whole`: every one of the repo)
    that parse. Parsed once per run, and the costliest read in a large repo: prefer
    trees_mentioning where a check looks for particular names."""
    def parse_all() -> list:
        return [(Path(p), t) for p, text in raw_texts(job, whole)
                if (t := _tree(job, p, text)) is not None]
    return job.memo(("python_trees", whole), parse_all)


def trees_mentioning(job, *needles: bytes, whole: bool = False, also: tuple = ()) -> list:
    """[(path, AST)] of the sources whose text contains one of `needles` (and, when
    `also` is given, one of `also` too): a byte search first, so a reader that only cares
    about (say) `wandb` neither parses nor walks the rest of a large repo (each file is
    parsed once, whichever reader asks first)."""
    def find() -> list:
        texts = raw_texts(job, whole)
        hits = _mentioning(job, whole, needles)
        if also:
            hits &= _mentioning(job, whole, also)
        return [(Path(texts[i][0]), t) for i in sorted(hits)
                if (t := _tree(job, texts[i][0], texts[i][1])) is not None]
    return job.memo(("trees_mentioning", needles, also) + (("whole",) if whole else ()), find)


def _mentioning(job, whole: bool, needles: tuple) -> set:
    """Indexes into raw_texts of the texts that contain a needle. All texts joined by NUL
    once per run, each needle found with bytes.find (memchr speed) and the search
    resumed at the next text after a hit: 2-3 × a regex per text on 90k files."""
    texts = raw_texts(job, whole)

    def join() -> tuple:
        starts, at = [], 0
        for _, text in texts:
            starts.append(at)
            at += len(text) + 1
        return b"\0".join(text for _, text in texts), starts
    blob, starts = job.memo(("source_blob", whole), join)
    hits: set = set()
    left = len(texts)   # texts no needle has hit yet
    rest: Optional[list] = None
    for needle in needles:
        if not needle or b"\0" in needle:
            continue
        if not left:
            break
        if left * 2 < len(texts):
            # Most texts hit already (a list of 200 function names, most in every file):
            # only the rest can add a hit, so search those alone, not the whole blob.
            if rest is None:
                rest = [k for k in range(len(texts)) if k not in hits]
            found = {k for k in rest if needle in texts[k][1]}
            hits |= found
            rest = [k for k in rest if k not in found]
            left = len(rest)
            continue
        i = blob.find(needle)
        while i != -1:
            k = bisect.bisect_right(starts, i) - 1
            left -= k not in hits
            hits.add(k)
            i = blob.find(needle, starts[k + 1]) if k + 1 < len(starts) else -1
    return hits


def source_path(job, path: Path) -> Optional[Path]:
    """`path` as python_sources lists it (the same file, by its place in the repo), or
    None when it is not one of the repo's sources."""
    names = job.memo("python_source_names",
                     lambda: {os.path.normpath(p): p for p, _ in raw_texts(job)})
    hit = names.get(os.path.normpath(path))   # the repo's files are listed at their real place
    if hit is None:
        hit = names.get(os.path.join(job.repo, job.rel(path)))
    return Path(hit) if hit is not None else None


# ---- a scoped run's sources (doctor/job/scope.py) --------------------------------
def python_paths(job: Any, listed: list) -> list:
    """The Python sources of a scoped run: the changed ones, the entry modules of the job
    scripts in scope, and the repo modules they import, transitively."""
    known = job.every_rel_set()   # what an import may name: one of the repo's files
    todo = [job.repo / r for r in listed]
    for script in job.scripts:
        entry = job.entry_file(job.step(script))
        if entry is not None:
            todo.append(Path(entry))
    seen: dict = {}
    while todo:
        path = todo.pop()
        rel = job.rel(path)
        if rel in seen or rel.startswith("/"):
            continue
        seen[rel] = path
        tree = tree_of(job, path)
        if tree is not None:
            todo += [job.repo / r for r in imported_files(tree, rel, known) if r not in seen]
    return list(seen.values())


