"""The rsync emulation's parsing and the check as a user runs it (the CLI, a real git repo)."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import run_doctor
from doctor.scanners.rsync import (Rule, Unsupported, parse_command, parse_rule,
                                   rule_file_lines, topmost)


def test_filter_rule_forms():
    assert parse_rule("- data") == Rule("-", "data")
    assert parse_rule("exclude data") == Rule("-", "data")
    assert parse_rule("-_data") == Rule("-", "data")
    assert parse_rule("+ logs ") == Rule("+", "logs ")        # trailing space is the pattern's
    assert parse_rule("-! *.py").negate and parse_rule("-,! *.py").negate
    assert parse_rule("!") is None and parse_rule("clear") is None
    assert parse_rule("H data") == Rule("-", "data")          # hide = sender-side exclude
    assert parse_rule("data", default="-", old_prefixes=True) == Rule("-", "data")
    assert parse_rule("+ keep", default="-", old_prefixes=True) == Rule("+", "keep")


@pytest.mark.parametrize("text", ["dir-merge .rsync-filter", ": .rsync-filter", ". rules",
                                  "-,/ abs", "x data", "-"])
def test_unemulated_rules_are_refused_not_guessed(text):
    with pytest.raises(Unsupported):
        parse_rule(text)


def test_rule_file_comments_and_line_ends():
    data = b"# comment\n; comment\n\ndata\r+ keep\r\n  lead\n"
    assert list(rule_file_lines(data)) == [(4, "data"), (5, "+ keep"), (6, "  lead")]


def test_command_line_positional_and_bundles():
    cmd = parse_command(["rsync", "-avzf", "- a", "--exclude", "b", "-e", "ssh -p 22",
                         "--include=c", "src/", "host:dst/"], lambda p: b"")
    assert [str(r) for r in cmd.rules.rules] == ["- a", "- b", "+ c"]
    assert cmd.sources == [(8, "src/")] and cmd.dest == "host:dst/"
    for bad in (["rsync", "-R", "a", "b"], ["rsync", "--files-from=x", "a", "b"],
                ["rsync", "-F", "a", "b"]):
        with pytest.raises(Unsupported):
            parse_command(bad, lambda p: b"")


def test_topmost():
    assert topmost(["a/", "a/b", "a/c/", "a/c/d", "e", "f/"]) == ["a/", "e", "f/"]


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "PATH": "/usr/bin:/bin",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e", "HOME": str(cwd)})


def test_cli_reports_the_seed_deploy_from_a_subdirectory_repo(tmp_path):
    """--repo is a subdirectory of a work tree: paths stay relative to it; exit code 1."""
    proj = tmp_path / "mono" / "vcloud"
    (proj / "src" / "vcloud" / "data").mkdir(parents=True)
    (proj / "src" / "vcloud" / "data" / "__init__.py").write_text("")
    (proj / "deploy.sh").write_text("cd src\nrsync -a --exclude data ./ host:code/\n")
    git(tmp_path / "mono", "init", "-q")
    git(tmp_path / "mono", "add", ".")
    git(tmp_path / "mono", "commit", "-q", "-m", "init")
    index = (tmp_path / "mono" / ".git" / "index").stat().st_mtime_ns
    proc = run_doctor("run", "--repo", str(proj), "--static", "--only",
                      "rsync-exclude-unanchored", "--format", "json")
    assert proc.returncode == 1, proc.stderr
    res = next(r for r in json.loads(proc.stdout)["results"]
               if r["id"] == "rsync-exclude-unanchored")
    f, = res["findings"]
    assert f["location"] == {"path": "deploy.sh", "line": 2}
    assert f["data"] == {"pattern": "data", "command_line": 2, "source": "./",
                         "dropped": ["vcloud/data/"]}
    assert f["commands"] == ["rsync -a --exclude /data ./ host:code/"]
    assert (tmp_path / "mono" / ".git" / "index").stat().st_mtime_ns == index  # read-only


def test_unreadable_exclude_file_is_a_note_not_a_crash(tmp_path):
    (tmp_path / "deploy.sh").write_text("rsync -a --exclude-from=missing.txt ./ host:x/\n")
    proc = run_doctor("run", "--repo", str(tmp_path), "--static", "--only",
                      "rsync-exclude-unanchored", "--format", "json")
    doc = json.loads(proc.stdout)
    res = doc["results"][0]
    assert res["status"] == "skip" and "missing.txt" in res["reason"]
    assert proc.returncode == 0


def test_exclude_file_named_by_a_variable_is_skipped_as_unresolved(tmp_path):
    (tmp_path / "src" / "pkg" / "data").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "data" / "__init__.py").write_text("")
    (tmp_path / "deploy.sh").write_text("rsync -a --exclude-from ${EXCLUDE_FILE} ./ host:x/\n"
                                        "rsync -a --exclude data ./ host:x/\n")
    proc = run_doctor("run", "--repo", str(tmp_path), "--only", "rsync-exclude-unanchored",
                      "--format", "json")
    doc = json.loads(proc.stdout)
    (finding,) = doc["results"][0]["findings"]  # the second command is still checked
    assert finding["data"]["dropped"] == ["src/pkg/data/"]
    (note,) = doc["facts"]["rsync_exclude_notes"]
    assert note.startswith("deploy.sh:1:") and "${EXCLUDE_FILE} cannot be resolved" in note
    assert "Errno" not in note
