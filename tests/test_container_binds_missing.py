"""container-binds-missing through the real CLI (`doctor run --static`).

No Singularity/Apptainer runtime can be installed here, so the oracle is apptainer's
documented semantics, not a container run: the default binds ($HOME, the working
directory "unless its path contains symlinks", /tmp, /var/tmp, /proc, /sys, /dev) from
https://apptainer.org/docs/user/latest/bind_paths_and_mounts.html, `--contain` giving
empty /tmp and $HOME (apptainer-exec(1)), `-B src[:dst[:opts]]` comma lists, and
APPTAINER_BINDPATH. Seed 002's own sbatch lines are the LUMI case: without
SINGULARITY_CONTAINLIBS and the project binds the job fails; the fix the report prints,
pasted in, makes it pass.
"""
from __future__ import annotations

from pathlib import Path

from conftest import result_of, run_json

CHECK = "container-binds-missing"
SIF = '"/appl/local/csc/soft/ai/images/pytorch_2.5.1_lumi_rocm6.2.4_flash-attn-3.0.0.post1.sif"'
SEED_HEAD = ("#!/bin/bash\n#SBATCH --account=project_465002500\n#SBATCH --partition=small-g\n"
             "#SBATCH --gpus=1\n\nSIF=" + SIF + "\ncd /scratch/project_465002500/vcloud/code\n")
SEED_INNER = ('#!/bin/bash\nexport PYTHONPATH="/scratch/project_465002500/vcloud/code/src:'
              '/projappl/project_465002500/pylibs:${PYTHONPATH:-}"\n'
              "python3 scripts/train.py --stage 0\n")


def make_repo(root: Path, sbatch: str, site: str = "lumi", inner: str = SEED_INNER) -> Path:
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "train.py").write_text("print('train')\n")
    (root / "inner.sh").write_text(inner)
    (root / "job.sbatch").write_text(sbatch)
    (root / "doctor.yaml").write_text(f"site: {site}\n")
    return root


def run(repo: Path, home: str = "/users/digifarm") -> tuple:
    code, doc = run_json("--static", "--only", CHECK, "--repo", str(repo),
                         "--sbatch", str(repo / "job.sbatch"),
                         env={"PATH": "/usr/bin:/bin", "HOME": home})
    return code, result_of(doc, CHECK)


def test_seed002_without_bindings_fails_and_the_printed_fix_passes(tmp_path):
    step = 'srun singularity exec "$SIF" bash inner.sh\n'
    repo = make_repo(tmp_path / "r", SEED_HEAD + step)
    code, res = run(repo)
    assert code == 1 and res["severity"] == "error", res
    errors = {f["data"].get("path") for f in res["findings"] if f["severity"] == "error"}
    assert {"/scratch/project_465002500/vcloud/code/src", "/projappl/project_465002500/pylibs",
            "/scratch/project_465002500/vcloud/code/scripts/train.py"} <= errors
    assert any("symlinks" in f["message"] for f in res["findings"])
    (lib,) = [f for f in res["findings"] if "missing" in f["data"]]
    assert lib["severity"] == "error" and "seed 002" in lib["message"]
    binds = sorted({f["data"]["bind"] for f in res["findings"] if "bind" in f["data"]})
    assert binds == ["/projappl/project_465002500", "/scratch/project_465002500"]
    fixed = (SEED_HEAD + lib["commands"][0] + "\nsrun singularity exec "
             + " ".join(f"-B {b}" for b in binds) + ' "$SIF" bash inner.sh\n')
    (repo / "job.sbatch").write_text(fixed)
    code, res = run(repo)
    assert (code, res["status"]) == (0, "pass"), res


def test_working_directory_is_bound_unless_contained_or_symlinked(tmp_path):
    head = "#!/bin/bash\ncd /work/lab/code\nexport HF_HOME=/tmp/hf\n"
    plain = make_repo(tmp_path / "a", head + "srun apptainer exec img.sif "
                      "python scripts/train.py\n", site="none", inner="")
    code, res = run(plain)
    assert res["status"] == "skip" and "site profile" in res["reason"], res
    contained = make_repo(tmp_path / "b", head + "srun apptainer exec --contain img.sif "
                          "python scripts/train.py\n", site="none", inner="")
    code, res = run(contained)
    assert code == 1 and res["severity"] == "error", res
    paths = {f["data"]["path"]: f["severity"] for f in res["findings"]}
    assert paths == {"/work/lab/code/scripts/train.py": "error", "/tmp/hf": "warning"}
    # the same cwd under LUMI's symlinked /scratch is not bound by default
    lumi = make_repo(tmp_path / "c", "#!/bin/bash\ncd /scratch/project_465002500/code\n"
                     "srun apptainer exec -B /opt/cray/libfabric img.sif python scripts/train.py\n",
                     inner="")
    code, res = run(lumi)
    (f,) = res["findings"]
    assert f["severity"] == "error" and "symlinks" in f["message"], res


def test_no_home_and_bindpath_variable(tmp_path):
    sb = ("#!/bin/bash\n#SBATCH --nodes=2\ncd /users/digifarm/code\n"
          "export APPTAINER_BINDPATH=/opt/cray,/data:/mnt/data:ro\n"
          "export PYTHONPATH=/mnt/data/lib\n"
          "srun apptainer exec {flag} img.sif python /users/digifarm/tools/train.py\n")
    code, res = run(make_repo(tmp_path / "a", sb.format(flag=""), inner=""))
    assert (code, res["status"]) == (0, "pass"), res        # $HOME, cwd, /mnt/data, /opt/cray
    code, res = run(make_repo(tmp_path / "b", sb.format(flag="--no-home"), inner=""))
    (f,) = res["findings"]
    # (the working directory stays bound: only $HOME itself is dropped)
    assert f["data"]["path"] == "/users/digifarm/tools/train.py" and f["severity"] == "error"
    # multi-node without the site's fabric bind: warning
    code, res = run(make_repo(tmp_path / "c", sb.replace("/opt/cray,", "").format(flag=""),
                              inner=""))
    (f,) = res["findings"]
    assert f["severity"] == "warning" and f["data"]["missing"] == ["/opt/cray/libfabric"]


def test_precision_module_load_and_unresolved_variables_are_warnings(tmp_path):
    step = 'srun singularity exec --rocm "$SIF" bash inner.sh\n'
    # a module the site profile does not know may set the bind variables: warnings
    repo = make_repo(tmp_path / "a", SEED_HEAD + "module load my-bindings\n" + step)
    code, res = run(repo)
    assert code == 0 and res["severity"] == "warning", res
    assert all("module load my-bindings" in f["message"] for f in res["findings"])
    inner = "#!/bin/bash\nexport PYTHONPATH=$CODE_ROOT/src\npython3 scripts/train.py\n"
    repo = make_repo(tmp_path / "b", SEED_HEAD.replace("cd /scratch", "cd /users/digifarm")
                     + 'export SINGULARITY_CONTAINLIBS="/usr/lib64/libcxi.so.1,'
                     '/opt/rocm/lib/librocm_smi64.so.7"\n'
                     + step, inner=inner)
    code, res = run(repo)
    (f,) = res["findings"]
    assert f["severity"] == "warning" and f["data"]["unresolved"] == "$CODE_ROOT", res


def test_lumi_bindings_module_binds_what_the_profile_says(tmp_path):
    """Issue 26: `module load singularity-AI-bindings` (also NAME/VERSION) is LUMI's
    documented binding; the lumi profile knows its SINGULARITY_BIND (/scratch, /projappl,
    /opt/cray, libcxi, ...), so the seed's project paths and libcxi are bound. What it does
    not bind is still said: librocm_smi64, which seed 002 alone names (a warning with
    --rocm, which binds the site's liblist)."""
    step = 'srun singularity exec --rocm "$SIF" bash inner.sh\n'
    for module in ("singularity-AI-bindings", "singularity-AI-bindings/24.03"):
        repo = make_repo(tmp_path / module.replace("/", "_"),
                         SEED_HEAD + f"module load {module}\n" + step)
        code, res = run(repo)
        assert code == 0, res
        assert [f["data"].get("missing") for f in res["findings"]] == [
            ["/opt/rocm/lib/librocm_smi64.so.7"]], res
        assert "module load" not in res["findings"][0]["message"]
