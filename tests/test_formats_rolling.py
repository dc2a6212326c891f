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
        "   \ntomatoes<00:00:03.199><c> in</c><00:00:03.520><c> pots.</c>",  # copies' spaces
        "  \nDo<00:00:05.900><c> you</c><00:00:06.200><c> have</c><00:00:06.500><c> pots?</c>"]
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


def test_a_file_ending_on_a_line_of_one_space_round_trips_and_restores_twice_alike():
    content = YOUTUBE + "\n00:00:08.000 --> 00:00:08.010\ndo you have pots\n \n"
    assert formats.dumps(formats.loads(content, "vtt")) == content
    once = formats.dumps(formats.restore_transcript(formats.loads(content, "vtt"),
                                                    ScriptedPunctuator(REFERENCE)))
    assert once.endswith("Do you have pots?\n \n")
    twice = formats.restore_transcript(formats.loads(once, "vtt"), ScriptedPunctuator(REFERENCE))
    assert formats.dumps(twice) == once


def _srt(*cues: str) -> str:
    return "\n".join(f"{i + 1}\n00:00:{i:02d},000 --> 00:00:{i:02d},900\n{text}\n"
                     for i, text in enumerate(cues))


def test_files_that_only_look_rolled_are_left_as_written():
    dialogue = ["i told you i would be there", "there was no way i could miss it",
                "it was the biggest night of the year", "and everyone was going to be there",
                "there were so many people", "people from all over the city"]
    refrain = ["na na na na", "na na na na hey hey", "hey hey goodbye"] * 2
    for content in [_srt(*dialogue),  # cues starting with the last word of the cue before
                    _srt(*refrain),
                    _srt("so what did you do", "do you remember", "remember the night we met"),
                    _srt("help", "help", "is anyone there"),  # one-line cues prove nothing
                    _srt("wait", "wait for me", "no", "no way"),  # a dialogue, not paint-on
                    _srt("wait", "wait for me", "no", "no way", "go home", "go home now",
                         "stop", "stop it"),
                    _srt("<u>so</u> we plant", "so <u>we</u> plant", "so we <u>plant</u>",
                         "<u>then</u> we eat", "then <u>we</u> eat")]:  # karaoke highlights
        assert repeated_tokens(formats.loads(content, "srt")) == {}


def test_three_line_roll_up_repeats_two_lines():
    content = _srt("one two", "one two\nthree four", "one two\nthree four\nfive six",
                   "three four\nfive six\nseven eight", "five six\nseven eight\nnine ten")
    transcript = formats.loads(content, "srt")
    assert len(repeated_tokens(transcript)) == 2 + 4 + 4 + 4
    assert [c.text for c in formats.convert(transcript, "text").cues] == [
        "one two three four five six seven eight nine ten"]


def test_voices_on_repeated_lines_stay_open_when_copies_are_dropped():
    content = ("WEBVTT\n\n00:01.000 --> 00:02.000\n<v Anna>we went\n\n"
               "00:02.000 --> 00:03.000\n<v Anna>we went\nto the shop</v>\n\n"
               "00:03.000 --> 00:04.000\nto the shop</v>\n<v Ben>did you pay</v>\n")
    plain = without_repeats(formats.loads(content, "vtt"))
    assert [c.text for c in plain.cues] == ["<v Anna>we went", "<v Anna> \nto the shop</v>",
                                            "  </v>\n<v Ben>did you pay</v>"]
    cues = formats.resegment(formats.loads(content, "vtt")).cues
    assert [c.text for c in cues] == ["<v Anna>we went to the shop", "<v Ben>did you pay"]



def test_paint_on_captions_that_grow_word_by_word_are_read_once():
    content = _srt("so", "so today", "so today we plant", "tomatoes", "tomatoes in pots",
                   "tomatoes in pots do you", "tomatoes in pots do you have pots")
    transcript = formats.loads(content, "srt")
    punctuator = ScriptedPunctuator(REFERENCE)
    restored = formats.restore_transcript(transcript, punctuator)
    assert punctuator.calls == [["so", "today", "we", "plant", "tomatoes", "in", "pots", "do",
                                 "you", "have", "pots"]]
    assert [c.text for c in formats.convert(restored, "text").cues] == [REFERENCE]


def test_ordinary_subtitles_are_not_roll_up():
    import random

    rng = random.Random(0)
    words = "so we i you and the it is a to of that what no yes well".split()
    cues = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))
            for _ in range(200)]
    assert repeated_tokens(formats.loads(_srt(*cues[:60]), "srt")) == {}


def test_a_short_file_of_lines_rolled_up_is_roll_up():
    content = _srt("so we", "so we\nwent out", "went out\nto eat")
    transcript = formats.loads(content, "srt")
    assert formats.convert(transcript, "text").cues[0].text == "so we went out to eat"
