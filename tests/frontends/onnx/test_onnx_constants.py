"""ONNX import of constants and of what it refuses: ops on constants fold at import (with or without a handler),
int32 is computed as int64 and says so, and a refusal is one FrontendError line naming the node and op."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto  # noqa: E402
from onnx import helper as oh  # noqa: E402

from rewrite.frontends.onnx import from_onnx  # noqa: E402
from rewrite.ir.errors import FrontendError  # noqa: E402
from tests.frontends.onnx.onnx_nodes import INT, F, X, _check_node, _model  # noqa: E402


def test_ops_on_constants_fold_even_without_a_handler():
    """Exporters leave Pow, ScatterND, Trilu, Einsum and a bicubic Resize on parameters and shapes; with
    every input constant they fold (onnx's reference evaluator for the ops eqsat has no handler or kernel
    for), so only the op on the run-time input stays."""
    table = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    nodes = [
        oh.make_node("Pow", ["two", "three"], ["eight"]),  # 8.0
        oh.make_node("Resize", ["table", "", "", "sz"], ["big"], mode="cubic"),  # [1, 1, 4, 5]
        oh.make_node("Einsum", ["big", "big"], ["gram"], equation="abij,abkj->abik"),  # [1, 1, 4, 4]
        oh.make_node("Trilu", ["gram"], ["causal"]),
        oh.make_node("ScatterND", ["causal", "at", "val"], ["bias"]),
        oh.make_node("Mul", ["bias", "eight"], ["scaled"]),
    ]
    inits = [
        ("two", np.array(2.0, np.float32)),
        ("three", np.array(3.0, np.float32)),
        ("table", table),
        ("sz", np.array([1, 1, 4, 5], np.int64)),
        ("at", np.array([[0, 0, 3, 0]], np.int64)),
        ("val", np.array([-1.5], np.float32)),
    ]
    graph = _check_node(oh.make_node("Add", ["x", "scaled"], ["y"]), [("x", F, [2, 3, 4, 4])], inits, nodes=nodes)
    assert [n.op for n in graph.compute_nodes()] == ["add"]


def test_a_run_time_cast_to_int32_is_computed_as_int64_and_says_so():
    nodes = [oh.make_node("Cast", ["x"], ["i32"], to=TensorProto.INT32), oh.make_node("Add", ["i32", "one"], ["s"])]
    node = oh.make_node("Cast", ["s"], ["y"], to=INT)
    with pytest.warns(UserWarning, match="int32 values as int64"):
        _check_node(node, X, [("one", np.array([1], np.int32))], nodes=nodes)


def test_constant_arithmetic_of_exports_folds_at_import():
    """T5's relative position buckets, as torch's exporter writes them: Log of a constant that holds 0,
    Cast to int64 (log(0) = -inf has no integer; the Where discards it), Min, Floor; all constant here."""
    rel = np.array([[0, 1, 3], [2, 0, 9]], np.int64)
    nodes = [
        oh.make_node("Cast", ["rel"], ["relf"], to=F),
        oh.make_node("Log", ["relf"], ["lg"]),
        oh.make_node("Floor", ["lg"], ["fl"]),
        oh.make_node("Cast", ["fl"], ["li"], to=INT),
        oh.make_node("Mod", ["li", "cap"], ["md"]),  # Python's %: the divisor's sign
        oh.make_node("Min", ["md", "cap"], ["lim"]),
        oh.make_node("Less", ["rel", "one"], ["small"]),
        oh.make_node("Where", ["small", "rel", "lim"], ["bucket"]),
        oh.make_node("Gather", ["table", "bucket"], ["bias"]),
    ]
    table = np.arange(10, dtype=np.float32) * 0.5
    inits = [("rel", rel), ("cap", np.array(5, np.int64)), ("one", np.array(1, np.int64)), ("table", table)]
    node = oh.make_node("Add", ["x", "bias"], ["y"])
    graph = _check_node(node, [("x", F, [2, 3])], inits, nodes=nodes)
    assert sorted(n.op for n in graph.compute_nodes()) == ["add"]


@pytest.mark.parametrize(
    "node,inputs,inits,why",
    [
        (oh.make_node("Pad", ["x", "p"], ["y"], mode="reflect"), X, [("p", np.zeros(8, np.int64))], "mode 'reflect'"),
        (
            oh.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="cubic", keep_aspect_ratio_policy="not_larger"),
            X,
            [("sz", np.array([2, 3, 5, 6]))],
            "keep_aspect_ratio_policy 'not_larger' with mode 'cubic'",
        ),
        (oh.make_node("Pow", ["i", "x"], ["y"]), [("i", INT, [2, 3, 4, 4]), *X], [], "base is int64"),
        (oh.make_node("Cast", ["x"], ["y"], to=TensorProto.DOUBLE), X, [], "cast to double"),
        (oh.make_node("NonZero", ["x"], ["y"]), X, [], "not in eqsat's op set"),
        (oh.make_node("Reshape", ["x", "s"], ["y"]), [*X, ("s", INT, [2])], [], "must be a constant"),
    ],
)
def test_refusals_are_one_line_frontend_errors_naming_node_and_op(node, inputs, inits, why):
    node.name = "the_node"
    with pytest.raises(FrontendError, match=why) as e:
        from_onnx(_model(node, inputs, inits))
    msg = str(e.value)
    assert f"ONNX node 'the_node' ({node.op_type})" in msg and "\n" not in msg


def test_ops_a_handler_builds_from_constants_fold_and_leave_nothing_behind():
    """OneHot and ReduceProd have handlers that build graph ops; on constants (an exporter's shape
    arithmetic: a numel for a Reshape, CANINE's one-hot of hashed ids feeding a Tile's repeats) the
    reference folds them, so what reads them sees a constant, and the ops they built are pruned."""
    nodes = [
        oh.make_node("OneHot", ["idx", "d", "v"], ["hot"]),
        oh.make_node("ReduceSum", ["hot", "ax0"], ["reps"], keepdims=0),  # [3, 2, 3]: a Tile's repeats
        oh.make_node("ReduceProd", ["s"], ["numel"], keepdims=1),  # [6]: a Reshape's shape
        oh.make_node("Reshape", ["x", "numel"], ["flat"]),
        oh.make_node("Reshape", ["flat", "col"], ["col6"]),
    ]
    inits = [
        ("idx", np.array([0, 2], np.int64)),
        ("d", np.array(3, np.int64)),
        ("v", np.array([1, 2], np.int64)),
        ("ax0", np.array([0], np.int64)),
        ("s", np.array([2, 3], np.int64)),
        ("col", np.array([6, 1], np.int64)),
    ]
    tile = oh.make_node("Tile", ["col6", "two_reps"], ["y"])
    nodes.append(oh.make_node("Slice", ["reps", "st", "en"], ["two_reps"]))  # [3, 2]: 2-d repeats
    inits += [("st", np.array([0], np.int64)), ("en", np.array([2], np.int64))]
    graph = _check_node(tile, [("x", F, [2, 3])], inits, nodes=nodes)
    assert {n.op for n in graph.compute_nodes()} <= {"reshape", "concat", "identity"}
