"""ATen's convolutions, pools and resamples (the spatial ops) → registry ops: the converters of
``rewrite.frontends.aten.ATEN``'s rows that build them (grouped, transposed and 3-d convolutions,
max/avg/adaptive pools in 2-d and 3-d, upsampling with and without antialiasing, grid sampling)."""

from __future__ import annotations

from typing import Any

import torch

from rewrite.frontends import compose
from rewrite.frontends.aten_base import converter
from rewrite.frontends.aten_state import ImportState, _pair, _triple, _Unsupported
from rewrite.frontends.compose import (
    grid_sample,
    grid_sample_refusal,
    resample,
)
from rewrite.ir.graph import Value

aten = torch.ops.aten


def _one(v: Any, what: str) -> int:
    """A 1-d convolution's stride/padding/dilation: an int or a one-element sequence."""
    if isinstance(v, (tuple, list)) and len(v) == 1:
        v = v[0]
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    raise _Unsupported(f"{what} of a 1-d convolution must be an int, got {v!r}")


class NotComputed:
    """An output of a multi-output ATen op that eqsat does not compute (batch-norm's saved mean,
    max-pool's indices): reading it raises, naming the op."""

    def __init__(self, what: str) -> None:
        self.what = what


@converter
def a_convolution(
    st: ImportState,
    x: Any,
    w: Any,
    b: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: bool,
    output_padding: Any,
    groups: int,
) -> Value:
    rank = w.dim() if isinstance(w, torch.Tensor) else len(st.shape(st.tensor(w, "weight")))
    if rank == 3:  # 1-d (audio, sequence models): the 2-d convolution over a height of one
        v = st.tensor(x)
        xs = st.shape(v)
        x, w = st.reshape(v, (1,) * (3 - len(xs)) + xs[:-1] + (1, xs[-1])), unsqueeze_h(st, w)
        stride, dilation = (1, _one(stride, "stride")), (1, _one(dilation, "dilation"))
        padding, output_padding = (0, _one(padding, "padding")), (0, _one(output_padding, "output_padding"))
    elif rank == 5 and transposed:
        return conv_transpose3d(st, x, w, b, stride, padding, dilation, output_padding, groups)
    elif rank == 5:
        return conv3d(st, x, w, b, stride, padding, dilation, groups)
    elif rank != 4:
        raise _Unsupported(f"only 1-d, 2-d and 3-d convolutions are expressible (weight of rank {rank})")
    if transposed:
        return conv_transpose2d(st, x, w, b, stride, padding, dilation, output_padding, groups)
    bv = None if b is None else st.tensor(b, "bias")
    return st.conv2d(st.tensor(x), st.tensor(w, "weight"), bv, stride, padding, dilation, groups)


def conv3d(st: ImportState, x: Any, w: Any, b: Any, stride: Any, padding: Any, dilation: Any, groups: int) -> Value:
    """A 3-d convolution as 2-d ones over frames (``frontends.compose.conv3d``)."""
    v = st.tensor(x)
    if len(st.shape(v)) != 5:
        raise _Unsupported(f"3-d convolution of an input of shape {st.shape(v)} (only batched NCDHW)")
    stp, pd, dl = _triple(stride, "stride"), _triple(padding, "padding"), _triple(dilation, "dilation")
    bv = None if b is None else st.tensor(b, "bias")
    wt = w if isinstance(w, torch.Tensor) else st.tensor(w, "weight")  # a parameter under torch.compile
    return compose.conv3d(st.emit(), v, wt, bv, stp, pd + pd, dl, groups)


def conv_transpose3d(
    st: ImportState, x: Any, w: Any, b: Any, stride: Any, padding: Any, dilation: Any, out_pad: Any, groups: int
) -> Value:
    """A 3-d transposed convolution as 2-d ones per depth tap (``frontends.compose.conv_transpose3d``)."""
    v = st.tensor(x)
    if len(st.shape(v)) != 5:
        raise _Unsupported(f"3-d transposed convolution of an input of shape {st.shape(v)} (only batched NCDHW)")
    stp, pd, dl = _triple(stride, "stride"), _triple(padding, "padding"), _triple(dilation, "dilation")
    op = _triple(out_pad, "output_padding")
    bv = None if b is None else st.tensor(b, "bias")
    wt = w if isinstance(w, torch.Tensor) else st.tensor(w, "weight")  # a parameter under torch.compile
    try:
        return compose.conv_transpose3d(st.emit(), v, wt, bv, stp, pd + pd, dl, op, int(groups))
    except ValueError as e:
        raise _Unsupported(str(e)) from e


def unsqueeze_h(st: ImportState, w: Any) -> Any:
    """A 1-d convolution's weight (O, C, K) as a 2-d one's (O, C, 1, K): a tensor stays a tensor."""
    if isinstance(w, torch.Tensor):
        return w.unsqueeze(2)
    wv = st.tensor(w, "weight")
    o, c, k = st.shape(wv)
    return st.reshape(wv, (o, c, 1, k))


def conv_transpose2d(
    st: ImportState, x: Any, w: Any, b: Any, stride: Any, padding: Any, dilation: Any, out_pad: Any, groups: int
) -> Value:
    """A transposed convolution as registry ops (``frontends.compose.conv_transpose2d``); a computed weight
    (a parameter under torch.compile) is rearranged by ops."""
    if not isinstance(w, torch.Tensor):
        w = st.tensor(w, "weight")
    ws = tuple(w.shape) if isinstance(w, torch.Tensor) else st.shape(w)
    if len(ws) != 4:
        raise _Unsupported(f"only 2-d transposed convolution is expressible (weight shape {ws})")
    v = st.batched4(st.tensor(x), "transposed convolution")
    (sh, sw), (ph, pw), (dh, dw), (oh, ow) = (
        _pair(a, k)
        for a, k in ((stride, "stride"), (padding, "padding"), (dilation, "dilation"), (out_pad, "output_padding"))
    )
    bias = None if b is None else st.tensor(b, "bias")
    y = compose.conv_transpose2d(st.emit(), v, w, bias, (sh, sw), (ph, pw, ph, pw), (dh, dw), (oh, ow), int(groups))
    return st.to_meta_shape(y)


@converter
def a_maxpool(
    st: ImportState, x: Any, kernel: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False
) -> tuple[Any, ...]:
    y = st.maxpool(st.tensor(x), kernel, stride, padding, dilation, ceil_mode, False)
    return (y, NotComputed("max-pool's indices"))


@converter
def a_avgpool(
    st: ImportState,
    x: Any,
    kernel: Any,
    stride: Any = (),
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Any = None,
) -> Value:
    return st.avgpool(st.tensor(x), kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)


@converter
def a_maxpool3d(
    st: ImportState, x: Any, kernel: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False
) -> tuple[Any, ...]:
    y = pool3d(st, x, "max", kernel, stride, padding, dilation, ceil_mode, False, None)
    return (y, NotComputed("max-pool's indices"))


@converter
def a_avgpool3d(
    st: ImportState,
    x: Any,
    kernel: Any,
    stride: Any = (),
    padding: Any = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Any = None,
) -> Value:
    return pool3d(st, x, "avg", kernel, stride, padding, 1, ceil_mode, count_include_pad, divisor_override)


@converter
def a_adaptive_avgpool3d(st: ImportState, x: Any, output_size: Any) -> Value:
    """An output size dividing the input evenly: average pooling with kernel = stride = input / output."""
    size, out = st.shape(st.tensor(x))[-3:], _triple(output_size, "output_size")
    if any(o < 1 or n % o for n, o in zip(size, out)):
        raise _Unsupported(f"adaptive_avg_pool3d from {list(size)} to {list(out)} (only sizes dividing evenly)")
    k = tuple(n // o for n, o in zip(size, out))
    return pool3d(st, x, "avg", k, k, 0, 1, False, True, None)


def pool3d(
    st: ImportState,
    x: Any,
    op: str,
    kernel: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: Any,
    count_include_pad: Any,
    divisor: Any,
) -> Value:
    """3-d max or average pooling of (N, C, D, H, W) or (C, D, H, W) as 2-d ones (``compose.pool3d``)."""
    v = st.tensor(x)
    s = st.shape(v)
    if len(s) not in (4, 5):
        raise _Unsupported(f"3-d pooling of an input of shape {s} (only (N, C, D, H, W) or (C, D, H, W))")
    k = _triple(kernel, "kernel_size")
    stp = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _triple(stride, "stride")
    pd = _triple(padding, "padding")
    try:
        y = compose.pool3d(
            st.emit(),
            st.reshape(v, (1,) * (5 - len(s)) + s),
            op,
            k,
            stp,
            pd + pd,
            bool(ceil_mode),
            bool(count_include_pad),
            _triple(dilation, "dilation"),
            None if divisor is None else int(divisor),
        )
    except ValueError as e:
        raise _Unsupported(str(e)) from e
    return st.reshape(y, st.out_shape())


@converter
def a_upsample(st: ImportState, x: Any, output_size: Any, *rest: Any) -> Value:
    bilinear = st.current is aten.upsample_bilinear2d.vec
    align = rest[0] if bilinear and rest else False
    scales = rest[-1] if rest else None
    return st.resize(st.tensor(x), "bilinear" if bilinear else "nearest", align, scales)


@converter
def a_upsample_aa(
    st: ImportState, x: Any, output_size: Any, align_corners: bool, scales_h: Any = None, scales_w: Any = None
) -> Value:
    """Antialiased bilinear / bicubic resize (F.interpolate(antialias=True)): separable, so one constant
    map per axis, which torch's own kernel gives on unit vectors (float64), applied as gathers
    (``frontends.compose.resample``)."""
    v = st.tensor(x)
    s = st.shape(v)
    if len(s) != 4 or st.b.graph.dtype_of(v) != "float32":
        raise _Unsupported(f"antialiased resize of a {st.b.graph.dtype_of(v)} tensor of shape {s}")
    for ax, n_out, scale in ((2, int(output_size[0]), scales_h), (3, int(output_size[1]), scales_w)):
        n_in = s[ax]
        eye = torch.eye(n_in, dtype=torch.float64)
        # the other axis 2 wide, unchanged (torch's kernels mishandle a width of 1): channel j is e_j
        if ax == 2:
            basis, size, scales = eye.reshape(1, n_in, n_in, 1).expand(1, n_in, n_in, 2), [n_out, 2], (scale, None)
        else:
            basis, size, scales = eye.reshape(1, n_in, 1, n_in).expand(1, n_in, 2, n_in), [2, n_out], (None, scale)
        out = st.current(basis.contiguous(), size, bool(align_corners), *scales)
        matrix = (out[..., 0] if ax == 2 else out[:, :, 0, :]).reshape(n_in, n_out).T
        if not (n_in == n_out and torch.equal(matrix, eye)):
            v = resample(st.emit(), v, ax, matrix.numpy())
    return v if v is not st.tensor(x) else st.b.op("identity", v)


@converter
def a_adaptive_avgpool(st: ImportState, x: Any, output_size: Any) -> Value:
    return st.adaptive_avgpool(st.tensor(x), output_size)


@converter
def a_adaptive_avgpool1d(st: ImportState, x: Any, output_size: Any) -> Value:
    """(N, C, L) as (N, C, 1, L) through the 2-d pooling."""
    v = st.tensor(x)
    s = st.shape(v)
    if len(s) != 3:
        raise _Unsupported(f"adaptive_avg_pool1d of a rank-{len(s)} tensor (only (N, C, L))")
    osz = output_size[0] if isinstance(output_size, (tuple, list)) else output_size
    y = st.adaptive_avgpool(st.reshape(v, (s[0], s[1], 1, s[2])), (1, osz))
    return st.reshape(y, st.out_shape())


@converter
def a_grid_sample(st: ImportState, x: Any, grid: Any, mode: int, padding: int, align_corners: bool) -> Value:
    """F.grid_sample at run-time points (``compose.grid_sample``); modes and paddings are torch's codes."""
    v, g = st.tensor(x), st.tensor(grid)
    for t, what in ((v, "input"), (g, "grid")):
        if st.b.graph.dtype_of(t) != "float32":
            raise _Unsupported(f"grid_sample of a {st.b.graph.dtype_of(t)} {what} (only float32)")
    m = {0: "linear", 1: "nearest", 2: "cubic"}.get(int(mode), str(mode))
    pad = {0: "zeros", 1: "border", 2: "reflection"}.get(int(padding), str(padding))
    why = grid_sample_refusal(st.shape(v), st.shape(g), m, pad)
    if why:
        raise _Unsupported(why)
    return grid_sample(st.emit(), v, g, m, pad, bool(align_corners))
