"""The zoo at deployment sizes, to time against peers: ``python -m bench.e2e --models full:NAME,...``.

The zoo proper (``ZOO``) is small so that every test imports, optimizes and compiles it in seconds; these
builders give the same architectures at the sizes they run at: the CNNs at 224 x 224, the transformers at
their base widths (two layers, 128 tokens), random weights, nothing downloaded.  ``FULL`` maps a name to a
builder returning ``(module, example inputs)``; ``bench.e2e`` takes them as ``full:NAME``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import torch
from torch import nn

from bench.zoo import cnn
from bench.zoo.hf import _EAGER, _Out

SEQ = 128
VOCAB = 1000


def _ids() -> tuple[torch.Tensor, ...]:
    return (torch.randint(0, VOCAB, (1, SEQ), generator=torch.Generator().manual_seed(0)),)


def bert() -> tuple[nn.Module, tuple[Any, ...]]:
    """BERT-base's layer (768 wide, 12 heads, 3072 inner), two of them."""
    from transformers import BertConfig, BertModel  # optional 'zoo' extra

    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=VOCAB,
        hidden_size=768,
        num_hidden_layers=2,
        num_attention_heads=12,
        intermediate_size=3072,
        max_position_embeddings=SEQ,
        **_EAGER,
    )
    return _Out(BertModel(cfg, add_pooling_layer=False).eval(), "last_hidden_state"), _ids()


def gpt2() -> tuple[nn.Module, tuple[Any, ...]]:
    """GPT-2 small's layer (768 wide, 12 heads), two of them."""
    from transformers import GPT2Config, GPT2Model  # optional 'zoo' extra

    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=768, n_layer=2, n_head=12, **_EAGER)
    return _Out(GPT2Model(cfg).eval(), "last_hidden_state"), _ids()


def llama() -> tuple[nn.Module, tuple[Any, ...]]:
    """A small Llama (512 wide, 8 heads over 4 key/value heads, SwiGLU 1376), two layers."""
    from transformers import LlamaConfig, LlamaModel  # optional 'zoo' extra

    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=512,
        intermediate_size=1376,
        num_hidden_layers=2,
        num_attention_heads=8,
        num_key_value_heads=4,
        max_position_embeddings=SEQ,
        **_EAGER,
    )
    return _Out(LlamaModel(cfg).eval(), "last_hidden_state"), _ids()


def vit() -> tuple[nn.Module, tuple[Any, ...]]:
    """ViT-S's layer (384 wide, 6 heads) on 224 x 224 in 16 x 16 patches, two layers."""
    from transformers import ViTConfig, ViTModel  # optional 'zoo' extra

    torch.manual_seed(0)
    cfg = ViTConfig(
        image_size=224,
        patch_size=16,
        hidden_size=384,
        num_hidden_layers=2,
        num_attention_heads=6,
        intermediate_size=1536,
        **_EAGER,
    )
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    return _Out(ViTModel(cfg, add_pooling_layer=False).eval(), "last_hidden_state"), (x,)


def convnext() -> tuple[nn.Module, tuple[Any, ...]]:
    """A ConvNeXt (widths 48-384: 7 x 7 depthwise, LayerNorm, GELU) on 224 x 224."""
    from transformers import ConvNextConfig, ConvNextModel  # optional 'zoo' extra

    torch.manual_seed(0)
    cfg = ConvNextConfig(hidden_sizes=[48, 96, 192, 384], depths=[1, 1, 2, 1])
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    return _Out(ConvNextModel(cfg).eval(), "last_hidden_state"), (x,)


FULL: dict[str, Callable[[], tuple[nn.Module, tuple[Any, ...]]]] = {
    **{name: partial(cnn.build, name, size=224) for name in cnn.CNNS},
    "bert": bert,
    "gpt2": gpt2,
    "llama": llama,
    "vit": vit,
    "convnext": convnext,
}

__all__ = ["FULL"]
