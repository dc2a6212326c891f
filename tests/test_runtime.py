"""Punctuator over ONNX Runtime: words preserved, batching, streaming, bad artifacts."""

import json
import random
import re
import shutil
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from punctum import artifact as artifacts
from punctum.merging import lower_within_sentences, merge_labels, writes_case, written_labels
from punctum.runtime import Punctuator, RestoreOptions
from punctum.text import CAP, LOWER, Labelled, normalize, parse, render
from punctum.windows import WindowConfig

SAMPLE = "do you like the house well i see my car and we visit new york"


@pytest.fixture(scope="module")
def punctuator(tiny_artifact):
    return Punctuator.load(tiny_artifact, threads=1)


def _same_words(source: str, restored: str) -> bool:
    return normalize(source) == normalize(restored)


def test_restore_keeps_words_and_adds_marks(punctuator):
    restored = punctuator.restore(SAMPLE)
    assert _same_words(SAMPLE, restored)
    assert restored[0].isupper() and restored[-1] in ".?!"
    assert "New York" in restored


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "?!...", " -- , "])
def test_empty_inputs_give_empty_output(punctuator, text):
    assert punctuator.restore(text) == ""


def test_a_text_without_words_keeps_its_quotes_and_brackets(punctuator):
    assert punctuator.restore(" “ ”  ( ) ?! :) ") == "“ ” ( ) :)"


QUOTED = 'he said "we visit new york" (twice) and [1] i see :) do you like the house'


def test_restore_keeps_quotes_brackets_and_emoticons(punctuator):
    restored = punctuator.restore(QUOTED)
    assert _same_words(QUOTED, restored)
    kept = [c for c in restored if c in '"()[]:']
    assert kept == list('""()[]:)')
    assert '"we visit new york' in restored.lower() and "[1]" in restored
    assert punctuator.restore(restored) == restored  # idempotent with them


@pytest.mark.parametrize("source", [
    "he called it 'boss,' and left", 'i live in the "U.S.!" now', '"Dr.?) we see',
    "the results ( see table one ). then we left", 'he said " hello there ". then',
    "she said 'stop it now you kids' so they stopped",
])
def test_quoted_text_restores_to_a_fixed_point(punctuator, source):
    once = punctuator.restore(source)
    assert _same_words(source, once)
    assert punctuator.restore(once) == once


EMOTICONS = "see you tomorrow:) we visit new york :D and the house;-( ok :P"


def test_emoticons_stay_whole_in_restores_and_streams(punctuator):
    restored = punctuator.restore(EMOTICONS)
    for emoticon in ("tomorrow:)", " :D", "house;-(", " :P"):
        assert emoticon in restored
    assert punctuator.restore(restored) == restored
    stream = punctuator.stream(lookahead=2)
    pieces = [p for token in EMOTICONS.split() for p in stream.feed(token)] + stream.flush()
    assert " ".join(pieces) == restored
    assert punctuator.restore(":D") == ":D"


def test_a_recognisers_tags_are_written_as_they_came(punctuator):
    source = "<unk> we visit new york <NOISE> do you like the house [laughter] yes"
    restored = punctuator.restore(source)  # not "<Unk>", and no word for the model
    assert restored.startswith("<unk> ") and " <NOISE> " in restored
    assert " [laughter] " in restored  # not "[Laughter]", nor "[laughter]?"
    stream = punctuator.stream(lookahead=2)
    pieces = [p for word in source.split() for p in stream.feed(word)] + stream.flush()
    assert " ".join(pieces).startswith("<unk> ") and " <NOISE> " in " ".join(pieces)
    assert " [laughter] " in " ".join(pieces)


@pytest.mark.parametrize("source, keep", [
    ("(see below:) and more", False),  # the bracket opened in an earlier feed closes
    ("[see below:] ok", True),
    ('We "went" to paris and london', True),  # the first word, parsed again, is no capital
    ("Hello , we went to paris and london", True),
    ('"Stop!" he cried and we left.', True),  # a speech tag across finalisations
    ('he said "no!" and left', True),
])
def test_a_stream_fed_word_by_word_reads_as_the_whole_text(punctuator, source, keep):
    options = RestoreOptions(keep_existing=keep)
    whole = punctuator.restore(source, options)
    for lookahead in (2, 4):
        stream = punctuator.stream(lookahead=lookahead, options=options)
        pieces = [p for word in source.split() for p in stream.feed(word)] + stream.flush()
        written = " ".join(pieces)
        assert [w for w in written.split() if not w[0].isalpha()] == \
            [w for w in whole.split() if not w[0].isalpha()]  # brackets, quotes, emoticons
        assert [w[:1] for w in written.split()] == [w[:1] for w in whole.split()]  # case


@pytest.mark.parametrize("feeds, kept", [
    (["great:)", "?", "yes"], "great:)"), (["great:)", ",", "yes"], "great:),"),
    (["ok", "'[noise],", "yes"], "'[noise]"), (["(–", ":D", "so", "("], "(– :d"),
    (["we see it", "(<unk>", "and"], "(<unk>")])  # (not glued to the next word: normalize)
def test_a_stream_reads_a_symbol_again_with_the_marks_of_the_next_feed(punctuator, feeds,
                                                                       kept):
    options = RestoreOptions(keep_existing=True)
    for lookahead in (0, 4):
        stream = punctuator.stream(lookahead=lookahead, options=options)
        written = " ".join([p for feed in feeds for p in stream.feed(feed)] + stream.flush())
        if lookahead:  # (with none, a final word's mark is the model's: a fed one after it)
            assert kept in written.lower(), written
        assert kept.rstrip(",") in written.lower() and ("," in written or "," not in kept)
        assert normalize(written) == normalize(" ".join(feeds))


@pytest.mark.parametrize("feeds", [["( hi", ")", "see:)"], ["(", "hi", ")", "see:)"],
                                   ["so ( hi", ") we see:) bye"], ["[ a ( b", ")", "]", "c:)"]])
def test_a_bracket_written_apart_from_its_word_is_counted_once(punctuator, feeds):
    for lookahead in (1, 1000):
        stream = punctuator.stream(lookahead=lookahead)
        written = " ".join([p for feed in feeds for p in stream.feed(feed)] + stream.flush())
        assert written == punctuator.restore(" ".join(feeds)) and ":)" in written


@pytest.mark.parametrize("emoticon", ["8-)", "B-)", ":)"])
def test_a_stream_keeps_its_words_when_an_emoticon_comes_alone(punctuator, emoticon):
    for lookahead in (0, 1, 3):
        stream = punctuator.stream(lookahead=lookahead)
        pieces = [p for word in ["see", "you", emoticon] for p in stream.feed(word)]
        written = " ".join(pieces + stream.flush())
        assert normalize(written) == ["see", "you"] and written.endswith(emoticon)


def test_a_text_cut_off_at_its_end_gets_no_closing_mark(punctuator):
    assert punctuator.restore("ok so i-").endswith(" I-")
    assert punctuator.restore("we went i- i think").split()[2] == "I-"


@pytest.mark.parametrize("feeds", [
    ["we go", ":)", ",", ":)", "now we see the house", ":D"],
    [":)", "(", "we go now", ")", "[", "so"],
])
def test_feeds_without_words_read_as_one_text_with_the_next(punctuator, feeds):
    for lookahead in (0, 2):
        apart = punctuator.stream(lookahead=lookahead)
        pieces = [p for feed in feeds for p in apart.feed(feed)] + apart.flush()
        together = punctuator.stream(lookahead=lookahead)
        joined = [p for feed in _joined_wordless(feeds) for p in together.feed(feed)]
        assert pieces == joined + together.flush()


def _joined_wordless(feeds: list[str]) -> list[str]:
    """Feeds with those without words joined to the next (or the last) one with words."""
    out, waiting = [], ""
    for feed in feeds:
        waiting += feed + " "
        if any(c.isalpha() and c not in "DP" for c in feed):
            out.append(waiting.strip())
            waiting = ""
    if waiting:
        out[-1] += " " + waiting.strip()
    return out


def test_stream_keeps_tokens_without_words(punctuator):
    for lookahead in (0, 3):
        stream = punctuator.stream(lookahead=lookahead)
        pieces = [p for token in ("( laughs )", ":)", "so", "we", "go", "(") for p in
                  stream.feed(token)] + stream.flush()
        written = " ".join(pieces)
        assert [t.rstrip(".,?!") for t in written.split()
                if not any(c.isalpha() for c in t)] == ["(", ")", ":)", "("]
        assert _same_words("laughs so we go", written)
    stream = punctuator.stream(lookahead=2)
    assert stream.feed(":)") == [] and stream.flush() == [":)"]


def test_json_words_name_their_quotes_and_brackets(punctuator):
    restored = punctuator.restore_detailed(['( yes ) "we go"'])[0].to_dict()
    words = {w["word"]: w for w in restored["words"]}
    assert words["yes"]["before"] == "( " and words["yes"]["after"] == " )"
    assert words["we"]["before"] == '"' and "after" not in words["we"]
    assert words["go"]["after"] == '"' and "before" not in words["go"]
    kept = punctuator.restore_detailed(["we came; we saw"], RestoreOptions(keep_existing=True))
    came = kept[0].to_dict()["words"][1]
    assert (came["mark"], came["written_mark"]) == ("PERIOD", ";")
    assert "written_mark" not in punctuator.restore_detailed(["we came; we saw"])[0] \
        .to_dict()["words"][1]  # the default restore writes the label's own mark


def test_restoring_twice_gives_the_same_text(punctuator):
    once = punctuator.restore(SAMPLE)
    assert punctuator.restore(once) == once


def test_keep_existing_and_no_case(punctuator):
    kept = punctuator.restore("we visit NEW york; you see", RestoreOptions(keep_existing=True))
    assert "NEW" in kept and "york;" in kept.lower()  # the mark as it was written
    no_case = punctuator.restore("we visit NEW york and IBM", RestoreOptions(case=False))
    written = [w.rstrip(".,?!") for w in no_case.split(" ")]
    assert written == ["we", "visit", "NEW", "york", "and", "IBM"]


@pytest.mark.parametrize("written", [";", " —", "...", "?!", ":", "…"])
def test_keep_existing_writes_marks_as_they_were_written(punctuator, written):
    source = f"we visit new york{written} you see"
    kept = punctuator.restore(source, RestoreOptions(keep_existing=True))
    assert f"york{written} you" in kept.lower()
    assert punctuator.restore(kept, RestoreOptions(keep_existing=True)) == kept
    # by default the model's own marks replace them, each written as its label's text
    assert punctuator.restore(source) == punctuator.restore("we visit new york you see")


@pytest.mark.parametrize("source", ['she asked "why?", and i said no',
                                    'he shouted "stop!". then he left'])
def test_keep_existing_keeps_a_mark_after_a_closing_quote(punctuator, source):
    kept = punctuator.restore(source, RestoreOptions(keep_existing=True))
    assert source.split(" ")[2] in kept.lower()  # '"why?",', '"stop!".'
    assert (" and " in kept) == ("why" in source)  # no new sentence after '?",'
    assert punctuator.restore(kept, RestoreOptions(keep_existing=True)) == kept
    word = source.split(" ")[2].strip('"?!.,')
    entry = next(w for w in punctuator.restore_detailed([source], RestoreOptions(
        keep_existing=True))[0].to_dict()["words"] if w["word"] == word)
    assert entry["after"] == source.split(" ")[2][-2:] and "written_mark" not in entry


@pytest.mark.parametrize("source", ["and to this purpose:", "i have noticed that\"--",
                                    "she paused, then went on,", "we may come to love. . . ."])
def test_keep_existing_does_not_close_a_text_over_its_own_mark(punctuator, source):
    ending = re.search(r"\w+\W*$", source).group()  # the model may add marks, not change it
    kept = punctuator.restore(source, RestoreOptions(keep_existing=True))
    assert kept.lower().endswith(ending)
    stream = punctuator.stream(lookahead=2, options=RestoreOptions(keep_existing=True))
    pieces = [p for word in source.split() for p in stream.feed(word)] + stream.flush()
    assert " ".join(pieces).lower().endswith(ending)


def test_keep_existing_forces_no_capital_within_a_written_sentence(punctuator):
    options = RestoreOptions(keep_existing=True)
    given = parse("we came; it was late, and i left, john")
    prediction = punctuator.predict(given.words)
    capitals = replace(prediction, case=tuple(CAP for _ in given.words))  # a model's CAPs
    labelled = written_labels(given, capitals, options, punctuator.inventory,
                              capitalised=frozenset({"john"}))
    assert labelled.case == (CAP, CAP, LOWER, CAP, CAP, LOWER, CAP, CAP, CAP)  # names stay
    default = written_labels(given, capitals, RestoreOptions(), punctuator.inventory)
    assert default.case == (CAP,) * 9


def test_keep_existing_keeps_a_speech_tag_after_a_quoted_mark(punctuator):
    options = RestoreOptions(keep_existing=True)
    for source in ('"Stop!" he cried and we left.', "“Why?” she asked. We left."):
        assert punctuator.restore(source, options).startswith(source[:10])  # "he", "she"
    assert punctuator.restore('"Stop!" He cried.', options) == '"Stop!" He cried.'


def test_keep_existing_keeps_the_lowercase_words_of_a_text_that_writes_case(punctuator):
    options = RestoreOptions(keep_existing=True)
    given = parse("we saw the theatre actor in new york and John left")
    prediction = punctuator.predict(given.words)
    capitals = replace(prediction, case=tuple(CAP for _ in given.words))  # a model's CAPs
    labelled = written_labels(given, capitals, options, punctuator.inventory)
    assert labelled.case == given.case  # "John" says the text writes case
    pronoun = parse("so i think i'm done and John left")  # "i" is never the writer's choice
    lowered = replace(prediction, words=pronoun.words, case=(LOWER,) * len(pronoun))
    case = written_labels(pronoun, lowered, options, punctuator.inventory).case
    assert (case[1], case[2], case[3]) == (CAP, LOWER, CAP)
    uncased = parse("we saw the theatre actor in new york and john left")  # ASR output
    assert written_labels(uncased, capitals, options, punctuator.inventory).case[1:] == \
        (CAP,) * 10
    assert not writes_case(parse("We saw it. I left")) and writes_case(parse("we saw It"))
    words = "We saw John and the theatre actor in new york and we left".split()
    stream = punctuator.stream(lookahead=2, options=options)
    pieces = [p for word in words for p in stream.feed(word)] + stream.flush()
    assert [p.strip(".,?!") for p in pieces] == [  # capitals only where sentences start
        w.capitalize() if k == 0 or pieces[k - 1][-1] in ".?!" else w
        for k, w in enumerate(words)]


def test_a_stream_keeps_a_lowercase_word_after_a_kept_comma_across_feeds(punctuator):
    options = RestoreOptions(keep_existing=True)
    given = parse("then we left")
    capitals = replace(punctuator.predict(given.words), case=(CAP,) * 3)  # model capitals
    alone = lower_within_sentences(merge_labels(given, capitals, options), given, options,
                                   punctuator.inventory)
    assert alone.case == (CAP,) * 3  # nothing says it continues a sentence
    continued = lower_within_sentences(alone, given, options, punctuator.inventory,
                                       after_pause=True)
    assert continued.case == (LOWER, CAP, CAP)  # "we came;" was fed before it
    stream = punctuator.stream(lookahead=0, options=options)
    stream.feed("we came;")
    assert stream._after_pause and not punctuator.stream(0, options)._after_pause


def test_predict_returns_probabilities(punctuator):
    words = SAMPLE.split()
    prediction = punctuator.predict(words)
    assert prediction.post_probs.shape == (len(words), len(punctuator.post_labels))
    assert prediction.case_probs.shape == (len(words), len(punctuator.case_labels))
    np.testing.assert_allclose(prediction.post_probs.sum(-1), 1.0, atol=1e-5)
    assert len(prediction.to_dict()["words"]) == len(words)


@pytest.mark.parametrize("options", [RestoreOptions(), RestoreOptions(case=False),
                                     RestoreOptions(keep_existing=True)])
def test_detailed_json_describes_the_written_text(punctuator, options):
    """The JSON's marks and cases are those of the text (closing mark, sentence starts)."""
    from punctum.text import Labelled, render

    result = punctuator.restore_detailed(["we visit NEW york, you see " + SAMPLE], options)[0]
    record = json.loads(json.dumps(result.to_dict()))
    words = record["words"]
    labelled = Labelled(tuple(w["word"] for w in words), tuple(w["mark"] for w in words),
                        tuple(w["case"] for w in words), result.labelled.pre,
                        result.labelled.forms, result.labelled.abbreviated)
    assert render(labelled, lexicon=punctuator.artifact.lexicon) == record["text"]
    assert words[-1]["mark"] in {"PERIOD", "QUESTION", "EXCLAMATION"}
    prediction = result.prediction
    for i, word in enumerate(words):
        assert ("model_mark" in word) == (word["mark"] != prediction.post[i])
        assert 0.0 <= word["mark_prob"] <= 1.0


def test_batch_equals_single_and_is_deterministic(punctuator):
    texts = [SAMPLE, "we see a boat", "", "they paint the garden " * 30]
    batch = punctuator.restore_batch(texts)
    assert batch == [punctuator.restore(t) for t in texts]
    assert batch == punctuator.restore_batch(texts)


def test_concurrent_batches_equal_sequential(tiny_artifact, punctuator):
    parallel = Punctuator.load(tiny_artifact, threads=2)
    words = " ".join([SAMPLE] * 12).split()  # many windows of 24 subwords
    one = punctuator.predict_batch([words, words[:50]], batch_size=2)
    two = parallel.predict_batch([words, words[:50]], batch_size=2)
    assert parallel._pool is not None  # the concurrent path ran
    for a, b in zip(one, two):
        assert (a.post, a.case) == (b.post, b.case)
        np.testing.assert_allclose(a.post_probs, b.post_probs, atol=1e-6)


def test_long_input_matches_single_pass_on_short_text(tiny_artifact):
    wide = Punctuator.load(tiny_artifact, windows=WindowConfig(size=4000, left=0, right=0))
    narrow = Punctuator.load(tiny_artifact)  # window of 24 subwords
    short = "we see a boat"
    assert narrow.restore(short) == wide.restore(short)
    long_text = " ".join([SAMPLE] * 40)
    assert _same_words(long_text, narrow.restore(long_text))


def test_stream_finalises_with_lookahead_and_flushes(punctuator):
    stream = punctuator.stream(lookahead=3)
    pieces = []
    for word in SAMPLE.split():
        got = stream.feed(word)
        pieces.extend(got)
        assert len(pieces) <= len(SAMPLE.split())
    assert len(pieces) == len(SAMPLE.split()) - 3
    pieces.extend(stream.flush())
    assert _same_words(SAMPLE, " ".join(pieces))
    assert stream.flush() == []


def test_a_stream_without_lookahead_is_never_closed_by_a_feed(punctuator):
    closing = punctuator.stream(lookahead=0)
    never = punctuator.stream(lookahead=0, options=RestoreOptions(close_text=False))
    for word in SAMPLE.split():  # a feed is never the end, even one that finalises all
        assert closing.feed(word) == never.feed(word)
    assert closing.flush() == [] and never.flush() == []


def test_one_str_where_a_list_of_texts_is_expected_is_a_type_error(punctuator):
    with pytest.raises(TypeError, match="got one str"):
        punctuator.restore_batch("we see a boat")
    with pytest.raises(TypeError, match="got one str"):
        list(punctuator.restore_lines("we see a boat"))
    with pytest.raises(ValueError, match="1 pause lists for 2"):
        punctuator.restore_detailed(["we see", "a boat"], pauses=[[0.1, 0.2]])
    with pytest.raises(TypeError, match="got one str"):
        punctuator.predict("we see a boat")
    with pytest.raises(ValueError, match="lookahead must be an int >= 0, got 2.5"):
        punctuator.stream(lookahead=2.5)


def test_a_generator_of_texts_is_restored_not_used_up(punctuator):
    texts = ["we see a boat", "so what do you think"]
    assert punctuator.restore_batch(t for t in texts) == punctuator.restore_batch(texts)
    assert len(punctuator.predict_batch(t.split() for t in texts)) == 2


def test_a_lone_surrogate_and_an_empty_model_name_are_clear_errors(punctuator):
    with pytest.raises(ValueError, match=r"lone surrogate \(U\+D800\)"):
        punctuator.restore("so what \ud800 do you think")
    with pytest.raises(FileNotFoundError, match="no model ''"):
        Punctuator.load("")


def test_restore_lines_long_line_uses_stream(punctuator):
    words = ("we visit new york and they paint the garden " * 25000).split()
    lines = ["", " ".join(words), "we see a boat"]
    out = list(punctuator.restore_lines(lines))
    assert out[0] == "" and len(out) == 3
    assert normalize(out[1]) == words


def test_long_lines_restore_again_to_themselves(punctuator, monkeypatch):
    """Lines go the long way by their words, not characters (restoring adds marks), and
    are fed in parts of as many words whatever marks stand alone: a second restore
    takes the same path, cut in the same places."""
    from punctum import runtime

    monkeypatch.setattr(runtime, "LONG_LINE_WORDS", 150)
    monkeypatch.setattr(runtime, "LONG_LINE_PART", 40)
    vocabulary = ("so what do you think about the plan i it is great but we need time well met "
                  "in new york last week can send me numbers by friday and then home").split()
    rng = random.Random(0)
    near = " ".join(rng.choice(vocabulary) for _ in range(150))  # just not long
    tokens = []
    for _ in range(1500):  # long, with marks standing alone, which restoring takes away
        tokens += [rng.choice(vocabulary)] + ["-"] * (rng.random() < 0.15)
    long = " ".join(tokens)
    assert not punctuator.is_long_line(near) and punctuator.is_long_line(long)
    for line in (near, long):
        once = next(punctuator.restore_lines([line]))
        assert punctuator.is_long_line(once) == punctuator.is_long_line(line)
        assert next(punctuator.restore_lines([once])) == once
    assert normalize(once) == normalize(long)


def test_control_characters_count_as_word_breaks_for_long_lines(punctuator, monkeypatch):
    from punctum import runtime

    monkeypatch.setattr(runtime, "LONG_LINE_WORDS", 150)
    line = "\x00".join(["so", "what", "do", "you", "think"] * 40)  # 200 words, no spaces
    assert punctuator.is_long_line(line)
    once = next(punctuator.restore_lines([line]))
    assert punctuator.is_long_line(once) and next(punctuator.restore_lines([once])) == once
    monkeypatch.setattr(runtime, "LONG_LINE", 100)  # words of hundreds of characters
    assert punctuator.is_long_line(" ".join(["x" * 300] * 2))


def test_stream_detailed_parts_equal_the_pieces_and_describe_them(tiny_artifact):
    words = ("we visit new york and they paint the garden " * 30).split()
    plain = Punctuator.load(tiny_artifact, threads=1).stream(lookahead=3)
    detailed = Punctuator.load(tiny_artifact, threads=1).stream(lookahead=3)
    pieces, parts = [], []
    for i in range(0, len(words), 7):
        pieces += plain.feed(words[i:i + 7])
        parts.append(detailed.feed_detailed(words[i:i + 7]))
    pieces += plain.flush()
    parts.append(detailed.flush_detailed())
    parts = [part for part in parts if part is not None]
    assert " ".join(part.text for part in parts) == " ".join(pieces)
    entries = [entry for part in parts for entry in part.to_dict()["words"]]
    assert [entry["word"] for entry in entries] == words
    assert detailed.flush_detailed() is None


_ADVERSARIAL = st.one_of(
    st.text(max_size=60),
    st.lists(st.sampled_from(["we", "see", "NEW", "york", "U.S.", "3.5", "don't", "?", ",",
                              "😀", "東京", "é", "-", "\"", "Dr.", "'em", "\x00", "\u200b"]),
             max_size=30).map(" ".join),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(_ADVERSARIAL)
def test_output_words_equal_input_words(punctuator, text):
    restored = punctuator.restore(text)
    assert normalize(restored) == normalize(text)


def test_runtime_does_not_import_torch(tiny_artifact):
    code = ("import sys; from punctum.runtime import Punctuator; "
            f"p = Punctuator.load({str(tiny_artifact)!r}); p.restore('we see a boat'); "
            "assert 'torch' not in sys.modules, 'torch imported'")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-1500:]


# ----------------------------------------------------------------------------- bad artifacts

def _copy(tiny_artifact, tmp_path):
    target = tmp_path / "copy"
    shutil.copytree(tiny_artifact, target)
    return target


def test_missing_artifact_and_unknown_name(tmp_path):
    with pytest.raises(FileNotFoundError, match="no model 'nonexistent-model'"):
        Punctuator.load("nonexistent-model")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="punctum.json"):
        Punctuator.load(tmp_path / "empty")


def test_hub_ids_download_through_huggingface_hub(tiny_artifact, monkeypatch):
    """An "owner/name" that is no local folder goes to the hub: a fetched folder loads, and a
    failed fetch (offline: multi-line errors) is one line naming the id."""
    import types

    from punctum.artifact import resolve

    def fake_download(repo_id):
        if repo_id == "someone/model":
            return str(tiny_artifact)
        raise OSError("Name or service not known\nAn error happened on the Hub")

    monkeypatch.setitem(sys.modules, "huggingface_hub",
                        types.SimpleNamespace(snapshot_download=fake_download))
    assert resolve("someone/model") == tiny_artifact
    assert resolve("hf:someone/model") == tiny_artifact
    assert Punctuator.load("someone/model").restore("so what") != ""
    with pytest.raises(FileNotFoundError) as error:
        resolve("nowhere/model")
    assert "'nowhere/model'" in str(error.value) and "\n" not in str(error.value)


def test_corrupt_files_are_named(tiny_artifact, tmp_path):
    folder = _copy(tiny_artifact, tmp_path)
    (folder / "model.onnx").write_bytes(b"\x00garbage" * 100)
    with pytest.raises(ValueError, match="model.onnx: not a loadable ONNX model"):
        Punctuator.load(folder)
    folder = _copy(tiny_artifact, tmp_path / "b")
    (folder / "punctum.json").write_text("{broken", encoding="utf-8")
    with pytest.raises(ValueError, match="punctum.json: not valid JSON"):
        Punctuator.load(folder)
    folder = _copy(tiny_artifact, tmp_path / "c")
    (folder / "tokenizer.json").unlink()
    with pytest.raises(FileNotFoundError, match="tokenizer.json"):
        Punctuator.load(folder)
    folder = _copy(tiny_artifact, tmp_path / "d")  # another model's tokenizer
    shutil.copy(artifacts.resolve("en-tiny") / "tokenizer.json", folder / "tokenizer.json")
    with pytest.raises(ValueError, match=r"tokenizer.json: 5,000 pieces, but the model was "
                                         r"trained with \d+"):
        Punctuator.load(folder)
    folder = _copy(tiny_artifact, tmp_path / "e")  # another model's graph (a larger table)
    shutil.copy(artifacts.resolve("en-tiny") / "model.onnx", folder / "model.onnx")
    with pytest.raises(ValueError, match="model.onnx: its embedding table does not fit "
                                         "tokenizer.json's"):
        Punctuator.load(folder)
    folder = _copy(artifacts.resolve("en-tiny"), tmp_path / "f")  # ... a smaller one
    shutil.copy(tiny_artifact / "model.onnx", folder / "model.onnx")
    with pytest.raises(ValueError, match="its embedding table does not fit"):
        Punctuator.load(folder)


def test_pretrained_tokenizer_may_be_smaller_than_the_embedding_table(tiny_artifact, tmp_path):
    folder = _copy(tiny_artifact, tmp_path)
    meta = json.loads((folder / "punctum.json").read_text(encoding="utf-8"))
    meta["model_config"]["vocab_size"] += 8  # a padded table, as pretrained encoders have
    meta["training"].setdefault("recipe", {})["tokenizer"] = {"kind": "pretrained"}
    (folder / "punctum.json").write_text(json.dumps(meta), encoding="utf-8")
    assert Punctuator.load(folder).restore("so what") == Punctuator.load(tiny_artifact).restore(
        "so what")
    meta["training"]["recipe"]["tokenizer"] = {"kind": "bpe"}  # punctum's own BPE: exact
    (folder / "punctum.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match="pieces, but the model was trained with"):
        Punctuator.load(folder)


@pytest.mark.parametrize("change, message", [
    ({"windows": {}}, "windows must be an object with whole numbers"),
    ({"windows": {"size": "24", "left": 6, "right": 4}}, "windows must be an object"),
    ({"model": {"precision": "int8"}}, "model must be an object with a 'file' name"),
    ({"tokenizer": "tokenizer.json"}, "tokenizer must be an object with a 'file' name"),
    ({"pauses": 5}, "pauses must be null or an object with a list of 'edges'"),
    ({"pauses": {"edges": [0.1, 0.2]}}, "pauses is set but model.onnx has no 'pauses' input"),
    ({"format_version": "1"}, "format_version '1' is not supported"),
    ({"windows": {"size": 1, "left": 0, "right": 0}}, "windows.size must be an integer >= 2"),
    ({"windows": {"size": 24, "left": 20, "right": 4}}, "windows.left + windows.right must"),
])
def test_malformed_punctum_json_is_one_line_naming_it(tiny_artifact, tmp_path, change, message):
    folder = _copy(tiny_artifact, tmp_path)
    meta = json.loads((folder / "punctum.json").read_text()) | change
    (folder / "punctum.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        Punctuator.load(folder)
    assert str(folder / "punctum.json") in str(error.value) and "\n" not in str(error.value)


def test_arguments_of_the_wrong_type_are_named(tiny_artifact, punctuator):
    stream = punctuator.stream()
    for bad in (None, b"hi", 5, ["a", None]):
        with pytest.raises(TypeError, match="feed expects a str or a sequence of str"):
            stream.feed(bad)
    assert stream.feed(w for w in ["we", "see"]) + stream.flush()  # any iterable of str
    with pytest.raises(TypeError, match="restore_lines expects lines of str, got NoneType"):
        list(punctuator.restore_lines(["we see", None]))
    with pytest.raises(TypeError, match="post_bias must be a mapping"):
        Punctuator.load(tiny_artifact, post_bias=[1])
    with pytest.raises(TypeError, match="windows must be a punctum.windows.WindowConfig"):
        Punctuator.load(tiny_artifact, windows={"size": 24})


@pytest.mark.parametrize("threads", [-1, 257, 10**6, 1.5, True])
def test_thread_counts_out_of_range_are_refused(tiny_artifact, threads):
    with pytest.raises(ValueError, match="threads must be a whole number from 0"):
        Punctuator.load(tiny_artifact, threads=threads)


def test_label_count_mismatch_fails_loudly(tiny_artifact, tmp_path):
    folder = _copy(tiny_artifact, tmp_path)
    meta = json.loads((folder / "punctum.json").read_text())
    meta["inventory"]["post_marks"] = meta["inventory"]["post_marks"][:2]
    (folder / "punctum.json").write_text(json.dumps(meta))
    with pytest.raises(ValueError, match="punct_logits has 5 labels but punctum.json lists 3"):
        Punctuator.load(folder)


def test_export_records_parity_and_settings(tiny_artifact):
    meta = json.loads((tiny_artifact / "punctum.json").read_text())
    assert meta["parity"]["label_agreement"] >= 0.995 and meta["parity"]["words"] > 100
    assert meta["model"]["precision"] == "int8" and meta["kind"] == "cnn_bilstm"
    assert meta["windows"] == {"size": 24, "left": 6, "right": 4, "max_subwords": 64,
                               "strategy": "double_overlap"}
    assert json.loads((tiny_artifact / "lexicon.json").read_text()).get("iphone") == "iPhone"
    capitalised = json.loads((tiny_artifact / "capitalised.json").read_text())
    assert capitalised["min_count"] == 5 and capitalised["validation_documents_skipped"] == 0.0
    assert all(isinstance(w, str) and w == w.lower() for w in capitalised["words"])


def test_windows_per_call_caps_every_onnx_batch(tiny_artifact, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(tiny_artifact, folder)
    texts = [f"so what do you think {i} i think it is great and we should start" * 3
             for i in range(6)]
    sizes = []

    def record(punctuator):
        run = punctuator._run
        punctuator._run = lambda windows, session: sizes.append(len(windows)) or run(
            windows, session)
        return punctuator

    batched = record(Punctuator.load(folder)).restore_batch(texts)
    assert max(sizes) > 1
    meta = json.loads((folder / "punctum.json").read_text())
    meta["windows"]["per_call"] = 1
    (folder / "punctum.json").write_text(json.dumps(meta))
    sizes.clear()
    alone = record(Punctuator.load(folder)).restore_batch(texts,
                                                           RestoreOptions(batch_size=64))
    assert set(sizes) == {1} and len(alone) == len(batched)
    assert alone == [Punctuator.load(folder).restore(t) for t in texts]
    for bad in (0, "1", True):
        meta["windows"]["per_call"] = bad
        (folder / "punctum.json").write_text(json.dumps(meta))
        with pytest.raises(ValueError, match="windows.per_call"):
            Punctuator.load(folder)


def test_addresses_are_written_in_lowercase(tiny_artifact):
    from punctum.runtime import decide_case

    probs = np.array([[0, 0.9, 0.1, 0], [0, 0, 0, 1], [0, 0.9, 0.1, 0]], np.float32)
    labels = ("LOWER", "CAP", "UPPER", "MIX")
    words = ("joe@example.com", "www.example.com", "joe")
    assert decide_case(words, probs, labels) == ("LOWER", "LOWER", "CAP")
    text = "joe@example.com wrote to https://example.org and www.example.com"
    restored = Punctuator.load(tiny_artifact).restore(text)
    assert restored.startswith("joe@example.com")  # not a capitalised sentence start
    assert "https://example.org" in restored and "www.example.com" in restored


def test_an_address_keeps_the_case_it_was_written_in(tiny_artifact):
    punctuator = Punctuator.load(tiny_artifact)
    text = "see https://example.com/Path?A=1 and @JoeBiden and joe@example.com"
    restored = punctuator.restore(text)
    assert "https://example.com/Path?A=1" in restored and "@JoeBiden" in restored
    assert "joe@example.com" in restored
    assert "Path" not in punctuator.restore(text.lower())
    shouted = punctuator.restore("GO TO WWW.PBS.ORG/NEWSHOUR OR Www.example.com NOW")
    assert "www.pbs.org/newshour" in shouted and "www.example.com" in shouted


def test_numbers_with_lowercase_endings_are_written_in_lowercase(tiny_artifact):
    from punctum.runtime import decide_case

    probs = np.array([[0, 0.9, 0.1, 0], [0, 0.1, 0.9, 0], [0, 0.9, 0.1, 0]], np.float32)
    labels = ("LOWER", "CAP", "UPPER", "MIX")
    assert decide_case(("2nd", "1990s", "3d"), probs, labels) == ("LOWER", "LOWER", "CAP")
    restored = Punctuator.load(tiny_artifact).restore("2nd place went to them")
    assert restored.startswith("2nd")


def test_a_title_gets_its_period_only_where_the_model_writes_it_capitalised():
    from punctum.runtime import Prediction
    from punctum.text import parse

    words = "i met mr smith and dr congo and mr t and gen alpha".split()
    own = ["CAP", "LOWER", "CAP", "CAP", "LOWER", "UPPER", "CAP", "LOWER", "CAP", "CAP",
           "LOWER", "LOWER", "CAP"]  # the model's top labels: DR Congo, gen alpha
    case = [("CAP" if c == "UPPER" else c) for c in own]  # after decide_case: Dr, Gen
    case[11] = "CAP"  # capitalised.json makes "gen" Capitalised
    labels = ("LOWER", "CAP", "UPPER", "MIX")
    probs = np.eye(4, dtype=np.float32)[[labels.index(c) for c in own]]
    post = ("O",) * 12 + ("PERIOD",)
    prediction = Prediction(tuple(words), post, tuple(case), np.zeros((13, 4), np.float32),
                            probs, ("O", "COMMA", "PERIOD", "QUESTION"), labels)
    given = parse(" ".join(words))
    abbreviations = frozenset({"mr", "dr", "gen"})
    merged = merge_labels(given, prediction, RestoreOptions(), abbreviations)
    assert [w for w, a in zip(words, merged.abbreviated) if a] == ["mr"]  # Mr. Smith only
    assert render(merged) == "I met Mr. Smith and Dr Congo and Mr T and Gen Alpha."
    kept = merge_labels(given, prediction, RestoreOptions(keep_existing=True), abbreviations)
    assert not any(kept.abbreviated)


def test_json_entries_say_which_words_carry_an_abbreviation_period(tiny_artifact):
    result = Punctuator.load(tiny_artifact).restore_detailed(["we saw the U.S. team"])[0]
    entries = result.to_dict()["words"]
    assert [e.get("abbreviated", False) for e in entries] == [False, False, False, True,
                                                              False]


def test_dotted_initialisms_are_written_in_capitals():
    from punctum.runtime import decide_case

    probs = np.array([[0, 0.9, 0.1, 0], [0, 0.2, 0.1, 0.7], [0, 0.9, 0.1, 0],
                      [0.9, 0.1, 0, 0], [0, 0.9, 0.1, 0]], np.float32)
    labels = ("LOWER", "CAP", "UPPER", "MIX")
    words = ("s.o.s", "f.b.i.", "e.g", "u.s", "ph.d")
    assert decide_case(words, probs, labels) == ("UPPER", "UPPER", "CAP", "LOWER", "CAP")
    assert render(Labelled(("we", "sent", "s.o.s"), ("O", "O", "PERIOD"),
                           ("CAP", "LOWER", "UPPER"), abbreviated=(False, False, True))) \
        == "We sent S.O.S."


def test_a_word_cut_off_takes_no_mark_nor_capitals_and_its_sentence_goes_on():
    from punctum.runtime import decide_case, decide_marks

    words = ("th-", "the", "i-", "i", "we-")
    post_probs = np.tile(np.array([[0.1, 0.8, 0.1]], np.float32), (5, 1))  # COMMA first
    assert decide_marks(words, post_probs, ("O", "COMMA", "PERIOD")) == \
        ("O", "COMMA", "O", "COMMA", "COMMA")  # (the last word's mark: the text's end)
    case_probs = np.tile(np.array([[0.1, 0.2, 0.7, 0]], np.float32), (5, 1))  # UPPER first
    case_probs[[1, 3]] = [0.1, 0.8, 0.1, 0]  # CAP
    labels = ("LOWER", "CAP", "UPPER", "MIX")
    assert decide_case(words, case_probs, labels) == ("LOWER", "LOWER", "UPPER", "CAP", "LOWER")
    assert decide_case(words, case_probs, labels, frozenset({"the"}))[1] == "CAP"  # a name
    lower = np.tile(np.array([[0.9, 0.1, 0, 0]], np.float32), (2, 1))
    assert decide_case(("i-", "i"), lower, labels) == ("CAP", "LOWER")  # "I- i": English
    assert decide_case(("i-", "i"), lower, labels, pronoun_i=False) == ("LOWER", "LOWER")
    stutter = ("w-", "what", "do")  # a single letter cut off too
    assert decide_marks(stutter, post_probs[:3], ("O", "COMMA", "PERIOD"))[0] == "O"


def test_capitalised_words_are_never_lower(tiny_artifact, tmp_path):
    from punctum.runtime import decide_case

    probs = np.array([[0.9, 0.1, 0, 0], [0.2, 0.1, 0.7, 0], [0.6, 0.4, 0, 0]], np.float32)
    labels = ("LOWER", "CAP", "UPPER", "MIX")
    words = ("zurich", "nasa", "the")
    assert decide_case(words, probs, labels) == ("LOWER", "UPPER", "LOWER")
    assert decide_case(words, probs, labels, frozenset({"zurich", "nasa"})) == \
        ("CAP", "UPPER", "LOWER")  # only LOWER is raised; UPPER stays
    folder = tmp_path / "model"
    shutil.copytree(tiny_artifact, folder)
    words = "we flew over qqzx and then we flew home".split()
    plain = Punctuator.load(folder).predict(words)
    assert any(c == "LOWER" for w, c in zip(words, plain.case) if w in ("flew", "home"))
    (folder / "capitalised.json").write_text(json.dumps({"words": ["qqzx", "flew", "home"]}))
    named = Punctuator.load(folder)
    assert named.predict(words).case == tuple(
        "CAP" if c == "LOWER" and w in ("qqzx", "flew", "home") else c
        for w, c in zip(words, plain.case))
    restored = named.restore(" ".join(words)).split()
    assert [w for w in restored if w.strip(".,?!").lower() == "home"][0][0] == "H"
    (folder / "capitalised.json").write_text(json.dumps({"words": "qqzx"}))
    with pytest.raises(ValueError, match="capitalised.json"):
        Punctuator.load(folder)


def test_package_level_api(tiny_artifact):
    import punctum

    code = "import sys, punctum; assert 'onnxruntime' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
    restored = punctum.restore(SAMPLE, model=str(tiny_artifact))
    assert restored == punctum.load(str(tiny_artifact)).restore(SAMPLE)
    with pytest.raises(AttributeError):
        punctum.no_such_name  # noqa: B018


def test_text_is_closed_with_a_sentence_mark(punctuator):
    for text in ["we see a boat", "do you like the house", "well"]:
        assert punctuator.restore(text)[-1] in ".?!"
    open_text = punctuator.restore("we see a boat", RestoreOptions(close_text=False))
    assert normalize(open_text) == ["we", "see", "a", "boat"]


def test_batches_are_bounded_in_windows_and_subwords():
    from punctum.runtime import BATCH_SUBWORDS, _chunk_jobs

    lengths = [10] * 5 + [402] * 20 + [BATCH_SUBWORDS + 10]
    chunks = _chunk_jobs(list(range(len(lengths))), lengths, batch_size=4)
    assert [job for chunk in chunks for job in chunk] == list(range(len(lengths)))
    for chunk in chunks:
        assert len(chunk) <= 4
        assert len(chunk) == 1 or len(chunk) * max(lengths[j] for j in chunk) <= BATCH_SUBWORDS
    assert [len(c) for c in chunks][-1] == 1  # an over-long window runs alone


def test_a_stream_keeps_a_mark_fed_on_its_own(punctuator):
    options = RestoreOptions(keep_existing=True)
    stream = punctuator.stream(lookahead=2, options=options)
    pieces = stream.feed("we") + stream.feed("see") + stream.feed(",") + stream.feed(
        "a boat and") + stream.flush()
    assert pieces[1] == "see,"
    assert " ".join(pieces) == punctuator.restore("we see , a boat and", options)


@pytest.mark.parametrize("text", ["i came ; i saw -- and then ... we left !",
                                  "wait – what", "we saw :) it ; ok", 'so " quoted " end'])
def test_a_stream_without_lookahead_keeps_the_marks_after_a_final_word(punctuator, text):
    options = RestoreOptions(keep_existing=True)
    stream = punctuator.stream(lookahead=0, options=options)
    pieces = [piece for word in text.split() for piece in stream.feed(word)] + stream.flush()
    marks = [t for t in text.split() if not t[0].isalnum()]
    assert [p for p in pieces if not p[0].isalnum()] == marks  # each kept as written
    assert normalize(" ".join(pieces)) == normalize(text)


def test_a_mark_fed_after_a_final_word_ends_its_sentence(punctuator):
    stream = punctuator.stream(lookahead=0, options=RestoreOptions(keep_existing=True))
    pieces = [piece for feed in ("we left", ". then we slept", "? and so") for piece
              in stream.feed(feed)]
    assert pieces[2:4] == [".", "Then"] and pieces[6:8] == ["?", "And"]
    assert stream._marks.given == (2, 0)  # both counted toward the marks the text writes
    assert stream.feed("; so") == [";", "so"]  # ";" ends no sentence: "so" stays as written
    assert stream._marks.given == (3, 0)
    stream.feed("ok.")
    stream.feed("well")
    assert stream._marks.given == (4, 0)  # a final word's own mark counts too


def test_marks_and_tags_fed_after_a_final_word_are_its_lead(punctuator):
    stream = punctuator.stream(lookahead=0, options=RestoreOptions(keep_existing=True))
    stream.feed("we left")
    part = stream.feed_detailed("<unk> . then we came")
    assert part.lead == "<unk> ." and part.text.startswith("<unk> . Then ")
    assert part.labelled.words == ("then", "we", "came")


def test_a_rejected_feed_leaves_the_stream_as_it_was(punctuator):
    stream = punctuator.stream(lookahead=4)
    assert stream.feed("hello there my friend") == []
    with pytest.raises(ValueError, match="lone surrogate"):
        stream.feed("so \ud800")
    pieces = stream.feed("how are you") + stream.flush()
    assert normalize(" ".join(pieces)) == "hello there my friend how are you".split()


def test_the_closing_mark_follows_the_decision_biases():
    import numpy as np

    from punctum.merging import close_text
    from punctum.runtime import Prediction
    from punctum.text import get_inventory, parse

    inventory = get_inventory("en")
    labels = inventory.post_labels
    probs = np.full((1, len(labels)), 0.01, dtype=np.float32)
    probs[0, 0], probs[0, labels.index("PERIOD")] = 0.6, 0.25
    probs[0, labels.index("QUESTION")] = 0.1
    prediction = Prediction(("raining",), ("O",), ("LOWER",), probs, None, labels, ())
    given = parse("raining", inventory)
    bias = np.zeros(len(labels))
    assert close_text(given, prediction, inventory).post == ("PERIOD",)
    bias[labels.index("QUESTION")] = 1.5
    assert close_text(given, prediction, inventory, bias).post == ("QUESTION",)



@pytest.mark.parametrize("feeds, text", [
    (["hello", ", world"], "hello , world"),
    (["hello", "!world"], "hello !world"),
    (["so", ",", "?", "so"], "so , ? so"),
    (["so", "what", ",", "Is", "this"], "so what , Is this"),
])
def test_a_stream_keeps_marks_that_start_a_feed(punctuator, feeds, text):
    options = RestoreOptions(keep_existing=True)
    stream = punctuator.stream(lookahead=100, options=options)
    pieces = [piece for feed in feeds for piece in stream.feed(feed)] + stream.flush()
    assert " ".join(pieces) == punctuator.restore(text, options)


def test_initialisms_and_caseless_words_are_written_as_reported(punctuator):
    first = punctuator.restore("w.t.s is here").split()[0]
    assert first.rstrip(",.?!") == "W.T.S"  # not W.t.s, whatever mark the model adds
    result = punctuator.restore_detailed(["0 apples are here"])[0]
    assert result.to_dict()["words"][0]["case"] == "LOWER"  # "0" shows no case


def test_a_keep_existing_stream_revises_the_marks_it_guessed(punctuator):
    keep = RestoreOptions(keep_existing=True)
    text = "ok so the first thing is the budget the second thing is the timeline any questions"
    for options in (keep, RestoreOptions()):  # nothing to keep: the same text either way
        stream = punctuator.stream(lookahead=3, options=options)
        pieces = [p for word in text.split() for p in stream.feed(word)] + stream.flush()
        if options is keep:
            with_keep = " ".join(pieces)
        else:
            assert with_keep == " ".join(pieces)



def test_a_title_predicted_upper_is_capitalised():
    import numpy as np

    from punctum.runtime import decide_case

    labels = ("LOWER", "CAP", "UPPER", "MIX")
    upper = np.tile(np.array([0.1, 0.2, 0.6, 0.1]), (2, 1))
    assert decide_case(["mr", "nasa"], upper, labels, abbreviations=frozenset({"mr"})) == (
        "CAP", "UPPER")


def test_a_training_run_given_as_a_model_points_to_export(tiny_run):
    with pytest.raises(FileNotFoundError, match="a training run: punctum export .*best.pt"):
        Punctuator.load(tiny_run)
    with pytest.raises(ValueError, match="a training checkpoint: punctum export"):
        Punctuator.load(tiny_run / "best.pt")
