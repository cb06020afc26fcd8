"""NasRNN cell unrolled over 5 steps, as in the TASO / Tensat ``nasrnn`` benchmark.

Source: TASO ``examples/nasrnn.py``: hidden size 512, sequence length 5, inputs
x_0..x_4 of shape [1, 512]; the initial state is a weight [1, 512].  Each step
computes eight "combine" ops ``t_i = x @ W1_i + h @ W2_i`` (fresh 512x512
weights for every combine in every step, exactly like TASO, i.e. weights are not
shared across steps), then the NAS cell tree of relu/sigmoid/tanh with adds and
multiplies.  The output is the final state.

Deviation: the matmuls are ``nn.Linear(512, 512, bias=False)`` (x @ W.T instead
of x @ W; same op up to the weight layout).
"""

from __future__ import annotations

import torch
from torch import nn

from ._common import build, generator

HIDDEN = 512
STEPS = 5


class NasCell(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.wx = nn.ModuleList([nn.Linear(HIDDEN, HIDDEN, bias=False) for _ in range(8)])
        self.wh = nn.ModuleList([nn.Linear(HIDDEN, HIDDEN, bias=False) for _ in range(8)])

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        t = [wx(x) + wh(h) for wx, wh in zip(self.wx, self.wh)]
        mid0 = torch.relu(t[0]) + torch.sigmoid(t[3])
        mid1 = torch.sigmoid(t[1]) + torch.tanh(t[2])
        mid2 = torch.sigmoid(t[4]) * torch.tanh(t[5])
        mid3 = torch.sigmoid(t[6]) * torch.relu(t[7])
        mid4 = torch.sigmoid(mid1) + torch.tanh(mid2)
        mid5 = torch.tanh(mid0) * torch.tanh(mid3)
        mid6 = torch.tanh(mid4) * torch.tanh(mid5)
        return torch.tanh(mid6)


class NasRNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.state = nn.Parameter(torch.empty(1, HIDDEN))
        self.cells = nn.ModuleList([NasCell() for _ in range(STEPS)])

    def forward(
        self, x0: torch.Tensor, x1: torch.Tensor, x2: torch.Tensor, x3: torch.Tensor, x4: torch.Tensor
    ) -> torch.Tensor:
        h = self.state
        for cell, x in zip(self.cells, (x0, x1, x2, x3, x4)):
            h = cell(x, h)
        return h


def nasrnn() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    g = generator()
    inputs = tuple(torch.randn(1, HIDDEN, generator=g) for _ in range(STEPS))
    return build(NasRNN, g, inputs), inputs
