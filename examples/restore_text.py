#!/usr/bin/env python3
"""Restore punctuation and casing of text with the bundled model (no torch, offline).

    python examples/restore_text.py "so what do you think i think it's great"
    echo "we met in new york last week it was raining" | python examples/restore_text.py

Each argument (or each line of standard input) is one text.
"""

import sys

import punctum


def main() -> None:
    texts = sys.argv[1:] or [line.rstrip("\n") for line in sys.stdin]
    punctuator = punctum.load()  # the bundled en-tiny; punctum.load("en-accurate") is larger
    for restored in punctuator.restore_batch(texts):
        print(restored)


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as error:  # a missing or unreadable file: one line
        sys.exit(f"{sys.argv[0]}: error: {error}")
