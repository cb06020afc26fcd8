"""torch.compile(model, backend="eqsat"): matches eager; an op eqsat lacks runs eagerly with one warning."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

import bench.models as bench_models
from bench.zoo import ZOO
from rewrite.egraph.limits import Limits
from rewrite.ir.errors import UsageError
from rewrite.torch_backend import EqsatFallbackWarning, eqsat_backend, register
from tests.tiers import models

# the whole models priced by the roofline (measuring every kernel is the compiled-cost tests' business)
_FAST = {"limits": Limits(iterations=2, nodes=20_000, seconds=30), "extractor": "greedy", "cost": "analytical"}


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    import torch._dynamo

    register()
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


class _Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> dict:
        return {"y": torch.sigmoid(self.fc2(torch.relu(self.fc1(x)))), "twice": x * 2}


def test_backend_by_name_matches_eager_and_keeps_output_structure():
    torch.manual_seed(0)
    m = _Mlp().eval()
    x = torch.randn(3, 8)
    fast = torch.compile(m, backend="eqsat", options=_FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EqsatFallbackWarning)
        out = fast(x)
    ref = m(x)
    assert set(out) == {"y", "twice"}
    for k in ref:
        assert torch.allclose(out[k], ref[k], atol=1e-5)


def test_backend_prices_by_the_compile_target_by_default(monkeypatch):
    import rewrite.torch_backend as tb

    seen = []
    real = tb.optimize

    def spy(graph, **kw):
        seen.append(kw["target"])
        return real(graph, **kw)

    monkeypatch.setattr(tb, "optimize", spy)
    torch.manual_seed(0)
    m, x = _Mlp().eval(), torch.randn(3, 8)
    options = {"limits": Limits(iterations=1, nodes=5_000, seconds=30), "extractor": "greedy"}
    out = torch.compile(m, backend="eqsat", options=options)(x)
    assert seen == ["llvm"]  # the kernels it compiles to price the e-graph, not eager PyTorch
    assert torch.allclose(out["y"], m(x)["y"], atol=1e-5)
    with pytest.raises(UsageError, match="unknown eqsat backend cost 'roofline'"):
        eqsat_backend(torch.fx.symbolic_trace(m), [x], options={"cost": "roofline"})


def test_backend_entry_point_is_declared():
    text = open("pyproject.toml").read()
    assert '[project.entry-points.torch_dynamo_backends]\neqsat = "rewrite.torch_backend:eqsat_backend"' in text


class _Digamma(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.digamma(torch.relu(x) + 1) + 1


def test_unsupported_op_runs_eagerly_with_one_warning_naming_it():
    x = torch.randn(4, 4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = torch.compile(_Digamma(), backend=eqsat_backend)(x)
    ours = [w for w in caught if issubclass(w.category, EqsatFallbackWarning)]
    assert len(ours) == 1 and "aten.digamma" in str(ours[0].message)
    assert torch.equal(out, _Digamma()(x))


@pytest.mark.parametrize("name", models(sorted(bench_models.MODELS), fast=()))
def test_builtin_models_match_eager(name):
    module, inputs = bench_models.load(name)
    fast = torch.compile(module, backend="eqsat", options=_FAST)
    with warnings.catch_warnings():
        warnings.simplefilter("error", EqsatFallbackWarning)
        out = fast(*inputs)
    with torch.no_grad():
        ref = module(*inputs)
    assert torch.allclose(out, ref, rtol=1e-4, atol=1e-4 * max(1.0, ref.abs().max().item()))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_models_match_eager(name):
    """Every zoo model, CNNs and transformers alike, through torch.compile(backend="eqsat")."""
    import torch.utils._pytree as pytree

    module, inputs = ZOO[name]()
    fast = torch.compile(module, backend="eqsat", options=_FAST)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fast(*inputs)
    fell_back = [str(w.message) for w in caught if issubclass(w.category, EqsatFallbackWarning)]
    with torch.no_grad():
        ref = module(*inputs)
    got, want = pytree.tree_leaves(out), pytree.tree_leaves(ref)
    assert len(got) == len(want)
    for g, r in zip(got, want, strict=True):
        if isinstance(r, torch.Tensor):
            assert g.dtype == r.dtype and g.shape == r.shape
            assert torch.allclose(g, r, rtol=1e-4, atol=1e-4 * max(1.0, r.abs().max().item())), name
    assert not fell_back, fell_back


@pytest.mark.parametrize(
    "m,shape",
    [
        (nn.ConvTranspose2d(4, 3, 2, 2), (1, 4, 5, 5)),  # kernel = stride: a 1x1 conv, then depth-to-space
        (nn.ConvTranspose2d(4, 6, 3, 2, 1, output_padding=1, groups=2), (1, 4, 5, 5)),  # flipped, regrouped
        (nn.ConvTranspose1d(4, 3, 4, 2, 1), (2, 4, 9)),
        (nn.Conv3d(3, 4, 3, 1, 1), (1, 3, 4, 6, 6)),  # a sum of 2-d convolutions over frames
        (nn.Conv3d(3, 4, 2, 2), (1, 3, 4, 6, 6)),  # tubelets: one 2-d convolution
    ],
)
def test_parameters_as_inputs_reach_transposed_and_3d_convolutions(m, shape):
    """Under torch.compile a weight arrives as an input, not a constant: the transposed and 3-d convolutions
    rearrange it with ops (they ran eagerly before), and a changed parameter is seen on the next call."""
    torch.manual_seed(0)
    m = nn.Sequential(m, nn.ReLU()).eval()
    x = torch.randn(shape)
    fast = torch.compile(m, backend="eqsat", options=_FAST)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("error", EqsatFallbackWarning)
        assert torch.allclose(fast(x), m(x), atol=1e-5)
        m[0].weight.mul_(-0.5)
        assert torch.allclose(fast(x), m(x), atol=1e-5)
