"""prerequisite-missing against real files: repos built in tmp dirs with the files really
present or absent (and a real producer script that really writes them), checked with the
real CLI; and the fallback forms the check calls errors really run, in a child process,
to show that a missing file sends them down the compute branch."""
from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from conftest import FIXTURES, run_doctor, validate_report

CHECK = "prerequisite-missing"
SEED = FIXTURES / CHECK / "fail_seed000_wind_cache_fallback"
# /tmp is node-local by default (a compute node's /tmp is not this one's); these repos live
# in pytest's tmp dirs, so their absolute paths are judged with a site profile that says so.
SITE_TMP_SHARED = "site: {local_paths: [/dev/shm]}\n"


def make_repo(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


def check(repo: Path, env: dict | None = None) -> dict:
    proc = run_doctor("run", "--repo", str(repo), "--only", CHECK, "--no-smoke",
                      "--format", "json", env=env)
    assert proc.stdout, proc.stderr
    doc = validate_report(json.loads(proc.stdout))
    result = next(r for r in doc["results"] if r["id"] == CHECK)
    assert result["status"] != "error", result["reason"]
    assert proc.returncode == (1 if result["status"] == "fail" and
                               result["severity"] == "error" else 0), proc.stderr
    result["facts"] = doc["facts"].get("prerequisites")
    return result


SBATCH = """\
    #!/bin/bash
    #SBATCH --nodes=2
    #SBATCH --ntasks-per-node=4
    srun python train.py
    """


# ---- seed 000: the real producer makes the real file ------------------------------
def test_seed000_missing_cache_is_an_error_until_its_producer_runs(tmp_path):
    repo = tmp_path / "topoflow"
    shutil.copytree(SEED, repo, ignore=shutil.ignore_patterns("case.yaml"))
    res = check(repo)
    assert (res["status"], res["severity"]) == ("fail", "error")
    [f] = res["findings"]
    assert f["data"]["resolved"] == str(repo / "wind_scanner_cache.pkl")
    assert f["data"]["fallback"] == "src/wind_scanning_cached.py:15 " \
                                    "self._precompute_all_orders()"
    assert f["data"]["producer"] == "scripts/precompute_wind_cache_ddp.py:14"
    # the command the fix gives, run for real, writes the file the job reads
    [cmd] = f["commands"]
    assert cmd == f"cd {repo} && python scripts/precompute_wind_cache_ddp.py"
    subprocess.run([sys.executable, "scripts/precompute_wind_cache_ddp.py"], cwd=repo,
                   env={**os.environ, "PYTHONPATH": str(repo)}, check=True, timeout=60)
    assert pickle.loads((repo / "wind_scanner_cache.pkl").read_bytes())["grid_h"] == 64
    res = check(repo)
    assert res["status"] == "pass", res["findings"]
    assert res["facts"]["judged"] == [str(repo / "wind_scanner_cache.pkl")]


def _run_seed_scanner(repo: Path, cache: Path) -> dict:
    """The seed's CachedWindScanning, run for real with its compute step recorded."""
    probe = textwrap.dedent("""
        import json, sys
        from src.wind_scanning_cached import CachedWindScanning
        called = []
        CachedWindScanning._precompute_all_orders = lambda self: called.append(True)
        s = CachedWindScanning(64, 128, num_sectors=16, cache_path=sys.argv[1])
        print(json.dumps({"computed": bool(called), "has_orders": hasattr(s, "cached_orders")}))
        """)
    out = subprocess.run([sys.executable, "-c", probe, str(cache)], cwd=repo, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(repo)}, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_seed000_fallback_really_computes_when_the_file_is_absent(tmp_path):
    repo = tmp_path / "topoflow"
    shutil.copytree(SEED, repo, ignore=shutil.ignore_patterns("case.yaml"))
    cache = repo / "wind_scanner_cache.pkl"
    assert _run_seed_scanner(repo, cache) == {"computed": True, "has_orders": False}
    cache.write_bytes(pickle.dumps({"sector_angles": [0.0], "cached_orders": {},
                                    "regional_cached_orders": {}}))
    assert _run_seed_scanner(repo, cache) == {"computed": False, "has_orders": True}


# ---- each form: the doctor's verdict, and what the code really does ---------------
FORMS = {
    # if os.path.exists(p): load  else: compute
    "exists_else": ("""\
        import os, pickle
        def get_stats(path):
            if os.path.exists(path):
                with open(path, "rb") as f:
                    return pickle.load(f)
            else:
                return compute_stats()
        """, "error"),
    # try: load  except FileNotFoundError: compute
    "try_except": ("""\
        import pickle
        def get_stats(path):
            try:
                with open(path, "rb") as f:
                    return pickle.load(f)
            except FileNotFoundError:
                return compute_stats()
        """, "error"),
    # if not exists: raise — the missing file stops the job: a warning, no fallback
    "raises": ("""\
        import os, pickle
        def get_stats(path):
            if not os.path.exists(path):
                raise FileNotFoundError(f"run prepare.py first: {path}")
            with open(path, "rb") as f:
                return pickle.load(f)
        """, "warning"),
}
COMPUTE = """
def compute_stats():
    import os
    open(os.environ["MARKER"], "w").write("computed")
    return {"mean": 0.0}
"""


@pytest.mark.parametrize("form", sorted(FORMS))
def test_fallback_forms(form, tmp_path):
    code, severity = FORMS[form]
    repo = make_repo(tmp_path / "repo", {
        "stats.py": textwrap.dedent(code) + COMPUTE,
        "paths.py": 'STATS_FILE = "stats.pkl"\n',
        "train.py": """\
            from paths import STATS_FILE
            from stats import get_stats
            print(get_stats(STATS_FILE))
            """,
        "prepare.py": """\
            import pickle
            from paths import STATS_FILE
            with open(STATS_FILE, "wb") as f:
                pickle.dump({"mean": 1.5}, f)
            """,
        "job.sbatch": SBATCH})
    res = check(repo)
    assert (res["status"], res["severity"]) == ("fail", severity), res
    [f] = res["findings"]
    assert f["location"] == {"path": "paths.py", "line": 1}
    assert f["data"]["producer"] == "prepare.py:3"
    assert (f["data"]["fallback"] is not None) == (severity == "error")
    # the same code, run for real with the file absent
    marker = tmp_path / "marker"
    run = subprocess.run([sys.executable, "train.py"], cwd=repo, capture_output=True,
                         text=True, env={**os.environ, "MARKER": str(marker)}, timeout=60)
    if severity == "error":
        assert run.returncode == 0 and marker.read_text() == "computed", run.stderr
    else:
        assert run.returncode != 0 and "FileNotFoundError" in run.stderr
        assert not marker.exists()
    # the producer writes the file: the doctor passes, and the code loads instead
    subprocess.run([sys.executable, "prepare.py"], cwd=repo, check=True, timeout=60)
    assert check(repo)["status"] == "pass"
    marker.unlink(missing_ok=True)
    run = subprocess.run([sys.executable, "train.py"], cwd=repo, capture_output=True,
                         text=True, env={**os.environ, "MARKER": str(marker)}, timeout=60)
    assert run.returncode == 0 and "1.5" in run.stdout and not marker.exists()


# ---- config values: environment, working directory, top directory ------------------
TRAIN_CFG = """\
    import sys
    print(open(sys.argv[-1]).read())
    """


def test_env_path_from_the_job_script_is_resolved_and_judged(tmp_path):
    data = tmp_path / "shared" / "era5"
    data.mkdir(parents=True)
    repo = make_repo(tmp_path / "repo", {
        "doctor.yaml": SITE_TMP_SHARED,
        "configs/train.yaml": "data:\n  train_path: ${oc.env:DATA_ROOT}/train.h5\n"
                              "  stats_file: $DATA_ROOT/stats.npz\n",
        "train.py": TRAIN_CFG,
        "job.sbatch": f"""\
            #!/bin/bash
            #SBATCH --nodes=1
            export DATA_ROOT={data}
            srun python train.py --config configs/train.yaml
            """})
    res = check(repo)
    assert (res["status"], res["severity"]) == ("fail", "warning")
    got = {f["data"]["resolved"]: f["location"] for f in res["findings"]}
    assert got == {str(data / "train.h5"): {"path": "configs/train.yaml", "line": 2},
                   str(data / "stats.npz"): {"path": "configs/train.yaml", "line": 3}}
    (data / "train.h5").write_bytes(b"\x89HDF\r\n\x1a\n")
    (data / "stats.npz").write_bytes(b"PK\x03\x04")
    assert check(repo)["status"] == "pass"


def test_relative_path_resolves_against_the_steps_working_directory(tmp_path):
    repo = make_repo(tmp_path / "repo", {
        "configs/train.yaml": "stats_file: stats.pkl\n",
        "run/.keep": "",
        "train.py": TRAIN_CFG,
        "stats.pkl": "not where the job looks",
        "job.sbatch": """\
            #!/bin/bash
            #SBATCH --nodes=1
            cd run
            srun python ../train.py --config ../configs/train.yaml
            """})
    res = check(repo)
    assert res["status"] == "fail", res
    assert [f["data"]["resolved"] for f in res["findings"]] == [str(repo / "run/stats.pkl")]
    shutil.move(str(repo / "stats.pkl"), str(repo / "run/stats.pkl"))
    assert check(repo)["status"] == "pass"


@pytest.mark.parametrize("value,why", [
    ("/doctor-no-such-top-{u}/cache/x.pkl", "its top directory /doctor-no-such-top-{u} does "
                                             "not exist on this node"),
    ("/dev/shm/doctor-{u}/x.pkl", "node-local"),
    ("${{oc.env:DOCTOR_UNSET_{u}}}/x.pkl", "$DOCTOR_UNSET_{u} is not set"),
    ("${{hydra:runtime.cwd}}/x.pkl", "is resolved only when the job runs"),
])
def test_paths_this_node_cannot_judge_are_skipped_with_the_reason(tmp_path, value, why):
    u = uuid.uuid4().hex[:8]
    repo = make_repo(tmp_path / "repo", {
        "configs/train.yaml": f"cache_file: {value.format(u=u)}\n",
        "train.py": TRAIN_CFG, "job.sbatch": SBATCH})
    res = check(repo)
    assert res["status"] == "skip" and why.format(u=u) in res["reason"], res["reason"]
    assert res["facts"]["judged"] == []


def test_outputs_hub_ids_and_classes_are_not_prerequisites(tmp_path):
    repo = make_repo(tmp_path / "repo", {
        "configs/train.yaml": """\
            output_dir: results/run1
            log_file: logs/train.log
            checkpoint_dir: ckpts
            tokenizer_path: gpt2
            ckpt_path: last
            model:
              class_path: model.LitModel
            vocab_file: vocab.txt
            """,
        "vocab.txt": "a\nb\n", "train.py": TRAIN_CFG, "job.sbatch": SBATCH})
    res = check(repo)
    assert res["status"] == "pass", res
    assert res["facts"]["judged"] == [str(repo / "vocab.txt")]


def test_static_mode_skips_it_saying_why(tmp_path):
    """The issue: --static runs it with the filesystem part skipped (here: all of it)."""
    repo = tmp_path / "topoflow"
    shutil.copytree(SEED, repo, ignore=shutil.ignore_patterns("case.yaml"))
    proc = run_doctor("run", "--repo", str(repo), "--static", "--format", "json")
    doc = validate_report(json.loads(proc.stdout))
    (res,) = [r for r in doc["results"] if r["id"] == CHECK]
    assert res["status"] == "skip" and "--static" in res["reason"], res
