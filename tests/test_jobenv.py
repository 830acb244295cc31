"""The effective job environment, evaluated on real-world job scripts (tests/data/sbatch/).

seed000/seed002/seed004 are the seeds' own scripts (../shared/seeds/); the
LUMI EasyBuild one collects the idioms LUMI's docs use for MIOpen caches.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from doctor.job.env import effective_env
from doctor.job.sbatch import load_sbatch, parse_sbatch

DATA = Path(__file__).parent / "data" / "sbatch"
LOGIN = {"HOME": "/users/ammar", "USER": "ammar", "PYTHONPATH": "/opt/site"}


def env_of(name: str, login: dict = LOGIN, in_job: bool = False):
    script = load_sbatch(DATA / name, name)
    return script, effective_env(login, script, in_job=in_job)


def env_text(text: str, login: dict = LOGIN, in_job: bool = False):
    return effective_env(login, parse_sbatch(text, Path("t.sbatch"), "t.sbatch"), in_job=in_job)


def test_seed000_miopen_exports_are_per_job_not_per_node():
    script, env = env_of("seed000_topoflow_miopen.sbatch")
    db = env["MIOPEN_USER_DB_PATH"]
    assert (db.value, db.source, db.path, db.line) == (
        "/tmp/miopen_cache_$SLURM_JOB_ID", "sbatch", "seed000_topoflow_miopen.sbatch", 11)
    assert db.parts == {"job"} and db.resolved
    cache = env["MIOPEN_CUSTOM_CACHE_DIR"]  # =$MIOPEN_USER_DB_PATH inherits its parts
    assert (cache.value, cache.line, cache.parts) == (db.value, 12, {"job"})
    assert env["MIOPEN_FIND_MODE"].value == "1"
    assert script.nodes == 16 and script.gpus_per_node()[0] == 8


def test_seed002_outer_script_exports_containlibs_but_not_sif():
    script, env = env_of("seed002_lumi_outer.sbatch")
    assert env["SINGULARITY_CONTAINLIBS"].value == \
        "/usr/lib64/libcxi.so.1,/opt/rocm/lib/librocm_smi64.so.7"
    assert env["SINGULARITY_CONTAINLIBS"].line == 14
    assert "SIF" not in env  # SIF=... without export stays a shell variable
    count, directive = script.gpus_per_node()
    assert (count, directive.key, directive.line) == (1, "gpus", 6)
    assert script.nodes is None


def test_seed002_inner_script_prepends_to_login_pythonpath():
    _, env = env_of("seed002_lumi_inner.sh")
    assert env["PYTHONPATH"].value == ("/scratch/project_465002500/vcloud/code/src:"
                                       "/projappl/project_465002500/pylibs:/opt/site")
    _, env = env_of("seed002_lumi_inner.sh", login={"HOME": "/users/ammar"})
    assert env["PYTHONPATH"].value.endswith("/pylibs:")  # ${PYTHONPATH:-} when unset
    assert env["PYTORCH_HIP_ALLOC_CONF"].value == "expandable_segments:True"


def test_seed004_trailing_comments_are_not_values():
    script, env = env_of("seed004_nccl_debug.sbatch")
    assert env["NCCL_TIMEOUT_MINUTES"].value == "60"
    assert env["MU_DL_TIMEOUT"].value == "300"
    assert script.gpus_per_node()[0] == 2 and script.nodes == 1


def test_lumi_idioms_parts_and_lines():
    script, env = env_of("lumi_easybuild_per_node.sbatch")
    assert script.nodes == 4  # --nodes=2-4: the maximum
    assert env["MIOPEN_CUSTOM_CACHE_DIR"].value == "$(mktemp -d)/cache"
    assert env["MIOPEN_CUSTOM_CACHE_DIR"].parts == {"tmp"}
    # ${MIOPEN_USER_DB_PATH:-...} keeps the earlier value, and what it knew about it
    db = env["MIOPEN_USER_DB_PATH"]
    assert (db.value, db.line, db.parts) == ("$(mktemp -d)/config", 11, {"tmp"})
    root = env["CACHE_ROOT"]  # set, then `export CACHE_ROOT`
    assert root.value == "/tmp/ammar-miopen-cache-$SLURM_NODEID"  # $(whoami) → the user
    assert root.parts == {"user", "node"} and root.line == 10
    assert env["MASTER_ADDR"].unresolved  # a command the doctor cannot run
    assert env["MASTER_PORT"].value == "29500"
    assert env["RUN_DIR"].value == "/scratch/project_465000001/runs/%j"
    assert env["RUN_DIR"].parts == {"job"}
    assert env["LOGDIR"].parts == {"node", "rank"}
    assert env["ROCR_VISIBLE_DEVICES"].value == "$SLURM_LOCALID"
    assert env["ROCR_VISIBLE_DEVICES"].parts == {"rank"}
    assert env["TMP_EMPTY"].value == ""
    assert any("module load" in n for n in env.notes)


def test_unset_and_non_exported_and_allexport():
    env = env_text("#!/bin/bash\nexport A=1\nunset A\nB=2\nset -a\nC=3\nset +a\nD=4\n")
    assert "A" not in env and "B" not in env and "D" not in env
    assert env["C"].value == "3"


@pytest.mark.parametrize("raw,parts", [
    ("/scratch/p/$SLURM_JOB_ID", {"job"}), ("/scratch/p/${SLURM_JOBID}", {"job"}),
    ("/scratch/p/%j", {"job"}), ("/s/$SLURMD_NODENAME", {"node"}), ("/s/$(hostname)", {"node"}),
    ("/s/$HOSTNAME", {"node"}), ("/s/%N", {"node"}), ("/s/$SLURM_NODEID", {"node"}),
    ("/s/$SLURM_PROCID", {"rank"}), ("/s/$SLURM_LOCALID", {"rank"}), ("/s/$LOCAL_RANK", {"rank"}),
    ("/s/$USER", {"user"}), ("/s/$(whoami)", {"user"}), ("$(mktemp -d)", {"tmp"}),
    ("/s/plain", set()),
])
def test_parts_of_a_value(raw, parts):
    env = env_text(f"#!/bin/bash\nexport X={raw}\n")
    assert env["X"].parts == parts


def test_default_and_tilde_and_login_values():
    env = env_text('#!/bin/bash\nexport A="${MISSING:-/tmp/x}"\nexport B=~/miopen\n'
                   'export C="$HOME/y"\n')
    assert env["A"].value == "/tmp/x" and env["A"].resolved
    assert env["B"].value == "/users/ammar/miopen" and "user" in env["B"].parts
    assert env["C"].value == "/users/ammar/y"
    assert env["HOME"].source == "login" and env["HOME"].where() == "login environment"
    # outside a job $SLURM_JOB_ID stays symbolic even if the login shell has one
    env = env_text("#!/bin/bash\nexport A=/t/$SLURM_JOB_ID\n", login={"SLURM_JOB_ID": "1"})
    assert env["A"].value == "/t/$SLURM_JOB_ID"
    env = env_text("#!/bin/bash\nexport A=/t/$SLURM_JOB_ID\n", login={"SLURM_JOB_ID": "77"},
                   in_job=True)
    assert env["A"].value == "/t/77" and env["A"].parts == {"job"}


def test_default_word_quotes_are_removed():
    """bash: ${MODULE:-"llama3"} is llama3 (torchtitan's multinode_trainer.slurm)."""
    from doctor.job.shell import expand

    assert expand('${MODULE:-"llama3"}', lambda n: None).text == "llama3"
    assert expand('"${C:-"a b"}"', lambda n: None).text == "a b"
