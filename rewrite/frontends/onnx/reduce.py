"""Reductions: ``ReduceSum``/``Mean``/``Max``/``Min``/``Prod`` onto the registry's ``reduce_*``, and the
ones built from them: ``ReduceSumSquare``, ``ReduceL1``, ``ReduceL2``, ``ReduceLogSum``,
``ReduceLogSumExp`` (max-shifted, as stable as ONNX's definition needs).

Axes come as an attribute (before opset 13 for ReduceSum, 18 for the others) or as an input;
no axes reduce everything, or nothing with ``noop_with_empty_axes=1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from rewrite.frontends.compose import TOPK_MAX_K, arg_extreme, cumsum, topk
from rewrite.frontends.onnx.context import Ctx, Refuse, Tensor, handles, norm_axes, only_attrs, opt_input
from rewrite.ir.dtypes import FLOAT32, INT64
from rewrite.ir.graph import Value

_DIRECT = {
    "ReduceSum": "reduce_sum",
    "ReduceMean": "reduce_mean",
    "ReduceMax": "reduce_max",
    "ReduceMin": "reduce_min",
    "ReduceProd": "reduce_prod",
}
_BUILT = ("ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp")


def _axes(c: Ctx, n: onnx.NodeProto, a: dict[str, Any], rank: int) -> list[int] | None:
    """The sorted axes to reduce, or None for none at all (noop_with_empty_axes)."""
    if "axes" in a:
        axes = [int(v) for v in a["axes"]]
    elif opt_input(n, 1):
        axes = c.ints(n.input[1], "axes")
    else:
        axes = []
    if not axes:
        return None if a.get("noop_with_empty_axes", 0) else list(range(rank))
    return sorted(norm_axes(axes, rank))


# ONNX's value of a reduction over no elements
_EMPTY = {
    "ReduceSum": 0.0,
    "ReduceProd": 1.0,
    "ReduceSumSquare": 0.0,
    "ReduceL1": 0.0,
    "ReduceL2": 0.0,
    "ReduceMax": -np.inf,
    "ReduceMin": np.inf,
    "ReduceLogSum": -np.inf,
    "ReduceLogSumExp": -np.inf,
}


def _empty_reduction(c: Ctx, n: onnx.NodeProto, a: dict[str, Any], t: np.ndarray) -> np.ndarray:
    """A reduction of an empty tensor: known from its shape alone."""
    axes = _axes(c, n, a, t.ndim)
    if axes is None or all(t.shape[i] for i in axes) or n.op_type not in _EMPTY:
        raise Refuse(f"reducing an empty tensor of shape {t.shape} to a non-empty {n.op_type} result")
    keep = int(a.get("keepdims", 1))
    shape = [1 if i in axes else d for i, d in enumerate(t.shape) if keep or i not in axes]
    return np.full(shape, _EMPTY[n.op_type], np.float32)


@handles(*_DIRECT, *_BUILT)
def _reduce(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axes", "keepdims", "noop_with_empty_axes"})
    t = c.env[n.input[0]]
    xs = c.shape(t)
    if isinstance(t, np.ndarray) and t.size == 0 and t.dtype == np.float32:
        return [_empty_reduction(c, n, a, t)]
    x = c.value(t)
    exact_int = n.op_type in ("ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare")  # int64 wraps
    if c.dtype(x) != FLOAT32 and not (c.dtype(x) == INT64 and exact_int):
        raise Refuse(f"input is {c.dtype(x)}; eqsat's {n.op_type} takes float32 (Sum, Max, Min, Prod also int64)")
    if not xs:
        raise Refuse("reducing a 0-d tensor")
    axes = _axes(c, n, a, len(xs))
    keep = int(a.get("keepdims", 1))
    op = n.op_type
    if axes is None:  # noop_with_empty_axes: the input unchanged
        if op not in _DIRECT:
            raise Refuse(f"noop_with_empty_axes=1 for {op} is not supported")
        return [c.identity(x)]
    if op in _DIRECT:
        return [c.add(_DIRECT[op], [x], axes=tuple(axes), keepdim=keep)]
    if op == "ReduceLogSumExp":  # m + log(sum(exp(x - m))), m the max: no overflow
        m = c.add("reduce_max", [x], axes=tuple(axes), keepdim=1)
        s = c.add("reduce_sum", [c.add("exp", [c.add("sub", [x, m])])], axes=tuple(axes), keepdim=1)
        out = c.add("add", [c.add("log", [s]), m])
        return [out if keep else c.reshape(out, [d for i, d in enumerate(xs) if i not in axes])]
    term: Value = x
    if op in ("ReduceSumSquare", "ReduceL2"):
        term = c.add("mul", [x, x])
    elif op == "ReduceL1":
        term = c.add("abs", [x])
    s = c.add("reduce_sum", [term], axes=tuple(axes), keepdim=keep)
    if op == "ReduceL2":
        return [c.add("sqrt", [s])]
    if op == "ReduceLogSum":
        return [c.add("log", [s])]
    return [s]


@handles("CumSum", "CumProd")
def _cumsum(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """A running sum (product) as ceil(log2 n) shifted adds (multiplies) (``compose.cumsum``)."""
    only_attrs(a, {"exclusive", "reverse"})
    t = c.env[n.input[0]]
    xs = c.shape(t)
    (axis,) = norm_axes([int(c.scalar(n.input[1], "axis"))], max(len(xs), 1))
    rev, excl = bool(a.get("reverse", 0)), bool(a.get("exclusive", 0))
    prod = n.op_type == "CumProd"
    if isinstance(t, np.ndarray) and t.dtype.kind in "if":  # shape arithmetic: folds
        src = np.flip(t, axis) if rev else t
        out = (np.cumprod if prod else np.cumsum)(src, axis=axis, dtype=t.dtype)
        if excl:
            first = (np.ones_like if prod else np.zeros_like)(np.take(out, [0], axis))
            out = np.concatenate([first, np.take(out, range(xs[axis] - 1), axis)], axis)
        return [np.ascontiguousarray(np.flip(out, axis) if rev else out)]
    x = c.value(t)
    if c.dtype(x) not in (FLOAT32, INT64):
        raise Refuse(f"input is {c.dtype(x)}; eqsat's running sum and product are float32 or int64")
    return [cumsum(c.emit(), x, axis, reverse=rev, exclusive=excl, combine="mul" if prod else "add")]


@handles("ArgMax", "ArgMin")
def _argmax(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """The first (select_last_index: last) position of the max (min) along ``axis``, int64: positions where
    x equals the extreme or is NaN (NaN is the extreme, as onnxruntime's and torch's) keep their index
    (an exact float constant), the others a sentinel; the min (max) of those, cast."""
    only_attrs(a, {"axis", "keepdims", "select_last_index"})
    t = c.env[n.input[0]]
    if isinstance(t, np.ndarray) and t.dtype.kind in "if" and not np.isnan(t).any():
        fold = np.argmax if n.op_type == "ArgMax" else np.argmin
        axis = norm_axes([int(a.get("axis", 0))], t.ndim)[0]
        src = np.flip(t, axis) if a.get("select_last_index", 0) else t
        idx = fold(src, axis=axis)
        idx = t.shape[axis] - 1 - idx if a.get("select_last_index", 0) else idx
        return [np.asarray(np.expand_dims(idx, axis) if a.get("keepdims", 1) else idx, np.int64)]
    x = c.value(t)
    xs = c.shape(x)
    if c.dtype(x) not in (FLOAT32, INT64):
        raise Refuse(f"input is {c.dtype(x)}; eqsat's ArgMax/ArgMin take float32 and int64")
    (axis,) = norm_axes([int(a.get("axis", 0))], len(xs))
    size = xs[axis]
    if size > 2**24:
        raise Refuse(f"{size} elements along the axis: positions beyond 2^24 are not exact in float32")
    last = bool(a.get("select_last_index", 0))
    keep = bool(a.get("keepdims", 1))
    return [arg_extreme(c.emit(), x, axis, keep, lowest=n.op_type == "ArgMin", last=last)[1]]


@handles("TopK")
def _topk(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """The k largest (smallest) values along ``axis`` in order, and their int64 positions: k selection passes
    (``frontends.compose.topk``; NaN ranks above every number, equal values by position).  K must be a
    constant of at most ``TOPK_MAX_K``."""
    only_attrs(a, {"axis", "largest", "sorted"})
    x = c.value(c.env[n.input[0]])
    xs = c.shape(x)
    if c.dtype(x) not in (FLOAT32, INT64):
        raise Refuse(f"input is {c.dtype(x)}; eqsat's TopK takes float32 and int64")
    k = int(c.const(n.input[1], "K").reshape(-1)[0])
    (axis,) = norm_axes([int(a.get("axis", -1))], len(xs))
    if not 1 <= k <= min(xs[axis], TOPK_MAX_K):
        raise Refuse(f"K={k} of {xs[axis]} (1 to {TOPK_MAX_K}: each is a pass over the axis)")
    if xs[axis] > 2**24:
        raise Refuse(f"{xs[axis]} elements along the axis: positions beyond 2^24 are not exact in float32")
    values, indices = topk(c.emit(), x, k, axis, bool(a.get("largest", 1)))
    return [values, indices]


__all__: list[str] = []
