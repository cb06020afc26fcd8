"""The constant source ops (TASO's constant tensors): fill, eye, identity_kernel, avg_kernel.

Each is built by its ``ref`` from its attributes alone and is weight-only everywhere: in the
graph (folded), in the e-graph (free in extraction), in the lowering (computed once) and in ONNX
export (a Constant node).
"""

import pytest
import torch
import torch.nn.functional as F

from rewrite import GraphBuilder
from rewrite.egraph.limits import Limits
from rewrite.egraph.prelude import prelude
from rewrite.frontends.onnx import from_onnx, load, save, to_onnx
from rewrite.ir.errors import GraphError, RuleError, ShapeError
from rewrite.ir.graph import Graph
from rewrite.ir.ops import OPS, CostClass, Group
from rewrite.pipeline import compile, optimize
from rewrite.rulelang.loader import load_rules
from rewrite.rulelang.syntax import parse_rules
from rewrite.verification.numeric import verify

CONSTANTS = ["fill", "eye", "identity_kernel", "avg_kernel"]
ATTRS = {
    "fill": {"shape": (2, 3), "value": 1.5},
    "eye": {"n": 3},
    "identity_kernel": {"channels": 2, "kernel": (3, 1)},
    "avg_kernel": {"channels": 2, "kernel": (2, 3)},
}
SHAPES = {"fill": (2, 3), "eye": (3, 3), "identity_kernel": (2, 2, 3, 1), "avg_kernel": (2, 2, 2, 3)}


def test_constants_are_the_sources_that_are_not_bound_by_name():
    sources = {n for n, o in OPS.items() if o.group is Group.SOURCE}
    assert {n for n, o in OPS.items() if o.arity == 0} == sources
    assert {n for n, o in OPS.items() if o.constant} == set(CONSTANTS) == sources - {"input", "weight"}
    assert all(OPS[n].cost_class is CostClass.FREE for n in CONSTANTS)


@pytest.mark.parametrize("op", CONSTANTS)
def test_ref_shape_and_dtype_agree(op):
    d = OPS[op]
    attrs = d.normalize_attrs(ATTRS[op])
    (t,) = d.ref([], attrs)
    assert d.infer([], attrs) == [SHAPES[op]] == [tuple(t.shape)]
    assert d.infer_dtype([], attrs) == "float32" and t.dtype == torch.float32


def test_values():
    assert torch.equal(OPS["fill"].ref([], ATTRS["fill"])[0], torch.full((2, 3), 1.5))
    assert torch.equal(OPS["eye"].ref([], ATTRS["eye"])[0], torch.eye(3))
    k = OPS["identity_kernel"].ref([], {"channels": 3, "kernel": (3, 5)})[0]
    x = torch.randn(2, 3, 6, 7)
    assert torch.allclose(F.conv2d(x, k, padding=(1, 2)), x)  # the centre tap: "same" padding (k-1)/2
    a = OPS["avg_kernel"].ref([], {"channels": 3, "kernel": (3, 3)})[0]
    assert torch.allclose(F.conv2d(x, a, stride=2, padding=1), F.avg_pool2d(x, 3, 2, 1, count_include_pad=True))
    assert not torch.allclose(F.conv2d(x, a, padding=1), F.avg_pool2d(x, 3, 1, 1, count_include_pad=False))


@pytest.mark.parametrize(
    "op, attrs",
    [
        ("fill", {"shape": (2, 0), "value": 1.0}),
        ("eye", {"n": 0}),
        ("identity_kernel", {"channels": 2, "kernel": (2, 3)}),  # no centre tap
        ("avg_kernel", {"channels": 0, "kernel": (3, 3)}),
    ],
)
def test_bad_attributes_are_shape_errors(op, attrs):
    with pytest.raises(ShapeError, match=op):
        GraphBuilder().op(op, **attrs)


def _pool_branch_graph(c: int = 8) -> Graph:
    """TASO's case for const_pool: a conv and an average pool of one input, added."""
    torch.manual_seed(0)
    b = GraphBuilder("pool_branch")
    x = b.input("x", (1, c, 12, 12))
    w = b.weight("w", torch.randn(c, c, 3, 3) / 9)
    y = b.add(b.conv2d(x, w, padding=(1, 1)), b.avgpool2d(x, kernel=(3, 3), stride=(1, 1), padding=(1, 1)))
    return b.build([y])


def _with_constants() -> Graph:
    """One graph reading each constant: x * fill(1) @ eye, a conv with each kernel."""
    b = GraphBuilder("constants")
    x = b.input("x", (1, 4, 6, 6))
    m = b.input("m", (3, 5))
    ones = b.fill(shape=(3, 5), value=1.0)
    y0 = b.matmul(b.mul(m, ones), b.eye(n=5))
    y1 = b.conv2d(x, b.identity_kernel(channels=4, kernel=(3, 3)), padding=(1, 1))
    y2 = b.conv2d(x, b.avg_kernel(channels=4, kernel=(3, 3)), stride=(2, 2))
    return b.build([y0, y1, y2])


def test_constants_are_weight_only_and_fold_into_weights():
    g = _with_constants()
    const = g.weight_only()
    assert {g.nodes[i].op for i in const} == set(CONSTANTS)
    assert g.op_count() == 4  # mul, matmul and two convs
    f = g.folded()
    assert not any(OPS[n.op].constant for n in f) and len(f.weight_nodes) == 4
    ins = g.random_inputs()
    for a, e in zip(f.run(ins), g.run(ins)):
        assert torch.allclose(a, e)
    x, m = ins["x"], ins["m"]
    out = g.run(ins)
    assert torch.allclose(out[0], m) and torch.allclose(out[1], x)
    assert torch.allclose(out[2], F.avg_pool2d(x, 3, 2))


def test_float64_runs_build_constants_in_float64():
    g = _with_constants()
    ins = {k: v.double() for k, v in g.random_inputs().items()}
    assert all(o.dtype == torch.float64 for o in g.run(ins))


def test_the_egraph_knows_constants_as_weight_only():
    text = prelude()
    for op, attrs in (("Fill", "a_shape a_value"), ("Eye", "a_n"), ("IdentityKernel", "a_channels a_kernel")):
        assert f"(rule ((= e ({op} {attrs}))) ((WeightOnly e))" in text  # unconditionally, like a weight
    for op in CONSTANTS:
        assert f':name "shape-{op}-0")' in text


def test_rules_may_build_constants_but_not_inputs():
    (r,) = parse_rules(
        "r: (avgpool2d ?x :kernel ?k :stride ?s) => (conv2d ?x (avg_kernel :channels (dim ?x 1) :kernel ?k) :stride ?s)"
    )
    assert r.name == "r"
    with pytest.raises(RuleError, match="cannot appear in a rule"):
        parse_rules('r: (relu ?x) => (add ?x (weight :name "w" :shape [1]))')


def test_onnx_export_writes_constants_as_constant_nodes():
    ort = pytest.importorskip("onnxruntime")
    g = _with_constants()
    model = to_onnx(g)
    assert [n.op_type for n in model.graph.node].count("Constant") == 4
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    ins = g.random_inputs()
    got = sess.run(None, {k: v.numpy() for k, v in ins.items()})
    for a, e in zip(got, g.run(ins)):
        assert torch.allclose(torch.from_numpy(a), e, atol=1e-5)


def test_onnx_round_trip_reads_constants_back_as_weights():
    g = _with_constants()
    back = from_onnx(to_onnx(g))
    ins = g.random_inputs()
    for a, e in zip(back.run(ins), g.run(ins)):
        assert torch.allclose(a, e, atol=1e-5)


def test_exact_save_and_load_keep_constants(tmp_path):
    g = _with_constants()
    save(g, tmp_path / "g.eqsat")
    back = load(tmp_path / "g.eqsat")
    assert [n.op for n in back] == [n.op for n in g] and not back.weights
    ins = g.random_inputs()
    for a, e in zip(back.run(ins), g.run(ins)):
        assert torch.equal(a, e)


def test_llvm_lowering_computes_constants_once():
    g = _with_constants()
    run = compile(g, "llvm", threads=1)
    ins = g.random_inputs()
    for a, e in zip(run(ins), g.run(ins)):
        assert torch.allclose(a, e, atol=1e-5)


def test_saturation_removes_a_fill_of_ones():
    b = GraphBuilder("ones")
    x = b.input("x", (8, 16))
    g = b.build([b.relu(b.mul(x, b.fill(shape=(8, 16), value=1.0)))])
    r = optimize(g, limits=Limits(iterations=4, nodes=2000, seconds=10))
    assert r.graph.summary() == {"relu": 1} and r.stats.verified is True
    assert r.stats.saturation.rules_fired["mul-fill"] >= 1


def test_an_average_pool_merges_into_a_sibling_conv():
    """avgpool-as-conv then taso-conv-distrib-weight:reverse: one conv on w + avg_kernel (precomputed)."""
    g = _pool_branch_graph()
    r = optimize(g, limits=Limits(iterations=6, nodes=5000, seconds=20), extractor="greedy")
    ops = r.graph.summary()  # one conv: direct, or in its Winograd form (rules/winograd.rules)
    assert ops in ({"conv2d": 1}, {"winograd_input": 1, "matmul": 1, "winograd_output": 1}), ops
    assert r.stats.verified is True and r.stats.cost_after < r.stats.cost_before
    assert verify(g, r.graph).ok


def test_constant_rules_are_shipped_and_checked():
    names = {r.name for r in load_rules()}
    assert {
        "mul-fill",
        "matmul-eye",
        "eye-matmul",
        "transpose-eye",
        "conv-identity-kernel",
        "conv-avg-kernel",
        "avgpool-identity-kernel",
        "avgpool-as-conv",
        "avgpool-as-conv-unpadded",
    } <= names


def test_weight_attribute_errors_name_the_op():
    with pytest.raises(GraphError, match="'eye'.*missing required attribute 'n'"):
        GraphBuilder().op("eye")
