"""The blocked channel layout NCHWc (``rewrite/ir/ops/blocked.py``): its conversions as copies, and
convolutions in it.

* dense (``groups`` 1): per image one GEMM ``C[OH*OW, KB*b] = im2col(x)[OH*OW, Cg*KH*KW] @ W``, pixels
  as rows and output channels as columns, so every micro-tile's columns are one block's ``b`` lanes of
  consecutive pixels: ``b`` floats apart, a row-major tile (``GemmInfo.nr``: the tile is one block wide);
* depthwise: direct, per (image, block) a zero-padded local copy of the block's input plane, then per
  output row ``T`` pixels at a time: each tap is one ``b``-lane multiply-add per pixel, ``T`` pixels
  independent accumulation chains, no row tails (the lanes are channels, not pixels).
"""

from __future__ import annotations

from collections.abc import Callable

from lower.ir import (
    Allocate,
    Buffer,
    Expr,
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
from lower.ops_to_loops.contraction import _gemm
from lower.ops_to_loops.core import GemmInfo, LowerCtx, copy_stage, lowering
from lower.ops_to_loops.elementwise import ACTIVATIONS
from rewrite.ir.graph import Node

DW_TILE = 8  # output pixels per pass of a depthwise row: independent FMA chains, each tap's weight vector reused
DW_TILE_MAX_TAPS = 32  # with larger windows 4 pixels a pass (the unrolled taps x pixels stay near 200)


def _lanes(c: Expr, n: int, total: int, load: Callable[[], Expr]) -> Expr:
    """``load()`` where channel ``c`` < ``n`` (the real channels), zero in a padded block's lanes."""
    return load() if n == total else Select(lt(c, n), load(), const(0.0))


def _block_copy(ctx: LowerCtx, src: Buffer, out: Buffer, axis: int) -> Stmt:
    """``out`` = ``src`` with dimension ``axis`` (activations' C: 1, weights' K: 0) cut into blocks, the
    block's lanes last, zero past ``src``'s size there."""
    B, n = out.shape[-1], src.shape[axis]

    def load(v: list[Var]) -> Expr:
        ch = v[axis] * B + v[-1]
        return _lanes(
            ch, n, out.shape[axis] * B, lambda: src[tuple(ch if d == axis else e for d, e in enumerate(v[:-1]))]
        )

    return copy_stage(ctx, ctx.tag, out, load)


@lowering("to_blocked")
def lower_to_blocked(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    return _block_copy(ctx, ins[0], outs[0], 1)


@lowering("from_blocked")
def lower_from_blocked(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    y = ins[0]
    B = y.shape[4]
    return copy_stage(ctx, ctx.tag, outs[0], lambda v: y[v[0], v[1] // B, v[2], v[3], v[1] % B])


@lowering("blocked_weight")
def lower_blocked_weight(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    return _block_copy(ctx, ins[0], outs[0], 0)


def _bias_init(node: Node, ins: list[Buffer], lanes: int) -> Callable[[Expr], Expr]:
    """Output channel -> its initial value: the bias (zero in padded lanes), or zero."""
    if node.op != "conv2d_blocked_bias_act":
        return lambda j: const(0.0)
    bias = ins[2]
    return lambda j: _lanes(j, bias.shape[0], lanes, lambda: bias[j])


@lowering("conv2d_blocked", "conv2d_blocked_bias_act")
def lower_conv2d_blocked(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    if node.attrs["groups"] > 1:
        return _depthwise(node, ins, outs, ctx)
    x, wb = ins[:2]
    out = outs[0]
    a = node.attrs
    N, _, H, W, B = x.shape
    KB, Cg, KH, KW, _ = wb.shape
    _, _, OH, OW, _ = out.shape
    (SH, SW), (PH, PW), (DH, DW) = a["stride"], a["padding"], a["dilation"]
    init = _bias_init(node, ins, KB * B)

    def kdecomp(k: Expr) -> tuple[Expr, Expr, Expr]:
        return (k // KW) // KH, (k // KW) % KH, k % KW

    def a_val(bv: list[Var], i: Var, k: Var) -> Expr:
        c, kh, kw = kdecomp(k)
        ih = (i // OW) * SH - PH + kh * DH
        iw = (i % OW) * SW - PW + kw * DW
        tap = x[bv[0], c // B, ih, iw, c % B]
        if not (PH or PW):
            return tap
        return Select(land(ge(ih, 0), lt(ih, H), ge(iw, 0), lt(iw, W)), tap, const(0.0))

    def b_val(bv: list[Var], k: Var, j: Var) -> Expr:
        c, kh, kw = kdecomp(k)
        return wb[j // B, c, kh, kw, j % B]

    stmt = _gemm(
        ctx,
        out,
        [(ctx.var("n"), N)],
        OH * OW,
        KB * B,
        Cg * KH * KW,
        lambda bv, i, j: (bv[0], j // B, i // OW, i % OW, j % B),
        a_val,
        b_val,
        lambda bv, i, j: init(j),
        x.name,
        wb.name,
        a.get("act", "none"),
    )
    assert ctx.gemm is not None
    ctx.gemm.nr = B
    if KH == KW == 1 and (SH, SW) == (1, 1) and (PH, PW) == (0, 0) and Cg % B == 0:
        ctx.gemm.kc = B  # one input block per k block: A rows (pixels) B floats apart, read in place
    return stmt


def _depthwise(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """Per (n, block g): ``xp[hp, wp, c]`` = the block's plane zero-padded, then per output row ``oh`` and
    run of ``T`` pixels::

        acc[t, c] = out[n, g, oh, ow0 + t, c]                                   (init, folded residual)
        acc[t, c] += w[g, 0, kh, kw, c] * xp[oh*SH + kh*DH, (ow0 + t)*SW + kw*DW, c]   for c, kh, kw, t
        out[n, g, oh, ow0 + t, c] = acc[t, c]                                   for t < OW - ow0

    ``c`` is the vector loop (whole blocks: no tails); the init and activation passes run over the plane."""
    x, wb = ins[:2]
    out = outs[0]
    a = node.attrs
    N, G, H, W, B = x.shape
    _, _, KH, KW, _ = wb.shape
    _, _, OH, OW, _ = out.shape
    (SH, SW), (PH, PW), (DH, DW) = a["stride"], a["padding"], a["dilation"]
    T = min(OW, DW_TILE if KH * KW <= DW_TILE_MAX_TAPS else DW_TILE // 2)
    OWT = -(-OW // T)
    HP = (OH - 1) * SH + (KH - 1) * DH + 1
    WP = (OWT * T - 1) * SW + (KW - 1) * DW + 1
    n, g = ctx.var("n"), ctx.var("g")
    xp = Buffer(ctx.namer.name(f"{ctx.tag}_xpad"), (HP, WP, B), scope="local")
    p, c0 = ctx.var("p"), ctx.var("c")
    fill: list[Stmt] = [loops([(p, HP * WP), (c0, B)], Store(xp, (p // WP, p % WP, c0), const(0.0)))]
    rows, cols = min(H, HP - PH), min(W, WP - PW)
    if rows > 0 and cols > 0:
        ih, iw, c1 = ctx.var("ih"), ctx.var("iw"), ctx.var("c")
        fill.append(loops([(ih, rows), (iw, cols), (c1, B)], Store(xp, (ih + PH, iw + PW, c1), x[n, g, ih, iw, c1])))
    pad = Stage(f"{ctx.tag}.pad", seq(*fill))
    acc = Buffer(ctx.namer.name(f"{ctx.tag}_acc"), (T, B), scope="local")
    oh, ob = ctx.var("oh"), ctx.var("ob")
    live = emin(T, OW - ob * T)  # pixels of this run inside the row
    t1, c2, t2, c3, t3, c4 = (ctx.var(s) for s in ("t", "c", "t", "c", "t", "c"))
    load = [loops([(t1, live), (c2, B)], Store(acc, (t1, c2), out[n, g, oh, ob * T + t1, c2]))]
    if OW % T:  # the last run's pixels past the row: zero, never stored
        load.append(loops([(t3, emax(0, T - live)), (c4, B)], Store(acc, (T - 1 - t3, c4), const(0.0))))
    c, kh, kw, t = (ctx.var(s) for s in ("c", "kh", "kw", "t"))
    tap = xp[oh * SH + kh * DH, (ob * T + t) * SW + kw * DW, c]
    upd = Store(acc, (t, c), acc[t, c] + wb[g, 0, kh, kw, c] * tap)
    main = loops([(c, B), (kh, KH), (kw, KW), (t, T)], upd)
    store = loops([(t2, live), (c3, B)], Store(out, (n, g, oh, ob * T + t2, c3), acc[t2, c3]))
    runs = loops([(oh, OH), (ob, OWT)], Allocate(acc, seq(*load, main, store)))
    body = Stage(ctx.tag, loops([(n, N), (g, G)], Allocate(xp, seq(pad, runs))))
    init_v = _bias_init(node, ins, G * B)
    v0 = [ctx.var(s) for s in ("n", "g", "oh", "ow", "c")]
    cidx0 = tuple(v0)
    init_name = f"{ctx.tag}.init"
    init = Stage(
        init_name, loops(list(zip(v0, [N, G, OH, OW, B], strict=True)), Store(out, cidx0, init_v(v0[1] * B + v0[4])))
    )
    ctx.gemm = GemmInfo(
        ctx.tag,
        init_name,
        [n.name, g.name],
        ob.name,
        c.name,
        kh.name,
        out.name,
        B,
        OH * OW,
        KH * KW,
        wb.name,
        x.name,
        list(v0),
        [N, G, OH, OW, B],
        cidx0,
        direct=True,
    )
    stages: list[Stmt] = [init, body]
    act = a.get("act", "none")
    if act != "none":
        if act not in ACTIVATIONS:
            raise ctx.error(f"unknown activation {act!r}")
        v1 = [ctx.var(s) for s in ("n", "g", "oh", "ow", "c")]
        act_stage = Stage(
            f"{ctx.tag}.act",
            loops(
                list(zip(v1, [N, G, OH, OW, B], strict=True)), Store(out, tuple(v1), ACTIVATIONS[act](out[tuple(v1)]))
            ),
        )
        ctx.gemm.post.append(act_stage.name)
        stages.append(act_stage)
    return seq(*stages)
