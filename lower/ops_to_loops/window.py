"""Sliding windows (direct convolution, pooling): the input slice copied once into a padded, phase-split
local buffer, so that every window tap reads it at unit stride along the output row."""

from __future__ import annotations

from lower.ir import Buffer, Expr, If, IntImm, Stage, Stmt, Store, const, ge, land, loops, lt, seq
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
    known at compile time: no per-element selects), every phase in one loop over the columns they all
    have, and the few that only some phases have one loop per phase::

        xp[c, hp, ph, wq] = fill                       for (c, hp) outside the input rows, (ph, wq)
        xp[c, ih + PH, ph, wq] = fill                  for c, ih; ph, wq outside phase ph's columns
        xp[c, ih + PH, ph, lo + t] = x[n, ch0 + c, ih, (lo + t)*SW + ph - PW]   for c, ih, t; ph
    """
    _, _, H, W = x.shape
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
    if rows > 0:
        for p, e0, e1 in edge_spans(W, WQ, SW, PW):
            c0, ih0, t0 = ctx.var("c"), ctx.var("ih"), ctx.var("e")
            edge = Store(xp, (c0, ih0 + PH, IntImm(p), t0 + e0), const(fill))
            parts.append(loops([(c0, channels), (ih0, rows), (t0, e1 - e0)], edge))
    for phases, lo, hi in column_pieces(W, WQ, SW, PW):
        if rows <= 0:
            continue
        c1, ih, t = ctx.var("c"), ctx.var("ih"), ctx.var("t")
        copies = [
            Store(xp, (c1, ih + PH, IntImm(p), t + lo), x[n, ch0 + c1, ih, (t + lo) * SW + p - PW]) for p in phases
        ]
        parts.append(loops([(c1, channels), (ih, rows), (t, hi - lo + 1)], seq(*copies)))
    return xp, Stage(f"{ctx.tag}.pad", seq(*parts))


def column_pieces(W: int, WQ: int, SW: int, PW: int) -> list[tuple[list[int], int, int]]:
    """How a padded, phase-split row of ``WQ`` columns per phase is copied from an input row of ``W``:
    ``(phases, lo, hi)`` loops over ``wq`` in ``[lo, hi]``, each copying column ``wq*SW + p - PW`` of the
    input for every ``p`` in ``phases`` (the columns outside the input are left to the fill).

    The columns every phase has are copied in one loop that reads all SW phases of each: the SW loads of
    an iteration are adjacent, one interleaved group that LLVM loads as whole vectors and shuffles (a loop
    per phase reads at stride SW with gaps, which it left scalar: a 3x3/2 pool's copy took longer than the
    pool); the few columns only some phases have go one loop per phase.

        >>> column_pieces(224, 115, 2, 3)      # a 7x7/2 convolution's row, padding 3
        [([0, 1], 2, 112), ([0], 113, 113), ([1], 1, 1)]
    """
    spans = [(p, *span) for p, span in enumerate(phase_spans(W, WQ, SW, PW))]
    both_lo, both_hi = max(lo for _, lo, _ in spans), min(hi for _, _, hi in spans)
    pieces: list[tuple[list[int], int, int]] = []
    if both_hi >= both_lo:
        pieces.append((list(range(SW)), both_lo, both_hi))
        for p, lo, hi in spans:
            pieces += [([p], lo, min(hi, both_lo - 1)), ([p], max(lo, both_hi + 1), hi)]
    else:
        pieces += [([p], lo, hi) for p, lo, hi in spans]
    return [(ph, lo, hi) for ph, lo, hi in pieces if hi >= lo]


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
    rows chosen at run time).  A tap row inside the input is copied (``column_pieces``) and only its columns
    outside the input zeroed; a row outside it is zeroed whole::

        if 0 <= ih < H:  xr[c, kh, ph, lo + t] = x[n, ch0 + c, ih, (lo + t)*SW + ph - PW]   (and the edges 0)
        else:            xr[c, kh, ph, wq] = 0
    """
    _, _, H, W = x.shape
    (KH, _), (SH, SW), (PH, PW), (DH, _) = kernel, stride, pad, dilation
    WQ = slice_shape((1, out_w), kernel, stride, dilation)[1]
    xr = Buffer(ctx.namer.name(f"{ctx.tag}_xrow"), (channels, KH, SW, WQ), scope="local")
    c1, kh = ctx.var("c"), ctx.var("kh")
    ih = oh * SH - PH + kh * DH
    inside: list[Stmt] = []
    for p, a, b in edge_spans(W, WQ, SW, PW):  # each phase's columns outside the input: zero
        t = ctx.var("e")
        inside.append(loops([(t, b - a)], Store(xr, (c1, kh, IntImm(p), t + a), const(0.0))))
    for phases, lo, hi in column_pieces(W, WQ, SW, PW):
        t = ctx.var("t")
        copies = [Store(xr, (c1, kh, IntImm(p), t + lo), x[n, ch0 + c1, ih, (t + lo) * SW + p - PW]) for p in phases]
        inside.append(loops([(t, hi - lo + 1)], seq(*copies)))
    ph, wq = ctx.var("ph"), ctx.var("wq")
    outside = loops([(ph, SW), (wq, WQ)], Store(xr, (c1, kh, ph, wq), const(0.0)))
    body = loops([(c1, channels), (kh, KH)], If(land(ge(ih, 0), lt(ih, H)), seq(*inside), outside))
    return xr, Stage(f"{ctx.tag}.row", body)
