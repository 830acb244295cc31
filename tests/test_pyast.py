"""Concurrent checks parse Python in threads; CPython 3.11 < 3.11.8 fails such parses with
"SystemError: AST constructor recursion depth mismatch" (python/cpython#106905). The CI
saw it once in 2,682 tests. Every parse in the doctor goes through doctor.pyast."""
import re
import threading
from pathlib import Path

from doctor import pyast

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "def f():\n" + "".join(f"    x{i} = [{{'a': (1, [2, {{3: (4,)}}])}} for _ in range(3)]\n"
                                for i in range(200)) * 5


class _Cycle:
    def __del__(self):   # the collector runs Python code mid-parse: another thread may run
        pass


def _parse_in_threads(parse) -> list:
    errors: list = []

    def work():
        for _ in range(4):
            try:
                parse(SOURCE)
            except SystemError as exc:
                errors.append(str(exc))
            for _ in range(200):
                c = _Cycle()
                c.self = c

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_parses_in_threads_never_fail_with_the_recursion_depth_mismatch():
    assert _parse_in_threads(pyast.parse) == []


def test_the_doctor_never_calls_ast_parse_directly():
    """Not in doctor/, not in the checks: one unlocked parse in any thread breaks the
    locked ones too (the shared depth counter). In-process parses only: a child
    program's source (a string) parses in its own process."""
    child_programs = {"pyast.py", "pylookup.py"}   # pylookup's is the source of a child's
    direct = [f"{p.relative_to(ROOT)}:{n}" for top in ("doctor", "checks")
              for p in (ROOT / top).rglob("*.py") if p.name not in child_programs
              for n, line in enumerate(p.read_text().splitlines(), 1)
              if re.search(r"\bast\.parse\(", line)]
    assert direct == []

