"""NASNet-A (Zoph et al. 2018) in the shape of the TASO / Tensat ``nasneta`` graph.

Follows the cell structure of TASO's ``examples/nasnet_a.py``: each cell takes
(prev, cur), squeezes ``cur`` with a 1x1 conv and fits ``prev`` with a 1x1 conv
to the cell width C, forms 5 pairs of branches, adds each pair and concatenates
the 5 sums (output 5C channels).

Normal cell (stride 1) pairs:
  sep3(cur) + cur,  sep3(prev) + sep3(cur),  avg3(cur) + prev,
  avg3(prev) + avg3(prev),  sep3(prev) + sep3(prev)
Reduction cell (stride 2) pairs, o0..o4:
  o0 = sep7/2(prev) + sep5/2(cur),  o1 = max3/2(cur) + sep7/2(prev),
  o2 = avg3/2(cur) + sep5/2(prev),  o3 = max3/2(cur) + sep3(o0),
  o4 = avg3(o0) + o1
(the duplicated branches, e.g. the two identical avg3(prev), are in TASO's graph
too and are left for the optimiser to find).

A separable conv is ReLU -> depthwise kxk conv (groups = C) -> 1x1 pointwise
conv -> BatchNorm; squeeze / fit convs are ReLU -> 1x1 conv -> BatchNorm.  Pools
are 3x3 with pad 1 (count_include_pad=False for the average pools).

Network (scaled down so it runs in well under a second on CPU): input
1x3x224x224, 7x7/2 stem conv (64) + BN + ReLU, 3x3/2 max pool (pad 1) -> 56x56,
then 2 normal cells (C=64), reduction (C=128) -> 28x28, 2 normal (C=128),
reduction (C=256) -> 14x14, 2 normal (C=256), ReLU, global average pool, fc 1000.
As in TASO, the cell after a reduction receives the reduction output as both
prev and cur.

Deviations from TASO: TASO's graph starts from a 1x128x56x56 input (no stem)
and has 3 x (5 normal cells + 1 reduction), normal cells C = 128/256/512 and
reductions C = 256/512/1024, and no head; here we use 2 normal cells per stage, two reductions,
C = 64/128/256, an image stem and a pool + fc head.  BN and pre-activation ReLUs
are added (TASO fuses a ReLU into the squeeze / fit convs and has no BN).
"""

from __future__ import annotations

import torch
from torch import nn

from ._common import build, generator, image


class ReLUConvBN(nn.Module):
    def __init__(self, in_ch: int, out_ch: int) -> None:
        super().__init__()
        self.relu = nn.ReLU()
        self.conv = nn.Conv2d(in_ch, out_ch, 1, bias=False)
        self.bn = nn.BatchNorm2d(out_ch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.conv(self.relu(x)))


class SepConv(nn.Module):
    def __init__(self, ch: int, kernel: int, stride: int = 1) -> None:
        super().__init__()
        self.relu = nn.ReLU()
        self.depthwise = nn.Conv2d(ch, ch, kernel, stride=stride, padding=kernel // 2, groups=ch, bias=False)
        self.pointwise = nn.Conv2d(ch, ch, 1, bias=False)
        self.bn = nn.BatchNorm2d(ch)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.pointwise(self.depthwise(self.relu(x))))


def _avg(stride: int) -> nn.AvgPool2d:
    return nn.AvgPool2d(3, stride=stride, padding=1, count_include_pad=False)


class NormalCell(nn.Module):
    def __init__(self, prev_ch: int, cur_ch: int, c: int) -> None:
        super().__init__()
        self.squeeze = ReLUConvBN(cur_ch, c)
        self.fit = ReLUConvBN(prev_ch, c)
        self.sep_cur_a = SepConv(c, 3)
        self.sep_prev_a = SepConv(c, 3)
        self.sep_cur_b = SepConv(c, 3)
        self.avg_cur = _avg(1)
        self.avg_prev_a = _avg(1)
        self.avg_prev_b = _avg(1)
        self.sep_prev_b = SepConv(c, 3)
        self.sep_prev_c = SepConv(c, 3)

    def forward(self, prev: torch.Tensor, cur: torch.Tensor) -> torch.Tensor:
        cur = self.squeeze(cur)
        prev = self.fit(prev)
        return torch.cat(
            [
                self.sep_cur_a(cur) + cur,
                self.sep_prev_a(prev) + self.sep_cur_b(cur),
                self.avg_cur(cur) + prev,
                self.avg_prev_a(prev) + self.avg_prev_b(prev),
                self.sep_prev_b(prev) + self.sep_prev_c(prev),
            ],
            1,
        )


class ReductionCell(nn.Module):
    def __init__(self, prev_ch: int, cur_ch: int, c: int) -> None:
        super().__init__()
        self.squeeze = ReLUConvBN(cur_ch, c)
        self.fit = ReLUConvBN(prev_ch, c)
        self.sep7_prev_a = SepConv(c, 7, 2)
        self.sep5_cur = SepConv(c, 5, 2)
        self.max_cur_a = nn.MaxPool2d(3, stride=2, padding=1)
        self.sep7_prev_b = SepConv(c, 7, 2)
        self.avg_cur = _avg(2)
        self.sep5_prev = SepConv(c, 5, 2)
        self.max_cur_b = nn.MaxPool2d(3, stride=2, padding=1)
        self.sep3_o0 = SepConv(c, 3)
        self.avg_o0 = _avg(1)

    def forward(self, prev: torch.Tensor, cur: torch.Tensor) -> torch.Tensor:
        cur = self.squeeze(cur)
        prev = self.fit(prev)
        o0 = self.sep7_prev_a(prev) + self.sep5_cur(cur)
        o1 = self.max_cur_a(cur) + self.sep7_prev_b(prev)
        o2 = self.avg_cur(cur) + self.sep5_prev(prev)
        o3 = self.max_cur_b(cur) + self.sep3_o0(o0)
        o4 = self.avg_o0(o0) + o1
        return torch.cat([o0, o1, o2, o3, o4], 1)


class NASNetA(nn.Module):
    def __init__(self, widths=(64, 128, 256), normal_per_stage: int = 2, num_classes: int = 1000) -> None:
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.MaxPool2d(3, stride=2, padding=1),
        )
        cells: list[nn.Module] = []
        ch = prev_ch = 64  # channels of both prev and cur at the start of a stage
        for stage, c in enumerate(widths):
            if stage > 0:
                cells.append(ReductionCell(prev_ch, ch, c))
                ch = 5 * c
            prev_ch = ch
            for _ in range(normal_per_stage):
                cells.append(NormalCell(prev_ch, ch, c))
                prev_ch, ch = ch, 5 * c
        self.cells = nn.ModuleList(cells)
        self.relu = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(ch, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.stem(x)
        prev, cur = x, x
        for cell in self.cells:
            out = cell(prev, cur)
            if isinstance(cell, ReductionCell):
                prev, cur = out, out
            else:
                prev, cur = cur, out
        return self.fc(torch.flatten(self.pool(self.relu(cur)), 1))


def nasneta() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    g = generator()
    inputs = (image(g),)
    return build(NASNetA, g, inputs), inputs
