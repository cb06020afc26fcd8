"""Indexing: ``Gather`` (onto ``embedding`` or ``index_select``), ``GatherElements`` (onto ``gather``),
``GatherND``, ``OneHot``, ``EyeLike``, ``Trilu``, the scatters at constant indices and ``Col2Im``.

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
import torch

from rewrite.frontends.compose import scatter, scatter_runtime
from rewrite.frontends.onnx.context import (
    NP_DTYPES,
    ONNX_DTYPES,
    Ctx,
    Refuse,
    Tensor,
    all_const,
    handles,
    imports,
    norm_axes,
    only_attrs,
)
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


@handles("GatherND")
def _gather_nd(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """Slices of ``data`` addressed by the last axis of ``indices`` (k coordinates each), after
    ``batch_dims`` leading dims the two share: data seen as rows of the trailing dims, each index tuple
    made one row number (int64 multiply-adds at run time, negative coordinates wrapped), ``index_select``."""
    only_attrs(a, {"batch_dims"})
    data, idx = c.env[n.input[0]], c.env[n.input[1]]
    ds, is_ = c.shape(data), c.shape(idx)
    b = int(a.get("batch_dims", 0))
    k = is_[-1] if is_ else 0
    if not is_ or not 1 <= k <= len(ds) - b or ds[:b] != is_[:b]:
        raise Refuse(f"indices of shape {is_} do not address data of shape {ds} with batch_dims={b}")
    batch, inner, rest = math.prod(ds[:b]), ds[b : b + k], ds[b + k :]
    picks = math.prod(is_[b:-1])
    out_shape = ds[:b] + is_[b:-1] + rest
    if math.prod(out_shape) == 0:
        raise Refuse(f"the result is empty (shape {out_shape})")
    offsets = (np.arange(batch, dtype=np.int64) * math.prod(inner)).reshape(batch, 1)
    if isinstance(idx, np.ndarray):
        rows = idx.reshape(batch, picks, k)
        if idx.dtype.kind not in "iu" or any(
            ((rows[..., i] < -d) | (rows[..., i] >= d)).any() for i, d in enumerate(inner)
        ):
            raise Refuse(f"an index is out of range for data of shape {ds}")
        flat = np.zeros((batch, picks), np.int64)
        for i, d in enumerate(inner):
            flat = flat * d + rows[..., i] % d
        at = (flat + offsets).reshape(-1)
        if isinstance(data, np.ndarray):
            return [data.reshape((-1, *rest))[at].reshape(out_shape)]
        rowv = c.value(at)
    else:
        if c.dtype(idx) != INT64:
            raise Refuse(f"indices are {c.dtype(idx)}; eqsat's GatherND takes int64")
        iv = c.value(c.reshape(idx, (batch, picks, k)))
        rowv = c.value(np.zeros((1, 1), np.int64))
        for i, d in enumerate(inner):
            coord = c.reshape(c.add("slice", [iv], axis=2, start=i, end=i + 1), (batch, picks))
            coord = _wrap_negative(c, c.value(coord), d)
            rowv = c.add("add", [c.add("mul", [rowv, c.value(np.full((1, 1), d, np.int64))]), coord])
        rowv = c.value(c.reshape(c.add("add", [rowv, c.value(offsets)]), (batch * picks,)))
    table = c.value(c.reshape(data, (batch * math.prod(inner), *rest) if rest else (batch * math.prod(inner),)))
    return [c.reshape(c.add("index_select", [table, rowv], axis=0), out_shape)]


@handles("OneHot")
def _one_hot(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """``values[1]`` where an index equals its position along the new ``axis`` (negative indices counted
    from ``depth``), ``values[0]`` elsewhere (an index out of range matches nothing): an equality with an
    iota of the indices' dtype, then a select."""
    only_attrs(a, {"axis"})
    idx = c.env[n.input[0]]
    depth = int(c.scalar(n.input[1], "depth"))
    values = c.env[n.input[2]]
    if depth < 1 or c.shape(values) != (2,):
        raise Refuse(f"depth {depth} and values of shape {c.shape(values)} (depth >= 1, two values)")
    is_ = c.shape(idx)
    (axis,) = norm_axes([int(a.get("axis", -1))], len(is_) + 1)
    dt = c.dtype(idx)
    if dt not in (FLOAT32, INT64):
        raise Refuse(f"indices are {dt}; eqsat's OneHot takes float32 or int64 indices")
    npdt = NP_DTYPES[dt]
    ones = (1,) * (len(is_) + 1)
    iv = c.value(c.reshape(idx, is_[:axis] + (1,) + is_[axis:]))
    neg = c.add("lt", [iv, c.value(np.zeros(ones, npdt))])
    iv = c.add("where", [neg, c.add("add", [iv, c.value(np.full(ones, depth, npdt))]), iv])
    iota = np.arange(depth, dtype=npdt).reshape([depth if i == axis else 1 for i in range(len(ones))])
    hit = c.add("eq", [iv, c.value(iota)])
    ve = c.value(values)
    off, on = (c.reshape(c.add("slice", [ve], axis=0, start=j, end=j + 1), ones) for j in (0, 1))
    return [c.add("where", [hit, c.value(on), c.value(off)])]


@handles("EyeLike")
def _eye_like(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """Ones on diagonal ``k`` of a 2-d tensor shaped like the input: a constant."""
    only_attrs(a, {"dtype", "k"})
    s = c.shape(c.env[n.input[0]])
    if len(s) != 2:
        raise Refuse(f"input of shape {s}: EyeLike takes a 2-d tensor")
    dt = c.dtype(c.env[n.input[0]]) if "dtype" not in a else ONNX_DTYPES.get(int(a["dtype"]), "")
    if dt not in NP_DTYPES:
        raise Refuse(f"dtype {a.get('dtype', dt)}: eqsat has float32, int64 and bool")
    return [np.eye(s[0], s[1], int(a.get("k", 0)), dtype=NP_DTYPES[dt])]


@imports("gather")
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


@handles("ScatterND")
def _scatter_nd(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """Constants fold as ONNX's reference computes them (BEiT's relative position index); run-time tensors at
    constant indices are gathered (``_scatter_nd_run_time``), anything else compared (``scatter_runtime``)."""
    only_attrs(a, {"reduction"})
    data, idx, upd = (c.env[i] for i in n.input[:3])
    red = _reduction(a)
    if red not in ("none", "add", "mul", "max", "min"):
        raise Refuse(f"reduction '{red}'")
    if not isinstance(idx, np.ndarray) or (red not in ("none", "add") and not all_const(data, upd)):
        return [_scatter_nd_at_run_time_indices(c, data, c.value(idx), upd, red)]
    if not (isinstance(data, np.ndarray) and isinstance(upd, np.ndarray)):
        return [_scatter_nd_run_time(c, data, idx, upd, red)]
    assert isinstance(data, np.ndarray) and isinstance(upd, np.ndarray)
    out = data.copy()
    k = idx.shape[-1]
    for pos, u in zip(idx.reshape(-1, k), upd.reshape((-1,) + data.shape[k:])):
        at = tuple(int(v) for v in pos)
        if not all(-d <= v < d for v, d in zip(at, data.shape)):
            raise Refuse(f"index {list(at)} is out of range for data of shape {data.shape}")
        if red == "none":
            out[at] = u
        else:
            out[at] = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[red](out[at], u)
    return [out]


def _row_numbers(c: Ctx, idx: Value, dims: tuple[int, ...]) -> Value:
    """Run-time int64 index tuples (last axis, one coordinate per dim of ``dims``) as row numbers of those
    dims merged, negative coordinates wrapped: [..., k] -> [...]."""
    is_ = c.shape(idx)
    if c.dtype(idx) != INT64:
        raise Refuse(f"indices are {c.dtype(idx)}; eqsat takes int64 run-time indices")
    rows: Value | None = None
    for i, d in enumerate(dims):
        coord = _wrap_negative(
            c, c.value(c.reshape(c.add("slice", [idx], axis=len(is_) - 1, start=i, end=i + 1), is_[:-1])), d
        )
        rows = (
            coord
            if rows is None
            else c.add("add", [c.add("mul", [rows, c.value(np.full((1,) * len(is_[:-1]), d, np.int64))]), coord])
        )
    assert rows is not None
    return rows


def _scatter_nd_at_run_time_indices(c: Ctx, data: Tensor, idx: Value, upd: Tensor, red: str) -> Value:
    """ScatterND at run-time indices (a cache written at a run-time position), or of run-time tensors with
    the mul, max or min reduction: ``frontends.compose.scatter_runtime`` over the rows the index tuples name."""
    ds, is_ = c.shape(data), c.shape(idx)
    k = is_[-1] if is_ else 0
    if not 1 <= k <= len(ds) or c.shape(upd) != is_[:-1] + ds[k:]:
        raise Refuse(f"indices {is_} and updates {c.shape(upd)} do not fit data of shape {ds}")
    rows, post, m = math.prod(ds[:k]), math.prod(ds[k:]), math.prod(is_[:-1])
    e = c.emit()
    at = e.reshape(_row_numbers(c, idx, ds[:k]), (1, m, 1))
    try:
        y = scatter_runtime(
            e, e.reshape(c.value(data), (1, rows, post)), e.reshape(c.value(upd), (1, m, post)), at, red
        )
    except ValueError as err:
        raise Refuse(f"ScatterND {err}") from None
    return e.reshape(y, ds)


def _scatter_nd_run_time(c: Ctx, data: Tensor, idx: np.ndarray, upd: Tensor, red: str) -> Value:
    """ScatterND of run-time data or updates at constant indices (a static cache update), reduction none or
    add: the updates gathered into place (``frontends.compose.scatter``)."""
    if red not in ("none", "add"):
        raise Refuse(f"ScatterND with reduction '{red}' of run-time tensors (only none and add)")
    ds = c.shape(data)
    k = idx.shape[-1]
    rows = idx.reshape(-1, k).astype(np.int64)
    if k > len(ds) or not all(((-d <= rows[:, i]) & (rows[:, i] < d)).all() for i, d in enumerate(ds[:k])):
        raise Refuse(f"indices out of range for data of shape {ds}")
    flat = np.zeros(len(rows), np.int64)
    for i, d in enumerate(ds[:k]):
        flat = flat * d + rows[:, i] % d
    return _scatter_into(c, data, upd, flat, math.prod(ds[k:]), red == "add", "ScatterND")


def _scatter_into(c: Ctx, data: Tensor, upd: Tensor, flat: np.ndarray, post: int, add: bool, what: str) -> Value:
    """``data`` with the rows of ``upd`` (``post`` elements each, in order) written (``add``: added) at the
    constant row positions ``flat`` (``frontends.compose.scatter``); a row written twice without ``add`` is
    refused."""
    ds = c.shape(data)
    n_t = math.prod(ds) // post
    e = c.emit()
    src = e.reshape(c.value(upd), (1, flat.size, post))
    base = e.reshape(c.value(data), (1, n_t, post))
    try:
        y = scatter(e, base, src, torch.from_numpy(flat.astype(np.int64)), n_t, add)
    except ValueError as err:
        raise Refuse(f"{what} {err}") from None
    return e.reshape(y, ds)


def _reduction(a: dict[str, Any]) -> str:
    red = a.get("reduction", "none")
    return red.decode() if isinstance(red, bytes) else str(red)


@handles("Trilu")
def _trilu(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """The upper (lower) triangle of the last two dims from diagonal k: np.triu/np.tril of a constant
    (a causal mask), else the input where a constant mask holds and 0 elsewhere."""
    only_attrs(a, {"upper"})
    x = c.env[n.input[0]]
    k = int(c.scalar(n.input[1], "k")) if len(n.input) > 1 and n.input[1] else 0
    upper = bool(a.get("upper", 1))
    xs = c.shape(x)
    if len(xs) < 2:
        raise Refuse(f"input of shape {xs}: Trilu needs at least 2 dims")
    if isinstance(x, np.ndarray):
        return [np.triu(x, k) if upper else np.tril(x, k)]
    rows, cols = xs[-2:]
    keep = np.triu(np.ones((rows, cols), np.bool_), k) if upper else np.tril(np.ones((rows, cols), np.bool_), k)
    mask = c.value(keep.reshape((1,) * (len(xs) - 2) + (rows, cols)))
    zero = c.value(np.zeros((1,) * len(xs), NP_DTYPES[c.dtype(x)]))
    return [c.add("where", [mask, x, zero])]


@handles("Col2Im")
def _col2im(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """Blocks summed back into an image (torch's F.fold), any number of spatial dims: each (block position,
    location) column entry added at its pixel of the padded image, as gathers (``frontends.compose.scatter``),
    the padding cropped."""
    only_attrs(a, {"dilations", "pads", "strides"})
    x = c.env[n.input[0]]
    img = [int(v) for v in c.const(n.input[1], "image_shape").reshape(-1)]
    kk = [int(v) for v in c.const(n.input[2], "block_shape").reshape(-1)]
    k = len(img)
    if len(kk) != k:
        raise Refuse(f"image_shape {img} and block_shape {kk} differ in rank")
    dil = [int(v) for v in a.get("dilations", [1] * k)]
    st = [int(v) for v in a.get("strides", [1] * k)]
    pads = [int(v) for v in a.get("pads", [0] * (2 * k))]
    nb, ck, length = c.shape(x)
    blocks = math.prod(kk)
    if ck % blocks:
        raise Refuse(f"{ck} input rows are not a multiple of the block's {blocks} positions")
    padded = [img[d] + pads[d] + pads[k + d] for d in range(k)]
    locs = [(padded[d] - dil[d] * (kk[d] - 1) - 1) // st[d] + 1 for d in range(k)]
    if math.prod(locs) != length:
        raise Refuse(f"{length} blocks, but the image and block shapes give {' x '.join(map(str, locs))}")
    grid = np.meshgrid(*[np.arange(v) for v in kk + locs], indexing="ij")  # (block position, location)
    flat = np.zeros(grid[0].shape, np.int64)
    for d in range(k):
        flat = flat * padded[d] + grid[k + d] * st[d] + grid[d] * dil[d]
    e = c.emit()
    cc = ck // blocks
    src = e.reshape(c.value(x), (nb * cc, blocks * length, 1))
    y = scatter(e, None, src, torch.from_numpy(flat.reshape(-1)), math.prod(padded), True)
    y = e.reshape(y, (nb, cc, *padded))
    for d in range(k):
        if pads[d] or pads[k + d]:
            y = e.op("slice", [y], axis=2 + d, start=pads[d], end=pads[d] + img[d])
    return [y]


def _scatter_elements_compared(c: Ctx, data: Tensor, idx: Value, upd: Tensor, ax: int, red: str) -> Value:
    """torch's scatter / scatter_reduce along ``ax`` at run-time indices, or with a reduction other than add
    (``compose.scatter_runtime``); the indices must span data's other dims whole."""
    ds, is_ = c.shape(data), c.shape(idx)
    if is_ != c.shape(upd) or len(is_) != len(ds) or any(i != d for j, (i, d) in enumerate(zip(is_, ds)) if j != ax):
        raise Refuse(f"run-time indices {is_} and updates {c.shape(upd)} must match data {ds} but along axis {ax}")
    if c.dtype(idx) != INT64:
        raise Refuse(f"indices are {c.dtype(idx)}; eqsat takes int64 run-time indices")
    pre, post = math.prod(ds[:ax]), math.prod(ds[ax + 1 :])
    e = c.emit()
    at = e.reshape(_wrap_negative(c, idx, ds[ax]), (pre, is_[ax], post))
    base, src = e.reshape(c.value(data), (pre, ds[ax], post)), e.reshape(c.value(upd), (pre, is_[ax], post))
    try:
        y = scatter_runtime(e, base, src, at, red)
    except ValueError as err:
        raise Refuse(f"ScatterElements {err}") from None
    return e.reshape(y, ds)


@handles("ScatterElements")
def _scatter_elements(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """torch's scatter / scatter_add at constant indices: each update written (added) at its own position with
    the axis coordinate taken from the index, as gathers; at run-time indices or with the mul, max and min
    reductions, by comparing every index with every position (``_scatter_elements_compared``)."""
    only_attrs(a, {"axis", "reduction"})
    data, idx, upd = (c.env[i] for i in n.input[:3])
    red = _reduction(a)
    if red not in ("none", "add", "mul", "max", "min"):
        raise Refuse(f"reduction '{red}'")
    ds = c.shape(data)
    ax = int(a.get("axis", 0)) % len(ds)
    if not isinstance(idx, np.ndarray) or red not in ("none", "add"):
        return [_scatter_elements_compared(c, data, c.value(idx), upd, ax, red)]
    if idx.shape != c.shape(upd) or len(idx.shape) != len(ds):
        raise Refuse(f"indices {idx.shape} and updates {c.shape(upd)} must have one shape, of data's rank")
    if not ((-ds[ax] <= idx) & (idx < ds[ax])).all():
        raise Refuse(f"indices out of range for axis {ax} of size {ds[ax]}")
    pos = list(np.meshgrid(*[np.arange(v) for v in idx.shape], indexing="ij"))
    pos[ax] = idx.astype(np.int64) % ds[ax]
    flat = np.ravel_multi_index(tuple(pos), ds).reshape(-1)
    return [_scatter_into(c, data, upd, flat, 1, red == "add", "ScatterElements")]


__all__: list[str] = []
