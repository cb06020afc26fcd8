"""float16 and bfloat16 ONNX models: inputs, initializers and outputs in their type, every op's result rounded
to it (onnxruntime's and torch's arithmetic), export back with the same types."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import torch
import torch.nn as nn
from onnx import TensorProto, helper, numpy_helper

from rewrite.frontends.onnx import from_onnx, to_onnx
from rewrite.pipeline import compile, optimize

ort = pytest.importorskip("onnxruntime")


class _Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1, self.ln, self.l2 = nn.Linear(64, 128), nn.LayerNorm(128), nn.Linear(128, 32)

    def forward(self, x):
        return torch.softmax(self.l2(self.ln(nn.functional.gelu(self.l1(x)))), dim=-1)


def test_a_float16_export_of_torch_matches_onnxruntime(tmp_path):
    torch.manual_seed(0)
    m, x = _Block().eval().half(), torch.randn(8, 64).half()
    path = tmp_path / "h.onnx"
    with pytest.warns(DeprecationWarning):
        torch.onnx.export(m, (x,), str(path), dynamo=False)
    g = from_onnx(path)
    assert [n.dtype for n in g.inputs] == ["float16"] and [g.dtype_of(v) for v in g.outputs] == ["float16"]
    assert all(w.dtype == torch.float32 for w in g.weights.values())  # the float16 initializers' exact values
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = sess.run(None, {sess.get_inputs()[0].name: x.numpy()})[0]
    got = compile(optimize(g, target="llvm").graph, threads=1)({g.inputs[0].attrs["name"]: x})[0]
    assert got.dtype == torch.float16
    np.testing.assert_allclose(got.float().numpy(), want.astype(np.float32), rtol=1e-3, atol=1e-3 * np.abs(want).max())


def _bf16_model() -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:
    """y = relu(x * w + b) in bfloat16, then a Cast to float32 and one back: every intermediate is bfloat16."""
    rng = np.random.default_rng(0)
    w = torch.from_numpy(rng.standard_normal((4, 8)).astype(np.float32)).bfloat16()
    b = torch.from_numpy(rng.standard_normal((8,)).astype(np.float32)).bfloat16()

    def init(name: str, t: torch.Tensor) -> onnx.TensorProto:
        raw = t.view(torch.int16).numpy().tobytes()
        return helper.make_tensor(name, TensorProto.BFLOAT16, list(t.shape), raw, raw=True)

    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["s"]),
        helper.make_node("Relu", ["s"], ["r"]),
        helper.make_node("Cast", ["r"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["f", "f"], ["sq"]),
        helper.make_node("Cast", ["sq"], ["y"], to=TensorProto.BFLOAT16),
    ]
    graph = helper.make_graph(
        nodes,
        "bf16",
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [3, 8])],
        [init("w", w), init("b", b)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), w, b


def test_bfloat16_rounds_where_onnx_does_and_exports_back(tmp_path):
    model, w, b = _bf16_model()
    g = from_onnx(model)
    x = torch.randn(3, 4).bfloat16()
    # torch in bfloat16 rounds after the matmul, the add and the square (relu moves values only)
    want = (torch.relu(x @ w + b).float() ** 2).bfloat16()
    got = compile(g, threads=1)({"x": x})[0]
    assert got.dtype == torch.bfloat16 and torch.equal(got, want)
    assert torch.equal(g.run({"x": x})[0], want)
    back = to_onnx(g)
    assert back.graph.input[0].type.tensor_type.elem_type == TensorProto.BFLOAT16
    assert back.graph.output[0].type.tensor_type.elem_type == TensorProto.BFLOAT16
    assert torch.equal(compile(from_onnx(back), threads=1)({"x": x})[0], want)


def test_a_float16_constant_folds_in_float16():
    """A constant subgraph ONNX types float16 folds at import and is rounded as onnxruntime would."""
    third = numpy_helper.from_array(np.array([1 / 3], np.float16), "third")
    nodes = [helper.make_node("Mul", ["third", "third"], ["c"]), helper.make_node("Add", ["x", "c"], ["y"])]
    graph = helper.make_graph(
        nodes,
        "fold",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [2])],
        [third],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = torch.tensor([1.0, -2.0]).half()
    want = x + torch.tensor([1 / 3]).half() * torch.tensor([1 / 3]).half()
    assert torch.equal(compile(from_onnx(model), threads=1)({"x": x})[0], want)


def test_layernorm_statistics_stay_float32_and_each_output_keeps_its_value():
    """A float16 LayerNormalization's Mean and InvStdDev are float32 (ONNX's stash type): they are not rounded,
    and each of the three outputs is bound to its own value."""
    rng = np.random.default_rng(0)
    scale = numpy_helper.from_array(rng.standard_normal(8).astype(np.float16), "g")
    bias = numpy_helper.from_array(rng.standard_normal(8).astype(np.float16), "b")
    graph = helper.make_graph(
        [helper.make_node("LayerNormalization", ["x", "g", "b"], ["y", "mean", "inv"], axis=-1, epsilon=1e-5)],
        "ln",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [3, 8])],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT16, [3, 8]),
            helper.make_tensor_value_info("mean", TensorProto.FLOAT, [3, 1]),
            helper.make_tensor_value_info("inv", TensorProto.FLOAT, [3, 1]),
        ],
        [scale, bias],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = torch.randn(3, 8).half()
    y, mean, inv = compile(from_onnx(model), threads=1)({"x": x})
    xf = x.float()
    want_mean = xf.mean(-1, keepdim=True)
    want_inv = (xf.var(-1, unbiased=False, keepdim=True) + 1e-5).rsqrt()
    assert y.dtype == torch.float16 and mean.dtype == torch.float32 and inv.dtype == torch.float32
    torch.testing.assert_close(mean, want_mean, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(inv, want_inv, rtol=1e-5, atol=1e-6)
    g, b = (torch.from_numpy(numpy_helper.to_array(t)).float() for t in (scale, bias))
    torch.testing.assert_close(y, ((xf - want_mean) * want_inv * g + b).half(), rtol=1e-3, atol=2e-3)


def test_a_float16_constant_node_is_read_as_the_float32_it_holds():
    """A Constant node's float16 value (torch's exporter writes attention's scale so) is a float16 tensor to
    the ops that read it, not a constant of a dtype eqsat refuses."""
    k = numpy_helper.from_array(np.array([0.125], np.float16), "k")
    nodes = [helper.make_node("Constant", [], ["c"], value=k), helper.make_node("Mul", ["x", "c"], ["y"])]
    graph = helper.make_graph(
        nodes,
        "const",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [4])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = torch.randn(4).half()
    assert torch.equal(compile(from_onnx(model), threads=1)({"x": x})[0], x * torch.tensor([0.125]).half())


@pytest.mark.slow  # ~10 s: a small BERT exported in float16 by torch, against onnxruntime
def test_a_float16_bert_export_matches_onnxruntime(tmp_path):
    pytest.importorskip("transformers")
    from bench.zoo import zoo_builder

    builder = zoo_builder("bert")
    assert builder is not None
    m, inputs = builder()
    path = tmp_path / "bert16.onnx"
    with pytest.warns(DeprecationWarning):
        torch.onnx.export(m.eval().half(), tuple(inputs), str(path), dynamo=False)
    g = from_onnx(path)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    want = sess.run(None, {i.name: x.numpy() for i, x in zip(sess.get_inputs(), inputs)})[0].astype(np.float32)
    got = compile(g, threads=1)({n.attrs["name"]: x for n, x in zip(g.inputs, inputs)})[0].float().numpy()
    assert np.abs(got - want).max() <= 2 * float(torch.finfo(torch.float16).eps) * np.abs(want).max()
