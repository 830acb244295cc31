"""data-smoke end to end: the real CLI under CI=true, real torch DataLoaders with real workers
(fixtures/data-smoke, cut in the seeds' forms), a real private /dev/shm. Each run also proves
that no process (found by this test's own marker), no temp file and no mount is left behind,
and that the smoke wrote nothing into the repo.

Run alone: python -m pytest -q tests/test_data_smoke.py
"""
from __future__ import annotations

import json
import shutil
import tempfile
import time
import uuid
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, one_line_exit_2, result_of, run_doctor, validate_report
from doctor.smoke.data import MAX_TMP_PATH, SHORT_TMP
from harness import subset
from test_smoke import marked_processes

FIXTURES = ROOT / "fixtures" / "data-smoke"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def shm_mounts() -> list:
    """The /dev/shm mounts this test's mount namespace sees: the smoke's private tmpfs must
    never be one of them."""
    return [ln for ln in Path("/proc/self/mountinfo").read_text().splitlines()
            if ln.split()[4] == "/dev/shm"]


def short_tmps() -> set:
    """The short temp dirs the data smoke gives its ranks when TMPDIR is too deep (only the
    smoke makes them: doctor/smoke/data.py MAX_TMP_PATH)."""
    return {p.name for p in Path(SHORT_TMP).glob("doctor-dds-*")}


class Sandbox:
    """A copy of a fixture, a private TMPDIR, a process marker, CI=true."""

    def __init__(self, case: str, tmp_path: Path):
        self.repo = tmp_path / "repo"
        shutil.copytree(FIXTURES / case, self.repo,
                        ignore=shutil.ignore_patterns("case.yaml", "SOURCE.md"))
        self.tmp = tmp_path / "tmp"
        self.tmp.mkdir()
        self.marker = uuid.uuid4().hex
        self.env = {"TMPDIR": str(self.tmp), "DOCTOR_TEST_MARKER": self.marker, "CI": "true"}
        self.mounts = shm_mounts()
        self.short = short_tmps()

    def settings(self, **smoke) -> None:
        path = self.repo / "doctor.yaml"
        data = yaml.safe_load(path.read_text())
        data["smoke"].update(smoke)
        path.write_text(yaml.safe_dump(data))

    def run(self, *args: str) -> tuple:
        """(exit code, the JSON report, the human report): one run, as a user sees it."""
        started = time.monotonic()
        out = self.repo.parent / "report.json"
        proc = run_doctor("run", "--repo", str(self.repo), "--only", "data-smoke",
                          "--output", f"json:{out}", *args, env=self.env, timeout=120)
        self.seconds = time.monotonic() - started
        assert out.exists(), proc.stderr[-3000:]
        doc = validate_report(json.loads(out.read_text()))
        out.unlink()
        return proc.returncode, doc, " ".join(proc.stdout.split())

    def assert_clean(self) -> None:
        left = marked_processes(self.marker)
        assert not left, f"processes left behind: {[p.cmdline() for p in left]}"
        leftovers = sorted(str(p.relative_to(self.tmp)) for p in self.tmp.rglob("*"))
        assert leftovers == [], f"temp files left behind: {leftovers}"
        junk = sorted(str(p) for p in self.repo.rglob("__pycache__"))
        assert junk == [], f"the smoke wrote into the repo: {junk}"
        assert shm_mounts() == self.mounts, "a /dev/shm mount appeared outside the smoke"
        # this TMPDIR is too deep for the ranks' sockets: they had a short one, now gone
        assert short_tmps() <= self.short, sorted(short_tmps() - self.short)


@pytest.mark.parametrize("case", CASES)
def test_each_fixture_is_classified_as_what_it_is(case, tmp_path):
    box = Sandbox(case, tmp_path)
    short = None
    if case == "pass_workers_from_env":
        # a TMPDIR short enough for the workers' sockets: the ranks use the run dir's own
        # (the other cases' TMPDIR, under pytest's tmp_path, is too deep: see short_tmps)
        short = Path(tempfile.mkdtemp(prefix="dst-", dir="/tmp"))
        assert len(str(short)) + len("/doctor-data-smoke-xxxxxxxx/tmp") <= MAX_TMP_PATH
        box.tmp, box.env["TMPDIR"] = short, str(short)
    try:
        code, doc, text = box.run()
        check_case(case, box, code, doc, text)
        box.assert_clean()
    finally:
        if short is not None:
            shutil.rmtree(short, ignore_errors=True)


def check_case(case: str, box: Sandbox, code: int, doc: dict, text: str) -> None:
    result = result_of(doc, "data-smoke")
    expect = (yaml.safe_load((FIXTURES / case / "case.yaml").read_text()) or {}).get(
        "expect", {}) if (FIXTURES / case / "case.yaml").exists() else {}
    facts = doc["facts"]["data_smoke"]
    if case.startswith("pass"):
        assert (code, result["status"]) == (0, "pass"), result
        # one round of workers x prefetch 2 after the prefetch filled (4 at least)
        n = max(4, facts["num_workers"] * 2 + 1)
        assert facts["batches"] == n and f"loaded {n} batches" in result["reason"]
        for rank in facts["ranks"]:   # the timings the report promises
            assert rank["batches"] == n and rank["first_batch_s"] > 0
            assert rank["per_batch_s"] is not None and rank["worker_start_s"] > 0
    else:
        assert (code, result["status"]) == (1, "fail"), result
        for want in expect["findings"]:
            assert any(subset(want, f) for f in result["findings"]), \
                (want, json.dumps(result["findings"], indent=1)[:6000], facts)
        # one finding per failure, however many ranks saw it
        kinds = [f["data"]["kind"] for f in result["findings"]]
        assert len(kinds) == len(set(kinds)), kinds
        for f in result["findings"]:   # the human report: the file:line of each
            if f["location"]:
                assert f"{f['location']['path']}:{f['location']['line']}" in text, text
    assert facts["shm_private"] is True   # the private /dev/shm works here (root or not)
    if case == "fail_fd_exhaustion":
        # MU_TRAIN_WORKERS=8 and `ulimit -n 512` from the job script, 2 ranks from its
        # --ntasks-per-node; 8 workers x prefetch 4, and one batch more
        assert (facts["num_workers"], facts["prefetch_factor"], facts["fd_limit"],
                facts["batches"]) == (8, 4, 512, 33)
        assert facts["fd_limit_from"] == "`ulimit -n 512` at train.sbatch:5"
        assert facts["ranks_per_node"] == 2 and "ntasks-per-node" in facts["ranks_from"]
        assert "of 512 open files in use" in result["findings"][0]["message"]
    if case == "fail_worker_hang":   # stopped at its deadline, with the worker's stack
        assert "> src/loaders.py:28 in __getitem__" in result["findings"][0]["data"]["stack"]
        assert box.seconds < 8 + 15, box.seconds   # data_timeout_s, plus the doctor's start


def test_without_a_private_shm_the_peak_is_measured_against_the_nodes_size(tmp_path):
    """Where namespaces are not used, the ranks run on this node's /dev/shm: the peak they
    hold (2 ranks x 40 MiB of cache) against the compute node's 64 MiB, said as measured."""
    box = Sandbox("fail_shm_cache", tmp_path)
    box.settings(data_private_shm=False)
    code, doc, _ = box.run()
    result = result_of(doc, "data-smoke")
    assert (code, result["status"]) == (1, "fail"), result
    (finding,) = result["findings"]
    assert finding["data"]["kind"] == "shm-exhaustion"
    assert "measured on this node's /dev/shm" in finding["message"]
    assert "smoke.data_private_shm is false" in finding["message"]
    facts = doc["facts"]["data_smoke"]
    assert facts["shm_private"] is False and facts["shm_peak_bytes"] > 64 * 2 ** 20
    box.assert_clean()


@pytest.mark.parametrize("spec,needle", [
    ("loaders", "is not MODULE:FACTORY"),
    ("no_such_module:train_loader", "no module named 'no_such_module'"),
    ("loaders:train_laoder", "defines no 'train_laoder'"),
])
def test_a_bad_data_factory_is_exit_2_before_any_rank(spec, needle, tmp_path):
    box = Sandbox("pass_workers_from_env", tmp_path)
    proc = run_doctor("run", "--repo", str(box.repo), "--only", "data-smoke", "--data", spec,
                      env=box.env, timeout=60)
    one_line_exit_2(proc, "--data", needle)
    box.assert_clean()


def test_sbatch_smoke_takes_data_as_run_does(tmp_path):
    """`doctor sbatch --smoke --data` names the factory as `run --data` does: a typo'd one is
    exit 2 naming --data before any rank starts, and nothing is submitted."""
    box = Sandbox("pass_workers_from_env", tmp_path)
    proc = run_doctor("sbatch", "--smoke", "--only", "data-smoke", "--data",
                      "loaders:train_laoder", "--repo", str(box.repo),
                      str(box.repo / "train.sbatch"), "--test-only", env=box.env, timeout=60)
    one_line_exit_2(proc, "--data loaders:train_laoder", "defines no 'train_laoder'")
    assert not proc.stdout.strip()   # no job id
    box.assert_clean()


def test_static_and_no_smoke_never_run_the_factory(tmp_path):
    """The factory is the user's code: a factory that would leave a file behind leaves none."""
    box = Sandbox("pass_workers_from_env", tmp_path)
    (box.repo / "src" / "loaders.py").write_text(
        "open(__file__ + '.ran', 'w').close()\n" + (box.repo / "src" / "loaders.py").read_text())
    for flags in (["--static"], ["--no-smoke"]):
        proc = run_doctor("run", "--repo", str(box.repo), "--format", "json", "--only",
                          "data-smoke,script-dos-line-breaks", "--data", "loaders:train_loader",
                          *flags, env=box.env, timeout=120)
        assert proc.returncode in (0, 1), proc.stderr
        assert "data-smoke" not in proc.stdout
        assert not (box.repo / "src" / "loaders.py.ran").exists()
    box.assert_clean()



def test_a_rank_that_fails_at_once_leaves_no_peer_stuck_in_init(tmp_path):
    """16 ranks whose factory raises at once (DataLoader(prefetch_factor=2) without workers,
    nothing read first): gloo's full-mesh connect returns on a rank while its peers still
    connect to each other, so a rank that left at once broke a peer's connect ("Connection
    closed by peer") and the others waited for that peer until the deadline: ranks missing
    from the finding in 4 of 5 runs, a false `hang` in 1 of 5. Every rank now waits for all
    to leave init_process_group, so each reports the loader's exception, every run."""
    box = Sandbox("fail_prefetch_without_workers", tmp_path)
    (box.repo / "src" / "at_once.py").write_text(
        "from torch.utils.data import DataLoader\n\n\n"
        "def failing():\n"
        "    return DataLoader(list(range(8)), num_workers=0, prefetch_factor=2)\n")
    box.settings(data="at_once:failing", data_ranks=16, data_timeout_s=30)
    for _ in range(2):
        code, doc, _ = box.run()
        result = result_of(doc, "data-smoke")
        assert [(f["data"]["kind"], f["data"]["ranks"]) for f in result["findings"]] == \
            [("loader-exception", list(range(16)))], result["findings"]
        assert code == 1 and box.seconds < 20, box.seconds
        box.assert_clean()
