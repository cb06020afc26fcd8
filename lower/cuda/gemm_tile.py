"""The tiled GEMM grid of a ``gemm_tile`` stage (``schedule.gpu_steps.TileGemm``).

One block of 128 threads (four warps, 2 x 2) computes a 64 x 64 output tile of one batch index; the
grid enumerates (batch.., tile row, tile column).  Per 16-deep step of the reduction, every thread
stages 8 elements of each operand into shared memory (zero outside the matrix; an operand is any
expression of the loop IR, so a convolution's im2col gather happens here: implicit GEMM), then

* ``tf32``: each warp multiplies its 32 x 32 sub-tile with ``mma.sync.m16n8k8`` (2 x 4 fragments,
  operands rounded to TF32 with ``cvt.rna``, FP32 accumulation), or
* ``f16``, ``bf16`` (both operands hold values of that type: ``gpu_steps.half_valued``): shared memory holds
  their 16 bits, B's tile transposed (``Bs[n][k]``) so that both operands' fragments are pairs of adjacent
  elements, one 32-bit load each; each warp multiplies with ``mma.sync.m16n8k16`` (2 x 4 or 4 x 4 fragments,
  FP32 accumulation; every product of two half values is exact in FP32, as in the ``tf32`` tile), or
* ``fp32``: each thread accumulates 8 rows x 4 columns (strided by 8 and 16) with FP32 FMAs.

Finally each thread runs, for each output element it owns, the fused init store, ``C[x] += acc``
and the fused epilogue stores (the loop nest under the marker, element by element).

Fragment layout of m16n8k8 (PTX ISA, per lane: ``g = lane / 4``, ``t = lane % 4``): A (16 x 8, row)
``a0 = (g, t)``, ``a1 = (g+8, t)``, ``a2 = (g, t+4)``, ``a3 = (g+8, t+4)``; B (8 x 8, col)
``b0 = (t, g)``, ``b1 = (t+4, g)``; C/D (16 x 8) ``c0 = (g, 2t)``, ``c1 = (g, 2t+1)``, ``c2 = (g+8, 2t)``,
``c3 = (g+8, 2t+1)``.  m16n8k16 (two 16-bit elements per register, the lower index in the lower half): A (16 x 16)
``a0 = (g, 2t..2t+1)``, ``a1 = (g+8, 2t..)``, ``a2 = (g, 2t+8..)``, ``a3 = (g+8, 2t+8..)``; B (16 x 8)
``b0 = (2t..2t+1, g)``, ``b1 = (2t+8..2t+9, g)``; C/D as m16n8k8's.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from lower.cuda.tables import NARROW
from lower.ir import F16, F32, HALF_TYPES, Bin, For, IntImm, Intrinsic, Seq, Stmt, Store, free_vars, perfect_nest
from lower.schedule.gpu_steps import TILE_THREADS, tile_params
from rewrite.ir.errors import CodegenError

APAD, BPAD = 4, 8  # shared-memory row padding (floats) against bank conflicts
# half tiles: rows of bk + HPAD 16-bit elements (12 or 20 words: the 8 rows x 4 words a fragment load reads fall
# in 32 different banks)
HPAD = 8
# the tile's own C names; IR loop variables get fresh ones around them
RESERVED = set("tid bid tn tm m0 n0 As Bs acc q k0 r el mm kk nn val warp lane g t wm wn k8".split())
RESERVED |= set("a b mi ni c ty tx av bv p f h c2 ks kb ke kn ra rb k16".split())


def tile_parts(k_name: str, nest_top: For, ncoords: int) -> tuple[list[For], For, Store, list[Stmt], list[Stmt]]:
    """The nest's (batch.., i, j) loops, its reduction loop and update, the fused stores before and after."""
    nest = perfect_nest(nest_top)[:ncoords]
    body = nest[-1].body
    stmts = list(body.stmts) if isinstance(body, Seq) else [body]
    ks = [i for i, s in enumerate(stmts) if isinstance(s, For)]
    if len(ks) != 1:
        raise CodegenError(f"kernel {k_name}: a gemm_tile nest needs exactly one reduction loop per element")
    kl = stmts[ks[0]]
    assert isinstance(kl, For)
    if not isinstance(kl.body, Store):
        raise CodegenError(f"kernel {k_name}: the reduction loop of a gemm_tile must hold one store")
    return nest, kl, kl.body, stmts[: ks[0]], stmts[ks[0] + 1 :]


def emit_gemm_tile(fe: Any, marker: Intrinsic, nest_top: For) -> tuple[int, int]:
    """Emit the body of the ``__global__`` function for a tiled contraction; returns (grid, block)."""
    kname = fe.k.name
    bm, bn, bk, precision, splits = tile_params(marker)
    full = perfect_nest(nest_top)
    # coordinates: the loops down to the one whose body holds the reduction loop
    # (split: the nest is exactly (batch.., i, j, k) around the update, with no fused stores)
    ncoords = len(full) - 1 if splits > 1 else next(i + 1 for i, lp in enumerate(full) if not isinstance(lp.body, For))
    coords, kl, upd, pre, post = tile_parts(kname, nest_top, ncoords)
    if len(coords) < 2 or any(not isinstance(lp.extent, IntImm) for lp in [*coords, kl]):
        raise CodegenError(f"kernel {kname}: a gemm_tile needs constant (batch.., i, j) and k extents")
    ext = [lp.extent.value for lp in coords if isinstance(lp.extent, IntImm)]
    M, N = ext[-2], ext[-1]
    K = kl.extent.value if isinstance(kl.extent, IntImm) else 0
    v = upd.value
    assert isinstance(v, Bin) and isinstance(v.b, Bin)
    a_e, b_e = v.b.a, v.b.b
    iv, jv = coords[-2].var.name, coords[-1].var.name
    if jv in free_vars(a_e) or iv in free_vars(b_e):
        a_e, b_e = b_e, a_e
    mt, nt = math.ceil(M / bm), math.ceil(N / bn)
    grid = mt * nt * math.prod(ext[:-2]) * splits
    kc = math.ceil(math.ceil(K / bk) / splits) * bk  # reduction range of one split, whole steps
    if splits > 1 and (pre or post):
        raise CodegenError(f"kernel {kname}: a split gemm_tile cannot fuse init or epilogue stores")
    threads = TILE_THREADS[(bm, bn, bk)]
    e = fe.emit
    half = precision in HALF_TYPES
    mma = precision != "fp32"
    if mma:
        fe.mod.need(f"{precision}_mma")
    if precision == "f16":
        fe.mod.need(F16)  # the bits of a float16 value: cvt.rn.f16.f32 (exact on such a value)
    fe.used_idents.update(RESERVED)

    # block -> (batch.., tile row, tile column)
    # 32-bit index arithmetic when every buffer has fewer than 2^31 elements (64-bit division is slow)
    small = grid < 2**31 and all(math.prod(p.shape) < 2**31 for p in fe.k.params)
    ix = "int" if small else "long long"
    e("const int tid = threadIdx.x;")
    e(f"{ix} bid = blockIdx.x;")
    if splits > 1:
        e(f"const {ix} ks = bid % {splits}; bid /= {splits};")
    tile_origin(fe, ix, coords, ext, (mt, nt), (bm, bn))
    if mma:
        # warps in a wr x wc grid, each multiplying a (16 mi_n) x (8 ni_n) sub-tile
        wc = 2 if threads == 128 else 4
        wr = threads // 32 // wc
        mi_n, ni_n = bm // wr // 16, bn // wc // 8
        e("const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;")
        e(f"const int wm = (warp / {wc}) * {bm // wr}, wn = (warp % {wc}) * {bn // wc};")
    else:
        e("const int ty = tid >> 4, tx = tid & 15;")
    if half:
        e(f"__shared__ __align__(16) unsigned short As[{bm}][{bk + HPAD}];")
        e(f"__shared__ __align__(16) unsigned short Bs[{bn}][{bk + HPAD}];")
    else:
        e(f"__shared__ float As[{bm}][{bk + APAD}];")
        e(f"__shared__ float Bs[{bk}][{bn + BPAD}];")
    nacc = bm * bn // threads
    e(f"float acc[{nacc}];")
    e("#pragma unroll")
    e(f"for (int q = 0; q < {nacc}; ++q) acc[q] = 0.0f;")
    i_id, j_id, k_id = fe.fresh(iv, ""), fe.fresh(jv, ""), fe.fresh(kl.var.name, "")
    per_a, per_b = bm * bk // threads, bk * bn // threads
    e(f"float ra[{per_a}], rb[{per_b}];")
    if splits > 1:
        e(f"const {ix} kb = ks * {kc}, ke = kb + {kc} < {K} ? kb + {kc} : {K};")
    else:
        e(f"const {ix} kb = 0, ke = {K};")

    def stage_loads(k_base: str) -> None:
        """Global -> registers for the step at ``k_base`` (zero outside the matrix)."""
        for regs, per, rows_of, expr_, row_var, row_n, rbase in (
            ("ra", per_a, bk, a_e, iv, M, "m0"),
            ("rb", per_b, bn, b_e, jv, N, "n0"),
        ):
            e("#pragma unroll")
            e(f"for (int r = 0; r < {per}; ++r) {{")
            fe.depth += 1
            e(f"const int el = tid + r * {threads};")
            if regs == "ra":  # As[mm][kk], k fastest
                e(f"const int mm = el / {rows_of}, kk = el % {rows_of};")
                e(f"const {ix} {i_id} = {rbase} + mm, {k_id} = {k_base} + kk;")
                rv_id = i_id
            else:  # Bs[kk][nn], n fastest
                e(f"const int kk = el / {rows_of}, nn = el % {rows_of};")
                e(f"const {ix} {j_id} = {rbase} + nn, {k_id} = {k_base} + kk;")
                rv_id = j_id
            e("float val = 0.0f;")
            e(f"if ({rv_id} < {row_n} && {k_id} < {K}) {{")
            fe.env[row_var], fe.ranges[row_var] = rv_id, (0, row_n - 1)
            fe.env[kl.var.name], fe.ranges[kl.var.name] = k_id, (0, K - 1)
            fe.depth += 1
            e(f"val = {fe.expr(expr_)};")
            fe.depth -= 1
            del fe.env[row_var], fe.env[kl.var.name]
            e("}")
            e(f"{regs}[r] = val;")
            fe.depth -= 1
            e("}")

    # software pipeline, one copy of each part: step kn's global loads are in flight while the
    # previous step (already in shared memory) multiplies; then kn's registers go to shared memory
    e("#pragma unroll 1")
    e(f"for ({ix} kn = kb; ; kn += {bk}) {{")
    fe.depth += 1
    e("if (kn < ke) {")
    fe.depth += 1
    stage_loads("kn")
    fe.depth -= 1
    e("}")
    e("if (kn > kb) {")
    fe.depth += 1
    if half:
        e("#pragma unroll")
        e(f"for (int k16 = 0; k16 < {bk}; k16 += 16) {{")
        e(f"  unsigned a[{mi_n}][4], b[{ni_n}][2];")
        e("  #pragma unroll")
        e(f"  for (int mi = 0; mi < {mi_n}; ++mi) {{")
        e("    const int r = wm + mi * 16 + g, kk = k16 + 2 * t;")
        e("    a[mi][0] = eqsat_ld2(&As[r][kk]); a[mi][1] = eqsat_ld2(&As[r + 8][kk]);")
        e("    a[mi][2] = eqsat_ld2(&As[r][kk + 8]); a[mi][3] = eqsat_ld2(&As[r + 8][kk + 8]);")
        e("  }")
        e("  #pragma unroll")
        e(f"  for (int ni = 0; ni < {ni_n}; ++ni) {{")
        e("    const int c = wn + ni * 8 + g, kk = k16 + 2 * t;")
        e("    b[ni][0] = eqsat_ld2(&Bs[c][kk]); b[ni][1] = eqsat_ld2(&Bs[c][kk + 8]);")
        e("  }")
        e("  #pragma unroll")
        e(f"  for (int mi = 0; mi < {mi_n}; ++mi)")
        e("    #pragma unroll")
        e(f"    for (int ni = 0; ni < {ni_n}; ++ni) eqsat_mma_{precision}(&acc[(mi * {ni_n} + ni) * 4], a[mi], b[ni]);")
        e("}")
    elif precision == "tf32":
        e("#pragma unroll")
        e(f"for (int k8 = 0; k8 < {bk}; k8 += 8) {{")
        # shared memory holds the operands already rounded to TF32 (rounded once, read by several warps)
        e(f"  unsigned a[{mi_n}][4], b[{ni_n}][2];")
        e("  #pragma unroll")
        e(f"  for (int mi = 0; mi < {mi_n}; ++mi) {{")
        e("    const int r = wm + mi * 16 + g;")
        e("    a[mi][0] = __float_as_uint(As[r][k8 + t]); a[mi][1] = __float_as_uint(As[r + 8][k8 + t]);")
        e("    a[mi][2] = __float_as_uint(As[r][k8 + t + 4]); a[mi][3] = __float_as_uint(As[r + 8][k8 + t + 4]);")
        e("  }")
        e("  #pragma unroll")
        e(f"  for (int ni = 0; ni < {ni_n}; ++ni) {{")
        e("    const int c = wn + ni * 8 + g;")
        e("    b[ni][0] = __float_as_uint(Bs[k8 + t][c]); b[ni][1] = __float_as_uint(Bs[k8 + t + 4][c]);")
        e("  }")
        e("  #pragma unroll")
        e(f"  for (int mi = 0; mi < {mi_n}; ++mi)")
        e("    #pragma unroll")
        e(f"    for (int ni = 0; ni < {ni_n}; ++ni) eqsat_mma_tf32(&acc[(mi * {ni_n} + ni) * 4], a[mi], b[ni]);")
        e("}")
    else:
        e("#pragma unroll")
        e(f"for (int kk = 0; kk < {bk}; ++kk) {{")
        e("  float av[8], bv[4];")
        e("  #pragma unroll")
        e("  for (int p = 0; p < 8; ++p) av[p] = As[ty + 8 * p][kk];")
        e("  #pragma unroll")
        e("  for (int p = 0; p < 4; ++p) bv[p] = Bs[kk][tx + 16 * p];")
        e("  #pragma unroll")
        e("  for (int p = 0; p < 8; ++p)")
        e("    #pragma unroll")
        e("    for (int q = 0; q < 4; ++q) acc[p * 4 + q] = fmaf(av[p], bv[q], acc[p * 4 + q]);")
        e("}")
    e("__syncthreads();")
    fe.depth -= 1
    e("}")
    e("if (kn >= ke) break;")
    # what shared memory holds of a staged value: TF32-rounded; a half value's 16 bits (exact: it is one); as is
    cell = {
        "tf32": "__uint_as_float(eqsat_tf32({}))",
        "bf16": "(unsigned short)(__float_as_uint({}) >> 16)",
        "f16": NARROW[F16] + "({})",
    }.get(precision, "{}")
    for what, per, cols, regs in (("As", per_a, bk, "ra"), ("Bs", per_b, bn, "rb")):
        # B's half tile is transposed: Bs[n][k]
        at = "[el % {c}][el / {c}]" if half and what == "Bs" else "[el / {c}][el % {c}]"
        e("#pragma unroll")
        e(f"for (int r = 0; r < {per}; ++r) {{")
        e(f"  const int el = tid + r * {threads}; {what}{at.format(c=cols)} = {cell.format(regs + '[r]')};")
        e("}")
    e("__syncthreads();")
    fe.depth -= 1
    e("}")

    # each owned element: fused init, C += acc, fused epilogue
    if mma:
        e("#pragma unroll")
        e(f"for (int q = 0; q < {nacc}; ++q) {{")
        e(f"  const int f = q >> 2, h = (q >> 1) & 1, c2 = q & 1, mi = f / {ni_n}, ni = f % {ni_n};")
        e(f"  const {ix} {i_id} = m0 + wm + mi * 16 + g + 8 * h, {j_id} = n0 + wn + ni * 8 + 2 * t + c2;")
    else:
        e("#pragma unroll")
        e(f"for (int q = 0; q < {nacc}; ++q) {{")
        e(f"  const {ix} {i_id} = m0 + ty + 8 * (q >> 2), {j_id} = n0 + tx + 16 * (q & 3);")
    owned_element(fe, (iv, i_id, M), (jv, j_id, N), pre, upd, post, "acc[q]", atomic=splits > 1)
    return grid, threads


def tile_origin(
    fe: Any, ix: str, coords: Sequence[For], ext: Sequence[int], tiles: tuple[int, int], block: tuple[int, int]
) -> None:
    """Emit the tile's place from what is left of ``bid``: its column and row tile (``tn``, ``tm``), then the
    batch coordinates (bound in ``fe.env``), and its first row and column ``m0``, ``n0``."""
    e = fe.emit
    (mt, nt), (bm, bn) = tiles, block
    e(f"const {ix} tn = bid % {nt}; bid /= {nt};")
    e(f"const {ix} tm = bid % {mt}; bid /= {mt};")
    for lp, n in reversed(list(zip(coords[:-2], ext[:-2], strict=True))):
        name = fe.fresh(lp.var.name, "")
        e(f"const {ix} {name} = bid % {n}; bid /= {n};")
        fe.env[lp.var.name], fe.ranges[lp.var.name] = name, (0, n - 1)
    e(f"const {ix} m0 = tm * {bm}, n0 = tn * {bn};")


def owned_element(
    fe: Any,
    row: tuple[str, str, int],
    col: tuple[str, str, int],
    pre: list[Stmt],
    upd: Store,
    post: list[Stmt],
    acc: str,
    atomic: bool = False,
) -> None:
    """Inside a tile's per-element loop (opened by the caller): for the element at (``row``, ``col``), each
    ``(IR loop var, C identifier, extent)``, when inside the matrix, the fused init, ``C[x] += acc`` (an atomic
    add for split reductions) and the fused epilogue; then closes the loop."""
    fe.depth += 1
    fe.emit(f"if ({row[1]} < {row[2]} && {col[1]} < {col[2]}) {{")
    for var, ident, n in (row, col):
        fe.env[var], fe.ranges[var] = ident, (0, n - 1)
    fe.depth += 1
    for s in pre:
        fe.stmt(s)
    if atomic and upd.buf.dtype != F32:  # TileGemm refuses a half C: the loop IR rounds it at every step
        raise CodegenError(
            f"kernel {fe.k.name}: a split gemm_tile adds into {upd.buf.name} ({upd.buf.dtype}) atomically"
        )
    if atomic:
        fe.emit(f"atomicAdd(&{fe.address(upd.buf, upd.idx)}, {acc});")
    else:
        fe.emit(fe.store(upd.buf, upd.idx, f"{fe.load(upd.buf, upd.idx)} + {acc}"))
    for s in post:
        fe.stmt(s)
    fe.depth -= 1
    fe.emit("}")
    fe.depth -= 1
    fe.emit("}")


def is_tile(s: Stmt) -> tuple[Intrinsic, For] | None:
    """``(marker, nest)`` when ``s`` is a ``gemm_tile`` stage body."""
    if isinstance(s, Seq) and len(s.stmts) == 2:
        m, n = s.stmts
        if isinstance(m, Intrinsic) and m.name == "gemm_tile" and isinstance(n, For):
            return m, n
    return None


__all__ = ["RESERVED", "emit_gemm_tile", "is_tile", "owned_element", "tile_parts"]
