"""ATen indexing, comparison and selection converters (embedding, index, gather, where, masked_fill,
any/all, flip, argmax, cumsum, attention): the ``a_*`` methods of those ``ATEN`` rows."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from typing import Any

import torch

from rewrite.frontends.aten_base import AtenBase
from rewrite.frontends.aten_spelled import spelled
from rewrite.frontends.aten_state import _Unsupported
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


class AtenIndexing(AtenBase):
    def a_assert_metadata(self, *args: Any, **kw: Any) -> None:
        return None

    def a_embedding(self, weight: Any, indices: Any, *rest: Any) -> Value:
        return self.b.embedding(self.tensor(weight), self.tensor(indices))

    def a_index_select(self, x: Any, dim: int, index: Any) -> Value:
        v = self.tensor(x)
        return self.b.index_select(v, self.tensor(index), axis=self.axis(dim, len(self.shape(v))))

    def a_index(self, x: Any, indices: Sequence[Any]) -> Value:
        """Advanced indexing ``x[..., i, j, ...]`` by integer tensors, as one index_select over the indexed
        dimensions merged into one: the flat position ``(i * s_j + j) * ...`` is a constant when every index
        is (reflection/replication padding, unfold, a gather of columns), else int64 arithmetic at run time
        (a classifier head's ``logits[arange(B), last_token]``), negative run-time indices wrapped."""
        v = self.tensor(x)
        s = self.shape(v)
        at = [d for d, i in enumerate(indices) if i is not None]
        if len(at) == 1 and not isinstance(indices[at[0]], torch.Tensor):  # a run-time index
            idx = self.tensor(indices[at[0]])
            if self.b.graph.dtype_of(idx) == "int64" and len(self.shape(idx)) == 1:
                return self.b.index_select(v, self.wrapped(idx, s[at[0]]), axis=at[0])
        for d in at:
            t = indices[d]
            dt = t.dtype if isinstance(t, torch.Tensor) else TORCH_DTYPE[self.b.graph.dtype_of(self.tensor(t))]
            if dt not in (torch.int64, torch.int32):
                raise _Unsupported("indexing by a boolean mask (only integer index tensors)")
        shapes = [
            tuple(indices[d].shape) if isinstance(indices[d], torch.Tensor) else self.shape(self.tensor(indices[d]))
            for d in at
        ]
        bshape = tuple(torch.broadcast_shapes(*shapes))
        adjacent = at == list(range(at[0], at[-1] + 1))
        if not adjacent:  # torch puts the broadcast dimensions first: move the indexed ones to the front
            rest = [d for d in range(len(s)) if d not in at]
            v = self.b.transpose(v, perm=tuple(at + rest))
            sizes = [s[d] for d in at]
            s, new_at = tuple(s[d] for d in at + rest), list(range(len(at)))
        else:
            sizes, new_at = [s[d] for d in at], at
        lo, hi = new_at[0], new_at[-1] + 1
        merged = self.reshape(v, (*s[:lo], math.prod(s[lo:hi]), *s[hi:]))
        if all(isinstance(indices[d], torch.Tensor) for d in at):
            flat = flat_positions([indices[d] for d in at], sizes).flatten()
            idx = self.const(("index", self.node_name()), f"const.{self.node_name()}", flat.contiguous)
        else:
            idx = self.run_time_flat([indices[d] for d in at], sizes, bshape)
        y = self.b.index_select(merged, idx, axis=lo)
        return self.reshape(y, self.out_shape())

    def wrapped(self, idx: Value, n: int) -> Value:
        """Run-time int64 positions with the negative ones counted from the end of a dimension of ``n``."""
        zero = self.scalar_like(0, idx)
        return self.b.where(self.b.lt(idx, zero), self.b.op("add", idx, self.scalar_like(n, idx)), idx)

    def run_time_flat(self, ts: Sequence[Any], sizes: Sequence[int], bshape: tuple[int, ...]) -> Value:
        """The flat positions ``(i * s1 + j) * s2 + ...`` of broadcast index tensors, some computed at run
        time, as a 1-d int64 value."""
        flat: Value | None = None
        for t, n in zip(ts, sizes, strict=True):
            if isinstance(t, torch.Tensor):
                iv = self.weight(f"const.{self.node_name()}", (t.long() % n).contiguous())
            else:
                iv = self.wrapped(self.tensor(t), n)
                if self.b.graph.dtype_of(iv) != "int64":
                    iv = self.b.cast(iv, dtype="int64")
            iv = self.reshape(iv, (1,) * (len(bshape) - len(self.shape(iv))) + self.shape(iv))
            if self.shape(iv) != bshape:
                iv = self.b.op("expand", iv, shape=bshape)
            flat = iv if flat is None else self.b.op("add", self.b.op("mul", flat, self.scalar_like(n, flat)), iv)
        assert flat is not None
        return self.reshape(flat, (math.prod(bshape),))

    def a_slice_scatter(
        self, x: Any, src: Any, dim: int = 0, start: Any = None, end: Any = None, step: int = 1
    ) -> Value:
        """``x`` with ``x[..., start:end:step, ...] = src`` (Funnel's pooled attention writes its first row
        back): a concat of the untouched pieces and ``src`` when the slice is contiguous, else gathers."""
        v = self.tensor(x)
        s = self.shape(v)
        ax = self.axis(dim, len(s))
        lo, hi, st = slice(start, end, step).indices(s[ax])
        pos = torch.arange(lo, hi, st)
        if pos.numel() == 0:
            return v
        u = self.tensor(src)
        if self.b.graph.dtype_of(u) != self.b.graph.dtype_of(v):
            raise _Unsupported(f"slice_scatter of {self.b.graph.dtype_of(u)} into {self.b.graph.dtype_of(v)}")
        if st == 1:
            parts = [self.b.slice(v, axis=ax, start=0, end=lo)] if lo > 0 else []
            parts.append(u)
            if hi < s[ax]:
                parts.append(self.b.slice(v, axis=ax, start=hi, end=s[ax]))
            return parts[0] if len(parts) == 1 else self.b.concat(*parts, axis=ax)
        pre, post = math.prod(s[:ax]), math.prod(s[ax + 1 :])
        base = self.reshape(v, (pre, s[ax], post))
        y = scatter(self.emit(), base, self.reshape(u, (pre, pos.numel(), post)), pos, s[ax], False)
        return self.reshape(y, s)

    def a_index_put(self, x: Any, indices: Sequence[Any], values: Any, accumulate: bool = False) -> Value:
        """``x[..., i, j, ...] = values`` (``+=`` with ``accumulate``: F.fold's col2im, a static cache update) by
        constant index tensors on adjacent dimensions, as gathers (``frontends.compose.scatter``)."""
        at = [d for d, i in enumerate(indices) if i is not None]
        if not at:
            raise _Unsupported("index_put without an index tensor")
        if at != list(range(at[0], at[-1] + 1)):
            raise _Unsupported("index_put at non-adjacent indexed dimensions")
        ts = [indices[d] for d in at]
        dts = [
            t.dtype if isinstance(t, torch.Tensor) else TORCH_DTYPE[self.b.graph.dtype_of(self.tensor(t))] for t in ts
        ]
        if any(dt not in (torch.int64, torch.int32) for dt in dts):
            raise _Unsupported("index_put by a boolean mask (only integer index tensors)")
        s = self.out_shape()
        lo, hi = at[0], at[-1] + 1
        pre, post, n_t = math.prod(s[:lo]), math.prod(s[hi:]), math.prod(s[lo:hi])
        constant = all(isinstance(t, torch.Tensor) for t in ts)
        shapes = [tuple(t.shape) if isinstance(t, torch.Tensor) else self.shape(self.tensor(t)) for t in ts]
        bshape = tuple(torch.broadcast_shapes(*shapes))
        flat = flat_positions(ts, [s[d] for d in at]) if constant else None
        v = self.tensor(values)
        if self.b.graph.dtype_of(v) != (want := self.meta_dtype()):
            raise _Unsupported(f"index_put of {self.b.graph.dtype_of(v)} values into a {want} tensor")
        full = s[:lo] + bshape + s[hi:]  # the values broadcast to the indexed block's shape
        v = self.reshape(v, (1,) * (len(full) - len(self.shape(v))) + self.shape(v))
        if self.shape(v) != full:
            v = self.b.op("expand", v, shape=full)
        src = self.reshape(v, (pre, math.prod(bshape), post))
        if flat is None:  # run-time positions (a cache written at the step's position): compared
            rows = self.reshape(self.run_time_flat(ts, [s[d] for d in at], bshape), (1, math.prod(bshape), 1))
            base_v = self.reshape(self.tensor(x), (pre, n_t, post))
            return self.reshape(self.scatter_compared(base_v, src, rows, "add" if accumulate else "none"), s)
        zeros = isinstance(x, torch.Tensor) and not bool(x.any())  # F.fold scatters into new zeros
        base = None if zeros else self.reshape(self.tensor(x), (pre, n_t, post))  # None: scatter's zeros
        try:
            y = scatter(self.emit(), base, src, flat.flatten(), n_t, accumulate)
        except ValueError as e:
            raise _Unsupported(f"index_put {e}") from None
        return self.reshape(y, s)

    def scatter_compared(self, base: Value, src: Value, idx: Value, reduction: str) -> Value:
        """``compose.scatter_runtime``: (A, D, B) ``base``, (A, K, B) ``src``, positions ``idx``."""
        try:
            return scatter_runtime(self.emit(), base, src, idx, reduction)
        except ValueError as e:
            raise _Unsupported(f"scatter {e}") from None

    def a_index_copy(self, x: Any, dim: int, index: Any, source: Any) -> Value:
        """``x.index_copy(dim, index, source)`` (a static KV cache written at ``cache_position``): index_put
        along one dim."""
        s = self.shape(self.tensor(x))
        ax = self.axis(dim, len(s))
        return self.a_index_put(x, [None] * ax + [index], source)

    def a_scatter(
        self, x: Any, dim: int, index: Any, src: Any, reduce: Any = None, *, include_self: bool = True
    ) -> Value:
        """torch.scatter / scatter_add / scatter_reduce (sum, prod, amax, amin; include_self) along ``dim``, at
        constant or run-time positions, by comparison (``compose.scatter_runtime``); a scalar ``src`` is filled
        in.  An index shorter than x in another dim is extended there by -1s, which match no position."""
        v = self.tensor(x)
        s = self.shape(v)
        ax = self.axis(dim, len(s))
        if isinstance(index, torch.Tensor):
            idx = self.weight(f"const.{self.node_name()}", index.long().contiguous())
        else:
            idx = self.tensor(index)
        ishape = self.shape(idx)
        if len(ishape) != len(s) or any(i > d for j, (i, d) in enumerate(zip(ishape, s)) if j != ax):
            raise _Unsupported(f"scatter with index {ishape} larger than the input {s} but along dim {ax}")
        if isinstance(src, (Value, torch.Tensor)):
            sv = self.tensor(src)
            for d, n in enumerate(ishape):  # torch reads only the index's extent of src
                if self.shape(sv)[d] != n:
                    sv = self.b.op("slice", sv, axis=d, start=0, end=n)
        else:
            sv = self.b.op("expand", self.scalar_like(src, v), shape=ishape)
        if self.b.graph.dtype_of(sv) != self.b.graph.dtype_of(v):
            raise _Unsupported(f"scatter of {self.b.graph.dtype_of(sv)} into {self.b.graph.dtype_of(v)}")
        if self.current is aten.scatter_add.default:
            reduce = "sum"
        red = {None: "none", "sum": "add", "add": "add", "prod": "mul", "multiply": "mul", "amax": "max", "amin": "min"}
        if reduce not in red or not include_self:
            raise _Unsupported(f"scatter with reduce={reduce!r}, include_self={include_self} (sum, prod, amax, amin)")
        iv = self.wrapped(idx, s[ax])
        for d, n in enumerate(ishape):
            if d != ax and n < s[d]:
                pad = tuple(s[d] - n if j == d else m for j, m in enumerate(self.shape(iv)))
                iv = self.b.op("concat", iv, self.weight(f"const.{self.node_name()}", torch.full(pad, -1)), axis=d)
                sv = self.b.op("concat", sv, self.b.op("expand", self.scalar_like(0, sv), shape=pad), axis=d)
        pre, post = math.prod(s[:ax]), math.prod(s[ax + 1 :])
        base = self.reshape(v, (pre, s[ax], post))
        src3, iv3 = (self.reshape(t, (pre, ishape[ax], post)) for t in (sv, iv))
        return self.reshape(self.scatter_compared(base, src3, iv3, red[reduce]), s)

    def a_gather(self, x: Any, dim: int, index: Any, sparse_grad: bool = False) -> Value:
        v = self.tensor(x)
        return self.b.gather(v, self.tensor(index), axis=self.axis(dim, len(self.shape(v))))

    def a_compare(self, a: Any, b: Any) -> Value:
        x = self.tensor(a)
        y = self.tensor(b) if isinstance(b, (Value, torch.Tensor)) else self.scalar_like(b, x)
        return self.reshape(self.binary(spelled(self.current)[0].name, x, y), self.out_shape())

    def a_where(self, cond: Any, x: Any, y: Any) -> Value:
        c, a, b = self.tensor(cond), self.tensor(x), self.tensor(y)
        r = len(self.out_shape())
        c, a, b = (self.reshape(v, (1,) * (r - len(self.shape(v))) + self.shape(v)) for v in (c, a, b))
        return self.b.where(c, a, b)

    def a_any(self, x: Any, dims: Any = None, keepdim: bool = False) -> Value:
        """any (all) of a bool tensor over ``dims``: the max of it cast to 0/1 floats, above one half (all:
        not any of its negation)."""
        v = self.tensor(x)
        if self.b.graph.dtype_of(v) != "bool":
            raise _Unsupported(f"any/all of a {self.b.graph.dtype_of(v)} tensor (only bool)")
        every = self.current in (aten.all.dim, aten.all.dims, aten.all.default)
        if every:
            v = self.b.logical_not(v)
        r = len(self.shape(v))
        axes = self.reduce_axes(dims, r)
        m = self.b.op("reduce_max", self.b.cast(v, dtype="float32"), axes=axes, keepdim=int(bool(keepdim)))
        out = self.binary("gt", m, self.scalar_like(0.5, m))
        out = self.reshape(out, self.out_shape())
        return self.b.logical_not(out) if every else out

    def a_full_like(self, x: Any, value: Any, **kw: Any) -> Value:
        """A tensor of ``x``'s shape filled with ``value``: one element, expanded (a view)."""
        like = self.tensor(x)
        dtype = kw.get("dtype") or TORCH_DTYPE[self.b.graph.dtype_of(like)]
        if dtype_name(dtype) is None:
            raise _Unsupported(f"full_like of dtype {dtype}; eqsat computes float32, int64 and bool")
        out = self.out_shape()
        t = torch.full((1,) * len(out), value, dtype=dtype)
        one = self.const(("full", dtype_name(dtype), float(value), len(out)), f"const.{self.node_name()}", lambda: t)
        return one if tuple(out) == (1,) * len(out) else self.b.op("expand", one, shape=tuple(out))

    def a_cumsum(self, x: Any, dim: int, dtype: Any = None) -> Value:
        """A running sum or product (``compose.cumsum``), in the float32 or int64 torch computes it in."""
        v = self.tensor(x)
        want = self.meta_dtype()
        prod = self.current is aten.cumprod.default
        if want not in ("float32", "int64"):
            raise _Unsupported(f"{'cumprod' if prod else 'cumsum'} to {want} (float32 or int64)")
        if self.b.graph.dtype_of(v) != want:  # torch sums bool and int32 as int64, or as the dtype asked for
            v = self.b.cast(v, dtype=want)
        return cumsum(self.emit(), v, self.axis(dim, len(self.shape(v))), combine="mul" if prod else "add")

    def first_extreme(self, v: Value, axis: int, keepdim: bool, lowest: bool) -> tuple[Value, Value]:
        """The max (min) of ``v`` along ``axis`` and its first position, as torch.max(dim) returns them
        (``compose.arg_extreme``)."""
        if self.b.graph.dtype_of(v) not in ("float32", "int64"):
            raise _Unsupported(f"argmax/argmin of a {self.b.graph.dtype_of(v)} tensor (only float32 and int64)")
        n = self.shape(v)[axis]
        if n > 2**24:
            raise _Unsupported(f"argmax/argmin over {n} elements (positions beyond 2^24 are not exact in float32)")
        ext, first = arg_extreme(self.emit(), v, axis, keepdim, lowest)
        return (ext if keepdim else self.reshape(ext, self.shape(first))), first

    def a_argmax(self, x: Any, dim: Any = None, keepdim: bool = False) -> Value:
        v = self.tensor(x)
        if dim is None:  # over every element: the flat position
            v, dim = self.reshape(v, (math.prod(self.shape(v)),)), 0
        lowest = self.current is aten.argmin.default
        first = self.first_extreme(v, self.axis(dim, len(self.shape(v))), bool(keepdim), lowest)[1]
        return self.reshape(first, self.out_shape())

    def a_max_dim(self, x: Any, dim: int, keepdim: bool = False) -> tuple[Value, Value]:
        v = self.tensor(x)
        return self.first_extreme(v, self.axis(dim, len(self.shape(v))), bool(keepdim), self.current is aten.min.dim)

    def a_topk(self, x: Any, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> tuple[Value, Value]:
        """torch.topk as k selection passes (``compose.topk``); the order is always sorted."""
        v = self.tensor(x)
        if self.b.graph.dtype_of(v) not in ("float32", "int64"):
            raise _Unsupported(f"topk of a {self.b.graph.dtype_of(v)} tensor (float32 or int64)")
        ax = self.axis(dim, len(self.shape(v)))
        n = self.shape(v)[ax]
        if not 1 <= int(k) <= min(n, TOPK_MAX_K):
            raise _Unsupported(f"topk with k={k} of {n} (1 to {TOPK_MAX_K}: each is a pass over the row)")
        if n > 2**24:
            raise _Unsupported(f"topk over {n} elements (positions beyond 2^24 are not exact in float32)")
        return topk(self.emit(), v, int(k), ax, bool(largest))

    def a_flip(self, x: Any, dims: Sequence[int]) -> Value:
        """Reversed along each of ``dims``: an index_select with the reversed positions."""
        v = self.tensor(x)
        r = len(self.shape(v))
        for d in sorted({self.axis(d, r) for d in dims}):
            n = self.shape(v)[d]
            if n == 1:
                continue
            idx = self.const(("flip", n), f"const.{self.node_name()}.{d}", partial(torch.arange, n - 1, -1, -1))
            v = self.b.index_select(v, idx, axis=d)
        return v

    def a_masked_fill(self, x: Any, mask: Any, value: Any) -> Value:
        v = self.scalar_of(value)
        if v is None:
            raise _Unsupported(f"masked_fill with a non-constant value {value!r}")
        return self.reshape(self.b.masked_fill(self.tensor(x), self.tensor(mask), value=v), self.out_shape())

    def a_logical_not(self, x: Any) -> Value:
        v = self.tensor(x)
        if self.b.graph.dtype_of(v) != "bool":
            raise _Unsupported("bitwise/logical not of a non-bool tensor")
        return self.b.logical_not(v)

    def a_sdpa(
        self,
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
        Q, K, V = self.tensor(q), self.tensor(k), self.tensor(v)
        sq, sk = self.shape(Q), self.shape(K)
        if enable_gqa or sq[:-2] != sk[:-2]:
            raise _Unsupported("attention with grouped or broadcast key/value heads")
        r = len(sq)
        perm = tuple(range(r - 2)) + (r - 1, r - 2)
        s = self.b.matmul(Q, self.b.transpose(K, perm=perm))
        s = self.b.smul(s, scalar=float(scale if scale is not None else sq[-1] ** -0.5))
        L, S = sq[-2], sk[-2]
        if is_causal:
            keep = self.const(("causal", L, S), "const.causal", lambda: torch.ones(L, S, dtype=torch.bool).tril())
            s = self.b.masked_fill(s, self.b.logical_not(keep), value=float("-inf"))
        if attn_mask is not None:
            m = self.tensor(attn_mask, "attn_mask")
            if self.b.graph.dtype_of(m) == "bool":
                s = self.b.masked_fill(s, self.b.logical_not(m), value=float("-inf"))
            else:
                s = self.b.add(s, m)
        return self.b.matmul(self.b.softmax(s, axis=r - 1), V)


__all__ = ["AtenIndexing"]
