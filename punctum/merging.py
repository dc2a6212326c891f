"""How the model's labels and the input's become the labels a restore writes: what
`--keep-existing` keeps of the input (`merge_labels`, `lower_within_sentences`, and through
`filling` the kinds of mark it fills in), the mark that closes a text (`close_text`), and a
title's period ("Mr. Smith"). `written_labels` runs them in order for a whole text; a
stream (`stream.Stream`) runs them on its final words.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

import numpy as np

from punctum.filling import MarkCounts, counted_marks, fill_only
from punctum.restored import Prediction, RestoreOptions
from punctum.text import (
    CAP,
    LOWER,
    MIX,
    NULL,
    Labelled,
    ends_sentence,
    is_abbreviation,
    is_address,
    is_cut_word,
    is_i,
    open_sentences,
    quotes_its_mark,
)

NO_MARKS = MarkCounts()


def merge_labels(given: Labelled, prediction: Prediction, options: RestoreOptions,
                 abbreviations: frozenset = frozenset(), cased: bool | None = None,
                 pronoun_i: bool = True) -> Labelled:
    """Combine predicted labels with what the input already had, as the options say.

    `--keep-existing` keeps the input's marks and cases where it has them; a word written
    in lowercase takes the model's case unless the input writes case (`cased`; None: as
    `writes_case` finds for `given`): then its lowercase words are the writer's too ("the
    theatre actor", not "the Theatre Actor"; English "i", "i'm" excepted: "I", unless
    `pronoun_i` is False: other languages), and only the sentences the model ends start
    with a capital (`render`'s sentence case).

    A listed abbreviation (`Inventory.abbreviations`: mr, dr) that the model itself writes
    Capitalised (not MS, DR, nor a word capitalised.json makes Capitalised), before a
    Capitalised word of more than one letter, gets its period ("Mr. Smith", as the training
    text writes it; not "MS Word", "Gen Z"), unless the input is kept as it is."""
    post, case, forms = list(prediction.post), list(prediction.case), [None] * len(given)
    if options.keep_existing:
        post = [g if g != NULL else p for g, p in zip(given.post, post)]
        if writes_case(given) if cased is None else cased:  # (but "i": never a writer's)
            case = [CAP if c == LOWER and pronoun_i and is_i(w) else c
                    for w, c in zip(given.words, given.case)]
        else:
            case = [g if g != LOWER else c for g, c in zip(given.case, case)]
    if not options.case:
        case = list(given.case)
    if options.keep_existing or not options.case:
        forms = [f if c == MIX else None for f, c in zip(given.forms, case)]
    for i, word in enumerate(given.words):  # an address's mixed case is part of it (a URL
        if given.case[i] == MIX and is_address(word):  # path); all capitals are not
            case[i], forms[i] = MIX, given.forms[i]
    abbreviated = given.abbreviated
    edges = (given if options.keep_existing else given.without_written_marks()).edges
    if not options.keep_existing and any(abbreviated):
        abbreviated, edges = _known_abbreviations(given, edges, abbreviations)
    if abbreviations and not options.keep_existing and CAP in prediction.case_labels:
        own = prediction.case_probs.argmax(-1) == prediction.case_labels.index(CAP)
        abbreviated = tuple(a or (w in abbreviations and p == NULL and c == CAP and own[i]
                                  and _names_follow(given.words, case, i))
                            for i, (w, p, c, a) in enumerate(zip(given.words, post, case,
                                                                 abbreviated)))
    return Labelled(given.words, tuple(post), tuple(case), given.pre, tuple(forms),
                    abbreviated, edges)


def _known_abbreviations(given: Labelled, edges: tuple, abbreviations: frozenset
                         ) -> tuple[tuple[bool, ...], tuple]:
    """Abbreviations the input wrote that a restore without --keep-existing keeps: the
    known ones ("U.S.", "Mr."); another word whose period stands before a quote and a mark
    ('it.",', read as an abbreviation by `text.parse`) gets the model's mark where the
    period was ('it."')."""
    known, edges = list(given.abbreviated), list(edges)
    for i, word in enumerate(given.words):
        if known[i] and not is_abbreviation(word, abbreviations):
            known[i] = False
            edges[i] = replace(edges[i], mark_at=0) if edges[i] else None
    return tuple(known), tuple(edges)


def writes_case(given: Labelled, start: int = 1) -> bool:
    """Whether a text writes case: a Capitalised word other than its first (from `start`
    on) and "I" (a recogniser's lowercase output does not, nor one that capitalises its
    first word only or writes "OK", "10AM", "iPhone")."""
    return any(case == CAP and not is_i(word)
               for word, case in zip(given.words[start:], given.case[start:]))


def _names_follow(words: Sequence[str], case: Sequence[str], i: int) -> bool:
    """Whether the word after word i is a Capitalised name of more than one letter."""
    return i + 1 < len(words) and case[i + 1] == CAP and len(words[i + 1]) > 1


def written_labels(given: Labelled, prediction: Prediction, options: RestoreOptions,
                   inventory, post_bias: np.ndarray | None = None,
                   sentence_ends: Collection[int] = (),
                   capitalised: frozenset = frozenset(), *, closing: bool = True,
                   earlier: MarkCounts = NO_MARKS, cased: bool | None = None,
                   after_pause: bool = False, opening: bool = True) -> Labelled:
    """A text's labels as written: the model's merged with the input's as the options say
    (`merge_labels`; `--keep-existing` adds no marks of a kind the input writes itself,
    `filling`), the text closed with a sentence-final mark (`close_text`, unless
    options.close_text is off), as are the words of `sentence_ends` (indexes of words a
    speaker's turn follows), and its sentences opened where the language does (¿ ¡).

    A stream's words (`stream.Stream`) pass what came before them: `closing` (False: the
    text goes on), `earlier` (the marks of its final words), `cased` (whether they write
    case), `after_pause` (the first word follows a kept mark that ends no sentence) and
    `opening` False (a sentence's first word is final before its end is known).
    """
    if options.keep_existing and options.fill == "missing":  # no marks of a kind it writes
        final = inventory.sentence_final
        counts = earlier + MarkCounts.of(counted_marks(given), prediction.post[:-1], final)
        prediction = fill_only(prediction, counts.written(), final, post_bias, capitalised)
    labelled = merge_labels(given, prediction, options, inventory.abbreviations, cased=cased,
                            pronoun_i=inventory.language == "en")
    labelled = lower_within_sentences(labelled, given, options, inventory, capitalised,
                                      turns=sentence_ends, after_pause=after_pause)
    if closing and options.close_text:
        labelled = close_text(labelled, prediction, inventory, post_bias, sentence_ends,
                              kept_marks(given, options))
    return open_sentences(labelled, inventory) if opening else labelled


def lower_within_sentences(labelled: Labelled, given: Labelled, options: RestoreOptions,
                           inventory, capitalised: frozenset = frozenset(),
                           turns: Collection[int] = (), after_pause: bool = False) -> Labelled:
    """`--keep-existing`: after a mark the input wrote that does not end a sentence there
    (",", ";", "..."), a word it wrote in lowercase stays so unless it is a name
    (capitalised.json) or "I": the model's capital comes from a sentence break the writer
    did not make ("know; it's", not "know; It's"). Not after the words of `turns` (a
    speaker's turn follows them); `after_pause`: the first word follows such a mark (a
    stream's earlier words)."""
    if not (options.keep_existing and options.case):
        return labelled
    case = list(labelled.case)
    for i in range(len(given)):
        word = given.words[i]
        if i == 0:
            follows_pause = after_pause
        else:
            follows_pause = i - 1 not in turns and goes_on_after(labelled, given, i - 1,
                                                                 inventory)
        if follows_pause and given.case[i] == LOWER and case[i] == CAP \
                and word not in capitalised and not is_i(word):
            case[i] = LOWER
    return replace(labelled, case=tuple(case))


def goes_on_after(labelled: Labelled, given: Labelled, i: int, inventory) -> bool:
    """Whether the sentence goes on after word i as the input wrote it: a mark the input
    gave it ends no sentence there (",", ";", "...") or is a quoted ! or ? ('"Stop!" he
    cried'); `labelled`: the labels as written, `given`: the input's."""
    return given.post[i] != NULL and (not ends_sentence(labelled, i, inventory)
                                      or quotes_its_mark(labelled, i))


def kept_marks(given: Labelled, options: RestoreOptions) -> frozenset[int]:
    """Indexes of the words whose input mark is kept as it is (`--keep-existing`): closing a
    text does not replace it ("to this purpose:" stays)."""
    if not options.keep_existing:
        return frozenset()
    return frozenset(i for i, post in enumerate(given.post) if post != NULL)


def close_text(labelled: Labelled, prediction: Prediction, inventory,
               post_bias: np.ndarray | None = None,
               sentence_ends: Collection[int] = (), kept: Collection[int] = ()) -> Labelled:
    """Give the last word (and the words of `sentence_ends`) the most probable
    sentence-final mark where it has none, unless it is cut off ("so i-").

    Args:
        post_bias: (n_post,) decision biases added to the log-probabilities, as for the
            other words (None: none), so that `punctum calibrate` fits what restore does.
        sentence_ends: indexes of other words that end a sentence (a turn follows them).
        kept: indexes of words whose mark stays whatever it is (the input's, kept), unless
            a turn follows them.
    """
    turns = {i for i in sentence_ends if 0 <= i < len(labelled)}
    ends = sorted(turns | ({len(labelled) - 1} if len(labelled) else set()))
    open_ends = [i for i in ends if not ends_sentence(labelled, i, inventory)
                 and (i not in kept or i in turns)  # a turn ends a sentence whatever it had
                 and not is_cut_word(labelled.words[i])]  # "so i-": cut off, no mark
    if not open_ends:
        return labelled
    edges = list(labelled.edges)
    for i in open_ends:  # a kept ";" before a turn is written as its label's own mark
        edge = edges[i]  # (and a kept '",' as '"')
        edges[i] = edge.without_mark() if edge and (edge.mark or edge.outer) else edge
    finals = [i for i, label in enumerate(prediction.post_labels)
              if label in inventory.sentence_final]
    post = list(labelled.post)
    for i in open_ends:
        scores = np.log(np.maximum(prediction.post_probs[i], 1e-30))
        if post_bias is not None:
            scores = scores + post_bias
        if post[i] not in inventory.sentence_final:
            post[i] = prediction.post_labels[max(finals, key=lambda k: scores[k])]
    return replace(labelled, post=tuple(post), edges=tuple(edges))
