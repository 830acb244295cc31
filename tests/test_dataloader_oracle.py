"""dataloader-option-conflict against the real torch.utils.data.DataLoader.

Every rule is proven on the installed torch: the same options, written in a
config and checked by the doctor, must fail the check exactly when the real
DataLoader raises (in the constructor, or at the first batch for the errors
that only come then). The torch 1.x rules cannot run here (no 1.x wheel for
this Python): they are tested against a transcription of torch 1.13's
constructor checks, quoted below.
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import pytest
import yaml

torch = pytest.importorskip("torch")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402
from torch.utils.data import DataLoader, Dataset  # noqa: E402

from doctor.job.loaders import LoaderSpec  # noqa: E402
from doctor.checks.dataloader import conflicts  # noqa: E402
from doctor.job.versions import parse_version  # noqa: E402
from doctor.job.configs import ConfigFile, load_yaml_text  # noqa: E402
from doctor.job.context import Job  # noqa: E402
from doctor.model import Status  # noqa: E402
from doctor.registry import get  # noqa: E402
from doctor.runner import run_one  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")

INSTALLED = torch.__version__
ABSENT = object()
DATASET = list(range(4))  # a tiny map-style dataset


def torch_verdict(kwargs: dict) -> str:
    """What the real DataLoader does with these options: ctor, iter (raises) or ok."""
    try:
        loader = DataLoader(DATASET, batch_size=2, **kwargs)
    except (ValueError, TypeError) as exc:
        return f"ctor:{type(exc).__name__}"
    if loader.num_workers > 0 and kwargs.get("multiprocessing_context") in ("spawn",
                                                                            "forkserver"):
        # the name is already validated; fork starts workers in ms instead of seconds
        loader.multiprocessing_context = "fork"
    it = None
    try:
        it = iter(loader)
        next(it)
    except AssertionError:
        return "iter:AssertionError"
    except RuntimeError as exc:
        # a worker slower than a 0.5 s timeout on a busy machine: the options were accepted
        if "timed out" not in str(exc):
            raise
    finally:
        for obj in (it, getattr(loader, "_iterator", None)):
            if obj is not None and hasattr(obj, "_shutdown_workers"):
                obj._shutdown_workers()
    return "ok"


def doctor_verdict(kwargs: dict, version: str = INSTALLED) -> dict:
    """The check's result for a config holding these options as a DataLoader spec."""
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "train.yaml"
        cfg.write_text(yaml.safe_dump({"data": {"batch_size": 2, **kwargs}}, sort_keys=False))
        job = Job(Path(tmp), configs=[str(cfg)], torch_version=version, env={})
        return run_one(get("dataloader-option-conflict"), job).to_dict()


def rules_of(result: dict) -> set:
    return {f["data"]["rule"] for f in result["findings"]}


# Each rule: options that break it (and where torch raises), and a near miss.
RULES = [
    ("prefetch-without-workers", dict(num_workers=0, prefetch_factor=2), "ctor:ValueError"),
    ("prefetch-without-workers", dict(prefetch_factor=4), "ctor:ValueError"),
    (None, dict(num_workers=0, prefetch_factor=None), "ok"),
    ("persistent-without-workers", dict(persistent_workers=True), "ctor:ValueError"),
    (None, dict(num_workers=1, persistent_workers=True), "ok"),
    ("context-without-workers", dict(num_workers=0, multiprocessing_context="fork"),
     "ctor:ValueError"),
    (None, dict(num_workers=1, multiprocessing_context="spawn"), "ok"),
    ("context-unknown", dict(num_workers=1, multiprocessing_context="bogus"), "ctor:ValueError"),
    ("context-unknown", dict(num_workers=1, multiprocessing_context=3), "ctor:TypeError"),
    ("timeout-without-workers", dict(timeout=5), "iter:AssertionError"),
    ("timeout-without-workers", dict(num_workers=0, timeout=0.5), "iter:AssertionError"),
    (None, dict(num_workers=1, timeout=5), "ok"),
    ("negative", dict(num_workers=-1), "ctor:ValueError"),
    ("negative", dict(num_workers=1, timeout=-1), "ctor:ValueError"),
    ("negative", dict(num_workers=1, prefetch_factor=-1), "ctor:ValueError"),
    ("prefetch-zero", dict(num_workers=1, prefetch_factor=0), "iter:AssertionError"),
    (None, dict(num_workers=2, prefetch_factor=1), "ok"),
]


@pytest.mark.parametrize("rule,kwargs,expected", RULES,
                         ids=[f"{r or 'ok'}-{k}" for r, k, _ in RULES])
def test_every_rule_matches_the_real_dataloader(rule, kwargs, expected):
    assert torch_verdict(kwargs) == expected
    result = doctor_verdict(kwargs)
    if rule is None:
        assert result["status"] == "pass", result["findings"]
        return
    assert result["status"] == "fail"
    assert rule in rules_of(result)
    finding = next(f for f in result["findings"] if f["data"]["rule"] == rule)
    # what the finding says torch does is what torch did
    stage = "at the first batch" if expected.startswith("iter") else "in DataLoader()"
    assert finding["data"]["raises"] == f"{expected.split(':')[1]} {stage}"
    assert finding["location"]["path"] == "train.yaml"
    assert finding["location"]["line"] == 3 + list(kwargs).index(finding["data"]["keys"][0])
    assert finding["data"]["torch_version"] == INSTALLED
    assert finding["fix"]


def value(options: list):
    return st.sampled_from([ABSENT, *options])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(num_workers=value([-1, 0, 1, 2]), prefetch_factor=value([None, -1, 0, 1, 2, 4]),
       persistent_workers=value([False, True]), timeout=value([-1, 0, 0.5, 5]),
       multiprocessing_context=value([None, "fork", "spawn", "forkserver", "bogus"]))
def test_property_verdicts_agree_with_the_real_dataloader(**options):
    kwargs = {k: v for k, v in options.items() if v is not ABSENT}
    real = torch_verdict(kwargs)
    result = doctor_verdict(kwargs)
    assert (result["status"] == "fail") == (real != "ok"), (kwargs, real, result["findings"])


def test_unresolved_values_are_not_guessed(tmp_path):
    cfg = tmp_path / "train.yaml"
    cfg.write_text("data:\n  num_workers: ${oc.env:WORKERS}\n  prefetch_factor: 2\n"
                   "  persistent_workers: true\n  timeout: $DL_TIMEOUT\n")
    job = Job(tmp_path, configs=[str(cfg)], torch_version=INSTALLED, env={})
    result = run_one(get("dataloader-option-conflict"), job)
    assert result.status is Status.PASS
    notes = job.facts_gathered()["dataloader_unchecked"]
    assert any("train.yaml:2: num_workers" in n for n in notes)
    assert any("train.yaml:5: timeout" in n for n in notes)


def test_dataloader_timeout_is_seconds_per_batch():
    """The unit the pg-timeout rule compares: DataLoader(timeout=1) gives up after ~1 s."""

    class Slow(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            time.sleep(3)
            return i

    loader = DataLoader(Slow(), num_workers=1, timeout=1, multiprocessing_context="fork")
    it = iter(loader)
    t0 = time.monotonic()
    with pytest.raises(RuntimeError, match="timed out after 1 seconds"):
        next(it)
    assert time.monotonic() - t0 < 2.9
    it._shutdown_workers()


# ---- torch 1.x: cannot be installed here, so a transcription of its source ----
def torch_1_13_rejects(kw: dict) -> bool:
    """torch 1.13 DataLoader.__init__ (torch/utils/data/dataloader.py), the checks in order:

        if num_workers < 0: raise ValueError(...)
        if timeout < 0: raise ValueError(...)
        if num_workers == 0 and prefetch_factor != 2: raise ValueError(...)
        assert prefetch_factor > 0
        if persistent_workers and num_workers == 0: raise ValueError(...)
    then the multiprocessing_context setter (same as 2.x) and, at the first batch,
    _SingleProcessDataLoaderIter's `assert self._timeout == 0`.
    """
    nw, t = kw.get("num_workers", 0), kw.get("timeout", 0)
    pf, pw = kw.get("prefetch_factor", 2), kw.get("persistent_workers", False)
    ctx = kw.get("multiprocessing_context")
    try:
        if nw < 0 or t < 0:
            return True
        if nw == 0 and pf != 2:
            return True
        if not pf > 0:          # TypeError for None, AssertionError for <= 0
            return True
    except TypeError:
        return True
    if pw and nw == 0:
        return True
    if ctx is not None and (nw == 0 or ctx not in ("fork", "spawn", "forkserver")):
        return True
    return nw == 0 and t > 0


@settings(max_examples=300, deadline=None)
@given(num_workers=value([-1, 0, 1, 2]), prefetch_factor=value([None, -1, 0, 1, 2, 4]),
       persistent_workers=value([False, True]), timeout=value([-1, 0, 0.5, 5]),
       multiprocessing_context=value([None, "fork", "spawn", "forkserver", "bogus"]),
       minor=st.sampled_from(["1.7.1", "1.10.2", "1.13.1"]))
def test_torch_1x_rules_agree_with_the_1_13_source(minor, **options):
    kwargs = {k: v for k, v in options.items() if v is not ABSENT}
    mapping = load_yaml_text_from(kwargs)
    spec = LoaderSpec(ConfigFile(Path("t.yaml"), "t.yaml", mapping), ("data",), mapping)
    assert bool(conflicts(spec, parse_version(minor))) == torch_1_13_rejects(kwargs), kwargs


def load_yaml_text_from(kwargs: dict):
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "t.yaml"
        p.write_text(yaml.safe_dump(kwargs))
        return load_yaml_text(p) or {}


def test_prefetch_2_without_workers_portability():
    """The 2.0 break: legal on 1.x, an error on 2.x — and leaving it out is fine on both."""
    assert doctor_verdict(dict(num_workers=0, prefetch_factor=2), "1.13.1")["status"] == "pass"
    assert doctor_verdict(dict(num_workers=0, prefetch_factor=2), "2.0.0")["status"] == "fail"
    for v in ("1.13.1", "2.0.0", INSTALLED):
        assert doctor_verdict(dict(num_workers=0), v)["status"] == "pass"
    assert torch_verdict(dict(num_workers=0, prefetch_factor=2)) == "ctor:ValueError"
