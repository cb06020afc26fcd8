"""A wide sweep of ``transformers`` architectures the zoo does not have, at deployment-like sizes, to find cliffs:
``python -m bench.e2e --models wide --threads 1 --peers ort`` (about 15 minutes on 2 cores).

Where ``bench.zoo.full`` times nine architectures closely, this is one row each for 28 more: encoders (DistilBERT,
ALBERT, ELECTRA, DeBERTa-v2, MPNet, XLM-R, T5's encoder), decoders (GPT-NeoX, Falcon, Mistral, Qwen2, Phi, Gemma,
BLOOM, CodeGen), vision transformers (DeiT, MobileViT, SegFormer, LeViT, CvT, Swin) and CNNs (ConvNeXt-V2, RegNet,
EfficientNet, MobileNet v1 and v2, PoolFormer, ResNet): two layers 512 wide over 128 tokens, or 224 x 224 images
(MobileViT 256), with each config's defaults otherwise.  Random weights, seeded; nothing downloaded.  A row far
below its peers points at an op or shape that takes a slow path (PoolFormer's group norms: 10x torch's time until
``flat_offset`` folded their flat index); it is a sweep for those, not a set to tune defaults on.
``bench.e2e`` takes them as ``wide:NAME``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from bench.zoo.hf import _EAGER, _Out

Builder = Callable[[], tuple[nn.Module, tuple[Any, ...]]]
WIDTH, HEADS, INNER, LAYERS, SEQ, VOCAB, IMAGE = 512, 8, 2048, 2, 128, 1000, 224
_TEXT = {
    "vocab_size": VOCAB,
    "hidden_size": WIDTH,
    "num_hidden_layers": LAYERS,
    "num_attention_heads": HEADS,
    "intermediate_size": INNER,
}


def _build(config: str, model: str, field: str, inputs: Callable[[], tuple[Any, ...]], **kw: Any) -> Builder:
    def build() -> tuple[nn.Module, tuple[Any, ...]]:
        import transformers  # optional 'zoo' extra

        torch.manual_seed(0)
        cfg = getattr(transformers, config)(**kw)
        return _Out(getattr(transformers, model)(cfg), field).eval(), inputs()

    return build


def _text(config: str, model: str, **kw: Any) -> Builder:
    """A text model over ``SEQ`` random token ids, eager attention, its last hidden state out."""
    return _build(config, model, "last_hidden_state", lambda: (torch.randint(0, VOCAB, (1, SEQ)),), **kw, **_EAGER)


def _image(config: str, model: str, field: str = "last_hidden_state", size: int = IMAGE, **kw: Any) -> Builder:
    """A vision model over one random ``size`` x ``size`` image, ``field`` out."""
    return _build(config, model, field, lambda: (torch.randn(1, 3, size, size),), **kw)


_NO_CACHE = {"use_cache": False}
WIDE: dict[str, Builder] = {
    "distilbert": _text(
        "DistilBertConfig",
        "DistilBertModel",
        vocab_size=VOCAB,
        dim=WIDTH,
        n_layers=LAYERS,
        n_heads=HEADS,
        hidden_dim=INNER,
    ),
    "albert": _text("AlbertConfig", "AlbertModel", embedding_size=128, **_TEXT),
    "electra": _text("ElectraConfig", "ElectraModel", embedding_size=128, **_TEXT),
    "deberta_v2": _text("DebertaV2Config", "DebertaV2Model", **_TEXT),
    "mpnet": _text("MPNetConfig", "MPNetModel", **_TEXT),
    "xlm_roberta": _text("XLMRobertaConfig", "XLMRobertaModel", max_position_embeddings=SEQ + 2, **_TEXT),
    "t5_encoder": _text(
        "T5Config",
        "T5EncoderModel",
        vocab_size=VOCAB,
        d_model=WIDTH,
        d_kv=64,
        d_ff=INNER,
        num_layers=LAYERS,
        num_heads=HEADS,
    ),
    "gpt_neox": _text("GPTNeoXConfig", "GPTNeoXModel", **_NO_CACHE, **_TEXT),
    "falcon": _text(
        "FalconConfig",
        "FalconModel",
        vocab_size=VOCAB,
        hidden_size=WIDTH,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        **_NO_CACHE,
    ),
    "mistral": _text("MistralConfig", "MistralModel", num_key_value_heads=2, **_NO_CACHE, **_TEXT),
    "qwen2": _text("Qwen2Config", "Qwen2Model", num_key_value_heads=2, **_NO_CACHE, **_TEXT),
    "phi": _text("PhiConfig", "PhiModel", **_NO_CACHE, **_TEXT),
    "gemma": _text("GemmaConfig", "GemmaModel", num_key_value_heads=2, head_dim=64, **_NO_CACHE, **_TEXT),
    "bloom": _text(
        "BloomConfig", "BloomModel", vocab_size=VOCAB, hidden_size=WIDTH, n_layer=LAYERS, n_head=HEADS, **_NO_CACHE
    ),
    "codegen": _text(
        "CodeGenConfig",
        "CodeGenModel",
        vocab_size=VOCAB,
        n_embd=WIDTH,
        n_layer=LAYERS,
        n_head=HEADS,
        n_positions=SEQ,
        rotary_dim=32,
        **_NO_CACHE,
    ),
    "deit": _image(
        "DeiTConfig",
        "DeiTModel",
        hidden_size=384,
        num_hidden_layers=LAYERS,
        num_attention_heads=6,
        intermediate_size=1536,
    ),
    "mobilevit": _image("MobileViTConfig", "MobileViTModel", size=256, image_size=256),
    "convnextv2": _image("ConvNextV2Config", "ConvNextV2Model", hidden_sizes=[48, 96, 192, 384], depths=[1, 1, 2, 1]),
    "regnet": _image("RegNetConfig", "RegNetModel", field="pooler_output"),
    "efficientnet": _image("EfficientNetConfig", "EfficientNetModel", field="pooler_output"),
    "mobilenet_v2": _image("MobileNetV2Config", "MobileNetV2Model", field="pooler_output"),
    "mobilenet_v1": _image("MobileNetV1Config", "MobileNetV1Model", field="pooler_output"),
    "segformer": _image("SegformerConfig", "SegformerModel"),
    "poolformer": _image("PoolFormerConfig", "PoolFormerModel"),
    "levit": _image("LevitConfig", "LevitModel"),
    "cvt": _image("CvtConfig", "CvtModel"),
    "resnet": _image("ResNetConfig", "ResNetModel", field="pooler_output"),
    "swin": _image("SwinConfig", "SwinModel", embed_dim=48, depths=[2, 2, 2, 2], num_heads=[3, 6, 12, 24]),
}

__all__ = ["WIDE"]
