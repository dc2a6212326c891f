"""A training checkpoint made small enough to carry: weights in fp16, no optimizer state.

    python scripts/slim_checkpoint.py runs/tiny-gpu-a/best.pt /tmp/tiny-a.pt
    punctum export /tmp/tiny-a.pt OUT --name en-tiny \
        --tokenizer punctum/assets/en-tiny/tokenizer.json

Drops the optimizer, scheduler, sampler and RNG state (so it cannot be resumed) and stores
floating-point weights in fp16: en-tiny's 89 MB checkpoint becomes 15 MB, under the 16 MiB a
file may be when it comes back from a lent GPU machine (docs/GPU.md). `punctum export` reads it
as it reads any checkpoint (the weights are cast back to fp32 on loading); give it the
tokenizer, which stays beside the original checkpoint. Needs punctum[train].
"""

from __future__ import annotations

import argparse
import sys

from punctum.train.checkpoint import load_checkpoint, save_atomic
from punctum.train.soup import RUN_STATE


def slim(source: str, out: str) -> dict:
    """Write `source` without its training state, weights in fp16; returns its `state`."""
    saved = load_checkpoint(source)
    if not isinstance(saved, dict) or not isinstance(saved.get("model"), dict):
        raise ValueError(f"{source}: not a training checkpoint (no model weights)")
    for key in RUN_STATE:
        saved.pop(key, None)
    saved["model"] = {name: tensor.half() if tensor.is_floating_point() else tensor
                      for name, tensor in saved["model"].items()}
    save_atomic(saved, out)
    return saved.get("state", {})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoint", help="a training checkpoint (best.pt or last.pt)")
    parser.add_argument("out", help="the slim checkpoint to write")
    args = parser.parse_args()
    try:
        state = slim(args.checkpoint, args.out)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{args.out}: step {state.get('step')}, best dev F1 {state.get('best_f1')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
