"""Measured costs of the llvm target: one op compiled alone (or fused into a consumer) and its kernels timed.

``run_llvm_op`` and ``run_llvm_fused`` have the signature of ``costs.measured.RUNNERS`` entries; the
pipeline registers them for the ``llvm`` and ``llvm-fused`` kinds, and ``costs.compiled.CompiledCost``
reads their rows (see that module for which ops are priced how).  ``cost_target`` is the Target they are
keyed by: the host's, its key extended with a digest of ``lower``'s source and the runner's version, so an
edit to the code generator never reads stale measurements.  The CUDA twin is ``lower.cuda.measure``.
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from costs.compiled import base_target
from costs.measured import Measurement
from lower.runtime import compile_graph
from lower.target import parse_target
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import UsageError
from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import OPS, Shape
from rewrite.ir.target import Target

# inputs of an op that a real graph feeds from weights (constants, pre-packed at compile time); matmul's
# B only when shared by all batches (a layer's weight; batched attention products multiply two activations)
_CONST_FROM = {
    "conv2d": 1,
    "conv2d_bias_act": 1,
    "linear": 1,
    "matmul_bias_act": 1,
    "batchnorm": 1,
    "layernorm": 1,
    "groupnorm": 1,
    "rmsnorm": 1,
    "embedding": 0,
}


def _const_inputs(op: str, in_shapes: Sequence[Shape]) -> set[int]:
    if op == "matmul":  # B shared by every batch (2-D, or batch dims all 1) is a layer's weight
        return {1} if len(in_shapes) == 2 and math.prod(in_shapes[1][:-2]) == 1 else set()
    first = _CONST_FROM.get(op)
    if first is None:
        return set()
    return {k for k in range(first, len(in_shapes)) if not (op == "embedding" and k > 0)}


def _op_inputs(b: GraphBuilder, op: str, in_shapes: Sequence[Shape], dtype: str) -> list[Value]:
    """Graph inputs (and weights, where a real graph has them) for one configuration of ``op``."""
    ins = OPS[op].dtype_rule.ins
    consts = _const_inputs(op, in_shapes)
    gen = torch.Generator().manual_seed(0)
    vals = []
    for k, s in enumerate(in_shapes):
        want = ins[min(k, len(ins) - 1)] if ins else dtype
        dt = dtype if want == "T" else want
        if k in consts and dt == "float32":
            vals.append(b.weight(f"w{k}", torch.rand(tuple(s), generator=gen) + 0.5))
        else:
            vals.append(b.input(f"x{k}", tuple(s), dtype=dt))
    return vals


def _one_op(op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str, fused: bool) -> list[Graph]:
    """``[op alone]``, or (``fused``) ``[consumer(op(...)), consumer alone on op's output]``: ``op`` inlined
    into an elementwise consumer's loads, and the consumer's own cost to subtract."""
    norm = OPS[op].normalize_attrs(attrs)
    b = GraphBuilder(f"cost_{op}")
    out = b.op(op, *_op_inputs(b, op, in_shapes, dtype), **norm)
    if not fused:
        return [b.build([out])]
    g = b.build([out])
    shape, odt = g.shape_of(out), g.dtype_of(out)

    def consumer(bb: GraphBuilder, v: Value) -> Value:  # relu on floats; a cast to float32 otherwise
        return bb.op("relu", v) if odt == "float32" else bb.op("cast", v, dtype="float32")

    b2 = GraphBuilder(f"cost_{op}_fused")
    fused_graph = b2.build([consumer(b2, b2.op(op, *_op_inputs(b2, op, in_shapes, dtype), **norm))])
    b3 = GraphBuilder(f"cost_{op}_consumer")
    return [fused_graph, b3.build([consumer(b3, b3.input("y", shape, dtype=odt))])]


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
    """Each compiled graph's summed kernel time per round, the graphs alternating round by round; before each
    timed run the caches are flushed and the activation inputs read back in (a producer just wrote them)."""
    host = base_target(target)
    host = replace(host, versions=tuple(v for v in host.versions if v[0] not in (LOWER_VERSION, RUNNER_VERSION[0])))
    cgs = [compile_graph(g, host) for g in graphs]
    feeds = [g.random_inputs(0) for g in graphs]
    flush = _flush_buffer()
    with torch.no_grad():
        for _ in range(warmup):
            for cg, x in zip(cgs, feeds, strict=True):
                cg(x)
        out: list[list[float]] = [[] for _ in cgs]
        for r in range(repeats):
            order = range(len(cgs)) if r % 2 == 0 else range(len(cgs) - 1, -1, -1)
            for i in order:
                flush.add_(1.0)
                for t in feeds[i].values():
                    t.sum()
                out[i].append(sum(k["seconds"] for k in cgs[i].profile(feeds[i], repeats=1)))
    return out


def _measurement(samples: Sequence[float]) -> Measurement:
    """The fastest of the rounds: a kernel's uncontended time.  On a shared machine the median of a few
    rounds caught other processes' time slices (a 1.2 ms matmul cached at 13.8 ms), and a cached row is
    kept for good."""
    ts = sorted(samples)
    q = len(ts) // 4
    return Measurement(ts[0], len(ts), ts[-1 - q] - ts[q])


def run_llvm_op(
    target: Target,
    op: str,
    attrs: Mapping[str, Any],
    in_shapes: Sequence[Shape],
    dtype: str = "float32",
    warmup: int = 3,
    repeats: int = 15,
) -> Measurement:
    """Compile ``op`` alone for ``target`` (contraction weights as constants) and time its kernels."""
    return _measurement(_kernel_seconds(target, _one_op(op, attrs, in_shapes, dtype, False), warmup, repeats)[0])


def run_llvm_fused(
    target: Target,
    op: str,
    attrs: Mapping[str, Any],
    in_shapes: Sequence[Shape],
    dtype: str = "float32",
    warmup: int = 3,
    repeats: int = 15,
) -> Measurement:
    """What an injective ``op`` adds fused into a neighbour's kernel: ``relu(op(x))`` minus ``relu`` alone
    (interleaved, the fastest round of each), never below 5% of the consumer's own time (measurement noise)."""
    both, alone = _kernel_seconds(target, _one_op(op, attrs, in_shapes, dtype, True), warmup, repeats)
    m = _measurement([max(f - a, 0.0) for f, a in zip(both, alone, strict=True)])
    return replace(m, seconds=max(min(both) - min(alone), 0.05 * min(alone)))


LOWER_VERSION = "lower"  # the versions entry of a cost target that fingerprints the lowering's source
RUNNER_VERSION = ("runner", "3")  # bump when the llvm runners measure differently (2: cold caches, 3: fastest round)


@functools.cache
def _lower_digest() -> str:
    """A digest of ``lower``'s source: kernels (and so their measured costs) change when it does."""
    root = Path(__file__).resolve().parents[1]  # lower/
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(str(f.relative_to(root)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def cost_target(target: str | Target = "llvm", threads: int | None = None) -> Target:
    """The Target compiled costs are measured on and keyed by: ``target`` for this host, its key extended with
    a digest of the lowering's source, so an edit to the code generator never reads stale measurements."""
    host = parse_target(target, threads)
    if host.kind != "llvm":
        raise UsageError(f"compiled costs are measured on an 'llvm' target, not '{host.kind}'")
    return replace(host, versions=(*host.versions, (LOWER_VERSION, _lower_digest()), RUNNER_VERSION))
