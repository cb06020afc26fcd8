"""VGG-19 (Simonyan & Zisserman 2015, configuration E), the TASO / Tensat ``vgg19`` graph.

Sixteen 3x3 convs (pad 1, with bias) each followed by ReLU, five 2x2/2 max
pools, then the classifier on the flattened 512x7x7 map: Linear 25088->4096,
ReLU, Dropout, 4096->4096, ReLU, Dropout, 4096->1000.  No batch norm.  Input
1x3x224x224.  (The adaptive 7x7 average pool of some implementations is the
identity at this input size and is omitted.)
"""

from __future__ import annotations

import torch
from torch import nn

from ._common import build, generator, image

# configuration E: (convs, channels) per block, each block closed by a 2x2 max-pool
BLOCKS_E = ((2, 64), (2, 128), (4, 256), (4, 512), (4, 512))


class VGG19(nn.Module):
    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        in_ch = 3
        for convs, ch in BLOCKS_E:
            for _ in range(convs):
                layers += [nn.Conv2d(in_ch, ch, 3, padding=1), nn.ReLU()]
                in_ch = ch
            layers.append(nn.MaxPool2d(2, stride=2))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(
            nn.Linear(512 * 7 * 7, 4096),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(4096, 4096),
            nn.ReLU(),
            nn.Dropout(0.5),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.features(x), 1))


def vgg19() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    g = generator()
    inputs = (image(g),)
    return build(VGG19, g, inputs), inputs
