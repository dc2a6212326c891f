"""Pauses between words as model input (PauseAware models; numpy only).

A pause-aware tagger reads, next to each word's subwords, the silence after the word,
bucketed: a long pause is strong evidence for a sentence boundary, a short one for a comma.
Pauses are seconds per word, NaN where unknown (text without timings, the last word);
`bucketize` turns them into ids with 0 = unknown, so one model serves timed and untimed
input (it is trained with some pauses hidden, see `PauseNoise`).

    pauses = pauses_after(starts, ends)        # (n,) seconds from word timings
    ids = bucketize(pauses)                    # (n,) int64 in [0, N_BUCKETS]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Upper edges (seconds) of the known buckets 1..len(EDGES); the last bucket is open.
EDGES = (0.03, 0.08, 0.13, 0.2, 0.28, 0.38, 0.5, 0.7, 1.0)
UNKNOWN = 0
N_BUCKETS = len(EDGES) + 1  # known buckets; ids run 0 (unknown) .. N_BUCKETS


def bucketize(pauses: np.ndarray, edges: Sequence[float] = EDGES) -> np.ndarray:
    """(...) float seconds, NaN unknown -> (...) int64 bucket ids, 0 for unknown."""
    pauses = np.asarray(pauses, dtype=np.float64)
    ids = np.searchsorted(np.asarray(edges), np.maximum(pauses, 0.0), side="right") + 1
    return np.where(np.isnan(pauses), UNKNOWN, ids).astype(np.int64)


def pauses_after(starts: Sequence[float | None], ends: Sequence[float | None]) -> np.ndarray:
    """(n,) seconds of silence between each word's end and the next word's start (clipped
    at 0), NaN where a time is missing and after the last word."""
    start = np.asarray([np.nan if s is None else s for s in starts], dtype=np.float64)
    end = np.asarray([np.nan if e is None else e for e in ends], dtype=np.float64)
    out = np.full(len(start), np.nan)
    if len(start) > 1:
        out[:-1] = np.maximum(start[1:] - end[:-1], 0.0)
    return out


@dataclass(frozen=True)
class PauseNoise:
    """How training pauses are perturbed, so that a model neither trusts one voice's
    habits nor fails without timings.

    Args:
        hide_row: probability that a whole window is untimed (all unknown).
        hide_word: probability that one word's pause is unknown.
        scale_range: per-window factor on all pauses (speaking rate, speaker habit).
        jitter: standard deviation (seconds) of noise added to each pause.
        spurious: probability that a word gets a hesitation pause (0.1-0.6 s) it did not
            have, as real speakers pause mid-sentence.
        missing: probability that a pause is dropped to 0 (a speaker running on).
    """

    hide_row: float = 0.0
    hide_word: float = 0.0
    scale_range: tuple[float, float] = (1.0, 1.0)
    jitter: float = 0.0
    spurious: float = 0.0
    missing: float = 0.0

    def __post_init__(self) -> None:
        for name in ("hide_row", "hide_word", "spurious", "missing"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"pause noise {name} must be in [0, 1], got {value}")
        low, high = self.scale_range
        if not 0 < low <= high:
            raise ValueError(f"pause noise scale_range must be 0 < low <= high, "
                             f"got {self.scale_range}")
        if self.jitter < 0:
            raise ValueError(f"pause noise jitter must be >= 0, got {self.jitter}")

    def apply(self, pauses: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """(B, T) seconds (NaN unknown) -> perturbed copy; NaN stays NaN."""
        out = np.array(pauses, dtype=np.float64)
        rows = out.shape[0]
        out *= rng.uniform(*self.scale_range, size=(rows, 1))
        if self.jitter:
            out += rng.normal(0.0, self.jitter, size=out.shape)
        known = ~np.isnan(out)
        out[known & (rng.random(out.shape) < self.missing)] = 0.0
        spurious = known & (rng.random(out.shape) < self.spurious)
        out[spurious] = np.maximum(out[spurious], rng.uniform(0.1, 0.6, size=spurious.sum()))
        out[rng.random(out.shape) < self.hide_word] = np.nan
        out[rng.random(rows) < self.hide_row] = np.nan
        return np.maximum(out, 0.0, where=~np.isnan(out), out=out)
