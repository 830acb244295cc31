"""The seeds' own forms, read from the job's code and scripts (issue 26, deliverable 8).

Each case is a small git repo with a job script, run through the real CLI. The
DataLoader cases are also run with the real torch (`torch_raises`): a case the doctor
flags must make DataLoader raise with those values, a case it passes must not.
Values the doctor follows: `self.x = cfg[...]` in `__init__`, argparse defaults and
the job's command line over them, module constants, literal `**` dicts,
`get_context("spawn")`, env variables the job exports.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import git_repo, ROOT, result_of, run_json, validate_report

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader  # noqa: E402

SBATCH = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=1\n"



def run_check(repo: Path, check: str, *extra: str) -> tuple:
    code, doc = run_json("--static", "--only", check, "--repo", str(repo),
                         "--sbatch", str(repo / "job.sbatch"), *extra)
    return code, result_of(doc, check), doc


def torch_raises(**kwargs) -> bool:
    """Whether the real DataLoader rejects these options (the oracle)."""
    try:
        DataLoader(list(range(4)), batch_size=2, **kwargs)
    except (ValueError, TypeError):
        return True
    return False


# ---- seed 000: the TopoFlow datamodule ---------------------------------------------------
DATAMODULE = '''from torch.utils.data import DataLoader


class DataModule:
    def __init__(self, config, dataset):
        self.data_config = config["data"]
        self.batch_size = config["train"]["batch_size"]
        self.num_workers = config["train"]["num_workers"]
        self.train_dataset = dataset

    def train_dataloader(self):
        loader_kwargs = {
            'batch_size': self.batch_size,
            'shuffle': True,
            'num_workers': self.num_workers,
            'pin_memory': True,
            'persistent_workers': False,
            'drop_last': True,
%s        }
%s
        return DataLoader(self.train_dataset, **loader_kwargs)
'''
BROKEN = ("            'prefetch_factor': self.data_config.get('prefetch_factor', 2),\n", "")
FIXED = ("", """
        # Only add multiprocessing params when using workers
        if self.num_workers > 0:
            loader_kwargs['multiprocessing_context'] = "spawn"
            loader_kwargs['prefetch_factor'] = self.data_config.get('prefetch_factor', 2)
""")
TRAIN_YAML = '''import argparse

import yaml

from src.datamodule import DataModule


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="configs/config.yaml")
    args = p.parse_args()
    with open(args.config) as f:
        config = yaml.safe_load(f)
    for _ in DataModule(config, list(range(8))).train_dataloader():
        pass


if __name__ == "__main__":
    main()
'''


def _topoflow(tmp: Path, form: tuple, workers: int) -> Path:
    return git_repo(tmp, {
        "src/__init__.py": "", "src/datamodule.py": DATAMODULE % form, "train.py": TRAIN_YAML,
        "configs/config.yaml": f"train:\n  batch_size: 2\n  num_workers: {workers}\n"
                               "data:\n  prefetch_factor: 2\n",
        "job.sbatch": SBATCH + "srun python train.py --config configs/config.yaml\n"})


def test_seed000_unconditional_prefetch_with_self_num_workers_from_the_config(tmp_path):
    assert torch_raises(num_workers=0, prefetch_factor=2)
    code, res, _ = run_check(_topoflow(tmp_path, BROKEN, 0), "dataloader-option-conflict")
    f = next(f for f in res["findings"] if f["location"]["path"] == "src/datamodule.py")
    assert f["data"]["rule"] == "prefetch-without-workers"
    assert f["location"]["line"] == 19   # the prefetch_factor line of the dict literal
    # the link the doctor cannot prove (is `config` that YAML?) makes it a warning, named
    assert f["severity"] == "warning"
    assert "self.num_workers = config['train']['num_workers'] is 0 from " \
           "configs/config.yaml:3 (train.num_workers), if `config` holds that config" \
           in f["message"]
    # the config's own prefetch_factor is judged where the code passes it, once
    assert not [f for f in res["findings"] if f["location"]["path"] == "configs/config.yaml"]


def test_seed000_fixed_datamodule_passes_with_prefetch_in_a_mapping_without_workers(tmp_path):
    assert not torch_raises(num_workers=0)   # neither key is passed without workers
    code, res, doc = run_check(_topoflow(tmp_path, FIXED, 0), "dataloader-option-conflict")
    assert res["status"] == "pass" and code == 0, res
    assert any("never pass prefetch_factor unchanged" in n
               for n in doc["facts"]["dataloader_unchecked"])


def test_seed000_broken_datamodule_with_workers_passes(tmp_path):
    assert not torch_raises(num_workers=2, prefetch_factor=2)
    code, res, _ = run_check(_topoflow(tmp_path, BROKEN, 2), "dataloader-option-conflict")
    assert res["status"] == "pass" and code == 0, res


# ---- argparse defaults and the job's command line -------------------------------------
ARGPARSE = '''import argparse
import multiprocessing as mp

from torch.utils.data import DataLoader


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_workers", type=int, default=0)
    args = parser.parse_args()
    loader = DataLoader(list(range(8)), batch_size=2, num_workers=args.num_workers,
                        %s)
    return loader


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("passed,opts,kwargs,rule", [
    ("", "prefetch_factor=4", {"prefetch_factor": 4}, "prefetch-without-workers"),
    ("", 'multiprocessing_context=mp.get_context("spawn")',
     {"multiprocessing_context": mp.get_context("spawn")}, "context-without-workers"),
    ("", '**{"persistent_workers": True}', {"persistent_workers": True},
     "persistent-without-workers"),
])
def test_argparse_default_zero_workers_is_an_error(tmp_path, passed, opts, kwargs, rule):
    assert torch_raises(num_workers=0, **kwargs)
    repo = git_repo(tmp_path, {"train.py": ARGPARSE % opts,
                                "job.sbatch": SBATCH + "srun python train.py\n"})
    code, res, _ = run_check(repo, "dataloader-option-conflict")
    assert code == 1 and res["severity"] == "error", res
    f = res["findings"][0]
    assert f["data"]["rule"] == rule and f["location"]["path"] == "train.py"
    assert f["data"]["from"]["num_workers"]["kind"] == "argv"


def test_the_jobs_command_line_overrides_the_argparse_default(tmp_path):
    assert not torch_raises(num_workers=4, prefetch_factor=4,
                            multiprocessing_context=mp.get_context("spawn"))
    for opts in ("prefetch_factor=4", 'multiprocessing_context=mp.get_context("spawn")'):
        repo = git_repo(tmp_path / str(len(opts)), {
            "train.py": ARGPARSE % opts,
            "job.sbatch": SBATCH + "srun python train.py --num_workers 4\n"})
        code, res, _ = run_check(repo, "dataloader-option-conflict")
        assert res["status"] == "pass" and code == 0, res


def test_an_unresolved_command_line_makes_the_default_a_warning_naming_it(tmp_path):
    repo = git_repo(tmp_path, {"train.py": ARGPARSE % "prefetch_factor=4",
                                "job.sbatch": SBATCH + "srun python train.py $EXTRA\n"})
    code, res, _ = run_check(repo, "dataloader-option-conflict")
    assert code == 0 and res["severity"] == "warning", res
    assert "the job's command line passes $EXTRA, which may set it" in \
        res["findings"][0]["message"]


SELF_KWARGS = '''from torch.utils.data import DataLoader

LOADER_KWARGS = {"num_workers": 0, "persistent_workers": True}


class Data:
    def __init__(self, workers):
        self.loader_kwargs = {"num_workers": 0, "prefetch_factor": 2}

    def train(self, ds):
        return DataLoader(ds, batch_size=2, **self.loader_kwargs)

    def val(self, ds):
        return DataLoader(ds, batch_size=2, **LOADER_KWARGS)
'''


def test_literal_kwargs_dicts_in_init_and_at_module_level(tmp_path):
    assert torch_raises(num_workers=0, prefetch_factor=2)
    assert torch_raises(num_workers=0, persistent_workers=True)
    repo = git_repo(tmp_path, {"data.py": SELF_KWARGS,
                                "job.sbatch": SBATCH + "srun python data.py\n"})
    code, res, _ = run_check(repo, "dataloader-option-conflict")
    assert code == 1, res
    got = {(f["data"]["rule"], f["data"]["code"]["line"], f["severity"]) for f in res["findings"]}
    assert got == {("prefetch-without-workers", 11, "error"),
                   ("persistent-without-workers", 14, "error")}
    # a dict changed after __init__ is no longer one plain value: not judged
    setter = "    def set(self, n):\n        self.loader_kwargs['num_workers'] = n\n\n"
    changed = SELF_KWARGS.replace("    def train(self, ds):\n",
                                  setter + "    def train(self, ds):\n")
    repo = git_repo(tmp_path / "changed", {"data.py": changed,
                                            "job.sbatch": SBATCH + "srun python data.py\n"})
    code, res, doc = run_check(repo, "dataloader-option-conflict")
    assert {f["data"]["rule"] for f in res["findings"]} == {"persistent-without-workers"}


# ---- seed 004: MU-Diff's workers from the environment, no YAML config ------------------
MUDIFF = """import os

from torch.utils.data import DataLoader


def train(dataset):
    tw = int(os.environ.get("MU_TRAIN_WORKERS", "8"))
    timeout_s = int(os.environ.get("MU_DL_TIMEOUT", "600"))
    return DataLoader(dataset, batch_size=2, num_workers=tw, timeout=timeout_s,
                      pin_memory=True)
"""


def run_live(repo: Path, check: str, prelude: str) -> dict:
    """`bash -c '<prelude>; doctor run --only CHECK'` on this node (its live limits)."""
    cmd = (f"{prelude}; exec {shlex.quote(sys.executable)} -m doctor run --only {check} "
           f"--format json --repo {shlex.quote(str(repo))} --sbatch job.sbatch")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for k in ("SLURM_JOB_ID", "MU_TRAIN_WORKERS"):
        env.pop(k, None)
    proc = subprocess.run(["bash", "-c", cmd], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.stdout, proc.stderr
    return result_of(validate_report(json.loads(proc.stdout)), check)


@pytest.mark.parametrize("script,severity", [
    ("srun python train.py\n", "warning"),                       # the code's default 8
    ("export MU_TRAIN_WORKERS=16\nsrun python train.py\n", "error"),  # the job's value
])
def test_seed004_fd_limit_reads_workers_from_the_code(tmp_path, script, severity):
    repo = git_repo(tmp_path, {"engine/train.py": MUDIFF,
                                "job.sbatch": SBATCH + script.replace("train.py",
                                                                      "engine/train.py")})
    res = run_live(repo, "fd-limit-too-low", "ulimit -n 512")
    assert res["status"] == "fail" and res["severity"] == severity, res
    f = res["findings"][0]
    assert f["location"] == {"path": "engine/train.py", "line": 9}
    assert f["data"]["code"] == {"file": "engine/train.py", "line": 9}
    if severity == "warning":
        assert f["data"]["num_workers"] == 8
        assert "the default of MU_TRAIN_WORKERS" in f["message"]
    else:
        assert f["data"]["num_workers"] == 16 and "not shown" not in f["message"]


def test_seed004_fix_four_workers_fit_and_file_system_sharing_passes(tmp_path):
    repo = git_repo(tmp_path, {"engine/train.py": MUDIFF.replace('"8"', '"4"'),
                                "job.sbatch": SBATCH + "srun python engine/train.py\n"})
    assert run_live(repo, "fd-limit-too-low", "ulimit -n 1024")["status"] == "pass"
    shared = MUDIFF.replace("import os\n", "import os\n\nimport torch.multiprocessing\n\n"
                            'torch.multiprocessing.set_sharing_strategy("file_system")\n')
    repo = git_repo(tmp_path / "fs", {"engine/train.py": shared,
                                       "job.sbatch": SBATCH + "srun python engine/train.py\n"})
    assert run_live(repo, "fd-limit-too-low", "ulimit -n 512")["status"] == "pass"


def test_seed004_shm_counts_the_codes_workers(tmp_path):
    repo = git_repo(tmp_path, {
        "engine/train.py": MUDIFF,
        "doctor.yaml": "options: {shm-too-small: {batch_mib: 100000000}}\n",
        "job.sbatch": SBATCH + "export MU_TRAIN_WORKERS=16\nsrun python engine/train.py\n"})
    res = run_live(repo, "shm-too-small", "true")
    if res["status"] == "skip":
        pytest.skip(res["reason"])
    f = next(f for f in res["findings"] if "in-flight batches" in f["message"])
    assert f["location"] == {"path": "engine/train.py", "line": 9}
    assert "x 32 in-flight batches" in f["message"]   # 16 workers x prefetch 2


# ---- seed 002: autocast's device type on LUMI (ROCm torch uses "cuda") -------------------
AMP = """import torch

%s


def step(model, x):
    with torch.autocast(AMP_DEVICE, dtype=torch.bfloat16):
        return model(x)
"""


@pytest.mark.parametrize("binding,severity,line", [
    ('AMP_DEVICE = "hip"', "error", 3),
    ('AMP_DEVICE = "hip" if torch.version.hip else "cuda"', "warning", 3),
    ('AMP_DEVICE = "cuda"', None, None),
    ('AMP_DEVICE = "cuda" if torch.cuda.is_available() else "cpu"', None, None),
])
def test_seed002_autocast_device_through_a_module_constant(tmp_path, binding, severity, line):
    repo = git_repo(tmp_path, {"train.py": AMP % binding,
                                "job.sbatch": SBATCH + "srun python train.py\n"})
    code, res, _ = run_check(repo, "torch-api-mismatch", "--torch-version", "2.4")
    if severity is None:
        assert res["status"] == "pass" and code == 0, res
        return
    assert res["severity"] == severity and code == (1 if severity == "error" else 0), res
    (f,) = res["findings"]
    assert f["location"] == {"path": "train.py", "line": line}
    assert f["data"]["device_type"] == "hip" and f["data"]["through"].startswith("AMP_DEVICE")
    assert f["message"].startswith("train.py:7 torch.autocast(AMP_DEVICE")
    if severity == "warning":
        assert "when torch.version.hip is true" in f["message"]


def test_a_rebound_device_name_is_not_followed(tmp_path):
    src = AMP % 'AMP_DEVICE = "hip"' + "\n\ndef cpu():\n    global AMP_DEVICE\n" \
                                       "    AMP_DEVICE = 'cpu'\n"
    repo = git_repo(tmp_path, {"train.py": src, "job.sbatch": SBATCH + "srun python train.py\n"})
    code, res, _ = run_check(repo, "torch-api-mismatch", "--torch-version", "2.4")
    assert res["status"] == "pass", res


# ---- seed 003: torch.compile turned off in the config ------------------------------------
COMPILE = """import argparse

import torch
import yaml
from torch.utils.data import DataLoader


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--config", default="configs/train.yaml")
    p.add_argument("--compile", action="store_true")
    args = p.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    model = torch.nn.Linear(2, 2)
    compile_mode = cfg["training"]["compile"]
    if %s:
        model = torch.compile(model)
    loader = DataLoader(list(range(8)), batch_size=2, num_workers=4)
    return model, loader
"""


@pytest.mark.parametrize("test,mode,args,compiled", [
    ('compile_mode not in ("none", "false", False, None)', "none", "", False),
    ('compile_mode not in ("none", "false", False, None)', "reduce-overhead", "", True),
    ("compile_mode != 'none' and args.compile", "reduce-overhead", "", False),
    ("compile_mode != 'none' and args.compile", "reduce-overhead", " --compile", True),
])
def test_seed003_compile_under_a_condition_the_config_decides(tmp_path, test, mode, args,
                                                               compiled):
    repo = git_repo(tmp_path, {
        "train.py": COMPILE % test,
        "configs/train.yaml": f'training:\n  compile: "{mode}"\n',
        "job.sbatch": SBATCH + f"srun python train.py --config configs/train.yaml{args}\n"})
    code, res, _ = run_check(repo, "torch-compile-risk")
    if not compiled:   # the config may still say compile (a pass), the code never runs it
        assert res["status"] in ("skip", "pass") and code == 0, res
        return
    # the fork rule next to a compile the config turns on: a warning naming the condition
    assert res["status"] == "fail" and res["severity"] == "warning", res
    f = next(f for f in res["findings"] if f["data"].get("code") == "train.py")
    assert f["data"]["rule"] == "fork-workers" and f["location"]["line"] == 19


# ---- seed 001: a latent cache named through ${oc.env:...} or on the command line -------
MAKE_CUDA_CACHE = r'''
import sys, torch
torch.serialization.register_package(1, lambda obj: "cuda:0", lambda obj, loc: obj)
torch.save({"z": torch.ones(4)}, sys.argv[1] + "/0000.pt")
'''


@pytest.fixture(scope="module")
def latents(tmp_path_factory) -> Path:
    cache = tmp_path_factory.mktemp("latents")
    subprocess.run([sys.executable, "-c", MAKE_CUDA_CACHE, str(cache)], check=True,
                   timeout=120)
    return cache


@pytest.mark.parametrize("config,script", [
    ("data:\n  latent_cache_dir: ${oc.env:LATENT_CACHE,/nonexistent/latents}\n",
     "export LATENT_CACHE={cache}\nsrun python train.py --config configs/train.yaml\n"),
    ("data:\n  latent_cache_dir: ${oc.env:LATENT_CACHE,{cache}}\n",
     "srun python train.py --config configs/train.yaml\n"),
    ("data:\n  batch_size: 2\n",
     "CACHE={cache}\nsrun python train.py --config configs/train.yaml "
     "--latent-cache-dir $CACHE\n"),
])
def test_seed001_cache_paths_from_oc_env_and_the_command_line(tmp_path, latents, config,
                                                              script):
    cache = latents
    repo = git_repo(tmp_path / "repo", {
        "train.py": "print('train')\n",
        "configs/train.yaml": config.replace("{cache}", str(cache)),
        "job.sbatch": SBATCH + script.replace("{cache}", str(cache))})
    code, doc = run_json("--no-smoke", "--only", "cuda-tensor-in-shared-cache", "--repo",
                         str(repo), "--sbatch", str(repo / "job.sbatch"))
    res = result_of(doc, "cuda-tensor-in-shared-cache")
    assert code == 1 and res["status"] == "fail", res
    assert res["findings"][0]["data"]["devices"] == ["cuda:0"]
    assert doc["facts"]["cache_scan"]["roots"] == [str(cache)]


@pytest.mark.parametrize("case,severity", [
    ("fail_code_compile_condition_from_config", "warning"),   # decided through a config key
    ("fail_code_compile_condition_from_argv", "error"),       # by the job's command line
])
def test_compile_decided_through_a_config_key_stays_a_warning(tmp_path, case, severity):
    """On a node with a CUDA torch and no triton (the fixture's facts)."""
    from harness import run_case
    res, _ = run_case("torch-compile-risk", ROOT / "fixtures" / "torch-compile-risk" / case,
                      tmp_path)
    (f,) = [f for f in res["findings"] if f["data"]["rule"] == "triton-missing"]
    assert f["severity"] == severity and f["location"] == {"path": "train.py", "line": 18}


def test_a_cpu_torch_here_says_nothing_about_the_gpu_jobs_triton(tmp_path):
    """The unseen-repo run: a login node's CPU torch has no triton; the job's CUDA torch
    brings its own. This machine's torch is a CPU build."""
    if torch.version.cuda or torch.version.hip:
        pytest.skip("this machine's torch is a GPU build")
    repo = git_repo(tmp_path, {
        "train.py": "import torch\n\nmodel = torch.compile(torch.nn.Linear(2, 2))\n",
        "job.sbatch": SBATCH + "#SBATCH --gpus-per-node=4\nsrun python train.py\n"})
    code, doc = run_json("--no-smoke", "--only", "torch-compile-risk", "--repo", str(repo),
                         "--sbatch", str(repo / "job.sbatch"))
    res = result_of(doc, "torch-compile-risk")
    assert res["status"] == "pass" and code == 0, res
    assert "CPU build" in doc["facts"]["torch_compile_unchecked"]


HELPER = """import os

from torch.utils.data import DataLoader


def loader_workers():
    return int(os.environ.get("MU_TRAIN_WORKERS", "0"))


def depends(n):
    return n


def build(ds):
    a = DataLoader(ds, batch_size=2, num_workers=loader_workers(), prefetch_factor=2)
    b = DataLoader(ds, batch_size=2, num_workers=depends(0), prefetch_factor=2)
    return a, b
"""


def test_one_level_of_a_repo_helper_is_followed(tmp_path):
    assert torch_raises(num_workers=0, prefetch_factor=2)
    repo = git_repo(tmp_path, {
        "train.py": HELPER,
        "job.sbatch": SBATCH + "export MU_TRAIN_WORKERS=0\nsrun python train.py\n"})
    code, res, doc = run_check(repo, "dataloader-option-conflict")
    assert code == 1, res
    (f,) = res["findings"]   # the helper's parameter is not guessed: depends(0) is noted
    assert f["data"]["code"]["line"] == 15 and f["severity"] == "error"
    assert f["data"]["from"]["num_workers"]["text"].startswith("loader_workers() returns")
    assert any("a parameter of depends()" in n for n in doc["facts"]["dataloader_unchecked"])
    # with workers exported, the same call passes
    repo = git_repo(tmp_path / "w", {
        "train.py": HELPER,
        "job.sbatch": SBATCH + "export MU_TRAIN_WORKERS=2\nsrun python train.py\n"})
    code, res, _ = run_check(repo, "dataloader-option-conflict")
    assert res["status"] == "pass" and code == 0, res


ARGS_PARAM = """import argparse

from torch.utils.data import DataLoader


def make(ds, %s):
    return DataLoader(ds, batch_size=2, num_workers=%s.num_workers, prefetch_factor=2)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--num_workers", type=int, default=0)
    make([1, 2], parser.parse_args())
"""


@pytest.mark.parametrize("name,found", [("args", True), ("model", False)])
def test_an_args_parameter_is_the_command_line_only_as_a_named_link(tmp_path, name, found):
    repo = git_repo(tmp_path, {"train.py": ARGS_PARAM % (name, name),
                                "job.sbatch": SBATCH + "srun python train.py\n"})
    code, res, _ = run_check(repo, "dataloader-option-conflict")
    if not found:   # `model.num_workers` is no command line: not checked, not guessed
        assert res["status"] == "pass" and code == 0, res
        return
    assert code == 0 and res["severity"] == "warning", res
    assert "if `args` is the parsed command line" in res["findings"][0]["message"]


@pytest.mark.parametrize("script,severity", [
    ("export NUM_WORKERS=16\nsrun python train.py --config configs/train.yaml\n", "error"),
    # unset: the default is not guessed (fixtures/fd-limit-too-low/skip-workers-unresolved)
    ("srun python train.py --config configs/train.yaml\n", None),
])
def test_fd_limit_reads_oc_env_workers_through_the_jobs_export(tmp_path, script, severity):
    repo = git_repo(tmp_path, {
        "train.py": "print('train')\n",
        "configs/train.yaml": "data:\n  batch_size: 2\n  num_workers: ${oc.env:NUM_WORKERS,8}\n",
        "job.sbatch": SBATCH + script})
    res = run_live(repo, "fd-limit-too-low", "ulimit -n 512")
    if severity is None:
        assert res["status"] == "skip" and "configs/train.yaml:3" in res["reason"], res
        return
    assert res["status"] == "fail" and res["severity"] == severity, res
    f = res["findings"][0]
    assert f["location"] == {"path": "configs/train.yaml", "line": 3}
    assert f["data"]["num_workers"] == 16


def test_a_compile_is_paired_with_loaders_only_where_one_job_runs_both(tmp_path):
    """DeepSpeedExamples: every compile x every loader of the repo, from unrelated files."""
    files = {"bench/run.py": "import torch\n\nm = torch.compile(torch.nn.Linear(2, 2))\n",
             "tutorial/cifar.py": "from torch.utils.data import DataLoader\n\n"
                                  "dl = DataLoader([1, 2], num_workers=2)\n"}
    repo = git_repo(tmp_path / "repo", files)
    code, doc = run_json("--static", "--only", "torch-compile-risk", "--repo", str(repo))
    res = result_of(doc, "torch-compile-risk")
    assert res["status"] == "pass", res
    # a job that runs both (the entry imports the loader's module): paired
    files["train.py"] = "import bench.run\nimport tutorial.cifar\n"
    files["job.sbatch"] = SBATCH + "srun python train.py\n"
    repo = git_repo(tmp_path / "job", files)
    code, res, _ = run_check(repo, "torch-compile-risk")
    (f,) = res["findings"]
    assert f["data"]["rule"] == "fork-workers" and f["location"]["path"] == "tutorial/cifar.py"


# ---- a DataLoader subclass from another library (MONAI) -----------------------------------
MONAI = '''from monai.data import DataLoader, Dataset

def loader(items):
    return DataLoader(Dataset(items), %s)
'''


@pytest.mark.parametrize("args,severity", [
    ("batch_size=2, prefetch_factor=4", "error"),        # num_workers: MONAI's default, 0
    ("num_workers=0, pin_memory=True, persistent_workers=True", "error"),
    ("4, prefetch_factor=4", None),   # MONAI's second parameter is num_workers: not read
    ("batch_size=2, num_workers=4, prefetch_factor=4", None),
])
def test_monai_dataloader_is_judged_by_torchs_rules(tmp_path, args, severity):
    """monai.data.DataLoader subclasses torch's and passes its keywords through, so
    torch's __init__ rejects the same options; its positional order is its own."""
    repo = git_repo(tmp_path, {"data.py": MONAI % args,
                                "job.sbatch": SBATCH + "srun python data.py\n"})
    code, res, _ = run_check(repo, "dataloader-option-conflict")
    if severity is None:
        assert res["status"] != "fail" or all(f.get("severity") != "error"
                                              for f in res["findings"]), res
        return
    assert torch_raises(num_workers=0, **({"prefetch_factor": 4} if "prefetch" in args
                                          else {"persistent_workers": True}))
    assert code == 1 and res["status"] == "fail", res
    f = res["findings"][0]
    assert f.get("severity", res["severity"]) == severity
    assert (f["location"]["path"], f["location"]["line"]) == ("data.py", 4)
