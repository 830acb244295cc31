"""The byte pre-filters that let `doctor run --static` skip most of a large repo's sources
(issue 17) still see every file a check needs: small trees, the real CLI."""
from __future__ import annotations

import io
import subprocess
from pathlib import Path

from conftest import result_of, run_json

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
FILLER = "def f{i}(x):\n    return x + {i}\n"   # modules no pre-filter wants


def write(root: Path, files: dict) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    for i in range(20):
        (root / "pkg" / f"filler_{i}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / "pkg" / f"filler_{i}.py").write_text(FILLER.format(i=i))


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(root), **GIT_ENV})


def test_a_collective_reached_through_a_helper_whose_caller_names_no_collective(tmp_path):
    """train.py names no collective at all: it calls `flush()` of a class in another module,
    through `self.comm`; that method synchronises under an aliased import. The pre-filter
    keeps train.py because it names a function that makes a collective."""
    write(tmp_path, {
        "comm.py": "from torch.distributed import all_reduce as allsum\n\n\n"
                   "class Comm:\n    def flush(self, t):\n        allsum(t)\n",
        "train.py": "from comm import Comm\n\n\n"
                    "class Trainer:\n    def __init__(self):\n        self.comm = Comm()\n\n"
                    "    def step(self, t):\n        try:\n            t.backward()\n"
                    "        finally:\n            self.comm.flush(t)\n",
        # the job that runs train.py (code no job script ties in is at most a warning)
        "job.sbatch": "#!/bin/bash\n#SBATCH --nodes=2\nsrun python train.py\n"})
    code, doc = run_json("--static", "--repo", str(tmp_path), "--only",
                         "collective-on-error-path")
    (finding,) = result_of(doc, "collective-on-error-path")["findings"]
    # the try's backward() reaches no collective the doctor can see (DDP's hooks are not
    # visible in t.backward()), so the finally's is a warning, not an error
    assert code == 0 and finding["severity"] == "warning", finding
    assert finding["location"] == {"path": "comm.py", "line": 6}
    assert finding["data"]["path"] == ("finally: at train.py:11 → self.comm.flush() at "
                                       "train.py:12 → allsum() at comm.py:6")


def test_an_ignored_module_imported_relatively_is_still_found(tmp_path):
    """Only sources naming an ignored, untracked module are parsed for imports: here the
    one that imports it as `from . import secrets_local` (the pre-filter's word is the
    module's own name, which every import of it writes)."""
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/train.py": "from . import secrets_local\n\nprint(secrets_local.TOKEN)\n",
        "pkg/secrets_local.py": "TOKEN = 'x'\n",
        ".gitignore": "secrets_local.py\n"})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "init")
    code, doc = run_json("--static", "--repo", str(tmp_path), "--only",
                         "gitignore-hides-source")
    result = result_of(doc, "gitignore-hides-source")
    assert code == 1, result
    (finding,) = result["findings"]
    assert finding["data"]["file"] == "pkg/secrets_local.py"
    assert finding["data"]["needed_by"] == "pkg/train.py:1"


def test_with_no_job_script_the_main_modules_are_found_among_many(tmp_path):
    """No job script: every module with a `__main__` block is an entry (the pre-filter's
    word is `__main__`), and its os._exit on the error path is reported."""
    write(tmp_path, {
        "run.py": "import os\n\n\ndef main():\n    pass\n\n\n"
                  "if __name__ == '__main__':\n    try:\n        main()\n"
                  "    except Exception:\n        os._exit(0)\n"})
    code, doc = run_json("--static", "--repo", str(tmp_path), "--only", "exit-masks-errors")
    result = result_of(doc, "exit-masks-errors")
    # no job script ties run.py in: a repo-wide scan warns, saying so (issue 26)
    assert code == 0, result
    assert [(f["location"]["path"], f["severity"]) for f in result["findings"]] == \
        [("run.py", "warning")]
    assert "no job script ties this file in" in result["findings"][0]["message"]


def test_a_tracked_file_grown_in_the_work_tree_is_still_sized(tmp_path):
    """Only the files git reports as changed are sized in the work tree: a tracked file
    that grew past 50 MB since it was added (sparse here) is one of them."""
    write(tmp_path, {"model.pt": "small\n"})
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "init")
    with open(tmp_path / "model.pt", "r+b") as fh:
        fh.truncate(60 * 1024 * 1024)
    code, doc = run_json("--static", "--repo", str(tmp_path), "--only", "git-large-file")
    (finding,) = result_of(doc, "git-large-file")["findings"]
    assert code == 0 and finding["severity"] == "warning"   # over 50 MB, under 100 MiB
    assert finding["data"] == {"path": "model.pt", "size": 60 * 1024 * 1024, "where": "index"}


def test_the_index_blobs_are_sized_whether_a_commit_holds_them_or_not(tmp_path):
    """The index's blob sizes come from the history scan where a commit holds the blob,
    from `git cat-file` where none does yet (staged only): both are sized, and reported."""
    write(tmp_path, {"README.md": "x\n"})
    for name, mb in (("old.pt", 55), ("staged.pt", 60)):
        with open(tmp_path / name, "wb") as fh:
            fh.truncate(mb * 1024 * 1024)
        if name == "old.pt":
            git(tmp_path, "init", "-q")
            git(tmp_path, "add", ".")
            git(tmp_path, "commit", "-q", "-m", "init")
    git(tmp_path, "add", "staged.pt")
    code, doc = run_json("--static", "--repo", str(tmp_path), "--only", "git-large-file")
    found = sorted((f["data"]["path"], f["data"]["size"], f["data"]["where"])
                   for f in result_of(doc, "git-large-file")["findings"])
    assert code == 0 and found == [("old.pt", 55 * 1024 * 1024, "index"),
                                   ("staged.pt", 60 * 1024 * 1024, "index")]


def test_a_terminal_is_told_about_a_long_read_of_sources(tmp_path):
    """A repo of 5,000 sources: on a terminal, stderr says what the run is reading before
    any check ends; the line is cleared before the report, and a pipe gets nothing."""
    import os
    import pty
    import sys

    for i in range(5_000):
        d = tmp_path / f"pkg{i % 50}"
        d.mkdir(exist_ok=True)
        (d / f"m{i}.py").write_text(FILLER.format(i=i))
    main, sub = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "doctor", "run", "--static", "--repo",
                               str(tmp_path), "--format", "json"], stdout=subprocess.PIPE,
                              stderr=sub, timeout=120)
        os.close(sub)
        sub = -1
        said = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:   # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(main)
        if sub != -1:
            os.close(sub)
    assert proc.returncode in (0, 1)
    # the progress line stays away for a run under a second (doctor/progress.py QUIET_S),
    # and reading these 5,000 sources now takes less: what was drawn, if anything, is
    # cleared before the report
    assert said == b"" or said.endswith(b"\r\x1b[K")
    # what the line says while the shared read is the work in progress (Job.say)
    from doctor.progress import Progress

    class Terminal(io.StringIO):
        def fileno(self) -> int:
            raise OSError   # no size: the line's width is 80

    term = Terminal()
    progress = Progress(term)
    progress.t0 -= 5   # as if the run had been going for 5 s
    progress.say("reading 5,000 Python sources")
    progress.finish()
    drawn = term.getvalue()
    assert "reading 5,000 Python sources" in drawn and drawn.endswith("\r\x1b[K")
    piped = subprocess.run([sys.executable, "-m", "doctor", "run", "--static", "--repo",
                            str(tmp_path), "--format", "json"], capture_output=True,
                           timeout=120)
    assert b"reading" not in piped.stderr
