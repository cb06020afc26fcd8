"""Writes at positions, as gathers (constant positions) or comparisons (run-time positions)."""

from __future__ import annotations

import torch

from rewrite.frontends.compose.emit import Emit
from rewrite.ir.dtypes import TORCH_DTYPE
from rewrite.ir.graph import Value


def scatter(e: Emit, base: Value | None, src: Value, flat: torch.Tensor, n_t: int, accumulate: bool) -> Value:
    """``base`` (pre, T = ``n_t``, post) with source row i of ``src`` (pre, S, post) written (``accumulate``: added) at
    target ``flat[i]`` of the middle axis, the targets constants: gathers, as registry ops have no scatter.
    Each target reads its j-th source for j < m (m: the most sources any target has; a zero row appended
    after the sources where it has fewer), and the m gathers are summed.  ``base`` None is zeros.  Without
    ``accumulate`` a target written twice is a ``ValueError`` (which write wins would be unspecified); the
    targets written none keep ``base``'s values (a where)."""
    pre, n_s, post = e.shape(src)
    counts = torch.bincount(flat, minlength=n_t)
    m = int(counts.max()) if n_s else 0
    if m > 1 and not accumulate:
        raise ValueError("writing one position twice (which write wins is unspecified)")
    zero = torch.zeros((pre, 1, post), dtype=TORCH_DTYPE[e.graph.dtype_of(src)])
    ext = e.op("concat", [src, e.weight(zero)], axis=1)  # source n_s: a zero row
    order = torch.argsort(flat, stable=True)
    first = torch.cumsum(counts, 0) - counts
    rank = torch.empty(n_s, dtype=torch.int64)
    rank[order] = torch.arange(n_s) - first[flat[order]]  # which source of its target each one is
    out: Value | None = None
    for j in range(m):
        idx = torch.full((n_t,), n_s, dtype=torch.int64)
        pick = rank == j
        idx[flat[pick]] = torch.arange(n_s)[pick]
        g = e.op("index_select", [ext, e.weight(idx)], axis=1)
        out = g if out is None else e.op("add", [out, g])
    if out is None:  # nothing written
        return base if base is not None else e.weight(torch.zeros((pre, n_t, post), dtype=zero.dtype))
    if base is None or (not accumulate and bool((counts > 0).all())):
        return out
    if accumulate:
        return e.op("add", [base, out])
    covered = e.weight((counts > 0).reshape(1, n_t, 1))
    return e.op("where", [covered, out, base])


RUNTIME_SCATTER_MAX = 1 << 26  # elements of the (source x target) comparison a run-time scatter builds


def scatter_runtime(e: Emit, base: Value, src: Value, idx: Value, reduction: str = "none") -> Value:
    """``base`` (A, D, B) with ``src`` (A, K, B) written along the middle axis at run-time int64 positions
    ``idx`` (A or 1, K, B or 1; in range): ``out[a, idx[a, k, b], b] = src[a, k, b]``, or combined with what
    is there by ``reduction`` (add, mul, max, min).  Every (source, target) pair is compared (``hit``, K x D
    per line, refused past ``RUNTIME_SCATTER_MAX`` elements).  Without a reduction a target keeps the last
    source that hits it (the order torch's and onnxruntime's CPU loops write in) through a gather; with one,
    the sources that hit it are reduced (a where filling the others with the identity, then a reduction:
    no 0 * inf) and combined with ``base``, which a target no source hits keeps."""
    a_, d_, b_ = e.shape(base)
    _, k_, _ = e.shape(src)
    ia, _, ib = e.shape(idx)
    if a_ * k_ * d_ * (ib if reduction == "none" else b_) > RUNTIME_SCATTER_MAX:
        raise ValueError(f"at run-time indices compares {k_} sources with {d_} targets per line: too large")
    i64 = torch.int64
    hit = e.op("eq", [e.reshape(idx, (ia, k_, 1, ib)), e.weight(torch.arange(d_, dtype=i64).reshape(1, 1, d_, 1))])
    if reduction != "none":
        dt = TORCH_DTYPE[e.graph.dtype_of(src)]
        big = torch.iinfo(dt).max if dt == i64 else float("inf")
        unit, red, comb = {
            "add": (0, "reduce_sum", "add"),
            "mul": (1, "reduce_prod", "mul"),
            "max": (-big - (dt == i64), "reduce_max", "maximum"),
            "min": (big, "reduce_min", "minimum"),
        }[reduction]
        fill = e.weight(torch.full((1, 1, 1, 1), unit, dtype=dt))
        picked = e.op("where", [hit, e.reshape(src, (a_, k_, 1, b_)), fill])
        return e.op(comb, [base, e.op(red, [picked], axes=(1,), keepdim=0)])
    order = e.weight(torch.arange(k_, dtype=i64).reshape(1, k_, 1, 1))
    last = e.op("where", [hit, order, e.weight(torch.full((1, 1, 1, 1), -1, dtype=i64))])
    pick = e.op("reduce_max", [last], axes=(1,), keepdim=0)  # (ia, D, ib): the last source, or -1
    at = e.op("maximum", [pick, e.weight(torch.zeros((1, 1, 1), dtype=i64))])
    if (ia, ib) != (a_, b_):
        at = e.op("expand", [at], shape=(a_, d_, b_))
    written = e.op("ge", [pick, e.weight(torch.zeros((1, 1, 1), dtype=i64))])
    return e.op("where", [written, e.op("gather", [src, at], axis=1), base])
