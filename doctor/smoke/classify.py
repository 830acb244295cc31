"""What happened to each rank, which failure is the root cause, and what to do.

Input: the launcher's `SmokeRun` (exit codes, who the doctor had to stop, the
ranks' events and faulthandler dumps). Output: one `RankFailure` per failing
rank, `kind` ∈ crash, exception, hang, desync, timeout, and the facts for the
report. Pure: no processes, no torch.
"""
from __future__ import annotations

import os
import re
import signal
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from doctor.smoke.launcher import DOCTOR_ROOT, RankOutcome, SmokeRun
from doctor import fs

# A rank that failed with one of these only gave up on a peer (it is a
# consequence when another rank failed for a reason of its own).
PEER_ERRORS = ("connection closed by peer", "connection reset by peer", "timed out",
               "timeout", "broken pipe", "distnetworkerror", "distbackenderror",
               "failed to recv", "failed to send", "connection refused",
               "monitoredbarrier", "econnreset", "epipe")
NCCL_WATCHDOG = ("watchdog caught collective operation timeout",
                 "some nccl operations have failed or timed out")
# torch.distributed collectives (the names collective-on-error-path looks for): a rank
# whose own code called one and waits there is the one out of step with its peers.
COLLECTIVES = ("barrier", "all_reduce", "broadcast", "scatter", "gather", "monitored_barrier",
               "broadcast_object_list")
COLLECTIVE_PREFIXES = ("all_gather", "reduce")
FRAME_RE = re.compile(r'^\s+File "(?P<file>.*)", line (?P<line>\d+) in (?P<func>.*)$')
THREAD_RE = re.compile(r"^(?:Current thread|Thread) (?P<id>0x[0-9a-fA-F]+)")
MAX_FRAMES = 25
_LIBRARY_DIRS = tuple({os.path.realpath(p) for p in (
    sysconfig.get_paths().get("stdlib", ""), sysconfig.get_paths().get("platstdlib", ""),
    sysconfig.get_paths().get("purelib", ""), sysconfig.get_paths().get("platlib", ""),
    os.path.join(DOCTOR_ROOT, "doctor")) if p})


@dataclass
class Frame:
    file: str
    line: int
    func: str

    def text(self, repo: Path) -> str:
        return f"{_rel(self.file, repo)}:{self.line} in {self.func}"


@dataclass
class RankFailure:
    rank: int
    kind: str
    message: str
    fix: str
    root_cause: bool = True
    signal: Optional[str] = None
    exit_code: Optional[int] = None
    stack: Optional[str] = None
    extra: dict = field(default_factory=dict)
    frame: Optional[Frame] = None   # the user's innermost frame, for the finding's location

    def data(self) -> dict:
        d = {"rank": self.rank, "kind": self.kind, "signal": self.signal,
             "exit_code": self.exit_code, "stack": self.stack, "root_cause": self.root_cause}
        d.update(self.extra)
        return d


def _rel(path: str, repo: Path) -> str:
    """Repo-relative for the user's files, package-relative for libraries and the doctor."""
    try:
        return str(Path(fs.realpath(path)).relative_to(repo))
    except ValueError:
        pass
    for marker in ("site-packages" + os.sep, "dist-packages" + os.sep, DOCTOR_ROOT + os.sep):
        if marker in path:
            return path.split(marker, 1)[1]
    return path


def is_user_frame(path: str, repo: Path) -> bool:
    """The user's code: the repo, or anything that is neither a library nor the doctor."""
    if path.startswith("<"):
        return False
    real = os.path.realpath(path)
    if real.startswith(str(repo) + os.sep):
        return "site-packages" not in real
    return not real.startswith(_LIBRARY_DIRS) and "-packages" + os.sep not in real


def parse_dump(text: str, thread_id: Optional[int]) -> list:
    """The main thread's frames (most recent first) from faulthandler's output; the last
    dump in the file wins. Without the thread id: the first thread of the last dump."""
    blocks: list = []
    current: Optional[list] = None
    for line in text.splitlines():
        m = THREAD_RE.match(line)
        if m:
            current = []
            blocks.append((int(m.group("id"), 16), current))
            continue
        f = FRAME_RE.match(line)
        if f and current is not None:
            current.append(Frame(f.group("file"), int(f.group("line")), f.group("func")))
    if not blocks:
        return []
    if thread_id is not None:
        mine = [frames for tid, frames in blocks if tid == thread_id]
        if mine:
            return mine[-1]
    return blocks[-1][1]


def stack_text(frames: list, repo: Path, tail: str = "") -> str:
    """Most recent call first, the user's own frames marked with `>`."""
    lines = [("> " if is_user_frame(f.file, repo) else "  ") + f.text(repo)
             for f in frames[:MAX_FRAMES]]
    if len(frames) > MAX_FRAMES:
        lines.append(f"  ... {len(frames) - MAX_FRAMES} more")
    if tail:
        lines.append(tail)
    return "\n".join(lines)


def signal_name(rc: Optional[int]) -> Optional[str]:
    if rc is None or rc >= 0:
        return None
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return f"signal {-rc}"


def where(o: RankOutcome) -> str:
    """The phase the rank was in: import, init, model, ddp, step N, shutdown."""
    exc = o.event("exception")
    if exc:
        return exc.get("phase", "?")
    done = [e["phase"] for e in o.events if e.get("event") == "phase"]
    steps = [e["step"] for e in o.events if e.get("event") == "step"]
    if o.event("done"):
        return "shutdown"
    if steps:
        return f"step {steps[-1] + 1}"
    order = ["import", "init", "model", "ddp"]
    if done:
        nxt = order.index(done[-1]) + 1 if done[-1] in order else len(order)
        return order[nxt] if nxt < len(order) else "step 1"
    return "import" if o.event("start") else "startup"


PHASE_WORDS = {"import": "importing torch", "setup": "choosing the backend and device",
               "init": "in init_process_group",
               "model": "while building the model", "ddp": "while wrapping the model in DDP",
               "shutdown": "in destroy_process_group", "startup": "before it started"}


def phase_words(phase: str) -> str:
    if phase.startswith("step"):
        return f"in {phase} (forward/backward/optimizer)"
    return PHASE_WORDS.get(phase, phase)


def _main_thread(o: RankOutcome) -> Optional[int]:
    start = o.event("start")
    return start.get("main_thread") if start else None


def _first_user_frame(frames: list, repo: Path) -> Optional[Frame]:
    return next((f for f in frames if is_user_frame(f.file, repo)), None)


def user_collective(frames: list, repo: Path) -> Optional[str]:
    """The torch.distributed collective the user's innermost frame called, when the rank
    waits (or gave up) inside it: `barrier` for user → c10d wrapper → barrier."""
    found = None
    for f in frames:
        if is_user_frame(f.file, repo):
            return found
        path = f.file.replace(os.sep, "/")
        if "torch/distributed/" in path and (
                f.func in COLLECTIVES or f.func.startswith(COLLECTIVE_PREFIXES)):
            found = f.func   # the outermost one: broadcast_object_list, not its broadcast
    return None


def _exception_frames(exc: dict) -> list:
    """Most recent call first, like faulthandler's."""
    return [Frame(f[0], int(f[1]), f[2]) for f in reversed(exc.get("frames") or [])]


def classify(run: SmokeRun) -> list:
    """One RankFailure per failing rank; root causes first."""
    repo = Path(run.plan.repo).resolve()
    failures = [f for f in (_classify_rank(o, repo) for o in run.ranks) if f]
    if not failures:
        failures = _desync(run)
    _mark_root_causes(failures, run)
    failures.sort(key=lambda f: (not f.root_cause, f.rank))
    return failures


def _classify_rank(o: RankOutcome, repo: Path) -> Optional[RankFailure]:
    rc, phase = o.returncode, where(o)
    exc = o.event("exception")
    if o.stopped:
        frames = parse_dump(o.usr1_dump or o.later_dump, _main_thread(o))
        user = _first_user_frame(frames, repo)
        callers = [f for f in frames if is_user_frame(f.file, repo)][1:3]
        via = "".join(f" ← {c.func} ({_rel(c.file, repo)}:{c.line})" for c in callers)
        coll = user_collective(frames, repo)
        stuck = (f"stuck in {user.func} ({_rel(user.file, repo)}:{user.line}){via}" if user
                 else f"waiting in {frames[0].func} ({_rel(frames[0].file, repo)}:"
                      f"{frames[0].line})" if frames else "no stack was dumped")
        if coll and user:
            stuck = f"waiting in {coll}() called by {stuck[len('stuck in '):]}"
        return RankFailure(
            o.rank, "hang", f"rank {o.rank}: hang — {stuck}, {phase_words(phase)}",
            fix="", signal=None, exit_code=rc, stack=stack_text(frames, repo) or None,
            extra={"phase": phase, "stopped_by_doctor": o.stopped,
                   "stuck_in": user.func if user else None,
                   "in_user_code": user is not None, **({"collective": coll} if coll else {})},
            frame=user)
    if rc is not None and rc < 0:
        frames = parse_dump(o.fault_dump, _main_thread(o))
        user = _first_user_frame(frames, repo)
        sig = signal_name(rc)
        at = f" in {user.func} ({_rel(user.file, repo)}:{user.line})" if user else ""
        # NCCL's watchdog aborts (SIGABRT) the rank whose collective timed out: it gave
        # up waiting, like gloo's "Timed out waiting" exception
        watchdog = any(w in o.output.lower() for w in NCCL_WATCHDOG)
        coll = user_collective(frames, repo) if watchdog else None
        return RankFailure(
            o.rank, "timeout" if watchdog else "crash",
            f"rank {o.rank}: " + ("NCCL watchdog timeout, aborted with " if watchdog else
                                  "crashed with ") +
            f"{sig} (exit code {rc}) {phase_words(phase)}{at}", fix="", signal=sig, exit_code=rc,
            stack=stack_text(frames, repo) or None,
            extra={"phase": phase, "stuck_in": user.func if user else None,
                   **({"collective": coll} if coll else {})}, frame=user)
    if exc:
        frames = _exception_frames(exc)
        msg = exc.get("message", "")
        head = f"{exc.get('type')}: {msg}"
        # raised inside torch while talking to a peer (a user's own TimeoutError is not)
        peer = any(p in head.lower() for p in PEER_ERRORS) and not (
            frames and is_user_frame(frames[0].file, repo))
        kind = "timeout" if peer else "exception"
        user = _first_user_frame(frames, repo)
        at = f" in {user.func} ({_rel(user.file, repo)}:{user.line})" if user else ""
        unused = _unused(msg)
        text = re.sub(r"^\[[^\]]*\]\s*", "", (msg.splitlines() or [""])[0])  # gloo's [file:line]
        text = text if len(text) <= 200 else text[:200] + "…"
        if unused is not None:
            text = ("DDP found parameters that got no gradient in the previous step"
                    + (f": {', '.join(unused)}" if unused else ""))
        coll = user_collective(frames, repo) if peer else None
        verb = (f"gave up waiting in {coll}()" if coll else
                "gave up waiting for its peers" if peer else "raised")
        return RankFailure(
            o.rank, kind,
            f"rank {o.rank}: {verb} {phase_words(phase)}{at}: {exc.get('type')}: {text}",
            fix="", exit_code=rc, stack=stack_text(frames[:12], repo, tail=head[-1500:]),
            extra={"phase": phase, "exception": exc.get("type"),
                   "unused_parameters": unused, **({"collective": coll} if coll else {})},
            frame=user)
    if rc != 0 or not o.event("done"):
        return RankFailure(
            o.rank, "crash", f"rank {o.rank}: exited with code {rc} {phase_words(phase)} "
            "without a Python exception (os._exit or exit() in native code?)",
            fix="", exit_code=rc, stack=(o.output.strip()[-1500:] or None),
            extra={"phase": phase})
    return None


def _unused(message: str) -> Optional[list]:
    m = re.search(r"Parameters which did not receive grad for rank \d+: (.*)", message)
    if m:
        return [p.strip() for p in m.group(1).split(",") if p.strip()]
    if "parameters that were not used in producing loss" in message:
        return []
    return None


def _desync(run: SmokeRun) -> list:
    """Parameters that differ from rank 0's after a step (DDP makes rank 0 the reference)."""
    def sums(o: RankOutcome) -> dict:
        return {e["step"]: e.get("checksums", {}) for e in o.events if e.get("event") == "step"}

    ref = sums(run.ranks[0])
    out = []
    for o in run.ranks[1:]:
        mine = sums(o)
        for step in sorted(ref):
            differ = [name for name, (s, q) in ref[step].items()
                      if name in mine.get(step, {}) and not (
                          _close(s, mine[step][name][0]) and _close(q, mine[step][name][1]))]
            if differ:
                names = ", ".join(differ[:8]) + (" ..." if len(differ) > 8 else "")
                out.append(RankFailure(
                    o.rank, "desync", f"rank {o.rank}: desync — after step {step} its "
                    f"parameters differ from rank 0's: {names}", fix="",
                    exit_code=o.returncode, extra={"step": step, "parameters": differ}))
                break
    return out


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * (1.0 + abs(a) + abs(b))


def _mark_root_causes(failures: list, run: SmokeRun) -> None:
    """Root causes: crashes, exceptions of their own, desyncs, ranks stuck in user code.
    Consequences: ranks that gave up waiting, or that the doctor stopped while they
    waited inside torch. A rank that waits in a collective its own code called, where
    the other ranks are not all in that same call, is out of step: a root cause when no
    rank crashed or raised for a reason of its own. With nothing but consequences, the
    earliest failure is the cause."""
    in_coll = [f for f in failures if f.extra.get("collective") and f.frame is not None]
    spots = {(f.extra["collective"], f.frame.file, f.frame.line) for f in in_coll}
    out_of_step = bool(in_coll) and (len(spots) > 1 or len(in_coll) < len(run.ranks))
    if not out_of_step:   # every rank waits in the same call: none of them is out of step
        for f in in_coll:
            del f.extra["collective"]

    def own(f: RankFailure) -> bool:
        if f.kind in ("crash", "exception", "desync"):
            return True
        if f.extra.get("collective"):
            return out_of_step
        return f.kind == "hang" and f.extra.get("in_user_code", False)

    causes = [f for f in failures if own(f)]
    if any(f.kind in ("crash", "exception", "desync") for f in causes):
        # a rank that failed for a reason of its own: the ones in a collective waited for it
        causes = [f for f in causes if not f.extra.get("collective")]
    # A rank stopped in user code after another rank failed for a reason of its own
    # was only slower, not stuck.
    primary = [f for f in causes if not f.extra.get("stopped_by_doctor")]
    if primary:
        causes = primary
    if not causes and failures:
        ended = {o.rank: (o.ended_at or float("inf")) for o in run.ranks}
        first = min(ended[f.rank] for f in failures)
        causes = [f for f in failures if ended[f.rank] == first]
    names = ", ".join(f"rank {f.rank}'s {f.kind}" for f in causes)
    for f in failures:
        f.root_cause = f in causes
        if not f.root_cause:
            f.message = f"{f.message} — consequence of {names}"
        f.fix = fix_for(f, names)


def fix_for(f: RankFailure, causes: str) -> str:
    if not f.root_cause:
        return (f"Fix {causes} first: this rank only failed because it waited for that "
                "peer (in a real job it would wait until the process-group timeout, "
                "10 min for NCCL, 30 min for gloo, before anything is reported).")
    where_ = f" in {f.extra['stuck_in']}" if f.extra.get("stuck_in") else ""
    if f.extra.get("collective"):
        return (f"This rank waits in {f.extra['collective']}(){where_}, which the other "
                "ranks do not reach at this point: every rank must run the same collectives "
                "in the same order. Call it on every rank, or only on the success path; on "
                "an error do not synchronise, call dist.destroy_process_group() (or abort) "
                "and re-raise; set TORCH_NCCL_ASYNC_ERROR_HANDLING=1 and an explicit "
                "init_process_group timeout. `doctor run --static --only "
                "collective-on-error-path` finds these forms without running anything.")
    if f.kind == "crash":
        return (f"A native crash{where_} {phase_words(f.extra.get('phase', ''))}: run the "
                "factory in a single process under `python -X faulthandler`, then under gdb "
                "(`gdb -ex run --args python ...`) for the C stack; a crash only under DDP "
                "often comes from a CUDA/HIP or native library touched before "
                "init_process_group or from several ranks sharing one device.")
    if f.kind == "exception":
        unused = f.extra.get("unused_parameters")
        if unused is not None:
            names = f" ({', '.join(unused)})" if unused else ""
            return ("Some parameters got no gradient" + names + ": make every parameter "
                    "take part in the loss, freeze them (requires_grad=False) or pass "
                    "find_unused_parameters=True to DistributedDataParallel.")
        # the table shows no finding's data: name where the traceback is to be read
        return (f"Fix the exception{where_}; its traceback is the finding's `stack` in the "
                "JSON report (`--format json`, or `--json FILE`). The smoke runs "
                "the same code as your job's first steps, so the job would fail the same way.")
    if f.kind == "hang":
        return (f"This rank never reached the collective{where_}: every rank must run the "
                "same collectives in the same order. Build lazily-initialised state "
                "(caches, masks, tables) on every rank, or before wrapping the model in DDP "
                "and followed by a barrier — never on rank 0 only inside forward.")
    if f.kind == "desync":
        return ("Parameters changed outside the optimizer on one rank: look for rank-dependent "
                "code in forward, in-place updates under torch.no_grad(), or parameters "
                "loaded/re-initialised after DDP was built.")
    return ("The rank gave up waiting for its peers: check MASTER_ADDR/MASTER_PORT reachability "
            "and that every rank runs the same steps; raise smoke.timeout_s if the first step "
            "is legitimately slow.")


def smoke_facts(run: SmokeRun) -> dict:
    """Backend, devices and per-rank timings for the report's facts."""
    ranks = []
    backend, torch_version = None, None
    for o in run.ranks:
        be = o.event("backend") or {}
        backend = backend or be.get("backend")
        phases = o.phases()
        steps = [e for e in o.events if e.get("event") == "step"]
        start = o.event("start") or {}
        imp: dict = next((e for e in o.events if e.get("phase") == "import"
                    and e.get("event") == "phase"), {})
        torch_version = torch_version or imp.get("torch")
        ranks.append({
            "rank": o.rank, "pid": o.pid, "exit_code": o.returncode,
            "device": be.get("device"),
            "startup_s": _r(start.get("t", 0) - start.get("launched", 0)) if start else None,
            "import_s": _r(phases.get("import")), "init_s": _r(phases.get("init")),
            "model_s": _r(phases.get("model")), "ddp_s": _r(phases.get("ddp")),
            "first_step_s": _r(steps[0]["seconds"]) if steps else None,
            "steps": len(steps),
            "total_s": _r(o.ended_at - run.started_at) if o.ended_at else None,
        })
    return {"backend": backend, "world_size": run.plan.world_size, "torch": torch_version,
            "devices": [r["device"] for r in ranks], "port": run.port,
            "timeout_s": run.plan.timeout_s, "pg_timeout_s": run.plan.pg_timeout_s,
            "duration_s": _r(run.duration_s), "deadline_hit": run.deadline_hit,
            "attempts": run.attempts, "ranks": ranks}


def _r(x: Optional[float]) -> Optional[float]:
    return None if x is None else round(float(x), 3)
