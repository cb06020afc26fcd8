"""ResNeXt-50 32x4d (Xie et al. 2017), the TASO / Tensat ``resnext50`` benchmark graph.

Same skeleton as ResNet-50 (see ``resnet50.py``): bottleneck blocks [3, 4, 6, 3],
7x7/2 stem + 3x3/2 max pool, global average pool, fc 1000, input 1x3x224x224;
the 3x3 conv of every block is a grouped conv with 32 groups of width 4 per
group at the first stage (block widths 128/256/512/1024, outputs 256/512/1024/2048).
"""

from __future__ import annotations

import functools

import torch
from torch import nn

from ._common import build, generator, image
from .resnet50 import ResNet


def resnext50() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    g = generator()
    inputs = (image(g),)
    return build(functools.partial(ResNet, groups=32, width_per_group=4), g, inputs), inputs
