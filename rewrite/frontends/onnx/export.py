"""``to_onnx``: an eqsat graph as a standard ONNX model that onnxruntime runs.

Every registry op is spelled with standard ONNX ops (opset 20); fused ops become their parts
(``conv2d_bias_act`` → Conv + activation) and ops ONNX lacks become a few ops that compute
the same (``silu`` → x * Sigmoid(x), ``groupnorm`` → reshape, mean, variance, scale, shift).
int64 and bool values keep their type.  Reading the model back with ``from_onnx`` gives an
equivalent graph, not necessarily the same nodes (``save``/``load`` in :mod:`.exact` keep
them exactly).  An op with no spelling raises a one-line ``FrontendError`` naming the node.

    >>> from rewrite.ir.builder import GraphBuilder
    >>> b = GraphBuilder()
    >>> g = b.build([b.relu(b.input("x", (2, 3)))])
    >>> [n.op_type for n in to_onnx(g).graph.node]
    ['Relu', 'Identity']
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import torch
from onnx import helper, numpy_helper

from rewrite.frontends.onnx.context import ONNX_OF
from rewrite.ir.dtypes import FLOAT32, INT64, INT_RANGE, STORED_INT
from rewrite.ir.errors import FrontendError, UsageError
from rewrite.ir.graph import Graph, Node, Value, expect_graph
from rewrite.ir.ops import ACTS, OPS
from rewrite.ir.ops.resize import TORCH
from rewrite.ir.ops.winograd import AT, BT, G

OPSET = 20  # Gelu(approximate="tanh") needs 20


def value_name(v: Value) -> str:
    return f"v{v.node}.{v.index}"


def _array(t: torch.Tensor, what: str) -> np.ndarray:
    try:
        return t.detach().cpu().contiguous().numpy()
    except TypeError as e:  # bfloat16 and friends have no numpy dtype
        raise FrontendError(f"{what}: dtype {t.dtype} cannot be written to ONNX ({e})") from None


class Writer:
    """Accumulates ONNX nodes and constant initializers for one graph."""

    def __init__(self, graph: Graph) -> None:
        self.g = graph
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.names: dict[Value, str] = {}
        self._k = 0

    def fresh(self, hint: str) -> str:
        self._k += 1
        return f"{hint}.{self._k}"

    def const(self, arr: np.ndarray, hint: str) -> str:
        name = self.fresh(hint)
        self.inits.append(numpy_helper.from_array(arr, name))
        return name

    def f32(self, value: float, hint: str = "scalar") -> str:
        return self.const(np.array(value, np.float32), hint)

    def ints(self, values: Any, hint: str) -> str:
        return self.const(np.array(list(values), np.int64), hint)

    def emit(self, op_type: str, inputs: list[str], out: str | None = None, **attrs: Any) -> str:
        out = out or self.fresh(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out


_REDUCE = {
    "reduce_sum": "ReduceSum",
    "reduce_mean": "ReduceMean",
    "reduce_max": "ReduceMax",
    "reduce_min": "ReduceMin",
    "reduce_prod": "ReduceProd",
}

Emitter = Callable[[Writer, Node, list[str], list[str]], None]
_EMIT: dict[str, Emitter] = {}


def _emits(*ops: str) -> Callable[[Emitter], Emitter]:
    def deco(fn: Emitter) -> Emitter:
        for op in ops:
            _EMIT[op] = fn
        return fn

    return deco


def _shape(w: Writer, n: Node, i: int) -> tuple[int, ...]:
    return w.g.shape_of(n.inputs[i])


def _act(w: Writer, act: str, x: str, out: str) -> str:
    """A fused contraction's ``act``: the registry op it names (``ACTS``), as the registry spells it."""
    spelling = OPS[ACTS[act]].onnx if act in ACTS else None
    if spelling is None:
        raise FrontendError(f"activation '{act}' has no ONNX spelling")
    return w.emit(spelling.op_type, [x], out, **spelling.export_attrs())


def _spelled(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    """An op the registry spells (``OpDef.onnx``) with no attribute of its own (``matmul``, ``relu``): one node
    of that type, with the attributes it implies."""
    spelling = OPS[n.op].onnx
    assert spelling is not None
    w.emit(spelling.op_type, ins, outs[0], **spelling.export_attrs())


def _type(op: str) -> str:
    """The ONNX op type the registry spells ``op`` with (``OpDef.onnx``), for an emitter that writes its
    attributes (``conv2d``'s strides and pads as Conv's)."""
    spelling = OPS[op].onnx
    assert spelling is not None, op
    return spelling.op_type


def _conv_attrs(a: Any, weight_shape: tuple[int, ...]) -> dict[str, Any]:
    p = a["padding"]
    return {
        "kernel_shape": list(weight_shape[2:]),
        "strides": list(a["stride"]),
        "pads": [p[0], p[1], p[0], p[1]],
        "dilations": list(a["dilation"]),
        "group": a["groups"],
    }


@_emits("ne")
def _ne(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit("Not", [w.emit("Equal", ins)], outs[0])


@_emits("lrn")
def _emit_lrn(w: Writer, node: Node, ins: list[str], outs: list[str]) -> None:
    # one LRN node (onnxruntime's CPU LRN takes an odd size only; an even one is still ONNX's: its window reaches
    # one channel further after c than before it)
    w.emit("LRN", ins, outs[0], **{k: node.attrs[k] for k in ("size", "alpha", "beta", "bias")})


@_emits("silu")
def _silu(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit("Mul", [ins[0], w.emit("Sigmoid", ins)], outs[0])


@_emits("smul")
def _smul(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit("Mul", [ins[0], w.f32(n.attrs["scalar"])], outs[0])


@_emits("clamp")
def _clamp(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit("Clip", [ins[0], w.f32(n.attrs["min"], "min"), w.f32(n.attrs["max"], "max")], outs[0])


@_emits("pow")
def _pow(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit("Pow", [ins[0], w.f32(n.attrs["exponent"], "exponent")], outs[0])


# ONNX has no log1p / expm1: plain ONNX gets Log(x + 1) and Exp(x) - 1, which agree to ~6e-8 absolute (one
# float32 rounding near 1) but lose the relative accuracy at tiny x; ``rewrite.save`` keeps the ops themselves
@_emits("log1p")
def _log1p(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit("Log", [w.emit("Add", [ins[0], w.f32(1.0, "one")])], outs[0])


@_emits("expm1")
def _expm1(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit("Sub", [w.emit("Exp", ins), w.f32(1.0, "one")], outs[0])


@_emits("atan2")
def _atan2(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    """ONNX has no Atan2: Atan(y / x), plus pi with y's sign where x is negative (-0 too: 1/x < 0).  Where y / x
    is NaN for non-NaN operands it is made the quotient's limit: both infinite, sign(y) * sign(x) (+-pi/4, +-3pi/4);
    both zero, y itself (+-0, +-pi past x's sign), as C's atan2."""
    y, x = ins
    zero = w.f32(0.0, "zero")

    def negative(v: str) -> str:  # v < 0 or v is -0
        return w.emit("Or", [w.emit("Less", [v, zero]), w.emit("Less", [w.emit("Reciprocal", [v]), zero])])

    both_inf = w.emit("And", [w.emit("IsInf", [y]), w.emit("IsInf", [x])])
    ratio = w.emit("Where", [both_inf, w.emit("Mul", [w.emit("Sign", [y]), w.emit("Sign", [x])]), w.emit("Div", ins)])
    both_zero = w.emit("And", [w.emit("Equal", [y, zero]), w.emit("Equal", [x, zero])])
    q = w.emit("Where", [both_zero, y, w.emit("Atan", [ratio])])
    turn = w.emit("Where", [negative(y), w.f32(-math.pi, "minus_pi"), w.f32(math.pi, "pi")])
    w.emit("Where", [negative(x), w.emit("Add", [q, turn]), q], outs[0])


@_emits("rsqrt")
def _rsqrt(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    x = w.emit("Add", [ins[0], w.f32(n.attrs["eps"], "eps")]) if n.attrs["eps"] else ins[0]
    w.emit("Reciprocal", [w.emit("Sqrt", [x])], outs[0])


def _sign_fix(w: Writer, r: str, y: str, zero: str) -> str:
    """Where a truncated remainder ``r`` of a division by ``y`` is nonzero with the other sign than ``y``: where
    floor division is one less and the floor remainder ``r + y``."""
    nonzero = w.emit("Not", [w.emit("Equal", [r, zero])])
    rn, yn = w.emit("Less", [r, zero]), w.emit("Less", [y, zero])
    differ = w.emit("Or", [w.emit("And", [rn, w.emit("Not", [yn])]), w.emit("And", [w.emit("Not", [rn]), yn])])
    return w.emit("And", [nonzero, differ])


@_emits("mod")
def _mod(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    """trunc: Mod fmod=1; floor: Mod fmod=0 for int64 (opset 20 takes it for integers only), for float32 the
    truncated remainder plus the divisor where their signs differ (torch.remainder's own way)."""
    floor, f32 = n.attrs["mode"] == "floor", w.g.dtype_of(n.inputs[0]) == "float32"
    if not (floor and f32):
        w.emit("Mod", ins, outs[0], fmod=0 if floor else 1)
        return
    r = w.emit("Mod", ins, fmod=1)
    w.emit("Where", [_sign_fix(w, r, ins[1], w.f32(0.0, "zero")), w.emit("Add", [r, ins[1]]), r], outs[0])


@_emits("idiv")
def _idiv(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    """int64 Div truncates; floor division is one less where the remainder's sign differs from the divisor's."""
    if n.attrs["mode"] == "trunc":
        w.emit("Div", ins, outs[0])
        return
    q, r = w.emit("Div", ins), w.emit("Mod", ins, fmod=1)
    one = w.const(np.ones((), np.int64), "one")
    fix = _sign_fix(w, r, ins[1], w.const(np.zeros((), np.int64), "zero"))
    w.emit("Where", [fix, w.emit("Sub", [q, one]), q], outs[0])


@_emits("cast")
def _cast(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    to, src = n.attrs["dtype"], w.g.dtype_of(n.inputs[0])
    if to in STORED_INT and src in (FLOAT32, INT64):  # eqsat's cast saturates; ONNX's leaves that undefined
        lo, hi = INT_RANGE[to]
        kind = np.float32 if src == FLOAT32 else np.int64
        x = w.emit("Clip", [ins[0], w.const(np.array(lo, kind), "lo"), w.const(np.array(hi, kind), "hi")])
        w.emit("Cast", [x], outs[0], to=ONNX_OF[to])
        return
    w.emit("Cast", ins, outs[0], to=ONNX_OF[to])


@_emits("masked_fill")
def _masked_fill(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit("Where", [ins[1], w.f32(n.attrs["value"], "fill"), ins[0]], outs[0])


@_emits("linear")
def _linear(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    if len(_shape(w, n, 0)) == 2:
        w.emit("Gemm", ins, outs[0], transB=1)
    else:
        wt = w.emit("Transpose", [ins[1]], perm=[1, 0])
        w.emit("Add", [w.emit("MatMul", [ins[0], wt]), ins[2]], outs[0])


@_emits("matmul_at")
def _matmul_at(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    r = len(_shape(w, n, 0))
    at = w.emit("Transpose", [ins[0]], perm=[*range(r - 2), r - 1, r - 2])
    w.emit("MatMul", [at, ins[1]], outs[0])


@_emits("matmul_integer")
def _matmul_integer(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    zp = w.const(np.array(n.attrs["a_zero_point"], np.uint8), "a_zero_point")
    w.emit("MatMulInteger", [ins[0], ins[1], zp], outs[0])


@_emits("conv2d_integer")
def _conv2d_integer(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    zp = w.const(np.array(n.attrs["a_zero_point"], np.uint8), "x_zero_point")
    w.emit("ConvInteger", [ins[0], ins[1], zp], outs[0], **_conv_attrs(n.attrs, _shape(w, n, 1)))


@_emits("matmul_bias_act")
def _matmul_bias_act(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    _act(w, n.attrs["act"], w.emit("Add", [w.emit(_type("matmul"), ins[:2]), ins[2]]), outs[0])


@_emits("conv2d", "conv2d_im2col")
def _conv2d(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit(_type("conv2d"), ins, outs[0], **_conv_attrs(n.attrs, _shape(w, n, 1)))


@_emits("conv2d_bias_act", "conv2d_im2col_bias_act")
def _conv2d_bias_act(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    _act(w, n.attrs["act"], w.emit(_type("conv2d"), ins, **_conv_attrs(n.attrs, _shape(w, n, 1))), outs[0])


# Winograd F(4x4, 3x3) transforms (rewrite/ir/ops/winograd.py) as the linear maps they are:
# weights: one MatMul by kron(G, G); input: a per-channel Conv whose 36 6x6 kernels are the
# outer products of BT's rows, stride 4, on the input padded to whole tiles; output: a per-channel
# ConvTranspose with AT's outer products, stride 4, cropped, then bias and activation.
def _outer(left: Any, right: Any) -> np.ndarray:
    a, b = np.array(left, dtype=np.float64), np.array(right, dtype=np.float64)
    return np.einsum("ai,bj->abij", a, b).reshape(a.shape[0] * b.shape[0], 1, a.shape[1], b.shape[1])


@_emits("winograd_weight")
def _winograd_weight(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    k, c = _shape(w, n, 0)[:2]
    gg = _outer(G, G).reshape(36, 9).T.astype(np.float32)  # [9, 36]
    flat = w.emit("Reshape", [ins[0], w.ints([k * c, 9], "shape")])
    u = w.emit("MatMul", [flat, w.const(gg, "winograd_gg")])
    u = w.emit("Reshape", [u, w.ints([k, c, 36], "shape")])
    w.emit("Transpose", [u], outs[0], perm=[2, 1, 0])


@_emits("winograd_input", "winograd_input_t")
def _winograd_input(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    nb, c, h, wd = _shape(w, n, 0)
    ph, pw = n.attrs["padding"]
    th, tw = -(-(h + 2 * ph - 2) // 4), -(-(wd + 2 * pw - 2) // 4)
    pads = [0, 0, ph, pw, 0, 0, 4 * th + 2 - h - ph, 4 * tw + 2 - wd - pw]
    x = w.emit("Pad", [ins[0], w.ints(pads, "pads")])
    x = w.emit("Reshape", [x, w.ints([nb * c, 1, 4 * th + 2, 4 * tw + 2], "shape")])
    v = w.emit("Conv", [x, w.const(_outer(BT, BT).astype(np.float32), "winograd_bt")], strides=[4, 4])
    v = w.emit("Reshape", [v, w.ints([nb, c, 36, th * tw], "shape")])
    if n.op == "winograd_input_t":  # [36, C, N*T]
        v = w.emit("Transpose", [v], perm=[2, 1, 0, 3])
        w.emit("Reshape", [v, w.ints([36, c, nb * th * tw], "shape")], outs[0])
        return
    v = w.emit("Transpose", [v], perm=[2, 0, 3, 1])
    w.emit("Reshape", [v, w.ints([36, nb * th * tw, c], "shape")], outs[0])


@_emits("winograd_output", "winograd_output_bias_act")
def _winograd_output(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    _, p, k = _shape(w, n, 0)
    oh, ow = n.attrs["out"]
    th, tw = -(-oh // 4), -(-ow // 4)
    nb = p // (th * tw)
    m = w.emit("Reshape", [ins[0], w.ints([36, nb, th, tw, k], "shape")])
    m = w.emit("Transpose", [m], perm=[1, 4, 0, 2, 3])
    m = w.emit("Reshape", [m, w.ints([nb * k, 36, th, tw], "shape")])
    y = w.emit(
        "ConvTranspose",
        [m, w.const(_outer(np.array(AT).T, np.array(AT).T).astype(np.float32), "winograd_at")],
        strides=[4, 4],
    )
    y = w.emit("Reshape", [y, w.ints([nb, k, 4 * th, 4 * tw], "shape")])
    y = w.emit("Slice", [y, w.ints([0, 0], "starts"), w.ints([oh, ow], "ends"), w.ints([2, 3], "axes")])
    if n.op == "winograd_output":
        w.emit("Identity", [y], outs[0])
        return
    b = w.emit("Reshape", [ins[1], w.ints([1, k, 1, 1], "shape")])
    _act(w, n.attrs["act"], w.emit("Add", [y, b]), outs[0])


# The blocked layout NCHWc (rewrite/ir/ops/blocked.py) as the reshapes and transposes it is; a blocked
# convolution is a Conv between a conversion out of the layout and one back into it.
def _block(w: Writer, x: str, shape: tuple[int, ...], b: int, axis: int, out: str | None = None) -> str:
    """``shape``'s ``axis`` (0: weights' K, 1: activations' C) zero-padded to whole blocks of ``b``, the
    block's lanes moved innermost."""
    c = shape[axis]
    cb = -(-c // b)
    if cb * b != c:
        pads = [0] * (2 * len(shape))
        pads[len(shape) + axis] = cb * b - c
        x = w.emit("Pad", [x, w.ints(pads, "pads")])
    split = [*shape[:axis], cb, b, *shape[axis + 1 :]]
    x = w.emit("Reshape", [x, w.ints(split, "shape")])
    perm = [d for d in range(len(split)) if d != axis + 1] + [axis + 1]
    return w.emit("Transpose", [x], out, perm=perm)


def _unblock(w: Writer, y: str, shape: tuple[int, ...], channels: int, out: str | None = None) -> str:
    """[N, CB, H, W, b] -> [N, channels, H, W]."""
    n, cb, h, wd, b = shape
    x = w.emit("Reshape", [w.emit("Transpose", [y], perm=[0, 1, 4, 2, 3]), w.ints([n, cb * b, h, wd], "shape")])
    if channels == cb * b:
        return w.emit("Identity", [x], out)
    return w.emit("Slice", [x, w.ints([0], "starts"), w.ints([channels], "ends"), w.ints([1], "axes")], out)


@_emits("to_blocked")
def _to_blocked(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    _block(w, ins[0], _shape(w, n, 0), n.attrs["block"], 1, outs[0])


@_emits("from_blocked")
def _from_blocked(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    _unblock(w, ins[0], _shape(w, n, 0), n.attrs["channels"], outs[0])


@_emits("blocked_weight")
def _blocked_weight(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    _block(w, ins[0], _shape(w, n, 0), n.attrs["block"], 0, outs[0])


@_emits("conv2d_blocked", "conv2d_blocked_bias_act")
def _conv2d_blocked(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    xs, (kb, cg, kh, kw, b) = _shape(w, n, 0), _shape(w, n, 1)
    dense = n.attrs["groups"] == 1
    x = _unblock(w, ins[0], xs, cg if dense else xs[1] * b)
    wt = w.emit("Transpose", [ins[1]], perm=[0, 4, 1, 2, 3])
    wt = w.emit("Reshape", [wt, w.ints([kb * b, cg, kh, kw], "shape")])
    conv_in = [x, wt]
    if n.op == "conv2d_blocked_bias_act":
        k = _shape(w, n, 2)[0]
        bias = w.emit("Pad", [ins[2], w.ints([0, kb * b - k], "pads")]) if k < kb * b else ins[2]
        conv_in.append(bias)
    attrs = _conv_attrs(n.attrs, (kb * b, cg, kh, kw))
    attrs["group"] = 1 if dense else kb * b
    y = w.emit("Conv", conv_in, **attrs)
    if n.op == "conv2d_blocked_bias_act":
        y = _act(w, n.attrs["act"], y, w.fresh("act"))
    _, _, oh, ow, _ = n.shape
    _block(w, y, (xs[0], kb * b, oh, ow), b, 1, outs[0])


@_emits("transpose")
def _transpose(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit(_type("transpose"), ins, outs[0], perm=list(n.attrs["perm"]))


@_emits("reshape")
def _reshape(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit(_type("reshape"), [ins[0], w.ints(n.attrs["shape"], "shape")], outs[0])


@_emits("expand")
def _expand(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit(_type("expand"), [ins[0], w.ints(n.attrs["shape"], "shape")], outs[0])


@_emits("concat")
def _concat(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit(_type("concat"), ins, outs[0], axis=n.attrs["axis"])


@_emits("split")
def _split(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    sizes = w.ints(n.attrs["sizes"], "split")
    w.nodes.append(helper.make_node(_type("split"), [ins[0], sizes], outs, axis=n.attrs["axis"]))


@_emits("slice")
def _slice(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    a = n.attrs
    starts, ends, axes = w.ints([a["start"]], "starts"), w.ints([a["end"]], "ends"), w.ints([a["axis"]], "axes")
    w.emit(_type("slice"), [ins[0], starts, ends, axes], outs[0])


@_emits("maxpool2d", "avgpool2d", "maxpool2d_blocked", "avgpool2d_blocked")
def _pool(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    a, p = n.attrs, n.attrs["padding"]
    attrs = {
        "kernel_shape": list(a["kernel"]),
        "strides": list(a["stride"]),
        "pads": [p[0], p[1], p[0], p[1]],
        "ceil_mode": a["ceil_mode"],
    }
    avg = n.op.startswith("avgpool2d")
    if avg:
        attrs["count_include_pad"] = a["count_include_pad"]
    pool = _type("avgpool2d" if avg else "maxpool2d")
    if not n.op.endswith("_blocked"):
        w.emit(pool, ins, outs[0], **attrs)
        return
    xs = _shape(w, n, 0)  # every lane pooled in the unblocked view, then blocked again
    y = w.emit(pool, [_unblock(w, ins[0], xs, xs[1] * xs[4])], **attrs)
    _, _, oh, ow, b = n.shape
    _block(w, y, (xs[0], xs[1] * b, oh, ow), b, 1, outs[0])


@_emits("adaptive_avgpool")
def _adaptive_avgpool(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    hw, out = _shape(w, n, 0)[2:], n.attrs["output_size"]
    if tuple(out) == (1, 1):
        w.emit("GlobalAveragePool", ins, outs[0])
    elif all(h % o == 0 for h, o in zip(hw, out)):  # equal windows that tile the input: an average pool
        k = [h // o for h, o in zip(hw, out)]
        w.emit("AveragePool", ins, outs[0], kernel_shape=k, strides=k)
    else:
        raise FrontendError(
            f"{n.describe()}: adaptive_avgpool from {hw} to {tuple(out)} has unequal windows; ONNX has no such op"
        )


@_emits("batchnorm")
def _batchnorm(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit(_type("batchnorm"), ins, outs[0], epsilon=n.attrs["eps"])


@_emits("layernorm")
def _layernorm(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit(_type("layernorm"), ins, outs[0], axis=-1, epsilon=n.attrs["eps"])


@_emits("softmax")
def _softmax(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit(_type("softmax"), ins, outs[0], axis=n.attrs["axis"])


@_emits("groupnorm")
def _groupnorm(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    # GroupNormalization's scale changed meaning at opset 21; spelled out, it means the same everywhere
    xs = _shape(w, n, 0)
    g, eps = n.attrs["num_groups"], n.attrs["eps"]
    x = w.emit("Reshape", [ins[0], w.ints([xs[0], g, -1], "groups")])
    mean = w.emit("ReduceMean", [x, w.ints([2], "axes")], keepdims=1)
    d = w.emit("Sub", [x, mean])
    var = w.emit("ReduceMean", [w.emit("Mul", [d, d]), w.ints([2], "axes")], keepdims=1)
    y = w.emit("Div", [d, w.emit("Sqrt", [w.emit("Add", [var, w.f32(eps, "eps")])])])
    y = w.emit("Reshape", [y, w.ints(xs, "shape")])
    per_channel = [1, xs[1]] + [1] * (len(xs) - 2)
    scale = w.emit("Reshape", [ins[1], w.ints(per_channel, "shape")])
    bias = w.emit("Reshape", [ins[2], w.ints(per_channel, "shape")])
    w.emit("Add", [w.emit("Mul", [y, scale]), bias], outs[0])


@_emits("rmsnorm")
def _rmsnorm(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    ms = w.emit("ReduceMean", [w.emit("Mul", [ins[0], ins[0]]), w.ints([-1], "axes")], keepdims=1)
    inv = w.emit("Reciprocal", [w.emit("Sqrt", [w.emit("Add", [ms, w.f32(n.attrs["eps"], "eps")])])])
    w.emit("Mul", [w.emit("Mul", [ins[0], inv]), ins[1]], outs[0])


@_emits(*_REDUCE)
def _reduce(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit(_REDUCE[n.op], [ins[0], w.ints(n.attrs["axes"], "axes")], outs[0], keepdims=n.attrs["keepdim"])


@_emits("reduce_var")
def _reduce_var(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    a, xs = n.attrs, _shape(w, n, 0)
    count = math.prod(xs[i] for i in a["axes"])
    axes = w.ints(a["axes"], "axes")
    d = w.emit("Sub", [ins[0], w.emit("ReduceMean", [ins[0], axes], keepdims=1)])
    s = w.emit("ReduceSum", [w.emit("Mul", [d, d]), axes], keepdims=a["keepdim"])
    # torch.var divides by max(count - correction, 0): 0 gives inf or nan, as it does
    w.emit("Div", [s, w.f32(max(count - a["correction"], 0), "count")], outs[0])


@_emits("pad2d")
def _pad2d(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    rank, (t, b, l_, r) = len(_shape(w, n, 0)), n.attrs["pads"]
    pads = [0] * (rank - 2) + [t, l_] + [0] * (rank - 2) + [b, r]
    w.emit("Pad", [ins[0], w.ints(pads, "pads")], outs[0])


@_emits("pad")
def _pad(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    p = n.attrs["pads"]  # (before_0, after_0, before_1, ...) -> ONNX (begins..., ends...)
    pads = list(p[0::2]) + list(p[1::2])
    w.emit(_type("pad"), [ins[0], w.ints(pads, "pads"), w.f32(n.attrs["value"], "value")], outs[0])


@_emits("resize")
def _resize(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    xs, a = _shape(w, n, 0), n.attrs
    sizes = w.ints([*xs[:2], *a["size"]], "sizes")
    if a["coord"] == TORCH:
        if a["mode"] == "nearest":  # torch's nearest: source index floor(dst * in / out)
            attrs = {"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}
        else:
            coord = "align_corners" if a["align_corners"] else "half_pixel"
            attrs = {"mode": "linear", "coordinate_transformation_mode": coord}
        w.emit(_type("resize"), [ins[0], "", "", sizes], outs[0], **attrs)
        return
    attrs = {"mode": "nearest" if a["mode"] == "nearest" else "linear", "coordinate_transformation_mode": a["coord"]}
    if a["mode"] == "nearest":
        attrs["nearest_mode"] = a["nearest_mode"]
    scales = [a["scale_h"], a["scale_w"]]
    if all(s == 0 or s == o / i for s, o, i in zip(scales, a["size"], xs[2:])):
        w.emit(_type("resize"), [ins[0], "", "", sizes], outs[0], **attrs)
        return
    # ONNX maps by a given scale only through the scales input: float32, the size floor(in * scale)
    full = [o / i if s == 0 else s for s, o, i in zip(scales, a["size"], xs[2:])]
    if any(float(np.float32(s)) != s or math.floor(i * s) != o for s, o, i in zip(full, a["size"], xs[2:])):
        raise FrontendError(
            f"{n.describe()}: resize to {tuple(a['size'])} by scales {tuple(full)} has no ONNX spelling "
            "(scales are float32 and give the size floor(in * scale))"
        )
    w.emit(_type("resize"), [ins[0], "", w.const(np.array([1, 1, *full], np.float32), "scales")], outs[0], **attrs)


@_emits("fill", "eye", "identity_kernel", "avg_kernel")
def _constant(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    """A constant source as an ONNX Constant node holding the tensor its ``ref`` builds."""
    (t,) = OPS[n.op].ref([], n.attrs)
    w.emit("Constant", [], outs[0], value=numpy_helper.from_array(_array(t, n.describe()), outs[0]))


@_emits("embedding")
def _embedding(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit("Gather", ins, outs[0], axis=0)


@_emits("index_select")
def _index_select(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit("Gather", ins, outs[0], axis=n.attrs["axis"])


@_emits("gather")
def _gather(w: Writer, n: Node, ins: list[str], outs: list[str]) -> None:
    w.emit(_type("gather"), ins, outs[0], axis=n.attrs["axis"])


def value_info(name: str, shape: tuple[int, ...], dtype: str = "float32") -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, ONNX_OF[dtype], list(shape))


def io(graph: Graph, w: Writer) -> tuple[list[onnx.ValueInfoProto], list[onnx.TensorProto]]:
    """Graph inputs (in order) and weight initializers; binds their value names."""
    inputs, weights = [], []
    for n in graph:
        if n.op in ("input", "weight"):
            w.names[Value(n.id, 0)] = n.attrs["name"]
            if n.op == "input":
                inputs.append(value_info(n.attrs["name"], n.shape, n.dtype))
            else:
                arr = _array(graph.weights[n.attrs["name"]], n.describe())
                weights.append(numpy_helper.from_array(arr, n.attrs["name"]))
    return inputs, weights


def output_path(path: object, call: str) -> Path:
    """``path`` checked as a file ``call`` may write, before the model is built: ``onnx.save`` would find a
    missing folder only after serializing every weight, with an error that does not name it."""
    if not isinstance(path, (str, os.PathLike)):
        raise UsageError(f"{call}: path must be a file path (str or pathlib.Path), got {type(path).__name__}")
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{call}: '{p}' is a folder; give the path of a file to write in it")
    if not p.parent.is_dir():
        what = "is a file, not a folder" if p.parent.exists() else "does not exist"
        raise UsageError(f"{call}: cannot write '{p}': folder '{p.parent}' {what}; create the folder first")
    return p


def to_onnx(graph: Graph, path: str | Path | None = None) -> onnx.ModelProto:
    """The graph as a standard ONNX model (opset 20) that onnxruntime runs; written to ``path`` if given.

    Outputs are named ``output0``, ``output1``...; inputs and weights keep their names.
    Raises ``FrontendError`` for an op with no ONNX spelling, ``UsageError`` for a path it cannot write.
    """
    expect_graph(graph, "to_onnx")
    out = output_path(path, "to_onnx") if path is not None else None
    graph.validate()
    w = Writer(graph)
    inputs, weights = io(graph, w)
    for n in graph:
        if n.op in ("input", "weight"):
            continue
        emit = _EMIT.get(n.op) or (_spelled if n.op in OPS and OPS[n.op].onnx is not None else None)
        if emit is None:
            raise FrontendError(f"{n.describe()}: op '{n.op}' has no ONNX spelling in to_onnx")
        outs = [value_name(Value(n.id, i)) for i in range(len(n.shapes))]
        emit(w, n, [w.names[v] for v in n.inputs], outs)
        for i, o in enumerate(outs):
            w.names[Value(n.id, i)] = o
    outputs = []
    for i, v in enumerate(graph.outputs):
        w.emit("Identity", [w.names[v]], f"output{i}")
        outputs.append(value_info(f"output{i}", graph.shape_of(v), graph.dtype_of(v)))
    og = helper.make_graph(w.nodes, graph.name, inputs, outputs, weights + w.inits)
    model = helper.make_model(og, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="eqsat")
    onnx.checker.check_model(model)
    if out is not None:
        onnx.save(model, str(out))
    return model


__all__ = ["OPSET", "Writer", "io", "output_path", "to_onnx", "value_info", "value_name"]
