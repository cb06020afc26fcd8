"""The quantized contractions, ``matmul_integer`` and ``conv2d_integer``: uint8 activations (less a zero
point) times int8 weights, exact int32 sums.

``matmul_integer``: with B a constant whose batch dimensions are 1, A contiguous and K a multiple of 4 (a
quantized model's linear layers), B is packed once, at compile time, into panels of ``IGEMM_NR`` columns
in the layout the CPU's dot-product instruction reads (``lower.llvm.igemm``: for each four k, the panel's
columns' four bytes side by side), with each panel's column sums (the zero point's share), and the nest is a
parallel loop over panels calling the micro-kernel on blocks of ``IGEMM_MR`` rows and ``KC_GROUPS`` groups of
four k (a block of B that stays in L1 while the rows stream past it).  Otherwise (a run-time B, a K not a
multiple of 4, a grid target) it is the plain triple loop, exact in i64.

``conv2d_integer``: with constant weights and one group, the weights are packed as rows [O][K] with k ordered
(tap, channel), the channels padded to a multiple of 4 (a tap's four channels are one 32-bit word), with
their row sums; per image and panel of ``IGEMM_NR`` output pixels (the parallel loop) the panel's im2col
words are gathered (``igather``: the zero point in the padding) and every block of ``IGEMM_MR`` output
channels runs ``igemmw`` on it, writing C in place in NCHW.  Grouped convolutions, run-time weights and grid
targets take the plain loop.
"""

from __future__ import annotations

import math

import torch

from lower.ir import (
    F32,
    I8,
    I32,
    I64,
    U8,
    Allocate,
    Buffer,
    Cast,
    Expr,
    FloatImm,
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
    emin,
    ge,
    land,
    loops,
    lt,
    seq,
)
from lower.ops_to_loops.core import LowerCtx, bcast_index, clip, local_scalar, loop_vars, lowering
from rewrite.ir.graph import Node

# The micro-kernel's tile (the CPU backend defines ``igemm_MRxNR``: ``lower.llvm.igemm``): 8 rows by 48
# columns is 24 accumulators, 3 B vectors and a broadcast, 28 of AVX-512's 32 registers
IGEMM_MR, IGEMM_NR = 8, 48
PANEL_WIDTHS = (16, 32, IGEMM_NR)  # a convolution's panels: 48 pixels, 32 on a small map, the last as needed
KC_GROUPS = 128  # groups of four k per block: a 48-column panel's block of B is 24 KiB, L1-resident
AMX_MR = 16  # an AMX tile's rows: the panel routines' blocks of rows (``lower.llvm.igemm.amx_mm_routine``)


def amx_int8(features: tuple[str, ...]) -> bool:
    """Whether a CPU with these (LLVM) features runs the AMX int8 panel routines (and VNNI for the rest)."""
    return "+amx-int8" in features and "+amx-tile" in features and "+avx512vnni" in features


# ``igemm``: A the uint8 activations (rows broadcast), B packed int8 weights, the zero point's share per
# column; ``igemmw``: A int8 weights (rows broadcast), B a packed uint8 panel of activations (a convolution's
# im2col), the share per row
IGEMM_KINDS = ("igemm", "igemmw")


def igemm_name(mr: int, nr: int, kind: str = "igemm") -> str:
    """The name a lowered nest calls (an ``Intrinsic``) for the MR x NR tile."""
    return f"{kind}_{mr}x{nr}"


def igemm_parts(name: str) -> tuple[str, int, int]:
    """``igemm_name``'s arguments back from its result: ``"igemmw_8x32"`` -> ``("igemmw", 8, 32)``."""
    kind, shape = name.split("_")
    mr, nr = (int(x) for x in shape.split("x"))
    return kind, mr, nr


def amx_conv_name(nr: int) -> str:
    """The name a lowered nest calls to run a convolution's panel of ``nr`` pixels on AMX tiles (every block of
    output channels, the whole of K)."""
    return f"amxconv_{nr}"


def amx_mm_name(nr: int) -> str:
    """The name a lowered nest calls to run a quantized GEMM's panel of ``nr`` columns on AMX tiles (every block
    of rows, the whole of K)."""
    return f"amxmm_{nr}"


def igather_name(nr: int) -> str:
    """The name a lowered nest calls to gather a convolution's im2col panel of ``nr`` pixels (``igemmw``'s B)."""
    return f"igather_{nr}"


def pack_weights(b: torch.Tensor, nr: int = IGEMM_NR) -> tuple[torch.Tensor, torch.Tensor]:
    """B [K, N] int8 (K a multiple of 4) as panels ``[N / nr][K / 4][nr][4]`` (zero padded past N) and the
    panels' column sums [N / nr * nr] int32 (zero past N).

        >>> p, s = pack_weights(torch.arange(8, dtype=torch.int8).reshape(4, 2), nr=16)
        >>> p.view(1, 1, 16, 4)[0, 0, :3].tolist(), s[:3].tolist()
        ([[0, 2, 4, 6], [1, 3, 5, 7], [0, 0, 0, 0]], [12, 16, 0])
    """
    k, n = b.shape
    npan = -(-n // nr)
    padded = torch.zeros((k, npan * nr), dtype=torch.int8)
    padded[:, :n] = b
    # [K/4, 4, npan, nr] -> [npan, K/4, nr, 4]
    packed = padded.view(k // 4, 4, npan, nr).permute(2, 0, 3, 1).contiguous().view(-1)
    sums = padded.to(torch.int32).sum(0, dtype=torch.int32)
    return packed, sums


def pack_weights_amx(b: torch.Tensor, zp: int, nr: int = IGEMM_NR) -> tuple[torch.Tensor, torch.Tensor, int]:
    """B [K, N] int8 (K a multiple of 4, at least 64) for ``amx_mm``: per panel of ``nr`` columns, ``steps`` of 16
    groups of four k ``[16][nr][4]``; where K is not a multiple of 64 the last step is the one A reads at
    ``K - 64``, its rows for groups the step before already counted zero.  Also the panels' initial tiles
    ``[N / nr][16][nr]`` int32 (minus ``zp`` times each column's sum) and the steps.

        >>> p, z, s = pack_weights_amx(torch.ones(68, 2, dtype=torch.int8), 1, nr=16)
        >>> s, p.view(s, 16, 16, 4)[1, :, 0, 0].tolist(), z.view(16, 16)[0, :3].tolist()
        (2, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], [-68, -68, 0])
    """
    k, n = b.shape
    kq, npan = k // 4, -(-n // nr)
    steps = -(-kq // 16)
    padded = torch.zeros((k, npan * nr), dtype=torch.int8)
    padded[:, :n] = b
    groups = padded.view(kq, 4, npan, nr).permute(2, 0, 3, 1)  # [npan, kq, nr, 4]
    packed = torch.zeros((npan, steps * 16, nr, 4), dtype=torch.int8)
    packed[:, : (steps - 1) * 16] = groups[:, : (steps - 1) * 16]
    last = torch.arange(kq - 16, kq)  # the groups the last step's A read covers
    fresh = last >= (steps - 1) * 16
    packed[:, (steps - 1) * 16 :][:, fresh] = groups[:, last[fresh]]
    sums = padded.to(torch.int32).sum(0, dtype=torch.int32)
    zinit = (-zp * sums).view(npan, 1, nr).expand(npan, 16, nr).contiguous()
    return packed.view(-1), zinit.view(-1), steps


@lowering("matmul_integer")
def lower_matmul_integer(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    a, b = ins
    out = outs[0]
    zp = node.attrs["a_zero_point"]
    k, n = b.shape[-2], b.shape[-1]
    if (
        not ctx.grid
        and b.name in ctx.consts
        and all(d == 1 for d in b.shape[:-2])
        and tuple(out.shape[:-1]) == tuple(a.shape[:-1])
        and _flat(a, out)
        and k % 4 == 0
    ):
        return _packed(ctx, a, b, out, zp, k, n)
    # the plain form: sum_k (A - zp) * B in i64 (exact: the int32 result's sums never leave its range for
    # K < 65793), stored as int32
    vs = loop_vars(ctx, out.shape)
    kv = ctx.var("k")
    r = len(out.shape)
    a_idx = (*bcast_index(a.shape[:-2], out.shape[:-2], vs[: r - 2]), vs[-2], kv)
    b_idx = (*bcast_index(b.shape[:-2], out.shape[:-2], vs[: r - 2]), kv, vs[-1])
    total = _exact_sum(ctx, [(kv, k)], (a[a_idx] - IntImm(zp)) * b[b_idx], out, tuple(vs))
    return Stage(ctx.tag, loops(list(zip(vs, out.shape, strict=False)), total))


def _flat(*bufs: Buffer) -> bool:
    """Whether each buffer is its whole storage in row-major order: a routine reads or writes it in place by
    flat offsets."""
    return all((b.strides is None or b.strides == Buffer(b.name, b.shape).elem_strides) and b.offset == 0 for b in bufs)


def _exact_sum(ctx: LowerCtx, reduce: list[tuple[Var, int]], term: Expr, out: Buffer, idx: tuple[Expr, ...]) -> Stmt:
    """The plain form's element: ``term`` summed over the ``reduce`` loops in an i64 scalar (exact: an int32
    result's sums never leave its range for the sizes eqsat takes), stored into ``out[idx]`` as int32 (or
    through the node's fused epilogue, ``ctx.epilogue``)."""
    acc = local_scalar(ctx, f"{ctx.tag}_acc", I64)
    zero = (IntImm(0),)
    total = Cast(I32, acc[zero])
    body = seq(
        Store(acc, zero, IntImm(0)),
        loops(reduce, Store(acc, zero, acc[zero] + term)),
        ctx.epilogue.store(total, idx) if ctx.epilogue is not None else Store(out, idx, total),
    )
    return Allocate(acc, body)


def _packed(ctx: LowerCtx, a: Buffer, b: Buffer, out: Buffer, zp: int, k: int, n: int) -> Stmt:
    """The packed-weight form (see the module docstring)."""
    rows = math.prod(a.shape[:-1])
    if amx_int8(ctx.features) and rows >= AMX_MR and k >= 64:
        return _amx_packed(ctx, a, b, out, zp, (rows, k, n))
    kq = k // 4
    npan = -(-n // IGEMM_NR)
    packed, sums = pack_weights(ctx.consts[b.name].reshape(k, n))
    bp = Buffer(ctx.namer.name(f"{ctx.tag}_packed"), (packed.numel(),), I8)
    cs = Buffer(ctx.namer.name(f"{ctx.tag}_colsum"), (sums.numel(),), I32)
    ctx.new_consts[bp.name] = packed
    ctx.new_consts[cs.name] = sums
    jp, kb, ib = ctx.var("jp"), ctx.var("kb"), ctx.var("ib")
    nkb = -(-kq // KC_GROUPS)
    call = _tile_call(
        "igemm",
        IGEMM_NR,
        (a, ib * (IGEMM_MR * k), k),  # A and C by flat offsets: rows, the batch dimensions flattened
        (bp, jp * (kq * IGEMM_NR * 4)),
        (out, ib * (IGEMM_MR * n) + jp * IGEMM_NR, n),
        (cs, jp * IGEMM_NR),
        (kb, kq),
        (IntImm(rows) - ib * IGEMM_MR, IntImm(n) - jp * IGEMM_NR),
        zp,
    )
    nest = For(
        jp,
        IntImm(npan),
        For(kb, IntImm(nkb), For(ib, IntImm(-(-rows // IGEMM_MR)), call)),
        LoopKind.PARALLEL,
    )
    return Stage(ctx.tag, nest)


def _amx_packed(ctx: LowerCtx, a: Buffer, b: Buffer, out: Buffer, zp: int, mkn: tuple[int, int, int]) -> Stmt:
    """The packed-weight form on AMX tiles: a parallel loop over panels of ``IGEMM_NR`` columns, each one call
    (``amx_mm``: every block of 16 rows over the whole of K).  Measured against the 8-row VNNI form (1 thread,
    interleaved): 1.62-2.68x from 16 rows up (BERT's 128 x 768 x 3072 1.95x, 128 x 3072 x 768 2.68x); under 16
    rows the VNNI form runs."""
    rows, k, n = mkn
    packed, zinit, steps = pack_weights_amx(ctx.consts[b.name].reshape(k, n), zp)
    npan = -(-n // IGEMM_NR)
    bp = Buffer(ctx.namer.name(f"{ctx.tag}_packed"), (packed.numel(),), I8)
    zi = Buffer(ctx.namer.name(f"{ctx.tag}_zinit"), (zinit.numel(),), I32)
    ctx.new_consts[bp.name] = packed
    ctx.new_consts[zi.name] = zinit
    jp = ctx.var("jp")
    call = Intrinsic(
        amx_mm_name(IGEMM_NR),
        (a, IntImm(0), IntImm(k), bp, jp * (steps * 16 * IGEMM_NR * 4), out, jp * IGEMM_NR, IntImm(n),
         IntImm(steps), IntImm(k), IntImm(rows), emin(IntImm(IGEMM_NR), IntImm(n) - jp * IGEMM_NR), zi,
         jp * (16 * IGEMM_NR)),
        reads=(a, bp, zi),
        writes=(out,),
    )  # fmt: skip
    return Stage(ctx.tag, For(jp, IntImm(npan), call, LoopKind.PARALLEL))


def _tile_call(
    kind: str,
    nr: int,
    a: tuple[Buffer, Expr, int],
    b: tuple[Buffer, Expr],
    c: tuple[Buffer, Expr, int],
    sums: tuple[Buffer, Expr],
    kblock: tuple[Var, int],
    left: tuple[Expr, Expr],
    zp: int,
) -> Intrinsic:
    """The micro-kernel call for one tile and block of k: A (buffer, offset of the tile's first row, row
    length in bytes), B (the panel, offset of its first group), C (buffer, offset, row length), the zero
    point's sums (buffer, offset), the k block (its loop variable, the groups of four in all) and the rows
    and columns left from the tile's corner (the tile stores at most ``IGEMM_MR`` x ``nr``)."""
    (abuf, aoff, lda), (bbuf, boff), (cbuf, coff, ldc), (sbuf, soff), (kb, kq), (rows, cols) = (
        a,
        b,
        c,
        sums,
        kblock,
        left,
    )
    return Intrinsic(
        igemm_name(IGEMM_MR, nr, kind),
        (
            abuf,
            aoff + kb * (4 * KC_GROUPS),
            IntImm(lda),
            bbuf,
            boff + kb * (KC_GROUPS * nr * 4),
            cbuf,
            coff,
            IntImm(ldc),
            emin(IntImm(KC_GROUPS), IntImm(kq) - kb * KC_GROUPS),
            emin(IntImm(IGEMM_MR), rows),
            emin(IntImm(nr), cols),
            sbuf,
            soff,
            IntImm(zp),
            emin(kb, IntImm(1)),  # beta: C overwritten by the first block of k, accumulated by the others
        ),
        reads=(abuf, bbuf, sbuf),
        writes=(cbuf,),
    )


def amx_conv_pays(k: int, co: int) -> bool:
    """Whether a convolution of ``k`` products per output and ``co`` output channels runs faster on AMX tiles
    than on the VNNI micro-kernel: K padded to whole tiles of 64 wastes under a quarter, and two blocks of 16
    channels or more.  Measured on an Emerald Rapids core (1 thread, the two forms interleaved), VNNI time /
    AMX time: K = 16, 24 (O 96, 144, 56x56): 0.61, 0.67; K = 96, 144 with O = 24 or 16: 0.86-0.94; K = 32, O = 192:
    1.03; K = 64 (O 64, 384): 1.14, 1.05; K = 128-576: 1.22-1.43; K = 960-1152: 1.58-1.63; K = 512, O = 512 at 7x7:
    2.04."""
    return co >= 32 and 4 * k >= 3 * (-(-k // 64) * 64)


def pack_conv_weights(w: torch.Tensor, mr: int = IGEMM_MR, kalign: int = 4) -> tuple[torch.Tensor, torch.Tensor, int]:
    """OIHW int8 weights as rows [O (padded to mr)][K (= I * kh * kw, padded to a multiple of ``kalign``)], zeros
    in the padding, their row sums [O padded] int32, and the padded K."""
    co = w.shape[0]
    k = w[0].numel()
    kp = -(-k // kalign) * kalign
    cop = -(-co // mr) * mr
    rows = torch.zeros((cop, kp), dtype=torch.int8)
    rows[:co, :k] = w.reshape(co, k)
    return rows.reshape(-1), rows.to(torch.int32).sum(1, dtype=torch.int32), kp


@lowering("conv2d_integer")
def lower_conv2d_integer(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    x, w = ins
    out = outs[0]
    a = node.attrs
    zp = a["a_zero_point"]
    (sh, sw), (ph, pw), (dh, dw), g = a["stride"], a["padding"], a["dilation"], a["groups"]
    nb, _, hh, ww = x.shape
    co, cig, kh, kw = w.shape
    ho, wo = out.shape[2], out.shape[3]
    if not ctx.grid and g == 1 and w.name in ctx.consts and _flat(x, out):
        return _conv_packed(ctx, x, w, out, zp, (sh, sw), (ph, pw), (dh, dw))
    if not ctx.grid and g == x.shape[1] == co and cig == 1 and kh * kw <= DW_EXACT_TAPS:
        return _depthwise(ctx, x, w, out, zp, (sh, sw), (ph, pw), (dh, dw))
    # the plain form: sum over the group's channels and taps of (x - zp) * w in i64, padding contributing 0
    n, o, oh, ow = loop_vars(ctx, out.shape)
    c, i, j = ctx.var("c"), ctx.var("kh"), ctx.var("kw")
    ih, iw = oh * sh + i * dh - ph, ow * sw + j * dw - pw
    inside = land(ge(ih, 0), lt(ih, hh), ge(iw, 0), lt(iw, ww))
    xc = (o // (co // g)) * cig + c
    xv = x[(n, xc, clip(ih, hh - 1), clip(iw, ww - 1))]
    step = Select(inside, (xv - IntImm(zp)) * w[(o, c, i, j)], IntImm(0))
    total = _exact_sum(ctx, [(c, cig), (i, kh), (j, kw)], step, out, (n, o, oh, ow))
    return Stage(ctx.tag, loops([(n, nb), (o, co), (oh, ho), (ow, wo)], total))


def _conv_packed(
    ctx: LowerCtx,
    x: Buffer,
    w: Buffer,
    out: Buffer,
    zp: int,
    stride: tuple[int, int],
    pad: tuple[int, int],
    dil: tuple[int, int],
) -> Stmt:
    """The convolution as ``igemmw`` over im2col panels: per batch image and panel of ``IGEMM_NR`` output
    pixels, the panel's ``[K / 4][NR][4]`` input bytes are gathered (the zero point where a tap falls in the
    padding or past K), then every block of output channels runs the micro-kernel on it, C written in place
    in NCHW (rows: channels ``P`` apart; columns: pixels)."""
    nb, ci, _hh, _ww = x.shape
    co, _, kh, kw = w.shape
    ho, wo = out.shape[2], out.shape[3]
    npix = ho * wo
    # k ordered (tap, channel), the channels padded to a multiple of 4 (zero weights): four channels of one tap
    # are one word of the panel, gathered four at a time
    cp = -(-ci // 4) * 4
    wt = torch.zeros((co, kh, kw, cp), dtype=torch.int8)
    wt[..., :ci] = ctx.consts[w.name].permute(0, 2, 3, 1)
    amx = amx_int8(ctx.features) and amx_conv_pays(kh * kw * cp, co)
    # on AMX whole tiles of K (64) as well: the panel's rows past the gathered ones meet zero weights
    rows, sums, kp = pack_conv_weights(wt, AMX_MR if amx else IGEMM_MR, 64 if amx else 4)
    kq = kh * kw * cp // 4  # the groups of four k gathered
    wp = Buffer(ctx.namer.name(f"{ctx.tag}_wrows"), (rows.numel(),), I8)
    ctx.new_consts[wp.name] = rows
    # panels of 48 pixels, or of 32 on a small map (fewer than 4 panels of 48: a late stage's 7x7): the same
    # total width (49 pixels are 32 + 32 or 48 + 16) in panels that share out between threads evenly
    step = IGEMM_NR if -(-npix // IGEMM_NR) >= 4 else 32
    npan = -(-npix // step)
    # the last panel as wide as its pixels need (16, 32 or 48): a 7x7 map's 49 pixels are a panel of 48 and
    # one of 16, not two of 48 (the micro-kernel's work is its width, whatever n it stores)
    tail = -(-(npix - (npan - 1) * step) // 16) * 16
    widths = [step] * (npan - 1) + [tail]
    corners = _corner_table(widths, step, stride, (ho, wo))
    cb = Buffer(ctx.namer.name(f"{ctx.tag}_corners"), (corners.numel(),), I32)
    ctx.new_consts[cb.name] = corners
    taps = _tap_table(ci, (kh, kw), pad, dil)
    tb = Buffer(ctx.namer.name(f"{ctx.tag}_taps"), (taps.numel(),), I32)
    ctx.new_consts[tb.name] = taps
    pn = ctx.var("pn")
    n, jp = pn // npan, pn % npan
    kb, ib = ctx.var("kb"), ctx.var("ib")
    nkb = -(-kq // KC_GROUPS)

    if amx:  # the tiles start from minus the zero point's share: 16 copies of it per row
        zinit = (-zp * sums).to(torch.int32).repeat_interleave(16)
        zi = Buffer(ctx.namer.name(f"{ctx.tag}_zinit"), (zinit.numel(),), I32)
        ctx.new_consts[zi.name] = zinit
    else:  # the micro-kernel subtracts the zero point's share per row: the weights' row sums
        rs = Buffer(ctx.namer.name(f"{ctx.tag}_rowsum"), (sums.numel(),), I32)
        ctx.new_consts[rs.name] = sums

    epi = ctx.epilogue
    cop = rows.numel() // kp  # the channels, padded to the tile's rows

    def panel_body(nr: int) -> Stmt:
        """Gather the panel of ``nr`` pixels starting at pixel ``jp * step``, then run every block of
        output channels on it.  With a fused epilogue the panel's sums go to a block of its own (``cop`` x
        ``nr`` int32, still in cache) and the epilogue stores them through its ops into the final buffer."""
        panel = Buffer(ctx.namer.name(f"{ctx.tag}_panel"), (kp * nr,), U8, scope="local")
        if epi is not None:
            cblk = Buffer(ctx.namer.name(f"{ctx.tag}_sums"), (cop * nr,), I32, scope="local")
            c_at, ldc, c_off = cblk, nr, IntImm(0)
        else:
            c_at, ldc, c_off = out, npix, n * (co * npix) + jp * step
        left = emin(IntImm(nr), IntImm(npix) - jp * step)
        gather = Intrinsic(
            igather_name(nr),
            (x, n * (ci * x.shape[2] * x.shape[3]), IntImm(x.shape[2] * x.shape[3]), IntImm(x.shape[3]),
             IntImm(x.shape[2]), IntImm(ci), tb, cb, jp * (2 * step), IntImm(kq), panel, IntImm(zp)),
            reads=(x, tb, cb),
            writes=(panel,),
        )  # fmt: skip
        if amx:
            # with an epilogue every block is whole (the padded channels' sums are computed, never stored)
            tiles = Intrinsic(
                amx_conv_name(nr),
                (wp, IntImm(0), IntImm(kp), panel, c_at, c_off, IntImm(ldc), IntImm(kp // 64),
                 IntImm(cop if epi else co), IntImm(nr) if epi else left, zi),
                reads=(wp, panel, zi),
                writes=(c_at,),
            )  # fmt: skip
            work = seq(gather, tiles)
        else:
            call = _tile_call(
                "igemmw",
                nr,
                (wp, ib * (IGEMM_MR * kp), kp),
                (panel, IntImm(0)),
                (c_at, c_off + ib * (IGEMM_MR * ldc), ldc),
                (rs, ib * IGEMM_MR),
                (kb, kq),
                (IntImm(co) - ib * IGEMM_MR, IntImm(nr) if epi else IntImm(npix) - jp * step),
                zp,
            )
            work = seq(gather, loops([(kb, nkb), (ib, -(-co // IGEMM_MR))], call))
        if epi is None:
            return Allocate(panel, work)
        c, j = ctx.var("ec"), ctx.var("ej")
        p = jp * step + j
        apply = For(c, IntImm(co), For(j, left, epi.store(cblk[c * nr + j], (n, c, p // wo, p % wo))))
        return Allocate(panel, Allocate(cblk, seq(work, apply)))

    body = panel_body(step)
    if tail < step:
        body = If(lt(jp, npan - 1), body, panel_body(tail)) if npan > 1 else panel_body(tail)
    return Stage(ctx.tag, For(pn, IntImm(nb * npan), body, LoopKind.PARALLEL))


DW_EXACT_TAPS = 513  # (255 * 128) * 513 < 2**24: a depthwise sum of at most this many taps is exact in float32
DW_VECTOR = 16  # a depthwise row's columns per vector


def _depthwise(
    ctx: LowerCtx,
    x: Buffer,
    w: Buffer,
    out: Buffer,
    zp: int,
    stride: tuple[int, int],
    pad: tuple[int, int],
    dil: tuple[int, int],
) -> Stmt:
    """A depthwise convolution (one input channel per output channel), per (image, channel) plane: the plane
    less its zero point copied as float32 into a local one bordered by zeros, then each output row in
    vectors of 16 columns, the last one ending at the row's end (overlapping the one before: the same
    values), every tap an affine load.  The sum is computed in float32, exact: every product and partial sum
    is a whole number under 2**24 in magnitude (255 * 128 per tap, at most ``DW_EXACT_TAPS`` taps); float32
    lanes are twice i64's and multiply in one instruction.  Measured (1 thread, 3x3, with a requantization
    epilogue) against the plain loop: 96 channels at 56x56 414 us against 1548; float32's depthwise with a
    ReLU ran 263 us there, and a QDQ MobileNetV2 whose stride-1 depthwise convolutions computed this way ran
    0.95x its float32-depthwise import, so the ONNX importer keeps depthwise convolutions float32 (strided
    rows and rows under 16 wide run 2-4x slower than these)."""
    nb, _, hh, ww = x.shape
    co, _, kh, kw = w.shape
    ho, wo = out.shape[2], out.shape[3]
    (sh, sw), (ph, pw), (dh, dw) = stride, pad, dil
    hp, wp = hh + 2 * ph, ww + 2 * pw
    nc, r, q, oh = ctx.var("nc"), ctx.var("r"), ctx.var("q"), ctx.var("oh")
    n, c = nc // co, nc % co
    plane = Buffer(ctx.namer.name(f"{ctx.tag}_plane"), (hp * wp,), F32, scope="local")
    centred = Cast(F32, x[(n, c, r, q)]) - FloatImm(float(zp))
    fill = seq(
        For(q, IntImm(hp * wp), Store(plane, (q,), FloatImm(0.0)), LoopKind.VECTORIZED),
        For(r, IntImm(hh), For(q, IntImm(ww), Store(plane, ((r + ph) * wp + q + pw,), centred), LoopKind.VECTORIZED)),
    )

    def element(col: Expr) -> Stmt:
        taps = [
            plane[((oh * sh + i * dh) * wp + col * sw + j * dw,)] * Cast(F32, w[(c, IntImm(0), IntImm(i), IntImm(j))])
            for i in range(kh)
            for j in range(kw)
        ]
        terms = taps[0]
        for t in taps[1:]:
            terms = terms + t
        total = Cast(I64, terms)  # whole and in range: no saturation (a vector conversion, not a scalarized one)
        idx = (n, c, oh, col)
        return ctx.epilogue.store(total, idx) if ctx.epilogue is not None else Store(out, idx, total)

    lane = ctx.var("ow")
    if wo >= DW_VECTOR:
        v = ctx.var("ov")
        col = emin(v * DW_VECTOR, IntImm(wo - DW_VECTOR)) + lane
        row = For(v, IntImm(-(-wo // DW_VECTOR)), For(lane, IntImm(DW_VECTOR), element(col), LoopKind.VECTORIZED))
    else:
        row = For(lane, IntImm(wo), element(lane), LoopKind.VECTORIZED)
    body = Allocate(plane, seq(fill, For(oh, IntImm(ho), row)))
    return Stage(ctx.tag, For(nc, IntImm(nb * co), body, LoopKind.PARALLEL))


def _tap_table(ci: int, kernel: tuple[int, int], pad: tuple[int, int], dil: tuple[int, int]) -> torch.Tensor:
    """Per group of four k (ordered tap, channel; channels padded to a multiple of 4): its first channel and
    the tap's row and column offsets, padding subtracted (int32, three per group)."""
    kh, kw = kernel
    cp = -(-ci // 4) * 4
    g = torch.arange(kh * kw * cp // 4) * 4
    tap = g // cp
    taps = torch.stack([g % cp, (tap // kw) * dil[0] - pad[0], (tap % kw) * dil[1] - pad[1]], 1)
    return taps.to(torch.int32).reshape(-1)


def _corner_table(widths: list[int], step: int, stride: tuple[int, int], out_hw: tuple[int, int]) -> torch.Tensor:
    """Per panel (of ``step`` pixels; ``2 * step`` entries apart), its pixels' window corners: ``width`` input
    rows, then ``width`` columns (far outside for pixels past the image)."""
    ho, wo = out_hw
    far = -(1 << 20)
    table = torch.full((len(widths), 2, step), far, dtype=torch.int32)
    for jp, width in enumerate(widths):
        pp = jp * step + torch.arange(width)
        inside = pp < ho * wo
        rows = torch.where(inside, (pp // wo) * stride[0], far)
        cols = torch.where(inside, (pp % wo) * stride[1], far)
        flat = table[jp].view(-1)
        flat[:width] = rows.to(torch.int32)
        flat[width : 2 * width] = cols.to(torch.int32)
    return table.reshape(-1)


__all__ = [
    "AMX_MR",
    "IGEMM_KINDS",
    "IGEMM_MR",
    "IGEMM_NR",
    "KC_GROUPS",
    "PANEL_WIDTHS",
    "amx_conv_name",
    "amx_conv_pays",
    "amx_int8",
    "amx_mm_name",
    "igather_name",
    "igemm_name",
    "igemm_parts",
    "lower_conv2d_integer",
    "lower_matmul_integer",
    "pack_conv_weights",
    "pack_weights",
    "pack_weights_amx",
]
