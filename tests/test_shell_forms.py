"""Shell forms from the seeds, with the real shell and the real rsync as oracles:
 - `srun bash -c 'ulimit -c unlimited; python …'` sets the core limit of the step's
   processes: bash really runs it (srun a stub that runs its command), a python stub
   records its RLIMIT_CORE, and core-dump-unlimited must say what that process got;
 - `--exclude={'.git','__pycache__','data'}` is brace-expanded as bash does: the doctor's
   words equal bash's for each form, and the exclude that real rsync applies to nested
   `src/pkg/data/` is the one the doctor reports;
 - an rsync argv built as a Python list is read like the shell line it stands for: the
   real rsync given that argv drops the nested package, and the doctor says so at the
   Python line.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git_repo, clean_env, result_of, run_json
from doctor.job.shell import brace_expand, unquote

RSYNC = shutil.which("rsync")


def _git_repo(root: Path, files: dict) -> Path:
    return git_repo(root, files, dedent=True, commit=False)


# ---- ulimit -c inside srun bash -c ---------------------------------------------------------
def _core_pattern() -> str:
    try:
        return Path("/proc/sys/kernel/core_pattern").read_text().strip()
    except OSError:
        return ""


CORE_SCRIPTS = {
    "srun_bash_c": ("srun bash -c 'ulimit -c unlimited; python train.py'\n", {}, 3),
    "inner_script": ("srun bash inner.sh\n",
                     {"inner.sh": "#!/bin/bash\nulimit -Sc unlimited\npython train.py\n"}, 2),
    "srun_bash_c_zero": ("srun bash -c 'ulimit -c 0; python train.py'\n", {}, None),
}


@pytest.mark.skipif(_core_pattern() != "core" or
                    resource.getrlimit(resource.RLIMIT_CORE)[1] != resource.RLIM_INFINITY,
                    reason="needs the kernel's default core_pattern `core` and a hard core "
                           "limit that allows unlimited")
@pytest.mark.parametrize("case", sorted(CORE_SCRIPTS))
def test_ulimit_inside_the_steps_shell_sets_its_core_limit(tmp_path, case):
    line, extra, where = CORE_SCRIPTS[case]
    repo = _git_repo(tmp_path / "repo", {"train.py": "print(1)\n", **extra,
                                         "job.sbatch": "#!/bin/bash\n#SBATCH --nodes=1\n" +
                                         line})
    # the oracle: bash runs the line (srun runs its command), python records its limit
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "limit.json"
    stubs = {"srun": '#!/bin/bash\nexec "$@"\n',
             "python": f"#!{sys.executable} -I\nimport json, resource\n"
                       f"open({str(record)!r}, 'w').write(json.dumps("
                       "resource.getrlimit(resource.RLIMIT_CORE)[0]))\n"}
    for name, text in stubs.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755 | stat.S_IEXEC)
    subprocess.run(["bash", "-c", "ulimit -Sc 0; bash job.sbatch"], cwd=repo, check=True,
                   env={"PATH": f"{bin_dir}:/usr/bin:/bin"}, timeout=30)
    got_unlimited = json.loads(record.read_text()) == resource.RLIM_INFINITY
    assert got_unlimited == (where is not None)
    # the doctor, run with the same soft limit 0 as the oracle's batch shell
    env = clean_env()
    proc = subprocess.run(["bash", "-c", 'ulimit -Sc 0; exec "$@"', "bash", sys.executable,
                           "-m", "doctor", "run", "--repo", str(repo), "--no-smoke",
                           "--only", "core-dump-unlimited", "--sbatch",
                           str(repo / "job.sbatch"), "--format", "json"],
                          cwd=Path(__file__).resolve().parent.parent, env=env,
                          capture_output=True, text=True, timeout=120)
    r = result_of(json.loads(proc.stdout), "core-dump-unlimited")
    if where is None:
        assert r["status"] == "pass", r
        return
    [f] = r["findings"]
    at = "job.sbatch" if case == "srun_bash_c" else "inner.sh"
    assert f["location"] == {"path": at, "line": where}, f
    assert f["data"]["limit"] == "unlimited" and f["data"]["core_file"] == "core"


# ---- brace expansion -----------------------------------------------------------------------
WORDS = ["--exclude={'.git','__pycache__','data'}", "a{b,c{d,e}}f", "x{1..3}", "{a}",
         "'{a,b}'", "a{1..10..3}", "{z..w}", "--x={a,b}{1,2}", "a\\{b,c}", '"{a,b}"x{,y}',
         "${HOME:-{a,b}}", "{a,b", "pre{-a,'b c'}post", "{1..3}{a..b}"]


@pytest.mark.parametrize("word", WORDS)
def test_brace_expansion_is_bashs(word):
    bash = subprocess.run(["bash", "-c", f"printf '%s\\0' {word}"], capture_output=True,
                          text=True, timeout=10, env={"HOME": "/h", "PATH": "/usr/bin:/bin"})
    expected = [w for w in bash.stdout.split("\0")[:-1]]
    if "$" in word:   # the doctor expands no variable here: compare the brace part only
        assert brace_expand(word) == [word]
        return
    assert [unquote(w) for w in brace_expand(word)] == expected


RSYNC_TREE = {"src/pkg/data/__init__.py": "x = 1\n", "src/pkg/model.py": "y = 2\n",
              "data/big.bin": "z\n"}


def _real_rsync_sends(repo: Path, argv_after_rsync: list, shell: bool) -> list:
    dst = repo.parent / "dst"
    dst.mkdir(exist_ok=True)
    if shell:   # bash does the brace expansion, as in the script
        cmd = ["bash", "-c", f"rsync -r -n --out-format=%n {' '.join(argv_after_rsync)} "
                             f"./ {dst}/"]
    else:
        cmd = [RSYNC, "-r", "-n", "--out-format=%n", *argv_after_rsync, "./", f"{dst}/"]
    proc = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, timeout=30,
                          env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


@pytest.mark.skipif(RSYNC is None, reason="rsync is not installed")
def test_a_brace_expanded_exclude_is_read_as_bash_expands_it(tmp_path):
    excludes = "--exclude={'.git','__pycache__','data'}"
    repo = _git_repo(tmp_path / "repo", {**RSYNC_TREE, "deploy.sh": f"""\
        #!/bin/bash
        rsync -a {excludes} ./ cluster:/scratch/code/
        """})
    sent = _real_rsync_sends(repo, [excludes], shell=True)
    assert "src/pkg/model.py" in sent and "src/pkg/data/__init__.py" not in sent
    code, doc = run_json("--repo", str(repo), "--static", "--only", "rsync-exclude-unanchored")
    r = result_of(doc, "rsync-exclude-unanchored")
    [f] = r["findings"]
    assert (f["location"], f["data"]["pattern"], f["severity"], code) == \
        ({"path": "deploy.sh", "line": 2}, "data", "error", 1), f


@pytest.mark.skipif(RSYNC is None, reason="rsync is not installed")
def test_an_rsync_argv_list_in_python_is_read_like_a_shell_line(tmp_path):
    repo = _git_repo(tmp_path / "repo", {**RSYNC_TREE, "tools/deploy.py": """\
        import subprocess
        SRC = "./"
        subprocess.run(["rsync", "-a", "--exclude", "data", "./", "cluster:/scratch/code/"],
                       check=True)
        subprocess.run(["rsync", "-a", "--exclude", "/data", "./", "cluster:/x/"])
        subprocess.run(["rsync", "-a", "--exclude", "data", SRC, "cluster:/y/"])
        """})
    sent = _real_rsync_sends(repo, ["--exclude", "data"], shell=False)
    assert "src/pkg/model.py" in sent and "src/pkg/data/__init__.py" not in sent
    _, doc = run_json("--repo", str(repo), "--static", "--only", "rsync-exclude-unanchored")
    r = result_of(doc, "rsync-exclude-unanchored")
    # line 3 only: the anchored /data keeps the package; SRC is not followed (noted)
    assert [(f["location"], f["data"]["pattern"]) for f in r["findings"]] == \
        [({"path": "tools/deploy.py", "line": 3}, "data")], r
    # no shell line to offer for an argv list; a deploy tool is no job step, and the
    # repo's own checks judge it as they judge deploy.sh: an error, as real rsync shows
    assert r["findings"][0]["commands"] == []
    assert r["findings"][0]["severity"] == "error", r
    assert any("tools/deploy.py:6: source SRC cannot be resolved" in n
               for n in doc["facts"]["rsync_exclude_notes"]), doc["facts"]
