"""doctor/job/code.py against the real torch: what DataLoader(...) really receives.

Generated snippets write a DataLoader call whose keywords come through constants,
names, env variables (set in the snippet's environment or left to their default),
`cfg.get` defaults, literal `**` dicts (with `d['k'] = v`, also under a worker
guard) and guarded expressions. One child process execs all of them with the real
torch, with `torch.utils.data.DataLoader` replaced by a subclass that records the
keywords it received and whether the real constructor raised. For every snippet,
each value code.py says it knows must equal what DataLoader received, a key it says
is not passed must not arrive, and, where every value is known, the check's rules
must predict the constructor's error exactly.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

from doctor.checks.dataloader import code_spec, conflicts  # noqa: E402
from doctor.job.code import code_settings, entry_env  # noqa: E402
from doctor.job.context import Job  # noqa: E402

CASES = 300
ABSENT = "<absent>"
CHILD = r"""
import json, os, sys
import torch.utils.data as tud

Real = tud.DataLoader
record = {}

class Recorder(Real):
    def __init__(self, *args, **kwargs):
        record["kwargs"] = {k: v for k, v in kwargs.items() if k != "batch_size"}
        try:
            super().__init__(*args, **kwargs)
        except (ValueError, TypeError) as exc:
            record["raised"] = type(exc).__name__

tud.DataLoader = Recorder
out = []
for case in json.load(sys.stdin):
    os.environ.clear()
    os.environ.update(case["env"])
    record.clear()
    exec(compile(case["src"], case["name"], "exec"), {"__name__": "snippet"})
    out.append(dict(record))
json.dump(out, sys.stdout)
"""

HEADER = """import os
from types import SimpleNamespace

from torch.utils.data import DataLoader

CFG = {}
OBJ = SimpleNamespace(cfg={}, workers=%d)


def build(ds, cfg, obj):
"""

# Values each option takes, all of the right type: the rules, not type errors, decide.
VALUES = {"prefetch_factor": [None, 2, 4, 0], "persistent_workers": [True, False],
          "timeout": [0, 5], "multiprocessing_context": [None, "spawn", "fork", "bogus"]}


def _value_expr(rng: random.Random, key: str, v, env: dict, var: str) -> tuple:
    """(expression, setup lines) that give v to the key, in one of the forms code.py reads."""
    forms = ["const", "name", "cfg", "getattr", "self_cfg", "guard", "guard_neg", "guard_bare"]
    if isinstance(v, (int, str)) and not isinstance(v, bool):
        forms += ["env_set", "env_default"]
    form = rng.choice(forms)
    conv = "int" if isinstance(v, int) and not isinstance(v, bool) else ""
    if form == "const":
        return repr(v), []
    if form == "name":
        return f"v_{key}", [f"v_{key} = {v!r}"]
    if form == "cfg":
        return f"cfg.get({key!r}, {v!r})", []
    if form == "getattr":
        return f"getattr(obj, {key!r}, {v!r})", []
    if form == "self_cfg":
        return f"obj.cfg.get({key!r}, {v!r})", []
    if form.startswith("guard"):
        # the workers branch gets v; without workers the option is left at None/off
        off = {"persistent_workers": False, "timeout": 0}.get(key, None)
        return {"guard": f"{v!r} if num_workers > 0 else {off!r}",
                "guard_neg": f"{off!r} if num_workers == 0 else {v!r}",
                "guard_bare": f"{v!r} if num_workers else {off!r}"}[form], []
    if form == "env_set":
        env[var] = str(v)
        default = rng.choice(["'9'", "'spawn'"]) if not conv else "'7'"
        inner = rng.choice([f"os.environ.get({var!r}, {default})", f"os.environ[{var!r}]",
                            f"os.getenv({var!r}, {default})"])
        return (f"{conv}({inner})" if conv else inner), []
    inner = rng.choice([f"os.environ.get({var!r}, {str(v)!r})",
                        f"os.getenv({var!r}, {str(v)!r})"])
    return (f"{conv}({inner})" if conv else inner), []


def make_snippet(i: int, rng: random.Random) -> dict:
    env: dict = {}
    workers = rng.choice([0, 2])
    wexpr, setup = _value_expr(rng, "num_workers", workers, env, f"S{i}_NUM_WORKERS")
    if "if num_workers" in wexpr:   # the worker count is not guarded by itself
        wexpr = repr(workers)
    if rng.random() < 0.1:
        wexpr = "obj.workers"        # an attribute: code.py must say unknown
    setup = setup + [f"num_workers = {wexpr}"]
    keyword_parts, spread_keys = ["num_workers=num_workers"], {}
    for key in rng.sample(sorted(VALUES), rng.randint(1, 3)):
        expr, lines = _value_expr(rng, key, rng.choice(VALUES[key]), env, f"S{i}_{key.upper()}")
        setup += lines
        if rng.random() < 0.3:
            spread_keys[key] = expr
        else:
            keyword_parts.append(f"{key}={expr}")
    if spread_keys:
        setup += _spread(rng, spread_keys)
        named = any(line.startswith("kw = ") for line in setup)
        keyword_parts.append("**kw" if named else "**{" + ", ".join(
            f"{k!r}: {e}" for k, e in spread_keys.items()) + "}")
    body = "\n".join(f"    {line}" for line in setup)
    src = (HEADER % workers + body + "\n    return DataLoader(ds, batch_size=2, "
           + ", ".join(keyword_parts) + ")\n\n\nbuild(list(range(4)), CFG, OBJ)\n")
    return {"name": f"snippet_{i}.py", "src": src, "env": env}


def _spread(rng: random.Random, keys: dict) -> list:
    """Setup lines for a dict spread: literal in the call, a name, dict(...), or sets."""
    form = rng.choice(["literal", "name", "dict", "sets", "guarded_sets"])
    if form == "literal":
        return []
    if form == "name":
        return ["kw = {" + ", ".join(f"{k!r}: {e}" for k, e in keys.items()) + "}"]
    if form == "dict":
        return ["kw = dict(" + ", ".join(f"{k}={e}" for k, e in keys.items()) + ")"]
    lines = ["kw = {}"]
    for k, e in keys.items():
        if form == "guarded_sets":
            lines += ["if num_workers > 0:", f"    kw[{k!r}] = {e}"]
        else:
            lines.append(f"kw[{k!r}] = {e}")
    return lines


def _received(record: dict, key: str):
    return record["kwargs"].get(key, ABSENT)


def _read(call, key: str, workers):
    """code.py's reading of one key, the guarded branch picked by the worker count:
    (known, value or ABSENT)."""
    v = call.get(key)
    if v is None:
        return True, ABSENT
    if v.kind == "guarded":
        if not isinstance(workers, int):
            return False, None
        v = v.workers if workers > 0 else v.zero
        if v is None:
            return True, ABSENT
    return v.known, v.value


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    rng = random.Random(12)
    cases = [make_snippet(i, rng) for i in range(CASES)]
    root = tmp_path_factory.mktemp("snippets")
    for c in cases:
        (root / c["name"]).write_text(c["src"])
    res = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(cases),
                         capture_output=True, text=True, timeout=120, check=True)
    env = {k: v for c in cases for k, v in c["env"].items()}
    job = Job(root, env={})
    calls = {c.file: c for c in code_settings(job, env).loaders}
    return cases, json.loads(res.stdout), calls


def test_code_model_reads_what_dataloader_receives(run):
    cases, records, calls = run
    compared = unknown = verdicts = 0
    for case, record in zip(cases, records):
        call = calls[case["name"]]
        _, workers = _read(call, "num_workers", None)
        for key in ("num_workers", *VALUES):
            known, value = _read(call, key, workers)
            if not known:
                unknown += 1
                continue
            got = _received(record, key)
            assert (type(value), value) == (type(got), got), (
                f"{case['name']}: {key}: code.py read {value!r}, DataLoader got {got!r}\n"
                f"{case['src']}env: {case['env']}")
            compared += 1
        spec = code_spec(call)
        if any(not isinstance(v, (int, str, bool, type(None))) for v in spec.mapping.values()):
            continue   # something unknown: the rules are not applied to it
        predicted = any(c.raises.endswith("in DataLoader()") for c in conflicts(spec, (2, 13)))
        assert predicted == ("raised" in record), (
            f"{case['name']}: rules say {predicted}, torch raised {record.get('raised')}\n"
            f"{case['src']}env: {case['env']}")
        verdicts += 1
    assert compared > 500 and verdicts > 200, (compared, verdicts)
    assert unknown > 10   # the obj.workers forms: followed no further than shown


def test_code_model_marks_unreadable_values_unknown(run):
    cases, _, calls = run
    for case in cases:
        call = calls[case["name"]]
        if "num_workers = obj.workers" in case["src"]:
            w = call.get("num_workers")
            assert w is not None and not w.known and "attribute" in w.why


def _job(tmp_path: Path, files: dict) -> Job:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return Job(tmp_path, env={})


def test_process_group_timeouts_and_patches(tmp_path):
    job = _job(tmp_path, {"train.py": (
        "import datetime, os\nimport torch.distributed as dist\n"
        "torch.distributed.distributed_c10d._DEFAULT_PG_TIMEOUT = datetime.timedelta(hours=1)\n"
        "M = int(os.environ.get('PG_MIN', '30'))\n"
        "def main():\n"
        "    dist.init_process_group('nccl', timeout=datetime.timedelta(minutes=M))\n"
        "    torch.distributed.init_process_group(backend='gloo')\n")})
    code = code_settings(job, {"PG_MIN": "5"})
    explicit, default = code.pg_inits
    assert (explicit.seconds, explicit.timeout.kind, explicit.timeout.source) == \
        (300.0, "env", "PG_MIN")
    assert (default.timeout, default.seconds) == (None, 1800.0)
    assert [(p.attr, p.line) for p in code.pg_patches] == [("_DEFAULT_PG_TIMEOUT", 3)]
    assert code_settings(job, {}).pg_inits[0].seconds == 1800.0   # PG_MIN's default


def test_compile_calls(tmp_path):
    job = _job(tmp_path, {"m.py": (
        "import re, torch\nre.compile('x')\n"
        "@torch.compile\ndef f(x):\n    return x\n"
        "def g(model, args):\n"
        "    a = torch.compile(model, mode='max-autotune', backend='inductor', fullgraph=True)\n"
        "    if args.compile:\n        model = torch.compile(model)\n")})
    calls = code_settings(job, {}).compiles
    assert [(c.line, c.conditional) for c in calls] == [(3, False), (7, False), (9, True)]
    c = calls[1]
    assert (c.mode.value, c.backend.value, c.fullgraph.value) == ("max-autotune", "inductor",
                                                                  True)


def test_entry_env_before_and_after_torch(tmp_path):
    job = _job(tmp_path, {"train.py": (
        "import os\n"
        "os.environ['NCCL_DEBUG'] = 'INFO'\n"
        "os.environ.setdefault('NCCL_DEBUG', 'WARN')\n"
        "import torch\n"
        "os.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n"
        "def main():\n    os.environ['IN_MAIN'] = '1'\n"
        "if __name__ == '__main__':\n"
        "    os.putenv('OMP_NUM_THREADS', str(4))\n"
        "    main()\n"
        "    os.environ['AFTER'] = '1'\n")})
    env = entry_env(job, tmp_path / "train.py")
    got = {k: (v.value, v.line, v.before_torch_import, v.how) for k, v in env.items()}
    assert got == {"NCCL_DEBUG": ("INFO", 2, True, "set"),
                   "PYTORCH_CUDA_ALLOC_CONF": ("expandable_segments:True", 5, False, "set"),
                   "OMP_NUM_THREADS": ("4", 9, False, "putenv")}
