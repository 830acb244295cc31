"""The one error type that reaches the user as exit code 2."""
from __future__ import annotations

from typing import Optional


class InputError(Exception):
    """Bad input: a missing file, unparsable YAML, an unknown key or check id.

    The CLI prints the message as one line on stderr and exits 2.
    """


# Byte-order marks of the UTF-16/32 text that YAML allows (such text holds NUL bytes).
BOMS = ((b"\xff\xfe\x00\x00", "utf-32"), (b"\x00\x00\xfe\xff", "utf-32"),
        (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))


def wide_encoding(raw: bytes) -> Optional[str]:
    """The codec of UTF-16/32 text, by its byte-order mark or, without one, by where its
    NUL bytes fall (ASCII in UTF-16LE has one after every character); else None."""
    for bom, enc in BOMS:
        if raw.startswith(bom):
            return enc
    head = raw[:4096]
    head = head[:len(head) // 4 * 4]
    if b"\0" not in head:
        return None
    if not head[2::4].strip(b"\0") + head[3::4].strip(b"\0") and b"\0" not in head[0::4]:
        return "utf-32-le"
    if not head[0::4].strip(b"\0") + head[1::4].strip(b"\0") and b"\0" not in head[3::4]:
        return "utf-32-be"
    low, high = head[0::2], head[1::2]
    if b"\0" not in low and high.count(0) * 2 >= len(high):
        return "utf-16-le"
    if b"\0" not in high and low.count(0) * 2 >= len(low):
        return "utf-16-be"
    return None
