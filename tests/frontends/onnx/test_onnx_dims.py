"""ONNX models with open dimensions (``dim_param``, unnamed ``?``): sized by ``from_onnx(dims=...)`` or the CLI's
``--shape``, each size a static graph that matches onnxruntime; left open, one line naming what to size and how."""

from pathlib import Path

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper, numpy_helper

from rewrite.cli.main import main
from rewrite.frontends.onnx import from_onnx, load, symbolic_dims
from rewrite.frontends.onnx.importer import OpenDimensions
from rewrite.ir.errors import FrontendError, UsageError

ort = pytest.importorskip("onnxruntime")


def dynamic_model(x_dims: list = ["batch", "seq", 16]) -> onnx.ModelProto:  # noqa: B006 (never mutated)
    """relu(x @ w + b) reshaped by its own Shape to (batch, -1): the sizes reach the graph through Shape, too."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    zero = numpy_helper.from_array(np.array([0], np.int64), "zero")
    rest = numpy_helper.from_array(np.array([-1], np.int64), "rest")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"]),
        helper.make_node("Add", ["xw", "b"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Shape", ["x"], ["sx"]),
        helper.make_node("Gather", ["sx", "zero"], ["n"], axis=0),
        helper.make_node("Concat", ["n", "rest"], ["target"], axis=0),
        helper.make_node("Reshape", ["r", "target"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "dyn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "flat"])],
        [w, b, zero, rest],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_symbolic_dims_are_listed_with_the_inputs_using_them():
    assert symbolic_dims(dynamic_model()) == {"batch": ["x"], "seq": ["x"]}


@pytest.mark.parametrize("dims", [{"batch": 1, "seq": 3}, {"batch": 4, "seq": 7}, {"x": (2, 5, 16)}])
def test_each_size_imports_as_a_static_graph_matching_onnxruntime(dims):
    model = dynamic_model()
    g = from_onnx(model, dims=dims)
    shape = dims.get("x") or (dims["batch"], dims["seq"], 16)
    assert g.inputs[0].shapes[0] == shape
    x = torch.randn(shape)
    (ours,) = g.run({"x": x})
    (ref,) = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x.numpy()})
    assert ours.shape == ref.shape == (shape[0], shape[1] * 8)
    np.testing.assert_allclose(ours.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_an_open_dimension_left_unsized_names_what_to_give():
    with pytest.raises(OpenDimensions, match=r"\[batch, seq, 16\].*dims=\{'batch': N, 'seq': N\}.*--shape batch=N"):
        from_onnx(dynamic_model())
    with pytest.raises(OpenDimensions, match=r"dims=\{'seq': N\} \(CLI: --shape seq=N\)"):
        from_onnx(dynamic_model(), dims={"batch": 2})  # only what is still open
    with pytest.raises(OpenDimensions, match=r"\[batch, \?, 16\].*give the input a shape.*--shape x=AxB"):
        from_onnx(dynamic_model(["batch", None, 16]), dims={"batch": 2})
    assert issubclass(OpenDimensions, FrontendError) and OpenDimensions.exit_code == 2


@pytest.mark.parametrize(
    "dims, why",
    [
        ({"batch": 0, "seq": 2}, "'batch' = 0: sizes are positive integers"),
        ({"batch": 2.5}, "sizes are positive integers"),
        ({"nope": 3}, r"'nope' is neither a symbolic dimension nor a graph input of dyn \(known: batch, seq, x\)"),
        ({"batch": (2, 3)}, "'batch' is a symbolic dimension: give one size"),
        ({"x": (2, 5)}, r"input 'x' is \[batch, seq, 16\], rank 3, not \(2, 5\)"),
        ({"x": (2, 5, 15)}, "a fixed 16, not 15"),
        ({"batch": 2, "x": (3, 5, 16)}, "'batch' is 2, but input 'x' gives it 3"),
    ],
)
def test_bad_sizes_are_one_usage_line(dims, why):
    with pytest.raises(UsageError, match=why):
        from_onnx(dynamic_model(), dims=dims)


def test_load_passes_the_sizes_on_and_names_the_file(tmp_path):
    path = tmp_path / "dyn.onnx"
    onnx.save(dynamic_model(), str(path))
    with pytest.raises(OpenDimensions, match=f"^{path}: ONNX graph input 'x'"):
        load(path)
    assert load(path, {"batch": 3, "seq": 2}).inputs[0].shapes[0] == (3, 2, 16)


def test_the_cli_sizes_a_model_by_shape_and_writes_one_onnxruntime_runs(tmp_path, capsys):
    path, out = tmp_path / "dyn.onnx", tmp_path / "opt.onnx"
    onnx.save(dynamic_model(), str(path))
    assert main(["-q", "optimize", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--shape batch=N --shape seq=N" in err and "Traceback" not in err
    assert main(["-q", "optimize", str(path), "--shape", "batch=3", "--shape", "seq=4", "-o", str(out)]) == 0
    capsys.readouterr()
    x = np.random.default_rng(1).standard_normal((3, 4, 16)).astype(np.float32)
    (ours,) = ort.InferenceSession(str(out)).run(None, {"x": x})
    (ref,) = ort.InferenceSession(str(path)).run(None, {"x": x})
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-5)
    assert main(["-q", "optimize", str(path), "--shape", "batch=3", "--shape", "batch=4"]) == 2
    assert "'batch' is given twice" in capsys.readouterr().err


def test_shape_on_a_model_built_from_its_example_inputs_is_refused(capsys):
    assert main(["-q", "optimize", "squeezenet", "--shape", "batch=2"]) == 2
    err = capsys.readouterr().err
    assert "--shape batch: 'squeezenet' is built with its example inputs' shapes" in err


def test_a_saved_eqsat_graph_takes_no_sizes(tmp_path):
    from rewrite.frontends.onnx import save

    path = tmp_path / "g.eqsat"
    save(from_onnx(dynamic_model(), dims={"batch": 1, "seq": 1}), path)
    with pytest.raises(UsageError, match="a saved eqsat graph has static shapes"):
        load(path, {"batch": 2})
    assert isinstance(load(Path(path)).inputs[0].shapes[0], tuple)
