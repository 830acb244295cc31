"""Issue 14, deliverable 6: built-in site profiles (doctor/sites/*.yaml), chosen in the
settings (`site: lumi`, `site: {profile: lumi, ...}`) or detected from the login node
(scontrol's ClusterName, hostname patterns), reported as facts.site and listed by
`doctor explain site`. Every value in a profile names its public source."""
from __future__ import annotations

import os
import re
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, run_doctor, run_json
from doctor import sites
from doctor.settings import PARTITION_FIELDS

SITES = ROOT / "doctor" / "sites"
SOURCE = re.compile(r"#\s*(https://\S+|seed 002)")
WANDB = "wandb-online-in-container"


def repo_with(tmp_path: Path, settings: str) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "doctor.yaml").write_text(settings)
    return repo


def site_facts(repo: Path, *args: str, env: dict | None = None) -> tuple:
    code, doc = run_json("--repo", str(repo), "--static", "--only", WANDB, *args, cwd=repo,
                         env=env)
    return code, doc["facts"]["site"], doc


def test_shorthand_names_the_profile(tmp_path):
    _, site, _ = site_facts(repo_with(tmp_path, "site: lumi\n"))
    assert (site["profile"], site["source"], site["name"]) == ("lumi", "settings", "LUMI")
    assert site["partitions"]["small-g"] == {"MaxTime": "3-00:00:00", "MaxNodes": 4,
                                             "OverSubscribe": "NO", "GpusPerNode": 8,
                                             "gpu_memory": "64GiB"}
    assert site["partitions"]["standard-g"]["OverSubscribe"] == "EXCLUSIVE"
    assert "/usr/lib64/libcxi.so.1" in site["gpu_libraries"]
    assert site["fabric_binds"] == ["/opt/cray/libfabric"]
    assert "/scratch" in site["shared_paths"] and "overrides" not in site


def test_mapping_overrides_the_profile_key_by_key(tmp_path):
    repo = repo_with(tmp_path, "site: {profile: lumi, shared_paths: [/mnt/lab]}\n")
    _, site, _ = site_facts(repo)
    assert site["shared_paths"] == ["/mnt/lab"]       # the settings' key
    assert site["local_paths"] == ["/tmp"]            # the profile's, untouched
    assert site["overrides"] == ["shared_paths"] and site["source"] == "settings"


def test_checks_see_the_merged_values(tmp_path):
    """wandb-online-in-container skips on a site whose compute nodes reach the internet:
    Clariden's profile says they do, and a settings key overrides that."""
    _, _, doc = site_facts(repo_with(tmp_path, "site: clariden\n"))
    result = next(r for r in doc["results"] if r["id"] == WANDB)
    assert result["status"] == "skip" and "compute_network: true" in result["reason"]
    repo2 = tmp_path / "b"
    repo2.mkdir()
    _, site, doc = site_facts(repo_with(repo2, "site: {profile: clariden, "
                                               "compute_network: false}\n"))
    result = next(r for r in doc["results"] if r["id"] == WANDB)
    assert site["compute_network"] is False and "compute_network" not in result.get("reason", "")


@pytest.mark.parametrize("text", ["site: nope\n", "site: {profile: nope}\n"])
def test_unknown_profile_is_exit_2_listing_the_known(tmp_path, text):
    proc = run_doctor("run", "--static", cwd=repo_with(tmp_path, text))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("doctor: error: ") and "'nope' is not a known site profile" \
        in lines[0] and all(name in lines[0] for name in sites.known())


def test_bad_partition_field_in_settings_is_exit_2(tmp_path):
    proc = run_doctor("run", "--static", cwd=repo_with(
        tmp_path, "site: {partitions: {gpu: {MaxNodes: many}}}\n"))
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("partitions.gpu.MaxNodes: 'many' is not a whole "
                                        "number, 0 or more"), proc.stderr


def test_explain_site_lists_the_profiles():
    proc = run_doctor("explain", "site")
    assert proc.returncode == 0, proc.stderr
    for name in sites.known():
        data = yaml.safe_load((SITES / f"{name}.yaml").read_text())
        assert f"{name}: {data['name']}: {data['summary']}" in proc.stdout.splitlines()
    check = run_doctor("explain", WANDB)  # a check id still prints its documentation
    assert check.returncode == 0 and WANDB in check.stdout


def fake_scontrol(tmp_path: Path, body: str) -> dict:
    """A stand-in for another site's `scontrol` (this machine's Slurm is not LUMI): a
    real executable on PATH, so detection runs through the same subprocess and deadline."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "scontrol"
    tool.write_text(f"#!/bin/sh\n{body}\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_detected_from_cluster_name(tmp_path):
    env = fake_scontrol(tmp_path, "echo 'ClusterName             = lumi'")
    repo = repo_with(tmp_path, "site: {local_paths: [/dev/shm]}\n")
    code, doc = run_json("--repo", str(repo), "--only", WANDB, cwd=repo, env=env)
    site = doc["facts"]["site"]
    assert (site["profile"], site["source"]) == ("lumi", "detected")
    assert site["detected_by"] == "scontrol show config: ClusterName = lumi"
    assert site["local_paths"] == ["/dev/shm"] and site["overrides"] == ["local_paths"]
    # `site: none` turns detection off; --static never runs scontrol
    repo2 = tmp_path / "b"
    repo2.mkdir()
    for where, args in ((repo_with(repo2, "site: none\n"), ()), (repo, ("--static",))):
        _, doc = run_json("--repo", str(where), "--only", WANDB, *args, cwd=where, env=env)
        assert doc["facts"]["site"]["profile"] is None, doc["facts"]["site"]


def test_a_hung_scontrol_is_given_up_after_3_s(tmp_path):
    env = fake_scontrol(tmp_path, "exec sleep 30")
    repo = repo_with(tmp_path, "{}\n")
    start = time.monotonic()
    _, doc = run_json("--repo", str(repo), "--only", WANDB, cwd=repo, env=env, timeout=25)
    assert time.monotonic() - start < 15
    assert doc["facts"]["site"]["source"] in ("none", "detected")  # by hostname, if any


def test_hostname_patterns():
    assert sites.match_hostname("lumi-uan01.csc.fi") == "lumi"
    assert sites.match_hostname("lumi-uan04") == "lumi"
    assert sites.match_hostname("clariden-ln001") == "clariden"
    # bare HPE Cray EX names are shared by other systems (Perlmutter's nodes are nid*)
    for other in ("uan01", "nid005038", "login01", "lumi-uan01.example.org"):
        assert sites.match_hostname(other) is None, other


@pytest.mark.slurm
def test_local_slurm_matches_no_profile(slurm_cluster, tmp_path):
    """The real local Slurm: detection reads its ClusterName (the oracle: scontrol's own
    output) and, as no profile names that cluster, the report says no profile."""
    out = subprocess.run(["scontrol", "show", "config"], capture_output=True, text=True,
                         timeout=10).stdout
    assert sites.cluster_name() == re.search(r"^ClusterName\s*=\s*(\S+)", out, re.M)[1]
    repo = repo_with(tmp_path, "{}\n")
    _, doc = run_json("--repo", str(repo), "--only", WANDB, cwd=repo)
    if sites.match_hostname(socket.gethostname()) is None:
        assert doc["facts"]["site"] == {"profile": None, "source": "none"}


@pytest.mark.parametrize("name", sites.known())
def test_every_value_names_its_source(name):
    """Each line holding a value (`key: value` or `- item`) carries `# https://...` or
    `# seed 002`; the file loads and its values pass the settings' own checks."""
    missing = []
    for n, line in enumerate((SITES / f"{name}.yaml").read_text().splitlines(), 1):
        code = line.split(" #", 1)[0].strip()
        if not code or code.startswith("#"):
            continue
        is_value = code.startswith("- ") or not code.endswith(":")
        if is_value and not SOURCE.search(line):
            missing.append(f"{n}: {line.strip()}")
    assert not missing, "values without a source:\n" + "\n".join(missing)
    data = sites.load(name)
    assert set(data) <= {"name", "summary", "detect", *sites.VALUE_KEYS}
    for fields in (data.get("partitions") or {}).values():
        assert set(fields) <= set(PARTITION_FIELDS)
        assert fields.get("OverSubscribe") in (None, "EXCLUSIVE", "NO")
