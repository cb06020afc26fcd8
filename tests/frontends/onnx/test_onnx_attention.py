"""ONNX Attention and RotaryEmbedding: one-node models imported, compiled and compared with onnx's reference
evaluator (whose outputs the spec's node tests hold) and, where it runs them the same, onnxruntime; a
``torch.onnx.export`` of ``F.scaled_dot_product_attention`` against torch; refusals as one-line errors."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, numpy_helper  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rewrite.frontends.onnx import from_onnx  # noqa: E402
from rewrite.ir.errors import FrontendError  # noqa: E402
from rewrite.pipeline import compile  # noqa: E402
from rewrite.verification.numeric import compare_all  # noqa: E402

FL, INT, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _model(node, inputs, opset, inits=()):
    """A one-node model; inputs: [(name, elem type, shape)]; every non-empty output of ``node`` is a graph output."""
    g = oh.make_graph(
        [node],
        "t",
        [oh.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [oh.make_empty_tensor_value_info(o) for o in node.output if o],
        [numpy_helper.from_array(v, k) for k, v in inits],
    )
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])


def _feed(inputs, fixed, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for n, t, s in inputs:
        if n in fixed:
            out[n] = fixed[n]
        elif t == FL:
            out[n] = rng.standard_normal(s).astype(np.float32)
        else:
            out[n] = rng.random(s) < 0.6  # some rows of a bool mask are fully masked
    return out


def _check(node, inputs, opset=23, inits=(), fixed=None, with_ort=True):
    """eqsat's outputs against the reference evaluator's and (``with_ort``) onnxruntime's."""
    model = _model(node, inputs, opset, inits)
    feed = _feed(inputs, fixed or {})
    got = compile(from_onnx(model))({k: torch.from_numpy(v) for k, v in feed.items()})
    refs = [ReferenceEvaluator(model).run(None, feed)]
    if with_ort:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        refs.append(sess.run(None, feed))
    for ref in refs:
        cmp = compare_all([torch.from_numpy(np.asarray(r)) for r in ref], got)
        assert cmp.close, cmp.why


def _att(ins, outs=("y",), **attrs):
    return oh.make_node("Attention", list(ins), list(outs), **attrs)


def _qkv(b=2, hq=4, hk=4, lq=3, s=5, d=8, dv=None, three_d=False):
    if three_d:
        return [("q", FL, [b, lq, hq * d]), ("k", FL, [b, s, hk * d]), ("v", FL, [b, s, hk * (dv or d)])]
    return [("q", FL, [b, hq, lq, d]), ("k", FL, [b, hk, s, d]), ("v", FL, [b, hk, s, dv or d])]


QKV = ("q", "k", "v")
PAST = [("pk", FL, [2, 2, 4, 8]), ("pv", FL, [2, 2, 4, 6])]
NEG_MASK = np.where(np.arange(5) < 4, 0.0, -np.inf).astype(np.float32) * np.ones((3, 1), np.float32)
BOOL_ROWS = np.array([[True, False, True, True, False], [False] * 5, [True] * 5])  # row 1 attends nothing

# name: (node, inputs, opset, fixed feeds, initializers, onnxruntime agrees)
ATTENTION = {
    "4d": (_att(QKV), _qkv(), 23, {}, [], True),
    "3d": (_att(QKV, q_num_heads=4, kv_num_heads=4), _qkv(three_d=True), 23, {}, [], True),
    "gqa_4d": (_att(QKV), _qkv(hq=6, hk=2), 23, {}, [], True),
    "gqa_3d_diff_v_head": (
        _att(QKV, q_num_heads=6, kv_num_heads=2),
        _qkv(hq=6, hk=2, dv=5, three_d=True),
        23,
        {},
        [],
        True,
    ),
    "mqa_scaled": (_att(QKV, scale=0.3), _qkv(hq=4, hk=1), 23, {}, [], True),
    "causal_query_shorter": (_att(QKV, is_causal=1), _qkv(), 23, {}, [], True),
    "causal_square_gqa": (_att(QKV, is_causal=1), _qkv(hq=4, hk=2, s=3), 23, {}, [], True),
    "float_mask_2d": (_att((*QKV, "m")), _qkv() + [("m", FL, [3, 5])], 23, {}, [], True),
    "float_mask_neg_inf_softcap": (
        _att((*QKV, "m"), softcap=0.5),
        _qkv() + [("m", FL, [3, 5])],
        23,
        {"m": NEG_MASK},
        [],
        True,
    ),
    "bool_mask_4d_fully_masked_rows": (
        _att((*QKV, "m")),
        _qkv() + [("m", B, [2, 1, 3, 5])],
        23,
        {"m": np.stack([BOOL_ROWS, ~BOOL_ROWS])[:, None]},
        [],
        True,
    ),
    "bool_mask_causal": (_att((*QKV, "m"), is_causal=1), _qkv(s=3) + [("m", B, [3, 3])], 24, {}, [], True),
    # the reference pads a short mask with -inf; onnxruntime refuses it
    "short_float_mask": (_att((*QKV, "m")), _qkv() + [("m", FL, [1, 3])], 23, {}, [], False),
    "short_bool_mask_3d": (_att((*QKV, "m")), _qkv() + [("m", B, [4, 3, 4])], 23, {}, [], False),
    "constant_bool_mask_fully_masked_row": (_att((*QKV, "m")), _qkv(), 23, {}, [("m", BOOL_ROWS)], True),
    "past_present_causal_diff_v": (
        _att((*QKV, "", "pk", "pv"), ("y", "pkey", "pval"), is_causal=1),
        _qkv(hk=2, dv=6) + PAST,
        23,
        {},
        [],
        True,
    ),
    "past_present_mask_3d": (
        _att((*QKV, "m", "pk", "pv"), ("y", "pkey", "pval"), q_num_heads=4, kv_num_heads=2),
        _qkv(hk=2, dv=6, three_d=True) + [("m", FL, [2, 1, 3, 9])] + PAST,
        23,
        {},
        [],
        True,
    ),
    "present_without_past": (_att(QKV, ("y", "pkey", "")), _qkv(), 23, {}, [], True),
    "softcap_3d": (_att(QKV, softcap=2.0, q_num_heads=4, kv_num_heads=4), _qkv(three_d=True), 23, {}, [], True),
    # onnxruntime's mode-2 output has the lowest float, not -inf, where a bool mask is false
    **{
        f"qk_output_mode{mode}{'_softcap' if cap else ''}_{TensorProto.DataType.Name(mt).lower()}_mask": (
            _att((*QKV, "m"), ("y", "", "", "qk"), qk_matmul_output_mode=mode, **({"softcap": 2.0} if cap else {})),
            _qkv(hq=4, hk=2) + [("m", mt, [3, 5])],
            23,
            {},
            [],
            mode != 2 or mt == FL,
        )
        for mode, cap, mt in ((0, False, B), (1, True, B), (2, True, FL), (2, False, B), (3, False, B))
    },
    "softmax_precision_float": (_att(QKV, softmax_precision=1), _qkv(), 23, {}, [], True),
    "nonpad_runtime_causal": (
        _att((*QKV, "", "", "", "n"), is_causal=1),
        _qkv(hq=4, hk=2, lq=2, s=6) + [("n", INT, [2])],
        24,
        {"n": np.array([6, 1], np.int64)},  # batch 1: query 0 attends nothing
        [],
        True,
    ),
    "nonpad_constant_mask": (  # a short mask: onnxruntime refuses it
        _att((*QKV, "m", "", "", "n")),
        _qkv(s=6) + [("m", FL, [2, 1, 3, 4])],
        24,
        {},
        [("n", np.array([3, 5], np.int64))],
        False,
    ),
    "window_causal_past_opset25": (
        _att((*QKV, "", "pk", "pv"), ("y", "pkey", "pval"), is_causal=1, left_window_size=2),
        _qkv(hk=2, dv=6) + PAST,
        25,
        {},
        [],
        True,
    ),
    "window_runtime_nonpad_opset25": (
        _att((*QKV, "m", "", "", "n"), left_window_size=1, right_window_size=1),
        _qkv(s=6) + [("m", B, [6]), ("n", INT, [2])],
        25,
        {"n": np.array([5, 2], np.int64)},
        [],
        True,
    ),
}


@pytest.mark.parametrize("name", list(ATTENTION))
def test_attention_matches_reference(name):
    node, inputs, opset, fixed, inits, with_ort = ATTENTION[name]
    _check(node, inputs, opset, inits, fixed, with_ort)


def _rot(ins, **attrs):
    return oh.make_node("RotaryEmbedding", list(ins), ["y"], **attrs)


X4, X3 = ("x", FL, [2, 3, 4, 8]), ("x", FL, [2, 4, 24])
IDS = np.array([[0, 3, 7, 2], [9, 1, 1, 5]], np.int64)


def _caches(rows, r):
    t = np.linspace(0, 3, rows * r, dtype=np.float32).reshape(rows, r)
    return [("cos", np.cos(t)), ("sin", np.sin(t))]


# name: (node, inputs, fixed feeds, initializers)
ROTARY = {
    "4d_runtime_ids": (
        _rot(("x", "cos", "sin", "p")),
        [X4, ("cos", FL, [10, 4]), ("sin", FL, [10, 4]), ("p", INT, [2, 4])],
        {"p": IDS},
        [],
    ),
    "4d_interleaved_constant": (_rot(("x", "cos", "sin", "p"), interleaved=1), [X4], {}, [*_caches(10, 4), ("p", IDS)]),
    "3d_partial": (
        _rot(("x", "cos", "sin", "p"), num_heads=3, rotary_embedding_dim=4),
        [X3, ("p", INT, [2, 4])],
        {"p": IDS},
        _caches(10, 2),
    ),
    "3d_interleaved_partial_constant_ids": (
        _rot(("x", "cos", "sin", "p"), num_heads=3, rotary_embedding_dim=6, interleaved=1),
        [X3, ("cos", FL, [10, 3]), ("sin", FL, [10, 3])],
        {},
        [("p", IDS)],
    ),
    "no_position_ids": (_rot(("x", "cos", "sin")), [X4, ("cos", FL, [2, 4, 4]), ("sin", FL, [2, 4, 4])], {}, []),
    "no_position_ids_interleaved_3d": (
        _rot(("x", "cos", "sin"), interleaved=1, num_heads=2),
        [("x", FL, [2, 4, 16]), ("cos", FL, [2, 4, 4]), ("sin", FL, [2, 4, 4])],
        {},
        [],
    ),
}


@pytest.mark.parametrize("name", list(ROTARY))
def test_rotary_embedding_matches_reference(name):
    node, inputs, fixed, inits = ROTARY[name]
    _check(node, inputs, 23, inits, fixed)


class _Sdpa(torch.nn.Module):
    """Causal, masked and grouped-query attention, as exporters see transformers call them."""

    def forward(self, q, k, v, kg, vg, mask):
        causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        masked = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        grouped = F.scaled_dot_product_attention(q, kg, vg, enable_gqa=True, scale=0.3)
        return causal, masked, grouped


def test_torch_exported_sdpa_imports_and_matches_torch(tmp_path):
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 4, 5, 8, generator=g) for _ in range(3))
    kg, vg = (torch.randn(1, 2, 5, 8, generator=g) for _ in range(2))
    mask = (torch.rand(5, 5, generator=g) < 0.5) | torch.eye(5, dtype=torch.bool)  # no fully masked row
    args = (q, k, v, kg, vg, mask)
    path = tmp_path / "sdpa.onnx"
    torch.onnx.export(_Sdpa().eval(), args, str(path), dynamo=True, opset_version=23)
    model = onnx.load(str(path))
    assert [n.op_type for n in model.graph.node].count("Attention") == 3
    graph = from_onnx(model)
    names = [n.attrs["name"] for n in graph.inputs]
    feed = dict(zip([i.name for i in model.graph.input], args))
    got = compile(graph)({n: feed[n] for n in names})
    cmp = compare_all(list(_Sdpa()(*args)), got)
    assert cmp.close, cmp.why


REFUSED = {
    "softmax_precision_double": (_att(QKV, softmax_precision=11), _qkv(), 23, "softmax_precision double"),
    "mode0_softcap_output": (
        _att(QKV, ("y", "", "", "qk"), softcap=2.0),
        _qkv(),
        23,
        "qk_matmul_output_mode 0 with softcap",
    ),
    "heads_attrs_on_4d": (_att(QKV, q_num_heads=4, kv_num_heads=4), _qkv(), 23, "4-d Q, K, V"),
    "3d_without_heads": (_att(QKV), _qkv(three_d=True), 23, "need positive q_num_heads"),
    "heads_not_dividing": (_att(QKV), _qkv(hq=4, hk=3), 23, "not a multiple of 3 key/value heads"),
    "mask_not_broadcasting": (_att((*QKV, "m")), _qkv() + [("m", FL, [2, 3, 5])], 23, "does not broadcast"),
    "mask_longer_than_keys": (_att((*QKV, "m")), _qkv() + [("m", FL, [3, 7])], 23, "does not broadcast"),
    "nonpad_with_past": (
        _att((*QKV, "", "pk", "pv", "n")),
        _qkv(hk=2, dv=6) + PAST + [("n", INT, [2])],
        24,
        "nonpad_kv_seqlen cannot be combined",
    ),
    "rotary_odd_dim": (
        _rot(("x", "cos", "sin"), rotary_embedding_dim=3),
        [X4, ("cos", FL, [2, 4, 1]), ("sin", FL, [2, 4, 1])],
        23,
        "must be even",
    ),
    "rotary_3d_without_heads": (
        _rot(("x", "cos", "sin", "p")),
        [X3, ("cos", FL, [10, 4]), ("sin", FL, [10, 4]), ("p", INT, [2, 4])],
        23,
        "needs num_heads",
    ),
    "rotary_cache_width": (
        _rot(("x", "cos", "sin", "p")),
        [X4, ("cos", FL, [10, 3]), ("sin", FL, [10, 3]), ("p", INT, [2, 4])],
        23,
        r"must be \[max_position, 4\]",
    ),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_refusals_are_one_line_frontend_errors_naming_the_node(name):
    node, inputs, opset, why = REFUSED[name]
    node.name = "the_node"
    with pytest.raises(FrontendError, match=why) as e:
        from_onnx(_model(node, inputs, opset))
    msg = str(e.value)
    assert f"ONNX node 'the_node' ({node.op_type})" in msg and "\n" not in msg


def test_constant_position_ids_out_of_range_are_refused():
    node = _rot(("x", "cos", "sin", "p"))
    node.name = "rope"
    with pytest.raises(FrontendError, match=r"position_ids outside \[0, 8\)") as e:
        from_onnx(_model(node, [X4], 23, [*_caches(8, 4), ("p", IDS)]))
    assert "ONNX node 'rope' (RotaryEmbedding)" in str(e.value)
