"""Indexing: ``Gather`` (onto ``embedding`` or ``index_select``) and ``GatherElements`` (onto ``gather``).

ONNX allows negative indices (counted from the end); torch's index ops, and so eqsat's, do
not.  Constant indices are normalised and range-checked at import; indices computed at run
time get ``where(i < 0, i + dim, i)``, the sum computed in float32 (eqsat's int64 values have no
arithmetic), which is exact for every valid index since dimensions stay below 2**24.
Constant int32 indices become int64 (exact); int32 run-time tensors are refused like every
other dtype.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx

from rewrite.frontends.onnx.context import Ctx, Refuse, Tensor, handles, norm_axes, only_attrs
from rewrite.ir.dtypes import FLOAT32, INT64
from rewrite.ir.graph import Value


def _wrap_negative(c: Ctx, idx: Value, dim: int) -> Value:
    """``idx`` with negative entries counted from the end of a dimension of size ``dim``."""
    if dim >= 2**24:
        raise Refuse(f"run-time indices into a dimension of {dim} (>= 2**24) cannot be wrapped exactly")
    ones = (1,) * len(c.shape(idx))
    neg = c.add("lt", [idx, c.value(np.zeros(ones, np.int64))])
    f = c.add("cast", [idx], dtype=FLOAT32)
    plus = c.add("cast", [c.add("add", [f, c.value(np.full(ones, dim, np.float32))])], dtype=INT64)
    # idx itself is the int64 branch, so Graph.index_bound still sees it index this dimension
    return c.add("where", [neg, plus, idx])


def _const_index(idx: np.ndarray, dim: int) -> np.ndarray:
    if idx.dtype.kind not in "iu":
        raise Refuse(f"indices have dtype {idx.dtype}")
    if idx.size and (idx.min() < -dim or idx.max() >= dim):
        raise Refuse(f"an index is out of range for a dimension of size {dim}")
    return np.where(idx < 0, idx + dim, idx).astype(np.int64)


@handles("Gather")
def _gather(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axis"})
    data, idx = c.env[n.input[0]], c.env[n.input[1]]
    ds = c.shape(data)
    (axis,) = norm_axes([int(a.get("axis", 0))], len(ds))
    if isinstance(idx, np.ndarray):
        idx = _const_index(idx, ds[axis])
        if isinstance(data, np.ndarray):
            return [np.take(data, idx, axis=axis)]
    elif c.shape(idx):
        idx = _wrap_negative(c, idx, ds[axis])
    is_ = c.shape(idx)
    out_shape = ds[:axis] + is_ + ds[axis + 1 :]
    if math.prod(out_shape) == 0:
        raise Refuse(f"the result is empty (shape {out_shape})")
    if len(ds) == 2 and axis == 0 and is_ and c.dtype(data) == FLOAT32:  # rows of a table: the embedding op
        return [c.add("embedding", [c.value(data), c.value(idx)])]
    flat = c.value(c.reshape(idx, (max(math.prod(is_), 1),)))
    if not is_ and not isinstance(idx, np.ndarray):
        flat = _wrap_negative(c, flat, ds[axis])
    picked = c.add("index_select", [c.value(data), flat], axis=axis)
    return [c.reshape(picked, out_shape)]


@handles("GatherElements")
def _gather_elements(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"axis"})
    data, idx = c.env[n.input[0]], c.env[n.input[1]]
    ds = c.shape(data)
    (axis,) = norm_axes([int(a.get("axis", 0))], len(ds))
    if isinstance(idx, np.ndarray):
        idx = _const_index(idx, ds[axis])
        if isinstance(data, np.ndarray):
            return [np.take_along_axis(data, idx, axis=axis)]
    else:
        idx = _wrap_negative(c, idx, ds[axis])
    return [c.add("gather", [c.value(data), c.value(idx)], axis=axis)]


__all__: list[str] = []
