"""The import layers of DESIGN §2, kept true by an AST walk of doctor/ and checks/
(the built-in checks, installed as doctor.checks).

A check imports `doctor` and `doctor.<pkg>`, never another check: knowledge two checks
share lives in doctor/job/ (or doctor/scanners/). The leaves (model, errors, secrets,
proc, logblock) import nothing above them; job knowledge, scanners and probes never import the
engine (registry, runner, report, cli) or the multi-node transport. No cycles.
"""
from __future__ import annotations

import ast
from collections import defaultdict

from conftest import ROOT

LEAVES = {"doctor.model", "doctor.errors", "doctor.secrets", "doctor.proc", "doctor.logblock"}
KNOWLEDGE = ("doctor.job", "doctor.scanners", "doctor.probes")
ENGINE = ("doctor.registry", "doctor.runner", "doctor.report", "doctor.cli", "doctor.multinode")
CHECKS = ("doctor.checks",)


def _modules() -> dict:
    out = {}
    for folder, pkg in (("doctor", "doctor"), ("checks", "doctor.checks")):
        for p in sorted((ROOT / folder).rglob("*.py")):
            parts = p.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((pkg, *parts)).removesuffix(".__init__")
            out[name] = ast.parse(p.read_text(), filename=str(p))
    return out


def _edges(mods: dict) -> dict:
    """module → the doctor/checks modules it imports (at any depth of its code)."""
    edges: dict = defaultdict(set)
    for name, tree in mods.items():
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                targets = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for t in targets:
                parts = t.split(".")
                while parts and ".".join(parts) not in mods:
                    parts.pop()
                if parts and ".".join(parts) != name:
                    edges[name].add(".".join(parts))
    return edges


def _under(mod: str, prefixes) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in prefixes)


def test_no_check_imports_another_check():
    edges = _edges(_modules())
    bad = sorted((a, b) for a, bs in edges.items() for b in bs
                 if _under(a, CHECKS) and _under(b, CHECKS) and a not in CHECKS)
    assert not bad, f"checks import checks (move the shared part to doctor/job/): {bad}"


def test_lower_layers_do_not_import_higher_ones():
    edges = _edges(_modules())
    bad = []
    for a, bs in edges.items():
        for b in bs:
            if _under(b, CHECKS):
                if not _under(a, CHECKS):   # the registry imports them by name, at run time
                    bad.append((a, b))
            elif a in LEAVES and b not in LEAVES:
                bad.append((a, b))
            elif _under(a, KNOWLEDGE) and _under(b, ENGINE):
                bad.append((a, b))
    assert not bad, f"imports against the layers: {sorted(bad)}"


def test_no_import_cycles():
    edges = _edges(_modules())
    index: dict = {}
    low: dict = {}
    stack: list = []
    cycles = []

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in list(_modules()):
        if v not in index:
            visit(v)
    assert not cycles, cycles


def test_the_guard_sees_a_planted_violation(tmp_path):
    """The walk would catch a check importing a check (the test cannot pass vacuously)."""
    mods = {"doctor.checks.a": ast.parse("from doctor.checks.b import x"),
            "doctor.checks.b": ast.parse("x = 1")}
    assert _edges(mods)["doctor.checks.a"] == {"doctor.checks.b"}
