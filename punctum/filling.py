"""Which marks `--keep-existing` fills in: the kinds a text leaves to the model.

A text that is punctuated already writes its marks where its writer wanted them; a word it
leaves without one was left so. Marks of a kind it writes (sentence ends: the labels the
inventory calls sentence-final, in English . ? ! and what reads as them, ; and ...; others:
, and :) are its writer's, so a restore that keeps them adds none of that kind; kinds it does
not write, it fills in. A recogniser's output writes none (all are filled in); one that ends
sentences but writes no commas gets commas; a finished text gets nothing new but the mark
that closes it. A kind counts as written when the text gives at least MIN_WRITTEN marks of
it and at least half as many as the model predicts for the same words
(`MarkCounts.written`): a stray comma in a long transcript does not stop commas being filled
in. The last word's mark is not counted (a line that only ends in a full stop has its
sentences ended inside), nor a mark written as a dash (a cut word: "i- i went").

    >>> given = ("O", "PERIOD", "O", "PERIOD", "O")
    >>> counts = MarkCounts.of(given, ("COMMA", "PERIOD", "O", "PERIOD", "O"),
    ...                        frozenset({"PERIOD"}))
    >>> counts.written()
    frozenset({True})
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

import numpy as np

from punctum import calibration
from punctum.text import CAP, LOWER, NULL, Labelled, is_i

# a kind of mark counts as written from this share of the model's own count of it, and
# from this many marks
WRITTEN_SHARE = 0.5
MIN_WRITTEN = 2
_DASHES = frozenset("-–—‐") | {"--"}


@dataclass(frozen=True)
class MarkCounts:
    """Marks of each kind (sentence-final, other) that a text gives and the model predicts.

    Attributes:
        given: (sentence-final, other) marks the text writes.
        model: (sentence-final, other) marks the model predicts for its words.
    """

    given: tuple[int, int] = (0, 0)
    model: tuple[int, int] = (0, 0)

    @classmethod
    def of(cls, given: Sequence[str], model: Sequence[str],
           sentence_final: Collection[str]) -> MarkCounts:
        """Counts of the given and predicted post-mark labels of the same words."""
        return cls(_kinds(given, sentence_final), _kinds(model, sentence_final))

    def __add__(self, other: MarkCounts) -> MarkCounts:
        return MarkCounts(tuple(a + b for a, b in zip(self.given, other.given)),
                          tuple(a + b for a, b in zip(self.model, other.model)))

    def written(self) -> frozenset[bool]:
        """The kinds the text writes itself (True: sentence-final marks, False: others)."""
        return frozenset(final for final, given, model in
                         zip((True, False), self.given, self.model)
                         if given >= MIN_WRITTEN and given >= WRITTEN_SHARE * model)


def _kinds(labels: Sequence[str], sentence_final: Collection[str]) -> tuple[int, int]:
    finals = sum(label in sentence_final for label in labels)
    return finals, sum(label != NULL for label in labels) - finals


def counted_marks(given: Labelled) -> tuple[str, ...]:
    """The marks of a text that count toward `MarkCounts`, by word but its last: those not
    written as a dash (NULL there)."""
    return tuple(NULL if edges and edges.mark.strip() in _DASHES else post
                 for post, edges in zip(given.post[:-1], given.edges[:-1]))


def fill_only(prediction, written: frozenset[bool], sentence_final: Collection[str],
              post_bias: np.ndarray | None = None, names: Collection[str] = ()):
    """`prediction` (a restored.Prediction) with each mark of a written kind replaced by the
    most probable mark of the other kinds or none (the same decision biases applied); a
    Capitalised word after a sentence end so taken away is lowercase, unless it is "I" or
    one of `names` (capitalised.json)."""
    if not written or not len(prediction.post):
        return prediction
    labels = prediction.post_labels
    allowed = np.array([label == NULL or (label in sentence_final) not in written
                        for label in labels])
    bias = np.zeros(len(labels)) if post_bias is None else np.asarray(post_bias, float)
    decided = calibration.decide(prediction.post_probs, np.where(allowed, bias, -np.inf))
    post = tuple(p if (p == NULL or (p in sentence_final) not in written) else labels[d]
                 for p, d in zip(prediction.post, decided))
    case = list(prediction.case)
    for i in range(len(post) - 1):
        ended = prediction.post[i] in sentence_final and post[i] not in sentence_final
        word = prediction.words[i + 1]
        if ended and case[i + 1] == CAP and word not in names and not is_i(word):
            case[i + 1] = LOWER
    return replace(prediction, post=post, case=tuple(case))
