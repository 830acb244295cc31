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
