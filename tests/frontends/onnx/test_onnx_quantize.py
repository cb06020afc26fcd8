"""QDQ models: QuantizeLinear -> DequantizeLinear pairs on activations computed in float32 as the spec
defines them (exact for int8/uint8/int16), int8 weights behind DequantizeLinear folded at import; compared
with onnx's reference evaluator and onnxruntime; a quantized tensor read by anything else is refused."""

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, numpy_helper  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rewrite.frontends.onnx import from_onnx  # noqa: E402
from rewrite.ir.errors import FrontendError  # noqa: E402
from rewrite.pipeline import compile  # noqa: E402

F = TensorProto.FLOAT


def _qdq_conv_model(act_type: int, per_channel: bool) -> onnx.ModelProto:
    """x -> Q/DQ -> Conv (int8 weights, per-channel or per-tensor, DQ) -> Relu -> Q/DQ (act_type) -> y."""
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
    w_scale = (rng.random(4) * 0.02 + 0.005).astype(np.float32) if per_channel else np.float32(0.01)
    w_zp = np.zeros(4 if per_channel else (), np.int8)
    act_np = {TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8, TensorProto.INT16: np.int16}[act_type]
    inits = [
        numpy_helper.from_array(w, "w_q"),
        numpy_helper.from_array(np.asarray(w_scale), "w_s"),
        numpy_helper.from_array(w_zp, "w_zp"),
        numpy_helper.from_array(np.float32(0.03), "x_s"),
        numpy_helper.from_array(np.asarray(3 if act_np is not np.uint8 else 128, act_np), "x_zp"),
        numpy_helper.from_array(np.float32(0.05), "y_s"),
        numpy_helper.from_array(np.asarray(-5 if act_np is not np.uint8 else 10, act_np), "y_zp"),
        numpy_helper.from_array(np.linspace(-0.5, 0.5, 4).astype(np.float32), "b"),
    ]
    nodes = [
        oh.make_node("QuantizeLinear", ["x", "x_s", "x_zp"], ["xq"]),
        oh.make_node("DequantizeLinear", ["xq", "x_s", "x_zp"], ["xd"]),
        oh.make_node("DequantizeLinear", ["w_q", "w_s", "w_zp"], ["wd"], axis=0),
        oh.make_node("Conv", ["xd", "wd", "b"], ["c"], pads=[1, 1, 1, 1]),
        oh.make_node("Relu", ["c"], ["r"]),
        oh.make_node("QuantizeLinear", ["r", "y_s", "y_zp"], ["rq"]),
        oh.make_node("DequantizeLinear", ["rq", "y_s", "y_zp"], ["y"]),
    ]
    g = oh.make_graph(
        nodes,
        "qdq",
        [oh.make_tensor_value_info("x", F, [1, 3, 8, 8])],
        [oh.make_tensor_value_info("y", F, None)],
        inits,
    )
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 21)])


def _within_one_step(got: np.ndarray, want: np.ndarray, step: float) -> None:
    """Equal but where the convolution's float sum, rounded in another order, lands a hair across a rounding
    tie: one quantization step there, and rarely."""
    diff = np.abs(got - want)
    assert diff.max() <= step + 1e-6
    assert (diff > 1e-6).mean() <= 0.01


@pytest.mark.parametrize("act_type", [TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16])
@pytest.mark.parametrize("per_channel", [False, True])
def test_qdq_model_matches_the_reference(act_type, per_channel):
    model = _qdq_conv_model(act_type, per_channel)
    x = (np.random.default_rng(1).standard_normal((1, 3, 8, 8)) * 2).astype(np.float32)  # some saturate
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    graph = from_onnx(model)
    assert {"round", "clamp"} <= {n.op for n in graph}  # the activation pairs are computed, the weights folded
    got = compile(graph)({"x": torch.from_numpy(x)})[0].numpy()
    _within_one_step(got, want, 0.05)
    if act_type != TensorProto.INT16:  # onnxruntime runs int8/uint8 QDQ
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        _within_one_step(got, sess.run(None, {"x": x})[0], 0.05)


def test_a_uint8_quantized_tensor_is_one_uint8_tensor_that_every_reader_shares():
    """A uint8 QuantizeLinear's result is cast to uint8 once: the integer convolution reads those bytes and each
    DequantizeLinear widens them back (exact), so the float32 clip has one reader and a kernel that computes it
    stores bytes.  Both outputs are onnxruntime's."""
    model = _qdq_conv_model(TensorProto.UINT8, True)
    model.graph.output.append(oh.make_tensor_value_info("xd", F, None))  # the input's quantized value too
    g = from_onnx(model)
    to_bytes = {n.id for n in g if n.op == "cast" and n.attrs["dtype"] == "uint8"}
    assert len(to_bytes) == 2 and all(g.nodes[g.nodes[i].inputs[0].node].op == "clamp" for i in to_bytes)
    (conv,) = (n for n in g if n.op == "conv2d_integer")
    assert conv.inputs[0].node in to_bytes
    widened = [n for n in g if n.op == "cast" and n.attrs["dtype"] == "float32" and n.inputs[0].node in to_bytes]
    assert len(widened) == 2  # each DequantizeLinear
    x = (np.random.default_rng(1).standard_normal((1, 3, 8, 8)) * 2).astype(np.float32)
    got = [t.numpy() for t in compile(g)({"x": torch.from_numpy(x)})]
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    _within_one_step(got[0], want[0], 0.05)
    np.testing.assert_array_equal(got[1], want[1])


def test_quantize_dequantize_of_an_input_is_exact():
    """Without a sum in between, the pair is exactly the spec's: round half to even, saturated."""
    model = _qdq_conv_model(TensorProto.INT8, False)
    del model.graph.node[2:]
    model.graph.output[0].name = "xd"
    x = np.concatenate([np.arange(-300, 300) * 0.015, [0.045, -0.045, 0.075]]).astype(np.float32).reshape(1, 1, 1, -1)
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_value = 1
    model.graph.input[0].type.tensor_type.shape.dim[2].dim_value = 1
    model.graph.input[0].type.tensor_type.shape.dim[3].dim_value = x.shape[-1]
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = compile(from_onnx(model))({"x": torch.from_numpy(x)})[0].numpy()
    np.testing.assert_array_equal(got, want)


def test_a_quantized_tensor_read_by_another_op_is_refused_naming_both():
    model = _qdq_conv_model(TensorProto.INT8, False)
    model.graph.node.insert(1, oh.make_node("Relu", ["xq"], ["oops"]))
    with pytest.raises(FrontendError, match=r"\(Relu\): reads 'xq', the int8 output of ONNX node .*QuantizeLinear"):
        from_onnx(model)


def test_a_quantized_graph_output_is_refused():
    model = _qdq_conv_model(TensorProto.UINT8, False)
    model.graph.output.append(oh.make_tensor_value_info("rq", TensorProto.UINT8, None))
    with pytest.raises(FrontendError, match="rq"):
        from_onnx(model)


def _quantized_mlp(tmp_path, gemm: bool) -> tuple[str, np.ndarray]:
    """A Linear-ReLU-Linear block quantized by onnxruntime's quantize_static (QDQ, per-channel int8 weights,
    uint8 activations), as a Gemm (2-d input) or a MatMul (3-d input)."""
    quantization = pytest.importorskip("onnxruntime.quantization")
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 16)).eval()
    shape = (8, 32) if gemm else (1, 8, 32)
    rng = np.random.default_rng(1)
    q = _quantize_static(quantization, m, shape, tmp_path / "mlp", quantization.QuantFormat.QDQ, rng)
    return q, rng.standard_normal(shape).astype(np.float32)


def _quantize_static(quantization, m: torch.nn.Module, shape: tuple[int, ...], stem, fmt, rng) -> str:
    """``m`` exported to ONNX and quantized by onnxruntime's quantize_static in format ``fmt`` (per-channel int8
    weights, uint8 activations, calibrated on 8 random inputs drawn from ``rng``); the quantized file's path."""
    fp32, q = f"{stem}.onnx", f"{stem}_q.onnx"
    torch.onnx.export(m, (torch.randn(shape),), fp32, input_names=["x"], dynamo=False)

    class Reader(quantization.CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter([{"x": rng.standard_normal(shape).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.batches, None)

    quantization.quantize_static(
        fp32,
        q,
        Reader(),
        quant_format=fmt,
        per_channel=True,
        activation_type=quantization.QuantType.QUInt8,
        weight_type=quantization.QuantType.QInt8,
        # 7-bit weights: on a host without AVX-512 VNNI onnxruntime's uint8 x int8 kernels add products in
        # pairs saturated at int16 (vpmaddubsw: 255 * -128 twice), where eqsat's sums are exact; 255 * 64 twice
        # fits, so both are exact on every host (onnxruntime's advice for non-VNNI machines)
        reduce_range=True,
    )
    return q


@pytest.mark.parametrize("gemm", [True, False])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_quantized_linear_layers_compute_on_the_integers_as_onnxruntime(tmp_path, gemm):
    """A QDQ model's linear layers import as matmul_integer on the uint8 activations and int8 weights (exact
    int32 sums times the two scales, onnxruntime's MatMulIntegerToFloat), and the compiled model's output is
    onnxruntime's int8 output: within one output quantization step everywhere (its requantization may
    round a tie the other way), equal almost everywhere."""
    path, x = _quantized_mlp(tmp_path, gemm)
    g = from_onnx(path)
    assert sum(n.op == "matmul_integer" for n in g.nodes.values()) == 2
    assert not any(n.op == "matmul" for n in g.nodes.values())
    want = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = compile(g, target="llvm")({"x": torch.from_numpy(x)})[0].numpy()
    y_scale = [numpy_helper.to_array(t) for t in onnx.load(path).graph.initializer if t.name.endswith("scale")]
    step = float(min(s.min() for s in y_scale if s.size == 1))
    assert np.abs(got - want).max() <= step * 1.001
    assert np.mean(got == want) >= 0.99


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_qoperator_convolutions_equal_onnxruntime_bit_for_bit(tmp_path):
    """A CNN quantized by quantize_static in the QOperator format (QLinearConv nodes, int32 biases) imports as
    conv2d_integer plus onnxruntime's requantization (bias added in integers, the float32 multiplier, round to
    even, zero point, saturate), so the compiled model's uint8 results, dequantized, are onnxruntime's exactly."""
    quantization = pytest.importorskip("onnxruntime.quantization")
    torch.manual_seed(0)
    m = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, padding=1, stride=2),
        torch.nn.ReLU(),
        torch.nn.Conv2d(32, 8, 1),
    ).eval()
    rng = np.random.default_rng(2)
    q = _quantize_static(quantization, m, (1, 3, 16, 16), tmp_path / "cnn", quantization.QuantFormat.QOperator, rng)
    assert [n.op_type for n in onnx.load(str(q)).graph.node].count("QLinearConv") == 3
    g = from_onnx(str(q))
    assert sum(n.op == "conv2d_integer" for n in g.nodes.values()) == 3
    x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
    want = ort.InferenceSession(str(q), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = compile(g, target="llvm")({"x": torch.from_numpy(x)})[0].numpy()
    assert np.array_equal(got, want)


def test_qoperator_node_reading_a_non_quantized_input_is_refused_naming_it():
    nodes = [
        oh.make_node("QLinearMatMul", ["x", "s", "z", "w", "s", "wz", "s", "z"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.float32(0.1), "s"),
        numpy_helper.from_array(np.uint8(0), "z"),
        numpy_helper.from_array(np.ones((4, 2), np.int8), "w"),
        numpy_helper.from_array(np.int8(0), "wz"),
    ]
    g = oh.make_graph(
        nodes, "q", [oh.make_tensor_value_info("x", F, [2, 4])], [oh.make_tensor_value_info("y", F, None)], inits
    )
    with pytest.raises(FrontendError, match="QLinearMatMul.*input 'x' is not a quantized run-time tensor"):
        from_onnx(oh.make_model(g, opset_imports=[oh.make_opsetid("", 21)]))
