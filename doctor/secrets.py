"""Secrets never appear in a report (DESIGN §4). They are masked as "***" by where they
sit, not by what their text is:

- the value of a secret-named variable (HF_TOKEN, DB_PASSWORD, WANDB_API_KEY ...): under
  such a key in the report, or as `NAME=value` in its text;
- the password of a URL's userinfo (`https://user:***@host`), and both halves of an
  object store's `s3://***:***@bucket`; `user@host` alone is not a secret;
- the argument of a known credential option in a command line: `curl -u user:***`,
  `--password ***`, `--api-key=***`, `--secret-access-key ***`, `sshpass -p ***`,
  `mysql -p***`, `docker login -p ***`, `redis-cli -a ***`, and an `Authorization:`,
  `Cookie:` or secret-named `-H` header.

A secret value long and unusual enough to be nothing else is also masked wherever its
text appears. The report's own vocabulary (keys, ids, statuses, severities) is never
touched.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

MASK = "***"

# A name is secret when one of its word parts (split at _ - . and camelCase) is one of
# these: HF_TOKEN, GITHUB_TOKEN, apiKey, MYSQL_PWD, but not TOKENIZERS_PARALLELISM or
# MAX_TOKENS. A part ending in TOKEN/SECRET/PASSWORD counts too (HFTOKEN, DBPASSWORD).
_PART = re.compile(r"\w*(?:TOKEN|SECRETS?|PASSWORDS?|PASSWD|PASSPHRASE|APIKEY|ACCESSKEY|"
                   r"CREDENTIALS?)|AUTH|AUTHORIZATION|PRIVATE|PASS|SSHPASS|PWD")
_PAIRS = {("API", "KEY"), ("ACCESS", "KEY"), ("ACCOUNT", "KEY")}  # Azure's AccountKey
_NOT_SECRET = {"PWD", "OLDPWD"}  # the shell's working directories


@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether a variable, key, option or header of this name holds a secret."""
    if name.upper() in _NOT_SECRET:
        return False
    parts = [p.upper() for p in re.split(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])", name) if p]
    return any(_PART.fullmatch(p) for p in parts) or \
        any(pair in _PAIRS for pair in zip(parts, parts[1:]))


def secret_values(job: Any) -> tuple:
    """Every value of a secret-named variable in the login env or any script's exports,
    longest first."""
    values = {v for k, v in job.login_env.items() if is_secret_name(k)}
    for script in [None, *job.scripts]:
        values |= job.job_env(script).secrets
    return tuple(sorted((v for v in values if v), key=len, reverse=True))


def is_distinctive(value: str) -> bool:
    """Long and unusual enough that its text elsewhere is the secret: not a common word,
    a number or a path ("false", "error", "3600", "/scratch")."""
    v = value.strip()
    if len(v) < 8 or v.isdigit() or v.startswith(("/", "~", "./", "../")):
        return False
    return len(v) >= 16 or not v.isalpha()


# Keys whose text is the report's own vocabulary (check ids, statuses, severities,
# times): never masked.
_VOCABULARY = frozenset({"id", "status", "severity", "started_at"})


def redact(obj: Any, secrets: tuple) -> Any:
    """A copy of obj (the report document) with every secret masked (see the module
    docstring); text made encodable (a file name's undecodable bytes become U+FFFD)."""
    texts = tuple(s for s in secrets if is_distinctive(s))

    def walk(node: Any, key: Any = None) -> Any:
        if isinstance(node, dict):
            return {_encodable(k): _masked(v) if isinstance(k, str) and is_secret_name(k)
                    else walk(v, k) for k, v in node.items()}
        if isinstance(node, (list, tuple)):
            items = [walk(v) for v in node]
            return mask_words(items) if len(items) > 1 and key not in _VOCABULARY and \
                all(isinstance(v, str) for v in items) else items
        if isinstance(node, str):
            node = _encodable(node)
            return node if key in _VOCABULARY else mask_text(node, texts)
        return node

    return walk(obj)


def _masked(value: Any) -> Any:
    """The value of a secret-named key: every text in it is masked."""
    if isinstance(value, dict):
        return {_encodable(k): _masked(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_masked(v) for v in value]
    return MASK if isinstance(value, str) else value


# A shell word: quoted, ANSI-C quoted, or bare up to whitespace or a shell operator.
_VALUE = r"""(?:\$?'[^']*'|"[^"\\]*(?:\\.[^"\\]*)*"|[^\s'";&|]+)"""
_OBJECT_STORES = {"s3", "s3a", "s3n", "gs", "gcs", "oss", "r2", "wasb", "wasbs", "abfs",
                  "abfss", "az", "swift", "minio"}
# scheme:/user:password@ (a path may have squeezed scheme:// to scheme:/)
_URL = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]{0,31}):/+([^\s/@:'\"]*):([^\s/'\"]+)@")
# NAME=value and --option value: the value is looked at, not consumed, so that a
# credential quoted inside another option's value (`-e 'sshpass -p X ssh'`) is seen too.
_ASSIGN = re.compile(r"(?<![\w$-])([A-Za-z_][A-Za-z0-9_]*)=(?=(" + _VALUE + "))")
_OPTION = re.compile(r"(?<![\w-])--([A-Za-z][\w-]*)(?=(=|\s+)(" + _VALUE + "))")
_SECRET_OPTIONS = {"password", "passwd", "pass", "passphrase", "token", "secret", "apikey"}
_KEY_OPTIONS = {("api", "key"), ("access", "key"), ("secret", "key"), ("account", "key")}
# Options that are credentials only in a command of their own (in a segment between
# shell separators that names it): `curl -u user:PASS`, `mysql -pPASS`.
_SEGMENT = re.compile(r"[^\n;|&]+")
_CURL = re.compile(r"\bcurl\b")
_CURL_USER = re.compile(r"\s(?:-u|-U|--user|--proxy-user)(?:=|\s*)['\"]?[^\s:'\"]*:"
                        r"([^\s'\"]+)")
_MYSQL = re.compile(r"\b(?:mysql|mariadb)")
_MYSQL_PASSWORD = re.compile(r"\s-p(" + _VALUE + ")")
_DOCKER_LOGIN = re.compile(r"\b(?:docker|podman|nerdctl|buildah|skopeo|helm)\b.*\slogin\b")
_P_PASSWORD = re.compile(r"\s-p(?:=|\s*)(" + _VALUE + ")")
_REDIS = re.compile(r"\bredis-cli\b")
_A_PASSWORD = re.compile(r"\s-a\s+(" + _VALUE + ")")
_SSHPASS = re.compile(r"\bsshpass(?:\s+-[fdP]\s*\S+|\s+-[ev])*\s+-p\s*(" + _VALUE + ")")
_SCHEME = r"(?i:(?:bearer|basic|token|digest|negotiate|bot)\s+)?"  # of an auth header
_AUTHORIZATION = re.compile(r"\b(?i:(?:proxy-)?authorization|cookie)\s*:\s*" + _SCHEME +
                            r"([^\s'\"\\]+)")
_HEADER = re.compile(r"(?:-H|--header)(?:=|\s+)[\\'\"]*([A-Za-z][\w-]*)\s*:\s*" + _SCHEME +
                     r"([^\s'\"\\]+)")


def mask_text(text: str, secrets: tuple = ()) -> str:
    """text with the secrets it holds masked: the given (distinctive) values wherever
    they are, and whatever sits where a secret sits (see the module docstring)."""
    for s in secrets:
        if s in text:
            text = text.replace(s, MASK)
    return _apply(text, _spans(text))


def mask_words(words: list) -> list:
    """A list of words (an argv in the report) masked as the command line they make:
    `["sshpass", "-p", "S3CRET"]` → `["sshpass", "-p", "***"]`."""
    joined = " ".join(words)
    spans = _spans(joined)
    if not spans:
        return words
    out, pos = [], 0
    for word in words:
        stop = pos + len(word)
        out.append(_apply(word, [(max(a, pos) - pos, min(b, stop) - pos) for a, b in spans
                                 if a < stop and b > pos]))
        pos = stop + 1
    return out


def _spans(text: str) -> list:
    """[(start, stop)] of what sits where a secret sits in text."""
    if not any(c in text for c in "=:-@"):
        return []
    spans = [m.span(g) for pattern, groups, marks in _RULES
             if any(mark in text for mark in marks) for m in pattern.finditer(text)
             for g in groups(m)]
    for segment in _SEGMENT.finditer(text):
        for command, pattern in _COMMAND_RULES:
            if command.search(segment[0]):
                spans += [m.span(1) for m in pattern.finditer(text, *segment.span())]
    return spans


def _apply(text: str, spans: list) -> str:
    out, end = [], 0
    for start, stop in sorted(spans):
        if start >= end:
            out += [text[end:start], MASK]
        end = max(end, stop)
    return "".join(out) + text[end:]


def _url(m: re.Match) -> tuple:
    """The groups of a URL's userinfo to mask: the password; the key too for a bucket."""
    return (2, 3) if m[1].lower() in _OBJECT_STORES and m[2] else (3,)


def _secret_option(m: re.Match) -> tuple:
    parts = m[1].lower().replace("_", "-").split("-")
    if parts[0] == "no" or m[2] != "=" and m[3].startswith("-"):
        return ()
    return (3,) if parts[-1] in _SECRET_OPTIONS or tuple(parts[-2:]) in _KEY_OPTIONS else ()


# (pattern, the groups of a match to mask, text one of which a match holds: a quick test)
_RULES: tuple = (
    (_URL, _url, (":/",)),
    (_ASSIGN, lambda m: (2,) if is_secret_name(m[1]) else (), ("=",)),
    (_OPTION, _secret_option, ("--",)),
    (_HEADER, lambda m: (2,) if is_secret_name(m[1]) else (), ("-H", "--header")),
    (_AUTHORIZATION, lambda m: (1,), ("uthorization", "UTHORIZATION", "ookie", "OOKIE")),
    (_SSHPASS, lambda m: (1,), ("sshpass",)),
)
# (the command, its credential option's pattern: group 1 is masked)
_COMMAND_RULES = ((_CURL, _CURL_USER), (_MYSQL, _MYSQL_PASSWORD), (_DOCKER_LOGIN, _P_PASSWORD),
                  (_REDIS, _A_PASSWORD))


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
