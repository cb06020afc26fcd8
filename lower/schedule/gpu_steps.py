"""GPU binding steps: ``BindBlocks`` (a stage's outermost loop -> the grid) and ``BindThreads``
(the loop directly inside it -> the threads of a block).

A GPU backend launches each top-level statement of a kernel (each stage) as its own grid, in order,
so that a stage may read everything the stages before it wrote.  Inside a stage, different blocks
and different threads run concurrently with no ordering, so both steps refuse unless every
iteration writes elements no other iteration touches (the same access-box check as ``Parallel``):

    before::                              after bind_blocks("i.o"), bind_threads("i.i")::
        stage relu3 {                         stage relu3 {
          for i.o in 0..64 {                    blocks for i.o in 0..64 {
            for i.i in 0..256 {                   threads for i.i in 0..256 {
              out[i.o * 256 + i.i] = ...            out[i.o * 256 + i.i] = ...

    >>> str(BindThreads("i.i"))
    "bindthreads('i.i')"
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from lower.ir import (
    F32,
    HALF_TYPES,
    Allocate,
    Bin,
    Buffer,
    Cast,
    Expr,
    FloatImm,
    For,
    IntImm,
    Intrinsic,
    Kernel,
    Load,
    LoopKind,
    Select,
    Seq,
    Stage,
    Stmt,
    Store,
    Var,
    bounds,
    enclosing,
    format_expr,
    free_vars,
    loads_of,
    perfect_nest,
    perfect_prefix,
    register_type,
    replace_loop,
    seq,
    substitute,
    top_stmts,
    unwrap_locals,
    walk_stmt,
)
from lower.schedule.checks import accesses, conflict, conflict_free, need_loop, sample_points
from lower.schedule.loop_steps import Step
from rewrite.ir.errors import ScheduleError

MAX_THREADS = 1024  # threads of one CUDA block


def _stage_root(s: Stmt) -> Stmt:
    while isinstance(s, Stage):
        s = s.body
    return s


def _check_independent(nest: list[For], var: str, same: tuple[str, ...], step: str) -> None:
    """Refuse unless iterations of loop ``var`` (with the loops named in ``same`` at equal values) write
    disjoint elements and read none another writes.  Points fix every loop of ``nest`` (the bound
    loop with its enclosing or enclosed one), so fused and split indices are exact at each point."""
    lp = nest[-1] if nest[-1].var.name == var else nest[0]
    if any(isinstance(s, Intrinsic) for s in walk_stmt(lp.body)):
        raise ScheduleError(f"{step}: cannot analyse the writes of an intrinsic; bind before tensorize")
    pts = sample_points(nest, {})
    acc = [accesses(nest[-1].body, p) for p in pts]
    for a, b in () if conflict_free(acc) else itertools.combinations(range(len(pts)), 2):
        pa, pb = pts[a], pts[b]
        if pa[var] == pb[var] or any(pa[n] != pb[n] for n in same):
            continue
        c = conflict(acc[a][0], acc[a][1], acc[b][0], acc[b][1])
        if c:
            raise ScheduleError(
                f"{step}: iterations {pa[var][0]} and {pb[var][0]} of {var} both touch the same elements of {c} "
                "(one of them writing); they cannot run concurrently"
            )


@dataclass(frozen=True)
class BindBlocks(Step):
    """Run a stage's outermost loop as the grid: one iteration per thread block.

    Refused for a loop that is not the outermost loop of a top-level statement, a non-constant
    extent, kernel-level scratch (one launch per stage cannot share it), or dependent iterations.
    """

    loop: str

    def apply(self, k: Kernel) -> Kernel:
        step = f"bind_blocks({self.loop!r})"
        lp = need_loop(k.body, self.loop, "bind_blocks")
        if not any(_stage_root(t) is lp for t in top_stmts(k.body)):
            raise ScheduleError(f"{step}: only the outermost loop of a top-level stage can be bound to the grid")
        if unwrap_locals(k.body)[0]:
            raise ScheduleError(f"{step}: the kernel has kernel-level scratch buffers, shared by all its stages")
        if not isinstance(lp.extent, IntImm) or lp.extent.value < 1:
            raise ScheduleError(f"{step}: extent {format_expr(lp.extent)} is not a positive constant")
        if lp.kind is not LoopKind.SERIAL:
            raise ScheduleError(f"{step}: loop {self.loop} is already {lp.kind.value}")
        nest = [lp, lp.body] if isinstance(lp.body, For) else [lp]
        _check_independent(nest, self.loop, (), step)
        return k.with_body(replace_loop(k.body, self.loop, lambda s: For(s.var, s.extent, s.body, LoopKind.BLOCKS)))


@dataclass(frozen=True)
class BindThreads(Step):
    """Run the loop directly inside a ``blocks`` loop on the threads of each block.

    Its extent may depend on the block loop (a split's tail) but needs a constant bound of at most
    1024 (the block size); iterations must be independent.
    """

    loop: str

    def apply(self, k: Kernel) -> Kernel:
        step = f"bind_threads({self.loop!r})"
        lp = need_loop(k.body, self.loop, "bind_threads")
        path = enclosing(k.body, lp) or []
        outer = path[-2] if len(path) >= 2 and isinstance(path[-2], For) else None
        if outer is None or outer.kind is not LoopKind.BLOCKS or outer.body is not lp:
            raise ScheduleError(f"{step}: the loop must be the whole body of a loop bound to blocks")
        b = bounds(lp.extent, {outer.var.name: (0, outer.extent.value - 1)} if isinstance(outer.extent, IntImm) else {})
        if b is None or b[1] > MAX_THREADS or b[1] < 1:
            raise ScheduleError(
                f"{step}: extent {format_expr(lp.extent)} needs a constant bound between 1 and {MAX_THREADS}"
            )
        if lp.kind is not LoopKind.SERIAL:
            raise ScheduleError(f"{step}: loop {self.loop} is already {lp.kind.value}")
        _check_independent([outer, lp], self.loop, (outer.var.name,), step)
        return k.with_body(replace_loop(k.body, self.loop, lambda s: For(s.var, s.extent, s.body, LoopKind.THREADS)))


# ------------------------------------------------------------ tiled GEMM (tensor cores / FMA tiles)
GEMM_TILE = "gemm_tile"  # the marker intrinsic heading a tiled contraction stage
# mma.sync m16n8k8 TF32 with FP32 accumulation; exact FP32 FMA tiles; mma.sync m16n8k16 on float16 / bfloat16
# operands (the loop IR's half types: operands that hold such values already, never rounded to them)
PRECISIONS = ("tf32", "fp32", "f16", "bf16")
# (bm, bn, bk) -> threads per block: 4 warps of 32 x 32, or (TF32 only) 8 warps of 64 x 32 for large grids
TILE_THREADS = {(64, 64, 16): 128, (128, 128, 32): 256, (256, 128, 32): 256}
WGMMA_TILE = (256, 128, 32)  # sm_90 only: wgmma.m64n256k8 (two warpgroups), operands staged by cp.async


def _top_stage(k: Kernel, name: str, step: str) -> tuple[int, Stage]:
    for idx, t in enumerate(top_stmts(k.body)):
        if isinstance(t, Stage) and t.name == name:
            return idx, t
    raise ScheduleError(f"{step}: no top-level stage named {name}")


def _map_nest(st: Stage, extents: list[int], coords: list[For], step: str) -> Stmt:
    """A stage that is a perfect nest over exactly ``extents`` around stores: its body in ``coords``' variables."""
    root = st.body
    if not isinstance(root, For):
        raise ScheduleError(f"{step}: stage {st.name} is not a loop nest")
    pp = perfect_prefix(root, len(extents))
    if pp is None:
        raise ScheduleError(f"{step}: stage {st.name} is not a perfect nest of {len(extents)} loops")
    nest, body = pp
    got = [lp.extent.value if isinstance(lp.extent, IntImm) else -1 for lp in nest]
    if got != extents or any(lp.kind is not LoopKind.SERIAL for lp in nest):
        raise ScheduleError(f"{step}: stage {st.name} has loops {got}, not the contraction's output {extents}")
    if not all(isinstance(s, Store) for s in walk_stmt(body) if not isinstance(s, Seq)):
        raise ScheduleError(f"{step}: stage {st.name} is not a map of stores")
    return substitute(body, {lp.var.name: c.var for lp, c in zip(nest, coords, strict=True)})


@dataclass(frozen=True)
class TileGemm(Step):
    """Run a contraction stage as one tiled GEMM grid, fusing its init stage and epilogue stages.

    before::                                   after tile_gemm('matmul2', 'matmul2.init', ('matmul2.epilogue',))::
        stage matmul2.init { for i, j: C[i, j] = bias[j] }     stage matmul2.tile {
        stage matmul2 { for i, j, k: C[i, j] += A[i, k] * B[k, j] }   gemm_tile(64, 64, 16, tf32)
        stage matmul2.epilogue { for i, j: C[i, j] = relu(C[i, j]) }  for i, j { C[i, j] = bias[j]
                                                                          for k { C[i, j] += A[i, k] * B[k, j] }
                                                                          C[i, j] = relu(C[i, j]) } }

    The loop nest under the marker is the exact meaning (init, update and epilogue of each output
    element run in that order by the thread owning it); the CUDA walker emits it as a grid of
    ``bm`` x ``bn`` output tiles per batch index, operands staged through shared memory ``bk`` deep,
    multiplied by ``mma.sync`` (``tf32``; ``f16``, ``bf16``: both operands are values of that half type,
    ``half_valued``) or FP32 FMAs (``fp32``).  Refused unless the stage is a
    perfect constant nest ``(batch.., i, j, k)`` around ``C[x] = C[x] + A * B`` with ``x`` free of
    ``k``, one operand free of ``j`` and the other free of ``i``; the fused stages are maps over the
    same output (the init one storing at ``x``) and no two output elements touch each other's data.

    ``splits > 1`` (split-K, for grids too small to fill the GPU): the reduction is cut into ``splits``
    ranges run by different blocks, which add their partial sums into ``C`` atomically (float additions
    in an order that varies from run to run).  The init and epilogue stages then stay separate grids,
    before and after the tile stage: an element's epilogue must see every partial sum.
    """

    stage: str
    init: str | None = None
    post: tuple[str, ...] = ()
    bm: int = 64
    bn: int = 64
    bk: int = 16
    precision: str = "tf32"
    splits: int = 1

    def apply(self, k: Kernel) -> Kernel:
        step = f"tile_gemm({self.stage!r})"
        if self.splits < 1:
            raise ScheduleError(f"{step}: splits must be at least 1, got {self.splits}")
        if self.precision not in PRECISIONS:
            raise ScheduleError(f"{step}: precision must be one of {PRECISIONS}, got {self.precision!r}")
        shape = (self.bm, self.bn, self.bk)
        if (
            shape not in TILE_THREADS
            or (self.precision == "fp32" and shape != (64, 64, 16))
            or (self.precision in HALF_TYPES and shape == WGMMA_TILE)
        ):
            raise ScheduleError(
                f"{step}: tiles are 64 x 64 x 16, or 128 x 128 x 32 (tf32, f16, bf16), or 256 x 128 x 32 (tf32), "
                f"got {self.bm} x {self.bn} x {self.bk} ({self.precision})"
            )
        if shape == WGMMA_TILE and self.splits != 1:
            raise ScheduleError(f"{step}: a 256 x 128 (wgmma) tile does not split its reduction")
        if unwrap_locals(k.body)[0]:
            raise ScheduleError(f"{step}: the kernel has kernel-level scratch buffers, shared by all its stages")
        idx, st = _top_stage(k, self.stage, step)
        if not isinstance(st.body, For):
            raise ScheduleError(f"{step}: stage {self.stage} is not a loop nest")
        nest = perfect_nest(st.body)
        if len(nest) < 3 or not isinstance(nest[-1].body, Store):
            raise ScheduleError(f"{step}: expected a perfect nest (batch.., i, j, k) around one store")
        if any(not isinstance(lp.extent, IntImm) or lp.kind is not LoopKind.SERIAL for lp in nest):
            raise ScheduleError(f"{step}: every loop must be serial with a constant extent")
        coords, kl, upd = nest[:-1], nest[-1], nest[-1].body
        assert isinstance(upd, Store)
        v = upd.value
        if not (
            isinstance(v, Bin)
            and v.op == "+"
            and isinstance(v.a, Load)
            and v.a.buf == upd.buf
            and v.a.idx == upd.idx
            and isinstance(v.b, Bin)
            and v.b.op == "*"
        ):
            raise ScheduleError(f"{step}: the store is not C[x] = C[x] + A * B: {format_expr(v)}")
        if upd.buf.dtype != F32:  # a tile sums in float registers; the loop IR rounds a half C at every step
            raise ScheduleError(f"{step}: the output {upd.buf.name} holds {upd.buf.dtype}, not f32")
        iv, jv, kv = coords[-2].var.name, coords[-1].var.name, kl.var.name
        if any(kv in free_vars(e) for e in upd.idx):
            raise ScheduleError(f"{step}: the output index depends on the reduction loop {kv}")
        fa, fb = free_vars(v.b.a), free_vars(v.b.b)
        if jv in fa and iv in fb:
            fa, fb = fb, fa
        if jv in fa or iv in fb:
            raise ScheduleError(f"{step}: one operand must be free of {jv} and the other free of {iv}")
        extents = [lp.extent.value for lp in coords if isinstance(lp.extent, IntImm)]
        kext = kl.extent.value if isinstance(kl.extent, IntImm) else 0
        if self.precision in HALF_TYPES:
            for what, e in (("A", v.b.a), ("B", v.b.b)):
                if half_valued(e) not in (self.precision, ""):
                    raise ScheduleError(
                        f"{step}: {self.precision} tensor cores would round operand {what} ({format_expr(e)}): "
                        f"it is not a {self.precision} value"
                    )
        if shape == WGMMA_TILE:
            a_e, b_e = (v.b.a, v.b.b) if jv not in free_vars(v.b.a) else (v.b.b, v.b.a)
            why = plain_operands(a_e, b_e, iv, jv, kv, kext, extents[-1])
            if why:
                raise ScheduleError(f"{step}: a 256 x 128 (wgmma) tile copies rows of its operands: {why}")
        if self.splits > max(1, -(-kext // self.bk)):
            raise ScheduleError(f"{step}: {self.splits} splits of a {kext}-long reduction in {self.bk}-deep steps")
        tops = top_stmts(k.body)
        pre: Stmt | None = None
        first, last, prev = idx, idx, self.stage
        if self.splits > 1:  # init and epilogue grids stay apart: only the update is tiled
            new = Stage(f"{self.stage}.tile", seq(self._marker(), st.body))
            _check_elements_independent(nest[: len(coords)], step)
            return k.with_body(seq(*tops[:idx], new, *tops[idx + 1 :]))
        if self.init is not None:
            i0, ini = _top_stage(k, self.init, step)
            if i0 != idx - 1:
                raise ScheduleError(f"{step}: init stage {self.init} must come directly before {self.stage}")
            pre = _map_nest(ini, extents, coords, step)
            if not isinstance(pre, Store) or pre.buf != upd.buf or pre.idx != upd.idx:
                raise ScheduleError(f"{step}: init stage {self.init} must store exactly the updated element")
            first = i0
        posts: list[Stmt] = []
        for name in self.post:
            i1, ps = _top_stage(k, name, step)
            if i1 != last + 1:
                raise ScheduleError(f"{step}: epilogue stage {name} must directly follow {prev}")
            posts.append(_map_nest(ps, extents, coords, step))
            last, prev = i1, name
        body = seq(pre, For(kl.var, kl.extent, upd), *posts)
        fused = body
        for lp in reversed(coords):
            fused = For(lp.var, lp.extent, fused)
        assert isinstance(fused, For)
        _check_elements_independent(perfect_nest(fused)[: len(coords)], step)
        new = Stage(f"{self.stage}.tile", seq(self._marker(), fused))
        return k.with_body(seq(*tops[:first], new, *tops[last + 1 :]))

    def _marker(self) -> Intrinsic:
        args = (self.bm, self.bn, self.bk, PRECISIONS.index(self.precision), self.splits)
        return Intrinsic(GEMM_TILE, tuple(IntImm(a) for a in args))


def half_valued(e: Expr) -> str | None:
    """The half type (``f16``, ``bf16``) every value of ``e`` is exactly, read from its form: a load of a buffer of
    that type (widened), a ``select`` between such values, a zero; "" for a zero alone (any type holds it); None
    when ``e`` may hold a float32 value no half type holds (anything computed)."""
    if isinstance(e, Cast) and e.to == F32:
        return half_valued(e.a)
    if isinstance(e, Load):
        return e.buf.dtype if e.buf.dtype in HALF_TYPES else None
    if isinstance(e, FloatImm):
        return "" if e.value == 0.0 else None
    if isinstance(e, Select):
        a, b = half_valued(e.a), half_valued(e.b)
        if a is None or b is None or (a and b and a != b):
            return None
        return a or b
    return None


def half_operands(a: Expr, b: Expr) -> str | None:
    """The half type both contraction operands hold (``half_valued``), or None: the precision of a tensor-core
    tile that rounds neither."""
    ha, hb = half_valued(a), half_valued(b)
    if ha is None or hb is None or (ha and hb and ha != hb) or not (ha or hb):
        return None
    return ha or hb


def plain_operands(a: Expr, b: Expr, iv: str, jv: str, kv: str, kext: int, n: int) -> str:
    """Why ``A[.., i, k]`` and ``B[.., k, j]`` cannot be copied to shared memory 16 bytes at a time (the
    wgmma tile's ``cp.async`` rows), or "" when they can: each a plain load whose last index is the
    reduction (A) or column (B) loop itself, contiguous there, every other stride and the offset a
    multiple of 4 elements, and the reduction and column extents multiples of 4.  The copies move float32
    bits as they are: an operand of a half type (float16, bfloat16) is refused (its elements would need widening
    on the way; the ``mma.sync`` tiles widen them as they stage them)."""
    for name, e, last, other in (("A", a, kv, jv), ("B", b, jv, iv)):
        if not isinstance(e, Load):
            return f"operand {name} is computed ({format_expr(e)}), not loaded"
        idx, buf = e.idx, e.buf
        if buf.dtype != F32:
            return f"{name} ({buf.name}) holds {buf.dtype}, not f32"
        if not idx or not (isinstance(idx[-1], Var) and idx[-1].name == last):
            return f"the last index of {name} ({format_expr(e)}) is not {last}"
        if any(last in free_vars(x) or other in free_vars(x) for x in idx[:-1]):
            return f"{name}'s other indices use {last} or {other}"
        st = buf.elem_strides
        if st[-1] != 1 or any(x % 4 for x in st[:-1]) or buf.offset % 4:
            return f"{name} ({buf.name}) is not in rows of 4-element multiples"
    if kext % 4 or n % 4:
        return f"the reduction ({kext}) or column ({n}) extent is not a multiple of 4"
    return ""


def _check_elements_independent(coords: list[For], step: str) -> None:
    """Refuse unless different output elements (points of ``coords``) never touch what another writes."""
    pts = sample_points(coords, {})
    acc = [accesses(coords[-1].body, p) for p in pts]
    for a, b in itertools.combinations(range(len(pts)), 2):
        c = conflict(acc[a][0], acc[a][1], acc[b][0], acc[b][1])
        if c:
            raise ScheduleError(
                f"{step}: output elements {pts[a]} and {pts[b]} both touch {c} (one writing); "
                "they cannot be computed by different threads"
            )


def tile_params(marker: Intrinsic) -> tuple[int, int, int, str, int]:
    """``(bm, bn, bk, precision, splits)`` of a ``gemm_tile`` marker."""
    vals = [a.value for a in marker.args if isinstance(a, IntImm)]
    if marker.name != GEMM_TILE or len(vals) != 5:
        raise ScheduleError(f"not a {GEMM_TILE} marker: {marker!r}")
    return vals[0], vals[1], vals[2], PRECISIONS[vals[3]], vals[4]


# ------------------------------------------------------------ one block per row (softmax, layernorm, row reductions)
BLOCK_ROWS = "block_rows"  # the marker intrinsic heading a block-per-row stage
REDUCE_OPS = ("+", "max", "min")  # reductions a block combines (warp shuffles, then one value per warp)
WARP = 32


@dataclass(frozen=True)
class RowPlan:
    """A block-per-row stage taken apart: the row loop, its scalar scratch, and its body statements."""

    row: For
    scalars: tuple[Buffer, ...]
    body: tuple[Stmt, ...]  # stores (run once per row) and column loops (run by the block's threads)


def reduction_of(s: Store, col: str) -> tuple[str, Expr] | None:
    """``(op, e)`` when ``s`` is ``acc[x] = op(acc[x], e)`` with ``x`` free of the column loop ``col``
    and ``e`` not reading ``acc``; else None."""
    v = s.value
    if not (isinstance(v, Bin) and v.op in REDUCE_OPS and isinstance(v.a, Load)):
        return None
    idx = tuple(IntImm(e) if isinstance(e, int) else e for e in s.idx)
    if v.a.buf != s.buf or v.a.idx != idx or any(col in free_vars(e) for e in idx):
        return None
    if any(ld.buf.name == s.buf.name for ld in loads_of(v.b)):
        return None
    return v.op, v.b


def row_plan(lp: For, step: str = "block_rows") -> RowPlan:
    """Check that ``lp``'s body is one row's work a block can share; raises ``ScheduleError``.

    The body (inside ``local`` scalars) is a sequence of stores and column loops; a column loop
    holds only stores, each either a reduction ``acc[x] = op(acc[x], e)`` (``op`` in + max min,
    ``x`` free of the column) or a store whose iterations are independent of the others'."""
    scalars: list[Buffer] = []
    body: Stmt = lp.body
    while isinstance(body, Allocate):
        if body.buf.size != 1:
            raise ScheduleError(f"{step}: row scratch {body.buf.name} has {body.buf.size} elements, not one")
        scalars.append(body.buf)
        body = body.body
    stmts = tuple(body.stmts) if isinstance(body, Seq) else (body,)
    cols = [s for s in stmts if isinstance(s, For)]
    if not cols:
        raise ScheduleError(f"{step}: the body of {lp.var.name} has no column loop to share among threads")
    local = {b.name for b in scalars}
    for s in stmts:
        if isinstance(s, Store):
            continue
        if not isinstance(s, For):
            raise ScheduleError(f"{step}: the row body holds a {type(s).__name__}; only stores and column loops")
        if s.kind is not LoopKind.SERIAL:
            raise ScheduleError(f"{step}: column loop {s.var.name} is already {s.kind.value}")
        inner = list(s.body.stmts) if isinstance(s.body, Seq) else [s.body]
        if not all(isinstance(x, Store) for x in inner):
            raise ScheduleError(f"{step}: column loop {s.var.name} holds more than stores")
        reduced: dict[str, str] = {}
        plain: list[Store] = []
        for x in inner:
            assert isinstance(x, Store)
            red = reduction_of(x, s.var.name)
            if red is not None:
                # a block reduces float partials: an integer accumulator would lose bits, and a half one is
                # rounded at every step by the loop IR (max and min round the same once or every step)
                if register_type(x.buf.dtype) != F32:
                    raise ScheduleError(f"{step}: {x.buf.name} ({x.buf.dtype}) is reduced; a block reduces floats")
                if red[0] == "+" and x.buf.dtype in HALF_TYPES:
                    raise ScheduleError(
                        f"{step}: {x.buf.name} ({x.buf.dtype}) sums column loop {s.var.name} rounding every term; "
                        "a block sums in float"
                    )
                if x.buf.name in reduced:
                    raise ScheduleError(f"{step}: {x.buf.name} is reduced twice in column loop {s.var.name}")
                reduced[x.buf.name] = red[0]
                plain.append(Store(Buffer("_read", (1,), scope="local"), (IntImm(0),), red[1]))
            elif x.buf.name in local:
                raise ScheduleError(
                    f"{step}: row scalar {x.buf.name} is assigned in column loop {s.var.name} but is not a reduction"
                )
            else:
                plain.append(x)
        for x in plain:
            hit = [ld.buf.name for ld in loads_of(x) if ld.buf.name in reduced]
            if hit or x.buf.name in reduced:
                name = (hit or [x.buf.name])[0]
                raise ScheduleError(f"{step}: column loop {s.var.name} uses {name} while reducing it")
        _check_independent([lp, For(s.var, s.extent, seq(*plain))], s.var.name, (lp.var.name,), step)
    return RowPlan(lp, tuple(scalars), stmts)


@dataclass(frozen=True)
class BlockRows(Step):
    """Run a stage's outermost loop (its rows) as the grid, each row's column loops shared by the
    ``threads`` of a block: iteration ``c`` by thread ``c % threads``, reductions combined by warp
    shuffles and one shared-memory value per warp, every thread then holding the row's result.

    before::                                         after block_rows('i0', 128)::
        stage softmax1 {                                stage softmax1 {
          for i0 in 0..64 {                               block_rows(128)
            local maxv: f32[1]                            blocks for i0 in 0..64 { ...unchanged... } }
            maxv[0] = -inf
            for j in 0..100 { maxv[0] = max(maxv[0], x[i0, j]) }
            ...

    Refused for a loop that is not a top-level stage's outermost, a non-constant extent, a thread
    count that is not a multiple of the warp size up to 1024, row scratch of more than one element,
    column loops holding anything but stores, a row scalar assigned in a column loop other than by a
    reduction, reading an accumulator while reducing it, an accumulator that is not a float (or a half one
    summed: the loop IR rounds it at every term), or dependent rows or column iterations.
    """

    loop: str
    threads: int = 128

    def apply(self, k: Kernel) -> Kernel:
        step = f"block_rows({self.loop!r})"
        if self.threads % WARP or not WARP <= self.threads <= MAX_THREADS:
            raise ScheduleError(f"{step}: {self.threads} threads is not a multiple of {WARP} up to {MAX_THREADS}")
        if unwrap_locals(k.body)[0]:
            raise ScheduleError(f"{step}: the kernel has kernel-level scratch buffers, shared by all its stages")
        lp = need_loop(k.body, self.loop, "block_rows")
        tops = top_stmts(k.body)
        idx = next((i for i, t in enumerate(tops) if isinstance(t, Stage) and _stage_root(t) is lp), None)
        if idx is None:
            raise ScheduleError(f"{step}: only the outermost loop of a top-level stage can be run one row per block")
        if not isinstance(lp.extent, IntImm) or lp.extent.value < 1:
            raise ScheduleError(f"{step}: extent {format_expr(lp.extent)} is not a positive constant")
        if lp.kind is not LoopKind.SERIAL:
            raise ScheduleError(f"{step}: loop {self.loop} is already {lp.kind.value}")
        row_plan(lp, step)
        _check_independent([lp], self.loop, (), step)
        st = tops[idx]
        assert isinstance(st, Stage)
        rows = For(lp.var, lp.extent, lp.body, LoopKind.BLOCKS)
        new = Stage(st.name, seq(Intrinsic(BLOCK_ROWS, (IntImm(self.threads),)), rows))
        return k.with_body(seq(*tops[:idx], new, *tops[idx + 1 :]))


def is_block_rows(s: Stmt) -> tuple[int, For] | None:
    """``(threads, row loop)`` when ``s`` is the body of a ``block_rows`` stage."""
    if isinstance(s, Seq) and len(s.stmts) == 2:
        m, n = s.stmts
        if isinstance(m, Intrinsic) and m.name == BLOCK_ROWS and isinstance(n, For) and isinstance(m.args[0], IntImm):
            return m.args[0].value, n
    return None


__all__ = [
    "BLOCK_ROWS",
    "GEMM_TILE",
    "MAX_THREADS",
    "PRECISIONS",
    "REDUCE_OPS",
    "TILE_THREADS",
    "WGMMA_TILE",
    "BindBlocks",
    "BindThreads",
    "BlockRows",
    "RowPlan",
    "TileGemm",
    "half_operands",
    "half_valued",
    "is_block_rows",
    "plain_operands",
    "reduction_of",
    "row_plan",
    "tile_params",
]
