"""QOperator quantization: ``QLinearConv`` and ``QLinearMatMul``, a quantized model's contractions written as one
node each (onnxruntime's ``quantize_static`` with ``QuantFormat.QOperator``, and most int8 files in model zoos).

Each reads a uint8 activation (a ``QuantizeLinear``'s or another QLinear node's output: a ``Quantized``
marker, its integers held as float32), constant int8 weights with zero points 0 and a per-tensor or per-output
channel scale, and for ``QLinearConv`` an optional int32 bias in units of ``x_scale * w_scale``; it computes the
exact int32 sums on the integers (``conv2d_integer`` / ``matmul_integer``), adds the bias in int64 (exact,
as onnxruntime adds it in int32), and requantizes as onnxruntime does: the sum as float32 times
``x_scale * w_scale / y_scale`` (computed in float32), rounded to nearest even, plus the output zero point,
saturated to the output type.  The result is again a ``Quantized`` marker.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import onnx

from rewrite.frontends.onnx.context import Ctx, Quantized, Refuse, Tensor, handles, only_attrs, opt_input
from rewrite.frontends.onnx.nn import _spatial_pads
from rewrite.frontends.onnx.quantize import RANGES, quantized, uint8_of
from rewrite.ir.graph import Value


def _activation(c: Ctx, name: str) -> Value:
    """The uint8 activation ``name``: its uint8 tensor."""
    q = c.env[name]
    if not isinstance(q, Quantized):
        raise Refuse(f"input '{name}' is not a quantized run-time tensor (a QuantizeLinear's or QLinear node's output)")
    if q.dtype != "uint8":
        raise Refuse(f"input '{name}' is {q.dtype}; eqsat's quantized contractions read uint8 activations")
    return uint8_of(q)


def _scalar(c: Ctx, name: str, what: str) -> np.ndarray:
    t = c.const(name, what)
    if t.size != 1:
        raise Refuse(f"{what} '{name}' of shape {t.shape}: one value per tensor expected")
    return t.reshape(())


def _weights(c: Ctx, n: onnx.NodeProto, w_at: int, axis_len: int) -> tuple[np.ndarray, np.ndarray]:
    """The int8 weights and their scales (one, or one per output channel), zero points 0."""
    w = c.const(n.input[w_at], "weight")
    if w.dtype != np.int8:
        raise Refuse(f"weight of type {w.dtype}; eqsat's quantized contractions take int8 weights")
    scale = c.const(n.input[w_at + 1], "weight scale").astype(np.float32).reshape(-1)
    zp = c.const(n.input[w_at + 2], "weight zero point") if opt_input(n, w_at + 2) else np.zeros(1, np.int8)
    if zp.any():
        raise Refuse("a weight zero point other than 0")
    if scale.size not in (1, axis_len):
        raise Refuse(f"{scale.size} weight scales for {axis_len} output channels")
    return w, scale


def _requantize(
    c: Ctx, n: onnx.NodeProto, acc: Value, bias: Tensor | None, multiplier: np.ndarray, rank: int
) -> Quantized:
    """``acc`` (int32) plus ``bias`` (int32, exact in int64) requantized to the node's output type."""
    y_zp = c.const(n.input[7], "output zero point") if len(n.input) > 7 and n.input[7] else np.zeros((), np.uint8)
    kind = int(onnx.helper.np_dtype_to_tensor_dtype(y_zp.dtype))
    if kind not in RANGES:
        raise Refuse(f"output type {y_zp.dtype}")
    lo, hi = RANGES[kind]
    total: Value = acc
    shape = (1, -1) + (1,) * (rank - 2) if n.op_type == "QLinearConv" else (1,) * (rank - 1) + (-1,)
    if bias is not None:
        if not isinstance(bias, np.ndarray) or bias.dtype != np.int32:
            raise Refuse("a bias that is not a constant int32 tensor")
        wide = c.add("cast", [acc], dtype="int64")
        total = c.add("add", [wide, c.value(bias.astype(np.int64).reshape(shape))])
    y = c.add("mul", [c.add("cast", [total], dtype="float32"), c.value(multiplier.reshape(shape))])
    y = c.add("add", [c.add("round", [y]), c.value(np.asarray(float(y_zp), np.float32).reshape((1,) * rank))])
    return quantized(c, c.add("clamp", [y], min=float(lo), max=float(hi)), kind)


@handles("QLinearConv")
def _qlinear_conv(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    q = _activation(c, n.input[0])
    sx, zx = _scalar(c, n.input[1], "input scale"), _scalar(c, n.input[2], "input zero point")
    w, sw = _weights(c, n, 3, c.shape(c.env[n.input[3]])[0])
    sy = _scalar(c, n.input[6], "output scale")
    xs = c.shape(q)
    if len(xs) != 4 or w.ndim != 4:
        raise Refuse(f"a 2-d convolution of NCHW input and OIHW weights expected, got {xs} and {w.shape}")
    if int(a.get("group", 1)) != 1:
        raise Refuse("a grouped convolution (eqsat's quantized convolution has one group)")
    strides, dil = tuple(a.get("strides", (1, 1))), tuple(a.get("dilations", (1, 1)))
    t, l_, b, r = _spatial_pads(c, a, xs[2:], w.shape[2:], strides, dil)
    if (t, l_) != (b, r):
        raise Refuse(f"asymmetric pads {[t, l_, b, r]}")
    acc = c.add(
        "conv2d_integer",
        [q, c.integer_weight(w, "qweight")],
        stride=strides,
        padding=(t, l_),
        dilation=dil,
        groups=1,
        a_zero_point=int(zx),
    )
    bias = c.env[n.input[8]] if opt_input(n, 8) else None
    multiplier = (np.float32(sx) * sw / np.float32(sy)).astype(np.float32)
    return [cast(Tensor, _requantize(c, n, acc, bias, multiplier, 4))]


@handles("QLinearMatMul")
def _qlinear_matmul(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    q = _activation(c, n.input[0])
    sx, zx = _scalar(c, n.input[1], "input scale"), _scalar(c, n.input[2], "input zero point")
    w, sw = _weights(c, n, 3, c.shape(c.env[n.input[3]])[-1])
    sy = _scalar(c, n.input[6], "output scale")
    r = len(c.shape(q))
    if w.ndim != 2 or r < 2:
        raise Refuse(f"an activation of rank >= 2 times a 2-d weight expected, got {c.shape(q)} and {w.shape}")
    wv = c.integer_weight(w, "qweight")
    if r > 2:
        wv = c.add("reshape", [wv], shape=(1,) * (r - 2) + w.shape)
    acc = c.add("matmul_integer", [q, wv], a_zero_point=int(zx))
    multiplier = (np.float32(sx) * sw / np.float32(sy)).astype(np.float32)
    return [cast(Tensor, _requantize(c, n, acc, None, multiplier, r))]


__all__: list[str] = []
