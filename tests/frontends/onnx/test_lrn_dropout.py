"""ONNX LRN (the registry's ``lrn``) and Dropout's optional mask output, as the model zoo writes them.

Dropout in inference is the identity; its mask output is accepted whether or not anything reads it.  A
read mask is the all-true constant of the input's shape: bool from opset 10 on, the input's float type
(1.0) before, as the spec types it.  onnxruntime writes zeros (False) in inference up to opset 11, ones from
opset 12 on, so the read mask is compared with onnxruntime at opset 13 only.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper  # noqa: E402

from rewrite import from_onnx, to_onnx  # noqa: E402
from rewrite.ir.errors import FrontendError  # noqa: E402
from rewrite.ir.ops import OPS  # noqa: E402
from rewrite.verification.numeric import compare_all  # noqa: E402

SHAPE = [2, 6, 4, 5]


def _model(nodes, outputs, opset: int, shape=SHAPE, inits=(), check: bool = True) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)
    outs = [helper.make_tensor_value_info(name, elem, shape) for name, elem in outputs]
    graph = helper.make_graph(nodes, "g", [x], outs, initializer=list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    if check:  # a test of a malformed node skips the checker
        onnx.checker.check_model(m, full_check=True)
    return m


def _ort(m: onnx.ModelProto, x: torch.Tensor) -> list[torch.Tensor]:
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return [torch.from_numpy(o) for o in sess.run(None, {"x": x.numpy()})]


@pytest.mark.parametrize("opset", [7, 9, 10, 12, 13])
def test_dropout_with_an_unread_mask_is_the_identity(opset):
    nodes = [helper.make_node("Dropout", ["x"], ["d", "mask"]), helper.make_node("Relu", ["d"], ["y"])]
    g = from_onnx(_model(nodes, [("y", TensorProto.FLOAT)], opset))
    assert [n.op for n in g] == ["input", "identity", "relu"]  # no weight: nothing reads the mask
    x = torch.randn(*SHAPE)
    assert torch.equal(g.run({"x": x})[0], torch.relu(x))


@pytest.mark.parametrize(("opset", "elem", "kept"), [(9, TensorProto.FLOAT, 1.0), (13, TensorProto.BOOL, True)])
def test_a_read_mask_is_the_all_true_constant(opset, elem, kept):
    nodes = [helper.make_node("Dropout", ["x"], ["y", "mask"]), helper.make_node("Identity", ["mask"], ["m"])]
    m = _model(nodes, [("y", TensorProto.FLOAT), ("m", elem)], opset)
    g = from_onnx(m)
    x = torch.randn(*SHAPE)
    y, mask = g.run({"x": x})
    assert torch.equal(y, x)
    assert mask.shape == tuple(SHAPE) and mask.dtype == (torch.bool if elem == TensorProto.BOOL else torch.float32)
    assert bool((mask == kept).all())
    if opset >= 12:  # onnxruntime's mask is all ones from opset 12 (zeros before: see the module's docstring)
        assert compare_all(_ort(m, x), [y, mask]).close


def test_dropout_in_training_mode_is_refused():
    ratio = helper.make_tensor("ratio", TensorProto.FLOAT, [], [0.5])
    train = helper.make_tensor("train", TensorProto.BOOL, [], [True])
    nodes = [helper.make_node("Dropout", ["x", "ratio", "train"], ["y", "mask"])]
    m = _model(nodes, [("y", TensorProto.FLOAT)], 13, inits=[ratio, train])
    with pytest.raises(FrontendError, match=r"Dropout.*training_mode=true"):
        from_onnx(m)


@pytest.mark.parametrize("size", [1, 3, 5])
def test_lrn_imports_as_lrn_and_matches_onnxruntime(size):
    node = helper.make_node("LRN", ["x"], ["y"], size=size, alpha=0.01, beta=0.75, bias=2.0)
    m = _model([node], [("y", TensorProto.FLOAT)], 13)
    g = from_onnx(m)
    lrn = [n for n in g if n.op == "lrn"]
    assert len(lrn) == 1 and lrn[0].attrs["size"] == size and lrn[0].attrs["bias"] == 2.0
    x = torch.randn(*SHAPE) * 3
    c = compare_all(_ort(m, x), g.run({"x": x}))
    assert c.close, c.why


def test_lrn_defaults_are_onnx_defaults():
    g = from_onnx(_model([helper.make_node("LRN", ["x"], ["y"], size=3)], [("y", TensorProto.FLOAT)], 13))
    (n,) = [n for n in g if n.op == "lrn"]
    assert n.attrs["beta"] == 0.75 and n.attrs["bias"] == 1.0 and abs(n.attrs["alpha"] - 1e-4) < 1e-9


def test_lrn_without_size_is_refused_naming_the_node():
    m = _model([helper.make_node("LRN", ["x"], ["y"], name="norm1")], [("y", TensorProto.FLOAT)], 13, check=False)
    with pytest.raises(FrontendError, match=r"'norm1' \(LRN\).*size"):
        from_onnx(m)


def test_lrn_of_a_constant_folds_with_the_registry_reference():
    """onnx's reference evaluator (what folds a node eqsat has no handler for) sums LRN's window over the
    batch axis; the importer folds a constant LRN with the registry's reference instead."""
    arr = np.random.default_rng(0).standard_normal((1, 6, 3, 3)).astype(np.float32)
    w = helper.make_tensor("w", TensorProto.FLOAT, arr.shape, arr.flatten())
    nodes = [helper.make_node("LRN", ["w"], ["n"], size=3, alpha=0.5), helper.make_node("Add", ["x", "n"], ["y"])]
    m = _model(nodes, [("y", TensorProto.FLOAT)], 13, shape=list(arr.shape), inits=[w])
    g = from_onnx(m)
    assert not any(n.op == "lrn" for n in g)  # folded
    x = torch.randn(*arr.shape)
    want = x + OPS["lrn"].ref([torch.from_numpy(arr)], {"size": 3, "alpha": 0.5, "beta": 0.75, "bias": 1.0})[0]
    assert compare_all([want], g.run({"x": x})).close
    assert compare_all(_ort(m, x), g.run({"x": x})).close


def test_lrn_exports_as_one_lrn_node_onnxruntime_runs():
    m = _model([helper.make_node("LRN", ["x"], ["y"], size=5, alpha=0.01)], [("y", TensorProto.FLOAT)], 13)
    g = from_onnx(m)
    out = to_onnx(g)
    assert [n.op_type for n in out.graph.node if n.op_type == "LRN"] == ["LRN"]
    x = torch.randn(*SHAPE)
    sess = ort.InferenceSession(out.SerializeToString(), providers=["CPUExecutionProvider"])
    theirs = [torch.from_numpy(o) for o in sess.run(None, {sess.get_inputs()[0].name: x.numpy()})]
    assert compare_all(theirs, g.run({"x": x})).close
