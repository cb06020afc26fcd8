"""Every registry op, compiled alone, against torch — odd and prime sizes, edge attributes."""

from __future__ import annotations

import pytest
import torch
from lower_testutil import check_graph
from test_lower_float_ops import TESTED as FLOAT_OPS_TESTED

from lower import compile_graph
from lower.ops_to_loops import check_coverage
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.ops import OPS, Group

UNARY = ["relu", "sigmoid", "tanh", "gelu", "exp", "identity"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "atan2", "power"]


def test_every_op_has_a_lowering():
    assert check_coverage() == []


@pytest.mark.parametrize("op", UNARY)
@pytest.mark.parametrize("shape", [(7,), (3, 13), (2, 5, 31)])
def test_unary(op, shape):
    b = GraphBuilder(op)
    g = b.build([getattr(b, op)(b.input("x", shape))])
    x = torch.randn(shape) * 4
    check_graph(g, {"x": x}, tol=1e-5)


def test_unary_extremes():
    """exp/sigmoid/tanh/gelu stay accurate at the ends of the range (overflow, underflow, tiny x)."""
    x = torch.tensor(
        [-200.0, -90.0, -88.0, -20.0, -1e-3, -1e-6, 0.0, 1e-6, 1e-3, 0.39, 0.41, 5.0, 20.0, 88.0, 89.0, 200.0]
    )
    for op in ("sigmoid", "tanh", "gelu"):
        b = GraphBuilder(op)
        g = b.build([getattr(b, op)(b.input("x", (16,)))])
        from lower import compile_graph

        got = compile_graph(g)({"x": x})[0]
        ref = g.run({"x": x})[0]
        torch.testing.assert_close(got, ref, rtol=2e-6, atol=1e-7)
    b = GraphBuilder("exp")
    g = b.build([b.exp(b.input("x", (16,)))])
    from lower import compile_graph

    got = compile_graph(g)({"x": x})[0]
    ref = torch.exp(x)
    assert torch.isinf(got[-2:]).all() and (got[:1] == 0).all()
    torch.testing.assert_close(got[1:-3], ref[1:-3], rtol=2e-6, atol=1e-44)


def test_nan_propagates_through_relu_and_max():
    b = GraphBuilder("nan")
    x = b.input("x", (1, 1, 2, 2))
    g = b.build([b.relu(x), b.maxpool2d(x, kernel=(2, 2), stride=(2, 2))])
    from lower import compile_graph

    t = torch.tensor([[[[1.0, float("nan")], [3.0, -2.0]]]])
    r, m = compile_graph(g)({"x": t})
    assert torch.isnan(r[0, 0, 0, 1]) and torch.isnan(m).all()


def test_smul():
    b = GraphBuilder()
    g = b.build([b.smul(b.input("x", (5, 7)), scalar=-2.5)])
    check_graph(g, tol=0)


@pytest.mark.parametrize("op", BINARY)
@pytest.mark.parametrize(
    "shapes", [((7, 13), (7, 13)), ((3, 1, 13), (1, 5, 13)), ((2, 3, 4, 5), (1, 3, 1, 1)), ((31,), (1,))]
)
def test_binary_broadcast(op, shapes):
    b = GraphBuilder(op)
    g = b.build([getattr(b, op)(b.input("x", shapes[0]), b.input("y", shapes[1]))])
    inputs = g.random_inputs(1)
    if op == "div":
        inputs["y"] = inputs["y"].abs() + 0.5
    if op == "power":  # a positive base: every power is defined
        inputs["x"] = inputs["x"].abs() + 0.1
    check_graph(g, inputs, tol=1e-6)


@pytest.mark.parametrize(
    "m,k,n", [(1, 1, 1), (7, 13, 31), (1, 64, 17), (33, 17, 5), (67, 129, 97), (8, 256, 32), (130, 300, 70)]
)
def test_matmul_2d(m, k, n):
    b = GraphBuilder("mm")
    g = b.build([b.matmul(b.input("a", (m, k)), b.input("b", (k, n)))])
    check_graph(g)


@pytest.mark.parametrize(
    "sa,sb", [((2, 7, 13), (2, 13, 31)), ((3, 1, 40, 33), (1, 4, 33, 65)), ((2, 65, 40), (1, 40, 64))]
)
def test_matmul_batched(sa, sb):
    b = GraphBuilder("bmm")
    g = b.build([b.matmul(b.input("a", sa), b.input("b", sb))])
    check_graph(g)


@pytest.mark.parametrize("sa,sb", [((13, 7), (13, 31)), ((2, 40, 65), (1, 40, 64)), ((36, 5, 1369), (36, 5, 8))])
def test_matmul_at(sa, sb):
    # A^T B: A [..., K, M] read column-major (Winograd's tiles-innermost input), batch broadcast
    b = GraphBuilder("mat")
    g = b.build([b.op("matmul_at", b.input("a", sa), b.weight("w", torch.randn(*sb)))])
    check_graph(g)


@pytest.mark.cpu_form
def test_matmul_weight_operand_is_prepacked():
    b = GraphBuilder("mmw")
    g = b.build([b.matmul(b.input("a", (70, 90)), b.weight("w", torch.randn(90, 100)))])
    cg = check_graph(g)
    assert cg.prepacked_bytes > 0


@pytest.mark.parametrize("xs", [(7,), (5, 13), (2, 3, 13)])
def test_linear(xs):
    b = GraphBuilder("linear")
    x = b.input("x", xs)
    g = b.build(
        [
            b.op(
                "linear",
                x,
                b.weight("w", torch.randn(31, 13) if xs[-1] == 13 else torch.randn(31, 7)),
                b.weight("b", torch.randn(31)),
            )
        ]
    )
    check_graph(g)


CONVS = [
    # (N, C, H, W), (O, C/g, KH, KW), stride, padding, dilation, groups
    ((1, 3, 13, 13), (8, 3, 3, 3), (1, 1), (1, 1), (1, 1), 1),
    ((2, 6, 13, 11), (4, 3, 3, 3), (2, 1), (1, 2), (1, 2), 2),
    ((1, 16, 7, 7), (32, 16, 1, 1), (1, 1), (0, 0), (1, 1), 1),
    ((2, 16, 9, 9), (8, 16, 1, 1), (2, 2), (0, 0), (1, 1), 1),
    ((1, 3, 31, 31), (16, 3, 7, 7), (2, 2), (3, 3), (1, 1), 1),
    ((1, 8, 15, 15), (8, 1, 3, 3), (1, 1), (1, 1), (1, 1), 8),  # depthwise
    ((1, 32, 14, 14), (32, 4, 3, 3), (2, 2), (1, 1), (1, 1), 8),  # grouped, strided
    ((1, 8, 17, 17), (16, 8, 3, 3), (1, 1), (2, 2), (2, 2), 1),  # dilated
    ((1, 5, 8, 13), (7, 5, 2, 5), (3, 2), (1, 2), (1, 1), 1),  # odd kernel and stride
]


@pytest.mark.parametrize("xs,ws,stride,pad,dil,groups", CONVS)
def test_conv2d(xs, ws, stride, pad, dil, groups):
    b = GraphBuilder("conv")
    x = b.input("x", xs)
    w = b.weight("w", torch.randn(ws) / (ws[1] * ws[2] * ws[3]) ** 0.5)
    g = b.build([b.conv2d(x, w, stride=stride, padding=pad, dilation=dil, groups=groups)])
    check_graph(g)


def test_conv2d_with_input_weight():
    b = GraphBuilder("convw")
    g = b.build([b.conv2d(b.input("x", (1, 4, 9, 9)), b.input("w", (6, 4, 3, 3)), padding=(1, 1))])
    check_graph(g)


POOLS = [
    ((1, 3, 13, 13), (3, 3), (2, 2), (1, 1), 0),
    ((2, 4, 13, 11), (3, 3), (2, 2), (1, 1), 1),
    ((1, 2, 7, 7), (2, 2), (2, 2), (0, 0), 1),
    ((1, 2, 31, 17), (3, 2), (3, 2), (1, 1), 1),
    ((1, 1, 5, 5), (5, 5), (1, 1), (2, 2), 0),
    ((1, 3, 12, 40), (3, 3), (3, 3), (0, 1), 1),  # column stride 3 through the phase-split rows
    ((1, 2, 9, 70), (3, 3), (1, 1), (1, 1), 0),  # the input's size: two flat passes per plane
    ((1, 2, 6, 9), (5, 3), (1, 1), (2, 1), 0),  # the same, a 5 x 3 window
    ((1, 2, 23, 35), (3, 3), (2, 2), (1, 1), 1),  # overlapping strided windows through a local row, ceil
    ((2, 3, 20, 33), (3, 5), (2, 2), (1, 2), 0),
    ((1, 2, 9, 12), (3, 3), (1, 1), (0, 0), 0),  # stride 1, smaller output: the slice
]


def test_pool_rows_form_only_where_it_pays_and_fits_the_stack():
    from lower.ops_to_loops.pool import pool_rows

    assert pool_rows((13, 13), (3, 3), (2, 2)) and pool_rows((28, 28), (3, 3), (1, 1))
    assert not pool_rows((56, 56), (3, 3), (1, 1))  # long rows: the copy costs more than it saves
    assert not pool_rows((27, 27), (3, 3), (2, 2))  # strided rows of 16-31 columns
    assert not pool_rows((14, 14), (2, 2), (2, 2))  # 4 taps
    assert not pool_rows((40000, 8), (3, 3), (1, 1))  # a 2.7 MiB slice: over the stack budget


@pytest.mark.cpu_form
@pytest.mark.parametrize("threads", [1, 2])
def test_pool_rows_form_is_taken_for_short_rows_and_matches(threads):
    # a 3x3/2 max pool with 13 outputs a row (SqueezeNet's last pool, smaller): per plane a padded,
    # phase-split slice and a row accumulated 16 wide; with 2 threads the planes are the parallel root
    b = GraphBuilder("pr")
    g = b.build([b.maxpool2d(b.input("x", (2, 24, 27, 27)), kernel=(3, 3), stride=(2, 2), padding=(1, 1))])
    cg = check_graph(g, tol=0, threads=threads)
    src = cg.kernel_source(0)
    assert "_xpad" in src and "_acc: f32[16]" in src
    if threads > 1:
        assert "parallel for" in src


@pytest.mark.cpu_form
@pytest.mark.parametrize("op,cip,hw", [("maxpool2d", 0, 56), ("avgpool2d", 0, 56), ("avgpool2d", 1, 27)])
@pytest.mark.parametrize("threads", [1, 2])
def test_pool_strided_form_reduces_window_rows_into_a_local_row_and_matches(op, cip, hw, threads):
    # 3x3/2 windows overlap along the row: per output row the three input rows reduced into a local row
    # padded with the identity, each output reading its three columns of it; an average times a table of
    # 1 / count (a short-rowed average too: 13 outputs a row)
    b = GraphBuilder("ps")
    attrs = {"count_include_pad": cip} if op == "avgpool2d" else {}
    g = b.build([b.op(op, b.input("x", (1, 6, hw, hw)), kernel=(3, 3), stride=(2, 2), padding=(1, 1), **attrs)])
    cg = check_graph(g, tol=0 if op == "maxpool2d" else 1e-6, threads=threads)
    src = cg.kernel_source(0)
    assert f"_vrow: f32[{hw + 1 if hw % 2 == 0 else hw + 2}]" in src and "_xpad" not in src, src
    assert ("_invcount" in src) == (op == "avgpool2d")


def test_pool_separable_form_only_for_stride_1_pools_keeping_the_size():
    from lower.ops_to_loops.pool import pool_separable

    assert pool_separable((17, 17), (17, 17), (3, 3), (1, 1)) and pool_separable((56, 56), (56, 56), (3, 3), (1, 1))
    assert not pool_separable((17, 17), (15, 15), (3, 3), (1, 1))  # not the input's size
    assert not pool_separable((17, 17), (9, 9), (3, 3), (2, 2))
    assert not pool_separable((4000, 40), (4000, 40), (3, 3), (1, 1))  # 625 KiB of rows: over the stack budget


@pytest.mark.cpu_form
@pytest.mark.parametrize("op,cip", [("maxpool2d", 0), ("avgpool2d", 0), ("avgpool2d", 1)])
@pytest.mark.parametrize("threads", [1, 2])
def test_pool_separable_form_runs_two_flat_passes_and_matches(op, cip, threads):
    # a 3x3/1 pool padded by 1 over 17 x 17 planes: a row pass over each plane's 289 pixels into a local
    # copy with an identity row above and below, then a column pass from it
    b = GraphBuilder("pf")
    attrs = {"count_include_pad": cip} if op == "avgpool2d" else {}
    g = b.build([b.op(op, b.input("x", (2, 20, 17, 17)), kernel=(3, 3), stride=(1, 1), padding=(1, 1), **attrs)])
    cg = check_graph(g, tol=0 if op == "maxpool2d" else 1e-6, threads=threads)
    src = cg.kernel_source(0)
    assert src.count("for o") == 2 and "0..289 {" in src and "_hrows: f32[19, 17]" in src, src
    if threads > 1:
        assert "parallel for" in src


@pytest.mark.parametrize("xs,k,s,p,ceil", POOLS)
def test_maxpool(xs, k, s, p, ceil):
    b = GraphBuilder("maxpool")
    g = b.build([b.maxpool2d(b.input("x", xs), kernel=k, stride=s, padding=p, ceil_mode=ceil)])
    check_graph(g, tol=0)


@pytest.mark.parametrize("xs,k,s,p,ceil", POOLS)
@pytest.mark.parametrize("cip", [0, 1])
def test_avgpool(xs, k, s, p, ceil, cip):
    b = GraphBuilder("avgpool")
    g = b.build([b.avgpool2d(b.input("x", xs), kernel=k, stride=s, padding=p, ceil_mode=ceil, count_include_pad=cip)])
    check_graph(g, tol=1e-6)


@pytest.mark.parametrize("xs", [(1, 3, 7, 7), (2, 31, 13, 1), (1, 64, 1, 1), (2, 5, 17, 5), (1, 9, 14, 14)])
def test_global_avgpool(xs):
    b = GraphBuilder("gap")
    g = b.build([b.global_avgpool(b.input("x", xs))])
    check_graph(g, tol=1e-6)


def test_global_avgpool_reduces_over_the_fused_plane():
    """The h and w loops are fused into one vectorized loop over the contiguous h*w plane."""
    b = GraphBuilder("gap")
    g = b.build([b.global_avgpool(b.input("x", (2, 6, 9, 5)))])
    src = compile_graph(g, threads=1).kernel_source(None)
    assert "vectorized for h.w in 0..45" in src


@pytest.mark.parametrize("xs", [(2, 5, 7, 3), (3, 13), (1, 31, 2)])
@pytest.mark.parametrize("const", [True, False])
def test_batchnorm(xs, const):
    b = GraphBuilder("bn")
    c = xs[1]
    gen = torch.Generator().manual_seed(3)
    params = [
        torch.rand(c, generator=gen) + 0.5,
        torch.randn(c, generator=gen),
        torch.randn(c, generator=gen),
        torch.rand(c, generator=gen) + 0.5,
    ]
    if const:
        ps = [b.weight(n, t) for n, t in zip("wbmv", params, strict=False)]
        inputs = None
    else:
        ps = [b.input(n, (c,)) for n in "wbmv"]
        inputs = {"x": torch.randn(xs), **dict(zip("wbmv", params, strict=False))}
    g = b.build([b.batchnorm(b.input("x", xs), *ps, eps=1e-3)])
    check_graph(g, inputs, tol=1e-5)


@pytest.mark.parametrize("xs", [(7,), (3, 13), (2, 5, 31), (4, 1024)])
def test_layernorm(xs):
    b = GraphBuilder("ln")
    d = xs[-1]
    g = b.build([b.layernorm(b.input("x", xs), b.weight("w", torch.randn(d)), b.weight("b", torch.randn(d)))])
    inputs = {"x": torch.randn(xs) * 3 + 5}
    check_graph(g, inputs, tol=1e-5)


@pytest.mark.parametrize("xs,axis", [((7,), 0), ((3, 13), -1), ((3, 13), 0), ((2, 5, 31), 1), ((4, 1024), 1)])
def test_softmax(xs, axis):
    b = GraphBuilder("softmax")
    g = b.build([b.softmax(b.input("x", xs), axis=axis)])
    check_graph(g, {"x": torch.randn(xs) * 10}, tol=1e-5)


@pytest.mark.parametrize("xs,perm", [((3, 5), (1, 0)), ((2, 3, 5, 7), (0, 2, 3, 1)), ((2, 3, 5), (2, 0, 1))])
def test_transpose(xs, perm):
    b = GraphBuilder("t")
    g = b.build([b.transpose(b.input("x", xs), perm=perm)])
    check_graph(g, tol=0)


def test_reshape_and_its_consumers():
    b = GraphBuilder("r")
    x = b.input("x", (3, 4, 5))
    r = b.reshape(x, shape=(12, 5))
    g = b.build([r, b.relu(r), b.reshape(b.relu(x), shape=(60,))])
    check_graph(g, tol=0)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(axis):
    b = GraphBuilder("cat")
    shapes = [(2, 3, 5), (2, 3, 5), (2, 3, 5)]
    shapes = [tuple(s[d] + (k if d == axis % 3 else 0) for d in range(3)) for k, s in enumerate(shapes)]
    g = b.build([b.concat(*[b.input(f"x{k}", s) for k, s in enumerate(shapes)], axis=axis)])
    check_graph(g, tol=0)


@pytest.mark.parametrize("axis,sizes", [(0, (1, 2)), (1, (2, 3, 2)), (-1, (4, 1))])
def test_split(axis, sizes):
    b = GraphBuilder("split")
    shape = [3, 7, 5]
    shape[axis] = sum(sizes)
    g = b.build(b.split(b.input("x", tuple(shape)), axis=axis, sizes=sizes))
    check_graph(g, tol=0)


@pytest.mark.parametrize("axis,start,end", [(0, 1, 3), (1, 0, 1), (-1, 2, 7)])
def test_slice(axis, start, end):
    b = GraphBuilder("slice")
    g = b.build([b.slice(b.input("x", (3, 5, 7)), axis=axis, start=start, end=end)])
    check_graph(g, tol=0)


def test_all_groups_covered_by_this_file():
    tested = (
        set(UNARY + BINARY)
        | {
            "rsqrt",
            "pad2d",
            "conv2d_bias_act",
            "matmul_bias_act",
            "smul",
            "matmul",
            "matmul_at",
            "linear",
            "conv2d",
            "maxpool2d",
            "avgpool2d",
            "global_avgpool",
            "batchnorm",
            "layernorm",
            "softmax",
            "transpose",
            "reshape",
            "concat",
            "split",
            "slice",
        }
        | FLOAT_OPS_TESTED
    )  # tests/lower/test_lower_float_ops.py
    # indexing, comparison and selection ops (int64/bool values) compile against torch in
    # tests/ir/test_ops_indexing.py::test_llvm_compile_matches_torch
    tested |= {"embedding", "index_select", "gather", "eq", "ne", "lt", "le", "gt", "ge", "where", "masked_fill"}
    tested |= {"logical_not", "logical_and", "logical_or", "cast"}
    # tests/ir/test_winograd.py compiles these against F.conv2d
    tested |= {"winograd_weight", "winograd_input", "winograd_input_t", "winograd_output", "winograd_output_bias_act"}
    # tests/ir/test_blocked.py compiles these against F.conv2d
    tested |= {"to_blocked", "from_blocked", "blocked_weight", "conv2d_blocked", "conv2d_blocked_bias_act"}
    tested |= {"maxpool2d_blocked", "avgpool2d_blocked"}
    tested |= {"conv2d_im2col", "conv2d_im2col_bias_act"}  # tests/lower/test_conv_rows.py: the block form
    tested |= {"lrn"}  # tests/lower/test_lower_lrn.py compiles it against its ONNX definition and onnxruntime
    tested |= {"matmul_integer", "conv2d_integer"}  # tests/lower/test_quantized_gemm.py: against the exact sums
    ops = {n for n, d in OPS.items() if d.group is not Group.SOURCE}
    assert ops <= tested, ops - tested


def _need_op(name):
    assert name in OPS, f"registry has no op {name!r}"


def test_rsqrt():
    _need_op("rsqrt")
    b = GraphBuilder("rsqrt")
    g = b.build([b.rsqrt(b.input("x", (5, 13)), eps=1e-3)])
    check_graph(g, {"x": torch.rand(5, 13) + 0.01}, tol=1e-5)


@pytest.mark.parametrize("xs,pads", [((1, 2, 5, 7), (1, 2, 0, 3)), ((3, 4, 4), (0, 0, 2, 2)), ((2, 3), (1, 1, 1, 1))])
def test_pad2d(xs, pads):
    _need_op("pad2d")
    b = GraphBuilder("pad")
    g = b.build([b.pad2d(b.input("x", xs), pads=pads)])
    check_graph(g, tol=0)


@pytest.mark.parametrize("act", ["none", "relu", "sigmoid", "tanh"])
@pytest.mark.parametrize(
    "xs,ws,stride,pad,groups",
    [((1, 8, 13, 13), (16, 8, 3, 3), (1, 1), (1, 1), 1), ((2, 8, 9, 9), (8, 2, 3, 3), (2, 2), (1, 1), 4)],
)
def test_conv2d_bias_act(act, xs, ws, stride, pad, groups):
    _need_op("conv2d_bias_act")
    b = GraphBuilder("cba")
    g = b.build(
        [
            b.conv2d_bias_act(
                b.input("x", xs),
                b.weight("w", torch.randn(ws) * 0.2),
                b.weight("b", torch.randn(ws[0])),
                stride=stride,
                padding=pad,
                groups=groups,
                act=act,
            )
        ]
    )
    check_graph(g)


@pytest.mark.parametrize("act", ["none", "relu", "tanh"])
@pytest.mark.parametrize("sa,sw", [((7, 13), (13, 31)), ((2, 70, 64), (1, 64, 96))])
def test_matmul_bias_act(act, sa, sw):
    _need_op("matmul_bias_act")
    b = GraphBuilder("mba")
    g = b.build(
        [
            b.matmul_bias_act(
                b.input("x", sa), b.weight("w", torch.randn(sw) * 0.2), b.weight("b", torch.randn(sw[-1])), act=act
            )
        ]
    )
    check_graph(g)


@pytest.mark.parametrize(
    "xs,ws,stride,pad,dil,groups",
    [
        ((1, 8, 15, 15), (8, 1, 3, 3), (1, 1), (1, 1), (1, 1), 8),
        ((2, 12, 11, 13), (8, 3, 5, 3), (2, 1), (2, 1), (1, 2), 4),
        ((1, 16, 9, 9), (16, 1, 7, 7), (1, 1), (3, 3), (1, 1), 16),
    ],
)
@pytest.mark.cpu_form
def test_grouped_conv_uses_the_direct_path(xs, ws, stride, pad, dil, groups):
    b = GraphBuilder("dw")
    g = b.build(
        [
            b.relu(
                b.conv2d(
                    b.input("x", xs),
                    b.weight("w", torch.randn(ws) * 0.3),
                    stride=stride,
                    padding=pad,
                    dilation=dil,
                    groups=groups,
                )
            )
        ]
    )
    cg = check_graph(g)
    src = cg.kernel_source(0)
    assert "_xpad" in src and "unrolled for" in src


def _random_convs(count: int, seed: int = 2024):
    import random

    r = random.Random(seed)
    out = []
    while len(out) < count:
        groups = r.choice([1, 1, 2, 3, 4])
        cg, og = r.randint(1, 6), r.choice([1, 2, 3, 5, 8, 9])
        k = (r.choice([1, 2, 3, 5]), r.choice([1, 3, 4]))
        s, d = (r.randint(1, 3), r.randint(1, 2)), (r.randint(1, 2), r.randint(1, 2))
        p = (r.randint(0, k[0] // 2 * d[0]), r.randint(0, k[1] // 2 * d[1]))
        h, w = r.randint(4, 23), r.randint(4, 23)
        if (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) < 0 or (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) < 0:
            continue
        out.append(((r.randint(1, 2), cg * groups, h, w), (og * groups, cg, *k), s, p, d, groups))
    return out


@pytest.mark.parametrize("xs,ws,stride,pad,dil,groups", _random_convs(10))
def test_conv2d_random(xs, ws, stride, pad, dil, groups):
    b = GraphBuilder("rconv")
    g = b.build(
        [
            b.conv2d(
                b.input("x", xs),
                b.weight("w", torch.randn(ws) * 0.3),
                stride=stride,
                padding=pad,
                dilation=dil,
                groups=groups,
            )
        ]
    )
    check_graph(g)


@pytest.mark.parametrize("seed", range(6))
def test_matmul_random(seed):
    import random

    r = random.Random(seed)
    m, k, n = r.randint(1, 150), r.randint(1, 300), r.randint(1, 150)
    batch = r.choice([(), (2,), (3, 1)])
    b = GraphBuilder("rmm")
    bs = tuple(1 if r.random() < 0.3 else d for d in batch)
    g = b.build([b.matmul(b.input("a", (*batch, m, k)), b.input("b", (*bs, k, n)))])
    check_graph(g)


@pytest.mark.parametrize("seed", range(4))
def test_pool_random(seed):
    import random

    r = random.Random(100 + seed)
    k = (r.randint(1, 4), r.randint(1, 4))
    s = (r.randint(1, 3), r.randint(1, 3))
    p = (r.randint(0, k[0] // 2), r.randint(0, k[1] // 2))
    xs = (1, r.randint(1, 5), r.randint(k[0] + 1, 19), r.randint(k[1] + 1, 19))
    b = GraphBuilder("rpool")
    x = b.input("x", xs)
    g = b.build(
        [
            b.maxpool2d(x, kernel=k, stride=s, padding=p, ceil_mode=seed % 2),
            b.avgpool2d(x, kernel=k, stride=s, padding=p, ceil_mode=seed % 2, count_include_pad=seed // 2),
        ]
    )
    check_graph(g, tol=1e-6)


def test_fused_float_math_keeps_nan_and_inf():
    """Fuzz seeds 27 and 1432: with ``reassoc`` on elementwise math, LLVM cancelled ``x - x`` inside a
    fused layernorm (NaN rows became finite) and ``(x+x+x) - (x+x)`` to ``x`` (NaN became inf)."""
    b = GraphBuilder("nan-cancel")
    x = b.input("x", (4, 8))
    ln = b.op("layernorm", b.sub(x, x), b.weight("w", torch.ones(8)), b.weight("c", torch.zeros(8)), eps=1e-5)
    three = b.add(b.add(x, x), x)
    g = b.build([ln, b.sub(three, b.add(x, x))])
    xs = torch.randn(4, 8)
    xs[1, 3], xs[2, 5] = float("nan"), float("inf")
    out_ln, out_sub = compile_graph(g)({"x": xs})
    ref_ln, ref_sub = g.run({"x": xs})
    assert torch.equal(out_ln.isnan(), ref_ln.isnan()) and bool(out_ln[1].isnan().all())
    assert torch.equal(out_sub.isnan(), ref_sub.isnan()) and bool(out_sub[2, 5].isnan())
