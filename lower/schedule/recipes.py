"""Default schedules per op group, chosen from shapes.

* **contraction** (batch-GEMM form, see ``ops_to_loops``), large enough:
  BLIS-style blocking — columns in blocks of NC (the parallel root, fused
  with the batch loops), K in blocks of KC, rows in blocks of MC, then
  NR-column panels and MR-row micro-tiles; B packed into NR-wide panels
  (once at compile time when it is a constant, else per (NC, KC) block on
  the stack, or with few rows read in place when row-major: a 1x1 conv's
  input), A packed per (MC, KC) block into k-major MR-row panels (the MR
  values a k step broadcasts are adjacent) unless it is row-major: then read
  in place, its rows as MR streams, but where their pitch would put them all
  in one L1 set (``A_ALIAS_PITCH_BYTES``); ``EQSAT_PACK_A=0`` never packs a
  row-major A; the MR x NR x KC nest is tensorized to the
  register-blocked micro-kernel.
  The init stage (zero or bias) and the fused epilogue are computed at the
  column-block loop, so each output block is produced, finished and
  post-processed while it is in cache; the init folded away first where it
  can be (``FoldInit``: the first k block stores, a bias goes to the epilogue).
* small contractions: loop order (batch, i, k, j) with j vectorized.
* direct convolutions: window unrolled, output width vectorized, (n, group)
  the parallel root.
* everything else (elementwise, layout, softmax / layernorm, pooling):
  ``lower.schedule.generic``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import random
from collections.abc import Hashable, Mapping, Set

from lower.ir import (
    F32,
    ITEM_BYTES,
    Bin,
    Call,
    Expr,
    For,
    IntImm,
    Kernel,
    Load,
    Stage,
    Var,
    affine_in,
    all_exprs,
    find_loop,
    find_stage,
    flat_offset,
    loads_of,
    root_loop,
    stores_of,
    walk_expr,
    walk_stmt,
)
from lower.ops_to_loops import GemmInfo
from lower.ops_to_loops.contraction import DIRECT_CONV_MAX_UNROLL
from lower.schedule.checks import need_loop
from lower.schedule.generic import (
    PAR_MIN_ELEMS,
    PAR_MIN_FLOPS,
    generic_recipe,
    stage_loops,
    try_fuse,
    vectorize_innermost,
)
from lower.schedule.record import Schedule
from rewrite import config
from rewrite.ir.errors import DecisionError, ScheduleError
from rewrite.ir.target import Target

GEMM_MIN_FLOPS = 1 << 16
B_BLOCK_BYTES = 1 << 20  # packed B of one (KC, NC) block on one thread: half this CPU's 2 MiB L2
# The output block (all rows x NC) on one thread when the reduction is one k block: its init, product and
# epilogue each pass over it, so it stays in L2 beside B.  A 3-channel 3x3 stride-2 convolution (27-long
# reductions, 12-22k pixels; 1 thread, interleaved) ran 1.16-1.18x faster with 1024-2048 columns than with
# the 9696 that B's size alone allows, a 64-channel 1x1 one over 56 x 56 pixels 1.18x; a 147-long one
# (ResNet's 7x7 stem) the same.  Only with few rows (``PANEL_OUTER_MAX_M``): 512 rows over 784 columns ran
# 1.07x slower with 128 columns (each column block re-reads A).
C_BLOCK_BYTES = 1 << 18
# The 2-thread split model's constants, in flops of micro-kernel time (``_split_time``), fitted to forced splits of
# 28 GEMMs and convolutions (benchmark models' layers and others: 24 to 2048 rows, 49 to 3136 columns; every
# split of up to 8 x 8 blocks, 2 threads, timed interleaved after a 16 MiB pass that evicts the weights, as
# in a model): the picks ran 1.010x slower than each case's best split (leave-one-out 1.012x), the model
# before them 1.063x.  A constant operand's element comes from memory (a model's weights are not in cache),
# a computed one's is gathered and packed from cache; the tail is a share of one block (a shared machine's
# threads do not finish together).
CONST_ELEM_FLOPS = 192  # one element of an operand packed at compile time, read from memory
PACK_ELEM_FLOPS = 96  # one element of an operand packed at run time, per block that packs it
TAIL_BLOCKS = 0.1  # the mean block's time added for the threads finishing apart
SIM_MAX_BLOCKS = 64  # more blocks than this are not simulated one by one: the last round is taken as half a block
A_BLOCK_BYTES = 1 << 20  # the most packed A of one (MC, KC) block on the stack when row blocks are split
# At most this many rows, the column panels of B are the outer micro-tile loop (each stays in L1 while every
# row tile's A panel streams past), else the row tiles are (A's panel stays, B's panels stream from L2).
# Timed at 1 thread, interleaved: 32/64/96/128 x 1024..3072 with constant B 2-8% faster panels-outer, a
# 64-channel 3x3 conv 4%; 512 and 1024 rows 2-5% slower.
PANEL_OUTER_MAX_M = 128
# The copies a GEMM's stage fills beside it (``ops_to_loops.contraction``): a row's slice, a block's padded
# slice and its im2col matrix; vectorized innermost like the panel copies.
SLICE_COPIES = (".row", ".pad", ".col")
# With few rows and a constant B (x @ W: RNN steps, batch-1 transformers), B is streamed from memory once and
# A's panel is small: the whole reduction in one k block makes that stream one sequential pass and keeps C in
# registers, up to this many k.  Timed at 1 thread, interleaved, 36 (or 8) weights too big for cache:
# 1x512x1024 1.30x, 1x1024x1024 1.38x, 1x4096x1024 1.35x, 16x512x1024 1.15x, 64x2048x1024 1.08x,
# 128x768x768 1.02x faster (2 threads: 1x512x1024 1.20x, 1x1024x1024 1.28x).  Only while the packed A
# block (MC x k) fits A_BLOCK_BYTES on the stack.
ONE_K_BLOCK_MAX_K = 4096
STREAM_A_MAX_PANELS = 8  # a constant A is prefetched when at most this many NR-column panels use each tile
# A row-major A (an activation: a linear layer's input) is read in place by the micro-kernel, its MR rows as
# MR streams, unless their pitch is a multiple of this: then every row maps to one L1 set (64 sets of 64-byte
# lines) and MR rows outnumber its ways; such an A is packed into k-major panels first.  Timed per kernel
# (lower.tune's harness, interleaved), read in place against packed: at 1 thread 3136x192x48 1.48x,
# 784x384x96 1.39x, 1024x256x64 1.47x, 196x768x192 1.10x, 128x768x768 1.08x, 197x768x3072 1.03x,
# 196x192x768 0.96x; with K a multiple of 1024 0.80x (256x1024x1024), 0.91x (128x3072x768), 0.90x
# (197x3072x768).  At 2 threads read in place 1.02-1.80x faster on all but those three (0.73-0.93x).
A_ALIAS_PITCH_BYTES = 4096
# Those timings had B a constant, packed once and streamed from memory.  Where B is an activation copied into
# a KC x NR panel on the stack per block (an activation times an activation: attention's two products), A
# read in place ran slower than packed (tune harness, interleaved, AMD Zen 5 with AVX-512, 1 thread; in place
# over packed): attention's Q K^T / P V at sequence 128 (12 heads of 64) 1.27x / 1.08x, 197 (6 heads)
# 1.48x / 1.33x, 384 1.65x / 1.26x; 256^3 1.57x, 512^3 1.72x; 1.11-1.76x at 2 threads; over a grid of
# M x K x N^T (M 48-256, K 32-256, N 64-256) 1.02-1.68x in 58 of the 60 shapes with 12-row micro-tiles
# (0.90x, 0.99x the others), but 0.90-1.11x with 8-row tiles (M = 64: 9 of 12 under 1.0) -- MR streams of A
# beside the panel's.  So there A is packed too, with tiles of more than this many rows (the tuner may flip
# either).
IN_PLACE_A_MAX_MR = 8
SHORT_TILE = 8  # the fallback micro-tile height when the target's MR leaves a mostly empty last tile
# Other micro-tile heights a tuner may try, with at most this many vector accumulators (of the 32 registers:
# B's vectors and A's broadcast need the rest).
MICRO_ROWS = (4, 6, 8, 12, 14)
MICRO_ACCUMULATORS = 28
SHORT_TILE_SPEED = 0.95  # its measured speed relative to the target's tile on full tiles (12 x 32 vs 8 x 32)


def schedule_kernel(
    kernel: Kernel,
    gemm: GemmInfo | None,
    const_names: set[str],
    target: Target,
    fixed: Mapping[str, Hashable] | None = None,
    rng: random.Random | None = None,
) -> Schedule | None:
    """Pick and apply the default schedule for ``target``: its kind's recipe (``TargetKind.recipe``,
    ``recipe(kernel, gemm, const_names, target, sched) -> Schedule``: ``cpu_recipe`` below,
    ``gpu_recipes.gpu_schedule``); None when ``EQSAT_NO_SCHEDULE`` is set.  The recipe's decisions
    (``Schedule.decide``) take their defaults, or the values ``fixed`` names, or with ``rng`` random ones
    (a tuning candidate: ``lower.tune``).

    ``gemm`` describes the loops of a contraction kernel (None for other kernels), ``const_names`` the
    buffers whose contents are known at compile time (a constant B is packed once).

        >>> schedule_kernel(kernel, None, set(), parse_target("llvm")).steps    # doctest: +SKIP
        [Fuse(outer='i0', inner='i1'), Vectorize(loop='i0.i1')]
    """
    if config.NO_SCHEDULE.flag():
        return None
    sched = Schedule(kernel, fixed=dict(fixed or {}), rng=rng)
    return target.kind_info.load_recipe()(kernel, gemm, const_names, target, sched)


def cpu_recipe(
    kernel: Kernel, gemm: GemmInfo | None, const_names: set[str], target: Target, sched: Schedule | None = None
) -> Schedule:
    """A CPU's schedule (the llvm kind's recipe): a direct convolution's, a blocked GEMM (a small
    contraction's loop order where the GEMM recipe refuses), or the generic one.  ``sched``: the empty
    schedule to fill (its decisions asked for), a fresh one by default."""
    sched = sched if sched is not None else Schedule(kernel)
    if gemm is not None and gemm.direct:
        direct_conv_recipe(sched, gemm, target.threads, target.vector_width)
    elif gemm is not None:
        try:
            gemm_recipe(sched, gemm, const_names, target)
        except DecisionError:
            raise  # a candidate asking for a value that is not legal here: refused, not a fallback
        except ScheduleError as e:
            if config.DEBUG.flag():
                print(f"gemm recipe refused for {kernel.name}: {e}")
            sched = sched.restart(kernel)
            small_contraction_recipe(sched, gemm, const_names)
    else:
        generic_recipe(sched, target.threads)
    return sched


# ============================================================== contraction
def gemm_rows(m: int, target: Target) -> int:
    """The micro-tile height for ``m`` rows: the target's MR, or ``SHORT_TILE`` when MR's last tile would be
    mostly empty (m = 64 with MR = 12: five full tiles and one of 4 rows) and the smaller tile wastes less.

        >>> t12 = dataclasses.replace(parse_target("llvm"), mr=12)     # doctest: +SKIP
        >>> [gemm_rows(m, t12) for m in (1024, 1000, 64, 16)]      # doctest: +SKIP
        [12, 12, 8, 8]
    """
    mr = target.mr
    if mr <= SHORT_TILE or m <= 0:
        return mr

    def use(t: int) -> float:
        return m / (math.ceil(m / t) * t)

    return SHORT_TILE if use(SHORT_TILE) * SHORT_TILE_SPEED > use(mr) else mr


def gemm_blocking(
    m: int,
    n: int,
    kdim: int,
    batch: int,
    target: Target,
    mr: int | None = None,
    a_const: bool = False,
    b_const: bool = False,
) -> dict[str, int]:
    """Block sizes MC, NC, KC and the loop order ROWS (0: column blocks outermost, 1: row then column
    blocks, both parallel).

    KC <= 256, or the whole reduction with few rows and a constant B (``ONE_K_BLOCK_MAX_K``).  One thread:
    MC up to 16 micro-tile rows (of ``mr``, default the target's MR), NC as wide as ``B_BLOCK_BYTES`` of
    packed B allow (every column block re-reads A: 1024^3 ran 1.05x faster with NC 1024 than 512), and with
    one k block and few rows as ``C_BLOCK_BYTES`` of output allow.  Several threads:
    the split of the output into row x column blocks with the least estimated time (``_split_time``): every
    column block re-reads all of A and every row block all of B, and the threads take the blocks one by
    one, so an odd count of equal blocks leaves one thread idle at the end."""
    blk = _blocking(m, n, kdim, batch, target, mr, a_const, b_const)
    rows = min(m, blk["MC"]) if blk["ROWS"] else m
    if b_const and m <= PANEL_OUTER_MAX_M and kdim <= ONE_K_BLOCK_MAX_K and 4 * rows * kdim <= A_BLOCK_BYTES:
        blk["KC"] = kdim  # one k block (see ONE_K_BLOCK_MAX_K); the column blocks stay as sized for 256
    return blk


def _blocking(
    m: int, n: int, kdim: int, batch: int, target: Target, mr: int | None, a_const: bool, b_const: bool
) -> dict[str, int]:
    """``gemm_blocking`` with k in blocks of at most 256 (a fresh dict: the caller may change it)."""
    return dict(_blocking_memo(m, n, kdim, batch, target, mr, a_const, b_const))


@functools.cache  # a model repeats its layers' shapes, and each search over splits simulates hundreds of them
def _blocking_memo(
    m: int, n: int, kdim: int, batch: int, target: Target, mr: int | None, a_const: bool, b_const: bool
) -> dict[str, int]:
    MR, NR, threads = mr or target.mr, target.nr, target.threads
    nk = max(1, math.ceil(kdim / 256))
    kc = math.ceil(kdim / nk)
    mtiles, ntiles = math.ceil(m / MR), math.ceil(n / NR)
    mc = MR * max(1, min(16, mtiles))
    ncap = max(16, B_BLOCK_BYTES // (4 * kc * NR))  # NR panels in one packed B block
    if threads == 1:
        if nk == 1 and m <= PANEL_OUTER_MAX_M:  # one k block: init, product, epilogue pass over the output block
            ncap = min(ncap, max(1, C_BLOCK_BYTES // (4 * m * NR)))
        return {"MC": mc, "NC": NR * _even_block(ntiles, ncap), "KC": kc, "ROWS": 0}
    best: tuple[float, int, int] | None = None
    for pr in _even_splits(mtiles, 4 * threads):
        mb = min(m, MR * math.ceil(mtiles / pr))
        if pr > 1 and not a_const and mb * kc * 4 > A_BLOCK_BYTES:
            continue  # an A block packed on the stack per (row, column, k) block
        for pc in _even_splits(ntiles, 4 * threads):
            nt = math.ceil(ntiles / pc)
            if nt > ncap:
                continue
            t = _split_time(_runs(m, mb), _runs(n, NR * nt), (MR, NR), kdim, batch, threads, (a_const, b_const))
            if best is None or t < best[0]:
                best = (t, pr, nt)
    if best is None:
        nt = max(1, min(16, math.ceil(ntiles / max(1, math.ceil(4 * threads / batch)))))
        return {"MC": mc, "NC": NR * nt, "KC": kc, "ROWS": 0}
    _, pr, nt = best
    if pr == 1:
        return {"MC": mc, "NC": NR * nt, "KC": kc, "ROWS": 0}
    return {"MC": MR * math.ceil(mtiles / pr), "NC": NR * nt, "KC": kc, "ROWS": 1}


def _even_block(tiles: int, cap: int) -> int:
    """The block size, in micro-tiles, cutting ``tiles`` into as few near-equal blocks as a ``cap`` allows: 96
    column panels under a cap of 85 are two blocks of 48, not 85 and 11.  A short last block left its epilogue's
    loops and its packing a bound known only at run time (a GELU epilogue's loop then is not interleaved:
    ``codegen._latency_bound``).  Whole models, 1 thread, interleaved against the uneven blocks: ViT-S 1.01-1.02x,
    MobileNetV2 1.02x, DenseNet-121 1.01x, BERT 1.01x, ResNet-50 1.00x; 2 threads ViT-S and ConvNeXt 1.01x."""
    cap = max(1, min(cap, tiles))
    return math.ceil(tiles / math.ceil(tiles / cap))


def _even_splits(tiles: int, most: int) -> list[int]:
    """The distinct block counts splitting ``tiles`` into near-equal runs, up to ``most`` blocks."""
    return sorted({math.ceil(tiles / math.ceil(tiles / p)) for p in range(1, min(tiles, most) + 1)})


def _runs(extent: int, block: int) -> list[int]:
    """The lengths of ``extent`` cut into blocks of ``block``: ``_runs(289, 64) == [64, 64, 64, 64, 33]``."""
    return [min(block, extent - x) for x in range(0, extent, block)]


def _split_time(
    rows: list[int],
    cols: list[int],
    tile: tuple[int, int],
    kdim: int,
    batch: int,
    threads: int,
    const: tuple[bool, bool],
) -> float:
    """Estimated time (in flops) of the output cut into ``rows`` x ``cols`` blocks (per batch entry) on
    ``threads`` threads, each taking the next block in loop order when it is free.  A block costs its
    micro-tiles' FMAs (``tile`` = MR x NR, partial tiles computed whole) plus its operands' elements: the
    rows of A and the columns of B it reads, at ``CONST_ELEM_FLOPS`` for an operand packed at compile time
    (``const`` = A's, B's) and ``PACK_ELEM_FLOPS`` for one packed per block; ``TAIL_BLOCKS`` of the mean
    block is added.  Constants: see their definitions."""
    mr, nr = tile
    a_elem, b_elem = (CONST_ELEM_FLOPS if c else PACK_ELEM_FLOPS for c in const)
    per_batch = [
        2 * math.ceil(r / mr) * mr * math.ceil(c / nr) * nr * kdim + (r * a_elem + c * b_elem) * kdim
        for r in rows
        for c in cols
    ]
    total, count = sum(per_batch) * batch, len(per_batch) * batch
    mean = total / count
    if count > SIM_MAX_BLOCKS:  # a batched product over many matrices: not listed block by block
        return total / threads + (0.5 + TAIL_BLOCKS) * mean
    finish = [0.0] * threads
    for c in per_batch * batch:  # list scheduling: the block goes to the thread that is free first
        finish[finish.index(min(finish))] += c
    return max(finish) + TAIL_BLOCKS * mean


def _need_stage(k: Kernel, stage: str) -> Stage:
    st = find_stage(k.body, stage)
    if st is None:
        raise ScheduleError(f"no stage named {stage}")
    return st


def _update_factors(k: Kernel, g: GemmInfo) -> tuple[Expr, Expr]:
    """``(a, b)`` of the stage's one update ``out[..] = out[..] + a * b``.  (An epilogue computed at one of the
    stage's loops is inside it: ``out[..] = r[..] + out[..] * g[..]``, a residual add after a scale, reads
    another buffer first and is not an update.)"""
    prods = []
    for x in stores_of(_need_stage(k, g.stage)):
        v = x.value
        if (
            x.buf.name == g.out
            and isinstance(v, Bin)
            and v.op == "+"
            and not (isinstance(v.a, Load) and v.a.buf.name != g.out)
            and isinstance(v.b, Bin)
            and v.b.op == "*"
        ):
            prods.append(v.b)
    if len(prods) != 1:
        raise ScheduleError(f"cannot find the update of stage {g.stage}")
    return prods[0].a, prods[0].b


def _const_operand(k: Kernel, const_names: Set[str], g: GemmInfo, which: int) -> list[str] | None:
    """For an operand that only reads constants, the batch loops (outer ones too) it depends on (a grouped
    convolution's weights: the group); None when it reads anything else."""
    op = _update_factors(k, g)[which]
    srcs = {x.buf.name for x in loads_of(op)}
    fv = {x.name for x in walk_expr(op) if isinstance(x, Var)}
    return [b for b in [*g.outer, *g.batch] if b in fv] if srcs <= set(const_names) else None


def gemm_recipe(s: Schedule, g: GemmInfo, const_names: set[str], target: Target) -> None:
    """BLIS-style blocking around the target's MR x NR micro-kernel (see the module docstring); with
    ``GemmInfo.nr`` the output's columns are contiguous in runs of that many (a blocked output: the
    micro-kernel's column vectors are one channel block each)."""
    NR, threads = target.nr, target.threads
    if g.nr is not None and (NR % g.nr or g.nr % target.vector_width):
        raise ScheduleError(
            f"NR={NR} is not a whole number of the output's runs of {g.nr} columns, or a run is not whole "
            f"{target.vector_width}-lane vectors"
        )
    if target.mr < 1 or NR < 1:
        raise ScheduleError(f"target {target.name} has no GEMM micro-kernel")
    every = math.prod(e for e in g.init_extents[:-2]) if g.init_extents[:-2] else 1  # products, all batch loops
    if g.m * g.n * g.kdim * every < GEMM_MIN_FLOPS or g.n < 16 or g.kdim < 4:
        raise ScheduleError("too small for the blocked GEMM")
    # a zero init folded into the product (FoldInit): the first k block stores its tiles instead of adding
    # them to a pass of zeros (refused for anything but a plain zero init)
    if g.kc is None and not g.outer:
        with contextlib.suppress(ScheduleError):
            s.fold_init(g.init_stage, g.stage, g.k)
    # outer batch loops (GemmInfo.outer): one product per iteration, each on one thread, blocked as one
    batch_n = 1 if g.outer else every
    # the micro-tile: the target's, or (a tuner's choice) another shape whose accumulators fit the registers
    vw = target.vector_width
    if g.nr is None and vw > 0 and NR % vw == 0:
        NR = s.decide("nr", [vw * c for c in (1, 2, 3)], NR)
    mrs = [target.mr, SHORT_TILE, *(m for m in MICRO_ROWS if vw <= 0 or m * (NR // vw) <= MICRO_ACCUMULATORS)]
    MR = s.decide("mr", mrs, gemm_rows(g.m, target))
    a_deps, b_deps = (_const_operand(s.kernel, const_names, g, w) for w in (0, 1))
    a_const, b_const = a_deps is not None, b_deps is not None
    blk_target = dataclasses.replace(target, threads=1) if g.outer else target
    if NR != target.nr:
        blk_target = dataclasses.replace(blk_target, nr=NR)
    blk = gemm_blocking(g.m, g.n, g.kdim, batch_n, blk_target, MR, a_const, b_const)
    # the blocking's choices (tuned: ``lower.tune``); the rule's picks are the defaults
    mtiles, ntiles = math.ceil(g.m / MR), math.ceil(g.n / NR)
    rows = s.decide("rows", [False, True] if blk_target.threads > 1 else [False], blk["ROWS"] == 1)
    NC = NR * s.decide("nc", _block_choices(ntiles), min(ntiles, blk["NC"] // NR))
    MC = MR * s.decide("mc", _block_choices(mtiles), min(mtiles, math.ceil(blk["MC"] / MR)))
    KC = g.kc or s.decide("kc", [c for c in (64, 128, 256, 512, g.kdim) if c <= g.kdim], min(blk["KC"], g.kdim))
    i, j, kk = g.i, g.j, g.k
    s.split(j, NC).split(f"{j}.i", NR).split(kk, KC).split(i, MC).split(f"{i}.i", MR)
    jo, jr, ji = f"{j}.o", f"{j}.i.o", f"{j}.i.i"
    ko, ki = f"{kk}.o", f"{kk}.i"
    io, ir, ii = f"{i}.o", f"{i}.i.o", f"{i}.i.i"
    # an MR x KC tile of A stays in L1 while the KC x NR panels of B stream past it from L2 (or, with few
    # rows, the other way round: PANEL_OUTER_MAX_M); the parallel axis (row or column blocks) outermost
    panels_outer = g.kc is None and not rows and s.decide("panels_outer", [False, True], g.m <= PANEL_OUTER_MAX_M)
    if g.kc is not None:  # short k blocks: each micro-tile of C stays in L1 across them, not the whole output
        s.reorder(*g.batch, io, jo, ir, jr, ko, ii, ji, ki) if rows else s.reorder(
            *g.batch, jo, io, ir, jr, ko, ii, ji, ki
        )
    elif rows:
        s.reorder(*g.batch, io, jo, ko, ir, jr, ii, ji, ki)
    elif panels_outer:  # few rows: each KC x NR panel of B stays in L1 across all row tiles
        s.reorder(*g.batch, jo, ko, io, jr, ir, ii, ji, ki)
    else:
        s.reorder(*g.batch, jo, ko, io, ir, jr, ii, ji, ki)
    # init and epilogue: same output blocks, then computed per block; a blocked output's columns (GemmInfo.nr)
    # a run at a time, the runs outside the rows (each run's rows are one contiguous stretch)
    for stage in [g.init_stage, *g.post]:
        if find_stage(s.kernel.body, stage) is None:
            continue
        lps = [lp.var.name for lp in stage_loops(s.kernel, stage)]
        *bv, ei, ej = lps
        s.split(ej, NC)
        lanes = [f"{ej}.i"]
        if g.nr is not None:
            s.split(f"{ej}.i", g.nr)
            lanes = [f"{ej}.i.o", f"{ej}.i.i"]
        if g.kc is not None and not rows:  # per row block: the (MC, NC) block of C stays in cache for the product
            s.split(ei, MC)
            s.reorder(*bv, f"{ej}.o", f"{ei}.o", *lanes[:-1], f"{ei}.i", lanes[-1])
            s.vectorize(_run_loop(s, f"{ei}.i", lanes))
            s.compute_at(stage, io)
            continue
        if rows:
            s.split(ei, MC)
            s.reorder(*bv, f"{ei}.o", f"{ej}.o", *lanes[:-1], f"{ei}.i", lanes[-1])
            s.vectorize(_run_loop(s, f"{ei}.i", lanes))
        else:
            s.reorder(*bv, f"{ej}.o", *lanes[:-1], ei, lanes[-1])
            s.vectorize(_run_loop(s, ei, lanes))
        s.compute_at(stage, jo)
    # operands packed at compile time, before the parallel loops are fused (their layouts name the blocks)
    pad = (1, 1, 1, 1, NR)
    if b_deps is not None:
        s.pack(g.stage, "#1", None, (*b_deps, jo, jr, ko, ki, ji), f"{g.b_buf}_packed", (1,) * len(b_deps) + pad)
    if a_deps is not None:
        s.pack(g.stage, "#0", None, (*a_deps, io, ko, ir, ki, ii), f"{g.a_buf}_apacked")
    par = [io, jo] if rows else [jo]
    # the parallel root: the batch and parallel block loops fused, or the outer loops around the stage
    root = _fuse_all(s, g.outer) if g.outer else _fuse_all(s, [*g.batch, *par])
    root_lp = need_loop(s.kernel.body, root, "gemm")
    flops = 2 * g.m * g.n * g.kdim * every
    # worth a launch when there are enough flops, or enough operand data to stream (an RNN step's matvec
    # reads a 1 MiB weight for 0.5 Mflop: bound by one core's bandwidth, so two cores read it faster)
    moved = (g.m * g.kdim + g.kdim * g.n + g.m * g.n) * every
    if (
        threads > 1
        and isinstance(root_lp.extent, IntImm)
        and root_lp.extent.value > 1
        and s.decide("parallel", [False, True], flops >= PAR_MIN_FLOPS or moved >= PAR_MIN_ELEMS)
    ):
        s.parallel(root)
    # otherwise B in NR-wide panels per (NC, KC) block on the stack, unless it is read in place
    if not b_const and not (
        _b_in_place(s.kernel, g, (ii, ji, ki)) and s.decide("b_in_place", [False, True], g.m <= PANEL_OUTER_MAX_M)
    ):
        if panels_outer:  # each panel copied right before the row tiles use it, still in L1 (NASNet-A's and
            # ResNeXt-50's convolutions 1-3% faster than with all of a block's panels copied first)
            s.pack(g.stage, "#1", jr, (ki, ji), f"{g.b_buf}_panel", pad[3:])
        else:
            s.pack(g.stage, "#1", ko, (jr, ki, ji), f"{g.b_buf}_panel", pad[2:])
    # and A in k-major MR-row panels per (MC, KC) block when it is not unit stride along k, or its rows would
    # crowd an L1 set (never with EQSAT_PACK_A=0),
    a_op = _update_factors(s.kernel, g)[0]
    unit, pitch = False, 0
    if isinstance(a_op, Load):
        f = affine_in(flat_offset(a_op.buf, a_op.idx), {ii, ji, ki})
        unit = f is not None and f[0].get(ki) == 1 and f[0].get(ji, 0) == 0
        pitch = f[0].get(ii, 0) * ITEM_BYTES[a_op.buf.dtype] if f is not None else 0
    crowded = pitch % A_ALIAS_PITCH_BYTES == 0  # (a pitch of 0: one row broadcast, packed as before)
    # or B is copied into a panel on the stack at run time (``IN_PLACE_A_MAX_MR``)
    b_panel = not b_const and find_stage(s.kernel.body, f"{g.stage}.pack_{g.b_buf}_panel") is not None
    pack_a = config.PACK_A.flag() and (crowded or (b_panel and MR > IN_PLACE_A_MAX_MR))
    if not a_const and (not unit or (g.kc is None and s.decide("pack_a", [False, True], pack_a))):
        # padded to MR rows (a full-width vector copy, the tail tile's rows zero) unless A is shorter than a tile
        a_pad = (1, 1, MR) if g.m >= MR else ()
        s.pack(g.stage, "#0", ko if rows else io, (ir, ki, ii), f"{g.a_buf}_apanel", a_pad)
    # an operand packed at compile time is read from memory once per run (a model's weights do not stay in
    # cache between runs): the micro-kernel prefetches it ahead; A only when few column panels share each
    # of its tiles (else the prefetches of a tile already in L1 only cost issue slots: VGG's convs 1% slower)
    stream_a = a_const and s.decide("stream_a", [False, True], math.ceil(min(NC, g.n) / NR) <= STREAM_A_MAX_PANELS)
    # B read in place (gemmr: an activation, left in memory by an earlier layer): its next panel is prefetched
    b_in_place = not b_const and not b_panel
    stream = ("a" if stream_a else "") + ("b" if b_const or b_in_place else "")
    # short k blocks over an A read in place: one call runs them all as segments (accumulators kept)
    segments = g.kc is not None and unit and not a_const and find_loop(s.kernel.body, ko) is not None
    s.tensorize(ko if segments else ii, MR, NR, stream=stream, segments=segments, runs=g.nr or 0)
    for st in list(walk_stmt(s.kernel.body)):  # the copies into panels and slices: vectorize their innermost loop
        if isinstance(st, Stage) and (".pack_" in st.name or st.name in [g.stage + c for c in SLICE_COPIES]):
            vectorize_innermost(s, st.name)


def _block_choices(tiles: int) -> list[int]:
    """Block sizes, in micro-tiles, a tuner may try for ``tiles`` of them: powers of two and the even splits
    into up to 8 blocks (``_even_splits``), at most ``tiles``."""
    even = {math.ceil(tiles / p) for p in range(1, min(tiles, 8) + 1)}
    return sorted({min(tiles, 1 << e) for e in range(8)} | even)


def _fuse_all(s: Schedule, names: list[str]) -> str:
    """Fuse the nested loops ``names`` (outermost first) into one; its name."""
    root = names[0]
    for nxt in names[1:]:
        s.fuse(root, nxt)
        root = f"{root}.{nxt}"
    return root


def _run_loop(s: Schedule, rows: str, lanes: list[str]) -> str:
    """The loop to vectorize in an init or epilogue pass over a block of C: the columns, or for a blocked
    output (two ``lanes`` loops: runs, lanes) the rows and lanes fused, one contiguous stretch per run (a
    16-lane loop alone was left scalar: a ReLU pass took 160 us after a 250 us 64-channel 1x1 conv, fused 8)."""
    if len(lanes) == 1:
        return lanes[0]
    return try_fuse(s, rows, lanes[-1]) or lanes[-1]


def _b_in_place(k: Kernel, g: GemmInfo, tile: tuple[str, str, str]) -> bool:
    """Whether the micro-kernel can read B where it is (``gemmr``): a plain load of a buffer in memory, unit
    stride along the columns, and a row stride whose rows do not pile into a few L1 sets (4 KiB apart they
    would all share one).  The caller takes it only with few rows (``PANEL_OUTER_MAX_M``: each KC x NR panel
    is read once, then stays in L1 while every row tile passes): a 1x1 convolution over 56 x 56 or 28 x 28
    pixels with 64-128 output channels ran 1.04-1.12x faster than copying its input into panels (1 and 2
    threads, interleaved), with 256-2048 rows the panels streamed from L2 and in place ran 0.94-1.02x."""
    b_op = _update_factors(k, g)[1]
    if not isinstance(b_op, Load) or b_op.buf.scope == "local":
        return False
    ii, ji, ki = tile
    f = affine_in(flat_offset(b_op.buf, b_op.idx), {ii, ji, ki})
    if f is None or f[0].get(ji) != 1 or f[0].get(ii, 0) != 0:
        return False
    ldb = f[0].get(ki, 0)
    return ldb > 0 and math.gcd(4 * ldb, 4096) <= 256


def direct_conv_recipe(s: Schedule, g: GemmInfo, threads: int, vector_width: int) -> None:
    """Direct grouped convolution: the init and post stages folded into the accumulator rows where the steps
    allow (``FoldInitRows``, ``FoldPostRows``; an epilogue with a math call over rows that are not whole
    ``vector_width``-lane vectors stays a pass over each plane: ``_row_tail_calls``), else computed per
    (n, group); window unrolled, output width vectorized, (n, group) the parallel root."""
    n, grp = g.batch
    # the accumulator rows start from the init's value instead of from a pass that stored it into the output
    # and the epilogues (bias, batchnorm, activation) are applied as they are stored, not in passes after
    with contextlib.suppress(ScheduleError):
        s.fold_init_rows(g.init_stage, g.stage)
        if g.post and s.decide("fold_post", [False, True], not _row_tail_calls(s.kernel, g, vector_width)):
            for post in g.post:
                s.fold_post_rows(g.stage, post)
    for stage in [g.init_stage, *g.post]:
        if find_stage(s.kernel.body, stage) is not None:
            s.compute_at(stage, grp)
    s.fuse(n, grp)
    root = f"{n}.{grp}"
    st = _need_stage(s.kernel, g.stage)
    upd = next(x for x in walk_stmt(st) if isinstance(x, For) and x.var.name == g.j)
    wins = [x for x in walk_stmt(upd.body) if isinstance(x, For)]
    exts = [w.extent.value for w in wins if isinstance(w.extent, IntImm)]
    if len(exts) == len(wins) and math.prod(exts) <= DIRECT_CONV_MAX_UNROLL and s.decide("unroll", [False, True], True):
        for w in wins:
            s.unroll(w.var.name)
    for stage in [g.init_stage, *g.post]:  # whole planes: one contiguous loop, not a short loop per row
        if find_stage(s.kernel.body, stage) is not None:
            names = [lp.var.name for lp in stage_loops(s.kernel, stage)]
            while len(names) >= 2 and (f := try_fuse(s, names[-2], names[-1])) is not None:
                names = [*names[:-2], f]
    for stage in [f"{g.stage}.pad", g.init_stage, *g.post, g.stage]:
        if find_stage(s.kernel.body, stage) is not None:
            vectorize_innermost(s, stage)
    root_lp = root_loop(s.kernel.body)
    if (
        threads > 1
        and root_lp is not None
        and isinstance(root_lp.extent, IntImm)
        and root_lp.extent.value > 1
        and s.decide("parallel", [False, True], 2 * g.m * g.n * g.kdim * root_lp.extent.value >= PAR_MIN_FLOPS // 4)
    ):
        s.parallel(root)


# Math calls that are one instruction or a few, not a polynomial: cheap in a scalar remainder.
CHEAP_CALLS = frozenset({"abs", "sqrt", "rsqrt", "floor", "ceil", "round"})
SHORT_ROW_VECTORS = 2  # rows shorter than this many vectors, not whole ones: any epilogue as a plane pass


def _row_tail_calls(k: Kernel, g: GemmInfo, vector_width: int) -> bool:
    """Whether a direct convolution's epilogue is better as a pass over each plane than folded into its
    accumulator rows (``FoldPostRows``): its output rows are not whole vectors and either shorter than two
    (``SHORT_ROW_VECTORS``) or the epilogue calls a costly math function (exp, sigmoid, tanh: ``CHEAP_CALLS``
    aside).  Folded, each row's last lanes compute the epilogue one at a time; a plane pass leaves one scalar
    remainder per plane.  1 thread, interleaved, depthwise + batchnorm + SiLU: 672x14x14 5x5 1.9x faster as a
    plane pass, 240x28x28 5x5 1.25x, 1152x7x7 5x5 the same; 144x56x56 3x3 0.87x, so those stay folded.  With a
    cheap epilogue (batchnorm + ReLU6), ``eqsat tune`` found the plane pass 1.2-2.6x faster on MobileNetV2's
    28-, 14- and 7-wide depthwise layers (none on its 56- and 112-wide ones); taken as the rule, whole models
    untuned ran 1.15x (MobileNetV2, 1 and 2 threads) and 1.13x (ShuffleNetV2) faster, EfficientNet-B0 the same."""
    ow = g.init_extents[-1]
    if ow % vector_width == 0:
        return False
    if ow < SHORT_ROW_VECTORS * vector_width:
        return True
    stages = [st for post in g.post if (st := find_stage(k.body, post)) is not None]
    return any(
        isinstance(x, Call) and x.fn not in CHEAP_CALLS and x.dtype == F32 for st in stages for x in all_exprs(st)
    )


def small_contraction_recipe(s: Schedule, g: GemmInfo, const_names: Set[str]) -> None:
    """Loop order (batch, i, k, j) with j vectorized; init and epilogue stages vectorized innermost.  A constant
    B read at a stride along j (a convolution's weight ``w[j, c]`` in ``conv_pixel_rows``' form) is packed
    ``[k, j]`` at compile time, so the vectorized loop reads it at unit stride instead of gathering lanes."""
    try:
        s.reorder(*g.batch, g.i, g.k, g.j)
        s.vectorize(g.j)
    except ScheduleError:
        pass
    with contextlib.suppress(ScheduleError):
        b_deps = _const_operand(s.kernel, const_names, g, 1)
        b_op = _update_factors(s.kernel, g)[1]
        if b_deps is not None and isinstance(b_op, Load):
            f = affine_in(flat_offset(b_op.buf, b_op.idx), {g.j, g.k})
            if f is not None and f[0].get(g.j, 0) > 1:
                s.pack(g.stage, "#1", None, (*b_deps, g.k, g.j), f"{g.b_buf}_packed")
    for stage in [g.init_stage, *g.post]:
        if find_stage(s.kernel.body, stage) is not None:
            vectorize_innermost(s, stage)
