"""Roll-up captions (YouTube's automatic captions, broadcast roll-up): each word once."""

from test_formats import ScriptedPunctuator

from punctum import formats
from punctum.formats.rolling import repeated_tokens, without_repeats

# Written for these tests in the layout yt-dlp gives YouTube's automatic captions: each line
# comes again, alone, in a 10 ms cue, then first in the next cue (a line of one space marks
# the empty row of the two).
YOUTUBE = """WEBVTT
Kind: captions
Language: en

00:00:00.000 --> 00:00:02.869 align:start position:0%
 
so<00:00:00.320><c> today</c><00:00:00.640><c> we</c><00:00:00.960><c> plant</c>

00:00:02.869 --> 00:00:02.879 align:start position:0%
so today we plant
 

NOTE kept in place

00:00:02.879 --> 00:00:05.510 align:start position:0%
so today we plant
tomatoes<00:00:03.199><c> in</c><00:00:03.520><c> pots</c>

00:00:05.510 --> 00:00:05.520 align:start position:0%
tomatoes in pots
 

00:00:05.520 --> 00:00:08.000 align:start position:0%
tomatoes in pots
do<00:00:05.900><c> you</c><00:00:06.200><c> have</c><00:00:06.500><c> pots</c>
"""
REFERENCE = "So today we plant tomatoes in pots. Do you have pots?"

# Two-line roll-up, as broadcast captions converted to SRT show it.
ROLL_UP = """1
00:00:01,000 --> 00:00:02,000
so today we plant

2
00:00:02,000 --> 00:00:03,000
so today we plant
tomatoes in pots

3
00:00:03,000 --> 00:00:04,000
tomatoes in pots
do you have pots
"""


def test_youtube_captions_round_trip_byte_for_byte():
    assert formats.dumps(formats.loads(YOUTUBE, "vtt")) == YOUTUBE  # the " " lines stay


def test_each_repeated_line_goes_to_the_model_once_and_is_written_as_its_first():
    for content, format in [(YOUTUBE, "vtt"), (ROLL_UP, "srt")]:
        transcript = formats.loads(content, format)
        punctuator = ScriptedPunctuator(REFERENCE)
        restored = formats.restore_transcript(transcript, punctuator)
        assert punctuator.calls == [["so", "today", "we", "plant", "tomatoes", "in", "pots",
                                     "do", "you", "have", "pots"]]
        texts = [cue.text for cue in formats.convert(restored, "text").cues]
        assert texts == [REFERENCE]  # each word once
        written = formats.dumps(restored)
        assert written.count("So today we plant") == 2  # (VTT's first one is tagged)
        assert written.count("tomatoes in pots.") == 2
        again = formats.restore_transcript(formats.loads(written, format),
                                           ScriptedPunctuator(REFERENCE))
        assert formats.dumps(again) == written  # restoring twice changes nothing


def test_a_line_said_twice_in_ordinary_subtitles_stays_twice():
    srt = ("1\n00:00:01,000 --> 00:00:02,000\nno\n\n2\n00:00:02,000 --> 00:00:03,000\nno\n"
           "we go\n\n3\n00:00:03,000 --> 00:00:04,000\nthen it ends\n\n"
           "4\n00:00:04,000 --> 00:00:05,000\nhere\n")
    transcript = formats.loads(srt, "srt")
    assert repeated_tokens(transcript) == {}  # one cue in three starts with the line before
    assert without_repeats(transcript) is transcript


def test_resegmenting_and_converting_roll_up_captions_write_each_word_once():
    restored = formats.restore_transcript(formats.loads(YOUTUBE, "vtt"),
                                          ScriptedPunctuator(REFERENCE))
    plain = without_repeats(restored)
    assert [cue.text for cue in plain.cues] == [
        " \nSo<00:00:00.320><c> today</c><00:00:00.640><c> we</c><00:00:00.960><c> plant</c>",
        "\ntomatoes<00:00:03.199><c> in</c><00:00:03.520><c> pots.</c>",
        "\nDo<00:00:05.900><c> you</c><00:00:06.200><c> have</c><00:00:06.500><c> pots?</c>"]
    assert plain.meta["blocks"] == ((1, "NOTE kept in place"),)  # before the second cue
    srt = formats.dumps(formats.convert(restored, "srt"))
    assert srt.count("So today we plant") == 1 and srt.count("pots") == 2
    layout = formats.ResegmentOptions(max_chars_per_line=42, max_lines=2)
    cues = formats.resegment(restored, layout).cues
    assert " ".join(cue.text.replace("\n", " ") for cue in cues) == REFERENCE


def test_resegmenting_times_words_by_their_timestamp_tags():
    restored = formats.restore_transcript(formats.loads(YOUTUBE, "vtt"),
                                          ScriptedPunctuator(REFERENCE))
    layout = formats.ResegmentOptions(max_chars_per_line=16, max_lines=1)
    cues = formats.resegment(restored, layout).cues
    assert [(cue.start, cue.end, cue.text) for cue in cues] == [
        (0.0, 0.96, "So today we"), (0.96, 3.199, "plant tomatoes"),  # "plant" <00:00:00.960>
        (3.199, 5.51, "in pots."),  # "tomatoes" from its cue's start, 2.879
        (5.52, 6.5, "Do you have"), (6.5, 8.0, "pots?")]
