"""CTC decoding in numpy (no torch): greedy and prefix beam search, with token frame spans.

Both take (T, V) log-probabilities of one utterance with blank = 0 and return a `Decoded`:
token ids and, per token, the first and last frame where it was emitted (for word timings:
multiply by the frame shift of the encoder output).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

BLANK = 0


@dataclass(frozen=True)
class Decoded:
    """A CTC hypothesis.

    Attributes:
        ids: token ids (no blanks, repeats collapsed).
        starts, ends: (len(ids),) first and last frame of each token's emission.
        score: log-probability of the hypothesis (greedy: of its best path).
    """

    ids: tuple[int, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    score: float


def greedy(log_probs: np.ndarray) -> Decoded:
    """Best path: argmax per frame, repeats collapsed, blanks removed."""
    log_probs = _check(log_probs)
    best = log_probs.argmax(axis=1)
    ids, starts, ends = [], [], []
    previous = BLANK
    for frame, token in enumerate(best.tolist()):
        if token != BLANK and token == previous:
            ends[-1] = frame
        elif token != BLANK:
            ids.append(token)
            starts.append(frame)
            ends.append(frame)
        previous = token
    score = float(log_probs[np.arange(len(best)), best].sum()) if len(best) else 0.0
    return Decoded(tuple(ids), tuple(starts), tuple(ends), score)


@dataclass
class _Path:
    """The most probable single path of a prefix ending one way, and its token spans."""

    score: float = -np.inf
    starts: tuple[int, ...] = ()
    ends: tuple[int, ...] = ()

    def offer(self, score: float, starts: tuple[int, ...], ends: tuple[int, ...]) -> None:
        """Keep (score, spans) if it beats the path held."""
        if score > self.score:
            self.score, self.starts, self.ends = score, starts, ends


@dataclass
class _Beam:
    blank: float  # log P(prefix, path ends in blank)
    token: float  # log P(prefix, path ends in its last token)
    best_blank: _Path = field(default_factory=_Path)  # its best path ending in blank
    best_token: _Path = field(default_factory=_Path)  # its best path ending in its token

    @property
    def total(self) -> float:
        return float(np.logaddexp(self.blank, self.token))

    @property
    def best(self) -> _Path:
        """The prefix's most probable single path (the spans reported for it)."""
        return max(self.best_blank, self.best_token, key=lambda path: path.score)


def prefix_beam_search(log_probs: np.ndarray, beam: int = 8, prune: float = -12.0) -> Decoded:
    """CTC prefix beam search (Hannun et al. 2014) without a language model.

    Args:
        log_probs: (T, V) log-probabilities, blank = 0.
        beam: prefixes kept after each frame.
        prune: tokens whose log-probability at a frame is below this are not extended.
    Returns:
        The most probable prefix (summing over all its paths), with the token frame spans
        of its most probable single path.
    """
    log_probs = _check(log_probs)
    beams: dict[tuple[int, ...], _Beam] = {(): _Beam(0.0, -np.inf, _Path(0.0))}
    for frame, row in enumerate(log_probs):
        candidates = [int(v) for v in np.flatnonzero(row >= prune)] or [int(row.argmax())]
        following: dict[tuple[int, ...], _Beam] = {}
        for prefix, b in beams.items():
            _extend(following, prefix, b, row, candidates, frame)
        beams = dict(sorted(following.items(), key=lambda kv: -kv[1].total)[:beam])
    prefix, best = max(beams.items(), key=lambda kv: kv[1].total)
    return Decoded(prefix, best.best.starts, best.best.ends, best.total)


def _extend(following: dict, prefix: tuple[int, ...], b: _Beam, row: np.ndarray,
            candidates: list[int], frame: int) -> None:
    """Add the continuations of one prefix at one frame into `following`."""
    def entry(key) -> _Beam:
        if key not in following:
            following[key] = _Beam(-np.inf, -np.inf)
        return following[key]

    stay = entry(prefix)
    either = b.best
    for token in candidates:
        p = float(row[token])
        if token == BLANK:
            stay.blank = float(np.logaddexp(stay.blank, b.total + p))
            stay.best_blank.offer(either.score + p, either.starts, either.ends)
            continue
        last = prefix[-1] if prefix else None
        extended = entry(prefix + (token,))
        if token == last:  # repeat: continues the last token unless a blank came between
            stay.token = float(np.logaddexp(stay.token, b.token + p))
            held = b.best_token
            stay.best_token.offer(held.score + p, held.starts, held.ends[:-1] + (frame,))
            extended.token = float(np.logaddexp(extended.token, b.blank + p))
            after_blank = b.best_blank
            extended.best_token.offer(after_blank.score + p, after_blank.starts + (frame,),
                                      after_blank.ends + (frame,))
        else:
            extended.token = float(np.logaddexp(extended.token, b.total + p))
            extended.best_token.offer(either.score + p, either.starts + (frame,),
                                      either.ends + (frame,))


def _check(log_probs: np.ndarray) -> np.ndarray:
    array = np.asarray(log_probs, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] < 2:
        raise ValueError(f"log_probs must be (T, V) with V >= 2, got shape {array.shape}")
    return array
