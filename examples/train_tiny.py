#!/usr/bin/env python3
"""Train, export and use a tiny CNN-BiLSTM in under a minute (needs punctum[train]).

    python examples/train_tiny.py /tmp/tiny        # writes corpus, run and model folders

The whole research loop on a toy corpus this script writes: a recipe (the same TOML tables
as recipes/en-tiny.toml, at a tiny size), `train`, `export` to int8 ONNX with its parity
check, then the exported folder restores text with no torch involved.
"""

import random
import sys
import tomllib
from pathlib import Path

import punctum
from punctum.train.export import ExportOptions, export_artifact, parity_texts
from punctum.train.recipe import parse_recipe
from punctum.train.trainer import train

RECIPE = """
[model]
kind = "cnn_bilstm"
embed_dim = 32
conv_channels = 32
bilstm_hidden = 48
lstm_hidden = 48

[tokenizer]
vocab_size = 200

[data]
dev = "dev.txt"
max_subwords = 64
[[data.sources]]
path = "train.txt"

[train]
steps = 150
batch_size = 16
lr = 0.01
eval_every = 50
checkpoint_every = 50
threads = 2
"""


def sentence(rng: random.Random) -> str:
    who = rng.choice(["we", "they", "my friend", "the team", "Doctor Smith"])
    what = rng.choice(["a boat", "the house", "New York", "the garden"])
    if rng.random() < 0.3:
        return f"Did {who} see {what}?"
    if rng.random() < 0.5:
        return f"Well, {who} saw {what}, and it was nice."
    return f"{who[0].upper()}{who[1:]} saw {what}."


def write_corpus(folder: Path) -> None:
    rng = random.Random(0)
    for name, n_lines in (("train.txt", 400), ("dev.txt", 20)):
        lines = [" ".join(sentence(rng) for _ in range(rng.randint(3, 8)))
                 for _ in range(n_lines)]
        (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "tiny-example")
    if (root / "run").exists():
        sys.exit(f"{root / 'run'} holds a run already: give another folder")
    root.mkdir(parents=True, exist_ok=True)
    write_corpus(root)
    recipe = parse_recipe(tomllib.loads(RECIPE), data_root=root, name="tiny-example")
    state = train(recipe, root / "run", progress=False)
    print(f"trained {state.step} steps, best dev F1 {state.best_f1 * 100:.1f}")
    options = ExportOptions(name="tiny-example", window_size=48, window_left=12,
                            window_right=6, min_agreement=0.98)
    meta = export_artifact(root / "run" / "best.pt", root / "model",
                           root / "run" / "tokenizer.json", options,
                           parity_texts(root / "run" / "best.pt"))
    print(f"exported {root / 'model'}: ONNX/torch agreement "
          f"{meta['parity']['label_agreement'] * 100:.1f}%")
    print(punctum.load(str(root / "model")).restore("well we saw a boat did they see new york"))


if __name__ == "__main__":
    try:
        main()
    except (OSError, ValueError) as error:  # a missing or unreadable file: one line
        sys.exit(f"{sys.argv[0]}: error: {error}")
