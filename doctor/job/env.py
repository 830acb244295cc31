"""The job's effective environment: login environment + the script's exports.

Evaluated symbolically and in order (a linear reading of the script: the
doctor does not run it). Each value records where it was set and which
per-job / per-node / per-rank / per-user / temp-dir parts it contains.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from doctor.job.sbatch import SbatchScript
from doctor.job.shell import expand, unquote
from doctor.secrets import is_secret_name
from doctor.job.sbatch import load_sbatch

_ASSIGN = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


@dataclass(frozen=True)
class EnvValue:
    name: str
    value: str
    source: str                  # "login" or "sbatch"
    path: Optional[str] = None   # the script, for values it set
    line: Optional[int] = None
    parts: frozenset = frozenset()   # subset of {job, node, rank, user, tmp}
    unresolved: tuple = ()           # pieces the doctor cannot know
    exported: bool = True

    @property
    def resolved(self) -> bool:
        return not self.unresolved

    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.path else "login environment"


class JobEnv(dict):
    """name → EnvValue for the exported variables; `.notes` says what was skipped;
    `.secrets` every value a secret-named variable took, exported or not."""

    notes: list
    secrets: frozenset = frozenset()

    def text(self, name: str, default: Optional[str] = None) -> Optional[str]:
        v = self.get(name)
        return v.value if v is not None else default

    def plain(self) -> dict:
        return {k: v.value for k, v in self.items()}


def effective_env(login: Mapping[str, str], script: Optional[SbatchScript],
                  in_job: bool = False) -> JobEnv:
    state: dict = {k: EnvValue(k, v, "login") for k, v in login.items()}
    secrets = {v for k, v in login.items() if is_secret_name(k)}
    allexport = False
    notes: list = []
    for cmd in (script.commands if script else []):
        argv0 = unquote(cmd.words[0])
        words = list(cmd.words)
        if argv0 in ("export", "declare", "typeset", "local", "readonly"):
            args = words[1:]
            flags = [unquote(a) for a in args if unquote(a).startswith("-")]
            if argv0 != "export" and not any("x" in f for f in flags):
                exported = None  # declare without -x: a shell variable
            else:
                exported = not any(f.startswith("-n") for f in flags)
            for raw in args:
                if unquote(raw).startswith("-"):
                    continue
                m = _ASSIGN.match(raw)
                if m:
                    _assign(state, m.group(1), m.group(2), script, cmd.line, in_job,
                            exported if exported is not None else allexport, secrets)
                else:
                    name = unquote(raw)
                    if name in state:
                        state[name] = _replace(state[name], exported=bool(exported))
        elif argv0 == "unset":
            for raw in words[1:]:
                state.pop(unquote(raw), None)
        elif argv0 == "set" and len(words) > 1:
            flag = unquote(words[1])
            if flag in ("-a", "-o") and (flag == "-a" or unquote(words[-1]) == "allexport"):
                allexport = True
            elif flag in ("+a",):
                allexport = False
        elif all(_ASSIGN.match(w) for w in words):
            for raw in words:
                m = _ASSIGN.match(raw)
                assert m is not None  # all() above matched every word
                name = m.group(1)
                was = state.get(name)
                _assign(state, name, m.group(2), script, cmd.line, in_job,
                        allexport or (was is not None and was.exported), secrets)
        elif argv0 in ("source", ".", "module", "ml", "conda", "spack") and script:
            notes.append(f"{script.rel}:{cmd.line}: `{' '.join(cmd.argv)}` may set variables "
                         "the doctor cannot see")
    env = JobEnv((k, v) for k, v in state.items() if v.exported)
    env.notes = notes
    env.secrets = frozenset(secrets)
    return env


def _assign(state: dict, name: str, raw: str, script: Optional[SbatchScript], line: int,
            in_job: bool, exported: bool, secrets: set) -> None:
    referenced: list = []

    def lookup(var: str) -> Optional[str]:
        referenced.append(var)
        v = state.get(var)
        return v.value if v is not None else None

    home = state.get("HOME")
    if home is not None and (raw == "~" or raw.startswith("~/")):
        raw = "${HOME}" + raw[1:]  # bash tilde-expands the start of an assignment's value
    res = expand(raw, lookup, in_job=in_job)
    parts = set(res.parts)
    unresolved = list(res.unresolved)
    for var in referenced:  # (A=$A:x keeps what the old value of A said about itself)
        if var in state:
            parts |= state[var].parts
            unresolved += [u for u in state[var].unresolved if u not in unresolved]
    state[name] = EnvValue(name, res.text, "sbatch", script.rel if script else None, line,
                           frozenset(parts), tuple(unresolved), exported)
    if is_secret_name(name):  # a shell variable too: `export URL=https://u:$TOKEN@host`
        secrets.add(res.text)


def _replace(v: EnvValue, **kw: Any) -> EnvValue:
    from dataclasses import replace

    return replace(v, **kw)


# ---- the scripts a job script runs, and their exports --------------------
def inner_scripts(job, script) -> list:
    """Repo scripts the job script runs (`bash x.sh`, `source x.sh`, a container's
    `bash "$CODE_DIR/slurm/inner.sh"`), matched by their path's tail."""
    if script is None:
        return []
    shells = {p: job.rel(p) for p in job.repo_files({".sh", ".bash"})}
    out = []
    for cmd in script.commands:
        for word in cmd.argv[1:]:
            if not word.endswith((".sh", ".bash")):
                continue
            tail = word.split("}")[-1].lstrip("/")
            for path, rel in shells.items():
                if path != script.path and rel and (rel == tail or tail.endswith("/" + rel)
                                                    or rel.endswith("/" + tail) or rel == word):
                    out.append(path)
    return list(dict.fromkeys(out))


def followed_env(job, script) -> tuple:
    """(env, inner scripts): the job env plus the exports of the scripts it runs.
    Computed once per script and run, whichever check asks first (several do)."""
    return job.memo(("followed_env", script.rel if script else None),
                    lambda: _follow(job, script))


def _follow(job, script) -> tuple:
    env = job.job_env(script)
    inners = []
    for path in inner_scripts(job, script):
        try:
            inner = load_sbatch(path, job.rel(path))
        except Exception:
            continue
        merged = effective_env(env.plain(), inner, in_job=job.in_job)
        out = JobEnv((k, env[k] if v.source == "login" and k in env else v)
                     for k, v in merged.items())
        out.notes = list(getattr(env, "notes", [])) + list(merged.notes)
        env = out
        inners.append(inner)
    return env, inners
