"""Subword tokenizers and word <-> subword alignment.

Two kinds, both run by the `tokenizers` library so the runtime needs nothing else:

- ``bpe``: a SentencePiece-style BPE (Metaspace pre-tokenizer) that punctum trains on
  lowercased, mark-free words (`train_bpe`); the on-device paper uses 5000 pieces.
- ``pretrained``: the WordPiece/BPE of a pretrained encoder, read from its folder
  (``tokenizer.json``, or ``vocab.txt`` for BERT-style WordPiece).

Words are encoded pre-split, so every subword knows its word; each word's labels sit on its
first subword (on-device paper) or its last (self-training paper).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
LABEL_POSITIONS = ("first", "last")
TOKENIZER_FILE = "tokenizer.json"
# Words per piece when many words are encoded at once, and distinct words remembered at most
# (`SubwordTokenizer.encode_batch`).
CHUNK_WORDS = 1024
CACHE_WORDS = 200_000


@dataclass(frozen=True)
class Encoding:
    """One word sequence as subwords.

    Attributes:
        ids: (T,) int64 subword ids, start and end tokens included.
        word_index: (T,) int64 word of each subword, -1 for start/end tokens.
        label_positions: (n_words,) int64 subword carrying each word's labels, -1 for a word
            that produced no subword (such a word keeps null labels).
    """

    ids: np.ndarray
    word_index: np.ndarray
    label_positions: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)


class SubwordTokenizer:
    """A `tokenizers.Tokenizer` plus the word alignment punctum needs.

    Args:
        tokenizer: a tokenizers.Tokenizer whose post-processor adds start/end tokens.
        label_position: "first" or "last" subword of a word carries its labels.
    """

    def __init__(self, tokenizer, label_position: str = "first") -> None:
        if label_position not in LABEL_POSITIONS:
            raise ValueError(f"label_position must be one of {LABEL_POSITIONS}, "
                             f"got {label_position!r}")
        if tokenizer is not None:
            tokenizer.no_truncation()  # pretrained tokenizer.json files often truncate/pad:
            tokenizer.no_padding()     # windows are planned by punctum instead
        self.tokenizer = tokenizer
        self.label_position = label_position
        self.pad_id = _special_id(tokenizer, (PAD, "[PAD]"))
        self.bos_id = _special_id(tokenizer, (BOS, "[CLS]"))
        self.eos_id = _special_id(tokenizer, (EOS, "[SEP]"))
        self.chunkable = tokenizer is not None and _encodes_words_alone(tokenizer)
        self._cache: dict[str, tuple[int, ...]] = {}

    @property
    def vocab_size(self) -> int:
        """Number of subword ids (special tokens included)."""
        return self.tokenizer.get_vocab_size()

    @classmethod
    def load(cls, path: str | Path, label_position: str = "first") -> SubwordTokenizer:
        """Load a tokenizer.json file, or a pretrained model folder (tokenizer.json/vocab.txt).

        Raises:
            FileNotFoundError: nothing usable at `path`.
            ValueError: the file is not a valid tokenizer.
        """
        from tokenizers import Tokenizer

        path = Path(path)
        file = path / TOKENIZER_FILE if path.is_dir() else path
        if file.is_file():
            try:
                return cls(Tokenizer.from_file(str(file)), label_position)
            except Exception as error:  # tokenizers raises a bare Exception on bad JSON
                raise ValueError(f"{file}: not a valid tokenizer file ({error})") from None
        if path.is_dir() and (path / "vocab.txt").is_file():
            return cls(_wordpiece_from_vocab(path / "vocab.txt"), label_position)
        raise FileNotFoundError(f"{path}: no {TOKENIZER_FILE} or vocab.txt found")

    def save(self, path: str | Path) -> None:
        """Write the tokenizer as one JSON file."""
        self.tokenizer.save(str(path))

    def encode_words(self, words: Sequence[str]) -> Encoding:
        """Encode one list of normalised words (see `encode_batch`)."""
        return self.encode_batch([words])[0]

    def encode_batch(
        self, batch: Sequence[Sequence[str]], add_special_tokens: bool = True
    ) -> list[Encoding]:
        """Encode lists of normalised words, each with start/end tokens unless told not to.

        Returns:
            One Encoding per list, aligned to its words.
        """
        if not batch:
            return []
        if not add_special_tokens and self.chunkable:
            return self._encode_cached(batch)
        encoded = self.tokenizer.encode_batch([list(words) for words in batch],
                                              is_pretokenized=True,
                                              add_special_tokens=add_special_tokens)
        return [self._to_encoding(e, len(words)) for e, words in zip(encoded, batch)]

    def _encode_cached(self, batch: Sequence[Sequence[str]]) -> list[Encoding]:
        """Each distinct word encoded once and remembered: the library's per-word cost (about
        2 microseconds on the development CPU) was a tenth of a bulk restore. Exact, since a
        word's subwords do not depend on its neighbours (`chunkable`)."""
        known = {word: self._cache.get(word) for words in batch for word in words}
        missing = [word for word, pieces in known.items() if pieces is None]
        if missing:
            known.update(self._encode_words_alone(missing))
        return [self._join(words, known) for words in batch]

    def _encode_words_alone(self, words: list[str]) -> dict[str, tuple[int, ...]]:
        """word -> its subword ids, for distinct words (encoded in CHUNK_WORDS pieces, which
        the library spreads over threads); also stored in the bounded cache."""
        chunks = [words[i:i + CHUNK_WORDS] for i in range(0, len(words), CHUNK_WORDS)]
        encoded = self.tokenizer.encode_batch(chunks, is_pretokenized=True,
                                              add_special_tokens=False)
        found: dict[str, list[int]] = {word: [] for word in words}
        for chunk, piece in zip(chunks, encoded):
            for token, word in zip(piece.ids, piece.word_ids):
                if word is not None:
                    found[chunk[word]].append(token)
        fresh = {word: tuple(ids) for word, ids in found.items()}
        if len(self._cache) + len(fresh) > CACHE_WORDS:
            self._cache = {}
        if len(fresh) <= CACHE_WORDS:
            self._cache.update(fresh)
        return fresh

    def _join(self, words: Sequence[str], known: dict[str, tuple[int, ...]]) -> Encoding:
        pieces = [known[word] for word in words]
        counts = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
        ids = np.fromiter(itertools.chain.from_iterable(pieces), dtype=np.int64,
                          count=int(counts.sum()))
        return self._from_arrays(ids, np.repeat(np.arange(len(pieces), dtype=np.int64), counts),
                                 len(pieces))

    def _from_arrays(self, ids: np.ndarray, word_index: np.ndarray, n_words: int) -> Encoding:
        return Encoding(ids, word_index, label_positions(word_index, n_words,
                                                         self.label_position))

    def _to_encoding(self, encoded, n_words: int) -> Encoding:
        ids = np.asarray(encoded.ids, dtype=np.int64)
        word_index = np.asarray([-1 if w is None else w for w in encoded.word_ids],
                                dtype=np.int64)
        return self._from_arrays(ids, word_index, n_words)


def label_positions(word_index: np.ndarray, n_words: int, which: str = "first") -> np.ndarray:
    """Position of the first or last subword of each word.

    Args:
        word_index: (T,) int64 word of each subword, -1 for special tokens.
        n_words: number of words.
        which: "first" or "last".

    Returns:
        (n_words,) int64 positions, -1 for words without subwords.
    """
    positions = np.full(n_words, -1, dtype=np.int64)
    valid = np.nonzero(word_index >= 0)[0]
    order = valid[::-1] if which == "first" else valid
    positions[word_index[order]] = order  # later writes win: reversed order keeps the first
    return positions


def _encodes_words_alone(tokenizer) -> bool:
    """Whether a pre-split word's subwords never depend on its place in the list: not so
    for a Metaspace pre-tokenizer that marks only the first word ("prepend_scheme": "first")."""
    return not _prepends_first_only(json.loads(tokenizer.to_str()).get("pre_tokenizer"))


def _prepends_first_only(config) -> bool:
    """Whether a pre-tokenizer config (or one nested in a Sequence) says prepend_scheme first."""
    if isinstance(config, dict):
        return config.get("prepend_scheme") == "first" or any(
            _prepends_first_only(value) for value in config.values())
    return isinstance(config, list) and any(_prepends_first_only(item) for item in config)


def _special_id(tokenizer, candidates: Iterable[str]) -> int:
    for token in candidates:
        token_id = tokenizer.token_to_id(token)
        if token_id is not None:
            return token_id
    return 0


def _wordpiece_from_vocab(vocab_file: Path):
    """A BERT-style uncased WordPiece tokenizer built from a vocab.txt file."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tokenizer = Tokenizer(models.WordPiece.from_file(str(vocab_file), unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
    return tokenizer


def train_bpe(
    word_lists: Iterable[Sequence[str]],
    vocab_size: int = 5000,
    min_frequency: int = 2,
    label_position: str = "first",
    limit_alphabet: int = 200,
) -> SubwordTokenizer:
    """Train a SentencePiece-style BPE on normalised words.

    Args:
        word_lists: an iterable of word lists (e.g. one per document), streamed once.
        vocab_size: number of pieces, special tokens included.
        min_frequency: pairs seen fewer times are not merged.
        label_position: where the labels of a word sit ("first" or "last").
        limit_alphabet: most frequent characters kept; rarer ones become <unk>.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE(unk_token=UNK, fuse_unk=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                  special_tokens=[PAD, UNK, BOS, EOS],
                                  limit_alphabet=limit_alphabet, show_progress=False)
    tokenizer.train_from_iterator((" ".join(words) for words in word_lists), trainer=trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A {EOS}",
        special_tokens=[(BOS, tokenizer.token_to_id(BOS)), (EOS, tokenizer.token_to_id(EOS))])
    return SubwordTokenizer(tokenizer, label_position)
