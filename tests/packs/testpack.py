"""A third-party check pack used by the engine tests (loaded via entry points)."""
import time

from doctor import Finding, Location, Severity, Skip, check

DOC = """{summary}

## Why it matters
Test-only.

## How to fix
Nothing to fix.
"""


def _doc(summary):
    def deco(f):
        f.__doc__ = DOC.format(summary=summary)
        return f
    return deco


@check("test-pass", title="always passes", severity="error", needs=("repo",))
@_doc("Always passes.")
def test_pass(job):
    return None


@check("test-fail", title="always fails", severity="error", tags=("testfail",), needs=("repo",))
@_doc("Always fails.")
def test_fail(job, *, limit: int = 3):
    return Finding(f"failed with limit {limit}", location=Location("configs/x.yaml", 4),
                   fix="Do the thing.", commands=("echo fix",), data={"limit": limit})


@check("test-warn", title="fails with a warning", severity="warning", needs=("repo",))
@_doc("Fails with a warning.")
def test_warn(job):
    yield Finding("a warning")


@check("test-hang", title="hangs", severity="error", needs=("node",), timeout=1)
@_doc("Hangs forever.")
def test_hang(job):
    time.sleep(600)


@check("test-slow-shared", title="waits 2 s for shared work", severity="error",
       needs=("repo",), timeout=1)
@_doc("Reads a slow shared input (as a 1M-line script's steps are) within a 1 s deadline.")
def test_slow_shared(job):
    job.memo("test-slow-input", lambda: time.sleep(2.5))


@check("test-crash", title="crashes", severity="error", needs=("node",))
@_doc("Raises.")
def test_crash(job):
    raise RuntimeError("boom")


@check("test-skip", title="skips", severity="error", needs=("repo",))
@_doc("Skips.")
def test_skip(job):
    raise Skip("not applicable here")


@check("test-secret", title="leaks the environment", severity="error", needs=("sbatch",))
@_doc("Puts every env value into its finding, to prove redaction.")
def test_secret(job):
    for script in job.scripts or [None]:
        env = job.job_env(script)
        yield Finding("values: " + " ".join(v.value for v in env.values()),
                      fix="token=" + env.text("HF_TOKEN", ""), commands=tuple(env.plain().values()),
                      data={"env": env.plain(), "HF_TOKEN": env.text("HF_TOKEN")},
                      severity=Severity.ERROR)
