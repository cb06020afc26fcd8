"""Benchmark models for eqsat (the TASO / Tensat benchmark suite, in PyTorch).

``MODELS`` maps a model name to a factory returning ``(module.eval(), example_inputs)``.
Factories are deterministic (local ``torch.Generator``, seed 0), float32, for
inference, and use only the operations supported by eqsat's graph IR.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from .bert import bert
from .inceptionv3 import inceptionv3
from .nasneta import nasneta
from .nasrnn import nasrnn
from .resnet50 import resnet50
from .resnext50 import resnext50
from .squeezenet import squeezenet
from .vgg19 import vgg19

Factory = Callable[[], tuple[nn.Module, tuple[torch.Tensor, ...]]]

MODELS: dict[str, Factory] = {
    "bert": bert,
    "nasrnn": nasrnn,
    "resnext50": resnext50,
    "nasneta": nasneta,
    "squeezenet": squeezenet,
    "vgg19": vgg19,
    "inceptionv3": inceptionv3,
    "resnet50": resnet50,
}


def load(name: str) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """Build benchmark model ``name``; raises ``KeyError`` listing the known names."""
    try:
        factory = MODELS[name]
    except KeyError:
        raise KeyError(f"unknown model {name!r}; known models: {sorted(MODELS)}") from None
    return factory()


__all__ = ["MODELS", "load"]
