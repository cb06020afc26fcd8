"""The schedule of a kernel that is not a contraction, and the steps the contraction recipes share with it.

* elementwise / layout stages: inner loops fused where the fusion keeps every access affine
  (``try_fuse``), innermost loop vectorized (``vectorize_innermost``), root loop parallel when big
  (``PAR_MIN_ELEMS``), in chunks a tuner may vary;
* softmax / layernorm: row loops fused into one parallel root; each pass over a row vectorized
  (reductions included);
* pooling: window loops unrolled, output-width loop vectorized, (n, c) fused into a parallel root; a global
  pool's h and w fused into one contiguous reduction.

``lower.schedule.recipes`` picks this recipe for kernels without a ``GemmInfo``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from lower.ir import (
    Bin,
    For,
    If,
    IntImm,
    Kernel,
    LoopKind,
    Seq,
    Stage,
    Stmt,
    Store,
    Var,
    find_stage,
    flat_offset,
    loads_of,
    perfect_nest,
    stmt_exprs,
    walk_expr,
    walk_stmt,
)
from lower.schedule.loop_steps import Fuse
from lower.schedule.record import Schedule
from rewrite.ir.errors import ScheduleError

# Below these a parallel launch costs more than it saves.  A launch on the LLVM backend's native pool
# (lower/llvm/driver.py) costs a few microseconds and late workers never hold it up, so kernels of a few
# microseconds pay: 2**13 elements (~32 KiB read and written) or 2**19 flops (~5 us of GEMM).  Whole models,
# 2 threads, interleaved in one process against the earlier 2**15 / 2**21: ShuffleNetV2 1.18-1.21x faster,
# MobileNetV2 1.08-1.11x (their 14x14 and 28x28 layers and residual adds), EfficientNet-B0 1.00-1.02x;
# BERT, GPT-2, ViT, Llama, ConvNeXt, DenseNet, NASRNN, SqueezeNet, NASNet-A, ResNeXt-50 and Inception-v3
# within 1%.  Lower still (2**16 / 2**10) gained nothing more.
PAR_MIN_ELEMS = 1 << 13
PAR_MIN_FLOPS = 1 << 19


def stage_loops(k: Kernel, stage: str) -> list[For]:
    st = find_stage(k.body, stage)
    if st is None or not isinstance(st.body, For):
        raise ScheduleError(f"no loop nest for stage {stage}")
    return perfect_nest(st.body)


def vectorize_innermost(s: Schedule, stage: str) -> None:
    st = find_stage(s.kernel.body, stage)
    if st is None:
        return
    for x in walk_stmt(st):
        if (
            isinstance(x, For)
            and x.kind is LoopKind.SERIAL
            and not any(isinstance(y, For) and y.kind is not LoopKind.UNROLLED for y in walk_stmt(x.body))
        ):
            try:
                s.vectorize(x.var.name)
            except ScheduleError:
                pass


def _clean(k: Kernel, var: str) -> bool:
    """No access in ``k`` indexes through ``var`` with // or %."""
    for st in walk_stmt(k.body):
        accs = []
        if isinstance(st, Store):
            accs.append((st.buf, st.idx))
        for e in stmt_exprs(st):
            accs += [(ld.buf, ld.idx) for ld in loads_of(e)]
        for buf, idx in accs:
            off = flat_offset(buf, idx)
            for e in walk_expr(off):
                if (
                    isinstance(e, Bin)
                    and e.op in ("//", "%")
                    and any(isinstance(v, Var) and v.name == var for v in walk_expr(e))
                ):
                    return False
    return True


def try_fuse(s: Schedule, outer: str, inner: str) -> str | None:
    """Fuse ``outer`` and ``inner`` unless that fails or leaves a // or % in an access; the fused name."""
    step = Fuse(outer, inner)
    try:
        k2 = step.apply(s.kernel)
    except ScheduleError:
        return None
    name = f"{outer}.{inner}"
    if not _clean(k2, name):
        return None
    s.applied(step, k2)
    return name


def _elems(lps: list[For]) -> int:
    n = 1
    for lp in lps:
        n *= lp.extent.value if isinstance(lp.extent, IntImm) else 1
    return n


def generic_recipe(s: Schedule, threads: int) -> None:
    tops = list(s.kernel.body.stmts) if isinstance(s.kernel.body, Seq) else [s.kernel.body]
    single = len(tops) == 1
    for top in tops:
        if not isinstance(top, Stage) or not isinstance(top.body, For):
            continue
        _schedule_stage(s, top.name, threads if single else 1)


def _schedule_stage(s: Schedule, stage: str, threads: int) -> None:
    lps = stage_loops(s.kernel, stage)
    names = [lp.var.name for lp in lps]
    inner_stmt = lps[-1].body
    perfect = isinstance(inner_stmt, Store)
    work = _elems(lps)
    if not perfect:
        # reductions inside (softmax, layernorm, pools): unroll small window loops, vectorize passes
        _unroll_windows(s, stage)
        _fuse_reductions(s, stage)
        work *= _inner_work(lps[-1].body)
        # loops of the perfect prefix: fuse the last two when the windows were unrolled (pools: ow innermost)
        lps = stage_loops(s.kernel, stage)
        names = [lp.var.name for lp in lps]
        vectorize_innermost(s, stage)
        lps = stage_loops(s.kernel, stage)
        last = lps[-1]
        if last.kind is LoopKind.SERIAL and all(
            y.kind is LoopKind.UNROLLED for y in walk_stmt(last.body) if isinstance(y, For)
        ):
            try:
                s.vectorize(last.var.name)
            except ScheduleError:
                pass
        names = [lp.var.name for lp in stage_loops(s.kernel, stage)]
    else:
        # fuse from the innermost outwards while accesses stay affine
        while len(names) >= 2:
            f = try_fuse(s, names[-2], names[-1])
            if f is None:
                break
            names = [*names[:-2], f]
        try:
            s.vectorize(names[-1])
        except ScheduleError:
            pass
    # worth a parallel launch (a tuner may try one from an eighth of the size, or none)
    if (
        threads <= 1
        or work < PAR_MIN_ELEMS // 8
        or not s.decide(f"{stage}:parallel", [False, True], work >= PAR_MIN_ELEMS)
    ):
        return
    # one parallel root with enough iterations
    if len(names) == 1:
        lp = stage_loops(s.kernel, stage)[0]
        if not isinstance(lp.extent, IntImm):
            return
        n = lp.extent.value
        if perfect:
            chunk = max(1024, math.ceil(n / (threads * 8) / 64) * 64)
        else:  # row kernels: an iteration is a whole row; chunks of rows for dynamic balancing
            per = max(1, work // n)
            chunk = max(1, math.ceil(8192 / per), math.ceil(n / (threads * 8)))
            chunk = math.ceil(n / math.ceil(n / chunk))  # as many chunks, of even size (8 rows: 4 + 4, not 5 + 3)
        # chunks of half to four times the rule's (whole vectors of 64 in a flat pass) for a tuner to try
        unit = 64 if perfect else 1
        chunk = s.decide(
            f"{stage}:chunk",
            [c for c in {max(unit, chunk * f // 4 // unit * unit) for f in (2, 8, 16)} if c < n],
            chunk,
        )
        if chunk >= n:
            return
        kind = lp.kind
        s.split(names[0], chunk)
        try:
            if kind is LoopKind.VECTORIZED:
                s.vectorize(f"{names[0]}.i")
            s.parallel(f"{names[0]}.o")
        except ScheduleError:
            pass
        return
    k = 1
    lps = stage_loops(s.kernel, stage)
    while (
        isinstance(lps[0].extent, IntImm)
        and lps[0].extent.value < 4 * threads
        and k < len(names) - 1
        and lps[0].body is lps[1]
        and isinstance(lps[1].extent, IntImm)
    ):
        try:
            s.fuse(lps[0].var.name, lps[1].var.name)
        except ScheduleError:
            break
        lps = stage_loops(s.kernel, stage)
        k += 1
    try:
        s.parallel(lps[0].var.name)
    except ScheduleError:
        pass


def _inner_work(body: Stmt) -> int:
    """Stores one iteration of the loop around ``body`` executes: every store counted once per iteration of
    the loops around it (a Winograd tile's 36 stores, a pool row's window passes), the larger branch of an
    ``If``.  What decides whether a non-perfect stage is worth a parallel launch."""
    if isinstance(body, Store):
        return 1
    if isinstance(body, For):
        return (body.extent.value if isinstance(body.extent, IntImm) else 1) * _inner_work(body.body)
    if isinstance(body, Seq):
        return max(1, sum(_inner_work(x) for x in body.stmts))
    if isinstance(body, If):
        return max(_inner_work(body.then), _inner_work(body.orelse) if body.orelse is not None else 1)
    inner = getattr(body, "body", None)
    return _inner_work(inner) if isinstance(inner, Stmt) else 1


# a reduction's loops over its reduced axes (``lower.ops_to_loops.reduce``: ``r2``, ``r3``), fused ones too
_REDUCTION_LOOP = re.compile(r"r\d+(_\d+)*(\.r\d+(_\d+)*)*")


def _fuse_innermost_pairs(s: Schedule, stage: str, outer: Callable[[str], bool], inner: Callable[[str], bool]) -> None:
    """Fuse each serial loop named as ``outer`` takes with the innermost serial loop it directly holds named as
    ``inner`` takes (``try_fuse``: only while the accesses stay affine), looking again after each fusion (the fused
    loop may pair with the loop around it), so that the vectorized loop runs over all of them."""
    while (st := find_stage(s.kernel.body, stage)) is not None:
        pairs = [
            (x.var.name, x.body.var.name)
            for x in walk_stmt(st)
            if isinstance(x, For)
            and isinstance(x.body, For)
            and x.kind is LoopKind.SERIAL
            and x.body.kind is LoopKind.SERIAL
            and outer(x.var.name)
            and inner(x.body.var.name)
            and not any(isinstance(y, For) for y in walk_stmt(x.body.body))
        ]
        if not any(try_fuse(s, o, i) is not None for o, i in pairs):  # one fused: look again
            return


def _fuse_reductions(s: Schedule, stage: str) -> None:
    """Nested reduction loops over axes contiguous in memory as one loop, as a global pool's h and w are: a
    ``reduce_mean`` of (1, 672, 14, 14) over (2, 3) ran each row of 14 as one vector of 8 and six scalar steps,
    a SiLU computed in it (an SE block's squeeze) too; over the 196-long plane it is 24 vectors and 4 steps."""
    _fuse_innermost_pairs(s, stage, _is_reduction_loop, _is_reduction_loop)


def _is_reduction_loop(name: str) -> bool:
    return _REDUCTION_LOOP.fullmatch(name) is not None


def _unroll_windows(s: Schedule, stage: str) -> None:
    """Pools: fully unroll kh/kw window loops when small, so the output loop becomes innermost."""
    st = find_stage(s.kernel.body, stage)
    if st is None:
        return
    wins = [x for x in walk_stmt(st) if isinstance(x, For) and x.var.name.startswith(("kh", "kw"))]
    total = 1
    for w in wins:
        total *= w.extent.value if isinstance(w.extent, IntImm) else 1 << 30
    if wins and total <= 64:
        for w in wins:
            s.unroll(w.var.name)
    # global pools: one reduction loop over the contiguous h*w plane, so it vectorizes over all of it
    _fuse_innermost_pairs(s, stage, lambda n: n.startswith("h"), lambda n: n.startswith("w"))
