"""Layout ops as copies with remapped indices: transpose, reshape, slice, pads, split, concat, expand, resize."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lower.ir import (
    F32,
    I64,
    Buffer,
    Cast,
    Expr,
    IntImm,
    Select,
    Stage,
    Stmt,
    Store,
    Var,
    const,
    emax,
    emin,
    ge,
    land,
    loops,
    lt,
    seq,
    simplify,
)
from lower.ops_to_loops.core import LowerCtx, bcast_index, clip, copy_stage, loop_vars, lowering, unflatten
from rewrite.ir.graph import Node
from rewrite.ir.ops.resize import TORCH, resize_taps


# ============================================================== layout
@lowering("transpose")
def lower_transpose(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    perm = node.attrs["perm"]
    inv = [perm.index(d) for d in range(len(perm))]
    return copy_stage(ctx, ctx.tag, outs[0], lambda vs: ins[0][tuple(vs[inv[d]] for d in range(len(perm)))])


def reshape_index(vs: Sequence[Expr], out_shape: Sequence[int], in_shape: Sequence[int]) -> tuple[Expr, ...]:
    flat: Expr = IntImm(0)
    stride = 1
    for v, s in zip(reversed(list(vs)), reversed(list(out_shape)), strict=False):
        flat = flat + v * stride
        stride *= s
    ranges = {v.name: (0, s - 1) for v, s in zip(vs, out_shape, strict=False) if isinstance(v, Var)}
    return tuple(simplify(e, ranges) for e in unflatten(simplify(flat, ranges), in_shape))


@lowering("reshape")
def lower_reshape(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    return copy_stage(ctx, ctx.tag, outs[0], lambda vs: ins[0][reshape_index(vs, outs[0].shape, ins[0].shape)])


def _shifted(vs: Sequence[Expr], axis: int, off: int) -> tuple[Expr, ...]:
    return tuple(v + off if d == axis and off else v for d, v in enumerate(vs))


def _shifted_load(src: Buffer, axis: int, off: int) -> Callable[[list[Var]], Expr]:
    """``vs -> src[vs, shifted by off along axis]``: the reads of one slice of ``src``."""
    return lambda vs: src[_shifted(vs, axis, off)]


@lowering("slice")
def lower_slice(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    ax = node.attrs["axis"] % ins[0].rank
    return copy_stage(ctx, ctx.tag, outs[0], _shifted_load(ins[0], ax, node.attrs["start"]))


@lowering("pad2d")
def lower_pad2d(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, out = ins[0], outs[0]
    top, _, left, _ = node.attrs["pads"]
    H, W = x.shape[-2], x.shape[-1]

    def src(vs):
        h, w = vs[-2] - top, vs[-1] - left
        ok = land(ge(h, 0), lt(h, H), ge(w, 0), lt(w, W))
        return Select(ok, x[(*vs[:-2], clip(h, H - 1), clip(w, W - 1))], const(0.0))

    return copy_stage(ctx, ctx.tag, out, src)


@lowering("split")
def lower_split(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    ax = node.attrs["axis"] % ins[0].rank
    parts, off = [], 0
    for k, out in enumerate(outs):
        parts.append(copy_stage(ctx, f"{ctx.tag}.{k}", out, _shifted_load(ins[0], ax, off)))
        off += out.shape[ax]
    return seq(*parts)


@lowering("concat")
def lower_concat(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    out = outs[0]
    ax = node.attrs["axis"] % out.rank
    parts, off = [], 0
    for k, x in enumerate(ins):
        vs = loop_vars(ctx, x.shape)
        parts.append(
            Stage(
                f"{ctx.tag}.{k}",
                loops(list(zip(vs, x.shape, strict=False)), Store(out, _shifted(vs, ax, off), x[tuple(vs)])),
            )
        )
        off += x.shape[ax]
    return seq(*parts)


@lowering("expand")
def lower_expand(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    return copy_stage(ctx, ctx.tag, outs[0], lambda vs: ins[0][bcast_index(ins[0].shape, outs[0].shape, vs)])


@lowering("pad")
def lower_pad(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, p = ins[0], node.attrs["pads"]

    def src(vs: list[Var]) -> Expr:
        pos = [v - p[2 * d] for d, v in enumerate(vs)]
        conds = [land(ge(q, 0), lt(q, n)) for q, n, d in zip(pos, x.shape, range(x.rank)) if p[2 * d] or p[2 * d + 1]]
        tap = x[
            tuple(clip(q, n - 1) if (p[2 * d] or p[2 * d + 1]) else q for d, (q, n) in enumerate(zip(pos, x.shape)))
        ]
        return Select(land(*conds), tap, const(node.attrs["value"])) if conds else tap

    return copy_stage(ctx, ctx.tag, outs[0], src)


def _src_coord(o: Expr, n_in: int, n_out: int, align: bool) -> Expr:
    """torch's ``area_pixel_compute_source_index`` for bilinear (float32, clamped at 0)."""
    of = Cast(F32, o)
    if align:
        return of * const((n_in - 1) / (n_out - 1) if n_out > 1 else 0.0)
    return emax((of + const(0.5)) * const(n_in / n_out) - const(0.5), 0.0)


@lowering("resize")
def lower_resize(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, out = ins[0], outs[0]
    _, _, H, W = x.shape
    _, _, OH, OW = out.shape
    if node.attrs["coord"] != TORCH:
        return _lower_onnx_resize(node, x, out, ctx)
    if node.attrs["mode"] == "nearest":
        # torch: src = min(floor(dst * (in / out)), in - 1) in float32
        def near(o: Expr, n_in: int, n_out: int) -> Expr:
            return emin(Cast(I64, Cast(F32, o) * const(n_in / n_out)), n_in - 1)

        return copy_stage(ctx, ctx.tag, out, lambda vs: x[vs[0], vs[1], near(vs[2], H, OH), near(vs[3], W, OW)])
    align = bool(node.attrs["align_corners"])

    def taps(o: Expr, n_in: int, n_out: int) -> list[tuple[Expr, Expr | None]]:
        """An axis's (source index, weight) pairs.  An axis torch does not resize it copies, weightless: a
        neighbour's NaN or inf would otherwise enter through a weight of 0 (fuzz seed 4941)."""
        if n_in == n_out:
            return [(o, None)]
        src = _src_coord(o, n_in, n_out, align)
        i0 = Cast(I64, src)  # src >= 0: truncation is floor
        lam = src - Cast(F32, i0)
        return [(i0, const(1.0) - lam), (emin(i0 + 1, n_in - 1), lam)]

    def bil(vs: list[Var]) -> Expr:
        n, c = vs[0], vs[1]

        def weighted(v: Expr, w: Expr | None) -> Expr:
            return v if w is None else w * v

        rows = []
        for h, wh in taps(vs[2], H, OH):
            cols = [weighted(x[n, c, h, w], ww) for w, ww in taps(vs[3], W, OW)]
            rows.append(weighted(cols[0] + cols[1] if len(cols) == 2 else cols[0], wh))
        return rows[0] + rows[1] if len(rows) == 2 else rows[0]

    return copy_stage(ctx, ctx.tag, out, bil)


def _lower_onnx_resize(node: Node, x: Buffer, out: Buffer, ctx: LowerCtx) -> Stmt:
    """ONNX coordinate modes: the float64 taps of ``resize_taps`` (the reference's own) baked in as
    per-axis constant tables, indices stored as exact float32 integers (constants are float32)."""
    a = node.attrs
    tables: list[tuple[Buffer, Buffer, Buffer]] = []
    for axis, scale in ((2, a["scale_h"]), (3, a["scale_w"])):
        taps = resize_taps(x.shape[axis], out.shape[axis], a["mode"], a["coord"], a["nearest_mode"], scale)
        bufs = []
        for part, t in zip(("i0", "i1", "w"), taps, strict=True):
            b = Buffer(ctx.namer.name(f"{ctx.tag}_{'hw'[axis - 2]}{part}"), (out.shape[axis],))
            ctx.new_consts[b.name] = t.float()
            bufs.append(b)
        tables.append((bufs[0], bufs[1], bufs[2]))
    (h0t, h1t, lht), (w0t, w1t, lwt) = tables
    H, W = x.shape[2], x.shape[3]

    def src(vs: list[Var]) -> Expr:
        n, c, oh, ow = vs
        h0, w0 = clip(Cast(I64, h0t[oh]), H - 1), clip(Cast(I64, w0t[ow]), W - 1)
        if a["mode"] == "nearest":
            return x[n, c, h0, w0]
        h1, w1 = clip(Cast(I64, h1t[oh]), H - 1), clip(Cast(I64, w1t[ow]), W - 1)
        lh, lw, one = lht[oh], lwt[ow], const(1.0)
        top = (one - lw) * x[n, c, h0, w0] + lw * x[n, c, h0, w1]
        return (one - lh) * top + lh * ((one - lw) * x[n, c, h1, w0] + lw * x[n, c, h1, w1])

    return copy_stage(ctx, ctx.tag, out, src)
