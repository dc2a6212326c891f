"""Speaker labels, turn marks, sound descriptions and timestamps (`formats.annotations`)."""

import io
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_formats import ScriptedPunctuator, _write

from punctum import formats
from punctum.batch import FileOptions, Source, note_punctuated, restore_source
from punctum.cli import main
from punctum.formats import Transcript
from punctum.formats.annotations import (
    annotated_cue,
    find_annotations,
    text_outside,
    words_outside,
)
from punctum.formats.transcript import Cue, split_tokens
from punctum.runtime import Prediction, Punctuator, RestoreOptions
from punctum.text import normalize


def _kept(text: str, markup: bool = False) -> tuple[list[str], list[str]]:
    """(annotation token texts, turn token texts) of one cue's text."""
    tokens = split_tokens(text, markup=markup)
    found = find_annotations(tokens)
    return ([tokens[i].text for i in sorted(found.kept_out)],
            [tokens[i].text for i in sorted(found.turns)])


@pytest.mark.parametrize("text, kept, turns", [
    ("JOHN: where are you going", ["JOHN:"], ["JOHN:"]),
    ("SPEAKER_00: hi", ["SPEAKER_00:"], ["SPEAKER_00:"]),
    ("Speaker 2: okay", ["Speaker", "2:"], ["Speaker"]),
    ("Dr. Smith: yes", ["Dr.", "Smith:"], ["Dr."]),
    ("Speaker 1 (00:03): hi there", ["Speaker", "1", "(00:03):"], ["Speaker"]),
    (">> and we are back", [">>"], [">>"]),
    ("good evening >> thank you", [">>"], [">>"]),  # inside a line too
    ("[00:01:02] agent: hello", ["[00:01:02]", "agent:"], ["agent:"]),
    ("00:01:02 speaker_1: um so", ["00:01:02", "speaker_1:"], ["speaker_1:"]),
    ("[00:00.000 --> 00:05.000]  so we went", ["[00:00.000", "-->", "00:05.000]"], []),
    ("i was there [door slams] and (laughs). then", ["[door", "slams]", "(laughs)."], []),
    ("[music]", ["[music]"], []),
    ("♪ ♫", ["♪", "♫"], []),  # a cue of music notes alone is a sound
    ("hello\n- hi\nMARY: ok", ["-", "MARY:"], ["-", "MARY:"]),
    ("- first speaker\nand more", ["-"], []),  # a lone first-line dash opens no turn
    ("- first speaker\n- second", ["-", "-"], ["-", "-"]),  # two dashed lines: two turns
    ("NARRATOR (V.O.): it was cold", ["NARRATOR", "(V.O.):"], ["NARRATOR"]),
    ("HOST [laughing]: welcome back", ["HOST", "[laughing]:"], ["HOST"]),
    ("[SPEAKER_00]: so we went", ["[SPEAKER_00]:"], ["[SPEAKER_00]:"]),
    ("+14155550199: yes we can", ["+14155550199:"], ["+14155550199:"]),  # dial-in
    ("Maria de la Cruz: great", ["Maria", "de", "la", "Cruz:"], ["Maria"]),  # full names
    ("José María García López: yes", ["José", "María", "García", "López:"], ["José"]),
    ("[Maria de la Cruz]: great", ["[Maria", "de", "la", "Cruz]:"], ["[Maria"]),  # WhisperX
    ("[And So On And]: x", ["[And", "So", "On", "And]:"], []),  # a bracket, no speaker
    ("[john smith]: hi", ["[john", "smith]:"], ["[john"]),  # (--to text of a speaker so named)
    ("(speaker 0) and so", ["(speaker", "0)"], ["(speaker"]),  # whisper.cpp --diarize
    ("(speaker ?) yes", ["(speaker", "?)"], ["(speaker"]),
    ("we met (speaker 2) there", ["(speaker", "2)"], []),  # inside a line: a description
    ("[the key point]: x", ["[the", "key", "point]:"], ["[the"]),  # in brackets: a label
    ("415-555-0199: hi", ["415-555-0199:"], ["415-555-0199:"]),
    ("Speaker 1  0:03", ["Speaker", "1", "0:03"], ["Speaker"]),  # Otter's heading line
    ("The Host 0:03", ["The", "Host", "0:03"], ["The"]), ("A 1:02", ["A", "1:02"], ["A"]),
    ("speaker_2 0:03", ["speaker_2", "0:03"], ["speaker_2"]),
    ("John Smith (1:02:03)", ["John", "Smith", "(1:02:03)"], ["John"]),
])
def test_annotations_are_found(text, kept, turns):
    assert _kept(text) == (kept, turns)


@pytest.mark.parametrize("text", [
    "at 10:30 we met",  # a time of day without seconds is a word
    "at 10:30",  # a lowercase word and a time is no heading
    "At 10:30", "On Monday 10:30", "on Monday 10:30",  # nor a time of day in running text
    "See you at 10:30", "Lunch at 12:30",
    "So Here Is What We: do", "And So On And: x",  # title case is no full name
    "one two three four: x",  # four words before a colon are no label
    "http://example.com is a site",
    "(a)b c",  # closed inside a token
    "x [not closed within eight tokens a b c d e f g] y",
    "so we said (and we meant it",
    "12: the number",  # a label starts with a letter
    "1999: a good year", "1-2-3: go",  # (a phone number has eight digits or more)
    "hello world",
    "the key point: people trust it",  # lowercase words before a colon are running text
    "(in other words): we lost",  # and in parentheses (in square brackets: a label)
    "he said (and i quote) that it was fine",  # three words in parentheses are text
    "if a <b then c",  # no closing >
    "x <= y and a<b>c",  # a tag is a token of its own
    "♪ la la la ♪",  # notes around lyrics are words to the model (TED's transcripts hold them)
])
def test_plain_text_holds_no_annotations(text):
    assert _kept(text) == ([], [])


def test_a_label_does_not_run_across_a_line_break():
    assert _kept("- hi\nMARY: ok") == (["-", "MARY:"], ["MARY:"])
    assert _kept("well\nMary Jane: x") == (["Mary", "Jane:"], ["Mary"])
    assert _kept("so well hi there: x") == ([], [])


def test_markup_around_a_label_keeps_it_a_label():
    assert _kept("<i>JOHN:</i> hi<br>- yo", markup=True) == (["JOHN:", "-"], ["JOHN:", "-"])


def test_annotated_cue_and_words_outside():
    assert annotated_cue("so what do you think") is None
    assert annotated_cue("at 10:30 we met") is None
    cue = annotated_cue("agent: hi [laughs]")
    assert cue is not None and cue.text == "agent: hi [laughs]"
    assert words_outside("agent: hi, there [laughs].") == ["hi,", "there"]
    assert text_outside("agent: hi,  there [laughs].") == "hi, there"
    assert text_outside("hi,  there") == "hi,  there"  # (nothing to take out: as it is)


# ----------------------------------------------------------------------------- restoring

SDH = """1
00:00:01,000 --> 00:00:03,000
JOHN: where are you going

2
00:00:03,500 --> 00:00:05,000
MARY: home
[door slams]

3
00:00:05,500 --> 00:00:07,000
- why
- because it is late
"""
SDH_REFERENCE = "Where are you going home. Why because it is late."


def test_subtitle_annotations_stay_and_turns_end_sentences():
    punctuator = ScriptedPunctuator(SDH_REFERENCE)
    transcript = formats.loads(SDH, "srt")
    restored = formats.restore_transcript(transcript, punctuator, RestoreOptions())
    assert [c.text for c in restored.cues] == [
        "JOHN: Where are you going.", "MARY: Home.\n[door slams]",
        "- Why.\n- Because it is late."]  # forced: going. why. (a cue's first dash: no turn)
    assert punctuator.calls == [normalize(SDH_REFERENCE)]  # annotations never reach it


def test_no_annotations_reads_them_as_words():
    words = "john where are you going mary home door slams why because it is late"
    punctuator = ScriptedPunctuator(words)
    restored = formats.restore_transcript(formats.loads(SDH, "srt"), punctuator,
                                          RestoreOptions(annotations=False))
    assert punctuator.calls == [words.split()]
    assert restored.cues[0].text.startswith("John where")


def test_turns_are_not_forced_when_texts_are_not_closed():
    punctuator = ScriptedPunctuator(SDH_REFERENCE)
    restored = formats.restore_transcript(formats.loads(SDH, "srt"), punctuator,
                                          RestoreOptions(close_text=False))
    assert restored.cues[0].text == "JOHN: Where are you going"


def test_restore_lines_routes_annotated_lines_through_the_transcript_path(tiny_artifact):
    tiny = Punctuator.load(tiny_artifact, threads=1)
    lines = ["agent: hello there", "so what do you think", "", "[laughs]", "-", "hi (coughs)"]
    restored = list(formats.restore_lines(tiny, lines, RestoreOptions()))
    assert restored[0].startswith("agent: ") and restored[2:5] == ["", "[laughs]", "-"]
    assert restored[1] == tiny.restore(lines[1])  # plain lines as Punctuator.restore
    assert restored[5].endswith(" (coughs)")
    assert list(formats.restore_lines(tiny, lines, RestoreOptions(annotations=False))) == \
        tiny.restore_batch(lines)


def test_cli_keeps_labels_and_descriptions_in_text(tiny_artifact, capsys, monkeypatch):
    text = ("agent: hello thank you for calling [laughs] how can i help\n"
            "customer: i was charged twice\n\nso what do you think\n")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode())))
    assert main(["restore", "--model", str(tiny_artifact)]) == 0
    out = capsys.readouterr().out.split("\n")
    assert out[0].startswith("agent: ") and " [laughs] " in out[0]
    assert out[1].startswith("customer: ")
    assert out[2] == "" and len(out) == 5
    for line_in, line_out in zip(text.split("\n"), out):
        assert normalize(" ".join(words_outside(line_out))) == normalize(
            " ".join(words_outside(line_in)))


def test_cli_keeps_a_recognisers_tags_as_written(tiny_artifact, capsys):
    assert main(["restore", "--model", str(tiny_artifact),
                 "<unk> we visit new york <NOISE> do you like the house"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<unk> ") and " <NOISE> " in out  # not "<Unk>", not a word


def test_cli_no_annotations(tiny_artifact, capsys):
    assert main(["restore", "--model", str(tiny_artifact), "--no-annotations",
                 "agent: hi [door slams]"]) == 0
    out = capsys.readouterr().out
    assert "agent:" not in out  # read as words: the bracketed words get the closing mark
    assert re.search(r"\[door slams\][.?!]$", out.rstrip(), re.IGNORECASE)
    assert normalize(out) == ["agent", "hi", "door", "slams"]


def test_labels_do_not_read_as_punctuated_input():
    lines = [f"speaker_{i % 2}: so we went to the shop and then we came home" for i in range(8)]
    assert not note_punctuated("x", lines, RestoreOptions())
    assert note_punctuated("x", lines, RestoreOptions(annotations=False))


@pytest.mark.parametrize("line", ["&gt;&gt; so where did you grow up and what did you do",
                                  "<i>ANNA: so where did you grow up and what did you do</i>"])
def test_labels_in_markup_or_references_do_not_read_as_punctuated(tmp_path, caplog, line):
    cues = "".join(f"{i + 1}\n00:00:0{i},000 --> 00:00:0{i},900\n{line}\n\n" for i in range(6))
    path = _write(tmp_path, "talk.srt", cues)
    restore_source(SilentPunctuator(""), Source(str(path), "srt"), io.StringIO(), FileOptions())
    assert "already punctuated" not in caplog.text


def test_restore_source_text_file_with_labels(tmp_path, tiny_artifact):
    path = _write(tmp_path, "call.txt", "SPEAKER 1: hello\r\nSPEAKER 2: hi [music]\r\n")
    out = io.StringIO()
    restore_source(Punctuator.load(tiny_artifact, threads=1), Source(str(path), "text"), out,
                   FileOptions())
    lines = out.getvalue().split("\r\n")
    assert lines[0].startswith("SPEAKER 1: ") and lines[1].startswith("SPEAKER 2: ")
    assert lines[1].endswith("[music]") and lines[2] == ""


_WORD = st.sampled_from(["so", "what", "do", "you", "think", "i", "went", "home", "okay"])
_NOTE = st.sampled_from(["[laughs]", "(inaudible)", "[door slams]", "[00:01:02]"])
_LABEL = st.sampled_from(["", "agent: ", "SPEAKER_01: ", "Dr. Smith: ", ">> ", "- ",
                          "[00:00:01.000 --> 00:00:02.000] "])


class SilentPunctuator(ScriptedPunctuator):
    """Predicts no marks and lowercase for any words."""

    def _predict(self, words: list[str]) -> Prediction:
        post_labels, case_labels = self.inventory.post_labels, self.inventory.case_labels
        post_probs = np.zeros((len(words), len(post_labels)), np.float32)
        case_probs = np.zeros((len(words), len(case_labels)), np.float32)
        post_probs[:, 0] = case_probs[:, 0] = 1
        return Prediction(tuple(words), (post_labels[0],) * len(words),
                          (case_labels[0],) * len(words), post_probs, case_probs, post_labels,
                          case_labels)


@given(label=_LABEL, pieces=st.lists(st.one_of(_WORD, _NOTE), max_size=12))
def test_annotations_and_words_survive_any_mix(label, pieces):
    line = label + " ".join(pieces)
    tokens = split_tokens(line)
    transcript = Transcript("text", (Cue(None, None, tokens),))
    out = formats.restore_transcript(transcript, SilentPunctuator(""),
                                     RestoreOptions()).cues[0].tokens
    kept = find_annotations(tokens).kept_out
    assert [t.text for i, t in enumerate(out) if i in kept] == [
        t.text for i, t in enumerate(tokens) if i in kept]
    assert normalize(" ".join(t.text for i, t in enumerate(out) if i not in kept)) == \
        normalize(" ".join(t.text for i, t in enumerate(tokens) if i not in kept))


def test_resegment_starts_a_line_at_each_turn():
    srt = ("1\n00:00:01,000 --> 00:00:03,000\nJOHN: Hello there. How are you?\n\n"
           "2\n00:00:03,000 --> 00:00:05,000\nMARY: Fine.\n[music]\n\n"
           "3\n00:00:05,000 --> 00:00:07,000\n- Where to?\n- Home.\n")
    out = formats.resegment(formats.loads(srt, "srt"), formats.ResegmentOptions(42, 2, 7.0))
    assert [c.text for c in out.cues] == [
        "JOHN: Hello there. How are you?\nMARY: Fine. [music]", "- Where to?\n- Home."]


def test_the_module_example_runs():
    import doctest

    from punctum.formats import annotations

    assert doctest.testmod(annotations).failed == 0


def test_a_dialogue_goes_on_across_cues():
    srt = ("1\n00:00:01,000 --> 00:00:02,000\n- so you were at home\n- yes i was\n\n"
           "2\n00:00:02,000 --> 00:00:03,000\n- and nobody can confirm that\n\n"
           "3\n00:00:03,000 --> 00:00:04,000\n- my wife can\n")
    punctuator = SilentPunctuator("")
    out = formats.restore_transcript(formats.loads(srt, "srt"), punctuator, RestoreOptions())
    assert [c.text for c in out.cues] == ["- So you were at home.\n- Yes i was.",
                                          "- And nobody can confirm that.", "- My wife can."]


def test_escaped_turn_marks_in_webvtt_are_turns():
    vtt = ("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n&gt;&gt; good evening and welcome\n\n"
           "00:00:02.000 --> 00:00:03.000\n&gt;&gt; thank you\n")
    out = formats.restore_transcript(formats.loads(vtt, "vtt"), SilentPunctuator(""),
                                     RestoreOptions())
    assert [c.text for c in out.cues] == ["&gt;&gt; Good evening and welcome.",
                                          "&gt;&gt; Thank you."]
    srt = formats.convert(out, "srt")  # (">" opens no tag in SubRip: written as itself)
    assert [c.text for c in srt.cues] == [">> Good evening and welcome.", ">> Thank you."]


def test_crlf_lines_with_annotations_come_back_once_ended(tiny_artifact):
    from fastapi.testclient import TestClient

    from punctum.serve import create_app
    from punctum.serve.config import ServeConfig

    with TestClient(create_app(ServeConfig(models=[str(tiny_artifact)]))) as client:
        text = client.post("/v1/restore", json={"text": "JOHN: hello\r\nMARY: hi\r\n"}
                           ).json()["text"]
    assert text.count("\r") == 2 and "\r\r" not in text


def test_json_output_lists_annotations_and_the_words_the_model_read(tiny_artifact, capsys):
    import json

    assert main(["restore", "--model", str(tiny_artifact), "--json",
                 "agent: hello there [laughs]"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["text"].startswith("agent: ") and record["text"].endswith(" [laughs]")
    assert [w["word"] for w in record["words"]] == ["hello", "there"]
    assert record["annotations"] == ["agent:", "[laughs]"]


def test_api_words_list_annotations_per_text(tiny_artifact):
    from fastapi.testclient import TestClient

    from punctum.serve import create_app
    from punctum.serve.config import ServeConfig

    with TestClient(create_app(ServeConfig(models=[str(tiny_artifact)]))) as client:
        body = client.post("/v1/restore", json={"text": "agent: hello\nbob: hi [laughs]",
                                                "words": True}).json()
    detail = body["details"][0]
    assert detail["annotations"] == ["agent:", "bob:", "[laughs]"]
    assert [w["word"] for w in detail["words"]] == ["hello", "hi"]
    assert body["text"].split("\n")[1].startswith("bob: ")


def test_a_turn_mark_inside_a_text_line_ends_the_sentence_before_it(tiny_artifact):
    tiny = Punctuator.load(tiny_artifact, threads=1)
    out = next(formats.restore_lines(tiny, ["good evening and welcome >> thank you"],
                                     RestoreOptions()))
    before, after = out.split(" >> ")
    assert before[-1] in ".?!" and after[0].isupper()


@pytest.mark.parametrize("keep_existing, expected", [
    (False, "It was great. [laughter] So we left. Fun, (laughs) then."),  # the model's marks
    (True, "It was great!? [laughter] So we left. Fun. (laughs) Then."),  # the written ones
])
def test_marks_after_a_sound_description_are_the_word_befores_not_written_twice(
        keep_existing, expected):
    content = "it was great [laughter]!? so we left. fun (laughs). then\n"
    transcript = formats.loads(content, "text")
    punctuator = ScriptedPunctuator("It was great. So we left. Fun, then.")
    restored = formats.restore_transcript(transcript, punctuator,
                                          RestoreOptions(keep_existing=keep_existing))
    assert punctuator.calls == [["it", "was", "great", "so", "we", "left", "fun", "then"]]
    assert formats.dumps(restored) == expected + "\n"


def test_marks_after_a_bracket_for_words_not_heard_stay_its_own():
    content = "we went to the [inaudible]. then we left\n"
    transcript = formats.loads(content, "text")
    restored = formats.restore_transcript(transcript, ScriptedPunctuator(
        "We went to the then we left."), RestoreOptions(keep_existing=True))
    assert formats.dumps(restored) == "We went to the [inaudible]. then we left.\n"


def test_a_label_naming_the_speaker_before_it_opens_no_turn():
    vtt = ("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nJohn Smith: so this is the plan and we\n\n"
           "00:00:02.000 --> 00:00:03.000\nJohn Smith: ship it in may\n\n"
           "00:00:03.000 --> 00:00:04.000\nAnna Lee: what plan\n")  # Zoom: a label every cue
    out = formats.restore_transcript(formats.loads(vtt, "vtt"), SilentPunctuator(""),
                                     RestoreOptions())
    assert [c.text for c in out.cues] == ["John Smith: So this is the plan and we",
                                          "John Smith: ship it in may.", "Anna Lee: What plan."]


def test_a_repeated_label_after_another_speaker_between_opens_a_turn():
    vtt = ("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nJOHN: so what do you think\n\n"
           "00:00:02.000 --> 00:00:03.000\n<v Mary>and then we went to the\n\n"
           "00:00:03.000 --> 00:00:04.000\nJOHN: store with my friends\n")
    out = formats.restore_transcript(formats.loads(vtt, "vtt"), SilentPunctuator(""),
                                     RestoreOptions())
    assert out.cues[1].text.endswith("the.") and out.cues[2].text == \
        "JOHN: Store with my friends."
    ctm = "".join(f"call1 {channel} {k}.0 0.5 {word}\n" for k, (channel, word) in enumerate(
        [("A", "JOHN:"), ("A", "so"), ("A", "we"), ("A", "drove"), ("B", "MARY:"),
         ("B", "okay"), ("A", "MARY:"), ("A", "home")]))  # B's MARY is not A's speaker
    out = formats.restore_transcript(formats.loads(ctm, "ctm"), SilentPunctuator(""),
                                     RestoreOptions())
    assert [t.text for c in out.cues for t in c.tokens][:8] == [
        "JOHN:", "So", "we", "drove.", "MARY:", "Okay.", "MARY:", "Home."]
