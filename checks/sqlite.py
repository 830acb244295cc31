"""A SQLite database (MLflow, Optuna, a logger's .db) on a network filesystem."""
from __future__ import annotations

import ast
import os
import re
import shlex
from dataclasses import dataclass
from typing import Any, Iterator, Optional

from doctor import Finding, Location, Severity, Skip, check
from doctor.job.configs import keypath
from doctor.job.context import Job
from doctor.model import FixOption, add
from doctor.job.paths import filesystem, known_dir, value_parts
from doctor.job.ranks import rank_conditional
from doctor.job.sources import dotted, trees_mentioning

SQLITE = "sqlite:///"
DB_SUFFIXES = (".db", ".sqlite", ".sqlite3")
LOG_KEY = re.compile(r"log|track|mlflow|optuna|storage|experiment", re.I)
# calls that take a database URI (positionally or by keyword) ...
URI_CALLS = ("set_tracking_uri", "set_registry_uri", "create_study", "load_study",
             "MlflowClient", "MLFlowLogger", "RDBStorage", "create_engine")
# ... and the calls that write to it; Lightning's MLFlowLogger logs from rank 0 itself
TRACKING = re.compile(r"^mlflow\.(log_\w+|start_run|set_tags?|set_experiment|autolog)$|"
                      r"(^|\.)(create_study|load_study|optimize|log_\w+)$")
RANK_ZERO_LOGGERS = ("MLFlowLogger",)
# OmegaConf / Hydra interpolations that differ between jobs
CONFIG_PER_JOB = re.compile(r"\$\{(oc\.env:|env:)(SLURM_(ARRAY_)?JOB_?ID|SLURM_ARRAY_TASK_ID|"
                            r"TMPDIR)|\$\{now:|\$\{hydra:")


@dataclass(frozen=True)
class Db:
    """One SQLite database the job names: where, and how it was written."""
    source: str            # env | config | code
    name: str              # the variable, config key or call
    value: str             # as written
    path: str              # the file path inside the URI / value
    location: Optional[Location]
    script: Any = None     # the job script whose environment sets it (env)
    per_job: bool = False
    batch_node: bool = False


@dataclass(frozen=True)
class Writers:
    """How many processes can open the database at once, and why."""
    several: Optional[bool]  # None: the doctor cannot tell (no tracking call, guard unseen)
    why: str


@check("sqlite-on-shared-fs", title="A SQLite database (MLflow, Optuna) sits on a network "
       "filesystem", severity="error", tags=("mlflow", "optuna", "filesystem"),
       needs=("sbatch", "configs", "repo", "settings"), timeout=30)
def sqlite_on_shared_fs(job: Job) -> Iterator[Finding]:
    """A SQLite database named by the job (`MLFLOW_TRACKING_URI=sqlite:///…`,
    `OPTUNA_STORAGE`, any `sqlite:///` value in the job's environment, its configs or a
    constant the code passes to `mlflow.set_tracking_uri` / `optuna.create_study`, and
    `*.db` / `*.sqlite` paths under logging or tracking keys) lies on a shared filesystem.

    Relative paths resolve against the step's working directory (the submit directory,
    taken as the repo, when the script does not `cd`). The filesystem comes from the site
    profile, the mount table or statfs, as for miopen-cache-shared; a static run uses only
    the site profile or recorded mounts and says when neither tells, and so does a run for
    a job for another cluster (its `--partition` or `--clusters` is not this machine's
    cluster's), whose mounts this machine's table does not show.

    Fails when several processes can open the database at once: the step runs several
    tasks and the tracking calls the doctor sees have no rank-0 guard, or the script is a
    job array and the path has no per-job part (`$SLURM_JOB_ID`; `%j` stays literal
    outside `#SBATCH --output`). Warns for a single writer, for a path with no per-job
    part that concurrent jobs (a parameter scan) would share, and when the doctor cannot
    see whether a rank-0 guard covers the tracking calls or cannot tell the filesystem.

    ## Why it matters
    SQLite locks with POSIX byte-range locks. On Lustre, GPFS and NFS these are slow,
    disabled (Lustre without `-o flock`) or not coherent between nodes, and WAL mode needs
    shared memory that a network filesystem cannot give. Two writers end in
    `sqlite3.OperationalError: database is locked` or a corrupt database, after the job
    has waited in the queue.

    ## How to fix
    Give each job its own node-local database and copy it back at the end of the job
    script:

        export MLFLOW_TRACKING_URI="sqlite:///${TMPDIR:-/tmp}/mlruns-$SLURM_JOB_ID.db"
        srun python train.py
        cp "${TMPDIR:-/tmp}/mlruns-$SLURM_JOB_ID.db" /scratch/project/mlruns/

    and log from rank 0 only (`if rank == 0:`). For many concurrent writers (an Optuna
    search, a parameter scan) run a tracking server instead (`mlflow server`, a
    PostgreSQL/MySQL storage, or Optuna's JournalStorage).
    """
    scripts = list(job.scripts) or [None]
    dbs = _env_dbs(job, scripts) + _config_dbs(job) + _code_dbs(job)
    if not dbs:
        raise Skip("no SQLite database: no sqlite:/// value in the job's environment, "
                   "configs or code, and no *.db / *.sqlite path under a logging key")
    usage = _tracking(job)
    seen: set = set()
    for db in dbs:
        best: Optional[Finding] = None
        for script in ([db.script] if db.source == "env" else scripts):
            f = _judge(job, db, script, usage)
            if f is not None and (best is None or _weight(f) > _weight(best)):
                best = f
        if best is None:
            continue
        key = (best.data["path"], best.location)
        if key not in seen:
            seen.add(key)
            yield best


def _weight(f: Finding) -> int:
    return 1 if f.severity in (None, Severity.ERROR) else 0


# ---- where the databases are named ------------------------------------------
def _uri_path(value: str) -> Optional[str]:
    """The file inside `sqlite:///path?opts`; None for in-memory or no path."""
    i = value.find(SQLITE)
    if i < 0:
        return None
    path = value[i + len(SQLITE):].split("?", 1)[0].strip().strip("'\"")
    return None if not path or path == ":memory:" or path.startswith("file::memory") else path


def _env_dbs(job: Job, scripts: list) -> list:
    out = []
    for script in scripts:
        env = job.job_env(script)
        for name, v in env.items():
            path = _uri_path(v.value)
            if path is None or v.channel == "slurm":
                continue
            parts, batch_node = value_parts(job, env, v)
            out.append(Db("env", name, v.value, path,
                          Location(v.path, v.line) if v.path else None, script,
                          bool(parts & {"job", "tmp"}), batch_node))
    return out


def _config_dbs(job: Job) -> list:
    out = []
    for cfg in job.configs:
        for path, mapping in cfg.mappings():
            for key, value in mapping.items():
                if not isinstance(value, str):
                    continue
                full = path + (key,)
                db = _uri_path(value)
                if db is None and value.strip().lower().endswith(DB_SUFFIXES) and any(
                        LOG_KEY.search(str(k)) for k in full):
                    db = value.strip()
                if db is not None:
                    out.append(Db("config", keypath(full), value, db, cfg.location(mapping, key),
                                  per_job=bool(CONFIG_PER_JOB.search(value))))
    return out


def _code_dbs(job: Job) -> list:
    out = []
    for path, tree in trees_mentioning(job, SQLITE.encode()):
        rel = job.rel(path)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = dotted(node.func)
            if name.rsplit(".", 1)[-1] not in URI_CALLS:
                continue
            for arg in list(node.args) + [k.value for k in node.keywords]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    db = _uri_path(arg.value)
                    if db is not None:
                        out.append(Db("code", f"{name}(...)", arg.value, db,
                                      Location(rel, arg.lineno)))
    return out


# ---- who writes them ---------------------------------------------------------
def _tracking(job: Job) -> dict:
    """{"calls": [(rel, line, name, guarded)], "guards": {rel: has a rank test}}."""
    def scan() -> dict:
        calls: list = []
        guards: dict = {}
        for path, tree in trees_mentioning(job, b"mlflow", b"optuna", b"MLFlowLogger"):
            rel = job.rel(path)
            guards[rel] = any(isinstance(n, (ast.If, ast.IfExp)) and rank_conditional(n.test)
                              for n in ast.walk(tree))
            _walk(tree, rel, False, calls)
        return {"calls": calls, "guards": guards}
    return job.memo("sqlite_tracking", scan)


def _walk(node: ast.AST, rel: str, guarded: bool, calls: list) -> None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        guarded = guarded or any("rank_zero" in dotted(d.func if isinstance(d, ast.Call) else d)
                                 for d in node.decorator_list)
        body_guarded = guarded
        for st in node.body:   # `if rank != 0: return` guards what follows
            _walk(st, rel, body_guarded, calls)
            if isinstance(st, ast.If) and rank_conditional(st.test) and st.body and \
                    isinstance(st.body[-1], ast.Return):
                body_guarded = True
        return
    if isinstance(node, ast.If) and rank_conditional(node.test):
        _walk(node.test, rel, guarded, calls)
        for st in node.body + node.orelse:
            _walk(st, rel, True, calls)
        return
    if isinstance(node, ast.Call):
        name = dotted(node.func)
        last = name.rsplit(".", 1)[-1]
        if TRACKING.search(name) or last in RANK_ZERO_LOGGERS:
            calls.append((rel, node.lineno, name, guarded or last in RANK_ZERO_LOGGERS))
    for child in ast.iter_child_nodes(node):
        _walk(child, rel, guarded, calls)


def _writers(job: Job, script: Any, usage: dict) -> Writers:
    step = job.step(script)
    nodes = job.nodes(script) or 1
    rpn = step.ranks_per_node.value
    if rpn is None:
        return Writers(None, f"the ranks per node of {step.where} are unknown "
                             f"({step.ranks_per_node.source})")
    tasks = nodes * rpn
    if tasks <= 1:
        return Writers(False, "one task")
    what = f"{tasks} tasks ({nodes} node(s) × {rpn}, {step.ranks_per_node.source})"
    calls = usage["calls"]
    if not calls:
        return Writers(None, f"{what}; the doctor sees no tracking call in the code, so "
                             "it cannot tell whether only rank 0 writes")
    open_calls = [c for c in calls if not c[3]]
    if not open_calls:
        return Writers(False, f"{what}, but every tracking call is under a rank-0 guard")
    rel, line, name, _ = open_calls[0]
    if usage["guards"].get(rel):
        return Writers(None, f"{what}; `{name}` at {rel}:{line} is not directly under a "
                             "rank-0 guard, and the doctor does not follow whether its "
                             "callers are")
    return Writers(True, f"{what}, and `{name}` at {rel}:{line} runs on every rank: "
                         f"{rel} has no rank-0 guard")


# ---- the verdict ---------------------------------------------------------------
def _judge(job: Job, db: Db, script: Any, usage: dict) -> Optional[Finding]:
    step = job.step(script)
    env = step.env
    cwd = step.cwd if step.cwd and os.path.isabs(step.cwd) else None
    raw = db.path
    if cwd:
        raw = re.sub(r"\$\(pwd\)|\$\{?PWD\}?", cwd, raw)
    base = known_dir(job, raw, env, cwd)
    relative = not raw.startswith(("/", "~", "$"))
    if relative:
        raw = os.path.normpath(os.path.join(cwd or str(job.repo), raw))
    if base is None:
        return None   # $SOMEDIR/x.db with $SOMEDIR unknown: nothing to judge
    fs = filesystem(job, base, script)
    shared = fs.get("shared")
    if shared is False:
        return None
    array = script.get("array") if script is not None else None
    writers = _writers(job, script, usage)
    where_cwd = ("" if not relative else " (relative: under the step's working directory)"
                 if cwd else " (relative: under the submit directory, taken as the repo)")
    fs_name = fs.get("fstype") or "a shared filesystem"
    fs_text = (f"{fs_name} ({fs.get('mount') or fs['path']}, from {fs['source']})"
               if shared else "a filesystem the doctor cannot tell (" + (
                   f"{'static run' if job.static else 'the job is for another cluster'}: no "
                   "site profile and no recorded mount table names it"
                   if fs["source"] == "none" else f"{fs['source']} does not say") + ")")
    head = f"{db.name}={db.value} ({_origin(db)}): {raw}{where_cwd} is on {fs_text}"
    severity = Severity.WARNING
    if array is not None and not db.per_job:
        reason = (f"the script is a job array (#SBATCH --array={array.value}, line "
                  f"{array.line}) and the path has no per-job part: its tasks run at once "
                  "and open the same database")
        severity = Severity.ERROR
    elif writers.several:
        reason = f"several writers open it at once: {writers.why}"
        severity = Severity.ERROR
    elif writers.several is None:
        reason = f"several writers may open it at once: {writers.why}"
    elif not db.per_job:
        reason = (f"{writers.why}; the path has no per-job part, so jobs of this script "
                  "that run at the same time (a parameter scan) share it")
    else:
        reason = f"{writers.why}; SQLite's locks are unreliable on a network filesystem"
    if db.batch_node:
        reason += " (its per-node part is expanded once, by the batch step)"
    if severity is Severity.ERROR and not shared:
        severity = Severity.WARNING
        reason += f" (if {os.path.dirname(raw)} is on a network filesystem)"
    return Finding(f"{head}: {reason}", location=db.location or _script_loc(script),
                   severity=severity, fix=_fix_text(db), commands=_fix_commands(db, raw),
                   options=_fix_options(db, raw, script),
                   data={"source": db.source, "name": db.name, "value": db.value,
                         "path": raw, "per_job": db.per_job,
                         "writers": {"several": writers.several, "why": writers.why},
                         "array": array.value if array is not None else None,
                         "filesystem": {k: fs.get(k) for k in
                                        ("fstype", "shared", "mount", "source")}})


def _origin(db: Db) -> str:
    if db.source == "env":
        return f"set at {db.location.path}:{db.location.line}" if db.location \
            else "set in the login environment"
    return {"config": "config key", "code": "passed in the code"}[db.source]


def _script_loc(script: Any) -> Optional[Location]:
    return Location(script.rel, 1) if script is not None else None


def _fix_text(db: Db) -> str:
    where = {"env": "", "config": f" instead of the config key {db.name}",
             "code": f" (read it from {_var(db)} instead of the constant at "
                     f"{db.location.path}:{db.location.line})" if db.location else ""}
    return ("Use a per-job SQLite file on node-local storage, log from rank 0 only, and copy "
            "the file back at the end of the job script" + where[db.source] + "; or point "
            "the job at a tracking server (`mlflow server`, a PostgreSQL storage, Optuna's "
            "JournalStorage).")


def _var(db: Db) -> str:
    if db.source == "env":
        return db.name
    return "OPTUNA_STORAGE" if re.search(r"optuna|study|storage", db.name, re.I) \
        else "MLFLOW_TRACKING_URI"


def _fix_options(db: Db, path: str, script) -> tuple:
    """The job script's lines: the export before the training step, the copy after it."""
    export, _, copy = _fix_commands(db, path)
    rel = script.rel if script else None
    return (FixOption((add(rel, export, where="before the training step"),
                       add(rel, copy, where="after the training step"))),)


def _fix_commands(db: Db, path: str) -> tuple:
    var = _var(db)
    dest = os.path.dirname(path) or "$SLURM_SUBMIT_DIR"
    stem = os.path.splitext(os.path.basename(path))[0] or "mlruns"
    local = f"${{TMPDIR:-/tmp}}/{stem}-$SLURM_JOB_ID.db"
    quoted = dest if dest.startswith("$") else shlex.quote(dest.rstrip("/") + "/")
    return (f'export {var}="sqlite:///{local}"',
            "# ... the training step (srun python ...) ...",
            f'cp "{local}" {quoted}')
