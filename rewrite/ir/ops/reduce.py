"""Reductions, constant padding, resize, adaptive pooling, group and RMS norm."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from rewrite.ir.dtypes import ANY_SAME, FLOAT, SAME_NUMERIC
from rewrite.ir.ops.elementwise import _at
from rewrite.ir.ops.registry import (
    AtenSpelling,
    AttrKind,
    AttrSpec,
    FusionRole,
    Group,
    OnnxSpelling,
    OpDef,
    register_op,
)
from rewrite.ir.ops.resize import COORDS, NEAREST_MODES, TORCH, resize_onnx_ref
from rewrite.ir.shapes import (
    Attrs,
    Expand,
    GroupedChannels,
    PadN,
    PerChannel,
    Reduce,
    Spatial2d,
    numel,
)

# ---------------------------------------------------------------- reductions, norms, resize
# The float ops real CNNs and transformers need (MobileNet, EfficientNet, GPT-2, BERT, LLaMA, ViT).
# Ops that torch spells several ways map onto one entry here: view / flatten / squeeze / unsqueeze
# are ``reshape``, permute is ``transpose``, chunk is ``split``, hardtanh and relu6 are ``clamp``.


def _reduce_ref(fn: Callable[..., torch.Tensor]) -> Callable[[list[torch.Tensor], Attrs], list[torch.Tensor]]:
    return lambda xs, a: [fn(xs[0], list(a["axes"]), keepdim=bool(a["keepdim"]))]


def _prod(x: torch.Tensor, axes: list[int], keepdim: bool) -> torch.Tensor:
    """torch.prod over several axes (torch takes one): the last axis first, so the indices stay valid."""
    for ax in sorted(axes, reverse=True):
        x = torch.prod(x, ax, keepdim=keepdim)
    return x


_REDUCE_ATTRS = (AttrSpec("axes", AttrKind.INTS), AttrSpec("keepdim", AttrKind.INT, 0))
_REDUCTIONS: dict[str, tuple[Callable[..., torch.Tensor], int]] = {
    "reduce_sum": (torch.sum, 1),
    "reduce_mean": (torch.mean, 1),
    "reduce_max": (torch.amax, 1),
    "reduce_min": (torch.amin, 1),
    "reduce_prod": (_prod, 1),  # ONNX ReduceProd, torch.prod
}
# ``aten.mean.dim`` is not here: its row (a_mean) picks global_avgpool for the H and W of NCHW
_REDUCTION_ATEN: dict[str, tuple[AtenSpelling, ...]] = {
    "reduce_sum": _at("a_reduce", "aten.sum.dim_IntList") + _at("a_reduce_all", "aten.sum.default", training_only=True),
    "reduce_mean": _at("a_reduce_all", "aten.mean.default", training_only=True),
    "reduce_max": _at("a_reduce", "aten.amax.default"),
    "reduce_min": _at("a_reduce", "aten.amin.default"),
    "reduce_prod": _at("a_prod", "aten.prod.dim_int", "aten.prod.default"),
}
for _name, (_rfn, _rfl) in _REDUCTIONS.items():
    register_op(
        OpDef(
            _name,
            Group.REDUCTION,
            1,
            _REDUCE_ATTRS,
            Reduce(),
            _reduce_ref(_rfn),
            (lambda k: lambda i, o, a: k * numel(i[0]))(_rfl),
            doc=f"{_name[7:]} over axes (sorted, non-negative), keepdim as in torch"
            + ("" if _name == "reduce_mean" else "; float32 or int64 (a mask's count, the last non-pad token)"),
            fusion=FusionRole.POOL,
            dtype_rule=FLOAT if _name == "reduce_mean" else SAME_NUMERIC,
            aten=_REDUCTION_ATEN[_name],
        )
    )
register_op(
    OpDef(
        "reduce_var",
        Group.REDUCTION,
        1,
        _REDUCE_ATTRS + (AttrSpec("correction", AttrKind.INT, 1),),
        Reduce(),
        lambda xs, a: [torch.var(xs[0], list(a["axes"]), correction=a["correction"], keepdim=bool(a["keepdim"]))],
        lambda i, o, a: 4 * numel(i[0]),
        doc="variance over axes, divided by (count - correction) as torch.var",
        fusion=FusionRole.POOL,
        aten=_at("a_var", "aten.var.correction"),
    )
)

register_op(
    OpDef(
        "expand",
        Group.LAYOUT,
        1,
        (AttrSpec("shape", AttrKind.INTS),),
        Expand(),
        lambda xs, a: [xs[0].expand(*a["shape"])],
        doc="broadcast size-1 dims to shape (equal rank), materialised",
        fusion=FusionRole.REMAP,
        dtype_rule=ANY_SAME,
        aten=_at("a_expand", "aten.expand.default") + _at("a_expand", "aten.expand_as.default", training_only=True),
        onnx=OnnxSpelling("Expand"),
    )
)


def _pad_ref(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    p = a["pads"]
    torch_order = [v for d in reversed(range(len(p) // 2)) for v in (p[2 * d], p[2 * d + 1])]
    return [F.pad(xs[0], torch_order, value=a["value"])]


register_op(
    OpDef(
        "pad",
        Group.LAYOUT,
        1,
        (AttrSpec("pads", AttrKind.INTS), AttrSpec("value", AttrKind.FLOAT, 0.0)),
        PadN(),
        _pad_ref,
        doc="constant padding, pads = (before_0, after_0, before_1, after_1, ...) in dim order",
        fusion=FusionRole.INJECTIVE,
        aten=_at("a_pad", "aten.constant_pad_nd.default") + _at("a_pad_mode", "aten.pad.default", training_only=True),
        onnx=OnnxSpelling("Pad"),
    )
)


def _resize_ref(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    size, mode = tuple(a["size"]), a["mode"]
    if a["coord"] != TORCH:
        scales = (a["scale_h"], a["scale_w"])
        return [resize_onnx_ref(xs[0], size, mode, a["coord"], a["nearest_mode"], scales)]
    align = bool(a["align_corners"]) if mode == "bilinear" else None
    return [F.interpolate(xs[0], size=size, mode=mode, align_corners=align)]


register_op(
    OpDef(
        "resize",
        Group.LAYOUT,
        1,
        (
            AttrSpec("size", AttrKind.INTS),
            AttrSpec("mode", AttrKind.STR, "nearest", choices=("nearest", "bilinear")),
            AttrSpec("align_corners", AttrKind.INT, 0),  # coord "torch" only
            # ONNX's coordinate_transformation_mode; "torch" is F.interpolate's own mapping
            AttrSpec("coord", AttrKind.STR, TORCH, choices=COORDS),
            AttrSpec("nearest_mode", AttrKind.STR, "round_prefer_floor", choices=NEAREST_MODES),
            # ONNX maps coordinates by the scale given, not out / in; 0: out / in
            AttrSpec("scale_h", AttrKind.FLOAT, 0.0),
            AttrSpec("scale_w", AttrKind.FLOAT, 0.0),
        ),
        Spatial2d("size"),
        _resize_ref,
        lambda i, o, a: (8 if a["mode"] == "bilinear" else 0) * numel(o[0]),
        doc="NCHW to size, nearest or bilinear: F.interpolate's mapping (coord 'torch') or ONNX Resize's",
        fusion=FusionRole.INJECTIVE,
        aten=_at("a_upsample", "aten.upsample_nearest2d.vec", "aten.upsample_bilinear2d.vec"),
        onnx=OnnxSpelling("Resize"),
    )
)

register_op(
    OpDef(
        "adaptive_avgpool",
        Group.POOLING,
        1,
        (AttrSpec("output_size", AttrKind.INTS),),
        Spatial2d("output_size"),
        lambda xs, a: [F.adaptive_avg_pool2d(xs[0], tuple(a["output_size"]))],
        lambda i, o, a: numel(i[0]),
        doc="adaptive average pooling of NCHW: window [floor(o*H/OH), ceil((o+1)*H/OH))",
    )
)


def _group_norm(x: torch.Tensor, groups: int, w: torch.Tensor, b: torch.Tensor, eps: float) -> torch.Tensor:
    """F.group_norm, which refuses a group of one element (an instance norm over one pixel); its value
    there is defined all the same: the variance is 0, so the output is the bias."""
    n, c = x.shape[0], x.shape[1]
    if x.numel() // (n * groups) > 1:
        return F.group_norm(x, groups, w, b, eps)
    shape = (1, c) + (1,) * (x.dim() - 2)
    return (x - x) * w.reshape(shape) + b.reshape(shape)  # x - x keeps NaN and inf as NaN, like the formula


register_op(
    OpDef(
        "groupnorm",
        Group.NORMALIZATION,
        3,
        (AttrSpec("num_groups", AttrKind.INT), AttrSpec("eps", AttrKind.FLOAT, 1e-5)),
        GroupedChannels(),
        lambda xs, a: [_group_norm(xs[0], a["num_groups"], xs[1], xs[2], a["eps"])],
        lambda i, o, a: 8 * numel(o[0]),
        doc="group norm of N C ...: inputs x, weight [C], bias [C]",
        fusion=FusionRole.ROW,
        aten=_at("a_groupnorm", "aten.native_group_norm.default")
        + _at("a_group_norm", "aten.group_norm.default", training_only=True),
    )
)
register_op(
    OpDef(
        "rmsnorm",
        Group.NORMALIZATION,
        2,
        (AttrSpec("eps", AttrKind.FLOAT, 1e-6),),
        PerChannel(-1),
        lambda xs, a: [F.rms_norm(xs[0], (xs[0].shape[-1],), xs[1], a["eps"])],
        lambda i, o, a: 4 * numel(o[0]),
        doc="RMS norm over the last axis: x * rsqrt(mean(x^2) + eps) * weight",
        fusion=FusionRole.ROW,
    )
)
