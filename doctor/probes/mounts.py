"""Which filesystem holds a path, and is it shared between nodes?

Order of evidence (the report says which one decided, as `source`):
1. the site profile (`site.shared_paths` / `site.local_paths`): what the login
   node cannot see for itself (a compute node's /tmp, a path not mounted here);
2. the mount table (/proc/self/mountinfo): the mount whose mount point is the
   longest component-wise prefix of the path; stacked mounts: the last one;
3. statfs(2) f_type of the path's nearest existing ancestor (through ctypes:
   os.statvfs has no f_type), when the mount table cannot tell.

Every filesystem call on a path that may sit on a network mount runs in a
worker thread with a deadline, so a dead NFS server cannot hang the doctor.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

from doctor.probes import probe

# fstype (mountinfo) → shared between nodes?
SHARED_FSTYPES = {"lustre", "gpfs", "beegfs", "fhgfs", "nfs", "nfs4", "cifs", "smb3", "smbfs",
                  "ceph", "panfs", "wekafs", "afs", "gfs2", "ocfs2", "dvs", "coda", "glusterfs",
                  "fuse.glusterfs", "fuse.sshfs", "fuse.s3fs", "fuse.gcsfuse", "fuse.ceph",
                  "fuse.ceph-fuse", "fuse.rclone", "fuse.juicefs", "fuse.beegfs", "9p"}
LOCAL_FSTYPES = {"tmpfs", "ext4", "ext3", "ext2", "xfs", "btrfs", "overlay", "squashfs",
                 "devtmpfs", "ramfs", "zfs", "vfat", "f2fs", "fuse.squashfuse",
                 "fuse.squashfuse_ll", "fuse-overlayfs", "fuse.fuse-overlayfs"}
# statfs f_type magic numbers (coreutils src/stat.c; linux/magic.h).
MAGIC = {0x0BD00BD0: "lustre", 0x47504653: "gpfs", 0x19830326: "beegfs", 0x6969: "nfs",
         0xFF534D42: "cifs", 0xFE534D42: "smb2", 0x517B: "smbfs", 0x00C36400: "ceph",
         0xAAD7AAEA: "panfs", 0x5346414F: "afs", 0x01161970: "gfs2", 0x7461636F: "ocfs2",
         0x73757245: "coda", 0x65735546: "fuse", 0x01021994: "tmpfs", 0xEF53: "ext4",
         0x58465342: "xfs", 0x9123683E: "btrfs", 0x794C7630: "overlay", 0x73717368: "squashfs",
         0x858458F6: "ramfs", 0x2FC12FC1: "zfs", 0x01021997: "9p"}
SHARED_MAGIC_NAMES = {"lustre", "gpfs", "beegfs", "nfs", "cifs", "smb2", "smbfs", "ceph",
                      "panfs", "afs", "gfs2", "ocfs2", "coda", "9p"}
# MIOpen's IsNetworkedFilesystem() list (src/expanduser.cpp): GPFS, BeeGFS, Weka and
# Panasas are NOT in it, so MIOpen keeps its default directories there.
MIOPEN_NETWORKED = {"nfs", "nfs4", "cifs", "smb2", "smb3", "smbfs", "coda", "ocfs2", "afs",
                    "lustre", "ceph"}
FS_TIMEOUT_S = 3.0
_ESCAPE = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class Mount:
    mount_id: int
    parent_id: int
    dev: str            # "maj:min"
    root: str           # the subtree of the filesystem mounted here (bind mounts)
    mount_point: str
    fstype: str
    source: str
    super_options: str


def unescape(field: str) -> str:
    """mountinfo octal escapes: \\040 space, \\011 tab, \\012 newline, \\134 backslash."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), field)


def parse_mountinfo(text: str) -> list:
    """Mount records in table order; malformed lines are skipped, never fatal."""
    out = []
    for line in text.splitlines():
        left, sep, right = line.partition(" - ")
        fields = left.split()
        if not sep or len(fields) < 6:
            continue
        rest = right.split()
        if not rest:
            continue
        try:
            out.append(Mount(int(fields[0]), int(fields[1]), fields[2], unescape(fields[3]),
                             unescape(fields[4]), rest[0],
                             unescape(rest[1]) if len(rest) > 1 else "",
                             rest[2] if len(rest) > 2 else ""))
        except ValueError:
            continue
    return out


def _under(path: str, mount_point: str) -> bool:
    """Component-wise prefix: /scratch holds /scratch/x, not /scratch2."""
    return (mount_point == "/" or path == mount_point
            or path.startswith(mount_point.rstrip("/") + "/"))


def mount_for(path: str, mounts: list, dev: Optional[str] = None) -> Optional[Mount]:
    """The mount holding `path`: longest component-wise prefix; stacked: the last line.

    With `dev` ("maj:min" of the path), mounts of that device are preferred;
    when none matches (btrfs subvolumes, some FUSE), prefix matching alone decides.
    """
    path = os.path.normpath(path) if path else "/"
    candidates = [m for m in mounts if _under(path, m.mount_point)]
    if dev:
        same_dev = [m for m in candidates if m.dev == dev]
        candidates = same_dev or candidates
    if not candidates:
        return None
    longest = max(len(m.mount_point.rstrip("/")) for m in candidates)
    top = [m for m in candidates if len(m.mount_point.rstrip("/")) == longest]
    return top[-1]  # a later mount at the same point hides the earlier ones


def classify(fstype: str) -> Optional[bool]:
    """True: shared between nodes; False: node-local; None: cannot tell."""
    if fstype in SHARED_FSTYPES:
        return True
    if fstype in LOCAL_FSTYPES:
        return False
    if fstype.startswith("fuse.squashfuse"):
        return False
    return None


def with_deadline(fn: Callable[[], Any], timeout: float = FS_TIMEOUT_S) -> tuple:
    """(ok, value_or_exception): fn() in a daemon thread; a hung syscall is abandoned."""
    box: dict = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed back to the caller
            box["error"] = exc

    t = threading.Thread(target=target, name="doctor-fs-probe", daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        return False, TimeoutError(f"no answer within {timeout:g}s (hung network mount?)")
    if "error" in box:
        return False, box["error"]
    return True, box.get("value")


_libc: Any = None


def _load_libc() -> tuple:
    """(libc, struct statfs), made on the first statfs_type."""
    import ctypes
    import ctypes.util

    class Statfs(ctypes.Structure):
        # struct statfs on 64-bit Linux: f_type is the first field (long).
        _fields_ = [("f_type", ctypes.c_long), ("f_bsize", ctypes.c_long),
                    ("f_blocks", ctypes.c_ulong), ("f_bfree", ctypes.c_ulong),
                    ("f_bavail", ctypes.c_ulong), ("f_files", ctypes.c_ulong),
                    ("f_ffree", ctypes.c_ulong), ("f_fsid", ctypes.c_int * 2),
                    ("f_namelen", ctypes.c_long), ("f_frsize", ctypes.c_long),
                    ("f_flags", ctypes.c_long), ("f_spare", ctypes.c_long * 4)]
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True), Statfs


def statfs_type(path: str) -> int:
    """statfs(2) f_type of `path` (raises OSError). Call it through with_deadline."""
    import ctypes   # here, not at import: a run that asks no mount pays nothing for it

    global _libc
    if _libc is None:
        _libc = _load_libc()
    libc, statfs_struct = _libc
    buf = statfs_struct()
    if libc.statfs(os.fsencode(path), ctypes.byref(buf)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err), path)
    return buf.f_type & 0xFFFFFFFF


def nearest_existing(path: str) -> tuple:
    """(realpath of the nearest existing ancestor, "maj:min" of its device)."""
    p = os.path.abspath(path)
    for _ in range(64):
        try:
            st = os.stat(p)
            return os.path.realpath(p), f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
        except (FileNotFoundError, NotADirectoryError):
            if p == "/":
                break
            p = os.path.dirname(p)
    return "/", None


def literal_dir(value: str, home: Optional[str] = None) -> Optional[str]:
    """The directory part of a path value that is known before the job runs.

    `/scratch/p/miopen-$SLURM_JOB_ID` → `/scratch/p`; `~/x` → `$HOME/x`. None when
    the value is not an absolute path (a relative path, or `$(mktemp -d)`).
    """
    if value.startswith("~") and home:
        value = home.rstrip("/") + value[1:]
    if not value.startswith("/"):
        return None
    keep = []
    for comp in value.split("/"):
        if any(c in comp for c in "$`%*?"):
            break
        keep.append(comp)
    return "/".join(keep) or "/"


@probe("mountinfo")
def mountinfo(job) -> str:
    """The raw mount table of this process (fixtures record real lines of it)."""
    ok, text = with_deadline(lambda: open("/proc/self/mountinfo").read())
    return text if ok else ""


def filesystem_of(job, path: str, here: bool = True) -> dict:
    """{fstype, shared, mount, source} for an absolute path, `source` ∈ site, mountinfo, statfs.

    `shared` is None when nothing could tell. With a recorded mount table (a fixture,
    a node this machine is not) the live path is never touched; with `here=False`
    (a static run: this machine is not the cluster) neither is this machine's table.
    """
    path = os.path.normpath(path)
    site = getattr(job, "site", {}) or {}
    best: Optional[tuple] = None
    shared: Optional[bool]
    for key, is_shared in (("shared_paths", True), ("local_paths", False)):
        for prefix in site.get(key) or ():
            prefix = os.path.normpath(str(prefix))
            if _under(path, prefix) and (best is None or len(prefix) > len(best[0])):
                best = (prefix, is_shared)
    if best is not None:
        return {"path": path, "fstype": None, "shared": best[1], "mount": best[0],
                "source": "site"}
    recorded = job.fact_overridden("mountinfo")
    if not recorded and not here:
        return {"path": path, "fstype": None, "shared": None, "mount": None, "source": "none"}
    mounts = parse_mountinfo(job.fact("mountinfo") or "")
    real, dev = path, None
    if not recorded:
        ok, found = with_deadline(lambda: nearest_existing(path))
        if not ok:
            return {"path": path, "fstype": None, "shared": True, "mount": None,
                    "source": "statfs", "error": f"stat {path}: {found}"}
        real, dev = found
    m = mount_for(real, mounts, dev)
    if m is not None and m.fstype != "autofs":
        shared = classify(m.fstype)
        if shared is not None or recorded:
            return {"path": path, "fstype": m.fstype, "shared": shared,
                    "mount": m.mount_point, "source": "mountinfo"}
    if recorded:
        return {"path": path, "fstype": None, "shared": None, "mount": None,
                "source": "mountinfo"}
    ok, magic = with_deadline(lambda: statfs_type(real))
    if not ok:
        # no answer from the filesystem is itself the sign of a network mount
        return {"path": path, "fstype": None, "shared": True if isinstance(magic, TimeoutError)
                else None, "mount": m.mount_point if m else None, "source": "statfs",
                "error": str(magic)}
    name = MAGIC.get(magic, hex(magic))
    shared = True if name in SHARED_MAGIC_NAMES else (
        False if name in MAGIC.values() and name != "fuse" else None)
    return {"path": path, "fstype": name, "shared": shared,
            "mount": m.mount_point if m else None, "source": "statfs"}
