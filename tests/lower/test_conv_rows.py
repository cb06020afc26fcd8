"""Padded and strided convolutions as one GEMM per block of output rows over the block's im2col matrix
(``conv_block_rows``), or, where no block fits, per output row (``conv_row_form``), against
torch.nn.functional.conv2d: padding, unequal strides, dilation, groups, batch > 1, output widths that are not a
multiple of the micro-tile, fused bias / activation / residual epilogues, and 1 and 2 threads (the blocks and
rows are the parallel root)."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

from lower import compile_graph, parse_target
from lower.ops_to_loops.contraction import BLOCK_FORM_COLUMNS, block_units_share, conv_block_rows, conv_row_form
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
    ((1, 3, 12, 600), (8, 3, 3, 3), (2, 2), (1, 1), (1, 1), 1),  # rows of 300 columns: no block fits, a row each
]


def _conv(x_shape, w, bias, stride, pad, dil, groups, residual, im2col=False):
    """relu(conv + bias), or conv + residual: ``conv2d`` (and ``conv2d_bias_act``), or with ``im2col`` the block
    form's ``conv2d_im2col`` (and ``conv2d_im2col_bias_act``)."""
    b = GraphBuilder("rows")
    x = b.input("x", x_shape)
    conv = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
    op = "conv2d_im2col" if im2col else "conv2d"
    y = b.op(f"{op}_bias_act", x, b.weight("w", w), b.weight("b", bias), act="relu", **conv)
    if residual is None:
        return b.build([y])
    return b.build([b.add(b.op(op, x, b.weight("w2", w), **conv), b.input("r", residual))])


def _matches_torch(xs, ws, stride, pad, dil, groups, threads, seed, im2col=False) -> tuple[tuple[int, ...], str]:
    """The convolution with bias and ReLU, and with a residual add, compiled and checked against torch; the
    output shape and the first graph's kernel source."""
    gen = torch.Generator().manual_seed(seed)
    w, bias = torch.randn(ws, generator=gen) * 0.3, torch.randn(ws[0], generator=gen)
    x = torch.randn(xs, generator=gen)
    conv = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
    ref = F.conv2d(x, w, bias, **conv)
    target = parse_target("llvm", threads=threads)
    cg = compile_graph(_conv(xs, w, bias, stride, pad, dil, groups, None, im2col), target=target)
    assert normwise_rel_err(cg({"x": x})[0], torch.relu(ref)) < 1e-5
    r = torch.randn(ref.shape, generator=gen)
    cg_r = compile_graph(_conv(xs, w, bias, stride, pad, dil, groups, tuple(ref.shape), im2col), target=target)
    assert normwise_rel_err(cg_r({"x": x, "r": r})[0], F.conv2d(x, w, **conv) + r) < 1e-5
    return tuple(ref.shape), cg.kernel_source(0)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("xs,ws,stride,pad,dil,groups", CASES)
def test_row_form_conv_matches_torch(xs, ws, stride, pad, dil, groups, threads):
    shape, _ = _matches_torch(xs, ws, stride, pad, dil, groups, threads, seed=7)
    assert conv_row_form(xs, ws, shape, stride, pad) == (shape[3] >= 16)
    attrs = dict(stride=stride, padding=pad, groups=groups)
    assert (conv_block_rows(xs, ws, shape, attrs) == 0) == (shape[3] > BLOCK_FORM_COLUMNS)


@pytest.mark.parametrize("threads", [1, 2])
def test_row_form_reads_a_padded_phase_split_slice_per_row(threads):
    """Each output row's input rows are copied into a local slice (columns split by phase, zero outside the
    input) beside the row's GEMM, which packs its panels from it at unit stride: no bounds select and no
    stride-2 read in the panel copy; the rows are the parallel root."""
    gen = torch.Generator().manual_seed(3)
    w, bias = torch.randn(16, 3, 7, 7, generator=gen) * 0.3, torch.randn(16, generator=gen)
    x = torch.randn(1, 3, 20, 600, generator=gen)  # rows of 300 outputs: wider than a block
    cg = compile_graph(_conv(x.shape, w, bias, (2, 2), (3, 3), (1, 1), 1, None), target=parse_target("llvm", threads))
    src = cg.kernel_source(0)
    root = "parallel for n.g.oh in 0..10 {" if threads > 1 else "for n.g.oh in 0..10 {"
    assert root in src and "_xrow: f32[3, 7, 2, 303]" in src.split(root)[1]
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


# (N, C, H, W), (OC, C/g, KH, KW), stride, padding, dilation, groups
BLOCK_CASES = [
    ((1, 192, 14, 14), (192, 64, 3, 3), (1, 1), (1, 1), (1, 1), 3),  # RegNet's: three groups of 64, one block
    ((1, 128, 28, 28), (128, 32, 3, 3), (2, 2), (1, 1), (1, 1), 4),  # groups of 32, stride 2
    ((2, 32, 20, 18), (48, 32, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # dense, 48 outputs; batch 2
    ((1, 16, 30, 23), (48, 8, 5, 5), (2, 1), (2, 2), (2, 1), 2),  # dilated rows, unequal stride: 13 blocks of a row
    ((1, 64, 14, 14), (128, 64, 2, 2), (2, 2), (0, 0), (1, 1), 1),  # unpadded 2x2/2 (ConvNeXt's downsampling)
    ((1, 8, 9, 9), (16, 8, 3, 3), (1, 1), (1, 1), (1, 1), 1),  # 9 x 9: one block of 81 columns, tail panel
]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("xs,ws,stride,pad,dil,groups", BLOCK_CASES)
def test_block_form_conv_matches_torch(xs, ws, stride, pad, dil, groups, threads):
    """``conv2d_im2col`` takes the block form where a block fits; a dense ``conv2d`` never does (rules/im2col.rules
    offers the block form beside it, and extraction chooses), a grouped one does as conv2d_im2col would."""
    attrs = dict(stride=stride, padding=pad, groups=groups)
    shape, flat = _matches_torch(xs, ws, stride, pad, dil, groups, threads, seed=13)
    R = conv_block_rows(xs, ws, shape, attrs, threads)
    assert ("_col: f32[" in flat) == (groups > 1 and R > 0)
    shape, src = _matches_torch(xs, ws, stride, pad, dil, groups, threads, seed=13, im2col=True)
    assert conv_block_rows(xs, ws, shape, attrs) > 0
    if R == 0:  # one block, two threads: the flat form (block_units_share)
        assert threads > 1 and "_col: f32[" not in src
        return
    assert shape[2] % R == 0 and 16 <= R * shape[3] <= BLOCK_FORM_COLUMNS
    assert "_col: f32[" in src


@pytest.mark.parametrize("threads", [1, 2])
def test_block_form_packs_its_panels_from_the_blocks_im2col_matrix(threads):
    """Per (image, group, block of 14 rows): the padded slice, then the im2col matrix [64 * 9, 14 * 14] one
    contiguous row at a time, then the GEMM, whose panel copy reads that matrix: no bounds select, no divmod of
    the column into (oh, ow), no read of the input; the micro-kernel stores into the output directly."""
    gen = torch.Generator().manual_seed(17)
    w, bias = torch.randn(128, 64, 3, 3, generator=gen) * 0.1, torch.randn(128, generator=gen)
    x = torch.randn(1, 128, 14, 14, generator=gen)
    g = _conv(x.shape, w, bias, (1, 1), (1, 1), (1, 1), 2, None, im2col=True)
    cg = compile_graph(g, target=parse_target("llvm", threads))
    src = cg.kernel_source(0)
    root = "parallel for n.g.oh in 0..2 {" if threads > 1 else "for n.g.oh in 0..2 {"
    assert root in src and "_col: f32[576, 196]" in src.split(root)[1]
    panel = next(ln for ln in src.splitlines() if "_panel[" in ln and "= " in ln)
    x_buf = next(b.name for b in cg.built[0].kernel.params if b.shape == tuple(x.shape))
    assert "_col[" in panel and "select" not in panel and "//" not in panel and f"{x_buf}[" not in panel
    assert "gemmt" in src
    assert normwise_rel_err(cg({"x": x})[0], torch.relu(F.conv2d(x, w, bias, padding=1, groups=2))) < 1e-5


def test_block_form_for_padded_or_windowed_strided_convs_with_few_outputs_a_group():
    a = dict(stride=(1, 1), padding=(1, 1), groups=8)
    assert conv_block_rows((1, 512, 14, 14), (512, 64, 3, 3), (1, 512, 14, 14), a) == 14  # 196 columns
    assert conv_block_rows((1, 128, 56, 56), (128, 64, 3, 3), (1, 128, 56, 56), dict(a, groups=2)) == 4
    # 32 x 9 floats a column: 1 MiB of im2col past 910 columns; blocks of rows dividing 112, <= 256 columns
    assert conv_block_rows((1, 32, 112, 112), (32, 32, 3, 3), (1, 32, 112, 112), dict(a, groups=1)) == 2
    assert conv_block_rows((1, 64, 56, 56), (64, 64, 3, 3), (1, 64, 56, 56), dict(a, groups=1)) == 4
    # dense with more than 64 outputs, unstrided: blocks where asked (rules/im2col.rules does not offer it)
    assert conv_block_rows((1, 128, 28, 28), (128, 128, 3, 3), (1, 128, 28, 28), dict(a, groups=1)) == 7
    # strided: any output count
    s2 = dict(stride=(2, 2), padding=(1, 1), groups=1)
    assert conv_block_rows((1, 256, 28, 28), (256, 256, 3, 3), (1, 256, 14, 14), s2) == 7  # 9 KiB a column
    assert conv_block_rows((1, 512, 28, 28), (512, 512, 3, 3), (1, 512, 14, 14), s2) == 2  # 18 KiB: 56 at most
    # neither padded nor a strided window: the flat form's reads are contiguous (1x1/2: one strided tap)
    assert conv_block_rows((1, 64, 28, 28), (64, 64, 3, 3), (1, 64, 26, 26), dict(a, padding=(0, 0))) == 0
    assert conv_block_rows((1, 256, 56, 56), (512, 256, 1, 1), (1, 512, 28, 28), dict(s2, padding=(0, 0))) == 0
    # a block of fewer than 16 columns (3 rows of 5): none
    assert conv_block_rows((1, 8, 3, 5), (8, 8, 3, 3), (1, 8, 3, 5), dict(a, groups=1)) == 0


def test_block_form_on_several_threads_only_where_its_blocks_share_out():
    """The blocks (with images and groups) are the block form's parallel units: on 2 threads a plane that is one
    block (ViT's 16x16/16 patch embedding: 14 x 14 outputs) takes two blocks of 7 rows, a 7 x 7 one (no two
    blocks of 16 columns) the flat form, whose GEMM splits its own output; groups share out as they are."""
    patch = dict(stride=(16, 16), padding=(0, 0), groups=1)
    shapes = ((1, 3, 224, 224), (384, 3, 16, 16), (1, 384, 14, 14))
    assert conv_block_rows(*shapes, patch) == 14
    assert conv_block_rows(*shapes, patch, threads=2) == 7
    assert conv_block_rows(*shapes, patch, threads=3) == 0  # 7 blocks: two rounds and a third
    s2 = dict(stride=(2, 2), padding=(1, 1), groups=1)
    shapes = ((1, 512, 14, 14), (512, 512, 3, 3), (1, 512, 7, 7))
    assert conv_block_rows(*shapes, s2) == 7 and conv_block_rows(*shapes, s2, threads=2) == 0
    grouped = ((1, 512, 14, 14), (512, 64, 3, 3), (1, 512, 14, 14), dict(s2, stride=(1, 1), groups=8))
    assert conv_block_rows(*grouped, threads=2) == conv_block_rows(*grouped) == 14
    assert [block_units_share(u, 2) for u in (1, 2, 3, 7, 8)] == [False, True, False, False, True]


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
