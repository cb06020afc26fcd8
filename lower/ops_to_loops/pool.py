"""Pooling: windows with padding bounds, global and adaptive average pooling."""

from __future__ import annotations

from lower.ir import (
    F32,
    Buffer,
    Cast,
    Expr,
    For,
    IntImm,
    Select,
    Stage,
    Stmt,
    Store,
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
from rewrite.ir.graph import Node


# ============================================================== pooling
def _window(o: Expr, k: Expr, size: int, kern: int, stride: int, pad: int) -> tuple[Expr, Expr]:
    """Input coordinate of window tap ``k`` of output ``o`` and whether it lies inside the input."""
    pos = o * stride - pad + k
    return pos, land(ge(pos, 0), lt(pos, size))


@lowering("maxpool2d", "avgpool2d", "maxpool2d_blocked", "avgpool2d_blocked")
def lower_pool(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """NCHW, or NCHWc (``_blocked``: the block's lanes innermost, every tap one vector of channels)."""
    x, out = ins[0], outs[0]
    a = node.attrs
    N, C, H, W = x.shape[:4]
    _, _, OH, OW = out.shape[:4]
    (KH, KW), (SH, SW), (PH, PW) = a["kernel"], a["stride"], a["padding"]
    n, c, oh, ow, kh, kw, lane = (ctx.var(s) for s in ("n", "c", "oh", "ow", "kh", "kw", "l"))
    lanes = (lane,) if x.rank == 5 else ()
    ih, okh = _window(oh, kh, H, KH, SH, PH)
    iw, okw = _window(ow, kw, W, KW, SW, PW)
    inside = land(okh, okw)
    tap = x[(n, c, clip(ih, H - 1), clip(iw, W - 1), *lanes)]
    oi = (n, c, oh, ow, *lanes)
    o = out[oi]
    if node.op.startswith("maxpool2d"):
        init, upd, fin = const(NEG_INF), emax(o, Select(inside, tap, const(NEG_INF))), None
    else:
        init, upd = const(0.0), o + Select(inside, tap, const(0.0))
        hs, ws = oh * SH - PH, ow * SW - PW
        he, we = emin(hs + KH, H + PH), emin(ws + KW, W + PW)
        if not a["count_include_pad"]:
            hs, ws, he, we = emax(hs, 0), emax(ws, 0), emin(he, H), emin(we, W)
        count = Cast(F32, (he - hs) * (we - ws))
        fin = Store(out, oi, o / count)
    body = seq(Store(out, oi, init), For(kh, IntImm(KH), For(kw, IntImm(KW), Store(out, oi, upd))), fin)
    if lanes:
        body = For(lane, IntImm(x.shape[4]), body)
    return Stage(ctx.tag, loops([(n, N), (c, C), (oh, OH), (ow, OW)], body))


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
