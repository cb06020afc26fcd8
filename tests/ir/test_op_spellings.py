"""Coverage of the registry's frontend spellings (``OpDef.aten``, ``OpDef.onnx``), as ``check_coverage``
covers lowerings: a unary elementwise op needs an ATen overload and an ONNX spelling, unless it is named
below with the reason it has none.  The frontend and export tables are derived from these spellings, so
an op that passes here imports from torch.export and ONNX and exports to ONNX.
"""

import onnx
import pytest
import torch

from lower.ops_to_loops import ACTIVATIONS, LOWERINGS
from rewrite.frontends.aten import ATEN, ATEN_ROWS, KEEP_WHOLE
from rewrite.frontends.aten_spelled import overload, registry_rows
from rewrite.frontends.aten_training import CONVERTERS, TRAINING_IR
from rewrite.frontends.onnx import HANDLERS, ONNX_OPS, from_onnx, to_onnx
from rewrite.frontends.onnx.elementwise import spellings
from rewrite.frontends.onnx.export import _EMIT
from rewrite.frontends.torch_export import capture
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.ops import ACTS, OPS, Group, OpDef

# unary elementwise ops with no ATen overload of their own, and why
NO_ATEN = {
    "gelu": "aten.gelu.default with approximate='tanh': the a_gelu row picks gelu or gelu_erf",
    "gelu_erf": "aten.gelu.default with approximate='none': the a_gelu row",
    "identity": "no ATen op computes it: clone, alias and detach are copies (a_copy, no node)",
    "neg": "aten.neg.default imports as smul(-1) (a_neg; rules/algebra: neg <=> smul -1)",
    "logical_not": "aten.logical_not / bitwise_not cast a non-bool operand first (a_logical_not)",
}
# unary elementwise ops with no ONNX spelling, and why
NO_ONNX = {
    "silu": "Swish came in opset 24 (export writes opset 20): exported as x * Sigmoid(x), Swish(alpha=1) imports",
    "log1p": "ONNX has no Log1p: exported as Log(1 + x)",
    "expm1": "ONNX has no Expm1: exported as Exp(x) - 1",
    "rsqrt": "ONNX has no Rsqrt: exported as Reciprocal(Sqrt(x + eps))",
}


def _unary() -> dict[str, OpDef]:
    """The group that needs both spellings: elementwise ops of one tensor without a required attribute."""
    return {
        n: d
        for n, d in OPS.items()
        if d.group is Group.ELEMENTWISE and d.arity == 1 and all(a.default is not None for a in d.attrs)
    }


def test_every_unary_op_has_an_aten_overload_or_a_named_exemption():
    missing = sorted(n for n, d in _unary().items() if not d.aten and n not in NO_ATEN)
    assert missing == [], f"unary ops without OpDef.aten: {missing} (spell them, or name them in NO_ATEN)"
    stale = sorted(n for n in NO_ATEN if n not in _unary() or OPS[n].aten)
    assert stale == [], f"NO_ATEN names ops that are not unary or have a spelling: {stale}"


def test_every_unary_op_has_an_onnx_spelling_or_a_named_exemption():
    missing = sorted(n for n, d in _unary().items() if d.onnx is None and n not in NO_ONNX)
    assert missing == [], f"unary ops without OpDef.onnx: {missing} (spell them, or name them in NO_ONNX)"
    stale = sorted(n for n in NO_ONNX if n not in _unary() or OPS[n].onnx is not None)
    assert stale == [], f"NO_ONNX names ops that are not unary or have a spelling: {stale}"
    assert not set(NO_ONNX) & set(NO_ATEN) - {"logical_not"}
    for n in NO_ONNX:  # the exporter still writes them, composed
        assert n in _EMIT, n


@pytest.mark.parametrize("name", sorted(n for n, d in OPS.items() if d.aten))
def test_aten_spelling_is_an_overload_of_the_op_s_tensors_alone(name):
    d = OPS[name]
    assert d.arity == 1, "the a_unary row builds ops of one tensor"
    for s in d.aten:
        schema = overload(s)._schema
        assert [a.type.kind() for a in schema.arguments] == ["TensorType"], (s, str(schema))
        assert len(schema.returns) == 1, (s, str(schema))
        assert ATEN[overload(s)] == ("a_unary", name) == CONVERTERS[overload(s)]
        assert overload(s) in KEEP_WHOLE  # torch.export's decompositions leave it whole


def test_registry_rows_and_hand_written_rows_never_name_the_same_overload():
    assert not set(registry_rows()) & (set(ATEN_ROWS) | set(TRAINING_IR))
    assert "a_unary" not in {m for m, _ in ATEN_ROWS.values()} | {m for m, _ in TRAINING_IR.values()}
    assert len(ATEN) == len(ATEN_ROWS) + len(registry_rows())


@pytest.mark.parametrize("name", sorted(n for n, d in OPS.items() if d.onnx is not None))
def test_onnx_spelling_is_a_standard_op_with_its_attributes(name):
    d = OPS[name]
    assert d.onnx is not None and d.arity == 1, "the importer's _spelled reads ops of one input"
    assert d.name not in _EMIT, "the exporter writes a spelled op from its spelling only"
    schema = onnx.defs.get_schema(d.onnx.op_type, 20)
    assert {a for a, _, _ in d.onnx.attrs} <= set(schema.attributes), d.onnx
    assert d.onnx.op_type in ONNX_OPS
    # the ops one op type spells (Gelu: gelu and gelu_erf) never match the same attributes
    others = [o for o in spellings()[d.onnx.op_type] if o is not d]
    assert not any(o.onnx is not None and o.onnx.matches(d.onnx.export_attrs()) for o in others)


def test_spelled_op_types_keep_their_own_handler_only_as_the_other_attributes_fallback():
    # these handlers compose registry ops for the attribute values no registry op means
    assert {t for t in spellings() if t in HANDLERS} == {"HardSigmoid", "Selu"}


def test_activations_are_unary_ops_with_every_spelling():
    assert set(ACTIVATIONS) == set(ACTS)
    for act, op in ACTS.items():
        d = OPS[op]
        assert d.group is Group.ELEMENTWISE and d.arity == 1 and op in LOWERINGS, act
        assert d.onnx is not None, act


@pytest.mark.parametrize("name", sorted(n for n, d in _unary().items() if d.onnx is not None))
def test_unary_op_exports_to_onnx_and_imports_back_as_itself(name):
    b = GraphBuilder(name)
    g = b.build([b.op(name, b.input("x", (2, 3), "bool" if name == "logical_not" else "float32"))])
    ops = [n.op for n in from_onnx(to_onnx(g)) if n.op != "input"]
    assert ops == [name, "identity"]  # the output is an Identity of its own


def test_selu_is_one_registry_row_plus_one_lowering_row():
    """The real op added the toy's way: torch.export keeps aten.selu whole, ONNX Selu reads and writes it."""
    from rewrite.pipeline import compile, compile_ptx

    class Net(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.selu(x)

    x = torch.linspace(-6, 6, 48).reshape(4, 12)
    for decompose in (False, True):
        g = capture(Net(), (x,), decompose=decompose).graph
        assert [n.op for n in g if n.op != "input"] == ["selu"]
    torch.testing.assert_close(compile(g)({"x": x})[0], torch.selu(x), rtol=1e-6, atol=1e-6)
    assert all(".entry" in text for text in compile_ptx(g))  # CUDA: NVRTC compiles it (no GPU needed)
    model = to_onnx(g)
    assert [n.op_type for n in model.graph.node] == ["Selu", "Identity"]
    assert [n.op for n in from_onnx(model) if n.op != "input"] == ["selu", "identity"]
    # other constants than torch's: composed of registry ops, as before
    model.graph.node[0].attribute[0].f = 1.5
    assert "selu" not in {n.op for n in from_onnx(model)}
