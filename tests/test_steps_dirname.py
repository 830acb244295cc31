"""The job-step model reads a script's own directory (`$(dirname "$0")`, `BASH_SOURCE`,
`SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)`) as bash has it: for the
batch script, slurmd's spool directory (sbatch runs a copy of the script from there),
for a script run by its path, that script's directory. The findings come from the real
CLI; the oracle is the real local Slurm: the spool form fails, the fixed one and the
inner script's form run."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import result_of, run_doctor, validate_report
from test_job_exit import git

HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n#SBATCH --time=2\n"
TRAIN = "print('trained')\n"
SCRIPTS = {
    # the batch script's own directory: the spool copy's, where train.py is not
    "jobs/spool.sbatch": HEAD + 'srun python3 "$(dirname "$0")"/train.py\n',          # :5
    "jobs/spool_source.sbatch": HEAD + 'D="${BASH_SOURCE%/*}"\nsrun python3 $D/train.py\n',
    "jobs/spool_cd.sbatch": HEAD + 'SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" '
                            '&> /dev/null && pwd)\nsrun python3 "${SCRIPT_DIR}/train.py"\n',
    # the standard fix, and a script run by its path, where $0 is that path
    "jobs/submit_dir.sbatch": HEAD + 'srun python3 "${SLURM_SUBMIT_DIR}/jobs/train.py"\n',
    "jobs/launch.sbatch": HEAD + "srun bash jobs/inner.sh\n",
    "jobs/inner.sh": 'SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)\n'
                     'python3 "$SCRIPT_DIR/train.py"\n',
    "jobs/launch_missing.sbatch": HEAD + "srun bash jobs/inner_missing.sh\n",
    "jobs/inner_missing.sh": 'python3 "$(dirname "$0")/stage2.py"\n',   # :1, not in jobs/
    "jobs/train.py": TRAIN,
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dirname")
    for rel, text in SCRIPTS.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "import")
    return root


def _findings(repo: Path) -> dict:
    proc = run_doctor("run", "--static", "--repo", str(repo), "--select", "entry-not-found",
                      "--format", "json")
    assert "Traceback" not in proc.stderr, proc.stderr
    res = result_of(validate_report(json.loads(proc.stdout)), "entry-not-found")
    return {(f["location"]["path"], f["location"]["line"]): f for f in res["findings"]}


def test_the_batch_scripts_own_directory_is_the_spool_and_a_run_scripts_is_its_own(repo):
    found = _findings(repo)
    assert set(found) == {("jobs/spool.sbatch", 5), ("jobs/spool_source.sbatch", 6),
                          ("jobs/spool_cd.sbatch", 6), ("jobs/inner_missing.sh", 1)}, found
    for key in (("jobs/spool.sbatch", 5), ("jobs/spool_source.sbatch", 6),
                ("jobs/spool_cd.sbatch", 6)):
        f = found[key]
        assert f["severity"] == "warning", f   # a `bash job.sbatch` run would find it
        assert "spool directory" in f["message"] and "jobs/train.py" in f["message"], f
        assert "${SLURM_SUBMIT_DIR}/jobs/train.py" in f["fix"], f
    # the script run by its path: $0 is jobs/inner_missing.sh, so the entry is jobs/stage2.py
    missing = found[("jobs/inner_missing.sh", 1)]
    assert missing["severity"] == "error" and "jobs/stage2.py" in missing["message"], missing


@pytest.mark.slurm
def test_slurm_runs_the_spool_copy_and_the_fixed_forms_find_the_file(slurm_cluster, repo,
                                                                       tmp_path):
    from test_slurm_injob import JOB_ENV, wait_done

    cases = {"jobs/spool.sbatch": "FAILED", "jobs/spool_cd.sbatch": "FAILED",
             "jobs/submit_dir.sbatch": "COMPLETED", "jobs/launch.sbatch": "COMPLETED"}
    ids = {}
    for rel in cases:
        out = tmp_path / (Path(rel).stem + "-%j.out")
        proc = subprocess.run(["sbatch", "--parsable", "-o", str(out), rel], cwd=repo,
                              env=JOB_ENV, capture_output=True, text=True, timeout=60)
        ids[rel] = proc.stdout.strip().split(";")[0]
        assert ids[rel].isdigit(), (proc.stdout, proc.stderr)
    states = {rel: wait_done(job_id) for rel, job_id in ids.items()}
    assert states == cases
    log = (tmp_path / f"spool-{ids['jobs/spool.sbatch']}.out").read_text()
    # python was asked for train.py beside the spool copy: slurmd's job directory
    assert re.search(r"can't open file '/\S*job0*%s/train\.py'" % ids["jobs/spool.sbatch"],
                     log), log
    assert "trained" in (tmp_path / f"launch-{ids['jobs/launch.sbatch']}.out").read_text()
