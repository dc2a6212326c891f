"""ASS/SSA scripts (`formats.ass`): read, restored, written back, converted."""

import io

import pytest
from test_formats import ScriptedPunctuator, _write

from punctum import formats
from punctum.cli import main
from punctum.runtime import RestoreOptions
from punctum.text import normalize

# A script written for these tests: lines saved out of time order, a line break (\N), tags,
# a no-break space (\h), a Comment, a drawing and two speakers in the Name field.
HEAD = ("[Script Info]\n; written for punctum's tests\nScriptType: v4.00+\n\n"
        "[V4+ Styles]\nFormat: Name, Fontname, Fontsize\nStyle: Default,Arial,48\n\n"
        "[Events]\nFormat: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, "
        "Text\n")
ASS = HEAD + (
    "Dialogue: 0,0:00:01.00,0:00:03.50,Default,Ann,0,0,0,,so where are you going\\Ni think\n"
    "Dialogue: 0,0:00:07.00,0:00:09.00,Default,Ann,0,0,0,,{\\i1}it was rain{\\i0}ing all day\n"
    "Dialogue: 0,0:00:03.60,0:00:06.80,Default,Bob,0,0,0,,we met in town, yes\n"
    "Comment: 0,0:00:09.00,0:00:10.00,Default,,0,0,0,,note to self check this\n"
    "Dialogue: 1,0:00:00.00,0:00:10.00,Sign,,0,0,0,,{\\p1}m 0 0 l 100 0 100 100{\\p0}\n"
    "Dialogue: 0,0:00:09.10,0:00:11.00,Default,Bob,0,0,0,,{\\an8}thanks\\hfor that\n")
REFERENCE = ("So where are you going? I think. We met in town. Yes. It was raining all day. "
             "Thanks for that.")


def _restored(content: str, reference: str = REFERENCE):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, "auto", name="episode.ass")
    return formats.restore_transcript(transcript, punctuator, RestoreOptions()), punctuator


def test_ass_is_read_by_extension_content_and_pipe(tmp_path):
    transcript = formats.loads(ASS, "auto", name="episode.ass")
    assert transcript.format == "ass"
    assert [(c.start, c.end) for c in transcript.cues] == [  # in time order
        (0.0, 10.0), (1.0, 3.5), (3.6, 6.8), (7.0, 9.0), (9.1, 11.0)]
    assert formats.detect_format(_write(tmp_path, "e.ass", ASS)) == "ass"
    assert formats.detect_format(_write(tmp_path, "e.ssa", ASS)) == "ass"
    assert formats.detect_format(_write(tmp_path, "e.txt", ASS)) == "ass"
    assert formats.sniff_format("\ufeff" + ASS) == "ass"
    assert formats.sniff_lines(io.StringIO(ASS))[0] == "ass"


def test_written_back_as_read_with_only_dialogue_texts_changed():
    assert formats.dumps(formats.loads(ASS, "ass")) == ASS
    crlf = ASS.replace("\n", "\r\n")
    assert formats.dumps(formats.loads(crlf, "ass")) == crlf
    restored, punctuator = _restored(ASS)
    assert punctuator.calls == [["so", "where", "are", "you", "going", "i", "think", "we",
                                 "met", "in", "town", "yes", "it", "was", "raining", "all",
                                 "day", "thanks", "for", "that"]]  # time order; no drawing
    assert formats.dumps(restored) == HEAD + (
        "Dialogue: 0,0:00:01.00,0:00:03.50,Default,Ann,0,0,0,,So where are you going?\\NI "
        "think.\n"
        "Dialogue: 0,0:00:07.00,0:00:09.00,Default,Ann,0,0,0,,{\\i1}It was rain{\\i0}ing all "
        "day.\n"
        "Dialogue: 0,0:00:03.60,0:00:06.80,Default,Bob,0,0,0,,We met in town. Yes.\n"
        "Comment: 0,0:00:09.00,0:00:10.00,Default,,0,0,0,,note to self check this\n"
        "Dialogue: 1,0:00:00.00,0:00:10.00,Sign,,0,0,0,,{\\p1}m 0 0 l 100 0 100 100{\\p0}\n"
        "Dialogue: 0,0:00:09.10,0:00:11.00,Default,Bob,0,0,0,,{\\an8}Thanks\\hfor that.\n")


def test_a_change_of_name_ends_the_sentence():
    script = HEAD + ("Dialogue: 0,0:00:01.00,0:00:02.00,Default,Ann,0,0,0,,so where are you\n"
                     "Dialogue: 0,0:00:02.00,0:00:03.00,Default,Bob,0,0,0,,going home\n")
    restored, _ = _restored(script, "So where are you going home?")
    assert formats.dumps(restored).endswith(",,So where are you.\n"
                                            "Dialogue: 0,0:00:02.00,0:00:03.00,Default,Bob,0,"
                                            "0,0,,Going home?\n")


def test_converted_to_srt_and_text_with_line_breaks_and_speakers():
    restored, _ = _restored(ASS)
    assert formats.dumps(formats.convert(restored, "srt")) == (
        "1\n00:00:01,000 --> 00:00:03,500\n[Ann]: So where are you going?\nI think.\n\n"
        "2\n00:00:03,600 --> 00:00:06,800\n[Bob]: We met in town. Yes.\n\n"
        "3\n00:00:07,000 --> 00:00:09,000\n[Ann]: It was raining all day.\n\n"
        "4\n00:00:09,100 --> 00:00:11,000\n[Bob]: Thanks for that.\n")
    assert formats.dumps(formats.convert(restored, "text", speakers=False)) == (
        "So where are you going? I think. We met in town. Yes. It was raining all day. "
        "Thanks for that.\n")


def test_karaoke_syllables_are_one_word_and_an_unclosed_block_is_kept():
    script = HEAD + ("Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,{\\k20}hel{\\k15}lo "
                     "you {\\i1 so what\n")
    restored, punctuator = _restored(script, "Hello, you")
    assert punctuator.calls == [["hello", "you"]]
    assert formats.dumps(restored).endswith(",,{\\k20}Hel{\\k15}lo, you. {\\i1 so what\n")


def test_ssa_and_scripts_without_a_format_line():
    ssa = ("[Script Info]\nScriptType: v4.00\n\n[Events]\nFormat: Marked, Start, End, Style, "
           "Name, MarginL, MarginR, MarginV, Effect, Text\n"
           "Dialogue: Marked=0,0:00:01.5,0:00:02.25,Default,,0000,0000,0000,,hi there, you\n")
    transcript = formats.loads(ssa, "auto", name="old.ssa")
    assert [(c.start, c.end, c.text) for c in transcript.cues] == [  # (hundredths, as
        (1.05, 2.25, "hi there, you")]  # libass reads them: .5 is 0.05)
    bare = "[Script Info]\n\n[Events]\nDialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,a, b\n"
    assert [c.text for c in formats.loads(bare, "ass").cues] == ["a, b"]
    assert formats.loads("[Script Info]\nTitle: empty\n", "ass").cues == ()


@pytest.mark.parametrize("events, message", [
    ("Dialogue: 0,0:00:01.00,0:00:02.00,Default\n", r"e.ass:3: a Dialogue line with 4 of"),
    ("Dialogue: 0,1.00,0:00:02.00,Default,,0,0,0,,hi\n", r"e.ass:3: bad time '1.00'"),
    ("Dialogue: 0,0:00:61.00,0:00:62.00,Default,,0,0,0,,hi\n", r":3: bad time '0:00:61.00'"),
    ("Dialogue: 0,0:00:05.00,0:00:02.00,Default,,0,0,0,,hi\n", r":3: the line ends \(0:00:02"),
    ("Format: Start, End, Style\n", r"e.ass:3: expected a Format line naming Start, End"),
    ("Dialogue: 0,0:00:00.00," + "9" * 12 + ":00:00.00,Default,,0,0,0,,hi\n", r":3: a time "
     r"beyond 1e")])
def test_malformed_events_get_a_one_line_error_naming_the_line(events, message):
    with pytest.raises(ValueError, match=message) as error:
        formats.loads("[Script Info]\n[Events]\n" + events, "ass", name="e.ass")
    assert "\n" not in str(error.value)


def test_cli_restores_an_ass_file_and_refuses_to_write_one_from_srt(tmp_path, capsys):
    path = _write(tmp_path, "e.ass", ASS)
    srt = _write(tmp_path, "c.srt", "1\n00:00:01,000 --> 00:00:02,000\nhi there\n")
    assert main(["restore", "-i", str(srt), "-o", str(tmp_path / "x.ass")]) == 2
    assert "an ASS script is written from such input alone" in capsys.readouterr().err
    assert main(["restore", "-i", str(path), "--resegment"]) == 2
    assert "--to srt" in capsys.readouterr().err
    assert main(["restore", "-i", str(path), "-o", str(tmp_path / "out.ass")]) == 0
    written = (tmp_path / "out.ass").read_text()
    assert written.startswith(HEAD) and written.count("\n") == ASS.count("\n")
    def words(script: str) -> list[str]:
        return normalize(formats.dumps(formats.convert(formats.loads(script, "ass"), "text",
                                                       speakers=False)))

    assert words(written) == words(ASS) and len(words(ASS)) == 20


def test_labels_and_dashes_after_a_line_break_are_read_as_after_a_newline():
    script = HEAD + ("Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,JOHN: where are you "
                     "going\\NMARY: home\n"
                     "Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,- so what\\N- home\n")
    restored, punctuator = _restored(script, "Where are you going? Home? So what? Home.")
    assert punctuator.calls == [["where", "are", "you", "going", "home", "so", "what",
                                 "home"]]  # the labels never reach the model
    assert formats.dumps(restored).endswith(
        ",,JOHN: Where are you going?\\NMARY: Home?\n"
        "Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,- So what?\\N- Home.\n")


def test_a_script_opening_with_comments_or_at_its_events_is_told_apart():
    commented = "; made by hand\n;\n\n" + ASS
    assert formats.sniff_format(commented) == "ass"
    assert formats.sniff_lines(io.StringIO(commented))[0] == "ass"
    events = ASS[ASS.index("[Events]"):]
    assert formats.sniff_format(events) == "ass"
    assert formats.sniff_format("; a line of text\nand another\n") == "text"


@pytest.mark.parametrize("content", ["hello there\n", "1\n00:00:01,000 --> 00:00:02,000\nhi\n"])
def test_text_that_is_no_script_is_refused_as_one(content):
    with pytest.raises(ValueError, match="not an ASS or SSA script"):
        formats.loads(content, "ass", name="x")


def test_stacked_copies_are_restored_once_in_their_own_tags():
    script = HEAD + (
        "Dialogue: 0,0:00:01.00,0:00:02.00,Sign,,0,0,0,,{\\bord3}one week later\n"
        "Dialogue: 1,0:00:01.00,0:00:02.00,Sign,,0,0,0,,{\\bord0}one week later\n"
        "Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,<i>so</i> we met\n"
        "Dialogue: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,\n")
    restored, punctuator = _restored(script, "One week later. So we met.")
    assert punctuator.calls == [["one", "week", "later", "so", "we", "met"]]  # read once
    assert formats.dumps(restored) == HEAD + (
        "Dialogue: 0,0:00:01.00,0:00:02.00,Sign,,0,0,0,,{\\bord3}One week later.\n"
        "Dialogue: 1,0:00:01.00,0:00:02.00,Sign,,0,0,0,,{\\bord0}One week later.\n"
        "Dialogue: 0,0:00:03.00,0:00:04.00,Default,,0,0,0,,<i>So</i> we met.\n"
        "Dialogue: 0,0:00:05.00,0:00:06.00,Default,,0,0,0,,\n")
    srt = formats.dumps(formats.convert(restored, "srt"))  # one cue for the copies, none for
    assert srt.count(" --> ") == 2 and "One week later." in srt  # the empty line
