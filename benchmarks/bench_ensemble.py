"""Would an ensemble make a better teacher? Scores models and the mean of their probabilities.

    python benchmarks/bench_ensemble.py --model en-accurate --model runs/en-tiny-drop8/artifact

Each model predicts the 288k merged words of IWSLT dev2012 (lowercased, no marks; each with
its own stored windows, decision biases ignored); the script prints the overall punctuation
F1 of each model alone and of the mean probabilities of every combination of two or more,
without and with decision biases fitted on the same words (`calibration.fit_post_bias`, as
`punctum calibrate` does). A mean that beats its members is a candidate for a list-valued
`[data.distill] model` (an ensemble teacher, `punctum/train/distill.py`).
"""

from __future__ import annotations

import argparse
import datetime
import itertools
from pathlib import Path

import numpy as np
from common import SHARED_DATA, existing_data, hardware

from punctum.calibration import fit_post_bias, micro_f1
from punctum.corpora import CHE_LABEL_MAP, CHE_LABELS
from punctum.evaluation import load_scored
from punctum.runtime import Punctuator


def dev_probabilities(model: str, words: list[str], threads: int) -> tuple[np.ndarray, list]:
    """(n, K) mark probabilities of `model` on `words`, and its K labels."""
    punctuator = Punctuator.load(model, threads=threads, post_bias={})
    return punctuator.predict(words).post_probs, list(punctuator.post_labels)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", required=True,
                        help="a bundled model name or an artifact folder (repeat, 2 or more)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "iwslt2011")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    if len(args.model) < 2:
        parser.error("give at least two --model")
    dev = load_scored(existing_data(args.data, "dev2012.gz") / "dev2012.gz")
    words = list(dev.labelled.words)
    probs, labels = {}, None
    for model in args.model:
        probs[model], model_labels = dev_probabilities(model, words, args.threads)
        if labels not in (None, model_labels):
            raise SystemExit(f"error: {model} has other mark labels ({model_labels}) than "
                             f"{args.model[0]} ({labels})")
        labels = model_labels
    scored_as = [CHE_LABELS.index(CHE_LABEL_MAP.get(label, label)) for label in labels]
    ref = np.asarray([CHE_LABELS.index(label) for label in dev.labelled.post])
    mapping = np.asarray(scored_as)

    print(f"IWSLT dev2012, {len(words):,} words; {hardware()}; {datetime.date.today()}\n")
    print("| models | F1 | F1 with fitted biases | biases |")
    print("|---|---|---|---|")
    for size in range(1, len(args.model) + 1):
        for combo in itertools.combinations(args.model, size):
            mean = np.mean([probs[m] for m in combo], axis=0)
            fit = fit_post_bias(mean, ref, labels, scored_as, fixed=set(CHE_LABEL_MAP))
            before = micro_f1(mapping[mean.argmax(-1)], ref)
            offsets = ", ".join(f"{k} {v:+.1f}" for k, v in fit.bias.items() if v)
            print(f"| {' + '.join(combo)} | {100 * before:.2f} | {100 * fit.f1_after:.2f} | "
                  f"{offsets or 'none'} |")


if __name__ == "__main__":
    main()
