"""required-args-missing: the training step omits an argument its entry's parser requires.

The doctor reads the entry's argparse parser statically (doctor/scanners/cliparse.py); the
oracle is the real argparse: a seeded generator writes many parsers (required options,
positionals with every nargs, store_true, mutually exclusive required groups, subparsers,
abbreviations) and command lines, each as an entry and a job script in one tmp repo; the
real CLI judges them all in one run, and each verdict is compared with what the real
argparse does when that (test-made) parser parses those arguments. An error must always
be argparse's "the following arguments are required" / "one of the arguments … is
required" exit 2 (no false error), and the doctor must find most of them. The same for
click commands against the real click, and for Hydra `???` values against the real Hydra
compose (MissingMandatoryValue where the code reads the key).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import random
import re
import shlex
import textwrap

import pytest

from conftest import git_repo, result_of, run_json

CHECK = "required-args-missing"
HEAD = "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --ntasks=1\n"


def check_result(repo, *args: str) -> tuple:
    code, doc = run_json("--static", "--repo", str(repo), "--only", CHECK, *args)
    return code, result_of(doc, CHECK)


def findings(result: dict) -> list:
    return [(f["location"]["path"], f["location"]["line"],
             f.get("severity") or result["severity"], f["message"]) for f in result["findings"]]


def entry(body: str) -> str:
    return "import argparse\n\n\n" + textwrap.dedent(body).lstrip()


# ---- what a user sees ------------------------------------------------------------------

TRAIN = entry('''
    def get_args():
        p = argparse.ArgumentParser()
        p.add_argument("--datadir", default=None, required=True)
        p.add_argument("--epochs", type=int, default=3)
        return p.parse_args()


    if __name__ == "__main__":
        args = get_args()
    ''')


def test_required_option_left_out_is_an_error_with_both_lines_and_the_fix(tmp_path):
    repo = git_repo(tmp_path / "r", {"job.sh": HEAD + "srun python train.py --epochs 5\n",
                                     "train.py": TRAIN})
    code, result = check_result(repo)
    assert code == 1 and result["status"] == "fail", result
    [(path, line, severity, message)] = findings(result)
    assert (path, line, severity) == ("job.sh", 4, "error")
    assert "runs train.py without --datadir" in message
    assert "required=True at train.py:6" in message and "parse_args() at train.py:8" in message
    f = result["findings"][0]
    assert "Pass --datadir VALUE" in f["fix"]
    [opt] = f["fix_options"]
    assert opt["steps"][0]["lines"] == ["srun python train.py --epochs 5 --datadir VALUE"]
    assert f["data"]["missing"] == [["--datadir"]]


@pytest.mark.parametrize("line,why", [
    ("srun python train.py --datadir /d", "given"),
    ("srun python train.py --data=/d", "a unique prefix (allow_abbrev)"),
    ("srun python train.py --help", "--help exits first"),
    ('srun python train.py "$@"', "the script's own arguments"),
    ("srun python other.py", "an entry with no parser"),
])
def test_given_or_cannot_tell_is_silent(tmp_path, line, why):
    repo = git_repo(tmp_path / "r", {"job.sh": HEAD + line + "\n", "train.py": TRAIN,
                                     "other.py": "print(1)\n"})
    code, result = check_result(repo)
    assert result["status"] in ("pass", "skip") and code == 0, (why, result)


@pytest.mark.parametrize("body,line", [
    # the parser at module level, parsed in main() (DeepSpeedExamples' imagenet/main.py)
    ('''
    parser = argparse.ArgumentParser()
    parser.add_argument("--datadir", required=True)


    def main():
        args = parser.parse_args()


    if __name__ == "__main__":
        main()
    ''', "srun python train.py --epochs 1"),
    # a helper the doctor does not read adds its arguments (deepspeed's)
    ('''
    import deepspeed
    parser = argparse.ArgumentParser()
    parser.add_argument("--datadir", required=True)
    parser = deepspeed.add_config_arguments(parser)
    args = parser.parse_args()
    ''', "srun python train.py"),
])
def test_parsers_read_through_module_names_and_helpers(tmp_path, body, line):
    repo = git_repo(tmp_path / "r", {"job.sh": HEAD + line + "\n", "train.py": entry(body)})
    _, result = check_result(repo)
    [(_, _, severity, message)] = findings(result)
    assert severity == "error" and "without --datadir" in message, result
    # a word only the unread helper may know (an action that exits?) makes no claim
    repo = git_repo(tmp_path / "r2", {"job.sh": HEAD + line + " --deepspeed\n",
                                      "train.py": entry(body)})
    _, result = check_result(repo)
    assert bool(result["findings"]) == ("deepspeed" not in body), result


UTILS = entry('''
    def get_parser():
        p = argparse.ArgumentParser()
        p.add_argument("--datadir", required=True)
        return p
    ''')


@pytest.mark.parametrize("utils,flagged", [
    (UTILS, True),
    # the helper's module uses sys.argv: what argparse reads is not known
    (UTILS + "\nimport sys\nNAME = sys.argv[0]\n", False),
])
def test_a_parser_built_in_an_imported_repo_module(tmp_path, utils, flagged):
    train = "from lib.utils import get_parser\n\nargs = get_parser().parse_args()\n"
    repo = git_repo(tmp_path / "r", {"job.sh": HEAD + "srun python train.py --epochs 1\n",
                                     "train.py": train, "lib/__init__.py": "",
                                     "lib/utils.py": utils})
    _, result = check_result(repo)
    assert bool(result["findings"]) == flagged, result
    if flagged:
        assert "required=True at lib/utils.py:6" in result["findings"][0]["message"]


def test_a_variable_slurm_sets_at_run_time_is_one_plain_word(tmp_path):
    """$SLURM_PROCID is a number: it cannot be --datadir, so the finding stays an error."""
    repo = git_repo(tmp_path / "r", {"job.sh": HEAD + "srun python train.py --epochs 1 "
                                     "--seed $SLURM_PROCID\n", "train.py": TRAIN})
    _, result = check_result(repo)
    [(_, _, severity, _)] = findings(result)
    assert severity == "error", result


def test_unresolved_variable_makes_it_a_warning_naming_the_variable(tmp_path):
    repo = git_repo(tmp_path / "r", {"job.sh": HEAD + "srun python train.py $EXTRA\n",
                                     "train.py": TRAIN})
    code, result = check_result(repo)
    [(path, line, severity, message)] = findings(result)
    assert severity == "warning" and "$EXTRA" in message, message


@pytest.mark.parametrize("body", [
    # added only on a path that may not run
    '''
    p = argparse.ArgumentParser()
    import os
    if os.environ.get("X"):
        p.add_argument("--datadir", required=True)
    p.parse_args()
    ''',
    # sys.argv rewritten before parsing
    '''
    import sys
    sys.argv += ["--datadir", "/d"]
    p = argparse.ArgumentParser()
    p.add_argument("--datadir", required=True)
    p.parse_args()
    ''',
    # arguments from a file
    '''
    p = argparse.ArgumentParser(fromfile_prefix_chars="@")
    p.add_argument("--datadir", required=True)
    p.parse_args()
    ''',
    # parses another list
    '''
    p = argparse.ArgumentParser()
    p.add_argument("--datadir", required=True)
    p.parse_args(["--datadir", "/d"])
    ''',
    # the parse runs only in a function no path calls
    '''
    def main():
        p = argparse.ArgumentParser()
        p.add_argument("--datadir", required=True)
        p.parse_args()
    ''',
    # **kwargs: required or not is not readable
    '''
    kw = {"required": True}
    p = argparse.ArgumentParser()
    p.add_argument("--datadir", **kw)
    p.parse_args()
    ''',
    # argparse's exit caught
    '''
    p = argparse.ArgumentParser()
    p.add_argument("--datadir", required=True)
    try:
        args = p.parse_args()
    except SystemExit:
        args = p.parse_args(["--datadir", "/d"])
    ''',
    # the parser's error() replaced
    '''
    p = argparse.ArgumentParser()
    p.add_argument("--datadir", required=True)
    p.error = print
    p.parse_args()
    ''',
    # configargparse reads config files and the environment too
    '''
    import configargparse
    p = configargparse.ArgumentParser()
    p.add_argument("--datadir", required=True)
    p.parse_args()
    ''',
])
def test_links_the_doctor_cannot_read_make_no_claim(tmp_path, body):
    # (@args.txt: a word only the fromfile_prefix_chars parser reads as more arguments)
    repo = git_repo(tmp_path / "r", {"job.sh": HEAD + "srun python train.py --epochs 1 "
                                     "@args.txt\n", "train.py": entry(body)})
    code, result = check_result(repo)
    assert not result["findings"], result


CLI = entry('''
    def main():
        print("a console script calls this")


    if __name__ == "__main__":
        p = argparse.ArgumentParser()
        p.add_argument("--datadir", required=True)
        p.parse_args()
    ''')


@pytest.mark.parametrize("line,flagged", [
    ("srun train-cli --epochs 1", False),          # the console script calls main() only
    ("srun python -m pkg.cli --epochs 1", True),   # -m runs the __main__ block
])
def test_a_console_script_does_not_run_the_main_block(tmp_path, line, flagged):
    repo = git_repo(tmp_path / "r", {
        "job.sh": HEAD + line + "\n", "pkg/__init__.py": "", "pkg/cli.py": CLI,
        "pyproject.toml": '[project]\nname = "pkg"\n\n[project.scripts]\n'
                          'train-cli = "pkg.cli:main"\n'})
    _, result = check_result(repo)
    assert bool(result["findings"]) == flagged, result


def test_local_rank_comes_from_the_launcher(tmp_path):
    body = '''
    p = argparse.ArgumentParser()
    p.add_argument("--local_rank", type=int, required=True)
    p.parse_args()
    '''
    repo = git_repo(tmp_path / "r", {"job.sh": HEAD + "python -m torch.distributed.launch "
                                     "--nproc_per_node 2 train.py\n", "train.py": entry(body)})
    _, result = check_result(repo)
    assert not result["findings"], result


def test_env_default_does_not_spare_a_required_option(tmp_path):
    """argparse ignores default= of a required option: os.environ.get(...) is no fallback."""
    body = '''
    import os
    p = argparse.ArgumentParser()
    p.add_argument("--datadir", default=os.environ.get("DATADIR"), required=True)
    p.parse_known_args()
    '''
    repo = git_repo(tmp_path / "r", {"job.sh": HEAD + "export DATADIR=/d\nsrun python train.py\n",
                                     "train.py": entry(body)})
    _, result = check_result(repo)
    [(_, line, severity, _)] = findings(result)
    assert (line, severity) == (5, "error")
    assert "required" in oracle(textwrap.dedent(body).replace("p.parse_known_args()", ""), [])


# ---- the oracle: the real argparse on generated parsers -----------------------------------

def oracle(decls: str, argv: list) -> str:
    """'required' when the real argparse stops on a missing required argument, 'error' on
    another parse error, 'exit0' (help), 'ok'."""
    scope: dict = {"argparse": argparse}
    exec(decls, scope)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            scope["p"].parse_args(argv)
    except SystemExit as e:
        text = err.getvalue()
        if e.code == 2 and ("the following arguments are required" in text
                            or "is required" in text):
            return "required"
        return "error" if e.code else "exit0"
    return "ok"


NAMES = ["datadir", "data-path", "dataset", "config", "output", "out-dir", "lr", "level",
         "model", "mode", "seed", "steps"]


def generate(rng: random.Random) -> tuple:
    """(parser source, argv) of one generated case."""
    lines = [f"p = argparse.ArgumentParser(allow_abbrev={rng.random() < 0.8})"]
    argv: list = []
    names = rng.sample(NAMES, rng.randint(2, 6))
    shorts = iter("abcdefgh")
    pos_words: list = []
    pos_lines: list = []
    for i, name in enumerate(names):
        form = rng.choice(["req", "req", "opt", "flag", "pos", "group"])
        short = next(shorts) if rng.random() < 0.4 else None
        flags = [f"--{name}"] + ([f"-{short}"] if short else [])
        quoted = ", ".join(repr(f) for f in flags)
        if form in ("req", "opt"):
            nargs = rng.choice([None, None, "'+'", 2])
            req = form == "req"
            extra = f", nargs={nargs}" if nargs else ""
            extra += ", default='x'" if rng.random() < 0.3 else ""
            lines.append(f"p.add_argument({quoted}, required={req}{extra})")
            if rng.random() < (0.75 if req else 0.5):
                vals = ["v1", "v2"] if nargs == 2 else ["v1"]
                how = rng.choice(["exact", "eq", "abbrev", "short", "glued"])
                if how == "eq" and nargs != 2:
                    argv.append(f"--{name}=v1")
                elif how == "abbrev":
                    argv += [f"--{name[:rng.randint(2, len(name))]}"] + vals
                elif how in ("short", "glued") and short and nargs != 2:
                    argv += [f"-{short}v1"] if how == "glued" else [f"-{short}", "v1"]
                else:
                    argv += [f"--{name}"] + vals
        elif form == "flag":
            lines.append(f"p.add_argument({quoted}, action='store_true')")
            if rng.random() < 0.5:
                argv.append(f"-{short}" if short and rng.random() < 0.5 else f"--{name}")
        elif form == "pos":
            nargs = rng.choice([None, None, "'?'", "'*'", "'+'", 2])
            extra = f", nargs={nargs}" if nargs else ""
            pos_lines.append(f"p.add_argument({name.replace('-', '_')!r}{extra})")
            lines.append(pos_lines[-1])
            want = {None: 1, "'?'": 1, "'*'": 2, "'+'": 1, 2: 2}[nargs]
            pos_words += [f"w{i}"] * (want if rng.random() < 0.8 else rng.randint(0, want))
        else:
            req = rng.random() < 0.7
            lines.append(f"g{i} = p.add_mutually_exclusive_group(required={req})")
            lines.append(f"g{i}.add_argument({quoted})")
            lines.append(f"g{i}.add_argument('--no-{name}-x', action='store_true')")
            if rng.random() < 0.5:
                argv += [f"--{name}", "v"] if rng.random() < 0.5 else [f"--no-{name}-x"]
    if rng.random() < 0.25:
        sub = rng.random() < 0.6
        lines.append(f"s = p.add_subparsers(dest='cmd', required={sub})")
        lines.append("t = s.add_parser('train')")
        lines.append("t.add_argument('--epochs', required=True)")
        lines.append("e = s.add_parser('eval', aliases=['ev'])")
        lines.append("e.add_argument('ckpt')")
        if pos_words:   # a positional before the subcommand takes its word
            pos_words = []
            lines = [ln for ln in lines if ln not in pos_lines]
        if rng.random() < 0.8:
            cmd = rng.choice(["train", "eval", "ev"])
            tail = (["--epochs", "3"] if rng.random() < 0.6 else []) if cmd == "train" else \
                (["c.pt"] if rng.random() < 0.6 else [])
            return "\n".join(lines), _shuffled(rng, argv) + [cmd] + tail
    argv = _shuffled(rng, argv)
    if pos_words and rng.random() < 0.2:
        argv += ["--"]
    return "\n".join(lines), argv + pos_words


def _shuffled(rng: random.Random, argv: list) -> list:
    """The options in another order, each still followed by its values."""
    groups: list = []
    for w in argv:
        if w.startswith("-") or not groups:
            groups.append([w])
        else:
            groups[-1].append(w)
    rng.shuffle(groups)
    return [w for g in groups for w in g]


def test_verdicts_agree_with_the_real_argparse_on_generated_parsers(tmp_path):
    rng = random.Random(29)
    files: dict = {}
    cases: dict = {}
    for i in range(160):
        decls, argv = generate(rng)
        files[f"e{i}.py"] = "import argparse\n" + decls + "\nif __name__ == '__main__':\n" \
            "    p.parse_args()\n"
        files[f"job{i}.sh"] = HEAD + f"srun python e{i}.py {shlex.join(argv)}\n"
        cases[f"job{i}.sh"] = (decls, argv, oracle(decls, argv))
    repo = git_repo(tmp_path / "r", files)
    _, result = check_result(repo)
    flagged = {f["location"]["path"]: f for f in result["findings"]}
    false = [(k, cases[k]) for k in flagged if cases[k][2] != "required"]
    assert not false, "\n\n".join(f"{k}: {c[1]} -> {c[2]}\n{c[0]}" for k, c in false)
    truth = [k for k, c in cases.items() if c[2] == "required"]
    found = [k for k in truth if k in flagged]
    assert len(truth) >= 40, len(truth)            # the generator makes both kinds
    assert len(cases) - len(truth) >= 40
    assert len(found) >= 0.95 * len(truth), sorted(set(truth) - set(found))
    # the finding names what argparse names (options, positional dests, commands)
    for k in found:
        decls, argv, _ = cases[k]
        said = oracle_names(decls, argv)
        missing = flagged[k]["data"]["missing"]
        assert any(n in said for names in missing for n in names), (k, said, missing)


def oracle_names(decls: str, argv: list) -> str:
    scope: dict = {"argparse": argparse}
    exec(decls, scope)
    err = io.StringIO()
    with contextlib.suppress(SystemExit), contextlib.redirect_stderr(err):
        scope["p"].parse_args(argv)
    return err.getvalue()


# ---- Hydra: `???` values, proven with the real Hydra compose ------------------------------

HYDRA_MAIN = '''import hydra


@hydra.main(config_path="conf", config_name="config", version_base=None)
def main(cfg):
    print(%s)


if __name__ == "__main__":
    main()
'''


def hydra_case(rng: random.Random) -> tuple:
    """(files, overrides, keys the entry reads) of one generated Hydra job."""
    top = {k: rng.choice(["???", "1", "x"]) for k in rng.sample(["data_dir", "seed", "name"], 2)}
    opts = {o: {k: rng.choice(["???", "0.1", "4"]) for k in rng.sample(["lr", "width"], 2)}
            for o in ("small", "big")}
    self_first = rng.random() < 0.3
    top_over = rng.random() < 0.3   # the primary config sets a model key too
    choice = "???" if rng.random() < 0.25 else "small"   # a group the job must choose
    lines = ["defaults:"] + (["  - _self_", f"  - model: {choice}"] if self_first else
                             [f"  - model: {choice}", "  - _self_"])
    lines += [f"{k}: {v}" for k, v in top.items()]
    if top_over:
        lines += ["model:", f"  lr: {rng.choice(['???', '0.5'])}"]
    files = {"conf/config.yaml": "\n".join(lines) + "\n"}
    for o, kv in opts.items():
        files[f"conf/model/{o}.yaml"] = "".join(f"{k}: {v}\n" for k, v in kv.items())
    overrides: list = []
    if rng.random() < 0.4:
        overrides.append("model=big")
    for key in ["data_dir", "seed", "name", "model.lr", "model.width"]:
        if rng.random() < 0.3:
            form = "+" if key.split(".")[-1] not in {**top, **opts["small"]} and rng.random() < .5 \
                else ""
            overrides.append(f"{form}{key}=7")
    keys = ["model.lr", "model.width"] + list(top)
    reads = [k for k in keys if rng.random() < 0.7]
    return files, overrides, reads


def hydra_oracle(conf, overrides: list, reads: list) -> tuple:
    """(missing keys, read keys that raise MissingMandatoryValue) with the real Hydra."""
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf
    from omegaconf.errors import MissingMandatoryValue
    try:
        with initialize_config_dir(config_dir=str(conf), version_base=None):
            cfg = compose(config_name="config", overrides=overrides)
    except Exception as e:
        m = re.search(r"You must specify '(\w+)'", str(e))
        if m:    # a defaults-list group left ???: compose stops
            return {m.group(1)}, {m.group(1)}
        return None, None   # an override Hydra refuses: not this check's case
    raising = []
    for k in reads:
        try:
            OmegaConf.select(cfg, k, throw_on_missing=True)
        except MissingMandatoryValue:
            raising.append(k)
    return set(OmegaConf.missing_keys(cfg)), set(raising)


def test_hydra_missing_values_agree_with_the_real_hydra_compose(tmp_path):
    rng = random.Random(2929)
    files: dict = {}
    cases: dict = {}
    for i in range(40):
        case_files, overrides, reads = hydra_case(rng)
        d = f"j{i}"
        for name, text in case_files.items():
            files[f"{d}/{name}"] = text
        files[f"{d}/train.py"] = HYDRA_MAIN % (", ".join(f"cfg.{k}" for k in reads) or "1")
        files[f"{d}/job.sh"] = HEAD + f"cd {d}\nsrun python train.py {shlex.join(overrides)}\n"
        cases[f"{d}/job.sh"] = (overrides, reads)
    repo = git_repo(tmp_path / "r", files)
    _, result = check_result(repo)
    assert result["status"] != "error", result["reason"]
    said: dict = {}
    for f in result["findings"]:
        sev = f.get("severity") or result["severity"]
        said.setdefault(f["location"]["path"], {})[f["data"]["missing"][0][0]] = sev
    compared = 0
    for job, (overrides, reads) in cases.items():
        missing, raising = hydra_oracle(repo / job.split("/")[0] / "conf", overrides, reads)
        if missing is None:
            continue
        compared += 1
        got = said.get(job, {})
        assert set(got) == missing, (job, overrides, got, missing)
        # an error exactly where the code reads the key and compose+read raises
        assert {k for k, s in got.items() if s == "error"} == raising, (job, got, raising)
    assert compared >= 30
    assert sum(bool(v) for v in said.values()) >= 10


# ---- click: the real click on generated commands ------------------------------------------

def click_oracle(src: str, argv: list) -> str:
    """'required' when the real click stops on a missing parameter, 'error' on another
    usage error, 'exit0', 'ok'."""
    scope: dict = {}
    exec(src, scope)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            scope["main"].main(argv, prog_name="train.py", standalone_mode=True)
    except SystemExit as e:
        if e.code == 2 and "Missing" in err.getvalue():
            return "required"
        return "error" if e.code else "exit0"
    return "ok"


def click_case(rng: random.Random) -> tuple:
    lines = ["import click", "", "", "@click.command()"]
    argv: list = []
    pos: list = []
    for name in rng.sample(NAMES, rng.randint(2, 5)):
        form = rng.choice(["req", "req", "opt", "flag", "arg", "argmany"])
        short = f"-{name[0]}" if rng.random() < 0.3 and f"'-{name[0]}'" not in \
            "".join(lines) else None
        decls = ", ".join(repr(f) for f in [f"--{name}"] + ([short] if short else []))
        if form in ("req", "opt"):
            nargs = rng.choice([1, 1, 2])
            extra = (", required=True" if form == "req" else "") + \
                (f", nargs={nargs}" if nargs != 1 else "") + \
                (", default='d'" if nargs == 1 and rng.random() < 0.2 else "")
            lines.append(f"@click.option({decls}{extra})")
            if rng.random() < 0.7:
                vals = ["v1", "v2"][:nargs]
                if short and nargs == 1 and rng.random() < 0.5:
                    argv += [f"{short}v1"] if rng.random() < 0.5 else [short, "v1"]
                elif nargs == 1 and rng.random() < 0.3:
                    argv += [f"--{name}=v1"]
                else:
                    argv += [f"--{name}"] + vals
        elif form == "flag":
            lines.append(f"@click.option({decls}, is_flag=True)")
            if rng.random() < 0.5:
                argv += [f"--{name}"]
        else:
            arg = name.replace("-", "_")
            many = form == "argmany"
            req = rng.random() < 0.5 if many else True
            lines.append(f"@click.argument({arg!r}" + (f", nargs=-1, required={req})" if many
                                                      else ")"))
            if many and "many" in pos:   # click allows one nargs=-1
                lines.pop()
                continue
            pos.append("many" if many else "one")
            if rng.random() < 0.8:
                argv_tail = ["p1", "p2"] if many else ["p1"]
                pos_words = argv_tail
                argv += pos_words
    params = [ln.split("(")[1].split(",")[0].split(")")[0].strip("'-").replace("-", "_")
              for ln in lines if ln.startswith("@click.option") or ln.startswith("@click.argument")]
    lines.append(f"def main({', '.join(params)}):")
    lines.append("    pass")
    return "\n".join(lines), argv


def test_click_verdicts_agree_with_the_real_click(tmp_path):
    rng = random.Random(7)
    files: dict = {}
    cases: dict = {}
    for i in range(80):
        src, argv = click_case(rng)
        files[f"c{i}.py"] = src + "\n\n\nif __name__ == '__main__':\n    main()\n"
        files[f"job{i}.sh"] = HEAD + f"srun python c{i}.py {shlex.join(argv)}\n"
        cases[f"job{i}.sh"] = (src, argv, click_oracle(src, argv))
    repo = git_repo(tmp_path / "r", files)
    _, result = check_result(repo)
    assert result["status"] != "error", result["reason"]
    flagged = {f["location"]["path"] for f in result["findings"]}
    false = [(k, cases[k]) for k in flagged if cases[k][2] != "required"]
    assert not false, "\n\n".join(f"{k}: {c[1]} -> {c[2]}\n{c[0]}" for k, c in false)
    truth = [k for k, c in cases.items() if c[2] == "required"]
    assert len(truth) >= 20 and len(cases) - len(truth) >= 20, len(truth)
    found = [k for k in truth if k in flagged]
    assert len(found) >= 0.95 * len(truth), sorted(set(truth) - set(found))
