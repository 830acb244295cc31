"""junit, sarif and markdown: each validated against its schema, as CI tools read them.

Schemas (tests/schemas/README.md): Jenkins' junit-10.xsd, and the official
OASIS SARIF 2.1.0 JSON schema. The report comes from test-only checks covering
every status (pass, fail with and without a location, error, skip, waived),
and from the real CLI on the registry as it is.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import venv
import xml.etree.ElementTree as ET

import pytest

from conftest import ROOT, run_doctor, validate_report
from doctor import Finding, Location, Severity, Skip
from doctor.job.context import Job
from doctor.registry import check, get, unregister
from doctor.report import render
from doctor.runner import run_checks
from doctor.settings import Settings, Waiver

SCHEMAS = ROOT / "tests" / "schemas"
SECRET = "hunter2-secret-value"
IDS = ("fmt-pass", "fmt-fail-located", "fmt-fail-unlocated", "fmt-error", "fmt-skip",
       "fmt-waived")


def junit_errors(text: str) -> list:
    import xmlschema

    schema = xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd"))
    return [str(e) for e in schema.iter_errors(text.encode())]


def sarif_errors(doc: dict) -> list:
    import jsonschema

    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    return [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(doc)]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    @check("fmt-pass", title="Passes", severity="error")
    def fmt_pass(job):
        """Passes.

        ## Why it matters
        It does not.

        ## How to fix
        Nothing to fix.
        """

    @check("fmt-fail-located", title="Fails at a line", severity="error", tags=("fmt",))
    def fmt_fail_located(job):
        """Fails at a line of a script.

        ## Why it matters
        The job would break.

        ## How to fix
        Edit the line.
        """
        yield Finding(f"token {SECRET} leaks <here> & \"there\"",
                      location=Location("slurm/job.sbatch", 7), fix="Remove the token.",
                      commands=("sed -i 7d slurm/job.sbatch",), data={"line": 7})
        yield Finding("second | finding", location=Location("configs/a b.yaml"))

    @check("fmt-fail-unlocated", title="Fails as a warning", severity="warning")
    def fmt_fail_unlocated(job):
        """Warns.

        ## Why it matters
        It may break.

        ## How to fix
        Look.
        """
        return [Finding("no location here\x01", severity=Severity.WARNING)]

    @check("fmt-error", title="Cannot complete", severity="error")
    def fmt_error(job):
        """Raises.

        ## Why it matters
        Bugs.

        ## How to fix
        Fix the check.
        """
        raise RuntimeError("probe exploded")

    @check("fmt-skip", title="Does not apply", severity="error")
    def fmt_skip(job):
        """Skips.

        ## Why it matters
        N/A.

        ## How to fix
        N/A.
        """
        raise Skip("not a ROCm job")

    @check("fmt-waived", title="Waived", severity="error")
    def fmt_waived(job):
        """Would fail.

        ## Why it matters
        It would.

        ## How to fix
        Waive it.
        """
        return ["would fail"]

    repo = tmp_path_factory.mktemp("repo")
    settings = Settings(path="doctor.yaml", waivers=[
        Waiver("fmt-waived", "tracked in OPS-1", dt.date.today() + dt.timedelta(days=9))])
    job = Job(repo, settings=settings, env={"WANDB_API_KEY": SECRET})
    try:
        yield run_checks(job, [get(i) for i in IDS])
    finally:
        for i in IDS:
            unregister(i)


def test_report_covers_every_status(report):
    statuses = {r["id"]: r["status"] for r in validate_report(report.doc())["results"]}
    assert statuses == {"fmt-pass": "pass", "fmt-fail-located": "fail",
                        "fmt-fail-unlocated": "fail", "fmt-error": "error", "fmt-skip": "skip",
                        "fmt-waived": "skip"}


@pytest.mark.parametrize("fmt", ["junit", "sarif", "markdown", "json", "table"])
def test_no_format_shows_a_secret(report, fmt):
    text = render(fmt, report)
    assert SECRET not in text and "***" in text


def test_junit_is_one_suite_one_case_per_check_and_valid(report):
    text = render("junit", report)
    assert junit_errors(text) == []
    root = ET.fromstring(text)
    suites = root.findall("testsuite")
    assert len(suites) == 1
    suite = suites[0]
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"),
            suite.get("skipped")) == ("6", "1", "1", "2")  # the warning is no failure
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert list(cases) == list(IDS)
    assert list(cases["fmt-pass"]) == []
    failure = cases["fmt-fail-located"].find("failure")
    assert failure.get("type") == "error"
    assert "token *** leaks <here>" in failure.get("message")
    assert "slurm/job.sbatch:7:" in failure.text and "$ sed -i 7d slurm/job.sbatch" in failure.text
    # a warning is a passing testcase (a CI UI shows no failed test for it), its findings
    # in <system-out>, which GitLab and Jenkins show
    warned = cases["fmt-fail-unlocated"]
    assert warned.find("failure") is None and warned.find("error") is None
    assert "warning: Fails as a warning\nno location here\\x01" in warned.find("system-out").text
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["warnings"] == "1"
    assert "probe exploded" in cases["fmt-error"].find("error").get("message")
    assert cases["fmt-skip"].find("skipped").get("message") == "not a ROCm job"
    assert cases["fmt-waived"].find("skipped").get("message").startswith("waived: tracked in OPS-1")


def test_the_junit_schema_rejects_what_ci_tools_cannot_read():
    # the validator really validates: a testsuite without its required counts fails
    assert junit_errors('<testsuite name="x"><testcase name="a"/></testsuite>')


def test_sarif_is_valid_2_1_0_with_rules_levels_and_locations(report):
    doc = json.loads(render("sarif", report))
    assert sarif_errors(doc) == []
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(IDS)
    located = rules[1]
    assert located["shortDescription"]["text"] == "Fails at a line"
    assert "## How to fix\nEdit the line." in located["help"]["text"]
    assert located["defaultConfiguration"]["level"] == "error"
    # a check from outside the doctor (these are the test's own) has no page here: no
    # helpUri (tests/test_report_outputs.py: every built-in check's rule has one)
    assert "helpUri" not in located and "Docs:" not in json.dumps(run["results"])
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("fmt-fail-located", "error"), ("fmt-fail-located", "error"),
        ("fmt-fail-unlocated", "warning")]
    loc = results[0]["locations"][0]["physicalLocation"]
    assert loc == {"artifactLocation": {"uri": "slurm/job.sbatch", "uriBaseId": "%SRCROOT%"},
                   "region": {"startLine": 7}}
    assert results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
        "configs/a%20b.yaml"
    assert "Fix: Remove the token." in results[0]["message"]["text"]
    # the check that could not complete is a tool notification, not a finding
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert [n["associatedRule"]["id"] for n in notes] == ["fmt-error"]
    assert run["invocations"][0]["executionSuccessful"] is False


def test_the_sarif_schema_rejects_a_bad_level(report):
    doc = json.loads(render("sarif", report))
    doc["runs"][0]["results"][0]["level"] = "fatal"
    assert sarif_errors(doc)


def test_markdown_leads_with_the_failures_and_folds_the_rest(report):
    md = render("markdown", report)
    lines = md.splitlines()
    assert lines[0] == "## ❌ doctor: fail"  # a failure outranks an error
    # the warning is counted as a warning, not as a failure
    assert lines[2].startswith("1 error, 1 warning, 1 passed, 2 skipped, 1 could not complete "
                               "in "), lines[2]
    # errors, then the check that could not complete, then warnings: before anything else
    heads = [ln for ln in lines if ln.startswith("### ")]
    assert heads == ["### ❌ `fmt-fail-located` — Fails at a line",
                     "### 💥 `fmt-error` — Cannot complete",
                     "### ⚠️ `fmt-fail-unlocated` — Fails as a warning"]
    assert "- `slurm/job.sbatch:7` token *** leaks <here> & \"there\"" in lines
    assert "- `configs/a b.yaml` second | finding" in lines
    assert "  - **Fix:** Remove the token." in lines
    assert "  sed -i 7d slurm/job.sbatch" in lines
    assert "The check could not complete: RuntimeError: probe exploded" in md
    # passing and skipped checks: folded away, after the failures, under a neutral label
    # and without their problem titles
    fold = lines.index("<details>")
    assert fold > lines.index(heads[-1])
    assert lines[fold + 1] == "<summary>1 passed, 2 skipped</summary>"
    table = [ln for ln in lines[fold:] if ln.startswith("| ")]
    assert len(table) == 1 + 3  # header, and pass + skip + waived
    assert all(ln.count(" | ") == 2 for ln in table[2:]), table  # pipes in text are escaped
    assert "| ✅ pass | `fmt-pass` |  |" in lines
    assert "| ⏭️ skip | `fmt-skip` | not a ROCm job |" in lines
    assert "Passes" not in md and "fmt-pass` — " not in md


def test_github_annotations_are_escaped_workflow_commands(report):
    out = render("github", report).splitlines()
    # one command per finding, errors first, then the check that could not complete
    # (an error too), then the warning; then the summary, which is no command
    assert [ln.split(" ", 1)[0] for ln in out] == ["::error", "::error", "::error",
                                                   "::warning", "doctor:"]
    first = out[0]
    repo = report.doc()["inputs"]["repo"]
    # the file is absolute (the runner makes it relative to the workspace); `:` and `,`
    # in a property are escaped, so the title cannot end it or start another
    assert first.startswith(f"::error file={repo}/slurm/job.sbatch,line=7,"
                            "title=doctor fmt-fail-located%3A Fails at a line::")
    # the message: CR/LF/% escaped, so the fix stays in the one annotation
    assert first.endswith("::token *** leaks <here> & \"there\"%0ARemove the token.%0A"
                          "$ sed -i 7d slurm/job.sbatch"), first
    assert out[1].startswith(f"::error file={repo}/configs/a b.yaml,title=")
    assert out[2].startswith("::error title=doctor fmt-error%3A the check could not complete::"
                             "RuntimeError: probe exploded")
    # a control character from the user's text is shown, never acted on
    assert out[3] == ("::warning title=doctor fmt-fail-unlocated%3A Fails as a warning::"
                      "no location here\\x01")
    assert out[4] == ("doctor: 1 error, 1 warning, 1 passed, 2 skipped, 1 could not complete "
                      "(exit 1)")


def test_github_escaping_follows_the_runner():
    from doctor.report.github_format import command

    line = command("warning", "50% done\r\nnext::x", "a: b, c%", "dir,x/a:b.sh", 3)
    assert line == ("::warning file=dir%2Cx/a%3Ab.sh,line=3,title=a%3A b%2C c%25::"
                    "50%25 done%0D%0Anext::x")
    # what the runner reads back (actions/runner ActionCommand.cs: properties split at
    # `,` and `=`, then unescaped; the message after the first `::` past the command)
    head, data = line[2:].split("::", 1)
    props = dict(p.split("=", 1) for p in head.split(" ", 1)[1].split(","))

    def unescape(text):
        for code, char in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","),
                           ("%25", "%")):
            text = text.replace(code, char)
        return text

    assert {k: unescape(v) for k, v in props.items()} == {
        "file": "dir,x/a:b.sh", "line": "3", "title": "a: b, c%"}
    assert unescape(data) == "50% done\r\nnext::x"


@pytest.mark.parametrize("fmt", ["junit", "sarif", "markdown"])
def test_cli_writes_each_format_to_output(tmp_path, fmt):
    out = tmp_path / f"report.{fmt}"
    proc = run_doctor("run", "--static", "--repo", str(tmp_path), "--format", fmt,
                      "--output", str(out))
    assert proc.returncode in (0, 1), proc.stderr
    assert proc.stdout == ""
    text = out.read_text()
    if fmt == "junit":
        assert junit_errors(text) == []
    elif fmt == "sarif":
        assert sarif_errors(json.loads(text)) == []
    else:
        assert text.startswith("## ")


# ---- the CI gate in an image without torch ------------------------------------------

@pytest.fixture(scope="module")
def torchless_venv(tmp_path_factory):
    """A plain venv (no system site-packages, so no torch) with this checkout pip-installed."""
    env_dir = tmp_path_factory.mktemp("venv") / "ci"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    pip = [str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    deps = subprocess.run([*pip, "psutil", "pyyaml", "click", "tabulate"], capture_output=True,
                          text=True, timeout=300)
    if deps.returncode != 0:
        pytest.skip(f"package registry unreachable: {deps.stderr.strip().splitlines()[-1:]}")
    proj = subprocess.run([*pip, "--no-deps", str(ROOT)], capture_output=True, text=True,
                          timeout=300)
    assert proj.returncode == 0, proj.stderr
    return env_dir


@pytest.mark.slow
def test_static_gate_runs_without_torch(torchless_venv, tmp_path):
    py = str(torchless_venv / "bin" / "python")
    assert subprocess.run([py, "-c", "import torch"], capture_output=True).returncode != 0
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "train.yaml").write_text("data:\n  num_workers: 0\n  batch_size: 8\n")
    (tmp_path / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=2\nsrun python train.py\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SLURM_JOB_ID")}
    outs = {}
    for fmt in ("json", "junit", "sarif"):
        proc = subprocess.run([str(torchless_venv / "bin" / "doctor"), "run", "--static",
                               "--repo", str(tmp_path), "--format", fmt], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr  # never 3: nothing needed torch
        outs[fmt] = proc.stdout
    doc = validate_report(json.loads(outs["json"]))
    assert doc["results"], "the static gate ran no check"
    assert [r["id"] for r in doc["results"] if r["status"] == "error"] == []
    assert doc["facts"].get("torch_installed") in (None,)
    assert junit_errors(outs["junit"]) == []
    assert sarif_errors(json.loads(outs["sarif"])) == []
    # and the installed copy is the one that ran, not this checkout
    where = subprocess.run([py, "-c", "import doctor; print(doctor.__file__)"], cwd=tmp_path,
                           env=env, capture_output=True, text=True).stdout
    assert str(torchless_venv) in where
    assert sys.prefix not in where
