"""Kaldi CTM and text, pocketsphinx JSON and transformers-pipeline JSON (`formats.asr`)."""

import json
from pathlib import Path

import pytest
from test_formats import ScriptedPunctuator, _write

from punctum import formats
from punctum.cli import main
from punctum.runtime import Punctuator
from punctum.text import normalize

# Sample files written for these tests (not real ASR output).
CTM = """;; a hand-written CTM
utt1 A 0.00 0.30 so 0.98
utt1 A 0.30 0.20 what 0.91
utt1 A 0.50 0.20 do
utt1 A 0.70 0.20 you
utt1 A 0.90 0.35 think
utt2 A 2.00 0.10 <unk> 0.40
utt2 A 2.10 0.40 i 1.00
utt2  A 2.50 0.40 think
utt2 A 2.90 0.40 it\t0.7

utt3 A 4.00 0.40 is 1.00
utt3 A 4.40 0.40 great 1.00
"""

KALDI = "spk1-utt1 so what do you think\nspk1-utt2 i think it is great\n\nspk2-utt1   is great\n"


def _sphinx_word(word: str, start: float, duration: float = 0.3) -> str:
    return f'{{"b":{start:.3f},"d":{duration:.3f},"p":1.000,"t":"{word}"}}'


def _sphinx_line(words: list[str], start: float) -> str:
    entries = [_sphinx_word(w, start + 0.3 * k) for k, w in enumerate(words)]
    text = " ".join(w.split("(")[0] for w in words if not w.startswith(("<", "[")))
    return (f'{{"b":{start:.3f},"d":{0.3 * len(words):.3f},"p":0.500,"t":"{text}",'
            f'"w":[{",".join(entries)}]}}')


SPHINX = "\n".join([_sphinx_line(["<s>", "so", "what", "do(2)", "you", "think", "</s>"], 0.24),
                    _sphinx_line(["i", "think", "[NOISE]", "it", "is", "great"], 3.0)]) + "\n"


def _hf(words: list[str], start: float, spaced: bool) -> dict:
    chunks = [{"text": (" " if spaced else "") + w,
               "timestamp": [round(start + 0.5 * k, 2), round(start + 0.5 * k + 0.4, 2)]}
              for k, w in enumerate(words)]
    return {"text": ("" if spaced else " ").join(c["text"] for c in chunks), "chunks": chunks}


HF = _hf("so what do you think about it i think it is great".split(), 0.0, spaced=False)
HF_BATCH = [_hf("so what do you think about it".split(), 0.0, spaced=True),
            _hf("i think it is great".split(), 0.0, spaced=True)]

SAMPLES = {"ctm": ("decode.ctm", CTM), "sphinx": ("out.jsonl", SPHINX),
           "hf": ("asr.json", json.dumps(HF, indent=2) + "\n"),
           "hf-batch": ("batch.json", json.dumps(HF_BATCH)),
           "hf-empty-end": ("w.json", json.dumps({"text": " so what", "chunks": [
               {"text": " so what", "timestamp": [0.0, None]}]}))}
FORMAT_OF = {"ctm": "ctm", "sphinx": "sphinx", "hf": "hf", "hf-batch": "hf",
             "hf-empty-end": "hf"}
REFERENCE = "So, what do you think about it? I think it is great."
SHORT = "So, what do you think? I think it is great."


def _restored(content: str, format: str, reference: str = REFERENCE):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, format)
    return transcript, formats.restore_transcript(transcript, punctuator), punctuator


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_round_trip_is_byte_identical(tmp_path, sample):
    name, content = SAMPLES[sample]
    path = _write(tmp_path, name, content)
    assert formats.detect_format(path) == FORMAT_OF[sample]
    assert formats.dumps(formats.read(path)) == content


def test_kaldi_text_round_trip_and_lines_are_separate_texts(tmp_path):
    path = _write(tmp_path, "text", KALDI)
    assert formats.detect_format(path) == "text"  # looks like text: --format kaldi
    transcript = formats.read(path, "kaldi")
    assert formats.dumps(transcript) == KALDI
    assert [c.identifier for c in transcript.cues] == ["spk1-utt1", "spk1-utt2", "", "spk2-utt1"]
    _, restored, punctuator = _restored(KALDI, "kaldi", SHORT)
    assert punctuator.calls == ["so what do you think".split(), "i think it is great".split(),
                                ["is", "great"]]
    assert formats.dumps(restored) == ("spk1-utt1 So, what do you think?\n"
                                       "spk1-utt2 I think it is great.\n\n"
                                       "spk2-utt1   Is great.\n")


def test_ctm_keeps_every_field_and_skips_fillers():
    transcript, restored, punctuator = _restored(CTM, "ctm", SHORT)
    # each recording (or utterance) and channel is a text of its own, as lines of Kaldi text
    assert punctuator.calls == [["so", "what", "do", "you", "think"], ["i", "think", "it"],
                                ["is", "great"]]
    lines = formats.dumps(restored).split("\n")
    assert lines[1] == "utt1 A 0.00 0.30 So, 0.98"
    assert lines[5] == "utt1 A 0.90 0.35 think?"
    assert lines[6] == "utt2 A 2.00 0.10 <unk> 0.40"  # a filler never changes
    assert lines[8] == "utt2  A 2.50 0.40 think"
    assert lines[9] == "utt2 A 2.90 0.40 it.\t0.7" and lines[10] == ""
    assert lines[11] == "utt3 A 4.00 0.40 Is 1.00"
    assert lines[12] == "utt3 A 4.40 0.40 great. 1.00"
    assert formats.dumps(formats.convert(transcript, "text")) == (
        "so what do you think\ni think it\nis great\n")
    assert [(c.identifier, c.start, c.end) for c in transcript.cues if c.tokens] == [
        ("utt1 A", 0.0, 1.25), ("utt2 A", 2.0, 3.3), ("utt3 A", 4.0, 4.8)]


def test_ctm_channels_are_separate_texts_even_when_interleaved():
    ctm = ("call 1 0.0 0.3 so\ncall 2 0.2 0.3 i\ncall 1 0.4 0.3 what\ncall 2 0.6 0.3 think\n"
           "call 1 0.8 0.3 do\ncall 1 1.1 0.3 you\ncall 1 1.4 0.3 think\n"
           "call 2 1.5 0.3 it\ncall 2 1.8 0.3 is\ncall 2 2.1 0.3 great\n")
    transcript, restored, punctuator = _restored(ctm, "ctm", SHORT)
    assert punctuator.calls == ["so what do you think".split(), "i think it is great".split()]
    assert [line.split()[-1] for line in formats.dumps(restored).splitlines()] == [
        "So,", "I", "what", "think", "do", "you", "think?", "it", "is", "great."]
    assert formats.dumps(formats.convert(transcript, "text")) == (
        "so what do you think\ni think it is great\n")


def test_transformers_results_converted_to_text_keep_a_line_each():
    results = [_hf(["so", "what"], 0.0, True), {"text": "", "chunks": []},
               _hf(["yes"], 0.0, True)]
    content = "\n".join(json.dumps(r) for r in results) + "\n"
    text = formats.dumps(formats.convert(formats.loads(content, "hf"), "text"))
    assert text == "so what\n\nyes\n"


def test_sphinx_rebuilds_text_keeps_fillers_variants_and_numbers():
    _, restored, punctuator = _restored(SPHINX, "sphinx", SHORT)
    assert punctuator.calls == ["so what do you think i think it is great".split()]
    text = formats.dumps(restored)
    records = [json.loads(line) for line in text.splitlines()]
    assert records[0]["t"] == "So, what do you think?"
    assert records[1]["t"] == "I think it is great."
    assert [w["t"] for w in records[0]["w"]] == ["<s>", "So,", "what", "do(2)", "you",
                                                 "think?", "</s>"]
    assert [w["t"] for w in records[1]["w"]] == ["I", "think", "[NOISE]", "it", "is", "great."]
    assert '"b":3.000,"d":0.300,"p":1.000' in text  # pocketsphinx's three decimals


def test_hf_objects_are_separate_texts_and_text_is_rebuilt():
    _, restored, punctuator = _restored(json.dumps(HF_BATCH), "hf")
    assert punctuator.calls == ["so what do you think about it".split(),
                                "i think it is great".split()]
    out = json.loads(formats.dumps(restored))
    assert out[0]["text"] == " So, what do you think about it?"
    assert out[1]["text"] == " I think it is great."
    assert [c["timestamp"] for c in out[1]["chunks"]] == [c["timestamp"]
                                                          for c in HF_BATCH[1]["chunks"]]
    _, single, _ = _restored(json.dumps(HF), "hf")
    assert json.loads(formats.dumps(single))["text"] == REFERENCE


@pytest.mark.parametrize("to", ["srt", "vtt", "whisper"])
def test_a_batch_of_hf_results_is_no_one_timeline(to):
    batch = formats.loads(json.dumps(HF_BATCH), "hf")  # (each result timed from 0)
    with pytest.raises(ValueError, match="batch holds 2 results, each timed from its own"):
        formats.convert(batch, to)
    assert len(formats.convert(batch, "text").cues) == 2  # a line per result
    assert formats.convert(formats.loads(json.dumps(HF), "hf"), to).cues  # one result: fine


def test_a_control_character_inside_a_word_stays_there_and_splits_nothing():
    ctm = "utt1 A 0.00 0.30 so 0.99\nutt1 A 0.30 0.30 hel\x01lo 0.98\nutt1 A 0.60 0.30 there 0.97\n"
    _, restored, punctuator = _restored(ctm, "ctm", "So hello, there.")
    assert punctuator.calls == [["so", "hello", "there"]]
    assert formats.dumps(restored).splitlines()[1] == "utt1 A 0.30 0.30 hel\x01lo, 0.98"
    nemo = json.dumps({"pred_text": "so hel\u0000lo there"}) + "\n"
    _, restored, _ = _restored(nemo, "nemo", "So Hello there.")
    assert json.loads(formats.dumps(restored))["pred_text"] == "So Hel\x00lo there."


def test_hf_text_keeps_its_spacing_beside_a_chunk_of_whitespace():
    chunks = [{"text": " ", "timestamp": [0.0, 0.1]}] + [
        {"text": w, "timestamp": [i / 2, i / 2 + 0.4]} for i, w in
        enumerate(["so", "we", "go", "home", "now"], start=1)]
    _, restored, _ = _restored(json.dumps({"text": "so we go home now", "chunks": chunks}),
                               "hf", "So we go home now.")
    assert json.loads(formats.dumps(restored))["text"] == "So we go home now."


def test_a_chunk_without_an_end_is_given_one_and_keeps_its_null():
    chunks = [{"text": " so what", "timestamp": [0.0, 1.0]},
              {"text": " do", "timestamp": [1.2, None]},  # word-level, the next starts
              {"text": " you think", "timestamp": [1.5, None]}]  # the last: 0.4 s a word
    content = json.dumps({"text": "", "chunks": chunks})
    transcript = formats.loads(content, "hf")
    assert [(c.start, c.end) for c in transcript.cues] == [(0.0, 1.0), (1.2, 1.5), (1.5, 2.3)]
    assert transcript.cues[1].tokens[-1].end == 1.5
    restored = formats.restore_transcript(transcript, ScriptedPunctuator("So what do you think?"))
    assert [c["timestamp"] for c in json.loads(formats.dumps(restored))["chunks"]] == [
        [0.0, 1.0], [1.2, None], [1.5, None]]  # written back as the pipeline wrote them
    srt = formats.dumps(formats.convert(restored, "srt"))
    assert "00:00:01,500 --> 00:00:02,300" in srt


@pytest.mark.parametrize("sample", sorted(SAMPLES))
def test_tiny_model_changes_only_marks_and_case(tiny_artifact, sample):
    name, content = SAMPLES[sample]
    transcript = formats.loads(content, FORMAT_OF[sample], name)
    restored = formats.restore_transcript(transcript, Punctuator.load(tiny_artifact, threads=1))
    for old, new in zip(transcript.tokens, restored.tokens, strict=True):
        assert normalize(old.text) == normalize(new.text)
        assert (old.start, old.end, old.before, old.after) == (
            new.start, new.end, new.before, new.after)
    again = formats.loads(formats.dumps(restored), FORMAT_OF[sample], name)
    assert [normalize(t.text) for t in again.tokens] == [normalize(t.text)
                                                         for t in transcript.tokens]


def test_conversion_to_subtitles_and_text(tmp_path):
    words = []
    for sample in ("ctm", "sphinx", "hf"):
        transcript = formats.loads(SAMPLES[sample][1], sample)
        srt = formats.convert(transcript, "srt")
        assert all(c.start is not None and c.end >= c.start for c in srt.cues)
        words.append(normalize(formats.dumps(formats.convert(transcript, "text"))))
    assert words[0] == words[1] == "so what do you think i think it is great".split()
    with pytest.raises(ValueError, match=r"kaldi cue 1 of \d+ \(.*\) has no times"):
        formats.convert(formats.loads(KALDI, "kaldi"), "srt")


MALFORMED = [
    ("d.ctm", "utt1 A 0.00 0.30 so\nutt1 A x 0.30 what\n", "d.ctm:2: expected a CTM line"),
    ("d.ctm", "utt1 A 0.00 -1 so\n", "d.ctm:1: expected a CTM line"),
    ("s.jsonl", '{"t": "so", "w": [{"b": 0.1, "d": 0.2}]}\n', "s.jsonl:1: w[0]: no 't' key"),
    ("s.jsonl", '{"t": "so", "b": -1, "d": 1, "w": []}\n', "s.jsonl:1: b: expected a time"),
    ("h.json", '{"text": "a", "chunks": [{"text": "a", "timestamp": 3}]}',
     "h.json:1: chunks[0].timestamp: expected [start, end]"),
    ("h.json", '{"text": "a", "chunks": [{"text": "a", "timestamp": [1, "x"]}]}',
     "h.json:1: chunks[0].timestamp: expected [start, end]"),
    ("d.ctm", "utt1 A inf 0.30 so\n", "d.ctm:1: expected a CTM line"),
    ("d.ctm", "utt1 A 0.1 nan so\n", "d.ctm:1: expected a CTM line"),
    ("h.json", '{"text": "a", "chunks": [{"text": "a", "timestamp": [0, Infinity]}]}',
     "h.json:1: chunks[0].timestamp: expected [start, end] in seconds (numbers from 0 to 1e+10"),
    ("h.json", '{"text": "a", "chunks": [{"text": "a", "timestamp": [2, 1]}]}',
     "h.json:1: chunks[0].timestamp: the chunk ends (1) before it starts (2)"),
]


@pytest.mark.parametrize("name, content, message", MALFORMED)
def test_malformed_files_name_file_and_line(tmp_path, name, content, message):
    path = _write(tmp_path, name, content)
    with pytest.raises(ValueError) as error:
        formats.read(path, "ctm" if name.endswith(".ctm") else "auto")
    assert str(path) + message.removeprefix(name) in str(error.value)


def test_empty_files_give_empty_output():
    for format in ("ctm", "kaldi", "sphinx", "hf"):
        transcript = formats.loads("", format)
        assert transcript.cues == () and formats.dumps(transcript) == ""


def test_cli_restores_ctm_and_kaldi_text(tiny_artifact, tmp_path, capsys):
    ctm = _write(tmp_path, "decode.ctm", CTM)
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(ctm), "-o",
                 str(tmp_path / "out.ctm")]) == 0
    out = (tmp_path / "out.ctm").read_text().split("\n")
    assert len(out) == len(CTM.split("\n")) and "<unk> 0.40" in out[6]
    kaldi = _write(tmp_path, "text", KALDI)
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(kaldi), "--format",
                 "kaldi"]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert [line.split(" ")[0] for line in lines[:2]] == ["spk1-utt1", "spk1-utt2"]
    for to in ("srt", "json"):  # json would be Whisper's, whose segments need times
        assert main(["restore", "-m", str(tiny_artifact), "-i", str(kaldi), "--format",
                     "kaldi", "--to", to]) == 2
        assert "kaldi input has no timings" in capsys.readouterr().err


EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "formats"


@pytest.mark.parametrize("name, format", [
    ("decode.ctm", "ctm"), ("text", "kaldi"), ("sphinx.jsonl", "sphinx"), ("wav2vec2.json", "hf"),
    ("whispercpp.json", "whispercpp"), ("captions.sbv", "sbv"), ("aligned.TextGrid", "textgrid"),
    ("episode.ass", "ass"), ("sherpa.jsonl", "sherpa"), ("song.lrc", "lrc"),
    ("captions.ttml", "ttml"), ("interview.eaf", "eaf")])
def test_the_readme_examples_restore(tiny_artifact, capsys, name, format):
    path = EXAMPLES / name
    args = ["--format", "kaldi"] if format == "kaldi" else []
    assert formats.read(path, format if args else "auto").format == format
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(path), *args]) == 0
    restored = formats.loads(capsys.readouterr().out, format)
    original = formats.read(path, format)
    assert [normalize(t.text) for t in restored.tokens] == [normalize(t.text)
                                                            for t in original.tokens]


def test_cli_format_choices_are_the_formats():
    from punctum.cli import build_parser

    restore = build_parser()._subparsers._group_actions[0].choices["restore"]
    action = next(a for a in restore._actions if a.dest == "format")
    assert tuple(action.choices) == ("auto", *formats.FORMATS)


def test_fillers_in_kaldi_text_and_vosk_never_reach_the_model():
    from tests.test_formats import ScriptedPunctuator

    kaldi = formats.loads("utt4 [noise] so what <unk> do you think\nutt5 <sil>\n", "kaldi")
    punctuator = ScriptedPunctuator("So, what do you think?")
    restored = formats.restore_transcript(kaldi, punctuator)
    assert punctuator.calls == [["so", "what", "do", "you", "think"]]
    assert formats.dumps(restored) == "utt4 [noise] So, what <unk> do you think?\nutt5 <sil>\n"
    words = [{"word": w, "start": i, "end": i + 1, "conf": 1.0}
             for i, w in enumerate(["[noise]", "so", "what", "<unk>", "do", "you", "think"])]
    vosk = formats.loads(json.dumps({"result": words, "text": "x"}), "vosk")
    punctuator = ScriptedPunctuator("So, what do you think?")
    record = json.loads(formats.dumps(formats.restore_transcript(vosk, punctuator)))
    assert punctuator.calls == [["so", "what", "do", "you", "think"]]
    assert [w["word"] for w in record["result"]] == [
        "[noise]", "So,", "what", "<unk>", "do", "you", "think?"]
    assert record["text"] == "[noise] So, what <unk> do you think?"


def test_sphinx_numbers_keep_their_values_in_a_file_not_written_by_pocketsphinx():
    content = ('{"b":0.240,"d":2.780,"p":0.900,"t":"so what"}\n'
               '{"b":4.0,"d":1e-05,"p":0.5,"t":"hi there"}\n')
    written = formats.dumps(formats.loads(content, "sphinx"))
    assert [json.loads(line) for line in written.splitlines()] == [
        json.loads(line) for line in content.splitlines()]


def test_fillers_in_transformers_chunks_and_sphinx_text_stay_out_of_the_model():
    from tests.test_formats import ScriptedPunctuator

    hf = {"text": " <unk> so what [noise] do you think", "chunks": [
        {"text": " <unk> so what", "timestamp": [0.0, 1.0]},
        {"text": " [noise] do you think", "timestamp": [1.0, 2.0]}]}
    punctuator = ScriptedPunctuator("So, what do you think?")
    restored = formats.restore_transcript(formats.loads(json.dumps(hf), "hf"), punctuator)
    assert punctuator.calls == [["so", "what", "do", "you", "think"]]
    assert [c["text"] for c in json.loads(formats.dumps(restored))["chunks"]] == [
        " <unk> So, what", " [noise] do you think?"]
    sphinx = '{"b":0.000,"d":1.000,"p":1.000,"t":"<unk> so what do you think"}\n'
    punctuator = ScriptedPunctuator("So, what do you think?")
    restored = formats.restore_transcript(formats.loads(sphinx, "sphinx"), punctuator)
    assert json.loads(formats.dumps(restored))["t"] == "<unk> So, what do you think?"


def test_kaldi_text_converted_to_text_keeps_a_line_per_utterance():
    transcript = formats.loads("u1\nu2 so what\nu4  \n", "kaldi")
    assert formats.dumps(formats.convert(transcript, "text")) == "\nso what\n\n"



def test_whisperx_speakers_survive_text_output_and_a_second_restore(tiny_artifact, tmp_path,
                                                                   capsys):
    segments = [{"start": k, "end": k + 1, "text": " " + text, "speaker": speaker,
                 "words": [{"word": w, "start": k + i / 10, "end": k + i / 10 + 0.05,
                            "speaker": speaker} for i, w in enumerate(text.split())]}
                for k, (speaker, text) in enumerate([("SPEAKER_00", "so what do you think"),
                                                     ("SPEAKER_01", "i think it is great")])]
    source = _write(tmp_path, "talk.json", json.dumps({"segments": segments}))
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(source), "--to", "text",
                 "-o", str(tmp_path / "talk.txt")]) == 0
    text = (tmp_path / "talk.txt").read_text()
    lines = text.splitlines()
    assert [line.split(":")[0] for line in lines] == ["[SPEAKER_00]", "[SPEAKER_01]"]
    assert normalize(" ".join(line.split(": ", 1)[1] for line in lines)) == \
        "so what do you think i think it is great".split()
    assert main(["restore", "-m", str(tiny_artifact), "-i", str(tmp_path / "talk.txt")]) == 0
    assert capsys.readouterr().out == text  # the labels are read back as labels


def test_docs_formats_table_has_a_row_for_every_format():
    table = (EXAMPLES.parent.parent / "docs" / "FORMATS.md").read_text(encoding="utf-8")
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) - 1 == len(formats.FORMATS) - 1  # (a header; CSV and TSV share a row)
