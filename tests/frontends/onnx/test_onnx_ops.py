"""ONNX for the whole op set: one-node models imported, compiled and compared with onnxruntime, and a whole
exported model reaching the fused ops.  Beside it: test_onnx_contraction.py (transposed and 3-d convolutions,
Col2Im, Einsum), test_onnx_scatter.py (scatters, TopK), test_onnx_constants.py (folding at import, refusals);
the export direction, to_onnx and exporters' models, is test_onnx_export.py.  The model builders are
onnx_nodes.py."""

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rewrite.frontends.onnx import from_onnx  # noqa: E402
from rewrite.pipeline import compile  # noqa: E402
from rewrite.verification.numeric import compare_all  # noqa: E402
from tests.frontends.onnx.onnx_nodes import INT, B, F, X, _check_node, _feed, _model, _ort  # noqa: E402

CASES = {
    "sqrt_abs": (oh.make_node("Sqrt", ["a"], ["y"]), X, [], "Abs"),  # Abs first: Sqrt of |x|
    "log": (oh.make_node("Log", ["a"], ["y"]), X, [], "Abs"),
    "neg": (oh.make_node("Neg", ["x"], ["y"]), X, [], None),
    "max3": (
        oh.make_node("Max", ["x", "m", "n"], ["y"]),
        X,
        [("m", np.float32([0.1, -0.2, 0.3, 0.0])), ("n", np.float32(0.05))],
        None,
    ),
    "min": (oh.make_node("Min", ["x", "m"], ["y"]), X, [("m", np.full((1, 3, 1, 1), -0.1, np.float32))], None),
    "reciprocal": (oh.make_node("Reciprocal", ["x"], ["y"]), X, [], None),
    "sin": (oh.make_node("Sin", ["x"], ["y"]), X, [], None),
    "cos": (oh.make_node("Cos", ["x"], ["y"]), X, [], None),
    "tan": (oh.make_node("Tan", ["x"], ["y"]), X, [], None),
    "asin": (oh.make_node("Asin", ["a"], ["y"]), X, [], "Softsign"),  # Softsign first: |a| < 1, not near 1
    "acos": (oh.make_node("Acos", ["a"], ["y"]), X, [], "Softsign"),
    "atan": (oh.make_node("Atan", ["x"], ["y"]), X, [], None),
    "sinh": (oh.make_node("Sinh", ["x"], ["y"]), X, [], None),
    "cosh": (oh.make_node("Cosh", ["x"], ["y"]), X, [], None),
    "asinh": (oh.make_node("Asinh", ["x"], ["y"]), X, [], None),
    "acosh": (oh.make_node("Acosh", ["a"], ["y"]), X, [], "Cosh"),  # Cosh first: a >= 1
    "atanh": (oh.make_node("Atanh", ["a"], ["y"]), X, [], "Softsign"),
    "asin_nan_outside_the_domain": (oh.make_node("Asin", ["x"], ["y"]), X, [], None),  # |x| > 1: NaN
    "acosh_nan_outside_the_domain": (oh.make_node("Acosh", ["x"], ["y"]), X, [], None),
    "gelu_erf": (oh.make_node("Gelu", ["x"], ["y"]), X, [], None),
    "erf": (oh.make_node("Erf", ["x"], ["y"]), X, [], None),
    "floor": (oh.make_node("Floor", ["x"], ["y"]), X, [], None),
    "ceil": (oh.make_node("Ceil", ["x"], ["y"]), X, [], None),
    "round": (oh.make_node("Round", ["x"], ["y"]), X, [], None),
    "sign": (oh.make_node("Sign", ["x"], ["y"]), X, [], None),
    "isnan_of_log": (oh.make_node("IsNaN", ["a"], ["y"]), X, [], "Log"),  # log of negatives is NaN
    "elu": (oh.make_node("Elu", ["x"], ["y"], alpha=0.7), X, [], None),
    "softplus": (oh.make_node("Softplus", ["x"], ["y"]), X, [], None),
    "celu": (oh.make_node("Celu", ["x"], ["y"], alpha=0.6), X, [], None),
    "shrink": (oh.make_node("Shrink", ["x"], ["y"], lambd=0.4, bias=0.1), X, [], None),
    "instancenorm": (
        oh.make_node("InstanceNormalization", ["x", "g", "b"], ["y"], epsilon=1e-3),
        X,
        [("g", np.linspace(0.5, 2, 3, dtype=np.float32)), ("b", np.arange(3, dtype=np.float32))],
        None,
    ),
    "lp_normalization_l1": (oh.make_node("LpNormalization", ["x"], ["y"], axis=1, p=1), X, [], None),
    "lp_normalization_l2": (oh.make_node("LpNormalization", ["x"], ["y"]), X, [], None),
    "global_max_pool": (oh.make_node("GlobalMaxPool", ["x"], ["y"]), X, [], None),
    "depth_to_space_dcr": (oh.make_node("DepthToSpace", ["x"], ["y"], blocksize=2), [("x", F, [2, 8, 3, 5])], [], None),
    "depth_to_space_crd": (
        oh.make_node("DepthToSpace", ["x"], ["y"], blocksize=2, mode="CRD"),
        [("x", F, [2, 8, 3, 5])],
        [],
        None,
    ),
    "slice_strided_and_reversed": (
        oh.make_node("Slice", ["x", "st", "en", "ax", "sp"], ["y"]),
        X,
        [
            ("st", np.array([0, -1, 1], np.int64)),
            ("en", np.array([9, -100, 4], np.int64)),
            ("ax", np.array([2, 3, 1], np.int64)),
            ("sp", np.array([2, -2, 1], np.int64)),
        ],
        None,
    ),
    "argmax": (oh.make_node("ArgMax", ["x"], ["y"], axis=1), X, [], None),
    "argmin_last_flat": (
        oh.make_node("ArgMin", ["a"], ["y"], axis=-1, keepdims=0, select_last_index=1),
        X,
        [],
        "Round",  # ties to pick the last of
    ),
    "cumsum": (oh.make_node("CumSum", ["x", "ax"], ["y"]), X, [("ax", np.array(1, np.int64))], None),
    "cumsum_exclusive_reverse": (
        oh.make_node("CumSum", ["x", "ax"], ["y"], exclusive=1, reverse=1),
        [("x", F, [2, 13, 3])],
        [("ax", np.array(-2, np.int64))],
        None,
    ),
    "trilu_lower": (
        oh.make_node("Trilu", ["x", "k"], ["y"], upper=0),
        [("x", F, [2, 3, 4, 5])],
        [("k", np.array(1, np.int64))],
        None,
    ),
    "trilu_upper": (oh.make_node("Trilu", ["x"], ["y"]), [("x", F, [4, 3])], [], None),
    "space_to_depth": (oh.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2), [("x", F, [2, 3, 4, 6])], [], None),
    "hardswish": (oh.make_node("HardSwish", ["x"], ["y"]), X, [], None),
    "hardsigmoid": (oh.make_node("HardSigmoid", ["x"], ["y"], alpha=0.3), X, [], None),
    "mish": (oh.make_node("Mish", ["x"], ["y"]), X, [], None),
    "leakyrelu": (oh.make_node("LeakyRelu", ["x"], ["y"], alpha=0.2), X, [], None),
    "clip_one_sided": (oh.make_node("Clip", ["x", "", "hi"], ["y"]), X, [("hi", np.array(0.5, np.float32))], None),
    "pow": (oh.make_node("Pow", ["x", "e"], ["y"]), X, [("e", np.array(3.0, np.float32))], None),
    "reduce_mean": (
        oh.make_node("ReduceMean", ["x", "ax"], ["y"], keepdims=0),
        X,
        [("ax", np.array([1, -1], np.int64))],
        None,
    ),
    "reduce_max_attr": (oh.make_node("ReduceMax", ["x"], ["y"], axes=[2]), X, [], None),
    "reduce_l2": (oh.make_node("ReduceL2", ["x", "ax"], ["y"]), X, [("ax", np.array([3], np.int64))], None),
    "logsoftmax": (oh.make_node("LogSoftmax", ["x"], ["y"], axis=1), X, [], None),
    "expand": (oh.make_node("Expand", ["x", "s"], ["y"]), [("x", F, [3, 1])], [("s", np.array([2, 3, 4]))], None),
    "pad_nd": (
        oh.make_node("Pad", ["x", "p", "v"], ["y"]),
        X,
        [("p", np.array([0, 1, 0, 0, 0, 0, 2, 1])), ("v", np.array(1.5, np.float32))],
        None,
    ),
    "resize_nearest": (
        oh.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest"),
        X,
        [("sc", np.array([1, 1, 2, 3], np.float32))],
        None,
    ),
    "resize_linear": (
        oh.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear"),
        X,
        [("sz", np.array([2, 3, 7, 5]))],
        None,
    ),
    "resize_nearest_half_pixel_ceil_fractional_scale": (
        oh.make_node("Resize", ["x", "", "sc"], ["y"], mode="nearest", nearest_mode="round_prefer_ceil"),
        [("x", F, [1, 2, 5, 7])],
        [("sc", np.array([1, 1, 1.7, 0.6], np.float32))],
        None,
    ),
    "resize_nearest_tf_half_pixel_ceil": (
        oh.make_node(
            "Resize",
            ["x", "", "", "sz"],
            ["y"],
            mode="nearest",
            coordinate_transformation_mode="tf_half_pixel_for_nn",
            nearest_mode="ceil",
        ),
        [("x", F, [1, 2, 5, 7])],
        [("sz", np.array([1, 2, 8, 3]))],
        None,
    ),
    "resize_linear_asymmetric": (
        oh.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear", coordinate_transformation_mode="asymmetric"),
        [("x", F, [1, 2, 5, 7])],
        [("sz", np.array([1, 2, 9, 4]))],
        None,
    ),
    "resize_linear_align_corners_fractional_scale": (
        oh.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear", coordinate_transformation_mode="align_corners"),
        [("x", F, [1, 2, 5, 7])],
        [("sc", np.array([1, 1, 0.8, 2.0], np.float32))],  # see test_resize_fractional_align_corners
        None,
    ),
    "resize_linear_keep_aspect_not_smaller": (
        oh.make_node(
            "Resize", ["x", "", "", "sz"], ["y"], mode="linear", axes=[2, 3], keep_aspect_ratio_policy="not_smaller"
        ),
        [("x", F, [1, 2, 5, 7])],
        [("sz", np.array([8, 9]))],
        None,
    ),
    "resize_cubic_run_time": (
        oh.make_node("Resize", ["x", "", "sc"], ["y"], mode="cubic"),
        [("x", F, [1, 2, 5, 7])],
        [("sc", np.array([1, 1, 1.6, 0.7], np.float32))],
        None,
    ),
    "resize_cubic_align_corners_exclude_outside": (
        oh.make_node(
            "Resize",
            ["x", "", "", "sz"],
            ["y"],
            mode="cubic",
            coordinate_transformation_mode="align_corners",
            exclude_outside=1,
            cubic_coeff_a=-0.5,
        ),
        [("x", F, [1, 2, 5, 7])],
        [("sz", np.array([1, 2, 9, 4]))],
        None,
    ),
    "resize_linear_antialias_down": (
        oh.make_node("Resize", ["x", "", "", "sz"], ["y"], mode="linear", antialias=1),
        [("x", F, [1, 2, 9, 11])],
        [("sz", np.array([1, 2, 4, 5]))],
        None,
    ),
    "resize_tf_crop_and_resize_extrapolated": (
        oh.make_node(
            "Resize",
            ["x", "roi", "", "sz"],
            ["y"],
            mode="linear",
            coordinate_transformation_mode="tf_crop_and_resize",
            extrapolation_value=-3.0,
            axes=[2, 3],
        ),
        [("x", F, [1, 2, 5, 7])],
        [("roi", np.array([-0.2, 0.1, 0.9, 1.3], np.float32)), ("sz", np.array([6, 4]))],
        None,
    ),
    "resize_trilinear_5d": (
        oh.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear"),
        [("x", F, [1, 2, 3, 4, 5])],
        [("sc", np.array([1, 1, 2, 1.5, 0.6], np.float32))],
        None,
    ),
    "resize_linear_1d": (
        oh.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear", coordinate_transformation_mode="asymmetric"),
        [("x", F, [2, 3, 6])],
        [("sc", np.array([1, 1, 2.5], np.float32))],
        None,
    ),
    "groupnorm": (
        oh.make_node("GroupNormalization", ["x", "g", "b"], ["y"], num_groups=3, epsilon=1e-3),
        [("x", F, [2, 6, 3, 3])],
        [("g", np.linspace(0.5, 2, 6, dtype=np.float32)), ("b", np.arange(6, dtype=np.float32))],
        None,
    ),
    "gather_runtime_negative_ids": (
        oh.make_node("Gather", ["t", "ids"], ["y"]),
        [("ids", INT, [2, 3])],
        [("t", np.arange(15, dtype=np.float32).reshape(5, 3))],
        None,
    ),
    "gather_axis1": (oh.make_node("Gather", ["x", "ids"], ["y"], axis=1), [*X, ("ids", INT, [2])], [], None),
    "gather_elements": (
        oh.make_node("GatherElements", ["x", "ids"], ["y"], axis=2),
        [*X, ("ids", INT, [2, 3, 2, 4])],
        [],
        None,
    ),
    "less_where": (oh.make_node("Where", ["m", "x", "z"], ["y"]), [("m", B, [4, 4]), *X, ("z", F, [4])], [], None),
    "add_mul_int": (oh.make_node("Mul", ["s", "i"], ["y"]), [("i", INT, [3, 4]), ("j", INT, [4])], [], None),
    # run-time integer division and remainders (CANINE's hash buckets), divisors of both signs, never zero
    "mod_int_floor": (
        oh.make_node("Mod", ["i", "d"], ["y"]),
        [("i", INT, [3, 4])],
        [("d", np.int64([3, -2, 5, -7]))],
        None,
    ),
    "mod_int_trunc": (
        oh.make_node("Mod", ["i", "d"], ["y"], fmod=1),
        [("i", INT, [3, 4])],
        [("d", np.int64([3, -2, 5, -7]))],
        None,
    ),
    "div_int": (oh.make_node("Div", ["i", "d"], ["y"]), [("i", INT, [3, 4])], [("d", np.int64([3, -2, 5, -7]))], None),
    "mod_float": (oh.make_node("Mod", ["x", "m"], ["y"], fmod=1), X, [("m", np.float32([0.5, -0.7, 1.5, 3.0]))], None),
    "cumsum_int": (
        oh.make_node("CumSum", ["i", "ax"], ["y"]),
        [("i", INT, [3, 9])],
        [("ax", np.array(1, np.int64))],
        None,
    ),
    "equal_int": (oh.make_node("Equal", ["i", "j"], ["y"]), [("i", INT, [3, 4]), ("j", INT, [4])], [], None),
    "and": (oh.make_node("And", ["m", "n"], ["y"]), [("m", B, [3, 4]), ("n", B, [3, 4])], [], None),
    "not": (oh.make_node("Not", ["m"], ["y"]), [("m", B, [3, 4])], [], None),
    "cast_float_to_int": (oh.make_node("Cast", ["x"], ["y"], to=INT), X, [], None),
    "cast_bool_to_float": (oh.make_node("Cast", ["m"], ["y"], to=F), [("m", B, [3, 4])], [], None),
    "max_int": (oh.make_node("Max", ["i", "j"], ["y"]), [("i", INT, [3, 4]), ("j", INT, [4])], [], None),
    "min_int": (oh.make_node("Min", ["i", "j"], ["y"]), [("i", INT, [3, 4]), ("j", INT, [3, 1])], [], None),
    "reduce_prod": (oh.make_node("ReduceProd", ["x", "ax"], ["y"]), X, [("ax", np.array([1, 3], np.int64))], None),
    "reduce_prod_int": (oh.make_node("ReduceProd", ["i"], ["y"], keepdims=0), [("i", INT, [3, 4])], [], None),
    "cumprod_exclusive_reverse": (
        oh.make_node("CumProd", ["x", "ax"], ["y"], exclusive=1, reverse=1),
        [("x", F, [2, 11, 3])],
        [("ax", np.array(1, np.int64))],
        None,
    ),
    "cumprod_int": (oh.make_node("CumProd", ["i", "ax"], ["y"]), [("i", INT, [3, 9])], [("ax", np.array(-1))], None),
    "hardmax": (oh.make_node("Hardmax", ["a"], ["y"], axis=2), X, [], "Round"),  # ties: the first wins
    "lppool_p3_strided_padded": (
        oh.make_node("LpPool", ["x"], ["y"], kernel_shape=[3, 2], p=3, strides=[2, 1], pads=[1, 0, 1, 1]),
        X,
        [],
        None,
    ),
    "lppool_1d_same": (
        oh.make_node("LpPool", ["x"], ["y"], kernel_shape=[3], auto_pad="SAME_UPPER"),
        [("x", F, [2, 3, 8])],
        [],
        None,
    ),
    "global_lppool_p1": (oh.make_node("GlobalLpPool", ["x"], ["y"], p=1), X, [], None),
    "gathernd_runtime_negative_batch_dims": (
        oh.make_node("GatherND", ["x", "ids"], ["y"], batch_dims=1),
        [*X, ("ids", INT, [2, 5, 2])],
        [],
        None,
    ),
    "gathernd_constant": (
        oh.make_node("GatherND", ["x", "ids"], ["y"]),
        X,
        [("ids", np.array([[[1, -1, 2]], [[0, 2, -4]]], np.int64))],
        None,
    ),
    "onehot_runtime_negative_ids_axis1": (
        oh.make_node("OneHot", ["i", "d", "v"], ["y"], axis=1),
        [("i", INT, [3, 4])],
        [("d", np.array(3, np.int64)), ("v", np.float32([-0.5, 2.0]))],
        None,
    ),
    "onehot_float_ids": (
        oh.make_node("OneHot", ["r", "d", "v"], ["y"]),
        [("x", F, [2, 3, 4, 4])],
        [("d", np.array(5, np.int64)), ("v", np.int64([0, 7]))],
        None,
    ),
    "scatter_elements_runtime_ids_last_write_wins": (
        oh.make_node("ScatterElements", ["x", "ids", "u"], ["y"], axis=1),
        [("x", F, [2, 4, 3]), ("ids", INT, [2, 6, 3]), ("u", F, [2, 6, 3])],
        [],
        None,
    ),
    "scatter_elements_runtime_ids_mul": (
        oh.make_node("ScatterElements", ["x", "ids", "u"], ["y"], axis=-1, reduction="mul"),
        [("x", F, [3, 5]), ("ids", INT, [3, 4]), ("u", F, [3, 4])],
        [],
        None,
    ),
    "scatter_elements_constant_ids_max": (
        oh.make_node("ScatterElements", ["x", "ids", "u"], ["y"], axis=0, reduction="max"),
        [("x", F, [3, 4]), ("u", F, [2, 4])],
        [("ids", np.int64([[0, 2, 2, -1], [0, 0, 1, 2]]))],
        None,
    ),
    "scatter_nd_runtime_rows_add": (
        oh.make_node("ScatterND", ["x", "ids", "u"], ["y"], reduction="add"),
        [("x", F, [4, 3, 2]), ("ids", INT, [5, 1]), ("u", F, [5, 3, 2])],
        [],
        None,
    ),
    "scatter_nd_runtime_elements_min": (
        oh.make_node("ScatterND", ["x", "ids", "u"], ["y"], reduction="min"),
        [("x", F, [3, 4]), ("ids", INT, [2, 3, 2]), ("u", F, [2, 3])],
        [],
        None,
    ),
    "pow_tensor_exponent_broadcast": (
        oh.make_node("Pow", ["a", "e"], ["y"]),
        [*X, ("e", F, [4])],
        [],
        "Abs",  # a positive base: a float exponent's power is defined
    ),
    "pow_int_exponent_negative_base": (
        oh.make_node("Pow", ["x", "k"], ["y"]),
        [*X, ("k", INT, [4, 4])],
        [],
        None,
    ),
    "topk_int64_ties": (
        oh.make_node("TopK", ["i", "k"], ["y", "ix"], axis=1),
        [("i", INT, [3, 7])],
        [("k", np.array([3], np.int64))],
        None,
    ),
    "topk_int64_smallest": (
        oh.make_node("TopK", ["i", "k"], ["y", "ix"], axis=0, largest=0),
        [("i", INT, [5, 4])],
        [("k", np.array([2], np.int64))],
        None,
    ),
    "eyelike_offset": (oh.make_node("EyeLike", ["x"], ["y"], k=1, dtype=INT), [("x", F, [3, 5])], [], None),
    "nll_loss_weighted_ignore_mean": (
        oh.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"], ignore_index=1),
        [("x", F, [2, 3, 4])],
        [("t", np.int64([[0, 1, 2, 2], [1, 0, 0, 2]])), ("w", np.float32([0.2, 0.5, 1.5]))],
        None,
    ),
    "softmax_cross_entropy_sum": (
        oh.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y", "lp"], reduction="sum", ignore_index=-3),
        [("x", F, [2, 3, 4])],
        [("t", np.int64([[0, -3, 2, 2], [1, 0, -3, 2]]))],
        None,
    ),
}


def test_resize_fractional_align_corners_follows_the_spec_reference():
    """align_corners with a scale whose in * scale is not whole: the spec's reference (and the
    conformance data) divide by in * scale - 1, onnxruntime by the integer out - 1; eqsat follows the spec."""
    node = oh.make_node("Resize", ["x", "", "sc"], ["y"], mode="linear", coordinate_transformation_mode="align_corners")
    inputs = [("x", F, [1, 2, 5, 7])]
    model = _model(node, inputs, [("sc", np.array([1, 1, 0.7, 1.6], np.float32))])
    feed = _feed(inputs)
    expected = [torch.from_numpy(ReferenceEvaluator(model).run(None, feed)[0])]
    got = compile(from_onnx(model))({k: torch.from_numpy(v) for k, v in feed.items()})
    cmp = compare_all(expected, got)
    assert cmp.close, cmp.why


@pytest.mark.parametrize("name", CASES)
def test_one_node_model_matches_onnxruntime(name):
    node, inputs, inits, pre = CASES[name]
    # a first node keeps the input in the op's domain (Sqrt, Log of |x|)
    opset = 17 if name.endswith("_attr") else 21  # axes as an attribute: before opset 18
    first = [oh.make_node(pre, ["x"], ["a"])] if pre else []
    if name == "add_mul_int":  # (i + j) * i: int64 arithmetic at run time (wrapping, as onnxruntime)
        first = [oh.make_node("Add", ["i", "j"], ["s"])]
    if name == "onehot_float_ids":  # float ids, multiples of 0.5: the halves match no class (onnxruntime truncates)
        first = [oh.make_node("Mul", ["x", "h"], ["m"]), oh.make_node("Round", ["m"], ["q"])]
        first.append(oh.make_node("Mul", ["q", "k"], ["r"]))
        inits = [*inits, ("h", np.float32(2.0)), ("k", np.float32(0.5))]
    # CumProd (opset 26) has no onnxruntime 1.32 kernel; OneHot of float ids: the spec compares them exactly
    newer = name.startswith("cumprod") or name == "onehot_float_ids"
    _check_node(node, inputs, inits, 26 if name.startswith("cumprod") else opset, nodes=first, reference=newer)


def test_rms_normalization_opset23_over_two_axes():
    node = oh.make_node("RMSNormalization", ["x", "g"], ["y"], axis=-2, epsilon=1e-4)
    g = _check_node(node, [("x", F, [2, 3, 4])], [("g", np.float32(1.5) * np.ones((3, 4), np.float32))], opset=23)
    assert "rmsnorm" in [n.op for n in g]


def test_shape_arithmetic_folds_at_import():
    # Reshape(x, Concat(Shape(x)[0:1], [-1])): the shape is computed from constants, no graph ops
    nodes = [
        oh.make_node("Shape", ["x"], ["s"], end=1),
        oh.make_node("Concat", ["s", "m1"], ["t"], axis=0),
        oh.make_node("Reshape", ["x", "t"], ["y"]),
    ]
    g = oh.make_graph(
        nodes,
        "t",
        [oh.make_tensor_value_info("x", F, [2, 3, 4])],
        [oh.make_tensor_value_info("y", F, None)],
        [numpy_helper.from_array(np.array([-1], np.int64), "m1")],
    )
    graph = from_onnx(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]))
    assert [n.op for n in graph.compute_nodes()] == ["reshape"]
    assert graph.shape_of(graph.outputs[0]) == (2, 12)


@pytest.mark.parametrize("neg,pos", [(1, 1), (0, 1), (1, 0)])
def test_isinf_of_reciprocals_of_signed_zeros(neg, pos):
    # relu(x) is +0 for negative x and Neg(+0) is -0: 1/x gives +inf and -inf to detect
    nodes = [
        oh.make_node("Relu", ["x"], ["r"]),
        oh.make_node("Neg", ["r"], ["nr"]),
        oh.make_node("Concat", ["r", "nr"], ["both"], axis=0),
        oh.make_node("Reciprocal", ["both"], ["inv"]),
    ]
    _check_node(oh.make_node("IsInf", ["inv"], ["y"], detect_negative=neg, detect_positive=pos), X, nodes=nodes)


def test_lp_normalization_keeps_a_zero_vector_zero():
    model = _model(oh.make_node("LpNormalization", ["x"], ["y"], axis=1), [("x", F, [3, 4])])
    x = np.array([[0, 0, 0, 0], [1, -2, 2, 4], [0, 0, 3, 0]], np.float32)
    got = compile(from_onnx(model))({"x": torch.from_numpy(x)})
    cmp = compare_all(_ort(model, {"x": x}), got)
    assert cmp.close, cmp.why
    assert got[0][0].eq(0).all()


def test_mean_variance_normalization():
    # onnx's shape inference fails on this op's function body, so the output is typed by hand
    g = oh.make_graph(
        [oh.make_node("MeanVarianceNormalization", ["x"], ["y"], axes=[0, 2])],
        "t",
        [oh.make_tensor_value_info("x", F, [2, 3, 4, 4])],
        [oh.make_tensor_value_info("y", F, [2, 3, 4, 4])],
    )
    model = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)])
    feed = _feed(X)
    got = compile(from_onnx(model))({"x": torch.from_numpy(feed["x"])})
    cmp = compare_all(_ort(model, feed), got)
    assert cmp.close, cmp.why


@pytest.mark.slow  # 6 s: a whole exported model optimized; the fused ops' import is checked op by op above
def test_an_exported_model_reaches_the_fused_ops():
    """torch.onnx.export writes Linear as MatMul + Add(bias, .), Gemm with a 1-d bias, Conv with a folded
    batch norm's bias, attention's 1/sqrt(d) as a Div: imported, they reach the same fused ops."""
    import io
    import warnings

    from torch import nn

    from rewrite.frontends import from_torch
    from rewrite.pipeline import optimize

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
            self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = torch.relu(self.bn(self.conv(x))).mean(dim=(2, 3))[:, None, :]  # 3-d: MatMul + Add, not Gemm
            return self.fc2(torch.relu(self.fc1(h)) / 4.0)

    torch.manual_seed(0)
    net, x = Net().eval(), torch.randn(2, 3, 6, 6)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, (x,), buf, opset_version=17, dynamo=False)
    graph = from_onnx(onnx.load_from_string(buf.getvalue()))
    ours = optimize(graph).graph
    fused = {"conv2d_bias_act", "matmul_bias_act"}
    assert fused <= set(ours.summary()) and fused <= set(optimize(from_torch(net, (x,))).graph.summary())
    assert not {"conv2d", "matmul", "batchnorm", "div"} & set(ours.summary()), ours.summary()
    cmp = compare_all([net(x).detach()], compile(ours)([x]))
    assert cmp.close, cmp.why
