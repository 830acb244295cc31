"""checkpoint-on-local-tmp (issue 29): a job that requeues, runs for days or spans nodes
and writes its checkpoints/outputs to node-local storage. The findings come from the real
CLI on small git repos (one job script per case, every case in one repo, one run); the
DomainBed fixture is a real public job script (fixtures/checkpoint-on-local-tmp)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, git_repo, result_of, run_doctor, validate_report

CHECK = "checkpoint-on-local-tmp"
FIXTURES = ROOT / "fixtures" / CHECK
TRAIN = "import torch\n"

# name → (job script, (line, severity) of its finding or None)
CASES = {
    # at risk, a path under /tmp: the whole path is shown
    "requeue_tmp": ("#SBATCH --requeue\nsrun python3 train.py --output_dir /tmp/run\n",
                    (3, "error")),
    "long_shm": ("#SBATCH --time=2-00:00:00\nsrun python3 train.py --save=/dev/shm/ck\n",
                 (3, "error")),
    "nodes_var": ("#SBATCH --nodes=2\nOUT=/tmp/$USER/ckpt\n"
                  "srun python3 train.py --checkpoint-dir \"$OUT\"\n", (4, "error")),
    "hydra_key": ("#SBATCH -N 4\nsrun python3 train.py trainer.default_root_dir=/var/tmp/x\n",
                  (3, "error")),
    "hydra_run_dir": ("#SBATCH --requeue\nsrun python3 train.py hydra.run.dir=/tmp/outputs\n",
                      (3, "error")),
    "slurm_tmpdir": ("#SBATCH --requeue\nsrun python3 train.py --load $SLURM_TMPDIR/ck\n",
                     (3, "error")),
    "heredoc_nodes": ("sbatch <<EOF\n#!/bin/bash\n#SBATCH --nodes=4\n"
                      "srun python3 train.py --save /tmp/ck\nEOF\n", (5, "error")),
    "minutes_over_a_day": ("#SBATCH --time=2000\nsrun python3 train.py --output_dir /tmp/o\n",
                           (3, "error")),
    # a key of the config the step reads (reported at the key's line)
    "config_key": ("#SBATCH --requeue\nsrun python3 train.py --config conf/run.yaml\n", None),
    # a link the doctor cannot prove: $TMPDIR's value is the cluster's
    "tmpdir_var": ("#SBATCH --requeue\nsrun python3 train.py --output_dir $TMPDIR/run\n",
                   (3, "warning")),
    # copied back at the end: lost only on preemption/requeue
    "copied_back": ("#SBATCH --nodes=2\nsrun python3 train.py --output_dir /tmp/run\n"
                    "rsync -a /tmp/run/ /scratch/me/run/\n", (3, "warning")),
    # a staged copy only spares what the job reads: its output there is still lost
    "staged_then_saved": ("#SBATCH --requeue\ncp -r /scratch/me/ckpt /tmp/ckpt\n"
                          "srun python3 train.py --save /tmp/ckpt\n", (4, "error")),
    # silent: not at risk, or not node-local
    "short_job": ("#SBATCH --time=04:00:00\nsrun python3 train.py --output_dir /tmp/run\n",
                  None),
    "one_day": ("#SBATCH --time=1-00:00:00\nsrun python3 train.py --output_dir /tmp/run\n",
                None),
    "no_requeue_last": ("#SBATCH --requeue\n#SBATCH --no-requeue\n"
                        "srun python3 train.py --output_dir /tmp/run\n", None),
    "dot_tmp": ("#SBATCH --requeue\nsrun python3 train.py --output_dir ./tmp/run\n", None),
    "tmp_name": ("#SBATCH --requeue\nsrun python3 train.py --output_dir /scratch/tmp/run\n",
                 None),
    "data_in_tmp": ("#SBATCH --requeue\nsrun python3 train.py --data_dir /tmp/data "
                    "--output_dir /scratch/run\n", None),
    "cache_in_tmp": ("#SBATCH --nodes=2\nexport TRITON_CACHE_DIR=/tmp/triton\n"
                     "srun python3 train.py\n", None),
    "staged_load": ("#SBATCH --requeue\ncp -r /scratch/me/ckpt /tmp/ckpt\n"
                    "srun python3 train.py --load /tmp/ckpt --save /scratch/me/ckpt\n", None),
    "staged_tar": ("#SBATCH --nodes=2\ntar xf /scratch/me/init.tar -C $SLURM_TMPDIR\n"
                   "srun python3 train.py --resume_from $SLURM_TMPDIR/init\n", None),
    "job_keyed_shared": ("#SBATCH --requeue\nsrun python3 train.py "
                         "--output_dir /scratch/$USER/$SLURM_JOB_ID\n", None),
    "exported_tmpdir": ("#SBATCH --requeue\nexport TMPDIR=/scratch/me/tmp\n"
                        "srun python3 train.py --output_dir $TMPDIR/run\n", None),
}


def commit(repo: Path) -> Path:
    """What is in `repo`, committed in a new git repo there."""
    return git_repo(repo, {})


def _run(repo: Path, *extra: str) -> tuple:
    proc = run_doctor("run", "--static", "--repo", str(repo), "--select", CHECK,
                      "--format", "json", *extra)
    assert "Traceback" not in proc.stderr, proc.stderr
    doc = validate_report(json.loads(proc.stdout))
    return proc, result_of(doc, CHECK)


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("localtmp")
    (root / "train.py").write_text(TRAIN)
    (root / "conf").mkdir()
    (root / "conf" / "run.yaml").write_text("lr: 0.1\ntrainer:\n  default_root_dir: /tmp/runs\n")
    for name, (body, _) in CASES.items():
        (root / f"{name}.sbatch").write_text("#!/bin/bash\n" + body)
    commit(root)
    return _run(root)


def test_each_case_is_found_at_its_line_and_correct_jobs_are_silent(cases):
    proc, res = cases
    got = {f["location"]["path"].rsplit(".", 1)[0]: (f["location"]["line"], f["severity"])
           for f in res["findings"]}
    want = {name: expected for name, (_, expected) in CASES.items() if expected is not None}
    want["conf/run"] = (3, "error")   # (config_key's finding is at the key)
    assert got == want
    assert proc.returncode == 1     # errors among them


def test_the_message_names_each_link_and_the_fix(cases):
    _, res = cases
    by = {f["location"]["path"]: f for f in res["findings"]}
    f = by["nodes_var.sbatch"]
    assert "`--checkpoint-dir /tmp/$USER/ckpt` of the step at nodes_var.sbatch:4" in f["message"]
    assert "2 nodes, nodes_var.sbatch:2 (#SBATCH --nodes=2)" in f["message"]
    assert "shared storage" in f["fix"]
    f = by["copied_back.sbatch"]
    assert "the copy at copied_back.sbatch:4" in f["message"]
    assert "preemption" in f["message"]
    f = by["tmpdir_var.sbatch"]
    assert "cannot see its value" in f["message"]


def test_domainbed_job_real_script_warns_and_without_its_copy_errs(tmp_path):
    # jc-audet/DomainBed's 4-day sweep writes to $SLURM_TMPDIR and copies back at the end
    for case, severity, code in (("fail_domainbed_tmpdir_copied_back", "warning", 0),
                                 ("fail_domainbed_tmpdir_no_copy", "error", 1)):
        repo = tmp_path / case
        shutil.copytree(FIXTURES / case, repo, ignore=shutil.ignore_patterns("case.yaml"))
        commit(repo)
        proc, res = _run(repo, "--sbatch", str(repo / "run_anneal_exp_VLCS.sh"))
        assert proc.returncode == code, proc.stdout[-2000:]
        (f,) = res["findings"]
        assert (f["location"], f["severity"]) == (
            {"path": "run_anneal_exp_VLCS.sh", "line": 27}, severity)
        assert "$SLURM_TMPDIR/misc/VLCS_results/" in f["message"]
        assert "run_anneal_exp_VLCS.sh:9 (#SBATCH --time=4-00:00:00)" in f["message"]


def test_code_and_argparse_defaults_and_the_site_profile(tmp_path):
    repo = tmp_path / "lightning"
    shutil.copytree(FIXTURES / "fail_lightning_requeue_tmp", repo,
                    ignore=shutil.ignore_patterns("case.yaml"))
    commit(repo)
    proc, res = _run(repo, "--sbatch", str(repo / "job.sbatch"))
    got = {(f["location"]["path"], f["location"]["line"]) for f in res["findings"]}
    assert got == {("src/train.py", 14), ("src/train.py", 16)}
    assert any("`ModelCheckpoint(dirpath=…)` at src/train.py:16" in f["message"]
               for f in res["findings"])
    # a site whose node-local disk is /local_scratch: that path is judged, /tmp is not
    site = tmp_path / "site"
    site.mkdir()
    (site / "job.sbatch").write_text("#!/bin/bash\n#SBATCH --requeue\n"
                                     "srun python3 train.py --output_dir /local_scratch/r\n"
                                     "srun python3 train.py --output_dir /tmp/r2\n")
    (site / "train.py").write_text(TRAIN)
    (site / "doctor.yaml").write_text("site: {local_paths: [/local_scratch]}\n")
    commit(site)
    _, res = _run(site, "--sbatch", str(site / "job.sbatch"))
    assert [(f["location"]["line"], f["data"]["local_root"]) for f in res["findings"]] == \
        [(3, "/local_scratch")]
    assert "the site profile's local_paths" in res["findings"][0]["message"]


def test_no_job_script_skips(tmp_path):
    repo = tmp_path / "nojob"
    repo.mkdir()
    (repo / "train.py").write_text("import torch\ntorch.save({}, '/tmp/x.pt')\n")
    commit(repo)
    _, res = _run(repo)
    assert res["status"] == "skip" and "no job script" in res["reason"]
