"""The repo's Python sources, parsed once per run (never imported)."""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Optional

MAX_SOURCE_BYTES = 1_000_000


def python_sources(job) -> list:
    """The repo's .py files (git's view), skipping huge generated ones."""
    return [p for p in job.repo_files({".py"}) if p.stat().st_size <= MAX_SOURCE_BYTES]


def _parse(path: Path) -> Optional[ast.AST]:
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError, RecursionError):
        return None


def python_trees(job) -> list:
    """[(path, AST)] of the repo's Python sources that parse (never imports them).
    Parsed once per run, whichever check asks first: several checks read the code."""
    def parse_all() -> list:
        return [(p, t) for p in python_sources(job) if (t := _parse(p)) is not None]
    return job.memo("python_trees", parse_all)


def dotted(node: ast.AST) -> str:
    """`torch.distributed.barrier` for that attribute chain; "" when its head is not a
    name (a call, a subscript): one reading of call names for every code reader."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""
