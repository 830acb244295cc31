"""The one error type that reaches the user as exit code 2."""
from __future__ import annotations


class InputError(Exception):
    """Bad input: a missing file, unparsable YAML, an unknown key or check id.

    The CLI prints the message as one line on stderr and exits 2.
    """
