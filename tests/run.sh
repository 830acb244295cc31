#!/usr/bin/env bash
# Set up and run the whole test suite. This is the README's test command, and
# .ci/run calls it. Extra arguments go to pytest (e.g. `-k rsync`, `-m "not slurm"`).
set -euo pipefail
cd "$(dirname "$0")/.."

# The oracles are real tools: rsync for the rsync emulation, a local two-node
# Slurm (slurm-wlm + munge) for the in-job and multi-node tests, git for repos.
need=()
command -v rsync >/dev/null || need+=(rsync)
command -v slurmctld >/dev/null || need+=(slurm-wlm)
command -v munged >/dev/null || need+=(munge)
command -v git >/dev/null || need+=(git)
# `python3 -m venv` (below) needs ensurepip, which Debian and Ubuntu ship apart
python3 -c 'import ensurepip' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "tests/run.sh: missing ${need[*]} (install them, or run as root)" >&2
  fi
fi

# The tests run in a venv of their own, .venv (git-ignored, made once and reused): a
# distro's Python refuses `pip install` into itself (PEP 668, externally-managed-
# environment), and a fresh venv holds only what the doctor and its tests need.
# DOCTOR_TEST_VENV puts it elsewhere. A venv whose python no longer starts (the Python
# it was made from is gone) is made again.
venv="${DOCTOR_TEST_VENV:-.venv}"
if ! "$venv/bin/python" -c '' 2>/dev/null; then
  python3 -m venv --clear "$venv"
fi
py="$(cd "$venv/bin" && pwd)/python"
# torch is pinned to the local CPU build: an unpinned torch would pull GBs of CUDA.
"$py" -m pip install -q --disable-pip-version-check torch==2.13.0 -e '.[test]'
# An editable install leaves the doctor's bytecode uncompiled, and where
# PYTHONDONTWRITEBYTECODE is set (as on this project's CI machines) every doctor
# process the tests start would compile its ~100 modules again: 0.2 s each, 20-30%
# of the subprocess-heavy test files. A regular pip install compiles them the same way.
"$py" -m compileall -q doctor checks >/dev/null
# Everything the tests start is the venv's: pytest and the doctor run as sys.executable,
# tools by name (ruff, mypy, pre-commit) and the Slurm jobs' `python` through PATH.
export PATH="$(dirname "$py"):$PATH"

# In CI the Slurm tests must run, never skip (tests/conftest.py starts the
# local two-node cluster with tests/slurm/cluster.sh and stops it afterwards).
# CI also repeats each signal-during-the-smoke case 20 times (issue 16; locally once)
# and kills `doctor fix --write` 50 times (issue 15; locally 10).
if [ "${CI:-}" = "true" ]; then
  export DOCTOR_REQUIRE_SLURM=1
  export DOCTOR_SIGNAL_RUNS="${DOCTOR_SIGNAL_RUNS:-20}"
  export DOCTOR_KILL_RUNS="${DOCTOR_KILL_RUNS:-50}"
fi

"$py" -m pytest "$@"
