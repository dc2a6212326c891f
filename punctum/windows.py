"""Window plans over long input and stitching of per-window predictions.

A tagger sees at most `size` tokens at once. Long input (T subword tokens, or words) is cut
into overlapping windows, and each position's prediction is taken from the one window in which
it has enough context on both sides. This is the "double-overlap" sliding window of Chen et
al. 2021 (self-training for punctuation prediction; W = 120, left overlap 35-40, right 15):
window k spans [start_k, start_k + W) and keeps only [start_k + L, start_k + W - R), except
that the first window keeps from 0 and the last window keeps up to n. Consecutive windows
advance by the stride W - L - R, every position is kept by exactly one window, and every kept
position has at least L tokens of left and R tokens of right context inside its window (fewer
only at the edges of the sequence). A model whose output at a position depends only on tokens
within L to its left and R to its right therefore gives, after stitching, exactly its
single-pass output; that equivalence is what the tests pin.

Cuts can be restricted to allowed positions (e.g. the first subword of each word) by a
`boundaries` mask; a cut then moves back to the nearest allowed position and falls inside a
word only when the word is too long to avoid it (see `plan_windows`). Positions are content
tokens: the caller adds start/end tokens around each window and strips their outputs before
`stitch`.

Example::

    config = WindowConfig(size=120, left=40, right=15)
    windows = plan_word_windows(word_lengths, config)           # subword positions
    outputs = [model(ids[w.start:w.end]) for w in windows]      # (w.length, n_labels) each
    probabilities = stitch(outputs, windows)                    # (T, n_labels)

`iter_windows` and `iter_word_windows` yield the same plan from an iterator of chunks in
bounded memory. This module depends on numpy and the standard library only.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

__all__ = [
    "STRATEGIES",
    "Window",
    "WindowConfig",
    "iter_windows",
    "iter_word_windows",
    "plan_windows",
    "plan_word_windows",
    "stitch",
    "take_kept",
]

STRATEGIES = ("double_overlap", "half", "none")


def _check_int(owner: str, name: str, value: object, minimum: int) -> int:
    """`value` as an int >= minimum, or ValueError naming owner.name, the value and the range."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{owner}.{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class WindowConfig:
    """How long input is cut into windows.

    Attributes:
        size: W, content tokens per window (start/end tokens not counted), >= 2.
        left: L, leading positions of each window (except the first) whose predictions are
            discarded, >= 0. Used by "double_overlap" only.
        right: R, trailing positions of each window (except the last) whose predictions are
            discarded, >= 0, with left + right < size. Used by "double_overlap" only.
        strategy: "double_overlap" (L and R as given), "half" (L = R = size // 4: windows
            overlap by about half and each keeps its middle half) or "none" (consecutive
            windows without overlap: L = R = 0 and the last window holds the remainder).
            "half" and "none" ignore `left` and `right`.
    """

    size: int = 120
    left: int = 40
    right: int = 15
    strategy: str = "double_overlap"

    def __post_init__(self) -> None:
        for name, minimum in (("size", 2), ("left", 0), ("right", 0)):
            object.__setattr__(self, name, _check_int("WindowConfig", name, getattr(self, name),
                                                      minimum))
        if self.strategy not in STRATEGIES:
            raise ValueError(f"WindowConfig.strategy must be one of {STRATEGIES}, "
                             f"got {self.strategy!r}")
        if self.strategy == "double_overlap" and self.left + self.right >= self.size:
            raise ValueError(f"WindowConfig.left + WindowConfig.right must be < size = "
                             f"{self.size}, got left = {self.left}, right = {self.right}")

    @property
    def effective_left(self) -> int:
        """Left context L every kept position has (away from the sequence start)."""
        if self.strategy == "half":
            return self.size // 4
        return self.left if self.strategy == "double_overlap" else 0

    @property
    def effective_right(self) -> int:
        """Right context R every kept position has (away from the sequence end)."""
        if self.strategy == "half":
            return self.size // 4
        return self.right if self.strategy == "double_overlap" else 0

    @property
    def stride(self) -> int:
        """Positions kept by a full middle window: size - L - R (>= 1)."""
        return self.size - self.effective_left - self.effective_right


@dataclass(frozen=True)
class Window:
    """One window of a plan, in absolute content-token positions (half-open ranges).

    Attributes:
        start: first position the window holds.
        end: one past its last position; end - start <= WindowConfig.size (shorter when
            n < size, for "none"'s last window, or when cuts move to word boundaries).
        keep_start: first position whose prediction this window provides.
        keep_end: one past the last such position;
            start <= keep_start < keep_end <= end.
    """

    start: int
    end: int
    keep_start: int
    keep_end: int

    def __post_init__(self) -> None:
        for name in ("start", "end", "keep_start", "keep_end"):
            object.__setattr__(self, name, _check_int("Window", name, getattr(self, name), 0))
        if not self.start <= self.keep_start < self.keep_end <= self.end:
            raise ValueError(f"Window needs start <= keep_start < keep_end <= end, got {self}")

    @property
    def length(self) -> int:
        """Tokens in the window: end - start."""
        return self.end - self.start

    @property
    def kept(self) -> slice:
        """The kept positions as a slice into this window's own output."""
        return slice(self.keep_start - self.start, self.keep_end - self.start)


class _Allowed(Protocol):
    def last(self, lo: int, hi: int) -> int | None: ...
    def first(self, lo: int, hi: int) -> int | None: ...


class _Anywhere:
    """Every position is an allowed cut (no boundaries given)."""

    def last(self, lo: int, hi: int) -> int | None:
        return hi if lo <= hi else None

    def first(self, lo: int, hi: int) -> int | None:
        return lo if lo <= hi else None


class _Flags:
    """Allowed cuts from a bool mask that covers positions [offset, offset + len(flags))."""

    def __init__(self, flags: np.ndarray, offset: int = 0) -> None:
        self.flags, self.offset = flags, offset

    @property
    def end(self) -> int:
        return self.offset + len(self.flags)

    def _hits(self, lo: int, hi: int) -> np.ndarray:
        if lo > hi:
            return np.zeros(0, dtype=np.int64)
        assert self.offset <= lo and hi < self.end, (lo, hi, self.offset, self.end)
        return np.flatnonzero(self.flags[lo - self.offset:hi + 1 - self.offset])

    def last(self, lo: int, hi: int) -> int | None:
        hits = self._hits(lo, hi)
        return lo + int(hits[-1]) if len(hits) else None

    def first(self, lo: int, hi: int) -> int | None:
        hits = self._hits(lo, hi)
        return lo + int(hits[0]) if len(hits) else None

    def append(self, chunk: np.ndarray) -> None:
        self.flags = np.concatenate([self.flags, chunk])

    def drop_before(self, position: int) -> None:
        if position > self.offset:
            self.flags = self.flags[position - self.offset:]
            self.offset = position


def _reach(keep_start: int, config: WindowConfig) -> int:
    """One past the last position a window keeping from `keep_start` can hold."""
    return max(0, keep_start - config.effective_left) + config.size


def _next_window(keep_start: int, n: int | None, allowed: _Allowed,
                 config: WindowConfig) -> Window:
    """The window that keeps from `keep_start`; `n` is the sequence length, or None when the
    sequence is known to extend past _reach(keep_start, config).

    The window is the last one (ending at n) when an allowed start lets it hold [keep_start, n)
    with L left context in `size` positions, or when the cut falls inside a word anyway.
    """
    start = _start(keep_start, allowed, config)
    if n is not None and _reach(keep_start, config) >= n:
        last = _last_start(keep_start, n, allowed, config)
        if last is not None or start + config.size >= n:
            return Window(max(0, n - config.size) if last is None else last, n, keep_start, n)
    end, keep_end = _end(keep_start, start, allowed, config)
    return Window(start, end, keep_start, keep_end)


def _start(keep_start: int, allowed: _Allowed, config: WindowConfig) -> int:
    """Largest allowed start leaving L left context and room for R right context."""
    left, right, size = config.effective_left, config.effective_right, config.size
    if config.strategy == "none":
        return keep_start
    if keep_start - left <= 0:
        return 0
    lowest = max(0, keep_start + right + 1 - size)
    found = allowed.last(lowest, keep_start - left)
    return keep_start - left if found is None else found  # None: inside an over-long word


def _end(keep_start: int, start: int, allowed: _Allowed, config: WindowConfig) -> tuple[int, int]:
    """(end, keep_end) of a non-final window, with keep_start < keep_end <= end - R.

    Both are the latest allowed positions that fit. When no allowed keep_end fits before the
    latest allowed end, the end is cut at `size` instead (inside a long word) if that lets
    keep_end fall between words; failing both, keep_end is cut at end - R.
    """
    right, reach = config.effective_right, start + config.size
    ends = [end for end in (allowed.last(keep_start + right + 1, reach), reach) if end is not None]
    for end in ends:
        keep_end = allowed.last(keep_start + 1, end - right)
        if keep_end is not None:
            return end, keep_end
    return ends[0], ends[0] - right


def _last_start(keep_start: int, n: int, allowed: _Allowed,
                config: WindowConfig) -> int | None:
    """Smallest allowed start of a window ending at n (so that it is as full as `size`
    allows) that still gives keep_start L left context; None when there is none."""
    if config.strategy == "none":
        return keep_start
    lowest = max(0, n - config.size)
    return allowed.first(lowest, max(0, keep_start - config.effective_left))


def _raw_plan(n: int, allowed: _Allowed, config: WindowConfig) -> Iterator[Window]:
    keep_start = 0
    while keep_start < n:
        window = _next_window(keep_start, n, allowed, config)
        yield window
        keep_start = window.keep_end


def _merge_nested(windows: Iterable[Window]) -> Iterator[Window]:
    """Fold each window into the next when the next holds all of its positions.

    Only happens around words that cannot be cut at an allowed position; the merged window
    gives every kept position at least the context the two windows gave.
    """
    pending = None
    for window in windows:
        if pending is not None and window.start <= pending.start and window.end >= pending.end:
            window = Window(window.start, window.end, pending.keep_start, window.keep_end)
        elif pending is not None:
            yield pending
        pending = window
    if pending is not None:
        yield pending


def _check_length(n: object) -> int:
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"n must be an integer, got {type(n).__name__}") from None
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    return n


def _check_flags(boundaries: object, n: int | None = None) -> np.ndarray:
    flags = np.asarray(boundaries)
    if flags.dtype != np.bool_ or flags.ndim != 1:
        raise TypeError(f"boundaries must be a 1-D bool array, got dtype {flags.dtype}, "
                        f"shape {flags.shape}")
    if n is not None and len(flags) != n:
        raise ValueError(f"boundaries must have shape ({n},), got {flags.shape}")
    return flags


def plan_windows(n: int, config: WindowConfig,
                 boundaries: np.ndarray | None = None) -> list[Window]:
    """Cut positions [0, n) into windows whose keep ranges partition [0, n) in order.

    n <= config.size gives one window [0, n) that keeps everything (the single pass). Longer
    input follows `WindowConfig`; the last window ends at n and, except for "none", is moved
    left so that it holds `size` positions when the cuts allow it.

    Args:
        n: number of positions (content tokens).
        config: window size, overlaps and strategy.
        boundaries: optional (n,) bool, True where a cut is allowed (e.g. each word's first
            subword); 0 and n are always allowed. Starts, ends and keep boundaries move back
            to the nearest allowed position; words of at most (stride + 2) // 3 positions
            are never cut. Where no allowed position fits (near a longer word) the cut falls
            inside a word: window sizes and the L/R context of kept positions are never
            given up. None allows every position.

    Returns:
        Windows in order; [] for n == 0.
    """
    n = _check_length(n)
    if boundaries is None:
        allowed: _Allowed = _Anywhere()
    else:
        flags = _check_flags(boundaries, n).copy()
        flags[:1] = True
        allowed = _Flags(flags)
    return list(_merge_nested(_raw_plan(n, allowed, config)))


def _word_starts(word_lengths: object) -> np.ndarray:
    """(sum(word_lengths),) bool, True at the first subword of each word."""
    lengths = np.asarray(word_lengths)
    if lengths.ndim != 1 or (lengths.size and lengths.dtype.kind not in "iu"):
        raise TypeError(f"word_lengths must be a 1-D integer array, got dtype {lengths.dtype}, "
                        f"shape {lengths.shape}")
    if lengths.size and lengths.min() < 0:
        raise ValueError(f"word_lengths must be >= 0, got {int(lengths.min())}")
    lengths = lengths.astype(np.int64)
    total = int(lengths.sum())
    starts = np.cumsum(lengths) - lengths
    flags = np.zeros(total, dtype=bool)
    flags[starts[starts < total]] = True
    return flags


def plan_word_windows(word_lengths: np.ndarray, config: WindowConfig) -> list[Window]:
    """Windows over subword positions, cut between words where possible.

    Args:
        word_lengths: (n_words,) int subwords per word (0 for a word without subwords).
        config: window size (in content subwords) and overlaps.

    Returns:
        `plan_windows(sum(word_lengths), config, boundaries)` with boundaries at word starts;
        a word longer than the window is cut inside.
    """
    flags = _word_starts(word_lengths)
    return plan_windows(len(flags), config, flags)


def iter_windows(boundary_chunks: Iterable[np.ndarray], config: WindowConfig) -> Iterator[Window]:
    """The plan of `plan_windows`, yielded lazily from a stream of boundary chunks.

    Args:
        boundary_chunks: 1-D bool arrays whose concatenation is plan_windows' (n,)
            `boundaries` (all True for cuts anywhere). Only about 2 * size positions plus
            one chunk are held at a time.
        config: window size, overlaps and strategy.

    Yields:
        The same windows as plan_windows(n, config, concatenated boundaries), each as soon as
        the chunks reaching past its start + size have been read.
    """
    return _merge_nested(_raw_stream_plan(boundary_chunks, config))


def _raw_stream_plan(boundary_chunks: Iterable[np.ndarray],
                     config: WindowConfig) -> Iterator[Window]:
    """_raw_plan over a stream: reads chunks until the next window's reach is buffered."""
    chunks, buffer = iter(boundary_chunks), _Flags(np.zeros(0, dtype=bool))
    keep_start, ended = 0, False
    while True:
        while not ended and buffer.end <= _reach(keep_start, config):
            chunk = next(chunks, None)
            ended = chunk is None
            if not ended:
                buffer.append(_check_flags(chunk))
                if buffer.offset == 0:
                    buffer.flags[:1] = True  # position 0 is always allowed
        if ended and keep_start >= buffer.end:
            return
        window = _next_window(keep_start, buffer.end if ended else None, buffer, config)
        yield window
        keep_start = window.keep_end
        buffer.drop_before(keep_start - config.size)


def iter_word_windows(word_length_chunks: Iterable[np.ndarray],
                      config: WindowConfig) -> Iterator[Window]:
    """The plan of `plan_word_windows`, yielded lazily from chunks of (n_words,) int lengths."""
    return iter_windows((_word_starts(chunk) for chunk in word_length_chunks), config)


def take_kept(window_output: np.ndarray, window: Window) -> np.ndarray:
    """The kept part of one window's output: (window.length, ...) -> (keep_end - keep_start, ...).

    Raises:
        ValueError: the output's first dimension is not window.length.
    """
    output = np.asarray(window_output)
    if output.ndim == 0 or output.shape[0] != window.length:
        raise ValueError(f"output for {window} must have shape ({window.length}, ...), "
                         f"got {output.shape}")
    return output[window.kept]


def stitch(window_outputs: Sequence[np.ndarray], windows: Sequence[Window]) -> np.ndarray:
    """Join per-window outputs into one sequence, each position from the window keeping it.

    Args:
        window_outputs: window_outputs[k] has shape (windows[k].length, ...), e.g.
            (w, n_labels) float probabilities or (w,) int ids; trailing dims must agree.
        windows: a plan from plan_windows (keep ranges contiguous from 0).

    Returns:
        (n, ...) array, n = windows[-1].keep_end; (0,) float64 when there are no windows.

    Raises:
        ValueError: counts, shapes or keep ranges do not match a plan.
    """
    if len(window_outputs) != len(windows):
        raise ValueError(f"got {len(window_outputs)} outputs for {len(windows)} windows")
    if not windows:
        return np.zeros(0)
    expected = 0
    for window in windows:
        if window.keep_start != expected:
            raise ValueError(f"keep ranges must be contiguous from 0: {window} follows "
                             f"position {expected}")
        expected = window.keep_end
    pairs = zip(window_outputs, windows, strict=True)
    parts = [take_kept(output, window) for output, window in pairs]
    trailing = {part.shape[1:] for part in parts}
    if len(trailing) > 1:
        raise ValueError(f"window outputs must share trailing dims, got {sorted(trailing)}")
    return np.concatenate(parts)
