#!/usr/bin/env python3
"""Restore an SRT file's text, rebuild its cues at sentence boundaries, write WebVTT.

    python examples/subtitles.py talk.srt talk.vtt
    python examples/subtitles.py            # a small SRT written by this script

Word timings are kept: only marks and case change, then `resegment` cuts cues where
sentences end, within 42 characters per line and 2 lines per cue.
"""

import sys

import punctum
from punctum import formats

SAMPLE = """1
00:00:01,000 --> 00:00:03,500
so what do you think about the

2
00:00:03,500 --> 00:00:06,000
plan i think it is great we should

3
00:00:06,000 --> 00:00:08,000
start next week
"""


def main() -> None:
    transcript = (formats.read(sys.argv[1]) if len(sys.argv) > 1
                  else formats.loads(SAMPLE, "srt"))
    punctuator = punctum.load()
    restored = formats.restore_transcript(transcript, punctuator)
    cues = formats.resegment(restored, formats.ResegmentOptions(max_chars_per_line=42))
    vtt = formats.convert(cues, "vtt")
    if len(sys.argv) > 2:
        formats.write(vtt, sys.argv[2])
    else:
        print(formats.dumps(vtt), end="")


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as error:  # a missing or unreadable file: one line
        sys.exit(f"{sys.argv[0]}: error: {error}")
