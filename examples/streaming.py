#!/usr/bin/env python3
"""Punctuate words as a speech recogniser emits them (the on-device streaming use).

    python examples/streaming.py
    python examples/streaming.py --lookahead 2 "so what do you think i think it's great"

Words arrive one at a time; each is printed, with its mark and case, as soon as `lookahead`
more words have followed it; `flush()` finishes the text when the speaker stops.
"""

import argparse
import sys

import punctum

SAMPLE = ("hello everyone and welcome to the call today we will talk about revenue "
          "does anyone have questions before we start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("text", nargs="?", default=SAMPLE, help="words the recogniser emits")
    parser.add_argument("--lookahead", type=int, default=4,
                        help="words of right context (default 4, as punctum restore --stream)")
    args = parser.parse_args()

    stream = punctum.load().stream(lookahead=args.lookahead)
    for word in args.text.split():  # an ASR engine would call feed() from its callback
        final = stream.feed(word)
        print(f"heard {word!r:14} final: {' '.join(final)}")
    print(f"end of speech   final: {' '.join(stream.flush())}")


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as error:  # a missing or unreadable file: one line
        sys.exit(f"{sys.argv[0]}: error: {error}")
