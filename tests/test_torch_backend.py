"""torch.compile(model, backend="eqsat"): matches eager; an op eqsat lacks runs eagerly with one warning."""

from __future__ import annotations

import copy
import warnings
import weakref

import pytest
import torch
from torch import nn

import bench.models as bench_models
from bench.zoo import ZOO
from rewrite.egraph.limits import Limits
from rewrite.ir.errors import UsageError
from rewrite.torch_backend import EqsatFallbackWarning, eqsat_backend, register
from rewrite.verification.numeric import normwise_rel_err
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
    with warnings.catch_warnings(), torch.no_grad():
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
    with torch.no_grad():
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
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("error", EqsatFallbackWarning)
        out = fast(*inputs)
        ref = module(*inputs)
    assert torch.allclose(out, ref, rtol=1e-4, atol=1e-4 * max(1.0, ref.abs().max().item()))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(ZOO))
def test_zoo_models_match_eager(name):
    """Every zoo model, CNNs and transformers alike, through torch.compile(backend="eqsat")."""
    import torch.utils._pytree as pytree

    module, inputs = ZOO[name]()
    fast = torch.compile(module, backend="eqsat", options=_FAST)
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
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
    """The transposed and 3-d convolutions compile with their weights as constants and, once a parameter
    changed, as inputs (the second build): then they rearrange it with ops (they ran eagerly before)."""
    torch.manual_seed(0)
    m = nn.Sequential(m, nn.ReLU()).eval()
    x = torch.randn(shape)
    fast = torch.compile(m, backend="eqsat", options=_FAST)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("error", EqsatFallbackWarning)
        assert torch.allclose(fast(x), m(x), atol=1e-5)
        m[0].weight.mul_(-0.5)
        assert torch.allclose(fast(x), m(x), atol=1e-5)


# --- training: a subgraph that needs gradients runs eagerly (one warning); inference compiles --------------


class _Cnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.bn, self.fc = nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.Linear(4 * 5 * 5, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.bn(self.conv(x))).flatten(1))


def _tiny(kind: str) -> tuple[nn.Module, torch.Tensor]:
    torch.manual_seed(0)
    if kind == "mlp":
        return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)), torch.randn(3, 8)
    return _Cnn(), torch.randn(2, 3, 5, 5)


@pytest.fixture
def counted(monkeypatch):
    """How many subgraphs dynamo handed the backend, and how many of them eqsat optimized."""
    import rewrite.torch_backend as tb

    n = {"subgraphs": 0, "eqsat": 0}
    needs_grad, optimize = tb._needs_grad, tb.optimize
    # an identical graph an earlier test compiled (and still holds) would be reused, not optimized: counted apart
    monkeypatch.setattr(tb, "_BUILT", weakref.WeakValueDictionary())

    def subgraph(*a, **k):
        n["subgraphs"] += 1
        return needs_grad(*a, **k)

    def optimized(*a, **k):
        n["eqsat"] += 1
        return optimize(*a, **k)

    monkeypatch.setattr(tb, "_needs_grad", subgraph)
    monkeypatch.setattr(tb, "optimize", optimized)
    return n


def _fallbacks(caught) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, EqsatFallbackWarning)]


def _train_step(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    out = model(x)
    out.square().mean().backward()
    return out


def _assert_same_training(m: nn.Module, ref: nn.Module, out: torch.Tensor, want: torch.Tensor) -> None:
    assert out.grad_fn is not None and torch.allclose(out, want, atol=1e-4)
    for (name, p), q in zip(m.named_parameters(), ref.parameters(), strict=True):
        assert p.grad is not None and torch.allclose(p.grad, q.grad, atol=1e-4), name
    for (name, b), c in zip(m.named_buffers(), ref.buffers(), strict=True):  # BatchNorm's running stats
        assert torch.allclose(b.float(), c.float(), atol=1e-4), name


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_training_runs_eagerly_with_one_warning_and_eager_gradients(kind, counted):
    m, x = _tiny(kind)
    m.train()
    ref = copy.deepcopy(m)
    fast = torch.compile(m, backend="eqsat", options=_FAST)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = _train_step(fast, x)
        out2 = _train_step(fast, x)  # the second step reuses the eager subgraph: no second warning
    want = _train_step(ref, x)
    want2 = _train_step(ref, x)
    fell_back = _fallbacks(caught)
    assert counted["subgraphs"] >= 1 and len(fell_back) == counted["subgraphs"] and counted["eqsat"] == 0
    assert all("training: the subgraph needs gradients" in w and "model.eval()" in w for w in fell_back)
    assert torch.allclose(out, want, atol=1e-4)
    _assert_same_training(m, ref, out2, want2)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_inference_of_the_same_models_compiles_with_eqsat(kind, counted):
    m, x = _tiny(kind)
    m.eval()
    fast = torch.compile(m, backend="eqsat", options=_FAST)
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():  # parameters still require grad
        warnings.simplefilter("always")
        out = fast(x)
        ref = m(x)
    assert not _fallbacks(caught) and counted["eqsat"] == counted["subgraphs"] == 1
    assert torch.allclose(out, ref, atol=1e-4)


def test_parameters_and_buffers_are_the_graphs_weights(counted):
    """The module's parameters and BatchNorm's running statistics arrive as inputs; eqsat imports them as
    constants: the graph's only input is the image, and BatchNorm folds into the convolution."""
    import rewrite.torch_backend as tb

    m, x = _tiny("cnn")
    m.eval()
    fast = torch.compile(m, backend="eqsat", options=_FAST)
    with torch.no_grad():
        out, ref = fast(x), m(x)
    assert torch.allclose(out, ref, atol=1e-4) and counted["eqsat"] == 1
    (built,) = tb._BUILT.values()
    assert [v.attrs["name"] for v in built.graph.inputs] == built.input_names and len(built.input_names) == 1
    assert built.graph.weights and "batchnorm" not in {n.op for n in built.graph}


def test_a_changed_parameter_is_seen_from_that_call_on_and_builds_once_more(counted):
    """A parameter changed in place, or replaced, after the build: from that call on the subgraph runs a second
    build that takes the parameters as inputs (one more optimize, whatever changes later)."""
    m, x = _tiny("mlp")
    m.eval()
    fast = torch.compile(m, backend="eqsat", options=_FAST)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("error", EqsatFallbackWarning)
        assert torch.allclose(fast(x), m(x), atol=1e-5) and counted["eqsat"] == 1
        assert torch.allclose(fast(x), m(x), atol=1e-5) and counted["eqsat"] == 1  # unchanged: the first build
        m[0].weight.mul_(-0.5)
        assert torch.allclose(fast(x), m(x), atol=1e-5) and counted["eqsat"] == 2
        m[2].bias.add_(1.0)
        assert torch.allclose(fast(x), m(x), atol=1e-5)
        m[2].weight = nn.Parameter(torch.randn_like(m[2].weight))
        assert torch.allclose(fast(x), m(x), atol=1e-5)
    assert counted["eqsat"] == 2


def test_a_build_with_weights_that_fails_falls_back_to_inputs(monkeypatch, counted):
    """Where importing the subgraph with its parameters as weights fails, the import with them as inputs (what
    worked before weights were taken) is tried before the subgraph runs eagerly."""
    import rewrite.torch_backend as tb
    from rewrite.ir.errors import FrontendError

    real = tb.capture

    def refuses_weights(*a, **k):
        if k.get("share_weights"):
            raise FrontendError("no weights today")
        return real(*a, **k)

    monkeypatch.setattr(tb, "capture", refuses_weights)
    m, x = _tiny("mlp")
    m.eval()
    fast = torch.compile(m, backend="eqsat", options=_FAST)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("error", EqsatFallbackWarning)
        assert torch.allclose(fast(x), m(x), atol=1e-5)
    assert counted["eqsat"] == 1


@pytest.mark.parametrize("inference_first", [True, False])
def test_grad_mode_is_guarded_in_either_order(inference_first, counted):
    """Dynamo guards on grad mode: an MLP called under no_grad and in training (either first) gets eqsat's
    kernels for the first and eager autograd for the second, one subgraph each."""
    m, x = _tiny("mlp")
    ref = copy.deepcopy(m)
    fast = torch.compile(m, backend="eqsat", options=_FAST)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for inference in (inference_first, not inference_first):
            if inference:
                with torch.no_grad():
                    assert torch.allclose(fast(x), ref(x), atol=1e-4)
            else:
                _assert_same_training(m, ref, _train_step(fast, x), _train_step(ref, x))
        with torch.no_grad():  # both cached: no third subgraph
            fast(x)
        _train_step(fast, x)
    assert counted == {"subgraphs": 2, "eqsat": 1}
    assert len(_fallbacks(caught)) == 1


def test_compiles_exactly_when_no_gradient_can_flow(counted):
    m, x = _tiny("mlp")
    m.requires_grad_(False)  # frozen: grad mode on, but nothing requires grad
    fast = torch.compile(m, backend="eqsat", options=_FAST)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert fast(x).grad_fn is None and counted["eqsat"] == 1
        xg = x.clone().requires_grad_()  # an input that requires grad: a new subgraph, eager
        fast(xg).sum().backward()
    assert xg.grad is not None and len(_fallbacks(caught)) == 1 and counted["eqsat"] == 1


class _EnablesGrad(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.enable_grad():
            return self.fc(x)


def test_a_graph_that_enables_grad_under_no_grad_runs_eagerly():
    x = torch.randn(2, 4)
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        out = torch.compile(_EnablesGrad(), backend="eqsat", options=_FAST)(x)
    assert out.grad_fn is not None
    assert len(_fallbacks(caught)) == 1 and "training" in _fallbacks(caught)[0]


# --- shapes that change: dynamo's symbolic subgraphs are compiled per size, never silently eager -------------


class _Attention(nn.Module):
    """One head of self-attention over a sequence whose length dynamo makes symbolic (a reshape uses it)."""

    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v = nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = torch.softmax(self.q(x) @ self.k(x).transpose(-1, -2) / 4.0, dim=-1)
        return (a @ self.v(x)).reshape(x.shape[0], x.shape[1] * 16)


class _SmallCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.bn, self.fc = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.bn(self.conv(x))).mean(dim=(2, 3)))


@pytest.fixture
def compiles(monkeypatch):
    """How many graphs eqsat optimized and compiled (without the run check: its timing is not the point)."""
    import rewrite.torch_backend as tb

    monkeypatch.setenv("EQSAT_RUN_CHECK", "0")
    monkeypatch.setattr(tb, "_BUILT", weakref.WeakValueDictionary())  # this test's compiles only (see `counted`)
    n = [0]
    real = tb.optimize

    def counted(*a, **k):
        n[0] += 1
        return real(*a, **k)

    monkeypatch.setattr(tb, "optimize", counted)
    return n


@pytest.mark.parametrize(
    "kind, sizes",
    [("attention", [(2, 8), (2, 16), (2, 33), (2, 64)]), ("cnn", [(1, 3, 12, 12), (2, 3, 12, 12), (5, 3, 12, 12)])],
)
def test_sizes_dynamo_makes_symbolic_compile_once_each_and_match_eager(kind, sizes, compiles):
    torch.manual_seed(0)
    m = (_Attention() if kind == "attention" else _SmallCnn()).eval()
    if kind == "attention":
        sizes = [(*s, 16) for s in sizes]
    fast = torch.compile(m, backend="eqsat", options=_FAST)
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("error", EqsatFallbackWarning)  # from the second size on: not eager
        for i, shape in enumerate([*sizes, sizes[1], sizes[0]]):  # two sizes again at the end: cached
            x = torch.randn(shape)
            out, ref = fast(x), m(x)
            assert normwise_rel_err(out, ref) <= 1e-4, shape
            assert compiles[0] == min(i + 1, len(sizes)), shape


def test_sizes_past_the_limit_run_eagerly_with_one_warning(compiles):
    torch.manual_seed(0)
    m = _Attention().eval()
    fast = torch.compile(m, backend="eqsat", options={**_FAST, "shapes": 2})
    with warnings.catch_warnings(record=True) as caught, torch.no_grad():
        warnings.simplefilter("always")
        for n in (4, 6, 7, 9, 6):  # 4: static; 6 and 7: the symbolic subgraph's two sizes; 9: eager
            x = torch.randn(1, n, 16)
            assert normwise_rel_err(fast(x), m(x)) <= 1e-4, n
    fell_back = _fallbacks(caught)
    assert compiles[0] == 3
    assert len(fell_back) == 1 and "compiled for 2 sizes already (option shapes=2)" in fell_back[0]
    assert "[1, 9, 16]" in fell_back[0]
    with pytest.raises(UsageError, match="shapes=0"):
        eqsat_backend(torch.fx.symbolic_trace(m), [torch.randn(1, 4, 16)], options={"shapes": 0})
