"""The quantized GEMM, ``matmul_integer``: uint8 A (less a zero point) times int8 B, exact int32 sums.

With B a constant whose batch dimensions are 1, A contiguous and K a multiple of 4 (a quantized model's
linear layers and 1x1 convolutions), B is packed once, at compile time, into panels of ``IGEMM_NR`` columns
in the layout the CPU's dot-product instruction reads (``lower.llvm.igemm``: for each four k, the panel's
columns' four bytes side by side), with each panel's column sums (the zero point's share), and the nest is a
parallel loop over panels calling the micro-kernel on blocks of ``IGEMM_MR`` rows and ``KC_GROUPS`` groups of
four k (a block of B that stays in L1 while the rows stream past it).  Otherwise (a run-time B, a K not a
multiple of 4, a grid target) it is the plain triple loop, exact in i64.
"""

from __future__ import annotations

import math

import torch

from lower.ir import (
    I8,
    I32,
    I64,
    Allocate,
    Buffer,
    Cast,
    For,
    IntImm,
    Intrinsic,
    LoopKind,
    Stage,
    Stmt,
    Store,
    emin,
    loops,
    seq,
)
from lower.ops_to_loops.core import LowerCtx, bcast_index, loop_vars, lowering
from rewrite.ir.graph import Node

# The micro-kernel's tile (the CPU backend defines ``igemm_MRxNR``: ``lower.llvm.igemm``): 8 rows by 48
# columns is 24 accumulators, 3 B vectors and a broadcast, 28 of AVX-512's 32 registers
IGEMM_MR, IGEMM_NR = 8, 48
KC_GROUPS = 128  # groups of four k per block: a 48-column panel's block of B is 24 KiB, L1-resident


def igemm_name(mr: int, nr: int) -> str:
    """The name a lowered nest calls (an ``Intrinsic``) for the MR x NR tile."""
    return f"igemm_{mr}x{nr}"


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


@lowering("matmul_integer")
def lower_matmul_integer(node: Node, ins: list[Buffer], outs: list[Buffer], ctx: LowerCtx) -> Stmt:
    a, b = ins
    out = outs[0]
    zp = node.attrs["a_zero_point"]
    k, n = b.shape[-2], b.shape[-1]
    contiguous = all(  # read and written in place by flat offsets
        (x.strides is None or x.strides == Buffer(x.name, x.shape).elem_strides) and x.offset == 0 for x in (a, out)
    )
    if (
        not ctx.grid
        and b.name in ctx.consts
        and all(d == 1 for d in b.shape[:-2])
        and tuple(out.shape[:-1]) == tuple(a.shape[:-1])
        and contiguous
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
    acc = Buffer(ctx.namer.name(f"{ctx.tag}_acc"), (1,), I64, scope="local")

    body = seq(
        Store(acc, (IntImm(0),), IntImm(0)),
        For(kv, IntImm(k), Store(acc, (IntImm(0),), acc[(IntImm(0),)] + (a[a_idx] - IntImm(zp)) * b[b_idx])),
        Store(out, tuple(vs), Cast(I32, acc[(IntImm(0),)])),
    )
    return Stage(ctx.tag, loops(list(zip(vs, out.shape, strict=False)), Allocate(acc, body)))


def _packed(ctx: LowerCtx, a: Buffer, b: Buffer, out: Buffer, zp: int, k: int, n: int) -> Stmt:
    """The packed-weight form (see the module docstring)."""
    rows = math.prod(a.shape[:-1])
    kq = k // 4
    npan = -(-n // IGEMM_NR)
    packed, sums = pack_weights(ctx.consts[b.name].reshape(k, n))
    bp = Buffer(ctx.namer.name(f"{ctx.tag}_packed"), (packed.numel(),), I8)
    cs = Buffer(ctx.namer.name(f"{ctx.tag}_colsum"), (sums.numel(),), I32)
    ctx.new_consts[bp.name] = packed
    ctx.new_consts[cs.name] = sums
    af, cf = a, out  # read and written by flat offsets: rows of A (its batch dimensions flattened) and of C
    jp, kb, ib = ctx.var("jp"), ctx.var("kb"), ctx.var("ib")
    nkb = -(-kq // KC_GROUPS)
    call = Intrinsic(
        igemm_name(IGEMM_MR, IGEMM_NR),
        (
            af,
            ib * (IGEMM_MR * k) + kb * (4 * KC_GROUPS),
            IntImm(k),
            bp,
            jp * (kq * IGEMM_NR * 4) + kb * (KC_GROUPS * IGEMM_NR * 4),
            cf,
            ib * (IGEMM_MR * n) + jp * IGEMM_NR,
            IntImm(n),
            emin(IntImm(KC_GROUPS), IntImm(kq) - kb * KC_GROUPS),
            emin(IntImm(IGEMM_MR), IntImm(rows) - ib * IGEMM_MR),
            emin(IntImm(IGEMM_NR), IntImm(n) - jp * IGEMM_NR),
            cs,
            jp * IGEMM_NR,
            IntImm(zp),
            emin(kb, IntImm(1)),
        ),
        reads=(af, bp, cs),
        writes=(cf,),
    )
    nest = For(
        jp,
        IntImm(npan),
        For(kb, IntImm(nkb), For(ib, IntImm(-(-rows // IGEMM_MR)), call)),
        LoopKind.PARALLEL,
    )
    return Stage(ctx.tag, nest)


__all__ = ["IGEMM_MR", "IGEMM_NR", "KC_GROUPS", "igemm_name", "lower_matmul_integer", "pack_weights"]
