"""``transformers`` models built from tiny configs with random weights (nothing is downloaded).

Each builder returns the model (eval mode, eager attention) wrapped to return one tensor, and
its example inputs.  ``transformers`` is the optional ``zoo`` extra: it is imported inside the
builders so the rest of the zoo (and ``bench``) loads without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

SEQ = 16
VOCAB = 128
# passed as ** so mypy does not check them against the configs' explicit signatures (they are
# PretrainedConfig kwargs every config accepts)
_EAGER: dict[str, Any] = {"attn_implementation": "eager"}
_LABELS: dict[str, Any] = {"num_labels": 10}


class _Out(nn.Module):
    """Call the wrapped model with its inputs and return one tensor (``logits`` or the hidden states)."""

    def __init__(self, model: nn.Module, field: str) -> None:
        super().__init__()
        self.model, self.field = model, field

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return getattr(self.model(x, return_dict=True), self.field)


def _ids(seq: int = SEQ, vocab: int = VOCAB) -> tuple[torch.Tensor, ...]:
    return (torch.randint(0, vocab, (1, seq)),)


# the builders below take their sizes as keywords: the defaults are the zoo's (tiny, for the tests);
# bench.zoo.full passes deployment sizes


def gpt2(width: int = 64, heads: int = 4, seq: int = SEQ, vocab: int = VOCAB) -> tuple[nn.Module, tuple[Any, ...]]:
    from transformers import GPT2Config, GPT2LMHeadModel  # optional 'zoo' extra

    cfg = GPT2Config(vocab_size=vocab, n_positions=seq, n_embd=width, n_layer=2, n_head=heads, **_EAGER)
    return _Out(GPT2LMHeadModel(cfg).eval(), "logits"), _ids(seq, vocab)


def bert(
    width: int = 64, heads: int = 4, inner: int = 128, seq: int = SEQ, vocab: int = VOCAB
) -> tuple[nn.Module, tuple[Any, ...]]:
    from transformers import BertConfig, BertModel  # optional 'zoo' extra

    cfg = BertConfig(
        vocab_size=vocab,
        hidden_size=width,
        num_hidden_layers=2,
        num_attention_heads=heads,
        intermediate_size=inner,
        max_position_embeddings=seq,
        **_EAGER,
    )
    return _Out(BertModel(cfg, add_pooling_layer=False).eval(), "last_hidden_state"), _ids(seq, vocab)


def llama(
    width: int = 64, heads: int = 4, kv_heads: int = 2, inner: int = 128, seq: int = SEQ, vocab: int = VOCAB
) -> tuple[nn.Module, tuple[Any, ...]]:
    from transformers import LlamaConfig, LlamaForCausalLM  # optional 'zoo' extra

    cfg = LlamaConfig(
        vocab_size=vocab,
        hidden_size=width,
        intermediate_size=inner,
        num_hidden_layers=2,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        max_position_embeddings=seq,
        **_EAGER,
    )
    return _Out(LlamaForCausalLM(cfg).eval(), "logits"), _ids(seq, vocab)


def vit(
    width: int = 64, heads: int = 4, inner: int = 128, image: int = 32, patch: int = 8
) -> tuple[nn.Module, tuple[Any, ...]]:
    from transformers import ViTConfig, ViTModel  # optional 'zoo' extra

    cfg = ViTConfig(
        image_size=image,
        patch_size=patch,
        hidden_size=width,
        num_hidden_layers=2,
        num_attention_heads=heads,
        intermediate_size=inner,
        **_EAGER,
    )
    x = torch.randn(1, 3, image, image)
    return _Out(ViTModel(cfg, add_pooling_layer=False).eval(), "last_hidden_state"), (x,)


def resnet() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    from transformers import ResNetConfig, ResNetForImageClassification  # optional 'zoo' extra

    cfg = ResNetConfig(
        embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1], layer_type="basic", **_LABELS
    )
    return _Out(ResNetForImageClassification(cfg).eval(), "logits"), (torch.randn(1, 3, 64, 64),)


def swin() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """Shifted-window attention: strided slices (patch merging), any/full_like (masked rows), a 1-d pool."""
    from transformers import SwinConfig, SwinModel  # optional 'zoo' extra

    cfg = SwinConfig(
        image_size=32, patch_size=4, embed_dim=16, depths=[1, 1], num_heads=[2, 2], window_size=4, **_EAGER
    )
    return _Out(SwinModel(cfg).eval(), "last_hidden_state"), (torch.randn(1, 3, 32, 32),)


def whisper_encoder() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """Audio: 1-d convolutions over log-mel frames, then a transformer encoder."""
    from transformers import WhisperConfig, WhisperModel  # optional 'zoo' extra

    cfg = WhisperConfig(
        vocab_size=VOCAB,
        d_model=64,
        encoder_layers=2,
        decoder_layers=1,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        num_mel_bins=16,
        max_source_positions=SEQ,
        pad_token_id=0,
        bos_token_id=1,
        eos_token_id=2,
        decoder_start_token_id=1,
        **_EAGER,
    )
    return _Out(WhisperModel(cfg).encoder.eval(), "last_hidden_state"), (torch.randn(1, 16, 2 * SEQ),)


def wav2vec2() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """Raw audio: strided 1-d convolutions, group norm, a weight-normed grouped positional convolution."""
    from transformers import Wav2Vec2Config, Wav2Vec2Model  # optional 'zoo' extra

    cfg = Wav2Vec2Config(
        vocab_size=32,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        conv_dim=(32, 32),
        conv_stride=(5, 2),
        conv_kernel=(10, 3),
        num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4,
        **_EAGER,
    )
    return _Out(Wav2Vec2Model(cfg).eval(), "last_hidden_state"), (torch.randn(1, 800),)


def opt() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """A decoder with learned positions: its causal mask is a Trilu in torch.onnx.export's graph."""
    from transformers import OPTConfig, OPTModel  # optional 'zoo' extra

    cfg = OPTConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        ffn_dim=128,
        max_position_embeddings=SEQ,
        word_embed_proj_dim=64,
        use_cache=False,
        **_EAGER,
    )
    return _Out(OPTModel(cfg).eval(), "last_hidden_state"), _ids()


def beit() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """Relative position bias from a scattered index table; a bool mask added to float scores."""
    from transformers import BeitConfig, BeitModel  # optional 'zoo' extra

    cfg = BeitConfig(
        image_size=32,
        patch_size=8,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        use_relative_position_bias=True,
        **_EAGER,
    )
    return _Out(BeitModel(cfg, add_pooling_layer=False).eval(), "last_hidden_state"), (torch.randn(1, 3, 32, 32),)


def dinov2() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """Position embeddings resized bicubically to the image (a constant subgraph), layer scale, SwiGLU-free MLP."""
    from transformers import Dinov2Config, Dinov2Model  # optional 'zoo' extra

    cfg = Dinov2Config(
        image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, mlp_ratio=2, **_EAGER
    )
    return _Out(Dinov2Model(cfg).eval(), "last_hidden_state"), (torch.randn(1, 3, 32, 32),)


def roberta() -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """Position ids from the input ids at run time: an int32 mask, its cumsum, integer arithmetic."""
    from transformers import RobertaConfig, RobertaModel  # optional 'zoo' extra

    cfg = RobertaConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=SEQ + 2,
        **_EAGER,
    )
    ids = torch.randint(2, VOCAB, (1, SEQ))
    ids[0, -3:] = int(cfg.pad_token_id or 1)  # padding: those positions keep the padding index
    return _Out(RobertaModel(cfg, add_pooling_layer=False).eval(), "last_hidden_state"), (ids,)


HF: dict[str, Callable[[], tuple[nn.Module, tuple[Any, ...]]]] = {
    "gpt2": gpt2,
    "bert": bert,
    "llama": llama,
    "vit": vit,
    "hf_resnet": resnet,
    "swin": swin,
    "whisper_encoder": whisper_encoder,
    "wav2vec2": wav2vec2,
    "opt": opt,
    "beit": beit,
    "dinov2": dinov2,
    "roberta": roberta,
}
