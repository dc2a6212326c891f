"""Accuracy under simulated recognition errors: IWSLT2011 test2011 with word errors added
at several word error rates, restored through the public API (`Punctuator.restore`).

    python benchmarks/bench_noise.py --model en-tiny --model en-accurate --wer 0 5 10 20

A recogniser's output is not the reference transcript: words are substituted, deleted and
inserted. This benchmark corrupts the test2011 words (`punctum.train.noise.add_asr_noise`:
substitutions, deletions and insertions in the proportion 60 : 25 : 15, a common split in
ASR error analyses; substituted and inserted words drawn from the text's own words, so in
proportion to their frequency) and scores each model against the labels that stay attached
to the surviving words: a deleted word's mark moves to the word before it when that word has
none, an inserted word has no mark and is lowercase, a substituted word keeps its labels.
Punctuation is scored on Che's test2011 (word level, contractions merged, "!" as PERIOD),
casing on the cased XML source, as in bench_iwslt.py. Each rate is the mean over --seeds
corruptions; the same corruptions are given to every model.
"""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

import numpy as np
from bench_iwslt import XML_NAME
from common import SHARED_DATA, existing_data, hardware

from punctum.corpora import CHE_LABEL_MAP, CHE_LABELS
from punctum.evaluation import load_scored
from punctum.metrics import score_labels
from punctum.runtime import Punctuator, RestoreOptions
from punctum.text import CASES, LOWER, NULL, Labelled, parse
from punctum.train.noise import NoiseConfig, add_asr_noise

# Shares of a word error rate: substitutions, deletions, insertions.
ERROR_SHARES = (0.60, 0.25, 0.15)


def corrupt(doc: Labelled, wer: float, seed: int) -> Labelled:
    """`doc` with about `wer` (0-1) word errors per reference word, labels carried along."""
    substitute, drop, insert = (wer * share for share in ERROR_SHARES)
    config = NoiseConfig(drop=drop, insert=insert, substitute=substitute)
    return add_asr_noise(doc, config, np.random.default_rng(seed), vocabulary=doc.words)


def restore_labels(punctuator: Punctuator, words: tuple[str, ...]) -> Labelled:
    """The model's labels for a word sequence restored as one text."""
    restored = parse(punctuator.restore(" ".join(words), RestoreOptions()), punctuator.inventory)
    if restored.words != words:
        raise RuntimeError("the restored text's words differ from the input's")
    return restored


def score_pair(punctuator: Punctuator, che: Labelled, xml: Labelled) -> tuple[float, float]:
    """(overall punctuation F1 on the Che words, casing F1 on the XML words)."""
    hyp = restore_labels(punctuator, che.words)
    hyp_post = [CHE_LABEL_MAP.get(label, label) for label in hyp.post]
    punct = score_labels(che.post, hyp_post, CHE_LABELS, NULL)
    case = score_labels(xml.case, restore_labels(punctuator, xml.words).case, CASES, LOWER)
    return punct.overall.f1, case.overall.f1


def measure(models: list[str], wers: list[float], seeds: int, data: Path,
            threads: int) -> dict[str, dict[float, tuple[float, float]]]:
    """model -> word error rate (%) -> mean (punctuation F1, casing F1) over the seeds."""
    che = load_scored(data / "test2011", "che").labelled
    xml = load_scored(data / XML_NAME, "xml").labelled
    corrupted = {wer: [(corrupt(che, wer / 100, seed), corrupt(xml, wer / 100, seed))
                       for seed in range(seeds if wer else 1)] for wer in wers}
    results: dict[str, dict[float, tuple[float, float]]] = {}
    for model in models:
        punctuator = Punctuator.load(model, threads=threads)
        results[model] = {wer: tuple(np.mean([score_pair(punctuator, c, x) for c, x in pairs],
                                             axis=0))
                          for wer, pairs in corrupted.items()}
    return results


def markdown(results: dict, wers: list[float], seeds: int) -> str:
    header = "| model | " + " | ".join(f"WER {w:g}%: punct. / casing F1" for w in wers) + " |"
    lines = [header, "|---|" + "---|" * len(wers)]
    for model, by_wer in results.items():
        cells = [f"{by_wer[w][0] * 100:.1f} / {by_wer[w][1] * 100:.1f}" for w in wers]
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
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "iwslt2011")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    if any(not 0 <= w <= 50 for w in args.wer) or args.seeds < 1:
        parser.error("--wer takes rates in [0, 50] and --seeds a positive count")
    data = existing_data(args.data, "test2011", XML_NAME)
    results = measure(args.model or ["en-tiny"], args.wer, args.seeds, data, args.threads)
    print(markdown(results, args.wer, args.seeds))


if __name__ == "__main__":
    main()
