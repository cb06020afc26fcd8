"""ONNX export and exporters' models: graphs of the newer registry ops through to_onnx, run by onnxruntime
and imported back; the zoo models exported by eqsat and by torch.onnx.export (both exporters)."""

import pytest
import torch

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from bench.zoo import ZOO  # noqa: E402  (builders only: transformers loads when one runs)
from bench.zoo.hf import HF  # noqa: E402
from rewrite.frontends.onnx import from_onnx, to_onnx  # noqa: E402
from rewrite.ir.builder import GraphBuilder  # noqa: E402
from rewrite.ir.errors import FrontendError  # noqa: E402
from rewrite.pipeline import compile  # noqa: E402
from rewrite.verification.numeric import compare_all  # noqa: E402
from tests.frontends.onnx.onnx_nodes import INT, _ort  # noqa: E402


def _newer_ops_graph():
    b = GraphBuilder("newer")
    x = b.input("x", (2, 4, 6, 6))
    ids = b.input("ids", (3,), dtype="int64")
    mask = b.input("mask", (2, 4, 6, 6), dtype="bool")
    table = b.weight("table", torch.randn(5, 6))
    gn = b.groupnorm(x, b.weight("gw", torch.randn(4)), b.weight("gb", torch.randn(4)), num_groups=2)
    up = b.resize(b.silu(gn), size=(12, 9), mode="bilinear")
    near = b.resize(b.hardsigmoid(x), size=(12, 12), mode="nearest")
    onnx_near = b.resize(x, size=(10, 3), mode="nearest", coord="half_pixel", nearest_mode="round_prefer_ceil")
    onnx_lin = b.resize(x, size=(10, 4), mode="bilinear", coord="asymmetric", scale_h=1.75, scale_w=0.75)
    red = b.reduce_var(b.clamp(x, min=-1.0, max=2.0), axes=(2, 3), keepdim=1)
    pooled = b.adaptive_avgpool(b.pad(b.gelu_erf(x), pads=(0, 0, 0, 0, 1, 1, 1, 1)), output_size=(4, 2))
    rows = b.embedding(table, ids)
    picked = b.index_select(x, ids, axis=3)
    fill = b.masked_fill(x, b.logical_and(mask, b.gt(x, b.reduce_mean(x, axes=(1,), keepdim=1))), value=-1e9)
    sel = b.where(
        b.logical_not(mask), b.pow(x, exponent=2.0), b.expand(b.reduce_max(x, axes=(3,), keepdim=1), shape=(2, 4, 6, 6))
    )
    as_int = b.cast(b.ge(x, b.rmsnorm(x, b.weight("rw", torch.rand(6)))), dtype="int64")
    outs = [up, near, red, pooled, rows, picked, fill, sel, as_int, b.reduce_min(b.log(b.abs(x)), axes=(0,))]
    return b.build([*outs, onnx_near, onnx_lin])


def test_newer_ops_export_to_onnxruntime_and_import_back():
    graph = _newer_ops_graph()
    x = graph.random_inputs(1)
    ref = graph.run(x)
    model = to_onnx(graph)
    out_types = [o.type.tensor_type.elem_type for o in model.graph.output]
    assert out_types[8] == INT  # int64 values stay int64
    cmp = compare_all(ref, _ort(model, {k: v.numpy() for k, v in x.items()}))
    assert cmp.close, cmp.why
    cmp = compare_all(ref, from_onnx(model).run(x))
    assert cmp.close, cmp.why


@pytest.mark.parametrize(
    "op,mode,dtype",
    [
        ("mod", "floor", "int64"),
        ("mod", "trunc", "int64"),
        ("idiv", "floor", "int64"),
        ("idiv", "trunc", "int64"),
        ("mod", "floor", "float32"),
        ("mod", "trunc", "float32"),
    ],
)
def test_integer_division_and_remainder_export_to_onnxruntime_and_back(op, mode, dtype):
    """opset 20 has int64 Div (truncating) and Mod; floor division and a float floor remainder are spelled from
    them, fixed where the truncated remainder's sign differs from the divisor's."""
    if dtype == "int64":
        x = torch.tensor([7, -7, 7, -7, 0, 9, -9, 2**62 + 1])
        y = torch.tensor([2, 2, -2, -2, 3, 4, 7, 3])
    else:
        x = torch.tensor([5.5, -5.5, 5.5, -5.5, 0.0, 1e30, 7.25, -3.0])
        y = torch.tensor([2.0, 2.0, -2.0, -2.0, 3.0, 7.0, 0.5, 1.5])
    b = GraphBuilder("divmod")
    g = b.build([b.op(op, b.input("x", (8,), dtype=dtype), b.input("y", (8,), dtype=dtype), mode=mode)])
    ref = g.run([x, y])[0]
    model = to_onnx(g)
    assert torch.equal(_ort(model, {"x": x.numpy(), "y": y.numpy()})[0], ref)
    assert torch.equal(from_onnx(model).run([x, y])[0], ref)


def test_trig_and_hyperbolic_ops_and_atan2_export_to_onnxruntime_and_import_back():
    """Each is its ONNX op (Tan, Asin, ..., Atanh; NaN outside the domain); atan2, which ONNX lacks, is Atan(y / x)
    turned by pi into x's half plane, the quotient's limit where both are zero or infinite."""
    b = GraphBuilder("trig")
    x, u, w = b.input("x", (3, 7)), b.input("u", (3, 7)), b.input("w", (1, 7))
    c = b.smul(b.cosh(x), scalar=1.5)  # >= 1.5: acosh is ill-conditioned near 1
    outs = [b.tan(x), b.asin(u), b.acos(u), b.atan(x), b.sinh(x), b.cosh(x), b.asinh(x), b.acosh(c)]
    outs += [b.atanh(u), b.asin(x), b.acosh(x), b.atan2(x, w)]
    inf, nan = float("inf"), float("nan")
    ys = [1.0, 1.0, -1.0, -1.0, 0.0, 0.0, -0.0, 1.0, -1.0, inf, inf, -inf, 3.0, nan, 2.0, -2.5]
    xs = [1.0, -1.0, 1.0, -1.0, 0.0, -0.0, -0.0, 0.0, -0.0, inf, -inf, -inf, -inf, 1.0, nan, 1e-3]
    yy, xx = b.input("yy", (len(ys),)), b.input("xx", (len(xs),))
    g = b.build([*outs, b.atan2(yy, xx)])
    gen = torch.Generator().manual_seed(0)
    x0, w0 = torch.randn(3, 7, generator=gen) * 2, torch.randn(1, 7, generator=gen)
    u0 = torch.rand(3, 7, generator=gen) * 1.8 - 0.9  # in the domain of asin, acos and atanh
    feed = {"x": x0, "u": u0, "w": w0, "yy": torch.tensor(ys), "xx": torch.tensor(xs)}
    ref = g.run(feed)
    assert torch.isnan(ref[9]).any() and torch.isnan(ref[10]).any()  # asin and acosh of x outside [-1, 1], [1, inf)
    model = to_onnx(g)
    assert "Atan" in {n.op_type for n in model.graph.node}
    for got in (_ort(model, {k: v.numpy() for k, v in feed.items()}), from_onnx(model).run(feed)):
        for a, r in zip(got, ref, strict=True):
            torch.testing.assert_close(a, r, rtol=2e-6, atol=1e-6, equal_nan=True)


def test_an_op_with_no_onnx_spelling_is_refused_naming_the_node():
    b = GraphBuilder()
    g = b.build([b.adaptive_avgpool(b.input("x", (1, 2, 5, 5)), output_size=(3, 3))])
    with pytest.raises(FrontendError, match=r"adaptive_avgpool.*unequal windows"):
        to_onnx(g)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))  # the four CNNs and the transformers
def test_zoo_model_exports_to_onnxruntime(name):
    from rewrite.frontends import from_torch

    graph = from_torch(*ZOO[name](), name=name)
    x = graph.random_inputs(0)
    cmp = compare_all(graph.run(x), _ort(to_onnx(graph), {k: v.numpy() for k, v in x.items()}))
    assert cmp.close, cmp.why


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HF))
def test_torch_onnx_export_of_zoo_model_imports_and_matches_onnxruntime(name):
    """The other direction: what torch.onnx.export writes for these models (Erf GELUs, shape arithmetic
    on Shape/Gather/Mod/Floor, strided slices) imports, compiles and matches onnxruntime."""
    import io
    import warnings

    model, args = ZOO[name]()
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, buf, opset_version=17, dynamo=False)
    proto = onnx.load_from_string(buf.getvalue())
    feed = {i.name: a.numpy() for i, a in zip(proto.graph.input, args)}
    got = compile(from_onnx(proto))({k: torch.from_numpy(v) for k, v in feed.items()})
    cmp = compare_all(_ort(proto, feed), got)
    assert cmp.close, cmp.why


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HF))
def test_opset23_dynamo_export_of_zoo_model_imports_and_matches_torch(name):
    """torch.onnx.export(dynamo=True, opset_version=23) writes each scaled_dot_product_attention as one
    Attention node (and Swin's relative positions as GatherND): imported, compiled, against torch."""
    import warnings

    model, args = ZOO[name]()
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        proto = torch.onnx.export(model, args, dynamo=True, opset_version=23, verbose=False).model_proto
        want = model(*args)
    graph = from_onnx(proto)
    got = compile(graph)({n.attrs["name"]: a for n, a in zip(graph.inputs, args)})
    cmp = compare_all([want] if isinstance(want, torch.Tensor) else list(want), got)
    assert cmp.close, cmp.why
