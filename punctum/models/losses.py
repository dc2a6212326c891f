"""Joint punctuation + casing loss shared by every tagger in punctum.models.

The total follows the on-device CNN-BiLSTM paper, L = L_case + punct_loss_weight * L_punct
(0.7 there). Both terms are cross-entropy computed in fp32 even under bf16 autocast.
`distill_loss` is the same joint loss against a teacher's probabilities (punctum.train.distill).
"""

import torch
import torch.nn.functional as F
from torch import Tensor

IGNORE_INDEX = -100


def weighted_cross_entropy(
    logits: Tensor,
    targets: Tensor,
    weights: Tensor | None = None,
    label_smoothing: float | Tensor = 0.0,
) -> Tensor:
    """Mean cross-entropy over the positions that count, in fp32.

    A position counts when its target is not -100 and its weight is not 0. The result is
    sum(w_i * CE_i) / (number of counting positions), so a weight of 0 removes a position
    exactly as a -100 target would, while a weight alpha < 1 on pseudo-labelled positions
    scales their contribution (Chen et al. 2021) instead of being normalised away.

    Args:
        logits: (B, T, C) float logits, any dtype.
        targets: (B, T) int64 class ids, -100 = ignored.
        weights: optional (B, T) float per-position weights (>= 0).
        label_smoothing: in [0, 1): a float for every position, or a tensor broadcastable
            to (B, T) with one value per position (discriminative label smoothing: beta_1 on
            human labels, beta_2 on pseudo labels). The target is (1 - b) * y + b / C.
    Returns:
        () float32 scalar; 0 (with a graph) when no position counts.
    """
    if weights is not None and weights.shape != targets.shape:
        expected, got = tuple(targets.shape), tuple(weights.shape)
        raise ValueError(f"weights must have the targets' shape {expected}, got {got}")
    # Autocast would run cross_entropy in fp32 anyway; disabling it makes that explicit
    # for the weighting and the division as well.
    with torch.autocast(device_type=logits.device.type, enabled=False):
        flat_logits = logits.float().reshape(-1, logits.shape[-1])
        flat_targets = targets.reshape(-1)
        per_position = _per_position_loss(flat_logits, flat_targets, label_smoothing,
                                          targets.shape)
        counts = flat_targets != IGNORE_INDEX
        if weights is None:
            weighted = per_position
        else:
            flat_weights = weights.reshape(-1).float()
            counts = counts & (flat_weights != 0)
            weighted = per_position * flat_weights
        # where() rather than multiplication keeps a NaN/inf at an ignored position out of the sum.
        total = torch.where(counts, weighted, torch.zeros_like(weighted)).sum()
        return total / counts.sum().clamp_min(1).float()


def _per_position_loss(flat_logits: Tensor, flat_targets: Tensor,
                       label_smoothing: float | Tensor, shape: torch.Size) -> Tensor:
    """(N,) smoothed cross-entropy; 0 at ignored positions."""
    if not isinstance(label_smoothing, Tensor):
        return F.cross_entropy(flat_logits, flat_targets, ignore_index=IGNORE_INDEX,
                               reduction="none", label_smoothing=label_smoothing)
    log_probs = F.log_softmax(flat_logits, dim=-1)
    safe = flat_targets.clamp_min(0)
    nll = -log_probs.gather(1, safe[:, None])[:, 0]
    uniform = -log_probs.mean(dim=-1)
    beta = label_smoothing.float().expand(shape).reshape(-1)
    loss = (1 - beta) * nll + beta * uniform
    return torch.where(flat_targets != IGNORE_INDEX, loss, torch.zeros_like(loss))


def tagging_loss(
    punct_logits: Tensor,
    case_logits: Tensor,
    punct_targets: Tensor,
    case_targets: Tensor,
    punct_weights: Tensor | None = None,
    case_weights: Tensor | None = None,
    label_smoothing: float | Tensor = 0.0,
    punct_loss_weight: float = 0.7,
) -> Tensor:
    """Joint loss L = L_case + punct_loss_weight * L_punct, in fp32.

    Args:
        punct_logits: (B, T, n_punct) float.
        case_logits: (B, T, n_case) float.
        punct_targets, case_targets: (B, T) int64, -100 = ignored position.
        punct_weights, case_weights: optional (B, T) float per-position weights.
        label_smoothing: in [0, 1), applied to both terms; a float or a tensor broadcastable
            to (B, T) (see `weighted_cross_entropy`).
        punct_loss_weight: weight of the punctuation term.
    Returns:
        () float32 scalar.
    """
    # A tensor comes from per-source settings checked where they are read (SourceConfig);
    # checking it here would synchronise with the device on every step.
    if not isinstance(label_smoothing, Tensor) and not 0.0 <= label_smoothing < 1.0:
        raise ValueError(f"label_smoothing must be in [0, 1), got {label_smoothing}")
    punct = weighted_cross_entropy(punct_logits, punct_targets, punct_weights, label_smoothing)
    case = weighted_cross_entropy(case_logits, case_targets, case_weights, label_smoothing)
    return case + punct_loss_weight * punct


class TaggingLoss:
    """Mixin for taggers whose config has `punct_loss_weight`: adds `loss()`."""

    def loss(
        self,
        punct_logits: Tensor,
        case_logits: Tensor,
        punct_targets: Tensor,
        case_targets: Tensor,
        punct_weights: Tensor | None = None,
        case_weights: Tensor | None = None,
        label_smoothing: float | Tensor = 0.0,
    ) -> Tensor:
        """L_case + config.punct_loss_weight * L_punct in fp32; see `tagging_loss`."""
        return tagging_loss(punct_logits, case_logits, punct_targets, case_targets,
                            punct_weights, case_weights, label_smoothing,
                            self.config.punct_loss_weight)


def soft_cross_entropy(logits: Tensor, targets: Tensor) -> Tensor:
    """Mean of -sum(q * log p) over the positions whose target row is not NaN, in fp32.

    Args:
        logits: (B, T, C) float.
        targets: (B, T, C) float probabilities, NaN at positions without a target.
    Returns:
        () float32; 0 (with a graph) when no position has a target.
    """
    with torch.autocast(device_type=logits.device.type, enabled=False):
        has = ~torch.isnan(targets[..., 0])
        log_probs = F.log_softmax(logits.float(), dim=-1)
        safe = torch.nan_to_num(targets.float(), nan=0.0)
        per_position = -(safe * log_probs).sum(dim=-1)
        total = torch.where(has, per_position, torch.zeros_like(per_position)).sum()
        return total / has.sum().clamp_min(1).float()


def distill_loss(punct_logits: Tensor, case_logits: Tensor, soft: Tensor,
                 punct_loss_weight: float) -> Tensor:
    """The joint loss against teacher distributions: L_case + punct_loss_weight * L_punct.

    Args:
        punct_logits: (B, T, n_punct); case_logits: (B, T, n_case).
        soft: (B, T, n_punct + n_case) teacher probabilities, NaN where none.
    """
    n_punct = punct_logits.shape[-1]
    punct = soft_cross_entropy(punct_logits, soft[..., :n_punct])
    case = soft_cross_entropy(case_logits, soft[..., n_punct:])
    return case + punct_loss_weight * punct
