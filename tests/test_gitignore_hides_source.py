"""gitignore-hides-source on real git repos through the real CLI; `git clone` is the oracle
for "a fresh clone lacks it", and the finding's own commands are run to prove the fix."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import result_of, run_json

CHECK = "gitignore-hides-source"
ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@e", "PATH": os.environ["PATH"], "HOME": "/nonexistent"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env=ENV).stdout


def write(root: Path, files: dict) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def repo(root: Path, files: dict) -> Path:
    write(root, files)
    git(root, "init", "-q", ".")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")
    return root


def doctor(root: Path) -> tuple:
    code, doc = run_json("--repo", str(root), "--static", "--only", CHECK)
    return code, result_of(doc, CHECK)


HYDRA = {
    ".gitignore": "data\n*.ckpt\n",
    "data/mnist/README": "the dataset (ignored on purpose)\n",
    "train.py": ("import hydra\n\n\n@hydra.main(config_path='configs', config_name='train',"
                 " version_base=None)\ndef main(cfg):\n    print(cfg)\n\n\nmain()\n"),
    "configs/train.yaml": "defaults:\n  - data: cifar\n  - _self_\n\nlr: 0.1\n",
    "configs/data/cifar.yaml": "name: cifar\n",
    "configs/data/mnist.yaml": "name: mnist\n",
    "job.sbatch": ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=1\n"
                   "srun python train.py data=mnist\n"),
}


def test_hydra_data_line_hides_the_chosen_config_and_the_fix_reaches_a_clone(tmp_path):
    root = repo(tmp_path / "proj", HYDRA)
    # the oracle: a fresh clone has no configs/data/ at all
    git(tmp_path, "clone", "-q", str(root), "before")
    assert not (tmp_path / "before" / "configs" / "data").exists()

    code, res = doctor(root)
    assert code == 1 and res["status"] == "fail" and res["severity"] == "error"
    by_file = {f["data"]["file"]: f for f in res["findings"]}
    # the job script chooses data=mnist (job.sbatch:4); @hydra.main alone composes cifar
    assert set(by_file) == {"configs/data/mnist.yaml"} or set(by_file) == {
        "configs/data/cifar.yaml", "configs/data/mnist.yaml"}
    f = next(f for f in res["findings"] if "configs/data/mnist.yaml" in f["data"]["files"])
    assert f["location"] == {"path": ".gitignore", "line": 1}
    assert f["data"]["files"]["configs/data/mnist.yaml"] == ["job.sbatch:4"]
    assert f["data"]["ignored"] == "configs/data" and f["data"]["anchored"] == "/data/"
    assert f["message"].startswith(
        "`data` ignores the directory configs/data/, so configs/data/mnist.yaml is not tracked")
    # the top-level data/ the line was meant for is not reported
    assert all(not x["data"]["file"].startswith("data/") for x in res["findings"])

    for cmd in f["commands"]:
        subprocess.run(cmd, shell=True, cwd=root, check=True, env=ENV, capture_output=True)
    assert (root / ".gitignore").read_text() == "/data/\n*.ckpt\n"
    git(tmp_path, "clone", "-q", str(root), "after")
    assert (tmp_path / "after" / "configs" / "data" / "mnist.yaml").is_file()
    assert not (tmp_path / "after" / "data").exists()   # still ignored, as meant
    code, res = doctor(tmp_path / "after")
    assert code == 0 and res["status"] == "pass", res


def test_defaults_entry_is_who_needs_it_without_a_job_script(tmp_path):
    files = {k: v for k, v in HYDRA.items() if k != "job.sbatch"}
    root = repo(tmp_path / "proj", files)
    code, res = doctor(root)
    assert code == 1
    f, = res["findings"]
    assert f["data"]["files"] == {"configs/data/cifar.yaml": ["configs/train.yaml:2"]}
    assert f["data"]["needed_as"] == "its Hydra defaults list"


def test_force_added_config_is_fine(tmp_path):
    root = repo(tmp_path / "proj", HYDRA)
    git(root, "add", "-f", "configs/data")
    git(root, "commit", "-q", "-m", "track configs")
    code, res = doctor(root)
    assert code == 0 and res["status"] == "pass", res


PACKAGE = {
    ".gitignore": "__pycache__/\nmodels\n",
    "src/proj/__init__.py": "",
    "src/proj/train.py": "from proj.models import build\nfrom .models.heads import Head\n",
    "src/proj/models/__init__.py": "def build():\n    return 1\n",
    "src/proj/models/heads.py": "class Head:\n    pass\n",
    "src/proj/optional.py": "try:\n    from proj.models import fast\nexcept ImportError:\n"
                            "    fast = None\n",
    "src/proj/models/fast.py": "X = 1\n",
    "models/resnet50.pt": "weights",
    "scripts/run.py": "import helpers\n",
    "scripts/helpers.py": "pass\n",
}


def test_python_imports_of_a_package_dir_the_pattern_hides(tmp_path):
    files = dict(PACKAGE, **{".gitignore": "__pycache__/\nmodels\nhelpers.py\n"})
    root = repo(tmp_path / "proj", files)
    git(tmp_path, "clone", "-q", str(root), "clone")
    assert not (tmp_path / "clone" / "src" / "proj" / "models").exists()

    code, res = doctor(root)
    assert code == 1 and res["severity"] == "error"
    models = next(f for f in res["findings"] if f["data"]["ignored"] == "src/proj/models")
    assert models["severity"] == "error" and models["location"] == {"path": ".gitignore",
                                                                      "line": 2}
    assert models["data"]["files"] == {
        "src/proj/models/__init__.py": ["src/proj/train.py:1", "src/proj/train.py:2"],
        "src/proj/models/heads.py": ["src/proj/train.py:2"]}   # fast.py: guarded import
    assert models["data"]["anchored"] == "/models/"
    # scripts/helpers.py is ignored where it stands (`helpers.py` at the top level would
    # be the same line): matched deeper than its .gitignore, but the import only resolves
    # if scripts/ is on sys.path: a warning that says so
    helpers = next(f for f in res["findings"] if f["data"]["file"] == "scripts/helpers.py")
    assert helpers["severity"] == "warning"
    assert "if scripts/ is on sys.path" in helpers["message"]


def test_anchored_and_own_level_patterns_are_deliberate(tmp_path):
    files = dict(PACKAGE, **{".gitignore": "/src/proj/models/\nscripts/helpers.py\n",
                             "scripts/.gitignore": "helpers.py\n"})
    root = repo(tmp_path / "proj", files)
    code, res = doctor(root)
    assert code == 0 and res["status"] == "pass", res


def test_config_named_by_the_job_script(tmp_path):
    root = repo(tmp_path / "proj", {
        ".gitignore": "*.yaml\n!/ci.yaml\n",
        "ci.yaml": "x: 1\n",
        "train.py": "import argparse\np = argparse.ArgumentParser()\n"
                    "p.add_argument('--config')\np.parse_args()\n",
        "experiments/big.yaml": "lr: 0.1\n",
        "job.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\ncd \"$SLURM_SUBMIT_DIR\"\n"
                      "srun python train.py --config experiments/big.yaml\n"})
    code, res = doctor(root)
    assert code == 1
    f, = res["findings"]
    assert f["data"]["files"] == {"experiments/big.yaml": ["job.sbatch:4"]}
    assert f["data"]["pattern"] == "*.yaml" and f["data"]["anchored"] == "/*.yaml"


def test_not_a_repo_skips(tmp_path):
    write(tmp_path, {"train.py": "import os\n"})
    code, res = doctor(tmp_path)
    assert res["status"] == "skip" and "not inside a git work tree" in res["reason"]
