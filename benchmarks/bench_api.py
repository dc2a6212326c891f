"""Speed and memory of `Punctuator` through the public API, tokenization and rendering included.

    python benchmarks/bench_api.py --model en-tiny --data ../shared/data/iwslt2011 --threads 2
    python benchmarks/bench_api.py --model en-tiny --million     # peak RSS on 1,000,000 words
    python benchmarks/bench_api.py --model en-tiny --million-json   # the same with --json

- bulk: the 12,297 merged words of IWSLT2011 test2011 (lowercased, no marks) restored as one
  text with `Punctuator.restore`; words per second (median of --repeats after a warm-up).
- breakdown: seconds of one bulk restore spent in parsing, tokenization, prediction
  (tokenization, windows and the model) and rendering.
- paragraph: a 42-word paragraph, the length of the on-device paper's Table 5 example, restored
  with `Punctuator.restore`; median milliseconds over 50 runs after warm-up.
- batch effect: the share of labels that change when test2011, cut into texts of 12 or 60
  words, is predicted in one batch rather than text by text (see `batch_effect`).
- million (--million): `punctum restore` on a generated file holding 1,000,000 words on one
  line (the hardest case: no line breaks to cut at), in a child process; its peak resident
  memory (ru_maxrss) and wall time. --million-json: the same with `--json` (one JSON object
  with an entry per word, written part by part).
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import SHARED_DATA, existing_data, hardware

from punctum.corpora import read_che
from punctum.runtime import Punctuator

# Written for this benchmark: 42 words, starting like the on-device paper's Table 5 example.
PARAGRAPH = ("but what are the risks i am not technical so i need you to explain it simply "
             "we have customers in three countries and the data has to stay safe so tell me "
             "what happens if the two servers go down tonight")


def median_seconds(function, repeats: int) -> float:
    function()  # warm-up: session initialisation, allocations
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bulk(punctuator: Punctuator, data: Path, repeats: int) -> dict:
    words = read_che(data / "test2011").labelled().words
    text = " ".join(words)
    seconds = median_seconds(lambda: punctuator.restore(text), repeats)
    return {"words": len(words), "seconds": seconds, "words_per_s": len(words) / seconds}


def breakdown(punctuator: Punctuator, data: Path) -> dict:
    """Seconds per stage of one bulk restore: parse, tokenize, model (windows), render."""
    from punctum.text import parse, render

    text = " ".join(read_che(data / "test2011").labelled().words)
    punctuator.restore(text)  # warm-up
    stages, start = {}, time.perf_counter()
    labelled = parse(text, punctuator.inventory)
    stages["parse"] = time.perf_counter() - start
    start = time.perf_counter()
    for model in getattr(punctuator, "members", [punctuator]):  # an ensemble's: each member's
        model.tokenizer.encode_batch([labelled.words], add_special_tokens=False)
    stages["tokenize"] = time.perf_counter() - start
    start = time.perf_counter()
    punctuator.predict(labelled.words)  # tokenizes again, then windows and the model
    stages["predict"] = time.perf_counter() - start
    start = time.perf_counter()
    render(labelled, punctuator.inventory, sentence_case=True)
    stages["render"] = time.perf_counter() - start
    return {name: round(seconds, 3) for name, seconds in stages.items()}


def batch_effect(punctuator: Punctuator, data: Path) -> dict:
    """Share of labels (mark and case per word) that differ between predicting test2011's
    words as texts of n words all in one `predict_batch` and each text alone: an int8
    model's activations are quantized with one scale per ONNX batch, so near-ties can flip
    with the company a text keeps."""
    words = read_che(data / "test2011").labelled().words
    out = {}
    for n in (12, 60):
        texts = [words[i:i + n] for i in range(0, len(words), n)]
        together = punctuator.predict_batch(texts)
        alone = [punctuator.predict(text) for text in texts]
        changed = sum(a != b for x, y in zip(together, alone)
                      for a, b in zip(x.post + x.case, y.post + y.case))
        out[f"texts_of_{n}_words_percent"] = round(100 * changed / (2 * len(words)), 3)
    return out


def paragraph(punctuator: Punctuator) -> dict:
    assert len(PARAGRAPH.split()) == 42
    seconds = median_seconds(lambda: punctuator.restore(PARAGRAPH), 50)
    return {"ms": seconds * 1000, "output": punctuator.restore(PARAGRAPH)}


def million(model: str | None, threads: int, as_json: bool = False) -> dict:
    """Restore a generated 1,000,000-word file in a child process; its peak RSS."""
    sentence = "so what do you think about the new plan i think it is great and we should start"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "million.txt"
        repeats = -(-1_000_000 // len(sentence.split()))
        n_words = repeats * len(sentence.split())
        source.write_text(" ".join([sentence] * repeats) + "\n", encoding="utf-8")
        command = [sys.executable, "-m", "punctum", "restore", "-i", str(source), "-o",
                   str(Path(tmp) / "out.txt"), "--threads", str(threads)]
        if model:
            command += ["--model", model]
        if as_json:
            command.append("--json")
        start = time.perf_counter()
        peak_kb = int(subprocess.run([sys.executable, "-c", _PEAK_OF_CHILD, *command],
                                     check=True, capture_output=True, text=True).stdout)
        seconds = time.perf_counter() - start
    return {"words": n_words, "json": as_json, "seconds": seconds, "peak_rss_mb": peak_kb / 1024}


# Runs its arguments as a command and prints that command's peak RSS in KB (one child per
# measurement, so that runs do not share RUSAGE_CHILDREN's maximum).
_PEAK_OF_CHILD = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
                  "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model name or folder (default: en-tiny)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "iwslt2011")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--million", action="store_true", help="also the 1M-word memory run")
    parser.add_argument("--million-json", action="store_true",
                        help="also the 1M-word memory run with --json (per-word output)")
    args = parser.parse_args()
    args.data = existing_data(args.data, "test2011")
    punctuator = Punctuator.load(args.model, threads=args.threads)
    result = {"model": punctuator.artifact.name, "threads": args.threads,
              "bulk": bulk(punctuator, args.data, args.repeats),
              "breakdown_s": breakdown(punctuator, args.data),
              "paragraph": paragraph(punctuator),
              "batch_effect": batch_effect(punctuator, args.data), "hardware": hardware(),
              "date": datetime.date.today().isoformat()}
    if args.million:
        result["million"] = million(args.model, args.threads)
    if args.million_json:
        result["million_json"] = million(args.model, args.threads, as_json=True)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
