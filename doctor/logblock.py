"""The JSON report inside a job log: `doctor sbatch --force` writes it between two marker
lines (doctor/submit.py), `doctor show` and `doctor diff` read it back, and the masking
of every output knows where it begins (docs/diff.md)."""
from __future__ import annotations

BLOCK_BEGIN = "# ---- doctor report (json) ----"
BLOCK_END = "# ---- end doctor report ----"


def as_json_block(json_text: str) -> str:
    """The JSON report as `#` lines between the two markers (each line kept exactly)."""
    return "".join([BLOCK_BEGIN + "\n", *(f"# {line}\n" for line in json_text.splitlines()),
                    BLOCK_END + "\n"])
