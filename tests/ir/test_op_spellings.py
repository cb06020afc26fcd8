"""Coverage of the registry's frontend spellings (``OpDef.aten``, ``OpDef.onnx``), as ``check_coverage``
covers lowerings: a unary elementwise op and an elementwise op of several tensors (add, eq, where...) need
an ATen overload and an ONNX spelling, and a layout, contraction, pooling, normalization, reduction or
indexing op (reshape, matmul, softmax...) needs an ATen overload, unless it is named below with the reason
it has none.  The frontend and export tables are derived from these spellings, so an op that passes here
imports from torch.export and ONNX and exports to ONNX.
"""

import onnx
import pytest
import torch

from lower.ops_to_loops import ACTIVATIONS, LOWERINGS
from rewrite.frontends.aten import ATEN, ATEN_ROWS, KEEP_WHOLE
from rewrite.frontends.aten_base import CONVERTER_FNS, TRAINING_ONLY
from rewrite.frontends.aten_spelled import overload, registry_rows, spelled
from rewrite.frontends.aten_training import CONVERTERS, TRAINING_IR
from rewrite.frontends.onnx import HANDLERS, ONNX_OPS, from_onnx, to_onnx
from rewrite.frontends.onnx.elementwise import IMPORTERS, _spelled, handler_for, spellings
from rewrite.frontends.onnx.export import _EMIT
from rewrite.frontends.torch_export import capture, from_torch
from rewrite.ir.builder import GraphBuilder
from rewrite.ir.dtypes import BOOL, FLOAT32
from rewrite.ir.ops import ACTS, OPS, VARIADIC, AtenSpelling, Group, OnnxSpelling, OpDef, register_op, unregister_op
from rewrite.ir.shapes import Broadcast

# elementwise ops (unary, or of several tensors) with no ATen overload of their own, and why
NO_ATEN = {
    "gelu": "aten.gelu.default with approximate='tanh': the a_gelu row picks gelu or gelu_erf",
    "gelu_erf": "aten.gelu.default with approximate='none': the a_gelu row",
    "identity": "no ATen op computes it: clone, alias and detach are copies (a_copy, no node)",
    "neg": "aten.neg.default imports as smul(-1) (a_neg; rules/algebra: neg <=> smul -1)",
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

# the ops of the other groups (layout, contraction, pooling, normalization, reduction, indexing) with no
# ATen overload of their own, and why: a call that builds several ops, or picks among ops by its arguments,
# keeps its hand-written row (aten.py ATEN_ROWS, aten_training.py TRAINING_IR)
_LOWERING_FORMS = (
    "winograd_weight",
    "winograd_input",
    "winograd_input_t",
    "winograd_output",
    "winograd_output_bias_act",
    "to_blocked",
    "from_blocked",
    "blocked_weight",
    "conv2d_blocked",
    "conv2d_blocked_bias_act",
    "maxpool2d_blocked",
    "avgpool2d_blocked",
    "conv2d_im2col",
    "conv2d_im2col_bias_act",
)
NO_ATEN_OTHER = {
    "matmul_at": "A^T B, built by the Winograd rules; torch's mm of a transpose imports as transpose and matmul",
    "matmul_integer": "a quantized GEMM (uint8 x int8 -> int32): torch has no ATen op of it; quantized models "
    "import as ONNX QDQ",
    "conv2d_integer": "a quantized convolution (uint8 x int8 -> int32): torch has no ATen op of it; quantized "
    "models import as ONNX QDQ",
    "linear": "aten.linear / addmm add the bias by a separate add (a_linear, a_addmm: matmul, add); rules fuse",
    "conv2d": "aten.convolution adds the bias by an add and reads 1-d, 3-d and transposed convolutions "
    "(a_convolution: conv2d, add)",
    "global_avgpool": "aten.mean.dim picks it for the H and W of NCHW, else reduce_mean (a_mean); adaptive "
    "pooling to 1x1 picks it too (a_adaptive_avgpool)",
    "adaptive_avgpool": "aten._adaptive_avg_pool2d picks global_avgpool or avgpool2d when the windows are equal "
    "(a_adaptive_avgpool)",
    "pad2d": "zero padding that the fusion rules introduce; aten.constant_pad_nd is pad",
    "conv2d_bias_act": "a fused contraction the fusion rules build; no torch call computes it alone",
    "matmul_bias_act": "a fused contraction the fusion rules build; no torch call computes it alone",
    "rmsnorm": "no ATen row: torch.export's F.rms_norm imports as its decomposition (pow, mean, add, rsqrt, mul)",
    "lrn": "no ATen op: torch.export writes F.local_response_norm as pow, constant_pad_nd, avg_pool3d, mul, add "
    "and div (whose window, for an even size, is centred a channel lower than ONNX's LRN)",
    **{
        n: "a form of the Winograd, blocked-layout or im2col lowering rules; no torch call computes it"
        for n in _LOWERING_FORMS
    },
}
# the ops of those groups with no ONNX spelling (no one op type their importer and emitter are keyed by), and why
NO_ONNX_OTHER = {
    "matmul_at": "exported as Transpose then MatMul",
    "matmul_integer": "ONNX MatMulInteger takes its zero points as inputs, not attributes: exported as it, "
    "QDQ MatMul/Gemm import as it",
    "conv2d_integer": "ONNX ConvInteger takes its zero points as inputs, not attributes: exported as it, QDQ "
    "Conv imports as it",
    "linear": "Gemm imports as matmul, smul and add (alpha, beta, transposes); exported as Gemm or MatMul and Add",
    "adaptive_avgpool": "ONNX has no adaptive pooling: exported as GlobalAveragePool or AveragePool",
    "pad2d": "exported as Pad, which imports as pad",
    "conv2d_bias_act": "exported as Conv then the activation",
    "matmul_bias_act": "exported as MatMul, Add and the activation",
    "rmsnorm": "RMSNormalization came in opset 23 (export writes opset 20): exported composed; its own handler "
    "imports RMSNormalization",
    "groupnorm": "GroupNormalization's scale changed meaning at opset 21: exported composed; its own "
    "handler reads GroupNormalization and InstanceNormalization",
    "reduce_sum": "not moved yet: one handler reads ReduceSum..ReduceProd and builds ReduceL1, L2, LogSum, "
    "LogSumExp, SumSquare, branching on the op type (empty-input values, int64); export's _REDUCE table",
    "reduce_mean": "as reduce_sum",
    "reduce_max": "as reduce_sum",
    "reduce_min": "as reduce_sum",
    "reduce_prod": "as reduce_sum",
    "reduce_var": "ONNX has no variance: exported composed",
    "embedding": "ONNX Gather is embedding or index_select by axis and rank (one handler of two ops)",
    "index_select": "as embedding",
    **{n: "a form of the lowering rules: exported composed (Conv, MatMul, Reshape...)" for n in _LOWERING_FORMS},
}
_OTHER_GROUPS = (Group.LAYOUT, Group.CONTRACTION, Group.POOLING, Group.NORMALIZATION, Group.REDUCTION, Group.INDEXING)


def _other() -> dict[str, OpDef]:
    """The registry ops of the non-elementwise groups (sources excepted: they have no frontend call)."""
    return {n: d for n, d in OPS.items() if d.group in _OTHER_GROUPS}


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
    assert not set(NO_ONNX) & set(NO_ATEN)
    for n in NO_ONNX:  # the exporter still writes them, composed
        assert n in _EMIT, n


def test_every_other_op_has_an_aten_overload_or_a_named_exemption():
    missing = sorted(n for n, d in _other().items() if not d.aten and n not in NO_ATEN_OTHER)
    assert missing == [], f"ops without OpDef.aten: {missing} (spell them, or name them in NO_ATEN_OTHER)"
    stale = sorted(n for n in NO_ATEN_OTHER if n not in _other() or OPS[n].aten)
    assert stale == [], f"NO_ATEN_OTHER names ops that need no spelling or have one: {stale}"


def test_every_other_op_has_an_onnx_spelling_or_a_named_exemption():
    missing = sorted(n for n, d in _other().items() if d.onnx is None and n not in NO_ONNX_OTHER)
    assert missing == [], f"ops without OpDef.onnx: {missing} (spell them, or name them in NO_ONNX_OTHER)"
    stale = sorted(n for n in NO_ONNX_OTHER if n not in _other() or OPS[n].onnx is not None)
    assert stale == [], f"NO_ONNX_OTHER names ops that need no spelling or have one: {stale}"
    for n in NO_ONNX_OTHER:  # the exporter still writes them, composed
        assert n in _EMIT, n


@pytest.mark.parametrize("name", sorted(n for n, d in OPS.items() if d.aten))
def test_aten_spelling_is_an_overload_its_converter_reads(name):
    d = OPS[name]
    for s in d.aten_spellings:
        ov = overload(s.overload)
        assert CONVERTERS[ov] == (s.converter, name)
        assert spelled(ov) == (d, s)
        assert s.converter in CONVERTER_FNS, s
        # a converter of the training-IR importer alone makes a training-only row: core ATen's table lacks it
        assert s.training_only or s.converter not in TRAINING_ONLY, s
        assert (ov in ATEN) is not s.training_only and (s.training_only or ATEN[ov] == CONVERTERS[ov])
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
    assert len(ATEN) == len(ATEN_ROWS) + len(registry_rows(training=False))
    assert len(CONVERTERS) == len(set(ATEN_ROWS) | set(TRAINING_IR)) + len(registry_rows())


@pytest.mark.parametrize("name", sorted(n for n, d in OPS.items() if d.onnx is not None))
def test_onnx_spelling_is_a_standard_op_with_its_attributes(name):
    d = OPS[name]
    assert d.onnx is not None
    schema = onnx.defs.get_schema(d.onnx.op_type, 20)
    assert {a for a, _, _ in d.onnx.attrs} <= set(schema.attributes), d.onnx
    assert d.onnx.op_type in ONNX_OPS
    if d.group is Group.ELEMENTWISE:
        assert d.name not in _EMIT, "the exporter writes a spelled elementwise op from its spelling only"
        assert schema.min_input <= d.arity <= schema.max_input, (d.onnx, schema.min_input, schema.max_input)
        # a unary op reads as one node of it (``_spelled``); an op of several tensors through its importer
        # (constants fold, scalars become smul), which reads the op from the registry
        assert handler_for(d.onnx.op_type) is (_spelled if d.arity == 1 else IMPORTERS[name])
    else:
        # its attributes (and ONNX's constant inputs: Reshape's shape, Pad's pads) are read by its importer and
        # written by its emitter, both keyed by the registry op; the op type is the spelling's
        assert handler_for(d.onnx.op_type) is IMPORTERS[name]
        assert name in _EMIT or not d.attrs, "an op with attributes needs its emitter"
        assert d.arity == VARIADIC or d.arity <= schema.max_input, (d.onnx, schema.max_input)
    # the ops one op type spells (Gelu: gelu and gelu_erf) never match the same attributes
    others = [o for o in spellings()[d.onnx.op_type] if o is not d]
    assert not any(o.onnx is not None and o.onnx.matches(d.onnx.export_attrs()) for o in others)


def test_importers_are_keyed_by_spelled_ops():
    assert not set(IMPORTERS) - {n for n, d in OPS.items() if d.onnx is not None}
    # a spelled op type has no handler of its own but as the other attributes' fallback (below)
    assert not {d.onnx.op_type for d in _other().values() if d.onnx is not None} & set(HANDLERS)


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


_F = FLOAT32
# one call of each spelled op of the other groups: input shapes and dtypes (or a constant), attributes
ROUND_TRIPS = {
    "transpose": ([((2, 3, 4), _F)], {"perm": (2, 0, 1)}),
    "reshape": ([((2, 3, 4), _F)], {"shape": (6, 4)}),
    "concat": ([((2, 3), _F), ((2, 5), _F)], {"axis": 1}),
    "split": ([((2, 6), _F)], {"axis": 1, "sizes": (2, 4)}),
    "slice": ([((2, 6), _F)], {"axis": 1, "start": 1, "end": 4}),
    "matmul": ([((2, 3), _F), ((3, 4), _F)], {}),
    "conv2d": (
        [((1, 3, 8, 8), _F), ((4, 3, 3, 3), _F)],
        {"stride": (2, 2), "padding": (1, 1), "dilation": (1, 1), "groups": 1},
    ),
    "maxpool2d": ([((1, 2, 8, 8), _F)], {"kernel": (3, 3), "stride": (2, 2), "padding": (1, 1)}),
    "avgpool2d": ([((1, 2, 8, 8), _F)], {"kernel": (2, 2), "stride": (2, 2), "count_include_pad": 0}),
    "global_avgpool": ([((1, 2, 4, 4), _F)], {}),
    # an eps ONNX stores exactly (its attribute is float32)
    "batchnorm": ([((1, 3, 4, 4), _F)] + [((3,), _F)] * 4, {"eps": 2.0**-10}),
    "layernorm": ([((2, 8), _F), ((8,), _F), ((8,), _F)], {"eps": 2.0**-20}),
    "softmax": ([((2, 5), _F)], {"axis": 1}),
    "lrn": ([((1, 6, 3, 4), _F)], {"size": 5, "alpha": 2.0**-10, "beta": 0.75, "bias": 2.0}),
    "expand": ([((1, 3), _F)], {"shape": (4, 3)}),
    "pad": ([((2, 3), _F)], {"pads": (0, 0, 1, 2), "value": 0.5}),
    # torch's nearest (coord="torch") exports as the ONNX coordinates that compute it, asymmetric and floor
    "resize": ([((1, 2, 4, 4), _F)], {"size": (8, 8), "coord": "asymmetric", "nearest_mode": "floor"}),
    # constant indices: a run-time index imports with its negative entries wrapped (lt, add, where)
    "gather": ([((2, 3), _F), torch.tensor([[0, 2, 1], [1, 0, 0]])], {"axis": 1}),
}


def test_every_spelled_other_op_has_a_round_trip_case():
    assert set(ROUND_TRIPS) == {n for n, d in _other().items() if d.onnx is not None}


@pytest.mark.parametrize("name", sorted(ROUND_TRIPS))
def test_other_op_exports_to_onnx_and_imports_back_as_itself(name):
    ins, attrs = ROUND_TRIPS[name]
    b = GraphBuilder(name)
    xs = [b.weight(f"w{i}", t) if isinstance(t, torch.Tensor) else b.input(f"x{i}", *t) for i, t in enumerate(ins)]
    outs = b.op_multi(name, *xs, **attrs) if name == "split" else [b.op(name, *xs, **attrs)]
    g = b.build(outs)
    model = to_onnx(g)
    assert OPS[name].onnx is not None and OPS[name].onnx.op_type in {n.op_type for n in model.graph.node}
    (node,) = [n for n in g if n.op == name]
    back = [n for n in from_onnx(model) if n.op not in ("input", "weight", "identity")]
    assert [(n.op, dict(n.attrs), n.shapes) for n in back] == [(name, dict(node.attrs), node.shapes)]
