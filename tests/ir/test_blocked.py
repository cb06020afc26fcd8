"""The blocked channel layout NCHWc (rewrite/ir/ops/blocked.py, rules/blocked.rules,
lower/ops_to_loops/blocked.py): references and compiled kernels against F.conv2d on channel counts that
are not whole blocks, the rules, extraction by measured cost keeping a run of convolutions blocked, and
the ONNX export."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from lower import compile_graph, parse_target
from lower.target import GEMM_TILE
from rewrite.frontends.onnx.export import to_onnx
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import Graph
from rewrite.ir.ops import OPS
from rewrite.pipeline import optimize
from rewrite.rulelang.loader import load_rules
from rewrite.verification.rulecheck.check import check_rule
from tests.tiers import rotated

DENSE = str(Path(__file__).resolve().parents[2] / "rules" / "optional" / "blocked-dense.rules")  # opt-in

# (N, C, H, W, K, kernel, stride, padding, groups): partial blocks (20, 24 channels), batch 2, strides,
# padding; depthwise 3x3, 5x5/2 and 7x7/2; dense 1x1 over whole blocks (the segmented in-place GEMM)
CASES = [
    (1, 20, 7, 9, 24, 3, 1, 1, 1),
    (2, 32, 8, 8, 48, 1, 1, 0, 1),
    (1, 64, 14, 14, 32, 3, 2, 1, 1),
    (1, 5, 6, 5, 3, 1, 2, 0, 1),
    (1, 20, 7, 9, 20, 3, 1, 1, 20),
    (2, 32, 11, 13, 32, 5, 2, 2, 32),
    (1, 48, 15, 15, 48, 7, 2, 3, 48),
]


def _graph(case, act, wt, bias) -> Graph:
    n, c, h, w, k, _, s, p, g = case
    b = GraphBuilder("blk")
    xb = b.op("to_blocked", b.input("x", (n, c, h, w)), block=16)
    wb = b.op("blocked_weight", b.weight("w", wt), block=16)
    attrs = {"stride": (s, s), "padding": (p, p), "groups": g}
    if act is None:
        y = b.op("conv2d_blocked", xb, wb, **attrs)
    else:
        y = b.op("conv2d_blocked_bias_act", xb, wb, b.weight("b", bias), act=act, **attrs)
    return b.build([b.op("from_blocked", y, channels=k)])


def _data(case):
    n, c, h, w, k, kk, _, _, g = case
    gen = torch.Generator().manual_seed(sum(case))
    return (
        torch.randn(n, c, h, w, generator=gen),
        torch.randn(k, c // g, kk, kk, generator=gen),
        torch.randn(k, generator=gen),
    )


def _expected(case, x, wt, bias, act):
    _, _, _, _, _, _, s, p, g = case
    y = F.conv2d(x, wt, None if act is None else bias, s, p, 1, g)
    return y if act in (None, "none") else {"relu": torch.relu, "sigmoid": torch.sigmoid}[act](y)


ACTS = [None, "relu", "sigmoid"]


@pytest.mark.parametrize("case,act", rotated(CASES, ACTS))
def test_reference_and_compiled_match_conv2d(case, act):
    x, wt, bias = _data(case)
    graph = _graph(case, act, wt, bias)
    want = _expected(case, x, wt, bias, act)
    torch.testing.assert_close(graph.run({"x": x})[0], want, rtol=1e-4, atol=1e-4)
    got = compile_graph(graph, "llvm")({"x": x})[0]
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


# (N, C, H, W, kernel, stride, padding, dilation): the depthwise kernel's ring of padded rows when the window
# is dilated (span 5 from 3 taps), strides past the window's rows (3 over 3, 2 over 1: every row fresh) and
# padding wider than half the window (rows above and below that are all zero)
RING_CASES = [
    (1, 32, 9, 11, 3, 1, 2, 2),
    (2, 16, 13, 10, 3, 3, 1, 1),
    (1, 16, 6, 7, 3, 1, 3, 1),
    (1, 16, 4, 4, 1, 2, 0, 1),
]


@pytest.mark.parametrize("case", RING_CASES)
def test_depthwise_ring_of_padded_rows_matches_conv2d(case):
    n, c, h, w, k, s, p, d = case
    gen = torch.Generator().manual_seed(sum(case))
    x, wt, bias = torch.randn(n, c, h, w, generator=gen), torch.randn(c, 1, k, k, generator=gen), torch.randn(c)
    b = GraphBuilder("ring")
    xb = b.op("to_blocked", b.input("x", x.shape), block=16)
    wb = b.op("blocked_weight", b.weight("w", wt), block=16)
    attrs = {"stride": (s, s), "padding": (p, p), "dilation": (d, d), "groups": c, "act": "relu"}
    y = b.op("conv2d_blocked_bias_act", xb, wb, b.weight("b", bias), **attrs)
    got = compile_graph(b.build([b.op("from_blocked", y, channels=c)]), parse_target("llvm", threads=2))({"x": x})[0]
    torch.testing.assert_close(got, torch.relu(F.conv2d(x, wt, bias, s, p, d, c)), rtol=1e-5, atol=1e-5)


def test_shapes_and_refusals():
    assert OPS["to_blocked"].infer([(1, 20, 5, 6)], {"block": 16}) == [(1, 2, 5, 6, 16)]
    assert OPS["from_blocked"].infer([(1, 2, 5, 6, 16)], {"channels": 20}) == [(1, 20, 5, 6)]
    assert OPS["blocked_weight"].infer([(33, 8, 3, 3)], {"block": 16}) == [(3, 8, 3, 3, 16)]
    with pytest.raises(Exception, match="do not fill the last"):
        OPS["from_blocked"].infer([(1, 2, 5, 6, 16)], {"channels": 16})
    dw = {"stride": (1, 1), "padding": (0, 0), "dilation": (1, 1), "groups": 20}
    assert OPS["conv2d_blocked"].infer([(1, 2, 5, 6, 16), (2, 1, 3, 3, 16)], dw) == [(1, 2, 3, 4, 16)]
    with pytest.raises(Exception, match="only depthwise"):
        OPS["conv2d_blocked"].infer([(1, 2, 5, 6, 16), (2, 4, 3, 3, 16)], {**dw, "groups": 4})


def test_segmented_gemm_for_a_blocked_1x1_conv():
    """A 1x1 conv over whole blocks reads its blocked input in place: one micro-kernel call runs every input
    block as a segment of the reduction (accumulators kept), 32 output channels (two blocks) a tile."""
    case = (1, 64, 8, 8, 32, 1, 1, 0, 1)
    x, wt, bias = _data(case)
    b = GraphBuilder("blk1x1")  # the input already blocked (a blocked producer's output)
    wb = b.op("blocked_weight", b.weight("w", wt), block=16)
    y = b.op("conv2d_blocked_bias_act", b.input("xb", (1, 4, 8, 8, 16)), wb, b.weight("b", bias), act="relu")
    cg = compile_graph(b.build([y]), target=parse_target("llvm", threads=1))
    src = "\n".join(cg.kernel_source(k) for k in range(cg.kernels))
    assert "gemmsq_" in src, src
    xb = x.reshape(1, 4, 16, 8, 8).permute(0, 1, 3, 4, 2).contiguous()
    want = _expected(case, x, wt, bias, "relu").reshape(1, 2, 16, 8, 8).permute(0, 1, 3, 4, 2)
    torch.testing.assert_close(cg({"xb": xb})[0], want, rtol=1e-4, atol=1e-4)


def test_a_scale_into_a_dense_blocked_1x1_conv_runs_once():
    """A dense blocked 1x1 conv reads its input in place as the GEMM's A (pixels as rows), once per output
    block: an elementwise producer (a squeeze-and-excitation scale) is not inlined there, where it ran once
    per output block (EfficientNet-B0 with the dense family: 24.5 ms of kernels instead of ~1)."""
    x = torch.randn(1, 64, 8, 8)
    s = torch.rand(1, 64, 1, 1)
    wt, bias = torch.randn(48, 64, 1, 1), torch.randn(48)
    b = GraphBuilder("se1x1")
    xb = b.op("to_blocked", b.input("x", (1, 64, 8, 8)), block=16)
    sb = b.op("to_blocked", b.input("s", (1, 64, 1, 1)), block=16)
    wb = b.op("blocked_weight", b.weight("w", wt), block=16)
    y = b.op("conv2d_blocked_bias_act", b.op("mul", xb, sb), wb, b.weight("b", bias), act="relu")
    graph = b.build([b.op("from_blocked", y, channels=48)])
    cg = compile_graph(graph, target=parse_target("llvm", threads=1))
    for bk in cg.built:
        ops = {graph.nodes[n].op for n in bk.group.nodes}
        assert not ("mul" in ops and "conv2d_blocked_bias_act" in ops), ops
    want = torch.relu(F.conv2d(x * s, wt, bias))
    torch.testing.assert_close(cg({"x": x, "s": s})[0], want, rtol=1e-4, atol=1e-4)


# (N, C, H, W, block): partial last blocks (20 of 32, 12 of 16 lanes) and planes that are not whole tiles
# (63, 25 and 21 pixels), whole tiles, blocks of 8 and 4, a few channels (5 of 16: the gathering copy), and a
# plane under one tile (9 pixels: copies)
CONVERSIONS = [
    (2, 20, 7, 9, 16),
    (1, 32, 4, 8, 16),
    (1, 12, 5, 5, 8),
    (2, 6, 3, 7, 4),
    (1, 5, 6, 6, 16),
    (2, 40, 3, 3, 16),
]


@pytest.mark.parametrize("shape", CONVERSIONS)
@pytest.mark.parametrize("threads", [1, 2])
def test_conversions_run_by_tiles_transposed_in_registers(shape, threads):
    """``to_blocked`` / ``from_blocked`` read each tile into a local copy (where an inlined producer computes)
    and call the backend's in-register transpose (``lower/llvm/transpose.py``); the lanes past the channels are
    zero, the pixels past a plane's last tile are neither read nor stored.  A block of at most a quarter real
    channels stays a gathering copy."""
    n, c, h, w, blk = shape
    x = torch.randn(n, c, h, w)
    b = GraphBuilder("conv")
    xb = b.op("to_blocked", b.op("relu", b.input("x", x.shape)), block=blk)
    y = b.op("tanh", b.op("from_blocked", b.op("sigmoid", xb), channels=c))
    graph = b.build([y, xb])
    cg = compile_graph(graph, target=parse_target("llvm", threads=threads))
    src = "\n".join(cg.kernel_source(k) for k in range(cg.kernels))
    tiles = h * w >= blk  # planes under one tile's pixels (an SE block's 1x1) and few channels stay copies
    assert src.count(f"transpose_{blk}(") == (0 if not tiles else 2 if c > blk // 4 else 1), src
    got_y, got_xb = cg({"x": x})
    want_xb = torch.zeros(n, -(-c // blk) * blk, h, w)
    want_xb[:, :c] = torch.relu(x)
    want_xb = want_xb.reshape(n, -1, blk, h, w).permute(0, 1, 3, 4, 2)
    torch.testing.assert_close(got_xb, want_xb, rtol=0, atol=0)
    torch.testing.assert_close(got_y, torch.tanh(torch.sigmoid(torch.relu(x))), rtol=1e-6, atol=1e-6)


def test_the_transpose_routine_is_the_transpose():
    """The routine's shuffles, level by level (each swaps one bit of the row index with the same bit of the
    column index), applied to lane numbers: the transpose of every block size the lowering calls."""
    from lower.llvm.transpose import _mask
    from lower.ops_to_loops.blocked import TRANSPOSE_BLOCKS

    for blk in TRANSPOSE_BLOCKS:
        rows = [[(i, j) for j in range(blk)] for i in range(blk)]
        d = blk // 2
        while d:
            new = [list(r) for r in rows]
            for i in range(blk):
                if not i & d:
                    for hi, dst in ((False, i), (True, i + d)):
                        lanes = [int(x.split()[1]) for x in _mask(d, blk, hi).split(", ")]
                        new[dst] = [(rows[i] + rows[i + d])[q] for q in lanes]
            rows, d = new, d // 2
        assert rows == [[(j, i) for j in range(blk)] for i in range(blk)]


def test_dense_blocked_conv_on_8_lane_vectors():
    """On 8-lane (AVX2) vectors a 16-channel block is two vectors of a micro-tile's columns: the second is 8
    floats into the block, the third ``ldq`` on (it was stored ``ldq`` on from the first: wrong results on
    an AVX2 host).  An 8-lane target runs on any x86 host with AVX2, so this holds everywhere."""
    host = parse_target("llvm", threads=1)
    mr, nr = GEMM_TILE[8]
    t8 = dataclasses.replace(host, vector_width=8, mr=mr, nr=nr)
    for case in [(1, 20, 7, 9, 24, 3, 1, 1, 1), (1, 64, 14, 14, 32, 3, 2, 1, 1)]:
        x, wt, bias = _data(case)
        cg = compile_graph(_graph(case, "relu", wt, bias), target=t8)
        assert re.search(r"gemm\w*q_6x16_r16", "\n".join(cg.kernel_source(k) for k in range(cg.kernels)))
        torch.testing.assert_close(cg({"x": x})[0], _expected(case, x, wt, bias, "relu"), rtol=1e-4, atol=1e-4)


def test_rules_check_numerically():
    for rule in load_rules(["blocked", DENSE]):
        result = check_rule(rule, draws=4, extra_draws=4)
        assert result.ok, (rule.name, result)


@pytest.mark.slow  # ~14 s on 2 busy cores: a whole optimize; the layout rules are proven and run fast above
def test_round_trips_cancel_between_blocked_convs():
    """relu(conv) -> depthwise -> 1x1: with the blocked rules the e-graph holds the chain blocked end to end
    (one conversion in, one out), and the extracted graph is verified whichever layout the costs pick."""
    b = GraphBuilder("chain")
    x = b.input("x", (1, 32, 10, 10))
    y = b.op("relu", b.conv2d(x, b.weight("w0", torch.randn(32, 32, 1, 1))))
    y = b.conv2d(y, b.weight("w1", torch.randn(32, 1, 3, 3)), padding=(1, 1), groups=32)
    y = b.conv2d(y, b.weight("w2", torch.randn(32, 32, 1, 1)))
    graph = b.build([y])

    def blocked_cost(op, attrs, shapes, dtype="float32"):  # a machine where only the blocked forms are cheap
        return 1.0 if op in ("conv2d", "conv2d_bias_act", "to_blocked", "from_blocked") else 1e-3

    res = optimize(graph, rules=["blocked", DENSE], cost_model=blocked_cost)
    ops = [n.op for n in res.graph if n.id in res.graph.live()]
    assert res.stats.verified
    assert ops.count("conv2d_blocked") == 3 and ops.count("to_blocked") == 1 and ops.count("from_blocked") == 1, ops


@pytest.mark.slow  # a whole optimize, as above
def test_squeeze_and_excitation_moves_into_the_blocked_region():
    """depthwise -> SiLU -> x * sigmoid(conv(mean(x))) -> 1x1: SiLU, the global mean (as a blocked
    reduce_mean), the per-channel scale and the product move into the blocked region, so on a machine where
    the blocked forms are cheap one conversion goes in and one comes out of the main path."""
    b = GraphBuilder("se")
    x = b.input("x", (1, 32, 10, 10))
    y = b.conv2d(x, b.weight("w0", torch.randn(32, 1, 3, 3)), padding=(1, 1), groups=32)
    y = b.op("silu", y)
    s = b.op("sigmoid", b.conv2d(b.op("global_avgpool", y), b.weight("w1", torch.randn(32, 32, 1, 1))))
    y = b.conv2d(b.op("mul", y, s), b.weight("w2", torch.randn(32, 32, 1, 1)))
    graph = b.build([y])

    def blocked_cost(op, attrs, shapes, dtype="float32"):  # NCHW convs and pools, and big conversions, dear
        if op in ("to_blocked", "from_blocked") and shapes[0][2] * shapes[0][3] == 1:
            return 1e-3  # a [N, C, 1, 1] scale's
        return 1.0 if op in ("conv2d", "conv2d_bias_act", "global_avgpool", "to_blocked", "from_blocked") else 1e-3

    res = optimize(graph, rules=["blocked", DENSE], cost_model=blocked_cost)
    live = [n for n in res.graph if n.id in res.graph.live()]
    assert res.stats.verified
    on_blocked = {n.op for n in live if n.inputs and len(res.graph.shape_of(n.inputs[0])) == 5}
    assert {"silu", "reduce_mean", "mul"} <= on_blocked, [
        (n.op, [res.graph.shape_of(v) for v in n.inputs]) for n in live
    ]
    big = [n for n in live if n.op in ("to_blocked", "from_blocked") and res.graph.shape_of(n.inputs[0])[2] > 1]
    assert len(big) == 2, [(n.op, res.graph.shape_of(n.inputs[0])) for n in big]


def test_onnx_export_computes_the_same():
    ort = pytest.importorskip("onnxruntime")
    for case in (CASES[0], CASES[4]):
        x, wt, bias = _data(case)
        for act in (None, "relu"):
            sess = ort.InferenceSession(to_onnx(_graph(case, act, wt, bias)).SerializeToString())
            out = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
            np.testing.assert_allclose(out, _expected(case, x, wt, bias, act).numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("pool", ["maxpool2d", "avgpool2d"])
def test_pools_in_the_blocked_layout(pool):
    """A pool over a blocked tensor: every lane its own channel; compiled, reference, ONNX and the rule."""
    x = torch.randn(1, 20, 9, 7)
    attrs = {"kernel": (3, 3), "stride": (2, 2), "padding": (1, 1)}
    if pool == "avgpool2d":
        attrs["count_include_pad"] = 0
    b = GraphBuilder("pool")
    y = b.op(f"{pool}_blocked", b.op("to_blocked", b.input("x", (1, 20, 9, 7)), block=16), **attrs)
    graph = b.build([b.op("from_blocked", y, channels=20)])
    fn = F.max_pool2d if pool == "maxpool2d" else (lambda t, *a: F.avg_pool2d(t, *a, count_include_pad=False))
    want = fn(x, (3, 3), (2, 2), (1, 1))
    torch.testing.assert_close(graph.run({"x": x})[0], want)
    torch.testing.assert_close(compile_graph(graph, "llvm")({"x": x})[0], want)
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(to_onnx(graph).SerializeToString())
    np.testing.assert_allclose(sess.run(None, {"x": x.numpy()})[0], want.numpy(), rtol=1e-5, atol=1e-6)


def test_blocked_rules_run_after_the_others_stop():
    """The blocked family is late (rewrite/egraph/saturate.py, LATE_FAMILIES): it fires only in iterations
    of its own, after the other families stopped, so its moves never multiply with add's associativity."""
    from rewrite.egraph.saturate import saturate

    b = GraphBuilder("late")
    x = b.input("x", (1, 16, 6, 6))
    y = b.op("relu", b.conv2d(x, b.weight("w0", torch.randn(16, 16, 1, 1))))
    y = b.add(b.add(y, x), b.conv2d(y, b.weight("w1", torch.randn(16, 16, 1, 1))))
    res = saturate(b.build([y]), load_rules(["algebra", "fusion", "blocked", DENSE]))
    fired = [{r.split(":")[0] for r, n in it.applied.items() if n} for it in res.iterations]
    late = [i for i, f in enumerate(fired) if any(r.startswith("blocked-") for r in f)]
    assert late, fired
    assert all(r.startswith("blocked-") for i in late for r in fired[i]), fired
    assert all(not any(r.startswith("blocked-") for r in f) for f in fired[: late[0]]), fired
