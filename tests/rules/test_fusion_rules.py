"""Fusion, relaxed (MetaFlow) and transformer rules, and the ops they added.

* the new ops' shapes and reference semantics against torch, and their egglog
  shape rules against the registry;
* every rule of rules/fusion.rules, rules/relaxed.rules and
  rules/transformer.rules (each direction) instantiated by hand on concrete
  shapes chosen to satisfy its guards, both sides run in float64 and compared;
* an end-to-end optimize of a small conv-bn-relu network where batchnorm
  folding and bias/activation fusion fire and the result verifies.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rewrite import GraphBuilder
from rewrite.egraph.saturate import Limits, saturate
from rewrite.extract.egraph_data import read_serialized
from rewrite.frontends import from_torch
from rewrite.ir.graph import GraphError
from rewrite.ir.ops import OPS, ShapeError
from rewrite.pipeline import optimize
from rewrite.rulelang.loader import RULES_DIR, load_rules
from rewrite.rulelang.syntax import Call, Expr, ListExpr, Lit, Pattern, Rule, Var, load_rule_file
from rewrite.verification.numeric import compare

FAMILIES = ("fusion", "relaxed", "transformer")


# ------------------------------------------------------------------ new ops


def test_new_ops_shapes_and_reference_semantics():
    torch.manual_seed(0)
    x = torch.randn(2, 4, 7, 6, dtype=torch.float64)
    assert OPS["pad2d"].infer([(2, 4, 7, 6)], {"pads": (1, 2, 0, 3)}) == [(2, 4, 10, 9)]
    (p,) = OPS["pad2d"].ref([x], {"pads": (1, 2, 0, 3)})
    assert torch.equal(p, F.pad(x, (0, 3, 1, 2)))
    assert torch.equal(p[:, :, 1:8, 0:6], x)
    border = torch.ones_like(p, dtype=torch.bool)
    border[:, :, 1:8, 0:6] = False
    assert (p[border] == 0).all()

    v = torch.rand(5, dtype=torch.float64) + 0.1
    (r,) = OPS["rsqrt"].ref([v], {"eps": 1e-3})
    assert torch.allclose(r, 1 / torch.sqrt(v + 1e-3))

    w, b = torch.randn(6, 2, 3, 3, dtype=torch.float64), torch.randn(6, dtype=torch.float64)
    conv = OPS["conv2d_bias_act"]
    for act, fn in (("none", lambda t: t), ("relu", torch.relu), ("sigmoid", torch.sigmoid), ("tanh", torch.tanh)):
        a = conv.normalize_attrs({"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2), "groups": 2, "act": act})
        (y,) = conv.ref([x, w, b], a)
        assert torch.allclose(y, fn(F.conv2d(x, w, b, (2, 1), (1, 0), (1, 2), 2)))
        assert conv.infer([x.shape, w.shape, b.shape], a) == [tuple(y.shape)]

    mm = OPS["matmul_bias_act"]
    xm, wm, bm = (
        torch.randn(3, 4, 5, dtype=torch.float64),
        torch.randn(1, 5, 6, dtype=torch.float64),
        torch.randn(6, dtype=torch.float64),
    )
    (y,) = mm.ref([xm, wm, bm], {"act": "sigmoid"})
    assert torch.allclose(y, torch.sigmoid(xm @ wm + bm))
    assert mm.infer([(3, 4, 5), (1, 5, 6), (6,)], {"act": "relu"}) == [(3, 4, 6)]
    # FLOPs: the contraction plus bias and activation per output element
    assert mm.flops([(4, 5), (5, 6), (6,)], [(4, 6)], {"act": "relu"}) == 2 * 24 * 5 + 2 * 24


@pytest.mark.parametrize(
    "op, shapes, attrs, msg",
    [
        ("conv2d_bias_act", [(1, 3, 5, 5), (4, 3, 3, 3), (3,)], {"act": "relu"}, "bias must be \\[4\\]"),
        ("conv2d_bias_act", [(1, 3, 5, 5), (4, 3, 3, 3), (4,)], {"act": "gelu"}, "act must be one of"),
        ("matmul_bias_act", [(2, 3), (3, 4), (3,)], {}, "bias must be \\[4\\]"),
        ("pad2d", [(3,)], {"pads": (1, 1, 1, 1)}, "rank >= 2"),
        ("pad2d", [(3, 3)], {"pads": (1, -1, 1, 1)}, "non-negative"),
    ],
)
def test_new_ops_reject_bad_shapes_and_attributes(op, shapes, attrs, msg):
    b = GraphBuilder()
    ins = [b.input(f"i{k}", s) for k, s in enumerate(shapes)]
    with pytest.raises((ShapeError, GraphError), match=msg):
        b.op(op, *ins, **attrs)


def test_egglog_shapes_agree_with_registry_for_new_ops():
    b = GraphBuilder("new-ops")
    x = b.input("x", (2, 4, 9, 8))
    outs = [
        b.conv2d_bias_act(
            x,
            b.weight("w", torch.randn(6, 2, 3, 3)),
            b.weight("b", torch.randn(6)),
            stride=(2, 1),
            padding=(1, 0),
            dilation=(1, 2),
            groups=2,
            act="relu",
        ),
        b.conv2d_bias_act(x, b.weight("w1", torch.randn(5, 4, 1, 1)), b.weight("b1", torch.randn(5))),
        b.pad2d(x, pads=(1, 2, 0, 3)),
        b.pad2d(b.input("y", (5, 4)), pads=(0, 0, 1, 1)),
        b.rsqrt(b.relu(x), eps=1e-3),
        b.pad2d(b.weight("k", torch.randn(3, 2, 1, 1)), pads=(1, 1, 1, 1)),
    ]
    for r in (2, 3, 4):
        xm = b.input(f"m{r}", (2,) * (r - 2) + (5, 6))
        wm = b.weight(f"wm{r}", torch.randn(*((1,) * (r - 2) + (6, 7))))
        outs.append(b.matmul_bias_act(xm, wm, b.weight(f"bm{r}", torch.randn(7)), act="tanh"))
    g = b.build(outs)
    sat = saturate(g, [], Limits(iterations=0))
    raw = sat.serialized()
    data = read_serialized(raw)
    let_class = {info["let"]: cid for cid, info in raw["class_data"].items() if "let" in info}
    assert not data.dropped
    const = g.weight_only()
    for v, name in sat.encoding.lets.items():
        assert data.shapes[let_class[name]] == g.shape_of(v), v
        assert (let_class[name] in data.weight_only) == (v.node in const), v


# ------------------------------------------------------------------ rules, instantiated by hand


def _eval(e: Expr, env: dict) -> object:
    """An attribute/guard expression's value (egglog's meaning: i64 division truncates)."""
    if isinstance(e, Lit):
        return e.value
    if isinstance(e, ListExpr):
        return tuple(_eval(x, env) for x in e.items)
    if isinstance(e, Var):
        return env["attrs"][e.name]
    a = e.args
    if e.fn in ("dim", "rank", "shape", "weight", "wfirst", "wlast"):
        t = a[0].name  # type: ignore[union-attr]
        shape = env["shapes"][t]
        if e.fn == "dim":
            return shape[_eval(a[1], env)]  # negative counts from the end, as in the prelude
        return {
            "rank": lambda: len(shape),
            "shape": lambda: tuple(shape),
            "weight": lambda: t in env["weights"],
            "wfirst": lambda: env["order"][t],
            "wlast": lambda: env["order"][t],
        }[e.fn]()
    x: Any
    y: Any
    x, y = (_eval(v, env) for v in a)  # ints, floats or tuples: the rule language is dynamically typed
    if e.fn == "at":
        return x[y]
    if e.fn == "/":
        return x / y if isinstance(x, float) or isinstance(y, float) else int(x / y)
    ops = {
        "+": lambda: x + y,
        "-": lambda: x - y,
        "*": lambda: x * y,
        "max": lambda: max(x, y),
        "min": lambda: min(x, y),
        "=": lambda: x == y,
        "!=": lambda: x != y,
        "<": lambda: x < y,
        "<=": lambda: x <= y,
        ">": lambda: x > y,
        ">=": lambda: x >= y,
    }
    return ops[e.fn]()


def _build(p: Pattern, env: dict, b: GraphBuilder):
    if isinstance(p, Var):
        if p.name not in env["values"]:
            shape = env["shapes"][p.name]
            if p.name in env["weights"]:
                v = b.op("weight", name=p.name, shape=shape)
                b.graph.weights[p.name] = torch.zeros(shape, dtype=torch.float64)  # set per seed
            else:
                v = b.input(p.name, shape)
            env["values"][p.name] = v
        return env["values"][p.name]
    ins = [_build(q, env, b) for q in p.inputs]
    return b.op(p.op, *ins, **{k: _eval(e, env) for k, e in p.attrs})


def _weights_of(rule: Rule) -> set[str]:
    out: set[str] = set()

    def walk(e: Expr) -> None:
        if isinstance(e, Call):
            if e.fn in ("weight", "wfirst", "wlast"):
                out.add(e.args[0].name)  # type: ignore[union-attr]
            for x in e.args:
                walk(x)

    for g in rule.guards:
        walk(g)
    return out


def check_instance(
    rule: Rule, shapes: dict, attrs: dict, positive: tuple[str, ...] = (), seeds=(0, 1), rtol: float = 1e-9
) -> float:
    """Build one concrete instance of a rule direction, assert its guards hold, compare both sides."""
    weights = _weights_of(rule)
    order = {name: i for i, name in enumerate(shapes)}  # original weights, numbered in order
    env: dict[str, Any] = {
        "shapes": {k: tuple(v) for k, v in shapes.items()},
        "attrs": attrs,
        "weights": weights,
        "order": order,
        "values": {},
    }
    for guard in rule.guards:
        assert _eval(guard, env), f"{rule.name}: the instance does not satisfy guard {guard}"
    b = GraphBuilder(rule.name)
    lhs = [_build(p, env, b) for p in rule.lhs]
    rhs = [_build(p, env, b) for p in rule.rhs]
    g = b.build(lhs + rhs)
    worst = 0.0
    for seed in seeds:
        gen = torch.Generator().manual_seed(seed)
        inputs = {}
        for name, shape in env["shapes"].items():
            t = torch.randn(shape, generator=gen, dtype=torch.float64)
            if name in positive:
                t = t.abs() + 0.1
            if name in weights:
                g.weights[name] = t
            else:
                inputs[name] = t
        outs = g.run(inputs)
        for left, right in zip(outs[: len(lhs)], outs[len(lhs) :]):
            assert left.shape == right.shape, rule.name
            c = compare(left, right, rtol)
            assert c.close, f"{rule.name}: relative error {c.rel_err:.3g}"
            worst = max(worst, c.rel_err)
    return worst


CONV = {"s": (2, 1), "p": (1, 0), "d": (1, 2), "g": 1}
BN = {"gam": (4,), "bet": (4,), "mu": (4,), "var": (4,)}
SIB = {"s2": (1, 1), "p2": (0, 0), "d2": (1, 1), "g2": 1}  # the sibling conv of the enlarge rules
UNARY_CAT = ({"a": (2, 3, 4), "b": (2, 5, 4)}, {"k": 1, "c": -1.5})
SLICE = ({"x": (3, 9, 2)}, {"k": 1, "i": 2, "j": 7})

# rule name -> list of (tensor shapes, attribute values, positive tensors); every direction is checked
CASES: dict[str, list[tuple[dict, dict, tuple[str, ...]]]] = {
    "fuse-conv-bias": [
        ({"x": (2, 3, 7, 8), "w": (4, 3, 3, 3), "b": (4,)}, {**CONV, "t": (1, 4, 1, 1)}, ()),
        (
            {"x": (1, 4, 6, 6), "w": (6, 2, 3, 3), "b": (6,)},
            {"s": (1, 1), "p": (1, 1), "d": (1, 1), "g": 2, "t": (1, 6, 1, 1)},
            (),
        ),
    ],
    "fuse-conv-bias-l": [({"x": (2, 3, 7, 8), "w": (4, 3, 3, 3), "b": (4,)}, {**CONV, "t": (1, 4, 1, 1)}, ())],
    "fuse-matmul-bias": [
        ({"x": (5, 6), "w": (6, 7), "b": (7,)}, {"t": (1, 7)}, ()),
        ({"x": (2, 5, 6), "w": (1, 6, 7), "b": (7,)}, {"t": (1, 1, 7)}, ()),
    ],
    "fuse-matmul-bias-l": [({"x": (2, 5, 6), "w": (2, 6, 7), "b": (7,)}, {"t": (1, 1, 7)}, ())],
    **{
        f"fuse-conv-{a}": [({"x": (2, 3, 7, 8), "w": (4, 3, 3, 3), "b": (4,)}, CONV, ())]
        for a in ("relu", "sigmoid", "tanh")
    },
    **{
        f"fuse-matmul-{a}": [({"x": (2, 5, 6), "w": (1, 6, 7), "b": (7,)}, {}, ())] for a in ("relu", "sigmoid", "tanh")
    },
    "fold-bn-conv": [
        ({"x": (2, 3, 7, 8), "w": (4, 3, 3, 3), **BN}, {**CONV, "e": 1e-3}, ("var",)),
        (
            {"x": (1, 4, 5, 5), "w": (4, 1, 3, 3), **BN},
            {"s": (1, 1), "p": (1, 1), "d": (1, 1), "g": 4, "e": 1e-5},
            ("var",),
        ),
    ],
    "fold-bn-conv-bias": [({"x": (2, 3, 7, 8), "w": (4, 3, 3, 3), "c": (4,), **BN}, {**CONV, "e": 0.1}, ("var",))],
    "avgpool-as-conv": [  # a conv with avg_kernel is the pool that counts its zero padding
        ({"x": (2, 3, 7, 8)}, {"k": (3, 3), "s": (2, 1), "p": (1, 1)}, ()),
        ({"x": (1, 4, 6, 6)}, {"k": (2, 2), "s": (2, 2), "p": (0, 1)}, ()),
    ],
    "avgpool-as-conv-unpadded": [({"x": (2, 3, 7, 8)}, {"k": (3, 2), "s": (2, 2)}, ())],
    # the enlarge rules' second root is the sibling conv (?v, its attributes s2 p2 d2 g2) they are guarded by
    "enlarge-conv-1x1": [
        (
            {"x": (1, 3, 7, 8), "w": (5, 3, 1, 1), "v": (2, 3, 3, 3)},
            {"s": (2, 2), "p": (1, 0), "d": (2, 1), "g": 1, **SIB},
            (),
        ),
        (
            {"x": (2, 4, 6, 5), "w": (6, 2, 1, 1), "v": (3, 4, 1, 3)},
            {"s": (1, 2), "p": (0, 0), "d": (1, 1), "g": 2, **SIB},
            (),
        ),
    ],
    "enlarge-conv-bias-act-1x1": [
        (
            {"x": (1, 3, 7, 8), "w": (5, 3, 1, 1), "b": (5,), "v": (2, 3, 3, 3), "c": (2,)},
            {"s": (2, 1), "p": (0, 1), "d": (1, 3), "g": 1, "a": "relu", **SIB, "a2": "tanh"},
            (),
        )
    ],
    "enlarge-conv-1x3": [
        (
            {"x": (1, 3, 7, 8), "w": (5, 3, 1, 3), "v": (2, 3, 3, 3)},
            {"s": (2, 2), "p": (1, 1), "d": (2, 1), "g": 1, **SIB},
            (),
        ),
        (
            {"x": (2, 4, 6, 5), "w": (6, 2, 1, 3), "v": (3, 4, 3, 1)},
            {"s": (1, 2), "p": (0, 0), "d": (1, 1), "g": 2, **SIB},
            (),
        ),
    ],
    "enlarge-conv-3x1": [
        (
            {"x": (1, 3, 7, 8), "w": (5, 3, 3, 1), "v": (2, 3, 3, 3)},
            {"s": (2, 2), "p": (1, 0), "d": (1, 2), "g": 1, **SIB},
            (),
        ),
        (
            {"x": (2, 4, 6, 5), "w": (6, 2, 3, 1), "v": (3, 4, 1, 3)},
            {"s": (2, 1), "p": (0, 0), "d": (1, 1), "g": 2, **SIB},
            (),
        ),
    ],
    "enlarge-conv-bias-act-1x3": [
        (
            {"x": (1, 3, 7, 8), "w": (5, 3, 1, 3), "b": (5,), "v": (2, 3, 3, 1), "c": (2,)},
            {"s": (2, 1), "p": (0, 1), "d": (3, 1), "g": 1, "a": "relu", **SIB, "a2": "none"},
            (),
        )
    ],
    "enlarge-conv-bias-act-3x1": [
        (
            {"x": (1, 3, 7, 8), "w": (5, 3, 3, 1), "b": (5,), "v": (2, 3, 1, 3), "c": (2,)},
            {"s": (1, 2), "p": (1, 0), "d": (1, 3), "g": 1, "a": "relu", **SIB, "a2": "sigmoid"},
            (),
        )
    ],
    "merge-conv-shared-input": [
        ({"x": (1, 3, 6, 7), "w1": (2, 3, 3, 3), "w2": (4, 3, 3, 3)}, {"s": (1, 2), "p": (1, 1), "d": (1, 1)}, ())
    ],
    "merge-conv-bias-act-shared-input": [
        (
            {"x": (1, 3, 6, 7), "w1": (2, 3, 3, 3), "w2": (4, 3, 3, 3), "b1": (2,), "b2": (4,)},
            {"s": (1, 1), "p": (1, 0), "d": (2, 1), "a": "tanh"},
            (),
        )
    ],
    "concat-conv": [
        ({"x": (2, 3, 6, 7), "w1": (2, 3, 1, 3), "w2": (3, 3, 1, 3)}, {"s": (1, 1), "p": (0, 1), "d": (1, 1)}, ())
    ],
    "concat-conv-bias-act": [
        (
            {"x": (2, 3, 6, 7), "w1": (2, 3, 3, 3), "w2": (3, 3, 3, 3), "b1": (2,), "b2": (3,)},
            {"s": (2, 2), "p": (1, 1), "d": (1, 1), "a": "sigmoid"},
            (),
        )
    ],
    **{f"{u}-concat": [(*UNARY_CAT, ())] for u in ("relu", "sigmoid", "tanh", "gelu", "smul")},
    **{
        f"{u}-concat": [({"a": (2, 3, 4), "b": (2, 5, 4), "c": (2, 3, 4), "d": (2, 5, 4)}, {"k": 1}, ())]
        for u in ("add", "mul")
    },
    **{f"slice-{u}": [(*SLICE, ())] for u in ("relu", "sigmoid", "tanh", "gelu")},
    "concat-adjacent-slices": [({"x": (3, 9, 2)}, {"k": 1, "i": 1, "j": 4, "l": 8}, ())],
    "slice-whole-axis": [({"x": (3, 9, 2)}, {"k": 1, "j": 9}, ())],
    "attn-scale-into-q": [
        ({"x": (4, 8), "w": (8, 6), "k": (2, 3, 5)}, {"s": (4, 2, 3), "p": (1, 0, 2), "c": 0.125}, ())
    ],
    "attn-scale-into-k": [
        ({"q": (2, 5, 3), "x": (4, 8), "w": (8, 6)}, {"s": (4, 2, 3), "p": (1, 2, 0), "c": 0.125}, ())
    ],
    "head-split-102": [({"x": (4, 8), "w": (8, 6)}, {"s": (4, 2, 3)}, ())],
    "head-split-120": [({"x": (4, 8), "w": (8, 6)}, {"s": (4, 3, 2)}, ())],
    "merge-bmm-heads": [({"x": (1, 4, 8), "w1": (8, 6), "w2": (8, 4)}, {"s1": (8, 2, 3), "s2": (8, 2, 2)}, ())],
    "merge-bmm-linear": [({"x": (2, 4, 8), "w1": (8, 5), "w2": (8, 3)}, {"s1": (1, 8, 5), "s2": (1, 8, 3)}, ())],
    "layernorm-smul": [
        ({"x": (3, 6), "g": (6,), "b": (6,)}, {"c": 2.5, "e": 1e-3}, ()),
        ({"x": (2, 3, 6), "g": (6,), "b": (6,)}, {"c": 0.01, "e": 1e-5}, ()),
    ],
}

OURS = [r for f in FAMILIES for r in load_rule_file(RULES_DIR / f"{f}.rules")]


def test_every_rule_has_a_concrete_case():
    assert sorted(r.name for r in OURS) == sorted(CASES)


@pytest.mark.parametrize("rule", OURS, ids=lambda r: r.name)
def test_rule_is_sound_on_concrete_instances(rule):
    for direction in rule.directions():
        for shapes, attrs, positive in CASES[rule.name]:
            check_instance(direction, shapes, attrs, positive)


def test_instance_checker_catches_a_wrong_fold():
    from rewrite.rulelang.syntax import parse_rules

    wrong = parse_rules(  # forgets eps: off by a few percent, far above the tolerance
        "bad: (batchnorm (conv2d ?x ?w) ?gam ?bet ?mu ?var :eps ?e) => (conv2d_bias_act ?x "
        "(mul ?w (reshape (mul ?gam (rsqrt ?var)) :shape [(dim ?w 0) 1 1 1])) "
        "(sub ?bet (mul ?mu (mul ?gam (rsqrt ?var)))))"
        " if (weight ?gam) (weight ?bet) (weight ?mu) (weight ?var)"
    )[0]
    with pytest.raises(AssertionError, match="relative error"):
        check_instance(wrong, {"x": (1, 3, 5, 5), "w": (4, 3, 3, 3), **BN}, {"e": 0.1}, ("var",))


def test_all_families_load_together():
    rules = load_rules()
    fams = {r.family for r in rules}
    assert set(FAMILIES) <= fams


# ------------------------------------------------------------------ end to end


class _ConvBnRelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1, self.bn1 = nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 1)  # with a bias
        self.c3, self.bn3 = nn.Conv2d(8, 4, 3, stride=2, bias=False), nn.BatchNorm2d(4)
        self.fc = nn.Linear(4 * 3 * 3, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.c1(x)))
        y = torch.relu(self.c2(y))
        y = torch.relu(self.bn3(self.c3(y)))
        return torch.sigmoid(self.fc(y.flatten(1)))


def test_optimize_folds_batchnorm_and_fuses_bias_and_activation():
    torch.manual_seed(0)
    m = _ConvBnRelu().eval()
    with torch.no_grad():
        for bn in (m.bn1, m.bn3):
            bn.running_mean.normal_(0, 0.3)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_(0, 0.2)
    g = from_torch(m, (torch.randn(2, 3, 8, 8),), name="conv-bn-relu")
    r = optimize(g, limits=Limits(iterations=10, nodes=20_000, seconds=20))
    s = r.stats
    assert s.verified is True
    fired = s.saturation.rules_fired
    for name in ("fold-bn-conv", "fuse-conv-bias", "fuse-conv-relu", "fuse-matmul-bias", "fuse-matmul-sigmoid"):
        assert fired.get(name, 0) >= 1, name
    after = r.graph.summary()
    assert "batchnorm" not in after and "relu" not in after and "sigmoid" not in after and "add" not in after
    assert after["conv2d_bias_act"] == 3 and after["matmul_bias_act"] == 1
    acts = sorted(n.attrs["act"] for n in r.graph if n.op.endswith("_bias_act"))
    assert acts == ["relu", "relu", "relu", "sigmoid"]
    assert s.cost_after < s.cost_before and s.ops_after < s.ops_before
    # the folded weights and biases are weight-only: precomputed, not run-time ops
    const = r.graph.weight_only()
    assert all(n.id in const for n in r.graph if n.op in ("rsqrt", "pad2d"))
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        assert torch.allclose(r.graph.run([x])[0], m(x), atol=1e-5)


class _Fire(nn.Module):
    """SqueezeNet's fire module, small enough that launch overheads dominate."""

    def __init__(self) -> None:
        super().__init__()
        self.sq, self.e1, self.e3 = nn.Conv2d(8, 4, 1), nn.Conv2d(4, 8, 1), nn.Conv2d(4, 8, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.sq(x))
        return torch.cat([torch.relu(self.e1(y)), torch.relu(self.e3(y))], 1)


def test_relaxed_enlarge_then_merge_pays_off_on_a_small_fire_module():
    torch.manual_seed(0)
    m = _Fire().eval()
    g = from_torch(m, (torch.randn(1, 8, 4, 4),), name="fire")
    r = optimize(g, limits=Limits(iterations=10, nodes=20_000, seconds=20))
    s = r.stats
    fired = s.saturation.rules_fired
    assert s.verified is True and s.cost_after < s.cost_before
    assert fired.get("enlarge-conv-bias-act-1x1", 0) + fired.get("enlarge-conv-1x1", 0) >= 1
    # squeeze conv + one merged 3x3 expand conv (the 1x1 kernel zero-padded), no concat left
    assert r.graph.summary() == {"conv2d_bias_act": 2}
    assert any(n.op in ("pad2d", "pad") for n in r.graph)  # the 1x1 weight zero-padded (pad2d-pad: either form)
    x = torch.randn(1, 8, 4, 4)
    with torch.no_grad():
        assert torch.allclose(r.graph.run([x])[0], m(x), atol=1e-5)


def test_a_1x1_conv_is_enlarged_only_beside_a_sibling_it_can_merge_with():
    """A lone 1x1 conv (a MobileNet's pointwise conv, a ResNet bottleneck's) gains no 3x3 twin, nor the
    Winograd form and kernel measurements a twin would bring; beside a 3x3 conv of the same input it does."""
    rules = load_rules(["relaxed"])
    b = GraphBuilder()
    x = b.input("x", (1, 8, 6, 6))
    lone = b.build([b.relu(b.conv2d(x, b.weight("w", torch.randn(4, 8, 1, 1))))])
    b = GraphBuilder()
    x = b.input("x", (1, 8, 6, 6))
    one = b.conv2d(x, b.weight("w", torch.randn(4, 8, 1, 1)))
    three = b.conv2d(x, b.weight("v", torch.randn(4, 8, 3, 3)), padding=(1, 1))
    pair = b.build([b.relu(one), b.relu(three)])
    limits = Limits(iterations=6, nodes=20_000, seconds=20)
    assert "enlarge-conv-1x1" not in saturate(lone, rules, limits).rules_fired
    fired = saturate(pair, rules, limits).rules_fired
    assert fired.get("enlarge-conv-1x1", 0) >= 1 and fired.get("merge-conv-shared-input", 0) >= 1
