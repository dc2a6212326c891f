"""Character error rate over a word alignment, exact or by windows around the edits."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from punctum.metrics.alignment import _align_ids, _match_mask, _word_ids

# char_error_rate runs one exact character DP when len(ref_text) * len(hyp_text) is at most this.
EXACT_CER_CELLS = 250_000_000
# ... and one per window (or for a document without one matched word) up to this many cells.
WINDOW_CER_CELLS = 250_000_000
# Matched words kept on each side of an unmatched stretch when CER is computed by windows.
_CER_CONTEXT_WORDS = 2


def char_error_rate(ref_words: Sequence[str], hyp_words: Sequence[str],
                    separator: str = " ") -> float:
    """Character edit distance between the words joined by `separator` (a space; "" for
    languages written without spaces, whose texts hold none), / max(N_chars, 1).

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
    ref_text, hyp_text = separator.join(ref_words), separator.join(hyp_words)
    if len(ref_text) * len(hyp_text) <= EXACT_CER_CELLS:
        edits = _char_distance(ref_text, hyp_text)
    else:
        edits = _char_edits_by_window(list(ref_words), list(hyp_words), ref_ids, hyp_ids,
                                      separator)
    return edits / max(len(ref_text), 1)


def _char_edits_by_window(
    ref_words: list[str], hyp_words: list[str], ref_ids: np.ndarray, hyp_ids: np.ndarray,
    separator: str = " ",
) -> int:
    """Sum of character edit distances over windows around the unmatched word stretches.

    Every window holds at least one matched word when the alignment has any, so the spaces
    joining a window to its matched neighbours are present on both sides and cost nothing.
    """
    ref_index, hyp_index = _align_ids(ref_ids, hyp_ids)
    matched = _match_mask(ref_ids, hyp_ids, ref_index, hyp_index)
    if not matched.any():
        return _bounded_distance(separator.join(ref_words), separator.join(hyp_words))
    edits = 0
    for start, end in _windows(~matched, _CER_CONTEXT_WORDS):
        ref_part = [ref_words[k] for k in ref_index[start:end].tolist() if k >= 0]
        hyp_part = [hyp_words[k] for k in hyp_index[start:end].tolist() if k >= 0]
        edits += _bounded_distance(separator.join(ref_part), separator.join(hyp_part))
    return edits


def _bounded_distance(ref: str, hyp: str) -> int:
    """`_char_distance` where len(ref) * len(hyp) <= WINDOW_CER_CELLS, else the cost of
    rewriting the longer string, max(len(ref), len(hyp)) (an upper bound)."""
    if len(ref) * len(hyp) <= WINDOW_CER_CELLS:
        return _char_distance(ref, hyp)
    return max(len(ref), len(hyp))


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
