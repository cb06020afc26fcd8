"""The in-register transpose of a ``B`` x ``B`` tile of floats: what the blocked layout's conversions
(``to_blocked`` / ``from_blocked``, ``lower/ops_to_loops/blocked.py``) call per tile.

``eqsat_transpose_B(src, dst, ldd, rows, width)``: ``src`` is a ``B`` x ``B`` tile, row-major and contiguous
(the kernel's local copy); row ``k`` of its transpose (column ``k`` of ``src``) is stored at ``dst + k * ldd``
for ``k < rows``, its first ``width`` lanes (a masked store when ``width < B``).  ``B`` loads, ``B log2 B``
two-source shuffles (level ``d`` swaps bit ``d`` of the row index with bit ``d`` of the column index: rows
``i`` and ``i + d`` trade their off-diagonal ``d``-blocks; the levels commute, and all of them together are
the transpose), then the stores.

Lowered as copies, the conversions read (or wrote) one side 16 lanes at a time with a stride: a
``from_blocked`` of [1, 6, 112, 112, 16] ran 806 us, a ``to_blocked`` of [1, 96, 112, 112] 543 us, 3-5x a copy
of the same bytes.

    >>> "shufflevector" in transpose_module(16)
    True
"""

from __future__ import annotations

import functools
from typing import Any

from lower.ir import Intrinsic
from lower.ops_to_loops.blocked import TRANSPOSE_BLOCKS, transpose_name
from rewrite.ir.errors import CodegenError


def _mask(d: int, b: int, high: bool) -> str:
    """Level ``d``'s shuffle of rows ``i`` (first operand) and ``i + d`` (second): the new row ``i``
    (``high`` False) keeps its lanes with bit ``d`` clear and takes the partner's lanes ``j - d`` for the others;
    the new row ``i + d`` takes row ``i``'s lanes ``j + d`` and keeps its own."""
    lanes = []
    for j in range(b):
        if not high:
            lanes.append(j if not j & d else b + j - d)
        else:
            lanes.append(j + d if not j & d else b + j)
    return ", ".join(f"i32 {x}" for x in lanes)


def transpose_routine(b: int) -> str:
    V = f"<{b} x float>"
    sym = f"eqsat_transpose_{b}"
    L = [
        f"define void @{sym}(ptr noalias %src, ptr noalias %dst, i64 %ldd, i64 %rows, i64 %width) nounwind {{",
        "entry:",
    ]
    rows = []
    for i in range(b):
        L.append(f"  %sp{i} = getelementptr inbounds float, ptr %src, i64 {i * b}")
        L.append(f"  %r0.{i} = load {V}, ptr %sp{i}, align 4")
        rows.append(f"%r0.{i}")
    level = 0
    d = b // 2
    while d >= 1:
        level += 1
        new = list(rows)
        for i in range(b):
            if i & d:
                continue
            lo, hi = f"%r{level}.{i}", f"%r{level}.{i + d}"
            L.append(f"  {lo} = shufflevector {V} {rows[i]}, {V} {rows[i + d]}, <{b} x i32> <{_mask(d, b, False)}>")
            L.append(f"  {hi} = shufflevector {V} {rows[i]}, {V} {rows[i + d]}, <{b} x i32> <{_mask(d, b, True)}>")
            new[i], new[i + d] = lo, hi
        rows = new
        d //= 2
    iota = "<" + ", ".join(f"i64 {j}" for j in range(b)) + ">"
    L += [
        f"  %full.r = icmp eq i64 %rows, {b}",
        f"  %full.w = icmp eq i64 %width, {b}",
        "  %full = and i1 %full.r, %full.w",
        "  br i1 %full, label %whole, label %part",
        "whole:",
    ]
    for k in range(b):
        L.append(f"  %ow{k} = mul i64 %ldd, {k}")
        L.append(f"  %dw{k} = getelementptr inbounds float, ptr %dst, i64 %ow{k}")
        L.append(f"  store {V} {rows[k]}, ptr %dw{k}, align 4")
    L += [
        "  ret void",
        "part:",
        f"  %wi = insertelement <{b} x i64> poison, i64 %width, i64 0",
        f"  %ws = shufflevector <{b} x i64> %wi, <{b} x i64> poison, <{b} x i32> zeroinitializer",
        f"  %m = icmp ult <{b} x i64> {iota}, %ws",
        "  br label %p0",
    ]
    for k in range(b):
        L += [
            f"p{k}:",
            f"  %c{k} = icmp ult i64 {k}, %rows",
            f"  br i1 %c{k}, label %s{k}, label %done",
            f"s{k}:",
            f"  %op{k} = mul i64 %ldd, {k}",
            f"  %dp{k} = getelementptr inbounds float, ptr %dst, i64 %op{k}",
            f"  call void @llvm.masked.store.v{b}f32.p0({V} {rows[k]}, ptr %dp{k}, i32 4, <{b} x i1> %m)",
            f"  br label %{'p' + str(k + 1) if k + 1 < b else 'done'}",
        ]
    L += ["done:", "  ret void", "}"]
    return "\n".join(L)


@functools.cache
def transpose_module(b: int) -> str:
    decl = f"declare void @llvm.masked.store.v{b}f32.p0(<{b} x float>, ptr, i32, <{b} x i1>)"
    return decl + "\n\n" + transpose_routine(b) + "\n"


def emit_transpose(fe: Any, s: Intrinsic) -> None:
    """Call the tile transpose (``transpose_routine``), defining its library."""
    src, src_off, dst, dst_off, ldd, rows, width = s.args
    b = next((x for x in TRANSPOSE_BLOCKS if transpose_name(x) == s.name), None)
    if b is None:
        raise CodegenError(f"{s.name}: not a transpose this backend has")
    sym = f"eqsat_transpose_{b}"
    fe.mod.libraries[sym] = transpose_module(b)
    fe.mod.define(sym, lambda: f"declare void @{sym}(ptr, ptr, i64, i64, i64)")
    ps, pd = fe.pointer(src, src_off), fe.pointer(dst, dst_off)
    v = [fe.expr(e) for e in (ldd, rows, width)]
    fe.emit(f"call void @{sym}(ptr {ps}, ptr {pd}, i64 {v[0]}, i64 {v[1]}, i64 {v[2]})")


TRANSPOSE_INTRINSICS = {transpose_name(b): emit_transpose for b in TRANSPOSE_BLOCKS}
