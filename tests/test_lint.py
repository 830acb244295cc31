"""The code is ruff-clean (STYLE.md): lint runs in CI with the tests."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import ROOT


def test_ruff_is_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    proc = subprocess.run([ruff, "check", "--output-format", "concise", "."], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_is_clean():
    mypy = shutil.which("mypy")
    if mypy is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    proc = subprocess.run([mypy], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
