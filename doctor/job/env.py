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
from doctor.model import Location
from doctor.secrets import is_secret_name

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
    # How the value reached the rank (DESIGN §2, one job model): login, slurm, export,
    # sourced, inline, srun-export, inner, container-env, container-env-file,
    # container-prefix, entry-module.
    channel: str = ""
    in_step: bool = False   # set inside the srun step (evaluated on every node), not the batch

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
    # Sources the doctor could not read that may set any variable (an --env-file it cannot
    # find, `source $X` it cannot resolve): an unset variable may be set there after all.
    opaque: tuple = ()

    def text(self, name: str, default: Optional[str] = None) -> Optional[str]:
        v = self.get(name)
        return v.value if v is not None else default

    def plain(self) -> dict:
        return {k: v.value for k, v in self.items()}


def effective_env(login: Mapping[str, str], script: Optional[SbatchScript],
                  in_job: bool = False) -> JobEnv:
    """Login environment + every assignment of the script, read linearly."""
    state = EnvState.from_login(login, in_job)
    for cmd in (script.commands if script else []):
        if not state.apply(cmd, script, "export") and script and \
                unquote(cmd.words[0]) in ("source", ".", "module", "ml", "conda", "spack"):
            state.notes.append(f"{script.rel}:{cmd.line}: `{' '.join(cmd.argv)}` may set "
                               "variables the doctor cannot see")
    return state.env()


class EnvState:
    """A shell's variables while a script is read: name → EnvValue, exported or not."""

    def __init__(self, values: dict, in_job: bool, secrets: Optional[set] = None,
                 notes: Optional[list] = None, in_step: bool = False):
        self.values = values
        self.in_job = in_job
        self.secrets: set = secrets if secrets is not None else set()
        self.notes: list = notes if notes is not None else []
        self.allexport = False
        self.in_step = in_step
        # The shell that expands the words of the command being read: a child's
        # environment (`srun ... bash $SCRIPT`) is built from exported variables only,
        # but $SCRIPT is expanded by the parent before srun runs.
        self.shell: Optional[EnvState] = None
        self.opaque: list = []   # see JobEnv.opaque; per shell, copied to its children

    @classmethod
    def from_login(cls, login: Mapping[str, str], in_job: bool) -> "EnvState":
        return cls({k: EnvValue(k, v, "login", channel="login") for k, v in login.items()},
                   in_job, {v for k, v in login.items() if is_secret_name(k)})

    def child(self, in_step: Optional[bool] = None) -> "EnvState":
        """A child process's shell: the exported variables only (notes, secrets shared)."""
        out = EnvState({k: v for k, v in self.values.items() if v.exported}, self.in_job,
                       self.secrets, self.notes, self.in_step if in_step is None else in_step)
        out.opaque = list(self.opaque)
        return out

    def copy(self) -> "EnvState":
        out = EnvState(dict(self.values), self.in_job, self.secrets, self.notes, self.in_step)
        out.allexport = self.allexport
        out.shell = self.shell
        out.opaque = list(self.opaque)
        return out

    def env(self) -> JobEnv:
        env = JobEnv((k, v) for k, v in self.values.items() if v.exported)
        env.notes = list(self.notes)
        env.secrets = frozenset(self.secrets)
        env.opaque = tuple(self.opaque)
        return env

    def get(self, name: str) -> Optional[str]:
        v = self.values.get(name)
        return v.value if v is not None else None

    def lookup(self, name: str) -> Optional[str]:
        """A variable as the shell reading the current command sees it."""
        return (self.shell or self).get(name)

    def apply(self, cmd: Any, script: Optional[SbatchScript], channel: str) -> bool:
        """Apply cmd when it only sets, exports or unsets variables; False otherwise."""
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
                    self.assign(m.group(1), m.group(2), script, cmd.line, channel,
                                exported if exported is not None else self.allexport)
                else:
                    name = unquote(raw)
                    if name in self.values:
                        self.values[name] = _replace(self.values[name], exported=bool(exported))
            return True
        if argv0 == "unset":
            for raw in words[1:]:
                self.values.pop(unquote(raw), None)
            return True
        if argv0 == "set" and len(words) > 1:
            flag = unquote(words[1])
            if flag in ("-a", "-o") and (flag == "-a" or unquote(words[-1]) == "allexport"):
                self.allexport = True
            elif flag in ("+a",):
                self.allexport = False
            return True
        if all(_ASSIGN.match(w) for w in words):
            for raw in words:
                m = _ASSIGN.match(raw)
                assert m is not None  # all() above matched every word
                was = self.values.get(m.group(1))
                self.assign(m.group(1), m.group(2), script, cmd.line, channel,
                            self.allexport or (was is not None and was.exported))
            return True
        return False

    def assign(self, name: str, raw: str, script: Optional[SbatchScript], line: Optional[int],
               channel: str, exported: bool = True, rel: Optional[str] = None) -> EnvValue:
        referenced: list = []

        def lookup(var: str) -> Optional[str]:
            referenced.append(var)
            return self.lookup(var)

        if "HOME" in self.values and (raw == "~" or raw.startswith("~/")):
            raw = "${HOME}" + raw[1:]  # bash tilde-expands the start of an assignment's value
        res = expand(raw, lookup, in_job=self.in_job)
        parts = set(res.parts)
        unresolved = list(res.unresolved)
        shell = self.shell or self
        for var in referenced:  # (A=$A:x keeps what the old value of A said about itself)
            if var in shell.values:
                parts |= shell.values[var].parts
                unresolved += [u for u in shell.values[var].unresolved if u not in unresolved]
        value = EnvValue(name, res.text, "sbatch", rel or (script.rel if script else None), line,
                         frozenset(parts), tuple(unresolved), exported, channel,
                         shell.in_step)  # expanded where the command is read
        self.values[name] = value
        if is_secret_name(name):  # a shell variable too: `export URL=https://u:$TOKEN@host`
            self.secrets.add(res.text)
        return value

    def put(self, value: EnvValue) -> None:
        """Set a value computed elsewhere (a container's mapping, Slurm's own variables)."""
        self.values[value.name] = value
        if is_secret_name(value.name):
            self.secrets.add(value.value)


def _replace(v: EnvValue, **kw: Any) -> EnvValue:
    from dataclasses import replace

    return replace(v, **kw)


# ---- the scripts a job script runs, and their exports --------------------


def followed_env(job, script) -> tuple:
    """(env, inner scripts): what a rank of the script's training step receives, and
    the scripts read to get there besides the batch script (doctor/job/steps.py)."""
    step = job.step(script)
    return step.env, [s for s in step.scripts if s is not script]


def env_location(v: Optional[EnvValue]) -> Optional[Location]:
    """Where a variable was set, as a finding's location (None: the login environment)."""
    return Location(v.path, v.line) if v is not None and v.path else None
