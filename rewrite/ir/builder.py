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

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch

from rewrite.ir.dtypes import DTYPES, FLOAT32, dtype_name
from rewrite.ir.errors import UsageError
from rewrite.ir.graph import Graph, GraphError, Value
from rewrite.ir.ops import OPS, Group, Shape, get_op

_SERIALS = itertools.count(1)


def _kind(x: object) -> str:
    """A wrong argument as a message shows it: a short literal as written (``'x'``, ``5``), else its type."""
    text = repr(x) if isinstance(x, (str, int, float, bool)) or x is None else type(x).__name__
    return text if len(text) <= 40 else text[:37] + "..."


class GraphBuilder:
    """Adds nodes to one graph and hands out its values.

    Every ``Value`` it returns is tagged with this builder (``Value.owner``, outside equality and hashing),
    so a value from another builder, which would name whatever node has the same number here, is refused
    instead of silently rewired."""

    def __init__(self, name: str = "graph") -> None:
        self.graph = Graph(name=name)
        self.origin = ""  # attached to every node added, for error messages
        self._owner = (next(_SERIALS), name)

    def _mine(self, v: Value, what: str) -> Value:
        """``v`` when it is a value of this builder's graph; else a one-line error saying what it is."""
        if not isinstance(v, Value):
            fix = (
                "make a constant with fill(shape=..., value=...) or weight(), or scale with smul(x, scalar=...)"
                if isinstance(v, (int, float)) and not isinstance(v, bool)
                else "pass what this builder's input(), weight() or an op returned"
            )
            raise UsageError(f"{what} is {_kind(v)}, not a Value: {fix}")
        if v.owner is not None and v.owner != self._owner:
            raise GraphError(
                f"{what} {v} belongs to GraphBuilder '{v.owner[1]}', not to '{self._owner[1]}': "
                "build each graph from its own builder's values"
            )
        node = self.graph.nodes.get(v.node)
        if node is None or v.index >= len(node.shapes):
            raise GraphError(f"{what} {v} is not a value of graph '{self.graph.name}'")
        return v

    def _value(self, node: int, index: int = 0) -> Value:
        v = Value(node, index)
        object.__setattr__(v, "owner", self._owner)  # frozen; not a field, so equality and hashing ignore it
        return v

    def shape(self, v: Value) -> Shape:
        return self.graph.shape_of(self._mine(v, "shape() of"))

    def input(self, name: str, shape: Iterable[int], dtype: str = FLOAT32) -> Value:
        """A run-time input: ``shape`` a sequence of positive ints, ``dtype`` float32, int64, bool, float16,
        bfloat16, uint8, int8 or int32 (the last five stored only: ``cast`` them to float32 to compute)."""
        if not isinstance(name, str) or not name:
            raise UsageError(f"input name {_kind(name)} must be a non-empty str")
        if isinstance(shape, (str, bytes)) or not isinstance(shape, Iterable):
            raise UsageError(
                f"input '{name}': shape {_kind(shape)} is not a sequence of ints; write ({shape},) for one dimension"
                if isinstance(shape, int)
                else f"input '{name}': shape {_kind(shape)} is not a sequence of ints, such as (8, 16)"
            )
        if any(n.attrs["name"] == name for n in self.graph.inputs):
            raise GraphError(f"input '{name}' is defined twice")
        return self.op("input", name=name, shape=tuple(shape), dtype=dtype)

    def weight(self, name: str, tensor: torch.Tensor) -> Value:
        """A constant, kept in its dtype: float32, int64, bool, float16 or bfloat16.

        Anything else is refused, never cast (eqsat never rounds a value behind the caller's back): a
        float64 table computed for accuracy is rounded by whoever means it, with ``.float()``."""
        if not isinstance(name, str) or not name:
            raise UsageError(f"weight name {_kind(name)} must be a non-empty str")
        if not isinstance(tensor, torch.Tensor):
            fix = "torch.from_numpy(w)" if type(tensor).__module__ == "numpy" else "torch.tensor(w)"
            raise UsageError(f"weight '{name}' is {_kind(tensor)}, not a torch.Tensor: pass {fix}")
        if name in self.graph.weights:
            raise GraphError(f"weight '{name}' is defined twice")
        dtype = dtype_name(tensor.dtype, DTYPES)
        if dtype is None:
            fix = "pass w.float()" if tensor.is_floating_point() else "pass w.long() (indices) or w.bool() (masks)"
            raise GraphError(
                f"weight '{name}' has dtype {tensor.dtype}; eqsat takes {', '.join(DTYPES)}, never casts: {fix}"
            )
        tensor = tensor.detach().contiguous()
        v = self.op("weight", name=name, shape=tuple(tensor.shape), dtype=dtype)
        self.graph.weights[name] = tensor
        return v

    def op(self, op: str, *inputs: Value, **attrs: Any) -> Value:
        """Add one node; returns its first output (see ``op_multi`` for split)."""
        node = self.graph.add(op, self._inputs(op, inputs), attrs, origin=self.origin)
        return self._value(node.id)

    def op_multi(self, op: str, *inputs: Value, **attrs: Any) -> list[Value]:
        node = self.graph.add(op, self._inputs(op, inputs), attrs, origin=self.origin)
        return [self._value(node.id, i) for i in range(len(node.shapes))]

    def _inputs(self, op: str, inputs: Sequence[Value]) -> Sequence[Value]:
        for i, v in enumerate(inputs):
            if not isinstance(v, Value) or v.owner != self._owner:  # the common case costs two checks
                self._mine(v, f"op '{op}': input {i + 1}")
        return inputs

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

    def build(self, outputs: Iterable[Value]) -> Graph:
        """The graph, with ``outputs`` (a list of this builder's values) as its results."""
        if isinstance(outputs, (Value, str, torch.Tensor)) or not isinstance(outputs, Iterable):
            raise UsageError(f"build() takes a list of Values, got {_kind(outputs)}: write build([y])")
        self.graph.outputs = [self._mine(v, f"output {i + 1}") for i, v in enumerate(outputs)]
        self.graph.validate()
        return self.graph

    def __getattr__(self, name: str) -> Callable[..., Value]:
        if name.startswith("_") or name not in OPS:
            raise AttributeError(name)
        opdef = get_op(name)
        if opdef.group is Group.ELEMENTWISE and opdef.arity == 2:

            def binary(a: Value, b: Value, **attrs: Any) -> Value:
                self._inputs(name, (a, b))  # before align reads their shapes
                return self.op(name, *self.align(a, b), **attrs)

            return binary
        return lambda *inputs, **attrs: self.op(name, *inputs, **attrs)
