"""ONNX RNN, GRU and LSTM: one-node models imported, compiled and compared with onnxruntime over
directions, layouts, biases, initial states, peepholes, clip and activations; torch.onnx exports of
nn.LSTM / nn.GRU against torch; refusals as one-line FrontendErrors naming the node."""

import io

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, numpy_helper  # noqa: E402
from onnx import helper as oh  # noqa: E402

from rewrite.frontends.onnx import from_onnx  # noqa: E402
from rewrite.ir.errors import FrontendError  # noqa: E402
from rewrite.pipeline import compile  # noqa: E402
from rewrite.verification.numeric import compare_all  # noqa: E402

F = TensorProto.FLOAT
RTOL = 1e-5
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
OUTPUTS = {"RNN": ["Y", "Y_h"], "GRU": ["Y", "Y_h"], "LSTM": ["Y", "Y_h", "Y_c"]}
STATES = ("initial_h", "initial_c")  # [dirs, batch, hidden]; layout 1: [batch, dirs, hidden]


def _arrays(op, dirs, layout, seq, batch, size, hidden, extra, seed=0):
    """X, W, R and the optional inputs named in ``extra`` (B, initial_h, initial_c, P, sequence_lens)."""
    rng = np.random.default_rng(seed)
    g = GATES[op]

    def normal(*shape, scale=1.0):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    state = (batch, dirs, hidden) if layout else (dirs, batch, hidden)
    shapes = {"B": (dirs, 2 * g * hidden), "initial_h": state, "initial_c": state, "P": (dirs, 3 * hidden)}
    out = {
        "X": normal(*((batch, seq, size) if layout else (seq, batch, size))),
        "W": normal(dirs, g * hidden, size, scale=0.5),
        "R": normal(dirs, g * hidden, hidden, scale=0.5),
    }
    for k in extra:
        out[k] = np.full(batch, seq, np.int32) if k == "sequence_lens" else normal(*shapes[k])
    return out


def _node_model(op, arrays, outputs, runtime, layout, **attrs):
    """A one-node model: ``runtime`` names are graph inputs, the other arrays initializers."""
    order = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"][: 6 if op != "LSTM" else 8]
    ins = [k if k in arrays else "" for k in order]
    while not ins[-1]:
        ins.pop()
    node = oh.make_node(op, ins, outputs, name=f"my_{op.lower()}", layout=layout, **attrs)
    g = oh.make_graph(
        [node],
        "t",
        [oh.make_tensor_value_info(k, F, arrays[k].shape) for k in runtime],
        [oh.make_empty_tensor_value_info(o) for o in outputs if o],
        [numpy_helper.from_array(v, k) for k, v in arrays.items() if k not in runtime],
    )
    return onnx.shape_inference.infer_shapes(
        oh.make_model(g, opset_imports=[oh.make_opsetid("", 22)]), strict_mode=True
    )


def _ort_expected(op, arrays, outputs, runtime, layout, attrs):
    """onnxruntime's outputs; it has no layout=1 kernels, so those run as layout 0 with X, the states
    and the outputs transposed: the spec's definition of layout 1."""
    if layout:
        arrays = {k: np.ascontiguousarray(v.swapaxes(0, 1)) if k in ("X", *STATES) else v for k, v in arrays.items()}
    model = _node_model(op, arrays, outputs, runtime, 0, **attrs)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outs = sess.run(None, {k: arrays[k] for k in runtime})
    if layout:
        outs = [o.transpose(2, 0, 1, 3) if o.ndim == 4 else o.transpose(1, 0, 2) for o in outs]
    return [torch.from_numpy(np.ascontiguousarray(o)) for o in outs]


def _check(op, *, dirs=1, layout=0, seq=3, batch=2, size=3, hidden=5, extra=(), runtime=(), outputs=None, **attrs):
    direction = attrs.pop("direction", "bidirectional" if dirs == 2 else "forward")
    attrs = {"direction": direction, "hidden_size": hidden, **attrs}
    arrays = _arrays(op, dirs, layout, seq, batch, size, hidden, extra)
    outputs = outputs or OUTPUTS[op]
    runtime = ["X", *runtime]
    expected = _ort_expected(op, arrays, outputs, runtime, layout, attrs)
    graph = from_onnx(_node_model(op, arrays, outputs, runtime, layout, **attrs))
    got = compile(graph)({k: torch.from_numpy(arrays[k]) for k in runtime})
    cmp = compare_all(expected, got, RTOL)
    assert cmp.close, cmp.why
    return graph


ALL = ("B", "initial_h", "initial_c", "P")
LSTM_CASES = {
    "defaults": {},
    "bias_states": {"extra": ("B", "initial_h", "initial_c")},
    "reverse_batchwise": {"direction": "reverse", "layout": 1, "extra": ("B", "initial_h", "initial_c")},
    "bidirectional_peepholes": {"dirs": 2, "extra": ALL},
    "bidirectional_batchwise_clip": {"dirs": 2, "layout": 1, "extra": ALL, "clip": 0.4},
    "input_forget": {"extra": ("B", "initial_c"), "input_forget": 1},
    "only_y_h": {"outputs": ["", "Y_h"], "extra": ("B",)},
    "only_y_c_full_lens": {"outputs": ["", "", "Y_c"], "extra": ("sequence_lens", "initial_h")},
    "runtime_weights": {"dirs": 2, "extra": ALL, "runtime": ("W", "R", "B", "P", "initial_h", "initial_c")},
    "activations": {
        "dirs": 2,
        "extra": ALL,
        "activations": ["HardSigmoid", "ScaledTanh", "Tanh", "Sigmoid", "Affine", "Elu"],
        "activation_alpha": [0.3, 0.9, 0.5, 0.7],
        "activation_beta": [0.45, 1.2, 0.1],
        "clip": 2.0,
    },
}
GRU_CASES = {
    "defaults": {},
    "linear_before_reset": {"extra": ("B",), "linear_before_reset": 1},
    "lbr_zero_state": {"outputs": ["Y"], "extra": ("B",), "linear_before_reset": 1, "seq": 1},
    "reverse_state": {"direction": "reverse", "extra": ("B", "initial_h")},
    "bidirectional_batchwise_lbr": {"dirs": 2, "layout": 1, "extra": ("B", "initial_h"), "linear_before_reset": 1},
    "bidirectional_clip": {"dirs": 2, "extra": ("B", "initial_h"), "clip": 0.5},
    "runtime_weights": {"dirs": 2, "extra": ("B", "initial_h"), "runtime": ("W", "R", "B", "initial_h")},
    "runtime_weights_lbr": {"extra": ("B",), "runtime": ("W", "R", "B"), "linear_before_reset": 1},
    "activations": {
        "extra": ("B", "initial_h"),
        "activations": ["Sigmoid", "LeakyRelu"],
        "activation_alpha": [0.3],  # consumed by LeakyRelu, the first activation that takes one
    },
}
RNN_CASES = {
    "defaults": {"outputs": ["", "Y_h"]},
    "reverse_batchwise": {"direction": "reverse", "layout": 1, "extra": ("B", "initial_h")},
    "bidirectional_activations": {
        "dirs": 2,
        "extra": ("B", "initial_h"),
        "activations": ["Relu", "ThresholdedRelu"],
        "activation_alpha": [0.2],
    },
    "softplus_softsign_clip": {"dirs": 2, "extra": ("B",), "activations": ["Softplus", "Softsign"], "clip": 1.0},
}


@pytest.mark.parametrize(
    "op,case",
    [(op, k) for op, cases in (("LSTM", LSTM_CASES), ("GRU", GRU_CASES), ("RNN", RNN_CASES)) for k in cases],
)
def test_recurrent_node_matches_onnxruntime(op, case):
    kw = dict({"LSTM": LSTM_CASES, "GRU": GRU_CASES, "RNN": RNN_CASES}[op][case])
    _check(op, **kw)


def test_input_projection_is_one_matmul():
    """X @ W^T for every step and direction is one matmul; each step but the first (zero state) adds one."""
    graph = _check("LSTM", dirs=2, seq=3, extra=("B",))
    assert sum(n.op == "matmul" for n in graph.nodes.values()) == 1 + 2 * 2


def _export(module, x, names):
    f = io.BytesIO()
    torch.onnx.export(module.eval(), (x,), f, dynamo=False, input_names=["x"], output_names=names)
    return onnx.load_from_string(f.getvalue())


@pytest.mark.filterwarnings("ignore")  # the TorchScript exporter's deprecation and tracer warnings
@pytest.mark.parametrize(
    "module,x",
    [
        (torch.nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True), (2, 3, 4)),
        (torch.nn.GRU(4, 6, num_layers=2), (3, 2, 4)),
    ],
    ids=["lstm_2layer_bidirectional_batch_first", "gru_2layer"],
)
def test_torch_export_matches_torch(module, x):
    torch.manual_seed(0)
    for p in module.parameters():
        torch.nn.init.uniform_(p, -0.5, 0.5)
    x = torch.randn(x)
    lstm = isinstance(module, torch.nn.LSTM)
    model = _export(module, x, ["y", "h", "c"] if lstm else ["y", "h"])
    assert any(n.op_type == ("LSTM" if lstm else "GRU") for n in model.graph.node)
    got = compile(from_onnx(model))({"x": x})
    with torch.no_grad():
        y, state = module(x)
    cmp = compare_all([y, *(state if lstm else (state,))], got, RTOL)
    assert cmp.close, cmp.why


def _refusal_model(attrs, lens=None, w_dtype=np.float32):
    """An LSTM over a run-time X [3, 2, 3]; ``lens``: a constant, or 'input' for a run-time int64 one
    (eqsat has no int32 values at run time, so a spec-typed one never reaches the node)."""
    arrays = {k: v for k, v in _arrays("LSTM", 1, 0, 3, 2, 3, 4, ()).items()}
    arrays["W"] = arrays["W"].astype(w_dtype)
    inputs = [oh.make_tensor_value_info("X", F, arrays["X"].shape)]
    ins = ["X", "W", "R"]
    if lens is not None:
        ins += ["", "lens"]
        if isinstance(lens, str):
            inputs.append(oh.make_tensor_value_info("lens", TensorProto.INT64, [2]))
        else:
            arrays["lens"] = np.array(lens, np.int32)
    node = oh.make_node("LSTM", ins, ["Y"], name="enc_lstm", hidden_size=4, **attrs)
    inits = [numpy_helper.from_array(v, k) for k, v in arrays.items() if k != "X"]
    g = oh.make_graph([node], "t", inputs, [oh.make_empty_tensor_value_info("Y")], inits)
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 22)])


@pytest.mark.parametrize(
    "attrs,lens,w_dtype,why",
    [
        ({}, "input", np.float32, "sequence_lens 'lens' must be a constant"),
        ({}, [3, 2], np.float32, "sequence_lens [3, 2] differ from seq_length 3"),
        ({"activations": ["Sigmoid", "Gelu", "Tanh"]}, None, np.float32, "activation 'Gelu' is not supported"),
        ({"activations": ["Sigmoid", "Tanh"]}, None, np.float32, "takes 3"),
        ({"activations": ["Sigmoid", "Affine", "Tanh"]}, None, np.float32, "'Affine' needs activation_alpha"),
        ({"activation_alpha": [0.5]}, None, np.float32, "no activation of"),
        ({}, None, np.float64, "input 'W' has dtype float64"),
    ],
    ids=["runtime_lens", "short_lens", "unknown_activation", "activation_count", "no_alpha", "spare_alpha", "float64"],
)
def test_refusals_name_the_node_and_why(attrs, lens, w_dtype, why):
    with pytest.raises(FrontendError) as err:
        from_onnx(_refusal_model(attrs, lens, w_dtype))
    msg = str(err.value)
    assert "'enc_lstm' (LSTM)" in msg and why in msg and "\n" not in msg, msg


def test_all_constant_refusal_is_not_folded():
    """A refused node of constants only stays refused: onnx's reference (the importer's fallback fold)
    ignores activations, so it would compute a different function."""
    model = _refusal_model({"activations": ["Sigmoid", "Gelu", "Tanh"]})
    x = numpy_helper.from_array(_arrays("LSTM", 1, 0, 3, 2, 3, 4, ())["X"], "X")
    model.graph.initializer.append(x)
    del model.graph.input[:]
    with pytest.raises(FrontendError, match="'enc_lstm' \\(LSTM\\): activation 'Gelu' is not supported"):
        from_onnx(model)


def test_an_lstm_of_constants_is_unrolled_not_folded_by_the_reference():
    """Every input a constant: the importer would fold such a node with onnx's reference, whose LSTM ignores
    activations and clip; recurrent layers are never folded so, and the unrolled cell matches onnxruntime."""
    attrs = {"direction": "forward", "hidden_size": 4, "activations": ["HardSigmoid", "Relu", "Tanh"], "clip": 0.8}
    arrays = _arrays("LSTM", 1, 0, 3, 2, 3, 4, ("B",))
    expected = _ort_expected("LSTM", arrays, ["Y"], [], 0, attrs)
    graph = from_onnx(_node_model("LSTM", arrays, ["Y"], [], 0, **attrs))
    assert "matmul" in {n.op for n in graph}  # computed by the unrolled cell, not a folded constant
    cmp = compare_all(expected, compile(graph)({}), RTOL)
    assert cmp.close, cmp.why
