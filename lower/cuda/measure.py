"""Compiled GPU costs for extraction: an op's kernels, alone or fused into a consumer, timed on the GPU.

The CUDA twin of ``lower.llvm.measure``, with the same graphs (``one_op``: contraction weights as
constants, pre-packed at compile time as in a real graph; an injective op inlined into ``relu``'s loads)
and the same rule for a row (the fastest round).  ``run_cuda_anchor`` and ``run_cuda_fused`` are the cuda
kind's runners (``rewrite.ir.target.CUDA``), and ``costs.compiled.CompiledCost`` reads their rows.
``cost_key`` is the ``CostKey`` rows are keyed by: the first GPU's target (name, compute capability,
precision, driver, NVRTC), a digest of ``lower``'s source and the runners' version.  Timing needs a GPU;
building the graphs does not.

    >>> m = run_cuda_fused(cost_key().as_fused(), "add", {}, [(1, 64, 56, 56)] * 2)   # doctest: +SKIP
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from costs.key import CostKey
from costs.measured import Measurement
from lower.cuda import BACKEND
from lower.measure_graphs import LOWER_VERSION, alternating_rounds, anchor_cost, fused_cost, lower_digest
from lower.runtime import compile_graph
from lower.target import backend_of, parse_target
from rewrite.ir.errors import LoweringError, UsageError
from rewrite.ir.graph import Graph
from rewrite.ir.ops import Shape
from rewrite.ir.target import Target

RUNNER_VERSION = ("runner", "cuda-1")  # bump when the cuda runners measure differently

# Bytes written between timed runs so one kernel's operands are not left in L2 for the next (50 MiB on an
# H100): in a model the other kernels' weights and activations pass through in between.
FLUSH_BYTES = 64 << 20


def cost_key(target: str | Target = "cuda", threads: int | None = None) -> CostKey:
    """What compiled GPU costs on ``target`` (default: the first visible GPU, ``LoweringError`` without one)
    are keyed by: the target, a digest of the lowering's source and the runners' version.  ``threads`` does
    not apply (kernels run on the GPU)."""
    host = parse_target(target)
    if backend_of(host) is not BACKEND:
        raise UsageError(f"compiled GPU costs are measured on a 'cuda' target, not '{host.kind}'")
    return CostKey(host, versions=((LOWER_VERSION, lower_digest()), RUNNER_VERSION))


@functools.cache
def _flush_buffer() -> torch.Tensor:
    return torch.zeros(FLUSH_BYTES // 4, device="cuda")


def event_seconds(fn: Callable[[], object]) -> float:
    """One run of ``fn`` timed with CUDA events on the current stream (seconds)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def _kernel_seconds(target: Target, graphs: Sequence[Graph], warmup: int, repeats: int) -> list[list[float]]:
    """Each compiled graph's time per round (CUDA events), the graphs alternating round by round, L2 flushed
    before each timed run."""
    if not torch.cuda.is_available():
        raise LoweringError("measuring GPU costs needs a CUDA device and torch built with CUDA; none is visible")
    cgs = [compile_graph(g, target) for g in graphs]
    feeds = [{k: t.to("cuda") for k, t in g.random_inputs(0).items()} for g in graphs]
    flush = _flush_buffer()

    def timed(i: int) -> float:
        flush.add_(1.0)  # queued before the start event: not timed
        return event_seconds(functools.partial(cgs[i], feeds[i]))

    with torch.no_grad():
        return alternating_rounds(lambda i: cgs[i](feeds[i]), timed, len(cgs), warmup, repeats)


def run_cuda_anchor(
    key: CostKey,
    op: str,
    attrs: Mapping[str, Any],
    in_shapes: Sequence[Shape],
    dtype: str = "float32",
    warmup: int = 3,
    repeats: int = 15,
) -> Measurement:
    """Compile ``op`` alone for the GPU (contraction weights as constants) and time its kernels."""
    return anchor_cost(_kernel_seconds, key.target, op, attrs, in_shapes, dtype, warmup, repeats)


def run_cuda_fused(
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


__all__ = ["RUNNER_VERSION", "cost_key", "event_seconds", "run_cuda_anchor", "run_cuda_fused"]
