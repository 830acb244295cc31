"""torch version strings → comparable tuples (one reading for every check)."""
from __future__ import annotations

import re
from typing import Optional


def parse_version(version: Optional[str]) -> Optional[tuple]:
    """(major, minor) of a torch version string such as 2.5.1+rocm6.2.4; None if unknown."""
    m = re.match(r"^\s*v?(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None
