"""Steps written as people write them (issue 26, item 6): a batch script fed to `sbatch`
as a here-document (`sbatch <<EOF … EOF`, Megatron-LM's examples/megatron_fsdp), a
command held in a variable (`srun bash -x -c "${TRAINING_CMD}"`, `bash -lc "$CMD"`), and
an entry under a directory variable the script sets to a placeholder
(`MEGATRON_PATH=${MEGATRON_PATH:-"your_own_megatron_path"}`).

Each is proven through the real CLI by what the job's code then is: a finding in a
module the entry imports is the job's (an error), one in a file no step reaches is not
reported; with no step found, both would be warnings of a whole-repo scan."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import git_repo, result_of, run_json
from test_job_closure import BUG, BUG_LINE

JOB = "slurm/job.sh"
CHECK = "collective-on-error-path"


def _repo(tmp_path: Path, job: str) -> Path:
    """train.py imports a/b.py, which holds a collective a swallowed error skips;
    other/unreached.py holds the same code, and nothing imports it."""
    return git_repo(tmp_path, {
        "train.py": "from a.b import run\n\nif __name__ == '__main__':\n    run([], None)\n",
        "a/__init__.py": "", "a/b.py": BUG, "other/unreached.py": BUG, JOB: job})


def _run(repo: Path) -> tuple:
    """(exit code, [(path, line, severity, message)] of the check, the job's step facts)."""
    code, doc = run_json("--static", "--repo", str(repo), "--sbatch", JOB, "--only", CHECK,
                         cwd=repo)
    found = sorted((f["location"]["path"], f["location"]["line"], f["severity"],
                    f["message"]) for f in result_of(doc, CHECK)["findings"])
    return code, found, doc["facts"]["job"][JOB]["step"]


# The Megatron-LM form, generalised: the command is a string assigned before, the batch
# script a here-document whose unquoted delimiter lets the outer shell expand it.
MEGATRON_FORM = """\
#!/bin/bash
ARGS=(--lr 1e-4 --steps 10)
TRAINING_CMD="
cd ${SLURM_SUBMIT_DIR:-.};
python train.py ${ARGS[@]}"
LOGS=/tmp/logs
sbatch <<EOF
#!/bin/bash
#SBATCH --nodes=4
#SBATCH --ntasks-per-node=2
echo "running: ${TRAINING_CMD}"
srun \\
    --mpi=pmix -l \\
    bash -x -c "${TRAINING_CMD}" 2>&1 | tee ${LOGS}/\\${SLURM_JOB_ID}.log
EOF
"""

FORMS = {
    "sbatch-heredoc-bash-x-c-variable": MEGATRON_FORM,
    # quoted delimiter: not expanded here; the job's shell sees what is exported
    "sbatch-quoted-heredoc-exported": (
        "#!/bin/bash\nexport CMD='python train.py --lr 1'\n"
        "sbatch --nodes=2 <<'EOF'\n#!/bin/bash\nsrun bash -c \"$CMD\"\nEOF\n"),
    # <<- strips the leading tabs of the body and of the closing delimiter
    "sbatch-heredoc-tabs": (
        "#!/bin/bash\nif true; then\n\tsbatch <<-END\n\t#!/bin/bash\n\t#SBATCH -N 2\n"
        "\tsrun python train.py\n\tEND\nfi\n"),
    # bash reading its script from the here-document
    "bash-s-heredoc": "#!/bin/bash\n#SBATCH -N 2\nbash -s <<EOF\nsrun python train.py\nEOF\n",
    # `cat <<EOF | sbatch`: the public submit-script form (cat's here-document is the
    # batch script sbatch reads from its standard input), and `| bash`
    "cat-heredoc-piped-to-sbatch": (
        "#!/bin/bash\nmkdir -p logs\ncat << EOF | sbatch # --hold\n#!/bin/bash\n"
        "#SBATCH --nodes=2\nsrun python train.py\nEOF\n"),
    "cat-quoted-heredoc-piped-to-bash": (
        "#!/bin/bash\n#SBATCH -N 2\ncat <<-'EOF' |bash\n\tsrun python train.py\n\tEOF\n"),
    # a variable's value as the code, after other options
    "srun-bash-l-c-variable": ("#!/bin/bash\n#SBATCH -N 2\nCMD=\"python train.py --lr 1\"\n"
                               "srun bash -l -o pipefail -c \"$CMD\"\n"),
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_the_step_in_a_heredoc_or_a_variable_is_the_job(tmp_path, form):
    """The step is found, so the job's code is train.py's closure: a/b.py's finding is an
    error, the unreached copy is not judged."""
    code, found, step = _run(_repo(tmp_path, FORMS[form]))
    assert step["entry"] == "train.py", step
    assert [(p, n, s) for p, n, s, _ in found] == [("a/b.py", BUG_LINE, "error")], found
    assert code == 1


def test_the_heredoc_batch_script_has_its_own_sbatch_lines_and_lines(tmp_path):
    """The here-document's #SBATCH lines are the new job's counts, cited at their lines
    in the file; the step stands at its srun line (the lines the expanded TRAINING_CMD
    holds do not move it), under sbatch and srun."""
    _, _, step = _run(_repo(tmp_path, MEGATRON_FORM))
    assert step["nodes"] == [4, f"{JOB}:9 (#SBATCH --nodes=4)"], step
    assert step["ranks_per_node"] == [2, f"{JOB}:10 (#SBATCH --ntasks-per-node=2)"], step
    assert step["at"] == f"{JOB}:12", step
    assert [c.split(" (")[0] for c in step["chain"]] == ["sbatch", "srun", "python"], step
    assert step["args"][:2] == ["--lr", "1e-4"], step


def test_a_quoted_heredoc_does_not_see_the_shell_variables_of_its_submitter(tmp_path):
    """`<<'EOF'` is not expanded, and the new job's shell has only the exported
    variables: an unexported CMD is unknown there, so no step runs a repo file and the
    code is scanned whole, at most warned about."""
    job = ("#!/bin/bash\nCMD='python train.py'\n"
           "sbatch <<'EOF'\n#!/bin/bash\nsrun bash -c \"$CMD\"\nEOF\n")
    code, found, step = _run(_repo(tmp_path, job))
    assert step["entry"] is None, step
    assert {(p, s) for p, _, s, _ in found} == {("a/b.py", "warning"),
                                                ("other/unreached.py", "warning")}, found
    assert code == 0


def test_sbatch_with_a_script_file_does_not_read_the_heredoc(tmp_path):
    """`sbatch other.sh <<EOF` runs other.sh: the here-document is not its batch script."""
    job = "#!/bin/bash\nsbatch --nodes=2 other.sh <<EOF\nsrun python train.py\nEOF\n"
    code, found, step = _run(_repo(tmp_path, job))
    assert step["entry"] is None, step
    assert code == 0


def test_an_entry_under_a_placeholder_directory_is_a_guess_that_ties_its_closure(tmp_path):
    """MEGATRON_PATH defaults to a placeholder, no directory of this checkout: the entry
    is read as ${MEGATRON_PATH}/train.py (the step says why), and the code checks judge
    train.py's closure as a guess: a/b.py's finding is a warning naming the variable,
    the unreached file is not judged."""
    job = MEGATRON_FORM.replace(
        '#!/bin/bash\n', '#!/bin/bash\nMEGATRON_PATH=${MEGATRON_PATH:-"your_own_path"}\n', 1
    ).replace("python train.py", "python ${MEGATRON_PATH}/train.py")
    code, found, step = _run(_repo(tmp_path, job))
    assert step["entry"] == "${MEGATRON_PATH}/train.py", step
    assert any("MEGATRON_PATH=your_own_path" in n and "not a directory of this checkout" in n
               for n in step["notes"]), step["notes"]
    assert [(p, n, s) for p, n, s, _ in found] == [("a/b.py", BUG_LINE, "warning")], found
    assert "only if the variable in ${MEGATRON_PATH}/train.py" in found[0][3], found
    assert code == 0


def test_an_entry_in_a_directory_the_checkout_has_is_not_a_guess(tmp_path):
    """A directory variable that names a directory of the repo is the checkout: the entry
    resolves, and nothing is rewritten."""
    job = ("#!/bin/bash\n#SBATCH -N 2\nCODE=$SLURM_SUBMIT_DIR\nCMD=\"python $CODE/train.py\"\n"
           "srun bash -c \"$CMD\"\n")
    code, found, step = _run(_repo(tmp_path, job))
    assert step["entry"] == f"{tmp_path}/train.py", step
    assert [(p, s) for p, _, s, _ in found] == [("a/b.py", "error")], found
    assert code == 1


def test_a_heredoc_cat_does_not_pipe_into_the_next_line(tmp_path):
    """`cat <<EOF` alone prints its here-document; an `sbatch` on the next line reads no
    batch script from it (nor from `cat <<EOF || sbatch`)."""
    for job in ("#!/bin/bash\ncat <<EOF\nsrun python train.py\nEOF\nsbatch\n",
                "#!/bin/bash\ncat <<EOF || sbatch\nsrun python train.py\nEOF\n"):
        code, found, step = _run(_repo(tmp_path / str(len(job)), job))
        assert step["entry"] is None, (job, step)
        assert code == 0
