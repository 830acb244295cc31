"""`#SBATCH --signal`: a warning signal before the time limit that nobody handles."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.closure import step_files
from doctor.job.context import Job
from doctor.job.pyread import dotted
from doctor.job.sbatch import Directive, SbatchScript
from doctor.job.shell import split_commands
from doctor.job.sources import trees_mentioning
from doctor.model import FixOption, add, change

CHECK_ID = "signal-without-handler"
# Linux signal numbers (x86/arm) whose default action ends the process (signal(7)): a
# shell or a Python process without a handler dies of them. CHLD, CONT, URG, WINCH do
# nothing by default, STOP/TSTP stop: not judged.
TERMINATING = {"HUP": 1, "INT": 2, "QUIT": 3, "ABRT": 6, "USR1": 10, "USR2": 12, "PIPE": 13,
               "ALRM": 14, "TERM": 15, "XCPU": 24, "XFSZ": 25, "VTALRM": 26, "PROF": 27}
BY_NUMBER = {v: k for k, v in TERMINATING.items()}
_SIGNAL = re.compile(r"^(?:([RB]+):)?([A-Za-z0-9+]+)(?:@(\d+))?$")
# Files a job script sources that set up an environment and install no traps: not
# reading them leaves no link unknown.
_ENV_FILES = re.compile(r"(^|/)(activate|\.?bashrc|\.bash_profile|\.profile|profile|conda\.sh|"
                        r"mamba\.sh|[^/]*\.env|env\.sh|setup_env\.sh|modules?\.sh|init/bash|"
                        r"lmod[^/]*)$")


@dataclass(frozen=True)
class Wanted:
    """What `--signal` asks for."""
    directive: Directive
    name: str            # USR1
    number: int
    lead: int            # seconds before the time limit (Slurm's default 60)
    batch: bool          # B: only the batch shell gets it


def signal_name(text: str) -> Optional[str]:
    """USR1 for `USR1`, `SIGUSR1`, `10`, `sigusr1`; None for a signal that does not end a
    process by default or that the doctor does not know."""
    t = text.strip().upper()
    if t.isdigit():
        return BY_NUMBER.get(int(t))
    t = t[3:] if t.startswith("SIG") else t
    return t if t in TERMINATING else None


def wanted(script: SbatchScript) -> Optional[Wanted]:
    d = script.get("signal")
    if d is None:
        return None
    m = _SIGNAL.match(d.value.strip())
    if not m:
        return None
    name = signal_name(m.group(2))
    if name is None:
        return None
    return Wanted(d, name, TERMINATING[name], int(m.group(3) or 60), "B" in (m.group(1) or ""))


@dataclass(frozen=True)
class Trap:
    path: str
    line: int
    action: str          # "handler", "ignore" or "reset"
    text: str


def _traps(text: str, rel: str, name: str, line: Optional[int] = None) -> list:
    """The `trap` commands of a shell text that name the signal; `line`: the line they
    count at (a sourced file's traps count where it is sourced)."""
    out = []
    for at, words in split_commands(text):
        argv = [w.strip("\"'") for w in words]
        if not argv or argv[0] != "trap":
            continue
        args = [a for a in argv[1:] if a != "--"]
        if not args or args[0] in ("-l", "-p"):
            continue
        action, sigs = ("reset", args) if len(args) == 1 else (args[0], args[1:])
        if not any(signal_name(s) == name for s in sigs):
            continue
        kind = "reset" if action in ("-", "reset") else "ignore" if action == "" else "handler"
        out.append(Trap(rel, line if line is not None else at, kind, " ".join(words)))
    return out


def batch_traps(job: Job, script: SbatchScript, name: str) -> tuple:
    """([Trap] in the batch shell, in line order; [unread sourced files (line, word)]):
    the script's own traps and those of the repo files it sources (`source f`, `. f`)."""
    traps = _traps(script.text, script.rel, name)
    unread = []
    for cmd in script.commands:
        argv = cmd.argv
        if len(argv) < 2 or argv[0] not in ("source", "."):
            continue
        word = argv[1]
        path = _sourced(job, script, word)
        if path is None:
            if not _ENV_FILES.search(word):
                unread.append((cmd.line, word))
            continue
        try:
            text = path.read_text(errors="replace")
        except OSError:
            unread.append((cmd.line, word))
            continue
        traps += _traps(text, script.rel, name, cmd.line)
    return sorted(traps, key=lambda t: t.line), unread


def _sourced(job: Job, script: SbatchScript, word: str) -> Optional[Path]:
    if "$" in word or "`" in word or word.startswith("~"):
        return None
    for base in (job.repo, script.path.parent):
        p = Path(word) if word.startswith("/") else base / word
        if p.is_file():
            return p
    return None


def _installed(traps: list, before: int) -> Optional[Trap]:
    """The trap in force at line `before` (the last one before it), None: none."""
    last = None
    for t in traps:
        if t.line < before:
            last = t
    return last if last is not None and last.action != "reset" else None


def _step_command(script: SbatchScript, step) -> Optional[int]:
    """The batch script's line that starts the training step (its srun, or the `bash
    inner.sh` that runs the script holding it); None when not known."""
    outer = step.chain[0] if step.chain else None
    if outer is not None and outer.path == script.rel:
        return outer.line
    inner = next((s for s in step.scripts[1:] if s is not None and s.rel != script.rel), None)
    if inner is None:
        return None
    base = inner.rel.rsplit("/", 1)[-1]
    hits = [c.line for c in script.commands if any(w.endswith(base) for w in c.argv[:4])]
    return hits[0] if len(hits) == 1 else None


@check(CHECK_ID, title="A --signal that kills the job instead of saving it",
       severity="error", tags=("slurm", "shell", "signals"), needs=("sbatch",), timeout=20)
def signal_without_handler(job: Job) -> Iterator[Finding]:
    """`#SBATCH --signal` asks Slurm for a warning signal before the time limit, and nothing
    that receives it handles it.

    With `B:` (`--signal=B:USR1@60`, `B:SIGTERM@…`, `B:10@…`) Slurm sends the signal to
    the batch shell only, `lead` seconds before the time limit. Errors: no `trap … USR1`
    in the batch script or the repo files it sources (bash's default action for USR1,
    USR2, TERM, HUP, INT is to exit: the job ends at once, FAILED with exit code 0:10, no
    checkpoint, no requeue); a trap installed only after the training step, or reset
    (`trap - USR1`) before it (for a step in the background: before its `wait`); a trap
    installed before a training step that runs in the foreground (`srun python train.py`
    without `&`): bash runs a trap only when the foreground command returns, so the
    handler runs when the step ends, which under a time limit is when Slurm kills the
    job. Warnings: the same in a loop (the trap runs between two steps), and a script
    that sources a file the doctor could not read (a trap there would count).
    Not reported: `trap '' USR1` (the shell ignores the signal), the step in the
    background with `wait` (`srun … & wait $!`: `wait` returns at the signal and the trap
    runs at once), `exec srun …` (the shell becomes srun, which passes the signal on).

    Without `B:` (`--signal=USR1@60`), Slurm signals the processes of the job steps (the
    srun tasks), not the batch shell and not the commands it runs itself. A warning when
    the step's code (its entry and the repo modules it imports) installs no handler for
    the signal: `signal.signal(signal.SIGUSR1, …)`, Lightning's Trainer (its
    SLURMEnvironment requeues on SIGUSR1 unless `auto_requeue=False` or another
    `requeue_signal`), submitit. A framework installed outside the repo may install one,
    so this is never an error. A warning too when the training runs in the batch step
    (`python train.py` without srun): the signal never reaches it.

    ## Why it matters
    `--signal=B:USR1@60` is how a job asks for time to save a checkpoint and requeue
    itself before its time limit. Without a handler the signal itself kills the job,
    earlier than the time limit would have, with nothing saved and no requeue: the
    requeue chain stops and the last epoch's work is lost. Checked on a real Slurm:
    with `--signal=B:USR1@100` and no trap the job ends FAILED (0:10) when the signal
    comes; with the trap and `srun … &`/`wait` the trap runs at the signal; with the
    trap and a foreground `srun` it runs only when the step ends. Without `B:`, the srun
    tasks die of the signal (`task 0: User defined signal 1`) and a python started by
    the batch shell itself is not signalled.

    ## How to fix
    Install the handler before the step and run the step in the background, so that the
    shell waits in `wait`, which a trapped signal interrupts:

        trap 'echo "time limit near: requeue"; scontrol requeue $SLURM_JOB_ID' USR1
        srun python train.py &
        wait $!

    or send the signal to the training processes (drop `B:`) and handle it in the code
    (`signal.signal(signal.SIGUSR1, save_and_exit)`, or Lightning's SLURMEnvironment).
    """
    seen = False
    for script in job.scripts:
        w = wanted(script)
        if w is None:
            continue
        seen = True
        yield from (_batch(job, script, w) if w.batch else _steps(job, script, w))
    if not seen:
        raise Skip("no job script asks for a signal (#SBATCH --signal) that ends a process")


def _lead(w: Wanted, script: SbatchScript) -> str:
    return f"{script.where(w.directive)} sends SIG{w.name} {w.lead} s before the time limit"


def _fix_trap(script: SbatchScript, w: Wanted, step_line: Optional[int],
              step_text: Optional[str]) -> tuple:
    trap = f"trap 'echo \"SIG{w.name}: time limit near\"; scontrol requeue $SLURM_JOB_ID' {w.name}"
    steps = [add(script.rel, trap, where=f"before line {step_line}" if step_line else
                 "before the training step")]
    if step_line and step_text:
        steps.append(_background(script, step_line, step_text))
    return (FixOption(tuple(steps)),)


def _background(script: SbatchScript, line: int, text: str):
    """The step's line run in the background, and a `wait` for it at its indentation."""
    indent = text[:len(text) - len(text.lstrip())]
    return change(script.rel, line, text + " &", indent + "wait $!")


# `&` that puts a command in the background: not `&&`, `>&`, `&>`, `|&`
_AMP = re.compile(r"(?<![&>|<])&(?![&>])")


def _how_run(script: SbatchScript, line: int) -> Optional[str]:
    """How the batch shell runs the command at `line`: "exec", "background" (`&` after
    it), "loop" (in the foreground, in a for/while loop), "foreground"; None when the
    line starts no command."""
    depth = 0
    at = None
    for cmd in script.commands:
        if cmd.line >= line:
            at = cmd if cmd.line == line else None
            break
        first = cmd.argv[0] if cmd.argv else ""
        depth += first in ("for", "while", "until", "select")
        depth -= first == "done" and depth > 0
    if at is None or not at.argv:
        return None
    if at.argv[0] == "exec":
        return "exec"
    lines = script.text.splitlines()
    i, text = line - 1, ""
    while 0 <= i < len(lines):       # the command's lines, joined over backslashes
        part = lines[i].rstrip()
        text += " " + part.rstrip("\\")
        if not part.endswith("\\"):
            break
        i += 1
    plain = re.sub(r"""'[^']*'|"(?:[^"\\]|\\.)*\"""", "''", text)   # quotes hold no operators
    plain = re.sub(r"(^|\s)#.*$", "", plain)
    if _AMP.search(plain):
        return "background"
    return "loop" if depth else "foreground"


def _batch(job: Job, script: SbatchScript, w: Wanted) -> Iterator[Finding]:
    traps, unread = batch_traps(job, script, w.name)
    step = job.step(script)
    step_line = _step_command(script, step) if step.is_training else None
    how = _how_run(script, step_line) if step_line else None
    if how == "exec":
        return      # the shell becomes srun, which passes the signal on to the tasks
    lines = script.text.splitlines()
    step_text = lines[step_line - 1].rstrip() if step_line and 0 < step_line <= len(lines) \
        else None
    if step_text is not None and step_text.endswith("\\"):
        step_text = None      # a step over several lines: no line to change
    head = _lead(w, script)
    data = {"signal": w.name, "lead_s": w.lead, "batch": True,
            "step": f"{script.rel}:{step_line}" if step_line else None}
    if any(t.action == "ignore" for t in traps) and not any(t.action == "handler" for t in traps):
        return      # `trap '' USR1`: the shell ignores it (nothing saved, but nothing killed)
    handlers = [t for t in traps if t.action == "handler"]
    if not handlers:
        sev = Severity.WARNING if unread else Severity.ERROR
        more = (" (unless a file the doctor did not read installs one: "
                + ", ".join(f"`{word}` sourced at {script.rel}:{ln}" for ln, word in unread)
                + ")") if unread else ""
        yield Finding(
            f"{head} to the batch shell only (`B:`), and the batch script installs no "
            f"`trap … {w.name}`{more}: bash's default action for SIG{w.name} is to exit, so "
            f"the job ends {w.lead} s early, FAILED (exit code 0:{w.number}), with no "
            "checkpoint and no requeue",
            location=Location(script.rel, w.directive.line or None), severity=sev,
            fix=f"Install a handler before the step and run the step in the background: "
                f"`trap '<save/requeue>' {w.name}`, `srun … &`, `wait $!`; or drop `B:` and "
                "handle the signal in the training code.",
            options=_fix_trap(script, w, step_line, step_text), data=data)
        return
    if step_line is None or how is None:
        return      # the trap exists; where the step runs is not known
    background = how == "background"
    # the signal may come while the shell waits: in the foreground step, or in the `wait`
    # for a background one (a trap installed between `srun … &` and `wait` is in time)
    waits = [c.line for c in script.commands if c.line > step_line and c.argv[:1] == ["wait"]]
    point = waits[0] if background and waits else step_line
    resets = [t for t in traps if t.action == "reset"]
    installed = _installed(handlers + resets, point)
    if installed is None:
        reset = next((t for t in reversed(resets) if t.line < point), None)
        first = handlers[0]
        why = (f"`{reset.text}` at {reset.path}:{reset.line} resets the trap of "
               f"{first.path}:{first.line}" if reset is not None and first.line < reset.line
               else f"its `trap` at {first.path}:{first.line} is installed only after the "
               f"training step at {script.rel}:{step_line}")
        yield Finding(
            f"{head} to the batch shell (`B:`), and {why}: while the step runs the shell has "
            f"no handler, so SIG{w.name} ends the job, FAILED (0:{w.number}), with no "
            "checkpoint and no requeue",
            location=Location(script.rel, reset.line if reset is not None and
                              first.line < reset.line else first.line),
            severity=Severity.ERROR,
            fix="Install the `trap` before the step, and run the step in the background "
                "(`srun … &`, `wait $!`).",
            options=_fix_trap(script, w, step_line, None if background else step_text),
            data=data)
        return
    if background:
        return      # `srun … &` … `wait`: a trapped signal interrupts `wait` at once
    trap = installed or handlers[0]
    in_loop = how == "loop"
    yield Finding(
        f"{head} to the batch shell (`B:`); its trap at {trap.path}:{trap.line} is in place, "
        f"but the training step at {script.rel}:{step_line} runs in the foreground, and "
        "bash runs a trap only when the foreground command returns: "
        + ("in the loop, the handler runs only after the current step ends"
           if in_loop else
           "the handler runs when the step ends, which under a time limit is when Slurm "
           "kills the job: nothing is saved and nothing requeued"),
        location=Location(script.rel, step_line),
        severity=Severity.WARNING if in_loop else Severity.ERROR,
        fix="Run the step in the background and wait for it, so that the signal interrupts "
            "`wait` and the trap runs at once: `srun … &` then `wait $!`.",
        options=(FixOption((_background(script, step_line, step_text),)),)
        if step_text else (), data=dict(data, trap=f"{trap.path}:{trap.line}"))


# ---- without B: the step's processes get the signal ---------------------------------
def code_handlers(job: Job, files: list, name: str) -> tuple:
    """([where the step's code handles the signal], [where it installs a handler for a
    signal the doctor cannot read]) over `files` (the step's code)."""
    rels = {job.rel(p) for p in files}
    found: list = []
    unknown: list = []
    for path, tree in trees_mentioning(job, b"signal", b"Trainer", b"LightningCLI",
                                       b"submitit"):
        rel = job.rel(path)
        if rel not in rels:
            continue
        lightning = False
        envs: list = []
        trainers: list = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                mods = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""]
                if any(m.split(".")[0] in ("lightning", "pytorch_lightning") for m in mods):
                    lightning = True
                if any(m.split(".")[0] == "submitit" for m in mods):
                    unknown.append(f"{rel}:{node.lineno} (submitit installs its own handlers)")
            if not isinstance(node, ast.Call):
                continue
            fn = dotted(node.func)
            last = fn.rsplit(".", 1)[-1]
            if node.args and last in ("signal", "add_signal_handler"):
                # signal.signal(SIG, h), `import signal as s; s.signal(...)`, `from signal
                # import signal`, loop.add_signal_handler(SIG, h)
                got = _signal_of(node.args[0])
                where = f"{rel}:{node.lineno}"
                if got == name:
                    found.append(where)
                elif got is None and (fn.endswith("signal.signal") or fn == "signal"
                                      or last == "add_signal_handler"):
                    unknown.append(f"{where} (a handler for a signal the doctor cannot read)")
            elif last == "SLURMEnvironment":
                envs.append(node)
            elif last in ("Trainer", "LightningCLI"):
                trainers.append(node)
        for node in envs:
            kw = {k.arg: k.value for k in node.keywords if k.arg}
            auto = kw.get("auto_requeue")
            if isinstance(auto, ast.Constant) and auto.value is False:
                continue
            sig = _signal_of(kw["requeue_signal"]) if "requeue_signal" in kw else "USR1"
            if sig == name:
                found.append(f"{rel}:{node.lineno} (Lightning's SLURMEnvironment)")
            elif sig is None:
                unknown.append(f"{rel}:{node.lineno} (SLURMEnvironment's requeue_signal)")
        if lightning and trainers and not envs and name == "USR1":
            found.append(f"{rel}:{trainers[0].lineno} (Lightning's Trainer requeues on SIGUSR1 "
                         "under Slurm)")
    return found, unknown


def _signal_of(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Constant):     # a number, or no signal at all ("name")
        return BY_NUMBER.get(node.value, "?") if isinstance(node.value, int) else "?"
    text = dotted(node)
    last = text.rsplit(".", 1)[-1] if text else ""
    if last.startswith("SIG") and last.isupper():
        return signal_name(last) or "?"
    return None


def _steps(job: Job, script: SbatchScript, w: Wanted) -> Iterator[Finding]:
    step = job.step(script)
    if not step.is_training:
        return
    head = _lead(w, script)
    data = {"signal": w.name, "lead_s": w.lead, "batch": False, "step": step.where}
    if step.launcher("srun") is None:
        yield Finding(
            f"{head} to the job's steps (no `B:`), but the training at {step.where} runs in "
            "the batch step, without srun, and Slurm does not signal the batch step then: "
            "the training never gets the signal",
            location=Location(script.rel, w.directive.line or None), severity=Severity.WARNING,
            fix=f"Send it to the batch shell: `#SBATCH --signal=B:{w.name}@{w.lead}` with a "
                f"`trap … {w.name}` that passes it on, or launch the training with srun.",
            options=(FixOption((change(script.rel, w.directive.line,
                                       f"#SBATCH --signal=B:{w.name}@{w.lead}"),)),)
            if w.directive.line else (), data=data)
        return
    files = step_files(job, step)
    if not files:
        return      # the step's code is not in the repo: nothing to say about it
    found, unknown = code_handlers(job, files, w.name)
    if found or unknown:
        return
    yield Finding(
        f"{head} to the job's steps (no `B:`): the srun tasks at {step.where} get it, and "
        f"the step's code ({job.rel(files[0])} and the {len(files) - 1} repo module(s) it "
        f"imports) installs no handler for SIG{w.name}, so the ranks die of it {w.lead} s "
        "before the time limit, with no checkpoint (a framework installed outside the repo "
        "may install one: not seen here)",
        location=Location(script.rel, w.directive.line or None), severity=Severity.WARNING,
        fix=f"Handle it in the training code: `signal.signal(signal.SIG{w.name}, handler)` that "
            "saves a checkpoint (and requeues), or use Lightning's SLURMEnvironment; or drop "
            "`--signal`.", data=data)
