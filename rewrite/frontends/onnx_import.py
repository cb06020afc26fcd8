"""Import an ONNX model into an eqsat graph: ``from_onnx(path | ModelProto)``.

Each ONNX node maps to one or a few registry ops (``ONNX_OPS`` lists the op types
understood).  eqsat computes in float32 with static shapes, so the importer refuses,
with a ``FrontendError`` naming the ONNX node, its op type and why, anything it
cannot represent exactly: other dtypes (never cast silently), dynamic dimensions,
attribute values outside the op set (exact-erf GELU, strided slices, reflect
padding, ...).  Broadcasting between different ranks becomes explicit reshapes,
since the IR keeps ranks equal.  Constant tensors (initializers, ``Constant``
nodes) become weights where they are used as data, and are read as Python ints
where ONNX passes shapes or axes as tensors.

    >>> import onnx.helper as oh
    >>> from onnx import TensorProto
    >>> node = oh.make_node("Relu", ["x"], ["y"])
    >>> vi = lambda n: oh.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])
    >>> g = from_onnx(oh.make_model(oh.make_graph([node], "g", [vi("x")], [vi("y")])))
    >>> [n.op for n in g]
    ['input', 'relu']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx  # the optional 'onnx' extra; this module is only imported when ONNX is used
import torch
from onnx import numpy_helper

from rewrite.ir.errors import EqsatError, FrontendError
from rewrite.ir.graph import Graph, Value
from rewrite.progress import bar

# ONNX's tensor element type for float32; everything else is refused
_FLOAT = onnx.TensorProto.FLOAT


class _Refuse(Exception):
    """Raised inside a handler; turned into a FrontendError naming the node."""


class _Sqrt:
    """A ``Sqrt`` output, held until its user is known: eqsat has rsqrt but no sqrt."""

    def __init__(self, x: Value, label: str) -> None:
        self.x, self.label = x, label


Tensor = Value | np.ndarray | _Sqrt  # a value in the graph, a constant known at import time, or a pending sqrt


class _Ctx:
    """The graph being built, the ONNX names bound so far and the model's opset."""

    def __init__(self, graph: Graph, opset: int) -> None:
        self.g = graph
        self.opset = opset
        self.env: dict[str, Tensor] = {}
        self.origin = ""
        self.names: dict[int, tuple[np.ndarray, str]] = {}  # id(initializer array) -> (array, its ONNX name)
        # id(array) -> (array, weight node): one constant is one weight; the array is kept so its id stays unique
        self._weights: dict[int, tuple[np.ndarray, Value]] = {}

    # -------------------------------------------------------------- values
    def add(self, op: str, inputs: Sequence[Value], **attrs: Any) -> Value:
        return Value(self.g.add(op, list(inputs), attrs, origin=self.origin).id, 0)

    def add_multi(self, op: str, inputs: Sequence[Value], **attrs: Any) -> list[Value]:
        node = self.g.add(op, list(inputs), attrs, origin=self.origin)
        return [Value(node.id, i) for i in range(len(node.shapes))]

    def shape(self, t: Tensor) -> tuple[int, ...]:
        if isinstance(t, _Sqrt):
            return self.g.shape_of(t.x)
        return tuple(t.shape) if isinstance(t, np.ndarray) else self.g.shape_of(t)

    def value(self, t: Tensor, hint: str = "") -> Value:
        """``t`` as a graph value: constants become float32 weights (other dtypes are refused)."""
        if isinstance(t, Value):
            return t
        if isinstance(t, _Sqrt):
            raise _Refuse(f"it reads the output of {t.label}; eqsat has no sqrt op, only Reciprocal(Sqrt(x)) (rsqrt)")
        if t.dtype != np.float32:
            raise _Refuse(f"constant{hint} has dtype {t.dtype}; eqsat computes in float32 only")
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
            raise _Refuse(f"constant '{name}' is empty (shape {shape})")
        self.g.weights[name] = torch.from_numpy(
            np.array(arr, copy=True, order="C")
        )  # np.ascontiguousarray makes 0-d 1-d
        v = self.add("weight", [], name=name, shape=shape)
        self._weights[id(arr)] = (arr, v)
        return v

    def const(self, name: str, what: str) -> np.ndarray:
        """The constant bound to ONNX name ``name`` (shapes, axes, pads): refuses a run-time tensor."""
        t = self.env.get(name)
        if t is None:
            raise _Refuse(f"{what} '{name}' is not defined")
        if not isinstance(t, np.ndarray):
            raise _Refuse(f"{what} '{name}' must be a constant (initializer or Constant), not computed at run time")
        return t

    def ints(self, name: str, what: str) -> list[int]:
        arr = self.const(name, what)
        if arr.dtype.kind not in "iu":
            raise _Refuse(f"{what} '{name}' must be an integer tensor, got {arr.dtype}")
        return [int(v) for v in arr.reshape(-1)]

    def reshape(self, t: Tensor, shape: Sequence[int]) -> Tensor:
        shape = tuple(int(d) for d in shape)
        if self.shape(t) == shape:
            return t
        if isinstance(t, np.ndarray):
            return t.reshape(shape)
        return self.add("reshape", [self.value(t)], shape=shape)

    def rank_up(self, t: Tensor, rank: int) -> Tensor:
        """Prepend size-1 dimensions (numpy broadcasting) so ``t`` has ``rank`` dimensions."""
        s = self.shape(t)
        return self.reshape(t, (1,) * (rank - len(s)) + s) if len(s) < rank else t


def _attrs(node: onnx.NodeProto) -> dict[str, Any]:
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


def _opt_input(node: onnx.NodeProto, i: int) -> str:
    """The name of optional input ``i``, or '' when absent."""
    return node.input[i] if len(node.input) > i else ""


def _only_attrs(a: dict[str, Any], allowed: set[str]) -> None:
    extra = sorted(set(a) - allowed)
    if extra:
        raise _Refuse(f"attribute(s) {extra} are not supported")


def _one_output(node: onnx.NodeProto) -> None:
    if sum(1 for o in node.output if o) > 1:
        raise _Refuse(f"only the first output is supported, the model asks for {[o for o in node.output if o]}")


# ---------------------------------------------------------------- handlers
Handler = Callable[[_Ctx, onnx.NodeProto, dict[str, Any]], list[Tensor]]
HANDLERS: dict[str, Handler] = {}


def _handles(*op_types: str) -> Callable[[Handler], Handler]:
    def deco(fn: Handler) -> Handler:
        for t in op_types:
            HANDLERS[t] = fn
        return fn

    return deco


_UNARY = {"Relu": "relu", "Sigmoid": "sigmoid", "Tanh": "tanh", "Exp": "exp", "Identity": "identity"}


@_handles(*_UNARY)
def _unary(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, set())
    return [c.add(_UNARY[n.op_type], [c.value(c.env[n.input[0]])])]


@_handles("Gelu")
def _gelu(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"approximate"})
    approx = a.get("approximate", b"none")
    approx = approx.decode() if isinstance(approx, bytes) else approx
    if approx != "tanh":
        raise _Refuse(f"approximate='{approx}': eqsat's gelu is the tanh approximation only")
    return [c.add("gelu", [c.value(c.env[n.input[0]])])]


@_handles("Dropout")
def _dropout(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"ratio", "seed", "is_test"})
    _one_output(n)
    if a.get("is_test", 1) == 0 and c.opset < 7:
        raise _Refuse("training mode (is_test=0) is not supported: eqsat graphs are for inference")
    training = _opt_input(n, 2)
    if training and bool(c.const(training, "training_mode").reshape(-1)[0]):
        raise _Refuse("training_mode=true is not supported: eqsat graphs are for inference")
    return [c.add("identity", [c.value(c.env[n.input[0]])])]


@_handles("Sqrt")
def _sqrt(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, set())
    return [_Sqrt(c.value(c.env[n.input[0]]), c.origin)]  # resolved by Reciprocal, refused by anything else


@_handles("Reciprocal")
def _reciprocal(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, set())
    x = c.env[n.input[0]]
    if isinstance(x, _Sqrt):
        return [c.add("rsqrt", [x.x])]
    ones = np.ones((1,) * len(c.shape(x)), np.float32)
    return [c.add("div", [c.value(ones), c.value(x)])]  # 1 / x, correctly rounded like the reciprocal


@_handles("Neg")
def _neg(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, set())
    return [c.add("smul", [c.value(c.env[n.input[0]])], scalar=-1.0)]


@_handles("Sum", "Mean")
def _sum(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, set())
    terms = [c.env[i] for i in n.input]
    acc = terms[0]
    for t in terms[1:]:
        r = max(len(c.shape(acc)), len(c.shape(t)))
        acc = c.add("add", [c.value(c.rank_up(acc, r)), c.value(c.rank_up(t, r))])
    out = c.value(acc) if len(terms) > 1 else c.add("identity", [c.value(acc)])
    if n.op_type == "Mean" and len(terms) > 1:
        out = c.add("smul", [out], scalar=1.0 / len(terms))
    return [out]


_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div"}


@_handles(*_BINARY)
def _binary(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    if a.get("broadcast") or "axis" in a:  # opset < 7 explicit broadcasting
        raise _Refuse("legacy 'broadcast'/'axis' attributes (opset < 7) are not supported")
    _only_attrs(a, {"broadcast"})
    x, y = c.env[n.input[0]], c.env[n.input[1]]
    if n.op_type == "Mul" and isinstance(x, np.ndarray) and isinstance(y, Value):
        x, y = y, x
    if (
        n.op_type == "Mul"
        and isinstance(x, Value)
        and isinstance(y, np.ndarray)
        and y.size == 1
        and y.ndim <= len(c.shape(x))
        and y.dtype == np.float32
    ):  # x * scalar constant: the registry's smul (float32 scalar, so the product is the same)
        return [c.add("smul", [x], scalar=float(y.reshape(-1)[0]))]
    r = max(len(c.shape(x)), len(c.shape(y)))
    return [c.add(_BINARY[n.op_type], [c.value(c.rank_up(x, r)), c.value(c.rank_up(y, r))])]


@_handles("MatMul")
def _matmul(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, set())
    x, y = c.env[n.input[0]], c.env[n.input[1]]
    xs, ys = c.shape(x), c.shape(y)
    if not xs or not ys:
        raise _Refuse("matmul of a scalar is not defined")
    if len(xs) == 1:
        x = c.reshape(x, (1,) + xs)
    if len(ys) == 1:
        y = c.reshape(y, ys + (1,))
    r = max(len(c.shape(x)), len(c.shape(y)))
    out = c.add("matmul", [c.value(c.rank_up(x, r)), c.value(c.rank_up(y, r))])
    s = list(c.g.shape_of(out))
    if len(ys) == 1:
        s.pop(-1)
    if len(xs) == 1:
        s.pop(-1 if len(ys) == 1 else -2)  # two vectors: a 0-d result
    return [c.reshape(out, s)]


def _transposed(c: _Ctx, t: Tensor) -> Value:
    if isinstance(t, np.ndarray):
        return c.value(np.ascontiguousarray(t.T))
    return c.add("transpose", [c.value(t)], perm=(1, 0))


@_handles("Gemm")
def _gemm(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"alpha", "beta", "transA", "transB", "broadcast"})
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    ta, tb = int(a.get("transA", 0)), int(a.get("transB", 0))
    x, w = c.env[n.input[0]], c.env[n.input[1]]
    bias_name = _opt_input(n, 2)
    b = c.env[bias_name] if bias_name else None
    if len(c.shape(x)) != 2 or len(c.shape(w)) != 2:
        raise _Refuse(f"Gemm needs 2-d A and B, got {c.shape(x)} and {c.shape(w)}")
    # matmul + add, the form the rules work on (as the torch frontend builds nn.Linear);
    # a constant operand is transposed at import time, so it stays one weight
    xv = _transposed(c, x) if ta else c.value(x)
    wv = _transposed(c, w) if tb else c.value(w)
    out = c.add("matmul", [xv, wv])
    if alpha != 1.0:
        out = c.add("smul", [out], scalar=alpha)
    if b is not None and beta != 0.0:
        bv = c.value(c.rank_up(b, 2))
        if beta != 1.0:
            bv = c.add("smul", [bv], scalar=beta)
        out = c.add("add", [out, bv])
    return [out]


def _spatial_pads(
    c: _Ctx, a: dict[str, Any], in_hw: Sequence[int], kernel: Sequence[int], strides: Sequence[int], dil: Sequence[int]
) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) from ``pads`` or ``auto_pad``."""
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("NOTSET", ""):
        pads = list(a.get("pads", [0, 0, 0, 0]))
        if len(pads) != 4:
            raise _Refuse(f"pads {pads} must have 4 entries for 2-d")
        return pads[0], pads[1], pads[2], pads[3]
    if auto == "VALID":
        return 0, 0, 0, 0
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for i in range(2):
            total = max(
                (math.ceil(in_hw[i] / strides[i]) - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - in_hw[i], 0
            )
            small, big = total // 2, total - total // 2
            begin.append(small if auto == "SAME_UPPER" else big)
            end.append(big if auto == "SAME_UPPER" else small)
        return begin[0], begin[1], end[0], end[1]
    raise _Refuse(f"auto_pad '{auto}' is not supported")


def _check_2d(c: _Ctx, x: Tensor, what: str) -> tuple[int, ...]:
    s = c.shape(x)
    if len(s) != 4:
        raise _Refuse(f"only 2-d {what} (NCHW input) is supported, got input shape {s}")
    return s


@_handles("Conv")
def _conv(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    x, w = c.env[n.input[0]], c.env[n.input[1]]
    xs, ws = _check_2d(c, x, "convolution"), c.shape(w)
    if len(ws) != 4:
        raise _Refuse(f"weight must be OIHW, got {ws}")
    if "kernel_shape" in a and tuple(a["kernel_shape"]) != ws[2:]:
        raise _Refuse(f"kernel_shape {a['kernel_shape']} does not match the weight {ws}")
    strides, dil = tuple(a.get("strides", (1, 1))), tuple(a.get("dilations", (1, 1)))
    t, l_, b, r = _spatial_pads(c, a, xs[2:], ws[2:], strides, dil)
    xv = c.value(x)
    if (t, l_) != (b, r):  # asymmetric: zero-pad explicitly, then convolve without padding
        if min(t, l_, b, r) < 0:
            raise _Refuse(f"negative pads {[t, l_, b, r]} are not supported")
        xv = c.add("pad2d", [xv], pads=(t, b, l_, r))
        t = l_ = 0
    out = c.add(
        "conv2d", [xv, c.value(w)], stride=strides, padding=(t, l_), dilation=dil, groups=int(a.get("group", 1))
    )
    bias = _opt_input(n, 2)
    if bias:
        bv = c.env[bias]
        if c.shape(bv) != (ws[0],):
            raise _Refuse(f"bias must be [{ws[0]}], got {c.shape(bv)}")
        out = c.add("add", [out, c.value(c.reshape(bv, (1, ws[0], 1, 1)))])
    return [out]


def _pool(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any], op: str) -> list[Tensor]:
    _one_output(n)
    x = c.env[n.input[0]]
    xs = c.shape(x)
    kernel = tuple(a["kernel_shape"])
    one_d = len(xs) == 3 and len(kernel) == 1
    if one_d:  # 1-d pooling is 2-d pooling over a height of 1
        a = {
            **a,
            "kernel_shape": (1, *kernel),
            "strides": (1, *a.get("strides", (1,))),
            "dilations": (1, *a.get("dilations", (1,))),
        }
        if "pads" in a:
            a["pads"] = (0, a["pads"][0], 0, a["pads"][1])
        x = c.reshape(c.value(x), (xs[0], xs[1], 1, xs[2]))
        kernel = tuple(a["kernel_shape"])
    hw = _check_2d(c, x, "pooling")[2:]
    if len(kernel) != 2:
        raise _Refuse(f"kernel_shape {kernel} must have 2 entries")
    dil = tuple(a.get("dilations", (1, 1)))
    strides = tuple(a.get("strides", (1, 1)))
    ceil = int(a.get("ceil_mode", 0))
    t, l_, b, r = _spatial_pads(c, a, hw, kernel, strides, dil)
    spans = [hw[i] + p + q - (kernel[i] - 1) * dil[i] - 1 for i, (p, q) in enumerate(((t, b), (l_, r)))]
    if all(span % st == 0 for span, st in zip(spans, strides)):
        ceil = 0  # the windows tile exactly: rounding up adds none
    if dil != (1, 1):
        if op != "avgpool2d" or ceil:
            raise _Refuse(f"dilations {dil} are not supported (eqsat pooling has none)")
        include = int(a.get("count_include_pad", 0))
        dilated = _avgpool_as_conv(c, c.value(x), kernel, strides, dil, (t, b, l_, r), include)
        ds = c.shape(dilated)
        return [c.reshape(dilated, (ds[0], ds[1], ds[3])) if one_d else dilated]
    attrs: dict[str, Any] = {"kernel": kernel, "stride": strides, "ceil_mode": ceil}
    xv = c.value(x)
    include = int(a.get("count_include_pad", 0))
    if op == "avgpool2d":
        attrs["count_include_pad"] = include
    fits = all(2 * p <= k for p, k in zip((t, l_, b, r), kernel * 2))
    if (t, l_) == (b, r) and fits:
        out = c.add(op, [xv], padding=(t, l_), **attrs)
    elif op == "avgpool2d" and include and not ceil:  # padded zeros count: pad explicitly, then pool
        out = c.add(op, [c.add("pad2d", [xv], pads=(t, b, l_, r))], padding=(0, 0), **attrs)
    elif op == "avgpool2d" and not ceil:  # padding over half the kernel: a depthwise convolution
        out = _avgpool_as_conv(c, xv, kernel, strides, dil, (t, b, l_, r), include)
    elif not ceil and fits and all((max(p, q) - p) % s == 0 for p, q, s in ((t, b, strides[0]), (l_, r, strides[1]))):
        # asymmetric (auto_pad SAME_*): pool with the larger pad on both sides, then drop the
        # outputs whose windows start in the extra padding
        ph, pw = max(t, b), max(l_, r)
        out = c.add(op, [xv], padding=(ph, pw), **attrs)
        for ax, p, q, s, k, size in ((2, t, b, strides[0], kernel[0], hw[0]), (3, l_, r, strides[1], kernel[1], hw[1])):
            first = (max(p, q) - p) // s
            count = (size + p + q - k) // s + 1
            if (first, count) != (0, c.shape(out)[ax]):
                out = c.add("slice", [out], axis=ax, start=first, end=first + count)
    else:
        raise _Refuse(f"pads {[t, l_, b, r]} with kernel {kernel} (ceil_mode={ceil}) are not supported for pooling")
    if one_d:
        s = c.shape(out)
        return [c.reshape(out, (s[0], s[1], s[3]))]
    return [out]


def _avgpool_as_conv(
    c: _Ctx,
    x: Value,
    kernel: tuple[int, ...],
    strides: tuple[int, ...],
    dil: tuple[int, ...],
    pads: tuple[int, int, int, int],
    include: int,
) -> Value:
    """Average pooling eqsat's avgpool2d cannot express (dilated, or padded past half the kernel).

    The window mean is a depthwise conv2d with weights 1/(kh*kw) over the zero-padded input;
    without ``count_include_pad`` it is divided by the same convolution of padded ones (the
    share of real elements in each window), which depends on no input and so is precomputed.
    """
    _, ch, h, w = c.shape(x)
    k = 1.0 / (kernel[0] * kernel[1])
    conv = {"stride": strides, "padding": (0, 0), "dilation": dil}
    padded = c.add("pad2d", [x], pads=pads) if any(pads) else x
    taps = np.full((ch, 1, *kernel), k, np.float32)
    out = c.add("conv2d", [padded, c.value(taps)], groups=ch, **conv)
    if include or not any(pads):
        return out
    ones = c.value(np.ones((1, 1, h, w), np.float32))
    share = c.add(
        "conv2d", [c.add("pad2d", [ones], pads=pads), c.value(np.full((1, 1, *kernel), k, np.float32))], **conv
    )
    return c.add("div", [out, share])


@_handles("MaxPool")
def _maxpool(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"})
    if a.get("storage_order", 0):
        raise _Refuse("storage_order=1 is not supported")
    return _pool(c, n, a, "maxpool2d")


@_handles("AveragePool")
def _avgpool(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"})
    return _pool(c, n, a, "avgpool2d")


@_handles("GlobalAveragePool")
def _gap(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, set())
    x = c.env[n.input[0]]
    _check_2d(c, x, "global pooling")
    return [c.add("global_avgpool", [c.value(x)])]


@_handles("BatchNormalization")
def _batchnorm(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"epsilon", "momentum", "training_mode", "spatial", "is_test", "consumed_inputs"})
    _one_output(n)
    if a.get("training_mode", 0) or a.get("is_test", 1) == 0:
        raise _Refuse("training mode is not supported: eqsat graphs are for inference")
    if a.get("spatial", 1) != 1:
        raise _Refuse("spatial=0 is not supported")
    ins = [c.value(c.env[i]) for i in n.input[:5]]
    return [c.add("batchnorm", ins, eps=float(a.get("epsilon", 1e-5)))]


@_handles("LayerNormalization")
def _layernorm(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"axis", "epsilon", "stash_type"})
    if a.get("stash_type", 1) != 1:
        raise _Refuse("stash_type other than float32 is not supported")
    x = c.value(c.env[n.input[0]])
    xs = c.shape(x)
    axis = int(a.get("axis", -1)) % len(xs)
    eps = float(a.get("epsilon", 1e-5))
    rows, d = math.prod(xs[:axis]), math.prod(xs[axis:])
    scale = c.env[n.input[1]]
    bias_name = _opt_input(n, 2)
    bias = c.env[bias_name] if bias_name else np.zeros(xs[axis:], np.float32)
    # eqsat's layernorm normalizes the last axis: flatten the normalized dims into one
    flat = c.value(c.reshape(x, (rows, d)))
    params = []
    for what, t in (("scale", scale), ("bias", bias)):
        ts = c.shape(t)
        if ts not in (xs[axis:], (d,)):
            raise _Refuse(f"{what} of shape {ts} does not match the normalized dims {xs[axis:]}")
        params.append(c.value(c.reshape(t, (d,))))
    y = c.reshape(c.add("layernorm", [flat, *params], eps=eps), xs)
    outs: list[Tensor] = [y]
    if sum(1 for o in n.output[1:] if o):  # Mean and InvStdDev, shaped like x with the normalized dims as 1
        stat_shape = xs[:axis] + (1,) * (len(xs) - axis)
        ones = np.full((d, 1), 1.0 / d, np.float32)
        mean = c.add("matmul", [flat, c.value(ones)])  # a row mean as a product with 1/d: eqsat has no reduce op
        centred = c.add("sub", [flat, mean])
        var = c.add("matmul", [c.add("mul", [centred, centred]), c.value(ones)])
        inv = c.add("rsqrt", [var], eps=eps)
        outs += [c.reshape(mean, stat_shape), c.reshape(inv, stat_shape)]
    return outs


@_handles("Softmax")
def _softmax(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"axis"})
    x = c.value(c.env[n.input[0]])
    xs = c.shape(x)
    if c.opset >= 13:
        return [c.add("softmax", [x], axis=int(a.get("axis", -1)))]
    # before opset 13: the input is seen as 2-d [prod(dims before axis), prod(dims from axis)]
    axis = int(a.get("axis", 1)) % len(xs)
    if axis == len(xs) - 1:
        return [c.add("softmax", [x], axis=axis)]
    flat = c.reshape(x, (math.prod(xs[:axis]), math.prod(xs[axis:])))
    return [c.reshape(c.add("softmax", [c.value(flat)], axis=1), xs)]


@_handles("Transpose")
def _transpose(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"perm"})
    x = c.value(c.env[n.input[0]])
    perm = tuple(a.get("perm", range(len(c.shape(x)) - 1, -1, -1)))
    return [c.add("transpose", [x], perm=perm)]


def _reshape_to(c: _Ctx, x: Tensor, shape: Sequence[int]) -> list[Tensor]:
    xv = c.value(x)
    out = c.reshape(xv, shape)
    # a reshape to the same shape is still a node, so every ONNX output is its own value
    return [out if out != xv else c.add("identity", [xv])]


@_handles("Reshape")
def _reshape(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"allowzero"})
    x = c.env[n.input[0]]
    xs = c.shape(x)
    target = c.ints(n.input[1], "shape")
    if a.get("allowzero", 0) and 0 in target:
        raise _Refuse(f"allowzero=1 with a 0 in shape {target} makes an empty tensor")
    dims = [xs[i] if d == 0 else d for i, d in enumerate(target)]
    if dims.count(-1) > 1:
        raise _Refuse(f"shape {target} has more than one -1")
    if -1 in dims:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or math.prod(xs) % known:
            raise _Refuse(f"cannot infer -1 in shape {target} for input {xs}")
        dims[dims.index(-1)] = math.prod(xs) // known
    if math.prod(dims) != math.prod(xs) or any(d <= 0 for d in dims):
        raise _Refuse(f"cannot reshape {xs} to {target}")
    return _reshape_to(c, x, dims)


@_handles("Flatten")
def _flatten(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"axis"})
    x = c.env[n.input[0]]
    xs = c.shape(x)
    axis = int(a.get("axis", 1))
    axis = axis + len(xs) if axis < 0 else axis
    return _reshape_to(c, x, (math.prod(xs[:axis]), math.prod(xs[axis:])))


def _axes(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[int] | None:
    if "axes" in a:
        return [int(v) for v in a["axes"]]
    name = _opt_input(n, 1)
    return c.ints(name, "axes") if name else None


@_handles("Squeeze")
def _squeeze(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"axes"})
    x = c.env[n.input[0]]
    xs = c.shape(x)
    axes = _axes(c, n, a)
    drop = {i for i, d in enumerate(xs) if d == 1} if axes is None else {ax % len(xs) for ax in axes}
    if any(xs[i] != 1 for i in drop):
        raise _Refuse(f"cannot squeeze axes {sorted(drop)} of shape {xs}")
    return _reshape_to(c, x, [d for i, d in enumerate(xs) if i not in drop])


@_handles("Unsqueeze")
def _unsqueeze(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"axes"})
    x = c.env[n.input[0]]
    xs = list(c.shape(x))
    axes = _axes(c, n, a)
    if axes is None:
        raise _Refuse("Unsqueeze needs axes")
    r = len(xs) + len(axes)
    norm = sorted(ax % r for ax in axes)
    if len(set(norm)) != len(norm):
        raise _Refuse(f"axes {axes} repeat")
    for ax in norm:
        xs.insert(ax, 1)
    return _reshape_to(c, x, xs)


@_handles("Concat")
def _concat(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"axis"})
    if "axis" not in a:
        raise _Refuse("Concat needs an axis")
    return [c.add("concat", [c.value(c.env[i]) for i in n.input], axis=int(a["axis"]))]


@_handles("Split")
def _split(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"axis", "split", "num_outputs"})
    x = c.value(c.env[n.input[0]])
    xs = c.shape(x)
    axis = int(a.get("axis", 0)) % len(xs)
    outs = len(n.output)
    if "split" in a:
        sizes = [int(s) for s in a["split"]]
    elif _opt_input(n, 1):
        sizes = c.ints(n.input[1], "split")
    elif "num_outputs" in a:
        k = int(a["num_outputs"])
        step = -(-xs[axis] // k)
        sizes = [min(step, xs[axis] - i * step) for i in range(k)]
    else:
        if xs[axis] % outs:
            raise _Refuse(f"dimension {xs[axis]} does not split evenly into {outs} outputs")
        sizes = [xs[axis] // outs] * outs
    if len(sizes) != outs:
        raise _Refuse(f"{len(sizes)} split sizes for {outs} outputs")
    if any(s <= 0 for s in sizes):
        raise _Refuse(f"split sizes {sizes} include an empty piece")
    return list(c.add_multi("split", [x], axis=axis, sizes=tuple(sizes)))


@_handles("Slice")
def _slice(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    x = c.env[n.input[0]]
    xs = c.shape(x)
    if c.opset < 10:
        _only_attrs(a, {"starts", "ends", "axes"})
        starts, ends = list(a["starts"]), list(a["ends"])
        axes = list(a.get("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        _only_attrs(a, set())
        starts, ends = c.ints(n.input[1], "starts"), c.ints(n.input[2], "ends")
        axes = c.ints(n.input[3], "axes") if _opt_input(n, 3) else list(range(len(starts)))
        steps = c.ints(n.input[4], "steps") if _opt_input(n, 4) else [1] * len(starts)
    if any(s != 1 for s in steps):
        raise _Refuse(f"steps {steps}: eqsat's slice is contiguous (step 1) only")
    out: Tensor = x
    for ax, st, en in zip(axes, starts, ends):
        ax %= len(xs)
        dim = xs[ax]
        st = min(max(st + dim if st < 0 else st, 0), dim)
        en = min(max(en + dim if en < 0 else en, 0), dim)
        if st >= en:
            raise _Refuse(f"slice [{st}:{en}] of axis {ax} is empty")
        if (st, en) != (0, dim):
            out = c.add("slice", [c.value(out)], axis=ax, start=st, end=en)
    return [out if out is not x else c.add("identity", [c.value(x)])]


@_handles("Pad")
def _pad(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    _only_attrs(a, {"mode", "pads", "value"})
    mode = a.get("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode != "constant":
        raise _Refuse(f"mode '{mode}' is not supported; eqsat pads with zeros only")
    x = c.env[n.input[0]]
    xs = c.shape(x)
    r = len(xs)
    if c.opset < 11:
        pads, value = list(a["pads"]), float(a.get("value", 0.0))
        axes = list(range(r))
    else:
        pads = c.ints(n.input[1], "pads")
        value = float(c.const(n.input[2], "constant_value").reshape(-1)[0]) if _opt_input(n, 2) else 0.0
        axes = [ax % r for ax in c.ints(n.input[3], "axes")] if _opt_input(n, 3) else list(range(r))
    if value != 0.0:
        raise _Refuse(f"constant_value {value}: eqsat pads with zeros only")
    k = len(axes)
    begin = dict(zip(axes, pads[:k]))
    end = dict(zip(axes, pads[k:]))
    if any(v < 0 for v in pads):
        raise _Refuse(f"negative pads {pads} (cropping) are not supported")
    if r < 2 or any(begin.get(i, 0) or end.get(i, 0) for i in range(r - 2)):
        raise _Refuse(f"pads {pads} touch axes other than the last two; eqsat's pad2d pads the last two only")
    h, w = r - 2, r - 1
    p = (begin.get(h, 0), end.get(h, 0), begin.get(w, 0), end.get(w, 0))
    if p == (0, 0, 0, 0):
        return [c.add("identity", [c.value(x)])]
    return [c.add("pad2d", [c.value(x)], pads=p)]


@_handles("Constant")
def _constant(c: _Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    if "value" in a:
        return [numpy_helper.to_array(a["value"])]
    if "value_float" in a:
        return [np.array(a["value_float"], np.float32)]
    if "value_floats" in a:
        return [np.array(a["value_floats"], np.float32)]
    if "value_int" in a:
        return [np.array(a["value_int"], np.int64)]
    if "value_ints" in a:
        return [np.array(a["value_ints"], np.int64)]
    raise _Refuse(f"attribute(s) {sorted(a)} are not supported (sparse or string constants)")


# op types a model may use freely; Sqrt is understood only as Reciprocal(Sqrt(x)), eqsat's rsqrt
ONNX_OPS: frozenset[str] = frozenset(HANDLERS) - {"Sqrt"}


# ---------------------------------------------------------------- the model


def _type_problem(t: onnx.TypeProto) -> str:
    """Why a graph input/output type cannot be used, or '' when it is a static float32 tensor."""
    if not t.HasField("tensor_type"):
        return f"is a {t.WhichOneof('value')}, not a tensor"
    tt = t.tensor_type
    if tt.elem_type != _FLOAT:
        return f"has dtype {onnx.helper.tensor_dtype_to_np_dtype(tt.elem_type)}; eqsat computes in float32 only"
    return ""


def _static_shape(vi: onnx.ValueInfoProto) -> tuple[int, ...] | None:
    tt = vi.type.tensor_type
    if not tt.HasField("shape"):
        return None
    dims = []
    for d in tt.shape.dim:
        if not d.HasField("dim_value"):
            return None
        dims.append(int(d.dim_value))
    return tuple(dims)


def _opset(model: onnx.ModelProto) -> int:
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return int(o.version)
    return 1


def from_onnx(model: str | Path | onnx.ModelProto, name: str | None = None) -> Graph:
    """Import an ONNX model (a file path or a ``ModelProto``) into an eqsat graph.

    Raises ``FrontendError`` (one line: the ONNX node, its op type and why) for anything
    outside eqsat's op set, dtype (float32) or static shapes.
    """
    where = ""
    if not isinstance(model, onnx.ModelProto):
        where = f"{model}: "
        if not Path(model).is_file():
            raise FrontendError(f"ONNX file '{model}' does not exist")
        try:
            model = onnx.load(str(model))
        except Exception as e:  # protobuf parse errors have no common base class
            raise FrontendError(f"{where}not a readable ONNX model ({type(e).__name__}: {e})") from None
    og = model.graph
    graph = Graph(name=name or og.name or "onnx")
    c = _Ctx(graph, _opset(model))
    for init in og.initializer:
        arr = numpy_helper.to_array(init)
        c.env[init.name] = arr
        c.names[id(arr)] = (arr, init.name)
    for vi in og.input:
        if vi.name in c.env:  # an initializer listed as an input too (older exporters): a constant
            continue
        why = _type_problem(vi.type)
        shape = _static_shape(vi)
        if not why and (shape is None or any(d <= 0 for d in shape)):
            why = "has a dynamic or empty shape; eqsat needs static positive dimensions"
        if why:
            raise FrontendError(f"{where}ONNX graph input '{vi.name}' {why}")
        assert shape is not None
        graph.add("input", [], {"name": vi.name, "shape": shape}, origin=f"ONNX input '{vi.name}'")
        c.env[vi.name] = Value(max(graph.nodes), 0)
    with bar(f"import {graph.name}", total=len(og.node), unit="node") as progress:
        for idx, node in enumerate(og.node):
            progress.update(1)
            label = f"ONNX node '{node.name or f'#{idx}'}' ({node.op_type})"
            c.origin = label
            if node.domain not in ("", "ai.onnx"):
                raise FrontendError(f"{where}{label}: domain '{node.domain}' is not supported")
            handler = HANDLERS.get(node.op_type)
            if handler is None:
                raise FrontendError(f"{where}{label}: op type '{node.op_type}' is not in eqsat's op set")
            missing = [i for i in node.input if i and i not in c.env]
            if missing:
                raise FrontendError(f"{where}{label}: input(s) {missing} are not defined before it")
            try:
                outs = handler(c, node, _attrs(node))
            except _Refuse as e:
                raise FrontendError(f"{where}{label}: {e}") from None
            except EqsatError as e:  # a shape or attribute the registry rejects
                raise FrontendError(f"{where}{label}: {e}") from None
            for oname, t in zip(node.output, outs):
                if oname:
                    c.env[oname] = t
    c.origin = "ONNX graph output"
    for vi in og.output:
        if vi.name not in c.env:
            raise FrontendError(f"{where}ONNX graph output '{vi.name}' is not computed by any node")
        t = c.env[vi.name]
        why = _type_problem(vi.type) if vi.type.HasField("tensor_type") and vi.type.tensor_type.elem_type else ""
        if why:
            raise FrontendError(f"{where}ONNX graph output '{vi.name}' {why}")
        try:
            v = c.value(t, f" '{vi.name}'")
        except _Refuse as e:
            raise FrontendError(f"{where}ONNX graph output '{vi.name}': {e}") from None
        declared = _static_shape(vi)
        if declared is not None and declared != graph.shape_of(v):
            raise FrontendError(
                f"{where}ONNX graph output '{vi.name}' is declared {declared} but eqsat computes {graph.shape_of(v)}"
            )
        graph.outputs.append(v)
    graph.validate()
    return graph


__all__ = ["HANDLERS", "ONNX_OPS", "from_onnx"]
