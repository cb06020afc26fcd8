"""Resampling along one axis by a constant linear map, as gathers: what a resize whose weights eqsat's
``resize`` op cannot express (cubic, antialiased, cropped, any rank) imports as.

Every separable resize (nearest, linear, cubic, with antialias, exclude_outside or a crop) computes
each output position along an axis as a fixed weighted sum of a few input positions, plus, for a crop
that reaches outside the input, a constant.  The frontend finds that map (``matrix``: out x in, and
``offset``) by running the reference on unit vectors; ``resample`` turns it into k taps, k the most
positions any output reads: ``y = sum_k w_k * x[idx_k] (+ offset)``, one ``index_select`` and one
multiply-add per tap, never reading a position with weight zero unless the row has fewer taps (then
the row's first position again, weight 0).
"""

from __future__ import annotations

import numpy as np
import torch

from rewrite.frontends.compose.emit import Emit
from rewrite.ir.graph import Value


def resample(e: Emit, x: Value, axis: int, matrix: np.ndarray, offset: np.ndarray | None = None) -> Value:
    """``x`` with ``axis`` mapped through ``matrix`` (n_out x n_in): ``y[.., o, ..] = sum_i matrix[o, i] *
    x[.., i, ..] + offset[o]``."""
    xs = e.shape(x)
    n_out, n_in = matrix.shape
    assert n_in == xs[axis], (matrix.shape, xs, axis)
    rank = len(xs)
    out_shape = tuple(n_out if d == axis else s for d, s in enumerate(xs))
    nz = [np.flatnonzero(row) for row in matrix]
    k = max((len(r) for r in nz), default=0)
    bshape = tuple(n_out if d == axis else 1 for d in range(rank))
    out: Value | None = None
    for t in range(k):
        idx = np.array([r[t] if t < len(r) else (r[0] if len(r) else 0) for r in nz], np.int64)
        w = np.array([matrix[o, r[t]] if t < len(r) else 0.0 for o, r in enumerate(nz)], np.float32)
        picked = e.op("index_select", [x, e.weight(torch.from_numpy(idx))], axis=axis)
        term = (
            picked if bool((w == 1.0).all()) else e.op("mul", [picked, e.weight(torch.from_numpy(w.reshape(bshape)))])
        )
        out = term if out is None else e.op("add", [out, term])
    if offset is not None and offset.any():
        b = e.weight(torch.from_numpy(offset.astype(np.float32).reshape(bshape)))
        out = b if out is None else e.op("add", [out, b])
    if out is None:  # every output outside the input and no offset: zeros
        return e.weight(torch.zeros(out_shape))
    return out if e.shape(out) == out_shape else e.op("expand", [out], shape=out_shape)


__all__ = ["resample"]
