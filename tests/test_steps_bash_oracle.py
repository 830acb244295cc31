"""Steps as people write them, against real bash: the shell expands, the doctor's reading
must agree.

Each job script below is run by the real bash with stubs first in PATH: `srun` drops its
options and runs the rest (marking ORC_SRUN), `clear` and `tee` do nothing harmful, and
`python`/`python3` record the argv they receive (for `python -m torch.distributed.run`
the worker's argv, after torchrun's own options, as torchrun hands it on). Every python
the doctor models with an entry must be one bash really started, with the same entry
and arguments, in the same order, under srun exactly when bash ran it under srun. Then
the real CLI must name the training step (the srun/launcher line, not the preprocessing
`python` line) in the result's `steps`.
"""
from __future__ import annotations

import json
import re
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import run_doctor, run_json
from doctor.job.context import Job
from doctor.job.steps import training_step

RECORD = '''#!{python} -I
import json, os, sys, uuid
args = sys.argv[1:]
while args and args[0].startswith("-") and args[0] not in ("-m", "-c"):
    args.pop(0)                       # python's own options (-u, -B)
launcher = False
if args[:2] in (["-m", "torch.distributed.run"], ["-m", "torch.distributed.launch"]):
    launcher, args = True, args[2:]
    while args and args[0].startswith("-"):
        key, eq, _ = args.pop(0).partition("=")
        if not eq and key in {{"--nproc_per_node", "--nproc-per-node", "--nnodes",
                               "--node_rank", "--node-rank", "--rdzv_backend",
                               "--rdzv_endpoint", "--master_addr", "--master_port",
                               "--max_restarts", "--tee"}}:
            args.pop(0)
rec = {{"argv": args, "srun": os.environ.get("ORC_SRUN") == "1", "launcher": launcher}}
with open(os.path.join({records!r}, uuid.uuid4().hex + ".json"), "w") as f:
    f.write(json.dumps(rec))
'''

# sbatch runs its --wrap command as a shell script (`#!/bin/sh` and the command)
SBATCH = '''#!/bin/bash
for a in "$@"; do case "$a" in --wrap=*) exec bash -c "${a#--wrap=}" ;; esac; done
exit 1
'''

# srun's options as the scripts below use them (a value in the next word, or `=`)
SRUN = '''#!/bin/bash
while [ $# -gt 0 ]; do
  case "$1" in
    --jobid|-N|-n|--nodes|--ntasks|--cpus-per-task|-c) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
ORC_SRUN=1 exec "$@"
'''

PRE = "python tools/preprocess_data.py --input data.json\n"
HEAD = "#!/bin/bash\n#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n#SBATCH --gres=gpu:8\n"
LAUNCHER = '''GPUS_PER_NODE=8
MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)
export LAUNCHER="python -u -m torch.distributed.run \\
    --nproc_per_node $GPUS_PER_NODE \\
    --nnodes 2 \\
    --master_addr $MASTER_ADDR \\
    --rdzv_backend c10d \\
    "
export CMD=" \\
    `pwd`/pretrain_gpt.py \\
    --tensor-model-parallel-size 4 \\
    --seq-length 2048 \\
    "
SRUN_ARGS="--wait=60 --kill-on-bad-exit=1"
'''

SCRIPTS = {
    # BigScience's form: the launcher and the command in variables, expanded by srun's bash
    "double_quotes.slurm": HEAD + PRE + LAUNCHER +
    'clear; srun $SRUN_ARGS --jobid $SLURM_JOB_ID bash -c "$LAUNCHER --node_rank '
    '\\$SLURM_PROCID $CMD" 2>&1 | tee -a main_log.txt\n',
    # the same in single quotes: the inner bash expands the exported variables
    "single_quotes.slurm": HEAD + PRE + LAUNCHER +
    "srun $SRUN_ARGS --jobid $SLURM_JOB_ID bash -c '$LAUNCHER --node_rank $SLURM_PROCID "
    "$CMD' 2>&1 | tee -a main_log.txt\n",
    # a variable that holds the whole command, unquoted: word splitting
    "cmd_variable.slurm": HEAD + PRE +
    'CMD="python pretrain_gpt.py --lr 0.1 --train-iters 10"\nsrun $CMD\n',
    # an array that holds the arguments
    "array.slurm": HEAD + PRE +
    'ARGS=(pretrain_gpt.py --lr "0.1" \\\n  --train-iters 10)\nARGS+=(--bf16)\n'
    'srun python "${ARGS[@]}"\n',
    # ${LAUNCHER} braces, an empty SRUN_ARGS that vanishes, the command split over lines
    # a launcher script that submits the training as `sbatch --wrap`: its own batch job
    "sbatch_wrap.sh": "#!/bin/bash\n" + PRE + 'sbatch --gres=gpu:4 --time=20:00:00 '
    '--wrap="module purge; module load pytorch-gpu; python3 pretrain_gpt.py --lr 0.1 '
    '--train-iters 10"\n',
    # eval of the joined command, the launcher in a variable
    "eval.slurm": HEAD + PRE + 'CMD="srun --jobid $SLURM_JOB_ID python pretrain_gpt.py '
    '--lr 0.1"\neval "$CMD --train-iters 10"\n',
    # a repo script run by its shebang through a variable the doctor cannot read
    "direct_py.slurm": HEAD + "source $HOME/site-env.sh\n"
    "$REPO_PATH/tools/hub_sync.py --repo-path logs --patterns '*.txt'\n",
    "braces.slurm": HEAD + PRE + LAUNCHER.replace('SRUN_ARGS="--wait=60 --kill-on-bad-exit=1"',
                                                  'SRUN_ARGS=""') +
    'srun $SRUN_ARGS bash -c "${LAUNCHER} --node_rank \\$SLURM_PROCID ${CMD}"\n',
}


def _repo(tmp: Path) -> Path:
    repo = tmp / "repo"
    (repo / "tools").mkdir(parents=True)
    (repo / "pretrain_gpt.py").write_text("import torch.distributed as dist\n")
    (repo / "tools" / "preprocess_data.py").write_text("print('preprocess')\n")
    sync = repo / "tools" / "hub_sync.py"
    sync.write_text("#!/usr/bin/env python\nprint('sync')\n")
    sync.chmod(0o755)
    for name, text in SCRIPTS.items():
        (repo / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    return repo


def _stubs(tmp: Path, records: Path) -> Path:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for name, text in (("python", RECORD.format(python=sys.executable, records=str(records))),
                       ("srun", SRUN), ("sbatch", SBATCH), ("module", "#!/bin/sh\n"),
                       ("scontrol", "#!/bin/sh\necho node1\necho node2\n"),
                       ("clear", "#!/bin/sh\n"), ("tee", "#!/bin/sh\ncat\n")):
        p = bin_dir / name
        p.write_text(text)
        p.chmod(p.stat().st_mode | stat.S_IEXEC)
    (bin_dir / "python3").symlink_to(bin_dir / "python")
    return bin_dir


def _bash_runs(repo: Path, bin_dir: Path, records: Path, script: str) -> list:
    """What bash really starts: each python's (entry and args, under srun), in order."""
    for old in records.iterdir():
        old.unlink()
    home = repo.parent / "home"   # the site's environment file, outside the repo
    home.mkdir(exist_ok=True)
    (home / "site-env.sh").write_text(f"REPO_PATH={repo}\n")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "SLURM_JOB_ID": "7", "SLURM_PROCID": "0",
           "SLURM_NNODES": "2", "HOME": str(home)}
    proc = subprocess.run(["bash", script], cwd=repo, env=env, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    recs = [json.loads(p.read_text()) for p in sorted(records.iterdir(),
                                                      key=lambda p: p.stat().st_mtime_ns)]
    return [(_rel(repo, r["argv"]), r["srun"]) for r in recs]


def _rel(repo: Path, argv: list) -> tuple:
    # `pwd`/pretrain_gpt.py is the working directory's file: the repo's, relative
    return tuple(a[len(str(repo)) + 1:] if a.startswith(f"{repo}/") else a for a in argv)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_the_doctors_steps_are_what_bash_runs(tmp_path, script):
    records = tmp_path / "records"
    records.mkdir()
    repo = _repo(tmp_path)
    ran = _bash_runs(repo, _stubs(tmp_path, records), records, script)
    job = Job(repo, sbatch=[str(repo / script)], env={"SLURM_JOB_ID": "7"})
    steps = [s for s in job.steps(job.scripts[0]) if s.is_training]
    # (an entry behind a variable the doctor cannot read: the repo file it ends with)
    modelled = [((re.split(r"\$\{?\w+\}?/", s.entry)[-1], *s.args),
                 any(x.kind == "srun" for x in s.chain)) for s in steps]
    assert modelled == ran
    # the training step: the one under srun and the launcher, not the preprocessing line
    chosen = training_step(job.steps(job.scripts[0]))
    if script == "direct_py.slurm":
        assert chosen.entry == "$REPO_PATH/tools/hub_sync.py", chosen
        return
    assert chosen.entry == "pretrain_gpt.py" and job.entry_file(chosen) == \
        repo / "pretrain_gpt.py", chosen


def test_the_report_names_the_training_step_each_check_judged(tmp_path):
    repo = _repo(tmp_path)
    script = "double_quotes.slurm"
    code, doc = run_json("--repo", str(repo), "--static", "--sbatch", str(repo / script),
                         "--only", "exit-masks-errors,nccl-env-deprecated")
    line = SCRIPTS[script].splitlines().index(next(
        x for x in SCRIPTS[script].splitlines() if x.startswith("clear; srun"))) + 1
    for r in doc["results"]:
        assert r["steps"] == [f"{script}:{line}"], r


def test_a_script_with_no_python_step_says_so(tmp_path):
    repo = _repo(tmp_path)
    (repo / "none.slurm").write_text(textwrap.dedent("""\
        #!/bin/bash
        #SBATCH --nodes=1
        srun ./a.out
        """))
    proc_code, doc = run_json("--repo", str(repo), "--static", "--sbatch",
                              str(repo / "none.slurm"), "--only", "nccl-env-deprecated")
    assert doc["results"][0]["steps"] == ["none.slurm (no step that runs a Python program)"]
    assert proc_code == 0
    # -v says it on the pass row too: a pass over no step is not a silent one
    table = run_doctor("run", "--repo", str(repo), "--static", "--sbatch",
                       str(repo / "none.slurm"), "--only", "nccl-env-deprecated", "-v").stdout
    row = next(x for x in table.splitlines() if "nccl-env-deprecated" in x)
    assert row.startswith("pass") and \
        "[judged: none.slurm (no step that runs a Python program)]" in row, table
