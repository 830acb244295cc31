"""Job scripts that define shell functions (`name() {`, `name () {`, `function name {`,
`name() ( … )`): job-exit-masks-failure used to read no command in them, so it judged no
step there. A function's body runs where the function is called, not where it is defined:
the doctor now leaves definitions out and reads a call as its body. The oracle is the real
bash, running each script with a training step that exits 3: where the doctor reports the
failure as hidden the script exits 0, where it is silent the script fails."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import git_repo, result_of, run_doctor, validate_report
from harness import bash_as_slurm

CHECK = "job-exit-masks-failure"
HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n"
FAILS = "import sys\nsys.exit(3)\n"

# name -> (script after HEAD, (line, severity) of the finding, or None: silent)
CASES = {
    # a definition before the step, `exit 0` after it
    "paren_exit_0": ("setup(){\n  mkdir -p out\n}\nsetup\nsrun python3 train.py\nexit 0\n",
                     (9, "error")),
    "paren_space": ("setup () {\n  mkdir -p out\n}\nsrun python3 train.py\necho done\n",
                    (8, "error")),
    "function_kw": ("function setup {\n  mkdir -p out\n}\nsrun python3 train.py\nexit 0\n",
                    (8, "error")),
    "function_kw_parens": ("function setup() {\n  mkdir -p out\n}\nsetup\n"
                           "srun python3 train.py\necho done\n", (9, "error")),
    "one_line": ("log() { echo \"$(date) $*\"; }\nsrun python3 train.py\nexit 0\n",
                 (6, "error")),
    "brace_next_line": ("setup()\n{\n  mkdir -p out\n}\nsrun python3 train.py\nexit 0\n",
                        (9, "error")),
    "subshell_body": ("setup() (\n  cd /tmp\n)\nsrun python3 train.py\necho done\n",
                      (8, "error")),
    # the step in a function: judged where the function is called
    "step_in_function": ("train() {\n  srun python3 train.py\n}\ntrain\necho done\n",
                         (8, "error")),
    # a function called after the step: its body's last command is the job's status
    "log_last": ("log() {\n  echo \"$@\"\n}\nsrun python3 train.py\nlog finished\n",
                 (5, "error")),
    # correct forms: the step's status reaches Slurm
    "set_e_call": ("set -e\ntrain() {\n  srun python3 train.py\n}\ntrain\necho done\n",
                   None),
    "rc_kept": ("cleanup() {\n  rm -f tmp.txt\n}\nsrun python3 train.py\nrc=$?\ncleanup\n"
                "exit $rc\n", None),
    "step_last_in_call": ("train() {\n  echo start\n  srun python3 train.py\n}\ntrain\n",
                          None),
    # a function that exits on failure, called after the step
    "check_exit": ("check() {\n  if [ $1 -ne 0 ]; then\n    exit $1\n  fi\n}\n"
                   "srun python3 train.py\ncheck $?\necho done\n", None),
}


def _script(name: str) -> str:
    return HEAD + CASES[name][0]


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("shellfn")
    files = {f"{name}.sbatch": _script(name) for name in CASES}
    files["train.py"] = FAILS
    return git_repo(root, files)


def test_scripts_with_functions_are_judged_at_the_right_line(repo):
    proc = run_doctor("run", "--static", "--repo", str(repo), "--select", CHECK,
                      "--format", "json")
    assert "Traceback" not in proc.stderr, proc.stderr
    res = result_of(validate_report(json.loads(proc.stdout)), CHECK)
    got = {f["location"]["path"][:-len(".sbatch")]: (f["location"]["line"], f["severity"])
           for f in res["findings"]}
    want = {name: case[1] for name, case in CASES.items() if case[1] is not None}
    assert got == want
    msgs = {f["location"]["path"]: f["message"] for f in res["findings"]}
    # the step inside the function is named at its own line, the `echo` after the call
    assert "step_in_function.sbatch:5" in msgs["step_in_function.sbatch"]
    assert "`echo done`" in msgs["step_in_function.sbatch"]
    assert proc.returncode == 1


def test_bash_agrees_flagged_scripts_exit_0_and_silent_ones_fail(tmp_path):
    for name, (_, want) in CASES.items():
        work = tmp_path / name
        work.mkdir()
        (work / "train.py").write_text(FAILS)
        script = work / "job.sbatch"
        script.write_text(_script(name))
        code = bash_as_slurm(script)
        assert (code == 0) == (want is not None), (name, code)
