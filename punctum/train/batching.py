"""Windows and padded batches over EncodedCorpus arrays.

`WindowSampler` draws training windows from a weighted mixture of corpora with its own
numpy Generator, whose state is saved in checkpoints so that a resumed run continues with
the same data. `sequential_windows` cuts a corpus into consecutive windows for evaluation.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from punctum.train.data import IGNORE, EncodedCorpus


@dataclass(frozen=True)
class Batch:
    """Padded model input and targets.

    Attributes:
        ids: (B, T) int64 subword ids, start/end tokens included, right-padded.
        lengths: (B,) int64 valid positions per row.
        punct: (B, T) int64 post-mark label ids, -100 where no label.
        case: (B, T) int64 case label ids, -100 where no label.
    """

    ids: np.ndarray
    lengths: np.ndarray
    punct: np.ndarray
    case: np.ndarray


def window_end(corpus: EncodedCorpus, starts: np.ndarray, begin: int, limit: int) -> int:
    """End (exclusive) of a window that begins at `begin` and holds at most `limit` subwords,
    cut at a word boundary and never past the end of the document."""
    doc = np.searchsorted(corpus.doc_offsets, begin, side="right") - 1
    stop = min(begin + limit, int(corpus.doc_offsets[doc + 1]))
    if stop == int(corpus.doc_offsets[doc + 1]):
        return stop
    k = np.searchsorted(starts, stop, side="right") - 1  # last word start <= stop
    end = int(starts[k])
    return end if end > begin else stop  # a single word longer than the window is cut


def collate(corpus_windows: Sequence[tuple[EncodedCorpus, int, int]], bos_id: int,
            eos_id: int, pad_id: int) -> Batch:
    """Pad windows (corpus, begin, end) into a Batch with start and end tokens."""
    lengths = np.asarray([end - begin + 2 for _, begin, end in corpus_windows], dtype=np.int64)
    size, width = len(corpus_windows), int(lengths.max())
    ids = np.full((size, width), pad_id, dtype=np.int64)
    punct = np.full((size, width), IGNORE, dtype=np.int64)
    case = np.full((size, width), IGNORE, dtype=np.int64)
    for row, (corpus, begin, end) in enumerate(corpus_windows):
        n = end - begin
        ids[row, 0], ids[row, n + 1] = bos_id, eos_id
        ids[row, 1:n + 1] = corpus.ids[begin:end]
        punct[row, 1:n + 1] = np.where(corpus.punct[begin:end] >= 0,
                                       corpus.punct[begin:end], IGNORE)
        case[row, 1:n + 1] = np.where(corpus.case[begin:end] >= 0,
                                      corpus.case[begin:end], IGNORE)
    return Batch(ids, lengths, punct, case)


class WindowSampler:
    """Random training windows from a weighted mixture of corpora.

    Args:
        corpora: the encoded training corpora.
        weights: relative sampling weight of each corpus.
        max_subwords: window length including start/end tokens.
        special_ids: (bos_id, eos_id, pad_id).
        seed: seed of the sampler's Generator.
    """

    def __init__(self, corpora: Sequence[EncodedCorpus], weights: Sequence[float],
                 max_subwords: int, special_ids: tuple[int, int, int], seed: int = 0) -> None:
        kept = [(c, w) for c, w in zip(corpora, weights) if len(c.ids)]
        if not kept:
            raise ValueError("all training corpora are empty")
        self.corpora = [c for c, _ in kept]
        weights = np.asarray([w for _, w in kept], dtype=np.float64)
        self.weights = weights / weights.sum()
        self.starts = [np.flatnonzero(c.word_start).astype(np.int64) for c in self.corpora]
        self.limit = max_subwords - 2
        self.special_ids = special_ids
        self.rng = np.random.default_rng(seed)

    def next_batch(self, batch_size: int) -> Batch:
        """Draw `batch_size` windows: a corpus by weight, then a random word to start at."""
        choices = self.rng.choice(len(self.corpora), size=batch_size, p=self.weights)
        windows = []
        for index in choices:
            corpus, starts = self.corpora[index], self.starts[index]
            begin = int(starts[self.rng.integers(len(starts))])
            windows.append((corpus, begin, window_end(corpus, starts, begin, self.limit)))
        return collate(windows, *self.special_ids)

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
