"""Job-script directives: what the checks read as the job's resources."""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.job.sbatch import as_submitted, parse_sbatch


def script(*directives: str):
    text = "#!/bin/bash\n" + "".join(f"#SBATCH {d}\n" for d in directives) + "srun true\n"
    return parse_sbatch(text, Path("job.sbatch"), "job.sbatch")


@pytest.mark.parametrize("directives,gpus", [
    (["--gpus-per-node=8"], 8),
    (["--gres=gpu:a100:4"], 4),
    (["--gres=gpu"], 1),
    # Slurm's `name[[:type]:count]`: a type with digits is no count
    (["--gres=gpu:v100-32g"], 1),
    (["--gres=gpu:a100_3g.40gb:2"], 2),
    (["--gres=gpu:a100_3g.40gb"], 1),
    (["--gres=mps:100,gpu:2"], 2),
    (["--gpus-per-node=h100:4"], 4),
    (["-N 2", "--gpus=16"], 8),
    (["--ntasks-per-node=8", "--gpus-per-task=1"], 8),   # LUMI's idiom
    (["--ntasks-per-node=1", "--gpus-per-task=8"], 8),
    (["-N 2", "--ntasks=8", "--gpus-per-task=2"], 8),
    (["--gpus-per-task=4"], 4),
    (["-N 2", "--ntasks-per-node=4"], None),
])
def test_gpus_per_node(directives, gpus):
    found = script(*directives).gpus_per_node()
    assert (found[0] if found else None) == gpus


def test_directives_after_the_first_command_are_not_read():
    s = parse_sbatch("#!/bin/bash\n#SBATCH -N 2\necho hi\n#SBATCH -N 4\n", Path("j"), "j")
    assert s.nodes == 2


def test_node_ranges_take_the_maximum():
    assert script("--nodes=2-4").nodes == 4


def test_sbatch_precedence_command_line_over_environment_over_script():
    """man sbatch: SBATCH_* input variables override #SBATCH lines; command-line options
    override both."""
    base = script("--nodes=1", "--gpus-per-node=8", "--time=1:00:00")
    env = {"SBATCH_GPUS_PER_NODE": "4", "SBATCH_TIMELIMIT": "2:00:00", "SBATCH_NODES": "9",
           "PATH": "/bin"}
    s = as_submitted(base, ["-N", "2", "--gpus-per-node", "2", "--exclusive"], env)
    assert s.nodes == 2 and s.where(s.get("nodes")) == "the sbatch command line: --nodes=2"
    assert s.gpus_per_node()[0] == 2
    assert s.get("time").value == "2:00:00"
    assert s.where(s.get("time")) == "SBATCH_TIMELIMIT=2:00:00 in sbatch's environment"
    assert s.get("exclusive").value == ""
    # SBATCH_NODES is no sbatch input variable; the script itself is unchanged
    assert as_submitted(base, [], env).nodes == 1 and base.gpus_per_node()[0] == 8
    assert base.where(base.get("nodes")) == "job.sbatch:2 (#SBATCH --nodes=1)"
