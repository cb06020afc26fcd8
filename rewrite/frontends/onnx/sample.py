"""``GridSample`` (opsets 16, 20, 22) onto ``compose.grid_sample``: gathers at run-time points.

Opset 16 takes a 4-d input and names the modes bilinear / bicubic, opsets 20 and 22 take any rank
(5-d: volumetric) and name them linear / cubic; both spellings are accepted.  eqsat computes what
torch's F.grid_sample and onnxruntime compute.  onnx's reference evaluator differs from both in one
case: cubic with border padding, where it clamps a coordinate outside [-0.5, s - 0.5] ([0, s - 1] with
align_corners) before taking the taps, which torch and onnxruntime clamp one by one; that case is
refused for inputs other than 4-d, which only the reference evaluator runs.
"""

from __future__ import annotations

from typing import Any

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
