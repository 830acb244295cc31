"""Several outputs in one run (issue 28): `--output FORMAT:FILE`, repeatable, beside
today's `--format F --output FILE`; warnings counted as warnings in every format; the
docs link of every SARIF rule and finding. All through the real CLI."""
from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from conftest import FIXTURES, ROOT, one_line_exit_2, run_doctor, validate_report
from doctor.report import DOCS_URL, counts_phrase
from test_formats import junit_errors, sarif_errors

DEMO = FIXTURES / "demo"
FILES = {"json": "r.json", "junit": "doctor.xml", "sarif": "doctor.sarif",
         "markdown": "summary.md", "github": "annotations.txt"}


@pytest.fixture(scope="module")
def one_run(tmp_path_factory):
    """One --static run of the demo (errors and warnings) writing five formats."""
    out = tmp_path_factory.mktemp("outputs")
    args = [a for fmt, name in FILES.items() for a in ("--output", f"{fmt}:{out / name}")]
    proc = run_doctor("run", "--static", "--repo", str(DEMO), *args, env={"NO_COLOR": "1"})
    return proc, {fmt: (out / name).read_text() for fmt, name in FILES.items()}


def test_one_run_writes_every_format_each_valid(one_run):
    proc, text = one_run
    assert proc.returncode == 1, proc.stderr
    doc = validate_report(json.loads(text["json"]))
    assert junit_errors(text["junit"]) == []
    assert sarif_errors(json.loads(text["sarif"])) == []
    # stdout keeps --format's output (the table): the files come beside it, not instead
    show = run_doctor("show", _path(proc, "json"), env={"NO_COLOR": "1"})
    assert proc.stdout == show.stdout and proc.stdout.strip()
    assert doc["summary"]["exit_code"] == 1


def _path(proc, fmt: str) -> str:
    """The file the run wrote `fmt` to (its --output FORMAT:FILE)."""
    return next(a.split(":", 1)[1] for a in proc.args if a.startswith(f"{fmt}:"))


def test_the_counts_agree_across_the_formats(one_run):
    _, text = one_run
    doc = json.loads(text["json"])
    counts = doc["summary"]["counts"]
    statuses = [(r["status"], r["severity"]) for r in doc["results"]]
    # the demo has both: checks that fail at error severity and checks that only warn
    assert counts["fail"] == sum(s == ("fail", "error") for s in statuses) > 0
    assert counts["warning"] == sum(s[0] == "fail" and s[1] != "error" for s in statuses) > 0
    assert sum(counts.values()) == len(doc["results"])

    suite = ET.fromstring(text["junit"]).find("testsuite")
    assert (int(suite.get("tests")), int(suite.get("failures")), int(suite.get("errors")),
            int(suite.get("skipped"))) == (len(doc["results"]), counts["fail"],
                                           counts["error"], counts["skip"])
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert int(props["warnings"]) == counts["warning"]
    assert len(suite.findall("testcase/failure")) == counts["fail"]
    assert len(suite.findall("testcase/system-out")) == counts["warning"]

    run = json.loads(text["sarif"])["runs"][0]
    assert run["properties"]["summary"]["counts"] == counts
    failed = {r["id"] for r in doc["results"] if r["status"] == "fail"}
    assert {r["ruleId"] for r in run["results"]} == failed

    phrase = counts_phrase(doc)
    assert phrase.startswith(f"{counts['fail']} errors, {counts['warning']} warnings, "
                             f"{counts['pass']} passed, {counts['skip']} skipped")
    assert text["markdown"].splitlines()[2].startswith(phrase + " in ")
    assert text["github"].splitlines()[-1] == f"doctor: {phrase} (exit 1)"
    # one annotation per finding, errors before warnings
    levels = [ln.split(" ", 1)[0] for ln in text["github"].splitlines()[:-1]]
    assert len(levels) == sum(len(r["findings"]) for r in doc["results"]
                              if r["status"] == "fail")
    assert levels == sorted(levels, key=["::error", "::warning", "::notice"].index)


def test_every_sarif_rule_and_finding_links_its_page(one_run):
    _, text = one_run
    run = json.loads(text["sarif"])["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert rules
    for rule in rules:
        assert rule["helpUri"] == f"{DOCS_URL}/checks/{rule['id']}.md"
        # the link leads to a page that exists (docs/checks/, written by `doctor docs`)
        assert (ROOT / "docs" / "checks" / f"{rule['id']}.md").is_file(), rule["id"]
    for result in run["results"]:
        url = rules[result["ruleIndex"]]["helpUri"]
        assert result["message"]["text"].endswith(f"\nDocs: {url}")
    for line in text["github"].splitlines()[:-1]:
        assert re.search(r"%0ADocs: https://\S+/docs/checks/[a-z0-9-]+\.md$", line), line


def _warning_repo(tmp_path):
    tmp_path.mkdir()
    (tmp_path / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\n"
                                         "export NCCL_ASYNC_ERROR_HANDLING=1\n"
                                         "srun python train.py\n")
    (tmp_path / "train.py").write_text("print('train')\n")
    return tmp_path


def test_a_warning_only_run_gives_a_junit_without_failure(tmp_path):
    repo = _warning_repo(tmp_path / "repo")
    out = tmp_path / "out"
    proc = run_doctor("run", "--static", "--repo", str(repo), "--only", "nccl-env-deprecated",
                      "--output", f"junit:{out / 'j.xml'}", "--output", f"json:{out / 'r.json'}")
    assert proc.returncode == 0, proc.stderr
    doc = validate_report(json.loads((out / "r.json").read_text()))
    assert doc["summary"]["status"] == "warn"
    assert doc["summary"]["counts"] == {"pass": 0, "fail": 0, "warning": 1, "skip": 0,
                                        "error": 0}
    junit = (out / "j.xml").read_text()
    assert junit_errors(junit) == []
    root = ET.fromstring(junit)
    assert root.findall(".//failure") == [] and root.get("failures") == "0"
    (case,) = root.findall(".//testcase")
    assert "NCCL_ASYNC_ERROR_HANDLING" in case.find("system-out").text


def test_format_and_a_plain_output_work_as_before(tmp_path):
    repo = _warning_repo(tmp_path / "repo")
    out = tmp_path / "out"
    proc = run_doctor("run", "--static", "--repo", str(repo), "--only", "nccl-env-deprecated",
                      "--format", "junit", "--output", str(out / "plain.xml"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""   # the file takes stdout's place
    assert junit_errors((out / "plain.xml").read_text()) == []
    # a colon in a path is a path: only a format's name before the first colon is one
    proc = run_doctor("run", "--static", "--repo", str(repo), "--only", "nccl-env-deprecated",
                      "--format", "json", "--output", str(out / "logs" / "a:b.json"),
                      "--output", "sarif:" + str(out / "c:d.sarif"))
    assert proc.returncode == 0, proc.stderr
    validate_report(json.loads((out / "logs" / "a:b.json").read_text()))
    assert sarif_errors(json.loads((out / "c:d.sarif").read_text())) == []
    # a relative `json:x` is the json format; `./json:x` is a file of that name
    proc = run_doctor("run", "--static", "--repo", str(repo), "--only", "nccl-env-deprecated",
                      "--format", "markdown", "--output", "./json:x", cwd=out)
    assert proc.returncode == 0, proc.stderr
    assert (out / "json:x").read_text().startswith("## ")


def test_show_writes_several_formats_of_a_saved_report(one_run, tmp_path):
    proc, text = one_run
    saved = _path(proc, "json")
    shown = run_doctor("show", saved, "--output", f"junit:{tmp_path / 'j.xml'}",
                       "--output", f"sarif:{tmp_path / 's.sarif'}",
                       "--output", f"github:{tmp_path / 'g.txt'}")
    assert shown.returncode == 0, shown.stderr
    assert (tmp_path / "j.xml").read_text() == text["junit"]
    assert (tmp_path / "s.sarif").read_text() == text["sarif"]
    assert (tmp_path / "g.txt").read_text() == text["github"]
    assert shown.stdout.strip()   # the table, as without --output


@pytest.mark.parametrize("outputs, needle", [
    (("a.json", "b.json"), "only one --output takes --format's output"),
    (("json:",), "names no file"),
    (("junit:{out}/same.xml", "sarif:{out}/same.xml"), "is the same file as"),
    (("json:{repo}/job.sbatch",), "would overwrite an input of this run"),
])
def test_bad_outputs_are_one_line_and_exit_2(tmp_path, outputs, needle):
    repo = _warning_repo(tmp_path / "repo")
    args = [a for o in outputs for a in ("--output", o.format(out=tmp_path, repo=repo))]
    proc = run_doctor("run", "--static", "--repo", str(repo), "--only",
                      "nccl-env-deprecated", *args, cwd=tmp_path)
    one_line_exit_2(proc, needle)
    assert "#SBATCH" in (repo / "job.sbatch").read_text()   # the input is untouched


def test_every_builtin_check_links_a_page_that_exists():
    """docs_url for every built-in check (not only those a demo run fails) and for the
    runner's own waiver-expired: each leads to a file (and heading) of this repo's docs."""
    from doctor.registry import BUILTIN, discover
    from doctor.report import docs_url

    specs = discover().values()
    builtin = [s for s in specs if s.module.startswith(BUILTIN + ".")]
    assert len(builtin) >= 30
    for spec in builtin:
        url = docs_url(spec.id)
        assert url == f"{DOCS_URL}/checks/{spec.id}.md"
        assert (ROOT / "docs" / "checks" / f"{spec.id}.md").is_file(), spec.id
    page, _, heading = docs_url("waiver-expired").removeprefix(DOCS_URL + "/").partition("#")
    assert f"\n## {heading.capitalize()}\n" in (ROOT / "docs" / page).read_text()
    assert docs_url("no-such-check") is None   # a pack's check has no page here


def test_github_annotations_of_hostile_text_are_one_command_a_line(tmp_path, monkeypatch):
    """test_escaping's hostile repo (ESC sequences, bidi controls and a newline that
    would forge a line, in a cache's name and contents, a config value and a job's
    environment): each annotation stays one line of the doctor's own, a workflow
    command whose text shows the controls escaped."""
    from test_escaping import BIDI, CLEAR, RAW, RUNS, TITLE, hostile_repo, in_process

    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    repo, name = hostile_repo(tmp_path)
    texts = []
    for args in RUNS:
        out = tmp_path / "annotations.txt"
        code = in_process("run", "--repo", str(repo), *[a.format(repo=repo) for a in args],
                          "--output", f"github:{out}")
        assert code in (0, 1), code
        texts.append(out.read_text(encoding="utf-8"))
    for text in texts:
        lines = text.splitlines()
        assert len(lines) >= 2 and not RAW.search(text.replace("\n", "")), text
        assert all(re.match(r"::(error|warning|notice) ", ln) for ln in lines[:-1]), lines
        assert lines[-1].startswith("doctor: ")
    cache_text, env_text = texts
    assert "evil\\x1b]0;pwned\\x07\\u202e\\u2066.run\\x1b[2J" in cache_text     # contents
    escaped_name = str(name).replace(CLEAR, "\\x1b[2J").replace(BIDI, "\\u202e\\u2066") \
        .replace(TITLE, "\\x1b]0;pwned\\x07").replace("\n", "\\n")
    # the file property: `:` and `,` escaped too, so the name cannot end the property
    assert "file=" + escaped_name.replace("%", "%25").replace(":", "%3A") in cache_text
    assert "0.8\\x1b]0;pwned\\x07\\nFORGED-LINE\\u202e\\u2066" in env_text     # a value
