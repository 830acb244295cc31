"""select → run (concurrently, each with its deadline) → waive → Report."""
from __future__ import annotations

import datetime as dt
from dataclasses import replace
import inspect
import os
import socket
import sys
import threading
import time
import traceback
from typing import Any, Callable, Iterable, Optional

from doctor import __version__
from doctor.job.context import Job
from doctor.errors import InputError
from doctor.job.closure import cap
from doctor.model import Finding, Pass, Report, Result, Severity, Skip, Status
from doctor.names import did_you_mean, selects, unknown_names, vocabulary
from doctor.registry import LIVE_NEEDS, CheckSpec, all_checks, checks_named, node_fact
from doctor import suppress
from doctor.secrets import secret_values
from doctor.settings import check_option

SMOKE_TAG = "smoke"
# How far the job's shared work may move a check's deadline on (see _join): at most this
# many times the check's own timeout, and never more than MAX_SHARED_S. Reading a big
# repo once takes seconds; shared work that never ends must not hold every check, and
# the run, with it: past this, the checks still waiting end as errors and the run goes on.
SHARED_FACTOR = 5
MAX_SHARED_S = 60.0

# gathered runs (--gather) carry these for every node, so `doctor diff` names the node
node_fact("packages")(lambda job: job.fact("packages"))
node_fact("env")(lambda job: job.fact("env"))


def select(specs: list, *, only: Iterable[str] = (), skip: Iterable[str] = (),
           select_: Iterable[str] = ("all",), ignore: Iterable[str] = (),
           static: bool = False, no_smoke: bool = False, where: Optional[str] = None) -> list:
    """The checks to run, in registry order. An item is a check id, a tag or a prefix of
    whole words of ids (doctor/names.py). An unknown item, or a selection that leaves no
    check to run, is an InputError (exit 2): a run of nothing would say PASS.
    `where`: the settings file `select_` and `ignore` come from."""
    only, skip, select_, ignore = list(only), list(skip), list(select_), list(ignore)
    said = {"only": f"--select {','.join(only)}", "skip": f"--ignore {','.join(skip)}",
            "select": "every check" if select_ == ["all"] else
                      f"{where or 'settings'}: select: [{', '.join(select_)}]",
            "ignore": f"{where or 'settings'}: ignore: [{', '.join(ignore)}]"}
    for source, items in (("--select", only), ("--ignore", skip),
                          (f"{where or 'settings'}: select", select_),
                          (f"{where or 'settings'}: ignore", ignore)):
        for item in unknown_names(items, specs):
            raise InputError(f"{source}: unknown check id or tag {item!r}"
                             f"{did_you_mean(item, vocabulary(specs))} (see `doctor list`)")

    def matches(spec: CheckSpec, items: Iterable[str]) -> bool:
        return any(selects(i, spec) for i in items)

    chose = said["only"] if only else said["select"]
    chosen = [s for s in specs if matches(s, only or select_)]
    if not chosen:
        raise InputError(f"{chose} selects no check")
    left = [s for s in chosen if not matches(s, skip + ignore)]
    if not left:
        dropped = " and ".join(said[k] for k, v in (("skip", skip), ("ignore", ignore)) if v)
        raise InputError(f"{chose} and {dropped} leave no check to run")
    chosen = left
    if static:
        chosen = [s for s in chosen if s.static]
        if not chosen:
            raise InputError(f"--static runs only the checks that need no live node, and "
                             f"{chose} selects none of them ({_needs(left)})")
    if no_smoke or static:
        chosen = [s for s in chosen if SMOKE_TAG not in s.tags]
        if not chosen:
            what = "the DDP smoke" if [s.id for s in left] == ["ddp-smoke"] else "smokes"
            raise InputError(f"{chose} selects only {what}, and this run runs no "
                             "smoke (--no-smoke, `doctor fix`, or `doctor sbatch` without "
                             "--smoke)")
    return chosen


def _needs(specs: list) -> str:
    shown = [f"{s.id} needs {', '.join(n for n in s.needs if n in LIVE_NEEDS)}"
             for s in specs[:3]]
    return "; ".join(shown) + (f"; and {len(specs) - 3} more" if len(specs) > 3 else "")


def check_settings(job: Job, specs: list) -> None:
    """Settings that name checks or options must name real ones (exit 2 otherwise)."""
    by_id = {s.id: s for s in specs}
    s = job.settings
    for section in ("severity", "options"):
        for check_id in getattr(s, section):
            if check_id not in by_id:
                raise InputError(f"{s.path}: {section}: unknown check id {check_id!r}"
                                 + did_you_mean(check_id, by_id))
    for w in s.waivers:
        if w.check not in by_id:
            raise InputError(f"{s.path}: waivers: unknown check id {w.check!r}"
                             + did_you_mean(w.check, by_id))
    suppress.check_per_file_ignores(s, specs)
    for check_id, opts in s.options.items():
        known = by_id[check_id].options
        for name, value in opts.items():
            if name not in known:
                raise InputError(f"{s.path}: options.{check_id}: unknown option {name!r}"
                                 + (f" (known: {', '.join(sorted(known))})" if known else
                                    " (this check has no options)"))
            _check_type(check_id, name, value, known[name], s.path)
            check_option(check_id, name, value, known[name], s.path)
            why = by_id[check_id].validate(name, value) if by_id[check_id].validate else None
            if why:
                raise InputError(f"{s.path}: options.{check_id}.{name}: {why}")


def _check_type(check_id: str, name: str, value: Any, default: Any, where: Any) -> None:
    if default is None or value is None:
        return
    ok = (isinstance(value, bool) if isinstance(default, bool)
          else isinstance(value, (int, float)) and not isinstance(value, bool)
          if isinstance(default, (int, float))
          else isinstance(value, (list, tuple)) if isinstance(default, (list, tuple))
          else isinstance(value, type(default)))
    if not ok:
        raise InputError(f"{where}: options.{check_id}.{name} must be "
                         f"{type(default).__name__}, not {type(value).__name__}")


def _normalize(out: Any) -> list:
    if out is None:
        return []
    if isinstance(out, (str, Finding)):
        out = [out]
    findings = []
    for item in out:
        findings.append(Finding(item) if isinstance(item, str) else item)
        if not isinstance(findings[-1], Finding):
            raise TypeError(f"a check returned {type(item).__name__}, not a Finding")
    return findings


def run_one(spec: CheckSpec, job: Job) -> Result:
    """Run one check in the calling thread (no deadline): the pure part of the runner."""
    kwargs = dict(job.settings.options.get(spec.id, {}))
    start = time.monotonic()
    try:
        out = spec.func(job, **kwargs)
        findings = _normalize(out if not inspect.isgenerator(out) else list(out))
        status, reason = (Status.FAIL if findings else Status.PASS), None
    except Skip as exc:
        findings, status, reason = [], Status.SKIP, exc.reason
    except Pass as exc:   # a pass that says what it does not prove
        findings, status, reason = [], Status.PASS, exc.reason
    except Exception as exc:
        findings, status = [], Status.ERROR
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        reason = (f"{type(exc).__name__}: {exc} "
                  f"(at {os.path.basename(frame.filename)}:{frame.lineno})")
    result = _result(spec, job, status, findings, reason, time.monotonic() - start)
    result.steps = job.judged_steps(spec.id)
    return result


def _result(spec: CheckSpec, job: Job, status: Status, findings: list,
            reason: Optional[str], duration: float) -> Result:
    override = job.settings.severity.get(spec.id)
    # a finding in code that no step of the job runs is at most a warning (closure.cap);
    # the checks of the repository itself (git, rsync: tag "repo") judge every file alike,
    # and what the smoke saw fail, it ran: the file is the job's
    if "repo" not in spec.tags and "smoke" not in spec.needs:
        findings = cap(job, findings, spec.severity)
    # every finding carries its effective severity (the report shows it per finding)
    findings = [replace(f, severity=override or f.severity or spec.severity) for f in findings]
    # what an inline comment, per-file-ignores or the baseline accepts leaves the findings
    # for `suppressed` (doctor/suppress.py); a check left with none passes
    findings, suppressed = suppress.split(job, spec, findings)
    if status is Status.FAIL and not findings:
        status = Status.PASS
    if override is not None:
        severity = override
    elif findings:
        severity = max(f.severity or spec.severity for f in findings)
    else:
        severity = spec.severity
    return Result(spec.id, spec.title, severity, status, findings, reason, duration,
                  suppressed=suppressed)


def run_checks(job: Job, specs: list, *, fail_on: Severity = Severity.ERROR,
               on_done: Optional[Callable[[Result], None]] = None) -> Report:
    """Run the checks concurrently, each bounded by its own deadline."""
    started = time.time()
    t0 = time.monotonic()
    today = dt.date.today()
    waivers = {w.check: w for w in job.settings.waivers if w.expires >= today}
    results: dict = {}
    threads: dict = {}
    job.fact("python")
    try:
        for spec in specs:
            if spec.id in waivers:
                w = waivers[spec.id]
                results[spec.id] = _result(spec, job, Status.SKIP, [],
                                           f"waived: {w.reason} (until {w.expires})", 0.0)
                continue
            box: dict = {}
            t = threading.Thread(target=lambda s=spec, b=box: b.setdefault("r", run_one(s, job)),
                                 name=f"check:{spec.id}", daemon=True)
            threads[spec.id] = (t, box, spec.timeout_for(job), time.monotonic(),
                                job.busy_seconds())
            t.start()
        for check_id, (t, box, timeout, begun, busy) in threads.items():
            shared = _join(t, job, begun, timeout, busy)
            if "r" in box:
                results[check_id] = box["r"]
            else:
                spec = next(s for s in specs if s.id == check_id)
                more = (f" (and {shared:g}s more, the most it waits for work shared with "
                        "other checks)" if shared >= _most_shared(timeout) else "")
                results[check_id] = _result(spec, job, Status.ERROR, [],
                                            f"timed out after {timeout:g}s{more}",
                                            time.monotonic() - begun)
            if on_done:
                on_done(results[check_id])
        if not job.static:  # what `doctor diff` compares between runs (docs/diff.md)
            for name in ("packages", "env", "script_env"):
                try:
                    job.fact(name)
                except Exception:  # a fact it could not read is left out, never a crash
                    pass
    finally:
        job.cleanup()
        zygote = sys.modules.get("doctor.smoke.zygote")
        if zygote is not None:   # the smokes' torch process ends with the run that used it
            zygote.close()
    ordered = [results[s.id] for s in specs]
    ordered += _expired_waivers(job, today)
    ordered += suppress.invalid_comments(job)
    if job.in_job and job.has_fact("slurm"):
        job.fact("slurm")  # in-job, the report always carries the Slurm view (issue 7)
    report = Report(
        started_at=dt.datetime.fromtimestamp(started, dt.timezone.utc)
        .strftime("%Y-%m-%dT%H:%M:%SZ"),
        duration_s=time.monotonic() - t0,
        host=host_info(job),
        inputs={"repo": str(job.repo), "configs": [c.rel for c in job.configs_read],
                "sbatch": [s.rel for s in job.scripts],
                "caches": [str(c) for c in job.caches],
                "settings": job.settings.path},
        results=ordered, facts=job.facts_gathered(), fail_on=fail_on, version=__version__,
        secrets=secret_values(job))
    return report


def _join(t: threading.Thread, job: Job, begun: float, timeout: float, busy: float) -> float:
    """Wait for a check until its deadline, which is for hangs: the time the job's shared
    work (a 100k-line script's steps, a 100k-file repo's sources, read once for every
    check) runs in any thread after the check began moves its deadline on by as much,
    up to SHARED_FACTOR times its timeout (MAX_SHARED_S at most). The check may be
    waiting for it, and its own code runs more slowly meanwhile, since the threads share
    one interpreter lock: a large repo is not a hang, but shared work without end is.
    Returns the seconds of shared work the deadline moved on by."""
    most = _most_shared(timeout)
    shared = 0.0
    while t.is_alive():
        shared = min(job.busy_seconds() - busy, most)
        left = begun + timeout + shared - time.monotonic()
        if left <= 0:
            break
        t.join(min(left, 0.5))
    return shared


def _most_shared(timeout: float) -> float:
    return min(SHARED_FACTOR * timeout, MAX_SHARED_S)


def _expired_waivers(job: Job, today: dt.date) -> list:
    out = []
    for w in job.settings.waivers:
        if w.expires < today:
            out.append(Result(
                "waiver-expired", "A waiver in the settings has expired", Severity.WARNING,
                Status.FAIL, [Finding(
                    f"the waiver for {w.check} expired on {w.expires} ({w.reason}); "
                    f"it is ignored and {w.check} ran",
                    fix="Fix the problem, or renew the waiver with a new `expires:` date.",
                    data={"check": w.check, "expires": str(w.expires), "reason": w.reason})]))
    return out


def host_info(job: Job) -> dict:
    env = job.login_env
    return {"hostname": socket.gethostname(),
            "slurm_job_id": env.get("SLURM_JOB_ID"),
            "slurm_node": env.get("SLURMD_NODENAME")}


def chosen_checks(job: Job, *, only: Iterable[str] = (), skip: Iterable[str] = (),
                  static: bool = False, no_smoke: bool = False) -> list:
    """The registry's checks this run selects, after validating the settings against them."""
    specs = _named_specs(job, list(only), list(skip)) or all_checks()
    check_settings(job, specs)
    job.smoke = not (static or no_smoke)   # a check that runs repo code asks this
    chosen = select(specs, only=only, skip=skip, select_=job.settings.select,
                    ignore=job.settings.ignore, static=static, no_smoke=no_smoke,
                    where=job.settings.path)
    waived = {w.check for w in job.settings.waivers if not w.expired}
    ids = {s.id for s in chosen if s.id not in waived}
    # the checks that start the smokes' torch process, with the repo on its path: only in
    # such a run may the torch probe fork from it (a run of other checks runs no repo code)
    job.smokes_run = job.smoke and ("ddp-smoke" in ids or bool(job.data) and "data-smoke" in ids
                                    or bool(job.model) and "gpu-memory-estimate" in ids)
    if job.model and any("smoke" in s.needs and s.id not in waived for s in chosen):
        from doctor.smoke.factory import check_factory

        check_factory(job)   # a typo'd --model is exit 2 now, not a smoke failure later
    if job.data and any(s.id in ("data-smoke", "gpu-memory-estimate") and s.id not in waived
                        for s in chosen):   # (the estimate reads the loader's first batch)
        from doctor.smoke.factory import check_factory

        check_factory(job, job.data, "--data", "smoke.data")
    return chosen


def _named_specs(job: Job, only: list, skip: list) -> Optional[list]:
    """The specs of the checks `--only` names and of those the settings name, when
    every one is a built-in check id (only their modules are imported); None otherwise:
    a tag, an `ignore`, a check pack's id need the whole registry."""
    s = job.settings
    if not only or list(s.select) != ["all"] or s.ignore or s.per_file_ignores:
        return None
    return checks_named({*only, *skip, *s.severity, *s.options, *(w.check for w in s.waivers)})


def run(job: Job, *, only: Iterable[str] = (), skip: Iterable[str] = (),
        static: bool = False, no_smoke: bool = False, fail_on: Severity = Severity.ERROR,
        on_done: Optional[Callable[[Result], None]] = None) -> Report:
    chosen = chosen_checks(job, only=only, skip=skip, static=static, no_smoke=no_smoke)
    return run_checks(job, chosen, fail_on=fail_on, on_done=on_done)
