"""torch-api-mismatch against the real torch.

(a) the shipped table says what inspect.signature of the installed torch says, for every
covered function, name and alias; (b) every call the check flags really raises with the
installed torch, and every call it lets through does not (run in a child process);
(c) `--static` judges from the table and never imports torch, and a live run reads the
installed torch in a child, not in the doctor's process.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from importlib import metadata

import pytest

from doctor.checks.torch_api import NAMES, QUALNAMES, table_api
from conftest import ROOT
from doctor.job.context import Job
from doctor.job.versions import parse_version
from doctor.registry import get
from doctor.runner import run_checks

try:
    INSTALLED = metadata.version("torch")
except metadata.PackageNotFoundError:
    INSTALLED = None
pytestmark = pytest.mark.skipif(INSTALLED is None, reason="torch is not installed")

# The oracle's own reading of the installed torch (independent of checks/torch_api.py).
INTROSPECT = r"""
import importlib, inspect, json, sys, warnings
warnings.simplefilter("ignore")
import torch
quals, names = json.loads(sys.argv[1])
def obj(q):
    mod, _, attr = q.rpartition(".")
    try:
        return getattr(importlib.import_module(mod), attr)
    except (ImportError, AttributeError):
        return None
sigs = {}
for q in quals:
    ps = inspect.signature(obj(q)).parameters.values()
    sigs[q] = [sorted(p.name for p in ps if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)),
               any(p.kind == p.VAR_KEYWORD for p in ps), id(obj(q))]
have = {}
for n in names:
    try:
        importlib.import_module(n); have[n] = True
    except ImportError:
        have[n] = obj(n) is not None
print(json.dumps([sigs, have]))
"""


def _child(code: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout.strip().splitlines()[-1]


def test_table_matches_installed_torch():
    release = parse_version(INSTALLED)
    table = table_api(release)
    assert table is not None, f"the shipped table does not cover the installed torch {INSTALLED}"
    sigs, have = json.loads(_child(INTROSPECT, json.dumps([sorted(QUALNAMES), sorted(NAMES)])))
    for qual, key in QUALNAMES.items():
        keywords, var_kw, _ = sigs[qual]
        entry = table["functions"][key]
        assert sorted(entry["keywords"]) == keywords, (qual, entry["keywords"], keywords)
        assert entry["var_keyword"] == var_kw, qual
    # every alias the doctor resolves is the very same object in this torch
    by_key: dict = {}
    for qual, key in QUALNAMES.items():
        by_key.setdefault(key, set()).add(sigs[qual][2])
    assert all(len(ids) == 1 for ids in by_key.values()), by_key
    assert table["names"] == have


# (snippet, covered by the check). Run in this order in one child: the bad
# init_process_group fails while binding its arguments, the good one makes the group the
# fully_shard calls need.
CASES = [
    "dist.init_process_group('gloo', world_sizee=1)",
    "dist.init_process_group('gloo', init_method=URL, rank=0, world_size=1)",
    "fully_shard(nn.Linear(2, 2), auto_wrap_policy=None)",
    "fully_shard(nn.Linear(2, 2), sync_module_states=True)",
    "F.fully_shard(nn.Linear(2, 2), mesh=init_device_mesh('cpu', (1,)))",
    "fully_shard(nn.Linear(2, 2), reshard_after_forward=False, mp_policy=MixedPrecisionPolicy())",
    "torch.autocast('hip')",
    "torch.amp.autocast(device_type='hip', dtype=torch.bfloat16)",
    "torch.autocast('cuda', dtype=torch.bfloat16)",
    "torch.autocast(device_type='cpu')",
    "DataLoader(range(4), batch_size=2, num_worker=0)",
    "DataLoader(range(4), batch_size=2, in_order=False, persistent_workers=False)",
    "torch.load(BUF(), weights_only=True, mmap=False)",
    "torch.load(BUF(), map_location='cpu', weights_only=False)",
]
HEADER = """\
import io
import torch
import torch.distributed as dist
import torch.distributed._composable.fsdp as F
from torch import nn
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.utils.data import DataLoader
"""
RUNNER = HEADER + r"""
import json, socket, sys, warnings
warnings.simplefilter("ignore")
s = socket.socket(); s.bind(("127.0.0.1", 0)); URL = "tcp://127.0.0.1:%d" % s.getsockname()[1]
s.close()
def BUF():
    b = io.BytesIO(); torch.save({"w": torch.ones(1)}, b); b.seek(0); return b
out = []
for snippet in json.loads(sys.argv[1]):
    try:
        eval(snippet)
        out.append(None)
    except Exception as exc:
        out.append(type(exc).__name__)
if dist.is_initialized():
    dist.destroy_process_group()
print(json.dumps(out))
"""


def _flagged_lines(tmp_path, **job_args) -> dict:
    result = run_checks(Job(tmp_path, env={}, **job_args), [get("torch-api-mismatch")])
    doc = next(r for r in result.doc()["results"] if r["id"] == "torch-api-mismatch")
    return {f["location"]["line"]: f["data"] for f in doc["findings"]}


def test_flagged_calls_are_exactly_the_ones_real_torch_rejects(tmp_path):
    raised = json.loads(_child(RUNNER, json.dumps(CASES)))
    assert all(r in (None, "TypeError", "RuntimeError", "ValueError") for r in raised), raised
    assert raised.count(None) >= 7 and len(raised) - raised.count(None) >= 5, raised
    first = HEADER.count("\n") + 3   # header, a blank line, then `def case_0():`
    body = "\n".join(f"def case_{i}():\n    {c}\n" for i, c in enumerate(CASES))
    (tmp_path / "train.py").write_text(HEADER + "\n" + body)
    line_of = {first + 3 * i: i for i in range(len(CASES))}
    for job_args in ({}, {"static": True, "torch_version": INSTALLED}):
        flagged = _flagged_lines(tmp_path, **job_args)
        assert {line_of[n] for n in flagged} == {i for i, r in enumerate(raised) if r}, (
            job_args, flagged, raised)
        want = "table" if job_args else "installed"
        assert {d["signature_from"] for d in flagged.values()} == {want}


def test_torch_load_forwards_unknown_keywords_to_pickle():
    """How torch < 1.13 rejects weights_only: torch.load has **pickle_load_args (table) and
    hands them to pickle's Unpickler, which raises TypeError for a keyword it lacks."""
    code = ("import io, torch\nb = io.BytesIO(); torch.save(1, b); b.seek(0)\n"
            "try:\n    torch.load(b, weights_only=False, not_a_pickle_arg=1)\n"
            "except TypeError as e:\n    print('TypeError', e)\n")
    assert "Unpickler" in _child(code)


def _doctor(repo, *args: str) -> tuple:
    code = ("import sys, doctor.cli\n"
            "try:\n    doctor.cli.main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "bad = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))\n"
            "print('TORCH' if bad else 'CLEAN', file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code, "run", "--repo", str(repo), "--only",
                           "torch-api-mismatch", "--format", "json", *args],
                          capture_output=True, text=True, timeout=180, cwd=ROOT)
    result = json.loads(proc.stdout)["results"][0]
    return proc.stderr.strip().splitlines()[-1], result


@pytest.mark.parametrize("mode", ["static", "live"])
def test_cli_never_imports_torch_in_the_doctor(tmp_path, mode):
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "fixtures" / "torch-api-mismatch" / "fail_installed_torch", repo,
                    ignore=shutil.ignore_patterns("case.yaml"))
    marker, result = _doctor(repo, *(["--static", "--torch-version", INSTALLED]
                                     if mode == "static" else []))
    assert marker == "CLEAN"
    assert result["status"] == "fail", result
    data = result["findings"][0]["data"]
    assert data["keyword"] == "auto_wrap_policy"
    assert data["signature_from"] == ("table" if mode == "static" else "installed")


def test_static_run_of_the_seeds(tmp_path):
    src = tmp_path / "train.py"
    src.write_text(textwrap.dedent("""\
        import torch
        with torch.autocast("hip", dtype=torch.bfloat16):
            pass
        """))
    marker, result = _doctor(tmp_path, "--static", "--torch-version", "2.5.1+rocm6.2.4")
    assert marker == "CLEAN" and result["status"] == "fail"
    assert result["findings"][0]["data"]["device_type"] == "hip"
