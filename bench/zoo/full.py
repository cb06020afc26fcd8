"""The zoo at deployment sizes, to time against peers: ``python -m bench.e2e --models full:NAME,...``.

The zoo proper (``ZOO``) is small so that every test imports, optimizes and compiles it in seconds; these
are the same builders at the sizes the architectures run at: the CNNs at 224 x 224; BERT-base's and GPT-2
small's layers (768 wide, 12 heads), a 512-wide Llama and ViT-S (384 wide, 16 x 16 patches of 224 x 224),
each two layers deep over 128 tokens; a ConvNeXt (widths 48-384) at 224 x 224.  Random weights, seeded;
nothing downloaded.  ``bench.e2e`` takes them as ``full:NAME``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import torch
from torch import nn

from bench.zoo import cnn, hf

Builder = Callable[[], tuple[nn.Module, tuple[Any, ...]]]


def _seeded(build: Builder) -> Builder:
    def run() -> tuple[nn.Module, tuple[Any, ...]]:
        torch.manual_seed(0)
        return build()

    return run


def convnext() -> tuple[nn.Module, tuple[Any, ...]]:
    """ConvNeXt blocks (7 x 7 depthwise, LayerNorm, GELU) at widths 48-384, depths 1, 1, 2, 1."""
    from transformers import ConvNextConfig, ConvNextModel  # optional 'zoo' extra

    cfg = ConvNextConfig(hidden_sizes=[48, 96, 192, 384], depths=[1, 1, 2, 1])
    return hf._Out(ConvNextModel(cfg).eval(), "last_hidden_state"), (torch.randn(1, 3, 224, 224),)


SEQ, VOCAB = 128, 1000
_TRANSFORMERS: dict[str, Builder] = {
    "bert": partial(hf.bert, width=768, heads=12, inner=3072, seq=SEQ, vocab=VOCAB),
    "gpt2": partial(hf.gpt2, width=768, heads=12, seq=SEQ, vocab=VOCAB),
    "llama": partial(hf.llama, width=512, heads=8, kv_heads=4, inner=1376, seq=SEQ, vocab=VOCAB),
    "vit": partial(hf.vit, width=384, heads=6, inner=1536, image=224, patch=16),
    "convnext": convnext,
}
FULL: dict[str, Builder] = {
    **{name: partial(cnn.build, name, size=224) for name in cnn.CNNS},
    **{name: _seeded(build) for name, build in _TRANSFORMERS.items()},
}

__all__ = ["FULL"]
