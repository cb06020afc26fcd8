"""``GridSample`` (opsets 16, 20, 22) onto ``compose.grid_sample``: gathers at run-time points; ``AffineGrid``.

Opset 16 takes a 4-d input and names the modes bilinear / bicubic, opsets 20 and 22 take any rank
(5-d: volumetric) and name them linear / cubic; both spellings are accepted.  eqsat computes what
torch's F.grid_sample and onnxruntime compute.  onnx's reference evaluator differs from both in one
case: cubic with border padding, where it clamps a coordinate outside [-0.5, s - 0.5] ([0, s - 1] with
align_corners) before taking the taps, which torch and onnxruntime clamp one by one; that case is
refused for inputs other than 4-d, which only the reference evaluator runs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx

from rewrite.frontends.compose import grid_sample, grid_sample_refusal
from rewrite.frontends.onnx.context import Ctx, Refuse, Tensor, handles, one_output, only_attrs
from rewrite.ir.dtypes import FLOAT32

_MODE = {"bilinear": "linear", "linear": "linear", "nearest": "nearest", "bicubic": "cubic", "cubic": "cubic"}


@handles("GridSample")
def _grid_sample(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    only_attrs(a, {"mode", "padding_mode", "align_corners"})
    one_output(n)
    x, grid = c.env[n.input[0]], c.env[n.input[1]]
    for t, what in ((x, "input"), (grid, "grid")):
        if c.dtype(t) != FLOAT32:
            raise Refuse(f"{what} has dtype {c.dtype(t)} (only float32)")
    mode = str(a.get("mode", "bilinear" if c.opset < 20 else "linear"))
    padding = str(a.get("padding_mode", "zeros"))
    why = grid_sample_refusal(c.shape(x), c.shape(grid), _MODE.get(mode, mode), padding)
    if why:
        raise Refuse(why)
    align = int(a.get("align_corners", 0))
    return [grid_sample(c.emit(), c.value(x), c.value(grid), _MODE[mode], padding, bool(align))]


def _base_grid(sizes: list[int], align: bool) -> np.ndarray:
    """The homogeneous coordinates of every output point, [prod(sizes), k + 1]: (x, y[, z], 1), x along the
    last spatial dim, each in [-1, 1] at pixel centres (align_corners: at the corner pixels), as the
    reference (and torch's affine_grid) lay them out."""
    axes = []
    for s in sizes:
        if align:
            axes.append(np.linspace(-1.0, 1.0, s) if s > 1 else np.zeros(1))
        else:
            axes.append((np.arange(s) * 2.0 + 1.0) / s - 1.0)
    mesh = np.meshgrid(*axes, indexing="ij")
    cols = [m.reshape(-1) for m in reversed(mesh)] + [np.ones(mesh[0].size)]
    return np.stack(cols, axis=1).astype(np.float32)


@handles("AffineGrid")
def _affine_grid(c: Ctx, n: onnx.NodeProto, a: dict[str, Any]) -> list[Tensor]:
    """The sampling grid of an affine map (spatial transformers, before GridSample): the output points'
    homogeneous coordinates times theta transposed, one matmul per batch entry ([N, P, k+1] @ [N, k+1, k])."""
    only_attrs(a, {"align_corners"})
    theta = c.env[n.input[0]]
    size = c.ints(n.input[1], "size")
    ts = c.shape(theta)
    k = len(size) - 2
    if k not in (2, 3) or ts != (size[0], k, k + 1):
        raise Refuse(f"theta of shape {ts} for size {size} (2-d: [N, 2, 3], 3-d: [N, 3, 4])")
    if c.dtype(theta) != FLOAT32:
        raise Refuse(f"theta has dtype {c.dtype(theta)} (only float32)")
    spatial = size[2:]
    base = _base_grid(spatial, bool(a.get("align_corners", 0)))
    points = c.value(base.reshape(1, *base.shape))
    tt = c.add("transpose", [c.value(theta)], perm=(0, 2, 1))
    grid = c.add("matmul", [points, tt])
    return [c.reshape(grid, (size[0], *spatial, k))]
