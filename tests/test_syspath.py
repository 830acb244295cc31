"""package-not-importable follows the sys.path edits an entry makes before its imports
(issue 26, item 4).

The form is Fault_Recong's (tests/data/unseen/Fault_Recong: MIM-Med3D/code/experiments/
sl/*_main.py run `sys.path.insert(0, './code')` and then `from models import ...`, with the
packages under code/, none at the repo root). Each case is a small real repo, checked by
the real CLI (`--no-smoke`), and the oracle is the real python run of the job's step from
its working directory: the import succeeds exactly where the doctor passes, and fails
where it reports.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git_repo, result_of, run_json

CHECK = "package-not-importable"
PACKAGES = {"code/models/__init__.py": "X = 1\n", "code/models/net.py": "NET = 2\n",
            "code/data/__init__.py": ""}


def _repo(tmp_path: Path, entry: str, step: str, extra: dict | None = None) -> Path:
    files = dict(PACKAGES, **(extra or {}))
    files["code/experiments/train.py"] = entry
    files["job.sbatch"] = f"#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=1\n{step}\n"
    return git_repo(tmp_path / "repo", files)


def _doctor(repo: Path) -> dict:
    code, doc = run_json("--no-smoke", "--repo", str(repo), "--only", CHECK,
                         "--sbatch", str(repo / "job.sbatch"))
    assert code in (0, 1), (code, doc)
    return result_of(doc, CHECK)


def _python(repo: Path, cwd: str, entry: str, *args: str) -> subprocess.CompletedProcess:
    """The oracle: the step as the job runs it (`python3 ENTRY` from its directory)."""
    return subprocess.run([sys.executable, entry, *args], cwd=repo / cwd, capture_output=True,
                          text=True, timeout=60)


CWD_EDIT = "import sys\nsys.path.insert(0, './code')\nfrom models import X\nimport data\n"


@pytest.mark.parametrize("entry", [
    CWD_EDIT,   # Fault_Recong's own form
    "import os, sys\nsys.path.append(os.path.join(os.path.dirname(__file__), '..'))\n"
    "from models import X\n",
    "import os, sys\nsys.path.append(os.path.join(os.getcwd(), 'code'))\nimport models.net\n",
    "import sys\nfrom pathlib import Path\nROOT = Path(__file__).resolve().parents[1]\n"
    "sys.path.insert(0, str(ROOT))\nimport models.net\n",
], ids=["cwd-literal", "dirname-join", "getcwd-join", "name-parents"])
def test_packages_an_edit_reaches_are_looked_up_and_found(tmp_path, entry):
    repo = _repo(tmp_path, entry, "srun python3 code/experiments/train.py")
    assert _python(repo, ".", "code/experiments/train.py").returncode == 0
    result = _doctor(repo)
    # it was judged (before: skipped, "the repo has no Python packages")
    assert result["status"] == "pass", result


def test_a_cwd_relative_edit_from_another_directory_is_reported(tmp_path):
    repo = _repo(tmp_path, CWD_EDIT, "cd code\nsrun python3 experiments/train.py")
    run = _python(repo, "code", "experiments/train.py")
    assert run.returncode != 0 and "No module named 'models'" in run.stderr
    result = _doctor(repo)
    assert result["status"] == "fail", result
    [f] = [f for f in result["findings"] if f["data"]["module"] == "models"]
    assert f["location"] == {"path": "code/experiments/train.py", "line": 3}, f
    assert f.get("severity") == "warning", f   # an installed `models` would do: not proven
    assert "the repo has models at code/models/, which no directory on the job's path " \
        "reaches (the entry's sys.path edit adds code/code, which does not exist" \
        in f["message"], f["message"]


def test_a_module_missing_under_an_edit_directory_is_an_error(tmp_path):
    entry = CWD_EDIT.replace("from models import X", "import models.net\nimport models.gone")
    repo = _repo(tmp_path, entry, "srun python3 code/experiments/train.py")
    run = _python(repo, ".", "code/experiments/train.py")
    assert run.returncode != 0 and "No module named 'models.gone'" in run.stderr
    result = _doctor(repo)
    assert result["status"] == "fail", result
    [f] = result["findings"]
    assert (f["data"]["module"], f.get("severity", result["severity"])) == \
        ("models.gone", "error"), f
    assert f["location"] == {"path": "code/experiments/train.py", "line": 4}, f


def test_an_edit_the_doctor_cannot_read_makes_it_a_warning_that_names_it(tmp_path):
    entry = "import sys\nsys.path.append(sys.argv[1])\nfrom models import X\n"
    repo = _repo(tmp_path, entry, "srun python3 code/experiments/train.py code")
    # the job passes the directory: the import works, which the doctor cannot see
    assert _python(repo, ".", "code/experiments/train.py", "code").returncode == 0
    result = _doctor(repo)
    assert result["status"] == "fail", result
    [f] = result["findings"]
    assert f.get("severity") == "warning", f
    assert "unless the sys.path edit at code/experiments/train.py:2 " \
        "(`sys.path.append(sys.argv[1])`) puts it on the path" in f["message"], f["message"]


@pytest.mark.parametrize("module, fails", [("mtr.datasets.waymo", False),
                                           ("mtr.datasets.tno.tno_module", True)])
def test_a_namespace_package_beside_the_entry_is_the_steps(tmp_path, module, fails):
    # LiMTR's form (tests/data/unseen/LiMTR): src/mtr/ has no __init__.py, src/train.py
    # imports mtr.datasets... through its own directory, and mtr/datasets/tno is not there
    repo = git_repo(tmp_path / "repo", {
        "src/mtr/datasets/__init__.py": "", "src/mtr/datasets/waymo.py": "W = 1\n",
        "src/train.py": f"import os\nimport {module}\n",
        "job.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\nsrun python src/train.py\n"})
    run = _python(repo, ".", "src/train.py")
    assert (run.returncode != 0) == fails, run.stderr
    result = _doctor(repo)
    if not fails:
        assert result["status"] == "pass", result
        return
    assert "No module named 'mtr.datasets.tno'" in run.stderr
    [f] = result["findings"]
    assert f["location"] == {"path": "src/train.py", "line": 2}, f
    assert f.get("severity", result["severity"]) == "error", f
    assert "mtr.datasets.tno is missing from" in f["message"], f["message"]


def test_an_import_above_the_edit_is_looked_up_without_it(tmp_path):
    # Python runs the entry top to bottom: `from models import X` on line 2 runs before
    # the sys.path.insert on line 3 puts ./code on the path
    entry = "import sys\nfrom models import X\nsys.path.insert(0, './code')\nimport data\n"
    repo = _repo(tmp_path, entry, "srun python3 code/experiments/train.py")
    run = _python(repo, ".", "code/experiments/train.py")
    assert run.returncode != 0 and "No module named 'models'" in run.stderr
    result = _doctor(repo)
    assert result["status"] == "fail", result
    [f] = result["findings"]   # `import data`, below the edit, is found
    assert (f["data"]["module"], f.get("severity", result["severity"])) == ("models", "error")
    assert f["location"] == {"path": "code/experiments/train.py", "line": 2}, f
    assert "the entry's sys.path edit adding code runs after this import" in f["message"], \
        f["message"]


@pytest.mark.parametrize("entry", [
    # the import runs when main() is called, after the edit
    "import sys\ndef main():\n    from models import X\nsys.path.insert(0, './code')\nmain()\n",
    # the handler puts ./code on the path and imports again
    "import sys\ntry:\n    from models import X\nexcept ImportError:\n"
    "    sys.path.insert(0, './code')\n    from models import X\n",
], ids=["in-a-function", "retried-in-handler"])
def test_an_import_that_runs_after_the_edit_is_found(tmp_path, entry):
    repo = _repo(tmp_path, entry, "srun python3 code/experiments/train.py")
    assert _python(repo, ".", "code/experiments/train.py").returncode == 0
    result = _doctor(repo)
    assert result["status"] == "pass", result


def test_an_edit_repeated_below_the_import_does_not_hide_the_one_above(tmp_path):
    # the entry puts ./code on the path, imports, and puts it there again under
    # `if __name__ == "__main__":` (review 37, s1): the import is found through the first
    # edit, whatever the second one does
    entry = ("import sys\nsys.path.insert(0, './code')\nfrom models import X\n"
             "if __name__ == '__main__':\n    sys.path.insert(0, './code')\n    print(X)\n")
    repo = _repo(tmp_path, entry, "srun python3 code/experiments/train.py")
    assert _python(repo, ".", "code/experiments/train.py").returncode == 0
    result = _doctor(repo)
    assert result["status"] == "pass", result


def test_the_first_import_of_a_module_is_the_one_that_runs_before_the_edit(tmp_path):
    # `import models` (line 2) fails before the edit on line 3; `import models.net`
    # below it would have found it (review 37, s2)
    entry = "import sys\nimport models\nsys.path.insert(0, './code')\nimport models.net\n"
    repo = _repo(tmp_path, entry, "srun python3 code/experiments/train.py")
    run = _python(repo, ".", "code/experiments/train.py")
    assert run.returncode != 0 and "No module named 'models'" in run.stderr
    result = _doctor(repo)
    assert result["status"] == "fail", result
    [f] = result["findings"]
    assert (f["data"]["module"], f.get("severity", result["severity"])) == ("models", "error")
    assert f["location"] == {"path": "code/experiments/train.py", "line": 2}, f
    assert "the entry's sys.path edit adding code runs after this import" in f["message"], \
        f["message"]
