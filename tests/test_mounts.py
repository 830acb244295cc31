"""The mount table parser, filesystem classification, and the live statfs probe."""
from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from doctor.job.context import Job
from doctor.probes import mounts
from doctor.probes.mounts import (classify, filesystem_of, literal_dir, mount_for,
                                  parse_mountinfo, statfs_type, with_deadline)

# Real lines: a LUMI-like compute node, a GPFS/BeeGFS cluster, a Docker container,
# this sandbox (stacked /dev/pts and /dev/shm), and escaped names (glibc's escapes).
SAMPLE = (Path(__file__).parent / "data" / "mountinfo" / "mixed_cluster.txt").read_text()


@pytest.fixture(scope="module")
def table():
    return parse_mountinfo(SAMPLE)


def test_fields_and_escapes(table):
    assert len(table) == 15  # the garbage line is skipped
    esc = next(m for m in table if m.mount_id == 91)
    assert esc.mount_point == "/mnt/my data\tset" and esc.fstype == "ext4"
    bs = next(m for m in table if m.mount_id == 92)
    assert bs.root == "/proj\\a" and bs.source == "/dev/sdc1"
    # optional fields (shared:60 master:7) do not shift the fstype
    bind = next(m for m in table if m.mount_id == 131)
    assert (bind.root, bind.fstype, bind.dev) == ("/scratch", "lustre", "0:52")
    assert bind.source == "10.252.1.17@o2ib:10.252.1.18@o2ib:/lustrep1"


@pytest.mark.parametrize("path,mount_point,fstype", [
    ("/scratch/project_462000640/ammar/miopen_cache", "/scratch", "lustre"),  # bind mount
    ("/scratch2/x", "/scratch2", "xfs"),          # component-wise, not a bare startswith
    ("/scratchy", "/", "overlay"),
    ("/dev/shm/ups_cache", "/dev/shm", "tmpfs"),  # stacked: the last line wins
    ("/mnt/my data\tset/f", "/mnt/my data\tset", "ext4"),
    ("/gpfs/home/jdoe/.config/miopen", "/gpfs", "gpfs"),
    ("/mnt/beegfs/x", "/mnt/beegfs", "beegfs"),
    ("/home/jdoe", "/home", "nfs4"),
    ("/", "/", "overlay"),
    ("/tmp", "/tmp", "tmpfs"),
])
def test_longest_component_prefix(table, path, mount_point, fstype):
    m = mount_for(path, table)
    assert (m.mount_point, m.fstype) == (mount_point, fstype)


def test_stacked_mount_is_the_last_line(table):
    assert mount_for("/dev/shm", table).mount_id == 30


def test_device_number_prefers_matching_mount(table):
    # st_dev 0:52 under /scratch matches the bind mount line
    assert mount_for("/scratch/p", table, dev="0:52").mount_id == 131
    # an unknown device (btrfs subvolume, some FUSE): prefix matching alone decides
    assert mount_for("/scratch/p", table, dev="0:99").mount_id == 131


@pytest.mark.parametrize("fstype,shared", [
    ("lustre", True), ("gpfs", True), ("beegfs", True), ("nfs", True), ("nfs4", True),
    ("cifs", True), ("ceph", True), ("panfs", True), ("wekafs", True), ("fuse.s3fs", True),
    ("tmpfs", False), ("ext4", False), ("xfs", False), ("overlay", False), ("squashfs", False),
    ("fuse.squashfuse_ll", False), ("proc", None), ("fuse.unknownfs", None),
])
def test_classify(fstype, shared):
    assert classify(fstype) is shared


def test_literal_dir():
    assert literal_dir("/scratch/p/miopen-$SLURM_JOB_ID") == "/scratch/p"
    assert literal_dir("/scratch/p/%j/x") == "/scratch/p"
    assert literal_dir("~/.config/miopen", home="/users/a") == "/users/a/.config/miopen"
    assert literal_dir("$(mktemp -d)/cache") is None
    assert literal_dir("relative/dir") is None


def _job(tmp_path: Path, facts=None, site=None) -> Job:
    if site:
        (tmp_path / "doctor.yaml").write_text(
            "site:\n" + "".join(f"  {k}: {v}\n" for k, v in site.items()))
    return Job(tmp_path, env={}, facts=facts)


def test_site_profile_decides_first(tmp_path):
    job = _job(tmp_path, facts={"mountinfo": SAMPLE},
               site={"shared_paths": "[/flash, /scratch]", "local_paths": "[/tmp, /scratch/local]"})
    assert filesystem_of(job, "/flash/p/x")["source"] == "site"
    assert filesystem_of(job, "/flash/p/x")["shared"] is True
    local = filesystem_of(job, "/scratch/local/x")  # the longer prefix wins
    assert (local["shared"], local["mount"], local["source"]) == (False, "/scratch/local", "site")
    fs = filesystem_of(job, "/gpfs/x")
    assert (fs["fstype"], fs["shared"], fs["source"]) == ("gpfs", True, "mountinfo")


def test_recorded_table_never_touches_live_paths(tmp_path):
    job = _job(tmp_path, facts={"mountinfo": SAMPLE})
    fs = filesystem_of(job, "/proc/does/not/matter")  # only the table: "/" is overlay
    assert (fs["fstype"], fs["shared"], fs["source"]) == ("overlay", False, "mountinfo")


def test_live_against_stat_f(tmp_path):
    """The ctypes statfs agrees with coreutils `stat -f` (the oracle) on this machine."""
    for path in ("/", "/dev/shm", "/proc", str(tmp_path)):
        out = subprocess.run(["stat", "-f", "-c", "%t", path], capture_output=True, text=True,
                             check=True).stdout.strip()
        assert statfs_type(path) == int(out, 16), path


def test_live_filesystem_of_this_machine(tmp_path):
    job = Job(tmp_path, env={})
    shm = filesystem_of(job, "/dev/shm/doctor-not-created/x")  # nearest existing ancestor
    assert (shm["fstype"], shm["shared"], shm["mount"], shm["source"]) == \
        ("tmpfs", False, "/dev/shm", "mountinfo")
    proc = filesystem_of(job, "/proc/self")  # proc: the table cannot tell, statfs names it
    assert proc["source"] == "statfs" and proc["shared"] is None
    assert not os.path.exists("/dev/shm/doctor-not-created")


def test_a_hanging_filesystem_call_is_abandoned(tmp_path):
    """open() of a FIFO with no writer blocks like a dead NFS server; the deadline holds."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    start = time.monotonic()
    ok, err = with_deadline(lambda: open(fifo).read(), timeout=0.5)
    assert not ok and isinstance(err, TimeoutError)
    # the stat never answers, so any bound proves it was not waited on; 10 s
    # leaves room for a loaded CI machine (3.3 s seen there with a 2 s bound)
    assert time.monotonic() - start < 10
    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # release the abandoned thread


def test_filesystem_of_survives_a_hung_stat(tmp_path, monkeypatch):
    """A path whose stat never answers is reported as shared (a hung mount), not waited on."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    monkeypatch.setattr(mounts, "FS_TIMEOUT_S", 0.3)
    monkeypatch.setattr(mounts, "nearest_existing", lambda p: open(fifo).read())
    monkeypatch.setattr(mounts.with_deadline, "__defaults__", (0.3,))
    start = time.monotonic()
    fs = filesystem_of(Job(tmp_path, env={}), "/nfs/dead/miopen")
    assert fs["shared"] is True and "no answer" in fs["error"]
    # the stat never answers, so any bound proves it was not waited on; 10 s
    # leaves room for a loaded CI machine (3.3 s seen there with a 2 s bound)
    assert time.monotonic() - start < 10
    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    time.sleep(0.05)
    assert not [t for t in threading.enumerate() if t.name == "doctor-fs-probe" and t.is_alive()]
