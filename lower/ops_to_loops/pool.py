"""Pooling: windows with padding bounds, global and adaptive average pooling."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

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
    """NCHW: a stride-1 pool keeping the input's size in two flat passes per plane (``pool_separable``); short
    rows through a padded, phase-split slice (``pool_rows``; an average with strided windows excepted); windows
    overlapping along a strided row through a local row of the window rows' reduction (``pool_strided``); else
    one output a lane.
    NCHWc (``_blocked``): the block's lanes innermost, every tap one vector of channels."""
    x, out = ins[0], outs[0]
    a = node.attrs
    if not ctx.grid and x.rank == 4:  # GPU: a thread each
        if pool_separable(x.shape[2:], out.shape[2:], a["kernel"], a["stride"]):
            return _pool_separable(node, x, out, ctx)
        strided = pool_strided(a["kernel"], a["stride"])
        # short strided rows: the slice for a max pool (256 x 28^2 3x3/2: 61 us against 77 strided, its
        # maximum's NaN-propagating selects doubling both passes' work), the local row for an average (53
        # against 65 us)
        if pool_rows(out.shape[2:], a["kernel"], a["stride"]) and not (strided and node.op == "avgpool2d"):
            return _pool_rows(node, x, out, ctx)
        if strided:
            return _pool_strided(node, x, out, ctx)
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
# (Checked after ``pool_separable``, which now takes the same-size stride-1 pools, and not for an average with
# overlapping strided windows, which ``_pool_strided`` runs faster.)
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


# A stride-1 pool keeping the input's size goes through ``_pool_separable`` when its row pass fits this many
# bytes on the stack.  1 thread, against the row loop, the slice (``_pool_rows``) or the flat masked loop it
# replaced (3x3 pools): 28^2 avg 55 -> 24 us, max 41 -> 27; 17^2 87 -> 44; 8^2 37-40 -> 30; 56^2 avg 55 -> 39,
# max 132 -> 42; 112^2 202 -> 175; 14^2 28 -> 18 (onnxruntime's own NCHW pools: 18-63 us, 112^2 233-255).
POOL_SEP_MAX_BYTES = 256 << 10


def pool_separable(in_hw: Sequence[int], out_hw: Sequence[int], kernel: Sequence[int], stride: Sequence[int]) -> bool:
    """Whether an NCHW pool is lowered by ``_pool_separable``: stride 1 and an output the input's size."""
    same = tuple(stride) == (1, 1) and tuple(out_hw) == tuple(in_hw)
    return same and 4 * (in_hw[0] + kernel[0] - 1) * in_hw[1] <= POOL_SEP_MAX_BYTES


def _pool_separable(node: Node, x: Buffer, out: Buffer, ctx: LowerCtx) -> Stmt:
    """A stride-1 pool whose output is its input's size, as two passes over each plane, each one flat loop
    over its ``H * W`` pixels (no per-row remainder, whatever the row length): the row pass reduces the
    ``KW`` columns of each pixel's window into a local ``hb`` padded with ``PH`` rows of the identity above and
    below; the column pass reduces ``KH`` rows of ``hb`` (every load contiguous and unmasked)::

        for nc in 0..N*C {
          hb[r, w] = identity                                                  for the padding rows
          hb[oh + PH, ow] = reduce_kw (x[n, c, oh, ow + kw - PW] or identity)  for o in 0..H*W
          out[n, c, oh, ow] = reduce_kh hb[oh + kh, ow]  (an average: * 1 / count)   for o in 0..H*W  }

    ``KH + KW`` taps a pixel instead of ``KH * KW``, only the row pass's taps masked (from ``o % W``), and an
    average's divisors a constant table of reciprocals (a vector integer division per pixel to compute them
    cost as much as the taps: 28^2 38 -> 24 us)."""
    a = node.attrs
    N, C, H, W = x.shape
    (KH, KW), (PH, PW) = a["kernel"], a["padding"]
    identity, red = _reduction(node)
    ident = const(identity)
    nc, o, o2, kh, kw = ctx.var("nc"), ctx.var("o"), ctx.var("o"), ctx.var("kh"), ctx.var("kw")
    n, c = nc // C, nc % C
    hb = Buffer(ctx.namer.name(f"{ctx.tag}_hrows"), (H + KH - 1, W), scope="local")
    edges: list[Stmt] = []
    for r0, rows in ((0, PH), (PH + H, KH - 1 - PH)):
        if rows > 0:
            t = ctx.var("t")
            edges.append(For(t, IntImm(rows * W), Store(hb, (t // W + r0, t % W), ident)))
    oh, ow = o // W, o % W
    iw = ow - PW + kw
    tap = Select(land(ge(iw, 0), lt(iw, W)), x[n, c, oh, iw], ident)
    hi = (oh + PH, ow)
    rows_pass = For(o, IntImm(H * W), seq(Store(hb, hi, ident), For(kw, IntImm(KW), Store(hb, hi, red(hb[hi], tap)))))
    oi = (n, c, o2 // W, o2 % W)
    col = red(out[oi], hb[o2 // W + kh, o2 % W])
    fin = None
    if node.op == "avgpool2d":
        fin = Store(out, oi, out[oi] * _inverse_count_table(node, x, out, ctx)[o2 // W, o2 % W])
    cols_pass = For(o2, IntImm(H * W), seq(Store(out, oi, ident), For(kh, IntImm(KH), Store(out, oi, col)), fin))
    return Stage(ctx.tag, For(nc, IntImm(N * C), Allocate(hb, seq(*edges, rows_pass, cols_pass))))


# Windows overlapping along a strided row (3x3/2) go through ``_pool_strided``.  1 thread, against one output a
# lane with its taps read at the stride, 3x3/2 max: 112^2 135 -> 79-89 us, 56^2 139 -> 60, 55^2 127 -> 78,
# 147^2 209 -> 133, 71^2 128 -> 91, 63^2 183 -> 83, 33^2 94 -> 36, but 35^2 28-48 -> 39-73 (LLVM's
# vectorization of the old form swung 3x with the row length); average 3x3/2 56^2 69 -> 48.  Windows that
# tile the row (2x2/2) keep one output a lane: one interleaved pair of loads a tap (224^2 354 against 710).
def pool_strided(kernel: Sequence[int], stride: Sequence[int]) -> bool:
    """Whether an NCHW pool is lowered by ``_pool_strided``: windows that overlap along a strided row."""
    return stride[1] > 1 and kernel[1] > stride[1]


def _pool_strided(node: Node, x: Buffer, out: Buffer, ctx: LowerCtx) -> Stmt:
    """Per plane and output row: the ``KH`` input rows of the row's windows reduced into a local row ``vr``
    padded with the identity (unit stride, the rows outside the input selected out as a whole), then each
    output the reduction of its ``KW`` columns of ``vr`` (at the column stride, from the local row)::

        for nc in 0..N*C {
          vr[e] = identity                                                  for the padding columns
          for oh {
            vr[PW + w] = reduce_kh (x[n, c, oh*SH - PH + kh, w] or identity)   for w < W
            out[n, c, oh, ow] = reduce_kw vr[ow*SW + kw]  (an average: * 1 / count)   for ow < OW  }}"""
    a = node.attrs
    N, C, H, W = x.shape
    _, _, OH, OW = out.shape
    (KH, KW), (SH, SW), (PH, PW) = a["kernel"], a["stride"], a["padding"]
    identity, red = _reduction(node)
    ident = const(identity)
    WV = max(PW + W, (OW - 1) * SW + KW)
    vr = Buffer(ctx.namer.name(f"{ctx.tag}_vrow"), (WV,), scope="local")
    nc, oh, w, ow, kh, kw = (ctx.var(v) for v in ("nc", "oh", "w", "ow", "kh", "kw"))
    n, c = nc // C, nc % C
    pads: list[Stmt] = []
    for lo, cnt in ((0, PW), (PW + W, WV - PW - W)):
        if cnt > 0:
            e = ctx.var("e")
            pads.append(For(e, IntImm(cnt), Store(vr, (e + lo,), ident)))
    ih = oh * SH - PH + kh
    tap = Select(land(ge(ih, 0), lt(ih, H)), x[n, c, clip(ih, H - 1), w], ident)
    vi = (w + PW,)
    col = For(w, IntImm(W), seq(Store(vr, vi, ident), For(kh, IntImm(KH), Store(vr, vi, red(vr[vi], tap)))))
    oi = (n, c, oh, ow)
    fin = None
    if node.op == "avgpool2d":
        fin = Store(out, oi, out[oi] * _inverse_count_table(node, x, out, ctx)[oh, ow])
    taps = For(kw, IntImm(KW), Store(out, oi, red(out[oi], vr[ow * SW + kw])))
    row = For(ow, IntImm(OW), seq(Store(out, oi, ident), taps, fin))
    return Stage(ctx.tag, For(nc, IntImm(N * C), Allocate(vr, seq(*pads, For(oh, IntImm(OH), seq(col, row))))))


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


def _reduction(node: Node) -> tuple[float, Callable[[Expr, Expr], Expr]]:
    """A pool's identity and its reduction of two values: ``-inf`` and max, or 0 and a sum."""
    if node.op.startswith("maxpool2d"):
        return NEG_INF, emax
    return 0.0, lambda p, q: p + q


def _inverse_count_table(node: Node, x: Buffer, out: Buffer, ctx: LowerCtx) -> Buffer:
    """A constant ``(OH, OW)`` buffer of ``1 / count`` per output of an average pool (``_inverse_counts``):
    multiplying by it spares a vector integer division per pixel (as costly as the taps: 28^2 38 -> 24 us)."""
    in_hw, out_hw = (x.shape[2], x.shape[3]), (out.shape[2], out.shape[3])
    inv = Buffer(ctx.namer.name(f"{ctx.tag}_invcount"), out_hw)
    ctx.new_consts[inv.name] = _inverse_counts(in_hw, out_hw, node.attrs)
    return inv


def _inverse_counts(in_hw: tuple[int, int], out_hw: tuple[int, int], a: Mapping[str, Any]) -> torch.Tensor:
    """``1 / _count`` of every output ``(oh, ow)`` of an average pool: a table of ``out_hw``."""
    (KH, KW), (SH, SW), (PH, PW) = a["kernel"], a["stride"], a["padding"]

    def spans(n: int, o: int, k: int, st: int, p: int) -> torch.Tensor:
        s = torch.arange(o, dtype=torch.float64) * st - p
        e = torch.minimum(s + k, torch.tensor(float(n + p)))
        if not a["count_include_pad"]:
            s, e = s.clamp(min=0), e.clamp(max=n)
        return e - s

    rows, cols = spans(in_hw[0], out_hw[0], KH, SH, PH), spans(in_hw[1], out_hw[1], KW, SW, PW)
    return (1.0 / (rows[:, None] * cols[None, :])).float()


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
    N, C = x.shape[:2]
    _, _, OH, OW = out.shape
    (KH, KW), (SH, SW), (PH, PW) = a["kernel"], a["stride"], a["padding"]
    ident, red = _reduction(node)
    OWR = padded_row(OW)
    nc, oh = ctx.var("nc"), ctx.var("oh")  # one loop over the planes: the parallel root, however small N is
    n, c = nc // C, nc % C
    xp, fill = padded_slice(ctx, x, n, c, 1, (OH, OWR), (KH, KW), (SH, SW), (PH, PW), (1, 1), ident)
    acc = Buffer(ctx.namer.name(f"{ctx.tag}_acc"), (OWR,), scope="local")
    ow0, ow, kh, kw, ow2 = (ctx.var(s) for s in ("ow", "ow", "kh", "kw", "ow"))
    tap = xp[IntImm(0), oh * SH + kh, kw % SW, ow + kw // SW]
    upd = red(acc[ow], tap)
    val = acc[ow2]
    if node.op == "avgpool2d":
        val = acc[ow2] * _inverse_count_table(node, x, out, ctx)[oh, ow2]
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
