"""The sm_90 (Hopper) GEMM grid of a 256 x 128 x 32 ``gemm_tile`` stage: ``wgmma`` from two warpgroups.

TF32 ``wgmma`` wants both shared-memory operands K-major, and ``B[k, j]`` is stored j-major, so the tile
computes ``C^T = B^T A^T``: the wgmma's A operand (64 columns of C x 8 of the reduction per warpgroup) comes
from registers, loaded from B's shared-memory tile; its B operand is A's tile itself (256 rows of C x 32 of
the reduction, K-major), read through a matrix descriptor with the 128-byte swizzle (16-byte chunk ``c``
of row ``r`` stored at chunk ``c ^ (r % 8)``: both the copies in and the fragment reads are free of bank
conflicts).  B's tile swizzles its 16-byte chunks by ``2 * (k % 4)`` for the same reason.

Per 32-deep step: ``cp.async`` copies (16 bytes; 4 when a base pointer is not 16-byte aligned; zero outside
the matrix) run ``PREFETCH`` steps ahead through ``STAGES`` buffers, each warpgroup issues four
``m64n256k8`` and keeps one step's group in flight while the next is staged.  The operands are not rounded
to TF32 (the tensor cores drop the low mantissa bits): within ``TF32_REL_TOL``.  A block computes a 256 x 128
tile of one batch index; each thread then runs, for each of its 128 elements, the fused init store,
``C[x] += acc`` and the fused epilogue, as the ``mma.sync`` tile does.

Where both operands' element offsets are affine (``ca * i + k + ra``, ``cb * k + j + rb``), each block decides
once whether its copies need checks: a tile wholly inside C with 16-byte aligned operands copies every chunk
unchecked, a fixed offset from one address per operand and step; edge tiles and misaligned operands (and all
blocks of other operands) run the checked pipeline.  The shared buffer is aligned by pointer arithmetic on the
shared array, so the fragment reads stay shared-memory loads.  Checked copies in every block and generic
fragment loads had cost ~290 instructions per warp and step against ~120 now: the issue slots, not L2 or
shared memory, held the tensor cores at 57% busy (``ncu`` on an H200).

GEMM 4096^3 on an H200: 327 TFLOP/s, 0.87 of cuBLAS TF32 (0.89 timed back to back; 253 and 0.68 with
checks everywhere; the 128 x 128 ``mma.sync`` tile: 84 on an H100).
Accumulator layout (``m64nNk8``, per warp ``w`` of a warpgroup, ``g = lane / 4``, ``t = lane % 4``):
``d[4 i + 2 h + c]`` is row ``16 w + g + 8 h`` (a column of C), column ``8 i + 2 t + c`` (a row of C).
"""

from __future__ import annotations

import math
from typing import Any

from lower.cuda.gemm_tile import RESERVED, owned_element, tile_origin, tile_parts
from lower.ir import F32, Bin, Expr, For, IntImm, Load, perfect_nest
from lower.ir.simplify import affine_in, flat_offset, simplify
from rewrite.ir.errors import CodegenError

BM, BN, BK = 256, 128, 32
THREADS = 256
STAGES, PREFETCH = 4, 2  # a step's group stays in flight, so a buffer is refilled two steps after its use
STAGE_FLOATS = BM * BK + BK * BN
SMEM_BYTES = STAGES * STAGE_FLOATS * 4 + 1024  # + alignment of the swizzled tiles to 1024 bytes
NACC = BM * BN // THREADS


def _linear(op: Load, row: str, col: str) -> tuple[int, Expr] | None:
    """``(c, rest)`` where ``op``'s element offset is ``c * row + col + rest`` (``rest`` free of both), else None."""
    got = affine_in(simplify(flat_offset(op.buf, op.idx)), {row, col})
    if got is None or got[0].get(col) != 1 or set(got[0]) - {row, col}:
        return None
    return got[0].get(row, 0), got[1]


def emit_wgmma_tile(fe: Any, nest_top: For) -> tuple[int, int, int]:
    """Emit the body of the ``__global__`` function; returns (grid, block, dynamic shared memory bytes)."""
    kname = fe.k.name
    full = perfect_nest(nest_top)
    ncoords = next(i + 1 for i, lp in enumerate(full) if not isinstance(lp.body, For))
    coords, kl, upd, pre, post = tile_parts(kname, nest_top, ncoords)
    ext = [lp.extent.value for lp in coords if isinstance(lp.extent, IntImm)]
    if len(coords) < 2 or len(ext) != len(coords) or not isinstance(kl.extent, IntImm):
        raise CodegenError(f"kernel {kname}: a wgmma tile needs constant (batch.., i, j) and k extents")
    M, N, K = ext[-2], ext[-1], kl.extent.value
    v = upd.value
    assert isinstance(v, Bin) and isinstance(v.b, Bin)
    a_e, b_e = v.b.a, v.b.b
    iv, jv, kv = coords[-2].var.name, coords[-1].var.name, kl.var.name
    if not isinstance(b_e, Load) or b_e.idx[-1] != coords[-1].var:
        a_e, b_e = b_e, a_e
    if not (isinstance(a_e, Load) and isinstance(b_e, Load)):  # the schedule step checked plain_operands
        raise CodegenError(f"kernel {kname}: a wgmma tile loads both operands")
    if a_e.buf.dtype != F32 or b_e.buf.dtype != F32 or upd.buf.dtype != F32:  # so did it: cp.async moves floats
        raise CodegenError(f"kernel {kname}: a wgmma tile copies float32 operands into float32 accumulators")
    mt, nt = math.ceil(M / BM), math.ceil(N / BN)
    grid = mt * nt * math.prod(ext[:-2])
    e = fe.emit
    fe.mod.need("wgmma_tf32")
    names = "smem load step run fast ar al base desc kt KT nb d s n k u ok kc nc As Bs aoff boff qa qb ga gb da db"
    fe.used_idents.update(RESERVED | set(names.split()))
    small = grid < 2**31 and all(math.prod(p.shape) < 2**31 for p in fe.k.params)
    ix = "int" if small else "long long"
    e("extern __shared__ float eqsat_smem_raw[];")
    # aligned by pointer arithmetic on the shared array, so the compiler keeps it in the shared window (LDS, not
    # generic loads, for the fragments)
    e("const unsigned eqsat_sb = (unsigned)__cvta_generic_to_shared(eqsat_smem_raw);")
    e("float* const smem = eqsat_smem_raw + ((((eqsat_sb + 1023u) & ~1023u) - eqsat_sb) >> 2);")
    e("const int tid = threadIdx.x, warp = (tid >> 5) & 3, lane = tid & 31, g = lane >> 2, t = lane & 3;")
    e(f"const int nb = (tid >> 7) * 64 + warp * 16;  // this warp's 16 columns of the {BN}-wide tile")
    e(f"{ix} bid = blockIdx.x;")
    tile_origin(fe, ix, coords, ext, (mt, nt), (BM, BN))
    i_id, j_id, k_id = fe.fresh(iv, ""), fe.fresh(jv, ""), fe.fresh(kv, "")

    def src(op: Load, row_var: str, row_id: str, row_n: int, col_var: str, col_id: str, col_n: int) -> str:
        """``&op[row, col]`` for the loop IR's index expressions, with the row and column bound."""
        fe.env[row_var], fe.ranges[row_var] = row_id, (0, row_n - 1)
        fe.env[col_var], fe.ranges[col_var] = col_id, (0, col_n - 1)
        out = "&" + fe.address(op.buf, op.idx)
        del fe.env[row_var], fe.env[col_var]
        return out

    pa, pb = fe.ptrs[a_e.buf.name], fe.ptrs[b_e.buf.name]
    e(f"const bool al = (((unsigned long long){pa} | (unsigned long long){pb}) & 15) == 0;")
    e(f"float d[{NACC}];")
    e("#pragma unroll")
    e(f"for (int q = 0; q < {NACC}; ++q) d[q] = 0.0f;")
    k_ragged = K % BK != 0  # only then can a copy run past the reduction inside a whole tile
    lin_a, lin_b = _linear(a_e, iv, kv), _linear(b_e, kv, jv)
    linear = lin_a is not None and lin_b is not None
    (ca, ra), (cb, rb) = lin_a or (0, IntImm(0)), lin_b or (0, IntImm(0))

    def copy(what: str, op: Load, row: tuple[str, str, int], col: tuple[str, str, int], inside: str) -> None:
        """One checked 16-byte chunk into ``q`` (zeros outside C; 4-byte copies when unaligned)."""
        e(f"const bool ok = {inside};")
        e(f"const float* p = ok ? {src(op, row[0], row[1], row[2], col[0], col[1], col[2])} : {what};")
        e("if (al) eqsat_cp16(q, p, ok); else for (int u = 0; u < 4; ++u) eqsat_cp4(q + u, p + u, ok);")

    if linear:
        # a block whose whole tile is inside C and whose operands are 16-byte aligned copies without checks
        e(f"const bool fast = al && m0 + {BM} <= {M} && n0 + {BN} <= {N};")
        # both operands affine (A: ca * i + k + ra, B: cb * k + j + rb): each thread's chunks are fixed offsets
        # from one address per operand and step, in global and in shared memory
        e(f"const {ix} aoff = {ca} * (m0 + (tid >> 3)) + (tid & 7) * 4 + ({fe.expr(ra)});")
        e(f"const {ix} boff = {cb} * (tid >> 5) + n0 + (tid & 31) * 4 + ({fe.expr(rb)});")
        e("float* const qa = smem + (tid >> 3) * 32 + (((tid & 7) ^ ((tid >> 3) & 7)) << 2);")
        e(f"float* const qb = smem + {BM * BK} + (tid >> 5) * {BN} + (((tid & 31) ^ (((tid >> 5) & 3) << 1)) << 2);")

    def unchecked_rows(dst: str, src_: str, base: str, n: int, strides: tuple[int, int], k: tuple[str, int]) -> None:
        """``n`` 16-byte chunks, chunk ``r`` at ``r * strides`` (shared, global) floats from ``dst`` / ``src_``;
        checked only against the reduction's end, where K is ragged: chunk ``r`` starts at reduction index
        ``k0 + k[0] + r * k[1]``."""
        e("#pragma unroll")
        e(f"for (int r = 0; r < {n}; ++r) {{")
        d, g = f"{dst} + r * {strides[0]}", f"{src_} + r * {strides[1]}"
        if k_ragged:
            e(f"  const bool ok = k0 + {k[0]}{f' + r * {k[1]}' if k[1] else ''} < {K};")
            e(f"  eqsat_cp16({d}, ok ? {g} : {base}, ok);")
        else:
            e(f"  eqsat_cp16({d}, {g}, true);")
        e("}")

    # the copy of step kt into buffer s: A's rows (m, 8 chunks of 4 k), B's rows (k, 32 chunks of 4 j)
    e("auto load = [&](int s, int kt, auto fast) {")
    fe.depth += 1
    e(f"float* As = smem + s * {STAGE_FLOATS}; float* Bs = As + {BM * BK};")
    e(f"const {ix} k0 = ({ix})kt * {BK};")
    if linear:
        e("if constexpr (decltype(fast)::value) {")
        fe.depth += 1
        e(f"const float* ga = {pa} + (aoff + k0);")
        e(f"const float* gb = {pb} + (boff + k0 * {cb});")
        e(f"float* da = qa + s * {STAGE_FLOATS}; float* db = qb + s * {STAGE_FLOATS};")
        # A: chunk r is 32 rows further, at the thread's k; B: chunk r is 8 reduction rows further
        a_rows, b_rows = THREADS // 8, THREADS // 32
        unchecked_rows("da", "ga", pa, BM * BK // 4 // THREADS, (a_rows * BK, a_rows * ca), ("(tid & 7) * 4", 0))
        unchecked_rows("db", "gb", pb, BK * BN // 4 // THREADS, (b_rows * BN, b_rows * cb), ("(tid >> 5)", b_rows))
        fe.depth -= 1
        e("} else {")
        fe.depth += 1
    e("#pragma unroll")
    e(f"for (int r = 0; r < {BM * BK // 4 // THREADS}; ++r) {{")
    fe.depth += 1
    e(f"const int c = tid + r * {THREADS}, mm = c >> 3, kc = c & 7;")
    e(f"const {ix} {i_id} = m0 + mm, {k_id} = k0 + kc * 4;")
    e("float* q = As + mm * 32 + ((kc ^ (mm & 7)) << 2);")
    copy(pa, a_e, (iv, i_id, M), (kv, k_id, K), f"{i_id} < {M} && {k_id} < {K}")
    fe.depth -= 1
    e("}")
    e("#pragma unroll")
    e(f"for (int r = 0; r < {BK * BN // 4 // THREADS}; ++r) {{")
    fe.depth += 1
    e(f"const int c = tid + r * {THREADS}, kk = c >> 5, nc = c & 31;")
    e(f"const {ix} {k_id} = k0 + kk, {j_id} = n0 + nc * 4;")
    e(f"float* q = Bs + kk * {BN} + ((nc ^ ((kk & 3) << 1)) << 2);")
    copy(pb, b_e, (kv, k_id, K), (jv, j_id, N), f"{k_id} < {K} && {j_id} < {N}")
    fe.depth -= 1
    e("}")
    if linear:
        fe.depth -= 1
        e("}")
    fe.depth -= 1
    e("};")
    ksteps = math.ceil(K / BK)
    e(f"const int KT = {ksteps};")
    # one step: wait for its copy, refill the buffer used two steps ago, its fragments of B, four wgmma
    e("unsigned ar[2][4][4];")
    e("auto step = [&](int kt, unsigned (&a)[4][4], auto fast) {")
    fe.depth += 1
    e(f'asm volatile("cp.async.wait_group {PREFETCH - 1};" ::: "memory");')
    e('asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the copies, seen by the tensor cores')
    e("__syncthreads();")
    e(f"if (kt + {PREFETCH} < KT) load((kt + {PREFETCH}) % {STAGES}, kt + {PREFETCH}, fast);")
    e('asm volatile("cp.async.commit_group;");')
    e(f"const float* As = smem + (kt % {STAGES}) * {STAGE_FLOATS}; const float* Bs = As + {BM * BK};")
    e("#pragma unroll")
    e("for (int s = 0; s < 4; ++s)")
    e("  #pragma unroll")
    e("  for (int h = 0; h < 2; ++h) {")
    e("    const int n = nb + g + 8 * h, nc = ((n >> 2) ^ (t << 1)) << 2, k = s * 8 + t;")
    e(f"    a[s][h] = __float_as_uint(Bs[k * {BN} + nc + (n & 3)]);")
    e(f"    a[s][h + 2] = __float_as_uint(Bs[(k + 4) * {BN} + nc + (n & 3)]);")
    e("  }")
    e("const unsigned base = (unsigned)__cvta_generic_to_shared(As);")
    e("#pragma unroll")
    e(f'for (int q = 0; q < {NACC}; ++q) asm volatile("" : "+f"(d[q]) :: "memory");')
    e('asm volatile("wgmma.fence.sync.aligned;" ::: "memory");')
    e("#pragma unroll")
    e("for (int s = 0; s < 4; ++s) {")
    e("  // K-major, 128-byte swizzle, 8-row groups 1024 bytes apart; each 8-deep slice 32 bytes further")
    e("  const unsigned long long desc = (unsigned long long)(((base + s * 32) & 0x3FFFF) >> 4)")
    e("      | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) | (1ull << 62);")
    e("  eqsat_wgmma256(d, a[s], desc);")
    e("}")
    e('asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");')
    e("#pragma unroll")
    e(f'for (int q = 0; q < {NACC}; ++q) asm volatile("" : "+f"(d[q]) :: "memory");')
    e('asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");')
    fe.depth -= 1
    e("};")
    # the whole pipeline, once per variant: the checks are decided per block, outside the k loop
    e("auto run = [&](auto fast) {")
    fe.depth += 1
    e("#pragma unroll")
    e(f"for (int s = 0; s < {PREFETCH}; ++s) {{")
    e("  if (s < KT) load(s, s, fast);")
    e('  asm volatile("cp.async.commit_group;");')
    e("}")
    e("int kt = 0;")
    e("#pragma unroll 1")
    e("for (; kt + 1 < KT; kt += 2) { step(kt, ar[0], fast); step(kt + 1, ar[1], fast); }")
    e("if (kt < KT) step(kt, ar[0], fast);")
    fe.depth -= 1
    e("};")
    e("if (fast) run(eqsat_bool<true>{}); else run(eqsat_bool<false>{});" if linear else "run(eqsat_bool<false>{});")
    e('asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");')
    # each owned element: fused init, C += acc, fused epilogue
    e("#pragma unroll")
    e(f"for (int q = 0; q < {NACC}; ++q) {{")
    e(f"  const {ix} {i_id} = m0 + 8 * (q >> 2) + 2 * t + (q & 1), {j_id} = n0 + nb + g + 8 * ((q >> 1) & 1);")
    owned_element(fe, (iv, i_id, M), (jv, j_id, N), pre, upd, post, "d[q]")
    return grid, THREADS, SMEM_BYTES


__all__ = ["SMEM_BYTES", "emit_wgmma_tile"]
