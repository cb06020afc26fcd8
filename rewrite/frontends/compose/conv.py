"""3-d convolution and 2-d / 3-d transposed convolution as 2-d convolutions."""

from __future__ import annotations

import math

import torch

from rewrite.frontends.compose.emit import Emit, Weight, _wflip, _wreshape, _wshape, _wtap, _wtranspose, _wvalue
from rewrite.ir.graph import Value


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
    if (kh, kw) == (sh, sw) and pads == (0, 0, 0, 0) and (oh, ow) == (0, 0) and groups == 1 and (dh, dw) == (1, 1):
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


def conv_transpose3d(
    e: Emit,
    x: Value,
    w: Weight,
    bias: Value | None,
    stride: tuple[int, int, int],
    pads: tuple[int, int, int, int, int, int],
    dilation: tuple[int, int, int],
    out_pad: tuple[int, int, int],
    groups: int,
) -> Value:
    """A 3-d transposed convolution (NCDHW, weight [C_in, C_out / groups, kd, kh, kw]: a constant, or a
    run-time value sliced by ops) as 2-d ones per depth tap.

    ``pads`` = (front, top, left, back, bottom, right), cropped from the full output; ``out_pad`` is added
    at the end.  Kernel = stride with no padding (a 3-d U-Net's 2x2x2/2 up-convolution): a 1x1 convolution
    to C_out x sd x sh x sw channels, then depth-to-space.  Otherwise input frame i, through depth tap a
    (``conv_transpose2d`` of every frame, folded into the batch, with ``w[:, :, a]``), lands on output
    frame i * sd + a * dd - front: each tap's frames are spread sd apart (reshape, pad), shifted into
    place (pad, slice) and the taps summed; taps that never overlap (kd = sd) are interleaved instead.
    """
    n, c, d, h, wd = e.shape(x)
    cin, cog, kd, kh, kw = _wshape(e, w)
    cout = cog * groups
    (sd, sh, sw), (dd, _, _), (od, _, _) = stride, dilation, out_pad
    front, top, left, back, bottom, right = pads
    if (kd, kh, kw) == stride and not any(pads) and not any(out_pad) and groups == 1 and dilation == (1, 1, 1):
        # out[n, o, i*sd+a, j*sh+b, k*sw+t] = sum_c x[n, c, i, j, k] * w[c, o, a, b, t]
        w1 = _wreshape(e, _wtranspose(e, w, (1, 2, 3, 4, 0)), (cout * sd * sh * sw, cin, 1, 1))
        y = e.op(
            "conv2d",
            [e.reshape(x, (n, c, d * h, wd)), _wvalue(e, w1)],
            stride=(1, 1),
            padding=(0, 0),
            dilation=(1, 1),
            groups=1,
        )
        y = e.reshape(y, (n, cout, sd, sh, sw, d, h, wd))
        y = e.op("transpose", [y], perm=(0, 1, 5, 2, 6, 3, 7, 4))
        y = e.reshape(y, (n, cout, d * sd, h * sh, wd * sw))
    else:
        dout = (d - 1) * sd + dd * (kd - 1) + 1 + od - front - back
        if dout < 1:
            raise ValueError(f"pads {list(pads)} crop the whole output depth")
        frames = e.reshape(e.op("transpose", [x], perm=(0, 2, 1, 3, 4)), (n * d, c, h, wd))
        taps = []
        for a in range(kd):
            ya = conv_transpose2d(
                e,
                frames,
                _wtap(e, w, 2, a),
                None,
                stride[1:],
                (top, left, bottom, right),
                dilation[1:],
                out_pad[1:],
                groups,
            )
            taps.append(e.reshape(ya, (n, d, math.prod(e.shape(ya)[1:]))))
        _, _, ho, wo = e.shape(ya)
        f = cout * ho * wo
        if kd == sd and dd == 1 and (front, back, od) == (0, 0, 0):  # frame i's taps are frames i*kd .. i*kd + kd-1
            y = taps[0] if kd == 1 else e.op("concat", [e.reshape(t, (n, d, 1, f)) for t in taps], axis=2)
            y = e.reshape(y, (n, d * kd, f))
        else:
            parts = []
            for a, u in enumerate(taps):
                if sd > 1:  # frame i at position i * sd
                    u = e.op("pad", [e.reshape(u, (n, d, 1, f))], pads=(0, 0, 0, 0, 0, sd - 1, 0, 0), value=0.0)
                    u = e.reshape(u, (n, d * sd, f))
                lo, size = a * dd - front, d * sd  # where this tap's first frame lands in the output
                cut_lo, cut_hi = max(0, -lo), max(0, lo + size - dout)
                if cut_lo + cut_hi >= size:
                    continue  # all of this tap's frames are cropped
                if cut_lo or cut_hi:
                    u = e.op("slice", [u], axis=1, start=cut_lo, end=size - cut_hi)
                grow = (max(0, lo), max(0, dout - lo - size))
                if any(grow):
                    u = e.op("pad", [u], pads=(0, 0, *grow, 0, 0), value=0.0)
                parts.append(u)
            if not parts:
                raise ValueError(f"pads {list(pads)} crop every frame the kernel writes")
            y = parts[0]
            for p in parts[1:]:
                y = e.op("add", [y, p])
        y = e.op("transpose", [e.reshape(y, (n, dout, cout, ho, wo))], perm=(0, 2, 1, 3, 4))
    if bias is not None:
        y = e.op("add", [y, e.reshape(bias, (1, cout, 1, 1, 1))])
    return y
