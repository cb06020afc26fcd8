"""Deterministic construction and weight initialisation shared by the benchmark models.

Models are built on the ``meta`` device (no default init, no use of the global RNG),
materialised on CPU, and then every parameter and buffer is filled from a local
``torch.Generator`` with fan-in scaled values so that activations stay O(1):

* Conv2d / Linear weights: normal(0, gain / sqrt(fan_in)); gain = sqrt(2) for convs
  (they are followed by ReLU almost everywhere), 1 for linears.  Biases: U(-0.1, 0.1).
* BatchNorm2d: weight U(0.8, 1.2), bias N(0, 0.1), running_mean N(0, 0.1),
  running_var U(0.5, 1.5).
* LayerNorm: weight 1 + N(0, 0.1), bias N(0, 0.1).
* Any other parameter (e.g. the NasRNN initial state): N(0, 0.5).

Fan-in scaling alone does not keep activations O(1) through deep graphs with
fixed (eval-mode) BN statistics: max pools, residual/branch additions and convs
whose input is not a ReLU output make the RMS drift by orders of magnitude.  So
``build`` then runs one calibration forward pass on the example inputs in which
every Conv2d / Linear rescales its weight and bias by one scalar per layer so that
its output has RMS 1 (LSUV-style; a single pass suffices because each layer's
output is rescaled before later layers see it).  BN parameters/statistics keep
the values above.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn

SEED = 0


# In place, drawing into the tensor itself (``out=`` refuses a parameter, so its detached alias): the same
# values as ``randn(shape) * std + mean`` without its two temporaries (VGG-19's 25088x4096 classifier weight
# is 411 MB; building the model peaked at 1.2 GB on them).
def _normal(t: torch.Tensor, std: float, g: torch.Generator, mean: float = 0.0) -> None:
    torch.randn(t.shape, generator=g, out=t.detach()).mul_(std).add_(mean)


def _uniform(t: torch.Tensor, lo: float, hi: float, g: torch.Generator) -> None:
    torch.rand(t.shape, generator=g, out=t.detach()).mul_(hi - lo).add_(lo)


@torch.no_grad()
def init_weights(model: nn.Module, g: torch.Generator) -> nn.Module:
    for mod in model.modules():
        done: set[str] = set()
        if isinstance(mod, nn.Conv2d):
            fan_in = mod.weight[0].numel()
            _normal(mod.weight, math.sqrt(2.0 / fan_in), g)
            done.add("weight")
            if mod.bias is not None:
                _uniform(mod.bias, -0.1, 0.1, g)
                done.add("bias")
        elif isinstance(mod, nn.Linear):
            _normal(mod.weight, 1.0 / math.sqrt(mod.in_features), g)
            done.add("weight")
            if mod.bias is not None:
                _uniform(mod.bias, -0.1, 0.1, g)
                done.add("bias")
        elif isinstance(mod, nn.BatchNorm2d):
            weight, bias, mean, var = mod.weight, mod.bias, mod.running_mean, mod.running_var
            count = mod.num_batches_tracked
            if weight is None or bias is None or mean is None or var is None or count is None:
                raise TypeError(f"{type(mod).__name__} without affine weights or running statistics")
            _uniform(weight, 0.8, 1.2, g)
            _normal(bias, 0.1, g)
            _normal(mean, 0.1, g)
            _uniform(var, 0.5, 1.5, g)
            count.zero_()
            done.update({"weight", "bias", "running_mean", "running_var", "num_batches_tracked"})
        elif isinstance(mod, nn.LayerNorm):
            _normal(mod.weight, 0.1, g, mean=1.0)
            _normal(mod.bias, 0.1, g)
            done.update({"weight", "bias"})
        for name, p in mod.named_parameters(recurse=False):
            if name not in done:
                _normal(p, 0.5, g)
        for name, _ in mod.named_buffers(recurse=False):
            if name not in done:
                raise TypeError(f"no initialiser for buffer {name!r} of {type(mod).__name__}")
    return model


@torch.no_grad()
def calibrate(model: nn.Module, inputs: tuple[torch.Tensor, ...]) -> nn.Module:
    """Rescale each Conv2d / Linear (one scalar per layer) so its output RMS is 1."""
    seen: set[int] = set()

    def hook(mod: nn.Module, args, out: torch.Tensor) -> torch.Tensor:
        assert isinstance(mod, (nn.Conv2d, nn.Linear))  # the only modules the hook is registered on
        if id(mod) in seen:
            return out
        seen.add(id(mod))
        scale = 1.0 / max(out.pow(2).mean().sqrt().item(), 1e-6)
        mod.weight.mul_(scale)
        if mod.bias is not None:
            mod.bias.mul_(scale)
        return out * scale

    handles = [m.register_forward_hook(hook) for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    try:
        model.eval()(*inputs)
    finally:
        for h in handles:
            h.remove()
    return model


def build(
    ctor: Callable[[], nn.Module], g: torch.Generator, inputs: tuple[torch.Tensor, ...] | None = None
) -> nn.Module:
    """Construct ``ctor()`` without default init, initialise it from ``g`` and,
    if ``inputs`` are given, calibrate the layer scales on them."""
    with torch.device("meta"):
        model = ctor()
    model = model.to_empty(device="cpu")
    init_weights(model, g)
    if inputs is not None:
        calibrate(model, inputs)
    return model.eval()


def generator(seed: int = SEED) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def image(g: torch.Generator, size: int = 224) -> torch.Tensor:
    return torch.randn(1, 3, size, size, generator=g)
