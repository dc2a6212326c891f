"""Out-of-domain text: book prose that no text model of this repository was trained on.

    python benchmarks/bench_ood.py --model en-tiny --model en-accurate --data ../shared/data

- LibriSpeech-PC: the test-clean subset's punctuated, cased references (librispeech_pc/),
  one document per chapter (its utterances in file order);
- LJSpeech: the metadata's original texts (speech/ljspeech_metadata/), one document per
  chapter (LJ001, LJ003, ...), the first --max-words words.

Each model restores every document (`Punctuator.restore_batch`: marks and case normalised
away first; the model's windows and decision biases), scored for marks and case against the
original. Each model runs twice: as shipped, and without its capitalised.json (names the
training text always writes Capitalised), so that the list's effect is measured.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
from itertools import groupby
from pathlib import Path

from common import SHARED_DATA, existing_data, hardware, restore_and_score

from punctum.corpora import iter_tsv
from punctum.runtime import Punctuator

LIBRI = "librispeech_pc/librispeech_pc_test_clean_subset.tsv"
LJSPEECH = "speech/ljspeech_metadata/metadata_minus_LJ002.csv.gz"


def libri_documents(path: Path) -> list[str]:
    """One text per chapter: its utterances joined in file order."""
    return [" ".join(u.text for u in group)
            for _, group in groupby(iter_tsv(path), key=lambda u: u.fields["chapter"])]


def ljspeech_documents(path: Path, max_words: int) -> list[str]:
    """One text per chapter (the id before the dash), at most max_words words in all."""
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [line.rstrip("\n").split("|") for line in handle if line.strip()]
    documents, words = [], 0
    for _, group in groupby(rows, key=lambda row: row[0].split("-")[0]):
        if words >= max_words:
            break
        text = " ".join(row[1] for row in group)
        documents.append(text)
        words += len(text.split())
    return documents


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", required=True,
                        help="a bundled model name or an artifact folder (repeatable)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--max-words", type=int, default=60000,
                        help="LJSpeech words (its first chapters)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    data = existing_data(args.data, LIBRI, LJSPEECH)
    refs = {"LibriSpeech-PC test-clean": libri_documents(data / LIBRI),
            "LJSpeech": ljspeech_documents(data / LJSPEECH, args.max_words)}
    print(f"out-of-domain book text; {hardware()}; {datetime.date.today()}\n")
    print("| model | " + " | ".join(f"{name} ({sum(len(r.split()) for r in texts):,} words)"
                                    for name, texts in refs.items()) + " |")
    print("|---|" + "---|" * len(refs))
    for model in args.model:
        punctuator = Punctuator.load(model, threads=args.threads)
        shipped = punctuator.capitalised
        for label, words in ((model, shipped), (f"{model} without capitalised.json", None)):
            if words is None and not shipped:
                continue
            punctuator.capitalised = words or frozenset()
            cells = [f"{100 * p:.1f} / {100 * c:.1f}"
                     for p, c in (restore_and_score(punctuator, texts) for texts in refs.values())]
            print(f"| {label} | " + " | ".join(cells) + " |")
    print("\nEach cell: overall punctuation F1 / casing F1.")


if __name__ == "__main__":
    main()
