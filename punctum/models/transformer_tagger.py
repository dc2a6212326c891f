"""Transformer encoder tagger for punctuation + casing, from scratch or from a BERT-like encoder.

From scratch: token + learned position embeddings, pre-LN Transformer blocks and two Linear
heads. From a pretrained encoder: `TransformerTagger.from_pretrained(folder_or_hub_id, ...)`
loads it through `transformers`; the config keeps the encoder's own config (`encoder_config`),
so `TransformerTagger(config)` rebuilds the same architecture later without the pretrained
folder, ready for a state dict. `transformers` is imported only where it is needed.
"""

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from punctum.models.losses import TaggingLoss
from punctum.models.validation import is_number, require

# Encoder config keys left out of encoder_config: the label maps describe a classification head
# and would not survive a JSON round trip (int keys become strings); a stored dtype would make
# AutoModel.from_config build a bf16/fp16 encoder, while training decides precision by autocast.
_DROPPED_KEYS = ("id2label", "label2id", "dtype", "torch_dtype")


@dataclass(frozen=True)
class TransformerTaggerConfig:
    vocab_size: int
    n_punct: int
    n_case: int
    pad_id: int = 0
    max_len: int = 512
    n_layers: int = 6  # n_layers, n_heads, d_ff describe the scratch encoder only
    d_model: int = 256
    n_heads: int = 4
    d_ff: int = 1024
    dropout: float = 0.1  # scratch encoder and heads; a pretrained encoder keeps its own
    punct_loss_weight: float = 0.7
    pretrained: str | None = None  # folder or hub id the encoder weights came from (a record)
    encoder_config: dict | None = None  # transformers config.to_dict(); None = scratch encoder

    def __post_init__(self):
        positive = ["vocab_size", "n_punct", "n_case", "max_len", "n_layers", "d_model"]
        for name in positive + ["n_heads", "d_ff"]:
            value = getattr(self, name)
            require(isinstance(value, int) and value >= 1, name, value, "an int >= 1")
        require(
            self.d_model % self.n_heads == 0,
            "n_heads",
            self.n_heads,
            f"a divisor of d_model={self.d_model}",
        )
        require(
            isinstance(self.pad_id, int) and 0 <= self.pad_id < self.vocab_size,
            "pad_id",
            self.pad_id,
            f"an int in [0, {self.vocab_size})",
        )
        require(is_number(self.dropout) and 0.0 <= self.dropout < 1.0, "dropout", self.dropout,
                "a number in [0, 1)")
        require(is_number(self.punct_loss_weight) and self.punct_loss_weight >= 0.0,
                "punct_loss_weight", self.punct_loss_weight, "a finite number >= 0")
        if self.encoder_config is None:
            require(
                self.pretrained is None,
                "encoder_config",
                None,
                "set when pretrained is set (use TransformerTaggerConfig.from_pretrained)",
            )
            return
        enc = self.encoder_config
        require(
            isinstance(enc, dict) and "model_type" in enc,
            "encoder_config",
            type(enc),
            "a transformers config dict with a model_type",
        )
        for field, key in [("vocab_size", "vocab_size"), ("d_model", "hidden_size")]:
            if key in enc:
                require(
                    getattr(self, field) == enc[key],
                    field,
                    getattr(self, field),
                    f"encoder_config[{key!r}] = {enc[key]}",
                )

    @classmethod
    def from_pretrained(
        cls, path_or_id: str, n_punct: int, n_case: int, **fields
    ) -> "TransformerTaggerConfig":
        """Config for a tagger on the encoder at path_or_id (a local folder or a hub id).

        Reads only the encoder's config; vocab_size, d_model, n_layers, n_heads, d_ff, max_len
        and pad_id come from it unless given in fields.
        """
        from transformers import AutoConfig

        enc = AutoConfig.from_pretrained(path_or_id)
        encoder_config = {k: v for k, v in enc.to_dict().items() if k not in _DROPPED_KEYS}
        pad_id = enc.pad_token_id if getattr(enc, "pad_token_id", None) is not None else 0
        derived = dict(
            vocab_size=enc.vocab_size,
            d_model=enc.hidden_size,
            n_layers=enc.num_hidden_layers,
            n_heads=enc.num_attention_heads,
            d_ff=getattr(enc, "intermediate_size", 4 * enc.hidden_size),
            max_len=getattr(enc, "max_position_embeddings", 512),
            pad_id=pad_id,
        )
        return cls(
            n_punct=n_punct,
            n_case=n_case,
            pretrained=path_or_id,
            encoder_config=encoder_config,
            **{**derived, **fields},
        )


def _build_hf_encoder(encoder_config: dict) -> nn.Module:
    """A randomly initialised fp32 transformers encoder, without pooler, from a config dict."""
    from transformers import AutoConfig, AutoModel

    kept = {k: v for k, v in encoder_config.items() if k not in _DROPPED_KEYS}
    encoder = AutoModel.from_config(AutoConfig.for_model(**kept))
    _drop_pooler(encoder)
    return encoder


def _drop_pooler(encoder: nn.Module) -> None:
    # The [CLS] pooler is unused by a tagger; keeping it would leave parameters without gradients.
    if getattr(encoder, "pooler", None) is not None:
        encoder.pooler = None


class SelfAttention(nn.Module):
    """Multi-head self-attention over (B, T, C) with a key mask (scaled_dot_product_attention)."""

    def __init__(self, d_model: int, n_heads: int, dropout: float):
        super().__init__()
        self.n_heads = n_heads
        self.dropout = dropout
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)

    def forward(self, x: Tensor, keep: Tensor) -> Tensor:
        """(B, T, C) float, (B, 1, 1, T) bool keep (True = attend to key) -> (B, T, C) float."""
        B, T, C = x.shape  # tuple unpacking keeps B and T dynamic in the traced ONNX graph
        q, k, v = self.qkv(x).split(C, dim=2)
        q, k, v = (z.view(B, T, self.n_heads, -1).transpose(1, 2) for z in (q, k, v))
        dropout = self.dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, dropout_p=dropout)
        return self.out(y.transpose(1, 2).reshape(B, T, C))


class EncoderBlock(nn.Module):
    """Pre-LN Transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, c: TransformerTaggerConfig):
        super().__init__()
        self.attn_norm = nn.LayerNorm(c.d_model)
        self.attn = SelfAttention(c.d_model, c.n_heads, c.dropout)
        self.mlp_norm = nn.LayerNorm(c.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(c.d_model, c.d_ff),
            nn.GELU(),
            nn.Dropout(c.dropout),
            nn.Linear(c.d_ff, c.d_model),
        )
        self.dropout = nn.Dropout(c.dropout)

    def forward(self, x: Tensor, keep: Tensor) -> Tensor:
        """(B, T, C) float, (B, 1, 1, T) bool keep -> (B, T, C) float."""
        x = x + self.dropout(self.attn(self.attn_norm(x), keep))
        return x + self.dropout(self.mlp(self.mlp_norm(x)))


class ScratchEncoder(nn.Module):
    """Token + learned position embeddings, pre-LN blocks and a final LayerNorm.

    Equivalent to nn.TransformerEncoder(norm_first=True) with a key padding mask, written out
    because nn.MultiheadAttention bakes the traced sequence length into the ONNX graph under
    the TorchScript exporter (pytorch/pytorch#117209), which breaks dynamic time axes.
    """

    def __init__(self, c: TransformerTaggerConfig):
        super().__init__()
        self.embed = nn.Embedding(c.vocab_size, c.d_model, padding_idx=c.pad_id)
        self.position = nn.Embedding(c.max_len, c.d_model)
        self.dropout = nn.Dropout(c.dropout)
        self.blocks = nn.ModuleList(EncoderBlock(c) for _ in range(c.n_layers))
        self.norm = nn.LayerNorm(c.d_model)

    def forward(self, ids: Tensor, valid: Tensor) -> Tensor:
        """(B, T) int64 ids, (B, T) bool valid (False = padding) -> (B, T, d_model) float."""
        positions = torch.arange(ids.shape[1], device=ids.device)
        x = self.dropout(self.embed(ids) + self.position(positions)[None])
        keep = valid[:, None, None, :]  # (B, 1, 1, T): padding is never attended to
        for block in self.blocks:
            x = block(x, keep)
        return self.norm(x)


def _init_weights(module: nn.Module) -> None:
    # BERT / nanoGPT initialisation: N(0, 0.02) weights, zero biases, zero padding embedding.
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.normal_(module.weight, std=0.02)
    if isinstance(module, nn.Linear):
        nn.init.zeros_(module.bias)
    if isinstance(module, nn.Embedding) and module.padding_idx is not None:
        nn.init.zeros_(module.weight[module.padding_idx])


class TransformerTagger(TaggingLoss, nn.Module):
    """Joint punctuation + casing tagger on a Transformer encoder over subword ids."""

    def __init__(self, config: TransformerTaggerConfig):
        super().__init__()
        c = config
        self.config = c
        if c.encoder_config is None:
            self.encoder = ScratchEncoder(c)
        else:
            self.encoder = _build_hf_encoder(c.encoder_config)
        self.dropout = nn.Dropout(c.dropout)
        self.punct_head = nn.Linear(c.d_model, c.n_punct)
        self.case_head = nn.Linear(c.d_model, c.n_case)
        scratch = [self.encoder] if c.encoder_config is None else []
        for module in scratch + [self.punct_head, self.case_head]:
            module.apply(_init_weights)

    @classmethod
    def from_pretrained(
        cls, path_or_id: str, n_punct: int, n_case: int, **fields
    ) -> "TransformerTagger":
        """A tagger whose encoder weights are loaded from path_or_id; the heads are new."""
        from transformers import AutoModel

        model = cls(TransformerTaggerConfig.from_pretrained(path_or_id, n_punct, n_case, **fields))
        pretrained = AutoModel.from_pretrained(path_or_id)
        _drop_pooler(pretrained)
        model.encoder.load_state_dict(pretrained.state_dict())
        return model

    def forward(self, ids: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor]:
        """Logits at every subword position.

        Args:
            ids: (B, T) int64 subword ids, right-padded, T <= config.max_len.
            lengths: (B,) int64 valid positions per row, each in [1, T].
        Returns:
            punct_logits (B, T, n_punct) float32 and case_logits (B, T, n_case) float32.
            Padded positions are excluded as attention keys, so row i depends only on
            ids[i, :lengths[i]]; positions >= lengths[i] hold finite values to be masked.
        """
        if not torch.jit.is_tracing() and ids.shape[1] > self.config.max_len:
            raise ValueError(f"ids has {ids.shape[1]} positions, max_len is {self.config.max_len}")
        valid = torch.arange(ids.shape[1], device=ids.device)[None, :] < lengths[:, None]
        if self.config.encoder_config is None:
            h = self.encoder(ids, valid)
        else:
            h = self.encoder(input_ids=ids, attention_mask=valid.long()).last_hidden_state
        h = self.dropout(h)  # (B, T, d_model)
        return self.punct_head(h).float(), self.case_head(h).float()

