"""Cloud recognisers' JSON (`formats.deepgram`, `formats.assemblyai`, `formats.google_stt`):
read, restored into every place a word is listed, written back, converted."""

import io
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_formats import ScriptedPunctuator, _write
from test_formats_property import HashPunctuator

from punctum import formats
from punctum.cli import main
from punctum.runtime import RestoreOptions
from punctum.text import normalize

# Words written for these tests: (word, start, end) in seconds, two speakers.
FIRST = [("so", 0.08, 0.3), ("what", 0.3, 0.5), ("do", 0.5, 0.6), ("you", 0.6, 0.7),
         ("think", 0.7, 1.0)]
SECOND = [("i", 1.5, 1.6), ("think", 1.6, 1.9), ("it's", 1.9, 2.1), ("great", 2.1, 2.5)]
REFERENCE = "So what do you think? I think it's great."


def _restored(content: str, reference: str = REFERENCE, name: str = "result.json"):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, "auto", name=name)
    return formats.restore_transcript(transcript, punctuator, RestoreOptions()), punctuator


# ----------------------------------------------------------------------------- Deepgram

def _dg_words(words, speaker=None, **keys):
    return [{"word": w, "start": s, "end": e, "confidence": 0.99, **keys,
             **({} if speaker is None else {"speaker": speaker})} for w, s, e in words]


def _deepgram(channels, utterances=None) -> dict:
    results = {"channels": [{"alternatives": [{"transcript": " ".join(w["word"] for w in ws),
                                               "confidence": 0.98, "words": ws}]}
                            for ws in channels]}
    if utterances is not None:
        results["utterances"] = utterances
    return {"metadata": {"request_id": "r", "channels": len(channels)}, "results": results}


def _utterance(words, channel=0, speaker=0) -> dict:
    return {"start": words[0]["start"], "end": words[-1]["end"], "channel": channel,
            "transcript": " ".join(w["word"] for w in words), "words": words,
            "speaker": speaker}


def test_deepgram_is_read_by_its_keys_and_kept_byte_for_byte(tmp_path):
    content = json.dumps(_deepgram([_dg_words(FIRST + SECOND)]), indent=4) + "\n"
    transcript = formats.loads(content, "auto", name="call.json")
    assert transcript.format == "deepgram"
    assert [(t.text, t.start, t.end) for t in transcript.tokens][:2] == [
        ("so", 0.08, 0.3), ("what", 0.3, 0.5)]
    assert formats.dumps(transcript) == content
    assert formats.detect_format(_write(tmp_path, "call.json", content)) == "deepgram"
    assert formats.sniff_lines(io.StringIO(content))[0] == "deepgram"


def test_deepgram_words_get_punctuated_word_and_the_utterances_their_copies():
    first, second = _dg_words(FIRST, speaker=0), _dg_words(SECOND, speaker=1)
    content = json.dumps(_deepgram([first + second],
                                   [_utterance(first), _utterance(second, speaker=1)]))
    restored, punctuator = _restored(content)
    assert punctuator.calls == [["so", "what", "do", "you", "think", "i", "think", "it's",
                                 "great"]]
    out = json.loads(formats.dumps(restored))
    alternative = out["results"]["channels"][0]["alternatives"][0]
    assert alternative["transcript"] == REFERENCE
    assert [w["punctuated_word"] for w in alternative["words"]] == REFERENCE.split()
    assert [w["word"] for w in alternative["words"]] == [w for w, _, _ in FIRST + SECOND]
    assert all(list(w)[-1] == "punctuated_word" for w in alternative["words"])  # added last
    utterances = out["results"]["utterances"]
    assert [u["transcript"] for u in utterances] == ["So what do you think?",
                                                      "I think it's great."]
    assert [w["punctuated_word"] for w in utterances[1]["words"]] == [
        "I", "think", "it's", "great."]
    assert [(c.start, c.end) for c in restored.cues] == [(0.08, 1.0), (1.5, 2.5)]


def test_deepgram_speakers_end_sentences_and_become_labels():
    words = _dg_words(FIRST, speaker=0) + _dg_words(SECOND, speaker=1)
    restored, _ = _restored(json.dumps(_deepgram([words])),
                            "So what do you think I think it's great.")  # no mark at the turn
    assert [c.text for c in restored.cues] == ["So what do you think.", "I think it's great."]
    srt = formats.dumps(formats.convert(restored, "srt"))
    assert "[Speaker 0]: So what do you think." in srt and "[Speaker 1]: I think" in srt
    converted = json.loads(formats.dumps(formats.convert(restored, "whisper")))
    assert [s["speaker"] for s in converted["segments"]] == ["Speaker 0", "Speaker 1"]


def test_deepgram_channels_are_texts_of_their_own_on_one_timeline():
    content = json.dumps(_deepgram([_dg_words(FIRST), _dg_words(SECOND)]))
    restored, punctuator = _restored(content)
    assert punctuator.calls == [["so", "what", "do", "you", "think"],
                                ["i", "think", "it's", "great"]]
    srt = formats.dumps(formats.convert(restored, "srt"))
    assert srt.index("[Channel 0]: So what do you think?") < srt.index(
        "[Channel 1]: I think it's great.")


def test_deepgram_live_results_one_text_interim_ones_kept():
    def message(words, final):
        return {"type": "Results", "channel_index": [0, 1], "start": words[0][1],
                "is_final": final, "channel": {"alternatives": [
                    {"transcript": " ".join(w for w, _, _ in words), "confidence": 0.9,
                     "words": _dg_words(words)}]}}
    lines = [message(FIRST[:2], False), message(FIRST, True), message(SECOND, True),
             {"type": "UtteranceEnd", "channel": [0, 1], "last_word_end": 2.5}]
    content = "".join(json.dumps(line) + "\n" for line in lines)
    restored, punctuator = _restored(content, name="live.jsonl")
    assert restored.format == "deepgram"
    assert len(punctuator.calls) == 1  # the final results, one text
    out = [json.loads(line) for line in formats.dumps(restored).splitlines()]
    assert out[0] == lines[0] and out[3] == lines[3]  # interim and other messages as read
    assert [m["channel"]["alternatives"][0]["transcript"] for m in out[1:3]] == [
        "So what do you think?", "I think it's great."]


def test_deepgram_transcript_without_words_is_restored_as_text():
    content = json.dumps(_deepgram([[]]) | {"results": {"channels": [{"alternatives": [
        {"transcript": "so what do you think i think it's great", "words": []}]}]}})
    restored, _ = _restored(content)
    out = json.loads(formats.dumps(restored))
    assert out["results"]["channels"][0]["alternatives"][0]["transcript"] == REFERENCE
    with pytest.raises(ValueError, match="has no times"):
        formats.convert(restored, "srt")


# ----------------------------------------------------------------------------- AssemblyAI

def _aai_words(words, speaker=None):
    return [{"text": w, "start": round(s * 1000), "end": round(e * 1000), "confidence": 0.99,
             "speaker": speaker} for w, s, e in words]


def _assemblyai(words, utterances=None) -> dict:
    return {"id": "t", "status": "completed", "audio_url": "https://example.com/a.mp3",
            "text": " ".join(w["text"] for w in words), "words": words,
            "utterances": utterances, "punctuate": False}


def test_assemblyai_words_texts_and_utterances_restored_times_in_milliseconds(tmp_path):
    first, second = _aai_words(FIRST, "A"), _aai_words(SECOND, "B")
    utterances = [{"speaker": s, "text": " ".join(w["text"] for w in ws), "start":
                   ws[0]["start"], "end": ws[-1]["end"], "confidence": 0.9, "words": ws}
                  for s, ws in (("A", first), ("B", second))]
    content = json.dumps(_assemblyai(first + second, utterances), indent=2) + "\n"
    transcript = formats.loads(content, "auto", name="t.json")
    assert transcript.format == "assemblyai" and formats.dumps(transcript) == content
    assert [(c.start, c.end, c.extra) for c in transcript.cues] == [
        (0.08, 1.0, {"speaker": "Speaker A"}), (1.5, 2.5, {"speaker": "Speaker B"})]
    restored, _ = _restored(content)
    out = json.loads(formats.dumps(restored))
    assert out["text"] == REFERENCE
    assert [w["text"] for w in out["words"]] == REFERENCE.split()
    assert [u["text"] for u in out["utterances"]] == ["So what do you think?",
                                                       "I think it's great."]
    assert [w["text"] for w in out["utterances"][0]["words"]][-1] == "think?"
    assert [w["start"] for w in out["words"]] == [w["start"] for w in first + second]
    vtt = formats.dumps(formats.convert(restored, "vtt"))
    assert "<v Speaker A>So what do you think?" in vtt


def test_assemblyai_sentences_are_cues():
    content = json.dumps({"sentences": [
        {"text": " ".join(w for w, _, _ in ws), "start": 0, "end": 1, "confidence": 0.9,
         "words": _aai_words(ws), "speaker": None} for ws in (FIRST, SECOND)],
        "id": "t", "confidence": 0.9, "audio_duration": 3})
    restored, punctuator = _restored(content, name="sentences.json")
    assert restored.format == "assemblyai" and len(punctuator.calls) == 1
    out = json.loads(formats.dumps(restored))
    assert [s["text"] for s in out["sentences"]] == ["So what do you think?",
                                                      "I think it's great."]


def test_separate_transcripts_are_separate_texts_not_one_timeline():
    content = "".join(json.dumps(_assemblyai(_aai_words(ws))) + "\n" for ws in (FIRST, SECOND))
    restored, punctuator = _restored(content, name="batch.jsonl")
    assert len(punctuator.calls) == 2
    with pytest.raises(ValueError, match="one timeline"):
        formats.convert(restored, "srt")
    assert formats.dumps(formats.convert(restored, "text")) == (
        "So what do you think?\nI think it's great.\n")


# ----------------------------------------------------------------------------- Google

def _google_words(words, time=lambda s: f"{s:.3f}s", **keys):
    return [{"startTime": time(s), "endTime": time(e), "word": w, **keys} for w, s, e in words]


def _result(words, transcript=None, end=None, **keys) -> dict:
    alternative = {"transcript": transcript if transcript is not None else
                   " ".join(w["word"] for w in words), "confidence": 0.9}
    if words:
        alternative["words"] = words
    result = {"alternatives": [alternative], **keys, "languageCode": "en-us"}
    if end is not None:
        result["resultEndTime"] = end
    return result


def test_google_results_are_cues_with_their_leading_space_kept(tmp_path):
    content = json.dumps({"results": [
        _result(_google_words(FIRST), end="1.100s"),
        _result(_google_words(SECOND), transcript=" i think it's great", end="2.600s")],
        "totalBilledTime": "3s"})
    transcript = formats.loads(content, "auto", name="g.json")
    assert transcript.format == "google" and formats.dumps(transcript) == content
    assert formats.detect_format(_write(tmp_path, "g.json", content)) == "google"
    restored, punctuator = _restored(content)
    assert len(punctuator.calls) == 1
    out = json.loads(formats.dumps(restored))
    assert [r["alternatives"][0]["transcript"] for r in out["results"]] == [
        "So what do you think?", " I think it's great."]
    assert [w["word"] for w in out["results"][1]["alternatives"][0]["words"]] == [
        "I", "think", "it's", "great."]


@pytest.mark.parametrize("time", [
    lambda s: f"{s:.3f}s",  # v1 REST
    lambda s: s,  # seconds as numbers
    lambda s: {"seconds": str(int(s)), "nanos": round((s - int(s)) * 1e9)}])
def test_google_times_in_every_written_form(time):
    content = json.dumps({"results": [_result(_google_words(FIRST, time))]})
    transcript = formats.loads(content, "google")
    assert [(t.start, t.end) for t in transcript.tokens] == [(s, e) for _, s, e in FIRST]


def test_google_v2_names_and_an_operation_response():
    words = [{"startOffset": f"{s}s", "endOffset": f"{e}s", "word": w} for w, s, e in FIRST]
    content = json.dumps({"name": "op", "done": True, "response": {
        "@type": "type.googleapis.com/google.cloud.speech.v1.LongRunningRecognizeResponse",
        "results": [{"alternatives": [{"transcript": "so what do you think",
                                       "words": words}], "resultEndOffset": "1.1s"}]}})
    restored, _ = _restored(content, "So what do you think?")
    assert restored.format == "google"
    out = json.loads(formats.dumps(restored))
    assert out["response"]["results"][0]["alternatives"][0]["transcript"] == (
        "So what do you think?")


def test_google_diarised_repeats_are_copies_and_their_speakers_cut_sentences():
    first, second = _google_words(FIRST), _google_words(SECOND)
    tagged = [dict(w, speakerTag=1) for w in first] + [dict(w, speakerTag=2) for w in second]
    content = json.dumps({"results": [_result(first), _result(second),
                                      _result(tagged, transcript="")]})
    restored, punctuator = _restored(content, "So what do you think I think it's great.")
    assert len(punctuator.calls[0]) == 9  # each word once
    out = json.loads(formats.dumps(restored))
    assert [w["word"] for w in out["results"][2]["alternatives"][0]["words"]] == [
        "So", "what", "do", "you", "think.", "I", "think", "it's", "great."]
    assert out["results"][2]["alternatives"][0]["transcript"] == ""
    assert [c.extra for c in restored.cues] == [{"speaker": "Speaker 1"},
                                                {"speaker": "Speaker 2"}]


def test_google_results_without_words_are_timed_by_their_ends():
    content = json.dumps({"results": [_result([], "so what do you think", "1.100s"),
                                      _result([], " i think it's great", "2.600s")]})
    restored, _ = _restored(content)
    assert [(c.start, c.end, c.text) for c in restored.cues] == [
        (0.0, 1.1, "So what do you think?"), (1.1, 2.6, " I think it's great.")]
    srt = formats.dumps(formats.convert(restored, "srt"))
    assert "00:00:01,100 --> 00:00:02,600\nI think it's great." in srt


def test_google_streaming_lines_interim_results_kept():
    lines = [{"results": [_result(_google_words(FIRST[:2]), isFinal=False, stability=0.1)]},
             {"results": [_result(_google_words(FIRST), isFinal=True)]},
             {"results": [_result(_google_words(SECOND), isFinal=True)]}]
    content = "".join(json.dumps(line) + "\n" for line in lines)
    restored, punctuator = _restored(content, name="stream.jsonl")
    assert len(punctuator.calls) == 1
    out = [json.loads(line) for line in formats.dumps(restored).splitlines()]
    assert out[0] == lines[0]
    assert out[2]["results"][0]["alternatives"][0]["transcript"] == "I think it's great."


# ----------------------------------------------------------------------------- errors, CLI

@pytest.mark.parametrize("content, message", [
    ('{"results": {"channels": [{"alternatives": [{"words": [{"word": "so", "start": -1, '
     '"end": 1}]}]}]}}', "results.channels[0].alternatives[0].words[0].start: expected a time"),
    ('{"results": {"channels": [{"alternatives": "no"}]}}',
     "results.channels[0].alternatives: expected a list"),
    ('{"text": "so", "audio_url": "x", "words": [{"text": "so", "start": 0}]}',
     "words[0].end: expected a time"),
    ('{"results": [{"alternatives": [{"words": [{"word": "so", "startTime": "1 s", '
     '"endTime": "2s"}]}]}]}', "startTime: expected a duration"),
    ('{"results": [{"alternatives": [{"words": [{"startTime": "1s"}]}]}]}', "no 'word' key")])
def test_malformed_results_get_one_line_errors_naming_the_place(content, message):
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        formats.loads(content, name="r.json")
    assert "\n" not in str(error.value) and str(error.value).startswith("r.json:")


@pytest.mark.parametrize("name", ["deepgram.json", "assemblyai.json", "google.json",
                                  "watson.json"])
def test_cli_restores_and_converts_the_examples(tiny_artifact, tmp_path, name):
    from test_formats_asr import EXAMPLES

    out = tmp_path / name
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(EXAMPLES / name),
                 "-o", str(out)]) == 0
    original, restored = formats.read(EXAMPLES / name), formats.read(out)
    assert restored.format == original.format
    assert [(t.start, t.end) for t in restored.tokens] == [
        (t.start, t.end) for t in original.tokens]
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(EXAMPLES / name),
                 "--to", "srt", "-o", str(tmp_path / "out.srt")]) == 0
    assert formats.read(tmp_path / "out.srt").cues


# ----------------------------------------------------------------------------- properties

_PARTS = st.lists(st.tuples(st.lists(st.sampled_from(
    ["so", "what", "do", "you", "think", "i", "new", "york", "it's", "okay", "a.m.", "5",
     "[noise]"]), min_size=1, max_size=5), st.integers(0, 2)), min_size=1, max_size=5)


def _timed(parts):
    """(words with their times and speaker) per part, a second apart."""
    out, t = [], 0.0
    for words, speaker in parts:
        out.append([(w, round(t + 0.3 * k, 3), round(t + 0.3 * k + 0.2, 3), speaker)
                    for k, w in enumerate(words)])
        t += 0.3 * len(words) + 1
    return out


def _deepgram_of(parts) -> str:
    said = [[{"word": w, "start": s, "end": e, "speaker": sp} for w, s, e, sp in p]
            for p in _timed(parts)]
    return json.dumps(_deepgram([[w for p in said for w in p]], [
        _utterance(p, speaker=p[0]["speaker"]) for p in said]))


def _assemblyai_of(parts) -> str:
    said = [[{"text": w, "start": round(s * 1000), "end": round(e * 1000), "speaker": "AB"[
        sp % 2]} for w, s, e, sp in p] for p in _timed(parts)]
    utterances = [{"speaker": p[0]["speaker"], "text": " ".join(w["text"] for w in p),
                   "words": p} for p in said]
    return json.dumps(_assemblyai([w for p in said for w in p], utterances))


def _google_of(parts) -> str:
    said = [[{"startTime": f"{s}s", "endTime": f"{e}s", "word": w, "speakerTag": sp + 1}
             for w, s, e, sp in p] for p in _timed(parts)]
    results = [_result(p, transcript=(" " if i else "") + " ".join(w["word"] for w in p))
               for i, p in enumerate(said)]
    results.append(_result([w for p in said for w in p], transcript=""))  # diarised repeats
    return json.dumps({"results": results})


@settings(max_examples=40)
@given(parts=_PARTS, make=st.sampled_from([_deepgram_of, _assemblyai_of, _google_of]))
def test_every_listing_of_a_word_keeps_it_and_its_times(parts, make):
    document = make(parts)
    original = formats.loads(document, "auto")
    assert formats.dumps(original) == document
    restored = formats.restore_transcript(original, HashPunctuator(""), RestoreOptions())
    out = formats.dumps(restored)
    again = formats.loads(out, original.format)
    assert [(t.start, t.end) for t in again.tokens] == [(t.start, t.end)
                                                        for t in original.tokens]
    assert normalize(" ".join(t.text for t in again.tokens)) == normalize(
        " ".join(t.text for t in original.tokens))
    words = {"deepgram": "punctuated_word", "assemblyai": "text", "google": "word"}[
        original.format]
    listed = [v for v in _records(json.loads(out)) if words in v and "words" not in v and (
        "start" in v or "startTime" in v)]  # word records, not transcripts or utterances
    by_time: dict = {}
    for record in listed:  # each listing of a word (original or copy) says the same
        key = tuple(record.get(k) for k in ("start", "startTime"))
        by_time.setdefault(key, set()).add(record[words])
    assert all(len(texts) == 1 for texts in by_time.values())


def _records(value):
    if isinstance(value, dict):
        yield value
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            yield from _records(item)


@pytest.mark.parametrize("content, service", [
    ('{"jobName": "j", "results": {"transcripts": [{"transcript": "Hi."}], "items": []}}',
     "Amazon Transcribe"),
    ('{"source": "a.wav", "combinedRecognizedPhrases": [], "recognizedPhrases": []}',
     "Azure Speech"),
    ('{"monologues": [{"speaker": 0, "elements": []}]}', "Rev.ai"),
    ('{"format": "2.9", "results": [{"type": "word", "start_time": 0.1}]}', "Speechmatics")])
def test_services_that_punctuate_themselves_are_named_not_guessed(content, service):
    with pytest.raises(ValueError, match=f"r.json:1: {service} JSON is not a format") as error:
        formats.loads(content, name="r.json")
    assert "\n" not in str(error.value)


# ----------------------------------------------------------------------------- review findings

@pytest.mark.parametrize("content, format, message", [
    ('{"results": {}}', "deepgram", "expected a Deepgram response"),
    ('{"type": "Results", "channel_index": [[0]], "channel": {"alternatives": [{"transcript": '
     '"so", "words": [{"word": "so", "start": 0, "end": 1}]}]}}', "auto",
     "channel_index[0]: expected a channel"),
    ('{"results": {"channels": [{"alternatives": [{"words": [{"word": "so", "start": 0, '
     '"end": 1}]}]}], "utterances": [{"channel": [0], "words": []}]}}', "auto",
     "utterances[0].channel: expected a channel"),
    ('{"text": "so", "words": [{"text": "so", "start": 0, "end": 1, "channel": [1]}]}', "auto",
     "words[0].channel: expected a channel"),
    ('{"results": [{"alternatives": [{"transcript": "so"}], "channelTag": []}]}', "auto",
     "results[0].channelTag: expected a channel")])
def test_channels_that_are_no_channel_are_one_line_errors(content, format, message):
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        formats.loads(content, format, name="r.json")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("content, service", [
    ('{"format": "2.9", "results": [{"type": "word", "start_time": 0.36, "end_time": 0.51, '
     '"alternatives": [{"content": "hello", "confidence": 1.0, "speaker": "S1"}]}]}',
     "Speechmatics"),
])
def test_lookalikes_of_google_are_named_not_read_as_it(content, service):
    with pytest.raises(ValueError, match=f"{service} JSON is not a format"):
        formats.loads(content, name="r.json")


def test_google_results_of_a_stream_without_is_final_are_interim():
    lines = [{"results": [_result([], "so what", stability=0.01)]},
             {"results": [_result(_google_words(FIRST), isFinal=True)]}]
    content = "".join(json.dumps(line) + "\n" for line in lines)
    restored, punctuator = _restored(content, "So what do you think?", name="s.jsonl")
    assert punctuator.calls == [["so", "what", "do", "you", "think"]]
    assert formats.dumps(restored).splitlines()[0] == json.dumps(lines[0])


def test_interleaved_channels_end_no_sentence_of_each_other():
    def word(text, ms, channel):
        return {"text": text, "start": ms, "end": ms + 100, "speaker": channel,
                "channel": channel}
    words = [word(w, 100 * k, "1") for k, w in enumerate(["so", "what", "do", "you"])] + [
        word("mhm", 400, "2")] + [word(w, 500 + 100 * k, "1") for k, w in enumerate(
            ["think", "about", "it"])] + [word(w, 1000 + 100 * k, "2") for k, w in enumerate(
                ["i", "like", "it"])]
    content = json.dumps(_assemblyai(words) | {"multichannel": True})

    class PerChannel(ScriptedPunctuator):
        def _predict(self, said):
            from punctum.text import parse
            self.reference = parse({"so what do you think about it": "So what do you think "
                                    "about it?", "mhm i like it": "Mhm, I like it."}[
                                        " ".join(said)], self.inventory)
            return super()._predict(said)

    transcript = formats.loads(content, "auto")
    restored = formats.restore_transcript(transcript, PerChannel(""), RestoreOptions())
    texts = [c.text for c in restored.cues]  # (the other channel's word cuts no cue)
    assert texts == ["So what do you think about it?", "Mhm, I like it."]
    srt = formats.dumps(formats.convert(restored, "srt"))
    assert "[Channel 1]: So what do you think" in srt and "[Channel 2]: Mhm," in srt


def test_channels_are_resegmented_on_one_timeline(tiny_artifact, tmp_path):
    path = _write(tmp_path, "stereo.json", json.dumps(_deepgram([_dg_words(FIRST),
                                                                  _dg_words(SECOND)])))
    out = tmp_path / "stereo.srt"
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(path), "--to", "srt",
                 "--resegment", "-o", str(out)]) == 0
    text = out.read_text()
    assert "[Channel 0]:" in text and "[Channel 1]:" in text


def test_untimed_google_words_said_twice_are_two_words():
    content = json.dumps({"results": [
        _result([{"word": "yes", "confidence": 0.9}]),
        _result([{"word": "yes", "confidence": 0.9}, {"word": "please", "confidence": 0.9}])]})
    restored, punctuator = _restored(content, "Yes. Yes, please.")
    assert punctuator.calls == [["yes", "yes", "please"]]


def test_google_diarised_words_after_results_of_transcripts_alone_are_read_once():
    first, second = _google_words(FIRST), _google_words(SECOND)
    tagged = [dict(w, speakerTag=1) for w in first] + [dict(w, speakerTag=2) for w in second]
    content = json.dumps({"results": [_result([], "so what do you think"),
                                      _result([], " i think it's great"),
                                      _result(tagged, transcript="")]})
    restored, punctuator = _restored(content, "So what do you think I think it's great.")
    assert punctuator.calls == [[w for w, _, _ in FIRST + SECOND]]
    out = json.loads(formats.dumps(restored))
    assert [r["alternatives"][0]["transcript"] for r in out["results"]] == [
        "So what do you think.", " I think it's great.", ""]
    assert formats.dumps(formats.convert(restored, "text")).count("think") == 2


def test_whitespace_around_a_word_is_kept():
    content = json.dumps(_deepgram([[{"word": "so ", "start": 0, "end": 1},
                                     {"word": "what", "start": 1, "end": 2}]]))
    assert formats.dumps(formats.loads(content, "auto")) == content
    restored, _ = _restored(content, "So what?")
    words = json.loads(formats.dumps(restored))["results"]["channels"][0]["alternatives"][0][
        "words"]
    assert [w["punctuated_word"] for w in words] == ["So ", "what?"]


@pytest.mark.parametrize("content", [
    '{"totalBilledTime": "2s", "requestId": "1"}',  # silence: protobuf's JSON has no results
    '{"speechEventType": "SPEECH_ACTIVITY_BEGIN"}\n{"results": [{"alternatives": '
    '[{"transcript": "so"}], "isFinal": true}]}\n'])
def test_google_responses_without_results_are_read(content):
    assert formats.loads(content, "auto", name="g.json").format == "google"


def test_google_v2_batch_results_per_file_are_recordings_of_their_own():
    content = json.dumps({"results": {
        "gs://b/a.wav": {"inlineResult": {"transcript": {"results": [
            _result(_google_words(FIRST))]}}},
        "gs://b/b.wav": {"transcript": {"results": [_result(_google_words(SECOND))]}}}})
    restored, punctuator = _restored(content, name="batch.json")
    assert restored.format == "google" and len(punctuator.calls) == 2
    out = json.loads(formats.dumps(restored))
    assert out["results"]["gs://b/b.wav"]["transcript"]["results"][0]["alternatives"][0][
        "transcript"] == "I think it's great."


def test_words_without_utterances_are_cut_into_cues_at_pauses():
    words = _dg_words(FIRST) + _dg_words([(w, s + 2.0, e + 2.0) for w, s, e in SECOND])
    transcript = formats.loads(json.dumps(_deepgram([words])), "auto")
    assert [(c.start, c.end) for c in transcript.cues] == [(0.08, 1.0), (3.5, 4.5)]


# ----------------------------------------------------------------------------- IBM Watson

def _watson(results, labels=None) -> dict:
    doc = {"result_index": 0, "results": [
        {"final": final, "alternatives": [
            {"transcript": " ".join(w for w, _, _ in words) + " ", "confidence": 0.9,
             "timestamps": [[w, s, e] for w, s, e in words],
             "word_confidence": [[w, 0.9] for w, _, _ in words]}]}
        for words, final in results]}
    if labels is not None:
        doc["speaker_labels"] = labels
    return doc


def test_watson_timestamps_word_confidence_and_transcript_restored(tmp_path):
    hesitation = [("%HESITATION", 1.1, 1.4)]
    content = json.dumps(_watson([(FIRST[:2], False), (FIRST, True),
                                  (hesitation + SECOND, True)]), indent=2) + "\n"
    transcript = formats.loads(content, "auto", name="w.json")
    assert transcript.format == "watson" and formats.dumps(transcript) == content
    assert formats.detect_format(_write(tmp_path, "w.json", content)) == "watson"
    restored, punctuator = _restored(content)
    assert punctuator.calls == [[w for w, _, _ in FIRST + SECOND]]  # no %HESITATION
    out = json.loads(formats.dumps(restored))
    assert out["results"][0] == json.loads(content)["results"][0]  # interim: as read
    final = out["results"][2]["alternatives"][0]
    assert final["transcript"] == "%HESITATION I think it's great. "
    assert [s[0] for s in final["timestamps"]] == [c[0] for c in final["word_confidence"]] == [
        "%HESITATION", "I", "think", "it's", "great."]
    assert [s[1:] for s in final["timestamps"]] == [[1.1, 1.4]] + [[s, e] for _, s, e in SECOND]


def test_watson_speaker_labels_end_sentences_and_become_labels():
    labels = [{"from": s, "to": e, "speaker": speaker, "confidence": 0.5, "final": False}
              for words, speaker in ((FIRST, 0), (SECOND, 1)) for _, s, e in words]
    content = json.dumps(_watson([(FIRST + SECOND, True)], labels))
    restored, _ = _restored(content, "So what do you think I think it's great.")
    assert [c.text for c in restored.cues] == ["So what do you think.", "I think it's great."]
    assert "[Speaker 1]: I think it's great." in formats.dumps(formats.convert(restored, "srt"))


def test_watson_malformed_timestamps_are_one_line_errors():
    content = '{"results": [{"final": true, "alternatives": [{"timestamps": [["so", 0]]}]}]}'
    with pytest.raises(ValueError, match=re.escape(
            "results[0].alternatives[0].timestamps[0]: expected [word, start, end]")):
        formats.loads(content, name="w.json")


def test_a_calls_channels_convert_to_text_as_a_conversation():
    first = _dg_words(FIRST[:4]) + _dg_words([("think", 3.0, 3.2)])
    second = _dg_words([("mhm", 1.5, 1.8)]) + _dg_words([(w, s + 3, e + 3) for w, s, e in
                                                         SECOND])

    class PerChannel(ScriptedPunctuator):
        def _predict(self, said):
            from punctum.text import parse
            self.reference = parse({"so what do you think": "So what do you think?",
                                    "mhm i think it's great": "Mhm, I think it's great."}[
                                        " ".join(said)], self.inventory)
            return super()._predict(said)

    transcript = formats.loads(json.dumps(_deepgram([first, second])), "auto")
    restored = formats.restore_transcript(transcript, PerChannel(""), RestoreOptions())
    assert formats.dumps(formats.convert(restored, "text")) == (
        "[Channel 0]: So what do you\n[Channel 1]: Mhm,\n[Channel 0]: think?\n"
        "[Channel 1]: I think it's great.\n")
    assert formats.dumps(formats.convert(restored, "text", speakers=False)) == (
        "So what do you think?\nMhm, I think it's great.\n")  # a line per channel


def test_assemblyai_real_time_finals_are_one_text_partials_kept():
    def message(kind, words):
        said = _aai_words(words)
        return {"message_type": kind, "audio_start": said[0]["start"], "text": " ".join(
            w["text"] for w in said), "words": said, "created": "2026-11-28T00:00:00"}
    lines = [message("PartialTranscript", FIRST[:2]), message("FinalTranscript", FIRST),
             message("FinalTranscript", SECOND)]
    content = "".join(json.dumps(line) + "\n" for line in lines)
    restored, punctuator = _restored(content, name="live.jsonl")
    assert restored.format == "assemblyai" and len(punctuator.calls) == 1
    out = [json.loads(line) for line in formats.dumps(restored).splitlines()]
    assert out[0] == lines[0] and [m["text"] for m in out[1:]] == [
        "So what do you think?", "I think it's great."]


def test_a_format_given_for_another_shape_is_an_error():
    with pytest.raises(ValueError, match="expected a Speech-to-Text response"):
        formats.loads(json.dumps(_deepgram([_dg_words(FIRST)])), "google", name="d.json")
    with pytest.raises(ValueError, match="ElevenLabs JSON is not a format"):
        formats.loads(json.dumps({"text": "Hi.", "words": [
            {"text": "Hi.", "type": "word", "start": 0.1, "end": 0.4},
            {"text": " ", "type": "spacing", "start": 0.4, "end": 0.5}]}), name="e.json")


def test_cjk_words_convert_without_spaces_between_them():
    words = [{"startTime": f"{k * 0.3:.1f}s", "endTime": f"{k * 0.3 + 0.2:.1f}s", "word": w}
             for k, w in enumerate(["你好", "世界"])]
    transcript = formats.loads(json.dumps({"results": [_result(words, "你好世界")]}), "google")
    assert formats.dumps(formats.convert(transcript, "text")) == "你好世界\n"


def test_google_aggregate_after_words_and_transcripts_reads_each_word_once():
    first, second = _google_words(FIRST), _google_words(SECOND)
    tagged = [dict(w, speakerTag=1) for w in first] + [dict(w, speakerTag=2) for w in second]
    content = json.dumps({"results": [_result(first), _result([], " i think it's great"),
                                      _result(tagged, transcript="")]})
    restored, punctuator = _restored(content)
    assert punctuator.calls == [[w for w, _, _ in FIRST + SECOND]]
    out = json.loads(formats.dumps(restored))
    assert out["results"][1]["alternatives"][0]["transcript"] == " I think it's great."


def test_google_words_that_repeat_nothing_said_are_read_as_new():
    content = json.dumps({"results": [_result([], "so what do you think"),
                                      _result(_google_words(SECOND), transcript="")]})
    restored, punctuator = _restored(content)
    assert punctuator.calls == [[w for w, _, _ in FIRST + SECOND]]
    assert "great." in formats.dumps(formats.convert(restored, "text"))


def test_watson_stream_labels_in_messages_of_their_own_name_speakers():
    labels = [{"from": s, "to": e, "speaker": speaker, "confidence": 0.5, "final": True}
              for words, speaker in ((FIRST, 0), (SECOND, 1)) for _, s, e in words]
    lines = [{"state": "listening"}, _watson([(FIRST + SECOND, True)]),
             {"speaker_labels": labels}]
    content = "".join(json.dumps(line) + "\n" for line in lines)
    transcript = formats.loads(content, "auto", name="ws.jsonl")
    assert transcript.format == "watson"
    assert [c.extra for c in transcript.cues] == [{"speaker": "Speaker 0"},
                                                  {"speaker": "Speaker 1"}]


def test_watson_jobs_and_silence_are_read():
    job = {"id": "j", "status": "completed", "results": [_watson([(FIRST, True)])]}
    restored, _ = _restored(json.dumps(job), "So what do you think?")
    out = json.loads(formats.dumps(restored))
    assert out["results"][0]["results"][0]["alternatives"][0]["transcript"] == (
        "So what do you think? ")
    silent = formats.loads('{"result_index": 0, "results": []}', "auto", name="s.json")
    assert silent.format == "watson" and not silent.cues


def test_a_turn_resumed_after_an_interjection_is_labelled_again(tiny_artifact, tmp_path):
    long = [(w, 0.3 * k, 0.3 * k + 0.2) for k, w in enumerate(
        "so the thing about the budget is that we need to look at every line of it and "
        "decide what stays".split())]
    path = _write(tmp_path, "call.json", json.dumps(_deepgram([
        _dg_words(long), _dg_words([("right", 1.0, 1.2), ("i", 1.3, 1.4),
                                    ("agree", 1.5, 1.8)])])))
    out = tmp_path / "call.srt"
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(path), "--to", "srt",
                 "--resegment", "--max-duration", "3", "-o", str(out)]) == 0
    cues = [block.splitlines()[2:] for block in out.read_text().strip().split("\n\n")]
    speakers = [line[1:line.index("]")] for cue in cues for line in cue[:1]
                if line.startswith("[Channel")]
    assert speakers[:3] == ["Channel 0", "Channel 1", "Channel 0"]  # labelled again
