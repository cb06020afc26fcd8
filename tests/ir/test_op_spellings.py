"""Coverage of the registry's frontend spellings (``OpDef.aten``, ``OpDef.onnx``), as ``check_coverage``
covers lowerings: a unary elementwise op and an elementwise op of several tensors (add, eq, where...) need
an ATen overload and an ONNX spelling, unless it is named below with the reason it has none.  The frontend
and export tables are derived from these spellings, so an op that passes here imports from torch.export
and ONNX and exports to ONNX.
"""

import onnx
import pytest
import torch

from lower.ops_to_loops import ACTIVATIONS, LOWERINGS
from rewrite.frontends.aten import ATEN, ATEN_ROWS, KEEP_WHOLE, AtenConverters
from rewrite.frontends.aten_spelled import overload, registry_rows, spelled
from rewrite.frontends.aten_training import CONVERTERS, TRAINING_IR
from rewrite.frontends.onnx import HANDLERS, ONNX_OPS, from_onnx, to_onnx
from rewrite.frontends.onnx.elementwise import IMPORTERS, _spelled, handler_for, spellings
from rewrite.frontends.onnx.export import _EMIT, _SAME
from rewrite.frontends.torch_export import capture, from_torch
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.dtypes import BOOL, FLOAT32
from rewrite.ir.ops import ACTS, OPS, AtenSpelling, Group, OnnxSpelling, OpDef, register_op, unregister_op
from rewrite.ir.shapes import Broadcast

# elementwise ops (unary, or of several tensors) with no ATen overload of their own, and why
NO_ATEN = {
    "gelu": "aten.gelu.default with approximate='tanh': the a_gelu row picks gelu or gelu_erf",
    "gelu_erf": "aten.gelu.default with approximate='none': the a_gelu row",
    "identity": "no ATen op computes it: clone, alias and detach are copies (a_copy, no node)",
    "neg": "aten.neg.default imports as smul(-1) (a_neg; rules/algebra: neg <=> smul -1)",
    "logical_not": "aten.logical_not / bitwise_not cast a non-bool operand first (a_logical_not)",
}
# elementwise ops (unary, or of several tensors) with no ONNX spelling, and why
NO_ONNX = {
    "silu": "Swish came in opset 24 (export writes opset 20): exported as x * Sigmoid(x), Swish(alpha=1) imports",
    "log1p": "ONNX has no Log1p: exported as Log(1 + x)",
    "expm1": "ONNX has no Expm1: exported as Exp(x) - 1",
    "rsqrt": "ONNX has no Rsqrt: exported as Reciprocal(Sqrt(x + eps))",
    "ne": "ONNX has no NotEqual: exported as Not(Equal(x, y)); IsNaN imports as ne(x, x)",
    "atan2": "ONNX has no Atan2: exported as Atan(y / x) with the quadrant fixed by Where",
    "mod": "ONNX Mod's fmod attribute is the mode, but a float32 floor mod has no Mod (opset 20 takes fmod=0 for "
    "integers only): exported composed; Mod imports by its own handler (constants fold, dtypes checked)",
    "idiv": "ONNX Div of int64 tensors is idiv(trunc), picked by Div's importer from the dtype; floor is composed",
    "masked_fill": "ONNX has no MaskedFill: exported as Where(mask, value, x)",
}


def _unary() -> dict[str, OpDef]:
    """Elementwise ops of one tensor without a required attribute."""
    return {
        n: d
        for n, d in OPS.items()
        if d.group is Group.ELEMENTWISE and d.arity == 1 and all(a.default is not None for a in d.attrs)
    }


def _several() -> dict[str, OpDef]:
    """Elementwise ops of several tensors (add, eq, where, logical_and...): their converters broadcast, promote
    dtypes and read numbers, so their ATen spellings name the converter (``AtenSpelling``)."""
    return {n: d for n, d in OPS.items() if d.group is Group.ELEMENTWISE and d.arity != 1}


def _needs_spellings() -> dict[str, OpDef]:
    """The ops that need both spellings."""
    return {**_unary(), **_several()}


def test_every_elementwise_op_has_an_aten_overload_or_a_named_exemption():
    missing = sorted(n for n, d in _needs_spellings().items() if not d.aten and n not in NO_ATEN)
    assert missing == [], f"ops without OpDef.aten: {missing} (spell them, or name them in NO_ATEN)"
    stale = sorted(n for n in NO_ATEN if n not in _needs_spellings() or OPS[n].aten)
    assert stale == [], f"NO_ATEN names ops that need no spelling or have one: {stale}"


def test_every_elementwise_op_has_an_onnx_spelling_or_a_named_exemption():
    missing = sorted(n for n, d in _needs_spellings().items() if d.onnx is None and n not in NO_ONNX)
    assert missing == [], f"ops without OpDef.onnx: {missing} (spell them, or name them in NO_ONNX)"
    stale = sorted(n for n in NO_ONNX if n not in _needs_spellings() or OPS[n].onnx is not None)
    assert stale == [], f"NO_ONNX names ops that need no spelling or have one: {stale}"
    assert not set(NO_ONNX) & set(NO_ATEN) - {"logical_not"}
    for n in NO_ONNX:  # the exporter still writes them, composed
        assert n in _EMIT, n


@pytest.mark.parametrize("name", sorted(n for n, d in OPS.items() if d.aten))
def test_aten_spelling_is_an_overload_its_converter_reads(name):
    d = OPS[name]
    for s in d.aten_spellings:
        ov = overload(s.overload)
        assert ATEN[ov] == (s.converter, name) == CONVERTERS[ov]
        assert spelled(ov) == (d, s)
        assert hasattr(AtenConverters, s.converter), s
        assert {k for k, _ in s.attrs} <= set(d.attr_names), s
        if s.converter == "a_unary":  # the op of its one tensor, with no other argument
            assert d.arity == 1, "the a_unary row builds ops of one tensor"
            schema = ov._schema
            assert [a.type.kind() for a in schema.arguments] == ["TensorType"], (s, str(schema))
            assert len(schema.returns) == 1, (s, str(schema))
            assert ov in KEEP_WHOLE  # torch.export's decompositions leave it whole
        else:  # what the default decompositions do with it is left as it is (rsub, floor_divide decompose)
            assert ov not in KEEP_WHOLE


def test_registry_rows_and_hand_written_rows_never_name_the_same_overload():
    assert not set(registry_rows()) & (set(ATEN_ROWS) | set(TRAINING_IR))
    assert "a_unary" not in {m for m, _ in ATEN_ROWS.values()} | {m for m, _ in TRAINING_IR.values()}
    assert len(ATEN) == len(ATEN_ROWS) + len(registry_rows())


@pytest.mark.parametrize("name", sorted(n for n, d in OPS.items() if d.onnx is not None))
def test_onnx_spelling_is_a_standard_op_with_its_attributes(name):
    d = OPS[name]
    assert d.onnx is not None
    assert d.name not in _EMIT, "the exporter writes a spelled op from its spelling only"
    schema = onnx.defs.get_schema(d.onnx.op_type, 20)
    assert {a for a, _, _ in d.onnx.attrs} <= set(schema.attributes), d.onnx
    assert schema.min_input <= d.arity <= schema.max_input, (d.onnx, schema.min_input, schema.max_input)
    assert d.onnx.op_type in ONNX_OPS
    # a unary op reads as one node of it (``_spelled``); an op of several tensors through its importer
    # (constants fold, scalars become smul), which reads the op from the registry
    assert handler_for(d.onnx.op_type) is (_spelled if d.arity == 1 else IMPORTERS[name])
    # the ops one op type spells (Gelu: gelu and gelu_erf) never match the same attributes
    others = [o for o in spellings()[d.onnx.op_type] if o is not d]
    assert not any(o.onnx is not None and o.onnx.matches(d.onnx.export_attrs()) for o in others)


def test_exporter_writes_no_elementwise_op_by_hand_table():
    assert not {n for n in _SAME if OPS[n].group is Group.ELEMENTWISE}
    assert not set(IMPORTERS) - {n for n, d in OPS.items() if d.onnx is not None}


def test_spelled_op_types_keep_their_own_handler_only_as_the_other_attributes_fallback():
    # these handlers compose registry ops for the attribute values no registry op means
    assert {t for t in spellings() if t in HANDLERS} == {"HardSigmoid", "Selu"}


def test_activations_are_unary_ops_with_every_spelling():
    assert set(ACTIVATIONS) == set(ACTS)
    for act, op in ACTS.items():
        d = OPS[op]
        assert d.group is Group.ELEMENTWISE and d.arity == 1 and op in LOWERINGS, act
        assert d.onnx is not None, act


@pytest.mark.parametrize("name", sorted(n for n, d in _needs_spellings().items() if d.onnx is not None))
def test_elementwise_op_exports_to_onnx_and_imports_back_as_itself(name):
    d = OPS[name]
    b = GraphBuilder(name)
    wants = [d.dtype_rule.ins[min(i, len(d.dtype_rule.ins) - 1)] for i in range(d.arity)]
    ins = [b.input(f"x{i}", (2, 3), BOOL if t == BOOL else FLOAT32) for i, t in enumerate(wants)]
    g = b.build([b.op(name, *ins)])
    ops = [n.op for n in from_onnx(to_onnx(g)) if n.op != "input"]
    assert ops == [name, "identity"]  # the output is an Identity of its own


@pytest.fixture
def toy_hypot():
    """A binary op registered at run time, spelled by ``aten.hypot`` (read by the generic ``a_binary``)."""
    op = register_op(
        OpDef(
            "toy_hypot",
            Group.ELEMENTWISE,
            2,
            (),
            Broadcast(),
            lambda xs, a: [torch.hypot(xs[0], xs[1])],
            aten=(AtenSpelling("aten.hypot.default", "a_binary"),),
            onnx=OnnxSpelling("Hypot"),  # no such ONNX op: the importer's lookup is what is checked
        )
    )
    try:
        yield op
    finally:
        unregister_op("toy_hypot")


def test_a_binary_op_registered_at_run_time_picks_its_rows_up(toy_hypot):
    ov = torch.ops.aten.hypot.default
    assert ATEN[ov] == ("a_binary", "toy_hypot") == CONVERTERS[ov] and ov not in KEEP_WHOLE

    class Net(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return torch.hypot(x, y)

    x, y = torch.randn(2, 3), torch.randn(1, 3)
    g = from_torch(Net(), (x, y))
    assert "toy_hypot" in {n.op for n in g}
    torch.testing.assert_close(g.run([x, y])[0], torch.hypot(x, y))
    assert handler_for("Hypot") is _spelled  # no importer of its own: one node of the op, ranks raised


def test_a_binary_op_unregistered_loses_its_rows():
    assert torch.ops.aten.hypot.default not in ATEN and handler_for("Hypot") is None


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
