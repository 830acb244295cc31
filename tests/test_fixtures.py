"""Every fixture case of every check: pass* passes, fail* fails, skip* skips."""
from __future__ import annotations

import pytest

from conftest import validate_report
from harness import fixture_cases, load_case, run_case, subset

CASES = fixture_cases()


@pytest.mark.parametrize("check_id,case", CASES,
                         ids=[f"{c}/{p.name}" for c, p in CASES])
def test_fixture_case(check_id, case, tmp_path):
    result, doc = run_case(check_id, case, tmp_path)
    validate_report(doc)
    expected_status = next(p for p in ("pass", "fail", "skip") if case.name.startswith(p))
    assert result["status"] == expected_status, (
        f"{check_id}/{case.name}: expected {expected_status}, got {result['status']}: "
        f"{result['reason'] or [f['message'] for f in result['findings']]}")
    expect = load_case(case).get("expect") or {}
    for key in ("severity", "reason"):
        if key in expect:
            assert result[key] == expect[key] if key == "severity" else expect[key] in result[key]
    for want in expect.get("findings", []):
        assert any(subset(want, f) for f in result["findings"]), (
            f"no finding matches {want}; got {result['findings']}")
