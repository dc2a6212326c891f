"""Decision rules that join the casing head to the marks, measured (all rejected).

    python benchmarks/bench_case_rules.py --model en-tiny

1. Next-word casing as evidence for a sentence end: w * logit(P(next word not LOWER)) is
   added to the log-probabilities of the sentence-final marks; the decision biases are
   refitted on dev2012 for each w (as `punctum calibrate` fits them), test2011 scored with
   them (Che's labels, the model's windows).
2. A capital in mid-sentence needs confidence (3: only after a comma the model placed): a
   word the model writes Capitalised after a mark that does not end a sentence (not a name
   of capitalised.json, not "I") keeps its capital only when P(CAP) >= tau; casing F1 on the
   held-out documents of the training corpora (`bench_domains.py`, 20,000 words each) and on
   test2011 (`bench_iwslt.py`).
4. A mid-sentence capital on a word the training split never writes capitalised in
   mid-sentence (20 times or more in the first 300,000 words of each source) is lowered.
5. A comma the model placed before such a word it writes Capitalised becomes a period.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses

import bench_domains
import bench_iwslt
import numpy as np
from common import SHARED_DATA, hardware, restore_and_score

from punctum.calibration import CHE_LABEL_MAP, CHE_LABELS, _index, fit_post_bias, micro_f1
from punctum.evaluation import load_scored, score
from punctum.runtime import Punctuator
from punctum.text import get_inventory, is_i


def next_case_evidence(model: str, weights: list[float]) -> None:
    punctuator = Punctuator.load(model, post_bias={}, threads=2)
    labels = punctuator.post_labels
    final = np.array([label in punctuator.inventory.sentence_final for label in labels])
    scored_as = np.array([_index(CHE_LABELS, CHE_LABEL_MAP.get(label, label))
                          for label in labels])
    lower = punctuator.case_labels.index("LOWER")

    def read(name: str):
        scored = load_scored(SHARED_DATA / "iwslt2011" / name, "che")
        prediction = punctuator.predict_batch([list(scored.labelled.words)])[0]
        capital = np.clip(1 - prediction.case_probs[:, lower].astype(np.float64), 1e-6, 1 - 1e-6)
        following = np.append(capital[1:], 0.5)
        ref = np.array([_index(CHE_LABELS, label) for label in scored.labelled.post])
        return prediction.post_probs.astype(np.float64), np.log(following / (1 - following)), ref

    def shifted(probs, evidence, w):
        log_probs = np.log(np.clip(probs, 1e-9, 1)) + w * evidence[:, None] * final[None, :]
        return np.exp(log_probs - log_probs.max(1, keepdims=True))

    dev, test = read("dev2012.gz"), read("test2011")
    print("| w | dev2012 F1 (biases refitted) | biases | test2011 punct. F1 |\n|---|---|---|---|")
    for w in weights:
        fit = fit_post_bias(shifted(*dev[:2], w), dev[2], labels, scored_as,
                            fixed=set(CHE_LABEL_MAP))
        bias = np.array([fit.bias.get(label, 0.0) for label in labels])
        hyp = scored_as[(np.log(shifted(*test[:2], w)) + bias).argmax(1)]
        print(f"| {w} | {100 * fit.f1_after:.2f} | {fit.bias} | "
              f"{100 * micro_f1(hyp, test[2]):.2f} |")


@contextlib.contextmanager
def _rule_applied(rule):
    """Punctuator._assemble with `rule(punctuator, words, prediction, setting)` applied to
    each prediction while the yielded setting[0] is not None (the bundled decision then)."""
    assemble = Punctuator._assemble
    setting: list = [None]

    def patched(self, words, *args):
        prediction = assemble(self, words, *args)
        return prediction if setting[0] is None else rule(self, words, prediction,
                                                          setting[0])

    Punctuator._assemble = patched
    try:
        yield setting
    finally:
        Punctuator._assemble = assemble


def mid_sentence_capitals(model: str, thresholds: list[float | None],
                          after: tuple[str, ...] | None = None) -> None:
    """Rule 2: `after` None, any mark that ends no sentence (or none) before the word; else
    only the marks named (("COMMA",): rule 3)."""
    def floor(self, words, prediction, tau):
        cap, final = self.case_labels.index("CAP"), set(self.inventory.sentence_final)
        case = [c if not (k and c == "CAP" and prediction.post[k - 1] not in final
                          and (after is None or prediction.post[k - 1] in after)
                          and words[k] not in self.capitalised and not is_i(words[k])
                          and prediction.case_probs[k, cap] < tau) else "LOWER"
                for k, c in enumerate(prediction.case)]
        return dataclasses.replace(prediction, case=tuple(case))

    with _rule_applied(floor) as setting:
        punctuator, refs = Punctuator.load(model, threads=2), _held_out_refs()
        print("\n| tau | " + " | ".join(refs) + " | mean | test2011 casing F1 |")
        print("|---|" + "---|" * (len(refs) + 2))
        for tau in thresholds:
            setting[0] = tau
            print(_casing_row(tau or "argmax (bundled)", punctuator, refs))


def _held_out_refs() -> dict[str, list[str]]:
    """The held-out documents of each training corpus (20,000 words each)."""
    return {name.split("/")[0]: bench_domains.held_out(SHARED_DATA / "text" / name, 0.01,
                                                       20000)
            for name in bench_domains.SOURCES}


def _casing_row(label, punctuator: Punctuator, refs: dict[str, list[str]]) -> str:
    """A table row: casing F1 on each corpus's held-out documents, their mean, test2011's."""
    cells = [100 * restore_and_score(punctuator, texts)[1] for texts in refs.values()]
    test = bench_iwslt.evaluate(punctuator, SHARED_DATA / "iwslt2011")
    return (f"| {label} | " + " | ".join(f"{c:.2f}" for c in cells)
            + f" | {np.mean(cells):.2f} | {100 * test['case'].overall.f1:.2f} |")


def never_capitalised(words_per_source: int, least: int) -> frozenset[str]:
    """Words the training split of the corpora writes in lowercase at every one of at least
    `least` mid-sentence occurrences (function words, not names), from the first
    `words_per_source` words of each source."""
    from collections import Counter

    from punctum.text import get_inventory
    from punctum.train.data import DataConfig, SourceConfig

    final = set(get_inventory("en").sentence_final)
    lower, other = Counter(), Counter()
    for name in bench_domains.SOURCES:
        source = SourceConfig(str(SHARED_DATA / "text" / name))
        seen = 0
        for doc in bench_domains.iter_source(source, DataConfig((source,), val_fraction=0.01),
                                             "train"):
            for k in range(1, len(doc.words)):
                if doc.post[k - 1] not in final:
                    (lower if doc.case[k] == "LOWER" else other)[doc.words[k]] += 1
            seen += len(doc.words)
            if seen >= words_per_source:
                break
    return frozenset(w for w, n in lower.items() if n >= least and not other[w])


def never_capital_rule(model: str, listed: frozenset[str]) -> None:
    """Rule 4: a mid-sentence capital on a word of `listed` (`never_capitalised`) is
    lowered."""
    def lowered(self, words, prediction, _):
        final = set(self.inventory.sentence_final)
        case = [c if not (k and c == "CAP" and prediction.post[k - 1] not in final
                          and words[k] in listed) else "LOWER"
                for k, c in enumerate(prediction.case)]
        return dataclasses.replace(prediction, case=tuple(case))

    with _rule_applied(lowered) as setting:
        punctuator, refs = Punctuator.load(model, threads=2), _held_out_refs()
        print("| rule | " + " | ".join(refs) + " | mean | test2011 casing F1 |")
        print("|---|" + "---|" * (len(refs) + 2))
        for on in (None, True):
            setting[0] = on
            print(_casing_row("lowered" if on else "argmax (bundled)", punctuator, refs))


def promotion_rule(model: str, listed: frozenset[str]) -> None:
    """Rule 5: a comma the model placed before a word of `listed` that the model writes
    Capitalised becomes a period (the casing head saw a sentence start there)."""
    def promoted(self, words, prediction, _):
        post = [("PERIOD" if p == "COMMA" and k + 1 < len(words) and words[k + 1] in listed
                 and prediction.case[k + 1] == "CAP" else p)
                for k, p in enumerate(prediction.post)]
        return dataclasses.replace(prediction, post=tuple(post))

    with _rule_applied(promoted) as setting:
        punctuator = Punctuator.load(model, threads=2)
        dev = load_scored(SHARED_DATA / "iwslt2011" / "dev2012.gz", "che")
        print("\n| rule | dev2012 punct. F1 | test2011 punct. F1 | test2011 casing F1 |")
        print("|---|---|---|---|")
        for on in (None, True):
            setting[0] = on
            hyp = bench_iwslt.restore_words(punctuator, dev.labelled.words)
            dev_f1 = score(dev, hyp, get_inventory("en")).punct.overall.f1
            test = bench_iwslt.evaluate(punctuator, SHARED_DATA / "iwslt2011")
            print(f"| {'promoted' if on else 'bundled'} | {100 * dev_f1:.2f} | "
                  f"{100 * test['punct'].overall.f1:.2f} | "
                  f"{100 * test['case'].overall.f1:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="en-tiny")
    args = parser.parse_args()
    next_case_evidence(args.model, [0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0])
    mid_sentence_capitals(args.model, [None, 0.5, 0.6, 0.7, 0.8, 0.9])
    mid_sentence_capitals(args.model, [None, 0.6, 0.8, 1.01], after=("COMMA",))
    words_per_source, least = 300_000, 20
    listed = never_capitalised(words_per_source, least)  # (rules 4 and 5)
    print(f"\n{len(listed)} words never capitalised in mid-sentence ({least}+ times in the "
          f"first {words_per_source:,} training words of each source)\n")
    never_capital_rule(args.model, listed)
    promotion_rule(args.model, listed)
    print(f"\n{hardware()}")


if __name__ == "__main__":
    main()
