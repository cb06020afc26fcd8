"""Pooling: windows with padding bounds, global and adaptive average pooling."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lower.ir import (
    F32,
    Allocate,
    Buffer,
    Cast,
    Expr,
    For,
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
)
from lower.ops_to_loops.core import NEG_INF, LowerCtx, clip, lowering
from lower.ops_to_loops.window import ROW, padded_row, padded_slice, slice_shape
from rewrite.ir.graph import Node


# ============================================================== pooling
def _window(o: Expr, k: Expr, size: int, kern: int, stride: int, pad: int) -> tuple[Expr, Expr]:
    """Input coordinate of window tap ``k`` of output ``o`` and whether it lies inside the input."""
    pos = o * stride - pad + k
    return pos, land(ge(pos, 0), lt(pos, size))


@lowering("maxpool2d", "avgpool2d", "maxpool2d_blocked", "avgpool2d_blocked")
def lower_pool(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """NCHW (short rows through a padded, phase-split slice per plane: ``pool_rows``), or NCHWc
    (``_blocked``: the block's lanes innermost, every tap one vector of channels)."""
    x, out = ins[0], outs[0]
    a = node.attrs
    if not ctx.grid and x.rank == 4 and pool_flat(x.shape[2:], out.shape[2:], a["stride"]):
        return _pool_flat(node, x, out, ctx)
    if not ctx.grid and x.rank == 4 and pool_rows(out.shape[2:], a["kernel"], a["stride"]):  # GPU: a thread each
        return _pool_rows(node, x, out, ctx)
    N, C, H, W = x.shape[:4]
    _, _, OH, OW = out.shape[:4]
    (KH, KW), (SH, SW), (PH, PW) = a["kernel"], a["stride"], a["padding"]
    n, c, oh, ow, kh, kw, lane = (ctx.var(s) for s in ("n", "c", "oh", "ow", "kh", "kw", "l"))
    lanes = (lane,) if x.rank == 5 else ()
    ih, okh = _window(oh, kh, H, KH, SH, PH)
    iw, okw = _window(ow, kw, W, KW, SW, PW)
    tap = x[(n, c, clip(ih, H - 1), clip(iw, W - 1), *lanes)]
    oi = (n, c, oh, ow, *lanes)
    body = _window_reduce(node, out, oi, kh, kw, land(okh, okw), tap, (oh, ow), (H, W))
    if lanes:
        body = For(lane, IntImm(x.shape[4]), body)
    return Stage(ctx.tag, loops([(n, N), (c, C), (oh, OH), (ow, OW)], body))


# Pools over NCHW rows shorter than this many outputs, with more than 4 taps, go through ``_pool_rows``: a
# row loop vectorized over OW left OW % 16 outputs scalar (all of them below 16) and bounds-selected every
# padded tap.  1 thread, interleaved per version: 3x3 max and average pools with OW 8-28 ran 1.3-3.8x faster
# (256 x 27^2 /2 max 119 -> 55 us, 256 x 14^2 /1 avg 64 -> 27 us, 768 x 17^2 /1 avg 255 -> 105 us); with OW
# 35-112 the copy into the slice cost more than it saved (64 x 56^2 /1 avg 53 -> 82 us, 2x2/2 max over
# 224^2 190 -> 490 us), as did 2x2 windows (128 x 56^2 /2 max 46 -> 81 us).  With a column stride, only rows
# shorter than one vector: the slice's copy then reads at that stride, and with 16-31 columns and a fused
# ReLU LLVM made it gathers (SqueezeNet's 128 x 55^2 /2 max pool 125 -> 252 us).
POOL_ROWS_MAX_OW = 32
POOL_ROWS_MIN_TAPS = 5
POOL_ROWS_MAX_SLICE = 2 << 20  # bytes of one plane's slice on the stack (a tall plane keeps the row loop)


def pool_rows(out_hw: Sequence[int], kernel: Sequence[int], stride: Sequence[int]) -> bool:
    """Whether an NCHW pool with ``out_hw`` outputs, window ``kernel`` and ``stride`` is lowered by
    ``_pool_rows``."""
    (OH, OW), (KH, KW), (SH, SW) = out_hw, kernel, stride
    if OW >= POOL_ROWS_MAX_OW or KH * KW < POOL_ROWS_MIN_TAPS or (SW > 1 and OW >= ROW):
        return False
    hp, wq = slice_shape((OH, padded_row(OW)), (KH, KW), (SH, SW), (1, 1))
    return 4 * hp * SW * wq <= POOL_ROWS_MAX_SLICE


# A same-size stride-1 pool over rows that fill less than this share of ``_pool_rows``' padded row goes flat
# (``_pool_flat``).  1 thread, interleaved, flat over rows (3x3 pools): 8^2 and 11^2 planes 1.9-2.8x faster,
# 17^2 1.2-1.7x, 20^2 1.08x; 23^2 0.92x, 14^2 0.63-0.82x (14 of a 16-lane row already used), and with 28-112
# columns 0.42-0.66x (the row loop's masks are fixed per column; the flat loop's come from o % W per vector).
POOL_FLAT_MAX_FILL = 0.7


def pool_flat(in_hw: Sequence[int], out_hw: Sequence[int], stride: Sequence[int]) -> bool:
    """Whether an NCHW pool is lowered by ``_pool_flat``: stride 1, an output the input's size, and rows
    short enough that a padded row (``_pool_rows``) would be mostly empty lanes."""
    W = in_hw[1]
    same = tuple(stride) == (1, 1) and tuple(out_hw) == tuple(in_hw)
    return same and W < POOL_ROWS_MAX_OW and W / padded_row(W) < POOL_FLAT_MAX_FILL


def _pool_flat(node: Node, x: Buffer, out: Buffer, ctx: LowerCtx) -> Stmt:
    """A stride-1 pool whose output is its input's size (a 3x3 window padded by 1): vectorized over each
    plane's ``H * W`` outputs as one flat loop.  Output ``o`` is pixel ``(o // W, o % W)`` and its tap
    ``(kh, kw)`` input element ``o + (kh - PH) * W + (kw - PW)`` of the plane, affine in ``o``: every tap is
    one contiguous (masked) vector load, whatever the row length, with no per-row remainder::

        for nc in 0..N*C {
          for o in 0..H*W {
            out[n, c, oh, ow] = identity
            out[n, c, oh, ow] = max(out[..], x[n, c, oh + kh - PH, ow + kw - PW] or identity)   for kh, kw
            (an average: out[..] / count)  }}

    The masks come from ``o // W`` and ``o % W`` per vector, so this pays only where ``_pool_rows``' padded
    row would be mostly empty lanes (``POOL_FLAT_MAX_FILL``): Inception-v3's average pools over 768 x 17^2
    and 2048 x 8^2, NASNet-A's over 11^2."""
    a = node.attrs
    N, C, H, W = x.shape
    PH, PW = a["padding"]
    nc, o, kh, kw = ctx.var("nc"), ctx.var("o"), ctx.var("kh"), ctx.var("kw")
    n, c, oh, ow = nc // C, nc % C, o // W, o % W
    ih, iw = oh - PH + kh, ow - PW + kw
    inside = land(ge(ih, 0), lt(ih, H), ge(iw, 0), lt(iw, W))
    body = _window_reduce(node, out, (n, c, oh, ow), kh, kw, inside, x[n, c, ih, iw], (oh, ow), (H, W))
    return Stage(ctx.tag, For(nc, IntImm(N * C), For(o, IntImm(H * W), body)))


def _window_reduce(
    node: Node,
    out: Buffer,
    oi: tuple[Expr, ...],
    kh: Var,
    kw: Var,
    inside: Expr,
    tap: Expr,
    pixel: tuple[Expr, Expr],
    hw: tuple[int, int],
) -> Stmt:
    """``out[oi]`` = the max (or the average: the sum divided by ``_count`` of output ``pixel`` of an ``hw``
    input) over the window loops ``kh``, ``kw`` of ``tap``, which counts only where ``inside`` holds."""
    KH, KW = node.attrs["kernel"]
    o = out[oi]
    if node.op.startswith("maxpool2d"):
        init, upd, fin = const(NEG_INF), emax(o, Select(inside, tap, const(NEG_INF))), None
    else:
        init, upd = const(0.0), o + Select(inside, tap, const(0.0))
        fin = Store(out, oi, o / _count(*pixel, *hw, node.attrs))
    return seq(Store(out, oi, init), For(kh, IntImm(KH), For(kw, IntImm(KW), Store(out, oi, upd))), fin)


def _count(oh: Expr, ow: Expr, H: int, W: int, a: Mapping[str, Any]) -> Expr:
    """The divisor of an average pool's output ``(oh, ow)``: the window's size clipped to the padded input
    (``count_include_pad``), or to the input itself."""
    (KH, KW), (SH, SW), (PH, PW) = a["kernel"], a["stride"], a["padding"]
    hs, ws = oh * SH - PH, ow * SW - PW
    he, we = emin(hs + KH, H + PH), emin(ws + KW, W + PW)
    if not a["count_include_pad"]:
        hs, ws, he, we = emax(hs, 0), emax(ws, 0), emin(he, H), emin(we, W)
    return Cast(F32, (he - hs) * (we - ws))


def _pool_rows(node: Node, x: Buffer, out: Buffer, ctx: LowerCtx) -> Stmt:
    """Per (n, c) plane: copy it into a local slice padded with the pool's identity (-inf, or 0 for an
    average) and split by column phase (``padded_slice``), so that every window tap reads the slice at unit
    stride along the output row, whatever the stride; then per output row accumulate into a local row
    ``acc`` padded to a multiple of ``ROW`` (a vector loop with no scalar remainder and no per-lane bounds
    select) and store its first ``OW`` values::

        for nc in 0..N*C {   (n, c = nc // C, nc % C)
          xp[0, hp, ph, wq] = x[n, c, hp - PH, wq*SW + ph - PW] or the identity
          for oh {
            acc[ow] = identity                                                     for ow < OWR
            acc[ow] = max(acc[ow], xp[0, oh*SH + kh, kw % SW, ow + kw // SW])      for ow < OWR, kh, kw
            out[n, c, oh, ow] = acc[ow]  (an average: acc[ow] / count)             for ow < OW  }}

    SqueezeNet's last pool (3x3/2 over 256 x 27 x 27, 13 outputs a row) ran every output scalar before."""
    a = node.attrs
    N, C, H, W = x.shape
    _, _, OH, OW = out.shape
    (KH, KW), (SH, SW), (PH, PW) = a["kernel"], a["stride"], a["padding"]
    is_max = node.op == "maxpool2d"
    ident = NEG_INF if is_max else 0.0
    OWR = padded_row(OW)
    nc, oh = ctx.var("nc"), ctx.var("oh")  # one loop over the planes: the parallel root, however small N is
    n, c = nc // C, nc % C
    xp, fill = padded_slice(ctx, x, n, c, 1, (OH, OWR), (KH, KW), (SH, SW), (PH, PW), (1, 1), ident)
    acc = Buffer(ctx.namer.name(f"{ctx.tag}_acc"), (OWR,), scope="local")
    ow0, ow, kh, kw, ow2 = (ctx.var(s) for s in ("ow", "ow", "kh", "kw", "ow"))
    tap = xp[IntImm(0), oh * SH + kh, kw % SW, ow + kw // SW]
    upd = emax(acc[ow], tap) if is_max else acc[ow] + tap
    val = acc[ow2] if is_max else acc[ow2] / _count(oh, ow2, H, W, a)
    row = seq(
        For(ow0, IntImm(OWR), Store(acc, (ow0,), const(ident))),
        loops([(ow, OWR), (kh, KH), (kw, KW)], Store(acc, (ow,), upd)),
        For(ow2, IntImm(OW), Store(out, (n, c, oh, ow2), val)),
    )
    plane = Allocate(xp, seq(fill, Allocate(acc, For(oh, IntImm(OH), row))))
    return Stage(ctx.tag, For(nc, IntImm(N * C), plane))


@lowering("global_avgpool")
def lower_global_avgpool(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, out = ins[0], outs[0]
    N, C, H, W = x.shape
    n, c, h, w = (ctx.var(s) for s in ("n", "c", "h", "w"))
    z = IntImm(0)
    o = out[n, c, z, z]
    body = seq(
        Store(out, (n, c, z, z), const(0.0)),
        For(h, IntImm(H), For(w, IntImm(W), Store(out, (n, c, z, z), o + x[n, c, h, w]))),
        Store(out, (n, c, z, z), o * const(1.0 / (H * W))),
    )
    return Stage(ctx.tag, loops([(n, N), (c, C)], body))


@lowering("adaptive_avgpool")
def lower_adaptive_avgpool(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Window of output o: [floor(o * H / OH), ceil((o + 1) * H / OH)); loops run over the widest window
    with the taps past a narrower one masked."""
    x, out = ins[0], outs[0]
    N, C, H, W = x.shape
    _, _, OH, OW = out.shape
    KH = max(-(-((o + 1) * H) // OH) - (o * H) // OH for o in range(OH))
    KW = max(-(-((o + 1) * W) // OW) - (o * W) // OW for o in range(OW))
    n, c, oh, ow, kh, kw = (ctx.var(s) for s in ("n", "c", "oh", "ow", "kh", "kw"))
    hs, ws = (oh * H) // OH, (ow * W) // OW
    he, we = ((oh + 1) * H + OH - 1) // OH, ((ow + 1) * W + OW - 1) // OW
    ih, iw = hs + kh, ws + kw
    inside = land(lt(ih, he), lt(iw, we))
    o = out[n, c, oh, ow]
    tap = Select(inside, x[n, c, emin(ih, H - 1), emin(iw, W - 1)], const(0.0))
    body = seq(
        Store(out, (n, c, oh, ow), const(0.0)),
        For(kh, IntImm(KH), For(kw, IntImm(KW), Store(out, (n, c, oh, ow), o + tap))),
        Store(out, (n, c, oh, ow), o / Cast(F32, (he - hs) * (we - ws))),
    )
    return Stage(ctx.tag, loops([(n, N), (c, C), (oh, OH), (ow, OW)], body))
