"""Secrets never appear: values of secret-looking variables become "***" (DESIGN §4)."""
from __future__ import annotations

from typing import Any

import re

SECRET = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|CREDENTIAL|PRIVATE|AUTH|ACCESS_KEY",
                    re.I)


def is_secret_name(name: str) -> bool:
    return bool(SECRET.search(name))


MASK = "***"
MIN_SECRET_LEN = 4  # shorter values ("1", "yes") would mask unrelated text


def secret_values(job: Any) -> tuple:
    """Every value of a secret-named variable in the login env or any script's exports."""
    values = {v for k, v in job.login_env.items() if is_secret_name(k)}
    for script in [None, *job.scripts]:
        values |= job.job_env(script).secrets
    return tuple(sorted((v for v in values if len(v) >= MIN_SECRET_LEN), key=len, reverse=True))


def redact(obj: Any, secrets: tuple) -> Any:
    """A copy of obj with every secret value masked, and secret-named keys' values masked;
    text made encodable (a file name's undecodable bytes become U+FFFD)."""
    if isinstance(obj, dict):
        return {_encodable(k): (MASK if isinstance(k, str) and is_secret_name(k)
                                and isinstance(v, str) else redact(v, secrets))
                for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact(v, secrets) for v in obj]
    if isinstance(obj, str):
        obj = _encodable(obj)
        for s in secrets:
            if s in obj:
                obj = obj.replace(s, MASK)
        return obj
    return obj


def _encodable(text: Any) -> Any:
    if isinstance(text, str) and not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            try:
                return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            except UnicodeEncodeError:
                return text.encode("utf-8", "replace").decode("utf-8")
    return text
