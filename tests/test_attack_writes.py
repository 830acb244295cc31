"""Issue 27, data loss: the doctor's writes stay where the user pointed.

Written as the owner of a hostile repo (or a careless user) would try it: a file of
someone else's is planted outside the repo as the canary, the repo commits a symlink
to it (a job script, a .gitignore, reports/doctor.json), and the real CLI runs on the
repo. The canary must stay byte-identical, the refusal is one line. File descriptors
given as paths (`3>>job.log`, `>(cat > out)`) are written as they are open, and no
report goes over a file the run read (a sourced env.sh, an --exclude-from file).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, clean_env, one_line_exit_2, run_doctor, run_main, validate_report
from harness import materialize

CRLF_SCRIPT = b"#!/bin/bash\r\n#SBATCH -N 1\r\nsrun python train.py\r\n"
HOME_FILE = b'{"my": "own notes, not a report"}\n'


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                            GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com"))


def committed(repo: Path) -> Path:
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the attacker's commit")
    return repo


def files_under(top: Path) -> dict:
    return {str(p.relative_to(top)): p.read_bytes() for p in sorted(top.rglob("*"))
            if p.is_file() and not p.is_symlink()}


# ---- doctor fix --write -----------------------------------------------------------
@pytest.mark.parametrize("link", ["file", "directory"])
def test_fix_never_edits_a_job_script_linked_out_of_the_repo(tmp_path, link):
    """job.sbatch (or its directory) is a symlink into another project: the fix used to
    rewrite that project's script, and the preview named it `a/tmp/...`."""
    other = tmp_path / "other-project"
    (other / "slurm").mkdir(parents=True)
    canary = other / "slurm" / "job.sbatch"
    canary.write_bytes(CRLF_SCRIPT)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "train.py").write_text("x = 1\n")
    if link == "file":
        (repo / "slurm").mkdir()
        (repo / "slurm" / "job.sbatch").symlink_to(canary)
    else:
        (repo / "slurm").symlink_to(other / "slurm")
    committed(repo)
    before = files_under(tmp_path / "other-project")
    named = ("--sbatch", str(repo / "slurm" / "job.sbatch"))  # git lists a linked dir as one name
    reason = (f"script-dos-line-breaks: not fixed: slurm/job.sbatch leads outside the "
              f"repository (to {canary})")
    if link == "file":
        preview = run_doctor("fix", "--repo", str(repo), *named, "--only",
                             "script-dos-line-breaks")
        assert (preview.returncode, preview.stdout) == (0, ""), preview.stderr
        assert reason in preview.stderr and "nothing to fix" in preview.stderr
    wrote = run_doctor("fix", "--repo", str(repo), *named, "--only", "script-dos-line-breaks",
                       "--write")
    assert wrote.returncode == 1, wrote.stderr   # the finding stays: still failing
    assert reason in wrote.stderr and "fixed " not in wrote.stdout
    assert files_under(other) == before
    assert (repo / "slurm" / "job.sbatch").is_symlink() or (repo / "slurm").is_symlink()


@pytest.fixture
def core_repo(tmp_path) -> Path:
    """A repo that commits a core dump: git-tracked-core-file's fix appends a pattern
    to .gitignore (fixtures/git-tracked-core-file/fail-index)."""
    return materialize(FIXTURES / "git-tracked-core-file" / "fail-index", tmp_path)


def test_fix_never_appends_to_a_gitignore_linked_out_of_the_repo(core_repo, tmp_path):
    """.gitignore is a symlink to the user's own file: the fix appended to it. (A link to
    a name that does not exist gets no edit at all: doctor/edits.py append_lines.)"""
    home = tmp_path / "home"
    home.mkdir()
    canary = home / ".gitignore_global"
    canary.write_bytes(b"*.swp\n")
    (core_repo / ".gitignore").symlink_to(canary)
    before = files_under(home)
    proc = run_doctor("fix", "--repo", str(core_repo), "--only", "git-tracked-core-file",
                      "--write")
    assert proc.returncode == 1, proc.stderr
    assert f".gitignore leads outside the repository (to {canary})" in proc.stderr
    assert "fixed" not in proc.stdout
    assert files_under(home) == before
    assert (core_repo / ".gitignore").is_symlink()


def test_fix_never_edits_the_git_dir_through_a_gitignore_link(core_repo):
    """The attacker commits `.gitignore -> .git/config` (inside the repo, so the outside
    rule let it through): the fix appended `core.[0-9]*` to the victim's git config, and
    git then died on every command with "bad config line"."""
    config = core_repo / ".git" / "config"
    before = config.read_bytes()
    (core_repo / ".gitignore").symlink_to(".git/config")
    proc = run_doctor("fix", "--repo", str(core_repo), "--only", "git-tracked-core-file",
                      "--write")
    assert proc.returncode == 1, proc.stderr
    assert (f".gitignore leads into the repository's git directory (to {config})"
            in proc.stderr), proc.stderr
    assert "fixed" not in proc.stdout
    assert config.read_bytes() == before
    assert subprocess.run(["git", "-C", str(core_repo), "status"],
                          capture_output=True).returncode == 0


def test_fix_still_edits_the_repos_own_gitignore(core_repo):
    """The same fix with a regular .gitignore: the refusal above is for the link only."""
    proc = run_doctor("fix", "--repo", str(core_repo), "--only", "git-tracked-core-file",
                      "--write")
    assert "fixed .gitignore (git-tracked-core-file)" in proc.stdout, proc.stderr
    assert "core.[0-9]*" in (core_repo / ".gitignore").read_text()


def test_preview_names_repo_paths_that_git_apply_takes(tmp_path):
    """Run from outside the repo, the repo named through a symlink, the scripts by
    absolute paths, one through an in-repo symlink and one through a link out of the
    repo: the preview holds only the repo's file, as a/<its repo path>, and `git apply
    --check` takes it in the repo (it refused the `a/tmp/...` of the file outside)."""
    repo = tmp_path / "repo"
    (repo / "slurm").mkdir(parents=True)
    (repo / "slurm" / "real.sbatch").write_bytes(CRLF_SCRIPT)
    (repo / "job.sbatch").symlink_to("slurm/real.sbatch")
    (tmp_path / "theirs.sbatch").write_bytes(CRLF_SCRIPT)
    (repo / "ext.sbatch").symlink_to(tmp_path / "theirs.sbatch")
    committed(repo)
    (tmp_path / "via").symlink_to(repo)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = subprocess.run([sys.executable, "-m", "doctor", "fix", "--repo",
                           str(tmp_path / "via"), "--sbatch", str(tmp_path / "via" / "job.sbatch"),
                           "--sbatch", str(tmp_path / "via" / "ext.sbatch")],
                          cwd=elsewhere, env=clean_env(), capture_output=True, timeout=120)
    assert proc.returncode == 1, proc.stderr   # bytes: the diff holds the CRs it removes
    assert proc.stdout.startswith(b"--- a/slurm/real.sbatch\n+++ b/slurm/real.sbatch\n"), \
        proc.stdout
    assert str(tmp_path).encode() not in proc.stdout
    patch = tmp_path / "fix.patch"
    patch.write_bytes(proc.stdout)
    check = subprocess.run(["git", "apply", "--check", str(patch)], cwd=repo,
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert proc.stdout.count(b"\n--- ") == 0   # one file
    assert b"not fixed: ext.sbatch leads outside the repository" in proc.stderr
    assert (repo / "slurm" / "real.sbatch").read_bytes() == CRLF_SCRIPT  # a preview only
    wrote = run_doctor("fix", "--repo", str(repo), "--sbatch", str(repo / "job.sbatch"),
                       "--write")
    # ext.sbatch still has CRLFs, but no job of this run runs it: a warning, exit 0
    assert wrote.returncode == 0, wrote.stderr
    assert "fixed slurm/real.sbatch (script-dos-line-breaks)" in wrote.stdout
    assert (tmp_path / "theirs.sbatch").read_bytes() == CRLF_SCRIPT
    assert (repo / "slurm" / "real.sbatch").read_bytes() == CRLF_SCRIPT.replace(b"\r", b"")
    assert (repo / "job.sbatch").is_symlink()


# ---- --output and --json through links ----------------------------------------------
@pytest.fixture
def planted(tmp_path):
    """A repo committing reports/doctor.json (and a reports-dir link) into a fake HOME."""
    home = tmp_path / "home"
    (home / "reports").mkdir(parents=True)
    (home / "notes.json").write_bytes(HOME_FILE)
    (home / "reports" / "doctor.json").write_bytes(HOME_FILE)
    repo = tmp_path / "repo"
    (repo / "reports").mkdir(parents=True)
    (repo / "reports" / "doctor.json").symlink_to(home / "notes.json")
    (repo / "out").symlink_to(home / "reports")
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH -N 1\nsrun python train.py\n")
    return committed(repo), home


def test_no_report_through_a_symlink_the_repo_commits(planted, monkeypatch, capsys):
    """reports/doctor.json, or the directory above it, is committed as a link into the
    user's home (git's index holds it as a link): the home file was replaced by the
    report. The first case runs the CLI as a user does; the others (refused before any
    check runs) in this process."""
    repo, home = planted
    before = files_under(home)
    monkeypatch.chdir(repo)
    for n, (option, named) in enumerate([("--output", "reports/doctor.json"),
                                         ("--json", "reports/doctor.json"),
                                         ("--json", "out/doctor.json"),
                                         ("--output", "reports/../reports/doctor.json"),
                                         ("--json", str(repo / "out" / "x" / "new.json"))]):
        argv = ("run", "--static", "--only", "slurm-gpu-mismatch", option, named)
        proc = run_doctor(*argv, cwd=repo) if n == 0 else run_main(capsys, *argv)
        link = "out" if "out/" in named else "reports/doctor.json"
        one_line_exit_2(proc, f"{option} {named}: {link} is a symlink in the repository to "
                        f"{home}", "outside it")
        assert proc.stdout == ""
    assert files_under(home) == before
    assert not (home / "reports" / "x").exists()


@pytest.mark.parametrize("option,named", [("--json", "nosuch/../out/doctor.json"),
                                          ("--output", "nosuch/../out/new.txt")])
def test_no_report_through_a_committed_link_behind_a_missing_name(planted, option, named):
    """`nosuch/../out/...`: the `..` was removed as text, so the path went through the
    committed `out -> $HOME/reports` unseen. The kernel refuses a `..` after a name that
    does not exist, and so does the doctor: one line, nothing written."""
    repo, home = planted
    before = files_under(home)
    proc = run_doctor("run", "--static", "--only", "slurm-gpu-mismatch", option, named,
                      cwd=repo)
    one_line_exit_2(proc, f"cannot write {option} {named}: {repo / 'nosuch'}: No such file")
    assert files_under(home) == before and not (home / "reports" / "new.txt").exists()
    assert not (repo / "nosuch").exists()


def test_a_users_untracked_link_is_followed(tmp_path):
    """The usual HPC set-up: the user's own `logs -> /scratch/$USER/logs`, untracked and
    git-ignored. Only a link the repo commits is refused; this one gets the report."""
    scratch = tmp_path / "scratch" / "logs"
    scratch.mkdir(parents=True)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".gitignore").write_text("logs\n")
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH -N 1\nsrun python train.py\n")
    committed(repo)
    (repo / "logs").symlink_to(scratch)
    proc = run_doctor("run", "--static", "--only", "slurm-gpu-mismatch", "--json",
                      "logs/doctor-%j.json", cwd=repo, env={"SLURM_JOB_ID": "123"})
    assert proc.returncode == 0, proc.stderr
    validate_report(json.loads((scratch / "doctor-123.json").read_text()))
    assert (repo / "logs").is_symlink()


def test_outside_a_git_work_tree_every_link_out_is_refused(tmp_path):
    """No index to tell a committed link from the user's: a repo directory that is no git
    work tree (an unpacked tarball) keeps refusing its links out."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.json").write_bytes(HOME_FILE)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH -N 1\nsrun python train.py\n")
    (repo / "doctor.json").symlink_to(home / "notes.json")
    proc = run_doctor("run", "--static", "--only", "slurm-gpu-mismatch", "--json",
                      "doctor.json", cwd=repo)
    one_line_exit_2(proc, "--json doctor.json: doctor.json is a symlink in the repository")
    assert (home / "notes.json").read_bytes() == HOME_FILE


def test_a_users_own_link_and_an_in_repo_link_are_followed(planted, tmp_path):
    """What the user links outside any repo is their choice; a repo's link to its own
    file stays inside. Both get the report, and the links stay links."""
    repo, home = planted
    mine = tmp_path / "latest.json"
    mine.symlink_to(home / "reports" / "latest.json")   # does not exist yet
    (repo / "reports" / "last.json").write_text("{}\n")
    (repo / "reports" / "current.json").symlink_to("last.json")
    proc = run_doctor("run", "--static", "--only", "slurm-gpu-mismatch", "--format", "json",
                      "--output", str(mine), "--json", "reports/current.json", cwd=repo)
    assert proc.returncode == 0, proc.stderr
    validate_report(json.loads((home / "reports" / "latest.json").read_text()))
    validate_report(json.loads((repo / "reports" / "last.json").read_text()))
    assert mine.is_symlink() and (repo / "reports" / "current.json").is_symlink()
    assert (home / "notes.json").read_bytes() == HOME_FILE


# ---- file descriptors ----------------------------------------------------------------
def doctor_with_fd(repo: Path, fd: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "doctor", "run", "--static", "--only",
                           "slurm-gpu-mismatch", *args], cwd=repo, env=clean_env(),
                          pass_fds=(fd,), capture_output=True, text=True, timeout=120)


def test_an_append_mode_fd_appends_and_keeps_the_log(planted, tmp_path):
    """`--json /dev/fd/N` (and `--output /proc/self/fd/N`) with N open in append mode on
    the job's log: the log's earlier lines were lost (the report was renamed over it)."""
    repo, _ = planted
    log = tmp_path / "job.log"
    log.write_bytes(b"epoch 1 loss 0.5\n")
    inode = log.stat().st_ino
    fd = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        proc = doctor_with_fd(repo, fd, "--json", f"/dev/fd/{fd}", "--output",
                              f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)
    assert proc.returncode == 0, proc.stderr
    text = log.read_text()
    assert text.startswith("epoch 1 loss 0.5\n{"), text[:80]
    doc, end = json.JSONDecoder().raw_decode(text, len("epoch 1 loss 0.5\n"))
    validate_report(doc)
    assert "1 skipped" in text[end:]   # then the human report, appended too
    assert log.stat().st_ino == inode   # written to, not replaced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "job.log", "repo"]


def test_process_substitution_reaches_the_reader(planted, tmp_path):
    """`--output >(cat > out)`: a pipe the shell gave the doctor as /dev/fd/63. It used to
    be 'cannot write /dev/fd/63', exit 2, and nothing reached the reader."""
    repo, _ = planted
    out = tmp_path / "out.json"
    script = (f'"$@" --format json --output >(cat > {out}); rc=$?; wait $!; exit $rc')
    proc = subprocess.run(["bash", "-c", script, "bash", sys.executable, "-m", "doctor",
                           "run", "--static", "--only", "slurm-gpu-mismatch"], cwd=repo,
                          env=clean_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    validate_report(json.loads(out.read_text()))


def test_an_fd_not_given_or_read_only_is_refused(planted, tmp_path):
    repo, _ = planted
    log = tmp_path / "job.log"
    log.write_bytes(b"earlier\n")
    fd = os.open(log, os.O_RDONLY)
    try:
        one_line_exit_2(doctor_with_fd(repo, fd, "--output", f"/dev/fd/{fd}"),
                        f"--output /dev/fd/{fd}: file descriptor {fd} is open read-only")
    finally:
        os.close(fd)
    unused = 99   # not open in the child
    one_line_exit_2(run_doctor("run", "--static", "--output", f"/dev/fd/{unused}", cwd=repo),
                    f"file descriptor {unused} is not open")
    assert log.read_bytes() == b"earlier\n"


def test_an_fd_the_doctor_opened_itself_is_not_an_output(tmp_path):
    """An fd opened after the command began (as the doctor opens its spooled gits' files)
    is not one the user gave: the report would vanish into the doctor's own file."""
    from doctor.errors import InputError
    from doctor.outputs import begin_command, check_outputs, end_command

    begin_command()
    fd = os.open(tmp_path / "spool", os.O_RDWR | os.O_CREAT)
    try:
        with pytest.raises(InputError, match=f"file descriptor {fd} is not open"):
            check_outputs([("--output", f"/dev/fd/{fd}")], [])
    finally:
        os.close(fd)
        end_command()
    assert (tmp_path / "spool").read_bytes() == b""


# ---- the output-over-input guard: every file the run read ------------------------------
@pytest.fixture
def job_repo(tmp_path) -> Path:
    """A job that sources env.sh, rsyncs with an --exclude-from file and gives its
    container an --env-file."""
    repo = tmp_path / "repo"
    (repo / "slurm").mkdir(parents=True)
    (repo / "slurm" / "train.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=1\nsource slurm/env.sh\n"
        "rsync -a --exclude-from=slurm/excludes.txt ./ /scratch/$USER/code/\n"
        "srun singularity exec --env-file slurm/container.env img.sif python train.py\n")
    (repo / "slurm" / "env.sh").write_text("export NCCL_DEBUG=INFO\n")
    (repo / "slurm" / "container.env").write_text("WANDB_MODE=offline\n")
    (repo / "slurm" / "excludes.txt").write_text("logs\n*.pyc\n")
    (repo / "train.py").write_text("import torch\n")
    return committed(repo)


@pytest.mark.parametrize("option,victim", [("--json", "slurm/env.sh"),
                                           ("--output", "slurm/excludes.txt"),
                                           ("--json", "train.py"),
                                           ("--output", "slurm/container.env")])
def test_no_report_over_a_file_the_run_read(job_repo, option, victim):
    """The sourced env.sh, the rsync --exclude-from file, a Python source and the
    container's --env-file (each read by another reader of the job model): the guard
    knew only configs, job scripts, caches and settings. Refused before anything is
    written: not the other report either."""
    before = files_under(job_repo)
    other = "--output" if option == "--json" else "--json"
    proc = run_doctor("run", "--static", option, victim, other, "other.txt", cwd=job_repo)
    one_line_exit_2(proc, f"{option} {victim} would overwrite an input of this run "
                    f"({job_repo / victim})")
    assert proc.stdout == ""
    assert files_under(job_repo) == before   # other.txt was not written either


@pytest.mark.parametrize("option,victim", [("--output", ".gitignore"),
                                           ("--json", "data/.cvsignore"),
                                           ("--json", "setup.cfg")])
def test_no_report_over_a_file_read_by_git_or_a_plain_open(tmp_path, option, victim):
    """The repo's .gitignore (read by git, for the git checks), an rsync -C source's
    .cvsignore and setup.cfg's console_scripts (read with a plain open(), not through
    the record of inputs): each was replaced by the report."""
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "train.sbatch").write_text(
        "#!/bin/bash\n#SBATCH --nodes=1\nrsync -a -C --exclude cache data/ /scratch/$USER/data/\n"
        "srun mytrain --epochs 1\n")
    (repo / "data" / ".cvsignore").write_text("*.tmp\n")
    (repo / "data" / "a.bin").write_text("x\n")
    (repo / "setup.cfg").write_text("[options.entry_points]\nconsole_scripts =\n"
                                    "    mytrain = pkg.train:main\n")
    (repo / ".gitignore").write_text("*.log\n")
    committed(repo)
    before = files_under(repo)
    proc = run_doctor("run", "--static", option, victim, cwd=repo)
    one_line_exit_2(proc, f"{option} {victim} would overwrite an input of this run")
    assert files_under(repo) == before


def test_a_previous_report_in_the_repo_is_written_again(job_repo):
    """What the job model only sniffed (a previous report without a suffix, looked at as
    a possible job script) is not an input: a second run writes it again."""
    for _ in range(2):
        proc = run_doctor("run", "--static", "--output", "REPORT", "--json", "report.sarif",
                          cwd=job_repo)
        assert proc.returncode in (0, 1), proc.stderr
    validate_report(json.loads((job_repo / "report.sarif").read_text()))


def test_sbatch_json_through_a_repo_link_is_refused_before_submitting(planted, tmp_path):
    """`doctor sbatch --json reports/doctor.json`: refused before the checks, so nothing
    is submitted (a fake sbatch would leave its marker)."""
    repo, home = planted
    marker = tmp_path / "submitted"
    fake = tmp_path / "bin" / "sbatch"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\ntouch {marker}\necho 'Submitted batch job 7'\n")
    fake.chmod(0o755)
    before = files_under(home)
    proc = run_doctor("sbatch", "--json", "reports/doctor.json", "job.sbatch", cwd=repo,
                      env={"PATH": f"{fake.parent}:{os.environ['PATH']}"})
    one_line_exit_2(proc, "--json reports/doctor.json: reports/doctor.json is a symlink in "
                    "the repository")
    assert not marker.exists() and proc.stdout == ""
    assert files_under(home) == before
