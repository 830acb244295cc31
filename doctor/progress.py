"""The progress line on a terminal (stderr): what is running now, and for how long.

The runner starts every check at once, each in a thread named `check:ID`
(doctor/runner.py), and reports them in registry order once each has ended (`on_done`);
shared work and a slow check say what they are doing through `Job.say` ("ddp-smoke: 2
ranks, ..."). A thread redraws the line every half second from the first second on, so a
minute of smoke is a line counting its seconds, not a minute of silence; the line is
cleared before the report. Never on a pipe or a file: there it would only be noise.
"""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Optional, TextIO

TICK_S = 0.5
QUIET_S = 1.0   # a run shorter than this shows no line at all


class Progress:
    """`on_done` for the runner (a result at a time), `say` for Job.say, `finish()` once
    the run is over."""

    def __init__(self, stream: Optional[TextIO] = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.t0 = time.monotonic()
        self.done: set = set()
        self.last_done = self.t0
        self.errors = self.warnings = 0
        # owner → (message, when): each check's latest Job.say, so that two that run at
        # once (the DDP smoke beside the memory estimate) are both on the line, oldest first
        self.said: dict = {}
        self.drawn = False
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.ticker = threading.Thread(target=self._tick, name="doctor-progress", daemon=True)
        self.ticker.start()

    def __call__(self, result) -> None:
        with self.lock:
            self.done.add(result.id)
            self.last_done = time.monotonic()
            if result.status.value == "fail":   # a warning is a warning here too
                if str(result.severity) == "error":
                    self.errors += 1
                else:
                    self.warnings += 1
        self._draw()

    def say(self, message: str) -> None:
        with self.lock:
            owner = message.split(":", 1)[0]
            if owner not in self.said:
                self.said[owner] = (message, time.monotonic())
            else:
                self.said[owner] = (message, self.said[owner][1])
        self._draw()

    def finish(self) -> None:
        self.stop.set()
        self.ticker.join()
        with self.lock:
            if self.drawn:
                self._write("\r\033[K")
                self.drawn = False

    def _tick(self) -> None:
        while not self.stop.wait(TICK_S):
            self._draw()

    def line(self, now: float) -> str:
        """`  12 done (1 error, 2 warnings) · ddp-smoke: 2 ranks, 4 s…`"""
        running = [t.name[6:] for t in threading.enumerate()
                   if t.name.startswith("check:") and t.name[6:] not in self.done]
        tally = [f"{n} {w}{'s' * (n != 1)}" for n, w in ((self.errors, "error"),
                                                         (self.warnings, "warning")) if n]
        head = f"{len(self.done)} done" + (f" ({', '.join(tally)})" if tally else "")
        own = [(m, t) for o, (m, t) in self.said.items() if o in running]
        shared = [(m, t) for o, (m, t) in self.said.items()
                  if o not in running and o not in self.done and t >= self.last_done]
        if own:   # the running checks' own words ("ddp-smoke: 2 ranks, ...")
            return f"  {head} · " + " · ".join(f"{m}, {now - t:.0f} s…" for m, t in own)
        if shared:   # the job's shared work ("reading 90,000 Python sources")
            what, since = shared[-1]
        elif running:
            more = f" (+{len(running) - 2})" if len(running) > 2 else ""
            what, since = "running " + ", ".join(running[:2]) + more, self.t0
        else:
            what, since = "finishing", self.last_done
        return f"  {head} · {what}, {now - since:.0f} s…"

    def _draw(self) -> None:
        with self.lock:
            now = time.monotonic()
            if now - self.t0 < QUIET_S or self.stop.is_set():
                return
            try:
                width = os.get_terminal_size(self.stream.fileno()).columns
            except (OSError, ValueError, AttributeError):
                width = 80
            text = self.line(now)
            if len(text) >= width:
                text = text[:max(width - 2, 1)] + "…"
            self._write("\r\033[K" + text)
            self.drawn = True

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            pass
