"""Winograd F(4x4, 3x3) (rewrite/ir/ops/winograd.py, rules/winograd.rules, lower/ops_to_loops/winograd.py):
the references and the compiled kernels against F.conv2d on sizes that are not whole tiles, the rules,
extraction, and the ONNX export."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from costs.analytical import AnalyticalCost
from costs.machine import MachineProfile
from lower import compile_graph, parse_target
from rewrite.frontends.onnx.export import to_onnx
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import Graph
from rewrite.ir.ops import OPS
from rewrite.pipeline import optimize
from rewrite.rulelang.loader import load_rules
from rewrite.verification.rulecheck.check import check_rule
from tests.tiers import rotated

# (N, C, K, H, W, padding): H, W not multiples of 4, odd channel counts, batch 2, padding 0 and 1; the
# last two have a partial block of output tiles along the row (5 and 9 tile columns, blocks of 4)
CASES = [
    (2, 3, 5, 7, 9, 1),
    (1, 5, 3, 5, 6, 0),
    (2, 1, 1, 3, 3, 0),
    (1, 2, 7, 11, 4, 1),
    (2, 3, 3, 4, 8, 1),
    (2, 3, 20, 10, 22, 0),
    (1, 4, 33, 15, 35, 1),
]


def _winograd_graph(n, c, k, h, w, p, act, wt, bias, tiles_inner: bool = False) -> Graph:
    b = GraphBuilder("wino")
    x = b.input("x", (n, c, h, w))
    u = b.op("winograd_weight", b.weight("w", wt))
    if tiles_inner:  # rules/winograd.rules' -t forms: [36, C, N*T] read as a column-major A
        m = b.op("matmul_at", b.op("winograd_input_t", x, padding=(p, p)), u)
    else:
        m = b.op("matmul", b.op("winograd_input", x, padding=(p, p)), u)
    out = (h + 2 * p - 2, w + 2 * p - 2)
    if act is None:
        y = b.op("winograd_output", m, out=out)
    else:
        y = b.op("winograd_output_bias_act", m, b.weight("b", bias), out=out, act=act)
    return b.build([y])


def _expected(x, wt, bias, p, act):
    y = F.conv2d(x, wt, padding=p)
    if act is None:
        return y
    y = y + bias.view(1, -1, 1, 1)
    return {"none": y, "relu": torch.relu(y), "tanh": torch.tanh(y)}[act]


ACTS = [None, "relu", "tanh"]


@pytest.mark.parametrize("tiles_inner", [False, True])
@pytest.mark.parametrize("case,act", rotated(CASES, ACTS))
def test_reference_and_compiled_match_conv2d(case, act, tiles_inner):
    n, c, k, h, w, p = case
    g = torch.Generator().manual_seed(sum(case))
    x, wt, bias = (
        torch.randn(n, c, h, w, generator=g),
        torch.randn(k, c, 3, 3, generator=g),
        torch.randn(k, generator=g),
    )
    graph = _winograd_graph(n, c, k, h, w, p, act, wt, bias, tiles_inner)
    want = _expected(x, wt, bias, p, act)
    ref = graph.run({"x": x})[0]
    assert ref.shape == want.shape
    torch.testing.assert_close(ref, want, rtol=1e-4, atol=1e-4)
    got = compile_graph(graph, "llvm")({"x": x})[0]
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("tiles_inner", [False, True])
def test_reference_and_kernels_spread_a_nan_or_inf_alike(tiles_inner):
    """Fuzz seed 64081: the references multiplied whole matrices, so a zero coefficient times a NaN spread it
    over a 6x6 tile where the kernels, skipping zeros, do not; the references now skip zeros too."""
    g = torch.Generator().manual_seed(3)
    x, wt = torch.randn(1, 2, 10, 11, generator=g), torch.randn(3, 2, 3, 3, generator=g)
    x[0, 0, 2, 3], x[0, 1, 7, 9], x[0, 1, 0, 0] = float("nan"), float("inf"), float("-inf")
    graph = _winograd_graph(1, 2, 3, 10, 11, 1, None, wt, None, tiles_inner)
    ref = graph.run({"x": x})[0]
    got = compile_graph(graph, "llvm")({"x": x})[0]
    assert torch.equal(ref.isnan(), got.isnan()) and torch.equal(ref.isinf(), got.isinf())
    assert 0 < int(ref.isfinite().logical_not().sum()) < ref.numel() // 2
    fin = ref.isfinite()
    torch.testing.assert_close(got[fin], ref[fin], rtol=1e-4, atol=1e-4)


def test_shapes_follow_the_layout():
    assert OPS["winograd_weight"].infer([(5, 3, 3, 3)], {}) == [(36, 3, 5)]
    assert OPS["winograd_input"].infer([(2, 3, 7, 9)], {"padding": (1, 1)}) == [(36, 2 * 2 * 3, 3)]
    assert OPS["winograd_input_t"].infer([(2, 3, 7, 9)], {"padding": (1, 1)}) == [(36, 3, 2 * 2 * 3)]
    assert OPS["matmul_at"].infer([(36, 3, 12), (36, 3, 5)], {}) == [(36, 12, 5)]
    assert OPS["winograd_output"].infer([(36, 12, 5)], {"out": (7, 9)}) == [(2, 5, 7, 9)]


def test_transforms_run_in_parallel_when_their_tiles_are_worth_it():
    """A tile writes 36 values (input) or 16 outputs per channel (output): counted as work, a 64-channel 56 x 56
    map's transforms (12544 tile-channel pairs, 450k stores) take a parallel launch on 2 threads."""
    b = GraphBuilder("wpar")
    x = b.input("x", (1, 64, 56, 56))
    m = b.op(
        "matmul",
        b.op("winograd_input", x, padding=(1, 1)),
        b.op("winograd_weight", b.weight("w", torch.randn(64, 64, 3, 3))),
    )
    g = b.build([b.op("winograd_output", m, out=(56, 56))])
    cg = compile_graph(g, target=parse_target("llvm", threads=2))
    sources = [cg.kernel_source(k) for k in range(cg.kernels)]
    transforms = [s for s in sources if "winograd_input" in s or "winograd_output" in s]
    assert len(transforms) == 2 and all("parallel for" in s for s in transforms)


def test_tiles_inner_transform_reads_a_phase_split_plane():
    """winograd_input_t: per plane a padded slice split by column phase mod 4, a tile row computed 16 tiles wide
    into a local row (37 tiles: no scalar remainder) and copied out, for matmul_at to read column-major."""
    b = GraphBuilder("wt")
    x = b.input("x", (1, 4, 149, 149))
    u = b.op("winograd_weight", b.weight("w", torch.randn(8, 4, 3, 3)))
    m = b.op("matmul_at", b.op("winograd_input_t", x, padding=(0, 0)), u)
    cg = compile_graph(b.build([b.op("winograd_output", m, out=(147, 147))]))
    assert cg.kernels == 3, cg.plan
    src = cg.kernel_source(0)
    assert "_xpad: f32[1, 150, 4, 49]" in src and "_row: f32[36, 48]" in src and "for tw in 0..48 {" in src, src
    assert "select" not in src.split("_row: f32")[1]  # the taps read the slice, no bounds checks


def test_tiles_inner_transform_reads_in_place_when_a_plane_copy_would_not_fit(monkeypatch):
    """A plane whose padded copy would pass the stack budget: the taps read the input, bounds-selected."""
    import lower.ops_to_loops.winograd as lw

    monkeypatch.setattr(lw, "IN_T_MAX_SLICE", 1024)
    n, c, k, h, w, p = 2, 3, 5, 11, 35, 1
    g = torch.Generator().manual_seed(7)
    x, wt = torch.randn(n, c, h, w, generator=g), torch.randn(k, c, 3, 3, generator=g)
    cg = compile_graph(_winograd_graph(n, c, k, h, w, p, None, wt, None, tiles_inner=True), "llvm")
    assert "_xpad" not in cg.kernel_source(0)
    torch.testing.assert_close(cg({"x": x})[0], F.conv2d(x, wt, padding=p), rtol=1e-4, atol=1e-4)


def test_rules_check_numerically():
    for rule in load_rules(["winograd"]):
        result = check_rule(rule, draws=4, extra_draws=4)
        assert result.ok, (rule.name, result)


def test_extraction_keeps_a_verified_graph_and_winograd_where_it_pays():
    """A 3x3 conv on a 16x16 map with 32 channels: the cost model prefers Winograd; the result is verified."""
    b = GraphBuilder("conv")
    x = b.input("x", (1, 32, 16, 16))
    wt = b.weight("w", torch.randn(32, 32, 3, 3) * 0.1)
    y = b.conv2d_bias_act(x, wt, b.weight("b", torch.randn(32)), padding=(1, 1), act="relu")
    # this machine class's 1-thread profile, fixed so that a loaded machine's measurement does not decide
    model = AnalyticalCost(MachineProfile("test", 1.66e11, 2.66e10, 3.3e-6, 3.5e-6, 6.3e-6, 9.0e-6, 1.43e11, 1.5e10))
    res = optimize(b.build([y]), rules=["fusion", "winograd"], cost_model=model)
    ops = [n.op for n in res.graph if n.id in res.graph.live()]
    assert res.stats.verified
    assert "winograd_output_bias_act" in ops, ops


def test_onnx_export_computes_the_same():
    ort = pytest.importorskip("onnxruntime")
    n, c, k, h, w, p = CASES[0]
    g = torch.Generator().manual_seed(1)
    x, wt, bias = (
        torch.randn(n, c, h, w, generator=g),
        torch.randn(k, c, 3, 3, generator=g),
        torch.randn(k, generator=g),
    )
    for act, tiles_inner in ((None, False), ("relu", False), ("relu", True)):
        graph = _winograd_graph(n, c, k, h, w, p, act, wt, bias, tiles_inner)
        sess = ort.InferenceSession(to_onnx(graph).SerializeToString())
        out = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
        np.testing.assert_allclose(out, _expected(x, wt, bias, p, act).numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["winograd_input", "winograd_input_t"])
def test_the_input_transform_reads_each_tap_once_per_inner_sum(op):
    """``BT d BT^T`` is lowered as ``d BT^T`` into a local buffer, then ``BT`` of it: each of the 36 inner sums
    reads at most its 6 taps once (as one expression per entry they came six times over, and DenseNet-121's
    transforms took seconds to lower and compile), and the transform is still the reference's."""
    b = GraphBuilder("wino_in")
    x = b.input("x", (1, 3, 7, 9))
    g = b.build([b.op(op, x, padding=(1, 1))])
    cg = compile_graph(g, target=parse_target("llvm", threads=1))
    src = cg.kernel_source()
    taps = src.count(f"{cg.built[0].kernel.params[1].name}[") if op == "winograd_input" else src.count("_xp")
    assert 0 < taps <= 6 * 36 + 8
    inputs = g.random_inputs(0)
    assert torch.allclose(cg(inputs)[0], g.run(inputs)[0], rtol=1e-5, atol=1e-5)
