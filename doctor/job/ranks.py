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
    or a main-process predicate (`is_main_process()`, `trainer.is_global_zero`)."""
    if isinstance(test, ast.BoolOp):
        return any(rank_conditional(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return rank_conditional(test.operand)
    if isinstance(test, ast.Compare):
        sides = [test.left, *test.comparators]
        ranks = [s for s in sides if _rank_expr(s)]
        return bool(ranks) and not all(_not_a_rank(s) for s in sides if s not in ranks)
    return bool(_MAIN.match(last_name(test)))


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
