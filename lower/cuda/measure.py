"""Measured GPU costs: one op compiled by the CUDA backend and timed with CUDA events.

``run_cuda_op`` has the signature of ``costs.measured.RUNNERS`` entries; the pipeline registers it for
the ``cuda`` kind (``costs.measured.register_runner("cuda", run_cuda_op)``), so rows are keyed by the
GPU target's ``cache_key`` (device name, compute capability, driver and NVRTC versions).  Needs a GPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch

from costs.measured import Measurement, make_inputs
from lower.runtime import compile_graph
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.ops import OPS
from rewrite.ir.target import Target


def run_cuda_op(
    target: Target,
    op: str,
    attrs: Mapping[str, Any],
    in_shapes: Sequence[tuple[int, ...]],
    dtype: str = "float32",
    warmup: int = 5,
    repeats: int = 20,
) -> Measurement:
    """Compile ``op`` alone for ``target`` and time its kernels' launches (median of ``repeats``)."""
    norm = OPS[op].normalize_attrs(attrs)
    OPS[op].infer(list(in_shapes), norm)
    b = GraphBuilder(f"measure_{op}")
    ins = [b.input(f"x{i}", tuple(s)) for i, s in enumerate(in_shapes)]
    out = b.op(op, *ins, **norm)
    graph = b.build([out])
    cg = compile_graph(graph, target)
    xs = [t.to("cuda") for t in make_inputs(op, norm, in_shapes, dtype)]
    for _ in range(warmup):
        cg(xs)
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        cg(xs)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    times.sort()
    q = len(times) // 4
    return Measurement(times[len(times) // 2], len(times), times[-1 - q] - times[q])


__all__ = ["run_cuda_op"]
