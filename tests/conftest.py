"""Shared fixtures: small corpora the tests write themselves (never copied from real data)."""

import os
import random

import pytest
from hypothesis import settings

# CI explores the same examples on every run (stable); local runs explore new ones.
settings.register_profile("ci", derandomize=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

SUBJECTS = ["i", "we", "you", "they", "my friend", "the team", "our teacher", "doctor smith"]
VERBS = ["like", "see", "build", "visit", "remember", "want", "need", "paint"]
OBJECTS = ["the house", "a boat", "new york", "the garden", "an apple", "the old bridge",
           "my car", "the iphone"]
QUESTION_STARTS = ["do", "can", "would", "should"]


def make_sentence(rng: random.Random) -> str:
    """A cased, punctuated sentence from a tiny grammar."""
    subject, verb, obj = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)
    kind = rng.random()
    if kind < 0.25:
        text = f"{rng.choice(QUESTION_STARTS)} {subject} {verb} {obj}?"
    elif kind < 0.5:
        text = f"well, {subject} {verb} {obj}, and {rng.choice(SUBJECTS)} {verb} it."
    else:
        text = f"{subject} {verb} {obj}."
    text = text.replace("new york", "New York").replace("iphone", "iPhone")
    text = text.replace("doctor smith", "Doctor Smith")
    return text[0].upper() + text[1:]


def make_document(rng: random.Random, n_sentences: int) -> str:
    return " ".join(make_sentence(rng) for _ in range(n_sentences))


@pytest.fixture(scope="session")
def tiny_corpus(tmp_path_factory):
    """A folder with train.txt (one document per line) and dev.che (Che format)."""
    from punctum.text import parse

    folder = tmp_path_factory.mktemp("corpus")
    rng = random.Random(0)
    lines = [make_document(rng, rng.randint(3, 12)) for _ in range(300)]
    (folder / "train.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    dev = parse(" ".join(make_document(rng, 10) for _ in range(20)))
    (folder / "dev.che").write_text(
        "".join(f"{w}\t{p}\n" for w, p in zip(dev.words, dev.post)), encoding="utf-8")
    return folder


TINY_RECIPE = """
[model]
kind = "cnn_bilstm"
embed_dim = 24
conv_channels = 24
bilstm_hidden = 32
lstm_hidden = 32
dropout = 0.1

[tokenizer]
vocab_size = 200

[data]
dev = "dev.che"
max_subwords = 64
val_fraction = 0.0  # the split hashes the corpus path, a new temporary folder each run
[[data.sources]]
path = "train.txt"

[train]
steps = 80
batch_size = 16
lr = 0.01
eval_every = 40
checkpoint_every = 40
dev_words = 400
threads = 1
"""


@pytest.fixture(scope="session")
def tiny_run(tiny_corpus, tmp_path_factory):
    """A tiny CNN-BiLSTM trained for a few seconds on the generated corpus."""
    pytest.importorskip("torch")
    import tomllib

    from punctum.train.recipe import parse_recipe
    from punctum.train.trainer import train

    folder = tmp_path_factory.mktemp("tiny_run")
    recipe = parse_recipe(tomllib.loads(TINY_RECIPE), tiny_corpus, name="tiny")
    train(recipe, folder, progress=False)
    return folder


@pytest.fixture(scope="session")
def tiny_artifact(tiny_run, tmp_path_factory):
    """The tiny run exported as an int8 ONNX artifact folder."""
    from punctum.train.export import ExportOptions, export_artifact, parity_texts

    folder = tmp_path_factory.mktemp("artifact") / "tiny"
    options = ExportOptions(name="tiny", window_size=24, window_left=6, window_right=4,
                            lexicon_documents=300)
    export_artifact(tiny_run / "best.pt", folder, tiny_run / "tokenizer.json", options,
                    parity_texts(tiny_run / "best.pt"))
    return folder


@pytest.fixture
def torchrun():
    """Run `punctum ARGS...` under torchrun with 2 CPU processes; returns (returncode,
    output). Kills the whole process group on timeout (torchrun's workers too)."""
    import signal
    import subprocess
    import sys

    def run(args: list[str], timeout: float = 240) -> tuple[int, str]:
        command = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                   "--nproc_per_node=2", "-m", "punctum", *args]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, env={**os.environ, "OMP_NUM_THREADS": "1"},
                                   start_new_session=True)
        try:
            output = process.communicate(timeout=timeout)[0]
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            raise
        return process.returncode, output

    return run
