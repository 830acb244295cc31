"""`doctor show REPORT` (issue 15, item 5): a saved report rendered in any format, read
from a JSON report or from the report block `doctor sbatch --force` writes into the log."""
from __future__ import annotations

import json
import re

import pytest

from conftest import FIXTURES, run_doctor, run_main
from doctor.report import FORMATS
from doctor.logblock import BLOCK_BEGIN, BLOCK_END, as_json_block
from test_sbatch_cli import doctor_sbatch, job  # noqa: F401  (fixtures)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """One real run of the demo repo (failing checks), printed in every format, with its
    JSON report saved: {format: what the run printed}, the report's path."""
    tmp = tmp_path_factory.mktemp("show")
    path = tmp / "report.json"
    printed = {}
    for fmt in FORMATS:
        proc = run_doctor("run", "--repo", str(FIXTURES / "demo"), "--static", "--format", fmt,
                          "--json", str(tmp / f"{fmt}.json"), env={"NO_COLOR": "1"})
        assert proc.returncode == 1, proc.stderr
        printed[fmt] = (proc.stdout, tmp / f"{fmt}.json")
    path.write_text(printed["json"][1].read_text())
    return printed, path


@pytest.mark.parametrize("fmt", FORMATS)
def test_show_prints_what_the_run_printed(saved, fmt):
    printed, _ = saved
    out, report = printed[fmt]
    proc = run_doctor("show", str(report), "--format", fmt)
    assert proc.returncode == 0, proc.stderr   # show only renders: the report's failure
    assert proc.stdout == out                  # is in what it prints, not in its exit code


def test_the_table_is_the_default_and_keeps_the_reports_exit_code(saved):
    printed, path = saved
    proc = run_doctor("show", str(path))
    assert proc.returncode == 0
    assert re.search(r"^\d+ errors?, \d+ warnings?, .*\(exit 1\)$", proc.stdout, re.M), \
        proc.stdout[-300:]


def test_show_reads_the_last_report_block_of_a_job_log(saved, tmp_path):
    printed, _ = saved
    markdown, path = printed["markdown"]
    earlier = dict(json.loads(path.read_text()), started_at="2020-01-01T00:00:00Z")
    log = tmp_path / "slurm-42.out"
    log.write_text("# doctor: job 42 was submitted with `doctor sbatch --force`\n"
                   + as_json_block(json.dumps(earlier, indent=2)) + "epoch 1\n"
                   + as_json_block(path.read_text()) + "epoch 2\nTraceback ...\n")
    proc = run_doctor("show", str(log), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == path.read_text()
    assert run_doctor("show", str(log), "--format", "markdown").stdout == markdown


def test_show_reads_the_block_of_a_log_whose_first_lines_are_json(saved, tmp_path):
    """A JSON-lines logger writes before the doctor's block: the log is still a log."""
    _, path = saved
    log = tmp_path / "slurm-43.out"
    log.write_text('{"event": "start", "rank": 0}\n{"event": "env"}\n'
                   + as_json_block(path.read_text()) + '{"event": "step", "loss": 2.3}\n')
    proc = run_doctor("show", str(log), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == path.read_text()
    # a JSON-lines log past a report's 256 MiB cap is still a log (sparse: no disk used)
    big = tmp_path / "slurm-44.out"
    with big.open("w") as fh:
        fh.write('{"step": 1, "loss": 2.3}\n')
        fh.seek(270 * 1024 * 1024)
        fh.write("\n" + as_json_block(path.read_text()))
    proc = run_doctor("show", str(big), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == path.read_text()
    # and a JSON file that is neither a report nor a log with a block says it is not JSON
    bad = tmp_path / "report.json"
    bad.write_text('{"schema_version": 1,')
    proc = run_doctor("show", str(bad))
    assert proc.returncode == 2 and "is not valid JSON" in proc.stderr, proc.stderr


@pytest.mark.parametrize("text,says", [
    ("epoch 1\n", "holds no doctor report: neither a JSON report nor a job log with a "
                  f"`{BLOCK_BEGIN}` block"),
    (f"{BLOCK_BEGIN}\n# {{\"schema_version\": 1,\n{BLOCK_END}\n", "the last report block of "),
    (f"{BLOCK_BEGIN}\n# {{}}\nstep 1\n{BLOCK_END}\n", "holds no doctor report"),
    ("[1, 2]", "is not a doctor report"),
    ("", "holds no doctor report"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, text, says):
    bad = tmp_path / "job.log"
    bad.write_text(text)
    proc = run_main(capsys, "show", str(bad))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("doctor: error: ") and says in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1


def test_a_missing_report_and_an_unknown_format_exit_2(capsys, tmp_path):
    proc = run_main(capsys, "show", str(tmp_path / "nope.json"))
    assert (proc.returncode, proc.stderr) == (
        2, f"doctor: error: cannot read {tmp_path / 'nope.json'}: No such file or directory\n")
    proc = run_main(capsys, "show", str(tmp_path / "nope.json"), "--format", "yaml")
    assert proc.returncode == 2 and proc.stderr.startswith("doctor: error: ")


@pytest.mark.slurm
def test_sbatch_force_writes_the_block_that_show_reads(slurm_cluster, doctor_sbatch,  # noqa: F811
                                                       job):  # noqa: F811
    from test_slurm_injob import wait_done

    repo, _, name = job
    log = repo / "train.log"
    script = repo / "forced.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --job-name={name}\n"
                      f"#SBATCH -o {log}\necho output of this run\n"
                      "if [ -n \"$NEVER\" ]; then python train.py --config configs/train.yaml; "
                      "fi\n")
    proc = doctor_sbatch(repo, "--force", str(script), "--nodes=2")  # num_nodes: 1 fails
    assert proc.returncode == 0, proc.stderr
    assert wait_done(proc.stdout.strip()) == "COMPLETED"
    text = log.read_text()
    assert text.index("slurm-gpu-mismatch") < text.index(BLOCK_BEGIN) < \
        text.index(BLOCK_END) < text.index("output of this run"), text
    shown = run_doctor("show", str(log), "--format", "json")
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["summary"]["exit_code"] == 1
    assert [r["status"] for r in doc["results"] if r["id"] == "slurm-gpu-mismatch"] == ["fail"]
