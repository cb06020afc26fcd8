"""ATen's convolutions, pools and resamples (the spatial ops) → registry ops: the converters of
:class:`rewrite.frontends.aten.AtenConverters` that build them (grouped, transposed and 3-d convolutions,
max/avg/adaptive pools in 2-d and 3-d, upsampling with and without antialiasing, grid sampling)."""

from __future__ import annotations

from typing import Any

import torch

from rewrite.frontends.aten_indexing import AtenIndexing
from rewrite.frontends.aten_state import _pair, _triple, _Unsupported
from rewrite.frontends.compose import (
    conv3d,
    conv_transpose2d,
    conv_transpose3d,
    grid_sample,
    grid_sample_refusal,
    pool3d,
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


class AtenSpatial(AtenIndexing):
    def a_convolution(
        self,
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
        rank = w.dim() if isinstance(w, torch.Tensor) else len(self.shape(self.tensor(w, "weight")))
        if rank == 3:  # 1-d (audio, sequence models): the 2-d convolution over a height of one
            v = self.tensor(x)
            xs = self.shape(v)
            x, w = self.reshape(v, (1,) * (3 - len(xs)) + xs[:-1] + (1, xs[-1])), self.unsqueeze_h(w)
            stride, dilation = (1, _one(stride, "stride")), (1, _one(dilation, "dilation"))
            padding, output_padding = (0, _one(padding, "padding")), (0, _one(output_padding, "output_padding"))
        elif rank == 5 and transposed:
            return self.conv_transpose3d(x, w, b, stride, padding, dilation, output_padding, groups)
        elif rank == 5:
            return self.conv3d(x, w, b, stride, padding, dilation, groups)
        elif rank != 4:
            raise _Unsupported(f"only 1-d, 2-d and 3-d convolutions are expressible (weight of rank {rank})")
        if transposed:
            return self.conv_transpose2d(x, w, b, stride, padding, dilation, output_padding, groups)
        bv = None if b is None else self.tensor(b, "bias")
        return self.conv2d(self.tensor(x), self.tensor(w, "weight"), bv, stride, padding, dilation, groups)

    def conv3d(self, x: Any, w: Any, b: Any, stride: Any, padding: Any, dilation: Any, groups: int) -> Value:
        """A 3-d convolution as 2-d ones over frames (``frontends.compose.conv3d``)."""
        v = self.tensor(x)
        if len(self.shape(v)) != 5:
            raise _Unsupported(f"3-d convolution of an input of shape {self.shape(v)} (only batched NCDHW)")
        st, pd, dl = _triple(stride, "stride"), _triple(padding, "padding"), _triple(dilation, "dilation")
        bv = None if b is None else self.tensor(b, "bias")
        wt = w if isinstance(w, torch.Tensor) else self.tensor(w, "weight")  # a parameter under torch.compile
        return conv3d(self.emit(), v, wt, bv, st, pd + pd, dl, groups)

    def conv_transpose3d(
        self, x: Any, w: Any, b: Any, stride: Any, padding: Any, dilation: Any, out_pad: Any, groups: int
    ) -> Value:
        """A 3-d transposed convolution as 2-d ones per depth tap (``frontends.compose.conv_transpose3d``)."""
        v = self.tensor(x)
        if len(self.shape(v)) != 5:
            raise _Unsupported(f"3-d transposed convolution of an input of shape {self.shape(v)} (only batched NCDHW)")
        st, pd, dl = _triple(stride, "stride"), _triple(padding, "padding"), _triple(dilation, "dilation")
        op = _triple(out_pad, "output_padding")
        bv = None if b is None else self.tensor(b, "bias")
        wt = w if isinstance(w, torch.Tensor) else self.tensor(w, "weight")  # a parameter under torch.compile
        try:
            return conv_transpose3d(self.emit(), v, wt, bv, st, pd + pd, dl, op, int(groups))
        except ValueError as e:
            raise _Unsupported(str(e)) from e

    def unsqueeze_h(self, w: Any) -> Any:
        """A 1-d convolution's weight (O, C, K) as a 2-d one's (O, C, 1, K): a tensor stays a tensor."""
        if isinstance(w, torch.Tensor):
            return w.unsqueeze(2)
        wv = self.tensor(w, "weight")
        o, c, k = self.shape(wv)
        return self.reshape(wv, (o, c, 1, k))

    def conv_transpose2d(
        self, x: Any, w: Any, b: Any, stride: Any, padding: Any, dilation: Any, out_pad: Any, groups: int
    ) -> Value:
        """A transposed convolution as registry ops (``frontends.compose.conv_transpose2d``); a computed weight
        (a parameter under torch.compile) is rearranged by ops."""
        if not isinstance(w, torch.Tensor):
            w = self.tensor(w, "weight")
        ws = tuple(w.shape) if isinstance(w, torch.Tensor) else self.shape(w)
        if len(ws) != 4:
            raise _Unsupported(f"only 2-d transposed convolution is expressible (weight shape {ws})")
        v = self.batched4(self.tensor(x), "transposed convolution")
        (sh, sw), (ph, pw), (dh, dw), (oh, ow) = (
            _pair(a, k)
            for a, k in ((stride, "stride"), (padding, "padding"), (dilation, "dilation"), (out_pad, "output_padding"))
        )
        bias = None if b is None else self.tensor(b, "bias")
        y = conv_transpose2d(self.emit(), v, w, bias, (sh, sw), (ph, pw, ph, pw), (dh, dw), (oh, ow), int(groups))
        return self.to_meta_shape(y)

    def a_maxpool(
        self, x: Any, kernel: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False
    ) -> tuple[Any, ...]:
        y = self.maxpool(self.tensor(x), kernel, stride, padding, dilation, ceil_mode, False)
        return (y, NotComputed("max-pool's indices"))

    def a_avgpool(
        self,
        x: Any,
        kernel: Any,
        stride: Any = (),
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: Any = None,
    ) -> Value:
        return self.avgpool(self.tensor(x), kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)

    def a_maxpool3d(
        self, x: Any, kernel: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False
    ) -> tuple[Any, ...]:
        y = self.pool3d(x, "max", kernel, stride, padding, dilation, ceil_mode, False, None)
        return (y, NotComputed("max-pool's indices"))

    def a_avgpool3d(
        self,
        x: Any,
        kernel: Any,
        stride: Any = (),
        padding: Any = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: Any = None,
    ) -> Value:
        return self.pool3d(x, "avg", kernel, stride, padding, 1, ceil_mode, count_include_pad, divisor_override)

    def a_adaptive_avgpool3d(self, x: Any, output_size: Any) -> Value:
        """An output size dividing the input evenly: average pooling with kernel = stride = input / output."""
        size, out = self.shape(self.tensor(x))[-3:], _triple(output_size, "output_size")
        if any(o < 1 or n % o for n, o in zip(size, out)):
            raise _Unsupported(f"adaptive_avg_pool3d from {list(size)} to {list(out)} (only sizes dividing evenly)")
        k = tuple(n // o for n, o in zip(size, out))
        return self.pool3d(x, "avg", k, k, 0, 1, False, True, None)

    def pool3d(
        self,
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
        v = self.tensor(x)
        s = self.shape(v)
        if len(s) not in (4, 5):
            raise _Unsupported(f"3-d pooling of an input of shape {s} (only (N, C, D, H, W) or (C, D, H, W))")
        k = _triple(kernel, "kernel_size")
        st = k if stride is None or (isinstance(stride, (tuple, list)) and not stride) else _triple(stride, "stride")
        pd = _triple(padding, "padding")
        try:
            y = pool3d(
                self.emit(),
                self.reshape(v, (1,) * (5 - len(s)) + s),
                op,
                k,
                st,
                pd + pd,
                bool(ceil_mode),
                bool(count_include_pad),
                _triple(dilation, "dilation"),
                None if divisor is None else int(divisor),
            )
        except ValueError as e:
            raise _Unsupported(str(e)) from e
        return self.reshape(y, self.out_shape())

    def a_upsample(self, x: Any, output_size: Any, *rest: Any) -> Value:
        bilinear = self.current is aten.upsample_bilinear2d.vec
        align = rest[0] if bilinear and rest else False
        scales = rest[-1] if rest else None
        return self.resize(self.tensor(x), "bilinear" if bilinear else "nearest", align, scales)

    def a_upsample_aa(
        self, x: Any, output_size: Any, align_corners: bool, scales_h: Any = None, scales_w: Any = None
    ) -> Value:
        """Antialiased bilinear / bicubic resize (F.interpolate(antialias=True)): separable, so one constant
        map per axis, which torch's own kernel gives on unit vectors (float64), applied as gathers
        (``frontends.compose.resample``)."""
        v = self.tensor(x)
        s = self.shape(v)
        if len(s) != 4 or self.b.graph.dtype_of(v) != "float32":
            raise _Unsupported(f"antialiased resize of a {self.b.graph.dtype_of(v)} tensor of shape {s}")
        for ax, n_out, scale in ((2, int(output_size[0]), scales_h), (3, int(output_size[1]), scales_w)):
            n_in = s[ax]
            eye = torch.eye(n_in, dtype=torch.float64)
            # the other axis 2 wide, unchanged (torch's kernels mishandle a width of 1): channel j is e_j
            if ax == 2:
                basis, size, scales = eye.reshape(1, n_in, n_in, 1).expand(1, n_in, n_in, 2), [n_out, 2], (scale, None)
            else:
                basis, size, scales = eye.reshape(1, n_in, 1, n_in).expand(1, n_in, 2, n_in), [2, n_out], (None, scale)
            out = self.current(basis.contiguous(), size, bool(align_corners), *scales)
            matrix = (out[..., 0] if ax == 2 else out[:, :, 0, :]).reshape(n_in, n_out).T
            if not (n_in == n_out and torch.equal(matrix, eye)):
                v = resample(self.emit(), v, ax, matrix.numpy())
        return v if v is not self.tensor(x) else self.b.op("identity", v)

    def a_adaptive_avgpool(self, x: Any, output_size: Any) -> Value:
        return self.adaptive_avgpool(self.tensor(x), output_size)

    def a_adaptive_avgpool1d(self, x: Any, output_size: Any) -> Value:
        """(N, C, L) as (N, C, 1, L) through the 2-d pooling."""
        v = self.tensor(x)
        s = self.shape(v)
        if len(s) != 3:
            raise _Unsupported(f"adaptive_avg_pool1d of a rank-{len(s)} tensor (only (N, C, L))")
        osz = output_size[0] if isinstance(output_size, (tuple, list)) else output_size
        y = self.adaptive_avgpool(self.reshape(v, (s[0], s[1], 1, s[2])), (1, osz))
        return self.reshape(y, self.out_shape())

    def a_grid_sample(self, x: Any, grid: Any, mode: int, padding: int, align_corners: bool) -> Value:
        """F.grid_sample at run-time points (``compose.grid_sample``); modes and paddings are torch's codes."""
        v, g = self.tensor(x), self.tensor(grid)
        for t, what in ((v, "input"), (g, "grid")):
            if self.b.graph.dtype_of(t) != "float32":
                raise _Unsupported(f"grid_sample of a {self.b.graph.dtype_of(t)} {what} (only float32)")
        m = {0: "linear", 1: "nearest", 2: "cubic"}.get(int(mode), str(mode))
        pad = {0: "zeros", 1: "border", 2: "reflection"}.get(int(padding), str(padding))
        why = grid_sample_refusal(self.shape(v), self.shape(g), m, pad)
        if why:
            raise _Unsupported(why)
        return grid_sample(self.emit(), v, g, m, pad, bool(align_corners))
