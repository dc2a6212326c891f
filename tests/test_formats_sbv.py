"""YouTube's SBV captions (`formats.subtitles`): read, restored, written back, converted."""

import io

import pytest
from test_formats import ScriptedPunctuator, _write

from punctum import formats
from punctum.cli import main
from punctum.runtime import RestoreOptions
from punctum.text import normalize

# A sample written for these tests: two cues, the first over two lines, a speaker change.
SBV = ("0:00:00.599,0:00:04.160\nso what do you think\ni think\n\n"
       "0:00:04.160,1:02:06.770\n>> it is great\n")


def _restored(content: str, reference: str):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, "auto", name="captions.sbv")
    return formats.restore_transcript(transcript, punctuator, RestoreOptions()), punctuator


def test_sbv_is_read_by_extension_content_and_pipe(tmp_path):
    transcript = formats.loads(SBV, "auto", name="captions.sbv")
    assert transcript.format == "sbv"
    assert [(c.start, c.end) for c in transcript.cues] == [(0.599, 4.16), (4.16, 3726.77)]
    assert formats.detect_format(_write(tmp_path, "c.sbv", SBV)) == "sbv"
    assert formats.sniff_format(SBV) == "sbv"
    assert formats.sniff_lines(io.StringIO(SBV))[0] == "sbv"


def test_written_back_as_read_with_only_marks_and_case_changed():
    unchanged = formats.loads(SBV, "sbv")
    assert formats.dumps(unchanged) == SBV
    restored, punctuator = _restored(SBV, "So what do you think? I think it is great.")
    assert punctuator.calls == [["so", "what", "do", "you", "think", "i", "think", "it", "is",
                                 "great"]]
    assert formats.dumps(restored) == (  # ">>": another speaker, so "think" ends a sentence
        "0:00:00.599,0:00:04.160\nSo what do you think?\nI think.\n\n"
        "0:00:04.160,1:02:06.770\n>> It is great.\n")


def test_converted_to_srt_keeps_the_cue_lines():
    restored, _ = _restored(SBV, "So what do you think? I think it is great.")
    assert formats.dumps(formats.convert(restored, "srt")) == (
        "1\n00:00:00,599 --> 00:00:04,160\nSo what do you think?\nI think.\n\n"
        "2\n00:00:04,160 --> 01:02:06,770\n>> It is great.\n")


@pytest.mark.parametrize("content, message", [
    ("0:00:01.000 0:00:02.000\nhello\n", r"captions.sbv:1: expected a timing line"),
    ("0:00:05.000,0:00:02.000\nhello\n", r"captions.sbv:1: cue ends before it starts"),
    ("0:00:01.000,0:00:02.000\nhello\n0:00:02.000,0:00:03.000\nthere\n", r":3: timing line "
     r"inside"),
    ("0:00:01.000,0:00:02.000\nhello\n\nnot a timing line\n", r":4: expected a timing line"),
    ("9" * 12 + ":00:00.000," + "9" * 12 + ":00:01.000\nhi\n", r":1: a time beyond 1e"),
    ("9" * 400 + ":00:00.000,0:00:01.000\nhi\n", r":1: expected a timing line")])
def test_malformed_sbv_gets_a_one_line_error_naming_the_line(content, message):
    with pytest.raises(ValueError, match=message) as error:
        formats.loads(content, "sbv", name="captions.sbv")
    assert "\n" not in str(error.value)


def test_cli_restores_an_sbv_file_in_place_of_its_format(tmp_path, capsys):
    path = _write(tmp_path, "c.sbv", SBV)
    assert main(["restore", "-i", str(path), "-o", str(tmp_path / "out.srt")]) == 2
    assert "--to srt" in capsys.readouterr().err  # an SBV written into a .srt: refused
    srt = _write(tmp_path, "c.srt", "1\n00:00:01,000 --> 00:00:02,000\nhi there\n")
    assert main(["restore", "-i", str(srt), "-o", str(tmp_path / "x.sbv")]) == 2
    err = capsys.readouterr().err  # (no --to sbv to suggest)
    assert "SBV is written from such input alone" in err and "--to sbv" not in err
    assert main(["restore", "-i", str(path), "-o", str(tmp_path / "out.sbv")]) == 0
    lines = (tmp_path / "out.sbv").read_text().split("\n")
    assert lines[0] == "0:00:00.599,0:00:04.160" and lines[4] == "0:00:04.160,1:02:06.770"
    assert normalize(" ".join(lines[1:3] + lines[5:])) == normalize(
        "so what do you think i think >> it is great")
