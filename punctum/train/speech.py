"""Speech training data for CTC models: manifests -> cached log-mels -> duration batches.

A speech recipe's [data] table (model kind "ctc_encoder"):

    [data]
    train = ["corpora/synth/train/manifest.jsonl"]      # manifests or LJSpeech-style tables
    dev = "corpora/synth/dev/manifest.jsonl"
    max_batch_seconds = 120.0
    [data.spec_augment]
    n_time_masks = 2

Features (80-dim log-mel, numpy) are computed once per manifest and cached as float16 in the
run folder. Batches hold utterances of similar length up to `max_batch_seconds` of audio;
SpecAugment runs on each training utterance with the sampler's own Generator, whose state
the checkpoints keep (resume gives the same batches). Targets are the punctuated text and,
for the intermediate loss, the same text without marks.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from punctum.audio.augment import SpecAugmentConfig, spec_augment
from punctum.audio.features import FeatureConfig, log_mel, normalize
from punctum.audio.io import load_audio
from punctum.audio.manifest import ManifestRecord, read_records
from punctum.ctc_vocab import CtcVocabulary
from punctum.fileio import atomic_writer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SpeechDataConfig:
    """What a CTC model trains on.

    Args:
        train: manifests (JSONL) or tables readable by `read_records`.
        dev: a manifest for model selection, or None.
        max_batch_seconds: audio per batch at most (padding excluded).
        max_seconds: training utterances longer than this are skipped.
        dev_utterances: dev utterances scored at each evaluation (0 = all).
        normalization: "utterance" or "none" mean/variance normalisation.
        features: log-mel settings.
        spec_augment: SpecAugment policy for training utterances (None = off).
        language: inventory name.
    """

    train: tuple[str, ...]
    dev: str | None = None
    max_batch_seconds: float = 120.0
    max_seconds: float = 30.0
    dev_utterances: int = 300
    normalization: str = "utterance"
    features: FeatureConfig = field(default_factory=FeatureConfig)
    spec_augment: SpecAugmentConfig | None = field(default_factory=SpecAugmentConfig)
    language: str = "en"

    def __post_init__(self) -> None:
        object.__setattr__(self, "train", tuple(self.train))
        if not self.train:
            raise ValueError("data.train must name at least one manifest")
        if self.max_batch_seconds <= 0 or self.max_seconds <= 0:
            raise ValueError("data.max_batch_seconds and data.max_seconds must be > 0")
        if self.normalization not in ("utterance", "none"):
            raise ValueError(f"data.normalization must be 'utterance' or 'none', "
                             f"got {self.normalization!r}")


@dataclass(frozen=True)
class SpeechCorpus:
    """Features and targets of one split.

    Attributes:
        records: the utterances.
        frames: (N, n_mels) float16 log-mels of all utterances, concatenated.
        offsets: (U+1,) int64 start of each utterance in `frames`.
        targets: per utterance, punctuated token ids.
        plain_targets: per utterance, token ids without marks.
    """

    records: tuple[ManifestRecord, ...]
    frames: np.ndarray
    offsets: np.ndarray
    targets: tuple[tuple[int, ...], ...]
    plain_targets: tuple[tuple[int, ...], ...]

    def __len__(self) -> int:
        return len(self.records)

    def features(self, index: int) -> np.ndarray:
        """(T, n_mels) float32 log-mels of one utterance."""
        return self.frames[self.offsets[index]:self.offsets[index + 1]].astype(np.float32)

    @property
    def n_frames(self) -> np.ndarray:
        return np.diff(self.offsets)


def compute_features(records, config: FeatureConfig, cache: Path | None = None
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Log-mels of every record's audio as (frames float16, offsets), cached when asked."""
    key = hashlib.md5(repr((config, [(r.id, r.audio_path) for r in records])).encode())
    path = cache / f"features.{key.hexdigest()[:16]}.npz" if cache else None
    if path is not None and path.exists():
        with np.load(path) as data:
            return data["frames"], data["offsets"]
    from tqdm import tqdm

    parts = []
    # disable=None: no bar when stderr is not a terminal (logs of background runs).
    for record in tqdm(records, desc="log-mel features", unit="utt", leave=False, disable=None):
        if record.audio_path is None:
            raise ValueError(f"utterance {record.id!r} has no audio file")
        parts.append(log_mel(load_audio(record.audio_path, config.sample_rate), config)
                     .astype(np.float16))
    lengths = [len(p) for p in parts]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    frames = np.concatenate(parts) if parts else np.zeros((0, config.n_mels), np.float16)
    if path is not None:
        with atomic_writer(path, binary=True, compress=False) as handle:
            np.savez(handle, frames=frames, offsets=offsets)
    return frames, offsets


def load_corpus(paths: tuple[str, ...] | str, config: SpeechDataConfig, vocab: CtcVocabulary,
                cache: Path | None = None, max_seconds: float | None = None,
                limit: int = 0) -> SpeechCorpus:
    """Read manifests, drop over-long utterances, compute features and targets."""
    paths = (paths,) if isinstance(paths, str) else paths
    records = [r for p in paths for r in read_records(p)]
    if max_seconds is not None:
        records = [r for r in records if r.duration is None or r.duration <= max_seconds]
    if limit:
        records = records[:limit]
    if not records:
        raise ValueError(f"no utterances in {', '.join(paths)}")
    frames, offsets = compute_features(records, config.features, cache)
    targets = tuple(tuple(vocab.encode(r.text)) for r in records)
    plain = tuple(tuple(vocab.encode(r.text, marks=False)) for r in records)
    return SpeechCorpus(tuple(records), frames, offsets, targets, plain)


@dataclass(frozen=True)
class SpeechBatch:
    """Padded features and CTC targets.

    Attributes:
        feats: (B, T, n_mels) float32, right-padded with zeros.
        lengths: (B,) int64 valid frames.
        targets, target_lengths: (B, S) int64 punctuated ids (padding 0) and (B,) lengths.
        plain, plain_lengths: the same without mark tokens.
        indices: (B,) utterance indices in the corpus.
    """

    feats: np.ndarray
    lengths: np.ndarray
    targets: np.ndarray
    target_lengths: np.ndarray
    plain: np.ndarray
    plain_lengths: np.ndarray
    indices: np.ndarray


def _pad_ids(sequences: list[tuple[int, ...]]) -> tuple[np.ndarray, np.ndarray]:
    lengths = np.asarray([len(s) for s in sequences], dtype=np.int64)
    out = np.zeros((len(sequences), max(int(lengths.max()), 1)), dtype=np.int64)
    for row, seq in enumerate(sequences):
        out[row, :len(seq)] = seq
    return out, lengths


def collate_speech(corpus: SpeechCorpus, indices, data: SpeechDataConfig,
                   rng: np.random.Generator | None = None) -> SpeechBatch:
    """A batch of utterances; SpecAugment when an rng is given and the config has it."""
    feats = []
    for index in indices:
        x = corpus.features(int(index))
        x = normalize(x, data.normalization) if data.normalization != "none" else x
        if rng is not None and data.spec_augment is not None:
            x = spec_augment(x, data.spec_augment, rng)
        feats.append(x)
    lengths = np.asarray([len(x) for x in feats], dtype=np.int64)
    padded = np.zeros((len(feats), int(lengths.max()), feats[0].shape[1]), dtype=np.float32)
    for row, x in enumerate(feats):
        padded[row, :len(x)] = x
    targets, target_lengths = _pad_ids([corpus.targets[int(i)] for i in indices])
    plain, plain_lengths = _pad_ids([corpus.plain_targets[int(i)] for i in indices])
    return SpeechBatch(padded, lengths, targets, target_lengths, plain, plain_lengths,
                       np.asarray(indices, dtype=np.int64))


class SpeechSampler:
    """Random batches of similar-length utterances, up to max_batch_seconds of audio.

    Utterances are sorted by length; a batch starts at a random position of that order and
    takes the following utterances while they fit. The Generator state is checkpointed.
    """

    def __init__(self, corpus: SpeechCorpus, data: SpeechDataConfig, seed: int = 0) -> None:
        self.corpus = corpus
        self.data = data
        self.order = np.argsort(corpus.n_frames, kind="stable")
        self.budget = data.max_batch_seconds * data.features.frame_rate
        self.rng = np.random.default_rng(seed)

    def next_batch(self, batch_size: int = 0) -> SpeechBatch:
        """batch_size caps the utterances per batch (0 = only the seconds budget)."""
        start = int(self.rng.integers(len(self.order)))
        chosen, frames = [], 0
        for index in self.order[start:]:
            n = int(self.corpus.n_frames[index])
            if chosen and (frames + n > self.budget or (batch_size and len(chosen) >= batch_size)):
                break
            chosen.append(int(index))
            frames += n
        return collate_speech(self.corpus, chosen, self.data, self.rng)

    def state(self) -> dict:
        return self.rng.bit_generator.state

    def set_state(self, state: dict) -> None:
        self.rng.bit_generator.state = state


def iter_dev_batches(corpus: SpeechCorpus, data: SpeechDataConfig, limit: int = 0):
    """Consecutive length-sorted batches over the first `limit` utterances (no augmentation)."""
    n = min(limit or len(corpus), len(corpus))
    order = sorted(range(n), key=lambda i: int(corpus.n_frames[i]))
    budget = data.max_batch_seconds * data.features.frame_rate
    batch, frames = [], 0
    for index in order:
        size = int(corpus.n_frames[index])
        if batch and frames + size > budget:
            yield collate_speech(corpus, batch, data)
            batch, frames = [], 0
        batch.append(index)
        frames += size
    if batch:
        yield collate_speech(corpus, batch, data)


def speech_data_config(values: dict, root: Path) -> SpeechDataConfig:
    """SpeechDataConfig from a recipe's [data] table; relative paths join `root`."""
    from punctum.config import build_dataclass, existing

    values = dict(values)
    features = build_dataclass(FeatureConfig, values.pop("features", {}), "data.features",
                               finite=True)
    augment = values.pop("spec_augment", {})
    augment = None if augment is False else build_dataclass(SpecAugmentConfig, augment,
                                                            "data.spec_augment", finite=True)
    train = values.pop("train", [])
    if not isinstance(train, list) or not all(isinstance(p, str) for p in train):
        raise ValueError(f"data.train must be an array of manifest paths, got {train!r}")
    values["train"] = tuple(existing(root / p, "data.train") for p in train)
    if values.get("dev"):
        if not isinstance(values["dev"], str):
            raise ValueError(f"data.dev must be a manifest path (a string), got "
                             f"{values['dev']!r}")
        values["dev"] = existing(root / values["dev"], "data.dev")
    config = build_dataclass(SpeechDataConfig, values, "data", finite=True)
    return dataclasses.replace(config, features=features, spec_augment=augment)
