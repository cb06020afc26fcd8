"""The state of one ONNX import and the helpers every handler shares.

A handler takes ``(ctx, node, attrs)`` and returns one ``Tensor`` per ONNX output: a graph
``Value``, or a numpy array when the result is known at import time (initializers,
``Constant``, shape arithmetic such as ``Shape -> Gather -> Concat -> Reshape``, which eqsat's
static shapes fold away).  A constant becomes a weight only where a graph op reads it.
A handler refuses what it cannot represent exactly by raising ``Refuse``; ``from_onnx``
turns that into a one-line ``FrontendError`` naming the node and its op type.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx  # the optional 'onnx' extra; this package is only imported when ONNX is used
import torch

from rewrite.frontends.compose import Emit
from rewrite.ir.dtypes import BFLOAT16, BOOL, FLOAT16, FLOAT32, INT8, INT32, INT64, UINT8
from rewrite.ir.graph import Graph, Value

# ONNX tensor element types eqsat has, and their eqsat dtype; everything else is refused
ONNX_DTYPES: dict[int, str] = {
    onnx.TensorProto.FLOAT: FLOAT32,
    onnx.TensorProto.INT64: INT64,
    onnx.TensorProto.BOOL: BOOL,
}
NP_DTYPES: dict[str, np.dtype] = {FLOAT32: np.dtype(np.float32), INT64: np.dtype(np.int64), BOOL: np.dtype(np.bool_)}
# the stored half types: an ONNX tensor of one imports as the float32 values it holds (exact), and every op
# that makes one has its result rounded to it (``importer._round_half_outputs``), as onnxruntime computes
HALF_ONNX: dict[int, str] = {onnx.TensorProto.FLOAT16: FLOAT16, onnx.TensorProto.BFLOAT16: BFLOAT16}
# what export writes: those, the stored half types (a ``cast`` to them is ONNX's Cast, which rounds as eqsat)
# and the stored integers (a saturating ``cast`` to them is a Clip and a Cast)
ONNX_OF: dict[str, int] = {
    **{v: k for k, v in ONNX_DTYPES.items()},
    FLOAT16: onnx.TensorProto.FLOAT16,
    BFLOAT16: onnx.TensorProto.BFLOAT16,
    UINT8: onnx.TensorProto.UINT8,
    INT8: onnx.TensorProto.INT8,
    INT32: onnx.TensorProto.INT32,
}

Tensor = Value | np.ndarray  # a value in the graph, or a constant known at import time


class Quantized:
    """The integer output of a run-time ``QuantizeLinear`` (a QDQ model's activation): ``value`` holds the
    integers as float32 (exactly: int8/uint8/int16/uint16 fit), ``dtype`` names the ONNX type, and ``ints``
    (uint8 only, else None) is the uint8 tensor itself, ``value`` its widening: the one tensor every reader
    shares (``quantize.quantized``).  Only ``DequantizeLinear`` and the QLinear contractions read it (the
    importer refuses any other reader and a graph output of it), so the graph never holds an integer tensor
    typed float32 beyond that pair."""

    def __init__(self, value: Value, dtype: str, producer: str, ints: Value | None = None) -> None:
        self.value, self.dtype, self.producer, self.ints = value, dtype, producer, ints


class Refuse(Exception):
    """Raised inside a handler; turned into a FrontendError naming the node.

    ``needs``: the ONNX name of a tensor the handler needs as a constant (a shape, axes,
    pads...) but found computed at run time.
    """

    def __init__(self, why: str, needs: str = "") -> None:
        super().__init__(why)
        self.needs = needs


def onnx_dtype_name(elem_type: int) -> str:
    return onnx.TensorProto.DataType.Name(elem_type).lower()


def np_dtype(arr: np.ndarray) -> str | None:
    """The eqsat dtype of a numpy array, or None when eqsat has none."""
    for k, v in NP_DTYPES.items():
        if arr.dtype == v:
            return k
    return None


def _no_subgraphs(body: onnx.GraphProto, args: Sequence[Tensor], scope: str) -> list[Tensor]:
    raise Refuse("a node with a subgraph outside an import")


class Ctx:
    """The graph being built, the ONNX names bound so far and the model's opset."""

    def __init__(self, graph: Graph, opset: int) -> None:
        self.g = graph
        self.opset = opset
        self.env: dict[str, Tensor] = {}
        self.origin = ""
        self.names: dict[int, tuple[np.ndarray, str]] = {}  # id(initializer array) -> (array, its ONNX name)
        # id(array) -> (array, weight node): one constant is one weight; the array is kept so its id stays unique
        self._weights: dict[int, tuple[np.ndarray, Value]] = {}
        self._int64: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id(int32 constant) -> (it, as int64)
        # names ONNX types float16/bfloat16 -> that dtype: they hold float32 values rounded to it (``HALF_ONNX``)
        self.half: dict[str, str] = {}
        # what a QDQ model's DequantizeLinear made, for the contractions that compute on the integers instead
        # (``quantize.integer_matmul``): a dequantized activation's value -> (the quantized tensor it read, scale,
        # zero point), and a dequantized constant's ONNX name -> (integers, scale, zero point, axis)
        self.dequantized: dict[Value, tuple[Quantized, np.ndarray, np.ndarray]] = {}
        self.dequantized_consts: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, int]] = {}
        # subgraph(body, arguments, scope): a body (If's branches, Loop's and Scan's bodies) imported into this
        # graph with its inputs bound to ``arguments``, its outputs returned; set by the importer
        self.subgraph: Callable[[onnx.GraphProto, Sequence[Tensor], str], list[Tensor]] = _no_subgraphs

    # -------------------------------------------------------------- values
    def add(self, op: str, inputs: Sequence[Value], **attrs: Any) -> Value:
        return Value(self.g.add(op, list(inputs), attrs, origin=self.origin).id, 0)

    def add_multi(self, op: str, inputs: Sequence[Value], **attrs: Any) -> list[Value]:
        node = self.g.add(op, list(inputs), attrs, origin=self.origin)
        return [Value(node.id, i) for i in range(len(node.shapes))]

    def shape(self, t: Tensor) -> tuple[int, ...]:
        return tuple(int(d) for d in t.shape) if isinstance(t, np.ndarray) else self.g.shape_of(t)

    def dtype(self, t: Tensor) -> str:
        """The eqsat dtype of ``t`` (a constant's numpy dtype name when eqsat has no such dtype)."""
        if isinstance(t, Value):
            return self.g.dtype_of(t)
        return np_dtype(t) or str(t.dtype)

    def value(self, t: Tensor, hint: str = "") -> Value:
        """``t`` as a graph value: a constant becomes a weight (float32, int64 or bool; others refused)."""
        if isinstance(t, Value):
            return t
        if t.dtype == np.int32:  # an int32 constant (shape arithmetic cast for a run-time op): int64, exactly
            t = self._int64.setdefault(id(t), (t, t.astype(np.int64)))[1]
        if np_dtype(t) is None:
            raise Refuse(f"constant{hint} has dtype {t.dtype}; eqsat has float32, int64 and bool (never cast)")
        hit = self._weights.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        known = self.names.get(id(t))
        name = known[1] if known is not None and known[0] is t else f"const.{len(self.g.weights)}"
        while name in self.g.weights:
            name += "_"
        return self.weight(name, t)

    def weight(self, name: str, arr: np.ndarray) -> Value:
        shape = tuple(int(d) for d in arr.shape)
        if any(d == 0 for d in shape):
            raise Refuse(f"constant '{name}' is empty (shape {shape})")
        dtype = np_dtype(arr)
        assert dtype is not None, arr.dtype
        self.g.weights[name] = torch.from_numpy(np.array(arr, copy=True, order="C"))  # ascontiguousarray makes 0-d 1-d
        v = self.add("weight", [], name=name, shape=shape, dtype=dtype)
        self._weights[id(arr)] = (arr, v)
        return v

    def integer_weight(self, arr: np.ndarray, hint: str) -> Value:
        """An 8-bit integer constant as a weight of its own dtype (``value`` refuses them: only the quantized
        contractions read one)."""
        dtype = {np.dtype(np.int8): INT8, np.dtype(np.uint8): UINT8}[arr.dtype]
        name = f"{hint}.{len(self.g.weights)}"
        while name in self.g.weights:
            name += "_"
        self.g.weights[name] = torch.from_numpy(np.array(arr, copy=True, order="C"))
        return self.add("weight", [], name=name, shape=tuple(int(d) for d in arr.shape), dtype=dtype)

    def const(self, name: str, what: str) -> np.ndarray:
        """The constant bound to ONNX name ``name`` (shapes, axes, pads): refuses a run-time tensor."""
        t = self.env.get(name)
        if t is None:
            raise Refuse(f"{what} '{name}' is not defined")
        if not isinstance(t, np.ndarray):
            raise Refuse(
                f"{what} '{name}' must be a constant (initializer or Constant), not computed at run time", needs=name
            )
        return t

    def ints(self, name: str, what: str) -> list[int]:
        arr = self.const(name, what)
        if arr.dtype.kind not in "iu":
            raise Refuse(f"{what} '{name}' must be an integer tensor, got {arr.dtype}")
        return [int(v) for v in arr.reshape(-1)]

    def scalar(self, name: str, what: str) -> float:
        arr = self.const(name, what)
        if arr.size != 1:
            raise Refuse(f"{what} '{name}' must hold one value, got shape {arr.shape}")
        return float(arr.reshape(-1)[0])

    def reshape(self, t: Tensor, shape: Sequence[int]) -> Tensor:
        shape = tuple(int(d) for d in shape)
        if self.shape(t) == shape:
            return t
        if isinstance(t, np.ndarray):
            return t.reshape(shape)
        return self.add("reshape", [t], shape=shape)

    def rank_up(self, t: Tensor, rank: int) -> Tensor:
        """Prepend size-1 dimensions (numpy broadcasting) so ``t`` has ``rank`` dimensions."""
        s = self.shape(t)
        return self.reshape(t, (1,) * (rank - len(s)) + s) if len(s) < rank else t

    def same_rank(self, *ts: Tensor) -> list[Value]:
        """The operands of a broadcasting op as graph values of one rank (the IR keeps ranks equal).

        A 1-d constant (a bias) stays a 1-d weight under a reshape node, as the torch frontends give it:
        the fusion rules find a bias that way (``add (matmul x w) (reshape b)``), and compile folds it.
        """
        r = max(len(self.shape(t)) for t in ts)
        out = []
        for t in ts:
            if isinstance(t, np.ndarray) and t.ndim == 1 and t.size > 1 and r > 1:
                out.append(self.add("reshape", [self.value(t)], shape=(1,) * (r - 1) + t.shape))
            else:
                out.append(self.value(self.rank_up(t, r)))
        return out

    def emit(self) -> Emit:
        """This import as ``frontends.compose`` builds into it: nodes with this origin, constants as weights."""
        return Emit(self.g, self.add, lambda t: self.value(np.ascontiguousarray(t.numpy())))

    def concat(self, ts: Sequence[Tensor], axis: int) -> Tensor:
        """``ts`` joined along ``axis``: numpy's concatenate when all are constants of one dtype (never cast),
        else a ``concat`` node; a single piece is itself."""
        if len(ts) == 1:
            return ts[0]
        arrays = [t for t in ts if isinstance(t, np.ndarray)]
        if len(arrays) == len(ts) and len({t.dtype for t in arrays}) == 1:
            return np.concatenate(arrays, axis=axis)
        return self.add("concat", [self.value(t) for t in ts], axis=axis)

    def identity(self, x: Tensor) -> Tensor:
        """A no-op result: a constant stays one; a graph value gets its own node (every ONNX output is one)."""
        return x if isinstance(x, np.ndarray) else self.add("identity", [x])


# ---------------------------------------------------------------- handler table
Handler = Callable[[Ctx, onnx.NodeProto, dict[str, Any]], list[Tensor]]
HANDLERS: dict[str, Handler] = {}


def handles(*op_types: str) -> Callable[[Handler], Handler]:
    """Register the decorated function as the importer of these ONNX op types."""

    def deco(fn: Handler) -> Handler:
        for t in op_types:
            HANDLERS[t] = fn
        return fn

    return deco


# registry op -> the importer of its ONNX spelling (``OpDef.onnx``) when that needs more than one node of the op
# with the node's attributes: constants fold, a scalar operand becomes ``smul``, ranks are raised
# (``same_rank``), ONNX's attributes become the op's (Conv's strides and pads, Softmax's axis by opset).
# Filled by ``@imports``; the op type is the registry's, written once (``elementwise.handler_for``).
IMPORTERS: dict[str, Handler] = {}


def imports(*ops: str) -> Callable[[Handler], Handler]:
    """Register the decorated function as the importer of these registry ops' ONNX spellings (``OpDef.onnx``);
    it reads the op a node spells with ``elementwise.spelled_op`` when it imports several."""

    def deco(fn: Handler) -> Handler:
        for op in ops:
            IMPORTERS[op] = fn
        return fn

    return deco


def attrs_of(node: onnx.NodeProto) -> dict[str, Any]:
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


def opt_input(node: onnx.NodeProto, i: int) -> str:
    """The name of optional input ``i``, or '' when absent."""
    return node.input[i] if len(node.input) > i else ""


def only_attrs(a: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(a) - allowed)
    if extra:
        raise Refuse(f"attribute(s) {extra} are not supported")


def one_output(node: onnx.NodeProto) -> None:
    if sum(1 for o in node.output if o) > 1:
        raise Refuse(f"only the first output is supported, the model asks for {[o for o in node.output if o]}")


def norm_axes(axes: Sequence[int], rank: int) -> list[int]:
    out = []
    for ax in axes:
        if not -rank <= ax < max(rank, 1):
            raise Refuse(f"axis {ax} is out of range for rank {rank}")
        out.append(ax % rank if rank else 0)
    if len(set(out)) != len(out):
        raise Refuse(f"axes {list(axes)} repeat")
    return out


def all_const(*ts: Tensor) -> bool:
    return all(isinstance(t, np.ndarray) for t in ts)


__all__ = [
    "HALF_ONNX",
    "HANDLERS",
    "IMPORTERS",
    "NP_DTYPES",
    "ONNX_DTYPES",
    "ONNX_OF",
    "Ctx",
    "Handler",
    "Quantized",
    "Refuse",
    "Tensor",
    "all_const",
    "attrs_of",
    "handles",
    "imports",
    "norm_axes",
    "np_dtype",
    "one_output",
    "only_attrs",
    "onnx_dtype_name",
    "opt_input",
]
