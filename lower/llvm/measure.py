"""Measured costs of the llvm target: one op compiled alone (or fused into a consumer) and its kernels timed.

``run_llvm_op`` and ``run_llvm_fused`` (and ``run_llvm_many``, either over a batch) are the llvm kind's
runners (``rewrite.ir.target.LLVM``), and ``costs.compiled.CompiledCost`` reads their rows (see that
module for which ops are priced how).  ``cost_key`` is the ``CostKey`` they are keyed by: the host's
target, with a digest of ``lower``'s source and the runner's version, so an edit to the code generator
never reads stale measurements.  The CUDA twin is ``lower.cuda.measure``; the graphs both
time are built by ``lower.measure_graphs``.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch

from costs.key import CostKey
from costs.measured import Config, Measurement
from costs.timing import torch_threads
from lower.llvm import BACKEND, driver
from lower.measure_graphs import (
    LOWER_VERSION,
    alternating_rounds,
    anchor_cost,
    fused_cost,
    fused_increment,
    graph_key,
    lower_digest,
    measurement,
    one_op,
)
from lower.runtime import CompiledGraph, compile_graph
from lower.target import backend_of, parse_target
from lower.tune import records
from rewrite.ir.errors import EqsatError, UsageError
from rewrite.ir.graph import Graph
from rewrite.ir.ops import Shape
from rewrite.ir.target import Target

# Bytes written between timed runs so the weights are not in the core's caches, as in a real graph where
# the other kernels' weights and activations pass through in between: a (1,512)x(512,512) matmul runs 10 us
# with its 1 MiB weight in L2, 70-90 us in nasrnn and after a flush.  How far out of cache a weight is in a
# real graph depends on the graph's whole footprint (L3 here is large and shared): (1,512)x(512,2048) runs
# 150 us hot, 180-250 us after 16 MiB, 280 after 64, 344 after 160, 290-335 inside nasrnn.  The smaller
# flush ranked candidates better (nasrnn 0.84 against 0.64 within-model Spearman; bert, squeezenet alike).
FLUSH_BYTES = 16 << 20


@functools.cache
def _flush_buffer() -> torch.Tensor:
    return torch.zeros(FLUSH_BYTES // 4)


def _kernel_seconds(target: Target, graphs: Sequence[Graph], warmup: int, repeats: int) -> list[list[float]]:
    """Each graph compiled for ``target`` and timed (``_time``)."""
    return _time([compile_graph(g, target) for g in graphs], warmup, repeats)


# Timed rounds of one configuration fill about this long, between MIN_REPEATS and the runner's ``repeats``: a long
# kernel's fastest round needs fewer rounds to settle than a short one's.  BERT's and GPT-2's GEMMs (2-5 ms each)
# took 18 runs each, most of their cold measurement; kernels under ~1.3 ms keep all 15 rounds.
ROUNDS_BUDGET_S = 0.02
MIN_REPEATS = 5


def _time(cgs: Sequence[CompiledGraph], warmup: int, repeats: int) -> list[list[float]]:
    """Each compiled graph's summed kernel time per round, the graphs alternating round by round; before each
    timed run the caches are flushed and the activation inputs read back in (a producer just wrote them) by
    torch on one thread, with the kernels' thread pool kept awake throughout (``driver.awake``): in a model
    the kernel before leaves the workers spinning, and no other pool's.  Timed with the workers asleep (a
    worker here woke 0.1-3 ms after it was called) and torch's spinning after a flush on two threads, a
    1152x7x7 layout conversion measured 26-28 us on 2 threads; 8-10 us in a run of kernels."""
    feeds = [cg.graph.random_inputs(0) for cg in cgs]
    flush = _flush_buffer()

    def timed(i: int) -> float:
        with torch_threads(1):  # its OpenMP workers would spin on the other cores after a parallel op
            flush.add_(1.0)
            for t in feeds[i].values():
                t.sum()
        return sum(k["seconds"] for k in cgs[i].profile(feeds[i], repeats=1))

    with torch.no_grad(), driver.awake(max(cg.threads for cg in cgs)):
        second = []  # two warm-up calls of each, the second timed as it comes: how many rounds fit ROUNDS_BUDGET_S
        for cg, feed in zip(cgs, feeds, strict=True):
            cg(feed)  # the first touches the arena and the constants: slower than the rest
            t0 = time.perf_counter()
            cg(feed)
            second.append(time.perf_counter() - t0)
        rounds = min(repeats, max(MIN_REPEATS, math.ceil(ROUNDS_BUDGET_S / max(max(second), 1e-9))))
        return alternating_rounds(lambda i: cgs[i](feeds[i]), timed, len(cgs), max(warmup - 2, 0), rounds)


def run_llvm_op(
    key: CostKey,
    op: str,
    attrs: Mapping[str, Any],
    in_shapes: Sequence[Shape],
    dtype: str = "float32",
    warmup: int = 3,
    repeats: int = 15,
) -> Measurement:
    """Compile ``op`` alone for ``key.target`` (contraction weights as constants) and time its kernels."""
    return anchor_cost(_kernel_seconds, key.target, op, attrs, in_shapes, dtype, warmup, repeats)


def run_llvm_fused(
    key: CostKey,
    op: str,
    attrs: Mapping[str, Any],
    in_shapes: Sequence[Shape],
    dtype: str = "float32",
    warmup: int = 3,
    repeats: int = 15,
) -> Measurement:
    """What an injective ``op`` adds fused into a neighbour's kernel (``measure_graphs.fused_cost``)."""
    return fused_cost(_kernel_seconds, key.target, op, attrs, in_shapes, dtype, warmup, repeats)


# Configurations compiled together before they are timed: compiling runs on COMPILE_THREADS threads (llvmlite
# serializes LLVM's calls, so one thread's LLVM work overlaps another's Python lowering), timing on none but the
# caller, with nothing compiling beside it.  A chunk bounds what is held compiled at once (weights, code).
MEASURE_CHUNK = 24
COMPILE_THREADS = 2


def run_llvm_many(
    key: CostKey,
    configs: Sequence[Config],
    warmup: int = 3,
    repeats: int = 15,
    on_done: Callable[[Config], None] | None = None,
) -> list[Measurement | EqsatError]:
    """``run_llvm_op`` (or, for a ``fused`` key, ``run_llvm_fused``) of every configuration, as a batch: a
    chunk's graphs built, deduplicated (one consumer graph per shape serves every fused increment on it) and
    compiled together, then each configuration timed as its runner would.  A configuration that cannot be
    built or compiled answers its ``EqsatError``."""
    fused, host = key.fused, key.target
    out: list[Measurement | EqsatError] = []
    with ThreadPoolExecutor(COMPILE_THREADS, thread_name_prefix="eqsat-measure") as pool:
        for start in range(0, len(configs), MEASURE_CHUNK):
            chunk = configs[start : start + MEASURE_CHUNK]
            built: list[list[Graph] | EqsatError] = []
            for op, attrs, shapes, dtype in chunk:
                try:
                    built.append(one_op(op, attrs, shapes, dtype, fused))
                except EqsatError as e:
                    built.append(e)
            unique: dict[tuple[Any, ...], Graph] = {}
            for gs in built:
                for g in [] if isinstance(gs, EqsatError) else gs:
                    unique.setdefault(graph_key(g), g)
            compiled = dict(zip(unique, pool.map(lambda g: _compiled_or_error(g, host), unique.values()), strict=True))
            for c, gs in zip(chunk, built, strict=True):
                cgs = gs if isinstance(gs, EqsatError) else [compiled[graph_key(g)] for g in gs]
                bad = cgs if isinstance(cgs, EqsatError) else next((x for x in cgs if isinstance(x, EqsatError)), None)
                if bad is not None:
                    out.append(bad)
                else:
                    rounds = _time(cgs, warmup, repeats)  # type: ignore[arg-type]
                    out.append(fused_increment(*rounds) if fused else measurement(rounds[0]))
                if on_done is not None:
                    on_done(c)
    return out


def _compiled_or_error(g: Graph, host: Target) -> CompiledGraph | EqsatError:
    try:
        return compile_graph(g, host)
    except EqsatError as e:
        return e


RUNNER_VERSION = ("runner", "4")  # bump when the llvm runners measure differently (2: cold caches, 3: fastest round,
# 4: fewer rounds for long kernels)


def cost_key(target: str | Target = "llvm", threads: int | None = None) -> CostKey:
    """What compiled costs on ``target`` (for this host, on ``threads`` threads) are keyed by: the target, a
    digest of the lowering's source (an edit to the code generator never reads stale measurements), the
    runner's version and, where ``eqsat tune`` kept records for the target, a digest of them (the kernels
    measured run their tuned schedules: costs measured before were of other schedules)."""
    host = parse_target(target, threads)
    if backend_of(host) is not BACKEND:
        raise UsageError(f"llvm compiled costs are measured on a target the llvm backend compiles, not '{host.kind}'")
    tuned = records.digest(host)
    return CostKey(
        host, versions=((LOWER_VERSION, lower_digest()), RUNNER_VERSION, *((("tuning", tuned),) if tuned else ()))
    )
