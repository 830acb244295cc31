"""Reading one Python source: its bytes (never more than MAX_SOURCE_BYTES, never a FIFO's
wait), its AST from the run's cache (parsed once, whichever reader asks first), its
dotted call names, and the repo files its imports may name, read from the bytes.

A leaf under doctor/job/sources.py (which lists the sources a run reads) and
doctor/job/closure.py (which follows a job's imports): both read through here.
"""
from __future__ import annotations

import ast
import gc
import io
import os
import re
import stat
import threading
import tokenize
import unicodedata
from pathlib import Path
from typing import Any, Iterator, Optional

from doctor import fs, pyast

MAX_SOURCE_BYTES = 1_000_000
# non-blocking: a source swapped for a FIFO never hangs the open
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


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


# A parse makes one object per node, and the run keeps every tree to its end: the
# collector's passes during a parse (one per 700 new objects) free nothing, and pausing
# them saves a tenth of the parse. Paused under a lock, so that one thread's resume can
# never leave it paused for another's.
_PAUSE = threading.Lock()


def _parse_text(source: bytes, path: Path) -> Optional[ast.AST]:
    with _PAUSE:
        resume = gc.isenabled()
        gc.disable()
        try:
            return pyast.parse(source, filename=str(path))
        except (SyntaxError, ValueError, RecursionError):
            return None
        finally:
            if resume:
                gc.enable()


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
    # The run keeps every tree to its end, and an AST holds no reference cycle: without
    # this, each full collection walks all the trees parsed so far again (a third of the
    # CPU of `--static` on Megatron-LM's 829 files: 18.6 s → 12.2 s). Freezing moves what
    # is alive now out of the collector's sight; it costs O(1).
    gc.freeze()
    return cache.setdefault(key, tree)


# Every byte that is no part of an ASCII identifier, as a space: a text's words are then
# its split (twice as fast as re.findall of [A-Za-z_][A-Za-z0-9_]*, which they equal once
# a word's leading digits are dropped: `1e5` holds the word e5).
_WORD_BYTES = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
_NOT_WORD = bytes(c if c in _WORD_BYTES else 32 for c in range(256))


def words_of(text: bytes) -> set:
    """The ASCII identifiers in `text` (in strings and comments too), as bytes: the set
    re.findall(rb"[A-Za-z_][A-Za-z0-9_]*", text) makes."""
    found = set(text.translate(_NOT_WORD).split())
    numbers = [w for w in found if w[0] < 65]   # a digit first (a number, `1e5`)
    if numbers:
        found.difference_update(numbers)
        found.update(w for n in numbers if (w := n.lstrip(b"0123456789")))
    return found


def spelled(text: bytes) -> Optional[bytes]:
    """The text with its identifiers spelled as Python reads them: NFKC-normalised
    (PEP 3131: `ｂarrier` is the name barrier) where it holds a non-ASCII byte, in its
    declared encoding; None where that cannot be read."""
    if text.isascii():
        return text
    try:
        enc, _ = tokenize.detect_encoding(io.BytesIO(text).readline)
        return unicodedata.normalize("NFKC", text.decode(enc)).encode("utf-8")
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None


def identifier_sets(job, texts: list, whole: bool = False) -> list:
    """Each of `texts`' (raw_texts(job, whole)'s) set of identifiers, as bytes, read as
    Python reads them (spelled) and once per run; None for a text that cannot be read so
    (a reader then keeps it whatever it names). Words in strings and comments count too:
    a pre-filter on them keeps more, never less. Reading them costs about a tenth of a
    parse, so a code check asks which modules can name what its findings need before it
    parses any (tests/test_speed_parse.py proves each such filter keeps every finding)."""
    def read() -> list:
        return [words_of(t) if (t := spelled(text)) is not None else None
                for _, text in texts]
    return job.memo(("identifier_sets", whole), read)


def trees_naming(job, texts: list, keep: Any, whole: bool = False) -> list:
    """[(Path, AST)] of `texts` (raw_texts(job, whole), in its order) whose identifiers
    `keep(words)` accepts, or that cannot be read as identifiers: only those are parsed."""
    words = identifier_sets(job, texts, whole)
    return [(Path(p), t) for (p, text), w in zip(texts, words)
            if (w is None or keep(w)) and (t := _tree(job, p, text)) is not None]


def nodes(tree: ast.AST) -> list:
    """Every node of a module's tree, in walk's order, listed once per tree: several
    checks walk every module the job runs, and a list iterates ten times faster than
    ast.walk does. For trees the run keeps (the cache's); a subtree is walked as usual."""
    found = getattr(tree, "_doctor_nodes", None)
    if found is None:
        found = tree._doctor_nodes = _listed(tree)  # type: ignore[attr-defined]  # not a field: walk skips it
    return found


def _listed(top: ast.AST) -> list:
    """ast.walk's nodes from `top`, in its order, less the contexts and operators."""
    found = [top]
    append, fields, AST = found.append, _FIELDS, ast.AST
    for node in found:   # the list is walk's queue too: a sixth faster than a deque
        for name in fields.get(type(node)) or _fields(type(node)):
            try:
                value = getattr(node, name)
            except AttributeError:    # ast.iter_fields skips a field the node lacks
                continue
            if isinstance(value, AST):
                append(value)
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, AST):
                        append(item)
    return found


# Fields that hold only shared leaf singletons: an expression's context (Load, Store,
# Del) and an operator (Add, Not, Eq, ...). No reader looks for them as nodes (they are
# read through their parent: `.ctx`, `.op`, `.ops`), and they are a third of a module's
# nodes: walk leaves them out.
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})
_FIELDS: dict = {}   # node type → its fields less _LEAF_FIELDS


def _fields(kind: type) -> tuple:
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(f for f in kind._fields if f not in _LEAF_FIELDS)  # type: ignore[attr-defined]
    return names


def children(node: ast.AST) -> list:
    """ast.iter_child_nodes(node) as a list, less the contexts and operators (walk's)."""
    out: list = []
    for name in _FIELDS.get(type(node)) or _fields(type(node)):
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out += [v for v in value if isinstance(v, ast.AST)]
    return out


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """ast.walk, node for node in the same order, less the contexts and operators
    (_LEAF_FIELDS), and without its two generators per node (it lists every module the
    checks read)."""
    return iter(_listed(node))


def tree_of(job, path: Path) -> Optional[ast.AST]:
    """One file's AST (a check that needs one entry module does not pay for all)."""
    return _tree(job, Path(path), None)


def dotted(node: ast.AST) -> str:
    """`torch.distributed.barrier` for that attribute chain; "" when its head is not a
    name (a call, a subscript): one reading of call names for every code reader."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


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


# An import statement as written, read from the bytes without parsing (the closure of a
# large repo is found by reading its imports; a parse of every file it reaches costs
# 25 ms each): `import a.b as c, d`, `from ..x import (y, z)` over several lines, with
# `\` continuations. One inside a string is read too: the closure can only grow.
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]*"
                     rb"(\([^)]*\)|(?:[^\n\\]|\\\n)*)|import[ \t]+((?:[^\n\\]|\\\n)*))",
                     re.M)


_DYNAMIC = re.compile(rb"""(?:import_module|__import__)\(\s*['"]([\w.]+)['"]""")


# `import_module(f"models.{name}")`, `"models." + name`, `"models.%s" % name`,
# `"models.{}".format(name)`: a module of the package `models`, which one a variable says
_DYNAMIC_PREFIX = re.compile(rb"""(?:import_module|__import__)\(\s*[fF]?['"]"""
                             rb"""([A-Za-z_][\w.]*)\.(?:\{|%s|['"]\s*\+)""")


def _dynamic(text: bytes) -> bool:
    """Whether the text can hold a _DYNAMIC or _DYNAMIC_PREFIX import (a memchr-speed
    search first: a regex that opens with an alternation tries every position)."""
    return b"import_module" in text or b"__import__" in text


def dynamic_packages(text: bytes) -> list:
    """(package, line) for each import whose module name is a literal package and a
    part the doctor cannot read (_DYNAMIC_PREFIX)."""
    return [(m.group(1).decode(), text.count(b"\n", 0, m.start()) + 1)
            for m in _DYNAMIC_PREFIX.finditer(text)] if _dynamic(text) else []


def package_modules(package: str, rel: str, known: set, roots: tuple = ()) -> list:
    """The repo files of the package `package` (each module under its directory) as
    the file `rel` would import it (imports_named's roots)."""
    here = rel.rpartition("/")[0]
    head = package.replace(".", "/") + "/"
    out: list = []
    for root in dict.fromkeys(("", "src/", f"{here}/" if here else "") + tuple(roots)):
        out += sorted(k for k in known if k.startswith(root + head) and k.endswith(".py"))
    return out


def imported_files_text(text: bytes, rel: str, known: set, roots: tuple = ()) -> list:
    """imported_files, read from the source's bytes (_IMPORT) instead of its AST."""
    found: list = []
    for m in _imports(text.replace(b";", b"\n")):   # `import a; import b`
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
    if _dynamic(text):
        found += [(0, m.group(1).decode(), ()) for m in _DYNAMIC.finditer(text)]
    return imports_named(found, rel, known, roots)


def _imports(text: bytes) -> Iterator[re.Match]:
    """_IMPORT.finditer(text), tried only at the starts of the lines that hold `import`
    (every match's first line does: `from` and `import` are on one line): a multiline
    `^` is tried at every position of the text, five times slower."""
    end, at = 0, text.find(b"import")
    while at != -1:
        start = text.rfind(b"\n", 0, at) + 1
        m = _IMPORT.match(text, start) if start >= end else None
        if m is not None:
            yield m
            end = max(m.end(), start + 1)   # (finditer: no match starts inside another)
        nl = text.find(b"\n", at)
        at = text.find(b"import", nl) if nl != -1 else -1


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
