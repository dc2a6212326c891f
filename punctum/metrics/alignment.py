"""Minimum-edit word alignment (exact, or split at anchor words for long texts) and WER."""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

logger = logging.getLogger(__name__)

# A word segment with at most this many DP cells (len(ref) * len(hyp)) is aligned exactly;
# larger segments are first split at anchor words (patience diff).
EXACT_ALIGN_CELLS = 4_000_000
# A large segment with no anchor runs is split exactly (Hirschberg) up to this many cells.
MIDDLE_SPLIT_CELLS = 100_000_000


# The cost of an insertion or a deletion in the alignment DP; a substitution costs one more.
_GAP = 1 << 20
# Run lengths (in words) tried for anchors, and the multiplier of the run hash.
_ANCHOR_RUN_LENGTHS = (1, 2, 4, 8, 16, 32)
_HASH_BASE = np.uint64(0x9E3779B97F4A7C15)


# Piece kinds produced while splitting an alignment segment.
_RUN = 0  # (kind, i, j, length): ref[i:i+length] matches hyp[j:j+length]
_PAIRS = 1  # (kind, ref_indices, hyp_indices): a solved stretch
_SEGMENT = 2  # (kind, i0, i1, j0, j1): still to align


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
    close to the global minimum (not always: anchors out of order between the two sides can
    force many extra edits; docs/EVALUATION.md). Among alignments with the fewest edits, one
    with the most matches is taken.

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
    """(m + 1,) weighted edit costs from all of x to each prefix of y (see `_dp_rows`)."""
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
    """Pair the last min(n, m) words as substitutions; the first are deletions/insertions.
    A gap's mark stands after its last word ("new york," against "newark,"), so pairing from
    the end, as `_backtrace` does among equal alignments, keeps it matched."""
    k = min(n, m)
    ref = list(range(i0, i0 + n - k)) + [-1] * (m - k) + list(range(i0 + n - k, i0 + n))
    hyp = [-1] * (n - k) + list(range(j0, j0 + m))
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
    """Yield the n + 1 rows, each (m + 1,) int64, of the weighted edit table of x vs y.

    Insertions and deletions cost _GAP, substitutions _GAP + 1 (a match 0): the minimum is
    _GAP * edits + substitutions, so among the alignments with fewest edits it is one with
    fewest substitutions, i.e. most matches ("are you" against "you yes" is a deletion, a
    match and an insertion, not two substitutions), as long as a segment has fewer than
    _GAP substitutions. Row i from row i - 1: t[j] = min(D[i-1, j] + _GAP, D[i-1, j-1] +
    cost(x_i, y_j)), t[0] = i * _GAP; the insertion recurrence D[i, j] = min(t[j],
    D[i, j-1] + _GAP) is j * _GAP + cumulative-min(t[k] - k * _GAP).
    """
    columns = np.arange(y.size + 1, dtype=np.int64) * _GAP
    row = columns.copy()
    yield row
    step = np.empty_like(columns)
    for i in range(1, x.size + 1):
        step[0] = i * _GAP
        np.minimum(row[1:] + _GAP, row[:-1] + (y != x[i - 1]) * (_GAP + 1), out=step[1:])
        row = np.minimum.accumulate(step - columns) + columns
        yield row


def _dp_table(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(n,), (m,) ids -> (n + 1, m + 1) int64 table of weighted prefix edit costs."""
    return np.stack(list(_dp_rows(x, y)))


def _backtrace(table: np.ndarray, xs: list, ys: list) -> tuple[list[int], list[int]]:
    """Walk the DP table back from the corner; ties prefer substitution, then deletion."""
    i, j = len(xs), len(ys)
    ref: list[int] = []
    hyp: list[int] = []
    while i or j:
        here = table[i, j]
        if i and j and here == table[i - 1, j - 1] + (xs[i - 1] != ys[j - 1]) * (_GAP + 1):
            i, j = i - 1, j - 1
            ref.append(i)
            hyp.append(j)
        elif i and here == table[i - 1, j] + _GAP:
            i -= 1
            ref.append(i)
            hyp.append(-1)
        else:
            j -= 1
            ref.append(-1)
            hyp.append(j)
    return ref[::-1], hyp[::-1]
