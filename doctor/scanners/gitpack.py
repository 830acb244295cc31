"""The first bytes of git blobs, read from the object store without inflating the rest.

git-tracked-core-file needs 20 bytes of each large blob in the history (an ELF core
header). `git cat-file --batch` inflates every blob whole: Megatron-LM's 421 blobs of
1-4 MiB (131 versions of uv.lock, golden values) cost 0.55 s of CPU for 8 KB of heads.
A packed blob is a zlib stream, or a delta whose first instructions copy the first bytes
of its base: both give their first bytes after inflating about as many. This reads only
what git's own formats (gitformat-pack(5): pack .idx v2, pack entries, ofs/ref deltas;
loose objects) say, and answers None for anything else (an alternate object store, a
pack index of another version, a truncated or corrupt entry, an object it cannot find):
the caller asks git for those. The store is only read.
"""
from __future__ import annotations

import mmap
import os
import stat
import struct
import zlib
from typing import Optional

OBJ_BLOB, OFS_DELTA, REF_DELTA = 3, 6, 7
MAX_PACKS = 64          # more packs than this: git reads the heads (see packs())
MAX_CHAIN = 64          # git's own pack.depth limit is 4095; a longer chain goes to git
MAX_PREFIX = 64 << 20   # a delta that copies from further into its base goes to git too
CHUNK = 16 * 1024


class _Bad(Exception):
    """Something this reader does not follow: the caller asks git."""


def _open_regular(path: str):
    """`path` opened for reading when it is a regular file (a link to one too), else
    _Bad: a FIFO in a repository's .git would block an open() until a writer comes, and a
    device would never end (opened without blocking, then checked)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _Bad(f"{path} is not a regular file")
    return os.fdopen(fd, "rb")


class Store:
    """One repository's object directory (objects/), its packs' indexes read once."""

    def __init__(self, objects: str):
        self.objects = objects
        self._packs: Optional[list] = None   # [(idx bytes, pack path, open file or None)]
        self._memo: dict = {}                 # (pack path, offset) -> longest prefix read
        self.width = 20                       # bytes of an object name (32 under SHA-256)
        self._maps: list = []                 # the mapped pack indexes, unmapped by close()
        self._broken = False                  # an index it cannot read: git reads them all

    def close(self) -> None:
        for pack in self._packs or ():
            if pack[2] is not None:
                pack[2].close()
        for m in self._maps:
            m.close()
        self._packs, self._maps = [], []

    def heads(self, oids: list, n: int) -> dict:
        """oid -> its first n bytes, for the blobs this reader can read; the rest left out."""
        out: dict = {}
        self.width = len(oids[0]) // 2 if oids else 20
        try:
            for oid in oids:
                try:
                    head = self._head(oid, n)
                except (_Bad, OSError, zlib.error, struct.error, IndexError, ValueError):
                    head = None
                if head is not None:
                    out[oid] = head
        finally:
            self.close()
        return out

    # ---- finding an object ------------------------------------------------------
    def _head(self, oid: str, n: int) -> Optional[bytes]:
        found = self._find(bytes.fromhex(oid))
        if found is None:
            return self._loose(oid, n)
        pack, offset = found
        kind, data = self._read(pack, offset, n, 0)
        return data[:n] if kind == OBJ_BLOB else None

    def packs(self) -> list:
        """The packs: [index, pack path, open pack file or None]. One whose index cannot
        be read leaves every object to git (it may be the one that holds it)."""
        if self._packs is None:
            self._packs = []
            d = os.path.join(self.objects, "pack")
            try:
                names = sorted(os.listdir(d))
            except OSError:
                names = []
            try:
                if sum(n.endswith(".idx") for n in names) > MAX_PACKS:
                    # each mapped index holds a descriptor while the heads are read: a
                    # repo of ~1,000 packs (gc.auto=0) would take the fds other checks need
                    raise _Bad("too many packs")
                for name in names:
                    pack = os.path.join(d, name[:-4] + ".pack")
                    if name.endswith(".idx") and os.path.exists(pack):
                        with _open_regular(os.path.join(d, name)) as fh:   # mapped: read as needed
                            idx = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                        self._maps.append(idx)
                        if idx[:8] != b"\377tOc\0\0\0\2":   # only index version 2
                            raise _Bad("pack index version")
                        self._packs.append([idx, pack, None])
            except (OSError, ValueError, _Bad):
                self._broken = True
        if self._broken:
            raise _Bad("a pack index this reader cannot read")
        return self._packs

    def _find(self, raw: bytes) -> Optional[tuple]:
        """(pack entry, offset) of the object named `raw` (self.width bytes), or None."""
        w = self.width
        for pack in self.packs():
            idx = pack[0]
            total = struct.unpack_from(">I", idx, 8 + 255 * 4)[0]
            lo = struct.unpack_from(">I", idx, 8 + (raw[0] - 1) * 4)[0] if raw[0] else 0
            hi = struct.unpack_from(">I", idx, 8 + raw[0] * 4)[0]
            names = 8 + 256 * 4
            while lo < hi:   # the sorted names of the fanout bucket
                mid = (lo + hi) // 2
                got = idx[names + mid * w:names + mid * w + w]
                if got < raw:
                    lo = mid + 1
                elif got > raw:
                    hi = mid
                else:
                    off_at = names + total * w + total * 4 + mid * 4
                    off = struct.unpack_from(">I", idx, off_at)[0]
                    if off & 0x80000000:   # in the table of 8-byte offsets
                        big = names + total * w + total * 8
                        off = struct.unpack_from(">Q", idx, big + (off & 0x7FFFFFFF) * 8)[0]
                    return pack, off
        return None

    def _loose(self, oid: str, n: int) -> Optional[bytes]:
        path = os.path.join(self.objects, oid[:2], oid[2:])
        try:
            fh = _open_regular(path)
        except FileNotFoundError:
            return None
        with fh:   # `blob <size>\0` and the content, one zlib stream
            z = zlib.decompressobj()
            data = b""
            while len(data) < 64 + n and not z.eof:
                tail = z.unconsumed_tail or fh.read(CHUNK)
                if not tail:
                    break
                data += z.decompress(tail, 64 + n - len(data))
        header, sep, body = data.partition(b"\0")
        if not sep or not header.startswith(b"blob "):
            return None
        return body[:n]

    # ---- reading a pack entry -----------------------------------------------------
    def _file(self, pack: list):
        if pack[2] is None:
            pack[2] = _open_regular(pack[1])
        return pack[2]

    def _read(self, pack: list, offset: int, want: int, depth: int) -> tuple:
        """(object type, at least its first `want` bytes, or all of it when shorter)."""
        key = (pack[1], offset)
        memo = self._memo.get(key)
        if memo is not None and (len(memo[1]) >= want or memo[2]):
            return memo[0], memo[1]
        if depth > MAX_CHAIN or want > MAX_PREFIX:
            raise _Bad("delta chain")
        fh = self._file(pack)
        fh.seek(offset)
        head = fh.read(64)
        kind = (head[0] >> 4) & 7
        size = head[0] & 15
        i, shift = 1, 4
        while head[i - 1] & 0x80:
            size |= (head[i] & 0x7F) << shift
            shift += 7
            i += 1
        if kind == OFS_DELTA:
            c = head[i]
            i += 1
            back = c & 0x7F
            while c & 0x80:
                c = head[i]
                i += 1
                back = ((back + 1) << 7) | (c & 0x7F)
            base = (pack, offset - back)
        elif kind == REF_DELTA:
            found = self._find(head[i:i + self.width])
            i += self.width
            if found is None:
                raise _Bad("delta base not in a pack")
            base = found
        elif kind in (1, 2, 3, 4):
            base = None
        else:
            raise _Bad("pack entry type")
        if base is None:
            data, whole = self._inflate(fh, offset + i, min(want, size), size)
            result = (kind, data, whole)
        else:
            result = self._undelta(fh, offset + i, base, want, depth)
        self._memo[key] = result
        return result[0], result[1]

    def _inflate(self, fh, at: int, want: int, limit: int) -> tuple:
        """(the first `want` bytes of the zlib stream at `at`, whether that is all of it)."""
        fh.seek(at)
        z = zlib.decompressobj()
        out = bytearray()   # (appending to bytes copies all so far: quadratic to 64 MiB)
        while len(out) < want and not z.eof:
            tail = z.unconsumed_tail or fh.read(CHUNK)
            if not tail:
                raise _Bad("truncated pack entry")
            out += z.decompress(tail, want - len(out))
        return bytes(out), z.eof or len(out) == limit

    def _undelta(self, fh, at: int, base: tuple, want: int, depth: int) -> tuple:
        """The first `want` bytes of a delta's result: its instructions, inflated as far
        as they are needed, copy from the base's prefix or insert their own bytes."""
        fh.seek(at)
        z = zlib.decompressobj()
        buf = bytearray()
        pos = 0

        def need(k: int) -> None:   # at least k bytes of the delta at pos, or _Bad
            nonlocal buf
            while len(buf) - pos < k:
                if z.eof:
                    raise _Bad("delta ends early")
                tail = z.unconsumed_tail or fh.read(CHUNK)
                if not tail:
                    raise _Bad("truncated delta")
                buf += z.decompress(tail, CHUNK)

        def varint() -> int:
            nonlocal pos
            value, shift = 0, 0
            while True:
                need(1)
                c = buf[pos]
                pos += 1
                value |= (c & 0x7F) << shift
                shift += 7
                if not c & 0x80:
                    return value
        varint()                  # the base's size
        target = varint()
        out = bytearray()
        kind = None
        while len(out) < min(want, target):
            need(1)
            op = buf[pos]
            pos += 1
            if op & 0x80:   # copy from the base: offset and size, each byte optional
                need(bin(op & 0x7F).count("1"))
                off = size = 0
                for bit in range(4):
                    if op & (1 << bit):
                        off |= buf[pos] << (8 * bit)
                        pos += 1
                for bit in range(3):
                    if op & (1 << (4 + bit)):
                        size |= buf[pos] << (8 * bit)
                        pos += 1
                size = size or 0x10000
                take = min(size, want - len(out))
                kind, data = self._read(base[0], base[1], off + take, depth + 1)
                if len(data) < off + take:
                    raise _Bad("copy past the base's end")
                out += data[off:off + take]
            elif op:        # insert the next op bytes
                need(op)
                out += buf[pos:pos + op]
                pos += op
            else:
                raise _Bad("delta opcode 0")
        if kind is None:   # every byte inserted: the type is the base's
            kind, _ = self._read(base[0], base[1], 0, depth + 1)
        return kind, bytes(out), len(out) >= target
