"""Contractions and pooling: ``MatMul``, ``Gemm``, ``Conv``, ``MaxPool``, ``AveragePool``, ``GlobalAveragePool``.

eqsat's convolution and pooling are 2-d (NCHW); 1-d pooling is 2-d pooling over a height
of 1, padding eqsat's pooling cannot express becomes an explicit ``pad2d`` (or, for average
pooling, a depthwise convolution), and 3-d pooling (and 2-d pooling none of those express:
dilated max, ceil_mode with uneven padding) is 2-d poolings over frames and depth
(``frontends.compose.pool3d``).  3-d convolution and transposed convolution are 2-d ones too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import torch

from rewrite.frontends.compose import conv3d, conv_transpose2d, conv_transpose3d, pool3d
from rewrite.frontends.onnx.context import Ctx, Refuse, Tensor, handles, imports, one_output, only_attrs, opt_input
from rewrite.frontends.onnx.quantize import integer_conv2d, integer_matmul
from rewrite.ir.graph import Value


@imports("matmul")
def _matmul(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    x, y = c.env[n.input[0]], c.env[n.input[1]]
    if (q := integer_matmul(c, x, n.input[1])) is not None:  # a QDQ model's quantized linear layer
        return [q]
    xs, ys = c.shape(x), c.shape(y)
    if not xs or not ys:
        raise Refuse("matmul of a scalar is not defined")
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


def _transposed(c: Ctx, t: Tensor) -> Value:
    if isinstance(t, np.ndarray):
        return c.value(np.ascontiguousarray(t.T))
    return c.add("transpose", [c.value(t)], perm=(1, 0))


@handles("Gemm")
def _gemm(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"alpha", "beta", "transA", "transB", "broadcast"})
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    ta, tb = int(a.get("transA", 0)), int(a.get("transB", 0))
    x, w = c.env[n.input[0]], c.env[n.input[1]]
    bias_name = opt_input(n, 2)
    b = c.env[bias_name] if bias_name else None
    if len(c.shape(x)) != 2 or len(c.shape(w)) != 2:
        raise Refuse(f"Gemm needs 2-d A and B, got {c.shape(x)} and {c.shape(w)}")
    # matmul + add, the form the rules work on (as the torch frontend builds nn.Linear);
    # a constant operand is transposed at import time, so it stays one weight
    quantized = None if ta else integer_matmul(c, x, n.input[1], bool(tb))  # a QDQ model's quantized layer
    if quantized is not None:
        out = quantized
    else:
        xv = _transposed(c, x) if ta else c.value(x)
        wv = _transposed(c, w) if tb else c.value(w)
        out = c.add("matmul", [xv, wv])
    if alpha != 1.0:
        out = c.add("smul", [out], scalar=alpha)
    if b is not None and beta != 0.0:
        bv = c.same_rank(out, b)[1]  # a 1-d bias stays 1-d under a reshape, which the fusion rules match
        if beta != 1.0:
            bv = c.add("smul", [bv], scalar=beta)
        out = c.add("add", [out, bv])
    return [out]


def _spatial_pads(
    c: Ctx, a: dict[str, Any], in_hw: Sequence[int], kernel: Sequence[int], strides: Sequence[int], dil: Sequence[int]
) -> tuple[int, ...]:
    """The begins then the ends of ``pads`` or ``auto_pad``, one per spatial axis: (top, left, bottom, right) in 2-d."""
    k = len(in_hw)
    auto = a.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else auto
    if auto in ("NOTSET", ""):
        pads = [int(p) for p in a.get("pads", [0] * (2 * k))]
        if len(pads) != 2 * k:
            raise Refuse(f"pads {pads} must have {2 * k} entries for {k}-d")
        return tuple(pads)
    if auto == "VALID":
        return (0,) * (2 * k)
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        begin, end = [], []
        for i in range(k):
            total = max(
                (math.ceil(in_hw[i] / strides[i]) - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - in_hw[i], 0
            )
            small, big = total // 2, total - total // 2
            begin.append(small if auto == "SAME_UPPER" else big)
            end.append(big if auto == "SAME_UPPER" else small)
        return (*begin, *end)
    raise Refuse(f"auto_pad '{auto}' is not supported")


def _check_2d(c: Ctx, x: Tensor, what: str) -> tuple[int, ...]:
    s = c.shape(x)
    if len(s) != 4:
        raise Refuse(f"only 2-d {what} (NCHW input) is supported, got input shape {s}")
    return s


@imports("conv2d")
def _conv(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"})
    x, w = c.env[n.input[0]], c.env[n.input[1]]
    xs, ws = c.shape(x), c.shape(w)
    if len(xs) == 3 and len(ws) == 3:  # 1-d convolution is 2-d convolution over a height of 1
        a = {**a, **{k: (1, *a[k]) for k in ("kernel_shape", "strides", "dilations") if k in a}}
        if "pads" in a:
            a["pads"] = (0, a["pads"][0], 0, a["pads"][1])
        x = c.reshape(x, (xs[0], xs[1], 1, xs[2]))
        w = c.reshape(w, (ws[0], ws[1], 1, ws[2]))
        out = _conv2d(c, n, a, x, w)
        os_ = c.shape(out)
        return [c.reshape(out, (os_[0], os_[1], os_[3]))]
    if len(xs) == 5 and len(ws) == 5:
        return [_conv3d(c, n, a, x)]
    return [_conv2d(c, n, a, x, w)]


def _conv3d(c: Ctx, n: onnx.NodeProto, a: dict[str, Any], x: Tensor) -> Value:
    """A 3-d convolution as 2-d ones over frames (``frontends.compose.conv3d``); the weight must be a constant."""
    w = c.const(n.input[1], "weight")
    if w.dtype != np.float32:
        raise Refuse(f"weight of dtype {w.dtype}; it must be float32")
    if "kernel_shape" in a and tuple(a["kernel_shape"]) != w.shape[2:]:
        raise Refuse(f"kernel_shape {list(a['kernel_shape'])} does not match the weight {list(w.shape)}")
    strides = tuple(int(v) for v in a.get("strides", (1, 1, 1)))
    dil = tuple(int(v) for v in a.get("dilations", (1, 1, 1)))
    pads = _spatial_pads(c, a, c.shape(x)[2:], w.shape[2:], strides, dil)
    if min(pads) < 0:
        raise Refuse(f"negative pads {list(pads)} are not supported")
    bias = opt_input(n, 2)
    bv = None
    if bias:
        bv = c.value(c.env[bias])
        if c.shape(bv) != (w.shape[0],):
            raise Refuse(f"bias must be [{w.shape[0]}], got {c.shape(bv)}")
    st3, dl3 = (strides[0], strides[1], strides[2]), (dil[0], dil[1], dil[2])
    p6 = (pads[0], pads[1], pads[2], pads[3], pads[4], pads[5])
    return conv3d(c.emit(), c.value(x), torch.from_numpy(w.copy()), bv, st3, p6, dl3, int(a.get("group", 1)))


@handles("ConvTranspose")
def _conv_transpose(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """A transposed convolution (1-d as 2-d over a height of 1) as registry ops
    (``frontends.compose.conv_transpose2d``); the weight must be a constant."""
    only_attrs(
        a, {"auto_pad", "dilations", "group", "kernel_shape", "output_padding", "output_shape", "pads", "strides"}
    )
    x, w = c.env[n.input[0]], c.const(n.input[1], "weight")
    if w.dtype != np.float32:
        raise Refuse(f"weight of dtype {w.dtype}; it must be float32")
    xs, ws = c.shape(x), w.shape
    one_d = len(xs) == 3 and len(ws) == 3
    if one_d:  # a height of 1: every per-axis attribute gets a leading 1 (0 for padding)
        a = {**a, **{k: (1, *a[k]) for k in ("kernel_shape", "strides", "dilations") if k in a}}
        a.update({k: (0, *a[k]) for k in ("output_padding",) if k in a})
        if "output_shape" in a:
            a["output_shape"] = (1, *a["output_shape"][-1:])
        if "pads" in a:
            a["pads"] = (0, a["pads"][0], 0, a["pads"][1])
        x, w = c.reshape(x, (xs[0], xs[1], 1, xs[2])), w.reshape(ws[0], ws[1], 1, ws[2])
    nd = w.ndim - 2
    if (len(c.shape(x)), w.ndim) not in ((4, 4), (5, 5)):
        raise Refuse(f"only 1-d, 2-d and 3-d transposed convolution, got input {xs} and weight {ws}")
    hw, k = c.shape(x)[2:], w.shape[2:]
    if "kernel_shape" in a and tuple(a["kernel_shape"]) != tuple(k):
        raise Refuse(f"kernel_shape {list(a['kernel_shape'])} does not match the weight's {list(k)}")
    strides = tuple(int(v) for v in a.get("strides", (1,) * nd))
    dil = tuple(int(v) for v in a.get("dilations", (1,) * nd))
    out_pad = tuple(int(v) for v in a.get("output_padding", (0,) * nd))
    auto = a.get("auto_pad", "NOTSET")
    out_shape = a.get("output_shape")
    if out_shape is None and auto in ("SAME_UPPER", "SAME_LOWER"):
        out_shape = [hw[i] * strides[i] for i in range(nd)]
    if out_shape is not None:  # the spec's padding for a requested output size
        out_shape = list(out_shape)[-nd:]
        total = [strides[i] * (hw[i] - 1) + out_pad[i] + (k[i] - 1) * dil[i] + 1 - out_shape[i] for i in range(nd)]
        # a negative total (a larger output than the kernel covers) pads with zeros, as the spec's reference
        upper = auto == "SAME_UPPER"  # the spec: otherwise the odd pixel is cropped at the start
        begin = [t // 2 if upper else t - t // 2 for t in total]
        pads = (*begin, *(t - b for t, b in zip(total, begin)))
    elif auto in ("NOTSET", "VALID"):
        pads = tuple(int(v) for v in a.get("pads", (0,) * 2 * nd)) if auto == "NOTSET" else (0,) * 2 * nd
    else:
        raise Refuse(f"auto_pad '{auto}' is not supported")
    if not len(strides) == len(dil) == len(out_pad) == nd or len(pads) != 2 * nd:
        raise Refuse(f"strides, dilations, output_padding and pads must have {nd}, {nd}, {nd} and {2 * nd} entries")
    groups = int(a.get("group", 1))
    if ws[0] != c.shape(x)[1] or ws[0] % groups:
        raise Refuse(f"weight of shape {list(ws)} does not fit {c.shape(x)[1]} input channels in {groups} groups")
    bias = c.value(c.env[n.input[2]]) if opt_input(n, 2) else None
    emit = c.emit()
    wt = torch.from_numpy(np.array(w, np.float32, order="C"))  # a copy: an initializer's array is read-only
    if nd == 3:
        s3, d3, o3 = (
            (strides[0], strides[1], strides[2]),
            (dil[0], dil[1], dil[2]),
            (out_pad[0], out_pad[1], out_pad[2]),
        )
        p6 = (pads[0], pads[1], pads[2], pads[3], pads[4], pads[5])
        try:
            return [conv_transpose3d(emit, c.value(x), wt, bias, s3, p6, d3, o3, groups)]
        except ValueError as e:
            raise Refuse(f"3-d transposed convolution: {e}") from e
    p4 = (pads[0], pads[1], pads[2], pads[3])
    y = conv_transpose2d(
        emit, c.value(x), wt, bias, (strides[0], strides[1]), p4, (dil[0], dil[1]), (out_pad[0], out_pad[1]), groups
    )
    if one_d:
        ys = c.shape(y)
        return [c.reshape(y, (ys[0], ys[1], ys[3]))]
    return [y]


def _conv2d(c: Ctx, n: onnx.NodeProto, a: dict[str, Any], x: Tensor, w: Tensor) -> Value:
    xs, ws = _check_2d(c, x, "convolution"), c.shape(w)
    if len(ws) != 4:
        raise Refuse(f"weight must be OIHW, got {ws}")
    if "kernel_shape" in a and tuple(a["kernel_shape"]) != ws[2:]:
        raise Refuse(f"kernel_shape {a['kernel_shape']} does not match the weight {ws}")
    strides, dil = tuple(a.get("strides", (1, 1))), tuple(a.get("dilations", (1, 1)))
    t, l_, b, r = _spatial_pads(c, a, xs[2:], ws[2:], strides, dil)
    xv = c.value(x)
    if (t, l_) != (b, r):  # asymmetric: zero-pad explicitly, then convolve without padding
        if min(t, l_, b, r) < 0:
            raise Refuse(f"negative pads {[t, l_, b, r]} are not supported")
        xv = c.add("pad2d", [xv], pads=(t, b, l_, r))
        t = l_ = 0
    groups = int(a.get("group", 1))
    quantized = None if xv is not x else integer_conv2d(c, x, n.input[1], strides, (t, l_), dil, groups)
    if quantized is not None:  # a QDQ model's quantized convolution, on the integers
        out = quantized
    else:
        out = c.add("conv2d", [xv, c.value(w)], stride=strides, padding=(t, l_), dilation=dil, groups=groups)
    bias = opt_input(n, 2)
    if bias:
        bv = c.env[bias]
        if c.shape(bv) != (ws[0],):
            raise Refuse(f"bias must be [{ws[0]}], got {c.shape(bv)}")
        # the 1-d bias under a reshape node: the form fuse-conv-bias matches (compile folds the reshape)
        out = c.add("add", [out, c.add("reshape", [c.value(bv)], shape=(1, ws[0], 1, 1))])
    return out


def _pool(c: Ctx, n: onnx.NodeProto, a: dict[str, Any], op: str, x: Tensor | None = None) -> list[Tensor]:
    """Pool ``x`` (by default the node's input) with ``op`` as the node's attributes say."""
    one_output(n)
    x = c.env[n.input[0]] if x is None else x
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
    if len(xs) == 5 and len(kernel) == 3:
        return [_pool3d(c, a, op, c.value(x))]
    hw = _check_2d(c, x, "pooling")[2:]
    if len(kernel) != 2:
        raise Refuse(f"kernel_shape {kernel} must have 2 entries")
    dil = tuple(a.get("dilations", (1, 1)))
    strides = tuple(a.get("strides", (1, 1)))
    ceil = int(a.get("ceil_mode", 0))
    t, l_, b, r = _spatial_pads(c, a, hw, kernel, strides, dil)
    spans = [hw[i] + p + q - (kernel[i] - 1) * dil[i] - 1 for i, (p, q) in enumerate(((t, b), (l_, r)))]
    if all(span % st == 0 for span, st in zip(spans, strides)):
        ceil = 0  # the windows tile exactly: rounding up adds none
    if dil != (1, 1):
        if op != "avgpool2d" or ceil:
            y = _pool2d_as_3d(c, a, op, c.value(x), kernel, strides, dil, (t, l_, b, r))
            ys = c.shape(y)
            return [c.reshape(y, (ys[0], ys[1], ys[3])) if one_d else y]
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
    elif op == "maxpool2d" and not ceil and all(p < k for p, k in zip((t, l_, b, r), kernel * 2)):
        # padding past half the kernel: pad with the lowest float32 explicitly (every window still
        # holds a real element, so it never wins), then pool unpadded
        low = float(np.finfo(np.float32).min)
        out = c.add(op, [c.add("pad", [xv], pads=(0, 0, 0, 0, t, b, l_, r), value=low)], padding=(0, 0), **attrs)
    else:  # e.g. ceil_mode with uneven padding
        out = _pool2d_as_3d(c, a, op, xv, kernel, strides, dil, (t, l_, b, r))
    if one_d:
        s = c.shape(out)
        return [c.reshape(out, (s[0], s[1], s[3]))]
    return [out]


def _pool3d(c: Ctx, a: dict[str, Any], op: str, x: Value) -> Value:
    """3-d pooling of NCDHW ``x`` as 2-d poolings (``frontends.compose.pool3d``), exact for every padding,
    ceil_mode, count_include_pad and dilation."""
    kernel = tuple(int(k) for k in a["kernel_shape"])
    strides = tuple(int(v) for v in a.get("strides", (1, 1, 1)))
    dil = tuple(int(v) for v in a.get("dilations", (1, 1, 1)))
    if not len(kernel) == len(strides) == len(dil) == 3:
        raise Refuse(f"kernel_shape {list(kernel)}, strides {list(strides)}, dilations {list(dil)}: 3 entries each")
    pads = _spatial_pads(c, a, c.shape(x)[2:], kernel, strides, dil)
    k3, s3, d3 = (kernel[0], kernel[1], kernel[2]), (strides[0], strides[1], strides[2]), (dil[0], dil[1], dil[2])
    p6 = (pads[0], pads[1], pads[2], pads[3], pads[4], pads[5])
    kind, ceil, include = op.removesuffix("pool2d"), bool(a.get("ceil_mode", 0)), bool(a.get("count_include_pad", 0))
    try:
        return pool3d(c.emit(), x, kind, k3, s3, p6, ceil, include, d3)
    except ValueError as e:
        raise Refuse(f"3-d pooling: {e}") from e


def _pool2d_as_3d(
    c: Ctx,
    a: dict[str, Any],
    op: str,
    x: Value,
    kernel: tuple[int, ...],
    strides: tuple[int, ...],
    dil: tuple[int, ...],
    pads: tuple[int, int, int, int],
) -> Value:
    """2-d pooling eqsat's pooling cannot express (dilated max, ceil_mode with uneven padding): 3-d pooling
    over a depth of 1."""
    t, l_, b, r = pads
    a3 = {k: v for k, v in a.items() if k != "auto_pad"}
    a3.update(kernel_shape=(1, *kernel), strides=(1, *strides), dilations=(1, *dil), pads=(0, t, l_, 0, b, r))
    n, ch, h, w = c.shape(x)
    y = _pool3d(c, a3, op, c.value(c.reshape(x, (n, ch, 1, h, w))))
    return c.value(c.reshape(y, (n, ch, *c.shape(y)[3:])))


def _avgpool_as_conv(
    c: Ctx,
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


@imports("maxpool2d")
def _maxpool(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order", "strides"})
    if a.get("storage_order", 0):
        raise Refuse("storage_order=1 is not supported")
    return _pool(c, n, a, "maxpool2d")


@imports("avgpool2d")
def _avgpool(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape", "pads", "strides"})
    return _pool(c, n, a, "avgpool2d")


def _lp_terms(c: Ctx, x: Value, p: int) -> Value:
    if p < 1:
        raise Refuse(f"p={p}: LpPool takes p >= 1")
    return (
        c.add("abs", [x])
        if p == 1
        else c.add("mul", [x, x])
        if p == 2
        else c.add("pow", [c.add("abs", [x])], exponent=float(p))
    )


def _lp_root(c: Ctx, s: Value, p: int) -> Value:
    return s if p == 1 else c.add("sqrt", [s]) if p == 2 else c.add("pow", [s], exponent=1.0 / p)


@handles("LpPool")
def _lppool(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """(sum of |x|^p over each window, zero padding included)^(1/p): an average pool of |x|^p counting the
    padding, times the window size."""
    only_attrs(a, {"auto_pad", "ceil_mode", "dilations", "kernel_shape", "p", "pads", "strides"})
    p = int(a.get("p", 2))
    x = c.value(c.env[n.input[0]])
    (pooled,) = _pool(c, n, {**a, "count_include_pad": 1}, "avgpool2d", _lp_terms(c, x, p))
    size = float(math.prod(a["kernel_shape"]))
    return [_lp_root(c, c.add("smul", [c.value(pooled)], scalar=size), p)]


@handles("GlobalLpPool")
def _global_lppool(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"p"})
    p = int(a.get("p", 2))
    x = c.value(c.env[n.input[0]])
    rank = len(c.shape(x))
    if rank < 3:
        raise Refuse(f"input of shape {c.shape(x)}: global pooling needs N, C and spatial dims")
    s = c.add("reduce_sum", [_lp_terms(c, x, p)], axes=tuple(range(2, rank)), keepdim=1)
    return [_lp_root(c, s, p)]


@imports("global_avgpool")
def _gap(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    x = c.env[n.input[0]]
    _check_2d(c, x, "global pooling")
    return [c.add("global_avgpool", [c.value(x)])]


@handles("GlobalMaxPool")
def _gmp(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, set())
    x = c.value(c.env[n.input[0]])
    rank = len(c.shape(x))
    if rank < 3:
        raise Refuse(f"input of shape {c.shape(x)}: global pooling needs N, C and spatial dims")
    return [c.add("reduce_max", [x], axes=tuple(range(2, rank)), keepdim=1)]


__all__: list[str] = []
