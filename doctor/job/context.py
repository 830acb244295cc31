"""The Job: everything the checks may know, computed lazily and once.

Inputs (configs, job scripts, settings) are read eagerly when the Job is made,
so that bad input is an exit-2 error before any check runs. Facts about the
node come from probes (doctor/probes/), on first use, memoized, thread-safe,
and replaceable by recorded facts (`facts=`) for tests and fixtures.
"""
from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional

from doctor import fs
from doctor.job.configs import ConfigFile, load_yaml_text
from doctor.job.env import EnvValue, JobEnv
from doctor.job.launchers import Count
from doctor.job.scope import Scope, scoped_rels
from doctor.job.steps import Step, launched_steps, note_unread, training_step
from doctor.job.submitdirs import dirs_above
from doctor.job.versions import given_torch_version, parse_version
from doctor.probes import PROBES, load_probes
from doctor.scanners.git import LS_FILES_OTHERS, LS_FILES_TRACKED, listed_names, run_git
from doctor.job.sbatch import SbatchScript, as_submitted, load_sbatch, looks_like_sbatch
from doctor.errors import InputError
from doctor.secrets import mask_words
from doctor.settings import Settings, is_factory, load_settings

DEFAULT_CONFIG_GLOBS = ("configs/**/*.yaml", "configs/**/*.yml", "conf/**/*.yaml",
                        "conf/**/*.yml", "config/**/*.yaml", "config/**/*.yml")
SCRIPT_SUFFIXES = {".sh", ".sbatch", ".slurm", ".job", ".bash", ""}
# Suffixes that are never job scripts: other files are read for #SBATCH lines too
# (launch_slurm.wilkes3, job.lumi, train.pbs-style names).
NOT_SCRIPTS = {".py", ".pyi", ".pyx", ".yaml", ".yml", ".json", ".toml", ".md", ".rst", ".txt",
               ".csv", ".tsv", ".ipynb", ".cfg", ".ini", ".png", ".jpg", ".jpeg", ".gif",
               ".svg", ".pdf", ".pt", ".pth", ".ckpt", ".bin", ".npy", ".npz", ".h5", ".pkl",
               ".gz", ".zip", ".tar", ".so", ".o", ".c", ".h", ".cc", ".cpp", ".cu", ".hpp",
               ".js", ".ts", ".html", ".css", ".lock", ".log", ".out", ".err", ".parquet",
               ".safetensors", ".onnx", ".xml", ".r", ".jl", ".java", ".go", ".rs", ".whl",
               ".pyc", ".pyo", ".pyd"}
# for str.endswith, which tries them in order: the commonest kinds of a large repo first
_OTHER_KINDS = tuple(sorted(NOT_SCRIPTS, key=lambda s: (s not in {".py", ".yaml", ".yml",
                                                                  ".json", ".md", ".txt"}, s)))
# Outside a git work tree nothing says what the project is, so the files are walked
# (fs.walk: no environments, caches or hidden directories). Past this many the directory
# is not a project but a home directory or /tmp (462k files took 564 s): the run stops
# with exit 2 after walking this many, not all of them. Training repos are far below it
# (Megatron-LM: 3,136 files); `doctor run --static` in a /tmp over it exits in 0.5 s of
# CPU, Python's start included.
MAX_SCAN_FILES = 50000
# `git ls-files` leaves out what it cannot read, with a warning naming it
_GIT_UNREADABLE = re.compile(r"^warning: could not open directory '(.+)': (.+)$", re.M)


class Job:
    def __init__(self, repo: Path, *, configs: Iterable = (), sbatch: Iterable = (),
                 caches: Iterable = (), settings: Optional[Settings] = None,
                 settings_file: Optional[Path] = None, model: Optional[str] = None,
                 data: Optional[str] = None, torch_version: Optional[str] = None,
                 env: Optional[Mapping[str, str]] = None,
                 facts: Optional[dict] = None, static: bool = False,
                 submit_args: Optional[Iterable[str]] = None, scope: Optional[Scope] = None):
        """`submit_args`: the options of `sbatch [options] script` (`doctor sbatch`); the
        scripts are then read as sbatch reads them (doctor/job/sbatch.py as_submitted).
        `scope`: only what changed, and what ties it to a job (doctor/job/scope.py)."""
        self.repo = Path(fs.realpath(fs.readable_dir(self._path(repo), "repository path")))
        self.unreadable = fs.Unreadable()  # what no check could read: counted in the report
        self.settings = settings if settings is not None else load_settings(
            self.repo, Path(settings_file) if settings_file else None)
        self.login_env: dict = dict(os.environ if env is None else env)
        self.in_job = "SLURM_JOB_ID" in self.login_env
        self.static = static
        # False in --no-smoke and --static (set by the runner): checks do not run repo code
        self.smoke = not static
        # whether this run's chosen checks start the smokes' torch process (set by the
        # runner): only then may another check (the torch probe) share it
        self.smokes_run = False
        if model is not None and not is_factory(model):
            raise InputError(f"--model: {model!r} is not MODULE:FACTORY, such as "
                             "mypkg.models:build")
        self.model = model or self.settings.smoke.get("model")
        if data is not None and not is_factory(data):
            raise InputError(f"--data: {data!r} is not MODULE:FACTORY, such as "
                             "mypkg.data:train_loader")
        self.data = data or self.settings.smoke.get("data")   # the data smoke's factory
        caches = list(caches)
        for c in caches:   # a path typed on the command line, as --config: exit 2 if absent
            if not os.path.lexists(self._path(c)):   # (settings `caches:` may be made later)
                raise InputError(f"cache not found: {c} (--cache)")
        self._torch_version = (given_torch_version(torch_version, "--torch-version")
                               or self.settings.torch_version)
        self._overrides = dict(facts or {})
        self._facts: dict = {}
        self._locks: dict = {}
        self._lock = threading.Lock()
        self._memo: dict = {}
        self._judged: dict = {}   # check id -> the steps it judged ("a.sbatch:17"), in order
        self.realpath = fs.RealPaths()  # each path resolved once per run
        self._rels: dict = {}  # path → rel(path)
        self._shared: dict = {}  # thread id -> _SharedClock
        self._busy = _BusyClock()  # while any thread computes shared work
        self._cleanups: list = []
        self.on_progress: Optional[Callable[[str], None]] = None
        self.baseline: Any = None   # --baseline: the findings it accepts (doctor/suppress.py)
        settings_file_used = (self.settings.path or "").removesuffix("[tool.doctor]")
        if scope is not None and settings_file_used:   # a changed settings file: full run
            scope = scope.settings_changed(self.rel(settings_file_used))
        self.scope_given = scope
        self.scope = scope if scope is not None and scope.full is None else None
        if self.tracked_rels() is None:   # not git: a directory too large to be a project
            self.every_rel()              # is exit 2 now, before any check (_list_repo_files)
        # the files as written; `configs` is what the job's steps read of them
        self._explicit_configs = list(configs)
        self.config_files: list = self._load_configs(self._explicit_configs)
        self._explicit_sbatch = list(sbatch)
        self.scripts: list = [load_sbatch(p, self.rel(p))
                              for p in self._sbatch_paths(self._explicit_sbatch)]
        # `doctor sbatch`: the job goes to this machine's sbatch, so this cluster is its own
        self.submitting = submit_args is not None
        if submit_args is not None:
            self.scripts = [as_submitted(s, list(submit_args), self.login_env)
                            for s in self.scripts]
        for script in self.scripts:
            note_unread(self, script)
        self.caches: list = [self._path(c) for c in list(caches) + list(self.settings.caches)]
        load_probes()

    def say(self, message: str) -> None:
        """Progress of long shared work (reading 90k sources), to `on_progress`: the CLI
        sets it when it shows progress (on a terminal)."""
        if self.on_progress is not None:
            self.on_progress(message)

    @property
    def site(self) -> dict:
        """The site as the checks see it (doctor/sites): the settings' `site:` keys over
        those of the profile the settings name, else of the one detected from this login
        node (not with --static); computed once."""
        from doctor import sites

        def detect() -> tuple:
            return (None, None) if self.static else sites.detect(config=self.slurm_config)

        return self.memo("site", lambda: sites.effective(self.settings.site, detect))

    def slurm_config(self) -> Optional[dict]:
        """This machine's `scontrol show config` as {key: value}, read once a run; None
        with --static or when Slurm does not answer."""
        from doctor import sites

        return None if self.static else self.memo("slurm-config", sites.slurm_config)

    @property
    def configs(self) -> list:
        """The training configs as the job reads them: with each training step's
        command-line overrides applied and Hydra's defaults composed
        (doctor/job/stepconfigs.py), plus the configs a step names elsewhere."""
        from doctor.job.stepconfigs import effective_configs

        return self.memo("configs", lambda: effective_configs(self, self.config_files))

    def configs_loaded(self) -> list:
        """[Path] of the config files the job scripts' training steps read (named on
        their command lines, or composed by Hydra), as doctor/job/stepconfigs.py finds
        them; [] when none is known."""
        from doctor.job.stepconfigs import step_configs

        out: list = []
        for script in self.scripts:
            sc = step_configs(self, script)
            out += [Path(p) for p, _, _ in sc.needed] + [p for ps in sc.replaces for p in ps]
        return out

    @property
    def configs_read(self) -> list:
        """The report's `inputs.configs`: `configs` when a check read them, else the config
        files as found. Composing them reads every Python source for `@hydra.main`: a
        run whose checks read no config (`--only rsync-exclude-unanchored`) does not pay
        that for the report alone."""
        configs = self.memoized("configs")
        return self.config_files if configs is None else configs

    # ---- paths ---------------------------------------------------------
    def _path(self, p: Any) -> Path:
        p = Path(os.path.expanduser(str(p)))
        return p if p.is_absolute() else (fs.cwd() / p)

    def rel(self, path: Any) -> str:
        """A path relative to the repo when inside it, else absolute; once per path and
        run (the code checks ask it of the same 100k sources)."""
        p = os.fspath(path)
        hit = self._rels.get(p)
        if hit is None:
            hit = self._rels[p] = self._rel(p)
        return hit

    def _rel(self, p: str) -> str:
        real = self.realpath(p)
        top = str(self.repo)
        if real == top:
            return "."
        if fs.inside(real, top):
            return real[len(top.rstrip("/")) + 1:]
        return str(Path(p))

    @property
    def whole_config_files(self) -> list:
        """config_files, but in a scoped run every one the globs find (read on first use):
        for a judgement that needs them all, such as which Hydra option is selected."""
        if self.scope is None:
            return self.config_files
        return self.memo("whole_config_files",
                         lambda: self._load_configs(self._explicit_configs, unscoped=True))

    def _load_configs(self, explicit: Iterable = (), unscoped: bool = False) -> list:
        out = []
        for p in self._config_paths(explicit, unscoped):
            try:
                out.append(self._load_config(p))
            except InputError:
                if not unscoped:
                    raise
        return out

    def _config_paths(self, explicit: Iterable, unscoped: bool = False) -> list:
        paths = [self._path(p) for p in explicit]  # each is read (or refused) by _load_config
        globs = self.settings.configs or ([] if paths else list(DEFAULT_CONFIG_GLOBS))
        for pattern in globs:
            if self.scope is not None and not unscoped and not os.path.isabs(str(pattern)):
                # the files in scope that the glob matches, without walking the directories
                match = fs.glob_regex(str(pattern)).match
                hits = sorted(self.repo / r for r in self.repo_rels() if match(r))
                hits = [p for p in hits if fs.is_file(p, self.unreadable)]
            else:
                hits = [p for p in fs.glob(self.repo, str(pattern), self.unreadable)
                        if self.scope is None or unscoped or self.rel(p) in self.repo_rel_set()]
            # a file the globs found but cannot open is skipped (and counted), not fatal
            paths += [p for p in hits if fs.read_bytes(p, self.unreadable, 0) is not None]
        return _unique(paths)

    def _load_config(self, path: Path) -> ConfigFile:
        return ConfigFile(path=Path(fs.realpath(path)), rel=self.rel(path),
                          data=load_yaml_text(path, "config file"))

    def _sbatch_paths(self, explicit: Iterable, whole: bool = False) -> list:
        paths = [self._path(p) for p in explicit]
        if paths:
            return _unique(paths)
        rels = self.every_rel() if whole else self.repo_rels()
        return [p for p in self._existing(r for r in rels  # (the first test saves a call)
                                          if not r.endswith(_OTHER_KINDS) and _may_be_script(r))
                if looks_like_sbatch(p, self.unreadable)]

    @property
    def job_script_count(self) -> int:
        """How many job scripts the repo has, in a scoped run too (a rule that applies
        when there is only one must not apply because the scope holds only one)."""
        if self.scope is None or self._explicit_sbatch:
            return len(self.scripts)
        return self.memo("job_script_count",
                         lambda: len(self._sbatch_paths((), whole=True)))

    def repo_files(self, suffixes: Optional[set] = None,
                   names: Optional[Iterable[str]] = None, whole: bool = False) -> list:
        """Files of the repo (git's view when it is a repo, else a pruned walk); in a
        scoped run those in scope, unless `whole`: a lookup by name (the one file a
        relative `--config` may mean) asks the whole repo, a scan asks the scope. The
        names are filtered as strings first: only the files asked for become Paths and
        are stat'ed (a 100k-file repo costs ~1 s of both otherwise)."""
        whole = whole and self.scope is not None
        wanted = (frozenset(suffixes) if suffixes is not None else None,
                  frozenset(names or ()))
        # every name asked for ends with one of these: one C-level test rules out the rest
        ends = tuple(wanted[0] or ()) + tuple(wanted[1])
        return list(self.memo(("repo_files", wanted, whole), lambda: self._existing(
            r for r in (self.every_rel() if whole else self.repo_rels()) if wanted[0] is None
            or (r.endswith(ends) and (_suffix(r) in wanted[0]
                                      or r.rpartition("/")[2] in wanted[1])))))

    def _existing(self, rels: Iterable[str]) -> list:
        return [p for p in (self.repo / r for r in rels) if fs.is_file(p, self.unreadable)]

    def repo_rels(self) -> list:
        """Every file's repo-relative name, once per run; in a scoped run, only those in
        scope (doctor/job/scope.py)."""
        if self.scope is None:
            return self.every_rel()
        return self.memo("scoped_rels", lambda: scoped_rels(self, self.every_rel(),
                                                            _may_be_script))

    def every_rel_set(self) -> set:
        """every_rel as a set, made once: whether a name is a file of the repo."""
        return self.memo("every_set", lambda: set(self.every_rel()))

    def repo_rel_set(self) -> set:
        return self.memo("scoped_set", lambda: set(self.repo_rels()))

    def every_rel(self) -> list:
        """Every file's repo-relative name, scoped run or not."""
        return self.memo("repo_rels", self._list_repo_files)

    def tracked_rels(self) -> Optional[list]:
        """The index's names (`git ls-files --cached`, begun early by the CLI), once per
        run; None outside a git work tree. The git checks' tracked_paths reads them too."""
        return self.memo("tracked_rels", self._list_tracked)

    def untracked_rels(self) -> Optional[list]:
        """The untracked, not ignored names (`git ls-files --others --exclude-standard`)
        as the file list read them in a full run; None where it did not (a scoped run,
        git failed). git-tracked-core-file reads them too, instead of a second walk."""
        if self.scope is not None or self.tracked_rels() is None:
            return None   # (and the file list may not even be git's)
        self.every_rel()
        return self._memo.get("untracked_names")

    def _list_tracked(self) -> Optional[list]:
        res = run_git(str(self.repo), *LS_FILES_TRACKED, timeout=20)
        return listed_names(res.stdout) if res.returncode == 0 else None

    def _list_repo_files(self) -> list:
        """git's files (tracked, and untracked that are not ignored), else a walk; never
        those of an environment, installed packages or a cache (fs.not_the_repo), even
        tracked. Every reader of the repo's files lists them here."""
        tracked = self.tracked_rels()
        if tracked is not None and self.scope is not None:
            # a scoped run's untracked files are among its changed ones: no walk
            listed = set(tracked)
            return fs.not_the_repo(tracked + sorted(r for r in self.scope.changed
                                                    if r not in listed), self.repo)
        if tracked is not None:
            res = run_git(str(self.repo), *LS_FILES_OTHERS, timeout=20)
            if res.returncode == 0:  # all of them: a job script past the first N is still one
                for m in _GIT_UNREADABLE.finditer(res.stderr):  # git skipped it, and says so
                    self.unreadable.note(self.repo / m[1], OSError(0, m[2]))
                others = self._memo["untracked_names"] = listed_names(res.stdout)
                # git's order for --others --cached
                return fs.not_the_repo(others + tracked, self.repo)
            # (a walk instead, which ignores no file: said, since git should have answered)
            self.unreadable.note(self.repo, OSError(0, "git ls-files --others: " + (
                "timed out" if res.timed_out else res.stderr.strip()[:200] or "failed")
                + "; the files were listed without git"))
        out = self._walk_files()
        if len(out) > MAX_SCAN_FILES and tracked is None:
            raise InputError(f"{self.repo} is not a git work tree and holds over "
                             f"{MAX_SCAN_FILES:,} files; run the doctor in your project's "
                             "directory, or name it with --repo")
        return out[:MAX_SCAN_FILES]

    def _walk_files(self) -> list:
        """The files below the repo, walked (fs.walk), up to one past MAX_SCAN_FILES."""
        out: list = []
        top = str(self.repo)
        for root, _dirs, files in fs.walk(self.repo, self.unreadable):
            rel = os.path.relpath(root, top)
            out += [f if rel == "." else f"{rel}/{f}" for f in files]
            if len(out) > MAX_SCAN_FILES:
                break
        return out

    # ---- facts ---------------------------------------------------------
    def _once(self, store: dict, key: Any, compute: Callable[[], Any]) -> Any:
        """store[key], computed by exactly one thread however many ask at once."""
        with self._lock:
            if key in store:
                return store[key]
            lock = self._locks.setdefault((id(store), key), threading.Lock())
        with lock:
            if key not in store:
                store[key] = compute()
            return store[key]

    def fact(self, name: str) -> Any:
        """A fact from its probe, computed once (thread-safe) or from the overrides."""
        if name in self._overrides:
            return self._overrides[name]
        if name not in PROBES and name not in self._facts:  # recorded facts have no probe
            raise KeyError(f"no probe for fact {name!r}")
        with self._clock().paused():  # a probe touches the world: a hang is the check's
            return self._once(self._facts, name, lambda: PROBES[name](self))

    def memo(self, key: Any, compute: Callable[[], Any]) -> Any:
        """Derived data several checks share (the file list, parsed sources), computed
        once per run; unlike facts, it is not part of the report. The time a check spends
        here (computing, or waiting for the thread that computes) is not charged to its
        deadline: reading a big repo once is not a hang (see busy_seconds)."""
        try:
            return self._memo[key]  # computed already (a dict read is atomic)
        except KeyError:
            pass
        with self._clock().running():
            return self._once(self._memo, key, compute)

    def _clock(self) -> "_SharedClock":
        ident = threading.get_ident()
        with self._lock:
            return self._shared.setdefault(ident, _SharedClock(self._busy))

    def busy_seconds(self) -> float:
        """Seconds, up to now, during which some thread was in shared work (memo). The
        checks' own code shares one interpreter lock with that work, so while it runs,
        however few seconds a check's own work needs, they pass more slowly."""
        return self._busy.seconds()

    def memoized(self, key: Any) -> Any:
        """What `memo(key, ...)` already computed, or None (computes nothing)."""
        with self._lock:
            return self._memo.get(key)

    def record_fact(self, name: str, value: Any) -> None:
        """A check's own observation for the report's `facts` (e.g. smoke timings)."""
        with self._lock:
            self._facts[name] = value

    def has_fact(self, name: str) -> bool:
        return name in self._overrides or name in PROBES

    def fact_overridden(self, name: str) -> bool:
        """True when the fact comes from `facts=` (a fixture, another node), not this machine."""
        return name in self._overrides

    def facts_gathered(self) -> dict:
        """The facts this run used, for the report."""
        out = dict(self._facts)
        out.update({k: v for k, v in self._overrides.items() if k in out or k in PROBES})
        out["site"] = self.site
        if self.scope_given is not None:
            out["scope"] = dict(self.scope_given.to_dict(), checked=len(self.repo_rels())
                                if self.scope is not None else None)
        model = self._job_model_facts()
        if model:
            out["job"] = model
        if len(self.unreadable):
            out["unreadable"] = {"count": len(self.unreadable), "examples": [
                {"path": p[len(str(self.repo)) + 1:] if p.startswith(f"{self.repo}/")
                 else p, "reason": why}
                for p, why in self.unreadable.items()[:fs.MAX_EXAMPLES]]}
        return out

    def _job_model_facts(self) -> dict:
        """What the checks read of each job script: its training step (launcher chain,
        entry, ranks with their sources) and the platform decision with its evidence,
        for the scripts a check asked about (nothing is computed just for the report)."""
        out: dict = {}
        for script in self.scripts:
            steps = self.memoized(("steps", script.rel))
            platform = self.memoized(("platform", script.rel))
            if steps is None and platform is None:
                continue
            entry: dict = {}
            if steps is not None:
                step = training_step(steps)
                entry["step"] = {
                    "at": step.where if step.line else None,
                    "chain": [f"{x.kind} ({x.path}:{x.line})" for x in step.chain],
                    # masked with the program word, which the args alone lack
                    # (`python sshpass -p S3CRET ...`: `-p S3CRET` is sshpass's)
                    "entry": step.entry,
                    "args": mask_words([str(step.entry), *step.args])[1:21],
                    "ranks_per_node": [step.ranks_per_node.value, step.ranks_per_node.source],
                    "cpus_per_rank": [step.cpus_per_rank.value, step.cpus_per_rank.source],
                    "gpus_per_node": [step.gpus_per_node.value, step.gpus_per_node.source],
                    "nodes": [step.nodes.value, step.nodes.source],
                    "notes": step.notes[:10]}
            if platform is not None:
                entry["platform"] = platform.to_dict()
            out[script.rel] = entry
        return out

    # ---- the job -------------------------------------------------------
    def steps(self, script: Optional[SbatchScript] = None) -> list:
        """The launched steps of a job script (doctor/job/steps.py), read once per run;
        None: the login environment as one step."""
        return self.memo(("steps", script.rel if script else None),
                         lambda: [self._with_entry_env(s) for s in launched_steps(self, script)])

    def entry_file(self, step: Step) -> Optional[Path]:
        """The repo file a step's python runs (`-m pkg.train` or `scripts/train.py`)."""
        entry = step.entry
        if entry is None:
            return None
        key = ("entry_file", entry, step.entry_is_module, step.cwd,
               step.script.path if step.script else None)
        return self.memo(key, lambda: self._entry_file(step, entry))

    def _entry_file(self, step: Step, entry: str) -> Optional[Path]:
        # a relative working directory (`cd pkg`, `srun -D pkg`) is the submit
        # directory's: the repo root, else the job script's directory, as below
        bases = [Path(step.cwd)] if step.cwd and os.path.isabs(step.cwd) else \
            [self.repo / step.cwd] + ([step.script.path.parent / step.cwd] if step.script
                                      else []) if step.cwd else []
        # the submit directory is unknown: the repo root, else the job script's own
        # directory (scripts are usually submitted from where they sit), else a project
        # directory between the two (doctor/job/submitdirs.py)
        bases += [self.repo, self.repo / "src", step.script.path.parent,
                  *dirs_above(self.repo, step.script.path.parent)] if step.script \
            else [self.repo, self.repo / "src"]
        if step.entry_is_module:
            rel = entry.replace(".", "/")
            names = [f"{rel}.py", f"{rel}/__main__.py"]
        else:
            names = [entry]
        for base in bases:
            for name in names:
                p = base / name
                if fs.is_file(p, self.unreadable) and self.rel(p) != str(p):
                    return p
        return None

    def _with_entry_env(self, step: Step) -> Step:
        """The last env channel: os.environ assignments at the top of the entry module."""
        path = self.entry_file(step)
        if path is None:
            return step
        from doctor.job.code import entry_env   # (code.py imports this module's users)

        for name, a in entry_env(self, path).items():
            if a.how == "setdefault" and name in step.env:
                continue
            step.env[name] = EnvValue(
                name, a.value if a.value is not None else a.text, "sbatch", a.file, a.line,
                unresolved=() if a.value is not None else (a.text,), channel="entry-module",
                in_step=True)
        return step

    def step(self, script: Optional[SbatchScript] = None) -> Step:
        """The script's training step (doctor/job/steps.py training_step says which), else
        the last (a script that launches nothing: its environment at the end). The check
        asking is told in its result (`steps`): which step it judged."""
        step = training_step(self.steps(script))
        name = threading.current_thread().name   # the runner's "check:<id>"
        if name.startswith("check:") and script is not None:
            judged = self._judged.setdefault(name[6:], [])
            where = step.where if step.is_training else \
                f"{script.rel} (no step that runs a Python program)"
            if where not in judged:
                judged.append(where)
        return step

    def judged_steps(self, check_id: str) -> list:
        """The steps a check judged, as `script:line` (Job.step records them)."""
        return list(self._judged.get(check_id, ()))

    def all_steps(self) -> list:
        """The training step of every job script, or the login step when there is none."""
        return [self.step(s) for s in (self.scripts or [None])]

    def ranks_per_node(self, script: Optional[SbatchScript] = None) -> Count:
        """Ranks per node of the script's training step (tasks per node × processes per
        task); None: inside a job Slurm's SLURM_NTASKS_PER_NODE, else the largest over the
        job scripts. One answer for every check."""
        if script is not None:
            return self.step(script).ranks_per_node
        env = self.login_env.get("SLURM_NTASKS_PER_NODE", "")
        if self.in_job and env.isdigit():
            return Count(int(env), "SLURM_NTASKS_PER_NODE")
        counts = [s.ranks_per_node for s in self.all_steps() if s.ranks_per_node.value]
        return max(counts, key=lambda c: c.value) if counts else Count(1, "default")

    def job_env(self, script: Optional[SbatchScript] = None) -> JobEnv:
        """What a rank of the script's training step receives, through every channel
        (None: the login environment)."""
        return self.step(script).env

    @property
    def torch_version_given(self) -> Optional[str]:
        """The torch the user said the job runs (--torch-version, settings), or None."""
        return self._torch_version

    @property
    def torch_release(self) -> Optional[tuple]:
        """(major, minor) of the job's torch, or None when unknown."""
        return parse_version(self.torch_version)

    @property
    def torch_version(self) -> Optional[str]:
        """The torch the job will run: --torch-version, settings, else the installed one."""
        return self._torch_version or self.fact("torch_installed")

    def nodes(self, script: Optional[SbatchScript] = None) -> Optional[int]:
        if self.in_job and self.login_env.get("SLURM_NNODES", "").isdigit():
            return int(self.login_env["SLURM_NNODES"])
        if script is not None:
            return script.nodes
        counts = [s.nodes for s in self.scripts if s.nodes]
        return max(counts) if counts else None

    def git(self, *args: str, timeout: float = 30.0) -> subprocess.CompletedProcess:
        """Run git in the repo with a timeout; raises Skip-worthy errors to the caller."""
        res = run_git(str(self.repo), *args, timeout=timeout)
        return subprocess.CompletedProcess(["git", *args], res.returncode
                                           if res.returncode is not None else -1,
                                           res.stdout, res.stderr)

    # ---- cleanup -------------------------------------------------------
    def add_cleanup(self, fn: Callable[[], None]) -> None:
        """Called by the runner when the run ends, times out or is interrupted."""
        self._cleanups.append(fn)

    def cleanup(self) -> None:
        while self._cleanups:
            fn = self._cleanups.pop()
            try:
                fn()
            except Exception:
                pass


def _unique(paths: Iterable) -> list:
    seen: set = set()
    out = []
    for p in paths:
        key = fs.realpath(p)
        if key not in seen:
            seen.add(key)
            out.append(Path(p))
    return out


class _BusyClock:
    """The time during which at least one thread is inside `Job.memo`."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0
        self.total = 0.0
        self.since: Optional[float] = None

    def enter(self) -> None:
        with self.lock:
            self.inside += 1
            if self.inside == 1:
                self.since = time.monotonic()

    def leave(self) -> None:
        with self.lock:
            self.inside -= 1
            if self.inside == 0 and self.since is not None:
                self.total += time.monotonic() - self.since
                self.since = None

    def seconds(self) -> float:
        with self.lock:
            since = self.since
            return self.total + (time.monotonic() - since if since is not None else 0.0)


class _SharedClock:
    """Whether one thread is inside `Job.memo` (less the probes it waits for there), for
    the job's _BusyClock."""

    def __init__(self, busy: _BusyClock) -> None:
        self.since: Optional[float] = None
        self.depth = 0
        self.busy = busy

    def _start(self) -> None:
        if self.since is None:   # (a fact asked inside a probe's pause: running already)
            self.since = time.monotonic()
            self.busy.enter()

    def _stop(self) -> None:
        if self.since is not None:
            self.since = None
            self.busy.leave()

    @contextmanager
    def running(self) -> Iterator[None]:
        if self.depth == 0:
            self._start()
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            if self.depth == 0:
                self._stop()

    @contextmanager
    def paused(self) -> Iterator[None]:
        self._stop()
        try:
            yield
        finally:
            if self.depth > 0:
                self._start()


def _suffix(rel: str) -> str:
    """Path(rel).suffix, without building the Path."""
    name = rel.rpartition("/")[2]
    i = name.rfind(".")
    return name[i:] if 0 < i < len(name) - 1 else ""


def _may_be_script(rel: str) -> bool:
    """A name a job script may have: a script suffix, or one that is not a known other
    kind of file (launch_slurm.wilkes3, job.lumi, train.pbs)."""
    if rel.endswith(_OTHER_KINDS):   # most of a large repo (.py, .yaml): one C-level test
        return False
    suffix = _suffix(rel)
    return suffix in SCRIPT_SUFFIXES or (suffix.lower() not in NOT_SCRIPTS
                                         and suffix[1:].isalnum())
