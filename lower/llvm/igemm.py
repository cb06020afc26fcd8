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

``igemmw_MRxNR``: the same with the operands' roles swapped for a convolution (A the int8 weights, rows
broadcast; B a uint8 panel of im2col activations: vpdpbusd's unsigned operand is its vector one), the zero
point's share per row of C (``cs``: the weights' row sums), C rows the output channels in NCHW.
``igather_NR`` fills such a panel from an NCHW image four channels of one tap at a time: dword gathers, or
four plain 16-byte loads where sixteen pixels read consecutive bytes inside the image (a 1x1 convolution,
a stride-1 row).

    >>> "vpdpbusd" in igemm_module(8, 48, vnni=True)
    True
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any

from lower.ir import IntImm, Intrinsic
from lower.ops_to_loops.quantized import (
    AMX_MR,
    IGEMM_KINDS,
    IGEMM_MR,
    PANEL_WIDTHS,
    amx_conv_name,
    amx_int8,
    amx_mm_name,
    igather_name,
    igemm_name,
    igemm_parts,
)
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
            *_splat(f"%ab{r}", "i32", f"%as{r}"),
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
        *_splat("%nb", "i32", "%n32"),
        "  %zp32 = trunc i64 %zp to i32",
        *_splat("%zb", "i32", "%zp32"),
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
            *_splat(f"%rsb{r}", "i32", f"%rs{r}"),
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


# AMX: the tile registers the panel routines use (C's NR / 16 tiles, then A's, then B's)
_AMX_A, _AMX_B = 4, 5


def amx_conv_routine(nr: int) -> str:
    """``eqsat_amxconv_NR(A, lda, B, C, ldc, steps, m, n, zi)``: a convolution's whole panel of ``nr`` pixels
    on AMX tiles, every block of 16 output channels over the whole of K in one call (one tile configuration
    a panel, C never read back).  A: the int8 weight rows (``lda`` bytes apart, padded with zero rows to a
    multiple of 16 and with zero weights to K a multiple of 64: ``steps`` of 16 groups of four k, the rows'
    tail reading the panel's rows past the gathered ones against zero weights); B: the uint8 panel
    ``[16 steps][nr][4]``; C: ``m`` rows of int32 (``ldc`` apart) from the panel's first pixel, ``n`` of its
    columns stored; ``zi``: per row 16 copies of minus the zero point times the row's weight sum, the tiles'
    initial value (C is that plus the sums: the zero point's share taken off).  A block whose 16 rows and
    ``nr`` columns all land is stored straight from the tiles; the others through a stack block, masked."""
    if nr % 16 or not 16 <= nr <= 48:
        raise CodegenError(f"AMX convolution panel of {nr} pixels: 16, 32 or 48")
    h = nr // 16
    sym = f"eqsat_amxconv_{nr}"
    L = [
        f"define void @{sym}(ptr noalias %A, i64 %lda, ptr noalias %B, ptr noalias %C, i64 %ldc, i64 %steps, "
        "i64 %m, i64 %n, ptr noalias %zi) nounwind {",
        "entry:",
        *_amx_config(h),
        "  %m15 = add i64 %m, 15",
        "  %nblk = udiv i64 %m15, 16",
        "  %ldcb = shl i64 %ldc, 2",
        f"  %fulln = icmp eq i64 %n, {nr}",
        *_column_masks(h),
        "  br label %block",
        "block:",
        "  %ib = phi i64 [ 0, %entry ], [ %ib1, %next ]",
        "  %zo = shl i64 %ib, 10",  # 16 rows x 16 int32 a block
        "  %zp = getelementptr i8, ptr %zi, i64 %zo",
        *(f"  call void @llvm.x86.tileloadd64(i8 {v}, ptr %zp, i64 64)" for v in range(h)),
        "  %ar = shl i64 %ib, 4",
        "  %ao = mul i64 %ar, %lda",
        "  %ab = getelementptr i8, ptr %A, i64 %ao",
        "  br label %step",
        *_amx_step(h, nr, "tdpbsud", ["  %ak = shl i64 %s, 6"]),
        "stored:",
        "  %left = sub i64 %m, %ar",
        "  %fullm = icmp sge i64 %left, 16",
        "  %full = and i1 %fullm, %fulln",
        "  %co = mul i64 %ar, %ldc",
        "  %cp = getelementptr i32, ptr %C, i64 %co",
        "  br i1 %full, label %direct, label %edge",
        *_tile_stores(h, nr, "  %rows = call i64 @llvm.smin.i64(i64 %left, i64 16)"),
    ]
    return "\n".join(L)


@functools.cache
def amx_conv_module(nr: int) -> str:
    decls = [*_AMX_DECLS, "declare void @llvm.x86.tdpbsud(i8 immarg, i8 immarg, i8 immarg)"]
    return "\n".join(decls) + "\n\n" + amx_conv_routine(nr) + "\n"


def emit_amx_conv(fe: Any, s: Intrinsic) -> None:
    """Call the AMX convolution panel routine (``amx_conv_routine``), defining its library."""
    A, a_off, lda, B, C, c_off, ldc, steps, m, n, ZI = s.args
    if not has_amx(fe.mod.target):
        raise CodegenError(f"{s.name}: AMX tiles, which target {fe.mod.target.name} lacks")
    nr = next(w for w in PANEL_WIDTHS if amx_conv_name(w) == s.name)
    sym = f"eqsat_amxconv_{nr}"
    fe.mod.libraries[sym] = amx_conv_module(nr)
    fe.mod.define(sym, lambda: f"declare void @{sym}(ptr, i64, ptr, ptr, i64, i64, i64, i64, ptr)")
    pa, pb, pc, pz = fe.pointer(A, a_off), fe.pointer(B, IntImm(0)), fe.pointer(C, c_off), fe.pointer(ZI, IntImm(0))
    v = [fe.expr(x) for x in (lda, ldc, steps, m, n)]
    fe.emit(
        f"call void @{sym}(ptr {pa}, i64 {v[0]}, ptr {pb}, ptr {pc}, i64 {v[1]}, i64 {v[2]}, i64 {v[3]}, "
        f"i64 {v[4]}, ptr {pz})"
    )


def amx_mm_routine(nr: int) -> str:
    """``eqsat_amxmm_NR(A, lda, B, C, ldc, steps, k, m, n, zi)``: a quantized GEMM's whole panel of ``nr``
    columns on AMX tiles, every block of 16 rows over the whole of K in one call.  A: ``m`` >= 16 rows of
    ``k`` >= 64 uint8 (``lda`` apart); B: the panel packed as ``pack_weights_amx`` writes it, ``steps`` of 16
    groups of four k, the last step's A read at ``k - 64`` (never past a row) against B rows zeroed where
    they would count a group twice; C: int32 rows ``ldc`` apart, ``n`` columns stored; ``zi``: the panel's
    16 x ``nr`` initial tile (minus the zero point times each column's weight sum).  The last block of rows
    starts at ``m - 16``, recomputing rows the block before it stored (the same values), so no row is read
    or written past ``m``; a panel of fewer than ``nr`` columns is stored through a stack block, masked."""
    if nr % 16 or not 16 <= nr <= 48:
        raise CodegenError(f"AMX GEMM panel of {nr} columns: 16, 32 or 48")
    h = nr // 16
    sym = f"eqsat_amxmm_{nr}"
    L = [
        f"define void @{sym}(ptr noalias %A, i64 %lda, ptr noalias %B, ptr noalias %C, i64 %ldc, i64 %steps, "
        "i64 %k, i64 %m, i64 %n, ptr noalias %zi) nounwind {",
        "entry:",
        *_amx_config(h),
        "  %m15 = add i64 %m, 15",
        "  %nblk = udiv i64 %m15, 16",
        "  %mlast = sub i64 %m, 16",
        "  %klast = sub i64 %k, 64",
        "  %ldcb = shl i64 %ldc, 2",
        f"  %fulln = icmp eq i64 %n, {nr}",
        *_column_masks(h),
        "  br label %block",
        "block:",
        "  %ib = phi i64 [ 0, %entry ], [ %ib1, %next ]",
        *(
            line
            for v in range(h)
            for line in (
                f"  %zp{v} = getelementptr i32, ptr %zi, i64 {16 * v}",
                f"  call void @llvm.x86.tileloadd64(i8 {v}, ptr %zp{v}, i64 {nr * 4})",
            )
        ),
        "  %r16 = shl i64 %ib, 4",
        "  %ar = call i64 @llvm.smin.i64(i64 %r16, i64 %mlast)",
        "  %ao = mul i64 %ar, %lda",
        "  %ab = getelementptr i8, ptr %A, i64 %ao",
        "  br label %step",
        *_amx_step(
            h, nr, "tdpbusd", ["  %ak64 = shl i64 %s, 6", "  %ak = call i64 @llvm.smin.i64(i64 %ak64, i64 %klast)"]
        ),
        "stored:",
        "  %co = mul i64 %ar, %ldc",
        "  %cp = getelementptr i32, ptr %C, i64 %co",
        "  br i1 %fulln, label %direct, label %edge",
        *_tile_stores(h, nr, "  %rows = add i64 0, 16"),
    ]
    return "\n".join(L)


def _amx_step(h: int, nr: int, dp: str, ak: list[str]) -> list[str]:
    """The ``step`` block of a panel routine (16 groups of four k a step, ``%s`` from 0 to ``%steps``, then
    ``stored``): A's tile from ``%ab`` at byte ``%ak`` (``ak``: the lines computing it), B's ``h`` tiles of the
    panel (``4 nr`` bytes a row), one ``dp`` (``tdpbusd`` / ``tdpbsud``) per C tile."""
    L = [
        "step:",
        "  %s = phi i64 [ 0, %block ], [ %s1, %step ]",
        *ak,
        "  %ap = getelementptr i8, ptr %ab, i64 %ak",
        f"  call void @llvm.x86.tileloadd64(i8 {_AMX_A}, ptr %ap, i64 %lda)",
        f"  %bo = mul i64 %s, {16 * nr * 4}",
    ]
    for v in range(h):
        L += [
            f"  %bo{v} = add i64 %bo, {64 * v}",
            f"  %bp{v} = getelementptr i8, ptr %B, i64 %bo{v}",
            f"  call void @llvm.x86.tileloadd64(i8 {_AMX_B + v}, ptr %bp{v}, i64 {nr * 4})",
        ]
    L += [f"  call void @llvm.x86.{dp}(i8 {v}, i8 {_AMX_A}, i8 {_AMX_B + v})" for v in range(h)]
    return [
        *L,
        "  %s1 = add i64 %s, 1",
        "  %more = icmp ult i64 %s1, %steps",
        "  br i1 %more, label %step, label %stored",
    ]


def amx_tile_config(tiles: Iterable[int]) -> list[str]:
    """Lines loading a tile configuration (``%cfg`` on the stack; palette 1) in which each of ``tiles`` is 16
    rows of 64 bytes, the others unconfigured (needs ``llvm.memset`` and ``llvm.x86.ldtilecfg`` declared)."""
    L = [
        "  %cfg = alloca [64 x i8], align 64",
        "  call void @llvm.memset.p0.i64(ptr %cfg, i8 0, i64 64, i1 false)",
        "  store i8 1, ptr %cfg",
    ]
    for t in tiles:
        L += [
            f"  %cb{t} = getelementptr i8, ptr %cfg, i64 {16 + 2 * t}",
            f"  store i16 64, ptr %cb{t}",
            f"  %cr{t} = getelementptr i8, ptr %cfg, i64 {48 + t}",
            f"  store i8 16, ptr %cr{t}",
        ]
    return [*L, "  call void @llvm.x86.ldtilecfg(ptr %cfg)"]


def _amx_config(h: int) -> list[str]:
    """Entry lines of a panel routine: a stack block for stores (``%blk``), and the tiles configured: C's
    ``h``, A's, B's ``h``."""
    blk = f"  %blk = alloca [{AMX_MR * 16 * h} x i32], align 64"
    return [blk, *amx_tile_config([*range(h), _AMX_A, *(_AMX_B + v for v in range(h))])]


def _column_masks(h: int) -> list[str]:
    """``%cm{v}``: lanes of the ``v``-th 16 columns below ``n``."""
    L = ["  %n32 = trunc i64 %n to i32", *_splat("%nb", "i32", "%n32")]
    for v in range(h):
        lanes = ", ".join(f"i32 {16 * v + j}" for j in range(16))
        L.append(f"  %cm{v} = icmp slt {V} <{lanes}>, %nb")
    return L


def _tile_stores(h: int, nr: int, rows: str) -> list[str]:
    """Blocks ``direct`` (C's tiles stored at ``%cp``, rows ``%ldcb`` bytes apart) and ``edge`` (stored to
    ``%blk``, then ``%rows`` rows copied to C, columns masked by ``%cm``), both going to ``next`` (the next
    block of rows, ``%ib`` of ``%nblk``, or the tiles released and the routine's end); ``rows`` defines
    ``%rows`` in ``edge``."""
    L = ["direct:"]
    for v in range(h):
        L += [
            f"  %dp{v} = getelementptr i32, ptr %cp, i64 {16 * v}",
            f"  call void @llvm.x86.tilestored64(i8 {v}, ptr %dp{v}, i64 %ldcb)",
        ]
    L += ["  br label %next", "edge:"]
    for v in range(h):
        L += [
            f"  %ep{v} = getelementptr i32, ptr %blk, i64 {16 * v}",
            f"  call void @llvm.x86.tilestored64(i8 {v}, ptr %ep{v}, i64 {nr * 4})",
        ]
    L += [rows, "  br label %row", "row:", "  %r = phi i64 [ 0, %edge ], [ %r1, %row ]", f"  %bro = mul i64 %r, {nr}"]
    L.append("  %crow = mul i64 %r, %ldc")
    for v in range(h):
        L += [
            f"  %bro{v} = add i64 %bro, {16 * v}",
            f"  %brp{v} = getelementptr i32, ptr %blk, i64 %bro{v}",
            f"  %val{v} = load {V}, ptr %brp{v}, align 64",
            f"  %cro{v} = add i64 %crow, {16 * v}",
            f"  %crp{v} = getelementptr i32, ptr %cp, i64 %cro{v}",
            f"  call void @llvm.masked.store.v16i32.p0({V} %val{v}, ptr %crp{v}, i32 4, <16 x i1> %cm{v})",
        ]
    L += ["  %r1 = add i64 %r, 1", "  %rmore = icmp slt i64 %r1, %rows", "  br i1 %rmore, label %row, label %next"]
    # the next block of rows, or the tiles released
    L += ["next:", "  %ib1 = add i64 %ib, 1", "  %bmore = icmp ult i64 %ib1, %nblk"]
    L += ["  br i1 %bmore, label %block, label %exit", "exit:", "  call void @llvm.x86.tilerelease()", "  ret void"]
    return [*L, "}"]


_AMX_DECLS = [
    "declare i64 @llvm.smin.i64(i64, i64)",
    "declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)",
    f"declare void @llvm.masked.store.v16i32.p0({V}, ptr, i32, <16 x i1>)",
    "declare void @llvm.x86.ldtilecfg(ptr)",
    "declare void @llvm.x86.tilerelease()",
    "declare void @llvm.x86.tileloadd64(i8 immarg, ptr, i64)",
    "declare void @llvm.x86.tilestored64(i8 immarg, ptr, i64)",
]


@functools.cache
def amx_mm_module(nr: int) -> str:
    decls = [*_AMX_DECLS, "declare void @llvm.x86.tdpbusd(i8 immarg, i8 immarg, i8 immarg)"]
    return "\n".join(decls) + "\n\n" + amx_mm_routine(nr) + "\n"


def emit_amx_mm(fe: Any, s: Intrinsic) -> None:
    """Call the AMX GEMM panel routine (``amx_mm_routine``), defining its library."""
    A, a_off, lda, B, b_off, C, c_off, ldc, steps, k, m, n, ZI, z_off = s.args
    if not has_amx(fe.mod.target):
        raise CodegenError(f"{s.name}: AMX tiles, which target {fe.mod.target.name} lacks")
    nr = next(w for w in PANEL_WIDTHS if amx_mm_name(w) == s.name)
    sym = f"eqsat_amxmm_{nr}"
    fe.mod.libraries[sym] = amx_mm_module(nr)
    fe.mod.define(sym, lambda: f"declare void @{sym}(ptr, i64, ptr, ptr, i64, i64, i64, i64, i64, ptr)")
    pa, pb, pc, pz = fe.pointer(A, a_off), fe.pointer(B, b_off), fe.pointer(C, c_off), fe.pointer(ZI, z_off)
    v = [fe.expr(x) for x in (lda, ldc, steps, k, m, n)]
    fe.emit(
        f"call void @{sym}(ptr {pa}, i64 {v[0]}, ptr {pb}, ptr {pc}, i64 {v[1]}, i64 {v[2]}, i64 {v[3]}, "
        f"i64 {v[4]}, i64 {v[5]}, ptr {pz})"
    )


def has_amx(target: Any) -> bool:
    """Whether the target's CPU runs AMX int8 tile dot products (``lower.llvm.jit.host_machine`` reads the
    AMX features ``-`` in a process Linux did not grant the tiles)."""
    return amx_int8(tuple(getattr(target, "features", ())))


def has_vnni(target: Any) -> bool:
    """Whether the target's CPU has AVX-512 VNNI (``vpdpbusd`` on 512-bit vectors)."""
    feats = getattr(target, "features", ())
    return "+avx512vnni" in feats and "+avx512f" in feats


def emit_igemm(fe: Any, s: Intrinsic) -> None:
    """Call the quantized micro-kernel (``fe``: the codegen's ``FunctionEmitter``), defining its library."""
    A, a_off, lda, B, b_off, C, c_off, ldc, kq, m, n, CS, cs_off, zp, beta = s.args
    kind, mr, nr = igemm_parts(s.name)
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


def igather_routine(nr: int) -> str:
    """``eqsat_igather_NR(x, hw, w, h, taps, pix, kq, panel, zp)``: a convolution's im2col panel of ``nr``
    output pixels in vpdpbusd's layout, for k ordered (tap, channel) with four channels to a group: word
    ``(q, j)`` of the panel is the four channels ``c0 .. c0 + 3`` of group ``q`` at pixel ``j``'s input position
    for the group's tap.  ``x``: the image's first plane (``hw`` bytes a plane, rows ``w`` bytes, ``h`` rows);
    ``taps``: three int32 per group (``c0``, row and column offset of the tap, padding subtracted); ``pix``:
    two int32 tables of the panel's ``nr`` pixels (the input row and column of the window's corner; far
    outside for pixels past the image).  Sixteen pixels at a time: a position inside the image reads its four
    channels by four dword gathers (each from the lane's byte, or up to 3 bytes before it near a plane's
    start: never past the plane), keeps the byte, and packs the four into the lane; outside it is the zero
    point in all four bytes."""
    h = nr // 16
    W = V
    sym = f"eqsat_igather_{nr}"
    L = [
        f"define void @{sym}(ptr noalias %x, i64 %hw, i64 %w, i64 %h, i64 %ci, ptr noalias %taps, "
        "ptr noalias %pix, i64 %kq, ptr noalias %panel, i64 %zp) nounwind {",
        "entry:",
        "  %w32 = trunc i64 %w to i32",
        "  %h32 = trunc i64 %h to i32",
        *_splat("%wb", "i32", "%w32"),
        *_splat("%hb", "i32", "%h32"),
        "  %zp32 = trunc i64 %zp to i32",
        *_splat("%zw", "i32", "%zp32"),
        "  %zp8 = trunc i64 %zp to i8",
        *_splat("%zv", "i8", "%zp8"),
        "  %zp2 = mul i32 %zp32, 16843009",  # the zero point in each of the four bytes
        *_splat("%zb", "i32", "%zp2"),
        f"  %pcol = getelementptr i32, ptr %pix, i64 {nr}",
    ]
    for v in range(h):
        L += [
            f"  %prp{v} = getelementptr i32, ptr %pix, i64 {16 * v}",
            f"  %pr{v} = load {W}, ptr %prp{v}, align 4",
            f"  %pcp{v} = getelementptr i32, ptr %pcol, i64 {16 * v}",
            f"  %pc{v} = load {W}, ptr %pcp{v}, align 4",
        ]
    L += ["  %any = icmp sgt i64 %kq, 0", "  br i1 %any, label %loop, label %done", "loop:"]
    L.append(f"  %q = phi i64 [ 0, %entry ], [ %q1, %join{h - 1} ]")
    L += [
        "  %tq = mul i64 %q, 3",
        "  %tp0 = getelementptr i32, ptr %taps, i64 %tq",
        "  %c0 = load i32, ptr %tp0, align 4",
        "  %tp1 = getelementptr i32, ptr %tp0, i64 1",
        "  %dh = load i32, ptr %tp1, align 4",
        "  %tp2 = getelementptr i32, ptr %tp0, i64 2",
        "  %dw = load i32, ptr %tp2, align 4",
        *_splat("%dhb", "i32", "%dh"),
        *_splat("%dwb", "i32", "%dw"),
        "  %c064 = sext i32 %c0 to i64",
        "  %pl = mul i64 %c064, %hw",
        "  %plane = getelementptr i8, ptr %x, i64 %pl",
    ]
    for t in range(4):  # channels past the image's (a group of fewer than four): the zero point, never read
        L += [
            f"  %cv{t} = add i64 %c064, {t}",
            f"  %ck{t} = icmp slt i64 %cv{t}, %ci",
            *_splat(f"%cm{t}", "i1", f"%ck{t}"),
        ]
    for v in range(h):
        L += [
            f"  %ih{v} = add {W} %pr{v}, %dhb",
            f"  %iw{v} = add {W} %pc{v}, %dwb",
            f"  %m0_{v} = icmp sge {W} %ih{v}, zeroinitializer",
            f"  %m1_{v} = icmp slt {W} %ih{v}, %hb",
            f"  %m2_{v} = icmp sge {W} %iw{v}, zeroinitializer",
            f"  %m3_{v} = icmp slt {W} %iw{v}, %wb",
            f"  %ma{v} = and <16 x i1> %m0_{v}, %m1_{v}",
            f"  %mb{v} = and <16 x i1> %m2_{v}, %m3_{v}",
            f"  %m{v} = and <16 x i1> %ma{v}, %mb{v}",
            f"  %rw{v} = mul {W} %ih{v}, %wb",
            f"  %off{v} = add {W} %rw{v}, %iw{v}",
            # read the dword ending at the byte, or starting at the plane's start: never past the plane
            f"  %bk{v} = call {W} @llvm.smin.v16i32({W} %off{v}, {W} <{', '.join(['i32 3'] * 16)}>)",
            f"  %bks{v} = call {W} @llvm.smax.v16i32({W} %bk{v}, {W} zeroinitializer)",
            f"  %st{v} = sub {W} %off{v}, %bks{v}",
            f"  %sh{v} = shl {W} %bks{v}, <{', '.join(['i32 3'] * 16)}>",
        ]
        iota = ", ".join(f"i32 {i}" for i in range(16))
        L += [  # sixteen consecutive bytes inside the image (a 1x1 or stride-1 row): four plain loads
            f"  %o0_{v} = extractelement {W} %off{v}, i64 0",
            *_splat(f"%os_{v}", "i32", f"%o0_{v}"),
            f"  %seq_{v} = add {W} %os_{v}, <{iota}>",
            f"  %eqv_{v} = icmp eq {W} %off{v}, %seq_{v}",
            f"  %all_{v} = and <16 x i1> %eqv_{v}, %m{v}",
            f"  %allb_{v} = bitcast <16 x i1> %all_{v} to i16",
            f"  %full_{v} = icmp eq i16 %allb_{v}, -1",
            f"  br i1 %full_{v}, label %fast{v}, label %slow{v}",
            f"fast{v}:",
            f"  %o64_{v} = sext i32 %o0_{v} to i64",
        ]
        fparts, sparts = [], []
        for t in range(4):
            L += [
                f"  %fq{v}_{t} = mul i64 %hw, {t}",
                f"  %fo{v}_{t} = add i64 %fq{v}_{t}, %o64_{v}",
                f"  %fp{v}_{t} = getelementptr i8, ptr %plane, i64 %fo{v}_{t}",
                f"  %fl{v}_{t} = call <16 x i8> @llvm.masked.load.v16i8.p0(ptr %fp{v}_{t}, i32 1, <16 x i1> "
                f"%cm{t}, <16 x i8> %zv)",
                f"  %fz{v}_{t} = zext <16 x i8> %fl{v}_{t} to {W}",
            ]
            fparts.append(_byte_at(L, f"%fz{v}_{t}", f"%fs{v}_{t}", t))
        _or4(L, f"%fval{v}", fparts)
        L += [f"  br label %join{v}", f"slow{v}:"]
        for t in range(4):
            L += [
                f"  %cq{v}_{t} = mul i64 %hw, {t}",
                f"  %cb{v}_{t} = getelementptr i8, ptr %plane, i64 %cq{v}_{t}",
                f"  %ps{v}_{t} = getelementptr i8, ptr %cb{v}_{t}, {W} %st{v}",
                f"  %gm{v}_{t} = and <16 x i1> %m{v}, %cm{t}",
                f"  %g{v}_{t} = call {W} @llvm.masked.gather.v16i32.v16p0(<16 x ptr> %ps{v}_{t}, i32 1, "
                f"<16 x i1> %gm{v}_{t}, {W} zeroinitializer)",
                f"  %gs{v}_{t} = lshr {W} %g{v}_{t}, %sh{v}",
                f"  %gb{v}_{t} = and {W} %gs{v}_{t}, <{', '.join(['i32 255'] * 16)}>",
                f"  %gz{v}_{t} = select <16 x i1> %cm{t}, {W} %gb{v}_{t}, {W} %zw",
            ]
            sparts.append(_byte_at(L, f"%gz{v}_{t}", f"%gp{v}_{t}", t))
        _or4(L, f"%o{v}", sparts)
        L += [
            f"  %sval{v} = select <16 x i1> %m{v}, {W} %o{v}, {W} %zb",
            f"  br label %join{v}",
            f"join{v}:",
            f"  %val{v} = phi {W} [ %fval{v}, %fast{v} ], [ %sval{v}, %slow{v} ]",
            f"  %po{v} = mul i64 %q, {nr}",
            f"  %pv{v} = add i64 %po{v}, {16 * v}",
            f"  %pp{v} = getelementptr i32, ptr %panel, i64 %pv{v}",
            f"  store {W} %val{v}, ptr %pp{v}, align 4",
        ]
    L += ["  %q1 = add i64 %q, 1", "  %more = icmp slt i64 %q1, %kq", "  br i1 %more, label %loop, label %done"]
    L += ["done:", "  ret void", "}"]
    return "\n".join(L)


def _splat(out: str, elem: str, value: str) -> list[str]:
    """``out`` = ``value`` (of type ``elem``: i32, i8 or i1) in all sixteen lanes."""
    vt = f"<16 x {elem}>"
    return [
        f"  {out}.i = insertelement {vt} poison, {elem} {value}, i64 0",
        f"  {out} = shufflevector {vt} {out}.i, {vt} poison, <16 x i32> zeroinitializer",
    ]


def _byte_at(L: list[str], b: str, out: str, t: int) -> str:
    """``b`` (bytes in the low 8 bits of each lane) moved to byte ``t`` of the lane."""
    if not t:
        return b
    L.append(f"  {out} = shl {V} {b}, <{', '.join([f'i32 {8 * t}'] * 16)}>")
    return out


def _or4(L: list[str], out: str, parts: list[str]) -> None:
    L += [
        f"  {out}.a = or {V} {parts[0]}, {parts[1]}",
        f"  {out}.b = or {V} {parts[2]}, {parts[3]}",
        f"  {out} = or {V} {out}.a, {out}.b",
    ]


@functools.cache
def igather_module(nr: int) -> str:
    decls = [
        f"declare {V} @llvm.smin.v16i32({V}, {V})",
        f"declare {V} @llvm.smax.v16i32({V}, {V})",
        f"declare {V} @llvm.masked.gather.v16i32.v16p0(<16 x ptr>, i32, <16 x i1>, {V})",
        "declare <16 x i8> @llvm.masked.load.v16i8.p0(ptr, i32, <16 x i1>, <16 x i8>)",
    ]
    return "\n".join(decls) + "\n\n" + igather_routine(nr) + "\n"


def emit_igather(fe: Any, s: Intrinsic) -> None:
    """Call the im2col panel gather (``igather_routine``), defining its library."""
    X, x_off, hw, w, h, ci, TAPS, PIX, pix_off, kq, PANEL, zp = s.args
    nr = next(w for w in PANEL_WIDTHS if igather_name(w) == s.name)
    sym = f"eqsat_igather_{nr}"
    fe.mod.libraries[sym] = igather_module(nr)
    fe.mod.define(sym, lambda: f"declare void @{sym}(ptr, i64, i64, i64, i64, ptr, ptr, i64, ptr, i64)")
    px, pt, pp, pn = (
        fe.pointer(X, x_off),
        fe.pointer(TAPS, IntImm(0)),
        fe.pointer(PIX, pix_off),
        fe.pointer(PANEL, IntImm(0)),
    )
    v = [fe.expr(e) for e in (hw, w, h, ci, kq, zp)]
    fe.emit(
        f"call void @{sym}(ptr {px}, i64 {v[0]}, i64 {v[1]}, i64 {v[2]}, i64 {v[3]}, ptr {pt}, ptr {pp}, "
        f"i64 {v[4]}, ptr {pn}, i64 {v[5]})"
    )


IGEMM_INTRINSICS: dict[str, Callable[[Any, Intrinsic], None]] = {
    igemm_name(IGEMM_MR, nr, k): emit_igemm for k in IGEMM_KINDS for nr in PANEL_WIDTHS
}
IGEMM_INTRINSICS.update({igather_name(nr): emit_igather for nr in PANEL_WIDTHS})
IGEMM_INTRINSICS.update({amx_conv_name(nr): emit_amx_conv for nr in PANEL_WIDTHS})
IGEMM_INTRINSICS.update({amx_mm_name(nr): emit_amx_mm for nr in PANEL_WIDTHS})

__all__ = [
    "IGEMM_INTRINSICS",
    "amx_conv_module",
    "amx_mm_module",
    "amx_tile_config",
    "emit_igemm",
    "has_amx",
    "has_vnni",
    "igemm_module",
]
