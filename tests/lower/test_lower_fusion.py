"""The fusion plan: which nodes share a kernel, and that fused kernels compute the same thing."""

from __future__ import annotations

import pytest
import torch
from lower_testutil import check_graph

from lower import compile_graph
from lower.fusion import plan_fusion
from rewrite.ir.builder import GraphBuilder


def kernels_of(cg) -> list[str]:
    return [ln.split(": ", 1)[1] for ln in cg.plan.splitlines() if ln.strip().startswith("kernel ")]


def test_elementwise_chain_is_one_kernel():
    b = GraphBuilder("ew")
    a, c, d = (b.input(n, (100, 37)) for n in "acd")
    cg = check_graph(b.build([b.relu(b.add(b.mul(a, c), d))]), tol=1e-6)
    assert kernels_of(cg) == ["<mul%3 <add%4 relu%5"]
    assert "[fused elementwise]" in cg.plan


def test_shared_intermediate_is_materialised_once():
    b = GraphBuilder("shared")
    x = b.input("x", (64, 32))
    e = b.exp(x)  # two consumers: computed once, not inlined twice
    cg = check_graph(b.build([b.add(b.relu(e), b.sigmoid(e))]), tol=1e-6)
    ks = kernels_of(cg)
    assert "exp%1" in ks and any("add%4" in k and "<relu%2" in k and "<sigmoid%3" in k for k in ks)


def test_graph_output_is_not_inlined():
    b = GraphBuilder("out")
    x = b.input("x", (64, 32))
    t = b.tanh(x)
    cg = check_graph(b.build([t, b.smul(t, scalar=3.0)]), tol=1e-6)
    assert len(kernels_of(cg)) == 2


def test_epilogue_chain_stops_at_shape_change_and_second_use():
    b = GraphBuilder("epi")
    x = b.input("x", (40, 64))
    w = b.weight("w", torch.randn(64, 48) * 0.1)
    y = b.relu(b.add(b.matmul(x, w), b.weight("b", torch.randn(48))))
    z = b.softmax(y, axis=-1)  # not elementwise: own kernel
    cg = check_graph(b.build([z, b.sigmoid(z)]))
    assert kernels_of(cg)[0] == "matmul%2 >add%5 >relu%6"
    assert any(k.startswith("softmax") for k in kernels_of(cg))


def test_epilogue_chain_stops_where_the_dtype_changes():
    """The contraction accumulates in place in the last epilogue op's buffer, so a comparison or an int64
    cast ends the chain (fuzz seeds 62021, 62225: the float accumulator met an int64 buffer)."""
    b = GraphBuilder("epi_dtype")
    mm = b.matmul(b.input("x", (6, 8)), b.weight("w", torch.randn(8, 5)))
    ints = b.cast(b.gt(mm, b.weight("t", torch.zeros(1, 1))), dtype="int64")
    out = b.cast(b.mul(b.add(ints, ints), ints), dtype="float32")
    cg = check_graph(b.build([out]))
    assert kernels_of(cg)[0].startswith("matmul") and ">gt" not in kernels_of(cg)[0]


def test_prologues_into_reductions_pools_and_concat():
    b = GraphBuilder("pro")
    x = b.input("x", (2, 8, 9, 9))
    p = b.maxpool2d(b.relu(b.smul(x, scalar=2.0)), kernel=(3, 3), stride=(2, 2))
    s = b.softmax(b.exp(b.input("y", (5, 7))), axis=0)
    c = b.concat(b.sigmoid(b.input("u", (3, 4))), b.input("v", (3, 4)), axis=1)
    cg = check_graph(b.build([p, s, c]), tol=1e-5)
    ks = kernels_of(cg)
    assert "<smul%1 <relu%2 maxpool2d%3" in ks
    assert "<exp%5 softmax%6" in ks
    assert any("<sigmoid" in k and "concat" in k for k in ks)


def test_chains_stay_out_of_convolutions_that_read_their_input_once_per_tap():
    """An elementwise chain is inlined into a 1x1 convolution's panels and a direct depthwise convolution's
    padded copy (once per input element), but a 3x3 convolution over im2col panels would run it once per
    tap: there it keeps its own kernel."""
    b = GraphBuilder("taps")
    x, y = b.input("x", (1, 8, 10, 10)), b.input("y", (1, 8, 10, 10))

    def chain():
        return b.relu(b.add(x, y))

    def w(name, shape):
        return b.weight(name, torch.randn(*shape) * 0.2)

    dense = b.conv2d(chain(), w("w3", (16, 8, 3, 3)), padding=(1, 1))
    point = b.conv2d(chain(), w("w1", (16, 8, 1, 1)))
    depth = b.conv2d(chain(), w("wd", (8, 1, 3, 3)), padding=(1, 1), groups=8)
    ks = kernels_of(check_graph(b.build([dense, point, depth])))
    assert ks == ["<add%2 relu%3", "conv2d%5", "<add%6 <relu%7 conv2d%9", "<add%10 <relu%11 conv2d%13"]


def test_a_cheap_producer_of_several_1x1_convolutions_is_inlined_into_each():
    """A ReLU (one stored input) read by two 1x1 convolutions as their packed operand: each
    packs through its own copy and the ReLU runs no kernel.  Not when it reads two stored tensors (an add:
    each consumer would read both), not when a consumer reads it once per tap, not when it is an output."""
    b = GraphBuilder("shared_pro")
    x, y = b.input("x", (1, 8, 10, 10)), b.input("y", (1, 8, 10, 10))

    def w(name, shape):
        return b.weight(name, torch.randn(*shape) * 0.2)

    r = b.relu(b.smul(x, scalar=0.5))  # smul private to relu: inlined along with it
    outs = [b.conv2d(r, w("a", (16, 8, 1, 1))), b.conv2d(r, w("b", (4, 8, 1, 1)))]
    s = b.relu(b.add(x, y))  # two stored inputs: its own kernel
    outs += [b.conv2d(s, w("c", (16, 8, 1, 1))), b.conv2d(s, w("d", (16, 8, 1, 1)))]
    t = b.relu(y)  # a 3x3 consumer reads it once per tap: its own kernel
    outs += [b.conv2d(t, w("e", (16, 8, 1, 1))), b.conv2d(t, w("f", (16, 8, 3, 3)), padding=(1, 1))]
    u = b.sigmoid(x)  # a graph output: stored
    outs += [u, b.conv2d(u, w("g", (16, 8, 1, 1))), b.conv2d(u, w("h", (16, 8, 1, 1)))]
    v = b.relu(b.reshape(b.smul(b.input("z", (1, 8, 100)), scalar=2.0), shape=(1, 8, 10, 10)))
    outs += [b.conv2d(v, w("i", (16, 8, 1, 1))), b.conv2d(v, w("j", (16, 8, 1, 1)))]  # through a view: stored
    g = b.build(outs)
    ks = kernels_of(check_graph(g))
    own = [k for k in ks if k.split()[-1].startswith(("relu", "sigmoid"))]
    assert sorted(k.split()[-1].split("%")[0] for k in own) == ["relu", "relu", "relu", "sigmoid"]
    assert sum("<smul%" in k and "<relu%" in k for k in ks) == 2, ks  # the two 1x1 convolutions
    plan = plan_fusion(g, set())
    shared = [n.id for n in g if n.op == "relu" and sum(n.id in grp.nodes for grp in plan.groups) > 1]
    assert len(shared) == 1


def test_transposes_fold_into_matmul_operands():
    b = GraphBuilder("tt")
    q = b.input("q", (2, 16, 24))
    k = b.input("k", (2, 16, 24))
    att = b.matmul(b.transpose(q, perm=(0, 2, 1)), k)  # [2, 24, 24], A operand transposed
    att2 = b.matmul(q, b.transpose(k, perm=(0, 2, 1)))  # [2, 16, 16], B operand transposed
    cg = check_graph(b.build([att, att2]))
    assert kernels_of(cg) == ["<transpose%2 matmul%3", "<transpose%4 matmul%5"]


def test_batchnorm_folds_into_conv_epilogue_with_residual():
    b = GraphBuilder("cbr")
    x = b.input("x", (1, 8, 10, 10))
    y = b.conv2d(x, b.weight("w", torch.randn(8, 8, 3, 3) * 0.2), padding=(1, 1))
    y = b.batchnorm(y, *(b.weight(n, torch.rand(8) + 0.5) for n in "gbmv"))
    cg = check_graph(b.build([b.relu(b.add(y, x))]))
    assert kernels_of(cg) == ["conv2d%2 >batchnorm%7 >add%8 >relu%9"]


def test_plan_without_fusion_has_one_kernel_per_op():
    b = GraphBuilder("nf")
    x = b.input("x", (4, 4))
    g = b.build([b.relu(b.exp(b.reshape(x, shape=(16,))))])
    plan = plan_fusion(g, set(), fuse=False)
    assert [grp.nodes for grp in plan.groups] == [[2], [3]]
    assert plan.aliases == [1]
    assert "views: reshape%1" in str(plan)


def test_epilogue_reading_a_later_kernel_is_ordered_after_it():
    """ResNet's downsample: the block's last conv (earlier anchor) adds the shortcut conv's output."""
    b = GraphBuilder("order")
    x = b.input("x", (1, 8, 12, 12))
    main = b.conv2d(x, b.weight("wa", torch.randn(16, 8, 3, 3) * 0.2), padding=(1, 1))
    short = b.conv2d(x, b.weight("wb", torch.randn(16, 8, 1, 1) * 0.2))
    cg = check_graph(b.build([b.relu(b.add(main, short))]))
    ks = kernels_of(cg)
    assert ks == ["conv2d%4", "conv2d%2 >add%5 >relu%6"]


def test_fusion_through_a_reshape_view():
    b = GraphBuilder("view")
    x = b.input("x", (2, 6, 4, 8))
    heads = b.reshape(b.transpose(x, perm=(0, 2, 1, 3)), shape=(2, 4, 48))  # [2, 4, 48]
    y = b.matmul(heads, b.weight("w", torch.randn(1, 48, 16) * 0.1))
    z = b.sigmoid(b.reshape(b.exp(b.input("u", (6, 5))), shape=(30,)))
    cg = check_graph(b.build([y, z]), tol=1e-5)
    # the second reshape moves below the sigmoid (lower.reshapes.sink_reshapes): the same one kernel (the nodes keep
    # their ids), and the output is a view of the sigmoid's result (a new node), no copy
    assert kernels_of(cg) == ["<transpose%1 <reshape%2 matmul%4", "<exp%6 sigmoid%8"]
    assert "views: reshape%9" in cg.plan


@pytest.mark.cpu_form
def test_leading_add_is_folded_into_the_accumulator_init():
    b = GraphBuilder("bias")
    x = b.input("x", (40, 64))
    y = b.add(b.matmul(x, b.weight("w", torch.randn(64, 48) * 0.1)), b.weight("b", torch.randn(1, 48)))
    r = b.input("r", (40, 48))
    z = b.relu(b.add(r, b.matmul(b.input("u", (40, 64)), b.weight("v", torch.randn(64, 48) * 0.1))))
    cg = check_graph(b.build([y, z]))
    src0, src1 = cg.kernel_source(0), cg.kernel_source(1)
    # buffers are named by kind and first use (lower.fusion.BUFFER_KINDS): b is w1 here, r is t4 below
    assert "epilogue" not in src0 and "= w1[0, " in src0  # bias-only: no epilogue pass at all
    # the residual the init would start the sum with is added by the relu epilogue (FoldInit): no init pass
    assert "t4[" in src1.split("stage matmul0.epilogue")[-1] and ".init" not in src1


# ------------------------------------------------------------ concats and splits kept in place
def _convs(b, x, outs: tuple[int, ...]):
    return [b.conv2d(x, b.weight(f"w{i}", torch.randn(k, 8, 1, 1) * 0.3)) for i, k in enumerate(outs)]


def test_channel_concat_of_kernel_outputs_runs_no_kernel():
    """The convs write straight into their channel ranges of the concat (one image: contiguous stretches)."""
    b = GraphBuilder("cat")
    x = b.input("x", (1, 8, 6, 6))
    a, c = _convs(b, x, (4, 6))
    y = b.concat(b.relu(a), c, axis=1)
    cg = check_graph(b.build([b.sigmoid(y)]), tol=1e-6)
    assert cg.fusion.placed == [6] and "placed: concat%6" in cg.plan
    assert not any("concat" in k for k in kernels_of(cg))


def test_placed_concat_and_split_compose_and_reach_graph_outputs():
    """A concat that is a graph output (per-call buffer: its pieces are patched at an offset), a split of
    it whose pieces are views, nested concats, and a split of a graph input."""
    b = GraphBuilder("nest")
    x = b.input("x", (1, 8, 5, 5))
    a, c, d = _convs(b, x, (3, 5, 2))
    inner = b.concat(a, c, axis=1)
    outer = b.concat(inner, b.relu(d), axis=1)
    p, q = b.split(outer, axis=1, sizes=(4, 6))
    u, v = b.split(x, axis=1, sizes=(5, 3))
    z = b.add(b.slice(q, axis=1, start=0, end=3), b.relu(v))
    g = b.build([z, outer, b.exp(p), b.tanh(u)])
    cg = check_graph(g, tol=1e-6)
    ops = sorted(cg.graph.nodes[n].op for n in cg.fusion.placed)
    assert ops == ["concat", "concat", "split", "split"]
    assert not any("concat" in k or "split" in k for k in kernels_of(cg))
    for _ in range(2):  # the output buffer is recycled between calls: offsets are patched each time
        check_graph(g, inputs=g.random_inputs(1), tol=1e-6)


def test_concat_copies_when_its_pieces_cannot_be_placed():
    b = GraphBuilder("copy")
    x = b.input("x", (1, 8, 4, 4))
    x2 = b.input("x2", (2, 8, 4, 4))
    (a,) = _convs(b, x, (4,))
    outs = [
        b.concat(x, a, axis=1),  # a graph input is not written by a kernel
        b.concat(a, a, axis=1),  # one value twice
        b.concat(x2, x2, axis=1),  # two images: the pieces interleave
        b.concat(b.relu(a), b.exp(a), axis=2),  # along H: each channel's rows interleave
    ]
    cg = check_graph(b.build(outs), tol=1e-6)
    assert cg.fusion.placed == []
    assert sum("concat" in k for k in kernels_of(cg)) == 4


def test_piece_shared_with_a_graph_output_is_copied():
    b = GraphBuilder("outpiece")
    x = b.input("x", (1, 8, 4, 4))
    a, c = _convs(b, x, (4, 4))
    y = b.concat(a, c, axis=1)
    cg = check_graph(b.build([b.relu(y), b.reshape(a, shape=(4, 16))]), tol=1e-6)
    assert cg.fusion.placed == []


def test_int64_and_bool_pieces_are_offset_by_their_item_size():
    b = GraphBuilder("ids")
    i = b.input("i", (1, 3), dtype="int64")
    j = b.input("j", (1, 5), dtype="int64")
    ids = b.concat(b.identity(i), b.identity(j), axis=1)
    mask = b.concat(b.eq(i, i), b.lt(j, j), axis=1)
    ins = {"i": torch.arange(3).reshape(1, 3), "j": torch.arange(10, 15).reshape(1, 5)}
    g = b.build([b.identity(ids), b.logical_not(mask)])
    cg = compile_graph(g)
    assert len(cg.fusion.placed) == 2
    for got, ref in zip(cg(ins), g.run(ins), strict=True):
        assert got.dtype == ref.dtype and torch.equal(got, ref)


# --- reshapes sink below pointwise ops, so a batched linear layer's activation and residual join its epilogue --


def _linear3d(b, x, n: int, seed: int):
    """What importers write for a linear layer on (1, S, H): flatten, GEMM plus bias, and back to 3-d."""
    g = torch.Generator().manual_seed(seed)
    s, h = b.graph.shape_of(x)[1:]
    w = b.weight(f"w{seed}", torch.randn(h, n, generator=g) * 0.1)
    bias = b.reshape(b.weight(f"b{seed}", torch.randn(n, generator=g)), shape=(1, n))
    y = b.add(b.matmul(b.reshape(x, shape=(s, h)), w), bias)
    return b.reshape(y, shape=(1, s, n))


def test_a_batched_linear_layers_activation_and_residual_join_its_epilogue():
    from lower.reshapes import sink_reshapes

    b = GraphBuilder("ffn")
    x = b.input("x", (1, 37, 48))
    h = b.gelu_erf(_linear3d(b, x, 96, 1))
    y = b.add(x, _linear3d(b, h, 48, 2))  # the residual: the GEMM's value second
    g = b.build([y])
    sunk = sink_reshapes(g)
    assert sunk is not g and sunk.input_shapes() == g.input_shapes()
    assert all(g.nodes[n.id].op == n.op for n in sunk if n.op != "reshape")  # ids kept: plans name the same nodes
    cg = check_graph(g, tol=1e-5)
    ks = kernels_of(cg)
    assert len(ks) == 2 and "gelu_erf" in ks[0] and "add" in ks[1], cg.plan
    assert all("[contraction+epilogue]" in ln for ln in cg.plan.splitlines() if ln.strip().startswith("kernel "))


def test_a_sunk_value_read_elsewhere_is_reshaped_back_and_outputs_keep_their_shapes():
    b = GraphBuilder("both")
    x = b.input("x", (1, 10, 16))
    h = b.relu(_linear3d(b, x, 24, 3))
    y = b.sigmoid(h)  # the chain goes on, and h is also a graph output, read as (1, 10, 24)
    cg = check_graph(b.build([h, y, b.reduce_sum(h, axes=(2,))]), tol=1e-5)
    assert [tuple(t.shape) for t in cg(b.graph.random_inputs(0))] == [(1, 10, 24), (1, 10, 24), (1, 10)]


@pytest.mark.parametrize("other", [(2, 1, 1), (1, 3, 1), (2, 3, 8), (1, 1, 8)])
def test_operands_broadcast_along_a_reshaped_dimension_stay_correct(other):
    """(6, 8) viewed as (2, 3, 8): an operand that varies along 2 or 3 reads other elements in (6, 8) coordinates,
    so the op stays after the reshape; one that varies along 8 only (or the whole shape) moves with it."""
    from lower.reshapes import sink_reshapes

    b = GraphBuilder("bcast")
    x = b.input("x", (6, 12))
    w = b.weight("w", torch.randn(12, 8, generator=torch.Generator().manual_seed(4)))
    y = b.reshape(b.matmul(x, w), shape=(2, 3, 8))
    o = b.input("o", other)
    g = b.build([b.mul(y, o)])
    moved = sink_reshapes(g) is not g
    assert moved == (other in ((2, 3, 8), (1, 1, 8)))
    check_graph(g, tol=1e-5)


def test_batchnorm_and_other_axis_ops_are_not_moved_past():
    from lower.reshapes import sink_reshapes

    b = GraphBuilder("bn")
    x = b.input("x", (4, 6))
    w = b.weight("w", torch.randn(6, 6, generator=torch.Generator().manual_seed(5)))
    y = b.reshape(b.matmul(x, w), shape=(1, 4, 6))  # batchnorm's channels are axis 1: 4 here, not 6
    g = b.build([b.softmax(y, axis=-1)])
    assert sink_reshapes(g) is g
    check_graph(g, tol=1e-5)


def test_a_scaled_residual_epilogue_keeps_the_blocked_gemm():
    """``r + (x @ w) * gamma`` (ConvNeXt's layer scale and residual): computed at the GEMM's column blocks, the
    epilogue's store sits inside the product's stage; it is not the product's update, so the blocked GEMM
    recipe still applies (it was refused, and the kernel ran as a plain loop nest: ConvNeXt 1.19x slower)."""
    b = GraphBuilder("scaled")
    x, r = b.input("x", (50, 64)), b.input("r", (50, 32))
    gen = torch.Generator().manual_seed(6)
    y = b.mul(b.weight("gamma", torch.randn(1, 32, generator=gen)), b.matmul(x, b.weight("w", torch.randn(64, 32))))
    cg = check_graph(b.build([b.add(r, y)]), tol=1e-5)
    (bk,) = cg.built
    assert any(type(s).__name__ == "Tensorize" for s in bk.schedule.steps), bk.schedule.steps


# --- an epilogue DAG: pointwise ops reading the contraction's value several times, meeting in one op ----------


def _mm(b, m: int = 24, k: int = 40, n: int = 32, seed: int = 7):
    g = torch.Generator().manual_seed(seed)
    return b.matmul(b.input("x", (m, k)), b.weight("w", torch.randn(k, n, generator=g) * 0.2))


def test_gpt2s_tanh_gelu_reading_the_gemm_four_times_is_its_epilogue():
    b = GraphBuilder("gelu_tanh")
    y = b.add(_mm(b), b.weight("bias", torch.randn(1, 32)))
    inner = b.smul(b.add(y, b.smul(b.mul(b.mul(y, y), y), scalar=0.044715)), scalar=0.7978845608028654)
    out = b.mul(b.smul(y, scalar=0.5), b.add(b.tanh(inner), b.weight("one", torch.ones(1, 1))))
    cg = check_graph(b.build([out]), tol=1e-5)
    assert len(kernels_of(cg)) == 1 and "[contraction+epilogue]" in cg.plan, cg.plan


def test_a_value_read_by_the_dag_is_never_folded_with_the_bias():
    """``(mm + b) * mm``: the add would start the accumulator from the bias, but the mul reads the product
    without it, so the fold is not taken."""
    b = GraphBuilder("fold")
    mm = _mm(b)
    out = b.mul(b.add(mm, b.weight("bias", torch.randn(1, 32))), b.sigmoid(mm))
    cg = check_graph(b.build([out]), tol=1e-5)
    assert len(kernels_of(cg)) == 1, cg.plan


def test_two_ends_or_an_outside_reader_keep_the_dag_out_of_the_epilogue():
    b = GraphBuilder("two")
    mm = _mm(b)
    cg = check_graph(b.build([b.relu(mm), b.sigmoid(mm)]), tol=1e-5)  # two results: two kernels read it
    assert len(kernels_of(cg)) >= 2
    b = GraphBuilder("outside")
    mm = _mm(b)
    s = b.reduce_sum(mm, axes=(1,), keepdim=True)  # a reduction reads the product too
    cg = check_graph(b.build([b.mul(b.relu(mm), b.tanh(mm)), s]), tol=1e-5)
    assert len(kernels_of(cg)) >= 2


@pytest.mark.parametrize("threads", [1, 2])
def test_a_reduction_over_contiguous_axes_is_one_vectorized_loop(threads):
    """An SE block's squeeze, ``reduce_mean(silu(x))`` over h and w: the SiLU is computed in the reduction, whose
    two loops are one vectorized loop over the plane; a reduction over axes apart in memory (1 and 3) keeps its
    loops; both equal the reference."""
    b = GraphBuilder("squeeze")
    x = b.input("x", (2, 24, 7, 9))
    y = b.reduce_mean(b.silu(x), axes=(2, 3), keepdim=True)
    z = b.reduce_sum(b.relu(x), axes=(1, 3), keepdim=False)
    cg = check_graph(b.build([y, z]), tol=1e-6, target="llvm", threads=threads)
    steps = {bk.kernel.name: [str(s) for s in bk.schedule.steps] for bk in cg.built if bk.schedule is not None}
    mean = next(v for k, v in steps.items() if "reduce_mean" in k)
    assert "fuse('r2', 'r3')" in mean and "vectorize('r2.r3')" in mean, mean
    total = next(v for k, v in steps.items() if "reduce_sum" in k)
    assert not any(s.startswith("fuse('r") for s in total), total
    assert kernels_of(cg) == ["<silu%1 reduce_mean%2", "<relu%3 reduce_sum%4"]
