"""Control characters from the user's files never reach a terminal or viewer raw (issue 16,
cause 3).

A cache file's contents, a cache file's name, a config value and a job script's
environment value each carry ESC sequences (clear screen, set the window title), BEL,
a newline that would forge a report line, and bidi overrides. Every human-readable
format shows them escaped (`\\x1b`, `\\u202e`); JSON escapes them by construction and
still round-trips the exact text. The table's own colours still work on a terminal,
and `doctor: error:` lines escape the path they echo.
"""
from __future__ import annotations

import json
import os
import pickle
import pty
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import ROOT, run_doctor, validate_report
from harness import read_terminal
from doctor.cli import main
from test_formats import junit_errors, sarif_errors

# What a terminal or viewer acts on instead of showing: C0, DEL, C1, bidi controls.
RAW = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                 "\u2066-\u2069]")
FORMATS = ("table", "markdown", "junit", "sarif", "json")
TITLE = "\x1b]0;pwned\x07"          # sets the terminal's window title
CLEAR = "\x1b[2J"                   # clears the screen
FORGED = "\nFORGED-LINE"           # a line that was never in the report
BIDI = "\u202e\u2066"


def legacy_torch_save(path: Path, pickled_object: bytes) -> None:
    """A legacy-format torch.save file around a hand-made pickle (no torch needed)."""
    head = (pickle.dumps(0x1950A86A20F9469CFC6C, 2) + pickle.dumps(1001, 2)
            + pickle.dumps({"protocol_version": 1001, "little_endian": True,
                            "type_sizes": {}}, 2))
    path.write_bytes(head + pickled_object + pickle.dumps([], 2))


CACHE = f"cache{CLEAR}{BIDI}{FORGED}"  # the cache directory, named by a config value


def hostile_repo(tmp_path: Path) -> tuple:
    """(repo, a cache file's path) with control characters in four places the report
    quotes: a cache file's contents and name, a config value, a job's environment value."""
    repo = tmp_path / "repo"
    cache = repo / CACHE
    cache.mkdir(parents=True)
    (repo / "c.yaml").write_text('cache_dir: "cache\\e[2J\\u202e\\u2066\\nFORGED-LINE"\n')
    # a cache file's contents: the pickle names a global holding ESC sequences
    module = f"evil{TITLE}{BIDI}".encode()
    legacy_torch_save(cache / "m.pt", b"\x80\x02c" + module + b"\nrun" + CLEAR.encode() +
                      b"\n)R.")
    # a cache file's name: a truncated file (a finding located at it)
    name = cache / f"{CLEAR}name{BIDI}{TITLE}.pt"
    legacy_torch_save(name, pickle.dumps({"a": 1}, 2)[:-3])
    # an environment value in the job script (a ROCm job, so hip-alloc-conf quotes it)
    (repo / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH -N 1\n"
        f"export PYTORCH_HIP_ALLOC_CONF='garbage_collection_threshold:0.8{TITLE}{FORGED}{BIDI}'\n"
        "srun singularity exec --rocm $SIF python train.py\n")
    # a PyTorch program: only PyTorch reads PYTORCH_HIP_ALLOC_CONF (hip-alloc-conf skips
    # an entry that imports no torch)
    (repo / "train.py").write_text("import torch\nprint('train')\n")
    return repo, name


# The cache (named by the config) and the job script's environment: two real CLI runs.
RUNS = (("--no-smoke", "--config", "{repo}/c.yaml", "--only", "cuda-tensor-in-shared-cache"),
        ("--static", "--only", "hip-alloc-conf"))


def shown(fmt: str, text: str) -> str:
    """What a reader of the format sees as text (after XML or JSON decoding)."""
    if fmt == "sarif":
        doc = json.loads(text)
        assert sarif_errors(doc) == []
        run = doc["runs"][0]
        return "\n".join([r["message"]["text"] for r in run["results"]] +
                         [n["message"]["text"] for n in
                          run["invocations"][0]["toolExecutionNotifications"]])
    if fmt == "junit":
        assert junit_errors(text) == []
        root = ET.fromstring(text)
        return "\n".join([el.text or "" for el in root.iter()] +
                         [v for el in root.iter() for v in el.attrib.values()])
    return text


def in_process(*argv: str) -> int:
    """The exit code of doctor.cli.main(argv), run in this process (no interpreter start:
    the format loops stay fast)."""
    try:
        main(list(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    return 0


def test_every_format_shows_control_characters_escaped(tmp_path, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    # wide enough for the table to show each escaped value whole: at 100 columns a long
    # command is continued on the next line (` \`, or a quote closed and reopened)
    monkeypatch.setenv("COLUMNS", "400")
    repo, name = hostile_repo(tmp_path)
    out, json_out = tmp_path / "out", tmp_path / "report.json"
    for fmt in FORMATS[:-1]:  # every run also writes the JSON report (--json)
        seen, docs = [], []
        for args in RUNS:
            code = in_process("run", "--repo", str(repo), *[a.format(repo=repo) for a in args],
                              "--format", fmt, "--output", str(out), "--json", str(json_out))
            assert code in (0, 1), code
            text = out.read_text(encoding="utf-8")
            # JSON escapes by construction, and a consumer gets the exact text back
            raw_json = json_out.read_text(encoding="utf-8")
            assert not RAW.search(raw_json.replace("\n", ""))
            docs.append(validate_report(json.loads(raw_json)))
            text = shown(fmt, text)
            assert not RAW.search(text.replace("\n", "")), (fmt, RAW.findall(text))
            assert not any(ln.lstrip().startswith("FORGED") for ln in text.splitlines()), fmt
            seen.append(text)
        cache_findings, env_findings = ([f for r in d["results"] for f in r["findings"]]
                                        for d in docs)
        assert str(name) in [f["data"].get("path") for f in cache_findings]
        assert any(f"evil{TITLE}{BIDI}.run{CLEAR}" in f["message"] for f in cache_findings)
        assert any(f"0.8{TITLE}{FORGED}{BIDI}" in c for f in env_findings for c in f["commands"])
        cache_text, env_text = seen
        assert "evil\\x1b]0;pwned\\x07\\u202e\\u2066.run\\x1b[2J" in cache_text, fmt  # contents
        if fmt != "sarif":  # where SARIF has paths only as (percent-encoded) URIs
            assert "\\x1b[2Jname\\u202e\\u2066\\x1b]0;pwned\\x07.pt" in cache_text, fmt  # name
            assert "cache\\x1b[2J\\u202e\\u2066\\nFORGED-LINE/" in cache_text, fmt  # config value
        assert "0.8\\x1b]0;pwned\\x07\\nFORGED-LINE\\u202e\\u2066" in env_text, fmt  # env value


def test_the_table_keeps_its_own_colours_on_a_terminal(tmp_path):
    repo, _ = hostile_repo(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "SLURM_JOB_ID")}
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "doctor", "run", "--repo", str(repo),
                             *[a.format(repo=repo) for a in RUNS[0]]],
                            cwd=ROOT, env=env, stdout=slave, stderr=subprocess.PIPE)
    os.close(slave)
    data = read_terminal(master)
    os.close(master)
    proc.communicate(timeout=120)
    assert proc.returncode == 0, proc.returncode  # warnings only
    text = data.decode()
    colours = re.findall(r"\x1b\[[\d;]+m", text)
    assert "\x1b[1;33m" in colours and "\x1b[0m" in colours  # a warning is painted yellow
    assert text.count("\x1b") == len(colours)                 # and nothing else is an escape
    assert not RAW.search(re.sub(r"\x1b\[[\d;]+m|\r?\n", "", text))
    assert "\\x1b]0;pwned\\x07" in text and "\\x1b[2Jname" in text


def test_error_lines_escape_the_path_they_echo(tmp_path):
    for args in (("run", "--repo", str(tmp_path / f"no{TITLE}where{BIDI}")),
                 ("run", "--repo", str(tmp_path), "--config", str(tmp_path / f"c{CLEAR}.yaml")),
                 ("run", "--format", f"table{CLEAR}")):
        proc = run_doctor(*args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith("doctor: error: ")
        assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr
        assert not RAW.search(proc.stderr.rstrip("\n")), proc.stderr
        assert "\\x1b" in proc.stderr, proc.stderr


def test_doctor_docs_escapes_the_directory_it_names(tmp_path):
    """`doctor docs --check --out DIR` echoed DIR raw in its "is stale" line."""
    proc = run_doctor("docs", "--check", "--out", str(tmp_path / f"d{TITLE}{BIDI}"))
    assert proc.returncode == 1, proc.stderr
    assert not RAW.search(proc.stderr.rstrip("\n")), proc.stderr
    assert "\\x1b" in proc.stderr and "is stale" in proc.stderr, proc.stderr


def test_backticks_in_a_fix_command_cannot_close_the_markdown_code_block(tmp_path):
    """A PR comment renders the fix commands in a ```sh block; a value from the job
    script holding ``` (here an export's value) would end the block early and turn the
    rest of the command into Markdown. The fence is longer than any backtick run."""
    (tmp_path / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=1\nexport NCCL_ASYNC_ERROR_HANDLING='1```x'\n"
        "srun python train.py\n")
    proc = run_doctor("run", "--static", "--repo", str(tmp_path), "--sbatch",
                      str(tmp_path / "job.sbatch"), "--only", "nccl-env-deprecated",
                      "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    # the fix's block (its language, if any, follows the fence: `sh` for commands, none
    # for the lines of a job script to change)
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("```"))
    fence = lines[start].strip().rstrip("sh")
    assert len(fence) > 3
    body = lines[start + 1:lines.index(f"  {fence}", start + 1)]
    # the command is one a shell runs as written: the value stays quoted
    assert body == ["  export TORCH_NCCL_ASYNC_ERROR_HANDLING='1```x'"]
