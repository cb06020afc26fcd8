"""The direct (grouped / depthwise) convolution path against torch.nn.functional.conv2d: strides, dilations,
unequal paddings, output rows not a multiple of the row block or of the vector row, batch > 1, groups
with 1, 2, 4, 8 and (strided) 16 output channels each, and fused bias + activation / residual epilogues."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from lower import compile_graph, parse_target
from rewrite.ir.builder import GraphBuilder
from rewrite.verification.numeric import normwise_rel_err

# (N, C, H, W), (OC, C/g, KH, KW), stride, padding, dilation, groups
CASES = [
    ((2, 6, 19, 23), (6, 1, 3, 3), (2, 2), (1, 1), (1, 1), 6),  # depthwise, stride 2, odd sizes
    ((1, 5, 17, 37), (5, 1, 5, 5), (1, 1), (2, 2), (2, 2), 5),  # dilation 2, row wider than a vector
    ((1, 4, 13, 29), (4, 1, 7, 7), (2, 2), (3, 3), (1, 1), 4),  # 7x7 stride 2
    ((2, 8, 11, 9), (16, 2, 3, 5), (1, 2), (0, 2), (2, 1), 4),  # Og 4, unequal stride / padding / dilation
    ((1, 6, 10, 21), (6, 2, 3, 3), (3, 1), (1, 0), (1, 2), 3),  # Og 2, stride 3 rows, no column padding
    ((1, 3, 6, 5), (3, 1, 3, 2), (1, 3), (2, 1), (1, 1), 3),  # column stride 3, wide padding, tiny rows
    ((1, 16, 12, 14), (16, 8, 3, 3), (1, 1), (1, 1), (1, 1), 2),  # Og 8 (ResNeXt's 32 groups of 8)
    ((1, 32, 15, 15), (32, 16, 3, 3), (2, 2), (1, 1), (1, 1), 2),  # Og 16, strided
    # planes whose padded slice passes L1: copied per block of output rows (window.block_slice)
    ((1, 2, 101, 99), (2, 1, 3, 3), (2, 2), (1, 1), (1, 1), 2),  # stride 2, odd sizes, rows past the last block
    ((1, 2, 90, 100), (2, 1, 5, 5), (1, 1), (4, 4), (2, 2), 2),  # dilation 2, padding past the window's reach
    ((2, 4, 64, 70), (4, 2, 3, 3), (1, 1), (1, 1), (1, 1), 2),  # two channels a group, batch 2
]
PER_BLOCK = CASES[-3:]


def test_direct_conv_is_taken_up_to_8_outputs_a_group_and_16_strided():
    from lower.ops_to_loops.contraction import direct_conv

    a = {"stride": (1, 1), "dilation": (1, 1), "groups": 32}
    assert direct_conv((256, 8, 3, 3), (1, 256, 28, 28), a)
    assert not direct_conv((512, 16, 3, 3), (1, 512, 14, 14), a)  # 16 a group at stride 1: the GEMM form
    assert direct_conv((512, 16, 3, 3), (1, 512, 14, 14), {**a, "stride": (2, 2)})
    assert not direct_conv((1024, 32, 3, 3), (1, 1024, 7, 7), {**a, "stride": (2, 2)})


def _weights(ws, seed):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(ws, generator=gen) * 0.3, torch.randn(ws[0], generator=gen)


@pytest.mark.parametrize("xs,ws,stride,pad,dil,groups", CASES)
def test_direct_conv_matches_torch(xs, ws, stride, pad, dil, groups):
    w, _ = _weights(ws, 1)
    b = GraphBuilder("dconv")
    g = b.build([b.conv2d(b.input("x", xs), b.weight("w", w), stride=stride, padding=pad, dilation=dil, groups=groups)])
    cg = compile_graph(g)
    src = cg.kernel_source(0)
    assert "_xpad" in src or "_xblk" in src  # the direct path, not the batch-GEMM one
    if (xs, ws, stride, pad, dil, groups) in PER_BLOCK:
        assert "_xblk" in src and "_xpad" not in src
    x = torch.randn(xs, generator=torch.Generator().manual_seed(2))
    ref = F.conv2d(x, w, stride=stride, padding=pad, dilation=dil, groups=groups)
    assert normwise_rel_err(cg({"x": x})[0], ref) < 1e-5


@pytest.mark.parametrize("xs,ws,stride,pad,dil,groups", CASES[:4])
def test_direct_conv_bias_relu_and_residual(xs, ws, stride, pad, dil, groups):
    w, bias = _weights(ws, 3)
    conv = dict(stride=stride, padding=pad, dilation=dil, groups=groups)
    b = GraphBuilder("dcba")
    x = b.input("x", xs)
    y = b.conv2d_bias_act(x, b.weight("w", w), b.weight("b", bias), act="relu", **conv)
    ref_y = torch.relu(F.conv2d(torch.zeros(xs), w, bias, **conv))
    r = b.input("r", tuple(ref_y.shape))
    g = b.build([b.add(b.conv2d(x, b.weight("w2", w), **conv), r), y])
    gen = torch.Generator().manual_seed(4)
    xt, rt = torch.randn(xs, generator=gen), torch.randn(ref_y.shape, generator=gen)
    got = compile_graph(g)({"x": xt, "r": rt})
    assert normwise_rel_err(got[0], F.conv2d(xt, w, **conv) + rt) < 1e-5
    assert normwise_rel_err(got[1], torch.relu(F.conv2d(xt, w, bias, **conv))) < 1e-5


def test_direct_conv_with_a_fused_prologue():
    """A sigmoid before a depthwise conv is inlined into the padded copy: padding stays 0, not sigmoid(0)."""
    w, _ = _weights((4, 1, 3, 3), 5)
    b = GraphBuilder("pre")
    g = b.build([b.conv2d(b.sigmoid(b.input("x", (1, 4, 9, 18))), b.weight("w", w), padding=(1, 1), groups=4)])
    x = torch.randn(1, 4, 9, 18)
    got = compile_graph(g)({"x": x})[0]
    assert normwise_rel_err(got, F.conv2d(torch.sigmoid(x), w, padding=1, groups=4)) < 1e-5


def test_direct_conv_folds_its_init_and_activation_into_the_rows():
    """No pass over the output before or after the update: the accumulator rows start from the bias
    (``FoldInitRows``) and the activation is applied as each row is stored (``FoldPostRows``): rows of 40, two
    vectors or more (``SHORT_ROW_VECTORS``)."""
    w, bias = _weights((16, 1, 3, 3), 6)
    b = GraphBuilder("planes")
    x = b.input("x", (1, 16, 14, 40))
    g = b.build([b.conv2d_bias_act(x, b.weight("w", w), b.weight("b", bias), padding=(1, 1), groups=16, act="relu")])
    cg = compile_graph(g)
    src = cg.kernel_source(0)
    # a kernel names its stages by op and place, its buffers by kind and first use: the bias is w1
    assert "stage conv2d_bias_act0.init" not in src and "stage conv2d_bias_act0.act" not in src, src
    assert "_acc[r_1, i_1, ow_1] = w1[" in src, src
    assert "= max(conv2d_bias_act0_acc[r_2, i_2, ow_2], 0.0)" in src, src
    assert [type(st).__name__ for st in cg.built[0].schedule.steps[:2]] == ["FoldInitRows", "FoldPostRows"]
    xt = torch.randn(1, 16, 14, 40)
    assert normwise_rel_err(cg({"x": xt})[0], torch.relu(F.conv2d(xt, w, bias, padding=1, groups=16))) < 1e-5


def test_direct_conv_keeps_any_epilogue_over_planes_when_rows_are_short():
    """Rows shorter than two vectors and not whole ones (MobileNetV2's 28-, 14- and 7-wide layers): even a
    ReLU is a pass over each plane (``SHORT_ROW_VECTORS``); the accumulator rows still start from the bias."""
    w, bias = _weights((16, 1, 3, 3), 6)
    b = GraphBuilder("short")
    x = b.input("x", (1, 16, 14, 14))
    g = b.build([b.conv2d_bias_act(x, b.weight("w", w), b.weight("b", bias), padding=(1, 1), groups=16, act="relu")])
    cg = compile_graph(g)
    steps = [type(st).__name__ for st in cg.built[0].schedule.steps]
    assert steps[0] == "FoldInitRows" and "FoldPostRows" not in steps, steps
    xt = torch.randn(1, 16, 14, 14)
    assert normwise_rel_err(cg({"x": xt})[0], torch.relu(F.conv2d(xt, w, bias, padding=1, groups=16))) < 1e-5


@pytest.mark.parametrize("width,folded", [(14, False), (16, True)])
def test_direct_conv_keeps_a_math_epilogue_over_planes_when_rows_leave_a_tail(width, folded):
    """A sigmoid (a math call) over rows that are not whole vectors is a pass over each plane, one scalar
    remainder per plane instead of one per row (``_row_tail_calls``); over whole-vector rows it is folded.
    The accumulator rows start from the bias either way."""
    w, bias = _weights((16, 1, 5, 5), 6)
    b = GraphBuilder("silu")
    x = b.input("x", (1, 16, width, width))
    g = b.build([b.conv2d_bias_act(x, b.weight("w", w), b.weight("b", bias), padding=(2, 2), groups=16, act="sigmoid")])
    cg = compile_graph(g)
    assert width % cg.target.vector_width != 0 or folded  # 14 is not whole vectors at any width
    steps = [type(st).__name__ for st in cg.built[0].schedule.steps]
    assert steps[0] == "FoldInitRows" and ("FoldPostRows" in steps) == folded, steps
    assert ("stage conv2d_bias_act0.act" in cg.kernel_source(0)) != folded
    xt = torch.randn(1, 16, width, width)
    assert normwise_rel_err(cg({"x": xt})[0], torch.sigmoid(F.conv2d(xt, w, bias, padding=2, groups=16))) < 1e-5


@pytest.mark.parametrize("n,og", [(2, 1), (1, 2), (2, 4)])
def test_direct_conv_runs_its_channels_in_parallel(n, og):
    """The (image, group) loop is the parallel root on 2 threads with the init and activation passes fused
    over whole planes: the race check sees each iteration write its own channels."""
    w, bias = _weights((32 * og, og, 3, 3), 8)
    b = GraphBuilder("par")
    x = b.input("x", (n, 32 * og, 28, 28))
    conv = dict(padding=(1, 1), groups=32)
    g = b.build([b.conv2d_bias_act(x, b.weight("w", w), b.weight("b", bias), act="relu", **conv)])
    cg = compile_graph(g, target=parse_target("llvm", threads=2))
    assert "parallel for" in cg.kernel_source(0)
    xt = torch.randn(n, 32 * og, 28, 28)
    assert normwise_rel_err(cg({"x": xt})[0], torch.relu(F.conv2d(xt, w, bias, **conv))) < 1e-5
