"""Secrets are masked by where they sit, not by their text (issue 16, cause 4).

Too narrow before: credentials inside values were printed (URL userinfo in PYTHONPATH
and in a config's cache_dir, `curl -u`, `sshpass -p`, `mysql -p`, `--password`, an
Authorization header inside an ssh ProxyCommand). Too wide: TOKENIZERS_PARALLELISM=false
masked every "false" in the report, and a secret-named variable set to `pass` or
`error` broke the report's schema. Every format is checked, plus the --json file.
"""
from __future__ import annotations

import json
import re
import shutil

from conftest import FIXTURES, run_doctor, run_main, validate_report

FORMATS = ("table", "markdown", "junit", "sarif", "json")

DEPLOY = """#!/bin/bash
rsync -av --exclude data -e 'ssh -o ProxyCommand="curl -u bob:CURL-PW-1 --password=LONG-PW-2 \
-H \\"X-Api-Key: HDR-KEY-15\\" --proxy-header \\"Authorization: Bearer BEARER-TOK-3\\" proxy"' \
./ rsync://alice:RSYNC-PW-4@host/mod/
rsync -av --exclude data -e "sshpass -p SSHPASS-PW-5 ssh" ./ s3://AKIA-KEY-6:S3-SECRET-7@bucket/c/
rsync -av --exclude data --rsync-path 'mysql -h db -pMYSQL-PW-8 x; tool --password SPACE-PW-9 \
--api-key=API-KEY-10 --password-file /etc/rsync.pw; rsync' -e 'env API_TOKEN=pass ssh' \
./ bob@login.example.org:/scratch/code/
"""
JOB = """#!/bin/bash
#SBATCH -N 1
export PYTHONPATH=https://pyuser:PYPATH-PW-11@pypi.example.org/simple
srun python -m proj.train
"""
CONFIG = """data:
  cache_dir: s3://AKIA-CACHE-12:S3-CACHE-PW-13@bucket/cache
  mirror_cache_dir: rsync://ruser:RSYNC-CACHE-PW-14@host/mod/cache
"""
PLANTED = re.compile(r"[A-Z0-9-]+-(?:PW|TOK|KEY|SECRET|CACHE)-\d+|API_TOKEN=pass")


def in_process(capsys, *argv: str) -> tuple:
    """(exit code, stdout + stderr) of doctor.cli.main(argv), run in this process."""
    proc = run_main(capsys, *argv)
    return proc.returncode, proc.stdout + proc.stderr


def every_format(capsys, tmp_path, *args: str) -> dict:
    """{format: its output, and "json-file": the --json report} of one run per format;
    whatever reached stdout or stderr is appended to the format's text."""
    texts = {}
    for fmt in FORMATS:
        out = tmp_path / f"out.{fmt}"
        code, streams = in_process(capsys, "run", *args, "--format", fmt, "--output", str(out),
                                   "--json", str(tmp_path / "report.json"))
        assert code in (0, 1), streams
        texts[fmt] = out.read_text(encoding="utf-8") + streams
        texts["json-file"] = (tmp_path / "report.json").read_text(encoding="utf-8")
        validate_report(json.loads(texts["json-file"]))
    return texts


def test_credentials_in_urls_and_command_lines_never_appear(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    repo = tmp_path / "repo"
    for pkg in ("src/pkg", "src/pkg/data", "src/proj", "scripts"):
        (repo / pkg).mkdir(parents=True, exist_ok=True)
        (repo / pkg / "__init__.py").write_text("")
    (repo / "src/proj/train.py").write_text("import proj\n")
    (repo / "scripts/deploy.sh").write_text(DEPLOY)
    (repo / "job.sbatch").write_text(JOB)
    (repo / "c.yaml").write_text(CONFIG)
    texts = every_format(capsys, tmp_path, "--repo", str(repo), "--no-smoke",
                         "--config", str(repo / "c.yaml"), "--only",
                         "rsync-exclude-unanchored,package-not-importable,"
                         "cuda-tensor-in-shared-cache")
    for fmt, text in texts.items():
        assert not PLANTED.findall(text), (fmt, PLANTED.findall(text))
        # what is not a secret stays: users, user@host, a password *file*, the commands
        for kept in ("bob@login.example.org", "alice:", "pyuser:", "ProxyCommand",
                     "--password-file /etc/rsync.pw", "API_TOKEN=***"):
            assert kept in text.replace("\\\"", "\""), (fmt, kept)
    doc = json.loads(texts["json-file"])
    reasons = [r["reason"] for r in doc["results"] if r["reason"]]
    assert any("s3:/***:***@bucket/cache" in r and "rsync:/ruser:***@host" in r
               for r in reasons), reasons


def test_secret_named_values_are_masked_where_they_sit_not_everywhere(tmp_path, capsys,
                                                                      monkeypatch):
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "demo", repo)
    script = repo / "slurm" / "train.sbatch"
    script.write_text(script.read_text().replace(
        "ulimit -c unlimited\n", "ulimit -c unlimited\nexport TOKENIZERS_PARALLELISM=false\n"
        "export HF_TOKEN=pass\nexport WANDB_API_KEY=error\n"
        "export DEPLOY_TOKEN=config-not-found\n"))  # distinctive, but a check id
    texts = every_format(capsys, tmp_path, "--repo", str(repo), "--static")
    for fmt, text in texts.items():
        # "false" is no secret: TOKENIZERS_* is not a token, and the report keeps its words
        assert re.search(r"compute_network:\s+false", text), fmt
        assert "***" not in text, fmt
    doc = json.loads(texts["json-file"])  # validated: its enums are intact
    statuses = {r["id"]: (r["status"], r["severity"]) for r in doc["results"]}
    assert statuses["config-not-found"] == ("pass", "error")  # ids are never masked
    assert statuses["wandb-online-in-container"][0] == "fail"
    assert doc["summary"]["status"] == "fail"
    assert re.search(r"\d+ passed", texts["table"]) and "| ✅ pass |" in texts["markdown"]


def test_env_facts_mask_secret_named_variables_only(pack, tmp_path):
    env, repo = pack
    (repo / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH -N 1\nexport TOKENIZERS_PARALLELISM=false\nexport HF_TOKEN=pass\n"
        "export GIT_AUTHOR_NAME='Ada Lovelace'\nexport GITHUB_TOKEN=ghp_Xq93distinctive\n")
    report = tmp_path / "report.json"
    proc = run_doctor("run", "--repo", str(repo), "--only", "test-secret", "--json",
                      str(report), env=env)  # the table on stdout, the JSON in a file
    assert proc.returncode == 1, proc.stderr
    for text in (proc.stdout, report.read_text()):
        assert "ghp_Xq93distinctive" not in text + proc.stderr
        assert "false" in text and "Ada Lovelace" in text
    finding = validate_report(json.loads(report.read_text()))["results"][0]["findings"][0]
    plain = finding["data"]["env"]
    assert (plain["HF_TOKEN"], plain["GITHUB_TOKEN"]) == ("***", "***")
    assert (plain["TOKENIZERS_PARALLELISM"], plain["GIT_AUTHOR_NAME"]) == ("false",
                                                                            "Ada Lovelace")
    assert finding["fix"] == "token=***"  # `token=pass`: masked where it sits


MORE_CREDENTIALS = """#!/bin/bash
rsync -av --exclude data -e "ssh -o ProxyCommand='curl -H \\"Cookie: sid=COOKIE-TOK-1\\" \
--aws-secret-access-key SECRET-KEY-2 --access-key=ACCESS-KEY-3 proxy'" ./ host:/dst/
rsync -av --exclude data --rsync-path 'docker login -u bob -p DOCKER-PW-4 reg; \
redis-cli -a REDIS-PW-5 ping; env CONN="AccountName=a;AccountKey=AZURE-KEY-6" rsync' \
./ host:/dst/
"""


def test_credentials_of_more_commands_and_headers_never_appear(tmp_path, capsys, monkeypatch):
    """A Cookie header, --aws-secret-access-key, docker login -p, redis-cli -a and an
    Azure connection string's AccountKey were printed in the rsync fix command."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    repo = tmp_path / "repo"
    (repo / "src" / "pkg" / "data").mkdir(parents=True)
    (repo / "src" / "pkg" / "data" / "__init__.py").write_text("")
    (repo / "deploy.sh").write_text(MORE_CREDENTIALS)
    texts = every_format(capsys, tmp_path, "--repo", str(repo), "--static", "--only",
                         "rsync-exclude-unanchored")
    for fmt, text in texts.items():
        assert not PLANTED.findall(text), (fmt, PLANTED.findall(text))
        for kept in ("Cookie: ***", "docker login -u bob -p ***", "AccountName=a"):
            assert kept in text.replace("\\\"", "\""), (fmt, kept)


def test_a_credential_option_split_into_argv_words_is_masked(tmp_path, capsys, monkeypatch):
    """The report lists a step's arguments word by word; `-p` and its password were two
    words, each masked alone, so the password was printed (found by tests/test_fuzz.py)."""
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=1\npython train.py sshpass -p ARGV-PW-1 --lr 0.1 "
        "--password ARGV-PW-2 curl -u bob:ARGV-PW-3 --out /x\n")
    texts = every_format(capsys, tmp_path, "--repo", str(repo), "--static")
    for fmt, text in texts.items():
        assert not PLANTED.findall(text), (fmt, PLANTED.findall(text))
    doc = json.loads(texts["json-file"])
    args = doc["facts"]["job"]["job.sbatch"]["step"]["args"]
    assert args == ["sshpass", "-p", "***", "--lr", "0.1", "--password", "***", "curl", "-u",
                    "bob:***", "--out", "/x"], args
