"""sherpa-onnx's JSON results (`formats.sherpa`): read, restored, written back, converted."""

import io
import json

import pytest
from test_formats import ScriptedPunctuator, _write

from punctum import formats
from punctum.cli import main
from punctum.runtime import RestoreOptions

# Results written for these tests in the shape sherpa-onnx prints them (its C++ writer's
# spacing: "tokens":[ without a space).
RESULT = ('{"lang": "", "emotion": "", "event": "", "text": " so what do you think", '
          '"timestamps": [0.24, 0.52, 0.68, 0.80, 0.96, 1.12], "durations": [], '
          '"tokens":[" so", " what", " do", " you", " th", "ink"], "words": []}\n')


def _segment(number: int, start: float, words: list[str]) -> dict:
    """A streaming recogniser's result: token times count from the segment's start_time."""
    return {"text": " ".join(words), "tokens": [" " + w for w in words],
            "timestamps": [0.5 * k for k in range(len(words))],
            "durations": [0.25] * len(words), "segment": number, "start_time": start}


def _restored(content: str, reference: str, name: str = "result.json"):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, "auto", name=name)
    return formats.restore_transcript(transcript, punctuator, RestoreOptions()), punctuator


def test_a_result_is_read_by_its_keys_and_timed_by_its_tokens(tmp_path):
    transcript = formats.loads(RESULT, "auto", name="result.json")
    assert transcript.format == "sherpa"
    assert [(c.start, c.end) for c in transcript.cues] == [(0.24, 1.52)]  # +0.4: a word
    assert all(t.start is None for t in transcript.tokens)  # no durations: no word ends
    assert formats.detect_format(_write(tmp_path, "r.json", RESULT)) == "sherpa"
    assert formats.sniff_lines(io.StringIO(RESULT))[0] == "sherpa"


def test_only_the_text_changes_byte_for_byte():
    assert formats.dumps(formats.loads(RESULT, "sherpa")) == RESULT
    restored, punctuator = _restored(RESULT, "So what do you think?")
    assert punctuator.calls == [["so", "what", "do", "you", "think"]]
    assert formats.dumps(restored) == RESULT.replace(" so what do you think",
                                                     " So what do you think?")


def test_segments_of_a_stream_are_one_text_with_word_times():
    lines = [_segment(0, 0.0, ["so", "what", "do", "you"]), _segment(1, 4.0, ["think", "now"])]
    content = "".join(json.dumps(line) + "\n" for line in lines)
    transcript = formats.loads(content, "auto", name="stream.jsonl")
    assert [(t.start, t.end) for t in transcript.tokens] == [
        (0.0, 0.25), (0.5, 0.75), (1.0, 1.25), (1.5, 1.75), (4.0, 4.25), (4.5, 4.75)]
    restored, punctuator = _restored(content, "So what do you think now?", "stream.jsonl")
    assert punctuator.calls == [["so", "what", "do", "you", "think", "now"]]  # one text
    assert [json.loads(line)["text"] for line in formats.dumps(restored).splitlines()] == [
        "So what do you", "think now?"]
    srt = formats.dumps(formats.convert(restored, "srt"))
    assert srt.startswith("1\n00:00:00,000 --> 00:00:01,750\nSo what do you\n")


def test_results_of_separate_files_are_separate_texts():
    content = json.dumps([{"text": "so what", "timestamps": [0.1], "tokens": [" so"]},
                          {"text": "and you", "timestamps": [0.1], "tokens": [" and"]}])
    restored, punctuator = _restored(content, "So what. And you.")
    assert punctuator.calls == [["so", "what"], ["and", "you"]]
    assert formats.dumps(formats.convert(restored, "text")) == "So what.\nAnd you.\n"
    with pytest.raises(ValueError, match="holds 2 results, each timed from its own start"):
        formats.convert(restored, "srt")


def test_tokens_that_do_not_spell_the_words_leave_them_untimed():
    record = {"text": "it costs 20 dollars", "tokens": [" it", " costs", " twenty", " dollars"],
              "timestamps": [0.0, 0.4, 0.8, 1.2], "durations": [0.3] * 4}  # (ITN's "20")
    transcript = formats.loads(json.dumps(record), "sherpa")
    assert all(t.start is None for t in transcript.tokens)
    assert (transcript.cues[0].start, transcript.cues[0].end) == (0.0, 1.5)


@pytest.mark.parametrize("record, message", [
    ({"text": "hi", "timestamps": [0.5, -1], "tokens": []}, r"timestamps\[1\]: expected "
     r"seconds .* got -1"),
    ({"text": "hi", "timestamps": "0.5", "tokens": []}, r"timestamps: expected a list"),
    ({"text": "hi", "timestamps": [0.5], "durations": [0.1, 0.2], "tokens": [" hi"]},
     r"durations: 2 durations for 1 timestamps"),
    ({"text": 5, "timestamps": [], "tokens": []}, r"text"),
    ({"text": "hi", "timestamps": [0.1], "tokens": [], "start_time": "x"}, r"start_time"),
    ({"text": "hi there", "timestamps": [2.0, 1.0], "tokens": []}, r"timestamps\[1\]: 1.0 "
     r"comes before the timestamp before it \(2.0\)")])
def test_malformed_results_get_a_one_line_error(record, message):
    with pytest.raises(ValueError, match=message) as error:
        formats.loads(json.dumps(record), "sherpa", name="r.json")
    assert "\n" not in str(error.value) and "r.json:1" in str(error.value)


def test_cli_restores_a_result_piped_in(tmp_path, capsys, monkeypatch, tiny_artifact):
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(RESULT.encode())))
    assert main(["restore", "-m", str(tiny_artifact)]) == 0
    out = capsys.readouterr().out
    record = json.loads(out)
    assert record["tokens"] == json.loads(RESULT)["tokens"]
    assert record["text"].lower().strip(" .?!,").replace(",", "") == "so what do you think"


def test_results_without_durations_last_a_word_past_their_last_token():
    one = '{"text": " yes", "tokens": [" yes"], "timestamps": [2.0], "durations": []}\n'
    srt = formats.dumps(formats.convert(formats.loads(one, "sherpa"), "srt"))
    assert "00:00:02,000 --> 00:00:02,400\nyes" in srt  # not a subtitle of 0 s
    lines = [{"text": "so", "tokens": [" so"], "timestamps": [0.0], "segment": 0,
              "start_time": 1.0},
             {"text": "what", "tokens": [" what"], "timestamps": [0.0], "segment": 1,
              "start_time": 1.2}]
    content = "".join(json.dumps(line) + "\n" for line in lines)
    assert [(c.start, c.end) for c in formats.loads(content, "sherpa").cues] == [
        (1.0, 1.2), (1.2, 1.6)]  # the first ends where the next segment starts
