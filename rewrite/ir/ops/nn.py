"""Contractions, pooling, normalization and the fused / relaxed-substitution ops (pad2d, rsqrt,
conv2d_bias_act, matmul_bias_act) that rules/fusion.rules and rules/relaxed.rules build.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import torch
import torch.nn.functional as F

from rewrite.ir.dtypes import INT8, INT32, UINT8, DTypeRule
from rewrite.ir.ops.elementwise import ACTS, _at, _ew_flops, act_flops, apply_act
from rewrite.ir.ops.registry import (
    OPS,
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
    Attrs,
    Conv2d,
    GlobalPool2d,
    Linear,
    MatMul,
    Pad2d,
    PerChannel,
    Pool2d,
    Same,
    Shape,
    numel,
)

# ---------------------------------------------------------------- contraction
register_op(
    OpDef(
        "matmul",
        Group.CONTRACTION,
        2,
        (),
        MatMul(),
        lambda xs, a: [torch.matmul(xs[0], xs[1])],
        lambda i, o, a: 2 * numel(o[0]) * i[0][-1],
        doc="(batched) matrix product, equal ranks",
        packed_operand=1,
        aten=_at("a_matmul", "aten.mm.default", "aten.bmm.default", "aten.matmul.default"),
        onnx=OnnxSpelling("MatMul"),
    )
)


def _matmul_integer(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    """sum_k (A - a_zero_point) * B, exact in int64, wrapped to int32 (it fits for K < 65793)."""
    return [torch.matmul(xs[0].long() - a["a_zero_point"], xs[1].long()).to(torch.int32)]


register_op(
    OpDef(
        "matmul_integer",
        Group.CONTRACTION,
        2,
        (AttrSpec("a_zero_point", AttrKind.INT, 0),),
        MatMul(),
        _matmul_integer,
        lambda i, o, a: 2 * numel(o[0]) * i[0][-1],
        doc="(batched) product of a uint8 A (less its zero point) and an int8 B, exact int32 sums (ONNX "
        "MatMulInteger with a scalar A zero point and none for B): a quantized GEMM, VNNI's vpdpbusd on the CPU",
        fusion=FusionRole.CALL,
        dtype_rule=DTypeRule((UINT8, INT8), INT32),
    )
)

register_op(
    OpDef(
        "matmul_at",
        Group.CONTRACTION,
        2,
        (),
        MatMul(at=True),
        lambda xs, a: [torch.matmul(xs[0].transpose(-1, -2), xs[1])],
        lambda i, o, a: 2 * numel(o[0]) * i[0][-2],
        doc="(batched) A^T B, equal ranks: A [..., K, M] read column-major (Winograd's tiles-innermost input)",
        packed_operand=1,
    )
)

register_op(
    OpDef(
        "linear",
        Group.CONTRACTION,
        3,
        (),
        Linear(),
        lambda xs, a: [F.linear(xs[0], xs[1], xs[2])],
        lambda i, o, a: 2 * numel(o[0]) * i[1][1] + numel(o[0]),
        doc="x @ w.T + b",
        packed_operand=1,
    )
)

CONV_ATTRS = (  # conv2d and its variants (conv2d_bias_act, the blocked convs)
    AttrSpec("stride", AttrKind.INTS, (1, 1)),
    AttrSpec("padding", AttrKind.INTS, (0, 0)),
    AttrSpec("dilation", AttrKind.INTS, (1, 1)),
    AttrSpec("groups", AttrKind.INT, 1),
)
register_op(
    OpDef(
        "conv2d",
        Group.CONTRACTION,
        2,
        CONV_ATTRS,
        Conv2d(),
        lambda xs, a: [F.conv2d(xs[0], xs[1], None, a["stride"], a["padding"], a["dilation"], a["groups"])],
        lambda i, o, a: 2 * numel(o[0]) * i[1][1] * i[1][2] * i[1][3],
        doc="2-d convolution, NCHW x OIHW, no bias (bias is a separate add)",
        cost_class=CostClass.CONV,
        packed_operand=0,
        onnx=OnnxSpelling("Conv"),
    )
)


def _conv2d_integer(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    """conv2d of (x - x_zero_point) and w, exact in float64 (the sums stay far below 2**53), as int32; the
    padding is the zero point (0 once it is subtracted), as ONNX ConvInteger pads."""
    x = xs[0].double() - a["a_zero_point"]
    y = F.conv2d(x, xs[1].double(), None, a["stride"], a["padding"], a["dilation"], a["groups"])
    return [y.round().to(torch.int32)]


register_op(
    OpDef(
        "conv2d_integer",
        Group.CONTRACTION,
        2,
        (*CONV_ATTRS, AttrSpec("a_zero_point", AttrKind.INT, 0)),
        Conv2d(),
        _conv2d_integer,
        lambda i, o, a: 2 * numel(o[0]) * i[1][1] * i[1][2] * i[1][3],
        doc="2-d convolution of a uint8 NCHW input (less its zero point, which also pads it) and int8 OIHW "
        "weights, exact int32 sums (ONNX ConvInteger with a scalar input zero point and none for the weights)",
        cost_class=CostClass.CONV,
        fusion=FusionRole.CALL_EPILOGUE,
        dtype_rule=DTypeRule((UINT8, INT8), INT32),
    )
)


# ---------------------------------------------------------------- pooling
_POOL_ATTRS = (
    AttrSpec("kernel", AttrKind.INTS),
    AttrSpec("stride", AttrKind.INTS),
    AttrSpec("padding", AttrKind.INTS, (0, 0)),
    AttrSpec("ceil_mode", AttrKind.INT, 0),
)


def _pool_flops(i: list[Shape], o: list[Shape], a: Attrs) -> int:
    return numel(o[0]) * a["kernel"][0] * a["kernel"][1]


register_op(
    OpDef(
        "maxpool2d",
        Group.POOLING,
        1,
        _POOL_ATTRS,
        Pool2d(),
        lambda xs, a: [F.max_pool2d(xs[0], a["kernel"], a["stride"], a["padding"], ceil_mode=bool(a["ceil_mode"]))],
        _pool_flops,
        doc="2-d max pooling",
        aten=_at("a_maxpool", "aten.max_pool2d_with_indices.default")
        + _at("a_max_pool", "aten.max_pool2d.default", training_only=True),
        onnx=OnnxSpelling("MaxPool"),
    )
)
register_op(
    OpDef(
        "avgpool2d",
        Group.POOLING,
        1,
        _POOL_ATTRS + (AttrSpec("count_include_pad", AttrKind.INT, 1),),
        Pool2d(),
        lambda xs, a: [
            F.avg_pool2d(
                xs[0],
                a["kernel"],
                a["stride"],
                a["padding"],
                ceil_mode=bool(a["ceil_mode"]),
                count_include_pad=bool(a["count_include_pad"]),
            )
        ],
        _pool_flops,
        doc="2-d average pooling",
        aten=_at("a_avgpool", "aten.avg_pool2d.default"),
        onnx=OnnxSpelling("AveragePool"),
    )
)

register_op(
    OpDef(
        "global_avgpool",
        Group.POOLING,
        1,
        (),
        GlobalPool2d(),
        lambda xs, a: [xs[0].mean((2, 3), keepdim=True)],
        lambda i, o, a: numel(i[0]),
        doc="mean over H and W, keeping them as size 1",
        onnx=OnnxSpelling("GlobalAveragePool"),
    )
)


# ---------------------------------------------------------------- normalization
register_op(
    OpDef(
        "batchnorm",
        Group.NORMALIZATION,
        5,
        (AttrSpec("eps", AttrKind.FLOAT, 1e-5),),
        PerChannel(1),
        lambda xs, a: [F.batch_norm(xs[0], xs[3], xs[4], xs[1], xs[2], False, 0.0, a["eps"])],
        lambda i, o, a: 2 * numel(o[0]),
        doc="inference batch norm: inputs x, weight, bias, running_mean, running_var",
        fusion=FusionRole.ELEMENTWISE,  # per-channel affine: fuses like an elementwise op
        aten=_at("a_batchnorm", "aten._native_batch_norm_legit_no_training.default")
        + _at("a_batch_norm", "aten.batch_norm.default", training_only=True),
        onnx=OnnxSpelling("BatchNormalization"),
    )
)

register_op(
    OpDef(
        "layernorm",
        Group.NORMALIZATION,
        3,
        (AttrSpec("eps", AttrKind.FLOAT, 1e-5),),
        PerChannel(-1),
        lambda xs, a: [F.layer_norm(xs[0], (xs[0].shape[-1],), xs[1], xs[2], a["eps"])],
        lambda i, o, a: 8 * numel(o[0]),
        doc="layer norm over the last axis: inputs x, weight, bias",
        fusion=FusionRole.ROW,
        aten=_at("a_layernorm", "aten.native_layer_norm.default")
        + _at("a_layer_norm", "aten.layer_norm.default", training_only=True),
        onnx=OnnxSpelling("LayerNormalization"),
    )
)

register_op(
    OpDef(
        "softmax",
        Group.NORMALIZATION,
        1,
        (AttrSpec("axis", AttrKind.INT),),
        Same(axis="axis"),
        lambda xs, a: [torch.softmax(xs[0], a["axis"])],
        lambda i, o, a: 6 * numel(o[0]),
        doc="softmax along axis",
        fusion=FusionRole.ROW,
        aten=_at("a_softmax", "aten._softmax.default") + _at("a_softmax_int", "aten.softmax.int", training_only=True),
        onnx=OnnxSpelling("Softmax"),
    )
)


def _lrn(x: torch.Tensor, size: int, alpha: float, beta: float, bias: float) -> torch.Tensor:
    """ONNX LRN: ``x / (bias + alpha / size * sum of x^2 over channels c - (size-1)//2 .. c + size//2)^beta``,
    the window clipped at the first and last channel.  ``F.local_response_norm`` is the same for an odd
    ``size``; for an even one it centres the window a channel lower (it pads ``size//2`` channels before),
    so the sum is written here with ONNX's window."""
    sq = F.pad(x * x, [0, 0] * (x.dim() - 2) + [(size - 1) // 2, size // 2])  # zero channels: the clipping
    total = sq.narrow(1, 0, x.shape[1])
    for k in range(1, size):
        total = total + sq.narrow(1, k, x.shape[1])
    return x / (bias + alpha / size * total).pow(beta)


register_op(
    OpDef(
        "lrn",
        Group.NORMALIZATION,
        1,
        (
            AttrSpec("size", AttrKind.INT),
            AttrSpec("alpha", AttrKind.FLOAT, 1e-4),
            AttrSpec("beta", AttrKind.FLOAT, 0.75),
            AttrSpec("bias", AttrKind.FLOAT, 1.0),
        ),
        Same(),
        lambda xs, a: [_lrn(xs[0], a["size"], a["alpha"], a["beta"], a["bias"])],
        # a square and an add per window channel, then the scale, the power and the division
        lambda i, o, a: (2 * a["size"] + 4) * numel(o[0]),
        doc="local response normalization across channels (axis 1) of N C ...: ONNX LRN (AlexNet, GoogLeNet)",
        onnx=OnnxSpelling("LRN"),
    )
)


# ---------------------------------------------------------------- fused and relaxed-substitution ops
# Added for rules/fusion.rules and rules/relaxed.rules: zero padding (to enlarge
# a conv kernel, MetaFlow), a reciprocal square root (to fold batchnorm into a
# conv's weights, precomputed), and contractions fused with a bias and an
# activation (one kernel instead of three).
register_op(
    OpDef(
        "pad2d",
        Group.LAYOUT,
        1,
        (AttrSpec("pads", AttrKind.INTS),),
        Pad2d(),
        lambda xs, a: [F.pad(xs[0], (a["pads"][2], a["pads"][3], a["pads"][0], a["pads"][1]))],
        doc="zero-pad the last two dims by pads = (top, bottom, left, right)",
        fusion=FusionRole.INJECTIVE,
    )
)

register_op(
    OpDef(
        "rsqrt",
        Group.ELEMENTWISE,
        1,
        (AttrSpec("eps", AttrKind.FLOAT, 0.0),),
        Same(),
        # no "+ 0.0" without an eps: it would turn -0 into +0 (torch.rsqrt(-0.0) is -inf, as the kernels')
        lambda xs, a: [torch.rsqrt(xs[0] + a["eps"]) if a["eps"] else torch.rsqrt(xs[0])],
        _ew_flops(2),
        doc="elementwise 1 / sqrt(x + eps)",
        aten=("aten.rsqrt.default",),
    )
)

ACT_ATTR = AttrSpec("act", AttrKind.STR, "none", choices=tuple(ACTS))


def _act_flops(
    conv_like: Callable[[list[Shape], list[Shape], Attrs], int],
) -> Callable[[list[Shape], list[Shape], Attrs], int]:
    return lambda i, o, a: conv_like(i, o, a) + numel(o[0]) * (1 + act_flops(a["act"]))


register_op(
    OpDef(
        "conv2d_bias_act",
        Group.CONTRACTION,
        3,
        CONV_ATTRS + (ACT_ATTR,),
        Conv2d(bias=True),
        lambda xs, a: [
            apply_act(a["act"], F.conv2d(xs[0], xs[1], xs[2], a["stride"], a["padding"], a["dilation"], a["groups"]))
        ],
        _act_flops(lambda i, o, a: 2 * numel(o[0]) * i[1][1] * i[1][2] * i[1][3]),
        doc="act(conv2d(x, w) + b): NCHW x OIHW, bias [O] along the channel axis",
        cost_class=CostClass.CONV,
        packed_operand=0,
        epilogue_of=("conv2d", (1,)),
    )
)

# The same convolutions computed another way: per block of output rows over the block's im2col matrix,
# materialised on the stack (``lower.ops_to_loops.contraction.conv_block_rows``), where ``conv2d`` packs the
# GEMM's panels straight from the input through a per-lane gather (a bounds select where padded).  Which is
# faster depends on the machine and the convolution (1 thread, 3x3 padded, 128 -> 32 channels over 56^2: the
# block form 1.2x slower on an AVX-512 Xeon, faster on the Zen 3 host it was built on), so rules/im2col.rules
# offers it beside ``conv2d`` and extraction keeps whichever the target's measured costs price lower.  The
# same op but for its name: reference, shape rule, FLOPs and epilogue are conv2d's and conv2d_bias_act's.
IM2COL_OPS = frozenset({"conv2d_im2col", "conv2d_im2col_bias_act"})
register_op(
    replace(
        OPS["conv2d"],
        name="conv2d_im2col",
        doc="conv2d computed per block of output rows over a materialised im2col matrix (a lowering choice)",
        onnx=None,  # exported as Conv; a Conv imports as conv2d
    )
)
register_op(
    replace(
        OPS["conv2d_bias_act"],
        name="conv2d_im2col_bias_act",
        doc="act(conv2d_im2col(x, w) + b): conv2d_bias_act over materialised im2col blocks",
        epilogue_of=("conv2d_im2col", (1,)),
    )
)

register_op(
    OpDef(
        "matmul_bias_act",
        Group.CONTRACTION,
        3,
        (ACT_ATTR,),
        MatMul(bias=True),
        lambda xs, a: [apply_act(a["act"], torch.matmul(xs[0], xs[1]) + xs[2])],
        _act_flops(lambda i, o, a: 2 * numel(o[0]) * i[0][-1]),
        doc="act(x @ w + b): (batched) matmul, bias [N] along the last axis",
        packed_operand=1,
        epilogue_of=("matmul", (-1,)),
    )
)
