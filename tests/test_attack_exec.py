"""Issue 27: `--no-smoke` and `--static` run no byte of the repository.

Written as an attacker would: the repository plants code everywhere a child process
of the doctor might pick it up (a sitecustomize.py and a torch/ on the PYTHONPATH its
job script exports, PYTHONSTARTUP, an LD_PRELOAD/LD_AUDIT library, a PATH with its
own tools, a venv whose bin/python is a shell script, git filters, hooks and an
fsmonitor in its .git), each of which writes a marker file outside the repository when
it runs. The real CLI runs on it; no marker may appear, and what the report says must
still be right (the installed torch's version, the venv's packages, the changed files).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

from conftest import ROOT, result_of, run_doctor, run_json, validate_report

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
PY = f"python{sys.version_info[0]}.{sys.version_info[1]}"


def _marker_script(markers: Path, name: str, then: str = "") -> str:
    return f"#!/bin/sh\ntouch '{markers / name}'\n{then}"


def _exe(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)


def _planted(markers: Path) -> list:
    return sorted(p.name for p in markers.iterdir())


# ---- Python children: the torch probe, the torch API reader, the module lookups ----------
JOB = """\
#!/bin/bash
#SBATCH --gpus=1
cd $SLURM_SUBMIT_DIR
source venv/bin/activate
export PYTHONPATH=$SLURM_SUBMIT_DIR/lib:$SLURM_SUBMIT_DIR/vendor
export PYTHONSTARTUP=$SLURM_SUBMIT_DIR/lib/startup.py
export PYTHONUSERBASE=$SLURM_SUBMIT_DIR/userbase
export LD_PRELOAD=$SLURM_SUBMIT_DIR/lib/libcanary.so
export LD_AUDIT=$SLURM_SUBMIT_DIR/lib/libcanary.so
export LD_LIBRARY_PATH=$SLURM_SUBMIT_DIR/lib
export CUDA_INJECTION64_PATH=$SLURM_SUBMIT_DIR/lib/libcanary.so
export PATH=$SLURM_SUBMIT_DIR/bin:$PATH
srun python train.py
"""
TRAIN = """\
import numpy_fake_pkg
import tifffile
import torch
from torch.utils.data import DataLoader
from pkg import util
loader = DataLoader([1, 2, 3], batch_size=2, not_a_keyword=1)
"""


def _hostile_repo(root: Path, markers: Path) -> Path:
    """A repo whose job script exports everything that could make a child run its code."""
    repo = root / "repo"
    lib = repo / "lib"
    lib.mkdir(parents=True)
    markers.mkdir()
    for name in ("sitecustomize", "usercustomize", "startup"):
        (lib / f"{name}.py").write_text(f"open({str(markers / name)!r}, 'w').close()\n")
    torch = repo / "vendor" / "torch"
    torch.mkdir(parents=True)
    (torch / "__init__.py").write_text(
        f"open({str(markers / 'vendor-torch')!r}, 'w').close()\n__version__ = '0.0.1'\n")
    (lib / "canary.c").write_text(
        "#include <stdio.h>\n__attribute__((constructor)) static void canary(void) {\n"
        f'  FILE *f = fopen("{markers / "ld-library"}", "w"); if (f) fclose(f);\n}}\n')
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib / "libcanary.so"),
                    str(lib / "canary.c")], check=True)
    user_site = repo / "userbase" / "lib" / PY / "site-packages"
    user_site.mkdir(parents=True)
    (user_site / "usercustomize.py").write_text(
        f"open({str(markers / 'userbase')!r}, 'w').close()\n")
    # the venv the job activates: its python is a shell script, its packages are data
    _exe(repo / "venv" / "bin" / "python", _marker_script(markers, "venv-python",
                                                          'exec python3 "$@"\n'))
    (repo / "venv" / "bin" / "activate").write_text("# a venv\n")
    site = repo / "venv" / "lib" / PY / "site-packages" / "numpy_fake_pkg"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text(
        f"open({str(markers / 'venv-package')!r}, 'w').close()\n")
    for tool in ("python", "python3", "git", "singularity", "apptainer", "nvidia-smi",
                 "rocm-smi", "scontrol", "sbatch", "srun"):
        _exe(repo / "bin" / tool, _marker_script(markers, f"path-{tool}"))
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "src" / "pkg" / "__init__.py").write_text(
        f"open({str(markers / 'repo-package')!r}, 'w').close()\n")
    (repo / "src" / "pkg" / "util.py").write_text("")
    (repo / "train.py").write_text(TRAIN)
    (repo / "job.sbatch").write_text(JOB)
    return repo


def _run(repo: Path, *mode: str) -> tuple:
    return run_json(*mode, "--repo", str(repo), "--sbatch", str(repo / "job.sbatch"),
                    env={"PATH": os.environ["PATH"], "SLURM_SUBMIT_DIR": str(repo)})


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc builds the LD_PRELOAD canary")
def test_no_smoke_runs_nothing_the_job_script_exports_and_reports_the_real_torch(tmp_path):
    markers = tmp_path / "markers"
    repo = _hostile_repo(tmp_path, markers)
    code, doc = _run(repo, "--no-smoke")
    assert _planted(markers) == []
    build = doc["facts"]["torch_build"]
    # the installed torch, imported in the child; the repo's is reported as read, not run
    assert build["version"] == metadata.version("torch") and build["error"] is None
    assert build["shadowed_by"] == {"path": "vendor", "version": "0.0.1",
                                    "set_at": "job.sbatch:5"}
    # the venv is read where it lies: numpy_fake_pkg is installed there, tifffile is not
    deps = result_of(doc, "container-deps-missing")
    assert [f["data"]["module"] for f in deps["findings"]] == ["tifffile"], deps
    assert f"{repo}/venv" in deps["findings"][0]["message"]
    # the torch API was read from the installed torch by its child
    api = result_of(doc, "torch-api-mismatch")
    (f,) = api["findings"]
    assert "not_a_keyword" in f["message"] and \
        f"installed torch {metadata.version('torch')}" in f["message"] + str(f["data"]), f
    pkg = result_of(doc, "package-not-importable")   # the lookup ran, found src/ missing
    assert pkg["status"] == "fail" and pkg["findings"][0]["data"]["missing"] == "pkg", pkg


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc builds the LD_PRELOAD canary")
def test_static_runs_nothing_and_imports_no_torch(tmp_path):
    markers = tmp_path / "markers"
    repo = _hostile_repo(tmp_path, markers)
    code, doc = _run(repo, "--static")
    assert _planted(markers) == []
    assert "torch_build" not in doc["facts"]
    assert not any(r["status"] == "error" for r in doc["results"]), doc["results"]


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc builds the LD_PRELOAD canary")
def test_fix_and_sbatch_run_what_no_smoke_runs_and_nothing_of_the_repo(tmp_path):
    """`doctor fix` and `doctor sbatch` run the checks as `--no-smoke` does; sbatch is the
    one on this node's PATH, not the one the job script puts first on its own."""
    markers = tmp_path / "markers"
    repo = _hostile_repo(tmp_path, markers)
    env = {"PATH": os.environ["PATH"], "SLURM_SUBMIT_DIR": str(repo)}
    proc = run_doctor("fix", "--repo", str(repo), "--sbatch", str(repo / "job.sbatch"), env=env)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr
    assert _planted(markers) == []
    host = tmp_path / "host"
    _exe(host / "sbatch", f"#!/bin/sh\ntouch '{tmp_path / 'host-sbatch'}'\necho 4242\n")
    proc = run_doctor("sbatch", "--only", "gpu-not-visible", "--repo", str(repo),
                      str(repo / "job.sbatch"), env=dict(env, PATH=f"{host}:{env['PATH']}"))
    assert (proc.returncode, proc.stdout) == (0, "4242\n"), proc.stderr
    assert (tmp_path / "host-sbatch").exists() and _planted(markers) == []


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc builds the LD_PRELOAD canary")
def test_gather_runs_on_each_node_what_a_run_runs_and_nothing_of_the_repo(tmp_path):
    """Two tasks of a gathered run (test_gather's loopback set-up) read the hostile job."""
    from test_gather import finish, free_port, task_env

    markers = tmp_path / "markers"
    repo = _hostile_repo(tmp_path, markers)
    port = free_port()
    procs = [subprocess.Popen(
        [sys.executable, "-m", "doctor", "run", "--gather", "--no-smoke", "--format", "json",
         "--only", "package-not-importable,container-deps-missing,gpu-not-visible",
         "--repo", str(repo), "--sbatch", str(repo / "job.sbatch")],
        env=task_env(rank, 2, port, {"SLURM_SUBMIT_DIR": str(repo)}), cwd=ROOT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for rank in range(2)]
    (code, out, err), _ = finish(procs)
    doc = validate_report(json.loads(out))
    assert [n["status"] for n in doc["nodes"]] == [doc["nodes"][0]["status"]] * 2, err
    assert _planted(markers) == []
    deps = result_of(doc, "container-deps-missing")
    assert [f["data"]["module"] for f in deps["findings"]] == ["tifffile"], deps


def test_show_and_diff_run_nothing(tmp_path):
    """A saved report is read, never acted on: from inside a repository whose git would
    run its filters and hooks, with a PATH whose every tool leaves a marker."""
    markers = tmp_path / "markers"
    repo = _hostile_git_repo(tmp_path, markers)
    report = tmp_path / "report.json"
    code, doc = run_json("--static", "--repo", str(repo), "--json", str(report),
                         env={"PATH": os.environ["PATH"]})
    assert _planted(markers) == [] and report.exists()
    for tool in ("git", "python", "python3", "sh", "bash", "sbatch", "srun", "scontrol"):
        _exe(tmp_path / "tools" / tool, _marker_script(markers, f"path-{tool}"))
    env = {"PATH": f"{tmp_path / 'tools'}:{os.environ['PATH']}"}
    for argv in (["show", str(report)], ["diff", str(report), str(report)]):
        proc = run_doctor(*argv, cwd=repo, env=env)
        assert proc.returncode == 0 and proc.stdout, proc.stderr
    assert _planted(markers) == []


def test_a_container_lookup_gets_no_job_variable_no_repo_bind_and_no_repo_image(tmp_path):
    """The container runtime is this node's (a stand-in on PATH that records what it is
    given, then runs the lookup with this Python): it gets the doctor's environment, not
    the job's, and none of the step's options that would inject code into the image's
    Python. An image that is a file of the repo is not run at all."""
    markers = tmp_path / "markers"
    repo = _hostile_repo(tmp_path, markers) if shutil.which("gcc") else None
    if repo is None:
        pytest.skip("gcc builds the LD_PRELOAD canary")
    seen = tmp_path / "runtime-saw"
    image = "/images/pytorch.sif"
    _exe(tmp_path / "host" / "singularity", f"""#!/bin/sh
{{ printf '%s\\n' "$@"; echo ---; env; }} > '{seen}'
while [ "$1" != '{image}' ] && [ "$1" != ./img.sif ]; do shift; done
shift 2
exec '{sys.executable}' "$@"
""")
    (repo / "job.sbatch").write_text(JOB.replace(
        "srun python train.py",
        f"srun singularity exec --env LD_PRELOAD=$SLURM_SUBMIT_DIR/lib/libcanary.so "
        f"--env-file=$SLURM_SUBMIT_DIR/lib/env -B /scratch,$SLURM_SUBMIT_DIR/lib:/usr/lib64 "
        # the attached forms the runtimes take as well: a repo library, a repo overlay
        f"-B$SLURM_SUBMIT_DIR/lib:/usr/lib64 -o$SLURM_SUBMIT_DIR/ov.img "
        f"--nv {image} python3 train.py").replace("source venv/bin/activate\n", ""))
    env = {"PATH": f"{tmp_path / 'host'}:{os.environ['PATH']}", "SLURM_SUBMIT_DIR": str(repo)}
    code, doc = run_json("--no-smoke", "--only", "container-deps-missing", "--repo", str(repo),
                         "--sbatch", str(repo / "job.sbatch"), env=env)
    res = result_of(doc, "container-deps-missing")
    assert _planted(markers) == []
    argv, _, environ = seen.read_text().partition("---\n")
    assert argv.split("\n")[:4] == ["exec", "-B", "/scratch", "--nv"], argv
    assert "ov.img" not in argv and "/usr/lib64" not in argv, argv
    assert "LD_PRELOAD" not in environ and "PYTHONPATH" not in environ, environ
    # PYTHONPATH reached the lookup as data: numpy_fake_pkg is not on it, tifffile neither
    assert sorted(f["data"]["module"] for f in res["findings"]) == \
        ["numpy_fake_pkg", "tifffile"], res

    seen.unlink()
    (repo / "img.sif").write_text("not an image")
    (repo / "job.sbatch").write_text((repo / "job.sbatch").read_text().replace(image,
                                                                                "./img.sif"))
    code, doc = run_json("--no-smoke", "--only", "container-deps-missing", "--repo", str(repo),
                         "--sbatch", str(repo / "job.sbatch"), env=env)
    res = result_of(doc, "container-deps-missing")
    assert res["status"] == "skip" and "is a file of the repository" in res["reason"], res
    assert not seen.exists() and _planted(markers) == []


@pytest.mark.parametrize("named", ["in the repo", "anyone can change"])
def test_a_venv_whose_pyvenv_cfg_names_a_python_it_may_not_run_is_read_not_run(tmp_path, named):
    """The repo's venv names its base interpreter (`home`, `executable`): a `python3`
    of the repo, or one outside it that any user may rewrite (a shared /tmp). Either
    would run if the lookup trusted pyvenv.cfg; it reads the venv as data instead."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = tmp_path / "repo"
    base = repo / "pybase" / "bin" if named == "in the repo" else tmp_path / "shared" / "bin"
    _exe(base / "python3", _marker_script(markers, "base-python", f'exec {sys.executable} "$@"\n'))
    if named == "anyone can change":
        (base / "python3").chmod(0o777)
    venv = repo / "venv"
    _exe(venv / "bin" / "python", _marker_script(markers, "venv-python",
                                                 f'exec {sys.executable} "$@"\n'))
    (venv / "bin" / "activate").write_text("# a venv\n")
    (venv / "pyvenv.cfg").write_text(f"home = {base}\nexecutable = {base / 'python3'}\n"
                                     "include-system-site-packages = false\nversion = "
                                     f"{sys.version_info[0]}.{sys.version_info[1]}.0\n")
    (venv / "lib" / PY / "site-packages" / "numpy_fake_pkg").mkdir(parents=True)
    (venv / "lib" / PY / "site-packages" / "numpy_fake_pkg" / "__init__.py").write_text(
        f"open({str(markers / 'venv-package')!r}, 'w').close()\n")
    (repo / "train.py").write_text("import numpy_fake_pkg\nimport tifffile\n")
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --gpus=1\ncd $SLURM_SUBMIT_DIR\n"
                                     "source venv/bin/activate\nsrun python train.py\n")
    code, doc = run_json("--no-smoke", "--only", "container-deps-missing", "--repo", str(repo),
                         "--sbatch", str(repo / "job.sbatch"),
                         env={"PATH": os.environ["PATH"], "SLURM_SUBMIT_DIR": str(repo)})
    assert _planted(markers) == []
    res = result_of(doc, "container-deps-missing")
    assert [f["data"]["module"] for f in res["findings"]] == ["tifffile"], res


@pytest.mark.parametrize("tail", ["", ":$PYTHONPATH"])
def test_without_torch_in_the_doctors_environment_the_jobs_own_torch_is_named(
        tmp_path, monkeypatch, tail):
    """On a GPU node outside a job, the job's torch comes from its own PYTHONPATH (a
    site's module tree outside the repo), which the probe reads and does not import.
    The doctor's environment has no torch: that is what the check says, as a warning
    that names the torch the job would use, not an error about the job. The export
    may keep a login PYTHONPATH the doctor does not know (`tail`)."""
    from doctor.job.context import Job
    from doctor.registry import get
    from doctor.runner import run_checks
    marker = tmp_path / "imported"
    sw = tmp_path / "opt" / "sw" / "pytorch"
    (sw / "torch").mkdir(parents=True)
    (sw / "torch" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'w').close()\n__version__ = '2.5.1+rocm6.2'\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "job.sbatch").write_text(f"#!/bin/bash\n#SBATCH --gpus-per-node=1\n"
                                     f"export PYTHONPATH={sw}{tail}\nsrun python train.py\n")
    # the doctor's own path without its site-packages: the probe's child finds no torch
    monkeypatch.setattr(sys, "path", [p for p in sys.path if "-packages" not in p])
    job = Job(repo, sbatch=[repo / "job.sbatch"], env={"PATH": os.environ["PATH"]},
              facts={"devices": {"nvidia": ["/dev/nvidia0"], "kfd": False, "render": [],
                                 "problems": []}})
    doc = run_checks(job, [get("gpu-not-visible")]).doc()
    res = next(r for r in doc["results"] if r["id"] == "gpu-not-visible")
    assert not marker.exists()
    (f,) = res["findings"]
    assert f["severity"] == "warning", f
    assert f["message"].startswith("torch cannot be imported in the doctor's environment: "
                                   "ModuleNotFoundError"), f
    assert f"the torch in {sw} (2.5.1+rocm6.2" in f["message"], f


# ---- git: no filter, textconv, external diff, hook, fsmonitor or pager ---------------------
def _git(repo: Path, *args: str) -> None:
    """The test's own git: it must not set off the traps it lays either."""
    subprocess.run(["git", "-C", str(repo), "-c", "protocol.file.allow=always", "-c",
                    "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", *args],
                   check=True, capture_output=True, env=dict(os.environ, **GIT_ENV))


def _committed(repo: Path, files: dict) -> Path:
    """A new repo at `repo` holding `files` ({name: text}), committed."""
    repo.mkdir()
    _git(repo, "init", "-q")
    for name, text in files.items():
        (repo / name).write_text(text)
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "init")
    return repo


def _hostile_git_repo(root: Path, markers: Path) -> Path:
    """A repo, committed clean, whose .git then names a command for everything git can
    run: filters (clean/smudge, a process filter, `required`), a textconv, an external
    diff, an fsmonitor, a pager and every hook; and a submodule with its own filter. Then
    a tracked file changes size, another changes in place (same size: git must hash it),
    and so does one in the submodule."""
    markers.mkdir()
    sub_src = _committed(root / "sub-src", {"f.txt": "aaaa\n"})
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "train.py").write_text("import os\n")
    (repo / "data.txt").write_text("aaaa\n")
    (repo / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --gpus=1\nsrun python train.py\n")
    (repo / ".gitattributes").write_text("*.py filter=evil diff=evil\n*.txt filter=proc\n")
    _git(repo, "add", ".")
    _git(repo, "submodule", "-q", "add", str(sub_src), "sub")
    _git(repo, "commit", "-qm", "init")
    gitdir = repo / ".git"
    for name, value in {
        "filter.evil.clean": f"touch {markers}/clean; cat",
        "filter.evil.smudge": f"touch {markers}/smudge; cat",
        "filter.evil.required": "true",
        "filter.proc.process": f"touch {markers}/process",
        "diff.evil.textconv": f"touch {markers}/textconv; cat",
        "diff.external": f"touch {markers}/external",
        "core.pager": f"touch {markers}/pager; cat",
        "core.fsmonitor": str(gitdir / "fsmonitor"),
        "core.hooksPath": str(gitdir / "hooks"),
    }.items():
        _git(repo, "config", name, value)
    _exe(gitdir / "fsmonitor", _marker_script(markers, "fsmonitor"))
    for hook in ("pre-commit", "post-checkout", "post-index-change", "reference-transaction",
                 "fsmonitor-watchman", "pre-auto-gc", "post-rewrite", "pre-push"):
        _exe(gitdir / "hooks" / hook, _marker_script(markers, f"hook-{hook}"))
    (repo / "sub" / ".gitattributes").write_text("* filter=subevil\n")
    _git(repo / "sub", "config", "filter.subevil.clean", f"touch {markers}/sub-clean; cat")
    (repo / "train.py").write_text("import os\nimport sys\n")
    (repo / "data.txt").write_text("bbbb\n")
    (repo / "sub" / "f.txt").write_text("bbbb\n")
    return repo


@pytest.mark.parametrize("mode", ["--static", "--no-smoke"])
def test_changed_since_compares_the_work_tree_without_running_anything_of_git_config(
        tmp_path, mode):
    markers = tmp_path / "markers"
    repo = _hostile_git_repo(tmp_path, markers)
    code, doc = run_json(mode, "--changed-since", "HEAD", "--repo", str(repo),
                         env={"PATH": os.environ["PATH"]})
    assert _planted(markers) == []
    # both changed files are found: the size change and the in-place one
    assert doc["facts"]["scope"]["changed"] == 2, doc["facts"]["scope"]
    gits = [r for r in doc["results"] if r["id"].startswith("git")]
    assert gits and all(r["status"] in ("pass", "skip") for r in gits), gits


def test_a_filter_git_cannot_be_told_to_leave_alone_stops_the_run(tmp_path):
    """A driver name holding '=' cannot be switched off with `git -c`: the doctor refuses
    to let git compare the work tree (exit 2, one line) rather than let it run."""
    markers = tmp_path / "markers"
    repo = _hostile_git_repo(tmp_path, markers)
    (repo / ".gitattributes").write_text("*.py filter=a=b\n")
    _git(repo, "add", ".gitattributes")
    _git(repo, "commit", "-qm", "attrs")
    with (repo / ".git" / "config").open("a") as fh:
        fh.write(f'[filter "a=b"]\n\tclean = touch {markers}/eq-clean; cat\n')
    (repo / "train.py").write_text("import os\nimport re\n")
    proc = run_doctor("run", "--static", "--changed-since", "HEAD", "--repo", str(repo),
                      env={"PATH": os.environ["PATH"]})
    assert proc.returncode == 2 and "filter driver 'a=b'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and _planted(markers) == []


def test_a_filter_driver_with_an_empty_name_is_switched_off_too(tmp_path):
    """git takes `[filter ""]` in .git/config and `filter=` in .gitattributes: a driver
    named by the empty string, which the list of drivers to switch off used to skip, so
    its clean command ran for `--changed-since`."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = _committed(tmp_path / "repo", {"train.py": "import os\n", "data.txt": "aaaa\n",
                                          ".gitattributes": "*.txt filter=\n"})
    with (repo / ".git" / "config").open("a") as fh:
        fh.write(f'[filter ""]\n\tclean = touch {markers}/empty-clean; cat\n'
                 f'\tprocess = touch {markers}/empty-process\n\trequired = true\n')
    (repo / "data.txt").write_text("bbbb\n")   # same size: git must hash it
    code, doc = run_json("--static", "--changed-since", "HEAD", "--repo", str(repo),
                         env={"PATH": os.environ["PATH"]})
    assert _planted(markers) == []
    assert doc["facts"]["scope"]["changed"] == 1, doc["facts"]["scope"]
    assert code == 0, [r for r in doc["results"] if r["status"] not in ("pass", "skip")]


@pytest.mark.parametrize("channel", ["core.sshCommand", "remote.origin.uploadpack"])
def test_a_partial_clone_never_fetches_a_missing_object_through_the_repos_commands(
        tmp_path, channel):
    """A partial clone asks its promisor remote for an object it lacks, and git does that
    on its own for `cat-file --batch-check` and `rev-list`: through the transport command
    the repository's config names (core.sshCommand for ssh, remote.*.uploadpack for a
    local remote). Each one is a script that leaves a marker and fails, so nothing
    reaches a network (example.invalid resolves nowhere anyway)."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = _committed(tmp_path / "repo", {"a.txt": "x\n"})
    evil = tmp_path / "evil.sh"
    _exe(evil, _marker_script(markers, "ran", "exit 1\n"))
    missing = subprocess.run(["git", "hash-object", "--stdin"], input="never stored\n",
                             capture_output=True, text=True, check=True).stdout.strip()
    _git(repo, "update-index", "--add", "--cacheinfo", f"100644,{missing},missing.bin")
    url = {"core.sshCommand": "ssh://example.invalid/r",
           "remote.origin.uploadpack": str(tmp_path / "elsewhere")}[channel]
    (tmp_path / "elsewhere").mkdir()
    for name, value in {"core.repositoryformatversion": "1",
                        "extensions.partialClone": "origin", "remote.origin.url": url,
                        "remote.origin.promisor": "true", channel: str(evil)}.items():
        _git(repo, "config", name, value)
    proc = run_doctor("run", "--static", "--repo", str(repo), cwd=tmp_path,
                      env={"PATH": os.environ["PATH"]})
    assert _planted(markers) == [], proc.stdout[-2000:]
    assert proc.returncode in (0, 1, 3) and "Traceback" not in proc.stderr, proc.stderr


def test_an_empty_path_entry_never_runs_the_repos_own_tools(tmp_path):
    """`export PATH=$UNSET:$PATH` leaves an empty entry first, which means the working
    directory: started from the repository's root, the doctor ran its `./git` (six
    times) instead of git. Every tool is looked up in PATH's absolute directories only."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = _committed(tmp_path / "repo", {
        "train.py": "import os\n",
        "job.sbatch": "#!/bin/bash\n#SBATCH --gpus=1\nsrun python train.py\n"})
    for tool in ("git", "scontrol", "sbatch", "nvidia-smi", "rocm-smi", "singularity"):
        _exe(repo / tool, _marker_script(markers, tool, "exit 1\n"))
    for path in (":" + os.environ["PATH"], "." + os.pathsep + os.environ["PATH"]):
        code, doc = run_json("--static", "--repo", ".", cwd=repo, env={"PATH": path})
        assert _planted(markers) == []
        gits = [r for r in doc["results"] if r["id"].startswith("git")]
        assert gits and all(r["status"] == "pass" for r in gits), gits
    code, doc = run_json("--no-smoke", "--repo", ".", cwd=repo,
                         env={"PATH": ":" + os.environ["PATH"]})
    assert _planted(markers) == []
