"""The command line (DESIGN.md §3, contract): run, list, explain, docs."""
from __future__ import annotations

import codecs
import json
import os
import sys
from pathlib import Path
from typing import Optional

import click

from doctor import __version__, suppress
from doctor.errors import InputError
from doctor.model import Severity
from doctor.outputs import (begin_command, check_outputs, end_command, expand_output_pattern,
                             plan_outputs, refuse_empty, write_output, write_outputs,
                             write_stdout)
from doctor.proc import interrupted_exit_code, stop_on_signals
from doctor.registry import RegistryError, discover
from doctor.reports_cli import verbosity_of as _verbosity, view_options
from doctor.submit import SBATCH_TIMEOUT_S
from doctor.report import FORMATS, printable
from doctor.secrets import guard_streams


def _split(values: tuple) -> list:
    return [v.strip() for item in values for v in item.split(",") if v.strip()]


def default_repo() -> Path:
    """The project root when no --repo names one: from the current directory up, the
    nearest directory holding doctor.yaml or a pyproject.toml with [tool.doctor], within
    the git work tree (settings.project_root); else the git root; else the current
    directory (outside git no parent directory is searched). Below the git root, the
    git checks and the file list are the subtree's
    (`git -C root ls-files` lists it, with the whole work tree's ignore rules)."""
    from doctor import fs
    from doctor.scanners.git import run_git
    from doctor.settings import project_root

    res = run_git(".", "rev-parse", "--show-toplevel", timeout=10)
    top = Path(res.stdout.strip()) if res.returncode == 0 and res.stdout.strip() else None
    here = Path(fs.realpath(fs.cwd()))
    return project_root(here, top) or top or here


MANY_OUTPUTS_HELP = (
    "FORMAT:FILE writes that format to FILE (junit:doctor.xml); repeat it for several "
    "(one run, one report). A plain FILE takes --format's output instead of stdout. Only a "
    "format's name before the first colon makes a FORMAT (./json:x is a file). %j: job id, "
    "%N: node name.")
OUTPUT_HELP = ("A file is replaced whole (written beside it, then renamed: readers never see "
               "a part, and a failed write leaves the old file); a file the run read, "
               "another output, or a path through a symlink in the repo that leads out of "
               "it is refused. /dev/stdout, /dev/stderr and /dev/fd/N are written to that "
               "fd as it is open (append mode appends); /dev/null, a terminal or a FIFO "
               "with a reader are written as they are.")


def job_scope(repo: Path, changed_since: Optional[str], paths: tuple,
              base: Optional[str] = None):
    """The Scope of a run given --changed-since or file arguments; None: a full run.
    `base`: the merge base begin_git found."""
    if changed_since is not None and paths:
        raise InputError("--changed-since and file arguments exclude each other")
    if changed_since is None and not paths:
        return None
    from doctor.job import scope

    if changed_since is not None:
        return scope.changed_since(repo, changed_since, base)
    return scope.from_files(repo, paths)


def begin_git(repo: Path, changed_since: Optional[str], paths: tuple) -> Optional[str]:
    """Begin the gits that list the repo before the doctor imports its checks, so that
    the two overlap (the other CPU): the index's names, and a full run's untracked
    files or the walks that find what changed since REV (whose merge base it returns).
    The click context's close kills and reaps what the run never asked for."""
    from doctor.scanners.git import LS_FILES_OTHERS, LS_FILES_TRACKED, start_early

    close = click.get_current_context().call_on_close
    close(start_early(str(repo), *LS_FILES_TRACKED))   # every run's (see doctor/job/context.py)
    if changed_since is None and not paths:
        close(start_early(str(repo), *LS_FILES_OTHERS))
    elif changed_since is not None and not paths:
        from doctor.job import scope

        base, drop = scope.begin_changed_since(repo, changed_since)
        close(drop)
        return base
    return None


def _say_scope(job) -> None:
    given = job.scope_given
    if given is None:
        return
    if job.scope is None:
        click.echo(f"doctor: {given.label}: {given.full}, so every file is checked", err=True)
    else:
        n = len(given.changed)
        click.echo(f"doctor: {given.label}: {n} changed file{'s' * (n != 1)}, "
                   f"{len(job.repo_rel_set())} checked with what ties them to a job", err=True)


def job_inputs(job) -> list:
    """The files this run reads that a report must never be written over."""
    settings = (job.settings.path or "").removesuffix("[tool.doctor]")
    return ([c.path for c in job.config_files] + [s.path for s in job.scripts]
            + list(job.caches) + ([settings] if settings else []))


def input_options(files: bool):
    """The options that say what the job is, shared by run, fix and sbatch (which takes
    its one script as an argument, and no caches)."""
    opts = [click.option("--repo", type=click.Path(path_type=Path), help="Repository to "
                         "check (default: the nearest directory from the current one up "
                         "holding doctor.yaml or a pyproject.toml with [tool.doctor], within "
                         "the git work tree; else the git toplevel; else the current "
                         "directory)."),
            click.option("--config", "configs", multiple=True,
                         help="Training config YAML (repeatable).")]
    if files:
        opts += [click.option("--sbatch", "sbatch", multiple=True, help="Job script "
                              "(repeatable; default: files in the repo holding #SBATCH "
                              "lines)."),
                 click.option("--cache", "caches", multiple=True,
                              help="Cache file or directory to scan (repeatable)."),
                 click.option("--changed-since", metavar="REV", help="Check only the files "
                              "changed since the merge base of REV and HEAD (commits, index, "
                              "work tree, untracked), and what ties them to a job "
                              "(docs/ci.md)."),
                 click.argument("paths", nargs=-1, metavar="[FILE]...",
                                type=click.Path(path_type=Path))]
    # --select/--ignore are the settings' words (select:, ignore:) and ruff's; --only and
    # --skip stay as aliases (DESIGN.md §3)
    opts += [click.option("--select", "--only", "only", multiple=True,
                          help="Comma-separated check ids, tags, or prefixes of whole words "
                          "of ids (`rsync`: every rsync-… check) to run."),
             click.option("--ignore", "--skip", "skip", multiple=True,
                          help="Comma-separated check ids, tags or id prefixes to leave out."),
             click.option("--settings", "settings_file", type=click.Path(path_type=Path),
                          help="Settings file (default: <repo>/doctor.yaml, else "
                          "[tool.doctor] in <repo>/pyproject.toml)."),
             click.option("--torch-version", help="The torch version the job will run "
                          "(default: the installed one); rules that differ between "
                          "versions follow it.")]

    def apply(fn):
        for opt in reversed(opts):
            fn = opt(fn)
        return fn
    return apply


@click.group(context_settings={"help_option_names": ["-h", "--help"]},
             invoke_without_command=True)
@click.version_option(__version__, prog_name="doctor")
def cli() -> None:
    """Pre-flight checks for distributed PyTorch jobs on Slurm clusters."""
    ctx = click.get_current_context()
    if ctx.invoked_subcommand is None:   # bare `doctor`: the help, as it is (a usage error)
        click.echo(ctx.get_help(), err=True)
        sys.exit(2)
    begin_command()  # the fds given (--output /dev/fd/N), the record of files read
    click.get_current_context().call_on_close(end_command)


@cli.command("run")
@input_options(files=True)
@click.option("--model", help="Model factory MOD:FACTORY for the DDP smoke.")
@click.option("--data", help="DataLoader factory MOD:FACTORY for the data smoke (it returns "
              "the job's DataLoader, or (dataset, DataLoader kwargs)).")
@click.option("--gpu-memory", metavar="SIZE", help="The target GPU's memory per rank for "
              "gpu-memory-estimate, such as 80GB or 64GiB.")
@click.option("--no-smoke", is_flag=True, help="Skip the DDP smoke.")
@click.option("--static", is_flag=True, help="Only checks that need no live node (CI gate); "
              "implies --no-smoke; never imports torch.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table",
              show_default=True, help="What goes to stdout (or --output).")
@click.option("--output", multiple=True, metavar="[FORMAT:]FILE",
              help=MANY_OUTPUTS_HELP + " " + OUTPUT_HELP)
@click.option("--json", "json_file", help="Also write the JSON report here (%j: job id, "
              "%N: node name). " + OUTPUT_HELP)
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error",
              show_default=True, help="Lowest severity of a failure that makes the exit code 1.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 unless the input is bad (exit 2).")
@click.option("--gather", is_flag=True, help="Under `srun --ntasks-per-node=1`: merge every "
              "node's report into one, written by task 0 (automatic for such steps).")
@click.option("--gather-timeout", type=click.FloatRange(1, 3600), default=30.0,
              show_default=True, help="Seconds a node may be late before it is reported "
              "missing.")
@view_options
@suppress.baseline_options(write=True, output_help=OUTPUT_HELP)
def run_cmd(repo: Optional[Path], configs: tuple, sbatch: tuple, caches: tuple,
            changed_since: Optional[str], paths: tuple, model: Optional[str],
            data: Optional[str], no_smoke: bool, static: bool, only: tuple, skip: tuple,
            settings_file: Optional[Path], fmt: str, output: tuple,
            json_file: Optional[str], fail_on: str, exit_zero: bool,
            torch_version: Optional[str], gpu_memory: Optional[str] = None,
            gather: bool = False,
            gather_timeout: float = 30.0, quiet: bool = False, verbose: bool = False,
            color: str = "auto", baseline: Optional[str] = None,
            write_baseline: Optional[str] = None) -> None:
    """Run the checks and report."""
    verbosity = _verbosity(quiet, verbose)
    repo = repo if repo is not None else default_repo()
    base = begin_git(repo, changed_since, paths)
    from doctor.job.context import Job
    from doctor.report import render
    from doctor.runner import run

    if not only:   # every check module is imported: now, while git walks the work tree
        discover()
    job = Job(repo, configs=configs, sbatch=sbatch, caches=caches,
              settings_file=settings_file, model=model, data=data,
              torch_version=torch_version, static=static,
              scope=job_scope(repo, changed_since, paths, base))
    if gpu_memory is not None:   # the check's option, over the settings' (exit 2 if no size)
        from doctor.memory.judge import parse_size

        if not parse_size(gpu_memory):
            raise InputError(f"--gpu-memory: {gpu_memory!r} is not a size, such as 80GB")
        job.settings.options.setdefault("gpu-memory-estimate", {})["gpu_memory"] = gpu_memory
    refuse_empty(("--json", json_file))
    json_path = expand_output_pattern(json_file) if json_file else None
    files = plan_outputs(output, fmt)
    outputs = [("--json", json_path)] if json_path else []
    outputs += [(o.label, o.path) for o in files]
    outputs += suppress.use_baseline(job, baseline, write_baseline)
    check_outputs(outputs, job_inputs(job), job.repo)
    from doctor.multinode.merge import run_gathered
    from doctor.multinode.plan import plan_from_env, wants_gather

    progress = _progress(job)
    if gather or (not static and wants_gather(job.login_env)):
        plan = plan_from_env(job.login_env, timeout=gather_timeout)
        report, writes = run_gathered(
            job, plan, only=_split(only), skip=_split(skip), static=static,
            no_smoke=no_smoke, fail_on=Severity.parse(fail_on), on_done=progress)
        _end_progress(progress)
        if not writes:  # task 0 writes the one merged report of the step
            sys.exit(0 if exit_zero else report.exit_code())
    else:
        report = run(job, only=_split(only), skip=_split(skip), static=static,
                     no_smoke=no_smoke, fail_on=Severity.parse(fail_on),
                     on_done=progress)
        _end_progress(progress)
    _say_scope(job)
    # --write-baseline: today's findings are accepted now, and the report says so
    written = suppress.accept_all(report, write_baseline) if write_baseline else None
    check_outputs(outputs, job_inputs(job), job.repo)  # again: now every file read is known
    if json_path:  # first: the job-log copy must not depend on stdout's reader
        write_output(json_path, render("json", report), job.repo)
    write_outputs(files, fmt, lambda f, stream: render(f, report) if f != "table"
                  else _table(report, stream, verbosity, color), job.repo)
    if write_baseline and written:
        suppress.write_baseline(write_baseline, written, job.repo)
    code = report.exit_code()
    sys.exit(0 if exit_zero else code)



def _table(report, stream, verbosity: int = 0, color: str = "auto") -> str:
    """The human report for `stream` (None: a file): its width and colours are the
    terminal's, when it is one."""
    from doctor.report.table_format import render, terminal_width, use_color

    return render(report, color=use_color(color, stream) if stream else color == "always",
                  verbosity=verbosity, width=terminal_width(stream) if stream else None)


def _progress(job):
    """What is running now, on stderr, only on a terminal (doctor/progress.py)."""
    if not sys.stderr.isatty():
        return None
    from doctor.progress import Progress

    progress = Progress()
    job.on_progress = progress.say
    # cleared however the command ends: a refusal's one line must not follow the progress
    click.get_current_context().call_on_close(progress.finish)
    return progress


def _end_progress(progress) -> None:
    if progress is not None:
        progress.finish()


@cli.command("fix")
@input_options(files=True)
@click.option("--static", is_flag=True, help="Only the checks that need no live node.")
@click.option("--diff", "preview", is_flag=True, help="Print the edits as a unified diff and "
              "change nothing (the default).")
@click.option("--write", is_flag=True, help="Apply the edits, then run the fixed checks "
              "again and report what still fails.")
@click.option("--unsafe", is_flag=True, help="Include the edits that change what the job "
              "does (a new limit, a new path), not only how it says it.")
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error",
              show_default=True, help="After --write: lowest severity of a remaining failure "
              "that makes the exit code 1.")
def fix_cmd(repo: Optional[Path], configs: tuple, sbatch: tuple, caches: tuple,
            changed_since: Optional[str], paths: tuple, settings_file: Optional[Path],
            only: tuple, skip: tuple, static: bool,
            torch_version: Optional[str], preview: bool, write: bool, unsafe: bool,
            fail_on: str) -> None:
    """Apply the fixes that failing checks carry (docs/fix.md).

    Without --write, print them as a unified diff and change nothing (`doctor fix |
    git apply` applies it). Exit 0: nothing to fix; 1: the preview would change
    something, or after --write a failure at or above --fail-on remains; 2: bad input,
    or a file changed since it was read.
    """
    from doctor import fixing
    from doctor.job.context import Job
    from doctor.runner import run

    if preview and write:
        raise InputError("--diff and --write exclude each other (--diff is the default)")

    repo = repo if repo is not None else default_repo()
    scope = job_scope(repo, changed_since, paths)

    def new_job() -> "Job":
        return Job(repo, configs=configs, sbatch=sbatch, caches=caches,
                   settings_file=settings_file, torch_version=torch_version, static=static,
                   scope=scope)

    job = new_job()
    progress = _progress(job)
    report = run(job, only=_split(only), skip=_split(skip), static=static, no_smoke=True,
                 fail_on=Severity.parse(fail_on), on_done=progress)
    _end_progress(progress)
    plan = fixing.plan(job.repo, report.results, unsafe=unsafe, log=job.unreadable)
    changed = plan.changed()
    for cid, _f, why in plan.skipped:
        click.echo(f"doctor fix: {cid}: not fixed: {printable(why)}", err=True)
    if plan.unsafe_left:
        click.echo(f"doctor fix: {plan.unsafe_left} more with --unsafe", err=True)
    unfixable = sorted({r.id for r in report.results if r.status.value == "fail"
                        and not any(f.edits for f in r.findings)})
    if unfixable:
        click.echo(f"doctor fix: no automatic fix for {', '.join(unfixable)} "
                   "(`doctor run` says how)", err=True)
    if not changed:
        click.echo("doctor fix: nothing to fix", err=True)
        sys.exit(_still_failing(report) if write else 0)
    if not write:
        text = "".join(fixing.unified_diff(fp) for fp in changed)
        write_stdout(text if not sys.stdout.isatty() else
                     "".join(printable(line) + "\n" for line in text.splitlines()))
        n = len(plan.fixed)
        click.echo(f"doctor fix: {n} fix{'es' if n != 1 else ''} in {len(changed)} "
                   f"file{'s' if len(changed) != 1 else ''} (apply with --write)", err=True)
        from doctor.secrets import scrub

        if scrub(text) != text:  # stdout masks them: `git apply` would not find those lines
            click.echo("doctor fix: the preview shows secrets as *** (`git apply` cannot "
                       "take it): apply with --write", err=True)
        sys.exit(1)
    for fp in changed:
        fixing.write(fp)
        # an edit may name the file under another name (a symlink in the repo): one plan
        ids = sorted({cid for cid, f in plan.fixed
                      if any(plan.files.get(e.path) is fp for e in f.edits)})
        click.echo(f"fixed {printable(fp.rel)} ({', '.join(ids)})")
    # the same checks again, on the files as they are now: an edit may change what
    # other checks see, and what no edit could fix still fails the job
    sys.exit(_still_failing(run(new_job(), only=_split(only), skip=_split(skip),
                                static=static, no_smoke=True, fail_on=Severity.parse(fail_on))))


def _still_failing(report) -> int:
    """After --write: the checks that still fail or could not complete, as a table on
    stderr; the exit code is `doctor run`'s for the same checks."""
    left = [r for r in report.results if r.status.value in ("fail", "error")]
    if left:
        from doctor.report.table_format import render as table

        report.results = left
        click.echo("doctor fix: still failing:", err=True)
        click.echo(table(report, color=False), nl=False, err=True)
    return report.exit_code()


@cli.command("list")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
def list_cmd(fmt: str) -> None:
    """Every check: id, severity, title, tags, needs.

    The severity is what the check's findings can be: `error/warning` for a check that
    reports both (doctor/reported.py); JSON: `severity` as registered, `severities` all."""
    from tabulate import tabulate

    from doctor.registry import all_checks
    from doctor.reported import severities, shown_severity

    specs = all_checks()
    if fmt == "json":
        click.echo(json.dumps([{"id": s.id, "severity": str(s.severity),
                                "severities": [str(v) for v in severities(s)],
                                "title": s.title, "tags": list(s.tags),
                                "needs": list(s.needs), "static": s.static} for s in specs],
                              indent=2))
        return
    rows = [[s.id, shown_severity(s), "yes" if s.static else "",
             ",".join(s.tags), ",".join(s.needs), s.title] for s in specs]
    click.echo(tabulate(rows, headers=["id", "severity", "static", "tags", "needs", "title"]))


@cli.command("explain")
@click.argument("names", nargs=-1, required=True, metavar="ID|PREFIX|TAG|site [PROFILE]...")
def explain_cmd(names: tuple) -> None:
    """Print a check's full documentation (an id, a prefix of whole words of ids, or a
    tag: each check it names), or a site profile's (`doctor explain lumi`; `doctor
    explain site` lists them)."""
    from doctor import sites
    from doctor.docs import check_markdown
    from doctor.names import did_you_mean, selects, vocabulary
    from doctor.registry import all_checks

    profiles = sites.known()
    if names[0] == "site" and len(names) == 1:
        for name in profiles:
            data = sites.load(name)
            click.echo(f"{name}: {data.get('name', name)}: {data.get('summary', '')}")
        click.echo("Explain one with `doctor explain NAME`; choose it with `site: NAME` in "
                   "doctor.yaml; see docs/site-profiles.md.")
        return
    site = names[0] == "site"   # `doctor explain site NAME`: a profile, whatever else it is
    specs = all_checks()
    pages = []
    for name in names[1:] if site else names:
        chosen = [] if site else ([s for s in specs if s.id == name]
                                  or [s for s in specs if selects(name, s)])
        if chosen:
            pages += [check_markdown(s) for s in chosen]
        elif name in profiles:
            pages.append(_profile_text(name))
        elif site:
            raise InputError(f"unknown site profile {name!r}{did_you_mean(name, profiles)} "
                             "(see `doctor explain site`)")
        else:
            raise InputError(f"unknown check id {name!r}"
                             f"{did_you_mean(name, vocabulary(specs) | set(profiles))} "
                             "(see `doctor list`; site profiles: `doctor explain site`)")
    click.echo("\n".join(pages))


def _profile_text(name: str) -> str:
    """A site profile as written: every value with its source beside it."""
    from doctor.settings import SITES_DIR

    text = (SITES_DIR / f"{name}.yaml").read_text(encoding="utf-8")
    return (text.rstrip("\n") + f"\n\n# Use it with `site: {name}` in doctor.yaml (or it is "
            "detected on the cluster's login nodes); see docs/site-profiles.md.")


# A developer's command (`python -m doctor.docs` runs it too): it writes the source tree's
# docs/checks, which an installed copy has not, so it is left out of `doctor --help`.
@cli.command("docs", hidden=True)
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 when docs/checks is stale.")
@click.option("--out", type=click.Path(path_type=Path),
              help="Directory for the pages (default: docs/checks of the doctor's source tree).")
def docs_cmd(check_only: bool, out: Optional[Path]) -> None:
    """Write docs/checks/<id>.md and index.md from the registry and fixtures."""
    from doctor.docs import regenerate

    code, line = regenerate(check_only, out)
    click.echo(line, err=code != 0)
    if code:
        sys.exit(code)


@cli.command("sbatch", context_settings={"ignore_unknown_options": True,
                                         "allow_interspersed_args": False})
@input_options(files=False)
@click.option("--smoke", is_flag=True, help="Also run the DDP smoke here before submitting.")
@click.option("--model", help="Model factory MOD:FACTORY for the DDP smoke.")
@click.option("--data", help="DataLoader factory MOD:FACTORY for the data smoke (with --smoke, "
              "as `run --data`).")
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error",
              show_default=True, help="Lowest severity of a failure that refuses the job.")
@click.option("--json", "json_file", help="Also write the JSON report here (%j: the new "
              "job id, %N: this node). " + OUTPUT_HELP)
@click.option("--force", is_flag=True, help="Submit even if checks fail; the report is "
              "appended as # comments to the job's output file, before the job's own output.")
@click.option("--sbatch-timeout", type=click.FloatRange(1, 3600),
              default=SBATCH_TIMEOUT_S, show_default=True,
              help="Seconds sbatch may take; past that it is stopped and the outcome is unknown.")
@view_options
@suppress.baseline_options(write=False)
@click.argument("script", type=click.Path(path_type=Path))
@click.argument("sbatch_args", nargs=-1, type=click.UNPROCESSED)
def sbatch_cmd(repo: Optional[Path], configs: tuple, settings_file: Optional[Path],
               only: tuple, skip: tuple, smoke: bool, model: Optional[str],
               torch_version: Optional[str], fail_on: str, json_file: Optional[str],
               force: bool, script: Path, sbatch_args: tuple, data: Optional[str] = None,
               sbatch_timeout: float = SBATCH_TIMEOUT_S, quiet: bool = False,
               verbose: bool = False, color: str = "auto",
               baseline: Optional[str] = None) -> None:
    """Check SCRIPT, then submit it: doctor sbatch [OPTIONS] SCRIPT [SBATCH OPTIONS] [-- ARGS].

    SBATCH OPTIONS go to sbatch, ARGS after `--` to the script. The checks read the job as
    sbatch will run it: SBATCH OPTIONS override the script's #SBATCH lines, and so do
    sbatch's SBATCH_* input variables (below the command line). The job id is the only
    thing on stdout; the findings, if any, go to stderr (-v: every check). Exit 0:
    submitted; 1: a check failed (not submitted); 3: a check could not complete (not
    submitted); 2: bad input, or sbatch refused the job (not submitted); 4: the outcome
    is unknown (sbatch printed an id and failed, hung, or was killed): the job may be
    queued, check `squeue --me` before submitting again.
    """
    from doctor import submit
    from doctor.job.context import Job
    from doctor.report import render
    from doctor.runner import run

    from doctor import fs

    verbosity = _verbosity(quiet, verbose)
    if fs.is_dir(script):   # the words of `run --sbatch` (errors.read_input)
        raise InputError(f"{script} is a directory, not a sbatch script")
    if not fs.is_file(script):
        raise InputError(f"{script}: not a regular file, not a sbatch script"
                         if os.path.exists(script) else f"job script not found: {script}")
    args = list(sbatch_args)
    script_args = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    job = Job(repo if repo is not None else default_repo(), configs=configs,
              sbatch=(str(script),), settings_file=settings_file, model=model, data=data,
              torch_version=torch_version, submit_args=args)
    suppress.use_baseline(job, baseline)
    refuse_empty(("--json", json_file))
    if json_file and "%j" not in json_file.replace("%%", ""):  # else: known once submitted
        check_outputs([("--json", expand_output_pattern(json_file))], job_inputs(job), job.repo)
    progress = _progress(job)
    report = run(job, only=_split(only), skip=_split(skip), no_smoke=not smoke,
                 fail_on=Severity.parse(fail_on), on_done=progress)
    _end_progress(progress)
    from doctor.report.table_format import render_compact

    passed = report.status() in ("pass", "warn")
    # quiet on success: the findings when there are some, the summary when refused
    found = any(r.status.value in ("fail", "error") for r in report.results)
    if verbosity > 0 or (found if verbosity == 0 else not passed):
        click.echo(_table(report, sys.stderr, verbosity, color), nl=False, err=True, color=True)
    job_id, unknown = None, None
    try:
        if passed:
            job_id, said = submit.sbatch(str(script), args, script_args, timeout=sbatch_timeout)
        elif force:
            job_id, said, log = submit.submit_forced(
                str(script), args, script_args,
                render_compact(report), timeout=sbatch_timeout,
                json_text=render("json", report))
            where = printable(log) if log else "nothing: the job output path is unknown"
            click.echo(f"doctor: submitted anyway (--force); the report is appended to {where}",
                       err=True)
        else:
            why = "a check failed" if report.status() == "fail" else "a check could not complete"
            click.echo(f"doctor: {printable(str(script))} not submitted: {why} (fix it, or "
                       "--force to submit anyway)", err=True)
            said = ""
    except submit.OutcomeUnknown as exc:
        job_id, unknown, said = exc.job_id, exc, ""
    if said:
        click.echo("\n".join(printable(x if x.startswith("sbatch:") else f"sbatch: {x}")
                             for x in said.splitlines()), err=True)
    if json_file:
        _write_sbatch_json(json_file, job_id, render("json", report), job_inputs(job),
                           maybe_queued=job_id is not None or unknown is not None,
                           repo=job.repo)
    if unknown is not None:
        held = " It was submitted held (--force): `scontrol release` it once found." \
            if force and not passed else ""
        why_unknown = printable(str(unknown))
        click.echo(f"doctor: error: the submission's outcome is unknown: {why_unknown}. "
                   f"{f'Job {job_id}' if job_id else 'The job'} may be queued: check "
                   f"`squeue --me` before submitting again.{held}", err=True)
        if job_id:
            click.echo(job_id)
        sys.exit(4)
    if job_id is None:
        sys.exit(report.exit_code())
    click.echo(job_id)


def _write_sbatch_json(pattern: str, job_id: Optional[str], text: str, inputs: list,
                       maybe_queued: bool, repo: Optional[Path] = None) -> None:
    """The --json report; once a job may be queued, a failure to write it is a warning
    (an error exit would invite a second submission)."""
    path = expand_output_pattern(pattern, dict(os.environ, SLURM_JOB_ID=job_id)
                                 if job_id else None)
    try:
        check_outputs([("--json", path)], inputs, repo)
        write_output(path, text, repo)
    except InputError as exc:
        if not maybe_queued:
            raise
        click.echo(f"doctor: warning: {f'job {job_id}' if job_id else 'the job'} may be "
                   f"queued, but {exc}", err=True)


from doctor.reports_cli import diff_cmd, show_cmd  # noqa: E402  (registered beside main)

cli.add_command(diff_cmd)
cli.add_command(show_cmd)


def _usable_streams() -> None:
    """A stream closed at start (`>&-`) is None in Python: what would go there goes to
    /dev/null, so the run still writes its --json/--output files and exits with its
    verdict. A stdout that cannot encode every character (a latin-1 locale; click
    writes UTF-8 to an ASCII one) shows `?` for the others instead of failing the run."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    if codecs.lookup(encoding).name != "utf-8" and hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="replace")


def _said(exc: click.ClickException) -> str:
    """Click's message; for an unknown option, the nearest of the command's own options
    compared without their dashes (click's own list offers `--help` for `--selet`)."""
    if not isinstance(exc, click.exceptions.NoSuchOption) or exc.ctx is None:
        return exc.format_message()
    from doctor.names import did_you_mean

    opts = [o for p in exc.ctx.command.params for o in [*p.opts, *p.secondary_opts]
            if o.startswith("--")] + ["--help"]
    near = did_you_mean(exc.option_name.lstrip("-"), [o[2:] for o in opts])
    return f"No such option {exc.option_name!r}" + near.replace(" '", " '--")


@guard_streams()  # every text that reaches stdout or stderr is scrubbed of secrets
def main(argv: Optional[list] = None) -> None:
    """Entry point: bad input is one line on stderr and exit 2, never a traceback."""
    from doctor.report import printable  # a path or value echoed back: no raw control codes
    from doctor.secrets import mask_text

    _usable_streams()
    try:
        with stop_on_signals():  # SIGINT, SIGTERM, SIGHUP: clean up, exit 128 + the signal
            cli.main(args=argv, prog_name="doctor", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("doctor: interrupted", err=True)
        sys.exit(interrupted_exit_code())
    except click.ClickException as exc:
        click.echo(f"doctor: error: {printable(mask_text(_said(exc)))}", err=True)
        sys.exit(2)
    except (InputError, RegistryError) as exc:
        click.echo(f"doctor: error: {printable(mask_text(str(exc)))}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("doctor: interrupted", err=True)
        sys.exit(interrupted_exit_code())
    except Exception as exc:  # a bug in the doctor itself: still no traceback by default
        if os.environ.get("DOCTOR_DEBUG"):
            raise
        click.echo(f"doctor: internal error: {type(exc).__name__}: "
                   f"{printable(mask_text(str(exc)))} "
                   "(set DOCTOR_DEBUG=1 for the traceback)", err=True)
        sys.exit(3)
    sys.exit(0)
