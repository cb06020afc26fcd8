"""The activation / reduction / norm / resize ops through torch.export's ATen: each small module
imports, compiles to LLVM and matches eager PyTorch."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from lower import compile_graph
from rewrite.frontends import from_torch


class Fn(nn.Module):
    def __init__(self, fn: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fn(x)


X4 = (2, 6, 5, 7)
CASES: dict[str, tuple[nn.Module, tuple[int, ...]]] = {
    "relu6": (nn.ReLU6(), X4),
    "hardtanh": (nn.Hardtanh(-0.5, 2.0), X4),
    "clamp": (Fn(lambda x: torch.clamp(x, -1.0, 0.5)), X4),
    "clamp_min0": (Fn(lambda x: x.clamp(min=0.0)), X4),
    "hardswish": (nn.Hardswish(), X4),
    "hardsigmoid": (nn.Hardsigmoid(), X4),
    "silu": (nn.SiLU(), X4),
    "mish": (nn.Mish(), X4),
    "gelu_erf": (nn.GELU(), X4),
    "gelu_tanh": (nn.GELU(approximate="tanh"), X4),
    "exp_log": (Fn(lambda x: torch.log(torch.exp(x) * 0.5 + x.abs())), X4),
    "sqrt_rsqrt": (Fn(lambda x: torch.sqrt(x.abs() + 1.0) + torch.rsqrt(x * x + 1.0)), X4),
    "pow": (Fn(lambda x: (x.abs() + 0.5) ** 1.5 + x**3), X4),
    "neg_abs_recip": (Fn(lambda x: -x + torch.abs(x) + torch.reciprocal(x.abs() + 1.0)), X4),
    "sin_cos": (Fn(lambda x: torch.sin(x * 7.0) * torch.cos(x) + x.cos()), X4),
    "sum_keepdim": (Fn(lambda x: x.sum(dim=(1, 3), keepdim=True)), X4),
    "mean_last": (Fn(lambda x: x.mean(-1)), X4),
    "amax_amin": (Fn(lambda x: x.amax(1, keepdim=True) - x.amin(2, keepdim=True) + x.sum()), X4),
    "var": (Fn(lambda x: x.var(dim=-1, keepdim=True)), X4),
    "expand": (Fn(lambda x: x[:, :1].expand(2, 6, 5, 7) * x), X4),
    "squeeze_unsqueeze_flatten": (Fn(lambda x: x.unsqueeze(0).flatten(2, 3).squeeze(0).view(2, -1)), X4),
    "permute": (Fn(lambda x: x.permute(0, 2, 3, 1).contiguous()), X4),
    "zeropad": (nn.ZeroPad2d((1, 2, 0, 3)), X4),
    "constpad": (Fn(lambda x: F.pad(x, (1, 1, 2, 0), value=-1.5)), X4),
    "upsample_nearest": (nn.Upsample(scale_factor=2, mode="nearest"), X4),
    "upsample_bilinear": (nn.Upsample(size=(8, 9), mode="bilinear", align_corners=False), X4),
    "upsample_bilinear_ac": (Fn(lambda x: F.interpolate(x, size=(3, 11), mode="bilinear", align_corners=True)), X4),
    "adaptive_avgpool": (nn.AdaptiveAvgPool2d((2, 3)), X4),
    "groupnorm": (nn.GroupNorm(3, 6), X4),
    "rmsnorm": (nn.RMSNorm(7, eps=1e-6), X4),
    "cat_split_chunk": (Fn(lambda x: torch.cat([*x.split([2, 3], 2)[::-1], *x.chunk(3, 2)], 2)), X4),
}


def _check(graph, module: nn.Module, x: torch.Tensor) -> None:
    ref = module(x)
    got = compile_graph(graph)({graph.inputs[0].attrs["name"]: x})[0]
    assert tuple(got.shape) == tuple(ref.shape)
    scale = float(ref.abs().max()) or 1.0
    assert float((got - ref).abs().max()) / scale <= 1e-5


@pytest.mark.parametrize("case", list(CASES))
def test_torch_export(case):
    module, shape = CASES[case]
    torch.manual_seed(0)
    x = torch.randn(shape)
    with torch.no_grad():
        _check(from_torch(module.eval(), (x,)), module, x)
