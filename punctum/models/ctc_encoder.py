"""CTC speech encoder with an intermediate CTC loss (Nozaki et al.; InterCTC).

Log-mel frames -> 2 strided Conv2d (4x subsampling in time) -> sinusoidal positions ->
n_layers Transformer (pre-LN) or Conformer blocks -> Linear to the vocabulary (blank = 0).
An intermediate CTC head reads the output of block `inter_layer` (default n_layers // 2)
through the shared output projection, so that its targets can be the unpunctuated text
(the paper's method), the punctuated text, or nothing:

    L = lambda_ctc * CTC(final, punctuated) + lambda_inter * CTC(intermediate, inter targets)

Paper size: 12 layers, d_model 256, 4 heads, d_ff 2048 (~18M parameters with a 2000-piece
vocabulary); CPU recipes use fewer, narrower layers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from punctum.models.transformer_tagger import EncoderBlock, SelfAttention
from punctum.models.validation import is_number, require

INTER_TARGETS = ("unpunctuated", "punctuated", "none")


@dataclass(frozen=True)
class CtcEncoderConfig:
    vocab_size: int  # CTC outputs, blank (id 0) included
    n_mels: int = 80
    d_model: int = 256
    n_heads: int = 4
    n_layers: int = 12
    d_ff: int = 2048
    dropout: float = 0.1
    subsample_channels: int = 256
    block: str = "transformer"  # or "conformer"
    conv_kernel: int = 15  # conformer depthwise convolution
    inter_layer: int = 0  # 0 = n_layers // 2; the block whose output feeds the inter head
    inter_targets: str = "unpunctuated"  # what the intermediate CTC predicts
    lambda_ctc: float = 0.5
    lambda_inter: float = 0.5
    max_frames: int = 20000  # after subsampling (positions table)

    def __post_init__(self) -> None:
        for name in ("vocab_size", "n_mels", "d_model", "n_heads", "n_layers", "d_ff",
                     "subsample_channels", "conv_kernel", "max_frames"):
            value = getattr(self, name)
            require(isinstance(value, int) and value >= 1, name, value, "an int >= 1")
        require(self.vocab_size >= 2, "vocab_size", self.vocab_size, ">= 2 (blank + 1)")
        require(self.d_model % self.n_heads == 0, "n_heads", self.n_heads,
                f"a divisor of d_model={self.d_model}")
        require(self.block in ("transformer", "conformer"), "block", self.block,
                "'transformer' or 'conformer'")
        require(self.conv_kernel % 2 == 1, "conv_kernel", self.conv_kernel, "odd")
        require(0 <= self.inter_layer < self.n_layers, "inter_layer", self.inter_layer,
                f"in [0, {self.n_layers}) (0 = n_layers // 2)")
        require(self.inter_targets in INTER_TARGETS, "inter_targets", self.inter_targets,
                f"one of {INTER_TARGETS}")
        require(is_number(self.dropout) and 0.0 <= self.dropout < 1.0, "dropout", self.dropout,
                "a number in [0, 1)")
        require(all(is_number(v) and v >= 0 for v in (self.lambda_ctc, self.lambda_inter)),
                "lambda_ctc/lambda_inter",
                (self.lambda_ctc, self.lambda_inter), "finite numbers >= 0")

    @property
    def inter_index(self) -> int:
        """1-based index of the block feeding the intermediate head (paper: floor(l/2))."""
        return self.inter_layer or max(1, self.n_layers // 2)

    @property
    def uses_inter(self) -> bool:
        return self.inter_targets != "none" and self.lambda_inter > 0


def subsampled_lengths(lengths: Tensor) -> Tensor:
    """Frames after two Conv2d(kernel 3, stride 2, no padding): (B,) int64 -> (B,) int64."""
    for _ in range(2):
        lengths = torch.div(lengths - 3, 2, rounding_mode="floor") + 1
    return lengths.clamp_min(0)


class Subsampling(nn.Module):
    """(B, T, n_mels) -> (B, T', d_model), T' = ((T - 3) // 2 + 1 - 3) // 2 + 1 (about T / 4)."""

    def __init__(self, c: CtcEncoderConfig):
        super().__init__()
        ch = c.subsample_channels
        self.conv = nn.Sequential(nn.Conv2d(1, ch, 3, stride=2), nn.ReLU(),
                                  nn.Conv2d(ch, ch, 3, stride=2), nn.ReLU())
        freq = ((c.n_mels - 3) // 2 + 1 - 3) // 2 + 1
        self.out = nn.Linear(ch * freq, c.d_model)

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv(x[:, None])  # (B, ch, T', F')
        B, C, T, Fq = x.shape
        return self.out(x.transpose(1, 2).reshape(B, T, C * Fq))


def sinusoids(length: int | Tensor, channels: int, device=None) -> Tensor:
    """(length, channels) sinusoidal position table (Vaswani et al.): sin in even columns,
    cos in odd ones. Computed from `length`, so an exported graph builds it for the input's
    length instead of storing a max_frames table (15 MB at d_model 192)."""
    position = torch.arange(length, dtype=torch.float32, device=device)[:, None]
    scale = torch.exp(torch.arange(0, channels, 2, dtype=torch.float32, device=device)
                      * (-math.log(10000.0) / channels))
    angles = position * scale  # (length, ceil(channels / 2))
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(1)[:, :channels]


class ConformerBlock(nn.Module):
    """Macaron FFN/2 -> MHSA -> convolution module -> FFN/2 -> LayerNorm (Gulati et al.)."""

    def __init__(self, c: CtcEncoderConfig):
        super().__init__()
        self.ff1, self.ff2 = self._feed_forward(c), self._feed_forward(c)
        self.attn_norm = nn.LayerNorm(c.d_model)
        self.attn = SelfAttention(c.d_model, c.n_heads, c.dropout)
        self.conv_norm = nn.LayerNorm(c.d_model)
        self.pointwise_in = nn.Conv1d(c.d_model, 2 * c.d_model, 1)
        self.depthwise = nn.Conv1d(c.d_model, c.d_model, c.conv_kernel,
                                   padding=c.conv_kernel // 2, groups=c.d_model)
        self.depth_norm = nn.LayerNorm(c.d_model)  # LayerNorm: padding-safe, unlike BatchNorm
        self.pointwise_out = nn.Conv1d(c.d_model, c.d_model, 1)
        self.final_norm = nn.LayerNorm(c.d_model)
        self.dropout = nn.Dropout(c.dropout)

    @staticmethod
    def _feed_forward(c: CtcEncoderConfig) -> nn.Sequential:
        return nn.Sequential(nn.LayerNorm(c.d_model), nn.Linear(c.d_model, c.d_ff), nn.SiLU(),
                             nn.Dropout(c.dropout), nn.Linear(c.d_ff, c.d_model))

    def forward(self, x: Tensor, keep: Tensor) -> Tensor:
        """(B, T, C) float, (B, 1, 1, T) bool keep -> (B, T, C) float."""
        x = x + 0.5 * self.dropout(self.ff1(x))
        x = x + self.dropout(self.attn(self.attn_norm(x), keep))
        pad = ~keep[:, 0, 0, None, :]  # (B, 1, T): padded frames must not leak into the conv
        y = F.glu(self.pointwise_in(self.conv_norm(x).transpose(1, 2)), dim=1)
        y = self.depthwise(y.masked_fill(pad, 0.0)).transpose(1, 2)
        y = self.pointwise_out(F.silu(self.depth_norm(y)).transpose(1, 2)).transpose(1, 2)
        x = x + self.dropout(y)
        x = x + 0.5 * self.dropout(self.ff2(x))
        return self.final_norm(x)


class CtcEncoder(nn.Module):
    """Speech frames to CTC log-probabilities, with an intermediate CTC output."""

    def __init__(self, config: CtcEncoderConfig):
        super().__init__()
        c = config
        self.config = c
        self.subsample = Subsampling(c)
        self.dropout = nn.Dropout(c.dropout)
        block = ConformerBlock if c.block == "conformer" else EncoderBlock
        self.blocks = nn.ModuleList(block(c) for _ in range(c.n_layers))
        self.norm = nn.LayerNorm(c.d_model)
        self.inter_norm = nn.LayerNorm(c.d_model)
        self.head = nn.Linear(c.d_model, c.vocab_size)  # shared by the final and inter CTC

    def forward(self, feats: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor | None, Tensor]:
        """CTC log-probabilities.

        Args:
            feats: (B, T, n_mels) float log-mel frames, right-padded.
            lengths: (B,) int64 valid frames per row.
        Returns:
            log_probs (B, T', V) float32, inter_log_probs (B, T', V) float32 or None (when
            the config uses no intermediate loss), out_lengths (B,) int64 with T' ~ T / 4.
        """
        x = self.subsample(feats)  # (B, T', C)
        out_lengths = subsampled_lengths(lengths).clamp_max(x.shape[1])
        if x.shape[1] > self.config.max_frames:
            raise ValueError(f"{x.shape[1]} frames after subsampling; max_frames is "
                             f"{self.config.max_frames} (cut long audio into chunks)")
        positions = sinusoids(x.shape[1], self.config.d_model, x.device).to(x.dtype)
        x = self.dropout(x * math.sqrt(self.config.d_model) + positions)
        keep = (torch.arange(x.shape[1], device=x.device)[None] < out_lengths[:, None])
        keep = keep[:, None, None, :]
        inter = None
        for index, block in enumerate(self.blocks, 1):
            x = block(x, keep)
            if index == self.config.inter_index and self.config.uses_inter:
                inter = F.log_softmax(self.head(self.inter_norm(x)).float(), dim=-1)
        log_probs = F.log_softmax(self.head(self.norm(x)).float(), dim=-1)
        return log_probs, inter, out_lengths

    def loss(self, log_probs: Tensor, inter_log_probs: Tensor | None, out_lengths: Tensor,
             targets: Tensor, target_lengths: Tensor, inter_targets: Tensor | None = None,
             inter_target_lengths: Tensor | None = None) -> Tensor:
        """lambda_ctc * CTC(final) + lambda_inter * CTC(intermediate), mean over the batch.

        Args:
            log_probs, inter_log_probs, out_lengths: the outputs of forward.
            targets: (B, S) int64 punctuated token ids (padding ignored), target_lengths (B,).
            inter_targets, inter_target_lengths: the intermediate targets (unpunctuated text
                for the paper's method; the punctuated targets when None).
        Returns:
            () float32.
        """
        c = self.config
        loss = c.lambda_ctc * ctc(log_probs, out_lengths, targets, target_lengths)
        if inter_log_probs is not None:
            if inter_targets is None:
                inter_targets, inter_target_lengths = targets, target_lengths
            loss = loss + c.lambda_inter * ctc(inter_log_probs, out_lengths, inter_targets,
                                               inter_target_lengths)
        return loss


def ctc(log_probs: Tensor, lengths: Tensor, targets: Tensor, target_lengths: Tensor) -> Tensor:
    """Mean CTC loss per utterance (divided by target length, as F.ctc_loss 'mean'), blank 0.

    Utterances too short for their targets contribute 0 (zero_infinity) instead of inf.
    """
    with torch.autocast(device_type=log_probs.device.type, enabled=False):
        return F.ctc_loss(log_probs.float().transpose(0, 1), targets, lengths, target_lengths,
                          blank=0, reduction="mean", zero_infinity=True)
