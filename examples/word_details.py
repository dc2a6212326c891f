#!/usr/bin/env python3
"""Per-word marks, case and probabilities: find the marks the model is unsure about.

    python examples/word_details.py "so what do you think i think it's great"

`restore_detailed` returns typed results: the text, and for every word the mark after it,
its case and the model's probabilities (the same numbers `punctum restore --json` prints).
"""

import sys

import punctum

TEXT = "well i went home early it was late and we were tired did you stay"


def main() -> None:
    text = " ".join(sys.argv[1:]) or TEXT
    result = punctum.load().restore_detailed([text])[0]
    print(result.text, end="\n\n")
    for entry in result.to_dict()["words"]:
        # a text's closing mark is chosen for it (`model_mark` says what the model chose)
        closing = "  (closes the text)" if "model_mark" in entry else ""
        unsure = "  <- unsure" if entry["mark_prob"] < 0.6 and not closing else closing
        print(f"{entry['word']:12} mark {entry['mark']:9} p={entry['mark_prob']:.2f}  "
              f"case {entry['case']:6} p={entry['case_prob']:.2f}{unsure}")


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as error:  # a missing or unreadable file: one line
        sys.exit(f"{sys.argv[0]}: error: {error}")
