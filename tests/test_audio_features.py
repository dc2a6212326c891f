"""Log-mel features against librosa (the stated tolerance), normalisation."""

import numpy as np
import pytest

from punctum.audio.features import (
    FeatureConfig,
    GlobalStats,
    log_mel,
    mel_filterbank,
    normalize,
    normalize_utterance,
    power_spectrogram,
)

librosa = pytest.importorskip("librosa")

TOLERANCE = 1e-4  # stated in punctum/audio/features.py
RATE = 16000


def _signals():
    rng = np.random.default_rng(0)
    t = np.arange(RATE * 2) / RATE
    chirp = np.sin(2 * np.pi * (100 * t + 1700 * t ** 2))
    return {
        "tone": 0.5 * np.sin(2 * np.pi * 440 * t),
        "chirp": 0.3 * chirp,
        "noise": 0.1 * rng.standard_normal(RATE),
        "tones+noise": 0.2 * np.sin(2 * np.pi * 3000 * t) + 0.01 * rng.standard_normal(t.size),
        "silence": np.zeros(RATE // 2),
        "odd length": 0.1 * rng.standard_normal(12345),
        "shorter than a frame": 0.1 * rng.standard_normal(300),
        "one sample": np.array([0.3]),
    }


def _reference(signal, config):
    mel = librosa.feature.melspectrogram(
        y=signal.astype(np.float32), sr=config.sample_rate, n_fft=config.n_fft,
        hop_length=config.hop_length, win_length=config.win_length, window="hann",
        center=config.center, pad_mode="constant", power=2.0, n_mels=config.n_mels,
        fmin=config.fmin, fmax=config.fmax, htk=config.mel_scale == "htk", norm="slaney")
    return np.log(mel + config.log_floor).T


@pytest.mark.filterwarnings("ignore:n_fft=.*is too large")
@pytest.mark.parametrize("name", list(_signals()))
def test_log_mel_matches_librosa(name):
    signal = _signals()[name].astype(np.float32)
    config = FeatureConfig()
    ours = log_mel(signal, config)
    reference = _reference(signal, config)
    assert ours.shape == reference.shape == (1 + len(signal) // 160, 80)
    assert ours.dtype == np.float32
    assert np.abs(ours - reference).max() <= TOLERANCE


@pytest.mark.filterwarnings("ignore:n_fft=.*is too large")
@pytest.mark.parametrize("config", [
    FeatureConfig(mel_scale="htk", fmin=20.0, fmax=7600.0),
    FeatureConfig(n_fft=512, win_length=400, n_mels=40),
    FeatureConfig(sample_rate=8000, n_fft=200, win_length=200, hop_length=80, n_mels=64),
])
def test_other_settings_match_librosa(config):
    signal = _signals()["chirp"][: config.sample_rate].astype(np.float32)
    assert np.abs(log_mel(signal, config) - _reference(signal, config)).max() <= TOLERANCE


def test_filterbank_matches_librosa():
    ours = mel_filterbank(FeatureConfig())
    reference = librosa.filters.mel(sr=RATE, n_fft=400, n_mels=80)
    assert ours.shape == (80, 201)
    assert np.abs(ours - reference).max() < 1e-7


def test_empty_signal_and_bad_input():
    assert log_mel(np.zeros(0)).shape == (0, 80)
    assert power_spectrogram(np.zeros(0), FeatureConfig(center=False)).shape == (0, 201)
    with pytest.raises(ValueError, match="mono"):
        log_mel(np.zeros((10, 2)))


@pytest.mark.parametrize("field,value", [("n_mels", 0), ("win_length", 500), ("fmax", 9000.0),
                                         ("mel_scale", "bark"), ("hop_length", 0)])
def test_config_validation_names_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        FeatureConfig(**{field: value})


def test_utterance_normalisation():
    features = np.random.default_rng(1).normal(3.0, 2.0, size=(50, 80))
    normalized = normalize_utterance(features)
    assert normalized.dtype == np.float32
    assert np.allclose(normalized.mean(axis=0), 0, atol=1e-5)
    assert np.allclose(normalized.std(axis=0), 1, atol=1e-4)
    assert normalize_utterance(np.zeros((0, 80))).shape == (0, 80)
    constant = normalize_utterance(np.ones((5, 3)))
    assert np.all(np.isfinite(constant)) and np.allclose(constant, 0)


def test_global_normalisation_equals_pooled_statistics(tmp_path):
    rng = np.random.default_rng(2)
    blocks = [rng.normal(i, 1 + i, size=(10 + 7 * i, 4)) for i in range(3)]
    stats = GlobalStats()
    for block in blocks:
        stats.update(block)
    pooled = np.concatenate(blocks)
    assert stats.count == len(pooled)
    assert np.allclose(stats.mean, pooled.mean(axis=0))
    assert np.allclose(stats.std, pooled.std(axis=0))
    stats.save(tmp_path / "stats.json")
    loaded = GlobalStats.load(tmp_path / "stats.json")
    assert np.allclose(normalize(blocks[0], "global", loaded),
                       (blocks[0] - pooled.mean(axis=0)) / pooled.std(axis=0), atol=1e-5)
    with pytest.raises(ValueError, match="dimensions"):
        stats.update(np.zeros((2, 5)))
    with pytest.raises(ValueError, match="GlobalStats"):
        normalize(blocks[0], "global")
    with pytest.raises(ValueError, match="empty"):
        GlobalStats().normalize(blocks[0])
    with pytest.raises(ValueError, match="normalisation"):
        normalize(blocks[0], "speaker")
    assert np.array_equal(normalize(blocks[0], "none"), blocks[0].astype(np.float32))
