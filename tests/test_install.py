"""The built-in checks live in the doctor's own namespace, `doctor.checks`, whatever else
is on the path (issue 28: a user's own `checks/__init__.py`, on PYTHONPATH or as the
working directory of `python -m doctor`, had switched every built-in check off and the
run said PASS). The source tree keeps them in the top-level checks/ folder; pyproject's
package-dir installs it as doctor.checks."""
from __future__ import annotations

import re
import sys

from conftest import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:   # pragma: no cover - the test extra brings tomli where tomllib is missing
    import tomli as tomllib


def test_pyproject_installs_every_package_of_the_tree_and_no_top_level_checks():
    """A mapped package is not found by packages.find, so pyproject lists the packages:
    a new doctor/ subpackage missing from the list would be missing from every install."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    tree = {".".join(p.parent.relative_to(ROOT).parts)
            for p in (ROOT / "doctor").rglob("__init__.py")}
    assert set(setuptools["packages"]) == tree | {"doctor.checks"}
    assert setuptools["package-dir"] == {"doctor.checks": "checks"}
    assert (ROOT / "checks" / "__init__.py").is_file() and not (ROOT / "doctor" / "checks").exists()


# `import checks`, `from checks.x import`, also inside a child's `-c` code
TOP_LEVEL_CHECKS = re.compile(r"(?<![\w.])(?:from\s+checks(?:\.\w+)*\s+import"
                              r"|import\s+checks(?=\.\w|\s*(?:$|[;,\"'])|\s+as\s))")


def test_nothing_imports_a_top_level_checks():
    """An import of `checks.x` would load a second copy of the module, or a user's."""
    found = []
    for top in ("doctor", "checks", "tests", "benchmarks"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if "data" in path.relative_to(ROOT).parts[:2] or path.name == "test_install.py":
                continue   # tests/data: users' code as they write it; this file's examples
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if TOP_LEVEL_CHECKS.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not found, "import doctor.checks.<module> instead:\n" + "\n".join(found)


def test_the_guard_sees_a_top_level_import():
    assert TOP_LEVEL_CHECKS.search("    from checks.resume import state_of")
    assert TOP_LEVEL_CHECKS.search('code = "import checks.smoke; print(1)"')
    assert not TOP_LEVEL_CHECKS.search("from doctor.checks.resume import state_of")
    assert TOP_LEVEL_CHECKS.search("import checks")
    assert not TOP_LEVEL_CHECKS.search("import doctor.checks.smoke")
    assert not TOP_LEVEL_CHECKS.search("checks import checks (move the shared part)")
