"""Job scripts: #SBATCH directives, commands and exports, with line numbers."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Mapping, Optional, Sequence

from doctor import fs
from doctor.errors import wide_encoding
from doctor.fs import read_input
from doctor.job.shell import split_commands, unquote

# sbatch's short options (man sbatch) → the long name used as the key.
SHORT = {"N": "nodes", "n": "ntasks", "c": "cpus-per-task", "G": "gpus", "p": "partition",
         "t": "time", "J": "job-name", "o": "output", "e": "error", "A": "account",
         "w": "nodelist", "q": "qos", "C": "constraint", "D": "chdir", "a": "array",
         "x": "exclude", "m": "distribution", "d": "dependency", "M": "clusters"}
ALIASES = {"workdir": "chdir", "gpus-per-task": "gpus-per-task", "tasks-per-node":
           "ntasks-per-node"}
# sbatch's input variables that stand for an option (man sbatch, INPUT ENVIRONMENT
# VARIABLES): the option is the name after SBATCH_, lower case with dashes, unless mapped.
ENV_OPTIONS = {f"SBATCH_{n}": n.lower().replace("_", "-") for n in (
    "ACCOUNT", "ACCTG_FREQ", "BATCH", "CLUSTERS", "CONSTRAINT", "CONTAINER", "CORE_SPEC",
    "CPUS_PER_GPU", "DELAY_BOOT", "DISTRIBUTION", "ERROR", "EXCLUSIVE", "EXPORT",
    "GET_USER_ENV", "GPU_BIND", "GPU_FREQ", "GPUS", "GPUS_PER_NODE", "GPUS_PER_TASK", "GRES",
    "GRES_FLAGS", "HINT", "INPUT", "JOB_NAME", "MEM_BIND", "MEM_PER_CPU", "MEM_PER_GPU",
    "NETWORK", "NO_KILL", "NO_REQUEUE", "OPEN_MODE", "OUTPUT", "OVERCOMMIT", "PARTITION",
    "POWER", "PROFILE", "QOS", "REQUEUE", "RESERVATION", "SIGNAL", "SPREAD_JOB",
    "THREAD_SPEC", "THREADS_PER_CORE", "USE_MIN_NODES", "WAIT", "WCKEY")}
ENV_OPTIONS.update(SBATCH_TIMELIMIT="time", SBATCH_ARRAY_INX="array", SBATCH_MEM_PER_NODE="mem")
COMMAND_LINE = "command line"
# A job script is read up to this many lines: real ones have hundreds, and a line costs
# ~5 µs to split and again to walk, for every script that sources it. A 1,000,000-line
# script took over 30 s; the lines past this are not read, and the report says so
# (SbatchScript.unread, noted in facts.unreadable).
MAX_SCRIPT_LINES = 100_000
_DIRECTIVE = re.compile(r"^#SBATCH\s+(.*)$")


@dataclass(frozen=True)
class Directive:
    key: str      # long option name without dashes: "nodes", "gres", ...
    value: str    # "" for flags
    line: int     # 0 when it is not a #SBATCH line
    origin: str = ""  # "": a #SBATCH line; COMMAND_LINE; or the variable ("SBATCH_GPUS")


@dataclass(frozen=True)
class Command:
    line: int     # 1-based line where the command starts
    words: tuple  # raw words, quotes kept (see doctor.job.shell.expand)

    @cached_property   # read by many checks; computed once (a frozen dataclass allows it)
    def argv(self) -> list:
        return [unquote(w) for w in self.words]


@dataclass
class SbatchScript:
    path: Path
    rel: str
    text: str
    directives: list = field(default_factory=list)
    commands: list = field(default_factory=list)
    unread: Optional[str] = None   # the lines past MAX_SCRIPT_LINES, when it has more

    def where(self, d: Directive) -> str:
        """Where a directive comes from, for messages: `job.sbatch:3 (#SBATCH --nodes=1)`,
        `the sbatch command line: --nodes=2`, `SBATCH_GPUS=4 in sbatch's environment`."""
        option = f"--{d.key}" + (f"={d.value}" if d.value else "")
        if d.origin == COMMAND_LINE:
            return f"the sbatch command line: {option}"
        if d.origin:
            return f"{d.origin}={d.value} in sbatch's environment"
        return f"{self.rel}:{d.line} (#SBATCH {option})"

    def get(self, *keys: str) -> Optional[Directive]:
        """The last directive with any of these keys (sbatch: the last one wins)."""
        found = [d for d in self.directives if d.key in keys]
        return found[-1] if found else None

    def number(self, *keys: str) -> Optional[int]:
        """A numeric directive; for ranges such as `--nodes=2-4`, the maximum."""
        d = self.get(*keys)
        if d is None:
            return None
        nums = [int(x) for x in re.findall(r"\d+", d.value.split(":")[0])]
        return max(nums) if nums else None

    @property
    def nodes(self) -> Optional[int]:
        return self.number("nodes")

    @property
    def ntasks_per_node(self) -> Optional[int]:
        return self.number("ntasks-per-node")

    @property
    def cpus_per_task(self) -> Optional[int]:
        return self.number("cpus-per-task")

    def gpus_per_node(self) -> Optional[tuple]:
        """(count, directive) from --gpus-per-node, --gres=gpu[:type]:N, --gpus / nodes,
        or --gpus-per-task × tasks per node (--ntasks-per-node, else --ntasks / nodes)."""
        d = self.get("gpus-per-node")
        if d:
            return _count(d.value), d
        d = self.get("gres")
        if d:
            for item in d.value.split(","):
                if item.split(":")[0] == "gpu":
                    return _count(item.partition(":")[2]), d
        d = self.get("gpus")
        if d:
            return -(-_count(d.value) // (self.nodes or 1)), d
        d = self.get("gpus-per-task")
        if d:
            tasks = self.ntasks_per_node or -(-(self.number("ntasks") or 1) // (self.nodes or 1))
            return _count(d.value) * tasks, d
        return None


def _count(value: str) -> int:
    """The count of `[type:]count` (Slurm's --gres `name[[:type]:count]`, --gpus*): the
    last field when it is a number, else 1 (`gpu:v100-32g` is one GPU of type
    v100-32g, not 32)."""
    last = value.rsplit(":", 1)[-1].strip()
    return int(last) if last.isdigit() else 1


def parse_sbatch(text: str, path: Path, rel: str) -> SbatchScript:
    read = _first_lines(text, MAX_SCRIPT_LINES)   # (what every check reads of it)
    script = SbatchScript(path=path, rel=rel, text=read)
    if len(read) < len(text):
        total = text.count("\n") + (not text.endswith("\n"))
        script.unread = (f"lines {MAX_SCRIPT_LINES + 1:,}-{total:,} not read: the doctor "
                         f"reads a job script's first {MAX_SCRIPT_LINES:,} lines")
    seen_command = False
    for lineno, line in enumerate(read.splitlines(), 1):
        stripped = line.strip()
        m = _DIRECTIVE.match(stripped)
        if m and not seen_command:
            script.directives.extend(_parse_directive(m.group(1), lineno))
        elif stripped and not stripped.startswith("#"):
            seen_command = True  # sbatch stops reading #SBATCH at the first command
    script.commands = [Command(line, tuple(words)) for line, words in split_commands(read)]
    return script


def _first_lines(text: str, n: int) -> str:
    """text up to the end of its n-th line (all of it when it has no more)."""
    at = -1
    for _ in range(n):
        at = text.find("\n", at + 1)
        if at < 0:
            return text
    return text[:at + 1]


def _parse_directive(body: str, line: int) -> list:
    body = body.split(" #", 1)[0]
    return _parse_options([unquote(w) for _, ws in split_commands(body) for w in ws], line)


def _parse_options(words: list, line: int, origin: str = "") -> list:
    out = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--"):
            key, eq, value = w[2:].partition("=")
            if not eq and i + 1 < len(words) and not words[i + 1].startswith("-"):
                value = words[i + 1]
                i += 1
            out.append(Directive(ALIASES.get(key, key), value, line, origin))
        elif w.startswith("-") and len(w) >= 2:
            key = SHORT.get(w[1], w[1])
            value = w[2:].lstrip("=")
            if not value and i + 1 < len(words) and not words[i + 1].startswith("-"):
                value = words[i + 1]
                i += 1
            out.append(Directive(key, value, line, origin))
        i += 1
    return out


def as_submitted(script: SbatchScript, argv: Sequence[str],
                 env: Mapping[str, str]) -> SbatchScript:
    """The script as `sbatch [argv] script` reads it: the SBATCH_* input variables of
    `env` override its #SBATCH lines, and the command-line options override both."""
    from_env = [Directive(ENV_OPTIONS[name], value, 0, name)
                for name, value in sorted(env.items()) if name in ENV_OPTIONS]
    extra = from_env + _parse_options(list(argv), 0, COMMAND_LINE)
    return replace(script, directives=script.directives + extra)


def load_sbatch(path: Path, rel: str) -> SbatchScript:
    raw = read_input(path, "sbatch script")
    # a UTF-16 script is read as what it says (sbatch refuses it: script-encoding-unsupported)
    return parse_sbatch(raw.decode(wide_encoding(raw) or "utf-8-sig", "replace"), path, rel)


def looks_like_sbatch(path: Path, log: fs.Log = None) -> bool:
    head = fs.read_bytes(path, log, 16384) or b""
    encoding = wide_encoding(head)
    if encoding:   # UTF-16: found, so that sbatch's refusal is reported
        head = head.decode(encoding, "replace").encode()
    return b"\0" not in head and b"\n#SBATCH" in b"\n" + head


def slurm_minutes(value: str) -> Optional[float]:
    """A Slurm time (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS) in minutes; None for
    UNLIMITED/INFINITE. A value sbatch would refuse raises ValueError."""
    v = value.strip()
    if v.upper() in ("UNLIMITED", "INFINITE"):
        return None
    m = re.fullmatch(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?", v)
    if not m:
        raise ValueError(value)
    days, a, b, c = m.groups()
    if days is not None:   # D-HH[:MM[:SS]]
        return int(days) * 1440 + int(a) * 60 + int(b or 0) + int(c or 0) / 60
    if c is not None:      # HH:MM:SS
        return int(a) * 60 + int(b) + int(c) / 60
    if b is not None:      # MM:SS
        return int(a) + int(b) / 60
    return float(a)        # MM
