"""Classification scores: P/R/F1 per label and overall from one confusion matrix."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class PRF:
    """Counts for one label (or the micro average) and the scores derived from them."""

    tp: int
    fp: int
    fn: int

    def __post_init__(self) -> None:
        for name in ("tp", "fp", "fn"):
            value = getattr(self, name)
            if not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"PRF.{name} must be a non-negative integer, got {value!r}")
            object.__setattr__(self, name, int(value))

    @property
    def precision(self) -> float:
        """tp / (tp + fp); 0.0 when nothing was predicted."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        """tp / (tp + fn); 0.0 when the reference has no such label."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        """Harmonic mean of precision and recall, computed as 2tp / (2tp + fp + fn)."""
        return _f1(self.tp, self.fp, self.fn)

    @property
    def support(self) -> int:
        """Number of reference occurrences: tp + fn."""
        return self.tp + self.fn

    def to_dict(self) -> dict[str, int | float]:
        """JSON-ready counts and scores (fractions in [0, 1])."""
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "support": self.support,
        }


@dataclass(frozen=True, eq=False)
class ClassScores:
    """A confusion matrix over a label inventory with one negative (null) label.

    Attributes:
        labels: the label inventory, in confusion-matrix order.
        negative: the label that means "no mark" (O, LOWER); never scored itself.
        confusion: (L, L) int64, rows = reference label, columns = hypothesis label. Read-only.
    """

    labels: tuple[str, ...]
    negative: str
    confusion: np.ndarray

    def __post_init__(self) -> None:
        labels = _check_labels(self.labels, self.negative)
        confusion = np.array(self.confusion, dtype=np.int64)
        if confusion.shape != (len(labels), len(labels)):
            raise ValueError(
                f"confusion must have shape {(len(labels), len(labels))} for {len(labels)} "
                f"labels, got {confusion.shape}"
            )
        if (confusion < 0).any():
            raise ValueError("confusion counts must be non-negative")
        confusion.flags.writeable = False
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "confusion", confusion)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClassScores):
            return NotImplemented
        return (
            self.labels == other.labels
            and self.negative == other.negative
            and np.array_equal(self.confusion, other.confusion)
        )

    @property
    def per_label(self) -> dict[str, PRF]:
        """PRF for each non-negative label, in inventory order."""
        tp, fp, fn = _tp_fp_fn(self.confusion)
        return {
            label: PRF(int(tp[k]), int(fp[k]), int(fn[k]))
            for k, label in enumerate(self.labels)
            if label != self.negative
        }

    @property
    def overall(self) -> PRF:
        """Micro average over the non-negative labels (summed tp, fp, fn)."""
        keep = np.array([label != self.negative for label in self.labels])
        tp, fp, fn = _tp_fp_fn(self.confusion)
        return PRF(int(tp[keep].sum()), int(fp[keep].sum()), int(fn[keep].sum()))

    @property
    def n_positions(self) -> int:
        """Number of scored positions (sum of the confusion matrix)."""
        return int(self.confusion.sum())

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict: labels, negative, confusion (nested lists), per_label, overall."""
        return {
            "labels": list(self.labels),
            "negative": self.negative,
            "confusion": self.confusion.tolist(),
            "per_label": {label: prf.to_dict() for label, prf in self.per_label.items()},
            "overall": self.overall.to_dict(),
        }


def confusion_matrix(ref: Sequence[str], hyp: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Count (reference, hypothesis) label pairs.

    Args:
        ref: (N,) reference labels, each one of `labels`.
        hyp: (N,) hypothesis labels for the same positions.
        labels: (L,) label inventory; fixes the row and column order.

    Returns:
        (L, L) int64 matrix, rows = reference, columns = hypothesis.

    Raises:
        ValueError: on a length mismatch or a label that is not in `labels`.
    """
    labels = _check_labels(labels)
    ref_ids, hyp_ids = _encode_pair(ref, hyp, labels)
    return _confusion_from_ids(ref_ids, hyp_ids, len(labels))


def score_labels(
    ref: Sequence[str], hyp: Sequence[str], labels: Sequence[str], negative: str
) -> ClassScores:
    """Score per-word hypothesis labels against reference labels at the same positions.

    Args:
        ref: (N,) reference labels.
        hyp: (N,) hypothesis labels.
        labels: (L,) label inventory, including `negative`.
        negative: the null label (O, LOWER), which is not scored.

    Returns:
        ClassScores with an (L, L) confusion matrix.
    """
    labels = _check_labels(labels, negative)
    return ClassScores(labels, negative, confusion_matrix(ref, hyp, labels))


def format_table(scores: ClassScores, title: str = "") -> str:
    """Plain-text table as in the papers: label, P, R, F1 (x100, one decimal) and support.

    The last row, "Overall", is the micro average over the non-negative labels.
    """
    rows = [(label, prf) for label, prf in scores.per_label.items()]
    rows.append(("Overall", scores.overall))
    width = max(len("Label"), *(len(label) for label, _ in rows))
    lines = [title] if title else []
    lines.append(f"{'Label':<{width}}  {'P':>6}  {'R':>6}  {'F1':>6}  {'Support':>8}")
    for label, prf in rows:
        lines.append(
            f"{label:<{width}}  {100 * prf.precision:6.1f}  {100 * prf.recall:6.1f}  "
            f"{100 * prf.f1:6.1f}  {prf.support:8d}"
        )
    return "\n".join(lines)


def _f1(tp: int, fp: int, fn: int) -> float:
    """F1 from counts; equals 2PR / (P + R) and is 0.0 when tp is 0."""
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def _tp_fp_fn(confusion: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(L, L) confusion -> three (L,) int64 arrays tp, fp, fn."""
    tp = np.diag(confusion)
    return tp, confusion.sum(axis=0) - tp, confusion.sum(axis=1) - tp


def _check_labels(labels: Sequence[str], negative: str | None = None) -> tuple[str, ...]:
    """Validate a label inventory (non-empty, unique strings, containing `negative`)."""
    if isinstance(labels, str):
        raise TypeError(f"labels must be a sequence of strings, not the string {labels!r}")
    labels = tuple(labels)
    if not labels:
        raise ValueError("labels must not be empty")
    for label in labels:
        if not isinstance(label, str):
            raise TypeError(f"labels must be strings, got {label!r} ({type(label).__name__})")
    if len(set(labels)) != len(labels):
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        raise ValueError(f"labels must be unique, got duplicates {duplicates}")
    if negative is not None and negative not in labels:
        raise ValueError(f"negative label {negative!r} is not in labels {list(labels)}")
    return labels


def _encode(seq: Sequence[str], index: dict[str, int], name: str) -> np.ndarray:
    """Labels -> (N,) int64 ids; ValueError naming the first unknown label and its position."""
    if isinstance(seq, str):
        raise TypeError(f"{name} must be a sequence of labels, not the string {seq!r}")
    ids = np.fromiter((index.get(label, -1) for label in seq), dtype=np.int64, count=len(seq))
    unknown = np.flatnonzero(ids < 0)
    if unknown.size:
        position = int(unknown[0])
        raise ValueError(f"{name}[{position}] = {seq[position]!r} is not in labels {list(index)}")
    return ids


def _encode_pair(
    ref: Sequence[str], hyp: Sequence[str], labels: tuple[str, ...], hyp_name: str = "hyp"
) -> tuple[np.ndarray, np.ndarray]:
    """Check equal lengths and encode both label sequences to (N,) int64 ids."""
    if len(ref) != len(hyp):
        raise ValueError(
            f"ref and {hyp_name} must have the same length, got {len(ref)} and {len(hyp)}"
        )
    index = {label: k for k, label in enumerate(labels)}
    return _encode(ref, index, "ref"), _encode(hyp, index, hyp_name)


def _confusion_from_ids(ref_ids: np.ndarray, hyp_ids: np.ndarray, n_labels: int) -> np.ndarray:
    """(N,) and (N,) ids in [0, L) -> (L, L) int64 confusion matrix."""
    flat = np.bincount(ref_ids * n_labels + hyp_ids, minlength=n_labels * n_labels)
    return flat.astype(np.int64).reshape(n_labels, n_labels)
