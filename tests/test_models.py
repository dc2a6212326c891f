"""Tests for punctum.models on tiny configs: shapes, gradients, overfitting, padding, checkpoints,
config validation, ONNX parity and the joint loss."""

import dataclasses
import json
import shutil
import warnings

import pytest
import torch
import torch.nn.functional as F

from punctum.models import MODELS, build_model
from punctum.models.cnn_bilstm import CnnBiLstm, CnnBiLstmConfig
from punctum.models.losses import tagging_loss, weighted_cross_entropy
from punctum.models.transformer_tagger import TransformerTagger, TransformerTaggerConfig

VOCAB, N_PUNCT, N_CASE = 100, 4, 3
KINDS = ["cnn_bilstm", "transformer_tagger", "bert_tagger"]


def _tiny_bert_folder(path) -> str:
    """A randomly initialised tiny BERT saved with save_pretrained, as a local pretrained folder."""
    transformers = pytest.importorskip("transformers")
    bert_config = transformers.BertConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    transformers.BertModel(bert_config).save_pretrained(path)
    return str(path)


def _make_model(kind: str, tmp_path) -> torch.nn.Module:
    torch.manual_seed(0)
    if kind == "cnn_bilstm":
        config = CnnBiLstmConfig(
            VOCAB,
            N_PUNCT,
            N_CASE,
            embed_dim=12,
            conv_channels=16,
            bilstm_hidden=16,
            lstm_hidden=16,
            dropout=0.0,
        )
        return CnnBiLstm(config)
    if kind == "transformer_tagger":
        config = TransformerTaggerConfig(
            VOCAB,
            N_PUNCT,
            N_CASE,
            max_len=32,
            n_layers=2,
            d_model=16,
            n_heads=2,
            d_ff=32,
            dropout=0.0,
        )
        return TransformerTagger(config)
    folder = _tiny_bert_folder(tmp_path / "tiny_bert")
    return TransformerTagger.from_pretrained(folder, N_PUNCT, N_CASE, dropout=0.0)


def _padded_batch(lengths: list[int], T: int | None = None, seed: int = 0):
    """(B, T) int64 ids right-padded with 0 and (B,) int64 lengths."""
    generator = torch.Generator().manual_seed(seed)
    T = T or max(lengths)
    ids = torch.randint(1, VOCAB, (len(lengths), T), generator=generator)
    lengths_tensor = torch.tensor(lengths)
    ids[torch.arange(T)[None, :] >= lengths_tensor[:, None]] = 0
    return ids, lengths_tensor


@pytest.mark.parametrize("kind", KINDS)
def test_forward_shapes_and_dtypes(kind, tmp_path):
    model = _make_model(kind, tmp_path)
    ids, lengths = _padded_batch([7, 4])
    punct, case = model(ids, lengths)
    assert punct.shape == (2, 7, N_PUNCT) and punct.dtype == torch.float32
    assert case.shape == (2, 7, N_CASE) and case.dtype == torch.float32
    assert torch.isfinite(punct).all() and torch.isfinite(case).all()


@pytest.mark.parametrize("kind", KINDS)
def test_backward_reaches_every_parameter(kind, tmp_path):
    model = _make_model(kind, tmp_path)
    ids, lengths = _padded_batch([6, 3])
    punct, case = model(ids, lengths)
    punct_targets, case_targets = (
        torch.randint(0, N_PUNCT, (2, 6)),
        torch.randint(0, N_CASE, (2, 6)),
    )
    model.loss(punct, case, punct_targets, case_targets).backward()
    missing = [n for n, p in model.named_parameters() if p.requires_grad and p.grad is None]
    assert missing == []


@pytest.mark.parametrize("kind", KINDS)
def test_overfits_one_batch(kind, tmp_path):
    model = _make_model(kind, tmp_path).train()
    ids, lengths = _padded_batch([8, 5])
    generator = torch.Generator().manual_seed(1)
    punct_targets = torch.randint(0, N_PUNCT, (2, 8), generator=generator)
    case_targets = torch.randint(0, N_CASE, (2, 8), generator=generator)
    punct_targets[1, 5:] = -100
    case_targets[1, 5:] = -100
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(150):
        loss = model.loss(*model(ids, lengths), punct_targets, case_targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.1 * losses[0]


@pytest.mark.parametrize("kind", KINDS)
def test_padded_rows_equal_single_rows(kind, tmp_path):
    model = _make_model(kind, tmp_path).eval()
    ids, lengths = _padded_batch([9, 4, 1])
    noisy = ids.clone()
    noisy[ids == 0] = 7  # whatever sits past lengths[i] must not matter
    with torch.no_grad():
        batch = model(noisy, lengths)
        for i, n in enumerate(lengths.tolist()):
            alone = model(ids[i : i + 1, :n], lengths[i : i + 1])
            for batched, single in zip(batch, alone, strict=True):
                torch.testing.assert_close(batched[i, :n], single[0], atol=1e-5, rtol=1e-5)
                assert torch.isfinite(batched[i]).all()


@pytest.mark.parametrize("kind", KINDS)
def test_state_dict_rebuilds_from_json_config(kind, tmp_path):
    model = _make_model(kind, tmp_path).eval()
    config_dict = json.loads(json.dumps(dataclasses.asdict(model.config)))
    state = {k: v.clone() for k, v in model.state_dict().items()}
    shutil.rmtree(tmp_path / "tiny_bert", ignore_errors=True)  # rebuild without the folder
    registry_kind = "cnn_bilstm" if kind == "cnn_bilstm" else "transformer_tagger"
    rebuilt = build_model(registry_kind, config_dict).eval()
    rebuilt.load_state_dict(state)
    ids, lengths = _padded_batch([6, 2])
    with torch.no_grad():
        for before, after in zip(model(ids, lengths), rebuilt(ids, lengths), strict=True):
            assert torch.equal(before, after)


@pytest.mark.parametrize("kind", KINDS)
def test_onnx_export_matches_torch(kind, tmp_path):
    pytest.importorskip("onnx")
    model = _make_model(kind, tmp_path).eval()
    path = tmp_path / "model.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model,
            _padded_batch([7, 4]),
            str(path),
            dynamo=False,
            opset_version=17,
            input_names=["ids", "lengths"],
            output_names=["punct_logits", "case_logits"],
            dynamic_axes={
                "ids": {0: "batch", 1: "time"},
                "lengths": {0: "batch"},
                "punct_logits": {0: "batch", 1: "time"},
                "case_logits": {0: "batch", 1: "time"},
            },
        )
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    # The export batch shape, then other batch and time sizes (dynamic axes), unsorted lengths.
    for lengths in ([7, 4], [3, 11, 5]):
        ids, lengths_tensor = _padded_batch(lengths, seed=len(lengths))
        got = session.run(None, {"ids": ids.numpy(), "lengths": lengths_tensor.numpy()})
        with torch.no_grad():
            expected = model(ids, lengths_tensor)
        for onnx_out, torch_out in zip(got, expected, strict=True):
            torch.testing.assert_close(torch.from_numpy(onnx_out), torch_out, atol=1e-4, rtol=0)


def test_cnn_bilstm_default_size():
    model = CnnBiLstm(CnnBiLstmConfig(vocab_size=5000, n_punct=5, n_case=4))
    n_params = sum(p.numel() for p in model.parameters())
    assert 7_000_000 < n_params < 8_000_000  # about 7 MB as int8, as in the paper


def test_cnn_bilstm_heads_see_neighbours_only_inside_the_row():
    # The punctuation head at the last valid position reads s_{t+1} = 0, and the casing head at
    # position 0 reads s_{-1} = 0: so both equal the head applied to [state, zeros].
    model = _make_model("cnn_bilstm", None).eval()
    ids, lengths = _padded_batch([5, 3], T=6)
    states = {}
    model.lstm.register_forward_hook(lambda m, i, o: states.update(s=o[0]))
    with torch.no_grad():
        punct, case = model(ids, lengths)
        s, _ = torch.nn.utils.rnn.pad_packed_sequence(states["s"], batch_first=True)
        for i, n in enumerate(lengths.tolist()):
            zeros = torch.zeros_like(s[i, 0])
            last = model.punct_head(torch.cat([s[i, n - 1], zeros]))
            first = model.case_head(torch.cat([zeros, s[i, 0]]))
            torch.testing.assert_close(punct[i, n - 1], last)
            torch.testing.assert_close(case[i, 0], first)


INVALID = [
    (CnnBiLstmConfig, "vocab_size", 0),
    (CnnBiLstmConfig, "pad_id", VOCAB),
    (CnnBiLstmConfig, "conv_kernel", 4),
    (CnnBiLstmConfig, "dropout", 1.0),
    (CnnBiLstmConfig, "dropout", "0.5"),
    (CnnBiLstmConfig, "punct_loss_weight", float("inf")),
    (CnnBiLstmConfig, "punct_loss_weight", float("nan")),
    (TransformerTaggerConfig, "dropout", float("nan")),
    (TransformerTaggerConfig, "punct_loss_weight", "1"),
    (CnnBiLstmConfig, "n_bilstm_layers", 0),
    (CnnBiLstmConfig, "head_hidden", -1),
    (CnnBiLstmConfig, "punct_loss_weight", -0.1),
    (TransformerTaggerConfig, "n_heads", 3),
    (TransformerTaggerConfig, "d_model", 0),
    (TransformerTaggerConfig, "max_len", 0),
    (TransformerTaggerConfig, "dropout", -0.1),
    (TransformerTaggerConfig, "n_case", 0),
    (TransformerTaggerConfig, "encoder_config", "bert"),
]


@pytest.mark.parametrize("config_cls, field, value", INVALID)
def test_invalid_config_names_the_field(config_cls, field, value):
    with pytest.raises(ValueError, match=field):
        config_cls(**{"vocab_size": VOCAB, "n_punct": N_PUNCT, "n_case": N_CASE, field: value})


def test_ctc_config_numbers_must_be_finite_numbers():
    from punctum.models.ctc_encoder import CtcEncoderConfig

    for field, value in (("dropout", "x"), ("lambda_ctc", float("nan")),
                         ("lambda_inter", float("inf"))):
        with pytest.raises(ValueError, match=field):
            CtcEncoderConfig(vocab_size=VOCAB, **{field: value})


def test_transformer_config_checks_pretrained_fields():
    with pytest.raises(ValueError, match="encoder_config"):
        TransformerTaggerConfig(VOCAB, N_PUNCT, N_CASE, pretrained="some/folder")
    encoder_config = {"model_type": "bert", "vocab_size": VOCAB, "hidden_size": 32}
    with pytest.raises(ValueError, match="d_model"):
        TransformerTaggerConfig(VOCAB, N_PUNCT, N_CASE, d_model=64, encoder_config=encoder_config)


def test_transformer_config_from_pretrained_reads_the_encoder(tmp_path):
    folder = _tiny_bert_folder(tmp_path)
    config = TransformerTaggerConfig.from_pretrained(folder, N_PUNCT, N_CASE, dropout=0.2)
    assert (config.vocab_size, config.d_model, config.n_layers, config.n_heads) == (VOCAB, 32, 2, 2)
    assert (config.pretrained, config.dropout, config.encoder_config["model_type"]) == (
        folder,
        0.2,
        "bert",
    )


def test_transformer_encoder_is_fp32_whatever_the_stored_dtype():
    pytest.importorskip("transformers")
    encoder_config = {
        "model_type": "bert",
        "vocab_size": VOCAB,
        "hidden_size": 16,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "intermediate_size": 32,
        "dtype": "bfloat16",
    }
    config = TransformerTaggerConfig(
        VOCAB, N_PUNCT, N_CASE, d_model=16, encoder_config=encoder_config
    )
    dtypes = {p.dtype for p in TransformerTagger(config).parameters()}
    assert dtypes == {torch.float32}


def test_transformer_rejects_too_long_input():
    model = _make_model("transformer_tagger", None)
    with pytest.raises(ValueError, match="max_len"):
        model(torch.ones(1, 33, dtype=torch.long), torch.tensor([33]))


def test_build_model_validates_kind_and_keys():
    base = {"vocab_size": VOCAB, "n_punct": N_PUNCT, "n_case": N_CASE}
    assert set(MODELS) == {"cnn_bilstm", "transformer_tagger", "ctc_encoder"}
    assert isinstance(build_model("cnn_bilstm", base), CnnBiLstm)
    with pytest.raises(ValueError, match="n_hidden"):
        build_model("cnn_bilstm", {**base, "n_hidden": 3})
    with pytest.raises(ValueError, match="n_case"):
        build_model("transformer_tagger", {"vocab_size": VOCAB, "n_punct": N_PUNCT})
    with pytest.raises(ValueError, match="kind"):
        build_model("rnn", base)


def _random_logits_and_targets(seed: int = 0):
    generator = torch.Generator().manual_seed(seed)
    punct = torch.randn(2, 5, N_PUNCT, generator=generator, requires_grad=True)
    case = torch.randn(2, 5, N_CASE, generator=generator, requires_grad=True)
    punct_targets = torch.randint(0, N_PUNCT, (2, 5), generator=generator)
    case_targets = torch.randint(0, N_CASE, (2, 5), generator=generator)
    return punct, case, punct_targets, case_targets


def test_loss_with_every_target_ignored_is_zero():
    punct, case, punct_targets, case_targets = _random_logits_and_targets()
    ignored = torch.full_like(punct_targets, -100)
    loss = tagging_loss(punct, case, ignored, ignored.clone(), label_smoothing=0.1)
    assert loss.item() == 0.0
    loss.backward()
    assert torch.isfinite(punct.grad).all() and torch.isfinite(case.grad).all()


def test_zero_weight_removes_a_position():
    punct, case, punct_targets, case_targets = _random_logits_and_targets()
    weights = torch.ones(2, 5)
    weights[0, 2] = 0.0
    weighted = weighted_cross_entropy(punct, punct_targets, weights)
    dropped = punct_targets.clone()
    dropped[0, 2] = -100
    torch.testing.assert_close(weighted, weighted_cross_entropy(punct, dropped))
    half = weighted_cross_entropy(punct, punct_targets, torch.full((2, 5), 0.5))
    torch.testing.assert_close(half, 0.5 * weighted_cross_entropy(punct, punct_targets))


def test_loss_without_smoothing_equals_plain_cross_entropy():
    punct, case, punct_targets, case_targets = _random_logits_and_targets()
    punct_targets[1, 0] = -100
    model = _make_model("cnn_bilstm", None)
    expected = F.cross_entropy(case.flatten(0, 1), case_targets.flatten()) + 0.7 * F.cross_entropy(
        punct.flatten(0, 1), punct_targets.flatten(), ignore_index=-100
    )
    torch.testing.assert_close(model.loss(punct, case, punct_targets, case_targets), expected)
    smoothed = model.loss(punct, case, punct_targets, case_targets, label_smoothing=0.1)
    assert not torch.isclose(smoothed, expected)


def test_loss_is_fp32_under_bf16_autocast():
    punct, case, punct_targets, case_targets = _random_logits_and_targets()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = tagging_loss(punct.bfloat16(), case.bfloat16(), punct_targets, case_targets)
    assert loss.dtype == torch.float32
