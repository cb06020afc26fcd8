"""Indexing, comparison and selection ops: the ones int64 and bool values flow through."""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from rewrite.ir.dtypes import BOOL, COMPARE, DTYPES, FLOAT32, INT64, INT_RANGE, STORED_INT, TORCH_DTYPE, DTypeRule
from rewrite.ir.ops.elementwise import _at, _ew_flops
from rewrite.ir.ops.registry import (
    AttrKind,
    AttrSpec,
    Group,
    OnnxSpelling,
    OpDef,
    register_op,
)
from rewrite.ir.shapes import (
    Broadcast,
    Broadcast3,
    Embedding,
    Gather,
    IndexSelect,
    Same,
)

# ---------------------------------------------------------------- indexing, comparison, selection
# Integer and boolean values (token ids, masks) flow only through these ops and the layout
# ops (dtype ANY_SAME below); every other op takes and gives float32 (rewrite/ir/dtypes.py).
# An index out of range is an error in torch; the compiled kernels clamp it into range
# (never read outside a buffer), so only valid indices are compared.
register_op(
    OpDef(
        "embedding",
        Group.INDEXING,
        2,
        (),
        Embedding(),
        lambda xs, a: [F.embedding(xs[1], xs[0])],
        doc="rows of a table [V, D] picked by int64 ids: inputs table, ids; output ids.shape + [D]",
        dtype_rule=DTypeRule((FLOAT32, INT64), FLOAT32),
        aten=_at("a_embedding", "aten.embedding.default"),
    )
)
register_op(
    OpDef(
        "index_select",
        Group.INDEXING,
        2,
        (AttrSpec("axis", AttrKind.INT),),
        IndexSelect(),
        lambda xs, a: [torch.index_select(xs[0], a["axis"], xs[1])],
        doc="entries along axis picked by a rank-1 int64 index",
        dtype_rule=DTypeRule(("T", INT64), "T"),
        aten=_at("a_index_select", "aten.index_select.default"),
    )
)
register_op(
    OpDef(
        "gather",
        Group.INDEXING,
        2,
        (AttrSpec("axis", AttrKind.INT),),
        Gather(),
        lambda xs, a: [torch.gather(xs[0], a["axis"], xs[1])],
        doc="torch.gather: out[i..] = x[i.. with index[i..] along axis]",
        dtype_rule=DTypeRule(("T", INT64), "T"),
        aten=_at("a_gather", "aten.gather.default"),
        onnx=OnnxSpelling("GatherElements"),
    )
)

# each comparison: its torch function, ATen overloads (``.Scalar``: a number for the right operand) and ONNX
# op type (ONNX has no NotEqual: ne exports as Not(Equal))
_COMPARE: dict[str, tuple[Callable[[torch.Tensor, torch.Tensor], torch.Tensor], tuple[str, ...], str | None]] = {
    "eq": (torch.eq, ("aten.eq.Tensor", "aten.eq.Scalar"), "Equal"),
    "ne": (torch.ne, ("aten.ne.Tensor", "aten.ne.Scalar"), None),
    "lt": (torch.lt, ("aten.lt.Tensor", "aten.lt.Scalar"), "Less"),
    "le": (torch.le, ("aten.le.Tensor", "aten.le.Scalar"), "LessOrEqual"),
    "gt": (torch.gt, ("aten.gt.Tensor", "aten.gt.Scalar"), "Greater"),
    "ge": (torch.ge, ("aten.ge.Tensor", "aten.ge.Scalar"), "GreaterOrEqual"),
}
for _name, (_cfn, _aten, _onnx) in _COMPARE.items():
    register_op(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            2,
            (),
            Broadcast(),
            (lambda f: lambda xs, a: [f(xs[0], xs[1])])(_cfn),
            _ew_flops(1),
            commutative=_name in ("eq", "ne"),
            doc=f"elementwise comparison {_name} (float32 or int64 operands) giving bool",
            dtype_rule=COMPARE,
            aten=_at("a_compare", *_aten),
            onnx=None if _onnx is None else OnnxSpelling(_onnx),
        )
    )

register_op(
    OpDef(
        "where",
        Group.ELEMENTWISE,
        3,
        (),
        Broadcast3(),
        lambda xs, a: [torch.where(xs[0], xs[1], xs[2])],
        _ew_flops(1),
        doc="cond ? x : y elementwise, with broadcasting (equal ranks)",
        dtype_rule=DTypeRule((BOOL, "T", "T"), "T"),
        # a number for either branch: training-IR rows (core ATen has where.self only)
        aten=_at("a_where", "aten.where.self")
        + _at(
            "a_where_scalar", "aten.where.ScalarOther", "aten.where.ScalarSelf", "aten.where.Scalar", training_only=True
        ),
        onnx=OnnxSpelling("Where"),
    )
)
register_op(
    OpDef(
        "masked_fill",
        Group.ELEMENTWISE,
        2,
        (AttrSpec("value", AttrKind.FLOAT),),
        Broadcast(),
        lambda xs, a: [torch.masked_fill(xs[0], xs[1], a["value"])],
        _ew_flops(1),
        doc="x where mask is false, value where it is true (value may be -inf)",
        dtype_rule=DTypeRule((FLOAT32, BOOL), FLOAT32),
        aten=_at("a_masked_fill", "aten.masked_fill.Scalar"),
    )
)
register_op(
    OpDef(
        "logical_not",
        Group.ELEMENTWISE,
        1,
        (),
        Same(),
        lambda xs, a: [torch.logical_not(xs[0])],
        _ew_flops(1),
        doc="elementwise not of a bool tensor",
        dtype_rule=DTypeRule((BOOL,), BOOL),
        onnx=OnnxSpelling("Not"),
        aten=_at("a_logical_not", "aten.logical_not.default", "aten.bitwise_not.default"),
    )
)
# bitwise and / or of bool tensors are the same ops
for _name, _lfn, _aten, _onnx in (
    ("logical_and", torch.logical_and, ("aten.logical_and.default", "aten.bitwise_and.Tensor"), "And"),
    ("logical_or", torch.logical_or, ("aten.logical_or.default", "aten.bitwise_or.Tensor"), "Or"),
):
    register_op(
        OpDef(
            _name,
            Group.ELEMENTWISE,
            2,
            (),
            Broadcast(),
            (lambda f: lambda xs, a: [f(xs[0], xs[1])])(_lfn),
            _ew_flops(1),
            commutative=True,
            doc=f"elementwise {_name[8:]} of bool tensors",
            dtype_rule=DTypeRule((BOOL, BOOL), BOOL),
            aten=_at("a_binary", *_aten),
            onnx=OnnxSpelling(_onnx),
        )
    )


def _cast(x: torch.Tensor, to: str) -> torch.Tensor:
    """``x`` as dtype ``to``.  To a stored integer dtype (``STORED_INT``) the value saturates to its range (a
    float truncated toward zero first, NaN to 0), as the compiled kernels convert (LLVM's ``fptosi.sat``):
    torch leaves an out-of-range conversion undefined, and a quantizer's rounding may land one past it."""
    if to not in STORED_INT or x.dtype == torch.bool:
        return x.to(TORCH_DTYPE[to])
    lo, hi = INT_RANGE[to]
    if x.is_floating_point():
        x = torch.nan_to_num(x.double(), nan=0.0).trunc()
    return x.clamp(lo, hi).to(TORCH_DTYPE[to])


register_op(
    OpDef(
        "cast",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("dtype", AttrKind.STR, choices=DTYPES),),
        Same(),
        lambda xs, a: [_cast(xs[0], a["dtype"])],
        _ew_flops(1),
        doc="explicit dtype conversion (torch .to semantics: float to int truncates, nonzero is true; to the "
        "stored integers uint8/int8/int32 it saturates, NaN to 0)",
        dtype_rule=DTypeRule(("T",), "attr"),
        aten=_at("a_to", "aten.to.dtype", "aten.to.dtype_layout", "aten.type_as.default", training_only=True),
    )
)
