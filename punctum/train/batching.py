"""Windows and padded batches over EncodedCorpus arrays.

`WindowSampler` draws training windows from a weighted mixture of corpora with its own
numpy Generator, whose state is saved in checkpoints so that a resumed run continues with
the same data. Training windows run across document boundaries (consecutive lines of a
source are consecutive turns or paragraphs) and every window of a batch has the same length:
packed LSTMs on CPU run their backward pass about 6x slower when the lengths in a batch
differ. `sequential_windows` cuts a corpus into consecutive windows for evaluation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from punctum.pauses import PauseNoise
from punctum.train.data import IGNORE, EncodedCorpus


@dataclass(frozen=True)
class Batch:
    """Padded model input and targets.

    Attributes:
        ids: (B, T) int64 subword ids, start/end tokens included, right-padded.
        lengths: (B,) int64 valid positions per row.
        punct: (B, T) int64 post-mark label ids, -100 where no label.
        case: (B, T) int64 case label ids, -100 where no label.
        row_weight: (B,) float32 loss weight of each row's positions (its source's
            loss_weight), or None for all 1.
        row_smoothing: (B,) float32 label smoothing of each row (its source's), or None for
            the recipe's single value.
        pauses: (B, T) float32 seconds of silence after the word labelled at each position,
            NaN elsewhere and where unknown; None when no corpus of the batch is timed.
        soft: (B, T, n_post + n_case) float32 teacher probabilities at labelled positions,
            NaN elsewhere; None when no corpus of the batch has a teacher.
    """

    ids: np.ndarray
    lengths: np.ndarray
    punct: np.ndarray
    case: np.ndarray
    row_weight: np.ndarray | None = None
    row_smoothing: np.ndarray | None = None
    pauses: np.ndarray | None = None
    soft: np.ndarray | None = None


def window_end(corpus: EncodedCorpus, starts: np.ndarray, begin: int, limit: int,
               within_document: bool = True) -> int:
    """End (exclusive) of a window that begins at `begin` and holds at most `limit` subwords,
    cut at a word boundary and, unless told otherwise, not past the end of the document."""
    if within_document:
        doc = np.searchsorted(corpus.doc_offsets, begin, side="right") - 1
        boundary = int(corpus.doc_offsets[doc + 1])
    else:
        boundary = len(corpus.ids)
    stop = min(begin + limit, boundary)
    if stop == boundary:
        return stop
    k = np.searchsorted(starts, stop, side="right") - 1  # last word start <= stop
    end = int(starts[k])
    return end if end > begin else stop  # a single word longer than the window is cut


def equalise(corpus_windows: list[tuple[EncodedCorpus, int, int]]):
    """Crop every window to the shortest one's length; the label of a word cut by the crop
    is dropped (its right context is gone), so the windows keep only whole-word labels.

    Returns:
        (windows, ignore_from) with ignore_from[i] the crop-relative position from which row
        i's labels are ignored (its length when nothing was cut).
    """
    shortest = min(end - begin for _, begin, end in corpus_windows)
    cropped, ignore_from = [], []
    for corpus, begin, end in corpus_windows:
        stop = begin + shortest
        cut = stop < end and not corpus.word_start[stop]
        last_start = begin + shortest - 1
        while cut and last_start > begin and not corpus.word_start[last_start]:
            last_start -= 1
        cropped.append((corpus, begin, stop))
        ignore_from.append(last_start - begin if cut else shortest)
    return cropped, ignore_from


def collate(corpus_windows: Sequence[tuple[EncodedCorpus, int, int]], bos_id: int,
            eos_id: int, pad_id: int, ignore_from: Sequence[int] | None = None) -> Batch:
    """Pad windows (corpus, begin, end) into a Batch with start and end tokens; labels from
    window position `ignore_from[i]` on are ignored."""
    lengths = np.asarray([end - begin + 2 for _, begin, end in corpus_windows], dtype=np.int64)
    size, width = len(corpus_windows), int(lengths.max())
    ids = np.full((size, width), pad_id, dtype=np.int64)
    punct = np.full((size, width), IGNORE, dtype=np.int64)
    case = np.full((size, width), IGNORE, dtype=np.int64)
    timed = any(corpus.pause is not None for corpus, _, _ in corpus_windows)
    pauses = np.full((size, width), np.nan, dtype=np.float32) if timed else None
    soft = _soft_targets(corpus_windows, width, ignore_from)
    for row, (corpus, begin, end) in enumerate(corpus_windows):
        n = end - begin
        ids[row, 0], ids[row, n + 1] = bos_id, eos_id
        ids[row, 1:n + 1] = corpus.ids[begin:end]
        punct[row, 1:n + 1] = np.where(corpus.punct[begin:end] >= 0,
                                       corpus.punct[begin:end], IGNORE)
        case[row, 1:n + 1] = np.where(corpus.case[begin:end] >= 0,
                                      corpus.case[begin:end], IGNORE)
        if ignore_from is not None:
            punct[row, 1 + ignore_from[row]:] = IGNORE
            case[row, 1 + ignore_from[row]:] = IGNORE
        if timed and corpus.pause is not None:
            pauses[row, 1:n + 1] = corpus.pause[begin:end]
    return Batch(ids, lengths, punct, case, pauses=pauses, soft=soft)


def _soft_targets(corpus_windows, width: int, ignore_from) -> np.ndarray | None:
    """(B, T, K) teacher probabilities of the windows (NaN where none), or None."""
    taught = [corpus.soft for corpus, _, _ in corpus_windows if corpus.soft is not None]
    if not taught:
        return None
    soft = np.full((len(corpus_windows), width, taught[0].shape[1]), np.nan, dtype=np.float32)
    for row, (corpus, begin, end) in enumerate(corpus_windows):
        if corpus.soft is not None:
            stop = end if ignore_from is None else min(end, begin + ignore_from[row])
            soft[row, 1:stop - begin + 1] = corpus.soft[begin:stop]
    return soft


class WindowSampler:
    """Random training windows from a weighted mixture of corpora.

    Args:
        corpora: the encoded training corpora.
        weights: relative sampling weight of each corpus.
        max_subwords: window length including start/end tokens.
        special_ids: (bos_id, eos_id, pad_id).
        seed: seed of the sampler's Generator.
        loss_weights: per corpus, the loss weight of its rows (default all 1).
        smoothing: per corpus, the label smoothing of its rows (default: none set).
        pause_noise: perturbation of the pauses of timed corpora (PauseAware training).
    """

    def __init__(self, corpora: Sequence[EncodedCorpus], weights: Sequence[float],
                 max_subwords: int, special_ids: tuple[int, int, int], seed: int = 0,
                 loss_weights: Sequence[float] | None = None,
                 smoothing: Sequence[float] | None = None,
                 pause_noise: PauseNoise | None = None) -> None:
        self.pause_noise = pause_noise
        n = len(corpora)
        loss_weights = [1.0] * n if loss_weights is None else list(loss_weights)
        kept = [i for i in range(n) if len(corpora[i].ids)]
        if not kept:
            raise ValueError("all training corpora are empty")
        self.corpora = [corpora[i] for i in kept]
        weights = np.asarray([weights[i] for i in kept], dtype=np.float64)
        self.weights = weights / weights.sum()
        self.loss_weights = np.asarray([loss_weights[i] for i in kept], dtype=np.float32)
        self.uniform_weights = bool(np.all(self.loss_weights == 1.0))
        self.smoothing = (None if smoothing is None else
                          np.asarray([smoothing[i] for i in kept], dtype=np.float32))
        self.starts = [np.flatnonzero(c.word_start).astype(np.int64) for c in self.corpora]
        self.limit = max_subwords - 2
        self.special_ids = special_ids
        self.rng = np.random.default_rng(seed)

    def next_batch(self, batch_size: int) -> Batch:
        """Draw `batch_size` windows of equal length: a corpus by weight, then a random word
        to start at (far enough from the end for a full window)."""
        choices = self.rng.choice(len(self.corpora), size=batch_size, p=self.weights)
        windows = []
        for index in choices:
            corpus, starts = self.corpora[index], self.starts[index]
            last = np.searchsorted(starts, len(corpus.ids) - self.limit, side="right")
            begin = int(starts[self.rng.integers(max(int(last), 1))])
            end = window_end(corpus, starts, begin, self.limit, within_document=False)
            windows.append((corpus, begin, end))
        windows, ignore_from = equalise(windows)
        batch = collate(windows, *self.special_ids, ignore_from=ignore_from)
        if batch.pauses is not None and self.pause_noise is not None:
            batch = dataclasses.replace(
                batch, pauses=self.pause_noise.apply(batch.pauses, self.rng).astype(np.float32))
        return dataclasses.replace(
            batch,
            row_weight=None if self.uniform_weights else self.loss_weights[choices],
            row_smoothing=None if self.smoothing is None else self.smoothing[choices])

    def state(self) -> dict:
        """The Generator state, for checkpoints."""
        return self.rng.bit_generator.state

    def set_state(self, state: dict) -> None:
        self.rng.bit_generator.state = state


def sequential_windows(corpus: EncodedCorpus, max_subwords: int,
                       max_words: int = 0) -> list[tuple[int, int]]:
    """Consecutive non-overlapping windows (begin, end) covering the corpus, cut at word
    boundaries; with `max_words`, stop after about that many words."""
    starts = np.flatnonzero(corpus.word_start).astype(np.int64)
    windows, begin, total = [], 0, len(corpus.ids)
    if max_words and max_words < len(starts):
        total = int(starts[max_words])
    while begin < total:
        end = min(window_end(corpus, starts, begin, max_subwords - 2), total)
        windows.append((begin, end))
        begin = end
    return windows


def iter_batches(corpus: EncodedCorpus, windows: list[tuple[int, int]], batch_size: int,
                 special_ids: tuple[int, int, int]) -> Iterator[Batch]:
    """Batches over fixed windows, in order."""
    for i in range(0, len(windows), batch_size):
        chunk = [(corpus, begin, end) for begin, end in windows[i:i + batch_size]]
        yield collate(chunk, *special_ids)
