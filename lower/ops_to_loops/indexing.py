"""Indexing, comparison and selection ops on int64 and bool values."""

from __future__ import annotations

from collections.abc import Callable

from lower.ir import (
    I64,
    LOOP_DTYPE,
    Bin,
    Buffer,
    Cast,
    Expr,
    IntImm,
    Select,
    Stage,
    Stmt,
    Store,
    const,
    eq,
    ge,
    gt,
    le,
    loops,
    lt,
    ne,
)
from lower.ops_to_loops.core import LowerCtx, bcast_index, clip, copy_stage, loop_vars, lowering
from rewrite.ir.graph import Node

# ============================================================== indexing, comparison, selection
COMPARE: dict[str, Callable[[Expr, Expr], Expr]] = {"eq": eq, "ne": ne, "lt": lt, "le": le, "gt": gt, "ge": ge}
LOGICAL: dict[str, Callable[..., Expr]] = {
    "logical_not": lambda x: eq(Cast(I64, x), IntImm(0)),
    "logical_and": lambda x, y: Bin("and", x, y),
    "logical_or": lambda x, y: Bin("or", x, y),
    "where": lambda c, x, y: Select(c, x, y),
}


@lowering(*COMPARE, *LOGICAL, "masked_fill", "cast")
def lower_select_ops(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Comparisons, boolean logic, where, masked_fill and cast: elementwise, so they fuse like add."""
    out = outs[0]
    vs = loop_vars(ctx, out.shape)
    args = [x[bcast_index(x.shape, out.shape, vs)] for x in ins]
    op = node.op
    if op in COMPARE:
        val = COMPARE[op](args[0], args[1])
    elif op in LOGICAL:
        val = LOGICAL[op](*args)
    elif op == "masked_fill":
        val = Select(args[1], const(node.attrs["value"]), args[0])
    else:
        val = Cast(LOOP_DTYPE[node.attrs["dtype"]], args[0])
    return Stage(ctx.tag, loops(list(zip(vs, out.shape, strict=False)), Store(out, tuple(vs), val)))


def _index(ix: Expr, size: int) -> Expr:
    """An int64 index clamped into [0, size): an index torch would reject never reads outside a buffer."""
    return clip(ix, size - 1)


@lowering("embedding", "index_select", "gather")
def lower_indexing(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, idx = ins
    out = outs[0]
    if node.op == "embedding":  # out[i..., d] = table[ids[i...], d]
        return copy_stage(ctx, ctx.tag, out, lambda vs: x[_index(idx[tuple(vs[:-1])], x.shape[0]), vs[-1]])
    ax = node.attrs["axis"] % x.rank
    if node.op == "index_select":  # out[.., j, ..] = x[.., idx[j], ..]
        pick = lambda vs: idx[vs[ax]]
    else:  # gather: out[i..] = x[i.. with idx[i..] along axis]
        pick = lambda vs: idx[tuple(vs)]
    return copy_stage(
        ctx,
        ctx.tag,
        out,
        lambda vs: x[tuple(_index(pick(vs), x.shape[ax]) if d == ax else v for d, v in enumerate(vs))],
    )
