"""SqueezeNet 1.1 (Iandola et al. 2016), the TASO / Tensat ``squeezenet`` graph.

3x3/2 conv (64) + ReLU, 3x3/2 max pool, Fire(16, 64, 64) x2, max pool,
Fire(32, 128, 128) x2, max pool, Fire(48, 192, 192) x2, Fire(64, 256, 256) x2,
Dropout, 1x1 conv to 1000 classes + ReLU, global average pool, flatten.
A Fire module is a 1x1 squeeze conv + ReLU feeding a 1x1 and a 3x3 (pad 1)
expand conv (each + ReLU) concatenated on channels.  Input 1x3x224x224.

Deviation: the max pools use ceil_mode=False (the reference uses ceil_mode=True);
at 224x224 input both give identical shapes (111 -> 55 -> 27 -> 13), so the
computed function is the same.
"""

from __future__ import annotations

import torch
from torch import nn

from ._common import build, generator, image


class Fire(nn.Module):
    def __init__(self, in_ch: int, squeeze: int, expand1: int, expand3: int) -> None:
        super().__init__()
        self.squeeze = nn.Conv2d(in_ch, squeeze, 1)
        self.expand1 = nn.Conv2d(squeeze, expand1, 1)
        self.expand3 = nn.Conv2d(squeeze, expand3, 3, padding=1)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.relu(self.squeeze(x))
        return torch.cat([self.relu(self.expand1(s)), self.relu(self.expand3(s))], 1)


class SqueezeNet11(nn.Module):
    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, 3, stride=2),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2),
            Fire(64, 16, 64, 64),
            Fire(128, 16, 64, 64),
            nn.MaxPool2d(3, stride=2),
            Fire(128, 32, 128, 128),
            Fire(256, 32, 128, 128),
            nn.MaxPool2d(3, stride=2),
            Fire(256, 48, 192, 192),
            Fire(384, 48, 192, 192),
            Fire(384, 64, 256, 256),
            Fire(512, 64, 256, 256),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(0.5),
            nn.Conv2d(512, num_classes, 1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(self.classifier(self.features(x)), 1)


def squeezenet() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    g = generator()
    inputs = (image(g),)
    return build(SqueezeNet11, g, inputs), inputs
