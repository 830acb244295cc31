"""Slurm's compressed host lists: `n[1-2],gpu[01,03-04]-x`."""
from __future__ import annotations

import re
from typing import Iterable


def expand_hostlist(text: str) -> list:
    """Slurm's compressed host list → names: `n[1-2],gpu[01,03-04]-x` → n1, n2, gpu01-x, …"""
    out: list = []
    for item in _split_top(text.strip()):
        names = [""]
        for lit, rng in re.findall(r"([^\[]*)(?:\[([^\]]*)\])?", item):
            names = [n + lit for n in names]
            if rng:
                parts = []
                for piece in rng.split(","):
                    lo, _, hi = piece.partition("-")
                    if not hi:
                        parts.append(lo)
                        continue
                    width = len(lo) if lo.startswith("0") else 0
                    step = 1 if int(hi) >= int(lo) else -1
                    parts += [str(i).zfill(width) for i in range(int(lo), int(hi) + step, step)]
                names = [n + p for n in names for p in parts]
        out += [n for n in names if n]
    return out


def _split_top(text: str) -> list:
    items, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    return [i for i in items + [cur] if i]


def compress_hostlist(names: Iterable[str]) -> str:
    """The inverse, for messages: n1, n2, n3, gpu7 → `gpu7,n[1-3]` (one numeric suffix)."""
    groups: dict = {}
    plain = []
    for name in sorted(set(names), key=_natural):
        m = re.match(r"^(.*?)(\d+)$", name)
        if m:
            groups.setdefault(m.group(1), []).append(m.group(2))
        else:
            plain.append(name)
    out = list(plain)
    for prefix, nums in groups.items():
        runs: list = []
        for n in nums:
            if runs and int(n) == int(runs[-1][1]) + 1 and len(n) == len(runs[-1][1]):
                runs[-1][1] = n
            else:
                runs.append([n, n])
        if len(nums) == 1:
            out.append(prefix + nums[0])
        else:
            out.append(prefix + "[" + ",".join(a if a == b else f"{a}-{b}" for a, b in runs)
                       + "]")
    return ",".join(out)


def _natural(name: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


