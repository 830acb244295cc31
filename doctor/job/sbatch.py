"""Job scripts: #SBATCH directives, commands and exports, with line numbers."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from doctor.errors import read_input
from doctor.job.shell import split_commands, unquote

# sbatch's short options (man sbatch) → the long name used as the key.
SHORT = {"N": "nodes", "n": "ntasks", "c": "cpus-per-task", "G": "gpus", "p": "partition",
         "t": "time", "J": "job-name", "o": "output", "e": "error", "A": "account",
         "w": "nodelist", "q": "qos", "C": "constraint", "D": "chdir", "a": "array",
         "x": "exclude", "m": "distribution", "d": "dependency"}
ALIASES = {"workdir": "chdir", "gpus-per-task": "gpus-per-task", "tasks-per-node":
           "ntasks-per-node"}
_DIRECTIVE = re.compile(r"^#SBATCH\s+(.*)$")


@dataclass(frozen=True)
class Directive:
    key: str      # long option name without dashes: "nodes", "gres", ...
    value: str    # "" for flags
    line: int


@dataclass(frozen=True)
class Command:
    line: int     # 1-based line where the command starts
    words: tuple  # raw words, quotes kept (see doctor.job.shell.expand)

    @property
    def argv(self) -> list:
        return [unquote(w) for w in self.words]


@dataclass
class SbatchScript:
    path: Path
    rel: str
    text: str
    directives: list = field(default_factory=list)
    commands: list = field(default_factory=list)

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
            return _last_int(d.value), d
        d = self.get("gres")
        if d:
            for item in d.value.split(","):
                parts = item.split(":")
                if parts[0] == "gpu":
                    return (_last_int(item) if len(parts) > 1 else 1), d
        d = self.get("gpus")
        if d:
            return -(-_last_int(d.value) // (self.nodes or 1)), d
        d = self.get("gpus-per-task")
        if d:
            tasks = self.ntasks_per_node or -(-(self.number("ntasks") or 1) // (self.nodes or 1))
            return _last_int(d.value) * tasks, d
        return None


def _last_int(value: str) -> int:
    nums = re.findall(r"\d+", value)
    return int(nums[-1]) if nums else 1


def parse_sbatch(text: str, path: Path, rel: str) -> SbatchScript:
    script = SbatchScript(path=path, rel=rel, text=text)
    seen_command = False
    for lineno, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        m = _DIRECTIVE.match(stripped)
        if m and not seen_command:
            script.directives.extend(_parse_directive(m.group(1), lineno))
        elif stripped and not stripped.startswith("#"):
            seen_command = True  # sbatch stops reading #SBATCH at the first command
    script.commands = [Command(line, tuple(words)) for line, words in split_commands(text)]
    return script


def _parse_directive(body: str, line: int) -> list:
    body = body.split(" #", 1)[0]
    words = [unquote(w) for _, ws in split_commands(body) for w in ws]
    out = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--"):
            key, eq, value = w[2:].partition("=")
            if not eq and i + 1 < len(words) and not words[i + 1].startswith("-"):
                value = words[i + 1]
                i += 1
            out.append(Directive(ALIASES.get(key, key), value, line))
        elif w.startswith("-") and len(w) >= 2:
            key = SHORT.get(w[1], w[1])
            value = w[2:].lstrip("=")
            if not value and i + 1 < len(words) and not words[i + 1].startswith("-"):
                value = words[i + 1]
                i += 1
            out.append(Directive(key, value, line))
        i += 1
    return out


def load_sbatch(path: Path, rel: str) -> SbatchScript:
    raw = read_input(path, "sbatch script")
    return parse_sbatch(raw.decode("utf-8", "replace"), path, rel)


def looks_like_sbatch(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(16384)
    except OSError:
        return False
    return b"\0" not in head and b"\n#SBATCH" in b"\n" + head
