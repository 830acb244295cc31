"""Every relative link of the user docs leads to a file of this repository (and a
`#fragment` to a heading of it), as a reader of a clone or of GitHub follows it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import ROOT

PAGES = sorted([ROOT / "README.md", ROOT / "fixtures" / "demo" / "README.md",
                *(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "checks").glob("*.md")])
# [text](target) and [text](target "title"), images too; [label]: target definitions
INLINE = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")


def links(text: str) -> list:
    """The link targets of a page, outside code blocks and code spans."""
    prose = CODE_SPAN.sub("", FENCE.sub("", text))
    return INLINE.findall(prose) + DEFINITION.findall(prose)


def anchors(page: Path) -> set:
    """GitHub's heading ids: lower case, punctuation but - and _ dropped, spaces to -."""
    out = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", FENCE.sub("", page.read_text()), re.M):
        out.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return out


def test_the_pages_exist():
    assert ROOT / "docs" / "ci.md" in PAGES and len(PAGES) > 10


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_resolves_inside_the_repo(page):
    broken = []
    for target in links(page.read_text()):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):   # https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if ROOT not in dest.parents and dest != ROOT:
            broken.append(f"{target} (outside the repository)")
        elif not dest.exists():
            broken.append(f"{target} (no such file)")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target} (no heading #{fragment} in {dest.name})")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


# A repository path written out in prose or code (`docs/ci.md`, tests/harness.py,
# ../../docs/checks/): what a reader types or opens. Relative to the page when it starts
# with ../, else to the repository's root or the page.
PATH_WORD = re.compile(r"(?<![\w/.$~-])((?:\.\./)+[\w./-]*|(?:docs|tests|benchmarks|fixtures|"
                       r"doctor|checks)/[\w./-]*[\w/])")


@pytest.mark.parametrize("page", [p for p in PAGES if p.parent.name != "checks"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_repository_path_a_page_names_exists(page):
    missing = []
    for word in PATH_WORD.findall(page.read_text()):
        word = word.rstrip(".")
        if "*" in word or "<" in word:
            continue
        bases = [page.parent] if word.startswith("..") else [ROOT, page.parent]
        if not any((b / word).exists() and ROOT in (b / word).resolve().parents
                   for b in bases):
            missing.append(word)
    assert not missing, f"{page.relative_to(ROOT)} names {missing}, not files of the repo"


TESTS_SOURCE = "\n".join(p.read_text() for p in (ROOT / "tests").glob("test_*.py"))


@pytest.mark.parametrize("page", [p for p in PAGES if p.parent.name != "checks"],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_test_a_page_cites_exists(page):
    """The docs cite tests as evidence (`test_static_runs_nothing_...`): each is a test
    function of tests/ (a name ending in `…` or `_` is a prefix)."""
    cited = re.findall(r"`(test_[a-z0-9_]+)(?:\[[^\]`]*\])?(…)?`", page.read_text())
    missing = [name for name, prefix in cited
               if not re.search(r"^\s*def " + name + ("" if prefix else r"\b"), TESTS_SOURCE,
                                re.M)]
    assert not missing, f"{page.relative_to(ROOT)} cites tests that do not exist: {missing}"
