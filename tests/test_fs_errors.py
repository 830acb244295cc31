"""Issue 16, cause 2: OS errors from paths (EACCES, ELOOP, ENAMETOOLONG, a deleted
current directory) are never internal errors. An entry the doctor cannot read is
skipped and counted in the report (facts.unreadable and one footer line); a bad input
named by the user is one line and exit 2.

Root reads files whatever their mode, so as root the CLI runs with the DAC capabilities
dropped (setpriv): it stays uid 0, and permission bits then hold for it too.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, one_line_exit_2, validate_report

DROP = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search",
        "--inh-caps", "-dac_override,-dac_read_search"]


def _unprivileged() -> list:
    """The prefix that makes permission bits bind the CLI: none for a normal user."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root needs setpriv (util-linux) to drop CAP_DAC_OVERRIDE")
    probe = subprocess.run([*DROP, "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"setpriv cannot drop capabilities here: {probe.stderr[:200]!r}")
    return DROP


def doctor(*args: str, cwd: Path, unprivileged: bool = False) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    prefix = _unprivileged() if unprivileged else []
    return subprocess.run([*prefix, sys.executable, "-m", "doctor", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def no_internal_error(proc: subprocess.CompletedProcess) -> None:
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, \
        proc.stderr[-2000:]


def deep_file(top: Path, name: str) -> Path:
    """A file whose absolute path is longer than PATH_MAX (made with relative steps)."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(20):
            os.mkdir("d" * 250, dir_fd=fd)
            nxt = os.open("d" * 250, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nxt
        wfd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(wfd, b"#!/bin/bash\n#SBATCH --nodes=1\npython train.py\n")
        os.close(wfd)
    finally:
        os.close(fd)
    return top.joinpath(*["d" * 250] * 20, name)


def hostile_repo(tmp_path: Path, git: bool) -> Path:
    """A training repo holding every kind of entry a stat or read can fail on."""
    repo = tmp_path / "repo"
    (repo / "configs").mkdir(parents=True)
    (repo / "pkg").mkdir()
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "train.py").write_text("import os\nos.environ.setdefault('A', '1')\n"
                                   "import torch\ntorch.load('data/x.pt')\n")
    (repo / "configs" / "train.yaml").write_text("loader:\n  num_workers: 2\n")
    (repo / "job.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n"
        "source /nonexistent/env.sh\ncd " + "x" * 300 + " || true\n"
        "export PYTHONPATH=$PWD\nrsync -a --exclude=data . host:/dst\n"
        "srun python nosearch/train.py --config=configs/train.yaml\n"
        "srun python private/train.py\npython " + "y/" * 2100 + "t.py\n"
        f"source {tmp_path}/someone-else/env.sh\nsource {'z' * 300}.sh\n"
        f"python train.py --config={'c' * 300}.yaml {'k' * 300}=1\n"
        f"python train.py --config-path={tmp_path}/someone-else --config-name=c\n"
        f"python train.py --config-dir={'d' * 300} --config-name=c\n")
    (repo / "resume.py").write_text(
        f"import torch\ntorch.load('{'r' * 300}.pt')\ntorch.load('private/ck.pt')\n"
        f"open('{'w' * 300}.txt', 'w')\n")
    # a directory that can be listed but not entered: every stat inside is EACCES
    nosearch = repo / "nosearch"
    nosearch.mkdir()
    for name in ("__init__.py", "train.py", "job.sh", "conf.yaml"):
        (nosearch / name).write_text("#SBATCH --nodes=1\n" if name == "job.sh" else "")
    # a directory that cannot even be listed
    (repo / "locked").mkdir()
    (repo / "locked" / "core").write_text("")
    # files that can be stat'ed but not opened
    for name in ("secret.py", "secret.sh", "configs/secret.yaml"):
        (repo / name).write_text("import torch\n")
    # symlink loops, and a symlink into someone else's private directory
    os.symlink("loop.py", repo / "loop.py")
    os.symlink("a.yaml", repo / "configs" / "b.yaml")
    os.symlink("b.yaml", repo / "configs" / "a.yaml")
    private = tmp_path / "someone-else"
    (private / "pkg").mkdir(parents=True)
    (private / "pkg" / "train.py").write_text("")
    os.symlink(private / "pkg", repo / "private")
    os.symlink(private / "pkg" / "train.py", repo / "linked.py")
    deep_file(repo, "deep.sbatch")
    if git:
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, capture_output=True)
    for p, mode in ((nosearch, 0o600), (repo / "locked", 0), (private, 0),
                    (repo / "secret.py", 0), (repo / "secret.sh", 0),
                    (repo / "configs" / "secret.yaml", 0)):
        os.chmod(p, mode)
    return repo


@pytest.fixture
def restore_modes(tmp_path):
    yield
    for root, dirs, _ in os.walk(tmp_path):  # so that pytest can remove tmp_path
        for d in dirs:
            try:
                if not os.path.islink(os.path.join(root, d)):
                    os.chmod(os.path.join(root, d), 0o755)
            except OSError:  # the path longer than PATH_MAX
                pass


# The git view with the static checks; the plain walk with the node checks that read
# the repo (the rest import torch: slow, and they read nothing of the repo).
@pytest.mark.parametrize("git,mode,fmt", [
    (True, ["--static"], "table"),
    (False, ["--no-smoke", "--only", "package-not-importable,core-dump-unlimited,"
             "fd-limit-too-low,shm-too-small,cuda-tensor-in-shared-cache"], "markdown"),
], ids=["git-repo", "plain-dir"])
def test_unreadable_entries_are_counted_never_fatal(tmp_path, restore_modes, git, mode, fmt):
    repo = hostile_repo(tmp_path, git)
    out = tmp_path / "report.json"
    proc = doctor("run", *mode, "--repo", str(repo), "--json", str(out), "--format", fmt,
                  cwd=tmp_path, unprivileged=True)
    no_internal_error(proc)
    assert proc.returncode in (0, 1), (proc.returncode, proc.stdout[-3000:], proc.stderr)
    doc = validate_report(json.loads(out.read_text()))
    errors = [(r["id"], r["reason"]) for r in doc["results"] if r["status"] == "error"]
    assert errors == []
    seen = doc["facts"]["unreadable"]
    paths = {e["path"] for e in seen["examples"]}
    assert seen["count"] >= 4 and len(paths) == len(seen["examples"]) <= 5, seen
    assert all(e["reason"] for e in seen["examples"]), seen
    assert "configs/a.yaml" in paths or "configs/b.yaml" in paths, seen  # ELOOP
    assert f"{seen['count']} entries could not be read: " in proc.stdout, proc.stdout[-2000:]


@pytest.fixture
def gone(tmp_path):
    """A current directory that has been deleted."""
    d = tmp_path / "gone"
    d.mkdir()
    return d


@pytest.mark.parametrize("case,needle", [
    ("repo-no-search", "cannot read repository path"),
    ("repo-loop", "Too many levels of symbolic links"),
    ("repo-long", "File name too long"),
    ("config-long", "File name too long"),
    ("config-loop", "Too many levels of symbolic links"),
    ("config-no-search", "Permission denied"),
    ("sbatch-loop", "Too many levels of symbolic links"),
    ("settings-empty-glob", "configs"),
    ("settings-long", "settings file"),
    ("settings-loop", "Too many levels of symbolic links"),
    ("settings-in-private-dir", "Permission denied"),
    ("cwd-deleted", "current directory"),
    ("cwd-deleted-relative-config", "current directory"),
])
def test_bad_path_inputs_are_one_line_exit_2(tmp_path, restore_modes, gone, case, needle):
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink("loop", tmp_path / "loop")
    (tmp_path / "closed").mkdir()
    (tmp_path / "closed" / "c.yaml").write_text("a: 1\n")
    os.chmod(tmp_path / "closed", 0o600)
    long = str(tmp_path / ("n" * 300))
    cwd, unprivileged = tmp_path, False
    args = {"repo-no-search": ["--repo", str(tmp_path / "closed")],
            "repo-loop": ["--repo", str(tmp_path / "loop")],
            "repo-long": ["--repo", long],
            "config-long": ["--repo", str(repo), "--config", long + ".yaml"],
            "config-loop": ["--repo", str(repo), "--config", str(tmp_path / "loop")],
            "config-no-search": ["--repo", str(repo), "--config",
                                 str(tmp_path / "closed" / "c.yaml")],
            "sbatch-loop": ["--repo", str(repo), "--sbatch", str(tmp_path / "loop")],
            "settings-empty-glob": ["--repo", str(repo)],
            "settings-long": ["--repo", str(repo), "--settings", long + ".yaml"],
            "settings-loop": ["--repo", str(repo), "--settings", str(tmp_path / "loop")],
            "settings-in-private-dir": ["--repo", str(repo)],
            "cwd-deleted": [],
            "cwd-deleted-relative-config": ["--repo", str(repo), "--config", "c.yaml"],
            }[case]
    if case == "settings-in-private-dir":  # the repo's doctor.yaml links into it
        os.symlink(tmp_path / "closed" / "c.yaml", repo / "doctor.yaml")
    if case.endswith(("no-search", "private-dir")):
        unprivileged = True
    if case == "settings-empty-glob":
        (repo / "doctor.yaml").write_text('configs: [""]\n')
    if case.startswith("cwd-deleted"):
        cwd = gone
    if cwd == gone:  # removed after the child starts in it: the shell's `cd x; rmdir ../x`
        script = f'cd "{gone}" && rmdir "{gone}" && exec "$@"'
        proc = subprocess.run(["sh", "-c", script, "sh", sys.executable, "-m", "doctor",
                               "run", "--static", *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    else:
        proc = doctor("run", "--static", *args, cwd=cwd, unprivileged=unprivileged)
    one_line_exit_2(proc, needle)


def test_absolute_configs_glob_in_settings_is_read(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    shared = tmp_path / "shared-configs"
    shared.mkdir()
    (shared / "train.yaml").write_text("loader:\n  num_workers: 0\n  prefetch_factor: 2\n")
    (repo / "doctor.yaml").write_text(f'configs: ["{shared}/*.yaml"]\n')
    proc = doctor("run", "--static", "--repo", str(repo), "--format", "json", cwd=tmp_path)
    no_internal_error(proc)
    doc = validate_report(json.loads(proc.stdout))
    assert doc["inputs"]["configs"] == [str(shared / "train.yaml")]


@pytest.mark.parametrize("where", ["file", "file/below", "/proc/self/nowhere"])
def test_doctor_docs_out_that_cannot_be_a_directory_is_one_line_exit_2(tmp_path, where):
    """An OS error writing the pages was an internal error (exit 3)."""
    (tmp_path / "file").write_text("kept\n")
    out = where if where.startswith("/") else str(tmp_path / where)
    proc = doctor("docs", "--out", out, cwd=tmp_path)
    one_line_exit_2(proc, f"cannot write the pages to {out}: ")
    assert (tmp_path / "file").read_text() == "kept\n"
