"""Layout ops: transpose, reshape, concat, split, slice — they move values, of any dtype."""

from __future__ import annotations

from dataclasses import replace

import torch

from rewrite.ir.dtypes import ANY_SAME
from rewrite.ir.ops.elementwise import _at
from rewrite.ir.ops.registry import (
    VARIADIC,
    AttrKind,
    AttrSpec,
    CostClass,
    FusionRole,
    Group,
    OnnxSpelling,
    OpDef,
    register_op,
)
from rewrite.ir.shapes import (
    Concat,
    Permute,
    Reshape,
    Slice,
    Split,
)


# ---------------------------------------------------------------- layout
# Layout ops move values of any dtype (int64 ids, bool masks) unchanged: ANY_SAME.
def _layout(op: OpDef) -> None:
    register_op(replace(op, dtype_rule=ANY_SAME))


_layout(
    OpDef(
        "transpose",
        Group.LAYOUT,
        1,
        (AttrSpec("perm", AttrKind.INTS),),
        Permute(),
        lambda xs, a: [xs[0].permute(*a["perm"])],
        doc="permute dimensions",
        fusion=FusionRole.REMAP,
        aten=_at("a_permute", "aten.permute.default", "aten.t.default", "aten.transpose.int"),
        onnx=OnnxSpelling("Transpose"),
    )
)

_layout(
    OpDef(
        "reshape",
        Group.LAYOUT,
        1,
        (AttrSpec("shape", AttrKind.INTS),),
        Reshape(),
        lambda xs, a: [xs[0].reshape(a["shape"])],
        doc="reshape (row-major)",
        cost_class=CostClass.VIEW,
        fusion=FusionRole.ALIAS,
        aten=_at(
            "a_reshape",
            "aten.view.default",
            "aten._unsafe_view.default",
            "aten.reshape.default",
            "aten.unsqueeze.default",
            "aten.squeeze.dim",
            "aten.squeeze.dims",
            "aten.squeeze.default",
            "aten.flatten.using_ints",
        )
        + _at("a_reshape", "aten.unflatten.int", "aten.view_as.default", "aten.reshape_as.default", training_only=True),
        onnx=OnnxSpelling("Reshape"),
    )
)

_layout(
    OpDef(
        "concat",
        Group.LAYOUT,
        VARIADIC,
        (AttrSpec("axis", AttrKind.INT),),
        Concat(),
        lambda xs, a: [torch.cat(xs, a["axis"])],
        doc="concatenate along axis",
        aten=_at("a_cat", "aten.cat.default"),
        onnx=OnnxSpelling("Concat"),
    )
)

_layout(
    OpDef(
        "split",
        Group.LAYOUT,
        1,
        (AttrSpec("axis", AttrKind.INT), AttrSpec("sizes", AttrKind.INTS)),
        Split(),
        lambda xs, a: list(torch.split(xs[0], list(a["sizes"]), a["axis"])),
        doc="split along axis into pieces of the given sizes (one output each)",
        aten=_at("a_split", "aten.split_with_sizes.default", "aten.split.Tensor")
        + _at("a_chunk", "aten.chunk.default", training_only=True),
        onnx=OnnxSpelling("Split"),
    )
)

_layout(
    OpDef(
        "slice",
        Group.LAYOUT,
        1,
        (AttrSpec("axis", AttrKind.INT), AttrSpec("start", AttrKind.INT), AttrSpec("end", AttrKind.INT)),
        Slice(),
        lambda xs, a: [xs[0].narrow(a["axis"], a["start"], a["end"] - a["start"])],
        doc="contiguous slice [start, end) along axis",
        cost_class=CostClass.VIEW,
        fusion=FusionRole.REMAP,
        aten=_at("a_slice", "aten.slice.Tensor"),
        onnx=OnnxSpelling("Slice"),
    )
)
