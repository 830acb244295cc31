"""Issue 27, secret leaks: a secret planted wherever a user puts one never leaves the
doctor, in any command or format; and what is no secret is not masked.

Attacker's view: credentials under names no list knows but with the shapes the services
issue (GitHub, Slack, AWS, OpenAI, GitLab, JWT, a PEM key), under the names the list
should know (*_KEY, *_PAT, *_PASS, *PASSWORD*, *_CREDENTIALS, *_SECRET), in a URL's
userinfo, in `srun --export`, in a command-line option, in a config, in the login
environment, in a job log that an older doctor (or a hand) wrote in clear. Each command
is the real CLI: run in every format with --output and --json, show and diff of that
log, fix (preview and --write), sbatch --force (what it prints and appends to the job's
log; Slurm's two tools faked, as tests/test_sbatch_cli.py does for outcomes), and
--gather across two real processes. Every byte of stdout, stderr and every file written
is searched for every planted value.

The other direction: a script named slurm/compute_pass_rate.slurm had every fact about
it masked ("pass"); TOKENIZERS_PARALLELISM, a tokenizer path, an author's name and
SSH_AUTH_SOCK are no secrets either.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, clean_env, run_doctor, run_main, validate_report
from doctor.logblock import as_json_block

FORMATS = ("table", "json", "junit", "sarif", "markdown")

# Every value is unique, so that finding it anywhere is a leak.
BY_NAME = {  # a name the list knows; a value of no known shape
    "WANDB_API_KEY": "5f3c9a7e1b2d4c6e8f0a1b3c5d7e9f1a2b4c6d8e",
    "GH_PAT": "ghPatByName0x7Kq2Lm9Vn4Rt",
    "DB_PASS": "dbPassByName-8s7Df6Gh",
    "SMTP_PASSWORD_PLAIN": "smtpPw0rdByName_4jK2",
    "GCP_CREDENTIALS": "gcpCredsByName~9pL3xQ",
    "SIGNING_SECRET": "signSecretByName.5tY7",
    "SERVICE_KEY": "svcKeyByName+2wE4rT6",
}
BY_SHAPE = {  # a name no list knows; a value with a credential's shape
    "HF_TOKEN": "hf_Qm7ZkR2vXw9LpT4sNc8YbJ1uHd6GfA3eKo",  # both
    "BUILD_LABEL": "ghp_Zx8Cv7Bn6Mq5Wr4Et3Yu2Io1PaSdFgHjKl90",
    "NOTIFY_CHANNEL": "xoxb-204816322-5301672918-Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op",
    "CLOUD_ID": "AKIAQ3EGUIZ7XK4PBN2M",
    "LLM_ENDPOINT": "sk-proj-Rt5Yu8Io2Pa4Sd6Fg9Hj1Kl3Zx5Cv7Bn",
    "GL_ID": "glpat-Xy9Zw8Vu7Ts6Rq5Po4Nm",
    "SESSION_BLOB": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJqb2IiLCJleHAiOjE5OTk5OTk5"
                    "OTl9.Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5Nm7",
    "FINE_GRAINED": "github_pat_11ABCDEFG0aBcDeFgHiJkL_mNoPqRsTuVwXyZ0123456789aBcDeFgHiJkL"
                    "mNoPqRsTuVwXyZ01",
}
PEM_BODY = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"
URL_PW, SRUN_SECRET, SRUN_SHAPE = "mlflowUrlPw-6Hn8Jm", "srunExportSecret-3Kd9", \
    "xoxp-9182736450-1928374650-Zz9Yy8Xx7Ww6Vv5Uu4Tt"
OPTION_TOKEN, CONFIG_KEY, CONFIG_PW = "hubTokenOption-7Gb5Nh", "cfgApiKeyValue-2Qw4Er", \
    "cfgUrlPassword-8Ui6Op"
LOGIN_KEY = "loginEnvKey-5Rt7Yu9Io"   # WANDB_API_KEY of the shell that runs the doctor
SECRETS = (*BY_NAME.values(), *BY_SHAPE.values(), PEM_BODY, URL_PW, SRUN_SECRET, SRUN_SHAPE,
           OPTION_TOKEN, CONFIG_KEY, CONFIG_PW, LOGIN_KEY)

NOT_SECRET = {"TOKENIZERS_PARALLELISM": "false",
              "TOKENIZER_PATH": "/data/tokenizers/tokenizer.json",
              "GIT_AUTHOR_NAME": "Ada Lovelace",
              "SSH_AUTH_SOCK": "/tmp/ssh-agent/agent.sock"}
SCRIPTS = ("slurm/compute_pass_rate.slurm", "slurm/train.sbatch")  # the same job twice

JOB = "\n".join([
    "#!/bin/bash", "#SBATCH --nodes=1", "#SBATCH --ntasks-per-node=2", "#SBATCH --gpus-per-node=2",
    *(f"export {k}={v!r}" if " " in v else f"export {k}={v}" for k, v in NOT_SECRET.items()),
    *(f"export {k}={v}" for k, v in {**BY_NAME, **BY_SHAPE}.items()),
    f"export MLFLOW_TRACKING_URI=https://mluser:{URL_PW}@mlflow.example.org",
    f"export DEPLOY_PEM=$'-----BEGIN OPENSSH PRIVATE KEY-----\\n{PEM_BODY}\\n"
    "-----END OPENSSH PRIVATE KEY-----'",
    "export NCCL_ASYNC_ERROR_HANDLING=1",   # deprecated: `doctor fix` edits the line below
    f"srun --export=ALL,RUN_SECRET={SRUN_SECRET},NOTIFY2={SRUN_SHAPE} python train.py "
    f"--config configs/train.yaml --hub-token {OPTION_TOKEN}", ""])
CONFIG = f"""trainer:
  num_nodes: 1
  devices: 2
wandb:
  api_key: {CONFIG_KEY}
logger:
  tracking_uri: https://cfguser:{CONFIG_PW}@mlflow.example.org/api
data:
  tokenizer: /data/tokenizers/tokenizer.json
"""


def make_repo(at: Path) -> Path:
    for rel in SCRIPTS:
        (at / rel).parent.mkdir(parents=True, exist_ok=True)
        (at / rel).write_text(JOB)
    (at / "configs").mkdir()
    (at / "configs" / "train.yaml").write_text(CONFIG)
    (at / "train.py").write_text("import torch\n")
    for cmd in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *cmd], cwd=at, check=True, capture_output=True)
    return at


def leaks(*texts: str) -> list:
    return sorted({s for s in SECRETS for t in texts if s in t})


def written(folder: Path) -> dict:
    return {str(p): p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(folder.rglob("*")) if p.is_file()}


def doctor(*args: str, env: dict | None = None) -> subprocess.Popen:
    """The real CLI, as a user runs it, started (several run at once)."""
    return subprocess.Popen([sys.executable, "-m", "doctor", *args], cwd=ROOT,
                            env=clean_env({"WANDB_API_KEY": LOGIN_KEY, **(env or {})}),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finished(procs: list, timeout: float = 120) -> list:
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=timeout)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """`doctor run --no-smoke` once per format: the table to stdout, the others with
    --output; each with --json. → (repo, {fmt: CompletedProcess}, {file: text})."""
    top = tmp_path_factory.mktemp("secrets")
    repo = make_repo(top / "repo")
    out = top / "out"
    out.mkdir()
    procs = {fmt: doctor("run", "--repo", str(repo), "--no-smoke", "--format", fmt,
                         "--json", str(out / f"report-{fmt}.json"),
                         *(["--output", str(out / f"out.{fmt}")] if fmt != "table" else []))
             for fmt in FORMATS}
    done = dict(zip(procs, finished(list(procs.values()))))
    for fmt, proc in done.items():  # a warning fails: exit 0 (3: a check timed out on a
        assert proc.returncode in (0, 3), (fmt, proc.stderr)  # busy machine, not this test's)
    return repo, done, written(out)


def test_run_in_every_format_writes_no_secret_anywhere(runs):
    _, done, files = runs
    assert len(files) == 2 * len(FORMATS) - 1
    for fmt, proc in done.items():
        assert leaks(proc.stdout, proc.stderr) == [], fmt
    for name, text in files.items():
        assert leaks(text) == [], name
    assert leaks(done["table"].stdout + done["table"].stderr) == []


def test_run_masks_by_name_by_shape_and_in_urls_but_not_what_is_no_secret(runs):
    _, done, files = runs
    doc = validate_report(json.loads(files[next(f for f in files if f.endswith(
        "report-json.json"))]))
    for script in SCRIPTS:
        env = doc["facts"]["script_env"][script]
        for name in (*BY_NAME, *BY_SHAPE, "RUN_SECRET"):
            assert env[name] == "***", (script, name, env[name])
        assert env["MLFLOW_TRACKING_URI"] == "https://mluser:***@mlflow.example.org"
        for name, value in NOT_SECRET.items():
            assert env[name] == value, (script, name)
        step = doc["facts"]["job"][script]["step"]  # was all `***` for compute_pass_rate
        assert step["entry"] == "train.py" and step["at"] == f"{script}:{JOB.count(chr(10))}"
        assert step["args"] == ["--config", "configs/train.yaml", "--hub-token", "***"]
    assert doc["facts"]["env"]["WANDB_API_KEY"] == "***"
    for fmt in ("table", "markdown"):
        text = done[fmt].stdout if fmt == "table" else files[next(
            f for f in files if f.endswith(f"out.{fmt}"))]
        assert "slurm/compute_pass_rate.slurm" in text, fmt


def leaky_log(report: dict, at: Path) -> Path:
    """A job log as an older doctor wrote it: the report block with secrets in clear,
    in the facts and in a finding's message (issue 27: `doctor diff` printed them)."""
    doc = json.loads(json.dumps(report))
    env = doc["facts"]["script_env"]["slurm/train.sbatch"]
    env.update({**BY_NAME, **BY_SHAPE,
                "MLFLOW_TRACKING_URI": f"https://user:{URL_PW}@mlflow.example.org"})
    nccl = next(r for r in doc["results"] if r["id"] == "nccl-env-deprecated")
    nccl["findings"][0]["message"] += (f" (MLFLOW_TRACKING_URI=https://user:{URL_PW}@host "
                                       f"HF_TOKEN={BY_SHAPE['HF_TOKEN']} "
                                       f"WANDB_API_KEY={BY_NAME['WANDB_API_KEY']})")
    at.write_text("epoch 1: loss 0.3\n" + as_json_block(json.dumps(doc, indent=2))
                  + "epoch 2: loss 0.2\n")
    return at


def test_show_and_diff_of_a_log_written_in_clear_print_no_secret(runs, tmp_path, capsys):
    _, _, files = runs
    new = next(f for f in files if f.endswith("report-json.json"))
    log = leaky_log(json.loads(files[new]), tmp_path / "slurm-4242.out")
    outs = {}
    for fmt in FORMATS:
        outs[f"show {fmt}"] = run_main(capsys, "show", str(log), "--format", fmt)
    for fmt in ("table", "json", "markdown"):
        outs[f"diff {fmt}"] = run_main(capsys, "diff", str(log), new, "--format", fmt)
        outs[f"diff back {fmt}"] = run_main(capsys, "diff", new, str(log), "--format", fmt)
    for what, proc in outs.items():
        assert proc.returncode == 0, (what, proc.stderr)
        assert leaks(proc.stdout, proc.stderr) == [], what
    # masked where it sits; the log's report is still shown whole
    assert "MLFLOW_TRACKING_URI=https://user:***@host HF_TOKEN=*** WANDB_API_KEY=***" in \
        " ".join(outs["show table"].stdout.split())   # the message wraps to the width
    shown = json.loads(outs["show json"].stdout)
    assert shown["facts"]["job"]["slurm/compute_pass_rate.slurm"]["step"]["entry"] == "train.py"
    assert "https://user:***@mlflow.example.org" in outs["diff table"].stdout


def test_fix_preview_and_write_print_no_secret(tmp_path, capsys):
    repo = make_repo(tmp_path / "repo")
    before = {rel: (repo / rel).read_text() for rel in SCRIPTS}
    preview = run_main(capsys, "fix", "--repo", str(repo), "--only", "nccl-env-deprecated")
    assert preview.returncode == 1, preview.stderr
    assert leaks(preview.stdout, preview.stderr) == []
    for rel in SCRIPTS:
        assert f"--- a/{rel}" in preview.stdout
    assert "+export TORCH_NCCL_ASYNC_ERROR_HANDLING=1" in preview.stdout
    assert " export MLFLOW_TRACKING_URI=https://mluser:***@mlflow.example.org" in preview.stdout
    assert "the preview shows secrets as *** (`git apply` cannot take it): apply with --write" \
        in preview.stderr
    assert {rel: (repo / rel).read_text() for rel in SCRIPTS} == before  # a preview

    done = run_main(capsys, "fix", "--repo", str(repo), "--only", "nccl-env-deprecated",
                    "--write")
    assert done.returncode == 0, done.stderr
    assert leaks(done.stdout, done.stderr) == []
    for rel in SCRIPTS:  # the user's file keeps its secrets: only the fixed line changed
        assert (repo / rel).read_text() == before[rel].replace(
            "export NCCL_ASYNC", "export TORCH_NCCL_ASYNC")


def fake_slurm(at: Path, log: Path) -> dict:
    """sbatch that echoes a credential back (as a site's submit filter may), and the
    scontrol that names the job's log: the doctor's own code writes the log."""
    at.mkdir()
    tools = {"sbatch": f'echo 4251; echo "sbatch: warning: --export holds NOTIFY='
                       f'{BY_SHAPE["NOTIFY_CHANNEL"]} and DB_PASS={BY_NAME["DB_PASS"]}" >&2',
             "scontrol": f'[ "$1" = release ] && exit 0; echo "JobId=4251 StdOut={log}"'}
    for name, body in tools.items():
        (at / name).write_text(f"#!/bin/bash\n{body}\n")
        (at / name).chmod(0o755)
    return {"PATH": f"{at}:{clean_env()['PATH']}"}


def test_sbatch_force_prints_and_appends_no_secret(tmp_path):
    repo = make_repo(tmp_path / "repo")
    log = tmp_path / "slurm-4251.out"
    log.write_text("output of the earlier run\n")
    env = fake_slurm(tmp_path / "bin", log)
    proc, = finished([doctor("sbatch", "--repo", str(repo), "--force", "--json",
                             str(tmp_path / "sbatch.json"), str(repo / SCRIPTS[1]),
                             "--nodes=2", env=env)])  # num_nodes: 1 fails
    assert proc.returncode == 0 and proc.stdout == "4251\n", proc.stderr
    assert "sbatch: warning: --export holds NOTIFY=*** and DB_PASS=***" in proc.stderr
    text = log.read_text()
    assert text.startswith("output of the earlier run\n# doctor: job 4251") and \
        "slurm-gpu-mismatch" in text
    assert leaks(proc.stdout, proc.stderr, text, (tmp_path / "sbatch.json").read_text()) == []
    from doctor.reports_cli import load_report  # the block is still a report

    assert validate_report(load_report(str(log)))["facts"]["script_env"][SCRIPTS[1]][
        "TOKENIZERS_PARALLELISM"] == "false"


def test_gather_merges_no_node_s_secret(tmp_path):
    """Node 2's own credentials (a shaped value in an NCCL_ variable the env fact keeps, a
    fake python version) reach task 0 as that node's report, merged there."""
    from test_gather import finish, free_port, start

    port = free_port()
    extra = {"NCCL_IB_HCA": BY_SHAPE["NOTIFY_CHANNEL"],
             "NCCL_DEBUG_FILE": f"https://u:{URL_PW}@logs.example.org/%h",
             "DOCTOR_FAKE_FACTS": json.dumps({"python": BY_SHAPE["BUILD_LABEL"]}),
             "WANDB_API_KEY": LOGIN_KEY}
    procs = [start(r, 2, port, tmp_path, extra=extra if r == 1 else None) for r in range(2)]
    (code0, out0, err0), (_, out1, err1) = finish(procs)
    assert code0 in (0, 1), err0
    assert leaks(out0, err0, out1, err1) == []
    doc = validate_report(json.loads(out0))
    node2 = doc["facts"]["nodes"]["node2"]
    assert node2["env"]["NCCL_IB_HCA"] == "***" and node2["python"] == "***"
    assert node2["env"]["NCCL_DEBUG_FILE"] == "https://u:***@logs.example.org/%h"


def test_every_file_the_doctor_writes_goes_through_the_boundary(tmp_path):
    """write_output and append_output (every report, every job log) mask what reaches
    them, and keep a JSON text valid while doing so."""
    from doctor.outputs import append_output, write_output

    doc = {"fix": "export HF_TOKEN=", "next": BY_SHAPE["BUILD_LABEL"],
           "pem": f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n-----END PRIVATE KEY-----",
           "url": f"https://u:{URL_PW}@host", "escaped": "\u00e9" + BY_SHAPE["CLOUD_ID"]}
    write_output(str(tmp_path / "r.json"), json.dumps(doc, indent=2))
    append_output(str(tmp_path / "job.log"), f"DB_PASS={BY_NAME['DB_PASS']} "
                  f"{BY_SHAPE['SESSION_BLOB']}\n")
    files = written(tmp_path)
    assert leaks(*files.values()) == [URL_PW]  # in JSON only the shapes: the doc pass did URLs
    assert json.loads(files[str(tmp_path / "r.json")]) == {
        **doc, "next": "***", "pem": "***", "escaped": "\u00e9***"}
    assert files[str(tmp_path / "job.log")] == "DB_PASS=*** ***\n"


@pytest.mark.parametrize("name,secret", [
    *[(n, True) for n in ("HF_TOKEN", "WANDB_API_KEY", "OPENAI_API_KEY", "GH_PAT",
                          "AZURE_DEVOPS_PAT", "DB_PASS", "SSHPASS", "MYSQL_PWD",
                          "DB_PASSWORD", "PASSWORDHASH", "SMTP_PASSWD", "GPG_PASSPHRASE",
                          "CLIENT_SECRET", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
                          "GCP_CREDENTIALS", "GOOGLE_APPLICATION_CREDENTIALS", "BASIC_AUTH",
                          "SSH_PRIVATE_KEY", "STRIPE_KEY", "apiKey", "hfToken", "HFTOKEN",
                          "X-Api-Key", "PRIVATE-TOKEN", "Authorization", "AccountKey",
                          "HF_TOKEN2", "wandb.api_key")],
    *[(n, False) for n in ("TOKENIZERS_PARALLELISM", "MAX_TOKENS", "GIT_AUTHOR_NAME",
                           "AUTHOR", "compute_pass_rate", "slurm/compute_pass_rate.slurm",
                           "compute_pass_rate.slurm", "tokenizer.json", "keys.py",
                           "author.txt", "monkey_patch", "MONKEY", "KEYBOARD_LAYOUT", "key",
                           "keys", "keypath", "PAT_SIZE", "BYPASS_CACHE", "GIT_ASKPASS",
                           "SSH_AUTH_SOCK", "HF_TOKEN_PATH", "DB_PASSWORD_FILE",
                           "AWS_SHARED_CREDENTIALS_FILE", "PWD", "OLDPWD", "pad_token",
                           "eos_token", "secrets.yaml", "private.key", "hf_token.txt")],
])
def test_secret_names_by_word_structure(name, secret):
    from doctor.secrets import is_secret_name

    assert is_secret_name(name) is secret


@pytest.mark.parametrize("text,masked", [
    *[(f"x {v} y", "x *** y") for v in BY_SHAPE.values()],
    (f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----", "***"),
    (f"key: -----BEGIN PRIVATE KEY----- {PEM_BODY}", "key: ***"),   # cut off
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "***"), ("AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "***"),
    *[(word, word) for word in ("sk-learn", "task-runner-2024", "hf_hub_download",
                                "ghp_short", "AKIA1234", "xoxo-hugs", "eyJhbGciOi",
                                "risk-assessment-model-v1234567890",
                                "/data/tokenizers/tokenizer.json", "compute_pass_rate=0.5",
                                "TOKENIZERS_PARALLELISM=false", "GIT_AUTHOR_NAME='Ada'",
                                "git@github.com:org/repo.git")],
])
def test_credential_shapes_at_realistic_lengths(text, masked):
    from doctor.secrets import mask_text

    assert mask_text(text) == masked


WRITERS = re.compile(r"os\.write\(|\.write_text\(|\.write_bytes\(|\bopen\(.*[\"'][wax]b?\+?[\"']"
                     r"|O_WRONLY|O_RDWR")
# Writers that are no output of a command: /dev/null for a closed stream, `doctor docs`'
# pages from the registry, and the smoke's ranks, which write their output, events and
# exit codes into the smoke's private temporary directory (read, then removed); the data
# smoke's ranks and workers do the same, and write their own /proc/self uid and gid maps to
# enter a private mount namespace (the /dev/shm of the node's size); the zygote that forks
# them opens a forked child's output files in the caller's private temporary directory.
ALLOWED = {("doctor/cli.py", 'open(os.devnull, "w"'), ("doctor/docs.py", "p.write_text(text)"),
           *((f"doctor/smoke/{name}.py", "") for name in ("launcher", "worker", "reaper",
                                                          "data", "data_node", "zygote")),
           # made.py's docstrings quote the user's write calls it reads; it writes nothing
           ("doctor/job/made.py", "`open(")}


def test_no_file_is_written_around_the_boundary():
    """A new writer of files must go through doctor/outputs.py (which scrubs) or be
    listed here with why it writes no secret."""
    found = []
    for path in sorted((ROOT / "doctor").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "doctor/outputs.py":
            continue
        for line in path.read_text().splitlines():
            if WRITERS.search(line) and not any(rel == f and s in line for f, s in ALLOWED):
                found.append(f"{rel}: {line.strip()}")
    assert found == []


def test_the_cli_entry_point_guards_stdout_and_stderr(tmp_path, capsys):
    """Text that no report holds (an error naming a path, a message) is masked too."""
    bad = tmp_path / f"{BY_SHAPE['BUILD_LABEL']}.json"
    shutil.copy(ROOT / "pyproject.toml", bad)
    proc = run_main(capsys, "show", str(bad))
    assert proc.returncode == 2 and proc.stderr.startswith("doctor: error: ")
    assert leaks(proc.stdout, proc.stderr) == [] and "***.json" in proc.stderr


# ---- review of the redaction pass: URLs, YAML lines, over-masked names, plain text ------
AWS_SLASH = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"   # half of AWS's secret keys hold a `/`
AWS_ID = "AKIDEXAMPLE"                                   # too short for the AKIA shape
HEX_TOKEN = "fedcba9876543210fedcba9876543210fedcba98"   # a classic GitHub token: no prefix
CONFIG_TOKEN = "9f8e7d6c5b4a39281706f5e4d3c2b1a0aa"


def test_run_masks_url_passwords_with_a_slash_and_tokens_in_the_user_part(tmp_path, capsys):
    """The JSON report of `run --no-smoke`: a bucket's secret key with `/` in it, a GitHub
    token as the user of `TOKEN:x-oauth-basic@` and alone as `TOKEN@`; while a field name
    ending in _key (a Hydra override), `git@github.com:` and `user@host` stay readable."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text("import torch\n")
    (repo / "job.sbatch").write_text("\n".join([
        "#!/bin/bash", "#SBATCH --nodes=1",
        f"export DATA_URL=s3://{AWS_ID}:{AWS_SLASH}@bucket/train",
        f"export REPO_URL=https://{HEX_TOKEN}:x-oauth-basic@github.com/o/r.git",
        f"export CLONE_URL=https://{HEX_TOKEN}@github.com/o/r.git",
        "export MIRROR=git@github.com:org/repo.git",
        "export LOGS=ssh://mluser@logs.example.org/runs",
        "srun python train.py model.first_stage_key=jpg data.text_key=caption", ""]))
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    out = tmp_path / "r.json"
    proc = run_main(capsys, "run", "--repo", str(repo), "--no-smoke", "--format", "json",
                    "--output", str(out))
    assert proc.returncode in (0, 1, 3), proc.stderr
    text = out.read_text()
    for secret in (AWS_SLASH, AWS_ID, HEX_TOKEN, "K7MDENG"):
        assert secret not in text + proc.stdout + proc.stderr, secret
    doc = json.loads(text)
    env = doc["facts"]["script_env"]["job.sbatch"]
    assert env["DATA_URL"] == "s3://***:***@bucket/train"
    assert env["REPO_URL"] == "https://***:x-oauth-basic@github.com/o/r.git"
    assert env["CLONE_URL"] == "https://***@github.com/o/r.git"
    assert env["MIRROR"] == "git@github.com:org/repo.git"
    assert env["LOGS"] == "ssh://mluser@logs.example.org/runs"
    assert doc["facts"]["job"]["job.sbatch"]["step"]["args"] == [
        "model.first_stage_key=jpg", "data.text_key=caption"]


FIX_CONFIG = f"""data:
  val: {{num_workers: 0, persistent_workers: true, batch_size: 8}}
  image_key: jpg
  hf_token: {CONFIG_TOKEN}
  "api_key": "{CONFIG_KEY}"
"""


def test_fix_preview_masks_a_yaml_secret_in_its_context_lines(tmp_path, capsys):
    """`key: value` (YAML) of a secret name, lines after the one `doctor fix` edits:
    the preview's context showed it in clear; a field named image_key stays."""
    repo = tmp_path / "repo"
    (repo / "configs").mkdir(parents=True)
    cfg = repo / "configs" / "train.yaml"
    cfg.write_text(FIX_CONFIG)
    proc = run_main(capsys, "fix", "--repo", str(repo), "--static", "--config", str(cfg),
                    "--unsafe", "--torch-version", "2.4.0")
    edited = "+  val: {num_workers: 0, persistent_workers: false, batch_size: 8}"
    assert edited in proc.stdout, (proc.stdout, proc.stderr)
    assert CONFIG_TOKEN not in proc.stdout + proc.stderr
    assert CONFIG_KEY not in proc.stdout + proc.stderr
    assert "   hf_token: ***\n" in proc.stdout and '   "api_key": ***\n' in proc.stdout
    assert "   image_key: jpg\n" in proc.stdout
    assert cfg.read_text() == FIX_CONFIG   # a preview


@pytest.mark.parametrize("text,masked", [
    (f"s3://{AWS_ID}:{AWS_SLASH}@bucket/train", "s3://***:***@bucket/train"),
    (f"https://u:{AWS_SLASH}@host/a@b", "https://u:***@host/a@b"),   # @ in the path
    (f"https://{HEX_TOKEN}:x-oauth-basic@github.com/o/r.git",
     "https://***:x-oauth-basic@github.com/o/r.git"),
    (f"git clone https://{HEX_TOKEN}@github.com/o/r.git",
     "git clone https://***@github.com/o/r.git"),
    ("https://x-access-token:ghs-like-Secret1@github.com/o/r",
     "https://x-access-token:***@github.com/o/r"),
    *[(t, t) for t in ("git@github.com:org/repo.git", "ssh://git@github.com/o/r.git",
                       "https://user@host/x", "https://first.last.name.org@host/x",
                       "https://continuous-integration-bot@host/x",
                       "https://registry.npmjs.org:443/@scope/pkg", "https://host:8080/x@y")],
    ("  hf_token: 9f8e7d6c5b4a39281706f5e4d3c2b1a0aa", "  hf_token: ***"),
    ("+password = hunter2hunter2", "+password = ***"),
    ("- secret_key: 'q1w2e3'", "- secret_key: ***"),
    ("Authorization: Bearer abc123", "Authorization: Bearer ***"),
    *[(t, t) for t in ("  image_key: jpg", "  num_workers: 4", "  max_token_len: 512",
                       "model.first_stage_key=jpg data.text_key=caption")],
])
def test_urls_and_yaml_lines(text, masked):
    from doctor.secrets import mask_text

    assert mask_text(text) == masked


@pytest.mark.parametrize("name", [
    "image_key", "text_key", "label_key", "input_key", "monitor_key", "metric_key",
    "rng_key", "PRNG_KEY", "cache_key", "state_dict_key", "first_stage_key", "sort_key",
    "query_key", "SPATIAL_PAT", "cookie_cutter", "token_type_ids", "max_token_len",
    "token_dropout", "TOKEN_BUDGET", "decoder_start_token_id", "private_cache", "PRIVATE_IP",
    "AUTH_MODE", "num_pass", "FORWARD_PASS", "PUBLIC_KEY", "use_auth",
    "PASS"])   # alone: a pass number, and the doctor's own `PASS: 7 pass` summary line
def test_field_names_are_no_secrets(name):
    from doctor.secrets import is_secret_name

    assert not is_secret_name(name)


@pytest.mark.parametrize("name", [
    "HF_TOKEN", "WANDB_API_KEY", "GH_PAT", "DB_PASS", "db_pass", "SMTP_PASSWORD",
    "my_password_hash", "GCP_CREDENTIALS", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY",
    "api_key", "secret_key", "access_key", "private_key", "hf_token", "auth_token",
    "SLACK_BOT_TOKEN", "NPM_TOKEN", "OPENAI_KEY", "GITHUB_TOKEN_VALUE", "SESSION_COOKIE",
    "token", "GH_AUTH_HEADER", "AUTHORIZATION_HEADER"])
def test_credential_names_stay_secret(name):
    from doctor.secrets import is_secret_name

    assert is_secret_name(name)


@pytest.mark.parametrize("text", [
    "[1/3] DATA_URL=https://u:plainTextPw9@host HF_TOKEN=plainTextTok9",
    "<stdin>: DATA_URL=https://u:plainTextPw9@host HF_TOKEN=plainTextTok9",
    "{not json} HF_TOKEN=plainTextTok9 https://u:plainTextPw9@host"])
def test_plain_text_that_begins_like_json_or_xml_keeps_every_rule(text):
    """scrub took any text beginning with `[`, `{` or `<` for JSON or XML and dropped the
    name and URL rules for it: a progress line or a message leaked."""
    from doctor.secrets import scrub

    out = scrub(text)
    assert "plainTextPw9" not in out and "plainTextTok9" not in out, out


def test_a_json_report_still_gets_only_the_rules_that_keep_it_valid():
    from doctor.secrets import scrub

    doc = {"cmd": 'echo "HF_TOKEN=\\"x y\\""', "url": 'https://u:p"q@host',
           "tok": BY_SHAPE["BUILD_LABEL"]}
    for text in (json.dumps(doc, indent=2) + "\n", json.dumps([doc])):
        back = json.loads(scrub(text))
        back = back[0] if isinstance(back, list) else back
        assert back == {**doc, "tok": "***"}


def test_the_summary_line_of_a_clean_run_keeps_its_counts(tmp_path):
    """The summary line (`PASS: 7 pass, …` then, `0 errors, 0 warnings, 7 passed` now) is
    the doctor's own, and a secret was exported: it is still read as written (it once
    printed `PASS: *** pass`)."""
    (tmp_path / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=1\nexport HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz123456\n"
        "srun python train.py\n")
    (tmp_path / "train.py").write_text("print('train')\n")
    proc = run_doctor("run", "--static", "--repo", str(tmp_path), env={"NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^0 errors, 0 warnings, \d+ passed, \d+ skipped in", proc.stdout,
                     re.M), proc.stdout[-500:]
    assert "hf_abcdefghijklmnopqrstuvwxyz123456" not in proc.stdout + proc.stderr
