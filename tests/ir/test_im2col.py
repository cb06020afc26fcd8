"""conv2d_im2col: the block form of a convolution as an op extraction chooses (rules/im2col.rules), priced by the
cost model like any other form; its lowering against torch is tests/lower/test_conv_rows.py."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from costs.analytical import AnalyticalCost
from costs.machine import MachineProfile
from rewrite.frontends.onnx.export import to_onnx
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.graph import Graph
from rewrite.pipeline import default_rules, optimize
from rewrite.rulelang.loader import load_rules
from rewrite.verification.rulecheck.check import check_rule

# a fixed profile, so that a loaded machine's measurement does not decide
PROFILE = MachineProfile("test", 1.66e11, 2.66e10, 3.3e-6, 3.5e-6, 6.3e-6, 9.0e-6, 1.43e11, 1.5e10)


def _conv(cin: int, cout: int, hw: int, stride: int = 1, pad: int = 1) -> Graph:
    b = GraphBuilder("conv")
    x = b.input("x", (1, cin, hw, hw))
    w = b.weight("w", torch.randn(cout, cin, 3, 3, generator=torch.Generator().manual_seed(0)) * 0.1)
    bias = b.weight("b", torch.randn(cout, generator=torch.Generator().manual_seed(1)))
    return b.build([b.relu(b.conv2d_bias_act(x, w, bias, stride=(stride, stride), padding=(pad, pad)))])


class _Priced:
    """The analytical model with the block form's ops priced ``factor`` times theirs."""

    def __init__(self, factor: float) -> None:
        self.base, self.factor = AnalyticalCost(PROFILE), factor

    def __call__(self, op, attrs, in_shapes, dtype="float32"):
        cost = self.base(op, attrs, in_shapes, dtype)
        return cost * self.factor if op.startswith("conv2d_im2col") else cost


def _ops(res) -> list[str]:
    return [n.op for n in res.graph if n.id in res.graph.live()]


def test_rules_check_numerically():
    for rule in load_rules(["im2col"]):
        result = check_rule(rule, draws=4, extra_draws=4)
        assert result.ok, (rule.name, result)


@pytest.mark.parametrize("factor, form", [(0.5, "conv2d_im2col_bias_act"), (2.0, "conv2d_bias_act")])
def test_extraction_keeps_the_form_the_cost_model_prices_lower(factor, form):
    res = optimize(_conv(32, 32, 14), rules=["fusion", "im2col"], cost_model=_Priced(factor))
    assert res.stats.verified
    assert form in _ops(res) and sum(op.startswith("conv2d") for op in _ops(res)) == 1, _ops(res)


def test_the_analytical_model_prices_the_materialised_matrix():
    """Without a measurement the two forms' FLOPs are equal; the block form also writes and reads its im2col
    matrix, so the analytical model keeps conv2d."""
    model = AnalyticalCost(PROFILE)
    attrs = {"stride": (1, 1), "padding": (1, 1), "dilation": (1, 1), "groups": 1}
    shapes = [(1, 32, 14, 14), (32, 32, 3, 3)]
    assert model("conv2d_im2col", attrs, shapes) > model("conv2d", attrs, shapes)
    res = optimize(_conv(32, 32, 14), rules=["fusion", "im2col"], cost_model=model)
    assert "conv2d_bias_act" in _ops(res)


def test_offered_only_where_the_forms_differ():
    """Padded, or strided with a window; unstrided with more than 64 outputs left out; grouped left out."""

    def offered(g: Graph) -> bool:
        res = optimize(g, rules=["fusion", "im2col"], cost_model=_Priced(0.5))
        return any(op.startswith("conv2d_im2col") for op in _ops(res))

    assert offered(_conv(16, 64, 12)) and offered(_conv(16, 128, 12, stride=2))
    assert offered(_conv(16, 32, 13, stride=2, pad=0))  # a strided 3x3 window, unpadded
    assert not offered(_conv(16, 128, 12)) and not offered(_conv(16, 32, 12, pad=0))
    b = GraphBuilder("grouped")
    w = b.weight("w", torch.randn(64, 16, 3, 3))
    assert not offered(b.build([b.conv2d(b.input("x", (1, 64, 12, 12)), w, padding=(1, 1), groups=4)]))


def test_a_cpu_family_only():
    """In eager PyTorch and on a GPU conv2d_im2col computes as conv2d does: those targets leave the family out."""
    families = lambda t: {r.family for r in default_rules(t)}
    assert "im2col" in families("llvm")
    assert "im2col" not in families("torch") and "im2col" not in families("cuda")


def test_onnx_export_is_a_conv():
    ort = pytest.importorskip("onnxruntime")
    g = GraphBuilder("x")
    x = g.input("x", (1, 8, 9, 9))
    w, bias = torch.randn(16, 8, 3, 3), torch.randn(16)
    y = g.op("conv2d_im2col_bias_act", x, g.weight("w", w), g.weight("b", bias), padding=(1, 1), act="relu")
    z = g.op("conv2d_im2col", x, g.weight("w2", w), stride=(2, 2), padding=(1, 1))
    model = to_onnx(g.build([y, z]))
    assert sorted(n.op_type for n in model.graph.node if n.op_type != "Identity") == ["Conv", "Conv", "Relu"]
    sess = ort.InferenceSession(model.SerializeToString())
    xv = torch.randn(1, 8, 9, 9)
    out = sess.run(None, {sess.get_inputs()[0].name: xv.numpy()})
    np.testing.assert_allclose(out[0], F.relu(F.conv2d(xv, w, bias, padding=1)).numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(out[1], F.conv2d(xv, w, stride=2, padding=1).numpy(), rtol=1e-4, atol=1e-4)
