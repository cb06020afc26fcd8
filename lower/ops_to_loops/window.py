"""Sliding windows (direct convolution, pooling): the input slice copied once into a padded, phase-split
local buffer, so that every window tap reads it at unit stride along the output row."""

from __future__ import annotations

from collections.abc import Callable

from lower.ir import Buffer, Expr, If, IntImm, Stage, Stmt, Store, Var, const, ge, land, loops, lt, seq
from lower.ops_to_loops.core import LowerCtx

ROW = 16  # output rows computed into a local row padded to a multiple of this (the widest f32 vector)


def padded_row(n: int) -> int:
    """``n`` outputs rounded up to whole ``ROW``s: the length of a local output row."""
    return -(-n // ROW) * ROW


def slice_shape(
    out_hw: tuple[int, int], kernel: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int]
) -> tuple[int, int]:
    """``(HP, WQ)`` of ``padded_slice``'s ``xp[c, hp, ph, wq]``: padded input rows, columns per phase."""
    (OH, OW), (KH, KW), (SH, SW), (DH, DW) = out_hw, kernel, stride, dilation
    return (OH - 1) * SH + (KH - 1) * DH + 1, OW + (KW - 1) * DW // SW


def padded_slice(
    ctx: LowerCtx,
    x: Buffer,
    n: Expr,
    ch0: Expr,
    channels: int,
    out_hw: tuple[int, int],
    kernel: tuple[int, int],
    stride: tuple[int, int],
    pad: tuple[int, int],
    dilation: tuple[int, int],
    fill: float,
) -> tuple[Buffer, Stmt]:
    """A local ``xp[c, hp, ph, wq]`` holding ``x[n, ch0 + c, hp - PH, wq*SW + ph - PW]`` (``fill`` outside
    the input) for the ``out_hw`` outputs' windows, and the stage filling it.

    Column ``ow*SW + kw*DW`` of the padded input is ``xp[c, h, (kw*DW) % SW, ow + (kw*DW) // SW]``: unit
    stride in ``ow`` whatever the stride.  The stage writes ``fill`` where no input lands (the rows above
    and below it, each input row's columns outside it per phase), then copies the input's rows in (bounds
    known at compile time: no per-element selects) by groups of ``SW`` adjacent input columns, one to each
    phase (``row_copy``, ``column_pieces``)::

        xp[c, hp, ph, wq] = fill                       for (c, hp) outside the input rows, (ph, wq)
        xp[c, ih + PH, ph, wq] = fill                  for c, ih; ph, wq outside phase ph's columns
        xp[c, ih + PH, (j + PW) % SW, t + (j + PW) // SW] = x[n, ch0 + c, ih, t*SW + j]   for c, ih, t; j
    """
    H = x.shape[2]
    SW, (PH, PW) = stride[1], pad
    HP, WQ = slice_shape(out_hw, kernel, stride, dilation)
    xp = Buffer(ctx.namer.name(f"{ctx.tag}_xpad"), (channels, HP, SW, WQ), scope="local")
    rows = max(0, min(H, HP - PH))  # padded rows PH .. PH + rows - 1 hold input rows, the others are all fill
    # the fill, only where no input lands: whole padded rows above and below the input as (channel, row) x
    # (phase, column) pairs, so the inner loop runs contiguously over a row's phases (one // and % each side,
    # which fold away), and each input row's columns outside it per phase (a 112x112 depthwise stride-2
    # slice is 14.7k floats, its edges 0.5k of them)
    parts: list[Stmt] = []
    for h0, h1 in ((0, min(PH, HP)), (PH + rows, HP)):
        if h1 > h0:
            a, b = ctx.var("cr"), ctx.var("pw")
            fill_idx = (a // (h1 - h0), h0 + a % (h1 - h0), b // WQ, b % WQ)
            parts.append(loops([(a, channels * (h1 - h0)), (b, SW * WQ)], Store(xp, fill_idx, const(fill))))
    if rows > 0:  # every input row's pieces (its edges per phase, its columns) in one loop over (channel, row)
        c1, ih = ctx.var("c"), ctx.var("ih")
        row = row_copy(ctx, xp, (c1, ih + PH), x, (n, ch0 + c1, ih), WQ, SW, PW, fill)
        parts.append(loops([(c1, channels), (ih, rows)], row))
    return xp, Stage(f"{ctx.tag}.pad", seq(*parts))


def column_pieces(W: int, WQ: int, SW: int, PW: int) -> list[tuple[list[tuple[int, int, int]], int, int]]:
    """How a padded, phase-split row of ``WQ`` columns per phase is copied from an input row of ``W``:
    ``(taps, lo, hi)`` loops over ``t`` in ``[lo, hi]``, each copying input column ``t*SW + j`` to phase ``p``,
    column ``t + q`` for every ``(p, q, j)`` in ``taps`` (the columns outside the input are left to the fill).

    The loops run over the input's groups of ``SW`` adjacent columns, which land one in each phase: every
    iteration reads one contiguous group, which LLVM loads as whole vectors and shuffles, and a row of ``W``
    columns is ``W // SW`` iterations with no remainder where ``SW`` divides it (looping over the slice's
    columns instead, ``[1, 55]`` for a 112-wide row's 3x3/2 windows, left seven iterations of each row to a
    scalar remainder: a 48x112x112 depthwise convolution ran 1.15x faster this way).  A loop per phase
    would read at stride SW with gaps, which LLVM left scalar.  Columns only some phases keep (past the
    slice's last window) go in loops of their own.

        >>> column_pieces(224, 115, 2, 3)      # a 7x7/2 convolution's row, padding 3
        [([(1, 1, 0), (0, 2, 1)], 0, 111)]
        >>> column_pieces(113, 57, 2, 1)       # an odd row: its last column alone
        [([(1, 0, 0), (0, 1, 1)], 0, 55), ([(1, 0, 0)], 56, 56)]
    """
    taps = [((j + PW) % SW, (j + PW) // SW, j) for j in range(SW)]
    # per tap, the last t whose input column lies inside the row and whose slice column inside the slice
    last = [min((W - 1 - j) // SW, WQ - 1 - q) for _, q, j in taps]
    common = min(last)
    pieces = [(taps, 0, common)] if common >= 0 else []
    for tap, hi in zip(taps, last, strict=True):
        if hi > max(common, -1):
            pieces.append(([tap], max(common, -1) + 1, hi))
    return pieces


def row_copy(
    ctx: LowerCtx,
    dst: Buffer,
    at: tuple[Expr, ...],
    x: Buffer,
    row: tuple[Expr, Expr, Expr],
    WQ: int,
    SW: int,
    PW: int,
    fill: float,
) -> Stmt:
    """The copy of input row ``x[row]`` into a padded, phase-split row ``dst[*at, ph, wq]`` of ``WQ`` columns
    per phase: its columns (``column_pieces``) and, per phase, the columns outside the input (``fill``)."""
    W = x.shape[-1]
    parts: list[Stmt] = []
    for p, a, b in edge_spans(W, WQ, SW, PW):
        e = ctx.var("e")
        parts.append(loops([(e, b - a)], Store(dst, (*at, IntImm(p), e + a), const(fill))))
    for taps, lo, hi in column_pieces(W, WQ, SW, PW):
        t = ctx.var("t")
        copies = [Store(dst, (*at, IntImm(p), t + lo + q), x[(*row, (t + lo) * SW + j)]) for p, q, j in taps]
        parts.append(loops([(t, hi - lo + 1)], seq(*copies)))
    return seq(*parts)


def edge_spans(W: int, WQ: int, SW: int, PW: int) -> list[tuple[int, int, int]]:
    """The columns of a padded, phase-split row that no input column lands on: ``(phase, start, end)`` runs
    of ``wq`` in ``[start, end)``, before and after each phase's span (``phase_spans``; all ``WQ`` of a phase
    with none).

        >>> edge_spans(224, 115, 2, 3)      # a 7x7/2 convolution's row, padding 3
        [(0, 0, 2), (0, 114, 115), (1, 0, 1), (1, 113, 115)]
    """
    out = []
    for p, (lo, hi) in enumerate(phase_spans(W, WQ, SW, PW)):
        lo, hi = (lo, hi) if hi >= lo else (WQ, WQ - 1)
        out += [(p, a, b) for a, b in ((0, lo), (hi + 1, WQ)) if b > a]
    return out


def phase_spans(W: int, WQ: int, SW: int, PW: int) -> list[tuple[int, int]]:
    """Per phase ``p``, the ``[lo, hi]`` of the ``wq`` whose column ``wq*SW + p - PW`` lies inside an input row
    of ``W`` (empty when ``hi < lo``)."""
    return [(max(0, -(-(PW - p) // SW)), min(WQ - 1, (W - 1 + PW - p) // SW)) for p in range(SW)]


def row_slice(
    ctx: LowerCtx,
    x: Buffer,
    n: Expr,
    ch0: Expr,
    channels: int,
    oh: Expr,
    out_w: int,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    pad: tuple[int, int],
    dilation: tuple[int, int],
) -> tuple[Buffer, Stmt]:
    """One output row's windows: a local ``xr[c, kh, ph, wq]`` holding input row ``oh*SH - PH + kh*DH`` of
    channel ``ch0 + c``, column ``wq*SW + ph - PW`` (zero outside the input), and the stage filling it.

    Column ``ow*SW + kw*DW`` of tap ``(kh, kw)`` is ``xr[c, kh, (kw*DW) % SW, ow + (kw*DW) // SW]``: unit
    stride in ``ow``, no bounds select, whatever the stride (``padded_slice`` for one output row, its input
    rows chosen at run time).  A tap row inside the input is copied (``row_copy``) and only its columns
    outside the input zeroed; a row outside it is zeroed whole (``_rows_or_zeros``)."""
    (KH, _), (SH, SW), (PH, PW), (DH, _) = kernel, stride, pad, dilation
    WQ = slice_shape((1, out_w), kernel, stride, dilation)[1]
    xr = Buffer(ctx.namer.name(f"{ctx.tag}_xrow"), (channels, KH, SW, WQ), scope="local")
    body = _rows_or_zeros(ctx, xr, x, n, ch0, "kh", lambda kh: oh * SH - PH + kh * DH, PW)
    return xr, Stage(f"{ctx.tag}.row", body)


def block_slice(
    ctx: LowerCtx,
    x: Buffer,
    n: Expr,
    ch0: Expr,
    channels: int,
    oh0: Expr,
    out_rows: int,
    out_w: int,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    pad: tuple[int, int],
    dilation: tuple[int, int],
) -> tuple[Buffer, Stmt]:
    """The windows of ``out_rows`` output rows from ``oh0``: a local ``xb[c, hb, ph, wq]`` holding input row
    ``oh0*SH - PH + hb`` of channel ``ch0 + c``, column ``wq*SW + ph - PW`` (zero outside the input), and the
    stage filling it: ``padded_slice`` for one block of output rows, its input rows chosen at run time.

    Output row ``oh0 + r``'s tap ``(kh, kw)`` at column ``ow`` is ``xb[c, r*SH + kh*DH, (kw*DW) % SW,
    ow + (kw*DW) // SW]``.  A block's slice stays in L1 where a large plane's does not (a 112x112 plane split
    by phase is 51 KiB), at the cost of copying again the rows two blocks share.  Rows are filled as
    ``row_slice``'s are (``_rows_or_zeros``)."""
    (SH, SW), (PH, PW) = stride, pad
    HB, WQ = slice_shape((out_rows, out_w), kernel, stride, dilation)
    xb = Buffer(ctx.namer.name(f"{ctx.tag}_xblk"), (channels, HB, SW, WQ), scope="local")
    body = _rows_or_zeros(ctx, xb, x, n, ch0, "hb", lambda hb: oh0 * SH - PH + hb, PW)
    return xb, Stage(f"{ctx.tag}.pad", body)


def _rows_or_zeros(
    ctx: LowerCtx, dst: Buffer, x: Buffer, n: Expr, ch0: Expr, row: str, input_row: Callable[[Var], Expr], PW: int
) -> Stmt:
    """Fill ``dst[c, r, ph, wq]`` (its shape: channels, rows, phases, columns per phase) with input row
    ``input_row(r)`` of channel ``ch0 + c`` where that row lies inside the input (``row_copy``), zeros where
    it does not (the rows above and below the input, chosen at run time)."""
    channels, rows, SW, WQ = dst.shape
    c1, r = ctx.var("c"), ctx.var(row)
    ih = input_row(r)
    inside = row_copy(ctx, dst, (c1, r), x, (n, ch0 + c1, ih), WQ, SW, PW, 0.0)
    ph, wq = ctx.var("ph"), ctx.var("wq")
    outside = loops([(ph, SW), (wq, WQ)], Store(dst, (c1, r, ph, wq), const(0.0)))
    return loops([(c1, channels), (r, rows)], If(land(ge(ih, 0), lt(ih, x.shape[2])), inside, outside))
