"""--paragraphs: text whose lines are segments of one text (a recogniser's segment a line)."""

import pytest
from test_formats import ScriptedPunctuator

from punctum import formats
from punctum.batch import _restore_paragraphs
from punctum.cli import main
from punctum.runtime import RestoreOptions
from punctum.text import normalize

# Written for these tests: a sentence cut across lines, a blank line, a second paragraph.
LINES = ["so what do you think about", "the new plan i think it is", "great", "",
         "hello there how are you"]
REFERENCE = "So what do you think about the new plan? I think it is great. Hello there. How " \
            "are you?"


def test_a_paragraph_is_one_text_and_its_line_breaks_stay():
    punctuator = ScriptedPunctuator(REFERENCE)
    out = list(formats.restore_paragraphs(punctuator, LINES, RestoreOptions()))
    assert out == ["So what do you think about", "the new plan? I think it is", "great.", "",
                   "Hello there. How are you?"]
    assert punctuator.calls == [normalize(" ".join(LINES[:3])), normalize(LINES[4])]
    each_line = ScriptedPunctuator(REFERENCE)  # a text transcript without --paragraphs
    formats.restore_transcript(formats.loads("\n".join(LINES) + "\n", "text"), each_line)
    assert len(each_line.calls) == 4  # each line a text of its own


def test_blank_and_empty_input_gives_blank_lines():
    punctuator = ScriptedPunctuator(REFERENCE)
    assert list(formats.restore_paragraphs(punctuator, ["", "  "], RestoreOptions())) == ["", ""]
    assert list(formats.restore_paragraphs(punctuator, [], RestoreOptions())) == []
    assert punctuator.calls == []


@pytest.mark.parametrize("chunk_words", [1, 4, 7, 1000])
def test_chunks_keep_every_line_and_cut_texts_only_at_a_chunk_end(chunk_words):
    punctuator = ScriptedPunctuator(REFERENCE)
    pieces = list(_restore_paragraphs(punctuator, LINES, RestoreOptions(), chunk_words))
    lines = "".join(pieces).split("\n")
    assert lines[-1] == "" and len(lines) == len(LINES) + 1
    assert [normalize(a) for a in lines[:-1]] == [normalize(b) for b in LINES]
    assert (len(pieces) == 1) == (chunk_words >= 1000)  # restored a chunk at a time
    called = [w for call in punctuator.calls for w in call]
    assert called == normalize(" ".join(LINES))  # every word to the model once, in order


def test_restore_cli_paragraphs(tiny_artifact, tmp_path, capsys):
    path = tmp_path / "segments.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    assert main(["restore", "-i", str(path), "--paragraphs", "-m", str(tiny_artifact)]) == 0
    out = capsys.readouterr().out.split("\n")
    assert len(out) == len(LINES) + 1 and out[3] == "" and out[-1] == ""
    assert [normalize(a) for a in out[:-1]] == [normalize(b) for b in LINES]
    for flags, said in ((["--json"], "--json"), (["--stream"], "--stream"),
                        (["--line-buffered"], "--line-buffered"), (["--to", "srt"], "--to srt")):
        assert main(["restore", "-i", str(path), "--paragraphs", *flags,
                     "-m", str(tiny_artifact)]) == 2
        assert f"it does not go with {said}" in capsys.readouterr().err
    srt = tmp_path / "a.srt"
    srt.write_text("1\n00:00:00,000 --> 00:00:01,000\nso\n", encoding="utf-8")
    assert main(["restore", "-i", str(srt), "--paragraphs", "-m", str(tiny_artifact)]) == 2
    assert "--paragraphs is for plain text input, not srt" in capsys.readouterr().err
