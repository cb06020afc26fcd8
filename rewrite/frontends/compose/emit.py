"""``Emit``, the small interface a frontend builds through, and the helpers for a weight that is a
constant (rearranged at import) or a run-time value (rearranged by ops)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from rewrite.ir.dtypes import ANY_SAME
from rewrite.ir.graph import Graph, Value
from rewrite.ir.ops import OPS, Group


@dataclass(frozen=True)
class Emit:
    """How a frontend adds to its graph: ``op(name, inputs, **attrs)`` and ``weight(tensor)``."""

    graph: Graph
    op: Callable[..., Value]
    weight: Callable[[torch.Tensor], Value]

    def shape(self, v: Value) -> tuple[int, ...]:
        return self.graph.shape_of(v)

    def reshape(self, v: Value, shape: Sequence[int]) -> Value:
        return v if self.shape(v) == tuple(shape) else self.op("reshape", [v], shape=tuple(shape))


def round_half(e: Emit, v: Value, half: str) -> Value:
    """The float32 ``v`` rounded to ``half`` (float16 or bfloat16) and read back as float32: what a tensor of
    that dtype holds after the op that made it (torch and onnxruntime compute in float32 inside an op and round
    its result).  A value that already is such a rounding is itself."""
    n = e.graph.nodes[v.node]
    if n.op == "cast" and n.attrs["dtype"] == "float32" and e.graph.dtype_of(n.inputs[0]) == half:
        return v
    return e.op("cast", [e.op("cast", [v], dtype=half)], dtype="float32")


def round_result(e: Emit, v: Value, half: str) -> Value:
    """``round_half`` of an op's result that its model types ``half`` when the op computes it from operands of
    that type; itself when the op only moves values (a layout op, an ``ANY_SAME`` dtype rule), which are
    rounded already.  Not for a conversion to ``half``: its operand may be float32 (call ``round_half``)."""
    op = OPS[e.graph.nodes[v.node].op]
    return v if op.group is Group.LAYOUT or op.dtype_rule is ANY_SAME else round_half(e, v, half)


Weight = Value | torch.Tensor  # a convolution's weight: a constant (rearranged now) or a run-time value (by ops)


def _wshape(e: Emit, w: Weight) -> tuple[int, ...]:
    return tuple(w.shape) if isinstance(w, torch.Tensor) else e.shape(w)


def _wvalue(e: Emit, w: Weight) -> Value:
    return e.weight(w.contiguous()) if isinstance(w, torch.Tensor) else w


def _wreshape(e: Emit, w: Weight, shape: Sequence[int]) -> Weight:
    return w.reshape(tuple(shape)) if isinstance(w, torch.Tensor) else e.reshape(w, shape)


def _wtranspose(e: Emit, w: Weight, perm: Sequence[int]) -> Weight:
    return w.permute(*perm) if isinstance(w, torch.Tensor) else e.op("transpose", [w], perm=tuple(perm))


def _wflip(e: Emit, w: Weight, axes: Sequence[int]) -> Weight:
    """``w`` reversed along ``axes`` (a run-time weight: an index_select by a reversed iota per axis)."""
    if isinstance(w, torch.Tensor):
        return w.flip(*axes)
    for ax in axes:
        if (n := e.shape(w)[ax]) > 1:
            w = e.op("index_select", [w, e.weight(torch.arange(n - 1, -1, -1))], axis=ax)
    return w


def _wtap(e: Emit, w: Weight, axis: int, i: int) -> Weight:
    """``w`` at position ``i`` of ``axis``, that axis dropped."""
    if isinstance(w, torch.Tensor):
        return w.select(axis, i)
    s = e.shape(w)
    return e.reshape(e.op("slice", [w], axis=axis, start=i, end=i + 1), s[:axis] + s[axis + 1 :])
