"""3-d max and average pooling as 2-d poolings over frames and over depth."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from rewrite.frontends.compose.emit import Emit
from rewrite.ir.graph import Value


def pool_out_size(size: int, k: int, s: int, d: int, lo: int, hi: int, ceil_mode: bool) -> int:
    """How many windows one axis pools (torch's rule, and ONNX's): ``ceil_mode`` adds a partial last
    window unless it would start in the end padding."""
    span = size + lo + hi - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + lo:
        out -= 1
    return out


@dataclass(frozen=True)
class PoolAxis:
    """One spatial axis of a pooling: ``size`` input elements, ``out`` windows of ``k`` taps ``d`` apart,
    one every ``s``, over the input padded by ``lo`` and ``hi``."""

    size: int
    k: int
    s: int
    d: int
    lo: int
    hi: int
    out: int

    @property
    def identity(self) -> bool:
        return self.k == 1 and self.s == 1 and self.lo == 0 and self.out == self.size

    def need(self) -> int:
        """The padded length the windows read."""
        return (self.out - 1) * self.s + self.d * (self.k - 1) + 1

    def counts(self, include_pad: bool) -> list[int]:
        """Each window's taps inside the input, or (``include_pad``) inside the padded input: the average's
        divisor, as torch and ONNX define it (a ceil_mode window past the padding counts only what it covers)."""
        first, end = (-self.lo, self.size + self.hi) if include_pad else (0, self.size)
        start = [i * self.s - self.lo for i in range(self.out)]
        return [sum(first <= t + j * self.d < end for j in range(self.k)) for t in start]

    def registry(self, ceil_mode: bool) -> bool:
        """Whether the registry's 2-d pooling (torch's) computes this axis with its own padding."""
        fits = self.d == 1 and self.lo == self.hi and 2 * self.lo <= self.k
        return fits and pool_out_size(self.size, self.k, self.s, 1, self.lo, self.lo, ceil_mode) == self.out


def _pool_taps(e: Emit, x: Value, axis: int, a: PoolAxis, combine: str) -> Value:
    """A dilated window along ``axis`` of the padded ``x``, tap by tap: tap j of every window (a slice, or an
    index_select when strided), combined (maximum, add) over the taps."""
    y = None
    for j in range(a.k):
        lo = j * a.d
        if a.s == 1:
            t = e.op("slice", [x], axis=axis, start=lo, end=lo + a.out)
        else:
            t = e.op("index_select", [x, e.weight(torch.arange(lo, lo + a.s * (a.out - 1) + 1, a.s))], axis=axis)
        y = t if y is None else e.op(combine, [y, t])
    assert y is not None
    return y


def _pool_pass(
    e: Emit,
    x: Value,
    op: str,
    axes: tuple[PoolAxis, PoolAxis],
    ceil_mode: bool,
    include_pad: bool,
    counts: Sequence[Sequence[int]],
) -> Value:
    """Pool axes 2 and 3 of NCHW ``x``: ``op`` "max", or "avg" with ``counts[i]`` the divisor of each window
    along axis i (their product divides the window's sum).

    The registry's pooling where its own padding and divisor are the ones asked for.  Otherwise the input is
    padded explicitly (max: with the lowest float32, so padding never wins where a window holds an element)
    or cropped to exactly what the windows read, dilated axes are reduced tap by tap, the rest by the
    registry's pooling unpadded, and the average's divisors are fixed by a constant factor.
    """
    name = "maxpool2d" if op == "max" else "avgpool2d"
    a0, a1 = axes
    ceil = int(ceil_mode and any(pool_out_size(a.size, a.k, a.s, a.d, a.lo, a.hi, False) != a.out for a in axes))
    exact = op == "max" or [list(cs) for cs in counts] == [a0.counts(include_pad), a1.counts(include_pad)]
    if a0.registry(bool(ceil)) and a1.registry(bool(ceil)) and exact:
        attrs: dict[str, Any] = {"count_include_pad": int(include_pad)} if op == "avg" else {}
        return e.op(
            name, [x], kernel=(a0.k, a1.k), stride=(a0.s, a1.s), padding=(a0.lo, a1.lo), ceil_mode=ceil, **attrs
        )
    grow = [0, 0, 0, 0]
    for i, a in enumerate(axes):
        hi = a.need() - a.size - a.lo
        if a.size + hi < 1:
            raise ValueError(f"windows of kernel {a.k} read only padding ({a.lo} before {a.size} elements)")
        if hi < 0:
            x = e.op("slice", [x], axis=2 + i, start=0, end=a.size + hi)
        grow += [a.lo, max(0, hi)]
    if any(grow):
        low = float(torch.finfo(torch.float32).min) if op == "max" else 0.0
        x = e.op("pad", [x], pads=tuple(grow), value=low)
    kernel, stride = [a.k for a in axes], [a.s for a in axes]
    for i, a in enumerate(axes):
        if a.d > 1 and a.k > 1:
            x = _pool_taps(e, x, 2 + i, a, "maximum" if op == "max" else "add")
            kernel[i] = stride[i] = 1
    if (kernel, stride) != ([1, 1], [1, 1]):
        attrs = {"count_include_pad": 1} if op == "avg" else {}
        x = e.op(name, [x], kernel=tuple(kernel), stride=tuple(stride), padding=(0, 0), ceil_mode=0, **attrs)
    if op == "avg":  # x is each window's sum over the registry's kernel size
        factors = [torch.tensor([k / cn for cn in cs], dtype=torch.float64) for k, cs in zip(kernel, counts)]
        f = (factors[0][:, None] * factors[1][None, :]).float()
        if bool((f == f.flatten()[0]).all()):
            if float(f.flatten()[0]) != 1.0:
                x = e.op("smul", [x], scalar=float(f.flatten()[0]))
        else:
            shape = [1, 1, *(len(fa) if bool((fa != fa[0]).any()) else 1 for fa in factors)]
            x = e.op("mul", [x, e.weight(f[: shape[2], : shape[3]].reshape(shape).contiguous())])
    return x


def pool3d(
    e: Emit,
    x: Value,
    op: str,
    kernel: tuple[int, int, int],
    stride: tuple[int, int, int],
    pads: tuple[int, int, int, int, int, int],
    ceil_mode: bool,
    count_include_pad: bool,
    dilation: tuple[int, int, int] = (1, 1, 1),
    divisor: int | None = None,
) -> Value:
    """3-d max (``op`` "max") or average ("avg") pooling of NCDHW ``x`` as two 2-d ones: a box's max (sum)
    is the max (sum) over depth of the max (sum) over height and width, and torch's and ONNX's average
    divides by the product of the per-axis counts, so it separates too.

    ``pads`` = (front, top, left, back, bottom, right).  Height and width are pooled with the depth folded
    into the channels (a reshape), then the depth over a (D, H*W) view with a (kd, 1) kernel.  ``divisor``:
    torch's divisor_override, the one divisor of every window.  Dilations are exact (tap by tap); a window
    with no input element to average (padding past the kernel, count_include_pad off) is refused.
    """
    n, c, d, h, w = e.shape(x)
    if min(*kernel, *stride, *dilation) < 1 or min(pads) < 0:
        raise ValueError(
            f"kernel {list(kernel)}, strides {list(stride)}, dilations {list(dilation)}, pads {list(pads)}"
        )
    dp, hp, wp = (
        PoolAxis(size, k, s, dl, lo, hi, pool_out_size(size, k, s, dl, lo, hi, ceil_mode))
        for size, k, s, dl, lo, hi in zip((d, h, w), kernel, stride, dilation, pads[:3], pads[3:])
    )
    if min(dp.out, hp.out, wp.out) < 1:
        raise ValueError(f"kernel {list(kernel)} (dilations {list(dilation)}) is larger than the padded input")
    counts = [[1] * a.out for a in (dp, hp, wp)]  # max pooling divides by nothing
    if op == "avg" and divisor is not None:
        if divisor < 1:
            raise ValueError(f"divisor {divisor}")
        counts[1] = [divisor] * hp.out  # the one divisor, applied by the height and width pass
    elif op == "avg":
        counts = [a.counts(count_include_pad) for a in (dp, hp, wp)]
        if any(0 in cs for cs in counts):
            raise ValueError(f"pads {list(pads)} leave a window with no input element to average")
    y = e.reshape(x, (n, c * d, h, w))
    if not (hp.identity and wp.identity and counts[1] == [1] * hp.out):
        y = _pool_pass(e, y, op, (hp, wp), ceil_mode, count_include_pad, counts[1:])
    if not dp.identity:
        flat = PoolAxis(hp.out * wp.out, 1, 1, 1, 0, 0, hp.out * wp.out)
        y = e.reshape(y, (n, c, d, flat.size))
        y = _pool_pass(e, y, op, (dp, flat), ceil_mode, count_include_pad, [counts[0], [1] * flat.size])
    return e.reshape(y, (n, c, dp.out, hp.out, wp.out))
