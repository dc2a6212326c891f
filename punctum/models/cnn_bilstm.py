"""CNN-BiLSTM joint punctuation + casing tagger for on-device streaming ASR.

Embedding -> residual Conv1d blocks -> BiLSTM layers -> one unidirectional LSTM -> two heads.
The punctuation head reads [s_t, s_{t+1}] (a mark after word t depends on what comes next),
the casing head reads [s_{t-1}, s_t]. The default config is the paper's: about 7.4M
parameters with a 5000-piece vocabulary, about 7 MB as int8 ONNX.
"""

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

from punctum.models.losses import TaggingLoss
from punctum.models.validation import is_number, require


@dataclass(frozen=True)
class CnnBiLstmConfig:
    vocab_size: int
    n_punct: int
    n_case: int
    pad_id: int = 0
    embed_dim: int = 100
    conv_channels: int = 100
    n_conv_layers: int = 3
    conv_kernel: int = 3
    bilstm_hidden: int = 384  # per direction
    n_bilstm_layers: int = 2
    lstm_hidden: int = 384
    head_hidden: int = 0  # 0 = each head is a single Linear
    dropout: float = 0.5
    punct_loss_weight: float = 0.7
    pause_buckets: int = 0  # > 0: PauseAware, reads bucketed pauses (punctum.pauses)

    def __post_init__(self):
        positive = ["vocab_size", "n_punct", "n_case", "embed_dim", "conv_channels"]
        positive += ["conv_kernel", "bilstm_hidden", "n_bilstm_layers", "lstm_hidden"]
        for name in positive:
            value = getattr(self, name)
            require(isinstance(value, int) and value >= 1, name, value, "an int >= 1")
        for name in ["n_conv_layers", "head_hidden", "pause_buckets"]:
            value = getattr(self, name)
            require(isinstance(value, int) and value >= 0, name, value, "an int >= 0")
        require(self.conv_kernel % 2 == 1, "conv_kernel", self.conv_kernel, "odd (same padding)")
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


class ConvBlock(nn.Module):
    """Residual x + LayerNorm(ReLU(Conv1d(x))) over (B, T, C); padded positions are zeroed."""

    def __init__(self, channels: int, kernel: int, dropout: float):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel, padding=kernel // 2)
        self.norm = nn.LayerNorm(channels)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        """(B, T, C) float, (B, T, 1) float mask -> (B, T, C) float."""
        h = self.conv(x.transpose(1, 2)).transpose(1, 2)
        x = x + self.dropout(self.norm(F.relu(h)))
        # Zero padding so that the next conv sees the same zeros as at the end of a lone row.
        return x * mask


def _head(n_in: int, n_hidden: int, n_out: int, dropout: float) -> nn.Module:
    if n_hidden == 0:
        return nn.Linear(n_in, n_out)
    return nn.Sequential(
        nn.Linear(n_in, n_hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(n_hidden, n_out)
    )


def _run_packed(lstm: nn.LSTM, x: Tensor, lengths: Tensor) -> Tensor:
    """Run lstm on (B, T, C) right-padded x so that no direction reads padding.

    Returns (B, T, H * directions) float with zeros at positions >= lengths.
    """
    # pack_padded_sequence wants lengths on the CPU, whatever the device of x.
    packed = nn.utils.rnn.pack_padded_sequence(
        x, lengths.cpu(), batch_first=True, enforce_sorted=False
    )
    out, _ = lstm(packed)
    out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
    return out


class CnnBiLstm(TaggingLoss, nn.Module):
    """Joint punctuation + casing tagger (CNN + BiLSTM + LSTM) over subword ids."""

    def __init__(self, config: CnnBiLstmConfig):
        super().__init__()
        c = config
        self.config = c
        self.embed = nn.Embedding(c.vocab_size, c.embed_dim, padding_idx=c.pad_id)
        self.proj = (
            nn.Identity()
            if c.embed_dim == c.conv_channels
            else nn.Linear(c.embed_dim, c.conv_channels)
        )
        # Bucket 0 is "unknown": a zero vector, so untimed input reads the text alone and a
        # text model fine-tuned with pauses starts exactly where it was (all rows zero).
        self.pause_embed = (nn.Embedding(c.pause_buckets + 1, c.conv_channels, padding_idx=0)
                            if c.pause_buckets else None)
        self.convs = nn.ModuleList(
            ConvBlock(c.conv_channels, c.conv_kernel, c.dropout) for _ in range(c.n_conv_layers)
        )
        self.bilstm = nn.LSTM(
            c.conv_channels,
            c.bilstm_hidden,
            num_layers=c.n_bilstm_layers,
            batch_first=True,
            bidirectional=True,
            dropout=c.dropout if c.n_bilstm_layers > 1 else 0.0,
        )
        self.lstm = nn.LSTM(2 * c.bilstm_hidden, c.lstm_hidden, batch_first=True)
        self.dropout = nn.Dropout(c.dropout)
        self.punct_head = _head(2 * c.lstm_hidden, c.head_hidden, c.n_punct, c.dropout)
        self.case_head = _head(2 * c.lstm_hidden, c.head_hidden, c.n_case, c.dropout)
        for module in self.modules():
            if isinstance(module, (nn.Conv1d, nn.Linear)):
                nn.init.kaiming_uniform_(module.weight, nonlinearity="relu")
                nn.init.zeros_(module.bias)
        if self.pause_embed is not None:
            nn.init.zeros_(self.pause_embed.weight)

    def forward(self, ids: Tensor, lengths: Tensor,
                pauses: Tensor | None = None) -> tuple[Tensor, Tensor]:
        """Logits at every subword position.

        Args:
            ids: (B, T) int64 subword ids, right-padded.
            lengths: (B,) int64 valid positions per row, each in [1, T].
            pauses: (B, T) int64 pause bucket after the word labelled at each position
                (0 = unknown / not a label position), for a PauseAware config; ignored
                otherwise.
        Returns:
            punct_logits (B, T, n_punct) float32 and case_logits (B, T, n_case) float32.
            Row i depends only on ids[i, :lengths[i]]; positions >= lengths[i] hold the
            heads' output for zero states (finite, to be masked by the caller).
        """
        T = ids.shape[1]
        mask = (torch.arange(T, device=ids.device)[None, :] < lengths[:, None]).unsqueeze(-1)
        mask = mask.to(self.embed.weight.dtype)  # (B, T, 1)
        x = self.proj(self.dropout(self.embed(ids)))
        if self.pause_embed is not None and pauses is not None:
            x = x + self.pause_embed(pauses)
        x = x * mask
        for block in self.convs:
            x = block(x, mask)
        x = self.dropout(_run_packed(self.bilstm, x, lengths))
        s = _run_packed(self.lstm, x, lengths) * mask  # (B, T, H), zeros past each row's end
        s = self.dropout(s)
        s_next = F.pad(s[:, 1:], (0, 0, 0, 1))  # s_{t+1}; zero at t = T-1 and past the end
        s_prev = F.pad(s[:, :-1], (0, 0, 1, 0))  # s_{t-1}; zero at t = 0
        punct = self.punct_head(torch.cat([s, s_next], dim=-1))
        case = self.case_head(torch.cat([s_prev, s], dim=-1))
        return punct.float(), case.float()

