"""Training-time augmentation, numpy only: SpecAugment on features, additive noise on audio.

    from punctum.audio.augment import SpecAugmentConfig, spec_augment
    augmented = spec_augment(features, SpecAugmentConfig(), np.random.default_rng(0))

SpecAugment (Park et al. 2019) applies a time warp, then frequency masks and time masks to a
(T, D) feature matrix. The masks are filled with `mask_value` (0.0: the mean of normalised
features). The defaults are ESPnet's (warp window 5 frames, two frequency masks of up to 27
bands, two time masks of up to 40 frames), the setup the end-to-end paper trains with;
`max_time_ratio` keeps time masks from covering too much of short utterances.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NOISE_KINDS = ("white", "pink", "brown")


@dataclass(frozen=True)
class SpecAugmentConfig:
    """SpecAugment policy.

    Args:
        time_warp: maximum warp distance W in frames (0 turns time warping off).
        n_freq_masks: frequency masks per utterance.
        freq_mask_width: maximum width F of a frequency mask, in bands.
        n_time_masks: time masks per utterance.
        time_mask_width: maximum width of a time mask, in frames.
        max_time_ratio: a time mask covers at most this fraction of the frames (p).
        mask_value: value written into masked cells.
    """

    time_warp: int = 5
    n_freq_masks: int = 2
    freq_mask_width: int = 27
    n_time_masks: int = 2
    time_mask_width: int = 40
    max_time_ratio: float = 0.2
    mask_value: float = 0.0

    def __post_init__(self) -> None:
        for name in ("time_warp", "n_freq_masks", "freq_mask_width", "n_time_masks",
                     "time_mask_width"):
            if getattr(self, name) < 0:
                raise ValueError(f"SpecAugmentConfig.{name} must be >= 0, "
                                 f"got {getattr(self, name)}")
        if not 0.0 <= self.max_time_ratio <= 1.0:
            raise ValueError(f"SpecAugmentConfig.max_time_ratio must be in [0, 1], "
                             f"got {self.max_time_ratio}")


def resize_time(features: np.ndarray, n_frames: int) -> np.ndarray:
    """Stretch or squeeze (T, D) features to (n_frames, D) by linear interpolation in time;
    the first and last frames keep their values."""
    length = features.shape[0]
    if n_frames == length:
        return features.copy()
    positions = np.linspace(0.0, length - 1, n_frames)
    lower = np.floor(positions).astype(np.int64)
    upper = np.minimum(lower + 1, length - 1)
    weight = (positions - lower)[:, None]
    return features[lower] * (1.0 - weight) + features[upper] * weight


def time_warp(features: np.ndarray, window: int, rng: np.random.Generator) -> np.ndarray:
    """Move a random centre frame c by up to `window` frames, stretching both sides.

    Args:
        features: (T, D) float; unchanged when T <= 2 * window + 1 or window == 0.

    Returns:
        (T, D) array of the same dtype; frame 0 and frame T-1 keep their values.
    """
    length = features.shape[0]
    if window == 0 or length <= 2 * window + 1:
        return features.copy()
    centre = int(rng.integers(window, length - window))
    warped = centre + int(rng.integers(-window, window + 1))
    warped = min(max(warped, 1), length - 1)
    left = resize_time(features[:centre], warped)
    right = resize_time(features[centre:], length - warped)
    return np.concatenate([left, right]).astype(features.dtype, copy=False)


def _mask_spans(size: int, n_masks: int, max_width: int,
                rng: np.random.Generator) -> list[tuple[int, int]]:
    """(start, end) spans, each of width uniform in [0, max_width] and inside [0, size)."""
    spans = []
    for _ in range(n_masks):
        width = int(rng.integers(0, min(max_width, size) + 1))
        start = int(rng.integers(0, size - width + 1))
        spans.append((start, start + width))
    return spans


def spec_augment(features: np.ndarray, config: SpecAugmentConfig,
                 rng: np.random.Generator) -> np.ndarray:
    """Time warp, then frequency and time masks.

    Args:
        features: (T, D) float features (normalised, so that mask_value 0.0 is their mean).
        config: the policy.
        rng: the random source (seeded by the caller for reproducible batches).

    Returns:
        (T, D) augmented copy; the input is not modified. T = 0 returns an empty copy.
    """
    features = np.asarray(features)
    if features.ndim != 2:
        raise ValueError(f"expected features of shape (T, D), got shape {features.shape}")
    if features.shape[0] == 0:
        return features.copy()
    out = time_warp(features, config.time_warp, rng)
    for start, end in _mask_spans(out.shape[1], config.n_freq_masks, config.freq_mask_width,
                                  rng):
        out[:, start:end] = config.mask_value
    max_width = min(config.time_mask_width, int(config.max_time_ratio * out.shape[0]))
    for start, end in _mask_spans(out.shape[0], config.n_time_masks, max_width, rng):
        out[start:end] = config.mask_value
    return out


def make_noise(n_samples: int, kind: str, rng: np.random.Generator) -> np.ndarray:
    """Stationary noise with a white (flat), pink (1/f) or brown (1/f^2) power spectrum.

    Returns:
        (n_samples,) float32 with unit RMS (all zeros when n_samples is 0).
    """
    if kind not in NOISE_KINDS:
        raise ValueError(f"noise kind must be one of {', '.join(NOISE_KINDS)}, got {kind!r}")
    white = rng.standard_normal(n_samples)
    if kind != "white" and n_samples > 1:
        spectrum = np.fft.rfft(white)
        freqs = np.arange(spectrum.size, dtype=np.float64)
        freqs[0] = 1.0  # keeps the DC bin finite; it is removed below
        spectrum /= freqs ** (0.5 if kind == "pink" else 1.0)
        spectrum[0] = 0.0
        white = np.fft.irfft(spectrum, n=n_samples)
    power = np.sqrt(np.mean(white * white)) if n_samples else 1.0
    return (white / max(power, 1e-12)).astype(np.float32)


def add_noise(signal: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    """Mix noise into a signal at a signal-to-noise ratio.

    Args:
        signal: (n,) float.
        noise: (m,) float, tiled or cut to n samples.
        snr_db: 10 * log10(signal power / noise power) of the result.

    Returns:
        (n,) float32; scaled down as a whole if the mix would clip. A silent signal (or
        empty noise) is returned unchanged, since no SNR is defined for it.
    """
    signal = np.asarray(signal, dtype=np.float64)
    noise = np.asarray(noise, dtype=np.float64)
    signal_power = np.mean(signal * signal) if signal.size else 0.0
    if signal_power == 0.0 or noise.size == 0:
        return signal.astype(np.float32)
    noise = np.resize(noise, signal.size)
    noise_power = max(np.mean(noise * noise), 1e-20)
    scale = np.sqrt(signal_power / (noise_power * 10.0 ** (snr_db / 10.0)))
    mixed = signal + scale * noise
    peak = np.max(np.abs(mixed))
    if peak > 0.999:
        mixed *= 0.999 / peak
    return mixed.astype(np.float32)
