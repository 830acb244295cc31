"""The rsync emulation against the real rsync: same tree, same rules, same file list.

Every case runs `rsync -r -l -n --out-format=%n RULES SRC EMPTY/` (the ground
truth harness of reference §3) and doctor.scanners.rsync over the same tree, and
compares the two name lists file by file.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from doctor.scanners.rsync import Exclusions, parse_command, transfer_list

RSYNC = shutil.which("rsync")
pytestmark = pytest.mark.skipif(RSYNC is None,
                                reason="rsync is not installed (.ci/run installs it)")

TREE = ["src/vcloud/data/__init__.py", "src/vcloud/data/loader.py", "src/vcloud/model.py",
        "data/big.bin", "a/f.py", "a/b/f.py", "a/b/c", "top.py", "x/foo/bar/z", "foo/sub/q",
        "foo/file", "foo2", "sp ace", "logs", "logs /k", "core", "core.py", "[x]", ".git/HEAD",
        ".hidden", "CVS/Entries", "m.o", "keep~", "b/c/d", "deep/b/c", "Data/up"]


def build(root: Path, files: list, symlinks: bool = True) -> None:
    for f in files:
        p = root / f
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f)
    if symlinks:
        os.symlink("a", root / "alink")
        os.symlink("top.py", root / "flink")


def real_rsync(args: list, src: str, cwd: Path, home: Path) -> list:
    dst = cwd / "_dst"
    dst.mkdir(exist_ok=True)
    proc = subprocess.run([RSYNC, "-r", "-l", "-n", "--out-format=%n", *args, src, str(dst) + "/"],
                          cwd=cwd, capture_output=True, text=True, timeout=30,
                          env={"LC_ALL": "C", "PATH": os.environ.get("PATH", "/usr/bin"),
                               "HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    return sorted(n for n in proc.stdout.splitlines() if n and n != "./")


def emulated(args: list, src: str, cwd: Path) -> list:
    cmd = parse_command(["rsync", *args, src, "_dst/"],
                        lambda p: (cwd / p).read_bytes())
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return sorted(transfer_list(src, cmd.rules, follow_links=cmd.follow_links))
    finally:
        os.chdir(old)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    base = tmp_path_factory.mktemp("oracle")
    build(base / "t", TREE)
    (base / "t" / "a" / ".cvsignore").write_text("f.py  b\n")
    (base / "home").mkdir()
    (base / "ex.txt").write_bytes(b"# comment\n; also a comment\ndata\r+ keep~\n- /foo2\n\n"
                                  b"  logs\nsrc/vcloud/model.py\n")
    (base / "clear.txt").write_bytes(b"core\n!\nfoo/\n")
    return base


# Every edge case of reference §3, plus the seed's deploy command.
EDGE = [
    ("t/", ["--exclude=data"]), ("t", ["--exclude=data"]), ("t/", ["--exclude=/data"]),
    ("t", ["--exclude=/t/data"]), ("t", ["--exclude=/data"]),
    ("t/", ["--exclude", ".git", "--exclude", "__pycache__", "--exclude", "data"]),
    ("t/", ["--exclude=foo/bar"]), ("t/", ["--exclude=b/c"]),                 # 1
    ("t/", ["--exclude=a/**/f.py"]), ("t/", ["--exclude=a/**.py"]),
    ("t/", ["--exclude=/**.py"]),                                               # 2
    ("t/", ["--exclude=foo/**"]), ("t/", ["--exclude=foo/***"]),               # 3
    ("t/", ["--exclude=.*"]),                                                   # 4
    ("t/", ["-f", "- foo/", "-f", "+ foo/file"]),
    ("t/", ["-f", "+ foo/file", "-f", "- foo/"]),
    ("t/", ["-f", "+ foo/file", "-f", "- foo/*"]),                             # 5
    ("t/", ["-f", "+ *.py", "-f", "- *"]),
    ("t/", ["-f", "+ */", "-f", "+ *.py", "-f", "- *"]),                       # 6
    ("t/", ["--exclude=alink/"]), ("t/", ["-L", "--exclude=alink/"]),          # 7
    ("t", ["--exclude=t"]), ("t", ["--exclude=/foo"]), ("t", ["--exclude=/t/foo"]),  # 8
    ("t/", ["--exclude=logs "]), ("t/", ["--exclude=logs"]),                   # 9
    ("t/", ["--exclude=core", "--exclude=!", "--exclude=foo"]),
    ("t/", ["--exclude=sp\\ ace"]), ("t/", ["--exclude=sp\\ a*"]),             # 10
    ("t/", ["--exclude=data"]), ("t/", ["--exclude=Data"]), ("t/", ["--exclude=foo"]),  # 11
    ("t/", ["-C"]), ("t/", ["--cvs-exclude", "--include=core"]),
    ("t/", ["--exclude-from=ex.txt"]), ("t/", ["--include-from=ex.txt", "--exclude=*"]),
    ("t/", ["--exclude-from", "clear.txt"]),
    ("t/", ["--exclude=- data"]), ("t/", ["--exclude=+ data", "--exclude=*"]),
    ("t/", ["-f-! */"]), ("t/", ["-f", "-! *.py"]), ("t/", ["-f", "-,p core"]),
    ("t/", ["--filter=exclude data"]), ("t/", ["-f-_data"]), ("t/", ["-f", "H data"]),
    ("t/", ["-f", "S data", "-f", "- data"]), ("t/", ["-f", "P data"]),
    ("t/", ["-f", "-,r data"]), ("t/", ["-f", "-,s data"]),
    ("t/", ["--exclude=**data"]), ("t/", ["--exclude=**/data"]), ("t/", ["--exclude=*/data"]),
    ("t/", ["--exclude=**a[!x]b"]), ("t/", ["--exclude=[[:alpha:]]"]),
    ("t/", ["--exclude=*[[:digit:]]*"]), ("t/", ["--exclude=[[]x]"]), ("t/", ["--exclude=\\[x]"]),
    ("t/", ["--exclude=[x]"]), ("t/", ["--exclude=?"]), ("t/", ["--exclude=core.*"]),
    ("t/", ["--exclude=src/**/data/"]), ("t/", ["--exclude=/src/***"]), ("t/", ["--exclude=***"]),
    ("t/", ["-az", "--exclude", "data"]), ("t/", ["-azf- data"]), ("t/", ["-azf", "- data"]),
    ("t/", ["--include=*/", "--exclude=*.py"]), ("t/", ["--exclude=/"]), ("t/", ["--exclude=//"]),
]


@pytest.mark.parametrize("src,args", EDGE, ids=[f"{s} {' '.join(a)}" for s, a in EDGE])
def test_edge_case_matches_real_rsync(tree, src, args):
    assert emulated(args, src, tree) == real_rsync(args, src, tree, tree / "home")


# ---- property tests: generated trees and patterns ------------------------------

NAMES = ["a", "b", "data", "f.py", ".x", "core", "ab", "b1", "[a]"]
SEGMENTS = NAMES + ["*", "**", "***", "?", "a*", "*.py", "[ab]", "[!a]*", "d?ta", "**.py",
                    "[[:digit:]]", "b[0-9]"]

trees = st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map("/".join),
                 min_size=1, max_size=25, unique=True)
patterns = st.builds(
    lambda lead, segs, trail: lead + "/".join(segs) + trail,
    st.sampled_from(["", "", "/"]), st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3),
    st.sampled_from(["", "", "/"]))
# `-!`/`+!`: negated, matching where the pattern does not (a third as often as plain rules)
actions = st.sampled_from(["-", "+", "-", "+", "-!", "+!"])
rules = st.lists(st.tuples(actions, patterns), min_size=1, max_size=4)


def materialize(files: list, root: Path) -> None:
    for f in files:
        p = root / f
        if p.exists() and p.is_file():
            continue   # "a" as a file and as a directory: keep the first
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("x")
        except OSError:
            pass


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=trees, rule_list=rules, trailing=st.booleans())
def test_generated_rules_match_real_rsync(files, rule_list, trailing):
    with tempfile.TemporaryDirectory() as d:
        base = Path(d)
        materialize(files, base / "t")
        (base / "home").mkdir()
        args = [f"--filter={a} {p}" for a, p in rule_list]
        src = "t/" if trailing else "t"
        assert emulated(args, src, base) == real_rsync(args, src, base, base / "home"), args


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=trees, rule_list=rules, trailing=st.booleans(), pick=st.integers(0, 3))
def test_one_walk_finds_what_anchoring_a_rule_would_send(files, rule_list, trailing, pick):
    """rsync-exclude-unanchored walks the tree once (Exclusions) and asks, per unanchored
    exclude, what its anchored form would send too; real rsync run with each rule list
    is the oracle."""
    unanchored = [i for i, (a, p) in enumerate(rule_list) if a == "-" and not p.startswith("/")]
    assume(unanchored)
    i = unanchored[pick % len(unanchored)]
    with tempfile.TemporaryDirectory() as d:
        base = Path(d)
        materialize(files, base / "t")
        (base / "home").mkdir()
        src = "t/" if trailing else "t"
        anchored = "/" + rule_list[i][1] if trailing else "/t/" + rule_list[i][1]
        args = [f"--filter={a} {p}" for a, p in rule_list]
        fixed_args = args[:i] + [f"--filter=- {anchored}"] + args[i + 1:]
        cmd = parse_command(["rsync", *args, src, "_dst/"], lambda p: b"")
        fixed = parse_command(["rsync", *fixed_args, src, "_dst/"], lambda p: b"").rules.rules[i]
        old = os.getcwd()
        os.chdir(base)
        try:
            found = Exclusions(src, cmd.rules).sent_if_replaced(cmd.rules.rules[i], fixed)
        finally:
            os.chdir(old)
        want = set(real_rsync(fixed_args, src, base, base / "home")) - \
            set(real_rsync(args, src, base, base / "home"))
        assert sorted(found) == sorted(want), (args, fixed_args)
