"""Bulk restore speed of several window settings, interleaved in one process.

    python benchmarks/bench_window_speed.py --model en-tiny --setting 400 16 8 --setting 256 12 6

Restores the 12,297 merged words of IWSLT2011 test2011 as one text with
`Punctuator.restore` under each setting in turn, --repeats rounds, and prints each
setting's median words per second. Interleaving keeps the machine's drift (this 2-core
machine's speed moves by 10% within an hour) out of the comparison; bench_api.py gives the
absolute figures. Accuracy of a setting: bench_windows.py (dev2012), bench_iwslt.py
--window (test2011).
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import time
from pathlib import Path

from common import SHARED_DATA, existing_data, hardware

from punctum.corpora import read_che
from punctum.runtime import Punctuator
from punctum.windows import WindowConfig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "iwslt2011")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--setting", type=int, nargs=3, action="append", required=True,
                        metavar=("W", "L", "R"))
    parser.add_argument("--repeats", type=int, default=25)
    args = parser.parse_args()
    args.data = existing_data(args.data, "test2011")
    words = read_che(args.data / "test2011").labelled().words
    text = " ".join(words)
    settings = [tuple(s) for s in args.setting]
    models = {s: Punctuator.load(args.model, threads=args.threads, windows=WindowConfig(*s))
              for s in settings}
    for punctuator in models.values():
        punctuator.restore(text)  # warm-up
    seconds: dict[tuple, list[float]] = {s: [] for s in settings}
    for _ in range(args.repeats):
        for setting, punctuator in models.items():
            start = time.perf_counter()
            punctuator.restore(text)
            seconds[setting].append(time.perf_counter() - start)
    print("| W / L / R | words/s (median) |")
    print("|---|---|")
    for setting in settings:
        rate = len(words) / statistics.median(seconds[setting])
        print(f"| {' / '.join(map(str, setting))} | {rate:,.0f} |")
    print(f"\n{hardware()}, {datetime.date.today().isoformat()}, {args.repeats} rounds")


if __name__ == "__main__":
    main()
