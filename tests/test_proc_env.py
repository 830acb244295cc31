"""A child's environment is the doctor's, given explicitly (doctor/proc.py `environ`).

Stop 35's CI failed on `OSError: [Errno 14] Bad address: '/usr/bin/scontrol'`: the gather
link's thread set a variable while another thread started scontrol with an inherited
environment, and on Python 3.11.6+ the vfork child's execve read the C environment array
while setenv moved it.
"""
from __future__ import annotations

import ast
import os
import threading
from pathlib import Path

from doctor import proc

ROOT = Path(__file__).resolve().parent.parent
SPAWNERS = {"Popen", "run", "call", "check_call", "check_output"}


def test_children_start_while_another_thread_sets_variables(monkeypatch):
    """Seen failing with `env=None` in proc.start: EFAULT on most of the 100 starts."""
    monkeypatch.setattr(proc, "_for_self", {})
    stop = threading.Event()
    names = [f"DOCTOR_TEST_CHURN_{i}" for i in range(40)]

    def churn() -> None:
        i = 0
        while not stop.is_set():
            os.environ[names[i % 40]] = "v" * 100
            if i % 3 == 0:
                os.environ.pop(names[(i // 3) % 40], None)
            i += 1

    thread = threading.Thread(target=churn, daemon=True)
    thread.start()
    try:
        results = [proc.run_cmd(["true"], timeout=10) for _ in range(100)]
    finally:
        stop.set()
        thread.join()
        for name in names:
            os.environ.pop(name, None)
    failed = [r.stderr for r in results if r.returncode != 0]
    assert failed == []


def test_a_variable_the_doctor_set_for_itself_is_not_passed_on(monkeypatch):
    monkeypatch.setattr(proc, "_for_self", {})
    monkeypatch.delenv("DOCTOR_TEST_OWN", raising=False)
    monkeypatch.setenv("DOCTOR_TEST_USER", "theirs")
    proc.set_for_self("DOCTOR_TEST_OWN", "mine")
    proc.set_for_self("DOCTOR_TEST_USER", "mine")
    try:
        assert os.environ["DOCTOR_TEST_OWN"] == "mine"
        out = proc.run_cmd(["env"], timeout=10).stdout.splitlines()
        assert "DOCTOR_TEST_USER=theirs" in out
        assert not any(line.startswith("DOCTOR_TEST_OWN=") for line in out)
    finally:
        os.environ.pop("DOCTOR_TEST_OWN", None)


def test_a_command_that_cannot_start_is_a_failed_command_not_a_crash():
    """E2BIG: one argument over the kernel's 128 KiB per-string limit."""
    result = proc.run_cmd(["true", "x" * (256 * 1024)], timeout=10)
    assert result.returncode is None and not result.missing
    assert "cannot start" in result.stderr and "Argument list too long" in result.stderr


def test_every_child_in_the_doctor_gets_an_explicit_environment():
    """No subprocess call in doctor/ or checks/ leaves `env` out (or passes None)."""
    missing = []
    for path in sorted([*ROOT.joinpath("doctor").rglob("*.py"),
                        *ROOT.joinpath("checks").rglob("*.py")]):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in SPAWNERS
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "subprocess"):
                env = next((k.value for k in node.keywords if k.arg == "env"), None)
                if env is None or (isinstance(env, ast.Constant) and env.value is None):
                    missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert missing == []
