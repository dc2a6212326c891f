"""Log-mel filterbank features and mean/variance normalisation, numpy only.

    from punctum.audio.features import FeatureConfig, log_mel
    features = log_mel(samples)               # (n_frames, 80) float32

The defaults follow the end-to-end paper (80-dim log-mel) with a 25 ms Hann window and a
10 ms hop at 16 kHz. The computation matches ``librosa.feature.melspectrogram`` (Slaney mel
scale and area normalisation, centred frames padded with zeros, power spectrum) followed by a
natural log with a floor. Stated tolerance: the log-mel values agree with librosa within an
absolute difference of 1e-4 (tests/test_audio_features.py, on tones, chirps, noise and
inputs shorter than one frame; the observed difference is about 2e-6, the float32 rounding
of librosa's spectrum; this module computes in float64 and casts the result).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from punctum.audio.io import SAMPLE_RATE

MEL_SCALES = ("slaney", "htk")
NORMALISATIONS = ("none", "utterance", "global")


@dataclass(frozen=True)
class FeatureConfig:
    """Log-mel filterbank settings.

    Args:
        sample_rate: input sample rate in Hz.
        n_fft: FFT size in samples (400 = 25 ms at 16 kHz).
        hop_length: frame step in samples (160 = 10 ms).
        win_length: Hann window length in samples (<= n_fft; centred in the FFT frame).
        n_mels: mel bands.
        fmin, fmax: band edges in Hz (fmax None = sample_rate / 2).
        mel_scale: "slaney" (librosa's default) or "htk".
        log_floor: added before the log so silence stays finite.
        center: pad n_fft // 2 zeros on both sides so frame t is centred on sample t * hop.
    """

    sample_rate: int = SAMPLE_RATE
    n_fft: int = 400
    hop_length: int = 160
    win_length: int = 400
    n_mels: int = 80
    fmin: float = 0.0
    fmax: float | None = None
    mel_scale: str = "slaney"
    log_floor: float = 1e-10
    center: bool = True

    def __post_init__(self) -> None:
        nyquist = self.sample_rate / 2
        fmax = nyquist if self.fmax is None else self.fmax
        checks = {
            "sample_rate": (self.sample_rate > 0, "> 0"),
            "n_fft": (self.n_fft >= 2, ">= 2"),
            "hop_length": (self.hop_length >= 1, ">= 1"),
            "win_length": (1 <= self.win_length <= self.n_fft, f"in [1, n_fft={self.n_fft}]"),
            "n_mels": (self.n_mels >= 1, ">= 1"),
            "fmin": (0 <= self.fmin < fmax, f"in [0, fmax={fmax})"),
            "fmax": (self.fmin < fmax <= nyquist, f"in (fmin, {nyquist}] or None"),
            "mel_scale": (self.mel_scale in MEL_SCALES, f"one of {', '.join(MEL_SCALES)}"),
            "log_floor": (self.log_floor > 0, "> 0"),
        }
        for name, (ok, allowed) in checks.items():
            if not ok:
                raise ValueError(f"FeatureConfig.{name} must be {allowed}, got "
                                 f"{getattr(self, name)!r}")

    @property
    def frame_rate(self) -> float:
        """Frames per second."""
        return self.sample_rate / self.hop_length


def hz_to_mel(hz: np.ndarray, scale: str = "slaney") -> np.ndarray:
    """Frequencies in Hz to mels (Slaney: linear below 1 kHz, log above; or HTK)."""
    hz = np.asarray(hz, dtype=np.float64)
    if scale == "htk":
        return 2595.0 * np.log10(1.0 + hz / 700.0)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    linear = hz / f_sp
    with np.errstate(divide="ignore"):
        logarithmic = min_log_mel + np.log(np.maximum(hz, 1e-12) / min_log_hz) / logstep
    return np.where(hz >= min_log_hz, logarithmic, linear)


def mel_to_hz(mel: np.ndarray, scale: str = "slaney") -> np.ndarray:
    """Inverse of `hz_to_mel`."""
    mel = np.asarray(mel, dtype=np.float64)
    if scale == "htk":
        return 700.0 * (10.0 ** (mel / 2595.0) - 1.0)
    f_sp, min_log_hz = 200.0 / 3, 1000.0
    min_log_mel, logstep = min_log_hz / f_sp, np.log(6.4) / 27.0
    return np.where(mel >= min_log_mel, min_log_hz * np.exp(logstep * (mel - min_log_mel)),
                    f_sp * mel)


@functools.lru_cache(maxsize=8)
def mel_filterbank(config: FeatureConfig = FeatureConfig()) -> np.ndarray:
    """Triangular mel filters with Slaney area normalisation (built once per config).

    Returns:
        (n_mels, n_fft // 2 + 1) float64, read-only; row m weights the power-spectrum bins
        of band m.
    """
    fmax = config.sample_rate / 2 if config.fmax is None else config.fmax
    fft_hz = np.linspace(0, config.sample_rate / 2, config.n_fft // 2 + 1)
    edges_mel = np.linspace(hz_to_mel(config.fmin, config.mel_scale),
                            hz_to_mel(fmax, config.mel_scale), config.n_mels + 2)
    edges_hz = mel_to_hz(edges_mel, config.mel_scale)
    widths = np.diff(edges_hz)
    ramps = edges_hz[:, None] - fft_hz[None, :]
    lower = -ramps[:-2] / widths[:-1, None]
    upper = ramps[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(lower, upper))
    weights *= (2.0 / (edges_hz[2:] - edges_hz[:-2]))[:, None]  # equal area per band
    weights.setflags(write=False)  # shared by every caller through the cache
    return weights


def _window(config: FeatureConfig) -> np.ndarray:
    """Periodic Hann window of win_length, zero-padded to n_fft (centred)."""
    n = np.arange(config.win_length)
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * n / config.win_length)
    left = (config.n_fft - config.win_length) // 2
    return np.pad(window, (left, config.n_fft - config.win_length - left))


def power_spectrogram(samples: np.ndarray, config: FeatureConfig = FeatureConfig()) -> np.ndarray:
    """|STFT|^2 of a mono signal.

    Args:
        samples: (n,) float signal at config.sample_rate.

    Returns:
        (n_frames, n_fft // 2 + 1) float64, n_frames = 1 + n // hop_length when centred
        (0 frames for an empty signal).
    """
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim != 1:
        raise ValueError(f"expected a mono signal of shape (n,), got shape {samples.shape}")
    if config.center and samples.size:
        samples = np.pad(samples, config.n_fft // 2)
    if samples.size < config.n_fft:
        return np.zeros((0, config.n_fft // 2 + 1))
    frames = np.lib.stride_tricks.sliding_window_view(samples, config.n_fft)
    frames = frames[::config.hop_length] * _window(config)
    spectrum = np.fft.rfft(frames, n=config.n_fft, axis=1)
    return spectrum.real ** 2 + spectrum.imag ** 2


def log_mel(samples: np.ndarray, config: FeatureConfig = FeatureConfig(),
            filterbank: np.ndarray | None = None) -> np.ndarray:
    """Log-mel filterbank features.

    Args:
        samples: (n,) float signal at config.sample_rate.
        config: feature settings.
        filterbank: a precomputed `mel_filterbank(config)` (saves its cost per call).

    Returns:
        (n_frames, n_mels) float32, natural log of mel power + config.log_floor.
    """
    if filterbank is None:
        filterbank = mel_filterbank(config)
    mel = power_spectrogram(samples, config) @ filterbank.T
    return np.log(mel + config.log_floor).astype(np.float32)


def normalize_utterance(features: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Per-utterance mean/variance normalisation of each feature dimension.

    Args:
        features: (T, D) float.

    Returns:
        (T, D) float32 with zero mean and unit variance per column (T = 0 gives (0, D)).
    """
    features = np.asarray(features, dtype=np.float32)
    if features.shape[0] == 0:
        return features
    mean = features.mean(axis=0)
    std = features.std(axis=0)
    return ((features - mean) / np.maximum(std, eps)).astype(np.float32)


@dataclass
class GlobalStats:
    """Running per-dimension mean and variance over a corpus (for global normalisation).

    Accumulate with `update` over every utterance's (T, D) features, then `normalize`.
    Saved as JSON next to a model so inference normalises exactly as training did.
    """

    count: int = 0
    total: np.ndarray = field(default_factory=lambda: np.zeros(0))
    total_squares: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def update(self, features: np.ndarray) -> None:
        """Add a (T, D) block of frames."""
        features = np.asarray(features, dtype=np.float64)
        if self.count == 0 and self.total.size == 0:
            self.total = np.zeros(features.shape[1])
            self.total_squares = np.zeros(features.shape[1])
        if features.shape[1] != self.total.size:
            raise ValueError(f"expected {self.total.size} feature dimensions, "
                             f"got {features.shape[1]}")
        self.count += features.shape[0]
        self.total += features.sum(axis=0)
        self.total_squares += (features * features).sum(axis=0)

    @property
    def mean(self) -> np.ndarray:
        """(D,) float64."""
        return self.total / max(self.count, 1)

    @property
    def std(self) -> np.ndarray:
        """(D,) float64 population standard deviation."""
        variance = self.total_squares / max(self.count, 1) - self.mean ** 2
        return np.sqrt(np.maximum(variance, 0.0))

    def normalize(self, features: np.ndarray, eps: float = 1e-5) -> np.ndarray:
        """(T, D) -> (T, D) float32 with the corpus mean removed and divided by its std."""
        if self.count == 0:
            raise ValueError("GlobalStats is empty: call update() on training features first")
        normalized = (np.asarray(features, dtype=np.float64) - self.mean) / np.maximum(
            self.std, eps)
        return normalized.astype(np.float32)

    def save(self, path: str | Path) -> None:
        data = {"count": self.count, "total": self.total.tolist(),
                "total_squares": self.total_squares.tolist()}
        Path(path).write_text(json.dumps(data), encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> GlobalStats:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(int(data["count"]), np.asarray(data["total"], dtype=np.float64),
                   np.asarray(data["total_squares"], dtype=np.float64))


def normalize(features: np.ndarray, mode: str = "utterance",
              stats: GlobalStats | None = None) -> np.ndarray:
    """Mean/variance normalisation: "none", "utterance" or "global" (needs `stats`).

    Args:
        features: (T, D) float.

    Returns:
        (T, D) float32.
    """
    if mode not in NORMALISATIONS:
        raise ValueError(f"normalisation must be one of {', '.join(NORMALISATIONS)}, "
                         f"got {mode!r}")
    if mode == "utterance":
        return normalize_utterance(features)
    if mode == "global":
        if stats is None:
            raise ValueError("global normalisation needs GlobalStats (stats=...)")
        return stats.normalize(features)
    return np.asarray(features, dtype=np.float32)
