"""A batch script that hides its training step's failure from Slurm (the shell side of
exit-masks-errors): the job's state is the batch script's exit status, not the step's."""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check, edits
from doctor.job.context import Job
from doctor.job.sbatch import SbatchScript
from doctor.job.shell import _array_end, split_commands
from doctor.job.steps import SHELLS
from doctor.model import FixOption, add, change

CHECK_ID = "job-exit-masks-failure"
# Commands whose status is 0 whatever came before them: the job's state when one ends it.
SUCCEEDS = {"echo", "printf", "true", ":", "date", "hostname", "sleep", "sync", "pwd",
            "env", "printenv", "whoami", "uptime", "id"}
# What bash reads before a command word and drops (split_commands does the same).
KEYWORD = re.compile(r"(?:^|\s)(if|elif|while|until|then|else|do|!|\{|exec|time)(?=\s|$)")
CONDITION = {"if", "elif", "while", "until", "!"}
OPENS = {"if", "for", "while", "until", "case", "select"}
CLOSES = {"fi", "done", "esac"}
CAPTURE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=\"?\$\?\"?$")
STATUS_READ = re.compile(r"\$\?|\$\{\?\}|PIPESTATUS")
_OP = re.compile(r"[ \t]*(\|\||\|&|\||&&|;;|;|&(?!>)|\n|#[^\n]*\n?|$)")
# `|| true`, `|| :`, `|| echo …`, `|| exit 0` closing a line (outside quotes: the rest is plain)
OR_MASK = re.compile(r"\s*\|\|\s*(true|:|exit\s+0|echo\b[^|;&'\"]*|printf\b[^|;&'\"]*)\s*$")
_SHEBANG_E = re.compile(r"^#!\S*\s+-[A-Za-z]*e")


@dataclass
class Cmd:
    line: int
    words: list
    argv: list
    before: str = ""        # keywords bash reads before it (`if !`, `then`, `exec`)
    op: Optional[str] = None   # the operator after it: | || && & ; \n (None: unknown)
    depth: int = 0          # `if`/loop/`{` nesting around it
    in_function: bool = False

    @property
    def name(self) -> str:
        return self.argv[0] if self.argv else ""

    def text(self) -> str:
        return " ".join(self.words)


def _unq(w: str) -> str:
    return w.strip("\"'")


def read_commands(text: str, first_line: int = 1, bodies: Optional[list] = None) -> list:
    """The script's simple commands in the order bash runs them, each with the keywords
    before it, the operator after it and its nesting (split_commands gives the words; the
    operators are read from the text between them). A function's body runs where the
    function is called, not where it is defined: the definition is left out, and a call
    (after the definition, as bash needs) stands for its body's commands (_inline).
    `bodies` gets (first line, text) of each here-document (a job script that writes the
    batch script it submits)."""
    text = text.replace("\r\n", "\n")
    out: list = []
    funcs: dict = {}    # name -> (index of its header in out, index of its `}`)
    fname: Optional[str] = None
    sub_end = -1        # where a `name() ( … )` body ends: its commands run only when called
    cursor = 0
    depth, func_depth = 0, None
    for line, words in split_commands(text, first_line):
        start = text.find(words[0], cursor)
        if 0 <= start < sub_end:    # in a subshell body: runs only where it is called
            out.append(Cmd(line, list(words), [_unq(w) for w in words], depth=depth,
                           in_function=True))
            continue
        if sub_end > cursor:
            cursor = sub_end
            start = text.find(words[0], cursor)
        if start < 0:
            out.append(Cmd(line, list(words), [_unq(w) for w in words], depth=depth,
                           in_function=func_depth is not None))
            continue
        lead = re.sub(r"#[^\n]*", " ", text[cursor:start])   # comments hold words too
        before = " ".join(m.group(1) for m in KEYWORD.finditer(lead))
        pos = start
        for w in words:
            found = text.find(w, pos)
            pos = found + len(w) if found >= 0 else pos
        argv = [_unq(w) for w in words]
        header = _function_header(text, pos, argv) if func_depth is None else None
        if header is not None and header[0] is None:   # `name() ( … )`: a subshell body
            out.append(Cmd(line, list(words), argv, before, "\n", depth, True))
            sub_end = header[1]   # (not inlined: `exit` there ends the subshell)
            continue
        if header is not None:     # `name() {`, `function name {`: a definition runs nothing
            fname, cursor = header
            funcs[fname] = (len(out), None)
            out.append(Cmd(line, list(words), argv, before, "\n", depth, True))
            func_depth = depth
            depth += 1
            continue
        m = _OP.match(text, pos)
        op = None if m is None else (m.group(1).strip() or "\n" if m.group(1) else "\n")
        if op and op.startswith("#"):
            op = "\n"
        cursor = m.end() if m else pos
        heredoc = next((w for w in words if w.startswith("<<") and not w.startswith("<<<")),
                       None)
        if heredoc is not None:   # the body is data: skip to the line after its delimiter
            delim = _unq(heredoc.lstrip("<-").strip() or "")
            end = re.compile(r"^\s*" + re.escape(delim) + r"\s*$", re.M).search(text, cursor) \
                if delim else None
            if end and bodies is not None:
                bodies.append((first_line + text.count("\n", 0, cursor),
                               text[cursor:end.start()]))
            cursor = end.end() if end else cursor
        cmd = Cmd(line, list(words), argv, before, op, depth, func_depth is not None)
        if "{" in before.split():
            depth += 1
        if argv and (argv[0] in OPENS or argv[0] in CLOSES or argv[0] == "}"):
            cmd.depth = depth if argv[0] in OPENS else depth - 1
        if argv and argv[0] in OPENS or "if" in before.split() or \
                any(k in before.split() for k in ("while", "until")):
            depth += 1
        elif argv and argv[0] in CLOSES or argv[:1] == ["}"]:
            if depth == 0:     # a `done` with no loop: bash stops at it with status 2
                return []
            depth -= 1
            if func_depth is not None and depth <= func_depth:
                func_depth = None
                if fname is not None:
                    funcs[fname] = (funcs[fname][0], len(out))
        out.append(cmd)
    if func_depth is not None:
        return []          # a function's body that never closes: the structure does not read
    return _inline(out, funcs)


_FN_NAME = re.compile(r"[A-Za-z_][\w.:-]*")
_FN_PARENS = re.compile(r"[ \t]*\([ \t]*\)")
_FN_BRACE = re.compile(r"(?:\s|#[^\n]*)*\{(?=\s)")


def _function_header(text: str, pos: int, argv: list) -> Optional[tuple]:
    """(name, where its body's first command may start) when the command that ends at
    `pos` opens a function definition with a `{ … }` body: `name() {`, `name () {`,
    `function name {`, `function name() {`, the `{` on the same or a later line;
    (None, where its body ends) for a `name() ( … )` subshell body. None otherwise."""
    if argv[:1] == ["function"] and len(argv) >= 2:
        name = argv[1][:-2] if argv[1].endswith("()") else argv[1]
        rest = argv[2:]
    elif len(argv) == 1 and _FN_NAME.fullmatch(argv[0].removesuffix("()")) and (
            argv[0].endswith("()") or _FN_PARENS.match(text, pos)):
        name, rest = argv[0].removesuffix("()"), []
    else:
        return None
    if not _FN_NAME.fullmatch(name) or rest not in ([], ["{"], ["()", "{"], ["()"]):
        return None
    if rest[-1:] == ["{"]:
        return name, pos
    m = _FN_PARENS.match(text, pos)
    after = m.end() if m else pos
    brace = _FN_BRACE.match(text, after)
    if brace:
        return name, brace.end()
    paren = re.compile(r"\s*\(").match(text, after)
    return (None, _array_end(text, paren.end() - 1)) if paren else None


def _inline(cmds: list, funcs: dict, calling: tuple = ()) -> list:
    """cmds with each definition left out and each call of a function defined before it
    replaced by the function's body, where it runs (a function's status is its last
    command's, and `exit` in it ends the script). A call with `|`, `&&`, `||`, `&` or an
    `if` around it stands for its body only when the body is one command; a body with
    `return` (it ends the function, not the script) and a recursive call stay a plain
    command, so a step in them is not judged; so does a call given `$?` (`check $?`),
    read as the script deciding on the status. `funcs`: name -> (index of the header in
    cmds, index of its `}`), on the first call; then name -> (header depth, body)."""
    if not calling:
        defs = {name: (cmds[h].depth, cmds[h + 1:e], h) for name, (h, e) in funcs.items()
                if e is not None}
    else:
        defs = funcs
    out: list = []
    for i, c in enumerate(cmds):
        if c.in_function and not calling:
            continue
        d = defs.get(c.name)
        if d is None or c.name in calling or (not calling and d[2] > i) or \
                STATUS_READ.search(c.text()):   # `check $?`: the function decides on it
            out.append(c)
            continue
        head_depth, body, _ = d
        if not body or any(b.name == "return" for b in body) or (
                len(body) > 1 and (c.op not in ("\n", ";") or
                                   set(c.before.split()) & (CONDITION | {"exec"}))):
            out.append(c)
            continue
        inner = [replace(b, depth=c.depth + max(b.depth - head_depth - 1, 0),
                         in_function=False) for b in body]
        inner[0] = replace(inner[0], before=" ".join(x for x in (c.before, inner[0].before)
                                                       if x))
        inner[-1] = replace(inner[-1], op=c.op)
        out += _inline(inner, defs, calling + (c.name,))
    return out


def _structural(cmd: Cmd) -> bool:
    return bool(cmd.argv) and cmd.argv[0] in CLOSES | {"}", "for", "case", "select"}


def _set_flags(cmd: Cmd) -> dict:
    """{'errexit': bool, 'pipefail': bool} that a `set` command changes."""
    out: dict = {}
    if cmd.name != "set":
        return out
    args = cmd.argv[1:]
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-o", "+o") and i + 1 < len(args):
            if args[i + 1] in ("errexit", "pipefail"):
                out[args[i + 1]] = a == "-o"
            i += 2
            continue
        if re.match(r"^[-+][A-Za-z]+$", a):
            on = a[0] == "-"
            if "e" in a:
                out["errexit"] = on
            if a.endswith("o") and i + 1 < len(args) and args[i + 1] in ("errexit", "pipefail"):
                out[args[i + 1]] = on
                i += 2
                continue
        i += 1
    return out


@dataclass
class Verdict:
    form: str           # last-command | exit-0 | or-true | pipe | wait | step-shell
    severity: Severity
    line: int           # where the status is lost
    what: str           # the message
    errexit: bool
    pipefail: bool


def judge(script: SbatchScript, step_line: int, launcher: str,
          text: Optional[str] = None, first_line: int = 1) -> Optional[Verdict]:
    """What the batch script does with the status of the step at step_line; None when
    the step's status reaches Slurm (or the script decides on it in a way the doctor
    reads as deliberate). A step in a here-document is judged in the script that the
    here-document writes (`cat > job.sh <<EOF … EOF; sbatch job.sh`)."""
    text = script.text if text is None else text
    bodies: list = []
    cmds = read_commands(text, first_line, bodies)   # [] when its structure does not read
    at = [i for i, c in enumerate(cmds) if c.line == step_line]
    if not at:
        for first, body in bodies:
            if first <= step_line < first + body.count("\n") + 1:
                return judge(script, step_line, launcher, body, first)
        return None
    idx = next((i for i in at if any(launcher == a.rsplit("/", 1)[-1] for a in cmds[i].argv)),
               at[-1])
    step = cmds[idx]
    if step.in_function or set(step.before.split()) & CONDITION or \
            "exec" in step.before.split() or step.name == "exec":
        return None     # its status decides an `if`, or the shell becomes the step
    if any(c.op is None for c in cmds[max(0, idx - 1):idx + 3]):
        return None     # an operator the doctor could not read
    errexit = bool(_SHEBANG_E.match(text))
    pipefail = False
    for c in cmds[:idx]:
        flags = _set_flags(c)
        errexit = flags.get("errexit", errexit)
        pipefail = flags.get("pipefail", pipefail)
    for c in cmds:      # a trap on ERR or EXIT that exits decides the status itself
        if c.name == "trap" and re.search(r"\bexit\b", " ".join(c.argv[1:2])) and \
                any(s in ("ERR", "EXIT", "0") for s in c.argv[2:]):
            return None
    rest = cmds[idx + 1:]
    where = f"{script.rel}:{step.line}"
    # the pipeline the step is in: its status is the last command's without pipefail
    j = idx
    while cmds[j].op in ("|", "|&") and j + 1 < len(cmds):
        j += 1
    if j > idx and not pipefail:
        if any("PIPESTATUS" in c.text() for c in rest):
            return None     # `exit ${PIPESTATUS[0]}`
        tail = cmds[j]
        sev = Severity.ERROR if tail.name in ("tee", "cat") or tail.name in SUCCEEDS \
            else Severity.WARNING
        return Verdict("pipe", sev, step.line, (
            f"the training step at {where} is piped into `{tail.name}` without "
            f"`set -o pipefail`: the pipeline's status is `{tail.name}`'s, and a failed step's "
            + ("is dropped even under `set -e`" if errexit else "is dropped")), errexit, pipefail)
    chained = False         # `srun … && echo ok`: what follows && runs only on success,
    while cmds[j].op == "&&" and j + 1 < len(cmds):   # and `set -e` spares the list
        j, chained = j + 1, True
    unit = cmds[j]          # the step, or the pipeline/list it ends (pipefail: its status)
    after = cmds[j + 1:]
    if unit.op == "||" and after:
        nxt = after[0]
        if nxt.name in SUCCEEDS or (nxt.name == "exit" and nxt.argv[1:2] == ["0"]):
            return Verdict("or-true", Severity.ERROR, nxt.line, (
                f"`|| {nxt.text()}` after the training step at {where}: a failed step "
                "becomes status 0 there"), errexit, pipefail)
        return None     # `|| exit 1`, `|| scontrol requeue ...`: handled by the script
    if unit.op == "&":
        return _background(script, step, after, errexit, pipefail)
    if errexit and not chained:
        return None     # the shell exits with the step's status
    return _after(script, step, after, errexit, pipefail)


def _background(script: SbatchScript, step: Cmd, after: list, errexit: bool,
                pipefail: bool) -> Optional[Verdict]:
    where = f"{script.rel}:{step.line}"
    for n, c in enumerate(after):
        if c.name != "wait":
            continue
        if len(c.argv) > 1:     # `wait $pid`: the step's status, carried on from there
            return None if errexit else _after(script, step, after[n + 1:], errexit, pipefail)
        return Verdict("wait", Severity.ERROR if c.depth == 0 else Severity.WARNING, c.line, (
            f"the training step at {where} runs in the background and `wait` "
            f"({script.rel}:{c.line}) without a process id returns 0 whatever its status"),
            errexit, pipefail)
    return None


def _after(script: SbatchScript, step: Cmd, after: list, errexit: bool,
           pipefail: bool) -> Optional[Verdict]:
    """The step's status is $? after it: what the script does next."""
    where = f"{script.rel}:{step.line}"
    body = [c for c in _runs_after(step, after) if not _structural(c) and c.argv]
    if not body:
        return None     # the step is the script's last command: its status is the job's
    first = body[0]
    m = CAPTURE.match(first.words[0]) if len(first.words) == 1 else None
    if m:
        var = m.group(1)
        used = re.compile(r"\$\{?" + re.escape(var) + r"\b")
        if any(used.search(c.text()) for c in body[1:]):
            return None    # `rc=$?` ... `exit $rc`
    elif first.name == "exit" and len(first.argv) <= 2 and first.argv[1:] != ["0"]:
        return None        # `exit` / `exit $?`
    elif STATUS_READ.search(first.text()) and first.name not in ("echo", "printf"):
        return None        # `if [ $? -ne 0 ]`: the script decides on it
    exits = [c for c in body if c.name == "exit" and c.argv[1:] == ["0"] and c.depth == 0]
    last = body[-1]
    if exits:
        e = exits[0]
        return Verdict("exit-0", Severity.ERROR, e.line, (
            f"`exit 0` at {script.rel}:{e.line} after the training step at {where}: "
            "the job's status is 0 whatever the step's"), errexit, pipefail)
    if last.name == "exit":
        return None        # `exit $rc` with a status the doctor does not follow
    known = last.name in SUCCEEDS
    sev = Severity.ERROR if known and last.depth == 0 else Severity.WARNING
    status = "0" if known else "0 when it succeeds"
    if last.depth > 0:
        status += "; it sits in a branch or loop, the doctor does not follow which runs last"
    return Verdict("last-command", sev, last.line, (
        f"the script ends with `{_short(last)}` ({script.rel}:{last.line}) after the "
        f"training step at {where}, without `set -e`: the job's exit status is that "
        f"command's ({status}), not the step's"), errexit, pipefail)


def _runs_after(step: Cmd, after: list) -> list:
    """The commands that can run after the step: not those of the other branches
    (`else`, `elif`) of the `if`s around it."""
    out: list = []
    level = step.depth      # the nesting the walk is in
    skip_to: Optional[int] = None   # inside another branch: skip to its `fi` at this depth
    for c in after:
        words = c.before.split()
        if skip_to is not None:
            if c.name == "fi" and c.depth == skip_to:
                skip_to = None
                level = c.depth
            continue
        if c.depth < level:
            level = c.depth
        if ("else" in words or "elif" in words) and 0 < c.depth <= level:
            skip_to = c.depth - 1
            continue
        out.append(c)
    return out


def _short(cmd: Cmd) -> str:
    text = cmd.text()
    return text if len(text) <= 40 else text[:37] + "…"


FIX_SET = "Make the batch script exit with the step's status"


@check(CHECK_ID, title="The batch script hides a failed training step from Slurm",
       severity="error", tags=("slurm", "shell", "exit"), needs=("sbatch",), timeout=20)
def job_exit_masks_failure(job: Job) -> Iterator[Finding]:
    """The batch script's exit status, not the training step's, decides the job's state.

    Reads each job script (the submitted batch script) around its training step
    (`srun`, `torchrun`, `python` ... as doctor/job/steps.py picks it) the way bash
    runs it: `set -e`/`-o errexit` (also `#!/bin/bash -e`) and `set -o pipefail`
    before the step, the operator after it, and the commands after it. Errors: the
    step piped into `tee`/`cat` without `pipefail` (under `set -e` too: the
    pipeline's status is tee's); `|| true`, `|| :`, `|| echo …` or `|| exit 0` on the
    step; an unconditional `exit 0` after it; a script without `set -e` whose last
    command is one that succeeds (`echo done`, `date`), also after `srun … && echo ok`
    (`set -e` spares a failed command in a `&&` list); the step in the background
    and a bare `wait`. Warnings: the last command is another one (`cp`, `kill`,
    `dcgmi`: the job's state is then its status), or sits in a branch or loop; a pipe
    into another command. Not reported: the step as the last command, after `exec`,
    in an `if`/`while` condition, `|| exit 1` (or another handler), `rc=$?` later
    used (`exit $rc`), `exit $?`, `$?`/`PIPESTATUS` tested, `wait $pid`, a `trap`
    on ERR/EXIT that exits, a step in a function that is not called (or whose
    body has `return`), a script with a stray `done`/`fi`. A function's body is read where
    the function is called (`train() { srun …; }; train; echo done` is judged at the call).
    `srun bash inner.sh` is judged at the srun line. A step that runs its own shell,
    `srun … bash -c 'python train.py; cp …'`, exits with that code's last command's
    status: the code is judged the same way around the training command (not under
    `bash -ec` or `set -e` in it). A step launched from a script that
    the batch script sources or runs with `bash` (its launcher not in the batch script)
    is not judged, nor a script without `#SBATCH` lines (bash may run it on a login node,
    where `srun` makes the job and the job's state is the step's).

    ## Why it matters
    Slurm records the job's state from the batch script's exit status. A failed
    training step followed by `echo done`, or behind `| tee log`, ends the job
    COMPLETED (exit code 0:0): `afternotok` retry chains never fire, `afterok`
    evaluation and conversion jobs run on a missing checkpoint, and dashboards show
    green. Checked on a real two-node Slurm: a failing `srun python3 train.py`
    followed by `echo done`, or piped into `tee` under `set -e`, ends COMPLETED; with
    `set -eo pipefail`, or `rc=$?` and `exit $rc`, it ends FAILED (and bash gives
    each form's exit status: 0 for `|| true`, `exit 0`, a bare `wait`).

    ## How to fix
    `set -eo pipefail` before the step (the shell then exits with a failed step's
    status, and a pipeline fails when any part fails); or keep the status and exit
    with it: `srun … ; rc=$?; <cleanup>; exit $rc`. Remove `|| true` and `exit 0`.
    `doctor fix --unsafe` adds `set -eo pipefail` (or `set -o pipefail`) on the line
    before the step (for the errors), and takes `|| true` off the step's line:
    unsafe, because a failing command after it then ends the job too (cleanup after
    a failed step no longer runs).
    """
    found = False
    for script in job.scripts:
        step = job.step(script)
        if not step.is_training:
            continue
        found = True
        if not script.directives and not re.search(r"^\s*#SBATCH", script.text, re.M):
            continue     # no #SBATCH (here, or in the script it writes): maybe run by bash
            #              on a login node, where srun makes the job and its state is the step's
        outer = step.chain[0] if step.chain else None
        if outer is not None and outer.kind == "sbatch":
            # the script submits a job of its own: `sbatch <<EOF` (the step's launcher
            # is in the here-document, judged as that batch script) or `sbatch --wrap`
            # (on the sbatch line: one command, not judged)
            inner = next((x for x in step.chain if x.kind != "sbatch"), None)
            outer = inner if inner is not None and inner.line != outer.line else None
        if outer is None or outer.path != script.rel:
            continue     # launched from a script the batch script runs: not judged here
        launcher = (outer.argv[0] if outer.argv else "").rsplit("/", 1)[-1]
        verdict = judge(script, outer.line, launcher)
        if verdict is None:   # the step's status is the job's: is the training's the step's?
            verdict = _in_step_shell(script, outer.line, step)
        if verdict is None:
            continue
        if verdict.form == "last-command" and script.unread:
            continue     # the script's end was not read (a cut script): its last command
            #              is not known, and that is what this verdict is about
        yield _finding(job, script, outer.line, verdict)
    if not found:
        raise Skip("no job script runs a training step")


def _in_step_shell(script: SbatchScript, line: int, step) -> Optional[Verdict]:
    """The step's own shell: `srun … bash -c 'CODE'` exits with CODE's last command's
    status, so CODE is judged as a script around the training command (`python3 x.py;
    cp …` hides a failed run behind the cp). None when the step runs no `-c` code, the
    code runs under `-e`, or the training command is not found in it."""
    last = step.chain[-1] if step.chain else None
    if last is None or last.line != line or not last.argv:
        return None
    inner = last.argv[0].rsplit("/", 1)[-1]
    for c in read_commands(script.text):
        if c.line != line or c.in_function:
            continue
        code = _shell_code(c.argv)
        if code is None:
            return None
        text, errexit, shell = code
        if errexit or inner not in text:
            return None     # `bash -ec`: the shell stops at the failed command
        at = script.text.find(text)
        first = script.text.count("\n", 0, at) + 1 if at >= 0 else line
        steps = [k for k in read_commands(text, first)
                 if any(a.rsplit("/", 1)[-1] == inner for a in k.argv)]
        if len(steps) != 1:
            return None     # run twice (or not read): which one decides is not shown
        v = judge(script, steps[0].line, inner, text, first)
        if v is None:
            return None
        return replace(v, form="step-shell",
                       what=f"the step at {script.rel}:{line} runs its own shell "
                            f"(`{shell} '…'`), and {v.what}")
    return None


def _shell_code(argv: list) -> Optional[tuple]:
    """(CODE, errexit, `bash -lc`) of `bash [-opts] -c CODE` in a command's words (`sh -ec`,
    `bash -lc`), or None."""
    for i, w in enumerate(argv):
        if w.rsplit("/", 1)[-1] not in SHELLS:
            continue
        errexit, j = False, i + 1
        while j < len(argv) and re.match(r"^(?:-[A-Za-z]+|--[a-z-]+|\+[oO])$", argv[j]):
            if argv[j] in ("--rcfile", "--init-file", "+o", "+O"):   # they take a value
                j += 2
                continue
            if argv[j].startswith(("--", "+")):   # `--login`, `--noprofile`: flags
                j += 1
                continue
            opts = argv[j][1:]
            errexit |= "e" in opts
            if opts.endswith("o") and j + 1 < len(argv):   # `-o errexit`, `-eo pipefail`
                errexit |= argv[j + 1] == "errexit"
                j += 2
                continue
            j += 1
            if "c" in opts:
                return (argv[j], errexit, " ".join(argv[i:j])) if j < len(argv) else None
        return None
    return None


def _finding(job: Job, script: SbatchScript, step_line: int, v: Verdict) -> Finding:
    line_text = "set -o pipefail" if v.errexit else "set -eo pipefail"
    options: list = []
    edit = None
    if v.form == "or-true":
        fix = "Remove the `|| …` after the step (it turns a failure into status 0)."
        lines = edits.read_lines(job, script.rel) or []
        old = lines[v.line - 1].rstrip("\r\n") if 0 < v.line <= len(lines) else ""
        m = OR_MASK.search(old)
        if m:       # `… || true` at the end of one line: that line without it
            options.append(FixOption((change(script.rel, v.line, old[:m.start()]),)))
            if edits.owned(job, script.rel):
                edit = edits.replace_line(job, script.rel, v.line, old[:m.start()],
                                          "the step's failure kept", unsafe=True)
    elif v.form == "step-shell":   # a line before srun cannot reach the step's shell
        fix = ("Make the step's shell exit with the training's status: `bash -ec '…'` (or "
               "`set -e;` first in its code, or `rc=$?` after the training and `exit $rc` "
               "last).")
    elif v.form == "wait":
        fix = ("Wait for the step's process id and exit with its status: "
               "`srun … & pid=$!; wait $pid; exit $?` (or `set -e` and `wait $pid`).")
    else:
        fix = f"{FIX_SET}: `{line_text}` before the step (or `rc=$?` after it and " \
              "`exit $rc` at the end)."
        options.append(FixOption((add(script.rel, line_text,
                                      where=f"before line {step_line}"),)))
        if v.severity == Severity.ERROR and edits.owned(job, script.rel):
            edit = edits.insert_lines(job, script.rel, step_line,
                                      [_indent(job, script, step_line) + line_text],
                                      f"{line_text} before the training step", unsafe=True)
    msg = v.what + ", so Slurm records a failed run as COMPLETED (`afternotok` retries " \
        "never fire, `afterok` dependencies go ahead)"
    return Finding(msg, location=Location(script.rel, v.line), fix=fix,
                   options=tuple(options),
                   data={"form": v.form, "step": f"{script.rel}:{step_line}",
                         "errexit": v.errexit, "pipefail": v.pipefail},
                   edits=(edit,) if edit else (), severity=v.severity)


def _indent(job: Job, script: SbatchScript, line: int) -> str:
    lines = edits.read_lines(job, script.rel) or []
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return text[:len(text) - len(text.lstrip())]
