"""ONNX rewrites after export: int8 convolutions back to fp32 Conv (punctum.train.onnx_graph)."""

import logging

import numpy as np
import pytest

torch = pytest.importorskip("torch")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from punctum.models.cnn_bilstm import CnnBiLstm, CnnBiLstmConfig  # noqa: E402
from punctum.train.export import export_onnx, quantize_int8  # noqa: E402
from punctum.train.onnx_graph import float_convs  # noqa: E402


@pytest.fixture(scope="module")
def fp32_model(tmp_path_factory):
    torch.manual_seed(0)
    config = CnnBiLstmConfig(200, 5, 4, embed_dim=16, conv_channels=24, bilstm_hidden=16,
                             lstm_hidden=16, dropout=0.0)
    path = tmp_path_factory.mktemp("onnx") / "fp32.onnx"
    export_onnx(CnnBiLstm(config).eval(), path)
    return path


def _run(path, seed: int = 0):
    rng = np.random.default_rng(seed)
    feeds = {"ids": rng.integers(4, 200, (3, 30)).astype(np.int64),
             "lengths": np.array([30, 17, 5], dtype=np.int64)}
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, feeds), feeds["lengths"]


def _ops(model) -> list[str]:
    return [node.op_type for node in model.graph.node]


def _quantize_everything(source, target) -> None:
    """What punctum exports did before: ONNX Runtime's defaults, Conv included."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantizer logs advice on the root logger
    try:
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8)
    finally:
        root.setLevel(level)


def _dead_outputs(model) -> list[str]:
    """Outputs of nodes that no node reads and that are not graph outputs."""
    read = {name for node in model.graph.node for name in node.input}
    read.update(out.name for out in model.graph.output)
    return [name for node in model.graph.node for name in node.output
            if name and name not in read and node.op_type not in ("LSTM", "DynamicQuantizeLSTM")]


def test_float_convs_rewrites_every_int8_convolution(fp32_model, tmp_path):
    quantized = tmp_path / "int8.onnx"
    _quantize_everything(fp32_model, quantized)
    model = onnx.load(str(quantized))
    assert _ops(model).count("ConvInteger") == 3
    assert float_convs(model) == 3
    onnx.checker.check_model(model)
    assert "ConvInteger" not in _ops(model) and _ops(model).count("Conv") == 3
    assert "DynamicQuantizeLSTM" in _ops(model)  # the rest stays int8
    assert _ops(model).count("DynamicQuantizeLinear") == 2  # the heads' inputs, no others
    assert _dead_outputs(model) == []
    rewritten = tmp_path / "rewritten.onnx"
    onnx.save(model, str(rewritten))
    (reference, lengths), (got, _) = _run(fp32_model), _run(rewritten)
    (int8, _) = _run(quantized)
    for ref, new, old in zip(reference, got, int8):
        valid = np.arange(ref.shape[1])[None, :] < lengths[:, None]
        # the fp32 weights come back from int8 ones: close to the fp32 model, and no
        # farther from it than the all-int8 model (whose activations were quantized too)
        new_error = np.abs(new - ref)[valid].max()
        assert new_error < 0.05
        assert new_error <= np.abs(old - ref)[valid].max() + 1e-3


def test_float_convs_leaves_a_model_without_int8_convolutions(fp32_model):
    model = onnx.load(str(fp32_model))
    before = _ops(model)
    assert float_convs(model) == 0
    assert _ops(model) == before


def test_export_quantization_keeps_convolutions_in_fp32(fp32_model, tmp_path):
    quantize_int8(fp32_model, tmp_path / "int8.onnx")
    ops = _ops(onnx.load(str(tmp_path / "int8.onnx")))
    assert "ConvInteger" not in ops and ops.count("Conv") == 3
    assert ops.count("DynamicQuantizeLSTM") == 3
