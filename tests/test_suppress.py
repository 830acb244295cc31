"""Suppression as people know it (issue 28): `# doctor: ignore[id] reason` on the line or
alone on the line above, in a job script, a YAML config and Python; `per-file-ignores`
in the settings; `--baseline`/`--write-baseline`, matched as `doctor diff` matches
findings. Real git repos, the real CLI; every report is validated against the schema."""
from __future__ import annotations

import json

from conftest import (git_repo, one_line_exit_2, result_of, run_doctor, run_json,
                      validate_report)

NCCL = "nccl-env-deprecated"
LOADER = "dataloader-option-conflict"
API = "torch-api-mismatch"
SECRET = "hf_suppressSecret4d9a8e7f6c5b"


def script(line6: str, line5: str = "export NCCL_DEBUG=WARN") -> str:
    """A job script whose line 6 sets the renamed NCCL_ASYNC_ERROR_HANDLING (a warning
    of nccl-env-deprecated at line 6)."""
    return ("#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --gpus-per-node=4\n"
            f"export HF_TOKEN={SECRET}\n{line5}\n{line6}\nsrun python train.py\n")


def nccl_run(tmp_path, line6: str, line5: str = "export NCCL_DEBUG=WARN",
             extra: dict | None = None, *args: str) -> tuple:
    repo = git_repo(tmp_path / "repo", {"slurm/train.sbatch": script(line6, line5),
                                        "train.py": "print(1)\n", **(extra or {})})
    return run_json("--repo", str(repo), "--static", "--only", NCCL, "--torch-version",
                    "2.5.1", "--fail-on", "warning", *args)


def suppressed(doc: dict, check: str) -> list:
    return result_of(doc, check).get("suppressed", [])


RENAMED = "export NCCL_ASYNC_ERROR_HANDLING=1"


def test_unsuppressed_finding_fails(tmp_path):
    code, doc = nccl_run(tmp_path, RENAMED)
    res = result_of(doc, NCCL)
    assert code == 1 and res["status"] == "fail"
    assert res["findings"][0]["location"] == {"path": "slurm/train.sbatch", "line": 6}
    assert "suppressed" not in res


def test_shell_comment_on_the_line(tmp_path):
    code, doc = nccl_run(tmp_path, f"{RENAMED}  # doctor: ignore[{NCCL}] old cluster, {SECRET}")
    res = result_of(doc, NCCL)
    assert code == 0 and res["status"] == "pass" and res["findings"] == []
    [s] = res["suppressed"]
    assert s["suppressed_by"] == "inline" and s["location"]["line"] == 6
    assert s["reason"].startswith("old cluster, ") and SECRET not in json.dumps(doc)
    assert doc["summary"]["status"] == "pass"


def test_shell_comment_alone_on_the_line_above(tmp_path):
    code, doc = nccl_run(tmp_path, RENAMED, line5=f"  # doctor: ignore[{NCCL}]")
    [s] = suppressed(doc, NCCL)
    assert code == 0 and s["reason"] == "no reason given"


def test_shell_comment_after_a_command_on_the_line_above_is_that_lines(tmp_path):
    code, doc = nccl_run(tmp_path, RENAMED,
                         line5=f"export NCCL_DEBUG=WARN  # doctor: ignore[{NCCL}]")
    assert code == 1 and not suppressed(doc, NCCL)


def test_shell_text_that_is_no_comment_suppresses_nothing(tmp_path):
    """In a string, in a here-document, or inside a word, `#` starts no comment."""
    code, doc = nccl_run(tmp_path, f'export NCCL_ASYNC_ERROR_HANDLING="1 # doctor: ignore[{NCCL}]"',
                         line5=f'echo "# doctor: ignore[{NCCL}]"')
    assert code == 1 and not suppressed(doc, NCCL)
    code, doc = nccl_run(tmp_path / "b", RENAMED,
                         line5=f"cat <<EOF\n# doctor: ignore[{NCCL}]\nEOF")
    res = result_of(doc, NCCL)
    assert code == 1 and res["findings"][0]["location"]["line"] == 8, res
    assert not suppressed(doc, NCCL)


def test_another_checks_id_suppresses_nothing(tmp_path):
    code, doc = nccl_run(tmp_path, f"{RENAMED}  # doctor: ignore[hip-alloc-conf]")
    assert code == 1 and not suppressed(doc, NCCL)
    assert not any(r["id"] == "ignore-comment-invalid" for r in doc["results"])


def test_unknown_id_and_bare_comment_warn_and_suppress_nothing(tmp_path):
    code, doc = nccl_run(tmp_path, f"{RENAMED}  # doctor: ignore[nccl-env-deprecatd]",
                         line5="# doctor: ignore  (everything: refused, as a bare noqa)")
    assert code == 1 and not suppressed(doc, NCCL)
    bad = result_of(doc, "ignore-comment-invalid")
    assert bad["severity"] == "warning" and bad["status"] == "fail"
    by_line = {f["location"]["line"]: f["message"] for f in bad["findings"]}
    assert "did you mean 'nccl-env-deprecated'" in by_line[6], by_line
    assert "names no check" in by_line[5], by_line


def test_a_tag_names_the_check(tmp_path):
    code, doc = nccl_run(tmp_path, f"{RENAMED}  # doctor: ignore[nccl] the nccl tag")
    assert code == 0 and suppressed(doc, NCCL)[0]["reason"] == "the nccl tag"


# ---- YAML ---------------------------------------------------------------------------

def loader_run(tmp_path, config: str) -> tuple:
    repo = git_repo(tmp_path / "repo", {"configs/train.yaml": config})
    return run_json("--repo", str(repo), "--static", "--only", LOADER,
                    "--torch-version", "2.5.1")


def test_yaml_comment_on_the_line_and_above(tmp_path):
    plain = "data:\n  num_workers: 0\n  prefetch_factor: 2\n"
    code, doc = loader_run(tmp_path / "a", plain)
    assert code == 1 and result_of(doc, LOADER)["findings"][0]["location"]["line"] == 3
    code, doc = loader_run(tmp_path / "b", plain.replace(
        "2\n", f"2  # doctor: ignore[{LOADER}] torch 1.x only\n"))
    [s] = suppressed(doc, LOADER)
    assert code == 0 and s["reason"] == "torch 1.x only" and s["suppressed_by"] == "inline"
    code, doc = loader_run(tmp_path / "c", plain.replace(
        "  prefetch", f"  # doctor: ignore[{LOADER}]\n  prefetch"))
    assert code == 0 and suppressed(doc, LOADER)


def test_yaml_text_that_is_no_comment_suppresses_nothing(tmp_path):
    """A block scalar's line and a quoted value are text, whatever they hold."""
    config = (f"data:\n  num_workers: 0\n  note: |\n    # doctor: ignore[{LOADER}]\n"
              f"  prefetch_factor: 2\n  name: \"a # doctor: ignore[{LOADER}]\"\n")
    code, doc = loader_run(tmp_path, config)
    res = result_of(doc, LOADER)
    assert code == 1 and res["findings"][0]["location"]["line"] == 5, res
    assert not suppressed(doc, LOADER)


# ---- Python -------------------------------------------------------------------------

SHARD = "    return F.fully_shard(model, auto_wrap_policy=policy)"


def api_run(tmp_path, body: str) -> tuple:
    repo = git_repo(tmp_path / "repo", {"train.py": (
        "import torch.distributed._composable.fsdp as F\n\n\n"
        f"def shard(model, policy):\n{body}\n")})
    # no job script runs train.py: the finding is a warning (doctor/job/closure.py cap)
    return run_json("--repo", str(repo), "--static", "--only", API,
                    "--torch-version", "2.13.0", "--fail-on", "warning")


def test_python_comment_on_the_line_and_above(tmp_path):
    code, doc = api_run(tmp_path / "a", SHARD)
    assert code == 1 and result_of(doc, API)["findings"][0]["location"]["line"] == 5
    code, doc = api_run(tmp_path / "b", f"{SHARD}  # doctor: ignore[{API}] patched torch")
    assert code == 0 and suppressed(doc, API)[0]["reason"] == "patched torch"
    code, doc = api_run(tmp_path / "c", f"    # doctor: ignore[{API}]\n{SHARD}")
    assert code == 0 and suppressed(doc, API)


def test_python_string_is_no_comment(tmp_path):
    on_line = SHARD.replace("policy)", f'policy or "# doctor: ignore[{API}]")')
    code, doc = api_run(tmp_path / "a", on_line)
    assert code == 1 and not suppressed(doc, API)
    above = f'    x = """\n# doctor: ignore[{API}]\n"""\n{SHARD}'
    code, doc = api_run(tmp_path / "b", above)
    assert code == 1 and result_of(doc, API)["findings"][0]["location"]["line"] == 8
    assert not suppressed(doc, API)


# ---- per-file-ignores ---------------------------------------------------------------

def test_per_file_ignores(tmp_path):
    code, doc = nccl_run(tmp_path / "a", RENAMED, extra={
        "doctor.yaml": f'per-file-ignores:\n  "slurm/*.sbatch": [{NCCL}]\n'})
    [s] = suppressed(doc, NCCL)
    assert code == 0 and s["suppressed_by"] == "per-file-ignores"
    assert s["reason"] == "slurm/*.sbatch"
    # a name without `/` is that file anywhere; a glob that matches nothing, nothing
    code, doc = nccl_run(tmp_path / "b", RENAMED, extra={
        "doctor.yaml": f'per-file-ignores:\n  "train.sbatch": [{NCCL}]\n'})
    assert code == 0 and suppressed(doc, NCCL)
    code, doc = nccl_run(tmp_path / "c", RENAMED, extra={
        "doctor.yaml": f'per-file-ignores:\n  "tests/**": [{NCCL}]\n'})
    assert code == 1 and not suppressed(doc, NCCL)


def test_per_file_ignores_unknown_id_is_exit_2(tmp_path):
    repo = git_repo(tmp_path / "repo", {
        "slurm/train.sbatch": script(RENAMED), "train.py": "",
        "doctor.yaml": 'per-file-ignores:\n  "slurm/**": [nccl-env-deprecatd]\n'})
    proc = run_doctor("run", "--repo", str(repo), "--static", "--only", NCCL)
    one_line_exit_2(proc, "per-file-ignores", "nccl-env-deprecatd", "nccl-env-deprecated")
    (repo / "doctor.yaml").write_text('per-file-ignores:\n  "slurm/**": nccl\n')
    proc = run_doctor("run", "--repo", str(repo), "--static", "--only", NCCL)
    one_line_exit_2(proc, "per-file-ignores", "not a list")


# ---- the baseline -------------------------------------------------------------------

CONFLICT = "data:\n  num_workers: 0\n  prefetch_factor: 2\n"


def test_baseline_round_trip(tmp_path):
    repo = git_repo(tmp_path / "repo", {"configs/train.yaml": CONFLICT})
    base = tmp_path / "baseline.json"
    args = ("--repo", str(repo), "--static", "--only", LOADER, "--torch-version", "2.5.1")
    proc = run_doctor("run", "--format", "json", *args, "--write-baseline", str(base))
    assert proc.returncode == 0 and f"wrote 1 finding to {base}" in proc.stderr, proc.stderr
    # the report of that run says what the next one will say: accepted, exit 0
    doc = validate_report(json.loads(proc.stdout))
    assert doc["summary"]["exit_code"] == 0 and suppressed(doc, LOADER)
    assert "written by this run" in suppressed(doc, LOADER)[0]["reason"]
    written = json.loads(base.read_text())
    assert written["doctor_baseline"] == 1 and written["findings"][0]["check"] == LOADER
    # the same findings are accepted, also once their line moved
    (repo / "configs/train.yaml").write_text("# moved\n" + CONFLICT)
    code, doc = run_json(*args, "--baseline", str(base))
    [s] = suppressed(doc, LOADER)
    assert code == 0 and s["suppressed_by"] == "baseline" and s["location"]["line"] == 4
    assert s["reason"] == str(base)
    # a new finding fails, and it alone is reported
    (repo / "configs/eval.yaml").write_text(CONFLICT)
    code, doc = run_json(*args, "--baseline", str(base))
    res = result_of(doc, LOADER)
    assert code == 1 and [f["location"]["path"] for f in res["findings"]] == ["configs/eval.yaml"]
    assert [s["location"]["path"] for s in res["suppressed"]] == ["configs/train.yaml"]
    # the baseline holds one such finding of train.yaml: a second one is new
    (repo / "configs/eval.yaml").unlink()
    (repo / "configs/train.yaml").write_text("# moved\n" + CONFLICT + CONFLICT.replace(
        "data:", "val:"))
    code, doc = run_json(*args, "--baseline", str(base))
    res = result_of(doc, LOADER)
    assert code == 1 and [f["location"]["line"] for f in res["findings"]] == [7]
    assert [s["location"]["line"] for s in res["suppressed"]] == [4]
    (repo / "configs/train.yaml").write_text(CONFLICT)
    (repo / "configs/eval.yaml").write_text(CONFLICT)
    # a JSON report is a baseline too: its findings and those it shows accepted
    report = tmp_path / "report.json"
    run_doctor("run", *args, "--baseline", str(base), "--json", str(report))
    code, doc = run_json(*args, "--baseline", str(report))
    assert code == 0 and len(suppressed(doc, LOADER)) == 2


def test_baseline_that_is_missing_or_no_baseline_is_exit_2(tmp_path):
    repo = git_repo(tmp_path / "repo", {"configs/train.yaml": CONFLICT})
    args = ("run", "--repo", str(repo), "--static", "--only", LOADER)
    proc = run_doctor(*args, "--baseline", str(tmp_path / "nope.json"))
    one_line_exit_2(proc, "baseline file not found")
    (tmp_path / "bad.json").write_text("{not json")
    one_line_exit_2(run_doctor(*args, "--baseline", str(tmp_path / "bad.json")),
                    "not valid JSON")
    (tmp_path / "other.json").write_text('{"findings": 3}')
    one_line_exit_2(run_doctor(*args, "--baseline", str(tmp_path / "other.json")),
                    "is not a doctor baseline")


def test_sbatch_submits_a_job_whose_findings_the_baseline_accepts(tmp_path):
    """`doctor sbatch --baseline`: the gate refuses only what is new (a fake sbatch
    first on PATH prints the job id)."""
    repo = git_repo(tmp_path / "repo", {"slurm/train.sbatch": script(RENAMED),
                                        "train.py": "print(1)\n"})
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "sbatch").write_text("#!/bin/bash\necho 4242\n")
    (fake / "sbatch").chmod(0o755)
    env = {"PATH": f"{fake}:/usr/bin:/bin"}
    args = ("--repo", str(repo), "--only", NCCL, "--torch-version", "2.5.1",
            "--fail-on", "warning")
    base = tmp_path / "baseline.json"
    proc = run_doctor("run", *args, "--static", "--write-baseline", str(base))
    assert proc.returncode == 0, proc.stderr
    gate = ("sbatch", *args, str(repo / "slurm/train.sbatch"))
    proc = run_doctor(*gate, env=env)
    assert proc.returncode == 1 and proc.stdout == "", proc.stderr
    proc = run_doctor(*gate[:1], "--baseline", str(base), *gate[1:], env=env)
    assert proc.returncode == 0 and proc.stdout == "4242\n", proc.stderr


def test_gathered_report_keeps_what_each_node_accepted(tmp_path):
    """`doctor run --gather`: two real doctor processes on loopback; the merged report
    shows the finding both nodes accepted once, with both nodes named."""
    from test_gather import finish, free_port, no_leftovers, start

    repo = git_repo(tmp_path / "repo", {
        "slurm/train.sbatch": script(f"{RENAMED}  # doctor: ignore[{NCCL}] old image"),
        "train.py": "print(1)\n"})
    port = free_port()
    procs = [start(r, 2, port, repo, "--static", "--gather", "--torch-version", "2.5.1",
                   "--gather-timeout", "20")
             for r in range(2)]
    (code, out, err), _ = finish(procs)
    no_leftovers(procs)
    doc = json.loads(out)
    validate_report(doc)
    res = result_of(doc, NCCL)
    assert code == 0 and res["status"] == "pass" and res["findings"] == [], err
    [s] = res["suppressed"]
    assert (s["suppressed_by"], s["reason"], s["data"]["node"]) == \
        ("inline", "old image", "node[1-2]")
