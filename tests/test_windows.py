"""Tests for punctum.windows: exact plans, partition/context invariants, stitching, streaming."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from punctum.windows import (
    Window,
    WindowConfig,
    iter_windows,
    iter_word_windows,
    plan_windows,
    plan_word_windows,
    stitch,
    take_kept,
)

SMALL = WindowConfig(size=10, left=3, right=2)
CONFIGS = [
    WindowConfig(),
    SMALL,
    WindowConfig(size=7, left=0, right=0),
    WindowConfig(size=6, left=5, right=0),
    WindowConfig(size=6, left=0, right=5),
    WindowConfig(size=12, strategy="half"),
    WindowConfig(size=10, strategy="none"),
]
FEW = settings(max_examples=60, deadline=None)


def check_plan(windows, n, config, word_cuts=False):
    """Keep ranges partition [0, n) in order, windows fit, kept positions have L/R context,
    the last window ends at n and, with overlap and cuts anywhere, is full."""
    if n == 0:
        assert windows == []
        return
    assert windows[0].keep_start == 0 and windows[-1].keep_end == windows[-1].end == n
    for before, after in itertools.pairwise(windows):
        assert before.keep_end == after.keep_start
    left, right = config.effective_left, config.effective_right
    for window in windows:
        assert 0 <= window.start and window.end <= n and window.length <= config.size
        assert window.keep_start - window.start >= left or window.start == 0
        assert window.end - window.keep_end >= right or window.end == n
    if config.strategy == "none":
        assert all(w.start == w.keep_start and w.end == w.keep_end for w in windows)
    elif not word_cuts:
        assert windows[-1].length == min(n, config.size)


def positions(windows):
    """What an exact position-echo model outputs for each window: (w.length,) absolute indices."""
    return [np.arange(w.start, w.end) for w in windows]


def local_sums(tokens, radius):
    """(T,) -> (T,): sum of tokens within +-radius, truncated at the ends of `tokens`."""
    padded = np.concatenate([[0], np.cumsum(tokens)])
    index = np.arange(len(tokens))
    upper = np.minimum(index + radius + 1, len(tokens))
    return padded[upper] - padded[np.maximum(index - radius, 0)]


def word_starts(lengths):
    lengths = np.asarray(lengths, dtype=np.int64)
    flags = np.zeros(int(np.sum(lengths)), dtype=bool)
    starts = np.cumsum(lengths) - lengths
    flags[starts[starts < len(flags)]] = True
    return flags


def cuts_of(window):
    return (window.start, window.end, window.keep_start, window.keep_end)


@st.composite
def configs(draw):
    size = draw(st.integers(2, 30))
    strategy = draw(st.sampled_from(["double_overlap", "double_overlap", "half", "none"]))
    left = draw(st.integers(0, size - 2))
    right = draw(st.integers(0, size - 1 - left))
    return WindowConfig(size=size, left=left, right=right, strategy=strategy)


# --- configuration ---------------------------------------------------------------------------

def test_default_config_follows_the_paper():
    config = WindowConfig()
    assert (config.size, config.effective_left, config.effective_right) == (120, 40, 15)
    assert config.stride == 65


@pytest.mark.parametrize("kwargs, field", [
    ({"size": 1}, "size"),
    ({"size": True}, "size"),
    ({"size": 12.0}, "size"),
    ({"left": -1}, "left"),
    ({"right": -2}, "right"),
    ({"size": 10, "left": 5, "right": 5}, "left \\+ WindowConfig.right"),
    ({"strategy": "triple"}, "strategy"),
])
def test_invalid_config_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"WindowConfig.{field}"):
        WindowConfig(**kwargs)


def test_none_and_half_ignore_left_and_right():
    none = WindowConfig(size=10, left=50, right=50, strategy="none")
    half = WindowConfig(size=10, left=50, right=50, strategy="half")
    assert (none.effective_left, none.effective_right, none.stride) == (0, 0, 10)
    assert (half.effective_left, half.effective_right, half.stride) == (2, 2, 6)


@pytest.mark.parametrize("kwargs, field", [
    ({"start": -1, "end": 3, "keep_start": 0, "keep_end": 1}, "Window.start"),
    ({"start": 0, "end": 3, "keep_start": 2, "keep_end": 2}, "keep_start < keep_end"),
    ({"start": 1, "end": 3, "keep_start": 0, "keep_end": 2}, "start <= keep_start"),
    ({"start": 0, "end": 3, "keep_start": 0, "keep_end": 4}, "keep_end <= end"),
])
def test_invalid_window_raises(kwargs, field):
    with pytest.raises(ValueError, match=field):
        Window(**kwargs)


# --- exact plans -----------------------------------------------------------------------------

def test_empty_and_one_token():
    assert plan_windows(0, SMALL) == []
    assert plan_windows(1, SMALL) == [Window(0, 1, 0, 1)]
    assert stitch([], []).shape == (0,)


@pytest.mark.parametrize("n", [1, 9, 10])
def test_short_input_is_the_single_pass(n):
    tokens = np.random.default_rng(n).integers(0, 100, n)
    windows = plan_windows(n, SMALL)
    assert windows == [Window(0, n, 0, n)]
    outputs = [local_sums(tokens[w.start:w.end], 3) for w in windows]
    np.testing.assert_array_equal(stitch(outputs, windows), local_sums(tokens, 3))


def test_one_token_longer_than_the_window():
    assert plan_windows(11, SMALL) == [Window(0, 10, 0, 8), Window(1, 11, 8, 11)]


def test_several_windows_exact():
    # stride 5; the last window is moved left to [13, 23) instead of holding only [18, 23)
    assert plan_windows(23, SMALL) == [
        Window(0, 10, 0, 8), Window(5, 15, 8, 13), Window(10, 20, 13, 18), Window(13, 23, 18, 23)]


def test_half_keeps_the_middle_half():
    config = WindowConfig(size=12, strategy="half")
    assert plan_windows(30, config) == [
        Window(0, 12, 0, 9), Window(6, 18, 9, 15), Window(12, 24, 15, 21), Window(18, 30, 21, 30)]


def test_none_cuts_consecutive_windows():
    config = WindowConfig(size=10, strategy="none")
    assert plan_windows(23, config) == [
        Window(0, 10, 0, 10), Window(10, 20, 10, 20), Window(20, 23, 20, 23)]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("extra", [-1, 0, 1, 7])
@pytest.mark.parametrize("multiple", [1, 10])
def test_invariants_at_the_window_length_and_beyond(config, extra, multiple):
    n = multiple * config.size + extra
    windows = plan_windows(n, config)
    check_plan(windows, n, config)
    np.testing.assert_array_equal(stitch(positions(windows), windows), np.arange(n))
    if n <= config.size:
        assert windows == [Window(0, n, 0, n)]


def test_paper_config_on_many_windows():
    windows = plan_windows(10 * 120 + 7, WindowConfig())
    check_plan(windows, 1207, WindowConfig())
    middle = windows[1:-1]
    assert {w.keep_end - w.keep_start for w in middle} == {65}
    assert {(w.keep_start - w.start, w.end - w.keep_end) for w in middle} == {(40, 15)}


# --- properties ------------------------------------------------------------------------------

@FEW
@given(config=configs(), n=st.integers(0, 150))
def test_stitching_returns_every_position_once(config, n):
    windows = plan_windows(n, config)
    check_plan(windows, n, config)
    np.testing.assert_array_equal(stitch(positions(windows), windows), np.arange(n))


@FEW
@given(config=configs(), lengths=st.lists(st.integers(0, 12), max_size=40))
def test_stitching_with_word_boundaries(config, lengths):
    windows = plan_word_windows(np.array(lengths, dtype=np.int64), config)
    n = sum(lengths)
    check_plan(windows, n, config, word_cuts=True)
    np.testing.assert_array_equal(stitch(positions(windows), windows), np.arange(n))


@FEW
@given(config=configs(), data=st.data())
def test_local_model_equals_the_single_pass(config, data):
    """A model seeing only +-r tokens (r <= min(L, R)) is unchanged by double overlap."""
    n = data.draw(st.integers(0, 120), label="n")
    radius = data.draw(st.integers(0, min(config.effective_left, config.effective_right)))
    tokens = np.random.default_rng(n).integers(-50, 50, n)
    lengths = data.draw(st.none() | st.lists(st.integers(1, 6), min_size=n, max_size=n))
    flags = None if lengths is None else word_starts(lengths)[:n]
    windows = plan_windows(n, config, flags)
    outputs = [local_sums(tokens[w.start:w.end], radius) for w in windows]
    np.testing.assert_array_equal(stitch(outputs, windows), local_sums(tokens, radius))


def test_local_model_with_label_dimension():
    tokens = np.random.default_rng(0).normal(size=(500, 3))
    windows = plan_windows(500, SMALL)
    outputs = [np.stack([local_sums(tokens[w.start:w.end, j], 2) for j in range(3)], axis=1)
               for w in windows]
    expected = np.stack([local_sums(tokens[:, j], 2) for j in range(3)], axis=1)
    np.testing.assert_allclose(stitch(outputs, windows), expected)


def test_no_overlap_is_not_equivalent():
    """The same check fails without overlap, so the equivalence test can detect a bad plan."""
    tokens = np.arange(1, 31)
    windows = plan_windows(30, WindowConfig(size=10, strategy="none"))
    outputs = [local_sums(tokens[w.start:w.end], 1) for w in windows]
    assert not np.array_equal(stitch(outputs, windows), local_sums(tokens, 1))


# --- boundaries ------------------------------------------------------------------------------

def test_word_boundaries_exact():
    windows = plan_word_windows(np.full(12, 2), SMALL)
    assert windows == [Window(0, 10, 0, 8), Window(4, 14, 8, 12), Window(8, 18, 12, 16),
                       Window(12, 22, 16, 20), Window(14, 24, 20, 24)]


@FEW
@given(config=configs(), data=st.data())
def test_short_words_are_never_cut(config, data):
    """Words of at most (stride + 2) // 3 subwords: every cut falls between words."""
    longest = (config.stride + 2) // 3
    lengths = data.draw(st.lists(st.integers(0, longest), max_size=60), label="lengths")
    windows = plan_word_windows(np.array(lengths, dtype=np.int64), config)
    allowed = set(np.flatnonzero(word_starts(lengths))) | {0, sum(lengths)}
    assert {cut for w in windows for cut in cuts_of(w)} <= allowed


@FEW
@given(config=configs(), lengths=st.lists(
    st.integers(1, 3) | st.integers(1, 90), min_size=1, max_size=30))
def test_cuts_inside_words_only_near_long_words(config, lengths):
    """A window cutting inside a word has a word of more than (stride + 2) // 3 subwords
    within `size` positions of its start."""
    windows = plan_word_windows(np.array(lengths), config)
    n = sum(lengths)
    allowed = set(np.flatnonzero(word_starts(lengths))) | {0, n}
    long_word = np.repeat(np.array(lengths) > (config.stride + 2) // 3, lengths)
    for window in windows:
        if not set(cuts_of(window)) - {window.keep_start} <= allowed:
            assert long_word[window.start:window.start + config.size].any(), window
    check_plan(windows, n, config, word_cuts=True)


def test_word_longer_than_the_window_is_cut_inside():
    lengths = np.array([1] * 12 + [35] + [2] * 10)
    windows = plan_word_windows(lengths, SMALL)
    check_plan(windows, int(lengths.sum()), SMALL, word_cuts=True)
    inside = {cut for w in windows for cut in cuts_of(w)} - set(np.cumsum(lengths)) - {0}
    assert inside and all(12 < cut < 47 for cut in inside)
    assert windows[1] == Window(5, 12, 8, 10)  # ends before the long word where it can


def test_plan_windows_ignores_a_missing_first_boundary():
    flags = np.arange(25) % 2 == 0
    windows = plan_windows(25, SMALL, flags)
    flags[0] = False
    assert plan_windows(25, SMALL, flags) == windows
    assert {cut for w in windows for cut in cuts_of(w)} <= {*range(0, 26, 2), 25}


def test_bad_lengths_and_boundaries_raise():
    with pytest.raises(ValueError, match="n must be >= 0"):
        plan_windows(-1, SMALL)
    with pytest.raises(TypeError, match="n must be an integer"):
        plan_windows(2.5, SMALL)
    with pytest.raises(ValueError, match=r"shape \(4,\)"):
        plan_windows(4, SMALL, np.ones(3, dtype=bool))
    with pytest.raises(TypeError, match="bool"):
        plan_windows(3, SMALL, np.ones(3))
    with pytest.raises(ValueError, match="word_lengths must be >= 0"):
        plan_word_windows(np.array([2, -1]), SMALL)
    with pytest.raises(TypeError, match="integer"):
        plan_word_windows(np.array([1.5]), SMALL)


# --- stitch errors ---------------------------------------------------------------------------

def test_stitch_rejects_outputs_that_do_not_match_the_plan():
    windows = plan_windows(23, SMALL)
    outputs = positions(windows)
    with pytest.raises(ValueError, match="3 outputs for 4 windows"):
        stitch(outputs[:3], windows)
    with pytest.raises(ValueError, match=r"shape \(10, \.\.\.\), got \(9,\)"):
        stitch(outputs[:1] + [outputs[1][:-1]] + outputs[2:], windows)
    with pytest.raises(ValueError, match="trailing dims"):
        stitch([np.zeros((10, 2))] * 3 + [np.zeros((10, 3))], windows)
    with pytest.raises(ValueError, match="contiguous"):
        stitch(outputs[1:], windows[1:])
    with pytest.raises(ValueError, match="shape"):
        take_kept(np.float64(1.0), windows[0])


# --- streaming -------------------------------------------------------------------------------

def split(values, cut_points):
    edges = [0, *sorted(set(cut_points)), len(values)]
    return [values[a:b] for a, b in itertools.pairwise(edges)]


@FEW
@given(config=configs(), data=st.data())
def test_streaming_matches_plan_word_windows(config, data):
    lengths = np.array(data.draw(st.lists(st.integers(0, 40), max_size=60)), dtype=np.int64)
    cut_points = data.draw(st.lists(st.integers(0, len(lengths)), max_size=8))
    chunks = split(lengths, cut_points)
    assert list(iter_word_windows(chunks, config)) == plan_word_windows(lengths, config)


@FEW
@given(config=configs(), n=st.integers(0, 200), cut_points=st.lists(st.integers(0, 200)))
def test_streaming_without_boundaries_matches_plan_windows(config, n, cut_points):
    chunks = split(np.ones(n, dtype=bool), [c for c in cut_points if c <= n])
    assert list(iter_windows(chunks, config)) == plan_windows(n, config)


def test_streaming_reads_only_a_bounded_lookahead():
    pulled = []

    def endless_words():
        for index in itertools.count():
            pulled.append(index)
            yield np.array([1, 2, 3, 1] * 5)  # 35 subwords per chunk

    config = WindowConfig()
    windows = list(itertools.islice(iter_word_windows(endless_words(), config), 200))
    assert windows[-1].keep_end > 12_000
    assert len(pulled) * 35 <= windows[-1].end + 3 * config.size + 35


def test_streaming_long_input_matches():
    lengths = np.random.default_rng(1).integers(1, 4, 60_000)
    chunks = np.array_split(lengths, 97)
    assert list(iter_word_windows(chunks, WindowConfig())) == plan_word_windows(
        lengths, WindowConfig())
