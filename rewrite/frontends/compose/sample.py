"""Grid sampling (torch's F.grid_sample, ONNX GridSample) at run-time points."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from rewrite.frontends.compose.emit import Emit
from rewrite.ir.graph import Value

GRID_MODES = ("linear", "nearest", "cubic")
GRID_PADDINGS = ("zeros", "border", "reflection")


def grid_sample_refusal(x_shape: Sequence[int], grid_shape: Sequence[int], mode: str, padding_mode: str) -> str:
    """Why ``grid_sample`` cannot take these (one line), or '' when it can."""
    d = len(x_shape) - 2
    if d < 1:
        return f"grid sampling of a rank-{len(x_shape)} input (it takes (N, C, *spatial))"
    if mode not in GRID_MODES:
        return f"grid sampling mode {mode!r} (one of {', '.join(GRID_MODES)})"
    if padding_mode not in GRID_PADDINGS:
        return f"grid sampling padding mode {padding_mode!r} (one of {', '.join(GRID_PADDINGS)})"
    if len(grid_shape) != d + 2 or grid_shape[0] != x_shape[0] or grid_shape[-1] != d:
        return f"a grid of shape {tuple(grid_shape)} for an input of shape {tuple(x_shape)} (it takes (N, *out, {d}))"
    if mode == "cubic" and padding_mode == "border" and d != 2:
        # torch and onnxruntime have cubic in 2-d only, and clamp each tap; onnx's reference clamps the point
        return f"cubic grid sampling with border padding of a {d}-d input (defined for 2-d inputs only)"
    if 0 in x_shape or 0 in grid_shape:
        return f"grid sampling of an empty tensor (input {tuple(x_shape)}, grid {tuple(grid_shape)})"
    return ""


def grid_sample(e: Emit, x: Value, grid: Value, mode: str, padding_mode: str, align_corners: bool) -> Value:
    """``x`` (N, C, *S) sampled at the run-time points of ``grid`` (N, *out, D), each point's coordinates in
    [-1, 1] in reverse axis order ((x, y) for (H, W)), as torch's F.grid_sample (and onnxruntime's GridSample)
    computes it: ``mode`` linear, nearest (half to even) or cubic (A = -0.75, 4 taps an axis), for any D
    (``grid_sample_refusal`` first).

    Per axis of size s: a coordinate is unnormalized ((g + 1) (s - 1) / 2, or ((g + 1) s - 1) / 2 without
    ``align_corners``); for linear and nearest it is then padded (border: clamped to [0, s - 1];
    reflection: reflected off the edges (-0.5 and s - 0.5, or 0 and s - 1 with ``align_corners``) until in
    range, then clamped), for cubic each integer tap is.  The taps of every axis (the coordinate rounded,
    or its floor and the next 1 or 3 around it) broadcast against each other into (N, 1, k, ..., k, P) flat
    int64 positions; one gather reads them from ``x`` as (N, C, prod S), the positions expanded over C.  A
    tap out of range (zeros padding, or linear's upper tap at the edge) reads a zero appended after the
    data, so nothing (not a NaN or inf at a clamped position) leaks from it.  The weights of each axis
    (1 - t, t; cubic ones of the distances) then reduce its tap axis, the last spatial axis first."""
    n, c, *size = e.shape(x)
    d, out = len(size), e.shape(grid)[1:-1]
    p, r = math.prod(out), d + 3  # working rank: (N, 1 or C, one tap axis per spatial axis, P)
    k, first = {"nearest": (1, 0), "linear": (2, 0), "cubic": (4, -1)}[mode]
    masked = padding_mode == "zeros" or mode == "linear"

    def const(vals: Sequence[float], axis: int = 0, dtype: torch.dtype = torch.float32) -> Value:
        return e.weight(torch.tensor(vals, dtype=dtype).reshape(tuple(len(vals) if i == axis else 1 for i in range(r))))

    def plus(v: Value, s: float) -> Value:
        return v if s == 0 else e.op("add", [v, const([s])])

    def horner(v: Value, coefs: Sequence[float]) -> Value:  # a polynomial of v, leading coefficient first
        h = plus(e.op("smul", [v], scalar=coefs[0]), coefs[1])
        for cf in coefs[2:]:
            h = plus(e.op("mul", [h, v]), cf)
        return h

    def padded(v: Value, s: int) -> Value:  # torch's compute_coordinates
        if padding_mode == "reflection":
            lo, span = (0.0, s - 1.0) if align_corners else (-0.5, float(s))
            if span == 0:  # a single aligned pixel: everything reflects onto it
                return e.op("clamp", [v], min=0.0, max=0.0)
            a = e.op("abs", [plus(v, -lo)])
            extra = e.op("mod", [a, const([span])], mode="trunc")
            flips = e.op("floor", [e.op("div", [a, const([span])])])
            even = e.op("eq", [e.op("mod", [flips, const([2.0])], mode="floor"), const([0.0])])
            back = plus(e.op("sub", [const([span]), extra]), lo)
            v = e.op("where", [even, plus(extra, lo), back])
        if padding_mode == "zeros":
            return v
        v = e.op("where", [e.op("eq", [v, v]), v, const([0.0])])  # NaN: the first pixel, as torch's clip gives
        return e.op("clamp", [v], min=0.0, max=float(s - 1))

    g = e.reshape(grid, (n, p, d))
    flat: Value | None = None
    valid: Value | None = None
    weights: list[Value] = []
    for a, s in enumerate(size):
        co = e.reshape(e.op("slice", [g], axis=2, start=d - 1 - a, end=d - a), (n, 1) + (1,) * d + (p,))
        co = e.op("smul", [plus(co, 1.0)], scalar=(s - 1) / 2 if align_corners else s / 2)
        co = co if align_corners else plus(co, -0.5)
        if mode != "cubic":
            co = padded(co, s)
        if mode == "nearest":
            taps = e.op("round", [co])
        else:
            base = e.op("floor", [co])
            t = e.op("sub", [co, base])
            offsets = const([float(first + i) for i in range(k)], 2 + a)
            taps = e.op("add", [base, offsets])
            if mode == "linear":
                weights.append(e.op("concat", [e.op("sub", [const([1.0]), t]), t], axis=2 + a))
            else:  # Keys' cubic convolution (A = -0.75) of the distances t + 1, t, 1 - t, 2 - t
                dist = e.op("abs", [e.op("sub", [t, offsets])])
                near = horner(dist, (1.25, -2.25, 0.0, 1.0))  # ((A + 2) d - (A + 3)) d^2 + 1, d <= 1
                far = horner(dist, (-0.75, 3.75, -6.0, 3.0))  # ((A d - 5A) d + 8A) d - 4A, 1 <= d <= 2
                inner = const([False, True, True, False], 2 + a, torch.bool)
                weights.append(e.op("where", [inner, near, far]))
                if padding_mode != "zeros":
                    taps = padded(taps, s)
        if masked:
            ok = e.op("logical_and", [e.op("ge", [taps, const([0.0])]), e.op("le", [taps, const([s - 1.0])])])
            valid = ok if valid is None else e.op("logical_and", [valid, ok])
            taps = e.op("clamp", [taps], min=0.0, max=float(s - 1))  # in range (and small) before the cast
        pos = e.op("cast", [taps], dtype="int64")
        if (stride := math.prod(size[a + 1 :])) != 1:
            pos = e.op("mul", [pos, const([stride], dtype=torch.int64)])
        flat = pos if flat is None else e.op("add", [flat, pos])
    assert flat is not None
    total = math.prod(size)
    data = e.reshape(x, (n, c, total))
    if valid is not None:  # an invalid tap reads a zero appended after the data
        flat = e.op("where", [valid, flat, const([total], dtype=torch.int64)])
        data = e.op("pad", [data], pads=(0, 0, 0, 0, 0, 1), value=0.0)
    idx = e.reshape(flat, (n, 1, k**d * p))
    if c > 1:
        idx = e.op("expand", [idx], shape=(n, c, k**d * p))
    v = e.reshape(e.op("gather", [data, idx], axis=2), (n, c) + (k,) * d + (p,))
    for a in reversed(range(len(weights))):
        w = e.reshape(weights[a], (n, 1) + (1,) * a + (k, p))
        v = e.op("reduce_sum", [e.op("mul", [v, w])], axes=(2 + a,), keepdim=0)
    return e.reshape(v, (n, c, *out))
