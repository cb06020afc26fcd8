"""Adding a unary elementwise op end to end is one registry row plus one lowering row.

A toy op, ``softsign`` (x / (1 + |x|)), is registered here with one ``OpDef`` (shape rule ``Same()``, torch
reference, FLOPs, and its spellings: the torch operator it is, ``eqsat_toy.softsign.default``, and ONNX's
``Softsign``) and one lowering (``register_unary``).  Nothing else is told about it, and it goes through
every stage: torch.export, ONNX import and export, the generated egglog prelude (saturation with a rule
that mentions it), extraction, the rule checker's random shapes, LLVM lowering and compilation, CUDA PTX
(NVRTC, no GPU needed) and the fuzzer's op pool.

``F.softsign`` is plain Python (``x / (1 + x.abs())``), so torch.export would see abs, add and div; the
toy's torch spelling is a ``torch.library`` op, which torch.export keeps whole, as it keeps the ATen
overload of a real op (``aten.selu.default``: tests/ir/test_op_spellings.py).
"""

from collections.abc import Iterator

import numpy as np
import onnx
import onnx.helper as oh
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lower.ir import call, const
from lower.ops_to_loops import register_unary, unregister_lowering
from rewrite.egraph.limits import Limits
from rewrite.egraph.prelude import EGG_TO_OP, prelude
from rewrite.frontends.aten import ATEN, KEEP_WHOLE
from rewrite.frontends.onnx import from_onnx, to_onnx
from rewrite.frontends.torch_export import from_torch
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.errors import FrontendError
from rewrite.ir.ops import OPS, CostClass, FusionRole, Group, OnnxSpelling, OpDef, register_op, unregister_op
from rewrite.ir.shapes import Same
from rewrite.pipeline import compile, compile_ptx, optimize
from rewrite.rulelang.syntax import parse_rules
from rewrite.verification.rulecheck.check import check_rule


@torch.library.custom_op("eqsat_toy::softsign", mutates_args=())
def toy_softsign(x: torch.Tensor) -> torch.Tensor:
    return F.softsign(x)


@toy_softsign.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


TOY = OpDef(
    "softsign",
    Group.ELEMENTWISE,
    1,
    (),
    Same(),
    lambda xs, a: [F.softsign(xs[0])],
    lambda i, o, a: 3 * o[0][0] * (o[0][1] if len(o[0]) > 1 else 1),
    doc="x / (1 + |x|)",
    aten=("eqsat_toy.softsign.default",),
    onnx=OnnxSpelling("Softsign"),
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
        return torch.ops.eqsat_toy.softsign(x)[:, 2:5]


def _compute(g) -> list[str]:
    return [n.op for n in g if n.op not in ("input", "weight")]


def test_toy_op_registry_defaults(toy: OpDef) -> None:
    assert toy.cost_class is CostClass.OP and toy.fusion is FusionRole.ELEMENTWISE
    assert OPS["softsign"].infer([(3, 4)], {}) == [(3, 4)]
    assert EGG_TO_OP["Softsign"] == "softsign"
    text = prelude()
    assert "(Softsign T)" in text and "shape-softsign-0" in text


def test_toy_op_through_the_pipeline(toy: OpDef) -> None:
    # torch.export: the overload the registry row names has its converter row, and is kept whole
    overload = torch.ops.eqsat_toy.softsign.default
    assert ATEN[overload] == ("a_unary", "softsign") and overload in KEEP_WHOLE
    feed = {"x": torch.randn(4, 8)}
    want = F.softsign(feed["x"])[:, 2:5]
    imported = from_torch(_Net(), feed["x"])
    assert _compute(imported) == ["softsign", "slice"]
    torch.testing.assert_close(imported.run([feed["x"]])[0], want)

    # the builder builds it; ONNX export writes Softsign and ONNX import reads it back as the op
    b = GraphBuilder("toy")
    x = b.input("x", (4, 8))
    built = b.build([b.op("slice", b.op("softsign", x), axis=1, start=2, end=5)])
    model = to_onnx(built)
    assert [n.op_type for n in model.graph.node if n.op_type == "Softsign"] == ["Softsign"]
    assert _compute(from_onnx(model)) == ["softsign", "slice", "identity"]

    # saturation with a rule that mentions it, extraction picks the cheaper order, verified numerically (on rows
    # long enough that slicing first is more than optimize's MIN_GAIN cheaper: at 4 x 8 a kernel's fixed cost hides it)
    rules = parse_rules(RULES, "<toy>")
    b = GraphBuilder("toy-wide")
    x = b.input("x", (64, 4096))
    wide = b.build([b.op("slice", b.op("softsign", x), axis=1, start=2, end=5)])
    res = optimize(wide, rules, Limits(iterations=4), extractor="greedy")
    ops = [n.op for n in res.graph if n.id in res.graph.live() and n.op not in ("input", "weight")]
    assert ops == ["slice", "softsign"], ops

    # the rule checker draws shapes for it from its shape rule and finds the rule sound
    result = check_rule(rules[0])
    assert result.ok, result.message
    assert result.draws >= 3

    # lowered and compiled with LLVM, equal to the torch reference
    for graph in (built, imported):
        out = compile(graph)(feed)
        torch.testing.assert_close(out[0], want, rtol=1e-5, atol=1e-6)
    xw = torch.randn(64, 4096)
    torch.testing.assert_close(compile(res.graph)({"x": xw})[0], F.softsign(xw)[:, 2:5], rtol=1e-5, atol=1e-6)

    # and with CUDA: NVRTC compiles its kernel to PTX (no GPU needed)
    ptx = compile_ptx(imported)
    assert ptx and all(".entry" in text for text in ptx)


def test_toy_op_onnx_export_runs_in_onnxruntime(toy: OpDef) -> None:
    ort = pytest.importorskip("onnxruntime")
    b = GraphBuilder("toy")
    g = b.build([b.op("softsign", b.input("x", (3, 5)))])
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    sess = ort.InferenceSession(to_onnx(g).SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(sess.run(None, {"x": x})[0], F.softsign(torch.from_numpy(x)).numpy(), rtol=1e-6)


def test_toy_op_is_fuzzed(toy: OpDef) -> None:
    from tests.fuzz.gen import _unary_elementwise, random_graph
    from tests.fuzz.oracle import check

    assert "softsign" in _unary_elementwise()
    seed = next(s for s in range(200) if "softsign" in {n.op for n in random_graph(s)})
    outcome = check(random_graph(seed), seed)
    assert not outcome.failed, outcome.detail


def test_toy_op_unregisters_cleanly() -> None:
    assert "softsign" not in OPS
    assert "(Softsign" not in prelude()
    assert torch.ops.eqsat_toy.softsign.default not in ATEN
    with pytest.raises(FrontendError):
        from_torch(_Net(), torch.randn(4, 8))
    # ONNX Softsign is composed of registry ops again
    vi = [oh.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [2, 3]) for n in ("x", "y")]
    graph = oh.make_graph([oh.make_node("Softsign", ["x"], ["y"])], "softsign", vi[:1], vi[1:])
    ops = _compute(from_onnx(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 20)])))
    assert "softsign" not in ops and {"abs", "div"} <= set(ops)
    with pytest.raises(ValueError, match="built in"):
        unregister_op("relu")
