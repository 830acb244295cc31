"""submodule-missing (issue 29): a gitlink with no .gitmodules entry, or a declared submodule
not initialised in the checkout, that the job imports or runs from. The findings come from
the real CLI; the oracle is real git and real Python: `git clone` of the repo gives an
empty directory and the job's import fails with ModuleNotFoundError; with the doctor's
fix (the submodule declared with its URL) `git clone --recurse-submodules` fills it and the
import works (trusted test code, run on the clone)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT, result_of, run_doctor, validate_report

CHECK = "submodule-missing"
FIXTURES = ROOT / "fixtures" / CHECK
GITLINK = "ltr/external/PreciseRoIPooling"
IMPORT = "import ltr.external.PreciseRoIPooling.pytorch.prroi_pool as p; print(p.PrRoIPool2D)"
ENV = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
           GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "protocol.file.allow=always", *args], cwd=cwd,
                          check=True, capture_output=True, text=True, env=ENV).stdout


def _case(name: str, dest: Path) -> Path:
    """A fixture case as its setup.sh builds it (a git repo)."""
    shutil.copytree(FIXTURES / name, dest,
                    ignore=shutil.ignore_patterns("case.yaml", "setup.sh", "SOURCE.md"))
    subprocess.run(["bash", "-euo", "pipefail", str(FIXTURES / name / "setup.sh")], cwd=dest,
                   check=True, capture_output=True, env=ENV)
    return dest


def _run(repo: Path) -> tuple:
    proc = run_doctor("run", "--static", "--repo", str(repo), "--select", CHECK,
                      "--sbatch", str(repo / "job.sbatch"), "--format", "json")
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc, result_of(validate_report(json.loads(proc.stdout)), CHECK)


def _python(cwd: Path, code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, timeout=60, env=dict(os.environ, PYTHONPATH=""))


def test_ltmu_gitlink_without_gitmodules_is_an_error_and_a_clone_fails_to_import(tmp_path):
    repo = _case("fail_ltmu_gitlink_no_gitmodules", tmp_path / "ltmu")
    proc, res = _run(repo)
    assert proc.returncode == 1
    (f,) = res["findings"]
    assert f["severity"] == "error"
    assert f["location"] == {"path": "ltr/models/bbreg/atom_iou_net.py", "line": 4}
    assert f"{GITLINK} is a gitlink (commit 070a7950db6a) with no entry in .gitmodules" \
        in f["message"]
    assert "`from ltr.external.PreciseRoIPooling.pytorch.prroi_pool import PrRoIPool2D` at " \
        "ltr/models/bbreg/atom_iou_net.py:4" in f["message"]
    assert f"git submodule add URL {GITLINK}" in f["fix"]
    # the oracle: a real clone has an empty directory, and the import fails there
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(repo), str(clone))
    assert (clone / GITLINK).is_dir() and not any((clone / GITLINK).iterdir())
    ran = _python(clone, IMPORT)
    assert ran.returncode != 0 and "ModuleNotFoundError" in ran.stderr, ran.stderr
    proc, res = _run(clone)
    assert res["status"] == "fail" and res["findings"][0]["severity"] == "error"


def test_with_the_fix_a_recursive_clone_imports_and_the_doctor_is_silent(tmp_path):
    # the submodule's own repository (a local one: the test reaches no network)
    src = tmp_path / "PreciseRoIPooling"
    (src / "pytorch" / "prroi_pool").mkdir(parents=True)
    (src / "pytorch" / "__init__.py").write_text("")
    (src / "pytorch" / "prroi_pool" / "__init__.py").write_text("PrRoIPool2D = 'pool'\n")
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "commit", "-qm", "pool")
    repo = _case("fail_ltmu_gitlink_no_gitmodules", tmp_path / "ltmu")
    _, res = _run(repo)
    (step,) = res["findings"][0]["fix_options"][0]["steps"]
    assert step["lines"][:2] == [f"git rm --cached {GITLINK}", f"git submodule add URL {GITLINK}"]
    # the fix's commands, URL filled in
    _git(repo, "rm", "-q", "--cached", GITLINK)
    (repo / GITLINK).rmdir()
    _git(repo, "submodule", "add", "-q", str(src), GITLINK)
    _git(repo, "commit", "-qm", "Declare submodule")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", "--recurse-submodules", str(repo), str(clone))
    ran = _python(clone, IMPORT)
    assert ran.returncode == 0, ran.stderr
    for checkout in (repo, clone):
        proc, res = _run(checkout)
        assert res["status"] == "pass", res["findings"]
        assert proc.returncode == 0


def test_a_declared_submodule_not_initialised_here_and_the_update_that_fixes_it(tmp_path):
    src = tmp_path / "megatron"
    src.mkdir()
    (src / "pretrain_gpt.py").write_text("print('gpt')\n")
    _git(src, "init", "-q")
    _git(src, "add", "-A")
    _git(src, "commit", "-qm", "m")
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(FIXTURES / "fail_declared_not_initialised" / "job.sbatch", repo)
    _git(repo, "init", "-q")
    _git(repo, "submodule", "add", "-q", str(src), "Megatron-LM")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "import")
    clone = tmp_path / "clone"      # cloned without --recurse-submodules
    _git(tmp_path, "clone", "-q", str(repo), str(clone))
    proc, res = _run(clone)
    assert proc.returncode == 1
    (f,) = res["findings"]
    assert f["location"] == {"path": "job.sbatch", "line": 5}
    assert "declared in .gitmodules but not initialised" in f["message"]
    assert "the step at job.sbatch:5 runs Megatron-LM/pretrain_gpt.py" in f["message"]
    assert f["fix_options"][0]["steps"][0]["lines"] == [
        "git submodule update --init --recursive Megatron-LM"]
    _git(clone, "submodule", "update", "-q", "--init", "--recursive", "Megatron-LM")
    _, res = _run(clone)
    assert res["status"] == "pass"


def test_gitlinks_the_job_does_not_use_are_silent_and_pythonpath_only_warns(tmp_path):
    _, res = _run(_case("pass_gitlink_unused", tmp_path / "unused"))
    assert res["status"] == "pass"
    proc, res = _run(_case("fail_pythonpath_only", tmp_path / "pp"))
    assert proc.returncode == 0
    (f,) = res["findings"]
    assert (f["severity"], f["location"]["line"]) == ("warning", 4)
    assert "puts third_party/megatron on PYTHONPATH" in f["message"]
    assert "(no import the doctor can tie to it)" in f["message"]


def test_a_top_level_module_an_installed_package_may_provide_is_a_warning(tmp_path):
    # an empty `json/` at the root does not hide the installed json (an empty directory is
    # a namespace package, and a regular package of the name wins): python agrees
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\nsrun python train.py\n")
    (repo / "train.py").write_text("import json\nimport vendored.tool\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    for link in ("json", "vendored"):
        _git(repo, "update-index", "--add", "--cacheinfo",
             f"160000,070a7950db6a945e30e8e3296204a1e975f131e8,{link}")
    _git(repo, "commit", "-qm", "import")
    (repo / "json").mkdir()
    (repo / "vendored").mkdir()
    assert _python(repo, "import json; print(json.dumps(1))").returncode == 0
    assert "ModuleNotFoundError" in _python(repo, "import vendored.tool").stderr
    _, res = _run(repo)
    got = {f["data"]["submodule"]: f["severity"] for f in res["findings"]}
    assert got == {"json": "warning", "vendored": "warning"}
    by = {f["data"]["submodule"]: f for f in res["findings"]}
    assert "unless a package of that name is installed" in by["json"]["message"]


def test_an_import_the_steps_are_not_shown_to_reach_is_a_warning(tmp_path):
    # LTMU's own layout: the job runs PrDiMP_MU/ltr/run_training.py, which puts PrDiMP_MU on
    # sys.path through a variable and imports its settings module by a formatted name; the
    # model that imports the pooling module is not in the closure the doctor follows
    repo = _case("fail_ltmu_gitlink_no_gitmodules", tmp_path / "ltmu")
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --nodes=1\n"
                                     "srun python ltr/run_training.py bbreg atom\n")
    (repo / "ltr" / "run_training.py").write_text(
        "import importlib, os, sys\n"
        "env_path = os.path.join(os.path.dirname(__file__), '..')\n"
        "if env_path not in sys.path:\n    sys.path.append(env_path)\n"
        "importlib.import_module('ltr.train_settings.{}.{}'.format(*sys.argv[1:3]))\n")
    (repo / "train.py").unlink()
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "the real entry")
    proc, res = _run(repo)
    assert proc.returncode == 0
    (f,) = res["findings"]
    assert (f["severity"], f["location"]["line"]) == ("warning", 4)
    assert "a file the doctor does not see the job's steps run" in f["message"]
