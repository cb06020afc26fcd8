"""ONNX in and out: from_onnx, to_onnx (run by onnxruntime), save/load, and the conformance backend."""

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto  # noqa: E402
from onnx import helper as oh  # noqa: E402

from bench.models import MODELS, load  # noqa: E402
from rewrite.frontends import from_torch  # noqa: E402
from rewrite.frontends.onnx import from_onnx, save, to_onnx  # noqa: E402
from rewrite.frontends.onnx import load as load_graph  # noqa: E402
from rewrite.ir.builder import GraphBuilder  # noqa: E402
from rewrite.ir.errors import FrontendError  # noqa: E402
from rewrite.pipeline import optimize  # noqa: E402
from rewrite.verification.numeric import compare_all  # noqa: E402
from tests.tiers import models  # noqa: E402


def run_ort(model, inputs):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [torch.from_numpy(o) for o in sess.run(None, {k: v.numpy() for k, v in inputs.items()})]


def check_round_trips(graph, tmp_path):
    """to_onnx → onnxruntime, to_onnx → from_onnx, and save → load all reproduce graph.run."""
    x = graph.random_inputs(3)
    ref = graph.run(x)
    model = to_onnx(graph, tmp_path / "g.onnx")
    cmp = compare_all(ref, run_ort(model, x))
    assert cmp.close, cmp.why
    cmp = compare_all(ref, from_onnx(tmp_path / "g.onnx").run(x))
    assert cmp.close, cmp.why
    save(graph, tmp_path / "g.eqsat")
    back = load_graph(tmp_path / "g.eqsat")
    assert back.pretty() == graph.pretty()  # exact: same nodes, attributes, order
    assert back.weights.keys() == graph.weights.keys()
    assert all(torch.equal(back.weights[k], graph.weights[k]) for k in graph.weights)
    assert all(torch.equal(a, b) for a, b in zip(ref, back.run(x)))


def mlp():
    b = GraphBuilder()
    x = b.input("x", (2, 8))
    h = b.add(b.matmul(x, b.weight("w", torch.randn(8, 4))), b.weight("bias", torch.randn(1, 4)))
    return b.build([b.gelu(b.smul(h, scalar=0.5)), b.softmax(h, axis=1)])


def conv():
    b = GraphBuilder()
    x = b.input("img", (1, 3, 9, 9))
    c = b.conv2d(x, b.weight("k", torch.randn(4, 3, 3, 3)), stride=(2, 2), padding=(1, 1))
    p = b.maxpool2d(b.relu(c), kernel=(2, 2), stride=(2, 2), ceil_mode=1)
    return b.build([b.global_avgpool(p), b.pad2d(c, pads=(1, 0, 0, 2))])


def layout():
    b = GraphBuilder()
    x = b.input("x", (4, 6))
    ln = b.layernorm(x, b.weight("g", torch.randn(6)), b.weight("beta", torch.randn(6)), eps=1e-3)
    parts = b.split(ln, axis=1, sizes=(2, 4))
    return b.build([b.transpose(parts[1], perm=(1, 0)), b.reshape(parts[0], shape=(8,)), b.rsqrt(b.exp(x))])


SMALL = {"mlp": mlp, "conv": conv, "layout": layout}


@pytest.mark.parametrize("name", SMALL)
def test_small_graph_round_trips(name, tmp_path):
    check_round_trips(SMALL[name](), tmp_path)


def test_optimized_small_graph_round_trips(tmp_path):
    check_round_trips(optimize(mlp(), extractor="greedy").graph, tmp_path)


@pytest.mark.parametrize("name", models(["nasrnn", "squeezenet"]))
def test_small_model_round_trips(name, tmp_path):
    check_round_trips(from_torch(*load(name), name=name), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_model_and_its_optimized_graph_round_trip(name, tmp_path):
    graph = from_torch(*load(name), name=name)
    check_round_trips(graph, tmp_path)
    check_round_trips(optimize(graph).graph, tmp_path)


# ---------------------------------------------------------------- the importer


def vi(name, shape, dtype=TensorProto.FLOAT):
    return oh.make_tensor_value_info(name, dtype, shape)


def model_of(nodes, inputs, outputs, inits=(), opset=17):
    g = oh.make_graph(nodes, "t", inputs, outputs, list(inits))
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])


def test_import_broadcasts_ranks_and_spells_gemm_as_matmul_add():
    w = np.arange(12, dtype=np.float32).reshape(3, 4)
    nodes = [
        oh.make_node("Gemm", ["x", "w", "b"], ["h"], transB=1),
        oh.make_node("Add", ["h", "row"], ["y"]),
    ]
    inits = [
        onnx.numpy_helper.from_array(w, "w"),
        onnx.numpy_helper.from_array(np.ones(3, np.float32), "b"),
        onnx.numpy_helper.from_array(np.full(3, 2.0, np.float32), "row"),
    ]
    g = from_onnx(model_of(nodes, [vi("x", [2, 4])], [vi("y", [2, 3])], inits))
    # w.T folded into the weight; the 1-d biases stay 1-d weights under a reshape (as the fusion rules want them)
    assert sorted(n.op for n in g.compute_nodes()) == ["add", "add", "matmul", "reshape", "reshape"]
    x = torch.randn(2, 4)
    expected = x @ torch.from_numpy(w).T + 1 + 2
    assert torch.allclose(g.run({"x": x})[0], expected)


@pytest.mark.parametrize(
    "node,inputs,why",
    [
        (oh.make_node("Gelu", ["x"], ["y"], approximate="erf"), [vi("x", [2, 3])], "approximate='erf'"),
        (
            oh.make_node("Relu", ["x"], ["y"]),
            [vi("x", [2, 3], TensorProto.DOUBLE)],
            "float32, int64, bool, float16 and bfloat16",
        ),
        (oh.make_node("Relu", ["x"], ["y"]), [vi("x", ["n", 3])], "static shapes, give the symbolic dimension"),
        (oh.make_node("Det", ["x"], ["y"]), [vi("x", [2, 3])], "not in eqsat's op set"),
        (
            oh.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], storage_order=1),
            [vi("x", [1, 1, 6, 6])],
            "storage",
        ),
    ],
)
def test_import_refuses_cleanly_naming_the_node(node, inputs, why):
    node.name = "the_node"
    with pytest.raises(FrontendError, match=why) as e:
        from_onnx(model_of([node], inputs, [vi("y", None)]))
    if "input" not in str(e.value):
        assert f"ONNX node 'the_node' ({node.op_type})" in str(e.value)


def test_missing_file_is_a_frontend_error(tmp_path):
    with pytest.raises(FrontendError, match="does not exist"):
        from_onnx(tmp_path / "nope.onnx")
    with pytest.raises(FrontendError, match="does not exist"):
        load_graph(tmp_path / "nope.eqsat")


@pytest.mark.slow  # ~7 s: the bench over a few hundred node tests (the importer is tested fast above)
def test_conformance_bench_on_a_few_node_tests():
    from bench.onnx_conformance import collect, run_case, summarize

    refused = "test_maxpool_with_argmax_2d_precomputed_strides"  # storage_order=1
    cases = [c for c in collect("test_relu") + collect(refused) + collect("test_add_uint8")]
    results = {r.name: r for r in (run_case(c) for c in cases)}
    assert results["test_relu"].status == "passed"
    assert results[refused].status == "failed"
    assert "MaxPool" in results[refused].why
    assert results["test_add_uint8"].status == "unsupported"
    s = summarize(list(results.values()))
    assert s["wrong"] == 0 and s["crashed"] == 0
