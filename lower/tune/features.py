"""Features of a scheduled kernel, for the learned cost model (``lower.tune.model``).

One fixed-length vector per candidate, read from its loop IR and its steps (as Ansor reads its programs'
loop nests), so one model learns across kernels and not only within one:

* the problem: log2 of the contraction's rows, columns, reduction and batch (0 for other kernels), of the
  bytes the kernel's parameters hold, and the target's thread count;
* the loop nest: loops of each kind (serial, parallel, vectorized, unrolled), log2 of the parallel root's
  extent and of the vectorized loops' lanes, the deepest nest, the stages, the stack scratch (``Allocate``)
  and the buffers scheduling added (packed operands), in log2 bytes;
* the micro-kernel (``Tensorize``): its rows and columns, whether it prefetches A or B, runs segments;
* the decisions themselves (``DECISION_NAMES``; an elementwise or row kernel's per-stage ones summed over
  its stages): integers in log2, booleans 0/1, -1 where the candidate did not take that decision.
"""

from __future__ import annotations

import math

from lower.ir import ITEM_BYTES, Allocate, For, LoopKind, Stage, Stmt, walk_stmt
from lower.ir.traverse import stmt_children
from lower.schedule import Schedule, Tensorize
from lower.tune.space import TuneTask

DECISION_NAMES = (
    "mr",
    "rows",
    "nc",
    "mc",
    "kc",
    "panels_outer",
    "parallel",
    "pack_a",
    "b_in_place",
    "stream_a",
    "fold_post",
    "unroll",
)
STAGE_DECISIONS = ("parallel", "chunk")  # asked per stage as "STAGE:parallel", "STAGE:chunk"


def _lg(x: float) -> float:
    return math.log2(x) if x > 0 else 0.0


def _num(v: object) -> float:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        return _lg(float(v)) + 1.0
    return 0.0


def features(task: TuneTask, sched: Schedule) -> list[float]:
    """The feature vector of ``task``'s kernel scheduled as ``sched`` (see the module docstring)."""
    k = sched.kernel
    g = task.gemm
    batch = math.prod(g.init_extents[:-2]) if g is not None and g.init_extents[:-2] else 1
    prob = [_lg(g.m), _lg(g.n), _lg(g.kdim), _lg(batch)] if g is not None else [0.0] * 4
    param_bytes = sum(b.size * ITEM_BYTES.get(b.dtype, 4) for b in k.params[: task.n_params])
    extra_bytes = sum(b.size * ITEM_BYTES.get(b.dtype, 4) for b in k.params[task.n_params :])
    kinds = dict.fromkeys(LoopKind, 0)
    par_extent, vec_lanes, stages, stack = 0, 0, 0, 0
    for x in walk_stmt(k.body):
        if isinstance(x, Stage):
            stages += 1
        elif isinstance(x, Allocate):
            stack += x.buf.size * ITEM_BYTES.get(x.buf.dtype, 4)
        elif isinstance(x, For):
            kinds[x.kind] += 1
            ext = getattr(x.extent, "value", 0)
            if x.kind is LoopKind.PARALLEL:
                par_extent = max(par_extent, ext)
            elif x.kind is LoopKind.VECTORIZED:
                vec_lanes += ext
    depth = _depth(k.body)
    nest = [
        *(float(kinds[x]) for x in LoopKind),
        _lg(par_extent),
        _lg(vec_lanes),
        float(depth),
        float(stages),
        _lg(stack),
        _lg(extra_bytes),
        _lg(param_bytes),
        float(task.target.threads),
    ]
    tz = next((st for st in sched.steps if isinstance(st, Tensorize)), None)
    micro = (
        [float(tz.mr), float(tz.nr), float("a" in tz.stream), float("b" in tz.stream), float(tz.segments)]
        if tz is not None
        else [0.0] * 5
    )
    d = sched.decisions
    dec = [_num(d[n]) if n in d else -1.0 for n in DECISION_NAMES]
    per_stage = []
    for suffix in STAGE_DECISIONS:
        vals = [v for n, v in d.items() if n.endswith(f":{suffix}")]
        per_stage.append(sum(_num(v) for v in vals) if vals else -1.0)
    return [*prob, *nest, *micro, *dec, *per_stage]


def _depth(s: Stmt) -> int:
    """The deepest loop nest under ``s``."""
    below = max((_depth(c) for c in stmt_children(s)), default=0)
    return below + 1 if isinstance(s, For) else below


N_FEATURES = 4 + len(LoopKind) + 8 + 5 + len(DECISION_NAMES) + len(STAGE_DECISIONS)

__all__ = ["DECISION_NAMES", "N_FEATURES", "features"]
