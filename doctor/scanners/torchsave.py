"""Inspect torch.save files without torch and without executing them.

A torch.save file is recognised by its content, never by its name:
- the zip format (default since torch 1.6): a zip archive with a `<prefix>/data.pkl`
  record (the prefix is the file's basename when saved, `archive` for buffers);
- the legacy format (`_use_new_zipfile_serialization=False`): consecutive pickles,
  the first of which is torch's magic number 0x1950a86a20f9469cfc6c.
(The pre-0.4 tar format is not recognised: torch's weights_only loader refuses it too.)

Only the pickle is read, never the tensor bytes. The pickle is read by a restricted
unpickler: every global becomes an inert stub (nothing is imported, nothing real is
called) and every persistent id is recorded. torch stores each storage as the
persistent id ("storage", storage_type, key, location, numel[, view_metadata]), so
the locations ("cpu", "cuda:0", ...) come straight from the ids, memoised strings
included. Globals outside torch's `weights_only` allowlist are reported as unsafe.
Each tensor's shape comes from the recorded arguments of its rebuild call
(`_rebuild_tensor_v2(storage, offset, size, stride, ...)` and its kin), and its key
from the dicts and lists that hold it (`tensors`: key path -> shape), so a
checkpoint's state_dict can be compared with a model without loading it.

This module must never import torch: the doctor's process stays torch-free.
"""
from __future__ import annotations

import _compat_pickle
import io
import os
import pickle
import pickletools
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import Any, Optional

# torch/serialization.py: MAGIC_NUMBER = 0x1950a86a20f9469cfc6c, pickled as LONG1.
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C
_MAGIC_LONG1 = b"\x8a\x0a" + MAGIC_NUMBER.to_bytes(10, "little")
ZIP_LOCAL = b"PK\x03\x04"
HEAD_BYTES = 64
# A data.pkl bigger than this is not read (a checkpoint's pickle is kilobytes to a few
# megabytes; anything bigger is mostly non-tensor data we would have to hold in memory).
MAX_PICKLE_BYTES = 64 * 1024 * 1024
NON_DEVICE_LOCATIONS = frozenset({"cpu", "meta"})
# A torch.save archive holds one record per storage and a handful more: thousands for a
# large model. zipfile makes an object of every entry of the central directory (3 million
# of them took 1 GiB and over 30 s), so an archive that lists more entries, or more bytes
# of them, than these is not read; it is reported "not scanned".
MAX_ZIP_ENTRIES = 100_000
MAX_ZIP_DIRECTORY = 32 * 1024 * 1024

# torch 2.13.0, torch/_weights_only_unpickler.py `_get_allowed_globals()` (lines 174-227,
# with `_tensor_rebuild_functions()` lines 150-170): the globals that
# torch.load(weights_only=True) accepts without `add_safe_globals`. A literal, because the
# doctor never imports torch; tests/test_torchsave.py compares it with the installed torch.
WEIGHTS_ONLY_SAFE_GLOBALS = frozenset("""
_codecs.encode builtins.bytearray builtins.complex builtins.set collections.Counter
collections.OrderedDict torch.BFloat16Storage torch.BFloat16Tensor torch.BoolStorage
torch.BoolTensor torch.ByteStorage torch.ByteTensor torch.CharStorage torch.CharTensor
torch.ComplexDoubleStorage torch.ComplexFloatStorage torch.DoubleStorage torch.DoubleTensor
torch.FloatStorage torch.FloatTensor torch.HalfStorage torch.HalfTensor torch.IntStorage
torch.IntTensor torch.LongStorage torch.LongTensor torch.QInt32Storage torch.QInt8Storage
torch.QUInt2x4Storage torch.QUInt4x2Storage torch.QUInt8Storage torch.ShortStorage
torch.ShortTensor torch.Size torch.Tensor torch._tensor._rebuild_from_type_v2
torch._utils._rebuild_device_tensor_from_cpu_tensor
torch._utils._rebuild_device_tensor_from_numpy torch._utils._rebuild_meta_tensor_no_storage
torch._utils._rebuild_nested_tensor torch._utils._rebuild_parameter
torch._utils._rebuild_parameter_with_state torch._utils._rebuild_qtensor
torch._utils._rebuild_sparse_tensor torch._utils._rebuild_tensor
torch._utils._rebuild_tensor_v2 torch._utils._rebuild_tensor_v3
torch._utils._rebuild_wrapper_subclass torch.bfloat16 torch.bits16 torch.bits1x8
torch.bits2x4 torch.bits4x2 torch.bits8 torch.bool torch.complex128 torch.complex32
torch.complex64 torch.cuda.BFloat16Storage torch.cuda.BFloat16Tensor torch.cuda.BoolStorage
torch.cuda.BoolTensor torch.cuda.ByteStorage torch.cuda.ByteTensor torch.cuda.CharStorage
torch.cuda.CharTensor torch.cuda.ComplexDoubleStorage torch.cuda.ComplexFloatStorage
torch.cuda.DoubleStorage torch.cuda.DoubleTensor torch.cuda.FloatStorage
torch.cuda.FloatTensor torch.cuda.HalfStorage torch.cuda.HalfTensor torch.cuda.IntStorage
torch.cuda.IntTensor torch.cuda.LongStorage torch.cuda.LongTensor torch.cuda.ShortStorage
torch.cuda.ShortTensor torch.cuda.sparse.BFloat16Tensor torch.cuda.sparse.ByteTensor
torch.cuda.sparse.CharTensor torch.cuda.sparse.DoubleTensor torch.cuda.sparse.FloatTensor
torch.cuda.sparse.HalfTensor torch.cuda.sparse.IntTensor torch.cuda.sparse.LongTensor
torch.cuda.sparse.ShortTensor torch.device torch.float16 torch.float32
torch.float4_e2m1fn_x2 torch.float64 torch.float8_e4m3fn torch.float8_e4m3fnuz
torch.float8_e5m2 torch.float8_e5m2fnuz torch.float8_e8m0fnu torch.int1 torch.int16
torch.int2 torch.int3 torch.int32 torch.int4 torch.int5 torch.int6 torch.int64 torch.int7
torch.int8 torch.nn.parameter.Parameter torch.per_channel_affine
torch.per_channel_affine_float_qparams torch.per_channel_symmetric torch.per_tensor_affine
torch.per_tensor_symmetric torch.qint32 torch.qint8 torch.quint2x4 torch.quint4x2
torch.quint8 torch.serialization._get_layout torch.sparse.BFloat16Tensor
torch.sparse.ByteTensor torch.sparse.CharTensor torch.sparse.DoubleTensor
torch.sparse.FloatTensor torch.sparse.HalfTensor torch.sparse.IntTensor
torch.sparse.LongTensor torch.sparse.ShortTensor torch.storage.TypedStorage
torch.storage.UntypedStorage torch.uint1 torch.uint16 torch.uint2 torch.uint3 torch.uint32
torch.uint4 torch.uint5 torch.uint6 torch.uint64 torch.uint7 torch.uint8
""".split())

# Bytes per element of the legacy storage types (torch._utils._element_size), for the
# legacy format's size check. UntypedStorage ids carry nbytes, so 1.
_ELEMENT_SIZE = {
    "FloatStorage": 4, "DoubleStorage": 8, "HalfStorage": 2, "BFloat16Storage": 2,
    "LongStorage": 8, "IntStorage": 4, "ShortStorage": 2, "CharStorage": 1,
    "ByteStorage": 1, "BoolStorage": 1, "ComplexFloatStorage": 8,
    "ComplexDoubleStorage": 16, "QUInt8Storage": 1, "QInt8Storage": 1,
    "QInt32Storage": 4, "QUInt4x2Storage": 1, "QUInt2x4Storage": 1, "UntypedStorage": 1,
}


def global_name(module: str, name: str) -> str:
    """`module.name` as torch.load resolves a pickle's GLOBAL: Python 2 names mapped to
    Python 3 ones (`__builtin__.set` is `builtins.set`, as protocol 2, torch.save's
    default, writes it), as pickle does for protocol < 3 and torch's weights_only
    unpickler does for every GLOBAL (torch/_weights_only_unpickler.py)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return f"{module}.{name}"


def unsafe_globals(names: Any) -> list:
    """The globals (as global_name gives them) that torch.load(weights_only=True) refuses."""
    return sorted(g for g in names if g not in WEIGHTS_ONLY_SAFE_GLOBALS)


class NotRegularFile(Exception):
    """A FIFO, socket, device or directory: never read."""


@dataclass
class TorchSaveInfo:
    """What the pickle of one torch.save file says; `problem` when it is truncated/corrupt."""

    path: str
    format: str                                     # "zip" or "legacy"
    locations: dict = field(default_factory=dict)   # location -> number of storages
    unsafe_globals: list = field(default_factory=list)
    problem: Optional[str] = None
    # key path (dict keys, list indices) -> shape, for every tensor the object holds;
    # a shape is None when its rebuild call does not say it plainly
    tensors: dict = field(default_factory=dict)

    @property
    def devices(self) -> list:
        """Storage locations on a device (anything but cpu/meta), sorted."""
        return sorted(loc for loc in self.locations if loc not in NON_DEVICE_LOCATIONS)

    @property
    def storages(self) -> int:
        return sum(self.locations.values())


# ---- the restricted unpickler -------------------------------------------------------
class _Stub:
    """An inert stand-in for any global: calling it only records the arguments."""

    _global = "?"

    def __new__(cls, *args: Any, **kwargs: Any) -> "_Stub":
        return object.__new__(cls)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._args = args

    def __setstate__(self, state: Any) -> None:
        self._state = state

    def __setitem__(self, key: Any, value: Any) -> None:
        # an OrderedDict (every state_dict) is a stub filled by SETITEMS: keep its items
        self.__dict__.setdefault("_items", {})[key] = value

    def append(self, item: Any) -> None:
        pass

    def extend(self, items: Any) -> None:
        pass


_STUBS: dict = {}


def _stub_for(qualname: str) -> type:
    stub = _STUBS.get(qualname)
    if stub is None:
        stub = type("Stub", (_Stub,), {"_global": qualname, "__module__": __name__})
        if qualname in WEIGHTS_ONLY_SAFE_GLOBALS:   # bounded cache: never attacker names
            _STUBS[qualname] = stub
    return stub


class _Recorder:
    def __init__(self) -> None:
        self.locations: dict = {}
        self.globals: set = set()
        self.storages: dict = {}   # key -> (storage type name, numel)
        self.obj: Any = None       # what the pickle loaded (stubs for every global)


class _ScanUnpickler(pickle.Unpickler):
    """Never imports or calls anything real: globals are stubs, storages are recorded.

    Only ever given bytes that `check_pickle` accepted (see there)."""

    def __init__(self, file: Any, recorder: _Recorder):
        super().__init__(file, encoding="latin1")
        self._rec = recorder
        self._stubs: dict = {}   # one class per name per file: a repeated GLOBAL is cheap

    def find_class(self, module: str, name: str) -> type:
        qualname = global_name(module, name)
        stub = self._stubs.get(qualname)
        if stub is None:
            self._rec.globals.add(qualname)
            stub = self._stubs[qualname] = _stub_for(qualname)
        return stub

    def persistent_load(self, pid: Any) -> Any:
        if isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage":
            location = pid[3] if isinstance(pid[3], str) else repr(pid[3])
            self._rec.locations[location] = self._rec.locations.get(location, 0) + 1
            stype = getattr(pid[1], "_global", "").rsplit(".", 1)[-1]
            if isinstance(pid[2], str) and isinstance(pid[4], int):
                self._rec.storages[pid[2]] = (stype, pid[4])
        return _Stub()


# ---- the pickle's bounds -------------------------------------------------------------
class PickleRefused(Exception):
    """The pickle is not unpickled; the message is the file's problem."""


class _Short(Exception):
    """The bytes end before the pickle's STOP: `needed` bytes (from its start) are needed,
    `claim` names the opcode whose length asked for them (None: the pickle just ends)."""

    def __init__(self, needed: int, claim: Optional[str] = None):
        super().__init__(needed, claim)
        self.needed, self.claim = needed, claim


# CPython's unpickler trusts every size a pickle states: a memo index n grows its memo
# array to 2n slots (one LONG_BINPUT 2**28 allocates 4 GiB), and a length field allocates
# that many bytes before reading them. So every pickle is walked first, opcode by opcode
# (pickletools' table), and refused when a length runs past its end, a memo index lies
# beyond the objects memoized so far, or what it builds would take more memory than
# MAX_PICKLE_MEMORY. The cost of an opcode is what the scanner's unpickler spends on it
# (measured on CPython 3.11 with tracemalloc, rounded up): a reference 16 bytes, a small
# object 80, a called stub 160, a dict or set 256, plus the bytes of any string it holds.
MAX_PICKLE_MEMORY = 512 * 1024 * 1024
MEMO_SLACK = 1024    # memo indices a writer may leave out (Python's picklers leave none)
MAX_DIGITS = 4300    # CPython's default int <-> str digit limit
_LENGTH_FIELD = {pickletools.TAKEN_FROM_ARGUMENT1: (1, False),
                 pickletools.TAKEN_FROM_ARGUMENT4: (4, True),
                 pickletools.TAKEN_FROM_ARGUMENT4U: (4, False),
                 pickletools.TAKEN_FROM_ARGUMENT8U: (8, False)}
_REF_OPS = frozenset("MARK POP POP_MARK DUP GET BINGET LONG_BINGET PUT BINPUT LONG_BINPUT "
                     "MEMOIZE APPEND APPENDS SETITEM SETITEMS ADDITEMS STOP PROTO FRAME NONE "
                     "NEWTRUE NEWFALSE BININT1 GLOBAL STACK_GLOBAL".split())
_CALL_OPS = frozenset("REDUCE BUILD NEWOBJ NEWOBJ_EX OBJ INST".split())
_BIG_OPS = frozenset("EMPTY_DICT DICT EMPTY_SET FROZENSET".split())
REF_COST, OBJECT_COST, CALL_COST, BIG_COST = 16, 80, 160, 256
_SPECIAL = frozenset("LONG_BINPUT PUT FRAME STOP".split())


def _tables() -> tuple:
    """Per opcode byte: the bytes of its fixed argument (-1: looked at by check_pickle,
    -2: not an opcode), its cost, and the opcode."""
    skip, cost = [-2] * 256, [0] * 256
    ops: list = [None] * 256
    for op in pickletools.opcodes:
        code, name, arg = ord(op.code), op.name, op.arg
        ops[code] = op
        cost[code] = (REF_COST if name in _REF_OPS else CALL_COST if name in _CALL_OPS
                      else BIG_COST if name in _BIG_OPS else OBJECT_COST)
        fixed = arg is None or arg.n >= 0
        skip[code] = (arg.n if arg else 0) if fixed and name not in _SPECIAL else -1
    return skip, cost, ops


_SKIP, _COST, _OPS = _tables()


def check_pickle(data: bytes, start: int = 0, *, budget: int = MAX_PICKLE_MEMORY) -> int:
    """The offset just past the STOP of the pickle at data[start:], once each of its opcodes
    is checked (see above). Raises PickleRefused with the reason, or _Short."""
    end, pos, puts, cost = len(data), start, 0, 0
    skip, costs = _SKIP, _COST
    while pos < end:
        code = data[pos]
        width = skip[code]
        cost += costs[code]
        if width >= 0:         # the common case: an opcode with nothing to check
            pos += 1 + width
            continue
        at = pos - start
        op = _OPS[code]
        if op is None:
            raise PickleRefused(f"corrupt pickle: unknown opcode 0x{code:02x} at byte {at}")
        name, arg = op.name, op.arg
        pos += 1
        index = None
        if name == "STOP":
            if cost > budget:
                raise PickleRefused(f"not scanned: reading its pickle would take more than "
                                    f"{budget // (1024 * 1024)} MiB of memory")
            return pos
        if arg.n >= 0:         # LONG_BINPUT, FRAME
            if pos + arg.n > end:
                break
            field = int.from_bytes(data[pos:pos + arg.n], "little")
            pos += arg.n
            if name == "FRAME" and pos + field > end:
                raise _Short(pos + field - start, f"FRAME at byte {at} says {field} bytes")
            index = field if name == "LONG_BINPUT" else None
        elif arg.n == pickletools.UP_TO_NEWLINE:
            for _ in range(2 if arg.name == "stringnl_noescape_pair" else 1):
                nl = data.find(b"\n", pos)
                if nl < 0:
                    raise _Short(end + 1 - start)
                if arg.name.startswith("decimal") and nl - pos > MAX_DIGITS:
                    raise PickleRefused(f"corrupt pickle: a {nl - pos}-digit number at byte {at}")
                if name == "PUT":
                    line = data[pos:nl]
                    if not line.isdigit():
                        raise PickleRefused(f"corrupt pickle: memo index {line[:20]!r} at "
                                            f"byte {at}")
                    index = int(line)
                cost += nl - pos
                pos = nl + 1
        else:                  # a length, then that many bytes
            width, signed = _LENGTH_FIELD[arg.n]
            if pos + width > end:
                break
            size = int.from_bytes(data[pos:pos + width], "little", signed=signed)
            pos += width
            if size < 0:
                raise PickleRefused(f"corrupt pickle: {name} with length {size} at byte {at}")
            if pos + size > end:
                raise _Short(pos + size - start, f"{name} at byte {at} says {size} bytes")
            cost += size
            pos += size
        # BINPUT's one-byte indices (up to 255) are not counted: MEMO_SLACK covers them
        if index is not None:
            if index > puts + MEMO_SLACK:
                raise PickleRefused(f"corrupt pickle: memo index {index} at byte {at}, "
                                    f"after {puts} memoized objects")
            puts += 1
    raise _Short(max(pos, end) + 1 - start)


def _read_pickle(f: Any, stop_at: int) -> bytes:
    """The one pickle that starts at f's position, checked; f is left just past it.
    Reads in growing chunks, never past the offset `stop_at` (PickleRefused beyond)."""
    start = f.tell()
    limit = stop_at - start
    size = os.fstat(f.fileno()).st_size
    data = b""
    want = 64 * 1024
    while True:
        chunk = f.read(min(want, limit) - len(data))
        data += chunk
        try:
            stop = check_pickle(data)
        except _Short as short:
            if short.needed > size - start:
                raise PickleRefused(f"corrupt pickle: {short.claim}, past the end of the file"
                                    if short.claim else "truncated: the pickle ends early"
                                    ) from None
            if short.needed > limit or not chunk:
                raise PickleRefused(f"not scanned past {stop_at} bytes of pickle") from None
            want = max(2 * len(data), short.needed)
            continue
        f.seek(start + stop)
        return data[:stop]


def _checked(data: bytes) -> bytes:
    """The whole of `data` as one pickle, checked (PickleRefused otherwise)."""
    try:
        check_pickle(data)
    except _Short as short:
        raise PickleRefused(f"corrupt pickle: {short.claim}, past its end" if short.claim
                            else "truncated: the pickle ends early") from None
    return data


# ---- tensors and their shapes ---------------------------------------------------------
# torch/_utils.py and torch/_tensor.py: where each rebuild function takes the size.
_SIZE_ARG = {"torch._utils._rebuild_tensor": 2, "torch._utils._rebuild_tensor_v2": 2,
             "torch._utils._rebuild_tensor_v3": 2, "torch._utils._rebuild_qtensor": 2,
             "torch._utils._rebuild_wrapper_subclass": 2,
             "torch._utils._rebuild_meta_tensor_no_storage": 1}
_WRAPPED_ARG = {"torch._utils._rebuild_parameter", "torch._utils._rebuild_parameter_with_state",
                "torch._utils._rebuild_device_tensor_from_cpu_tensor"}  # the tensor: args[0]
_NOT_A_TENSOR = object()
MAX_DEPTH = 64


def _is_tensor_call(obj: Any) -> bool:
    g = getattr(type(obj), "_global", None)
    return isinstance(obj, _Stub) and (g in _SIZE_ARG or g in _WRAPPED_ARG or g in (
        "torch._tensor._rebuild_from_type_v2", "torch._utils._rebuild_device_tensor_from_numpy"))


def _shape(obj: Any, depth: int = 0) -> Any:
    """The shape of a rebuilt tensor stub; None when unknown; _NOT_A_TENSOR otherwise."""
    if not _is_tensor_call(obj) or depth > 4:
        return _NOT_A_TENSOR
    g = type(obj)._global
    args: tuple = getattr(obj, "_args", ())
    if g in _WRAPPED_ARG:
        return _shape(args[0], depth + 1) if args else None
    if g == "torch._tensor._rebuild_from_type_v2":   # (func, new_type, args, state)
        if len(args) >= 3 and isinstance(args[2], tuple) and isinstance(args[0], type):
            return _shape(args[0](*args[2]), depth + 1)
        return None
    at = _SIZE_ARG.get(g)
    size = args[at] if at is not None and len(args) > at else None
    if isinstance(size, _Stub):   # torch.Size([...])
        size = size._args[0] if getattr(size, "_args", ()) else None
    if isinstance(size, (tuple, list)) and all(type(n) is int for n in size):
        return tuple(size)
    return None


def tensor_shapes(obj: Any, limit: int = 1_000_000) -> dict:
    """{key path: shape} of every tensor reachable through dicts, OrderedDicts, lists and
    tuples from `obj` (what the restricted unpickler loaded)."""
    out: dict = {}
    seen: set = set()

    def walk(node: Any, path: tuple, depth: int) -> None:
        shape = _shape(node)
        if shape is not _NOT_A_TENSOR:
            out[path] = shape
            return
        if depth > MAX_DEPTH or id(node) in seen or len(out) >= limit:
            return
        seen.add(id(node))
        if isinstance(node, dict):
            items: Any = node.items()
        elif isinstance(node, _Stub) and "_items" in node.__dict__:
            items = node.__dict__["_items"].items()
        elif isinstance(node, (list, tuple)):
            items = enumerate(node)
        else:
            return
        for key, value in items:
            walk(value, path + (key,), depth + 1)

    walk(obj, (), 0)
    return out


# ---- format detection -----------------------------------------------------------------
def sniff(head: bytes) -> Optional[str]:
    """"zip" (any zip: confirmed later by its records), "legacy", or None."""
    if head.startswith(ZIP_LOCAL):
        return "zip"
    if head[:1] == b"\x80" and _MAGIC_LONG1 in head[:32]:
        return "legacy"
    return None


def open_regular(path: str) -> int:
    """An fd of a regular file; FIFOs, sockets and devices are refused without blocking."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise NotRegularFile(path)
    # O_NONBLOCK: if the path was swapped for a FIFO since the stat, open() still returns.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegularFile(path)
    return fd


def inspect_file(path: "str | os.PathLike", *,
                 max_pickle_bytes: int = MAX_PICKLE_BYTES) -> Optional[TorchSaveInfo]:
    """The storages and globals of a torch.save file; None when it is not one.

    Raises OSError when the file cannot be read and NotRegularFile for anything but a
    regular file. A truncated or corrupt torch.save file is a TorchSaveInfo with
    `problem` set (and whatever could be learnt before the damage).
    """
    path = os.fspath(path)
    fd = open_regular(path)
    # A small buffer: the first read must not pull in the tensor bytes that follow data.pkl.
    with open(fd, "rb", buffering=8 * 1024) as f:
        head = f.read(HEAD_BYTES)
        kind = sniff(head)
        if kind == "zip":
            return _inspect_zip(path, f, max_pickle_bytes)
        if kind == "legacy":
            f.seek(0)
            return _inspect_legacy(path, f, max_pickle_bytes)
    return None


def _fill(info: TorchSaveInfo, rec: _Recorder) -> TorchSaveInfo:
    info.locations = dict(rec.locations)
    info.tensors = tensor_shapes(rec.obj)
    info.unsafe_globals = unsafe_globals(rec.globals)
    return info


def _pickle_problem(exc: BaseException) -> str:
    if isinstance(exc, EOFError) or "truncated" in str(exc):
        return "truncated: the pickle ends early"
    return f"corrupt pickle: {type(exc).__name__}: {exc}"


def _inspect_zip(path: str, f: Any, cap: int) -> Optional[TorchSaveInfo]:
    fast = _inspect_zip_fast(path, f, cap)
    if fast is not None:
        return fast
    too_big = _directory_too_big(f)
    if too_big:   # a torch file if its first record is data.pkl, as torch writes it
        f.seek(0)
        header = f.read(30)
        name = f.read(struct.unpack_from("<26xH", header)[0]) if len(header) == 30 else b""
        if name.endswith(b"/data.pkl") and name.count(b"/") == 1:
            return TorchSaveInfo(path, "zip", problem=f"not scanned: {too_big}")
        return None
    f.seek(0)
    try:
        zf = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError,
            NotImplementedError) as exc:
        return _inspect_broken_zip(path, f, cap, exc)
    names = zf.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if not pkl:
        return None   # an ordinary zip archive
    info = TorchSaveInfo(path, "zip")
    name = pkl[0]
    zinfo = zf.getinfo(name)
    if zinfo.file_size > cap:
        info.problem = (f"not scanned: its pickle is {zinfo.file_size} bytes "
                        f"(more than the {cap}-byte limit)")
        return info
    rec = _Recorder()
    try:
        with zf.open(zinfo) as member:
            data = member.read(cap + 1)
        if len(data) > cap:
            raise PickleRefused(f"not scanned past {cap} bytes of pickle")
        rec.obj = _ScanUnpickler(io.BytesIO(_checked(data)), rec).load()
    except PickleRefused as exc:
        info.problem = str(exc)
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        info.problem = f"corrupt: {name}: {exc}"
    except Exception as exc:   # any malformed pickle: reported, never fatal
        info.problem = _pickle_problem(exc)
    _fill(info, rec)
    if info.problem is None:
        prefix = name[: -len("data.pkl")]
        have = set(names)
        missing = [k for k in rec.storages if f"{prefix}data/{k}" not in have]
        if missing:
            info.problem = (f"corrupt: {len(missing)} tensor record(s) missing "
                            f"(e.g. {prefix}data/{missing[0]})")
    return info


def _directory_too_big(f: Any) -> Optional[str]:
    """What is too big about the archive's central directory as its end record states it
    (zip64 too: zipfile's own reader of it), or None."""
    f.seek(0)
    try:
        end = zipfile._EndRecData(f)  # type: ignore[attr-defined]  # (zip64 too)
    except (OSError, struct.error):
        return None   # no end record: zipfile says what is wrong
    if not end:
        return None
    entries = end[zipfile._ECD_ENTRIES_TOTAL]  # type: ignore[attr-defined]
    size = end[zipfile._ECD_SIZE]  # type: ignore[attr-defined]
    if entries > MAX_ZIP_ENTRIES:
        return (f"its zip central directory lists {entries:,} entries (the doctor reads "
                f"at most {MAX_ZIP_ENTRIES:,})")
    if size > MAX_ZIP_DIRECTORY:
        return (f"its zip central directory is {size:,} bytes (the doctor reads at most "
                f"{MAX_ZIP_DIRECTORY >> 20} MiB)")
    return None


def directory_names(cd: bytes) -> Optional[set]:
    """The record names a central directory lists, for lookups (a substring search of
    `cd` per tensor would take storages x directory bytes); None past MAX_ZIP_ENTRIES."""
    names: set = set()
    pos, end = 0, len(cd) - 46
    while pos <= end and cd.startswith(b"PK\x01\x02", pos):
        name_len, extra_len, comment_len = struct.unpack_from("<HHH", cd, pos + 28)
        names.add(cd[pos + 46: pos + 46 + name_len])
        if len(names) > MAX_ZIP_ENTRIES:
            return None
        pos += 46 + name_len + extra_len + comment_len
    return names


def _inspect_zip_fast(path: str, f: Any, cap: int) -> Optional[TorchSaveInfo]:
    """The archive as torch writes it: data.pkl stored first, no comment, no zip64. Reads
    the first local header, the end record and the central directory, then data.pkl: four
    small reads instead of zipfile's parse. None: anything else (zipfile decides)."""
    f.seek(0)
    header = f.read(30)
    if len(header) < 30:
        return None
    method, name_len, extra_len = struct.unpack("<8xH16xHH", header)
    name = f.read(name_len)
    if method != 0 or not name.endswith(b"/data.pkl") or name.count(b"/") != 1:
        return None
    size = os.fstat(f.fileno()).st_size
    if size < 22 + 30:
        return None
    f.seek(size - 22)
    eocd = f.read(22)
    if len(eocd) != 22 or not eocd.startswith(b"PK\x05\x06") or eocd[20:22] != b"\0\0":
        return None
    cd_size, cd_offset = struct.unpack("<II", eocd[12:20])
    if cd_offset + cd_size > size - 22 or cd_size > 16 * 1024 * 1024:
        return None   # zip64 (0xFFFFFFFF) or damaged: let zipfile say
    f.seek(cd_offset)
    cd = f.read(cd_size)
    entry_at = cd.find(name)
    if not cd.startswith(b"PK\x01\x02") or entry_at < 46 \
            or cd[entry_at - 46: entry_at - 42] != b"PK\x01\x02":
        return None
    entry = cd[entry_at - 46: entry_at]
    crc, comp_size, file_size = struct.unpack("<III", entry[16:28])
    if struct.unpack("<I", entry[42:46])[0] != 0 or comp_size != file_size:
        return None
    info = TorchSaveInfo(path, "zip")
    names = directory_names(cd)
    if names is None:
        info.problem = (f"not scanned: its zip central directory lists more than "
                        f"{MAX_ZIP_ENTRIES:,} entries")
        return info
    if file_size > cap:
        info.problem = (f"not scanned: its pickle is {file_size} bytes "
                        f"(more than the {cap}-byte limit)")
        return info
    f.seek(30 + name_len + extra_len)
    data = f.read(file_size)
    if len(data) != file_size or zlib.crc32(data) != crc:
        return None
    rec = _Recorder()
    try:
        rec.obj = _ScanUnpickler(io.BytesIO(_checked(data)), rec).load()
    except PickleRefused as exc:
        info.problem = str(exc)
    except Exception as exc:   # any malformed pickle: reported, never fatal
        info.problem = _pickle_problem(exc)
    _fill(info, rec)
    if info.problem is None:
        prefix = name[: -len(b"data.pkl")].decode("utf-8", "replace")
        missing = [k for k in rec.storages if f"{prefix}data/{k}".encode() not in names]
        if missing:
            info.problem = (f"corrupt: {len(missing)} tensor record(s) missing "
                            f"(e.g. {prefix}data/{missing[0]})")
    return info


def _inspect_broken_zip(path: str, f: Any, cap: int, exc: BaseException
                        ) -> Optional[TorchSaveInfo]:
    """No readable central directory (typically truncated): read data.pkl from its local
    header, if it is the first record, as torch writes it. Not a torch file otherwise."""
    f.seek(0)
    header = f.read(30)
    if len(header) < 30 or not header.startswith(ZIP_LOCAL):
        return None
    method, name_len, extra_len = struct.unpack("<8xH16xHH", header)
    name = f.read(name_len).decode("utf-8", "replace")
    if not (name.endswith("/data.pkl") and name.count("/") == 1) or method != 0:
        return None
    f.seek(30 + name_len + extra_len)
    info = TorchSaveInfo(path, "zip", problem=f"truncated or corrupt zip archive ({exc})")
    rec = _Recorder()
    try:
        # A pickle ends at its STOP opcode, so the data descriptor is not needed.
        _ScanUnpickler(io.BytesIO(_read_pickle(f, f.tell() + cap)), rec).load()
    except Exception:
        pass
    return _fill(info, rec)


def _inspect_legacy(path: str, f: Any, cap: int) -> TorchSaveInfo:
    """Five pickles: magic, protocol, sys_info, the object, the storage keys; then the
    storages, each an 8-byte count plus its bytes (so the file's size can be checked)."""
    info = TorchSaveInfo(path, "legacy")
    rec = _Recorder()
    try:
        for _ in range(4):   # magic, protocol, sys_info, then the saved object
            data = _read_pickle(f, cap)
            rec.obj = _ScanUnpickler(io.BytesIO(data), rec).load()
        keys_rec = _Recorder()
        keys = _ScanUnpickler(io.BytesIO(_read_pickle(f, cap)), keys_rec).load()
        rec.globals |= keys_rec.globals
    except PickleRefused as exc:
        info.problem = str(exc)
        return _fill(info, rec)
    except Exception as exc:
        info.problem = _pickle_problem(exc)
        return _fill(info, rec)
    _fill(info, rec)
    expected = _legacy_tail_bytes(rec, keys)
    if expected is not None:
        size = os.fstat(f.fileno()).st_size
        end = f.tell() + expected
        if size < end:
            info.problem = (f"truncated: {size} bytes, the storages need {end} "
                            f"({end - size} missing)")
    return info


def _legacy_tail_bytes(rec: _Recorder, keys: Any) -> Optional[int]:
    if not isinstance(keys, list) or set(keys) != set(rec.storages):
        return None
    total = 0
    for key in keys:
        stype, numel = rec.storages[key]
        size = _ELEMENT_SIZE.get(stype)
        if size is None:
            return None
        total += 8 + numel * size
    return total
