"""The one error type that reaches the user as exit code 2."""
from __future__ import annotations


class InputError(Exception):
    """Bad input: a missing file, unparsable YAML, an unknown key or check id.

    The CLI prints the message as one line on stderr and exits 2.
    """


def read_input(path, kind: str, max_bytes: int = 20 * 1024 * 1024) -> bytes:
    """The bytes of an input file; every way it can be unusable is one InputError line."""
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(f"{path}: {size} bytes is too large for a {kind}")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{kind} not found: {path}") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a {kind}") from None
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    if b"\0" in raw[:8192]:
        raise InputError(f"{path}: binary file, not a {kind}")
    return raw
