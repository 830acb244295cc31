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

import pytest

from doctor import Severity, Skip
from doctor.job.context import Job

from checks.resume import resume_checkpoint_mismatch

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
            "from checks.resume import resume_checkpoint_mismatch as c; "
            f"job = Job({str(repo)!r}, configs=[{str(repo / 'train.yaml')!r}], "
            "model='model:build', env={}); list(c(job)); print('torch' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)
    assert proc.stdout.strip().splitlines()[-1] == "False", proc.stderr
