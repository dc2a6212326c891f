#!/usr/bin/env python3
"""Score restored text against a punctuated reference: P/R/F1 per mark, as the papers do.

    python examples/evaluate.py examples/reference.txt
    python examples/evaluate.py my_reference.txt --model en-accurate

The reference's marks and case are stripped, the model restores the words, and
`punctum.evaluation.score` compares the two label sequences (the `punctum eval` scorer).
"""

import argparse
import sys

import punctum
from punctum.evaluation import join_texts, score
from punctum.text import get_inventory, normalize


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reference", help="punctuated, cased text, one document per line")
    parser.add_argument("--model", default=None, help="model name or folder (default en-tiny)")
    args = parser.parse_args()

    with open(args.reference, encoding="utf-8") as handle:
        lines = [line.strip() for line in handle if line.strip()]
    punctuator = punctum.load(args.model)
    hypotheses = punctuator.restore_batch([" ".join(normalize(line)) for line in lines])
    inventory = get_inventory("en")
    evaluation = score(join_texts(lines, inventory), join_texts(hypotheses, inventory),
                       inventory)
    print(evaluation.format())


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as error:  # a missing or unreadable file: one line
        sys.exit(f"{sys.argv[0]}: error: {error}")
