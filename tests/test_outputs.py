"""Issue 16, cause 1: the report files (--output, --json) never cost the user a file.

A report is written whole or not at all (a temp file beside it, then a rename), never
over an input of the run or over the other report, and a path that is not a regular
file is written without blocking or refused with one line.
"""
from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, one_line_exit_2, run_doctor, run_main, validate_report


@pytest.fixture
def doctor(monkeypatch, capsys):
    """doctor.cli.main(argv) in this process → (exit code, stdout, stderr); the refusals
    come before any check runs, so these runs cost milliseconds."""
    for name in [n for n in os.environ if n.startswith("SLURM")]:
        monkeypatch.delenv(name)

    def run(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
        monkeypatch.chdir(cwd)
        return run_main(capsys, *argv)
    return run


@pytest.fixture
def inputs(tmp_path):
    """A repo with one of each input a run reads: config, job script, doctor.yaml, cache."""
    repo = tmp_path / "repo"
    repo.mkdir()
    files = {"config": repo / "train.yaml", "script": repo / "job.sbatch",
             "settings": repo / "doctor.yaml", "cache": tmp_path / "cache.pt"}
    files["config"].write_text("trainer: {devices: 1}\n")
    files["script"].write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun python train.py\n")
    files["settings"].write_text("ignore: []\n")
    files["cache"].write_bytes(b"PK\x03\x04 not really a checkpoint")
    os.link(files["config"], tmp_path / "hardlink.yaml")
    (tmp_path / "symlink.yaml").symlink_to(files["config"])
    args = ["run", "--repo", str(repo), "--static", "--only", "slurm-gpu-mismatch",
            "--config", str(files["config"]), "--sbatch", str(files["script"]),
            "--cache", str(files["cache"])]
    return repo, files, args


@pytest.mark.parametrize("option", ["--output", "--json"])
def test_an_output_that_names_an_input_is_refused_and_the_input_kept(doctor, inputs, tmp_path,
                                                                     option):
    repo, files, args = inputs
    before = {k: p.read_bytes() for k, p in files.items()}
    targets = [(str(p), str(p)) for p in files.values()] + [
        (str(tmp_path / "hardlink.yaml"), str(files["config"])),
        (str(tmp_path / "symlink.yaml"), str(files["config"])),
        ("train.yaml", str(files["config"]))]                  # relative to the cwd
    for target, named in targets:
        proc = doctor(*args, option, target, cwd=repo)
        one_line_exit_2(proc, f"{option} {target} would overwrite an input of this run "
                        f"({named})")
        assert proc.stdout == ""   # refused before anything ran
    assert {k: p.read_bytes() for k, p in files.items()} == before


def test_pyproject_settings_are_an_input(doctor, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.doctor]\nignore = []\n")
    before = (tmp_path / "pyproject.toml").read_bytes()
    proc = doctor("run", "--repo", str(tmp_path), "--static", "--json", "pyproject.toml",
                  cwd=tmp_path)
    one_line_exit_2(proc, "would overwrite an input")
    assert (tmp_path / "pyproject.toml").read_bytes() == before


def test_output_and_json_on_the_same_file_or_a_directory_are_refused(doctor, tmp_path):
    (tmp_path / "old.txt").write_text("old report\n")
    os.link(tmp_path / "old.txt", tmp_path / "alias.txt")
    (tmp_path / "sub").mkdir()   # a `..` after a name that does not exist is refused
    for out, js in [(tmp_path / "r.txt", tmp_path / "r.txt"),
                    (tmp_path / "r.txt", tmp_path / "sub" / ".." / "r.txt"),
                    (tmp_path / "old.txt", tmp_path / "alias.txt")]:
        proc = doctor("run", "--repo", str(tmp_path), "--static", "--output", str(out),
                      "--json", str(js), cwd=tmp_path)
        one_line_exit_2(proc, f"--output {out} is the same file as --json {js}")
    proc = doctor("run", "--repo", str(tmp_path), "--static", "--json", str(tmp_path),
                  cwd=tmp_path)
    one_line_exit_2(proc, f"--json {tmp_path} is a directory")
    assert not (tmp_path / "r.txt").exists()
    assert (tmp_path / "old.txt").read_text() == "old report\n"


def test_output_paths_that_are_not_files(pack, tmp_path):
    """A FIFO with no reader used to block forever; a FIFO with a reader gets the whole
    report; /dev/null swallows it."""
    env, repo = pack
    out = tmp_path / "out"
    out.mkdir()
    fifo = out / "fifo"
    os.mkfifo(fifo)
    base = ["run", "--repo", str(repo), "--only", "test-pass", "--format", "json"]
    one_line_exit_2(run_doctor(*base, "--output", str(fifo), env=env, timeout=30),
                    f"cannot write {fifo}: a FIFO with no reader")
    got: list = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "doctor", *base, "--output", str(fifo),
                                 "--json", "/dev/null"], cwd=ROOT, env={**os.environ, **env},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        _out, err = proc.communicate(timeout=60)
    finally:
        if reader.is_alive():  # the doctor gave up: let the reader's open() return
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
    assert proc.returncode == 0, err
    validate_report(json.loads(got[0]))
    assert sorted(p.name for p in out.iterdir()) == ["fifo"]


def test_json_to_dev_stdout_goes_before_the_table(pack, tmp_path):
    """`--json /dev/stdout` writes through the doctor's own stdout: with stdout a file,
    the file holds the JSON and then the table (it used to be reopened and truncated,
    and the table overwrote the JSON's start)."""
    env, repo = pack
    out = tmp_path / "all.log"
    with open(out, "w") as fh:
        proc = subprocess.run([sys.executable, "-m", "doctor", "run", "--repo", str(repo),
                               "--only", "test-pass", "--json", "/dev/stdout"], cwd=ROOT,
                              env={**os.environ, **env}, stdout=fh, stderr=subprocess.PIPE,
                              text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text()
    doc, end = json.JSONDecoder().raw_decode(text)
    validate_report(doc)
    assert "1 passed" in text[end:]   # the human report (its summary line) follows the JSON


def mount_tiny_tmpfs(where) -> bool:
    where.mkdir()
    if os.geteuid() != 0:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)],
                          capture_output=True).returncode == 0


def limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))  # below a report


@pytest.mark.parametrize("option", ["--output", "--json"])
def test_a_full_disk_keeps_the_previous_report(tmp_path, option):
    """The new report does not fit. On a 64 KiB tmpfs filled to the last page where root
    can mount one, else under RLIMIT_FSIZE (the same failure, EFBIG instead of ENOSPC).
    The old report used to be truncated first and then cut short (the new one, all the
    static checks, needs two pages where the old one freed one)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    disk = tmp_path / "disk"
    tmpfs = mount_tiny_tmpfs(disk)
    try:
        report = disk / "report.json"
        report.write_text("the previous report\n")
        os.chmod(report, 0o640)
        if tmpfs:
            fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
            try:
                while os.write(fd, b"x" * 4096):
                    pass
            except OSError:
                pass
            finally:
                os.close(fd)
        files = sorted(p.name for p in disk.iterdir())
        proc = subprocess.run(
            [sys.executable, "-m", "doctor", "run", "--repo", str(repo), "--static",
             "--format", "json", option, str(report)], cwd=ROOT,
            capture_output=True, text=True, timeout=60,
            preexec_fn=None if tmpfs else limit_file_size)
        one_line_exit_2(proc, f"cannot write {report}: ",
                        "No space left" if tmpfs else "File too large")
        assert report.read_text() == "the previous report\n"
        assert stat.S_IMODE(report.stat().st_mode) == 0o640
        assert sorted(p.name for p in disk.iterdir()) == files   # no temp file left
    finally:
        if tmpfs:
            subprocess.run(["umount", str(disk)], check=True)


def test_readers_see_the_old_report_or_the_new_one(pack, tmp_path):
    """The report is replaced, never rewritten in place: a reader holding the old file
    keeps reading the old report whole, and one polling the path never sees an empty or
    partial file. The file keeps its mode, and a symlink stays a symlink."""
    env, repo = pack
    real = tmp_path / "reports" / "latest.json"
    real.parent.mkdir()
    real.write_text('{"old": true}\n')
    os.chmod(real, 0o600)
    link = tmp_path / "report.json"
    link.symlink_to(real)
    held = open(real)
    seen: list = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            try:
                seen.append(link.read_text())
            except FileNotFoundError:
                seen.append("")
            time.sleep(0.001)  # leave the CPU to the doctor

    poller = threading.Thread(target=poll)
    poller.start()
    try:
        proc = run_doctor("run", "--repo", str(repo), "--only", "test-pass", "--format",
                          "json", "--output", str(link), env=env)
        assert proc.returncode == 0, proc.stderr
    finally:
        done.set()
        poller.join()
    assert held.read() == '{"old": true}\n'   # the old file was never written to
    held.close()
    assert link.is_symlink() and stat.S_IMODE(real.stat().st_mode) == 0o600
    validate_report(json.loads(real.read_text()))
    for text in seen:
        assert text == '{"old": true}\n' or json.loads(text)["schema_version"] == 1
    assert sorted(p.name for p in real.parent.iterdir()) == ["latest.json"]


def test_an_output_under_a_file_names_that_file(doctor, inputs, tmp_path):
    """The message used to name the file's directory ("/repo is not a directory"), or
    only say "Not a directory" for a deeper path."""
    repo, files, args = inputs
    for option in ("--output", "--json"):
        for below in ("r.json", "a/b/r.json"):
            target = f"{files['script']}/{below}"
            proc = doctor(*args, option, target, cwd=repo)
            one_line_exit_2(proc, f"cannot write {target}: {files['script']} is not a directory")
    assert files["script"].read_text().startswith("#!/bin/bash\n")


@pytest.mark.parametrize("argv", [("run", "--static", "--output", ""),
                                  ("run", "--static", "--json", ""),
                                  ("sbatch", "--json", "", "job.sbatch")])
def test_an_empty_output_path_is_refused(doctor, inputs, argv, tmp_path, monkeypatch):
    """`--json "$UNSET"` used to write no report at all (and `--output ''` went to
    stdout), exit 0: the CI step that reads the file found nothing."""
    repo, _, _ = inputs
    fake = tmp_path / "bin" / "sbatch"  # nothing is ever submitted, whatever the outcome
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'sbatch: error: test' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:{os.environ['PATH']}")
    proc = doctor(*argv[:1], "--repo", str(repo), *argv[1:], cwd=repo)
    one_line_exit_2(proc, f"{argv[-2] if argv[0] == 'run' else '--json'} '' names no file")


def test_doctor_docs_out_keeps_the_users_files(tmp_path):
    """`doctor docs --out DIR` removed every *.md in DIR that was not a page (a README.md,
    notes), and overwrote a file of the user's named like a page."""
    out = tmp_path / "notes"
    out.mkdir()
    (out / "README.md").write_text("my notes\n")
    proc = run_doctor("docs", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert (out / "README.md").read_text() == "my notes\n"
    assert (out / "index.md").read_text().startswith("<!-- generated by `doctor docs`")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "index.md").write_text("my index\n")
    proc = run_doctor("docs", "--out", str(mine))
    one_line_exit_2(proc, f"{mine / 'index.md'} was not written by `doctor docs`")
    assert [p.name for p in mine.iterdir()] == ["index.md"]
    assert (mine / "index.md").read_text() == "my index\n"
