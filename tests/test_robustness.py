"""Adversarial input through the real CLI: hostile YAML, odd job scripts, files that
are not files, broken pipes, terminals, interrupts and secrets in unusual places.

Every case is a bug that was found and fixed; the test names say what a user sees.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from conftest import (ROOT, make_pack, one_line_exit_2, result_of, run_doctor, run_json,
                      validate_report)

PROBE_PACK = '''
import threading, time
from doctor import Finding, check
from doctor.probes import probe

CALLS = []

@probe("test_slow_fact")
def slow(job):
    CALLS.append(threading.get_ident())
    time.sleep(0.3)
    return {"calls": len(CALLS)}

DOC = """Asks for the slow fact.

## Why it matters
Test-only.

## How to fix
Nothing.
"""

def _asker(name):
    def ask(job):
        job.fact("test_slow_fact")
        return Finding(name, data={"calls": len(CALLS)})
    ask.__doc__ = DOC
    ask.__name__ = ask.__qualname__ = name.replace("-", "_")
    return check(name, title=name, needs=("repo",))(ask)

for _n in ("test-ask-a", "test-ask-b", "test-ask-c"):
    _asker(_n)
'''


def job_env_of(doc: dict) -> dict:
    """The effective job environment, as the test-secret check reports it."""
    return result_of(doc, "test-secret")["findings"][0]["data"]["env"]


# ---- YAML ----------------------------------------------------------------------------
def test_yaml_anchors_aliases_and_merge_keys_load(pack):
    env, repo = pack
    (repo / "c.yaml").write_text("base: &b {num_workers: 0, lr: 1}\n"
                                 "train:\n  <<: *b\n  lr: 2\nval: *b\n")
    code, doc = run_json("--repo", str(repo), "--config", str(repo / "c.yaml"),
                         "--only", "test-pass", env=env)
    assert code == 0 and doc["inputs"]["configs"] == ["c.yaml"]


def test_yaml_bomb_is_refused_fast(pack):
    env, repo = pack
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, cur in zip("abcdefgh", "bcdefghi"):
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    (repo / "bomb.yaml").write_text("\n".join(lines) + "\n")
    t0 = time.monotonic()
    proc = run_doctor("run", "--repo", str(repo), "--config", str(repo / "bomb.yaml"),
                      "--only", "test-pass", env=env, timeout=60)
    assert time.monotonic() - t0 < 10
    one_line_exit_2(proc, "bomb.yaml", "aliases")


@pytest.mark.parametrize("text,needles", [
    ("a: " + "[" * 5000 + "]" * 5000 + "\n", ["deep.yaml", "nested too deeply"]),
    ("name: x\nwhen: 2027-02-30\n", ["deep.yaml:2", "2027-02-30"]),
    ("num_workers: 0\nlr: 1\nnum_workers: 4\n", ["deep.yaml:3", "duplicate key 'num_workers'",
                                                 "line 1"]),
], ids=["deeply-nested", "impossible-date", "duplicate-key"])
def test_bad_yaml_is_one_line_exit_2(pack, text, needles):
    env, repo = pack
    (repo / "deep.yaml").write_text(text)
    proc = run_doctor("run", "--repo", str(repo), "--config", str(repo / "deep.yaml"),
                      "--only", "test-pass", env=env)
    one_line_exit_2(proc, *needles)


def test_duplicate_settings_key_is_not_silently_dropped(pack):
    env, repo = pack
    (repo / "doctor.yaml").write_text("ignore: [test-fail]\nselect: [all]\nignore: [test-warn]\n")
    one_line_exit_2(run_doctor("run", "--repo", str(repo), env=env),
                    "doctor.yaml:3", "duplicate key 'ignore'")


def test_huge_config_is_refused_quickly(pack):
    env, repo = pack
    block = "".join(f"b{i}: {{num_workers: {i % 3}, name: x{i}, l: [1, 2, 3]}}\n"
                    for i in range(1000))
    (repo / "big.yaml").write_text(block * 300)  # ~11 MB
    t0 = time.monotonic()
    proc = run_doctor("run", "--repo", str(repo), "--config", str(repo / "big.yaml"),
                      "--only", "test-pass", env=env)
    assert time.monotonic() - t0 < 10
    one_line_exit_2(proc, "big.yaml", "too large")


def test_utf16_config_with_bom_is_read(pack):
    env, repo = pack
    (repo / "u16.yaml").write_bytes("a: 1\nname: café\n".encode("utf-16"))
    code, doc = run_json("--repo", str(repo), "--config", str(repo / "u16.yaml"),
                         "--only", "test-pass", env=env)
    assert code == 0 and doc["inputs"]["configs"] == ["u16.yaml"]


# ---- job scripts ---------------------------------------------------------------------
def test_crlf_job_script_values_carry_no_carriage_return(pack):
    env, repo = pack
    (repo / "job.sbatch").write_bytes(b"#!/bin/bash\r\n#SBATCH -N 2\r\n"
                                      b"export MIOPEN_USER_DB_PATH=/scratch/m\r\n"
                                      b"srun python train.py\r\n")
    _, doc = run_json("--repo", str(repo), "--only", "test-secret", env=env)
    assert job_env_of(doc)["MIOPEN_USER_DB_PATH"] == "/scratch/m"


def test_heredoc_bodies_are_not_commands(pack):
    env, repo = pack
    (repo / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH -N 1\n"
        "cat > setup.sh <<'EOF'\nexport IN_HEREDOC=1\necho 'unterminated\nEOF\n"
        "cat <<-END | tee x\n\texport ALSO_IN_HEREDOC=1\n\tEND\n"
        "python - <<EOF 2>&1\nimport os\nEOF\n"
        "export AFTER=yes\n")
    _, doc = run_json("--repo", str(repo), "--only", "test-secret", env=env)
    job_env = job_env_of(doc)
    assert "IN_HEREDOC" not in job_env and "ALSO_IN_HEREDOC" not in job_env
    assert job_env["AFTER"] == "yes"


def test_inputs_that_are_not_regular_files_never_block(pack, tmp_path):
    env, repo = pack
    fifo = tmp_path / "job.fifo"
    os.mkfifo(fifo)
    (repo / "dir.yaml").mkdir()
    for args, needle in [(["--sbatch", str(fifo)], "not a regular file"),
                         (["--config", str(fifo)], "not a regular file"),
                         (["--sbatch", "/dev/zero"], "not a regular file"),
                         (["--settings", str(fifo)], "not a regular file"),
                         (["--settings", str(repo / "dir.yaml")], "is a directory"),
                         (["--sbatch", str(tmp_path / "dangling")], "not found")]:
        if args[1].endswith("dangling"):
            os.symlink(tmp_path / "nowhere", tmp_path / "dangling")
        proc = run_doctor("run", "--repo", str(repo), "--only", "test-pass", *args,
                          env=env, timeout=20)
        one_line_exit_2(proc, needle)


def test_job_scripts_beyond_20000_files_are_found(pack):
    env, repo = pack
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    empty = subprocess.run(["git", "-C", str(repo), "hash-object", "-w", "--stdin"],
                           input=b"", capture_output=True, check=True).stdout.decode().strip()
    index = "".join(f"100644 {empty}\ta/f{i:05d}.txt\n" for i in range(25000))
    subprocess.run(["git", "-C", str(repo), "update-index", "--add", "--index-info"],
                   input=index.encode(), check=True)
    (repo / "zz").mkdir()
    (repo / "zz" / "job.sh").write_text("#!/bin/bash\n#SBATCH -N 2\nsrun true\n")
    subprocess.run(["git", "-C", str(repo), "add", "zz/job.sh"], check=True)
    t0 = time.monotonic()
    code, doc = run_json("--repo", str(repo), "--only", "test-pass", "--static", env=env)
    assert time.monotonic() - t0 < 10
    assert doc["inputs"]["sbatch"] == ["zz/job.sh"]


# ---- settings ------------------------------------------------------------------------
@pytest.mark.parametrize("name,text,needle", [
    ("pyproject.toml", "tool = 5\n", "[tool] must be a table"),
    ("doctor.yaml", "waivers: [{check: test-fail, reason: x, expires: 20270130}]\n",
     "is not a date"),
    ("doctor.yaml", "smoke: {timeout_s: true}\n", "smoke.timeout_s must be a number"),
])
def test_odd_settings_values_are_exit_2(pack, name, text, needle):
    env, repo = pack
    (repo / name).write_text(text)
    one_line_exit_2(run_doctor("run", "--repo", str(repo), "--only", "test-pass", env=env),
                    needle)


# ---- output --------------------------------------------------------------------------
def test_non_utf8_file_names_in_every_format(pack, tmp_path):
    env, repo = pack
    name = os.fsdecode(b"conf\xff.yaml")
    (repo / name).write_text("a: 1\n")
    for fmt in ("table", "json", "junit", "sarif", "markdown"):
        out = tmp_path / f"out.{fmt}"
        proc = run_doctor("run", "--repo", str(repo), "--config", str(repo / name),
                          "--only", "test-pass", "--format", fmt, "--output", str(out),
                          "--json", str(tmp_path / "r.json"), env=env)
        assert proc.returncode == 0, (fmt, proc.stderr)
        out.read_text(encoding="utf-8")
    doc = validate_report(json.loads((tmp_path / "r.json").read_text(encoding="utf-8")))
    assert doc["inputs"]["configs"] == ["conf\ufffd.yaml"]


def test_write_errors_are_one_line(pack, tmp_path):
    env, repo = pack
    (tmp_path / "afile").write_text("")
    for args, needle in [(["--json", "/proc/x.json"], "cannot write /proc/x.json"),
                         (["--output", str(tmp_path / "afile" / "x.txt")],
                          "is not a directory")]:
        one_line_exit_2(run_doctor("run", "--repo", str(repo), "--only", "test-pass", *args,
                                   env=env), needle)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "doctor", "run", "--repo", str(repo),
                               "--only", "test-pass"], stdout=full, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, **env}, cwd=ROOT, timeout=60)
    one_line_exit_2(proc, "cannot write to stdout")


def test_closed_stdout_still_writes_the_json_report(pack, tmp_path):
    env, repo = pack
    proc = subprocess.Popen([sys.executable, "-m", "doctor", "run", "--repo", str(repo),
                             "--only", "test-fail", "--format", "json",
                             "--json", str(tmp_path / "r.json")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **env}, cwd=ROOT)
    proc.stdout.close()  # `doctor run ... | head -1`, and head already gone
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 1 and "Traceback" not in err and not err.strip()
    assert validate_report(json.loads((tmp_path / "r.json").read_text()))


def test_progress_line_is_cleared_before_the_table_on_a_tty(pack):
    env, repo = pack
    (repo / "doctor.yaml").write_text("select: [test-hang, test-pass]\n")
    cmd = f"{sys.executable} -m doctor run --repo {repo} -v"   # -v: every check's row
    proc = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True,
                          text=True, env={**os.environ, **env, "NO_COLOR": "1"},
                          cwd=ROOT, timeout=60)
    assert "\033[3" not in proc.stdout  # NO_COLOR: no colour on a terminal
    row = next(line for line in proc.stdout.splitlines() if "test-pass" in line)
    assert row.split("\r")[-1].replace("\033[K", "").startswith("pass"), repr(row)
    color = subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True,
                           text=True, env={**os.environ, **env}, cwd=ROOT, timeout=60)
    assert "\033[3" in color.stdout


# ---- interrupts ----------------------------------------------------------------------
def test_ctrl_c_during_the_smoke_exits_130_and_leaves_nothing(tmp_path):
    pytest.importorskip("torch")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "doctor", "run", "--repo",
                             str(ROOT / "fixtures" / "demo")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "TMPDIR": str(tmp),  # the marker: in the
                                 "DOCTOR_TEST_MARKER": str(tmp_path)},  # environ of all it starts
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    time.sleep(0.5)
    left = []
    for p in psutil.process_iter():
        try:
            if p.environ().get("DOCTOR_TEST_MARKER") == str(tmp_path):
                left.append(p.cmdline())
        except psutil.Error:
            pass
    assert not left, f"processes left behind: {left}"
    assert not list(tmp.iterdir())


# ---- facts ---------------------------------------------------------------------------
def test_a_fact_asked_for_concurrently_is_probed_once(tmp_path):
    site = tmp_path / "site"
    make_pack(site, "probepack", PROBE_PACK)
    repo = tmp_path / "repo"
    repo.mkdir()
    code, doc = run_json("--repo", str(repo), "--only", "test-ask-a,test-ask-b,test-ask-c",
                         env={"PYTHONPATH": str(site)})
    calls = [result_of(doc, f"test-ask-{x}")["findings"][0]["data"]["calls"] for x in "abc"]
    assert calls == [1, 1, 1]


# ---- secrets -------------------------------------------------------------------------
def test_secrets_in_shell_variables_urls_and_paths_never_appear(pack, tmp_path):
    env, repo = pack
    (repo / "pypi-tok-98765").mkdir()
    (repo / "pypi-tok-98765" / "c.yaml").write_text("a: 1\n")
    (repo / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH -N 1\n"
        "PYPI_TOKEN=pypi-tok-98765\n"  # a shell variable, never exported
        'export PIP_INDEX_URL="https://__token__:${PYPI_TOKEN}@pypi.example.com/simple"\n'
        "export HF_TOKEN=hf_first_value_1\nexport HF_TOKEN=hf_second_value_2\n"
        "export GH_AUTH_HEADER=only-in-the-script\n")
    for fmt in ("table", "json", "junit", "sarif", "markdown"):
        out = tmp_path / f"out.{fmt}"
        proc = run_doctor("run", "--repo", str(repo), "--only", "test-secret",
                          "--config", str(repo / "pypi-tok-98765" / "c.yaml"),
                          "--format", fmt, "--output", str(out), env=env)
        assert proc.returncode == 1, proc.stderr
        for secret in ("pypi-tok-98765", "hf_first_value_1", "hf_second_value_2",
                       "only-in-the-script"):
            assert secret not in out.read_text() + proc.stderr, (fmt, secret)
    assert "https://__token__:***@pypi.example.com/simple" in out.read_text()
