"""Compositions of registry ops that more than one frontend imports the same way.

Each takes an ``Emit``: the frontend's way to add a node (its origin, its errors) and a constant.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from rewrite.ir.dtypes import TORCH_DTYPE
from rewrite.ir.graph import Graph, Value


@dataclass(frozen=True)
class Emit:
    """How a frontend adds to its graph: ``op(name, inputs, **attrs)`` and ``weight(tensor)``."""

    graph: Graph
    op: Callable[..., Value]
    weight: Callable[[torch.Tensor], Value]

    def shape(self, v: Value) -> tuple[int, ...]:
        return self.graph.shape_of(v)

    def reshape(self, v: Value, shape: Sequence[int]) -> Value:
        return v if self.shape(v) == tuple(shape) else self.op("reshape", [v], shape=tuple(shape))


Weight = Value | torch.Tensor  # a convolution's weight: a constant (rearranged now) or a run-time value (by ops)


def _wshape(e: Emit, w: Weight) -> tuple[int, ...]:
    return tuple(w.shape) if isinstance(w, torch.Tensor) else e.shape(w)


def _wvalue(e: Emit, w: Weight) -> Value:
    return e.weight(w.contiguous()) if isinstance(w, torch.Tensor) else w


def _wreshape(e: Emit, w: Weight, shape: Sequence[int]) -> Weight:
    return w.reshape(tuple(shape)) if isinstance(w, torch.Tensor) else e.reshape(w, shape)


def _wtranspose(e: Emit, w: Weight, perm: Sequence[int]) -> Weight:
    return w.permute(*perm) if isinstance(w, torch.Tensor) else e.op("transpose", [w], perm=tuple(perm))


def _wflip(e: Emit, w: Weight, axes: Sequence[int]) -> Weight:
    """``w`` reversed along ``axes`` (a run-time weight: an index_select by a reversed iota per axis)."""
    if isinstance(w, torch.Tensor):
        return w.flip(*axes)
    for ax in axes:
        if (n := e.shape(w)[ax]) > 1:
            w = e.op("index_select", [w, e.weight(torch.arange(n - 1, -1, -1))], axis=ax)
    return w


def _wtap(e: Emit, w: Weight, axis: int, i: int) -> Weight:
    """``w`` at position ``i`` of ``axis``, that axis dropped."""
    if isinstance(w, torch.Tensor):
        return w.select(axis, i)
    s = e.shape(w)
    return e.reshape(e.op("slice", [w], axis=axis, start=i, end=i + 1), s[:axis] + s[axis + 1 :])


def conv_transpose2d(
    e: Emit,
    x: Value,
    w: Weight,
    bias: Value | None,
    stride: tuple[int, int],
    pads: tuple[int, int, int, int],
    dilation: tuple[int, int],
    out_pad: tuple[int, int],
    groups: int,
) -> Value:
    """A 2-d transposed convolution (NCHW, weight [C_in, C_out / groups, kh, kw]: a constant, or a run-time
    value rearranged by ops) as registry ops.

    ``pads`` = (top, left, bottom, right), cropped from the full output; ``out_pad`` is added at the end.
    Kernel = stride with no padding (U-Net's 2x2/2 up-convolution): a 1x1 convolution to
    C_out x s_h x s_w channels, then depth-to-space (reshape, transpose).  Otherwise: zeros inserted
    between the input's pixels (reshape, pad), padded by dilation x (kernel - 1) - padding a side
    (cropped where negative, output_padding added at the end), then a stride-1 convolution with the
    kernel flipped and its in/out channels swapped.
    """
    n, c, h, wd = e.shape(x)
    (sh, sw), (dh, dw), (oh, ow) = stride, dilation, out_pad
    top, left, bottom, right = pads
    cin, cog, kh, kw = _wshape(e, w)
    cout = cog * groups
    if (kh, kw) == (sh, sw) and pads == (0, 0, 0, 0) and (oh, ow) == (0, 0) and groups == 1:
        # out[n, o, i*s+a, j*s+b] = sum_c x[n, c, i, j] * w[c, o, a, b]
        w1 = _wreshape(e, _wtranspose(e, w, (1, 2, 3, 0)), (cout * sh * sw, cin, 1, 1))
        y = e.op("conv2d", [x, _wvalue(e, w1)], stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1)
        y = e.reshape(y, (n, cout, sh, sw, h, wd))
        y = e.op("transpose", [y], perm=(0, 1, 4, 2, 5, 3))
        y = e.reshape(y, (n, cout, h * sh, wd * sw))
    else:
        wt = _wtranspose(e, _wreshape(e, w, (groups, cin // groups, cog, kh, kw)), (0, 2, 1, 3, 4))
        wt = _wflip(e, _wreshape(e, wt, (cout, cin // groups, kh, kw)), (2, 3))
        u = x
        if (sh, sw) != (1, 1):  # zeros between pixels: s - 1 after each (the trailing ones cropped below)
            u = e.reshape(u, (n, c, h, 1, wd, 1))
            u = e.op("pad", [u], pads=(0, 0, 0, 0, 0, 0, 0, sh - 1, 0, 0, 0, sw - 1), value=0.0)
            u = e.reshape(u, (n, c, h * sh, wd * sw))
        lo_h, lo_w = dh * (kh - 1) - top, dw * (kw - 1) - left
        hi_h, hi_w = dh * (kh - 1) - bottom + oh - (sh - 1), dw * (kw - 1) - right + ow - (sw - 1)
        for ax, a, b in ((2, max(0, -lo_h), max(0, -hi_h)), (3, max(0, -lo_w), max(0, -hi_w))):
            if a or b:
                u = e.op("slice", [u], axis=ax, start=a, end=e.shape(u)[ax] - b)
        grow = (0, 0, 0, 0, max(0, lo_h), max(0, hi_h), max(0, lo_w), max(0, hi_w))
        if any(grow):
            u = e.op("pad", [u], pads=grow, value=0.0)
        y = e.op("conv2d", [u, _wvalue(e, wt)], stride=(1, 1), padding=(0, 0), dilation=(dh, dw), groups=groups)
    if bias is not None:
        y = e.op("add", [y, e.reshape(bias, (1, cout, 1, 1))])
    return y


def conv3d(
    e: Emit,
    x: Value,
    w: Weight,
    bias: Value | None,
    stride: tuple[int, int, int],
    pads: tuple[int, int, int, int, int, int],
    dilation: tuple[int, int, int],
    groups: int,
) -> Value:
    """A 3-d convolution (NCDHW, weight [O, C / groups, kd, kh, kw]: a constant, or a run-time value sliced by
    ops) as 2-d ones over frames.

    ``pads`` = (front, top, left, back, bottom, right): depth padding and uneven height/width padding are
    zeros added first (a pad), even height/width padding the 2-d convolutions' own.  Output frame t sums,
    over the kernel's depth taps i, the 2-d convolution of input frame t * sd + i * dd with weight slice
    ``w[:, :, i]``: each tap's frames (a slice, or an index_select when strided) are folded into the batch
    and convolved once.  A kernel as deep as its stride (a video patch embedding: VideoMAE's tubelets) is
    instead one 2-d convolution over frames stacked as channels (reshape, transpose): no frame is read twice.
    """
    o, cg, kd, kh, kw = _wshape(e, w)
    (sd, sh, sw), (dd, dh, dw) = stride, dilation
    front, top, left, back, bottom, right = pads
    ph, pw = (top, left) if (top, left) == (bottom, right) else (0, 0)
    grow = (0, 0, 0, 0, front, back, top - ph, bottom - ph, left - pw, right - pw)
    if any(grow):
        x = e.op("pad", [x], pads=grow, value=0.0)
    n, c, d, h, wd = e.shape(x)
    dout = (d - dd * (kd - 1) - 1) // sd + 1
    attrs = {"stride": (sh, sw), "padding": (ph, pw), "dilation": (dh, dw), "groups": groups}
    if kd == sd and dd == 1 and groups == 1:
        if dout * kd != d:
            x = e.op("slice", [x], axis=2, start=0, end=dout * kd)
        u = e.reshape(x, (n, c, dout, kd, h, wd))
        u = e.op("transpose", [u], perm=(0, 2, 1, 3, 4, 5))
        u = e.reshape(u, (n * dout, c * kd, h, wd))
        y = e.op("conv2d", [u, _wvalue(e, _wreshape(e, w, (o, cg * kd, kh, kw)))], **attrs)
    else:
        frames = e.op("transpose", [x], perm=(0, 2, 1, 3, 4))  # N, D, C, H, W
        parts = []
        for i in range(kd):
            lo = i * dd
            if (lo, sd, dout) == (0, 1, d):
                taps = frames
            elif sd == 1:
                taps = e.op("slice", [frames], axis=1, start=lo, end=lo + dout)
            else:
                idx = e.weight(torch.arange(lo, lo + sd * (dout - 1) + 1, sd))
                taps = e.op("index_select", [frames, idx], axis=1)
            taps = e.reshape(taps, (n * dout, c, h, wd))
            parts.append(e.op("conv2d", [taps, _wvalue(e, _wtap(e, w, 2, i))], **attrs))
        y = parts[0]
        for p in parts[1:]:
            y = e.op("add", [y, p])
    if bias is not None:
        y = e.op("add", [y, e.reshape(bias, (1, o, 1, 1))])
    _, _, ho, wo = e.shape(y)
    y = e.reshape(y, (n, dout, o, ho, wo))
    return e.op("transpose", [y], perm=(0, 2, 1, 3, 4))


TOPK_MAX_K = 32  # top-k is k selection passes over the row: beyond this many, refused


def topk(e: Emit, v: Value, k: int, axis: int, largest: bool) -> tuple[Value, Value]:
    """The k largest (smallest) float32 values along ``axis`` in order and their int64 positions, as
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


__all__: list[Any] = [
    "RUNTIME_SCATTER_MAX",
    "Emit",
    "Weight",
    "arg_extreme",
    "conv3d",
    "conv_transpose2d",
    "cumsum",
    "scatter",
    "scatter_runtime",
    "topk",
]
