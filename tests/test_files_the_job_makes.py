"""Files the job makes are not missing: config-not-found and prerequisite-missing on small
real git repos, through the real CLI. A config that an earlier step, the job this one
waits for (`--dependency`) or a run into a git-ignored checkpoint directory writes is at
most a warning naming that producer; a directory the code creates (`os.makedirs`,
`Path.mkdir(parents=True)`) or the script makes (`mkdir -p`) is no prerequisite. The
same paths with no producer stay findings, so the tests cannot pass by silence."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from conftest import git_repo, result_of, run_json

FINETUNE = "import sys\nprint(sys.argv)\n"


def _repo(root: Path, files: dict) -> Path:
    return git_repo(root, files, dedent=True, commit=False)


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


# ---- a producer writes that path (review of issue 26) ------------------------------------
TYPO = "srun python finetune.py --config configs/trian.yaml"
NOT_WRITERS = {
    # mkdir makes a directory, and `logs` is not the config's
    "mkdir_earlier_on_the_line": _sbatch("mkdir -p logs && " + TYPO),
    # cp writes into $TMPDIR/, not configs/
    "cp_to_another_directory": _sbatch("cp data.tar $TMPDIR/ && " + TYPO),
    # a comment runs nothing
    "comment": _sbatch("# pip install -r requirements.txt, see configs/trian.yaml", TYPO),
    # the config is cp's source, and after the step
    "source_after_the_step": _sbatch(TYPO, "cp configs/trian.yaml $HOME/done/"),
    # singleton serialises same-named jobs; afterany waits for a job that may have failed
    "singleton": _sbatch(TYPO, head="#SBATCH --dependency=singleton\n"),
    "afterany": _sbatch(TYPO, head="#SBATCH --dependency=afterany:1234\n"),
    # every step runs: a typo in the first is an error though a later step is longer
    "a_step_that_is_not_the_training_one": _sbatch(
        TYPO, "srun python finetune.py --config configs/train.yaml --eval-only --split test"),
}
# the job's own entry saves files and names configs/: it runs in the job, not before it
ENTRY_SAVES = ('import argparse\nimport torch\np = argparse.ArgumentParser()\n'
               'p.add_argument("--config", default="configs/train.yaml")\n'
               'torch.save({}, "configs/" + "last.pt")\n')


@pytest.mark.parametrize("case", sorted(NOT_WRITERS) + ["entry_saves"])
def test_a_typo_no_command_writes_is_an_error(tmp_path, case):
    script = NOT_WRITERS.get(case) or _sbatch(TYPO)
    repo = _repo(tmp_path / "repo", {"finetune.py": ENTRY_SAVES if case == "entry_saves"
                                     else FINETUNE, "configs/train.yaml": "lr: 1\n",
                                     "job.sbatch": script})
    r = _run(repo, "config-not-found")
    [f] = r["findings"]
    assert (r["status"], f["severity"], r["exit"]) == ("fail", "error", 1), r
    assert f["data"]["producer"] is None and f["data"]["config"] == "configs/trian.yaml"
    assert f["location"]["line"] == script.splitlines().index(
        next(ln for ln in script.splitlines() if ln.endswith(TYPO))) + 1


@pytest.mark.parametrize("line", ["cp configs/train.yaml configs/trian.yaml",
                                  "cp configs/train.yaml /tmp/x && cp /tmp/x configs/trian.yaml",
                                  "install -m 644 configs/train.yaml configs/trian.yaml",
                                  "echo 'lr: 1' > configs/trian.yaml"])
def test_a_command_that_writes_the_config_before_the_step_is_no_finding(tmp_path, line):
    repo = _repo(tmp_path / "repo", {"finetune.py": FINETUNE, "configs/train.yaml": "lr: 1\n",
                                     "job.sbatch": _sbatch(line, TYPO)})
    r = _run(repo, "config-not-found")
    assert r["findings"] == [], r


def test_an_afterok_dependency_is_an_assumed_producer(tmp_path):
    repo = _repo(tmp_path / "repo", {"finetune.py": FINETUNE, "configs/train.yaml": "lr: 1\n",
                                     "job.sbatch": _sbatch(
                                         TYPO, head="#SBATCH --dependency=afterok:1234\n")})
    [f] = _run(repo, "config-not-found")["findings"]
    assert f["severity"] == "warning" and "assumed" in f["message"], f


STATS = """\
    import argparse
    import os
    import pickle
    import yaml


    def main():
        p = argparse.ArgumentParser()
        p.add_argument("--config")
        cfg = yaml.safe_load(open(p.parse_args().config))
        with open(cfg["data"]["stats_file"], "rb") as f:
            stats = pickle.load(f)
        {}
        print(stats)


    if __name__ == "__main__":
        main()
    """


@pytest.mark.parametrize("other", [
    # the same key name in another section, and a dirname is not the file
    'os.makedirs(os.path.dirname(cfg["eval"]["stats_file"]), exist_ok=True)',
    # writes another file; "data" is a dict key, not a path it writes into
    'pickle.dump(stats, open("out.pkl", "wb"))'])
def test_a_file_the_code_does_not_write_is_still_a_warning(tmp_path, other):
    repo = _repo(tmp_path / "repo", {
        "train.py": STATS.replace("{}", other), "data/train.npz": "x",
        "configs/train.yaml": "data:\n  train_path: data/train.npz\n  stats_file: "
                              "data/stats.pkl\neval:\n  stats_file: results/stats.pkl\n",
        "job.sbatch": _sbatch("srun python train.py --config configs/train.yaml")})
    r = _run(repo, "prerequisite-missing", "--config", str(repo / "configs/train.yaml"))
    assert [(f["data"]["path"], f["severity"]) for f in r["findings"]] == [
        ("data/stats.pkl", "warning")], r
