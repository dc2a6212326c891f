"""SpecAugment masks and time warp; additive noise at an exact SNR."""

import numpy as np
import pytest

from punctum.audio.augment import (
    SpecAugmentConfig,
    add_noise,
    make_noise,
    resize_time,
    spec_augment,
    time_warp,
)


def _features(frames=200, dims=80):
    return np.random.default_rng(0).standard_normal((frames, dims)).astype(np.float32) + 5.0


def test_identity_policy_returns_an_equal_copy():
    features = _features()
    config = SpecAugmentConfig(time_warp=0, n_freq_masks=0, n_time_masks=0)
    out = spec_augment(features, config, np.random.default_rng(0))
    assert np.array_equal(out, features) and out is not features


def test_masks_stay_within_widths_and_the_input_is_untouched():
    features = _features()
    before = features.copy()
    config = SpecAugmentConfig(time_warp=0, n_freq_masks=2, freq_mask_width=10,
                               n_time_masks=2, time_mask_width=15, max_time_ratio=1.0)
    for seed in range(20):
        out = spec_augment(features, config, np.random.default_rng(seed))
        masked_bands = np.all(out == 0.0, axis=0).sum()
        masked_frames = np.all(out == 0.0, axis=1).sum()
        assert masked_bands <= 2 * 10 and masked_frames <= 2 * 15
        assert out.shape == features.shape and out.dtype == features.dtype
        unmasked = (out != 0.0)
        assert np.array_equal(out[unmasked], features[unmasked])
    assert np.array_equal(features, before)


def test_time_mask_ratio_limits_short_utterances():
    features = _features(frames=20)
    config = SpecAugmentConfig(time_warp=0, n_freq_masks=0, n_time_masks=3,
                               time_mask_width=100, max_time_ratio=0.1)
    for seed in range(20):
        out = spec_augment(features, config, np.random.default_rng(seed))
        assert np.all(out == 0.0, axis=1).sum() <= 3 * 2


def test_same_seed_same_result_and_masks_happen():
    features = _features()
    config = SpecAugmentConfig()
    a = spec_augment(features, config, np.random.default_rng(7))
    b = spec_augment(features, config, np.random.default_rng(7))
    assert np.array_equal(a, b)
    outs = [spec_augment(features, config, np.random.default_rng(s)) for s in range(10)]
    assert any(np.any(np.all(o == 0.0, axis=0)) for o in outs)


def test_time_warp_keeps_shape_and_end_frames():
    features = np.cumsum(np.ones((100, 3)), axis=0)  # a ramp: warping keeps it monotone
    for seed in range(10):
        warped = time_warp(features, 5, np.random.default_rng(seed))
        assert warped.shape == features.shape
        assert np.allclose(warped[0], features[0]) and np.allclose(warped[-1], features[-1])
        assert np.all(np.diff(warped[:, 0]) >= 0)
    short = _features(frames=8)
    assert np.array_equal(time_warp(short, 5, np.random.default_rng(0)), short)


def test_resize_time():
    ramp = np.arange(10, dtype=np.float64)[:, None]
    assert np.allclose(resize_time(ramp, 10), ramp)
    assert resize_time(ramp, 20).shape == (20, 1)
    assert resize_time(ramp, 20)[0, 0] == 0 and resize_time(ramp, 20)[-1, 0] == 9


def test_spec_augment_bad_and_empty_input():
    config = SpecAugmentConfig()
    assert spec_augment(np.zeros((0, 80)), config, np.random.default_rng(0)).shape == (0, 80)
    with pytest.raises(ValueError, match="shape"):
        spec_augment(np.zeros(10), config, np.random.default_rng(0))
    with pytest.raises(ValueError, match="max_time_ratio"):
        SpecAugmentConfig(max_time_ratio=2.0)
    with pytest.raises(ValueError, match="time_warp"):
        SpecAugmentConfig(time_warp=-1)


@pytest.mark.parametrize("snr_db", [0.0, 10.0, 25.0])
@pytest.mark.parametrize("kind", ["white", "pink", "brown"])
def test_noise_is_mixed_at_the_requested_snr(kind, snr_db):
    rng = np.random.default_rng(1)
    t = np.arange(16000) / 16000
    signal = 0.1 * np.sin(2 * np.pi * 300 * t)
    mixed = add_noise(signal, make_noise(len(signal), kind, rng), snr_db)
    noise = mixed - signal
    measured = 10 * np.log10(np.mean(signal ** 2) / np.mean(noise ** 2))
    assert abs(measured - snr_db) < 0.01


def test_noise_colours_have_their_slopes():
    rng = np.random.default_rng(2)
    slopes = {}
    for kind in ("white", "pink", "brown"):
        noise = make_noise(2 ** 16, kind, rng)
        assert abs(np.sqrt(np.mean(noise.astype(np.float64) ** 2)) - 1) < 1e-3
        power = np.abs(np.fft.rfft(noise)) ** 2
        freqs = np.arange(power.size)
        band = (freqs > 100) & (freqs < 10000)
        slopes[kind] = np.polyfit(np.log(freqs[band]), np.log(power[band]), 1)[0]
    assert abs(slopes["white"]) < 0.1
    assert abs(slopes["pink"] + 1) < 0.1
    assert abs(slopes["brown"] + 2) < 0.1


def test_add_noise_edge_cases():
    silent = np.zeros(100)
    assert np.array_equal(add_noise(silent, np.ones(100), 10.0), silent)
    loud = np.full(100, 0.99)
    assert np.abs(add_noise(loud, np.ones(100), 0.0)).max() <= 0.999 + 1e-6
    assert add_noise(np.ones(10) * 0.1, np.ones(3), 20.0).shape == (10,)
    assert make_noise(0, "white", np.random.default_rng(0)).size == 0
    with pytest.raises(ValueError, match="noise kind"):
        make_noise(10, "blue", np.random.default_rng(0))
