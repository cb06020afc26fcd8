"""Normalizations and softmax: ``BatchNormalization``, ``LayerNormalization``, ``GroupNormalization``,
``RMSNormalization``, ``LRN``, ``Softmax``, ``LogSoftmax``, ``Hardmax``.

eqsat's layernorm and rmsnorm normalize the last axis: ONNX's ``axis`` (normalize every
dim from ``axis`` on) becomes a reshape to ``[rows, d]`` and back.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
import torch

from rewrite.frontends.compose import arg_extreme
from rewrite.frontends.onnx.context import (
    Ctx,
    Refuse,
    Tensor,
    handles,
    imports,
    norm_axes,
    one_output,
    only_attrs,
    opt_input,
)
from rewrite.ir.dtypes import FLOAT32
from rewrite.ir.graph import Value
from rewrite.ir.ops import OPS


@imports("batchnorm")
def _batchnorm(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"epsilon", "momentum", "training_mode", "spatial", "is_test", "consumed_inputs"})
    one_output(n)
    if a.get("training_mode", 0) or a.get("is_test", 1) == 0:
        raise Refuse("training mode is not supported: eqsat graphs are for inference")
    if a.get("spatial", 1) != 1:
        raise Refuse("spatial=0 is not supported")
    ins = [c.value(c.env[i]) for i in n.input[:5]]
    return [c.add("batchnorm", ins, eps=float(a.get("epsilon", 1e-5)))]


@imports("layernorm")
def _layernorm(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axis", "epsilon", "stash_type"})
    if a.get("stash_type", 1) != 1:
        raise Refuse("stash_type other than float32 is not supported")
    x = c.value(c.env[n.input[0]])
    xs = c.shape(x)
    axis = int(a.get("axis", -1)) % len(xs)
    eps = float(a.get("epsilon", 1e-5))
    rows, d = math.prod(xs[:axis]), math.prod(xs[axis:])
    scale = c.env[n.input[1]]
    bias_name = opt_input(n, 2)
    bias = c.env[bias_name] if bias_name else np.zeros(xs[axis:], np.float32)
    # eqsat's layernorm normalizes the last axis: flatten the normalized dims into one
    flat = c.value(c.reshape(x, (rows, d)))
    params = []
    for what, t in (("scale", scale), ("bias", bias)):
        ts = c.shape(t)
        if ts not in (xs[axis:], (d,)):
            raise Refuse(f"{what} of shape {ts} does not match the normalized dims {xs[axis:]}")
        params.append(c.value(c.reshape(t, (d,))))
    y = c.reshape(c.add("layernorm", [flat, *params], eps=eps), xs)
    outs: list[Tensor] = [y]
    if sum(1 for o in n.output[1:] if o):  # Mean and InvStdDev, shaped like x with the normalized dims as 1
        stat_shape = xs[:axis] + (1,) * (len(xs) - axis)
        mean = c.add("reduce_mean", [flat], axes=(1,), keepdim=1)
        centred = c.add("sub", [flat, mean])
        var = c.add("reduce_mean", [c.add("mul", [centred, centred])], axes=(1,), keepdim=1)
        inv = c.add("rsqrt", [var], eps=eps)
        outs += [c.reshape(mean, stat_shape), c.reshape(inv, stat_shape)]
    return outs


_LRN_ATTRS = ("size", "alpha", "beta", "bias")


@imports("lrn")
def _lrn(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """LRN across the channels (axis 1) of N C D1 ... Dk, ONNX's defaults for the attributes it omits."""
    only_attrs(a, set(_LRN_ATTRS))
    one_output(n)
    if "size" not in a:
        raise Refuse("the required attribute 'size' is missing")
    size = int(a["size"])
    if size < 1:
        raise Refuse(f"size must be at least 1, got {size}")
    attrs = {"size": size, "alpha": float(a.get("alpha", 1e-4)), "beta": float(a.get("beta", 0.75))}
    attrs["bias"] = float(a.get("bias", 1.0))
    x = c.env[n.input[0]]
    if len(c.shape(x)) < 2:
        raise Refuse(f"the input of shape {c.shape(x)} has no channel axis")
    if isinstance(x, np.ndarray) and x.dtype == np.float32:
        # folded by the registry's reference: onnx's reference evaluator (what folds a node with no handler)
        # sums its window over the batch axis, not the channels (onnx 1.23)
        return [OPS["lrn"].ref([torch.from_numpy(x)], attrs)[0].numpy()]
    return [c.add("lrn", [c.value(x)], **attrs)]


def _softmax_axis(c: Ctx, x: Value, a: dict[str, Any]) -> tuple[Value, int]:
    """The value to take a softmax of and its axis: before opset 13, ONNX sees the input as
    2-d [prod(dims before axis), prod(dims from axis)]."""
    xs = c.shape(x)
    if c.opset >= 13:
        (axis,) = norm_axes([int(a.get("axis", -1))], len(xs))
        return x, axis
    axis = int(a.get("axis", 1)) % len(xs)
    if axis == len(xs) - 1:
        return x, axis
    return c.value(c.reshape(x, (math.prod(xs[:axis]), math.prod(xs[axis:])))), 1


@imports("softmax")
def _softmax(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axis"})
    x = c.value(c.env[n.input[0]])
    y, axis = _softmax_axis(c, x, a)
    return [c.reshape(c.add("softmax", [y], axis=axis), c.shape(x))]


@handles("LogSoftmax")
def _log_softmax(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axis"})
    x = c.value(c.env[n.input[0]])
    y, axis = _softmax_axis(c, x, a)
    # (x - m) - log(sum(exp(x - m))), m the max along axis: no overflow, no log(0)
    z = c.add("sub", [y, c.add("reduce_max", [y], axes=(axis,), keepdim=1)])
    lse = c.add("log", [c.add("reduce_sum", [c.add("exp", [z])], axes=(axis,), keepdim=1)])
    return [c.reshape(c.add("sub", [z, lse]), c.shape(x))]


@handles("Hardmax")
def _hardmax(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """1.0 at the first maximum along ``axis`` (a NaN is the maximum, as the reference's argmax), 0.0
    elsewhere: the position (``compose.arg_extreme``) compared with an int64 iota."""
    only_attrs(a, {"axis"})
    x = c.value(c.env[n.input[0]])
    if c.dtype(x) != FLOAT32:
        raise Refuse(f"input is {c.dtype(x)}; eqsat's Hardmax takes float32")
    y, axis = _softmax_axis(c, x, a)
    ys = c.shape(y)
    if ys[axis] > 2**24:
        raise Refuse(f"{ys[axis]} elements along the axis: positions beyond 2^24 are not exact in float32")
    pos = arg_extreme(c.emit(), y, axis, keepdim=True, lowest=False)[1]
    iota = np.arange(ys[axis], dtype=np.int64).reshape([d if i == axis else 1 for i, d in enumerate(ys)])
    hot = c.add("cast", [c.add("eq", [pos, c.value(iota)])], dtype=FLOAT32)
    return [c.reshape(hot, c.shape(x))]


@handles("GroupNormalization")
def _groupnorm(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"num_groups", "epsilon", "stash_type"})
    if a.get("stash_type", 1) != 1:
        raise Refuse("stash_type other than float32 is not supported")
    x = c.value(c.env[n.input[0]])
    xs = c.shape(x)
    if len(xs) < 3:
        raise Refuse(f"input of shape {xs}: GroupNormalization needs N, C and spatial dims")
    groups, ch = int(a["num_groups"]), xs[1]
    if groups <= 0 or ch % groups:
        raise Refuse(f"{ch} channels do not split into {groups} groups")
    params = []
    for what, name in (("scale", n.input[1]), ("bias", n.input[2])):
        t = c.env[name]
        ts = c.shape(t)
        if c.opset < 21 and ts == (groups,):  # opset 18: one scale per group, the same for its channels
            if not isinstance(t, np.ndarray):
                raise Refuse(f"a per-group {what} (opset {c.opset}) must be a constant to spread over channels")
            t = np.repeat(t, ch // groups)
        elif ts != (ch,):
            raise Refuse(f"{what} of shape {ts} must be [{ch}] (opset 21) or [{groups}] (opset 18)")
        params.append(c.value(t))
    return [c.add("groupnorm", [x, *params], num_groups=groups, eps=float(a.get("epsilon", 1e-5)))]


@handles("InstanceNormalization")
def _instancenorm(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """Each channel of each sample normalized over its spatial dims: a group norm with one channel a group."""
    only_attrs(a, {"epsilon"})
    x = c.value(c.env[n.input[0]])
    xs = c.shape(x)
    if len(xs) < 3:
        raise Refuse(f"input of shape {xs}: InstanceNormalization needs N, C and spatial dims")
    params = []
    for what, name in (("scale", n.input[1]), ("bias", n.input[2])):
        if c.shape(c.env[name]) != (xs[1],):
            raise Refuse(f"{what} of shape {c.shape(c.env[name])} must be [{xs[1]}]")
        params.append(c.value(c.env[name]))
    return [c.add("groupnorm", [x, *params], num_groups=xs[1], eps=float(a.get("epsilon", 1e-5)))]


@handles("MeanVarianceNormalization")
def _mvn(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """(x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9) over ``axes`` (ONNX's function adds that epsilon)."""
    only_attrs(a, {"axes"})
    x = c.value(c.env[n.input[0]])
    axes = tuple(sorted(norm_axes([int(v) for v in a.get("axes", [0, 2, 3])], len(c.shape(x)))))
    centred = c.add("sub", [x, c.add("reduce_mean", [x], axes=axes, keepdim=1)])
    var = c.add("reduce_mean", [c.add("mul", [centred, centred])], axes=axes, keepdim=1)
    one = (1,) * len(c.shape(x))
    std = c.add("add", [c.add("sqrt", [var]), c.value(np.full(one, 1e-9, np.float32))])
    return [c.add("div", [centred, std])]


@handles("LpNormalization")
def _lpnorm(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """x divided by its L1 or L2 norm along ``axis``; a zero vector stays zero (the spec's reference and
    onnxruntime), not 0/0."""
    only_attrs(a, {"axis", "p"})
    x = c.value(c.env[n.input[0]])
    (axis,) = norm_axes([int(a.get("axis", -1))], len(c.shape(x)))
    p = int(a.get("p", 2))
    if p not in (1, 2):
        raise Refuse(f"p={p}: LpNormalization takes p = 1 or 2")
    term = c.add("abs", [x]) if p == 1 else c.add("mul", [x, x])
    norm = c.add("reduce_sum", [term], axes=(axis,), keepdim=1)
    if p == 2:
        norm = c.add("sqrt", [norm])
    zero = c.value(np.zeros((1,) * len(c.shape(x)), np.float32))
    return [c.add("where", [c.add("eq", [norm, zero]), zero, c.add("div", [x, norm])])]


@handles("RMSNormalization")
def _rmsnorm(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axis", "epsilon", "stash_type"})
    if a.get("stash_type", 1) != 1:
        raise Refuse("stash_type other than float32 is not supported")
    x = c.value(c.env[n.input[0]])
    xs = c.shape(x)
    (axis,) = norm_axes([int(a.get("axis", -1))], len(xs))
    rows, d = math.prod(xs[:axis]), math.prod(xs[axis:])
    scale = c.env[n.input[1]]
    ss = c.shape(scale)
    if isinstance(scale, np.ndarray) and ss != xs[axis:]:  # a constant scale broadcast over the normalized dims
        try:
            scale = np.ascontiguousarray(np.broadcast_to(scale, xs[axis:]))
        except ValueError:
            raise Refuse(f"scale of shape {ss} does not broadcast to the normalized dims {xs[axis:]}") from None
    elif c.shape(scale) != xs[axis:]:
        raise Refuse(f"scale of shape {ss} must match the normalized dims {xs[axis:]}")
    # eqsat's rmsnorm normalizes the last axis: flatten the normalized dims into one
    flat = c.value(c.reshape(x, (rows, d)))
    y = c.add("rmsnorm", [flat, c.value(c.reshape(scale, (d,)))], eps=float(a.get("epsilon", 1e-5)))
    return [c.reshape(y, xs)]


__all__: list[str] = []
