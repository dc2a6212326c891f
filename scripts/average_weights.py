"""Average the weights of several runs of one model ("model soup") into a checkpoint.

    python scripts/average_weights.py runs/en-tiny-long/best.pt en-tiny --out runs/soup/best.pt
    python scripts/average_weights.py A A A B --base RUN/best.pt --out runs/soup31/best.pt  # 3:1
    punctum export runs/soup/best.pt runs/soup/artifact --name en-tiny --window 400 16 8

Models fine-tuned from the same starting weights can be averaged parameter by parameter
(`punctum.train.soup`; Wortsman et al. 2022, "Model soups"). Each
source is a training checkpoint or an artifact (a bundled name or a folder, its weights read back
by `punctum.train.recover`); all must have the same architecture. The output is the first
checkpoint among the sources (or `--base`, whose own weights are left out of the mean) with its
weights replaced (its recipe, labels and tokenizer go with it: tokenizer.json is copied beside
the output), ready for `punctum export`. A source named n times weighs n times. Optimizer and
sampler state are dropped, so it is not a checkpoint to resume. Needs punctum[train].
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from punctum.train.checkpoint import save_atomic
from punctum.train.soup import soup


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+",
                        help="checkpoints (.pt) or artifacts (a bundled name or a folder)")
    parser.add_argument("--out", type=Path, required=True, help="the checkpoint to write")
    parser.add_argument("--base", help="a training checkpoint whose recipe, labels and "
                        "tokenizer the output takes, its weights not averaged (default: the "
                        "first checkpoint among the sources)")
    args = parser.parse_args()
    try:
        if args.out.is_dir():
            raise ValueError(f"--out {args.out}: is a folder; give the checkpoint's file name "
                             f"(for example {args.out / 'best.pt'})")
        checkpoint, base = soup(args.sources, args.base)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        save_atomic(checkpoint, args.out)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    tokenizer = Path(args.base if base < 0 else args.sources[base]).parent / "tokenizer.json"
    if tokenizer.is_file() and tokenizer.resolve() != (args.out.parent / tokenizer.name).resolve():
        shutil.copy(tokenizer, args.out.parent / tokenizer.name)
    print(f"{args.out}: the mean of {len(args.sources)} models' weights")
    return 0


if __name__ == "__main__":
    sys.exit(main())
