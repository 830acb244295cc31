"""Environment and topology oracle: doctor/job/steps.py against the real local Slurm.

Generated job scripts (one per export mode and topology, several launching lines
each) run for real under `sbatch` on the two-node cluster of tests/slurm/cluster.sh.
A stub directory first in PATH (or named by absolute path where the step has no
PATH) stands in for python / python3 / torchrun / singularity / apptainer: every
python process writes one JSON record (argv, its whole environment, SLURM_PROCID,
SLURMD_NODENAME) to the test's tmp dir; the torchrun stub forks --nproc_per_node
recorder processes, as torchrun starts that many workers. For every launching
line (tagged `--case X`), the model's `Step` must match what the ranks received:
 - every variable the checks read (MIOPEN_*, PYTORCH_*_ALLOC_CONF, NCCL_*,
   TORCH_NCCL_*, WANDB_MODE, PYTHONPATH, ROCR/HIP/CUDA_VISIBLE_DEVICES) and the
   test's ORC_* markers: a value the model knows equals the received one on every
   rank, and a variable the model says is absent is absent;
 - ranks per node (the most ranks on one node), the node count, and
   SLURM_CPUS_PER_TASK where the model knows the CPUs per task.

Container runtimes are not installable here, so singularity/apptainer are a
documented-semantics stub (bin/container below), not the real runtime: it
implements Apptainer's documented order ("Environment and Metadata"): the host
environment unless --cleanenv/-e/--containall (which keeps only TERM, HOME, LANG,
USER and the proxy variables), then SINGULARITYENV_X / APPTAINERENV_X as X
(APPTAINERENV_ winning over SINGULARITYENV_), then --env-file, then --env, each
overriding the one before; then it execs the command. What is proven for the
container channels is the model's agreement with that documented order.

Settled against Slurm 22.05 by this oracle (the two questions of issue 12):
 - `#SBATCH --export=NONE` also strips the job's srun steps: sbatch sets
   SLURM_EXPORT_ENV=NONE in the batch environment and srun takes its default
   --export from it, so a plain `srun cmd` starts with only SLURM_* (and TMPDIR)
   and none of the batch script's exports; a command without a '/' is not even
   found (no PATH: "execve(): python: No such file or directory").
   `srun --export=ALL` or `export SLURM_EXPORT_ENV=ALL` in the script restores
   the batch environment. (The batch script itself gets the user's login
   environment from the node, as with --get-user-env, not the submitting shell's.)
 - `srun --export=A,B` (no ALL) does NOT keep PATH (nor HOME): the task has
   SLURM_*, TMPDIR and A, B only, so the program must be named by absolute path
   or PATH listed. Of two --export options, the last wins.
Also learned here (and fixed in doctor/job/steps.py): `#SBATCH --export=A,B` and
`--export=ALL,X=v` filter like srun's and reach the steps through SLURM_EXPORT_ENV;
srun inside the job reads the job's SLURM_NTASKS as its -n, so `srun -N2
--ntasks-per-node=1` in a `--nodes=2 --ntasks-per-node=2` job still starts 4 tasks
("can't honor --ntasks-per-node"); a python line not under srun runs once, on the
first node.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from doctor.job.context import Job

pytestmark = pytest.mark.slurm

CHECKED = re.compile(r"^(MIOPEN_\w+|NCCL_\w+|TORCH_NCCL_\w+|PYTORCH_\w*ALLOC_CONF|WANDB_MODE|"
                     r"PYTHONPATH|ROCR_VISIBLE_DEVICES|HIP_VISIBLE_DEVICES|"
                     r"CUDA_VISIBLE_DEVICES|ORC_\w+)$")

RECORDER = '''#!{python} -I
import json, os, sys, uuid
def record(argv):
    rec = {{"argv": argv, "env": dict(os.environ), "procid": os.environ.get("SLURM_PROCID"),
           "node": os.environ.get("SLURMD_NODENAME")}}
    with open(os.path.join({records!r}, uuid.uuid4().hex + ".json"), "w") as f:
        f.write(json.dumps(rec))
'''

PYTHON = RECORDER + '''
record(sys.argv)
'''

TORCHRUN = RECORDER + '''
args, n = sys.argv[1:], 1
while args and args[0].startswith("-"):
    key, eq, value = args.pop(0).partition("=")
    if not eq and key in ("--nproc_per_node", "--nproc-per-node", "--nnodes", "--rdzv_backend",
                          "--rdzv-backend", "--rdzv_endpoint", "--rdzv-endpoint"):
        value = args.pop(0)
    if key in ("--nproc_per_node", "--nproc-per-node"):
        n = int(value)
pids = []
for local_rank in range(n):
    pid = os.fork()
    if pid == 0:
        os.environ.update(LOCAL_RANK=str(local_rank), LOCAL_WORLD_SIZE=str(n))
        record(["torchrun-worker"] + args)
        os._exit(0)
    pids.append(pid)
for pid in pids:
    os.waitpid(pid, 0)
'''

# Apptainer's documented order; see the module docstring.
CONTAINER = '''#!{python} -I
import os, re, shutil, sys
args = sys.argv[1:]
assert args.pop(0) in ("exec", "run")
VALUE = {{"--env", "--env-file", "-B", "--bind", "--pwd", "-W", "--home", "-H"}}
KEEP = ("TERM", "HOME", "LANG", "USER", "http_proxy", "https_proxy", "no_proxy",
        "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "all_proxy", "ALL_PROXY")
items, files, clean = [], [], False
while args[0].startswith("-"):
    key, eq, value = args.pop(0).partition("=")
    if not eq and key in VALUE:
        value = args.pop(0)
    clean = clean or key in ("--cleanenv", "-e", "--containall", "-C")
    if key == "--env":
        items += re.split(r",(?=[A-Za-z_][A-Za-z0-9_]*=)", value)
    elif key == "--env-file":
        files.append(value)
image, cmd = args[0], args[1:]
host = dict(os.environ)
env = {{k: v for k, v in host.items() if k in KEEP}} if clean else dict(host)
if clean:  # the image's own PATH (here: the host's, where the stub python lives)
    env["PATH"] = host.get("PATH", "")
for prefix in ("SINGULARITYENV_", "APPTAINERENV_"):
    env.update({{k[len(prefix):]: v for k, v in host.items() if k.startswith(prefix)}})
for k in [k for k in env if k.startswith(("SINGULARITYENV_", "APPTAINERENV_"))]:
    del env[k]
for f in files:
    for line in open(f):
        line = line.strip()
        if line and not line.startswith("#"):
            k, _, v = line.removeprefix("export ").partition("=")
            env[k] = v.strip("\\"'")
for item in items:
    k, _, v = item.partition("=")
    env[k] = v
exe = cmd[0] if "/" in cmd[0] else shutil.which(cmd[0], path=host.get("PATH", ""))
os.execve(exe, cmd, env)
'''


def _jobs(bin_dir: Path) -> dict:
    """name → (directives, body, {extra file: text}); each line that runs python
    is tagged `--case X`. `$BIN/python` where the step has no PATH."""
    py = f"{bin_dir}/python"
    return {
        "exports": (["--nodes=2", "--ntasks-per-node=2"], f"""
export ORC_B=batch
export NCCL_DEBUG=INFO
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
ORC_SHELL=not-exported
unset ROCR_VISIBLE_DEVICES
source env.sh
srun python train.py --case e1
WANDB_MODE=offline srun -N1 -n1 python train.py --case e2
srun -N2 --ntasks-per-node=1 env TORCH_NCCL_ASYNC_ERROR_HANDLING=1 python train.py --case e3
srun -N1 -n1 --export=ALL,ORC_X=x,HIP_VISIBLE_DEVICES=0 python train.py --case e4
srun -N1 -n1 --export=NCCL_DEBUG,ORC_B {py} train.py --case e5
srun -N1 -n1 --export=NONE {py} train.py --case e6
srun -n3 python train.py --case e7
srun -N2 --ntasks-per-node=1 torchrun --nproc_per_node=3 train.py --case e8
ORC_PRE=pre srun -N1 -n1 bash inner_e.sh
S=inner2_e.sh
srun -N2 --ntasks-per-node=1 bash $S
ORC_PY=inline python3 train.py --case e11
srun --ntasks-per-node=1 python train.py --case e12
torchrun --nproc-per-node 2 train.py --case e13
srun -N2 -n2 torchrun --nproc_per_node=2 train.py --case e14
""", {"env.sh": "export MIOPEN_USER_DB_PATH=/tmp/orc-miopen\nexport ORC_SRC=sourced\n"
                "ORC_SRC_LOCAL=not-exported\nexport NCCL_DEBUG=SOURCED\n",
      "inner_e.sh": "export MIOPEN_DISABLE_CACHE=1\nexport NCCL_DEBUG=INNER\n"
                    "ORC_INNER=1 python train.py --case e9\n",
      "inner2_e.sh": "export ORC_INNER2=yes\npython train.py --case e10\n"}),

        "cpus": (["--nodes=1", "--ntasks-per-node=1", "--cpus-per-task=2"], """
srun python train.py --case c1
srun -c1 python train.py --case c2
srun -n2 -c1 python train.py --case c3
""", {}),

        "none": (["--export=NONE", "--nodes=2", "--ntasks-per-node=1"], f"""
export ORC_B=batch
export NCCL_DEBUG=INFO
srun {py} train.py --case n1
srun --export=ALL {py} train.py --case n2
WANDB_MODE=disabled {py} train.py --case n3
srun --export=ALL,ORC_X=x -N1 -n1 {py} train.py --case n4
export SLURM_EXPORT_ENV=ALL
srun {py} train.py --case n5
""", {}),

        "sbexport": (["--export=ALL,ORC_SB=sb,NCCL_DEBUG=SB", "--nodes=1"], """
srun python train.py --case s1
""", {}),

        "sblist": (["--export=ORC_LOGIN,NCCL_DEBUG", "--nodes=1"], f"""
export ORC_B=batch
srun {py} train.py --case l1
srun --export=ALL {py} train.py --case l2
""", {}),

        "container": (["--nodes=1", "--ntasks-per-node=1"], """
export SINGULARITYENV_ORC_PFX=prefix
export APPTAINERENV_NCCL_DEBUG=TRACE
export APPTAINERENV_ORC_BOTH=apptainer
export SINGULARITYENV_ORC_BOTH=singularity
srun singularity exec --env ORC_E=1,WANDB_MODE=disabled img.sif python train.py --case k1
srun apptainer exec --env-file c.env img.sif python train.py --case k2
srun singularity exec --cleanenv --env ORC_E=2 img.sif python train.py --case k3
srun apptainer exec -e --env-file c.env --env NCCL_DEBUG=ENVWINS img.sif python train.py --case k4
S=inner_k.sh
srun apptainer exec --cleanenv img.sif bash $S
""", {"c.env": "NCCL_DEBUG=ENVFILE\nORC_EF=1\nMIOPEN_USER_DB_PATH=/tmp/ef\n",
      "inner_k.sh": "export MIOPEN_DISABLE_CACHE=1\nORC_IN=1 python train.py --case k5\n"}),
    }


def _login(bin_dir: Path) -> dict:
    """The submitting shell's environment (sbatch exports it by default)."""
    return {"PATH": f"{bin_dir}:/usr/local/bin:/usr/bin:/bin", "HOME": os.environ.get(
        "HOME", "/root"), "ORC_LOGIN": "login", "NCCL_DEBUG": "WARN",
        "PYTHONPATH": "/login/pp", "WANDB_MODE": "online", "NCCL_SOCKET_IFNAME": "lo",
        "PYTORCH_HIP_ALLOC_CONF": "garbage_collection_threshold:0.8",
        "ROCR_VISIBLE_DEVICES": "0,1"}


def _build(tmp: Path) -> tuple:
    repo, bin_dir, records = tmp / "repo", tmp / "repo" / "bin", tmp / "records"
    for d in (repo, bin_dir, records):
        d.mkdir(parents=True)
    stubs = {"python": PYTHON, "python3": PYTHON, "torchrun": TORCHRUN,
             "singularity": CONTAINER, "apptainer": CONTAINER}
    for name, text in stubs.items():
        f = bin_dir / name
        f.write_text(text.format(python=sys.executable, records=str(records)))
        f.chmod(0o755)
    (repo / "train.py").write_text("print('the stub python records instead')\n")
    scripts = []
    for name, (directives, body, files) in _jobs(bin_dir).items():
        for fname, text in files.items():
            (repo / fname).write_text(text)
        script = repo / f"{name}.sbatch"
        script.write_text("#!/bin/bash\n" + "".join(
            f"#SBATCH {d}\n" for d in directives + ["--oversubscribe", f"--job-name=orc-{name}",
                                                    f"--output={tmp}/{name}-%j.out"]) + body)
        scripts.append(script)
    return repo, bin_dir, records, scripts


def _run_all(repo: Path, login: dict, scripts: list, timeout: float = 90) -> None:
    """Submit every script at once (they share the nodes), then poll until all ended."""
    ids = []
    for script in scripts:
        proc = subprocess.run(["sbatch", "--parsable", str(script)], cwd=repo, env=login,
                              capture_output=True, text=True, timeout=30)
        job_id = proc.stdout.strip().split(";")[0]
        assert job_id.isdigit(), f"sbatch {script.name}: {proc.stdout!r} {proc.stderr!r}"
        ids.append(job_id)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        out = subprocess.run(["squeue", "-h", "-j", ",".join(ids), "-o", "%i"],
                             capture_output=True, text=True).stdout.split()
        if not set(out) & set(ids):
            return
        time.sleep(0.5)
    subprocess.run(["scancel", *ids], capture_output=True)
    raise AssertionError(f"jobs {ids} still running after {timeout}s")


def _tag(argv) -> str:
    argv = list(argv)
    return argv[argv.index("--case") + 1] if "--case" in argv else ""


def _compare(step, recs: list) -> list:
    """What the model predicts for one launching line that the ranks contradict."""
    bad = []
    tag = _tag(step.args)
    model = {k: v for k, v in step.env.items() if CHECKED.match(k)}
    for name in sorted(set(model) | {k for r in recs for k in r["env"] if CHECKED.match(k)}):
        v = model.get(name)
        if v is not None and not v.resolved:
            continue
        got = sorted({r["env"].get(name, "<absent>") for r in recs})
        want = v.value if v is not None else "<absent>"
        if got != [want]:
            bad.append(f"{tag} ({step.where}): {name}: model {want!r} "
                       f"({v.channel + ' ' + v.where() if v else 'absent'}), ranks got {got}")
    per_node: dict = {}
    for r in recs:
        per_node[r["node"]] = per_node.get(r["node"], 0) + 1
    rpn = step.ranks_per_node
    if rpn.value is not None and rpn.value != max(per_node.values()):
        bad.append(f"{tag} ({step.where}): ranks per node: model {rpn.value} ({rpn.source}), "
                   f"ranks got {per_node}")
    if step.nodes.value is not None and step.nodes.value != len(per_node):
        bad.append(f"{tag} ({step.where}): nodes: model {step.nodes.value} "
                   f"({step.nodes.source}), ranks ran on {sorted(per_node)}")
    cpt = step.cpus_per_task
    got_cpt = sorted({r["env"].get("SLURM_CPUS_PER_TASK", "<absent>") for r in recs})
    if cpt.value is not None and got_cpt != [str(cpt.value)]:
        bad.append(f"{tag} ({step.where}): cpus per task: model {cpt.value} ({cpt.source}), "
                   f"ranks got SLURM_CPUS_PER_TASK {got_cpt}")
    return bad


def test_model_matches_what_the_ranks_receive(slurm_cluster, tmp_path):
    repo, bin_dir, records, scripts = _build(tmp_path)
    login = _login(bin_dir)
    t0 = time.monotonic()
    _run_all(repo, login, scripts)
    took = time.monotonic() - t0
    recs: dict = {}
    for f in records.glob("*.json"):
        r = json.loads(f.read_text())
        recs.setdefault(_tag(r["argv"]), []).append(r)

    job = Job(repo, static=True, env=login, sbatch=scripts)
    steps = {}
    for script in job.scripts:
        for step in job.steps(script):
            if _tag(step.args):
                steps[_tag(step.args)] = step
    logs = "\n".join(p.read_text() for p in tmp_path.glob("*.out"))
    # every launching line ran (e5/e6/n1 by absolute path: their steps have no PATH)
    bad = [b for tag in sorted(set(steps) & set(recs)) for b in _compare(steps[tag], recs[tag])]
    assert sorted(recs) == sorted(steps), (sorted(set(recs) ^ set(steps)), logs, bad)
    assert not bad, "model ≠ Slurm:\n" + "\n".join(bad)
    n_vars = sum(len({k for r in rs for k in r["env"] if CHECKED.match(k)} |
                     {k for k in steps[t].env if CHECKED.match(k)}) for t, rs in recs.items())
    print(f"oracle: {len(scripts)} job scripts, {len(steps)} launching lines, "
          f"{sum(map(len, recs.values()))} ranks, {n_vars} variable comparisons, {took:.1f}s")


def test_srun_without_path_cannot_find_a_bare_command(slurm_cluster, tmp_path):
    """The two answers of the docstring, as Slurm gives them: a plain srun under
    `#SBATCH --export=NONE`, and `srun --export=A,B`, start without PATH."""
    repo, bin_dir, records, _ = _build(tmp_path)
    script = repo / "nopath.sbatch"
    script.write_text(f"""#!/bin/bash
#SBATCH --nodes=1 --ntasks-per-node=1 --oversubscribe --export=NONE
#SBATCH --output={tmp_path}/nopath-%j.out
export ORC_B=batch
srun python train.py --case p1
srun --export=ALL {bin_dir}/python train.py --case p2
srun --export=ALL,PATH=$PATH:{bin_dir} --export=ORC_B python train.py --case p3
srun --export=ORC_B {bin_dir}/python train.py --case p4
""")
    _run_all(repo, _login(bin_dir), [script])
    recs = {_tag(r["argv"]): r for r in (json.loads(f.read_text())
                                         for f in records.glob("*.json"))}
    log = next(tmp_path.glob("nopath-*.out")).read_text()
    assert "p1" not in recs and "No such file or directory" in log, log
    assert recs["p2"]["env"].get("ORC_B") == "batch"
    assert "p3" not in recs    # the last --export wins: ORC_B only, no PATH
    assert "PATH" not in recs["p4"]["env"] and "HOME" not in recs["p4"]["env"]
    assert recs["p4"]["env"]["ORC_B"] == "batch"
