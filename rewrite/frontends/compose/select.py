"""Selections along an axis: top-k, the first extreme and its position, running sums and products."""

from __future__ import annotations

import torch

from rewrite.frontends.compose.emit import Emit
from rewrite.ir.graph import Value

TOPK_MAX_K = 32  # top-k is k selection passes over the row: beyond this many, refused


def topk(e: Emit, v: Value, k: int, axis: int, largest: bool) -> tuple[Value, Value]:
    """The k largest (smallest) float32 or int64 values along ``axis`` in order and their int64 positions, as
    torch.topk and ONNX TopK give them: NaN ranks above every number (first when largest, last when
    smallest), equal values by position.  k passes, each picking among the positions not yet taken: the
    preferred class (NaNs when largest, numbers when smallest) at its extreme, its first position, else the
    other class's first; the picked position is then taken.  Positions are an exact float32 iota (the caller
    checks the length is at most 2^24)."""
    s = e.shape(v)
    n, r = s[axis], len(s)

    def const(t: torch.Tensor) -> Value:
        return e.weight(t.reshape(tuple(n if i == axis and t.numel() > 1 else 1 for i in range(r))))

    iota = const(torch.arange(n, dtype=torch.float32))
    past = const(torch.tensor([float(n)]))
    if e.graph.dtype_of(v) == "int64":  # no NaN; taken positions hold the type's far end
        far = torch.iinfo(torch.int64).min if largest else torch.iinfo(torch.int64).max
        fill, nan_v = const(torch.tensor([far])), const(torch.tensor([0]))
    else:
        fill = const(torch.tensor([float("-inf") if largest else float("inf")]))
        nan_v = const(torch.tensor([float("nan")]))
    isnan = e.op("ne", [v, v])
    ax = (axis,)

    def first(hit: Value) -> Value:  # the first position where ``hit``, or n
        return e.op("reduce_min", [e.op("where", [hit, iota, past])], axes=ax, keepdim=1)

    taken: Value | None = None
    vals, poss = [], []
    for _ in range(k):
        free_nan = isnan if taken is None else e.op("logical_and", [isnan, e.op("logical_not", [taken])])
        out = isnan if taken is None else e.op("logical_or", [taken, isnan])  # numbers not yet taken: the rest
        num = e.op("where", [out, fill, v])
        ext = e.op("reduce_max" if largest else "reduce_min", [num], axes=ax, keepdim=1)
        hit_num = e.op("logical_and", [e.op("eq", [num, ext]), e.op("logical_not", [out])])
        p_num, p_nan = first(hit_num), first(free_nan)
        pref, other = (p_nan, p_num) if largest else (p_num, p_nan)
        use_pref = e.op("lt", [pref, past])
        pos = e.op("where", [use_pref, pref, other])
        is_nan = use_pref if largest else e.op("logical_not", [use_pref])
        vals.append(e.op("where", [is_nan, nan_v, ext]))
        poss.append(pos)
        chosen = e.op("eq", [iota, pos])
        taken = chosen if taken is None else e.op("logical_or", [taken, chosen])
    values = vals[0] if k == 1 else e.op("concat", vals, axis=axis)
    pos_all = poss[0] if k == 1 else e.op("concat", poss, axis=axis)
    return values, e.op("cast", [pos_all], dtype="int64")


def cumsum(e: Emit, v: Value, axis: int, reverse: bool = False, exclusive: bool = False, combine: str = "add") -> Value:
    """A running sum (``combine="mul"``: product) along ``axis`` (float32 or int64) as ceil(log2 n) shifted
    steps (Hillis-Steele): step s combines the result so far with itself shifted s places (a slice, filled
    with the identity, 0 or 1, on the side the result comes from: a pad for float32, a concat for int64, as
    pad is float32 only); ``exclusive`` shifts the result by one."""
    s = e.shape(v)
    n = s[axis]
    dtype = torch.int64 if e.graph.dtype_of(v) == "int64" else torch.float32
    unit = 1.0 if combine == "mul" else 0.0

    def shifted(x: Value, k: int) -> Value:
        keep = e.op("slice", [x], axis=axis, start=k if reverse else 0, end=n if reverse else n - k)
        if dtype == torch.float32:
            pads = tuple(p for i in range(len(s)) for p in (((0, k) if reverse else (k, 0)) if i == axis else (0, 0)))
            return e.op("pad", [keep], pads=pads, value=unit)
        fill = e.weight(torch.full(tuple(k if i == axis else d for i, d in enumerate(s)), int(unit), dtype=dtype))
        return e.op("concat", [keep, fill] if reverse else [fill, keep], axis=axis)

    step = 1
    while step < n:
        v = e.op(combine, [v, shifted(v, step)])
        step *= 2
    if exclusive:
        v = shifted(v, 1) if n > 1 else e.weight(torch.full(s, unit, dtype=dtype))
    return v


def arg_extreme(e: Emit, v: Value, axis: int, keepdim: bool, lowest: bool, last: bool = False) -> tuple[Value, Value]:
    """The max (min) of float32 ``v`` along ``axis`` (kept as a size-1 dim) and the int64 position of its
    first (``last``: last) occurrence, as torch.max(dim) and ONNX ArgMax compute them: positions where ``v``
    equals it, or is NaN (a NaN is the extreme, as torch's and onnxruntime's), keep their index (an exact
    float32 iota; the caller checks the length is at most 2^24), the others a sentinel past the end; the
    min (max) of those, cast."""
    s = e.shape(v)
    n, r = s[axis], len(s)
    ext = e.op("reduce_min" if lowest else "reduce_max", [v], axes=(axis,), keepdim=1)
    hit = e.op("logical_or", [e.op("eq", [v, ext]), e.op("ne", [v, v])])
    iota = e.weight(torch.arange(n, dtype=torch.float32).reshape(tuple(n if i == axis else 1 for i in range(r))))
    sentinel = e.weight(torch.full((1,) * r, -1.0 if last else float(n)))
    pos = e.op("where", [hit, iota, sentinel])
    pick = e.op("reduce_max" if last else "reduce_min", [pos], axes=(axis,), keepdim=int(keepdim))
    return ext, e.op("cast", [pick], dtype="int64")
