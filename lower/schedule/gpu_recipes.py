"""The default GPU schedule: every top-level stage becomes one grid.

For each stage the longest prefix of its perfect loop nest whose iterations are independent is
fused into one loop, split by the block size, and bound: the outer part to blocks, the inner to
threads.  What stays inside (a contraction's ``k`` loop, a softmax row's passes, a pool's window)
runs serially in each thread.  Binding steps check legality themselves; a prefix they refuse is
shortened, down to none (then the stage runs on one thread).

    >>> gpu_recipe(Schedule(kernel), block=256)              # doctest: +SKIP
    >>> print(s)                                             # doctest: +SKIP
    fuse('i0', 'i1')
    split('i0.i1', 256)
    bindblocks('i0.i1.o')
    bindthreads('i0.i1.i')
"""

from __future__ import annotations

import math

from lower.ir import Bin, For, IntImm, Kernel, Stage, Stmt, Store, perfect_nest, top_stmts, walk_stmt
from lower.ops_to_loops import GemmInfo
from lower.schedule.gpu_steps import (
    WARP,
    WGMMA_TILE,
    BindBlocks,
    BindThreads,
    BlockRows,
    TileGemm,
    half_operands,
)
from lower.schedule.loop_steps import Fuse, Split, Step
from lower.schedule.record import Schedule
from rewrite import config
from rewrite.ir.errors import ScheduleError
from rewrite.ir.target import Target

BLOCK = 256  # threads per block for a map (one output element per thread)
BLOCK_HEAVY = 128  # for stages whose threads each run a loop (reductions, contractions): fewer registers per SM
ROW_MIN = 32  # a row stage whose column loops run at least this many iterations gets one block per row
ROW_THREADS = 256  # at most this many threads per row
FILL_BLOCKS = 2 * 132  # a tiled contraction with fewer blocks splits its reduction (two waves of an H100's SMs)
SPLIT_MIN_STEPS = 4  # ... into ranges of at least this many steps
LARGE_TILE_MIN_BLOCKS = 132  # TF32 contractions with this many 128 x 128 tiles use them (8 warps, 32 deep)
WGMMA_MIN_BLOCKS = (
    132  # ... and, on sm_90, with this many 256 x 128 tiles the wgmma tile (GEMM 4096^3: 84 -> 270 TFLOP/s)
)


def _root(s: Stmt) -> For | None:
    while isinstance(s, Stage):
        s = s.body
    return s if isinstance(s, For) else None


def _stage_loop(k: Kernel, idx: int) -> For:
    r = _root(top_stmts(k.body)[idx])
    if r is None:  # pragma: no cover - steps keep a stage's loop a loop
        raise ScheduleError(f"stage {idx} of {k.name} lost its loop")
    return r


def _bind_steps(k: Kernel, idx: int, names: list[str], block: int) -> tuple[list[Step], Kernel]:
    """Fuse ``names`` (a prefix of stage ``idx``'s nest), split by the block size, bind; raises ScheduleError."""
    steps: list[Step] = []
    for n in names[1:]:
        st: Step = Fuse(_stage_loop(k, idx).var.name, n)
        k = st.apply(k)
        steps.append(st)
    lp = _stage_loop(k, idx)
    fused = lp.var.name
    if not isinstance(lp.extent, IntImm) or lp.extent.value < 1:
        raise ScheduleError(f"loop {fused} has no constant extent")
    split = Split(fused, min(block, lp.extent.value))
    k = split.apply(k)
    outer = _stage_loop(k, idx)
    inner = outer.body
    assert isinstance(inner, For)
    for st in (split, BindBlocks(outer.var.name), BindThreads(inner.var.name)):
        if st is not split:
            k = st.apply(k)
        steps.append(st)
    return steps, k


WGMMA_ARCHS = frozenset({"sm_90"})  # compute capabilities with the ``wgmma`` tile (Hopper; PTX for sm_90a)


def gpu_schedule(
    kernel: Kernel, gemm: GemmInfo | None, const_names: set[str], target: Target, sched: Schedule | None = None
) -> Schedule:
    """The cuda kind's recipe (``TargetKind.recipe``): ``gpu_recipe`` in the target's precision, with the
    ``wgmma`` tile where its arch has one.  Constants need no packing on a GPU: ``const_names`` is unused.
    ``sched``: the empty schedule to fill (it asks no decisions yet: the GPU recipe is not tuned)."""
    s = sched if sched is not None else Schedule(kernel)
    gpu_recipe(s, gemm, target.precision, wgmma=target.arch in WGMMA_ARCHS)
    return s


def gpu_recipe(s: Schedule, gemm: GemmInfo | None = None, precision: str = "tf32", wgmma: bool = False) -> None:
    """Tile a contraction (``TileGemm``, fusing its init and epilogue stages), then bind every other
    top-level stage of ``s.kernel`` to a grid (see the module docstring).  ``wgmma``: the GPU is an
    sm_90, whose ``wgmma`` tile a big TF32 contraction with plain operands takes first."""
    if gemm is not None and not gemm.direct and wgmma and precision == "tf32":
        ext = _extents(s.kernel, gemm.stage)
        if ext and _blocks(s.kernel, gemm.stage, WGMMA_TILE[0], WGMMA_TILE[1]) >= WGMMA_MIN_BLOCKS:
            st = TileGemm(gemm.stage, gemm.init_stage, tuple(gemm.post), *WGMMA_TILE, precision, 1)
            try:
                s.kernel = st.apply(s.kernel)
                s.steps.append(st)
                gemm = None  # tiled: the stages are bound below like any other
            except ScheduleError as e:
                if config.DEBUG.flag():
                    print(f"wgmma tile refused for {s.kernel.name}: {e}")
    if gemm is not None and not gemm.direct:
        ext = _extents(s.kernel, gemm.stage)
        if precision == "tf32":  # operands that are float16 / bfloat16 values: their tensor cores, at twice the rate
            precision = _half_precision(s.kernel, gemm.stage) or precision
        big = (
            precision != "fp32"
            and bool(ext)
            and min(ext[-3], ext[-2]) >= 128  # both sides fill a 128 tile
            and _blocks(s.kernel, gemm.stage, 128, 128) >= LARGE_TILE_MIN_BLOCKS
        )
        bm, bn, bk = (128, 128, 32) if big else (64, 64, 16)
        splits = _splits(s.kernel, gemm.stage, bm, bn, bk)
        st = TileGemm(gemm.stage, gemm.init_stage, tuple(gemm.post), bm, bn, bk, precision, splits)
        try:
            s.kernel = st.apply(s.kernel)
            s.steps.append(st)
        except ScheduleError as e:
            if config.DEBUG.flag():
                print(f"tile_gemm refused for {s.kernel.name}: {e}")
    for idx, t in enumerate(top_stmts(s.kernel.body)):
        root = _root(t)
        if root is None:
            continue
        nest = perfect_nest(root)
        if _block_rows(s, idx, nest):
            continue
        inner_has_loops = any(isinstance(x, For) for x in walk_stmt(nest[-1].body))
        for p in range(len(nest), 0, -1):
            if any(not isinstance(lp.extent, IntImm) for lp in nest[:p]):
                continue
            heavy = p < len(nest) or inner_has_loops
            try:
                steps, k = _bind_steps(s.kernel, idx, [lp.var.name for lp in nest[:p]], BLOCK_HEAVY if heavy else BLOCK)
            except ScheduleError:
                continue
            s.kernel = k
            s.steps.extend(steps)
            break


def _nest(k: Kernel, stage: str) -> list[For]:
    """The perfect loop nest of the top-level stage named ``stage``; [] if there is none."""
    for t in top_stmts(k.body):
        if isinstance(t, Stage) and t.name == stage and isinstance(t.body, For):
            return perfect_nest(t.body)
    return []


def _extents(k: Kernel, stage: str) -> list[int]:
    """The loop extents (batch.., i, j, k) of a contraction stage; [] if it is not a constant nest."""
    ext = [lp.extent.value if isinstance(lp.extent, IntImm) else -1 for lp in _nest(k, stage)]
    return ext if len(ext) >= 3 and min(ext) > 0 else []


def _half_precision(k: Kernel, stage: str) -> str | None:
    """The half type both operands of a contraction stage hold (``gpu_steps.half_operands``), else None."""
    nest = _nest(k, stage)
    upd = nest[-1].body if nest else None
    if isinstance(upd, Store) and isinstance(upd.value, Bin) and isinstance(upd.value.b, Bin):
        return half_operands(upd.value.b.a, upd.value.b.b)
    return None


def _blocks(k: Kernel, stage: str, bm: int, bn: int) -> int:
    """Output tiles of ``bm`` x ``bn`` of a contraction stage (0 if it is not a constant nest)."""
    ext = _extents(k, stage)
    return math.prod(ext[:-3]) * math.ceil(ext[-3] / bm) * math.ceil(ext[-2] / bn) if ext else 0


def _splits(k: Kernel, stage: str, bm: int, bn: int, bk: int) -> int:
    """Split-K factor for a contraction stage (batch.., i, j, k): enough blocks to fill ``FILL_BLOCKS``,
    each split at least ``SPLIT_MIN_STEPS`` steps deep; 1 when the tiles alone fill the GPU."""
    ext, blocks = _extents(k, stage), _blocks(k, stage, bm, bn)
    if not ext or blocks >= FILL_BLOCKS:
        return 1
    return max(1, min(math.ceil(FILL_BLOCKS / blocks), math.ceil(ext[-1] / bk) // SPLIT_MIN_STEPS))


def _block_rows(s: Schedule, idx: int, nest: list[For]) -> bool:
    """One block per row for a stage whose perfect nest wraps column loops of ``ROW_MIN`` or more
    iterations (softmax, layernorm, row reductions): fuse the nest, ``BlockRows``; False if refused."""
    body = nest[-1].body
    cols = [lp for lp in walk_stmt(body) if isinstance(lp, For)]
    if isinstance(body, For) or not cols or any(not isinstance(lp.extent, IntImm) for lp in nest):
        return False
    widest = max((lp.extent.value if isinstance(lp.extent, IntImm) else 0) for lp in cols)
    if widest < ROW_MIN:
        return False
    threads = min(ROW_THREADS, WARP * -(-widest // WARP))
    k, steps = s.kernel, []
    try:
        for lp in nest[1:]:
            st: Step = Fuse(_stage_loop(k, idx).var.name, lp.var.name)
            k = st.apply(k)
            steps.append(st)
        st = BlockRows(_stage_loop(k, idx).var.name, threads)
        k = st.apply(k)
        steps.append(st)
    except ScheduleError as e:
        if config.DEBUG.flag():
            print(f"block_rows refused for {s.kernel.name}: {e}")
        return False
    s.kernel = k
    s.steps.extend(steps)
    return True


__all__ = ["BLOCK", "BLOCK_HEAVY", "FILL_BLOCKS", "ROW_MIN", "ROW_THREADS", "SPLIT_MIN_STEPS", "gpu_recipe"]
