"""ONNX control flow imported with static shapes: If (folded or both branches under ``where``), Loop and Scan
unrolled; each model checked against onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper  # noqa: E402

from rewrite.frontends.onnx import from_onnx  # noqa: E402
from rewrite.ir.errors import FrontendError  # noqa: E402

F = TP.FLOAT


def _model(nodes, inputs, outputs, inits=(), opset=17):
    g = oh.make_graph(nodes, "m", inputs, outputs, list(inits))
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])


def _const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def _check(model, feeds):
    graph = from_onnx(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    got = graph.run({k: __import__("torch").from_numpy(v) for k, v in feeds.items()})
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6)
    return graph


def _branch(name, op, operand):
    """A branch graph of one node: ``op(x, operand)`` into output ``name``_y (reads the outer ``x``)."""
    return oh.make_graph(
        [oh.make_node(op, ["x", f"{name}_c"], [f"{name}_y"])],
        name,
        [],
        [oh.make_tensor_value_info(f"{name}_y", F, [2, 3])],
        [_const(f"{name}_c", np.float32(operand))],
    )


def test_if_on_a_shape_condition_imports_only_the_branch_taken():
    nodes = [
        oh.make_node("Shape", ["x"], ["s"]),
        oh.make_node("Gather", ["s", "zero"], ["d0"], axis=0),
        oh.make_node("Equal", ["d0", "two"], ["cond"]),
        oh.make_node("If", ["cond"], ["y"], then_branch=_branch("t", "Add", 1.0), else_branch=_branch("e", "Mul", 3.0)),
    ]
    inits = [_const("zero", np.int64(0)), _const("two", np.int64(2))]
    m = _model(nodes, [oh.make_tensor_value_info("x", F, [2, 3])], [oh.make_tensor_value_info("y", F, [2, 3])], inits)
    graph = _check(m, {"x": np.random.default_rng(0).standard_normal((2, 3), dtype=np.float32)})
    ops = [n.op for n in graph]
    assert "add" in ops and "mul" not in ops and "where" not in ops


def test_if_on_a_run_time_condition_selects_between_both_branches():
    nodes = [
        oh.make_node("ReduceSum", ["x"], ["t"], keepdims=0),
        oh.make_node("Greater", ["t", "zero"], ["cond"]),
        oh.make_node("If", ["cond"], ["y"], then_branch=_branch("t", "Add", 1.0), else_branch=_branch("e", "Mul", 3.0)),
    ]
    m = _model(
        nodes,
        [oh.make_tensor_value_info("x", F, [2, 3])],
        [oh.make_tensor_value_info("y", F, [2, 3])],
        [_const("zero", np.float32(0))],
    )
    x = np.arange(6, dtype=np.float32).reshape(2, 3) - 1.0
    graph = _check(m, {"x": x})  # sum 9 > 0: the then branch
    _check(m, {"x": -x})  # and the else branch
    assert "where" in [n.op for n in graph]


def test_if_on_a_run_time_condition_refuses_branches_of_different_shapes():
    other = oh.make_graph(
        [oh.make_node("ReduceSum", ["x"], ["e_y"], keepdims=1)], "e", [], [oh.make_tensor_value_info("e_y", F, None)]
    )
    nodes = [
        oh.make_node("ReduceSum", ["x"], ["t"], keepdims=0),
        oh.make_node("Greater", ["t", "zero"], ["cond"]),
        oh.make_node("If", ["cond"], ["y"], name="pick", then_branch=_branch("t", "Add", 1.0), else_branch=other),
    ]
    m = _model(
        nodes,
        [oh.make_tensor_value_info("x", F, [2, 3])],
        [oh.make_tensor_value_info("y", F, None)],
        [_const("zero", np.float32(0))],
    )
    with pytest.raises(FrontendError, match=r"ONNX node 'pick' \(If\): .*both branches.*output 0 is float32\[2, 3\]"):
        from_onnx(m)


def _loop_body(*cond_nodes):
    """Body (i, cond_in, acc) -> (cond_out, acc + x * i, acc + x * i): a carried value and a scan output."""
    nodes = [
        oh.make_node("Cast", ["i"], ["fi"], to=F),
        oh.make_node("Mul", ["x", "fi"], ["xi"]),
        oh.make_node("Add", ["acc", "xi"], ["acc_out"]),
        oh.make_node("Identity", ["acc_out"], ["scan_out"]),
        *cond_nodes,
    ]
    return oh.make_graph(
        nodes,
        "body",
        [
            oh.make_tensor_value_info("i", TP.INT64, []),
            oh.make_tensor_value_info("cond_in", TP.BOOL, []),
            oh.make_tensor_value_info("acc", F, [3]),
        ],
        [
            oh.make_tensor_value_info("cond_out", TP.BOOL, []),
            oh.make_tensor_value_info("acc_out", F, [3]),
            oh.make_tensor_value_info("scan_out", F, [3]),
        ],
    )


def _loop_model(body, trip=5):
    nodes = [oh.make_node("Loop", ["M", "c0", "acc0"], ["acc", "scans"], name="loop", body=body)]
    inits = [_const("M", np.int64(trip)), _const("c0", np.bool_(True)), _const("acc0", np.zeros(3, np.float32))]
    return _model(
        nodes,
        [oh.make_tensor_value_info("x", F, [3])],
        [oh.make_tensor_value_info("acc", F, [3]), oh.make_tensor_value_info("scans", F, None)],
        inits,
    )


def test_loop_with_a_known_trip_count_is_unrolled():
    m = _loop_model(_loop_body(oh.make_node("Identity", ["cond_in"], ["cond_out"])), trip=5)
    graph = _check(m, {"x": np.array([1.0, -2.0, 0.5], np.float32)})
    assert graph.shape_of(graph.outputs[1]) == (5, 3)


def test_loop_condition_folded_from_the_iteration_count_ends_it_early():
    """cond_out = i < 2: three iterations of a trip count of 10."""
    body = _loop_body(oh.make_node("Less", ["i", "two"], ["cond_out"]))
    body.initializer.append(_const("two", np.int64(2)))
    graph = _check(_loop_model(body, trip=10), {"x": np.array([1.0, 2.0, 3.0], np.float32)})
    assert graph.shape_of(graph.outputs[1]) == (3, 3)


def test_loop_condition_from_run_time_values_is_refused_naming_the_iteration():
    body = _loop_body(
        oh.make_node("Greater", ["acc_out", "zero"], ["cond_vec"]),
        oh.make_node("Cast", ["cond_vec"], ["cond_f"], to=F),
        oh.make_node("ReduceMin", ["cond_f"], ["cond_min"], keepdims=0),
        oh.make_node("Cast", ["cond_min"], ["cond_out"], to=TP.BOOL),
    )
    body.initializer.append(_const("zero", np.float32(0)))
    with pytest.raises(FrontendError, match=r"ONNX node 'loop' \(Loop\): .*run-time values \(iteration 0\)"):
        from_onnx(_loop_model(body))


def test_a_node_eqsat_cannot_import_in_a_body_is_named_with_its_loop_and_iteration():
    body = _loop_body(oh.make_node("Identity", ["cond_in"], ["cond_out"]))
    body.node.insert(0, oh.make_node("Unique", ["x"], ["u"], name="uniq"))
    with pytest.raises(FrontendError, match=r"ONNX node 'loop' \(Loop\), iteration 0: ONNX node 'uniq' \(Unique\)"):
        from_onnx(_loop_model(body))


def test_scan_sums_in_both_directions_and_stacks_on_another_axis():
    """State s (2,) and input rows x[t] (t along axis 1 of x), reversed; outputs stacked along axis 1."""
    body = oh.make_graph(
        [oh.make_node("Add", ["s", "xt"], ["s_out"]), oh.make_node("Mul", ["s_out", "xt"], ["y_t"])],
        "body",
        [oh.make_tensor_value_info("s", F, [2]), oh.make_tensor_value_info("xt", F, [2])],
        [oh.make_tensor_value_info("s_out", F, [2]), oh.make_tensor_value_info("y_t", F, [2])],
    )
    node = oh.make_node(
        "Scan",
        ["s0", "x"],
        ["s", "y"],
        body=body,
        num_scan_inputs=1,
        scan_input_axes=[1],
        scan_input_directions=[1],
        scan_output_axes=[1],
    )
    m = _model(
        [node],
        [oh.make_tensor_value_info("s0", F, [2]), oh.make_tensor_value_info("x", F, [2, 4])],
        [oh.make_tensor_value_info("s", F, [2]), oh.make_tensor_value_info("y", F, [2, 4])],
    )
    rng = np.random.default_rng(1)
    _check(m, {"s0": rng.standard_normal(2, dtype=np.float32), "x": rng.standard_normal((2, 4), dtype=np.float32)})


def test_names_inside_a_body_do_not_leak_out():
    """Each iteration's ``xi`` is its own; after the Loop the outer graph cannot read it."""
    m = _loop_model(_loop_body(oh.make_node("Identity", ["cond_in"], ["cond_out"])), trip=2)
    m.graph.node.append(oh.make_node("Identity", ["xi"], ["leak"]))
    m.graph.output.append(oh.make_tensor_value_info("leak", F, [3]))
    with pytest.raises(FrontendError, match=r"input\(s\) \['xi'\] are not defined"):
        from_onnx(m)
