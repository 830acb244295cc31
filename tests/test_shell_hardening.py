"""The shell layer reads job scripts the way sbatch and bash do (issue 16, cause 7 and
"the shell layer must be linear"): a command behind a prefix (`srun`, `timeout -s KILL
10m`, `sshpass -p pw`, `VAR=x` ...) is the command that runs; a UTF-16 job script is
said to be refused, as sbatch refuses it; a long line costs linear time."""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import result_of, run_doctor, run_json
from doctor.job.shell import expand, split_commands, unquote

RSYNC = "rsync -a --exclude data src/ host:/dst/"
# Each prefix form, with the options that take a value written both ways.
PREFIXED = [
    "srun -N1 --ntasks=1 {}", "srun --nodes 2 -l -- {}", "timeout -s KILL 10m {}",
    "timeout --signal=TERM -k 5 1h {}", "nice -n 5 {}", "nice -10 {}",
    "env -u HOME RSYNC_RSH=ssh {}", "RSYNC_RSH=ssh {}", "sshpass -p pw {}",
    "sshpass -f ~/.pw {}", "exec {}", "command {}", "time -p {}", "nohup {}",
    "stdbuf -oL {}", "ionice -c 3 {}", "taskset -c 0-3 {}", "numactl -N 0 --membind=0 {}",
    "sudo -u deploy -E {}", "A=1 srun -n 2 timeout 5m nice {}", "/usr/bin/timeout 5 {}",
    "if ! {}; then echo failed; fi", "for h in a b; do {}; done",
]
# ... and the forms that run no rsync at all.
NOT_RUN = ["command -v {}", "echo {}", "ionice -c 3 -p 42 {}"]


def _deploy_repo(tmp: Path, lines: list) -> Path:
    repo = tmp / "repo"
    (repo / "src" / "pkg" / "data").mkdir(parents=True)
    (repo / "src" / "pkg" / "data" / "__init__.py").write_text("")
    (repo / "deploy.sh").write_text("#!/bin/bash\n" + "\n".join(lines) + "\n")
    return repo


def _finding_lines(repo: Path) -> set:
    code, doc = run_json("--static", "--only", "rsync-exclude-unanchored", "--repo", str(repo))
    assert code in (0, 1), doc
    return {f["location"]["line"] for f in result_of(doc, "rsync-exclude-unanchored")["findings"]}


def test_rsync_is_seen_behind_every_prefix(tmp_path):
    """Each line runs rsync behind a prefix; each must get the unanchored-exclude finding
    (before: srun/timeout/nice/sshpass/env with options, VAR=x and `then` hid it)."""
    lines = [p.format(RSYNC) for p in PREFIXED + NOT_RUN]
    found = _finding_lines(_deploy_repo(tmp_path, lines))
    by_line = {i: line for i, line in enumerate(lines, 2)}
    missed = [by_line[i] for i in by_line if i not in found and i - 2 < len(PREFIXED)]
    wrong = [by_line[i] for i in found if i - 2 >= len(PREFIXED)]
    assert not missed, f"rsync not seen behind: {missed}"
    assert not wrong, f"rsync reported where it does not run: {wrong}"


def test_here_string_does_not_swallow_the_script(tmp_path):
    """`<<<` is a here-string, not a here-document: the lines after it are commands."""
    repo = _deploy_repo(tmp_path, ['grep -q login <<< "$HOSTS"', RSYNC])
    assert _finding_lines(repo) == {3}


def test_step_behind_taskset_reads_its_config(tmp_path):
    """`taskset -c 0-3 python train.py --config X`: the step is python (its CPU list is
    not the program), so the missing config is found."""
    (tmp_path / "train.py").write_text("")
    (tmp_path / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH -N1\ntaskset -c 0-3 python train.py --config configs/x.yaml\n")
    code, doc = run_json("--static", "--only", "config-not-found", "--repo", str(tmp_path))
    assert code == 1
    assert "configs/x.yaml" in result_of(doc, "config-not-found")["findings"][0]["message"]


# ---- UTF-16 job scripts --------------------------------------------------------------
SCRIPT = "#!/bin/bash\r\n#SBATCH -N 1\r\nsrun python train.py\r\n"


def test_utf16_job_script_is_reported_as_refused(tmp_path):
    """A PowerShell-written job script (UTF-16LE with a BOM, CRLF) is found in the repo
    and reported at error with the iconv command that makes sbatch accept it."""
    (tmp_path / "job.sbatch").write_bytes(SCRIPT.encode("utf-16"))
    code, doc = run_json("--static", "--only", "script-encoding-unsupported",
                         "--repo", str(tmp_path))
    assert code == 1
    [f] = result_of(doc, "script-encoding-unsupported")["findings"]
    assert f["severity"] == "error" and f["location"] == {"path": "job.sbatch", "line": 1}
    assert "sbatch refuses it" in f["message"]
    assert f["commands"] == ["iconv -f UTF-16 -t UTF-8 job.sbatch | sed 's/\\r$//' > "
                             "job.sbatch.utf8 && mv job.sbatch.utf8 job.sbatch"]


def test_utf16_without_bom_given_with_sbatch_is_read(tmp_path):
    """`--sbatch` naming a UTF-16LE script without a BOM: not "binary file" (exit 2) but
    the finding, and its #SBATCH lines are read (the report's table names the job)."""
    job = tmp_path / "job.sbatch"
    job.write_bytes(SCRIPT.replace("\r\n", "\n").encode("utf-16-le"))
    proc = run_doctor("run", "--static", "--only", "script-encoding-unsupported",
                      "--sbatch", str(job), "--repo", str(tmp_path))
    assert proc.returncode == 1, proc.stderr
    assert "job.sbatch is UTF-16LE text; sbatch refuses it" in proc.stdout
    assert "iconv -f UTF-16LE -t UTF-8 job.sbatch > job.sbatch.utf8" in proc.stdout


@pytest.mark.skipif(not shutil.which("sbatch"), reason="sbatch is not installed")
def test_sbatch_really_refuses_a_utf16_script(tmp_path):
    """The docstring quotes sbatch; this is where it comes from. sbatch checks the
    script before it contacts the controller, so no cluster is needed."""
    job = tmp_path / "job.sbatch"
    job.write_bytes(SCRIPT.encode("utf-16"))
    proc = subprocess.run(["sbatch", "--test-only", str(job)], capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode != 0
    assert "This does not look like a batch script" in proc.stderr


# ---- linear time ---------------------------------------------------------------------
def test_a_long_line_costs_linear_time():
    """A 200 kB word through the splitter and the expander: well under a second (it was
    quadratic: seconds for 200 kB, a hang for 15 MB)."""
    word = '"' + "a $X." * 40_000 + '"'
    start = time.process_time()
    [(_, words)] = split_commands("echo " + word + " " + "cd" * 50_000 + "\n")
    assert unquote(words[1]) == "a $X." * 40_000
    assert expand(words[1], {"X": "y"}.get).text == "a y." * 40_000
    assert time.process_time() - start < 0.5


def test_a_megabyte_line_does_not_time_the_checks_out(tmp_path):
    """The whole CLI on a job script with one 1 MB line: every script check answers
    (before: the checks that read the script timed out after 10 s)."""
    job = tmp_path / "job.sbatch"
    job.write_text("#!/bin/bash\n#SBATCH -N1\necho " + "ab" * 500_000 + "\n")
    code, doc = run_json("--static", "--sbatch", str(job), "--repo", str(tmp_path),
                         "--only", "hip-alloc-conf,nccl-env-deprecated,rsync-exclude-unanchored,"
                         "script-dos-line-breaks,script-encoding-unsupported", timeout=60)
    assert code == 0, [(r["id"], r["reason"]) for r in doc["results"]]
