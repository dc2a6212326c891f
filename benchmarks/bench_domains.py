"""Scores models on the held-out documents of every training corpus: does a model tuned for
TED (the IWSLT domain) lose on meetings, earnings calls or speeches?

    python benchmarks/bench_domains.py --model en-tiny --model runs/en-tiny-ted/artifact

The validation split of each source is what `punctum train` holds out (1% of the documents,
chosen by line number and path: `punctum.train.data.iter_source(..., "val")`), so no model
trained by a recipe of this repository has seen it. Each model restores every document
(`Punctuator.restore_batch`, which normalises marks and case away first; the model's own
windows and decision biases), scored for marks and case against the cased original (marks
outside the model's labels count as no mark, as in training).
"""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from common import SHARED_DATA, existing_data, hardware, restore_and_score

from punctum.runtime import Punctuator
from punctum.text import render
from punctum.train.data import DataConfig, SourceConfig, iter_source

SOURCES = ("ted_talks/ted_talks.txt.gz",
           "presidential_speeches/presidential_speeches.txt.gz",
           "qmsum_meetings/qmsum_meetings.txt.gz",
           "earnings22/earnings22.txt.gz",
           "earnings21/earnings21.txt.gz",
           "coraal_multi_rev/coraal_multi_rev.txt.gz")


def held_out(path: Path, fraction: float, max_words: int) -> list[str]:
    """The source's validation documents as punctuated, cased texts (at most max_words)."""
    source = SourceConfig(str(path))
    texts, words = [], 0
    for labelled in iter_source(source, DataConfig((source,), val_fraction=fraction), "val"):
        if words >= max_words:
            break
        texts.append(render(labelled))
        words += len(labelled)
    return texts


def evaluate(model: str, refs: list[str], threads: int) -> tuple[float, float]:
    """(punctuation F1, casing F1) of `model` restoring the lowercased, mark-free refs."""
    return restore_and_score(Punctuator.load(model, threads=threads), refs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", required=True,
                        help="a bundled model name or an artifact folder (repeatable)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "text")
    parser.add_argument("--val-fraction", type=float, default=0.01,
                        help="the recipes' data.val_fraction")
    parser.add_argument("--max-words", type=int, default=60000,
                        help="held-out words per source (the first documents)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    data = existing_data(args.data, *SOURCES)
    refs = {name.split("/")[0]: held_out(data / name, args.val_fraction, args.max_words)
            for name in SOURCES}
    print(f"held-out documents of the training corpora; {hardware()}; {datetime.date.today()}\n")
    print("| model | " + " | ".join(f"{name} ({sum(len(r.split()) for r in texts):,} words)"
                                    for name, texts in refs.items()) + " |")
    print("|---|" + "---|" * len(refs))
    for model in args.model:
        cells = []
        for texts in refs.values():
            punct, case = evaluate(model, texts, args.threads)
            cells.append(f"{100 * punct:.1f} / {100 * case:.1f}")
        print(f"| {model} | " + " | ".join(cells) + " |")
    print("\nEach cell: overall punctuation F1 / casing F1.")


if __name__ == "__main__":
    main()
