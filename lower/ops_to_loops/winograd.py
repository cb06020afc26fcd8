"""Winograd F(4x4, 3x3) transforms (``rewrite/ir/ops/winograd.py``): one tile per loop iteration.

The product between them is the registry's batched ``matmul`` and lowers like any other (the
transformed weights are a compile-time constant, read in place as the GEMM's A operand); the weight
transform itself is weight-only and folded by the runtime, its lowering here is for completeness.

Each transform writes one tile's outputs as straight-line code over the tile's loads, with the
matrices' entries as immediates (zeros skipped, ones and minus ones as adds and subtracts).  The
2-d transform ``L d R^T`` is written as ``sum_i L[a, i] * (sum_j R[b, j] * d[i, j])``: the inner sums
are the same expression for every ``a``, and LLVM's value numbering computes each once (kernel
parameters are ``noalias``), so a tile costs the separable count of multiply-adds.  The channel loop
is innermost (vectorized by the default schedule): the transformed tensors are [36, tiles, channels],
so each of a tile's 36 values is one contiguous vector store (input) or load (output), and the bound
checks depend on the tile only.  The output transform adds the bias and applies the activation, then
has to turn channels-innermost into rows of the NCHW output: vector stores of it straight to the output
are 16 scatters per tile (3-4x slower on small maps), so it computes a block of tiles into a local
[tile, r, channel, s] buffer (4-way interleaved stores: shuffles) and copies out each channel's row
segment of the block, storing only the cropped outputs.

``winograd_input_t`` writes [36, channels, tiles] instead (``matmul_at`` reads it column-major): per plane a
padded, phase-split copy, then each tile row vectorized over its tiles with unit-stride taps; it is the form
for maps of 8+ tiles a row (``rules/winograd.rules``).
"""

from __future__ import annotations

from collections.abc import Callable

from lower.ir import (
    Allocate,
    Buffer,
    Expr,
    For,
    If,
    IntImm,
    Load,
    Select,
    Stage,
    Stmt,
    Store,
    const,
    ge,
    land,
    loops,
    lt,
    seq,
)
from lower.ops_to_loops.core import LowerCtx, clip, lowering
from lower.ops_to_loops.elementwise import ACTIVATIONS
from lower.ops_to_loops.window import padded_row, padded_slice, slice_shape
from rewrite.ir.graph import Node
from rewrite.ir.ops.winograd import AT, BT, G, Matrix
from rewrite.ir.shapes.winograd import ALPHA, POSITIONS, TILE

OUT_BLOCK = 4  # output tiles per block along a row: 16 outputs, a 64-byte line per channel and row
OUT_BUFFER = 8192  # floats (32 KiB) at most in the output transform's block buffer: it stays in L1


def _dot(row: tuple[float, ...], terms: Callable[[int], Expr]) -> Expr:
    """``sum_j row[j] * terms(j)`` over the nonzero entries, with +-1 as plain adds and subtracts."""
    out: Expr | None = None
    for j, c in enumerate(row):
        if c == 0.0:
            continue
        t = terms(j)
        if out is None:
            out = t if c == 1.0 else (-t if c == -1.0 else t * const(c))
        elif c == 1.0:
            out = out + t
        elif c == -1.0:
            out = out - t
        else:
            out = out + t * const(c)
    if out is None:
        return const(0.0)
    return out


def _transform(left: Matrix, right: Matrix, d: Callable[[int, int], Expr], a: int, b: int) -> Expr:
    """Entry (a, b) of ``left @ d @ right^T``."""
    return _dot(left[a], lambda i: _dot(right[b], lambda j: d(i, j)))


def _transforms(
    ctx: LowerCtx, left: Matrix, right: Matrix, d: Callable[[int, int], Expr], emit: Callable[[int, int, Expr], Stmt]
) -> Stmt:
    """``emit(a, b, entry)`` for every entry of ``left @ d @ right^T``, the products ``d @ right^T`` computed first
    into a local buffer: each entry is ``_transform``'s sum, in its order, with each inner sum computed once.  As
    one expression per entry every inner sum came once for each row of ``left`` (six times for ``BT``): DenseNet-121's
    52 input transforms took 3.5 s to lower and as long to simplify, and LLVM folded the repeats back."""
    rows, cols = len(left[0]), len(right)
    part = Buffer(ctx.namer.name(f"{ctx.tag}_half"), (rows * cols,), scope="local")

    def tap(i: int) -> Callable[[int], Expr]:
        return lambda j: d(i, j)

    def half(b: int) -> Callable[[int], Expr]:
        return lambda i: part[IntImm(i * cols + b)]

    first = [Store(part, (IntImm(i * cols + b),), _dot(right[b], tap(i))) for i in range(rows) for b in range(cols)]
    second = [emit(a, b, _dot(left[a], half(b))) for a in range(len(left)) for b in range(cols)]
    return Allocate(part, seq(*first, *second))


@lowering("winograd_weight")
def lower_winograd_weight(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    w, u = ins[0], outs[0]
    K, C = w.shape[:2]
    c, k = ctx.var("c"), ctx.var("k")
    stores = [
        Store(u, (IntImm(a * ALPHA + b), c, k), _transform(G, G, lambda i, j: w[k, c, i, j], a, b))
        for a in range(ALPHA)
        for b in range(ALPHA)
    ]
    return Stage(ctx.tag, loops([(c, C), (k, K)], seq(*stores)))


@lowering("winograd_input")
def lower_winograd_input(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, v = ins[0], outs[0]
    N, C, H, W = x.shape
    ph, pw = node.attrs["padding"]
    oh, ow = H + 2 * ph - 2, W + 2 * pw - 2
    TH, TW = -(-oh // TILE), -(-ow // TILE)
    n, th, tw, c = (ctx.var(s) for s in ("n", "th", "tw", "c"))
    p = (n * TH + th) * TW + tw
    tap = _input_tap(x, n, c, th, tw, (ph, pw), (TH, TW))
    stores = _input_stores(ctx, lambda q: v[q, p, c], tap)
    return Stage(ctx.tag, loops([(n, N), (th, TH), (tw, TW), (c, C)], stores))


def _input_tap(
    x: Buffer, n: Expr, c: Expr, th: Expr, tw: Expr, pad: tuple[int, int], tiles: tuple[int, int]
) -> Callable[[int, int], Expr]:
    """Tap ``(i, j)`` of tile ``(th, tw)`` read from ``x`` in place, zero outside it: a bound check only where
    some tile can fall outside the input."""
    _, _, H, W = x.shape
    (ph, pw), (TH, TW) = pad, tiles

    def tap(i: int, j: int) -> Expr:
        ih, iw = th * TILE + (i - ph), tw * TILE + (j - pw)
        conds = []
        if i < ph:
            conds.append(ge(ih, 0))
        if TILE * (TH - 1) + i - ph >= H:
            conds.append(lt(ih, H))
        if j < pw:
            conds.append(ge(iw, 0))
        if TILE * (TW - 1) + j - pw >= W:
            conds.append(lt(iw, W))
        load = x[n, c, clip(ih, H - 1) if conds else ih, clip(iw, W - 1) if conds else iw]
        return Select(land(*conds), load, const(0.0)) if conds else load

    return tap


def _input_stores(ctx: LowerCtx, at: Callable[[Expr], Load], tap: Callable[[int, int], Expr]) -> Stmt:
    """The 36 stores of one tile's input transform ``BT d BT^T``, position ``q`` to ``at(q)`` (``_transforms``)."""

    def store(a: int, b: int, value: Expr) -> Stmt:
        dst = at(IntImm(a * ALPHA + b))
        return Store(dst.buf, dst.idx, value)

    return _transforms(ctx, BT, BT, tap, store)


IN_T_MAX_SLICE = 2 << 20  # bytes of one plane's padded, phase-split copy on the stack (as the direct convolution)


@lowering("winograd_input_t")
def lower_winograd_input_t(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """The input transform into ``[36, C, N*T]`` (tiles innermost).  Per (image, channel) plane: the plane
    copied once into a padded slice split by column phase mod 4 (``padded_slice``, zero outside the input),
    so that tap ``(i, j)`` of tile ``(th, tw)`` is ``xp[4*th + i, j % 4, tw + j // 4]``, unit stride along
    the tile row; then per tile row, vectorized over its tiles, the 36 transformed values, each one
    contiguous vector store::

        for nc in 0..N*C {
          xp[0, hp, ph, wq] = x[n, c, hp - PH, 4*wq + ph - PW] or 0
          for th { for tw { v[a*6 + b, c, (n*TH + th)*TW + tw] = (BT d BT^T)[a, b] } } }

    ``winograd_input`` (channels innermost) reads every tap of a channel vector as a gather across the
    channel planes.  On a grid, or for a plane whose copy would pass ``IN_T_MAX_SLICE``: the taps read in
    place, bounds-selected."""
    x, v = ins[0], outs[0]
    N, C, H, W = x.shape
    ph, pw = node.attrs["padding"]
    TH, TW = -(-(H + 2 * ph - 2) // TILE), -(-(W + 2 * pw - 2) // TILE)
    nc, th, tw = ctx.var("nc"), ctx.var("th"), ctx.var("tw")
    n, c = nc // C, nc % C
    HP, WQ = slice_shape((TH, padded_row(TW)), (ALPHA, ALPHA), (TILE, TILE), (1, 1))
    if ctx.grid or 4 * HP * TILE * WQ > IN_T_MAX_SLICE:
        t = (n * TH + th) * TW + tw
        stores = _input_stores(ctx, lambda q: v[q, c, t], _input_tap(x, n, c, th, tw, (ph, pw), (TH, TW)))
        return Stage(ctx.tag, loops([(nc, N * C), (th, TH), (tw, TW)], stores))
    # a tile row is computed TWR tiles wide into a local row (whole vectors: a row of 37 tiles ran its last 5
    # scalar, most of the time), then its TW tiles copied out
    TWR = padded_row(TW)
    xp, fill = padded_slice(ctx, x, n, c, 1, (TH, TWR), (ALPHA, ALPHA), (TILE, TILE), (ph, pw), (1, 1), 0.0)
    row = Buffer(ctx.namer.name(f"{ctx.tag}_row"), (POSITIONS, TWR), scope="local")

    def tap(i: int, j: int) -> Expr:
        return xp[IntImm(0), th * TILE + i, IntImm(j % TILE), tw + j // TILE]

    stores = _input_stores(ctx, lambda q: row[q, tw], tap)
    q, tc = ctx.var("q"), ctx.var("tw")
    copy = loops([(q, POSITIONS), (tc, TW)], Store(v, (q, c, (n * TH + th) * TW + tc), row[q, tc]))
    per_row = Allocate(row, seq(For(tw, IntImm(TWR), stores), copy))
    body = Allocate(xp, seq(fill, For(th, IntImm(TH), per_row)))
    return Stage(ctx.tag, For(nc, IntImm(N * C), body))


@lowering("winograd_output", "winograd_output_bias_act")
def lower_winograd_output(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    m, y = ins[0], outs[0]
    N, K, OH, OW = y.shape
    TH, TW = -(-OH // TILE), -(-OW // TILE)
    act = node.attrs.get("act", "none")
    if act not in ACTIVATIONS:
        raise ctx.error(f"unknown activation {act!r}")
    if ctx.grid:
        return _winograd_output_per_tile(node, ins, outs, ctx)
    # Tiles go in blocks of OUT_BLOCK along a tile row: each block's outputs for all channels are computed
    # into a local [block, r, K, s] buffer (vector loads along k, the stores 4-way interleaved groups:
    # shuffles, not scatters), then copied out one output row segment per channel, the block's
    # 4 * OUT_BLOCK outputs of a row (a cache line) written back to back.
    B = max(1, min(OUT_BLOCK, TW, OUT_BUFFER // (TILE * TILE * K)))
    TB = -(-TW // B)
    n, th, tb, tq, k = (ctx.var(s) for s in ("n", "th", "tb", "tq", "k"))
    tw = tb * B + tq
    p = (n * TH + th) * TW + tw

    def tile(a: int, b: int) -> Expr:
        return m[IntImm(a * ALPHA + b), p, k]

    buf = Buffer(ctx.namer.name(f"{ctx.tag}_tile"), (B, TILE, K, TILE), scope="local")

    def store(r: int, s: int, val: Expr) -> Stmt:
        if len(ins) > 1:
            val = ACTIVATIONS[act](val + ins[1][k])
        return Store(buf, (tq, IntImm(r), k, IntImm(s)), val)

    fill: Stmt = For(k, IntImm(K), _transforms(ctx, AT, AT, tile, store))
    if TB * B > TW:  # the last block is partial
        fill = If(lt(tw, TW), fill)

    def copy(crop: bool) -> Stmt:
        kc, rc, qc, sc = ctx.var("k"), ctx.var("r"), ctx.var("tq"), ctx.var("s")
        oh, ow = th * TILE + rc, (tb * B + qc) * TILE + sc
        st: Stmt = Store(y, (n, kc, oh, ow), buf[qc, rc, kc, sc])
        if crop:
            st = If(land(lt(oh, OH), lt(ow, OW)), st)
        return loops([(kc, K), (rc, TILE), (qc, B), (sc, TILE)], st)

    out: Stmt = copy(False)
    if TILE * TH > OH or TILE * B * TB > OW:  # only the last tile row or block is cropped
        whole = land(lt(th * TILE + (TILE - 1), OH), lt(tb * (B * TILE) + (B * TILE - 1), OW))
        out = If(whole, out, copy(True))
    body = Allocate(buf, seq(For(tq, IntImm(B), fill), out))
    return Stage(ctx.tag, loops([(n, N), (th, TH), (tb, TB)], body))


def _winograd_output_per_tile(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    """The output transform as a map over (n, k, tile row, tile column), each point storing its tile's
    TILE x TILE outputs straight out (cropped at the edges): the form for a grid of threads, where the
    CPU form's block buffer would be per-thread local memory."""
    m, y = ins[0], outs[0]
    N, K, OH, OW = y.shape
    TH, TW = -(-OH // TILE), -(-OW // TILE)
    act = node.attrs.get("act", "none")
    n, k, th, tw = (ctx.var(s) for s in ("n", "k", "th", "tw"))
    p = (n * TH + th) * TW + tw

    def tile(a: int, b: int) -> Expr:
        return m[IntImm(a * ALPHA + b), p, k]

    stores: list[Stmt] = []
    for r in range(TILE):
        for s in range(TILE):
            val = _transform(AT, AT, tile, r, s)
            if len(ins) > 1:
                val = ACTIVATIONS[act](val + ins[1][k])
            oh, ow = th * TILE + r, tw * TILE + s
            st: Stmt = Store(y, (n, k, oh, ow), val)
            if (TILE * TH > OH and r > 0) or (TILE * TW > OW and s > 0):
                st = If(land(lt(oh, OH), lt(ow, OW)), st)
            stores.append(st)
    return Stage(ctx.tag, loops([(n, N), (k, K), (th, TH), (tw, TW)], seq(*stores)))
