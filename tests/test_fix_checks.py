"""`doctor fix` on git-tracked-core-file, core-dump-unlimited, dataloader-option-conflict,
fd-limit-too-low, package-not-importable and torch-api-mismatch (issue 15). Each test
runs `doctor fix` through the CLI on a small repo and asserts the exact lines written,
what git then ignores (and that no source file is hidden), that the git index is never
touched, that YAML keeps its comments and still loads, and that bash accepts and runs the
fixed job scripts.
"""
from __future__ import annotations

import json
import os
import resource
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import FIXTURES, ROOT, result_of, run_main
from harness import job_in, materialize
from doctor.registry import get
from doctor.runner import run_checks

ELF_CORE = b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x04\x00\x3e\x00\x01\x00\x00\x00"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    """The CLI reads this process's environment as the login environment."""
    for name in list(os.environ):
        if name.startswith("SLURM_") or name in ("PYTHONPATH", "GIT_DIR", "GIT_INDEX_FILE"):
            monkeypatch.delenv(name)


def fix(capsys, repo: Path, *args: str):
    return run_main(capsys, "fix", "--repo", str(repo), *args)


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=env, timeout=30)


def ignored(repo: Path, *paths: str) -> set:
    """The paths git would ignore by the repo's .gitignore files (tracked or not)."""
    res = git(repo, "check-ignore", "--no-index", *paths)
    return set(res.stdout.split())


def make_repo(root: Path, files: dict, commit: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
    if commit:
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "init")
    return root


# ---- git-tracked-core-file ---------------------------------------------------------
def test_tracked_core_is_ignored_by_its_own_path_when_core_would_hide_a_script(
        tmp_path, capsys):
    """A tracked `bin/core` script rules out the general `core` line: the fix ignores the
    dump by its own path. The index stays byte-identical, the check still fails (exit 1)
    and says `git rm --cached`."""
    repo = make_repo(tmp_path / "r", {
        "core": ELF_CORE + bytes(4096), "bin/core": "#!/bin/sh\necho tool\n",
        "core.py": "x = 1\n", "src/pkg/core/__init__.py": "",
        ".gitignore": "*.pyc\n__pycache__/",   # no newline at the end
    })
    index = (repo / ".git/index").read_bytes()
    res = fix(capsys, repo, "--write", "--only", "git-tracked-core-file")
    assert res.returncode == 1, res.stderr
    assert "git rm --cached -- core" in res.stdout + res.stderr
    assert (repo / ".gitignore").read_text() == "*.pyc\n__pycache__/\n/core\n"
    assert ignored(repo, "core", "bin/core", "core.py", "src/pkg/core/__init__.py",
                   "src/pkg/core/new.py", "sub/core") == {"core"}
    assert (repo / ".git/index").read_bytes() == index
    assert git(repo, "diff", "--cached", "--name-only").stdout == ""
    # the next fix has nothing left to write
    again = fix(capsys, repo, "--only", "git-tracked-core-file")
    assert "---" not in again.stdout and (repo / ".gitignore").read_text().endswith("/core\n")


def test_tracked_numbered_core_falls_back_to_its_path_when_the_pattern_hides_a_dir(
        tmp_path, capsys):
    """`core.[0-9]*` would hide the tracked src/core.3/: the dump's own path instead."""
    repo = make_repo(tmp_path / "r", {
        "core.12345": ELF_CORE + bytes(4096), "core.py": "x = 1\n",
        "src/core/__init__.py": "", "src/core.3/notes.txt": "",
    })
    index = (repo / ".git/index").read_bytes()
    preview = fix(capsys, repo, "--only", "git-tracked-core-file")
    assert preview.returncode == 1 and preview.stdout.endswith("+/core.12345\n")
    assert not (repo / ".gitignore").exists()
    res = fix(capsys, repo, "--write", "--only", "git-tracked-core-file")
    assert res.returncode == 1
    assert (repo / ".gitignore").read_text() == "/core.12345\n"
    assert ignored(repo, "core.12345", "core.py", "src/core/__init__.py",
                   "src/core.3/notes.txt") == {"core.12345"}
    assert (repo / ".git/index").read_bytes() == index


def test_numbered_core_pattern_without_a_lookalike(tmp_path, capsys):
    repo = make_repo(tmp_path / "r", {"core.12345": ELF_CORE + bytes(64), "core.py": "x = 1\n",
                                      "src/core/__init__.py": ""})
    res = fix(capsys, repo, "--write", "--only", "git-tracked-core-file")
    assert res.returncode == 1
    assert (repo / ".gitignore").read_text() == "core.[0-9]*\n"
    assert ignored(repo, "core.12345", "core.999", "logs/core.7", "core.py",
                   "src/core/x.py") == {"core.12345", "core.999", "logs/core.7"}


def test_untracked_core_ignored_keeps_packages_named_core(tmp_path, capsys):
    repo = make_repo(tmp_path / "r", {"train.py": "print(1)\n", "src/pkg/core/__init__.py": ""})
    (repo / "logs").mkdir()
    (repo / "logs/core").write_bytes(ELF_CORE + bytes(64))
    res = fix(capsys, repo, "--write", "--only", "git-tracked-core-file")
    assert res.returncode == 0, res.stdout + res.stderr   # an ignored untracked core: fixed
    assert (repo / ".gitignore").read_text() == "core\n!core/\n"
    assert ignored(repo, "logs/core", "src/pkg/core/__init__.py", "src/pkg/core/new.py") == \
        {"logs/core"}
    assert git(repo, "status", "--porcelain").stdout == "?? .gitignore\n"


# ---- core-dump-unlimited --------------------------------------------------------------
def _core_case(tmp_path: Path, pattern: str, uses_pid: bool, files: dict):
    repo = make_repo(tmp_path / "r", {
        "train.py": "print(1)\n", "slurm/train.sbatch": "#!/bin/bash\n#SBATCH -N 1\n"
        "ulimit -c unlimited\nsrun python train.py\n", **files})
    case = tmp_path / "case"
    case.mkdir()
    (case / "case.yaml").write_text(yaml.safe_dump({
        "args": {"sbatch": ["slurm/train.sbatch"]},
        "facts": {"core_pattern": {"pattern": pattern, "uses_pid": uses_pid},
                  "limits": {"nofile": [1024, 4096], "core": [0, None]}}}))
    job = job_in(case, repo)
    return repo, run_checks(job, [get("core-dump-unlimited")]).results[0]


@pytest.mark.parametrize("pattern,uses_pid,lines", [
    ("core", False, ["core", "!core/"]),
    ("core", True, ["core.[0-9]*"]),
    ("core.%e.%p", False, ["core.*.[0-9]*"]),
    ("core.%e", False, None),     # `core.*` would hide core.py: no edit
])
def test_core_pattern_lines(tmp_path, pattern, uses_pid, lines):
    repo, res = _core_case(tmp_path, pattern, uses_pid,
                           {"core.py": "x = 1\n", "src/core/__init__.py": ""})
    (finding,) = res.findings
    if lines is None:
        assert finding.edits == () and finding.commands == ("ulimit -c 0",)
        return
    (edit,) = finding.edits
    assert (edit.path, edit.new, edit.applicability) == (
        ".gitignore", "".join(x + "\n" for x in lines), "safe")
    assert finding.commands[1:] == tuple(f"echo {shlex.quote(x)} >> .gitignore"
                                         for x in lines)


def test_core_pattern_general_line_gives_way_to_a_tracked_lookalike(tmp_path):
    """A tracked `tools/core` script: `core` would hide it; the cores of the job's
    working directory (the repo root) are ignored by `/core` only."""
    _, res = _core_case(tmp_path, "core", False, {"tools/core": "#!/bin/sh\n"})
    (edit,) = res.findings[0].edits
    assert edit.new == "/core\n!/core/\n"


def test_core_dump_unlimited_through_the_cli(tmp_path, capsys):
    """On this machine's own core_pattern when it is the kernel's default `core`."""
    pattern = Path("/proc/sys/kernel/core_pattern").read_text().strip()
    uses_pid = Path("/proc/sys/kernel/core_uses_pid").read_text().strip() == "1"
    if pattern != "core" or uses_pid:
        pytest.skip(f"core_pattern here is {pattern!r} (uses_pid {uses_pid})")
    repo = make_repo(tmp_path / "r", {
        "train.py": "print(1)\n", "core.py": "x = 1\n", "src/pkg/core/__init__.py": "",
        "job.sbatch": "#!/bin/bash\n#SBATCH -N 1\nulimit -c unlimited\nsrun python train.py\n"})
    index = (repo / ".git/index").read_bytes()
    res = fix(capsys, repo, "--write", "--sbatch", str(repo / "job.sbatch"),
              "--only", "core-dump-unlimited")
    assert res.returncode == 0, res.stdout + res.stderr
    assert (repo / ".gitignore").read_text() == "core\n!core/\n"
    assert ignored(repo, "core", "core.py", "src/pkg/core/__init__.py") == {"core"}
    assert (repo / "job.sbatch").read_text().count("ulimit -c unlimited") == 1
    assert (repo / ".git/index").read_bytes() == index


# ---- dataloader-option-conflict ---------------------------------------------------------
CONFIG = """\
# training config
data:
  train:   # the training loader
    num_workers: 0
    prefetch_factor: 2   # from the 1.x days
    batch_size: 32
  val: {num_workers: 0, persistent_workers: true, batch_size: 8}
  test: { prefetch_factor: 4, num_workers: 0 }
  eval:
    num_workers: 0
    timeout: 30
loader_defaults: &loader
  batch_size: 4
  prefetch_factor: 4
bench:
  loader:
    <<: *loader
    num_workers: 0
"""


def test_dataloader_yaml_line_edits_keep_comments_and_layout(tmp_path, capsys):
    repo = tmp_path / "r"
    (repo / "configs").mkdir(parents=True)
    cfg = repo / "configs/train.yaml"
    cfg.write_text(CONFIG)
    args = ("--config", str(cfg), "--torch-version", "2.5.1",
            "--only", "dataloader-option-conflict")
    res = fix(capsys, repo, "--write", *args)
    assert res.returncode == 1   # the merged template's prefetch_factor has no edit
    # the report wraps to the terminal's width: compare the words
    assert "bench.loader: prefetch_factor 4 with num_workers 0" in " ".join(res.stderr.split())
    want = CONFIG.replace("    prefetch_factor: 2   # from the 1.x days\n", "") \
        .replace("persistent_workers: true", "persistent_workers: false") \
        .replace("{ prefetch_factor: 4, num_workers: 0 }", "{ num_workers: 0 }") \
        .replace("    timeout: 30\n", "    timeout: 0\n")
    assert cfg.read_text() == want
    data = yaml.safe_load(cfg.read_text())
    assert data["data"]["train"] == {"num_workers": 0, "batch_size": 32}
    assert data["bench"]["loader"]["prefetch_factor"] == 4   # the template is not touched
    assert fix(capsys, repo, *args).stdout == ""   # nothing more to change


def test_dataloader_timeout_lowered_only_with_unsafe(tmp_path, capsys):
    repo = tmp_path / "r"
    (repo / "configs").mkdir(parents=True)
    text = ("distributed:\n  backend: nccl\n  timeout_minutes: 10\n"
            "data:\n  num_workers: 8\n  timeout: 600  # seconds\n")
    (repo / "configs/train.yaml").write_text(text)
    args = ("--config", str(repo / "configs/train.yaml"), "--torch-version", "2.5.1",
            "--only", "dataloader-option-conflict")
    safe = fix(capsys, repo, "--write", *args)
    assert "1 more with --unsafe" in safe.stderr
    assert (repo / "configs/train.yaml").read_text() == text
    res = fix(capsys, repo, "--write", "--unsafe", *args)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (repo / "configs/train.yaml").read_text() == text.replace(
        "timeout: 600  # seconds", "timeout: 120  # seconds")


def test_dataloader_value_from_the_command_line_gets_no_edit(tmp_path, capsys):
    root = materialize(FIXTURES / "dataloader-option-conflict" /
                       "fail-hydra-override-zero-workers", tmp_path)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    res = fix(capsys, root, "--write", "--sbatch", str(root / "job.sbatch"), "--static",
              "--torch-version", "2.5.1", "--only", "dataloader-option-conflict")
    assert "no automatic fix for dataloader-option-conflict" in res.stderr
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


# ---- fd-limit-too-low ------------------------------------------------------------------
SOFT, HARD = resource.getrlimit(resource.RLIMIT_NOFILE)
NEEDED = 256 + 8 * 2 * 64


def _doctor_in_shell(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """The CLI under a soft open-file limit of 1024 (bash's `ulimit -Sn`)."""
    cmd = (f"ulimit -Sn 1024 && exec {shlex.quote(sys.executable)} -m doctor "
           + " ".join(shlex.quote(a) for a in args))
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(["bash", "-c", cmd], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.skipif(HARD == resource.RLIM_INFINITY or HARD < NEEDED,
                    reason=f"the hard open-file limit here ({HARD}) is not a number >= {NEEDED}")
@pytest.mark.parametrize("line,fixed", [
    (None, None),
    ("ulimit -n 99999999 || true  # as many as we can",
     "ulimit -n {n} || true  # as many as we can"),
])
def test_fd_limit_ulimit_written_with_unsafe(tmp_path, line, fixed):
    repo = tmp_path / "r"
    (repo / "configs").mkdir(parents=True)
    (repo / "configs/train.yaml").write_text("data:\n  num_workers: 8\n")
    head = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n\n"
    tail = "srun python train.py\n"
    (repo / "job.sbatch").write_text(head + (line + "\n" if line else "") + tail)
    args = ("fix", "--repo", ".", "--config", "configs/train.yaml", "--sbatch", "job.sbatch",
            "--only", "fd-limit-too-low")
    safe = _doctor_in_shell(repo, *args, "--write")
    assert "1 more with --unsafe" in safe.stderr, safe.stderr
    assert (repo / "job.sbatch").read_text() == head + (line + "\n" if line else "") + tail
    res = _doctor_in_shell(repo, *args, "--write", "--unsafe")
    assert res.returncode == 0, res.stdout + res.stderr
    n = HARD
    want = (head.replace("#SBATCH --ntasks-per-node=1\n", f"#SBATCH --ntasks-per-node=1\n"
                         f"ulimit -n {n}\n") + tail if fixed is None
            else head + fixed.format(n=n) + "\n" + tail)
    assert (repo / "job.sbatch").read_text() == want
    # real bash, under the same limits, takes the new line and then has enough
    ulimit = next(ln for ln in want.splitlines() if ln.startswith("ulimit"))
    out = subprocess.run(["bash", "-c", f"ulimit -Sn 1024\n{ulimit}\nulimit -Sn"],
                         capture_output=True, text=True, timeout=10)
    assert out.returncode == 0 and out.stdout.strip() == str(n)
    run = _doctor_in_shell(repo, "run", "--repo", ".", "--config", "configs/train.yaml",
                           "--sbatch", "job.sbatch", "--only", "fd-limit-too-low",
                           "--format", "json")
    assert result_of(json.loads(run.stdout), "fd-limit-too-low")["status"] == "pass"


# ---- package-not-importable ------------------------------------------------------------
def _src_repo(tmp_path: Path, script: str) -> Path:
    repo = tmp_path / "r"
    for rel, text in {"src/vpkg/__init__.py": "", "scripts/train.py": "import vpkg\nprint('ok')\n",
                      "job.sbatch": script}.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    return repo


def test_package_not_importable_export_uses_the_submit_dir(tmp_path, capsys):
    head = "#!/bin/bash\n#SBATCH --nodes=1\n"
    body = 'cd "$SLURM_SUBMIT_DIR"\npython3 scripts/train.py\n'
    repo = _src_repo(tmp_path, head + body)
    export = 'export PYTHONPATH="$SLURM_SUBMIT_DIR/src${PYTHONPATH:+:$PYTHONPATH}"'
    args = ("--sbatch", str(repo / "job.sbatch"), "--only", "package-not-importable")
    report = run_main(capsys, "run", "--repo", str(repo), "--format", "json", *args)
    (finding,) = result_of(json.loads(report.stdout), "package-not-importable")["findings"]
    assert finding["commands"] == [export, "pip install -e ."]
    assert str(tmp_path) not in json.dumps(finding["commands"])   # never this machine's path
    assert "1 more with --unsafe" in fix(capsys, repo, "--write", *args).stderr
    assert (repo / "job.sbatch").read_text() == head + body
    res = fix(capsys, repo, "--write", "--unsafe", *args)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (repo / "job.sbatch").read_text() == head + export + "\n" + body
    # bash runs the fixed script from elsewhere, as Slurm would: the import works
    env = {"PATH": os.environ["PATH"], "SLURM_SUBMIT_DIR": str(repo)}
    before = subprocess.run(["bash", "-c", body], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=30)
    after = subprocess.run(["bash", str(repo / "job.sbatch")], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=30)
    assert "ModuleNotFoundError" in before.stderr
    assert after.returncode == 0 and after.stdout == "ok\n", after.stderr


def test_package_not_importable_export_goes_after_the_scripts_own(tmp_path, capsys):
    script = ("#!/bin/bash\n#SBATCH --nodes=1\nexport PYTHONPATH=/opt/lib\n"
              'cd "$SLURM_SUBMIT_DIR"\npython3 scripts/train.py\n')
    repo = _src_repo(tmp_path, script)
    res = fix(capsys, repo, "--write", "--unsafe", "--sbatch", str(repo / "job.sbatch"),
              "--only", "package-not-importable")
    assert res.returncode == 0, res.stdout + res.stderr
    assert (repo / "job.sbatch").read_text().splitlines()[2:4] == [
        "export PYTHONPATH=/opt/lib",
        'export PYTHONPATH="$SLURM_SUBMIT_DIR/src${PYTHONPATH:+:$PYTHONPATH}"']


# ---- torch-api-mismatch ----------------------------------------------------------------
def test_autocast_hip_becomes_cuda_with_unsafe(tmp_path, capsys):
    root = materialize(FIXTURES / "torch-api-mismatch" / "fail_autocast_hip", tmp_path)
    before = (root / "train.py").read_text().splitlines(keepends=True)
    args = ("--torch-version", "2.5.1+rocm6.2.4", "--only", "torch-api-mismatch")
    assert "2 more with --unsafe" in fix(capsys, root, "--write", *args).stderr
    assert (root / "train.py").read_text() == "".join(before)
    res = fix(capsys, root, "--write", "--unsafe", *args)
    assert res.returncode == 0, res.stdout + res.stderr
    after = (root / "train.py").read_text().splitlines(keepends=True)
    assert after[4] == '    with torch.autocast("cuda", dtype=torch.bfloat16):\n'
    assert after[11] == '@torch.amp.autocast(device_type="cuda", dtype=torch.bfloat16)\n'
    assert [a for i, a in enumerate(after) if i not in (4, 11)] == \
        [b for i, b in enumerate(before) if i not in (4, 11)]


def test_package_not_importable_no_edit_when_the_job_cds_elsewhere(tmp_path, capsys):
    """After `cd /scratch/...` the repo the doctor read need not be $SLURM_SUBMIT_DIR."""
    script = ("#!/bin/bash\n#SBATCH --nodes=1\ncd /scratch/project/repo\n"
              "python3 scripts/train.py\n")
    repo = _src_repo(tmp_path, script)
    res = fix(capsys, repo, "--write", "--unsafe", "--sbatch", str(repo / "job.sbatch"),
              "--only", "package-not-importable")
    assert "no automatic fix for package-not-importable" in res.stderr
    assert (repo / "job.sbatch").read_text() == script
