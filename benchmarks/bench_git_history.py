"""The history scan (doctor.scanners.git) vs the pipeline it replaced,
`git rev-list --objects --all | git cat-file --batch-check`, in CPU time (this process
and its gits), on a generated repo with a long history (git fast-import: a few large
blobs and a core-named one among small files) or on any checkout (--repo). What the
doctor's two git checks ask of the history: GitRepo.history() (one rev-list with a blob
filter, one small cat-file), the heads of every candidate (blob_heads: from git's own
pack files), and, where a candidate is large, its path (names(): a second walk, which a
check asks for only when it reports that blob; timed here anyway, as "+ names").
The candidates must be exactly the pipeline's blobs with a core-like name or of
CANDIDATE_SIZE or more, with the same paths, in the same order. Alternating rounds;
prints medians and the ratios.
    python benchmarks/bench_git_history.py [--commits 3000] [--rounds 5] [--repo CHECKOUT]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from doctor.scanners.git import CANDIDATE_SIZE, GitRepo, core_name_hint  # noqa: E402
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
        if c % 500 == 1:   # large blobs, and a small core-named one, now and then
            paths += ["data/uv.lock", f"run{c}/core.{c}"]
        for p in paths:
            body = f"# {p} rev {c}\n" + ("x = 1\n" * 250_000 if p.endswith(".lock") else "")
            out.append(f"M 100644 inline {p}\ndata {len(body)}\n{body}\n")
    return "".join(out).encode()


def cpu(fn):
    """fn's CPU seconds, this process's and its children's."""
    def timed():
        t = os.times()
        out = fn()
        u = os.times()
        return out, (u.user - t.user + u.system - t.system + u.children_user
                     - t.children_user + u.children_system - t.children_system)
    return timed


def scan(repo: Path) -> list:
    git = GitRepo(str(repo))
    found = git.history()
    git.blob_heads([oid for _, oid, _ in found], {oid: size for _, oid, size in found})
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repo", type=Path, help="a checkout to scan instead of a generated repo")
    opts = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-git-"))
    try:
        repo = opts.repo.resolve() if opts.repo else tmp / "repo"
        if not opts.repo:
            subprocess.run(["git", "init", "-q", str(repo)], check=True)
            subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"],
                           input=fast_import_stream(opts.commits), check=True)
            subprocess.run(["git", "-C", str(repo), "checkout", "-q", "main"], check=True)
            subprocess.run(["git", "-C", str(repo), "gc", "-q"], check=True)
        pipeline = (f"git -C {repo} rev-list --objects --all | git -C {repo} cat-file "
                    "--batch-check='%(objecttype) %(objectname) %(objectsize) %(rest)'")
        runs = {
            "rev-list | cat-file": cpu(lambda: subprocess.run(
                pipeline, shell=True, capture_output=True, check=True).stdout),
            "history + heads": cpu(lambda: scan(repo)),
            "+ names": cpu(lambda: GitRepo(str(repo)).names([(None, "", 0)]))}
        results: dict = {name: [] for name in runs}

        def keep(name):
            def run():
                out, t = runs[name]()
                results[name].append(t)
                return out
            return run
        _, last = alternate({name: keep(name) for name in runs}, opts.rounds, warmup=1)
        for name in results:   # the warm-up round's sample goes
            results[name] = results[name][1:]
        out, found = last["rev-list | cat-file"], last["history + heads"]
        want = []
        for line in out.split(b"\n"):
            parts = line.split(b" ", 3)
            if parts[0] == b"blob" and len(parts) == 4 and parts[3]:
                path = parts[3].decode("utf-8", "surrogateescape")
                if int(parts[2]) >= CANDIDATE_SIZE or core_name_hint(path):
                    want.append((path, parts[1].decode(), int(parts[2])))
        named = GitRepo(str(repo)).names(found)
        assert named == want, (len(named), len(want))
        n_blobs = sum(1 for line in out.split(b"\n") if line.startswith(b"blob "))
        print(f"{repo}: {n_blobs} blobs in history, {len(want)} candidates; "
              f"{opts.rounds} alternating rounds, CPU seconds")
        med = medians(results)
        base = med["rev-list | cat-file"]
        print(f"ratio history+heads / pipeline: {med['history + heads'] / base:.2f}; "
              f"with names too: {(med['history + heads'] + med['+ names']) / base:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
