"""Job-script directives: what the checks read as the job's resources."""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.job.sbatch import parse_sbatch


def script(*directives: str):
    text = "#!/bin/bash\n" + "".join(f"#SBATCH {d}\n" for d in directives) + "srun true\n"
    return parse_sbatch(text, Path("job.sbatch"), "job.sbatch")


@pytest.mark.parametrize("directives,gpus", [
    (["--gpus-per-node=8"], 8),
    (["--gres=gpu:a100:4"], 4),
    (["--gres=gpu"], 1),
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
