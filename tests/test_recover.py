"""Trainable weights read back from exported artifacts (punctum.train.recover) and
`init_from` an artifact."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")

from punctum.train.checkpoint import load_checkpoint  # noqa: E402
from punctum.train.recover import is_artifact, recover_state_dict  # noqa: E402


def _checkpoint_weights(tiny_run) -> dict:
    return load_checkpoint(tiny_run / "best.pt")["model"]


def _int8_step(value: torch.Tensor) -> float:
    """An upper bound of half an int8 step for any of the exporter's scales."""
    return float(value.max() - value.min()) / 254 + 1e-6


def test_int8_artifact_weights_are_the_checkpoint_up_to_rounding(tiny_run, tiny_artifact):
    kind, config, state = recover_state_dict(tiny_artifact)
    expected = _checkpoint_weights(tiny_run)
    assert kind == "cnn_bilstm" and config["bilstm_hidden"] == 32
    assert sorted(state) == sorted(expected)
    for name, value in expected.items():
        assert state[name].shape == value.shape, name
        error = float((state[name] - value).abs().max())
        if name.startswith("convs.") or name.endswith(".bias"):
            assert error < 1e-6, name  # fp32 in the graph: exact
        else:
            assert error <= _int8_step(value), name
        assert error < 0.05 * float(value.abs().max()) + 1e-6, name


@pytest.fixture(scope="module")
def fp32_artifact(tiny_run, tmp_path_factory):
    from punctum.train.export import ExportOptions, export_artifact, parity_texts

    folder = tmp_path_factory.mktemp("fp32") / "tiny"
    options = ExportOptions(int8=False, name="tiny", window_size=24, window_left=6,
                            window_right=4, lexicon_documents=0)
    export_artifact(tiny_run / "best.pt", folder, tiny_run / "tokenizer.json", options,
                    parity_texts(tiny_run / "best.pt"))
    return folder


def test_fp32_artifact_weights_are_the_checkpoint(tiny_run, fp32_artifact):
    _, _, state = recover_state_dict(fp32_artifact)
    for name, value in _checkpoint_weights(tiny_run).items():
        torch.testing.assert_close(state[name], value, atol=1e-6, rtol=0, msg=name)


def test_int8_convolutions_of_older_exports_are_read_too(tiny_run, fp32_artifact, tmp_path):
    """Artifacts quantized with ONNX Runtime's defaults hold ConvInteger weights."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder = tmp_path / "legacy"
    shutil.copytree(fp32_artifact, folder)
    root, level = logging.getLogger(), logging.getLogger().level
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(str(fp32_artifact / "model.onnx"), str(folder / "model.onnx"),
                         weight_type=QuantType.QInt8)
    finally:
        root.setLevel(level)
    _, _, state = recover_state_dict(folder)
    for name, value in _checkpoint_weights(tiny_run).items():
        assert float((state[name] - value).abs().max()) <= _int8_step(value), name


def test_recovered_model_predicts_like_the_onnx_model(tiny_artifact, tiny_run):
    """The read-back model is as close to the int8 ONNX model as the checkpoint it was
    exported from (ONNX Runtime's int8 activations add noise to both alike)."""
    import onnxruntime

    from punctum.models import build_model
    from punctum.train.checkpoint import load_checkpoint

    kind, config, state = recover_state_dict(tiny_artifact)
    recovered, original = build_model(kind, config).eval(), build_model(kind, config).eval()
    recovered.load_state_dict(state)
    original.load_state_dict(load_checkpoint(tiny_run / "best.pt")["model"])
    rng = np.random.default_rng(0)
    ids = rng.integers(4, config["vocab_size"], (3, 40)).astype(np.int64)
    lengths = np.array([40, 25, 6], dtype=np.int64)
    session = onnxruntime.InferenceSession(str(tiny_artifact / "model.onnx"),
                                           providers=["CPUExecutionProvider"])
    onnx_out = session.run(None, {"ids": ids, "lengths": lengths})
    inputs = (torch.from_numpy(ids), torch.from_numpy(lengths))
    with torch.no_grad():
        pairs = zip(onnx_out, recovered(*inputs), original(*inputs))
    valid = np.arange(40)[None, :] < lengths[:, None]
    for onnx, mine, theirs in pairs:
        mine, theirs = mine.numpy(), theirs.numpy()
        assert (onnx.argmax(-1) == mine.argmax(-1))[valid].mean() > 0.95
        assert np.abs(mine - theirs)[valid].mean() < 0.1
        assert np.abs(onnx - mine)[valid].mean() < np.abs(onnx - theirs)[valid].mean() + 0.05


def test_ensembles_and_other_files_are_refused(tmp_path, tiny_artifact):
    assert is_artifact(tiny_artifact) and is_artifact("en-tiny")
    assert not is_artifact(tmp_path / "best.pt") and not is_artifact("no-such-model")
    with pytest.raises(ValueError, match="ensemble"):
        recover_state_dict(__import__("punctum.artifact").artifact.ASSETS / "en-ensemble")
    folder = tmp_path / "tagger"
    shutil.copytree(tiny_artifact, folder)
    meta = json.loads((folder / "punctum.json").read_text())
    for change in ({"model_config": {**meta["model_config"], "head_hidden": 8}},
                   {"model_config": {**meta["model_config"], "pause_buckets": 4}},
                   {"model": {**meta["model"], "precision": "int8 (per channel)"}}):
        (folder / "punctum.json").write_text(json.dumps({**meta, **change}))
        with pytest.raises(ValueError, match="weights.safetensors"):
            recover_state_dict(folder)
    (folder / "punctum.json").write_text(json.dumps({**meta, "kind": "transformer_tagger"}))
    with pytest.raises(ValueError, match="unknown transformer_tagger config key"):
        recover_state_dict(folder)


def test_init_from_an_artifact_takes_its_tokenizer_and_weights(tiny_corpus, tiny_artifact,
                                                               tmp_path):
    import tomllib

    from conftest import TINY_RECIPE

    from punctum.train.recipe import parse_recipe
    from punctum.train.trainer import train

    raw = tomllib.loads(TINY_RECIPE)
    raw["train"].update(steps=1, eval_every=1, checkpoint_every=1, lr=1e-12,
                        init_from=str(tiny_artifact))
    train(parse_recipe(raw, tiny_corpus), tmp_path / "tuned", progress=False)
    assert (tmp_path / "tuned" / "tokenizer.json").read_text() == \
        (tiny_artifact / "tokenizer.json").read_text()
    tuned = load_checkpoint(tmp_path / "tuned" / "last.pt")["model"]
    for name, value in recover_state_dict(tiny_artifact)[2].items():
        torch.testing.assert_close(tuned[name], value, atol=1e-6, rtol=0, msg=name)


def test_init_from_a_missing_model_is_one_clear_error(tiny_corpus, tmp_path):
    import tomllib

    from conftest import TINY_RECIPE

    from punctum.train.recipe import parse_recipe
    from punctum.train.trainer import train

    raw = tomllib.loads(TINY_RECIPE)
    raw["train"]["init_from"] = "no-such-model"
    with pytest.raises(FileNotFoundError, match="no-such-model: not a checkpoint file.*en-tiny"):
        train(parse_recipe(raw, tiny_corpus), tmp_path / "run", progress=False)


# ----------------------------------------------------------------------------- Transformer taggers

def _tiny_taggers(tmp_path):
    """A scratch Transformer tagger and one initialised from a tiny random BERT folder."""
    transformers = pytest.importorskip("transformers")
    from punctum.models.transformer_tagger import TransformerTagger, TransformerTaggerConfig

    torch.manual_seed(0)
    scratch = TransformerTagger(TransformerTaggerConfig(
        120, 5, 4, max_len=64, n_layers=2, d_model=32, n_heads=2, d_ff=64, dropout=0.0))
    bert = transformers.BertConfig(vocab_size=120, hidden_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, intermediate_size=64)
    transformers.BertModel(bert).save_pretrained(tmp_path / "bert")
    pretrained = TransformerTagger.from_pretrained(str(tmp_path / "bert"), 5, 4, dropout=0.0)
    models = {"scratch": scratch.eval(), "bert": pretrained.eval()}
    with torch.no_grad():  # distinct values everywhere, as after training: the exporter
        for model in models.values():  # would merge equal tensors (fresh zero biases)
            for parameter in model.parameters():
                parameter.normal_(0.0, 0.1)
    return models


@pytest.mark.parametrize("per_channel", [True, False])
def test_transformer_weights_are_read_back_from_int8_graphs(tmp_path, per_channel):
    import dataclasses
    import warnings

    from punctum.train.export import export_onnx, quantize_int8
    from punctum.train.recover import _transformer_from_onnx

    for name, model in _tiny_taggers(tmp_path).items():
        fp32, int8 = tmp_path / f"{name}-fp32.onnx", tmp_path / f"{name}-int8.onnx"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            export_onnx(model, fp32)
        quantize_int8(fp32, int8, per_channel=per_channel)
        config = json.loads(json.dumps(dataclasses.asdict(model.config)))
        state = _transformer_from_onnx(int8, config)
        expected = model.state_dict()
        assert sorted(state) == sorted(expected), name
        for key, value in expected.items():
            error = float((state[key] - value).abs().max())
            assert error <= _int8_step(value), (name, key)
        exact = _transformer_from_onnx(fp32, config)
        for key, value in expected.items():
            torch.testing.assert_close(exact[key], value, atol=1e-6, rtol=0, msg=key)


def test_en_accurate_is_read_back_and_predicts_like_its_onnx_model():
    import onnxruntime

    from punctum import artifact
    from punctum.models import build_model

    folder = artifact.resolve("en-accurate")
    kind, config, state = recover_state_dict(folder)
    model = build_model(kind, config).eval()
    model.load_state_dict(state)
    tokenizer = artifact.read_artifact(folder).tokenizer_file
    from punctum.tokenizer import SubwordTokenizer

    words = ("so what do you think i think it is great but we should ask them first "
             "because they know the city and we do not").split()
    ids = np.asarray([SubwordTokenizer.load(tokenizer).encode_words(words).ids], np.int64)
    lengths = np.asarray([ids.shape[1]], np.int64)
    session = onnxruntime.InferenceSession(str(folder / "model.onnx"),
                                           providers=["CPUExecutionProvider"])
    with torch.no_grad():
        torch_out = model(torch.from_numpy(ids), torch.from_numpy(lengths))
    for a, b in zip(session.run(None, {"ids": ids, "lengths": lengths}), torch_out):
        assert (a.argmax(-1) == b.numpy().argmax(-1)).mean() > 0.9


def test_init_from_en_accurate_needs_no_pretrained_package(tiny_corpus, tmp_path):
    """The encoder is rebuilt from the artifact's model_config and its tokenizer comes
    along: no pretrained folder or package is read (the recipe names none)."""
    import tomllib

    from conftest import TINY_RECIPE

    from punctum.train.recipe import parse_recipe
    from punctum.train.trainer import train

    raw = tomllib.loads(TINY_RECIPE)
    raw["model"] = {"kind": "transformer_tagger", "dropout": 0.0}
    raw["tokenizer"] = {"kind": "pretrained", "label_position": "last"}
    raw["train"].update(steps=1, eval_every=1, checkpoint_every=1, lr=1e-12, batch_size=2,
                        init_from="en-accurate")
    train(parse_recipe(raw, tiny_corpus), tmp_path / "tuned", progress=False)
    from punctum import artifact

    folder = artifact.resolve("en-accurate")
    assert (tmp_path / "tuned" / "tokenizer.json").read_bytes() == \
        (folder / "tokenizer.json").read_bytes()
    tuned = load_checkpoint(tmp_path / "tuned" / "last.pt")["model"]
    for name, value in recover_state_dict(folder)[2].items():
        torch.testing.assert_close(tuned[name], value, atol=1e-6, rtol=0, msg=name)


# ----------------------------------------------------------------------------- weight averaging

def test_soup_of_a_checkpoint_and_its_artifact(tiny_run, tiny_artifact):
    from punctum.train.soup import soup

    checkpoint, base = soup([str(tiny_artifact), str(tiny_run / "best.pt")])
    original = _checkpoint_weights(tiny_run)
    read_back = recover_state_dict(tiny_artifact)[2]
    assert base == 1 and "optimizer" not in checkpoint and checkpoint["recipe"]
    for name, value in original.items():
        torch.testing.assert_close(checkpoint["model"][name], (value + read_back[name]) / 2)


def test_soup_on_a_base_checkpoint_averages_the_sources_alone(tiny_run, tiny_artifact):
    from punctum.train.soup import soup

    artifact = str(tiny_artifact)
    checkpoint, base = soup([artifact, artifact, artifact, str(tiny_run / "best.pt")],
                            base=str(tiny_run / "best.pt"))
    original = _checkpoint_weights(tiny_run)
    read_back = recover_state_dict(tiny_artifact)[2]
    assert base == -1 and "optimizer" not in checkpoint and checkpoint["recipe"]
    for name, value in original.items():  # 3:1, the base's own weights not counted again
        torch.testing.assert_close(checkpoint["model"][name], (3 * read_back[name] + value) / 4)
    with pytest.raises(ValueError, match="base must be a training checkpoint"):
        soup([artifact], base=artifact)


def test_soup_refuses_what_does_not_average(tiny_run, tiny_artifact):
    from punctum.train.soup import average, soup

    with pytest.raises(ValueError, match="training checkpoint"):
        soup([str(tiny_artifact)])
    state = _checkpoint_weights(tiny_run)
    smaller = {**state, "embed.weight": state["embed.weight"][:5]}
    with pytest.raises(ValueError, match="embed.weight: shapes"):
        average([state, smaller])
    with pytest.raises(ValueError, match="differ in their weights"):
        average([state, {k: v for k, v in state.items() if k != "embed.weight"}])



@pytest.mark.parametrize("content", [{"a": 1}, [1, 2], "tensor"])
def test_average_weights_script_refuses_other_files_in_one_line(tiny_run, tmp_path, content):
    import subprocess
    import sys

    import torch

    source = tmp_path / "odd.pt"
    torch.save(torch.zeros(3) if content == "tensor" else content, source)
    script = Path(__file__).parents[1] / "scripts" / "average_weights.py"
    result = subprocess.run([sys.executable, str(script), str(tiny_run / "best.pt"),
                             str(source), "--out", str(tmp_path / "soup.pt")],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "odd.pt: not a punctum training checkpoint" \
        in result.stderr and "Traceback" not in result.stderr
    result = subprocess.run([sys.executable, str(script), str(tiny_run / "best.pt"),
                             "--out", str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 2 and "is a folder" in result.stderr


def test_average_weights_script_takes_a_base_checkpoint(tiny_run, tiny_artifact, tmp_path):
    import subprocess
    import sys

    script = Path(__file__).parents[1] / "scripts" / "average_weights.py"
    out = tmp_path / "soup" / "best.pt"
    result = subprocess.run([sys.executable, str(script), str(tiny_artifact), str(tiny_artifact),
                             "--base", str(tiny_run / "best.pt"), "--out", str(out)],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert (out.parent / "tokenizer.json").read_bytes() == \
        (tiny_run / "tokenizer.json").read_bytes()
    for name, value in recover_state_dict(tiny_artifact)[2].items():
        torch.testing.assert_close(load_checkpoint(out)["model"][name], value)


def test_exporting_without_weights_removes_an_earlier_exports_weights(tiny_run, tmp_path):
    from punctum.train.export import ExportOptions, export_artifact, parity_texts

    folder = tmp_path / "model"
    for include_weights in (True, False):
        options = ExportOptions(name="tiny", int8=False, window_size=24, window_left=6,
                                window_right=4, lexicon_documents=0,
                                include_weights=include_weights)
        export_artifact(tiny_run / "best.pt", folder, tiny_run / "tokenizer.json", options,
                        parity_texts(tiny_run / "best.pt"))
        assert (folder / "weights.safetensors").exists() == include_weights
