"""Meta-tests over the registry: every check is well-formed and has its fixtures."""
from __future__ import annotations

import pytest

from doctor.registry import ID_RE, SECTIONS, all_checks
from harness import FIXTURES, PREFIXES

SPECS = all_checks()


def test_there_are_checks():
    assert len(SPECS) >= 2


@pytest.mark.parametrize("spec", SPECS, ids=[s.id for s in SPECS])
def test_check_is_well_formed(spec):
    assert ID_RE.match(spec.id)
    assert spec.title and not spec.title.endswith(".")
    assert spec.doc.splitlines()[0].strip(), "docstring needs a one-line summary"
    for section in SECTIONS:
        heading = section.removeprefix("## ")
        assert spec.section(heading), f"{spec.id}: empty {section}"
    cases = [p.name for p in (FIXTURES / spec.id).iterdir()] if (FIXTURES / spec.id).is_dir() \
        else []
    assert any(c.startswith("pass") for c in cases), f"fixtures/{spec.id}/pass* missing"
    assert any(c.startswith("fail") for c in cases), f"fixtures/{spec.id}/fail* missing"


def test_every_fixture_dir_belongs_to_a_check():
    ids = {s.id for s in SPECS}
    for d in FIXTURES.iterdir():
        if d.is_dir() and d.name != "demo":
            assert d.name in ids, f"fixtures/{d.name} has no check"
            for case in d.iterdir():
                assert case.name.startswith(PREFIXES) or not case.is_dir(), \
                    f"fixtures/{d.name}/{case.name}: case names start with pass/fail/skip"


def test_builtin_ids_read_from_the_sources_are_the_registered_checks():
    """`--only` finds a check's module from the modules' text (registry.builtin_ids):
    a check it could not read would send every `--only` of it through full discovery."""
    from doctor.registry import builtin_ids

    assert builtin_ids() == {s.id: s.module for s in SPECS if s.module.startswith("doctor.checks.")}


ONLY_PROBE = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write(
    "MODULES " + json.dumps(sorted(m for m in sys.modules if m.startswith("doctor.checks.")))
    + "\\n"))
from doctor.cli import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("settings,imported", [
    ("", ["doctor.checks.rsync"]),
    # the settings name a check in another module: it is imported, to validate its options
    ("options:\n  git-large-file: {warn_bytes: 1000}\n",
     ["doctor.checks.git_hygiene", "doctor.checks.rsync"]),
    # a tag needs every check's tags: the whole registry
    ("ignore: [gpu]\n", "all"),
], ids=["only", "settings-name-another", "ignore-a-tag"])
def test_only_imports_the_modules_of_the_checks_it_names(tmp_path, settings, imported):
    import json
    import subprocess
    import sys

    from conftest import clean_env

    if settings:
        (tmp_path / "doctor.yaml").write_text(settings)
    proc = subprocess.run([sys.executable, "-c", ONLY_PROBE, "run", "--static", "--only",
                           "rsync-exclude-unanchored", "--repo", str(tmp_path), "--format",
                           "json"], capture_output=True, text=True, env=clean_env(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert [(r["id"], r["status"]) for r in report["results"]] == \
        [("rsync-exclude-unanchored", "skip")]
    loaded = json.loads(proc.stderr.split("MODULES ", 1)[1])
    if imported == "all":
        assert len(loaded) == len({s.module for s in SPECS
                                   if s.module.startswith("doctor.checks.")})
    else:
        assert loaded == imported


def test_only_with_a_bad_option_of_a_check_it_does_not_run_is_refused(tmp_path):
    """The settings are validated whichever checks run (exit 2, one line)."""
    import subprocess
    import sys

    from conftest import clean_env

    (tmp_path / "doctor.yaml").write_text("options:\n  git-large-file: {warn_bytez: 1}\n")
    proc = subprocess.run([sys.executable, "-m", "doctor", "run", "--static", "--only",
                           "rsync-exclude-unanchored", "--repo", str(tmp_path)],
                          capture_output=True, text=True, env=clean_env(), timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"doctor: error: {tmp_path / 'doctor.yaml'}: options.git-large-file: unknown option "
        "'warn_bytez' (known: error_bytes, warn_bytes)"]
