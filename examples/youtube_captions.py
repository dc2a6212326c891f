#!/usr/bin/env python3
"""Turn YouTube's automatic captions (rolling, lowercase, unpunctuated) into clean SRT.

    yt-dlp --write-auto-subs --skip-download -o talk URL     # talk.en.vtt
    python examples/youtube_captions.py talk.en.vtt talk.srt
    python examples/youtube_captions.py                      # captions written by this script

Each caption line appears three times in such a file (new, alone for 10 ms, then above the
next line). `restore_transcript` sends every line to the model once and writes its copies
alike; `resegment` then builds cues of whole sentences, each word once, timed by the
captions' word timestamps.
"""

import sys

import punctum
from punctum import formats

SAMPLE = """WEBVTT
Kind: captions
Language: en

00:00:00.000 --> 00:00:02.500 align:start position:0%
 
so<00:00:00.400><c> today</c><00:00:00.800><c> we</c><00:00:01.100><c> plant</c>

00:00:02.500 --> 00:00:02.510 align:start position:0%
so today we plant
 

00:00:02.510 --> 00:00:05.000 align:start position:0%
so today we plant
tomatoes<00:00:03.200><c> do</c><00:00:03.500><c> you</c><00:00:03.900><c> have</c>

00:00:05.000 --> 00:00:05.010 align:start position:0%
tomatoes do you have
 

00:00:05.010 --> 00:00:07.000 align:start position:0%
tomatoes do you have
pots<00:00:05.500><c> let's</c><00:00:05.800><c> start</c>
"""


def main() -> None:
    captions = (formats.read(sys.argv[1]) if len(sys.argv) > 1
                else formats.loads(SAMPLE, "vtt"))
    restored = formats.restore_transcript(captions, punctum.load())
    srt = formats.convert(formats.resegment(restored), "srt")
    if len(sys.argv) > 2:
        formats.write(srt, sys.argv[2])
    else:
        print(formats.dumps(srt), end="")


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as error:  # a missing or unreadable file: one line
        sys.exit(f"{sys.argv[0]}: error: {error}")
