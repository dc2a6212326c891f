"""ASR-style noise for training text: dropped, inserted and substituted words, numbers
spelled out. Applied per document before tokenization, so a model sees the kind of word
errors a recogniser makes while the labels stay attached to the words that remain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from punctum.text import LOWER, NULL, Labelled

# Short, frequent words that recognisers insert or confuse (no marks, lowercase).
FILLER_WORDS = ("the", "a", "and", "uh", "um", "i", "to", "of", "it", "that", "in", "so")

_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
         "fourteen fifteen sixteen seventeen eighteen nineteen").split()
NOISE_WORDS = ("fillers", "document")

_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


@dataclass(frozen=True)
class NoiseConfig:
    """Per-word probabilities of each kind of error (all 0 = no noise).

    Args:
        drop: a word is deleted (its mark moves to the word before it).
        insert: a word is inserted after a word (null labels).
        substitute: a word is replaced by another (labels kept).
        spell_numbers: a number written in digits is spelled out ("42" -> "forty two").
        words: what is inserted and substituted: "fillers" (FILLER_WORDS, short words that
            recognisers insert) or "document" (the document's own words, in proportion to
            their frequency: closer to a recogniser's confusions of content words).
    """

    drop: float = 0.0
    insert: float = 0.0
    substitute: float = 0.0
    spell_numbers: float = 0.0
    words: str = "fillers"

    def __post_init__(self) -> None:
        if self.words not in NOISE_WORDS:
            raise ValueError(f"data.noise.words must be one of {', '.join(NOISE_WORDS)}, "
                             f"got {self.words!r}")
        for name in ("drop", "insert", "substitute", "spell_numbers"):
            value = getattr(self, name)
            if not 0.0 <= value <= 0.5:
                raise ValueError(f"data.noise.{name} must be in [0, 0.5], got {value}")

    @property
    def enabled(self) -> bool:
        return any((self.drop, self.insert, self.substitute, self.spell_numbers))


def spell_number(word: str) -> list[str] | None:
    """Spell a whole number below one million in words, or None if `word` is not one."""
    digits = word.replace(",", "")
    if not digits.isdigit() or len(digits) > 6 or (len(digits) > 1 and digits[0] == "0"):
        return None
    return _spell(int(digits))


def _spell(n: int) -> list[str]:
    if n < 20:
        return [_ONES[n]]
    if n < 100:
        return [_TENS[n // 10]] + ([_ONES[n % 10]] if n % 10 else [])
    if n < 1000:
        rest = _spell(n % 100) if n % 100 else []
        return [_ONES[n // 100], "hundred"] + rest
    rest = _spell(n % 1000) if n % 1000 else []
    return _spell(n // 1000) + ["thousand"] + rest


def add_asr_noise(doc: Labelled, config: NoiseConfig, rng: np.random.Generator,
                  vocabulary: Sequence[str] | None = None) -> Labelled:
    """Return a copy of `doc` with ASR-style word errors (or `doc` itself without noise).

    Args:
        vocabulary: the words that are inserted and substituted, drawn uniformly from the
            sequence; None: as `config.words` says (FILLER_WORDS or the document's words).
    """
    if not config.enabled or not len(doc):
        return doc
    if vocabulary is None:
        vocabulary = doc.words if config.words == "document" else FILLER_WORDS
    if not len(vocabulary):
        raise ValueError("the noise vocabulary is empty")
    words, post, case = [], [], []
    draws = rng.random((len(doc), 4))
    for i, word in enumerate(doc.words):
        drop, insert, substitute, spell = draws[i] < (config.drop, config.insert,
                                                      config.substitute, config.spell_numbers)
        if drop:
            if post and post[-1] == NULL:
                post[-1] = doc.post[i]
            continue
        spelled = spell_number(word) if spell else None
        if substitute:
            word = vocabulary[rng.integers(len(vocabulary))]
        pieces = spelled or [word]
        words.extend(pieces)
        post.extend([NULL] * (len(pieces) - 1) + [doc.post[i]])
        case.extend([doc.case[i]] + [LOWER] * (len(pieces) - 1))
        if insert:
            words.append(vocabulary[rng.integers(len(vocabulary))])
            post.append(NULL)
            case.append(LOWER)
    return Labelled(tuple(words), tuple(post), tuple(case))
