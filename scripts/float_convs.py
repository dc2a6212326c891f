"""Rewrite an int8 artifact's quantized convolutions as fp32 Conv, from its own weights.

    python scripts/float_convs.py punctum/assets/en-tiny

For artifacts exported before `punctum export` kept convolutions in fp32 (see
punctum/train/onnx_graph.py): same weights, no training checkpoint needed, 18% more subwords/s
on one thread of the development CPU. Prints the ONNX agreement (per-position argmax of both
heads) between the old and the new model on random ids, then replaces model.onnx and notes the
change in punctum.json.
Needs punctum[train] (the onnx package).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime

from punctum.artifact import ARTIFACT_FILE
from punctum.train.onnx_graph import float_convs


def agreement(old: Path, new: Path, meta: dict, n_windows: int = 16, width: int = 200) -> float:
    """Share of positions whose argmax labels agree between two ONNX files (random ids)."""
    rng = np.random.default_rng(0)
    vocab = meta["model_config"]["vocab_size"]
    feeds = {"ids": rng.integers(4, vocab, (n_windows, width)).astype(np.int64),
             "lengths": np.full(n_windows, width, dtype=np.int64)}
    if "pauses" in meta["model"]["inputs"]:
        feeds["pauses"] = np.zeros((n_windows, width), dtype=np.int64)
    outputs = [onnxruntime.InferenceSession(str(p), providers=["CPUExecutionProvider"])
               .run(None, feeds) for p in (old, new)]
    same = [(a.argmax(-1) == b.argmax(-1)).mean() for a, b in zip(*outputs)]
    return float(np.mean(same))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("artifact", type=Path, help="artifact folder with an int8 model.onnx")
    args = parser.parse_args()
    meta_file = args.artifact / ARTIFACT_FILE
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    model_file = args.artifact / meta["model"]["file"]
    model = onnx.load(str(model_file))
    count = float_convs(model)
    if count == 0:
        print(f"{model_file}: no quantized convolution to rewrite")
        return 0
    onnx.checker.check_model(model)
    rewritten = model_file.with_suffix(".float-convs.onnx")
    onnx.save(model, str(rewritten))
    share = agreement(model_file, rewritten, meta)
    rewritten.replace(model_file)
    meta["model"]["precision"] += ", fp32 convolutions"
    meta["model"]["float_convs"] = {"rewritten": count, "label_agreement_random_ids": share}
    meta_file.write_text(json.dumps(meta, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{model_file}: {count} convolutions now fp32; label agreement with the int8 "
          f"convolutions on random ids {share:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
