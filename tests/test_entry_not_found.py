"""entry-not-found (issue 29): a step runs a Python file that does not exist.

The oracle is the real thing: for every error the check reports on a fixture cut from a
public repo, the real python (or the fixture's own wrapper, which only execs python) run
from each directory the check says the job may run in fails with "can't open file"
(python on a path that does not exist runs no code of the repo). Where the check is
silent on a pass fixture, the entry is a file from the directory the job runs in.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, git_repo, result_of, run_doctor, validate_report

CHECK = "entry-not-found"
FIXTURES = ROOT / "fixtures" / CHECK
HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\n"


def _case_args(case: Path) -> list:
    import yaml

    spec = yaml.safe_load((case / "case.yaml").read_text())
    return [a for s in spec["args"]["sbatch"] for a in ("--sbatch", s)]


def _copy(case: Path, tmp: Path) -> Path:
    repo = tmp / case.name
    shutil.copytree(case, repo, ignore=shutil.ignore_patterns("case.yaml", "SOURCE.md"))
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    return repo


def _report(repo: Path, *args: str) -> dict:
    proc = run_doctor("run", "--static", "--only", CHECK, "--repo", str(repo),
                      "--format", "json", *args, cwd=repo)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return result_of(validate_report(json.loads(proc.stdout)), CHECK)


FAILS = sorted(p.name for p in FIXTURES.iterdir() if p.name.startswith("fail_"))


@pytest.mark.parametrize("name", FAILS)
def test_each_error_is_what_the_real_python_does(name, tmp_path):
    """Every error: python, run from each directory the job may start in, cannot open it."""
    case = FIXTURES / name
    repo = _copy(case, tmp_path)
    res = _report(repo, *_case_args(case))
    errors = [f for f in res["findings"] if f["severity"] == "error"]
    assert res["status"] == "fail" and errors, res
    for f in errors:
        data = f["data"]
        assert data["workdirs"], f
        for workdir in data["workdirs"]:
            run = subprocess.run([sys.executable, data["entry"]], cwd=repo / workdir,
                                 capture_output=True, text=True, timeout=30)
            assert run.returncode == 2 and "can't open file" in run.stderr, (f, run.stderr)
        if data["suggestion"]:   # the file the message names is there
            assert (repo / data["suggestion"]).is_file(), f


def test_through_a_wrapper_the_real_wrapper_fails_as_reported(tmp_path):
    """`srun site_launch.sh run.py train.py configs/350M.yml`, the launcher running
    `python3 "$@"`: the finding is at the srun line, and the fixture's wrapper, run as
    srun runs it from the submit directory, ends as the check says."""
    case = FIXTURES / "fail_through_wrapper"
    repo = _copy(case, tmp_path)
    res = _report(repo, "--sbatch", "job.sbatch")
    (f,) = res["findings"]
    assert f["location"] == {"path": "job.sbatch", "line": 5} and f["data"]["entry"] == "run.py"
    assert f["severity"] == "error" and "job.sbatch:5 runs run.py, which does not exist" in \
        f["message"]
    line = (repo / "job.sbatch").read_text().splitlines()[4]
    argv = shlex.split(line)
    assert argv[0] == "srun"
    run = subprocess.run(["bash", *argv[1:]], cwd=repo, capture_output=True, text=True,
                         timeout=30, env={**os.environ, "PATH": os.environ["PATH"]})
    assert run.returncode == 2 and "can't open file" in run.stderr and "run.py" in run.stderr
    # the same job with the program the repo has starts
    ok = subprocess.run(["bash", argv[1], "train.py", "configs/350M.yml"], cwd=repo,
                        capture_output=True, text=True, timeout=30)
    assert ok.returncode == 0, ok.stderr


def test_pass_fixture_entries_exist_where_the_job_runs(tmp_path):
    """The 4D-Flow jobs, submitted from scripts/, run ../src/...: files from there."""
    case = FIXTURES / "pass_relative_to_script_dir"
    repo = _copy(case, tmp_path)
    res = _report(repo, *_case_args(case))
    assert res["status"] == "pass", res
    for script in ("scripts/train_seg.sh", "scripts/centerline_cross_sections.sh"):
        for word in (repo / script).read_text().split():
            if word.endswith(".py"):
                assert (repo / "scripts" / word).is_file(), word


def test_the_user_sees_each_link_with_its_file_and_line(tmp_path):
    case = FIXTURES / "fail_apptainer_entry_elsewhere"
    repo = _copy(case, tmp_path)
    proc = run_doctor("run", "--static", "--only", CHECK, "--repo", str(repo),
                      *_case_args(case), cwd=repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = " ".join(proc.stdout.split())
    assert "scripts/duplicates.sh:7 runs duplicates.py, which does not exist" in out, out
    assert "the repo has utils/duplicates.py" in out
    assert "scripts/h5.sh:5 runs save_h5.py" in out and "notebooks/save_h5.py" in out


def test_doctor_fix_unsafe_points_the_step_at_the_moved_file(tmp_path):
    case = FIXTURES / "fail_moved_in_refactor"
    repo = _copy(case, tmp_path)
    safe = run_doctor("fix", "--repo", str(repo), "--select", CHECK, "--write",
                      "--sbatch", "seg_train.sh", cwd=repo)
    assert "train.py \"$@\"" in (repo / "seg_train.sh").read_text(), safe.stdout  # unsafe only
    proc = run_doctor("fix", "--repo", str(repo), "--select", CHECK, "--unsafe", "--write",
                      "--sbatch", "seg_train.sh", cwd=repo)
    assert "Traceback" not in proc.stderr, proc.stderr
    line = (repo / "seg_train.sh").read_text().splitlines()[6]
    assert line == 'python -u src/training/train.py "$@"', line
    assert _report(repo, "--sbatch", "seg_train.sh")["status"] == "pass"


# Where a link is unknown the check says nothing; each script is one case, in one repo.
SILENT = {
    "var.sbatch": HEAD + "srun python $CODE_DIR/train.py\n",
    "cd_var.sbatch": HEAD + "cd $WORK/checkout\nsrun python main.py\n",
    "abs.sbatch": HEAD + "srun python /cluster/work/proj/train.py\n",
    "pyxis.sbatch": HEAD + "srun --container-image=nvcr.io/nvidia/pytorch:24.01-py3 "
                           "python /workspace/train.py\n"
                           "srun --container-image=img.sqsh python train.py\n",
    "apptainer_pwd.sbatch": HEAD + "apptainer exec --pwd /opt/app img.sif python train.py\n",
    "clone.sbatch": HEAD + "git clone https://github.com/x/Megatron-LM\n"
                           "srun python Megatron-LM/pretrain_gpt.py\n",
    "cd_clone.sbatch": HEAD + "git clone https://github.com/x/y code\ncd code\n"
                              "srun python train.py\n",
    "heredoc.sbatch": HEAD + "cat > gen.py <<'EOF'\nprint('hi')\nEOF\nsrun python gen.py\n",
    "cp.sbatch": HEAD + "cp templates/run_tmpl.py run_now.py\nsrun python run_now.py\n",
    "template.sbatch": HEAD + "srun python3 {{ CODE }}/run.py\n",
    "ok.sbatch": HEAD + "cd src\nsrun python train.py\n",
}


def test_unknown_links_are_silent_and_known_files_pass(tmp_path):
    repo = git_repo(tmp_path / "repo", {**SILENT, "src/train.py": "print(1)\n",
                                        "templates/run_tmpl.py": "print(1)\n"})
    for name in SILENT:
        res = _report(repo, "--sbatch", name)
        assert not res["findings"], (name, res["findings"])


def test_a_file_an_earlier_command_may_make_is_a_warning_naming_it(tmp_path):
    repo = git_repo(tmp_path / "repo", {
        "job.sbatch": HEAD + "wget -q https://example.org/tools/prep.py\nsrun python prep.py\n",
        "train.py": "print(1)\n"})
    (f,) = _report(repo, "--sbatch", "job.sbatch")["findings"]
    assert f["severity"] == "warning" and "job.sbatch:4" in f["data"]["producer"], f


def test_a_container_that_binds_the_working_directory_runs_the_repo_file(tmp_path):
    """apptainer exec|run without --pwd/--contain starts in the host's working directory,
    bound: a relative entry missing there is an error (DataAugmentation's scripts)."""
    repo = git_repo(tmp_path / "repo", {
        "job.sbatch": HEAD + "apptainer exec --nv img.sif python trian.py\n",
        "train.py": "print(1)\n"})
    (f,) = _report(repo, "--sbatch", "job.sbatch")["findings"]
    assert f["severity"] == "error" and f["data"]["suggestion"] == "train.py", f


def test_a_module_the_repo_package_does_not_have(tmp_path):
    """`python -m pkg.trainer` where pkg/ is the repo's package and has train.py: the real
    `python -m` fails with "No module named" (pkg/__init__.py is empty: nothing of the
    repo runs). An installed top-level module, and a package that extends its __path__,
    are not judged; under src/ (an install) it is a warning."""
    repo = git_repo(tmp_path / "repo", {
        "job.sbatch": HEAD + "srun python -m pkg.trainer --lr 1\n",
        "ok.sbatch": HEAD + "srun python -m pkg.train\npython -m pip --version\n"
                            "srun python -m ext.part\n",
        "src.sbatch": HEAD + "srun python -m tool.cli\n",
        "pkg/__init__.py": "", "pkg/train.py": "print('train')\n",
        "ext/__init__.py": "__path__ = __import__('pkgutil').extend_path(__path__, __name__)\n",
        "src/tool/__init__.py": "", "src/tool/main.py": "print(1)\n"})
    (f,) = _report(repo, "--sbatch", "job.sbatch")["findings"]
    assert f["severity"] == "error" and f["location"] == {"path": "job.sbatch", "line": 4}, f
    assert "there is no module pkg.trainer" in f["message"] and \
        "Run `python -m pkg.train`" in f["fix"], f
    run = subprocess.run([sys.executable, "-m", f["data"]["entry"]], cwd=repo,
                         capture_output=True, text=True, timeout=30)
    assert run.returncode == 1 and "No module named pkg.trainer" in run.stderr, run.stderr
    assert not _report(repo, "--sbatch", "ok.sbatch")["findings"]
    (w,) = _report(repo, "--sbatch", "src.sbatch")["findings"]
    assert w["severity"] == "warning" and w["data"]["module"] == "tool.cli", w


def test_a_script_only_under_src_is_not_found_from_the_repo_root(tmp_path):
    """`srun python train.py` from the repo root, the file being src/train.py: python
    does not look in src/ for a script path (the resolver that package-not-importable uses
    does, for modules)."""
    repo = git_repo(tmp_path / "repo", {"job.sbatch": HEAD + "srun python train.py\n",
                                        "src/train.py": "print(1)\n"})
    (f,) = _report(repo, "--sbatch", "job.sbatch")["findings"]
    assert f["severity"] == "error" and f["data"]["suggestion"] == "src/train.py", f
    run = subprocess.run([sys.executable, "train.py"], cwd=repo, capture_output=True,
                         text=True, timeout=30)
    assert run.returncode == 2 and "can't open file" in run.stderr


def test_a_project_directory_between_the_root_and_the_script_may_be_the_submit_directory(
        tmp_path):
    """A repo of several projects is submitted from a project directory
    (`cd proj && sbatch run-scripts/bench/ok.sh`, as LUMI-AI-example's file-formats/):
    `python compare.py` finds proj/compare.py there, so the file is not known to be
    missing. A file that no directory between the root and the script holds stays an
    error naming each, and the real python fails from each of them."""
    repo = git_repo(tmp_path / "repo", {
        "proj/run-scripts/bench/ok.sh": HEAD + "srun python compare.py\n",
        "proj/run-scripts/bench/bad.sh": HEAD + "srun python compaer.py\n",
        "proj/compare.py": "print(1)\n"})
    assert not _report(repo, "--sbatch", "proj/run-scripts/bench/ok.sh")["findings"]
    (f,) = _report(repo, "--sbatch", "proj/run-scripts/bench/bad.sh")["findings"]
    assert f["severity"] == "error", f
    for looked in ("proj/compaer.py", "proj/run-scripts/compaer.py",
                   "proj/run-scripts/bench/compaer.py"):
        assert looked in f["message"], f["message"]
    for d in ("", "proj", "proj/run-scripts", "proj/run-scripts/bench"):
        run = subprocess.run([sys.executable, "compaer.py"], cwd=repo / d,
                             capture_output=True, text=True, timeout=30)
        assert run.returncode == 2 and "can't open file" in run.stderr, (d, run.stderr)
