"""The blocked channel layout NCHWc (``rewrite/ir/shapes/blocked.py``) and convolutions in it.

A tensor [N, C, H, W] in blocks of ``b`` channels is [N, ceil(C/b), H, W, b]: with ``b`` the vector
width, one vector holds ``b`` channels of one pixel, so a depthwise tap is one full-vector multiply-add
and a convolution's output channels are whole vectors (no row tails whatever the image size).  The
conversions are ops of their own, so extraction chooses the layout per region by cost
(``rules/blocked.rules``); ``blocked_weight`` depends only on the weights and is folded at compile time.

Lanes past the real channel count (C not a multiple of ``b``) hold zeros after ``to_blocked`` and
``blocked_weight``; a blocked convolution's own padded lanes hold ``act(0)``.  Nothing reads them into
a real channel: ``from_blocked`` drops them, a dense blocked convolution reads its weight's ``Cg``
channels, a depthwise one and elementwise ops keep every lane to itself.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from rewrite.ir.ops.elementwise import act_flops, apply_act
from rewrite.ir.ops.nn import ACT_ATTR, CONV_ATTRS
from rewrite.ir.ops.registry import OPS, AttrKind, AttrSpec, CostClass, FusionRole, Group, OpDef, register_op
from rewrite.ir.shapes import Attrs, Pool2d, numel
from rewrite.ir.shapes.blocked import BlockedWeight, ConvBlocked, FromBlocked, ToBlocked, blocks

_BLOCK = AttrSpec("block", AttrKind.INT, 16)


def to_blocked(x: torch.Tensor, b: int) -> torch.Tensor:
    """[N, C, H, W] -> [N, ceil(C/b), H, W, b], zero lanes past C."""
    n, c, h, w = x.shape
    cb = blocks(c, b)
    xp = F.pad(x, (0, 0, 0, 0, 0, cb * b - c))
    return xp.reshape(n, cb, b, h, w).permute(0, 1, 3, 4, 2).contiguous()


def from_blocked(y: torch.Tensor, c: int | None = None) -> torch.Tensor:
    """[N, CB, H, W, b] -> [N, c, H, W] (every lane when ``c`` is None)."""
    n, cb, h, w, b = y.shape
    return y.permute(0, 1, 4, 2, 3).reshape(n, cb * b, h, w)[:, : cb * b if c is None else c].contiguous()


def _weight_ref(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    w, b = xs[0], a["block"]
    k, cg, kh, kw = w.shape
    kb = blocks(k, b)
    wp = F.pad(w, (0, 0, 0, 0, 0, 0, 0, kb * b - k))
    return [wp.reshape(kb, b, cg, kh, kw).permute(0, 2, 3, 4, 1).contiguous()]


def _conv_ref(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    x, wb = from_blocked(xs[0]), xs[1]
    kb, cg, kh, kw, b = wb.shape
    w = wb.permute(0, 4, 1, 2, 3).reshape(kb * b, cg, kh, kw)
    bias = F.pad(xs[2], (0, kb * b - xs[2].shape[0])) if len(xs) > 2 else None
    dense = a["groups"] == 1
    y = F.conv2d(x[:, :cg] if dense else x, w, bias, a["stride"], a["padding"], a["dilation"], 1 if dense else kb * b)
    if len(xs) > 2:
        y = apply_act(a["act"], y)
    return [to_blocked(y, b)]


def _conv_flops(i: list, o: list, a: Attrs) -> int:
    return 2 * numel(o[0]) * i[1][1] * i[1][2] * i[1][3]


register_op(
    OpDef(
        "to_blocked",
        Group.LAYOUT,
        1,
        (_BLOCK,),
        ToBlocked(),
        lambda xs, a: [to_blocked(xs[0], a["block"])],
        doc="NCHW -> NCHWc: [N, C, H, W] -> [N, ceil(C/block), H, W, block], zero lanes past C",
        # its own kernel (a transposing copy), so that a blocked conv reads its input in place: inlined into
        # a 1x1 conv's operand, a squeezenet fire's 16 -> 64 expand ran 1.1 ms instead of 0.09 + the copy
        fusion=FusionRole.OPAQUE,
    )
)
register_op(
    OpDef(
        "from_blocked",
        Group.LAYOUT,
        1,
        (AttrSpec("channels", AttrKind.INT),),
        FromBlocked(),
        lambda xs, a: [from_blocked(xs[0], a["channels"])],
        doc="NCHWc -> NCHW: [N, CB, H, W, b] -> [N, channels, H, W], the lanes past channels dropped",
        # its own kernel (tiles transposed in registers), so that its consumers read NCHW in place: inlined
        # into one, every load of it was a 16-lane gather (a global mean over 16 SE blocks of EfficientNet-B0
        # 297 us; a [1, 6, 112, 112, 16] copy 806 us gathered, 165 us by tiles)
        fusion=FusionRole.OPAQUE,
    )
)
register_op(
    OpDef(
        "blocked_weight",
        Group.LAYOUT,
        1,
        (_BLOCK,),
        BlockedWeight(),
        _weight_ref,
        doc="OIHW weights with the output channels blocked: [K, Cg, KH, KW] -> [ceil(K/block), Cg, KH, KW, block]",
        cost_class=CostClass.OP,
        fusion=FusionRole.OPAQUE,
    )
)
register_op(
    OpDef(
        "conv2d_blocked",
        Group.CONTRACTION,
        2,
        CONV_ATTRS,
        ConvBlocked(),
        _conv_ref,
        _conv_flops,
        doc="conv2d in NCHWc: [N, CB, H, W, b] x blocked_weight [KB, Cg, KH, KW, b] -> [N, KB, OH, OW, b]; "
        "groups 1 (dense) or depthwise",
        cost_class=CostClass.CONV,
        # no packed operand: a dense 1x1 one reads its input in place as the GEMM's A (pixels as rows), once
        # per output block, so an elementwise chain inlined there ran KB times (EfficientNet-B0's squeeze-and-
        # excitation scale inlined into blocked 1x1 convs: 24.5 ms of kernels instead of ~1); a window packs
        # an im2col panel, read once per tap
        packed_operand=None,
    )
)
register_op(
    OpDef(
        "conv2d_blocked_bias_act",
        Group.CONTRACTION,
        3,
        (*CONV_ATTRS, ACT_ATTR),
        ConvBlocked(bias=True),
        _conv_ref,
        lambda i, o, a: _conv_flops(i, o, a) + numel(o[0]) * (1 + act_flops(a["act"])),
        doc="act(conv2d_blocked(x, w) + b), bias [K] over the output channels (conv2d_bias_act's epilogue)",
        cost_class=CostClass.CONV,
        packed_operand=None,  # as conv2d_blocked's
        epilogue_of=("conv2d_blocked", (1, 4)),  # channel k is block k // kb, lane k % kb
    )
)


def _pooled(pool: str):
    def ref(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
        y = OPS[pool].ref([from_blocked(xs[0])], a)[0]
        return [to_blocked(y, xs[0].shape[4])]

    return ref


for _pool in ("maxpool2d", "avgpool2d"):
    _d = OPS[_pool]
    register_op(
        OpDef(
            f"{_pool}_blocked",
            Group.POOLING,
            1,
            _d.attrs,
            Pool2d(blocked=True),
            _pooled(_pool),
            _d.flops,
            doc=f"{_pool} in NCHWc: [N, CB, H, W, b] -> [N, CB, OH, OW, b], every lane pooled on its own",
        )
    )
