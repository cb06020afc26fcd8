"""Four mobile/dense CNNs written from their papers, small enough to compile in seconds.

The registry's torchvision wheel is a CUDA build that fails beside CPU torch (and timm needs
it), so these are written here from the papers' architecture tables, with the papers' width
multipliers and fewer classes to keep the zoo quick: input 64x64, batch 1, random weights.

* MobileNetV2 (Sandler et al. 2018, Table 2): inverted residuals, ReLU6, linear bottlenecks.
* EfficientNet-B0 (Tan & Le 2019, Table 1): MBConv with squeeze-and-excitation and SiLU.
* DenseNet-121 (Huang et al. 2017, Table 1): dense blocks (6, 12, 24, 16) and transitions.
* ShuffleNetV2 (Ma et al. 2018, Table 5): channel split, channel shuffle, 0.5x widths.
"""

from __future__ import annotations

import torch
from torch import nn

INPUT = (1, 3, 64, 64)


def _conv_bn(cin: int, cout: int, k: int, s: int = 1, groups: int = 1, act: type[nn.Module] | None = nn.ReLU):
    layers: list[nn.Module] = [nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


def _div8(v: float) -> int:
    return max(8, int(v + 4) // 8 * 8)


# ---------------------------------------------------------------- MobileNetV2
class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        hidden = cin * expand
        layers: list[nn.Module] = [] if expand == 1 else [_conv_bn(cin, hidden, 1, act=nn.ReLU6)]
        layers += [
            _conv_bn(hidden, hidden, 3, stride, groups=hidden, act=nn.ReLU6),
            _conv_bn(hidden, cout, 1, act=None),
        ]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    SETTINGS = (
        (1, 16, 1, 1),
        (6, 24, 2, 2),
        (6, 32, 3, 2),
        (6, 64, 4, 2),
        (6, 96, 3, 1),
        (6, 160, 3, 2),
        (6, 320, 1, 1),
    )

    def __init__(self, width: float = 0.5, classes: int = 100) -> None:
        super().__init__()
        c = _div8(32 * width)
        layers: list[nn.Module] = [_conv_bn(3, c, 3, 2, act=nn.ReLU6)]
        for t, ch, n, s in self.SETTINGS:
            out = _div8(ch * width)
            for i in range(n):
                layers.append(InvertedResidual(c, out, s if i == 0 else 1, t))
                c = out
        last = 1280
        layers.append(_conv_bn(c, last, 1, act=nn.ReLU6))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(last, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


# ---------------------------------------------------------------- EfficientNet-B0
class SqueezeExcite(nn.Module):
    def __init__(self, c: int, squeezed: int) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.reduce = nn.Conv2d(c, squeezed, 1)
        self.expand = nn.Conv2d(squeezed, c, 1)
        self.act = nn.SiLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.expand(self.act(self.reduce(self.pool(x)))))


class MBConv(nn.Module):
    def __init__(self, cin: int, cout: int, k: int, stride: int, expand: int) -> None:
        super().__init__()
        hidden = cin * expand
        layers: list[nn.Module] = [] if expand == 1 else [_conv_bn(cin, hidden, 1, act=nn.SiLU)]
        layers += [
            _conv_bn(hidden, hidden, k, stride, groups=hidden, act=nn.SiLU),
            SqueezeExcite(hidden, max(1, cin // 4)),
            _conv_bn(hidden, cout, 1, act=None),
        ]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x) if self.residual else self.body(x)


class EfficientNetB0(nn.Module):
    # (expand ratio, kernel, stride, channels, repeats)
    STAGES = (
        (1, 3, 1, 16, 1),
        (6, 3, 2, 24, 2),
        (6, 5, 2, 40, 2),
        (6, 3, 2, 80, 3),
        (6, 5, 1, 112, 3),
        (6, 5, 2, 192, 4),
        (6, 3, 1, 320, 1),
    )

    def __init__(self, classes: int = 100) -> None:
        super().__init__()
        c = 32
        layers: list[nn.Module] = [_conv_bn(3, c, 3, 2, act=nn.SiLU)]
        for t, k, s, ch, n in self.STAGES:
            for i in range(n):
                layers.append(MBConv(c, ch, k, s if i == 0 else 1, t))
                c = ch
        layers.append(_conv_bn(c, 1280, 1, act=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(1280, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


# ---------------------------------------------------------------- DenseNet-121
class DenseLayer(nn.Module):
    def __init__(self, cin: int, growth: int, bn_size: int) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.BatchNorm2d(cin),
            nn.ReLU(),
            nn.Conv2d(cin, bn_size * growth, 1, bias=False),
            nn.BatchNorm2d(bn_size * growth),
            nn.ReLU(),
            nn.Conv2d(bn_size * growth, growth, 3, padding=1, bias=False),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, self.body(x)], 1)


class DenseNet121(nn.Module):
    BLOCKS = (6, 12, 24, 16)

    def __init__(self, growth: int = 16, init: int = 32, bn_size: int = 4, classes: int = 100) -> None:
        super().__init__()
        layers: list[nn.Module] = [
            nn.Conv2d(3, init, 7, 2, 3, bias=False),
            nn.BatchNorm2d(init),
            nn.ReLU(),
            nn.MaxPool2d(3, 2, 1),
        ]
        c = init
        for b, n in enumerate(self.BLOCKS):
            for _ in range(n):
                layers.append(DenseLayer(c, growth, bn_size))
                c += growth
            if b != len(self.BLOCKS) - 1:  # transition: halve channels and resolution
                layers += [nn.BatchNorm2d(c), nn.ReLU(), nn.Conv2d(c, c // 2, 1, bias=False), nn.AvgPool2d(2, 2)]
                c //= 2
        layers += [nn.BatchNorm2d(c), nn.ReLU()]
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(c, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


# ---------------------------------------------------------------- ShuffleNetV2
def channel_shuffle(x: torch.Tensor, groups: int) -> torch.Tensor:
    n, c, h, w = x.shape
    return x.view(n, groups, c // groups, h, w).transpose(1, 2).contiguous().view(n, c, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.stride = stride
        half = cout // 2
        if stride > 1:
            self.left = nn.Sequential(_conv_bn(cin, cin, 3, stride, groups=cin, act=None), _conv_bn(cin, half, 1))
        right_in = cin if stride > 1 else half
        self.right = nn.Sequential(
            _conv_bn(right_in, half, 1),
            _conv_bn(half, half, 3, stride, groups=half, act=None),
            _conv_bn(half, half, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.stride == 1:
            a, b = x.chunk(2, dim=1)
            out = torch.cat([a, self.right(b)], 1)
        else:
            out = torch.cat([self.left(x), self.right(x)], 1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    REPEATS = (4, 8, 4)
    WIDTHS = (48, 96, 192)  # the 0.5x column

    def __init__(self, classes: int = 100) -> None:
        super().__init__()
        layers: list[nn.Module] = [_conv_bn(3, 24, 3, 2), nn.MaxPool2d(3, 2, 1)]
        c = 24
        for n, w in zip(self.REPEATS, self.WIDTHS):
            for i in range(n):
                layers.append(ShuffleUnit(c, w, 2 if i == 0 else 1))
                c = w
        layers.append(_conv_bn(c, 1024, 1))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(1024, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x).mean((2, 3)))


def build(name: str, size: int = INPUT[-1]) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """The model (eval mode, seeded random weights) and its example input, ``size`` x ``size`` pixels."""
    torch.manual_seed(0)
    model = {"mobilenet_v2": MobileNetV2, "efficientnet_b0": EfficientNetB0}.get(name)
    model = model or {"densenet121": DenseNet121, "shufflenet_v2": ShuffleNetV2}[name]
    m = model().eval()
    with torch.no_grad():  # non-trivial batch-norm statistics, so folding them is tested
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                assert mod.running_mean is not None and mod.running_var is not None
                mod.running_mean.uniform_(-0.1, 0.1)
                mod.running_var.uniform_(0.5, 1.5)
    return m, (torch.randn(INPUT[:2] + (size, size)),)


CNNS = ("mobilenet_v2", "efficientnet_b0", "densenet121", "shufflenet_v2")
