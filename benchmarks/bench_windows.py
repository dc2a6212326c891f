"""Window settings swept on IWSLT dev2012: double overlap against no overlap and half windows.

    python benchmarks/bench_windows.py --model en-tiny --data ../shared/data/iwslt2011
    python benchmarks/bench_windows.py --model en-tiny --setting 200 60 25   # one setting

Each setting restores the 288k merged words of dev2012 (lowercased, no marks) through
`Punctuator.restore` and scores the marks against Che's labels (IWSLT2011 convention). The
best double-overlap setting becomes the default stored in the exported artifact.
"""

from __future__ import annotations

import argparse
import datetime
import time
from pathlib import Path

from common import SHARED_DATA, existing_data

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "iwslt2011")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--setting", type=int, nargs=3, metavar=("W", "L", "R"),
                        help="score one double-overlap setting instead of the sweep")
    parser.add_argument("--no-bias", action="store_true",
                        help="ignore the model's decision biases (punctum calibrate fits them "
                             "on this dev set)")
    args = parser.parse_args()
    args.data = existing_data(args.data, "dev2012.gz")
    settings = [WindowConfig(*args.setting)] if args.setting else SETTINGS
    dev = load_scored(args.data / "dev2012.gz", "che")
    print(f"dev2012, {len(dev.labelled)} words, model {args.model or 'en-tiny'}, "
          f"{datetime.date.today().isoformat()}")
    print("| strategy | W | L | R | COMMA F1 | PERIOD F1 | QUESTION F1 | overall F1 | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for config in settings:
        scores, seconds = run(args.model, dev, config, args.threads,
                              {} if args.no_bias else None)
        per = scores.per_label
        print(f"| {config.strategy} | {config.size} | {config.effective_left} | "
              f"{config.effective_right} | {per['COMMA'].f1 * 100:.1f} | "
              f"{per['PERIOD'].f1 * 100:.1f} | {per['QUESTION'].f1 * 100:.1f} | "
              f"{scores.overall.f1 * 100:.1f} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
