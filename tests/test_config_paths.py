"""config-not-found, extended (issue 29): `.yml`, `--yaml`/`--cfg`/`--config-file`-style
options, and arguments a wrapper passes on to python.

The oracle is the program itself: each fixture's job line, run from the job's working
directory with the fixture's own stand-in of the program's config lookup (DataAugmentation's
load_yaml; a wrapper that only execs python), dies with FileNotFoundError where the check
reports the config, and reads it where the check is silent.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, git_repo, result_of, run_doctor, validate_report

CHECK = "config-not-found"
FIXTURES = ROOT / "fixtures" / CHECK
HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --time=00:10:00\n"


def _copy(name: str, tmp: Path) -> Path:
    repo = tmp / name
    shutil.copytree(FIXTURES / name, repo,
                    ignore=shutil.ignore_patterns("case.yaml", "SOURCE.md"))
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    return repo


def _report(repo: Path, *scripts: str) -> dict:
    args = [a for s in scripts for a in ("--sbatch", s)]
    proc = run_doctor("run", "--static", "--only", CHECK, "--repo", str(repo),
                      "--format", "json", *args, cwd=repo)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return result_of(validate_report(json.loads(proc.stdout)), CHECK)


def _program(repo: Path, script: str) -> list:
    """The job line's program (`python train.py --yaml X`), without its launcher."""
    line = next(ln for ln in (repo / script).read_text().splitlines() if "train.py" in ln)
    argv = shlex.split(line)
    return argv[argv.index("python"):] if "python" in argv else argv[1:]


def test_yaml_option_naming_no_file_is_an_error_the_program_confirms(tmp_path):
    """DataAugmentation's `apptainer run … python train.py --yaml NAME.yaml`: the repo's
    load_yaml opens ./utils/yaml/NAME; ADAMW.yaml and BT.yaml are nowhere."""
    repo = _copy("fail_yaml_flag_nowhere", tmp_path)
    scripts = ("scripts/ADAMW.sh", "scripts/BT.sh", "scripts/LARS_AN.sh")
    res = _report(repo, *scripts)
    got = {(f["location"]["path"], f["location"]["line"], f["data"]["config"], f["severity"])
           for f in res["findings"]}
    assert got == {("scripts/ADAMW.sh", 7, "ADAMW.yaml", "error"),
                   ("scripts/BT.sh", 7, "BT.yaml", "error")}, res["findings"]
    for script in scripts:
        argv = _program(repo, script)
        run = subprocess.run([sys.executable, *argv[1:]], cwd=repo, capture_output=True,
                             text=True, timeout=60)
        reported = script != "scripts/LARS_AN.sh"
        assert (run.returncode != 0 and "FileNotFoundError" in run.stderr) == reported, \
            (script, run.returncode, run.stderr[-500:])


def test_config_through_a_wrapper_is_reported_and_the_wrapper_fails_on_it(tmp_path):
    repo = _copy("fail_through_wrapper", tmp_path)
    (f,) = _report(repo, "job.sbatch")["findings"]
    assert f["location"] == {"path": "job.sbatch", "line": 5}, f
    assert f["data"]["config"] == "configs/350m.yml" and f["severity"] == "error"
    assert f["data"]["suggestion"] == "configs/350M.yml" and "configs/350M.yml" in f["fix"]
    argv = shlex.split((repo / "job.sbatch").read_text().splitlines()[4])[1:]   # no srun
    run = subprocess.run(["bash", *argv], cwd=repo, capture_output=True, text=True,
                         timeout=30)
    assert run.returncode != 0 and "FileNotFoundError" in run.stderr, run.stderr[-500:]
    fixed = [a.replace("350m", "350M") for a in argv]   # the file the message names
    ok = subprocess.run(["bash", *fixed], cwd=repo, capture_output=True, text=True,
                        timeout=30)
    assert ok.returncode == 0 and "n_layer: 24" in ok.stdout, ok.stderr[-500:]


TRAIN = "import sys\nprint(sys.argv)\n"


def test_each_option_form_and_yml_positional(tmp_path):
    """`--cfg=X`, `--config-file X`, `--model_config X`, a positional `.yml`, each naming
    a file that is nowhere, in one script; the options that name no file (Hydra's
    `--cfg job`, an existing `--deepspeed_config`, an unresolved `$CFG`) are silent."""
    script = HEAD + (
        "srun python train.py --cfg=configs/small.yml\n"
        "srun python train.py --config-file configs/base.yaml --model_config model.json\n"
        "srun python train.py configs/tiny.yml\n"
        "srun python train.py --cfg job --deepspeed_config ds.json --yaml $CFG\n")
    repo = git_repo(tmp_path / "repo", {"job.sbatch": script, "train.py": TRAIN,
                                        "ds.json": "{}\n", "configs/real.yml": "a: 1\n"})
    res = _report(repo, "job.sbatch")
    got = {(f["location"]["line"], f["data"]["config"]) for f in res["findings"]}
    assert got == {(4, "configs/small.yml"), (5, "configs/base.yaml"), (5, "model.json"),
                   (6, "configs/tiny.yml")}, res["findings"]
    assert all(f["severity"] == "error" for f in res["findings"])


def test_a_yml_config_that_exists_is_silent(tmp_path):
    script = HEAD + "srun python train.py --yaml configs/real.yml\n" \
                    "srun python train.py --cfg real.yml\n"   # (the one file of that name,
    train = "import os, sys\nprint(os.path.join('configs', sys.argv[-1]))\n"   # looked up)
    repo = git_repo(tmp_path / "repo", {"job.sbatch": script, "train.py": train,
                                        "configs/real.yml": "a: 1\n"})
    res = _report(repo, "job.sbatch")
    assert res["status"] == "pass" and not res["findings"], res


def test_a_config_given_to_a_wrapper_that_runs_python_with_its_arguments(tmp_path):
    """`srun launch.sh --cfg configs/y.yaml`, launch.sh running `python train.py "$@"`:
    the config reaches train.py; the finding names both lines and sits on the job's."""
    launch = "#!/bin/bash\nexport OMP_NUM_THREADS=1\npython3 train.py \"$@\"\n"
    train = ("import argparse\np = argparse.ArgumentParser()\np.add_argument('--cfg')\n"
             "open(p.parse_args().cfg).read()\n")
    repo = git_repo(tmp_path / "repo", {
        "job.sbatch": HEAD + "srun launch.sh --cfg configs/y.yaml\n",
        "ok.sbatch": HEAD + "srun launch.sh --cfg configs/x.yaml\n",
        "launch.sh": launch, "train.py": train, "configs/x.yaml": "a: 1\n"})
    (f,) = _report(repo, "job.sbatch")["findings"]
    assert f["location"] == {"path": "job.sbatch", "line": 4} and f["severity"] == "error", f
    assert "launch.sh:3 runs train.py with the config configs/y.yaml (passed to it by " \
           "job.sbatch:4)" in f["message"], f["message"]
    assert _report(repo, "ok.sbatch")["status"] == "pass"
    for name, fails in (("job.sbatch", True), ("ok.sbatch", False)):
        argv = shlex.split((repo / name).read_text().splitlines()[3])[1:]   # no srun
        run = subprocess.run(["bash", *argv], cwd=repo, capture_output=True, text=True,
                             timeout=30)
        assert (run.returncode != 0 and "FileNotFoundError" in run.stderr) == fails, \
            (name, run.stderr[-500:])


def test_doctor_fix_unsafe_names_the_file_the_message_names(tmp_path):
    repo = _copy("fail_through_wrapper", tmp_path)
    proc = run_doctor("fix", "--repo", str(repo), "--select", CHECK, "--write", "--sbatch",
                      "job.sbatch", cwd=repo)
    assert "350m" in (repo / "job.sbatch").read_text(), proc.stdout   # unsafe only
    proc = run_doctor("fix", "--repo", str(repo), "--select", CHECK, "--unsafe", "--write",
                      "--sbatch", "job.sbatch", cwd=repo)
    assert "Traceback" not in proc.stderr, proc.stderr
    line = (repo / "job.sbatch").read_text().splitlines()[4]
    assert line == "srun site_launch.sh train.py --cfg configs/350M.yml", line
    assert _report(repo, "job.sbatch")["status"] == "pass"
    run = subprocess.run(["bash", *shlex.split(line)[1:]], cwd=repo, capture_output=True,
                         text=True, timeout=30)
    assert run.returncode == 0, run.stderr[-500:]


def test_a_bare_name_of_a_file_in_another_directory_is_a_warning_the_program_confirms(
        tmp_path):
    """The issue's job: `srun site_launch.sh run.py train.py 350M.yml`, the file being
    configs/350M.yml. The doctor takes the name for that file; no code of the step names
    configs/, so it warns, and the real wrapper fails. Where train.py joins the name with
    "configs", it is silent and the wrapper reads the file."""
    for name, warns in (("fail_config_in_another_dir", True),
                        ("pass_code_names_config_dir", False)):
        repo = _copy(name, tmp_path)
        res = _report(repo, "job.sbatch")
        if warns:
            (f,) = res["findings"]
            assert f["severity"] == "warning" and f["location"] == \
                {"path": "job.sbatch", "line": 5}, f
            assert "the repo's only file of that name is configs/350M.yml" in f["message"]
            assert "does not name configs/" in f["message"]
        else:
            assert res["status"] == "pass", res
        argv = shlex.split((repo / "job.sbatch").read_text().splitlines()[4])[1:]
        run = subprocess.run(["bash", *argv], cwd=repo, capture_output=True, text=True,
                             timeout=30)
        assert (run.returncode != 0 and "FileNotFoundError" in run.stderr) == warns, \
            (name, run.stderr[-500:])


HYDRA_MAIN = ("import hydra\n\n\n@hydra.main(version_base='1.3', config_path='../configs', "
              "config_name='train.yaml')\ndef main(cfg):\n    print('trained', cfg.data.name)\n\n\n"
              "if __name__ == '__main__':\n    main()\n")


def _hydra_repo(tmp: Path, train_yaml: str, extra: dict | None = None) -> Path:
    return git_repo(tmp / "repo", {
        "job.sbatch": HEAD + "srun python src/train.py trainer=ddp\n",
        "src/train.py": HYDRA_MAIN, "configs/train.yaml": train_yaml,
        "configs/trainer/ddp.yaml": "devices: 4\n", "configs/trainer/default.yaml": "devices: 1\n",
        **(extra or {})})


def test_a_hydra_defaults_entry_whose_config_no_clone_has_is_an_error_hydra_confirms(tmp_path):
    """LiMTR's configs/train.yaml chooses `data: standard`, but `.gitignore`'s bare `data`
    also ignores configs/data/: no clone has it. The real Hydra stops with "Could not find
    'data/standard'"; the finding is at the defaults entry and names the ignore rule."""
    repo = _hydra_repo(tmp_path, "defaults:\n  - _self_\n  - data: standard\n"
                                 "  - trainer: default\n", {".gitignore": "data\n"})
    (f,) = _report(repo, "job.sbatch")["findings"]
    assert f["location"] == {"path": "configs/train.yaml", "line": 3}, f
    assert f["severity"] == "error" and "configs/data/standard.yaml does not exist" in \
        f["message"] and ".gitignore:1 (`data`) ignores it" in f["message"], f["message"]
    run = subprocess.run([sys.executable, "src/train.py", "trainer=ddp"], cwd=repo,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1 and "Could not find 'data/standard'" in run.stderr, run.stderr


def test_hydra_defaults_that_resolve_are_silent(tmp_path):
    """The same defaults with the group present, an `optional` entry without its file, a
    group chosen on the command line, and Hydra's own groups (hydra/job_logging: its
    package's or a plugin's configs) are silent; the real Hydra runs the entry."""
    repo = _hydra_repo(tmp_path, "defaults:\n  - _self_\n  - data: standard\n"
                                 "  - trainer: default\n  - optional local: server\n"
                                 "  - override hydra/job_logging: disabled\n",
                       {"configs/data/standard.yaml": "name: std\n"})
    assert not _report(repo, "job.sbatch")["findings"]
    run = subprocess.run([sys.executable, "src/train.py", "trainer=ddp"], cwd=repo,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "trained std" in run.stdout, run.stderr[-2000:]


def test_a_defaults_entry_the_code_registers_in_the_config_store_is_not_a_file(tmp_path):
    """babylm's `- base_config` is a structured config the entry stores
    (`ConfigStore.instance().store(name="base_config", node=...)`), not a file: silent,
    and the real Hydra composes it. A store call whose name the doctor cannot read makes
    every missing entry unknowable (silent too); a file missing besides a literal store
    name is still an error."""
    store = ("from dataclasses import dataclass\nfrom typing import Any\n\n"
             "from hydra.core.config_store import ConfigStore\n\n\n@dataclass\nclass Base:\n"
             "    seed: int = 1\n    data: Any = None\n    trainer: Any = None\n\n\n"
             "cs = ConfigStore.instance()\ncs.store(name='base_config', node=Base)\n")
    main = store + HYDRA_MAIN.replace("import hydra\n", "import hydra\n", 1)
    yaml_ok = "defaults:\n  - base_config\n  - _self_\n  - data: standard\n  - trainer: default\n"
    repo = _hydra_repo(tmp_path, yaml_ok, {"src/train.py": main,
                                           "configs/data/standard.yaml": "name: std\n"})
    assert not _report(repo, "job.sbatch")["findings"]
    run = subprocess.run([sys.executable, "src/train.py", "trainer=ddp"], cwd=repo,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "trained std" in run.stdout, run.stderr[-2000:]
    (tmp_path / "b").mkdir()
    repo = _hydra_repo(tmp_path / "b", "defaults:\n  - base_config\n  - _self_\n"
                                       "  - data: missing\n", {"src/train.py": main})
    (f,) = _report(repo, "job.sbatch")["findings"]
    assert f["location"] == {"path": "configs/train.yaml", "line": 4}, f
    (tmp_path / "c").mkdir()
    repo = _hydra_repo(tmp_path / "c", "defaults:\n  - base_config\n  - _self_\n"
                                       "  - data: missing\n",
                       {"src/train.py": main.replace("name='base_config'", "name=NAME")})
    assert not _report(repo, "job.sbatch")["findings"]


SEARCH_PATH_PLUGIN = (
    "import os\n\nfrom hydra.core.config_search_path import ConfigSearchPath\n"
    "from hydra.plugins.search_path_plugin import SearchPathPlugin\n\n\n"
    "class SharedConfigs(SearchPathPlugin):\n"
    "    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:\n"
    "        here = os.path.dirname(os.path.abspath(__file__))\n"
    "        search_path.append('shared', 'file://' + os.path.join(here, '..', '..', 'shared'))\n")


FORMS = {
    "searchpath": ("'hydra.searchpath=[file://shared]'", {}),
    "config-dir": ("-cd shared", {}),
    "config-dir-long": ("--config-dir=shared", {}),
    "plugin": ("", {"hydra_plugins/shared_sp/__init__.py": SEARCH_PATH_PLUGIN}),
}


@pytest.mark.parametrize("form", FORMS)
def test_defaults_found_on_a_search_path_the_doctor_does_not_read_are_not_errors(
        tmp_path, form):
    """`data: standard` lives outside configs/, in a directory Hydra adds to its search
    path: a `hydra.searchpath` override on the command line, `-cd`/`--config-dir` (an extra
    directory; the primary config still comes from the code's config_path), or a
    SearchPathPlugin in the repo's hydra_plugins package. The real Hydra composes each;
    the doctor cannot see the whole search path, so no error (a false config-not-found
    was reported in each form)."""
    args, extra = FORMS[form]
    repo = _hydra_repo(tmp_path, "defaults:\n  - _self_\n  - data: standard\n"
                                 "  - trainer: default\n", {
        "job.sbatch": HEAD + f"srun python src/train.py trainer=ddp {args}\n",
        "shared/data/standard.yaml": "name: std\n", **extra})
    res = _report(repo, "job.sbatch")
    assert not [f for f in res["findings"] if f["severity"] == "error"], res["findings"]
    run = subprocess.run([sys.executable, "src/train.py", "trainer=ddp", *shlex.split(args)],
                         cwd=repo, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(repo)})
    assert run.returncode == 0 and "trained std" in run.stdout, run.stderr[-2000:]
