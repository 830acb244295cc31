"""A job that rewrites a launch config at a fixed path that its concurrent jobs also read."""
from __future__ import annotations

import fnmatch
import posixpath
import re
from dataclasses import dataclass
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, fs
from doctor.job.assigned import Values
from doctor.job.context import Job
from doctor.job.paths import JOB_VAR
from doctor.job.sbatch import SbatchScript
from doctor.job.shell import split_commands, unquote
from doctor.model import FixOption, change
from doctor import edits

CHECK = "shared-launch-config"
# accelerate's default config (`accelerate config` writes it, `accelerate launch` without
# --config_file reads it): $HF_HOME/accelerate/default_config.yaml, ~/.cache/huggingface
ACCELERATE_DEFAULT = "accelerate/default_config.yaml"
ACCELERATE_HOME = "~/.cache/huggingface/" + ACCELERATE_DEFAULT
CONFIG_FILE_FLAGS = ("--config_file", "--config-file")
# Commands that edit, show or remove a file without launching anything from it.
NOT_READERS = {"cat", "echo", "printf", "sed", "awk", "rm", "ls", "head", "tail", "chmod",
               "mkdir", "sort", "uniq", "wc", "touch", "cp", "mv", "tee", "grep", "test",
               "[", "[[", "diff", "stat", "file", "scontrol", "hostname"}
NODE_LOCAL = ("/tmp/", "/var/tmp/", "/dev/shm/")
# Commands whose output is the job's own (its nodes, its GPUs): a file written from them
# differs between jobs even when no variable is written.
JOB_OUTPUT = {"scontrol", "hostname", "srun", "nvidia-smi", "rocm-smi", "squeue", "sinfo",
              "accelerate", "ip", "getent"}
SHELL_SUFFIXES = {".sh", ".bash", ".zsh", ".slurm", ".sbatch", ".job"}


@dataclass(frozen=True)
class Write:
    line: int
    raw: str          # the target as written
    path: str         # expanded
    how: str          # "`cat > …`", "`accelerate config --config_file …`"
    keyed: bool       # per job: $SLURM_JOB_ID, array task, mktemp, $$
    varies: bool      # what is written depends on the job (a variable, scontrol's output)


@check(CHECK, title="A job rewrites a launch config at a fixed path that concurrent jobs "
       "read", severity="warning", tags=("slurm", "launch"), needs=("sbatch",), timeout=20)
def shared_launch_config(job: Job) -> Iterator[Finding]:
    """The job writes a launcher's config (or hostfile) at a path every job shares.

    A job script that writes a file (`cat > FILE <<EOF`, `echo … > FILE`, `tee FILE`,
    `accelerate config --config_file FILE`) which a later command of the same script
    hands to a launcher (`accelerate launch --config_file FILE`, `deepspeed --hostfile
    FILE`, `mpirun -machinefile FILE`, `python train.py --deepspeed_config FILE`), or
    that is accelerate's default config (`~/.cache/huggingface/accelerate/
    default_config.yaml`, read by `accelerate launch` without `--config_file`), shares
    that file with every other job that runs the same script when its path is fixed: an
    absolute path or one under `~`/`$HOME` (shared by all of the user's jobs), or a
    relative path when several jobs of the script run at once (a job array, or a shell
    script of the repo that submits it in a loop or more than once). A path keyed by the
    job (`$SLURM_JOB_ID`, `$SLURM_ARRAY_TASK_ID`, `$(mktemp)`, `$$`) is per job; a path
    under node-local /tmp is not shared between nodes' jobs and is left alone; a file
    whose text is the same whichever job writes it (a quoted here-document, an `echo` of
    literal words) is shared harmlessly. A text varies when it expands a variable or a
    command, or comes from a command whose output is the job's own (`scontrol show
    hostnames`, `hostname`, `accelerate config`). Always a warning: whether two jobs
    overlap is a matter of timing.

    ## Why it matters
    Two jobs that run at once each rewrite the file, and each reads whichever was
    written last: a 2-node job launches with the 4-node job's `num_machines`, a
    hostfile lists the other job's nodes, and the ranks wait for peers that never come
    or join the wrong job's rendezvous. The failure depends on timing, so it comes and
    goes, and the job that fails is not the one that wrote the file.

    ## How to fix
    Give each job its own file and pass it explicitly: `CFG=$HOME/configs/accelerate.
    $SLURM_JOB_ID.yaml` (or `CFG=$(mktemp)`), write that, and run `accelerate launch
    --config_file "$CFG"`, `deepspeed --hostfile "$CFG"`. `doctor fix --unsafe` keys a
    path held in one variable of the script by the job id.
    """
    if not job.scripts:
        raise Skip("no job script")
    for script in job.scripts:
        yield from _script_findings(job, script)


def _script_findings(job: Job, script: SbatchScript) -> Iterator[Finding]:
    values = Values(script)
    writes = _writes(script, values)
    if not writes:
        return
    many: Optional[str] = None
    many_done = False
    for w in writes:
        if w.keyed or not w.varies:
            continue   # per job, or the same text whichever job writes it
        reader = _reader(script, values, w)
        if reader is None:
            continue
        shared = _shared_kind(w.path)
        if shared is None:
            continue
        if not many_done:
            many, many_done = _concurrent(job, script), True
        if shared == "relative" and many is None:
            continue   # one job at a time in its own submit directory: nothing shares it
        yield _finding(job, script, values, w, reader, shared, many)


# ---- what the script writes ---------------------------------------------------------
def _writes(script: SbatchScript, values: Values) -> list:
    out: list = []
    heredocs: list = []
    split_commands(script.text, heredocs=heredocs)
    bodies = {h.command: h for h in heredocs}
    commands = script.commands
    for index, cmd in enumerate(commands):
        words = list(cmd.words)
        argv = cmd.argv
        if not argv:
            continue
        targets: list = []
        for i, w in enumerate(words):
            m = re.fullmatch(r"(1?>>?|>\|)(.*)", w)
            if m is None:
                continue
            target = m.group(2) or (words[i + 1] if i + 1 < len(words) else "")
            if target and not target.startswith("&"):
                targets.append((target, f"`{argv[0]} … {m.group(1)} {unquote(target)}`"))
        name = posixpath.basename(argv[0])
        feeds = [cmd]
        if name == "tee":
            targets += [(w, f"`tee {unquote(w)}`") for w in words[1:]
                        if not w.startswith("-") and not w.startswith(("<", ">"))][:1]
            if index and commands[index - 1].line == cmd.line:
                feeds.append(commands[index - 1])   # `scontrol … | tee FILE`
        if name == "accelerate" and len(argv) > 1 and argv[1] == "config":
            given = _option(words, CONFIG_FILE_FLAGS)
            shown = f" --config_file {unquote(given)}" if given else ""
            targets.append((given or ACCELERATE_HOME, f"`accelerate config{shown}`"))
        if not targets:
            continue
        varies = any(_job_text(c, bodies.get(commands.index(c)), targets) for c in feeds)
        for raw, how in targets:
            res = values.expand(raw, cmd.line)
            text = unquote(res.text) if res.text.startswith(("'", '"')) else res.text
            keyed = bool({"job", "tmp"} & set(res.parts)) or bool(JOB_VAR.search(raw)) \
                or "$$" in raw or bool(JOB_VAR.search(text))
            out.append(Write(cmd.line, raw, text, how, keyed, varies))
    return out


def _job_text(cmd, heredoc, targets: list) -> bool:
    """Whether what a command writes may differ between jobs: it expands a variable or a
    command (not counting the target's own words), reads a here-document that does, or
    is a command whose output is the job's (scontrol, hostname, accelerate config)."""
    if posixpath.basename(cmd.argv[0]) in JOB_OUTPUT:
        return True
    own = {t for t, _ in targets}
    words = [w for w in cmd.words[1:] if w not in own and not w.startswith(("<<", ">", "1>"))]
    if any("$" in w or "`" in w for w in words):
        return True
    if heredoc is not None:
        return not heredoc.quoted and ("$" in heredoc.body or "`" in heredoc.body)
    return posixpath.basename(cmd.argv[0]) not in ("echo", "printf", "cat", "cp", "tee")


def _option(words: list, flags: tuple) -> Optional[str]:
    for i, w in enumerate(words):
        key, eq, value = w.partition("=")
        if key in flags:
            return value if eq else (words[i + 1] if i + 1 < len(words) else None)
    return None


def _same(a: str, b: str) -> bool:
    norm = [posixpath.normpath(x.replace("${HOME}", "~").replace("$HOME", "~"))
            for x in (a, b)]
    return norm[0] == norm[1]


def _reader(script: SbatchScript, values: Values, w: Write) -> Optional[str]:
    """file:line and command of the first later command that launches with the file."""
    default = w.path.endswith(ACCELERATE_DEFAULT) and "/accelerate/" in "/" + w.path
    for cmd in script.commands:
        if cmd.line <= w.line or not cmd.argv:
            continue
        name = posixpath.basename(cmd.argv[0])
        words = list(cmd.words)
        if default and "accelerate" in [posixpath.basename(a) for a in cmd.argv] and \
                "launch" in cmd.argv and _option(words, CONFIG_FILE_FLAGS) is None:
            return f"`accelerate launch` at {script.rel}:{cmd.line} (it reads the default " \
                   "config)"
        if name in NOT_READERS:
            continue
        for raw in words[1:]:
            _, eq, value = raw.partition("=")
            for cand in ([value] if eq and raw.startswith("-") else []) + [raw]:
                text = values.expand(cand, cmd.line).text
                text = unquote(text) if text.startswith(("'", '"')) else text
                if _same(text, w.path):
                    return f"`{name} … {unquote(raw)}` at {script.rel}:{cmd.line}"
    return None


def _shared_kind(path: str) -> Optional[str]:
    """home, absolute, relative; None for a node-local or unknown path."""
    if path.startswith(("~/", "$HOME/", "${HOME}/")):
        return "home"
    if path.startswith("$"):
        return None   # under a variable the doctor cannot read
    if path.startswith("/"):
        return None if path.startswith(NODE_LOCAL) or path.startswith("/dev/") else "absolute"
    return "relative" if path and "$" not in path.split("/")[0] else None


# ---- several jobs at once -----------------------------------------------------------
def _concurrent(job: Job, script: SbatchScript) -> Optional[str]:
    """How several jobs of this script run at once: its --array, or a repo shell script
    that submits it in a loop or more than once; None when the doctor sees neither."""
    d = script.get("array")
    if d is not None and d.value:
        return f"the job array {script.where(d)}"
    for path in job.repo_files(SHELL_SUFFIXES):
        raw = fs.read_bytes(path, job.unreadable, 1 << 20)
        if raw is None or b"sbatch" not in raw:
            continue
        text = raw.decode("utf-8", "replace")
        found = _submits_many(text, script, job.rel(path))
        if found:
            return found
    return None


def _submits_many(text: str, script: SbatchScript, rel: str) -> Optional[str]:
    lines = text.replace("\r\n", "\n").split("\n")
    loops: list = []    # (line, the words a `for` loops over)
    hits: list = []
    for line, words in split_commands(text):
        argv = [unquote(w) for w in words]
        if not argv:
            continue
        head = lines[line - 1].lstrip() if 0 < line <= len(lines) else ""
        if argv[0] == "for":
            loops.append((line, argv[3:] if len(argv) > 2 and argv[2] == "in" else []))
        elif head.startswith(("while ", "until ")) and (not loops or loops[-1][0] != line):
            loops.append((line, []))
        elif argv[0] == "done" and loops:
            loops.pop()
        if posixpath.basename(argv[0]) != "sbatch":
            continue
        args = [a for a in argv[1:] if not a.startswith("-")]
        names = [a for a in args if posixpath.basename(a) == script.path.name]
        looped = bool(loops) and (names or any(
            a.startswith("$") and any(fnmatch.fnmatch(script.rel, p) or
                                      fnmatch.fnmatch(script.path.name, p)
                                      for _, items in loops for p in items)
            for a in args))
        if looped:
            return f"the loop at {rel}:{loops[-1][0]} that submits it ({rel}:{line})"
        if names:
            hits.append(line)
    if len(hits) > 1:
        return f"{rel}:{hits[0]} and {rel}:{hits[1]}, which submit it twice"
    return None


# ---- the finding --------------------------------------------------------------------
def _keyed(path: str) -> str:
    """The path with the job id before its extension (hostfile → hostfile.$SLURM_JOB_ID)."""
    head, tail = posixpath.split(path)
    stem, dot, ext = tail.rpartition(".")
    name = f"{stem}.${{SLURM_JOB_ID}}.{ext}" if dot and stem else f"{tail}.${{SLURM_JOB_ID}}"
    return posixpath.join(head, name) if head else name


def _finding(job: Job, script: SbatchScript, values: Values, w: Write, reader: str,
             shared: str, many: Optional[str]) -> Finding:
    who = {"home": "every job of the user (it is under $HOME)",
           "absolute": "every job that runs this script",
           "relative": "every job of this script submitted from the same directory"}[shared]
    when = f"; {many} runs several at once" if many else \
        "; two of them running at once (another submission, a retry) overwrite each other's"
    msg = (f"{script.rel}:{w.line} writes {w.path} with {w.how}, a fixed path shared by "
           f"{who}, and {reader}{when}: a job may launch with another job's config "
           "(its node count, its hostfile)")
    options: tuple = ()
    edit = None
    src = values.source_of(w.raw, w.line)
    if src is not None and not w.path.endswith(ACCELERATE_DEFAULT):
        keyed = _keyed(src.raw.strip("'\""))
        lines = edits.read_lines(job, script.rel) or []
        old = lines[src.line - 1].rstrip("\r\n") if 0 < src.line <= len(lines) else ""
        assign = f"{src.name}={src.raw}"
        if old.count(assign) == 1:
            quote = '"' if not src.raw.startswith("'") else ""
            new = old.replace(assign, f"{src.name}={quote}{keyed}{quote}" if quote and
                              not src.raw.startswith('"') else f"{src.name}={keyed}")
            options = (FixOption((change(script.rel, src.line, new),),
                                 "key the file by the job id"),)
            if edits.owned(job, script.rel):
                edit = edits.replace_line(job, script.rel, src.line, new,
                                          "a per-job launch config", unsafe=True)
    default = w.path.endswith(ACCELERATE_DEFAULT)
    fix = ("Write a per-job file and pass it explicitly: `CFG=$HOME/.cache/accelerate."
           "$SLURM_JOB_ID.yaml`, write it there, and run `accelerate launch --config_file "
           "\"$CFG\"`." if default else
           f"Key the path by the job (e.g. {_keyed(w.path)}, or a `$(mktemp)` file) in both "
           "the command that writes it and the one that reads it.")
    return Finding(msg, location=Location(script.rel, w.line), fix=fix, options=options,
                   edits=(edit,) if edit else (),
                   data={"path": w.path, "written_at": f"{script.rel}:{w.line}",
                         "read_by": reader, "shared": shared, "concurrent": many,
                         "variable": src.name if src is not None else None},
                   severity=Severity.WARNING)
