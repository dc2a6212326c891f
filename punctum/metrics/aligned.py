"""Scores across a word alignment, and the mid-utterance vs utterance-final split."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from punctum.metrics.alignment import Alignment, align_words
from punctum.metrics.classes import (
    ClassScores,
    _check_labels,
    _confusion_from_ids,
    _encode_pair,
    score_labels,
)


@dataclass(frozen=True)
class AlignedScores:
    """Label scores over a word alignment, with the alignment itself."""

    scores: ClassScores
    alignment: Alignment

    @property
    def wer(self) -> float:
        """Word error rate of the alignment (see Alignment.wer)."""
        return self.alignment.wer

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict: scores, wer and the alignment's edit counts (not its indices)."""
        alignment = self.alignment
        return {
            "scores": self.scores.to_dict(),
            "wer": self.wer,
            "n_match": alignment.n_match,
            "n_sub": alignment.n_sub,
            "n_del": alignment.n_del,
            "n_ins": alignment.n_ins,
        }


def project_labels(
    alignment: Alignment,
    ref_labels: Sequence[str],
    hyp_labels: Sequence[str],
    negative: str,
) -> tuple[list[str], list[str]]:
    """One (reference, hypothesis) label pair per alignment operation.

    A match or substitution pairs the two words' labels. An inserted hypothesis word gives
    (negative, hyp label), so a mark on it is a false positive; a deleted reference word gives
    (ref label, negative), a false negative.

    Args:
        alignment: from align_words, with K operations.
        ref_labels: (N_ref,) labels of the reference words.
        hyp_labels: (N_hyp,) labels of the hypothesis words.
        negative: the null label used for the missing side.

    Returns:
        Two lists of K labels: reference side and hypothesis side.
    """
    if isinstance(ref_labels, str) or isinstance(hyp_labels, str):
        raise TypeError("ref_labels and hyp_labels must be sequences of labels, not strings")
    if len(ref_labels) != alignment.n_ref:
        raise ValueError(
            f"ref_labels has {len(ref_labels)} labels but the alignment has "
            f"{alignment.n_ref} reference words"
        )
    if len(hyp_labels) != alignment.n_hyp:
        raise ValueError(
            f"hyp_labels has {len(hyp_labels)} labels but the alignment has "
            f"{alignment.n_hyp} hypothesis words"
        )
    # The appended negative sits at index -1, which is exactly what a gap index selects.
    ref_table = np.array([*ref_labels, negative], dtype=object)
    hyp_table = np.array([*hyp_labels, negative], dtype=object)
    return ref_table[alignment.ref_index].tolist(), hyp_table[alignment.hyp_index].tolist()


def score_aligned(
    ref_words: Sequence[str],
    ref_labels: Sequence[str],
    hyp_words: Sequence[str],
    hyp_labels: Sequence[str],
    labels: Sequence[str],
    negative: str,
) -> AlignedScores:
    """Align hypothesis words to reference words, then score labels over the alignment.

    Args:
        ref_words, ref_labels: (N,) reference words and their labels.
        hyp_words, hyp_labels: (M,) hypothesis words and their labels.
        labels: (L,) label inventory, including `negative`.
        negative: the null label.

    Returns:
        AlignedScores (scores over K alignment operations, the alignment, wer).
    """
    labels = _check_labels(labels, negative)
    sides = (("ref", ref_words, ref_labels), ("hyp", hyp_words, hyp_labels))
    for side, words, word_labels in sides:
        if len(words) != len(word_labels):
            raise ValueError(
                f"{side}_words and {side}_labels must have the same length, got "
                f"{len(words)} and {len(word_labels)}"
            )
    alignment = align_words(ref_words, hyp_words)
    ref_seq, hyp_seq = project_labels(alignment, ref_labels, hyp_labels, negative)
    return AlignedScores(score_labels(ref_seq, hyp_seq, labels, negative), alignment)


@dataclass(frozen=True)
class MidFinalScores:
    """Scores split by position: words inside an utterance vs the last word of an utterance."""

    mid: ClassScores
    final: ClassScores

    @property
    def weighted_f1(self) -> float:
        """Support-weighted mean of mid.overall.f1 and final.overall.f1 (0.0 without support).

        Support is the number of reference non-negative labels in each part. This is not the
        overall F1 of the pooled positions, which mixes the counts before dividing.
        """
        mid, final = self.mid.overall, self.final.overall
        total = mid.support + final.support
        return (mid.f1 * mid.support + final.f1 * final.support) / total if total else 0.0

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict: mid, final (as ClassScores.to_dict) and weighted_f1."""
        return {
            "mid": self.mid.to_dict(),
            "final": self.final.to_dict(),
            "weighted_f1": self.weighted_f1,
        }


def score_mid_final(
    ref: Sequence[str],
    hyp: Sequence[str],
    is_final: Sequence[bool],
    labels: Sequence[str],
    negative: str,
) -> MidFinalScores:
    """Score mid-utterance and utterance-final positions separately (Jakubiak et al., Table 4).

    Args:
        ref: (N,) reference labels.
        hyp: (N,) hypothesis labels.
        is_final: (N,) bool, True at the last word of each utterance.
        labels: (L,) label inventory, including `negative`.
        negative: the null label.

    Returns:
        MidFinalScores with two (L, L) confusion matrices and weighted_f1.
    """
    labels = _check_labels(labels, negative)
    ref_ids, hyp_ids = _encode_pair(ref, hyp, labels)
    final = _bool_mask(is_final, ref_ids.size, "is_final")
    n_labels = len(labels)
    mid_scores = _confusion_from_ids(ref_ids[~final], hyp_ids[~final], n_labels)
    final_scores = _confusion_from_ids(ref_ids[final], hyp_ids[final], n_labels)
    return MidFinalScores(
        ClassScores(labels, negative, mid_scores), ClassScores(labels, negative, final_scores)
    )


def _bool_mask(values: Sequence[bool], size: int, name: str) -> np.ndarray:
    """(N,) bools, or 0/1 integers, -> (N,) bool array; ValueError otherwise."""
    mask = np.asarray(values)
    if mask.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got {mask.shape}")
    if mask.dtype != bool:
        if size and (mask.dtype.kind not in "iu" or not np.isin(mask, (0, 1)).all()):
            raise ValueError(f"{name} must hold booleans, got dtype {mask.dtype}")
        mask = mask.astype(bool)
    return mask
