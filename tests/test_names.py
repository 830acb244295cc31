"""Names and typos through the real CLI (issue 28, item 10): one vocabulary for selection
(`--select/--ignore`, with `--only/--skip` as aliases, and the settings' `select:/ignore:`),
did-you-mean for options, check ids and the smoke's model factory, prefixes of whole words
of ids, a selection that runs nothing, a --cache that does not exist, bare `doctor`,
`doctor explain` of site profiles, `doctor list`'s severities, `doctor docs` for developers."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT, clean_env, git_repo, one_line_exit_2, run_doctor


@pytest.fixture
def repo(tmp_path):
    return git_repo(tmp_path / "repo", {"train.py": "print('train')\n"})


def ids_run(repo, *args):
    proc = run_doctor("run", "--repo", str(repo), "--format", "json", *args)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    return [r["id"] for r in json.loads(proc.stdout)["results"]]


# ---- options ------------------------------------------------------------------------

def test_select_and_ignore_are_the_settings_words_and_only_skip_still_work(repo):
    assert ids_run(repo, "--static", "--select", "rsync-exclude-unanchored,git-large-file",
                   "--ignore", "git-large-file") == ["rsync-exclude-unanchored"]
    assert ids_run(repo, "--static", "--only", "rsync-exclude-unanchored,git-large-file",
                   "--skip", "git-large-file") == ["rsync-exclude-unanchored"]


@pytest.mark.parametrize("typed,meant", [("--selet", "--select"), ("--fromat", "--format"),
                                         ("--staic", "--static")])
def test_an_unknown_option_names_the_nearest(repo, typed, meant):
    proc = run_doctor("run", "--repo", str(repo), typed, "x")
    one_line_exit_2(proc, f"No such option '{typed}'", f"(did you mean '{meant}'?)")
    assert "--help" not in proc.stderr   # click's own list offered '--help' for --selet


# ---- check ids: did-you-mean and word prefixes ---------------------------------------

def test_a_typod_check_id_names_the_nearest(repo):
    proc = run_doctor("run", "--repo", str(repo), "--only", "rsync-exclude-unanchord")
    one_line_exit_2(proc, "unknown check id or tag 'rsync-exclude-unanchord'",
                    "(did you mean 'rsync-exclude-unanchored'?)")


def test_a_prefix_of_whole_words_selects_every_check_it_begins(repo):
    # no tag is `script` (the tag is `scripts`): the prefix alone selects these two
    assert ids_run(repo, "--static", "--select", "script") == [
        "script-dos-line-breaks", "script-encoding-unsupported"]
    # `git` is a prefix of git-large-file and git-tracked-core-file, not of gitignore-…,
    # which only the tag `git` brings in; `--ignore git` leaves both out
    assert ids_run(repo, "--static", "--select", "git-tracked") == ["git-tracked-core-file"]
    assert "gitignore-hides-source" not in ids_run(repo, "--static", "--select", "slurm,git",
                                                   "--ignore", "git")
    # part of a word is no prefix
    proc = run_doctor("run", "--repo", str(repo), "--static", "--select", "git-large-fil")
    one_line_exit_2(proc, "unknown check id or tag 'git-large-fil'", "'git-large-file'")


def test_settings_select_and_ignore_take_the_same_names(repo):
    (repo / "doctor.yaml").write_text("select: [script]\nignore: [script-dos]\n")
    assert ids_run(repo, "--static") == ["script-encoding-unsupported"]
    (repo / "doctor.yaml").write_text("select: [rsync-exclude-unanchord]\n")
    proc = run_doctor("run", "--repo", str(repo), "--static")
    one_line_exit_2(proc, "doctor.yaml: select: unknown check id or tag "
                    "'rsync-exclude-unanchord'", "did you mean 'rsync-exclude-unanchored'")
    (repo / "doctor.yaml").write_text("severity: {git-large-fil: warning}\n")
    one_line_exit_2(run_doctor("run", "--repo", str(repo), "--static"),
                    "severity: unknown check id 'git-large-fil'", "'git-large-file'")


# ---- a selection that runs nothing ---------------------------------------------------

@pytest.mark.parametrize("args,why", [
    (["--only", "ddp-smoke", "--static"],
     "--static runs only the checks that need no live node, and --select ddp-smoke "
     "selects none of them (ddp-smoke needs torch, smoke)"),
    (["--only", "rsync", "--skip", "rsync"],
     "--select rsync and --ignore rsync leave no check to run"),
    (["--static", "--ignore", "all"], "every check and --ignore all leave no check to run"),
    (["--only", "ddp-smoke", "--no-smoke"],
     "--select ddp-smoke selects only the DDP smoke, and this run runs no smoke"),
])
def test_a_selection_that_runs_nothing_is_exit_2(repo, args, why):
    proc = run_doctor("run", "--repo", str(repo), *args)
    one_line_exit_2(proc, why)
    assert "PASS" not in proc.stdout + proc.stderr


def test_settings_that_leave_nothing_say_where(repo):
    (repo / "doctor.yaml").write_text("select: [ddp-smoke]\n")
    one_line_exit_2(run_doctor("run", "--repo", str(repo), "--static"),
                    "--static runs only the checks that need no live node, and "
                    f"{repo / 'doctor.yaml'}: select: [ddp-smoke] selects none of them")


# ---- paths and the model factory -----------------------------------------------------

def test_a_cache_that_does_not_exist_is_exit_2_like_a_config(repo, tmp_path):
    one_line_exit_2(run_doctor("run", "--repo", str(repo), "--static", "--cache",
                               str(tmp_path / "nope")), f"cache not found: {tmp_path / 'nope'}")
    # a settings `caches:` path is the repo's own and may be written by the job later:
    # the cache check says it is not there, the run goes on
    (repo / "doctor.yaml").write_text("caches: [cache/]\n")
    proc = run_doctor("run", "--repo", str(repo), "--no-smoke", "--format", "json",
                      "--only", "cuda-tensor-in-shared-cache")
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)["results"]
    assert result["status"] == "skip" and "cache" in result["reason"]


@pytest.fixture
def model_repo(tmp_path):
    """A src/ layout whose package announces, in a file, any import of it: the doctor
    must find the model factory without running a line of the repo."""
    ran = tmp_path / "ran"
    return git_repo(tmp_path / "mrepo", {
        "src/pkg/__init__.py": f"open({str(ran)!r}, 'w').write('pkg ran')\n",
        "src/pkg/models.py": ("import torch\nfrom torch import nn as _nn\n\n"
                              "def build():\n    return torch.nn.Linear(4, 2)\n\n"
                              "def broken():\n    raise ValueError('no such layer')\n\n"
                              "class Zoo:\n    pass\n"),
        "train.py": "print('train')\n"}), ran


@pytest.mark.parametrize("model,why", [
    ("nosuch.mod:build", "--model nosuch.mod:build: no module named 'nosuch' on the smoke's "
                         "path"),
    ("pkg.model:build", "no module named 'pkg.model'"),
    ("pkg.models:buld", "pkg.models (src/pkg/models.py) defines no 'buld' at its top level "
                        "(did you mean 'build'?)"),
])
def test_a_model_factory_that_cannot_be_imported_is_exit_2_at_once(model_repo, model, why):
    repo, ran = model_repo
    proc = run_doctor("run", "--repo", str(repo), "--only", "ddp-smoke", "--model", model)
    one_line_exit_2(proc, why)
    if model.startswith("pkg.model:"):
        assert "(did you mean 'models'?)" in proc.stderr
    assert not ran.exists(), "the doctor imported the repo's package"


def test_the_settings_model_is_checked_too_and_names_its_file(model_repo):
    repo, ran = model_repo
    (repo / "doctor.yaml").write_text("smoke: {model: 'pkg.models:Zo'}\n")
    one_line_exit_2(run_doctor("run", "--repo", str(repo), "--only", "ddp-smoke"),
                    f"{repo / 'doctor.yaml'}: smoke.model pkg.models:Zo", "'Zoo'")
    # --static runs no smoke: its model is not judged (CI may lack the model's packages)
    proc = run_doctor("run", "--repo", str(repo), "--static", "--only", "rsync")
    assert proc.returncode == 0, proc.stderr
    assert not ran.exists()


def test_a_factory_that_exists_runs_and_its_traceback_is_where_the_fix_says(model_repo,
                                                                             tmp_path):
    """The factory is found (no false exit 2), the smoke runs it, and the fix names where
    the traceback is: the JSON report's `stack`, which the table does not show."""
    repo, ran = model_repo
    report = tmp_path / "report.json"
    proc = run_doctor("run", "--repo", str(repo), "--only", "ddp-smoke", "--model",
                      "pkg.models:broken", "--json", str(report), timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "its traceback is the finding's `stack` in the JSON report (`--format json`, or " \
           "`--json FILE`)" in " ".join(proc.stdout.split())
    (result,) = json.loads(report.read_text())["results"]
    assert any("no such layer" in (f["data"].get("stack") or "") for f in result["findings"])


def test_installed_modules_are_found_and_an_attribute_module_is_let_through(tmp_path):
    """Outside the repo the same rules hold: the stdlib's json defines no `lods`; `os.path`
    is no package of os (an attribute bound at run time), so the smoke judges it."""
    from types import SimpleNamespace

    from doctor.errors import InputError
    from doctor.smoke.factory import check_factory

    def job(model):
        return SimpleNamespace(model=model, repo=tmp_path, rel=str,
                               settings=SimpleNamespace(smoke={}, path=None))

    check_factory(job("os.path:join"))
    check_factory(job("json:loads"))
    with pytest.raises(InputError, match=r"defines no 'lods' .*did you mean 'loads'"):
        check_factory(job("json:lods"))


@pytest.mark.parametrize("source,name,known", [
    ("from torch.nn import *\n", "Linear", None),           # a star import: unsure
    ("def __getattr__(name):\n    return name\n", "x", None),
    ("import sys\nsys.modules[__name__] = object()\n", "x", None),
    ("globals()['build'] = print\n", "build", None),
    ("try:\n    from fast import build\nexcept ImportError:\n    def build(): pass\n"
     "if True:\n    with open('x') as fh:\n        CFG = 1\nfor i, (a, b) in []:\n    pass\n",
     "build", {"build", "CFG", "fh", "i", "a", "b"}),
    ("def f():\n    global late\n    late = 1\n", "late", {"f", "late"}),
    ("import a.b.c as d, e.f\n(w := 3)\n", "e", {"d", "e", "w"}),
])
def test_the_top_level_names_a_module_binds(tmp_path, source, name, known):
    from doctor.smoke.factory import top_level_names

    (tmp_path / "m.py").write_text(source)
    names = top_level_names(tmp_path / "m.py")
    assert names == known if known is None else known <= names


# ---- the commands --------------------------------------------------------------------

def test_bare_doctor_prints_the_help_not_escaped_newlines():
    proc = run_doctor()
    assert proc.returncode == 2
    assert proc.stderr.startswith("Usage: doctor [OPTIONS]")   # click 8.4: COMMAND; 8.5: [COMMAND]
    assert "\\n" not in proc.stderr and "\n  run " in proc.stderr


def test_explain_takes_site_profiles_prefixes_and_says_the_nearest():
    for args in (["site", "lumi"], ["lumi"]):
        proc = run_doctor("explain", *args)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("# LUMI") and "Use it with `site: lumi`" in proc.stdout
    proc = run_doctor("explain", "script")
    assert [ln for ln in proc.stdout.splitlines() if ln.startswith("# ")] == [
        "# script-dos-line-breaks", "# script-encoding-unsupported"]
    one_line_exit_2(run_doctor("explain", "rsync-exclude-unanchord"),
                    "unknown check id 'rsync-exclude-unanchord'",
                    "(did you mean 'rsync-exclude-unanchored'?)")
    one_line_exit_2(run_doctor("explain", "site", "lumii"),
                    "unknown site profile 'lumii' (did you mean 'lumi'?)")
    # after `site`, a name is a profile's, never a check's
    one_line_exit_2(run_doctor("explain", "site", "rsync"), "unknown site profile 'rsync'")


def test_list_shows_the_severities_a_check_reports():
    doc = {c["id"]: c for c in json.loads(run_doctor("list", "--format", "json").stdout)}
    # registered error, but a finding with an unknown link is a warning (checks/gitignore.py)
    assert doc["gitignore-hides-source"]["severities"] == ["error", "warning"]
    # registered warning, but a conflict the doctor can prove is an error (checks/alloc.py)
    assert doc["hip-alloc-conf"]["severities"] == ["error", "warning"]
    assert doc["ddp-smoke"]["severities"] == ["error"]
    table = {ln.split()[0]: ln.split()[1] for ln in run_doctor("list").stdout.splitlines()[2:]}
    assert table["gitignore-hides-source"] == "error/warning" and table["ddp-smoke"] == "error"
    # the check's page says the same (docs/checks, doctor explain)
    page = run_doctor("explain", "gitignore-hides-source").stdout
    assert "\n| error/warning | git, repo |" in page


def test_docs_is_a_developer_command(tmp_path):
    commands = run_doctor("--help").stdout.split("Commands:")[1]
    assert "\n  run " in commands and "\n  docs " not in commands
    out = tmp_path / "pages"
    proc = subprocess.run([sys.executable, "-m", "doctor.docs", "--out", str(out)], cwd=ROOT,
                          env=clean_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (out / "index.md").is_file() and (out / "ddp-smoke.md").is_file()
