"""The job's command line read as argparse reads it (issue 26): the last occurrence of
an option wins, a unique prefix of a long option is that option (allow_abbrev),
`--opt=value`, `dest=` and `--a-b` → `args.a_b`, `BooleanOptionalAction`'s `--no-x`.

The oracle is the real argparse: each case builds the parser its train.py declares,
parses the job step's own arguments with it, and the doctor's reading through the real
CLI must agree (an error exactly where the real DataLoader / torch.compile path runs).
"""
from __future__ import annotations

import argparse
import shlex

import pytest

from conftest import git_repo
from test_seed_forms_code import SBATCH, run_check, torch_raises

TRAIN = '''import argparse

import torch
from torch.utils.data import DataLoader


def main():
    p = argparse.ArgumentParser(%(parser)s)
%(decls)s
    args = p.parse_known_args()[0]
    loader = DataLoader(list(range(8)), batch_size=2, num_workers=args.num_workers,
                        prefetch_factor=4)
    return loader


if __name__ == "__main__":
    main()
'''


def oracle(decls: str, parser: str, argv: list):
    """args.<dest> as the real argparse parses argv; SystemExit → None (no value)."""
    scope: dict = {"argparse": argparse}
    kw = ", ".join(k for k in (parser, "exit_on_error=False") if k)
    exec(f"p = argparse.ArgumentParser({kw})\n"
         + "\n".join(line.strip() for line in decls.splitlines()), scope)
    try:
        return scope["p"].parse_known_args(argv)[0]
    except (argparse.ArgumentError, SystemExit):
        return None


W = '    p.add_argument("--num_workers", type=int, default=0)'
H = '    p.add_argument("--num-workers", type=int, default=0)'
D = '    p.add_argument("--workers", "-j", dest="num_workers", type=int, default=0)'
TWO = W + '\n    p.add_argument("--num_warmup", type=int, default=0)'


@pytest.mark.parametrize("decls,parser,args", [
    (W, "", "--num_workers 0 --num_workers 4"),   # base + override: the last one wins
    (W, "", "--num_workers 4 --num_workers 0"),
    (W, "", "--num_work 4"),                        # allow_abbrev: a unique prefix
    (W, "", "--num_work=0"),
    (W, "", "--num_workers=4"),
    (W, "", "$EXTRA --num_workers 4"),              # a later word sets it whatever $EXTRA is
    (W, "allow_abbrev=False", "--num_work 4"),      # no prefixes: the default stays
    (H, "", "--num-workers 4"),
    (H, "", "--num-w 4"),
    (D, "", "--workers 4"),
    (D, "", "-j4"),
    (D, "", "-j=0"),
    (D, "", "--workers 0 -j 4"),
    (TWO, "", "--num_workers 4 --num_warmup 0"),
])
def test_the_command_line_is_read_as_argparse_reads_it(tmp_path, decls, parser, args):
    ns = oracle(decls, parser, shlex.split(args.replace("$EXTRA", "")))
    raises = torch_raises(num_workers=ns.num_workers, prefetch_factor=4)
    repo = git_repo(tmp_path, {"train.py": TRAIN % {"parser": parser, "decls": decls},
                                "job.sbatch": SBATCH + f"srun python train.py {args}\n"})
    code, res, _ = run_check(repo, "dataloader-option-conflict")
    if raises:
        assert code == 1 and res["severity"] == "error", res
        assert res["findings"][0]["data"]["from"]["num_workers"]["kind"] == "argv"
    else:
        assert code == 0 and res["status"] == "pass", res


@pytest.mark.parametrize("decls,args,word", [
    (W, "--num_workers 4 $EXTRA", "$EXTRA"),       # a later word may set it again
    (W, "--num_workers $NW", "$NW"),
    (TWO, "--num_w 4", "--num_w"),                 # ambiguous: argparse stops the job
])
def test_a_command_line_the_doctor_cannot_read_is_a_warning_naming_the_word(
        tmp_path, decls, args, word):
    if "$" not in args:
        assert oracle(decls, "", shlex.split(args)) is None
    repo = git_repo(tmp_path, {"train.py": TRAIN % {"parser": "", "decls": decls},
                                "job.sbatch": SBATCH + f"srun python train.py {args}\n"})
    code, res, _ = run_check(repo, "dataloader-option-conflict")
    assert code == 0 and res["severity"] == "warning", res
    assert f"the job's command line passes {word}, which may set it" in \
        res["findings"][0]["message"]


COMPILE = '''import argparse

import torch
from torch.utils.data import DataLoader


def main():
    p = argparse.ArgumentParser()
    %s
    args = p.parse_args()
    model = torch.nn.Linear(2, 2)
    if args.compile:
        model = torch.compile(model)
    loader = DataLoader(list(range(8)), batch_size=2, num_workers=4)
    return model, loader
'''
BOOL_OPT = 'p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True)'
STORE_TRUE = 'p.add_argument("--compile", action="store_true")'


@pytest.mark.parametrize("decl,args", [
    (STORE_TRUE, "--comp"), (STORE_TRUE, ""),
    (BOOL_OPT, "--no-compile"), (BOOL_OPT, "--no-comp"), (BOOL_OPT, ""),
    (BOOL_OPT, "--no-compile --compile"),
])
def test_compile_conditions_read_the_command_line_as_argparse(tmp_path, decl, args):
    compiled = oracle(decl, "", shlex.split(args)).compile
    repo = git_repo(tmp_path, {"train.py": COMPILE % decl,
                                "job.sbatch": SBATCH + f"srun python train.py {args}\n"})
    code, res, _ = run_check(repo, "torch-compile-risk")
    if not compiled:   # the call never runs
        assert res["status"] in ("skip", "pass") and code == 0, res
        return
    assert res["status"] == "fail" and res["severity"] == "warning", res
    assert any(f["data"]["rule"] == "fork-workers" for f in res["findings"]), res
