"""Training data: corpora encoded once into flat subword arrays, then sampled as windows.

Documents stream from .gz files through `text.parse` and the tokenizer in chunks, so the
10M-word corpus never sits in Python lists: it becomes an `EncodedCorpus` of numpy arrays
(about 4 bytes per subword) cached on disk. Training windows of up to `max_subwords`
subwords start at random words (not only at sentence starts, so that models do not learn
that a window starts a sentence) and end at a word boundary.
"""

from __future__ import annotations

import hashlib
import logging
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from punctum.corpora import is_validation, iter_documents, read_che
from punctum.fileio import atomic_writer
from punctum.pauses import PauseNoise
from punctum.text import CASES, NULL, Inventory, Labelled, get_inventory, parse
from punctum.tokenizer import SubwordTokenizer
from punctum.train.distill import DistillConfig, Teacher
from punctum.train.noise import NoiseConfig, add_asr_noise

log = logging.getLogger(__name__)
IGNORE = -100
_CHUNK_DOCS = 256


@dataclass(frozen=True)
class SourceConfig:
    """One training corpus.

    Args:
        path: a .txt/.txt.gz file with one document per line, or a Che-format file.
        weight: relative sampling weight in the mixture.
        format: "text", "che" (Che files carry no case: case labels are ignored) or
            "timed" (`punctum timings` JSONL: text with the pause after each word, for
            PauseAware models; no ASR noise is applied to it).
        loss_weight: weight of this source's positions in the loss (alpha for pseudo labels
            in self-training; 1 for human labels).
        label_smoothing: smoothing of this source's targets (beta_1 / beta_2 of
            discriminative label smoothing); None = train.label_smoothing.
        distill: whether the [data.distill] teacher labels this source (text sources).
        clean: drop stage directions ("(Laughter)") and speaker labels in capitals ("THE
            PRESIDENT:") from each line first (`corpora.without_annotations`; text sources).
    """

    path: str
    weight: float = 1.0
    format: str = "text"
    loss_weight: float = 1.0
    label_smoothing: float | None = None
    distill: bool = True
    clean: bool = False

    def __post_init__(self) -> None:
        if self.weight <= 0:
            raise ValueError(f"source weight must be > 0, got {self.weight} for {self.path}")
        if self.loss_weight < 0:
            raise ValueError(f"source loss_weight must be >= 0, got {self.loss_weight} "
                             f"for {self.path}")
        if self.label_smoothing is not None and not 0 <= self.label_smoothing < 1:
            raise ValueError(f"source label_smoothing must be in [0, 1), got "
                             f"{self.label_smoothing} for {self.path}")
        if self.format not in ("text", "che", "timed"):
            raise ValueError(f"source format must be 'text', 'che' or 'timed', "
                             f"got {self.format!r}")


@dataclass(frozen=True)
class DataConfig:
    """What to train on and how windows are cut.

    Args:
        sources: the corpora of the mixture.
        dev: a Che-format file for model selection (IWSLT dev2012), or None.
        max_subwords: window length, start/end tokens included (on-device paper: 200).
        val_fraction: share of each source's documents held out (split by document).
        max_documents: read at most this many documents per source (0 = all).
        noise: ASR-style noise applied to the training split.
        pause_noise: perturbation of timed sources' pauses in training windows.
        distill: a teacher model whose probabilities the student also learns from.
        language: inventory name.
    """

    sources: tuple[SourceConfig, ...]
    dev: str | None = None
    max_subwords: int = 200
    val_fraction: float = 0.01
    max_documents: int = 0
    noise: NoiseConfig = field(default_factory=NoiseConfig)
    pause_noise: PauseNoise = field(default_factory=PauseNoise)
    distill: DistillConfig = field(default_factory=DistillConfig)
    language: str = "en"

    def __post_init__(self) -> None:
        if not self.sources:
            raise ValueError("data.sources must name at least one corpus")
        if not 8 <= self.max_subwords <= 4096:
            raise ValueError(f"data.max_subwords must be in [8, 4096], got {self.max_subwords}")
        if not 0 <= self.val_fraction < 1:
            raise ValueError(f"data.val_fraction must be in [0, 1), got {self.val_fraction}")
        if self.max_documents < 0:
            raise ValueError(f"data.max_documents must be >= 0 (0 = all), "
                             f"got {self.max_documents}")


@dataclass(frozen=True)
class EncodedCorpus:
    """A corpus as flat arrays over all its subwords (no start/end tokens).

    Attributes:
        ids: (N,) int32 subword ids.
        punct: (N,) int8 post-mark label id at each word's label position, -1 elsewhere.
        case: (N,) int8 case label id at the label position, -1 elsewhere or when unknown.
        word_start: (N,) bool, True at the first subword of each word.
        doc_offsets: (D+1,) int64 start of each document in the arrays.
        pause: (N,) float16 seconds of silence after each word at its label position, NaN
            elsewhere and where unknown; None for a corpus without timings.
        soft: (N, n_post + n_case) float16 teacher probabilities at each word's label
            position, NaN elsewhere; None for a corpus without a teacher.
    """

    ids: np.ndarray
    punct: np.ndarray
    case: np.ndarray
    word_start: np.ndarray
    doc_offsets: np.ndarray
    pause: np.ndarray | None = None
    soft: np.ndarray | None = None

    @property
    def n_words(self) -> int:
        return int(self.word_start.sum())

    def save(self, path: str | Path) -> None:
        with atomic_writer(path, binary=True, compress=False) as handle:
            extra = {key: value for key, value in (("pause", self.pause), ("soft", self.soft))
                     if value is not None}
            np.savez(handle, ids=self.ids, punct=self.punct, case=self.case,
                     word_start=self.word_start, doc_offsets=self.doc_offsets, **extra)

    @classmethod
    def load(cls, path: str | Path) -> EncodedCorpus:
        with np.load(path) as data:
            return cls(**{key: data[key] for key in data.files})


def encode_documents(
    documents: Iterable[Labelled | tuple[Labelled, np.ndarray]],
    tokenizer: SubwordTokenizer,
    inventory: Inventory,
    ignore_case: bool = False,
    teacher: Teacher | None = None,
) -> EncodedCorpus:
    """Tokenize labelled documents into an EncodedCorpus, streaming in chunks.

    Documents are all Labelled, or all (Labelled, (n_words,) pauses in seconds) pairs, which
    gives the corpus its `pause` array. With a teacher, its probabilities for each document
    give the corpus its `soft` array.
    """
    post_ids = {label: i for i, label in enumerate(inventory.post_labels)}
    case_ids = {label: i for i, label in enumerate(CASES)}
    parts: list[dict[str, np.ndarray]] = []
    chunk: list[Labelled] = []
    for document in documents:
        if len(document[0] if isinstance(document, tuple) else document):
            chunk.append(document)
        if len(chunk) == _CHUNK_DOCS:
            parts.extend(_encode_chunk(chunk, tokenizer, post_ids, case_ids, ignore_case,
                                       teacher))
            chunk = []
            if teacher is not None:
                log.info("teacher: %d documents labelled", len(parts))
    parts.extend(_encode_chunk(chunk, tokenizer, post_ids, case_ids, ignore_case, teacher))
    return _concatenate(parts)


def _encode_chunk(chunk, tokenizer, post_ids, case_ids, ignore_case, teacher=None):
    """One dict of EncodedCorpus columns per document of the chunk."""
    timed = bool(chunk) and isinstance(chunk[0], tuple)
    pauses = [p for _, p in chunk] if timed else [None] * len(chunk)
    chunk = [d for d, _ in chunk] if timed else chunk
    encodings = tokenizer.encode_batch([doc.words for doc in chunk], add_special_tokens=False)
    taught = teacher([doc.words for doc in chunk]) if teacher and chunk else [None] * len(chunk)
    for doc, enc, doc_pauses, probs in zip(chunk, encodings, pauses, taught):
        n = len(enc.ids)
        punct = np.full(n, -1, dtype=np.int8)
        case = np.full(n, -1, dtype=np.int8)
        has = enc.label_positions >= 0
        positions = enc.label_positions[has]
        punct[positions] = [post_ids[label] for label, ok in zip(doc.post, has) if ok]
        if not ignore_case:
            case[positions] = [case_ids[label] for label, ok in zip(doc.case, has) if ok]
        starts = np.zeros(n, dtype=bool)
        starts[np.unique(enc.word_index[enc.word_index >= 0], return_index=True)[1]] = True
        columns = {"ids": enc.ids.astype(np.int32), "punct": punct, "case": case,
                   "word_start": starts}
        if doc_pauses is not None:
            columns["pause"] = np.full(n, np.nan, dtype=np.float16)
            columns["pause"][positions] = np.asarray(doc_pauses, dtype=np.float16)[has]
        if probs is not None:
            columns["soft"] = np.full((n, probs.shape[1]), np.nan, dtype=np.float16)
            columns["soft"][positions] = probs[has]
        yield columns


def _concatenate(parts: list[dict[str, np.ndarray]]) -> EncodedCorpus:
    lengths = [len(p["ids"]) for p in parts]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    if not parts:
        empty = np.zeros(0, dtype=np.int32)
        return EncodedCorpus(empty, empty.astype(np.int8), empty.astype(np.int8),
                             empty.astype(bool), offsets)
    columns = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    return EncodedCorpus(**columns, doc_offsets=offsets)


def iter_source(source: SourceConfig, config: DataConfig, split: str) -> Iterator[Labelled]:
    """Documents of one source for the 'train' or 'val' split (split by document)."""
    if source.format == "che":
        if split == "train":
            yield read_che(source.path).labelled()
        return
    if source.format == "timed":
        yield from _iter_timed(source, config, split)
        return
    seed = int.from_bytes(hashlib.md5(source.path.encode()).digest()[:4], "little")
    rng = np.random.default_rng(seed)
    for number, document in enumerate(iter_documents(source.path, config.language,
                                                     clean=source.clean)):
        if config.max_documents and number >= config.max_documents:
            return
        if is_validation(number, source.path, config.val_fraction) != (split == "val"):
            continue
        yield add_asr_noise(document, config.noise, rng) if split == "train" else document


def _iter_timed(source: SourceConfig, config: DataConfig, split: str):
    """(Labelled, pauses) of a timed source's split; records whose words do not parse one
    to one (a token that is only a mark) are skipped."""
    from punctum.audio.timed_text import read_timed

    inventory = get_inventory(config.language)
    skipped = 0
    for number, (text, pauses) in enumerate(read_timed(source.path)):
        if config.max_documents and number >= config.max_documents:
            break
        if is_validation(number, source.path, config.val_fraction) != (split == "val"):
            continue
        labelled = parse(text, inventory)
        if len(labelled) != len(pauses):
            skipped += 1
            continue
        yield labelled, pauses
    if skipped:
        log.info("%s: %d records skipped (words do not parse one to one)", source.path, skipped)


def read_dev(path: str, tokenizer: SubwordTokenizer, language: str = "en") -> EncodedCorpus:
    """A dev set as one encoded document per record (see `dev_documents`)."""
    documents, ignore_case = dev_documents(path, language)
    if not any(len(d[0] if isinstance(d, tuple) else d) for d in documents):
        raise ValueError(f"data.dev: {path}: no words (an empty dev set)")
    if not any(p != NULL for d in documents for p in (d[0] if isinstance(d, tuple)
                                                       else d).post):
        raise ValueError(f"data.dev: {path}: no marks (dev F1 would be 0 whatever the model "
                         f"learns): give punctuated text")
    return encode_documents(documents, tokenizer, get_inventory(language),
                            ignore_case=ignore_case)


def dev_documents(path: str, language: str = "en") -> tuple[list, bool]:
    """(documents, whether their case labels are to be ignored) of a dev file: a Che-format
    file (one document, no case labels), a timed JSONL file (.jsonl/.jsonl.gz: (Labelled,
    pauses) per record), or cased, punctuated text: a TSV's rows, an IWSLT XML's segments
    or a text file's lines (`evaluation.detect_format`)."""
    from punctum.evaluation import detect_format

    if ".jsonl" in Path(path).name:
        source = SourceConfig(path, format="timed")
        return list(_iter_timed(source, DataConfig((source,), val_fraction=0.0), "train")), False
    fmt = detect_format(path)
    if fmt == "che":
        return [read_che(path).labelled()], True
    return [d for d in _dev_documents(path, fmt, get_inventory(language)) if len(d)], False


def _dev_documents(path: str, fmt: str, inventory) -> Iterator[Labelled]:
    """The documents of a cased, punctuated dev file: TSV rows, XML segments or lines."""
    from punctum.corpora import iter_tsv, iter_xml_segments

    if fmt == "tsv":
        return (parse(row.text, inventory) for row in iter_tsv(path))
    if fmt == "xml":
        return (parse(segment, inventory) for segment in iter_xml_segments(path))
    return iter_documents(path, inventory)


def taught(source: SourceConfig, split: str, teacher: Teacher | None) -> Teacher | None:
    """The teacher if it labels this source's split: text sources' training split."""
    if teacher is None or not source.distill or split != "train" or source.format != "text":
        return None
    return teacher


def encode_source(source, config, tokenizer, split, cache_dir,
                  teacher: Teacher | None = None) -> EncodedCorpus:
    """Encode one source split, reusing a cached copy keyed by its settings."""
    teacher = taught(source, split, teacher)
    # Only what changes the encoded arrays: sampling and loss settings do not.
    settings = (source.path, source.format, config.max_documents, config.val_fraction,
                config.noise, split, tokenizer.tokenizer.to_str())
    if source.clean:  # (not in the key otherwise: caches of earlier runs stay valid)
        settings += ("clean",)
    if teacher is not None:
        settings += (teacher.key,)
    key = hashlib.md5(repr(settings).encode()).hexdigest()[:16]
    cache = Path(cache_dir) / f"{Path(source.path).name}.{split}.{key}.npz"
    if cache.exists():
        try:
            return EncodedCorpus.load(cache)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
            log.warning("%s: unreadable cache (%s); encoding again", cache, error)
    log.info("encoding %s (%s split%s)", source.path, split,
             ", with the teacher's probabilities" if teacher else "")
    inventory = get_inventory(config.language)
    corpus = encode_documents(iter_source(source, config, split), tokenizer, inventory,
                              ignore_case=source.format == "che", teacher=teacher)
    cache.parent.mkdir(parents=True, exist_ok=True)
    corpus.save(cache)
    return corpus
