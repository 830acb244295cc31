"""The repo's Python sources, parsed once per run (never imported)."""
from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Optional

from doctor import fs

MAX_SOURCE_BYTES = 1_000_000


def python_sources(job) -> list:
    """The repo's .py files (git's view), skipping huge generated ones."""
    return [p for p in job.repo_files({".py"})
            if (st := fs.stat(p, job.unreadable)) and st.st_size <= MAX_SOURCE_BYTES]


def _parse(path: Path, log: fs.Log = None) -> Optional[ast.AST]:
    source = fs.read_bytes(path, log)
    if source is None:
        return None
    try:
        return ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError, RecursionError):
        return None


def python_trees(job) -> list:
    """[(path, AST)] of the repo's Python sources that parse (never imports them).
    Parsed once per run, whichever check asks first: several checks read the code."""
    def parse_all() -> list:
        return [(p, t) for p in python_sources(job) if (t := _parse(p, job.unreadable)) is not None]
    return job.memo("python_trees", parse_all)


def tree_of(job, path: Path) -> Optional[ast.AST]:
    """One file's AST: from the run's parse of the whole repo when a check already made it,
    else that file alone (a check that needs one entry module does not pay for all)."""
    path = Path(os.path.normpath(path))
    trees = job.memoized("python_trees")
    if trees is not None:
        return next((t for p, t in trees if Path(os.path.normpath(p)) == path), None)
    return job.memo(("python_tree", str(path)), lambda: _parse(path, job.unreadable))


def trees_mentioning(job, *needles: bytes) -> list:
    """[(path, AST)] of the sources whose text contains one of `needles`: a byte search
    first, so a reader that only cares about (say) `wandb` neither parses nor walks the
    rest of a large repo (the parse is shared when the whole repo was parsed anyway)."""
    def find() -> list:
        parsed = job.memoized("python_trees")
        by_path = {os.path.normpath(p): t for p, t in parsed} if parsed is not None else None
        out = []
        for p in python_sources(job):
            text = fs.read_bytes(p, job.unreadable)
            if text is None:
                continue
            if not any(n in text for n in needles):
                continue
            t = by_path.get(os.path.normpath(p)) if by_path is not None else tree_of(job, p)
            if t is not None:
                out.append((p, t))
        return out
    return job.memo(("trees_mentioning", needles), find)


def dotted(node: ast.AST) -> str:
    """`torch.distributed.barrier` for that attribute chain; "" when its head is not a
    name (a call, a subscript): one reading of call names for every code reader."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""
