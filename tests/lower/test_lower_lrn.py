"""``lrn`` (ONNX LRN: AlexNet, GoogLeNet, ZFNet): the registry's reference against the spec's formula,
onnxruntime and ``F.local_response_norm``, and the compiled kernel against the reference.

The window is ONNX's: channels ``c - (size-1)//2 .. c + size//2``, clipped at the edges.  For an odd
size torch's ``F.local_response_norm`` is the same; for an even one torch centres it a channel lower, and
onnxruntime refuses an even size, so even sizes are checked against the formula written out here.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rewrite.ir.builder import GraphBuilder
from rewrite.ir.ops import OPS
from rewrite.pipeline import compile as compile_graph
from rewrite.verification.numeric import compare, compare_all

ATTRS = {"alpha": 1e-2, "beta": 0.75, "bias": 2.0}


def _spec(x: np.ndarray, size: int, alpha: float, beta: float, bias: float) -> np.ndarray:
    """The ONNX spec's formula, one channel at a time, in float64."""
    x = x.astype(np.float64)
    out = np.empty_like(x)
    C = x.shape[1]
    for c in range(C):
        lo, hi = max(0, c - (size - 1) // 2), min(C - 1, c + size // 2)
        sq = (x[:, lo : hi + 1] ** 2).sum(axis=1)
        out[:, c] = x[:, c] / (bias + alpha / size * sq) ** beta
    return out


def _ref(x: torch.Tensor, size: int, **attrs: float) -> torch.Tensor:
    return OPS["lrn"].ref([x], {"size": size, **ATTRS, **attrs})[0]


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 8, 9])
def test_reference_is_the_spec_formula(size):
    x = torch.randn(2, 7, 3, 4, generator=torch.Generator().manual_seed(size)) * 3
    want = torch.from_numpy(_spec(x.numpy(), size, **ATTRS)).float()
    assert compare(want, _ref(x, size)).close


@pytest.mark.parametrize("size", [1, 3, 5, 9])
def test_reference_matches_torch_for_odd_sizes(size):
    x = torch.randn(2, 7, 3, 4, generator=torch.Generator().manual_seed(size)) * 3
    torch.testing.assert_close(
        _ref(x, size), F.local_response_norm(x, size, **{"k" if k == "bias" else k: v for k, v in ATTRS.items()})
    )


@pytest.mark.parametrize("size", [3, 5])
def test_reference_matches_onnxruntime(size):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    x = torch.randn(1, 6, 5, 5, generator=torch.Generator().manual_seed(0)) * 3
    vi = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, list(x.shape))
    node = helper.make_node("LRN", ["x"], ["y"], size=size, **ATTRS)
    m = helper.make_model(
        helper.make_graph([node], "lrn", [vi("x")], [vi("y")]), opset_imports=[helper.make_opsetid("", 13)]
    )
    onnx.checker.check_model(m)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = torch.from_numpy(sess.run(None, {"x": x.numpy()})[0])
    assert compare(theirs, _ref(x, size)).close


def test_compiled_matches_reference():
    b = GraphBuilder("lrn")
    outs = []
    for i, (shape, size) in enumerate(
        [((2, 7, 5, 6), 5), ((1, 6, 9), 4), ((3, 5), 1), ((2, 3, 4, 5), 8), ((1, 4, 2, 3, 2), 3)]
    ):
        outs.append(b.op("lrn", b.input(f"x{i}", shape), size=size, **ATTRS))
    g = b.build(outs)
    run = compile_graph(g, "llvm", threads=1)
    for seed in (0, 1):
        ins = g.random_inputs(seed)
        c = compare_all(g.run(ins), [t.cpu() for t in run(ins)])
        assert c.close, c.why


@pytest.mark.parametrize("target", [pytest.param("torch", marks=pytest.mark.slow), "llvm"])
def test_optimize_keeps_lrn_and_prices_it(target):
    """The e-graph's prelude and both default cost models (analytical, compiled kernels) take ``lrn``."""
    import rewrite

    b = GraphBuilder("conv_lrn")
    x = b.input("x", (1, 4, 6, 6))
    w = b.weight("w", torch.randn(8, 4, 3, 3, generator=torch.Generator().manual_seed(0)))
    y = b.op("relu", b.op("lrn", b.op("conv2d", x, w, padding=(1, 1)), size=5, **ATTRS))
    g = b.build([y])
    res = rewrite.optimize(g, target=target)
    assert sum(n.op == "lrn" for n in res.graph) == 1
    ins = g.random_inputs(0)
    assert compare_all(g.run(ins), [t.cpu() for t in rewrite.compile(res.graph)(ins)]).close
