"""Benchmark models: shapes, numerics, determinism and the op allow-list of eqsat's IR."""

from __future__ import annotations

import operator

import pytest
import torch
import torch.fx
import torch.nn.functional as F
from torch import nn

from bench.models import MODELS, load
from rewrite.ir.errors import UsageError
from tests.tiers import models

EXPECTED_SHAPES = {
    "bert": (64, 1024),
    "nasrnn": (1, 512),
    "resnext50": (1, 1000),
    "nasneta": (1, 1000),
    "squeezenet": (1, 1000),
    "vgg19": (1, 1000),
    "inceptionv3": (1, 1000),
    "resnet50": (1, 1000),
}

# Operations supported by the graph IR.
ALLOWED_MODULES = (
    nn.Linear,
    nn.Conv2d,
    nn.BatchNorm2d,
    nn.LayerNorm,
    nn.ReLU,
    nn.Sigmoid,
    nn.Tanh,
    nn.GELU,
    nn.MaxPool2d,
    nn.AvgPool2d,
    nn.AdaptiveAvgPool2d,
    nn.Dropout,
    nn.Identity,
)
ALLOWED_FUNCTIONS = {
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.matmul,
    operator.getitem,
    torch.matmul,
    torch.softmax,
    F.softmax,
    torch.transpose,
    torch.permute,
    torch.reshape,
    torch.flatten,
    torch.cat,
    torch.split,
    torch.chunk,
    torch.relu,
    F.relu,
    torch.sigmoid,
    torch.tanh,
}
ALLOWED_METHODS = {
    "transpose",
    "permute",
    "reshape",
    "view",
    "flatten",
    "split",
    "chunk",
    "softmax",
    "relu",
    "sigmoid",
    "tanh",
}
# Binary ops: tensor (op) tensor; * and / may also take a Python scalar on the right.
TENSOR_BINARY_FUNCTIONS = {operator.add, operator.sub, operator.matmul, torch.matmul}
SCALAR_OPERAND_FUNCTIONS = {operator.mul, operator.truediv}

# Built once per model and shared by the tests of that model (keeps the run short).
_CACHE: dict[str, tuple[nn.Module, tuple[torch.Tensor, ...], torch.Tensor]] = {}


def _built(name: str):
    if name not in _CACHE:
        model, inputs = load(name)
        with torch.no_grad():
            out = model(*inputs)
        _CACHE[name] = (model, inputs, out)
    return _CACHE[name]


def test_model_names():
    assert set(MODELS) == set(EXPECTED_SHAPES)


def test_unknown_name_lists_known_models():
    with pytest.raises(UsageError, match="unknown model 'alexnet'") as exc:
        load("alexnet")
    for name in MODELS:
        assert name in exc.value.hint


@pytest.mark.parametrize("name", models(list(MODELS), fast=("nasrnn", "squeezenet", "bert")))
def test_forward(name):
    model, inputs, out = _built(name)
    assert not model.training
    assert all(isinstance(x, torch.Tensor) and x.dtype == torch.float32 for x in inputs)
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert tuple(out.shape) == EXPECTED_SHAPES[name]
    assert torch.isfinite(out).all()
    assert out.std().item() > 1e-6
    assert out.abs().max().item() < 1e3


def _check_module(mod: nn.Module, where: str) -> None:
    assert isinstance(mod, ALLOWED_MODULES), f"{where}: module {type(mod).__name__} not allowed"
    assert not mod.training, where
    if isinstance(mod, nn.Conv2d):
        assert not isinstance(mod.padding, str), f"{where}: string padding"
        assert mod.padding_mode == "zeros", where
    if isinstance(mod, (nn.MaxPool2d, nn.AvgPool2d)):
        assert not mod.ceil_mode, f"{where}: ceil_mode"
    if isinstance(mod, nn.MaxPool2d):
        assert mod.dilation in (1, (1, 1)) and not mod.return_indices, where
    if isinstance(mod, nn.AvgPool2d):
        assert mod.divisor_override is None, where
    if isinstance(mod, nn.AdaptiveAvgPool2d):
        assert mod.output_size in (1, (1, 1)), f"{where}: only global average pooling"
    if isinstance(mod, nn.LayerNorm):
        assert len(mod.normalized_shape) == 1, f"{where}: LayerNorm over last dim only"


def _check_graph(gm: torch.fx.GraphModule, name: str) -> None:
    for node in gm.graph.nodes:
        where = f"{name}:{node.name}"
        if node.op in ("placeholder", "get_attr", "output"):
            continue
        if node.op == "call_module":
            _check_module(gm.get_submodule(node.target), where)
        elif node.op == "call_function":
            assert node.target in ALLOWED_FUNCTIONS, f"{where}: function {node.target} not allowed"
            if node.target in TENSOR_BINARY_FUNCTIONS:
                assert len(node.args) == 2 and not node.kwargs, where
                assert all(isinstance(a, torch.fx.Node) for a in node.args), (
                    f"{where}: {node.target.__name__} needs two tensor operands"
                )
            if node.target in SCALAR_OPERAND_FUNCTIONS:
                lhs, rhs = node.args
                assert isinstance(lhs, torch.fx.Node), f"{where}: scalar on the left"
                assert isinstance(rhs, (torch.fx.Node, float, int)), where
            if node.target in (torch.softmax, F.softmax):
                assert len(node.args) > 1 or "dim" in node.kwargs, f"{where}: softmax needs dim"
        elif node.op == "call_method":
            assert node.target in ALLOWED_METHODS, f"{where}: method {node.target} not allowed"
            if node.target == "softmax":
                assert len(node.args) > 1 or "dim" in node.kwargs, f"{where}: softmax needs dim"
        else:
            raise AssertionError(f"{where}: unexpected node op {node.op}")


@pytest.mark.parametrize("name", models(list(MODELS), fast=("nasrnn", "squeezenet", "bert", "resnet50", "resnext50")))
def test_fx_trace_uses_allowed_ops(name):
    model, inputs, out = _built(name)
    gm = torch.fx.symbolic_trace(model)
    _check_graph(gm, name)
    with torch.no_grad():
        traced_out = gm(*inputs)
    torch.testing.assert_close(traced_out, out, rtol=0, atol=0)


class _Exp(nn.Module):
    def forward(self, x):
        return torch.exp(x)


class _Softplus(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = nn.Softplus()

    def forward(self, x):
        return self.act(x)


class _SamePad(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3, padding="same")

    def forward(self, x):
        return self.conv(x)


class _ScalarMinus(nn.Module):
    def forward(self, x):
        return 1.0 - x


@pytest.mark.parametrize("bad", [_Exp, _Softplus, _SamePad, _ScalarMinus])
def test_allow_list_rejects(bad):
    with pytest.raises(AssertionError):
        _check_graph(torch.fx.symbolic_trace(bad().eval()), bad.__name__)


@pytest.mark.parametrize("name", models(list(MODELS), fast=("nasrnn", "squeezenet", "bert")))
def test_deterministic(name):
    _, inputs, out = _built(name)
    model2, inputs2 = load(name)
    for a, b in zip(inputs, inputs2):
        assert torch.equal(a, b)
    with torch.no_grad():
        assert torch.equal(model2(*inputs2), out)
