"""whisper.cpp's JSON (`formats.whispercpp`): read, restored, written back, converted."""

import json

import pytest
from test_formats import ScriptedPunctuator, _write

from punctum import formats
from punctum.cli import main
from punctum.runtime import RestoreOptions


def _segment(text: str, start_ms: int, end_ms: int, **extra) -> dict:
    """A segment as whisper-cli -oj writes one (a sample written for these tests)."""
    def stamp(ms: int) -> str:
        return f"00:00:{ms // 1000:02d},{ms % 1000:03d}"
    return {"timestamps": {"from": stamp(start_ms), "to": stamp(end_ms)},
            "offsets": {"from": start_ms, "to": end_ms}, "text": text, **extra}


def _document(*segments: dict) -> str:
    root = {"systeminfo": "AVX = 1 | NEON = 0", "model": {"type": "base", "multilingual": False},
            "params": {"model": "models/ggml-base.en.bin", "language": "en",
                       "translate": False},
            "result": {"language": "en"}, "transcription": list(segments)}
    return json.dumps(root, indent="\t") + "\n"


TOKENS = [{"text": "[_BEG_]", "offsets": {"from": 0, "to": 0}, "id": 50364, "p": 0.98},
          {"text": " so", "offsets": {"from": 0, "to": 300}, "id": 370, "p": 0.91}]
DOCUMENT = _document(_segment(" so what do you think", 0, 2100, tokens=TOKENS),
                     _segment(" i think it is great [BLANK_AUDIO]", 2100, 4000))


def _restored(content: str, reference: str, **options):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, name="talk.json")
    restored = formats.restore_transcript(transcript, punctuator, RestoreOptions(**options))
    return transcript, restored, punctuator


def test_whispercpp_json_is_recognised_and_timed_from_its_offsets():
    transcript = formats.loads(DOCUMENT, name="talk.json")
    assert transcript.format == "whispercpp"
    assert [(c.start, c.end) for c in transcript.cues] == [(0.0, 2.1), (2.1, 4.0)]
    assert [t.text for t in transcript.cues[1].tokens if t.text] == [
        "i", "think", "it", "is", "great"]  # [BLANK_AUDIO] never reaches the model


def test_only_segment_texts_change_and_the_rest_is_written_as_read():
    _, restored, punctuator = _restored(DOCUMENT, "So, what do you think? I think it is great.")
    assert punctuator.calls == [["so", "what", "do", "you", "think", "i", "think", "it", "is",
                                 "great"]]
    written = formats.dumps(restored)
    expected = DOCUMENT.replace('" so what do you think"', '" So, what do you think?"') \
        .replace('" i think it is great [BLANK_AUDIO]"', '" I think it is great. [BLANK_AUDIO]"')
    assert written == expected  # tabs, tokens, timestamps and model information untouched


def test_timestamps_serve_without_offsets_and_stream_segments_stay_untimed():
    no_offsets = {"timestamps": {"from": "00:01:02,345", "to": "01:00:00.500"}, "text": " a"}
    transcript = formats.loads(_document(no_offsets, {"segment": 0, "text": " b"}), "whispercpp")
    assert [(c.start, c.end) for c in transcript.cues] == [(62.345, 3600.5), (None, None)]
    with pytest.raises(ValueError, match="no times; cannot write srt"):
        formats.convert(transcript, "srt")


@pytest.mark.parametrize("segment, message", [
    ({"offsets": {"from": 0, "to": "1s"}, "text": " a"}, r"offsets\.to.*milliseconds"),
    ({"offsets": {"from": 900, "to": 100}, "text": " a"}, r"\.offsets: .*ends \(100\) before "
     r"it starts \(900\)"),
    ({"timestamps": {"from": "00:00:09,000", "to": "00:00:01,000"}, "text": " a"},
     r"\.timestamps: .*ends \('00:00:01,000'\)"),
    ({"timestamps": {"from": "0:00", "to": "00:00:01,000"}, "text": " a"}, "HH:MM:SS,mmm"),
    ({"timestamps": {"from": "9" * 12 + ":00:00,000", "to": "9" * 12 + ":00:01,000"},
      "text": " a"}, "beyond 1e"),
    ({"timestamps": {"from": "9" * 400 + ":00:00,000", "to": "00:00:01,000"}, "text": " a"},
     "HH:MM:SS,mmm"),
    ({"offsets": {"from": 0, "to": 10}}, "text"),
    ("a string", "segment object")])
def test_malformed_segments_get_one_line_errors_naming_the_place(segment, message):
    with pytest.raises(ValueError, match=message) as error:
        formats.loads(_document(segment), name="talk.json")
    assert "\n" not in str(error.value) and "talk.json" in str(error.value)


@pytest.mark.parametrize("first, second, expected", [
    ({"speaker": "0"}, {"speaker": "1"}, ["And then we went to the.", "Store with my friends."]),
    ({"speaker": "?"}, {"speaker": "1"}, ["And then we went to the", "store with my friends."]),
    ({"speaker": "0"}, {"speaker": "0"}, ["And then we went to the", "store with my friends."]),
    ({"speaker_turn_next": True}, {}, ["And then we went to the.", "Store with my friends."]),
])
def test_a_change_of_speaker_ends_the_sentence(first, second, expected):
    content = _document(_segment(" and then we went to the", 0, 1000, **first),
                        _segment(" store with my friends", 1000, 2000, **second))
    _, restored, _ = _restored(content, "And then we went to the store with my friends.")
    assert [c.text.strip() for c in restored.cues] == expected


@pytest.mark.parametrize("first, blank, third", [
    ({"speaker": "0"}, {"speaker": "1"}, {"speaker": "1"}),  # the blank's speaker says nothing
    ({"speaker_turn_next": True}, {}, {}),  # -tdrz's turn goes on past the blank
    ({}, {"speaker_turn_next": True}, {})])
def test_a_segment_without_words_passes_a_turn_on(first, blank, third):
    content = _document(_segment(" and then we went to the", 0, 1000, **first),
                        _segment(" [BLANK_AUDIO]", 1000, 1500, **blank),
                        _segment(" store with my friends", 1500, 2000, **third))
    _, restored, _ = _restored(content, "And then we went to the store with my friends.")
    assert [c.text.strip() for c in restored.cues] == [
        "And then we went to the.", "[BLANK_AUDIO]", "Store with my friends."]


def test_converted_to_subtitles_and_text(tmp_path):
    path = _write(tmp_path, "talk.json", DOCUMENT)
    _, restored, _ = _restored(DOCUMENT, "So, what do you think? I think it is great.")
    srt = formats.dumps(formats.convert(restored, "srt"))
    assert srt == ("1\n00:00:00,000 --> 00:00:02,100\nSo, what do you think?\n\n"
                   "2\n00:00:02,100 --> 00:00:04,000\nI think it is great.\n")
    assert formats.dumps(formats.convert(restored, "text")) == \
        "So, what do you think? I think it is great.\n"
    assert main(["restore", "-i", str(path), "--format", "whispercpp", "-o",
                 str(tmp_path / "out.json")]) == 0
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["transcription"][0]["tokens"] == TOKENS
    assert [s["offsets"] for s in out["transcription"]] == [
        {"from": 0, "to": 2100}, {"from": 2100, "to": 4000}]


def test_speakers_become_labels_and_voices_when_converted():
    content = _document(_segment(" so what do you think", 0, 2000, speaker="0"),
                        _segment(" i think it is great", 2000, 4000, speaker="1"),
                        _segment(" me too", 4000, 5000, speaker="?"))
    restored, _ = _restored(content, "So what do you think? I think it is great. Me too.")[1:]
    assert formats.dumps(formats.convert(restored, "srt")).split("\n\n")[:2] == [
        "1\n00:00:00,000 --> 00:00:02,000\n[0]: So what do you think?",
        "2\n00:00:02,000 --> 00:00:04,000\n[1]: I think it is great."]
    assert "<v 1>I think it is great." in formats.dumps(formats.convert(restored, "vtt"))
    assert formats.dumps(formats.convert(restored, "text")) == (
        "[0]: So what do you think?\n[1]: I think it is great.\nMe too.\n")
    assert "[0]" not in formats.dumps(formats.convert(restored, "text", speakers=False))
