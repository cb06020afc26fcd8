"""Sliding windows (direct convolution, pooling): the input slice copied once into a padded, phase-split
local buffer, so that every window tap reads it at unit stride along the output row."""

from __future__ import annotations

from lower.ir import Buffer, Expr, IntImm, Stage, Stmt, Store, const, loops, seq
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
    stride in ``ow`` whatever the stride.  The stage writes ``fill`` everywhere, then copies the input's
    rows in (bounds known at compile time: no per-element selects), every phase in one loop over the
    columns they all have, and the few that only some phases have one loop per phase::

        xp[c, hp, ph, wq] = fill                                         for (c, hp), (ph, wq)
        xp[c, ih + PH, ph, lo + t] = x[n, ch0 + c, ih, (lo + t)*SW + ph - PW]   for c, ih, t; ph
    """
    _, _, H, W = x.shape
    SW, (PH, PW) = stride[1], pad
    HP, WQ = slice_shape(out_hw, kernel, stride, dilation)
    xp = Buffer(ctx.namer.name(f"{ctx.tag}_xpad"), (channels, HP, SW, WQ), scope="local")
    # the fill: (channel, row) x (phase, column) pairs, so the inner loop runs contiguously over a whole padded
    # row's phases (one // and % each side, which fold away) instead of one short loop per row and phase
    a, b = ctx.var("cr"), ctx.var("pw")
    fill_idx = (a // HP, a % HP, b // WQ, b % WQ)
    parts: list[Stmt] = [loops([(a, channels * HP), (b, SW * WQ)], Store(xp, fill_idx, const(fill)))]
    rows = min(H, HP - PH)
    # each phase's columns inside the input: wq in [lo, hi]
    spans = []
    for p in range(SW):
        lo = max(0, -(-(PW - p) // SW))  # first wq whose column lies inside the input
        hi = min(WQ - 1, (W - 1 + PW - p) // SW)
        spans.append((p, lo, hi))
    # the columns every phase has are copied in one loop that reads all SW phases of each: the SW loads of
    # an iteration are adjacent, one interleaved group that LLVM loads as whole vectors and shuffles (a loop
    # per phase reads at stride SW with gaps, which it left scalar: a 3x3/2 pool's copy took longer than the
    # pool); the few columns only some phases have go one loop per phase
    both_lo, both_hi = max(lo for _, lo, _ in spans), min(hi for _, _, hi in spans)
    pieces: list[tuple[list[int], int, int]] = []
    if both_hi >= both_lo:
        pieces.append((list(range(SW)), both_lo, both_hi))
        for p, lo, hi in spans:
            pieces += [([p], lo, min(hi, both_lo - 1)), ([p], max(lo, both_hi + 1), hi)]
    else:
        pieces += [([p], lo, hi) for p, lo, hi in spans]
    for phases, lo, hi in pieces:
        if hi < lo or rows <= 0:
            continue
        c1, ih, t = ctx.var("c"), ctx.var("ih"), ctx.var("t")
        copies = [
            Store(xp, (c1, ih + PH, IntImm(p), t + lo), x[n, ch0 + c1, ih, (t + lo) * SW + p - PW]) for p in phases
        ]
        parts.append(loops([(c1, channels), (ih, rows), (t, hi - lo + 1)], seq(*copies)))
    return xp, Stage(f"{ctx.tag}.pad", seq(*parts))
