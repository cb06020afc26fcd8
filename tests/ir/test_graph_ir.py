"""Graph IR: ops, shapes, errors, execution against torch."""

import networkx as nx
import pytest
import torch

from rewrite import GraphBuilder, GraphError, ShapeError
from rewrite.ir.ops import ACTS, OPS, Group, ops_in
from rewrite.ir.shapes import ShapeRule


def test_every_op_has_group_shape_and_reference():
    for name, op in OPS.items():
        assert isinstance(op.group, Group), name
        assert isinstance(op.shape_rule, ShapeRule) and callable(op.ref), name
    assert {"relu", "add", "smul"} <= ops_in(Group.ELEMENTWISE)
    assert {"matmul", "linear", "conv2d"} <= ops_in(Group.CONTRACTION)


def test_builder_runs_equal_to_torch():
    torch.manual_seed(0)
    w, bias, cw = torch.randn(16, 4), torch.randn(4), torch.randn(6, 3, 3, 3)
    b = GraphBuilder()
    x = b.input("x", (8, 16))
    y = b.relu(b.add(b.matmul(x, b.weight("w", w)), b.weight("b", bias)))
    parts = b.split(y, 1, (1, 3))
    im = b.input("im", (1, 3, 10, 10))
    c = b.maxpool2d(b.conv2d(im, b.weight("cw", cw), stride=(2, 2), padding=(1, 1)), kernel=(2, 2), stride=(2, 2))
    g = b.build(parts + [c])
    ins = g.random_inputs(1)
    out = g.run(ins)
    ref = torch.relu(ins["x"] @ w + bias)
    assert torch.allclose(out[0], ref[:, :1]) and torch.allclose(out[1], ref[:, 1:])
    refc = torch.nn.functional.max_pool2d(torch.nn.functional.conv2d(ins["im"], cw, stride=2, padding=1), 2, 2)
    assert torch.allclose(out[2], refc)
    assert g.op_count() == 6  # matmul, add, relu, split, conv, pool (bias reshape is weight-only)
    nxg = g.to_networkx()
    assert nx.is_directed_acyclic_graph(nxg) and nxg.nodes[c.node]["op"] == "maxpool2d"


def test_shape_mismatch_names_op_and_shapes():
    b = GraphBuilder()
    x = b.input("x", (8, 16))
    with pytest.raises(ShapeError, match=r"matmul.*inner dimensions differ: 16 vs 8"):
        b.matmul(x, x)
    with pytest.raises(ShapeError, match="concat"):
        b.concat(x, b.input("y", (7, 15)), axis=0)


def test_unknown_op_and_bad_attribute():
    b = GraphBuilder()
    x = b.input("x", (2, 2))
    with pytest.raises(GraphError, match="unknown op 'frobnicate'"):
        b.op("frobnicate", x)
    with pytest.raises(GraphError, match="softmax.*unknown attribute.*axes"):
        b.op("softmax", x, axes=1)
    with pytest.raises(GraphError, match="perm.*must be ints"):
        b.op("transpose", x, perm="10")


def test_axis_is_normalised_and_pruned_copy():
    b = GraphBuilder()
    x = b.input("x", (2, 3))
    s = b.softmax(x, axis=-1)
    b.relu(x)  # dead
    g = b.build([s])
    assert g.nodes[s.node].attrs["axis"] == 1
    p = g.pruned()
    assert len(p.nodes) == 2 and p.op_count() == 1


def test_folded_precomputes_weight_only_subgraphs():
    torch.manual_seed(0)
    b = GraphBuilder()
    x = b.input("x", (4, 8))
    w1, w2 = b.weight("w1", torch.randn(8, 3)), b.weight("w2", torch.randn(8, 5))
    wc = b.smul(b.concat(w1, w2, axis=1), scalar=0.5)
    g = b.build([b.relu(b.matmul(x, wc))])
    f = g.folded()
    assert [n.op for n in f] == ["input", "weight", "matmul", "relu"]
    assert f.weight_only() == {f.weight_nodes[0].id}
    ins = g.random_inputs()
    assert torch.allclose(g.run(ins)[0], f.run(ins)[0])


# one example per op with a bias epilogue: inputs but the bias, the bias, attributes
EPILOGUE_EXAMPLES = {
    "conv2d_bias_act": ([(1, 3, 6, 6), (4, 3, 3, 3)], (4,), {"padding": (1, 1), "act": "relu"}),
    "conv2d_im2col_bias_act": ([(1, 3, 6, 6), (4, 3, 3, 3)], (4,), {"padding": (1, 1), "act": "relu"}),
    "matmul_bias_act": ([(5, 8), (8, 6)], (6,), {"act": "sigmoid"}),
    "conv2d_blocked_bias_act": ([(1, 1, 6, 6, 8), (1, 8, 3, 3, 8)], (8,), {"padding": (1, 1), "act": "tanh"}),
    "winograd_output_bias_act": ([(36, 6, 5)], (5,), {"out": (7, 9), "act": "relu"}),
}


@pytest.mark.parametrize("op", sorted(EPILOGUE_EXAMPLES))
def test_a_bias_epilogue_op_is_its_base_op_plus_the_bias_then_the_activation(op):
    """``OpDef.epilogue_of`` (what the compiled cost model prices such an op by) says what the op computes."""
    assert sorted(n for n, d in OPS.items() if d.epilogue_of) == sorted(EPILOGUE_EXAMPLES)
    shapes, bias_shape, attrs = EPILOGUE_EXAMPLES[op]
    d = OPS[op]
    base, axes = d.epilogue_of
    assert set(OPS[base].attr_names) == set(d.attr_names) - {"act"} and OPS[base].arity == d.arity - 1
    torch.manual_seed(0)
    xs, b = [torch.randn(s) for s in shapes], torch.randn(bias_shape)
    got = d.ref([*xs, b], d.normalize_attrs(attrs))[0]
    base_attrs = {k: v for k, v in attrs.items() if k != "act"}
    base_y = OPS[base].ref(xs, OPS[base].normalize_attrs(base_attrs))[0]
    along = {a % base_y.dim() for a in axes}
    bias_b = [n if i in along else 1 for i, n in enumerate(base_y.shape)]  # the bias spans those axes
    want = OPS[ACTS[attrs["act"]]].ref([base_y + b.reshape(bias_b)], {})[0]
    torch.testing.assert_close(got, want)
