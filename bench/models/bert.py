"""BERT encoder stack as in the TASO / Tensat ``bert`` benchmark graph.

Source: TASO ``examples/bert.py`` (also used by Tensat): sequence length 64,
hidden size 1024, 16 heads of size 64, 8 layers.  The input goes through one
ReLU; every layer computes q, k, v with three separate 1024x1024 projections of
the same layer input, splits heads with reshape + transpose, computes
``q @ k`` (k already transposed), multiplies by v, merges heads back and applies
the output projection followed by a residual add.

Deviations from TASO's graph: we add the 1/sqrt(64) = 1/8 logit scaling, the
softmax over the key dimension, the residual add and a LayerNorm(1024) after it
(TASO has none of these).  TASO's script also applies the output projection to
the layer *input* (leaving the attention result dead); here it is applied to the
attention output.  Projections are ``nn.Linear`` without bias (TASO: plain
matmuls with a weight), so x @ W.T instead of x @ W.
"""

from __future__ import annotations

import torch
from torch import nn

from ._common import build, generator

SEQ = 64
HIDDEN = 1024
HEADS = 16
HEAD_DIM = 64
LAYERS = 8


class AttentionLayer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.k = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.v = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.o = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.norm = nn.LayerNorm(HIDDEN)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # [64, 1024] -> [64, 16, 64] -> heads first
        q = self.q(x).reshape(SEQ, HEADS, HEAD_DIM).permute(1, 0, 2)  # [16, 64 seq, 64 d]
        k = self.k(x).reshape(SEQ, HEADS, HEAD_DIM).permute(1, 2, 0)  # [16, 64 d, 64 seq]
        v = self.v(x).reshape(SEQ, HEADS, HEAD_DIM).permute(1, 0, 2)  # [16, 64 seq, 64 d]
        logits = torch.matmul(q, k) * 0.125  # [16, 64, 64]
        probs = torch.softmax(logits, dim=2)
        ctx = torch.matmul(probs, v)  # [16, 64 seq, 64 d]
        ctx = ctx.transpose(0, 1).reshape(SEQ, HIDDEN)
        return self.norm(self.o(ctx) + x)


class Bert(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.relu = nn.ReLU()
        self.layers = nn.Sequential(*[AttentionLayer() for _ in range(LAYERS)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(self.relu(x))


def bert() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    g = generator()
    inputs = (torch.randn(SEQ, HIDDEN, generator=g),)
    return build(Bert, g, inputs), inputs
