"""The blocked channel layout NCHWc (``rewrite/ir/ops/blocked.py``): its conversions as copies, and
convolutions in it.

* dense (``groups`` 1): per image one GEMM ``C[OH*OW, KB*b] = im2col(x)[OH*OW, Cg*KH*KW] @ W``, pixels
  as rows and output channels as columns, so every micro-tile's columns are one block's ``b`` lanes of
  consecutive pixels: ``b`` floats apart, a row-major tile (``GemmInfo.nr``: the tile is one block wide);
* depthwise: direct, per (image, block) a ring of the zero-padded input rows the current output row's
  windows read (each row copied in once), then per output row ``T`` pixels at a time: each tap is one
  ``b``-lane multiply-add per pixel, ``T`` pixels independent accumulation chains, no row tails (the lanes
  are channels, not pixels).
"""

from __future__ import annotations

from collections.abc import Callable

from lower.ir import (
    F32,
    Allocate,
    Buffer,
    Expr,
    For,
    If,
    IntImm,
    Intrinsic,
    LoopKind,
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
TRANSPOSE_BLOCKS = (4, 8, 16)  # the block sizes whose conversions call a backend's tile transpose


def transpose_name(b: int) -> str:
    """The ``Intrinsic`` transposing a local ``b`` x ``b`` tile into place (``lower/llvm/transpose.py``)."""
    return f"transpose_{b}"


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


def _tiled(ctx: LowerCtx, nchw: Buffer, blocked: Buffer) -> bool:
    """Whether a conversion between these two runs by tiles through the backend's transpose: float32, a block
    size it has, a CPU (a grid backend runs the copy, one thread an element), and planes of at least one
    tile's pixels (a squeeze-and-excitation's [N, C, 1, 1] scale is C floats: a copy, scheduled like any
    other, where tiles would shuffle 16 rows per pixel and always launch in parallel)."""
    return (
        not ctx.grid
        and blocked.shape[4] in TRANSPOSE_BLOCKS
        and nchw.dtype == F32
        and blocked.dtype == F32
        and len(nchw.shape) == 4
        and nchw.shape[2] * nchw.shape[3] >= blocked.shape[4]
    )


def _tile_stage(
    ctx: LowerCtx, nchw: Buffer, blocked: Buffer, load: Callable[[Expr, Expr, Expr, Var, Var], Expr], to: bool
) -> Stmt:
    """A conversion by ``b`` x ``b`` tiles: per (image, channel block, run of ``b`` pixels) the tile is read into
    a local copy (``load(n, cb, p0, i, j)``: element ``(i, j)``, contiguous along ``j``; an inlined producer
    computes there), then the backend's routine transposes it into place.  ``to``: NCHW -> NCHWc (tile rows
    are channels, stored as the ``b`` lanes of each pixel, the lanes past the channels zero), else NCHWc -> NCHW
    (tile rows are pixels, stored as a run of pixels per real channel).

    The last run of a plane (``P % b`` pixels) reads only those, and an NCHW block past the channels only its
    real rows: no loads guarded lane by lane (LLVM left such a copy scalar), no reads past a buffer; what the
    tile holds past them lands in lanes the routine does not store."""
    N, C, H, W = nchw.shape
    CB, B = blocked.shape[1], blocked.shape[4]
    P = H * W
    PT, tail = -(-P // B), P % B
    t = ctx.var("t")
    n, cb, pt = t // (CB * PT), (t // PT) % CB, t % PT
    tile = Buffer(ctx.namer.name(f"{ctx.tag}_tile"), (B, B), F32, scope="local")

    def copy(rows: int, cols: int, first: int = 0, value: Expr | None = None) -> Stmt:
        i, j = ctx.var("i"), ctx.var("j")
        v = value if value is not None else load(n, cb, pt * B, i, j)
        return For(i, IntImm(rows), For(j, IntImm(cols), Store(tile, (i + first, j), v), LoopKind.VECTORIZED))

    def branch(cond: Expr | None, then: Stmt, orelse: Stmt) -> Stmt:
        return then if cond is None else If(cond, then, orelse)

    pix_tail = lt(pt, PT - 1) if tail else None
    if to:
        real = C - (CB - 1) * B  # the last block's real channels
        chan_tail = lt(cb, CB - 1) if real < B else None

        def rows_of(cols: int) -> Stmt:
            part = seq(copy(real, cols), copy(B - real, B, real, const(0.0))) if real < B else copy(B, cols)
            return branch(chan_tail, copy(B, cols), part)

        fill = branch(pix_tail, rows_of(B), rows_of(tail))
    else:
        fill = branch(pix_tail, copy(B, B), copy(tail, B))
    pixels: Expr = IntImm(B) if pix_tail is None else Select(pix_tail, IntImm(B), IntImm(tail))
    args: tuple[Buffer, Expr, Expr, Expr, Expr]
    if to:
        args = (blocked, ((n * CB + cb) * P + pt * B) * B, IntImm(B), pixels, IntImm(B))
    else:
        chans: Expr = IntImm(B) if C % B == 0 else emin(IntImm(B), IntImm(C) - cb * B)
        args = (nchw, (n * C + cb * B) * P + pt * B, IntImm(P), chans, pixels)
    call = Intrinsic(transpose_name(B), (tile, IntImm(0), *args), reads=(tile,), writes=(args[0],))
    return Stage(ctx.tag, For(t, IntImm(N * CB * PT), Allocate(tile, seq(fill, call)), LoopKind.PARALLEL))


@lowering("to_blocked")
def lower_to_blocked(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, out = ins[0], outs[0]
    # a block of a few channels (an RGB image) is mostly zero lanes: a copy gathering the few real ones stores
    # each pixel's block once, the tiles shuffle 16 rows for it (3 x 224 x 224: 69 us copied, 89 us in tiles;
    # 8 channels: 32 us against 23)
    if not _tiled(ctx, x, out) or x.shape[1] <= out.shape[4] // 4:
        return _block_copy(ctx, x, out, 1)
    W, B = x.shape[3], out.shape[4]
    return _tile_stage(ctx, x, out, lambda n, cb, p0, i, j: x[n, cb * B + i, (p0 + j) // W, (p0 + j) % W], True)


@lowering("from_blocked")
def lower_from_blocked(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    y, out = ins[0], outs[0]
    B = y.shape[4]
    if not _tiled(ctx, out, y):
        return copy_stage(ctx, ctx.tag, out, lambda v: y[v[0], v[1] // B, v[2], v[3], v[1] % B])
    W = out.shape[3]
    return _tile_stage(ctx, out, y, lambda n, cb, p0, i, j: y[n, cb, (p0 + i) // W, (p0 + i) % W, j], False)


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
    """Per (n, block g), a ring ``xr[slot, wp, c]`` of the ``span = (KH - 1) * DH + 1`` zero-padded input rows
    the current output row's windows read (padded row ``r`` in slot ``r % span``), each row copied in once,
    as the output rows reach it; then per output row ``oh`` and run of ``T`` pixels::

        acc[t, c] = out[n, g, oh, ow0 + t, c]                                   (init, folded residual)
        acc[t, c] += w[g, 0, kh, kw, c] * xr[(oh*SH + kh*DH) % span, (ow0 + t)*SW + kw*DW, c]
        out[n, g, oh, ow0 + t, c] = acc[t, c]                                   for t < OW - ow0

    ``c`` is the vector loop (whole blocks: no tails); the init and activation passes run over the plane.
    The ring stays in L1 (3 x 114 x 16 floats for a 3x3 window over 112 columns); the whole padded plane it
    replaced (0.8 MiB at 112 x 112) was copied through L2 before any output."""
    x, wb = ins[:2]
    out = outs[0]
    a = node.attrs
    N, G, H, W, B = x.shape
    _, _, KH, KW, _ = wb.shape
    _, _, OH, OW, _ = out.shape
    (SH, SW), (PH, PW), (DH, DW) = a["stride"], a["padding"], a["dilation"]
    T = min(OW, DW_TILE if KH * KW <= DW_TILE_MAX_TAPS else DW_TILE // 2)
    OWT = -(-OW // T)
    span = (KH - 1) * DH + 1
    WP = (OWT * T - 1) * SW + (KW - 1) * DW + 1
    n, g, oh = ctx.var("n"), ctx.var("g"), ctx.var("oh")
    xr = Buffer(ctx.namer.name(f"{ctx.tag}_xrow"), (span, WP, B), scope="local")
    cols = max(0, min(W, WP - PW))  # input columns inside a padded row; the columns around them stay zero
    p, c0 = ctx.var("p"), ctx.var("c")
    zero = Stage(f"{ctx.tag}.zero", loops([(p, span * WP), (c0, B)], Store(xr, (p // WP, p % WP, c0), const(0.0))))
    # the rows new to this output row: all ``span`` for the first, then the last min(SH, span) of its window
    fresh = min(SH, span)
    q, iw, c1, iw0, c0b = (ctx.var(s) for s in ("q", "iw", "c", "iw", "c"))
    # first padded row to copy: 0 for the first output row, else oh*SH + span - fresh (the min picks it: for
    # oh >= 1, oh*SH*span >= oh*SH + span - fresh since fresh = SH whenever it is below span)
    start = oh * SH if fresh == span else emin(oh * SH + (span - fresh), oh * (SH * span))
    ih = start + q - PH
    slot = (start + q) % span
    copy = loops([(iw, cols), (c1, B)], Store(xr, (slot, iw + PW, c1), x[n, g, ih, iw, c1]))
    blank = loops([(iw0, cols), (c0b, B)], Store(xr, (slot, iw0 + PW, c0b), const(0.0)))
    pad = Stage(f"{ctx.tag}.pad", loops([(q, oh * SH + span - start)], If(land(ge(ih, 0), lt(ih, H)), copy, blank)))
    acc = Buffer(ctx.namer.name(f"{ctx.tag}_acc"), (T, B), scope="local")
    ob = ctx.var("ob")
    live = emin(T, OW - ob * T)  # pixels of this run inside the row
    t1, c2, t2, c3, t3, c4 = (ctx.var(s) for s in ("t", "c", "t", "c", "t", "c"))
    load = [loops([(t1, live), (c2, B)], Store(acc, (t1, c2), out[n, g, oh, ob * T + t1, c2]))]
    if OW % T:  # the last run's pixels past the row: zero, never stored
        load.append(loops([(t3, emax(0, T - live)), (c4, B)], Store(acc, (T - 1 - t3, c4), const(0.0))))
    c, kh, kw, t = (ctx.var(s) for s in ("c", "kh", "kw", "t"))
    tap = xr[(oh * SH + kh * DH) % span, (ob * T + t) * SW + kw * DW, c]
    upd = Store(acc, (t, c), acc[t, c] + wb[g, 0, kh, kw, c] * tap)
    main = loops([(c, B), (kh, KH), (kw, KW), (t, T)], upd)
    store = loops([(t2, live), (c3, B)], Store(out, (n, g, oh, ob * T + t2, c3), acc[t2, c3]))
    runs = loops([(oh, OH)], seq(pad, loops([(ob, OWT)], Allocate(acc, seq(*load, main, store)))))
    body = Stage(ctx.tag, loops([(n, N), (g, G)], Allocate(xr, seq(zero, runs))))
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
