"""ast.parse for a process whose checks run in threads.

CPython 3.11 before 3.11.8 and 3.12 before 3.12.1 keep the AST constructor's recursion
depth in interpreter-wide state, so two threads parsing at once can fail with
"SystemError: AST constructor recursion depth mismatch" (python/cpython#106905). The
doctor's checks run concurrently and each may parse: every parse in this process goes
through one lock. Parsing holds the interpreter lock anyway, so the lock costs nothing.
"""
from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source, filename: str = "<unknown>") -> ast.Module:
    """ast.parse(source, filename), one thread at a time."""
    with _LOCK:
        return ast.parse(source, filename=filename)
