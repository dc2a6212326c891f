"""Scoring for punctuation and casing restoration: P/R/F1, word alignment, WER/CER, bootstrap.

Conventions follow IWSLT2011 and the papers punctum compares against. Every word carries one
label (for punctuation e.g. O/COMMA/PERIOD/QUESTION/EXCLAMATION with O the negative class; for
casing LOWER/CAP/UPPER/MIX with LOWER the negative class). All scores derive from one confusion
matrix C (rows = reference, columns = hypothesis): for each non-negative label m,
tp[m] = C[m, m], fp[m] = column sum - C[m, m], fn[m] = row sum - C[m, m]. "Overall" is the micro
average over the non-negative labels. A COMMA predicted as PERIOD is therefore an fp for PERIOD
and an fn for COMMA. Precision, recall and F1 are 0.0 when their denominator is 0. Values are
fractions in [0, 1]; callers multiply by 100 for display.

When the hypothesis words differ from the reference (ASR output), `align_words` finds a
minimum-edit word alignment and `project_labels` turns it into one (ref, hyp) label pair per
alignment operation, so that a mark on an inserted word is a false positive and a mark on a
deleted word is a false negative. docs/EVALUATION.md gives worked examples.

This module depends on numpy and the standard library only.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections import deque
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass

import numpy as np

__all__ = [
    "EXACT_ALIGN_CELLS",
    "EXACT_CER_CELLS",
    "MIDDLE_SPLIT_CELLS",
    "PRF",
    "AlignedScores",
    "Alignment",
    "BootstrapResult",
    "ClassScores",
    "MidFinalScores",
    "align_words",
    "bootstrap_unit_counts",
    "char_error_rate",
    "confusion_matrix",
    "format_table",
    "paired_bootstrap",
    "project_labels",
    "score_aligned",
    "score_labels",
    "score_mid_final",
    "sentence_units",
    "unit_counts",
    "word_error_rate",
]

logger = logging.getLogger(__name__)

# A word segment with at most this many DP cells (len(ref) * len(hyp)) is aligned exactly;
# larger segments are first split at anchor words (patience diff).
EXACT_ALIGN_CELLS = 1_000_000
# A large segment with no anchor runs is split exactly (Hirschberg) up to this many cells.
MIDDLE_SPLIT_CELLS = 100_000_000
# char_error_rate runs one exact character DP when len(ref_text) * len(hyp_text) is at most this.
EXACT_CER_CELLS = 250_000_000
# Matched words kept on each side of an unmatched stretch when CER is computed by windows.
_CER_CONTEXT_WORDS = 2
# Run lengths (in words) tried for anchors, and the multiplier of the run hash.
_ANCHOR_RUN_LENGTHS = (1, 2, 4, 8, 16, 32)
_HASH_BASE = np.uint64(0x9E3779B97F4A7C15)
# Bootstrap draws are made in chunks of about this many (sample, unit) cells to bound memory.
_BOOTSTRAP_CHUNK_CELLS = 2_000_000

# Piece kinds produced while splitting an alignment segment.
_RUN = 0  # (kind, i, j, length): ref[i:i+length] matches hyp[j:j+length]
_PAIRS = 1  # (kind, ref_indices, hyp_indices): a solved stretch
_SEGMENT = 2  # (kind, i0, i1, j0, j1): still to align


# ---------------------------------------------------------------------------------------------
# Classification scores
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Word alignment
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Alignment:
    """A word alignment: one entry per edit operation, in reading order.

    Attributes:
        ref_index: (K,) int64 reference word index per operation, -1 for an inserted hyp word.
        hyp_index: (K,) int64 hypothesis word index per operation, -1 for a deleted ref word.
        n_match: operations pairing two equal words.
        n_sub: operations pairing two different words (substitutions).
        n_del: reference words with no hypothesis word (deletions).
        n_ins: hypothesis words with no reference word (insertions).
    """

    ref_index: np.ndarray
    hyp_index: np.ndarray
    n_match: int
    n_sub: int
    n_del: int
    n_ins: int

    def __post_init__(self) -> None:
        ref_index = np.array(self.ref_index, dtype=np.int64).reshape(-1)
        hyp_index = np.array(self.hyp_index, dtype=np.int64).reshape(-1)
        if ref_index.shape != hyp_index.shape:
            raise ValueError(
                f"ref_index and hyp_index must have equal length, got {ref_index.size} "
                f"and {hyp_index.size}"
            )
        if int((hyp_index < 0).sum()) != self.n_del or int((ref_index < 0).sum()) != self.n_ins:
            raise ValueError(
                "n_del and n_ins must equal the number of -1 entries in hyp_index and ref_index"
            )
        if self.n_match + self.n_sub + self.n_del + self.n_ins != ref_index.size:
            raise ValueError("n_match + n_sub + n_del + n_ins must equal the alignment length")
        for array in (ref_index, hyp_index):
            array.flags.writeable = False
        object.__setattr__(self, "ref_index", ref_index)
        object.__setattr__(self, "hyp_index", hyp_index)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Alignment):
            return NotImplemented
        return (
            (self.n_match, self.n_sub, self.n_del, self.n_ins)
            == (other.n_match, other.n_sub, other.n_del, other.n_ins)
            and np.array_equal(self.ref_index, other.ref_index)
            and np.array_equal(self.hyp_index, other.hyp_index)
        )

    def __len__(self) -> int:
        return int(self.ref_index.size)

    @property
    def n_ref(self) -> int:
        """Number of reference words."""
        return self.n_match + self.n_sub + self.n_del

    @property
    def n_hyp(self) -> int:
        """Number of hypothesis words."""
        return self.n_match + self.n_sub + self.n_ins

    @property
    def n_errors(self) -> int:
        """Word edit distance S + D + I."""
        return self.n_sub + self.n_del + self.n_ins

    @property
    def wer(self) -> float:
        """(S + D + I) / max(N_ref, 1).

        0.0 when both sides are empty. With an empty reference and a non-empty hypothesis the
        denominator is 1, so the value is the number of inserted words (finite, JSON-safe).
        """
        return self.n_errors / max(self.n_ref, 1)


def align_words(ref_words: Sequence[str], hyp_words: Sequence[str]) -> Alignment:
    """Minimum-edit (unit cost Levenshtein) alignment of two word sequences.

    Exact whenever, after stripping the common prefix and suffix, len(ref) * len(hyp) is at most
    EXACT_ALIGN_CELLS. Longer documents are split at anchors: words (or, for repetitive text,
    runs of up to 32 words) occurring once in both sides of a segment, kept when they form the
    longest increasing chain (patience diff). A segment without such runs is split exactly
    (Hirschberg) up to MIDDLE_SPLIT_CELLS, and beyond that at the k-th occurrences of shared
    words. Only the small gaps between anchors get the exact DP, so the cost is near-linear;
    the edit count is minimal within every gap and, for ASR-like error rates, equal or very
    close to the global minimum. On ties the alignment prefers a substitution over an insertion
    or deletion.

    Args:
        ref_words: (N,) reference words.
        hyp_words: (M,) hypothesis words.

    Returns:
        Alignment with (K,) index arrays, max(N, M) <= K <= N + M.
    """
    ref_ids, hyp_ids = _word_ids(ref_words, hyp_words)
    ref_index, hyp_index = _align_ids(ref_ids, hyp_ids)
    return _make_alignment(ref_ids, hyp_ids, ref_index, hyp_index)


def align_segments(ref_segments: Sequence[Sequence[str]],
                   hyp_segments: Sequence[Sequence[str]]) -> Alignment:
    """Align paired segments (e.g. utterances) one by one and join the alignments.

    With known segment boundaries nothing can be matched across segments, so the result is
    exact whenever each pair is (utterance-sized pairs always are), whatever the error rate;
    `align_words` on the joined text relies on anchors that are only dependable at ASR-like
    error rates. Indices refer to the concatenated words.

    Args:
        ref_segments: S sequences of reference words.
        hyp_segments: S sequences of hypothesis words (empty ones allowed).

    Returns:
        Alignment over sum(len(r)) reference and sum(len(h)) hypothesis words.
    """
    if len(ref_segments) != len(hyp_segments):
        raise ValueError(f"{len(ref_segments)} reference segments but "
                         f"{len(hyp_segments)} hypothesis segments")
    parts, ref_offset, hyp_offset = [], 0, 0
    totals = np.zeros(4, dtype=np.int64)
    for ref_words, hyp_words in zip(ref_segments, hyp_segments):
        a = align_words(ref_words, hyp_words)
        parts.append((np.where(a.ref_index >= 0, a.ref_index + ref_offset, -1),
                      np.where(a.hyp_index >= 0, a.hyp_index + hyp_offset, -1)))
        totals += (a.n_match, a.n_sub, a.n_del, a.n_ins)
        ref_offset, hyp_offset = ref_offset + len(ref_words), hyp_offset + len(hyp_words)
    empty = np.zeros(0, dtype=np.int64)
    ref_index = np.concatenate([r for r, _ in parts]) if parts else empty
    hyp_index = np.concatenate([h for _, h in parts]) if parts else empty
    return Alignment(ref_index, hyp_index, *(int(t) for t in totals))


def word_error_rate(ref_words: Sequence[str], hyp_words: Sequence[str]) -> float:
    """(S + D + I) / max(N_ref, 1) from `align_words`; see Alignment.wer for empty input."""
    return align_words(ref_words, hyp_words).wer


def _word_ids(ref_words: Sequence[str], hyp_words: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Map both word sequences onto shared (N,), (M,) int64 ids (equal words, equal ids)."""
    vocab: dict[str, int] = {}
    encoded = []
    for name, words in (("ref_words", ref_words), ("hyp_words", hyp_words)):
        _check_words(words, name)
        ids = np.fromiter(
            (vocab.setdefault(word, len(vocab)) for word in words), np.int64, count=len(words)
        )
        encoded.append(ids)
    return encoded[0], encoded[1]


def _check_words(words: Sequence[str], name: str) -> None:
    """TypeError for a bare string or a non-string word (naming its position)."""
    if isinstance(words, str):
        raise TypeError(f"{name} must be a sequence of words, not the string {words[:40]!r}")
    for position, word in enumerate(words):
        if not isinstance(word, str):
            raise TypeError(f"{name}[{position}] must be a string, got {type(word).__name__}")


def _make_alignment(
    ref_ids: np.ndarray, hyp_ids: np.ndarray, ref_index: np.ndarray, hyp_index: np.ndarray
) -> Alignment:
    """Count matches, substitutions, deletions and insertions of an index alignment."""
    paired = (ref_index >= 0) & (hyp_index >= 0)
    n_match = int((ref_ids[ref_index[paired]] == hyp_ids[hyp_index[paired]]).sum())
    return Alignment(
        ref_index=ref_index,
        hyp_index=hyp_index,
        n_match=n_match,
        n_sub=int(paired.sum()) - n_match,
        n_del=int((hyp_index < 0).sum()),
        n_ins=int((ref_index < 0).sum()),
    )


def _match_mask(
    ref_ids: np.ndarray, hyp_ids: np.ndarray, ref_index: np.ndarray, hyp_index: np.ndarray
) -> np.ndarray:
    """(K,) bool: operation k pairs two equal words."""
    paired = (ref_index >= 0) & (hyp_index >= 0)
    mask = np.zeros(ref_index.size, dtype=bool)
    mask[paired] = ref_ids[ref_index[paired]] == hyp_ids[hyp_index[paired]]
    return mask


def _align_ids(ref_ids: np.ndarray, hyp_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N,), (M,) int64 word ids -> two (K,) int64 index arrays, -1 = gap.

    Segments are split into ordered pieces on an explicit stack (no recursion limit), so
    pieces come off the stack in reading order.
    """
    ref_out: list[int] = []
    hyp_out: list[int] = []
    stack: list[tuple] = [(_SEGMENT, 0, ref_ids.size, 0, hyp_ids.size)]
    while stack:
        piece = stack.pop()
        if piece[0] == _RUN:
            _, i, j, length = piece
            ref_out.extend(range(i, i + length))
            hyp_out.extend(range(j, j + length))
        elif piece[0] == _PAIRS:
            ref_out.extend(piece[1])
            hyp_out.extend(piece[2])
        else:
            stack.extend(reversed(_split_segment(ref_ids, hyp_ids, *piece[1:])))
    return np.array(ref_out, dtype=np.int64), np.array(hyp_out, dtype=np.int64)


def _split_segment(a: np.ndarray, b: np.ndarray, i0: int, i1: int, j0: int, j1: int) -> list:
    """Ordered pieces for a[i0:i1] vs b[j0:j1]: common prefix, the core, common suffix.

    Matching a common prefix or suffix never increases the edit distance, so this is exact.
    """
    pieces: list[tuple] = []
    prefix = _common_prefix(a[i0:i1], b[j0:j1])
    if prefix:
        pieces.append((_RUN, i0, j0, prefix))
        i0, j0 = i0 + prefix, j0 + prefix
    suffix = _common_prefix(a[i0:i1][::-1], b[j0:j1][::-1])
    i1, j1 = i1 - suffix, j1 - suffix
    n, m = i1 - i0, j1 - j0
    if min(n, m) <= 1 or n * m <= EXACT_ALIGN_CELLS:
        pieces.append((_PAIRS, *_align_exact(a[i0:i1], b[j0:j1], i0, j0)))
    else:
        pieces.extend(_split_large(a, b, i0, i1, j0, j1))
    if suffix:
        pieces.append((_RUN, i1, j1, suffix))
    return pieces


def _common_prefix(x: np.ndarray, y: np.ndarray) -> int:
    """Length of the longest common prefix of two 1-D arrays."""
    n = min(x.size, y.size)
    differ = np.flatnonzero(x[:n] != y[:n])
    return int(differ[0]) if differ.size else n


def _split_large(a: np.ndarray, b: np.ndarray, i0: int, i1: int, j0: int, j1: int) -> list:
    """Pieces for a segment too large for the exact DP.

    In order of preference: anchors on word runs unique in both sides (patience diff); an
    exact Hirschberg split when the segment has no such runs and is not huge; anchors on the
    k-th occurrences of shared words; and, with no shared word at all, positional pairing.
    """
    x, y = a[i0:i1], b[j0:j1]
    if np.intersect1d(x, y).size == 0:
        # No shared word: max(n, m) edits is both a lower bound and achieved positionally.
        return [(_PAIRS, *_positional(x.size, y.size, i0, j0))]
    p, q = _unique_anchors(x, y)
    if p.size == 0 and x.size * y.size <= MIDDLE_SPLIT_CELLS:
        i, j = _middle_split(x, y)
        return [(_SEGMENT, i0, i0 + i, j0, j0 + j), (_SEGMENT, i0 + i, i1, j0 + j, j1)]
    if p.size == 0:
        logger.debug("no unique runs in a %dx%d segment; using rank anchors", x.size, y.size)
        p, q = _rank_anchors(x, y)  # not empty: x and y share a word
    return _pieces_between(p + i0, q + j0, i0, i1, j0, j1)


def _pieces_between(
    p: np.ndarray, q: np.ndarray, i0: int, i1: int, j0: int, j1: int
) -> list[tuple]:
    """Anchor pairs (absolute, increasing) -> matched runs and the segments between them."""
    p, q = p.tolist(), q.tolist()
    pieces: list[tuple] = []
    start, i, j = 0, i0, j0
    for k in range(1, len(p) + 1):
        if k < len(p) and p[k] == p[k - 1] + 1 and q[k] == q[k - 1] + 1:
            continue  # extend the current run of adjacent anchors
        if p[start] > i or q[start] > j:
            pieces.append((_SEGMENT, i, p[start], j, q[start]))
        pieces.append((_RUN, p[start], q[start], k - start))
        i, j, start = p[k - 1] + 1, q[k - 1] + 1, k
    if i < i1 or j < j1:
        pieces.append((_SEGMENT, i, i1, j, j1))
    return pieces


def _unique_anchors(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Anchors (p, q), both strictly increasing, with x[p] == y[q]; empty if none found.

    Tries runs of 1, 2, 4, ... words that occur exactly once in x and once in y (unique
    words first, as in patience diff; longer runs for repetitive text) and keeps the longest
    chain increasing on both sides. Each anchor is the first word of its run; the rest of
    the run is matched later as the common prefix of the following segment.
    """
    for k in _ANCHOR_RUN_LENGTHS:
        if k > min(x.size, y.size):
            break
        p, q = _unique_run_pairs(x, y, k)
        if p.size:
            keep = _longest_increasing(q.tolist())
            return p[keep], q[keep]
    empty = np.zeros(0, dtype=np.int64)
    return empty, empty


def _unique_run_pairs(x: np.ndarray, y: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Start positions (p, q), sorted by p, of equal k-word runs occurring once in x and y."""
    key_x, pos_x = _unique_keys(_run_hashes(x, k))
    key_y, pos_y = _unique_keys(_run_hashes(y, k))
    _, in_x, in_y = np.intersect1d(key_x, key_y, assume_unique=True, return_indices=True)
    p, q = pos_x[in_x], pos_y[in_y]
    if k > 1:  # drop hash collisions
        offsets = np.arange(k)
        same = (x[p[:, None] + offsets] == y[q[:, None] + offsets]).all(axis=1)
        p, q = p[same], q[same]
    order = np.argsort(p)
    return p[order], q[order]


def _run_hashes(x: np.ndarray, k: int) -> np.ndarray:
    """(n,) ids -> (n - k + 1,) uint64 hashes of each k-word run (wrapping arithmetic)."""
    count = x.size - k + 1
    hashes = x[:count].astype(np.uint64)
    for t in range(1, k):
        hashes = hashes * _HASH_BASE + x[t : t + count].astype(np.uint64)
    return hashes


def _unique_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Keys occurring exactly once (sorted) and their positions."""
    values, first, counts = np.unique(keys, return_index=True, return_counts=True)
    once = counts == 1
    return values[once], first[once]


def _rank_anchors(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Anchors pairing the k-th occurrence of each shared word in x with its k-th in y."""
    key_x, pos_x = _rank_keys(x)
    key_y, pos_y = _rank_keys(y)
    _, in_x, in_y = np.intersect1d(key_x, key_y, assume_unique=True, return_indices=True)
    order = np.argsort(pos_x[in_x])
    p, q = pos_x[in_x][order], pos_y[in_y][order]
    keep = _longest_increasing(q.tolist())
    return p[keep], q[keep]


def _rank_keys(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n,) ids -> (n,) distinct keys id * 2**32 + occurrence rank, and their positions."""
    order = np.argsort(x, kind="stable")
    sorted_ids = x[order]
    starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
    counts = np.diff(np.r_[starts, sorted_ids.size])
    rank = np.arange(sorted_ids.size) - np.repeat(starts, counts)
    return sorted_ids * (1 << 32) + rank, order


def _middle_split(x: np.ndarray, y: np.ndarray) -> tuple[int, int]:
    """A point (i, j) on some minimum-edit alignment path of x and y (Hirschberg 1975).

    Splits the shorter side in half (it needs at least 2 words) and finds the column where
    forward and backward edit distances add up to the minimum: O(n * m) time, O(m) memory.
    """
    if x.size > y.size:
        j, i = _middle_split(y, x)
        return i, j
    mid = x.size // 2
    forward = _last_row(x[:mid], y)
    backward = _last_row(x[mid:][::-1], y[::-1])[::-1]
    return mid, int(np.argmin(forward + backward))


def _last_row(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(m + 1,) edit distances from all of x to each prefix of y."""
    return deque(_dp_rows(x, y), maxlen=1)[0]


def _longest_increasing(values: list[int]) -> np.ndarray:
    """Indices of a longest strictly increasing subsequence of distinct values, O(n log n)."""
    tail_values: list[int] = []
    tail_index: list[int] = []
    previous = [-1] * len(values)
    for k, value in enumerate(values):
        slot = bisect_left(tail_values, value)
        if slot:
            previous[k] = tail_index[slot - 1]
        if slot == len(tail_values):
            tail_values.append(value)
            tail_index.append(k)
        else:
            tail_values[slot] = value
            tail_index[slot] = k
    chain = []
    k = tail_index[-1] if tail_index else -1
    while k >= 0:
        chain.append(k)
        k = previous[k]
    return np.array(chain[::-1], dtype=np.int64)


def _positional(n: int, m: int, i0: int, j0: int) -> tuple[list[int], list[int]]:
    """Pair the first min(n, m) words as substitutions; the rest are deletions/insertions."""
    k = min(n, m)
    ref = list(range(i0, i0 + n)) + [-1] * (m - k)
    hyp = list(range(j0, j0 + k)) + [-1] * (n - k) + list(range(j0 + k, j0 + m))
    return ref, hyp


def _align_exact(x: np.ndarray, y: np.ndarray, i0: int, j0: int) -> tuple[list[int], list[int]]:
    """Exact minimum-edit alignment of a small segment; indices offset by (i0, j0)."""
    xs, ys = x.tolist(), y.tolist()
    if not set(xs) & set(ys):
        return _positional(len(xs), len(ys), i0, j0)
    # The DP loops over rows in Python, so the shorter side becomes the rows.
    if len(xs) <= len(ys):
        ref, hyp = _backtrace(_dp_table(x, y), xs, ys)
    else:
        hyp, ref = _backtrace(_dp_table(y, x), ys, xs)
    return [k + i0 if k >= 0 else -1 for k in ref], [k + j0 if k >= 0 else -1 for k in hyp]


def _dp_rows(x: np.ndarray, y: np.ndarray):
    """Yield the n + 1 rows, each (m + 1,) int64, of the Levenshtein table of x vs y.

    Row i from row i - 1: t[j] = min(D[i-1, j] + 1, D[i-1, j-1] + [x_i != y_j]), t[0] = i; the
    insertion recurrence D[i, j] = min(t[j], D[i, j-1] + 1) is j + cumulative-min(t[k] - k).
    """
    columns = np.arange(y.size + 1, dtype=np.int64)
    row = columns.copy()
    yield row
    step = np.empty_like(columns)
    for i in range(1, x.size + 1):
        step[0] = i
        np.minimum(row[1:] + 1, row[:-1] + (y != x[i - 1]), out=step[1:])
        row = np.minimum.accumulate(step - columns) + columns
        yield row


def _dp_table(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(n,), (m,) ids -> (n + 1, m + 1) int64 table of prefix edit distances."""
    return np.stack(list(_dp_rows(x, y)))


def _backtrace(table: np.ndarray, xs: list, ys: list) -> tuple[list[int], list[int]]:
    """Walk the DP table back from the corner; ties prefer substitution, then deletion."""
    i, j = len(xs), len(ys)
    ref: list[int] = []
    hyp: list[int] = []
    while i or j:
        here = table[i, j]
        if i and j and here == table[i - 1, j - 1] + (xs[i - 1] != ys[j - 1]):
            i, j = i - 1, j - 1
            ref.append(i)
            hyp.append(j)
        elif i and here == table[i - 1, j] + 1:
            i -= 1
            ref.append(i)
            hyp.append(-1)
        else:
            j -= 1
            ref.append(-1)
            hyp.append(j)
    return ref[::-1], hyp[::-1]


# ---------------------------------------------------------------------------------------------
# Character error rate
# ---------------------------------------------------------------------------------------------


def char_error_rate(ref_words: Sequence[str], hyp_words: Sequence[str]) -> float:
    """Character edit distance between the words joined by single spaces, / max(N_chars, 1).

    Exact when len(ref_text) * len(hyp_text) <= EXACT_CER_CELLS (bit-parallel Levenshtein,
    Myers 1999). Longer documents are first aligned word by word; the character distance is
    then computed only inside windows around each unmatched stretch, extended by
    _CER_CONTEXT_WORDS matched words on each side, and the text between windows counts as
    equal. That is the cost of a valid character edit script, so it is an upper bound on the
    exact value; it equals it unless the best character alignment moves text across more
    than the context words, which does not happen in practice for transcripts.

    Args:
        ref_words: (N,) reference words.
        hyp_words: (M,) hypothesis words.

    Returns:
        CER as a fraction (the number of reference characters includes the spaces).
    """
    ref_ids, hyp_ids = _word_ids(ref_words, hyp_words)
    ref_text, hyp_text = " ".join(ref_words), " ".join(hyp_words)
    if len(ref_text) * len(hyp_text) <= EXACT_CER_CELLS:
        edits = _char_distance(ref_text, hyp_text)
    else:
        edits = _char_edits_by_window(list(ref_words), list(hyp_words), ref_ids, hyp_ids)
    return edits / max(len(ref_text), 1)


def _char_edits_by_window(
    ref_words: list[str], hyp_words: list[str], ref_ids: np.ndarray, hyp_ids: np.ndarray
) -> int:
    """Sum of character edit distances over windows around the unmatched word stretches.

    Every window holds at least one matched word when the alignment has any, so the spaces
    joining a window to its matched neighbours are present on both sides and cost nothing.
    """
    ref_index, hyp_index = _align_ids(ref_ids, hyp_ids)
    matched = _match_mask(ref_ids, hyp_ids, ref_index, hyp_index)
    if not matched.any():
        return _char_distance(" ".join(ref_words), " ".join(hyp_words))
    edits = 0
    for start, end in _windows(~matched, _CER_CONTEXT_WORDS):
        ref_part = [ref_words[k] for k in ref_index[start:end].tolist() if k >= 0]
        hyp_part = [hyp_words[k] for k in hyp_index[start:end].tolist() if k >= 0]
        edits += _char_distance(" ".join(ref_part), " ".join(hyp_part))
    return edits


def _windows(flags: np.ndarray, context: int) -> list[tuple[int, int]]:
    """(K,) bool -> sorted, disjoint [start, end) spans covering each True entry +- context."""
    positions = np.flatnonzero(flags)
    starts = np.maximum(positions - context, 0)
    ends = np.minimum(positions + context + 1, flags.size)
    opens = np.r_[True, starts[1:] > ends[:-1]] if positions.size else np.zeros(0, bool)
    closes = np.r_[opens[1:], True] if positions.size else opens
    return list(zip(starts[opens].tolist(), ends[closes].tolist(), strict=True))


def _char_distance(ref: str, hyp: str) -> int:
    """Levenshtein distance (unit costs) by Myers' bit-parallel algorithm (Hyyro's form).

    The longer string is the bit pattern and the loop runs over the shorter one:
    O(len(short) * len(long) / 64) machine-word operations on Python integers.
    """
    if ref == hyp:
        return 0
    long, short = (ref, hyp) if len(ref) >= len(hyp) else (hyp, ref)
    if not short:
        return len(long)
    match_bits: dict[str, int] = {}
    for position, char in enumerate(long):
        match_bits[char] = match_bits.get(char, 0) | (1 << position)
    full, top = (1 << len(long)) - 1, 1 << (len(long) - 1)
    plus, minus, score = full, 0, len(long)  # vertical +1 / -1 deltas of the current column
    for char in short:
        equal = match_bits.get(char, 0)
        vertical = equal | minus
        horizontal = (((equal & plus) + plus) ^ plus) | equal
        h_plus = minus | (~(horizontal | plus) & full)
        h_minus = plus & horizontal
        if h_plus & top:
            score += 1
        elif h_minus & top:
            score -= 1
        h_plus = ((h_plus << 1) | 1) & full  # the first row of a global distance grows by one
        h_minus = (h_minus << 1) & full
        plus = h_minus | (~(vertical | h_plus) & full)
        minus = h_plus & vertical
    return score


# ---------------------------------------------------------------------------------------------
# Scoring across an alignment
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Mid-utterance vs utterance-final split
# ---------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------
# Paired bootstrap
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BootstrapResult:
    """Paired bootstrap comparison of system b against system a (Koehn 2004).

    Attributes:
        f1_a, f1_b: overall (micro) F1 of each system on the full set.
        ci_a, ci_b: percentile confidence intervals of each F1 over the resamples.
        delta: f1_b - f1_a.
        p_value: fraction of resamples in which b is NOT better than a (F1_b <= F1_a): a
            one-sided test of "b beats a". Identical systems give exactly 1.0.
        n_samples, n_units, confidence: the settings used.
    """

    f1_a: float
    f1_b: float
    ci_a: tuple[float, float]
    ci_b: tuple[float, float]
    delta: float
    p_value: float
    n_samples: int
    n_units: int
    confidence: float

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict of all fields (intervals as two-element lists)."""
        data = asdict(self)
        data["ci_a"], data["ci_b"] = list(self.ci_a), list(self.ci_b)
        return data


def paired_bootstrap(
    ref: Sequence[str],
    hyp_a: Sequence[str],
    hyp_b: Sequence[str],
    labels: Sequence[str],
    negative: str,
    units: Sequence[int],
    n_samples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap resampling over units (e.g. sentences) of overall F1 for two systems.

    Each resample draws n_units units with replacement and sums their tp/fp/fn counts; both
    systems see the same draw. Deterministic for a given seed.

    Args:
        ref: (N,) reference labels.
        hyp_a, hyp_b: (N,) labels from systems a and b at the same positions.
        labels: (L,) label inventory, including `negative`.
        negative: the null label.
        units: (N,) int unit id per position; positions sharing an id are resampled together.
        n_samples: number of resamples, >= 1.
        seed: seed for numpy's default_rng.
        confidence: width of the percentile intervals, in (0, 1).

    Returns:
        BootstrapResult.
    """
    _check_bootstrap_options(n_samples, confidence)
    labels = _check_labels(labels, negative)
    ref_ids, a_ids = _encode_pair(ref, hyp_a, labels, "hyp_a")
    _, b_ids = _encode_pair(ref, hyp_b, labels, "hyp_b")
    unit_ids, n_units = _compact_units(units, ref_ids.size)
    negative_id = labels.index(negative)
    counts_a = _unit_counts(ref_ids, a_ids, negative_id, unit_ids, n_units)
    counts_b = _unit_counts(ref_ids, b_ids, negative_id, unit_ids, n_units)
    return bootstrap_unit_counts(counts_a, counts_b, n_samples, seed, confidence)


def unit_counts(
    ref: Sequence[str], hyp: Sequence[str], labels: Sequence[str], negative: str,
    units: Sequence[int], n_units: int,
) -> np.ndarray:
    """Overall tp, fp, fn per unit, for `bootstrap_unit_counts`.

    Args:
        ref, hyp: (N,) labels at the same positions (e.g. from project_labels).
        units: (N,) int unit id per position, each in [0, n_units).

    Returns:
        (n_units, 3) int64.
    """
    labels = _check_labels(labels, negative)
    ref_ids, hyp_ids = _encode_pair(ref, hyp, labels)
    unit_ids = np.asarray(units, dtype=np.int64)
    if unit_ids.shape != ref_ids.shape or (unit_ids.size and (
            unit_ids.min() < 0 or unit_ids.max() >= n_units)):
        raise ValueError(f"units must be {ref_ids.size} ids in [0, {n_units})")
    return _unit_counts(ref_ids, hyp_ids, labels.index(negative), unit_ids, n_units)


def bootstrap_unit_counts(
    counts_a: np.ndarray, counts_b: np.ndarray, n_samples: int = 1000, seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap from per-unit (tp, fp, fn) counts of two systems.

    This is `paired_bootstrap` for systems whose positions differ (ASR hypotheses aligned to
    the reference separately): only the units (e.g. reference sentences) must be shared.

    Args:
        counts_a, counts_b: (U, 3) int tp, fp, fn per unit.
    """
    _check_bootstrap_options(n_samples, confidence)
    if counts_a.shape != counts_b.shape or counts_a.ndim != 2 or counts_a.shape[1] != 3:
        raise ValueError(f"counts must both have shape (U, 3), got {counts_a.shape} and "
                         f"{counts_b.shape}")
    n_units = counts_a.shape[0]
    samples_a, samples_b = _resample_f1(counts_a, counts_b, n_samples, seed)
    f1_a, f1_b = _f1(*counts_a.sum(axis=0).tolist()), _f1(*counts_b.sum(axis=0).tolist())
    return BootstrapResult(
        f1_a=f1_a,
        f1_b=f1_b,
        ci_a=_percentile_interval(samples_a, confidence),
        ci_b=_percentile_interval(samples_b, confidence),
        delta=f1_b - f1_a,
        p_value=float(np.mean(samples_b <= samples_a)),
        n_samples=n_samples,
        n_units=n_units,
        confidence=confidence,
    )


def sentence_units(ref_labels: Sequence[str], final_labels: Collection[str]) -> np.ndarray:
    """Number positions by sentence: a new unit starts after each sentence-final label.

    Args:
        ref_labels: (N,) reference labels.
        final_labels: labels that end a sentence, e.g. {"PERIOD", "QUESTION", "EXCLAMATION"};
            a single string is taken as one label.

    Returns:
        (N,) int64 unit ids 0, 0, ..., 1, 1, ... for paired_bootstrap.
    """
    if isinstance(ref_labels, str):
        raise TypeError("ref_labels must be a sequence of labels, not a string")
    finals = {final_labels} if isinstance(final_labels, str) else set(final_labels)
    ends = np.fromiter((label in finals for label in ref_labels), bool, count=len(ref_labels))
    return np.concatenate([[0], np.cumsum(ends[:-1], dtype=np.int64)])[: ends.size]


def _check_bootstrap_options(n_samples: int, confidence: float) -> None:
    """ValueError for n_samples < 1 or confidence outside (0, 1)."""
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise ValueError(f"n_samples must be an integer >= 1, got {n_samples!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def _compact_units(units: Sequence[int], size: int) -> tuple[np.ndarray, int]:
    """(N,) integer unit ids -> (N,) ids renumbered 0..U-1 in sorted order, and U."""
    unit_array = np.asarray(units)
    if unit_array.shape != (size,):
        raise ValueError(f"units must have shape ({size},), got {unit_array.shape}")
    if size and unit_array.dtype.kind not in "iu":
        raise ValueError(f"units must be integers, got dtype {unit_array.dtype}")
    values, inverse = np.unique(unit_array, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), int(values.size)


def _unit_counts(
    ref_ids: np.ndarray, hyp_ids: np.ndarray, negative_id: int, unit_ids: np.ndarray, n_units: int
) -> np.ndarray:
    """(n_units, 3) int64 overall tp, fp, fn per unit (the same counts as ClassScores.overall)."""
    wrong = ref_ids != hyp_ids
    flags = (
        ~wrong & (ref_ids != negative_id),  # tp
        wrong & (hyp_ids != negative_id),  # fp
        wrong & (ref_ids != negative_id),  # fn
    )
    return np.stack([np.bincount(unit_ids[f], minlength=n_units) for f in flags], axis=1)


def _resample_f1(
    counts_a: np.ndarray, counts_b: np.ndarray, n_samples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(U, 3) unit counts of two systems -> two (n_samples,) F1 arrays over shared resamples.

    Each resample is a row of unit multiplicities (drawn as U indices, then counted), so the
    summed counts of all resamples in a chunk are one (chunk, U) @ (U, 6) product; float64 is
    exact for these integer sums.
    """
    n_units = counts_a.shape[0]
    if n_units == 0:
        return np.zeros(n_samples), np.zeros(n_samples)
    rng = np.random.default_rng(seed)
    unit_counts = np.hstack([counts_a, counts_b]).astype(np.float64)  # (U, 6)
    chunk = max(1, _BOOTSTRAP_CHUNK_CELLS // n_units)
    totals = []
    for start in range(0, n_samples, chunk):
        size = min(chunk, n_samples - start)
        draw = rng.integers(0, n_units, size=(size, n_units))
        draw += np.arange(size)[:, None] * n_units
        weights = np.bincount(draw.ravel(), minlength=size * n_units).reshape(size, n_units)
        totals.append(weights.astype(np.float64) @ unit_counts)
    totals = np.concatenate(totals)  # (n_samples, 6)
    return _f1_array(totals[:, :3]), _f1_array(totals[:, 3:])


def _f1_array(totals: np.ndarray) -> np.ndarray:
    """(S, 3) tp, fp, fn -> (S,) F1, 0.0 where tp is 0."""
    tp, fp, fn = totals[:, 0], totals[:, 1], totals[:, 2]
    denominator = np.maximum(2 * tp + fp + fn, 1)
    return np.where(tp > 0, 2 * tp / denominator, 0.0)


def _percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """Central percentile interval holding `confidence` of the samples."""
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(samples, [tail, 1.0 - tail])
    return float(low), float(high)
