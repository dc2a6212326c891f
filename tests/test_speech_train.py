"""CTC speech training with the shared trainer, on tone "speech" the test generates.

Each word of a tiny vocabulary is a tone of its own frequency; a comma is a short pause and a
sentence end a long one, so a small CtcEncoder can learn words and marks in a few steps.
"""

import json
import random
import tomllib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
soundfile = pytest.importorskip("soundfile")

from punctum.train.recipe import parse_recipe  # noqa: E402
from punctum.train.speech_task import speech_scores  # noqa: E402
from punctum.train.trainer import train  # noqa: E402

RATE = 16000
WORDS = {"one": 300, "two": 500, "three": 700, "four": 900, "five": 1100, "six": 1300}
PAUSE = {"": 0.04, ",": 0.15, ".": 0.35, "?": 0.35}


def tone_utterance(rng: random.Random) -> tuple[str, np.ndarray]:
    """A punctuated text and its tone rendering."""
    pieces, audio = [], []
    for _ in range(rng.randint(3, 6)):
        word = rng.choice(list(WORDS))
        mark = rng.choice(["", "", ","])
        pieces.append(word + mark)
        t = np.arange(int(0.12 * RATE)) / RATE
        audio.append(0.3 * np.sin(2 * np.pi * WORDS[word] * t))
        audio.append(np.zeros(int(PAUSE[mark] * RATE)))
    end = rng.choice([".", "?"])
    pieces[-1] = pieces[-1].rstrip(",") + end
    if end == "?":
        t = np.arange(int(0.1 * RATE)) / RATE
        audio.append(0.2 * np.sin(2 * np.pi * 1800 * t))  # a "rising" cue for questions
    audio.append(np.zeros(int(0.2 * RATE)))
    text = " ".join(pieces)
    return text[0].upper() + text[1:], np.concatenate(audio).astype(np.float32)


def write_manifest(folder, n, seed):
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    lines = []
    for i in range(n):
        text, audio = tone_utterance(rng)
        name = f"u{i:03d}.flac"
        soundfile.write(folder / name, audio, RATE)
        lines.append(json.dumps({"id": f"u{i}", "audio_filepath": name, "speaker": "tone",
                                 "duration": len(audio) / RATE, "text": text}))
    (folder / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    return folder / "manifest.jsonl"


RECIPE = """
[model]
kind = "ctc_encoder"
d_model = 32
n_heads = 4
n_layers = 2
d_ff = 64
subsample_channels = 8
dropout = 0.0
inter_layer = 1

[tokenizer]
vocab_size = 100

[data]
train = ["train/manifest.jsonl"]
dev = "dev/manifest.jsonl"
max_batch_seconds = 12.0
dev_utterances = 6
[data.features]
n_mels = 40
[data.spec_augment]
n_time_masks = 1
time_mask_width = 5
freq_mask_width = 4

[train]
steps = 24
lr = 0.003
eval_every = 12
checkpoint_every = 12
threads = 1
"""


@pytest.fixture(scope="module")
def speech_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("speech")
    write_manifest(root / "train", 40, seed=0)
    write_manifest(root / "dev", 6, seed=1)
    return root


def test_ctc_recipe_trains_evaluates_and_resumes(speech_root, tmp_path):
    raw = tomllib.loads(RECIPE)
    recipe = parse_recipe(raw, speech_root, name="tones")
    assert recipe.data.features.n_mels == 40 and recipe.data.spec_augment.n_time_masks == 1
    out = tmp_path / "run"
    state = train(recipe, out, progress=False)
    assert state.step == 24 and (out / "best.pt").exists() and (out / "tokenizer.json").exists()
    history = [h for h in state.history if "dev_wer" in h]
    assert len(history) == 2 and all(0.0 <= h["dev_wer"] for h in history)
    losses = [h["loss"] for h in state.history]
    assert losses[-1] < losses[0]
    assert list((out / "cache").glob("features.*.npz"))  # features computed once, cached
    raw["train"]["steps"] = 30
    longer = train(parse_recipe(raw, speech_root, name="tones"), out, resume=True,
                   progress=False)
    assert longer.step == 30


def test_speech_recipe_errors_name_the_key(speech_root):
    raw = tomllib.loads(RECIPE)
    raw["data"]["train"] = ["missing.jsonl"]
    with pytest.raises(FileNotFoundError, match="data.train"):
        parse_recipe(raw, speech_root)
    raw = tomllib.loads(RECIPE)
    raw["data"]["spec_augment"]["n_time_mask"] = 2
    with pytest.raises(ValueError, match="data.spec_augment.n_time_mask"):
        parse_recipe(raw, speech_root)
    for table, key, value, message in (
            ("data", "dev", 5, "data.dev must be a manifest path"),
            ("data", "train", [5], "data.train must be an array of manifest paths"),
            ("data", "max_batch_seconds", float("nan"), "data.max_batch_seconds must be a finite"),
            ("model", "dropout", "x", "model: dropout must be a number in \\[0, 1\\)")):
        raw = tomllib.loads(RECIPE)
        raw[table][key] = value
        with pytest.raises(ValueError, match=message):
            parse_recipe(raw, speech_root)


def test_speech_scores_align_words_and_select():
    refs = ["One, two three.", "Four five?"]
    perfect = speech_scores(refs, ["one, two three.", "four five?"], "en", with_marks=True)
    assert perfect["dev_wer"] == 0.0 and perfect["dev_f1"] == 1.0 and perfect["score"] == 1.0
    wrong = speech_scores(refs, ["one two three", "four six"], "en", with_marks=True)
    assert wrong["dev_f1"] == 0.0 and wrong["dev_wer"] == pytest.approx(1 / 5)
    asr = speech_scores(refs, ["one two three", "four six"], "en", with_marks=False)
    assert asr["score"] == pytest.approx(1 - 1 / 5)


def test_punctuation_adaptation_of_an_unpunctuated_model(speech_root, tmp_path):
    """ASR without marks, then adapted with marks: same vocabulary size, ids kept, the marks
    take the least-used pieces' ids, and the adapted run starts from the ASR weights."""
    from punctum.ctc_vocab import CtcVocabulary

    raw = tomllib.loads(RECIPE)
    raw["tokenizer"]["marks"] = False
    raw["model"]["inter_targets"] = "none"
    raw["train"].update(steps=8, eval_every=8, checkpoint_every=8)
    asr = train(parse_recipe(raw, speech_root), tmp_path / "asr", progress=False)
    assert asr.step == 8
    plain = CtcVocabulary.load(tmp_path / "asr" / "tokenizer.json")
    assert plain.marks == ()

    raw = tomllib.loads(RECIPE)
    raw["train"].update(steps=8, eval_every=8, checkpoint_every=8,
                        init_from=str(tmp_path / "asr" / "best.pt"))
    train(parse_recipe(raw, speech_root), tmp_path / "adapted", progress=False)
    adapted = CtcVocabulary.load(tmp_path / "adapted" / "tokenizer.json")
    assert adapted.size == plain.size and adapted.marks == (",", ".", "?", "!")
    kept = [t for t in plain.tokenizer.get_vocab() if adapted.tokenizer.token_to_id(t) is not None]
    assert len(kept) == plain.size - 4
    assert all(plain.tokenizer.token_to_id(t) == adapted.tokenizer.token_to_id(t) for t in kept)


def test_two_process_data_parallel_speech_run(speech_root, tmp_path, torchrun):
    """torchrun with 2 CPU processes (gloo) trains a CTC recipe to the end; rank 0 writes
    the checkpoints."""
    from punctum.train.checkpoint import load_checkpoint

    recipe = tmp_path / "tones.toml"
    recipe.write_text(RECIPE.replace("steps = 24", "steps = 4").replace(
        "eval_every = 12", "eval_every = 4").replace("checkpoint_every = 12",
                                                     "checkpoint_every = 4"))
    out = tmp_path / "ddp"
    returncode, output = torchrun(["train", str(recipe), "--out", str(out), "--data-root",
                                   str(speech_root), "--no-progress"])
    assert returncode == 0, output[-3000:]
    saved = load_checkpoint(out / "last.pt")
    assert saved["state"]["step"] == 4 and (out / "best.pt").exists()
    assert len(list((out / "cache").glob("features.*.npz"))) >= 1
