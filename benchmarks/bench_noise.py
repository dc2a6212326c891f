"""Accuracy under simulated recognition errors: IWSLT2011 test2011 with word errors added
at several word error rates, restored through the public API (`Punctuator.restore`).

    python benchmarks/bench_noise.py --model en-tiny --model en-accurate --wer 0 5 10 20

A recogniser's output is not the reference transcript: words are substituted, deleted and
inserted. This benchmark corrupts the test2011 words (`punctum.train.noise.add_asr_noise`
with words = "document": substitutions, deletions and insertions in the proportion 60 : 25 :
15, a common split in ASR error analyses; substituted and inserted words drawn from the
text's own words, so in proportion to their frequency) and scores each model against the
labels that stay attached to the surviving words: a deleted word's mark moves to the word
before it when that word has none, an inserted word has no mark and is lowercase, a
substituted word keeps its labels. Punctuation is scored on Che's test2011 (word level,
contractions merged, "!" as PERIOD), casing on the cased XML source, as in bench_iwslt.py.
Each rate is the mean over --seeds corruptions; the same corruptions are given to every
model. With --dev, IWSLT dev2012 instead (punctuation only: it has no cased source), for
choosing models on noisy input.
"""

from __future__ import annotations

import argparse
import datetime
from dataclasses import replace
from pathlib import Path

import numpy as np
from bench_iwslt import XML_NAME
from common import SHARED_DATA, existing_data, hardware

from punctum.corpora import CHE_LABEL_MAP
from punctum.evaluation import ScoredFile, load_scored, score
from punctum.runtime import Punctuator, RestoreOptions
from punctum.text import Labelled, get_inventory, parse
from punctum.train.noise import NoiseConfig, add_asr_noise

# Shares of a word error rate: substitutions, deletions, insertions.
ERROR_SHARES = (0.60, 0.25, 0.15)


def corrupt(doc: Labelled, wer: float, seed: int) -> Labelled:
    """`doc` with about `wer` (0-1) word errors per reference word, labels carried along."""
    substitute, drop, insert = (wer * share for share in ERROR_SHARES)
    config = NoiseConfig(drop=drop, insert=insert, substitute=substitute, words="document")
    return add_asr_noise(doc, config, np.random.default_rng(seed))


def restored(punctuator: Punctuator, doc: Labelled, has_case: bool) -> tuple[ScoredFile, ...]:
    """(reference, hypothesis) for `evaluation.score`: the model restores `doc`'s words as
    one text; "!" is scored as PERIOD, as in Che's labels."""
    text = punctuator.restore(" ".join(doc.words), RestoreOptions())
    hyp = parse(text, punctuator.inventory)
    hyp = replace(hyp, post=tuple(CHE_LABEL_MAP.get(label, label) for label in hyp.post))
    no_ends = np.zeros(len(doc), dtype=bool)
    return (ScoredFile(doc, no_ends, has_case=has_case),
            ScoredFile(hyp, np.zeros(len(hyp), dtype=bool), has_case=True))


def score_pair(punctuator: Punctuator, che: Labelled,
               xml: Labelled | None) -> tuple[float, float]:
    """(overall punctuation F1 on the Che words, casing F1 on the XML words, NaN without).

    Words that the restored text splits differently (dev2012's few mojibake tokens, whose
    "?" parses as a mark) are aligned by `evaluation.score`, as in bench_windows.py."""
    inventory = get_inventory("en")
    punct = score(*restored(punctuator, che, has_case=False), inventory).punct
    if xml is None:
        return punct.overall.f1, float("nan")
    case = score(*restored(punctuator, xml, has_case=True), inventory).case
    return punct.overall.f1, case.overall.f1


def measure(models: list[str], wers: list[float], seeds: int, data: Path, threads: int,
            dev: bool = False) -> dict[str, dict[float, tuple[float, float]]]:
    """model -> word error rate (%) -> mean (punctuation F1, casing F1) over the seeds."""
    che = load_scored(data / ("dev2012.gz" if dev else "test2011"), "che").labelled
    xml = None if dev else load_scored(data / XML_NAME, "xml").labelled
    corrupted = {wer: [(corrupt(che, wer / 100, seed),
                        None if xml is None else corrupt(xml, wer / 100, seed))
                       for seed in range(seeds if wer else 1)] for wer in wers}
    results: dict[str, dict[float, tuple[float, float]]] = {}
    for model in models:
        punctuator = Punctuator.load(model, threads=threads)
        results[model] = {wer: tuple(np.mean([score_pair(punctuator, c, x) for c, x in pairs],
                                             axis=0))
                          for wer, pairs in corrupted.items()}
    return results


def markdown(results: dict, wers: list[float], seeds: int, dev: bool = False) -> str:
    what = "dev2012 punct. F1" if dev else "punct. / casing F1"
    header = "| model | " + " | ".join(f"WER {w:g}%: {what}" for w in wers) + " |"
    lines = [header, "|---|" + "---|" * len(wers)]
    for model, by_wer in results.items():
        cells = [f"{by_wer[w][0] * 100:.1f} / {by_wer[w][1] * 100:.1f}".replace(" / nan", "")
                 for w in wers]
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
    lines.append(f"\n{seeds} corruptions per rate; {hardware()}, {datetime.date.today()}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="model name or folder (repeatable; "
                        "default: en-tiny)")
    parser.add_argument("--wer", type=float, nargs="+", default=[0, 5, 10, 20],
                        help="word error rates in percent")
    parser.add_argument("--seeds", type=int, default=3, help="corruptions per rate")
    parser.add_argument("--dev", action="store_true",
                        help="score dev2012 (punctuation only) instead of test2011")
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "iwslt2011")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    if any(not 0 <= w <= 50 for w in args.wer) or args.seeds < 1:
        parser.error("--wer takes rates in [0, 50] and --seeds a positive count")
    data = existing_data(args.data, *(["dev2012.gz"] if args.dev else ["test2011", XML_NAME]))
    results = measure(args.model or ["en-tiny"], args.wer, args.seeds, data, args.threads,
                      args.dev)
    print(markdown(results, args.wer, args.seeds, args.dev))


if __name__ == "__main__":
    main()
