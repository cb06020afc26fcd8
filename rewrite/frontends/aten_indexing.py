"""ATen indexing, comparison and selection converters (embedding, index, gather, where, masked_fill,
any/all, flip, argmax, cumsum, attention): the ``a_*`` converters of those ``ATEN`` rows."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import torch

from rewrite.frontends.aten_base import converter
from rewrite.frontends.aten_spelled import spelled
from rewrite.frontends.aten_state import ImportState, _Unsupported
from rewrite.frontends.compose import TOPK_MAX_K, arg_extreme, cumsum, scatter, scatter_runtime, topk
from rewrite.ir.dtypes import TORCH_DTYPE, dtype_name
from rewrite.ir.graph import Value

aten = torch.ops.aten


def flat_positions(ts: Sequence[torch.Tensor], sizes: Sequence[int]) -> torch.Tensor:
    """Constant integer index tensors into dimensions of ``sizes``, broadcast together, as flat positions
    ``(i * s1 + j) * s2 + ...`` into those dimensions merged (negative positions count from the end)."""
    flat = torch.zeros(torch.broadcast_shapes(*(t.shape for t in ts)), dtype=torch.int64)
    for t, n in zip(ts, sizes, strict=True):
        flat = flat * n + t.long() % n
    return flat


@converter
def a_assert_metadata(st: ImportState, *args: Any, **kw: Any) -> None:
    return None


@converter
def a_embedding(st: ImportState, weight: Any, indices: Any, *rest: Any) -> Value:
    return st.b.embedding(st.tensor(weight), st.tensor(indices))


@converter
def a_index_select(st: ImportState, x: Any, dim: int, index: Any) -> Value:
    v = st.tensor(x)
    return st.b.index_select(v, st.tensor(index), axis=st.axis(dim, len(st.shape(v))))


@converter
def a_index(st: ImportState, x: Any, indices: Sequence[Any]) -> Value:
    """Advanced indexing ``x[..., i, j, ...]`` by integer tensors, as one index_select over the indexed
    dimensions merged into one: the flat position ``(i * s_j + j) * ...`` is a constant when every index
    is (reflection/replication padding, unfold, a gather of columns), else int64 arithmetic at run time
    (a classifier head's ``logits[arange(B), last_token]``), negative run-time indices wrapped."""
    v = st.tensor(x)
    s = st.shape(v)
    at = [d for d, i in enumerate(indices) if i is not None]
    if len(at) == 1 and not isinstance(indices[at[0]], torch.Tensor):  # a run-time index
        idx = st.tensor(indices[at[0]])
        if st.b.graph.dtype_of(idx) == "int64" and len(st.shape(idx)) == 1:
            return st.b.index_select(v, wrapped(st, idx, s[at[0]]), axis=at[0])
    for d in at:
        t = indices[d]
        dt = t.dtype if isinstance(t, torch.Tensor) else TORCH_DTYPE[st.b.graph.dtype_of(st.tensor(t))]
        if dt not in (torch.int64, torch.int32):
            raise _Unsupported("indexing by a boolean mask (only integer index tensors)")
    shapes = [
        tuple(indices[d].shape) if isinstance(indices[d], torch.Tensor) else st.shape(st.tensor(indices[d])) for d in at
    ]
    bshape = tuple(torch.broadcast_shapes(*shapes))
    adjacent = at == list(range(at[0], at[-1] + 1))
    if not adjacent:  # torch puts the broadcast dimensions first: move the indexed ones to the front
        rest = [d for d in range(len(s)) if d not in at]
        v = st.b.transpose(v, perm=tuple(at + rest))
        sizes = [s[d] for d in at]
        s, new_at = tuple(s[d] for d in at + rest), list(range(len(at)))
    else:
        sizes, new_at = [s[d] for d in at], at
    lo, hi = new_at[0], new_at[-1] + 1
    merged = st.reshape(v, (*s[:lo], math.prod(s[lo:hi]), *s[hi:]))
    if all(isinstance(indices[d], torch.Tensor) for d in at):
        flat = flat_positions([indices[d] for d in at], sizes).flatten()
        idx = st.const(("index", st.node_name()), f"const.{st.node_name()}", flat.contiguous)
    else:
        idx = run_time_flat(st, [indices[d] for d in at], sizes, bshape)
    y = st.b.index_select(merged, idx, axis=lo)
    return st.reshape(y, st.out_shape())


def wrapped(st: ImportState, idx: Value, n: int) -> Value:
    """Run-time int64 positions with the negative ones counted from the end of a dimension of ``n``."""
    zero = st.scalar_like(0, idx)
    return st.b.where(st.b.lt(idx, zero), st.b.op("add", idx, st.scalar_like(n, idx)), idx)


def run_time_flat(st: ImportState, ts: Sequence[Any], sizes: Sequence[int], bshape: tuple[int, ...]) -> Value:
    """The flat positions ``(i * s1 + j) * s2 + ...`` of broadcast index tensors, some computed at run
    time, as a 1-d int64 value."""
    flat: Value | None = None
    for t, n in zip(ts, sizes, strict=True):
        if isinstance(t, torch.Tensor):
            iv = st.weight(f"const.{st.node_name()}", (t.long() % n).contiguous())
        else:
            iv = wrapped(st, st.tensor(t), n)
            if st.b.graph.dtype_of(iv) != "int64":
                iv = st.b.cast(iv, dtype="int64")
        iv = st.reshape(iv, (1,) * (len(bshape) - len(st.shape(iv))) + st.shape(iv))
        if st.shape(iv) != bshape:
            iv = st.b.op("expand", iv, shape=bshape)
        flat = iv if flat is None else st.b.op("add", st.b.op("mul", flat, st.scalar_like(n, flat)), iv)
    assert flat is not None
    return st.reshape(flat, (math.prod(bshape),))


@converter
def a_slice_scatter(
    st: ImportState, x: Any, src: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1
) -> Value:
    """``x`` with ``x[..., start:end:step, ...] = src`` (Funnel's pooled attention writes its first row
    back): a concat of the untouched pieces and ``src`` when the slice is contiguous, else gathers."""
    v = st.tensor(x)
    s = st.shape(v)
    ax = st.axis(dim, len(s))
    lo, hi, stp = slice(start, end, step).indices(s[ax])
    pos = torch.arange(lo, hi, stp)
    if pos.numel() == 0:
        return v
    u = st.tensor(src)
    if st.b.graph.dtype_of(u) != st.b.graph.dtype_of(v):
        raise _Unsupported(f"slice_scatter of {st.b.graph.dtype_of(u)} into {st.b.graph.dtype_of(v)}")
    if stp == 1:
        parts = [st.b.slice(v, axis=ax, start=0, end=lo)] if lo > 0 else []
        parts.append(u)
        if hi < s[ax]:
            parts.append(st.b.slice(v, axis=ax, start=hi, end=s[ax]))
        return parts[0] if len(parts) == 1 else st.b.concat(*parts, axis=ax)
    pre, post = math.prod(s[:ax]), math.prod(s[ax + 1 :])
    base = st.reshape(v, (pre, s[ax], post))
    y = scatter(st.emit(), base, st.reshape(u, (pre, pos.numel(), post)), pos, s[ax], False)
    return st.reshape(y, s)


@converter
def a_index_put(st: ImportState, x: Any, indices: Sequence[Any], values: Any, accumulate: bool = False) -> Value:
    """``x[..., i, j, ...] = values`` (``+=`` with ``accumulate``: F.fold's col2im, a static cache update) by
    constant index tensors on adjacent dimensions, as gathers (``frontends.compose.scatter``)."""
    at = [d for d, i in enumerate(indices) if i is not None]
    if not at:
        raise _Unsupported("index_put without an index tensor")
    if at != list(range(at[0], at[-1] + 1)):
        raise _Unsupported("index_put at non-adjacent indexed dimensions")
    ts = [indices[d] for d in at]
    dts = [t.dtype if isinstance(t, torch.Tensor) else TORCH_DTYPE[st.b.graph.dtype_of(st.tensor(t))] for t in ts]
    if any(dt not in (torch.int64, torch.int32) for dt in dts):
        raise _Unsupported("index_put by a boolean mask (only integer index tensors)")
    s = st.out_shape()
    lo, hi = at[0], at[-1] + 1
    pre, post, n_t = math.prod(s[:lo]), math.prod(s[hi:]), math.prod(s[lo:hi])
    constant = all(isinstance(t, torch.Tensor) for t in ts)
    shapes = [tuple(t.shape) if isinstance(t, torch.Tensor) else st.shape(st.tensor(t)) for t in ts]
    bshape = tuple(torch.broadcast_shapes(*shapes))
    flat = flat_positions(ts, [s[d] for d in at]) if constant else None
    v = st.tensor(values)
    if st.b.graph.dtype_of(v) != (want := st.meta_dtype()):
        raise _Unsupported(f"index_put of {st.b.graph.dtype_of(v)} values into a {want} tensor")
    full = s[:lo] + bshape + s[hi:]  # the values broadcast to the indexed block's shape
    v = st.reshape(v, (1,) * (len(full) - len(st.shape(v))) + st.shape(v))
    if st.shape(v) != full:
        v = st.b.op("expand", v, shape=full)
    src = st.reshape(v, (pre, math.prod(bshape), post))
    if flat is None:  # run-time positions (a cache written at the step's position): compared
        rows = st.reshape(run_time_flat(st, ts, [s[d] for d in at], bshape), (1, math.prod(bshape), 1))
        base_v = st.reshape(st.tensor(x), (pre, n_t, post))
        return st.reshape(scatter_compared(st, base_v, src, rows, "add" if accumulate else "none"), s)
    zeros = isinstance(x, torch.Tensor) and not bool(x.any())  # F.fold scatters into new zeros
    base = None if zeros else st.reshape(st.tensor(x), (pre, n_t, post))  # None: scatter's zeros
    try:
        y = scatter(st.emit(), base, src, flat.flatten(), n_t, accumulate)
    except ValueError as e:
        raise _Unsupported(f"index_put {e}") from None
    return st.reshape(y, s)


def scatter_compared(st: ImportState, base: Value, src: Value, idx: Value, reduction: str) -> Value:
    """``compose.scatter_runtime``: (A, D, B) ``base``, (A, K, B) ``src``, positions ``idx``."""
    try:
        return scatter_runtime(st.emit(), base, src, idx, reduction)
    except ValueError as e:
        raise _Unsupported(f"scatter {e}") from None


@converter
def a_index_copy(st: ImportState, x: Any, dim: int, index: Any, source: Any) -> Value:
    """``x.index_copy(dim, index, source)`` (a static KV cache written at ``cache_position``): index_put
    along one dim."""
    s = st.shape(st.tensor(x))
    ax = st.axis(dim, len(s))
    return a_index_put(st, x, [None] * ax + [index], source)


@converter
def a_scatter(
    st: ImportState, x: Any, dim: int, index: Any, src: Any, reduce: Any = None, *, include_self: bool = True
) -> Value:
    """torch.scatter / scatter_add / scatter_reduce (sum, prod, amax, amin; include_self) along ``dim``, at
    constant or run-time positions, by comparison (``compose.scatter_runtime``); a scalar ``src`` is filled
    in.  An index shorter than x in another dim is extended there by -1s, which match no position."""
    v = st.tensor(x)
    s = st.shape(v)
    ax = st.axis(dim, len(s))
    if isinstance(index, torch.Tensor):
        idx = st.weight(f"const.{st.node_name()}", index.long().contiguous())
    else:
        idx = st.tensor(index)
    ishape = st.shape(idx)
    if len(ishape) != len(s) or any(i > d for j, (i, d) in enumerate(zip(ishape, s)) if j != ax):
        raise _Unsupported(f"scatter with index {ishape} larger than the input {s} but along dim {ax}")
    if isinstance(src, (Value, torch.Tensor)):
        sv = st.tensor(src)
        for d, n in enumerate(ishape):  # torch reads only the index's extent of src
            if st.shape(sv)[d] != n:
                sv = st.b.op("slice", sv, axis=d, start=0, end=n)
    else:
        sv = st.b.op("expand", st.scalar_like(src, v), shape=ishape)
    if st.b.graph.dtype_of(sv) != st.b.graph.dtype_of(v):
        raise _Unsupported(f"scatter of {st.b.graph.dtype_of(sv)} into {st.b.graph.dtype_of(v)}")
    if st.current is aten.scatter_add.default:
        reduce = "sum"
    red = {None: "none", "sum": "add", "add": "add", "prod": "mul", "multiply": "mul", "amax": "max", "amin": "min"}
    if reduce not in red or not include_self:
        raise _Unsupported(f"scatter with reduce={reduce!r}, include_self={include_self} (sum, prod, amax, amin)")
    iv = wrapped(st, idx, s[ax])
    for d, n in enumerate(ishape):
        if d != ax and n < s[d]:
            pad = tuple(s[d] - n if j == d else m for j, m in enumerate(st.shape(iv)))
            iv = st.b.op("concat", iv, st.weight(f"const.{st.node_name()}", torch.full(pad, -1)), axis=d)
            sv = st.b.op("concat", sv, st.b.op("expand", st.scalar_like(0, sv), shape=pad), axis=d)
    pre, post = math.prod(s[:ax]), math.prod(s[ax + 1 :])
    base = st.reshape(v, (pre, s[ax], post))
    src3, iv3 = (st.reshape(t, (pre, ishape[ax], post)) for t in (sv, iv))
    return st.reshape(scatter_compared(st, base, src3, iv3, red[reduce]), s)


@converter
def a_gather(st: ImportState, x: Any, dim: int, index: Any, sparse_grad: bool = False) -> Value:
    v = st.tensor(x)
    return st.b.gather(v, st.tensor(index), axis=st.axis(dim, len(st.shape(v))))


@converter
def a_compare(st: ImportState, a: Any, b: Any) -> Value:
    x = st.tensor(a)
    y = st.tensor(b) if isinstance(b, (Value, torch.Tensor)) else st.scalar_like(b, x)
    return st.reshape(st.binary(spelled(st.current)[0].name, x, y), st.out_shape())


@converter
def a_where(st: ImportState, cond: Any, x: Any, y: Any) -> Value:
    c, a, b = st.tensor(cond), st.tensor(x), st.tensor(y)
    r = len(st.out_shape())
    c, a, b = (st.reshape(v, (1,) * (r - len(st.shape(v))) + st.shape(v)) for v in (c, a, b))
    return st.b.where(c, a, b)


@converter
def a_any(st: ImportState, x: Any, dims: Any = None, keepdim: bool = False) -> Value:
    """any (all) of a bool tensor over ``dims``: the max of it cast to 0/1 floats, above one half (all:
    not any of its negation)."""
    v = st.tensor(x)
    if st.b.graph.dtype_of(v) != "bool":
        raise _Unsupported(f"any/all of a {st.b.graph.dtype_of(v)} tensor (only bool)")
    every = st.current in (aten.all.dim, aten.all.dims, aten.all.default)
    if every:
        v = st.b.logical_not(v)
    r = len(st.shape(v))
    axes = st.reduce_axes(dims, r)
    m = st.b.op("reduce_max", st.b.cast(v, dtype="float32"), axes=axes, keepdim=int(bool(keepdim)))
    out = st.binary("gt", m, st.scalar_like(0.5, m))
    out = st.reshape(out, st.out_shape())
    return st.b.logical_not(out) if every else out


@converter
def a_full_like(st: ImportState, x: Any, value: Any, **kw: Any) -> Value:
    """A tensor of ``x``'s shape filled with ``value``: one element, expanded (a view)."""
    like = st.tensor(x)
    dtype = kw.get("dtype") or TORCH_DTYPE[st.b.graph.dtype_of(like)]
    if dtype_name(dtype) is None:
        raise _Unsupported(f"full_like of dtype {dtype}; eqsat computes float32, int64 and bool")
    out = st.out_shape()
    t = torch.full((1,) * len(out), value, dtype=dtype)
    one = st.const(("full", dtype_name(dtype), float(value), len(out)), f"const.{st.node_name()}", lambda: t)
    return one if tuple(out) == (1,) * len(out) else st.b.op("expand", one, shape=tuple(out))


@converter
def a_cumsum(st: ImportState, x: Any, dim: int, dtype: Any = None) -> Value:
    """A running sum or product (``compose.cumsum``), in the float32 or int64 torch computes it in."""
    v = st.tensor(x)
    want = st.meta_dtype()
    prod = st.current is aten.cumprod.default
    if want not in ("float32", "int64"):
        raise _Unsupported(f"{'cumprod' if prod else 'cumsum'} to {want} (float32 or int64)")
    if st.b.graph.dtype_of(v) != want:  # torch sums bool and int32 as int64, or as the dtype asked for
        v = st.b.cast(v, dtype=want)
    return cumsum(st.emit(), v, st.axis(dim, len(st.shape(v))), combine="mul" if prod else "add")


def first_extreme(st: ImportState, v: Value, axis: int, keepdim: bool, lowest: bool) -> tuple[Value, Value]:
    """The max (min) of ``v`` along ``axis`` and its first position, as torch.max(dim) returns them
    (``compose.arg_extreme``)."""
    if st.b.graph.dtype_of(v) not in ("float32", "int64"):
        raise _Unsupported(f"argmax/argmin of a {st.b.graph.dtype_of(v)} tensor (only float32 and int64)")
    n = st.shape(v)[axis]
    if n > 2**24:
        raise _Unsupported(f"argmax/argmin over {n} elements (positions beyond 2^24 are not exact in float32)")
    ext, first = arg_extreme(st.emit(), v, axis, keepdim, lowest)
    return (ext if keepdim else st.reshape(ext, st.shape(first))), first


@converter
def a_argmax(st: ImportState, x: Any, dim: Any = None, keepdim: bool = False) -> Value:
    v = st.tensor(x)
    if dim is None:  # over every element: the flat position
        v, dim = st.reshape(v, (math.prod(st.shape(v)),)), 0
    lowest = st.current is aten.argmin.default
    first = first_extreme(st, v, st.axis(dim, len(st.shape(v))), bool(keepdim), lowest)[1]
    return st.reshape(first, st.out_shape())


@converter
def a_max_dim(st: ImportState, x: Any, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
    v = st.tensor(x)
    return first_extreme(st, v, st.axis(dim, len(st.shape(v))), bool(keepdim), st.current is aten.min.dim)


@converter
def a_topk(
    st: ImportState, x: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> tuple[Value, Value]:
    """torch.topk as k selection passes (``compose.topk``); the order is always sorted."""
    v = st.tensor(x)
    if st.b.graph.dtype_of(v) not in ("float32", "int64"):
        raise _Unsupported(f"topk of a {st.b.graph.dtype_of(v)} tensor (float32 or int64)")
    ax = st.axis(dim, len(st.shape(v)))
    n = st.shape(v)[ax]
    if not 1 <= int(k) <= min(n, TOPK_MAX_K):
        raise _Unsupported(f"topk with k={k} of {n} (1 to {TOPK_MAX_K}: each is a pass over the row)")
    if n > 2**24:
        raise _Unsupported(f"topk over {n} elements (positions beyond 2^24 are not exact in float32)")
    return topk(st.emit(), v, int(k), ax, bool(largest))


@converter
def a_flip(st: ImportState, x: Any, dims: Sequence[int]) -> Value:
    """Reversed along each of ``dims``: an index_select with the reversed positions."""
    v = st.tensor(x)
    r = len(st.shape(v))
    for d in sorted({st.axis(d, r) for d in dims}):
        n = st.shape(v)[d]
        if n == 1:
            continue
        idx = st.const(("flip", n), f"const.{st.node_name()}.{d}", partial(torch.arange, n - 1, -1, -1))
        v = st.b.index_select(v, idx, axis=d)
    return v


@converter
def a_masked_fill(st: ImportState, x: Any, mask: Any, value: Any) -> Value:
    v = st.scalar_of(value)
    if v is None:
        raise _Unsupported(f"masked_fill with a non-constant value {value!r}")
    return st.reshape(st.b.masked_fill(st.tensor(x), st.tensor(mask), value=v), st.out_shape())


@converter
def a_logical_not(st: ImportState, x: Any) -> Value:
    v = st.tensor(x)
    if st.b.graph.dtype_of(v) != "bool":
        raise _Unsupported("bitwise/logical not of a non-bool tensor")
    return st.b.logical_not(v)


@converter
def a_sdpa(
    st: ImportState,
    q: Any,
    k: Any,
    v: Any,
    attn_mask: Any = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Value:
    """softmax(q @ k^T * scale + mask) @ v, from registry ops (a bool mask fills -inf where false)."""
    if dropout_p:
        raise _Unsupported(f"attention with dropout_p={dropout_p}")
    Q, K, V = st.tensor(q), st.tensor(k), st.tensor(v)
    sq, sk = st.shape(Q), st.shape(K)
    if enable_gqa or sq[:-2] != sk[:-2]:
        raise _Unsupported("attention with grouped or broadcast key/value heads")
    r = len(sq)
    perm = tuple(range(r - 2)) + (r - 1, r - 2)
    s = st.b.matmul(Q, st.b.transpose(K, perm=perm))
    s = st.b.smul(s, scalar=float(scale if scale is not None else sq[-1] ** -0.5))
    L, S = sq[-2], sk[-2]
    if is_causal:
        keep = st.const(("causal", L, S), "const.causal", lambda: torch.ones(L, S, dtype=torch.bool).tril())
        s = st.b.masked_fill(s, st.b.logical_not(keep), value=float("-inf"))
    if attn_mask is not None:
        m = st.tensor(attn_mask, "attn_mask")
        if st.b.graph.dtype_of(m) == "bool":
            s = st.b.masked_fill(s, st.b.logical_not(m), value=float("-inf"))
        else:
            s = st.b.add(s, m)
    return st.b.matmul(st.b.softmax(s, axis=r - 1), V)


__all__ = [
    "a_any",
    "a_argmax",
    "a_assert_metadata",
    "a_compare",
    "a_cumsum",
    "a_embedding",
    "a_flip",
    "a_full_like",
    "a_gather",
    "a_index",
    "a_index_copy",
    "a_index_put",
    "a_index_select",
    "a_logical_not",
    "a_masked_fill",
    "a_max_dim",
    "a_scatter",
    "a_sdpa",
    "a_slice_scatter",
    "a_topk",
    "a_where",
]
