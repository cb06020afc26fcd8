"""Inception-v3 (Szegedy et al. 2016), the TASO / Tensat ``inceptionv3`` graph.

Input 1x3x299x299.  Stem: 3x3/2 (32), 3x3 (32), 3x3 pad 1 (64), 3x3/2 max pool,
1x1 (80), 3x3 (192), 3x3/2 max pool -> 192x35x35.  Then InceptionA x3
(pool features 32, 64, 64), InceptionB (grid reduction to 17x17),
InceptionC x4 (7x7 factorised into 1x7 / 7x1 convs with (0, 3) / (3, 0)
padding; c7 = 128, 160, 160, 192), InceptionD (reduction to 8x8), InceptionE x2
(split 1x3 / 3x1 branches concatenated), global average pool, Dropout, fc 1000.
Every conv is Conv2d(bias=False) + BatchNorm2d(eps=1e-3) + ReLU.  Average-pool
branches use 3x3 / stride 1 / pad 1 (count_include_pad=True).
No auxiliary classifier.
"""

from __future__ import annotations

import torch
from torch import nn

from ._common import build, generator, image


class ConvBN(nn.Module):
    def __init__(self, in_ch: int, out_ch: int, kernel, stride=1, padding=0) -> None:
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, kernel, stride=stride, padding=padding, bias=False)
        self.bn = nn.BatchNorm2d(out_ch, eps=1e-3)
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.relu(self.bn(self.conv(x)))


def _avg3() -> nn.AvgPool2d:
    return nn.AvgPool2d(3, stride=1, padding=1)


class InceptionA(nn.Module):
    def __init__(self, in_ch: int, pool_features: int) -> None:
        super().__init__()
        self.b1 = ConvBN(in_ch, 64, 1)
        self.b5 = nn.Sequential(ConvBN(in_ch, 48, 1), ConvBN(48, 64, 5, padding=2))
        self.b3 = nn.Sequential(ConvBN(in_ch, 64, 1), ConvBN(64, 96, 3, padding=1), ConvBN(96, 96, 3, padding=1))
        self.bp = nn.Sequential(_avg3(), ConvBN(in_ch, pool_features, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.b1(x), self.b5(x), self.b3(x), self.bp(x)], 1)


class InceptionB(nn.Module):
    def __init__(self, in_ch: int) -> None:
        super().__init__()
        self.b3 = ConvBN(in_ch, 384, 3, stride=2)
        self.b3d = nn.Sequential(ConvBN(in_ch, 64, 1), ConvBN(64, 96, 3, padding=1), ConvBN(96, 96, 3, stride=2))
        self.pool = nn.MaxPool2d(3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.b3(x), self.b3d(x), self.pool(x)], 1)


class InceptionC(nn.Module):
    def __init__(self, in_ch: int, c7: int) -> None:
        super().__init__()
        self.b1 = ConvBN(in_ch, 192, 1)
        self.b7 = nn.Sequential(
            ConvBN(in_ch, c7, 1),
            ConvBN(c7, c7, (1, 7), padding=(0, 3)),
            ConvBN(c7, 192, (7, 1), padding=(3, 0)),
        )
        self.b7d = nn.Sequential(
            ConvBN(in_ch, c7, 1),
            ConvBN(c7, c7, (7, 1), padding=(3, 0)),
            ConvBN(c7, c7, (1, 7), padding=(0, 3)),
            ConvBN(c7, c7, (7, 1), padding=(3, 0)),
            ConvBN(c7, 192, (1, 7), padding=(0, 3)),
        )
        self.bp = nn.Sequential(_avg3(), ConvBN(in_ch, 192, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.b1(x), self.b7(x), self.b7d(x), self.bp(x)], 1)


class InceptionD(nn.Module):
    def __init__(self, in_ch: int) -> None:
        super().__init__()
        self.b3 = nn.Sequential(ConvBN(in_ch, 192, 1), ConvBN(192, 320, 3, stride=2))
        self.b7 = nn.Sequential(
            ConvBN(in_ch, 192, 1),
            ConvBN(192, 192, (1, 7), padding=(0, 3)),
            ConvBN(192, 192, (7, 1), padding=(3, 0)),
            ConvBN(192, 192, 3, stride=2),
        )
        self.pool = nn.MaxPool2d(3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.b3(x), self.b7(x), self.pool(x)], 1)


class InceptionE(nn.Module):
    def __init__(self, in_ch: int) -> None:
        super().__init__()
        self.b1 = ConvBN(in_ch, 320, 1)
        self.b3_stem = ConvBN(in_ch, 384, 1)
        self.b3_a = ConvBN(384, 384, (1, 3), padding=(0, 1))
        self.b3_b = ConvBN(384, 384, (3, 1), padding=(1, 0))
        self.b3d_stem = nn.Sequential(ConvBN(in_ch, 448, 1), ConvBN(448, 384, 3, padding=1))
        self.b3d_a = ConvBN(384, 384, (1, 3), padding=(0, 1))
        self.b3d_b = ConvBN(384, 384, (3, 1), padding=(1, 0))
        self.bp = nn.Sequential(_avg3(), ConvBN(in_ch, 192, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.b3_stem(x)
        d = self.b3d_stem(x)
        return torch.cat(
            [
                self.b1(x),
                torch.cat([self.b3_a(s), self.b3_b(s)], 1),
                torch.cat([self.b3d_a(d), self.b3d_b(d)], 1),
                self.bp(x),
            ],
            1,
        )


class InceptionV3(nn.Module):
    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            ConvBN(3, 32, 3, stride=2),
            ConvBN(32, 32, 3),
            ConvBN(32, 64, 3, padding=1),
            nn.MaxPool2d(3, stride=2),
            ConvBN(64, 80, 1),
            ConvBN(80, 192, 3),
            nn.MaxPool2d(3, stride=2),
        )
        self.blocks = nn.Sequential(
            InceptionA(192, 32),
            InceptionA(256, 64),
            InceptionA(288, 64),
            InceptionB(288),
            InceptionC(768, 128),
            InceptionC(768, 160),
            InceptionC(768, 160),
            InceptionC(768, 192),
            InceptionD(768),
            InceptionE(1280),
            InceptionE(2048),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.dropout = nn.Dropout(0.5)
        self.fc = nn.Linear(2048, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.blocks(self.stem(x)))
        return self.fc(self.dropout(torch.flatten(x, 1)))


def inceptionv3() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    g = generator()
    inputs = (image(g, 299),)
    return build(InceptionV3, g, inputs), inputs
