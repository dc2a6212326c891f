"""LRC lyrics and timed transcripts (`formats.lrc`): read, restored, written back, converted."""

import io

import pytest
from test_formats import ScriptedPunctuator, _write

from punctum import formats
from punctum.cli import main
from punctum.runtime import RestoreOptions

# A file written for these tests: ID tags, a blank line, lines saved out of time order, a
# line with two time tags, enhanced LRC's word tags.
LRC = ("[ti:A walk in town]\n[ar:punctum]\n[length: 00:40]\n\n"
       "[00:01.00]so where are you going\n"
       "[00:04.50]<00:04.50>i think <00:05.20>we should go\n"
       "[00:12.00][00:30.00]it was raining\n"
       "[00:08.00]we met in town\n")


def _restored(content: str, reference: str):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, "auto", name="song.lrc")
    return formats.restore_transcript(transcript, punctuator, RestoreOptions()), punctuator


def test_lrc_is_read_by_extension_content_and_pipe(tmp_path):
    transcript = formats.loads(LRC, "auto", name="song.lrc")
    assert transcript.format == "lrc"
    assert [(c.start, c.end) for c in transcript.cues] == [  # in time order, each until the
        (1.0, 4.5), (4.5, 8.0), (8.0, 12.0), (12.0, 30.0), (30.0, 40.0)]  # next; the last
    # until the song's [length:]; the line sung at 12 s and 30 s is a cue at each
    assert formats.detect_format(_write(tmp_path, "s.lrc", LRC)) == "lrc"
    assert formats.detect_format(_write(tmp_path, "s.txt", LRC)) == "lrc"
    assert formats.sniff_lines(io.StringIO(LRC))[0] == "lrc"
    assert formats.sniff_format("[music] so what\n[laughs]\n") == "text"


def test_only_the_texts_after_the_tags_change():
    assert formats.dumps(formats.loads(LRC, "lrc")) == LRC
    restored, punctuator = _restored(
        LRC, "So where are you going? I think we should go. We met in town. It was raining. "
             "It was raining.")
    assert punctuator.calls == [["so", "where", "are", "you", "going", "i", "think", "we",
                                 "should", "go", "we", "met", "in", "town", "it", "was",
                                 "raining", "it", "was", "raining"]]
    assert formats.dumps(restored) == (
        "[ti:A walk in town]\n[ar:punctum]\n[length: 00:40]\n\n"
        "[00:01.00]So where are you going?\n"
        "[00:04.50]<00:04.50>I think <00:05.20>we should go.\n"
        "[00:12.00][00:30.00]It was raining.\n"
        "[00:08.00]We met in town.\n")
    srt = formats.dumps(formats.convert(restored, "srt"))
    assert srt.startswith("1\n00:00:01,000 --> 00:00:04,500\nSo where are you going?\n\n"
                          "2\n00:00:04,500 --> 00:00:08,000\nI think we should go.\n")


@pytest.mark.parametrize("line, message", [
    ("[00:61.00]hi", r"s.lrc:1: bad time tag '\[00:61.00\]'"),
    ("[" + "9" * 9 + ":00.00]hi", r"s.lrc:1: a time beyond 1e")])
def test_bad_time_tags_get_a_one_line_error(line, message):
    with pytest.raises(ValueError, match=message) as error:
        formats.loads(line + "\n", "lrc", name="s.lrc")
    assert "\n" not in str(error.value)


def test_cli_restores_lrc_and_refuses_to_write_it_from_srt(tmp_path, capsys):
    srt = _write(tmp_path, "c.srt", "1\n00:00:01,000 --> 00:00:02,000\nhi there\n")
    assert main(["restore", "-i", str(srt), "-o", str(tmp_path / "x.lrc")]) == 2
    assert "LRC is written from such input alone" in capsys.readouterr().err
    path = _write(tmp_path, "s.lrc", LRC)
    assert main(["restore", "-i", str(path), "-o", str(tmp_path / "out.lrc")]) == 0
    written = (tmp_path / "out.lrc").read_text()
    assert written.startswith("[ti:A walk in town]\n") and written.count("[") == LRC.count("[")


def test_an_empty_timed_line_ends_the_one_before_and_hours_are_not_lrc(tmp_path):
    lrc = "[00:12.00]so what\n[00:20.00]\n[00:22.00]see you\n[00:25.00]\n"
    restored, _ = _restored(lrc, "So what? See you.")
    assert formats.dumps(restored) == "[00:12.00]So what?\n[00:20.00]\n[00:22.00]See you.\n" \
                                      "[00:25.00]\n"
    assert formats.dumps(formats.convert(restored, "srt")) == (
        "1\n00:00:12,000 --> 00:00:20,000\nSo what?\n\n"
        "2\n00:00:22,000 --> 00:00:25,000\nSee you.\n")
    transcript_with_hours = "[00:01:23] so what\n[00:05:10] i think\n"
    assert formats.sniff_format(transcript_with_hours) == "text"
    assert formats.detect_format(_write(tmp_path, "t.txt", transcript_with_hours)) == "text"
