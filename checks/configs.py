"""A config file the job names on its command line does not exist."""
from __future__ import annotations

import ast
import os
import re
from pathlib import Path
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, fs
from doctor.model import FixOption, edit_steps
from doctor.job.nearest import in_repo, nearest_file, word_edit
from doctor.job.context import Job
from doctor.job.made import script_writes, producer
from doctor.job.overrides import ParsedArgs, Unknown, parse_overrides
from doctor.job.closure import step_files
from doctor.job.sources import tree_of
from doctor.job.stepconfigs import _find, _hydra_target, missing_of, step_configs


@check("config-not-found", title="The job names a config file that does not exist",
       severity="error", tags=("config", "sbatch"), needs=("sbatch", "configs"), timeout=30)
def config_not_found(job: Job) -> Iterator[Finding]:
    """A step of the job names a config (`--config X`, `-c X`, a positional `*.yaml` or
    `*.yml`, an option named like `--yaml`, `--cfg`, `--config-file`, `--model_config`
    or `--deepspeed_config` whose value is a config file, Hydra's `--config-name` with
    `--config-path`, or `@hydra.main` in its entry module) that is in none of the places
    the program would look for it. Arguments that a wrapper script passes on to python
    (`srun site_launch.sh train.py --cfg x.yml`, the wrapper running `python3 "$@"`)
    are the step's arguments too.

    The doctor reads every step of each job script (each one runs; Hydra's configs are
    read for the training step, doctor/job/steps.py) and looks the file up the way the
    program does: relative to the step's working directory (the submit directory,
    `--chdir` or `cd`), Hydra's `--config-path` relative to the entry script. A file
    that an earlier command of the job writes (the destination of `cp`, `mv`, `install`,
    `rsync`, a `>` or `tee` target, wget -O; never a source, a comment or text later on
    the line) is not reported, nor a `--config` value that is not a file name (a preset
    such as `llama3_debugmodel`). A bare name that is not where the program opens it but
    is the one repo file of that name in another directory (`350M.yml`, the file being
    configs/350M.yml) is a warning when none of the step's code (its entry, what that
    imports, a `.py` file it is given) names that directory: whether the program looks
    there is the unknown link. A file the job makes otherwise is a warning that names
    the producer (doctor/job/made.py): an earlier step of the script that writes into
    its directory, the job this one waits to succeed (`--dependency=afterok:<id>`,
    assumed to write it), a repo script outside the job's own code that writes into its
    directory, or a run, when the file is under an output or checkpoint directory that
    git ignores. A path outside the repo, or a relative one when the job `cd`s outside
    the repo, is only judged where its directory is visible (not in the CI gate, not on
    a machine without the cluster's /scratch), and then as a warning.

    The Hydra config's defaults list is followed too: an entry (`- data: standard`) whose
    file the config directory lacks is an error at that entry, naming the `.gitignore`
    rule when one hides the file from every clone (a bare `data` also ignores
    configs/data/). Not judged: `optional` entries, Hydra's own groups (`hydra/…`, whose
    configs come with Hydra and its plugins), jobs whose search path holds more than the
    config directory (a `hydra.searchpath` in a config or on the command line, `-cd`/
    `--config-dir`, a `hydra_plugins` package in the repo or an installed search path
    plugin: the entry may be found there), and names the step's code stores in Hydra's
    ConfigStore (`cs.store(name="base_config", node=...)`; any, when a store call's name
    is not a literal). With `-cd DIR` the primary config still comes from the code's
    `config_path` when it is there, as in Hydra.

    ## Why it matters
    The program stops at its first line, `FileNotFoundError` or Hydra's `Cannot find
    primary config`, after the whole queue wait, on every rank. A config renamed in a
    refactor, or a path written relative to another directory, is the usual cause.

    ## How to fix
    Point the script at the config's real path (relative to the directory the job
    runs in, or absolute), or add the missing file to the repo. The message names the
    repo's file of that name (or of a close name in the same directory) when there is
    one, and `doctor fix --unsafe` then writes it on the line that names the config.
    """
    if not job.scripts:
        raise Skip("no job script: nothing names a config")
    named = 0
    by_defaults: dict = {}   # missing file -> (step, defaults entry, group, [scripts])
    for script in job.scripts:
        sc = step_configs(job, script)
        named += len(sc.configs) + len(sc.missing)
        train = job.step(script)
        # every step runs: a config another step names must exist too
        missing = [(train, *m) for m in sc.missing] + [
            (s, *m) for s in job.steps(script) if s is not train and s.is_training
            for m in missing_of(job, s)]
        named += len(missing) - len(sc.missing)
        for s in job.steps(script):
            flagged = _flag_configs(job, s) if s.is_training else []
            named += len(flagged)
            missing += [(s, *m) for m, found in flagged if not found and (s, *m) not in missing]
        for step, written, rel, line in missing:
            if not written.endswith(CONFIG_SUFFIXES) or script_writes(step, written):
                continue   # `--config llama3_debugmodel` names a preset, not a file
            outside = os.path.isabs(written) and not written.startswith(str(job.repo)) \
                or _runs_outside(job, step)
            base = written if os.path.isabs(written) else os.path.join(step.cwd or "", written)
            if outside and (job.static or not os.path.isdir(os.path.dirname(base))):
                continue   # its directory is not visible here (the cluster's /scratch)
            path = Path(os.path.normpath(base if os.path.isabs(base) else job.repo / base))
            made = producer(job, script, step, written, path)
            guess = nearest_file(job, written, path) if in_repo(job, path) else None
            passed = _passed_at(step, written)
            via = f" (passed to it by {passed[0]}:{passed[1]})" if passed else ""
            at = passed or (rel, line)
            fixed = _from_cwd(job, step, guess) if guess and not made else None
            edit = word_edit(job, at[0], at[1], written, fixed,
                             f"read {fixed} instead of {written}") if fixed else None
            yield Finding(
                f"{rel}:{line} runs {step.entry} with the config {written}{via}, which does "
                f"not exist (looked in {_where(job, step)})" + (
                    f"; {made} makes it before this step, if that goes well"
                    if made else f"; the repo has {guess}" if guess else ""),
                location=Location(*at),
                options=(FixOption(edit_steps((edit,))),) if edit else (),
                edits=(edit,) if edit else (),
                fix=(f"Point the script at the config's real path (`{fixed}` from the "
                     "directory the job runs in), or add the file." if fixed else
                     "Point the script at the config's real path, or add the file.")
                if not made else
                "Check that the producer writes it at this path before the job runs.",
                data={"config": written, "script": script.rel, "entry": step.entry,
                      "producer": made, "suggestion": guess},
                severity=Severity.WARNING if outside or made else None)
        for s in job.steps(script):
            yield from _found_by_name_only(job, s)
        stored = _config_store(job, train) if sc.missing_defaults else set()
        for path, entry, group in sc.missing_defaults:
            choice = f"{group}/{Path(path).stem}" if group else Path(path).stem
            if stored is None or choice in stored:
                continue   # the code's ConfigStore may hold it (a structured config)
            by_defaults.setdefault(os.path.normpath(path), (train, entry, group, []))[3].append(
                script.rel)
    named += len(by_defaults)
    for path, (step, entry, group, scripts) in sorted(by_defaults.items(),
                                                      key=lambda kv: (kv[1][1][0], kv[1][1][1])):
        yield _missing_default(job, Path(path), step, entry, group, scripts)
    if not named:
        raise Skip("no job script names a config on its command line")


def _config_store(job: Job, step) -> Optional[set]:
    """The "group/name" of every config the step's code stores in Hydra's ConfigStore
    (`cs.store(name="base_config", node=Base)`, `group="db"`): Hydra composes those
    without a file. None when a store call's name or group is not a literal (any entry
    may be one of them)."""
    out: set = set()
    entry = job.entry_file(step)
    for path in step_files(job, step) or ([entry] if entry is not None else []):
        tree = tree_of(job, path)
        for node in ast.walk(tree) if tree is not None else ():
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "store"):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            if "node" not in kw and "name" not in kw:
                continue   # another object's store()
            parts = []
            for key in ("group", "name"):
                v = kw.get(key)
                if v is None:
                    continue
                if not (isinstance(v, ast.Constant) and isinstance(v.value, str)):
                    return None
                parts.append(re.sub(r"\.ya?ml$", "", v.value))
            if "name" not in kw:
                return None
            out.add("/".join(parts))
    return out


def _missing_default(job: Job, path: Path, step, entry: tuple, group: str,
                     scripts: list) -> Finding:
    """A Hydra defaults list chooses a config that the config directory lacks (and no
    other directory is on Hydra's search path): Hydra stops with "Could not find '<group>/<name>'"
    before the training starts. A `.gitignore` rule that hides the file from every clone
    is named (the file may exist in the author's checkout)."""
    at = (job.rel(os.path.normpath(entry[0])), entry[1])
    rel = job.rel(path)
    choice = f"{group}/{path.stem}" if group else path.stem
    rule = job.git("check-ignore", "-v", "--no-index", "--", rel)
    hidden = ""
    if rule.returncode == 0 and rule.stdout.strip():
        source, _, pattern = rule.stdout.split("\t", 1)[0].rpartition(":")   # file:line:rule
        hidden = f"; {source} (`{pattern}`) ignores it, so no clone has it"
    return Finding(
        f"{at[0]}:{at[1]} chooses the Hydra config {choice} for {', '.join(scripts)} "
        f"({step.entry}), but {rel} does not exist{hidden}: Hydra stops before the "
        f"training with \"Could not find '{choice}'\"",
        location=Location(*at),
        fix=(f"Add {rel} to the repo" + (" (and un-ignore it)" if hidden else "")
             + f", or choose an option of {group or 'the configs'} that exists."),
        data={"config": rel, "group": group, "scripts": scripts, "entry": step.entry,
              "producer": None, "suggestion": None})


def _found_by_name_only(job: Job, step) -> Iterator[Finding]:
    """A config the step names that is not where the program opens it (relative to the
    working directory, else the entry's directory or the repo root) and that the doctor
    takes for the one repo file of that name elsewhere (`350M.yml` for configs/350M.yml):
    found only if the program looks in that directory. When none of the step's code
    names the directory (`os.path.join("configs", name)`, './utils/yaml/' + name), the
    link is unknown: a warning that names it. Code the doctor cannot read: silent."""
    if not step.is_training or step.entry_is_module:
        return
    parsed = parse_overrides(list(step.args))
    cwd = Path(step.cwd) if step.cwd and os.path.isabs(step.cwd) else job.repo
    entry = job.entry_file(step)
    if entry is None or _hydra_target(job, parsed, entry, cwd) is not None:
        return
    written = [a.path for a in parsed.configs if not isinstance(a.path, Unknown)]
    written += [m[0] for m, found in _flag_configs(job, step) if found]
    code = None
    for name in dict.fromkeys(written):
        if os.path.isabs(name) or not name.endswith(CONFIG_SUFFIXES) or any(
                fs.is_file(b / name, job.unreadable) for b in (cwd, entry.parent, job.repo)):
            continue
        found = _find(job, name, cwd, entry)
        if found is None or not in_repo(job, found):
            continue
        folder = job.rel(found.parent)
        if code is None:   # the step's code: its entry's closure, and a .py file it is
            # given (`run.py train.py 350M.yml`: the runner runs train.py)
            given = [cwd / a for a in step.args if str(a).endswith(".py")]
            code = [fs.read_text(p, job.unreadable) or "" for p in step_files(job, step)
                    + [g for g in given if fs.is_file(g, job.unreadable)]]
        last = re.escape(folder.rsplit("/", 1)[-1])
        if not code or any(re.search(rf"[\"'/]{last}[\"'/]", t) for t in code):
            continue   # the code names the directory: it most likely looks there
        fixed = _from_cwd(job, step, job.rel(found))
        at = _passed_at(step, name) or (step.script.rel, step.line)
        edit = word_edit(job, at[0], at[1], name, fixed, f"read {fixed} instead of {name}")
        yield Finding(
            f"{step.where} runs {step.entry} with the config {name}, which is not in "
            f"{_where(job, step).replace(' and the repo', ' or the repo root')}; the repo's "
            f"only file of that name is {job.rel(found)}, and the step's code "
            f"({len(code)} file{'s' if len(code) != 1 else ''}: {job.rel(entry)}, what it "
            f"imports, the .py files it is given) does not name {folder}/: unless the "
            "program looks there, it stops with "
            "FileNotFoundError",
            location=Location(*at),
            fix=f"Pass `{fixed}` (the file's path from the directory the job runs in).",
            options=(FixOption(edit_steps((edit,))),) if edit else (),
            edits=(edit,) if edit else (),
            data={"config": name, "script": step.script.rel, "entry": step.entry,
                  "producer": None, "suggestion": job.rel(found)},
            severity=Severity.WARNING)


CONFIG_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".cfg", ".ini", ".conf")
# `--yaml X`, `--cfg X`, `--config-file X`, `--model_config X`, `--deepspeed_config X`:
# an option whose name ends in config/cfg/conf/yaml/yml (then maybe _file/_path) and whose
# value is a config file. `--config`/`-c` are read with the Hydra and LightningCLI
# configs (stepconfigs); Hydra's `--config-path`/`--config-dir` name directories.
_CONFIG_FLAG = re.compile(r"--(?:[A-Za-z0-9]+[-_])*(?:config|cfg|conf|yaml|yml)"
                          r"(?:[-_](?:file|path|yaml))?")
_NOT_FLAGS = {"--config", "--config-path", "--config-dir", "--config-name"}


def _flag_configs(job: Job, step) -> list:
    """((written path, script rel, line), found) of each config file that a step names
    with a `--yaml`/`--cfg`/`--…config-file`-style option (`--opt X` or `--opt=X`), found
    when the doctor finds it as it finds a `--config` (stepconfigs._find: the step's
    working directory, the entry's directory, the one repo file with that tail)."""
    args = list(step.args)
    cwd = Path(step.cwd) if step.cwd and os.path.isabs(step.cwd) else job.repo
    entry = job.entry_file(step)
    out = []
    for i, word in enumerate(args):
        name, eq, value = word.partition("=")
        if not eq:
            value = args[i + 1] if i + 1 < len(args) else ""
        if name in _NOT_FLAGS or not _CONFIG_FLAG.fullmatch(name) or \
                not value.endswith(CONFIG_SUFFIXES):
            continue
        # a shell variable in it is Unknown, as for --config (never guessed)
        parsed: ParsedArgs = parse_overrides(["--config", value])
        written = parsed.configs[0].path if parsed.configs else Unknown("not read")
        if isinstance(written, Unknown):
            continue
        out.append(((written, step.script.rel, step.line),
                    _find(job, written, cwd, entry) is not None))
    return out


def _passed_at(step, written: str) -> Optional[tuple]:
    """(script, line) of the job line that wrote the config, when the step runs in a
    wrapper script that got it as an argument (`srun launch.sh --cfg x.yml`, launch.sh
    running `python train.py "$@"`): the line the user edits."""
    for launcher in step.chain:
        if (launcher.path, launcher.line) == (step.script.rel, step.line):
            continue
        script = next((s for s in step.scripts if s.rel == launcher.path), None)
        lines = script.text.splitlines() if script is not None else []
        text = ""
        for k in range(launcher.line - 1, min(len(lines), launcher.line + 40)):
            text += lines[k]
            if not lines[k].endswith("\\"):
                break
        if written in text:
            return launcher.path, launcher.line
    return None


def _from_cwd(job: Job, step, rel: str) -> str:
    """A repo file's path as the step names it: relative to its working directory."""
    cwd = step.cwd if step.cwd and os.path.isabs(step.cwd) else str(job.repo)
    return os.path.relpath(job.repo / rel, cwd)


def _runs_outside(job: Job, step) -> bool:
    """The job `cd`s to a directory outside the repo (a clone on /scratch): a relative
    config is looked up there, which the doctor cannot see from here."""
    cwd = step.cwd
    return bool(cwd) and os.path.isabs(cwd) and not (cwd + "/").startswith(str(job.repo) + "/")


def _where(job: Job, step) -> str:
    cwd = step.cwd if step.cwd and os.path.isabs(step.cwd) else "the submit directory"
    return f"{job.rel(cwd) if cwd != 'the submit directory' else cwd}, the entry's " \
           "directory and the repo"
