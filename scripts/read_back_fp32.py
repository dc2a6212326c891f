"""Write an fp32 copy of an int8 artifact from its own weights, read back from model.onnx.

    python scripts/read_back_fp32.py en-accurate /tmp/en-accurate-fp32
    python benchmarks/bench_iwslt.py --model /tmp/en-accurate-fp32 --no-bias

The weights come from `punctum.train.recover` (the int8 weights dequantized, as `init_from`
starts from them); the model is exported again without quantization. This shows what the
int8 activations of ONNX Runtime's dynamic quantization cost, and checks the read-back: the
fp32 copy should score at least as well as the int8 model. Everything else in the folder
(tokenizer, biases, capitalised.json) is copied as it is. Needs punctum[train].
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import warnings
from pathlib import Path

from punctum import artifact as artifacts
from punctum.models import build_model
from punctum.train.export import export_onnx
from punctum.train.recover import recover_state_dict


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a bundled model name or an artifact folder")
    parser.add_argument("out", type=Path, help="the folder to write (must not exist)")
    args = parser.parse_args()
    if args.out.exists():
        print(f"error: {args.out} exists", file=sys.stderr)
        return 2
    source = artifacts.resolve(args.model)
    kind, config, state = recover_state_dict(source)
    model = build_model(kind, config).eval()
    model.load_state_dict(state)
    shutil.copytree(source, args.out)
    meta_file = args.out / artifacts.ARTIFACT_FILE
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's tracer warnings
        export_onnx(model, args.out / meta["model"]["file"])
    meta["model"]["precision"] = f"fp32 (read back from {meta['model']['precision']})"
    meta.pop("scores", None)
    meta_file.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"{args.out}: fp32 {kind} read back from {source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
