"""Normalizations and softmax: row statistics in local accumulators."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch

from lower.ir import (
    Allocate,
    Buffer,
    Expr,
    For,
    IntImm,
    Stage,
    Stmt,
    Store,
    Var,
    call,
    const,
    emax,
    emin,
    loops,
    seq,
)
from lower.ops_to_loops.core import NEG_INF, LowerCtx, local_scalar, loop_vars, lowering, unflatten
from rewrite.ir.graph import Node


# ============================================================== normalization
@lowering("batchnorm")
def lower_batchnorm(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, w, b, mean, var = ins
    out = outs[0]
    eps = node.attrs["eps"]
    vs = loop_vars(ctx, out.shape)
    c = vs[1]
    if all(p.name in ctx.consts for p in (w, b, mean, var)):
        # inference BN is an affine map per channel: fold it into two constants once
        tw, tb, tm, tv = (ctx.consts[p.name].double() for p in (w, b, mean, var))
        scale = tw / torch.sqrt(tv + eps)
        shift = tb - tm * scale
        sb = Buffer(ctx.namer.name(f"{ctx.tag}_scale"), (out.shape[1],))
        tb_ = Buffer(ctx.namer.name(f"{ctx.tag}_shift"), (out.shape[1],))
        ctx.new_consts[sb.name] = scale.float()
        ctx.new_consts[tb_.name] = shift.float()
        val = x[tuple(vs)] * sb[c] + tb_[c]
    else:
        val = (x[tuple(vs)] - mean[c]) * call("rsqrt", var[c] + const(eps)) * w[c] + b[c]
    return Stage(ctx.tag, loops(list(zip(vs, out.shape, strict=False)), Store(out, tuple(vs), val)))


def _rows(ctx: LowerCtx, shape: Sequence[int], axis: int) -> tuple[list[Var], Callable[[Expr], tuple[Expr, ...]]]:
    """Loop vars over every dim but ``axis`` and a function building a full index."""
    outer = [ctx.var(f"i{d}") for d in range(len(shape)) if d != axis]

    def index(j: Expr) -> tuple[Expr, ...]:
        it = iter(outer)
        return tuple(j if d == axis else next(it) for d in range(len(shape)))

    return outer, index


@lowering("softmax")
def lower_softmax(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, out = ins[0], outs[0]
    axis = node.attrs["axis"] % x.rank
    n = x.shape[axis]
    outer, index = _rows(ctx, x.shape, axis)
    mx, sm = local_scalar(ctx, "maxv"), local_scalar(ctx, "sumv")
    j1, j2, j3 = ctx.var("j"), ctx.var("j"), ctx.var("j")
    z = IntImm(0)
    body = seq(
        Store(mx, (z,), const(NEG_INF)),
        For(j1, IntImm(n), Store(mx, (z,), emax(mx[z], x[index(j1)]))),
        Store(sm, (z,), const(0.0)),
        For(
            j2,
            IntImm(n),
            seq(Store(out, index(j2), call("exp", x[index(j2)] - mx[z])), Store(sm, (z,), sm[z] + out[index(j2)])),
        ),
        Store(sm, (z,), const(1.0) / sm[z]),
        For(j3, IntImm(n), Store(out, index(j3), out[index(j3)] * sm[z])),
    )
    body = Allocate(mx, Allocate(sm, body))
    return Stage(
        ctx.tag,
        loops([(v, x.shape[d]) for v, d in zip(outer, [d for d in range(x.rank) if d != axis], strict=False)], body),
    )


@lowering("layernorm")
def lower_layernorm(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, w, b = ins
    out = outs[0]
    axis = x.rank - 1
    n = x.shape[axis]
    outer, index = _rows(ctx, x.shape, axis)
    mean, var = local_scalar(ctx, "mean"), local_scalar(ctx, "rstd")
    j1, j2, j3 = ctx.var("j"), ctx.var("j"), ctx.var("j")
    z = IntImm(0)
    inv_n = const(1.0 / n)
    body = seq(
        Store(mean, (z,), const(0.0)),
        For(j1, IntImm(n), Store(mean, (z,), mean[z] + x[index(j1)])),
        Store(mean, (z,), mean[z] * inv_n),
        Store(var, (z,), const(0.0)),
        For(j2, IntImm(n), Store(var, (z,), var[z] + (x[index(j2)] - mean[z]) * (x[index(j2)] - mean[z]))),
        Store(var, (z,), call("rsqrt", var[z] * inv_n + const(node.attrs["eps"]))),
        For(j3, IntImm(n), Store(out, index(j3), (x[index(j3)] - mean[z]) * var[z] * w[j3] + b[j3])),
    )
    body = Allocate(mean, Allocate(var, body))
    return Stage(ctx.tag, loops([(v, x.shape[d]) for v, d in zip(outer, range(axis), strict=False)], body))


@lowering("groupnorm")
def lower_groupnorm(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Per (n, group): mean and variance over the group's channels and positions, then the affine map.

    A group's channels and positions are contiguous, so the statistics run over its ``m`` elements as one flat
    row (the multi-index of ``j`` folds back to ``j`` in the address: a unit-stride vector loop); the affine map
    runs per channel over its positions, the channel's weight and bias loop-invariant (a flat loop would gather
    ``w[j // positions]`` per lane: 3-10x slower)."""
    x, w, b = ins
    out = outs[0]
    G, eps = node.attrs["num_groups"], node.attrs["eps"]
    N, C = x.shape[:2]
    rest = x.shape[2:]
    Cg = C // G
    P = math.prod(rest)
    m = Cg * P
    n, g, c = ctx.var("n"), ctx.var("g"), ctx.var("c")
    mean, rstd = local_scalar(ctx, "mean"), local_scalar(ctx, "rstd")
    z = IntImm(0)

    def at(j: Var) -> tuple[Expr, ...]:
        flat = unflatten(j, (Cg, *rest))
        return (n, g * Cg + flat[0], *flat[1:])

    def pos(p: Var) -> tuple[Expr, ...]:
        return (n, g * Cg + c, *unflatten(p, rest))

    j1, j2, p3 = ctx.var("j"), ctx.var("j"), ctx.var("p")
    inv = const(1.0 / m)
    affine = Store(out, pos(p3), (x[pos(p3)] - mean[z]) * rstd[z] * w[g * Cg + c] + b[g * Cg + c])
    body = seq(
        Store(mean, (z,), const(0.0)),
        For(j1, IntImm(m), Store(mean, (z,), mean[z] + x[at(j1)])),
        Store(mean, (z,), mean[z] * inv),
        Store(rstd, (z,), const(0.0)),
        For(j2, IntImm(m), Store(rstd, (z,), rstd[z] + (x[at(j2)] - mean[z]) * (x[at(j2)] - mean[z]))),
        Store(rstd, (z,), call("rsqrt", rstd[z] * inv + const(eps))),
        loops([(c, Cg), (p3, P)], affine),
    )
    return Stage(ctx.tag, loops([(n, N), (g, G)], Allocate(mean, Allocate(rstd, body))))


@lowering("rmsnorm")
def lower_rmsnorm(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, w = ins
    out = outs[0]
    axis = x.rank - 1
    n = x.shape[axis]
    outer, index = _rows(ctx, x.shape, axis)
    ms = local_scalar(ctx, "rms")
    j1, j2 = ctx.var("j"), ctx.var("j")
    z = IntImm(0)
    body = seq(
        Store(ms, (z,), const(0.0)),
        For(j1, IntImm(n), Store(ms, (z,), ms[z] + x[index(j1)] * x[index(j1)])),
        Store(ms, (z,), call("rsqrt", ms[z] * const(1.0 / n) + const(node.attrs["eps"]))),
        For(j2, IntImm(n), Store(out, index(j2), x[index(j2)] * ms[z] * w[j2])),
    )
    return Stage(
        ctx.tag, loops([(v, x.shape[d]) for v, d in zip(outer, range(axis), strict=False)], Allocate(ms, body))
    )


@lowering("lrn")
def lower_lrn(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Per (n, c): the window's sum of squares accumulated in the output row (channels ``lo .. hi``, clipped
    at the edges: a loop bound, no per-element test), then ``x / (bias + alpha/size * sum)^beta`` in place.
    The positions (every dim after the channel) are the inner loop of each step: unit stride, vectorized."""
    x, out = ins[0], outs[0]
    if x.rank < 2:
        raise ctx.error(f"lrn normalizes across axis 1, got shape {list(x.shape)}")
    size, alpha, beta, bias = (node.attrs[k] for k in ("size", "alpha", "beta", "bias"))
    if size < 1:
        raise ctx.error(f"lrn size must be at least 1, got {size}")
    N, C = x.shape[:2]
    rest = x.shape[2:]
    n, c, t = ctx.var("n"), ctx.var("c"), ctx.var("t")
    lo = emax(c - (size - 1) // 2, IntImm(0))
    hi = emin(c + size // 2, IntImm(C - 1))

    def row(stmt: Callable[[tuple[Expr, ...]], Stmt]) -> Stmt:
        """``stmt`` over every position of the (n, c) row."""
        vs = [ctx.var(f"s{d}") for d in range(len(rest))]
        return loops(list(zip(vs, rest)), stmt(tuple(vs)))

    def sq(s: tuple[Expr, ...]) -> Expr:
        v = x[(n, lo + t, *s)]
        return v * v

    body = seq(
        row(lambda s: Store(out, (n, c, *s), const(0.0))),
        For(t, hi - lo + 1, row(lambda s: Store(out, (n, c, *s), out[(n, c, *s)] + sq(s)))),
        row(
            lambda s: Store(
                out,
                (n, c, *s),
                x[(n, c, *s)] / call("power", const(bias) + const(alpha / size) * out[(n, c, *s)], const(beta)),
            )
        ),
    )
    return Stage(ctx.tag, loops([(n, N), (c, C)], body))
