"""Convolutions over few input channels with a stride (image stems) as one GEMM per output row
(``conv_row_form``) against torch.nn.functional.conv2d: padding, unequal strides, dilation, groups, batch > 1,
output widths that are not a multiple of the micro-tile, fused bias / activation / residual epilogues, and
1 and 2 threads (the row loop is the parallel root)."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

from lower import compile_graph, parse_target
from lower.ops_to_loops.contraction import conv_row_form
from rewrite.ir.builder import GraphBuilder
from rewrite.verification.numeric import normwise_rel_err

# (N, C, H, W), (OC, C/g, KH, KW), stride, padding, dilation, groups
CASES = [
    ((1, 3, 64, 70), (16, 3, 7, 7), (2, 2), (3, 3), (1, 1), 1),  # a 7x7/2 stem, 35 columns a row
    ((2, 1, 40, 37), (8, 1, 3, 3), (2, 1), (1, 0), (1, 1), 1),  # unequal stride, column padding only
    ((1, 4, 45, 50), (12, 2, 3, 3), (2, 2), (2, 2), (2, 2), 2),  # dilation 2, two groups of 6 outputs
    ((1, 3, 47, 47), (20, 3, 3, 3), (2, 2), (0, 0), (1, 1), 1),  # no padding, 23 columns
    ((1, 2, 30, 64), (10, 2, 5, 5), (3, 2), (4, 1), (1, 1), 1),  # padding 4 of 5 tap rows: rows outside whole
    ((1, 24, 36, 36), (40, 24, 3, 3), (2, 2), (1, 1), (1, 1), 1),  # many channels (small weights), 18 columns
    ((1, 32, 40, 34), (32, 8, 3, 3), (2, 2), (1, 1), (1, 1), 4),  # four groups of 8 channels, 17 columns
]


def _conv(x_shape, w, bias, stride, pad, dil, groups, residual):
    b = GraphBuilder("rows")
    x = b.input("x", x_shape)
    conv = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
    y = b.conv2d_bias_act(x, b.weight("w", w), b.weight("b", bias), act="relu", **conv)
    if residual is None:
        return b.build([y])
    return b.build([b.add(b.conv2d(x, b.weight("w2", w), **conv), b.input("r", residual))])


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("xs,ws,stride,pad,dil,groups", CASES)
def test_row_form_conv_matches_torch(xs, ws, stride, pad, dil, groups, threads):
    gen = torch.Generator().manual_seed(7)
    w, bias = torch.randn(ws, generator=gen) * 0.3, torch.randn(ws[0], generator=gen)
    x = torch.randn(xs, generator=gen)
    conv = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
    ref = F.conv2d(x, w, bias, **conv)
    assert conv_row_form(xs, ws, tuple(ref.shape), stride, pad) == (ref.shape[3] >= 16)
    target = parse_target("llvm", threads=threads)
    got = compile_graph(_conv(xs, w, bias, stride, pad, dil, groups, None), target=target)({"x": x})[0]
    assert normwise_rel_err(got, torch.relu(ref)) < 1e-5
    r = torch.randn(ref.shape, generator=gen)
    cg = compile_graph(_conv(xs, w, bias, stride, pad, dil, groups, tuple(ref.shape)), target=target)
    assert normwise_rel_err(cg({"x": x, "r": r})[0], F.conv2d(x, w, **conv) + r) < 1e-5


@pytest.mark.parametrize("threads", [1, 2])
def test_row_form_reads_a_padded_phase_split_slice_per_row(threads):
    """Each output row's input rows are copied into a local slice (columns split by phase, zero outside the
    input) beside the row's GEMM, which packs its panels from it at unit stride: no bounds select and no
    stride-2 read in the panel copy; the rows are the parallel root."""
    gen = torch.Generator().manual_seed(3)
    w, bias = torch.randn(16, 3, 7, 7, generator=gen) * 0.3, torch.randn(16, generator=gen)
    x = torch.randn(1, 3, 64, 70, generator=gen)
    cg = compile_graph(_conv(x.shape, w, bias, (2, 2), (3, 3), (1, 1), 1, None), target=parse_target("llvm", threads))
    src = cg.kernel_source(0)
    root = "parallel for n.g.oh in 0..32 {" if threads > 1 else "for n.g.oh in 0..32 {"
    assert root in src and "_xrow: f32[3, 7, 2, 38]" in src.split(root)[1]
    panel = next(ln for ln in src.splitlines() if "_panel[" in ln and "= " in ln)
    x_buf = next(b.name for b in cg.built[0].kernel.params if b.shape == tuple(x.shape))
    assert "_xrow[" in panel and "select" not in panel and f"{x_buf}[" not in panel
    assert "gemmt_" in src
    assert normwise_rel_err(cg({"x": x})[0], torch.relu(F.conv2d(x, w, bias, stride=2, padding=3))) < 1e-5


def test_a_row_slice_past_the_stack_bound_keeps_the_direct_read():
    """A row so wide that its slice would pass DIRECT_CONV_MAX_SLICE of stack reads the input directly."""
    gen = torch.Generator().manual_seed(5)
    w, bias = torch.randn(8, 4, 7, 7, generator=gen) * 0.3, torch.randn(8, generator=gen)
    x = torch.randn(1, 4, 9, 40000, generator=gen)
    cg = compile_graph(_conv(x.shape, w, bias, (2, 2), (3, 3), (1, 1), 1, None), target=parse_target("llvm", 1))
    assert "_xrow" not in cg.kernel_source(0)
    assert normwise_rel_err(cg({"x": x})[0], torch.relu(F.conv2d(x, w, bias, stride=2, padding=3))) < 1e-5


def test_row_form_only_for_strided_convs_over_few_channels_or_small_weights():
    assert conv_row_form((1, 3, 224, 224), (64, 3, 7, 7), (1, 64, 112, 112), (2, 2))
    assert not conv_row_form((1, 3, 224, 224), (64, 3, 3, 3), (1, 64, 224, 224), (1, 1))  # stride 1: flat
    assert conv_row_form((1, 128, 56, 56), (128, 128, 3, 3), (1, 128, 28, 28), (2, 2), (1, 1))  # 576 KiB weights
    assert not conv_row_form((1, 128, 56, 56), (128, 128, 3, 3), (1, 128, 27, 27), (2, 2))  # unpadded: flat
    assert not conv_row_form((1, 512, 40, 40), (512, 512, 3, 3), (1, 512, 20, 20), (2, 2), (1, 1))  # 9 MiB: flat
    assert not conv_row_form((1, 3, 20, 20), (8, 3, 3, 3), (1, 8, 10, 10), (2, 2))  # rows narrower than 16


# ---------------------------------------------------------------- B read in place (gemmr)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "xs,oc,in_place",
    [
        ((1, 96, 7, 7), 48, True),  # 49 columns: a 17-column tail panel, its last vector masked
        ((1, 19, 9, 13), 70, True),  # 117 columns, 70 rows
        ((2, 65, 5, 4), 32, True),  # batch 2, 20 columns: one panel narrower than a vector pair
        ((1, 16, 32, 32), 64, False),  # rows 4 KiB apart share L1 sets: packed
        ((1, 64, 28, 28), 256, False),  # more rows than PANEL_OUTER_MAX_M: B streams from L2, packed
    ],
)
def test_pointwise_conv_reads_its_input_in_place(xs, oc, in_place, threads):
    """A 1x1 convolution with few output channels multiplies straight out of the input's rows (the
    ``gemmr`` micro-kernel: B rows ``H*W`` apart, the tail vector's loads masked so the last row never reads
    past the end), with the residual epilogue; wider ones keep the packed panels."""
    gen = torch.Generator().manual_seed(11)
    w, bias = torch.randn(oc, xs[1], 1, 1, generator=gen) * 0.3, torch.randn(oc, generator=gen)
    x = torch.randn(xs, generator=gen)
    ref = F.conv2d(x, w, bias)
    b = GraphBuilder("pw")
    y = b.conv2d_bias_act(b.input("x", xs), b.weight("w", w), b.weight("b", bias), act="none")
    g = b.build([b.relu(b.add(y, b.input("r", tuple(ref.shape))))])
    cg = compile_graph(g, target=parse_target("llvm", threads=threads))
    assert (re.search(r"gemmt?rz?_", cg.kernel_source(0)) is not None) == in_place  # r: B in place
    r = torch.randn(ref.shape, generator=gen)
    assert normwise_rel_err(cg({"x": x, "r": r})[0], torch.relu(ref + r)) < 1e-5
