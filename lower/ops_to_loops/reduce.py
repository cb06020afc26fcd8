"""Reductions over any set of axes, with or without keepdim."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from lower.ir import (
    I64,
    Allocate,
    Buffer,
    Expr,
    IntImm,
    Stage,
    Stmt,
    Store,
    const,
    emax,
    emin,
    loops,
    seq,
)
from lower.ops_to_loops.core import NEG_INF, LowerCtx, local_scalar, lowering
from rewrite.ir.graph import Node

I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def _out_index(axes: Sequence[int], keep: bool, in_rank: int, vs: Sequence[Expr]) -> tuple[Expr, ...]:
    """The output index of input index ``vs`` of a reduction (the reduced axes at 0 or dropped)."""
    if keep:
        return tuple(IntImm(0) if d in axes else v for d, v in enumerate(vs))
    return tuple(v for d, v in enumerate(vs) if d not in axes)


@lowering("reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_var")
def lower_reduce(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Per output element: accumulate in the output over the reduced axes (two passes for var)."""
    x, out = ins[0], outs[0]
    axes, keep = tuple(node.attrs["axes"]), bool(node.attrs["keepdim"])
    kept = [d for d in range(x.rank) if d not in axes]
    ov = {d: ctx.var(f"i{d}") for d in kept}
    count = math.prod(x.shape[d] for d in axes)

    def sweep(upd: Callable[[Expr, Expr], Expr], acc: Buffer, acc_idx: tuple[Expr, ...]) -> Stmt:
        rv = {d: ctx.var(f"r{d}") for d in axes}
        idx = tuple(ov[d] if d in ov else rv[d] for d in range(x.rank))
        return loops([(rv[d], x.shape[d]) for d in axes], Store(acc, acc_idx, upd(acc[acc_idx], x[idx])))

    oidx = _out_index(axes, keep, x.rank, [ov.get(d, IntImm(0)) for d in range(x.rank)])
    o = out[oidx]
    op = node.op
    if op == "reduce_var":
        mean = local_scalar(ctx, "mean")
        z = IntImm(0)
        rv = {d: ctx.var(f"r{d}") for d in axes}
        idx = tuple(ov[d] if d in ov else rv[d] for d in range(x.rank))
        dev = x[idx] - mean[z]
        body: Stmt = Allocate(
            mean,
            seq(
                Store(mean, (z,), const(0.0)),
                sweep(lambda a, v: a + v, mean, (z,)),
                Store(mean, (z,), mean[z] * const(1.0 / count)),
                Store(out, oidx, const(0.0)),
                loops([(rv[d], x.shape[d]) for d in axes], Store(out, oidx, o + dev * dev)),
                Store(out, oidx, o / const(float(max(count - node.attrs["correction"], 0)))),
            ),
        )
    else:
        start: Expr
        if x.dtype == I64:  # int64 sum, prod, max, min (no int64 mean or var): exact, sums and products wrap
            start = IntImm({"reduce_max": I64_MIN, "reduce_min": I64_MAX, "reduce_prod": 1}.get(op, 0))
        else:
            start = const({"reduce_max": NEG_INF, "reduce_min": float("inf"), "reduce_prod": 1.0}.get(op, 0.0))
        upd: Callable[[Expr, Expr], Expr] = {
            "reduce_max": lambda a, v: emax(a, v),
            "reduce_min": lambda a, v: emin(a, v),
            "reduce_prod": lambda a, v: a * v,
        }.get(op, lambda a, v: a + v)
        fin = Store(out, oidx, o * const(1.0 / count)) if op == "reduce_mean" else None
        body = seq(Store(out, oidx, start), sweep(upd, out, oidx), fin)
    return Stage(ctx.tag, loops([(ov[d], x.shape[d]) for d in kept], body))
