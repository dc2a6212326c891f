"""Praat TextGrid files (`formats.textgrid`): read, restored, written back, converted."""

import io

import pytest
from test_formats import ScriptedPunctuator, _write

from punctum import formats
from punctum.cli import main
from punctum.runtime import RestoreOptions


def _long(tiers: list[tuple[str, list[tuple[float, float, str]]]], end: float = 3.0) -> str:
    """A TextGrid in Praat's long text form (a sample written for these tests)."""
    lines = ['File type = "ooTextFile"', 'Object class = "TextGrid"', "", "xmin = 0 ",
             f"xmax = {end:g} ", "tiers? <exists> ", f"size = {len(tiers)} ", "item []: "]
    for n, (name, intervals) in enumerate(tiers, start=1):
        lines += [f"    item [{n}]:", '        class = "IntervalTier" ',
                  f'        name = "{name}" ', "        xmin = 0 ", f"        xmax = {end:g} ",
                  f"        intervals: size = {len(intervals)} "]
        for k, (start, stop, text) in enumerate(intervals, start=1):
            quoted = text.replace('"', '""')
            lines += [f"        intervals [{k}]:", f"            xmin = {start:g} ",
                      f"            xmax = {stop:g} ", f'            text = "{quoted}" ']
    return "\n".join(lines) + "\n"


WORDS = [(0, 0.3, ""), (0.3, 0.6, "so"), (0.6, 0.9, "what"), (0.9, 1.2, "do"),
         (1.2, 1.5, "you"), (1.5, 2.0, "think"), (2.0, 2.4, "sil"), (2.4, 3.0, "<unk>")]
PHONES = [(0, 3.0, "S OW1 W AH1 T")]
ALIGNED = _long([("words", WORDS), ("phones", PHONES)])
SHORT = ('File type = "ooTextFile"\nObject class = "TextGrid"\n\n0\n2\n<exists>\n1\n'
         '"IntervalTier"\n"utterance"\n0\n2\n2\n0\n1\n"so what do you think\ni think"\n'
         '1\n2\n"it\'s ""great"" we met"\n')


def _restored(content: str, reference: str):
    punctuator = ScriptedPunctuator(reference)
    transcript = formats.loads(content, "auto", name="aligned.TextGrid")
    return formats.restore_transcript(transcript, punctuator, RestoreOptions()), punctuator


def test_the_words_tier_is_read_with_each_words_times(tmp_path):
    transcript = formats.loads(ALIGNED, "auto", name="aligned.TextGrid")
    assert transcript.format == "textgrid"
    assert [(t.text, t.start, t.end) for c in transcript.cues for t in c.tokens if t.text] == [
        ("so", 0.3, 0.6), ("what", 0.6, 0.9), ("do", 0.9, 1.2), ("you", 1.2, 1.5),
        ("think", 1.5, 2.0)]  # silences, "sil" and "<unk>" never reach the model
    assert formats.detect_format(_write(tmp_path, "a.TextGrid", ALIGNED)) == "textgrid"
    assert formats.sniff_format(ALIGNED) == "textgrid"
    assert formats.sniff_lines(io.StringIO(ALIGNED))[0] == "textgrid"
    assert formats.dumps(transcript) == ALIGNED


def test_only_the_changed_texts_are_written_and_other_tiers_stay():
    restored, punctuator = _restored(ALIGNED, "So, what do you think?")
    assert punctuator.calls == [["so", "what", "do", "you", "think"]]
    assert formats.dumps(restored) == ALIGNED.replace('"so"', '"So,"').replace(
        '"think"', '"think?"')


def test_the_short_form_with_quotes_and_line_breaks_in_texts():
    restored, _ = _restored(SHORT, 'So what do you think? I think it\'s "great". We met.')
    assert formats.dumps(restored) == SHORT.replace(
        '"so what do you think\ni think"', '"So what do you think?\nI think"').replace(
        '"it\'s ""great"" we met"', '"it\'s ""great"". We met."')


def test_each_speakers_word_tier_is_a_text_of_its_own():
    content = _long([("A - words", [(0, 1, "so"), (1, 2, "what")]),
                     ("A - phones", [(0, 2, "S OW1")]),
                     ("B - words", [(0.5, 1, "i"), (1, 2, "see")])])
    restored, punctuator = _restored(content, "So what? I see.")
    assert sorted(punctuator.calls) == [["i", "see"], ["so", "what"]]
    assert formats.dumps(formats.convert(restored, "text")) == "So what?\nI see.\n"
    assert formats.dumps(formats.convert(restored, "srt")) == (  # one timeline, by time,
        "1\n00:00:00,000 --> 00:00:01,000\n[A]: So\n\n"  # each speaker labelled where the
        "2\n00:00:00,500 --> 00:00:01,000\n[B]: I\n\n"  # speaker changes
        "3\n00:00:01,000 --> 00:00:02,000\n[A]: what?\n\n"
        "4\n00:00:01,000 --> 00:00:02,000\n[B]: see.\n")


@pytest.mark.parametrize("names, chosen", [
    (["phones", "transcript", "notes"], "transcript"), (["mine", "phones"], "mine"),
    (["PhonAlign", "TokensAlign"], "TokensAlign")])  # (SPPAS: phones first)
def test_a_tier_named_for_text_else_the_first_not_of_phones(names, chosen):
    content = _long([(name, [(0, 1, name)]) for name in names])
    transcript = formats.loads(content, "textgrid")
    assert [t.text for c in transcript.cues for t in c.tokens] == [chosen]


def test_each_speakers_utterance_tier_is_a_text_of_its_own_and_notes_stay():
    content = _long([("Ann", [(0, 1, "so what do you think"), (1, 3, "")]),
                     ("Bob", [(0, 1, ""), (1, 3, "i think it is great")]),
                     ("notes", [(0, 3, "two speakers overlap here")]),
                     ("syllables", [(0, 1, "so"), (1, 3, "what")])])
    restored, punctuator = _restored(content, "So what do you think? I think it is great.")
    assert sorted(punctuator.calls) == [["i", "think", "it", "is", "great"],
                                        ["so", "what", "do", "you", "think"]]
    written = formats.dumps(restored)
    assert '"So what do you think?"' in written and '"I think it is great."' in written
    assert '"two speakers overlap here"' in written and '"so"' in written


def test_a_tier_of_spaced_phone_symbols_is_not_one_of_utterances():
    content = _long([("ORT-MAU", [(0, 1, "so"), (1, 2, "thing")]),
                     ("KAN-MAU", [(0, 1, "s @U"), (1, 2, "T I N k")]),
                     ("MAU", [(0, 1, "s"), (1, 2, "@U")])])
    transcript = formats.loads(content, "textgrid")
    assert [t.text for c in transcript.cues for t in c.tokens] == ["so", "thing"]


def test_the_tier_named_by_text_key():
    transcript = formats.loads(ALIGNED, "textgrid", text_key="phones")
    assert [t.text for c in transcript.cues for t in c.tokens] == "S OW1 W AH1 T".split()
    with pytest.raises(ValueError, match="no interval tier named 'word'.*'words', 'phones'"):
        formats.loads(ALIGNED, "textgrid", text_key="word")


def test_point_tiers_comments_and_crlf_are_read_and_kept(tmp_path):
    content = ('File type = "ooTextFile"\r\nObject class = "TextGrid"\r\n\r\n0 ! start\r\n'
               '2\r\n<exists>\r\n2\r\n"TextTier"\r\n"events"\r\n0\r\n2\r\n1\r\n0.5\r\n'
               '"click"\r\n"IntervalTier"\r\n"words"\r\n0\r\n2\r\n1\r\n0\r\n2\r\n'
               '"so what"\r\n')
    path = tmp_path / "c.TextGrid"
    path.write_bytes(content.encode())
    transcript = formats.read(path)
    assert [t.text for c in transcript.cues for t in c.tokens] == ["so", "what"]
    restored = formats.restore_transcript(transcript, ScriptedPunctuator("So what?"))
    assert formats.dumps(restored).encode() == content.replace('"so what"',
                                                               '"So what?"').encode()


@pytest.mark.parametrize("content, message", [
    ('File type = "ooTextFile"\nObject class = "Pitch 1"\n', "not a Praat TextGrid"),
    (ALIGNED[:ALIGNED.index("intervals [3]")], "the file ends where"),
    (_long([("words", [(2, 1, "so")])]), r"aligned.TextGrid:\d+: the interval ends"),
    (ALIGNED.replace('"IntervalTier" \n        name = "phones"', '"Pitch" \n        name = '
                     '"phones"'), r":\d+: tier 'phones' is of class 'Pitch'"),
    (_long([("words", [(0, 1e12, "so")])]), r":\d+: an interval's xmax 1e\+12 is not a time "
     r"from 0 to 1e\+10"),
    (ALIGNED.replace("xmin = 0.3 ", 'xmin = "x" ', 1), r":\d+: expected an interval's xmin"),
    (ALIGNED.replace("size = 2 ", "size = 1e999 "), r":7: expected the number of tiers, got inf"),
    (ALIGNED.replace("size = 8 ", "size = nan "), r":14: 'nan' is not a number"),
    (ALIGNED.replace("size = 8 ", "size = -inf "), r":14: '-inf' is not a number"),
    (ALIGNED.replace("xmax = 0.6 ", "xmax = 1_0 "), r"'1_0' is not a number"),
    (ALIGNED + '        intervals [2]:\n            xmin = 3 \n            xmax = 4 \n', r":\d+: "
     r"values after the last tier \(do the tiers' sizes match"),
    (SHORT[:150], r"aligned.TextGrid:19: a string that is never closed"),
    (_long([("words", [(-1.5, 0.5, "so")])]), r"xmin -1.5 is not a time from 0")])
def test_malformed_textgrids_get_one_line_errors(content, message):
    with pytest.raises(ValueError, match=message) as error:
        formats.loads(content, "textgrid", name="aligned.TextGrid")
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_utf16_files_with_a_byte_order_mark_are_read(tmp_path, encoding):
    path = tmp_path / "praat.TextGrid"  # (Praat writes UTF-16 when a text is not ASCII)
    path.write_bytes((b"\xfe\xff" if encoding.endswith("be") else b"") +
                     ALIGNED.replace('"do"', '"dö"').encode(encoding))
    transcript = formats.read(path)
    assert transcript.format == "textgrid" and "dö" in [
        t.text for c in transcript.cues for t in c.tokens]
    srt = tmp_path / "win.srt"
    srt.write_bytes("1\n00:00:01,000 --> 00:00:02,000\ncafé\n".encode("utf-16"))
    assert formats.read(srt).cues[0].tokens[0].text == "café"
    (tmp_path / "bad.srt").write_bytes(b"\xff\xfe" + b"\x00\xd8")  # a lone surrogate
    with pytest.raises(ValueError, match="not valid UTF-16"):
        formats.read(tmp_path / "bad.srt")


def test_cli_restores_a_textgrid_and_converts_it(tmp_path, capsys, tiny_artifact):
    path = _write(tmp_path, "a.TextGrid", ALIGNED)
    assert main(["restore", "--model", str(tiny_artifact), "-i", str(path), "-o",
                 str(tmp_path / "out.TextGrid")]) == 0
    out = (tmp_path / "out.TextGrid").read_text().split("\n")
    changed = [n for n, (a, b) in enumerate(zip(ALIGNED.split("\n"), out)) if a != b]
    assert len(out) == len(ALIGNED.split("\n")) and changed  # the words' text lines alone
    assert all(out[n].startswith('            text = "') and n < ALIGNED.index("phones")
               for n in changed)
    assert main(["restore", "--model", str(tiny_artifact), "-i", str(path), "-o",
                 str(tmp_path / "x.srt")]) == 2 and "--to srt" in capsys.readouterr().err
    assert main(["restore", "--model", str(tiny_artifact), "-i", str(path), "--to", "srt"]) == 0
    assert capsys.readouterr().out.startswith("1\n00:00:00,300 --> 00:00:00,600\n")
