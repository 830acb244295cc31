"""`ulimit -n` in a job script, and what the limits are after it, as bash applies them
(fd-limit-too-low and the data smoke both read them)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from doctor.job.sbatch import SbatchScript
from doctor.job.shell import command_argv


@dataclass
class Ulimit:
    line: int
    text: str
    soft: bool         # sets the soft limit
    hard: bool         # sets the hard limit
    value: Any         # int, None (unlimited), "hard" or "soft"


def ulimit_commands(script: SbatchScript) -> list:
    """Every `ulimit [-S|-H] -n VALUE` in the script, in order (queries are left out)."""
    out = []
    for cmd in script.commands:
        argv = command_argv(cmd.argv, builtin=True)   # `then ulimit ...` too
        if not argv or argv[0] != "ulimit":
            continue
        flags = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
        values = [a for a in argv[1:] if not a.startswith("-")]
        if "n" not in flags or set(flags) - set("nSH") or len(values) != 1:
            continue
        raw = values[0]
        if raw == "unlimited":
            value: Any = None
        elif raw in ("hard", "soft"):
            value = raw
        elif raw.isdigit():
            value = int(raw)
        else:
            continue  # `$N` or similar: not known before the job runs
        both = "S" not in flags and "H" not in flags  # bash: no -S/-H sets both
        out.append(Ulimit(cmd.line, " ".join(argv), both or "S" in flags,
                          both or "H" in flags, value))
    return out


def le(a: Optional[int], b: Optional[int]) -> bool:
    """a <= b where None is unlimited."""
    return b is None or (a is not None and a <= b)


def apply_ulimits(soft: Optional[int], hard: Optional[int], cmds: list) -> tuple:
    """(soft, hard, failed) after the script's ulimit lines, as bash does for a non-root
    user: raising the hard limit, or the soft one above the hard, fails and changes nothing."""
    failed = []
    for u in cmds:
        v = hard if u.value == "hard" else soft if u.value == "soft" else u.value
        new_hard = v if u.hard else hard
        new_soft = v if u.soft else soft
        if not le(new_hard, hard) or not le(new_soft, new_hard):
            failed.append(u)
            continue
        soft, hard = new_soft, new_hard
    return soft, hard, failed
