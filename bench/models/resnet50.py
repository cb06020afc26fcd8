"""ResNet-50 (He et al. 2016), the TASO / Tensat ``resnet50`` benchmark graph.

Bottleneck blocks [3, 4, 6, 3] with widths 64/128/256/512 and expansion 4;
7x7/2 stem conv + BN + ReLU, 3x3/2 max pool (pad 1), global average pool and a
1000-way fully connected layer.  Input 1x3x224x224.  The stride of a
down-sampling block sits on its 3x3 conv ("v1.5", as in TASO's graph); the
shortcut of the first block of each stage is a 1x1 conv + BN projection.

``ResNet`` is also used by ``resnext50`` (``groups`` / ``width_per_group``).
"""

from __future__ import annotations

import torch
from torch import nn

from ._common import build, generator, image


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, in_ch: int, planes: int, stride: int, groups: int, width: int) -> None:
        super().__init__()
        out_ch = planes * self.expansion
        self.conv1 = nn.Conv2d(in_ch, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, out_ch, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(out_ch)
        self.relu = nn.ReLU()
        self.downsample: nn.Module
        if stride != 1 or in_ch != out_ch:
            self.downsample = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_ch),
            )
        else:
            self.downsample = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + self.downsample(x))


class ResNet(nn.Module):
    def __init__(
        self, layers=(3, 4, 6, 3), groups: int = 1, width_per_group: int = 64, num_classes: int = 1000
    ) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        blocks = []
        in_ch = 64
        for stage, n in enumerate(layers):
            planes = 64 * 2**stage
            width = planes * width_per_group // 64 * groups
            for i in range(n):
                stride = 2 if (i == 0 and stage > 0) else 1
                blocks.append(Bottleneck(in_ch, planes, stride, groups, width))
                in_ch = planes * Bottleneck.expansion
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(in_ch, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


def resnet50() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    g = generator()
    inputs = (image(g),)
    return build(ResNet, g, inputs), inputs
