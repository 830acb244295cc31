"""The repo's Python sources, read once and parsed at most once per run (never imported).

Every reader shares one byte read of each file (`python_texts`) and one parse of each
file (the per-file tree cache). A reader that only cares about some names asks
`trees_mentioning`: a byte search over the texts first, so in a 100k-file monorepo
only the few files that name (say) `wandb` are parsed at all.
"""
from __future__ import annotations

import ast
import bisect
import os
import re
import stat
from pathlib import Path
from typing import Any, Optional

from doctor import fs

MAX_SOURCE_BYTES = 1_000_000
SAY_READING = 5_000   # sources: from here on a terminal is told what the run waits for
# non-blocking: a source swapped for a FIFO never hangs the open
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def python_sources(job) -> list:
    """The repo's .py files (git's view), skipping huge generated ones."""
    return [p for p, _ in python_texts(job)]


def python_texts(job) -> list:
    """[(Path, bytes)] of the repo's .py files that read (git's view, none over
    MAX_SOURCE_BYTES), each read once per run; in a scoped run the changed ones, the
    job's entries and their imports (doctor/job/scope.py). Prefer trees_mentioning: a
    Path per file costs 4 µs, 0.4 s in a 90k-file repo."""
    return job.memo("python_texts", lambda: [(Path(p), text) for p, text in raw_texts(job)])


def raw_texts(job, whole: bool = False) -> list:
    """[(str path, bytes)]: python_texts without a Path per file. What the code checks
    judge: in a scoped run the changed files and what ties them to a job; in a full run
    with job scripts, what their steps run (doctor/job/closure.py job_files); with none,
    the repo's sources less its tests. `whole`: every source of the repo, tests too, for
    a judgement about all of the code. Each is read by name (one open, fstat and read:
    no stat first; a file git lists that is gone is skipped)."""
    from doctor.job.closure import is_test, job_files   # (closure reads trees from here)

    def read(paths: list) -> list:
        if len(paths) >= SAY_READING:
            job.say(f"reading {len(paths):,} Python sources")
        got = job.memo("closure_bytes", dict)   # what the closure read already
        return [(p, text) for p in paths
                if (text := got.get(p) or read_source(p, job.unreadable)) is not None]

    def read_all() -> list:
        top = str(job.repo).rstrip("/") + "/"
        return read([top + r for r in job.every_rel() if r.endswith(".py")])

    def read_job() -> list:
        if job.scope is not None:
            return read([str(p) for p in python_paths(
                job, [r for r in job.repo_rels() if r.endswith(".py")])])
        tied = job_files(job)
        if tied is not None:
            return read([str(p) for p in tied])
        top = len(str(job.repo).rstrip("/")) + 1
        return [(p, text) for p, text in raw_texts(job, True) if not is_test(p[top:])]
    return job.memo(("raw_texts", True), read_all) if whole else \
        job.memo(("raw_texts", False), read_job)


def judges_all(job) -> bool:
    """The code the checks judge is the repo's (less its tests): a full run with no job
    step whose entry is a file of the repo. Else a judgement about all of the code
    (`whole`) reads more than the job's files."""
    from doctor.job.closure import job_files

    return job.scope is None and job_files(job) is None


def text_of(job, path: Any, whole: bool = False) -> Optional[bytes]:
    """The bytes python_texts read of `path`, None when it is not one of them."""
    texts = job.memo(("text_by_path", whole), lambda: dict(raw_texts(job, whole)))
    return texts.get(os.fspath(path))


def read_source(path: Any, log: fs.Log) -> Optional[bytes]:
    """A regular file's bytes, None when over MAX_SOURCE_BYTES or unreadable (noted):
    fs.read_bytes with one open, one fstat and one read, for 100k files."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        if log is not None:
            log.note(path, exc)
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_SOURCE_BYTES:
            return None
        fs.note_read(path, st)  # an input: no report goes over it
        data = os.read(fd, st.st_size + 1)
        if len(data) <= st.st_size:
            return data
        parts = [data]   # it grew since the fstat: the rest
        while parts[-1]:
            parts.append(os.read(fd, 65536))
        return b"".join(parts)
    except OSError as exc:
        if log is not None:
            log.note(path, exc)
        return None
    finally:
        os.close(fd)


def _parse_text(source: bytes, path: Path) -> Optional[ast.AST]:
    try:
        return ast.parse(source, filename=str(path))
    except (SyntaxError, ValueError, RecursionError):
        return None


def _tree_cache(job) -> dict:
    """normalized path → AST or None (does not parse), shared by every reader."""
    return job.memo("python_tree_cache", dict)


def _tree(job, path: Path, text: Optional[bytes]) -> Optional[ast.AST]:
    """One file's AST from the run's cache, parsed (from `text`, else read) on first use."""
    cache = _tree_cache(job)
    key = os.path.normpath(path)
    try:
        return cache[key]
    except KeyError:
        pass
    if text is None:
        text = fs.read_bytes(path, job.unreadable)
    tree = _parse_text(text, path) if text is not None else None
    return cache.setdefault(key, tree)


def python_trees(job, whole: bool = False) -> list:
    """[(path, AST)] of the sources raw_texts lists (`whole`: every one of the repo)
    that parse. Parsed once per run, and the costliest read in a large repo: prefer
    trees_mentioning where a check looks for particular names."""
    def parse_all() -> list:
        return [(Path(p), t) for p, text in raw_texts(job, whole)
                if (t := _tree(job, p, text)) is not None]
    return job.memo(("python_trees", whole), parse_all)


def tree_of(job, path: Path) -> Optional[ast.AST]:
    """One file's AST (a check that needs one entry module does not pay for all)."""
    return _tree(job, Path(path), None)


def trees_mentioning(job, *needles: bytes, whole: bool = False) -> list:
    """[(path, AST)] of the sources whose text contains one of `needles`: a byte search
    first, so a reader that only cares about (say) `wandb` neither parses nor walks the
    rest of a large repo (each file is parsed once, whichever reader asks first)."""
    def find() -> list:
        texts = raw_texts(job, whole)
        hits = _mentioning(job, whole, needles)
        return [(Path(texts[i][0]), t) for i in sorted(hits)
                if (t := _tree(job, texts[i][0], texts[i][1])) is not None]
    return job.memo(("trees_mentioning", needles) + (("whole",) if whole else ()), find)


def _mentioning(job, whole: bool, needles: tuple) -> set:
    """Indexes into raw_texts of the texts that contain a needle. All texts joined by NUL
    once per run, each needle found with bytes.find (memchr speed) and the search
    resumed at the next text after a hit: 2-3 × a regex per text on 90k files."""
    texts = raw_texts(job, whole)

    def join() -> tuple:
        starts, at = [], 0
        for _, text in texts:
            starts.append(at)
            at += len(text) + 1
        return b"\0".join(text for _, text in texts), starts
    blob, starts = job.memo(("source_blob", whole), join)
    hits: set = set()
    for needle in needles:
        if not needle or b"\0" in needle:
            continue
        i = blob.find(needle)
        while i != -1:
            k = bisect.bisect_right(starts, i) - 1
            hits.add(k)
            i = blob.find(needle, starts[k + 1]) if k + 1 < len(starts) else -1
    return hits


def source_path(job, path: Path) -> Optional[Path]:
    """`path` as python_sources lists it (the same file, by its place in the repo), or
    None when it is not one of the repo's sources."""
    names = job.memo("python_source_names",
                     lambda: {os.path.normpath(p): p for p, _ in raw_texts(job)})
    hit = names.get(os.path.normpath(path))   # the repo's files are listed at their real place
    if hit is None:
        hit = names.get(os.path.join(job.repo, job.rel(path)))
    return Path(hit) if hit is not None else None


def dotted(node: ast.AST) -> str:
    """`torch.distributed.barrier` for that attribute chain; "" when its head is not a
    name (a call, a subscript): one reading of call names for every code reader."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


# ---- a scoped run's sources (doctor/job/scope.py) --------------------------------
def python_paths(job: Any, listed: list) -> list:
    """The Python sources of a scoped run: the changed ones, the entry modules of the job
    scripts in scope, and the repo modules they import, transitively."""
    known = job.every_rel_set()   # what an import may name: one of the repo's files
    todo = [job.repo / r for r in listed]
    for script in job.scripts:
        entry = job.entry_file(job.step(script))
        if entry is not None:
            todo.append(Path(entry))
    seen: dict = {}
    while todo:
        path = todo.pop()
        rel = job.rel(path)
        if rel in seen or rel.startswith("/"):
            continue
        seen[rel] = path
        tree = tree_of(job, path)
        if tree is not None:
            todo += [job.repo / r for r in imported_files(tree, rel, known) if r not in seen]
    return list(seen.values())


def imported_files(tree: ast.AST, rel: str, known: set, roots: tuple = ()) -> list:
    """Repo files that `tree`'s imports may name (imports_named)."""
    found: list = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(0, a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.level, node.module or "", tuple(a.name for a in node.names)))
        elif isinstance(node, ast.Call) and dotted(node.func) in (
                "importlib.import_module", "import_module", "__import__") and node.args \
                and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) and not node.args[0].value.startswith("."):
            found.append((0, node.args[0].value, ()))
    return imports_named(found, rel, known, roots)


# An import statement as written, read from the bytes without parsing (the closure of a
# large repo is found by reading its imports; a parse of every file it reaches costs
# 25 ms each): `import a.b as c, d`, `from ..x import (y, z)` over several lines, with
# `\` continuations. One inside a string is read too: the closure can only grow.
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]*"
                     rb"(\([^)]*\)|(?:[^\n\\]|\\\n)*)|import[ \t]+((?:[^\n\\]|\\\n)*))",
                     re.M)
_DYNAMIC = re.compile(rb"""(?:import_module|__import__)\(\s*['"]([\w.]+)['"]""")


def imported_files_text(text: bytes, rel: str, known: set, roots: tuple = ()) -> list:
    """imported_files, read from the source's bytes (_IMPORT) instead of its AST."""
    found: list = []
    for m in _IMPORT.finditer(text.replace(b";", b"\n")):   # `import a; import b`
        what = (m.group(3) if m.group(4) is None else m.group(4)).decode("utf-8", "replace")
        what = what.split("#")[0]
        words = what.replace("\\\n", " ").replace("\n", " ").strip("()\\ \t").split(",")
        # `a.b as c` → a.b; what is no dotted name (a string's text) is left out
        names = [n.split()[0] for n in words
                 if n.strip() and all(p.isidentifier() for p in n.split()[0].split("."))]
        if m.group(4) is not None:
            found += [(0, n, ()) for n in names]
        else:
            found.append((len(m.group(1)), m.group(2).decode(), tuple(names)))
    found += [(0, m.group(1).decode(), ()) for m in _DYNAMIC.finditer(text)]
    return imports_named(found, rel, known, roots)


def imports_named(found: list, rel: str, known: set, roots: tuple = ()) -> list:
    """Repo files that imports [(level, module, names)] in the file `rel` may name: as
    modules of the repo root, src/, `roots` (the entry's sys.path, "dir/"), relative to
    the file, or beside it as a script's sys.path[0]. Every import, a function's as
    well: it may run."""
    here = rel.rpartition("/")[0]
    roots = ("", "src/", f"{here}/" if here else "") + tuple(roots)
    out = []
    for level, module, names in found:
        if not names and not level:   # `import a.b.c` runs a, a.b and a.b.c
            out += _files(_prefixes(module), known, roots)
            continue
        if level:   # relative to the file's package, `level - 1` directories up
            dirs = here.split("/") if here else []
            pkg = "/".join(dirs[:len(dirs) - level + 1])
            head = "/".join(filter(None, [pkg, module.replace(".", "/")]))
        elif module:
            head = module.replace(".", "/")
        else:
            continue
        # the module, its packages, and each name that may be a submodule of it
        mods = [head] if level else _prefixes(head.replace("/", "."))
        out += _files(mods + [f"{head}/{a}" for a in names], known,
                      ("",) if level else roots)
    return out


def _prefixes(dotted_name: str) -> list:
    """`a/b/c` → a, a/b, a/b/c: importing a module runs its packages' __init__ first."""
    parts = dotted_name.split(".")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _files(mods: list, known: set, roots: tuple) -> list:
    out = []
    for m in mods:
        for root in dict.fromkeys(roots):
            for cand in (f"{root}{m}.py", f"{root}{m}/__init__.py"):
                if cand in known:
                    out.append(cand)
    return out
