"""QDQ quantization: ``QuantizeLinear`` of a run-time float32 tensor and the ``DequantizeLinear`` that reads it.

A model quantized in the QDQ format (onnxruntime's ``quantize_static``, the usual export) holds its weights as
int8 constants behind ``DequantizeLinear`` (which folds at import, like every op of constants) and puts a
``QuantizeLinear`` -> ``DequantizeLinear`` pair on each activation.  The pair is computed as the spec defines
it in float32, where those integers are exact: ``q = clip(round(x / scale) + zero_point)`` (round half to even,
clipped to the integer type's range), then ``(q - zero_point) * scale``; a uint8 ``q`` is also cast to uint8 once
(``quantized``), the bytes the integer contractions read and each ``DequantizeLinear`` widens (eqsat computes on
no other 8- or 16-bit activation type).  The integer tensor between the two is a ``Quantized`` marker that only
``DequantizeLinear`` and the QLinear contractions read.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import onnx

from rewrite.frontends.onnx.context import Ctx, Quantized, Refuse, Tensor, handles, only_attrs, opt_input
from rewrite.ir.dtypes import FLOAT32
from rewrite.ir.graph import Value

# the integer types a quantized activation may have, and their ranges
RANGES: dict[int, tuple[int, int]] = {
    onnx.TensorProto.INT8: (-128, 127),
    onnx.TensorProto.UINT8: (0, 255),
    onnx.TensorProto.INT16: (-32768, 32767),
    onnx.TensorProto.UINT16: (0, 65535),
}
# the ops that read a quantized tensor (a ``Quantized`` marker): DequantizeLinear, and the QOperator
# contractions (``frontends.onnx.qlinear``), which compute on its integers
QUANTIZED_READERS = ("DequantizeLinear", "QLinearConv", "QLinearMatMul")
_NP: dict[int, type[np.integer[Any]]] = {
    onnx.TensorProto.INT8: np.int8,
    onnx.TensorProto.UINT8: np.uint8,
    onnx.TensorProto.INT16: np.int16,
    onnx.TensorProto.UINT16: np.uint16,
}


def _per_axis(c: Ctx, t: np.ndarray, what: str, rank: int, axis: int) -> np.ndarray:
    """A scalar or per-axis (1-d along ``axis``) constant, shaped to broadcast against a rank-``rank`` tensor."""
    if t.ndim == 0 or t.size == 1:
        return t.reshape((1,) * rank)
    if t.ndim != 1:
        raise Refuse(f"{what} of shape {t.shape}: blocked quantization is not supported (scalar or per-axis)")
    return t.reshape(tuple(t.size if d == axis else 1 for d in range(rank)))


def _params(c: Ctx, n: onnx.NodeProto, a: dict[str, Any], rank: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(scale, zero point as float32, ONNX integer type), broadcastable against the data."""
    if int(a.get("block_size", 0)):
        raise Refuse("blocked quantization (block_size) is not supported")
    axis = int(a.get("axis", 1)) % max(rank, 1)
    scale = c.const(n.input[1], "scale")
    if scale.dtype != np.float32:
        raise Refuse(f"scale is {scale.dtype}; eqsat takes a float32 scale")
    if opt_input(n, 2):
        zp = c.const(n.input[2], "zero point")
        kind = int(onnx.helper.np_dtype_to_tensor_dtype(zp.dtype))
    else:
        kind = int(a.get("output_dtype", 0)) or int(onnx.TensorProto.UINT8)
        zp = np.zeros((), _NP.get(kind, np.uint8))
    if kind not in RANGES:
        raise Refuse(f"quantized type {onnx.TensorProto.DataType.Name(kind).lower()} (int8, uint8, int16, uint16)")
    return (
        _per_axis(c, scale, "scale", rank, axis),
        _per_axis(c, zp.astype(np.float32), "zero point", rank, axis),
        kind,
    )


@handles("QuantizeLinear")
def _quantize(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axis", "saturate", "block_size", "output_dtype", "precision"})
    x = c.env[n.input[0]]
    if isinstance(x, np.ndarray):
        raise Refuse("a constant input: the reference evaluator folds it")
    if c.dtype(x) != FLOAT32:
        raise Refuse(f"input is {c.dtype(x)}; eqsat quantizes float32")
    if int(a.get("precision", 0)) not in (0, onnx.TensorProto.FLOAT):
        raise Refuse("precision other than float32")
    rank = len(c.shape(x))
    scale, zp, kind = _params(c, n, a, rank)
    lo, hi = RANGES[kind]
    q = c.add("round", [c.add("div", [x, c.value(scale)])])
    q = c.add("clamp", [c.add("add", [q, c.value(zp)])], min=float(lo), max=float(hi))
    return [cast(Tensor, quantized(c, q, kind))]  # only DequantizeLinear reads it (the importer checks)


def quantized(c: Ctx, q: Value, kind: int) -> Quantized:
    """The quantized tensor whose integers ``q`` holds as float32 (clipped to ``kind``'s range).  A uint8 one is
    cast to uint8 once, here, and every reader reads that: the contractions the integers, ``DequantizeLinear``
    their widening back to float32 (exact).  Where the float32 clip was what the readers shared, the kernel that
    computed it stored four bytes an element and two more kernels read them, one casting for the next
    contraction and one dequantizing for a residual add (ResNet-50 in int8: 32 such kernels, 2.9 of 30.8 ms)."""
    name = onnx.TensorProto.DataType.Name(kind).lower()
    if name != "uint8":
        return Quantized(q, name, c.origin)
    ints = c.add("cast", [q], dtype="uint8")
    return Quantized(c.add("cast", [ints], dtype="float32"), name, c.origin, ints)


def uint8_of(q: Quantized) -> Value:
    """A uint8 quantized tensor's bytes (``quantized`` made them; the callers check the type first)."""
    if q.ints is None:
        raise Refuse(f"a {q.dtype} activation where uint8 bytes are read")
    return q.ints


@handles("DequantizeLinear")
def _dequantize(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axis", "block_size", "output_dtype"})
    x = cast(Any, c.env[n.input[0]])
    if isinstance(x, np.ndarray):
        if x.dtype in (np.int8, np.uint8) and not int(a.get("block_size", 0)):  # a quantized weight, kept
            rank = max(x.ndim, 1)
            scale, zp, _ = _params(c, n, a, rank)
            c.dequantized_consts[n.output[0]] = (x, scale, zp, int(a.get("axis", 1)) % rank)
        raise Refuse("a constant input: the reference evaluator folds it")
    if not isinstance(x, Quantized):
        raise Refuse(f"input is a run-time {c.dtype(x)} tensor; eqsat dequantizes only QuantizeLinear's output")
    if int(a.get("output_dtype", 0)) not in (0, onnx.TensorProto.FLOAT):
        raise Refuse("output_dtype other than float32")
    q: Value = x.value
    scale, zp, kind = _params(c, n, a, len(c.shape(q)))
    if onnx.TensorProto.DataType.Name(kind).lower() != x.dtype:
        raise Refuse(f"zero point of type {onnx.TensorProto.DataType.Name(kind).lower()} for a {x.dtype} input")
    centred = q if not zp.any() else c.add("sub", [q, c.value(zp)])
    out = c.add("mul", [centred, c.value(scale)])
    c.dequantized[out] = (x, scale, zp)
    return [out]


def _integer_operands(
    c: Ctx, x: Tensor, w_name: str, ndim: int, out_axis: int, tb: bool = False
) -> tuple[Value, np.ndarray, int, np.ndarray] | None:
    """A quantized contraction's operands, or None where they are not a run-time uint8 activation with one
    scale and zero point (``x``: a DequantizeLinear's output, rank 2 or more) and a constant int8 weight of
    rank ``ndim`` with zero points 0 and one scale or one per ``out_axis`` slice (scales along the summed axis
    do not factor out of the sum; ``tb``: a matrix given transposed, Gemm's transB).  Returns x's integers as
    uint8 (exact: whole numbers in 0..255 that its QuantizeLinear computed), the weights, x's zero point and the
    scales to multiply the sums by (float32, as onnxruntime multiplies them)."""
    info = c.dequantized.get(x) if isinstance(x, Value) else None
    wq = c.dequantized_consts.get(w_name)
    if info is None or wq is None:
        return None
    xq, sx, zx = info
    w, sw, zw, axis = wq
    if tb and w.ndim == 2:
        w, sw, axis = np.ascontiguousarray(w.T), sw.T, 1 - axis
    if xq.dtype != "uint8" or w.dtype != np.int8 or w.ndim != ndim or zw.any() or sx.size != 1 or zx.size != 1:
        return None
    if (sw.size != 1 and axis != out_axis) or len(c.shape(xq.value)) < 2:
        return None
    scale = (sx.reshape(-1)[0] * sw.reshape(-1)).astype(np.float32)
    return uint8_of(xq), w, int(zx.reshape(-1)[0]), scale


def _scaled(c: Ctx, acc: Value, scale: np.ndarray, shape: tuple[int, ...]) -> Value:
    """The int32 sums ``acc`` as float32 times ``scale`` (shaped to broadcast along the output's channels)."""
    return c.add("mul", [c.add("cast", [acc], dtype="float32"), c.value(scale.reshape(shape))])


def integer_matmul(c: Ctx, x: Tensor, w_name: str, tb: bool = False) -> Value | None:
    """``MatMul(DequantizeLinear(uint8 x), DequantizeLinear(int8 W))`` computed on the integers, as onnxruntime
    runs a QDQ model's linear layers: ``matmul_integer(x, W, zero point) * (x's scale * W's scales)``, the sums
    exact in int32 (onnxruntime's MatMulIntegerToFloat), or None when the operands are not that
    (``_integer_operands``: W a matrix [K, N], scales per column; ``tb``: W given as [N, K])."""
    ops = _integer_operands(c, x, w_name, 2, 1, tb)
    if ops is None:
        return None
    q8, w, zx, scale = ops
    r = len(c.shape(q8))
    wv = c.integer_weight(w, "qweight")
    if r > 2:
        wv = c.add("reshape", [wv], shape=(1,) * (r - 2) + w.shape)
    acc = c.add("matmul_integer", [q8, wv], a_zero_point=zx)
    return _scaled(c, acc, scale, (1,) * (r - 1) + (-1,))


def integer_conv2d(
    c: Ctx, x: Tensor, w_name: str, stride: tuple[int, ...], padding: tuple[int, int], dil: tuple[int, ...], groups: int
) -> Value | None:
    """``Conv(DequantizeLinear(uint8 x), DequantizeLinear(int8 W))`` on the integers (onnxruntime's
    ConvInteger, scaled: its QLinearConv before requantizing): ``conv2d_integer(x, W, zero point)`` times x's
    scale and W's per-output-channel scales, or None where the operands are not that (``_integer_operands``:
    W OIHW, scales per output channel) or the convolution is grouped (depthwise convolutions stay float32)."""
    ops = None if groups != 1 else _integer_operands(c, x, w_name, 4, 0)
    if ops is None:
        return None
    q8, w, zx, scale = ops
    acc = c.add(
        "conv2d_integer",
        [q8, c.integer_weight(w, "qweight")],
        stride=tuple(stride),
        padding=padding,
        dilation=tuple(dil),
        groups=1,
        a_zero_point=zx,
    )
    return _scaled(c, acc, scale, (1, -1, 1, 1))


__all__: list[str] = []
