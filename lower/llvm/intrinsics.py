"""Hand-written LLVM routines that ``tensorize`` maps loop nests onto.

Each entry of ``INTRINSICS`` takes the function emitter and the ``Intrinsic``
statement and emits a call (defining the routine in the module once).

``gemm_MRxNR``: ``C[m x n] += A[m x kc] * B[kc x NR]`` for ``m <= MR``,
``n <= NR``; A row-major with leading dimension ``lda`` (unit stride along k),
or, for ``gemmt_MRxNR``, column-major (unit stride along i, ``lda`` along k):
a packed A panel, whose MR values one k step broadcasts sit in one cache
line behind one pointer (row-major A needs MR pointers, and with a 4 KiB
row pitch its rows alias in L1); B a packed panel (``NR`` contiguous floats
per k, zero padded), or for ``gemmr`` / ``gemmtr`` a row-major operand read in
place (rows ``ldb`` apart, the last vector's loads masked to the n columns so
the last row never reads past its buffer); C row-major with ``ldc``.  The MR x NR accumulator
block lives in ``MR * NR / W`` vector registers of ``W`` lanes (the target's
vector width: 16, zmm, with AVX-512), starting from zero; each k step loads
NR/W vectors of B, broadcasts MR values of A and issues MR * NR / W FMAs;
after the loop the tile is added into C, whose lines were prefetched at
entry.  One specialised body per row count m and count of column vectors
holding the n columns (chosen by a switch: a tail panel of 4 columns issues
one vector of FMAs per row, not NR/W), and a lane mask for the last vector's
columns on the C loads/stores.  ``gemmt_MRxNR_pa`` / ``_pb`` / ``_pab`` also prefetch the operands
that stream from memory (weights packed at compile time: a run reads them once, cold) a fixed number of
k steps ahead (``Tensorize.stream``).

``gemms`` runs k in ``nseg`` segments of ``kc`` steps (A and B advancing ``aseg`` / ``bseg`` floats a segment,
the accumulators kept: a blocked input's channel blocks), ``q`` kinds store C's column vectors ``ldq``
apart (a blocked output's channel blocks), ``z`` kinds take a last argument ``beta``: 0 stores the tile
into C without reading it (the first k block of a product whose zero init was folded, ``FoldInit``), 1 adds.

A kernel compiles only the bodies its calls can reach: each body is a module of its own (``body_module``,
compiled once per process and target), and the switch over them is the kernel's own (``gemm_routine``), its
cases the (m, n) values the call's extents take over the enclosing loops' ranges
(``reached_parts``; a case ruled out traps).  The whole routine with its 16-28 bodies cost LLVM 0.27-0.31 s a
library: half of compiling full:mobilenet_v2 (2.28 of 4.69 s, nine libraries) and of full:bert (1.04 of
1.94 s); with the bodies reached, 0.46 s (30 bodies) and 0.10 s (6).

    >>> "@llvm.fma.v16f32(" in body_module(8, 32, 16, "gemm", "", 0, "m8_q2")
    True
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
from collections.abc import Callable
from typing import Any

from lower.ir import Expr, Intrinsic, bounds, free_vars
from lower.llvm.igemm import IGEMM_INTRINSICS
from lower.llvm.tables import DECLS, vector_decls
from lower.llvm.transpose import TRANSPOSE_INTRINSICS
from lower.schedule import STREAMS, micro_kernel_name, micro_kernel_parts
from rewrite.ir.errors import CodegenError

# Prefetch distances of streamed operands, in k steps ahead.  A packed A panel is MR floats a step (48 bytes
# at MR = 12): 64 steps are ~3 KiB, past a 4 KiB page's start more often than the hardware prefetcher
# (timed, weights cold: 64-256 alike, a 7x7 or 8x8 map's 3x3 conv 1.2x faster).  B is NR floats (two lines)
# a step: 16 steps are 2 KiB (bert's linears, weights cold: 16 faster than 32).
PREFETCH_A_STEPS = 64
PREFETCH_B_STEPS = 16


def _k_step(
    L: list[str], rows: int, nr: int, W: int, kind: str, h: int, stream: str, b: str = "%B", ar: str = "%ar"
) -> None:
    """One k step ``%k``: load the first ``h`` of B's NR/W vectors, broadcast ``rows`` values of A, FMA
    ``%acc{r}_{q}`` into ``%nacc{r}_{q}``; prefetch the streamed operands' step ``%k`` + their distance."""
    VF = f"<{W} x float>"
    strided = _b_in_place(kind)  # rows ldb apart, the last vector masked to the n columns
    L.append(f"  %bo = mul i64 %k, {'%ldb' if strided else nr}")
    for q in range(h):
        L.append(f"  %bo{q} = add i64 %bo, {q * W}")
        L.append(f"  %bp{q} = getelementptr float, ptr {b}, i64 %bo{q}")
        if strided and q == h - 1:
            L.append(
                f"  %b{q} = call {VF} @llvm.masked.load.v{W}f32.p0(ptr %bp{q}, i32 4, <{W} x i1> %mask{q}, "
                f"{VF} zeroinitializer)"
            )
        else:
            L.append(f"  %b{q} = load {VF}, ptr %bp{q}, align 4")
        if "b" in stream:  # each of B's vectors is one cache line; in place: the next panel's, same row
            L.append(f"  %bf{q} = getelementptr float, ptr %bp{q}, i64 {nr if strided else PREFETCH_B_STEPS * nr}")
            L.append(f"  call void @llvm.prefetch.p0(ptr %bf{q}, i32 0, i32 3, i32 1)")
    if _a_columns(kind):  # k step k starts k * lda floats in, its rows are adjacent
        L.append("  %ak = mul i64 %k, %lda")
        L.append("  %acol = getelementptr float, ptr %A, i64 %ak")
        if "a" in stream:  # MR floats a step: a line about every step (past the panel's end: the next panel's)
            L.append(f"  %akf = add i64 %k, {PREFETCH_A_STEPS}")
            L.append("  %aof = mul i64 %akf, %lda")
            L.append("  %af = getelementptr float, ptr %A, i64 %aof")
            L.append("  call void @llvm.prefetch.p0(ptr %af, i32 0, i32 3, i32 1)")
    for r in range(rows):
        if _a_columns(kind):
            L.append(f"  %ap{r} = getelementptr float, ptr %acol, i64 {r}")
        else:
            L.append(f"  %ap{r} = getelementptr float, ptr {ar}{r}, i64 %k")
        L.append(f"  %a{r} = load float, ptr %ap{r}, align 4")
        L.append(f"  %av{r} = insertelement {VF} poison, float %a{r}, i64 0")
        L.append(f"  %as{r} = shufflevector {VF} %av{r}, {VF} poison, <{W} x i32> zeroinitializer")
        for q in range(h):
            L.append(f"  %nacc{r}_{q} = call {VF} @llvm.fma.v{W}f32({VF} %as{r}, {VF} %b{q}, {VF} %acc{r}_{q})")


def _rows_body(mr: int, nr: int, rows: int, W: int, kind: str, h: int, stream: str, runs: int = 0) -> str:
    """The body for exactly ``rows`` rows and the first ``h`` of the NR/W vectors of columns (a tail panel
    of at most ``h * W`` columns skips the FMAs of the rest): accumulate from zero in registers over the k
    loop, then add the tile into C (whose lines were prefetched at entry, so the loop never waits on a C
    miss).  ``runs``: a ``q`` kind's run length, C's columns ``(j // runs) * ldq + j % runs`` (0: ``W``)."""
    VF = f"<{W} x float>"
    name = f"{routine_name(kind, mr, nr, stream, runs)}_m{rows}_q{h}"
    R = runs or W
    L = [
        f"define void @{name}(ptr noalias %A, i64 %lda, ptr noalias %B, {_ldb(kind)}ptr noalias %C, "
        f"i64 %ldc, i64 %kc, i64 %n{_extra(kind)}) nounwind {{",
        "entry:",
    ]
    L.append(f"  %nv = insertelement <{W} x i64> poison, i64 %n, i64 0")
    L.append(f"  %ns = shufflevector <{W} x i64> %nv, <{W} x i64> poison, <{W} x i32> zeroinitializer")
    for q in range(h):
        lanes = ", ".join(f"i64 {q * W + t}" for t in range(W))
        L.append(f"  %mask{q} = icmp slt <{W} x i64> <{lanes}>, %ns")
    tiles = [(r, q) for r in range(rows) for q in range(h)]
    for r in range(rows):
        if not _a_columns(kind):  # row r starts lda floats after row r - 1
            L.append(f"  %ro{r} = mul i64 %lda, {r}")
            L.append(f"  %ar{r} = getelementptr float, ptr %A, i64 %ro{r}")
        L.append(f"  %co{r} = mul i64 %ldc, {r}")
        for q in range(h):
            if _c_runs(kind):  # runs of R columns ldq floats apart (a blocked output's channel blocks)
                L.append(f"  %cq{r}_{q} = mul i64 %ldq, {q * W // R}")
                if q * W % R:  # a run longer than a vector (16-channel blocks in 8-lane AVX2 vectors)
                    L.append(f"  %cr{r}_{q} = add i64 %cq{r}_{q}, {q * W % R}")
                    L.append(f"  %cx{r}_{q} = add i64 %co{r}, %cr{r}_{q}")
                else:
                    L.append(f"  %cx{r}_{q} = add i64 %co{r}, %cq{r}_{q}")
            else:
                L.append(f"  %cx{r}_{q} = add i64 %co{r}, {q * W}")
            L.append(f"  %cp{r}_{q} = getelementptr float, ptr %C, i64 %cx{r}_{q}")
            # a C tile read before the loop stalled it on up to 2 * MR cache misses (prefetches never fault)
            L.append(f"  call void @llvm.prefetch.p0(ptr %cp{r}_{q}, i32 1, i32 3, i32 1)")
    L.append("  %any = icmp sgt i64 %kc, 0")
    if _segmented(kind):  # an outer loop over the k segments, the accumulators carried across them
        L.append("  %anys = icmp sgt i64 %nseg, 0")
        L.append("  %go = and i1 %any, %anys")
        L.append("  br i1 %go, label %seg, label %done")
        L.append("seg:")
        L.append("  %s = phi i64 [ 0, %entry ], [ %s1, %segend ]")
        for r, q in tiles:
            L.append(f"  %sacc{r}_{q} = phi {VF} [ zeroinitializer, %entry ], [ %nacc{r}_{q}, %segend ]")
        L.append("  %soa = mul i64 %s, %aseg")
        L.append("  %sob = mul i64 %s, %bseg")
        L.append("  %Bs = getelementptr float, ptr %B, i64 %sob")
        for r in range(rows):
            L.append(f"  %ars{r} = getelementptr float, ptr %ar{r}, i64 %soa")
        L.append("  br label %loop")
        first, last, b, ar = "%seg", "%segend", "%Bs", "%ars"
    else:
        L.append("  br i1 %any, label %loop, label %done")
        first, last, b, ar = "%entry", "%loop", "%B", "%ar"
    L.append("loop:")
    L.append(f"  %k = phi i64 [ 0, {first} ], [ %k1, %loop ]")
    for r, q in tiles:
        init = f"%sacc{r}_{q}" if _segmented(kind) else "zeroinitializer"
        L.append(f"  %acc{r}_{q} = phi {VF} [ {init}, {first} ], [ %nacc{r}_{q}, %loop ]")
    _k_step(L, rows, nr, W, kind, h, stream, b, ar)
    L.append("  %k1 = add nuw nsw i64 %k, 1")
    L.append("  %more = icmp slt i64 %k1, %kc")
    if _segmented(kind):
        L.append("  br i1 %more, label %loop, label %segend")
        L.append("segend:")
        L.append("  %s1 = add nuw nsw i64 %s, 1")
        L.append("  %smore = icmp slt i64 %s1, %nseg")
        L.append("  br i1 %smore, label %seg, label %done")
    else:
        L.append("  br i1 %more, label %loop, label %done")
    L.append("done:")
    for r, q in tiles:
        L.append(f"  %f{r}_{q} = phi {VF} [ zeroinitializer, %entry ], [ %nacc{r}_{q}, {last} ]")
    # Only the last column vector can be partial (h is n's vector count): the others are stored whole, and so
    # is the last one when n fills it.  A masked store is microcoded on AMD's Zen (VMASKMOVPS): with every
    # store of the tile masked, 1x1 convolutions with few input channels (short k: the stores weigh) ran
    # 2.5x slower (8->48 channels over 112x112: 0.535 ms, 0.213 ms with whole stores; 16->96 1.30 vs 0.63).
    L.append(f"  %full = icmp eq i64 %n, {h * W}")
    if _overwrites(kind):  # beta = 0: the tile is C (a folded zero init), nothing read
        L.append("  %keep = icmp ne i64 %beta, 0")
        L.append("  br i1 %keep, label %add, label %set")
        L.append("set:")
        L.append("  br i1 %full, label %set_w, label %set_m")
        for tag, whole in (("set_w", True), ("set_m", False)):
            L.append(f"{tag}:")
            for r, q in tiles:
                L.append(_store_c(W, f"%f{r}_{q}", f"%cp{r}_{q}", q, whole or q < h - 1))
            L.append("  ret void")
        L.append("add:")
    L.append("  br i1 %full, label %add_w, label %add_m")
    for tag, whole in (("add_w", True), ("add_m", False)):
        L.append(f"{tag}:")
        for r, q in tiles:
            plain = whole or q < h - 1
            if plain:
                L.append(f"  %c{r}_{q}{tag} = load {VF}, ptr %cp{r}_{q}, align 4")
            else:
                L.append(
                    f"  %c{r}_{q}{tag} = call {VF} @llvm.masked.load.v{W}f32.p0(ptr %cp{r}_{q}, i32 4, "
                    f"<{W} x i1> %mask{q}, {VF} zeroinitializer)"
                )
            L.append(f"  %s{r}_{q}{tag} = fadd {VF} %c{r}_{q}{tag}, %f{r}_{q}")
            L.append(_store_c(W, f"%s{r}_{q}{tag}", f"%cp{r}_{q}", q, plain))
        L.append("  ret void")
    L.append("}")
    return "\n".join(L)


def _store_c(W: int, value: str, ptr: str, q: int, whole: bool) -> str:
    """Store one column vector of the C tile: whole, or masked to the n columns (``%mask{q}``)."""
    VF = f"<{W} x float>"
    if whole:
        return f"  store {VF} {value}, ptr {ptr}, align 4"
    return f"  call void @llvm.masked.store.v{W}f32.p0({VF} {value}, ptr {ptr}, i32 4, <{W} x i1> %mask{q})"


# A last panel of at most this many columns past whole vectors is computed column by column (``_cols_body``):
# a vector over the tile's rows (one masked load of the packed A step) times each column's broadcast B value,
# 4 k steps in flight.  The row bodies issue a whole vector of FMAs per row for it (a 17x17 map's 289 pixels
# end in one column: half a tile's time for 1/32 of its work).
TAIL_COLS = 4
TAIL_UNROLL = 4  # k steps per iteration of the column body: independent accumulators (FMA latency)


def _tail_columns(kind: str, mr: int, width: int) -> bool:
    """Whether the micro-kernel of ``kind`` peels a last panel of at most ``TAIL_COLS`` columns off to
    ``_cols_body``: A column-major (a k step's rows are one vector), C plain (no segments, no column runs)."""
    return _a_columns(kind) and not _segmented(kind) and not _c_runs(kind) and mr <= width


def _cols_body(name: str, mr: int, nr: int, cols: int, W: int, kind: str) -> str:
    """``C[m x cols] += A[m x kc] * B[kc x cols]`` for ``m <= mr`` rows held in one vector: per k step one
    masked load of A's step (rows adjacent, ``lda`` apart per step), a broadcast of each column's B value and
    one FMA per column, ``TAIL_UNROLL`` steps an iteration into separate accumulators; the rows' sums are
    then added (or, ``z`` with ``beta`` 0, stored) into C one element at a time."""
    VF = f"<{W} x float>"
    U = TAIL_UNROLL
    bstep = "%ldb" if _b_in_place(kind) else str(nr)
    L = [
        f"define void @{name}(ptr noalias %A, i64 %lda, ptr noalias %B, {_ldb(kind)}ptr noalias %C, "
        f"i64 %ldc, i64 %kc, i64 %m{_extra(kind)}) nounwind {{",
        "entry:",
        f"  %mv = insertelement <{W} x i64> poison, i64 %m, i64 0",
        f"  %ms = shufflevector <{W} x i64> %mv, <{W} x i64> poison, <{W} x i32> zeroinitializer",
        f"  %amask = icmp slt <{W} x i64> <{', '.join(f'i64 {t}' for t in range(W))}>, %ms",
        f"  %kq = and i64 %kc, {-U}",
        "  %anyq = icmp sgt i64 %kq, 0",
        "  br i1 %anyq, label %loop, label %mid",
        "loop:",
        "  %k = phi i64 [ 0, %entry ], [ %k1, %loop ]",
    ]

    def step(L: list[str], k: str, tag: str, accs: list[str], out: list[str]) -> None:
        L.append(f"  %ao{tag} = mul i64 {k}, %lda")
        L.append(f"  %ap{tag} = getelementptr float, ptr %A, i64 %ao{tag}")
        L.append(
            f"  %a{tag} = call {VF} @llvm.masked.load.v{W}f32.p0(ptr %ap{tag}, i32 4, <{W} x i1> %amask, "
            f"{VF} zeroinitializer)"
        )
        L.append(f"  %bo{tag} = mul i64 {k}, {bstep}")
        for c in range(cols):
            L.append(f"  %bc{tag}_{c} = add i64 %bo{tag}, {c}")
            L.append(f"  %bp{tag}_{c} = getelementptr float, ptr %B, i64 %bc{tag}_{c}")
            L.append(f"  %b{tag}_{c} = load float, ptr %bp{tag}_{c}, align 4")
            L.append(f"  %bv{tag}_{c} = insertelement {VF} poison, float %b{tag}_{c}, i64 0")
            L.append(f"  %bs{tag}_{c} = shufflevector {VF} %bv{tag}_{c}, {VF} poison, <{W} x i32> zeroinitializer")
            L.append(f"  {out[c]} = call {VF} @llvm.fma.v{W}f32({VF} %a{tag}, {VF} %bs{tag}_{c}, {VF} {accs[c]})")

    for c in range(cols):
        for u in range(U):
            L.append(f"  %acc{c}_{u} = phi {VF} [ zeroinitializer, %entry ], [ %nacc{c}_{u}, %loop ]")
    for u in range(U):
        L.append(f"  %ku{u} = add i64 %k, {u}")
        step(L, f"%ku{u}", f"u{u}", [f"%acc{c}_{u}" for c in range(cols)], [f"%nacc{c}_{u}" for c in range(cols)])
    L += [f"  %k1 = add nuw nsw i64 %k, {U}", "  %more = icmp slt i64 %k1, %kq"]
    L.append("  br i1 %more, label %loop, label %mid")
    L.append("mid:")
    for c in range(cols):
        for u in range(U):
            L.append(f"  %q{c}_{u} = phi {VF} [ zeroinitializer, %entry ], [ %nacc{c}_{u}, %loop ]")
    for c in range(cols):  # the partial sums, in order; the last is %h{c}
        prev = f"%q{c}_0"
        for u in range(1, U):
            L.append(f"  %h{c}{'' if u == U - 1 else f'_{u}'} = fadd {VF} {prev}, %q{c}_{u}")
            prev = f"%h{c}_{u}"
    L += ["  %anyr = icmp slt i64 %kq, %kc", "  br i1 %anyr, label %rest, label %done", "rest:"]
    L.append("  %kr = phi i64 [ %kq, %mid ], [ %kr1, %rest ]")
    for c in range(cols):
        L.append(f"  %r{c} = phi {VF} [ %h{c}, %mid ], [ %nr{c}, %rest ]")
    step(L, "%kr", "r", [f"%r{c}" for c in range(cols)], [f"%nr{c}" for c in range(cols)])
    L += ["  %kr1 = add nuw nsw i64 %kr, 1", "  %rmore = icmp slt i64 %kr1, %kc"]
    L.append("  br i1 %rmore, label %rest, label %done")
    L.append("done:")
    for c in range(cols):
        L.append(f"  %f{c} = phi {VF} [ %h{c}, %mid ], [ %nr{c}, %rest ]")
    if _overwrites(kind):
        L.append("  %keep = icmp ne i64 %beta, 0")
    L.append("  br label %row0")
    for r in range(mr):
        nxt = f"%row{r + 1}" if r + 1 < mr else "%out"
        L += [f"row{r}:", f"  %in{r} = icmp slt i64 {r}, %m", f"  br i1 %in{r}, label %st{r}, label %out", f"st{r}:"]
        L.append(f"  %co{r} = mul i64 %ldc, {r}")
        for c in range(cols):
            L.append(f"  %cx{r}_{c} = add i64 %co{r}, {c}")
            L.append(f"  %cp{r}_{c} = getelementptr float, ptr %C, i64 %cx{r}_{c}")
            L.append(f"  %v{r}_{c} = extractelement {VF} %f{c}, i64 {r}")
            L.append(f"  %o{r}_{c} = load float, ptr %cp{r}_{c}, align 4")
            L.append(f"  %s{r}_{c} = fadd float %o{r}_{c}, %v{r}_{c}")
            val = f"%s{r}_{c}"
            if _overwrites(kind):
                L.append(f"  %w{r}_{c} = select i1 %keep, float %s{r}_{c}, float %v{r}_{c}")
                val = f"%w{r}_{c}"
            L.append(f"  store float {val}, ptr %cp{r}_{c}, align 4")
        L.append(f"  br label {nxt}")
    L += ["out:", "  ret void", "}"]
    return "\n".join(L)


def routine_name(kind: str, mr: int, nr: int, stream: str = "", runs: int = 0) -> str:
    """The micro-kernel's symbol: ``eqsat_`` and the name the tensorized nest calls (``micro_kernel_name``)."""
    return "eqsat_" + micro_kernel_name(kind, mr, nr, stream, runs)


def routine_parts(mr: int, nr: int, width: int, kind: str = "gemm") -> tuple[str, ...]:
    """Every specialised body of a micro-kernel, by its name's suffix: ``m{rows}_q{vectors}`` per row count and
    count of column vectors, and ``c{cols}`` per last panel of a few columns (``_tail_columns``)."""
    parts = [f"m{r}_q{h}" for r in range(1, mr + 1) for h in range(1, nr // width + 1)]
    if _tail_columns(kind, mr, width):
        parts += [f"c{c}" for c in range(1, TAIL_COLS + 1)]
    return tuple(parts)


def _body(mr: int, nr: int, width: int, kind: str, stream: str, runs: int, part: str) -> str:
    """The text of one body (``routine_parts``), a function named ``routine_name(..)_{part}``."""
    if part.startswith("c"):
        return _cols_body(f"{routine_name(kind, mr, nr, stream, runs)}_{part}", mr, nr, int(part[1:]), width, kind)
    rows, h = (int(x) for x in part[1:].split("_q"))
    return _rows_body(mr, nr, rows, width, kind, h, stream, runs)


def body_declarations(kind: str, name: str, parts: frozenset[str]) -> list[str]:
    """``declare`` lines of the bodies ``parts`` of routine ``name`` (a row body takes ``n``, a column body ``m``:
    one signature), and of ``llvm.trap`` (a dispatcher's unreached case)."""
    ldb = "i64, " if _b_in_place(kind) else ""
    extra = ", i64" * _extra(kind).count("i64")
    out = [f"declare void @{name}_{p}(ptr, i64, ptr, {ldb}ptr, i64, i64, i64{extra}) nounwind" for p in sorted(parts)]
    return [*out, DECLS["llvm.trap"]]


def _check_routine(mr: int, nr: int, width: int, kind: str, stream: str, runs: int) -> None:
    if width < 1 or nr % width:
        raise CodegenError(f"NR={nr} must be a multiple of the vector width {width}")
    if runs and (not _c_runs(kind) or runs % width or nr % runs):
        raise CodegenError(
            f"{kind}: C's columns in runs of {runs} need a q kind, whole {width}-lane vectors per run and "
            f"whole runs in NR={nr}"
        )
    if kind not in KINDS:
        raise CodegenError(f"no GEMM micro-kernel of kind {kind!r} (known: {', '.join(KINDS)})")
    if stream not in STREAMS:
        raise CodegenError(f"GEMM micro-kernel stream {stream!r} is not one of {STREAMS}")


def gemm_routine(
    mr: int, nr: int, width: int, kind: str, stream: str, runs: int, parts: frozenset[str], name: str
) -> str:
    """``NAME(A, lda, B, C, ldc, kc, m, n)``, internal to the calling kernel's module: a switch over (m, vectors
    of n) to the bodies ``parts`` (``routine_parts``: one per row count and column-vector count; a 14x14 image's
    196 pixels end in a panel of 4 columns, one vector of FMAs, not NR/W), each a module of its own
    (``body_module``) that the caller declares (``body_declarations``).  ``stream``: the operands the bodies
    prefetch ahead ("a", "b", "ab"; A only when packed, ``gemmt``).  ``runs``: a ``q`` kind's C columns come in
    runs of that many (0: one vector).  A call whose m and n reach no listed body traps; m or n of 0 does
    nothing."""
    _check_routine(mr, nr, width, kind, stream, runs)
    base = routine_name(kind, mr, nr, stream, runs)
    reach = set(parts)
    hs = range(1, nr // width + 1)
    bits = hs[-1].bit_length()  # the switch key is (m << bits) | vectors: room for every vector count
    whole = [(r, h) for r in range(1, mr + 1) for h in hs if f"m{r}_q{h}" in reach]
    cases = " ".join(f"i64 {(r << bits) | h}, label %m{r}_q{h}" for r, h in whole)
    L = [
        f"define internal void @{name}(ptr %A, i64 %lda, ptr %B, {_ldb(kind)}ptr %C, i64 %ldc, "
        f"i64 %kc, i64 %m, i64 %n{_extra(kind)}) nounwind {{",
        "entry:",
        "  %m0 = icmp sle i64 %m, 0",
        "  %n0 = icmp sle i64 %n, 0",
        "  %none = or i1 %m0, %n0",
        "  br i1 %none, label %out, label %some",
        "some:",
    ]
    args = f"ptr %A, i64 %lda, ptr %B, {_ldb(kind)}ptr %C, i64 %ldc, i64 %kc, i64 %m"
    extra_args = _extra(kind)
    if _tail_columns(kind, mr, width):  # n = whole vectors + 1..TAIL_COLS columns: those go column by column
        tails = [c for c in range(1, TAIL_COLS + 1) if f"c{c}" in reach]
        L += [
            f"  %rem = urem i64 %n, {width}",
            "  %rz = icmp ne i64 %rem, 0",
            f"  %rs = icmp ule i64 %rem, {TAIL_COLS}",
            "  %peel = and i1 %rz, %rs",
            "  br i1 %peel, label %split, label %whole",
            "split:",
            "  %nmain = sub i64 %n, %rem",
            "  %hasmain = icmp ne i64 %nmain, 0",
            "  br i1 %hasmain, label %main, label %tail",
            "main:",
            f"  call void @{name}({args}, i64 %nmain{extra_args})",
            "  br label %tail",
            "tail:",
            "  %bt = getelementptr float, ptr %B, i64 %nmain",
            "  %ct = getelementptr float, ptr %C, i64 %nmain",
            f"  switch i64 %rem, label %unreached [ {' '.join(f'i64 {c}, label %c{c}' for c in tails)} ]",
        ]
        for c in tails:
            L += [
                f"c{c}:",
                f"  call void @{base}_c{c}(ptr %A, i64 %lda, ptr %bt, {_ldb(kind)}ptr %ct, i64 %ldc, i64 %kc, "
                f"i64 %m{extra_args})",
                "  br label %out",
            ]
        L.append("whole:")
    L += [
        f"  %nw = add i64 %n, {width - 1}",
        f"  %nq = udiv i64 %nw, {width}",
        f"  %mk = shl i64 %m, {bits}",
        "  %key = or i64 %mk, %nq",
        f"  switch i64 %key, label %unreached [ {cases} ]",
    ]
    for r, h in whole:
        L += [
            f"m{r}_q{h}:",
            f"  call void @{base}_m{r}_q{h}(ptr %A, i64 %lda, ptr %B, {_ldb(kind)}ptr %C, i64 %ldc, "
            f"i64 %kc, i64 %n{_extra(kind)})",
            "  br label %out",
        ]
    # a count past the bodies (m > MR, n > NR) or one the caller's analysis ruled out: a loud stop, never a tile
    # silently left uncomputed
    L += ["unreached:", "  call void @llvm.trap()", "  unreachable", "out:", "  ret void", "}"]
    return "\n".join(L)


@functools.cache
def body_module(mr: int, nr: int, width: int, kind: str, stream: str, runs: int, part: str) -> str:
    """One body of the micro-kernel (``routine_parts``) as a stand-alone module exporting
    ``routine_name(..)_{part}``: a kernel's dispatcher (``gemm_routine`` with ``parts``) calls the bodies it can
    reach, and only those are compiled.  A whole library (16-28 bodies) cost LLVM 0.27-0.31 s; a GEMM over 128
    rows in tiles of 12 with whole column panels reaches two."""
    _check_routine(mr, nr, width, kind, stream, runs)
    if part not in routine_parts(mr, nr, width, kind):
        raise CodegenError(f"{routine_name(kind, mr, nr, stream, runs)} has no body {part!r}")
    decls = [*vector_decls(width).values(), DECLS["llvm.prefetch.p0"]]
    return "\n\n".join([*decls, _body(mr, nr, width, kind, stream, runs, part)]) + "\n"


def _values(e: Expr, ranges: dict[str, tuple[int, int]]) -> set[int] | None:
    """The values ``e`` can take with its variables in ``ranges``: each combination of their values evaluated
    where there are at most ``REACH_POINTS``, else its interval; None where unknown or wider than
    ``REACH_SPAN``."""
    names = sorted(free_vars(e))
    rs = [ranges[n] for n in names if n in ranges]
    if len(rs) == len(names) and math.prod([hi - lo + 1 for lo, hi in rs]) <= REACH_POINTS:
        out: set[int] = set()
        for point in itertools.product(*(range(lo, hi + 1) for lo, hi in rs)):
            b = bounds(e, dict(ranges, **{n: (v, v) for n, v in zip(names, point, strict=True)}))
            if b is None or b[1] - b[0] > REACH_SPAN:
                return None
            out.update(range(b[0], b[1] + 1))
        return out
    b = bounds(e, ranges)
    return None if b is None or b[1] - b[0] > REACH_SPAN else set(range(b[0], b[1] + 1))


REACH_POINTS = 256  # variable combinations a call's m and n are evaluated at, at most (else their interval)
REACH_SPAN = 64  # an interval wider than this reaches every body


def reached_parts(mr: int, nr: int, width: int, kind: str, ms: set[int] | None, ns: set[int] | None) -> frozenset[str]:
    """The bodies (``routine_parts``) a call with m in ``ms`` and n in ``ns`` runs (None: any value)."""
    every = routine_parts(mr, nr, width, kind)
    rows = range(1, mr + 1) if ms is None else sorted(v for v in ms if 1 <= v <= mr)
    if ns is None:  # every column count: each body of those rows, and each column body
        return frozenset(p for p in every if p.startswith("c") or int(p[1:].split("_q")[0]) in rows)
    vecs, tails = set(), set()
    for v in ns:
        if v <= 0:
            continue
        rem = v % width
        if _tail_columns(kind, mr, width) and 1 <= rem <= TAIL_COLS:
            tails.add(rem)
            if v - rem:
                vecs.add((v - rem) // width)
        else:
            vecs.add(-(-v // width))
    parts = {f"m{r}_q{h}" for r in rows for h in vecs} | {f"c{c}" for c in tails}
    return frozenset(p for p in every if p in parts)


# A kind is ``gemm`` and its flags: ``t`` A column-major (a packed panel), ``r`` B read in place, ``s`` k in
# segments, ``q`` C's column vectors ``ldq`` apart, ``z`` C overwritten when ``beta`` is 0
def _a_columns(kind: str) -> bool:
    """Whether A is column-major (``gemmt``: a packed panel, k steps lda apart), else row-major."""
    return "t" in kind[4:]


def _b_in_place(kind: str) -> bool:
    """Whether micro-kernels of ``kind`` read B in place, rows ``ldb`` apart (``gemmr``, ``gemmtr``)."""
    return "r" in kind[4:]


def _segmented(kind: str) -> bool:
    """Whether micro-kernels of ``kind`` run k in ``nseg`` segments of ``kc`` steps (``gemms``): A's rows
    restart ``aseg`` floats on, B ``bseg`` floats on, per segment, with the accumulators kept in registers
    (a blocked input's channel blocks, each a row-major [pixels, 16] plane)."""
    return "s" in kind[4:]


def _c_runs(kind: str) -> bool:
    """Whether C's column vectors are ``ldq`` floats apart (``q``: a blocked output, one channel block per
    vector), else adjacent."""
    return "q" in kind[4:]


def _overwrites(kind: str) -> bool:
    """Whether the kind takes ``beta`` (``z``): 0 stores the tile into C, 1 adds it (a folded zero init:
    ``FoldInit``)."""
    return "z" in kind[4:]


def _extra(kind: str) -> str:
    """The parameters after ``n``: the segments' (``s``), C's vector stride (``q``), then ``beta`` (``z``)."""
    return (
        (", i64 %nseg, i64 %aseg, i64 %bseg" if _segmented(kind) else "")
        + (", i64 %ldq" if _c_runs(kind) else "")
        + (", i64 %beta" if _overwrites(kind) else "")
    )


def _ldb(kind: str) -> str:
    """The B row-stride parameter of the kinds that read B in place, else nothing."""
    return "i64 %ldb, " if _b_in_place(kind) else ""


def emit_gemm(fe: Any, s: Intrinsic) -> None:
    """Call the micro-kernel (``fe`` is the codegen's ``FunctionEmitter``; its module knows the target)."""
    A, a_off, lda, B, b_off, ldb, C, c_off, ldc, kc, m, n, *segs = s.args
    kind, mr, nr, stream, runs = micro_kernel_parts(s.name)
    want = 3 * _segmented(kind) + _c_runs(kind) + _overwrites(kind)
    if len(segs) != want:
        raise CodegenError(f"{s.name}: {want} arguments after n, got {len(segs)}")
    beta = ""
    if shares_overwriting(kind):  # the kind's ``z`` twin with beta 1 adds the tile into C, as the kind does
        kind, beta = kind + "z", ", i64 1"
    sym = routine_name(kind, mr, nr, stream, runs)
    W = fe.mod.target.vector_width
    if not isinstance(m, Expr) or not isinstance(n, Expr):
        raise CodegenError(f"{s.name}: m and n must be expressions, got {m!r}, {n!r}")
    parts = reached_parts(mr, nr, W, kind, _values(m, fe.ranges), _values(n, fe.ranges))
    for p in parts:
        fe.mod.libraries[f"{sym}_{p}"] = body_module(mr, nr, W, kind, stream, runs, p)
    # the kernel's own dispatcher over the bodies this call reaches (named by them: calls alike share it)
    disp = f"{sym}.{hashlib.sha1(' '.join(sorted(parts)).encode()).hexdigest()[:10]}"
    for line in body_declarations(kind, sym, parts):
        fe.mod.define(line, lambda line=line: line)
    fe.mod.define(disp, lambda: gemm_routine(mr, nr, W, kind, stream, runs, parts, disp))
    pa, pb, pc = fe.pointer(A, a_off), fe.pointer(B, b_off), fe.pointer(C, c_off)
    vals = [fe.expr(x) for x in (lda, ldc, kc, m, n)]
    ldb_v = f"i64 {fe.expr(ldb)}, " if _b_in_place(kind) else ""
    seg_v = "".join(f", i64 {fe.expr(x)}" for x in segs)
    fe.emit(
        f"call void @{disp}(ptr {pa}, i64 {vals[0]}, ptr {pb}, {ldb_v}ptr {pc}, i64 {vals[1]}, "
        f"i64 {vals[2]}, i64 {vals[3]}, i64 {vals[4]}{seg_v}{beta})"
    )


def shares_overwriting(kind: str) -> bool:
    """Whether a call of ``kind`` runs its ``z`` twin's routine with ``beta`` 1 (the same arithmetic: one compare
    and branch after the k loop), so that a kernel and its neighbour calling the two kinds load one library.  A
    library (16 specialised bodies) cost LLVM 0.13-0.4 s: MobileNetV2's cold optimize compiled 11, five of them
    such twins, and a three-layer MLP's first ``torch.compile`` call 3 (``gemm_6x16_pb`` beside ``gemmz_6x16_pb``)."""
    return not _overwrites(kind) and kind + "z" in KINDS


# A row-major (unit stride along k) / column-major (unit stride along i); B a packed panel, or with the
# ``r`` kinds row-major in place (rows ldb apart); ``s``: A row-major in k segments; ``q``: C in runs of one
# vector; ``z``: C overwritten when beta is 0 (the flags above ``_a_columns``)
_KINDS = ("gemm", "gemmt", "gemmr", "gemmtr", "gemms", "gemmq", "gemmtq", "gemmsq")
KINDS = _KINDS + tuple(k + "z" for k in _KINDS if "s" not in k[4:])  # and each but ``s`` with beta

# every NR a recipe or a tuning candidate asks for: one to four vectors of 8 (AVX) or 16 (AVX-512) lanes
# (``gemm_recipe`` tries 1-3 of the target's); 8 and 24 were missing: every such candidate on an AVX host failed
MICRO_NRS = tuple(sorted({w * c for w in (8, 16) for c in (1, 2, 3, 4)}))

INTRINSICS: dict[str, Callable[[Any, Intrinsic], None]] = {
    **IGEMM_INTRINSICS,  # the quantized GEMM's (lower.llvm.igemm)
    **TRANSPOSE_INTRINSICS,  # the blocked layout's conversions (lower.llvm.transpose)
    **{
        micro_kernel_name(kind, mr, nr, st, runs): emit_gemm
        for kind in KINDS
        for mr in range(1, 17)
        for nr in MICRO_NRS
        for st in STREAMS
        # a q kind names its C's run length: a whole number of them per NR columns
        for runs in ([r for r in (4, 8, 16, 32, 48, 64) if nr % r == 0] if _c_runs(kind) else [0])
    },
}
