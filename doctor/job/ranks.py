"""Which branches of training code only some ranks take (read from the AST): shared by
collective-on-error-path and sqlite-on-shared-fs."""
from __future__ import annotations

import ast
import re

from doctor.job.sources import dotted

_RANK = re.compile(r"^_?(global_|local_|node_|world_|process_|proc_|my_|dist_)?rank"
                   r"(_id|_idx|_index)?$|^get_(global_|local_|node_)?rank$|^RANK$|^LOCAL_RANK$",
                   re.I)
_MAIN = re.compile(r"^_?is_(global_|local_)?(main|master)(_process|_proc|_rank|_worker)?$|"
                   r"^_?(local_)?(main|master)_process$|^_?is_(global_|local_)?(rank_?)?(zero|0)$"
                   r"|^_?(global_)?rank_?(zero|0)$|^_?is_rank_?0$")
_DIST_STATE = re.compile(r"^(is_initialized|is_available|is_distributed|is_dist_\w+|"
                         r"distributed|use_distributed|is_ddp|ddp|multi_gpu)$")
_WORLD = re.compile(r"^(get_)?world_size$|^WORLD_SIZE$", re.I)


def last_name(node: ast.AST) -> str:
    """The identifier that names the value: `x` of `a.b.x`, `f` of `a.f()`."""
    node = node.func if isinstance(node, ast.Call) else node
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):   # os.environ["RANK"]
        s = node.slice
        return s.value if isinstance(s, ast.Constant) and isinstance(s.value, str) else ""
    return ""


def _rank_expr(node: ast.AST) -> bool:
    """A rank: `rank`, `args.local_rank`, `dist.get_rank()`, `int(os.environ["RANK"])`."""
    if isinstance(node, ast.Call) and dotted(node.func) in ("int", "str") and node.args:
        return _rank_expr(node.args[0])
    if isinstance(node, ast.Call) and dotted(node.func).endswith(("environ.get", "getenv")) \
            and node.args:
        a = node.args[0]
        return isinstance(a, ast.Constant) and a.value in ("RANK", "LOCAL_RANK")
    if isinstance(node, ast.BinOp):   # rank % 2
        return _rank_expr(node.left)
    return bool(_RANK.match(last_name(node)))


def _not_a_rank(node: ast.AST) -> bool:
    """-1 or None: `local_rank != -1` asks "distributed or not", the same on every rank."""
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return all(_not_a_rank(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return True
    return isinstance(node, ast.Constant) and (node.value is None or (
        isinstance(node.value, (int, float)) and node.value < 0))


def rank_conditional(test: ast.AST) -> bool:
    """True when ranks can disagree on the test: a rank compared with a rank number,
    or a main-process predicate (`is_main_process()`, `trainer.is_global_zero`). Not a
    comparison that every rank answers alike (`rank >= 0`: see constant_on_every_rank)."""
    if isinstance(test, ast.BoolOp):
        return any(rank_conditional(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return rank_conditional(test.operand)
    if isinstance(test, ast.Compare):
        if constant_on_every_rank(test) is not None:
            return False
        sides = [test.left, *test.comparators]
        ranks = [s for s in sides if _rank_expr(s)]
        return bool(ranks) and not all(_not_a_rank(s) for s in sides if s not in ranks)
    return bool(_MAIN.match(last_name(test)))


def _number(node: ast.AST):
    """An int the code writes literally (`-1` is a unary minus on 1), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return -inner if inner is not None else None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


# rank OP c is the same for every rank r in 0..world_size-1 (any world size): true on
# all of them, or false on all of them, or (None) it depends on r.
_ALL_RANKS = {ast.GtE: lambda c: True if c <= 0 else None,
              ast.Gt: lambda c: True if c < 0 else None,
              ast.Lt: lambda c: False if c <= 0 else None,
              ast.LtE: lambda c: False if c < 0 else None,
              ast.Eq: lambda c: False if c < 0 else None,
              ast.NotEq: lambda c: True if c < 0 else None}
_FLIP = {ast.GtE: ast.LtE, ast.Gt: ast.Lt, ast.Lt: ast.Gt, ast.LtE: ast.GtE,
         ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}


def constant_on_every_rank(test: ast.AST):
    """True or False when the test has that value on every rank of any run: a rank is
    0..world_size-1, so `rank >= 0`, `rank > -1` and `rank < world_size` hold on every
    rank, `rank < 0` on none; `get_world_size() > 0` and `world_size >= 1` hold on
    every rank. None when it can differ between ranks or the doctor cannot tell."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = constant_on_every_rank(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [constant_on_every_rank(v) for v in test.values]
        stop = isinstance(test.op, ast.Or)     # one True decides an `or`, one False an `and`
        if stop in values:
            return stop
        return (not stop) if all(v is not None for v in values) else None
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if _number(left) is not None:   # 0 <= rank: the same as rank >= 0
        left, right, op = right, left, _FLIP.get(type(op), type(op))()
    c = _number(right)
    if isinstance(left, ast.Call) and dotted(left.func).endswith("get_rank") and \
            _group_arg(left) is not None:
        return None     # get_rank(group) is -1 outside the group: see membership
    # Only the rank itself: arithmetic moves its range (`rank - 1 >= 0` is false on 0).
    if _rank_expr(left) and not isinstance(left, ast.BinOp) and \
            not _WORLD.match(last_name(left)):
        if c is not None and type(op) in _ALL_RANKS:
            return _ALL_RANKS[type(op)](c)
        if _WORLD.match(last_name(right)):   # rank < world_size
            return {ast.Lt: True, ast.GtE: False}.get(type(op))
        return None
    if _WORLD.match(last_name(left)) and c is not None and type(op) in _ALL_RANKS:
        return _ALL_RANKS[type(op)](c - 1)   # world_size >= 1 on every run: as rank + 1
    return None


def same_on_every_rank(test: ast.AST) -> bool:
    """Distributed-state tests (`dist.is_initialized()`, `world_size > 1`): every rank of a
    distributed run takes the same branch, so a collective under them still runs."""
    if isinstance(test, ast.BoolOp):
        return all(same_on_every_rank(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return same_on_every_rank(test.operand)
    if isinstance(test, ast.Compare):
        return any(_WORLD.match(last_name(s)) for s in [test.left, *test.comparators])
    return bool(_DIST_STATE.match(last_name(test)))


def _group_arg(call: ast.Call):
    """The group a call names: its first argument or `group=`."""
    for k in call.keywords:
        if k.arg == "group":
            return k.value
    return call.args[0] if call.args else None


def membership(test: ast.AST):
    """What a test says about group membership: ("group", G) for `get_rank() in
    get_process_group_ranks(G)` and `get_rank(G) >= 0` (torch gives -1 outside G), or
    ("ranks", R) for `rank in R`, where R is a list of ranks (a group built from it with
    new_group(R) has exactly those members); also an `and` of one such part with parts
    that are the same on every rank (`get_world_size(g) > 1`). Not one with another
    rank-dependent part: `rank in R and rank == 0` passes only some of R's members.
    None otherwise."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        found = [m for v in test.values if (m := membership(v)) is not None]
        rest = [v for v in test.values if membership(v) is None]
        if len(found) != 1 or any(rank_conditional(v) or (
                constant_on_every_rank(v) is None and not same_on_every_rank(v) and
                any(_rank_expr(x) for x in ast.walk(v) if isinstance(x, ast.expr)))
                for v in rest):
            return None
        return found[0]
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, ast.In) and _rank_expr(left):
        if isinstance(right, ast.Call) and dotted(right.func).endswith(
                "get_process_group_ranks") and (g := _group_arg(right)) is not None:
            return ("group", ast.unparse(g))
        return ("ranks", ast.unparse(right))
    if isinstance(left, ast.Call) and dotted(left.func).endswith("get_rank") and \
            (g := _group_arg(left)) is not None:
        c = _number(right)
        if c is not None and ((isinstance(op, ast.GtE) and c == 0) or
                              (isinstance(op, (ast.NotEq, ast.Gt)) and c == -1)):
            return ("group", ast.unparse(g))
    return None


_OPS = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b,
        ast.Lt: lambda a, b: a < b, ast.LtE: lambda a, b: a <= b,
        ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b,
        ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
        ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
        ast.Mult: lambda a, b: a * b, ast.Mod: lambda a, b: a % b if b else None,
        ast.FloorDiv: lambda a, b: a // b if b else None}


def value_on_rank(test: ast.AST, rank: int, member: bool = True):
    """The test's value on that rank (read, never run): the rank is `rank`, a
    membership part (see membership) is `member`, numbers are literal. None when any
    other value takes part."""
    if membership(test) is not None and not isinstance(test, ast.BoolOp):
        return member
    if isinstance(test, ast.BoolOp):
        values = [value_on_rank(v, rank, member) for v in test.values]
        if None in values:
            return None
        return all(values) if isinstance(test.op, ast.And) else any(values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = value_on_rank(test.operand, rank, member)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare):
        left = value_on_rank(test.left, rank, member)
        for op, right in zip(test.ops, test.comparators):
            r = value_on_rank(right, rank, member)
            f = _OPS.get(type(op))
            if left is None or r is None or f is None:
                return None
            try:
                if not f(left, r):
                    return False
            except TypeError:
                return None
            left = r
        return True
    if isinstance(test, ast.BinOp):
        a, b = value_on_rank(test.left, rank, member), value_on_rank(test.right, rank, member)
        f = _OPS.get(type(test.op))
        return None if a is None or b is None or f is None else f(a, b)
    if isinstance(test, (ast.List, ast.Tuple, ast.Set)):
        items = [_number(e) for e in test.elts]
        return None if None in items else items
    if _number(test) is not None:
        return _number(test)
    name = last_name(test)     # the global rank only: a local rank is another number
    if _rank_expr(test) and not isinstance(test, ast.Call) and \
            not re.search("local|node", name, re.I) or isinstance(test, ast.Call) and \
            dotted(test.func).endswith("get_rank") and _group_arg(test) is None:
        return rank
    return None
