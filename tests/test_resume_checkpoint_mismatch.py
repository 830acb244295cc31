"""resume-checkpoint-mismatch against real torch: for generated model changes (a renamed,
reshaped, added or removed layer, a Lightning prefix, in each checkpoint layout), the
doctor's missing / unexpected / reshaped lists equal what the real
`model.load_state_dict(torch.load(ckpt), strict=True)` reports in its RuntimeError, run in
a child process. The doctor never imports torch: it reads the file with its own reader and
builds the model in its own child process."""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Optional

import pytest

from doctor import Severity, Skip
from doctor.job.context import Job

from doctor.checks.resume import resume_checkpoint_mismatch

ROOT = Path(__file__).resolve().parent.parent


def _torch_available() -> bool:
    return subprocess.run([sys.executable, "-c", "import torch"],
                          capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not _torch_available(), reason="torch is not installed")

# The model is a ModuleDict built from a spec: name -> [kind, dims]. Both the checkpoint's
# (old) and the factory's (new) model are built by this code, in child processes.
MODEL_PY = r'''
import torch
from torch import nn

KINDS = {"linear": lambda a, b: nn.Linear(a, b), "conv": lambda a, b: nn.Conv2d(a, b, 3),
         "bn": lambda a, b: nn.BatchNorm1d(a), "emb": lambda a, b: nn.Embedding(a, b),
         "ln": lambda a, b: nn.LayerNorm(a)}


def make(spec):
    return nn.ModuleDict({name: KINDS[kind](*dims) for name, (kind, dims) in spec.items()})


class Lit(nn.Module):   # a LightningModule's shape: the net under `model.`
    def __init__(self, spec):
        super().__init__()
        self.model = make(spec)


SPEC = json.loads(open(__file__.replace("model.py", "new.json")).read())


def build():
    return make(SPEC)
'''

SAVE = r'''
import json, sys, torch
import importlib.util
for repo, layout in json.loads(sys.argv[1]):
    spec = importlib.util.spec_from_file_location("m", repo + "/model.py")
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    old, out = json.load(open(repo + "/old.json")), repo + "/ckpt/last.pt"
    torch.manual_seed(0)
    net = m.make(old)
    sd = net.state_dict()
    if layout == "plain":
        torch.save(sd, out)
    elif layout == "legacy":
        torch.save(sd, out, _use_new_zipfile_serialization=False)
    elif layout == "dict":
        torch.save({"model": sd, "optimizer": torch.optim.Adam(net.parameters()).state_dict(),
                    "epoch": 3}, out)
    else:   # lightning
        torch.save({"state_dict": m.Lit(old).state_dict(), "pytorch-lightning_version": "2.4.0",
                    "epoch": 3, "optimizer_states": []}, out)
'''

ORACLE = r'''
import json, re, sys, torch
import importlib.util


def keys(label, text):
    line = re.findall(label + r"[^:]*: (.*?)\.\s*$", text, re.M)
    return re.findall(r'"([^"]+)"', line[0]) if line else []


result = {}
for repo, layout in json.loads(sys.argv[1]):
    spec = importlib.util.spec_from_file_location("m", repo + "/model.py")
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    ckpt = torch.load(repo + "/ckpt/last.pt", weights_only=False)
    model = m.Lit(m.SPEC) if layout == "lightning" else m.build()
    state = ckpt["model"] if layout == "dict" else \
        ckpt["state_dict"] if layout == "lightning" else ckpt
    out = {"missing": [], "unexpected": [], "reshaped": []}
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:
        text = str(exc)
        out = {"missing": keys("Missing key", text), "unexpected": keys("Unexpected key", text),
               "reshaped": re.findall(r"size mismatch for ([^:]+):", text)}
    result[repo] = out
print(json.dumps(result))
'''


def _layer(rng: random.Random) -> list:
    kind = rng.choice(["linear", "conv", "bn", "emb", "ln"])
    return [kind, [rng.randint(2, 9), rng.randint(2, 9)]]


def _mutate(old: dict, change: str, rng: random.Random) -> dict:
    new = dict(old)
    name = rng.choice(sorted(old))
    if change == "rename":
        new[name + "_v2"] = new.pop(name)
    elif change == "reshape":
        kind, (a, b) = new[name]
        new[name] = [kind, [a + 1, b + 1]]
    elif change == "add":
        new[f"extra{rng.randint(0, 99)}"] = _layer(rng)
    elif change == "remove":
        del new[name]
    elif change == "all":
        new = _mutate(_mutate(_mutate(old, "rename", rng), "reshape", rng), "add", rng)
    return new


# Each change in two layouts, every layout several times (a case builds the model in a
# child process with torch, so the list is kept short).
CASES = [(change, layout, seed) for seed, (change, layout) in enumerate([
    ("rename", "plain"), ("rename", "lightning"), ("reshape", "legacy"), ("reshape", "dict"),
    ("add", "dict"), ("add", "lightning"), ("remove", "plain"), ("remove", "legacy"),
    ("all", "lightning"), ("all", "dict"), ("same", "plain"), ("same", "lightning")])]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> list:
    """Every case written by real torch.save: (change, layout, repo)."""
    out = []
    for change, layout, seed in CASES:
        rng = random.Random(seed)
        old = {f"l{i}": _layer(rng) for i in range(rng.randint(2, 5))}
        new = _mutate(old, change, rng) if change != "same" else dict(old)
        repo = tmp_path_factory.mktemp(f"{change}-{layout}")
        (repo / "model.py").write_text("import json\n" + MODEL_PY)
        (repo / "old.json").write_text(json.dumps(old))
        (repo / "new.json").write_text(json.dumps(new))
        (repo / "train.yaml").write_text("resume_from: ckpt/last.pt\n")
        (repo / "train.py").write_text("def main(cfg):\n    return cfg.resume_from\n")
        (repo / "ckpt").mkdir()
        out.append((change, layout, repo))
    todo = json.dumps([(str(repo), layout) for _, layout, repo in out])
    subprocess.run([sys.executable, "-c", SAVE, todo], check=True, timeout=300)
    return out


def _oracle(generated: list) -> dict:
    """What the real load_state_dict(strict=True) says, per case (one child process)."""
    todo = json.dumps([(str(repo), layout) for _, layout, repo in generated])
    proc = subprocess.run([sys.executable, "-c", ORACLE, todo],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _doctor(repo: Path) -> list:
    job = Job(repo, configs=[str(repo / "train.yaml")], model="model:build", env={})
    try:
        return list(resume_checkpoint_mismatch(job))
    finally:
        job.cleanup()


def test_generated_changes_match_load_state_dict(generated):
    compared = {"missing": 0, "unexpected": 0, "reshaped": 0}
    oracle = _oracle(generated)
    with ThreadPoolExecutor(max_workers=6) as pool:   # each builds its model in a child
        found = list(pool.map(_doctor, [repo for _, _, repo in generated]))
    for (change, layout, repo), findings in zip(generated, found):
        want = oracle[str(repo)]
        label = f"{change}/{layout}"
        if not any(want.values()):
            assert findings == [], label
            continue
        assert len(findings) == 1, label
        data = findings[0].data
        prefix = "model." if layout == "lightning" else ""
        assert data["prefix_stripped"] == prefix, label
        assert data["state_dict"] == {"plain": "the top level", "legacy": "the top level",
                                      "dict": 'checkpoint["model"]',
                                      "lightning": 'checkpoint["state_dict"]'}[layout], label
        got = {"missing": [prefix + k for k in data["missing"]],
               "unexpected": [prefix + k for k in data["unexpected"]],
               "reshaped": [prefix + r["key"] for r in data["reshaped"]]}
        for kind in got:
            assert sorted(got[kind]) == sorted(want[kind]), (label, kind, data)
            compared[kind] += len(want[kind])
        assert findings[0].severity == Severity.ERROR, label
    # the generated changes really exercise every list
    assert all(n > 0 for n in compared.values()), compared


def test_the_checkpoint_is_never_unpickled(tmp_path):
    """A checkpoint whose pickle would run a command: read for its keys, never executed."""
    (tmp_path / "model.py").write_text("from torch import nn\n\n\ndef build():\n"
                                       "    return nn.Linear(2, 3)\n")
    (tmp_path / "train.yaml").write_text("resume_from: evil.pt\n")
    (tmp_path / "train.py").write_text("print(cfg.resume_from)\n")
    marker = tmp_path / "PWNED"
    code = ("import os, torch\n"
            "class P:\n"
            f"    def __reduce__(self): return (os.system, ('touch {marker}',))\n"
            "torch.save({'weight': torch.ones(2, 2), 'bias': torch.ones(3), 'p': P()}, "
            f"'{tmp_path / 'evil.pt'}')\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)
    findings = _doctor(tmp_path)
    assert not marker.exists(), "the doctor executed the checkpoint's pickle"
    assert [r["key"] for r in findings[0].data["reshaped"]] == ["weight"]


def test_no_factory_skips_and_names_the_setting(generated):
    _, _, repo = generated[0]
    job = Job(repo, configs=[str(repo / "train.yaml")], env={})
    with pytest.raises(Skip, match=re.escape("--model MOD:FACTORY or settings smoke.model")):
        list(resume_checkpoint_mismatch(job))


def test_the_doctor_process_never_imports_torch(generated):
    _, _, repo = generated[0]
    code = ("import sys; from doctor.job.context import Job; "
            "from doctor.checks.resume import resume_checkpoint_mismatch as c; "
            f"job = Job({str(repo)!r}, configs=[{str(repo / 'train.yaml')!r}], "
            "model='model:build', env={}); list(c(job)); print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "False", proc.stderr


# ---- globals outside the weights_only set: judged as the real torch.load judges them ----
# Objects an ordinary training script saves, written by the real torch.save in a child.
ORDINARY = {
    "set": "{0, 1, 2}",            # torch loads it; protocol 2 names it __builtin__.set
    "counter": "collections.Counter(a=1)",
    "namespace": "argparse.Namespace(lr=3e-4)",
    "stat_result": "os.stat('.')",
    "bound_method": "collections.OrderedDict().keys",      # old OneCycleLR: getattr(obj, name)
}
SAVE_ORDINARY = r'''
import argparse, collections, json, os, sys, torch, zipfile
from torch import nn
out = {}
for name, expr in json.loads(sys.argv[1]).items():
    path = f"{name}.pt"
    torch.save({"state_dict": nn.Linear(2, 3).state_dict(), "extra": eval(expr)}, path)
    with zipfile.ZipFile(path) as z:
        pkl = z.read(next(n for n in z.namelist() if n.endswith("/data.pkl")))
    try:   # weights_only=True never runs a global: safe on any file
        torch.load(path, weights_only=True)
        loads = True
    except Exception:
        loads = False
    out[name] = {"torch": sorted(torch.serialization.get_unsafe_globals_in_checkpoint(path)),
                 "loads": loads, "pkl": pkl.hex()}
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def ordinary(tmp_path_factory) -> tuple:
    where = tmp_path_factory.mktemp("ordinary")
    proc = subprocess.run([sys.executable, "-c", SAVE_ORDINARY, json.dumps(ORDINARY)], cwd=where,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return where, json.loads(proc.stdout.strip().splitlines()[-1])


def test_both_scanners_name_the_globals_torch_names(ordinary):
    """The doctor's torch.save reader and the cache scanner report exactly what
    torch.serialization.get_unsafe_globals_in_checkpoint reports (a set is `builtins.set`,
    though protocol 2 writes `__builtin__.set`)."""
    from doctor.scanners.cachescan import _unpickle
    from doctor.scanners.torchsave import inspect_file

    where, truth = ordinary
    assert truth["set"] == {**truth["set"], "torch": [], "loads": True}
    assert b"__builtin__\nset" in bytes.fromhex(truth["set"]["pkl"])   # what is mapped
    for name, want in truth.items():
        info = inspect_file(str(where / f"{name}.pt"))
        assert info is not None and info.unsafe_globals == want["torch"], (name, info)
        cached, _, _ = _unpickle(bytes.fromhex(want["pkl"]))
        assert cached.unsafe_globals == want["torch"], (name, cached)


def _ckpt_repo(tmp_path: Path, src: Path, train_py: str) -> Path:
    repo = tmp_path / "repo"
    (repo / "ckpt").mkdir(parents=True)
    (repo / "ckpt" / "last.pt").write_bytes(src.read_bytes())
    (repo / "train.yaml").write_text("resume_from: ckpt/last.pt\n")
    (repo / "train.py").write_text(train_py)
    return repo


def _unsafe_findings(repo: Path, torch_version: Optional[str] = None) -> list:
    job = Job(repo, configs=[str(repo / "train.yaml")], env={}, torch_version=torch_version)
    try:
        return [f for f in resume_checkpoint_mismatch(job) if "unsafe_globals" in f.data]
    except Skip:
        return []
    finally:
        job.cleanup()


READS = "import torch\n\n\ndef main(cfg):\n    return torch.load(cfg.resume_from{})\n"


@pytest.mark.parametrize("name", sorted(ORDINARY))
def test_ordinary_globals_are_never_an_error(ordinary, tmp_path, name):
    """A set: no finding (torch loads it). A Namespace, an os.stat_result, a bound method
    (builtins.getattr): refused by weights_only=True, but they run no code: a warning."""
    where, truth = ordinary
    repo = _ckpt_repo(tmp_path, where / f"{name}.pt", READS.format(', map_location="cpu"'))
    findings = _unsafe_findings(repo)
    if truth[name]["loads"]:
        assert findings == [], [f.message for f in findings]
        return
    finding, = findings
    assert finding.severity == Severity.WARNING, finding.message
    assert finding.data["runs_code"] == [] and "calls" not in finding.message, finding.message
    assert finding.data["unsafe_globals"] == truth[name]["torch"]


def _calls(module: str, name: str, arg: str) -> bytes:
    """A torch.save zip whose pickle calls module.name(arg), written from opcodes (never
    unpickled): GLOBAL, BINUNICODE, TUPLE1, REDUCE, STOP."""
    import io
    import zipfile

    raw = arg.encode()
    pkl = (b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"X"
           + len(raw).to_bytes(4, "little") + raw + b"\x85R.")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr("last/data.pkl", pkl)
        z.writestr("last/version", "3\n")
    return buf.getvalue()


@pytest.mark.parametrize("load,torch_version,expect", [
    (', map_location="cpu", weights_only=False', None, None),
    ("", "2.5", None),                     # before 2.6 the default is weights_only=False
    ("", "2.6", "weights_only=True (train.py:5, torch 2.6's default)"),
    (", weights_only=True", None, "weights_only=True (train.py:5)"),
])
def test_how_the_job_loads_decides_a_namespace(ordinary, tmp_path, load, torch_version,
                                               expect):
    where, _ = ordinary
    repo = _ckpt_repo(tmp_path, where / "namespace.pt", READS.format(load))
    findings = _unsafe_findings(repo, torch_version)
    if expect is None:
        assert findings == [], [f.message for f in findings]
        return
    finding, = findings
    assert finding.severity == Severity.WARNING and expect in finding.message, finding.message
    assert finding.data["weights_only"] is True


@pytest.mark.parametrize("load,torch_version,severity", [
    (', map_location="cpu", weights_only=False', None, Severity.WARNING),
    ("", "2.5", Severity.WARNING),
    ("", "2.6", Severity.ERROR),
    ("", None, Severity.ERROR),   # how it loads is not known: refused, or it runs the call
])
def test_a_code_running_global_is_an_error_unless_the_job_loads_it_unsafely(
        tmp_path, load, torch_version, severity):
    """weights_only=False: the resume does not fail, but loading runs posix.system, and the
    warning says so; otherwise the resume fails (or runs it): an error."""
    marker = tmp_path / "PWNED"
    src = tmp_path / "evil.pt"
    src.write_bytes(_calls("posix", "system", f"touch {marker}"))
    repo = _ckpt_repo(tmp_path, src, READS.format(load))
    finding, = _unsafe_findings(repo, torch_version)
    assert not marker.exists(), "the doctor executed the checkpoint's pickle"
    assert finding.severity == severity, finding.message
    assert finding.data["runs_code"] == ["posix.system"], finding.data
    if severity == Severity.WARNING:
        assert "loads it with weights_only=False" in finding.message, finding.message
        assert "makes those calls" in finding.message, finding.message


@pytest.mark.parametrize("module,name,runs", [
    ("posix", "system", True), ("os", "execv", True), ("os", "spawnlp", True),
    ("subprocess", "check_output", True), ("__builtin__", "eval", True),
    ("builtins", "exec", True), ("runpy", "run_path", True), ("ctypes", "CDLL", True),
    ("pickle", "loads", True), ("commands", "getoutput", True),   # py2 name: subprocess
    ("os", "stat_result", False), ("posix", "stat_result", False),
    ("__builtin__", "getattr", False), ("argparse", "Namespace", False),
    ("os", "environ", False),
])
def test_runs_code_names_only_what_executes(module, name, runs):
    from doctor.checks.resume import runs_code
    from doctor.scanners.torchsave import global_name

    assert runs_code(global_name(module, name)) is runs
