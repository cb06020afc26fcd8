"""Convolutions whose output plane is smaller than a vector (a squeeze-and-excitation block's 1x1 convolutions
over one pixel, a classifier written as a convolution) as ``im2col(x) @ W^T`` (``conv_pixel_rows``): output
channels vectorized, the weight packed ``[k, j]`` at compile time.  Against torch.nn.functional.conv2d with
padding, stride, dilation, groups, batch > 1 and fused epilogues, on 1 and 2 threads."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from lower import compile_graph, parse_target
from lower.ops_to_loops.contraction import conv_pixel_rows
from rewrite.ir.builder import GraphBuilder
from rewrite.verification.numeric import normwise_rel_err

# (N, C, H, W), (OC, C/g, KH, KW), stride, padding, dilation, groups
CASES = [
    ((1, 96, 1, 1), (24, 96, 1, 1), (1, 1), (0, 0), (1, 1), 1),  # SE reduce: one pixel
    ((2, 20, 1, 1), (80, 20, 1, 1), (1, 1), (0, 0), (1, 1), 1),  # SE expand, two images
    ((1, 16, 7, 7), (40, 16, 7, 7), (1, 1), (0, 0), (1, 1), 1),  # a 7x7 "fully connected" convolution
    ((1, 12, 5, 6), (34, 12, 3, 3), (2, 2), (1, 1), (1, 1), 1),  # 3x3 output pixels, padded, strided
    ((1, 8, 4, 4), (64, 4, 3, 3), (1, 1), (0, 2), (1, 2), 2),  # two groups of 32, dilated, column padding
]


def _graph(xs, w, bias, conv, out_shape):
    """conv -> sigmoid (fused) -> times another input: an SE block's gate."""
    b = GraphBuilder("pixel_rows")
    y = b.conv2d_bias_act(b.input("x", xs), b.weight("w", w), b.weight("b", bias), act="sigmoid", **conv)
    return b.build([b.mul(y, b.input("s", out_shape))])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("xs,ws,stride,pad,dil,groups", CASES)
def test_pixel_rows_conv_matches_torch(xs, ws, stride, pad, dil, groups, threads):
    gen = torch.Generator().manual_seed(11)
    w, bias = torch.randn(ws, generator=gen) * 0.2, torch.randn(ws[0], generator=gen)
    x = torch.randn(xs, generator=gen)
    conv = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
    ref = F.conv2d(x, w, bias, **conv)
    assert conv_pixel_rows(ws[0] // groups, ref.shape[2] * ref.shape[3])
    s = torch.randn(ref.shape, generator=gen)
    cg = compile_graph(_graph(xs, w, bias, conv, tuple(ref.shape)), target=parse_target("llvm", threads=threads))
    got = cg({"x": x, "s": s})[0]
    assert normwise_rel_err(got, torch.sigmoid(ref) * s) < 1e-5


def test_pixel_rows_vectorize_output_channels_over_a_packed_weight():
    """The weight is read as a [k, j] copy packed at compile time (unit stride along the vectorized output
    channels), not gathered at the stride of a row of ``w``."""
    gen = torch.Generator().manual_seed(2)
    w, bias = torch.randn(48, 1152, 1, 1, generator=gen) * 0.05, torch.randn(48, generator=gen)
    b = GraphBuilder("se")
    y = b.conv2d_bias_act(b.input("x", (1, 1152, 1, 1)), b.weight("w", w), b.weight("b", bias), act="sigmoid")
    cg = compile_graph(b.build([y]), target=parse_target("llvm", threads=1))
    steps = [str(st) for st in cg.built[0].schedule.steps]
    assert any(st.startswith("pack(") and "_packed" in st for st in steps), steps
    x = torch.randn(1, 1152, 1, 1, generator=gen)
    assert normwise_rel_err(cg({"x": x})[0], torch.sigmoid(F.conv2d(x, w, bias))) < 1e-5


def test_only_planes_smaller_than_a_vector_with_a_vector_of_outputs():
    assert conv_pixel_rows(48, 1) and conv_pixel_rows(16, 15)
    assert not conv_pixel_rows(48, 16)  # a whole vector of pixels: the usual W @ im2col
    assert not conv_pixel_rows(8, 1)  # fewer outputs than a vector: no better either way
