"""torch version strings → comparable tuples (one reading for every check)."""
from __future__ import annotations

import re
from typing import Optional

from doctor.errors import InputError

# What a torch version given by the user may look like: PEP 440 with at least
# major.minor, and an optional local part (2.5.1+rocm6.2, 2.4.0a0+git1234abc,
# 2.6.0.dev20241112+cu124, 2.3.0a0+40ec155e58.nv24.03).
TORCH_VERSION = re.compile(r"v?\d+(\.\d+)+((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?"
                           r"(\+[a-z0-9]+([._-][a-z0-9]+)*)?", re.IGNORECASE)
TORCH_VERSION_ALLOWED = "a torch version such as 2.5.1, 2.5.1+rocm6.2 or 2.4.0a0+git1234abc"


def parse_version(version: Optional[str]) -> Optional[tuple]:
    """(major, minor) of a torch version string such as 2.5.1+rocm6.2.4; None if unknown."""
    m = re.match(r"^\s*v?(\d+)\.(\d+)", version or "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def is_torch_version(text: str) -> bool:
    return TORCH_VERSION.fullmatch(text) is not None


def given_torch_version(text: Optional[str], name: str) -> Optional[str]:
    """A torch version the user gave (`--torch-version`), checked by form; InputError if bad."""
    if text is not None and not is_torch_version(text):
        raise InputError(f"{name}: {text!r} is not {TORCH_VERSION_ALLOWED}")
    return text
