"""Contractions in the batch-GEMM form (see the package docstring); direct convolution for small groups."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from lower.ir import (
    Allocate,
    Buffer,
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
from lower.ops_to_loops.core import GemmInfo, LowerCtx, bcast_index, lowering
from lower.ops_to_loops.elementwise import ACTIVATIONS
from lower.ops_to_loops.window import ROW, block_slice, padded_row, padded_slice, row_slice, slice_shape
from rewrite.ir.graph import Node
from rewrite.ir.ops.nn import IM2COL_OPS


# ============================================================== contraction
def _gemm(
    ctx: LowerCtx,
    out: Buffer,
    batch: list[tuple[Var, int]],
    m: int,
    n: int,
    kdim: int,
    c_idx: Callable[[list[Var], Var, Var], tuple[Expr, ...]],
    a_val: Callable[[list[Var], Var, Var], Expr],
    b_val: Callable[[list[Var], Var, Var], Expr],
    init: Callable[[list[Var], Var, Var], Expr],
    a_buf: str,
    b_buf: str,
    act: str = "none",
    around: Callable[[Stmt], Stmt] | None = None,
) -> Stmt:
    """The contraction's stages: init, the update, and the activation if any (see the package docstring).

    ``around``: the batch loops are not the update's own, but enclose ``around(update stage)`` (a producer
    computed per batch iteration beside it: a convolution row's slice); ``GemmInfo.outer`` names them."""
    bv = [v for v, _ in batch]
    i0, j0 = ctx.var("i"), ctx.var("j")
    iv, jv, kv = ctx.var("i"), ctx.var("j"), ctx.var("k")
    init_name = f"{ctx.tag}.init"
    bv0 = [ctx.var(v.name) for v in bv]
    init_stage = Stage(
        init_name,
        loops(
            [*zip(bv0, [e for _, e in batch], strict=False), (i0, m), (j0, n)],
            Store(out, c_idx(bv0, i0, j0), init(bv0, i0, j0)),
        ),
    )
    cidx = c_idx(bv, iv, jv)
    upd = Store(out, cidx, out[cidx] + a_val(bv, iv, kv) * b_val(bv, kv, jv))
    if around is None:
        main = Stage(ctx.tag, loops([*batch, (iv, m), (jv, n), (kv, kdim)], upd))
    else:
        inner = Stage(ctx.tag, loops([(iv, m), (jv, n), (kv, kdim)], upd))
        main = Stage(f"{ctx.tag}.rows", loops(batch, around(inner)))
    ctx.gemm = GemmInfo(
        ctx.tag,
        init_name,
        [] if around is not None else [v.name for v in bv],
        iv.name,
        jv.name,
        kv.name,
        out.name,
        m,
        n,
        kdim,
        a_buf,
        b_buf,
        [*bv0, i0, j0],
        [*(e for _, e in batch), m, n],
        c_idx(bv0, i0, j0),
        outer=[v.name for v in bv] if around is not None else [],
    )
    if act == "none":
        return seq(init_stage, main)
    if act not in ACTIVATIONS:
        raise ctx.error(f"unknown activation {act!r}")
    bv1 = [ctx.var(v.name) for v in bv]
    i1, j1 = ctx.var("i"), ctx.var("j")
    ci = c_idx(bv1, i1, j1)
    act_stage = Stage(
        f"{ctx.tag}.act",
        loops(
            [*zip(bv1, [e for _, e in batch], strict=False), (i1, m), (j1, n)],
            Store(out, ci, ACTIVATIONS[act](out[ci])),
        ),
    )
    ctx.gemm.post.append(act_stage.name)
    return seq(init_stage, main, act_stage)


@lowering("matmul", "matmul_bias_act", "matmul_at")
def lower_matmul(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """The batched GEMM; ``matmul_at`` reads A at ``[..., k, i]`` (its k-major panels copied row by row)."""
    x, y = ins[:2]
    out = outs[0]
    r = out.rank
    at = node.op == "matmul_at"
    M, K, N = (x.shape[-1], x.shape[-2], y.shape[-1]) if at else (x.shape[-2], x.shape[-1], y.shape[-1])
    batch = [(ctx.var(f"b{d}"), out.shape[d]) for d in range(r - 2)]
    init: Callable[[list[Var], Var, Var], Expr]
    if node.op == "matmul_bias_act":
        bias = ins[2]
        init = lambda bv, i, j: bias[j]
    else:
        init = lambda bv, i, j: const(0.0)
    return _gemm(
        ctx,
        out,
        batch,
        M,
        N,
        K,
        lambda bv, i, j: (*bv, i, j),
        lambda bv, i, k: x[(*bcast_index(x.shape[:-2], out.shape[:-2], bv), *((k, i) if at else (i, k)))],
        lambda bv, k, j: y[(*bcast_index(y.shape[:-2], out.shape[:-2], bv), k, j)],
        init,
        x.name,
        y.name,
        node.attrs.get("act", "none"),
    )


@lowering("linear")
def lower_linear(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, w, bias = ins
    out = outs[0]
    N, K = w.shape
    if x.rank == 1:
        return _gemm(
            ctx,
            out,
            [],
            1,
            N,
            K,
            lambda bv, i, j: (j,),
            lambda bv, i, k: x[k],
            lambda bv, k, j: w[j, k],
            lambda bv, i, j: bias[j],
            x.name,
            w.name,
        )
    batch = [(ctx.var(f"b{d}"), out.shape[d]) for d in range(out.rank - 2)]
    return _gemm(
        ctx,
        out,
        batch,
        x.shape[-2],
        N,
        K,
        lambda bv, i, j: (*bv, i, j),
        lambda bv, i, k: x[(*bv, i, k)],
        lambda bv, k, j: w[j, k],
        lambda bv, i, j: bias[j],
        x.name,
        w.name,
    )


# Grouped convs with at most this many output channels per group go direct (with a stride, at most
# ``DIRECT_CONV_MAX_OG_STRIDED``: the GEMM form's im2col panel then gathers every other column).  2 threads,
# ResNeXt-50's 32-group 3x3 convolutions, against the GEMM form: 8 per group 151 -> 111 us (28^2) and, strided,
# 430 -> 200 (56^2 -> 28^2); 16 per group strided 293 -> 222, but at stride 1 127 -> 162; 32 per group 112 -> 303.
DIRECT_CONV_MAX_OG = 8
DIRECT_CONV_MAX_OG_STRIDED = 16
DIRECT_CONV_MAX_SLICE = 2 << 20  # bytes of the padded input slice kept on the stack
# A plane's padded slice larger than this (an L1 data cache) is copied per block of output rows instead
# (``window.block_slice``): written to L2 and read back from there, a 112x112 plane's copy cost more than the
# convolution.  1 thread, depthwise 3x3: 48x112x112 stride 2 1.18x faster, 16x112x112 1.10x; planes whose
# slice fits (96x56x56: 15 KiB) ran the same or up to 3% slower per block, so they keep the whole plane.
DIRECT_CONV_L1_SLICE = 32 << 10
DIRECT_CONV_ROW = ROW  # output rows are computed padded to a multiple of this (the widest f32 vector)
DIRECT_CONV_ROWS = 4  # output rows per pass: independent accumulation chains (FMA latency), reuse of input rows
DIRECT_CONV_MAX_ROWS = 8  # ... at most: each is a vector accumulator live across the window
DIRECT_CONV_MAX_UNROLL = 256  # taps (rows x window) unrolled in a direct convolution's vectorized row loop
SHORT_ROW = 64  # local rows up to this many lanes take more rows per block (see direct_rows)


# A strided convolution over at most this many input channels per group, or a padded one whose weights take at
# most ``ROW_FORM_MAX_WEIGHT_BYTES``, is a GEMM per output row (columns ow, not the flat oh*ow), instead of
# decomposing every column into (oh, ow) and gathering.  Each row's input rows are first copied into a padded,
# phase-split slice (``row_slice``, beside the row's GEMM), so the im2col panel copy reads at unit stride
# without bounds selects (reading the input directly, at stride 2 under the padding select, it compiles to
# per-lane branches, scalar moves and inserts).  1 thread, interleaved: 3-channel stems 1.14x (7x7/2 over
# 224^2) to 1.24x (3x3/2) faster before the slice, the 7x7/2 stem 1.33x faster again with it, Inception's
# 3x3/2 over 299^2 1.11-1.15x.  With more channels (measured flat against rows after the slice, 1 thread, this
# AVX2 host): 3x3/2 128 -> 128 over 112^2 2.03x faster (33.1 -> 16.3 ms), over 56^2 (ResNet's) 1.88-1.93x,
# 64 -> 128 over 56^2 1.81-2.01x, 32 -> 64 over 112^2 1.86-1.95x, 5x5/2 16 -> 24 2.96x, dilation 2 1.87x,
# two groups of 64 over 112^2 1.12-1.25x; unpadded (2x2/2, 1x1/2: no select to branch on) the same alone and
# 0.88-0.99x in a ConvNeXt, so those stay flat; 256 -> 256 (2.4 MB of weights, 16 columns a row) the same;
# 512 -> 512 (9.4 MB, 20 columns) 0.76x: every row streams the whole weight panel again, from L3.  (Before the
# slice, 32-256 channels ran 0.80-0.88x in rows.)
ROW_FORM_MAX_CG = 4
ROW_FORM_MAX_WEIGHT_BYTES = 1 << 20
ROW_FORM_MIN_OW = 16  # a row of fewer outputs leaves most of a micro-tile's columns empty


# A padded or strided convolution in the flat form packs each B panel from its input through a gather: every
# lane's (oh, ow) = divmod(j, OW) and a bounds select or a strided load per lane, while only the GEMM's rows (a
# group's few output channels) share each panel.  In blocks of ``conv_block_rows`` output
# rows instead: the block's input rows are copied into a padded, phase-split slice (``block_slice``), the slice
# into the block's im2col matrix ``col[Cg*KH*KW, rows*OW]`` one contiguous output row at a time, and the GEMM
# reads that (its panels a plain copy, its tiles stored straight into the output: a block's pixels are
# contiguous there).  The blocks are also the parallel units beside the groups.  Which form pays depends on
# the machine and the convolution (3x3 padded, 128 -> 32 channels over 56^2, 1 thread: the block form faster on
# the Zen 3 host it was built on, 1.2x slower than the flat form on an AVX-512 Xeon; 64 -> 16 over 56^2 1.23x
# slower there), so it is an op of its own, ``conv2d_im2col`` (rules/im2col.rules puts it beside each padded
# dense ``conv2d``): a dense ``conv2d`` never takes it, and extraction keeps whichever the target's measured
# costs price lower (grouped convolutions still take it by this heuristic: see rules/im2col.rules).
BLOCK_FORM_COLUMNS = 256  # columns (output pixels) per block at most, short of a whole plane of fewer
BLOCK_FORM_MAX_COL = 1 << 20  # bytes of a block's im2col matrix at most (then fewer rows a block)


def conv_block_rows(
    x_shape: tuple[int, ...],
    w_shape: tuple[int, ...],
    out_shape: tuple[int, ...],
    attrs: Mapping[str, Any],
    threads: int = 1,
) -> int:
    """Output rows per block of the block form (the most dividing the plane within ``BLOCK_FORM_COLUMNS`` and
    ``BLOCK_FORM_MAX_COL``), or 0 where ``lower_conv2d`` keeps another form even for ``conv2d_im2col``: neither
    padded nor strided with a window (the flat form's loads are then contiguous, or one strided tap), or blocks
    of fewer than 16 columns.  On several ``threads`` the blocks (with the images and groups: the parallel units,
    ``block_units_share``) must share out among them, else another form, whose GEMM splits its own output, is
    kept."""
    _, Cg, KH, KW = w_shape
    OH, OW = out_shape[2:4]
    G, stride, padding = attrs["groups"], attrs["stride"], attrs["padding"]
    if not (any(padding) or (max(stride) > 1 and KH * KW > 1)):
        return 0
    cols = min(BLOCK_FORM_COLUMNS, BLOCK_FORM_MAX_COL // (4 * Cg * KH * KW))  # at most, a block
    fits = [r for r in range(1, OH + 1) if OH % r == 0 and 16 <= r * OW <= cols]
    fits = [r for r in fits if block_units_share(out_shape[0] * G * (OH // r), threads)]
    return max(fits, default=0)


def block_units_share(units: int, threads: int) -> bool:
    """Whether ``units`` equal parallel blocks keep ``threads`` threads busy: one thread alone, or a whole
    number of rounds, or enough rounds that the last one's idle threads matter little (at least 4)."""
    return threads == 1 or units % threads == 0 or units >= 4 * threads


def direct_conv(w_shape: tuple[int, ...], out_shape: tuple[int, ...], attrs: Mapping[str, Any]) -> bool:
    """Whether ``lower_conv2d`` (CPU) computes this convolution directly over a padded copy of each group's
    input (``_direct_conv``: grouped, at most ``DIRECT_CONV_MAX_OG`` outputs per group, the copy bounded by
    ``DIRECT_CONV_MAX_SLICE``) instead of as a GEMM over im2col panels."""
    OC, Cg, KH, KW = w_shape
    OH, OW = out_shape[2:4]
    (SH, SW), (DH, DW), G = attrs["stride"], attrs["dilation"], attrs["groups"]
    HP, WP = (OH - 1) * SH + (KH - 1) * DH + 1, (OW - 1) * SW + (KW - 1) * DW + 1 + DIRECT_CONV_ROW * SW
    most = DIRECT_CONV_MAX_OG_STRIDED if max(SH, SW) > 1 else DIRECT_CONV_MAX_OG
    return G > 1 and OC // G <= most and 4 * Cg * HP * WP <= DIRECT_CONV_MAX_SLICE


def conv_row_form(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], out_shape: tuple[int, ...], stride, padding=(0, 0)
) -> bool:
    """Whether ``lower_conv2d`` computes this convolution one output row at a time (``ROW_FORM_MAX_CG``; with
    padding, also ``ROW_FORM_MAX_WEIGHT_BYTES``)."""
    small = w_shape[1] <= ROW_FORM_MAX_CG or (any(padding) and 4 * math.prod(w_shape) <= ROW_FORM_MAX_WEIGHT_BYTES)
    return small and max(stride) > 1 and out_shape[3] >= ROW_FORM_MIN_OW


@lowering("conv2d", "conv2d_bias_act", "conv2d_im2col", "conv2d_im2col_bias_act")
def lower_conv2d(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """The batch-GEMM form: per (image, group) ``C[Og, OH*OW] = W[Og, Cg*KH*KW] @ im2col(x)``, the im2col
    operand read implicitly (never materialised); or (``conv2d_im2col``, or grouped) per (image, group, block of
    output rows) over the block's im2col matrix, materialised (``conv_block_rows``); or per (image, group, output
    row) over ``OW`` columns (``conv_row_form``); or, over a plane smaller than a vector, ``im2col(x) @ W^T``
    (``conv_pixel_rows``); or, for grouped convolutions with few channels per group, ``_direct_conv``."""
    x, w = ins[:2]
    out = outs[0]
    a = node.attrs
    N, _, H, W = x.shape
    OC, Cg, KH, KW = w.shape
    _, _, OH, OW = out.shape
    G = a["groups"]
    Og = OC // G
    (SH, SW), (PH, PW), (DH, DW) = a["stride"], a["padding"], a["dilation"]
    if not ctx.grid and direct_conv(w.shape, out.shape, a):
        return _direct_conv(node, ins, outs, ctx)
    pixel_rows = not ctx.grid and conv_pixel_rows(Og, OH * OW)
    # the block form for conv2d_im2col; for conv2d only grouped (rules/im2col.rules offers dense ones alone)
    im2col = (node.op in IM2COL_OPS or G > 1) and not ctx.grid and not pixel_rows
    R = conv_block_rows(x.shape, w.shape, out.shape, a, ctx.threads) if im2col else 0
    rows = not ctx.grid and not R and conv_row_form(x.shape, w.shape, out.shape, (SH, SW), (PH, PW))
    per = 1 if rows else R  # output rows one GEMM covers (0: the whole plane)
    n, g, r = ctx.var("n"), ctx.var("g"), ctx.var("oh")
    batch = [(n, N), (g, G), (r, OH // per)] if per else [(n, N), (g, G)]

    def pixel(bv, j) -> tuple[Expr, Expr]:  # (oh, ow) of GEMM column j
        if rows:
            return bv[2], j
        if R:  # the block's flat pixel, split: one collapsible (p // OW, p % OW) index
            p = bv[2] * (R * OW) + j
            return p // OW, p % OW
        return j // OW, j % OW

    def c_idx(bv, i, j):
        return (bv[0], bv[1] * Og + i, *pixel(bv, j))

    def kdecomp(k):
        return (k // KW) // KH, (k // KW) % KH, k % KW

    def a_val(bv, i, k):
        c, kh, kw = kdecomp(k)
        return w[bv[1] * Og + i, c, kh, kw]

    around = None
    WQ = slice_shape((1, OW), (KH, KW), (SH, SW), (DH, DW))[1]
    if rows and 4 * Cg * KH * SW * WQ <= DIRECT_CONV_MAX_SLICE:  # each output row's input rows copied into a
        # padded, phase-split slice beside its GEMM (on the stack: bounded as the direct convolution's slice)
        xr, fill = row_slice(ctx, x, n, g * Cg, Cg, r, OW, (KH, KW), (SH, SW), (PH, PW), (DH, DW))
        around = lambda update: Allocate(xr, seq(fill, update))

    if R:  # the block's slice, then its im2col matrix, beside the block's GEMM (on the stack)
        xb, fill_xb = block_slice(ctx, x, n, g * Cg, Cg, r * R, R, OW, (KH, KW), (SH, SW), (PH, PW), (DH, DW))
        col = Buffer(ctx.namer.name(f"{ctx.tag}_col"), (Cg * KH * KW, R * OW), scope="local")
        cc, ckh, ckw, cr, cw = (ctx.var(v) for v in ("c", "kh", "kw", "r", "ow"))
        tap = xb[cc, cr * SH + ckh * DH, (ckw * DW) % SW, cw + (ckw * DW) // SW]
        fill = loops(
            [(cc, Cg), (ckh, KH), (ckw, KW), (cr, R), (cw, OW)],
            Store(col, ((cc * KH + ckh) * KW + ckw, cr * OW + cw), tap),
        )
        fill_col = Stage(f"{ctx.tag}.col", fill)
        around = lambda update: Allocate(xb, Allocate(col, seq(fill_xb, fill_col, update)))

    def b_val(bv, k, j):
        c, kh, kw = kdecomp(k)
        if R:
            return col[k, j]
        if around is not None:
            return xr[c, kh, (kw * DW) % SW, j + (kw * DW) // SW]
        oh, ow = pixel(bv, j)
        ih = oh * SH - PH + kh * DH
        iw = ow * SW - PW + kw * DW
        if not (PH or PW):
            return x[bv[0], bv[1] * Cg + c, ih, iw]
        # unclamped: the tap is only read where it is inside the input (the LLVM backend's guarded loads,
        # CUDA's ?:), so with stride 1 and OW == W its flat offset is affine in j (a contiguous masked load)
        ok = land(ge(ih, 0), lt(ih, H), ge(iw, 0), lt(iw, W))
        return Select(ok, x[bv[0], bv[1] * Cg + c, ih, iw], const(0.0))

    init: Callable[[list[Var], Var, Var], Expr]
    if node.op.endswith("_bias_act"):
        bias = ins[2]
        init = lambda bv, i, j: bias[bv[1] * Og + i]
    else:
        init = lambda bv, i, j: const(0.0)
    if pixel_rows:  # the transposed product: rows the pixels, vectorized columns the output channels
        return _gemm(
            ctx,
            out,
            batch,
            OH * OW,
            Og,
            Cg * KH * KW,
            lambda bv, i, j: c_idx(bv, j, i),
            lambda bv, i, k: b_val(bv, k, i),
            lambda bv, k, j: a_val(bv, j, k),
            lambda bv, i, j: init(bv, j, i),
            x.name,
            w.name,
            node.attrs.get("act", "none"),
        )
    return _gemm(
        ctx,
        out,
        batch,
        Og,
        (per or OH) * OW,
        Cg * KH * KW,
        c_idx,
        a_val,
        b_val,
        init,
        w.name,
        x.name,
        node.attrs.get("act", "none"),
        around,
    )


def conv_pixel_rows(og: int, pixels: int) -> bool:
    """Whether ``lower_conv2d`` (CPU) computes this convolution as ``C[pixels, Og] = im2col(x) @ W^T`` (a
    GEMM whose rows are the output pixels, its vectorized columns the output channels) instead of
    ``W @ im2col(x)``: an output plane of fewer pixels than a vector (``ROW``) with at least a vector of output
    channels per group (a squeeze-and-excitation block's convolutions over one pixel, a classifier head
    written as a convolution).  The other way round every vector of the update holds one useful lane."""
    return pixels < ROW <= og


def direct_rows(oh: int, taps: int, row: int) -> int:
    """Output rows per block of a direct convolution with ``oh`` rows, a ``taps``-tap window and local rows of
    ``row`` lanes: the fewest rows computed (every block computes its full count, the last one's extra rows
    into lanes never stored), within ``DIRECT_CONV_ROWS``..``DIRECT_CONV_MAX_ROWS`` and the unrolling budget;
    among equals more rows for short rows (more input reuse per pass), fewer for long ones.

    Timed at 1 thread, interleaved, depthwise: 672x14x14 5x5 (7 rows, not 4 + 4 + 4 + 2) 1.60x faster,
    480x14x14 3x3 1.52x, 1152x7x7 5x5 1.47x, 240x28x28 5x5 (7) 1.27x, 144x56x56 3x3 (8) 1.13x; 112-wide
    rows the same (4: eight ran 0.83x).

        >>> direct_rows(14, 25, 16), direct_rows(56, 9, 64), direct_rows(112, 9, 112), direct_rows(7, 49, 16)
        (7, 8, 4, 4)
    """
    fits = [r for r in range(DIRECT_CONV_ROWS, DIRECT_CONV_MAX_ROWS + 1) if r * taps <= DIRECT_CONV_MAX_UNROLL]
    fits = fits or [DIRECT_CONV_ROWS]
    if oh <= fits[-1]:
        return oh if oh * taps <= DIRECT_CONV_MAX_UNROLL or oh <= DIRECT_CONV_ROWS else fits[-1]
    return min(fits, key=lambda r: (-(-oh // r) * r, -r if row <= SHORT_ROW else r))


def _direct_conv(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Grouped convolution with few channels per group (depthwise, ResNeXt): a GEMM per group would be
    tiny and dominated by packing.  Per (n, group): copy the group's input channels into a zero-padded
    local slice (no bounds checks in the hot loop), split by column phase so that every window tap
    reads the slice at unit stride along the output row, whatever the stride: column ``ow*SW + kw*DW``
    of the padded input is ``xp[c, h, (kw*DW) % SW, ow + (kw*DW) // SW]``.  Each output row is
    accumulated in a local row ``acc`` padded to a multiple of ``DIRECT_CONV_ROW`` (so the vectorized
    row loop has no scalar remainder; the extra lanes read zeros and are never stored)::

        // stage conv.init: out = 0 (or bias)        for n0, g0, i0, oh0, ow0
        // stage conv:                               for n, g {
        //   stage conv.pad: xp[c, hp, ph, wq] = x[n, g*Cg + c, hp - PH, wq*SW + ph - PW] or 0
        //   for oh {
        //     acc[i, ow] = out[n, g*Og + i, oh, ow] (0 past OW)                for i, ow < OWR
        //     acc[i, ow] += w[g*Og + i, c, kh, kw] * xp[c, oh*SH + kh*DH, ph, ow + q]  for i, c, ow, kh, kw
        //     out[n, g*Og + i, oh, ow] = acc[i, ow]                               for i, ow < OW  }}
    """
    x, w = ins[:2]
    out = outs[0]
    a = node.attrs
    N = x.shape[0]
    OC, Cg, KH, KW = w.shape
    _, _, OH, OW = out.shape
    G = a["groups"]
    Og = OC // G
    (SH, SW), (PH, PW), (DH, DW) = a["stride"], a["padding"], a["dilation"]
    OWR = padded_row(OW)
    R = direct_rows(OH, KH * KW, OWR)
    OHB = -(-OH // R)
    n, g = ctx.var("n"), ctx.var("g")
    ob, i, c, ow, r, kh, kw = (ctx.var(s) for s in ("ob", "i", "c", "ow", "r", "kh", "kw"))
    window = ((KH, KW), (SH, SW), (PH, PW), (DH, DW))
    HP, WQ = slice_shape((OHB * R, OWR), (KH, KW), (SH, SW), (DH, DW))
    per_block = 4 * Cg * HP * SW * WQ > DIRECT_CONV_L1_SLICE  # the plane's slice would not stay in L1
    if per_block:
        xp, fill = block_slice(ctx, x, n, g * Cg, Cg, ob * R, R, OWR, *window)
        slice_row = r * SH  # the block's slice holds its own rows
    else:
        xp, fill = padded_slice(ctx, x, n, g * Cg, Cg, (OHB * R, OWR), *window, 0.0)
        slice_row = (ob * R + r) * SH
    acc = Buffer(ctx.namer.name(f"{ctx.tag}_acc"), (R, Og, OWR), scope="local")
    r1, i1, ow1, r2, i2, ow2 = (ctx.var(s) for s in ("r", "i", "ow", "r", "i", "ow"))
    r0, i0, t0, r3, i3, ow3 = (ctx.var(s) for s in ("r", "i", "t", "r", "i", "ow"))
    # the rows' current values (init, folded residual), unit stride; the padding lanes past OW and the rows
    # past OH (the last block's) zero: every copy a plain vector loop, no per-lane select or clamp
    parts: list[Stmt] = [
        loops(
            [(r1, emin(R, OH - ob * R)), (i1, Og), (ow1, OW)],
            Store(acc, (r1, i1, ow1), out[n, g * Og + i1, ob * R + r1, ow1]),
        )
    ]
    if OWR > OW:
        parts.append(loops([(r0, R), (i0, Og), (t0, OWR - OW)], Store(acc, (r0, i0, t0 + OW), const(0.0))))
    if OH % R:
        rows_past = emax(0, R - (OH - ob * R))
        parts.append(loops([(r3, rows_past), (i3, Og), (ow3, OW)], Store(acc, (R - 1 - r3, i3, ow3), const(0.0))))
    load_rows = seq(*parts)
    tap = xp[c, slice_row + kh * DH, (kw * DW) % SW, ow + (kw * DW) // SW]
    upd = Store(acc, (r, i, ow), acc[r, i, ow] + w[g * Og + i, c, kh, kw] * tap)
    main = loops([(i, Og), (c, Cg), (ow, OWR), (kh, KH), (kw, KW), (r, R)], upd)  # rows innermost: R chains
    store_rows = loops(
        [(r2, emin(R, OH - ob * R)), (i2, Og), (ow2, OW)],
        Store(out, (n, g * Og + i2, ob * R + r2, ow2), acc[r2, i2, ow2]),
    )
    block = Allocate(acc, seq(load_rows, main, store_rows))
    if per_block:
        body = Stage(ctx.tag, loops([(n, N), (g, G), (ob, OHB)], Allocate(xp, seq(fill, block))))
    else:
        body = Stage(ctx.tag, loops([(n, N), (g, G)], Allocate(xp, seq(fill, For(ob, IntImm(OHB), block)))))
    init_v: Callable[[Var, Var, Var], Expr]  # (n, group, i) -> the init value
    if node.op.endswith("_bias_act"):
        bias = ins[2]
        init_v = lambda nn, gg, ii: bias[gg * Og + ii]
    else:
        init_v = lambda nn, gg, ii: const(0.0)
    n0, g0, i0, oh0, ow0 = (ctx.var(s) for s in ("n", "g", "i", "oh", "ow"))
    cidx0 = (n0, g0 * Og + i0, oh0, ow0)
    init_name = f"{ctx.tag}.init"
    init = Stage(
        init_name, loops([(n0, N), (g0, G), (i0, Og), (oh0, OH), (ow0, OW)], Store(out, cidx0, init_v(n0, g0, i0)))
    )
    ctx.gemm = GemmInfo(
        ctx.tag,
        init_name,
        [n.name, g.name],
        i.name,
        ow.name,
        c.name,
        out.name,
        Og,
        OH * OW,
        Cg * KH * KW,
        w.name,
        x.name,
        [n0, g0, i0, oh0, ow0],
        [N, G, Og, OH, OW],
        cidx0,
        direct=True,
    )
    stages = [init, body]
    act = node.attrs.get("act", "none")
    if act != "none":
        if act not in ACTIVATIONS:
            raise ctx.error(f"unknown activation {act!r}")
        v1 = [ctx.var(s) for s in ("n", "g", "i", "oh", "ow")]
        ci = (v1[0], v1[1] * Og + v1[2], v1[3], v1[4])
        act_stage = Stage(
            f"{ctx.tag}.act",
            loops(list(zip(v1, [N, G, Og, OH, OW], strict=False)), Store(out, ci, ACTIVATIONS[act](out[ci]))),
        )
        ctx.gemm.post.append(act_stage.name)
        stages.append(act_stage)
    return seq(*stages)
