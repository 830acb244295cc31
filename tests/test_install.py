"""The built-in checks live in the doctor's own namespace, `doctor.checks`, whatever else
is on the path (issue 28: a user's own `checks/__init__.py`, on PYTHONPATH or as the
working directory of `python -m doctor`, had switched every built-in check off and the
run said PASS). The source tree keeps them in the top-level checks/ folder; pyproject's
package-dir installs it as doctor.checks."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from conftest import ROOT, clean_env, make_pack, one_line_exit_2, validate_report
from doctor.registry import builtin_ids

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


# ---- a user's own `checks` package beside the doctor (real CLI, real installs) --------

# A user's `checks` package: plain code, as a data-validation package often is. If the
# doctor imported it (in place of its own), the run would have run the user's code, which
# --static never does: the marker says so.
USER_CHECKS = "import pathlib\npathlib.Path({marker!r}).write_text('imported')\n"


def user_repo(tmp_path: Path) -> tuple:
    """The demo as a user's repo with its own `checks/__init__.py`; (repo, marker)."""
    repo = tmp_path / "user"
    shutil.copytree(ROOT / "fixtures" / "demo", repo)
    marker = tmp_path / "users-checks-imported"
    (repo / "checks").mkdir()
    (repo / "checks" / "__init__.py").write_text(USER_CHECKS.format(marker=str(marker)))
    (repo / "checks" / "schema.py").write_text("def rows_are_sorted(rows):\n    return True\n")
    return repo, marker


def doctor(python: str, *args: str, cwd: Path, env: dict | None = None):
    return subprocess.run([python, "-m", "doctor", *args], cwd=cwd, env=clean_env(env),
                          capture_output=True, text=True, timeout=180)


def listed(python: str, cwd: Path, env: dict | None = None) -> list:
    proc = doctor(python, "list", "--format", "json", cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [c["id"] for c in json.loads(proc.stdout)]


def static_demo(python: str, repo: Path, cwd: Path, env: dict | None = None) -> dict:
    """{check id: (status, [path:line, ...])} of `doctor run --static` on the demo."""
    proc = doctor(python, "run", "--static", "--repo", str(repo), "--format", "json",
                  cwd=cwd, env=env)
    assert proc.returncode == 1, (proc.returncode, proc.stderr[-2000:])
    doc = validate_report(json.loads(proc.stdout))
    return {r["id"]: (r["status"], [f"{f['location']['path']}:{f['location']['line']}"
                                    for f in r["findings"] if f.get("location")])
            for r in doc["results"]}


def assert_every_builtin_check_runs(python: str, tmp_path: Path, extra_env: dict) -> None:
    """With the user's `checks` on PYTHONPATH and as the working directory, `doctor list`
    lists what it lists elsewhere (every built-in check), and `doctor run --static` on the
    demo finds what it finds elsewhere, the DataLoader conflict at configs/train.yaml:14
    among them; the user's package is never imported."""
    repo, marker = user_repo(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ids = listed(python, elsewhere, extra_env)
    assert set(builtin_ids()) <= set(ids)
    expected = static_demo(python, repo, elsewhere, extra_env)
    assert expected["dataloader-option-conflict"][0] == "fail"
    assert "configs/train.yaml:14" in expected["dataloader-option-conflict"][1]
    on_path = dict(extra_env, PYTHONPATH=os.pathsep.join(
        [str(repo)] + [p for p in [extra_env.get("PYTHONPATH")] if p]))
    for env in (extra_env, on_path):   # `python -m doctor` from the repo; and on PYTHONPATH
        assert listed(python, repo, env) == ids
        assert static_demo(python, repo, repo, env) == expected
    assert listed(python, elsewhere, on_path) == ids
    assert not marker.exists(), "the doctor imported the user's checks package"


SITE_PACK = '''from doctor import check


@check("site-policy", title="a site's own policy", severity="warning", needs=("repo",))
def site_policy(job):
    """A check pack's check, loaded through its `doctor.checks` entry point.

    ## Why it matters
    Test-only.

    ## How to fix
    Nothing to fix.
    """
'''


def test_a_users_checks_package_hides_no_built_in_check(tmp_path):
    """Issue 28: with the user's checks/ first on the path, `doctor list` printed nothing
    and `doctor run --static` said PASS: nothing ran. A check pack's entry point (the
    third-party interface) loads beside it too."""
    site = tmp_path / "site"
    make_pack(site, "sitepack", SITE_PACK)
    assert_every_builtin_check_runs(sys.executable, tmp_path, {"PYTHONPATH": str(site)})
    assert "site-policy" in listed(sys.executable, tmp_path, {"PYTHONPATH": str(site)})


def tree_copy(dest: Path) -> Path:
    """The checkout's files as git sees them (tracked and new, not ignored): no stale
    build/ directory, which a wheel built in place would pick up."""
    files = subprocess.run(["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


@pytest.mark.slow
@pytest.mark.parametrize("editable", [False, True], ids=["wheel", "editable"])
def test_installed_into_a_fresh_venv_beside_a_users_checks(tmp_path, editable):
    """`pip install .` (a wheel) and `pip install -e .` into a fresh venv: the doctor's
    files are doctor/ and doctor/checks/, never a top-level checks/, and every built-in
    check runs beside the user's package. `python -m doctor` in the source tree runs its
    own checks too, whichever install the interpreter has."""
    tree = tree_copy(tmp_path / "tree")
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = str(env_dir / "bin" / "python")
    pip = subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                          *(["-e"] if editable else []), str(tree)],
                         capture_output=True, text=True, timeout=300)
    if pip.returncode != 0 and "No matching distribution" in pip.stderr:
        pytest.skip(f"package index unreachable: {pip.stderr.strip().splitlines()[-1:]}")
    assert pip.returncode == 0, pip.stderr[-2000:]
    files = subprocess.run(   # -I: not a checkout's stale *.egg-info in the working directory
        [py, "-I", "-c", "import importlib.metadata as m, json; "
         "print(json.dumps([str(f) for f in m.files('slurm-torch-doctor')]))"],
        cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    if not editable:
        installed = [f for f in json.loads(files) if f.endswith(".py")]
        assert "doctor/checks/dataloader.py" in installed
        assert not [f for f in installed if not f.startswith("doctor/")], installed
    assert_every_builtin_check_runs(py, tmp_path, {})
    assert set(builtin_ids()) <= set(listed(py, tree))   # from the source tree's root


def test_a_run_that_loads_no_built_in_check_is_bad_input(tmp_path):
    """A doctor whose checks/ holds no check (a broken install, a shadowed package) says
    so in one line and exits 2, never PASS: nothing ran."""
    shutil.copytree(ROOT / "doctor", tmp_path / "doctor",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "__init__.py").write_text("")
    (tmp_path / "repo").mkdir()
    env = {"PYTHONPATH": str(tmp_path)}
    for args in (["list"], ["run", "--static", "--repo", "repo"],
                 ["run", "--repo", "repo", "--only", "rsync-exclude-unanchored"]):
        one_line_exit_2(doctor(sys.executable, *args, cwd=tmp_path, env=env),
                        "no built-in check found in doctor.checks")
