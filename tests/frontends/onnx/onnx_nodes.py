"""Building and checking one-node ONNX models, for the ONNX import tests: a model of a node (shapes inferred),
seeded inputs, onnxruntime's answer, and the check that eqsat's import, compiled, matches it."""

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, numpy_helper  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rewrite.frontends.onnx import from_onnx  # noqa: E402
from rewrite.pipeline import compile  # noqa: E402
from rewrite.verification.numeric import compare_all  # noqa: E402

F, INT, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _model(node, inputs, inits=(), opset=21, nodes=()):
    """A model of ``nodes`` then ``node``; inputs: [(name, elem type, shape)], output 'y' typed by shape inference."""
    g = oh.make_graph(
        [*nodes, node],
        "t",
        [oh.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [oh.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(v, k) for k, v in inits],
    )
    model = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    return onnx.shape_inference.infer_shapes(model, strict_mode=True)


def _feed(inputs, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for n, t, s in inputs:
        if t == F:
            out[n] = rng.standard_normal(s).astype(np.float32)
        elif t == INT:
            out[n] = rng.integers(-3, 3, s).astype(np.int64)  # negative ids count from the end
        else:
            out[n] = rng.random(s) < 0.5
    return out


def _ort(model, feed):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [torch.from_numpy(np.asarray(o)) for o in sess.run(None, feed)]


def _check_node(node, inputs, inits=(), opset=21, nodes=(), reference=False):
    """``reference``: compare with onnx's ReferenceEvaluator (ops newer than onnxruntime's opset)."""
    model = _model(node, inputs, inits, opset, nodes)
    feed = _feed(inputs)
    if reference:
        expected = [torch.from_numpy(np.ascontiguousarray(o)) for o in ReferenceEvaluator(model).run(None, feed)]
    else:
        expected = _ort(model, feed)
    graph = from_onnx(model)
    got = compile(graph)({k: torch.from_numpy(v) for k, v in feed.items()})
    cmp = compare_all(expected, got)
    assert cmp.close, cmp.why
    return graph


X = [("x", F, [2, 3, 4, 4])]
