"""Files the job makes are not missing: config-not-found and prerequisite-missing on small
real git repos, through the real CLI. A config that an earlier step, the job this one
waits for (`--dependency`) or a run into a git-ignored checkpoint directory writes is at
most a warning naming that producer; a directory the code creates (`os.makedirs`,
`Path.mkdir(parents=True)`) or the script makes (`mkdir -p`) is no prerequisite. The
same paths with no producer stay findings, so the tests cannot pass by silence."""
from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import result_of, run_json

FINETUNE = "import sys\nprint(sys.argv)\n"


def _repo(root: Path, files: dict) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    return root


def _run(repo: Path, check: str, *args: str) -> dict:
    code, doc = run_json("--repo", str(repo), "--no-smoke", "--only", check,
                         "--sbatch", str(repo / "job.sbatch"), *args)
    r = result_of(doc, check)
    r["exit"] = code
    r["facts"] = doc["facts"]
    return r


def _sbatch(*lines: str, head: str = "") -> str:
    return "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks-per-node=2\n" + head + \
        "\n".join(lines) + "\n"


# ---- config-not-found ------------------------------------------------------------------
CONFIG = "checkpoints/pretrain/config.yaml"
CASES = {
    # a run writes it into checkpoints/, which git ignores
    "ignored_checkpoint_dir": ({".gitignore": "checkpoints/\n"},
                               _sbatch(f"srun python finetune.py --config {CONFIG}"),
                               "under checkpoints/, an output directory git ignores"),
    # the job this one waits for writes it
    "dependency": ({}, _sbatch(f"srun python finetune.py --config {CONFIG}",
                               head="#SBATCH --dependency=afterok:1234\n"),
                   "--dependency=afterok:1234 at job.sbatch:4"),
    # an earlier step of the same script writes into its directory
    "earlier_step": ({}, _sbatch("srun python pretrain.py --save_dir checkpoints/pretrain",
                                 f"srun python finetune.py --config {CONFIG} --lr 1e-4"),
                     "the earlier step job.sbatch:4 (`pretrain.py`, writing "
                     "checkpoints/pretrain)"),
    # a repo script generates the configs into that directory, run by hand before
    "generator": ({"tools/gen_configs.py": """\
        import os
        out = "checkpoints/pretrain"
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "config.yaml"), "w") as f:
            f.write("lr: 0.1\\n")
        """}, _sbatch(f"srun python finetune.py --config {CONFIG}"),
        "tools/gen_configs.py, run before the job (it names checkpoints/pretrain at "
        "tools/gen_configs.py:2"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_config_an_earlier_job_makes_is_a_warning_naming_it(tmp_path, case):
    extra, script, producer = CASES[case]
    repo = _repo(tmp_path / "repo", {"finetune.py": FINETUNE, "pretrain.py": FINETUNE,
                                     "job.sbatch": script, **extra})
    r = _run(repo, "config-not-found")
    [f] = r["findings"]
    assert (r["status"], f["severity"], r["exit"]) == ("fail", "warning", 0), r
    assert producer in f["message"] and f["data"]["producer"] and producer in \
        f["data"]["producer"], f
    assert f["location"]["path"] == "job.sbatch"


def test_a_config_no_one_makes_is_still_an_error(tmp_path):
    # not ignored, no dependency, no earlier step: the path to the failure is shown
    repo = _repo(tmp_path / "repo", {"finetune.py": FINETUNE, ".gitignore": "data/\n",
                                     "job.sbatch": _sbatch(
                                         f"srun python finetune.py --config {CONFIG}")})
    r = _run(repo, "config-not-found")
    [f] = r["findings"]
    assert (r["status"], f["severity"], r["exit"]) == ("fail", "error", 1), r
    assert f["data"]["producer"] is None


def test_an_ignored_input_directory_is_not_an_output(tmp_path):
    # a git-ignored data/ holds what the job reads: no producer, still an error
    repo = _repo(tmp_path / "repo", {"finetune.py": FINETUNE, ".gitignore": "data/\n",
                                     "job.sbatch": _sbatch(
                                         "srun python finetune.py --config data/c.yaml")})
    r = _run(repo, "config-not-found")
    assert [f["severity"] for f in r["findings"]] == ["error"], r


# ---- prerequisite-missing ----------------------------------------------------------------
MAKES = {
    "path_mkdir": """\
        import sys
        from pathlib import Path
        import yaml
        cfg = yaml.safe_load(open(sys.argv[2]))
        out = Path(cfg["features_dir"])
        out.mkdir(parents=True, exist_ok=True)
        """,
    "os_makedirs": """\
        import os, sys
        import yaml
        cfg = yaml.safe_load(open(sys.argv[2]))
        os.makedirs(cfg["features_dir"], exist_ok=True)
        """,
}
NO_MKDIR = """\
    import sys
    import yaml
    cfg = yaml.safe_load(open(sys.argv[2]))
    print(sorted(__import__("os").listdir(cfg["features_dir"])))
    """


def _prereq_repo(root: Path, train: str, pre: str = "") -> Path:
    repo = _repo(root, {"train.py": train, "conf/train.yaml": "features_dir: work/features\n",
                        "work/.keep": "",
                        "job.sbatch": _sbatch(pre + "srun python train.py --config "
                                              "conf/train.yaml")})
    return repo


@pytest.mark.parametrize("form", sorted(MAKES))
def test_a_directory_the_code_creates_is_no_prerequisite(tmp_path, form):
    repo = _prereq_repo(tmp_path / "repo", MAKES[form])
    r = _run(repo, "prerequisite-missing", "--config", str(repo / "conf/train.yaml"))
    assert r["status"] == "skip" and not r["findings"], r
    [note] = r["facts"]["prerequisites"]["skipped"]
    assert note["path"] == "work/features" and "the code creates it (train.py:" in note["why"]


def test_a_directory_the_script_makes_is_no_prerequisite(tmp_path):
    repo = _prereq_repo(tmp_path / "repo", NO_MKDIR, pre="mkdir -p work/features\n")
    r = _run(repo, "prerequisite-missing", "--config", str(repo / "conf/train.yaml"))
    assert r["status"] == "skip", r
    assert "mkdir -p work/features" in r["facts"]["prerequisites"]["skipped"][0]["why"]


def test_a_directory_no_one_makes_is_still_a_warning(tmp_path):
    repo = _prereq_repo(tmp_path / "repo", NO_MKDIR)
    r = _run(repo, "prerequisite-missing", "--config", str(repo / "conf/train.yaml"))
    [f] = r["findings"]
    assert (r["status"], f["severity"]) == ("fail", "warning"), r
    assert f["location"] == {"path": "conf/train.yaml", "line": 1}


def test_a_file_name_the_code_joins_under_another_directory_is_not_judged_here(tmp_path):
    # `ckpt_file: model.pt` read as join(cfg["out_dir"], cfg["ckpt_file"]): not a file
    # of the working directory; the doctor says why it does not judge it
    train = """\
        import os, sys
        import torch, yaml
        cfg = yaml.safe_load(open(sys.argv[2]))
        state = torch.load(os.path.join(cfg["run_root"], cfg["ckpt_file"]))
        """
    repo = _repo(tmp_path / "repo", {"train.py": train, "conf/train.yaml": "ckpt_file: model.pt\n",
                                     "job.sbatch": _sbatch("srun python train.py --config "
                                                           "conf/train.yaml")})
    r = _run(repo, "prerequisite-missing", "--config", str(repo / "conf/train.yaml"))
    assert r["status"] == "skip" and not r["findings"], r
    [note] = r["facts"]["prerequisites"]["skipped"]
    assert note["path"] == "model.pt" and "joins it under another directory (train.py:4" in \
        note["why"], note
    # the same name read where it is written (the working directory): judged, missing
    (repo / "train.py").write_text(textwrap.dedent(train).replace(
        'os.path.join(cfg["run_root"], cfg["ckpt_file"])', 'cfg["ckpt_file"]'))
    r = _run(repo, "prerequisite-missing", "--config", str(repo / "conf/train.yaml"))
    assert [f["data"]["path"] for f in r["findings"]] == ["model.pt"], r
