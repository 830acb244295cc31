"""A model of PyTorch's CUDA caching allocator, to predict `max_memory_reserved` from the
allocations and frees of one training step (fake.Counter's `events`).

The rules are c10/cuda/CUDACachingAllocator.cpp's defaults (no PYTORCH_CUDA_ALLOC_CONF):
requests are rounded up to 512 B; those of at most 1 MiB come from the small pool, carved
out of 2 MiB segments; larger ones from the large pool, where a request under 10 MiB gets
a 20 MiB segment and a larger one its own segment rounded up to 2 MiB. A request takes the
best-fitting free block of its pool (smallest size, then lowest address) and splits it when
the rest is at least 512 B (small pool) or more than 1 MiB (large pool); a freed block
merges with its free neighbours in its segment. Segments are never given back (no
empty_cache during a step), so reserved is the sum of the segment sizes.
"""
from __future__ import annotations

import bisect
from typing import Dict, Iterable, List, Tuple

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20          # kSmallSize: requests up to this use the small pool
SMALL_BUFFER = 2 << 20        # kSmallBuffer: a small-pool segment
LARGE_BUFFER = 20 << 20       # kLargeBuffer: a large-pool segment for requests < 10 MiB
MIN_LARGE_ALLOC = 10 << 20    # kMinLargeAlloc
ROUND_LARGE = 2 << 20         # kRoundLarge


def round_size(nbytes: int) -> int:
    return MIN_BLOCK if nbytes < MIN_BLOCK else -(-nbytes // MIN_BLOCK) * MIN_BLOCK


def segment_size(size: int) -> int:
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-size // ROUND_LARGE) * ROUND_LARGE


class Allocator:
    """Blocks are [addr, size, free, segment]; each pool keeps its free blocks sorted by
    (size, addr), as the allocator's BlockPool does."""

    def __init__(self) -> None:
        self.free_lists: Dict[bool, List[Tuple[int, int]]] = {True: [], False: []}
        # addr -> [size, free, small, seg_start, seg_end, addr of the block before or None]
        self.blocks: Dict[int, list] = {}
        self.by_key: Dict[int, int] = {}         # caller's key -> addr
        self.next_addr = 0
        self.reserved = 0
        self.peak_reserved = 0
        self.allocated = 0
        self.peak_allocated = 0

    def malloc(self, key: int, nbytes: int) -> None:
        size = round_size(nbytes)
        small = size <= SMALL_SIZE
        pool = self.free_lists[small]
        i = bisect.bisect_left(pool, (size, -1))
        if i < len(pool):
            bsize, addr = pool.pop(i)
        else:   # a new segment (cudaMalloc); addresses only need to be distinct and ordered
            bsize, addr = segment_size(size), self.next_addr
            self.next_addr += bsize
            self.reserved += bsize
            self.peak_reserved = max(self.peak_reserved, self.reserved)
            self.blocks[addr] = [bsize, True, small, addr, addr + bsize, None]
        block = self.blocks[addr]
        rest = bsize - size
        if rest >= MIN_BLOCK if small else rest > SMALL_SIZE:
            block[0] = size
            self.blocks[addr + size] = [rest, True, small, block[3], block[4], addr]
            self._link(addr + size)
            bisect.insort(pool, (rest, addr + size))
        block[1] = False
        self.by_key[key] = addr
        self.allocated += block[0]
        self.peak_allocated = max(self.peak_allocated, self.allocated)

    def free(self, key: int) -> None:
        addr = self.by_key.pop(key, None)
        if addr is None:
            return
        block = self.blocks[addr]
        size, _, small, seg_start, seg_end, prev = block
        self.allocated -= size
        pool = self.free_lists[small]
        end = addr + size
        after = self.blocks.get(end) if end < seg_end else None
        if after is not None and after[1]:   # merge with the free block after it
            pool.pop(bisect.bisect_left(pool, (after[0], end)))
            del self.blocks[end]
            size += after[0]
        if prev is not None and self.blocks[prev][1]:   # and with the free block before it
            psize = self.blocks[prev][0]
            pool.pop(bisect.bisect_left(pool, (psize, prev)))
            del self.blocks[addr]
            addr, size = prev, psize + size
        block = self.blocks[addr]
        block[0], block[1] = size, True
        self._link(addr)
        bisect.insort(pool, (size, addr))

    def _link(self, addr: int) -> None:
        """The block after `addr` in its segment now follows `addr`."""
        block = self.blocks[addr]
        end = addr + block[0]
        if end < block[4]:
            self.blocks[end][5] = addr


# What the allocator holds beside a training step, allocated before it and never freed,
# as recorded on an H200 (tests/data/gpu/memory_cuda_h200.json, README: 65-66 MiB once a
# backward had run): two cuBLAS workspaces of 32 MiB (the main thread's handle and
# autograd's) and two of 1 MiB (most likely cuBLASLt's, same two handles).
WORKSPACES = (32 << 20, 32 << 20, 1 << 20, 1 << 20)
DDP_FIRST_BUCKET = 1 << 20    # torch.distributed._DEFAULT_FIRST_BUCKET_BYTES
DDP_BUCKET = 25 << 20         # DistributedDataParallel's bucket_cap_mb=25


def ddp_buckets(nbytes: int) -> list:
    """The flat gradient buckets DDP's reducer allocates at its construction for `nbytes`
    of trainable parameters: the first of 1 MiB, the others of 25 MiB (each bucket really
    closes at the first parameter that takes it past the cap, so its size depends on the
    parameters' sizes; the caps are the model's approximation)."""
    out, cap = [], DDP_FIRST_BUCKET
    while nbytes > 0:
        out.append(min(cap, nbytes))
        nbytes, cap = nbytes - out[-1], DDP_BUCKET
    return out


def replay(events: Iterable[tuple], held: Iterable[int] = ()) -> Allocator:
    """`events`: ("a", key, bytes) an allocation, ("f", key) its free, ("r", key, bytes) a
    storage resized in place (freed, then allocated anew when bytes > 0). `held`: sizes
    allocated first and never freed (the cuBLAS workspaces the allocator holds before a
    step)."""
    al = Allocator()
    for i, nbytes in enumerate(held):
        al.malloc(-(i + 1) << 32, nbytes)
    for ev in events:
        if ev[0] == "a":
            al.malloc(ev[1], ev[2])
        elif ev[0] == "f":
            al.free(ev[1])
        else:
            al.free(ev[1])
            if ev[2]:
                al.malloc(ev[1], ev[2])
    return al


def reserved_peak(events: Iterable[tuple], held: Iterable[int] = ()) -> int:
    return replay(events, held).peak_reserved
