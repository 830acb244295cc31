"""A step's import path, built as Python builds it (issue 26, item 4): package-not-importable
counts only the repo modules the step's entry and its imports import, looks them up on the
sys.path the job's Python would have (the script's own directory first, the entry's own
sys.path edits, the venv the job activates), and leaves alone a container step whose image
has its own working directory and entrypoint. The doctor runs none of the repo's code."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import git_repo, result_of, run_json

CHECK = "package-not-importable"
JOB = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n{}\n"



def _result(repo: Path, check: str = CHECK) -> tuple:
    code, doc = run_json("--no-smoke", "--repo", str(repo), "--only", check)
    return code, result_of(doc, check)


def _with_pkg(root: Path, files: dict) -> Path:
    """A repo whose package `mypkg` sits at the root, which `python exp/train.py` does
    not put on the path (its sys.path[0] is exp/)."""
    return git_repo(root, {"mypkg/__init__.py": "", **files})


def test_an_unimported_package_is_not_looked_up(tmp_path):
    """The entry imports only the standard library: nothing to report, though mypkg
    would not be importable."""
    code, res = _result(_with_pkg(tmp_path, {
        "exp/train.py": "import json\nimport os\n",
        "job.sbatch": JOB.format("srun python exp/train.py")}))
    assert res["status"] == "pass", res


def test_the_scripts_own_directory_is_first_on_the_path(tmp_path):
    """`python $DIR/prep.py` with DIR=tools: tools/ is sys.path[0], so its `helpers`
    package is found; the repo's mypkg, imported by nothing the step runs, is not asked."""
    code, res = _result(_with_pkg(tmp_path, {
        "tools/prep.py": "import helpers\n", "tools/helpers/__init__.py": "",
        "job.sbatch": JOB.format("DIR=tools\nsrun python $DIR/prep.py")}))
    assert res["status"] == "pass", res


def test_sys_path_append_of_the_working_directory(tmp_path):
    code, res = _result(_with_pkg(tmp_path, {
        "exp/train.py": "import os\nimport sys\nsys.path.append(os.getcwd())\nimport mypkg\n",
        "job.sbatch": JOB.format("srun python exp/train.py")}))
    assert res["status"] == "pass", res


def test_sys_path_insert_of_the_parent_of_file(tmp_path):
    code, res = _result(_with_pkg(tmp_path, {
        "exp/train.py": "import sys\nfrom pathlib import Path\n"
                        "sys.path.insert(0, str(Path(__file__).resolve().parent.parent))\n"
                        "from mypkg import core\n",
        "mypkg/core.py": "",
        "job.sbatch": JOB.format("srun python exp/train.py")}))
    assert res["status"] == "pass", res


def test_a_pyxis_step_is_skipped_not_guessed(tmp_path):
    """`srun --container-image=…`: the image has its own working directory and
    entrypoint; the doctor says so instead of judging the host's path."""
    code, res = _result(_with_pkg(tmp_path, {
        "exp/train.py": "import mypkg\n",
        "job.sbatch": JOB.format("srun --container-image=nvcr.io/nvidia/pytorch:24.01-py3 "
                                 "--container-workdir=/workspace python exp/train.py")}))
    assert res["status"] == "skip" and "container image" in res["reason"], res


def test_apptainer_pwd_is_the_working_directory(tmp_path):
    """`apptainer exec --pwd DIR`: `python -m mypkg.train` starts in DIR, which holds
    mypkg (the job's cwd before the container is elsewhere)."""
    repo = _with_pkg(tmp_path / "repo", {
        "mypkg/train.py": "import mypkg.core\n", "mypkg/core.py": ""})
    (tmp_path / "elsewhere").mkdir()
    (repo / "job.sbatch").write_text(JOB.format(
        f"cd {tmp_path / 'elsewhere'}\n"
        f"srun apptainer exec --pwd {repo} image.sif python -m mypkg.train"))
    code, res = _result(repo)
    assert res["status"] == "pass", res


def test_the_activated_venvs_editable_install_is_seen(tmp_path):
    """The job activates a venv (outside the repo) with the repo installed editable (a
    .pth path line to src/): the venv is where its Python finds mypkg."""
    repo = git_repo(tmp_path / "repo", {"src/mypkg/__init__.py": "",
                                        "exp/train.py": "import mypkg\n"})
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "__editable__.mypkg-0.pth").write_text(f"{repo / 'src'}\n")
    (repo / "job.sbatch").write_text(JOB.format(
        f"source {venv}/bin/activate\nsrun python exp/train.py"))
    code, res = _result(repo)
    assert res["status"] == "pass", res


def test_a_package_no_path_holds_stays_an_error(tmp_path):
    """The true positive: exp/train.py imports mypkg, which sits at the repo root, not
    on the job's path (sys.path[0] is exp/, no PYTHONPATH, no install)."""
    code, res = _result(_with_pkg(tmp_path, {
        "exp/train.py": "import mypkg\n",
        "job.sbatch": JOB.format("srun python exp/train.py")}))
    (finding,) = res["findings"]
    assert finding["severity"] == "error" and finding["location"] == {
        "path": "exp/train.py", "line": 1}, finding
    assert code == 1


def test_a_venv_of_a_distro_python_is_read_with_its_dist_packages(tmp_path):
    """A venv with --system-site-packages on a Debian/Ubuntu Python (whose packages sit
    in /usr/lib/python3/dist-packages), whose base interpreter is not on this machine:
    read as data, the base's dist-packages count (container-deps-missing said numfake
    was missing)."""
    distro = tmp_path / "distro"
    (distro / "bin").mkdir(parents=True)
    pkg = distro / "lib" / "python3" / "dist-packages" / "numfake"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    venv = tmp_path / "venv"
    (venv / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {distro / 'bin'}\ninclude-system-site-packages"
                                     " = true\nversion = 3.11.2\n")
    repo = git_repo(tmp_path / "repo", {
        "train.py": "import numfake\nimport numfake_absent\n",
        "job.sbatch": JOB.format(f"source {venv}/bin/activate\nsrun python train.py")})
    code, res = _result(repo, "container-deps-missing")
    assert [f["data"]["module"] for f in res["findings"]] == ["numfake_absent"], res


def test_scripts_that_fail_alike_are_one_finding_naming_them_all(tmp_path):
    """Three job scripts run the same entry, whose `import mypkg.data.tno` fails the same
    way (mypkg/data/ was never committed): one finding at the import naming the three
    scripts, not three copies of it (LiMTR's form); a script whose failure differs keeps
    its own finding. The real python agrees that the import fails."""
    repo = _with_pkg(tmp_path, {
        "train.py": "import mypkg.data.tno\n",
        "other.py": "import mypkg.models\n",
        **{f"jobs/run_{n}.sbatch": JOB.format("srun python train.py") for n in "abc"},
        "jobs/run_d.sbatch": JOB.format("srun python other.py")})
    real = subprocess.run([sys.executable, "-E", "-s", "train.py"], cwd=repo, capture_output=True,
                          text=True)
    assert "ModuleNotFoundError: No module named 'mypkg.data'" in real.stderr
    code, res = _result(repo)
    by_line = {f["location"]["path"]: f for f in res["findings"]}
    assert sorted(by_line) == ["other.py", "train.py"], res["findings"]
    merged = by_line["train.py"]
    assert "fails for jobs/run_a.sbatch, jobs/run_b.sbatch and jobs/run_c.sbatch:" in \
        merged["message"], merged["message"]
    assert merged["data"]["scripts"] == [f"jobs/run_{n}.sbatch" for n in "abc"]
    assert "fails for jobs/run_d.sbatch:" in by_line["other.py"]["message"]
    assert code == 1
