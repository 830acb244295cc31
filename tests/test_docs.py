"""`doctor docs [--check]`: pages per check with the fixtures as examples, stale detection."""
from __future__ import annotations

import json

from conftest import FIXTURES, ROOT, run_doctor


def checks() -> list:
    return json.loads(run_doctor("list", "--format", "json").stdout)


def test_docs_writes_one_page_per_check_and_an_index(tmp_path):
    out = tmp_path / "checks"
    proc = run_doctor("docs", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    ids = [c["id"] for c in checks()]
    assert sorted(p.name for p in out.iterdir()) == sorted([f"{i}.md" for i in ids] + ["index.md"])
    index = (out / "index.md").read_text()
    for c in checks():
        # the severities its findings can have, as `doctor list` shows them (error/warning)
        shown = "/".join(c["severities"])
        assert f"| [`{c['id']}`]({c['id']}.md) | {shown} |" in index
        page = (out / f"{c['id']}.md").read_text()
        assert f"# {c['id']}\n" in page and "## Why it matters" in page and "## How to fix" in page


def test_pages_show_the_fixture_cases_as_examples(tmp_path):
    out = tmp_path / "checks"
    run_doctor("docs", "--out", str(out))
    documented = 0
    for c in checks():
        cases = sorted(p.name for p in (FIXTURES / c["id"]).glob("*")
                       if p.is_dir() and p.name.startswith(("pass", "fail")))
        if not cases:
            continue
        page = (out / f"{c['id']}.md").read_text()
        assert "## Examples" in page
        for case in cases:
            verdict = "fails" if case.startswith("fail") else "passes"
            assert f"### `{case}`: the check **{verdict}**" in page, (c["id"], case)
        documented += 1
    assert documented, "no check has fixtures yet"


def test_docs_is_deterministic_and_check_detects_staleness(tmp_path):
    out = tmp_path / "checks"
    run_doctor("docs", "--out", str(out))
    first = {p.name: p.read_text() for p in out.iterdir()}
    assert run_doctor("docs", "--out", str(out)).stdout.endswith("all up to date\n")
    assert {p.name: p.read_text() for p in out.iterdir()} == first
    ok = run_doctor("docs", "--check", "--out", str(out))
    assert ok.returncode == 0 and "up to date" in ok.stdout

    victim = sorted(first)[0]
    (out / victim).write_text(first[victim] + "hand edit\n")
    (out / "retired-check.md").write_text(first[victim].split("\n", 1)[0] + "\n# gone\n")
    (out / "index.md").unlink()
    stale = run_doctor("docs", "--check", "--out", str(out))
    assert stale.returncode == 1
    assert stale.stderr.count("\n") == 1
    for name in (f"{victim} (changed)", "index.md (missing)", "retired-check.md (not generated"):
        assert name in stale.stderr
    assert (out / victim).read_text().endswith("hand edit\n")  # --check writes nothing

    run_doctor("docs", "--out", str(out))
    assert {p.name: p.read_text() for p in out.iterdir()} == first


def test_the_committed_docs_are_current():
    proc = run_doctor("docs", "--check")
    assert proc.returncode == 0, proc.stderr + "  (run `doctor docs` and commit docs/checks)"
    assert (ROOT / "docs" / "checks" / "index.md").exists()
