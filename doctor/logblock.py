"""The JSON report inside a job log: `doctor sbatch --force` writes it between two marker
lines (doctor/submit.py), `doctor show` and `doctor diff` read it back, and the masking
of every output knows where it begins (docs/diff.md)."""
from __future__ import annotations

import json

BLOCK_BEGIN = "# ---- doctor report (json) ----"
BLOCK_END = "# ---- end doctor report ----"


def as_json_block(json_text: str) -> str:
    """The JSON report as one `# ` line between the two markers: the same document,
    compact (ASCII, so no line break or control character can be inside it), so that
    the job's log holds three lines of it, not hundreds. The reader (reports_cli) reads
    any number of lines, so an older log's block of many lines still reads."""
    compact = json.dumps(json.loads(json_text), separators=(",", ":"), ensure_ascii=True)
    return f"{BLOCK_BEGIN}\n# {compact}\n{BLOCK_END}\n"
