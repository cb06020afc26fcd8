"""What the compiled-cost runners of every backend share: the graphs that price an op (alone, or fused
into an elementwise consumer, with a real graph's weight operands as constants), the fastest-round
measurement, and the digest of ``lower``'s source that keys their rows (``lower.llvm.measure``,
``lower.cuda.measure``)."""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import torch

from costs.measured import Measurement
from costs.timing import interleaved
from lower import filecache
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import OPS, Shape
from rewrite.ir.target import Target

# inputs of an op that a real graph feeds from weights (constants, pre-packed at compile time); matmul's
# B only when shared by all batches (a layer's weight; batched attention products multiply two activations)
_CONST_FROM = {
    "conv2d": 1,
    "conv2d_bias_act": 1,
    "conv2d_im2col": 1,
    "conv2d_im2col_bias_act": 1,
    "conv2d_blocked": 1,
    "conv2d_blocked_bias_act": 1,
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


def one_op(op: str, attrs: Mapping[str, Any], in_shapes: Sequence[Shape], dtype: str, fused: bool) -> list[Graph]:
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


def measurement(samples: Sequence[float]) -> Measurement:
    """The fastest of the rounds: a kernel's uncontended time.  On a shared machine the median of a few
    rounds caught other processes' time slices (a 1.2 ms matmul cached at 13.8 ms), and a cached row is
    kept for good."""
    ts = sorted(samples)
    q = len(ts) // 4
    return Measurement(ts[0], len(ts), ts[-1 - q] - ts[q])


LOWER_VERSION = "lower"  # the versions entry of a cost target that fingerprints the lowering's source


@functools.cache
def lower_digest() -> str:
    """A digest of ``lower``'s source and of what the op registry tells the lowering (each op's fusion role,
    cost class and packed operand): kernels (and so their measured costs, schedules and run checks) change
    when either does.  A registry fact alone (a blocked conv's packed operand, which decides what fusion
    inlines into it) changed kernels while cached costs and run-check verdicts kept their keys."""
    h = hashlib.sha256(filecache.source_digest("lower").encode())
    for name in sorted(OPS):
        d = OPS[name]
        h.update(f"{name} {d.group} {d.fusion} {d.cost_class} {d.packed_operand}\n".encode())
    return h.hexdigest()[:12]


def alternating_rounds(
    run: Callable[[int], object], timed: Callable[[int], float], n: int, warmup: int, repeats: int
) -> list[list[float]]:
    """``warmup`` untimed ``run(i)`` of each of ``n`` graphs, then ``repeats`` rounds of ``timed(i)`` for
    each in ``costs.timing``'s order (two graphs: reversed every other round, neither side always runs
    second); per graph, its times."""
    fns = [functools.partial(run, i) for i in range(n)]
    rounds = interleaved(fns, repeats, warmup, timer=timed)
    return [list(t.samples) for t in rounds.timings]


KernelSeconds = Callable[[Target, Sequence[Graph], int, int], list[list[float]]]  # a backend's timer


def anchor_cost(
    timer: KernelSeconds,
    target: Target,
    op: str,
    attrs: Mapping[str, Any],
    in_shapes: Sequence[Shape],
    dtype: str,
    warmup: int,
    repeats: int,
) -> Measurement:
    """``op`` compiled alone (contraction weights as constants), its kernels timed by ``timer``."""
    return measurement(timer(target, one_op(op, attrs, in_shapes, dtype, False), warmup, repeats)[0])


def fused_increment(both: Sequence[float], alone: Sequence[float]) -> Measurement:
    """The increment of ``relu(op(x))`` (``both``) over ``relu`` alone (``alone``), timed interleaved round by
    round: the fastest round of each, never below 5% of the consumer's own time (measurement noise)."""
    m = measurement([max(f - a, 0.0) for f, a in zip(both, alone, strict=True)])
    return replace(m, seconds=max(min(both) - min(alone), 0.05 * min(alone)))


def fused_cost(
    timer: KernelSeconds,
    target: Target,
    op: str,
    attrs: Mapping[str, Any],
    in_shapes: Sequence[Shape],
    dtype: str,
    warmup: int,
    repeats: int,
) -> Measurement:
    """What an injective ``op`` adds fused into a neighbour's kernel (``fused_increment``)."""
    both, alone = timer(target, one_op(op, attrs, in_shapes, dtype, True), warmup, repeats)
    return fused_increment(both, alone)


def graph_key(g: Graph) -> tuple[Any, ...]:
    """The structure of a measurement graph (ops, attributes, wiring, shapes, dtypes, weight names and shapes):
    ``one_op`` seeds its weights, so two measurement graphs of one structure are the same graph (the consumer
    alone on one shape serves every fused increment priced on that shape)."""
    nodes = tuple(
        (n.op, tuple(sorted((k, repr(v)) for k, v in n.attrs.items())), n.inputs, n.shapes, n.dtypes) for n in g
    )
    return nodes, tuple(g.outputs), tuple((k, tuple(w.shape)) for k, w in sorted(g.weights.items()))


__all__ = [
    "LOWER_VERSION",
    "KernelSeconds",
    "alternating_rounds",
    "anchor_cost",
    "fused_cost",
    "fused_increment",
    "graph_key",
    "lower_digest",
    "measurement",
    "one_op",
]
