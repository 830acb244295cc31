"""Command-line overrides and Hydra composition, proven against the real Hydra and jsonargparse.

The oracles run the real tools on generated overrides and compare the config
they produce with doctor.job.overrides' model of it. Where the tool refuses
the overrides (the job would stop), the model must say so in its notes.
"""
from __future__ import annotations

import copy
import textwrap
import warnings
from pathlib import Path
from typing import List, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from doctor.job.configs import LineDict, load_yaml_text
from doctor.job.hydra import compose
from doctor.job.overrides import (ConfigArg, Override, Unknown, apply_cli, apply_overrides,
                                  hydra_value, named_configs, parse_overrides)

hydra = pytest.importorskip("hydra")
jsonargparse = pytest.importorskip("jsonargparse")
from hydra import compose as hydra_compose  # noqa: E402
from hydra import initialize_config_dir  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

ORACLE = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture])

HYDRA_FILES = {
    "train.yaml": """\
        defaults:
          - model: small
          - db@backup: a
          - optional absent: x
          - _self_
          - experiment: null
        trainer: {devices: 2, max_epochs: 1, lst: [1, 2], callbacks: null}
        data:
          num_workers: 4
          prefetch_factor: 2
          loader: {pin_memory: true}
        name: run
        model: {depth: 5}
        """,
    "model/small.yaml": "width: 10\ndepth: 2\n",
    "model/big.yaml": "defaults:\n  - sub: s1\n  - _self_\nwidth: 100\n",
    "model/sub/s1.yaml": "k: 1\n",
    "model/sub/s2.yaml": "k: 2\nextra: ???\n",
    "db/c.yaml": "defaults:\n  - /model/sub@sub: s1\n  - _self_\nhost: c\nsub: {k: 3}\n",
    "db/a.yaml": "host: a\nport: 1\n",
    "db/b.yaml": "host: b\n",
    "experiment/e1.yaml": "# @package _global_\ndefaults:\n  - override /model: big\n"
                          "trainer:\n  devices: 8\n",
    "experiment/e2.yaml": "# @package _global_\ndefaults:\n  - override /model/sub: s2\n"
                          "data:\n  num_workers: 16\ntrainer:\n  max_epochs: ???\n",
    "pk/p.yaml": "# @package foo.bar\nv: 1\n",
    "pk/q.yaml": "v: 2\n",
}


def write_tree(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    return root


@pytest.fixture(scope="module")
def conf(tmp_path_factory) -> Path:
    return write_tree(tmp_path_factory.mktemp("conf"), HYDRA_FILES)


def real_hydra(conf: Path, overrides: List[str]) -> Optional[dict]:
    """What Hydra composes, or None when it refuses."""
    try:
        with warnings.catch_warnings(), initialize_config_dir(str(conf), version_base=None):
            warnings.simplefilter("ignore")
            cfg = hydra_compose("train", overrides)
    except Exception:  # noqa: BLE001 - any refusal: the job would not start
        return None
    out = OmegaConf.to_container(cfg, resolve=False)
    assert isinstance(out, dict)
    return out


# --- the Hydra oracle ------------------------------------------------------------------------

KEYS = ["trainer.devices", "trainer.max_epochs", "trainer.lst", "trainer.lst.0",
        "trainer.callbacks", "data.num_workers", "data.prefetch_factor", "data.loader",
        "data.loader.pin_memory",
        "model.width", "backup.host", "name", "new", "trainer.new", "data.loader.new.deep"]
VALUES = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.sampled_from(["1.5", "-.25", "1e3", "1_000", "007", "0x10", "true", "False", "null", "NULL",
                     "inf", "abc", "a-b_c", "'quoted, text'", '"2"', "a b", "${data.num_workers}",
                     "${oc.env:HOME}", "a\\,b", "", "[]", "[1,2]", "[a, [1, 'b']]", "{}",
                     "{pin_memory: false}", "{x: 1, y: [2]}", "1,2", "range(3)", "x:y",
                     "/path/to/file.txt", "1.0.0", "???"]),
    st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True))
VALUE_OVERRIDE = st.builds(lambda op, key, value: f"{op}{key}={value}",
                           st.sampled_from(["", "", "+", "++"]), st.sampled_from(KEYS), VALUES)
DELETE = st.builds(lambda key, value: f"~{key}" + (f"={value}" if value else ""),
                   st.sampled_from(KEYS), st.sampled_from(["", "4", "2", "10", "true"]))
GROUP = st.sampled_from(["model=big", "model=small", "model=nope", "experiment=e1",
                         "experiment=e2", "+experiment=e1", "db@backup=b", "~db@backup",
                         "~model", "model=[small,big]", "+pk=p", "+pk=q", "+pk@other=q",
                         "model/sub=s2", "++model=big", "model=null", "db@backup=c"])


@ORACLE
@given(st.lists(st.one_of(VALUE_OVERRIDE, DELETE, GROUP, GROUP), max_size=4))
def test_compose_equals_real_hydra(conf, overrides):
    expected = real_hydra(conf, overrides)
    got = compose(conf, "train", parse_overrides(overrides).overrides)
    if expected is None:
        assert got.notes, f"Hydra refuses {overrides}, the model did not say so"
    else:
        assert got.data == expected
        assert not got.notes


@pytest.mark.parametrize("overrides", [
    [], ["experiment=e1"], ["experiment=e2", "model=big"], ["+pk=p", "trainer.lst=[3]"],
    ["model=[small,big]", "~data.loader"], ["++trainer.new={a: 1}", "+data.x=${trainer.devices}"],
    ["db@backup=c", "+pk=p"], ["+pk=p", "+pk=p"], ["+experiment=e1"], ["model=nope"],
])
def test_compose_hand_picked_cases(conf, overrides):
    expected = real_hydra(conf, overrides)
    got = compose(conf, "train", parse_overrides(overrides).overrides)
    assert got.data == expected if expected is not None else got.notes


def test_experiment_overrides_the_model_it_follows(conf):
    got = compose(conf, "train", parse_overrides(["experiment=e1"]).overrides)
    assert got.data["model"] == {"width": 100, "sub": {"k": 1}, "depth": 5}
    assert got.data["trainer"]["devices"] == 8
    assert [p.relative_to(conf).as_posix() for p in got.files] == [
        "model/sub/s1.yaml", "model/big.yaml", "db/a.yaml", "train.yaml", "experiment/e1.yaml"]


def test_compose_notes_what_it_cannot_follow(tmp_path):
    write_tree(tmp_path, {"main.yaml": "defaults:\n  - opt: missing\n  - env: ${oc.env:X}\n"
                                       "  - _self_\na: 1\n", "opt/here.yaml": "b: 2\n"})
    got = compose(tmp_path, "main", parse_overrides(["a=$UNSET"]).overrides)
    assert any("missing.yaml does not exist" in n for n in got.notes)
    assert any("interpolation" in n for n in got.notes)
    assert got.data == {"a": Unknown("$UNSET is not known here")}


# --- the jsonargparse / LightningCLI oracle --------------------------------------------------

class Trainer:
    def __init__(self, devices: Optional[int] = 1, max_epochs: int = 10,
                 precision: str = "full", fast_dev_run: bool = False) -> None:
        pass


class Data:
    def __init__(self, num_workers: int = 0, prefetch_factor: Optional[int] = None,
                 sizes: List[int] = [1], lr: float = 0.5) -> None:  # noqa: B006
        pass


CLI_FILES = {
    "a.yaml": "trainer:\n  devices: 4\n  precision: half\ndata:\n  num_workers: 8\n",
    "b.yaml": "data:\n  num_workers: 2\n  prefetch_factor: 4\n  sizes: [3, 4]\n",
    "c.yaml": "trainer:\n  max_epochs: 3\n  fast_dev_run: true\ndata:\n  lr: 0.25\n",
}
CLI_OPTIONS = {
    "trainer.devices": st.one_of(st.integers(0, 64).map(str), st.just("null")),
    "trainer.max_epochs": st.integers(-5, 1000).map(str),
    "trainer.precision": st.sampled_from(["bf16", "mixed", "half"]),
    "trainer.fast_dev_run": st.sampled_from(["true", "false", "True"]),
    "data.num_workers": st.integers(0, 128).map(str),
    "data.prefetch_factor": st.one_of(st.integers(1, 8).map(str), st.just("null")),
    "data.sizes": st.lists(st.integers(0, 9), max_size=3).map(
        lambda v: f"[{','.join(map(str, v))}]"),
    "data.lr": st.sampled_from(["0.1", "1e-3", "2.5e2", ".5"]),
}


def cli_parser():
    from jsonargparse import ActionConfigFile, ArgumentParser
    parser = ArgumentParser(exit_on_error=False)
    parser.add_argument("-c", "--config", action=ActionConfigFile)
    parser.add_class_arguments(Trainer, "trainer")
    parser.add_class_arguments(Data, "data")
    return parser


@pytest.fixture(scope="module")
def cli_dir(tmp_path_factory) -> Path:
    return write_tree(tmp_path_factory.mktemp("cli"), CLI_FILES)


def cli_word(draw, key: str) -> List[str]:
    value = draw(CLI_OPTIONS[key])
    return [f"--{key}={value}"] if draw(st.booleans()) else [f"--{key}", value]


@st.composite
def cli_argv(draw, folder: str) -> List[str]:
    argv: List[str] = []
    for _ in range(draw(st.integers(0, 5))):
        if draw(st.integers(0, 3)) == 0:
            argv += [draw(st.sampled_from(["--config", "-c"])),
                     f"{folder}/{draw(st.sampled_from(sorted(CLI_FILES)))}"]
        else:
            argv += cli_word(draw, draw(st.sampled_from(sorted(CLI_OPTIONS))))
    return argv


@ORACLE
@given(data=st.data())
def test_cli_overrides_equal_real_jsonargparse(cli_dir, data):
    argv = data.draw(cli_argv(str(cli_dir)))
    parser = cli_parser()
    expected = parser.parse_args(argv).as_dict()
    expected.pop("config", None)
    defaults = parser.get_defaults().as_dict()
    defaults.pop("config", None)
    got = apply_cli(parse_overrides(argv), defaults, lambda p: load_yaml_text(Path(p)))
    assert got == expected


def test_cli_config_order_matters(cli_dir):
    first = ["--data.num_workers=1", "--config", f"{cli_dir}/a.yaml"]
    last = ["--config", f"{cli_dir}/a.yaml", "--data.num_workers=1"]
    load = lambda p: load_yaml_text(Path(p))  # noqa: E731
    assert apply_cli(parse_overrides(first), None, load)["data"]["num_workers"] == 8
    assert apply_cli(parse_overrides(last), None, load)["data"]["num_workers"] == 1


# --- reading argv --------------------------------------------------------------------------

def test_reads_the_brief_example():
    argv = ["--config", "cfg.yaml", "--data.num_workers=8", "--trainer.devices", "4",
            "trainer.max_epochs=3", "+model.x=1", "~data.prefetch_factor", "experiment=big",
            "-cn", "train", "--config-path", "conf", "extra.yml", "fit", "-c", "job"]
    parsed = parse_overrides(argv)
    assert [(o.key, o.value, o.action, o.tool) for o in parsed.overrides] == [
        ("data.num_workers", 8, "set", "cli"), ("trainer.devices", 4, "set", "cli"),
        ("trainer.max_epochs", 3, "set", "hydra"), ("model.x", 1, "add", "hydra"),
        ("data.prefetch_factor", None, "delete", "hydra"), ("experiment", "big", "set", "hydra")]
    assert [o.raw for o in parsed.overrides][:2] == ["--data.num_workers=8", "--trainer.devices 4"]
    assert parsed.configs == [ConfigArg("cfg.yaml", "--config cfg.yaml"),
                              ConfigArg("extra.yml", "extra.yml")]
    assert (parsed.config_name, parsed.config_path) == ("train", "conf")
    assert parsed.positionals == ["fit"] and parsed.flags == ["-c job"]


def test_hydra_multirun_flag_takes_no_value():
    parsed = parse_overrides(["--multirun", "db=mysql", "--trainer.devices", "-1"])
    assert parsed.flags == ["--multirun"]
    assert [(o.key, o.value) for o in parsed.overrides] == [("db", "mysql"),
                                                             ("trainer.devices", -1)]


@pytest.mark.parametrize("text,value", [
    ("8", 8), ("1_000", 1000), ("007", "007"), ("1e3", 1000.0), ("TRUE", True), ("nUlL", None),
    ("'8'", "8"), ("[1, [2, x]]", [1, [2, "x"]]), ("{a: 1}", {"a": 1}), ("a\\,b", "a,b"),
    ("${x.y}", "${x.y}"), ("", ""),
])
def test_hydra_value_types_like_hydra(text, value):
    from hydra.core.override_parser.overrides_parser import OverridesParser
    assert OverridesParser.create().parse_override(f"k={text}").value() == value
    assert hydra_value(text) == value and type(hydra_value(text)) is type(value)


@pytest.mark.parametrize("text", ["1,2", "range(1,3)", "choice(a,b)", "it's"])
def test_sweeps_and_functions_are_unknown(text):
    assert isinstance(hydra_value(text), Unknown)


# --- shell variables --------------------------------------------------------------------------

ENV = {"SLURM_CPUS_PER_TASK": "8", "EMPTY": "", "NGPU": "4", "RUN": "exp1"}


def test_variables_resolve_then_type():
    parsed = parse_overrides(["--data.num_workers=$SLURM_CPUS_PER_TASK", "trainer.devices=${NGPU}",
                              "name=${RUN}_a", "w=${EMPTY:-3}", "v=${EMPTY-3}", "--config",
                              "cfg/$RUN.yaml"], ENV.get)
    assert [o.value for o in parsed.overrides] == [8, 4, "exp1_a", 3, ""]
    assert parsed.configs[0].path == "cfg/exp1.yaml"


def test_unresolved_variables_are_unknown_never_guessed():
    seen = []

    def resolve(name):
        seen.append(name)
        return None

    argv = ["--data.num_workers=$NOPE", "trainer.devices=${X:-8}", "a=$(nproc)", "b=$1",
            "h=${oc.env:HOME}", "i=${data.num_workers}"]
    values = [o.value for o in parse_overrides(argv, resolve).overrides]
    assert values[:4] == [Unknown("$NOPE is not known here"), Unknown("$X is not known here"),
                          Unknown("`$(` is only known when the script runs"),
                          Unknown("`$1` is only known when the script runs")]
    assert values[4:] == ["${oc.env:HOME}", "${data.num_workers}"]  # Hydra's, not the shell's
    assert seen == ["NOPE", "X"]
    assert isinstance(parse_overrides(["k=$A"]).overrides[0].value, Unknown)  # no resolver


# --- applying: origins and no mutation --------------------------------------------------------

@pytest.fixture
def cfg_file(tmp_path) -> Path:
    p = tmp_path / "cfg.yaml"
    p.write_text("trainer:\n  devices: 2\n  max_epochs: 1\ndata:\n  num_workers: 4\n"
                 "  loader:\n    pin_memory: true\n")
    return p


def test_overridden_keys_remember_where(cfg_file):
    data = load_yaml_text(cfg_file)
    parsed = parse_overrides(["trainer.devices=8", "+data.loader.extra={a: 1}", "~data.num_workers",
                              "--data.prefetch_factor=$X"])
    out = apply_overrides(data, parsed.overrides, origin=("job.sh", 12))
    assert out["trainer"].origin_of("devices") == ("job.sh", 12)
    assert out["trainer"].origin_of("max_epochs") is None
    assert out["trainer"].line_of("devices") == 2  # the file's line is kept
    assert out["data"]["loader"].origin_of("extra") == ("job.sh", 12)
    assert out["data"]["loader"]["extra"].origin_of("a") == ("job.sh", 12)
    assert "num_workers" not in out["data"]
    assert out["data"]["prefetch_factor"] == Unknown("$X is not known here")
    assert out["data"].origin_of("prefetch_factor") == ("job.sh", 12)


def test_refused_overrides_are_notes_not_changes(cfg_file):
    data = load_yaml_text(cfg_file)
    notes: List[str] = []
    argv = ["trainer.nope=1", "+trainer.devices=3", "~data.absent", "~data.num_workers=5"]
    out = apply_overrides(data, parse_overrides(argv).overrides, notes=notes)
    assert out == data
    assert len(notes) == 4 and all(n.startswith("`") for n in notes)


def test_input_is_never_mutated(cfg_file):
    data = load_yaml_text(cfg_file)
    before = copy.deepcopy(data)
    argv = ["trainer.devices=8", "++data.loader={pin_memory: false, x: [1]}", "~trainer.max_epochs",
            "--data.new.deep=1"]
    out = apply_overrides(data, parse_overrides(argv).overrides, origin=("s", 1))
    assert out != data and data == before
    assert data["data"]["loader"].origins == {} and data["trainer"].origins == {}
    assert data["trainer"].key_lines == before["trainer"].key_lines


def test_composed_keys_name_their_file(conf):
    got = compose(conf, "train", parse_overrides(["model=big"]).overrides, origin=("job.sh", 3))
    assert got.data["model"].origin_of("width") == (str(conf / "model/big.yaml"), 4)
    assert got.data["model"]["sub"].origin_of("k") == (str(conf / "model/sub/s1.yaml"), 1)
    assert got.data["trainer"].origin_of("devices") == (str(conf / "train.yaml"), 7)
    assert isinstance(got.data, LineDict)


# --- which config files a step names ----------------------------------------------------------

def test_named_configs_says_which_exist(tmp_path):
    write_tree(tmp_path, {"run/cfg.yaml": "a: 1\n", "src/conf/train.yaml": "b: 1\n",
                          "src/train.py": ""})
    parsed = parse_overrides(["--config", "cfg.yaml", "missing.yaml", "-cn", "train",
                              "-cp", "conf"])
    assert named_configs(parsed, tmp_path / "run", tmp_path, script=tmp_path / "src/train.py") == [
        (tmp_path / "run/cfg.yaml", True), (tmp_path / "run/missing.yaml", False),
        (tmp_path / "src/conf/train.yaml", True)]
    absent = parse_overrides(["-cn", "nothere", "-cp", "conf"])
    assert named_configs(absent, tmp_path, tmp_path, script=tmp_path / "src/train.py") == [
        (tmp_path / "src/conf/nothere.yaml", False)]
    # No directory on the command line: it is set in code, so look in the repo, never say missing.
    assert named_configs(parse_overrides(["-cn", "train"]), tmp_path, tmp_path) == [
        (tmp_path / "src/conf/train.yaml", True)]
    assert named_configs(parse_overrides(["-cn", "nothere"]), tmp_path, tmp_path) == []


def test_override_keeps_raw_text():
    o = parse_overrides(["+db@backup=b"]).overrides[0]
    assert o == Override("+db@backup=b", "db", "b", "add", "hydra", "backup", True)
