"""Source taps of the registry's ``resize`` for ONNX's coordinate modes, one axis at a time.

ONNX Resize maps output index ``y`` to a source coordinate ``x`` (``coord``), then nearest picks one
input index by ``nearest_mode`` and linear blends ``floor(x)`` and ``floor(x) + 1`` by ``x - floor(x)``;
indices outside ``[0, n_in)`` read the edge. The spec's reference computes ``x`` in float64 with the
scale given (``scales`` input) or ``n_out / n_in`` (``sizes``), so both the op's torch reference and
its lowering use these float64 tables (static shapes: the lowering bakes them in as constants)
instead of re-deriving the coordinate in float32, where ties such as ``x = k + 0.5`` can round apart.

    >>> resize_taps(2, 4, "nearest", "half_pixel", "round_prefer_floor", 0.0)[0].tolist()
    [0, 0, 1, 1]
"""

from __future__ import annotations

import torch

TORCH = "torch"  # F.interpolate's mapping (align_corners attr; nearest = floor(dst * in / out))
COORDS = (
    TORCH,
    "half_pixel",
    "half_pixel_symmetric",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_half_pixel_for_nn",
)
NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def source_coords(n_in: int, n_out: int, coord: str, scale: float) -> torch.Tensor:
    """ONNX's ``x_original`` for each output index (float64); ``scale`` 0 means ``n_out / n_in``."""
    s = scale if scale > 0 else n_out / n_in
    y = torch.arange(n_out, dtype=torch.float64)
    width = s * n_in  # the spec's (possibly fractional) output length
    if coord == "half_pixel":
        return (y + 0.5) / s - 0.5
    if coord == "half_pixel_symmetric":
        offset = n_in / 2 * (1 - n_out / width)
        return offset + (y + 0.5) / s - 0.5
    if coord == "pytorch_half_pixel":
        return torch.full((n_out,), -0.5, dtype=torch.float64) if width == 1 else (y + 0.5) / s - 0.5
    if coord == "align_corners":
        return torch.zeros(n_out, dtype=torch.float64) if width == 1 else y * (n_in - 1) / (width - 1)
    if coord == "asymmetric":
        return y / s
    if coord == "tf_half_pixel_for_nn":
        return (y + 0.5) / s
    raise ValueError(f"resize: no ONNX coordinate mode {coord!r}")


def resize_taps(
    n_in: int, n_out: int, mode: str, coord: str, nearest_mode: str, scale: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per output index: first source index, second source index (int64, inside ``[0, n_in)``) and
    the float64 weight of the second (nearest: both indices equal, weight 0)."""
    x = source_coords(n_in, n_out, coord, scale)
    fl = torch.floor(x)
    frac = x - fl
    lo = fl.to(torch.int64)
    if mode == "nearest":
        # the spec's reference: a whole x is itself; otherwise floor or floor + 1 by the fraction
        up = {
            "round_prefer_floor": frac > 0.5,
            "round_prefer_ceil": frac >= 0.5,
            "floor": torch.zeros_like(frac, dtype=torch.bool),
            "ceil": frac > 0,
        }[nearest_mode]
        i = (lo + up.to(torch.int64)).clamp(0, n_in - 1)
        return i, i, torch.zeros_like(x)
    return lo.clamp(0, n_in - 1), (lo + 1).clamp(0, n_in - 1), frac


def resize_onnx_ref(
    x: torch.Tensor, size: tuple[int, int], mode: str, coord: str, nearest_mode: str, scales: tuple[float, float]
) -> torch.Tensor:
    """The op's reference for an ONNX ``coord``: the taps above, blended in x's dtype the way the
    lowering does (h outside, w inside)."""
    h0, h1, lh = resize_taps(x.shape[2], size[0], mode, coord, nearest_mode, scales[0])
    w0, w1, lw = resize_taps(x.shape[3], size[1], mode, coord, nearest_mode, scales[1])
    if mode == "nearest":
        return x[:, :, h0][:, :, :, w0]
    lh_, lw_ = lh.to(x.dtype)[:, None], lw.to(x.dtype)[None, :]
    rows0, rows1 = x[:, :, h0], x[:, :, h1]
    top = (1 - lw_) * rows0[:, :, :, w0] + lw_ * rows0[:, :, :, w1]
    bot = (1 - lw_) * rows1[:, :, :, w0] + lw_ * rows1[:, :, :, w1]
    return (1 - lh_) * top + lh_ * bot
