"""Grid sampling at run-time points (spatial transformers, optical flow, deformable attention):
torch's F.grid_sample through torch.export and ONNX GridSample, both as ``compose.grid_sample``
(registry ops: the taps' flat positions, one gather, the weights), checked through the reference
interpreter and the compiled kernels against torch and onnxruntime."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from rewrite.frontends import from_torch
from rewrite.ir.errors import FrontendError
from rewrite.pipeline import compile

MODES = ("bilinear", "nearest", "bicubic")
PADDINGS = ("zeros", "border", "reflection")


class _Sample(nn.Module):
    def __init__(self, mode: str, padding: str, align: bool) -> None:
        super().__init__()
        self.mode, self.padding, self.align = mode, padding, align

    def forward(self, x: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
        return F.grid_sample(x, grid, mode=self.mode, padding_mode=self.padding, align_corners=self.align)


class _Samples(nn.Module):
    """Several samplings of one input at one grid: one export and one compile for all."""

    def __init__(self, cases: list[tuple[str, str, bool]]) -> None:
        super().__init__()
        self.samples = nn.ModuleList(_Sample(*c) for c in cases)

    def forward(self, x: torch.Tensor, grid: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return tuple(s(x, grid) for s in self.samples)


def _grid(shape: tuple[int, ...], lo: float = -1.3, hi: float = 1.3, seed: int = 0, edges: bool = True) -> torch.Tensor:
    """Points uniform in [lo, hi] (outside [-1, 1], so padding matters); ``edges``: the first ones on the edges."""
    g = torch.empty(shape).uniform_(lo, hi, generator=torch.Generator().manual_seed(seed))
    if edges:
        g.view(-1)[:6] = torch.tensor([-1.0, 1.0, 0.0, -1.0, 1.0, 1.0])
    return g


def _outputs(m: nn.Module, x: torch.Tensor, grid: torch.Tensor) -> tuple[list[torch.Tensor], ...]:
    """torch's results, the reference interpreter's and the compiled kernels'."""
    with torch.no_grad():
        ref = m(x, grid)
    g = from_torch(m, (x, grid))
    assert "gather" in g.summary()
    return (list(ref) if isinstance(ref, tuple) else [ref]), g.run([x, grid]), compile(g)([x, grid])


@functools.cache
def _every_padding(mode: str) -> tuple[list[torch.Tensor], ...]:
    x = torch.randn(2, 3, 5, 6, generator=torch.Generator().manual_seed(1))
    return _outputs(_Samples([(mode, p, a) for p in PADDINGS for a in (False, True)]), x, _grid((2, 4, 7, 2)))


def _close(ref: torch.Tensor, *outs: torch.Tensor) -> None:
    for out in outs:
        assert out.shape == ref.shape
        assert torch.allclose(out, ref, rtol=1e-5, atol=1e-5), (out - ref).abs().max()


@pytest.mark.slow
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode", MODES)
def test_torch_grid_sample(mode: str, padding: str, align: bool) -> None:
    i = 2 * PADDINGS.index(padding) + int(align)
    ref, run, compiled = _every_padding(mode)
    _close(ref[i], run[i], compiled[i])


def test_torch_grid_sample_3d() -> None:
    """A 5-d input (aten.grid_sampler_3d): a third tap axis, the same composition."""
    x = torch.randn(1, 2, 3, 4, 5, generator=torch.Generator().manual_seed(2))
    cases = [("bilinear", "reflection", False), ("nearest", "border", True), ("bilinear", "zeros", True)]
    ref, run, compiled = _outputs(_Samples(cases), x, _grid((1, 2, 3, 4, 3)))
    for i in range(len(cases)):
        _close(ref[i], run[i], compiled[i])


def test_masked_taps_leak_no_inf_or_nan() -> None:
    """Taps outside the image read a zero, never the (clamped) pixel: an inf or NaN there stays out."""
    x = torch.randn(1, 2, 5, 6)
    x[:, :, 0, 0], x[:, :, -1, -1], x[:, :, 0, -1] = float("inf"), float("nan"), float("-inf")
    grid = torch.cat([_grid((1, 3, 4, 2), -3.0, -1.7, edges=False), _grid((1, 3, 4, 2), 1.7, 3.0, 1, False)], dim=1)
    outs = compile(from_torch(_Samples([(m, "zeros", False) for m in MODES]), (x, grid)))([x, grid])
    for mode, out in zip(MODES, outs):
        assert torch.equal(out, F.grid_sample(x, grid, mode=mode, align_corners=False))
        assert torch.equal(out, torch.zeros_like(out))


def test_nan_and_inf_points_sample_as_torch() -> None:
    """A NaN coordinate is the first pixel after border or reflection padding (torch's clip), and NaN through
    zeros padding and cubic's weights; an infinite one clamps (border) or reflects to the first pixel."""
    x = torch.randn(1, 2, 5, 6)
    nan, inf = float("nan"), float("inf")
    grid = torch.tensor([[[[nan, 0.3], [0.2, nan], [inf, 0.1], [0.1, -inf], [0.5, -0.5]]]])
    cases = [("bilinear", "border", False), ("nearest", "reflection", True), ("bicubic", "zeros", False)]
    cases += [("bilinear", "reflection", False), ("bicubic", "border", True)]
    ref, run, compiled = _outputs(_Samples(cases), x, grid)
    for i in range(len(cases)):
        for out in (run[i], compiled[i]):
            assert torch.allclose(out, ref[i], rtol=1e-5, atol=1e-5, equal_nan=True), (cases[i], out, ref[i])


# ---------------------------------------------------------------- ONNX
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from rewrite.frontends.onnx import from_onnx  # noqa: E402
from rewrite.verification.numeric import compare_all  # noqa: E402


def _onnx(x_shape: tuple[int, ...], g_shape: tuple[int, ...], opset: int, *nodes: dict[str, Any]) -> onnx.ModelProto:
    """A model of one GridSample node per attribute set in ``nodes``, all on inputs x and grid."""
    f = TensorProto.FLOAT
    graph = oh.make_graph(
        [oh.make_node("GridSample", ["x", "grid"], [f"y{i}"], **a) for i, a in enumerate(nodes)],
        "t",
        [oh.make_tensor_value_info("x", f, x_shape), oh.make_tensor_value_info("grid", f, g_shape)],
        [oh.make_tensor_value_info(f"y{i}", f, None) for i in range(len(nodes))],
    )
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])


def _check_onnx(model: onnx.ModelProto, reference: bool = False) -> None:
    """Compiled against onnxruntime, or onnx's reference evaluator where onnxruntime has no such case."""
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
    feed = {"x": np.random.default_rng(0).standard_normal(shapes["x"]).astype(np.float32)}
    feed["grid"] = _grid(tuple(shapes["grid"])).numpy()
    if reference:
        expected = ReferenceEvaluator(model).run(None, feed)
    else:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        expected = sess.run(None, feed)
    got = compile(from_onnx(model))({k: torch.from_numpy(v) for k, v in feed.items()})
    cmp = compare_all([torch.from_numpy(np.ascontiguousarray(e)) for e in expected], got)
    assert cmp.close, cmp.why


# opset 16 names the modes bilinear / bicubic, 20 and 22 linear / cubic; every combination is also in the
# torch tests, which share the composition
ONNX_NODES = {
    16: [("bilinear", "zeros", 1), ("nearest", "border", 0), ("bicubic", "reflection", 1), ("bicubic", "border", 0)],
    20: [("linear", "reflection", 0), ("nearest", "reflection", 1), ("cubic", "zeros", 0), ("cubic", "border", 1)],
}


@pytest.mark.parametrize("opset", sorted(ONNX_NODES))
def test_onnx_grid_sample(opset: int) -> None:
    """Against onnxruntime, which computes what torch does.  onnx's reference evaluator differs for cubic with
    border padding: it clamps a point outside the image before taking its taps (not one of onnx's node tests).
    The last node takes the defaults (bilinear / linear, zeros, align_corners 0)."""
    nodes: list[dict[str, Any]] = [{"mode": m, "padding_mode": p, "align_corners": a} for m, p, a in ONNX_NODES[opset]]
    _check_onnx(_onnx((2, 3, 5, 6), (2, 4, 7, 2), opset, *nodes, {}))


def test_onnx_grid_sample_volumetric() -> None:
    """A 5-d input (opsets 20 and 22) against onnxruntime; cubic (which onnxruntime and torch do not have for
    it) against onnx's reference evaluator."""
    linear = [
        {"mode": m, "padding_mode": p, "align_corners": a}
        for m, p, a in [("linear", "border", 0), ("nearest", "reflection", 1)]
    ]
    _check_onnx(_onnx((1, 2, 3, 4, 5), (1, 2, 3, 4, 3), 22, *linear))
    cubic = [{"mode": "cubic", "padding_mode": p} for p in ("zeros", "reflection")]
    _check_onnx(_onnx((1, 2, 3, 4, 5), (1, 2, 3, 4, 3), 22, *cubic), reference=True)


def test_onnx_grid_sample_1d() -> None:
    """A 3-d input (N, C, W), which only onnx's reference evaluator runs."""
    nodes = [
        {"mode": m, "padding_mode": p} for m, p in [("linear", "reflection"), ("nearest", "border"), ("cubic", "zeros")]
    ]
    _check_onnx(_onnx((2, 3, 7), (2, 9, 1), 20, *nodes), reference=True)


@pytest.mark.parametrize(
    ("shapes", "attrs", "why"),
    [
        (((1, 1, 4, 4), (1, 2, 2, 2)), {"mode": "area"}, "grid sampling mode 'area'"),
        (((1, 1, 2, 4, 4), (1, 2, 2, 2, 3)), {"mode": "cubic", "padding_mode": "border"}, "border padding of a 3-d"),
    ],
)
def test_onnx_grid_sample_refusals(shapes: tuple[tuple[int, ...], ...], attrs: dict[str, Any], why: str) -> None:
    with pytest.raises(FrontendError, match=why) as err:
        from_onnx(_onnx(*shapes, 20, attrs))
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("align", [0, 1])
def test_onnx_affine_grid_then_grid_sample_matches_torch(align: int) -> None:
    """A spatial transformer's two ONNX ops: AffineGrid of a run-time theta (one matmul per sample against the
    output points' coordinates), then GridSample; against torch's affine_grid and grid_sample."""
    from onnx import numpy_helper

    f = TensorProto.FLOAT
    nodes = [
        oh.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align),
        oh.make_node("GridSample", ["x", "grid"], ["y"], align_corners=align),
    ]
    graph = oh.make_graph(
        nodes,
        "stn",
        [oh.make_tensor_value_info("x", f, [2, 3, 7, 9]), oh.make_tensor_value_info("theta", f, [2, 2, 3])],
        [oh.make_tensor_value_info("y", f, None)],
        [numpy_helper.from_array(np.array([2, 3, 5, 6], np.int64), "size")],
    )
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 20)])
    x, theta = torch.randn(2, 3, 7, 9), torch.randn(2, 2, 3) * 0.6
    want = F.grid_sample(x, F.affine_grid(theta, [2, 3, 5, 6], align_corners=bool(align)), align_corners=bool(align))
    got = compile(from_onnx(model))({"x": x, "theta": theta})[0]
    assert torch.allclose(got, want, rtol=1e-5, atol=1e-5)
