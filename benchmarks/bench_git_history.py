"""The history scan (doctor.scanners.git) vs the bare pipeline it is built on:
`git rev-list --objects --all | git cat-file --batch-check`, on a generated repo
with a long history (git fast-import). Alternating rounds; prints medians and the ratio.
    python benchmarks/bench_git_history.py [--commits 3000] [--rounds 5]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from doctor.scanners.git import GitRepo  # noqa: E402
from rounds import alternate, medians  # noqa: E402


def fast_import_stream(commits: int, files_per_dir: int = 40) -> bytes:
    """`commits` commits, each changing 3 files of a ~2000-file tree."""
    out = []
    for c in range(commits):
        out.append(f"commit refs/heads/main\nmark :{c + 1}\n"
                   f"committer t <t@e> {1700000000 + c} +0000\ndata 8\ncommit {c % 10}\n")
        if c:
            out.append(f"from :{c}\n")
        paths = ([f"src/d{d}/f{f}.py" for d in range(50) for f in range(files_per_dir)]
                 if c == 0 else [f"src/d{(c * 7 + k) % 50}/f{(c + k) % files_per_dir}.py"
                                 for k in range(3)])
        for p in paths:
            body = f"# {p} rev {c}\n".encode()
            out.append(f"M 100644 inline {p}\ndata {len(body)}\n{body.decode()}\n")
    return "".join(out).encode()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=5)
    opts = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-git-"))
    try:
        repo = tmp / "repo"
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"],
                       input=fast_import_stream(opts.commits), check=True)
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
        pipeline = (f"git -C {repo} rev-list --objects --all | git -C {repo} cat-file "
                    "--batch-check='%(objecttype) %(objectname) %(objectsize) %(rest)'")
        times, last = alternate({
            "rev-list | cat-file": lambda: subprocess.run(
                pipeline, shell=True, capture_output=True, check=True).stdout,
            "gitscan history": lambda: GitRepo(str(repo)).history()}, opts.rounds)
        out, blobs = last["rev-list | cat-file"], last["gitscan history"]
        n_blobs = sum(1 for line in out.split(b"\n") if line.startswith(b"blob "))
        assert len(blobs) == n_blobs, (len(blobs), n_blobs)
        print(f"repo: {opts.commits} commits, {n_blobs} blobs; {opts.rounds} alternating rounds")
        med = medians(times)
        print(f"ratio gitscan/pipeline: {med['gitscan history'] / med['rev-list | cat-file']:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
