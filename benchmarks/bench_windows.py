"""Window settings swept on IWSLT dev2012: double overlap against no overlap and half windows.

    python benchmarks/bench_windows.py --model en-tiny --data ../shared/data/iwslt2011
    python benchmarks/bench_windows.py --model en-tiny --setting 200 60 25   # one setting

Each setting restores the 288k merged words of dev2012 (lowercased, no marks) through
`Punctuator.restore` and scores the marks against Che's labels (IWSLT2011 convention). The
best double-overlap setting becomes the default stored in the exported artifact. With
--labels, a last column also scores the model's labels (its decision biases applied)
directly, as `punctum calibrate` measures dev2012, to two decimals.
"""

from __future__ import annotations

import argparse
import datetime
import time
from pathlib import Path

import numpy as np
from common import SHARED_DATA, existing_data

from punctum.calibration import _dev_probs, _index, decide, micro_f1
from punctum.corpora import CHE_LABEL_MAP, CHE_LABELS
from punctum.evaluation import ScoredFile, load_scored, score
from punctum.runtime import Punctuator
from punctum.text import get_inventory, parse
from punctum.windows import WindowConfig

SETTINGS = [
    WindowConfig(120, 0, 0, "none"),
    WindowConfig(120, 0, 0, "half"),
    WindowConfig(120, 40, 15),
    WindowConfig(120, 35, 15),
    WindowConfig(120, 30, 20),
    WindowConfig(64, 20, 10),
    WindowConfig(160, 50, 20),
    WindowConfig(200, 60, 25),
    WindowConfig(300, 60, 25),
    WindowConfig(400, 60, 25),
    WindowConfig(400, 40, 15),
    WindowConfig(512, 60, 25),
]


def run(model: str | None, dev: ScoredFile, config: WindowConfig, threads: int,
        bias: dict | None = None) -> tuple:
    punctuator = Punctuator.load(model, threads=threads, windows=config, post_bias=bias)
    start = time.perf_counter()
    text = punctuator.restore(" ".join(dev.labelled.words))
    seconds = time.perf_counter() - start
    hyp = ScoredFile(parse(text), is_final=None, has_case=True)
    scores = score(dev, hyp, get_inventory("en")).punct
    return scores, seconds


def label_f1(model: str | None, dev: ScoredFile, config: WindowConfig, threads: int,
             bias: dict | None = None) -> float:
    """Overall F1 of the model's labels on dev2012, as `punctum calibrate` scores them."""
    punctuator = Punctuator.load(model, threads=threads, windows=config, post_bias=bias)
    labels = punctuator.post_labels
    scored_as = np.array([_index(CHE_LABELS, CHE_LABEL_MAP.get(label, label))
                          for label in labels])
    ref = np.asarray([_index(CHE_LABELS, label) for label in dev.labelled.post])
    probs = _dev_probs(punctuator, dev.labelled.words, dev.is_final)
    return micro_f1(scored_as[decide(probs, punctuator.post_bias)], ref)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "iwslt2011")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--setting", type=int, nargs=3, metavar=("W", "L", "R"),
                        help="score one double-overlap setting instead of the sweep")
    parser.add_argument("--labels", action="store_true",
                        help="also score the labels as punctum calibrate does (two decimals)")
    parser.add_argument("--no-bias", action="store_true",
                        help="ignore the model's decision biases (punctum calibrate fits them "
                             "on this dev set)")
    args = parser.parse_args()
    args.data = existing_data(args.data, "dev2012.gz")
    settings = [WindowConfig(*args.setting)] if args.setting else SETTINGS
    dev = load_scored(args.data / "dev2012.gz", "che")
    print(f"dev2012, {len(dev.labelled)} words, model {args.model or 'en-tiny'}, "
          f"{datetime.date.today().isoformat()}")
    extra = " labels F1 |" if args.labels else ""
    print(f"| strategy | W | L | R | COMMA F1 | PERIOD F1 | QUESTION F1 | overall F1 | s |"
          f"{extra}")
    print("|---|---|---|---|---|---|---|---|---|" + ("---|" if args.labels else ""))
    bias = {} if args.no_bias else None
    for config in settings:
        scores, seconds = run(args.model, dev, config, args.threads, bias)
        per = scores.per_label
        labels = (f" {label_f1(args.model, dev, config, args.threads, bias) * 100:.2f} |"
                  if args.labels else "")
        print(f"| {config.strategy} | {config.size} | {config.effective_left} | "
              f"{config.effective_right} | {per['COMMA'].f1 * 100:.1f} | "
              f"{per['PERIOD'].f1 * 100:.1f} | {per['QUESTION'].f1 * 100:.1f} | "
              f"{scores.overall.f1 * 100:.2f} | {seconds:.1f} |{labels}", flush=True)


if __name__ == "__main__":
    main()
