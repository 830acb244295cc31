"""Secrets never appear in any output (DESIGN §4): not in a report of any format, not in
`doctor show` or `doctor diff`, not in `doctor fix`'s preview, not in what `doctor sbatch`
prints or appends to the job's log, not in an error message. Two passes:

- `redact(doc, secrets)`: every report document (a run's, a saved one read back by show
  and diff, the diff document) before any format lays it out. It masks as "***":
  - the value under a secret-named key (HF_TOKEN, DB_PASSWORD, WANDB_API_KEY, GH_PAT ...);
  - `NAME=value` of such a name in a text, `name: value` or `name = value` of one at a
    line's start (YAML, ini; a diff's line too), and the argument of a credential option in a
    command line: `curl -u user:***`, `--password ***`, `--api-key=***`,
    `--secret-access-key ***`, `sshpass -p ***`, `mysql -p***`, `docker login -p ***`,
    `redis-cli -a ***`, and an `Authorization:`, `Cookie:` or secret-named `-H` header;
  - the password of a URL's userinfo (`https://user:***@host`, a `/` in it too), both
    halves of an object store's `s3://***:***@bucket`, and a user part that is a token
    (`https://***:x-oauth-basic@github.com`, `https://***@github.com` for a long random
    one); `git@host` or `user@host` alone is not a secret;
  - a value shaped like a credential whatever its name: the token prefixes of Hugging
    Face (hf_), GitHub (ghp_, gho_, ghu_, ghs_, ghr_, github_pat_), Slack (xoxb- ...),
    AWS (AKIA/ASIA key ids), OpenAI and Anthropic (sk-), GitLab (glpat-), Stripe, Google
    (AIza), npm and PyPI tokens, JWTs, and PEM private key blocks;
  - a value of a secret-named variable of the job (`secrets`) wherever its text appears,
    when it is long and unusual enough to be nothing else (`is_distinctive`).
  The report's own vocabulary (keys, ids, statuses, severities) is never touched.
- `scrub(text)`: the output boundary. Every text the doctor writes passes through it:
  stdout and stderr (`guard_streams`, installed by `doctor.cli.main` for the whole
  command) and every file (doctor/outputs.py). It applies the same rules to plain text
  (a table, Markdown, a diff, a message); in JSON or XML, which come from a redacted
  document, only the rules whose masks cannot break the format's escaping (credential
  shapes and the run's secret values, `remember`).

A name is judged by its word structure, not its letters: `compute_pass_rate`,
`TOKENIZERS_PARALLELISM`, `GIT_AUTHOR_NAME`, `MONKEY_PATCH` and the file names
`tokenizer.json` or `keys.py` hold no secret; a name that says it holds a location
(`HF_TOKEN_PATH`, `PASSWORD_FILE`, `SSH_AUTH_SOCK`) neither; nor a field name that ends
in a secret's word without being one (`image_key`, `PRNG_KEY`, `max_token_len`,
`num_pass`): see `is_secret_name`.
"""
from __future__ import annotations

import re
import sys
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Iterable, Iterator

from doctor.logblock import BLOCK_BEGIN, BLOCK_END

MASK = "***"

# A name's word parts (split at _ - . and camelCase; trailing digits dropped: TOKEN2) are
# judged, not its text. Precision is the point: a config key masked by mistake breaks a
# `doctor fix` preview (`git apply` cannot find the line) and hides a fact, and a real
# token under an odd name is caught by its shape anyway (`_TOKEN`).
# - SECRET(S), CREDENTIAL(S), CREDS and the fused APIKEY, ACCESSKEY ... count as any part
#   (CLIENT_SECRET_ID, AWS_CREDENTIALS); PASSWORD, PASSWD, PASSPHRASE anywhere in the
#   name (DBPASSWORDHASH); PWD and SSHPASS as a part (MYSQL_PWD; not PWD, OLDPWD).
_PART = re.compile(r"[A-Z0-9]*(?:SECRETS?|CREDENTIALS?|CREDS|APIKEY|ACCESSKEY|SECRETKEY|"
                   r"PRIVATEKEY)|PWD|SSHPASS")
_ANYWHERE = ("PASSWORD", "PASSWD", "PASSPHRASE")
_NOT_SECRET = {"PWD", "OLDPWD"}  # the shell's working directories
# - a part ending in TOKEN only as the last word, or before VALUE (HF_TOKEN, hfToken,
#   HFTOKEN, GITHUB_TOKEN_VALUE; not token_type_ids, max_token_len, TOKEN_BUDGET), and
#   not after a word that makes it a vocabulary's token or a count (pad_token, eos_token,
#   decoder_start_token, MAX_TOKEN).
_NOT_BEFORE_TOKEN = {"PAD", "BOS", "EOS", "UNK", "SEP", "CLS", "MASK", "SPECIAL", "START",
                     "END", "STOP", "MAX", "MIN", "NUM", "N", "NEXT", "PREV", "FIRST", "LAST",
                     "IMAGE", "TEXT", "AUDIO", "VIDEO", "DEFAULT", "NEW", "EXTRA"}
# - KEY as the last word after a word that makes it a credential (api_key, secret_key,
#   SSH_PRIVATE_KEY, SERVICE_KEY), or in a short UPPER-CASE (environment) name whose
#   word before is no data word (STRIPE_KEY, OPENAI_KEY; not PRNG_KEY): a lower-case
#   config key ending in _key is a field name (image_key, first_stage_key, cache_key).
_KEY_AFTER = {"API", "ACCESS", "SECRET", "PRIVATE", "SERVICE", "SIGNING", "SIGN",
              "ENCRYPTION", "ENCRYPT", "DECRYPTION", "MASTER", "AUTH", "CLIENT", "LICENSE",
              "ACCOUNT", "SSH", "GPG", "PGP", "RSA", "HMAC", "JWT", "SESSION", "WEBHOOK",
              "DEPLOY", "SHARED", "STORAGE", "SUBSCRIPTION", "ADMIN", "APP"}
_NOT_BEFORE_KEY = {"PRNG", "RNG", "SEED", "RANDOM", "CACHE", "SORT", "QUERY", "INPUT",
                   "OUTPUT", "IMAGE", "TEXT", "LABEL", "MONITOR", "METRIC", "STATE", "DICT",
                   "STAGE", "PRIMARY", "FOREIGN", "PARTITION", "HASH", "ROUTING", "GROUP",
                   "SHARD", "LOOKUP", "DATA", "MODEL", "MAP", "RECORD", "ROW", "COLUMN",
                   "INDEX", "ID", "NAME", "HOT", "TYPE", "EVENT", "MESSAGE", "BATCH",
                   "SAMPLE", "FEATURE", "TARGET", "PUBLIC", "SORTING", "JOIN", "MERGE",
                   "DEDUP", "CLUSTER", "SPLIT", "FIELD", "ATTR", "CONFIG", "ENV", "LOCK"}
# - PAT (a personal access token) as the last word after a forge's or a token's word
#   (GH_PAT, AZURE_DEVOPS_PAT; not SPATIAL_PAT, FILE_PAT, PAT_SIZE).
_PAT_AFTER = {"GH", "GITHUB", "GITLAB", "GL", "AZURE", "DEVOPS", "ADO", "AZDO", "VSTS",
              "TFS", "BITBUCKET", "BB", "GITEA", "CODEBERG", "FORGEJO", "HF", "HUGGINGFACE",
              "PERSONAL", "ACCESS", "DEPLOY", "API", "JIRA", "CONFLUENCE", "ATLASSIAN",
              "SONAR", "CI", "BOT", "GIT", "REPO", "NPM", "PYPI", "DOCKER", "REGISTRY"}
# - PASS as the last word after a credential's word (db_pass, smtp_pass), or in a
#   short UPPER-CASE name whose word before is no count or order (DB_PASS; not num_pass,
#   FORWARD_PASS, compute_pass_rate, BYPASS_CACHE, GIT_ASKPASS).
_NOT_BEFORE_PASS = {"NUM", "N", "FIRST", "SECOND", "THIRD", "LAST", "NEXT", "PREV", "SINGLE",
                    "MULTI", "ONE", "TWO", "FORWARD", "BACKWARD", "FWD", "BWD", "SKIP", "EACH",
                    "PER", "RENDER", "COMPILE", "OPT", "TEST", "TESTS", "CHECK", "EVAL",
                    "TRAIN", "WARMUP", "MIN", "MAX", "TOTAL", "FULL", "PARTIAL"}
_PASS_AFTER = {"DB", "DATABASE", "MYSQL", "MARIADB", "PG", "POSTGRES", "POSTGRESQL", "REDIS",
               "MONGO", "MONGODB", "SMTP", "MAIL", "EMAIL", "IMAP", "FTP", "SFTP", "LDAP",
               "USER", "ADMIN", "ROOT", "PROXY", "HTTP", "BASIC", "SSH", "VNC", "AMQP",
               "RABBITMQ", "KEYSTORE", "TRUSTSTORE", "STORE", "KEY", "ACCOUNT", "LOGIN",
               "REGISTRY", "DOCKER", "API", "SERVICE", "CLIENT", "SECRET", "AUTH"}
# - AUTH and AUTHORIZATION as the last word (BASIC_AUTH, Authorization, not AUTH_MODE,
#   AUTHOR, USE_AUTH), COOKIE(S) as the last word (Cookie, SESSION_COOKIE, not
#   cookie_cutter); PRIVATE and AUTH elsewhere only next to KEY, TOKEN or SECRET (above).
_LAST_ONLY = {"AUTH", "AUTHORIZATION", "COOKIE", "COOKIES"}
_NOT_BEFORE_AUTH = {"USE", "ENABLE", "ENABLED", "DISABLE", "DISABLED", "REQUIRE",
                    "REQUIRED", "NO", "SKIP", "WITH", "WITHOUT", "HAS", "IS", "NEEDS"}
# A name ending in one of these says where a secret is, not what it is.
_LOCATION = {"FILE", "FILES", "PATH", "PATHS", "DIR", "DIRS", "SOCK", "SOCKET"}
# A key that names a file is no variable (facts.job["slurm/compute_pass_rate.slurm"]).
_FILE_EXTENSIONS = frozenset(
    "py pyc sh bash zsh ksh csh slurm sbatch job pbs yaml yml json jsonl toml ini cfg conf "
    "txt md rst log out err csv tsv env pem key crt cer der p12 pfx pub gpg asc pt pth ckpt "
    "bin safetensors h5 hdf5 npz npy pkl pickle onnx tar gz tgz zip xz bz2 sif sqsh simg so "
    "lock lst list dat db sqlite def patch diff".split())
_PAIRS = {("API", "KEY"), ("ACCESS", "KEY"), ("ACCOUNT", "KEY"), ("SECRET", "KEY"),
          ("PRIVATE", "KEY"), ("AUTH", "HEADER"), ("AUTH", "HEADERS"),
          ("AUTHORIZATION", "HEADER"), ("BASIC", "AUTH"), ("BEARER", "TOKEN")}
# anywhere: API_KEY_ID, AWS_ACCESS_KEY_ID, AccountKey, GH_AUTH_HEADER


@lru_cache(maxsize=4096)
def is_secret_name(name: str) -> bool:
    """Whether a variable, key, option or header of this name holds a secret."""
    if not name or name.upper() in _NOT_SECRET or "/" in name or "\\" in name:
        return False
    stem, dot, ext = name.rpartition(".")
    if dot and stem and ext.lower() in _FILE_EXTENSIONS:
        return False
    parts = [p.upper() for p in re.split(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])", name) if p]
    parts = [p.rstrip("0123456789") or p for p in parts]
    if not parts or parts[-1] in _LOCATION:
        return False
    if any(word in name.upper() for word in _ANYWHERE) or \
            any(_PART.fullmatch(p) for p in parts) or \
            any(pair in _PAIRS for pair in zip(parts, parts[1:])):
        return True
    if parts[-1] == "VALUE" and len(parts) > 1:
        parts = parts[:-1]
    last, before = parts[-1], (parts[-2] if len(parts) > 1 else "")
    env_style = not any(c.islower() for c in name) and len(parts) <= 3
    if last.endswith("TOKEN"):
        return before not in _NOT_BEFORE_TOKEN
    if last == "KEY":
        return before in _KEY_AFTER or bool(before) and env_style and \
            before not in _NOT_BEFORE_KEY
    if last == "PAT":
        return before in _PAT_AFTER
    if last == "PASS":   # not alone: `PASS: 7 pass, 2 skip` is the doctor's summary line
        return before in _PASS_AFTER or bool(before) and env_style and \
            before not in _NOT_BEFORE_PASS
    if last in _LAST_ONLY:
        return before not in _NOT_BEFORE_AUTH
    return False


def secret_values(job: Any) -> tuple:
    """Every value of a secret-named variable in the login env or any script's exports,
    longest first; remembered for the output boundary (`scrub`)."""
    values = {v for k, v in job.login_env.items() if is_secret_name(k)}
    for script in [None, *job.scripts]:
        values |= job.job_env(script).secrets
    out = tuple(sorted((v for v in values if v), key=len, reverse=True))
    remember(out)
    return out


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
        if isinstance(node, dict):  # a key is masked too: a dict keyed by URLs
            return {_key(k, texts): _masked(v) if isinstance(k, str) and is_secret_name(k)
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


def _key(key: Any, texts: tuple) -> Any:
    """A key as the report shows it: a path or URL (a config's, a cache's) may hold a
    credential; a name (HF_TOKEN, num_workers) is not looked at, for speed."""
    if not isinstance(key, str) or key.isidentifier():
        return key
    return mask_text(_encodable(key), texts)


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
# scheme:/user:password@ or scheme:/user@ (a path may have squeezed scheme:// to
# scheme:/). The password runs to the `@` before the host, `/` included (half of AWS's
# secret keys hold one: s3://KEY:wJal/K7MD@bucket); `@` is no password character (it is
# written %40), so `https://u:p@host/a@b` ends at the first. A password that begins with
# digits and a `/` is a port and a path (`https://host:8080/@scope/pkg`). Bounded, so that
# a text of many `a:/` is no quadratic scan.
_URL = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]{0,31}):/+([^\s/@:'\"]{0,256})"
                  r"(?::((?!\d*/)[^\s'\"@]{0,256}))?@")
# What GitHub, GitLab and Bitbucket take as the password when the token is the user
# (`https://TOKEN:x-oauth-basic@github.com`).
_DUMMY_PASSWORDS = {"x-oauth-basic", "x-oauth", "x", "oauth2", "token", "x-token-auth"}
# A user part that is itself a token: long, of a token's alphabet, letters and digits
# mixed (`https://<40 hex>@github.com`); not `git`, `mluser` or `first.last`.
_RANDOM_USER = re.compile(r"(?=(?:[^0-9]*[0-9]){4})(?=(?:[^A-Za-z]*[A-Za-z]){4})"
                          r"[A-Za-z0-9_-]{20,}")
# NAME=value and --option value: the value is looked at, not consumed, so that a
# credential quoted inside another option's value (`-e 'sshpass -p X ssh'`) is seen too.
_ASSIGN = re.compile(r"(?<![\w$-])([A-Za-z_][A-Za-z0-9_]*)=(?=(" + _VALUE + "))")
_OPTION = re.compile(r"(?<![\w-])--([A-Za-z][\w-]*)(?=(=|\s+)(" + _VALUE + "))")
_SECRET_OPTIONS = {"password", "passwd", "pass", "passphrase", "token", "secret", "apikey",
                   "pat"}
_KEY_OPTIONS = {("api", "key"), ("access", "key"), ("secret", "key"), ("account", "key")}
# Credentials by their shape, whatever name they are under: the documented prefixes, at
# the lengths the services issue (so that a word like `sk-learn` or `hf_hub` is none).
_TOKEN = (r"hf_[A-Za-z0-9]{30,}"                             # Hugging Face
          r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"   # GitHub
          r"|xox[abposre]-[0-9][A-Za-z0-9-]{9,}"              # Slack
          r"|(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"        # AWS access key id
          r"|sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}"    # OpenAI, Anthropic (sk-ant-)
          r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"            # Stripe
          r"|glpat-[A-Za-z0-9_-]{20,}"                        # GitLab
          r"|AIza[A-Za-z0-9_-]{35}"                           # Google API key
          r"|npm_[A-Za-z0-9]{36}|pypi-AgE[A-Za-z0-9_-]{40,}"  # npm, PyPI
          r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")   # a JWT
# A PEM private key: the block, or all that follows an unterminated BEGIN line (up to a
# quote: in JSON or XML that is where the text ends; its escapes are kept whole).
_PEM = (r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:[^\"\\<]|\\.)*?"
        r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?=[\"<])|\Z)")
_SHAPE = re.compile("(?:" + _TOKEN + ")|" + _PEM, re.S)
# Where one may begin: found first, as plain text (a pattern that begins with a
# look-behind is tried at every position: 0.2 s for a 10 MB report, this 0.05 s).
# (Literals only: a character class in one alternative makes the search 4x slower.)
_SHAPE_START = re.compile(r"hf_|gh[pousr]_|github_pat_|xox|AKIA|ASIA|sk-|k_live_|k_test_|"
                          r"glpat-|AIza|npm_|pypi-|eyJ|-----BEGIN ")
# ... but after an escape of JSON it begins a word: "\u00e9AKIA...", "\nghp_..."
_AFTER_ESCAPE = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|[nrtbf])\Z")
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _shaped(text: str) -> list:
    """[(start, stop)] of the credentials shaped as one (not inside a longer word)."""
    out: list = []
    for hit in _SHAPE_START.finditer(text):
        at = hit.start() - (hit[0][0] == "k")  # sk_live_, rk_test_
        if at < 0:
            continue
        if (out and at < out[-1][1]) or (at and text[at - 1] in _WORD and hit[0][0] != "-"
                                         and not _AFTER_ESCAPE.search(text, max(0, at - 6), at)):
            continue
        m = _SHAPE.match(text, at)
        if m:
            out.append(m.span())
    return out


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
# `name: value` and `name = value` at a line's start (YAML, ini, TOML, a header), also as a
# line of a unified diff (` `, `+`, `-`) or a YAML list item; the value stays on its line.
_LINE_KEY = re.compile(r"(?m)^[+-]?[ \t]*(?:-[ \t]+)?([\"']?)([A-Za-z_][\w.-]*)\1[ \t]*[:=]"
                       r"[ \t]*" + _SCHEME + "(?=(" + _VALUE + "))")


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
    """[(start, stop)] of what sits where a secret sits in text, and of what has a
    credential's shape."""
    shaped = _shaped(text)
    if not any(c in text for c in "=:-@"):
        return shaped
    spans = shaped + [m.span(g) for pattern, groups, marks in _RULES
                      if any(mark in text for mark in marks) for m in pattern.finditer(text)
                      for g in groups(m)]
    if not _COMMANDS_QUICK.search(text):
        return spans
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
    """The groups of a URL's userinfo to mask: the password; the user too when it is the
    key of a bucket (s3://KEY:SECRET@), or itself a token (`TOKEN:x-oauth-basic@`, a
    random-looking user with or without a password)."""
    user, password = m[2], m[3]
    token_user = bool(user) and (_RANDOM_USER.fullmatch(user) is not None or (
        password is not None and password.lower() in _DUMMY_PASSWORDS))
    if user and password and m[1].lower() in _OBJECT_STORES:
        token_user = True
    return tuple(g for g, masked in ((2, token_user), (3, bool(password) and (
        password.lower() not in _DUMMY_PASSWORDS))) if masked)


def _secret_option(m: re.Match) -> tuple:
    parts = m[1].lower().replace("_", "-").split("-")
    if parts[0] == "no" or m[2] != "=" and m[3].startswith("-"):
        return ()
    return (3,) if parts[-1] in _SECRET_OPTIONS or tuple(parts[-2:]) in _KEY_OPTIONS else ()


# (pattern, the groups of a match to mask, text one of which a match holds: a quick test)
_RULES: tuple = (
    (_URL, _url, (":/",)),
    (_ASSIGN, lambda m: (2,) if is_secret_name(m[1]) else (), ("=",)),
    (_LINE_KEY, lambda m: (3,) if is_secret_name(m[2]) else (), (":", "=")),
    (_OPTION, _secret_option, ("--",)),
    (_HEADER, lambda m: (2,) if is_secret_name(m[1]) else (), ("-H", "--header")),
    (_AUTHORIZATION, lambda m: (1,), ("uthorization", "UTHORIZATION", "ookie", "OOKIE")),
    (_SSHPASS, lambda m: (1,), ("sshpass",)),
)
# (the command, its credential option's pattern: group 1 is masked)
_COMMANDS_QUICK = re.compile(r"curl|mysql|mariadb|login|redis-cli")
_COMMAND_RULES = ((_CURL, _CURL_USER), (_MYSQL, _MYSQL_PASSWORD), (_DOCKER_LOGIN, _P_PASSWORD),
                  (_REDIS, _A_PASSWORD))


# ---- the output boundary: every text the doctor writes ---------------------------------

# This command's secret values (`remember`): replaced whole, never mutated, so that a
# check's thread may print while the run adds to them.
_known: tuple = ()


# The report's own vocabulary, never masked as a secret value: the ids of the checks
# this process registered (doctor/registry.py adds each), so `DEPLOY_TOKEN=config-not-found`
# leaves the check id readable.
VOCABULARY: set = set()


def remember(values: Iterable[str]) -> None:
    """Values `scrub` masks wherever their text is: the distinctive values of the job's
    secret-named variables, less the report's VOCABULARY."""
    global _known
    new = {v for v in values if is_distinctive(v) and v.strip() not in VOCABULARY} - set(_known)
    if new:
        _known = tuple(sorted({*_known, *new}, key=len, reverse=True))


def forget() -> None:
    """A new command in this process (the test suite runs many) starts with none."""
    global _known
    _known = ()
    _last[:] = (), "", ""


_last: list = [(), "", ""]  # the last JSON or XML text scrubbed: (known, text, result)


def scrub(text: str) -> str:
    """text as it may leave the process: every secret in it masked (the module docstring).
    A JSON or XML text, and the JSON block of a job log, get only the masks that cannot
    break their escaping: credential shapes and this command's secret values."""
    if not text or not isinstance(text, str):
        return text
    known = _known
    if _is_encoded(text):
        if len(text) > 1 << 20 and _last[0] == known and _last[1] == text:
            return _last[2]  # `--format json --json FILE`: one report, scrubbed once
        _last[:] = known, text, _scrub_encoded(text, known)
        return _last[2]
    # a job log: the table, then the JSON
    begin = text.find(BLOCK_BEGIN)
    end = text.find(BLOCK_END, begin)
    if begin >= 0 and end >= 0:
        return (mask_text(text[:begin], known) + _scrub_encoded(text[begin:end], known)
                + scrub(text[end:]))
    return mask_text(text, known)


# A text is taken for JSON or XML (and loses the name, URL and command rules, whose masks
# could break its escaping) only when it is one whole document: a JSON object or array
# from its first character to its last, or an XML document with its declaration (the
# junit report). A plain text that merely begins with `[` or `<` ("[1/3] ...",
# "<stdin>: ...") keeps every rule. (Told here rather than by the writers: every text
# reaches stdout through the stream guard, which sees only the text.)
_JSON_START = re.compile(r"\s*(?:\{\s*[\"}]|\[\s*(?:[\[\]{\"0-9-]|true|false|null))")


def _is_encoded(text: str) -> bool:
    head = _JSON_START.match(text)
    if head:
        return text.rstrip().endswith("}" if head[0].lstrip()[0] == "{" else "]")
    return text.lstrip().startswith("<?xml") and text.rstrip().endswith(">")


# Where a match would begin inside an escape: right after `\`, within `\u00e9`,
# `&amp;` or `&#10;` (masking from there would break the JSON or XML).
_IN_ESCAPE = re.compile(r"(?:\\(?:u[0-9A-Fa-f]{0,3})?|&#?[A-Za-z0-9]{0,8})\Z")


def _scrub_encoded(text: str, known: tuple) -> str:
    spans = _shaped(text)
    for value in known:
        if any(c in value for c in '\\"&<>'):
            continue  # escaped in the text, so never found there as it is
        at = text.find(value)
        while at >= 0:
            if not _IN_ESCAPE.search(text, max(0, at - 9), at):
                spans.append((at, at + len(value)))
            at = text.find(value, at + len(value))
    return _apply(text, spans) if spans else text


class _Scrubbed:
    """sys.stdout or sys.stderr with every text written passed through `scrub`; its
    `buffer` too (click writes there when the stream's encoding is ASCII)."""

    def __init__(self, stream: Any):
        self._stream = stream

    def write(self, text: Any) -> int:
        self._stream.write(scrub(text) if isinstance(text, str) else text)
        return len(text)

    def writelines(self, lines: Iterable) -> None:
        for line in lines:
            self.write(line)

    @property
    def buffer(self) -> Any:
        raw = getattr(self._stream, "buffer", None)
        if raw is None:
            raise AttributeError("buffer")
        return _ScrubbedBytes(raw, getattr(self._stream, "encoding", None) or "utf-8")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _ScrubbedBytes:
    def __init__(self, raw: Any, encoding: str):
        self._raw, self._encoding = raw, encoding

    def write(self, data: Any) -> int:
        text = bytes(data).decode(self._encoding, "surrogateescape")
        self._raw.write(scrub(text).encode(self._encoding, "surrogateescape"))
        return len(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


@contextmanager
def guard_streams() -> Iterator[None]:
    """While a command runs, whatever reaches stdout or stderr passes through `scrub`
    (click.echo, print, a warning, a progress line); afterwards its secrets are forgotten."""
    saved = sys.stdout, sys.stderr
    forget()
    # a stream closed at start (None) is left to the CLI, which points it at /dev/null
    sys.stdout, sys.stderr = (s if s is None else _Scrubbed(s) for s in saved)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        forget()


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
