"""`--keep-existing` fills in only the kinds of mark a text leaves to the model."""

import doctest
from dataclasses import replace

import numpy as np
import pytest

from punctum import filling
from punctum.filling import MarkCounts, counted_marks, fill_only
from punctum.merging import merge_labels, written_labels
from punctum.runtime import Prediction, Punctuator, RestoreOptions
from punctum.text import LOWER, NULL, parse

FINAL = frozenset({"PERIOD", "QUESTION", "EXCLAMATION"})
LABELS = ("O", "COMMA", "PERIOD", "QUESTION")
KEEP = RestoreOptions(keep_existing=True)


def _prediction(probs: list[list[float]]) -> Prediction:
    """A prediction over len(probs) words with these mark probabilities (LABELS order)."""
    post_probs = np.array(probs, dtype=np.float32)
    n = len(probs)
    return Prediction(tuple(f"w{i}" for i in range(n)),
                      tuple(LABELS[k] for k in post_probs.argmax(-1)), (LOWER,) * n,
                      post_probs, np.ones((n, 1), np.float32), LABELS, (LOWER,))


@pytest.mark.parametrize("given, model, written", [
    ((NULL,) * 4, ("COMMA", "PERIOD", NULL, "PERIOD"), frozenset()),  # a recogniser's
    ((NULL, "PERIOD", NULL, "PERIOD"), ("COMMA", "PERIOD", NULL, "PERIOD"), {True}),
    (("COMMA", "PERIOD", "COMMA", "PERIOD"), ("COMMA", "PERIOD", "COMMA", "PERIOD"),
     {True, False}),
    (("COMMA", NULL, "PERIOD", "PERIOD"), ("COMMA", "PERIOD", "PERIOD", "PERIOD"),
     {True}),  # one comma is not enough to tell
    (("COMMA", "COMMA") + (NULL,) * 8, ("COMMA",) * 10, frozenset()),  # stray commas
])
def test_a_kind_counts_as_written_from_half_the_models_count(given, model, written):
    assert MarkCounts.of(given, model, FINAL).written() == written


def test_counts_add_up_across_a_streams_feeds():
    first = MarkCounts.of(("COMMA", NULL), ("COMMA", "COMMA"), FINAL)
    second = MarkCounts.of((NULL, NULL), ("PERIOD", "COMMA"), FINAL)
    assert (first + second) == MarkCounts(given=(0, 1), model=(1, 3))


def test_a_written_kind_gives_way_to_the_next_most_probable_mark():
    prediction = _prediction([[0.1, 0.3, 0.6, 0.0],   # PERIOD, then COMMA
                              [0.5, 0.1, 0.4, 0.0],   # O
                              [0.2, 0.1, 0.3, 0.4]])  # QUESTION, then PERIOD, then O
    assert fill_only(prediction, frozenset({True}), FINAL).post == ("COMMA", NULL, NULL)
    assert fill_only(prediction, frozenset({False}), FINAL).post == \
        ("PERIOD", NULL, "QUESTION")
    assert fill_only(prediction, frozenset({True, False}), FINAL).post == (NULL,) * 3
    assert fill_only(prediction, frozenset(), FINAL) is prediction
    bias = np.array([0.0, -3.0, 0.0, 0.0])  # decision biases still apply
    assert fill_only(prediction, frozenset({True}), FINAL, bias).post[0] == NULL


@pytest.fixture(scope="module")
def punctuator(tiny_artifact):
    return Punctuator.load(tiny_artifact, threads=1)


FINISHED = ("We like the house, and my friend visits New York. Do you see the car? "
            "Our teacher wants a boat, and they remember the garden.")


@pytest.mark.parametrize("source, sentence_ends", [
    ("i went to the store and i bought some milk then i came home.", 1),  # its last only
    ("i went- i went to the store, i bought milk. then i came home.", 2),  # a cut word
])
def test_the_last_mark_and_dashes_say_nothing_of_what_is_written(source, sentence_ends):
    given = parse(source)
    assert MarkCounts.of(counted_marks(given), given.post[:-1], FINAL).given[0] == \
        sentence_ends - 1
    assert counted_marks(parse("i- i went, and then we left, so"))[:2] == (NULL, NULL)


def test_a_capital_after_a_sentence_end_taken_away_is_lowered():
    prediction = replace(_prediction([[0.1, 0.3, 0.6, 0.0], [0.9, 0.1, 0.0, 0.0],
                                      [0.1, 0.3, 0.6, 0.0], [0.9, 0.1, 0.0, 0.0]]),
                         words=("home", "then", "yes", "i"), case=(LOWER, "CAP", LOWER, "CAP"))
    filled = fill_only(prediction, frozenset({True}), FINAL)
    assert filled.post[0] == "COMMA" and filled.case == (LOWER, LOWER, LOWER, "CAP")  # "I"
    assert fill_only(prediction, frozenset({True}), FINAL, names={"then"}).case[1] == "CAP"


def test_a_finished_text_gets_no_new_marks(punctuator):
    assert punctuator.restore(FINISHED, KEEP) == FINISHED
    given = parse(FINISHED)
    post = list(given.post)
    post[1] = post[5] = "COMMA"  # a model that would add two commas and a full stop
    post[3] = "PERIOD"
    more = replace(punctuator.predict(given.words), post=tuple(post))
    assert written_labels(given, more, KEEP, punctuator.inventory).post == given.post


def test_only_the_kinds_the_text_leaves_out_are_filled_in(punctuator):
    given = parse("we like the house. my friend visits new york. do you see the car?")
    post = list(given.post)
    post[1] = post[5] = "COMMA"  # commas the text has none of: filled in
    post[2] = "PERIOD"  # a full stop where the text, which writes them, has none: not
    more = replace(punctuator.predict(given.words), post=tuple(post))
    labelled = written_labels(given, more, KEEP, punctuator.inventory)
    assert labelled.post[1] == labelled.post[5] == "COMMA"
    assert labelled.post[2] in (NULL, "COMMA")
    assert [p for p in labelled.post if p in FINAL] == [p for p in given.post if p in FINAL]


def test_a_stream_fills_in_as_a_whole_restore_does(punctuator):
    stream = punctuator.stream(lookahead=3, options=KEEP)
    pieces = [p for word in FINISHED.split() for p in stream.feed(word)] + stream.flush()
    assert " ".join(pieces) == FINISHED


def test_the_module_example_runs():
    assert doctest.testmod(filling).failed == 0


def test_an_abbreviations_period_before_a_quote_and_a_mark_keeps_both():
    labelled = parse('on "Pitt Rd.", then (see Fig.); and')
    assert labelled.abbreviated == (False, False, True, False, False, True, False)
    assert labelled.post == (NULL, NULL, "COMMA", NULL, NULL, "PERIOD", NULL)
    assert parse('he said "stop." then').abbreviated[2] is False


def test_a_restore_without_keep_existing_marks_a_period_before_a_quote_as_before():
    given = parse('this is it.", she said')
    assert given.abbreviated[2] and given.post[2] == "COMMA"  # kept: 'it.",'
    merged = merge_labels(given, _words_prediction(given), RestoreOptions(), frozenset())
    assert not merged.abbreviated[2] and merged.edges[2].mark_at == 0  # 'it."': the model's
    assert merge_labels(given, _words_prediction(given), KEEP).abbreviated[2]
    known = parse('in the U.S.", he')
    assert merge_labels(known, _words_prediction(known), RestoreOptions()).abbreviated[2]


def _words_prediction(given) -> Prediction:
    """A prediction of full stops everywhere for the words of `given`."""
    return replace(_prediction([[0.1, 0.1, 0.8, 0.0]] * len(given)), words=given.words)


def test_fill_all_puts_the_models_marks_wherever_the_input_has_none(punctuator):
    given = parse("we like the house. my friend visits new york. do you see the car?")
    post = list(given.post)
    post[1] = post[5] = "COMMA"
    post[2] = "PERIOD"
    more = replace(punctuator.predict(given.words), post=tuple(post))
    every = RestoreOptions(keep_existing=True, fill="all")
    labelled = written_labels(given, more, every, punctuator.inventory)
    assert labelled.post[1] == labelled.post[5] == "COMMA" and labelled.post[2] == "PERIOD"
    with pytest.raises(ValueError, match="fill must be one of missing, all"):
        RestoreOptions(fill="some")
