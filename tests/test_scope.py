"""`--changed-since REV` and file arguments (issue 17 item 3): a scoped run checks what
changed and what ties it to a job, and never reports what a full run would not.

Every test drives the real CLI on a real git repo, except the fixture sweep, which
builds the same Job the CLI builds (in-process: 300 cases)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import clean_env
from doctor import sites
from doctor.job.scope import from_files
from doctor.registry import get
from doctor.runner import run_checks
from harness import FIXTURES, fixture_cases, job_in, materialize

GIT_ENV = dict(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")
CONFLICT = "data:\n  num_workers: 0\n  prefetch_factor: 2\n  batch_size: 8\n"
CLEAN = "data:\n  num_workers: 4\n  batch_size: 8\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True, env=dict(os.environ, **GIT_ENV)).stdout


def commit_all(repo: Path, msg: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", msg)


def make_repo(path: Path, files: dict) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "init", "-q", "-b", "main")
    commit_all(path, "init")
    return path


def doctor(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doctor", "run", "--static", "--format",
                           "json", *args], cwd=repo, env=clean_env(), capture_output=True,
                          text=True, timeout=120)


def findings(proc: subprocess.CompletedProcess, check: str = "") -> list:
    doc = json.loads(proc.stdout)
    return sorted((r["id"], f["location"]["path"], f["location"].get("line"))
                  for r in doc["results"] if not check or r["id"] == check
                  for f in r.get("findings") or [])


@pytest.fixture
def two_configs(tmp_path):
    """Two training configs that both set prefetch_factor without workers."""
    repo = make_repo(tmp_path / "repo", {"configs/a.yaml": CONFLICT, "configs/b.yaml": CONFLICT,
                                         "doctor.yaml": "torch_version: '2.5.1'\n",
                                         "README.md": "demo\n"})
    (repo / "configs/a.yaml").write_text(CONFLICT + "seed: 1\n")
    commit_all(repo, "touch a")
    return repo


def test_changed_since_reports_only_the_changed_config(two_configs):
    full = doctor(two_configs)
    assert {f[1] for f in findings(full, "dataloader-option-conflict")} == \
        {"configs/a.yaml", "configs/b.yaml"}
    scoped = doctor(two_configs, "--changed-since", "HEAD~1")
    assert scoped.returncode == 1, scoped.stderr
    assert {f[1] for f in findings(scoped, "dataloader-option-conflict")} == {"configs/a.yaml"}
    assert "--changed-since HEAD~1: 1 changed file" in scoped.stderr
    doc = json.loads(scoped.stdout)
    assert doc["facts"]["scope"] == {"given": "--changed-since HEAD~1", "changed": 1,
                                     "checked": 1}


def test_work_tree_and_untracked_changes_count(two_configs):
    git(two_configs, "reset", "-q", "--hard", "HEAD~1")
    assert doctor(two_configs, "--changed-since", "HEAD").returncode == 0   # nothing changed
    (two_configs / "configs/b.yaml").write_text(CONFLICT + "seed: 2\n")   # unstaged edit
    (two_configs / "configs/new.yaml").write_text(CONFLICT)                # untracked
    scoped = doctor(two_configs, "--changed-since", "HEAD")
    assert {f[1] for f in findings(scoped, "dataloader-option-conflict")} == \
        {"configs/b.yaml", "configs/new.yaml"}


def test_a_change_outside_the_job_passes(two_configs):
    (two_configs / "README.md").write_text("more\n")
    commit_all(two_configs, "docs")
    proc = doctor(two_configs, "--changed-since", "HEAD~1")
    assert proc.returncode == 0, proc.stdout
    assert findings(proc) == []
    assert doctor(two_configs).returncode == 1   # the full run still fails


def test_merge_base_not_the_other_branch(two_configs):
    """`--changed-since main` on a branch: what the branch changed, not what main did
    since the branch started."""
    git(two_configs, "checkout", "-qb", "feature", "HEAD~1")
    (two_configs / "README.md").write_text("branch\n")
    commit_all(two_configs, "branch work")
    proc = doctor(two_configs, "--changed-since", "main")
    assert proc.returncode == 0, proc.stdout   # main's change to a.yaml is not this branch's
    assert findings(proc) == []


def test_file_arguments_as_pre_commit_passes_them(two_configs):
    proc = doctor(two_configs, "configs/b.yaml")
    assert {f[1] for f in findings(proc, "dataloader-option-conflict")} == {"configs/b.yaml"}
    assert "1 file argument: 1 changed file" in proc.stderr
    sub = two_configs / "configs"   # relative to the current directory, as pre-commit runs
    env = {k: v for k, v in os.environ.items() if k != "SLURM_JOB_ID"}
    proc = subprocess.run([sys.executable, "-m", "doctor", "run", "--static", "--format",
                           "json", "a.yaml"], cwd=sub, env=env, capture_output=True, text=True)
    assert {f[1] for f in findings(proc, "dataloader-option-conflict")} == {"configs/a.yaml"}


def test_a_settings_change_checks_everything(two_configs):
    (two_configs / "doctor.yaml").write_text("torch_version: '2.4.0'\n")
    commit_all(two_configs, "settings")
    proc = doctor(two_configs, "--changed-since", "HEAD~1")
    assert {f[1] for f in findings(proc, "dataloader-option-conflict")} == \
        {"configs/a.yaml", "configs/b.yaml"}
    assert "doctor.yaml changed, so every file is checked" in proc.stderr
    assert json.loads(proc.stdout)["facts"]["scope"]["full_run"] == "doctor.yaml changed"


def test_a_settings_file_given_with_settings_changes_everything(two_configs):
    (two_configs / "ci").mkdir()
    (two_configs / "ci" / "doctor-ci.yaml").write_text("torch_version: '2.5.1'\n")
    commit_all(two_configs, "ci settings")
    proc = doctor(two_configs, "--settings", "ci/doctor-ci.yaml", "--changed-since", "HEAD~1")
    assert "ci/doctor-ci.yaml changed, so every file is checked" in proc.stderr
    assert len(findings(proc, "dataloader-option-conflict")) == 2
    (two_configs / "sub").mkdir()   # a nested pyproject.toml is some other package's
    (two_configs / "sub" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    commit_all(two_configs, "sub package")
    proc = doctor(two_configs, "--changed-since", "HEAD~1")
    assert proc.returncode == 0 and "1 changed file, 1 checked" in proc.stderr


def test_a_changed_hydra_default_reaches_its_job_script(tmp_path):
    """trainer/default.yaml changed: train.yaml lists it, slurm/train.sbatch runs
    train.py, whose @hydra.main composes train.yaml: the script's 4 ranks per node
    against the default's devices: 1 is found from the one changed file."""
    case = FIXTURES / "slurm-gpu-mismatch" / "fail_hydra_group_default"
    repo = tmp_path / "repo"
    shutil.copytree(case, repo, ignore=shutil.ignore_patterns("case.yaml"))
    (repo / "README.md").write_text("x\n")
    git(repo, "init", "-q")
    commit_all(repo, "init")
    (repo / "configs/trainer/default.yaml").write_text(
        (repo / "configs/trainer/default.yaml").read_text() + "# tuned\n")
    commit_all(repo, "tune")
    want = findings(doctor(repo), "slurm-gpu-mismatch")
    assert {f[1:] for f in want} == {("configs/trainer/default.yaml", 2)}
    proc = doctor(repo, "--changed-since", "HEAD~1")
    assert findings(proc, "slurm-gpu-mismatch") == want, proc.stderr
    (repo / "README.md").write_text("y\n")
    commit_all(repo, "docs")
    proc = doctor(repo, "--changed-since", "HEAD~1", "--only", "slurm-gpu-mismatch")
    assert json.loads(proc.stdout)["results"][0]["status"] == "skip"


def test_git_checks_look_at_the_change_only(tmp_path):
    """A 51 MB blob from an old commit is the full run's finding; a scoped run since a
    later commit reports only the large file that the change adds."""
    repo = make_repo(tmp_path / "repo", {"README.md": "x\n"})
    with open(repo / "old.bin", "wb") as f:
        f.truncate(51 * 1000 * 1000)
    commit_all(repo, "old blob")
    (repo / "old.bin").unlink()
    commit_all(repo, "drop it")
    base = git(repo, "rev-parse", "HEAD").strip()
    with open(repo / "new.bin", "wb") as f:
        f.truncate(52 * 1000 * 1000)
    commit_all(repo, "new blob")
    full = findings(doctor(repo, "--only", "git-large-file"))
    assert [f[1] for f in full] == ["new.bin", "old.bin"]
    scoped = findings(doctor(repo, "--only", "git-large-file", "--changed-since", base))
    assert [f[1] for f in scoped] == ["new.bin"]
    # the pre-commit form: the named file only, and no history
    assert [f[1] for f in findings(doctor(repo, "--only", "git-large-file", "new.bin"))] == \
        ["new.bin"]
    assert findings(doctor(repo, "--only", "git-large-file", "README.md")) == []


@pytest.mark.parametrize("args, says", [
    (["--changed-since", "no-such-rev"], "--changed-since: 'no-such-rev' is not a commit"),
    (["--changed-since", "--all"], "is not a revision"),
    (["--changed-since", "HEAD", "configs/a.yaml"], "exclude each other"),
    (["configs/none.yaml"], "configs/none.yaml: no such file"),
    (["/etc/hostname"], "not inside the repository"),
    (["configs"], "a directory"),
])
def test_bad_scope_input_is_one_line_and_exit_2(two_configs, args, says):
    proc = doctor(two_configs, *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert says in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_changed_since_outside_git_is_exit_2(tmp_path):
    (tmp_path / "plain").mkdir()
    proc = doctor(tmp_path / "plain", "--changed-since", "HEAD", "--repo", str(tmp_path / "plain"))
    assert proc.returncode == 2 and "not inside a git work tree" in proc.stderr


def _key(doc: dict, check: str) -> set:
    return {((f.get("location") or {}).get("path"), (f.get("location") or {}).get("line"),
             f.get("message", "")[:40])
            for r in doc["results"] if r["id"] == check for f in r.get("findings") or []}


# checks whose fixtures run a model, a DataLoader or torch.load a cache (seconds each): what
# they judge is not found through the repo's files, so the scope does not change it. The
# data smoke's ranks also race for /dev/shm: which rank names the failure varies by run
LIVE = {"ddp-smoke", "resume-checkpoint-mismatch", "cuda-tensor-in-shared-cache", "data-smoke"}


@pytest.mark.parametrize("check_id, case", [c for c in fixture_cases() if c[0] not in LIVE],
                         ids=lambda v: getattr(v, "name", v))
def test_a_scoped_run_never_reports_what_the_full_run_does_not(check_id, case, tmp_path,
                                                               monkeypatch):
    """Each fixture case, scoped to each of its first two files (configs, scripts and
    modules first) in turn: every finding is one the full run of the same case makes
    (a scoped gate never blocks what a full one passes)."""
    # the site profile is not what is compared: no `scontrol` wait per Job
    monkeypatch.setattr(sites, "detect", lambda **_: (None, None))   # detect(config=...)
    root = materialize(case, tmp_path)
    spec = get(check_id)
    full = _key(run_checks(job_in(case, root), [spec]).doc(), check_id)
    files = sorted((not p.suffix.startswith((".y", ".sb", ".sh", ".py")), str(p.relative_to(root)))
                   for p in root.rglob("*") if p.is_file()
                   and not {".git", "venv", "__pycache__"} & set(p.relative_to(root).parts))
    for _, rel in files[:2]:   # configs, scripts and modules first
        job = job_in(case, root, scope=from_files(root, [root / rel]))
        scoped = _key(run_checks(job, [spec]).doc(), check_id)
        assert scoped <= full, f"scoped to {rel}: {sorted(scoped - full)}"


@pytest.mark.parametrize("pattern", [
    "configs/**/*.yaml", "conf/**/*.yml", "configs/*.yaml", "configs/a?.yaml",
    "configs/[a-b]*.yaml", "configs/[!a]*.yaml", "**/*.yaml", "configs/x/*", "configs/**"])
def test_glob_regex_matches_as_path_glob_does(tmp_path, pattern):
    """A scoped run matches the config globs against its file names; Path.glob on a
    real tree is the oracle."""
    from doctor.fs import glob_regex

    names = ["configs/a.yaml", "configs/x/b.yaml", "configs/x/y/c.yml", "conf/d.yml",
             "other/configs/e.yaml", "configs/.h.yaml", "configs/f.json", "configs/ab.yaml",
             "configs/x/[z].yaml", "configs/x/y/z/deep.yaml"]
    for n in names:
        (tmp_path / n).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / n).write_text("")
    want = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.glob(pattern) if p.is_file())
    assert sorted(n for n in names if glob_regex(pattern).match(n)) == want


def test_lookups_by_name_ask_the_whole_repo(tmp_path):
    """Found on the real-world corpus (pytorch_hpc_lightningcli): a job script scoped alone
    names `--config x.yaml` beside it; finding that file is a lookup in the whole repo,
    not in the scope, or config-not-found would report what the full run does not. And
    rsync's tracked files are the whole index: a changed deploy.sh still loses src/pkg/data."""
    repo = make_repo(tmp_path / "repo", {
        "examples/fit/run.sh": "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n"
                               "srun pythpc --config cfg.yaml fit\n",
        "examples/fit/cfg.yaml": "trainer:\n  devices: 1\n",
        "setup.py": "from setuptools import setup\nsetup(name='hpc', entry_points={"
                    "'console_scripts': ['pythpc = hpc.cli:main']})\n",
        "hpc/__init__.py": "",
        "hpc/cli.py": "from lightning.pytorch.cli import LightningCLI\n\n\ndef main():\n"
                      "    LightningCLI()\n",
        "src/pkg/data/__init__.py": "", "src/pkg/__init__.py": "", "data/big.bin": "x",
        "deploy.sh": "#!/bin/bash\nrsync -a --exclude data ./ host:/dst/\n"})
    full = findings(doctor(repo))
    scoped = findings(doctor(repo, "examples/fit/run.sh"))
    assert not [f for f in full + scoped if f[0] == "config-not-found"]
    assert set(scoped) <= set(full)
    rsync = findings(doctor(repo, "deploy.sh"), "rsync-exclude-unanchored")
    assert rsync and rsync == findings(doctor(repo), "rsync-exclude-unanchored")


def test_a_rule_for_the_repos_only_script_is_not_applied_to_the_scopes_only_one(tmp_path):
    """slurm-gpu-mismatch pairs an unnamed config with the job script only when the repo
    has one; two scripts, one of them in scope, must not make it pair them."""
    job = ("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=4\n#SBATCH --gres=gpu:4\n"
           "srun python train.py\n")
    repo = make_repo(tmp_path / "repo", {"a.sbatch": job, "b.sbatch": job.replace("4", "2"),
                                         "configs/exp.yaml": "trainer:\n  devices: 8\n",
                                         "train.py": "print(1)\n"})
    assert findings(doctor(repo), "slurm-gpu-mismatch") == []
    proc = doctor(repo, "a.sbatch", "configs/exp.yaml")
    assert findings(proc, "slurm-gpu-mismatch") == [], proc.stdout
    (repo / "b.sbatch").unlink()   # with one script in the repo the rule applies, scoped too
    commit_all(repo, "one script")
    want = findings(doctor(repo), "slurm-gpu-mismatch")
    assert want and findings(doctor(repo, "a.sbatch", "configs/exp.yaml"),
                             "slurm-gpu-mismatch") == want


def test_main_modules_stand_in_for_entries_only_in_a_repo_without_job_scripts(tmp_path):
    """exit-masks-errors reads `__main__` blocks as entries when the repo has no job
    script; a scope without one (a changed tool module) must not make it do so."""
    masking = ("import sys\n\n\ndef main():\n    raise RuntimeError('x')\n\n\n"
               "if __name__ == '__main__':\n    try:\n        main()\n"
               "    except Exception:\n        sys.exit(0)\n")
    repo = make_repo(tmp_path / "repo", {
        "job.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\nsrun python train.py\n",
        "train.py": "print(1)\n", "tools/other.py": masking})
    assert findings(doctor(repo), "exit-masks-errors") == []
    assert findings(doctor(repo, "tools/other.py"), "exit-masks-errors") == []
    (repo / "job.sbatch").unlink()   # no job script at all: the module is an entry
    commit_all(repo, "no job")
    want = findings(doctor(repo), "exit-masks-errors")
    assert want and findings(doctor(repo, "tools/other.py"), "exit-masks-errors") == want


def test_whether_the_code_reads_a_variable_is_asked_of_the_whole_repo(tmp_path):
    """nccl-env-deprecated reports NCCL_TIMEOUT as ignored only when no code of the repo
    reads it; a module outside the scope that does must still count."""
    repo = make_repo(tmp_path / "repo", {
        "job.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\nexport NCCL_TIMEOUT=1800\n"
                      "srun python train.py\n",
        "train.py": "print(1)\n",
        "tools/timeouts.py": "import os\n\nT = int(os.environ['NCCL_TIMEOUT'])\n"})
    assert findings(doctor(repo), "nccl-env-deprecated") == []
    assert findings(doctor(repo, "job.sbatch"), "nccl-env-deprecated") == []
