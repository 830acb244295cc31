"""Issue 28's acceptance test for the default human output: the real CLI in a pseudo-terminal
of 100 columns, on the demo and on a repo with 48 findings (errors after many warnings in
check order). No line on the screen is wider than the terminal (progress lines included,
and no exception for long commands: they are continued with ` \\`); every error finding is
on the screen; the summary's counts are the JSON report's of the same run. `-q` prints one
line, `-v` every check; `doctor sbatch` says nothing but the job id when the job passes,
and a forced job's log gets one compact block.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT, clean_env, git_repo, run_doctor, validate_report
from harness import read_terminal

COLS = 100
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
SUMMARY = re.compile(r"^(\d+) errors?, (\d+) warnings?, (\d+) passed(?:, (\d+) skipped)?"
                     r"(?:, (\d+) could not complete)?(?:, (\d+) suppressed)? in [\d.]+s "
                     r"\(exit (\d+)\)$")


def run_in_pty(*args: str, cols: int = COLS, cwd: Path = ROOT, env: dict | None = None,
               timeout: float = 120) -> tuple:
    """(exit code, every text the terminal was given to draw, the screen's lines): the real
    CLI with stdout and stderr on a pty of `cols` columns, as a user's terminal."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    full_env = {k: v for k, v in clean_env().items() if k not in ("COLUMNS", "NO_COLOR")}
    full_env.update({"TERM": "xterm", **(env or {})})
    proc = subprocess.Popen([sys.executable, "-m", "doctor", *args], cwd=cwd, env=full_env,
                            stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    deadline = time.monotonic() + timeout
    try:
        data = read_terminal(master, deadline)
        code = proc.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    drawn = [seg for line in ANSI.sub("", text).split("\n") for seg in line.split("\r")]
    # every \r in the output is followed by "clear the line" (\033[K): what stays on each
    # line is the text after its last \r
    screen = [line.split("\r")[-1] for line in ANSI.sub("", text).split("\n")]
    while screen and not screen[-1].strip():
        screen.pop()
    return code, drawn, screen, text


def words(text: str) -> str:
    return " ".join(text.split())


def assert_screen_matches_report(drawn: list, screen: list, doc: dict) -> None:
    too_wide = [line for line in drawn if len(line) > COLS]
    assert not too_wide, too_wide
    shown = words("\n".join(screen))
    for r in doc["results"]:
        for f in r["findings"]:
            if (f.get("severity") or r["severity"]) != "error":
                continue
            loc = f["location"]
            place = f"{loc['path']}:{loc['line']}: " if loc and loc.get("line") else \
                f"{loc['path']}: " if loc else ""
            line = words(f"{place}error[{r['id']}] {f['message']}")
            assert line in shown, (line, "\n".join(screen))
    m = SUMMARY.match(screen[-1])
    assert m, screen[-1]
    c = doc["summary"]["counts"]
    said = [int(x or 0) for x in m.groups()]
    assert said[:5] == [c["fail"], c["warning"], c["pass"], c["skip"], c["error"]], \
        (screen[-1], c)
    assert said[6] == doc["summary"]["exit_code"]


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> Path:
    """48 findings: 8 configs with prefetch_factor and num_workers 0 and 16 deprecated NCCL
    variables (warnings, in checks that come first), then 24 unanchored rsync excludes
    that drop a package directory each (errors, in a check that comes last)."""
    root = tmp_path_factory.mktemp("many")
    files = {"train.py": "import yaml\nimport torch\ncfg = yaml.safe_load(open('x'))\n"
                         "loader = torch.utils.data.DataLoader([], **cfg['data'])\n"}
    for i in range(8):
        files[f"slurm/job{i}.sbatch"] = (
            "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n"
            "export NCCL_ASYNC_ERROR_HANDLING=1\nexport NCCL_TIMEOUT=3600\n"
            f"srun python train.py --config configs/c{i}.yaml\n")
        files[f"configs/c{i}.yaml"] = "data:\n  num_workers: 0\n  prefetch_factor: 2\n"
    names = [f"dir{i}" for i in range(24)]
    files["scripts/deploy.sh"] = "#!/bin/bash\nrsync -av \\\n" + "".join(
        f"    --exclude '{n}' \\\n" for n in names) + "    ./ remote:/scratch/project/code/\n"
    for n in names:
        files[f"src/pkg/{n}/__init__.py"] = "x = 1\n"
    return git_repo(root, files)


def test_forty_findings_fit_a_100_column_terminal_with_every_error_on_screen(many, tmp_path):
    report = tmp_path / "r.json"
    code, drawn, screen, _ = run_in_pty("run", "--static", "--repo", str(many),
                                        "--json", str(report))
    doc = validate_report(json.loads(report.read_text()))
    errors = [f for r in doc["results"] for f in r["findings"]
              if (f.get("severity") or r["severity"]) == "error"]
    warnings = [f for r in doc["results"] for f in r["findings"]
                if (f.get("severity") or r["severity"]) != "error"]
    assert len(errors) >= 24 and len(errors) + len(warnings) >= 40, doc["summary"]
    assert code == 1 == doc["summary"]["exit_code"]
    assert_screen_matches_report(drawn, screen, doc)
    text = "\n".join(screen)
    # errors first although their check comes after the warnings' checks
    assert text.index("error[rsync-exclude-unanchored]") < \
        text.index("warning[dataloader-option-conflict]")
    # 16 warnings of one check: 10 shown, the others counted and pointed to
    assert text.count("warning[nccl-env-deprecated]") == 10
    assert "… and 6 more warnings of nccl-env-deprecated (`-v` or the JSON report lists them " \
           "all)" in words(text)
    # the rsync fix (a 300-character command) is continued with ` \` and still one command
    assert any(line.rstrip().endswith(" \\") for line in screen)


def test_the_demo_on_a_100_column_terminal(tmp_path):
    """The demo with its smoke: the progress line says what runs now (the smoke, with its
    ranks), calls a warning a warning, and is gone before the report."""
    report = tmp_path / "r.json"
    code, drawn, screen, raw = run_in_pty("run", "--repo", str(FIXTURES / "demo"),
                                          "--json", str(report))
    doc = validate_report(json.loads(report.read_text()))
    assert code == 1 == doc["summary"]["exit_code"]
    assert_screen_matches_report(drawn, screen, doc)
    progress = [seg for seg in drawn if " done" in seg and "s…" in seg]
    assert any("ddp-smoke: 2 ranks" in seg for seg in progress), progress
    assert not any("fail" in seg for seg in progress), progress
    assert not any(" done" in line and "s…" in line for line in screen), screen
    # colours on a terminal, and NO_COLOR honoured: the same words either way
    assert "\x1b[1;31merror\x1b[0m[" in raw


def test_two_checks_that_run_at_once_are_both_on_the_progress_line():
    """The DDP smoke and the memory estimate run at the same time: the line names both,
    each with its own time (it named only the latest to speak, and the smoke vanished)."""
    import io
    import threading

    from doctor.progress import Progress

    release = threading.Event()
    threads = [threading.Thread(target=release.wait, name=f"check:{n}", daemon=True)
               for n in ("ddp-smoke", "gpu-memory-estimate")]
    for t in threads:
        t.start()
    progress = Progress(io.StringIO())
    try:
        progress.say("ddp-smoke: 2 ranks, the built-in model")
        progress.say("gpu-memory-estimate: m:f, fp32, adamw, ddp")
        line = progress.line(time.monotonic())
    finally:
        release.set()
        progress.finish()
    assert "ddp-smoke: 2 ranks, the built-in model, 0 s…" in line, line
    assert line.index("ddp-smoke") < line.index("gpu-memory-estimate: m:f"), line


def test_quiet_is_one_line_and_verbose_lists_every_check(many, tmp_path):
    report = tmp_path / "r.json"
    code, drawn, screen, _ = run_in_pty("run", "--static", "-q", "--repo", str(many),
                                        "--json", str(report))
    doc = json.loads(report.read_text())
    assert [line for line in screen if line.strip()] == [screen[-1]], screen
    assert_screen_matches_report(drawn, screen, {**doc, "results": [
        {**r, "findings": []} for r in doc["results"]]})   # no finding, only the counts
    code, drawn, screen, _ = run_in_pty("run", "--static", "-v", "--repo", str(many),
                                        "--json", str(report))
    doc = json.loads(report.read_text())
    assert_screen_matches_report(drawn, screen, doc)
    rows = {m.group(2): m.group(1) for line in screen
            if (m := re.match(r"(pass|skip|FAIL|WARN|ERROR) +(\S+) ", line))}
    label = {"pass": "pass", "skip": "skip", "error": "ERROR"}
    assert rows == {r["id"]: label.get(r["status"]) or
                    ("FAIL" if r["severity"] == "error" else "WARN") for r in doc["results"]}
    # -v hides no warning
    assert "\n".join(screen).count("warning[nccl-env-deprecated]") == 16


def test_color_never_and_no_color(many):
    for args, env in ((["--color", "never"], {}), ([], {"NO_COLOR": "1"})):
        _, _, _, raw = run_in_pty("run", "--static", "-q", "--repo", str(many), *args, env=env)
        body = raw.split("\r\x1b[K")[-1]   # after the progress line's last clearing
        assert "\x1b[" not in body, body
    proc = run_doctor("run", "--static", "-q", "--color", "always", "--repo", str(many))
    assert "\x1b[1;31m" in proc.stdout


def test_a_long_command_is_continued_as_the_shell_reads_it():
    """A command wider than the terminal is broken between words with ` \\`; a word wider
    than a line is cut where a backslash-newline joins it again (a single-quoted part
    closed and reopened). bash reads every form back as the words of the original."""
    from doctor.report.table_format import _shell_wrap

    long = "/scratch/" + "very_long_directory_name/" * 6
    command = (f"rsync -av --exclude 'a b' --exclude \"x  $USER\" ./ host:{long} "
               f"--filter='- {long}' \"{long}x y\" tail\\ word")
    for width in (40, 60, 100):
        lines = _shell_wrap(command, "  $ ", "      ", width)
        assert all(len(line) <= width for line in lines), lines
        assert len(lines) > 1
        script = "\n".join(lines).replace("  $ ", "", 1)
        got = subprocess.run(["bash", "-c", f"set -- {script}\nprintf '[%s]\\n' \"$@\""],
                             capture_output=True, text=True, env={"USER": "u"}).stdout
        want = subprocess.run(["bash", "-c", f"set -- {command}\nprintf '[%s]\\n' \"$@\""],
                              capture_output=True, text=True, env={"USER": "u"}).stdout
        assert got == want and got.count("[") == 11, (width, lines, got)


def job_script(repo: Path, name: str, nodes: int = 1) -> Path:
    """A job the checks pass (one node, the config's) or, with nodes=2, one
    slurm-gpu-mismatch refuses."""
    (repo / "configs").mkdir(parents=True, exist_ok=True)
    (repo / "configs" / "train.yaml").write_text("trainer:\n  num_nodes: 1\n  devices: 2\n")
    script = repo / "train.sbatch"
    script.write_text(f"#!/bin/bash\n#SBATCH --nodes={nodes}\n#SBATCH --job-name={name}\n"
                      "#SBATCH --ntasks-per-node=2\n"
                      f"#SBATCH -o {repo}/slurm-%j.out\n#SBATCH --open-mode=append\n"
                      "echo output of this run\n"
                      "if [ -n \"$NEVER\" ]; then srun python train.py "
                      "--config configs/train.yaml; fi\n")
    return script


@pytest.mark.slurm
def test_sbatch_says_nothing_but_the_job_id_when_the_job_passes(slurm_cluster, tmp_path):
    repo = tmp_path / "repo"
    script = job_script(repo, f"doctor-quiet-{os.getpid()}-{tmp_path.name}")
    proc = run_doctor("sbatch", "--repo", str(repo), "--only", "slurm-gpu-mismatch",
                      str(script))
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"\d+\n", proc.stdout) and proc.stderr == "", proc.stderr
    subprocess.run(["scancel", proc.stdout.strip()], capture_output=True, timeout=30)
    proc = run_doctor("sbatch", "--repo", str(repo), "-v", "--only", "slurm-gpu-mismatch",
                      str(script), "--test-only")
    assert re.search(r"^pass +slurm-gpu-mismatch ", proc.stderr, re.M), proc.stderr


@pytest.mark.slurm
def test_a_forced_jobs_log_gets_one_compact_block(slurm_cluster, tmp_path):
    """It used to get the whole table and the indented JSON: 505 `#` lines for the demo.
    (The block is appended before the held job is released; test_sbatch_cli waits for the
    job and shows its own output comes after it.)"""
    repo = tmp_path / "repo"
    script = job_script(repo, f"doctor-forced-{os.getpid()}-{tmp_path.name}", nodes=2)
    proc = run_doctor("sbatch", "--repo", str(repo), "--force", str(script))
    assert proc.returncode == 0, proc.stderr
    job_id = proc.stdout.strip()
    subprocess.run(["scancel", job_id], capture_output=True, timeout=30)
    assert "error[slurm-gpu-mismatch]" in proc.stderr
    log = (repo / f"slurm-{job_id}.out").read_text()
    block = [line for line in log.splitlines() if line.startswith("#")]
    assert any("error[slurm-gpu-mismatch]" in line for line in block)
    assert SUMMARY.match(next(line[2:] for line in block if SUMMARY.match(line[2:])))
    assert len(block) <= 12, block   # header, findings, summary, the JSON on one line
    shown = run_doctor("show", "-v", str(repo / f"slurm-{job_id}.out"))
    assert shown.returncode == 0 and re.search(r"^FAIL +slurm-gpu-mismatch ", shown.stdout,
                                               re.M), shown.stdout


def test_a_suppressed_finding_is_counted_by_default_and_shown_with_its_reason_under_v(tmp_path):
    repo = git_repo(tmp_path / "repo", {
        "scripts/deploy.sh": "#!/bin/bash\n"
                             "# doctor: ignore[rsync-exclude-unanchored] data/ holds no code here\n"
                             "rsync -av --exclude data ./ remote:/x/\n"
                             "rsync -av --exclude cache ./ remote:/y/\n",
        "src/pkg/data/__init__.py": "x = 1\n", "src/pkg/cache/__init__.py": "x = 1\n"})
    proc = run_doctor("run", "--static", "--repo", str(repo), "--only", "rsync-exclude-unanchored")
    assert proc.returncode == 1, proc.stderr
    assert "scripts/deploy.sh:4: error[rsync-exclude-unanchored]" in proc.stdout
    assert "deploy.sh:3" not in proc.stdout
    assert proc.stdout.splitlines()[-1].startswith("1 error, 0 warnings, 0 passed, 1 suppressed")
    proc = run_doctor("run", "--static", "-v", "--repo", str(repo),
                      "--only", "rsync-exclude-unanchored")
    shown = words(proc.stdout)
    assert "scripts/deploy.sh:3: suppressed[rsync-exclude-unanchored] rsync exclude 'data'" \
        in shown and "(inline: data/ holds no code here)" in shown, proc.stdout
