"""Subtitle and ASR-JSON formats: round trips, restoring across cues, resegmenting, errors."""

import gzip
import io
import json
import re
from types import SimpleNamespace

import numpy as np
import pytest

from punctum import formats
from punctum.cli import main
from punctum.formats import ResegmentOptions, Transcript
from punctum.runtime import Prediction, Punctuator, RestoreOptions
from punctum.text import get_inventory, normalize, parse

# ----------------------------------------------------------------------------- sample files

SRT = """1
00:00:01,000 --> 00:00:03,500
so what do you

2
00:00:03,600 --> 00:00:06,000
<i>think about it</i> i think
it is great

3
00:00:06,500 --> 00:01:02,345 X1:10 X2:20
- well we see
- a boat
"""

VTT = """WEBVTT - a talk
Kind: captions

STYLE
::cue { color: yellow }

NOTE written by hand

intro
00:01.000 --> 00:03.500 align:start position:10%
<v Alice>so what do you</v>

NOTE between cues

00:03.600 --> 00:06.000
<v.loud Bob>think <00:04.500>about it i think
it is great
"""

WHISPER = {
    "text": " so what do you think about it i think it is great",
    "segments": [
        {"id": 0, "seek": 0, "start": 0.0, "end": 2.5, "text": " so what do you",
         "tokens": [50364, 370], "temperature": 0.0, "avg_logprob": -0.2,
         "words": [
             {"word": " so", "start": 0.0, "end": 0.4, "probability": 0.91},
             {"word": " what", "start": 0.4, "end": 0.9, "probability": 0.95},
             {"word": " do", "start": 0.9, "end": 1.5, "probability": 0.99},
             {"word": " you", "start": 1.5, "end": 2.5, "probability": 0.97}]},
        {"id": 1, "seek": 0, "start": 2.5, "end": 6, "text": " think about it i think it is great",
         "tokens": [1], "temperature": 0.0, "avg_logprob": -0.3,
         "words": [
             {"word": " think", "start": 2.5, "end": 3.0, "probability": 0.9},
             {"word": " about", "start": 3.0, "end": 3.4, "probability": 0.9},
             {"word": " it", "start": 3.4, "end": 3.6, "probability": 0.9},
             {"word": " i", "start": 4.0, "end": 4.2, "probability": 0.9},
             {"word": " think", "start": 4.2, "end": 4.7, "probability": 0.9},
             {"word": " it", "start": 4.7, "end": 4.9, "probability": 0.9},
             {"word": " is", "start": 4.9, "end": 5.2, "probability": 0.9},
             {"word": " great", "start": 5.2, "end": 6, "probability": 0.9}]},
    ],
    "language": "en",
}

WHISPER_NO_WORDS = {
    "text": " so what do you think about it. I think it is great",
    "segments": [
        {"id": 0, "start": 0.0, "end": 2.5, "text": " so what do you think"},
        {"id": 1, "start": 2.5, "end": 6.0, "text": " about it. I think it is great"},
    ],
    "language": "en",
}


def _vosk_result(words, start):
    result = [{"conf": 1.0, "end": round(start + 0.5 * (k + 1), 2), "start": round(
        start + 0.5 * k, 2), "word": w} for k, w in enumerate(words)]
    return {"result": result, "text": " ".join(words)}


VOSK = _vosk_result("so what do you think about it".split(), 0.0)
VOSK_LINES = [{"partial": "so what"}, VOSK,
              _vosk_result("i think it is great".split(), 4.0), {"text": ""}]

NEMO = [
    {"audio_filepath": "a.wav", "duration": 2.5, "text": "So, what?",
     "pred_text": "so what do you think"},
    {"audio_filepath": "b.wav", "duration": 3.0, "text": "Café.", "pred_text": "i like the café"},
]

TEXT = "so what do you think  about it\n\ni think it is great\n"

REFERENCE = ("So, what do you think about it? I think it is great. Well, we see a boat. "
             "I like the café.")


def _json(value, **kwargs) -> str:
    return json.dumps(value, **kwargs) + "\n"


def _lines(values, **kwargs) -> str:
    return "".join(json.dumps(v, **kwargs) + "\n" for v in values)


SAMPLES = {
    "srt": ("talk.srt", SRT),
    "srt-crlf-bom": ("talk.srt", "\ufeff" + SRT.replace("\n", "\r\n")),
    "vtt": ("talk.vtt", VTT),
    "whisper": ("whisper.json", json.dumps(WHISPER)),
    "whisper-indent": ("whisper.json", _json(WHISPER, indent=2, ensure_ascii=False)),
    "whisper-no-words": ("segments.json", _json(WHISPER_NO_WORDS, indent=4)),
    "vosk": ("vosk.json", _json(VOSK, indent=2)),
    "vosk-list": ("vosk.json", _json([VOSK, VOSK_LINES[2]])),
    "vosk-lines": ("vosk.jsonl", _lines(VOSK_LINES)),
    "nemo": ("manifest.json", _lines(NEMO)),
    "nemo-unicode": ("manifest.jsonl", _lines(NEMO, ensure_ascii=False, separators=(",", ":"))),
    "text": ("notes.txt", TEXT),
}
FORMAT_OF = {"srt": "srt", "srt-crlf-bom": "srt", "vtt": "vtt", "whisper": "whisper",
             "whisper-indent": "whisper", "whisper-no-words": "whisper", "vosk": "vosk",
             "vosk-list": "vosk", "vosk-lines": "vosk", "nemo": "nemo",
             "nemo-unicode": "nemo", "text": "text"}


def _write(tmp_path, name: str, content: str):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8"))
    return path


# ----------------------------------------------------------------------------- a scripted model

class ScriptedPunctuator:
    """Stands in for a Punctuator: predicts the labels `reference` gives its words.

    Each predicted word sequence must be a run of the reference's words, so the tests decide
    exactly what the "model" says and check only what punctum.formats does with it.
    """

    def __init__(self, reference: str, language: str = "en") -> None:
        self.inventory = get_inventory(language)
        self.reference = parse(reference, self.inventory)
        lexicon = {w: f for w, f in zip(self.reference.words, self.reference.forms) if f}
        self.artifact = SimpleNamespace(lexicon=lexicon)
        self.calls: list[list[str]] = []

    def predict_batch(self, batch, batch_size: int = 16) -> list[Prediction]:
        self.calls.extend(list(words) for words in batch)
        return [self._predict(list(words)) for words in batch]

    def _predict(self, words: list[str]) -> Prediction:
        ref = self.reference
        n = len(words)
        starts = [i for i in range(len(ref.words) - n + 1) if list(ref.words[i:i + n]) == words]
        assert starts, f"{words} is not a run of the reference"
        i = starts[0]
        post_labels, case_labels = self.inventory.post_labels, self.inventory.case_labels
        post, case = ref.post[i:i + n], ref.case[i:i + n]
        post_probs = np.eye(len(post_labels), dtype=np.float32)[
            [post_labels.index(p) for p in post]]
        case_probs = np.eye(len(case_labels), dtype=np.float32)[
            [case_labels.index(c) for c in case]]
        return Prediction(tuple(words), post, case, post_probs, case_probs, post_labels,
                          case_labels)


@pytest.fixture(scope="module")
def tiny(tiny_artifact):
    return Punctuator.load(tiny_artifact, threads=1)


# ----------------------------------------------------------------------------- round trips

@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_round_trip_is_byte_identical(tmp_path, sample):
    name, content = SAMPLES[sample]
    path = _write(tmp_path, name, content)
    assert formats.detect_format(path) == FORMAT_OF[sample]
    transcript = formats.read(path)
    assert transcript.format == FORMAT_OF[sample]
    assert formats.dumps(transcript) == content
    out = tmp_path / ("out" + path.suffix)
    formats.write(transcript, out)
    assert out.read_bytes() == content.encode("utf-8")


def test_round_trip_to_a_stream():
    stream = io.StringIO()
    formats.write(formats.loads(SRT, "srt"), stream)
    assert stream.getvalue() == SRT


def test_non_canonical_subtitles_are_written_canonically():
    sloppy = ("1\n0:00:01.000 --> 00:00:02,000\nhello\n\n\n\n2\n00:00:02,000 --> 00:00:03,000"
              "\nthere\n\n\n")
    canonical = ("1\n00:00:01,000 --> 00:00:02,000\nhello\n\n2\n00:00:02,000 --> 00:00:03,000"
                 "\nthere\n\n\n")
    transcript = formats.loads(sloppy, "srt")
    assert formats.dumps(transcript) == canonical
    assert formats.loads(canonical, "srt") == transcript
    tight = "1\n00:00:01,000-->00:00:02,000\nhi\n"
    assert formats.sniff_format(tight) == "srt"
    assert formats.dumps(formats.loads(tight)) == tight.replace("-->", " --> ")
    mixed = "WEBVTT\n\n00:01.000 --> 01:00:02.500\nhello\n"
    assert formats.dumps(formats.loads(mixed, "vtt")) == (
        "WEBVTT\n\n00:00:01.000 --> 01:00:02.500\nhello\n")


def test_json_round_trip_keeps_values_in_other_styles():
    vosk_style = '{\n  "result" : [{\n      "conf" : 1.000000,\n      "end" : 0.5,\n' \
                 '      "start" : 0.0,\n      "word" : "hi"\n    }],\n  "text" : "hi"\n}'
    transcript = formats.loads(vosk_style, "auto")
    assert transcript.format == "vosk"
    assert json.loads(formats.dumps(transcript)) == json.loads(vosk_style)


def test_reading_keeps_timings_markup_and_blocks():
    srt = formats.loads(SRT, "srt")
    assert [(c.start, c.end) for c in srt.cues] == [(1.0, 3.5), (3.6, 6.0), (6.5, 62.345)]
    assert srt.cues[1].tokens[0].before == "<i>" and srt.cues[1].tokens[3].before == "</i> "
    assert srt.cues[2].settings == "X1:10 X2:20" and srt.cues[2].tokens[0].text == "-"
    vtt = formats.loads(VTT, "vtt")
    assert vtt.cues[0].identifier == "intro" and vtt.cues[0].settings.startswith("align")
    assert [t.text for t in vtt.cues[1].tokens][:3] == ["think", "about", "it"]
    assert [index for index, _ in vtt.meta["blocks"]] == [0, 0, 1]
    assert vtt.meta["hours"] is False
    whisper = formats.loads(json.dumps(WHISPER), "whisper")
    word = whisper.cues[0].tokens[1]
    assert (word.text, word.before, word.start, word.end) == ("what", " ", 0.4, 0.9)
    vosk = formats.loads(_lines(VOSK_LINES), "vosk")
    assert [len(c.tokens) for c in vosk.cues] == [0, 7, 5, 0]


def test_empty_files_give_empty_transcripts():
    for format in ("srt", "vtt", "text", "vosk", "nemo", "whisper"):
        transcript = formats.loads("", format)
        assert transcript.cues == ()
        assert formats.dumps(transcript) == ("" if format != "whisper" else
                                             '{"text": "", "segments": []}')
    assert formats.dumps(formats.loads("\n \n", "vtt")) == "\n\n"
    assert formats.dumps(formats.loads("WEBVTT\n", "vtt")) == "WEBVTT\n"
    empty = formats.loads("", "srt")
    assert formats.restore_transcript(empty, ScriptedPunctuator(REFERENCE)) == empty


def test_vtt_line_of_spaces_is_cue_text_unless_a_block_follows():
    vtt = ("WEBVTT\n\n00:00.000 --> 00:02.000\nso what\n  \ndo you think\n\n"
           "00:02.000 --> 00:04.000\ni think\n \nNOTE sloppy separators\n\t\n"
           "intro\n00:04.000 --> 00:05.000\nit is great\n")
    transcript = formats.loads(vtt, "vtt")
    assert [c.text for c in transcript.cues] == ["so what\n  \ndo you think", "i think",
                                                 "it is great"]
    assert transcript.cues[2].identifier == "intro"
    restored = formats.restore_transcript(transcript, ScriptedPunctuator(
        "So, what do you think? I think it is great."))
    assert formats.dumps(restored).split("\n")[3:6] == ["So, what", "  ", "do you think?"]
    assert formats.dumps(transcript) == vtt.replace(" \nNOTE", "\nNOTE").replace("\t\n", "\n")


def test_a_tag_inside_a_word_does_not_split_it():
    srt = ("1\n00:00:00,000 --> 00:00:02,000\nso what do <i>y</i>ou th<b>ink</b>\n"
           "<i>i</i> think it is <font color=red>gr</font>eat\n")
    punctuator = ScriptedPunctuator("So, what do you think? I think it is great.")
    restored = formats.restore_transcript(formats.loads(srt, "srt"), punctuator)
    assert punctuator.calls == ["so what do you think i think it is great".split()]
    assert formats.dumps(restored).split("\n")[2:4] == [
        "So, what do <i>y</i>ou th<b>ink?</b>",
        "<i>I</i> think it is <font color=red>gr</font>eat."]


@pytest.mark.parametrize("line, reference, language, calls, written", [
    ("-<i>so</i> what", "So, what.", "en", [["so", "what"]], "-<i>So,</i> what."),
    ('"<i>so</i>" what', "So what.", "en", [["so", "what"]], '"<i>So</i>" what.'),
    ("i went to the caf<i>&eacute;</i>", "I went to the café.", "en",
     [["i", "went", "to", "the", "café"]], "I went to the caf<i>&eacute;.</i>"),
    ("so&emsp;what&#32;now", "So what now.", "en", [["so", "what", "now"]],
     "So&emsp;what&#32;now."),
    ("我们去<i>东京</i>吧", "我们去东京吧。", "zh", [list("我们去东京吧")],
     "我们去<i>东京</i>吧。"),
])
def test_tags_split_words_only_where_no_letters_touch_across_them(line, reference, language,
                                                                   calls, written):
    srt = f"1\n00:00:00,000 --> 00:00:02,000\n{line}\n"
    punctuator = ScriptedPunctuator(reference, language)
    restored = formats.restore_transcript(formats.loads(srt, "srt"), punctuator)
    assert punctuator.calls == calls
    assert formats.dumps(restored).split("\n")[2] == written


def test_tokens_split_keeps_every_character():
    for text in ["", "  ", "a  b\n c ", "<i>x</i>, {\\an8}y", "<b></b>"]:
        tokens = formats.split_tokens(text, markup=True)
        assert "".join(t.before + t.text + t.after for t in tokens) == text
    assert [t.text for t in formats.split_tokens("<i>hello</i>, you", markup=True)] == [
        "hello", ",", "you"]
    # a character reference inside a word or standing alone is text; at a word's edge or
    # for whitespace it is markup
    split = formats.split_tokens("R&amp;D &amp; co&nbsp;op &quot;don&#39;t&quot;", markup=True)
    assert [(t.before, t.text, t.after) for t in split] == [
        ("", "R&amp;D", ""), (" ", "&amp;", ""), (" ", "co", ""), ("&nbsp;", "op", ""),
        (" &quot;", "don&#39;t", "&quot;")]


# ----------------------------------------------------------------------------- restoring

def _restored_cues(content: str, format: str, reference: str = REFERENCE, **options):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, format)
    restored = formats.restore_transcript(transcript, punctuator, RestoreOptions(**options))
    return transcript, restored, punctuator


def test_context_flows_across_cues():
    _, restored, punctuator = _restored_cues(SRT, "srt")
    assert [c.text for c in restored.cues] == [
        "So, what do you",
        "<i>think about it?</i> I think\nit is great.",
        "- Well, we see.\n- A boat."]  # the second dash: another speaker, a new sentence
    assert len(punctuator.calls) == 1  # the whole file is one word sequence


def test_another_webvtt_voice_starts_a_sentence():
    vtt = ("WEBVTT\n\n00:01.000 --> 00:02.000\n<v Ann>so what do you think\n\n"
           "00:02.000 --> 00:03.000\n<v.loud Bob>i think it is great</v> <v Bob>we see\n\n"
           "00:03.000 --> 00:04.000\n<v Ann>a boat\n")
    _, restored, _ = _restored_cues(vtt, "vtt", "So what do you think I think it is great "
                                                 "we see a boat")  # a model that adds none
    assert [c.text for c in restored.cues] == [
        "<v Ann>So what do you think.", "<v.loud Bob>I think it is great</v> <v Bob>we see.",
        "<v Ann>A boat."]  # Bob with a class is still Bob
    _, plain, _ = _restored_cues(vtt, "vtt", "So what do you think I think it is great "
                                             "we see a boat", annotations=False)
    assert plain.cues[0].text == "<v Ann>So what do you think"


def test_marks_opening_a_cue_token_mid_text_are_not_written_twice():
    srt = "1\n00:00:01,000 --> 00:00:02,000\n...so we left ...and then\n"
    _, restored, _ = _restored_cues(srt, "srt", "So we left. And then.", keep_existing=True)
    assert restored.cues[0].text == "...So we left. And then."  # the text's first: kept


def test_quotes_and_brackets_stay_on_subtitle_and_word_record_words():
    reference = 'He said, "We see" and left. A boat.'
    srt = ('1\n00:00:01,000 --> 00:00:02,000\nhe said "we\n\n'
           '2\n00:00:02,000 --> 00:00:03,000\nsee" and left :) a boat\n')
    _, restored, _ = _restored_cues(srt, "srt", reference)
    assert [c.text for c in restored.cues] == ['He said, "We', 'see" and left. :) A boat.']
    words = [{"word": w, "start": i, "end": i + 0.5}
             for i, w in enumerate([" he", " said", ' "we', ' see"', " and", " left"])]
    whisper = _json({"text": "", "segments": [{"start": 0, "end": 6, "text": "",
                                                "words": words}]})
    _, restored, _ = _restored_cues(whisper, "whisper", 'He said, "We see" and left.')
    assert [t.text for t in restored.cues[0].tokens if t.text.strip()] == \
        ["He", "said,", '"We', 'see"', "and", "left."]


def test_sentence_case_follows_the_previous_cue():
    reference = "We are done. And you, my friend, see a boat."
    srt = ("1\n00:00:01,000 --> 00:00:02,000\nwe are done\n\n"
           "2\n00:00:02,000 --> 00:00:03,000\nand you\n\n"
           "3\n00:00:03,000 --> 00:00:04,000\nmy friend see a boat\n")
    _, restored, _ = _restored_cues(srt, "srt", reference)
    assert [c.text for c in restored.cues] == ["We are done.", "And you,",
                                               "my friend, see a boat."]


def test_restoring_whisper_rebuilds_segment_text_from_words():
    content = json.dumps(WHISPER)
    transcript, restored, _ = _restored_cues(content, "whisper")
    out = json.loads(formats.dumps(restored))
    segments = out["segments"]
    assert [w["word"] for w in segments[0]["words"]] == [" So,", " what", " do", " you"]
    assert segments[0]["text"] == " So, what do you"
    assert segments[1]["text"] == " think about it? I think it is great."
    assert out["text"] == "".join(s["text"] for s in segments)
    for new, old in zip(segments, WHISPER["segments"]):
        assert {k: v for k, v in new.items() if k not in ("text", "words")} == {
            k: v for k, v in old.items() if k not in ("text", "words")}
        assert [{k: v for k, v in w.items() if k != "word"} for w in new["words"]] == [
            {k: v for k, v in w.items() if k != "word"} for w in old["words"]]
    assert out["language"] == "en" and list(out) == list(WHISPER)


def test_an_edited_whisper_text_keeps_its_words_and_the_stale_words_stay():
    words = [{"word": f" {w}", "start": i, "end": i + 0.5}
             for i, w in enumerate(["so", "what", "do", "you"])]
    edited = {"segments": [{"start": 0, "end": 4, "text": "so what do you think", "words": words},
                           {"start": 4, "end": 6, "text": " about it", "words": [
                               {"word": " about", "start": 4, "end": 5},
                               {"word": " it", "start": 5, "end": 6}]}]}
    _, restored, punctuator = _restored_cues(json.dumps(edited), "whisper",
                                             "So, what do you think about it?")
    out = json.loads(formats.dumps(restored))
    assert punctuator.calls[0] == "so what do you think about it".split()
    assert out["segments"][0]["text"] == "So, what do you think"  # "think" kept, no lead space
    assert out["segments"][0]["words"] == words  # stale: as they were
    assert out["segments"][1]["text"] == " about it?"
    assert [w["word"] for w in out["segments"][1]["words"]] == [" about", " it?"]


def test_restoring_whisper_without_words_uses_segment_text():
    _, restored, punctuator = _restored_cues(json.dumps(WHISPER_NO_WORDS), "whisper")
    out = json.loads(formats.dumps(restored))
    assert [s["text"] for s in out["segments"]] == [" So, what do you think",
                                                    " about it? I think it is great."]
    assert punctuator.calls[0][-1] == "great"


def test_vosk_partials_are_kept_and_text_is_rebuilt():
    _, restored, punctuator = _restored_cues(_lines(VOSK_LINES), "vosk")
    records = [json.loads(line) for line in formats.dumps(restored).splitlines()]
    assert records[0] == {"partial": "so what"} and records[3] == {"text": ""}
    assert records[1]["text"] == "So, what do you think about it?"
    assert records[2]["text"] == "I think it is great."
    assert [w["conf"] for w in records[1]["result"]] == [1.0] * 7
    assert punctuator.calls == ["so what do you think about it i think it is great".split()]


def test_manifest_lines_are_separate_texts_and_output_key():
    content = _lines(NEMO)
    _, restored, punctuator = _restored_cues(content, "nemo")
    assert len(punctuator.calls) == 2
    records = [json.loads(line) for line in formats.dumps(restored, "restored").splitlines()]
    assert records[0]["pred_text"] == "so what do you think"  # kept: written to "restored"
    assert records[0]["restored"] == "So, what do you think."  # closed as its own text
    assert records[1]["restored"] == "I like the café."
    same_key = [json.loads(line) for line in formats.dumps(restored).splitlines()]
    assert same_key[1]["pred_text"] == "I like the café." and list(same_key[1]) == list(NEMO[1])


def test_text_lines_are_separate_paragraphs():
    _, restored, punctuator = _restored_cues(TEXT, "text")
    assert formats.dumps(restored) == ("So, what do you think  about it?\n\n"
                                       "I think it is great.\n")
    assert len(punctuator.calls) == 2


def test_tokens_without_words_stay_and_cjk_runs_render_together():
    vtt = "WEBVTT\n\n00:01.000 --> 00:02.000\n你好吗 —\n\n00:02.000 --> 00:03.000\n我很好\n"
    punctuator = ScriptedPunctuator("你好吗？我很好。", "zh")
    restored = formats.restore_transcript(formats.loads(vtt, "vtt"), punctuator)
    assert [c.text for c in restored.cues] == ["你好吗？ —", "我很好。"]


def test_options_keep_existing_and_no_case():
    srt = "1\n00:00:01,000 --> 00:00:02,000\nSo what do you think, about NASA\n"
    transcript = formats.loads(srt, "srt")
    punctuator = ScriptedPunctuator("so, what do you think about nasa")
    no_case = formats.restore_transcript(transcript, punctuator, RestoreOptions(case=False))
    assert no_case.cues[0].text == "So, what do you think about NASA."
    punctuator = ScriptedPunctuator("so what do you think about nasa")
    kept = formats.restore_transcript(transcript, punctuator,
                                      RestoreOptions(keep_existing=True))
    assert kept.cues[0].text == "So what do you think, about NASA."
    default = formats.restore_transcript(transcript, punctuator)
    assert default.cues[0].text == "So what do you think about nasa."


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_tiny_model_changes_only_marks_and_case(tiny, sample):
    name, content = SAMPLES[sample]
    transcript = formats.loads(content, FORMAT_OF[sample], name)
    restored = formats.restore_transcript(transcript, tiny)
    assert len(restored.cues) == len(transcript.cues)
    for old, new in zip(transcript.cues, restored.cues):
        assert (old.start, old.end, old.identifier, old.settings) == (
            new.start, new.end, new.identifier, new.settings)
        assert len(old.tokens) == len(new.tokens)
        for a, b in zip(old.tokens, new.tokens):
            assert normalize(a.text) == normalize(b.text)
            assert (a.start, a.end, a.before, a.after) == (b.start, b.end, b.before, b.after)
    again = formats.loads(formats.dumps(restored), FORMAT_OF[sample], name)
    assert [(c.start, c.end) for c in again.cues] == [(c.start, c.end) for c in transcript.cues]
    assert [normalize(t.text) for t in again.tokens] == [normalize(t.text)
                                                         for t in transcript.tokens]


# ----------------------------------------------------------------------------- resegmenting

def _whisper_long(n_sentences: int) -> str:
    words, t = [], 0.0
    for s in range(n_sentences):
        for k, word in enumerate(f"sentence {s} has quite a few words in it that go on".split()):
            words.append({"word": f" {word}" + ("." if k == 11 else ""), "start": round(t, 2),
                          "end": round(t + 0.3, 2)})
            t += 0.35
    return json.dumps({"text": "", "segments": [
        {"id": 0, "start": 0.0, "end": round(t, 2), "text": "", "words": words}]})


def _check_limits(transcript: Transcript, options: ResegmentOptions, words: list[str]):
    assert [w for c in transcript.cues for w in normalize(c.text)] == words
    previous_end = 0.0
    for cue in transcript.cues:
        lines = cue.text.split("\n")
        single = len(normalize(cue.text)) == 1
        assert cue.start >= previous_end and cue.end >= cue.start
        assert single or len(lines) <= options.max_lines
        assert single or cue.end - cue.start <= options.max_duration + 1e-9
        for line in lines:
            assert len(line) <= options.max_chars_per_line or " " not in line
        previous_end = cue.end


@pytest.mark.parametrize("limits", [(42, 2, 7.0), (20, 1, 3.0), (12, 3, 30.0)])
def test_resegment_word_timings_respects_limits(limits):
    options = ResegmentOptions(*limits)
    whisper = formats.loads(_whisper_long(4), "whisper")
    words = normalize(" ".join(t.text for t in whisper.tokens))
    cues = formats.resegment(formats.convert(whisper, "srt"), options)
    _check_limits(cues, options, words)
    if limits == (42, 2, 7.0):  # a sentence fits in a cue, two do not: one cue each
        assert [c.text.count(".") for c in cues.cues] == [1] * 4
        assert all(c.text.endswith(".") for c in cues.cues)
    starts = {t.start for t in whisper.tokens}
    assert all(c.start in starts for c in cues.cues)  # cue times come from word times
    round_trip = formats.loads(formats.dumps(cues), "srt")
    assert len(round_trip.cues) == len(cues.cues)


def test_resegment_interpolates_inside_cues_and_moves_notes():
    text = " ".join(f"word{k:02d}" for k in range(30)) + "."
    vtt = f"WEBVTT\n\nNOTE first\n\n00:00:10.000 --> 00:00:20.000\n{text}\n\nNOTE last\n"
    options = ResegmentOptions(max_chars_per_line=20, max_lines=2, max_duration=10)
    result = formats.resegment(formats.loads(vtt, "vtt"), options)
    _check_limits(result, options, normalize(text))
    assert result.cues[0].start == 10.0 and result.cues[-1].end == 20.0
    spans = [c.end - c.start for c in result.cues]
    chars = [len(c.text.replace("\n", "").replace(" ", "")) for c in result.cues]
    assert np.allclose(np.array(spans) / sum(spans), np.array(chars) / sum(chars))
    assert result.meta["blocks"] == ((0, "NOTE first"), (len(result.cues), "NOTE last"))
    assert formats.dumps(result).startswith("WEBVTT\n\nNOTE first\n\n00:00:10.000 --> ")


def test_resegment_prefers_a_comma_for_long_sentences():
    srt = ("1\n00:00:00,000 --> 00:00:06,000\nwe see a boat and a house, and my car is in the "
           "garden.\n")
    result = formats.resegment(formats.loads(srt, "srt"), ResegmentOptions(20, 2, 7))
    assert [c.text for c in result.cues] == ["we see a boat and a\nhouse,",
                                             "and my car is in the\ngarden."]
    assert [c.text for c in formats.resegment(formats.loads(srt, "srt")).cues] == [
        "we see a boat and a house,\nand my car is in the garden."]  # the line breaks there


def test_resegment_does_not_end_a_sentence_at_a_semicolon_or_ellipsis():
    srt = ("1\n00:00:00,000 --> 00:00:06,000\nso we went home. i waited; and waited... for a "
           "bus that never came at all.\n")
    result = formats.resegment(formats.loads(srt, "srt"), ResegmentOptions(30, 2, 7))
    assert [c.text for c in result.cues] == [
        "so we went home.", "i waited; and waited... for a\nbus that never came at all."]


def test_resegment_keeps_short_sentences_together():
    srt = ("1\n00:00:00,000 --> 00:00:02,000\nyes. no. maybe we should\n\n"
           "2\n00:00:02,000 --> 00:00:05,000\nsee the boat. well, we see a boat and a house "
           "and my car.\n")
    result = formats.resegment(formats.loads(srt, "srt"), ResegmentOptions(30, 2, 7))
    assert [c.text for c in result.cues] == ["yes. no.\nmaybe we should see the boat.",
                                             "well, we see a boat and a\nhouse and my car."]
    assert result.cues[0].start == 0.0 and result.cues[-1].end == 5.0


def test_resegment_keeps_a_cue_of_sounds_alone_at_its_own_time():
    srt = ("1\n00:00:00,000 --> 00:00:02,000\n[Music]\n\n"
           "2\n00:00:02,000 --> 00:00:05,000\nso welcome back. we talk\n\n"
           "3\n00:00:05,000 --> 00:00:08,000\nabout tomatoes [Applause] thank you.\n\n"
           "4\n00:00:08,000 --> 00:00:10,000\n(applause)\n\n"
           "5\n00:00:10,000 --> 00:00:11,000\n[laughs]\n\n"
           "6\n00:00:11,000 --> 00:00:12,000\n♪ ♫\n")
    result = formats.resegment(formats.loads(srt, "srt"), ResegmentOptions(42, 2, 7))
    assert [(c.start, c.end, c.text) for c in result.cues] == [
        (0.0, 2.0, "[Music]"),
        (2.0, 8.0, "so welcome back. we talk about tomatoes\n[Applause] thank you."),
        (8.0, 10.0, "(applause)"), (10.0, 11.0, "[laughs]"), (11.0, 12.0, "♪ ♫")]


def test_resegment_never_cuts_a_cue_of_sounds():
    srt = ("1\n00:00:01,000 --> 00:00:02,000\nhello there.\n\n"
           "2\n00:00:03,000 --> 00:00:09,000\n[MUSIC PLAYING]\n")
    result = formats.resegment(formats.loads(srt, "srt"), ResegmentOptions(42, 2, 3))
    assert [(c.start, c.end, c.text) for c in result.cues][1:] == [(3.0, 9.0,
                                                                    "[MUSIC PLAYING]")]


def test_dialogue_dashes_written_against_the_word_are_kept():
    srt = "1\n00:00:01,000 --> 00:00:03,000\n-where are you going\n-home\n"
    tokens = formats.loads(srt, "srt").cues[0].tokens
    assert [t.text for t in tokens] == ["-", "where", "are", "you", "going", "-", "home"]
    assert formats.loads("1\n00:00:01,000 --> 00:00:02,000\nit was -5 out\n",
                         "srt").cues[0].tokens[2].text == "-5"


def test_resegment_keeps_webvtt_voices_apart():
    vtt = ("WEBVTT\n\n00:00.000 --> 00:04.000\n<v Bob>yes. so what</v>\n"
           "<v.loud Ann>no. <i>well</i>\n\n00:04.000 --> 00:06.000\n<v Ann>fine. ok\n\n"
           "00:06.000 --> 00:08.000\nthe end.\n")
    result = formats.resegment(formats.loads(vtt, "vtt"), ResegmentOptions(42, 2, 7))
    assert [c.text for c in result.cues] == ["<v Bob>yes. so what", "<v.loud Ann>no. well",
                                             "<v Ann>fine. ok", "the end."]
    assert [(c.start, c.end) for c in result.cues][2:] == [(4.0, 6.0), (6.0, 8.0)]


def test_resegment_keeps_overlapping_cues_at_their_own_times():
    srt = ("1\n00:00:01,000 --> 00:00:05,000\nfirst line here.\n\n"
           "2\n00:00:02,000 --> 00:00:03,000\nsecond one over it.\n\n"
           "3\n00:00:05,000 --> 00:00:06,000\nand after.\n")
    result = formats.resegment(formats.loads(srt, "srt"), ResegmentOptions(42, 2, 7))
    assert [(c.start, c.end, c.text) for c in result.cues] == [
        (1.0, 5.0, "first line here."), (2.0, 3.0, "second one over it."),
        (5.0, 6.0, "and after.")]


@pytest.mark.parametrize("first_end, second_start", [("02,040", "02,000"),  # 40 ms
                                                      ("02,003", "01,503"), ("02,004", "01,504")])
def test_resegment_joins_cues_that_overlap_by_a_timing_slip(first_end, second_start):
    srt = (f"1\n00:00:01,000 --> 00:00:{first_end}\nso we went\n\n"  # 0.5 s at most
           f"2\n00:00:{second_start} --> 00:00:03,000\nto the shop.\n")
    result = formats.resegment(formats.loads(srt, "srt"), ResegmentOptions(42, 2, 7))
    assert [(c.start, c.end, c.text) for c in result.cues] == [
        (1.0, 3.0, "so we went to the shop.")]


def test_resegment_keeps_a_short_cue_inside_the_cue_before_at_its_own_times():
    srt = ("1\n00:00:01,000 --> 00:00:02,000\nso we went\n\n"
           "2\n00:00:01,700 --> 00:00:02,000\n[MUSIC]\n\n"  # started at 2.0 it would last 0 s
           "3\n00:00:01,800 --> 00:00:02,200\nyes\n\n"  # after one at its own times
           "4\n00:00:02,200 --> 00:00:03,000\nto the shop.\n")
    result = formats.resegment(formats.loads(srt, "srt"), ResegmentOptions(42, 2, 7))
    assert [(c.start, c.end, c.text) for c in result.cues] == [
        (1.0, 2.0, "so we went"), (1.7, 2.0, "[MUSIC]"), (1.8, 3.0, "yes to the shop.")]
    assert all(c.end > c.start for c in result.cues)


def test_resegment_never_cuts_a_word_written_against_markup():
    srt = "1\n00:00:01,000 --> 00:00:03,000\nso <i>some</i>thing, my <b>un</b>believable friend\n"
    for width in (3, 5, 9, 14):
        result = formats.resegment(formats.loads(srt, "srt"), ResegmentOptions(width, 1, 7))
        lines = [line.split() for c in result.cues for line in c.text.split("\n")]
        assert sum(lines, []) == ["so", "something,", "my", "unbelievable", "friend"], width


def test_resegment_needs_times_and_subtitles():
    with pytest.raises(ValueError, match="convert"):
        formats.resegment(formats.loads(TEXT, "text"))
    with pytest.raises(ValueError, match=r"text cue 1 of \d+ \(.*\) has no times"):
        formats.convert(formats.loads(TEXT, "text"), "srt")


@pytest.mark.parametrize("field, value", [("max_chars_per_line", 0), ("max_lines", 0),
                                          ("max_duration", 0.0), ("max_lines", 2.5)])
def test_resegment_options_are_validated(field, value):
    with pytest.raises(ValueError, match=f"ResegmentOptions.{field}"):
        ResegmentOptions(**{field: value})


def test_convert_between_formats_keeps_words_and_times():
    whisper = formats.loads(json.dumps(WHISPER), "whisper")
    srt = formats.convert(whisper, "srt")
    assert formats.dumps(srt).startswith("1\n00:00:00,000 --> 00:00:02,500\nso what do you\n")
    vtt = formats.convert(formats.loads(SRT, "srt"), "vtt")
    assert "<i>" not in formats.dumps(vtt) and vtt.cues[1].text == (
        "think about it i think\nit is great")
    assert formats.dumps(formats.convert(whisper, "text")) == (
        "so what do you think about it i think it is great\n")
    back = json.loads(formats.dumps(formats.convert(formats.loads(_json(VOSK), "vosk"),
                                                    "whisper")))
    assert back["segments"][0]["words"][1] == {"word": " what", "start": 0.5, "end": 1.0}
    assert back["text"] == " so what do you think about it"
    lines = formats.convert(formats.loads(_lines(VOSK_LINES), "vosk"), "srt")
    assert [(c.start, c.text) for c in lines.cues] == [
        (0.0, "so what do you think about it"), (4.0, "i think it is great")]  # no partials


# ----------------------------------------------------------------------------- malformed input

MALFORMED = [
    ("bad.srt", "1\n00:00:01,000 --> 00:00:0x,000\nhi\n", "bad.srt:2: bad timestamp"),
    ("bad.srt", "1\n00:00:01,000 00:00:02,000\nhi\n",
     "bad.srt:2: expected a timestamp line 'HH:MM:SS,mmm --> HH:MM:SS,mmm'"),
    ("bad.srt", "1\n00:00:01,000 --> 00:00:02,000\nhi\n2\n00:00:03,000 --> 00:00:04,000\n",
     "bad.srt:5: timestamp line inside a cue's text"),
    ("bad.srt", "1\n00:00:01.000 --> 00:00:02.000\nhi\n2\n00:00:03.000 --> 00:00:04.000\n",
     "bad.srt:5: timestamp line inside a cue's text"),  # times with a period
    ("bad.srt", "\n\n1\n00:00:05,000 --> 00:00:02,000\nhi\n", "bad.srt:4: cue ends"),
    ("bad.srt", "1\n00:00:01,000 --> 00:00:02,000\nhi\n\nhello there\n",
     "bad.srt:5: expected a cue number or a timestamp line"),
    ("bad.vtt", "00:01.000 --> 00:02.000\nhi\n", "bad.vtt:1: expected 'WEBVTT'"),
    ("bad.vtt", "WEBVTT\n\n00:01.000 --> 00:02,000\nhi\n", "bad.vtt:3: bad timestamp"),
    ("bad.vtt", "WEBVTT\n\nhello\nthere\n", "bad.vtt:4: expected a timestamp line"),
    ("bad.json", '{"segments": [\n  {"start": 0,\n  }\n]}', "bad.json:3: not valid JSON"),
    ("bad.json", '{"segments": {"start": 0}}', "bad.json:1: segments: expected a list"),
    ("bad.json", _json({"segments": [{"start": 0, "end": 1, "text": " a", "words": [
        {"word": " a", "start": 0, "end": 1}, {"word": " b", "start": "1", "end": 2}]}]},
        indent=2), "bad.json:15: segments[0].words[1].start: expected a time"),
    ("bad.json", _json({"segments": [{"start": 0, "end": 1}]}, indent=2),
     "bad.json:3: segments[0]: no 'text' key"),
    ("bad.json", '{"segments": [{"start": 0, "end": 1e400, "text": "a"}]}',
     "bad.json:1: segments[0].end: expected a time in seconds (a number from 0 to 1e+10), "
     "got inf"),
    ("bad.json", '{"segments": [{"start": 0, "end": 1e306, "text": "a"}]}',
     "bad.json:1: segments[0].end: expected a time in seconds (a number from 0 to 1e+10), got "
     "1e+306"),
    ("bad.json", '{"segments": [{"start": 0, "end": 1%s, "text": "a"}]}' % ("0" * 400),
     "bad.json:1: segments[0].end: expected a time in seconds (a number from 0 to 1e+10), got "
     "a larger number"),
    ("bad.json", '{"segments": [{"start": 0, "end": 1%s, "text": "a"}]}' % ("0" * 5000),
     "bad.json:1: not readable JSON (Exceeds the limit"),
    ("bad.json", "[" * 100_000, "bad.json:1: JSON nested too deeply to read"),
    ("bad.json", '{"segments": [{"start": 0, "end": 1, "text": "a", "x": %s}, 5]}'
     % ("[" * 700 + "]" * 700), "bad.json: segments[1]: expected a segment object, got a "
                                  "number"),  # deeper than the line finder goes
    ("bad.json", '{"segments": [{"start": 0, "end": 1, "text": "a", "words": [{"word": "a", '
                 '"start": true, "end": 1}]}]}',
     "bad.json:1: segments[0].words[0].start: expected a time in seconds (a number from 0 to "
     "1e+10), got a boolean"),
    ("bad.srt", "1\n%s:00:00,000 --> 00:00:01,000\na\n" % ("9" * 400),
     "bad.srt:2: timestamp '99999"),
    ("bad.json", '{"segments": [{"start": NaN, "end": 1, "text": "a"}]}',
     "bad.json:1: segments[0].start: expected a time in seconds (a number from 0 to 1e+10), "
     "got nan"),
    ("bad.json", '{"segments": [{"start": 5, "end": 1, "text": "a"}]}',
     "bad.json:1: segments[0].end: the segment ends (1) before it starts (5)"),
    ("vosk.jsonl", '{"result": [], "text": ""}\n{"result": [{"start": 0, "end": 1}]}\n',
     "vosk.jsonl:2: result[0]: no 'word' key"),
    ("vosk.jsonl", '{"text": "a"}\n{"text": "b"\n', "vosk.jsonl:2: not valid JSON"),
    ("vosk.json", '[{"text": "a"}, 3]', "vosk.json:1: [1]: expected a Vosk result object"),
    ("m.jsonl", '{"audio_filepath": "a.wav", "pred_text": "a"}\n{"audio_filepath": "b.wav"}\n',
     "m.jsonl:2: no 'pred_text' key"),
    ("m.jsonl", '[{"audio_filepath": "a.wav", "pred_text": "a"}]',
     "m.jsonl:1: expected a manifest object"),
    ("what.json", '{"foo": 1}', "what.json:1: cannot tell which JSON format this is (its "
                                "keys: 'foo')"),
    ("long.srt", "1\n00:00:01,000 --> 00:00:02,000\nhi\n\n%s\n" % ("7" * 100_000),
     "long.srt:6: expected a timestamp line 'HH:MM:SS,mmm --> HH:MM:SS,mmm' after cue "
     "number '%s..." % ("7" * 59)),  # a line of any length: cut in the message
]


@pytest.mark.parametrize("name", ["cues.txt", "cues.txt.gz"])
def test_subtitles_saved_as_txt_are_subtitles(tmp_path, name):
    srt = "\ufeff1\n00:00:01,000 --> 00:00:02,000\nhello there\n"
    path = tmp_path / name
    path.write_bytes(gzip.compress(srt.encode()) if name.endswith(".gz") else srt.encode())
    assert formats.detect_format(path) == "srt"
    (tmp_path / "plain.txt").write_text("so what\nwe said\n00:00:01,000 --> 00:00:02,000\n")
    assert formats.detect_format(tmp_path / "plain.txt") == "text"  # a timing line later


@pytest.mark.parametrize("content, format", [
    ('{\n  "text" : "hello can you hear me"\n}\n', "vosk"),  # vosk's example > out.txt
    ("rec 1 0.12 0.30 so 0.98\nrec 1 0.42 0.20 we 0.97\nrec 1 0.62 0.30 went 0.99\n", "ctm"),
    (";; a comment\nrec 1 0.12 0.30 so\nrec 1 0.42 0.20 we\nrec 1 0.62 0.30 went\n", "ctm"),
    ('{"foo": 1}\n', "text"), ("{not json\nso what\n", "text"),  # JSON of no transcript
    ("prices rose 2.5 3 times in the last year so we sold\n", "text"),  # not CTM fields
    ("WEBVTT files hold captions, right?\nYes, they do.\n", "text"),
])
def test_recognisers_output_saved_as_txt_is_read_in_its_format(tmp_path, content, format):
    path = _write(tmp_path, "out.txt", content)
    assert formats.detect_format(path) == format
    assert formats.read(path).format == format
    assert formats.dumps(formats.read(path)) == content


def test_a_file_with_cr_alone_between_lines_is_read_and_written_so(tmp_path):
    path = _write(tmp_path, "mac.vtt", "WEBVTT\r\r00:01.000 --> 00:02.000\rhello there\r")
    transcript = formats.read(path)
    assert [(c.start, c.end, c.text) for c in transcript.cues] == [(1.0, 2.0, "hello there")]
    assert formats.dumps(transcript) == "WEBVTT\r\r00:01.000 --> 00:02.000\rhello there\r"


def test_a_missing_text_column_lists_twenty_columns_at_most(tmp_path):
    path = _write(tmp_path, "wide.csv", ",".join(f"c{i}" for i in range(5000)) + "\n" +
                  ",".join("x" * 5000) + "\n")
    with pytest.raises(ValueError, match=r"'c19' and 4,980 more\); name the column") as error:
        formats.read(path)
    assert len(str(error.value)) < 500


@pytest.mark.parametrize("name, content, message", MALFORMED)
def test_malformed_files_name_file_and_line(tmp_path, name, content, message):
    path = _write(tmp_path, name, content)
    with pytest.raises(ValueError) as error:
        formats.read(path)  # auto: by extension, then by content
    assert str(path) + message.removeprefix(name) in str(error.value)


@pytest.mark.parametrize("format, content", [("whisper", "[]"), ("whisper", '"text"'),
                                             ("vosk", '{"result": 3}'), ("nemo", "[1]"),
                                             ("vosk", '[{"text": "a"}, {"words": []}]'),
                                             ("whisper", '{"a": 1}\n{"b": 2}\n')])
def test_json_of_the_wrong_shape_for_a_given_format(tmp_path, format, content):
    path = _write(tmp_path, "in.json", content)
    with pytest.raises(ValueError, match=re.escape(str(path)) + r":\d+: .*expected"):
        formats.read(path, format)


def test_non_utf8_and_missing_files(tmp_path):
    path = tmp_path / "bin.srt"
    path.write_bytes(b"1\n00:00:01,000 --> 00:00:02,000\n\xff\n")
    with pytest.raises(ValueError, match=re.escape(f"{path}:3: not valid UTF-8")):
        formats.read(path)
    assert formats.read(path, errors="replace").cues[0].text == "\ufffd"
    no_suffix = tmp_path / "notes"
    no_suffix.write_bytes(b"so what\n\xff\n")
    assert formats.detect_format(no_suffix) == "text"  # sniffing never fails on bad bytes
    with pytest.raises(FileNotFoundError, match="nope.srt: no such file"):
        formats.read(tmp_path / "nope.srt")


def test_a_gzipped_file_in_a_given_format_is_read(tmp_path):
    path = tmp_path / "talk.json.gz"
    record = {"segments": [{"start": 0, "end": 1, "text": " so what"}]}
    path.write_bytes(gzip.compress(_json(record).encode()))
    assert formats.read(path, "whisper").cues[0].text.strip() == "so what"
    path.write_bytes(gzip.compress(_json(record).encode())[:20])
    with pytest.raises(ValueError, match="talk.json.gz: not a complete gzip file"):
        formats.read(path, "whisper")


def test_detect_format_by_content(tmp_path):
    cases = {"a": SRT, "b": VTT, "c": json.dumps(WHISPER), "d": _lines(VOSK_LINES),
             "e": _lines(NEMO), "f": "[music] so what\n", "g": TEXT}
    expected = {"a": "srt", "b": "vtt", "c": "whisper", "d": "vosk", "e": "nemo", "f": "text",
                "g": "text"}
    for name, content in cases.items():
        assert formats.detect_format(_write(tmp_path, name, content)) == expected[name]


# ----------------------------------------------------------------------------- command line

def _cli(args, tiny_artifact, capsys):
    code = main(["restore", "--model", str(tiny_artifact), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_restores_srt_keeping_cues(tiny_artifact, tmp_path, capsys):
    source = _write(tmp_path, "talk.srt", SRT)
    out = tmp_path / "restored.srt"
    code, _, err = _cli(["-i", str(source), "-o", str(out)], tiny_artifact, capsys)
    assert code == 0 and err == ""
    before, after = formats.read(source), formats.read(out)
    assert [(c.start, c.end, c.identifier) for c in after.cues] == [
        (c.start, c.end, c.identifier) for c in before.cues]
    assert [normalize(t.text) for t in after.tokens] == [normalize(t.text)
                                                         for t in before.tokens]
    assert "<i>" in after.cues[1].text and after.cues[0].text[0].isupper()


def test_cli_restores_vosk_json_and_resegments(tiny_artifact, tmp_path, capsys):
    source = _write(tmp_path, "vosk.json", _json([VOSK, VOSK_LINES[2]], indent=2))
    code, out, _ = _cli(["-i", str(source), "--format", "vosk"], tiny_artifact, capsys)
    records = json.loads(out)
    assert code == 0 and len(records) == 2
    assert [w["start"] for w in records[0]["result"]] == [w["start"] for w in VOSK["result"]]
    assert normalize(records[0]["text"]) == VOSK["text"].split()
    code, out, _ = _cli(["-i", str(source), "--to", "srt", "--resegment", "--max-chars", "16",
                         "--max-lines", "1"], tiny_artifact, capsys)
    cues = formats.loads(out, "srt").cues
    assert code == 0 and all(len(c.text) <= 16 and "\n" not in c.text for c in cues)
    assert [w for c in cues for w in normalize(c.text)] == (
        "so what do you think about it i think it is great".split())


def test_cli_resegments_webvtt_voices_apart_when_converting(tiny_artifact, tmp_path, capsys):
    vtt = ("WEBVTT\n\n00:01.000 --> 00:02.000\n<v Ann>hi how are you\n\n"
           "00:02.000 --> 00:03.000\n<v Bob>fine thanks\n")
    source = _write(tmp_path, "voices.vtt", vtt)
    code, out, _ = _cli(["-i", str(source), "--to", "srt", "--resegment"], tiny_artifact, capsys)
    cues = formats.loads(out, "srt").cues
    assert code == 0 and [normalize(c.text) for c in cues] == [
        ["hi", "how", "are", "you"], ["fine", "thanks"]]  # a new cue where Bob speaks
    assert [(c.start, c.end) for c in cues] == [(1.0, 2.0), (2.0, 3.0)]


def test_cli_folder_output_changes_extension(tiny_artifact, tmp_path, capsys):
    a = _write(tmp_path, "a.json", json.dumps(WHISPER))
    b = _write(tmp_path, "b.srt", SRT)
    code, _, _ = _cli(["-i", str(a), "-i", str(b), "--to", "vtt", "-o", str(tmp_path / "out")],
                      tiny_artifact, capsys)
    assert code == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.vtt", "b.vtt"]
    assert (tmp_path / "out" / "a.vtt").read_text().startswith("WEBVTT\n\n00:00:00.000")


def test_cli_stdin_with_format(tiny_artifact, capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(SRT.encode())))
    code, out, _ = _cli(["--format", "srt"], tiny_artifact, capsys)
    assert code == 0 and len(formats.loads(out, "srt").cues) == 3


@pytest.mark.parametrize("args, name, content, message", [
    (["--json"], "in.srt", SRT, "--json is for plain text input"),
    (["--output-key", "x"], "in.srt", SRT, "--output-key are for NeMo manifests"),
    (["--to", "srt"], "in.txt", TEXT, "has no timings"),
    (["--resegment"], "in.json", json.dumps(WHISPER), "--resegment builds subtitle cues"),
    (["--max-chars", "10"], "in.srt", SRT, "need --resegment"),
    (["--to", "srt", "--resegment", "--max-lines", "0"], "in.json", json.dumps(WHISPER),
     "error: --max-lines must be an integer"),
    ([], "in.srt", "1\n00:00:01,000 00:00:02,000\nhi\n", "in.srt:2: expected a timestamp line"),
    (["--format", "whisper"], "in.json", json.dumps(VOSK), "in.json:1: segments: expected"),
])
def test_cli_errors_are_one_line(tiny_artifact, tmp_path, capsys, args, name, content, message):
    source = _write(tmp_path, name, content)
    code, out, err = _cli(["-i", str(source), *args], tiny_artifact, capsys)
    assert code == 2 and out == "" and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# ----------------------------------------------------------------------------- references

def test_character_references_reach_the_model_decoded_and_come_back_encoded():
    srt = ("1\n00:00:01,000 --> 00:00:02,000\nwell i don&#39;t know &amp; the q&amp;a\n\n"
           "2\n00:00:02,500 --> 00:00:03,000\n&quot;r&amp;d&quot; is&nbsp;late\n")
    reference = "Well, I don't know & the Q&A. \"R&D\" is late."
    transcript, restored, punctuator = _restored_cues(srt, "srt", reference)
    assert punctuator.calls == [["well", "i", "don't", "know", "&", "the", "q&a", "r&d",
                                 "is", "late"]]
    assert [c.text for c in restored.cues] == [
        "Well, I don&#39;t know &amp; the Q&amp;A.", "&quot;R&amp;D&quot; is&nbsp;late."]
    assert formats.dumps(formats.convert(restored, "text")) == \
        "Well, I don't know & the Q&A. \"R&D\" is late.\n"  # (quotes kept)


def test_a_reference_whose_character_changes_case_is_written_for_the_new_case():
    srt = ("1\n00:00:01,000 --> 00:00:02,000\n&eacute;cole &#233;t&#xe9; here\n\n"
           "2\n00:00:02,500 --> 00:00:03,000\nthe code &amp;amp; is\n")
    reference = "École ÉTÉ here. The code &amp; is."
    transcript, restored, punctuator = _restored_cues(srt, "srt", reference)
    assert punctuator.calls == [["école", "été", "here", "the", "code", "&amp;", "is"]]
    assert [c.text for c in restored.cues] == [  # (the last of two references for é wins)
        "&Eacute;cole &#201;T&#201; here.", "The code &amp;amp; is."]  # ";" of "&amp;" kept


def test_quotes_written_as_references_stay_when_markup_is_dropped():
    vtt = ("WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nhe said &quot;stop&quot; &amp; left\n\n"
           "00:00:02.000 --> 00:00:03.000\n<i>&quot;go home&quot;</i> she said\n")
    transcript = formats.loads(vtt, "vtt")
    assert formats.dumps(formats.convert(transcript, "text")) == \
        'he said "stop" & left "go home" she said\n'
    srt = formats.convert(transcript, "srt")  # SubRip has no references: decoded
    assert [c.text for c in srt.cues] == ['he said "stop" & left', '"go home" she said']
    assert formats.convert(formats.loads(formats.dumps(srt), "srt"), "vtt").cues[0].text == \
        'he said "stop" &amp; left'


def test_line_break_tags_and_no_break_spaces_separate_words_when_converting():
    srt = "1\n00:00:01,000 --> 00:00:02,000\nhello<br>world&nbsp;again <i>x</i>y\n"
    transcript = formats.loads(srt, "srt")
    assert formats.dumps(formats.convert(transcript, "text")) == "hello world again xy\n"
    assert formats.convert(transcript, "vtt").cues[0].text == "hello\nworld again xy"


def test_whisperx_words_without_spaces_stay_separate_words():
    words = [{"word": w, "start": i / 2, "end": i / 2 + 0.4} for i, w in
             enumerate(["so", "what", "do", "you", "think"])]
    content = _json({"segments": [{"start": 0.0, "end": 2.5, "text": " so what do you think",
                                   "words": words}]})
    transcript, restored, _ = _restored_cues(content, "whisper", "So, what do you think?")
    segment = json.loads(formats.dumps(restored))["segments"][0]
    assert segment["text"] == " So, what do you think?"
    assert [w["word"] for w in segment["words"]] == ["So,", "what", "do", "you", "think?"]
    assert formats.dumps(formats.convert(restored, "text")) == "So, what do you think?\n"
    copies = [{k: w[k] for k in ("word", "start", "end")} for w in words]  # WhisperX's copy
    content = _json({"segments": [{"start": 0.0, "end": 2.5, "text": " so what do you think",
                                   "words": words}], "word_segments": copies})
    _, restored, _ = _restored_cues(content, "whisper", "So, what do you think?")
    assert [w["word"] for w in json.loads(formats.dumps(restored))["word_segments"]] == [
        "So,", "what", "do", "you", "think?"]


def test_whisperx_words_stay_words_beside_a_stray_spaced_record():
    words = [{"word": w, "start": i / 2, "end": i / 2 + 0.4} for i, w in
             enumerate(["so", "we", "go", " home", "now"])]
    content = _json({"segments": [{"start": 0.0, "end": 2.5, "text": "so we go home now",
                                   "words": words}]})
    _, restored, punctuator = _restored_cues(content, "whisper", "So we go home now.")
    assert punctuator.calls == [["so", "we", "go", "home", "now"]]  # not "sowego"
    segment = json.loads(formats.dumps(restored))["segments"][0]
    assert segment["text"] == "So we go home now."
    assert formats.dumps(formats.convert(restored, "text")) == "So we go home now.\n"


def test_whisperx_speakers_end_the_sentence_where_they_change():
    segments = []
    for k, (speaker, text) in enumerate([("SPEAKER_00", "and then we drove to the"),
                                         ("SPEAKER_01", "old town for dinner")]):
        words = [{"word": w, "start": k + i / 10, "end": k + i / 10 + 0.05,
                  "speaker": speaker} for i, w in enumerate(text.split())]
        segments.append({"start": k, "end": k + 1, "text": " " + text, "words": words,
                         "speaker": speaker})
    content = _json({"segments": segments})
    _, restored, _ = _restored_cues(content, "whisper", "and then we drove to the old town "
                                                        "for dinner")
    texts = [s["text"] for s in json.loads(formats.dumps(restored))["segments"]]
    assert texts[0].endswith("the.") and texts[1].startswith(" Old")
    vtt = formats.convert(restored, "vtt")  # speakers kept as WhisperX writes them
    assert [c.text for c in vtt.cues] == ["<v SPEAKER_00>And then we drove to the.",
                                          "<v SPEAKER_01>Old town for dinner."]
    srt = formats.loads(formats.dumps(formats.convert(restored, "srt")), "srt")
    assert [c.text for c in srt.cues] == ["[SPEAKER_00]: And then we drove to the.",
                                          "[SPEAKER_01]: Old town for dinner."]
    assert formats.dumps(formats.convert(restored, "text")) == (  # WhisperX's .txt labels
        "[SPEAKER_00]: And then we drove to the.\n[SPEAKER_01]: Old town for dinner.\n")


def test_whisperx_speakers_in_subrip_are_labelled_where_they_change():
    segments = [{"start": k, "end": k + 1, "text": " " + text, "speaker": speaker}
                for k, (speaker, text) in enumerate([("SPEAKER_00", "so what do you"),
                                                     ("SPEAKER_00", "think about it"),
                                                     ("SPEAKER_01", "it is great")])]
    transcript = formats.loads(_json({"segments": segments}), "whisper")
    assert [c.text for c in formats.convert(transcript, "srt").cues] == [
        "[SPEAKER_00]: so what do you", "think about it", "[SPEAKER_01]: it is great"]
    cues = formats.resegment(formats.convert(transcript, "srt")).cues
    assert [c.text.replace("\n", " ") for c in cues] == [
        "[SPEAKER_00]: so what do you think about it", "[SPEAKER_01]: it is great"]


def test_whisperx_speakers_of_words_change_voices_and_labels_inside_a_cue():
    words = [{"word": w, "start": i / 4, "end": i / 4 + 0.2,
              "speaker": "SPEAKER_00" if i < 3 else "SPEAKER_01"}
             for i, w in enumerate(["so", "what", "now", "we", "go"])]
    content = _json({"segments": [{"start": 0.0, "end": 1.5, "text": " so what now we go",
                                   "words": words, "speaker": "SPEAKER_00"}]})
    transcript = formats.loads(content, "whisper")
    assert formats.convert(transcript, "vtt").cues[0].text == \
        "<v SPEAKER_00>so what now</v> <v SPEAKER_01>we go"
    assert formats.convert(transcript, "srt").cues[0].text == \
        "[SPEAKER_00]: so what now\n[SPEAKER_01]: we go"
    assert formats.dumps(formats.convert(transcript, "text")) == \
        "[SPEAKER_00]: so what now\n[SPEAKER_01]: we go\n"


def test_whisperx_speakers_named_in_lowercase_read_back_as_labels():
    from punctum.formats.annotations import find_annotations
    from punctum.formats.transcript import split_tokens

    segments = [{"start": k, "end": k + 1, "text": " " + text, "speaker": speaker}
                for k, (speaker, text) in enumerate([("john smith", "so what now"),
                                                     ("mary", "we go")])]
    text = formats.dumps(formats.convert(formats.loads(_json({"segments": segments}),
                                                       "whisper"), "text"))
    assert text == "[john smith]: so what now\n[mary]: we go\n"
    found = [find_annotations(split_tokens(line)) for line in text.splitlines()]
    assert [(f.kept_out, f.turns) for f in found] == [  # turns, kept out of the model
        (frozenset({0, 1}), frozenset({0})), (frozenset({0}), frozenset({0}))]


def test_whisperx_words_of_no_speaker_get_a_text_line_of_their_own():
    segments = [{"start": k, "end": k + 1, "text": " " + text, **speaker}
                for k, (speaker, text) in enumerate([({"speaker": "S0"}, "hello there"),
                                                     ({}, "no speaker here"),
                                                     ({"speaker": "S0"}, "back again"),
                                                     ({"speaker": "S1"}, "other")])]
    transcript = formats.loads(_json({"segments": segments}), "whisper")
    assert formats.dumps(formats.convert(transcript, "text")) == \
        "[S0]: hello there\nno speaker here\n[S0]: back again\n[S1]: other\n"
    assert formats.dumps(formats.convert(transcript, "text", speakers=False)) == \
        "hello there no speaker here back again other\n"


def test_webvtt_voices_become_subrip_labels_where_the_speaker_changes():
    vtt = ("WEBVTT\n\n00:01.000 --> 00:02.000\n<v Bob>so what\n\n00:02.000 --> 00:03.000\n"
           "<v.loud Ann>i think\n\n00:03.000 --> 00:04.000\n<v Ann>it is great\n")
    srt = formats.convert(formats.loads(vtt, "vtt"), "srt")
    assert [c.text for c in srt.cues] == ["[Bob]: so what", "[Ann]: i think", "it is great"]


def test_a_segment_of_pieces_alone_keeps_them_one_word():
    segments = [{"start": k, "end": k + 1, "text": "".join(ws), "words": [
        {"word": w, "start": k + i / 4, "end": k + i / 4 + 0.2} for i, w in enumerate(ws)]}
        for k, ws in enumerate([[" how", " much"], [" $1", ",500"], [" that", " is"]])]
    _, restored, _ = _restored_cues(_json({"segments": segments}), "whisper",
                                    "How much $1,500? That is.")
    words = [w["word"] for w in json.loads(formats.dumps(restored))["segments"][1]["words"]]
    assert words == [" $1", ",500?"]


def test_whisper_pieces_of_words_do_not_make_its_records_unspaced():
    records = [" Don", "'t", " do", "-", "it", "'s", "."]  # most records are pieces
    words = [{"word": w, "start": i / 4, "end": i / 4 + 0.2} for i, w in enumerate(records)]
    content = _json({"segments": [{"start": 0.0, "end": 2.0, "text": "".join(records),
                                   "words": words}]})
    transcript = formats.loads(content, "whisper")
    assert formats.dumps(formats.convert(transcript, "text")) == "Don't do-it's.\n"


def test_a_segment_keeps_its_own_spacing_and_gets_no_text_it_did_not_have():
    words = [{"word": w, "start": i / 2, "end": i / 2 + 0.4} for i, w in
             enumerate(["我们用", "iPhone", "拍照"])]
    content = _json({"segments": [{"start": 0.0, "end": 1.5, "text": "我们用 iPhone 拍照",
                                   "words": words}]})
    _, restored, _ = _restored_cues(content, "whisper", "我们用 iPhone 拍照.")
    assert json.loads(formats.dumps(restored))["segments"][0]["text"] == "我们用 iPhone 拍照."
    bare = _json({"segments": [{"start": 0.0, "end": 1.0, "words": [
        {"word": " hello", "start": 0.0, "end": 0.5}, {"word": " there", "start": 0.5,
                                                       "end": 1.0}]}]})
    _, restored, _ = _restored_cues(bare, "whisper", "Hello there.")
    segment = json.loads(formats.dumps(restored))["segments"][0]
    assert "text" not in segment and segment["words"][1]["word"] == " there."


def test_the_file_text_keeps_its_own_spacing_between_segments():
    content = _json({"text": "so we go\nhome now", "segments": [
        {"start": 0.0, "end": 1.0, "text": " so we go"},
        {"start": 1.0, "end": 2.0, "text": " home now"}]})
    _, restored, _ = _restored_cues(content, "whisper", "So we go home now.")
    assert json.loads(formats.dumps(restored))["text"] == "So we go\nhome now."


def test_whisperx_words_stay_apart_beside_a_segment_it_could_not_align():
    words = [{"word": w, "start": i / 2, "end": i / 2 + 0.4} for i, w in
             enumerate(["so", "what", "now"])]
    content = _json({"segments": [
        {"start": 0.0, "end": 1.5, "text": "so what now", "words": words},
        {"start": 1.5, "end": 2.5, "text": "1990 was fine", "words": []}]})  # not aligned
    transcript = formats.loads(content, "whisper")
    assert formats.dumps(formats.convert(transcript, "text")) == "so what now 1990 was fine\n"
    assert [c.text for c in formats.convert(transcript, "srt").cues] == [
        "so what now", "1990 was fine"]


def test_whisper_cpp_json_is_not_misread_as_vosk():  # (its "result" is Vosk's key too)
    content = _json({"result": {"language": "en"}, "transcription": [
        {"offsets": {"from": 0, "to": 1000}, "text": " hello"}]})
    assert formats.loads(content, name="out.json").format == "whispercpp"


def test_letter_references_are_words_and_bare_ampersands_are_left_alone():
    split = formats.split_tokens("un caf&eacute; &Eacute;cole good&times &quot;x", markup=True)
    assert [t.text for t in split] == ["un", "caf&eacute;", "&Eacute;cole", "good&times", "x"]
    srt = "1\n00:00:01,000 --> 00:00:02,000\nwe had a caf&eacute; and good&times\n"
    _, restored, punctuator = _restored_cues(srt, "srt", "We had a café and good&times.")
    assert punctuator.calls == [["we", "had", "a", "café", "and", "good&times"]]
    assert restored.cues[0].text == "We had a caf&eacute; and good&times."
    assert formats.dumps(formats.convert(restored, "text")) == "We had a café and good&times.\n"


def test_words_of_scripts_without_spaces_stay_unspaced():
    words = [{"word": w, "start": i / 2, "end": i / 2 + 0.4} for i, w in enumerate("你好世界")]
    content = _json({"segments": [{"start": 0.0, "end": 2.0, "text": "你好世界", "words": words}]})
    transcript = formats.loads(content, "whisper")
    assert formats.convert(transcript, "srt").cues[0].text == "你好世界"
    changed = [{**w, "word": w["word"] + ("。" if i == 3 else "")} for i, w in enumerate(words)]
    from punctum.formats.json_records import _segment_text

    assert _segment_text(changed, "你好世界") == "你好世界。"
    assert _segment_text([{"word": "so"}, {"word": "what"}], " x") == " so what"


def test_fuzz_findings_round_trip_and_idempotence(tiny):
    # a stand-alone reference that gets a mark is still text when read back
    srt = "1\n00:00:01,000 --> 00:00:02,000\nhello &amp;\n"
    once = formats.dumps(formats.restore_transcript(formats.loads(srt, "srt"), tiny))
    assert "&amp;" in [t.text.rstrip(",.?!") for t in formats.loads(once, "srt").tokens]
    assert formats.dumps(formats.restore_transcript(formats.loads(once, "srt"), tiny)) == once
    # subtitle times are exact decimals
    cue = formats.loads("1\n00:00:01,840 --> 00:00:02,595\nhello\n", "srt").cues[0]
    assert (cue.start, cue.end) == (1.84, 2.595)
    # untimed text cannot become Whisper JSON (its segments need times)
    with pytest.raises(ValueError, match="has no times; cannot write whisper"):
        formats.convert(formats.loads("hello\n", "text"), "whisper")
    # JSON separators are read outside string values
    for content in (json.dumps({"text": " hi,", "segments": [
            {"id": 0, "start": 0.0, "end": 1.0, "text": " hi,"}]}) + "\n",
            json.dumps([{"text": "hello,"}, {"text": "world"}]) + "\n",
            '[{"text":""},{"text":""}]\n'):
        assert formats.dumps(formats.loads(content)) == content


def test_json_text_converted_to_webvtt_is_escaped_and_reads_back():
    content = _json({"segments": [{"start": 0.0, "end": 1.0, "text": " go --> AT&T <b c> d"}]})
    vtt = formats.dumps(formats.convert(formats.loads(content, "whisper"), "vtt"))
    assert "go --&gt; AT&amp;T &lt;b c&gt; d" in vtt
    back = formats.loads(vtt, "vtt")
    assert [formats.convert(back, "text").cues[0].text] == ["go --> AT&T <b c> d"]


def test_json_text_converted_to_srt_keeps_tag_shapes_as_text():
    content = _json({"segments": [{"start": 0.0, "end": 1.0, "text": " a<b and c>d, x < 5"}]})
    srt = formats.dumps(formats.convert(formats.loads(content, "whisper"), "srt"))
    assert "a&lt;b and c>d, x < 5" in srt  # "<b and c>" would read back as a tag
    back = formats.loads(srt, "srt")
    assert [t.text for t in back.cues[0].tokens] == ["a&lt;b", "and", "c>d,", "x", "<", "5"]
    assert formats.convert(back, "text").cues[0].text == "a<b and c>d, x < 5"


def test_vosk_results_printed_one_after_another_are_read_and_written_so():
    results = [{"result": [{"conf": 1.0, "end": 0.5, "start": 0.0, "word": "so"},
                           {"conf": 1.0, "end": 0.9, "start": 0.5, "word": "what"}],
                "text": "so what"},
               {"text": ""},
               {"result": [{"conf": 1.0, "end": 1.5, "start": 1.0, "word": "do"},
                           {"conf": 0.9, "end": 2.0, "start": 1.5, "word": "you"}],
                "text": "do you"}]
    content = "".join(json.dumps(r, indent=2).replace('": ', '" : ') + "\n" for r in results)
    transcript, restored, punctuator = _restored_cues(content, "auto", "So, what do you?")
    assert transcript.format == "vosk" and punctuator.calls == [["so", "what", "do", "you"]]
    expected = content.replace('"so what"', '"So, what"').replace('"do you"', '"do you?"')
    expected = expected.replace('"word" : "so"', '"word" : "So,"')
    assert formats.dumps(restored) == expected.replace('"word" : "you"', '"word" : "you?"')


def test_vosk_alternatives_restore_the_most_likely_one():
    best = [{"word": w, "start": i / 2, "end": i / 2 + 0.4} for i, w in
            enumerate(["so", "what", "do", "you", "think"])]
    content = _json({"alternatives": [
        {"confidence": 263.0, "result": best, "text": "so what do you think"},
        {"confidence": 250.0, "text": "so what do you drink"}]})
    transcript, restored, punctuator = _restored_cues(content, "vosk", "So, what do you think?")
    assert punctuator.calls == [["so", "what", "do", "you", "think"]]
    record = json.loads(formats.dumps(restored))
    assert record["alternatives"][0]["text"] == "So, what do you think?"
    assert record["alternatives"][1] == {"confidence": 250.0, "text": "so what do you drink"}
    assert formats.dumps(transcript) == content  # read and written back unchanged


def test_srt_text_converted_to_webvtt_is_escaped_once():
    srt = "1\n00:00:01,000 --> 00:00:02,000\nso a --> b and 3 > 2 and AT&amp;T\n"
    vtt = formats.dumps(formats.convert(formats.loads(srt, "srt"), "vtt"))
    assert "so a --&gt; b and 3 &gt; 2 and AT&amp;T" in vtt
    back = formats.convert(formats.loads(vtt, "vtt"), "text").cues[0].text
    assert back == "so a --> b and 3 > 2 and AT&T"


def test_a_cue_of_fillers_alone_is_left_out_when_converting():
    hf = {"text": " hello [noise] world", "chunks": [
        {"text": " hello", "timestamp": [0.0, 0.5]}, {"text": " [noise]", "timestamp": [0.5, 1.0]},
        {"text": " world", "timestamp": [1.0, 1.5]}]}
    srt = formats.convert(formats.loads(json.dumps(hf), "hf"), "srt")
    assert [c.text for c in srt.cues] == ["hello", "world"]



def test_restored_spanish_subtitles_open_their_questions():
    srt = ("1\n00:00:01,000 --> 00:00:02,000\nqué hora es\n\n"
           "2\n00:00:02,000 --> 00:00:03,000\nson las tres\n")
    punctuator = ScriptedPunctuator("qué hora es? son las tres.", language="es")
    restored = formats.restore_transcript(formats.loads(srt, "srt"), punctuator)
    assert [c.text for c in restored.cues] == ["¿Qué hora es?", "Son las tres."]


def test_whisper_word_pieces_are_one_word_for_the_model():
    words = [{"word": w, "start": i / 2, "end": i / 2 + 0.4} for i, w in
             enumerate([" it", " costs", " $1", ",000", " don", "'t", " go"])]
    content = _json({"segments": [{"start": 0.0, "end": 4.0, "text": "", "words": words}]})
    transcript, restored, punctuator = _restored_cues(content, "whisper",
                                                      "It costs $1,000. Don't go.")
    assert punctuator.calls == [["it", "costs", "$1,000", "don't", "go"]]
    segment = json.loads(formats.dumps(restored))["segments"][0]
    assert [w["word"] for w in segment["words"]] == [
        " It", " costs", " $1", ",000.", " Don", "'t", " go."]
    assert segment["text"] == " It costs $1,000. Don't go."
    assert formats.dumps(formats.convert(restored, "text")) == "It costs $1,000. Don't go.\n"
    from punctum.formats.restoring import _parse_groups, _word_groups

    cue = transcript.cues[0]
    parsed = [_parse_groups(cue, _word_groups(cue), punctuator.inventory, str)]
    pauses = formats.word_pauses(transcript, parsed, [0])
    assert pauses[2] == pytest.approx(2.0 - 1.9)  # after "$1,000": from its last piece's end


def test_word_pieces_without_letters_keep_their_characters():
    from punctum.formats.restoring import _split_word_pieces

    assert _split_word_pieces("👍🏽.", ["👍", "🏽"]) == ["👍", "🏽."]
    assert _split_word_pieces("OK👍🏽.", ["ok👍", "🏽"]) == ["OK👍", "🏽."]
    assert _split_word_pieces("Hi,", ['"hi', '"']) == ["Hi", ","]  # quotes dropped, as ever


def test_fullwidth_latin_records_are_separate_words():
    words = [{"word": w, "start": i / 2, "end": i / 2 + 0.4} for i, w in
             enumerate(["ＨＥＬＬＯ", "world", "and", "１２３", "ok", "東京", "ＴＶ"])]
    content = _json({"segments": [{"start": 0.0, "end": 4.0, "text": "", "words": words}]})
    converted = formats.convert(formats.loads(content, "whisper"), "text")
    assert formats.dumps(converted) == "ＨＥＬＬＯ world and １２３ ok東京ＴＶ\n"


def test_a_reference_to_no_character_is_markup_inside_a_word():
    srt = "1\n00:00:00,000 --> 00:00:02,000\nso a&#1;b is the caf&#xFFFF;e\n"
    punctuator = ScriptedPunctuator("So ab is the cafe.")
    restored = formats.restore_transcript(formats.loads(srt, "srt"), punctuator)
    assert punctuator.calls == [["so", "ab", "is", "the", "cafe"]]
    assert formats.dumps(restored).split("\n")[2] == "So a&#1;b is the caf&#xFFFF;e."


def test_lone_surrogate_escapes_outside_the_text_are_written_back_as_escapes():
    content = '{"language": "e\\ud800n", "text": " caf\u00e9 so", "segments": []}\n'
    transcript = formats.loads(content, "whisper")
    assert formats.dumps(transcript) == content
    assert formats.dumps(transcript).encode("utf-8")  # writable: no lone surrogate left
    line = '{"audio_filepath": "a\\udc80.wav", "pred_text": "caf\u00e9"}\n'
    assert formats.dumps(formats.loads(line, "nemo")) == line


def test_a_lone_surrogate_in_a_word_is_an_error_naming_the_file(tiny_artifact, tmp_path,
                                                                   capsys):
    source = _write(tmp_path, "talk.json", _json({"segments": [
        {"start": 0, "end": 1, "text": " so we go \ud800 home"}]}))  # (escaped by json)
    code, _, err = _cli(["-i", str(source), "-o", "-"], tiny_artifact, capsys)
    assert code == 2 and "talk.json: the word '\\ud800' holds a lone surrogate" in err


def test_whisper_text_is_rebuilt_with_spaces_between_segments_that_carry_none():
    content = _json({"text": "so what do you think about it", "segments": [
        {"id": 0, "start": 0.0, "end": 2.5, "text": "so what do you think"},
        {"id": 1, "start": 2.5, "end": 6.0, "text": "about it"}]})
    _, restored, _ = _restored_cues(content, "whisper", "So what do you think about it?")
    assert json.loads(formats.dumps(restored))["text"] == "So what do you think about it?"


@pytest.mark.parametrize("style", [{"indent": "\t"}, {"indent": 0}, {"indent": 4},
                                   {"indent": 2, "separators": (", ", ": ")},
                                   {"separators": (",", ":")}, {}])
def test_json_written_by_python_in_any_style_comes_back_byte_identical(style):
    record = {"text": " hi", "segments": [{"id": 0, "start": 0.0, "end": 1.0, "text": " hi",
                                           "words": [{"word": " hi", "start": 0, "end": 1}]}]}
    content = json.dumps(record, **style) + "\n"
    assert formats.dumps(formats.loads(content, "whisper")) == content


def test_angle_brackets_that_are_not_tags_are_text():
    tokens = formats.split_tokens("if x < 5 and y > 3 <i>stop</i> <00:00:01.000><c>now</c>",
                                  markup=True)
    assert [t.text for t in tokens] == ["if", "x", "<", "5", "and", "y", ">", "3", "stop",
                                        "now"]
    tokens = formats.split_tokens("<!-- speaker a --> we <3 it", markup=True)
    assert [t.text for t in tokens] == ["we", "<3", "it"]


def test_a_title_before_a_name_gets_its_period_unless_the_input_is_kept():
    from punctum.runtime import RestoreOptions

    punctuator = ScriptedPunctuator("Yesterday Mr. Smith met Gen Z fans and Dr. T.")
    srt = "1\n00:00:00,000 --> 00:00:02,000\nyesterday mr smith met gen z fans and dr t\n"
    restored = formats.restore_transcript(formats.loads(srt, "srt"), punctuator)
    assert formats.dumps(restored).split("\n")[2] == (
        "Yesterday Mr. Smith met Gen Z fans and Dr T.")
    kept = "1\n00:00:00,000 --> 00:00:02,000\nYesterday Mr Smith met Gen Z fans and Dr T.\n"
    restored = formats.restore_transcript(formats.loads(kept, "srt"), punctuator,
                                          RestoreOptions(keep_existing=True))
    assert formats.dumps(restored) == kept


def test_whisper_segments_that_carry_spaces_are_joined_as_written():
    content = _json({"text": " we flew to the international airport", "segments": [
        {"id": 0, "start": 0.0, "end": 2.5, "text": " we flew to the inter"},
        {"id": 1, "start": 2.5, "end": 6.0, "text": "national airport"}]})
    _, restored, _ = _restored_cues(content, "whisper",  # two words for the model
                                    "We flew to the inter national airport.")
    assert json.loads(formats.dumps(restored))["text"] == (
        " We flew to the international airport.")


def test_a_manifest_output_key_never_replaces_another_field():
    content = _lines([{"audio_filepath": "a.wav", "pred_text": "so what", "text": "So what?"}])
    transcript = formats.loads(content, "nemo")
    with pytest.raises(ValueError, match="record 1 already has a 'text' field"):
        formats.dumps(transcript, output_key="text")
    assert json.loads(formats.dumps(transcript, output_key="restored"))["restored"] == "so what"
    assert formats.dumps(transcript, output_key="pred_text") == content  # the text read


def test_restoring_rebuilds_tokens_and_cues_with_every_field():
    from dataclasses import fields

    # restoring._with_texts builds Token and Cue with these fields, in this order
    assert [f.name for f in fields(formats.Token)] == ["text", "start", "end", "before",
                                                       "after", "extra"]
    assert [f.name for f in fields(formats.Cue)] == ["start", "end", "tokens", "identifier",
                                                     "settings", "extra"]
