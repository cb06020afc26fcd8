"""The quantized GEMM micro-kernel: ``C[m x n] (int32) = sum_k (A[m x k] (uint8) - zp) * B[k x n] (int8)``.

``igemm_MRxNR(A, lda, B, C, ldc, kq, m, n, cs, zp, beta)``: A row-major bytes (``lda`` apart), read four at a
time (``kq`` groups: the lowering gives a K that is a multiple of 4); B a packed panel ``[kq][NR][4]``: for
each group of four k, the NR columns' four bytes side by side, so one 64-byte vector holds 16 columns' four
k (the layout ``vpdpbusd`` reads: each 32-bit lane multiplies four unsigned bytes of A by four signed bytes
of B and adds the four products to its int32 accumulator; ``lower.ops_to_loops.quantized`` packs the
weights once, at compile time, zero padded past N).  An MR x NR block of accumulators (MR * NR / 16 zmm
registers) starts at zero; each group loads NR / 16 vectors of B, broadcasts MR rows' four bytes of A and
issues MR * NR / 16 dot products.  Rows past ``m`` read row ``m - 1`` again and are not stored; columns past
``n`` are masked on the stores.  ``cs`` holds the panel's column sums of B (NR int32): the zero point's share,
``zp * cs``, is subtracted when ``beta`` is 0 (C overwritten: the first block of k) and C accumulated into
when it is 1 (a later block).

With AVX-512 VNNI (``+avx512vnni``) a dot product is one ``vpdpbusd``; without it, the same sums in plain
vector IR (widen, multiply, add the four), which LLVM selects as it can: correct everywhere, fast with VNNI.

    >>> "vpdpbusd" in igemm_module(8, 48, vnni=True)
    True
"""

from __future__ import annotations

import functools
from typing import Any

from lower.ir import Intrinsic
from lower.ops_to_loops.quantized import IGEMM_KINDS, IGEMM_MR, IGEMM_NR, igemm_name
from rewrite.ir.errors import CodegenError

V = "<16 x i32>"
_DPB = "llvm.x86.avx512.vpdpbusd.512"


def igemm_symbol(mr: int, nr: int, vnni: bool, kind: str = "igemm") -> str:
    return f"eqsat_{kind}_{mr}x{nr}{'_vnni' if vnni else ''}"


def _dot(L: list[str], out: str, acc: str, a: str, b: str, vnni: bool) -> None:
    """``out = acc + dot4(a as 4 x u8, b as 4 x i8)`` per 32-bit lane."""
    if vnni:
        L.append(f"  {out} = call {V} @{_DPB}({V} {acc}, {V} {a}, {V} {b})")
        return
    L += [
        f"  {out}.ab = bitcast {V} {a} to <64 x i8>",
        f"  {out}.bb = bitcast {V} {b} to <64 x i8>",
        f"  {out}.aw = zext <64 x i8> {out}.ab to <64 x i32>",
        f"  {out}.bw = sext <64 x i8> {out}.bb to <64 x i32>",
        f"  {out}.p = mul <64 x i32> {out}.aw, {out}.bw",
    ]
    parts = []
    for t in range(4):
        idx = ", ".join(f"i32 {4 * j + t}" for j in range(16))
        L.append(f"  {out}.s{t} = shufflevector <64 x i32> {out}.p, <64 x i32> poison, <16 x i32> <{idx}>")
        parts.append(f"{out}.s{t}")
    L += [
        f"  {out}.t0 = add {V} {parts[0]}, {parts[1]}",
        f"  {out}.t1 = add {V} {parts[2]}, {parts[3]}",
        f"  {out}.t2 = add {V} {out}.t0, {out}.t1",
        f"  {out} = add {V} {acc}, {out}.t2",
    ]


def igemm_routine(mr: int, nr: int, vnni: bool, kind: str = "igemm") -> str:
    """The routine's LLVM IR (see the module docstring).  ``kind`` ``igemmw``: the operands' roles swapped
    (A int8 weights broadcast, B a uint8 panel of activations) and the zero point's share per row of C
    (``cs`` holds A's row sums)."""
    if nr % 16 or not 1 <= mr <= 16:
        raise CodegenError(f"igemm tile {mr}x{nr}: NR must be a multiple of 16 and MR 1..16")
    h = nr // 16
    rows_w = kind == "igemmw"
    sym = igemm_symbol(mr, nr, vnni, kind)
    L = [
        f"define void @{sym}(ptr noalias %A, i64 %lda, ptr noalias %B, ptr noalias %C, i64 %ldc, i64 %kq, "
        "i64 %m, i64 %n, ptr noalias %cs, i64 %zp, i64 %beta) nounwind {",
        "entry:",
        "  %mlast = sub i64 %m, 1",
    ]
    for r in range(mr):  # rows past m read the last row again (never stored)
        L += [
            f"  %rr{r} = call i64 @llvm.smin.i64(i64 {r}, i64 %mlast)",
            f"  %ao{r} = mul i64 %rr{r}, %lda",
            f"  %ap{r} = getelementptr i8, ptr %A, i64 %ao{r}",
        ]
    L += ["  %any = icmp sgt i64 %kq, 0", "  br i1 %any, label %loop, label %done", "loop:"]
    L.append("  %q = phi i64 [ 0, %entry ], [ %q1, %loop ]")
    for r in range(mr):
        for v in range(h):
            L.append(f"  %acc{r}_{v} = phi {V} [ zeroinitializer, %entry ], [ %nacc{r}_{v}, %loop ]")
    L.append(f"  %bo = mul i64 %q, {nr * 4}")
    for v in range(h):
        L += [
            f"  %bo{v} = add i64 %bo, {64 * v}",
            f"  %bp{v} = getelementptr i8, ptr %B, i64 %bo{v}",
            f"  %b{v} = load {V}, ptr %bp{v}, align 64",
        ]
    L.append("  %aq = shl i64 %q, 2")
    for r in range(mr):
        L += [
            f"  %apq{r} = getelementptr i8, ptr %ap{r}, i64 %aq",
            f"  %as{r} = load i32, ptr %apq{r}, align 1",
            f"  %ai{r} = insertelement {V} poison, i32 %as{r}, i64 0",
            f"  %ab{r} = shufflevector {V} %ai{r}, {V} poison, {V} zeroinitializer",
        ]
        for v in range(h):  # vpdpbusd: unsigned bytes (first), signed (second)
            u, w = (f"%b{v}", f"%ab{r}") if rows_w else (f"%ab{r}", f"%b{v}")
            _dot(L, f"%nacc{r}_{v}", f"%acc{r}_{v}", u, w, vnni)
    L += ["  %q1 = add i64 %q, 1", "  %more = icmp slt i64 %q1, %kq", "  br i1 %more, label %loop, label %done"]
    L.append("done:")
    for r in range(mr):
        for v in range(h):
            L.append(f"  %r{r}_{v} = phi {V} [ zeroinitializer, %entry ], [ %nacc{r}_{v}, %loop ]")
    # column masks, the zero point's share (subtracted when C is overwritten), C read back when accumulated
    L += [
        "  %n32 = trunc i64 %n to i32",
        f"  %ni = insertelement {V} poison, i32 %n32, i64 0",
        f"  %nb = shufflevector {V} %ni, {V} poison, {V} zeroinitializer",
        "  %zp32 = trunc i64 %zp to i32",
        f"  %zi = insertelement {V} poison, i32 %zp32, i64 0",
        f"  %zb = shufflevector {V} %zi, {V} poison, {V} zeroinitializer",
        "  %over = icmp eq i64 %beta, 0",
    ]
    for v in range(h):
        lanes = ", ".join(f"i32 {16 * v + j}" for j in range(16))
        L.append(f"  %cm{v} = icmp slt {V} <{lanes}>, %nb")
        if not rows_w:  # the share per column of C
            L += [
                f"  %csp{v} = getelementptr i32, ptr %cs, i64 {16 * v}",
                f"  %csv{v} = load {V}, ptr %csp{v}, align 4",
                f"  %zc{v} = mul {V} %csv{v}, %zb",
                f"  %sub{v} = select i1 %over, {V} %zc{v}, {V} zeroinitializer",
            ]
    for r in range(mr if rows_w else 0):  # the share per row of C (rows past m read the last row's sum)
        L += [
            f"  %rsp{r} = getelementptr i32, ptr %cs, i64 %rr{r}",
            f"  %rs{r} = load i32, ptr %rsp{r}, align 4",
            f"  %rsi{r} = insertelement {V} poison, i32 %rs{r}, i64 0",
            f"  %rsb{r} = shufflevector {V} %rsi{r}, {V} poison, {V} zeroinitializer",
            f"  %rzc{r} = mul {V} %rsb{r}, %zb",
            f"  %rsub{r} = select i1 %over, {V} %rzc{r}, {V} zeroinitializer",
        ]
    for r in range(mr):
        L += [
            f"  %ok{r} = icmp slt i64 {r}, %m",
            f"  %co{r} = mul i64 %rr{r}, %ldc",
            f"  %cp{r} = getelementptr i32, ptr %C, i64 %co{r}",
        ]
        for v in range(h):
            L += [
                f"  %sm{r}_{v} = select i1 %ok{r}, <16 x i1> %cm{v}, <16 x i1> zeroinitializer",
                f"  %lm{r}_{v} = select i1 %over, <16 x i1> zeroinitializer, <16 x i1> %sm{r}_{v}",
                f"  %cq{r}_{v} = getelementptr i32, ptr %cp{r}, i64 {16 * v}",
                f"  %old{r}_{v} = call {V} @llvm.masked.load.v16i32.p0(ptr %cq{r}_{v}, i32 4, <16 x i1> "
                f"%lm{r}_{v}, {V} zeroinitializer)",
                f"  %x{r}_{v} = add {V} %r{r}_{v}, %old{r}_{v}",
                f"  %y{r}_{v} = sub {V} %x{r}_{v}, {f'%rsub{r}' if rows_w else f'%sub{v}'}",
                f"  call void @llvm.masked.store.v16i32.p0({V} %y{r}_{v}, ptr %cq{r}_{v}, i32 4, <16 x i1> %sm{r}_{v})",
            ]
    L += ["  ret void", "}"]
    return "\n".join(L)


@functools.cache
def igemm_module(mr: int, nr: int, vnni: bool, kind: str = "igemm") -> str:
    """The routine as a stand-alone module (a library: compiled once per target and loaded beside kernels)."""
    decls = [
        "declare i64 @llvm.smin.i64(i64, i64)",
        f"declare {V} @llvm.masked.load.v16i32.p0(ptr, i32, <16 x i1>, {V})",
        f"declare void @llvm.masked.store.v16i32.p0({V}, ptr, i32, <16 x i1>)",
    ]
    if vnni:
        decls.append(f"declare {V} @{_DPB}({V}, {V}, {V})")
    return "\n".join(decls) + "\n\n" + igemm_routine(mr, nr, vnni, kind) + "\n"


def has_vnni(target: Any) -> bool:
    """Whether the target's CPU has AVX-512 VNNI (``vpdpbusd`` on 512-bit vectors)."""
    feats = getattr(target, "features", ())
    return "+avx512vnni" in feats and "+avx512f" in feats


def emit_igemm(fe: Any, s: Intrinsic) -> None:
    """Call the quantized micro-kernel (``fe``: the codegen's ``FunctionEmitter``), defining its library."""
    A, a_off, lda, B, b_off, C, c_off, ldc, kq, m, n, CS, cs_off, zp, beta = s.args
    kind, shape = s.name.split("_")
    mr, nr = (int(x) for x in shape.split("x"))
    vnni = has_vnni(fe.mod.target)
    sym = igemm_symbol(mr, nr, vnni, kind)
    fe.mod.libraries[sym] = igemm_module(mr, nr, vnni, kind)
    fe.mod.define(sym, lambda: f"declare void @{sym}(ptr, i64, ptr, ptr, i64, i64, i64, i64, ptr, i64, i64)")
    pa, pb, pc, pcs = fe.pointer(A, a_off), fe.pointer(B, b_off), fe.pointer(C, c_off), fe.pointer(CS, cs_off)
    v = [fe.expr(x) for x in (lda, ldc, kq, m, n, zp, beta)]
    fe.emit(
        f"call void @{sym}(ptr {pa}, i64 {v[0]}, ptr {pb}, ptr {pc}, i64 {v[1]}, i64 {v[2]}, i64 {v[3]}, "
        f"i64 {v[4]}, ptr {pcs}, i64 {v[5]}, i64 {v[6]})"
    )


IGEMM_INTRINSICS = {igemm_name(IGEMM_MR, IGEMM_NR, k): emit_igemm for k in IGEMM_KINDS}

__all__ = ["IGEMM_INTRINSICS", "emit_igemm", "has_vnni", "igemm_module"]
