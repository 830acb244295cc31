"""The parse side of issue 26 changes no finding.

A code check parses only the modules whose identifiers (pyread.identifier_sets) can lead
to one of its findings: torch-api-mismatch (torch_api._may_hold_use) and the code model
that dataloader-option-conflict, nccl-env-deprecated and torch-compile-risk read
(code._can_report). Each test here reads the job's code twice, with the pre-filter and
with every module kept, on forms whose bytes do not spell what the AST holds (an import
`as`, a name spelled with other Unicode letters, a name inside a string), and asserts the
same result; and that a module that can hold nothing is never parsed.

The code model walks each module once for every environment and step it is evaluated
under (code._Module.walked), and pyread.walk leaves out the contexts and operators: each
is compared here with what it replaced.
"""
from __future__ import annotations

import ast
import json
import os
import re
from pathlib import Path

import pytest

import doctor.checks.collectives as collectives
import doctor.checks.torch_api as torch_api
import doctor.job.code as code
from doctor.job import pyread
from doctor.job.context import Job
from doctor.registry import get
from doctor.runner import run_checks
from harness import FIXTURES

ROOT = Path(__file__).resolve().parent.parent


def _write(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _parsed(job: Job) -> set:
    return set(job.memo("python_tree_cache", dict))


def _keep_all(_words: set) -> bool:
    return True


# ---- torch-api-mismatch ------------------------------------------------------------
USES = {
    "plain.py": "import torch\nm = torch.load('x.pt')\n",
    # the call names `tl`: `load` is a word of the import only
    "alias.py": "from torch import load as tl\nm = tl('x.pt')\n",
    "module_alias.py": "import torch as th\nwith th.autocast('hip'):\n    pass\n",
    # ｌoad is the name load (PEP 3131 NFKC): its bytes spell no `load`
    "nfkc.py": "import torch\nm = torch.\uff4coad('x.pt')\n",
    "fsdp.py": "from torch.distributed._composable.fsdp import fully_shard\n",
    "loader.py": "from torch.utils import data\nd = data.DataLoader([], in_order=False)\n",
    # names load, not torch: never parsed
    "json_load.py": "import json\nx = json.load(open('f'))\n",
    # names torch, no covered name: never parsed
    "zeros.py": "import torch\nx = torch.zeros(1)\n",
}


def _uses(repo: Path) -> tuple:
    job = Job(repo, env={}, static=True)
    return sorted(map(repr, torch_api.repo_uses(job))), job


def test_torch_api_prefilter_keeps_every_use(tmp_path, monkeypatch):
    repo = _write(tmp_path, USES)
    found, job = _uses(repo)
    with monkeypatch.context() as m:
        m.setattr(torch_api, "_may_hold_use", _keep_all)
        every, _ = _uses(repo)
    assert found == every
    files = {u.split("file='")[1].split("'")[0] for u in found}
    assert files == {"plain.py", "alias.py", "module_alias.py", "nfkc.py", "fsdp.py",
                     "loader.py"}, found
    parsed = _parsed(job)
    assert os.path.normpath(repo / "json_load.py") not in parsed
    assert os.path.normpath(repo / "zeros.py") not in parsed


@pytest.mark.parametrize("case", sorted(p.name for p in (FIXTURES / "torch-api-mismatch").iterdir()
                                        if p.is_dir()))
def test_torch_api_fixtures_same_uses_with_and_without_the_prefilter(case, monkeypatch):
    src = FIXTURES / "torch-api-mismatch" / case
    repo = src / "repo" if (src / "repo").is_dir() else src
    found, _ = _uses(repo)
    with monkeypatch.context() as m:
        m.setattr(torch_api, "_may_hold_use", _keep_all)
        every, _ = _uses(repo)
    assert found == every


# ---- the code model (dataloader-option-conflict, nccl-env-deprecated, compile) -------
SETTINGS = {
    "loader.py": "from torch.utils.data import DataLoader\n"
                 "def make(ds):\n    return DataLoader(ds, num_workers=0, prefetch_factor=2)\n",
    "partial.py": "import functools\nfrom torch.utils.data import DataLoader as DL\n"
                  "from torch.utils.data import DataLoader\n"
                  "mk = functools.partial(DataLoader, num_workers=4)\n",
    "pg.py": "import datetime\nimport torch.distributed as dist\n"
             "dist.init_process_group('nccl', timeout=datetime.timedelta(minutes=5))\n",
    # the timeout global named only inside a string
    "patch.py": "import torch.distributed as d\nsetattr(d, 'default_pg_timeout', 60)\n",
    "compiled.py": "import torch\n@torch.compile\ndef f(x):\n    return x\n"
                   "g = torch.compile(f, mode='max-autotune')\n",
    "env.py": "import os\nfrom os import environ\nx = environ['MY_VAR']\n"
              "os.environ['NCCL_ASYNC_ERROR_HANDLING'] = '1'\ny = os.getenv('OTHER')\n",
    # ｅnviron is the name environ: its bytes spell no `environ`
    "nfkc.py": "import os\nz = os.\uff45nviron.get('NFKC_VAR')\n",
    # names compile, not torch.compile: never parsed
    "regex.py": "import re\nP = re.compile('x')\n",
}


def _settings(repo: Path, env: dict) -> tuple:
    job = Job(repo, env={}, static=True)
    got = (code.code_settings(job, env), code.repo_code(job, env),
           code.repo_loaders(job, env))
    return repr(got), job


def test_code_model_prefilter_keeps_every_setting(tmp_path, monkeypatch):
    repo = _write(tmp_path, SETTINGS)
    env = {"MY_VAR": "3"}
    found, job = _settings(repo, env)
    with monkeypatch.context() as m:
        m.setattr(code, "_can_report", _keep_all)
        m.setattr(code, "_loaders_only", _keep_all)
        every, _ = _settings(repo, env)
    assert found == every
    got = code.code_settings(job, env)
    assert {c.file for c in got.loaders} == {"loader.py", "partial.py"}
    assert [p.file for p in got.pg_inits] == ["pg.py"]
    assert [p.file for p in got.pg_patches] == ["patch.py"]
    assert {c.file for c in got.compiles} == {"compiled.py"}
    assert {"MY_VAR", "OTHER", "NFKC_VAR"} <= got.env_reads, got.env_reads
    assert os.path.normpath(repo / "regex.py") not in _parsed(job)


CODE_CHECKS = ("dataloader-option-conflict", "nccl-env-deprecated", "torch-compile-risk")


@pytest.mark.parametrize("case", sorted(f"{c}/{p.name}" for c in CODE_CHECKS
                                        for p in (FIXTURES / c).iterdir() if p.is_dir()))
def test_code_model_fixtures_same_with_and_without_the_prefilter(case, monkeypatch):
    src = FIXTURES / case
    repo = src / "repo" if (src / "repo").is_dir() else src
    found, _ = _settings(repo, {})
    with monkeypatch.context() as m:
        m.setattr(code, "_can_report", _keep_all)
        m.setattr(code, "_loaders_only", _keep_all)
        every, _ = _settings(repo, {})
    assert found == every


# ---- the walks ---------------------------------------------------------------------
def _sample_trees() -> list:
    """The doctor's own modules and the code fixtures: every statement form in use."""
    paths = sorted((ROOT / "doctor").rglob("*.py")) + sorted((ROOT / "checks").glob("*.py"))
    paths += sorted(p for c in (*CODE_CHECKS, "collective-on-error-path", "torch-api-mismatch")
                    for p in (FIXTURES / c).rglob("*.py"))
    crafted = [(Path("walrus.py"), ast.parse(WALRUS))]
    return crafted + [(p, ast.parse(p.read_bytes())) for p in paths]


# a walrus rebinds n: num_workers is then not the one plain value 4
WALRUS = """import os
from torch.utils.data import DataLoader
def make(ds):
    n = 4
    m = (n := int(os.environ["W"]))
    for i in range(2):
        with open(f"{i}") as fh:
            k = 1
    return DataLoader(ds, num_workers=n, prefetch_factor=k)
"""


_LEAVES = (ast.expr_context, ast.operator, ast.boolop, ast.unaryop, ast.cmpop)


def test_walk_is_ast_walk_less_contexts_and_operators():
    for path, tree in _sample_trees():
        want = [n for n in ast.walk(tree) if not isinstance(n, _LEAVES)]
        assert list(pyread.walk(tree)) == want, path


def test_code_model_walk_shared_by_environments_is_a_fresh_scan():
    """A module walked once and evaluated under two environments and step arguments
    reads as two fresh scans; the loop, with and walrus targets bound in each scope are
    ast.walk's (the whole subtree of each statement, nested functions too)."""
    inputs = code.Inputs({}, {}, ("--num_workers", "2"))
    envs = [({"NCCL_TIMEOUT": "5"}, code.Inputs()), ({}, inputs)]
    for path, tree in _sample_trees():
        walked = code._Module(tree, path.name).walked()
        for env, given in envs:
            fresh = code._Module(tree, path.name, env, given)
            fresh._loose, fresh._walrus = {}, True   # every expression walked
            fresh._walk(tree.body, code._Scope(None), ())
            for call, scope, conds in fresh.calls:
                fresh._call(call, scope, conds)
            assert repr(walked.evaluate(env, given)) == repr(fresh.out), path
        m = code._Module(tree, path.name)
        m._loose = {}
        m._walrus = any(isinstance(n, ast.NamedExpr) for n in ast.walk(tree))
        for st in ast.walk(tree):
            if isinstance(st, ast.stmt):
                want = {x.id for n in ast.walk(st) for t in code._loose_targets(n)
                        for x in ast.walk(t) if isinstance(x, ast.Name)}
                assert set(m._loose_names(st)) == want, (path, st.lineno)


# ---- reading the bytes -------------------------------------------------------------
_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
ODD_TEXTS = [
    b"x = 1e5 + 0x1f + 3j\ny = [0for _ in z]\n# 12abc_d\n",   # words after digits
    b"import a, \\\nimport b\nfrom c import (d,\n    e)\nimport f; import g\n",
    b"s = 'import x'\n  from . import y  # z\nfrom .. x import w\nimportlib.import_module('q')\n",
    b"\xc3\xa9t\xc3\xa9 = 1\nimport torch\n",
    b"", b"import", b"\nimport os",
]


def _texts() -> list:
    paths = sorted((ROOT / "doctor").rglob("*.py")) + sorted((ROOT / "checks").glob("*.py"))
    paths += sorted((ROOT / "tests" / "data").rglob("*.py")) + sorted(FIXTURES.rglob("*.py"))
    return [p.read_bytes() for p in paths] + ODD_TEXTS


def test_words_of_is_the_identifier_regex():
    for text in _texts():
        assert pyread.words_of(text) == set(_IDENT.findall(text)), text[:200]


def test_imports_read_at_line_starts_are_finditer():
    """pyread._imports tries _IMPORT only at the lines holding `import`: the same matches
    as _IMPORT.finditer, none inside another (a `\\` continuation's next line)."""
    for text in _texts():
        text = text.replace(b";", b"\n")
        assert [m.span() for m in pyread._imports(text)] == \
            [m.span() for m in pyread._IMPORT.finditer(text)], text[:200]


# ---- collective-on-error-path: the call pre-check ------------------------------------
CALLS = {
    # the collective imported under another name: its calls name only `ar`
    "alias_import.py": "from torch.distributed import all_reduce as ar\n\n\ndef train(t):\n"
                       "    try:\n        work()\n    except Exception:\n        ar(t)\n",
    # the name and its `(` apart: a `\\`, and inside brackets a comment and a line break
    "split_call.py": "import torch.distributed as dist\n\n\ndef train(t):\n    try:\n"
                     "        work()\n    except Exception:\n        x = [dist.barrier  # why\n"
                     "             ()]\n        dist.all_reduce \\\n            (t)\n",
    # names distributed and all_reduce but calls none: never parsed
    "mentions.py": "import torch.distributed\n# all_reduce happens elsewhere\nX = 'all_reduce'\n",
}


def _collective_findings(repo: Path) -> tuple:
    job = Job(repo, env={}, static=True)
    (res,) = run_checks(job, [get("collective-on-error-path")]).doc()["results"]
    return sorted(json.dumps(f, sort_keys=True) for f in res["findings"]), job


def test_collectives_call_precheck_keeps_every_caller(tmp_path, monkeypatch):
    repo = _write(tmp_path, CALLS)
    found, job = _collective_findings(repo)
    with monkeypatch.context() as m:
        m.setattr(collectives, "_may_call_collective", lambda _text: True)
        every, _ = _collective_findings(repo)
    assert found == every
    lines = {(json.loads(f)["location"]["path"], json.loads(f)["location"]["line"])
             for f in found}
    assert lines == {("alias_import.py", 8), ("split_call.py", 8), ("split_call.py", 10)}, found
    assert os.path.normpath(repo / "mentions.py") not in _parsed(job)


def test_the_collector_runs_again_after_every_parse():
    """_parse_text pauses the garbage collector for the parse (the trees live to the
    run's end): it runs again afterwards, after a syntax error, and after parses from
    many threads at once."""
    import gc
    import threading

    assert gc.isenabled()
    assert pyread._parse_text(b"x = (1,\n", Path("bad.py")) is None
    assert gc.isenabled()
    texts = [b"def f(x):\n    return [y for y in x]\n", b"if x:\n  pass\n else:\n"] * 40
    threads = [threading.Thread(target=lambda: [pyread._parse_text(t, Path("t.py"))
                                                for t in texts]) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert gc.isenabled()


def test_nodes_lists_walk():
    for path, tree in _sample_trees():
        assert pyread.nodes(tree) == list(pyread.walk(tree)), path


def test_children_are_iter_child_nodes_less_contexts_and_operators():
    for path, tree in _sample_trees():
        for node in pyread.nodes(tree):
            want = [c for c in ast.iter_child_nodes(node) if not isinstance(c, _LEAVES)]
            assert pyread.children(node) == want, (path, node)


def _recursive_uses(node, guarded, binds, rel, uses, consts):
    """torch_api._walk as it was: recursion over ast.iter_child_nodes (the oracle)."""
    safe = {id(n) for n in torch_api._guarded_part(node)}
    for child in ast.iter_child_nodes(node):
        g = guarded or id(child) in safe
        if not g:
            torch_api._use(child, binds, rel, uses, consts)
        _recursive_uses(child, g, binds, rel, uses, consts)


def test_torch_api_walk_finds_the_uses_in_the_recursive_order():
    trees = [(p, ast.parse(p.read_bytes()))
             for p in sorted((FIXTURES / "torch-api-mismatch").rglob("*.py"))]
    assert len(trees) > 10
    total = 0
    for path, tree in trees + _sample_trees():
        binds = torch_api._bindings(tree)
        consts = torch_api._module_constants(tree)
        got: list = []
        want: list = []
        torch_api._walk(tree, False, binds, path.name, got, consts)
        _recursive_uses(tree, False, binds, path.name, want, consts)
        assert got == want, path
        total += len(got)
    assert total > 10   # guarded and unguarded uses were compared
