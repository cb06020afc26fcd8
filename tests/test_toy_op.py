"""Adding an op is one registry entry plus its lowering.

A toy op, ``softsign`` (x / (1 + |x|)), is registered here with one ``OpDef``
(shape rule ``Same()``, torch reference, FLOPs, torch spelling ``F.softsign``)
and one lowering, and then goes through every stage: the builder and the torch
frontend, the generated egglog prelude (saturation with a rule that mentions
it), extraction, the rule checker's random shapes, and LLVM lowering.
"""

from collections.abc import Iterator

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lower.ir import call, const
from lower.ops_to_loops import register_unary, unregister_lowering
from rewrite.egraph.limits import Limits
from rewrite.egraph.prelude import EGG_TO_OP, prelude
from rewrite.frontends.torch_fx import from_torch
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.ops import OPS, CostClass, FusionRole, Group, OpDef, register_op, unregister_op
from rewrite.ir.shapes import Same
from rewrite.pipeline import compile, optimize
from rewrite.rulelang.syntax import parse_rules
from rewrite.verification.rulecheck.check import check_rule

TOY = OpDef(
    "softsign",
    Group.ELEMENTWISE,
    1,
    (),
    Same(),
    lambda xs, a: [F.softsign(xs[0])],
    lambda i, o, a: 3 * o[0][0] * (o[0][1] if len(o[0]) > 1 else 1),
    doc="x / (1 + |x|)",
    torch_functions=(F.softsign,),
)

# computing softsign after the slice touches fewer elements: extraction should take it
RULES = """
softsign-slice: (slice (softsign ?x) :axis ?a :start ?s :end ?e) => (softsign (slice ?x :axis ?a :start ?s :end ?e))
"""


@pytest.fixture
def toy() -> Iterator[OpDef]:
    register_op(TOY)
    register_unary("softsign", lambda x, a: x / (const(1.0) + call("abs", x)))
    try:
        yield TOY
    finally:
        unregister_lowering("softsign")
        unregister_op("softsign")


class _Net(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softsign(x)[:, 2:5]


def test_toy_op_registry_defaults(toy: OpDef) -> None:
    assert toy.cost_class is CostClass.OP and toy.fusion is FusionRole.ELEMENTWISE
    assert OPS["softsign"].infer([(3, 4)], {}) == [(3, 4)]
    assert EGG_TO_OP["Softsign"] == "softsign"
    text = prelude()
    assert "(Softsign T)" in text and "shape-softsign-0" in text


def test_toy_op_through_the_pipeline(toy: OpDef) -> None:
    # builder and torch import agree
    b = GraphBuilder("toy")
    x = b.input("x", (4, 8))
    y = b.op("slice", b.op("softsign", x), axis=1, start=2, end=5)
    built = b.build([y])
    imported = from_torch(_Net(), torch.randn(4, 8))
    assert [n.op for n in imported if n.op not in ("input", "weight")] == ["softsign", "slice"]

    # saturation with a rule that mentions it, extraction picks the cheaper order, verified numerically
    rules = parse_rules(RULES, "<toy>")
    res = optimize(built, rules, Limits(iterations=4), extractor="greedy")
    ops = [n.op for n in res.graph if n.id in res.graph.live() and n.op not in ("input", "weight")]
    assert ops == ["slice", "softsign"], ops

    # the rule checker draws shapes for it from its shape rule and finds the rule sound
    result = check_rule(rules[0])
    assert result.ok, result.message
    assert result.draws >= 3

    # lowered and compiled with LLVM, equal to the torch reference
    feed = {"x": torch.randn(4, 8)}
    for graph in (built, res.graph):
        out = compile(graph)(feed)
        torch.testing.assert_close(out[0], F.softsign(feed["x"])[:, 2:5], rtol=1e-5, atol=1e-6)


def test_toy_op_unregisters_cleanly() -> None:
    assert "softsign" not in OPS
    assert "(Softsign" not in prelude()
    with pytest.raises(ValueError, match="built in"):
        unregister_op("relu")
