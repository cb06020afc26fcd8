"""Winograd F(4x4, 3x3): a 3x3 stride-1 convolution as transforms around one batched matmul.

For one input channel, a 6x6 input tile ``d`` and a 3x3 kernel ``g`` give the 4x4 output tile
``Y = AT [(G g GT) * (BT d B)] A`` (``*`` elementwise).  Summing over channels turns the
elementwise product into a matmul per tile position (Lavin and Gray, "Fast Algorithms for
Convolutional Neural Networks", 2016), so a convolution becomes

    winograd_output(matmul(winograd_input(x, padding), winograd_weight(w)), out=(OH, OW))

with 36 GEMMs [N*T, C] @ [C, K]: 36 multiplies per 4x4 output tile and (input, output) channel
pair where direct convolution does 16 * 9 = 144, 4x fewer in the GEMM part.  The matrices are the standard ones
for interpolation points 0, 1, -1, 2, -2 and infinity (derivable as a Toom-Cook construction):
``BT`` (6x6), ``G`` (6x3) and ``AT`` (4x6) below.  ``rules/winograd.rules`` writes the rewrite,
``lower/ops_to_loops/winograd.py`` the transforms' kernels; ``winograd_weight`` depends only on the
weights, so it is folded at compile time and extraction prices it at zero.

The references compute the transforms in float64 and return the input's dtype: in float32 the
transforms' rounding (coefficients up to 8 and 25 in products) shows as ~1e-6 relative noise,
which the compiled float32 kernels have and the graph verifier's tolerance accepts.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from rewrite.ir.ops.elementwise import ACTS, act_flops, apply_act
from rewrite.ir.ops.registry import AttrKind, AttrSpec, CostClass, FusionRole, Group, OpDef, register_op
from rewrite.ir.shapes import Attrs, Shape, WinogradInput, WinogradOutput, WinogradWeight, numel
from rewrite.ir.shapes.winograd import ALPHA, POSITIONS, TILE

Matrix = tuple[tuple[float, ...], ...]

BT: Matrix = (
    (4.0, 0.0, -5.0, 0.0, 1.0, 0.0),
    (0.0, -4.0, -4.0, 1.0, 1.0, 0.0),
    (0.0, 4.0, -4.0, -1.0, 1.0, 0.0),
    (0.0, -2.0, -1.0, 2.0, 1.0, 0.0),
    (0.0, 2.0, -1.0, -2.0, 1.0, 0.0),
    (0.0, 4.0, 0.0, -5.0, 0.0, 1.0),
)
G: Matrix = (
    (1 / 4, 0.0, 0.0),
    (-1 / 6, -1 / 6, -1 / 6),
    (-1 / 6, 1 / 6, -1 / 6),
    (1 / 24, 1 / 12, 1 / 6),
    (1 / 24, -1 / 12, 1 / 6),
    (0.0, 0.0, 1.0),
)
AT: Matrix = (
    (1.0, 1.0, 1.0, 1.0, 1.0, 0.0),
    (0.0, 1.0, -1.0, 2.0, -2.0, 0.0),
    (0.0, 1.0, 1.0, 4.0, 4.0, 0.0),
    (0.0, 1.0, -1.0, 8.0, -8.0, 1.0),
)


def _nnz(m: Matrix) -> list[int]:
    return [sum(1 for v in row if v != 0.0) for row in m]


# multiply-adds per tile of the 2-d transforms as the kernels compute them, ``L d R^T`` as
# sum_i L[a, i] * (sum_j R[b, j] * d[i, j]) with each inner sum computed once per (i, b) and zeros
# skipped: 6 * 22 + 6 * 22 = 264 for the input (BT both sides), 6 * 18 + 4 * 18 = 180 for the output
INPUT_MACS = ALPHA * sum(_nnz(BT)) + ALPHA * sum(_nnz(BT))
OUTPUT_MACS = ALPHA * sum(_nnz(AT)) + TILE * sum(_nnz(AT))


def _t(m: Matrix) -> torch.Tensor:
    return torch.tensor(m, dtype=torch.float64)


def _sandwich(left: Matrix, d: torch.Tensor, right: Matrix) -> torch.Tensor:
    """``left @ d @ right^T`` over d's last two axes as the kernels compute it: ``t[i, b] = sum_j right[b, j]
    d[i, j]``, then ``sum_i left[a, i] t[i, b]``, zero coefficients skipped.  A skipped zero times an
    infinite or NaN input adds nothing, where a matrix product would make it NaN: so a NaN or inf spreads to
    the outputs whose nonzero coefficients reach it, as in the kernels, not over the whole tile."""

    def apply(m: Matrix, x: torch.Tensor) -> torch.Tensor:  # contracts x's last axis with m's rows
        cols = []
        for row in m:
            acc = torch.zeros_like(x[..., 0])
            for j, c in enumerate(row):
                if c != 0.0:
                    acc = acc + c * x[..., j]
            cols.append(acc)
        return torch.stack(cols, dim=-1)

    t = apply(right, d)  # [..., i, b]
    return apply(left, t.transpose(-1, -2)).transpose(-1, -2)  # [..., a, b]


def out_size(h: int, w: int, padding: tuple[int, int]) -> tuple[int, int]:
    """Output size of a 3x3 stride-1 convolution."""
    return h + 2 * padding[0] - 2, w + 2 * padding[1] - 2


def _weight_ref(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    w = xs[0]
    g = _t(G)
    u = torch.einsum("ai,kcij,bj->abck", g, w.double(), g)
    return [u.reshape(POSITIONS, w.shape[1], w.shape[0]).to(w.dtype)]


def _input_ref(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    x = xs[0]
    n, c, h, w = x.shape
    ph, pw = a["padding"]
    oh, ow = out_size(h, w, (ph, pw))
    th, tw = -(-oh // TILE), -(-ow // TILE)
    # zero padding: ph / pw before, up to the last tile's 6x6 window after
    xp = F.pad(x.double(), (pw, TILE * tw + 2 - w - pw, ph, TILE * th + 2 - h - ph))
    d = xp.unfold(2, ALPHA, TILE).unfold(3, ALPHA, TILE)  # [N, C, TH, TW, 6, 6]
    v = _sandwich(BT, d, BT).permute(4, 5, 0, 2, 3, 1)  # [6, 6, N, TH, TW, C]
    return [v.reshape(POSITIONS, n * th * tw, c).to(x.dtype)]


def _input_t_ref(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    return [_input_ref(xs, a)[0].transpose(1, 2).contiguous()]


def _output_ref(xs: list[torch.Tensor], a: Attrs) -> list[torch.Tensor]:
    m = xs[0]
    oh, ow = a["out"]
    th, tw = -(-oh // TILE), -(-ow // TILE)
    p, k = m.shape[1], m.shape[2]
    mm = m.double().reshape(ALPHA, ALPHA, p // (th * tw), th, tw, k).permute(2, 5, 3, 4, 0, 1)  # [N, K, TH, TW, 6, 6]
    y = _sandwich(AT, mm, AT).permute(0, 1, 2, 4, 3, 5).reshape(p // (th * tw), k, th * TILE, tw * TILE)
    y = y[:, :, :oh, :ow]
    if len(xs) > 1:
        y = y + xs[1].double().reshape(1, k, 1, 1)
        y = apply_act(a["act"], y)
    return [y.to(m.dtype).contiguous()]


def _input_flops(i: list[Shape], o: list[Shape], a: Attrs) -> int:
    return 2 * INPUT_MACS * o[0][1] * o[0][2]  # per tile and channel


def _output_flops(i: list[Shape], o: list[Shape], a: Attrs) -> int:
    tiles_k = i[0][1] * i[0][2]
    extra = numel(o[0]) * (1 + act_flops(a["act"])) if len(i) > 1 else 0
    return 2 * OUTPUT_MACS * tiles_k + extra


register_op(
    OpDef(
        "winograd_weight",
        Group.LAYOUT,
        1,
        (),
        WinogradWeight(),
        _weight_ref,
        lambda i, o, a: 2 * (ALPHA * 9 + ALPHA * ALPHA * 3) * i[0][0] * i[0][1],
        doc="Winograd F(4x4, 3x3) weight transform G g G^T: [K, C, 3, 3] -> [36, C, K]",
        cost_class=CostClass.OP,
        fusion=FusionRole.OPAQUE,
    )
)
register_op(
    OpDef(
        "winograd_input",
        Group.LAYOUT,
        1,
        (AttrSpec("padding", AttrKind.INTS, (0, 0)),),
        WinogradInput(),
        _input_ref,
        _input_flops,
        doc="Winograd F(4x4, 3x3) input transform B^T d B of every 6x6 tile (zero outside the padded "
        "input): [N, C, H, W] -> [36, N*T, C]",
        cost_class=CostClass.OP,
        fusion=FusionRole.OPAQUE,
    )
)
register_op(
    OpDef(
        "winograd_input_t",
        Group.LAYOUT,
        1,
        (AttrSpec("padding", AttrKind.INTS, (0, 0)),),
        WinogradInput(tiles_inner=True),
        _input_t_ref,
        _input_flops,
        doc="winograd_input with the tiles innermost: [N, C, H, W] -> [36, C, N*T] (the GEMM, matmul_at, reads "
        "it as a column-major A; the transform runs along the tiles of a row, every tap a unit-stride load)",
        cost_class=CostClass.OP,
        fusion=FusionRole.OPAQUE,
    )
)
_OUT = AttrSpec("out", AttrKind.INTS)
register_op(
    OpDef(
        "winograd_output",
        Group.LAYOUT,
        1,
        (_OUT,),
        WinogradOutput(),
        _output_ref,
        _output_flops,
        doc="Winograd F(4x4, 3x3) output transform A^T m A of every tile, cropped to out = (OH, OW): "
        "[36, N*T, K] -> [N, K, OH, OW]",
        cost_class=CostClass.OP,
        fusion=FusionRole.OPAQUE,
    )
)
register_op(
    OpDef(
        "winograd_output_bias_act",
        Group.LAYOUT,
        2,
        (_OUT, AttrSpec("act", AttrKind.STR, "none", choices=tuple(ACTS))),
        WinogradOutput(bias=True),
        _output_ref,
        _output_flops,
        doc="act(winograd_output(m) + b), bias [K] along the channel axis (conv2d_bias_act's epilogue)",
        cost_class=CostClass.OP,
        fusion=FusionRole.OPAQUE,
        epilogue_of=("winograd_output", (1,)),
    )
)
