"""Sliding windows (direct convolution, pooling): the input slice copied once into a padded, phase-split
local buffer, so that every window tap reads it at unit stride along the output row."""

from __future__ import annotations

from lower.ir import Buffer, Expr, IntImm, Stage, Stmt, Store, Var, const, loops, seq
from lower.ops_to_loops.core import LowerCtx


def padded_slice(
    ctx: LowerCtx,
    x: Buffer,
    n: Var,
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
    rows in (one loop per column phase, bounds known at compile time: no per-element selects)::

        xp[c, hp, ph, wq] = fill                                     for (c, hp), (ph, wq)
        xp[c, ih + PH, ph, lo + t] = x[n, ch0 + c, ih, (lo + t)*SW + ph - PW]   for ph; c, ih, t
    """
    _, _, H, W = x.shape
    (OH, OW), (KH, KW), (SH, SW), (PH, PW), (DH, DW) = out_hw, kernel, stride, pad, dilation
    HP = (OH - 1) * SH + (KH - 1) * DH + 1
    WQ = OW + (KW - 1) * DW // SW
    xp = Buffer(ctx.namer.name(f"{ctx.tag}_xpad"), (channels, HP, SW, WQ), scope="local")
    # the fill: (channel, row) x (phase, column) pairs, so the inner loop runs contiguously over a whole padded
    # row's phases (one // and % each side, which fold away) instead of one short loop per row and phase
    a, b = ctx.var("cr"), ctx.var("pw")
    fill_idx = (a // HP, a % HP, b // WQ, b % WQ)
    parts: list[Stmt] = [loops([(a, channels * HP), (b, SW * WQ)], Store(xp, fill_idx, const(fill)))]
    rows = min(H, HP - PH)
    for p in range(SW):
        lo = max(0, -(-(PW - p) // SW))  # first wq whose column lies inside the input
        hi = min(WQ - 1, (W - 1 + PW - p) // SW)
        if hi < lo or rows <= 0:
            continue
        c1, ih, t = ctx.var("c"), ctx.var("ih"), ctx.var("t")
        parts.append(
            loops(
                [(c1, channels), (ih, rows), (t, hi - lo + 1)],
                Store(xp, (c1, ih + PH, IntImm(p), t + lo), x[n, ch0 + c1, ih, (t + lo) * SW + p - PW]),
            )
        )
    return xp, Stage(f"{ctx.tag}.pad", seq(*parts))
