"""container-deps-missing through the real CLI.

The "job's Python" is a real venv (`python3 -m venv --without-pip`) activated by the
job script; a package is "installed" by putting it in the venv's site-packages, the
way pip lays it out. No Singularity/Apptainer runtime is installable here and a fake
`apptainer` would not be faithful (it could not show what an image lacks), so the
container lookup itself is untested: only its skip when no runtime is on PATH.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from conftest import result_of, run_json

CHECK = "container-deps-missing"
TRAIN = ("import os\nimport numpy_fake_pkg\n"
         "from vcloud import data\n"
         "try:\n    import wandb_fake_opt\nexcept ImportError:\n    wandb_fake_opt = None\n"
         "def later():\n    import never_reached_pkg\n")
DATA = "import json\nfrom . import util\nimport tifffile  # seed 002\n"


def make_repo(root: Path, sbatch: str) -> Path:
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "train.py").write_text(TRAIN)
    pkg = root / "src" / "vcloud"
    (pkg / "data").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "util.py").write_text("import collections\n")
    (pkg / "data" / "__init__.py").write_text(DATA)
    (root / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --gpus=1\n" + sbatch)
    return root


def make_venv(root: Path, *packages: str) -> Path:
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    for name in packages:
        (site / name).mkdir()
        (site / name / "__init__.py").write_text("raise SystemExit('imported!')\n")
    return venv


VENV_JOB = ("cd $SLURM_SUBMIT_DIR\nsource venv/bin/activate\n"
            'export PYTHONPATH="$SLURM_SUBMIT_DIR/src"\nsrun python scripts/train.py\n')


def run(repo: Path) -> tuple:
    code, doc = run_json("--only", CHECK, "--repo", str(repo),
                         "--sbatch", str(repo / "job.sbatch"),
                         env={"PATH": "/usr/bin:/bin", "SLURM_SUBMIT_DIR": str(repo)})
    return code, result_of(doc, CHECK)


def test_missing_package_in_the_activated_venv_is_reported_at_its_import(tmp_path):
    repo = make_repo(tmp_path / "r", VENV_JOB.replace("$SLURM_SUBMIT_DIR", str(tmp_path / "r")))
    make_venv(repo, "numpy_fake_pkg")
    code, res = run(repo)
    assert code == 1 and res["severity"] == "error", res
    (f,) = res["findings"]     # not os/json/collections, vcloud, the guarded or in-function one
    assert f["data"]["module"] == "tifffile"
    assert f["location"] == {"path": "src/vcloud/data/__init__.py", "line": 3}
    assert f["commands"] == [f"{repo}/venv/bin/pip install tifffile"]


def test_all_present_passes_and_nothing_is_imported(tmp_path):
    repo = make_repo(tmp_path / "r", VENV_JOB.replace("$SLURM_SUBMIT_DIR", str(tmp_path / "r")))
    make_venv(repo, "numpy_fake_pkg", "tifffile")
    code, res = run(repo)
    assert (code, res["status"]) == (0, "pass"), res


def test_common_import_name_maps_to_its_pip_name(tmp_path):
    repo = make_repo(tmp_path / "r", VENV_JOB.replace("$SLURM_SUBMIT_DIR", str(tmp_path / "r")))
    (repo / "scripts" / "train.py").write_text("import cv2\n")
    make_venv(repo)
    code, res = run(repo)
    (f,) = res["findings"]
    assert f["data"]["pip"] == "opencv-python" and f["commands"][0].endswith(
        "pip install opencv-python")


def test_container_job_without_runtime_skips_and_says_so(tmp_path):
    repo = make_repo(tmp_path / "r", 'srun singularity exec -B /scratch img.sif '
                                     "python3 scripts/train.py\n")
    code, res = run(repo)
    assert res["status"] == "skip" and "no `singularity` runtime" in res["reason"], res


def _job_importing(root: Path, imports: str, venv: str = "venv") -> Path:
    root.mkdir(parents=True)
    (root / "train.py").write_text(imports)
    (root / "job.sbatch").write_text(f"#!/bin/bash\n#SBATCH --gpus=1\ncd {root}\n"
                                     f"source {venv}/bin/activate\nsrun python train.py\n")
    return root


def test_a_system_site_packages_venv_of_a_distro_python_sees_the_distros_packages(tmp_path):
    """A Debian/Ubuntu python keeps its packages in dist-packages (RHEL: lib64), which
    the doctor's own Python (pyenv, conda) knows nothing of: the lookup asks the venv's
    base interpreter, which knows them, and still finds what is missing."""
    distro = Path("/usr/bin/python3")
    probe = subprocess.run([str(distro), "-I", "-c", "import yaml; print(yaml.__file__)"],
                           capture_output=True, text=True) if distro.is_file() else None
    if probe is None or probe.returncode != 0 or "dist-packages" not in probe.stdout:
        pytest.skip("no distro /usr/bin/python3 with yaml in its dist-packages")
    repo = _job_importing(tmp_path / "r", "import yaml\nimport numpy_fake_pkg\n", ".venv")
    subprocess.run([str(distro), "-m", "venv", "--system-site-packages", "--without-pip",
                    str(repo / ".venv")], check=True)
    code, res = run(repo)
    assert code == 1 and [f["data"]["module"] for f in res["findings"]] == \
        ["numpy_fake_pkg"], res


def _other_python() -> Optional[str]:
    """An interpreter of another minor version than the doctor's, if this machine has one."""
    ours = "%d.%d" % sys.version_info[:2]
    names = [shutil.which(f"python3.{n}") for n in range(8, 15)]
    names += [str(p) for p in Path(sys.base_prefix).parent.glob("3.*/bin/python3")]  # pyenv
    for exe in filter(None, names):
        out = subprocess.run([exe, "-I", "-c", "import sys; print('%d.%d' % sys.version_info"
                              "[:2])"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip() not in ("", ours) \
                and tuple(map(int, out.stdout.split("."))) >= (3, 8):
            return exe
    return None


def test_a_venv_of_another_python_version_is_looked_up_with_that_version(tmp_path):
    """The venv's Python is 3.X, the doctor's 3.Y: its compiled modules carry 3.X's
    suffix (`.cpython-3X-...so`), which the doctor's own import machinery does not
    take. Its base interpreter does."""
    exe = _other_python()
    if exe is None:
        pytest.skip("no Python of another minor version here")
    repo = _job_importing(tmp_path / "r", "import fastext_fake\nimport numpy_fake_pkg\n")
    subprocess.run([exe, "-m", "venv", "--without-pip", str(repo / "venv")], check=True)
    suffix = subprocess.run([exe, "-I", "-c", "import importlib.machinery as m; "
                             "print(m.EXTENSION_SUFFIXES[0])"], capture_output=True,
                            text=True, check=True).stdout.strip()
    (site,) = (repo / "venv").glob("lib/python*/site-packages")
    (site / f"fastext_fake{suffix}").write_bytes(b"\x7fELF not loaded, only found")
    code, res = run(repo)
    assert code == 1 and [f["data"]["module"] for f in res["findings"]] == \
        ["numpy_fake_pkg"], res
