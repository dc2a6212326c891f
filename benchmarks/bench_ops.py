"""Where a model's forward time goes: ONNX Runtime's profile, summed per operator type.

    python benchmarks/bench_ops.py --model en-tiny
    python benchmarks/bench_ops.py --model en-tiny --model /tmp/en-tiny-int8-convs  # compare

One single-threaded session per model runs --batch windows of --width subwords (random ids,
all of full length) --repeats times after a warm-up; prints subwords per second, and per
operator type its share of the node time in a second, profiled session's runs.
Single-threaded, so that the shares are the work itself, not the waiting of threads.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import onnxruntime
from common import hardware

from punctum.artifact import read_artifact, resolve


def _session(model_file: Path, profile_prefix: str | None = None):
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    if profile_prefix:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    return onnxruntime.InferenceSession(str(model_file), options,
                                        providers=["CPUExecutionProvider"])


def profile(model: str, batch: int, width: int, repeats: int) -> dict:
    """Subwords per second and {op type: share of node time} of one model."""
    artifact = read_artifact(resolve(model))
    rng = np.random.default_rng(0)
    vocab = artifact.meta["model_config"]["vocab_size"]
    feeds = {"ids": rng.integers(4, vocab, (batch, width)).astype(np.int64),
             "lengths": np.full(batch, width, dtype=np.int64)}
    if "pauses" in artifact.meta["model"]["inputs"]:
        feeds["pauses"] = np.zeros((batch, width), dtype=np.int64)
    timed = _session(artifact.model_file)
    timed.run(None, feeds)  # warm-up
    start = time.perf_counter()
    for _ in range(repeats):
        timed.run(None, feeds)
    seconds = (time.perf_counter() - start) / repeats
    with tempfile.TemporaryDirectory() as tmp:  # the profile from a second session
        profiled = _session(artifact.model_file, str(Path(tmp) / "profile"))
        for _ in range(1 + repeats):
            profiled.run(None, feeds)
        events = json.loads(Path(profiled.end_profiling()).read_text())
    per_op = collections.Counter()
    for event in events:
        if event.get("cat") == "Node" and "op_name" in event.get("args", {}):
            per_op[event["args"]["op_name"]] += event["dur"]
    total = sum(per_op.values()) or 1
    return {"model": artifact.name, "path": str(artifact.path),
            "precision": artifact.meta["model"].get("precision"),
            "subwords_per_s": round(batch * width / seconds),
            "op_share_percent": {op: round(100 * t / total, 1)
                                 for op, t in per_op.most_common()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", action="append", help="model name or folder (repeatable)")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--width", type=int, default=402)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    results = [profile(m, args.batch, args.width, args.repeats) for m in args.model or ["en-tiny"]]
    print(json.dumps({"batch": args.batch, "width": args.width, "threads": 1,
                      "results": results, "hardware": hardware(),
                      "date": datetime.date.today().isoformat()}, indent=2))


if __name__ == "__main__":
    main()
