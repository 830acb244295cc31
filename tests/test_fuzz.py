"""Fuzzing the real CLI (issue 16): hypothesis writes job scripts, YAML configs, settings
and file names with arbitrary bytes and control characters into a fresh repo and runs
`doctor run --static` on it, in one or two formats an example (drawn from all five), always
with `--json FILE` too.

What must hold for every input (`assert_sane`):
- the exit code is 0, 1, 2 or 3; stderr holds no traceback and no internal error, and
  no check crashed (an error status whose reason is a Python exception) or timed out;
- exit 2 is exactly one line on stderr: `doctor: error: ...`;
- no output (any format, stderr, the --json file) holds a raw control character: C0
  other than the newline, C1, or a bidi override/isolate;
- the machine formats parse (JSON, SARIF, JUnit XML) and the JSON report fits its schema;
- no output holds a planted secret;
- the user's files are unchanged, even when --output or --json names one of them.

Most examples run in-process through doctor.cli.main (about 15 ms a run instead of
0.3 s); `test_fuzzed_repos_through_a_child_process` runs a few as a user does.

The four readers are also fuzzed one by one (issue 27), with inputs a whole run would
stop early on: the shell reader, the YAML/config reader, the torch.save reader (torch's
layouts written from pickle opcodes, then damaged) and the report reader (`show`,
`diff`). No exception but the reader's own refusal, and no input over 10 s (HANG_S).

DOCTOR_FUZZ_EXAMPLES=N raises the number of examples of each test (N/60 times its
own; with N set, the readers' input counts and slowest times are printed at the end);
with CI=true the examples are derandomized and no example database is kept. A big run:
`DOCTOR_FUZZ_EXAMPLES=3600 pytest tests/test_fuzz.py -k reader --hypothesis-seed=27`.
"""
from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from typing import Optional

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, Phase, example, given, settings, strategies as st

from conftest import SCHEMA
import doctor
from doctor.cli import main
from doctor.registry import all_checks
from doctor.reports_cli import MAX_NESTING, _deeper_than

SOURCE = Path(doctor.__file__).resolve().parent.parent  # the doctor under test
CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def fuzz(examples: int) -> settings:
    """`examples` per test; DOCTOR_FUZZ_EXAMPLES=N scales them (N per in-process test)."""
    scale = int(os.environ.get("DOCTOR_FUZZ_EXAMPLES") or 60) / 60
    return settings(max_examples=max(examples, round(examples * scale)),
                    deadline=None, derandomize=CI, database=None if CI else settings().database,
                    suppress_health_check=list(HealthCheck), print_blob=not CI)


FORMATS = ("table", "json", "markdown", "sarif", "junit", "github")
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
CRASHED = re.compile(r"^\w+: .*\(at [\w.]+\.py:\d+\)$", re.S)  # runner.run_one's reason
VALIDATOR = jsonschema.validators.validator_for(SCHEMA)(SCHEMA)
SPECS = all_checks()
CHECK_IDS = [s.id for s in SPECS]
TAGS = sorted({t for s in SPECS for t in s.tags})
OPTIONS = {s.id: sorted(s.options) for s in SPECS if s.options}

# ---- text pieces ----------------------------------------------------------------------
NASTY = ["\x1b[2J", "\x1b]0;pwned\x07", "\x1b[31m", "\u202e", "\u2066", "\u2069", "\x9b",
         "\x85", "\r", "\t", "\x7f", "\x00", "\x08", "\ufeff", "é", "日本", "'", '"', "\\",
         "$(", "`", "${", "$", "<<", "#", ";", "&&", "|", "*", "?", "[", "]", "{", "}",
         "~", "%j", "=", ",", ":", "@", " ", "--", "-"]
KNOWN = ["train.py", "c.yaml", "data", "src", "python", "srun", "--config", "-m", "1", "0",
         "-1", "4", "gpu:4", "nan", "true", "false", "null", "/tmp", "..", "./", "*.py"]
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\n"), max_size=10)
PIECE = st.one_of(TEXT, st.sampled_from(NASTY), st.sampled_from(KNOWN))
WORD = st.lists(PIECE, min_size=1, max_size=4).map("".join)
QUOTED = st.tuples(st.sampled_from(["{}", "'{}'", '"{}"', "$'{}'", "{}\\"]), WORD).map(
    lambda t: t[0].format(t[1]))
NAME = st.one_of(st.sampled_from(
    ["NCCL_ASYNC_ERROR_HANDLING", "NCCL_BLOCKING_WAIT", "TORCH_NCCL_BLOCKING_WAIT",
     "NCCL_SOCKET_IFNAME", "PYTHONPATH", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF",
     "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "WANDB_MODE",
     "TOKENIZERS_PARALLELISM", "HF_HOME", "MIOPEN_USER_DB_PATH", "MASTER_PORT"]),
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True))
SBATCH_OPTS = ["nodes", "ntasks", "ntasks-per-node", "gpus", "gpus-per-node", "gres",
               "cpus-per-task", "output", "error", "open-mode", "time", "job-name", "mem",
               "partition", "array", "chdir", "export", "container-image"]
PREFIX = st.lists(st.sampled_from(["srun ", "srun -N2 --ntasks-per-node=4 ", "timeout 10 ",
                                   "nice -n 5 ", "env A=b ", "VAR=x ", "sshpass -p pw ",
                                   "exec ", "apptainer exec img.sif ", "time "]),
                  max_size=3).map("".join)
LAUNCH = st.sampled_from(["python", "python3", "python -u", "python -m pkg.train",
                          "torchrun --nproc_per_node=4", "accelerate launch", "deepspeed",
                          "bash", "srun python"])


@st.composite
def script_line(draw) -> str:
    kind = draw(st.integers(0, 11))
    if kind == 0:
        return f"#SBATCH --{draw(st.sampled_from(SBATCH_OPTS))}={draw(WORD)}"
    if kind == 1:
        return f"#SBATCH {draw(st.sampled_from(['-N', '-n', '-G', '-o', '-c']))} {draw(WORD)}"
    if kind == 2:
        return f"{draw(st.sampled_from(['export ', '', 'declare -x ', 'local ']))}" \
               f"{draw(NAME)}={draw(QUOTED)}"
    if kind == 3:
        entry = draw(st.one_of(st.just("train.py"), WORD))
        args = draw(st.lists(st.one_of(st.just("--config c.yaml"), QUOTED,
                                       st.tuples(WORD, WORD).map("=".join)), max_size=3))
        return " ".join([draw(PREFIX) + draw(LAUNCH), entry, *args])
    if kind == 4:
        return (f"{draw(PREFIX)}rsync -a{draw(st.sampled_from(['', 'vz', 'r']))} "
                f"--exclude{draw(st.sampled_from([' ', '=']))}{draw(QUOTED)} "
                f"{draw(st.sampled_from(['./', 'src/', '.']))} {draw(WORD)}")
    if kind == 5:
        delim = draw(st.sampled_from(["EOF", "'EOF'", '"PY"', "-EOF", "END"]))
        body = draw(st.lists(st.one_of(WORD, TEXT), max_size=4))
        end = [] if draw(st.booleans()) and draw(st.booleans()) else [delim.strip("'\"-")]
        head = draw(st.sampled_from(["cat <<{} > out.txt", "python - <<{}", "srun bash <<{}"]))
        return "\n".join([head.format(delim), *body, *end])
    if kind == 6:
        return draw(st.sampled_from(["if [ -f x ]; then", "fi", "for i in 1 2; do", "done",
                                     "{", "}", "(", ")", "case $x in", "esac", "f() {",
                                     "set -euo pipefail", "wait", "exit $?", "cd ..",
                                     "source env.sh", ". ./env.sh", "trap 'echo' EXIT"]))
    if kind == 7:
        return f"# {draw(WORD)}"
    if kind == 8:
        return f"{draw(script_line())} \\"  # a continued line
    if kind == 9:
        return f"{draw(script_line())} {draw(st.sampled_from(['&&', '||', '|', ';', '&']))} " \
               f"{draw(script_line())}"
    return draw(st.text(st.characters(codec="utf-8"), max_size=40))


@st.composite
def encoded(draw, text: str) -> bytes:
    """The text's bytes as a careless editor or a hostile user leaves them."""
    how = draw(st.sampled_from(["utf-8"] * 4 + ["crlf", "utf-16", "bom", "bytes", "latin-1"]))
    if how == "crlf":
        return text.replace("\n", "\r\n").encode()
    if how == "utf-16":
        return text.encode("utf-16")
    if how == "bom":
        return b"\xef\xbb\xbf" + text.encode()
    if how == "latin-1":
        return text.encode("latin-1", "replace")
    data = text.encode()
    if how == "bytes":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=8)) + data[at:]
    return data


@st.composite
def job_script(draw, extra: tuple = ()) -> str:
    lines = draw(st.lists(script_line(), max_size=12))
    for line in extra:  # planted lines, somewhere in the script
        lines.insert(draw(st.integers(0, len(lines))), line)
    head = draw(st.sampled_from(["#!/bin/bash\n#SBATCH --nodes=1\n", "#!/bin/bash\n", "",
                                 "#!/usr/bin/env bash\n#SBATCH -N 1\n#SBATCH --gpus-per-node=4\n"]))
    return head + "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))


# ---- YAML -------------------------------------------------------------------------------
CONFIG_KEYS = st.one_of(st.sampled_from(
    ["num_workers", "persistent_workers", "prefetch_factor", "pin_memory", "batch_size",
     "pin_memory_device", "multiprocessing_context", "timeout", "cache_dir", "data_dir",
     "compile", "torch_compile", "devices", "gpus", "num_nodes", "nodes", "strategy",
     "trainer", "data", "dataloader", "train_dataloader", "model", "defaults", "backend",
     "resume_from_checkpoint", "ckpt_path", "world_size", "_target_", "accelerator"]), TEXT)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(),
                   TEXT, WORD, st.sampled_from(
                       ["yes", "no", "on", "off", "0x1F", "1e3", "~", ".nan", "-.inf", "0o17",
                        "2026-01-01", "12:30:00", "ddp", "gpu", "auto", "cuda:0", "-1"]))
TREE = st.recursive(SCALAR, lambda kids: st.one_of(
    st.lists(kids, max_size=4), st.dictionaries(CONFIG_KEYS, kids, max_size=5)), max_leaves=20)
RAW_YAML = st.sampled_from([
    "base: &b {num_workers: 0, persistent_workers: true}\ntrain:\n  <<: *b\n  lr: 2\nval: *b\n",
    "a: &a [x, y]\nb: [*a, *a, *a]\nc: *nope\n",
    "x: !!python/object/apply:os.system ['touch pwned']\n",
    "x: !!binary aGVsbG8=\ny: !!set {a, b}\nz: !!timestamp 2026-01-01\nw: !custom 3\n",
    "num_workers: 1\nnum_workers: 2\n",
    "data:\n\tnum_workers: 2\n",
    "? [a, b]\n: 1\n? {c: d}\n: 2\n",
    "---\na: 1\n---\nb: 2\n",
    "%YAML 1.1\n---\nnum_workers: 0x10\n",
    "[" * 300 + "]" * 300 + "\n",
    "{" * 60 + "}" * 60 + "\n",
    "dataloader:\n  num_workers: 0\n  persistent_workers: true\n  prefetch_factor: 2\n",
    "trainer:\n  devices: 8\n  num_nodes: 2\ndata:\n  num_workers: 64\ncompile: true\n",
    "defaults:\n  - model: big\n  - _self_\n",
    "'unterminated: [\n",
    "",
    "~\n",
    "- 1\n- 2\n",
])


@st.composite
def yaml_config(draw) -> bytes:
    kind = draw(st.integers(0, 3))
    if kind == 0:
        text = yaml.safe_dump(draw(TREE), allow_unicode=draw(st.booleans()))
    elif kind == 1:
        text = draw(RAW_YAML)
    elif kind == 2:  # a raw fragment with a generated one around it
        text = draw(RAW_YAML) + yaml.safe_dump({"extra": draw(TREE)}, allow_unicode=True)
    else:
        text = "\n".join(f"{k}: {v}" for k, v in draw(st.lists(st.tuples(WORD, WORD),
                                                               max_size=6)))
    return draw(encoded(text))


# ---- settings ---------------------------------------------------------------------------
SAFE_GLOB = st.one_of(st.sampled_from(["", "*.yaml", "**/*.yaml", "c.yaml", "[", "../*.yaml",
                                       "{REPO}/*.yaml", "{REPO}/nowhere/**/*.yaml", "~/x",
                                       "conf/\x1b[2J*.yaml", "\u202e*.yaml"]),
                      st.from_regex(r"[a-z*?.\[\]/]{0,10}", fullmatch=True).filter(
                          lambda g: not g.startswith("/")))
ANY = st.one_of(TREE, SCALAR)
NUMBER = st.one_of(st.integers(-2**64, 2**64), st.floats(), st.sampled_from([0, -1, 1, 2**31]))


@st.composite
def settings_doc(draw) -> dict:
    """A doctor.yaml: the known keys (doctor/settings.py SCHEMA), mostly with values of the
    right type but any range, sometimes with anything at all."""
    typed = draw(st.booleans())  # half the files hold only values of the right type

    num = st.integers(1, 16) if typed else NUMBER

    def value(right):
        return draw(right if typed else st.one_of(right, right, right, ANY))

    doc: dict = {}
    keys = draw(st.lists(st.sampled_from(
        ["select", "ignore", "severity", "options", "configs", "caches", "torch_version",
         "site", "smoke", "waivers"] + ([] if typed else ["bogus_key"])), unique=True,
        max_size=6))
    ids = st.one_of(st.sampled_from(CHECK_IDS + TAGS + ["all"]), WORD)
    for key in keys:
        if key in ("select", "ignore"):
            doc[key] = value(st.lists(ids, max_size=3))
        elif key == "severity":
            doc[key] = value(st.dictionaries(ids, st.one_of(st.sampled_from(
                ["error", "warning", "info", "ERROR", "fatal"]), ANY), max_size=2))
        elif key == "options":
            cid = draw(st.sampled_from(sorted(OPTIONS) + ["config-not-found"]))
            names = st.sampled_from(OPTIONS.get(cid, []) + ["nope"])
            doc[key] = value(st.just({cid: draw(st.dictionaries(
                names, num if typed else st.one_of(NUMBER, ANY), max_size=3))}))
        elif key in ("configs", "caches"):
            doc[key] = value(st.lists(SAFE_GLOB, max_size=3))
        elif key == "torch_version":
            doc[key] = value(st.sampled_from(["2.1", "2.4.0+rocm6.1", "2.5.1"]) if typed else
                             st.one_of(st.sampled_from(["banana", "99.99", "1", ""]), WORD))
        elif key == "site":
            doc[key] = value(st.fixed_dictionaries({}, optional={
                "shared_paths": st.lists(WORD, max_size=2),
                "local_paths": st.lists(WORD, max_size=2),
                "compute_network": st.booleans(), "gpus_per_node": num, "name": WORD}))
        elif key == "smoke":
            doc[key] = value(st.fixed_dictionaries({}, optional={
                "model": WORD, "input_shape": st.lists(num, max_size=3), "timeout_s": num,
                "world_size": num, "backend": st.sampled_from(["gloo", "nccl", "evil", ""])}))
        elif key == "waivers":
            doc[key] = value(st.lists(st.fixed_dictionaries({}, optional={
                "check": ids, "reason": WORD,
                "expires": st.one_of(st.dates().map(str), st.dates(), WORD)}), max_size=2))
        else:
            doc[key] = draw(ANY)
    return doc


# ---- file names -------------------------------------------------------------------------
NAME_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1,
                    max_size=12)
FILE_NAME = st.one_of(
    NAME_TEXT, st.lists(st.one_of(st.sampled_from(NASTY[:13] + ["\n", "-rf ", "--help"]),
                                  NAME_TEXT), min_size=1, max_size=4).map("".join),
    st.binary(min_size=1, max_size=12).map(os.fsdecode),  # invalid UTF-8: surrogateescape
).map(lambda n: n.replace("/", "_").replace("\x00", "_")).filter(
    lambda n: n not in (".", "..") and len(os.fsencode(n)) <= 200)


# ---- running the CLI --------------------------------------------------------------------
class Run:
    def __init__(self, code: int, out: str, err: str, files: dict):
        self.code, self.out, self.err, self.files = code, out, err, files


MEMORY = 2 << 30  # what one run may add to the address space: a bomb fails, not the machine


def _limit_memory(extra: int) -> tuple:
    """Cap this process's address space at what it uses now plus `extra`; the old limit."""
    old = resource.getrlimit(resource.RLIMIT_AS)
    cap = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    cap += extra
    hard = old[1]
    resource.setrlimit(resource.RLIMIT_AS, (cap if hard == resource.RLIM_INFINITY
                                            else min(cap, hard), hard))
    return old


@contextlib.contextmanager
def _clean_process(cwd: Path, env: dict):
    """cwd, os.environ without Slurm's and with env, and a memory cap, for one in-process
    run."""
    old_env, old_cwd = dict(os.environ), os.getcwd()
    old_limit = _limit_memory(MEMORY)
    for k in [k for k in os.environ if k.startswith("SLURM") or k == "DOCTOR_DEBUG"]:
        del os.environ[k]
    os.environ.update(env)
    try:
        os.chdir(cwd)
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, old_limit)
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)


def run_inprocess(argv: list, cwd: Path, env: dict) -> tuple:
    """(exit code, stdout, stderr) of doctor.cli.main(argv); the streams encode strictly,
    as a UTF-8 terminal's do."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="")
    code: object = 0
    with _clean_process(cwd, env), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code
    texts = []
    for stream in (out, err):
        stream.flush()
        texts.append(stream.buffer.getvalue().decode("utf-8"))  # type: ignore[attr-defined]
    return (0 if code is None else code), texts[0], texts[1]


def run_child(argv: list, cwd: Path, env: dict) -> tuple:
    full = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")
            and k != "DOCTOR_DEBUG"}
    full.update(env, PYTHONPATH=str(SOURCE))
    proc = subprocess.run([sys.executable, "-m", "doctor", *argv], cwd=cwd, env=full,
                          capture_output=True, timeout=120,
                          preexec_fn=lambda: _limit_memory(MEMORY))  # exec starts it afresh
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8")


def snapshot(repo: Path) -> dict:
    return {p: p.read_bytes() for p in repo.rglob("*")
            if ".git" not in p.relative_to(repo).parts and p.is_file() and not p.is_symlink()}


class Repo:
    """A fresh repository directory for one example, removed afterwards."""

    def __init__(self, base: Path):
        self.top = Path(tempfile.mkdtemp(dir=base))
        self.path = self.top / "repo"
        self.path.mkdir()
        self.outdir = self.top / "out"
        self.outdir.mkdir()

    def write(self, name: str, data: bytes) -> Path:
        p = self.path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        return p

    def git(self) -> None:
        for cmd in (["init", "-q"], ["add", "-A"]):  # tracked is enough: no commit
            subprocess.run(["git", *cmd], cwd=self.path, check=True, capture_output=True)

    def close(self) -> None:
        shutil.rmtree(self.top, ignore_errors=True)


def check_repo(repo: Repo, args: list, *, secrets: tuple = (), clobber: Optional[Path] = None,
               env: Optional[dict] = None, child: bool = False,
               formats: tuple = FORMATS) -> None:
    """Run `doctor run --static --repo REPO ARGS` in each format and assert_sane on each;
    with `clobber`, the first run's --json and the second's --output name that input."""
    before = snapshot(repo.path)
    for i, fmt in enumerate(formats):
        json_file = repo.outdir / f"r{i}.json"
        argv = ["run", "--static", "--repo", str(repo.path), *args, "--format", fmt,
                "--json", str(clobber if clobber and i == 0 else json_file)]
        if clobber is not None and i == 1:
            argv += ["--output", str(clobber)]
        code, out, err = (run_child if child else run_inprocess)(argv, repo.top, env or {})
        files = {str(json_file): json_file.read_text("utf-8")} if json_file.exists() else {}
        assert_sane(fmt, argv, Run(code, out, err, files), secrets)
        after = snapshot(repo.path)
        changed = sorted(str(p.relative_to(repo.path)) for p in set(before) | set(after)
                         if before.get(p) != after.get(p))
        assert not changed, f"[user file changed] {changed}: argv={argv!r}"


def assert_sane(fmt: str, argv: list, run: Run, secrets: tuple) -> None:
    what = f"argv={argv!r}\nexit {run.code}\nstderr={run.err!r}\nstdout[:3000]={run.out[:3000]!r}"
    assert run.code in (0, 1, 2, 3), f"[exit code]\n{what}"
    assert "Traceback" not in run.err and "internal error" not in run.err, \
        f"[internal error]\n{what}"
    if run.code == 2:
        assert run.err.startswith("doctor: error: ") and run.err.count("\n") == 1 \
            and run.err.endswith("\n"), f"[exit 2 is not one line]\n{what}"
    for name, text in [("stdout", run.out), ("stderr", run.err), *run.files.items()]:
        bad = RAW_CONTROL.search(text)
        assert bad is None, f"[control character] raw {bad.group()!r} in {name} " \
                            f"(...{text[max(0, bad.start() - 80):bad.end() + 40]!r}...)\n{what}"
        for secret in secrets:
            assert secret not in text, f"[secret] planted secret {secret!r} in {name}\n{what}"
    if run.code == 2:
        return
    try:
        docs = [json.loads(t) for t in run.files.values()]
        if fmt == "json":
            docs.append(json.loads(run.out))
        elif fmt == "sarif":
            json.loads(run.out)
        elif fmt == "junit":
            ET.fromstring(run.out.encode("utf-8"))
    except (ValueError, ET.ParseError) as exc:
        raise AssertionError(f"[unparsable {fmt}] {exc}\n{what}") from None
    for doc in docs:
        errors = sorted(VALIDATOR.iter_errors(doc), key=str)
        assert not errors, f"[schema] JSON report breaks its schema: {errors[0].message}\n{what}"
        crashed = [(r["id"], r["reason"]) for r in doc["results"]
                   if r["status"] == "error" and CRASHED.match(r["reason"] or "")]
        assert not crashed, f"[check crashed] {crashed}\n{what}"
        late = [r["id"] for r in doc["results"] if (r["reason"] or "").startswith("timed out")]
        assert not late, f"[check timed out] {late} on a small input\n{what}"


# ---- the tests --------------------------------------------------------------------------
@fuzz(100)
@given(script=job_script(), fmt=st.sampled_from(FORMATS), data=st.data())
def test_fuzzed_job_scripts(tmp_path_factory, script, fmt, data):
    """Job scripts of directives, exports, launches behind prefixes, rsync, heredocs and
    raw text, in any encoding; found by the doctor or named by --sbatch."""
    repo = Repo(tmp_path_factory.getbasetemp())
    try:
        repo.write("train.py", b"import sys\nsys.exit(0)\n")
        repo.write("c.yaml", b"data:\n  num_workers: 4\n")
        path = repo.write(data.draw(st.sampled_from(["job.sbatch", "slurm/train.sh", "run"])),
                          data.draw(encoded(script)))
        if data.draw(st.booleans()):
            repo.write("src/pkg/data/x.py", b"")
            repo.git()
        explicit = data.draw(st.booleans())
        check_repo(repo, ["--sbatch", str(path)] if explicit else [], formats=(fmt,))
    finally:
        repo.close()


@fuzz(80)
@given(config=yaml_config(), script=job_script(extra=("srun python train.py --config c.yaml",)),
       fmt=st.sampled_from(FORMATS), clobber=st.sampled_from([False, False, False, True]))
@example(config=b"{" * 60 + b"}" * 60, script="#!/bin/bash\n#SBATCH -N 1\n", fmt="table",
         clobber=False)  # found by this test: each mapping-as-key doubles the key's size
def test_fuzzed_configs(tmp_path_factory, config, script, fmt, clobber):
    """YAML configs: generated trees of DataLoader-ish keys and odd scalars, hostile raw
    YAML (tags, aliases, merge keys, nesting), any bytes; sometimes --json/--output name
    the config itself."""
    repo = Repo(tmp_path_factory.getbasetemp())
    try:
        repo.write("train.py", b"import yaml\nfrom torch.utils.data import DataLoader\n")
        repo.write("job.sbatch", script.encode())
        cfg = repo.write("c.yaml", config)
        check_repo(repo, ["--config", str(cfg)], clobber=cfg if clobber else None,
                   formats=(fmt,) if not clobber else ("table", fmt))
    finally:
        repo.close()


@fuzz(80)
@given(doc=settings_doc(), fmt=st.sampled_from(FORMATS), data=st.data())
def test_fuzzed_settings(tmp_path_factory, doc, fmt, data):
    """doctor.yaml with the known keys and any values, with --only/--skip/--torch-version
    beside it; sometimes --json/--output name the settings file."""
    repo = Repo(tmp_path_factory.getbasetemp())
    try:
        repo.write("job.sbatch", b"#!/bin/bash\n#SBATCH -N 1\nsrun python train.py\n")
        repo.write("c.yaml", b"num_workers: 2\n")
        text = yaml.safe_dump(doc, allow_unicode=True).replace("{REPO}", str(repo.path))
        settings_file = repo.write("doctor.yaml", data.draw(encoded(text)) if data.draw(
            st.integers(0, 3)) == 3 else text.encode())
        args = []
        if data.draw(st.booleans()):
            args += ["--settings", str(settings_file)]
        for opt, values in (("--only", CHECK_IDS + TAGS), ("--skip", CHECK_IDS + TAGS),
                            ("--torch-version", ["2.1", "banana", "2.4.0+rocm6.1"]),
                            ("--fail-on", ["error", "warning"])):
            if data.draw(st.integers(0, 3)) == 0:
                args += [opt, data.draw(st.sampled_from(values)) if data.draw(st.booleans())
                         or opt == "--fail-on" else data.draw(WORD)]
        clobber = data.draw(st.sampled_from([None, None, None, None, None, settings_file]))
        check_repo(repo, args, clobber=clobber,
                   formats=(fmt,) if clobber is None else ("table", fmt))
    finally:
        repo.close()


@fuzz(60)
@given(names=st.lists(FILE_NAME, min_size=3, max_size=3, unique=True),
       fmt=st.sampled_from(FORMATS[1:]),
       odd=st.sets(st.sampled_from(["loop", "dangling", "fifo", "dir", "glob"])), data=st.data())
def test_fuzzed_file_names(tmp_path_factory, names, fmt, odd, data):
    """Names land in findings: a CRLF job script, a config it names that does not exist,
    a config with a DataLoader conflict, a directory holding Python code; beside them
    entries that are not files (a symlink loop, a dangling link, a FIFO, a directory)
    named like configs and job scripts, and a `configs:` glob that meets them."""
    repo = Repo(tmp_path_factory.getbasetemp())
    try:
        missing = names[1] + ".yaml"
        script = (f"#!/bin/bash\r\n#SBATCH --nodes=1\r\nsrun python {names[2]}/train.py "
                  f"--config {json.dumps(missing)}\r\n")
        path = repo.write(names[0], os.fsencode(script) if data.draw(st.booleans())
                          else script.replace("\r", "").encode("utf-8", "surrogateescape"))
        cfg = repo.write(names[1] + ".yml",
                         b"num_workers: 0\npersistent_workers: true\nprefetch_factor: 2\n")
        repo.write(f"{names[2]}/train.py", b"import sys\ntry:\n    main()\nexcept Exception:\n"
                                           b"    sys.exit(0)\n")
        for kind in sorted(odd):
            at = repo.path / f"{names[1]}-{kind}.yaml"
            if kind == "loop":
                at.symlink_to(at.name)
            elif kind == "dangling":
                (repo.path / f"{names[0]}.sbatch").symlink_to("/nonexistent/job.sbatch")
                at.symlink_to("nowhere.yaml")
            elif kind == "fifo":
                os.mkfifo(at)
                os.mkfifo(repo.path / "job-fifo.sbatch")
            elif kind == "dir":
                at.mkdir()
            else:
                repo.write("doctor.yaml", b"configs: ['*.yaml', '*/*.y*ml']\n")
        if data.draw(st.booleans()):
            repo.git()
        check_repo(repo, ["--config", str(cfg)] +
                   (["--sbatch", str(path)] if data.draw(st.booleans()) else []),
                   formats=("table", fmt))
    finally:
        repo.close()


TOKEN = st.from_regex(r"Zq[A-Za-z0-9]{18}", fullmatch=True)  # never in a report by chance
PLANTS = [
    "export {name}={tok}", "export {name}='{tok}'", '{name}="{tok}"; export {name}',
    "export PYTHONPATH=https://u:{tok}@host/lib:$PYTHONPATH",
    "export PIP_INDEX_URL=https://__token__:{tok}@pypi.example.com/simple",
    "export PYTORCH_HIP_ALLOC_CONF=https://u:{tok}@host/x",
    "export {name}={tok}\nexport PYTORCH_HIP_ALLOC_CONF=$" + "{name}",
    "export NCCL_ASYNC_ERROR_HANDLING=s3://KEY:{tok}@bucket",
    "rsync -a --exclude data ./ rsync://user:{tok}@host/mod/",
    "timeout 60 rsync -a --exclude data ./ https://bob:{tok}@host/x/",
    "sshpass -p {tok} rsync -a --exclude data ./ host:/x/",
    'ssh -o ProxyCommand="curl -u bob:{tok} http://proxy" host true',
    "curl -u bob:{tok} https://example.com/x",
    "srun python train.py --config https://u:{tok}@host/c.yaml",
]
SECRET_NAMES = st.sampled_from(["HF_TOKEN", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY",
                                "GITHUB_TOKEN", "DB_PASSWORD", "MY_CREDENTIALS"])


@fuzz(50)
@given(plants=st.lists(st.tuples(st.sampled_from(PLANTS), TOKEN, SECRET_NAMES), min_size=1,
                       max_size=4),
       decoy=st.sampled_from(["pass", "error", "false", "warning", "skip", "true", "null"]),
       fmt=st.sampled_from(FORMATS[1:]), data=st.data())
def test_planted_secrets_never_reported(tmp_path_factory, plants, decoy, fmt, data):
    """Secrets where users put them; and values of secret-named variables that are also
    the report's own words (TOKENIZERS_PARALLELISM=false, a token that is `error`)."""
    lines = tuple(p.format(tok=tok, name=name) for p, tok, name in plants)
    lines += (f"export TOKENIZERS_PARALLELISM={decoy}", f"export GH_TOKEN={decoy}")
    script = data.draw(job_script(extra=lines))
    cfg_tok = data.draw(TOKEN)
    repo = Repo(tmp_path_factory.getbasetemp())
    try:
        repo.write("job.sbatch", script.encode())
        repo.write("train.py", b"import torch\n")
        repo.write("src/pkg/data/x.py", b"")
        cfg = repo.write("c.yaml", f"data:\n  num_workers: 0\n  persistent_workers: true\n"
                                   f"  cache_dir: s3://KEY:{cfg_tok}@bucket/x\n"
                                   f"  data_dir: https://u:{cfg_tok}@host/x\n".encode())
        repo.git()
        check_repo(repo, ["--config", str(cfg)], secrets=tuple(t for _, t, _ in plants) +
                   (cfg_tok,), formats=("table", fmt))
    finally:
        repo.close()


@fuzz(3)
@given(script=job_script(extra=("export HF_TOKEN=ZqChildSecret0123456789",)),
       config=yaml_config(), name=FILE_NAME)
def test_fuzzed_repos_through_a_child_process(tmp_path_factory, script, config, name):
    """A few examples exactly as a user runs the doctor: `python -m doctor`."""
    repo = Repo(tmp_path_factory.getbasetemp())
    try:
        repo.write(name, script.encode())
        cfg = repo.write("c.yaml", config)
        check_repo(repo, ["--config", str(cfg), "--sbatch", str(repo.path / name)],
                   secrets=("ZqChildSecret0123456789", "ZqLoginSecret0123456789"),
                   env={"WANDB_API_KEY": "ZqLoginSecret0123456789"}, child=True,
                   formats=("table",))
    finally:
        repo.close()


# ---- the readers, one by one (issue 27) ---------------------------------------------------
# Each reader gets its input directly, without the rest of a run, so that an example costs
# milliseconds and the inputs can be hostile in ways a whole run would stop early on:
# the shell reader (doctor/job/shell.py, sbatch.py), the YAML/config reader
# (doctor/job/configs.py), the torch.save reader (doctor/scanners/torchsave.py and the
# cache scanner's fast path) and the report reader (`doctor show` / `doctor diff`).
# A crash is any exception but the reader's own "this is not one" (InputError where the
# reader documents it); a hang is an input that keeps a reader past HANG_S.
HANG_S = 10.0
SLOWEST: dict = {}   # reader -> (inputs, slowest seconds): printed after a big run


class Hang(BaseException):   # not an Exception: a reader's `except Exception` cannot eat it
    """A reader ran past HANG_S on one input."""


@contextlib.contextmanager
def bounded(reader: str):
    """Run one reader on one input: Hang past HANG_S, and a memory cap (a bomb fails)."""
    def ring(signum, frame):
        raise Hang(f"{reader} ran past {HANG_S:g} s on one input")
    old_handler = signal.signal(signal.SIGALRM, ring)
    old_limit = _limit_memory(MEMORY)
    start = time.monotonic()
    signal.setitimer(signal.ITIMER_REAL, HANG_S)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        resource.setrlimit(resource.RLIMIT_AS, old_limit)
        n, slowest = SLOWEST.get(reader, (0, 0.0))
        SLOWEST[reader] = (n + 1, max(slowest, time.monotonic() - start))


def fuzz_reader(examples: int) -> settings:
    """fuzz(examples) without hypothesis's explain phase: it traces every line of a
    failing example, which made a reader's 0.1 s input pass HANG_S."""
    return settings(fuzz(examples), phases=[p for p in Phase if p != Phase.explain])


@atexit.register
def _say_slowest() -> None:
    if os.environ.get("DOCTOR_FUZZ_EXAMPLES") and SLOWEST:
        sys.__stderr__.write("fuzzed readers: " + "; ".join(
            f"{r}: {n} inputs, slowest {s:.3f} s" for r, (n, s) in sorted(SLOWEST.items()))
            + "\n")


@st.composite
def amplified(draw, piece) -> str:
    """A small piece repeated up to thousands of times: what finds the quadratic loop
    and the recursion that small examples never reach."""
    return draw(piece) * draw(st.sampled_from([1, 2, 10, 100, 1000, 5000]))


@st.composite
def mutated(draw, data: bytes) -> bytes:
    """The bytes after a few of: flipped bytes, a cut, an insertion, a repeated slice."""
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.integers(0, 3))
        at = draw(st.integers(0, len(data)))
        if how == 0 and data:
            at = min(at, len(data) - 1)
            data = data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:]
        elif how == 1:
            data = data[:at]
        elif how == 2:
            data = data[:at] + draw(st.binary(min_size=1, max_size=16)) + data[at:]
        else:
            end = draw(st.integers(at, min(len(data), at + 64)))
            data = data[:end] + data[at:end] * draw(st.integers(1, 50)) + data[end:]
    return data


# -- the shell reader
SHELL_TOKENS = ["$(", ")", "${", "}", "`", "'", '"', "\\", "\n", "\r\n", "\\\n", "<<", "EOF",
                "<<-", "<<'EOF'", "<<<", "#", ";", "&&", "||", "|", "&", "$", "${A:-",
                "${A#", "${!", "${#", "$((", "))", "(", " ", "\t", "=", "export ", "srun ",
                "python ", "-c ", "source ", ". ", "x", "$A", "$SLURM_JOB_ID", "%j", "~",
                "#SBATCH ", "#SBATCH --nodes=", "--", "-N", "then ", "do ", "case ", "in ",
                "esac", "function ", "f() {", "{", "!", "exec ", "env -S ", "timeout 1 "]
SHELL_TEXT = st.one_of(
    job_script(),
    st.lists(st.one_of(st.sampled_from(SHELL_TOKENS), TEXT), max_size=80).map("".join),
    amplified(st.lists(st.sampled_from(SHELL_TOKENS), min_size=1, max_size=6).map("".join)))


@fuzz_reader(200)
@given(text=SHELL_TEXT, data=st.data())
def test_shell_reader(tmp_path_factory, text, data):
    """A job script's bytes through the shell reader as the job model uses it: the
    script, its #SBATCH lines, each command's words expanded with an environment, the
    command each one really runs. No exception at all: every text is a script."""
    from doctor.errors import InputError
    from doctor.job.sbatch import as_submitted, load_sbatch
    from doctor.job.shell import command_argv, effective_command, expand, unquote

    raw = data.draw(encoded(text))
    path = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp())) / "job.sbatch"
    path.write_bytes(raw)
    env = {"A": "1", "HOME": "/home/u", "SLURM_JOB_ID": "7", "X": "$(rm -rf /)"}
    in_job = data.draw(st.booleans())
    with bounded("shell"):
        try:
            script = load_sbatch(path, "job.sbatch")
        except InputError:   # too large, binary: the reader's own refusal
            return
        as_submitted(script, ["--nodes=2", "-G", "4"], {"SBATCH_TIMELIMIT": "1:00"})
        for cmd in script.commands:
            argv = [unquote(w) for w in cmd.words]
            for word in cmd.words:
                expand(word, env.get, in_job=in_job)
            effective_command(argv)
            command_argv(argv, builtin=True)
    shutil.rmtree(path.parent)


# -- the YAML/config reader
RAW_YAML_PIECES = ["[", "{", "a: ", "- ", "&a ", "*a ", "? ", ": ", "!!python/object:x ",
                   "<<: *a\n", "'", '"', "\n", "  ", "\t", "#", "---\n", "...\n", "%YAML 1.1\n",
                   "|\n", ">\n", "x", "1", ", ", "]", "}", "!!binary ", "~", "\\"]
YAML_INPUT = st.one_of(
    yaml_config(),
    amplified(st.sampled_from(RAW_YAML_PIECES)).map(str.encode),
    amplified(st.lists(st.sampled_from(RAW_YAML_PIECES), min_size=1, max_size=8).map(
        "".join)).map(str.encode),
    st.binary(max_size=200))


@fuzz_reader(200)
@given(raw=YAML_INPUT)
@example(raw=b"1" * 5000)   # found by this test: int() past 4,300 digits raised ValueError
def test_yaml_config_reader(tmp_path_factory, raw):
    """Config bytes through the config reader: parsed (or one InputError line), then
    every mapping listed and each key located as the checks do."""
    from doctor.errors import InputError
    from doctor.job.configs import ConfigFile, is_unresolved, keypath, load_yaml_text

    path = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp())) / "c.yaml"
    path.write_bytes(raw)
    with bounded("yaml"):
        try:
            data = load_yaml_text(path, "config file")
        except InputError as exc:
            assert str(exc).count("\n") == 0, f"[not one line] {exc!r}"
            return
        cfg = ConfigFile(path, "c.yaml", data)
        for at, mapping in cfg.mappings():
            for key, value in mapping.items():
                cfg.location(mapping, key)
                keypath(at + (key,))
                is_unresolved(value)
    shutil.rmtree(path.parent)


# -- the torch.save reader: torch's own layouts, written from pickle opcodes here (the
# test never imports torch), then damaged
def _p_str(s: str) -> bytes:
    b = s.encode("utf-8", "surrogatepass")
    return b"X" + len(b).to_bytes(4, "little") + b


def _p_int(n: int) -> bytes:
    if 0 <= n < 256:
        return b"K" + bytes([n])
    if -2**31 <= n < 2**31:
        return b"J" + n.to_bytes(4, "little", signed=True)
    b = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(b)]) + b


def _p_global(qualname: str) -> bytes:
    module, _, name = qualname.rpartition(".")
    return b"c" + f"{module}\n{name}\n".encode()


def _p_tuple(items: list) -> bytes:
    return b"(" + b"".join(items) + b"t"


ODICT = _p_global("collections.OrderedDict") + b")R"
STORAGES = ["torch.FloatStorage", "torch.HalfStorage", "torch.LongStorage",
            "torch.BFloat16Storage", "torch.UntypedStorage", "torch.cuda.FloatStorage"]
LOCATIONS = ["cpu", "cpu", "cuda:0", "cuda:1", "meta", "hip:0", "", "\x1b[2J"]
UNSAFE = ["posix.system", "builtins.eval", "argparse.Namespace", "numpy.core.multiarray.scalar",
          "__main__.Net", "torch._utils._rebuild_tensor_v2x", "a" * 300 + ".b"]
SHAPE = st.lists(st.integers(0, 2**40), max_size=4)
KEY = st.one_of(st.sampled_from(["weight", "bias", "model.fc.weight", "state_dict", "model",
                                 "optimizer", "epoch", ""]), TEXT)


@st.composite
def torch_object(draw, storages: list, depth: int = 0) -> bytes:
    """The pickle opcodes of one object as torch.save writes it: tensors (each naming a
    storage by persistent id), Parameters, state_dicts, dicts, lists, tuples, scalars,
    and now and then a global outside torch's weights_only set."""
    kind = draw(st.integers(0, 9 if depth < 4 else 3))
    if kind == 0:   # a tensor: _rebuild_tensor_v2(storage, offset, size, stride, ...)
        shape = draw(SHAPE)
        key = str(len(storages))
        storages.append(key)
        pid = _p_tuple([_p_str("storage"), _p_global(draw(st.sampled_from(STORAGES))),
                        _p_str(key), _p_str(draw(st.sampled_from(LOCATIONS))),
                        _p_int(draw(st.integers(0, 2**40)))]) + b"Q"
        tensor = _p_global("torch._utils._rebuild_tensor_v2") + _p_tuple(
            [pid, _p_int(0), _p_tuple([_p_int(n) for n in shape]),
             _p_tuple([_p_int(1) for _ in shape]), b"\x89", ODICT]) + b"R"
        if draw(st.booleans()):   # a Parameter
            tensor = _p_global("torch._utils._rebuild_parameter") + _p_tuple(
                [tensor, b"\x88", ODICT]) + b"R"
        return tensor
    if kind == 1:
        return _p_int(draw(st.integers(-2**70, 2**70)))
    if kind == 2:
        return _p_str(draw(KEY))
    if kind == 3:
        return draw(st.sampled_from([b"N", b"\x88", b"\x89", b"G" + b"\x7f\xf8" + b"\0" * 6]))
    if kind == 4:   # a global outside the allowlist, called
        return _p_global(draw(st.sampled_from(UNSAFE))) + _p_tuple(
            [draw(torch_object(storages, depth + 1))]) + b"R"
    items = draw(st.lists(st.tuples(KEY, torch_object(storages, depth + 1)), max_size=5))
    if kind in (5, 6):   # a state_dict, an OrderedDict filled by SETITEMS
        return ODICT + b"(" + b"".join(_p_str(k) + v for k, v in items) + b"u"
    if kind == 7:
        return b"}(" + b"".join(_p_str(k) + v for k, v in items) + b"u"
    if kind == 8:
        return b"](" + b"".join(v for _, v in items) + b"e"
    return _p_tuple([v for _, v in items])


def _p_memoized(body: bytes, draw) -> bytes:
    """Now and then the object twice, through the memo (BINPUT, BINGET), as torch's
    pickles hold a storage or a key that several tensors share."""
    if not draw(st.booleans()):
        return body
    return b"(" + body + b"q\x00h\x00t"


@st.composite
def torch_file(draw) -> bytes:
    """A torch.save file (zip or legacy) of a generated object, its pickle and then the
    file damaged now and then; or raw bytes behind a torch magic."""
    storages: list = []
    pickled = b"\x80\x02" + _p_memoized(draw(torch_object(storages)), draw) + b"."
    if draw(st.integers(0, 3)) == 0:
        pickled = draw(mutated(pickled))
    kind = draw(st.sampled_from(["zip", "zip", "zip-deflated", "legacy", "raw"]))
    if kind == "raw":
        head = draw(st.sampled_from([b"PK\x03\x04", b"\x80\x02\x8a\x0a" +
                                     (0x1950A86A20F9469CFC6C).to_bytes(10, "little")]))
        return head + draw(st.binary(max_size=300))
    if kind == "legacy":
        out = b"\x80\x02\x8a\x0a" + (0x1950A86A20F9469CFC6C).to_bytes(10, "little") + b"."
        out += b"\x80\x02" + _p_int(1001) + b"."
        out += b"\x80\x02}(" + _p_str("protocol_version") + _p_int(1001) + \
            _p_str("little_endian") + b"\x88u."
        out += pickled
        out += b"\x80\x02](" + b"".join(_p_str(k) for k in storages) + b"e."
        for _ in storages:
            n = draw(st.integers(0, 4))
            out += n.to_bytes(8, "little") + b"\0" * (4 * n)
    else:
        buf = io.BytesIO()
        prefix = draw(st.sampled_from(["archive", "model", "x y", "é"]))
        method = zipfile.ZIP_DEFLATED if kind == "zip-deflated" else zipfile.ZIP_STORED
        with zipfile.ZipFile(buf, "w", method) as z:
            z.writestr(f"{prefix}/data.pkl", pickled)
            for key in storages:
                if draw(st.integers(0, 9)):   # now and then a record is missing
                    z.writestr(f"{prefix}/data/{key}", b"\0" * 8)
            z.writestr(f"{prefix}/version", "3\n")
        out = buf.getvalue()
    return draw(mutated(out)) if draw(st.integers(0, 2)) == 0 else out


@fuzz_reader(300)
@given(raw=torch_file())
def test_torch_save_reader(tmp_path_factory, raw):
    """torch.save bytes through both of the doctor's readers (the file's own, and the
    cache scanner's fast path): never an exception for a regular file, never executed,
    and the two agree on what a file holds."""
    from doctor.checks.resume import state_of
    from doctor.scanners import cachescan
    from doctor.scanners.torchsave import TorchSaveInfo, inspect_file

    path = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp())) / "x.pt"
    path.write_bytes(raw)
    with bounded("torch.save"):
        info = inspect_file(path)
        assert info is None or isinstance(info, TorchSaveInfo), info
        if info is not None:
            state_of(info)
            assert info.storages >= 0 and isinstance(info.devices, list)
        fast = cachescan.inspect_path(str(path), 64 << 20, {})
    if isinstance(fast, TorchSaveInfo) and info is not None:
        assert (fast.locations, fast.unsafe_globals) == (info.locations, info.unsafe_globals), \
            f"[readers disagree] {fast} vs {info}"
    shutil.rmtree(path.parent)


# -- the report reader: a real report, then damaged the ways a file on disk is
_REPORTS: list = []


def _real_report(base: Path) -> dict:
    """One report of a real run with findings, facts and odd text (made once)."""
    if not _REPORTS:
        repo = Repo(base)
        try:
            repo.write("job→é.sbatch", b"#!/bin/bash\r\n#SBATCH -N 1\r\nexport "
                                       b"NCCL_ASYNC_ERROR_HANDLING=1\r\nsrun python t.py\r\n")
            # and a finding an inline comment accepts: the report's `suppressed` too
            repo.write("c.yaml", b"num_workers: 0\npersistent_workers: true\nprefetch_factor: "
                                 b"2  # doctor: ignore[dataloader-option-conflict] old torch\n")
            out = repo.outdir / "r.json"
            run_inprocess(["run", "--static", "--repo", str(repo.path), "--config",
                           str(repo.path / "c.yaml"), "--json", str(out)], repo.top, {})
            _REPORTS.append(json.loads(out.read_text("utf-8")))
        finally:
            repo.close()
    return json.loads(json.dumps(_REPORTS[0]))


JSON_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(), TEXT,
              st.sampled_from(NASTY)),
    lambda kids: st.one_of(st.lists(kids, max_size=3),
                           st.dictionaries(st.one_of(TEXT, st.sampled_from(
                               ["id", "status", "findings", "message", "severity", "data",
                                "location", "reason", "path", "line", "fix", "facts",
                                "summary", "nodes", "results", "schema_version"])),
                                           kids, max_size=3)), max_leaves=8)


def _slots(doc, out: list, depth: int = 0) -> list:
    """(container, key) of every value in the document, for a mutation to pick."""
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) \
        if isinstance(doc, list) else ()
    for key, value in items:
        out.append((doc, key))
        if depth < 8:
            _slots(value, out, depth + 1)
    return out


@st.composite
def report_file(draw, base: Path) -> tuple:
    """(the file's bytes, the document they hold if they are whole JSON, else None)."""
    doc = _real_report(base)
    for _ in range(draw(st.integers(0, 4))):
        slots = _slots(doc, [])
        if not slots:
            break
        container, key = draw(st.sampled_from(slots))
        how = draw(st.integers(0, 2))
        if how == 0:
            container[key] = draw(JSON_VALUE)
        elif how == 1 and isinstance(container, dict):
            del container[key]
        else:   # the same value, deep inside lists
            for _ in range(draw(st.sampled_from([1, 2, 50, 900]))):
                container[key] = [container[key]]
    text = json.dumps(doc, ensure_ascii=draw(st.booleans()),
                      indent=draw(st.sampled_from([None, 2])))
    how = draw(st.integers(0, 5))
    if how == 1:   # in a job log, as `doctor sbatch --force` appends it
        from doctor.logblock import BLOCK_BEGIN, BLOCK_END
        lines = [BLOCK_BEGIN] + ["# " + ln for ln in json.dumps(doc, indent=2).split("\n")] \
            + [BLOCK_END]
        if draw(st.booleans()):
            del lines[draw(st.integers(0, len(lines) - 1))]
            doc = None
        # a log whose first text is a JSON brace is still read for its block
        text = draw(TEXT).replace("\r", "") + "\n" + "\n".join(lines) + "\n" + draw(TEXT)
    elif how == 2:   # nested
        depth = draw(st.sampled_from([10, 500, 5000]))
        text = '{"schema_version": 1, "results": ' + "[" * depth + "]" * depth + "}"
        doc = None
    raw = text.encode("utf-8", "surrogatepass")
    return (draw(mutated(raw)), None) if how == 3 else (raw, doc)


@fuzz_reader(150)
@given(data=st.data(), fmt=st.sampled_from(FORMATS))
def test_report_reader(tmp_path_factory, data, fmt):
    """Saved reports, damaged, through `doctor show` (every format) and `doctor diff`:
    exit 0 or 2 (1 for a diff with a new failure), never exit 3; one line for exit 2;
    no raw control character from the file on the terminal."""
    base = tmp_path_factory.getbasetemp()
    top = Path(tempfile.mkdtemp(dir=base))
    old, new = top / "old.json", top / "new.json"
    (raw_old, doc_old), (raw_new, doc_new) = data.draw(report_file(base)), \
        data.draw(report_file(base))
    old.write_bytes(raw_old)
    new.write_bytes(raw_new)
    # a whole report: fits the schema and nests no deeper than show/diff read (a real
    # one nests about ten levels; a check's `data` may nest 900 deep and fit the schema)
    valid = [d is not None and not _deeper_than(d, MAX_NESTING) and VALIDATOR.is_valid(d)
             for d in (doc_old, doc_new)]
    for argv, whole in ((["show", str(new), "--format", fmt], valid[1]),
                        (["diff", str(old), str(new), "--format", fmt if fmt in (
                            "table", "json", "markdown") else "table"], all(valid))):
        with bounded("report"):
            code, out, err = run_inprocess(argv, top, {})
        assert_read(argv, code, out, err, whole)
    shutil.rmtree(top)


def _found(doc: dict, result: dict) -> dict:
    doc["results"][0] = result
    return doc


@pytest.mark.parametrize("damage", ["no findings", "status list", "nested"])
def test_report_reader_found_cases(tmp_path_factory, damage):
    """What test_report_reader found: a failed result without `findings` (KeyError in
    every format), a status that is a list (unhashable), JSON 5,000 deep (RecursionError)."""
    base = tmp_path_factory.getbasetemp()
    doc = _real_report(base)
    first = dict(doc["results"][0])
    if damage == "no findings":
        first.pop("findings")
        first["status"] = "fail"
        text = json.dumps(_found(doc, first))
    elif damage == "status list":
        first["status"] = ["fail"]
        text = json.dumps(_found(doc, first))
    else:
        text = '{"schema_version": 1, "results": ' + "[" * 5000 + "]" * 5000 + "}"
    top = Path(tempfile.mkdtemp(dir=base))
    (top / "r.json").write_text(text)
    codes = {}
    for fmt in FORMATS:
        argv = ["show", str(top / "r.json"), "--format", fmt]
        codes[fmt], out, err = run_inprocess(argv, top, {})
        assert_read(argv, codes[fmt], out, err, False)
    assert codes["table"] == 2, codes   # (json copies what it does not read: exit 0)
    shutil.rmtree(top)


def assert_read(argv: list, code: object, out: str, err: str, whole: bool) -> None:
    """`whole`: the files are reports that fit docs/report-schema.json, which always
    read (exit 2 is only for what does not fit)."""
    what = f"argv={argv!r}\nexit {code}\nstderr={err!r}\nstdout[:2000]={out[:2000]!r}"
    assert code in ((0, 2) if argv[0] == "show" else (0, 1, 2)), f"[exit code]\n{what}"
    assert not (whole and code == 2), f"[a report that fits the schema refused]\n{what}"
    assert "Traceback" not in err and "internal error" not in err, f"[internal error]\n{what}"
    if code == 2:
        assert err.startswith("doctor: error: ") and err.count("\n") == 1, \
            f"[exit 2 is not one line]\n{what}"
    for name, text in (("stdout", out), ("stderr", err)):
        bad = RAW_CONTROL.search(text)
        assert bad is None, f"[control character] raw {bad.group()!r} in {name}\n{what}"
