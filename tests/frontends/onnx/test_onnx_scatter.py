"""ONNX scatters at constant indices and TopK: run-time values put into or picked from place, compared with
onnxruntime."""

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper as oh  # noqa: E402

from rewrite.frontends.onnx import from_onnx  # noqa: E402
from rewrite.pipeline import compile  # noqa: E402
from tests.frontends.onnx.onnx_nodes import F, X, _check_node, _feed, _model, _ort  # noqa: E402


@pytest.mark.parametrize(
    "idx,reduction",
    [
        (np.int64([[1], [3], [0]]), "none"),  # whole rows
        (np.int64([[0, 2], [2, 1], [-1, 0]]), "none"),  # single elements, one negative
        (np.int64([[1], [1], [3]]), "add"),  # a row twice: summed
    ],
)
def test_scatter_nd_of_run_time_values_at_constant_indices(idx, reduction):
    """A static cache update: run-time data and updates, constant indices, as gathers into place."""
    k = idx.shape[-1]
    node = oh.make_node("ScatterND", ["x", "i", "u"], ["y"], reduction=reduction)
    _check_node(node, [("x", F, [4, 3]), ("u", F, [3, *([3] if k == 1 else [])])], [("i", idx)])


@pytest.mark.parametrize("axis,reduction", [(0, "none"), (1, "none"), (1, "add"), (-1, "add")])
def test_scatter_elements_of_run_time_values_at_constant_indices(axis, reduction):
    """torch's scatter / scatter_add exported: each update at its position, the axis coordinate from the index
    (negative counted from the end); without a reduction no position twice, with add one twice."""
    idx = {0: np.int64([[1, 0, 2], [2, 1, 0]]), 1: np.int64([[0, 2, 1], [2, 0, -2]])}[axis % 2]
    if reduction == "add":
        idx = np.int64([[1, 1, 2], [1, 2, 0]])
    node = oh.make_node("ScatterElements", ["x", "i", "u"], ["y"], axis=axis, reduction=reduction)
    _check_node(node, [("x", F, [3, 3]), ("u", F, [2, 3])], [("i", idx)])


@pytest.mark.parametrize("k,axis,largest", [(2, -1, 1), (3, 1, 0), (1, 0, 1)])
def test_topk_matches_onnxruntime(k, axis, largest):
    node = oh.make_node("TopK", ["x", "k"], ["y", "ix"], axis=axis, largest=largest)
    model = _model(node, X, [("k", np.int64([k]))])
    model = onnx.shape_inference.infer_shapes(
        oh.make_model(
            oh.make_graph(
                list(model.graph.node),
                "t",
                list(model.graph.input),
                [oh.make_empty_tensor_value_info("y"), oh.make_empty_tensor_value_info("ix")],
                list(model.graph.initializer),
            ),
            opset_imports=[oh.make_opsetid("", 21)],
        )
    )
    feed = _feed(X)
    want = _ort(model, feed)
    g = from_onnx(model)
    got = compile(g)({"x": torch.from_numpy(feed["x"])})
    assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])  # random values: no ties
