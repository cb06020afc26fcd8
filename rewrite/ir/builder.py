"""A small builder API for hand-written graphs.

    >>> b = GraphBuilder("mlp")
    >>> x = b.input("x", (8, 16))
    >>> w = b.weight("w", torch.randn(16, 4))
    >>> y = b.relu(b.matmul(x, w))
    >>> g = b.build([y])
    >>> g.shape_of(y)
    (8, 4)

Every registry op is available as a method (``b.conv2d(x, w, stride=(2, 2))``), the constant
sources too (``b.fill(shape=(8, 4), value=1.0)``, ``b.eye(n=4)``, ``b.avg_kernel(channels=C,
kernel=(3, 3))``: no inputs, weight-only); elementwise binary ops align ranks NumPy-style by
inserting a reshape.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from rewrite.ir.dtypes import FLOAT32, TORCH_DTYPE, dtype_name
from rewrite.ir.graph import Graph, GraphError, Value
from rewrite.ir.ops import OPS, Group, Shape, get_op


class GraphBuilder:
    def __init__(self, name: str = "graph") -> None:
        self.graph = Graph(name=name)
        self.origin = ""  # attached to every node added, for error messages

    def shape(self, v: Value) -> Shape:
        return self.graph.shape_of(v)

    def input(self, name: str, shape: Sequence[int], dtype: str = FLOAT32) -> Value:
        if any(n.attrs["name"] == name for n in self.graph.inputs):
            raise GraphError(f"input '{name}' is defined twice")
        return self.op("input", name=name, shape=tuple(shape), dtype=dtype)

    def weight(self, name: str, tensor: torch.Tensor) -> Value:
        """A constant: int64 and bool tensors keep their dtype; floating ones are stored as float32."""
        if name in self.graph.weights:
            raise GraphError(f"weight '{name}' is defined twice")
        dtype = dtype_name(tensor.dtype)
        if dtype is None or dtype == FLOAT32:
            if not tensor.is_floating_point():
                raise GraphError(f"weight '{name}' has dtype {tensor.dtype}; eqsat takes float32, int64 and bool")
            dtype = FLOAT32
        tensor = tensor.detach().to(TORCH_DTYPE[dtype]).contiguous()
        v = self.op("weight", name=name, shape=tuple(tensor.shape), dtype=dtype)
        self.graph.weights[name] = tensor
        return v

    def op(self, op: str, *inputs: Value, **attrs: Any) -> Value:
        """Add one node; returns its first output (see ``op_multi`` for split)."""
        node = self.graph.add(op, inputs, attrs, origin=self.origin)
        return Value(node.id, 0)

    def op_multi(self, op: str, *inputs: Value, **attrs: Any) -> list[Value]:
        node = self.graph.add(op, inputs, attrs, origin=self.origin)
        return [Value(node.id, i) for i in range(len(node.shapes))]

    def split(self, x: Value, axis: int, sizes: Sequence[int]) -> list[Value]:
        return self.op_multi("split", x, axis=axis, sizes=tuple(sizes))

    def align(self, a: Value, b: Value) -> tuple[Value, Value]:
        """Give two operands equal rank by prefixing size-1 dimensions."""
        sa, sb = self.shape(a), self.shape(b)
        if len(sa) < len(sb):
            a = self.op("reshape", a, shape=(1,) * (len(sb) - len(sa)) + sa)
        elif len(sb) < len(sa):
            b = self.op("reshape", b, shape=(1,) * (len(sa) - len(sb)) + sb)
        return a, b

    def linear(self, x: Value, w: Value, b: Value | None = None) -> Value:
        """``x @ w.T (+ b)`` as matmul/transpose/add, the form the rules work on."""
        sx = self.shape(x)
        wt = self.op("transpose", w, perm=(1, 0))
        if len(sx) > 2:
            wt = self.op("reshape", wt, shape=(1,) * (len(sx) - 2) + self.shape(wt))
        y = self.op("matmul", x, wt)
        if b is not None:
            y = self.add(y, b)
        return y

    def build(self, outputs: Sequence[Value]) -> Graph:
        self.graph.outputs = list(outputs)
        self.graph.validate()
        return self.graph

    def __getattr__(self, name: str) -> Callable[..., Value]:
        if name.startswith("_") or name not in OPS:
            raise AttributeError(name)
        opdef = get_op(name)
        if opdef.group is Group.ELEMENTWISE and opdef.arity == 2:

            def binary(a: Value, b: Value, **attrs: Any) -> Value:
                return self.op(name, *self.align(a, b), **attrs)

            return binary
        return lambda *inputs, **attrs: self.op(name, *inputs, **attrs)
