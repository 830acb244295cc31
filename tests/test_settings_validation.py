"""Issue 16, cause 6: every setting and option is checked by range and form when it is
loaded; a bad one is exit 2 and one line naming the setting, the value and what is
allowed, never a silent default, a crash, or a failure blamed on the user's model."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import run_main, validate_report

SHAPE = "a list of sizes of 1 or more, at most 2**26 elements in all, such as [2, 3, 64, 64]"
WIDE = "a torch version such as 2.5.1, 2.5.1+rocm6.2 or 2.4.0a0+git1234abc"
CUDA_ID = "cuda-tensor-in-shared-cache"
CUDA = f"options.{CUDA_ID}"

# doctor.yaml text → the error after "doctor: error: <file>: ". Each was accepted,
# crashed or was blamed on the model before the fix (the issue's cases first).
BAD_YAML = [
    ("smoke: {world_size: 0}",  # silently ran 2 ranks
     "smoke.world_size: 0 is not a number of ranks from 2 to 64"),
    ("smoke: {world_size: -1}",  # IndexError
     "smoke.world_size: -1 is not a number of ranks from 2 to 64"),
    ("smoke: {world_size: 1}",  # one rank compares its parameters with nobody: a hollow pass
     "smoke.world_size: 1 is not a number of ranks from 2 to 64"),
    ("smoke: {world_size: 65}",
     "smoke.world_size: 65 is not a number of ranks from 2 to 64"),
    ("smoke: {timeout_s: -5}",  # "rank 0: crashed with SIGUSR1"
     "smoke.timeout_s: -5 is not a number of seconds from 1 to 86400"),
    ("smoke: {timeout_s: .nan}",  # "timed out after nans"
     "smoke.timeout_s: nan is not a number of seconds from 1 to 86400"),
    ("smoke: {timeout_s: .inf}",  # OverflowError
     "smoke.timeout_s: inf is not a number of seconds from 1 to 86400"),
    ("smoke: {timeout_s: 0}",  # silently the default 180
     "smoke.timeout_s: 0 is not a number of seconds from 1 to 86400"),
    ("smoke: {backend: evil}",  # "rank 0: raised importing torch" [model: ...]
     "smoke.backend: 'evil' is not auto, gloo or nccl (RCCL on ROCm is nccl)"),
    ("smoke: {backend: ''}",
     "smoke.backend: '' is not auto, gloo or nccl (RCCL on ROCm is nccl)"),
    ("smoke: {model: mypkg.models}",  # "raised while building the model"
     "smoke.model: 'mypkg.models' is not MODULE:FACTORY, such as mypkg.models:build"),
    ("smoke: {input_shape: [-1, 32]}",  # "raised while wrapping the model in DDP"
     f"smoke.input_shape: [-1, 32] is not {SHAPE}"),
    ("smoke: {input_shape: [100000000, 100000000, 100000000]}",  # 4e24 bytes per rank
     f"smoke.input_shape: [100000000, 100000000, 100000000] is not {SHAPE}"),
    ("smoke: {input_shape: []}",  # silently no shape
     f"smoke.input_shape: [] is not {SHAPE}"),
    ("torch_version: banana",  # echoed into findings: "torch banana raises ..."
     f"torch_version: 'banana' is not {WIDE}"),
    ("torch_version: ''",  # silently the installed torch
     f"torch_version: '' is not {WIDE}"),
    ("torch_version: 2.10",  # YAML reads 2.1
     "torch_version must be a str, not float (put it in quotes)"),
    ("waivers: {check: git-large-file}",  # "not LineDict": the loader's class
     "waivers must be a list, not mapping"),
    ("site: {gpus_per_node: -1}",
     "site.gpus_per_node: -1 is not a number of GPUs, 0 or more"),
    ("site: {shared_paths: [scratch]}",  # a prefix that never matches an absolute path
     "site.shared_paths[0]: 'scratch' is not an absolute path"),
    ("site: {local_paths: [/tmp, '']}",
     "site.local_paths[1]: '' is not an absolute path"),
    ("site: {name: ''}", "site.name: '' is not a name"),
    ("site: {cluster: ''}",  # no ClusterName is '': every job would be another cluster's
     "site.cluster: '' is not a Slurm ClusterName, such as lumi"),
    ("site: {cluster: [lumi]}", "site.cluster must be a str, not list"),
    ("site: {modules: {my-binds: [/scratch]}}",  # a list where the variables go
     "site: modules.my-binds must be a mapping of variables"),
    ("site: {modules: {my-binds: {SINGULARITY_BIND: 3}}}",
     "site: modules.my-binds.SINGULARITY_BIND: 3 is not a string"),
    ("configs: ['']",  # internal error: Unacceptable pattern
     "configs[0]: '' is not a glob such as configs/*.yaml"),
    ("caches: ['']",  # scanned the current directory
     "caches[0]: '' is not a path"),
    ("waivers: [{check: git-large-file, reason: '  ', expires: 2030-01-01}]",
     "waivers[0].reason: '  ' is not a reason (some text)"),
    (f"options: {{{CUDA_ID}: {{max_findings: -1}}}}",  # IndexError
     f"{CUDA}.max_findings: -1 is not a whole number, 0 or more"),
    (f"options: {{{CUDA_ID}: {{workers: 2.5}}}}",  # silently 2
     f"{CUDA}.workers: 2.5 is not a whole number, 0 or more"),
    (f"options: {{{CUDA_ID}: {{timeout_s: 0}}}}",
     f"{CUDA}.timeout_s: 0 is not a number of seconds above 0, at most 86400"),
    (f"options: {{{CUDA_ID}: {{timeout_s: 1.0e+10}}}}",  # OverflowError in the runner
     f"{CUDA}.timeout_s: 10000000000.0 is not a number of seconds above 0, at most 86400"),
    ("options: {shm-too-small: {min_gib: .nan}}",
     "options.shm-too-small.min_gib: nan is not a number, 0 or more"),
    ("options: {shm-too-small: {min_gib: .inf}}",
     "options.shm-too-small.min_gib: inf is not a number, 0 or more"),
    ("options: {fd-limit-too-low: {base_fds: -5}}",
     "options.fd-limit-too-low.base_fds: -5 is not a whole number, 0 or more"),
    ("options: {git-large-file: {warn_bytes: ~}}",  # None reached the check
     "options.git-large-file.warn_bytes: null is not a value (leave the option out for "
     "its default, 50000000)"),
]

# [tool.doctor] in pyproject.toml: TOML writes nan and inf bare.
BAD_TOML = [
    ("[tool.doctor.smoke]\ntimeout_s = nan\n",
     "smoke.timeout_s: nan is not a number of seconds from 1 to 86400"),
    ("[tool.doctor.smoke]\ntimeout_s = -inf\n",
     "smoke.timeout_s: -inf is not a number of seconds from 1 to 86400"),
    ("[tool.doctor.smoke]\nworld_size = 0\n",
     "smoke.world_size: 0 is not a number of ranks from 2 to 64"),
    ("[tool.doctor.smoke]\nbackend = \"mpi\"\n",
     "smoke.backend: 'mpi' is not auto, gloo or nccl (RCCL on ROCm is nccl)"),
    ("[tool.doctor]\ntorch_version = \"banana\"\n", f"torch_version: 'banana' is not {WIDE}"),
    (f"[tool.doctor.{CUDA}]\nmax_findings = -1\n",
     f"{CUDA}.max_findings: -1 is not a whole number, 0 or more"),
    ("[tool.doctor.options.shm-too-small]\nbatch_mib = nan\n",
     "options.shm-too-small.batch_mib: nan is not a whole number, 0 or more"),
]

# command-line options that feed the same values
BAD_ARGS = [
    (["--torch-version", "banana"], f"--torch-version: 'banana' is not {WIDE}"),
    (["--torch-version", "2.5.1banana"], f"--torch-version: '2.5.1banana' is not {WIDE}"),
    (["--torch-version", ""], f"--torch-version: '' is not {WIDE}"),
    (["--model", "nocolon"],  # was blamed on the user's model by the smoke
     "--model: 'nocolon' is not MODULE:FACTORY, such as mypkg.models:build"),
    (["--gather", "--gather-timeout", "nan"],  # click's FloatRange(1, 3600) lets nan in
     "--gather-timeout: nan is not a number of seconds from 1 to 3600"),
]

# The edges of every range, each accepted. The null ones are unset values (their
# defaults); before the fix a null list was an internal error and a null
# torch_version became the text "None" in findings.
GOOD_YAML = [
    "select:\nignore: ~\nconfigs:\ncaches:\nseverity:\noptions:\nwaivers:\ntorch_version: ~\n",
    "smoke: {world_size: ~, timeout_s: ~, backend: ~, model: ~, input_shape: ~}\n"
    "site: {gpus_per_node: ~, shared_paths: ~, local_paths: ~, name: ~}\n",
    "smoke: {world_size: 2, timeout_s: 1, backend: auto, model: 'm:f', input_shape: [1]}\n",
    "smoke: {world_size: 64, timeout_s: 86400, backend: NCCL, model: 'a.b:c.d',\n"
    "        input_shape: [2, 3, 64, 64]}\n",
    "smoke: {timeout_s: 1.5, backend: gloo}\n",
    "site: {gpus_per_node: 0, shared_paths: [/scratch], local_paths: [/tmp, /dev/shm],\n"
    "       name: lumi, compute_network: false}\n",
    "torch_version: '2.5.1+rocm6.2'\n",
    "torch_version: '2.13.0'\n",
    "torch_version: '2.4.0a0+git1234abc'\n",
    "torch_version: '2.6.0.dev20241112+cu124'\n",
    "torch_version: '2.3.0a0+40ec155e58.nv24.03'\n",
    "torch_version: '1.13.1.post1'\n",
    "configs: ['configs/*.yaml', '**/*.yml']\ncaches: [c, ~/c, /c]\n",
    f"options: {{{CUDA_ID}: {{max_findings: 0, workers: 0, timeout_s: 0.001,\n"
    "    max_pickle_mib: 0}, shm-too-small: {min_gib: 0, batch_mib: 0},\n"
    "  fd-limit-too-low: {base_fds: 0, fds_per_batch: 0, fds_per_worker: 0},\n"
    "  git-large-file: {warn_bytes: 0, error_bytes: 0}}\n",
    f"options: {{{CUDA_ID}: {{timeout_s: 86400}}, shm-too-small: {{min_gib: 1.0e+300}},\n"
    "  git-large-file: {warn_bytes: 100000000000000000000}}\n",
]


@pytest.fixture
def doctor(monkeypatch, capsys):
    """doctor.cli.main(argv) in this process → (exit code, stdout, stderr)."""
    for name in [n for n in os.environ if n.startswith("SLURM") or n == "DOCTOR_DEBUG"]:
        monkeypatch.delenv(name)

    def run(*argv: str, cwd: Path) -> tuple:
        monkeypatch.chdir(cwd)
        proc = run_main(capsys, *argv)
        return proc.returncode, proc.stdout, proc.stderr
    return run


def one_line_error(code: int, err: str, expected: str) -> None:
    assert code == 2, err
    assert err == f"doctor: error: {expected}\n"


@pytest.mark.parametrize("text,message", BAD_YAML, ids=[t for t, _ in BAD_YAML])
def test_bad_value_in_doctor_yaml(doctor, tmp_path, text, message):
    (tmp_path / "doctor.yaml").write_text(text + "\n")
    code, _, err = doctor("run", "--repo", str(tmp_path), "--static", "--only",
                          "git-large-file", cwd=tmp_path)
    one_line_error(code, err, f"{tmp_path / 'doctor.yaml'}: {message}")


@pytest.mark.parametrize("text,message", BAD_TOML, ids=[t.splitlines()[-1] for t, _ in BAD_TOML])
def test_bad_value_in_pyproject(doctor, tmp_path, text, message):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n" + text)
    code, _, err = doctor("run", "--repo", str(tmp_path), "--static", "--only",
                          "git-large-file", cwd=tmp_path)
    one_line_error(code, err, f"{tmp_path / 'pyproject.toml'}[tool.doctor]: {message}")


@pytest.mark.parametrize("args,message", BAD_ARGS, ids=[" ".join(a) for a, _ in BAD_ARGS])
def test_bad_value_on_the_command_line(doctor, tmp_path, args, message):
    code, _, err = doctor("run", "--repo", str(tmp_path), "--static", "--only",
                          "git-large-file", *args, cwd=tmp_path)
    one_line_error(code, err, message)


def test_edge_values_are_accepted(doctor, tmp_path):
    failed = []
    for text in GOOD_YAML:
        (tmp_path / "doctor.yaml").write_text(text)
        code, out, err = doctor("run", "--repo", str(tmp_path), "--static", "--only",
                                "git-large-file", "--format", "json", cwd=tmp_path)
        if code != 0 or err:
            failed.append((text, code, err))
        else:
            validate_report(json.loads(out))
    assert not failed


def test_null_torch_version_is_unset_not_the_text_none(doctor, tmp_path):
    (tmp_path / "doctor.yaml").write_text("torch_version: ~\n")
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "train.yaml").write_text(
        "loader: {num_workers: 0, prefetch_factor: 2}\n")
    code, out, err = doctor("run", "--repo", str(tmp_path), "--static", "--only",
                            "dataloader-option-conflict", "--format", "json", cwd=tmp_path)
    (finding,) = json.loads(out)["results"][0]["findings"]
    assert code == 1, err
    assert "torch None" not in finding["message"]
    assert finding["data"]["torch_version"] != "None"


@pytest.mark.parametrize("elsewhere", [False, True], ids=["repo-settings", "--settings"])
def test_relative_caches_are_taken_from_the_repo(doctor, tmp_path, elsewhere):
    """Like `configs:` globs and the cache paths in training configs: from the repo root,
    wherever the doctor runs and wherever the settings file lies."""
    repo, cwd, other = tmp_path / "repo", tmp_path / "cwd", tmp_path / "team"
    for d in (repo / "data" / "cache", cwd, other):
        d.mkdir(parents=True)
    (repo / "data" / "cache" / "notes.txt").write_text("not a torch.save file\n")
    settings = (other if elsewhere else repo) / "doctor.yaml"
    settings.write_text("caches: [data/cache]\n")
    code, out, err = doctor("run", "--repo", str(repo), "--settings", str(settings),
                            "--only", "cuda-tensor-in-shared-cache", "--format", "json",
                            cwd=cwd)
    doc = validate_report(json.loads(out))
    assert doc["inputs"]["caches"] == [str(repo / "data" / "cache")]
    result = doc["results"][0]
    assert (code, result["status"]) == (0, "pass"), (result["reason"], err)

