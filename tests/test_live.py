"""Live pipes: --line-buffered answers each line as it is read; --stream reads one stream
of words and writes each once its right context has arrived."""

import gzip
import io

import pytest

from punctum.batch import FileOptions, Source, restore_source
from punctum.cli import main
from punctum.runtime import Punctuator, RestoreOptions
from punctum.text import normalize


@pytest.fixture(scope="module")
def bundled():
    return Punctuator.load(threads=1)


class Recorder(io.StringIO):
    """An output that counts its flushes."""

    flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


def _lines_watched(lines, out: Recorder, seen: list):
    """`lines`, recording what `out` held when each line was asked for."""
    for line in lines:
        seen.append(out.getvalue())
        yield line


def test_line_buffered_writes_each_line_before_reading_the_next(bundled):
    lines = ["so what do you think", "i think it is great", "see you tomorrow"]
    for buffered, expected_before_third in [(True, 2), (False, 0)]:
        out, seen = Recorder(), []
        source = Source("<stdin>", "text", _lines_watched(lines, out, seen))
        restore_source(bundled, source, out, FileOptions(line_buffered=buffered))
        assert seen[2].count("\n") == expected_before_third
        assert normalize(out.getvalue()) == normalize(" ".join(lines))
        assert out.getvalue().count("\n") == 3 and (out.flushes >= 3) == buffered


def test_a_stream_keeps_every_word_and_writes_as_context_arrives(bundled):
    lines = ["so what do you think i think", "it is great and we should", "", "start now"]
    out, seen = Recorder(), []
    source = Source("<stdin>", "text", _lines_watched(lines, out, seen))
    restore_source(bundled, source, out, FileOptions(stream_lookahead=2))
    text = out.getvalue()
    assert normalize(text) == normalize(" ".join(lines))
    assert len(normalize(seen[1])) == 7 - 2  # 7 words fed, 2 wait for context
    assert text.endswith("\n") and "\n\n" not in text
    assert all(line[-1] in ".?!" for line in text.splitlines())  # a line per sentence
    assert text[0].isupper()


def test_a_stream_keeps_quotes_brackets_and_tokens_without_words(bundled):
    lines = ['he said ( laughs ) "no way" :) ok', "we go; now", ":)"]
    for keep in (False, True):
        out = io.StringIO()
        source = Source("<stdin>", "text", iter(lines))
        options = FileOptions(stream_lookahead=2, restore=RestoreOptions(keep_existing=keep))
        restore_source(bundled, source, out, options)
        text = out.getvalue()
        assert normalize(text) == normalize(" ".join(lines))
        assert [c for c in text if c in '()":'] == list('()"":):)')
        assert ("we go; now" in text.lower()) == keep  # kept as written, or the model's


def test_stream_options_are_checked(bundled, tmp_path, capsys):
    with pytest.raises(ValueError, match="stream_lookahead must be None or an int >= 0"):
        FileOptions(stream_lookahead=-1)
    with pytest.raises(ValueError, match="--stream restores plain text into plain text"):
        FileOptions(stream_lookahead=2).check("a.srt", "srt")
    assert main(["restore", "--lookahead", "2", "so what"]) == 2
    assert "--lookahead is for --stream" in capsys.readouterr().err
    assert main(["restore", "--stream", "--input-dir", str(tmp_path), "--output-dir",
                 str(tmp_path / "out")]) == 2
    assert "not --input-dir" in capsys.readouterr().err
    assert main(["restore", "--stream", "--lookahead", "0", "so what do you think"]) == 0
    assert normalize(capsys.readouterr().out) == ["so", "what", "do", "you", "think"]


def test_a_stream_in_a_language_without_spaces_keeps_the_spaces_latin_words_need(tmp_path):
    import json
    import shutil

    from punctum.text import get_inventory

    model = tmp_path / "zh"  # the bundled weights read with the Chinese inventory
    shutil.copytree(Punctuator.load().artifact.path, model)
    meta = json.loads((model / "punctum.json").read_text())
    meta["inventory"] = get_inventory("zh").to_dict()
    (model / "punctum.json").write_text(json.dumps(meta))
    out = Recorder()
    restore_source(Punctuator.load(model), Source("<stdin>", "text", iter(
        ["hello", "world", "foo bar"])), out, FileOptions(stream_lookahead=1))
    assert normalize(out.getvalue(), "zh") == ["hello", "world", "foo", "bar"]


def test_live_modes_refuse_what_they_cannot_write(capsys):
    with pytest.raises(ValueError, match="not --to json"):
        FileOptions(stream_lookahead=2, to="json").check("<stdin>", "text")
    with pytest.raises(ValueError, match="--line-buffered is for plain text input, not srt"):
        FileOptions(line_buffered=True).check("a.srt", "srt")
    assert main(["restore", "--stream", "--lookahead", "-1", "so"]) == 2
    assert "--lookahead must be None or an int >= 0" in capsys.readouterr().err


def test_an_input_already_punctuated_is_named_once(bundled, caplog, monkeypatch):
    import logging

    from punctum import batch
    from punctum.batch import note_punctuated
    from punctum.runtime import RestoreOptions

    monkeypatch.setattr(batch, "_warned", [])
    caplog.set_level(logging.INFO, logger="punctum.batch")
    punctuated = ["So, what do you think? I think it's great.",
                  "We met in New York last week, and it was raining. The museum was closed."]
    plain = [line.lower().replace(",", "").replace(".", "").replace("?", "")
             for line in punctuated]
    cut = ["yeah I I- I think that uh we- we went there and the food was- was great you know",
           "and uh- and then we we left about ten I- I guess"]  # dashes cut words: no marks
    assert note_punctuated("a.txt", punctuated, RestoreOptions())
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "a.txt: already punctuated" in caplog.text and "--keep-existing" in caplog.text
    assert note_punctuated("b.txt", [p.lower() for p in punctuated], RestoreOptions(case=False))
    assert [r.levelname for r in caplog.records] == ["WARNING", "INFO"]  # named once a run
    assert not note_punctuated("c.txt", plain, RestoreOptions())
    assert not note_punctuated("d.txt", cut, RestoreOptions())
    assert not note_punctuated("e.txt", punctuated, RestoreOptions(keep_existing=True))


def test_the_lines_looked_at_for_marks_are_restored_too(bundled):
    lines = ["So, what do you think? I think it's great."] * 3
    out = Recorder()
    restore_source(bundled, Source("<stdin>", "text", iter(lines)), out, FileOptions())
    assert normalize(out.getvalue()) == normalize(" ".join(lines))
    assert out.getvalue().count("\n") == 3


@pytest.mark.parametrize("lines, format", [
    (["1", "00:00:01,000 --> 00:00:02,000", "so what"], "srt"),
    (["00:00:01,000 --> 00:00:02,000", "so what"], "srt"),
    (["\ufeffWEBVTT", "", "00:01.000 --> 00:02.000", "so"], "vtt"),
    (["{", '  "text": "so what"', "}"], "vosk"),
    (['{"audio_filepath": "a.wav", "pred_text": "so"}'], "nemo"),
    (["u1 A 0.00 0.30 so", "u1 A 0.30 0.20 what"], "ctm"),
    ([";; made by a recogniser", ";; second comment", "u1 A 0.00 0.30 so",
      "u1 A 0.30 0.20 what"], "ctm"),
    ([";; not a CTM", "so what"], "text"),
    (["call 5 5 5 1 2 1 2"], "text"),  # CTM's fields, but no time in seconds
    (["utt A 0 1 hello", "utt A 1.0 0.5 there", "utt A 1.5 0.5 how"], "ctm"),
    (["1", "00:00:01.000 --> 00:00:02.000", "so what"], "srt"),  # a period before the ms
    (["", "so what do you think"], "text"),
    (['{"text": "so what",', '  "segments": []}'], "whisper"),  # an object over lines
    (["[1, 2]"], "text"),
    (["WEBVTT - a title", "", "00:01.000 --> 00:02.000", "so"], "vtt"),
    (["WEBVTT - a title", "Kind: captions", "", "00:01.000 --> 00:02.000", "so"], "vtt"),
    (["WEBVTT files hold captions", "yes they do"], "text"),  # a line of text
    (["[music] so what"], "text"),
    (["1", "so what"], "text"),
    ([], "text"),
])
def test_piped_input_is_told_apart_by_its_first_lines(lines, format):
    from punctum.formats import sniff_lines

    found, again = sniff_lines(iter(lines))
    assert found == format and list(again) == lines


def test_a_live_text_pipe_is_not_read_ahead():
    from punctum.formats import sniff_lines

    def pipe():
        yield "so what do you think"
        raise AssertionError("read past the first line")

    found, lines = sniff_lines(pipe())
    assert found == "text" and next(lines) == "so what do you think"


def test_subtitles_piped_into_restore_keep_their_timings(capsys, monkeypatch):
    import sys

    srt = "1\n00:00:01,000 --> 00:00:02,000\nso what do you think\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(srt.encode())))
    assert main(["restore"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("1\n00:00:01,000 --> 00:00:02,000\n")
    assert normalize(out.split("\n")[2]) == ["so", "what", "do", "you", "think"]


def test_subtitles_piped_in_keep_their_bom_and_line_endings_gzipped_too(capsys, monkeypatch):
    import sys

    srt = "\ufeff1\r\n00:00:01,000 --> 00:00:02,000\r\nso what\r\n"
    for data, given in [(srt.encode(), []), (gzip.compress(srt.encode()), []),
                        (srt.encode(), ["--format", "srt"])]:  # a pipe: a buffered reader
        piped = io.TextIOWrapper(io.BufferedReader(io.BytesIO(data)))
        monkeypatch.setattr(sys, "stdin", piped)
        assert main(["restore", *given]) == 0
        out = capsys.readouterr().out
        assert out.startswith("\ufeff1\r\n00:00:01,000 --> 00:00:02,000\r\n")
        assert out.endswith("\r\n")


@pytest.mark.parametrize("lines", [["so um", "... we went home"], ["hello", ",", "world"],
                                   ["we left", "<unk> .", "then we came"]])
def test_stream_without_lookahead_keeps_marks_that_open_a_line(bundled, lines):
    out = Recorder()
    options = FileOptions(restore=RestoreOptions(keep_existing=True), stream_lookahead=0)
    restore_source(bundled, Source("<stdin>", "text", iter(lines)), out, options)
    written = out.getvalue()
    assert normalize(written) == normalize(" ".join(lines))
    assert [t for t in written.split() if not any(c.isalnum() for c in t)] == [
        t for t in " ".join(lines).split() if not any(c.isalnum() for c in t)]


def test_text_whose_lines_start_with_utterance_ids_is_named_once(caplog, monkeypatch):
    from punctum import batch
    from punctum.batch import note_utterance_ids

    monkeypatch.setattr(batch, "_warned_ids", [])
    not_ids = [["2024 was a good year", "2023 was bad"],  # numbers alone
               ["covid-19 is over now", "covid-19 was bad"],  # the same token: no ids
               ["spk1-utt1 so what", "and then we left"], ["spk1-utt1 so what"],
               ["2024-01-05 we met", "2024-01-06 we left"], ["2019-20 was hard", "2020-21 too"]]
    assert not any(note_utterance_ids("a.txt", lines) for lines in not_ids)
    kaldi = ["spk1-utt1 so what do you think", "", "spk1-utt2 i think it is great",
             "spk1-utt3"]  # (an utterance with no words: its id alone)
    assert note_utterance_ids("text", kaldi) and "--format kaldi" in caplog.text
    assert not note_utterance_ids("text2", ["1272-128104-0000 hello", "1272-128104-0001 hi"])
    monkeypatch.setattr(batch, "_warned_ids", [])  # (named once a process)
    assert note_utterance_ids("text2", ["1272-128104-0000 hello", "1272-128104-0001 hi"])
