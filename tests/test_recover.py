"""Trainable weights read back from exported artifacts (punctum.train.recover) and
`init_from` an artifact."""

import json
import shutil

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


def test_recovered_model_predicts_like_the_onnx_model(tiny_artifact):
    import onnxruntime

    from punctum.models import build_model

    kind, config, state = recover_state_dict(tiny_artifact)
    model = build_model(kind, config).eval()
    model.load_state_dict(state)
    rng = np.random.default_rng(0)
    ids = rng.integers(4, config["vocab_size"], (3, 40)).astype(np.int64)
    lengths = np.array([40, 25, 6], dtype=np.int64)
    session = onnxruntime.InferenceSession(str(tiny_artifact / "model.onnx"),
                                           providers=["CPUExecutionProvider"])
    onnx_out = session.run(None, {"ids": ids, "lengths": lengths})
    with torch.no_grad():
        torch_out = model(torch.from_numpy(ids), torch.from_numpy(lengths))
    valid = np.arange(40)[None, :] < lengths[:, None]
    for a, b in zip(onnx_out, torch_out):
        assert (a.argmax(-1) == b.numpy().argmax(-1))[valid].mean() > 0.95
        assert np.abs(a - b.numpy())[valid].max() < 0.2


def test_ensembles_and_other_files_are_refused(tmp_path, tiny_artifact):
    assert is_artifact(tiny_artifact) and is_artifact("en-tiny")
    assert not is_artifact(tmp_path / "best.pt") and not is_artifact("no-such-model")
    with pytest.raises(ValueError, match="ensemble"):
        recover_state_dict(__import__("punctum.artifact").artifact.ASSETS / "en-ensemble")
    folder = tmp_path / "tagger"
    shutil.copytree(tiny_artifact, folder)
    meta = json.loads((folder / "punctum.json").read_text())
    for change in ({"kind": "transformer_tagger"},
                   {"model_config": {**meta["model_config"], "head_hidden": 8}},
                   {"model_config": {**meta["model_config"], "pause_buckets": 4}},
                   {"model": {**meta["model"], "precision": "int8 (per channel)"}}):
        (folder / "punctum.json").write_text(json.dumps({**meta, **change}))
        with pytest.raises(ValueError, match="weights.safetensors"):
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
