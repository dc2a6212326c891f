"""What `--keep-existing` fills in: marks added to text that already has some.

    python benchmarks/bench_fill.py --model en-tiny --data ../shared/data [--fill all]

IWSLT2011 test2011 (Che's words and labels, lowercased) is restored with `--keep-existing`
after keeping only some of its reference marks: none (what a recogniser gives), the
sentence ends (".", "?": commas to fill in), the commas (sentence ends to fill in), or all of
them (a finished text: nothing to fill in), or nine in ten of them, drawn at random (a
finished text with gaps). Each output is scored against the full reference
(P / R / F1 per mark and overall, IWSLT2011 convention), and the marks it adds where the
given text had none are counted: `added`, and `added_wrong` (where the reference has none).
The finished texts of bench_kept.py (LibriTTS book sentences, wikitext-2 paragraphs) give
the marks added to punctuated, cased text per 1,000 words, none of which its writer wrote.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import replace
from pathlib import Path

from bench_kept import LIBRITTS, WIKITEXT, load_texts
from common import SHARED_DATA, existing_data, print_result

from punctum.evaluation import ScoredFile, load_scored, score
from punctum.runtime import Punctuator, RestoreOptions
from punctum.text import NULL, get_inventory, parse, render

SCENARIOS = {
    "no_marks": frozenset(),
    "sentence_ends_given": frozenset({"PERIOD", "QUESTION", "EXCLAMATION"}),
    "commas_given": frozenset({"COMMA"}),
    "all_given": frozenset({"COMMA", "PERIOD", "QUESTION", "EXCLAMATION"}),
    "nine_in_ten_given": 0.9,  # a finished text with gaps: each mark kept with p = 0.9
}


def fill(punctuator: Punctuator, reference: ScoredFile, kept: frozenset | float,
         keep: RestoreOptions) -> dict:
    """Restore the reference's words with only the marks in `kept` (a share: each mark kept
    with that probability, seeded), and score the result."""
    ref = reference.labelled
    if isinstance(kept, float):
        rng = random.Random(0)
        given = replace(ref, post=tuple(p if rng.random() < kept else NULL for p in ref.post))
    else:
        given = replace(ref, post=tuple(p if p in kept else NULL for p in ref.post))
    text = punctuator.restore(render(given), keep)
    restored = parse(text, punctuator.inventory)
    if restored.words != ref.words:
        raise RuntimeError("a restore changed the words")
    evaluation = score(reference, ScoredFile(restored, is_final=None, has_case=False),
                       get_inventory("en"))
    added = [i for i, (g, r) in enumerate(zip(given.post, restored.post))
             if g == NULL and r != NULL]
    return {
        "overall_f1": round(evaluation.punct.overall.f1 * 100, 1),
        "f1": {label: round(prf.f1 * 100, 1)
               for label, prf in evaluation.punct.per_label.items()},
        "added": len(added),
        "added_wrong": sum(ref.post[i] == NULL for i in added),
    }


def added_per_thousand(punctuator: Punctuator, texts: list[str], keep: RestoreOptions) -> float:
    """Marks a `--keep-existing` restore adds to finished texts, per 1,000 words (the last
    word of a text without a closing mark is closed by design: not counted)."""
    inventory = punctuator.inventory
    added = words = 0
    for text, restored in zip(texts, punctuator.restore_batch(texts, keep)):
        given, out = parse(text, inventory), parse(restored, inventory)
        words += len(given)
        added += sum(g == NULL and o != NULL
                     for g, o in zip(given.post[:-1], out.post[:-1]))
    return round(added * 1000 / max(words, 1), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="en-tiny")
    parser.add_argument("--data", type=Path, default=SHARED_DATA)
    parser.add_argument("--lines", type=int, default=2000, help="texts of each finished corpus")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--fill", choices=["missing", "all"], default="missing",
                        help="RestoreOptions.fill (all: the model's mark after every word "
                             "without one, as before session 21)")
    args = parser.parse_args()
    keep = RestoreOptions(keep_existing=True, fill=args.fill)
    data = existing_data(args.data, "iwslt2011/test2011", LIBRITTS, WIKITEXT)
    punctuator = Punctuator.load(args.model, threads=args.threads)
    reference = load_scored(data / "iwslt2011" / "test2011", "che")
    result = {name: fill(punctuator, reference, kept, keep) for name, kept in SCENARIOS.items()}
    result["finished_texts_added_per_1000_words"] = {
        name: added_per_thousand(punctuator, texts, keep)
        for name, texts in load_texts(data, args.lines).items()}
    print_result(result | {"fill": args.fill}, args.model)


if __name__ == "__main__":
    main()
