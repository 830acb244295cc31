"""The job's code is what the job runs (issue 26, item 1): a full run's code checks judge
the files the steps of the job scripts run (each entry and the repo modules it imports),
not every .py file of the repo. A file no step reaches is never an error; a repo with no
job script is scanned, tests left out, and warned about at most."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git_repo, result_of, run_json

# A rank whose file fails to load `continue`s past the all_reduce its peers wait in
# (fixtures/collective-on-error-path/fail_after_swallow_continue): an error when a job
# runs it.
BUG = """\
import torch
import torch.distributed as dist


def load(path):
    return torch.load(path)


def run(paths, model):
    total = torch.zeros(1)
    for path in paths:
        try:
            batch = load(path)
        except (OSError, RuntimeError) as e:
            print(f"skipping {path}: {e}")
            continue
        total += model(batch).sum()
        torch.distributed.all_reduce(total)
    return total
"""
BUG_LINE = 18
JOB = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\nsrun {}\n"



def _findings(repo: Path, check: str = "collective-on-error-path") -> tuple:
    code, doc = run_json("--static", "--repo", str(repo), "--only", check)
    res = result_of(doc, check)
    return code, sorted((f["location"]["path"], f["location"]["line"], f["severity"],
                         f["message"]) for f in res["findings"])


def _layout(job: bool) -> dict:
    files = {"train.py": "from a.b import run\n\nif __name__ == '__main__':\n    run([], None)\n",
             "a/__init__.py": "", "a/b.py": BUG, "other/unreached.py": BUG,
             "tests/test_x.py": BUG, "test_top.py": BUG}
    if job:
        files["slurm/train.sbatch"] = JOB.format("python train.py")
    return files


def test_a_job_script_judges_what_its_step_imports_and_nothing_else(tmp_path):
    """a/b.py, imported by the entry, keeps its error; the same code in a file no step
    reaches, and in the tests, is not judged."""
    code, found = _findings(git_repo(tmp_path, _layout(job=True)))
    assert [(p, n, s) for p, n, s, _ in found] == [("a/b.py", BUG_LINE, "error")], found
    assert code == 1


def test_without_a_job_script_the_repo_scan_only_warns_and_says_why(tmp_path):
    """No job script ties any file in: each finding is a warning saying so; test files
    are not scanned."""
    code, found = _findings(git_repo(tmp_path, _layout(job=False)))
    assert [(p, n, s) for p, n, s, _ in found] == [
        ("a/b.py", BUG_LINE, "warning"), ("other/unreached.py", BUG_LINE, "warning")], found
    assert all("no job script ties this file in" in m for *_, m in found), found
    assert code == 0


def test_a_module_entry_reaches_its_package_through_relative_imports(tmp_path):
    """`python -m pkg.train` runs pkg/__init__.py and pkg/train.py; `from .util import
    run` brings pkg/util.py in."""
    repo = git_repo(tmp_path, {
        "pkg/__init__.py": "", "pkg/train.py": "from .util import run\nrun([], None)\n",
        "pkg/util.py": BUG, "pkg/unused.py": BUG,
        "job.sbatch": JOB.format("python -m pkg.train")})
    code, found = _findings(repo)
    assert [(p, s) for p, _, s, _ in found] == [("pkg/util.py", "error")], found


def test_a_console_script_of_the_repo_runs_its_module(tmp_path):
    """`srun mytrain`, a [project.scripts] entry of the repo's own pyproject.toml: the
    module it names is the entry."""
    repo = git_repo(tmp_path, {
        "pyproject.toml": "[project]\nname = 'x'\nversion = '0'\n"
                          "[project.scripts]\nmytrain = 'pkg.cli:main'\n",
        "pkg/__init__.py": "", "pkg/cli.py": "from pkg.loop import run\n\n\ndef main():\n"
                                              "    run([], None)\n",
        "pkg/loop.py": BUG, "pkg/other.py": BUG,
        "job.sbatch": JOB.format("mytrain --epochs 3")})
    code, found = _findings(repo)
    assert [(p, s) for p, _, s, _ in found] == [("pkg/loop.py", "error")], found


def test_an_entrys_sys_path_edit_brings_its_modules_in(tmp_path):
    """tools/run.py appends tools/vendor to sys.path and imports `helper` from there:
    tools/vendor/helper.py is the job's code."""
    repo = git_repo(tmp_path, {
        "tools/run.py": "import os\nimport sys\n\nsys.path.append(os.path.join("
                        "os.path.dirname(os.path.abspath(__file__)), 'vendor'))\n"
                        "import helper  # noqa: E402\n\nhelper.run([], None)\n",
        "tools/vendor/helper.py": BUG, "tools/vendor/spare.py": BUG,
        "job.sbatch": JOB.format("python tools/run.py")})
    code, found = _findings(repo)
    assert [(p, s) for p, _, s, _ in found] == [("tools/vendor/helper.py", "error")], found


def test_an_entry_behind_an_unread_variable_is_judged_only_as_a_warning(tmp_path):
    """`python ${CODE_DIR}/train.py`: train.py of this repo if CODE_DIR is this checkout,
    which nothing shows. Its code is what the checks read (the unreached file is not),
    and a finding there says the link is unknown instead of being an error."""
    files = _layout(job=False)
    files["slurm/train.sbatch"] = JOB.format("python ${CODE_DIR}/train.py")
    code, found = _findings(git_repo(tmp_path, files))
    assert [(p, n, s) for p, n, s, _ in found] == [("a/b.py", BUG_LINE, "warning")], found
    assert "only if the variable in ${CODE_DIR}/train.py" in found[0][3], found
    assert code == 0


@pytest.mark.parametrize("config,key,run", [
    ("configs/config.yaml", "_target_", "python train.py"),            # Hydra
    ("exp/fit.yaml", "class_path", "python train.py --config exp/fit.yaml fit")])  # LightningCLI
def test_a_class_a_config_instantiates_is_the_jobs_code(tmp_path, config, key, run):
    """`_target_: models.net.Net` in the job's config (Hydra), or `class_path:` in the
    config a step names (LightningCLI): models/net.py runs, though no import names it."""
    repo = git_repo(tmp_path, {
        # (config_name: without one, Hydra loads no config, and config.yaml's class is
        # not shown to run)
        "train.py": "import hydra\n\n\n@hydra.main(config_path='configs', config_name="
                    "'config')\ndef main(cfg):\n"
                    "    hydra.utils.instantiate(cfg.model)\n",
        config: f"model:\n  {key}: models.net.Net\n",
        "models/__init__.py": "", "models/net.py": BUG, "models/old.py": BUG,
        "job.sbatch": JOB.format(run)})
    code, found = _findings(repo)
    assert [(p, s) for p, _, s, _ in found] == [("models/net.py", "error")], found


def test_the_jobs_pythonpath_brings_its_modules_in(tmp_path):
    """`export PYTHONPATH=lib`: `import helper` in the entry is lib/helper.py."""
    repo = git_repo(tmp_path, {
        "train.py": "import helper\n\nhelper.run([], None)\n",
        "lib/helper.py": BUG, "lib/spare.py": BUG,
        "job.sbatch": JOB.format("python train.py").replace(
            "srun", "export PYTHONPATH=lib\nsrun")})
    code, found = _findings(repo)
    assert [(p, s) for p, _, s, _ in found] == [("lib/helper.py", "error")], found


CLEAN = "print('clean')\n"


@pytest.mark.parametrize("job", [
    "cd pkg && srun python train.py", "cd pkg\nsrun python train.py",
    "srun --chdir=pkg python train.py", "srun -D pkg python train.py"])
def test_a_relative_working_directory_is_the_submit_directorys(tmp_path, job):
    """`cd pkg` (or srun's -D/--chdir) with a relative directory: relative to the submit
    directory, the repo root; the step runs pkg/train.py, not the root's train.py (which
    no step reaches, so it is not judged)."""
    repo = git_repo(tmp_path, {"train.py": BUG, "pkg/__init__.py": "", "pkg/train.py": BUG,
                            "slurm/train.sbatch": "#!/bin/bash\n#SBATCH --nodes=2\n" + job + "\n"})
    code, found = _findings(repo)
    assert [(p, s) for p, _, s, _ in found] == [("pkg/train.py", "error")], found
    assert code == 1


@pytest.mark.parametrize("call", ['importlib.import_module(f"models.{args.model}")',
                                  'importlib.import_module("models." + args.model)'])
def test_a_dynamic_import_brings_its_package_in_as_a_warning(tmp_path, call):
    """`import_module(f"models.{args.model}")`: the job runs a module of models/, the one
    the variable names, which the doctor cannot know; each is judged, as a warning that
    names the import (a module of another package is not judged)."""
    repo = git_repo(tmp_path, {
        "train.py": "import argparse\nimport importlib\n\np = argparse.ArgumentParser()\n"
                    f"args = p.parse_args()\nm = {call}\n",
        "models/__init__.py": "", "models/net.py": BUG, "other/unused.py": BUG,
        "job.sbatch": JOB.format("python train.py --model net")})
    code, found = _findings(repo)
    assert [(p, s) for p, _, s, _ in found] == [("models/net.py", "warning")], found
    assert "train.py:6 imports (`models.` and a variable)" in found[0][3], found
    assert code == 0


@pytest.mark.parametrize("run,expected", [
    ("python train.py --config configs/new.yaml", []),
    ("python train.py", [("legacy/trainer.py", "warning")])])
def test_a_config_the_job_does_not_load_brings_no_code_in(tmp_path, run, expected):
    """`_target_: legacy.trainer.train` in configs/old_experiment.yaml, while the job
    loads configs/new.yaml: legacy/trainer.py is not the job's code. When the doctor
    cannot tell which configs the job loads, it is judged as a warning."""
    repo = git_repo(tmp_path, {
        "train.py": "import argparse\nimport yaml\n\np = argparse.ArgumentParser()\n"
                    "p.add_argument('--config')\ncfg = yaml.safe_load(open(p.parse_args()"
                    ".config))\n",
        "configs/new.yaml": "lr: 1\n",
        "configs/old_experiment.yaml": "trainer:\n  _target_: legacy.trainer.train\n",
        "legacy/__init__.py": "", "legacy/trainer.py": BUG,
        "job.sbatch": JOB.format(run)})
    code, found = _findings(repo)
    assert [(p, s) for p, _, s, _ in found] == expected, found
    assert all("which configs it loads, the doctor cannot see" in m for *_, m in found)
    assert code == 0
