"""CTC vocabulary: marks as tokens, mark-free intermediate targets, adaptation by replacement."""

import random

import pytest

from punctum.ctc_vocab import BLANK, CtcVocabulary, add_marks, marked_items

WORDS = ("the cat sat on a mat and then it ran away from home because nobody was there to "
         "feed it hello did you see my little garden today").split()


def texts(n=400, seed=0):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(5, 14))]
        out.append(" ".join(words[:3]).capitalize() + ", " + " ".join(words[3:])
                   + rng.choice([".", "?", "!"]))
    return out


@pytest.fixture(scope="module")
def vocab():
    return CtcVocabulary.train(texts(), vocab_size=150)


def test_blank_is_zero_and_marks_are_single_tokens(vocab):
    assert vocab.tokenizer.token_to_id(BLANK) == 0
    assert vocab.marks == (",", ".", "?", "!")
    ids = vocab.encode("Hello, the cat sat. Did you?")
    pieces = [vocab.tokenizer.id_to_token(i) for i in ids]
    assert [p for p in pieces if p in vocab.marks] == [",", ".", "?"]
    assert 0 not in ids
    assert vocab.decode(ids) == "hello, the cat sat. did you?"


def test_unpunctuated_targets_drop_only_the_marks(vocab):
    with_marks = vocab.encode("The cat, sat on a mat.")
    without = vocab.encode("The cat, sat on a mat.", marks=False)
    assert without == [i for i in with_marks if i not in vocab.mark_ids]
    assert without == vocab.encode("the cat sat on a mat")


def test_token_words_map_pieces_to_words(vocab):
    ids = vocab.encode("nobody, was there.")
    words = vocab.token_words(ids)
    assert max(words) == 2 and words.count(-1) == 2
    assert [w for w in words if w >= 0] == sorted(w for w in words if w >= 0)


def test_marked_items_keep_reading_order():
    assert marked_items("Well, is it?") == [(False, "well"), (True, ","), (False, "is"),
                                            (False, "it"), (True, "?")]


def test_save_load_round_trip(vocab, tmp_path):
    vocab.save(tmp_path / "vocab.json")
    loaded = CtcVocabulary.load(tmp_path / "vocab.json")
    assert loaded.marks == vocab.marks and loaded.size == vocab.size
    text = "Did you see my little garden today?"
    assert loaded.encode(text) == vocab.encode(text)


def test_add_marks_keeps_size_and_ids():
    plain = CtcVocabulary.train(texts(), vocab_size=150, with_marks=False)
    assert plain.marks == () and plain.encode("the cat, sat.") == plain.encode("the cat sat")
    adapted, replaced = add_marks(plain, texts(100, seed=1))
    assert adapted.size == plain.size
    assert set(replaced) == {",", ".", "?", "!"}
    kept = [t for t in plain.tokenizer.get_vocab() if t not in replaced.values()]
    assert all(plain.tokenizer.token_to_id(t) == adapted.tokenizer.token_to_id(t) for t in kept)
    for mark, piece in replaced.items():
        assert adapted.tokenizer.token_to_id(mark) == plain.tokenizer.token_to_id(piece)
    ids = adapted.encode("The cat, sat on a mat.")
    assert adapted.decode(ids) == "the cat, sat on a mat."
    assert all(i < adapted.size for i in ids)


def test_add_marks_registers_marks_that_are_already_pieces():
    # "u.s." and "1,000" put "." and "," into the alphabet of a mark-free vocabulary
    corpus = texts() + ["The u.s. paid 1,000 dollars, then 2,500 more."] * 5
    plain = CtcVocabulary.train(corpus, vocab_size=150, with_marks=False)
    dot, comma = plain.tokenizer.token_to_id("."), plain.tokenizer.token_to_id(",")
    assert dot is not None and comma is not None
    adapted, replaced = add_marks(plain, texts(100, seed=1))
    assert set(replaced) == {"?", "!"} and adapted.size == plain.size
    assert adapted.marks == (",", ".", "?", "!")
    assert adapted.tokenizer.token_to_id(".") == dot and adapted.tokenizer.token_to_id(",") == comma
    ids = adapted.encode("The cat, sat. Did it?")
    assert {dot, comma} <= adapted.mark_ids and comma in ids and dot in ids
    assert adapted.token_words(ids).count(-1) == 3  # the three marks belong to no word
